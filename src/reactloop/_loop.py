"""The agent loop (features L1-L12). ``_Loop.events`` is the loop; everything else is a helper.

One run: build the request → call the model → run the tools it asked for (concurrently) →
append the results to the history → repeat, until the model answers, a loop-control tool ends
the run, or a limit is reached. Every path out of the loop produces a :class:`RunResult` and a
``run_end`` event, and leaves no tool call without a result.

The loop reads a :class:`~reactloop._spec.RunSpec` (configuration), keeps everything it
accumulates in a :class:`~reactloop.RunContext` (data), and reaches the world only through a
:class:`~reactloop.runtime.Runtime` (model calls, tool batches, MCP, clock, ids), so it is
deterministic given what the runtime returns and runs unchanged inside a workflow engine.

Cancellation follows asyncio: when the caller's task is cancelled the run records its end
(``run_end`` with ``CANCELLED``, results for unfinished calls) and then re-raises
``CancelledError``. Closing the event stream ends the run without raising.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any, TypeVar

from reactloop import _iteration, _nesting
from reactloop import _notes as notes
from reactloop._attach import Fitter
from reactloop._iteration import NOTHING, RetryReporter, RunListener, with_ids
from reactloop._multi import (
    filtered_history,
    hand_over_usage,
    handed_to,
    hold_calls,
    waiting_subruns,
)
from reactloop._output import FINAL_ANSWER, PartialOutput, Verdict, judge, judge_tool
from reactloop._redact import redact
from reactloop._repeats import Repeats
from reactloop._spec import HandoffTarget, RunSpec
from reactloop._textgate import TextGate
from reactloop.approvals import decided_calls, gate, nested_runs, pending_approvals
from reactloop.approvals._gate import batch_results, decision_result, gated_calls
from reactloop.controls._cost import account
from reactloop.controls._run import run_controls, run_failure
from reactloop.events import (
    ApprovalDecidedEvent,
    ApprovalRequestedEvent,
    Event,
    HandoffEvent,
    IterationStartEvent,
    ModelResponseEvent,
    NoToolCallEvent,
    PartialOutputEvent,
    RunEndEvent,
    RunStartEvent,
    StepEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolErrorEvent,
    ToolResultEvent,
)
from reactloop.messages import (
    _NO_METADATA,
    Message,
    ModelRequest,
    ModelResponse,
    TextDelta,
    ToolCall,
    ToolSpec,
)
from reactloop.models._base import Model
from reactloop.result import RunResult, RunState, Step, ToolResult
from reactloop.run_context import RunContext
from reactloop.runtime import LocalRuntime, Runtime, ToolBatch
from reactloop.tools import _tool
from reactloop.tools._control import ASK_QUESTION, CONTROL_TOOL_NAMES, TASK_COMPLETION
from reactloop.tools._select import chosen_names
from reactloop.tools._tool import Tool

__all__ = ["run_events"]

MAX_REMINDERS = 2
_T = TypeVar("_T")
_NONE: frozenset[str] = frozenset()  # shared: an empty frozenset is 216 bytes per run
_NO_DEADLINE: AbstractAsyncContextManager[object] = NOTHING
_NO_STACK: AbstractAsyncContextManager[None] = NOTHING  # no source can open, no handoff
_Ending = tuple[RunState, str]
"""How a run ends: its state and output (a plain value: no exception on the happy path)."""


class _Loop(Repeats):
    """One run: the spec, the runtime and the run's context."""

    __slots__ = ("again", "answered", "asked", "chosen", "controls", "cost", "ctx", "deadline",
                 "error", "fit", "frame", "gated", "handed", "listening", "on_retry", "quiet",
                 "request", "rt",
                 "selectable", "spec", "stack", "started", "step_events", "stream", "streamed",
                 "tool_events", "value")

    def __init__(self, spec: RunSpec, ctx: RunContext, rt: Runtime, stream: bool,
                 quiet: bool = False) -> None:
        self.controls = run_controls(spec.controls, ctx, rt, spec.system, spec.context.counter)
        rt = self.controls or rt
        self.spec, self.ctx, self.rt, self.stream = spec, ctx, rt, stream
        self.answered: str | None = None  # the model that answered the latest call
        self.cost: float | None = None  # what the latest call cost (None: unknown)
        self.started = rt.monotonic()
        limit = spec.max_execution_time
        self.deadline = None if limit is None else self.started + limit
        self.step_events = bool(spec.callbacks)  # step events only feed on_step
        self.quiet = quiet
        """Only the caller's callbacks see the events: those they never get (iteration
        start, request, model response) are not made, nor the request's token count."""
        self.tool_events = self.step_events or not quiet
        super().__init__()  # Repeats: calls answered from identical earlier ones
        self.value: tuple[object] | None = None
        """The validated typed answer (``Agent(output_type=...)``), once there is one."""
        self.error: BaseException | None = None
        """Why a run without an exception failed (a typed answer out of retries)."""
        self.gated: tuple[ToolCall, ...] = ()
        """The current response's calls that wait for approval."""
        self.again = False
        """The forced last iteration runs again: its typed answer went back to the model."""
        self.selectable: frozenset[str] = _NONE
        """Tools ``tool_selection`` may leave out: those present when the run started,
        except internal ones (``Tool.internal``)."""
        self.chosen: tuple[str, int, frozenset[str]] | None = None
        """The last selection: the request text, the number of tools, the names chosen."""
        self.fit: Fitter | Model = spec.model  # its Fitter once a request holds attachments
        self.asked: str | None = None
        """The question a sub-agent asked the user (the run then waits for the answer)."""
        self.stack: AsyncExitStack | None = None
        """Where the run's tool sources are open (set when it starts)."""
        self.request: ModelRequest | None = None  # the latest (a cut-off reply asks again)
        self.on_retry = RetryReporter(ctx)  # one per run, not a bound method per call
        self.listening: RunListener | None = None  # set at the first model call it awaits
        self.streamed: ModelResponse | None = None  # the latest (``_stream_model`` sets it)
        self.handed: tuple[int, float] | None = None
        """The iteration and time of the last handoff (the speaking agent's share since)."""
        outer = _nesting.current.get()  # the run whose tool started this one, if any
        self.frame = _nesting.Frame(ctx, spec.name, 0 if outer is None else outer.depth + 1,
                                    stream)
        """What the run's tools see of it (sub-runs: ``reactloop._nesting``)."""

    # ``end``: a quiet step starts at the float that ended the last one when nothing was
    # seen in between, only the loop's bookkeeping ran (24 bytes less per step, issue 28)
    async def events(self) -> AsyncGenerator[Event, None]:
        """The loop. Yields every event of the run, ending with ``run_end``. Helpers queue
        their events on ``ctx.pending`` and return plain values; only the model call nests
        a generator, and only when streaming (fewer objects per step)."""
        spec, ctx = self.spec, self.ctx
        yield RunStartEvent(ctx.run_id, ctx.prompt, spec.model.name, spec.max_iterations)
        # CANCELLED until we know better: a closed stream ends the run at a yield
        state, output, error, reraise = RunState.CANCELLED, "", None, None
        try:
            async with (AsyncExitStack() if spec.sources or spec.handoffs else _NO_STACK) as stack:
                async with self._deadline_scope():
                    await self._start(stack)
                ending = await self._decided()  # a resumed run's decided calls
                for ev in ctx.flush():
                    yield ev
                k, end = ctx.iteration + 1, None  # a while, not a generator: one object less
                while ending is None and k <= self.spec.max_iterations:  # handoffs change it
                    ctx.iteration = ctx.metrics.iterations = k
                    if not self.quiet:
                        yield IterationStartEvent(ctx.run_id, k, self.spec.max_iterations)
                    started = end if self.quiet and end is not None else self.rt.now()
                    if self.stream:
                        async for ev in self._stream_model(k):
                            yield ev
                        response = self.streamed
                        assert response is not None
                    else:  # a reply cut off by the output-token limit: once more, with room
                        response = await self._call_model(k)
                        response = (await self._call_again()
                                    if self._retry_truncated(1, response) else response)
                    for ev in self._responded(k, response) if ctx.pending or not self.quiet else ():
                        yield ev
                    calls, ending = self._decide(k, response, started)
                    for ev in ctx.flush() if ctx.pending else ():
                        yield ev
                    if calls and self.stream and _nesting.nests(ctx.tools, calls):  # live
                        batch = asyncio.ensure_future(self._run_tools(k, response, calls, started))
                        async for ev in _nesting.live(batch, self.frame):
                            yield ev
                        ending, target = batch.result()
                    else:  # no calls: the ending _decide gave
                        ending, target = (await self._run_tools(k, response, calls, started)
                                          if calls else (ending, None))
                    if target is not None:  # in this task: the stack closes here
                        await self._hand_off(k, target)
                    end = None if ctx.pending or not calls else ctx.steps[-1].ended_at
                    for ev in ctx.flush() if ctx.pending else ():
                        yield ev
                    del response  # not held while the next model call waits (issue 28)
                    k, self.again = k if self.again else k + 1, False  # again: the last one
                state, output, error = *(ending or (RunState.MAX_ITERATIONS, "")), self.error
        except (Exception, asyncio.CancelledError) as exc:
            state, output, error, reraise = run_failure(exc, ctx.steps)
        finally:
            self._close_open_calls(state)  # also when the stream is closed
        for ev in self._ending():
            yield ev
        yield RunEndEvent(ctx.run_id, self._result(state, output, error))
        if reraise is not None:
            raise reraise

    def _responded(self, k: int, response: ModelResponse) -> list[Event]:
        """After a model call: the events queued meanwhile (when not streaming; a stream
        yielded them already), then ``model_response`` (unless quiet)."""
        out = [] if self.stream else self.ctx.flush()
        if not self.quiet:
            out.append(ModelResponseEvent(self.ctx.run_id, k, response, self.cost))
        return out

    def _decide(self, k: int, response: ModelResponse, started: float
                ) -> tuple[tuple[ToolCall, ...], _Ending | None]:
        """What to do with one response: end (an ending), feed back or remind (neither), or
        run tools (the calls, their ``tool_call`` events queued)."""
        if k == self.spec.max_iterations:  # the forced last iteration: this is the answer
            return (), self._final(k, response, started)
        if response.finish_reason == "length" and self._fed_back_truncation(response):
            return (), None
        if not response.tool_calls:
            return (), self._no_tool_call(k, response, started)
        ctx, spec = self.ctx, self.spec
        calls = with_ids(ctx.run_id, k, response.tool_calls)
        if self.controls is not None:  # a usage limit may end the run before the tools run
            self.controls.before_tools(len(calls))
        waiting = (gated_calls(calls, ctx.tools, spec.approve, ctx.run_id, spec.deps, ctx.state)
                   if spec.approve is not False or ctx.tools.approval_rules or _tool.rules_changed
                   else None)  # nothing can ask: no call
        # Message.assistant's work without its call (calls is a tuple, issue 28)
        ctx.append(Message("assistant", response.text or "", calls, None, None, False,
                           gate(waiting, ctx.run_id) if waiting else _NO_METADATA,
                           response.provider_details or None))
        if self.tool_events:
            ctx.pending += [ToolCallEvent(ctx.run_id, k, c) for c in calls]  # no extend call
        if waiting:  # the others run; these wait for a person
            self.gated = tuple(c for c in calls if c.id in waiting)
            calls = tuple(c for c in calls if c.id not in waiting)
            if not calls:
                self._record(k, response.text, (), (), started)
                return (), self._waiting(k)
        ctx.open_calls = calls
        ctx.metrics.tool_calls += len(calls)
        return calls, None

    # -- start and end -----------------------------------------------------------------------
    async def _start(self, stack: AsyncExitStack | None) -> None:
        ctx = self.ctx
        self.stack = stack  # a handoff opens its agent's sources on it
        if self.controls is not None:  # input guardrails, before anything else happens
            await self.controls.start()
        for ext in self.spec.extensions:
            await ext.start(ctx)
        for source in self.spec.sources:
            assert stack is not None  # made for a run with sources or handoffs
            tools = await stack.enter_async_context(
                self.rt.open_source(source, ctx.emit_custom))
            ctx.tools.extend(tools)
        if self.spec.tool_selection is not None:
            self.selectable = frozenset(s.name for s in ctx.tools.specs() if not s.internal)

    def _ending(self) -> list[Event]:
        for ext in self.spec.extensions:
            ext.finish(self.ctx)
        return self.ctx.flush()

    def _close_open_calls(self, state: RunState) -> None:
        """The run ends: answer every call still without a result, so the history stays
        valid for the next turn (providers reject a tool call without its result); and set
        the retry listener and the batches' caller back, if the run set them."""
        if self.listening is not None:
            self.listening.close()
        _iteration.leave_run(self.frame)
        ctx = self.ctx
        calls, ctx.open_calls = ctx.open_calls, ()
        if not calls:
            return
        results = [notes.unfinished(c, notes.why_unfinished(state)) for c in calls]
        self._record(ctx.iteration, None, calls, results, self.rt.now())

    # -- model -------------------------------------------------------------------------------
    def _request(self, k: int, messages: Sequence[Message]) -> ModelRequest:
        spec, ctx = self.spec, self.ctx
        n = spec.max_iterations
        extra = spec.notes(ctx) if spec.extensions else []  # plan, retrieved context
        declared = tools = (ctx.tools.specs() if spec.tool_selection is None
                            else self._offered(messages))
        out = spec.output
        if k == n:
            tools = ctx.tools.specs(self._final_tools())
            extra.append(notes.final_iteration(bool(tools)) if out is None
                         else out.final_note())  # the last iteration asks for the typed answer
        elif (failed := notes.failed_twice(ctx.steps)) and out is None:
            tools = ctx.tools.specs(self._final_tools())  # the same call failed twice: answer
            extra.append(notes.answer_after_failure(failed))
        elif k >= n - 2:
            extra.append(notes.budget(n - k))
        sent = tuple(messages)
        for m in sent:  # Fitter.messages' own test first: most histories hold no attachment
            if m.attachments:  # the run's first model's Fitter, made now (most runs: never)
                fit = self.fit = (self.fit if isinstance(self.fit, Fitter)
                                  else Fitter(self.fit, self.ctx.emit_custom))
                sent = fit.messages(sent)
                break
        return ModelRequest(spec.system, sent, tools, tuple(extra),
                            spec.settings,
                            declared if tools is not declared else (),
                            None if out is None else out.request_schema,
                            ctx.conversation_id or ctx.run_id)

    def _final_tools(self) -> list[str]:
        if self.spec.output is not None and self.spec.output.mode == "tool":
            return [FINAL_ANSWER]
        return [TASK_COMPLETION] if self.spec.loop_control else []

    def _offered(self, messages: Sequence[Message]) -> tuple[ToolSpec, ...]:
        """The run's tools, or those ``tool_selection`` picks for the current request (the
        same all turn long, so the request prefix stays stable)."""
        every, select = self.ctx.tools.specs(), self.spec.tool_selection
        if select is None:
            return every
        question = next((m.content for m in reversed(messages)
                         if m.role == "user" and not m.metadata.get("kind")), None)
        if not question:
            return every
        if self.chosen is None or self.chosen[:2] != (question, len(every)):
            pool = [s for s in every if s.name in self.selectable]
            self.chosen = (question, len(every), chosen_names(select(pool, question), pool))
        chosen = self.chosen[2]
        return tuple(s for s in every if s.name in chosen or s.name not in self.selectable)

    async def _prepare(self, k: int) -> ModelRequest:
        """Memory limits, compaction and the ``request`` event (reactloop.context): what
        :meth:`_call_model` skips when none of them is there."""
        ctx = self.ctx
        async with self._deadline_scope():
            prepared = await self.spec.context.prepare(
                ctx.messages, functools.partial(self._request, k), run_id=ctx.run_id,
                iteration=k, tally=ctx.tally, call=self._summarizer_call,
                clock=self.rt.monotonic)
        ctx.messages, ctx.tally = prepared.messages, prepared.tally
        self._count_usage(prepared.usage.input_tokens, prepared.usage.output_tokens)
        ctx.pending.extend(prepared.events)
        if prepared.error is not None:
            raise prepared.error
        return prepared.request

    def _call_model(self, k: int) -> Awaitable[ModelResponse]:
        """The model's first answer in iteration ``k``. Without memory limits, compaction
        or a listener: the runtime's call itself (no coroutine of the loop's own waits with
        it, issue 28); else after :meth:`_prepare`."""
        policy, c = self.spec.context, self.spec.context.compaction  # not policy.sizes():
        if self.quiet and policy.max_messages is None and policy.max_tokens is None and (
                c is None or (c.context_window or policy.model.context_window) is None):
            request = self.request = self._request(k, self.ctx.messages)
            if type(self.rt) is LocalRuntime:  # its call_model's work without its coroutine
                if self.listening is None:  # nor a context mapping per call
                    self.listening = self.on_retry.listen()
                self.on_retry.calling = True
                ask = self.spec.model.request(request)
            else:
                ask = self.rt.call_model(self.spec.model, request, on_retry=self.on_retry)
            return ask if self.deadline is None else self._timed(ask)
        return self._prepared_call(k)

    async def _prepared_call(self, k: int) -> ModelResponse:
        self.request = await self._prepare(k)
        return await self._ask(self.request)

    def _ask(self, request: ModelRequest) -> Awaitable[ModelResponse]:
        return self._bounded(self.rt.call_model(self.spec.model, request,
                                                on_retry=self.on_retry))

    async def _call_again(self) -> ModelResponse:
        """A reply cut off by the output-token limit: the same request with more room."""
        assert self.request is not None
        response = await self._ask(self._more_room(self.request))
        self._retry_truncated(2, response)
        return response

    async def _stream_model(self, k: int) -> AsyncIterator[Event]:
        """The model call's events as they stream; then the response is :attr:`streamed`."""
        ctx, out = self.ctx, self.spec.output
        self.streamed = None  # the last response is not held through this call (issue 28)
        request = await self._prepare(k)
        for ev in ctx.flush():
            yield ev
        for attempt in (1, 2):
            response = None
            # streamed text leaves only through the gate (redaction hold-back; guardrails
            # hold it all until they pass)
            outgoing = TextGate(self.controls is not None and self.controls.holds(request))
            partial = None if out is None or outgoing.hold else PartialOutput(out)
            async with self._deadline_scope():
                async for item in self.rt.stream_model(self.spec.model, request,
                                                       on_retry=self.on_retry):
                    for ev in ctx.flush():  # retry events
                        yield ev
                    if isinstance(item, TextDelta):
                        if released := outgoing.feed(item.text):
                            for ev in self._released(k, released, partial):
                                yield ev
                    else:
                        response = item
            if released := outgoing.flush(None if response is None else response.text):
                for ev in self._released(k, released, partial):
                    yield ev
            assert response is not None
            if not self._retry_truncated(attempt, response):
                self.streamed = response
                return
            request = self._more_room(request)

    def _released(self, k: int, text: str, partial: PartialOutput | None) -> list[Event]:
        """Text the outgoing gate released: a delta, and the typed answer parsed so far (from
        the released text too, so a held-back secret reaches no event)."""
        out: list[Event] = [TextDeltaEvent(self.ctx.run_id, k, text)]
        if partial is not None and (got := partial.feed(text)):
            out.append(PartialOutputEvent(self.ctx.run_id, k, got[0]))
        return out

    def _retry_truncated(self, attempt: int, response: ModelResponse) -> bool:
        """Count the model call — its tokens, cache reads and writes, and cost (None:
        unknown) — and True when a cut-off reply should be asked again with more room."""
        self.on_retry.calling = False  # the call is over (set when the loop awaits it)
        self.answered, self.cost = account(self.ctx.metrics, self.spec.model, response)
        if self.controls is not None:
            self.controls.charge(response, self.cost, self.answered)
        return response.finish_reason == "length" and attempt == 1 and not response.tool_calls

    @staticmethod
    def _more_room(request: ModelRequest) -> ModelRequest:
        # cut off by the output-token limit: retry once with twice the room
        room = (request.settings.max_tokens or notes.DEFAULT_MAX_TOKENS) * 2
        return request.with_settings(max_tokens=room)

    async def _summarizer_call(self, model: Model, request: ModelRequest) -> ModelResponse:
        return await self.rt.call_model(model, request, on_retry=self.on_retry)

    def _fed_back_truncation(self, response: ModelResponse) -> bool:
        """A reply still cut off after the retry goes back to the model with a note."""
        if response.finish_reason != "length" or response.tool_calls:
            return False
        self.ctx.append(Message.assistant(response.text, (), response.provider_details),
                        Message.user(notes.TRUNCATED, kind="reminder"))
        return True

    # -- tools -------------------------------------------------------------------------------
    async def _run_tools(self, k: int, response: ModelResponse, calls: tuple[ToolCall, ...],
                         started: float) -> tuple[_Ending | None, HandoffTarget | None]:
        """Run a batch: how the run ends with it, if it does, and the agent it hands off to
        (the caller hands off, in the loop's own task: the run's sources are opened and
        closed there, and a source may hold a task group, as MCP clients do)."""
        results = await self._execute(calls)
        if self.frame.held:  # an agent called as a tool waits for a person
            calls, results = self._hold(k, calls, results)
        if self.spec.extensions or self.tool_events:
            self._after_tools(k, response.text, calls, results, started)
        else:  # nobody but the history sees the batch
            self._record(k, response.text, calls, results, started)
        handoffs = self.spec.handoffs
        target = next((handoffs[r.name] for r in results
                       if r.error is None and r.name in handoffs), None) if handoffs else None
        if self.gated:
            return self._waiting(k), target
        if not self.spec.loop_control and self.spec.output is None:  # nothing ends it here
            return None, target
        return self._batch_ending(results), target

    def _waiting(self, k: int) -> _Ending:
        """The response's gated calls (or held agent calls) wait: the run ends here, asking
        the user when a sub-agent asked, else for approvals."""
        if self.asked is not None:
            return RunState.WAITING_FOR_USER, self.asked
        return self._approvals(k)

    def _after_tools(self, k: int, text: str | None, calls: tuple[ToolCall, ...],
                     results: Sequence[ToolResult], started: float) -> None:
        """A batch has its results: the extensions see them, the history and the step record
        them, and their events are queued."""
        ctx = self.ctx
        for ext in self.spec.extensions:
            ext.after_tools(ctx, results)
        # the history holds the results before anyone sees them: a consumer that stops
        # at a tool_result event leaves a complete history behind
        step = self._record(k, text, calls, results, started)
        if not self.tool_events:
            return
        pending, run_id = ctx.pending, ctx.run_id
        for r in results:
            pending.append((ToolErrorEvent if r.error else ToolResultEvent)(run_id, k, r))
        if self.step_events:
            pending.append(StepEvent(run_id, step))

    def _batch_ending(self, results: Sequence[ToolResult]) -> _Ending | None:
        """The run ends with this batch: a loop-control tool or the typed answer's tool."""
        if not self.spec.loop_control and self.spec.output is None:  # neither can
            return None
        return self._control_ending(results) or self._output_tool_ending(results)

    async def _hand_off(self, k: int, target: HandoffTarget) -> None:
        """A ``transfer_to_…`` call succeeded: its agent carries the run on from the next
        iteration (its instructions, tools, sources, extensions and iteration budget)."""
        ctx, before = self.ctx, self.spec
        now = self.rt.monotonic()
        since, then = self.handed or (0, self.started)  # None: no handoff yet
        hand_over_usage(ctx.metrics, before.name, k - since, now - then)
        self.handed = (k, now)
        self.spec = handed_to(before, target, k)
        if target.history is not None:  # it filters what came before; the transfer stays
            ctx.messages = filtered_history(ctx.messages, target.history)
        ctx.tools, self.chosen = self.spec.tools.copy(), None
        assert self.stack is not None
        async with self._deadline_scope():
            await self._start(self.stack)
        ctx.pending.append(HandoffEvent(ctx.run_id, k, before.name, self.spec.name))

    def _record(self, k: int, text: str | None, calls: tuple[ToolCall, ...],
                results: Sequence[ToolResult], started: float) -> Step:
        ctx = self.ctx
        ctx.open_calls = ()
        ctx.append(*[Message("tool", r.content, (), r.call_id, r.name, r.error is not None,
                             _NO_METADATA, None, r.attachments if type(r.attachments) is tuple
                             else tuple(r.attachments)) for r in results])  # Message.tool's
        step = Step(k, text, calls, tuple(results), started, self.rt.now(), self.answered)
        ctx.steps += (step,)  # no append call
        return step

    async def _execute(self, calls: tuple[ToolCall, ...]) -> list[ToolResult]:
        ctx, spec, rt = self.ctx, self.spec, self.rt
        split = self.sort_calls(calls, ctx.tools, ctx.seen, ctx.steps)
        fresh, batch = split[2], None
        if not fresh:  # every call answered from an identical earlier one
            return self.answers(calls, split, (), ctx)
        caller = _iteration.enter_batch(  # what tool sources and sub-runs find of the run
            self, self._count_usage, self._add_tools, self._summarizer_call)
        try:
            if fresh is calls and type(rt) is LocalRuntime:  # the one call, here: no batch
                one = ctx.tools.execute_one(fresh[0], ctx.run_id, spec.tool_timeout, spec.deps,
                                            ctx.emit_custom, self._add_tools, ctx.state,
                                            self.found)  # sort_calls looked it up
                done = [await (one if self.deadline is None else self._timed(one))]
            else:
                batch = ToolBatch(fresh, ctx.tools, ctx.run_id, default_timeout=spec.tool_timeout,
                                  max_parallel=spec.max_parallel_tools, deps=spec.deps,
                                  state=ctx.state, emit=ctx.emit_custom, add_tools=self._add_tools)
                done = await self._bounded(rt.run_tools(batch))
        except (TimeoutError, asyncio.CancelledError) as exc:
            self._keep_finished(calls, batch, exc)
            raise
        finally:
            _iteration.leave_batch(self, caller)
        if batch is not None:
            return self.answers(calls, split, done, ctx)
        if split[0][0] is True and done[0].error is None:
            ctx.seen += (done[0],)  # identical calls to come get its result
        return done

    def _keep_finished(self, calls: tuple[ToolCall, ...], batch: ToolBatch | None,
                       exc: BaseException) -> None:
        """The run ends during a batch: record the calls that did finish with their real
        results and the rest as unfinished, in call order."""
        why = ("the run reached its time limit" if isinstance(exc, TimeoutError)
               else "the run was cancelled")
        finished = {r.call_id: r for r in (batch.done if batch else ()) if r is not None}
        results = [finished.get(c.id or "") or notes.unfinished(c, why) for c in calls]
        self._record(self.ctx.iteration, None, calls, results, self.rt.now())

    def _add_tools(self, tools: Sequence[Tool]) -> None:
        self.ctx.add_tools(tools)

    def _control_ending(self, results: Sequence[ToolResult]) -> _Ending | None:
        if not self.spec.loop_control:
            return None
        for r in results:
            if r.error is None and r.name in CONTROL_TOOL_NAMES:
                state = (RunState.WAITING_FOR_USER if r.name == ASK_QUESTION
                         else RunState.COMPLETED)
                text = notes.strip_notes(str(r.result)) or self._fallback(state)
                if state is RunState.COMPLETED and self.spec.output is not None:
                    return self._typed(text, state)  # None: the errors went back
                return state, text
        return None

    # -- approvals ---------------------------------------------------------------------------
    def _approvals(self, k: int) -> _Ending:
        """The response's gated calls wait for decisions: the run ends here."""
        ctx, gated = self.ctx, self.gated
        ids = {c.id for c in gated}
        waiting = pending_approvals(ctx.messages)
        for p in waiting:
            if p.call_id in ids:
                ctx.pending.append(ApprovalRequestedEvent(ctx.run_id, k, p))
        return RunState.WAITING_FOR_APPROVAL, notes.waiting_for_approval(
            [ToolCall(p.tool_name, p.arguments, p.call_id) for p in waiting])

    def _hold(self, k: int, calls: tuple[ToolCall, ...], results: list[ToolResult]
              ) -> tuple[tuple[ToolCall, ...], list[ToolResult]]:
        """Agent calls whose sub-run waits for approval wait with it, unanswered: the run
        ends ``WAITING_FOR_APPROVAL`` once the others are recorded, and the sub-run's calls
        are the ones to decide (``reactloop.approvals``, ``"nested"``)."""
        self.frame.held = False
        held = waiting_subruns(results)
        if not held:
            return calls, results
        ctx = self.ctx
        ctx.messages = hold_calls(ctx.messages, held, ctx.run_id)
        # a held call runs again once decided or answered: never from the repeated-call cache
        ctx.seen = tuple(r for r in ctx.seen if r.call_id not in held)
        self.gated = (*self.gated, *(c for c in calls if c.id in held))
        for run in held.values():
            for p in run.pending_approvals:
                ctx.pending.append(ApprovalRequestedEvent(ctx.run_id, k, p))
            if run.state is RunState.WAITING_FOR_USER:  # the run asks what its sub-agent asks
                self.asked = run.text
        return (tuple(c for c in calls if c.id not in held),
                [r for r in results if r.call_id not in held])

    async def _decided(self) -> _Ending | None:
        """A run resumed with decisions: deny or run the decided calls — each once: a call
        with a result is no longer waiting — then wait again if some still wait, else go on
        with the next iteration (or end, when the batch held a control tool)."""
        ctx = self.ctx
        decided = decided_calls(ctx.messages) if ctx.iteration else None  # a resumed run
        if not decided:
            return None
        k, started = ctx.iteration, self.rt.now()
        for call, d in decided:
            ctx.pending.append(ApprovalDecidedEvent(ctx.run_id, k, call, d))
        run = tuple(ToolCall(c.name, c.arguments if d.arguments is None else d.arguments,
                             c.id, c.provider_details) for c, d in decided if d.approved)
        ctx.open_calls = run
        ctx.metrics.tool_calls += len(run)
        self.frame.resumes = nested_runs(ctx.messages)  # agent calls continue their sub-runs
        ran = {r.call_id: r for r in (await self._execute(run) if run else [])}
        self.frame.resumes = {}
        calls = tuple(c for c, _ in decided)
        results = [decision_result(c, d, ran.get(c.id or "")) for c, d in decided]
        if self.frame.held:
            calls, results = self._hold(k, calls, results)
        self._after_tools(k, None, calls, results, started)
        if self.asked is not None:
            return RunState.WAITING_FOR_USER, self.asked
        if waiting := pending_approvals(ctx.messages):
            return RunState.WAITING_FOR_APPROVAL, notes.waiting_for_approval(
                [ToolCall(p.tool_name, p.arguments, p.call_id) for p in waiting])
        return self._batch_ending(batch_results(ctx.messages, {c.id or "" for c in calls}))

    # -- typed answers -----------------------------------------------------------------------
    def _typed(self, raw: str, state: RunState) -> _Ending | None:
        """Judge a typed answer: end the run with it (``state``), send the validation errors
        back to the model (None), or end ``ERROR`` when the retries are spent."""
        assert self.spec.output is not None
        return self._verdict(judge(self.spec.output, self.ctx.messages, raw), state)

    def _verdict(self, verdict: Verdict, state: RunState) -> _Ending | None:
        if verdict.value is not None:
            self.value = verdict.value
            return state, verdict.text
        if verdict.error is not None:
            self.error = verdict.error
            return RunState.ERROR, redact(f"The run failed: {verdict.error}")
        if verdict.feedback is not None:
            self.ctx.append(verdict.feedback)
        return None

    def _output_tool_ending(self, results: Sequence[ToolResult]) -> _Ending | None:
        out = self.spec.output
        if out is None or out.mode != "tool":
            return None
        for r in results:
            if r.name == FINAL_ANSWER:
                return self._verdict(judge_tool(out, self.ctx.messages, r.arguments,
                                                r.error is None), RunState.COMPLETED)
        return None

    def _final_typed(self, k: int, response: ModelResponse, started: float
                     ) -> _Ending | None:
        """The forced last iteration of a typed run: the answer must validate. A failure goes
        back to the model and the iteration runs again (still without other tools) while the
        retries last."""
        raw = response.text or ""
        for c in response.tool_calls:  # tool mode: final_answer's arguments are the answer
            if c.name == FINAL_ANSWER:
                raw = json.dumps(dict(c.arguments), ensure_ascii=False, default=str)
            elif c.name in CONTROL_TOOL_NAMES and self.spec.loop_control and c.arguments:
                raw = raw or str(next(iter(c.arguments.values()), ""))
        self.ctx.append(Message.assistant(raw, (), response.provider_details))
        self.ctx.steps.append(Step(k, response.text, (), (), started, self.rt.now(), self.answered))
        ending = self._typed(raw, RunState.MAX_ITERATIONS)
        self.again = ending is None
        return ending

    def _final(self, k: int, response: ModelResponse, started: float) -> _Ending | None:
        if self.spec.output is not None:
            return self._final_typed(k, response, started)
        text = notes.strip_notes(response.text or "")
        for c in response.tool_calls:  # e.g. task_completion, the one tool still offered
            if c.name in CONTROL_TOOL_NAMES and self.spec.loop_control and c.arguments:
                value = next(iter(c.arguments.values()), "")
                text = text or notes.strip_notes(str(value))
        self.ctx.append(Message.assistant(text, (), response.provider_details))
        self.ctx.steps.append(Step(k, response.text, (), (), started, self.rt.now(), self.answered))
        return RunState.MAX_ITERATIONS, text or self._fallback(RunState.MAX_ITERATIONS)

    def _no_tool_call(self, k: int, response: ModelResponse, started: float) -> _Ending | None:
        ctx = self.ctx
        raw = response.text or ""
        text = notes.strip_notes(raw)
        typed = self.spec.output is not None
        reminded = ((self.spec.loop_control or not (text or typed))  # must act
                    and ctx.reminders < MAX_REMINDERS)
        ctx.append(Message.assistant(text, (), response.provider_details))
        if reminded:
            ctx.reminders += 1
            ctx.append(Message.user(notes.NO_TOOL_CALL if text else notes.EMPTY_REPLY,
                                    kind="reminder"))
        if reminded or self.spec.loop_control:
            ctx.pending.append(NoToolCallEvent(ctx.run_id, k, raw, reminded=reminded))
        step = Step(k, raw, (), (), started, self.rt.now(), self.answered)
        ctx.steps.append(step)
        if self.step_events:
            ctx.pending.append(StepEvent(ctx.run_id, step))
        if reminded:
            return None
        if typed:  # judged, even when empty
            return self._typed(text, RunState.COMPLETED)
        if text:
            return RunState.COMPLETED, text
        return RunState.MAX_ITERATIONS, self._fallback(RunState.MAX_ITERATIONS)

    # -- small helpers -----------------------------------------------------------------------
    def _bounded(self, step: Awaitable[_T]) -> Awaitable[_T]:
        """``step`` to await within the run's deadline: ``step`` itself without one (no
        scope, no extra coroutine frame while the run waits)."""
        return step if self.deadline is None else self._timed(step)

    async def _timed(self, step: Awaitable[_T]) -> _T:
        assert self.deadline is not None
        async with asyncio.timeout(max(0.0, self.deadline - self.rt.monotonic())):
            return await step

    def _deadline_scope(self) -> AbstractAsyncContextManager[object]:
        # no deadline: skip asyncio.timeout's bookkeeping (it runs twice per iteration)
        if self.deadline is None:
            return _NO_DEADLINE
        return asyncio.timeout(max(0.0, self.deadline - self.rt.monotonic()))

    def _count_usage(self, input_tokens: int, output_tokens: int) -> None:
        m = self.ctx.metrics
        m.input_tokens += input_tokens
        m.output_tokens += output_tokens

    def _fallback(self, state: RunState) -> str:
        return notes.fallback(self.ctx.steps, self.spec.max_iterations,
                              timed_out=state is RunState.TIMED_OUT,
                              cancelled=state is RunState.CANCELLED)

    def _result(self, state: RunState, output: str, error: BaseException | None
                ) -> RunResult[object]:
        ctx = self.ctx
        if not output:
            output = self._fallback(state)
        ctx.metrics.execution_time = self.rt.monotonic() - self.started
        ctx.metrics.success = state is RunState.COMPLETED
        value: object = output
        if self.spec.output is not None:  # a typed run: a T, or None without a valid one
            value = self.value[0] if self.value is not None else None
        waiting = (tuple(pending_approvals(ctx.messages))
                   if state is RunState.WAITING_FOR_APPROVAL else ())
        return RunResult(value, state, list(ctx.steps), ctx.metrics, list(ctx.messages),
                         error, run_id=ctx.run_id, context=ctx, text=output,
                         pending_approvals=waiting, agent=self.spec.name,
                         **self._extension_fields())

    def _extension_fields(self) -> dict[str, Any]:
        """The result's fields that extensions fill (``Extension.result_field``: the plan)."""
        out: dict[str, Any] = {}
        for ext in self.spec.extensions:
            name = ext.result_field
            if name is not None and name not in out:
                out[name] = ext.result(self.ctx)
        return out


def run_events(spec: RunSpec, ctx: RunContext, runtime: Runtime, *, stream: bool,
               quiet: bool = False) -> AsyncGenerator[Event, None]:
    """The events of one run over ``ctx`` (whose last message is the new prompt, already
    handed to the write-ahead hook by the caller). ``quiet``: the caller only dispatches
    callbacks and reads ``run_end`` (``Agent.run``), so the events no callback gets
    (``iteration_start``, ``request``, ``model_response``; tool events without callbacks)
    are not made."""
    return _Loop(spec, ctx, runtime, stream, quiet).events()

