"""The ASGI app of ``reactloop serve``: the sessions API, SSE runs, AG-UI and the dev UI.

Routes (all JSON unless said otherwise; errors are ``{"error": "..."}``):

- ``GET /api/health`` → ``{"status": "ok"}``
- ``GET /api/info`` → the agent's name, model name, tools and skills (never a key), and
  the threads sync tools run on (``tool_threads``: how many are stuck)
- ``GET /api/sessions`` → the stored sessions, most recent first
- ``POST /api/sessions`` (optional ``{"id": ...}``) → ``{"id": ...}`` (201)
- ``GET /api/sessions/{id}`` → ``{"id", "title", "messages", "plan", "running",
  "pending_approvals"}``
- ``DELETE /api/sessions/{id}``
- ``POST /api/sessions/{id}/messages`` with ``{"text": ...}`` → ``text/event-stream``: one
  event per reactloop event (``event:`` its type, ``data:`` its JSON), ``run_end`` last; 409
  while the session runs another message, or while tool calls wait for approval
- ``POST /api/sessions/{id}/approvals`` with ``{"decisions": [{"call_id", "arguments_hash",
  "approved", "reason"?, "arguments"?}, ...]}`` → the continued run's ``text/event-stream``;
  400 for a malformed decision, 409 for one that names no waiting call, a call already
  decided, or other arguments (another hash)
- ``GET /api/sessions/{id}/elicitations`` → the MCP servers' questions waiting for an answer
  in the session's run (``[{"id", "server", "message", "mode", "url", "tool", "schema",
  "asked"}]``; also ``pending_elicitations`` of ``GET /api/sessions/{id}``); the run's stream
  announces each as a ``custom`` event named ``mcp_elicitation_request`` (see ``_elicit``)
- ``POST /api/sessions/{id}/elicitations`` with ``{"id", "action": "accept"|"decline"|
  "cancel", "content"?: {...}}`` → ``{"id", "action", "content"}``: the answer goes to the
  server and the run's stream goes on; 400 for content the requested schema refuses (naming
  the field), 409 when no such question waits
- ``POST /api/agui`` → AG-UI (see ``_agui``; approvals and MCP servers' questions are
  interrupts, answered by ``resume``)
- ``GET /.well-known/agent-card.json`` and ``POST /api/a2a`` → A2A (see ``_a2a``), when on
- ``GET /api/skills/{name}/files/{path}`` → one file of one of the agent's skills (the dev UI
  draws the airport map from the airport skill's data)
- ``GET /`` and ``/static/...`` → the dev UI

One validation path on every route: a session id (in the path, a body or an AG-UI
``threadId``) follows the rule every store applies (``check_session_id``; 400 otherwise), and
one holding ``/`` is reachable sent percent-encoded (``%2F``, as ``encodeURIComponent`` does);
a body is one JSON object nested at most :data:`MAX_BODY_DEPTH` levels (400 otherwise).
A store that fails answers 503 with its own (redacted) message; anything else unexpected
answers 500 with a JSON error naming only the exception's type (the log has the rest).
Tools' tracebacks (``result.traceback`` of ``tool_error`` events) show the server's files:
they are sent only without a token (the loopback dev UI) or with ``debug``.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote, unquote

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from reactloop.approvals import Decision
from reactloop.errors import ApprovalError, SessionBusy, SessionStoreError, UserError
from reactloop.serve._elicit import DEFAULT_TIMEOUT, Questions
from reactloop.serve._parts import from_rest
from reactloop.serve._runs import Busy, Run, Runs, Waiting
from reactloop.serve._security import Guard, Policy, Scrubber, event_data
from reactloop.sessions._store import check_session_id

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent
    from ag_ui.encoder import EventEncoder
    from starlette.types import ASGIApp, Receive, Scope, Send

    from reactloop.agent import Agent
    from reactloop.attachments import Prompt
    from reactloop.events import Event
    from reactloop.serve._agui import AGUITranslator
    from reactloop.sessions import SessionStore
    from reactloop.skills import Skill

__all__ = ["MAX_BODY_DEPTH", "build_app"]

STATIC = Path(__file__).resolve().parent / "static"
_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
_STREAM_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}
_MAX_SKILL_FILE = 2 * 1024 * 1024
_TEXT_TYPES = {".json": "application/json", ".md": "text/plain; charset=utf-8",
               ".txt": "text/plain; charset=utf-8", ".csv": "text/csv; charset=utf-8",
               ".svg": "image/svg+xml"}
MAX_BODY_DEPTH: Final = 100
"""How deeply a request body may nest objects and lists (deeper: 400, never a crash)."""
_SESSIONS = "/api/sessions/"
_LINE_BREAKS = re.compile("[\x85\u2028\u2029]")
_ESCAPED_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028",
                                 "\u2029": "\\u2029"})


class ApiError(Exception):
    """Ends a request with ``status`` and ``{"error": message}``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def build_app(agent: Agent, store: SessionStore, *, owns_store: bool, policy: Policy,
              scrub: Scrubber, details: bool, a2a: bool = False,
              elicitation_timeout: float | None = DEFAULT_TIMEOUT) -> ASGIApp:
    """The app behind ``create_app`` (arguments already checked there); ``details``: send
    tools' tracebacks to clients; ``a2a``: answer the A2A protocol too (``_a2a``);
    ``elicitation_timeout``: how long an MCP server's question waits for an answer."""
    api = _Api(agent, store, scrub, details=details, questions=Questions(elicitation_timeout))
    extra: list[Route] = []
    a2a_lifespan = None
    if a2a:
        from reactloop.serve._a2a import a2a_routes

        extra, a2a_lifespan = a2a_routes(agent, api.runs, _skills_of(agent), scrub,
                                         details=details, token=policy.token is not None)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            if a2a_lifespan is None:
                yield
            else:
                async with a2a_lifespan():
                    yield
        finally:
            if owns_store:
                store.close()

    routes = [
        Route("/", _index, methods=["GET"]),
        Route("/api/health", api.health, methods=["GET"]),
        Route("/api/info", api.info, methods=["GET"]),
        Route("/api/sessions", api.list_sessions, methods=["GET"]),
        Route("/api/sessions", api.create_session, methods=["POST"]),
        Route("/api/sessions/{session_id}", api.get_session, methods=["GET"]),
        Route("/api/sessions/{session_id}", api.delete_session, methods=["DELETE"]),
        Route("/api/sessions/{session_id}/messages", api.post_message, methods=["POST"]),
        Route("/api/sessions/{session_id}/approvals", api.post_approvals, methods=["POST"]),
        Route("/api/sessions/{session_id}/elicitations", api.get_elicitations,
              methods=["GET"]),
        Route("/api/sessions/{session_id}/elicitations", api.post_elicitation,
              methods=["POST"]),
        Route("/api/agui", api.agui, methods=["POST"]),
        Route("/api/skills/{name}/files/{path:path}", api.skill_file, methods=["GET"]),
        Mount("/static", app=_Static(directory=STATIC), name="static"),
        *extra,
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={
        ApiError: api.on_api_error, HTTPException: api.on_http_error,
        SessionStoreError: api.on_store_error, Exception: api.on_crash})
    return Guard(_EncodedIds(app), policy)


