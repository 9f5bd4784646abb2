"""Issue 29 through ``reactloop serve``: an MCP server asking the user while its tool runs
(elicitation, the classic live form) pauses the served run; the question reaches the clients
and their answer reaches the server:

- the sessions API: a ``custom`` event ``mcp_elicitation_request`` in the run's stream,
  ``GET|POST /api/sessions/{id}/elicitations`` (answers checked against the schema);
- AG-UI: an ``interrupt`` outcome answered by ``resume`` (the official JavaScript client);
- A2A: ``input-required``, answered by the task's next message (the official Python client);
- nobody answering: the question times out as ``cancel`` (the server hears it), a run's
  deadline ends it, a client that never comes back leaves no run behind.

Real parts: the FastMCP server tests/mcp_elicit_server.py (``ctx.elicit``) over stdio, the
agent of tests/elicit_agents.py (a FunctionModel), uvicorn on loopback in this process.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import ServeProcess, free_port, require

httpx = pytest.importorskip("httpx", reason="pip install 'reactloop[test]'")
pytest.importorskip("ag_ui", reason="pip install 'reactloop[serve]'")

import elicit_agents  # noqa: E402

pytestmark = pytest.mark.slow

CLIENT_DIR = Path(__file__).parent / "agui_client"
BOOKED_ADA = ('done: booked: {"budget": 80.5, "meal": "vegan", "name": "Ada", "seats": 2, '
              '"window": true}')


def serve(agent: Any, store: Path, **options: Any) -> Iterator[str]:
    """``agent`` served by uvicorn on 127.0.0.1 in this process; yields its URL."""
    import uvicorn

    from reactloop.serve import create_app

    app = create_app(agent, store=store, **options)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.01)  # polling for a condition
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(15)


@pytest.fixture(scope="module")
def url(tmp_path_factory) -> Iterator[str]:
    yield from serve(elicit_agents.agent, tmp_path_factory.mktemp("elicit") / "s.sqlite3")


@pytest.fixture
def client(url) -> Iterator[Any]:
    with httpx.Client(base_url=url, timeout=60) as c:
        yield c


class Stream:
    """A run's SSE stream read event by event (so a test can answer while it is open)."""

    def __init__(self, client: Any, path: str, body: dict) -> None:
        self._cm = client.stream("POST", path, json=body)
        response = self._cm.__enter__()
        assert response.status_code == 200, response.read()
        self._lines = response.iter_lines()
        self.events: list[tuple[str, dict]] = []

    def until(self, kind: str, name: str | None = None) -> dict:
        """Read up to the first event of ``kind`` (a ``custom`` one named ``name``)."""
        event, data = "message", []
        for line in self._lines:
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
            elif line == "" and data:
                item = json.loads("\n".join(data))
                self.events.append((event, item))
                data = []
                if event == kind and (name is None or item.get("name") == name):
                    return item
        raise AssertionError(f"the stream ended without {kind} {name or ''}: {self.events}")

    def question(self) -> dict:
        return self.until("custom", "mcp_elicitation_request")["data"]

    def end(self) -> dict:
        result = self.until("run_end")["result"]
        self._cm.__exit__(None, None, None)
        return result


def ask(client: Any, text: str = "book") -> tuple[str, Stream, dict]:
    session_id = client.post("/api/sessions").json()["id"]
    stream = Stream(client, f"/api/sessions/{session_id}/messages", {"text": text})
    return session_id, stream, stream.question()


def answer(client: Any, session_id: str, body: dict) -> Any:
    return client.post(f"/api/sessions/{session_id}/elicitations", json=body)


# -- the sessions API ---------------------------------------------------------------------------

