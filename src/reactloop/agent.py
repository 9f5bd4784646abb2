"""``Agent``: immutable configuration plus the entry points ``run``, ``run_sync``, ``stream``.

The agent is data (its :class:`~reactloop._spec.RunSpec`); a run is separate state (a
:class:`~reactloop.RunContext`); the loop is behaviour (``_loop``).
"""

from __future__ import annotations

import asyncio
import copy
import functools
import json
import math
import os
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import replace
from types import UnionType
from typing import TYPE_CHECKING, Any, Generic, Literal

from reactloop import _instrument, _nesting
from reactloop._attach import check_accepts
from reactloop._loop import run_events
from reactloop._multi import (
    DEFAULT_MAX_DEPTH,
    Handoff,
    agent_tool,
    answer_question,
    check_sub_agents,
    handoff_tools,
    speaking,
)
from reactloop._output import build_output
from reactloop._spec import RunSpec
from reactloop.approvals import (
    Decision,
    apply_decisions,
    decided_calls,
    pending_approvals,
    waiting_run_id,
)
from reactloop.approvals._gate import turn_iterations
from reactloop.attachments import Prompt, split_prompt
from reactloop.errors import UserError
from reactloop.events import Dispatcher, Event, RunEndEvent
from reactloop.extensions import Extension
from reactloop.extensions._retrieval import ContextProvider, RetrievedContext
from reactloop.messages import Message, ModelSettings
from reactloop.models._base import Model
from reactloop.models._resolve import resolve_model
from reactloop.prompt import LOOP_CONTROL_RULES, PromptBuilder
from reactloop.result import OutputT, RunResult
from reactloop.run_context import RunContext
from reactloop.runtime import LocalRuntime, Runtime
from reactloop.tools._control import control_tools
from reactloop.tools._registry import ToolRegistry, as_tool
from reactloop.tools._select import ToolSelector, tool_selector
from reactloop.tools._source import ToolSource
from reactloop.tools._tool import ApprovalRule, Tool, check_rule

if TYPE_CHECKING:
    from reactloop.context import Compaction
    from reactloop.controls import UsageLimits
    from reactloop.controls._guardrails import Guardrail

    Guardrails = Iterable[Guardrail]
    from reactloop.context._manager import ContextPolicy
    from reactloop.sessions import Conversation, Session, SessionStore
    from reactloop.tools.workspace import Workspace

__all__ = ["Agent", "ContextProvider", "Saved"]

Saved = str | Mapping[str, Any] | RunContext | RunResult[Any] | Sequence[Message]
"""A run to continue: ``RunResult.save()``'s JSON (or its parsed dict), the result itself,
its :class:`~reactloop.RunContext`, or a bare history (a session's stored messages)."""