class _EncodedIds:
    """Lets a session id holding ``/`` reach its routes: the server decodes ``%2F`` in the
    path before routing, so the id's segment is given to the routes as sent (percent-encoded,
    from the raw path), and :func:`_path_id` decodes it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(_SESSIONS):
            scope = {**scope, "path": _SESSIONS + _id_segment(scope)}
        await self.app(scope, receive, send)


def _id_segment(scope: Scope) -> str:
    """The path after ``/api/sessions/`` with the id's segment percent-encoded (``%2F`` in
    an id stays inside its segment) and the rest decoded, as routing expects."""
    raw = scope.get("raw_path")
    if isinstance(raw, bytes) and raw.startswith(_SESSIONS.encode()):
        ident, slash, rest = raw[len(_SESSIONS):].decode("latin-1").partition("/")
        return quote(unquote(ident), safe="") + slash + unquote(rest)
    path: str = scope["path"]
    ident, slash, rest = path[len(_SESSIONS):].partition("/")
    return quote(ident, safe="") + slash + rest  # no raw path: ids without "/" still work


class _Static(StaticFiles):
    """The dev UI's files; revalidated on every load so an upgrade shows at once."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["cache-control"] = "no-cache"
        return response


async def _index(request: Request) -> Response:
    return FileResponse(STATIC / "index.html", headers={
        "content-security-policy": _CSP, "cache-control": "no-cache"})


