"""The run log behind ``reactloop logs``: one JSON record per run, next to its session.

Records go through the store's ``log_run``/``runs`` (the SQLite and PostgreSQL stores have
them, in a table of their numbered schema); a store without them keeps no run log. Text is
redacted before it is stored.
"""

from __future__ import annotations

import json
import time
from typing import Any

from reactloop.cli._observe import redact
from reactloop.cli._outcome import Outcome
from reactloop.result import RunResult

__all__ = ["log_run", "make_record", "supports_log", "trace_from_steps"]


def supports_log(store: Any) -> bool:
    return callable(getattr(store, "log_run", None)) and callable(getattr(store, "runs", None))


def make_record(result: RunResult, outcome: Outcome, *, prompt: str, model: str,
                started: float, trace: list[dict[str, Any]], cost: float | None = None,
                ) -> dict[str, Any]:
    m = result.metrics
    record = {
        "started": started,
        "model": model,
        "state": result.state.value,
        "ending": outcome.label,
        "exit_code": outcome.code,
        "notes": outcome.notes,
        "prompt": prompt,
        "output": result.output if isinstance(result.output, str) else json.dumps(
            result.output, ensure_ascii=False, default=str),
        "iterations": m.iterations,
        "tool_calls": m.tool_calls,
        "input_tokens": m.input_tokens,
        "output_tokens": m.output_tokens,
        "cache_read_tokens": m.cache_read_tokens,
        "cache_write_tokens": m.cache_write_tokens,
        "duration": m.execution_time,
        # genai-prices' price, else what the provider reported; None: unknown
        "cost": m.cost_usd if m.cost_usd is not None and m.requests else cost,
        "error": None if result.error is None else f"{type(result.error).__name__}: "
                                                    f"{result.error}",
        "trace": trace,
    }
    # one redaction pass over the whole record: keys never reach the log
    redacted: dict[str, Any] = json.loads(redact(json.dumps(record, ensure_ascii=False,
                                                            default=str)))
    return redacted


def trace_from_steps(result: RunResult, seen: list[dict[str, Any]],
                     writes: Any = None) -> list[dict[str, Any]]:
    """The trace of a run whose events were not watched (``--json`` runs without streaming):
    tool calls and results from its steps, merged with the model calls in ``seen``."""
    out: list[dict[str, Any]] = []
    for step in result.steps:
        out.extend(d for d in seen if d.get("iteration") == step.iteration)
        if step.tool_calls and (step.text or "").strip():
            out.append({"type": "thought", "iteration": step.iteration, "text": step.text})
        for call in step.tool_calls:
            flag = bool(getattr(writes(call.name), "writes", False)) if writes else False
            out.append({"type": "tool_call", "iteration": step.iteration,
                        "call": call.to_dict(), "writes": flag})
        for r in step.results:
            out.append({"type": "tool_error" if r.error else "tool_result",
                        "iteration": step.iteration,
                        "result": {"name": r.name, "error": r.error, "content": r.content,
                                   "cached": r.cached}})
    steps = {s.iteration for s in result.steps}
    return out + [d for d in seen if d.get("iteration") not in steps]


def log_run(store: Any, session_id: str | None, result: RunResult, record: dict[str, Any]
            ) -> bool:
    """Store the record; False when the store keeps no run log."""
    if store is None or not supports_log(store):
        return False
    store.log_run(result.run_id or f"run{time.time_ns():x}", session_id, record)
    return True