class Agent(Generic[OutputT]):
    """An agent: a model, instructions and tools, plus the limits of a run.

    ``Agent[T]`` is generic in its answer type: ``Agent(output_type=T)`` runs return
    ``RunResult[T]`` (a union needs naming for type checkers: ``Agent[A | B](output_type=A |
    B)``); without ``output_type`` the answer is a ``str``.

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
        name: a name for logs, events, traces and stable activity names.
        instrument: trace runs with OpenTelemetry (``invoke_agent``, ``chat`` and
            ``execute_tool`` spans; needs ``reactloop[otel]``). ``None`` follows
            :func:`reactloop.instrument`; ``False`` never traces this agent.
        output_type: the type of the answer — a pydantic model, dataclass, TypedDict,
            primitive, ``list[...]`` or a union of those, or a JSON-schema dict —; the answer
            is validated and ``result.output`` is a value of it.
        output_mode: how the model is held to ``output_type``: ``"auto"`` (the model's
            strongest means), ``"native"`` (grammar / JSON-schema response format / the
            provider's structured output), ``"tool"`` (a ``final_answer`` tool) or
            ``"prompted"`` (the schema in the system prompt).
        output_retries: how often an answer that fails validation goes back to the model
            with the errors; past it the run ends ``ERROR`` with ``OutputValidationError``.
        approve: an approval policy over all tools: ``True`` (every call waits for a
            person's decision) or ``(arguments, context) -> bool`` per call; adds to each
            tool's own ``requires_approval``. Internal tools (``Tool.internal``: loop control,
            ``final_answer``, ``update_plan``, loading skills) never wait.
        tool_selection: offer the model only the tools that fit the current request, for
            agents with many tools (large MCP servers): ``k`` ranks the tools by BM25 over
            their names, descriptions and parameters and offers the best ``k``; a function
            ``(tools, request_text) -> tools`` (or names) ranks them your way. Internal tools
            (loop control, ``final_answer``, ``update_plan``, loading skills) and tools a
            skill adds during the run are always offered.
        skill_selection: a question that fits a skill better than every tool loads that skill
            first, as a visible ``load_skill`` step (skills ranked like tools: their names,
            descriptions and tools). The embedded model does this by default; for other
            models it is off unless set.
        handoffs: agents (or :class:`~reactloop.Handoff` with options) this one may hand the
            conversation to: each adds a ``transfer_to_<agent name>`` tool; calling it lets
            that agent carry the same run on with its own instructions, tools, model and
            ``max_iterations`` (counted from the handoff; the run's deadline stays).
            ``result.agent`` names the agent that answered, and the next turn of the
            conversation (a session's ``send``, ``run(history=...)``) starts with it.
        usage_limits: :class:`~reactloop.UsageLimits` (requests, tool calls, tokens, cost)
            for each run; a run that would pass one ends ``USAGE_LIMIT`` with a usable
            answer. Sub-agents called from this agent's tools count toward them.
        input_guardrails: checks on the user's message before the run goes on: each
            ``fn(text[, context])`` (sync or async) returns ``None`` to pass, a string to
            replace the text, or raises :class:`~reactloop.GuardrailTripped` to end the run
            ``BLOCKED`` (the message is then not stored).
        output_guardrails: the same on every text the model sends out (the answer, text
            beside tool calls, a loop-control tool's answer) before it is returned, stored
            or streamed (streamed text is held until they pass).
        tool_input_guardrails: ``fn(call[, context])`` on each tool call before it runs:
            ``None``, new arguments (a dict), or ``GuardrailTripped``.
        tool_output_guardrails: ``fn(result[, context])`` on each tool result before the
            model sees it: ``None``, the text the model sees instead, or
            ``GuardrailTripped``.
        model_concurrency: at most this many calls to the model in flight at once, shared by
            every run in the process that uses the same model and limit (off by default).
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
        instrument: bool | None = None,
        output_type: type[OutputT] | UnionType | Mapping[str, Any] | None = None,
        output_mode: Literal["auto", "native", "tool", "prompted"] = "auto",
        output_retries: int = 2,
        approve: ApprovalRule = False,
        tool_selection: int | ToolSelector | None = None, skill_selection: bool = False,
        handoffs: Iterable[Agent[Any] | Handoff] = (),
        usage_limits: UsageLimits | None = None, model_concurrency: int | None = None,
        input_guardrails: Guardrails = (), output_guardrails: Guardrails = (),
        tool_input_guardrails: Guardrails = (), tool_output_guardrails: Guardrails = (),
    ) -> None:
        _check_limits(max_iterations, max_execution_time, tool_timeout, max_parallel_tools)
        check_rule("Agent(approve=...)", approve)
        self.model: Model = _selecting_skills(resolve_model(model), skill_selection)
        self.instructions, self.max_iterations = instructions, max_iterations
        self.max_execution_time, self.tool_timeout = max_execution_time, tool_timeout
        self.loop_control, self.max_parallel_tools = loop_control, max_parallel_tools
        self.model_settings, self.prompt = model_settings or ModelSettings(), prompt or PromptBuilder()
        self.callbacks, self.deps, self.name = tuple(callbacks), deps, name
        self.context_providers = _check_providers(context_providers)
        self.instrument = _check_instrument(instrument)
        """Whether runs are traced (None: as :func:`reactloop.instrument` says)."""
        self.mcp_servers = _check_sources(mcp_servers)
        self.tool_selection = tool_selector(tool_selection)
        self.runtime: Runtime = runtime if runtime is not None else LocalRuntime()
        """Where model calls, tool batches and MCP calls run (default: this process)."""
        exts = _builtin_extensions(skills, workspace, planning, self.context_providers)
        self.extensions: tuple[Extension, ...] = (*exts, *extensions)
        self.output_type, self.handoffs = output_type, tuple(handoffs)
        self.controls = _controls(self.model, usage_limits, model_concurrency, (
            input_guardrails, output_guardrails, tool_input_guardrails, tool_output_guardrails))
        self.spec = self._build_spec(tools, max_messages, max_tokens, compaction,
                                     (output_type, output_mode, output_retries, approve))
        """The frozen configuration every run reads."""

    def _build_spec(self, tools: Iterable[Any], max_messages: int | None,
                    max_tokens: int | None, compaction: Compaction | bool,
                    answer: tuple[Any, str, int, ApprovalRule]) -> RunSpec:
        registry = ToolRegistry()
        given = [as_tool(t) for t in tools]
        check_sub_agents(self.name, given)
        for t in given:
            registry.add(t)
        sections: dict[str, str] = {}
        for ext in self.extensions:
            registry.extend(ext.tools())
            sections.update(ext.system_sections())
        if self.loop_control:
            registry.extend(control_tools())
        transfers, handoffs = handoff_tools(self.handoffs)
        registry.extend(transfers)
        has_tools = len(registry) > 0 or bool(self.mcp_servers)
        output = build_output(answer[0], answer[1], answer[2], self.model, has_tools=has_tools)
        if output is not None and output.mode == "tool":
            registry.add(output.tool())
            has_tools = True
        elif output is not None and output.mode == "prompted":
            sections["output"] = output.prompt_section()
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
            self.max_parallel_tools, self.loop_control, self.deps, self.callbacks, output,
            answer[3], self.tool_selection, self.controls, handoffs)

    # -- public entry points -----------------------------------------------------------------
    async def run(self, prompt: Prompt, *, history: Sequence[Message] = (),
                  on_message: Callable[[Message], None] | None = None,
                  conversation_id: str | None = None) -> RunResult[OutputT]:
        """Run the agent on ``prompt`` (after ``history``, if any) and return the result.

        Never raises for run failures: limits, cancellation and model errors end the run with
        the matching ``RunState`` (the error is kept on ``result.error``).

        Args:
            prompt: the user's message: a string, or a list of strings and attachments
                (``["What is in this picture?", Image.from_path("shot.png")]``). A part the
                model cannot take is refused here, before any call (see ``reactloop._attach``).
            history: earlier messages of the conversation.
            on_message: called with every message the run adds to the history (the prompt
                first), before the run goes on: a write-ahead hook for stores.
            conversation_id: the conversation this run is a turn of (sessions pass their id);
                traces carry it as ``gen_ai.conversation.id``.
        """
        # _drive's work in this frame: one coroutine less per live run (issue 28)
        ctx, result = self._context(prompt, history, on_message, None, conversation_id), None
        events = (self._events(_just(ctx), stream=False, quiet=True) if self.spec.callbacks
                  else self._run_events(ctx, stream=False, quiet=True))
        try:
            async for event in events:
                if type(event) is RunEndEvent and event.parent_run_id is None:
                    result = event.result
                del event  # not held while the run goes on (the run_start event: issue 28)
        finally:
            await events.aclose()
        assert result is not None
        return result

    def run_sync(self, prompt: Prompt, *, history: Sequence[Message] = ()) -> RunResult[OutputT]:
        """Blocking :meth:`run` for scripts and notebooks without a running event loop."""
        return asyncio.run(self.run(prompt, history=history))

    def stream(self, prompt: Prompt, *, history: Sequence[Message] = (),
               on_message: Callable[[Message], None] | None = None,
               conversation_id: str | None = None) -> AsyncGenerator[Event, None]:
        """Yield the run's events as they happen, with ``text_delta`` events while the model
        writes. The last event is ``run_end`` holding the :class:`RunResult`. ``history``,
        ``on_message`` and ``conversation_id`` as for :meth:`run`."""
        return self._events(functools.partial(self._context, prompt, history, on_message, None,
                                              conversation_id), stream=True)

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

    async def resume(self, saved: Saved, prompt: Prompt | None = None, *,
                     decisions: Iterable[Decision | Mapping[str, Any]] = (),
                     on_message: Callable[[Message], None] | None = None,
                     conversation_id: str | None = None) -> RunResult[OutputT]:
        """Continue a saved run (:meth:`RunResult.save`, a :class:`RunContext`, or a bare
        history) in any process:

        - a ``WAITING_FOR_APPROVAL`` run with ``decisions`` (``pending.approve()``,
          ``.deny(reason)``, ``.edit(arguments)``): the decided calls run (or are answered
          with the denial) and the same run goes on, within its iteration budget; calls left
          undecided keep it waiting. Decisions that do not match raise
          :class:`~reactloop.errors.ApprovalError` before anything runs;
        - any other run with ``prompt``, the user's next message (e.g. the answer to the
          question a ``WAITING_FOR_USER`` run asked): a new turn with a fresh budget.

        The history, the plan, the loaded skills and every other extension's state carry
        over. ``on_message`` and ``conversation_id`` as for :meth:`run`."""
        return await self._drive(self._resumed(saved, prompt, decisions, on_message,
                                               conversation_id))

    def resume_sync(self, saved: Saved, prompt: Prompt | None = None, *,
                    decisions: Iterable[Decision | Mapping[str, Any]] = ()
                    ) -> RunResult[OutputT]:
        """Blocking :meth:`resume`."""
        return asyncio.run(self.resume(saved, prompt, decisions=decisions))

    def resume_stream(self, saved: Saved, prompt: Prompt | None = None, *,
                      decisions: Iterable[Decision | Mapping[str, Any]] = (),
                      on_message: Callable[[Message], None] | None = None,
                      conversation_id: str | None = None) -> AsyncGenerator[Event, None]:
        """:meth:`resume`, yielding the events (``approval_decided`` first); the last one is
        ``run_end``. The seam servers and workflows continue runs through."""
        return self._events(functools.partial(self._resumed, saved, prompt, decisions,
                                              on_message, conversation_id), stream=True)

    def _resumed(self, saved: Saved, prompt: Prompt | None,
                 decisions: Iterable[Decision | Mapping[str, Any]],
                 on_message: Callable[[Message], None] | None,
                 conversation_id: str | None = None) -> RunContext:
        old = _saved_context(saved, self.deps)
        messages, decisions = old.messages, list(decisions)
        if decisions and prompt is not None:
            raise UserError("pass decisions or the user's next message, not both: the calls "
                            "waiting for approval are answered before the next message")
        if decisions:
            messages = apply_decisions(messages, decisions)
        if isinstance(prompt, str) and (answered := answer_question(messages, prompt)) is not None:
            messages = answered  # a sub-agent asked: its run goes on with the answer
        elif prompt is not None:
            return self._context(prompt, messages, on_message, old.state, conversation_id)
        if not decided_calls(messages):
            raise UserError("nothing to resume: pass the user's next message, or decisions "
                            "for the calls waiting for approval")
        # the same run goes on: its id, steps, metrics and the budget it had left
        spec = speaking(self.spec, messages)
        ctx = RunContext(old.run_id or self.runtime.new_id(), old.prompt, messages,
                         tools=spec.tools.copy(), deps=spec.deps, state=old.state,
                         on_message=on_message, conversation_id=conversation_id)
        ctx.iteration = min(old.iteration or turn_iterations(messages), spec.max_iterations - 1)
        ctx.steps, ctx.metrics, ctx.seen = list(old.steps), replace(old.metrics), tuple(old.seen)
        ctx.reminders = old.reminders
        return ctx

    def _context(self, prompt: Prompt, history: Sequence[Message],
                 on_message: Callable[[Message], None] | None,
                 state: Mapping[str, Any] | None,
                 conversation_id: str | None = None) -> RunContext:
        text, parts = split_prompt(prompt)
        if history and not parts and answer_question(history, text) is not None:
            # a sub-agent asked the user: its run goes on with the answer
            return self._resumed(history, text, (), on_message, conversation_id)
        if history and (waiting := _waiting(history)):
            raise UserError(f"{waiting} wait for approval: resume with decisions first "
                            "(session.resume(decisions) or agent.resume(saved, "
                            "decisions=...)), then send the next message")
        spec = self.spec
        if spec.handoffs:  # after a handoff: the agent that spoke last
            spec = speaking(spec, history)
        if parts:  # refused before any call when the model cannot take them
            check_accepts(spec.model, parts)
        ctx = RunContext(self.runtime.new_id(), text, history, tools=spec.tools.copy(),
                         deps=spec.deps, state=state, on_message=on_message,
                         conversation_id=conversation_id)
        message = Message("user", text, attachments=parts)
        if self.controls is not None and self.controls.input_guardrails:
            ctx.messages.append(message)  # stored once the guardrails pass
        else:
            ctx.append(message)
        return ctx

    async def _drive(self, ctx: RunContext) -> RunResult[Any]:
        """Run the loop to its end without streaming; the result is the ``run_end``'s
        (:meth:`run` does the same in its own frame)."""
        result: RunResult[Any] | None = None
        # with nothing to dispatch, the loop's own events (one generator less per live run)
        events = (self._events(_just(ctx), stream=False, quiet=True) if self.spec.callbacks
                  else self._run_events(ctx, stream=False, quiet=True))
        try:  # aclosing's work without its two objects per live run
            async for event in events:
                if type(event) is RunEndEvent and event.parent_run_id is None:
                    result = event.result
                del event  # not held while the run goes on (the run_start event: issue 28)
        finally:
            await events.aclose()
        assert result is not None
        return result

    async def _events(self, start: Callable[[], RunContext], *, stream: bool,
                      quiet: bool = False) -> AsyncGenerator[Event, None]:
        """The events of the run ``start()`` sets up, callbacks dispatched (``step`` events
        only feed them). ``start`` runs on the first ``anext``: a bad argument to a stream
        raises there, as an ``async def`` generator's would."""
        ctx = start()
        callbacks = Dispatcher(self.spec.callbacks) if self.spec.callbacks else None
        # aclosing: closing this stream closes the loop now (it records the ending), not
        # whenever the garbage collector gets to it
        async with aclosing(self._run_events(ctx, stream=stream, quiet=quiet)) as events:
            async for event in events:
                if callbacks is not None and (pending := callbacks.send(event)) is not None:
                    await pending
                if event.type != "step":
                    yield event
                del event  # not held while the loop goes on

    def _run_events(self, ctx: RunContext, *, stream: bool, quiet: bool = False
                    ) -> AsyncGenerator[Event, None]:
        """The loop over ``ctx``, traced when instrumentation is on (one global read when
        it is off); ``quiet``: only callbacks and the ``run_end`` are read (``run``), so the
        loop makes no event they never get (unless traced: the spans read them)."""
        telemetry = _instrument.for_agent(self.instrument)
        spec = speaking(self.spec, ctx.messages) if self.spec.handoffs else self.spec
        if telemetry is None:
            return run_events(spec, ctx, self.runtime, stream=stream, quiet=quiet)
        return telemetry.trace_run(spec, ctx, self.runtime, stream=stream)

    # -- agents that work together ------------------------------------------------------------
    def as_tool(self, name: str | None = None, description: str | None = None, *,
                max_depth: int | None = None, timeout: float | None = None,
                requires_approval: ApprovalRule = False) -> Tool:
        """This agent as a tool another agent can call with a ``task`` (a string).

        The call runs this agent — its own instructions, tools, ``max_iterations`` and
        ``output_type`` (a typed answer reaches the caller's model as JSON) — as a sub-run of
        the caller's run: its events reach the caller's stream with ``agent`` and
        ``parent_run_id``, its usage counts into the caller's metrics
        (``result.metrics_by_agent`` breaks it down), its result is on the call's
        ``ToolResult.run``, and the caller's deadline and cancellation stop it. A sub-run that
        ends without an answer (iteration limit, timeout, error) is a result the caller's
        model reads, never an exception.

        Args:
            name: the tool's name (default: the agent's ``name``).
            description: what the caller's model is told (default: from ``instructions``).
            max_depth: how deep agents called as tools may nest when this one is called
                (default 4; a top run is depth 0); past it the call is an error result.
            timeout: seconds the whole sub-run may take (the caller's ``tool_timeout``
                otherwise).
            requires_approval: the call waits for a person's approval first.
        """
        return agent_tool(self.name, self._subrun, name=name, description=description,
                          instructions=self.instructions,
                          max_depth=DEFAULT_MAX_DEPTH if max_depth is None else max_depth,
                          timeout=timeout, requires_approval=requires_approval, agent=self)

    def _subrun(self, task: str, stream: bool, saved: Mapping[str, Any] | None
                ) -> AsyncGenerator[Event, None]:
        """A run of this agent on ``task`` as a sub-run (its callbacks see it too), or the
        continuation of its ``saved`` run once the calls it waited for are decided. A runtime
        that runs sub-agents itself (a Temporal workflow) gives the runtime to use."""
        answer = None if saved is None else saved.get("answer")  # to the question it asked
        if (make := _nesting.runtime_for.get()) is not None:
            durable = copy.copy(self)  # the same configuration on the caller's runtime
            durable.runtime = make(self)
            return (durable.stream(task) if saved is None
                    else durable.resume_stream(saved, answer))
        if saved is None:
            return self._events(functools.partial(self._context, task, (), None, None),
                                stream=stream)
        return self._events(functools.partial(self._resumed, saved, answer, (), None),
                            stream=stream)

    @property
    def tools(self) -> list[str]:
        """Names of the tools the model is offered at the start of a run."""
        return self.spec.tools.names

    def __repr__(self) -> str:
        return f"Agent(model={self.model!r}, tools={self.tools!r})"


