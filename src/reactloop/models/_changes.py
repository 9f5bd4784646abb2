"""The change between two rows of a table a tool read (a CSV file's text): what an answer
after the read starts with when a question asks how much, or by what percentage, a value
grew, rose, dropped or changed from one row it names to another ("By what percent did the
amount rise from march to april in data/sales.csv?": ``amount from march 800 to april 1000:
+200 (+25%)``). A pure function of the result's text and the question
(:func:`reactloop.models._shaping.render_result` puts it first, before a difference or a sum).

The first row the question names is the base ("from march to april"), unless the other is
said as the base ("how much did april grow over march", "compared with march", "since
march"). The percentage is ``(b - a) / a * 100``, rounded to one decimal (two below 1 %),
and left out when the base is zero.
"""

from __future__ import annotations

import re

__all__ = ["table_change"]

_CHANGE = re.compile(
    r"\b(?:grow|grows|grew|grown|growth|increase[sd]?|rise|rises|rose|risen|climb(?:ed|s)?|"
    r"jump(?:ed|s)?|go\s+up|went\s+up|gone\s+up|drop(?:ped|s)?|fall|falls|fell|fallen|"
    r"decline[sd]?|decrease[sd]?|shr[iau]nk|go\s+down|went\s+down|gone\s+down|change[sd]?|"
    r"percent(?:age)?)\b|%", re.I)
"""(A comparison said with "than" and a percentage, "how much bigger is april than march in
percent?", is a change from march too.)"""
_PERCENT = re.compile(r"\bpercent(?:age)?\b|%", re.I)
_BASE = re.compile(r"\b(?:over|compared\s+(?:to|with)|versus|vs\.?|since|relative\s+to|"
                   r"against|than)\s+(?:the\s+)?$", re.I)
"""Words before a row's name that make it the base ("grow over january", "how much bigger is
april than march")."""


def _number(cell: str) -> float | None:
    try:
        return float(cell.replace(",", "").strip())
    except ValueError:
        return None


def _scalar(value: float) -> str:
    value = round(value, 6)
    return str(int(value)) if float(value).is_integer() else str(value)


def _percent(a: float, b: float) -> str:
    share = (b - a) / abs(a) * 100
    share = round(share, 2 if abs(share) < 1 else 1)
    return f"{'+' if share > 0 else ''}{_scalar(share)}%"


def _said_at(row: list[str], said: str) -> tuple[int, str]:
    """Where ``said`` first names ``row`` by a cell, and that cell."""
    from reactloop.models._tables import said_cell

    found = [(m.start(), c) for c in row if c and _number(c) is None
             for m in [said_cell(c).search(said)] if m]
    return min(found) if found else (-1, "")


def table_change(text: str, question: str) -> str:
    """The change a question asks between two rows of a CSV text that it names by a cell
    (see the module): ``<column> from <a-label> <a> to <b-label> <b>: <b-a> (<percent>)``,
    the percentage first when the question asks for one; empty otherwise."""
    from reactloop.models._tables import _measure, _rows

    if not _CHANGE.search(question):
        return ""
    rows = _rows(text)
    if len(rows) < 3 or len({len(r) for r in rows}) != 1:
        return ""
    said = question.lower()
    named = sorted((at, label, r) for r in rows[1:] for at, label in [_said_at(r, said)]
                   if at >= 0)
    if len(named) != 2:
        return ""
    (_, la, ra), (at_b, lb, rb) = named
    if _BASE.search(said[:at_b]) and not re.search(r"\bfrom\b", said[:named[0][0]]):
        (la, ra), (lb, rb) = (lb, rb), (la, ra)  # "april grew over march": march is the base
    i = _measure(rows, question, [ra, rb])
    if i is None:
        return ""
    a, b = _number(ra[i]) or 0.0, _number(rb[i]) or 0.0
    delta = f"{'+' if b > a else ''}{_scalar(b - a)}"
    pct = _percent(a, b) if a else ""
    figure = f"{pct} ({delta})" if pct and _PERCENT.search(question) else (
        f"{delta} ({pct})" if pct else delta)
    return f"{rows[0][i]} from {la} {_scalar(a)} to {lb} {_scalar(b)}: {figure}"
