"""The workflow: reactloop's loop, run by Temporal, turn after turn.

One workflow is one conversation. It runs a turn (``reactloop._loop.run_events``, the same loop
as in-process, over a :class:`~reactloop.temporal._workflow_runtime.WorkflowRuntime`), then either
ends (a plain run) or waits — durably, for as long as it takes — for its next input: always
after a turn that ended in one of the :data:`WAITS` states (``WAITING_FOR_USER``,
``WAITING_FOR_APPROVAL``), and after every turn of a session.
Between turns it continues as new when its history grows.

Messages in and out (names documented in ``reactloop.temporal``):

- update ``reactloop.poll({"after": seq | None})``: events after ``seq`` (``None``: from the
  start of the latest turn), waiting until there are some, or the workflow needs input or ends.
- query ``reactloop.peek`` (same, without waiting: for closed workflows).
- update ``reactloop.send(text)``: the next user message (text, or ``{"text", "attachments"}``
  with attachment references); returns its turn number.
- update ``reactloop.decide([decision, ...])``: decisions (``Decision.to_dict()``) on the calls
  that wait for approval; checked against the history first (a mismatch is refused and
  nothing runs); the turn they start runs the approved calls; returns its number.
- update ``reactloop.answer({"id", "action", "content"})``: the user's answer to a question an
  MCP server asked mid-turn (an input-required result, waiting durably in the turn; see
  ``reactloop.temporal._elicitation``); refused when no such question waits.
- update ``reactloop.wait({"turn": n})``: waits until turn ``n`` ended; returns its result.
- query ``reactloop.status``; signal ``reactloop.close`` (a session ends after its turn).

Events carry sequence numbers (1, 2, …, continued across continue-as-new), so a caller that
re-attaches with the last number it saw neither loses nor repeats events. Each turn's events
are kept while the workflow runs; continue-as-new carries the latest turn's.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Mapping
from contextlib import aclosing
from typing import Any, ClassVar

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from reactloop._attach import check_accepts, resolve_later
from reactloop._loop import run_events
from reactloop.approvals import apply_decisions, pending_approvals, waiting_run_id
from reactloop.approvals._gate import turn_iterations
from reactloop.attachments import attachment_from_ref
from reactloop.errors import ApprovalError, UserError
from reactloop.events import RunEndEvent, WarningEvent
from reactloop.messages import Message
from reactloop.result import RunResult, RunState
from reactloop.run_context import RunContext
from reactloop.temporal._codec import event_to_dict, json_size, message_list, run_result_to_dict
from reactloop.temporal._config import Durable
from reactloop.temporal._elicitation import ANSWER, PendingInputs
from reactloop.temporal._workflow_runtime import WorkflowRuntime

__all__ = ["workflow_class"]

POLL, PEEK, SEND, WAIT, STATUS, CLOSE = ("reactloop.poll", "reactloop.peek", "reactloop.send",
                                         "reactloop.wait", "reactloop.status", "reactloop.close")
DECIDE = "reactloop.decide"
_BATCH_BYTES = 512 * 1024
"""The most event data one poll returns (more follows with the next poll)."""
WAITS = frozenset({RunState.WAITING_FOR_USER, RunState.WAITING_FOR_APPROVAL})
"""States in which a turn ends waiting for an input, however long it takes: the next turn starts
from that input. One wait, for any kind of input: an ``{"text": ...}`` input (``send``) is the
user's next message; a ``{"decisions": ...}`` input (``decide``, which records them in the
history first) continues the waiting run. Another kind needs its own update that queues it with
:meth:`_Conversation.deliver` and its own branch in :meth:`_Conversation.begin`."""


class _Conversation:
    """The workflow's logic; :func:`workflow_class` makes one decorated class per agent."""

    agent: ClassVar[Durable]

    def __init__(self, arg: Mapping[str, Any]) -> None:
        self.log: list[dict[str, Any]] = []
        self.base = 1
        """Sequence number of ``log[0]``."""
        self.turn_start = 1
        self.inbox: list[dict[str, Any]] = []
        """Inputs not yet taken by a turn (``{"text": ...}``: a user message)."""
        self.turn = 0
        """Turns asked for (the first prompt and every message sent)."""
        self.done = 0
        """Turns ended: turn ``n`` has its result once ``done >= n``."""
        self.busy = self.closing = self.closed = self.moving = False
        self.result: dict[str, Any] | None = None
        self.history: list[Message] = message_list(arg.get("messages"))
        """The conversation so far (the latest turn's messages), with the decisions that
        ``decide`` recorded on calls waiting for approval."""
        self.inputs = PendingInputs(self._publish)
        """Questions of MCP servers that wait for the user, mid-turn (``reactloop.answer``)."""
        self._restore(arg)  # before any update or query is handled

    # -- the workflow ------------------------------------------------------------------------
    async def main(self, arg: Mapping[str, Any]) -> dict[str, Any]:
        session = bool(arg.get("session"))
        state = dict(arg.get("state") or {})
        ran = False
        while True:
            await workflow.wait_condition(lambda: bool(self.inbox) or self.closing)
            if not self.inbox:
                break
            if ran and self._history_full():  # (a new run always takes a turn first)
                await self._continue_as_new(session, self.history, state)
            try:
                result = await self._turn(self.inbox.pop(0), self.history, state)
            except asyncio.CancelledError:  # the workflow was cancelled: the turn ended
                break                         # CANCELLED and recorded that; so do we
            self.history, state, ran = list(result.messages), dict(result.context.state), True
            if not (session or result.state in WAITS or self.inbox):
                break
        self.closed = True
        await workflow.wait_condition(workflow.all_handlers_finished)
        if self.result is None:
            raise ApplicationError("the conversation ended before its first turn",
                                   non_retryable=True)
        return self.result

    async def _turn(self, given: Mapping[str, Any], messages: list[Message],
                    state: dict[str, Any]) -> RunResult:
        spec, rt = self.agent.agent.spec, WorkflowRuntime(self.agent, self.inputs)
        self.busy, self.turn_start = True, self._next()
        result: RunResult | None = None
        later = resolve_later.set(True)  # the model activity loads attachments' bytes
        try:
            ctx = await self.begin(given, rt, messages, state)
            async with aclosing(run_events(spec, ctx, rt, stream=False)) as events:
                async for event in events:
                    if isinstance(event, RunEndEvent) and event.parent_run_id is None:
                        result = event.result
                        self.result = await self._fit_result(run_result_to_dict(result))
                        self.done += 1
                    self._publish(event_to_dict(event))
        finally:
            self.busy = False
            resolve_later.reset(later)
        assert result is not None
        return result

    async def begin(self, given: Mapping[str, Any], rt: WorkflowRuntime,
                    messages: list[Message], state: dict[str, Any]) -> RunContext:
        """The context a turn starts from, given its input (see :data:`WAITS`)."""
        spec = self.agent.agent.spec
        if "decisions" in given:  # recorded in ``messages`` by ``decide``: the run goes on
            return self._resumed(rt, messages, state)
        prompt = str(given["text"])
        ctx = RunContext(rt.new_id(), prompt, messages, tools=spec.tools.copy(), deps=spec.deps,
                         state=state)
        # attachments as references: their bytes are in the attachment store (``_blobs``)
        parts = tuple(attachment_from_ref(a) for a in given.get("attachments") or ())
        ctx.append(Message("user", prompt, attachments=parts))
        await self._retrieve(ctx)
        return ctx

    def _resumed(self, rt: WorkflowRuntime, messages: list[Message],
                 state: dict[str, Any]) -> RunContext:
        """The run that waited for approval, going on from its history (as
        ``agent.resume(history)`` does): the loop runs the decided calls — approved ones as
        activities, once; denied ones answered with the denial — then continues."""
        spec = self.agent.agent.spec
        prompt = next((m.content for m in reversed(messages)
                       if m.role == "user" and m.metadata.get("kind") is None), "")
        ctx = RunContext(waiting_run_id(messages) or rt.new_id(), prompt, messages,
                         tools=spec.tools.copy(), deps=spec.deps, state=state)
        ctx.iteration = max(1, min(turn_iterations(messages), spec.max_iterations - 1))
        return ctx

    async def _retrieve(self, ctx: RunContext) -> None:
        """Extensions whose start does I/O (``start_does_io``: retrieved context) start in an
        activity, which a workflow must leave I/O to; the loop then finds their state."""
        if not any(ext.start_does_io for ext in self.agent.agent.spec.extensions):
            return
        out = await workflow.execute_activity(self.agent.names.retrieve, ctx.prompt,
                                              result_type=dict, **self.agent.list_options())
        ctx.state.update(out.get("state") or {})
        for message in out.get("warnings") or ():
            ctx.emit(WarningEvent(ctx.run_id, "context_provider", str(message)))

    # -- events ------------------------------------------------------------------------------
    def _next(self) -> int:
        return self.base + len(self.log)

    def _publish(self, data: dict[str, Any] | None) -> None:
        if data is None:
            return
        data["seq"] = self._next()
        limit = self.agent.max_payload_bytes // 2
        if json_size(data) > limit:  # a poll could not carry it: say so instead
            data = {"type": data["type"], "run_id": data.get("run_id", ""), "seq": data["seq"],
                    "omitted": f"this {data['type']} event is over {limit:,} bytes"}
        self.log.append(data)

    def _idle(self) -> bool:
        return not self.busy and not self.inbox

    def _batch(self, after: int | None) -> dict[str, Any]:
        first = self.turn_start if after is None else max(after + 1, self.base)
        out: list[dict[str, Any]] = []
        size = 0
        for data in self.log[first - self.base:]:
            size += json_size(data)
            if out and size > _BATCH_BYTES:
                break
            out.append(data)
        end = self._next()
        last = out[-1]["seq"] if out else first - 1
        return {"events": out, "last": last, "more": last < end - 1,
                "truncated": after is not None and after + 1 < self.base,
                "idle": self._idle(), "closed": self.closed, "moved": self.moving,
                "turn": self.turn, "done": self.done}

    async def poll(self, arg: Mapping[str, Any]) -> dict[str, Any]:
        after = arg.get("after")
        start = self.turn_start - 1 if after is None else int(after)
        await workflow.wait_condition(
            lambda: self._next() - 1 > start or self._idle() or self.closed or self.moving)
        return self._batch(after)

    def peek(self, arg: Mapping[str, Any]) -> dict[str, Any]:
        return self._batch(arg.get("after"))

    # -- messages ----------------------------------------------------------------------------
    def send(self, text: str | Mapping[str, Any]) -> dict[str, Any]:
        if isinstance(text, Mapping):  # {"text", "attachments": [references]}
            return self.deliver({"text": str(text.get("text") or ""),
                                 "attachments": list(text.get("attachments") or ())})
        return self.deliver({"text": text})

    def deliver(self, given: dict[str, Any]) -> dict[str, Any]:
        """Queue an input for the next turn; returns that turn's number."""
        self.inbox.append(given)
        self.turn += 1
        return {"turn": self.turn}

    def check_send(self, text: str | Mapping[str, Any]) -> None:
        if isinstance(text, Mapping):
            given = text.get("text")
            if not isinstance(given, str) or not isinstance(text.get("attachments"), list) \
                    or not (given or text["attachments"]):
                raise ValueError("send a non-empty text, or {'text': ..., 'attachments': "
                                 "[references]}")
            _check_pictures(self.agent.agent.spec.model, text["attachments"])
        elif not isinstance(text, str) or not text:
            raise ValueError("send a non-empty text")
        if self.closed or self.closing:
            raise ValueError("this conversation has ended; start a new one")
        if waiting := pending_approvals(self.history):
            raise ValueError(f"{len(waiting)} tool call(s) wait for approval "
                             f"({', '.join(p.tool_name for p in waiting)}): decide them first "
                             "(RunHandle.decide), then send the next message")

    def decide(self, decisions: list[dict[str, Any]]) -> dict[str, Any]:
        """Record ``decisions`` in the history and queue the turn that acts on them (the
        one already queued, when decisions came in before it started)."""
        try:  # checked again: two updates may pass their validators before either runs
            self.history = apply_decisions(self.history, decisions)
        except ApprovalError as exc:
            raise ApplicationError(str(exc), type="ApprovalError", non_retryable=True) from None
        if self.inbox and "decisions" in self.inbox[-1]:
            self.inbox[-1]["decisions"].extend(decisions)
            return {"turn": self.turn}
        return self.deliver({"decisions": list(decisions)})

    def check_decide(self, decisions: list[dict[str, Any]]) -> None:
        """Refuse decisions that do not apply — before anything is recorded or runs."""
        if not isinstance(decisions, list) or not decisions:
            raise ValueError("decide with a non-empty list of decisions")
        if self.closed or self.closing:
            raise ValueError("this conversation has ended; start a new one")
        if self.busy:
            raise ValueError("a turn is running; decide once it waits for approval")
        try:
            apply_decisions(self.history, decisions)
        except ApprovalError as exc:
            raise ValueError(str(exc)) from None

    async def wait(self, arg: Mapping[str, Any]) -> dict[str, Any]:
        turn = int(arg.get("turn") or self.turn)
        await workflow.wait_condition(lambda: self.done >= turn or self.closed or self.moving)
        if self.done < turn:
            return {"turn": turn, "done": False, "moved": self.moving, "closed": self.closed}
        return {"turn": self.done, "done": True, "result": self.result}

    def status(self) -> dict[str, Any]:
        return {"turn": self.turn, "done": self.done, "busy": self.busy, "idle": self._idle(),
                "closed": self.closed, "next": self._next(), "turn_start": self.turn_start,
                "waiting_for_user": bool(self.result and self.result["state"]
                                         == RunState.WAITING_FOR_USER.value),
                "waiting_for_approval": bool(pending_approvals(self.history)),
                "waiting_for_input": self.inputs.listing(),
                "waiting": bool(self._idle() and self.result
                                and self.result["state"] in {s.value for s in WAITS})}

    def close(self) -> None:
        self.closing = True

    # -- continue-as-new ---------------------------------------------------------------------
    def _history_full(self) -> bool:
        info = workflow.info()
        return (info.is_continue_as_new_suggested()
                or info.get_current_history_length() > self.agent.history_limit)

    async def _continue_as_new(self, session: bool, messages: list[Message],
                               state: dict[str, Any]) -> None:
        self.moving = True  # waiting pollers return; callers follow to the new run
        await workflow.wait_condition(workflow.all_handlers_finished)
        keep = self.log[self.turn_start - self.base:]
        arg = {"session": session, "messages": [m.to_dict() for m in messages],
               "state": state, "inbox": self.inbox, "turn": self.turn, "done": self.done,
               "base": self.turn_start, "log": keep, "result": self.result}
        if json_size(arg) > self.agent.max_payload_bytes:
            arg["log"], arg["base"] = [], self._next()
        workflow.continue_as_new(arg)

    def _restore(self, arg: Mapping[str, Any]) -> None:
        if arg.get("prompt") is not None:  # a first start
            self.inbox.append({"text": str(arg["prompt"]),
                               "attachments": list(arg.get("attachments") or ())})
            self.turn = 1
            return
        self.inbox = list(arg.get("inbox") or ())
        self.turn, self.done = int(arg.get("turn") or 0), int(arg.get("done") or 0)
        self.base = self.turn_start = int(arg.get("base") or 1)
        self.log = list(arg.get("log") or ())
        self.result = arg.get("result")

    async def _fit_result(self, data: dict[str, Any]) -> dict[str, Any]:
        """``data``, unless it is over the payload limit: then the workflow fails, saying why
        (once its waiting callers were answered)."""
        size, limit = json_size(data), self.agent.max_payload_bytes
        if size > limit:
            why = f" (it ended {data['state']}: {data['output']})" if data["error"] else ""
            self.closed = True
            await workflow.wait_condition(workflow.all_handlers_finished)
            raise ApplicationError(
                f"the run's result is {size:,} bytes, over Temporal's payload limit of "
                f"{limit:,} bytes{why}; keep the conversation shorter (max_messages, "
                "compaction)", non_retryable=True)
        return data


