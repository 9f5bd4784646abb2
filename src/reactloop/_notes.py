"""The loop's own words to the model and the user: budget notes, reminders, fallbacks.

Kept short and plain on purpose: small local models follow short sentences best.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from reactloop.messages import ToolCall
from reactloop.result import RunState, Step, ToolResult

DEFAULT_MAX_TOKENS = 1024
"""Room assumed when a truncated response is retried and no ``max_tokens`` was set."""

NO_TOOL_CALL = (
    "You replied without calling a tool. Call one of your tools now; when the task is done, "
    "call task_completion with the final answer."
)
EMPTY_REPLY = "Your reply was empty. Call a tool, or answer the user in plain text."
TRUNCATED = (
    "Your previous reply was cut off by the output limit. Reply again, more briefly "
    "(or make smaller tool calls)."
)


def budget(remaining: int) -> str:
    noun = "iteration" if remaining == 1 else "iterations"
    return (
        f"Budget: {remaining} {noun} left. Prioritise giving the final answer; "
        "call a tool only if you cannot answer without it."
    )


def final_iteration(has_tools: bool) -> str:
    if has_tools:
        return (
            "This is your last iteration. Call task_completion now with your final answer, "
            "based on what you already have."
        )
    return (
        "This is your last iteration and tools are no longer available. Answer the user now "
        "with what you already have."
    )


def _repeat_note(name: str) -> str:
    return (f"(You already called {name} with these arguments; this is the same result. "
            "Use it instead of calling again.)")


def repeated(earlier: ToolResult, call_id: str) -> ToolResult:
    """The answer to a call identical to an earlier one: the earlier result, plus a note."""
    note = "\n" + _repeat_note(earlier.name)
    return replace(earlier, call_id=call_id, content=earlier.content + note, cached=True,
                   duration=0.0)


def repeated_failure(earlier: ToolResult, call_id: str) -> ToolResult:
    """The answer to a call identical to one that failed: not run again, the same error."""
    note = (f"\n(You already called {earlier.name} with these arguments and it failed; it was "
            "not run again.)")
    return replace(earlier, call_id=call_id, content=earlier.content + note, cached=True,
                   duration=0.0)


def failed_twice(steps: Sequence[Step]) -> str | None:
    """The tool whose identical call failed again in the last step that called tools (so
    the next reply must answer), or None."""
    for step in reversed(steps):
        if step.results:
            for r in step.results:  # a loop, not next() over a generator: read per request
                if r.error is not None and r.cached:
                    return r.name
            return None
    return None


def answer_after_failure(name: str) -> str:
    return (f"The same call to {name} failed twice, so tools are not available now. Answer "
            f"the user: say that {name} failed and why.")


def _describe(step: Step) -> list[str]:
    out = []
    for r in step.results:
        args = ", ".join(f"{k}={v!r}" for k, v in r.arguments.items())
        outcome = f"error: {r.error}" if r.error else _short(strip_notes(r.content))
        out.append(f"{r.name}({args}) → {outcome}")
    return out


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fallback(steps: Sequence[Step], max_iterations: int, *, timed_out: bool = False,
             cancelled: bool = False, reason: str | None = None) -> str:
    """A usable answer when the model gave none: why the run stopped and what was done."""
    if reason is not None:
        head = f"The run stopped before the model gave a final answer: {reason}."
    elif cancelled:
        head = "The run was cancelled before the model gave a final answer."
    elif timed_out:
        head = "The run reached its time limit before the model gave a final answer."
    else:
        head = (f"I ran out of my budget of {max_iterations} iterations before giving a final "
                "answer.")
    done = [line for s in steps for line in _describe(s)]
    if not done:
        return head + " No tools were called."
    shown = done[-5:]
    more = f" (and {len(done) - 5} earlier calls)" if len(done) > 5 else ""
    return head + f" What was done{more}: " + "; ".join(shown) + "."


def waiting_for_approval(calls: Sequence[ToolCall]) -> str:
    """The output of a run that waits for decisions on ``calls``."""
    listed = ", ".join(f"{c.name} ({c.id})" for c in calls)
    return f"Waiting for approval of: {listed}."


_UNFINISHED = {RunState.TIMED_OUT: "the run reached its time limit",
               RunState.CANCELLED: "the run was cancelled",
               RunState.USAGE_LIMIT: "the run reached a usage limit",
               RunState.BLOCKED: "a guardrail blocked the run"}


def why_unfinished(state: RunState) -> str:
    """Why a run that ended in ``state`` left its open tool calls unfinished."""
    return _UNFINISHED.get(state, "the run ended")


def unfinished(call: ToolCall, why: str) -> ToolResult:
    """The result of a call the run ended before it finished (every call gets one)."""
    name = call.name if isinstance(call.name, str) else repr(call.name)
    error = f"not finished: {why}"
    return ToolResult(name, None, error, call.id or "", dict(call.arguments)
                      if isinstance(call.arguments, dict) else {}, f"Error: {error}")


_REPEAT = re.compile(r"\(?You already called \S+ with these arguments(; this is the same "
                     r"result\. Use it instead of calling again\.| and it failed; it was not "
                     r"run again\.)\)?")
_OURS = (NO_TOOL_CALL, EMPTY_REPLY, TRUNCATED, final_iteration(True), final_iteration(False))
_BUDGET = re.compile(r"Budget: \d+ iterations? left\. Prioritise giving the final answer; "
                     r"call a tool only if you cannot answer without it\.")


def strip_notes(text: str) -> str:
    """``text`` without any of the loop's own notes to the model: a small model sometimes
    copies a note into its answer, and notes are never an answer for the user."""
    if "You already called" in text:
        text = _REPEAT.sub("", text)
    if "Budget:" in text:
        text = _BUDGET.sub("", text)
    for note in _OURS:
        if note in text:
            text = text.replace(note, "")
    return text.strip()
