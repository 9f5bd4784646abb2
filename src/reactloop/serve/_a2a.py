"""A2A at the edge: ``reactloop serve`` answers the Agent2Agent protocol (the version the
official ``a2a-sdk`` implements: 1.0) with that SDK's own server parts.

- ``GET /.well-known/agent-card.json``: the agent card (name, description, the agent's skills
  and tools as A2A skills, reactloop's version, streaming; the bearer token as the declared
  security scheme when the server has one). Public, as discovery must be; the interface it
  names is on the host the client asked for.
- ``POST /api/a2a``: JSON-RPC 2.0 (``SendMessage``, ``SendStreamingMessage`` over SSE,
  ``GetTask``, ``ListTasks``, ``CancelTask``, ``SubscribeToTask``), dispatched by the SDK's
  ``JsonRpcDispatcher`` and ``DefaultRequestHandler`` to :class:`ReactloopExecutor`. It sits
  under ``/api/`` so the guard's rules hold for it as for every other route: the token when
  one is set, the host and origin checks, the body limit.

Mapping (the reactloop event stream stays the source; this module only translates):

=========================================  ===================================================
A2A                                        reactloop
=========================================  ===================================================
context id                                 session id (SQLite or PostgreSQL: the serve store)
a message (text parts; data parts as       one message of the session (``Runs``: one run per
JSON text)                                 session at a time, shared with the sessions API)
task ``working`` status updates            each event of the run but ``text_delta``, as
                                           ``metadata["reactloop"]["event"]``
artifact ``answer`` + ``completed``        ``COMPLETED``/``MAX_ITERATIONS``: the output as a
                                           text part, a typed output as a data part
``input-required`` (the question)          ``WAITING_FOR_USER`` (``ask_question``)
``input-required`` (``pending_approvals``  ``WAITING_FOR_APPROVAL``; the answer is a message in
data part)                                 the same task: ``yes``/``approve`` (all), any other
                                           text (deny all, the text is the reason), or a data
                                           part ``{"decisions": [...]}`` / ``{"approved": b}``
``input-required`` (``mcp_elicitation``    an MCP server asks the user while its tool runs: the
data part: the question and its schema)    run waits, live; the next message of the task is
                                           the answer (below), and the task goes on with the
                                           same run
``CancelTask`` → ``canceled``              the run is cancelled: ``CANCELLED`` in the session
``failed``                                 ``ERROR``, ``TIMED_OUT`` and other endings
``rejected``                               the session is running another message
=========================================  ===================================================

Answering an MCP server's question (elicitation): a data part with the form's values
(accept) or ``{"action": "accept"|"decline"|"cancel", "content"?: {...}}``; or text:
``decline``/``no``, ``cancel``, ``yes``/``accept`` (the defaults; a URL question: done), a
JSON object of the values, or, for a form of one field, its value. An answer the requested
schema refuses is a JSON-RPC error naming the field (the question still waits). Nobody
answering: see ``create_app(elicitation_timeout=...)``.

Why ``input-required`` and not ``auth-required`` for an approval: the protocol keeps
``auth-required`` for credentials (the client must authenticate to something, often out of
band), while an approval is a decision the *user* gives in the conversation, which is what
``input-required`` asks for; a generic A2A client then shows the question and sends the answer
back in the same task, with no reactloop-specific handling.

Tracing: a request carrying a W3C ``traceparent`` header (``A2AAgent`` sends one when
OpenTelemetry is in use) makes the run's ``invoke_agent`` span a child of the caller's span.

Left out: push notifications (``capabilities.pushNotifications`` is false), the extended
card, the HTTP+JSON and gRPC bindings, file parts (refused with a JSON-RPC error naming the
part), and task records across restarts (tasks live in this process's memory; the
conversations they ran are in the session store and go on under the same context id).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    Message,
    Part,
    SecurityRequirement,
    SecurityScheme,
    StringList,
    Task,
    TaskState,
    TaskStatus,
)
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH, PROTOCOL_VERSION_CURRENT
from a2a.utils.errors import ContentTypeNotSupportedError, InvalidParamsError
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict, ParseDict
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from reactloop.a2a._client import json_value
from reactloop.approvals import Decision
from reactloop.errors import ApprovalError, SessionBusy, UserError
from reactloop.serve._elicit import Question
from reactloop.serve._runs import Busy, Run, Runs, Waiting
from reactloop.serve._security import event_data
from reactloop.sessions._store import check_session_id

if TYPE_CHECKING:
    from reactloop.agent import Agent
    from reactloop.approvals import PendingApproval
    from reactloop.events import Event
    from reactloop.result import RunResult
    from reactloop.serve._security import Scrubber
    from reactloop.skills import Skill

__all__ = ["A2A_PATH", "ReactloopExecutor", "a2a_routes", "agent_card"]

A2A_PATH: Final = "/api/a2a"
"""Where the JSON-RPC endpoint is (under ``/api/``: the token guards it)."""
_MEDIA = ["text/plain", "application/json"]
_YES = frozenset({"y", "yes", "approve", "approved", "ok", "allow", "go ahead"})
_ACTIONS = ("accept", "decline", "cancel")
_SKIPPED = frozenset({"text_delta", "run_end"})  # deltas: the answer comes whole, as artifact
_ENDINGS: Final = {
    "completed": TaskState.TASK_STATE_COMPLETED,
    "max_iterations": TaskState.TASK_STATE_COMPLETED,  # a usable answer, said in metadata
    "waiting_for_user": TaskState.TASK_STATE_INPUT_REQUIRED,
    "waiting_for_approval": TaskState.TASK_STATE_INPUT_REQUIRED,
    "cancelled": TaskState.TASK_STATE_CANCELED,
}


def agent_card(agent: Agent, skills: list[Skill], base_url: str, token: bool) -> AgentCard:
    """The A2A card of ``agent`` served at ``base_url`` (``http://host:port/``)."""
    from reactloop._version import __version__

    described = [AgentSkill(id=f"skill:{s.name}", name=s.name, description=s.description,
                            tags=["skill"]) for s in skills]
    tools = agent.spec.tools
    for name in tools.names:
        tool = tools.get(name)
        if tool is not None and not tool.internal:
            described.append(AgentSkill(id=f"tool:{name}", name=name,
                                        description=tool.description or name, tags=["tool"]))
    description = (getattr(agent, "description", None) or agent.instructions.strip()
                   or f"The reactloop agent {agent.name!r}")
    if not described:  # the card needs one: the agent itself, answering in conversation
        described.append(AgentSkill(id="chat", name=agent.name, description=description,
                                    tags=["chat"]))
    card = AgentCard(
        name=agent.name, description=description.splitlines()[0][:500],
        version=__version__, skills=described,
        supported_interfaces=[AgentInterface(
            url=base_url.rstrip("/") + A2A_PATH, protocol_binding="JSONRPC",
            protocol_version=PROTOCOL_VERSION_CURRENT)],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=_MEDIA, default_output_modes=_MEDIA)
    if token:
        card.security_schemes["bearer"].CopyFrom(SecurityScheme(
            http_auth_security_scheme=HTTPAuthSecurityScheme(
                scheme="bearer", description="the token given to reactloop serve")))
        card.security_requirements.append(SecurityRequirement(schemes={"bearer": StringList()}))
    return card


def a2a_routes(agent: Agent, runs: Runs, skills: list[Skill], scrub: Scrubber, *,
               details: bool, token: bool
               ) -> tuple[list[Route], Callable[[], AbstractAsyncContextManager[None]]]:
    """The card and JSON-RPC routes, and the lifespan that closes the SDK's running tasks."""
    executor = ReactloopExecutor(runs, scrub, details=details)
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(),
        agent_card=agent_card(agent, skills, "http://127.0.0.1/", token))

    async def card(request: Request) -> Response:
        data = agent_card_to_dict(agent_card(agent, skills, str(request.base_url), token))
        # public: secrets in instructions or tool descriptions never leave (redaction)
        return Response(scrub.json(data), media_type="application/json",
                        headers={"cache-control": "no-cache"})

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        try:
            yield
        finally:
            await handler.aclose()

    routes = [Route(AGENT_CARD_WELL_KNOWN_PATH, card, methods=["GET"]),
              *create_jsonrpc_routes(handler, A2A_PATH)]
    return routes, lifespan


