"""Evals: does an agent do its job? Cases in YAML, scored from reactloop's own events.

From Python (or inside pytest)::

    from reactloop.evals import evaluate_sync, load_suite

    suite = load_suite("evals/cases.yaml")
    report = evaluate_sync(agent, suite, repeat=3)
    print(report.to_text())
    report.assert_pass_rate(0.8)

From the shell: ``reactloop eval evals/cases.yaml --repeat 3 --fail-under 0.8``.

A case gives an input (one message or several turns) and what a good run looks like: the
tool calls with per-argument matchers and an order mode, limits on calls and iterations,
checks on the answer, the final run state, and optionally a yes/no rubric for an LLM judge.
Model calls can be recorded in a :class:`Cassette` and replayed, so stored runs are re-scored
at no model cost. No external service is involved.
"""

from reactloop.evals._cases import (
    Case,
    EvalConfigError,
    ExpectedCall,
    OrderMode,
    OutputCheck,
    Suite,
    load_suite,
    parse_case,
    parse_matcher,
    parse_suite,
)
from reactloop.evals._cassette import Cassette, CassetteMiss, request_digest
from reactloop.evals._config import build_agent
from reactloop.evals._judge import Judge
from reactloop.evals._matchers import Matcher, normalize
from reactloop.evals._report import CaseReport, CaseRun, Comparison, Report
from reactloop.evals._runner import Progress, evaluate, evaluate_sync, run_case, run_case_sync
from reactloop.evals._score import Criterion, score
from reactloop.evals._transcript import CallRecord, Transcript

__all__ = [
    "CallRecord",
    "Case",
    "CaseReport",
    "CaseRun",
    "Cassette",
    "CassetteMiss",
    "Comparison",
    "Criterion",
    "EvalConfigError",
    "ExpectedCall",
    "Judge",
    "Matcher",
    "OrderMode",
    "OutputCheck",
    "Progress",
    "Report",
    "Suite",
    "Transcript",
    "build_agent",
    "evaluate",
    "evaluate_sync",
    "load_suite",
    "normalize",
    "parse_case",
    "parse_matcher",
    "parse_suite",
    "request_digest",
    "run_case",
    "run_case_sync",
    "score",
]
