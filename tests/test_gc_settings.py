"""The collector's settings (issue 28): the library never changes them; the commands that own
their process (``serve``, ``worker``, ``eval``) freeze what start-up made."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from click.testing import CliRunner

from reactloop import Agent, ModelResponse, ToolCall, tool
from reactloop.cli import _process
from reactloop.testing import ScriptedModel

ROOT = Path(__file__).resolve().parents[1]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def settings() -> tuple[object, ...]:
    return gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()


def test_runs_leave_the_collector_as_they_found_it() -> None:
    before = settings()
    model = ScriptedModel([ModelResponse(tool_calls=[ToolCall("add", {"a": 1, "b": 2})]), "3"])
    assert Agent(model=model, tools=[add]).run_sync("Add.").output == "3"
    assert settings() == before


def test_settle_heap_freezes_what_is_alive() -> None:
    try:
        _process.settle_heap()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_eval_settles_the_heap_once_started(monkeypatch: pytest.MonkeyPatch) -> None:
    called: list[bool] = []
    monkeypatch.setattr(_process, "settle_heap", lambda: called.append(True))
    from reactloop.cli import main

    toy = ROOT / "examples" / "evals" / "toy_agent.py"
    cases = ROOT / "examples" / "evals" / "arithmetic.yaml"
    result = CliRunner().invoke(main, ["eval", str(cases), "--agent", f"{toy}:agent"])
    assert "pass rate" in result.output, result.output
    assert called == [True]
