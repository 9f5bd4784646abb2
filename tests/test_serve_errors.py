"""Issue 31, "Storage and the server's errors" and the tracebacks item: ``reactloop serve``
under a hostile client, a damaged store and a remote operator, against the real server (a
subprocess on 127.0.0.1).

Every route checks ids and bodies the same way (4xx, never a bare 500); a session id holding
``/`` is reachable percent-encoded; a failing store answers 503 with its own redacted message;
whatever a client can send is stored and served back on SQLite and PostgreSQL; tracebacks
reach clients only on loopback without a token, or with ``--debug``."""

from __future__ import annotations

import json
import socket
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import SERVE_TOKEN, ServeProcess, parse_sse

httpx = pytest.importorskip("httpx", reason="pip install 'reactloop[test]'")
pytest.importorskip("starlette", reason="pip install 'reactloop[serve]'")

NESTED = "[" * 100_000 + "]" * 100_000  # 200 KB: past the interpreter's recursion limit
JSON = {"content-type": "application/json"}
# what a client can send: NUL, other control characters, a lone surrogate (as JSON escapes)
HOSTILE = "nul\x00 bell\x07 esc\x1b del\x7f c1\x85\x9f lone\ud800 end"


@pytest.fixture
def client(served):
    with httpx.Client(base_url=served.url, timeout=60) as c:
        yield c


def new_session(client, session_id: str | None = None) -> str:
    r = client.post("/api/sessions", json={"id": session_id} if session_id else None)
    assert r.status_code == 201, r.text
    return r.json()["id"]


def send(client, path: str, text: str) -> list[tuple[str, dict]]:
    body = json.dumps({"text": text})  # ASCII JSON: a lone surrogate travels as an escape
    with client.stream("POST", path, content=body, headers=JSON) as r:
        assert r.status_code == 200, r.read()
        return parse_sse(r.iter_lines())


def assert_json_error(r, status: int | tuple[int, ...]) -> str:
    assert r.status_code in (status if isinstance(status, tuple) else (status,)), r.text
    assert r.headers["content-type"].startswith("application/json"), r.text
    return r.json()["error"]


# -- one validation path for bodies ---------------------------------------------------------

def test_a_deeply_nested_body_is_a_400_on_every_post_route(client) -> None:
    sid = new_session(client)
    routes = ["/api/sessions", f"/api/sessions/{sid}/messages",
              f"/api/sessions/{sid}/approvals", "/api/agui"]
    for route in routes:
        error = assert_json_error(client.post(route, content=NESTED, headers=JSON), 400)
        assert "levels deep" in error, route
    # nested less than the interpreter's limit but more than any real request: same answer
    shallow = '{"text": ' + "[" * 150 + '"x"' + "]" * 150 + "}"
    for route in routes:
        error = assert_json_error(client.post(route, content=shallow, headers=JSON), 400)
        assert "levels deep" in error, route
    for body in ("null", "[1, 2]", '"text"'):  # flat but not an object: said so
        r = client.post(routes[1], content=body, headers=JSON)
        assert "must be a JSON object" in assert_json_error(r, 400)
    assert client.get("/api/health").json() == {"status": "ok"}  # and the server is fine


# -- one rule for ids, on every route -------------------------------------------------------

@pytest.mark.parametrize("bad", ["a%00b", "x" * 300, "%20%20", "tab%09id"],
                         ids=["nul", "300 chars", "blank", "control"])
def test_a_bad_session_id_is_a_400_on_every_route(client, bad: str) -> None:
    path = f"/api/sessions/{bad}"
    answers = [client.get(path), client.delete(path),
               client.post(f"{path}/messages", json={"text": "hi"}),
               client.post(f"{path}/approvals", json={"decisions": [
                   {"call_id": "c", "arguments_hash": "h", "approved": True}]})]
    for r in answers:
        assert "printable characters" in assert_json_error(r, 400), r.request
    assert "…" in client.delete("/api/sessions/" + "y" * 300).json()["error"]  # shortened


@pytest.mark.parametrize("bad", ["a\x00b", "x" * 300, " ", 7])
def test_a_bad_id_in_a_body_is_a_400_with_the_same_rule(client, bad: object) -> None:
    error = assert_json_error(client.post("/api/sessions", json={"id": bad}), 400)
    assert "printable characters" in error
    agui = {"threadId": bad, "runId": "r1", "state": {}, "tools": [], "context": [],
            "forwardedProps": {}, "messages": [{"id": "m1", "role": "user", "content": "hi"}]}
    assert assert_json_error(client.post("/api/agui", json=agui), 400)


