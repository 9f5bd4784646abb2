"""The controls of one run: a :class:`~reactloop.runtime.Runtime` wrapper plus a few hooks.

:class:`Controls` is an agent's configuration (built once, ``None`` when nothing is set, so a
run without controls pays one attribute test). :func:`run_controls` makes a
:class:`RunControls` for a run that has some — or that runs inside a session's or a parent
run's budget. It wraps the run's runtime: each model call waits for a slot of its model's
concurrency limit, is checked against the usage limits first (with the request's counted
tokens), reports fallbacks, and — for the loop's own requests — has its answer checked by
the output guardrails, its streamed text held until they pass. Tool batches are checked by
the tool guardrails and run inside the run's budget (a sub-agent's usage counts toward its
parent's limits). The loop calls the rest: the input guardrails at the start, the charge of
each call, and the check before a response's tools run.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from reactloop import _notes as notes
from reactloop._redact import redact, redact_exception
from reactloop.controls import _concurrency, _cost
from reactloop.controls._fallback import FallbackModel, fallback_listener
from reactloop.controls._guardrails import Guard, check_calls, check_results, check_text
from reactloop.controls._limits import Budget, UsageLimits, outer_budget
from reactloop.errors import GuardrailTripped, UsageLimitExceeded
from reactloop.events import FallbackEvent, QueuedEvent
from reactloop.messages import ModelRequest, ModelResponse, TextDelta, ToolCall
from reactloop.models._base import Model
from reactloop.result import RunState, Step, ToolResult
from reactloop.run_context import RunContext
from reactloop.runtime import OnRetry, Runtime, RuntimeWrapper, ToolBatch
from reactloop.tools._control import CONTROL_TOOL_NAMES

__all__ = ["Controls", "RunControls", "control_ending", "run_controls", "run_failure"]


@dataclass(frozen=True, slots=True)
class Controls:
    """An agent's production controls (``None`` on the spec when none is set)."""

    limits: UsageLimits | None = None
    input_guardrails: tuple[Guard, ...] = ()
    output_guardrails: tuple[Guard, ...] = ()
    tool_input_guardrails: tuple[Guard, ...] = ()
    tool_output_guardrails: tuple[Guard, ...] = ()
    concurrency: int | None = None
    """Calls in flight per model (``Agent(model_concurrency=...)``)."""
    fallback: bool = False
    """The model is a :class:`FallbackModel` (its switches become events)."""

    @classmethod
    def build(cls, model: Model, limits: UsageLimits | None = None,
              guardrails: Sequence[tuple[Guard, ...]] = ((), (), (), ()),
              concurrency: int | None = None) -> Controls | None:
        """The controls, or ``None`` when there are none (the fast path)."""
        fallback = isinstance(model, FallbackModel)
        limits = limits if limits is not None and limits.any else None
        if limits is None and not any(guardrails) and concurrency is None and not fallback:
            return None
        ins, outs, tool_ins, tool_outs = guardrails
        return cls(limits, ins, outs, tool_ins, tool_outs, concurrency, fallback)


def control_ending(exc: UsageLimitExceeded | GuardrailTripped, steps: Sequence[Step]
                   ) -> tuple[RunState, str]:
    """How a run a control stopped ends: ``USAGE_LIMIT`` with a usable answer (why it
    stopped, what was done), or ``BLOCKED`` with the guardrail's reason as the answer."""
    if isinstance(exc, UsageLimitExceeded):
        return RunState.USAGE_LIMIT, notes.fallback(steps, 0, reason=str(exc))
    return RunState.BLOCKED, exc.reason or f"Blocked by {exc.guardrail}."


def run_failure(exc: BaseException, steps: Sequence[Step]
                ) -> tuple[RunState, str, BaseException | None, BaseException | None]:
    """State, output, error and what to re-raise for a run that ends by an exception."""
    if isinstance(exc, TimeoutError):  # the run's own deadline
        return RunState.TIMED_OUT, "", None, None
    if isinstance(exc, asyncio.CancelledError):  # the caller's: record, then propagate
        return RunState.CANCELLED, "", None, exc
    if isinstance(exc, UsageLimitExceeded | GuardrailTripped):  # clean, usable endings
        return (*control_ending(exc, steps), None, None)
    redact_exception(exc)  # an echoed API key must not reach the result
    return RunState.ERROR, redact(f"The run failed: {exc}"), exc, None


def run_controls(controls: Controls | None, ctx: RunContext, inner: Runtime, system: str,
                 counter: Any) -> RunControls | None:
    """The controls of a run over ``ctx`` (None: nothing to control)."""
    outer = outer_budget.get()
    if controls is None:
        if outer is None:
            return None
        controls = Controls()
    return RunControls(controls, ctx, inner, system, counter, outer)


