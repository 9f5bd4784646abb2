"""The LLM judge: a yes/no rubric about one run, answered by a configurable model.

The judge is asked through a ``verdict(passed, reason)`` tool call (forced, temperature 0),
which every adapter supports, so its answer is parsed, never guessed from prose; a judge that
answers in text anyway is read leniently (a leading yes/no) and otherwise counts as a failed
criterion whose reason says so. The reason is always recorded.
"""

from __future__ import annotations

from typing import Any

from reactloop.evals._cases import Case
from reactloop.evals._matchers import show
from reactloop.evals._score import Criterion
from reactloop.evals._transcript import Transcript
from reactloop.messages import Message, ModelRequest, ModelSettings, ToolSpec
from reactloop.models._base import Model

__all__ = ["JUDGE_SYSTEM", "Judge"]

JUDGE_SYSTEM = (
    "You grade the work of an AI assistant. You get the user's messages, the tools the "
    "assistant called with their results, its final answer, and one yes/no question about it. "
    "Answer the question strictly from this evidence by calling verdict: passed=true for yes, "
    "false for no, and a one-sentence reason."
)

VERDICT = ToolSpec(
    "verdict", "Record the answer to the grading question.",
    {"type": "object", "properties": {
        "passed": {"type": "boolean", "description": "true if the answer to the question is yes"},
        "reason": {"type": "string", "description": "one sentence: why"}},
     "required": ["passed", "reason"]},
)


def judge_prompt(case: Case, t: Transcript) -> str:
    lines = ["User:"] + [f"  {turn}" for turn in t.inputs]
    if t.calls:
        lines.append("Tool calls:")
        for c in t.calls:
            args = ", ".join(f"{k}={show(v, 40)}" for k, v in c.arguments.items())
            outcome = f"error: {c.error}" if c.error else show(c.result or "", 200)
            lines.append(f"  {c.name}({args}) -> {outcome}")
    lines += ["Final answer:", f"  {t.output}", "", f"Question: {case.rubric}"]
    return "\n".join(lines)


class Judge:
    """Grades rubrics with ``model`` (a :class:`~reactloop.Model` or a model string)."""

    def __init__(self, model: Model | str) -> None:
        from reactloop.models._resolve import resolve_model

        self.model = resolve_model(model)

    async def grade(self, case: Case, t: Transcript) -> Criterion:
        """The ``rubric`` criterion of ``case`` for the run ``t``."""
        request = ModelRequest(
            JUDGE_SYSTEM, (Message.user(judge_prompt(case, t)),), (VERDICT,),
            settings=ModelSettings(temperature=0.0, tool_choice="required", max_tokens=300))
        try:
            response = await self.model.request(request)
        except Exception as exc:  # the judge failing is a result, not a crash of the eval
            return Criterion("rubric", False, f"the judge ({self.model.name}) failed: {exc}", 0.0)
        return _verdict(response.tool_calls, response.text)


def _verdict(calls: Any, text: str | None) -> Criterion:
    for call in calls:
        if call.name == "verdict":
            passed = call.arguments.get("passed")
            if isinstance(passed, str):
                passed = passed.strip().lower() in ("true", "yes")
            reason = str(call.arguments.get("reason") or "no reason given")
            return Criterion("rubric", bool(passed), f"judge: {reason}", float(bool(passed)))
    words = (text or "").strip().lower().split()
    first = words[0].strip(".,:;!") if words else ""
    if first in ("yes", "no"):
        return Criterion("rubric", first == "yes", f"judge: {' '.join((text or '').split())}",
                         float(first == "yes"))
    return Criterion("rubric", False, "the judge gave no verdict: "
                     f"{show(text or '', 120)}", 0.0)
