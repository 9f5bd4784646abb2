"""Compaction under pressure: a long session with large tool outputs in a small window.

    python benchmarks/compaction.py                      # 200 iterations, 8k window
    python benchmarks/compaction.py --iterations 50 --json out.json

One persistent session (SQLite in a temporary folder) runs ``--iterations`` tool calls, each
returning ``--output-chars`` characters, against a scripted model with a ``--window``-token
context window; the model also writes the summaries (instantly, so the figures are reactloop's
own cost). Reported: peak request tokens (must stay under the window), how often compaction
ran and which tiers, the time spent compacting, and the size the history would have had
without compaction.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from reactloop import Agent, ModelRequest, ModelResponse, ToolCall
from reactloop.context import Compaction, TokenCounter
from reactloop.context._summary import SUMMARY_SYSTEM
from reactloop.events import CompactionEvent, RequestEvent, RunEndEvent
from reactloop.testing import FunctionModel


def _model(iterations: int, window: int) -> FunctionModel:
    calls = {"n": 0}

    def respond(request: ModelRequest) -> ModelResponse | ToolCall:
        if request.system == SUMMARY_SYSTEM:
            return ModelResponse(text="Fetched records so far; every record was well formed. "
                                      "Still to do: fetch the remaining records.")
        calls["n"] += 1
        if calls["n"] > iterations:
            return ModelResponse(text="All records fetched.")
        return ToolCall("fetch_records", {"page": calls["n"]})

    return FunctionModel(respond, context_window=window)


def _tool(output_chars: int) -> Any:
    line = "id,name,amount,currency,date\n"

    def fetch_records(page: int) -> str:
        """Fetch one page of records.

        Args:
            page: the page number
        """
        row = f"{page},customer-{page},{page * 17 % 1000}.00,EUR,2024-01-{page % 28 + 1:02d}\n"
        return (line + row * (output_chars // len(row) + 1))[:output_chars]

    return fetch_records


async def measure(iterations: int = 200, window: int = 8192, output_chars: int = 6000,
                  keep_last: int = 4) -> dict[str, Any]:
    """Run the session once and return the figures."""
    model = _model(iterations, window)
    agent = Agent(model=model, tools=[_tool(output_chars)], max_iterations=iterations + 2,
                  compaction=Compaction(keep_last=keep_last))
    with tempfile.TemporaryDirectory() as tmp:
        session = agent.session("bench", store=Path(tmp) / "sessions.sqlite3")
        peak, requests, compactions, tiers = 0, 0, 0, {}
        compacting, pending = 0.0, False
        started = time.perf_counter()
        async for event in session.stream("Fetch every page of records."):
            if isinstance(event, CompactionEvent):
                tiers[event.tier] = tiers.get(event.tier, 0) + 1
                compacting += event.duration
                pending = True
            elif isinstance(event, RequestEvent):
                peak = max(peak, event.tokens["total"])
                requests += 1
                compactions += pending
                pending = False
            elif isinstance(event, RunEndEvent):
                result = event.result
        elapsed = time.perf_counter() - started
        written = len(session.store.get("bench"))
        store_bytes = _size(Path(tmp))
    uncompacted = TokenCounter.for_model(model).messages(
        [m for m in _replay(iterations, output_chars)])
    return {
        "iterations": iterations, "window": window, "output_chars": output_chars,
        "state": result.state.value, "requests": requests,
        "peak_request_tokens": peak, "peak_fraction": round(peak / window, 3),
        "compactions": compactions, "tier_runs": tiers,
        "compaction_seconds": round(compacting, 4), "run_seconds": round(elapsed, 3),
        "compaction_share": round(compacting / elapsed, 3) if elapsed else 0.0,
        "summarizer_calls": sum(r.system == SUMMARY_SYSTEM for r in model.requests),
        "final_history_messages": len(result.messages), "stored_messages": written,
        "store_bytes": store_bytes, "uncompacted_history_tokens": uncompacted,
    }


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir())


def _replay(iterations: int, output_chars: int) -> list[Any]:
    """The history the run would have without compaction (for the comparison figure)."""
    from reactloop import Message

    tool = _tool(output_chars)
    out = [Message.user("Fetch every page of records.")]
    for page in range(1, iterations + 1):
        call = ToolCall("fetch_records", {"page": page}, f"c{page}")
        out += [Message.assistant("", [call]), Message.tool(f"c{page}", "fetch_records",
                                                            tool(page))]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--window", type=int, default=8192)
    parser.add_argument("--output-chars", type=int, default=6000)
    parser.add_argument("--keep-last", type=int, default=4)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    figures = asyncio.run(measure(args.iterations, args.window, args.output_chars,
                                  args.keep_last))
    for key, value in figures.items():
        print(f"{key:>28}: {value}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
