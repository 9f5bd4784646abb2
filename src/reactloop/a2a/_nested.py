"""A remote agent's run as a sub-run of the calling run (``reactloop._nesting``): the task's
updates become events of the caller's stream tagged with the remote's name (``agent``) and
the caller's run id (``parent_run_id``), as a local agent called as a tool gives.

A reactloop remote sends its own events (``metadata.reactloop.event``): ``run_start``,
``iteration_start``, ``model_response``, ``tool_call``, ``tool_result`` and ``tool_error`` come
back as those typed events; anything else, and every update of another framework's remote,
as a ``custom`` event named ``a2a``. The call ends with a ``run_end`` whose result carries the
remote's answer, state and usage, which also count into the caller's metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from reactloop.events import (
    CustomEvent,
    Event,
    IterationStartEvent,
    ModelResponseEvent,
    RunEndEvent,
    RunStartEvent,
    ToolCallEvent,
    ToolErrorEvent,
    ToolResultEvent,
)
from reactloop.messages import ModelResponse, ToolCall
from reactloop.result import Metrics, RunResult, RunState, ToolResult

if TYPE_CHECKING:
    from reactloop._nesting import Frame

__all__ = ["Nest", "remote_event"]

_STATES = {"TASK_STATE_COMPLETED": RunState.COMPLETED,
           "TASK_STATE_INPUT_REQUIRED": RunState.WAITING_FOR_USER,
           "TASK_STATE_CANCELED": RunState.CANCELLED}


def remote_event(data: Mapping[str, Any], tags: Mapping[str, Any]) -> Event:
    """The typed event a reactloop remote sent as ``data`` (its ``Event.to_dict()``)."""
    kind, run_id = data.get("type"), str(data.get("run_id") or "")
    iteration = int(data.get("iteration") or 0)
    try:
        if kind == "run_start":
            return RunStartEvent(run_id, str(data.get("prompt", "")), str(data.get("model", "")),
                                 int(data.get("max_iterations") or 0), **tags)
        if kind == "iteration_start":
            return IterationStartEvent(run_id, iteration, int(data.get("max_iterations") or 0),
                                       **tags)
        if kind == "tool_call":
            return ToolCallEvent(run_id, iteration, _call(data["call"]), **tags)
        if kind in ("tool_result", "tool_error"):
            cls = ToolResultEvent if kind == "tool_result" else ToolErrorEvent
            return cls(run_id, iteration, ToolResult.from_dict(data["result"]), **tags)
        if kind == "model_response":
            response = data["response"]
            return ModelResponseEvent(run_id, iteration, ModelResponse(
                text=response.get("text"),
                tool_calls=[_call(c) for c in response.get("tool_calls") or ()]), **tags)
    except (KeyError, TypeError, ValueError, AttributeError):
        pass  # not the shape this reactloop writes: passed on as it came
    return CustomEvent(run_id, "a2a", {"event": dict(data)}, **tags)


def _call(data: Mapping[str, Any]) -> ToolCall:
    return ToolCall(str(data["name"]), dict(data.get("arguments") or {}), data.get("id"))


class Nest:
    """Turns one call's stream responses into sub-run events on ``frame``."""

    def __init__(self, frame: Frame, agent: str, task: str, url: str) -> None:
        self.frame, self.agent, self.task, self.url = frame, agent, task, url
        self.tags = {"agent": agent, "parent_run_id": frame.ctx.run_id}
        self.run_id = ""
        self.remote_state = ""
        self.metrics: dict[str, Any] = {}

    def update(self, summary: Mapping[str, Any]) -> None:
        """One stream response (``_client._summary``) as events of the caller's stream."""
        event, end = summary.get("event"), summary.get("end")
        if isinstance(end, Mapping):  # the remote's ending: its state and usage
            self.remote_state = str(end.get("state") or "")
            self.metrics = dict(end)
        if isinstance(event, Mapping):
            self.run_id = self.run_id or str(event.get("run_id") or "")
            self.frame.emit(remote_event(event, self.tags))
            return
        if not self.run_id:  # another framework's remote: its task is the run
            self.run_id = str(summary.get("task_id") or "a2a")
            self.frame.emit(RunStartEvent(self.run_id, self.task, f"a2a {self.url}", 0,
                                          **self.tags))
        self.frame.emit(CustomEvent(self.run_id, "a2a", dict(summary), **self.tags))

    def finish(self, state: str, output: Any, text: str) -> RunResult[Any]:
        """End the sub-run: its ``run_end``, its usage counted into the caller's metrics."""
        from reactloop._multi import absorb

        run_state = _STATES.get(state, RunState.ERROR)
        if run_state is RunState.COMPLETED and self.remote_state == "max_iterations":
            run_state = RunState.MAX_ITERATIONS
        m = self.metrics
        found = m.get("usage")
        usage: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        metrics = Metrics(iterations=int(m.get("iterations") or 0),
                          tool_calls=int(m.get("tool_calls") or 0),
                          input_tokens=int(usage.get("input_tokens") or 0),
                          output_tokens=int(usage.get("output_tokens") or 0),
                          success=run_state is RunState.COMPLETED)
        result: RunResult[Any] = RunResult(
            output=output, state=run_state, steps=(), metrics=metrics, messages=(),
            run_id=self.run_id or "a2a", text=text, agent=self.agent,
            parent_run_id=self.frame.ctx.run_id)
        self.frame.emit(RunEndEvent(result.run_id, result, **self.tags))
        absorb(self.frame.ctx.metrics, result)
        return result