def test_the_question_is_in_the_stream_and_the_answer_reaches_the_server(client) -> None:
    session_id, stream, question = ask(client)
    assert question["server"] == "asker" and question["message"] == "Who is travelling?"
    assert question["mode"] == "form"
    schema = question["schema"]
    assert schema["required"] == ["name", "seats"]
    assert schema["properties"]["seats"] | {"minimum": 1, "maximum": 8} == \
        schema["properties"]["seats"]
    assert schema["properties"]["meal"]["enum"] == ["none", "vegetarian", "vegan"]
    # the session says what waits, and refuses a new message meanwhile
    waiting = client.get(f"/api/sessions/{session_id}/elicitations").json()
    assert [q["id"] for q in waiting] == [question["id"]]
    stored = client.get(f"/api/sessions/{session_id}").json()
    assert [q["id"] for q in stored["pending_elicitations"]] == [question["id"]]
    busy = client.post(f"/api/sessions/{session_id}/messages", json={"text": "hello"})
    assert busy.status_code == 409 and "Who is travelling?" in busy.json()["error"]
    assert f"/api/sessions/{session_id}/elicitations" in busy.json()["error"]

    # answers the schema refuses are refused, naming the field; nothing reaches the server
    too_many = answer(client, session_id, {"id": question["id"], "action": "accept",
                                           "content": {"name": "Ada", "seats": 9}})
    assert too_many.status_code == 400 and "Seats: must be at most 8" in too_many.json()["error"]
    missing = answer(client, session_id, {"id": question["id"], "action": "accept",
                                          "content": {"seats": 2}})
    assert missing.status_code == 400 and "Name: an answer is required" in \
        missing.json()["error"]
    wrong_meal = answer(client, session_id, {"id": question["id"], "action": "accept",
                                             "content": {"name": "Ada", "seats": 2,
                                                         "meal": "fish"}})
    assert wrong_meal.status_code == 400 and "choose one of" in wrong_meal.json()["error"]
    unknown = answer(client, session_id, {"id": "nope", "action": "decline"})
    assert unknown.status_code == 409 and question["id"] in unknown.json()["error"]
    malformed = answer(client, session_id, {"id": question["id"]})
    assert malformed.status_code == 400 and '"action"' in malformed.json()["error"]

    given = answer(client, session_id, {"id": question["id"], "action": "accept", "content": {
        "name": "Ada", "seats": 2, "budget": 80.5, "window": True, "meal": "vegan"}})
    assert given.status_code == 200
    assert given.json() == {"id": question["id"], "action": "accept", "content": {
        "name": "Ada", "seats": 2, "budget": 80.5, "window": True, "meal": "vegan"}}
    result = stream.end()
    assert result["state"] == "completed" and result["output"] == BOOKED_ADA
    answered = [d["data"] for t, d in stream.events
                if t == "custom" and d["name"] == "mcp_elicitation"]
    assert answered == [{"server": "asker", "action": "accept", "message": "Who is travelling?"}]
    assert client.get(f"/api/sessions/{session_id}/elicitations").json() == []
    again = answer(client, session_id, {"id": question["id"], "action": "decline"})
    assert again.status_code == 409 and "answered already" in again.json()["error"]


def test_an_infinite_number_is_a_400_naming_the_field(client) -> None:
    session_id, stream, question = ask(client)
    body = json.dumps({"id": question["id"], "action": "accept",
                       "content": {"name": "Ada", "seats": float("inf")}})
    assert "Infinity" in body  # what Python's JSON (and the server's) reads back as a float
    refused = client.post(f"/api/sessions/{session_id}/elicitations", content=body,
                          headers={"content-type": "application/json"})
    assert refused.status_code == 400, refused.text
    assert "Seats: not a finite number" in refused.json()["error"]
    answer(client, session_id, {"id": question["id"], "action": "decline"})
    assert stream.end()["output"].startswith("done: not booked: decline")


def test_defaults_fill_what_the_answer_leaves_out(client) -> None:
    session_id, stream, question = ask(client)
    given = answer(client, session_id, {"id": question["id"], "action": "accept",
                                        "content": {"name": "Bo", "seats": "3"}})
    assert given.json()["content"] == {"name": "Bo", "seats": 3, "budget": 100.0,
                                       "window": False, "meal": "none"}
    assert stream.end()["output"] == ('done: booked: {"budget": 100.0, "meal": "none", '
                                      '"name": "Bo", "seats": 3, "window": false}')


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_declining_and_cancelling_reach_the_server(client, action: str) -> None:
    session_id, stream, question = ask(client)
    given = answer(client, session_id, {"id": question["id"], "action": action})
    assert given.json() == {"id": question["id"], "action": action, "content": None}
    result = stream.end()
    assert result["state"] == "completed" and result["output"] == f"done: not booked: {action}"


def test_two_questions_at_once_are_answered_each(client) -> None:
    session_id, stream, first = ask(client, "book and confirm")  # two calls in one response
    second = stream.question()
    assert {first["message"], second["message"]} == {"Who is travelling?", "Really?"}
    waiting = client.get(f"/api/sessions/{session_id}/elicitations").json()
    assert {q["id"] for q in waiting} == {first["id"], second["id"]}
    by_message = {q["message"]: q["id"] for q in (first, second)}
    answer(client, session_id, {"id": by_message["Really?"], "action": "accept",
                                "content": {"sure": "yes"}})
    answer(client, session_id, {"id": by_message["Who is travelling?"], "action": "decline"})
    assert stream.end()["output"] == "done: not booked: decline | confirmed: True"


