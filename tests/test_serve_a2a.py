"""``reactloop serve`` over A2A (protocol 1.0), driven by the official clients: the Python
``a2a-sdk`` client and the JavaScript ``@a2a-js/sdk`` client (tests/a2a_client, run by the
machine's Node), against servers started once per module (tests/a2a_agents.py)."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import SERVE_TOKEN, ServeProcess, require

httpx = pytest.importorskip("httpx", reason="pip install 'reactloop[test]'")
pytest.importorskip("a2a.server", reason="pip install 'reactloop[a2a]'")
pytest.importorskip("starlette", reason="pip install 'reactloop[serve]'")

from a2a.client import ClientConfig, create_client  # noqa: E402
from a2a.types import (  # noqa: E402
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
)
from google.protobuf.json_format import MessageToDict  # noqa: E402

CLIENT_DIR = Path(__file__).parent / "a2a_client"


@pytest.fixture(scope="module")
def a2a_server(tmp_path_factory) -> Iterator[ServeProcess]:
    server = ServeProcess("--agent", "a2a_agents:agent",
                          store=tmp_path_factory.mktemp("a2a") / "sessions.sqlite3").start()
    yield server
    server.stop()


def message(text: str | None, context_id: str, task_id: str = "",
            data: Any = None) -> Message:
    parts = [] if text is None else [Part(text=text)]
    if data is not None:
        from google.protobuf import struct_pb2
        from google.protobuf.json_format import ParseDict

        value = struct_pb2.Value()
        ParseDict(data, value)
        parts.append(Part(data=value))
    return Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex, context_id=context_id,
                   task_id=task_id, parts=parts)


async def _client(url: str, *, streaming: bool = True, token: str | None = None) -> Any:
    http = httpx.AsyncClient(timeout=60, headers={"authorization": f"Bearer {token}"}
                             if token else {})
    return await create_client(url, ClientConfig(streaming=streaming, httpx_client=http))


def send(url: str, msg: Message, *, streaming: bool = True) -> list[dict[str, Any]]:
    """Every StreamResponse the official client yields for ``msg``, as JSON."""
    async def go() -> list[dict[str, Any]]:
        client = await _client(url, streaming=streaming)
        try:
            return [MessageToDict(r) async for r in client.send_message(
                SendMessageRequest(message=msg))]
        finally:
            await client.close()
    return asyncio.run(go())


def final(responses: list[dict[str, Any]]) -> dict[str, Any]:
    """The task's last status (from a task or a status update)."""
    last = responses[-1]
    return (last.get("task") or last["statusUpdate"])["status"]


def text_of(status: dict[str, Any]) -> str:
    return "\n".join(p.get("text", "") for p in status["message"]["parts"])


def task_id_of(responses: list[dict[str, Any]]) -> str:
    first = responses[0]
    return first["task"]["id"] if "task" in first else first["statusUpdate"]["taskId"]


def rpc(url: str, body: Any, **headers: str) -> httpx.Response:
    return httpx.post(f"{url}/api/a2a", content=body if isinstance(body, bytes)
                      else json.dumps(body), headers={"content-type": "application/json",
                                                      "a2a-version": "1.0", **headers},
                      timeout=30)


# -- the card -----------------------------------------------------------------------------------

def test_the_agent_card_describes_the_agent(a2a_server: ServeProcess) -> None:
    card = httpx.get(f"{a2a_server.url}/.well-known/agent-card.json").json()
    assert card["name"] == "a2a-test"
    assert card["description"] == "Echoes, asks and transfers (a test agent)."
    assert card["version"]
    assert card["supportedInterfaces"] == [{
        "url": f"{a2a_server.url}/api/a2a", "protocolBinding": "JSONRPC",
        "protocolVersion": "1.0"}]
    assert card["capabilities"]["streaming"] is True
    skills = {s["id"]: s for s in card["skills"]}
    assert set(skills) == {"tool:echo", "tool:crash", "tool:transfer"}  # not loop control
    assert skills["tool:transfer"]["description"] == "Send money (a person approves each call)."
    # the card is public: a secret in a description is redacted like any response
    assert skills["tool:echo"]["description"] == "Return the text unchanged (not [REDACTED])."
    assert "securitySchemes" not in card  # loopback without a token


# -- the official Python client -----------------------------------------------------------------

