"""The comparison engine: align two sources' rows by key, measure the differences, classify.

Pure Python (no database), so it can be tested and reused on its own.

The classification rule (one rule, used everywhere; both thresholds are configurable):

* ``difference = source_a_value - source_b_value`` (``absolute_diff``, signed, in the measure's
  unit) and ``percentage_diff = difference / |source_a_value| * 100`` — source A is the
  reference.
* **match** when ``|difference| <= tolerance`` (default 0.01, i.e. rounding noise);
* **major_diff** when ``|percentage_diff| > major_pct`` (default 1 %) **or**
  ``|difference| > major_abs`` (default 5,000; ``None`` disables the absolute test), and
  always when a key exists in only one source;
* **minor_diff** otherwise.

The absolute test is what makes a large amount with a small percentage major: for company 1001
in period 202401, 1,500,000 versus 1,492,000 is only 0.53 %, but 8,000 exceeds 5,000, so it is
a major difference.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Thresholds", "classify", "compare", "interpret"]

Key = tuple[str, ...]


@dataclass(frozen=True)
class Thresholds:
    """When a difference is a match, minor or major (see the module docstring)."""

    major_pct: float = 1.0
    """A difference above this percentage of source A's value is major."""
    major_abs: float | None = 5000.0
    """A difference above this absolute amount is major (None: no absolute test)."""
    tolerance: float = 0.01
    """A difference at or below this absolute amount is a match."""

    def __post_init__(self) -> None:
        if self.major_pct < 0 or self.tolerance < 0:
            raise ValueError("major_pct and tolerance must not be negative")
        if self.major_abs is not None and self.major_abs < 0:
            raise ValueError("major_abs must not be negative (or None to disable it)")

    def describe(self) -> str:
        abs_part = f" or |difference| > {_num(self.major_abs)}" if self.major_abs is not None else ""
        return (f"match when |difference| <= {_num(self.tolerance)}; major when "
                f"|percentage| > {_num(self.major_pct)}%{abs_part}, or when a key is missing "
                "from one source; otherwise minor")


def classify(a: float | None, b: float | None, t: Thresholds = Thresholds()
             ) -> tuple[str, float, float | None]:
    """``(status, difference, percentage)`` for one aligned pair; a missing side counts as 0.

    ``percentage`` is ``None`` when source A's value is 0 (or missing) and B's is not."""
    diff = (a or 0.0) - (b or 0.0)
    if a is None or b is None:
        pct = None if not a else diff / abs(a) * 100
        return "major_diff", diff, pct
    if abs(diff) <= t.tolerance:
        return "match", diff, 0.0 if a == 0 else diff / abs(a) * 100
    pct = None if a == 0 else diff / abs(a) * 100
    if pct is None or abs(pct) > t.major_pct or (t.major_abs is not None and abs(diff) > t.major_abs):
        return "major_diff", diff, pct
    return "minor_diff", diff, pct


def _aggregate(rows: Iterable[Mapping[str, Any]], keys: Sequence[str], measure: str
               ) -> dict[Key, float]:
    out: dict[Key, float] = {}
    for row in rows:
        key = tuple(str(row[k]) for k in keys)
        value = row.get(measure)
        out[key] = out.get(key, 0.0) + float(value or 0)
    return out


def compare(rows_a: Iterable[Mapping[str, Any]], rows_b: Iterable[Mapping[str, Any]],
            key_columns: Sequence[str], measure: str = "amount",
            thresholds: Thresholds = Thresholds(), top_n: int = 10) -> dict[str, Any]:
    """Compare two row sets on ``measure``, aligned by ``key_columns``.

    Rows with the same key are summed first, so raw and pre-aggregated rows both work. Returns
    ``summary``, ``top_differences`` (largest absolute differences first) and
    ``interpretation``, shaped like seed 000's ``compare_sources`` result.
    """
    if not key_columns:
        raise ValueError("key_columns must name at least one column")
    a = _aggregate(rows_a, key_columns, measure)
    b = _aggregate(rows_b, key_columns, measure)
    counts = {"match": 0, "minor_diff": 0, "major_diff": 0}
    diffs: list[dict[str, Any]] = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key), b.get(key)
        status, diff, pct = classify(va, vb, thresholds)
        counts[status] += 1
        if status == "match":
            continue
        item: dict[str, Any] = {
            "key": dict(zip(key_columns, key, strict=True)),
            "source_a_value": _num(va),
            "source_b_value": _num(vb),
            "absolute_diff": _num(diff),
            "percentage_diff": None if pct is None else round(pct, 2),
            "status": status,
        }
        if va is None or vb is None:
            item["missing_in"] = "source_a" if va is None else "source_b"
        diffs.append(item)
    diffs.sort(key=lambda d: (-abs(d["absolute_diff"]), str(d["key"])))
    total_a, total_b = sum(a.values()), sum(b.values())
    summary = {
        "total_rows": sum(counts.values()),
        "matches": counts["match"],
        "minor_differences": counts["minor_diff"],
        "major_differences": counts["major_diff"],
        "only_in_source_a": sum(1 for k in a if k not in b),
        "only_in_source_b": sum(1 for k in b if k not in a),
        "total_source_a": _num(total_a),
        "total_source_b": _num(total_b),
        "total_diff": _num(total_a - total_b),
    }
    return {
        "summary": summary,
        "top_differences": diffs[: max(0, top_n)],
        "interpretation": interpret(summary),
        "rule": thresholds.describe(),
        "thresholds": asdict(thresholds),
    }


def interpret(summary: Mapping[str, Any]) -> str:
    """One sentence: the alignment label with the match rate, then what differs."""
    n = summary["total_rows"]
    if n == 0:
        return "No rows to compare: the filters matched nothing in either source"
    rate = summary["matches"] / n * 100
    if rate == 100:
        label = "Perfect alignment"
    elif rate >= 95:
        label = "Good alignment"
    elif rate >= 80:
        label = "Moderate alignment"
    else:
        label = "Poor alignment"
    parts = []
    for count, kind in ((summary["major_differences"], "major"),
                        (summary["minor_differences"], "minor")):
        if count:
            parts.append(f"{count} row{'s' if count != 1 else ''} with {kind} "
                         f"difference{'s' if count != 1 else ''}")
    text = f"{label} ({rate:.1f}%)"
    return text + (": " + ", ".join(parts) if parts else "")


def _num(x: float | None) -> Any:
    """Whole numbers as ints, others rounded to cents; JSON-friendly."""
    if x is None or math.isnan(x):
        return None
    r = round(x, 2)
    return int(r) if r == int(r) else r
