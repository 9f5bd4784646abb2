"""Scoring a :class:`Transcript` against a :class:`Case`: pure functions, one per criterion.

Every criterion says why it failed in words a user can act on — "expected
subtract(a=1234, b=234); closest call subtract(a=123, b=234): a: got 123, want 1234" — and
gives a partial score, so a trajectory that is almost right is not reported as 0.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reactloop.evals._cases import Case, ExpectedCall
from reactloop.evals._matchers import normalize, show
from reactloop.evals._transcript import CallRecord, Transcript

__all__ = ["Criterion", "call_problems", "score"]


@dataclass(frozen=True, slots=True)
class Criterion:
    """One judged aspect of a run."""

    name: str
    """``tool_calls``, ``max_tool_calls``, ``max_iterations``, ``output.contains``,
    ``output.not_contains``, ``output.regex``, ``output.equals``, ``state``, ``rubric`` or
    ``run``."""
    passed: bool
    reason: str
    score: float = 1.0
    """0..1; partial credit where it means something (the share of expected calls made)."""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "reason": self.reason,
                "score": round(self.score, 4)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Criterion:
        return cls(d["name"], bool(d["passed"]), d.get("reason", ""), float(d.get("score", 0)))


def score(case: Case, t: Transcript) -> list[Criterion]:
    """All deterministic criteria of ``case`` for the run ``t`` (the rubric is judged apart)."""
    out: list[Criterion] = []
    if t.state == "error" and (case.state is None or case.state.value != "error"):
        out.append(Criterion("run", False, f"the run failed: {t.error or 'unknown error'}", 0.0))
    own = [c for c in t.calls if c.agent is None]  # sub-agents' calls when a case names them
    if case.tool_calls:
        named = {e.agent for e in case.tool_calls if e.agent is not None}
        out.append(_trajectory(case, [c for c in t.calls if c.agent is None or c.agent in named]))
    if case.max_tool_calls is not None:
        n = len(own)
        out.append(Criterion("max_tool_calls", n <= case.max_tool_calls,
                             f"{n} tool call{'s' * (n != 1)} (at most {case.max_tool_calls})",
                             float(n <= case.max_tool_calls)))
    if case.max_iterations is not None:
        n = t.iterations
        out.append(Criterion("max_iterations", n <= case.max_iterations,
                             f"{n} iteration{'s' * (n != 1)} (at most {case.max_iterations})",
                             float(n <= case.max_iterations)))
    out.extend(_output(case, t.output))
    if case.state is not None:
        ok = t.state == case.state.value
        out.append(Criterion("state", ok, f"ended {t.state}" + ("" if ok else
                                                                f", want {case.state.value}"),
                             float(ok)))
    if not out:
        out.append(Criterion("run", True, f"no expectations; the run ended {t.state}"))
    return out


# -- tool calls ------------------------------------------------------------------------------
def call_problems(expected: ExpectedCall, call: CallRecord) -> list[str]:
    """Why ``call`` does not satisfy ``expected`` ([] when it does)."""
    if call.name != expected.name:
        return [f"called {call.name}, not {expected.name}"]
    if call.agent != expected.agent:
        return [f"made by {call.agent or 'the agent'}, not by {expected.agent or 'the agent'}"]
    problems = []
    for key, matcher in expected.args.items():
        if key not in call.arguments:
            if matcher.kind != "ignore":
                problems.append(f"{key}: missing")
            continue
        why = matcher.check(call.arguments[key])
        if why:
            problems.append(f"{key}: {why}")
    if expected.strict:
        problems += [f"{k}: not expected" for k in call.arguments if k not in expected.args]
    return problems


def _show_call(call: CallRecord) -> str:
    args = ", ".join(f"{k}={show(v, 30)}" for k, v in call.arguments.items())
    by = f"{call.agent}: " if call.agent is not None else ""
    return f"{by}{call.name}({args})"


def _listing(calls: Sequence[CallRecord]) -> str:
    if not calls:
        return "no tool was called"
    shown = ", ".join(_show_call(c) for c in calls[:4])
    return "calls: " + shown + (f", … ({len(calls) - 4} more)" if len(calls) > 4 else "")


def _miss(expected: ExpectedCall, calls: Sequence[CallRecord], every: Sequence[CallRecord]
          ) -> str:
    same = [(call_problems(expected, c), c) for c in calls if c.name == expected.name]
    if not same:
        return f"expected {expected.describe()}, but {expected.name} was not called " \
               f"({_listing(every)})"
    problems, closest = min(same, key=lambda pc: len(pc[0]))
    return (f"expected {expected.describe()}; closest call {_show_call(closest)}: "
            + "; ".join(problems))


def _trajectory(case: Case, calls: Sequence[CallRecord]) -> Criterion:
    expected = case.tool_calls
    if case.order == "exact":
        return _exact(expected, calls)
    if case.order == "in_order":
        matched, missing = _in_order(expected, calls)
    else:
        matched, missing = _any_order(expected, calls)
    n = len(expected)
    if not missing:
        return Criterion("tool_calls", True, f"{n}/{n} expected calls made ({case.order})")
    first = expected[missing[0]]
    why = _miss(first, calls, calls)
    more = f" (+{len(missing) - 1} more missing)" if len(missing) > 1 else ""
    if case.order == "in_order" and any(call_problems(first, c) == [] for c in calls):
        why = f"{first.describe()} was called, but not in the expected order"
    return Criterion("tool_calls", False, f"{matched}/{n} expected calls made: {why}{more}",
                     matched / n)


def _exact(expected: Sequence[ExpectedCall], calls: Sequence[CallRecord]) -> Criterion:
    n = max(len(expected), len(calls))
    good = sum(1 for e, c in zip(expected, calls, strict=False) if not call_problems(e, c))
    if good == len(expected) == len(calls):
        return Criterion("tool_calls", True, f"exactly the {len(calls)} expected calls")
    for i, (e, c) in enumerate(zip(expected, calls, strict=False)):
        problems = call_problems(e, c)
        if problems:
            why = f"call {i + 1}: expected {e.describe()}, got {_show_call(c)}: " \
                  + "; ".join(problems)
            break
    else:
        if len(calls) > len(expected):
            why = f"{len(calls) - len(expected)} extra call(s): " \
                  + ", ".join(_show_call(c) for c in calls[len(expected):][:3])
        else:
            why = "missing: " + ", ".join(e.describe() for e in expected[len(calls):][:3])
    return Criterion("tool_calls", False,
                     f"expected exactly {len(expected)} call(s), got {len(calls)}: {why}",
                     good / n if n else 0.0)


def _in_order(expected: Sequence[ExpectedCall], calls: Sequence[CallRecord]
              ) -> tuple[int, list[int]]:
    # greedy earliest match is optimal for "is a subsequence of"
    pos, matched, missing = 0, 0, []
    for i, e in enumerate(expected):
        j = next((j for j in range(pos, len(calls)) if not call_problems(e, calls[j])), None)
        if j is None:
            missing.append(i)
        else:
            matched, pos = matched + 1, j + 1
    return matched, missing


def _any_order(expected: Sequence[ExpectedCall], calls: Sequence[CallRecord]
               ) -> tuple[int, list[int]]:
    # a maximum bipartite matching (Kuhn's augmenting paths): a call satisfies one expectation
    fits = [[j for j, c in enumerate(calls) if not call_problems(e, c)] for e in expected]
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in fits[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    matched = sum(augment(i, set()) for i in range(len(expected)))
    done = set(owner.values())
    return matched, [i for i in range(len(expected)) if i not in done]


# -- the answer ------------------------------------------------------------------------------
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _found(want: str, text: str) -> bool:
    """``want`` in the normalised ``text``; a number only as a whole number (42 is not in 420
    nor in 4.2, but is in 42.0)."""
    want = normalize(want)
    if _NUMBER.fullmatch(want):
        return re.search(rf"(?<![\d.]){re.escape(want)}(?!\d)", text) is not None
    return want in text


def _output(case: Case, output: str) -> list[Criterion]:
    check, out, text = case.output, [], normalize(output)
    quoted = show(output, 80)
    if check.contains:
        missing = [c for c in check.contains if not _found(c, text)]
        out.append(Criterion(
            "output.contains", not missing,
            f"the answer contains {', '.join(map(repr, check.contains))}" if not missing else
            f"{', '.join(map(repr, missing))} not in the answer {quoted}",
            1 - len(missing) / len(check.contains)))
    if check.not_contains:
        found = [c for c in check.not_contains if _found(c, text)]
        out.append(Criterion(
            "output.not_contains", not found,
            "none of the excluded texts appear" if not found else
            f"{', '.join(map(repr, found))} in the answer {quoted}", float(not found)))
    if check.regex:
        missing = [r for r in check.regex if re.search(r, output) is None]
        out.append(Criterion(
            "output.regex", not missing,
            "every pattern matches" if not missing else
            f"/{missing[0]}/ does not match the answer {quoted}",
            1 - len(missing) / len(check.regex)))
    if check.equals is not None:
        ok = text == normalize(check.equals)
        out.append(Criterion("output.equals", ok, "the answer is as expected" if ok else
                             f"the answer {quoted} is not {check.equals!r}", float(ok)))
    return out
