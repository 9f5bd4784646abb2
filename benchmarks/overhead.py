"""reactloop's own overhead, with no peers and no model: ``FunctionModel`` answers instantly.

    python benchmarks/overhead.py [--runs 500] [--json]

Reports the median of many runs after a warm-up:

- **no tools**: an agent without tools whose model answers at once — a whole run is one loop
  iteration, so this is the cost of one iteration plus the run's set-up;
- **one tool call per iteration**: the model calls ``add(a, b)`` ten times in sequence, then
  answers; the overhead per iteration is (run with 10 calls − run that answers at once) / 10,
  which isolates one tool-call iteration (request building, model call, argument validation,
  tool execution, history, events). Measured with the plain ``@tool`` (a sync tool runs in a
  worker thread) and, where available, ``@tool(inline=True)`` (on the event loop);
- **import reactloop**: in a fresh, precompiled interpreter, median of several.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import inspect
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

N_CALLS = 10


def _agent(n_calls: int, *, tools: bool = True, inline: bool = False) -> tuple[Any, Any]:
    from reactloop import Agent, ModelResponse, ToolCall, tool
    from reactloop.testing import FunctionModel

    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: first addend
            b: second addend
        """
        return a + b

    add_tool = tool(inline=True)(add) if inline else tool(add)

    def reply(request: Any) -> ModelResponse:
        n = sum(1 for m in request.messages if m.role == "tool")
        if n < n_calls:
            return ModelResponse(tool_calls=[ToolCall("add", {"a": n, "b": 1})])
        return ModelResponse(text="done")

    model = FunctionModel(reply)
    agent = Agent(model=model, tools=[add_tool] if tools else [], max_iterations=n_calls + 5)
    return agent, model


def _runner(n_calls: int, **kw: Any) -> Callable[[], Awaitable[Any]]:
    agent, model = _agent(n_calls, **kw)

    async def once() -> Any:
        result = await agent.run("Add the numbers.")
        model.requests.clear()
        return result

    return once


async def _timed(once: Callable[[], Awaitable[Any]], runs: int, warmup: int,
                 check: Callable[[Any], None]) -> list[float]:
    for _ in range(warmup):
        check(await once())
    gc.collect()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        result = await once()
        times.append(time.perf_counter() - t)
        check(result)
    return times


def _expect(tool_calls: int) -> Callable[[Any], None]:
    def check(result: Any) -> None:
        assert result.output == "done", result.output
        assert result.metrics.tool_calls == tool_calls, result.metrics.tool_calls
        assert result.metrics.iterations == tool_calls + 1, result.metrics.iterations
    return check


async def measure_no_tools(runs: int = 500, warmup: int = 50) -> dict[str, Any]:
    """An agent without tools: one model call, one answer."""
    times = await _timed(_runner(0, tools=False), runs, warmup, _expect(0))
    return {"runs": runs, "median_run_us": statistics.median(times) * 1e6,
            "per_iteration_us": statistics.median(times) * 1e6}


async def measure_tool_calls(runs: int = 500, warmup: int = 50, *, inline: bool = False,
                             n_calls: int = N_CALLS) -> dict[str, Any]:
    """``n_calls`` sequential tool-call iterations, alternated with answer-at-once runs."""
    with_calls, answer = _runner(n_calls, inline=inline), _runner(0, inline=inline)
    check_calls, check_answer = _expect(n_calls), _expect(0)
    for _ in range(warmup):
        check_calls(await with_calls())
        check_answer(await answer())
    gc.collect()
    t_calls, t_answer = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        r = await with_calls()
        t1 = time.perf_counter()
        r0 = await answer()
        t2 = time.perf_counter()
        check_calls(r)
        check_answer(r0)
        t_calls.append(t1 - t0)
        t_answer.append(t2 - t1)
    run_us, answer_us = statistics.median(t_calls) * 1e6, statistics.median(t_answer) * 1e6
    return {"runs": runs, "tool_calls_per_run": n_calls, "inline": inline,
            "median_run_us": run_us, "median_answer_only_us": answer_us,
            "per_iteration_us": (run_us - answer_us) / n_calls}


def inline_supported() -> bool:
    from reactloop import tool

    return "inline" in inspect.signature(tool).parameters


def import_time(reps: int = 7) -> dict[str, Any]:
    """``import reactloop`` in fresh interpreters after precompiling (this environment sets
    PYTHONDONTWRITEBYTECODE, so we write the bytecode once with it unset)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    src = Path(__file__).resolve().parents[1] / "src"
    if src.is_dir():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], env=env,
                       capture_output=True)
    subprocess.run([sys.executable, "-c", "import reactloop"], env=env, capture_output=True)
    code = "import time; t = time.perf_counter(); import reactloop; print(time.perf_counter() - t)"
    times = []
    for _ in range(reps):
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd="/")
        times.append(float(p.stdout.strip()))
    return {"reps": reps, "median_ms": statistics.median(times) * 1000,
            "min_ms": min(times) * 1000}


async def measure_all(runs: int, warmup: int) -> dict[str, Any]:
    out: dict[str, Any] = {"no_tools": await measure_no_tools(runs, warmup),
                           "one_tool_call": await measure_tool_calls(runs // 2, warmup)}
    if inline_supported():
        out["one_tool_call_inline"] = await measure_tool_calls(runs // 2, warmup, inline=True)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=500)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    out = asyncio.run(measure_all(a.runs, a.warmup))
    out["import_reactloop"] = import_time()
    if a.json:
        print(json.dumps(out))
        return 0
    print(f"no tools (one iteration per run):   {out['no_tools']['per_iteration_us']:7.1f} µs "
          "per iteration (whole run)")
    one = out["one_tool_call"]
    print(f"one tool call per iteration:        {one['per_iteration_us']:7.1f} µs per iteration "
          f"(run with {N_CALLS} calls: {one['median_run_us']:.0f} µs)")
    if "one_tool_call_inline" in out:
        il = out["one_tool_call_inline"]
        print(f"  same, @tool(inline=True):         {il['per_iteration_us']:7.1f} µs per "
              f"iteration (run: {il['median_run_us']:.0f} µs)")
    imp = out["import_reactloop"]
    print(f"import reactloop (fresh, precompiled): {imp['median_ms']:.1f} ms median of "
          f"{imp['reps']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
