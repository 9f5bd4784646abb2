"""Issue 27: benchmarks/controls.py does the work it reports (functional, no timing claims)."""

from __future__ import annotations

import asyncio
import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "controls.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_bench_controls", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_per_iteration_cost_runs_both_agents() -> None:
    out = asyncio.run(_load().per_iteration(runs=3, warmup=1))  # each run checked inside
    assert all(math.isfinite(v) for v in out.values()) and out["disabled_us"] > 0


def test_cache_share_reads_what_earlier_requests_wrote() -> None:
    out = _load().cache_share(3)
    assert out["requests"] == 6 and out["per_request_pct"][0] == 0  # nothing cached yet
    assert all(p > 50 for p in out["per_request_pct"][1:])  # every later call reads
    assert 50 < out["cache_read_share_pct"] < 100
