"""Watching a run from the CLI: every model call's timing, tokens and cut-off replies, and
the tools MCP servers bring.

:class:`ObservedRuntime` (a :class:`~reactloop.runtime.RuntimeWrapper`) wraps the agent's runtime (the loop's one way to reach models, tools
and tool sources): it tells an :class:`Observer` when a model call starts and how it ended
(the live progress line, tokens/s, truncation notices and ``-v`` are built on that, whatever
the loop does between calls), and it filters and records the tools of tool sources.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Protocol

from reactloop._redact import add_secret, redact
from reactloop.messages import ModelRequest, ModelResponse, TextDelta
from reactloop.models._base import Model
from reactloop.result import ToolResult
from reactloop.runtime import Runtime, RuntimeWrapper
from reactloop.tools._source import Emit, ToolSource
from reactloop.tools._tool import Tool

__all__ = ["ObservedRuntime", "Observer", "redact", "register_secrets", "request_to_dict",
           "response_to_dict", "tool_matches"]

_SECRET_VAR = re.compile(r"(_API_KEY|_TOKEN|_SECRET|_PASSWORD)$|^API_KEY$")


def register_secrets() -> None:
    """Register the values of secret-looking environment variables (``*_API_KEY``,
    ``*_TOKEN``…, including keys stored with ``reactloop keys set``) for redaction."""
    for var, value in os.environ.items():
        if _SECRET_VAR.search(var):
            add_secret(value)


class Observer(Protocol):
    def call_started(self, request: ModelRequest) -> None: ...
    def call_ended(self, request: ModelRequest, response: ModelResponse | None,
                   seconds: float, error: BaseException | None) -> None: ...


def tool_matches(pattern: str, tool: Tool) -> bool:
    """``pattern`` (a name or an fnmatch pattern) matches the tool's public or server name."""
    names = [tool.name, getattr(tool, "remote_name", tool.name)]
    return any(fnmatch.fnmatchcase(n, pattern) for n in names)


class ObservedRuntime(RuntimeWrapper):
    """``inner`` (the agent's runtime), with model calls reported to ``observer`` and the
    tools of tool sources filtered (``include``/``exclude`` patterns) and kept in ``seen``.

    Tools the server marks as writing (MCP annotations ``readOnlyHint: false`` or
    ``destructiveHint: true``: ``writes`` is True) require a person's approval here, so the
    CLI asks before ``git_commit`` runs (``--approve-all`` for scripts); a tool that already
    has its own approval rule keeps it.
    """

    __slots__ = ("exclude", "include", "observer", "seen")

    def __init__(self, inner: Runtime, observer: Observer, seen: dict[str, Tool], *,
                 include: Sequence[str] = (), exclude: Sequence[str] = ()) -> None:
        super().__init__(inner)
        self.observer, self.seen = observer, seen
        self.include, self.exclude = tuple(include), tuple(exclude)

    async def call_model(self, model: Model, request: ModelRequest, *,
                         on_retry: Any) -> ModelResponse:
        self.observer.call_started(request)
        started = time.perf_counter()
        try:
            response: ModelResponse = await self.inner.call_model(model, request,
                                                                  on_retry=on_retry)
        except BaseException as exc:
            self.observer.call_ended(request, None, time.perf_counter() - started, exc)
            raise
        self.observer.call_ended(request, response, time.perf_counter() - started, None)
        return response

    async def stream_model(self, model: Model, request: ModelRequest, *, on_retry: Any
                           ) -> AsyncIterator[TextDelta | ModelResponse]:
        self.observer.call_started(request)
        started = time.perf_counter()
        response: ModelResponse | None = None
        try:
            async for item in self.inner.stream_model(model, request, on_retry=on_retry):
                if isinstance(item, ModelResponse):
                    response = item
                yield item
        except BaseException as exc:
            self.observer.call_ended(request, None, time.perf_counter() - started, exc)
            raise
        self.observer.call_ended(request, response, time.perf_counter() - started, None)

    async def run_tools(self, batch: Any) -> list[ToolResult]:
        """The batch, with MCP progress shown as it comes (``Observer.tool_progress``)."""
        from reactloop.tools._source import active_caller, caller_run

        caller = active_caller()
        tap = getattr(self.observer, "tool_progress", None)
        if caller is None or tap is None:
            return list(await self.inner.run_tools(batch))
        emit = caller.emit

        def watched(name: str, data: Any = None) -> None:
            if name == "mcp_progress" and isinstance(data, dict):
                tap(data)
            emit(name, data)

        token = caller_run.set(caller.with_emit(watched))
        try:
            return list(await self.inner.run_tools(batch))
        finally:
            caller_run.reset(token)

    def _wanted(self, tool: Tool) -> bool:
        if self.include and not any(tool_matches(p, tool) for p in self.include):
            return False
        return not any(tool_matches(p, tool) for p in self.exclude)

    @asynccontextmanager
    async def open_source(self, source: ToolSource, emit: Emit) -> AsyncIterator[Sequence[Tool]]:
        async with self.inner.open_source(source, emit) as tools:
            kept = [t for t in tools if self._wanted(t)]
            for t in kept:
                if getattr(t, "writes", None) is True and t.requires_approval is False:
                    t.requires_approval = True  # a fresh object per connection: ours to set
                self.seen[t.name] = t
            yield kept


def request_to_dict(request: ModelRequest) -> dict[str, Any]:
    """Everything sent in one call, JSON-ready (for ``-v``)."""
    s = request.settings
    return {
        "system": request.system,
        "messages": [m.to_dict() for m in request.messages],
        "notes": list(request.notes),
        "tools": [{"name": t.name, "description": t.description, "parameters": t.parameters}
                  for t in request.tools],
        "settings": {"max_tokens": s.max_tokens, "temperature": s.temperature,
                     "tool_choice": s.tool_choice, "extra": dict(s.extra)},
    }


def response_to_dict(response: ModelResponse) -> dict[str, Any]:
    return {
        "text": response.text,
        "tool_calls": [c.to_dict() for c in response.tool_calls],
        "usage": None if response.usage is None else {
            "input_tokens": response.usage.input_tokens,
            "output_tokens": response.usage.output_tokens},
        "finish_reason": response.finish_reason,
        "model_name": response.model_name,
    }


def dumps(data: Any) -> str:
    """Indented, redacted JSON."""
    return redact(json.dumps(data, indent=2, ensure_ascii=False, default=str))
