"""reactloop on Temporal, against a real dev server (the ``temporal_server`` fixture).

Workers run in this process where nothing is killed, and as ``reactloop worker`` subprocesses
where a test kills or restarts them. Models are FunctionModels that decide from the request
(tests/temporal_agents.py), tools count their side effects in a file.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("temporalio")

from conftest import die_with_parent
from reactloop import Agent, ModelRequest, ModelResponse, RunState, ToolCall, tool
from reactloop.testing import FunctionModel

HERE = Path(__file__).resolve().parent
pytestmark = pytest.mark.slow


def _queue() -> str:
    return f"q-{uuid.uuid4().hex[:8]}"


def _until(condition: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)  # polling for a condition, not waiting a fixed time


def _lines(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines()] if path.exists() else []


def _with_worker(durable: Any, address: str, body: Callable[[Any, str], Awaitable[Any]]) -> Any:
    """Run ``body(client, task_queue)`` while an in-process worker hosts ``durable``."""
    from temporalio.client import Client

    async def main() -> Any:
        client = await Client.connect(address)
        queue = _queue()
        async with durable.worker(client, queue):
            return await body(client, queue)

    return _run(main())


def _run(coro: Awaitable[Any]) -> Any:
    """Run ``coro``, failing (not hanging) if it takes far longer than it should."""
    async def bounded() -> Any:
        return await asyncio.wait_for(coro, 120)

    return asyncio.run(bounded())


class Workers:
    """``reactloop worker`` subprocesses, all killed at the end of the test."""

    def __init__(self, address: str, tmp: Path) -> None:
        self.address, self.tmp, self.procs = address, tmp, []
        self.env = {**os.environ, "REACTLOOP_TEST_LOG": str(tmp / "log")}

    def start(self, attr: str, queue: str, **env: str) -> subprocess.Popen[bytes]:
        err = self.tmp / f"worker-{len(self.procs)}.err"
        proc = subprocess.Popen(
            [sys.executable, "-m", "reactloop", "worker", "--agent", f"temporal_agents:{attr}",
             "--address", self.address, "--task-queue", queue, "--sticky-timeout", "1",
             "--drain-timeout", "5"],
            cwd=HERE, env={**self.env, **env}, stdout=subprocess.DEVNULL,
            stderr=err.open("wb"), preexec_fn=die_with_parent)
        self.procs.append(proc)
        _until(lambda: "reactloop worker:" in err.read_text() or proc.poll() is not None,
               "the worker to start")
        assert proc.poll() is None, err.read_text()
        return proc

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


@pytest.fixture
def workers(temporal_server: str, tmp_path: Path) -> Iterator[Workers]:
    w = Workers(temporal_server, tmp_path)
    try:
        yield w
    finally:
        w.stop_all()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def _tool_messages(result: Any) -> list[tuple[str | None, str, bool]]:
    return [(m.name, m.content, m.is_error) for m in result.messages if m.role == "tool"]


# -- the same result as in-process --------------------------------------------------------------
@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


def _planner(request: ModelRequest) -> ModelResponse:
    n = sum(1 for m in request.messages if m.role == "tool")
    if n == 0:
        return ModelResponse(tool_calls=[ToolCall("update_plan", {
            "goal": "add twice", "steps": ["first sum", "second sum"]})])
    if n == 1:  # two calls in one response: they run concurrently, as two activities
        return ModelResponse(tool_calls=[ToolCall("add", {"a": 2, "b": 3}),
                                         ToolCall("update_plan", {"step": 1, "result": "5"})])
    if n == 3:
        return ModelResponse(tool_calls=[ToolCall("add", {"a": 5, "b": 7}),
                                         ToolCall("update_plan", {"step": 2, "result": "12"})])
    return ModelResponse(text="5 and then 12.")


def test_a_run_with_tool_calls_returns_what_a_local_run_returns(temporal_server: str) -> None:
    from reactloop.temporal import TemporalAgent

    agent = Agent(model=FunctionModel(_planner), tools=[add], planning=True, name="planner")
    local = agent.run_sync("Add 2 and 3, then add 7.")

    async def body(client: Any, queue: str) -> Any:
        handle = await durable.start("Add 2 and 3, then add 7.", client=client,
                                     task_queue=queue)
        events = [(seq, e.type) async for seq, e in handle.events()]
        return events, await handle.result()

    durable = TemporalAgent(agent)
    events, remote = _with_worker(durable, temporal_server, body)
    assert remote.state is local.state is RunState.COMPLETED
    assert remote.output == local.output == "5 and then 12."
    assert remote.to_dict().keys() == local.to_dict().keys()
    assert _tool_messages(remote) == _tool_messages(local)
    assert [(m.role, m.content) for m in remote.messages] == [
        (m.role, m.content) for m in local.messages]
    assert (remote.metrics.iterations, remote.metrics.tool_calls) == (4, 5)
    assert [[r.result for r in s.results] for s in remote.steps] == [
        [r.result for r in s.results] for s in local.steps]
    assert remote.plan == local.plan and remote.plan.done  # the plan went through activities
    assert [seq for seq, _ in events] == list(range(1, len(events) + 1))
    assert events[0][1] == "run_start" and events[-1][1] == "run_end"
    assert [t for _, t in events].count("plan_update") == 3
    # the result carries its context: it resumes in-process like a local one
    again = Agent(model=FunctionModel(lambda r: "resumed"), tools=[add], planning=True)
    resumed = again.resume_sync(remote.save(), "thanks")
    assert resumed.output == "resumed" and resumed.plan == remote.plan


# -- a worker killed between tool calls ----------------------------------------------------------
def test_a_killed_worker_costs_no_completed_tool_call(workers: Workers, tmp_path: Path) -> None:
    import temporal_agents

    queue, gate = _queue(), tmp_path / "gate"
    first = workers.start("steps", queue, REACTLOOP_TEST_GATE=str(gate))

    async def go() -> Any:
        handle = await temporal_agents.steps.start("Record three steps.",
                                                   client=workers.address, task_queue=queue)
        await asyncio.to_thread(_until, Path(str(gate) + ".waiting").exists,
                                "the model to wait between the tool calls")
        _kill(first)  # record 1 has run; the model call for the next step is in flight
        gate.touch()
        await asyncio.to_thread(workers.start, "steps", queue)
        return await handle.result()

    result = _run(go())
    assert result.state is RunState.COMPLETED, result.output
    assert result.output == "All 3 steps recorded."
    records = [line for line in _lines(tmp_path / "log") if line[0] == "record"]
    assert sorted(line[1] for line in records) == ["1", "2", "3"]  # each ran exactly once
    assert records[0][2] == str(first.pid) and records[-1][2] != str(first.pid)


# -- two workers, many runs ----------------------------------------------------------------------
def test_two_workers_share_twenty_concurrent_runs(workers: Workers, tmp_path: Path) -> None:
    import temporal_agents

    queue = _queue()
    pids = {workers.start("crowd", queue).pid, workers.start("crowd", queue).pid}

    async def go() -> list[Any]:
        return await asyncio.gather(*(
            temporal_agents.crowd.run(f"run {i}", client=workers.address, task_queue=queue)
            for i in range(20)))

    results = _run(go())
    assert [r.state for r in results] == [RunState.COMPLETED] * 20
    records = [line for line in _lines(tmp_path / "log") if line[0] == "record"]
    assert len(records) == 40  # two tool calls per run, each once
    assert {int(line[2]) for line in records} == pids  # both workers executed activities


# -- waiting for the user, across a worker restart -----------------------------------------------
def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reactloop", "run", *args], cwd=HERE, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_a_waiting_run_survives_a_worker_restart(workers: Workers, tmp_path: Path) -> None:
    queue, run_id = _queue(), f"trip-{uuid.uuid4().hex[:6]}"
    first = workers.start("asking", queue)
    common = ["--temporal", workers.address, "--agent", "temporal_agents:asking",
              "--task-queue", queue, "--id", run_id]
    asked = _cli(*common, "Book me a flight", env=workers.env)
    assert asked.returncode == 3, asked.stderr  # waiting for the user, as a local run
    assert "Which city?" in asked.stderr
    _kill(first)
    workers.start("asking", queue)
    answered = _cli(*common, "--json", "Paris", env=workers.env)
    assert answered.returncode == 0, answered.stderr
    import json

    data = json.loads(answered.stdout)
    assert data["output"] == "Booked to Paris." and data["state"] == "completed"
    users = [m["content"] for m in data["messages"] if m["role"] == "user"]
    assert users == ["Book me a flight", "Paris"]  # one conversation, one workflow
    assert [line[0] for line in _lines(tmp_path / "log")] == ["record"]


# -- tool failures are results, as in-process ----------------------------------------------------
@tool
def boom() -> str:
    """Fail."""
    raise ValueError("the input was bad")


@tool(timeout=0.5)
async def slow() -> str:
    """Take too long."""
    await asyncio.sleep(30)
    return "late"


@tool
def garbage() -> dict[str, Any]:
    """Return something that is not JSON."""
    d: dict[str, Any] = {}
    d["self"] = d
    return d


@tool
def huge() -> str:
    """Return too much."""
    return "x" * 300_000


def _troublemaker(request: ModelRequest) -> ModelResponse:
    if any(m.role == "tool" for m in request.messages):
        return ModelResponse(text="I saw the errors.")
    return ModelResponse(tool_calls=[
        ToolCall("boom", {}), ToolCall("slow", {}), ToolCall("garbage", {}),
        ToolCall("nope", {}), ToolCall("add", "not an object"),  # type: ignore[arg-type]
        ToolCall("add", {"a": "x"}), ToolCall("huge", {})])


def test_tool_errors_timeouts_and_garbage_reach_the_model_as_locally(
        temporal_server: str) -> None:
    from reactloop.temporal import TemporalAgent

    agent = Agent(model=FunctionModel(_troublemaker),
                  tools=[boom, slow, garbage, add, huge], name="troubled")
    local = agent.run_sync("Try everything.")

    async def body(client: Any, queue: str) -> Any:
        handle = await durable.start("Try everything.", client=client, task_queue=queue)
        events = [e async for _, e in handle.events()]
        return events, await handle.result()

    durable = TemporalAgent(agent, max_payload_bytes=200_000)
    events, remote = _with_worker(durable, temporal_server, body)
    assert remote.state is RunState.COMPLETED and remote.output == "I saw the errors."
    got, want = _tool_messages(remote), _tool_messages(local)
    assert got[:6] == want[:6]  # the same words for the model, call by call
    assert all(is_error for _, _, is_error in got)
    assert "ValueError: the input was bad" in got[0][1]
    assert "timed out after 0.5 s" in got[1][1]
    assert "cannot be shown as text or JSON" in got[2][1]
    assert "Unknown tool 'nope'" in got[3][1]
    # the one difference: a result over Temporal's payload limit is refused, clearly
    assert not want[6][2] and "over Temporal's payload limit of 200,000 bytes" in got[6][1]
    errors = [e for e in events if e.type == "tool_error"]
    assert "ValueError" in (errors[0].result.traceback or "")  # tracebacks go to events


# -- events: sequence numbers, re-attaching, sessions that continue as new ------------------------
def _echo(request: ModelRequest) -> ModelResponse:
    users = [m.content for m in request.messages if m.role == "user"]
    n = sum(1 for m in request.messages if m.role == "tool")
    if n < len(users):  # one tool call per turn, then the answer
        return ModelResponse(tool_calls=[ToolCall("add", {"a": n, "b": 1})])
    return ModelResponse(text=f"echo {users[-1]}")


def test_a_reattached_caller_neither_loses_nor_repeats_events(temporal_server: str) -> None:
    from reactloop.temporal import TemporalAgent

    durable = TemporalAgent(Agent(model=FunctionModel(_echo), tools=[add], name="echo"),
                            history_limit=1)  # continue as new before every later turn

    async def body(client: Any, queue: str) -> Any:
        handle = await durable.start("one", client=client, task_queue=queue, session=True)
        first: list[int] = []
        async for seq, _ in handle.events():
            first.append(seq)
            if len(first) == 4:
                break  # the caller goes away mid-turn
        again = await durable.attach(handle.id, client=client)
        rest = [seq async for seq, _ in again.events(after=first[-1])]
        whole = [seq async for seq, _ in again.events(after=0)]
        turn1 = await handle.result()
        for text in ("two", "three"):
            await handle.send(text)
            assert (await handle.result()).output == f"echo {text}"
        last = [(seq, e.type) async for seq, e in handle.events(after=None)]
        desc = await handle.workflow.describe()
        await handle.close()
        final = await handle.result()
        return first, rest, whole, turn1, last, desc, final

    first, rest, whole, turn1, last, desc, final = _with_worker(durable, temporal_server, body)
    assert first + rest == whole == list(range(1, len(whole) + 1))
    assert turn1.output == "echo one"
    assert last[0][1] == "run_start" and last[-1][1] == "run_end"
    assert last[0][0] > len(whole)  # numbers go on across turns and continue-as-new
    assert desc.raw_description.workflow_execution_info.first_run_id != desc.run_id
    assert [m.content for m in final.messages if m.role == "user"] == ["one", "two", "three"]
    assert final.output == "echo three"


# -- the README's three commands ----------------------------------------------------------------
def test_readme_temporal_commands_run(temporal_server: str, tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")  # the README's agent runs the embedded model
    import re
    import shlex

    readme = (HERE.parent / "README.md").read_text()
    block = next(b for b in re.findall(r"```bash\n(.*?)```", readme, flags=re.S)
                 if "temporal server start-dev" in b)
    server, worker, run = (shlex.split(line) for line in block.strip().splitlines())
    assert server[:3] == ["temporal", "server", "start-dev"]
    assert worker[:2] == ["reactloop", "worker"] and run[:2] == ["reactloop", "run"]
    from conftest import free_port, stop_server, wait_for_temporal

    port = free_port()  # the README's server, on a free port and a file of this test's
    server_proc = subprocess.Popen(
        [*server, "--ip", "127.0.0.1", "--port", str(port), "--db-filename",
         str(tmp_path / "db.sqlite"), "--log-level", "error"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        preexec_fn=die_with_parent)
    try:
        address = f"127.0.0.1:{port}"
        wait_for_temporal(address, server_proc)
        env = {**os.environ, "TEMPORAL_ADDRESS": address}
        proc = subprocess.Popen([sys.executable, "-m", *worker], cwd=HERE.parent, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                preexec_fn=die_with_parent)
        try:
            done = subprocess.run([sys.executable, "-m", *run], cwd=HERE.parent, env=env,
                                  capture_output=True, text=True, timeout=600, check=False)
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=60)
    finally:
        stop_server(server_proc)
    assert done.returncode in (0, 2), done.stderr  # completed (or, rarely, out of budget)
    assert "→ add" in done.stdout and "answer ·" in done.stdout
    assert proc.returncode == 0 and "stopped" in err  # SIGTERM stops it cleanly


# -- MCP servers: listing and calls are activities ------------------------------------------------
def test_mcp_tools_are_listed_and_called_in_activities(temporal_server: str) -> None:
    pytest.importorskip("mcp")
    from conftest import MCP_DEMO_SERVER
    from reactloop.mcp import MCPServer
    from reactloop.temporal import TemporalAgent

    def model(request: ModelRequest) -> ModelResponse:
        if not any(m.role == "tool" for m in request.messages):
            echo = next(t.name for t in request.tools if t.name.endswith("echo"))
            return ModelResponse(tool_calls=[ToolCall(echo, {"text": "over the wire"})])
        return ModelResponse(text=f"It said: {request.messages[-1].content}")

    server = MCPServer.stdio(sys.executable, [MCP_DEMO_SERVER], name="demo")
    durable = TemporalAgent(Agent(model=FunctionModel(model), mcp_servers=[server],
                                  name="mcp-user"))

    async def body(client: Any, queue: str) -> Any:
        try:
            return await durable.run("Echo something.", client=client, task_queue=queue)
        finally:
            await durable.aclose()  # the worker's MCP server process stops

    result = _with_worker(durable, temporal_server, body)
    assert result.state is RunState.COMPLETED, result.output
    assert result.output == "It said: over the wire"
    assert "mcp-user.mcp.demo.list" in [getattr(a, "__temporal_activity_definition").name
                                        for a in durable.activities]


# -- the benchmark script keeps working --------------------------------------------------------
def test_the_temporal_benchmark_measures(temporal_server: str) -> None:
    import importlib.util

    from temporalio.client import Client

    spec = importlib.util.spec_from_file_location("_bench_temporal",
                                                  HERE.parent / "benchmarks" / "temporal.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    async def go() -> Any:
        return await bench.overhead(await Client.connect(temporal_server), repeats=1,
                                    floor=False)

    out = _run(go())
    assert out["temporal_run_ms"] > 0 and out["local_run_ms"] > 0


# -- a run's time limit is workflow time ---------------------------------------------------------
@tool(timeout=60)
async def sleepy() -> str:
    """Take a long time."""
    await asyncio.sleep(30)
    return "awake"


def test_a_run_past_its_time_limit_ends_timed_out_as_locally(temporal_server: str) -> None:
    from reactloop.temporal import TemporalAgent

    def model(request: ModelRequest) -> ModelResponse:
        return ModelResponse(tool_calls=[ToolCall("sleepy", {})])

    agent = Agent(model=FunctionModel(model), tools=[sleepy], max_execution_time=1.5,
                  name="sleepy")
    local = agent.run_sync("Sleep.")

    durable = TemporalAgent(agent)

    async def body(client: Any, queue: str) -> Any:
        return await durable.run("Sleep.", client=client, task_queue=queue)

    remote = _with_worker(durable, temporal_server, body)
    assert remote.state is local.state is RunState.TIMED_OUT
    assert _tool_messages(remote) == _tool_messages(local)  # the call is answered, unfinished
    assert 1.5 <= remote.metrics.execution_time < 30  # workflow time, not the tool's 30 s
