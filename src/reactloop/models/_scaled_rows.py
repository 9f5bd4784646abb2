"""Figures a question asks of one row of a table a tool read (a CSV file's text) against a
span or the whole: the row repeated over a span ("if every month sold as much as january,
what would the whole year add up to?": ``amount january 1200 * 12 = 14400 (12 months)``; "a
quarter of months like february": ``* 3``), and the row's share of the rows' total ("what
share of the total did february make up?": ``amount february 1350 / total 2550 = 52.94%``).
What an answer after the read starts with (:func:`reactloop.models._shaping.render_result`
puts it first), so the figure is computed from the file, never read off a raw line. Pure
functions of the result's text and the question.
"""

from __future__ import annotations

import re

__all__ = ["row_repeated", "row_share"]

_LIKE = re.compile(r"\b(?:like|as\s+(?:much|many|good|well)\s+as|same\s+as|the\s+same|"
                   r"match(?:ed|es|ing)?|equal(?:led|s)?|every|each|all|rate|pace|level|"
                   r"repeat(?:ed|s)?|annuali[sz]\w*)\b", re.I)
_SPANS = ((re.compile(r"\b(?:half(?:\s+(?:a|the))?[\s-]+year|half-?yearly|semester)\b", re.I), 6),
          (re.compile(r"\b(?:year|years|yearly|annual(?:ly)?|annuali[sz]\w*|annum|"
                      r"twelvemonth)\b", re.I), 12),
          (re.compile(r"\b(?:quarter|quarterly)\b", re.I), 3))
_COUNTED = re.compile(r"\b(\d{1,3})\s+(months|weeks|days|quarters|years|rows|periods)\b", re.I)
_SHARE = re.compile(r"\b(?:share|proportion|fraction|portion|make\s+up|made\s+up|makes\s+up|"
                    r"account(?:ed|s)?\s+for|percent(?:age)?\s+of\s+(?:the\s+)?(?:total|whole|sum|"
                    r"all|overall|combined))\b|%\s+of\s+(?:the\s+)?(?:total|whole|sum)", re.I)
_UNITS = {"months": 1, "quarters": 3, "years": 12}
"""A span in months, for a table of months."""
_SPLIT = re.compile(r"\b(?:spread|split|divid\w*|evenly|per|apiece|average|mean)\b", re.I)
"""A row shared out over a span ("spread over 4 weeks") is divided, not repeated."""


def _span(question: str, header: str) -> int | None:
    """How many rows a span the question says holds: "12 months", "three months" (a count
    said in words), a year (12), a half-year (6), a quarter (3) — of a table of months; a
    count of rows of another table ("4 weeks" of a table of weeks)."""
    from reactloop._amounts import words_to_digits

    said = words_to_digits(question)
    monthly = header.lower().rstrip("s") == "month"
    for m in _COUNTED.finditer(said):
        unit = m.group(2).lower()
        if unit.rstrip("s") == header.lower().rstrip("s") or (monthly and unit in _UNITS):
            return int(m.group(1)) * (_UNITS[unit] if monthly else 1)
    if not monthly:
        return None
    return next((n for rx, n in _SPANS if rx.search(said)), None)


def _one_row(text: str, question: str) -> tuple[list[str], list[list[str]], list[str], int] | None:
    """The header, the rows, the one row ``question`` names and its one numeric column."""
    from reactloop.models._tables import _measure, _named, _rows

    rows = _rows(text)
    if len(rows) < 3 or len({len(r) for r in rows}) != 1:
        return None
    named = _named(rows[1:], question)
    i = _measure(rows, question, named)
    if len(named) != 1 or i is None:
        return None
    return rows[0], rows[1:], named[0], i


def row_repeated(text: str, question: str) -> str:
    """The one row the question names repeated over the span it says (see the module):
    ``<column> <label> <value> * <n> = <total> (<n> <rows>)``; empty otherwise."""
    from reactloop.models._tables import _label, _number, _scalar

    found = _one_row(text, question) if _LIKE.search(question) and not _SPLIT.search(
        question) else None
    if found is None:
        return ""
    header, _, row, i = found
    label_column = next((h for h, c in zip(header, row, strict=True) if _number(c) is None), "")
    n = _span(question, label_column)
    if n is None or n < 2:
        return ""
    value = _number(row[i]) or 0.0
    unit = f"{label_column}s" if label_column else "rows"
    return (f"{header[i]} {_label(row)} {_scalar(value)} * {n} = {_scalar(value * n)} "
            f"({n} {unit})")


def row_share(text: str, question: str) -> str:
    """The one row the question names as a share of the rows' total (see the module):
    ``<column> <label> <value> / total <sum> = <percent>%``; empty otherwise."""
    from reactloop.models._tables import _label, _number, _scalar

    found = _one_row(text, question) if _SHARE.search(question) else None
    if found is None:
        return ""
    header, body, row, i = found
    total = sum(_number(r[i]) or 0.0 for r in body)
    if not total:
        return ""
    value = _number(row[i]) or 0.0
    share = round(value / total * 100, 2)
    return f"{header[i]} {_label(row)} {_scalar(value)} / total {_scalar(total)} = {_scalar(share)}%"
