"""The CI regression check: the loop's work per iteration against the figures recorded here.

    python benchmarks/regression.py            # check (exit 1 when a figure regressed)
    python benchmarks/regression.py --record   # measure and write benchmarks/baseline.json
    python benchmarks/regression.py --json     # the figures as JSON

Gates on what does not jitter with the machine's load (see ``profiling.py``): function calls
per tool-call iteration (``cProfile``, main thread; plus the worker thread's calls for a sync
tool), memory blocks an iteration leaves in the run (``tracemalloc``), and bytes and
GC-tracked objects per live run. A figure fails when it exceeds the recorded value by more
than its tolerance (``baseline.json``: the noise measured over repeated runs, plus a margin;
see ``benchmarks/README.md``). Call counts depend on Python's version: on another minor
version than the recorded one the figures are printed, not gated.

Timing is reported, never gated: µs per iteration of the async-tool loop and of bare asyncio
(the same 11 awaits per run, nothing else) measured in this process, and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import profiling  # noqa: E402

BASELINE = HERE / "baseline.json"

# figure -> (how to measure it, default tolerance: absolute units of the figure)
FIGURES: dict[str, tuple[Callable[[], float], float]] = {}


def _figure(name: str, tolerance: float) -> Callable[[Callable[[], float]], Callable[[], float]]:
    def register(fn: Callable[[], float]) -> Callable[[], float]:
        FIGURES[name] = (fn, tolerance)
        return fn
    return register


_cache: dict[tuple[str, str], dict[str, Any]] = {}


def _calls(path: str, listener: str = "none") -> dict[str, Any]:
    if (path, listener) not in _cache:
        _cache[path, listener] = profiling.calls(path, listener, runs=10)
    return _cache[path, listener]


_figure("async.calls_per_iteration", 1.0)(lambda: _calls("async")["calls_per_iteration"])
_figure("async_callback.calls_per_iteration", 1.0)(
    lambda: _calls("async", "callback")["calls_per_iteration"])
_figure("inline.calls_per_iteration", 1.0)(lambda: _calls("inline")["calls_per_iteration"])
_figure("sync.calls_per_iteration", 4.0)(lambda: _calls("sync")["calls_per_iteration"])
_figure("sync.thread_calls_per_iteration", 2.0)(
    lambda: _calls("sync")["thread_calls_per_iteration"])
_figure("async.calls_per_run", 10.0)(lambda: _calls("async")["calls_per_run"])
_figure("async.kept_blocks_per_iteration", 1.0)(
    lambda: profiling.allocations("async", runs=5)["kept_blocks_per_iteration"])
_live: dict[str, float] = {}


def _live_run(key: str) -> float:
    if not _live:
        _live.update(profiling.live_runs("async", n=100))
    return _live[key]


_figure("async.bytes_per_live_run", 512.0)(lambda: _live_run("bytes_per_live_run"))
_figure("async.gc_tracked_per_live_run", 1.0)(lambda: _live_run("gc_tracked_per_live_run"))


def measure() -> dict[str, float]:
    _cache.clear()
    _live.clear()
    return {name: round(fn(), 2) for name, (fn, _tol) in FIGURES.items()}


def timing(runs: int = 30) -> dict[str, float]:
    """µs per iteration of the async-tool loop and of bare asyncio, in this process (for
    information: on a loaded machine these move, their ratio less so)."""
    async def per_iteration(build: Callable[[int], Callable[[], Any]]) -> float:
        ten, none = build(profiling.N_CALLS), build(0)
        for _ in range(5):
            await ten()
            await none()
        t_ten, t_none = [], []
        for _ in range(runs):
            t0 = time.perf_counter()
            await ten()
            t1 = time.perf_counter()
            await none()
            t_ten.append(t1 - t0)
            t_none.append(time.perf_counter() - t1)
        return (statistics.median(t_ten) - statistics.median(t_none)) / profiling.N_CALLS * 1e6

    def floor(n_calls: int) -> Callable[[], Any]:
        async def once() -> None:
            for _ in range(n_calls + 1):
                await asyncio.sleep(0)
        return once

    async def go() -> dict[str, float]:
        loop_us = await per_iteration(lambda n: profiling.build("async", n)[0])
        floor_us = await per_iteration(floor)
        return {"loop_us_per_iteration": loop_us, "floor_us_per_iteration": floor_us,
                "ratio": loop_us / floor_us if floor_us > 0 else float("nan")}

    return asyncio.run(go())


def python_version() -> str:
    return ".".join(platform.python_version_tuple()[:2])


def compare(measured: dict[str, float], baseline: dict[str, Any]) -> list[str]:
    """The regressions: one line per figure above its recorded value plus tolerance."""
    problems = []
    for name, value in measured.items():
        rec = baseline["figures"].get(name)
        if rec is None:
            continue
        limit = rec["value"] + rec["tolerance"]
        if value > limit:
            problems.append(f"{name}: {value:g} > {rec['value']:g} recorded "
                            f"(+ {rec['tolerance']:g} tolerance)")
    return problems


def record(measured: dict[str, float], path: Path = BASELINE) -> None:
    old = json.loads(path.read_text()) if path.exists() else {"figures": {}}
    figures = {name: {"value": value,
                      "tolerance": old["figures"].get(name, {}).get("tolerance",
                                                                    FIGURES[name][1])}
               for name, value in measured.items()}
    path.write_text(json.dumps({"python": python_version(), "figures": figures}, indent=2)
                    + "\n")


def check(path: Path = BASELINE, *, with_timing: bool = True) -> int:
    baseline = json.loads(path.read_text())
    measured = measure()
    gated = baseline["python"] == python_version()
    for name, value in measured.items():
        rec = baseline["figures"].get(name, {})
        print(f"  {name:38s} {value:10.2f}   recorded {rec.get('value', float('nan')):10.2f}"
              f" ± {rec.get('tolerance', float('nan')):g}")
    if with_timing:
        t = timing()
        print(f"  timing (information only, not gated): {t['loop_us_per_iteration']:.1f} µs per "
              f"iteration, bare asyncio {t['floor_us_per_iteration']:.1f} µs, "
              f"ratio {t['ratio']:.1f}x")
    problems = compare(measured, baseline)
    if not gated:
        print(f"regression check: recorded on Python {baseline['python']}, this is "
              f"{python_version()}: figures printed, not gated")
        return 0
    if problems:
        print("regression check FAILED (more work per iteration than recorded):")
        for p in problems:
            print(f"  {p}")
        print("  find the cause with `python benchmarks/profiling.py`; if the cost is "
              "intended, record it with `python benchmarks/regression.py --record`")
        return 1
    print("regression check passed")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--record", action="store_true", help="write benchmarks/baseline.json")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--no-timing", action="store_true")
    a = p.parse_args(argv)
    if a.record:
        record(measure())
        print(f"wrote {BASELINE}")
        return 0
    if a.json:
        print(json.dumps(measure()))
        return 0
    return check(with_timing=not a.no_timing)


if __name__ == "__main__":
    sys.exit(main())
