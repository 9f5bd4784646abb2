"""Smoke test of benchmarks/compaction.py (figures only, no timing assertions)."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "compaction.py"


def test_compaction_benchmark_reports_its_figures() -> None:
    spec = importlib.util.spec_from_file_location("_bench_compaction", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    figures = asyncio.run(module.measure(iterations=30, window=4096, output_chars=4000))
    assert figures["state"] == "completed"
    assert figures["requests"] == 31
    assert figures["peak_request_tokens"] <= 4096
    assert figures["compactions"] >= 1 and figures["tier_runs"]
    assert figures["uncompacted_history_tokens"] > 4096
    assert figures["stored_messages"] == figures["final_history_messages"]
