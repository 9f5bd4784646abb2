"""The embedded model on ``everyday.yaml`` with each lever of ``Guidance`` switched off in turn.

    python benchmarks/evals/ablation.py [--repeat 1] [--only all,no-retrieval] [--json OUT]
                                        [--suite benchmarks/evals/holdout.yaml]
                                        [--temperature 0.3] [--threads N] [--reverse]

Rows: ``all`` (the default), ``caps-only`` (no steering at all, the default caps), and ``all``
minus one lever (``no-<lever>``, one per switch of ``Guidance`` but its caps, which always
apply). ``--only`` runs the rows it names in the order it names them; ``--json`` is rewritten
after every row, so a run stopped early keeps the rows it finished.
Every row runs the whole eval with ``reactloop run``'s defaults on one loaded model; the table
gives the pass rate over the tool cases (right call, right arguments, result in the answer),
the small-talk cases (no tool called), and seconds per case. Needs llama-cpp-python.

The default decoding is greedy (temperature 0): every repeat gives the same answers on one
machine. To see how far the pass rate moves where float rounding differs (another CPU, another
llama.cpp build), ``--temperature`` samples instead, with seed ``k`` for repeat ``k``;
``--threads`` sets llama.cpp's threads and ``--reverse`` runs the cases in reverse order (each
prompt then follows another one in the KV cache). The CI threshold is set from these spreads.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import importlib.util
import json
import statistics
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
    "no-essential-arguments": {"essential_arguments": False},
    "no-stop-repeats": {"stop_repeats": False},
    "no-load-skills": {"load_skills": False},
    "no-follow-up": {"follow_up": False},
    "no-brief-skills": {"brief_skills": False},
}


@dataclasses.dataclass(frozen=True)
class Options:
    repeat: int = 1
    only: tuple[str, ...] = ()
    cases: tuple[str, ...] = ()
    suite: Path = HERE / "everyday.yaml"
    temperature: float = 0.0
    threads: int | None = None
    reverse: bool = False


def rows(only: tuple[str, ...]) -> dict[str, Any]:
    from reactloop.models.local import Caps, Guidance

    # no steering, with the caps the small model has by default (caps_only() alone would also
    # raise its answer cap to the larger models' 8,000 characters: runaway answers then take
    # minutes per case, which measures the cap, not the steering)
    out: dict[str, Any] = {"all": Guidance(), "caps-only": Guidance.caps_only(Caps())}
    out.update({name: dataclasses.replace(Guidance(), **change)
                for name, change in LEVERS.items()})
    unknown = [k for k in only if k not in out]
    if unknown:
        raise SystemExit(f"unknown row(s) {', '.join(unknown)}; the rows are: {', '.join(out)}")
    return {k: out[k] for k in only} if only else out


async def measure(o: Options, out: Path | None = None) -> list[dict[str, Any]]:
    from reactloop.evals import build_agent, load_suite
    from reactloop.models.local import LocalModel

    suite = load_suite(o.suite)
    if o.cases:
        suite = dataclasses.replace(suite, cases=tuple(c for c in suite.cases
                                                       if c.name in o.cases))
    if o.reverse:
        suite = dataclasses.replace(suite, cases=suite.cases[::-1])
    model = LocalModel(n_threads=o.threads, temperature=o.temperature)
    model.count_tokens("")  # load the weights before the clock starts
    table = []
    for name, guidance in rows(o.only).items():
        model.guidance = guidance
        agent = build_agent({**suite.agent, "model": model}, suite.base_dir)
        table.append(await _row(name, agent, model, suite, o.repeat))
        print(_line(table[-1]), file=sys.stderr)
        if out is not None:
            _save(out, table)  # a run stopped later keeps this row
    await model.aclose()
    return table


async def _row(name: str, agent: Any, model: Any, suite: Any, repeat: int) -> dict[str, Any]:
    from reactloop.evals import evaluate

    reports, started = [], time.perf_counter()
    for k in range(repeat):  # one seed per repeat (only sampling depends on it)
        model.seed = k
        reports.append(await evaluate(agent, suite, on_progress=lambda p, k=k: print(
            f"  {name} #{k} [{p.done}/{p.total}] {'PASS' if p.run.passed else 'FAIL'} "
            f"{p.run.case}", file=sys.stderr)))
    runs = [r for report in reports for r in report.runs]
    chat = [r for r in runs if "no-tool" in _tags(suite, r.case)]
    tool = [r for r in runs if "no-tool" not in _tags(suite, r.case)]
    rates = [report.pass_rate for report in reports]
    return {
        "row": name, "pass_rate": sum(r.passed for r in runs) / max(len(runs), 1),
        "tool_cases": sum(r.passed for r in tool) / max(len(tool), 1),
        "no_tool_cases": sum(r.passed for r in chat) / max(len(chat), 1),
        "seconds_per_case": (time.perf_counter() - started) / max(len(runs), 1),
        "spread": {"min": min(rates), "max": max(rates),
                   "stdev": statistics.stdev(rates) if len(rates) > 1 else 0.0,
                   "rates": rates},
        "reports": [report.to_dict() for report in reports],
    }


def _save(out: Path, table: list[dict[str, Any]]) -> None:
    out.write_text(json.dumps(table, indent=1))


def _tags(suite: Any, case: str) -> tuple[str, ...]:
    return next(c.tags for c in suite.cases if c.name == case)


def _line(r: dict[str, Any]) -> str:
    s = r["spread"]
    spread = (f" ({100 * s['min']:.0f}–{100 * s['max']:.0f} %, sd {100 * s['stdev']:.1f})"
              if len(s["rates"]) > 1 else "")
    return (f"| {r['row']} | {100 * r['tool_cases']:.0f} % | {100 * r['no_tool_cases']:.0f} % | "
            f"{100 * r['pass_rate']:.0f} %{spread} | {r['seconds_per_case']:.1f} |")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=1, help="runs per case (seed k for run k)")
    p.add_argument("--only", default="", help="comma-separated rows")
    p.add_argument("--cases", default="", help="comma-separated case names")
    p.add_argument("--json", help="write every row's full report here")
    p.add_argument("--suite", default=str(HERE / "everyday.yaml"), help="the cases file")
    p.add_argument("--temperature", type=float, default=0.0, help="0: greedy (the default)")
    p.add_argument("--threads", type=int, help="llama.cpp threads (default: its own choice)")
    p.add_argument("--reverse", action="store_true", help="run the cases in reverse order")
    a = p.parse_args()
    if importlib.util.find_spec("llama_cpp") is None:
        print("skipped: needs llama-cpp-python (pip install 'reactloop[local]')")
        return 0
    o = Options(a.repeat, tuple(filter(None, a.only.split(","))),
                tuple(filter(None, a.cases.split(","))), Path(a.suite), a.temperature,
                a.threads, a.reverse)
    rows(o.only)  # an unknown row name fails before the model loads
    table = asyncio.run(measure(o, Path(a.json) if a.json else None))
    print("| row | tool cases complete | small talk without a tool | all cases | s / case |")
    print("|---|---:|---:|---:|---:|")
    for r in table:
        print(_line(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
