"""Production controls (issue 27): what they cost per iteration, and what caching saves.

    python benchmarks/controls.py [--runs 200] [--json]

- **per-iteration cost**: the same run (ten tool calls, then an answer; ``FunctionModel``
  answers at once) with no controls, and with usage limits (every token/request/tool-call
  limit), input, output and tool guardrails (each a trivial pass) and a model concurrency
  limit all enabled; reported as µs per iteration (median run ÷ 11 iterations) and the
  difference. Functional figures: measure on a quiet machine.
- **cache share**: a 10-turn Anthropic session (each turn a tool call, then an answer; the
  responses are the recorded payloads in ``tests/payloads/anthropic``, parsed by the adapter)
  is translated to Messages API requests by the adapter, with its automatic ``cache_control``
  breakpoints; each request reads the longest breakpoint prefix an earlier request wrote. The
  share of input tokens read from the cache (4 characters a token, the same estimate for both
  sides of the ratio).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import json
import statistics
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAYLOADS = ROOT / "tests" / "payloads" / "anthropic"
N_CALLS = 10


def _agent(controls: bool) -> Any:
    from reactloop import Agent, ModelResponse, ToolCall, UsageLimits
    from reactloop.testing import FunctionModel

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    def reply(request: Any) -> ModelResponse:
        n = sum(1 for m in request.messages if m.role == "tool")
        if n < N_CALLS:
            return ModelResponse(tool_calls=[ToolCall("add", {"a": n, "b": 1})])
        return ModelResponse(text="done")

    def passes(value: Any) -> None:
        return None

    kw: dict[str, Any] = {}
    if controls:
        big = 10**9
        kw = {"usage_limits": UsageLimits(max_requests=big, max_tool_calls=big,
                                          max_input_tokens=big, max_output_tokens=big,
                                          max_total_tokens=big),
              "input_guardrails": [passes], "output_guardrails": [passes],
              "tool_input_guardrails": [passes], "tool_output_guardrails": [passes],
              "model_concurrency": 8}
    return Agent(FunctionModel(reply), tools=[add], max_iterations=N_CALLS + 5, **kw)


async def _median_run_us(agent: Any, runs: int, warmup: int) -> float:
    for _ in range(warmup):
        result = await agent.run("Add the numbers.")
        assert result.output == "done" and result.metrics.tool_calls == N_CALLS
    gc.collect()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await agent.run("Add the numbers.")
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


async def per_iteration(runs: int = 200, warmup: int = 20) -> dict[str, float]:
    """µs per iteration without and with every control enabled."""
    off = await _median_run_us(_agent(False), runs, warmup) / (N_CALLS + 1)
    on = await _median_run_us(_agent(True), runs, warmup) / (N_CALLS + 1)
    return {"disabled_us": off, "enabled_us": on, "delta_us": on - off}


def _responses(turns: int) -> list[Any]:
    from reactloop.models.anthropic import parse_message

    call = parse_message(json.loads((PAYLOADS / "tool_call.json").read_text()))
    answer = parse_message(json.loads((PAYLOADS / "text.json").read_text()))
    return [r for _ in range(turns) for r in (call, answer)]


def _prefix_key(body: dict[str, Any], i: int, j: int) -> tuple[str, int]:
    """Hash and estimated tokens of the request up to block ``j`` of message ``i``."""
    messages = [*body["messages"][:i], {**body["messages"][i],
                                        "content": body["messages"][i]["content"][:j + 1]}]
    text = json.dumps(_plain([body.get("tools"), body.get("system"), messages]),
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest(), len(text) // 4


def _plain(value: Any) -> Any:
    """``value`` without its ``cache_control`` markers (they are not part of the prefix)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _breakpoints(body: dict[str, Any]) -> list[tuple[str, int]]:
    out = []
    for i, m in enumerate(body["messages"]):
        for j, block in enumerate(m["content"]):
            if "cache_control" in block:
                out.append(_prefix_key(body, i, j))
    return out


def cache_share(turns: int = 10) -> dict[str, Any]:
    """The share of a ``turns``-turn session's input tokens read from Anthropic's cache."""
    from reactloop import Agent
    from reactloop.models.anthropic import build_params
    from reactloop.testing import ScriptedModel

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    model = ScriptedModel(_responses(turns), usage=False)
    agent = Agent(model, tools=[add], skills=[ROOT / "examples" / "skills"],
                  instructions="You are a careful assistant for arithmetic and data. " * 40)
    session = agent.conversation()

    async def talk() -> None:
        for t in range(turns):
            await session.send(f"Question {t}: what is 2 + 3?")

    asyncio.run(talk())
    written: set[str] = set()
    read = total = 0
    per_request = []
    for request in model.requests:
        body = build_params(request, "claude-sonnet-4-5", 4096)
        size = len(json.dumps(_plain([body.get("tools"), body.get("system"),
                                      body["messages"]]), sort_keys=True)) // 4
        marks = _breakpoints(body)
        hit = max((n for h, n in marks if h in written), default=0)
        written.update(h for h, _ in marks)
        read, total = read + hit, total + size
        per_request.append(round(100 * hit / size, 1))
    return {"turns": turns, "requests": len(model.requests),
            "cache_read_share_pct": round(100 * read / total, 1),
            "per_request_pct": per_request}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out = {"per_iteration": asyncio.run(per_iteration(args.runs, max(5, args.runs // 10))),
           "cache": cache_share(10)}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    p, c = out["per_iteration"], out["cache"]
    print(f"per iteration: {p['disabled_us']:.1f} µs without controls, "
          f"{p['enabled_us']:.1f} µs with limits + guardrails + concurrency "
          f"(+{p['delta_us']:.1f} µs)")
    print(f"10-turn Anthropic session: {c['cache_read_share_pct']} % of input tokens read "
          f"from the cache over {c['requests']} requests")


if __name__ == "__main__":
    main()