class ReactloopExecutor(AgentExecutor):
    """Runs each A2A message as one message of the reactloop session named by its context
    id, publishing the run's events as task updates (see the module docstring)."""

    def __init__(self, runs: Runs, scrub: Scrubber, *, details: bool) -> None:
        self.runs = runs
        self.scrub = scrub
        self.details = details
        self._cancelled: set[str] = set()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = str(context.task_id), str(context.context_id)
        message = context.message
        if message is None:
            raise InvalidParamsError(message="the request has no message")
        session_id = _session_id(context_id)
        text, data = _read_parts(message)
        updater = TaskUpdater(event_queue, task_id, context_id)
        if context.current_task is None:
            await event_queue.enqueue_event(Task(
                id=task_id, context_id=context_id, history=[message],
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)))
        token = _attach_trace(context.call_context.state.get("headers"))
        try:  # the run (its task starts here) is a child of the caller's span, if it sent one
            asked = self.runs.questions.pending(session_id)
            run = await (self._answer(asked[0], text, data, updater) if asked
                         else self._start(session_id, text, data, updater))
        finally:
            if token is not None:
                from opentelemetry import context as otel_context

                otel_context.detach(token)
        if run is None:
            return
        await updater.start_work()
        while True:
            try:
                result = await self._follow(run, updater, task_id)
            except asyncio.CancelledError:  # CancelTask: answered once the run ended
                await run.stop()
                raise
            if task_id in self._cancelled:
                return
            if not run.paused:
                break
            if self.runs.questions.pending(session_id):  # the task's next message answers
                await self._ask(run, updater)
                return
            run = self.runs.attach(session_id)  # answered meanwhile (sessions API): read on
        if result is not None:
            await self._finish(result, updater)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        # the SDK cancels execute() right after this (the run then ends CANCELLED, stored)
        task_id = str(context.task_id)
        self._cancelled.add(task_id)
        with contextlib.suppress(KeyError, Busy):  # a run left waiting for an answer ends too
            await self.runs.attach(_session_id(str(context.context_id))).stop()
        updater = TaskUpdater(event_queue, task_id, str(context.context_id))
        await updater.cancel(updater.new_agent_message(
            [Part(text="cancelled by the client")]))

    async def _start(self, session_id: str, text: str, data: list[Any],
                     updater: TaskUpdater) -> Run | None:
        """The session's run for this message (or the decisions it answers); None after
        rejecting the task with the reason."""
        try:
            pending = self.runs.agent.session(session_id, store=self.runs.store).pending_approvals
            if pending:
                run = self.runs.resume(session_id, _decisions(pending, text, data))
            else:
                run = self.runs.start(session_id, _prompt(text, data))
            await run.begun()
        except (Busy, SessionBusy):
            await updater.reject(updater.new_agent_message([Part(
                text=f"session {session_id!r} is running another message; send this one "
                     "when it has ended")]))
            return None
        except (Waiting, ApprovalError) as exc:
            await updater.reject(updater.new_agent_message([Part(text=str(exc))]))
            return None
        except UserError as exc:
            raise InvalidParamsError(message=str(exc)) from None
        return run

    async def _answer(self, question: Question, text: str, data: list[Any],
                      updater: TaskUpdater) -> Run | None:
        """The run waiting for ``question``, answered by this message; None when the task
        was answered already: asked again (an answer the form refuses, saying why) or
        rejected (another client follows the run)."""
        try:
            action, content = _elicitation_answer(question, text, data)
            _, run = self.runs.answer(question.session_id, [(question.id, action, content)],
                                      take_run=True)
        except ValueError as exc:  # the question still waits: ask again, saying why
            await self._ask_again(question, updater, str(exc))
            return None
        except (KeyError, Busy) as exc:
            why = exc.args[0] if isinstance(exc, KeyError) else "another client follows its run"
            await updater.reject(updater.new_agent_message([Part(text=str(why))]))
            return None
        return run

    async def _ask(self, run: Run, updater: TaskUpdater) -> None:
        """``input-required`` with the (oldest) question of an MCP server the run waits for."""
        await self._ask_again(self.runs.questions.pending(run.session.id)[0], updater)

    async def _ask_again(self, question: Question, updater: TaskUpdater,
                         problem: str = "") -> None:
        q = question.request
        where = f" Open {q.url} and say when done." if q.mode == "url" else (
            " Answer with the form's values (a data part or a JSON object), or say decline "
            "or cancel.")
        said = f"{problem}. " if problem else ""
        message = updater.new_agent_message([
            Part(text=self.scrub.text(f"{said}MCP server {q.server!r} asks: {q.message}{where}")),
            _data_part({"mcp_elicitation": self._clean(question.to_dict())})])
        await updater.update_status(TaskState.TASK_STATE_INPUT_REQUIRED, message=message)

    async def _follow(self, run: Run, updater: TaskUpdater, task_id: str) -> RunResult | None:
        """Publish the run's events as ``working`` updates; the run's result at its end (None
        when it pauses at an MCP server's question: ``run.paused``)."""
        result: RunResult | None = None
        async for batch in run.batches(pause=True):
            for event in batch:
                if event.type == "run_end":
                    result = event.result  # type: ignore[attr-defined]
                if event.type in _SKIPPED or task_id in self._cancelled:
                    continue
                await updater.update_status(TaskState.TASK_STATE_WORKING,
                                            metadata={"reactloop": {"event": self._event(event)}})
        return result

    def _event(self, event: Event) -> dict[str, Any]:
        # the serve rule for tracebacks (also inside sub-runs), then redaction
        return self._clean(event_data(event, details=self.details))  # type: ignore[no-any-return]

    def _clean(self, data: Any) -> Any:
        """``data`` as plain JSON values, without secrets."""
        return json.loads(self.scrub.json(data))

    async def _finish(self, result: RunResult, updater: TaskUpdater) -> None:
        data = result.to_dict()
        state = data["state"]
        metrics = result.metrics
        meta = {"reactloop": self._clean({
            "state": state, "run_id": getattr(result, "run_id", None),
            "usage": {"input_tokens": metrics.input_tokens,
                      "output_tokens": metrics.output_tokens},
            "iterations": metrics.iterations, "tool_calls": metrics.tool_calls})}
        output = self._clean(data["output"])
        ending = _ENDINGS.get(state, TaskState.TASK_STATE_FAILED)
        if ending == TaskState.TASK_STATE_COMPLETED:
            part = _output_part(output)
            await updater.add_artifact([part], name="answer")
            message = updater.new_agent_message([_output_part(output)])
        elif result.pending_approvals:
            message = updater.new_agent_message(self._approval_parts(result.pending_approvals))
        elif ending == TaskState.TASK_STATE_FAILED:
            error = self._clean(data.get("error") or output or state)
            message = updater.new_agent_message([Part(text=f"{state}: {error}")])
        else:
            message = updater.new_agent_message([_output_part(output or state)])
        await updater.update_status(ending, message=message, metadata=meta)

    def _approval_parts(self, pending: Sequence[PendingApproval]) -> list[Part]:
        calls = "; ".join(f"{p.tool_name}({json.dumps(dict(p.arguments), default=str)})"
                          for p in pending)
        question = (f"Approve {calls}? Answer yes to run "
                    f"{'it' if len(pending) == 1 else 'them'}, or say why not.")
        return [Part(text=self.scrub.text(question)),
                _data_part({"pending_approvals": self._clean([p.to_dict() for p in pending])})]


