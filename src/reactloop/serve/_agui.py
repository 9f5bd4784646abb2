"""AG-UI at the edge: reactloop's events translated into the protocol's own event types.

The reactloop event stream stays the source; this module only translates it, with the
``ag-ui-protocol`` package's models (so the wire format is the protocol's) and its encoder.

=====================================  ==========================================================
reactloop event                        AG-UI events
=====================================  ==========================================================
``run_start``                          ``RUN_STARTED``
``iteration_start``                    ``STEP_FINISHED`` (previous) + ``STEP_STARTED``
``text_delta``                         ``TEXT_MESSAGE_START`` (first) + ``TEXT_MESSAGE_CONTENT``
``model_response``                     ``TEXT_MESSAGE_END`` (or START/CONTENT/END if unstreamed)
``tool_call``                          ``TOOL_CALL_START`` + ``TOOL_CALL_ARGS`` + ``TOOL_CALL_END``
``tool_result`` / ``tool_error``       ``TOOL_CALL_RESULT``
``plan_update``                        ``STATE_SNAPSHOT`` (``{"plan": ...}``)
``custom`` (emitted by a tool)         ``CUSTOM`` (same name and value)
``retry``, ``compaction``,             ``CUSTOM`` named ``reactloop.<type>``
``no_tool_call``, ``partial_output``,
``approval_requested``,
``approval_decided``
``run_end``                            ``RUN_FINISHED`` (outcome ``success``/``cancelled``, or
                                       ``interrupt`` when calls wait for approval) or
                                       ``RUN_ERROR``
an MCP server's question (``custom``   ``CUSTOM`` (same name and value), then ``RUN_FINISHED``
``mcp_elicitation_request``)           with an ``interrupt`` outcome: the run itself waits
any event of a sub-run (an agent       ``CUSTOM`` named ``reactloop.sub_run``, the event's JSON
called as a tool: ``parent_run_id``)   (with ``agent``, ``run_id``, ``parent_run_id``) as value
=====================================  ==========================================================

Approvals: a run that ends ``WAITING_FOR_APPROVAL`` finishes with an ``interrupt`` outcome, one
:class:`~ag_ui.core.Interrupt` per waiting call (``reason`` ``"tool_approval"``, its
``toolCallId``, the tool name, arguments and arguments hash in ``metadata``, and a
``responseSchema`` for the answer: ``{"approved": bool, "reason"?: str, "arguments"?: {...}}``).
The interrupt id is ``<call id>#<arguments hash>``, so an answer is bound to the call and to
the arguments the person saw. The next run on the thread carries ``resume`` entries
(:func:`decisions_of`): ``resolved`` with that payload, or ``cancelled`` (a denial).

MCP elicitation: a server asking the user while its tool runs does not end the reactloop run;
the AG-UI run ends there with an ``interrupt`` outcome, one :class:`~ag_ui.core.Interrupt` per
question waiting (``reason`` ``"mcp_elicitation"``, id ``mcp-elicitation:<question id>``, the
``message``, the server's requested schema as ``responseSchema``, and ``server``, ``mode``,
``url`` and ``tool`` in ``metadata``). The next run on the thread carries ``resume`` entries
(:func:`answers_of`): ``resolved`` with the form's values as payload (accept), or with
``{"action": "accept"|"decline"|"cancel", "content"?: {...}}``; ``cancelled`` (cancel). That
run starts with ``RUN_STARTED`` and goes on with the same reactloop run's events.

To translate a new event type, subclass :class:`AGUITranslator` and add ``on_<type>``;
to end runs differently, override :meth:`outcome`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    Interrupt,
    ResumeEntry,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TokenUsage,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from reactloop.approvals import Decision
from reactloop.attachments import Attachment, Prompt, check_count
from reactloop.errors import ApprovalError, UserError
from reactloop.serve._parts import from_agui_part
from reactloop.serve._security import event_data

if TYPE_CHECKING:
    from reactloop.approvals import PendingApproval
    from reactloop.events import Event
    from reactloop.result import RunResult

__all__ = ["ELICITATION_PREFIX", "AGUIInputError", "AGUITranslator", "answers_of",
           "decisions_of", "elicitation_interrupt", "interrupt_of", "prompt_of"]

Outcome = RunFinishedSuccessOutcome | RunFinishedCancelledOutcome | RunFinishedInterruptOutcome
_AS_CUSTOM = ("retry", "compaction", "no_tool_call", "partial_output", "approval_requested",
              "approval_decided")
APPROVAL_REASON = "tool_approval"
"""The ``reason`` of the interrupts that ask for a tool call's approval."""
ELICITATION_REASON = "mcp_elicitation"
"""The ``reason`` of the interrupts that put an MCP server's question to the user."""
ELICITATION_PREFIX = "mcp-elicitation:"
"""How the ids of those interrupts start (the question's id follows)."""
_ACTIONS = ("accept", "decline", "cancel")


