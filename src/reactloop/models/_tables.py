"""Figures of a table a tool read (a CSV file's text): what an answer after the read starts
with, so that a question that asks to add up, total or average the rows it names ("add up
january and february in data/sales.csv") is answered with the figure computed from the file,
never with the question's own numbers. A pure function of the result's text and the question
(:func:`reactloop.models._shaping.render_result` puts it first).
"""

from __future__ import annotations

import csv
import re

__all__ = ["table_total"]

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


def table_total(text: str, question: str) -> str:
    """The sum (or the average) a question asks of a CSV text's rows: of the rows it names by
    a cell ("add up january and february": ``amount january 1200 + february 1350 = 2550``),
    or of every row when it names none (``amount total 2550 (2 rows)``), over the one numeric
    column (or the one the question names); empty otherwise."""
    mean = bool(_MEAN.search(question))
    if not (mean or _SUM.search(question)):
        return ""
    rows = _rows(text)
    if len(rows) < 3 or len({len(r) for r in rows}) != 1:
        return ""
    header, body = rows[0], rows[1:]
    said = question.lower()
    named = [r for r in body if any(c and _number(c) is None and re.search(
        rf"\b{re.escape(c.lower())}\b", said) for c in r)]
    named.sort(key=lambda r: min(said.find(c.lower()) for c in r if c and c.lower() in said))
    chosen = named if len(named) >= 2 else body if not named else []
    measures = [i for i in range(len(header)) if chosen and all(
        _number(r[i]) is not None for r in chosen)]
    if len(measures) > 1:
        measures = [i for i in measures if header[i].lower() in said]
    if len(measures) != 1:
        return ""
    i = measures[0]
    values = [_number(r[i]) or 0.0 for r in chosen]
    total = sum(values) / len(values) if mean else sum(values)
    labels = [next((c for c in r if c and _number(c) is None), "") for r in chosen]
    if chosen is named and len(named) <= MAX_TERMS:
        spelled = " + ".join(f"{label} {_scalar(v)}".strip() for label, v in zip(
            labels, values, strict=True))
        if mean:
            return f"{header[i]} average of {spelled} = {_scalar(total)}"
        return f"{header[i]} {spelled} = {_scalar(total)}"
    return f"{header[i]} {'average' if mean else 'total'} {_scalar(total)} ({len(chosen)} rows)"