def _attach_trace(headers: Any) -> Any:
    """Make the caller's trace (a W3C ``traceparent`` header) the current context, so the
    run's ``invoke_agent`` span is a child of the caller's ``execute_tool`` span; the token
    to detach, or None (no header, or OpenTelemetry not installed)."""
    if not isinstance(headers, dict) or "traceparent" not in headers \
            or importlib.util.find_spec("opentelemetry") is None:
        return None
    from opentelemetry import context as otel_context
    from opentelemetry.propagate import extract

    return otel_context.attach(extract(headers))


def _session_id(context_id: str) -> str:
    try:
        return check_session_id(context_id)
    except UserError as exc:
        raise InvalidParamsError(message=f"the contextId names a reactloop session: {exc}"
                                 ) from None


def _read_parts(message: Message) -> tuple[str, list[Any]]:
    """The text of ``message`` (its text parts) and the values of its data parts."""
    texts: list[str] = []
    data: list[Any] = []
    for i, part in enumerate(message.parts):
        kind = part.WhichOneof("content")
        if kind == "text":
            texts.append(part.text)
        elif kind == "data":
            data.append(json_value(MessageToDict(part)["data"]))
        else:
            raise ContentTypeNotSupportedError(
                message=f"part {i} is a {kind or 'empty'} part ({part.media_type or 'no type'})"
                        "; this agent accepts text and data parts")
    return "\n".join(texts), data


