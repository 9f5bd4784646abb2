"""``reactloop serve`` end to end: secrets of the environment with ordinary-looking values,
quoted by a tool and streamed by the model three characters per delta, never reach a client
(SSE ``text_delta`` events, AG-UI ``TEXT_MESSAGE_CONTENT``, anything else in the response)."""

from __future__ import annotations

import json
import secrets
import uuid

import pytest

from conftest import ServeProcess, parse_sse

httpx = pytest.importorskip("httpx", reason="pip install 'reactloop[test]'")
pytest.importorskip("starlette", reason="pip install 'reactloop[serve]'")

pytestmark = pytest.mark.slow

VALUES = {
    "DB_PASSWORD": f"correcthorse{secrets.randbelow(10**6)}",
    "GITHUB_PAT": f"plainvalue{secrets.randbelow(10**6)}",
    "SERVICE_TOKEN": f"blue-river-{secrets.randbelow(10**6)}",
}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    server = ServeProcess("--agent", "redact_agents:agent", env=VALUES,
                          store=tmp_path_factory.mktemp("redact") / "s.sqlite3").start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            yield c
    finally:
        server.stop()


def leaks(text: str) -> list[str]:
    return [name for name, value in VALUES.items() if value in text]


def test_sse_text_deltas_never_join_into_a_secret(client) -> None:
    session_id = client.post("/api/sessions").json()["id"]
    with client.stream("POST", f"/api/sessions/{session_id}/messages",
                       json={"text": "what are the settings?"}) as r:
        assert r.status_code == 200
        raw = r.read().decode()
    events = parse_sse(raw.splitlines())
    deltas = [d["text"] for t, d in events if t == "text_delta"]
    joined = "".join(deltas)
    assert len(deltas) > 3 and leaks(joined) == [] and joined.count("[REDACTED]") == 3
    assert joined.startswith("The database password is [REDACTED], the PAT is")
    assert leaks(raw) == []  # the tool's result, the final answer, run_end: none either
    assert leaks(client.get(f"/api/sessions/{session_id}").text) == []


def test_agui_text_message_content_never_joins_into_a_secret(client) -> None:
    pytest.importorskip("ag_ui", reason="pip install 'reactloop[serve]'")
    from ag_ui.core import RunAgentInput, UserMessage

    body = RunAgentInput(thread_id=f"t-{uuid.uuid4().hex[:8]}", run_id="run-1", state={},
                         tools=[], context=[], forwarded_props={},
                         messages=[UserMessage(id="u1", role="user", content="settings?")]
                         ).model_dump(by_alias=True, exclude_none=True, mode="json")
    with client.stream("POST", "/api/agui", json=body,
                       headers={"accept": "text/event-stream"}) as r:
        assert r.status_code == 200
        raw = r.read().decode()
    events = [data for _, data in parse_sse(raw.splitlines())]
    joined = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert leaks(joined) == [] and "[REDACTED]" in joined
    assert leaks(raw) == [] and leaks(json.dumps(events)) == []
