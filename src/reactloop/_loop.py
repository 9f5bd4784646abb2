"""The agent loop (features L1-L12). ``_Run.events`` is the loop; everything else is a helper.

One run: build the request → call the model → run the tools it asked for (concurrently) →
append the results to the history → repeat, until the model answers, a loop-control tool ends
the run, or a limit is reached. Every path out of the loop produces a :class:`RunResult` and a
``run_end`` event.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, nullcontext
from typing import TYPE_CHECKING, Any

from reactloop import _notes as notes
from reactloop.events import (
    CustomEvent,
    Event,
    IterationStartEvent,
    ModelResponseEvent,
    NoToolCallEvent,
    RetryEvent,
    RunEndEvent,
    RunStartEvent,
    StepEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolErrorEvent,
    ToolResultEvent,
)
from reactloop.messages import Message, ToolCall, Usage
from reactloop.models._base import ModelRequest, ModelResponse, ModelSettings, TextDelta
from reactloop.models._retry import retry_listener
from reactloop.result import Metrics, RunResult, RunState, Step, ToolResult
from reactloop.tools._control import CONTROL_TOOL_NAMES

if TYPE_CHECKING:
    from reactloop.agent import Agent
    from reactloop.tools._registry import ToolRegistry
    from reactloop.tools._tool import Tool

__all__ = ["run_events"]

MAX_REMINDERS = 2
_NO_DEADLINE: AbstractAsyncContextManager[object] = nullcontext()


class _End(Exception):
    def __init__(self, state: RunState, output: str) -> None:
        self.state, self.output = state, output


class _Run:
    """The mutable state of one run. Serializable parts: ``messages``, ``steps``, ``metrics``."""

    def __init__(self, agent: Agent, prompt: str, history: Sequence[Message], stream: bool,
                 run_id: str, context_notes: Sequence[str],
                 on_message: Callable[[Message], None] | None = None) -> None:
        self.agent, self.stream, self.run_id = agent, stream, run_id
        self.prompt = prompt
        self.messages: list[Message] = [*history, Message.user(prompt)]
        self.steps: list[Step] = []
        self.metrics = Metrics()
        self.registry: ToolRegistry = agent._registry.copy()
        if agent._skills is not None and history:  # skills loaded in earlier turns stay loaded
            self._add_tools(agent._skills.restore(run_id, history))
        self.system = agent._system_prompt()
        self.context_notes = tuple(context_notes)
        self.on_message = on_message
        self.pending: list[Event] = []  # events emitted by tools, flushed after each batch
        self.seen: dict[str, ToolResult] = {}
        self.reminders = 0
        self.started = time.perf_counter()
        self.deadline = (None if agent.max_execution_time is None
                         else self.started + agent.max_execution_time)

    async def events(self) -> AsyncIterator[Event]:
        """The loop. Yields every event of the run, ending with ``run_end``."""
        agent, n = self.agent, self.agent.max_iterations
        yield RunStartEvent(self.run_id, self.prompt, agent.model.name, n)
        state, output, error = RunState.MAX_ITERATIONS, "", None
        try:
            async with AsyncExitStack() as stack:
                await self._open_sources(stack)
                for k in range(1, n + 1):
                    self.metrics.iterations = k
                    yield IterationStartEvent(self.run_id, k, n)
                    started = time.time()
                    response = None
                    async for item in self._call_model(k):
                        if isinstance(item, ModelResponse):
                            response = item
                        else:
                            yield item
                    assert response is not None
                    yield ModelResponseEvent(self.run_id, k, response)
                    if k == n:  # the forced last iteration: whatever it says is the answer
                        for ev in self._final(k, response, started):
                            yield ev
                    if self._fed_back_truncation(k, response):
                        continue
                    if not response.tool_calls:
                        async for ev in self._no_tool_call(k, response, started):
                            yield ev
                        continue
                    async for ev in self._run_tools(k, response, started):
                        yield ev
        except _End as end:
            state, output = end.state, end.output
        except TimeoutError:
            state, output = RunState.TIMED_OUT, self._fallback(timed_out=True)
        except asyncio.CancelledError:
            _uncancel()
            state, output = RunState.CANCELLED, self._fallback(cancelled=True)
        except Exception as exc:
            state, output, error = RunState.ERROR, f"The run failed: {exc}", exc
        for ev in self._flush():
            yield ev
        yield RunEndEvent(self.run_id, self._result(state, output, error))

    # -- model -------------------------------------------------------------------------------
    def _request(self, k: int, settings: ModelSettings | None = None) -> ModelRequest:
        n, agent = self.agent.max_iterations, self.agent
        extra: list[str] = agent._volatile_notes(self)  # plan, retrieved context
        declared = tools = self.registry.specs()
        if k == n:
            tools = self.registry.specs(["task_completion"] if agent.loop_control else [])
            extra.append(notes.final_iteration(bool(tools)))
        elif k >= n - 2:
            extra.append(notes.budget(n - k))
        return ModelRequest(self.system, tuple(self.messages), tools, tuple(extra),
                            settings or agent.model_settings,
                            declared if tools is not declared else ())

    async def _call_model(self, k: int) -> AsyncIterator[Event | ModelResponse]:
        # memory limits, compaction and the request event (reactloop.context)
        request, events = await self.agent._context.prepare(self, k)
        for event in events:
            yield event
        response: ModelResponse | None = None
        for attempt in (1, 2):
            response = None
            async for item in self._model_once(k, request):
                if isinstance(item, ModelResponse):
                    response = item
                else:
                    yield item
            assert response is not None
            self._count_usage(response.usage)
            if response.finish_reason != "length" or attempt == 2 or response.tool_calls:
                break
            # cut off by the output-token limit: retry once with twice the room
            room = (request.settings.max_tokens or notes.DEFAULT_MAX_TOKENS) * 2
            request = request.with_settings(max_tokens=room)
        assert response is not None
        yield response

    def _fed_back_truncation(self, k: int, response: ModelResponse) -> bool:
        """A reply still cut off after the retry goes back to the model with a note."""
        if response.finish_reason != "length" or response.tool_calls:
            return False
        if k == self.agent.max_iterations:
            return False
        self._append(Message.assistant(response.text),
                     Message.user(notes.TRUNCATED, kind="reminder"))
        return True

    async def _model_once(self, k: int, request: ModelRequest
                          ) -> AsyncIterator[Event | ModelResponse]:
        model = self.agent.model
        token = retry_listener.set(self._on_retry)
        try:
            async with self._deadline_scope():
                if not self.stream:
                    response = await model.request(request)
                    for ev in self._flush():  # retry events
                        yield ev
                    yield response
                    return
                async for item in model.stream(request):
                    for ev in self._flush():
                        yield ev
                    if isinstance(item, TextDelta):
                        yield TextDeltaEvent(self.run_id, k, item.text)
                    else:
                        yield item
        finally:
            retry_listener.reset(token)

    def _on_retry(self, attempt: int, wait: float, error: BaseException) -> None:
        self.pending.append(RetryEvent(self.run_id, attempt, wait, str(error)))

    # -- tools -------------------------------------------------------------------------------
    async def _run_tools(self, k: int, response: ModelResponse, started: float
                         ) -> AsyncIterator[Event]:
        calls = [c if c.id else ToolCall(c.name, c.arguments, f"call_{self.run_id[:8]}_{k}_{i}")
                 for i, c in enumerate(response.tool_calls)]
        self._append(Message.assistant(response.text, calls))
        self.metrics.tool_calls += len(calls)
        for c in calls:
            yield ToolCallEvent(self.run_id, k, c)
        results = await self._execute(calls)
        for ev in self._flush():
            yield ev
        for r in results:
            yield (ToolErrorEvent if r.error else ToolResultEvent)(self.run_id, k, r)
        self._append(*(Message.tool(r.call_id, r.name, r.content, is_error=r.error is not None)
                       for r in results))
        step = Step(k, response.text, tuple(calls), tuple(results), started, time.time())
        self.steps.append(step)
        yield StepEvent(self.run_id, step)
        self._check_control(results)

    async def _execute(self, calls: list[ToolCall]) -> list[ToolResult]:
        keys = [None if self._repeatable(c) else self._seen_key(c) for c in calls]
        fresh = [c for c, key in zip(calls, keys, strict=True) if key not in self.seen]
        agent = self.agent
        async with self._deadline_scope():
            done = await self.registry.execute(
                fresh, run_id=self.run_id, default_timeout=agent.tool_timeout,
                max_parallel=agent.max_parallel_tools, deps=agent.deps,
                emit=self._emit, add_tools=self._add_tools)
        by_id = {r.call_id: r for r in done}
        results = []
        for c, key in zip(calls, keys, strict=True):
            r = by_id.get(c.id or "")
            if r is None and key is not None:  # identical to an earlier call: reuse its result
                r = notes.repeated(self.seen[key], c.id or "")
            elif r is not None and r.error is None and key is not None:
                self.seen[key] = r
            assert r is not None
            results.append(r)
        return results

    def _check_control(self, results: Sequence[ToolResult]) -> None:
        for r in results:
            if r.error is None and r.name in CONTROL_TOOL_NAMES and self.agent.loop_control:
                state = (RunState.WAITING_FOR_USER if r.name == "ask_question"
                         else RunState.COMPLETED)
                raise _End(state, str(r.result))

    def _final(self, k: int, response: ModelResponse, started: float) -> list[Event]:
        text = (response.text or "").strip()
        for c in response.tool_calls:  # e.g. task_completion, the one tool still offered
            if c.name in CONTROL_TOOL_NAMES and self.agent.loop_control:
                value = next(iter(c.arguments.values()), "") if c.arguments else ""
                text = text or str(value).strip()
        self._append(Message.assistant(text))
        step = Step(k, response.text, (), (), started, time.time())
        self.steps.append(step)
        raise _End(RunState.MAX_ITERATIONS, text or self._fallback())

    async def _no_tool_call(self, k: int, response: ModelResponse, started: float
                            ) -> AsyncIterator[Event]:
        text = response.text or ""
        must_act = self.agent.loop_control or not text.strip()
        if must_act and self.reminders < MAX_REMINDERS:
            self.reminders += 1
            yield NoToolCallEvent(self.run_id, k, text, reminded=True)
            reminder = notes.NO_TOOL_CALL if text.strip() else notes.EMPTY_REPLY
            self._append(Message.assistant(text), Message.user(reminder, kind="reminder"))
            step = Step(k, text, (), (), started, time.time())
            self.steps.append(step)
            yield StepEvent(self.run_id, step)
            return
        if self.agent.loop_control:
            yield NoToolCallEvent(self.run_id, k, text, reminded=False)
        self._append(Message.assistant(text))
        step = Step(k, text, (), (), started, time.time())
        self.steps.append(step)
        yield StepEvent(self.run_id, step)
        raise _End(RunState.COMPLETED if text.strip() else RunState.MAX_ITERATIONS,
                   text if text.strip() else self._fallback())

    # -- small helpers -----------------------------------------------------------------------
    async def _open_sources(self, stack: AsyncExitStack) -> None:
        for source in self.agent.mcp_servers:
            tools = await stack.enter_async_context(source.open(self._emit))
            self.registry.extend(tools)

    def _append(self, *messages: Message) -> None:
        self.messages.extend(messages)
        if self.on_message is not None:
            for m in messages:
                self.on_message(m)

    def _emit(self, name: str, data: Any = None) -> None:
        self.pending.append(CustomEvent(self.run_id, name, data))

    def _add_tools(self, tools: Sequence[Tool]) -> None:
        for t in tools:
            if t.name not in self.registry:
                self.registry.add(t)

    def _flush(self) -> list[Event]:
        out, self.pending = self.pending, []
        return out

    def _repeatable(self, call: ToolCall) -> bool:
        t = self.registry.get(call.name)
        return t is None or t.repeatable or call.name in CONTROL_TOOL_NAMES

    @staticmethod
    def _seen_key(call: ToolCall) -> str:
        try:
            return call.name + "\0" + json.dumps(call.arguments, sort_keys=True, default=str)
        except (TypeError, ValueError):
            return call.name + "\0" + repr(call.arguments)

    def _deadline_scope(self) -> AbstractAsyncContextManager[object]:
        # no deadline: skip asyncio.timeout's bookkeeping (it runs twice per iteration)
        if self.deadline is None:
            return _NO_DEADLINE
        return asyncio.timeout(self._remaining())

    def _remaining(self) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - time.perf_counter())

    def _count_usage(self, usage: Usage | None) -> None:
        if usage is not None:
            self.metrics.input_tokens += usage.input_tokens
            self.metrics.output_tokens += usage.output_tokens

    def _fallback(self, *, timed_out: bool = False, cancelled: bool = False) -> str:
        return notes.fallback(self.steps, self.agent.max_iterations, timed_out=timed_out,
                              cancelled=cancelled)

    def _result(self, state: RunState, output: str, error: BaseException | None) -> RunResult:
        self.metrics.execution_time = time.perf_counter() - self.started
        self.metrics.success = state is RunState.COMPLETED
        return RunResult(output, state, list(self.steps), self.metrics, list(self.messages),
                         error, self.agent._plan_of(self), self.run_id)


def _uncancel() -> None:
    # we turn the cancellation into a CANCELLED result; tell asyncio it was handled so that an
    # enclosing asyncio.timeout() in the caller's task keeps working
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()


def run_events(agent: Agent, prompt: str, history: Sequence[Message], *, stream: bool,
               run_id: str, context_notes: Sequence[str] = (),
               on_message: Callable[[Message], None] | None = None) -> AsyncIterator[Event]:
    """The events of one run; the user prompt is appended to ``history`` (and to
    ``on_message``, called for every message the run adds, e.g. a session's write-ahead)."""
    run = _Run(agent, prompt, history, stream, run_id, context_notes, on_message)
    if on_message is not None:
        on_message(run.messages[-1])
    return run.events()
