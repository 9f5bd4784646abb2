"""Issue 14 through ``reactloop serve``.

Approvals: a run that reaches a tool call needing approval ends ``waiting_for_approval``; the
decision travels over HTTP — the sessions API (``POST /api/sessions/{id}/approvals``) and AG-UI
(an ``interrupt`` outcome answered by ``resume`` entries, also with the official JavaScript
client). Decisions are bound to the call id and the arguments hash; wrong ones are refused
before anything runs. The served agent is tests/serve_agents.py: ``transfer N to NAME`` calls
``echo`` and ``transfer`` (``@tool(requires_approval=True)``) in one response, then answers
with the transfer's result.

Typed outputs: a typed agent served by uvicorn on loopback streams ``partial_output`` events
over SSE and as AG-UI ``CUSTOM`` events while the model streams its answer.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from conftest import free_port, parse_sse, require
from reactloop import Agent
from reactloop.testing import FunctionModel

httpx = pytest.importorskip("httpx", reason="pip install 'reactloop[test]'")
pytest.importorskip("ag_ui", reason="pip install 'reactloop[serve]'")

from ag_ui.core import Event, RunAgentInput, UserMessage  # noqa: E402
from pydantic import TypeAdapter  # noqa: E402

CLIENT_DIR = Path(__file__).parent / "agui_client"
EVENTS = TypeAdapter(Event)


@pytest.fixture
def client(served):
    with httpx.Client(base_url=served.url, timeout=60) as c:
        yield c


def sse(client, path: str, body: dict) -> list[tuple[str, dict]]:
    with client.stream("POST", path, json=body) as r:
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"].startswith("text/event-stream")
        return parse_sse(r.iter_lines())


def waiting_session(client, text: str = "transfer 50 to bob") -> tuple[str, dict, list]:
    """A new session whose run waits for approval: (id, the pending approval, its events)."""
    session_id = client.post("/api/sessions").json()["id"]
    events = sse(client, f"/api/sessions/{session_id}/messages", {"text": text})
    result = events[-1][1]["result"]
    assert result["state"] == "waiting_for_approval"
    [pending] = result["pending_approvals"]
    return session_id, pending, events


def decide(client, session_id: str, *decisions: dict) -> httpx.Response:
    return client.post(f"/api/sessions/{session_id}/approvals",
                       json={"decisions": list(decisions)})


def test_approve_over_http_continues_the_run_once(client) -> None:
    session_id, pending, events = waiting_session(client)
    types = [t for t, _ in events]
    assert types.count("tool_result") == 1 and "approval_requested" in types  # echo ran
    requested = next(d for t, d in events if t == "approval_requested")["approval"]
    assert requested == pending and pending["tool_name"] == "transfer"
    assert pending["arguments"] == {"amount": 50, "to": "bob"}
    # the session says what waits (also after a restart: it is read from the store)
    stored = client.get(f"/api/sessions/{session_id}").json()
    assert stored["pending_approvals"] == [pending]
    busy = client.post(f"/api/sessions/{session_id}/messages", json={"text": "hello"})
    assert busy.status_code == 409 and "waiting for approval" in busy.json()["error"]
    assert f"/api/sessions/{session_id}/approvals" in busy.json()["error"]

    decision = {"call_id": pending["call_id"], "arguments_hash": pending["arguments_hash"],
                "approved": True}
    resumed = sse(client, f"/api/sessions/{session_id}/approvals", {"decisions": [decision]})
    types = [t for t, _ in resumed]
    assert types[:2] == ["run_start", "approval_decided"]
    assert resumed[1][1]["decision"] == decision
    results = [d["result"] for t, d in resumed if t == "tool_result"]
    assert [(r["name"], r["result"]) for r in results] == [("transfer", "sent 50 to bob")]
    end = resumed[-1][1]["result"]
    assert end["state"] == "completed" and end["output"] == "Transfer done: sent 50 to bob"
    assert end["run_id"] == events[0][1]["run_id"]  # the same run went on
    assert client.get(f"/api/sessions/{session_id}").json()["pending_approvals"] == []

    again = decide(client, session_id, decision)
    assert again.status_code == 409 and "already approved" in again.json()["error"]
    tools = [m for m in client.get(f"/api/sessions/{session_id}").json()["messages"]
             if m["role"] == "tool"]
    assert [m["name"] for m in tools] == ["echo", "transfer"]  # each call answered once


def test_deny_and_edit_over_http(client) -> None:
    session_id, pending, _ = waiting_session(client, "transfer 70 to eve")
    denied = sse(client, f"/api/sessions/{session_id}/approvals", {"decisions": [
        {"call_id": pending["call_id"], "arguments_hash": pending["arguments_hash"],
         "approved": False, "reason": "eve is not a customer"}]})
    assert denied[-1][1]["result"]["output"] == (
        "Transfer refused: The user denied this tool call. Reason: eve is not a customer")

    session_id, pending, _ = waiting_session(client, "transfer 70 to carol")
    edited = sse(client, f"/api/sessions/{session_id}/approvals", {"decisions": [
        {"call_id": pending["call_id"], "arguments_hash": pending["arguments_hash"],
         "approved": True, "arguments": {"amount": 7, "to": "carol"}}]})
    output = edited[-1][1]["result"]["output"]
    assert output.startswith("Transfer done: (The user edited the arguments to")
    assert output.endswith("sent 7 to carol")


def test_wrong_decisions_are_refused_and_nothing_runs(client) -> None:
    session_id, pending, _ = waiting_session(client, "transfer 30 to dan")
    other = {"call_id": pending["call_id"], "arguments_hash": "0" * 64, "approved": True}
    mismatch = decide(client, session_id, other)
    assert mismatch.status_code == 409 and "other arguments" in mismatch.json()["error"]
    unknown = decide(client, session_id, {**other, "call_id": "nope"})
    assert unknown.status_code == 409 and "no tool call 'nope' waits" in unknown.json()["error"]
    malformed = decide(client, session_id, {"call_id": pending["call_id"], "approved": "yes"})
    assert malformed.status_code == 400 and "arguments_hash" in malformed.json()["error"]
    empty = client.post(f"/api/sessions/{session_id}/approvals", json={"decisions": []})
    assert empty.status_code == 400 and '"decisions"' in empty.json()["error"]
    # nothing ran and nothing was recorded: the call still waits, as it was
    stored = client.get(f"/api/sessions/{session_id}").json()
    assert stored["pending_approvals"] == [pending]
    assert [m["name"] for m in stored["messages"] if m["role"] == "tool"] == ["echo"]
    fresh = client.post("/api/sessions").json()["id"]
    nothing = decide(client, fresh, {**other, "arguments_hash": pending["arguments_hash"]})
    assert nothing.status_code == 409 and "waiting: none" in nothing.json()["error"]


# -- AG-UI --------------------------------------------------------------------------------------

def agui(client, body: dict) -> list[dict]:
    out = []
    for kind, data in sse(client, "/api/agui", body):
        assert kind == "message"
        event = EVENTS.validate_python(data)  # only what the protocol allows
        assert event.model_dump(by_alias=True, exclude_none=True, mode="json") == data
        out.append(data)
    return out


def run_input(thread_id: str, text: str, run_id: str, **extra: object) -> dict:
    data = RunAgentInput(thread_id=thread_id, run_id=run_id, state={}, tools=[], context=[],
                         forwarded_props={},
                         messages=[UserMessage(id="u1", role="user", content=text)]
                         ).model_dump(by_alias=True, exclude_none=True, mode="json")
    return {**data, **extra}


def test_agui_interrupt_then_resume_with_decisions(client) -> None:
    first = agui(client, run_input("agui-approve", "transfer 50 to bob", "run-1"))
    finished = first[-1]
    assert finished["type"] == "RUN_FINISHED" and finished["outcome"]["type"] == "interrupt"
    [interrupt] = finished["outcome"]["interrupts"]
    stored = client.get("/api/sessions/agui-approve").json()["pending_approvals"]
    [pending] = stored
    assert interrupt["id"] == f"{pending['call_id']}#{pending['arguments_hash']}"
    assert interrupt["reason"] == "tool_approval"
    assert interrupt["toolCallId"] == pending["call_id"]
    assert interrupt["metadata"] == {"tool_name": "transfer", "arguments": {
        "amount": 50, "to": "bob"}, "arguments_hash": pending["arguments_hash"]}
    schema = interrupt["responseSchema"]
    assert schema["required"] == ["approved"]
    assert schema["properties"]["arguments"]["properties"]["amount"]["type"] == "integer"
    # the gated call was announced but has no result yet; the other call has one
    starts = {e["toolCallId"]: e["toolCallName"] for e in first
              if e["type"] == "TOOL_CALL_START"}
    answered = {e["toolCallId"] for e in first if e["type"] == "TOOL_CALL_RESULT"}
    assert starts[pending["call_id"]] == "transfer" and pending["call_id"] not in answered
    assert len(answered) == 1
    assert {"type": "CUSTOM", "name": "reactloop.approval_requested"}.items() <= next(
        e for e in first if e.get("name") == "reactloop.approval_requested").items()

    # a new message is refused while the interrupt is open; a wrong answer too
    busy = client.post("/api/agui", json=run_input("agui-approve", "hello", "run-x"))
    assert busy.status_code == 409 and "waiting for approval" in busy.json()["error"]
    wrong = client.post("/api/agui", json=run_input("agui-approve", "", "run-x", resume=[
        {"interruptId": f"{pending['call_id']}#{'f' * 64}", "status": "resolved",
         "payload": {"approved": True}}]))
    assert wrong.status_code == 409 and "other arguments" in wrong.json()["error"]
    bad = client.post("/api/agui", json=run_input("agui-approve", "", "run-x", resume=[
        {"interruptId": interrupt["id"], "status": "resolved", "payload": {"ok": 1}}]))
    assert bad.status_code == 400 and '"approved": true|false' in bad.json()["error"]

    second = agui(client, run_input("agui-approve", "", "run-2", resume=[
        {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}]))
    assert second[0] == {"type": "RUN_STARTED", "threadId": "agui-approve", "runId": "run-2"}
    results = [e for e in second if e["type"] == "TOOL_CALL_RESULT"]
    assert [(r["toolCallId"], r["content"]) for r in results] == [
        (pending["call_id"], "sent 50 to bob")]
    assert second[-1]["outcome"] == {"type": "success"}
    assert second[-1]["result"]["output"] == "Transfer done: sent 50 to bob"


def test_agui_cancelled_interrupt_is_a_denial(client) -> None:
    first = agui(client, run_input("agui-cancel", "transfer 9 to mallory", "run-1"))
    [interrupt] = first[-1]["outcome"]["interrupts"]
    second = agui(client, run_input("agui-cancel", "", "run-2", resume=[
        {"interruptId": interrupt["id"], "status": "cancelled"}]))
    assert second[-1]["result"]["output"] == (
        "Transfer refused: The user denied this tool call. Reason: the user cancelled the "
        "approval")


def test_the_official_agui_js_client_answers_an_interrupt(served) -> None:
    node = shutil.which("node")
    require(node, "Node.js is not installed (apt-get install nodejs)")
    require((CLIENT_DIR / "node_modules" / "@ag-ui" / "client").is_dir(),
            "the AG-UI client is not installed: run `npm ci` in tests/agui_client")
    steps = ["transfer 12 to zoe", {"resume": {"approved": True, "arguments": {
        "amount": 13, "to": "zoe"}}}]
    proc = subprocess.run(
        [str(node), "run.mjs", f"{served.url}/api/agui", "agui-js-approve", json.dumps(steps)],
        cwd=CLIENT_DIR, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    first, second = (json.loads(line) for line in proc.stdout.splitlines())
    assert "error" not in first, first
    # the client read the interrupt outcome itself: it holds the pending interrupt
    [interrupt] = first["pendingInterrupts"]
    assert interrupt["reason"] == "tool_approval"
    assert interrupt["metadata"]["arguments"] == {"amount": 12, "to": "zoe"}
    assert "error" not in second, second
    assert second["pendingInterrupts"] == []
    assert second["events"][0] == "RUN_STARTED" and second["events"][-1] == "RUN_FINISHED"
    answer = [m["content"] for m in second["messages"] if m["role"] == "assistant"
              and m.get("content")]
    assert answer[-1].startswith("Transfer done: (The user edited the arguments to")
    assert answer[-1].endswith("sent 13 to zoe")


# -- typed outputs: partial answers while the model streams ------------------------------------

class Trip(BaseModel):
    cities: list[str]
    days: int


@pytest.fixture(scope="module")
def typed_url(tmp_path_factory) -> Iterator[str]:
    """A typed agent (``output_type=Trip``) served by uvicorn on 127.0.0.1, in this process."""
    import uvicorn

    from reactloop.serve import create_app

    model = FunctionModel(lambda request: '{"days": 5, "cities": ["Paris", "Lyon", "Nice"]}')
    app = create_app(Agent(model=model, output_type=Trip),
                     store=tmp_path_factory.mktemp("typed") / "s.sqlite3")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.01)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(15)


def test_partial_typed_output_streams_over_sse_and_agui(typed_url: str) -> None:
    with httpx.Client(base_url=typed_url, timeout=60) as client:
        session_id = client.post("/api/sessions").json()["id"]
        events = sse(client, f"/api/sessions/{session_id}/messages", {"text": "plan a trip"})
        partial = [d["output"] for t, d in events if t == "partial_output"]
        # each time a longer prefix of the streamed answer validated as a Trip
        assert [p["cities"] for p in partial] == [["Paris"], ["Paris", "Lyon"],
                                                  ["Paris", "Lyon", "Nice"]]
        assert partial[-1] == {"cities": ["Paris", "Lyon", "Nice"], "days": 5}
        end = events[-1][1]["result"]
        assert end["state"] == "completed" and end["output"] == partial[-1]

        frames = agui(client, run_input("typed-agui", "plan a trip", "run-1"))
        custom = [e["value"]["output"] for e in frames
                  if e["type"] == "CUSTOM" and e["name"] == "reactloop.partial_output"]
        assert custom[-1] == {"cities": ["Paris", "Lyon", "Nice"], "days": 5}
        assert frames[-1]["result"]["output"] == custom[-1]
