"""Smoke test of benchmarks/sessions_store.py on both stores (no timing assertions): every
figure is produced, and the benchmark's own checks (nothing lost) pass."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

from reactloop.sessions import PostgresStore, SQLiteStore

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "sessions_store.py"


def test_the_store_benchmark_measures_both_stores(store_arg: str) -> None:
    spec = importlib.util.spec_from_file_location("_bench_sessions_store", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    kind = PostgresStore if "://" in store_arg else SQLiteStore
    out = bench.measure(kind.__name__, lambda: kind(store_arg), 40)
    for key in ("append_mean_us", "append_p50_us", "append_p99_us", "messages_per_s",
                "parallel_messages_per_s", "send_overhead_us"):
        assert isinstance(out[key], float) and math.isfinite(out[key]) and out[key] > 0, key
    assert "| store |" in bench.table([out])
