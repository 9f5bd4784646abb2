"""The next value of a table a tool read (a CSV file's text), projected the way a question
says: "Say the next month goes up by the same amount March did" adds March's change (March
minus the row before it) to the last row; "if growth keeps the same rate" multiplies the last
row by the last step's ratio. What an answer after the read starts with
(:func:`reactloop.models._shaping.render_result` puts it first), so that the figure is
computed from the file, never guessed: ``amount next: april 1000 + (march 900 - february 800)
= 1100``.

The step is the change of the row the question names as the one whose change repeats (from
the row before it), of the two rows it names ("as from january to february"), or else of the
last two rows. A pure function of the result's text and the question.
"""

from __future__ import annotations

import re

from reactloop.models._changes import _number  # a cell's figure, as the changes read it

__all__ = ["table_projection"]

_SAME = re.compile(
    r"\bsame\s+(?:amount|rate|way|pace|margin|increase|growth|percentage|percent|change|jump|"
    r"drop|decrease|rise|step|difference|gain|loss)\b|\bas\s+much\s+as\b(?!\s+\d)|"
    r"\b(?:continu(?:e|es|ed|ing)|keeps?\s+(?:on\s+)?(?:growing|going|rising|falling|dropping|"
    r"climbing|up)|the\s+trend|at\s+(?:this|that|the\s+same)\s+(?:rate|pace))\b", re.I)
_RATE = re.compile(r"\b(?:rate|percent(?:age)?|pace|ratio|proportion)\b|%", re.I)


def _scalar(value: float) -> str:
    value = round(value, 2)
    return str(int(value)) if float(value).is_integer() else str(value)


def _step(body: list[list[str]], named: list[list[str]]) -> tuple[list[str], list[str]] | None:
    """The two rows whose change the projection repeats (see the module)."""
    if len(named) >= 2:
        a, b = named[0], named[1]
        return (a, b) if body.index(a) < body.index(b) else (b, a)
    if len(named) == 1:
        at = body.index(named[0])
        return (body[at - 1], body[at]) if at > 0 else None
    return (body[-2], body[-1]) if len(body) >= 2 else None


def table_projection(text: str, question: str) -> str:
    """The next value the question projects from a CSV text's rows (see the module):
    ``<column> next: <last-label> <last> + (<b-label> <b> - <a-label> <a>) = <value>``, or
    ``… * (<b> / <a>) = <value>`` for a rate; empty for another question or text."""
    from reactloop.models._tables import _label, _measure, _named, _rows

    if not _SAME.search(question):
        return ""
    rows = _rows(text)
    if len(rows) < 3 or len({len(r) for r in rows}) != 1:
        return ""
    header, body = rows[0], rows[1:]
    step = _step(body, _named(body, question))
    i = _measure(rows, question, body)
    if step is None or i is None:
        return ""
    (ra, rb), last = step, body[-1]
    a, b, end = (_number(r[i]) or 0.0 for r in (ra, rb, last))
    start = f"{header[i]} next: {_label(last)} {_scalar(end)}"
    if _RATE.search(question) and a:
        return f"{start} * ({_label(rb)} {_scalar(b)} / {_label(ra)} {_scalar(a)}) = {_scalar(end * b / a)}"
    return f"{start} + ({_label(rb)} {_scalar(b)} - {_label(ra)} {_scalar(a)}) = {_scalar(end + b - a)}"
