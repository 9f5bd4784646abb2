""":class:`RunHandle`: a caller's view of one conversation workflow.

Events arrive by long-polling an update (``reactloop.poll``): the handler returns as soon as
there are events after the caller's last sequence number, so events reach the caller live, in
order, without busy polling, and a caller that re-attaches with the last number it saw neither
loses nor repeats any. A closed workflow cannot take updates; its retained events are read
with the ``reactloop.peek`` query instead.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from reactloop.approvals import Decision
from reactloop.attachments import Prompt, split_prompt
from reactloop.errors import ApprovalError, ReactloopError, UserError
from reactloop.events import Event
from reactloop.mcp._elicitation import Elicitation, ElicitationAnswer
from reactloop.result import RunResult
from reactloop.run_context import RunContext
from reactloop.temporal._codec import event_from_dict, run_result_from_dict

if TYPE_CHECKING:
    from temporalio.client import Client

    from reactloop.temporal._blobs import AttachmentStore

__all__ = ["RunHandle", "connect"]

POLL, PEEK, SEND, WAIT, STATUS, CLOSE = ("reactloop.poll", "reactloop.peek", "reactloop.send",
                                         "reactloop.wait", "reactloop.status", "reactloop.close")
DECIDE, ANSWER = "reactloop.decide", "reactloop.answer"
_LATEST = object()


async def connect(client: Client | str, namespace: str = "default") -> Client:
    """``client`` itself, or a client connected to the address ``client``."""
    from temporalio.client import Client

    if isinstance(client, Client):
        return client
    if not isinstance(client, str) or not client:
        raise UserError(f"client must be a temporalio Client or an address HOST:PORT, got "
                        f"{client!r}")
    try:
        return await Client.connect(client, namespace=namespace)
    except RuntimeError as exc:
        raise ReactloopError(f"cannot reach Temporal at {client}: {exc}; start a server "
                             "(temporal server start-dev) or set TEMPORAL_ADDRESS") from None


class RunHandle:
    """One conversation (a workflow) as seen by a caller.

    Attributes:
        id: the workflow id.
        turn: the turn this handle follows (1 for the first prompt; :meth:`send` moves it on).
        seq: sequence number of the last event :meth:`events` yielded (``None``: none yet).
    """

    def __init__(self, client: Client, id: str, *, turn: int, seq: int | None,
                 blobs: AttachmentStore | None = None) -> None:
        self.client, self.id, self.turn, self.seq = client, id, turn, seq
        self.blobs = blobs
        """Where :meth:`send` stores the bytes of attachments (the agent's store)."""
        self.workflow = client.get_workflow_handle(id)  # no run id: follows continue-as-new
        self.sent = turn == 1
        """Whether the prompt given to ``start`` was delivered (False when it attached to a
        busy or ended conversation)."""

    async def attach(self, prompt: Prompt | None) -> None:
        """Follow the current turn; send ``prompt`` if the conversation waits for one."""
        status = await self.status()
        self.turn, self.seq = status["turn"], status["turn_start"] - 1
        if prompt is not None and status["idle"] and not status["closed"] \
                and not status.get("waiting_for_approval"):  # decisions come first
            self.seq = status["next"] - 1  # the new turn's events, not the last one's
            await self.send(prompt)

    async def status(self) -> dict[str, Any]:
        """``{"turn", "done", "busy", "idle", "closed", "next", "turn_start",
        "waiting_for_user", "waiting_for_approval", "waiting_for_input"}`` of the conversation
        (``waiting_for_input``: the questions of :meth:`pending_inputs`, as data)."""
        from temporalio.client import WorkflowExecutionStatus
        from temporalio.service import RPCError, RPCStatusCode

        try:
            out: dict[str, Any] = await self.workflow.query(STATUS, result_type=dict)
            desc = await self.workflow.describe()
        except RPCError as exc:
            if exc.status is RPCStatusCode.NOT_FOUND:
                raise ReactloopError(f"there is no conversation {self.id!r} on this Temporal "
                                     "server (namespace "
                                     f"{self.client.namespace!r})") from None
            raise
        out["closed"] = out["closed"] or desc.status != WorkflowExecutionStatus.RUNNING
        return out

    async def events(self, after: Any = _LATEST) -> AsyncIterator[tuple[int, Event]]:
        """``(seq, event)`` pairs, live, until the conversation waits for a message or ends.

        Args:
            after: yield the events after this sequence number (``None``: from the start of
                the latest turn); default: after the last one this handle yielded.
        """
        pos: int | None = self.seq if after is _LATEST else after
        while True:
            batch = await self._poll(pos)
            for data in batch["events"]:
                seq = int(data["seq"])
                self.seq = pos = seq
                yield seq, event_from_dict(data)
            if pos is None:
                pos = int(batch["last"])
            if batch["moved"] or batch["more"]:
                continue
            if batch["idle"] or batch["closed"]:
                return

    async def _poll(self, after: int | None) -> Mapping[str, Any]:
        from temporalio.client import WorkflowUpdateFailedError
        from temporalio.service import RPCError

        arg = {"after": after}
        while True:
            try:
                return await self._update(POLL, arg)
            except (WorkflowUpdateFailedError, RPCError):
                if await self._running():
                    await asyncio.sleep(0.05)  # continuing as new: the next run takes it
                    continue
            out: dict[str, Any] = await self.workflow.query(PEEK, arg, result_type=dict)
            out["closed"] = True
            return out

    async def _update(self, name: str, arg: Any) -> dict[str, Any]:
        """Send an update and wait for its outcome however long it takes: the server answers
        an update's RPC within a deadline (acceptance can wait for a busy worker, the handler
        for a turn to end), so timed-out RPCs are retried — on the same update once it was
        accepted. A cancelled caller is cancelled, not retried."""
        from temporalio.client import WorkflowUpdateRPCTimeoutOrCancelledError, WorkflowUpdateStage

        while True:
            try:
                update = await self.workflow.start_update(
                    name, arg, wait_for_stage=WorkflowUpdateStage.ACCEPTED, result_type=dict)
                break
            except WorkflowUpdateRPCTimeoutOrCancelledError:
                _raise_if_cancelled()
        while True:
            try:
                out: dict[str, Any] = await update.result()
                return out
            except WorkflowUpdateRPCTimeoutOrCancelledError:
                _raise_if_cancelled()

    async def _update_or_raise(self, name: str, arg: Any, error: type[ReactloopError],
                               refused: str, ended: str) -> dict[str, Any]:
        """:meth:`_update`, its failures as ``error``: the workflow refused the update
        (``"<refused>: <its reason>"``) or the conversation has ended (``ended``); an RPC
        error while the workflow still runs stays what it is."""
        from temporalio.client import WorkflowUpdateFailedError
        from temporalio.service import RPCError

        try:
            return await self._update(name, arg)
        except WorkflowUpdateFailedError as exc:
            raise error(f"{refused}: {_reason(exc)}") from None
        except RPCError:
            if await self._running():
                raise
            raise error(ended) from None

    async def _running(self) -> bool:
        from temporalio.client import WorkflowExecutionStatus

        desc = await self.workflow.describe()
        return desc.status == WorkflowExecutionStatus.RUNNING

    async def result(self) -> RunResult:
        """The :class:`~reactloop.RunResult` of the turn this handle follows, once it ends.

        Its messages' attachments have their bytes, read from the attachment store (so
        ``result.save()`` keeps them) when this process reaches it; else they stay references.
        """
        return await self._with_bytes(await self._result())

    async def _with_bytes(self, result: RunResult) -> RunResult:
        if self.blobs is None or not any(m.attachments for m in result.messages):
            return result
        try:
            loaded = await self.blobs.resolve(self.id, result.messages)
        except UserError:  # this process does not reach the store: references it is
            return result
        if isinstance(result.context, RunContext):
            result.context.messages[:] = loaded
        return dataclasses.replace(result, messages=list(loaded))

    async def _result(self) -> RunResult:
        from temporalio.client import WorkflowUpdateFailedError
        from temporalio.service import RPCError

        while True:
            try:
                out = await self._update(WAIT, {"turn": self.turn})
            except (WorkflowUpdateFailedError, RPCError):
                if await self._running():
                    await asyncio.sleep(0.05)
                    continue
                return await self._final()
            if out.get("done"):
                return run_result_from_dict(out["result"])
            if out.get("closed"):  # it ends (or fails) without this turn's result
                return await self._final()

    async def _final(self) -> RunResult:
        """The workflow's own result (its last turn's), once it has closed."""
        from temporalio.client import WorkflowFailureError

        try:
            return run_result_from_dict(await self.workflow.result())
        except WorkflowFailureError as exc:
            raise ReactloopError(f"the workflow {self.id} failed: {exc.cause or exc}") from None

    async def send(self, text: Prompt) -> int:
        """The user's next message (e.g. the answer a ``WAITING_FOR_USER`` run asked for):
        starts the next turn, which this handle then follows. Returns its turn number.

        ``text`` may be a list of strings and attachments, as ``TemporalAgent.start`` takes:
        their bytes go to the attachment store, the workflow gets references."""
        from temporalio.client import WorkflowUpdateFailedError

        message: str | dict[str, Any] = text if isinstance(text, str) else ""
        if not isinstance(text, str):
            words, parts = split_prompt(text)
            if self.blobs is None:
                raise UserError("this handle has no attachment store: take it from "
                                "TemporalAgent.start or TemporalAgent.attach to send attachments")
            await self.blobs.put(self.id, parts, "a message")
            message = {"text": words, "attachments": [a.ref() for a in parts]}
        try:
            out = await self._update(SEND, message)
        except WorkflowUpdateFailedError as exc:
            raise UserError(f"cannot send to {self.id}: {exc.cause or exc}") from None
        self.turn, self.sent = int(out["turn"]), True
        return self.turn

    async def decide(self, decisions: Iterable[Decision | Mapping[str, Any]]) -> int:
        """Decisions on the calls a ``WAITING_FOR_APPROVAL`` turn left waiting
        (``result.pending_approvals``: ``p.approve()``, ``p.deny(reason)``, ``p.edit(args)``):
        starts the turn that runs the approved calls (once, as activities) and answers the
        denied ones, which this handle then follows. Returns its turn number.

        Raises:
            ApprovalError: a decision names no waiting call, a call already decided, or
                other arguments (its hash differs); the workflow recorded and ran nothing.
        """
        data = [d.to_dict() if isinstance(d, Decision) else Decision.from_dict(d).to_dict()
                for d in decisions]
        out = await self._update_or_raise(
            DECIDE, data, ApprovalError, f"cannot decide on {self.id}",
            f"the conversation {self.id} has ended: no tool call waits for approval there")
        self.turn, self.sent = int(out["turn"]), True
        return self.turn

    async def pending_inputs(self) -> dict[str, Elicitation]:
        """The questions MCP servers asked (input-required results) that wait for the user's
        answer, by id: the turn waits, durably, until each is answered with :meth:`answer`.
        Also announced as ``mcp_input_required`` custom events (``data["id"]``)."""
        from reactloop.temporal._elicitation import question_of

        waiting = (await self.status()).get("waiting_for_input") or {}
        return {str(i): question_of(q) for i, q in waiting.items()}

    async def answer(self, id: str, answer: ElicitationAnswer) -> None:
        """Answer the question ``id`` (see :meth:`pending_inputs`): ``ElicitationAnswer.accept
        (**values)``, ``.decline()`` or ``.cancel()`` — each reaches the server, which a new
        activity calls again with it (on whichever worker is up by then).

        Raises:
            UserError: no such question waits (or the conversation ended), the answer is
                not an ElicitationAnswer, or it accepts a form without its required fields
                or with fields it does not have (the server checks the values).
        """
        if not isinstance(answer, ElicitationAnswer):
            raise UserError(f"answer with an ElicitationAnswer (accept, decline or cancel), "
                            f"got {answer!r}")
        data = {"id": id, "action": answer.action,
                "content": dict(answer.content) if answer.content is not None else None}
        await self._update_or_raise(
            ANSWER, data, UserError, f"cannot answer {id!r} on {self.id}",
            f"the conversation {self.id} has ended: no question waits for an answer there")

    async def close(self) -> None:
        """End a session after its current turn (the workflow completes)."""
        await self.workflow.signal(CLOSE)

    def __repr__(self) -> str:
        return f"RunHandle({self.id!r}, turn={self.turn})"


def _reason(exc: BaseException) -> str:
    """The workflow's own words for a refused update (its validator's or handler's)."""
    cause = exc.__cause__ or getattr(exc, "cause", None) or exc
    return str(getattr(cause, "message", None) or cause)


def _raise_if_cancelled() -> None:
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