def test_a_message_runs_on_the_session_named_by_the_context(a2a_server: ServeProcess) -> None:
    ctx = f"ctx-{uuid.uuid4().hex}"
    first = send(a2a_server.url, message("hi there", ctx), streaming=False)
    assert len(first) == 1 and first[0]["task"]["contextId"] == ctx
    task = first[0]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["name"] == "answer"
    assert task["artifacts"][0]["parts"] == [{"text": "echo: hi there (turn 1)"}]
    # the same context continues the same conversation (a new task)
    second = send(a2a_server.url, message("and again", ctx), streaming=False)
    assert second[0]["task"]["id"] != task["id"]
    assert text_of(final(second)) == "echo: and again (turn 2)"
    stored = httpx.get(f"{a2a_server.url}/api/sessions/{ctx}").json()["messages"]
    assert [m["content"] for m in stored if m["role"] == "user"] == ["hi there", "and again"]


def test_streaming_sends_the_run_as_task_updates(a2a_server: ServeProcess) -> None:
    responses = send(a2a_server.url, message("stream me", f"s-{uuid.uuid4().hex}"))
    kinds = [next(iter(r)) for r in responses]
    assert kinds[0] == "task" and responses[0]["task"]["status"]["state"] == \
        "TASK_STATE_SUBMITTED"
    assert kinds[-2:] == ["artifactUpdate", "statusUpdate"]
    events = [r["statusUpdate"]["metadata"]["reactloop"]["event"] for r in responses
              if "statusUpdate" in r and "event" in r["statusUpdate"].get("metadata", {}).get(
                  "reactloop", {})]
    calls = [e["call"]["name"] for e in events if e["type"] == "tool_call"]
    assert calls == ["echo", "task_completion"]
    assert events[0]["type"] == "run_start"
    status = final(responses)
    assert status["state"] == "TASK_STATE_COMPLETED"
    end = responses[-1]["statusUpdate"]["metadata"]["reactloop"]
    assert end["state"] == "completed" and end["tool_calls"] == 2


def test_a_question_is_input_required_and_the_answer_continues_the_task(
        a2a_server: ServeProcess) -> None:
    ctx = f"ask-{uuid.uuid4().hex}"
    asked = send(a2a_server.url, message("ask", ctx))
    status = final(asked)
    assert status["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert text_of(status) == "What is your name?"
    task_id = task_id_of(asked)
    answered = send(a2a_server.url, message("my name is Ada", ctx, task_id))
    assert task_id_of(answered) == task_id
    assert final(answered)["state"] == "TASK_STATE_COMPLETED"
    assert text_of(final(answered)) == "Hello, Ada (after 2 messages)"


@pytest.mark.parametrize(("answer", "expected"), [
    ("yes", "Transfer done: sent 5 to bob"),
    ("no, too much", "Transfer refused: "),
])
def test_an_approval_wait_is_input_required_answered_in_the_task(
        a2a_server: ServeProcess, answer: str, expected: str) -> None:
    ctx = f"pay-{uuid.uuid4().hex}"
    waiting = send(a2a_server.url, message("transfer 5 to bob", ctx))
    status = final(waiting)
    assert status["state"] == "TASK_STATE_INPUT_REQUIRED"
    text, data = status["message"]["parts"]
    assert text["text"].startswith('Approve transfer({"amount": 5, "to": "bob"})?')
    pending = data["data"]["pending_approvals"]
    assert [p["tool_name"] for p in pending] == ["transfer"]
    done = send(a2a_server.url, message(answer, ctx, task_id_of(waiting)))
    assert final(done)["state"] == "TASK_STATE_COMPLETED"
    assert text_of(final(done)).startswith(expected)
    if answer != "yes":
        assert "too much" in text_of(final(done))


def test_approval_decisions_as_a_data_part(a2a_server: ServeProcess) -> None:
    ctx = f"pay-{uuid.uuid4().hex}"
    waiting = send(a2a_server.url, message("transfer 7 to eve", ctx))
    pending = final(waiting)["message"]["parts"][1]["data"]["pending_approvals"][0]
    decision = {"call_id": pending["call_id"], "arguments_hash": pending["arguments_hash"],
                "approved": True, "arguments": {"amount": 3, "to": "eve"}}
    done = send(a2a_server.url, message(None, ctx, task_id_of(waiting),
                                        data={"decisions": [decision]}))
    answer = text_of(final(done))  # a Struct keeps no key order: the arguments' order varies
    assert answer.startswith("Transfer done: (The user edited the arguments to {")
    assert '"amount": 3' in answer and answer.endswith("sent 3 to eve")


def _tool_error(responses: list[dict[str, Any]]) -> dict[str, Any]:
    [error] = [u["statusUpdate"]["metadata"]["reactloop"]["event"] for u in responses
               if "statusUpdate" in u and u["statusUpdate"].get("metadata", {}).get(
                   "reactloop", {}).get("event", {}).get("type") == "tool_error"]
    return error


def test_tool_tracebacks_go_to_loopback_clients(a2a_server: ServeProcess) -> None:
    error = _tool_error(send(a2a_server.url, message("crash", f"c-{uuid.uuid4().hex}")))
    assert error["result"]["error"] == "RuntimeError: the crash tool failed on purpose"
    assert "a2a_agents.py" in error["result"]["traceback"]


def test_a_failed_run_is_a_failed_task(a2a_server: ServeProcess) -> None:
    status = final(send(a2a_server.url, message("fail now", f"f-{uuid.uuid4().hex}")))
    assert status["state"] == "TASK_STATE_FAILED"
    assert "failed on purpose" in text_of(status)


async def _first_working(stream: AsyncIterator[Any]) -> str:
    async for r in stream:
        d = MessageToDict(r)
        if "statusUpdate" in d and d["statusUpdate"]["status"]["state"] == "TASK_STATE_WORKING":
            return str(d["statusUpdate"]["taskId"])
    raise AssertionError("the stream ended before the task was working")


def test_cancel_resubscribe_and_a_busy_context(a2a_server: ServeProcess) -> None:
    url = a2a_server.url
    ctx = f"slow-{uuid.uuid4().hex}"

    async def go() -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]], dict]:
        client = await _client(url)
        try:
            stream = client.send_message(SendMessageRequest(message=message("slow", ctx)))
            task_id = await _first_working(stream)
            # a second stream on the running task starts with its snapshot
            again = client.subscribe(SubscribeToTaskRequest(id=task_id))
            snapshot = MessageToDict(await anext(again))
            await again.aclose()
            # the session runs: another task in the same context is rejected
            busy = [MessageToDict(r) async for r in client.send_message(
                SendMessageRequest(message=message("hello", ctx)))]
            cancelled = MessageToDict(await client.cancel_task(CancelTaskRequest(id=task_id)))
            await stream.aclose()
            got = MessageToDict(await client.get_task(GetTaskRequest(id=task_id)))
            return snapshot, cancelled, busy, got
        finally:
            await client.close()

    snapshot, cancelled, busy, got = asyncio.run(go())
    assert snapshot["task"]["status"]["state"] == "TASK_STATE_WORKING"
    assert final(busy)["state"] == "TASK_STATE_REJECTED"
    assert "running another message" in text_of(final(busy))
    assert cancelled["status"]["state"] == "TASK_STATE_CANCELED"
    assert got["status"]["state"] == "TASK_STATE_CANCELED"
    # the run ended CANCELLED in the session, which is free again
    info = httpx.get(f"{url}/api/sessions/{ctx}").json()
    assert info["running"] is False
    assert text_of(final(send(url, message("after", ctx)))) == "echo: after (turn 2)"