def test_the_reference_servers_form_multi_selects_included(tmp_path) -> None:
    from _mcp_servers import EVERYTHING, NPM_HINT

    require(EVERYTHING.exists(), NPM_HINT)
    for url in serve(elicit_agents.everything, tmp_path / "s.sqlite3"):
        with httpx.Client(base_url=url, timeout=60) as client:
            session_id, stream, question = ask(client, "form")
            assert question["server"] == "everything" and question["schema"]["required"] == [
                "name"]
            wrong = answer(client, session_id, {"id": question["id"], "action": "accept",
                                                "content": {"name": "Ada",
                                                            "email": "ada@example"}})
            assert wrong.status_code == 400 and "not a valid email" in wrong.json()["error"]
            too_many = answer(client, session_id, {
                "id": question["id"], "action": "accept", "content": {
                    "name": "Ada", "untitledMultipleSelectEnum": ["Guitar", "Piano", "Drums",
                                                                  "Bass"]}})
            assert too_many.status_code == 400 and "choose at most 3" in \
                too_many.json()["error"]
            given = answer(client, session_id, {"id": question["id"], "action": "accept",
                                                "content": {
                "name": "Ada", "email": "ada@example.com", "integer": 7,
                "untitledMultipleSelectEnum": ["Piano", "Violin"],
                "titledMultipleSelectEnum": ["fish-2"], "legacyTitledEnum": "pet-2"}})
            assert given.status_code == 200, given.json()
            content = given.json()["content"]
            assert content["untitledSingleSelectEnum"] == "Monica"  # a default filled in
            assert content["number"] == 3.14
            text = stream.end()["output"]
            assert "User provided the requested information" in text
            assert "- Name: Ada" in text and "- Favorite Integer: 7" in text
            assert '"untitledMultipleSelectEnum": [\n      "Piano",\n      "Violin"\n    ]' in text
            assert '"legacyTitledEnum": "pet-2"' in text

            session_id, stream, question = ask(client, "sign in")  # a URL question
            assert question["mode"] == "url" and question["url"] == "https://example.com/sign-in"
            answer(client, session_id, {"id": question["id"], "action": "accept"})
            assert "User completed the URL elicitation flow" in stream.end()["output"]


# -- AG-UI --------------------------------------------------------------------------------------