def _just(ctx: RunContext) -> Callable[[], RunContext]:
    """``ctx`` as a run's ``start`` (a lambda in ``_drive`` made a cell of every run's ctx)."""
    return lambda: ctx


def _controls(model: Model, limits: Any, concurrency: Any,
              guardrails: tuple[Iterable[Any], ...]) -> Any:
    """The agent's production controls, or None (reactloop.controls)."""
    from reactloop.controls import UsageLimits
    from reactloop.controls._guardrails import guards
    from reactloop.controls._run import Controls

    if limits is not None and not isinstance(limits, UsageLimits):
        raise UserError(f"usage_limits must be a reactloop.UsageLimits, got {limits!r}")
    if concurrency is not None:
        _check_positive_int("model_concurrency", concurrency)
    names = ("input_guardrails", "output_guardrails", "tool_input_guardrails",
             "tool_output_guardrails")
    return Controls.build(model, limits, [guards(v, k) for k, v in zip(names, guardrails,
                                                                          strict=True)],
                          concurrency)


def _check_instrument(instrument: bool | None) -> bool | None:
    if instrument is not None and not isinstance(instrument, bool):
        raise UserError(f"instrument must be True, False or None, got {instrument!r}")
    if instrument:
        _instrument.require_otel("Agent(instrument=True)")
    return instrument


