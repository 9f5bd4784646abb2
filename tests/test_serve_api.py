"""``reactloop serve``'s HTTP API against the real server (a subprocess on 127.0.0.1).

The served agent is tests/serve_agents.py (a FunctionModel deciding from each request)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from conftest import SERVE_SECRET, ServeProcess, parse_sse

httpx = pytest.importorskip("httpx", reason="pip install 'reactloop[test]'")
pytest.importorskip("starlette", reason="pip install 'reactloop[serve]'")


@pytest.fixture
def client(served):
    with httpx.Client(base_url=served.url, timeout=60) as c:
        yield c


def send(client, session_id: str, text: str) -> list[tuple[str, dict]]:
    with client.stream("POST", f"/api/sessions/{session_id}/messages",
                       json={"text": text}) as r:
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"].startswith("text/event-stream")
        return parse_sse(r.iter_lines())


def new_session(client) -> str:
    r = client.post("/api/sessions")
    assert r.status_code == 201
    return r.json()["id"]


def collapse(types: list[str]) -> list[str]:
    """Event types with runs of text_delta folded into one."""
    out: list[str] = []
    for t in types:
        if not (t == "text_delta" and out and out[-1] == t):
            out.append(t)
    return out


def test_health(client) -> None:
    r = client.get("/api/health")
    assert r.status_code == 200
    assert r.json() == {"status": "ok"}


def test_info_names_the_agent_and_its_tools(client) -> None:
    info = client.get("/api/info").json()
    assert info["name"] == "serve-test" and info["model"] == "scripted-airport"
    assert {"echo", "count", "update_plan", "load_skill"} <= set(info["tools"])
    airport = next(s for s in info["skills"] if s["name"] == "airport")
    assert "data/pois.json" in airport["files"]


def test_sessions_crud(client) -> None:
    session_id = new_session(client)
    listed = {s["id"]: s for s in client.get("/api/sessions").json()}
    assert listed[session_id]["messages"] == 0 and listed[session_id]["running"] is False
    assert client.get(f"/api/sessions/{session_id}").json() == {
        "id": session_id, "title": "", "messages": [], "plan": None, "running": False,
        "pending_approvals": [], "pending_elicitations": []}

    send(client, session_id, "hello crud")
    got = client.get(f"/api/sessions/{session_id}").json()
    assert [m["role"] for m in got["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert got["messages"][0] == {"role": "user", "content": "hello crud"}
    assert got["title"] == "hello crud"

    chosen = client.post("/api/sessions", json={"id": "my-own-id"})
    assert chosen.status_code == 201 and chosen.json() == {"id": "my-own-id"}
    assert client.post("/api/sessions", json={"id": "my-own-id"}).status_code == 409

    assert client.delete(f"/api/sessions/{session_id}").json() == {"id": session_id,
                                                                   "deleted": True}
    assert client.get(f"/api/sessions/{session_id}").status_code == 404
    assert client.delete(f"/api/sessions/{session_id}").status_code == 404
    assert session_id not in {s["id"] for s in client.get("/api/sessions").json()}


def test_message_streams_every_event_in_order_and_ends_with_run_end(client) -> None:
    session_id = new_session(client)
    events = send(client, session_id, "hello order")
    types = [t for t, _ in events]
    assert collapse(types) == [
        "run_start", "iteration_start", "request", "model_response", "tool_call",
        "tool_result", "iteration_start", "request", "text_delta", "model_response", "run_end"]
    for kind, data in events:  # `event:` is the type, `data:` the event's own JSON
        assert data["type"] == kind
    run_id = events[0][1]["run_id"]
    assert all(data["run_id"] == run_id for _, data in events)
    assert events[0][1]["prompt"] == "hello order"
    assert events[4][1]["call"]["name"] == "echo"
    assert events[5][1]["result"]["result"] == "hello order"
    result = events[-1][1]["result"]  # RunResult.to_dict()
    assert result["state"] == "completed" and result["run_id"] == run_id
    assert json.loads(result["output"]) == {
        "echo": "hello order", "users": ["hello order"], "tools": json.loads(
            result["output"])["tools"]}
    streamed = "".join(d["text"] for t, d in events if t == "text_delta")
    assert streamed == result["output"]
    assert len(result["messages"]) == 4


def test_a_second_message_to_a_busy_session_gets_409(client) -> None:
    session_id = new_session(client)
    gate = f"gate-{uuid.uuid4().hex}"
    with client.stream("POST", f"/api/sessions/{session_id}/messages",
                       json={"text": f"wait {gate}"}) as first:
        lines = first.iter_lines()
        assert next(lines) == "event: run_start"  # the run has started and now waits
        busy = client.post(f"/api/sessions/{session_id}/messages", json={"text": "hello"})
        assert busy.status_code == 409
        assert "still running" in busy.json()["error"]
        assert client.delete(f"/api/sessions/{session_id}").status_code == 409
        listed = {s["id"]: s for s in client.get("/api/sessions").json()}
        assert listed[session_id]["running"] is True
        # another session runs meanwhile; its message lets the first run go on
        released = send(client, new_session(client), f"release {gate}")
        assert released[-1][1]["result"]["output"] == f"released {gate}"
        rest = parse_sse(["event: run_start", *lines])
    assert rest[-1][0] == "run_end"
    assert json.loads(rest[-1][1]["result"]["output"])["echo"] == f"wait {gate}"
    assert send(client, session_id, "hello after")[-1][1]["result"]["state"] == "completed"
    assert {s["id"]: s for s in client.get("/api/sessions").json()}[session_id]["running"] is False


def test_sessions_never_see_each_others_state(client) -> None:
    airport, plain = new_session(client), new_session(client)
    send(client, airport, "where is gate B12?")  # loads the airport skill in this session
    seen = json.loads(send(client, plain, "hello plain")[-1][1]["result"]["output"])
    assert seen["users"] == ["hello plain"]
    assert "show_poi" not in seen["tools"]  # the other session's skill stays there
    again = json.loads(send(client, airport, "hello airport")[-1][1]["result"]["output"])
    assert again["users"] == ["where is gate B12?", "hello airport"]
    assert "show_poi" in again["tools"]  # restored from this session's own history


def test_plan_updates_stream_and_the_session_keeps_the_plan(client) -> None:
    session_id = new_session(client)
    events = send(client, session_id, "plan it")
    plans = [d["plan"] for t, d in events if t == "plan_update"]
    assert [[s["status"] for s in p["steps"]] for p in plans] == [
        ["pending", "pending"], ["completed", "pending"]]
    assert events[-1][1]["result"]["plan"]["goal"] == "Answer with a plan"
    plan = client.get(f"/api/sessions/{session_id}").json()["plan"]
    assert plan["steps"][0] == {"description": "Think", "status": "completed",
                                "result": "thought"}
    assert plan["current_step"] == 2


def test_tool_ui_events_arrive_as_custom_events(client) -> None:
    events = send(client, new_session(client), "where is gate B12?")
    ui = [d["data"] for t, d in events if t == "custom" and d["name"] == "ui"]
    assert ui == [{"action": "show_poi", "poi_id": 111, "name": "Gate 12",
                   "building": "Terminal B"}]
    assert "Gate 12 is in Terminal B" in events[-1][1]["result"]["output"]


def test_a_failing_model_ends_the_stream_with_run_end_error(client) -> None:
    events = send(client, new_session(client), "fail now")
    assert events[-1][0] == "run_end"
    result = events[-1][1]["result"]
    assert result["state"] == "error" and "failed on purpose" in result["error"]


def test_no_secret_in_any_response(client, served) -> None:
    session_id = new_session(client)
    events = send(client, session_id, "secret please")
    raw = json.dumps(events)
    assert SERVE_SECRET not in raw and "[REDACTED]" in raw
    output = events[-1][1]["result"]["output"]  # the stream's JSON stayed valid
    assert output.startswith("The key is [REDACTED] (sent as Authorization: ")
    stored = client.get(f"/api/sessions/{session_id}").text
    assert SERVE_SECRET not in stored and "[REDACTED]" in stored
    assert SERVE_SECRET not in client.get("/api/info").text


def test_bad_requests_get_clear_errors(client) -> None:
    session_id = new_session(client)
    url = f"/api/sessions/{session_id}/messages"
    assert client.post(url, json={"text": "  "}).json()["error"].startswith('send {"text"')
    assert client.post(url, content=b"{nope", headers={"content-type": "application/json"}
                       ).status_code == 400
    assert client.post(url, content=b'{"text": "x"}', headers={"content-type": "text/plain"}
                       ).status_code == 415
    too_big = client.post(url, json={"text": "x" * (5 * 1024 * 1024)})
    assert too_big.status_code == 413 and "larger than" in too_big.json()["error"]
    assert client.get("/api/nothing-here").json() == {"error": "no such path: /api/nothing-here"}
    assert client.get("/api/sessions/nobody").status_code == 404
    assert client.get("/api/skills/airport/files/../tools.py").status_code == 404
    assert client.get("/api/skills/airport/files/data/pois.json").json()[0]["id"] == 100


def test_host_and_origin_checks(client, served) -> None:
    rebound = client.get("/api/health", headers={"host": "attacker.example:8000"})
    assert rebound.status_code == 403 and "DNS rebinding" in rebound.json()["error"]
    cross = client.post("/api/sessions", headers={"origin": "http://attacker.example"})
    assert cross.status_code == 403 and "cross-origin" in cross.json()["error"]
    same = client.get("/api/health", headers={"origin": served.url})
    assert same.status_code == 200
    assert client.get("/api/health", headers={"host": "localhost"}).status_code == 200


def test_the_dev_ui_is_served_with_a_strict_policy(client) -> None:
    page = client.get("/")
    assert page.status_code == 200 and '<script type="module" src="/static/js/app.js">' in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"
    for path in ("/static/app.css", "/static/js/app.js", "/static/js/map.js",
                 "/static/js/trace.js", "/static/js/chat.js", "/static/js/api.js",
                 "/static/js/dom.js"):
        assert client.get(path).status_code == 200, path


def test_history_survives_a_server_restart(tmp_path: Path) -> None:
    store = tmp_path / "restart.sqlite3"
    first = ServeProcess("--agent", "serve_agents:agent", store=store).start()
    try:
        with httpx.Client(base_url=first.url, timeout=60) as c:
            assert send(c, "kept", "hello before")[-1][1]["result"]["state"] == "completed"
    finally:
        first.stop()
    assert first.proc is not None and first.proc.returncode is not None
    second = ServeProcess("--agent", "serve_agents:agent", store=store).start()
    try:
        with httpx.Client(base_url=second.url, timeout=60) as c:
            got = c.get("/api/sessions/kept").json()
            assert got["messages"][0]["content"] == "hello before"
            assert len(got["messages"]) == 4
            seen = json.loads(send(c, "kept", "hello after")[-1][1]["result"]["output"])
            assert seen["users"] == ["hello before", "hello after"]
    finally:
        second.stop()


# -- the command line --------------------------------------------------------------------------

def test_serve_builds_the_agent_from_the_options_of_run(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="pip install 'reactloop[local]'")
    skills = Path(__file__).resolve().parents[1] / "examples" / "skills"
    server = ServeProcess("--skills", str(skills), "--tools", "serve_agents:echo",
                          "--max-iterations", "3", store=tmp_path / "options.sqlite3").start()
    try:
        info = httpx.get(f"{server.url}/api/info", timeout=30).json()
    finally:
        server.stop()
    assert info["model"].startswith("local:")  # the default model, loaded on first use
    assert info["tools"] == ["echo", "load_skill", "load_skill_reference"]
    assert {s["name"] for s in info["skills"]} == {"airport", "book-flight", "data-analyst"}


def _serve_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "REACTLOOP_SERVE_TOKEN"}
    return subprocess.run([sys.executable, "-m", "reactloop", "serve", *args],
                          capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).parent, env={**environ, **(env or {})})


def test_cli_refuses_an_exposed_host_without_a_token() -> None:
    proc = _serve_cli("--agent", "serve_agents:agent", "--host", "0.0.0.0", "--port", "0")
    assert proc.returncode == 1
    assert proc.stderr.startswith("reactloop: host '0.0.0.0' exposes the server")
    assert "--token" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    short = _serve_cli("--agent", "serve_agents:agent", "--host", "127.0.0.2", "--port", "0",
                       env={"REACTLOOP_SERVE_TOKEN": "short"})
    assert short.returncode == 1 and "shorter than 16 characters" in short.stderr


def test_cli_agent_option_errors_are_one_line() -> None:
    mixed = _serve_cli("--agent", "serve_agents:agent", "--model", "openai:gpt-4o")
    assert mixed.returncode == 2 and "--agent already defines the agent; drop --model" \
        in mixed.stderr and "Traceback" not in mixed.stderr
    wrong = _serve_cli("--agent", "serve_agents:echo")
    assert wrong.returncode == 2 and "not a reactloop Agent" in wrong.stderr


def test_cli_help_lists_serve() -> None:
    out = subprocess.run([sys.executable, "-m", "reactloop", "serve", "--help"],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    for option in ("--agent", "--host", "--port", "--store", "--token", "REACTLOOP_SERVE_TOKEN",
                   "--skills", "--mcp"):
        assert option in out, option


def test_the_server_stack_is_imported_only_when_serving() -> None:
    code = ("import sys, reactloop, reactloop.cli, reactloop.serve\n"
            "print(','.join(m for m in ('starlette', 'uvicorn', 'ag_ui') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout.strip()
    assert out == ""
