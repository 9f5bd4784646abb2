"""Figures of a table a tool read (a CSV file's text): what an answer after the read starts
with, so that a question that asks to add up, total or average the rows it names ("add up
january and february in data/sales.csv") is answered with the figure computed from the file,
never with the question's own numbers. A pure function of the result's text and the question
(:func:`reactloop.models._shaping.render_result` puts it first).
"""

from __future__ import annotations

import csv
import re

__all__ = ["row_count", "table_total"]

_SUM = re.compile(r"\b(?:add(?:s|ed|ing)?(?:\s+(?:them|these|those|it))?\s+up|add|sum|summed|"
                  r"total|totals|altogether|combined|together|in\s+all|plus)\b", re.I)
_MEAN = re.compile(r"\b(?:average|mean)\b", re.I)
MAX_TERMS = 4
"""The most rows a sum spells out ("january 1200 + february 1350 = 2550")."""


_NUMBERED = re.compile(r"^\s*\d+\t")
"""The line number a file reader puts first."""


def _number(cell: str) -> float | None:
    try:
        return float(cell.replace(",", "").strip())
    except ValueError:
        return None


def _rows(text: str) -> list[list[str]]:
    lines = [_NUMBERED.sub("", line) for line in text.splitlines() if line.strip()]
    return [[c.strip() for c in r] for r in csv.reader(lines)]


def _scalar(value: float) -> str:
    value = round(value, 6)
    return str(int(value)) if float(value).is_integer() else str(value)


_MOST = re.compile(r"\b(?:highest|most|biggest|largest|best|top|max(?:imum)?|peak)\b", re.I)
_LEAST = re.compile(r"\b(?:lowest|least|smallest|fewest|worst|min(?:imum)?)\b", re.I)


def _measure(rows: list[list[str]], question: str, chosen: list[list[str]]) -> int | None:
    """The one numeric column of ``chosen`` (or the one of them the question names)."""
    header = rows[0]
    measures = [i for i in range(len(header)) if chosen and all(
        _number(r[i]) is not None for r in chosen)]
    if len(measures) > 1:
        measures = [i for i in measures if header[i].lower() in question.lower()]
    return measures[0] if len(measures) == 1 else None


def _named(body: list[list[str]], question: str) -> list[list[str]]:
    """The rows ``question`` names by a cell ("january"), in its order."""
    said = question.lower()
    named = [r for r in body if any(c and _number(c) is None and re.search(
        rf"\b{re.escape(c.lower())}\b", said) for c in r)]
    named.sort(key=lambda r: min(said.find(c.lower()) for c in r if c and c.lower() in said))
    return named


def _label(row: list[str]) -> str:
    return next((c for c in row if c and _number(c) is None), "")


def table_total(text: str, question: str) -> str:
    """The figure a question asks of a CSV text's rows: their sum or average — of the rows it
    names by a cell ("add up january and february": ``amount january 1200 + february 1350 =
    2550``), or of every row when it names none (``amount total 2550 (2 rows)``) — or the row
    with the highest or lowest value (``amount highest february 1350``), over the one numeric
    column (or the one the question names); empty otherwise."""
    counted = row_count(text, question)
    if counted:
        return counted
    mean, most, least = (bool(rx.search(question)) for rx in (_MEAN, _MOST, _LEAST))
    if not (mean or most or least or _SUM.search(question)):
        return ""
    rows = _rows(text)
    if len(rows) < 3 or len({len(r) for r in rows}) != 1:
        return ""
    header, body = rows[0], rows[1:]
    named = _named(body, question)
    chosen = named if len(named) >= 2 else body if not named else []
    i = _measure(rows, question, chosen)
    if i is None:
        return ""
    values = [_number(r[i]) or 0.0 for r in chosen]
    if (most or least) and not mean:
        at = values.index(max(values) if most else min(values))
        return f"{header[i]} {'highest' if most else 'lowest'} {_label(chosen[at])} {_scalar(values[at])}"
    total = sum(values) / len(values) if mean else sum(values)
    if chosen is named and len(named) <= MAX_TERMS:
        spelled = " + ".join(f"{_label(r)} {_scalar(v)}".strip() for r, v in zip(
            chosen, values, strict=True))
        if mean:
            return f"{header[i]} average of {spelled} = {_scalar(total)}"
        return f"{header[i]} {spelled} = {_scalar(total)}"
    return f"{header[i]} {'average' if mean else 'total'} {_scalar(total)} ({len(chosen)} rows)"


_HOW_MANY = re.compile(r"\b(?:how\s+many|(?:number|count)\s+of(?:\s+the)?)\s+([a-z]+)"
                       r"(?:\s+([a-z]+))?", re.I)
_ROWS = frozenset(["rows", "row", "entries", "entry", "records", "record", "lines", "line", "items",
                   "item"])


def row_count(text: str, question: str) -> str:
    """The count of a CSV text's rows a question asks ("how many rows …", "how many months
    are listed", a column's name in the plural): ``2 rows (month): january, february``;
    empty for another question or a text that is no table."""
    m = _HOW_MANY.search(question)
    rows = _rows(text)
    if m is None or len(rows) < 2 or len({len(r) for r in rows}) != 1:
        return ""
    header, body = rows[0], rows[1:]
    names = [h.lower() for i, h in enumerate(header)  # "how many units": a quantity
             if not all(_number(r[i]) is not None for r in body)]
    if not any(w in _ROWS or w in names or w.removesuffix("s") in names
               for w in (m.group(1).lower(), (m.group(2) or "").lower()) if w):
        return ""
    labels = ", ".join(_label(r) for r in body[:MAX_LISTED])
    more = ", …" if len(body) > MAX_LISTED else ""
    return f"{len(body)} rows ({', '.join(header)}): {labels}{more}"


MAX_LISTED = 12
"""The most rows' labels a count names."""
