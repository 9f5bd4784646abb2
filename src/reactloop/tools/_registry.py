"""One registry for every tool source (feature T3) and the code that executes calls (L4, L5)."""

from __future__ import annotations

import asyncio
import json
import time
import traceback as tb
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

from reactloop._arguments import arguments_problem
from reactloop.attachments import Attachment, check_count
from reactloop.errors import ToolRetry, UserError
from reactloop.messages import ToolCall, ToolSpec
from reactloop.result import ToolResult
from reactloop.tools._tool import Tool, ToolArgumentsError, ToolContext

__all__ = ["ToolRegistry", "WithRun", "as_tool", "serialize_result"]


class WithRun:
    """A tool's answer together with the run that produced it (an agent called as a tool):
    the model sees ``value`` (or ``error``), the :class:`ToolResult` keeps ``run``."""

    __slots__ = ("error", "run", "value")

    def __init__(self, value: Any, run: Any, error: str | None = None) -> None:
        self.value, self.run, self.error = value, run, error


def as_tool(obj: Any, origin: str | None = None) -> Tool:
    """Accept a :class:`Tool` or a plain function."""
    if isinstance(obj, Tool):
        return obj
    if callable(obj):
        return Tool(obj, origin=origin)
    raise UserError(
        f"{obj!r} is not a tool: pass a function (sync or async), a reactloop.Tool, "
        "or decorate a function with @tool"
    )


def serialize_result(value: Any) -> str:
    """The text a model sees for a tool's return value."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if type(value) is int:  # what json.dumps writes, without the encoder
        return int.__repr__(value)
    if isinstance(value, (bool, int, float)):
        return json.dumps(value)
    from pydantic_core import to_json

    try:
        return to_json(value, fallback=str).decode()
    except (ValueError, TypeError, UnicodeError, RecursionError) as exc:
        raise _Unserialisable(
            f"the tool returned a {type(value).__name__} that cannot be shown as text or JSON "
            f"({exc}); return a str, numbers, or JSON-compatible lists and dicts") from None


def split_result(value: Any) -> tuple[str, tuple[Attachment, ...]]:
    """The text and the attachments of a tool's return value: an :class:`Image` or
    :class:`Document`, or a list mixing them with text and JSON values, goes to the model as
    pictures and documents beside the text (each labelled in the text)."""
    if type(value) is str:  # the common cases first, without isinstance
        return value, ()
    if type(value) is int:
        return int.__repr__(value), ()
    if isinstance(value, Attachment):
        value = [value]
    elif not (isinstance(value, (list, tuple))
              and any(isinstance(v, Attachment) for v in value)):
        return serialize_result(value), ()
    parts = tuple(v for v in value if isinstance(v, Attachment))
    try:
        check_count(parts, "a tool result")
    except UserError as exc:
        raise _Unserialisable(str(exc)) from None
    texts = [v.label() if isinstance(v, Attachment) else serialize_result(v) for v in value]
    return "\n".join(texts), parts


class _Sharing(tuple[dict[str, Tool], list[tuple[ToolSpec, ...] | None]]):
    """What :meth:`ToolRegistry.copy` hands its twin: the tools and the specs' cache."""

    __slots__ = ()


