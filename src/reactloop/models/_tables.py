"""Figures of a table a tool read (a CSV file's text): what an answer after the read starts
with, so that a question that asks to add up, total or average the rows it names ("add up
january and february in data/sales.csv") is answered with the figure computed from the file,
never with the question's own numbers. A pure function of the result's text and the question
(:func:`reactloop.models._shaping.render_result` puts it first).
"""

from __future__ import annotations

import csv
import re

__all__ = ["row_arithmetic", "row_count", "table_target", "table_total"]

_SUM = re.compile(r"\b(?:add(?:s|ed|ing)?(?:\s+(?:them|these|those|it))?\s+up|add|sum|summed|"
                  r"total|totals|altogether|combined|together|in\s+all|plus|overall|so\s+far|"
                  r"to\s+date|year[\s-]to[\s-]date|ytd)\b", re.I)
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


_MOST = re.compile(r"\b(?:highest|most|biggest|largest|best|top|max(?:imum)?|peak|strongest|"
                   r"busiest)\b", re.I)
_LEAST = re.compile(r"\b(?:lowest|least|smallest|fewest|worst|min(?:imum)?|weakest|poorest|"
                    r"quietest|slowest)\b", re.I)


def _measure(rows: list[list[str]], question: str, chosen: list[list[str]]) -> int | None:
    """The one numeric column of ``chosen`` (or the one of them the question names)."""
    header = rows[0]
    measures = [i for i in range(len(header)) if chosen and all(
        _number(r[i]) is not None for r in chosen)]
    if len(measures) > 1:
        measures = [i for i in measures if header[i].lower() in question.lower()]
    return measures[0] if len(measures) == 1 else None


def said_cell(cell: str) -> re.Pattern[str]:
    """How a question says a word cell: whole, or a word of five letters or more by its first
    three ("jan" for "january", "feb." for "february")."""
    word = re.escape(cell.lower())
    short = f"|{word[:3]}\\.?" if len(cell) >= 5 and cell.isalpha() else ""
    return re.compile(rf"\b(?:{word}{short})(?![\w-])")


def _named(body: list[list[str]], question: str) -> list[list[str]]:
    """The rows ``question`` names by a cell ("january", "jan"), in its order."""
    said = question.lower()
    at = {id(r): min((m.start() for c in r if c and _number(c) is None
                      for m in [said_cell(c).search(said)] if m), default=-1) for r in body}
    return sorted((r for r in body if at[id(r)] >= 0), key=lambda r: at[id(r)])


def _label(row: list[str]) -> str:
    return next((c for c in row if c and _number(c) is None), "")


def table_total(text: str, question: str) -> str:
    """The figure a question asks of a CSV text's rows: their sum or average — of the rows it
    names by a cell ("add up january and february": ``amount january 1200 + february 1350 =
    2550``), or of every row when it names none (``amount total 2550 (2 rows)``) — or the row
    with the highest or lowest value (``amount highest february 1350``), over the one numeric
    column (or the one the question names); empty otherwise."""
    counted = row_count(text, question) or table_target(text, question) or row_arithmetic(
        text, question)
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


_TARGET = re.compile(r"\b(?:aim(?:ed|ing)?|target(?:ed|ing)?|goal|budget(?:ed)?|quota|hop(?:ed|ing)|"
                     r"expect(?:ed|ing)?|plan(?:ned)?|projected|forecast)\b", re.I)
_BEAT = re.compile(r"\b(?:beat|hit|reach(?:ed)?|ma[dk]e|exceed(?:ed)?|miss(?:ed)?|over|under|short|"
                   r"above|below|meet|met|enough|how\s+much|how\s+far)\b", re.I)
_PERCENT_OF = re.compile(r"\b(?:percent(?:age)?|per\s+cent|share|proportion|fraction|portion)\s+of\b|%\s+of\b",
                         re.I)
_SAID_NUMBER = re.compile(r"(?<![\w.,/-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w/-]|[.,]\d)")


def _question_numbers(question: str, body: list[list[str]]) -> list[float]:
    """The numbers a question says that are no cell of the table (a target, an operand)."""
    cells = {c for r in body for c in r}
    out = []
    for m in _SAID_NUMBER.finditer(question):
        said = m.group(1).replace(",", "") + (m.group(2) or "")
        if said not in cells and not re.search(rf"[\w/.-]{re.escape(said)}|{re.escape(said)}[\w.]\w",
                                               question):
            out.append(float(said))
    return out


