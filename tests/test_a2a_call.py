"""Calling remote A2A agents: ``reactloop.a2a.A2AAgent`` against a server built only from
``a2a-sdk``'s own server classes (tests/a2a_sdk_server.py), against remotes that are down or
send garbage, and two ``reactloop serve`` processes where agent A calls agent B as a tool."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from conftest import ServeProcess, free_port, parse_sse

httpx = pytest.importorskip("httpx", reason="pip install 'reactloop[test]'")
pytest.importorskip("a2a.server", reason="pip install 'reactloop[a2a]'")

from reactloop import Agent, ModelResponse, RunState, ToolCall  # noqa: E402
from reactloop.a2a import A2AAgent  # noqa: E402
from reactloop.testing import ScriptedModel  # noqa: E402

HERE = Path(__file__).resolve().parent


def _wait_listening(proc: subprocess.Popen[bytes], port: int) -> None:
    import socket
    import time

    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("the a2a-sdk server did not start") from None
            time.sleep(0.05)  # polling for a condition, not waiting a fixed time


@pytest.fixture(scope="module")
def sdk_server() -> Iterator[str]:
    """Base URL of tests/a2a_sdk_server.py (a2a-sdk's server classes only)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(HERE / "a2a_sdk_server.py"), str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_listening(proc, port)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait()


def run_with(remote: A2AAgent, *calls: str, **agent_kwargs: Any) -> tuple[Any, list[Any]]:
    """Run an agent whose scripted model calls ``remote``'s tool with each of ``calls`` in
    turn, then answers with the last tool message; the result and the events."""
    tool = remote.as_tool(name="remote")
    responses = [ModelResponse(tool_calls=[ToolCall("remote", {"task": c})]) for c in calls]
    model = ScriptedModel([*responses, ModelResponse(text="done")])
    agent = Agent(model=model, tools=[tool], **agent_kwargs)

    async def go() -> tuple[Any, list[Any]]:
        events = [e async for e in agent.stream("go")]
        return events[-1].result, events

    import asyncio

    result, events = asyncio.run(go())
    return result, events


def tool_messages(result: Any) -> list[Any]:
    return [m for m in result.messages if m.role == "tool"]


# -- against a2a-sdk's own server -----------------------------------------------------------------

def test_the_card_gives_name_and_description(sdk_server: str) -> None:
    import asyncio

    remote = A2AAgent(sdk_server)
    card = asyncio.run(remote.fetch_card())
    assert card["name"] == "sdk-echo"
    assert remote.name == "sdk-echo" and remote.description == \
        "Echoes in capitals (a2a-sdk only)."


def test_connect_describes_the_tool_from_the_card(sdk_server: str) -> None:
    import asyncio

    from reactloop.errors import ToolRetry

    tool = asyncio.run(A2AAgent.connect(sdk_server)).as_tool()
    assert tool.name == "ask_sdk-echo"
    assert "Echoes in capitals (a2a-sdk only)." in tool.description
    assert list(tool.parameters["properties"]) == ["task"]
    assert tool.parameters["required"] == ["task"]
    with pytest.raises(ToolRetry, match="has no readable card"):
        asyncio.run(A2AAgent.connect(f"http://127.0.0.1:{free_port()}"))


def test_send_completes_with_the_artifact_text(sdk_server: str) -> None:
    import asyncio

    reply = asyncio.run(A2AAgent(sdk_server).send("hello there"))
    assert reply.state == "TASK_STATE_COMPLETED" and reply.output == "ECHO: HELLO THERE"
    assert reply.task_id and reply.context_id


def test_appended_artifact_chunks_and_data_parts(sdk_server: str) -> None:
    import asyncio

    remote = A2AAgent(sdk_server)
    assert asyncio.run(remote.send("stream")).output == "one two three"
    assert asyncio.run(remote.send("data")).output == {"n": 3, "ok": True}


def test_as_tool_a_question_is_answered_by_calling_again(sdk_server: str) -> None:
    result, events = run_with(A2AAgent(sdk_server), "ask", "green")
    first, second = tool_messages(result)
    assert first.content.startswith("The remote agent 'sdk-echo' asks: Which colour?")
    assert "calling remote again" in first.content
    assert second.content == "colour: green"  # the same task continued
    # the remote's task is a sub-run of this run: its updates nest under the call
    nested = [e for e in events if e.parent_run_id is not None]
    assert {(e.agent, e.parent_run_id) for e in nested} == {("sdk-echo", result.run_id)}
    assert [e.type for e in nested if e.type in ("run_start", "run_end")] == [
        "run_start", "run_end", "run_start", "run_end"]
    updates = [e.data for e in nested if e.type == "custom"]
    states = [u.get("state") for u in updates]
    assert "TASK_STATE_INPUT_REQUIRED" in states and states[-1] == "TASK_STATE_COMPLETED"
    task_ids = {u["task_id"] for u in updates if u["task_id"]}
    assert len(task_ids) == 1  # the answer continued the same task
    runs = [r.run for step in result.steps for r in step.results]  # ToolResult.run
    assert runs[0] is None  # a question goes back to the model, not to a held call
    assert runs[1] is not None and runs[1].output == "colour: green"
    assert runs[1].agent == "sdk-echo" and runs[1].parent_run_id == result.run_id


def test_a_failed_remote_task_is_a_tool_error_the_run_survives(sdk_server: str) -> None:
    result, _ = run_with(A2AAgent(sdk_server), "boom")
    (message,) = tool_messages(result)
    assert message.is_error
    assert message.content == "Error: the remote agent 'sdk-echo' failed: it blew up"
    assert result.state is RunState.COMPLETED and result.output == "done"


def test_a_slow_remote_is_a_tool_error_after_the_timeout(sdk_server: str) -> None:
    result, _ = run_with(A2AAgent(sdk_server, timeout=1), "slow")
    (message,) = tool_messages(result)
    assert message.is_error and "did not finish within 1 s" in message.content
    assert result.state is RunState.COMPLETED


def test_a_run_deadline_bounds_the_remote_call(sdk_server: str) -> None:
    result, _ = run_with(A2AAgent(sdk_server), "slow", max_execution_time=1.5)
    assert result.state is RunState.TIMED_OUT


def test_a_remote_that_is_down_is_a_tool_error() -> None:
    result, _ = run_with(A2AAgent(f"http://127.0.0.1:{free_port()}"), "hello")
    (message,) = tool_messages(result)
    assert message.is_error and "failed" in message.content
    assert "ConnectError" in message.content or "connect" in message.content.lower()
    assert result.state is RunState.COMPLETED


class _Garbage(BaseHTTPRequestHandler):
    """A card that points here, and JSON-RPC answers that are not JSON."""

    def do_GET(self) -> None:
        port = self.server.server_address[1]
        body = json.dumps({"name": "junk", "description": "junk", "version": "1",
                           "supportedInterfaces": [{"url": f"http://127.0.0.1:{port}/",
                                                    "protocolBinding": "JSONRPC",
                                                    "protocolVersion": "1.0"}],
                           "capabilities": {"streaming": False},
                           "defaultInputModes": ["text/plain"],
                           "defaultOutputModes": ["text/plain"], "skills": []}).encode()
        self._send(body, "application/json")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self._send(b"<html>definitely not JSON-RPC</html>", "application/json")

    def _send(self, body: bytes, media: str) -> None:
        self.send_response(200)
        self.send_header("content-type", media)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_a_remote_sending_garbage_is_a_tool_error() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Garbage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result, _ = run_with(A2AAgent(f"http://127.0.0.1:{server.server_address[1]}"), "hi")
    finally:
        server.shutdown()
        server.server_close()
    (message,) = tool_messages(result)
    assert message.is_error and message.content.startswith("Error: the remote agent 'junk'")
    assert result.state is RunState.COMPLETED


def test_bad_arguments_are_user_errors() -> None:
    from reactloop.errors import UserError

    with pytest.raises(UserError, match="http"):
        A2AAgent("ftp://example.com")
    with pytest.raises(UserError, match="timeout"):
        A2AAgent("http://127.0.0.1:1", timeout=0)


# -- two reactloop servers: A calls B ----------------------------------------------------------------

def test_agent_a_calls_agent_b_over_a2a_and_answers_its_question(tmp_path: Path) -> None:
    b = ServeProcess("--agent", "a2a_agents:agent", store=tmp_path / "b.sqlite3").start()
    try:
        a = ServeProcess("--agent", "a2a_agents:caller", store=tmp_path / "a.sqlite3",
                         env={"A2A_REMOTE_URL": b.url}).start()
        try:
            sid = f"a-{uuid.uuid4().hex}"
            with httpx.stream("POST", f"{a.url}/api/sessions/{sid}/messages",
                              json={"text": "get B to greet me"}, timeout=60) as r:
                assert r.status_code == 200
                events = parse_sse(r.iter_lines())
        finally:
            a.stop()
        b_sessions = httpx.get(f"{b.url}/api/sessions").json()
    finally:
        b.stop()
    kind, end = events[-1]
    assert kind == "run_end"
    assert end["result"]["output"] == "B said: Hello, Ada (after 2 messages)"
    own = [d for _, d in events if "parent_run_id" not in d]
    calls = [d["call"]["arguments"]["task"] for d in own if d["type"] == "tool_call"]
    assert calls == ["ask", "my name is Ada"]
    # B's steps appear nested in A's stream: B's own events, tagged with B's name and A's run
    nested = [d for _, d in events if "parent_run_id" in d]
    assert {(d["agent"], d["parent_run_id"]) for d in nested} == {("b", end["run_id"])}
    assert [d["call"]["name"] for d in nested if d["type"] == "tool_call"] == [
        "ask_question", "task_completion"]
    assert [d["result"]["state"] for d in nested if d["type"] == "run_end"] == [
        "waiting_for_user", "completed"]
    assert all(d["run_id"] != end["run_id"] for d in nested)
    # B's usage counts into A's metrics: A's 2 tool calls and B's 2
    assert end["result"]["metrics"]["tool_calls"] == 4
    # one conversation on B: one session holding both messages
    assert len(b_sessions) == 1


# -- reactloop run --a2a URL TASK -----------------------------------------------------------------

def test_run_a2a_sends_the_task_and_answers_a_question(tmp_path: Path) -> None:
    from _cli import reactloop

    b = ServeProcess("--agent", "a2a_agents:agent", store=tmp_path / "b.sqlite3").start()
    try:
        done = reactloop(tmp_path, "run", "--a2a", b.url, "hello remote")
        assert done.returncode == 0, done.stderr
        assert done.stdout == "echo: hello remote (turn 1)\n"
        assert "→ echo" in done.stderr and "completed" in done.stderr
        asked = reactloop(tmp_path, "run", "--a2a", b.url, "--json", "ask")
        assert asked.returncode == 3, asked.stderr
        reply = json.loads(asked.stdout)
        assert reply["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert reply["output"] == "What is your name?"
        answered = reactloop(tmp_path, "run", "--a2a", b.url, "--session", reply["context_id"],
                             "--task-id", reply["task_id"], "-q", "my name is Ada")
        assert answered.returncode == 0, answered.stderr
        assert answered.stdout == "Hello, Ada (after 2 messages)\n" and answered.stderr == ""
    finally:
        b.stop()


def test_run_a2a_errors_are_one_line(tmp_path: Path) -> None:
    from _cli import reactloop

    down = reactloop(tmp_path, "run", "--a2a", f"http://127.0.0.1:{free_port()}", "hi")
    assert down.returncode == 1
    assert down.stderr.startswith("reactloop: the remote agent") and \
        len(down.stderr.strip().splitlines()) == 1
    mixed = reactloop(tmp_path, "run", "--a2a", "http://127.0.0.1:1", "--model", "local", "hi")
    assert mixed.returncode == 2 and "drop --model" in mixed.stderr
    lone = reactloop(tmp_path, "run", "--task-id", "t1", "hi")
    assert lone.returncode == 2 and "--task-id applies to A2A agents" in lone.stderr


# -- one trace across the call: traceparent from A2AAgent, picked up by the server ----------------

def test_the_remote_run_joins_the_callers_trace(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.sdk", reason="pip install 'reactloop[otel]'")
    import time

    import uvicorn

    from reactloop.serve import create_app
    from reactloop.testing import capture_spans

    b = Agent(model=ScriptedModel(["pong"]), name="b")
    port = free_port()
    # another thread, another event loop: only the traceparent header can carry the trace
    server = uvicorn.Server(uvicorn.Config(create_app(b, store=tmp_path / "b.sqlite3"),
                                           host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.01)  # polling for a condition, not waiting a fixed time
    try:
        with capture_spans() as spans:
            result, _ = run_with(A2AAgent(f"http://127.0.0.1:{port}"), "ping")
    finally:
        server.should_exit = True
        thread.join(30)
    assert tool_messages(result)[0].content == "pong"
    [call] = spans.named("execute_tool")
    [remote_run] = spans.named("invoke_agent b")
    assert remote_run.context.trace_id == call.context.trace_id
    assert remote_run.parent is not None and remote_run.parent.span_id == call.context.span_id