def _check_pictures(model: object, refs: list[Any]) -> None:
    """Refuse pictures for a model that cannot see, as ``agent.run`` does (documents need
    their bytes to be checked: the model activity converts them)."""
    try:
        parts = [attachment_from_ref(r) for r in refs]
        check_accepts(model, [p for p in parts if p.kind == "image"])
    except (UserError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(str(exc)) from None


def _methods(cls_name: str) -> dict[str, Callable[..., Any]]:
    """The workflow class's methods: plain functions delegating to :class:`_Conversation`,
    named as methods of ``cls_name`` (temporalio checks that methods belong to the class)."""

    def init(self: _Conversation, arg: dict[str, Any]) -> None:
        _Conversation.__init__(self, arg)

    async def run(self: _Conversation, arg: dict[str, Any]) -> dict[str, Any]:
        return await self.main(arg)

    async def poll(self: _Conversation, arg: dict[str, Any]) -> dict[str, Any]:
        return await _Conversation.poll(self, arg)

    def peek(self: _Conversation, arg: dict[str, Any]) -> dict[str, Any]:
        return _Conversation.peek(self, arg)

    def send(self: _Conversation, text: Any) -> dict[str, Any]:
        return _Conversation.send(self, text)

    def check_send(self: _Conversation, text: Any) -> None:
        _Conversation.check_send(self, text)

    def decide(self: _Conversation, decisions: list[dict[str, Any]]) -> dict[str, Any]:
        return _Conversation.decide(self, decisions)

    def check_decide(self: _Conversation, decisions: list[dict[str, Any]]) -> None:
        _Conversation.check_decide(self, decisions)

    async def wait(self: _Conversation, arg: dict[str, Any]) -> dict[str, Any]:
        return await _Conversation.wait(self, arg)

    def status(self: _Conversation) -> dict[str, Any]:
        return _Conversation.status(self)

    def close(self: _Conversation) -> None:
        _Conversation.close(self)

    def answer(self: _Conversation, arg: dict[str, Any]) -> dict[str, Any]:
        return self.inputs.answer(arg)

    def check_answer(self: _Conversation, arg: dict[str, Any]) -> None:
        self.inputs.check(arg)

    fns: dict[str, Callable[..., Any]] = {
        "__init__": init, "run": run, "poll": poll, "peek": peek, "send": send,
        "check_send": check_send, "wait": wait, "status": status, "close": close, "decide": decide,
        "check_decide": check_decide, "answer": answer, "check_answer": check_answer}
    for attr, fn in fns.items():
        fn.__name__ = attr
        fn.__qualname__ = f"{cls_name}.{attr}"  # temporalio checks methods belong to the class
        fn.__module__ = __name__
    return fns


def workflow_class(agent: Durable) -> type:
    """A workflow class for ``agent``, registered as the workflow type ``agent.names.workflow``.

    The class is put on this module under a name derived from the agent's, so that the
    sandbox (which imports a workflow class by module and name) finds it; reactloop is passed
    through to the sandbox (see :func:`reactloop.temporal.sandbox_runner`)."""
    cls_name = "Workflow_" + "".join(c if c.isalnum() else "_" for c in agent.names.workflow)
    fns = _methods(cls_name)
    init, run, send, decide = fns["__init__"], fns["run"], fns["send"], fns["decide"]
    check_send, check_decide = fns["check_send"], fns["check_decide"]
    poll, peek, wait, status, close = (fns[k] for k in ("poll", "peek", "wait", "status",
                                                          "close"))
    send_update = workflow.update(name=SEND)(send)
    send_update.validator(check_send)
    decide_update = workflow.update(name=DECIDE)(decide)
    decide_update.validator(check_decide)
    answer_update = workflow.update(name=ANSWER)(fns["answer"])
    answer_update.validator(fns["check_answer"])
    namespace = {
        "__module__": __name__, "agent": agent, "__init__": workflow.init(init),
        "run": workflow.run(run),
        "poll": workflow.update(name=POLL)(poll), "peek": workflow.query(name=PEEK)(peek),
        "send": send_update, "check_send": check_send,
        "decide": decide_update, "check_decide": check_decide,
        "answer": answer_update, "check_answer": fns["check_answer"],
        "wait": workflow.update(name=WAIT)(wait), "status": workflow.query(name=STATUS)(status),
        "close": workflow.signal(name=CLOSE)(close)}
    cls = workflow.defn(name=agent.names.workflow)(type(cls_name, (_Conversation,), namespace))
    setattr(sys.modules[__name__], cls_name, cls)
    return cls
