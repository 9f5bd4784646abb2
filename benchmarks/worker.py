"""One framework, one workload, in a fresh process; prints one JSON object on stdout.

Started by ``run.py`` (reactloop with the project's interpreter, the peers with
``benchmarks/.venv-peers``), so machine noise and memory never leak from one framework into
another. Standard library only, apart from the framework under test.

    python benchmarks/worker.py overhead FRAMEWORK --runs 200 --warmup 20
    python benchmarks/worker.py concurrency FRAMEWORK --n 1000 --delay 0.05
    python benchmarks/worker.py version FRAMEWORK
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import json
import platform
import resource
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

N_CALLS = 10
"""Tool calls per run of the common workload (so 11 model calls a run)."""


def framework(name: str) -> ModuleType:
    return importlib.import_module(f"frameworks.{name}_fw")


def max_rss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def current_rss_kb() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


async def overhead(fw: ModuleType, runs: int, warmup: int, n_calls: int) -> dict[str, Any]:
    """Sequential runs, alternating a run with ``n_calls`` tool calls and one that answers at
    once, so the difference isolates the cost of a tool-call iteration."""
    counter = [0, 0]
    with_tools = fw.build(0.0, n_calls, counter)
    no_tools = fw.build(0.0, 0, counter)
    for _ in range(warmup):
        await with_tools()
        await no_tools()
    counter[:] = [0, 0]
    t_tools: list[float] = []
    t_answer: list[float] = []
    reported: set[int] = set()
    gc.collect()
    for _ in range(runs):
        t0 = time.perf_counter()
        reported.add(await with_tools())
        t1 = time.perf_counter()
        await no_tools()
        t2 = time.perf_counter()
        t_tools.append(t1 - t0)
        t_answer.append(t2 - t1)
    return {
        "runs": runs,
        "median_run_s": statistics.median(t_tools),
        "median_answer_only_s": statistics.median(t_answer),
        "per_iteration_s": (statistics.median(t_tools) - statistics.median(t_answer)) / n_calls,
        "model_calls": counter[0],
        "tool_executions": counter[1],
        "expected_model_calls": runs * (n_calls + 2),
        "expected_tool_executions": runs * n_calls,
        "reported_tool_calls": sorted(reported),
    }


class GcTimer:
    """Counts the garbage collector's passes and the time they take while active."""

    def __init__(self) -> None:
        self.collections, self.seconds, self._t = 0, 0.0, 0.0

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._t = time.perf_counter()
        else:
            self.collections += 1
            self.seconds += time.perf_counter() - self._t

    def __enter__(self) -> GcTimer:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)


async def concurrency(fw: ModuleType, n: int, delay: float, n_calls: int) -> dict[str, Any]:
    """``n`` runs started at once; each model call first awaits ``delay`` seconds."""
    if getattr(fw, "THREADED", False):
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=n + 8))
    counter = [0, 0]
    run_once: Callable[[], Awaitable[int]] = fw.build(delay, n_calls, counter)
    await asyncio.gather(*(run_once() for _ in range(min(10, n))))  # warm-up
    counter[:] = [0, 0]
    gc.collect()
    gc_time = GcTimer()
    rss_before, peak_before = current_rss_kb(), max_rss_kb()
    t0 = time.perf_counter()
    with gc_time:
        results = await asyncio.gather(*(run_once() for _ in range(n)), return_exceptions=True)
    wall = time.perf_counter() - t0
    peak_after, rss_after = max_rss_kb(), current_rss_kb()
    errors = [repr(r) for r in results if isinstance(r, BaseException)]
    ideal = (n_calls + 1) * delay
    model_calls = counter[0]
    return {
        "n": n,
        "delay_s": delay,
        "wall_s": wall,
        "ideal_s": ideal,
        "model_calls": model_calls,
        "tool_executions": counter[1],
        "expected_model_calls": n * (n_calls + 1),
        "calls_per_s": model_calls / wall,
        "pct_of_ideal": 100.0 * (model_calls / wall) / (n * (n_calls + 1) / ideal),
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "rss_before_kb": rss_before,
        "rss_after_kb": rss_after,
        "peak_rss_delta_kb": max(0, peak_after - peak_before),
        "peak_rss_kb": peak_after,
        "kb_per_run": max(0, peak_after - peak_before) / n,
        "gc_collections": gc_time.collections,
        "gc_s": gc_time.seconds,
    }


def version(fw: ModuleType) -> dict[str, Any]:
    from importlib.metadata import PackageNotFoundError, version

    try:
        v = platform.python_version() if fw.DIST == "python" else version(fw.DIST)
    except PackageNotFoundError:
        v = "?"
    return {"name": fw.NAME, "dist": fw.DIST, "version": v, "python": sys.version.split()[0]}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("workload", choices=["overhead", "concurrency", "version"])
    p.add_argument("framework")
    p.add_argument("--runs", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--delay", type=float, default=0.05)
    p.add_argument("--calls", type=int, default=N_CALLS)
    a = p.parse_args(argv)
    fw = framework(a.framework)
    if a.workload == "version":
        out = version(fw)
    elif a.workload == "overhead":
        out = asyncio.run(overhead(fw, a.runs, a.warmup, a.calls))
    else:
        out = asyncio.run(concurrency(fw, a.n, a.delay, a.calls))
    out["framework"] = fw.NAME
    print(json.dumps(out))


if __name__ == "__main__":
    main()