class ToolRegistry:
    """Tools by name. The specs sent to the model are derived from these same objects."""

    __slots__ = ("_shared", "_specs", "_tools", "approval_rules")
    _tools: dict[str, Tool]
    _specs: list[tuple[ToolSpec, ...] | None]
    """The specs once made (for every registry sharing ``_tools``)."""
    _shared: bool
    """``_tools`` and ``_specs`` may be another registry's too (:meth:`copy`): the first
    :meth:`add` makes its own."""
    approval_rules: bool
    """Some tool has a ``requires_approval`` rule (else no call waits, unless the agent's
    ``approve`` policy says so): read per response by the approval gate."""

    def __init__(self, tools: Iterable[Tool] | Mapping[str, Tool] = ()) -> None:
        given: Any = tools
        if type(given) is _Sharing:  # a copy (see copy())
            self._tools, self._specs = given
            self._shared, self.approval_rules = True, False  # copy() sets the flag
            return
        self._specs, self._shared, self.approval_rules = [None], False, False
        if isinstance(tools, Mapping):  # already checked
            self._tools = dict(tools)
            self.approval_rules = any(t.requires_approval is not False
                                      for t in self._tools.values())
            return
        self._tools = {}
        for t in tools:
            self.add(t)

    def add(self, t: Tool) -> None:
        if self._shared:
            self._tools, self._specs, self._shared = dict(self._tools), [None], False
        existing = self._tools.get(t.name)
        if existing is not None and existing is not t:
            raise UserError(
                f"two tools are named {t.name!r}: one from {existing.origin}, one from "
                f"{t.origin}; rename one with @tool(name=...) or drop it"
            )
        self._tools[t.name] = t
        self._specs[0] = None
        self.approval_rules = self.approval_rules or t.requires_approval is not False

    def extend(self, tools: Iterable[Tool]) -> None:
        for t in tools:
            self.add(t)

    def copy(self) -> ToolRegistry:
        """A registry with the same tools; adding to one leaves the other as it is. Each
        run gets one of its agent's: they share the dict and the specs until one of them
        adds a tool (a run without tool sources or handoffs never copies them)."""
        self._shared = True
        twin = ToolRegistry(cast(Any, _Sharing((self._tools, self._specs))))
        twin.approval_rules = self.approval_rules
        return twin

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self, only: Sequence[str] | None = None) -> tuple[ToolSpec, ...]:
        if only is not None:
            return tuple(self._tools[n].spec() for n in only if n in self._tools)
        made = self._specs[0]
        if made is None:
            made = self._specs[0] = tuple(t.spec() for t in self._tools.values())
        return made

    # -- execution ---------------------------------------------------------------------------
    async def execute(
        self,
        calls: Sequence[ToolCall],
        *,
        run_id: str = "",
        default_timeout: float | None = None,
        max_parallel: int | None = None,
        deps: Any = None,
        emit: Callable[[str, Any], None] | None = None,
        add_tools: Callable[[Sequence[Tool]], None] | None = None,
        state: dict[str, Any] | None = None,
        done: list[ToolResult | None] | None = None,
    ) -> list[ToolResult]:
        """Run ``calls`` concurrently; results come back in call order. Never raises for
        tool failures: every failure becomes an error result the model can recover from.

        ``done`` (one slot per call) is filled as calls finish, so a caller that is cancelled
        midway still knows which calls completed."""
        st = state if state is not None else {}
        slots: list[ToolResult | None] = done if done is not None else [None] * len(calls)
        sem = asyncio.Semaphore(max_parallel) if max_parallel and len(calls) > 1 else None

        async def one(i: int, call: ToolCall) -> ToolResult:
            if sem is None:
                r = await self.execute_one(call, run_id, default_timeout, deps, emit,
                                           add_tools, st)
            else:
                async with sem:
                    r = await self.execute_one(call, run_id, default_timeout, deps, emit,
                                               add_tools, st)
            slots[i] = r
            return r

        if len(calls) == 1:
            return [await one(0, calls[0])]
        return list(await asyncio.gather(*(one(i, c) for i, c in enumerate(calls))))

    async def execute_one(
        self,
        call: ToolCall,
        run_id: str = "",
        default_timeout: float | None = None,
        deps: Any = None,
        emit: Callable[[str, Any], None] | None = None,
        add_tools: Callable[[Sequence[Tool]], None] | None = None,
        state: dict[str, Any] | None = None,
        tool: Tool | None = None,
    ) -> ToolResult:
        """Run one call (never raises for the tool's failures). ``tool``: this registry's
        tool of that name, when the caller already looked it up (one lookup per call)."""
        name, args = call.name, call.arguments
        t = tool if tool is not None else (
            self._tools.get(name) if type(name) is str or isinstance(name, str) else None)
        if t is None:
            return self._not_found(call)
        # a call marked unusable never runs: the model retries (only marked calls have details)
        if call.provider_details and (problem := arguments_problem(call)) is not None:
            return _error(call, problem)
        if type(args) is not dict and not isinstance(args, Mapping):
            return _error(  # type: ignore[unreachable]
                call, f"Invalid arguments: expected a JSON object, got {args!r}"
            )
        timeout = t.timeout if t.timeout is not None else default_timeout
        ctx = ToolContext(t.name, call.id or "", run_id, deps, emit, add_tools,
                          state if state is not None else {}) if t.wants_context else None
        parts: tuple[Attachment, ...] = ()
        started = time.perf_counter()
        try:
            if timeout is None:
                value = await t.call(args, ctx)
            else:
                async with asyncio.timeout(timeout):
                    value = await t.call(args, ctx)
            kind = type(value)
            if kind is str:  # the common cases first, without split_result
                content = value
            elif kind is int:
                content = int.__repr__(value)
            elif kind is WithRun:
                return _with_run(call, value, started)
            else:
                content, parts = split_result(value)
        except BaseException as exc:
            failed = _caught(call, exc, started, timeout)
            if failed is None:
                raise
            return failed
        return ToolResult(t.name, value, None, call.id or "", args, content,
                          duration=time.perf_counter() - started, attachments=parts)

    def _not_found(self, call: ToolCall) -> ToolResult:
        if not isinstance(call.name, str):  # providers can send anything
            return _error(call, f"Invalid tool name {call.name!r}: a tool name is a string; "  # type: ignore[unreachable]
                                f"available tools: {', '.join(self.names) or '(none)'}.")
        return _error(call, self._unknown_tool_message(call.name))

    def _unknown_tool_message(self, name: str) -> str:
        available = self.names
        if not available:
            return f"Unknown tool '{name}': no tools are available; answer in text instead."
        import difflib  # only for a wrong name

        close = difflib.get_close_matches(name, available, n=1, cutoff=0.5)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        return f"Unknown tool '{name}'.{hint} Available tools: {', '.join(available)}."


