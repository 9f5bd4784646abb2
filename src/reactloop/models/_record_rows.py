"""Figures across the records of a table result (a JSON tool result's rows) that a question
names by two codes of one field ("from 202401 to 202403", "between 202402 and 202403"): the
change from the first to the second (``amount from 202401 1025000 to 202403 969800: -55200
(-5.4%)``), or the next value projected the same way ("if 202404 moves by the same amount as
from 202402 to 202403": ``amount next: 202403 1040000 + (202403 1040000 - 202402 1279000) =
801000``); and the average of the records the question narrows to, when it asks one. What an
answer after the result starts with (:func:`reactloop.models._shaping.render_result`), so the
figure is computed from the rows, never guessed. The records the question's other codes name
("company 1002") are the ones compared; several records of one code are summed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reactloop.models._projections import _scalar  # a figure to 2 decimals, as projected

Narrow = Callable[[list[Mapping[str, Any]], str], tuple[list[Mapping[str, Any]], list[str]]]
"""How the records a question's codes and text values name are kept
(:func:`reactloop.models._shaping._narrowed`)."""

__all__ = ["record_rows"]

_CODE = re.compile(r"(?<![\w.,])\d{3,}(?![\w.,]\d)")
_ID = re.compile(r"(^|_)id$")
_CHANGE = re.compile(r"\b(?:grow|grew|grown|growth|increase[sd]?|rise|rose|risen|climb(?:ed)?|jump(?:ed)?|"
                     r"go\s+up|went\s+up|drop(?:ped)?|fall|fell|fallen|decline[sd]?|decrease[sd]?|"
                     r"shr[iau]nk|go\s+down|went\s+down|change[sd]?|differ(?:ence)?|gap|move[sd]?|"
                     r"percent(?:age)?)\b|%", re.I)
_MEAN = re.compile(r"\b(?:average|mean)\b", re.I)


def _percent(a: float, b: float) -> str:
    share = round((b - a) / abs(a) * 100, 1)
    return f"{'+' if share > 0 else ''}{_scalar(share)}%"


def _measure(records: Sequence[Mapping[str, Any]]) -> str | None:
    keys = [k for k, v in records[0].items() if isinstance(v, int | float)
            and not isinstance(v, bool) and not _ID.search(str(k))]
    return keys[0] if len(keys) == 1 and all(
        isinstance(r.get(keys[0]), int | float) for r in records) else None


def _by_field(records: Sequence[Mapping[str, Any]], codes: Sequence[str]
              ) -> tuple[str | None, list[str], list[str]]:
    """The field two or more of ``codes`` are values of (in the question's order), those
    codes, and the other codes (which narrow the records)."""
    fields: dict[str, list[str]] = {}
    for code in codes:
        for k in {k for r in records for k, v in r.items() if str(v) == code}:
            fields.setdefault(k, []).append(code)
    varying = [k for k, said in fields.items() if len(said) >= 2]
    if len(varying) != 1:
        return None, [], list(codes)
    said = fields[varying[0]]
    return varying[0], said, [c for c in codes if c not in said]


def record_rows(records: Sequence[Mapping[str, Any]], question: str, narrow: Narrow) -> str:
    """The change, projection or average a question asks across ``records`` (see the module),
    the records compared kept by ``narrow`` from the question without the two codes; empty
    when it asks none of them or names no two codes of one field."""
    from reactloop.models._projections import _RATE, _SAME

    if not records or not (_CHANGE.search(question) or _SAME.search(question)
                           or _MEAN.search(question)):
        return ""
    measure = _measure(records)
    if measure is None:
        return ""
    codes = list(dict.fromkeys(_CODE.findall(question)))
    field, said, others = _by_field(records, codes)
    rest = question
    for code in said:  # the other codes and the text values said narrow the records
        rest = re.sub(rf"(?<![\w.,]){code}(?![\w.,]\d)", " ", rest)
    kept, _ = narrow(list(records), rest)
    if field is None:
        if not _MEAN.search(question) or len(kept) < 2:
            return ""
        mean = sum(r[measure] for r in kept) / len(kept)
        return f"{measure} average {_scalar(mean)} ({len(kept)} records: {', '.join(others)})"
    a, b = (sum(r[measure] for r in kept if str(r.get(field)) == c) for c in said[:2])
    la, lb = said[0], said[1]
    if _SAME.search(question):
        if _RATE.search(question) and a:
            return (f"{measure} next: {lb} {_scalar(b)} * ({lb} {_scalar(b)} / {la} "
                    f"{_scalar(a)}) = {_scalar(b * b / a)}")
        return (f"{measure} next: {lb} {_scalar(b)} + ({lb} {_scalar(b)} - {la} {_scalar(a)}) = "
                f"{_scalar(2 * b - a)}")
    if _MEAN.search(question):  # "over 202401-202403": every record of the span
        low, high = sorted(said[:2])
        span = [r for r in kept if low <= str(r.get(field)) <= high]
        mean = sum(r[measure] for r in span) / len(span)
        return f"{measure} average {_scalar(mean)} ({len(span)} records: {low} to {high})"
    delta = f"{'+' if b > a else ''}{_scalar(b - a)}"
    pct = _percent(a, b) if a else ""
    figure = f"{pct} ({delta})" if pct and re.search(r"percent|%", question, re.I) else (
        f"{delta} ({pct})" if pct else delta)
    return f"{measure} from {la} {_scalar(a)} to {lb} {_scalar(b)}: {figure}"
