"""The record a question asks the extreme of, by one of the records' fields ("which company
had the highest total?", "which period was the smallest for company 1002?", "which company
booked the most rent?"), or the one that differs ("which account differs?"): the records the question's other codes and names keep
(:func:`reactloop.models._shaping._narrowed`), their measure summed per value of that field,
and the highest or the lowest of the sums named first: ``company 1001 highest amount 1492000
(1001 1492000, 2001 1025000, 1002 912000)``. What an answer after a table result starts with
(:func:`reactloop.models._shaping.render_result`), so the pick is computed from the rows,
never guessed from the first one. A pure function of the records and the question.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reactloop.models._projections import _scalar  # a figure to 2 decimals

Narrow = Callable[[list[Mapping[str, Any]], str], tuple[list[Mapping[str, Any]], list[str]]]

__all__ = ["extreme"]

_WHICH = re.compile(r"\b(?:which|what)\s+(\w+)", re.I)
_HIGH = re.compile(r"\b(?:highest|most|biggest|largest|greatest|top|best|max(?:imum)?)\b", re.I)
_LOW = re.compile(r"\b(?:lowest|least|smallest|fewest|worst|min(?:imum)?)\b", re.I)
_NAMED_AFTER = re.compile(r"\b(?:highest|lowest|biggest|smallest|largest|greatest|top|best|"
                          r"worst|most\s+expensive|cheapest)\s+(\w+)", re.I)
"""A field said right after the extreme ("the biggest account for company 1001")."""
_ID = re.compile(r"(^|_)id$")
_DIFF = re.compile(r"\b(?:gap|differ\w*|difference|discrepanc\w+|deviation|off|apart)\b", re.I)
MAX_LISTED = 5
"""The most sums the pick lists after itself."""


def _field(records: Sequence[Mapping[str, Any]], question: str) -> str | None:
    """The field a "which <field>" of ``question`` names ("which companies": company)."""
    fields = {str(k).lower(): k for r in records for k, v in r.items() if isinstance(v, str)}
    for m in [*_WHICH.finditer(question), *_NAMED_AFTER.finditer(question)]:
        word = m.group(1).lower()
        for said in (word, re.sub(r"(?:ies)$", "y", word), re.sub(r"e?s$", "", word)):
            if said in fields:
                return str(fields[said])
    return None


def _measure(records: Sequence[Mapping[str, Any]], question: str) -> str | None:
    """The one numeric field, the one ``question`` names, or a difference's absolute one."""
    numeric = [k for k, v in records[0].items() if isinstance(v, int | float)
               and not isinstance(v, bool) and not _ID.search(str(k))]
    if len(numeric) > 1:
        named = [k for k in numeric if re.search(rf"\b{re.escape(str(k).replace('_', ' '))}\b",
                                                 question, re.I)]
        diff = [k for k in numeric if "abs" in str(k) and "diff" in str(k)]
        numeric = named or (diff if _DIFF.search(question) else [])
    measure = numeric[0] if len(numeric) == 1 else None
    if measure is None or not all(isinstance(r.get(measure), int | float) for r in records):
        return None
    return measure


def extreme(records: Sequence[Mapping[str, Any]], question: str, narrow: Narrow) -> str:
    """The value of the field the question asks "which" of whose records sum highest or
    lowest (see the module); empty when it asks no such thing of these records."""
    high, low = _HIGH.search(question), _LOW.search(question)
    if not records or not (high or low or _DIFF.search(question)):
        return ""
    field = _field(records, question)
    if field is None:
        return ""
    most = high is not None and (low is None or high.start() < low.start())
    kept, _ = narrow(list(records), _WHICH.sub(" ", question))
    measure = _measure(kept, question) if kept else None
    if measure is None:
        return ""
    sums: dict[str, float] = {}
    for r in kept:
        key = str(r.get(field))
        value = float(r[measure])
        sums[key] = sums.get(key, 0.0) + (abs(value) if "diff" in measure else value)
    if len(sums) == 1 and _DIFF.search(question):  # "which account differs?": the one that does
        (pick, value), = sums.items()
        return f"{field} {pick} {measure} {_scalar(value)}"
    if len(sums) < 2 or not (high or low):
        return ""
    ranked = sorted(sums.items(), key=lambda kv: -kv[1] if most else kv[1])
    pick, value = ranked[0]
    listed = ", ".join(f"{k} {_scalar(v)}" for k, v in ranked[:MAX_LISTED])
    return (f"{field} {pick} {'highest' if most else 'lowest'} {measure} {_scalar(value)} "
            f"({listed})")