def table_target(text: str, question: str) -> str:
    """A table's total against a target the question says ("We were aiming for 2,500 across
    january and february: did we beat it?"): ``amount january 1200 + february 1350 = 2550;
    50 over the 2500 aimed for`` (or ``… short of``), and, asked "what percentage/share of the
    goal", ``; 2550 / 2500 = 102% of the 2500 aimed for``; empty otherwise."""
    percent = bool(_PERCENT_OF.search(question))
    if not (_TARGET.search(question) and (percent or _BEAT.search(question))):
        return ""
    rows = _rows(text)
    if len(rows) < 3 or len({len(r) for r in rows}) != 1:
        return ""
    body = rows[1:]
    targets = _question_numbers(question, body)
    named = _named(body, question)
    chosen = named or body
    i = _measure(rows, question, chosen)
    if len(targets) != 1 or i is None:
        return ""
    values = [_number(r[i]) or 0.0 for r in chosen]
    total, target = sum(values), targets[0]
    spelled = " + ".join(f"{_label(r)} {_scalar(v)}".strip() for r, v in zip(
        chosen, values, strict=True)) if len(chosen) <= MAX_TERMS else f"total ({len(chosen)} rows)"
    gap = total - target
    verdict = (f"{_scalar(gap)} over the {_scalar(target)} aimed for" if gap > 0 else
               f"{_scalar(-gap)} short of the {_scalar(target)} aimed for" if gap < 0 else
               f"exactly the {_scalar(target)} aimed for")
    if percent and target:  # the share of the target reached leads, the gap follows
        verdict = (f"{_scalar(total)} / {_scalar(target)} = {_scalar(round(total / target * 100, 2))}% "
                   f"of the {_scalar(target)} aimed for ({verdict.split(' of the ')[0].split(' the ')[0]})")
    return f"{rows[0][i]} {spelled} = {_scalar(total)}; {verdict}"


_OPERATION = re.compile(r"\b(plus|added\s+to|more\s+than|minus|less|fewer|times|multiplied\s+by|"
                        r"divided\s+by|over)\s+(?:\d)|\b(doubled?|twice|halved?|tripled?)\b|"
                        r"\b(?:increase[sd]?|grew|grow|rose|rise|up)\s+by\s+\d|\bwent\s+up\s+by\s+\d|"
                        r"\b(?:decrease[sd]?|drop(?:ped|s)?|fell|fall(?:s)?|decline[sd]?|shr[iau]nk|"
                        r"cut|lost|lose|reduced?|lowered|down|slid|dipped)\s+by\s+\d|"
                        r"[-+*/×÷]\s*\d|\d\s*(?:%|per\s*cent)\s+(above|over|more\s+than|higher\s+than|"
                        r"up\s+on|on\s+top\s+of|below|under|less\s+than|lower\s+than|down\s+on)\b|"
                        r"\b(?:add(?:ing)?|with|subtract(?:ing)?|take\s+off|knock\s+off)\s+(?:a\s+|an\s+)?"
                        r"\d|\b(?:take|knock|shave)\s+\d+(?:\.\d+)?\s*(?:%|per\s*cent)?\s+off\b", re.I)
_OPS = {"plus": "+", "added": "+", "more": "+", "minus": "-", "less": "-", "fewer": "-",
        "times": "*", "multiplied": "*", "divided": "/", "over": "/", "increase": "+",
        "increased": "+", "increases": "+", "grew": "+", "grow": "+", "rose": "+", "rise": "+",
        "up": "+", "went": "+", "add": "+", "adding": "+", "with": "+", "subtract": "-",
        "subtracting": "-", "take": "-", "knock": "-", "shave": "-", "decrease": "-",
        "decreased": "-", "decreases": "-", "drop": "-", "dropped": "-", "drops": "-",
        "fell": "-", "fall": "-", "falls": "-", "decline": "-", "declined": "-", "declines": "-",
        "shrank": "-", "shrink": "-", "shrunk": "-", "cut": "-", "lost": "-", "lose": "-",
        "reduce": "-", "reduced": "-", "lowered": "-", "down": "-", "slid": "-", "dipped": "-"}


def row_arithmetic(text: str, question: str) -> str:
    """One named row's value with the operation the question applies to it ("january's amount
    plus 10", "if january doubled", "february up by 5%"): ``amount january 1200 + 10 = 1210``;
    empty otherwise."""
    m = _OPERATION.search(question)
    rows = _rows(text)
    if m is None or len(rows) < 3 or len({len(r) for r in rows}) != 1:
        return ""
    body = rows[1:]
    named = _named(body, question)
    i = _measure(rows, question, named)
    if len(named) != 1 or i is None:
        return ""
    value, numbers = _number(named[0][i]) or 0.0, _question_numbers(question, body)
    word = (m.group(1) or m.group(2) or m.group(0)).split()[0].lower()
    if m.group(3):  # "10% above february": a percentage of the row added or taken off
        word = "less" if m.group(3).split()[0].lower() in ("below", "under", "less", "lower",
                                                          "down") else "plus"
    if m.group(2):
        op, operand = ("*", 2.0) if word.startswith(("doubl", "twice")) else (
            ("*", 3.0) if word.startswith("tripl") else ("/", 2.0))
    elif len(numbers) != 1:
        return ""
    else:
        op, operand = _OPS.get(word, word if word in "+-*/" else {"×": "*", "÷": "/"}.get(word, "+")), numbers[0]
        percent = re.search(rf"{re.escape(_scalar(operand))}\s*(?:%|per\s*cent)", question)
        if percent and op in "+-":
            operand = value * operand / 100
    result = {"+": value + operand, "-": value - operand, "*": value * operand,
              "/": value / operand if operand else float("nan")}[op]
    return (f"{rows[0][i]} {_label(named[0])} {_scalar(value)} {op} {_scalar(operand)} = "
            f"{_scalar(result)}")
