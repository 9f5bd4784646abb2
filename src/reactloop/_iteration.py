"""Small parts of one loop iteration (``reactloop._loop``): the tool calls as the history
keeps them, and the run's retry listener."""

from __future__ import annotations

from collections.abc import Sequence

from reactloop._redact import redact
from reactloop.events import RetryEvent
from reactloop.messages import ToolCall
from reactloop.run_context import RunContext

__all__ = ["NOTHING", "Nothing", "RetryReporter", "with_ids"]


def with_ids(run_id: str, k: int, calls: Sequence[ToolCall]) -> tuple[ToolCall, ...]:
    """Every call of iteration ``k`` gets a string name and an id unique in the response
    (providers may repeat or omit ids): ``call_<run>_<k>_<i>`` where one is missing."""
    if len(calls) == 1:  # the common response: one call, which needs no id or name made
        c = calls[0]
        if type(c.name) is str:
            if c.id:
                return calls if type(calls) is tuple else (c,)
            return (ToolCall(c.name, c.arguments, f"call_{run_id[:8]}_{k}_0", c.provider_details),)
    out: list[ToolCall] = []
    used: set[str] = set()
    prefix = f"call_{run_id[:8]}_{k}_"
    for i, c in enumerate(calls):
        if not isinstance(c.name, str):  # providers can send anything: keep it printable
            c = ToolCall(str(c.name), c.arguments, c.id, c.provider_details)  # type: ignore[unreachable]
        if not c.id or c.id in used:
            c = ToolCall(c.name, c.arguments, f"{prefix}{i}", c.provider_details)
        used.add(c.id or "")
        out.append(c)
    return tuple(out)


class RetryReporter:
    """A run's retry listener (``Runtime.call_model(on_retry=...)``): each retry an adapter
    makes becomes a ``retry`` event. One object per run, made once (a bound method of the
    loop would be a new object per model call, and a reference cycle if kept)."""

    __slots__ = ("ctx",)

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx

    def __call__(self, attempt: int, wait: float, error: BaseException) -> None:
        self.ctx.emit(RetryEvent(self.ctx.run_id, attempt, wait, redact(str(error))))


class Nothing:
    """``nullcontext()`` for ``async with`` whose exit is no bound method: a run that holds
    it open the whole run (no tool source, no handoff) keeps no object for it (issue 28)."""

    __slots__ = ()

    @staticmethod
    async def __aenter__() -> None:
        return None

    @staticmethod
    async def __aexit__(*exc: object) -> None:
        return None


NOTHING = Nothing()
