"""The cost of calling an agent as a tool against calling a plain function tool.

    python benchmarks/multi_agent.py [--calls 20] [--runs 30]

Both cases run the same parent: its scripted model calls a tool named ``helper`` ``--calls``
times in sequence (one call per iteration), then answers. In the first case ``helper`` is a
plain async function returning ``"ok"``; in the second it is ``Agent.as_tool()`` of an agent
whose scripted model answers ``"ok"`` at once — so each call is a whole sub-run (its own
context, one model call, events tagged and forwarded to the parent, usage folded into the
parent's metrics). A figure is the median over ``--runs`` runs of the run's wall time divided
by the number of calls, in µs; "extra" is the difference, the price of a sub-run over a
function call. Scripted models: no network, no real model; the agents are built outside the
timed part. Each run is checked: ``--calls`` tool calls, the right answer, and (agent case)
one sub-run per call in the parent's metrics.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from reactloop import Agent, ModelResponse, RunState, ToolCall, tool
from reactloop.testing import ScriptedModel


def _parent_script(calls: int) -> list[Any]:
    return [ModelResponse(tool_calls=[ToolCall("helper", {"task": f"job {i}"})])
            for i in range(calls)] + ["done"]


def _plain(calls: int) -> Agent:
    @tool(name="helper")
    async def helper(task: str) -> str:
        """Do a small job.

        Args:
            task: the job
        """
        return "ok"

    return _warm(Agent(ScriptedModel(_parent_script(calls)), tools=[helper],
                       max_iterations=calls + 2, compaction=False))


def _nested(calls: int) -> Agent:
    child = Agent(ScriptedModel(["ok"] * calls), name="helper", compaction=False)
    return _warm(Agent(ScriptedModel(_parent_script(calls)), tools=[child.as_tool()],
                       max_iterations=calls + 2, compaction=False))


def _warm(agent: Agent) -> Agent:
    agent.spec.tools.specs()  # tool schemas are built on first use: not in the timed part
    return agent


async def _one(agent: Agent, calls: int, nested: bool) -> float:
    started = time.perf_counter()
    result = await agent.run("go")
    took = time.perf_counter() - started
    ok = result.state is RunState.COMPLETED and result.output == "done"
    ok = ok and sum(len(s.results) for s in result.steps) == calls
    if nested:
        ok = ok and result.metrics_by_agent["helper"].iterations == calls
    if not ok:
        raise SystemExit(f"wrong work in a run: {result.state} {result.output!r}")
    return took / calls * 1e6


async def measure(calls: int = 20, runs: int = 30, warmup: int = 3) -> dict[str, float]:
    """Median µs per call for both cases (the cases alternate, run by run)."""
    plain: list[float] = []
    nested: list[float] = []
    for i in range(warmup + runs):
        p = await _one(_plain(calls), calls, False)
        n = await _one(_nested(calls), calls, True)
        if i >= warmup:
            plain.append(p)
            nested.append(n)
    a, b = statistics.median(plain), statistics.median(nested)
    return {"calls": float(calls), "runs": float(runs), "function_tool_us": a,
            "agent_tool_us": b, "extra_us": b - a}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20, help="tool calls per run")
    parser.add_argument("--runs", type=int, default=30, help="timed runs per case")
    args = parser.parse_args()
    out = asyncio.run(measure(args.calls, args.runs))
    print(f"µs per call (median of {args.runs} runs, {args.calls} calls each):")
    print(f"  plain function tool   {out['function_tool_us']:8.1f}")
    print(f"  agent.as_tool()       {out['agent_tool_us']:8.1f}")
    print(f"  extra per sub-run     {out['extra_us']:8.1f}")


if __name__ == "__main__":
    main()