class RunControls(RuntimeWrapper):
    """One run's controls; also the run's :class:`~reactloop.runtime.Runtime` (wrapping the
    agent's: the clock, ids, sleeping and tool sources pass through)."""

    def __init__(self, controls: Controls, ctx: RunContext, inner: Runtime, system: str,
                 counter: Any, outer: Budget | None) -> None:
        self.controls, self.ctx, self.inner = controls, ctx, inner
        self.system = system
        """The loop's system prompt: requests with it are the loop's (not a summarizer's)."""
        self.counter = counter
        limited = controls.limits is not None or outer is not None
        self.budget = Budget(controls.limits, outer) if limited else None
        self.input_check: asyncio.Future[str] | None = None
        """Input guardrails running beside the first model call (``concurrent_guardrail``)."""
        self.checks_budget = self.budget is not None and any(
            b.limits is not None for b in self.budget.chain())

    # -- hooks the loop calls ----------------------------------------------------------------
    async def start(self) -> None:
        """The input guardrails, on a new prompt. The prompt reaches the write-ahead hook
        (the session store) only once they pass (``Agent`` holds it back until then)."""
        ctx, guards = self.ctx, self.controls.input_guardrails
        if not guards or ctx.iteration or not ctx.messages:
            return
        last = ctx.messages[-1]
        if last.role != "user" or last.metadata.get("kind") is not None:
            return
        now = tuple(g for g in guards if not g.concurrent)
        beside = tuple(g for g in guards if g.concurrent)
        text = await self._input(now, last.content) if now else last.content
        if beside:  # beside the first model call, whose output is held until they pass
            self.input_check = asyncio.ensure_future(self._input(beside, text))
            self.input_check.add_done_callback(_retrieved)
            self._accept(text, write=False)
            return
        self._accept(text)

    async def _input(self, guards: tuple[Guard, ...], text: str) -> str:
        try:
            with self._in_budget():
                return await check_text(guards, "input", text, self.ctx)
        except BaseException:
            self.ctx.messages.pop()  # refused: neither stored nor in the result's history
            raise

    def _accept(self, text: str, *, write: bool = True) -> None:
        """The prompt passed (as ``text``): in the history, then to the write-ahead hook."""
        ctx = self.ctx
        last = ctx.messages[-1]
        if text != last.content:
            last = ctx.messages[-1] = replace(last, content=text)
            ctx.prompt = text
        if write and ctx.on_message is not None:
            ctx.on_message(last)

    async def _input_passed(self, request: ModelRequest) -> ModelRequest | None:
        """Wait for the input guardrails running beside the first call (raising their trip);
        the request to send again when they replaced the message, else None."""
        task, self.input_check = self.input_check, None
        if task is None:
            return None
        before = self.ctx.messages[-1]
        self._accept(await task)
        after = self.ctx.messages[-1]
        if after is before:
            return None
        return replace(request, messages=tuple(after if m is before else m
                                               for m in request.messages))

    def _drop_input_check(self) -> None:
        if self.input_check is not None:
            self.input_check.cancel()
            self.input_check = None

    def charge(self, response: ModelResponse, cost: float | None, model: str) -> None:
        """A model call answered: count it toward the limits."""
        if self.budget is not None:
            self.budget.charge_call(response.usage, cost, model)

    def before_tools(self, n: int) -> None:
        """A response asks for ``n`` tool calls: end the run (``UsageLimitExceeded``) if a
        limit is already passed or the calls would pass ``max_tool_calls``."""
        if self.budget is not None:
            if self.checks_budget:
                self.budget.check_spent()
                self.budget.check_tools(n)
            self.budget.charge_tools(n)

    # -- the runtime ---------------------------------------------------------------------------
    async def call_model(self, model: Model, request: ModelRequest, *,
                         on_retry: OnRetry) -> ModelResponse:
        main = request.system == self.system  # the loop's own request, not a summarizer's
        try:
            response = await self._call(model, request, on_retry)
            if main and (again := await self._input_passed(request)) is not None:
                response = await self._call(model, again, on_retry)  # the replaced message
        except BaseException:
            self._drop_input_check()
            raise
        if main and self.controls.output_guardrails:
            response = await self._checked(response)
        return response

    async def stream_model(self, model: Model, request: ModelRequest, *, on_retry: OnRetry
                           ) -> AsyncIterator[TextDelta | ModelResponse]:
        main = request.system == self.system
        checking = main and self.input_check is not None
        response = None
        try:
            await self._before(model, request)
            token = fallback_listener.set(self._on_fallback)
            try:
                async for item in self.inner.stream_model(model, request, on_retry=on_retry):
                    if isinstance(item, ModelResponse):
                        response = item
                    else:  # to the run's text gate, which holds it (see holds)
                        yield item
            finally:
                fallback_listener.reset(token)
                self._release(model)
            if checking and (again := await self._input_passed(request)) is not None:
                response = await self._call(model, again, on_retry)
        except BaseException:
            self._drop_input_check()
            raise
        assert response is not None
        if main and self.controls.output_guardrails:
            response = await self._checked(response)
        yield response

    def holds(self, request: ModelRequest) -> bool:
        """Whether the run's text gate holds ``request``'s streamed text until its response
        is checked: while an input guardrail runs beside the call, and with output
        guardrails (nothing refused reaches a client)."""
        return request.system == self.system and (
            self.input_check is not None or bool(self.controls.output_guardrails))

    async def _call(self, model: Model, request: ModelRequest, on_retry: OnRetry
                    ) -> ModelResponse:
        await self._before(model, request)
        token = fallback_listener.set(self._on_fallback)
        try:
            return await self.inner.call_model(model, request, on_retry=on_retry)
        finally:
            fallback_listener.reset(token)
            self._release(model)

    async def run_tools(self, batch: ToolBatch) -> list[ToolResult]:
        c, ctx = self.controls, self.ctx
        with self._in_budget():  # sub-agents in these tools (or guardrails) share the budget
            if c.tool_input_guardrails:
                batch.calls = await check_calls(c.tool_input_guardrails, batch.calls, ctx)
            results = await self.inner.run_tools(batch)
            if c.tool_output_guardrails:
                results = await check_results(c.tool_output_guardrails, results, ctx)
        return results

    # -- helpers -------------------------------------------------------------------------------
    async def _before(self, model: Model, request: ModelRequest) -> None:
        if self.checks_budget:
            assert self.budget is not None
            tokens = self.counter.request(request)["total"]
            priced = _cost.price_key(model.provider, model.name)
            price = _cost.input_price(priced) if _wants_price(self.budget) else None
            self.budget.check_call(tokens, price, model.name)
        size = self.controls.concurrency
        if size is not None:
            key = _concurrency.pool_key(model)
            waited = await _concurrency.acquire(_concurrency.pool(key, size),
                                                self.inner.monotonic)
            if waited:
                self.ctx.emit(QueuedEvent(self.ctx.run_id, model.name, waited))

    def _release(self, model: Model) -> None:
        size = self.controls.concurrency
        if size is not None:
            _concurrency.pool(_concurrency.pool_key(model), size).release()

    @contextmanager
    def _in_budget(self) -> Iterator[None]:
        """Runs started inside (sub-agents, agent guardrails) count toward this run's limits."""
        token = outer_budget.set(self.budget)
        try:
            yield
        finally:
            outer_budget.reset(token)

    async def _checked(self, response: ModelResponse) -> ModelResponse:
        """Every text of the response that can reach a client — its text, and the answer a
        loop-control tool carries (``task_completion``'s result) — after the output
        guardrails (a replacement takes its place)."""
        guards, ctx = self.controls.output_guardrails, self.ctx
        with self._in_budget():
            text = response.text
            if text:
                text = await check_text(guards, "output", text, ctx)
            calls = [await self._checked_call(c) if c.name in CONTROL_TOOL_NAMES else c
                     for c in response.tool_calls]
        if text == response.text and all(
                a is b for a, b in zip(calls, response.tool_calls, strict=True)):
            return response
        return replace(response, text=text, tool_calls=tuple(calls))

    async def _checked_call(self, call: ToolCall) -> ToolCall:
        args = dict(call.arguments) if isinstance(call.arguments, Mapping) else {}
        changed = False
        for key, value in args.items():
            if isinstance(value, str) and value:
                checked = await check_text(self.controls.output_guardrails, "output", value,
                                           self.ctx)
                changed = changed or checked != value
                args[key] = checked
        return ToolCall(call.name, args, call.id, call.provider_details) if changed else call

    def _on_fallback(self, failed: str, next_model: str, error: BaseException) -> None:
        from reactloop._redact import redact

        self.ctx.emit(FallbackEvent(self.ctx.run_id, failed, next_model, redact(str(error))))


def _wants_price(budget: Budget) -> bool:
    return any(b.limits is not None and b.limits.max_cost_usd is not None
               for b in budget.chain())


def _retrieved(task: asyncio.Future[str]) -> None:
    """A check nobody waits for any more (the run ended first): its outcome is not lost
    noise in the log."""
    if not task.cancelled():
        task.exception()
