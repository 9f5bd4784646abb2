"""Attachments through ``reactloop serve`` (issue 26): the REST body's ``attachments`` and the
AG-UI protocol's image/document input parts reach the model; responses and event streams
carry references, never the bytes; bad parts are a 400 before anything runs."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import pytest

from _files import pdf, png
from conftest import ServeProcess, parse_sse

httpx = pytest.importorskip("httpx", reason="pip install 'reactloop[test]'")
pytest.importorskip("ag_ui", reason="pip install 'reactloop[serve]'")

PNG = png(seed=3, size=40_000)
PDF = pdf("Invoice total: 42 EUR")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    server = ServeProcess("--agent", "attach_agents:seeing",
                          store=tmp_path_factory.mktemp("attach-serve") / "s.sqlite3").start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            yield c
    finally:
        server.stop()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_rest_messages_take_attachments_and_answer_with_references(
        client: httpx.Client) -> None:
    body = {"text": "What are these?", "attachments": [
        {"kind": "image", "data": _b64(PNG), "name": "shot.png"},
        {"kind": "document", "media_type": "application/pdf", "data": _b64(PDF)},
        {"kind": "image", "url": "https://example.com/cat.jpg"}]}
    with client.stream("POST", "/api/sessions/rest-pics/messages", json=body) as r:
        assert r.status_code == 200, r.read()
        raw = "\n".join(r.iter_lines())
    events = parse_sse(raw.splitlines())
    answer = events[-1][1]["result"]["output"]
    assert answer == (f"What are these? || image image/png {len(PNG)} | document "
                      f"application/pdf {len(PDF)} | image image/jpeg 0")
    assert _b64(PNG)[:200] not in raw  # the stream carries references only
    stored = client.get("/api/sessions/rest-pics").json()["messages"]
    assert [a.get("name") for a in stored[0]["attachments"]] == ["shot.png", None, "cat.jpg"]
    assert "data" not in json.dumps(stored[0]["attachments"])


@pytest.mark.parametrize(("attachments", "message"), [
    ([{"kind": "image", "data": _b64(b"not a picture")}], "not an image reactloop knows"),
    ([{"kind": "image", "url": "http://169.254.169.254/latest/meta-data"}],
     "local or private address"),
    ([{"kind": "video", "data": "aGk="}], "kind must be 'image' or 'document'"),
    ([{"kind": "image", "data": "!!!"}], "not base64"),
    ([{"kind": "image"}], "give data (base64) or a url"),
    ("x", "attachments must be a list"),
])
def test_bad_rest_attachments_are_400_and_nothing_runs(
        client: httpx.Client, attachments: object, message: str) -> None:
    r = client.post("/api/sessions/rest-bad/messages",
                    json={"text": "hi", "attachments": attachments})
    assert r.status_code == 400 and message in r.json()["error"]
    assert client.get("/api/sessions/rest-bad").status_code == 404


def _run_input(thread: str, content: object) -> dict[str, object]:
    return {"threadId": thread, "runId": "run-1", "state": None, "tools": [], "context": [],
            "forwardedProps": None,
            "messages": [{"id": "m1", "role": "user", "content": content}]}


def test_agui_image_and_document_parts_reach_the_model(client: httpx.Client) -> None:
    from ag_ui.core import RunAgentInput

    content = [{"type": "text", "text": "What are these?"},
               {"type": "image", "source": {"type": "data", "value": _b64(PNG),
                                            "mimeType": "image/png"}},
               {"type": "document", "source": {"type": "data", "value": _b64(PDF),
                                               "mimeType": "application/pdf"}},
               {"type": "image", "source": {"type": "url",
                                            "value": "https://example.com/cat.jpg"}}]
    RunAgentInput.model_validate(_run_input("agui-pics", content))  # the protocol's own type
    with client.stream("POST", "/api/agui", json=_run_input("agui-pics", content)) as r:
        assert r.status_code == 200
        raw = "\n".join(r.iter_lines())
    assert _b64(PNG)[:200] not in raw
    said = "".join(e["delta"] for _, e in parse_sse(raw.splitlines())
                   if e.get("type") == "TEXT_MESSAGE_CONTENT")
    assert said == (f"What are these? || image image/png {len(PNG)} | document "
                    f"application/pdf {len(PDF)} | image image/jpeg 0")


def test_agui_parts_reactloop_cannot_take_are_400(client: httpx.Client) -> None:
    audio = [{"type": "text", "text": "hi"},
             {"type": "audio", "source": {"type": "data", "value": "aGk=",
                                          "mimeType": "audio/wav"}}]
    r = client.post("/api/agui", json=_run_input("agui-audio", audio))
    assert r.status_code == 400 and "got ['audio', 'text']" in r.json()["error"]
    fake = [{"type": "text", "text": "hi"},
            {"type": "image", "source": {"type": "data", "value": _b64(PDF),
                                         "mimeType": "image/png"}}]
    r = client.post("/api/agui", json=_run_input("agui-fake", fake))
    assert r.status_code == 400 and "is a PDF" in r.json()["error"]
