"""Smoke test of the benchmark scripts' reactloop-only parts (no timing assertions).

The benchmarks live in ``benchmarks/`` (not a package); they are loaded from their files.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))  # worker.py imports the frameworks package
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def finite_positive(x: float) -> bool:
    return isinstance(x, float) and math.isfinite(x) and x > 0


def test_overhead_no_tools_runs_and_reports_numbers() -> None:
    overhead = load("overhead")
    out = asyncio.run(overhead.measure_no_tools(runs=5, warmup=1))
    assert out["runs"] == 5
    assert finite_positive(out["per_iteration_us"])


@pytest.mark.parametrize("inline", [False, True])
def test_overhead_tool_calls_complete_with_ten_calls(inline: bool) -> None:
    overhead = load("overhead")
    if inline and not overhead.inline_supported():
        pytest.skip("this reactloop has no @tool(inline=True)")
    # every run is checked inside: output "done", 10 tool calls, 11 iterations
    out = asyncio.run(overhead.measure_tool_calls(runs=3, warmup=1, inline=inline))
    assert out["tool_calls_per_run"] == 10
    assert finite_positive(out["median_run_us"])
    assert math.isfinite(out["per_iteration_us"])


def test_worker_reactloop_does_the_work_it_claims() -> None:
    worker = load("worker")
    fw = worker.framework("reactloop")
    out = asyncio.run(worker.overhead(fw, runs=3, warmup=1, n_calls=10))
    assert out["model_calls"] == out["expected_model_calls"] == 3 * 12
    assert out["tool_executions"] == out["expected_tool_executions"] == 30
    assert out["reported_tool_calls"] == [10]
    conc = asyncio.run(worker.concurrency(fw, n=20, delay=0.001, n_calls=10))
    assert conc["errors"] == 0
    assert conc["model_calls"] == conc["expected_model_calls"] == 20 * 11
    assert conc["pct_of_ideal"] > 0


def test_prefix_stability_measures_every_request() -> None:
    prefix = load("prefix")
    out = asyncio.run(prefix.measure(with_skill_tools=False))
    assert out["requests"] == prefix.ITERATIONS
    assert len(out["per_request"]) == prefix.ITERATIONS - 1
    assert 0 < out["min_share_pct"] <= out["mean_share_pct"] <= 100


def test_task_suite_scoring() -> None:
    tasks = load("tasks")
    from reactloop import ToolCall

    assert len(tasks.TASKS) >= 10
    add = tasks.TASKS[0]
    assert add.expected == "42"
    assert tasks.right_call(add, [ToolCall("add", {"a": 17.0, "b": 25})])
    assert not tasks.right_call(add, [ToolCall("add", {"a": 17, "b": 24})])
    assert not tasks.right_call(add, [ToolCall("multiply", {"a": 17, "b": 25})])
    assert tasks.answer_has("42", "The sum is 42.")
    assert tasks.answer_has("212.0", "It is 212 °F")
    assert not tasks.answer_has("42", "I don't know")


def test_worker_otel_measures_three_modes_and_every_span_arrives() -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    worker = load("worker")
    out = asyncio.run(worker.otel_overhead(runs=3, warmup=1, n_calls=10))
    # 2 runs a repetition (10 tool calls, then none): 2 run spans, 12 chats, 10 tools; plus
    # the SDK-floor spans in memory mode
    assert out["spans_delivered"] == out["spans_expected"]
    assert out["spans_expected"]["otlp"] == 4 * 24
    for mode in ("off", "memory", "otlp"):
        assert math.isfinite(out[f"{mode}_per_iteration_s"])
    assert finite_positive(out["sdk_floor_per_iteration_s"])


def test_attachments_benchmark_stores_each_picture_once() -> None:
    attachments = load("attachments")
    out = attachments.measure(images=3, mb=0.05, turns=2, repeat=1)
    assert out["attachment_bytes"] == out["pictures_bytes"]
    assert out["file_bytes"] < 2 * out["pictures_bytes"] + 200_000
    assert out["bytes_sent_on_resume"] == out["pictures_bytes"]
    assert out["history_bytes_resent"] > 3 * out["pictures_bytes"]


def test_multi_agent_benchmark_compares_both_tools() -> None:
    bench = load("multi_agent")
    out = asyncio.run(bench.measure(calls=3, runs=2, warmup=1))  # each run checks its work
    assert finite_positive(out["function_tool_us"]) and finite_positive(out["agent_tool_us"])


def test_a2a_overhead_measures_both_calls() -> None:
    pytest.importorskip("a2a.server", reason="pip install 'reactloop[a2a]'")
    out = load("a2a_overhead").measure(runs=2, warmup=1)  # each run checks its own answer
    assert out["runs"] == 2
    assert all(finite_positive(out[k]["median_ms"]) for k in ("local", "session", "a2a"))
