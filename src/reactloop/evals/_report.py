"""Eval reports: per case and per criterion, pass rate with its spread over repeats, tokens,
time, and the comparison with a baseline report. Rendered as text, Markdown or JSON; the JSON
form loads back (it is what ``--baseline`` reads).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reactloop.evals._cases import EvalConfigError
from reactloop.evals._score import Criterion
from reactloop.evals._transcript import Transcript

__all__ = ["CaseReport", "CaseRun", "Comparison", "Report"]

REPORT_VERSION = 1


@dataclass(slots=True)
class CaseRun:
    """One run of one case: the criteria and the transcript they were scored from."""

    case: str
    repeat: int
    criteria: list[Criterion]
    transcript: Transcript

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.criteria)

    @property
    def failures(self) -> list[Criterion]:
        return [c for c in self.criteria if not c.passed]

    def explain(self) -> str:
        """One line per failed criterion (for assertion messages)."""
        if self.passed:
            return f"{self.case}: passed"
        lines = [f"{self.case} (run {self.repeat + 1}) failed:"]
        lines += [f"  {c.name}: {c.reason}" for c in self.failures]
        lines.append(f"  answer: {self.transcript.output!r}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"repeat": self.repeat, "passed": self.passed,
                "criteria": [c.to_dict() for c in self.criteria],
                "transcript": self.transcript.to_dict()}

    @classmethod
    def from_dict(cls, case: str, d: Mapping[str, Any]) -> CaseRun:
        return cls(case, int(d.get("repeat", 0)),
                   [Criterion.from_dict(c) for c in d.get("criteria") or ()],
                   Transcript.from_dict(d.get("transcript") or {}))


@dataclass(slots=True)
class CaseReport:
    """All runs of one case."""

    name: str
    runs: list[CaseRun] = field(default_factory=list)

    @property
    def passed_runs(self) -> int:
        return sum(r.passed for r in self.runs)

    @property
    def pass_rate(self) -> float:
        return self.passed_runs / len(self.runs) if self.runs else 0.0

    @property
    def status(self) -> str:
        """``PASS`` (every run), ``FAIL`` (none) or ``FLAKY``."""
        if self.runs and self.passed_runs == len(self.runs):
            return "PASS"
        return "FAIL" if self.passed_runs == 0 else "FLAKY"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "pass_rate": round(self.pass_rate, 4),
                "runs": [r.to_dict() for r in self.runs]}


@dataclass(frozen=True, slots=True)
class Comparison:
    """How a report differs from a baseline, case by case (by pass rate)."""

    baseline: str
    baseline_rate: float
    rate: float
    fixed: tuple[tuple[str, float, float], ...] = ()
    """(case, baseline rate, rate) for cases whose pass rate went up."""
    regressed: tuple[tuple[str, float, float], ...] = ()
    new: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "baseline_pass_rate": round(self.baseline_rate, 4),
                "pass_rate": round(self.rate, 4),
                "fixed": [{"case": c, "before": b, "after": a} for c, b, a in self.fixed],
                "regressed": [{"case": c, "before": b, "after": a} for c, b, a in self.regressed],
                "new": list(self.new), "removed": list(self.removed)}

    def lines(self) -> list[str]:
        delta = 100 * (self.rate - self.baseline_rate)
        out = [f"vs baseline {self.baseline} ({_pct(self.baseline_rate)}): {delta:+.1f} points; "
               f"{len(self.fixed)} fixed, {len(self.regressed)} regressed, {len(self.new)} new, "
               f"{len(self.removed)} removed"]
        for label, items in (("fixed", self.fixed), ("regressed", self.regressed)):
            for case, before, after in items:
                out.append(f"  {label:<9}  {case} ({_pct(before)} → {_pct(after)})")
        out += [f"  {'new':<9}  {case}" for case in self.new]
        out += [f"  {'removed':<9}  {case}" for case in self.removed]
        return out


@dataclass(slots=True)
class Report:
    """The outcome of an eval."""

    name: str
    model: str
    repeat: int
    cases: list[CaseReport]
    seconds: float = 0.0
    """Wall time of the whole eval."""
    replayed_from: str | None = None
    comparison: Comparison | None = None

    # -- figures -----------------------------------------------------------------------------
    @property
    def runs(self) -> list[CaseRun]:
        return [r for c in self.cases for r in c.runs]

    @property
    def pass_rate(self) -> float:
        """Passed runs over all runs (0..1)."""
        runs = self.runs
        return sum(r.passed for r in runs) / len(runs) if runs else 0.0

    def repeat_rates(self) -> list[float]:
        """The pass rate of each repeat (how much one full pass varies)."""
        rates = []
        for k in range(self.repeat):
            runs = [r for r in self.runs if r.repeat == k]
            if runs:
                rates.append(sum(r.passed for r in runs) / len(runs))
        return rates

    def spread(self) -> dict[str, float]:
        rates = self.repeat_rates() or [self.pass_rate]
        return {"min": min(rates), "max": max(rates),
                "stdev": statistics.stdev(rates) if len(rates) > 1 else 0.0}

    def totals(self) -> dict[str, Any]:
        runs = self.runs
        seconds = sum(r.transcript.seconds for r in runs)
        costs = [r.transcript.cost_usd for r in runs]
        return {"input_tokens": sum(r.transcript.input_tokens for r in runs),
                "output_tokens": sum(r.transcript.output_tokens for r in runs),
                "cost_usd": None if None in costs else sum(c or 0.0 for c in costs),
                "run_seconds": seconds, "seconds_per_run": seconds / len(runs) if runs else 0.0}

    def compare(self, baseline: Report, label: str = "baseline") -> Comparison:
        """Case-by-case differences from ``baseline`` (also stored on :attr:`comparison`)."""
        before = {c.name: c.pass_rate for c in baseline.cases}
        now = {c.name: c.pass_rate for c in self.cases}
        fixed = tuple((n, before[n], r) for n, r in now.items() if n in before and r > before[n])
        regressed = tuple((n, before[n], r) for n, r in now.items()
                          if n in before and r < before[n])
        self.comparison = Comparison(
            label, baseline.pass_rate, self.pass_rate, fixed, regressed,
            tuple(n for n in now if n not in before), tuple(n for n in before if n not in now))
        return self.comparison

    def assert_pass_rate(self, minimum: float) -> None:
        """Raise ``AssertionError`` listing the failures when the pass rate is below
        ``minimum`` (0..1) — for use inside pytest."""
        if self.pass_rate < minimum:
            failures = "\n".join(r.explain() for r in self.runs if not r.passed)
            raise AssertionError(f"pass rate {_pct(self.pass_rate)} is below "
                                 f"{_pct(minimum)}:\n{failures}")

    # -- JSON --------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        totals, spread = self.totals(), self.spread()
        return {
            "version": REPORT_VERSION, "name": self.name, "model": self.model,
            "repeat": self.repeat, "replayed_from": self.replayed_from,
            "summary": {
                "cases": len(self.cases), "runs": len(self.runs),
                "passed_runs": sum(r.passed for r in self.runs),
                "pass_rate": round(self.pass_rate, 4),
                "repeat_pass_rates": [round(x, 4) for x in self.repeat_rates()],
                "spread": {k: round(v, 4) for k, v in spread.items()},
                "input_tokens": totals["input_tokens"], "output_tokens": totals["output_tokens"],
                "cost_usd": totals["cost_usd"],
                "seconds": round(self.seconds, 3),
                "seconds_per_run": round(totals["seconds_per_run"], 3)},
            "cases": [c.to_dict() for c in self.cases],
            "comparison": None if self.comparison is None else self.comparison.to_dict(),
        }

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json(indent=1) + "\n", encoding="utf-8")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Report:
        cases = [CaseReport(c["name"], [CaseRun.from_dict(c["name"], r) for r in c.get("runs", ())])
                 for c in d.get("cases") or ()]
        return cls(d.get("name", "eval"), d.get("model", ""), int(d.get("repeat", 1)), cases,
                   float((d.get("summary") or {}).get("seconds", 0.0)), d.get("replayed_from"))

    @classmethod
    def load(cls, path: str | Path) -> Report:
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except OSError as exc:
            raise EvalConfigError(f"cannot read report {p}: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise EvalConfigError(f"{p} is not a report (not UTF-8 text); write one with "
                                  "--json") from None
        except json.JSONDecodeError as exc:
            raise EvalConfigError(f"{p} is not a report (invalid JSON: {exc.msg}); write one "
                                  "with --json") from None
        if not isinstance(data, dict) or data.get("version") != REPORT_VERSION:
            raise EvalConfigError(f"{p} is not a reactloop eval report (write one with --json)")
        return cls.from_dict(data)

    # -- text and Markdown -------------------------------------------------------------------
    def summary_lines(self) -> list[str]:
        totals, runs = self.totals(), self.runs
        passed = sum(r.passed for r in runs)
        line = f"pass rate {_pct(self.pass_rate)} ({passed} of {len(runs)} runs"
        if self.repeat > 1:
            s = self.spread()
            line += (f"; per repeat {_pct(s['min'], 1, False)}–{_pct(s['max'])}, "
                     f"sd {100 * s['stdev']:.1f} points")
        lines = [line + ")",
                 f"tokens {totals['input_tokens']:,} in, {totals['output_tokens']:,} out; "
                 f"cost {_usd(totals['cost_usd'])}; "
                 f"time {self.seconds:.1f} s ({totals['seconds_per_run']:.1f} s per run)"]
        slowest = max(runs, key=lambda r: r.transcript.seconds, default=None)
        if slowest is not None:
            lines.append(f"slowest case {slowest.case}: {slowest.transcript.seconds:.1f} s"
                         + (f" (run {slowest.repeat + 1})" if self.repeat > 1 else ""))
        return lines

    def to_text(self) -> str:
        """The report as the CLI prints it."""
        head = f"eval {self.name} — model {self.model or '?'}, {len(self.cases)} case" \
               f"{'s' * (len(self.cases) != 1)}, {self.repeat} repeat{'s' * (self.repeat != 1)}"
        if self.replayed_from:
            head += f" (replayed from {self.replayed_from})"
        width = max((len(c.name) for c in self.cases), default=4)
        lines = [head, ""]
        for c in self.cases:
            lines.append(f"  {c.status:<5}  {c.name:<{width}}  {_row(c)}")
            lines += [f"         {reason}" for reason in _reasons(c)]
        lines += ["", *self.summary_lines()]
        if self.comparison is not None:
            lines += self.comparison.lines()
        return "\n".join(lines)

    def to_markdown(self) -> str:
        lines = [f"## eval {self.name}", "",
                 f"Model `{self.model or '?'}`, {len(self.cases)} cases × {self.repeat} "
                 f"repeat(s){f', replayed from `{self.replayed_from}`' if self.replayed_from else ''}.",
                 "", "| case | result | passed | iterations | tool calls | tokens | seconds | "
                 "failed criteria |", "|---|---|---:|---:|---:|---:|---:|---|"]
        for c in self.cases:
            t = _means(c)
            why = "<br>".join(_md(r) for r in _reasons(c)) or ""
            lines.append(f"| {_md(c.name)} | {c.status} | {c.passed_runs}/{len(c.runs)} | "
                         f"{t['iterations']:.1f} | {t['calls']:.1f} | {t['tokens']:.0f} | "
                         f"{t['seconds']:.1f} | {why} |")
        lines += ["", *[f"- {x}" for x in self.summary_lines()]]
        if self.comparison is not None:
            cmp_lines = self.comparison.lines()
            lines += ["", f"**{_md(cmp_lines[0])}**", "", *[f"- {_md(x.strip())}"
                                                            for x in cmp_lines[1:]]]
        return "\n".join(lines) + "\n"


def _means(c: CaseReport) -> dict[str, float]:
    n = len(c.runs) or 1
    ts = [r.transcript for r in c.runs]
    return {"iterations": sum(t.iterations for t in ts) / n,
            "calls": sum(len(t.calls) for t in ts) / n,
            "tokens": sum(t.input_tokens + t.output_tokens for t in ts) / n,
            "seconds": sum(t.seconds for t in ts) / n}


def _row(c: CaseReport) -> str:
    t = _means(c)
    return (f"{c.passed_runs}/{len(c.runs)}  {_num(t['iterations'])} it  "
            f"{_num(t['calls'])} calls  {t['tokens']:,.0f} tok  {t['seconds']:.1f} s")


def _num(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"


def _reasons(c: CaseReport) -> list[str]:
    """Distinct failure reasons of a case, with the runs they happened in."""
    by_reason: dict[str, list[int]] = {}
    for r in c.runs:
        for f in r.failures:
            by_reason.setdefault(f"{f.name}: {f.reason}", []).append(r.repeat + 1)
    if len(c.runs) == 1:
        return list(by_reason)
    return [f"[run{'s' * (len(runs) > 1)} {', '.join(map(str, runs))}] {reason}"
            for reason, runs in by_reason.items()]


def _usd(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"


def _pct(x: float, digits: int = 1, sign: bool = True) -> str:
    return f"{100 * x:.{digits}f}" + (" %" if sign else "")


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")