def _waiting(history: Sequence[Message]) -> str:
    """The calls of ``history`` still waiting for (or running on) a decision, described."""
    calls = [f"{p.tool_name} ({p.call_id})" for p in pending_approvals(history)]
    calls += [f"{c.name} ({c.id})" for c, _ in decided_calls(history)]
    return ", ".join(calls)


def _saved_context(saved: Saved, deps: Any) -> RunContext:
    if isinstance(saved, RunResult):
        if not isinstance(saved.context, RunContext):
            raise UserError("this result was not produced by a run; there is nothing to resume")
        return saved.context
    if isinstance(saved, RunContext):
        return saved
    if isinstance(saved, str):
        return RunContext.from_dict(json.loads(saved), deps=deps)
    if isinstance(saved, Mapping):
        return RunContext.from_dict(saved, deps=deps)
    history = list(saved)
    if not all(isinstance(m, Message) for m in history):
        raise UserError("a saved run is RunResult.save()'s JSON, its dict, a RunContext or a "
                        "list of Message")
    latest = next((m.content for m in reversed(history)
                   if m.role == "user" and m.metadata.get("kind") is None), "")
    return RunContext(waiting_run_id(history), latest, history, deps=deps)


def _builtin_extensions(skills: Iterable[str | os.PathLike[str]], workspace: Any,
                        planning: bool, providers: Sequence[ContextProvider]
                        ) -> list[Extension]:
    out: list[Extension] = []
    dirs = list(skills)
    if dirs:
        from reactloop.skills import SkillSet

        out.append(SkillSet.discover(dirs))
    if workspace is not None:
        from reactloop.extensions._workspace import workspace_extension

        out.append(workspace_extension(workspace))
    if providers:
        out.append(RetrievedContext(providers))
    if planning:
        from reactloop.extensions._planning import Planning

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


def _selecting_skills(model: Model, on: bool) -> Model:
    """``Agent(skill_selection=True)``: the model behind a skill-selecting wrapper."""
    if not on:
        return model
    from reactloop.models._skill_select import SkillSelection

    return SkillSelection(model)