# -- clear JSON-RPC errors ----------------------------------------------------------------------

def test_bad_requests_get_jsonrpc_errors(a2a_server: ServeProcess) -> None:
    url = a2a_server.url
    assert rpc(url, b"{not json").json()["error"]["code"] == -32700
    assert rpc(url, {"jsonrpc": "2.0", "id": 1, "method": "Nope", "params": {}}
               ).json()["error"]["code"] == -32601
    file_part = {"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": {
        "messageId": "m1", "role": "ROLE_USER", "contextId": "files",
        "parts": [{"url": "https://example.com/a.pdf", "mediaType": "application/pdf"}]}}}
    error = rpc(url, file_part).json()["error"]
    assert "this agent accepts text and data parts" in error["message"], error
    long_ctx = {"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": {"message": {
        "messageId": "m2", "role": "ROLE_USER", "contextId": "x" * 201,
        "parts": [{"text": "hi"}]}}}
    error = rpc(url, long_ctx).json()["error"]
    assert error["code"] == -32602 and "contextId" in error["message"], error
    assert rpc(url, b"x" * (5 * 1024 * 1024)).status_code == 413  # the guard's body limit


# -- a token: declared in the card, required by the endpoint ------------------------------------

def test_with_a_token_the_card_declares_it_and_the_endpoint_needs_it(tmp_path: Path) -> None:
    server = ServeProcess("--agent", "a2a_agents:agent", "--token", SERVE_TOKEN,
                          store=tmp_path / "s.sqlite3").start()
    try:
        card = httpx.get(f"{server.url}/.well-known/agent-card.json").json()
        assert card["securitySchemes"] == {"bearer": {"httpAuthSecurityScheme": {
            "scheme": "bearer", "description": "the token given to reactloop serve"}}}
        assert card["securityRequirements"] == [{"schemes": {"bearer": {}}}]
        request = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}
        assert rpc(server.url, request).status_code == 401
        found = rpc(server.url, request, authorization=f"Bearer {SERVE_TOKEN}")
        assert found.status_code == 200 and found.json()["error"]["code"] == -32001

        async def go() -> list[dict[str, Any]]:
            client = await _client(server.url, token=SERVE_TOKEN)
            try:
                return [MessageToDict(r) async for r in client.send_message(
                    SendMessageRequest(message=message("with token", "tok")))]
            finally:
                await client.close()
        assert text_of(final(asyncio.run(go()))) == "echo: with token (turn 1)"

        async def crash() -> list[dict[str, Any]]:
            client = await _client(server.url, token=SERVE_TOKEN)
            try:
                return [MessageToDict(r) async for r in client.send_message(
                    SendMessageRequest(message=message("crash", "tok-crash")))]
            finally:
                await client.close()
        error = _tool_error(asyncio.run(crash()))  # behind a token: the sentence, no traceback
        assert error["result"]["error"] == "RuntimeError: the crash tool failed on purpose"
        assert error["result"]["traceback"] is None
    finally:
        server.stop()


