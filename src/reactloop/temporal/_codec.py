"""The JSON shapes that cross Temporal's boundary, and back.

Activities, workflow inputs, updates and queries carry plain JSON data (Temporal's default
converter), never pickles: model requests and responses, tool calls and results, events with
their sequence numbers, and run results with the run's context (so ``RunResult.save()`` works
on a result that came from a workflow). Attachments cross as references only (kind, media
type, sha256, size, name); their bytes stay in the attachment store (``_blobs``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping
from typing import Any

from reactloop import errors
from reactloop.attachments import attachment_from_ref
from reactloop.events import Event, RunEndEvent, StepEvent
from reactloop.messages import (
    Message,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ToolCall,
    ToolSpec,
    Usage,
    message_from_dict,
)
from reactloop.result import RunResult, RunState, Step, ToolResult, jsonable
from reactloop.run_context import RunContext

__all__ = [
    "call_from_dict",
    "error_from_dict",
    "event_from_dict",
    "event_to_dict",
    "json_size",
    "request_from_dict",
    "request_to_dict",
    "response_from_dict",
    "response_to_dict",
    "result_from_dict",
    "result_to_dict",
    "run_result_from_dict",
    "run_result_to_dict",
]


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact JSON (about what Temporal's JSON payload holds)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
               .encode())


# -- model requests and responses --------------------------------------------------------------
def _spec(s: ToolSpec) -> dict[str, Any]:
    d: dict[str, Any] = {"name": s.name, "description": s.description, "parameters": dict(s.parameters)}
    if s.internal:
        d["internal"] = True
    return d


def _spec_from(d: Mapping[str, Any]) -> ToolSpec:
    return ToolSpec(str(d["name"]), str(d.get("description") or ""), d.get("parameters") or {},
                    bool(d.get("internal")))


def request_to_dict(r: ModelRequest) -> dict[str, Any]:
    s = r.settings
    return {"system": r.system, "messages": [m.to_dict() for m in r.messages],
            "tools": [_spec(t) for t in r.tools], "notes": list(r.notes),
            "settings": {"max_tokens": s.max_tokens, "temperature": s.temperature,
                         "tool_choice": s.tool_choice, "extra": dict(s.extra)},
            "declared_tools": [_spec(t) for t in r.declared_tools], "cache_key": r.cache_key}


def request_from_dict(d: Mapping[str, Any]) -> ModelRequest:
    s = d.get("settings") or {}
    settings = ModelSettings(s.get("max_tokens"), s.get("temperature"),
                             s.get("tool_choice") or "auto", s.get("extra") or {})
    return ModelRequest(str(d["system"]), tuple(message_from_dict(m) for m in d["messages"]),
                        tuple(_spec_from(t) for t in d.get("tools") or ()),
                        tuple(d.get("notes") or ()), settings,
                        tuple(_spec_from(t) for t in d.get("declared_tools") or ()),
                        cache_key=d.get("cache_key"))


def response_to_dict(r: ModelResponse) -> dict[str, Any]:
    return {"text": r.text, "tool_calls": [c.to_dict() for c in r.tool_calls],
            "usage": None if r.usage is None else [r.usage.input_tokens, r.usage.output_tokens],
            "finish_reason": r.finish_reason, "model_name": r.model_name,
            "provider_details": None if not r.provider_details else dict(r.provider_details)}


def response_from_dict(d: Mapping[str, Any]) -> ModelResponse:
    usage = d.get("usage")
    if isinstance(usage, Mapping):  # an event's shape
        usage = [usage.get("input_tokens", 0), usage.get("output_tokens", 0)]
    return ModelResponse(d.get("text"), tuple(call_from_dict(c) for c in d.get("tool_calls") or ()),
                         None if usage is None else Usage(int(usage[0]), int(usage[1])),
                         d.get("finish_reason"), d.get("model_name"),
                         d.get("provider_details") or None)


def call_from_dict(d: Mapping[str, Any]) -> ToolCall:
    # the arguments stay as the model sent them (even when not an object): the loop answers
    # garbage with an error result, as in-process
    return ToolCall(d["name"], d.get("arguments", {}), d.get("id"),
                    d.get("provider_details") or None)


# -- tool results ------------------------------------------------------------------------------
def result_to_dict(r: ToolResult) -> dict[str, Any]:
    """A tool result; its attachments as references (their bytes are in the attachment
    store: ``reactloop.temporal._blobs``)."""
    d = r.to_dict(full=True)
    d["traceback"] = r.traceback
    if r.attachments:
        d["attachments"] = [a.ref() for a in r.attachments]
    return d


def result_from_dict(d: Mapping[str, Any]) -> ToolResult:
    parts = tuple(attachment_from_ref(a) for a in d.get("attachments") or ())
    return dataclasses.replace(ToolResult.from_dict(d), traceback=d.get("traceback"),
                               attachments=parts)


def _step(s: Step) -> dict[str, Any]:
    d = s.to_dict()
    d["results"] = [r.to_dict(full=True) for r in s.results]
    return d


# -- run results -------------------------------------------------------------------------------
def _error(exc: BaseException | None) -> dict[str, Any] | None:
    if exc is None:
        return None
    d: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, errors.ModelHTTPError):
        d.update(status_code=exc.status_code, message=exc.message, retryable=exc.retryable)
    return d


@functools.cache
def _remote_type(name: str) -> type[errors.ReactloopError]:
    # an error raised in another process: same type name, so str() and to_dict() read alike
    return type(name, (errors.ReactloopError,), {"__module__": "reactloop.temporal"})


def error_from_dict(d: Mapping[str, Any] | None) -> BaseException | None:
    """The exception an encoded error stands for (reactloop's own types come back as such)."""
    if d is None:
        return None
    name, message = str(d.get("type") or "Exception"), str(d.get("message") or "")
    if name == "ModelHTTPError":
        return errors.ModelHTTPError(int(d.get("status_code") or 0), message,
                                     retryable=d.get("retryable"))
    known = getattr(errors, name, None)
    if isinstance(known, type) and issubclass(known, errors.ReactloopError):
        return known(message)
    return _remote_type(name)(message)


def run_result_to_dict(result: RunResult) -> dict[str, Any]:
    """Everything of a result, with its context (history, steps, extension state)."""
    ctx = result.context
    context = ctx.to_dict() if isinstance(ctx, RunContext) else None
    if context is not None:
        context["steps"] = [_step(s) for s in result.steps]
    return {"output": result.output, "state": result.state.value, "error": _error(result.error),
            "plan": jsonable(result.plan), "run_id": result.run_id, "context": context,
            "agent": result.agent}


def run_result_from_dict(d: Mapping[str, Any]) -> RunResult:
    ctx = RunContext.from_dict(d["context"])
    plan = d.get("plan")
    if isinstance(plan, Mapping) and "steps" in plan:
        from reactloop.planning import Plan

        plan = Plan.from_dict(plan)
    if isinstance(plan, Mapping) and isinstance(ctx.state.get("plan"), Mapping):
        ctx.state["plan"] = plan
    state = RunState(d["state"])
    waiting = tuple(ctx.pending_approvals) if state is RunState.WAITING_FOR_APPROVAL else ()
    return RunResult(str(d["output"]), state, list(ctx.steps), ctx.metrics,
                     list(ctx.messages), error_from_dict(d.get("error")), plan,
                     str(d.get("run_id") or ctx.run_id), ctx, pending_approvals=waiting,
                     agent=str(d.get("agent") or ""))


# -- events ------------------------------------------------------------------------------------
def event_to_dict(event: Event) -> dict[str, Any] | None:
    """An event as data; ``None`` for the internal ``step`` event."""
    if isinstance(event, StepEvent):
        return None
    if isinstance(event, RunEndEvent):
        d: dict[str, Any] = {"type": "run_end", "run_id": event.run_id,
                             "result": run_result_to_dict(event.result)}
        if event.parent_run_id is not None:  # a sub-run's end (an agent called as a tool)
            d.update(agent=event.agent, parent_run_id=event.parent_run_id)
        return d
    return event.to_dict()


@functools.cache
def _event_types() -> dict[str, type[Event]]:
    from reactloop import events

    out: dict[str, type[Event]] = {}
    for name in events.__all__:
        cls = getattr(events, name)
        if isinstance(cls, type) and issubclass(cls, Event) and cls is not Event:
            out[cls.type] = cls
    return out


@functools.cache
def _other_type(name: str) -> type[Event]:
    # an event type this process does not know (a newer reactloop, a user's extension)
    cls = type(f"Remote_{name}", (Event,), {"__annotations__": {"data": "Any"},
                                           "type": name, "__module__": __name__})
    return dataclasses.dataclass(frozen=True)(cls)


def _field(name: str, value: Any) -> Any:
    if name == "response" and isinstance(value, Mapping):
        return response_from_dict(value)
    if name == "call" and isinstance(value, Mapping):
        return call_from_dict(value)
    if name == "result" and isinstance(value, Mapping):
        if "context" in value:
            return run_result_from_dict(value)
        return result_from_dict(value)
    if name == "plan" and isinstance(value, Mapping) and "steps" in value:
        from reactloop.planning import Plan

        return Plan.from_dict(value)
    return value


def event_from_dict(d: Mapping[str, Any]) -> Event:
    """Inverse of :func:`event_to_dict` (keys other than the event's fields are ignored)."""
    cls = _event_types().get(str(d.get("type")))
    if cls is None:
        return _other_type(str(d.get("type")))(str(d.get("run_id", "")), data=dict(d))  # type: ignore[call-arg]
    kwargs = {f.name: _field(f.name, d[f.name]) for f in dataclasses.fields(cls) if f.name in d}
    return cls(**kwargs)


def message_list(data: Any) -> list[Message]:
    return [message_from_dict(m) for m in data or ()]