def _prompt(text: str, data: list[Any]) -> str:
    """The user message: the text, then each data part as JSON."""
    pieces = [text] if text.strip() else []
    pieces += [json.dumps(d, ensure_ascii=False) for d in data]
    prompt = "\n".join(pieces)
    if not prompt.strip():
        raise InvalidParamsError(message="the message is empty: send a text or data part")
    return prompt


def _decisions(pending: Sequence[PendingApproval], text: str, data: list[Any]) -> list[Decision]:
    """The decisions a message gives on ``pending`` (see the module docstring)."""
    for value in data:
        if isinstance(value, dict) and isinstance(value.get("decisions"), list):
            try:
                return [Decision.from_dict(d) for d in value["decisions"]]
            except ApprovalError as exc:
                raise InvalidParamsError(message=str(exc)) from None
        if isinstance(value, dict) and isinstance(value.get("approved"), bool):
            reason = str(value.get("reason") or "")
            return [p.approve() if value["approved"] else p.deny(reason) for p in pending]
    answer = text.strip()
    if not answer:
        raise InvalidParamsError(message="tool calls wait for approval: answer yes, or say "
                                         "why not")
    if answer.lower().rstrip(".!") in _YES:
        return [p.approve() for p in pending]
    return [p.deny(answer) for p in pending]


