"""200 concurrent SSE sessions on one real server with a fake model: none dropped, none mixed up.

Every session sends ``wait GATE …``: its run starts, streams its first events and is held in
the model until the test sees all 200 runs in flight at once (``GET /api/sessions`` says
``running``), then ``release GATE`` lets them all go on together. Each stream, event and
stored history is checked against the session that asked. The clients are threads with the
standard library's ``http.client`` (loopback only). Correctness only: speed is measured by
``benchmarks/serve_load.py``."""

from __future__ import annotations

import http.client
import json
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest

from conftest import parse_sse

pytest.importorskip("starlette", reason="pip install 'reactloop[serve]'")

SESSIONS = 200
EXPECTED = ["run_start", "iteration_start", "request", "model_response", "tool_call",
            "tool_result", "iteration_start", "request", "text_delta", "model_response",
            "run_end"]


class Client:
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=300)

    def post(self, path: str, body: dict) -> tuple[int, bytes]:
        self.conn.request("POST", path, body=json.dumps(body).encode(),
                          headers={"Content-Type": "application/json"})
        response = self.conn.getresponse()
        return response.status, response.read()  # the whole stream, chunk by chunk

    def get(self, path: str) -> object:
        self.conn.request("GET", path)
        return json.loads(self.conn.getresponse().read())


def _collapse(types: list[str]) -> list[str]:
    out: list[str] = []
    for t in types:
        if not (t == "text_delta" and out and out[-1] == t):
            out.append(t)
    return out


def test_200_concurrent_sessions_none_dropped_none_mixed(served) -> None:
    gate = f"gate-{uuid.uuid4().hex[:12]}"
    ours: set[str] = set()
    lock = threading.Lock()

    def one(i: int) -> tuple[str, str, list[tuple[str, dict]]]:
        client = Client(served.url)
        status, body = client.post("/api/sessions", {})
        assert status == 201
        session_id = json.loads(body)["id"]
        with lock:
            ours.add(session_id)
        text = f"wait {gate} session {i}"
        status, body = client.post(f"/api/sessions/{session_id}/messages", {"text": text})
        assert status == 200, body
        return session_id, text, parse_sse(body.decode().split("\n"))

    monitor = Client(served.url)
    with ThreadPoolExecutor(SESSIONS) as pool:
        futures = [pool.submit(one, i) for i in range(SESSIONS)]
        deadline = time.monotonic() + 180
        while True:  # poll until every run is in flight at once
            listed = monitor.get("/api/sessions")
            assert isinstance(listed, list)
            running = sum(1 for s in listed if s["id"] in ours and s["running"])
            if running == SESSIONS or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert running == SESSIONS, f"only {running} of {SESSIONS} runs were in flight"
        status, body = monitor.post(f"/api/sessions/release-{gate}/messages",
                                    {"text": f"release {gate}"})
        assert status == 200 and f"released {gate}".encode() in body
        runs = [f.result(timeout=300) for f in futures]

    assert len(runs) == SESSIONS
    run_ids = set()
    for session_id, text, events in runs:
        assert _collapse([t for t, _ in events]) == EXPECTED, (session_id, events[-1])
        run_id = events[0][1]["run_id"]
        assert all(data["run_id"] == run_id for _, data in events)  # one run per stream
        run_ids.add(run_id)
        assert events[0][1]["prompt"] == text
        assert events[5][1]["result"]["result"] == text  # its own tool result
        result = events[-1][1]["result"]
        assert result["state"] == "completed"
        seen = json.loads(result["output"])
        assert seen["echo"] == text and seen["users"] == [text]  # its own history only
    assert len(run_ids) == SESSIONS
    listed = {s["id"]: s for s in monitor.get("/api/sessions")}  # type: ignore[union-attr]
    for session_id, text, _ in runs:
        assert listed[session_id]["messages"] == 4
        assert listed[session_id]["running"] is False
        assert listed[session_id]["title"] == text
    some = runs[123]
    stored = monitor.get(f"/api/sessions/{some[0]}")["messages"]  # type: ignore[index]
    assert [m["content"] for m in stored][:1] == [some[1]]
