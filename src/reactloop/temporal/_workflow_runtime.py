"""The runtime a run uses inside a Temporal workflow (the workflow side: activities and
workflow time). The activities themselves, run by the worker, are in ``_activities.py``.

:class:`WorkflowRuntime` implements :class:`~reactloop.runtime.Runtime`, so the loop that runs
in-process runs here unchanged. Time, ids and sleeps come from the workflow (deterministic on
replay); every model call, every tool call (one activity per call), every MCP listing and the
retrieved context are activities, whose results Temporal records: a call that completed is
never run again, also when the worker running the workflow dies.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    TimeoutError,
    TimeoutType,
)

from reactloop import _nesting
from reactloop.errors import ModelError, ReactloopError
from reactloop.messages import ModelRequest, ModelResponse, TextDelta, ToolCall
from reactloop.models._base import Model
from reactloop.result import ToolResult, jsonable
from reactloop.runtime import OnRetry, ToolBatch
from reactloop.temporal._codec import (
    error_from_dict,
    request_to_dict,
    response_from_dict,
    result_from_dict,
)
from reactloop.temporal._config import Durable
from reactloop.temporal._elicitation import PendingInputs
from reactloop.tools._control import CONTROL_TOOL_NAMES
from reactloop.tools._source import Emit, ToolSource
from reactloop.tools._tool import Tool

__all__ = ["PayloadTooLarge", "WorkflowRuntime"]


class PayloadTooLarge(ReactloopError):
    """Data for an activity, an event or a result is over Temporal's payload size limit.

    Raised instead of handing Temporal a payload it would refuse (and retry for ever)."""


class WorkflowRuntime:
    """One workflow's runtime (made by the workflow for each of its runs)."""

    def __init__(self, agent: Durable, inputs: PendingInputs | None = None) -> None:
        self.agent = agent
        self.spec = agent.agent.spec
        self.inputs = inputs if inputs is not None else PendingInputs(lambda _: None)
        """Questions of MCP servers waiting for the user (the conversation's)."""
        self.mcp: dict[str, str] = {}
        """Activity of each MCP tool listed in this run, by tool name."""

    # -- clock, ids, sleep: the workflow's, so a replay sees the same values ----------------
    def now(self) -> float:
        return workflow.now().timestamp()

    def monotonic(self) -> float:
        return workflow.time()

    def new_id(self) -> str:
        return workflow.uuid4().hex[:12]

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)  # a durable timer in a workflow

    # -- payloads ----------------------------------------------------------------------------
    def payload(self, value: Any, what: str) -> RawValue:
        """``value`` converted once and checked against the payload limit."""
        converted = workflow.payload_converter().to_payloads([value])[0]
        size, limit = converted.ByteSize(), self.agent.max_payload_bytes
        if size > limit:
            raise PayloadTooLarge(
                f"{what} is {size:,} bytes, over Temporal's payload limit of {limit:,} bytes; "
                "keep it smaller (shorter tool results, a memory limit or compaction), or "
                "raise the server's limit and TemporalAgent(max_payload_bytes=...)")
        return RawValue(converted)

    # -- model -------------------------------------------------------------------------------
    async def call_model(self, model: Model, request: ModelRequest, *,
                         on_retry: OnRetry) -> ModelResponse:
        which = "main" if model is self.spec.model else "summarizer"
        arg = self.payload({"model": which, "request": request_to_dict(request)},
                           "the model request")
        try:
            out = await workflow.execute_activity(
                self.agent.names.model, arg, result_type=dict,
                **self.agent.model_options(model))
        except ActivityError as exc:
            _reraise_cancel(exc)
            raise _model_error(exc) from None
        return response_from_dict(out)

    async def stream_model(self, model: Model, request: ModelRequest, *, on_retry: OnRetry
                           ) -> AsyncIterator[TextDelta | ModelResponse]:
        # no text deltas: a response crosses from its activity whole
        yield await self.call_model(model, request, on_retry=on_retry)

    # -- tools -------------------------------------------------------------------------------
    async def run_tools(self, batch: ToolBatch) -> list[ToolResult]:
        limit = batch.max_parallel
        sem = asyncio.Semaphore(limit) if limit and len(batch.calls) > 1 else None

        async def one(i: int, call: ToolCall) -> ToolResult:
            if sem is None:
                r = await self._tool(call, batch)
            else:
                async with sem:
                    r = await self._tool(call, batch)
            batch.done[i] = r
            return r

        if len(batch.calls) == 1:
            return [await one(0, batch.calls[0])]
        return list(await asyncio.gather(*(one(i, c) for i, c in enumerate(batch.calls))))

    async def _tool(self, call: ToolCall, batch: ToolBatch) -> ToolResult:
        t = batch.registry.get(call.name) if isinstance(call.name, str) else None
        sub = self.agent.subs.get(getattr(getattr(t, "agent", None), "name", ""))
        if sub is not None:  # an agent called as a tool: its run is part of this workflow
            return await self._subrun(call, batch)
        if t is None or not isinstance(call.arguments, Mapping) or (
                call.name in CONTROL_TOOL_NAMES and t.origin.startswith("reactloop")):
            # unknown tools, garbage arguments and the loop-control tools (which only echo
            # their argument) are answered here: deterministic, no activity needed
            r = await batch.registry.execute_one(call, batch.run_id, None, batch.deps, None,
                                                 None, batch.state)
            return dataclasses.replace(r, duration=0.0)
        # every activity needs a limit: the tool's, the agent's, else the TemporalAgent's
        timeout = next(x for x in (t.timeout, batch.default_timeout, self.agent.tool_timeout)
                       if x is not None)
        name = self.mcp.get(t.name) or self.agent.names.tool(t.name)
        body = {"call": call.to_dict(), "run_id": batch.run_id,
                "state": {k: jsonable(v) for k, v in batch.state.items()}, "timeout": timeout}
        try:
            arg = self.payload(body, f"the call of {t.name}")
        except PayloadTooLarge as exc:
            return _error(call, str(exc))

        def attempt(resume: dict[str, Any] | None) -> Awaitable[dict[str, Any]]:
            sent = arg if resume is None else self.payload({**body, "resume": resume},
                                                           f"the call of {t.name}")
            return workflow.execute_activity(name, sent, result_type=dict, summary=t.name,
                                             **self.agent.tool_options(t, timeout))
        try:
            out = await attempt(None)
            if "input_required" in out:  # an MCP server asks the user: a durable wait, then
                out = await self.inputs.resolve(  # the call again (temporal/_elicitation.py)
                    out, run_id=batch.run_id, call_id=call.id or "", tool=t.name, again=attempt)
        except ActivityError as exc:
            _reraise_cancel(exc)
            return _error(call, _tool_failure(t, timeout, exc))
        for event_name, data in out.get("events") or ():
            batch.emit(event_name, data)
        return result_from_dict(out["result"])

    async def _subrun(self, call: ToolCall, batch: ToolBatch) -> ToolResult:
        """An agent's run inside this workflow, on a runtime of its own (its model and tool
        calls are activities of its own names), so a worker that dies mid-sub-run costs no
        completed call."""
        subs = self.agent.subs
        token = _nesting.runtime_for.set(lambda agent: WorkflowRuntime(subs[agent.name],
                                                                       self.inputs))
        try:
            r = await batch.registry.execute_one(call, batch.run_id, batch.default_timeout,
                                                 batch.deps, batch.emit, None, batch.state)
        finally:
            _nesting.runtime_for.reset(token)
        return dataclasses.replace(r, duration=0.0)  # workflow time only

    # -- tool sources (MCP) ------------------------------------------------------------------
    def open_source(self, source: ToolSource, emit: Emit
                    ) -> AbstractAsyncContextManager[Sequence[Tool]]:
        return self._open(source)

    @asynccontextmanager
    async def _open(self, source: ToolSource) -> AsyncIterator[Sequence[Tool]]:
        names = self.agent.names
        try:
            out = await workflow.execute_activity(
                names.mcp_list(source.name), source.name, result_type=dict,
                **self.agent.list_options())
        except ActivityError as exc:
            raise _cause_error(exc) from None
        tools = []
        for d in out["tools"]:
            # a stand-in: the workflow only needs the name and schema; calls are activities
            tools.append(Tool(_elsewhere, name=d["name"], description=d["description"],
                              parameters=d["parameters"], timeout=d.get("timeout"),
                              repeatable=bool(d.get("repeatable")),
                              origin=f"MCP server {source.name!r}"))
            self.mcp[d["name"]] = names.mcp_call(source.name)
        yield tools


