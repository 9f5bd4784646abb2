"""``POST /api/agui``: the AG-UI protocol, checked with the protocol's own types and driven by
the official JavaScript client (``@ag-ui/client`` from npm, run by the machine's Node)."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from conftest import SERVE_SECRET, parse_sse, require

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


def run_input(thread_id: str, text: str, run_id: str = "run-1") -> dict:
    """A RunAgentInput built with the protocol's own models, as a client sends it."""
    return RunAgentInput(thread_id=thread_id, run_id=run_id, state={}, tools=[], context=[],
                         forwarded_props={},
                         messages=[UserMessage(id="u1", role="user", content=text)]
                         ).model_dump(by_alias=True, exclude_none=True, mode="json")


def agui(client, thread_id: str, text: str) -> list[dict]:
    with client.stream("POST", "/api/agui", json=run_input(thread_id, text),
                       headers={"accept": "text/event-stream"}) as r:
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"].startswith("text/event-stream")
        frames = parse_sse(r.iter_lines())
    out = []
    for kind, data in frames:
        assert kind == "message"  # the protocol's encoder sends bare `data:` lines
        event = EVENTS.validate_python(data)  # raises on anything the protocol does not allow
        # nothing extra, nothing misnamed: the frame is exactly the model's own dump
        assert event.model_dump(by_alias=True, exclude_none=True, mode="json") == data
        out.append(data)
    return out


def check_order(events: list[dict]) -> None:
    """The protocol's sequencing rules: one run, messages and tool calls opened before use
    and closed after, steps balanced, every tool call answered."""
    types = [e["type"] for e in events]
    assert types[0] == "RUN_STARTED" and types[-1] in ("RUN_FINISHED", "RUN_ERROR")
    assert types.count("RUN_STARTED") == 1
    open_text: set[str] = set()
    calls: dict[str, list[str]] = {}
    steps: list[str] = []
    for e in events:
        t = e["type"]
        if t == "TEXT_MESSAGE_START":
            open_text.add(e["messageId"])
        elif t == "TEXT_MESSAGE_CONTENT":
            assert e["messageId"] in open_text and e["delta"]
        elif t == "TEXT_MESSAGE_END":
            open_text.remove(e["messageId"])
        elif t.startswith("TOOL_CALL_"):
            calls.setdefault(e["toolCallId"], []).append(t.removeprefix("TOOL_CALL_"))
        elif t == "STEP_STARTED":
            steps.append(e["stepName"])
        elif t == "STEP_FINISHED":
            assert steps.pop() == e["stepName"]
    assert not open_text and not steps
    assert all(seq == ["START", "ARGS", "END", "RESULT"] for seq in calls.values()), calls


def test_a_run_is_a_valid_agui_stream(client) -> None:
    events = agui(client, "agui-airport", "where is gate B12?")
    check_order(events)
    assert events[0] == {"type": "RUN_STARTED", "threadId": "agui-airport", "runId": "run-1"}
    names = [e["toolCallName"] for e in events if e["type"] == "TOOL_CALL_START"]
    assert names == ["load_skill", "search_pois", "show_poi"]
    args = [json.loads(e["delta"]) for e in events if e["type"] == "TOOL_CALL_ARGS"]
    assert args[2] == {"poi_id": 111}
    custom = [e for e in events if e["type"] == "CUSTOM"]
    assert {"type": "CUSTOM", "name": "ui", "value": {
        "action": "show_poi", "poi_id": 111, "name": "Gate 12", "building": "Terminal B"}} \
        in custom
    text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text.startswith("Gate 12 is in Terminal B")
    finished = events[-1]
    assert finished["type"] == "RUN_FINISHED" and finished["outcome"] == {"type": "success"}
    assert finished["result"]["output"] == text and finished["result"]["state"] == "completed"
    # the thread is the reactloop session: its history is stored
    stored = client.get("/api/sessions/agui-airport").json()["messages"]
    assert stored[0]["content"] == "where is gate B12?" and stored[-1]["content"] == text