class _Api:
    def __init__(self, agent: Agent, store: SessionStore, scrub: Scrubber, *,
                 details: bool, questions: Questions) -> None:
        self.agent = agent
        self.store = store
        self.scrub = scrub
        self.details = details
        self.runs = Runs(agent, store, questions)
        # each tool's parameters: AG-UI interrupts describe edited arguments with them
        tools = agent.spec.tools
        self.tool_schemas = {name: tool.parameters for name in tools.names
                             if (tool := tools.get(name)) is not None}

    def json(self, data: Any, status: int = 200) -> Response:
        return Response(_utf8(self.scrub.json(data)), status, media_type="application/json")

    # -- errors ----------------------------------------------------------------------------------
    async def on_api_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return self.json({"error": exc.message}, exc.status)

    async def on_http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        detail = {404: f"no such path: {request.url.path}",
                  405: f"{request.method} is not allowed on {request.url.path}"}
        return self.json({"error": detail.get(exc.status_code, exc.detail)}, exc.status_code)

    async def on_store_error(self, request: Request, exc: Exception) -> Response:
        # the store's own message names the store and the fix, its password already masked
        return self.json({"error": str(exc)}, 503)

    async def on_crash(self, request: Request, exc: Exception) -> Response:
        # a bug: name the exception's type only (its message and traceback go to the log).
        # The exception goes on to the server, which then closes the connection: say so, or a
        # client reusing it for its next request meets a reset
        response = self.json({"error": f"internal error ({type(exc).__name__}) while answering "
                                       f"{request.method} {request.url.path}; the server's log "
                                       "has the details"}, 500)
        response.headers["connection"] = "close"
        return response

    # -- small endpoints -------------------------------------------------------------------------
    async def health(self, request: Request) -> Response:
        return self.json({"status": "ok"})

    async def info(self, request: Request) -> Response:
        import reactloop

        skills = [{"name": s.name, "description": s.description, "files": s.files()[:200]}
                  for s in _skills_of(self.agent)]
        from dataclasses import asdict

        from reactloop.tools import thread_stats

        return self.json({"name": self.agent.name, "model": self.agent.model.name,
                          "tools": self.agent.tools, "skills": skills,
                          "version": reactloop.__version__,
                          "tool_threads": asdict(thread_stats())})  # stuck ones included

    async def skill_file(self, request: Request) -> Response:
        name, path = request.path_params["name"], request.path_params["path"]
        skill = next((s for s in _skills_of(self.agent) if s.name == name), None)
        if skill is None:
            raise ApiError(404, f"the agent has no skill named {name!r}")
        found = None if any(p.startswith(".") for p in path.split("/")) \
            else skill.resolve_file(path)
        if found is None or found.stat().st_size > _MAX_SKILL_FILE:
            raise ApiError(404, f"skill {name!r} has no file {path!r} (or it is too large)")
        media = _TEXT_TYPES.get(found.suffix.lower())
        if media is None:
            return Response(found.read_bytes(), media_type="application/octet-stream")
        text = found.read_text(encoding="utf-8", errors="replace")
        scrubbed = self.scrub.json_text(text) if media == "application/json" \
            else self.scrub.text(text)
        return Response(scrubbed, media_type=media)

    # -- sessions --------------------------------------------------------------------------------
    async def list_sessions(self, request: Request) -> Response:
        return self.json([{"id": s.id, "title": s.title, "messages": s.messages,
                           "created": s.created, "updated": s.updated,
                           "running": self.runs.running(s.id)} for s in self.store.list()])

    async def create_session(self, request: Request) -> Response:
        body = await _json_body(request, required=False)
        session_id = _checked_id(body.get("id") or uuid.uuid4().hex)
        if _exists(self.store, session_id):
            raise ApiError(409, f"session {session_id!r} already exists")
        self.store.append(session_id, [])  # listed from now on, with no messages
        return self.json({"id": session_id}, 201)

    async def get_session(self, request: Request) -> Response:
        session_id = _path_id(request)
        info = _info(self.store, session_id)
        if info is None:
            raise ApiError(404, f"no session {session_id!r}")
        messages = self.store.get(session_id)
        from reactloop.approvals import pending_approvals
        from reactloop.planning import plan_from_history

        plan = plan_from_history(messages)
        return self.json({"id": session_id, "title": info.get("title", ""),
                          "messages": [m.to_dict() for m in messages],
                          "plan": None if plan is None else plan.to_dict(),
                          "running": self.runs.running(session_id),
                          "pending_approvals": [p.to_dict()
                                                for p in pending_approvals(messages)],
                          "pending_elicitations": self._questions(session_id)})

    async def delete_session(self, request: Request) -> Response:
        session_id = _path_id(request)
        if self.runs.running(session_id):
            raise ApiError(409, f"session {session_id!r} is running a message; delete it "
                                "when the run has ended")
        if not self.store.delete(session_id):
            raise ApiError(404, f"no session {session_id!r}")
        return self.json({"id": session_id, "deleted": True})

    # -- runs ------------------------------------------------------------------------------------
    async def _start(self, session_id: str, text: Prompt | None,
                     decisions: list[Decision] | None = None) -> Run:
        busy = (f"session {session_id!r} is still running a message; send the next one when "
                "its run has ended")
        try:
            if decisions is not None:
                run = self.runs.resume(session_id, decisions)
            else:
                assert text is not None
                run = self.runs.start(session_id, text)
            await run.begun()
        except Busy:
            raise ApiError(409, busy) from None
        except SessionBusy:  # another process (a second server on the same store) writes it
            raise ApiError(409, busy + " (in another process)") from None
        except (Waiting, ApprovalError) as exc:  # ApprovalError: decided meanwhile elsewhere
            raise ApiError(409, str(exc)) from None
        except UserError as exc:
            raise ApiError(400, str(exc)) from None
        return run

    async def post_message(self, request: Request) -> Response:
        body = await _json_body(request, required=True)
        text = body.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ApiError(400, 'send {"text": "..."} with a non-empty message')
        try:
            parts = from_rest(body.get("attachments"))
        except UserError as exc:
            raise ApiError(400, str(exc)) from None
        run = await self._start(_path_id(request), [text, *parts] if parts else text)
        return StreamingResponse(self._sse(run), media_type="text/event-stream",
                                 headers=_STREAM_HEADERS)

    async def post_approvals(self, request: Request) -> Response:
        body = await _json_body(request, required=True)
        raw = body.get("decisions")
        if not isinstance(raw, list) or not raw:
            raise ApiError(400, 'send {"decisions": [{"call_id": ..., "arguments_hash": ..., '
                                '"approved": true|false, "reason"?: ..., "arguments"?: {...}}]}')
        try:
            decisions = [Decision.from_dict(d) for d in raw]
        except ApprovalError as exc:
            raise ApiError(400, str(exc)) from None
        run = await self._start(_path_id(request), None, decisions)
        return StreamingResponse(self._sse(run), media_type="text/event-stream",
                                 headers=_STREAM_HEADERS)

    def _questions(self, session_id: str) -> list[dict[str, Any]]:
        return [q.to_dict() for q in self.runs.questions.pending(session_id)]

    async def get_elicitations(self, request: Request) -> Response:
        return self.json(self._questions(_path_id(request)))

    async def post_elicitation(self, request: Request) -> Response:
        body = await _json_body(request, required=True)
        question_id, action = body.get("id"), body.get("action")
        if not isinstance(question_id, str) or not isinstance(action, str):
            raise ApiError(400, 'send {"id": ..., "action": "accept"|"decline"|"cancel", '
                                '"content"?: {...}} (the id of the mcp_elicitation_request)')
        given, _ = self._answer(_path_id(request), [(question_id, action, body.get("content"))])
        return self.json(given[0])

    def _answer(self, session_id: str, answers: list[tuple[str, str, Any]], *,
                take_run: bool = False) -> tuple[list[dict[str, Any]], Run | None]:
        """:meth:`Runs.answer`, its refusals as HTTP errors."""
        try:
            return self.runs.answer(session_id, answers, take_run=take_run)
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
        except KeyError as exc:
            raise ApiError(409, str(exc.args[0])) from None
        except Busy:
            raise ApiError(409, f"session {session_id!r}: another client follows the run "
                                "waiting for this answer; answer with POST "
                                f"/api/sessions/{session_id}/elicitations") from None

    async def _sse(self, run: Run) -> AsyncIterator[bytes]:
        try:
            async for batch in run.batches():
                if not batch:
                    yield b": keep-alive\n\n"
                    continue
                yield _utf8("".join(self._frame(event) for event in batch))
        except Exception as exc:  # the store failed, or similar: say so, then end
            data = self.scrub.json({"error": f"{type(exc).__name__}: {exc}"})
            yield _utf8(f"event: error\ndata: {data}\n\n")

    def _frame(self, event: Event) -> str:
        data = event_data(event, details=self.details)  # the error sentence stays
        return f"event: {event.type}\ndata: {self.scrub.json(data)}\n\n"

    async def agui(self, request: Request) -> Response:
        # imported on first use: the protocol's models take a moment to build
        from ag_ui.core import RunAgentInput
        from ag_ui.encoder import EventEncoder

        from reactloop.serve._agui import AGUIInputError, AGUITranslator

        body = await _json_body(request, required=True)
        try:
            run_input = RunAgentInput.model_validate(body)
            run, goes_on = await self._agui_run(run_input)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ApiError(400, f"not an AG-UI RunAgentInput: {where}: {first['msg']}") from None
        except AGUIInputError as exc:
            raise ApiError(400, str(exc)) from None
        encoder = EventEncoder(accept=request.headers.get("accept") or "text/event-stream")
        translator = AGUITranslator(run_input.thread_id, run_input.run_id, self.tool_schemas,
                                    details=self.details)
        return StreamingResponse(self._agui(run, translator, encoder, goes_on),
                                 media_type=encoder.get_content_type(),
                                 headers=_STREAM_HEADERS)

    async def _agui_run(self, run_input: Any) -> tuple[Run, bool]:
        """The run an AG-UI input starts or goes on with; True when it goes on after answers
        to MCP servers' questions (the AG-UI run then starts without a ``run_start``)."""
        from reactloop.serve._agui import (
            ELICITATION_PREFIX,
            AGUIInputError,
            answers_of,
            decisions_of,
            prompt_of,
        )

        session_id = _checked_id(run_input.thread_id)
        entries = run_input.resume or []
        asked = [e for e in entries if e.interrupt_id.startswith(ELICITATION_PREFIX)]
        if asked and len(asked) < len(entries):
            raise AGUIInputError("answer the MCP servers' questions first, then the approvals "
                                 "(one kind of interrupt per resume)")
        if asked:
            _, run = self._answer(session_id, answers_of(asked), take_run=True)
            assert run is not None
            return run, True
        if entries:  # answers to the approval interrupts of the thread's last run
            return await self._start(session_id, None, decisions_of(entries)), False
        return await self._start(session_id, prompt_of(run_input)), False

    async def _agui(self, run: Run, translator: AGUITranslator, encoder: EventEncoder,
                    goes_on: bool = False) -> AsyncIterator[bytes]:
        def frames(events: Iterable[BaseEvent]) -> bytes:
            return _utf8("".join(self._agui_frame(_agui_encode(encoder, e)) for e in events))

        try:
            if goes_on:
                yield frames(translator.started())
            async for batch in run.batches(pause=True):
                if not batch:
                    yield b": keep-alive\n\n"
                    continue
                yield frames(out for event in batch for out in translator.translate(event))
            if run.paused:  # an MCP server's question: the run waits, this AG-UI run ends
                yield frames(translator.paused(self._questions(run.session.id)))
        except Exception as exc:
            message = self.scrub.text(f"{type(exc).__name__}: {exc}")
            yield _utf8("".join(self._agui_frame(_agui_encode(encoder, out))
                                for out in translator.error(message)))

    def _agui_frame(self, frame: str) -> str:
        """One encoded AG-UI frame (``data: {...}``), without secrets."""
        if self.scrub.text(frame) == frame:
            return frame
        return f"data: {self.scrub.json_text(frame.removeprefix('data: ').strip())}\n\n"


