"""Guardrails: checks on the user's message, the answer, and tool calls and results.

A guardrail is a sync or async callable taking the text — or, for tool guardrails, the
:class:`~reactloop.ToolCall` / :class:`~reactloop.ToolResult` — and, if it accepts a second
parameter, the run's :class:`~reactloop.RunContext`. It returns ``None`` to pass, a
replacement (a string; new arguments for a tool call), or raises
:class:`~reactloop.GuardrailTripped` to refuse: the run ends ``BLOCKED`` with the reason as
its output. Each check is a ``guardrail`` event.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from reactloop.errors import GuardrailTripped, UserError
from reactloop.events import GuardrailEvent
from reactloop.messages import ToolCall
from reactloop.result import ToolResult
from reactloop.run_context import RunContext

__all__ = ["Guard", "agent_guardrail", "check_calls", "check_results", "check_text",
           "concurrent_guardrail", "guards"]

Guardrail = Callable[..., Any]
"""``fn(text)`` or ``fn(text, context)``, sync or async."""


class Guard:
    """One guardrail, with what calling it needs worked out once."""

    __slots__ = ("concurrent", "fn", "name", "with_context")

    def __init__(self, fn: Guardrail, where: str) -> None:
        if not callable(fn):
            raise UserError(f"{where}: {fn!r} is not callable: pass fn(text) or "
                            "fn(text, context) returning None, a replacement, or raising "
                            "GuardrailTripped(reason)")
        self.fn = fn
        self.name = getattr(fn, "__name__", None) or type(fn).__name__
        self.with_context = _positional(fn) >= 2
        self.concurrent = bool(getattr(fn, "reactloop_concurrent", False))
        """Runs beside the first model call (:func:`concurrent_guardrail`)."""

    async def __call__(self, value: Any, ctx: RunContext) -> Any:
        out = self.fn(value, ctx) if self.with_context else self.fn(value)
        if inspect.isawaitable(out):
            out = await out
        return out


def _positional(fn: Callable[..., Any]) -> int:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 1
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return 2
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def guards(fns: Iterable[Guardrail], where: str) -> tuple[Guard, ...]:
    """Check ``Agent(<where>=...)`` and wrap each guardrail."""
    if callable(fns):
        raise UserError(f"Agent({where}=...) takes a list of guardrails, got one callable: "
                        f"pass [{getattr(fns, '__name__', 'guardrail')}]")
    return tuple(Guard(fn, f"Agent({where}=...)") for fn in fns)


async def _one(g: Guard, kind: str, value: Any, ctx: RunContext) -> Any:
    """Run one guardrail; its event is queued on ``ctx``. Returns its replacement or None."""
    try:
        out = await g(value, ctx)
    except GuardrailTripped as exc:
        exc.guardrail = exc.guardrail or g.name
        ctx.emit(GuardrailEvent(ctx.run_id, kind, g.name, "tripped", exc.reason))
        raise
    ctx.emit(GuardrailEvent(ctx.run_id, kind, g.name, "passed" if out is None else "replaced"))
    return out


async def check_text(gs: tuple[Guard, ...], kind: str, text: str, ctx: RunContext) -> str:
    """``text`` after every guardrail of ``gs`` (in order; each sees the previous one's
    replacement). Raises :class:`GuardrailTripped` on a trip."""
    for g in gs:
        out = await _one(g, kind, text, ctx)
        if out is not None:
            if not isinstance(out, str):
                raise UserError(f"guardrail {g.name} returned {type(out).__name__}: return None "
                                "to pass, a str to replace the text, or raise "
                                "GuardrailTripped(reason)")
            text = out
    return text


async def check_calls(gs: tuple[Guard, ...], calls: Iterable[ToolCall], ctx: RunContext
                      ) -> list[ToolCall]:
    """Tool calls after the ``tool_input`` guardrails (a replacement is new arguments)."""
    out = []
    for call in calls:
        for g in gs:
            got = await _one(g, "tool_input", call, ctx)
            if got is not None:
                if not isinstance(got, Mapping):
                    raise UserError(f"tool guardrail {g.name} returned {type(got).__name__}: "
                                    "return None to pass, a dict of new arguments, or raise "
                                    "GuardrailTripped(reason)")
                call = ToolCall(call.name, dict(got), call.id, call.provider_details)
        out.append(call)
    return out


async def check_results(gs: tuple[Guard, ...], results: Iterable[ToolResult],
                        ctx: RunContext) -> list[ToolResult]:
    """Tool results after the ``tool_output`` guardrails (a replacement is the text the
    model sees)."""
    out = []
    for r in results:
        for g in gs:
            got = await _one(g, "tool_output", r, ctx)
            if got is not None:
                if not isinstance(got, str):
                    raise UserError(f"tool guardrail {g.name} returned {type(got).__name__}: "
                                    "return None to pass, a str to replace what the model "
                                    "sees, or raise GuardrailTripped(reason)")
                r = replace(r, content=got, result=got)
        out.append(r)
    return out


def agent_guardrail(agent: Any, *, reason: str = "The request was refused by a guardrail.",
                    name: str | None = None) -> Guardrail:
    """An agent as a guardrail: it is run on the text and must answer ``True`` (pass) or
    ``False`` (trip with ``reason``), so give it ``output_type=bool``. A run that ends any
    other way (an error, a limit) trips too: a guardrail fails closed. Its usage counts toward
    the guarded run's limits.

    Args:
        agent: a :class:`~reactloop.Agent` with ``output_type=bool``.
        reason: what the user is told when it trips.
        name: the guardrail's name in events (default: the agent's name).
    """
    if getattr(agent, "output_type", None) is not bool:
        raise UserError("agent_guardrail(agent) needs an agent with output_type=bool: it "
                        "answers True to pass the text, False to refuse it")

    async def check(text: str) -> None:
        result = await agent.run(text)
        if result.output is not True:
            raise GuardrailTripped(reason, name or agent.name)

    check.__name__ = name or agent.name
    return check


def concurrent_guardrail(fn: Guardrail) -> Guardrail:
    """Mark an input guardrail to run beside the run's first model call instead of before it
    (a slow check, such as :func:`agent_guardrail`, then costs no latency). That call's output
    is held until the guardrail passes; a trip discards it, a replacement sends the call again
    with the new message. The message reaches the session store only once it passed."""
    if not callable(fn):
        raise UserError(f"concurrent_guardrail({fn!r}): pass a guardrail function")

    async def guardrail(text: str, context: RunContext) -> Any:
        return await Guard(fn, "concurrent_guardrail(...)")(text, context)

    guardrail.__name__ = getattr(fn, "__name__", None) or type(fn).__name__
    guardrail.reactloop_concurrent = True  # type: ignore[attr-defined]
    return guardrail
