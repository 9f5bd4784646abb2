"""benchmarks/evals: the eval files are consistent with their tools (no model needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reactloop.evals import CallRecord, Transcript, build_agent, load_suite, score

EVALS = Path(__file__).resolve().parents[1] / "benchmarks" / "evals"


def _plain(matcher: Any) -> Any:
    return matcher.value[0] if matcher.kind == "one_of" else matcher.value


@pytest.mark.parametrize("name", ["everyday.yaml", "holdout.yaml"])
def test_a_perfect_run_passes_every_case(name: str) -> None:
    suite = load_suite(EVALS / name)
    tools = {t.__name__: t for t in _tools(suite)}
    assert len(suite.cases) >= 16 and len(tools) >= 8
    for case in suite.cases:
        if any(e.name not in tools for e in case.tool_calls):
            continue  # skills, workspace, MCP: test_everyday_expects_only_offered_tools
        calls, output = [], "Hello!"
        for expected in case.tool_calls:
            fn = tools[expected.name]  # every expected tool is offered
            args = {k: _plain(m) for k, m in expected.args.items()}
            result = fn(**args)
            calls.append(CallRecord(expected.name, args, str(result)))
            output = f"The answer: {result}."
        t = Transcript(case.input, calls, output, "completed", 2)
        failed = [c for c in score(case, t) if not c.passed]
        assert not failed, (case.name, failed)


def _tools(suite: Any) -> list[Any]:
    from reactloop.evals._config import import_object

    return list(import_object(suite.agent["tools"][0], suite.base_dir))


def test_everyday_has_thirty_cases_over_eight_tools_and_ci_is_a_subset() -> None:
    everyday = load_suite(EVALS / "everyday.yaml")
    assert len(everyday.cases) >= 30
    assert len({c.tool_calls[0].name for c in everyday.cases if c.tool_calls}) >= 8
    ci = load_suite(EVALS / "ci.yaml")
    by_name = {c.name: c for c in everyday.cases}
    assert 10 <= len(ci.cases) < len(everyday.cases)
    for case in ci.cases:
        assert case == by_name[case.name], f"ci.yaml's {case.name} differs from everyday.yaml's"
    assert ci.agent == everyday.agent
    built = build_agent({**ci.agent, "model": _Scripted()}, ci.base_dir)
    assert {"add", "days_between", "calculate", "current_time", "list_dir",
            "load_skill"} <= set(built.tools)


@pytest.mark.parametrize("name", ["everyday.yaml", "everyday_more.yaml",
                                  "holdout_everyday.yaml", "holdout_everyday2.yaml",
                                  "holdout_everyday3.yaml", "holdout_everyday4.yaml",
                                  "holdout_everyday5.yaml", "holdout_everyday6.yaml",
                                  "holdout_everyday7.yaml", "everyday_more4.yaml"])
def test_everyday_expects_only_offered_tools(name: str) -> None:
    """Every expected call names a tool the agent offers: its own, a skill's, the workspace's,
    or the MCP server's (the time server's convert_time, namespaced ``time_``)."""
    from reactloop.skills import SkillSet

    everyday = load_suite(EVALS / name)
    assert everyday.agent == load_suite(EVALS / "everyday.yaml").agent
    built = build_agent({**everyday.agent, "model": _Scripted()}, everyday.base_dir)
    skills = SkillSet.discover([EVALS / "../../examples/skills"])
    offered = set(built.tools) | {t.name for t in skills.later_tools()}
    offered |= {"time_convert_time"}
    for case in everyday.cases:
        for expected in case.tool_calls:
            assert expected.name in offered, (case.name, expected.name)


class _Scripted:
    """Built lazily so that the test needs no model."""

    def __new__(cls) -> Any:
        from reactloop.testing import ScriptedModel

        return ScriptedModel([])


def test_ci_runs_the_subset_at_the_threshold_the_readme_justifies() -> None:
    import re

    ci = (EVALS.parents[1] / ".ci" / "run").read_text()
    found = re.search(r"^reactloop eval benchmarks/evals/ci\.yaml --fail-under ([0-9.]+)\b", ci,
                      re.M)
    assert found, ".ci/run must run the eval's CI subset with --fail-under"
    readme = (EVALS / "README.md").read_text()
    assert f"--fail-under {found[1]}" in readme.split("## CI threshold", 1)[1]


def test_the_ablation_switches_off_each_lever_of_guidance_in_its_own_row() -> None:
    """One ``no-<lever>`` row per switch of ``Guidance`` (all but the caps, which always
    apply), differing from the default in that switch alone; ``--only`` keeps its order."""
    import dataclasses
    import importlib.util
    import sys

    from reactloop.models.local import Guidance

    spec = importlib.util.spec_from_file_location("_bench_ablation", EVALS / "ablation.py")
    assert spec is not None and spec.loader is not None
    ablation = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = ablation  # its dataclass looks its module up there
    spec.loader.exec_module(ablation)
    rows = ablation.rows(())
    default = Guidance()
    levers = [f.name for f in dataclasses.fields(Guidance) if f.name != "caps"]

    def changed(g: Guidance) -> list[str]:
        return [name for name in levers if getattr(g, name) != getattr(default, name)]

    assert rows["all"] == default
    assert changed(rows["caps-only"]) == levers and rows["caps-only"].caps == default.caps
    singles = {name: changed(g) for name, g in rows.items() if name.startswith("no-")}
    assert sorted(lever for one in singles.values() for lever in one) == sorted(levers)
    assert all(len(one) == 1 for one in singles.values()), singles
    assert len(rows) == len(levers) + 2
    assert list(ablation.rows(("no-follow-up", "all"))) == ["no-follow-up", "all"]
    with pytest.raises(SystemExit, match="unknown row"):
        ablation.rows(("no-such-lever",))
