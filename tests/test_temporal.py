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

from conftest import die_with_parent, require
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
    from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

    async def main() -> Any:
        client = await Client.connect(address)
        queue = _queue()
        worker = durable.worker(client, queue)
        # the workflow runs in Temporal's sandbox (reactloop passed through), never without
        assert isinstance(worker.config()["workflow_runner"], SandboxedWorkflowRunner)
        async with worker:
            return await body(client, queue)

    return _run(main())


def _run(coro: Awaitable[Any]) -> Any:
    """Run ``coro``, failing (not hanging) if it takes far longer than it should."""
    async def bounded() -> Any:
        return await asyncio.wait_for(coro, 120)

    return asyncio.run(bounded())


class Workers:
    """``reactloop worker --agent MODULE:NAME`` subprocesses, all killed at the end of the
    test; ``env`` joins the workers' (and the CLI's) environment."""

    def __init__(self, address: str, tmp: Path, module: str = "temporal_agents",
                 **env: str) -> None:
        self.address, self.tmp, self.module, self.procs = address, tmp, module, []
        self.errs: list[Path] = []
        self.env = {**os.environ, "REACTLOOP_TEST_LOG": str(tmp / "log"), **env}

    def start(self, attr: str, queue: str, **env: str) -> subprocess.Popen[bytes]:
        err = self.tmp / f"worker-{len(self.procs)}.err"
        proc = subprocess.Popen(
            [sys.executable, "-m", "reactloop", "worker", "--agent", f"{self.module}:{attr}",
             "--address", self.address, "--task-queue", queue, "--sticky-timeout", "1",
             "--drain-timeout", "5"],
            cwd=HERE, env={**self.env, **env}, stdout=subprocess.DEVNULL,
            stderr=err.open("wb"), preexec_fn=die_with_parent)
        self.procs.append(proc)
        self.errs.append(err)
        _until(lambda: "reactloop worker:" in err.read_text() or proc.poll() is not None,
               "the worker to start")
        assert proc.poll() is None, err.read_text()
        return proc

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def running_workers(address: str, tmp: Path, module: str = "temporal_agents",
                    **env: str) -> Iterator[Workers]:
    """The body of a ``workers`` fixture: :class:`Workers`, stopped when the test ends."""
    w = Workers(address, tmp, module, **env)
    try:
        yield w
    finally:
        w.stop_all()


@pytest.fixture
def workers(temporal_server: str, tmp_path: Path) -> Iterator[Workers]:
    yield from running_workers(temporal_server, tmp_path)


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
    return subprocess.run([sys.executable, "-m", "reactloop", "run", *args], cwd=HERE,
                          env={**env, "COLUMNS": "200", "NO_COLOR": "1"},
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
                          check=False)