def _elicitation_answer(question: Question, text: str, data: list[Any]) -> tuple[str, Any]:
    """``(action, content)`` a message gives to an MCP server's question (see the module
    docstring); checking the content against the form is ``Runs.answer``'s. ``ValueError``
    for text that answers nothing."""
    for value in data:
        if isinstance(value, dict) and value.get("action") in _ACTIONS \
                and set(value) <= {"action", "content"}:
            return str(value["action"]), value.get("content")
        if isinstance(value, dict):
            return "accept", value
    answer = text.strip()
    word = answer.lower().rstrip(".!")
    if word in ("decline", "no", "n"):
        return "decline", None
    if word in ("cancel", "cancelled"):
        return "cancel", None
    if word in _YES or word == "accept":
        return "accept", None
    if answer.startswith("{"):
        try:
            value = json.loads(answer)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return "accept", value
    fields = question.request.fields
    if answer and len(fields) == 1:
        return "accept", {fields[0].name: answer}
    raise ValueError(f"{answer!r} does not answer the form (its fields: "
                     f"{', '.join(f.name for f in fields)})")


def _output_part(output: Any) -> Part:
    """A text part for a text output, a data part for a typed one."""
    return Part(text=output) if isinstance(output, str) else _data_part(output)


def _data_part(value: Any) -> Part:
    data = struct_pb2.Value()
    ParseDict(value, data)
    return Part(data=data, media_type="application/json")