def test_plan_updates_are_state_snapshots(client) -> None:
    events = agui(client, "agui-plan", "plan it")
    check_order(events)
    snapshots = [e["snapshot"]["plan"] for e in events if e["type"] == "STATE_SNAPSHOT"]
    assert [[s["status"] for s in p["steps"]] for p in snapshots] == [
        ["pending", "pending"], ["completed", "pending"]]
    assert snapshots[-1]["current_step"] == 2


def test_a_failed_run_is_run_error(client) -> None:
    events = agui(client, "agui-fail", "fail now")
    check_order(events)
    assert events[-1]["type"] == "RUN_ERROR"
    assert "failed on purpose" in events[-1]["message"]
    assert "RUN_FINISHED" not in [e["type"] for e in events]


def test_secrets_are_redacted_in_agui_too(client) -> None:
    events = agui(client, "agui-secret", "secret please")
    assert SERVE_SECRET not in json.dumps(events)
    assert "[REDACTED]" in json.dumps(events)


def test_invalid_inputs_are_400_and_a_busy_thread_409(client) -> None:
    bad = client.post("/api/agui", json={"threadId": "t"})
    assert bad.status_code == 400 and "not an AG-UI RunAgentInput" in bad.json()["error"]
    last_assistant = run_input("agui-bad", "hi")
    last_assistant["messages"].append({"id": "a1", "role": "assistant", "content": "hello"})
    r = client.post("/api/agui", json=last_assistant)
    assert r.status_code == 400 and "the last message is a 'assistant' message" in r.json()[
        "error"]
    gate = f"gate-{uuid.uuid4().hex}"
    with client.stream("POST", "/api/agui", json=run_input("agui-busy", f"wait {gate}")) as r:
        lines = r.iter_lines()
        assert '"RUN_STARTED"' in next(lines)
        assert client.post("/api/agui", json=run_input("agui-busy", "hi")).status_code == 409
        assert agui(client, "agui-releaser", f"release {gate}")[-1]["type"] == "RUN_FINISHED"
        rest = [line for line in lines if line.startswith("data:")]
    assert '"RUN_FINISHED"' in rest[-1]


# -- the official JavaScript client -------------------------------------------------------------

def test_the_official_agui_js_client_drives_the_endpoint(served) -> None:
    node = shutil.which("node")
    require(node, "Node.js is not installed (apt-get install nodejs)")
    require((CLIENT_DIR / "node_modules" / "@ag-ui" / "client").is_dir(),
            "the AG-UI client is not installed: run `npm ci` in tests/agui_client")
    proc = subprocess.run(
        [str(node), "run.mjs", f"{served.url}/api/agui", "agui-js",
         json.dumps(["where is gate B12?", "plan it"])],
        cwd=CLIENT_DIR, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    first, second = (json.loads(line) for line in proc.stdout.splitlines())
    assert "error" not in first, first
    assert first["events"][0] == "RUN_STARTED" and first["events"][-1] == "RUN_FINISHED"
    assert {"name": "ui", "value": {"action": "show_poi", "poi_id": 111, "name": "Gate 12",
                                    "building": "Terminal B"}} in first["custom"]
    # the client assembled the messages from the events itself
    calls = [c["function"]["name"] for m in first["newMessages"] if m["role"] == "assistant"
             for c in m.get("toolCalls") or []]
    assert calls == ["load_skill", "search_pois", "show_poi"]
    results = [m for m in first["newMessages"] if m["role"] == "tool"]
    assert len(results) == 3 and json.loads(results[2]["content"])["name"] == "Gate 12"
    answer = [m["content"] for m in first["newMessages"] if m["role"] == "assistant"
              and m.get("content")]
    assert answer[-1].startswith("Gate 12 is in Terminal B")
    assert first["result"]["state"] == "completed"
    # second run on the same thread: the client sends its whole history, the server runs the
    # new user message on the stored session; the plan arrives as state
    assert "error" not in second, second
    assert second["state"]["plan"]["goal"] == "Answer with a plan"
    assert second["messages"][-1]["content"] == "Planned and done."
    assert "STATE_SNAPSHOT" in second["events"]
