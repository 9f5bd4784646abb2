"""The embedded model on ``everyday.yaml`` with each lever of ``Guidance`` switched off in turn.

    python benchmarks/evals/ablation.py [--repeat 1] [--only all,no-retrieval] [--json OUT]
                                        [--suite benchmarks/evals/holdout.yaml]

Rows: ``all`` (the default), ``caps-only`` (no steering at all), and ``all`` minus one lever.
Every row runs the whole eval with ``reactloop run``'s defaults on one loaded model; the table
gives the pass rate over the tool cases (right call, right arguments, result in the answer),
the small-talk cases (no tool called), and seconds per case. Needs llama-cpp-python.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LEVERS = {
    "no-retrieval": {"tool_limit": None},
    "no-required-call": {"require_call": False},
    "no-argument-copy": {"copy_arguments": False},
    "no-answer-after-result": {"answer_after_result": False},
    "no-answer-from-result": {"answer_from_result": False},
    "no-note-stripping": {"strip_notes": False},
}


def rows(only: list[str] | None) -> dict[str, Any]:
    from reactloop.models.local import Guidance

    out: dict[str, Any] = {"all": Guidance(), "caps-only": Guidance.caps_only()}
    out.update({name: dataclasses.replace(Guidance(), **change)
                for name, change in LEVERS.items()})
    return {k: v for k, v in out.items() if not only or k in only}


async def measure(repeat: int, only: list[str] | None, cases: list[str] | None,
                  path: Path = HERE / "everyday.yaml") -> list[dict[str, Any]]:
    from reactloop.evals import build_agent, evaluate, load_suite
    from reactloop.models.local import LocalModel

    suite = load_suite(path)
    if cases:
        suite = dataclasses.replace(suite, cases=tuple(c for c in suite.cases if c.name in cases))
    model = LocalModel()
    model._load()
    table = []
    for name, guidance in rows(only).items():
        model.guidance = guidance
        agent = build_agent({**suite.agent, "model": model}, suite.base_dir)
        t = time.perf_counter()
        report = await evaluate(agent, suite, repeat=repeat, on_progress=lambda p, name=name: print(
            f"  {name} [{p.done}/{p.total}] {'PASS' if p.run.passed else 'FAIL'} {p.run.case}",
            file=sys.stderr))
        tool_runs = [r for r in report.runs if "no-tool" not in _tags(suite, r.case)]
        chat_runs = [r for r in report.runs if "no-tool" in _tags(suite, r.case)]
        table.append({
            "row": name, "pass_rate": report.pass_rate,
            "tool_cases": sum(r.passed for r in tool_runs) / max(len(tool_runs), 1),
            "no_tool_cases": sum(r.passed for r in chat_runs) / max(len(chat_runs), 1),
            "seconds_per_case": (time.perf_counter() - t) / max(len(report.runs), 1),
            "spread": report.spread(), "report": report.to_dict(),
        })
        print(_line(table[-1]), file=sys.stderr)
    await model.aclose()
    return table


def _tags(suite: Any, case: str) -> tuple[str, ...]:
    return next(c.tags for c in suite.cases if c.name == case)


def _line(r: dict[str, Any]) -> str:
    return (f"| {r['row']} | {100 * r['tool_cases']:.0f} % | {100 * r['no_tool_cases']:.0f} % | "
            f"{100 * r['pass_rate']:.0f} % | {r['seconds_per_case']:.1f} |")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--only", help="comma-separated rows")
    p.add_argument("--cases", help="comma-separated case names")
    p.add_argument("--json", help="write every row's full report here")
    p.add_argument("--suite", default=str(HERE / "everyday.yaml"), help="the cases file")
    a = p.parse_args()
    if importlib.util.find_spec("llama_cpp") is None:
        print("skipped: needs llama-cpp-python (pip install 'reactloop[local]')")
        return 0
    table = asyncio.run(measure(a.repeat, a.only.split(",") if a.only else None,
                                a.cases.split(",") if a.cases else None, Path(a.suite)))
    print("| row | tool cases complete | small talk without a tool | all cases | s / case |")
    print("|---|---:|---:|---:|---:|")
    for r in table:
        print(_line(r))
    if a.json:
        Path(a.json).write_text(json.dumps(table, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
