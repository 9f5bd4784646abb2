"""The round trip of an A2A tool call on loopback against a local agent-as-tool call.

Agent A's scripted model calls one tool with ``task="ping"`` and then answers; the tool is
agent B, whose scripted model answers ``pong`` at once (no tools, no tokens to generate):

- ``local``: B in this process, as a tool (``B.as_tool()`` when this reactloop has it, else a
  tool running ``B.run(task)``);
- ``session``: the same, but B runs in a new session of a SQLite store (what the server does
  for each A2A message: separates the durable store's cost from the protocol's);
- ``a2a``: B served by ``reactloop serve`` (its own process, SQLite session store) on
  127.0.0.1, called through ``reactloop.a2a.A2AAgent(url).as_tool()``: streaming
  ``SendStreamingMessage``, one new A2A context per run, the card fetched once.

The figure is the tool call's duration as reactloop records it (``ToolResult.duration``):
median and p90 over the runs, in milliseconds, and the A2A overhead (median difference).
Both use scripted models, so what is measured is the machinery: for A2A, an HTTP connection,
the JSON-RPC request, B's session opened from and written to SQLite, B's run, its events as
SSE task updates, and the reply parsed.

usage: python benchmarks/a2a_overhead.py [--runs N] [--warmup N] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from reactloop import Agent, ModelResponse, ToolCall
from reactloop.messages import ModelRequest
from reactloop.testing import FunctionModel

HERE = Path(__file__).resolve().parent


def _pong(request: ModelRequest) -> Any:
    return "pong"


remote = Agent(model=FunctionModel(_pong), name="pong", instructions="Answers pong.")
"""Agent B (``reactloop serve --agent a2a_overhead:remote``)."""


def _caller_model() -> FunctionModel:
    def respond(request: ModelRequest) -> Any:
        if request.messages[-1].role == "tool":
            return "done"
        return ModelResponse(tool_calls=[ToolCall("ask_pong", {"task": "ping"})])
    return FunctionModel(respond)


def _session_tool(store: Path) -> Any:
    import uuid

    from reactloop import Tool

    b = Agent(model=FunctionModel(_pong), name="pong")

    async def ask_pong(task: str) -> str:
        """Ask agent B in a session of its own.

        Args:
            task: the task.
        """
        return str((await b.session(uuid.uuid4().hex, store=str(store)).send(task)).output)
    return Tool(ask_pong)


def _local_tool() -> Any:
    b = Agent(model=FunctionModel(_pong), name="pong")
    if hasattr(b, "as_tool"):
        return b.as_tool(name="ask_pong")
    from reactloop import Tool

    async def ask_pong(task: str) -> str:
        """Ask agent B.

        Args:
            task: the task.
        """
        return str((await b.run(task)).output)
    return Tool(ask_pong)


async def _durations(tool: Any, runs: int, warmup: int) -> list[float]:
    agent = Agent(model=_caller_model(), tools=[tool], name="caller")
    out: list[float] = []
    for i in range(warmup + runs):
        result = await agent.run("go")
        [reply] = [s for step in result.steps for s in step.results]
        if result.output != "done" or reply.error is not None or "pong" not in str(
                reply.result):
            raise RuntimeError(f"run {i} did not do the work: {result.output!r}, {reply!r}")
        if i >= warmup:
            out.append(reply.duration * 1000)
    return out


def start_remote(store: Path) -> tuple[subprocess.Popen[str], str]:
    """``reactloop serve`` with agent B on a free loopback port; its process and URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "reactloop", "serve", "--agent", "a2a_overhead:remote",
         "--port", "0", "--store", str(store)], cwd=HERE, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            match = re.search(r"http://\S+/", line)
            if match and not found:
                found.append(match.group(0).rstrip("/"))
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(60) or not found:
        proc.kill()
        raise RuntimeError("reactloop serve did not start")
    return proc, found[0]


def _summary(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {"median_ms": statistics.median(ordered),
            "p90_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]}


def measure(runs: int = 50, warmup: int = 5) -> dict[str, Any]:
    """Both figures (see the module docstring)."""
    from reactloop.a2a import A2AAgent

    local = asyncio.run(_durations(_local_tool(), runs, warmup))
    with tempfile.TemporaryDirectory() as tmp:
        session = asyncio.run(_durations(_session_tool(Path(tmp) / "local.sqlite3"), runs,
                                         warmup))
        proc, url = start_remote(Path(tmp) / "b.sqlite3")
        try:
            over_a2a = asyncio.run(_durations(A2AAgent(url).as_tool(name="ask_pong"),
                                              runs, warmup))
        finally:
            proc.terminate()
            proc.wait(timeout=15)
    out = {"runs": runs, "local": _summary(local), "session": _summary(session),
           "a2a": _summary(over_a2a)}
    out["a2a_overhead_ms"] = out["a2a"]["median_ms"] - out["local"]["median_ms"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    out = measure(args.runs, args.warmup)
    print(f"agent-as-tool call, {out['runs']} runs (median / p90, ms)")
    for name in ("local", "session", "a2a"):
        print(f"  {name:8} {out[name]['median_ms']:8.2f} / {out[name]['p90_ms']:8.2f}")
    print(f"  A2A round-trip overhead: {out['a2a_overhead_ms']:.2f} ms per call")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