async def _elsewhere(**_: Any) -> Any:  # pragma: no cover - never called in a workflow
    raise RuntimeError("MCP tools run in activities")


def _reraise_cancel(exc: ActivityError) -> None:
    """An activity cancelled because the run is (its time limit, a cancelled workflow) is a
    cancellation of the run: the loop records it, as in-process."""
    task = asyncio.current_task()
    if isinstance(exc.cause, CancelledError) or (task is not None and task.cancelling()):
        raise asyncio.CancelledError from None


def _error(call: ToolCall, message: str) -> ToolResult:
    return ToolResult(name=str(call.name), error=message, call_id=call.id or "",
                      arguments=call.arguments if isinstance(call.arguments, Mapping) else {},
                      content=f"Error: {message}")


def _tool_failure(t: Tool, timeout: float, exc: ActivityError) -> str:
    """What the model is told when a tool's activity failed for good."""
    cause = exc.cause
    attempts = f" ({t.retries + 1} attempts)" if t.retries else ""
    if isinstance(cause, TimeoutError) and cause.type is TimeoutType.START_TO_CLOSE:
        return (f"Tool '{t.name}' timed out after {timeout:g} s{attempts}; try simpler "
                "arguments or another approach")
    if isinstance(cause, TimeoutError):
        again = ("" if t.retries else "; it was not attempted again since it may have had "
                 "effects (@tool(retries=N) marks a tool as safe to repeat)")
        return (f"Tool '{t.name}' did not finish: the worker running it stopped "
                f"responding{attempts}{again}")
    if isinstance(cause, ApplicationError):
        return cause.message
    return f"Tool '{t.name}' failed on the worker: {cause or exc}"


def _cause_error(exc: ActivityError) -> BaseException:
    cause = exc.cause
    if isinstance(cause, ApplicationError) and cause.details and isinstance(
            cause.details[0], Mapping):
        err = error_from_dict(cause.details[0])
        if err is not None:
            return err
    return ModelError(str(cause or exc))


def _model_error(exc: ActivityError) -> BaseException:
    cause = exc.cause
    if isinstance(cause, TimeoutError):
        kind = cause.type.name.lower().replace("_", "-") if cause.type else "a"
        return ModelError(f"the model call did not finish in time ({kind} timeout of its "
                          "activity; TemporalAgent(model_timeout=...))")
    return _cause_error(exc)