def agui_js(url: str, thread_id: str, steps: list) -> list[dict]:
    node = shutil.which("node")
    require(node, "Node.js is not installed (apt-get install nodejs)")
    require((CLIENT_DIR / "node_modules" / "@ag-ui" / "client").is_dir(),
            "the AG-UI client is not installed: run `npm ci` in tests/agui_client")
    proc = subprocess.run(
        [str(node), "run.mjs", f"{url}/api/agui", thread_id, json.dumps(steps)],
        cwd=CLIENT_DIR, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    runs = [json.loads(line) for line in proc.stdout.splitlines()]
    for run in runs:
        assert "error" not in run, run
    return runs


def last_answer(run: dict) -> str:
    return [m["content"] for m in run["messages"] if m["role"] == "assistant"
            and m.get("content")][-1]


def test_the_official_agui_client_sees_the_question_and_answers_it(url) -> None:
    values = {"name": "Ada", "seats": 2, "budget": 80.5, "window": True, "meal": "vegan"}
    first, second = agui_js(url, f"agui-elicit-{uuid.uuid4().hex}",
                            ["book", {"resume": values}])
    # the client read the interrupt outcome itself: it holds the question
    [interrupt] = first["pendingInterrupts"]
    assert interrupt["reason"] == "mcp_elicitation"
    assert interrupt["id"].startswith("mcp-elicitation:")
    assert interrupt["message"] == "Who is travelling?"
    assert interrupt["responseSchema"]["required"] == ["name", "seats"]
    assert interrupt["metadata"]["server"] == "asker"
    assert first["events"][-1] == "RUN_FINISHED"
    assert [c["name"] for c in first["custom"]] == ["mcp_elicitation_request"]
    # the answer went to the server and the same reactloop run went on
    assert second["pendingInterrupts"] == []
    assert second["events"][0] == "RUN_STARTED" and second["events"][-1] == "RUN_FINISHED"
    assert "TOOL_CALL_RESULT" in second["events"]
    assert last_answer(second) == BOOKED_ADA


def test_an_agui_decline_and_a_cancelled_interrupt_reach_the_server(url) -> None:
    _, declined = agui_js(url, f"agui-decline-{uuid.uuid4().hex}",
                          ["book", {"resume": {"action": "decline"}}])
    assert last_answer(declined) == "done: not booked: decline"

    with httpx.Client(base_url=url, timeout=60) as client:
        thread = f"agui-cancel-{uuid.uuid4().hex}"
        first = agui(client, thread, "book")
        [interrupt] = first[-1]["outcome"]["interrupts"]
        busy = client.post("/api/agui", json=run_input(thread, "something else"))
        assert busy.status_code == 409 and "AG-UI resume" in busy.json()["error"]
        wrong = client.post("/api/agui", json=run_input(thread, "", resume=[
            {"interruptId": interrupt["id"], "status": "resolved",
             "payload": {"name": "Ada", "seats": 0}}]))
        assert wrong.status_code == 400 and "Seats: must be at least 1" in wrong.json()["error"]
        second = agui(client, thread, "", resume=[{"interruptId": interrupt["id"],
                                                   "status": "cancelled"}])
        assert second[0]["type"] == "RUN_STARTED"
        assert second[-1]["type"] == "RUN_FINISHED"
        assert second[-1]["result"]["output"] == "done: not booked: cancel"


def run_input(thread_id: str, text: str, **extra: Any) -> dict:
    from ag_ui.core import RunAgentInput, UserMessage

    data = RunAgentInput(thread_id=thread_id, run_id=uuid.uuid4().hex, state={}, tools=[],
                         context=[], forwarded_props={},
                         messages=[UserMessage(id="u1", role="user", content=text or "-")]
                         ).model_dump(by_alias=True, exclude_none=True, mode="json")
    return {**data, **extra}


def agui(client: Any, thread_id: str, text: str, **extra: Any) -> list[dict]:
    from ag_ui.core import Event
    from pydantic import TypeAdapter

    events = TypeAdapter(Event)
    out = []
    with client.stream("POST", "/api/agui", json=run_input(thread_id, text, **extra)) as r:
        assert r.status_code == 200, r.read()
        for line in r.iter_lines():
            if line.startswith("data:"):
                data = json.loads(line[5:])
                events.validate_python(data)  # only what the protocol allows
                out.append(data)
    return out


# -- A2A ----------------------------------------------------------------------------------------

def test_a2a_input_required_and_the_answer_in_the_task(url) -> None:
    pytest.importorskip("a2a.server", reason="pip install 'reactloop[a2a]'")
    from test_serve_a2a import final, message, send, task_id_of, text_of

    ctx = f"a2a-elicit-{uuid.uuid4().hex}"
    asked = send(url, message("book", ctx))
    status = final(asked)
    assert status["state"] == "TASK_STATE_INPUT_REQUIRED"
    text, data = status["message"]["parts"]
    assert text["text"].startswith("MCP server 'asker' asks: Who is travelling?")
    question = data["data"]["mcp_elicitation"]
    assert question["schema"]["required"] == ["name", "seats"]
    task_id = task_id_of(asked)
    # an answer the schema refuses: asked again, saying why; the question still waits
    again = final(send(url, message(None, ctx, task_id, data={"name": "Ada", "seats": 12})))
    assert again["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert text_of(again).startswith("answering 'Who is travelling?': Seats: must be at most 8"
                                     ". MCP server 'asker' asks: Who is travelling?")
    done = send(url, message(None, ctx, task_id, data={
        "name": "Ada", "seats": 2, "budget": 80.5, "window": True, "meal": "vegan"}))
    assert task_id_of(done) == task_id
    assert final(done)["state"] == "TASK_STATE_COMPLETED"
    assert text_of(final(done)) == BOOKED_ADA

    ctx = f"a2a-decline-{uuid.uuid4().hex}"
    asked = send(url, message("confirm", ctx), streaming=False)
    assert final(asked)["state"] == "TASK_STATE_INPUT_REQUIRED"
    done = send(url, message("decline", ctx, task_id_of(asked)), streaming=False)
    assert text_of(final(done)) == "done: not confirmed: decline"


def test_the_official_a2a_js_client_answers_the_question(url) -> None:
    node = shutil.which("node")
    require(node, "Node.js is not installed (apt-get install nodejs)")
    a2a_dir = Path(__file__).parent / "a2a_client"
    require((a2a_dir / "node_modules" / "@a2a-js" / "sdk").is_dir(),
            "the A2A JavaScript SDK is not installed: python scripts/test_setup.py "
            "(npm ci in tests/a2a_client)")
    proc = subprocess.run(
        [str(node), "elicit.mjs", url, f"js-{uuid.uuid4().hex}", "book",
         json.dumps({"name": "Ada", "seats": 2, "meal": "vegetarian"})],
        cwd=a2a_dir, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["asked"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    text, data = out["asked"]["parts"]
    assert text["text"].startswith("MCP server 'asker' asks: Who is travelling?")
    assert data["data"]["mcp_elicitation"]["schema"]["required"] == ["name", "seats"]
    assert out["answered"] == {"state": "TASK_STATE_COMPLETED", "text": (
        'done: booked: {"budget": 100.0, "meal": "vegetarian", "name": "Ada", "seats": 2, '
        '"window": false}')}


# -- nobody answers -----------------------------------------------------------------------------

def test_an_unanswered_question_times_out_as_cancel(tmp_path) -> None:
    for url in serve(elicit_agents.agent, tmp_path / "s.sqlite3", elicitation_timeout=0.5):
        with httpx.Client(base_url=url, timeout=60) as client:
            session_id, stream, _ = ask(client)
            result = stream.end()  # nobody answers
            assert result["state"] == "completed"
            assert result["output"] == "done: not booked: cancel"  # the server heard it
            assert client.get(f"/api/sessions/{session_id}/elicitations").json() == []

            # an AG-UI client that never comes back leaves no run behind
            thread = f"gone-{uuid.uuid4().hex}"
            first = agui(client, thread, "book")
            assert first[-1]["outcome"]["type"] == "interrupt"
            deadline = time.monotonic() + 60
            while client.get(f"/api/sessions/{thread}").json()["running"]:
                assert time.monotonic() < deadline, "the waiting run never ended"
                time.sleep(0.05)  # polling for a condition
            messages = client.get(f"/api/sessions/{thread}").json()["messages"]
            assert messages[-1]["content"] == "done: not booked: cancel"
            [interrupt] = first[-1]["outcome"]["interrupts"]
            too_late = client.post("/api/agui", json=run_input(thread, "", resume=[
                {"interruptId": interrupt["id"], "status": "resolved", "payload": {}}]))
            assert too_late.status_code == 409 and "timed out" in too_late.json()["error"]
            late = agui(client, thread, "confirm")  # the thread goes on
            assert late[-1]["outcome"]["type"] == "interrupt"


def test_a_client_that_goes_away_cancels_the_waiting_run(client) -> None:
    session_id, stream, _ = ask(client)
    stream._cm.__exit__(None, None, None)  # the sessions API client leaves mid-question
    deadline = time.monotonic() + 60
    while client.get(f"/api/sessions/{session_id}").json()["running"]:
        assert time.monotonic() < deadline, "the waiting run never ended"
        time.sleep(0.05)  # polling for a condition
    assert client.get(f"/api/sessions/{session_id}/elicitations").json() == []
    tool = [m for m in client.get(f"/api/sessions/{session_id}").json()["messages"]
            if m["role"] == "tool"]
    assert [m["name"] for m in tool] == ["asker_book"]  # answered as interrupted, history valid
    again = Stream(client, f"/api/sessions/{session_id}/messages", {"text": "confirm"})
    question = again.question()  # the session takes the next message
    answer(client, session_id, {"id": question["id"], "action": "accept",
                                "content": {"sure": True}})
    assert again.end()["output"] == "done: confirmed: True"


def test_a_run_with_a_deadline_ends_while_nobody_answers(tmp_path) -> None:
    for url in serve(elicit_agents.deadline, tmp_path / "s.sqlite3", elicitation_timeout=None):
        with httpx.Client(base_url=url, timeout=60) as client:
            session_id, stream, _ = ask(client)
            result = stream.end()
            assert result["state"] == "timed_out"
            assert client.get(f"/api/sessions/{session_id}/elicitations").json() == []
            assert not client.get(f"/api/sessions/{session_id}").json()["running"]


def test_reactloop_serve_elicitation_timeout(tmp_path) -> None:
    server = ServeProcess("--agent", "elicit_agents:agent", "--elicitation-timeout", "0.5",
                          store=tmp_path / "s.sqlite3").start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            _, stream, _ = ask(client)
            assert stream.end()["output"] == "done: not booked: cancel"
    finally:
        server.stop()
    from _cli import reactloop

    refused = reactloop(tmp_path, "serve", "--agent", "elicit_agents:agent",
                        "--elicitation-timeout", "0")
    assert refused.returncode == 2 and "--elicitation-timeout" in refused.stderr
    assert "Traceback" not in refused.stderr