class AGUIInputError(ValueError):
    """A ``RunAgentInput`` reactloop cannot run; the message says what to send instead."""


def prompt_of(run_input: RunAgentInput) -> Prompt:
    """The new user message of ``run_input``: its last message, which must be the user's —
    text, or text with ``image`` and ``document`` parts (a ``data`` or ``url`` source).

    The thread's history is the reactloop session (``threadId`` is its id), so earlier
    messages in the input are not read again."""
    if not run_input.messages:
        raise AGUIInputError("the input has no messages: send the user's message last")
    last = run_input.messages[-1]
    if last.role != "user":
        raise AGUIInputError(
            f"the last message is a {last.role!r} message; reactloop runs the thread's new "
            "user message (its tools run on the server, not in the client)")
    content: Any = last.content
    parts: list[Attachment] = []
    if isinstance(content, str):
        text = content
    else:
        kinds = {getattr(part, "type", "?") for part in content}
        if kinds - {"text", "image", "document"}:
            raise AGUIInputError(f"text, image and document content are supported, got "
                                 f"{sorted(kinds)}")
        text = "\n".join(getattr(part, "text", "") for part in content if part.type == "text")
        try:
            parts = [from_agui_part(part, i) for i, part in enumerate(content)
                     if part.type != "text"]
            check_count(parts, "the user's message")
        except UserError as exc:
            raise AGUIInputError(str(exc)) from None
    if not text.strip():
        raise AGUIInputError("the user's message is empty")
    return [text, *parts] if parts else text


def interrupt_of(pending: PendingApproval,
                 parameters: Mapping[str, Any] | None = None) -> Interrupt:
    """The interrupt asking for a decision on ``pending``; ``parameters`` (the tool's JSON
    schema, when known) describes edited arguments in the response schema."""
    args = json.dumps(dict(pending.arguments), ensure_ascii=False, default=str)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "approved": {"type": "boolean", "description": "run the call (true) or not"},
            "reason": {"type": "string", "description": "why not (the model reads it)"},
            "arguments": {**(parameters or {"type": "object"}),
                          "description": "approve with these arguments instead"},
        },
        "required": ["approved"],
    }
    return Interrupt(
        id=f"{pending.call_id}#{pending.arguments_hash}", reason=APPROVAL_REASON,
        message=f"Allow {pending.tool_name} with {args}?", tool_call_id=pending.call_id,
        response_schema=schema,
        metadata={"tool_name": pending.tool_name, "arguments": dict(pending.arguments),
                  "arguments_hash": pending.arguments_hash})


def decisions_of(entries: list[ResumeEntry]) -> list[Decision]:
    """The decisions that ``resume`` entries carry (see the module docstring).

    Raises:
        AGUIInputError: an entry does not answer one of our interrupts, or its payload is not
            ``{"approved": bool, "reason"?: str, "arguments"?: {...}}`` (or a bare bool).
    """
    out: list[Decision] = []
    for entry in entries:
        call_id, _, digest = entry.interrupt_id.rpartition("#")
        if not call_id or not digest:
            raise AGUIInputError(f"resume entry {entry.interrupt_id!r} does not answer an "
                                 "interrupt of this server (ids look like '<call id>#<hash>')")
        payload: Any = entry.payload
        if entry.status == "cancelled":
            reason = payload.get("reason") if isinstance(payload, Mapping) else None
            payload = {"approved": False, "reason": reason or "the user cancelled the approval"}
        elif isinstance(payload, bool):
            payload = {"approved": payload}
        if not isinstance(payload, Mapping) or not isinstance(payload.get("approved"), bool):
            raise AGUIInputError(f"the payload answering {entry.interrupt_id!r} must be "
                                 '{"approved": true|false, "reason"?: "...", "arguments"?: {...}}')
        sent = payload.get("arguments_hash", digest)
        if sent != digest:
            raise AGUIInputError(f"the payload answering {entry.interrupt_id!r} names other "
                                 "arguments (arguments_hash) than the interrupt")
        try:
            out.append(Decision.from_dict({**payload, "call_id": call_id,
                                           "arguments_hash": digest}))
        except ApprovalError as exc:
            raise AGUIInputError(str(exc)) from None
    return out


