"""Production controls: usage limits and cost, fallback models, guardrails, a per-model
concurrency limit.

* :class:`UsageLimits` — ``Agent(usage_limits=UsageLimits(max_total_tokens=..., max_cost_usd=...))``
  (and ``session.usage_limits``): a run that would pass one ends ``RunState.USAGE_LIMIT`` with a
  usable answer. Costs come from ``genai-prices`` (``reactloop[cost]``) and are on
  ``result.metrics.cost_usd`` (``None``: unknown).
* :class:`FallbackModel` — ``FallbackModel(primary, *fallbacks)``: the next model takes the
  request when one fails after its retries.
* Guardrails — ``Agent(input_guardrails=[...], output_guardrails=[...],
  tool_input_guardrails=[...], tool_output_guardrails=[...])``; raising
  :class:`GuardrailTripped` ends the run ``RunState.BLOCKED``; :func:`agent_guardrail` makes
  an agent (``output_type=bool``) a guardrail, :func:`concurrent_guardrail` runs an input
  guardrail beside the first model call.
* ``Agent(model_concurrency=N)`` — at most N calls in flight per model in the process.

All of them cost nothing when unused. The public names are also exported from ``reactloop``.
"""

from reactloop.controls._fallback import FallbackModel
from reactloop.controls._guardrails import agent_guardrail, concurrent_guardrail
from reactloop.controls._limits import UsageLimits
from reactloop.errors import GuardrailTripped

__all__ = ["FallbackModel", "GuardrailTripped", "UsageLimits", "agent_guardrail",
           "concurrent_guardrail"]