def _terminal(workers: Workers, attr: str, queue: str, task: str) -> Any:
    """``reactloop run --temporal`` on a pseudo-terminal (pexpect), for workers' agent
    ``attr``; skipped without pexpect."""
    try:
        import pexpect
    except ImportError:
        pexpect = None
    require(pexpect is not None, "pip install pexpect (in the 'test' extra)")
    return pexpect.spawn(
        sys.executable, ["-m", "reactloop", "run", "--temporal", workers.address, "--agent",
                         f"{workers.module}:{attr}", "--task-queue", queue, task],
        encoding="utf-8", timeout=60, dimensions=(50, 200), cwd=str(HERE),
        env={**workers.env, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", "NO_COLOR": "1"})


def test_a_waiting_run_survives_a_worker_restart(workers: Workers, tmp_path: Path) -> None:
    queue, run_id = _queue(), f"trip-{uuid.uuid4().hex[:6]}"
    first = workers.start("asking", queue)
    common = ["--temporal", workers.address, "--agent", "temporal_agents:asking",
              "--task-queue", queue, "--id", run_id]
    asked = _cli(*common, "Book me a flight", env=workers.env)
    assert asked.returncode == 3, asked.stderr  # waiting for the user, as a local run
    assert asked.stdout.strip() == "Which city?"  # the question is the answer, on stdout
    assert "→ ask_question" in asked.stderr  # the trace, live, on stderr
    # how to answer: this very command, with the workflow's id
    assert f'--task-queue {queue} --id {run_id} "ANSWER"' in asked.stderr
    again = _cli(*common, env=workers.env)  # --id without TASK: follow it, send nothing
    assert again.returncode == 3 and again.stdout.strip() == "Which city?", again.stderr
    _kill(first)
    workers.start("asking", queue)
    answered = _cli(*common, "Paris", env=workers.env)
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout.strip() == "Booked to Paris."  # this turn's answer, not the last
    assert answered.stderr.count("→ ask_question") == 0 and "→ record" in answered.stderr
    import json

    latest = _cli(*common, "--json", env=workers.env)  # the latest turn, as JSON
    assert latest.returncode == 0, latest.stderr
    data = json.loads(latest.stdout)
    assert data["output"] == "Booked to Paris." and data["state"] == "completed"
    users = [m["content"] for m in data["messages"] if m["role"] == "user"]
    assert users == ["Book me a flight", "Paris"]  # one conversation, one workflow
    assert [line[0] for line in _lines(tmp_path / "log")] == ["record"]


def test_run_temporal_refuses_options_that_do_not_apply(temporal_server: str) -> None:
    env = {**os.environ}
    agent = ["--agent", "temporal_agents:asking"]
    for args, words in (
            (["--temporal", temporal_server, *agent, "--task-queue", "q", "-m", "local", "hi"],
             "drop --model"),  # the workers' agent brings its own model
            (["--temporal", temporal_server, *agent, "--task-queue", "q", "-c", "hi"],
             "drop --continue"),
            (["--temporal", temporal_server, *agent, "hi"], "--task-queue QUEUE"),
            ([*agent, "--task-queue", "q", "hi"], "add --temporal"),
            (["--temporal", "127.0.0.1:9 --agent", *agent, "--task-queue", "q", "hi"],
             "HOST:PORT")):
        done = _cli(*args, env=env)
        assert done.returncode == 2 and words in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr
    # a conversation that does not exist, an unreachable server: one line, exit code 1
    done = _cli("--temporal", temporal_server, *agent, "--task-queue", "q", "--id", "nope",
                env=env)
    assert done.returncode == 1 and "there is no conversation 'nope'" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    done = _cli("--temporal", "127.0.0.1:9", *agent, "--task-queue", "q", "hi", env=env)
    assert done.returncode == 1 and "cannot reach Temporal at 127.0.0.1:9" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


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
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=600, check=False)
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=60)
    finally:
        stop_server(server_proc)
    # completed (or, with the tiny embedded model, rarely: out of budget, cut off, a bad call)
    assert done.returncode in (0, 2, 5, 6), done.stderr
    assert "→ add" in done.stderr and done.stdout.strip(), done.stderr  # trace; the answer
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


# -- SIGTERM drains a worker -------------------------------------------------------------------
def test_sigterm_lets_the_activity_in_flight_finish(workers: Workers, tmp_path: Path) -> None:
    import temporal_agents

    queue, gate = _queue(), tmp_path / "gate"
    first = workers.start("draining", queue, REACTLOOP_TEST_GATE=str(gate))
    err = workers.errs[-1]

    async def go() -> Any:
        handle = await temporal_agents.draining.start("Record slowly.", client=workers.address,
                                                      task_queue=queue)
        await asyncio.to_thread(_until, Path(str(gate) + ".started").exists,
                                "the tool to start")
        first.send_signal(signal.SIGTERM)
        await asyncio.to_thread(_until, lambda: "stopping" in err.read_text(),
                                "the worker to stop taking work")
        gate.touch()  # the tool finishes only now, after the worker was told to stop
        code = await asyncio.to_thread(first.wait, 60)
        await asyncio.to_thread(workers.start, "draining", queue)  # for the rest of the run
        return code, await handle.result()

    code, result = _run(go())
    assert code == 0 and "reactloop worker: stopped" in err.read_text(), err.read_text()
    assert result.state is RunState.COMPLETED, result.output
    assert result.output == "Finished: step 1 done"  # the drained call's own result
    assert _lines(tmp_path / "log") == [["slow", "1", str(first.pid)]]  # it ran once


# -- @tool(retries=N): a call safe to repeat is retried, any other is attempted once ------------
ATTEMPTS: dict[str, int] = {}


def _attempt(name: str) -> int:
    ATTEMPTS[name] = ATTEMPTS.get(name, 0) + 1
    return ATTEMPTS[name]


@tool(retries=2)
def flaky() -> str:
    """Fail twice, then work (safe to repeat)."""
    if _attempt("flaky") < 3:
        raise ConnectionError("the service blinked")
    return "worked"


@tool(retries=1)
def hopeless() -> str:
    """Always fail (safe to repeat)."""
    _attempt("hopeless")
    raise ConnectionError("down for good")