def elicitation_interrupt(question: Mapping[str, Any]) -> Interrupt:
    """The interrupt putting an MCP server's question (``Question.to_dict()``) to the user."""
    schema = question.get("schema") or {"type": "object", "properties": {}}
    return Interrupt(
        id=ELICITATION_PREFIX + question["id"], reason=ELICITATION_REASON,
        message=question["message"], response_schema=dict(schema),
        metadata={k: question.get(k) for k in ("server", "mode", "url", "tool")})


def answers_of(entries: list[ResumeEntry]) -> list[tuple[str, str, Any]]:
    """``(question id, action, content)`` of ``resume`` entries answering MCP servers'
    questions (see the module docstring); checking the content against the form is the
    caller's.

    Raises:
        AGUIInputError: an entry's payload is neither the form's values nor
            ``{"action": ..., "content"?: {...}}``.
    """
    out: list[tuple[str, str, Any]] = []
    for entry in entries:
        question = entry.interrupt_id.removeprefix(ELICITATION_PREFIX)
        payload: Any = entry.payload
        if entry.status == "cancelled":
            out.append((question, "cancel", None))
        elif isinstance(payload, Mapping) and payload.get("action") in _ACTIONS \
                and set(payload) <= {"action", "content"}:
            out.append((question, str(payload["action"]), payload.get("content")))
        elif payload is None or isinstance(payload, Mapping):
            out.append((question, "accept", payload))
        else:
            raise AGUIInputError(
                f"the payload answering {entry.interrupt_id!r} must be the form's values "
                '(an object) or {"action": "accept"|"decline"|"cancel", "content"?: {...}}')
    return out


