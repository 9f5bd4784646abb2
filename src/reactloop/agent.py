"""``Agent``: immutable configuration plus the entry points ``run``, ``run_sync``, ``stream``.

The agent is data; a run is separate state (``_loop._Run``); the loop is behaviour.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from reactloop._loop import run_events
from reactloop.errors import UserError
from reactloop.events import Event, RunEndEvent, dispatch
from reactloop.messages import Message
from reactloop.models._base import Model, ModelSettings
from reactloop.models._resolve import resolve_model
from reactloop.prompt import LOOP_CONTROL_RULES, PromptBuilder
from reactloop.result import RunResult
from reactloop.tools._control import control_tools
from reactloop.tools._registry import ToolRegistry, as_tool
from reactloop.tools._source import ToolSource

if TYPE_CHECKING:
    from reactloop._loop import _Run
    from reactloop.context import Compaction, ContextManager
    from reactloop.sessions import Session, SessionStore
    from reactloop.tools.workspace import Workspace

__all__ = ["Agent", "Conversation"]

ContextProvider = Callable[[str], Any]
"""``fn(prompt) -> str | None`` (sync or async): retrieved context for one turn."""


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
        name: a name for logs and events.
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
        name: str = "agent",
    ) -> None:
        _check_positive_int("max_iterations", max_iterations)
        _check_positive("max_execution_time", max_execution_time)
        _check_positive("tool_timeout", tool_timeout)
        if max_parallel_tools is not None:
            _check_positive_int("max_parallel_tools", max_parallel_tools)
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
        self.context_providers = tuple(context_providers)
        for fn in self.context_providers:
            if not callable(fn):
                raise UserError(f"context provider {fn!r} is not callable: pass fn(prompt) -> str")
        self.name = name
        self.mcp_servers = tuple(mcp_servers)
        for src in self.mcp_servers:
            if not isinstance(src, ToolSource):
                raise UserError(
                    f"{src!r} is not a tool source: pass reactloop.mcp.MCPServer.stdio(...) or "
                    "MCPServer.http(...)"
                )
        self._registry = ToolRegistry()
        for t in tools:
            self._registry.add(as_tool(t))
        self._extensions: dict[str, Any] = {}
        self._skills = self._load_skills(skills)
        self._workspace = self._load_workspace(workspace)
        if loop_control:
            self._registry.extend(control_tools())
        self._context = _context_manager(self.model, max_messages, max_tokens, compaction)
        if planning:
            from reactloop.planning import Planner

            Planner().install(self)
        self._system: str | None = None

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
        result: RunResult | None = None
        async for event in self._events(prompt, history, stream=False, on_message=on_message):
            if isinstance(event, RunEndEvent):
                result = event.result
        assert result is not None
        return result

    def run_sync(self, prompt: str, *, history: Sequence[Message] = ()) -> RunResult:
        """Blocking :meth:`run` for scripts and notebooks without a running event loop."""
        return asyncio.run(self.run(prompt, history=history))

    async def stream(self, prompt: str, *, history: Sequence[Message] = (),
                     on_message: Callable[[Message], None] | None = None
                     ) -> AsyncIterator[Event]:
        """Yield the run's events as they happen, with ``text_delta`` events while the model
        writes. The last event is ``run_end`` holding the :class:`RunResult`. ``history`` and
        ``on_message`` as for :meth:`run`."""
        async for event in self._events(prompt, history, stream=True, on_message=on_message):
            yield event

    def conversation(self, history: Sequence[Message] = ()) -> Conversation:
        """An in-memory multi-turn conversation (see :meth:`session` for a persistent one)."""
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
        from reactloop.sessions import Session

        return Session(self, session_id, store)

    # -- internals used by the loop ----------------------------------------------------------
    async def _events(self, prompt: str, history: Sequence[Message], *, stream: bool,
                      on_message: Callable[[Message], None] | None = None,
                      ) -> AsyncIterator[Event]:
        if not isinstance(prompt, str):
            raise UserError(f"prompt must be a string, got {type(prompt).__name__}")
        run_id = uuid.uuid4().hex[:12]
        context = await self._context_notes(prompt) if self.context_providers else ()
        events = run_events(self, prompt, history, stream=stream, run_id=run_id,
                            context_notes=context, on_message=on_message)
        callbacks = self.callbacks
        async for event in events:
            if callbacks:
                await dispatch(callbacks, event)
            if event.type != "step":
                yield event

    async def _context_notes(self, prompt: str) -> list[str]:
        out = []
        for fn in self.context_providers:
            text = fn(prompt)
            if inspect.isawaitable(text):
                text = await text
            if text:
                out.append(str(text))
        return out

    def _system_prompt(self) -> str:
        if self._system is None:
            has_tools = len(self._registry) > 0 or bool(self.mcp_servers) or self._skills is not None
            computed: dict[str, str | None] = {"instructions": self.instructions or None}
            if self.loop_control:
                computed["loop_rules"] = LOOP_CONTROL_RULES
            elif not has_tools:
                computed["loop_rules"] = ""
                computed["tool_rules"] = ""
            if self._workspace is not None:
                computed["workspace"] = self._workspace.describe()
            if self._skills is not None:
                computed["skills"] = self._skills.catalog_text()
            self._system = self.prompt.system(computed)
        return self._system

    def _volatile_notes(self, run: _Run) -> list[str]:
        hook = self._extensions.get("volatile_notes")
        computed: dict[str, str | None] = dict(hook(run)) if hook is not None else {}
        if run.context_notes:
            computed["retrieved"] = "\n\n".join(run.context_notes)
        return self.prompt.volatile(computed)

    def _plan_of(self, run: _Run) -> Any:
        hook = self._extensions.get("plan_of")
        return hook(run) if hook is not None else None

    def _load_skills(self, skills: Iterable[str | os.PathLike[str]]) -> Any:
        dirs = list(skills)
        if not dirs:
            return None
        from reactloop.skills import SkillSet

        skill_set = SkillSet.discover(dirs)
        self._registry.extend(skill_set.tools())
        return skill_set

    def _load_workspace(self, workspace: Any) -> Any:
        if workspace is None:
            return None
        from reactloop.tools.workspace import Workspace

        ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
        self._registry.extend(ws.tools())
        return ws

    @property
    def tools(self) -> list[str]:
        """Names of the tools the model is offered at the start of a run."""
        return self._registry.names

    def __repr__(self) -> str:
        return f"Agent(model={self.model!r}, tools={self.tools!r})"


class Conversation:
    """An in-memory multi-turn conversation: the history carries over between messages."""

    def __init__(self, agent: Agent, history: Sequence[Message] = ()) -> None:
        self.agent = agent
        self.messages: list[Message] = list(history)
        self.last: RunResult | None = None

    async def send(self, text: str) -> RunResult:
        result = await self.agent.run(text, history=self.messages)
        self.messages = list(result.messages)
        self.last = result
        return result

    def send_sync(self, text: str) -> RunResult:
        return asyncio.run(self.send(text))

    async def stream(self, text: str) -> AsyncIterator[Event]:
        async for event in self.agent.stream(text, history=self.messages):
            if isinstance(event, RunEndEvent):
                self.messages = list(event.result.messages)
                self.last = event.result
            yield event


def _context_manager(model: Model, max_messages: int | None, max_tokens: int | None,
                     compaction: Compaction | bool) -> ContextManager:
    from reactloop.context import Compaction, ContextManager  # lazy: keeps the import fast

    for name, value in (("max_messages", max_messages), ("max_tokens", max_tokens)):
        if value is not None:
            _check_positive_int(name, value)
    if not isinstance(compaction, Compaction | bool):
        raise UserError(f"compaction must be a reactloop.context.Compaction, True or False, "
                        f"got {compaction!r}")
    policy = Compaction() if compaction is True else compaction or None
    return ContextManager(model, max_messages=max_messages, max_tokens=max_tokens,
                          compaction=policy)


def _check_positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(f"{name} must be an integer of at least 1, got {value!r}")


def _check_positive(name: str, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise UserError(f"{name} must be a positive number of seconds or None, got {value!r}")
