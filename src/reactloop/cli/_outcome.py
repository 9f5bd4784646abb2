"""Honest endings: what a run's exit code and summary say, and one-line error explanations.

A run that "completed" is not always a success: the answer may have been cut off by the
output-token limit, or the model may have answered right after its last tool calls failed.
Both get their own exit code, so scripts (and people) can tell.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reactloop.approvals import DENIED
from reactloop.result import RunResult, RunState, Step

__all__ = ["EXIT_CODES", "Outcome", "explain_error", "judge", "model_url"]

EXIT_CODES = {
    "completed": 0,
    "error": 1,
    "max_iterations": 2,
    "waiting_for_user": 3,
    "timed_out": 4,
    "truncated": 5,
    "tool_errors": 6,
    "waiting_for_approval": 7,
    "usage_limit": 8,
    "blocked": 9,
    "cancelled": 130,
}


@dataclass
class Outcome:
    """How a run ended, for people (``label``, ``notes``) and scripts (``code``)."""

    label: str
    code: int
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.code == 0


def last_tool_failures(steps: Sequence[Step]) -> list[tuple[str, str]]:
    """(tool, error) of the failed calls in the last step that called tools (a call a person
    denied did not fail)."""
    for step in reversed(steps):
        if step.results:
            return [(r.name, r.error) for r in step.results
                    if r.error and not r.error.startswith(DENIED)]
    return []


def judge(result: RunResult, *, truncated: bool, model: Any = None,
          model_spec: str = "MODEL") -> Outcome:
    """The :class:`Outcome` of ``result``; ``truncated`` when the last reply hit the limit.
    ``model`` (the agent's model) and ``model_spec`` (as typed) name it in the notes."""
    state = result.state
    notes: list[str] = []
    if truncated and state is not RunState.ERROR:
        notes.append("the answer was cut off at the model's output-token limit (raise it: "
                     f"reactloop config set -m {model_spec} max_tokens N)")
    failures = last_tool_failures(result.steps)
    if failures and state in (RunState.COMPLETED, RunState.MAX_ITERATIONS):
        name, error = failures[-1]
        notes.append(f"the last tool step failed ({name}: {_one_line(error, 160)}), so the "
                     "answer does not rest on a tool result")
    if truncated and state in (RunState.COMPLETED, RunState.MAX_ITERATIONS):
        # the loop feeds a cut-off reply back until the last iteration, so a cut-off final
        # answer usually ends MAX_ITERATIONS: what the user needs to know is the cut
        return Outcome("truncated", EXIT_CODES["truncated"], notes)
    if state is RunState.COMPLETED:
        label = "tool_errors" if failures else "completed"
        return Outcome(label, EXIT_CODES[label], notes)
    n = result.metrics.iterations
    extra = {
        RunState.MAX_ITERATIONS: f"stopped after {n} iterations without finishing (allow more "
                                 "with -n N); the answer is the model's last attempt",
        RunState.WAITING_FOR_USER: "the agent asked a question; answer it with: reactloop run "
                                   "-c \"ANSWER\"",
        RunState.TIMED_OUT: f"ran out of time after {result.metrics.execution_time:.1f}s "
                            "(--timeout); the answer is partial",
        RunState.CANCELLED: "cancelled",
        RunState.WAITING_FOR_APPROVAL: _waiting_note(result),
        RunState.USAGE_LIMIT: "stopped at a usage limit (--max-requests, --max-tool-calls, "
                              "--max-input-tokens, --max-output-tokens, --max-total-tokens, "
                              "--max-cost); the answer says what was done",
        RunState.BLOCKED: "a guardrail refused it; the answer is the guardrail's reason",
    }.get(state)
    if state is RunState.ERROR:  # the reason alone: it is printed after "run ended error: "
        extra = explain_error(result.error or result.output, model)
    return Outcome(state.value, EXIT_CODES.get(state.value, 1), [extra or state.value, *notes])


def _waiting_note(result: RunResult) -> str:
    calls = ", ".join(f"{p.tool_name} ({p.call_id})" for p in result.pending_approvals)
    return (f"tool calls wait for approval: {calls}; decide in a terminal, or with "
            "--approve-all / --deny-all (a stored session keeps them waiting: "
            "reactloop run --session ID)")


def _one_line(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_KEY_VAR = re.compile(r"\b([A-Z][A-Z0-9_]*_API_KEY)\b")
_PROVIDER_OF = {"OPENAI_API_KEY": "openai", "ANTHROPIC_API_KEY": "anthropic",
                "GEMINI_API_KEY": "gemini", "GOOGLE_API_KEY": "gemini"}


def model_url(model: Any) -> str | None:
    """The server a model talks to, when it has one (OpenAI-compatible and other adapters)."""
    for candidate in (model, getattr(model, "model", None), getattr(model, "inner", None)):
        if candidate is None:
            continue
        url = getattr(candidate, "base_url", None)
        if url is None:
            url = getattr(getattr(candidate, "client", None), "base_url", None)
        if url:
            return str(url)
    return None


def explain_error(error: BaseException | str, model: Any = None) -> str:
    """One line for a CLI user: the error, plus how to fix a missing key or where the
    connection went."""
    text = _one_line(str(error), 400)
    # Python arguments mean nothing on the command line: name the options instead
    text = re.sub(r",? or pass api_key=\.\.\.", "", text)
    text = text.replace("pass base_url=...", "use --base-url URL")
    found = _KEY_VAR.search(text)
    if found and "keys set" not in text:
        name = _PROVIDER_OF.get(found.group(1), found.group(1))
        text += f" — or store it once with: reactloop keys set {name}"
    lowered = text.lower()
    if ("connect" in lowered or "connection" in lowered) and model is not None:
        url = model_url(model)
        if url and url not in text:
            text += f" — could not reach {url}; is the server running there?"
    return text