@tool
def fragile() -> str:
    """Fail (not safe to repeat: it may have had effects)."""
    _attempt("fragile")
    raise ConnectionError("the service blinked")


def test_tool_retries_repeat_only_the_calls_marked_safe(temporal_server: str) -> None:
    from reactloop.errors import UserError
    from reactloop.temporal import TemporalAgent

    for bad in (-1, True, 1.5):
        with pytest.raises(UserError, match="retries must be an integer >= 0"):
            tool(retries=bad)(fragile.fn)  # type: ignore[arg-type]

    def model(request: ModelRequest) -> ModelResponse:
        if any(m.role == "tool" for m in request.messages):
            return ModelResponse(text="done")
        return ModelResponse(tool_calls=[ToolCall("flaky", {}), ToolCall("hopeless", {}),
                                         ToolCall("fragile", {})])

    durable = TemporalAgent(Agent(model=FunctionModel(model), tools=[flaky, hopeless, fragile],
                                  name="retrying"))
    ATTEMPTS.clear()

    async def body(client: Any, queue: str) -> Any:
        return await durable.run("Try.", client=client, task_queue=queue)

    result = _with_worker(durable, temporal_server, body)
    assert result.state is RunState.COMPLETED
    assert ATTEMPTS == {"flaky": 3, "hopeless": 2, "fragile": 1}
    got = {name: (content, is_error) for name, content, is_error in _tool_messages(result)}
    assert got["flaky"] == ("worked", False)
    assert got["hopeless"][1] and "ConnectionError: down for good" in got["hopeless"][0]
    assert got["fragile"][1] and "ConnectionError: the service blinked" in got["fragile"][0]