# -- typed outputs are data parts ---------------------------------------------------------------

def test_a_typed_output_is_a_data_part(tmp_path: Path) -> None:
    server = ServeProcess("--agent", "a2a_agents:typed", store=tmp_path / "s.sqlite3").start()
    try:
        responses = send(server.url, message("verdict", "typed"), streaming=False)
    finally:
        server.stop()
    parts = responses[0]["task"]["artifacts"][0]["parts"]
    assert parts == [{"data": {"topic": "verdict", "ok": True, "score": 7},
                      "mediaType": "application/json"}]


# -- the official JavaScript client ---------------------------------------------------------------

def test_the_official_a2a_js_client(a2a_server: ServeProcess) -> None:
    node = shutil.which("node")
    require(node, "Node.js is not installed (apt-get install nodejs)")
    require((CLIENT_DIR / "node_modules" / "@a2a-js" / "sdk").is_dir(),
            "the A2A JavaScript SDK is not installed: python scripts/test_setup.py "
            "(npm ci in tests/a2a_client)")
    proc = subprocess.run([str(node), "run.mjs", a2a_server.url, f"js-{uuid.uuid4().hex}"],
                          cwd=CLIENT_DIR, capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["card"]["name"] == "a2a-test"
    assert out["sent"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert out["sent"]["artifacts"][0]["parts"][0]["text"] == "echo: hello from js (turn 1)"
    assert out["streamed"][0] == "task" and out["streamed"][-1] == "statusUpdate"
    assert "artifactUpdate" in out["streamed"]
    assert out["streamedFinal"] == "TASK_STATE_COMPLETED"
    assert out["streamedAnswer"] == "echo: streamed from js (turn 2)"
    assert out["cancelled"] == "TASK_STATE_CANCELED"


# -- the context lives in the session store: PostgreSQL, across two servers ----------------------

def test_a_context_continues_on_another_server_sharing_a_postgres_store(
        postgres_url: str, tmp_path: Path) -> None:
    servers = [ServeProcess("--agent", "a2a_agents:agent", "--store", postgres_url,
                            store=tmp_path / f"{name}.sqlite3").start() for name in "ab"]
    try:
        ctx = f"pg-{uuid.uuid4().hex}"
        answers = [text_of(final(send(server.url, message(text, ctx))))
                   for server, text in zip(servers * 2, ["one", "two", "three", "four"],
                                           strict=True)]
    finally:
        for server in servers:
            server.stop()
    assert answers == ["echo: one (turn 1)", "echo: two (turn 2)", "echo: three (turn 3)",
                       "echo: four (turn 4)"]


# -- on when installed; --no-a2a turns it off; a2a=True without the SDK is a clear error ---------

def test_a2a_can_be_turned_off_and_requires_its_extra(tmp_path: Path, monkeypatch) -> None:
    import importlib.util

    from starlette.testclient import TestClient

    import a2a_agents
    from reactloop.errors import UserError
    from reactloop.serve import create_app

    card = "/.well-known/agent-card.json"
    for a2a, status in ((None, 200), (True, 200), (False, 404)):
        app = create_app(a2a_agents.agent, store=tmp_path / "s.sqlite3", a2a=a2a)
        with TestClient(app, base_url="http://127.0.0.1") as client:
            assert client.get(card).status_code == status
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "a2a" else real(name, *a))
    with pytest.raises(UserError, match=r"pip install 'reactloop\[a2a\]'"):
        create_app(a2a_agents.agent, store=tmp_path / "s.sqlite3", a2a=True)
    app = create_app(a2a_agents.agent, store=tmp_path / "s.sqlite3")  # None: off, quietly
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert client.get(card).status_code == 404
