"""``Agent``: immutable configuration plus the entry points ``run``, ``run_sync``, ``stream``.

The agent is data (its :class:`~reactloop._spec.RunSpec`); a run is separate state (a
:class:`~reactloop.RunContext`); the loop is behaviour (``_loop``).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from reactloop._loop import run_events
from reactloop._retrieval import ContextProvider, RetrievedContext
from reactloop._spec import RunSpec, StaticExtension
from reactloop.errors import UserError
from reactloop.events import Event, RunEndEvent, dispatch
from reactloop.extensions import Extension
from reactloop.messages import Message
from reactloop.models._base import Model, ModelSettings
from reactloop.models._resolve import resolve_model
from reactloop.prompt import LOOP_CONTROL_RULES, PromptBuilder
from reactloop.result import RunResult
from reactloop.run_context import RunContext
from reactloop.runtime import LocalRuntime, Runtime
from reactloop.tools._control import control_tools
from reactloop.tools._registry import ToolRegistry, as_tool
from reactloop.tools._select import ToolSelector, tool_selector
from reactloop.tools._source import ToolSource

if TYPE_CHECKING:
    from reactloop.context import Compaction
    from reactloop.context._manager import ContextPolicy
    from reactloop.sessions import Conversation, Session, SessionStore
    from reactloop.tools.workspace import Workspace

__all__ = ["Agent", "ContextProvider"]


class Agent:
    """An agent: a model, instructions and tools, plus the limits of a run.

    Args:
        model: a :class:`~reactloop.models.Model` or a string: ``"local"`` (the embedded model,
            also the default), ``"local:/path/model.gguf"``, ``"openai:<name>"``,
            ``"anthropic:<name>"``, ``"gemini:<name>"``, ``"ollama:<name>"``.
        instructions: the persona / task instructions (first section of the system prompt).
        tools: functions (sync or async) or :class:`~reactloop.Tool` objects.
        skills: folders holding Agent Skills (``SKILL.md``).
        mcp_servers: tool sources such as :class:`reactloop.mcp.MCPServer`.
        max_iterations: model calls per run (at least 1); the last one must answer.
        max_execution_time: seconds for a whole run; then it ends ``TIMED_OUT``.
        tool_timeout: seconds any one tool call may take (``@tool(timeout=...)`` overrides).
        loop_control: add ``task_completion``/``ask_question``/``converse`` and require a tool
            call in every step.
        max_parallel_tools: cap on tool calls running at once (default: no cap).
        model_settings: ``ModelSettings`` (max_tokens, temperature, …) for every request.
        callbacks: objects with any of ``on_start``, ``on_action``, ``on_observation``,
            ``on_step``, ``on_finish``, ``on_error``.
        deps: anything; handed to tools as ``ToolContext.deps``.
        prompt: a :class:`~reactloop.prompt.PromptBuilder` to replace or drop prompt sections.
        context_providers: ``fn(prompt) -> str | None`` whose text is added to the volatile
            end of every request of that turn (retrieved context, RAG).
        workspace: a folder (or a configured ``reactloop.tools.workspace.Workspace``); adds
            ``read_file``, ``list_dir``, ``grep`` and ``run_command`` confined to it.
        planning: add the ``update_plan`` tool; the plan is shown at the end of each request,
            changes emit ``plan_update`` and the plan is on ``result.plan``.
        max_messages: memory limit: the most history messages sent (oldest turns go first).
        max_tokens: memory limit: the most history tokens sent (not the answer's length; see
            ``model_settings`` for that).
        compaction: a :class:`~reactloop.context.Compaction` policy, ``True`` for the default
            (compact at 80% of the model's context window), ``False`` to never compact.
        extensions: more :class:`~reactloop.extensions.Extension` objects (after the
            built-in ones: skills, workspace, retrieved context, planning).
        runtime: where model calls, tool batches and MCP calls run (default: in this
            process; ``reactloop.temporal`` runs the same loop durably).
        name: a name for logs, events and stable activity names.
        tool_selection: offer the model only the tools that fit the current request, for
            agents with many tools (large MCP servers): ``k`` ranks the tools by BM25 over
            their names, descriptions and parameters and offers the best ``k``; a function
            ``(tools, request_text) -> tools`` (or names) ranks them your way. Loop-control
            and skill tools, and tools a skill adds during the run, are always offered.
    """

    def __init__(
        self,
        model: Model | str | None = None,
        instructions: str = "",
        tools: Iterable[Any] = (),
        skills: Iterable[str | os.PathLike[str]] = (),
        mcp_servers: Iterable[ToolSource] = (),
        max_iterations: int = 10,
        max_execution_time: float | None = None,
        tool_timeout: float | None = None,
        loop_control: bool = False,
        *,
        max_parallel_tools: int | None = None,
        model_settings: ModelSettings | None = None,
        callbacks: Iterable[object] = (),
        deps: Any = None,
        prompt: PromptBuilder | None = None,
        context_providers: Iterable[ContextProvider] = (),
        workspace: str | os.PathLike[str] | Workspace | None = None,
        planning: bool = False,
        max_messages: int | None = None,
        max_tokens: int | None = None,
        compaction: Compaction | bool = True,
        extensions: Iterable[Extension] = (),
        runtime: Runtime | None = None,
        name: str = "agent",
        tool_selection: int | ToolSelector | None = None,
    ) -> None:
        _check_limits(max_iterations, max_execution_time, tool_timeout, max_parallel_tools)
        self.model: Model = resolve_model(model)
        self.instructions = instructions
        self.max_iterations = max_iterations
        self.max_execution_time = max_execution_time
        self.tool_timeout = tool_timeout
        self.loop_control = loop_control
        self.max_parallel_tools = max_parallel_tools
        self.model_settings = model_settings or ModelSettings()
        self.callbacks = tuple(callbacks)
        self.deps = deps
        self.prompt = prompt or PromptBuilder()
        self.context_providers = _check_providers(context_providers)
        self.name = name
        self.mcp_servers = _check_sources(mcp_servers)
        self.tool_selection = tool_selector(tool_selection)
        self.runtime: Runtime = runtime if runtime is not None else LocalRuntime()
        """Where model calls, tool batches and MCP calls run (default: this process)."""
        exts = _builtin_extensions(skills, workspace, planning, self.context_providers)
        self.extensions: tuple[Extension, ...] = (*exts, *extensions)
        self.spec = self._build_spec(tools, max_messages, max_tokens, compaction)
        """The frozen configuration every run reads."""

    def _build_spec(self, tools: Iterable[Any], max_messages: int | None,
                    max_tokens: int | None, compaction: Compaction | bool) -> RunSpec:
        registry = ToolRegistry()
        for t in tools:
            registry.add(as_tool(t))
        sections: dict[str, str] = {}
        for ext in self.extensions:
            registry.extend(ext.tools())
            sections.update(ext.system_sections())
        if self.loop_control:
            registry.extend(control_tools())
        has_tools = len(registry) > 0 or bool(self.mcp_servers)
        computed: dict[str, str | None] = {"instructions": self.instructions or None, **sections}
        if self.loop_control:
            computed["loop_rules"] = LOOP_CONTROL_RULES
        elif not has_tools:
            computed["loop_rules"] = ""
            computed["tool_rules"] = ""
        return RunSpec(
            self.name, self.model, self.prompt.system(computed), registry, self.extensions,
            self.mcp_servers, self.model_settings, self.prompt,
            _context_policy(self.model, max_messages, max_tokens, compaction),
            self.max_iterations, self.max_execution_time, self.tool_timeout,
            self.max_parallel_tools, self.loop_control, self.deps, self.callbacks,
            self.tool_selection)

    # -- public entry points -----------------------------------------------------------------
    async def run(self, prompt: str, *, history: Sequence[Message] = (),
                  on_message: Callable[[Message], None] | None = None) -> RunResult:
        """Run the agent on ``prompt`` (after ``history``, if any) and return the result.

        Never raises for run failures: limits, cancellation and model errors end the run with
        the matching ``RunState`` (the error is kept on ``result.error``).

        Args:
            prompt: the user's message.
            history: earlier messages of the conversation.
            on_message: called with every message the run adds to the history (the prompt
                first), before the run goes on: a write-ahead hook for stores.
        """
        return await self._drive(self._context(prompt, history, on_message, None))

    def run_sync(self, prompt: str, *, history: Sequence[Message] = ()) -> RunResult:
        """Blocking :meth:`run` for scripts and notebooks without a running event loop."""
        return asyncio.run(self.run(prompt, history=history))

    async def stream(self, prompt: str, *, history: Sequence[Message] = (),
                     on_message: Callable[[Message], None] | None = None
                     ) -> AsyncGenerator[Event, None]:
        """Yield the run's events as they happen, with ``text_delta`` events while the model
        writes. The last event is ``run_end`` holding the :class:`RunResult`. ``history`` and
        ``on_message`` as for :meth:`run`."""
        async with aclosing(self._events(prompt, history, stream=True,
                                         on_message=on_message)) as events:
            async for event in events:
                yield event

    def conversation(self, history: Sequence[Message] = ()) -> Conversation:
        """An in-memory multi-turn conversation (see :meth:`session` for a persistent one)."""
        from reactloop.sessions import Conversation

        return Conversation(self, history)

    def session(self, session_id: str | None = None,
                store: SessionStore | str | os.PathLike[str] | None = None) -> Session:
        """A persistent conversation, written to ``store`` message by message.

        Args:
            session_id: continue this session (also from another process); ``None`` starts a
                new one (its id is ``session.id``).
            store: a :class:`~reactloop.sessions.SessionStore`, or the path of a SQLite file;
                default: ``sessions.sqlite3`` in the user's data directory.
        """
        from reactloop.sessions import Session, open_store

        return Session(self, session_id, open_store(store))

    async def resume(self, saved: str | Mapping[str, Any] | RunContext, prompt: str, *,
                     on_message: Callable[[Message], None] | None = None) -> RunResult:
        """Continue a saved run (:meth:`RunResult.save`) with the user's next message — e.g.
        the answer to the question a ``WAITING_FOR_USER`` run asked — in any process.

        The history, the plan, the loaded skills and every other extension's state carry
        over; the new message starts a new turn with a fresh iteration budget."""
        ctx = saved if isinstance(saved, RunContext) else RunContext.from_dict(
            json.loads(saved) if isinstance(saved, str) else saved, deps=self.deps)
        return await self._drive(self._context(prompt, ctx.messages, on_message, ctx.state))

    def resume_sync(self, saved: str | Mapping[str, Any] | RunContext, prompt: str) -> RunResult:
        """Blocking :meth:`resume`."""
        return asyncio.run(self.resume(saved, prompt))

    def _context(self, prompt: str, history: Sequence[Message],
                 on_message: Callable[[Message], None] | None,
                 state: Mapping[str, Any] | None) -> RunContext:
        if not isinstance(prompt, str):
            raise UserError(f"prompt must be a string, got {type(prompt).__name__}")
        spec = self.spec
        ctx = RunContext(self.runtime.new_id(), prompt, history, tools=spec.tools.copy(),
                         deps=spec.deps, state=state, on_message=on_message)
        ctx.append(Message.user(prompt))
        return ctx

    async def _drive(self, ctx: RunContext) -> RunResult:
        """Run the loop to its end without streaming: one generator, no wrappers."""
        callbacks = self.spec.callbacks
        result: RunResult | None = None
        async with aclosing(run_events(self.spec, ctx, self.runtime, stream=False)) as events:
            async for event in events:
                if callbacks:
                    await dispatch(callbacks, event)
                if type(event) is RunEndEvent:
                    result = event.result
        assert result is not None
        return result

    async def _events(self, prompt: str, history: Sequence[Message], *, stream: bool,
                      on_message: Callable[[Message], None] | None = None,
                      state: Mapping[str, Any] | None = None) -> AsyncGenerator[Event, None]:
        spec = self.spec
        ctx = self._context(prompt, history, on_message, state)
        callbacks = spec.callbacks
        # aclosing: closing this stream closes the loop now (it records the ending), not
        # whenever the garbage collector gets to it
        async with aclosing(run_events(spec, ctx, self.runtime, stream=stream)) as events:
            async for event in events:
                if callbacks:
                    await dispatch(callbacks, event)
                if event.type != "step":
                    yield event

    @property
    def tools(self) -> list[str]:
        """Names of the tools the model is offered at the start of a run."""
        return self.spec.tools.names

    def __repr__(self) -> str:
        return f"Agent(model={self.model!r}, tools={self.tools!r})"


def _builtin_extensions(skills: Iterable[str | os.PathLike[str]], workspace: Any,
                        planning: bool, providers: Sequence[ContextProvider]
                        ) -> list[Extension]:
    out: list[Extension] = []
    dirs = list(skills)
    if dirs:
        from reactloop.skills import SkillSet

        out.append(SkillSet.discover(dirs))
    if workspace is not None:
        from reactloop.tools.workspace import Workspace

        ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
        out.append(StaticExtension("workspace", ws.tools(), {"workspace": ws.describe()}))
    if providers:
        out.append(RetrievedContext(providers))
    if planning:
        from reactloop.planning import Planning

        out.append(Planning())
    return out


def _context_policy(model: Model, max_messages: int | None, max_tokens: int | None,
                    compaction: Compaction | bool) -> ContextPolicy:
    from reactloop.context import Compaction  # lazy: keeps the import fast
    from reactloop.context._manager import ContextPolicy

    for name, value in (("max_messages", max_messages), ("max_tokens", max_tokens)):
        if value is not None:
            _check_positive_int(name, value)
    if not isinstance(compaction, Compaction | bool):
        raise UserError(f"compaction must be a reactloop.context.Compaction, True or False, "
                        f"got {compaction!r}")
    policy = Compaction() if compaction is True else compaction or None
    return ContextPolicy(model, max_messages=max_messages, max_tokens=max_tokens,
                         compaction=policy)


def _check_limits(max_iterations: Any, max_execution_time: Any, tool_timeout: Any,
                  max_parallel_tools: Any) -> None:
    _check_positive_int("max_iterations", max_iterations)
    _check_positive("max_execution_time", max_execution_time)
    _check_positive("tool_timeout", tool_timeout)
    if max_parallel_tools is not None:
        _check_positive_int("max_parallel_tools", max_parallel_tools)


def _check_providers(providers: Iterable[ContextProvider]) -> tuple[ContextProvider, ...]:
    out = tuple(providers)
    for fn in out:
        if not callable(fn):
            raise UserError(f"context provider {fn!r} is not callable: pass fn(prompt) -> str")
    return out


def _check_sources(sources: Iterable[ToolSource]) -> tuple[ToolSource, ...]:
    out = tuple(sources)
    for src in out:
        if not isinstance(src, ToolSource):
            raise UserError(
                f"{src!r} is not a tool source: pass reactloop.mcp.MCPServer.stdio(...) or "
                "MCPServer.http(...)"
            )
    return out


def _check_positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(f"{name} must be an integer of at least 1, got {value!r}")


def _check_positive(name: str, value: Any) -> None:
    if value is None:
        return
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0
            or not math.isfinite(value)):
        raise UserError(f"{name} must be a positive, finite number of seconds or None, "
                        f"got {value!r}")