def test_a_session_id_holding_a_slash_is_reachable_everywhere(client) -> None:
    sid = f"team/{uuid.uuid4().hex[:8]}/42"
    assert new_session(client, sid) == sid
    assert sid in {s["id"] for s in client.get("/api/sessions").json()}
    path = "/api/sessions/" + sid.replace("/", "%2F")  # as encodeURIComponent sends it
    assert client.get(path).json()["messages"] == []
    events = send(client, f"{path}/messages", "hello slash")
    assert events[-1][1]["result"]["state"] == "completed"
    got = client.get(path).json()
    assert got["id"] == sid and got["title"] == "hello slash"
    assert client.post("/api/sessions", json={"id": sid}).status_code == 409
    assert client.delete(path).json() == {"id": sid, "deleted": True}
    assert client.get(path).status_code == 404
    # a percent sign in an id is not decoded twice
    odd = f"50%25off-{uuid.uuid4().hex[:6]}"
    assert new_session(client, odd.replace("%25", "%")) == odd.replace("%25", "%")
    assert client.get(f"/api/sessions/{odd}").json()["id"] == odd.replace("%25", "%")


# -- whatever a client can send is stored and served back -----------------------------------

def check_hostile_round_trip(client) -> None:
    sid = new_session(client)
    events = send(client, f"/api/sessions/{sid}/messages", HOSTILE)
    assert events[-1][0] == "run_end", events[-1]
    assert events[-1][1]["result"]["state"] == "completed"
    assert events[0][1]["prompt"] == HOSTILE  # the stream carries the surrogate escaped
    got = client.get(f"/api/sessions/{sid}").json()
    assert got["messages"][0]["content"] == HOSTILE
    assert "\x00" not in got["title"] and got["title"].startswith("nul\ufffd bell\ufffd")
    listed = {s["id"]: s for s in client.get("/api/sessions").json()}
    assert listed[sid]["title"] == got["title"] and listed[sid]["messages"] == 4
    # the same text over AG-UI: the protocol's events carry it whole
    agui = {"threadId": f"agui-{sid}", "runId": "r1", "state": {}, "tools": [], "context": [],
            "forwardedProps": {}, "messages": [{"id": "m1", "role": "user", "content": HOSTILE}]}
    with client.stream("POST", "/api/agui", content=json.dumps(agui), headers=JSON) as r:
        assert r.status_code == 200, r.read()
        frames = [data for _, data in parse_sse(r.iter_lines())]
    assert frames[-1]["type"] == "RUN_FINISHED", frames[-1]
    args = next(f for f in frames if f["type"] == "TOOL_CALL_ARGS")
    assert json.loads(args["delta"]) == {"text": HOSTILE}


def test_nul_controls_and_lone_surrogates_round_trip_on_sqlite(client) -> None:
    check_hostile_round_trip(client)


def test_nul_controls_and_lone_surrogates_round_trip_on_postgres(postgres_url: str,
                                                                  tmp_path: Path) -> None:
    server = ServeProcess("--agent", "serve_agents:agent", "--store", postgres_url,
                          store=tmp_path / "unused.sqlite3").start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            check_hostile_round_trip(client)
    finally:
        server.stop()


# -- a failing store reaches the client as a clear JSON error -------------------------------

def test_a_store_that_is_not_a_database_answers_503_with_its_message(tmp_path: Path) -> None:
    store = tmp_path / "sessions.sqlite3"
    store.write_bytes(b"this is not a database, " * 200)
    server = ServeProcess("--agent", "serve_agents:agent", store=store).start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            answers = [client.get("/api/sessions"), client.post("/api/sessions"),
                       client.get("/api/sessions/s1"), client.delete("/api/sessions/s1"),
                       client.post("/api/sessions/s1/messages", json={"text": "hi"}),
                       client.post("/api/agui", json={
                           "threadId": "s1", "runId": "r1", "state": {}, "tools": [],
                           "context": [], "forwardedProps": {},
                           "messages": [{"id": "m1", "role": "user", "content": "hi"}]})]
            for r in answers:
                error = assert_json_error(r, 503)
                assert str(store) in error and "not a SQLite database" in error, error
            assert client.get("/api/health").json() == {"status": "ok"}
    finally:
        server.stop()


def test_a_damaged_message_answers_503_naming_the_message(client, served) -> None:
    sid = new_session(client)
    send(client, f"/api/sessions/{sid}/messages", "hello damage")
    with sqlite3.connect(served.store) as db:
        db.execute("UPDATE messages SET data = '{\"role\": ' WHERE session_id = ? AND seq = 2",
                   (sid,))
    error = assert_json_error(client.get(f"/api/sessions/{sid}"), 503)
    assert f"message 2 of session {sid!r}" in error and "cannot be read" in error
    r = client.post(f"/api/sessions/{sid}/messages", json={"text": "again"})
    assert "cannot be read" in assert_json_error(r, 503)
    assert client.delete(f"/api/sessions/{sid}").json()["deleted"] is True  # the way out


def test_an_unreachable_postgres_store_answers_503_without_its_password(
        tmp_path: Path) -> None:
    pytest.importorskip("psycopg", reason="pip install 'reactloop[postgres]'")
    password = "hunter2-" + uuid.uuid4().hex
    url = f"postgresql://reactloop:{password}@127.0.0.1:1/nowhere?connect_timeout=2"
    server = ServeProcess("--agent", "serve_agents:agent", "--store", url,
                          store=tmp_path / "unused.sqlite3").start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            for r in (client.get("/api/sessions"), client.post("/api/sessions")):
                error = assert_json_error(r, 503)
                assert "reactloop:***@127.0.0.1:1/nowhere" in error, error
                assert "cannot be reached" in error
                assert password not in r.text
    finally:
        server.stop()
    assert password not in server.output()


