"""Sync tools run on threads reactloop owns (issue 31, "Deadlines and threads").

- a run returns at its deadline (or after a tool timeout) while the tool's thread is still
  blocked: ``run_sync`` does not wait for it, nor does the process's exit, nor ``reactloop run``;
- calls abandoned while running leave stuck threads, which are replaced (up to a cap) so other
  runs' sync tools still run, and are reported by ``reactloop.tools.thread_stats()``.

Tools block on events, never on sleeps; the ``SAFETY`` waits only keep a regression from
hanging the suite (before the fix, those tests fail once the safety wait ends).
"""

from __future__ import annotations

import asyncio
import contextvars
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from _cli import cli_env
from reactloop import Agent, ModelResponse, RunState, Tool, ToolCall
from reactloop._threads import MAX_STUCK, POOL_SIZE, _Pool
from reactloop.testing import ScriptedModel
from reactloop.tools import ThreadStats, thread_stats

SAFETY = 20.0  # seconds a blocked tool waits at most (only reached when the fix is broken)


class Gate:
    """A sync tool that blocks until released, and says whether it started and finished."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.finished = threading.Event()
        self.started = 0
        self.on_start: Callable[[], object] = lambda: None
        self._lock = threading.Lock()

    def tool(self) -> Tool:
        def block(n: int = 0) -> str:
            """Wait until released.

            Args:
                n: which call this is
            """
            with self._lock:
                self.started += 1
            self.on_start()
            self.release.wait(SAFETY)
            self.finished.set()
            return "released"

        return Tool(block)


@pytest.fixture
def gate() -> Any:
    g = Gate()
    yield g
    g.release.set()  # let the abandoned threads end


def test_run_sync_returns_at_its_deadline_while_the_tool_thread_is_blocked(gate: Gate) -> None:
    agent = Agent(model=ScriptedModel([ToolCall("block", {}), "never reached"]),
                  tools=[gate.tool()], max_execution_time=1.0)
    abandoned_before = thread_stats().abandoned  # monotonic: other tests' threads may end
    result = agent.run_sync("go")
    assert result.state is RunState.TIMED_OUT
    assert gate.started == 1 and not gate.finished.is_set()  # returned while still blocked
    assert thread_stats().abandoned == abandoned_before + 1 and thread_stats().stuck >= 1


def test_run_sync_returns_after_a_tool_timeout_while_the_tool_thread_is_blocked(
        gate: Gate) -> None:
    agent = Agent(model=ScriptedModel([ToolCall("block", {}), "gave up waiting"]),
                  tools=[gate.tool()], tool_timeout=0.5)
    result = agent.run_sync("go")
    assert (result.state, result.output) == (RunState.COMPLETED, "gave up waiting")
    [failed] = result.steps[0].results
    assert failed.error is not None and "timed out after 0.5 s" in failed.error
    assert not gate.finished.is_set()


def test_cancelling_a_run_abandons_its_blocked_tool(gate: Gate, arun: Any) -> None:
    async def main() -> RunState:
        agent = Agent(model=ScriptedModel([ToolCall("block", {}), "never reached"]),
                      tools=[gate.tool()])
        started, loop = asyncio.Event(), asyncio.get_running_loop()
        gate.on_start = lambda: loop.call_soon_threadsafe(started.set)
        task = asyncio.create_task(agent.run("go"))
        await started.wait()
        before = thread_stats().abandoned
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert thread_stats().abandoned == before + 1
        return RunState.CANCELLED

    assert arun(main()) is RunState.CANCELLED
    assert not gate.finished.is_set()


@pytest.mark.parametrize(("agent", "state"), [("past_deadline", "timed_out"),
                                              ("past_tool_timeout", "completed")])
def test_the_process_exits_while_a_tool_thread_never_returns(
        tmp_path: Path, agent: str, state: str) -> None:
    code = ("import stuck_agents\n"
            "from reactloop.tools import thread_stats\n"
            f"result = stuck_agents.{agent}().run_sync('go')\n"
            "print(result.state.value, thread_stats().stuck)\n")
    # before the fix this never exits: asyncio.run and the interpreter join the tool thread
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False, env=cli_env(tmp_path))
    assert (proc.returncode, proc.stdout.split()) == (0, [state, "1"]), proc.stderr


def test_reactloop_run_exits_at_the_deadline_while_a_tool_thread_never_returns(
        tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "reactloop", "run", "--agent", "stuck_agents:past_deadline",
         "go"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
        check=False, env=cli_env(tmp_path))
    assert proc.returncode == 4, proc.stderr  # timed_out
    assert "ran out of time" in proc.stderr and "Traceback" not in proc.stderr


def test_an_unrelated_runs_tool_runs_while_stuck_calls_fill_the_pool(gate: Gate,
                                                                   arun: Any) -> None:
    ran = threading.Event()

    def instant() -> str:
        """Answer at once."""
        ran.set()
        return "instant"

    stuck_calls = POOL_SIZE + 2  # more than every thread the pool serves with
    hog = Agent(model=ScriptedModel([
        ModelResponse(tool_calls=[ToolCall("block", {"n": i}) for i in range(stuck_calls)]),
        "gave up"]), tools=[gate.tool()], tool_timeout=1.0)
    other = Agent(model=ScriptedModel([ToolCall("instant", {}), "done"]), tools=[instant],
                  tool_timeout=SAFETY / 2)

    abandoned_before = thread_stats().abandoned  # monotonic: other tests' threads may end

    async def main() -> None:  # one event loop, as in a server
        first = await hog.run("hog the threads")
        assert all(r.error and "timed out" in r.error for r in first.steps[0].results)
        assert thread_stats().abandoned - abandoned_before == gate.started > 0
        second = await other.run("something else")
        assert [r.content for r in second.steps[0].results] == ["instant"]

    arun(main())
    assert ran.is_set() and not gate.finished.is_set()


# -- the pool itself ------------------------------------------------------------------------

def _blocker(gate: threading.Event, started: asyncio.Event, loop: asyncio.AbstractEventLoop
             ) -> Callable[[], str]:
    def block() -> str:
        loop.call_soon_threadsafe(started.set)
        gate.wait(SAFETY)
        return "done"

    return block


async def _abandon_running(pool: _Pool, fn: Callable[[], str], started: asyncio.Event) -> None:
    task = asyncio.create_task(pool.run(fn))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_the_pool_replaces_stuck_threads_up_to_its_cap(arun: Any) -> None:
    pool = _Pool(size=1, max_stuck=1)
    gates = [threading.Event(), threading.Event()]

    async def main() -> None:
        loop = asyncio.get_running_loop()
        for g in gates:  # the first is replaced; the second is the last replacement allowed
            started = asyncio.Event()
            await _abandon_running(pool, _blocker(g, started, loop), started)
        assert pool.stats() == ThreadStats(threads=2, busy=0, stuck=2, queued=0, abandoned=2,
                                           size=1, max_stuck=1)
        queued = asyncio.create_task(pool.run(lambda: "ran"))
        await asyncio.sleep(0)
        assert pool.stats().queued == 1  # at the cap: it waits for a thread
        gates[0].set()  # a stuck call returns: its thread serves again
        assert await queued == "ran"
        assert pool.stats().stuck == 1

    try:
        arun(main())
    finally:
        for g in gates:
            g.set()


def test_a_call_abandoned_before_it_starts_never_runs(arun: Any) -> None:
    pool = _Pool(size=1, max_stuck=0)
    gate, ran = threading.Event(), threading.Event()

    async def main() -> None:
        started = asyncio.Event()
        busy = asyncio.create_task(pool.run(_blocker(gate, started, asyncio.get_running_loop())))
        await started.wait()
        waiting = asyncio.create_task(pool.run(ran.set))
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert pool.stats().queued == 0
        gate.set()
        assert await busy == "done"

    try:
        arun(main())
    finally:
        gate.set()
    assert not ran.is_set()


def test_calls_keep_context_variables_and_raise_the_functions_errors(arun: Any) -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    pool = _Pool()

    def stop() -> None:
        raise StopIteration("x")

    async def main() -> None:
        var.set("caller's")
        assert await pool.run(var.get) == "caller's"
        with pytest.raises(ZeroDivisionError):
            await pool.run(lambda: 1 / 0)
        with pytest.raises(RuntimeError, match="StopIteration"):  # a future refuses it
            await pool.run(stop)

    arun(main())


def test_the_defaults_are_documented() -> None:
    stats = thread_stats()
    assert (stats.size, stats.max_stuck) == (POOL_SIZE, MAX_STUCK)


def test_serve_reports_stuck_tool_threads_and_still_stops(tmp_path: Path) -> None:
    httpx = pytest.importorskip("httpx", reason="pip install 'reactloop[test]'")
    pytest.importorskip("starlette", reason="pip install 'reactloop[serve]'")
    from conftest import ServeProcess, parse_sse

    server = ServeProcess("--agent", "stuck_agents:past_tool_timeout",
                          store=tmp_path / "sessions.sqlite3").start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            assert client.get("/api/info").json()["tool_threads"]["stuck"] == 0
            session = client.post("/api/sessions").json()["id"]
            with client.stream("POST", f"/api/sessions/{session}/messages",
                               json={"text": "go"}) as r:
                events = parse_sse(r.iter_lines())
            assert events[-1][1]["result"]["output"] == "gave up waiting"
            threads = client.get("/api/info").json()["tool_threads"]
            assert (threads["stuck"], threads["abandoned"]) == (1, 1)
        assert server.proc is not None
        server.proc.terminate()  # the stuck thread does not keep the server alive
        assert server.proc.wait(timeout=60) is not None
    finally:
        server.stop()


def test_stuck_threads_are_an_opentelemetry_gauge(gate: Gate) -> None:
    pytest.importorskip("opentelemetry.sdk", reason="pip install 'reactloop[otel]'")
    from reactloop.testing import capture_spans

    agent = Agent(model=ScriptedModel([ToolCall("block", {}), "gave up waiting"]),
                  tools=[gate.tool()], tool_timeout=0.5)
    with capture_spans() as spans:
        assert agent.run_sync("go").output == "gave up waiting"
        points = {a["reactloop.thread.state"]: p.value
                  for a, p in spans.metrics()["reactloop.tool.threads"]}
    assert points["stuck"] >= 1  # this test's blocked call, still running


def test_a_worker_is_free_again_when_its_caller_resumes(arun: Any) -> None:
    """The hand-off (issue 28): a worker books itself idle before it hands the result back,
    so a run's next sync call finds it free (no other thread started, nothing still busy)."""
    pool = _Pool()

    async def main() -> None:
        for i in range(100):
            assert await pool.run(lambda i=i: i) == i
            stats = pool.stats()
            assert (stats.threads, stats.busy, stats.queued) == (1, 0, 0), stats

    arun(main())