class AGUITranslator:
    """Translates the events of one run into AG-UI events (see the module docstring).

    ``tool_schemas`` (tool name → JSON schema of its parameters) describes edited arguments in
    the interrupts of calls waiting for approval."""

    def __init__(self, thread_id: str, run_id: str,
                 tool_schemas: Mapping[str, Mapping[str, Any]] | None = None, *,
                 details: bool = True) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.details = details
        """Whether tools' tracebacks reach the client (see ``serve`` ``details``)."""
        self.tool_schemas = tool_schemas or {}
        self._parent = _new_id()  # the assistant message of the current iteration
        self._open_text: str | None = None
        self._step: str | None = None
        self._last_text: list[str] = []
        """The pieces of the text said last (joined once, at the end of the run: appending to
        one string per delta would be quadratic in the answer's length)."""

    def translate(self, event: Event) -> list[BaseEvent]:
        """The AG-UI events for one reactloop event (often none or several)."""
        if event.parent_run_id is not None:  # a sub-agent's run: nested, as it is
            return [CustomEvent(name="reactloop.sub_run",
                                value=event_data(event, details=self.details))]
        handler: Callable[[Any], list[BaseEvent]] | None = getattr(self, f"on_{event.type}",
                                                                    None)
        if handler is not None:
            return handler(event)
        if event.type in _AS_CUSTOM:
            return [CustomEvent(name=f"reactloop.{event.type}",
                                value=event_data(event, details=self.details))]
        return []

    def started(self) -> list[BaseEvent]:
        """How a run that goes on after answers to its questions starts (the reactloop run
        started in an earlier AG-UI run)."""
        return [RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id)]

    def paused(self, questions: Sequence[Mapping[str, Any]]) -> list[BaseEvent]:
        """How a run waiting for answers to MCP servers' ``questions`` ends this AG-UI run."""
        outcome = RunFinishedInterruptOutcome(
            interrupts=[elicitation_interrupt(q) for q in questions])
        return [*self._close(), RunFinishedEvent(
            thread_id=self.thread_id, run_id=self.run_id, outcome=outcome,
            result={"state": "waiting_for_user", "pending_elicitations": list(questions)})]

    def error(self, message: str) -> list[BaseEvent]:
        """How a failure outside the loop ends the stream."""
        return [*self._close(), RunErrorEvent(message=message, code="error")]

    # -- one method per reactloop event type ---------------------------------------------------
    def on_run_start(self, event: Any) -> list[BaseEvent]:
        return [RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id)]

    def on_iteration_start(self, event: Any) -> list[BaseEvent]:
        out = self._close()
        self._parent = _new_id()
        self._step = f"iteration {event.iteration}"
        out.append(StepStartedEvent(step_name=self._step))
        return out

    def on_text_delta(self, event: Any) -> list[BaseEvent]:
        if not event.text:
            return []
        out: list[BaseEvent] = []
        if self._open_text is None:
            self._open_text = self._parent
            self._last_text = []
            out.append(TextMessageStartEvent(message_id=self._parent, role="assistant"))
        self._last_text.append(event.text)
        out.append(TextMessageContentEvent(message_id=self._parent, delta=event.text))
        return out

    def on_model_response(self, event: Any) -> list[BaseEvent]:
        if self._open_text is not None:
            return self._end_text()
        text = event.response.text or ""
        return self._say(text, self._parent) if text.strip() else []

    def on_tool_call(self, event: Any) -> list[BaseEvent]:
        call = event.call
        call_id = call.id or _new_id()
        return [ToolCallStartEvent(tool_call_id=call_id, tool_call_name=call.name,
                                   parent_message_id=self._parent),
                ToolCallArgsEvent(tool_call_id=call_id,
                                  delta=json.dumps(dict(call.arguments), ensure_ascii=False,
                                                   default=str)),
                ToolCallEndEvent(tool_call_id=call_id)]

    def on_tool_result(self, event: Any) -> list[BaseEvent]:
        r = event.result
        content = r.content or r.error or json.dumps(event.to_dict()["result"]["result"])
        return [ToolCallResultEvent(message_id=_new_id(), tool_call_id=r.call_id,
                                    content=content, role="tool")]

    on_tool_error = on_tool_result

    def on_plan_update(self, event: Any) -> list[BaseEvent]:
        return [StateSnapshotEvent(snapshot={"plan": event.to_dict()["plan"]})]

    def on_custom(self, event: Any) -> list[BaseEvent]:
        return [CustomEvent(name=event.name, value=event.to_dict()["data"])]

    def on_run_end(self, event: Any) -> list[BaseEvent]:
        result: RunResult = event.result
        data = result.to_dict()
        out = self._close()
        output = data["output"] if isinstance(data["output"], str) else json.dumps(
            data["output"], ensure_ascii=False)
        waiting = bool(result.pending_approvals)  # the interrupts say what the run waits for
        if output.strip() and output.strip() != "".join(self._last_text).strip() and not waiting:
            out += self._say(output, _new_id())  # e.g. a question asked with a tool
        if data["state"] == "error":
            return [*out, RunErrorEvent(message=data["error"] or output, code="error")]
        m = result.metrics
        usage = TokenUsage(input_tokens=m.input_tokens, output_tokens=m.output_tokens,
                           total_tokens=m.input_tokens + m.output_tokens)
        return [*out, RunFinishedEvent(
            thread_id=self.thread_id, run_id=self.run_id, outcome=self.outcome(result),
            result={"output": data["output"], "state": data["state"], "plan": data["plan"],
                    "pending_approvals": data["pending_approvals"]},
            usage=[usage])]

    def outcome(self, result: RunResult) -> Outcome:
        """How ``RUN_FINISHED`` describes the end of the run (approvals: an interrupt)."""
        if result.state.value == "cancelled":
            return RunFinishedCancelledOutcome()
        if result.pending_approvals:
            return RunFinishedInterruptOutcome(interrupts=[
                interrupt_of(p, self.tool_schemas.get(p.tool_name))
                for p in result.pending_approvals])
        return RunFinishedSuccessOutcome()

    # -- helpers ---------------------------------------------------------------------------------
    def _say(self, text: str, message_id: str) -> list[BaseEvent]:
        self._last_text = [text]
        return [TextMessageStartEvent(message_id=message_id, role="assistant"),
                TextMessageContentEvent(message_id=message_id, delta=text),
                TextMessageEndEvent(message_id=message_id)]

    def _end_text(self) -> list[BaseEvent]:
        if self._open_text is None:
            return []
        message_id, self._open_text = self._open_text, None
        return [TextMessageEndEvent(message_id=message_id)]

    def _close(self) -> list[BaseEvent]:
        out = self._end_text()
        if self._step is not None:
            out.append(StepFinishedEvent(step_name=self._step))
            self._step = None
        return out


def _new_id() -> str:
    return uuid.uuid4().hex