# -- model calls retry by the model's RetryPolicy, on Temporal only -------------------------------
class _Replayer:
    """An OpenAI-compatible server on loopback answering each request with the next status
    (200: a plain answer) and counting the requests."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.script: list[int] = []
        self.requests = 0
        replayer = self
        payloads = HERE / "payloads" / "openai"

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                replayer.requests += 1
                status = replayer.script.pop(0) if replayer.script else 400
                data = (payloads / ("plain.json" if status == 200
                                    else f"error_{status}.json")).read_bytes()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        import threading

        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def test_model_calls_retry_by_the_models_retry_policy(temporal_server: str) -> None:
    pytest.importorskip("openai")
    from reactloop.errors import ModelHTTPError
    from reactloop.models._retry import RetryPolicy
    from reactloop.models.openai import OpenAIModel
    from reactloop.temporal import TemporalAgent

    replayer = _Replayer()

    def attempt(script: list[int], retries: int) -> tuple[Any, int]:
        replayer.script, replayer.requests = list(script), 0
        model = OpenAIModel("gpt-4o-mini", base_url=replayer.url, api_key="sk-test",
                            retry=RetryPolicy(max_retries=retries, base_delay=0.05, jitter=0))
        durable = TemporalAgent(Agent(model=model, name=f"retry-{len(script)}-{retries}"))

        async def body(client: Any, queue: str) -> Any:
            return await durable.run("What is 17 + 25?", client=client, task_queue=queue)

        return _with_worker(durable, temporal_server, body), replayer.requests

    try:
        # two server errors, two retries allowed: the third attempt answers; the model's
        # own retries are off in the activity, or there would be up to 3 x 3 requests
        ok, requests = attempt([500, 500, 200], retries=2)
        assert ok.state is RunState.COMPLETED and ok.output == "17 + 25 = 42."
        assert requests == 3
        failed, requests = attempt([500, 500, 200], retries=1)  # one retry: not enough
        assert failed.state is RunState.ERROR and requests == 2
        assert isinstance(failed.error, ModelHTTPError) and failed.error.status_code == 500
        refused, requests = attempt([400, 200], retries=3)  # a bad request: never retried
        assert refused.state is RunState.ERROR and requests == 1
        assert isinstance(refused.error, ModelHTTPError) and refused.error.status_code == 400
    finally:
        replayer.server.shutdown()
        replayer.server.server_close()


# -- payloads over Temporal's limit are refused, clearly, once ----------------------------------
def test_payloads_over_the_limit_are_refused_clearly(temporal_server: str) -> None:
    from reactloop.errors import ReactloopError, UserError
    from reactloop.temporal import TemporalAgent

    calls: list[int] = []

    def growing(request: ModelRequest) -> ModelResponse:  # its history grows by 60 kB a call
        calls.append(1)
        return ModelResponse(tool_calls=[ToolCall("chunk", {})])

    @tool
    def chunk() -> str:
        """Return 60 kB of text."""
        return "y" * 60_000

    def verbose(request: ModelRequest) -> ModelResponse:
        calls.append(2)
        return ModelResponse(text="z" * 250_000)

    limit = {"max_payload_bytes": 200_000}
    growing_agent = TemporalAgent(Agent(model=FunctionModel(growing), tools=[chunk],
                                        name="growing"), **limit)
    verbose_agent = TemporalAgent(Agent(model=FunctionModel(verbose), name="verbose"), **limit)

    async def body(client: Any, queue: str) -> Any:
        with pytest.raises(UserError, match="over Temporal's payload limit of 200,000 bytes"):
            await growing_agent.start("x" * 250_000, client=client, task_queue=queue)
        with pytest.raises(ReactloopError) as info:
            await growing_agent.run("Grow.", client=client, task_queue=queue)
        async with verbose_agent.worker(client, queue + "-v"):
            answer = await verbose_agent.run("Talk.", client=client, task_queue=queue + "-v")
        return str(info.value), answer

    failure, answer = _with_worker(growing_agent, temporal_server, body)
    # the request that no longer fits is not sent; the run's result, which holds that
    # history, cannot cross either: the workflow fails at once, saying why
    assert "over Temporal's payload limit of 200,000 bytes" in failure
    assert "the model request is" in failure and "max_messages" in failure
    assert calls.count(1) == 4  # 4 x 60 kB fit; the 5th request was refused, not retried
    # an answer too large to cross is refused by its activity, once: the run ends ERROR
    assert answer.state is RunState.ERROR and calls.count(2) == 1
    assert "the model's response is 250," in answer.output and "lower max_tokens" in answer.output


# -- names that stay put across deploys -----------------------------------------------------------
def test_workflow_and_activity_names_derive_from_the_agents_names() -> None:
    pytest.importorskip("mcp")
    from reactloop.mcp import MCPServer
    from reactloop.temporal import TemporalAgent

    def build(name: str = "calc") -> Any:
        server = MCPServer.stdio(sys.executable, ["-c", "pass"], name="demo")
        return TemporalAgent(Agent(model=FunctionModel(lambda r: "ok"), tools=[add, boom],
                                   mcp_servers=[server], loop_control=True, name=name))

    def names(durable: Any) -> list[str]:
        return sorted(getattr(a, "__temporal_activity_definition").name
                      for a in durable.activities)

    durable = build()
    assert names(durable) == ["calc.mcp.demo.call", "calc.mcp.demo.list", "calc.model",
                              "calc.retrieve", "calc.tool", "calc.tool.add", "calc.tool.boom"]
    assert getattr(durable.workflow, "__temporal_workflow_definition").name == "calc"
    assert names(build()) == names(durable)  # another process builds the same names
    assert durable.names.tool("added_at_run_time") == "calc.tool"
    assert TemporalAgent(durable.agent, name="billing").names.tool("add") == "billing.tool.add"


# -- Ctrl-C stops following, not the run ---------------------------------------------------------
def test_ctrl_c_detaches_and_the_run_goes_on(workers: Workers, tmp_path: Path) -> None:
    queue, gate, run_id = _queue(), tmp_path / "gate", f"slow-{uuid.uuid4().hex[:6]}"
    workers.start("draining", queue, REACTLOOP_TEST_GATE=str(gate))
    common = ["--temporal", workers.address, "--agent", "temporal_agents:draining",
              "--task-queue", queue, "--id", run_id]
    following = subprocess.Popen(
        [sys.executable, "-m", "reactloop", "run", *common, "Record slowly."], cwd=HERE,
        env={**workers.env, "NO_COLOR": "1", "COLUMNS": "200"}, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=die_with_parent)
    _until(Path(str(gate) + ".started").exists, "the tool to start")
    following.send_signal(signal.SIGINT)
    out, err = following.communicate(timeout=60)
    assert following.returncode == 130 and not out.strip(), err
    assert f"the run goes on in workflow {run_id}" in err and "Traceback" not in err
    gate.touch()
    again = _cli(*common, env=workers.env)  # follow it again: it finished meanwhile
    assert again.returncode == 0 and again.stdout.strip() == "Finished: step 1 done", again.stderr
    assert _lines(tmp_path / "log") == [["slow", "1", str(workers.procs[0].pid)]]