def _caught(call: ToolCall, exc: BaseException, started: float, timeout: float | None
            ) -> ToolResult | None:
    """The error result for what a tool raised (called in the ``except`` block, so the
    traceback is at hand); None: re-raise it (the run is being cancelled, or an interrupt)."""
    if isinstance(exc, (ToolArgumentsError, ToolRetry)):
        return _error(call, str(exc) if isinstance(exc, ToolArgumentsError) else exc.message,
                      started=started)
    if isinstance(exc, TimeoutError) and timeout is not None:
        return _error(call, f"Tool '{call.name}' timed out after {timeout:g} s; try simpler "
                            "arguments or another approach", started=started)
    if isinstance(exc, asyncio.CancelledError):
        task = asyncio.current_task()
        if task is not None and task.cancelling():  # the run is being cancelled
            return None
        return _failed(call, exc, started)  # the tool raised CancelledError itself
    if isinstance(exc, (KeyboardInterrupt, GeneratorExit)):
        return None
    # the model sees type and message; the traceback goes to events
    return _failed(call, exc, started)


def _with_run(call: ToolCall, value: WithRun, started: float) -> ToolResult:
    if value.error is not None:
        r = _error(call, value.error, started=started)
        return ToolResult(r.name, None, r.error, r.call_id, r.arguments, r.content,
                          duration=r.duration, run=value.run)
    return ToolResult(call.name, value.value, None, call.id or "", call.arguments,
                      serialize_result(value.value), duration=time.perf_counter() - started,
                      run=value.run)


def _failed(call: ToolCall, exc: BaseException, started: float) -> ToolResult:
    if isinstance(exc, _Unserialisable):
        return _error(call, str(exc), started=started)
    message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, SystemExit):
        message = f"SystemExit: the tool tried to exit the program (code {exc.code!r})"
    return _error(call, message, started=started, traceback=tb.format_exc())


class _Unserialisable(Exception):
    """A tool returned a value that cannot be turned into text for the model."""


def _error(
    call: ToolCall, message: str, *, started: float | None = None, traceback: str | None = None
) -> ToolResult:
    return ToolResult(
        name=call.name if isinstance(call.name, str) else repr(call.name),
        error=message,
        call_id=call.id or "",
        arguments=call.arguments if isinstance(call.arguments, Mapping) else {},
        content=f"Error: {message}",
        traceback=traceback,
        duration=0.0 if started is None else time.perf_counter() - started,
    )