# -- tracebacks: the loopback dev UI gets them, remote clients only with --debug -------------

def tool_error(client) -> dict:
    sid = new_session(client)
    events = send(client, f"/api/sessions/{sid}/messages", "crash please")
    errors = [data for kind, data in events if kind == "tool_error"]
    assert len(errors) == 1 and events[-1][1]["result"]["state"] == "completed"
    result = errors[0]["result"]
    assert "the crash tool failed on purpose" in result["error"]
    return result


def test_loopback_without_a_token_sends_the_traceback(client) -> None:
    traceback = tool_error(client)["traceback"]
    assert "serve_agents.py" in traceback and "RuntimeError" in traceback


@pytest.mark.parametrize("debug", [False, True], ids=["token", "token+debug"])
def test_with_a_token_the_traceback_is_sent_only_with_debug(tmp_path: Path,
                                                            debug: bool) -> None:
    server = ServeProcess("--agent", "serve_agents:agent", "--token", SERVE_TOKEN,
                          *(["--debug"] if debug else []),
                          store=tmp_path / "sessions.sqlite3").start()
    try:
        headers = {"authorization": f"Bearer {SERVE_TOKEN}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=60) as client:
            result = tool_error(client)
    finally:
        server.stop()
    if debug:
        assert "serve_agents.py" in result["traceback"]
    else:
        assert result["traceback"] is None
        assert str(Path(__file__).parent) not in str(result)


# -- anything else unexpected: a JSON 500 naming the exception's type only ------------------

@contextmanager
def uvicorn_on_loopback(app) -> Iterator[str]:
    """``app`` served by uvicorn in a thread; the socket listens before the server starts, so
    requests wait in its backlog instead of the test waiting for the server."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    server = uvicorn.Server(uvicorn.Config(app, log_level="critical", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def test_an_unexpected_failure_is_a_json_500_without_its_details(tmp_path: Path) -> None:
    from reactloop.serve import create_app
    from reactloop.sessions import SQLiteStore
    from serve_agents import agent

    class Broken(SQLiteStore):
        def list(self):
            raise RuntimeError(f"broken on purpose in {tmp_path}/secret.py")

    with uvicorn_on_loopback(create_app(agent, Broken(tmp_path / "s.sqlite3"))) as url, \
            httpx.Client(base_url=url, timeout=60) as client:
        r = client.get("/api/sessions")
        error = assert_json_error(r, 500)
        assert "internal error (RuntimeError)" in error and "the server's log" in error
        assert str(tmp_path) not in r.text
        # the server closes the connection after a crash and says so: the client opens a new
        # one instead of meeting a reset on the old one
        assert r.headers["connection"] == "close"
        assert client.get("/api/health").json() == {"status": "ok"}


def _failing_sub_agent_app(tmp_path: Path, debug: bool):
    """A parent whose sub-agent's tool raises, served with a token (beyond loopback)."""
    from reactloop import Agent, ModelResponse, ToolCall
    from reactloop.serve import create_app
    from reactloop.testing import FunctionModel

    def crash() -> str:
        """Fail."""
        raise RuntimeError("broken on purpose")

    def sub_model(request):
        if request.messages[-1].role == "tool":
            return ModelResponse(text="the tool failed")
        return ModelResponse(tool_calls=[ToolCall("crash", {})])

    def parent_model(request):
        if request.messages[-1].role == "tool":
            return ModelResponse(text="done")
        return ModelResponse(tool_calls=[ToolCall("helper", {"task": "try"})])

    helper = Agent(model=FunctionModel(sub_model), name="helper", tools=[crash])
    parent = Agent(model=FunctionModel(parent_model), name="parent", tools=[helper.as_tool()])
    return create_app(parent, tmp_path / "s.sqlite3", token=SERVE_TOKEN, debug=debug)


@pytest.mark.parametrize("debug", [False, True], ids=["token", "token+debug"])
def test_a_sub_agents_traceback_reaches_no_client_without_debug(tmp_path: Path,
                                                               debug: bool) -> None:
    """SSE and AG-UI share one rule: a nested sub-run's tool_error (and any result's steps)
    carry no traceback unless the operator asked for details."""
    from ag_ui.core import RunAgentInput, UserMessage

    body = RunAgentInput(thread_id="agui-sub", run_id="r1", state={}, tools=[], context=[],
                         forwarded_props={},
                         messages=[UserMessage(id="u1", role="user", content="go")]
                         ).model_dump(by_alias=True, exclude_none=True, mode="json")
    headers = {"authorization": f"Bearer {SERVE_TOKEN}"}
    with uvicorn_on_loopback(_failing_sub_agent_app(tmp_path, debug)) as url, \
            httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        sse = client.post("/api/sessions/sse-sub/messages", json={"text": "go"}).text
        agui = client.post("/api/agui", json=body).text
    for text in (sse, agui):
        assert "broken on purpose" in text  # the error sentence reaches the client
        assert ("Traceback (most recent call last)" in text) is debug
        assert ("test_serve_errors.py" in text) is debug
