"""The CI regression check (``benchmarks/regression.py``): it passes on the recorded figures
and fails, naming the figure, when an iteration does more work. No timing assertions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.test_benchmarks_smoke import load

from reactloop.runtime import LocalRuntime


def test_call_counts_repeat_exactly() -> None:
    profiling = load("profiling")
    first = profiling.calls("async", runs=2)
    again = profiling.calls("async", runs=2)
    assert first["calls_per_iteration"] == again["calls_per_iteration"] > 0


def test_an_added_call_per_iteration_fails_the_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    regression = load("regression")
    baseline = tmp_path / "baseline.json"
    regression.record(regression.measure(), baseline)
    assert regression.check(baseline, with_timing=False) == 0

    now, same = LocalRuntime.now, (lambda value: value)  # now: once per iteration
    monkeypatch.setattr(LocalRuntime, "now", lambda self: same(now()))  # two more calls
    assert regression.check(baseline, with_timing=False) == 1
    out = capsys.readouterr().out
    assert "regression check FAILED" in out
    assert "async.calls_per_iteration" in out
    recorded = json.loads(baseline.read_text())["figures"]["async.calls_per_iteration"]
    assert f"{recorded['value'] + 2:g} > {recorded['value']:g} recorded" in out


def test_the_recorded_baseline_is_for_every_figure() -> None:
    regression = load("regression")
    recorded = json.loads(regression.BASELINE.read_text())
    assert set(recorded["figures"]) == set(regression.FIGURES)
    assert all(f["tolerance"] > 0 for f in recorded["figures"].values())