async def _json_body(request: Request, *, required: bool) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        if required:
            raise ApiError(400, "the request needs a JSON body")
        return {}
    if "json" not in request.headers.get("content-type", ""):
        raise ApiError(415, "send the body as JSON (Content-Type: application/json)")
    too_deep = ApiError(400, f"the body nests objects or lists more than {MAX_BODY_DEPTH} "
                             "levels deep; send a flatter JSON object")
    try:
        data = json.loads(raw)
    except RecursionError:  # nested past the interpreter's limit (100,000 brackets, say)
        raise too_deep from None
    except ValueError as exc:
        raise ApiError(400, f"the body is not valid JSON: {exc}") from None
    if _too_deep(data, MAX_BODY_DEPTH):
        raise too_deep
    if not isinstance(data, dict):
        raise ApiError(400, "the body must be a JSON object")
    return data


def _utf8(json_text: str) -> bytes:
    """JSON text (or SSE frames of it) as UTF-8, whatever a client sent. Such characters can
    only sit inside JSON strings, where an escape means the same: a lone surrogate becomes
    ``\\udXXX`` (no UTF-8 encoder takes it raw), and U+0085, U+2028 and U+2029 are escaped so
    that clients splitting lines as Python's ``splitlines`` does still read whole SSE lines."""
    if _LINE_BREAKS.search(json_text):
        json_text = json_text.translate(_ESCAPED_BREAKS)
    return json_text.encode("utf-8", "backslashreplace")


def _agui_encode(encoder: EventEncoder, event: BaseEvent) -> str:
    """One AG-UI event as the protocol's encoder writes it; when it refuses a lone surrogate a
    client sent, the same JSON written by ``json`` (then escaped by :func:`_utf8`)."""
    try:
        return encoder.encode(event)
    except ValueError:  # pydantic's serialisation error
        data = event.model_dump(mode="json", by_alias=True)
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


def _too_deep(data: Any, limit: int) -> bool:
    """True when ``data`` nests dicts and lists more than ``limit`` levels (no recursion)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value \
            if isinstance(value, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _checked_id(session_id: object) -> str:
    """``session_id`` if it is one a store accepts, else a 400 saying the rule."""
    try:
        return check_session_id(session_id)
    except UserError as exc:
        raise ApiError(400, str(exc)) from None


def _path_id(request: Request) -> str:
    """The checked session id of a ``/api/sessions/{id}...`` route (see :class:`_EncodedIds`)."""
    return _checked_id(unquote(request.path_params["session_id"]))


def _info(store: SessionStore, session_id: str) -> dict[str, Any] | None:
    """The session's listing entry, or None when there is no such session."""
    info = getattr(store, "info", None)  # SQLiteStore answers for one id directly
    found: Iterable[Any] = [info(session_id)] if callable(info) else store.list()
    for s in found:
        if s is not None and s.id == session_id:
            return {"title": s.title, "messages": s.messages}
    return None


def _exists(store: SessionStore, session_id: str) -> bool:
    return _info(store, session_id) is not None


def _skills_of(agent: Agent) -> list[Skill]:
    """The agent's skills (from its skill-set extensions)."""
    from reactloop.skills import SkillSet

    return [skill for ext in agent.extensions if isinstance(ext, SkillSet) for skill in ext]
