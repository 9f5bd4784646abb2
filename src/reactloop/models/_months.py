"""Months as a question says them ("January 2024", "Jan 2024", "March of 2024", "Sept.
2025"), for a period a tool's data writes its own way (pure functions used by
:mod:`reactloop.models._filters` and :mod:`reactloop.models._shaping`): a filter documented
with an example period (``{"period": "202401"}``) takes the month said in the example's
format (``202403``, ``2024-03``, ``2024/03``), and a figure keeps the records of that period.
A month said with a day ("21 October 2027") is a date, not a period.
"""

from __future__ import annotations

import re

__all__ = ["in_format", "month_codes", "spoken_months"]

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_SAID = re.compile(
    r"\b(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?,?\s+(?:of\s+)?"
    r"((?:19|20)\d\d)\b", re.I)
_DAY_BEFORE = re.compile(r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?$", re.I)
_FORMATS = ((re.compile(r"^(?:19|20)\d\d(?:0[1-9]|1[0-2])$"), "{y}{m:02d}"),
            (re.compile(r"^(?:19|20)\d\d-(?:0[1-9]|1[0-2])$"), "{y}-{m:02d}"),
            (re.compile(r"^(?:19|20)\d\d/(?:0[1-9]|1[0-2])$"), "{y}/{m:02d}"))


def spoken_months(question: str) -> list[tuple[int, int]]:
    """The months ``question`` says with a year, as (year, month), in its order; not those
    said with a day ("on 3 March 2027" is a date)."""
    out = []
    for m in _SAID.finditer(question):
        if m.group(1).lower() == "may" and not m.group(1)[0].isupper():
            continue  # "you may 2024 ..." is no month; "May 2024" is
        if _DAY_BEFORE.search(question[:m.start()]):
            continue
        out.append((int(m.group(2)), _MONTHS.index(m.group(1)[:3].lower()) + 1))
    return list(dict.fromkeys(out))


def in_format(example: str, year: int, month: int) -> str | None:
    """The month written as ``example`` writes one ("202401": ``202403``), or None when
    ``example`` is no year and month."""
    return next((f.format(y=year, m=month) for rx, f in _FORMATS if rx.match(example)), None)


def month_codes(question: str) -> list[str]:
    """Each month ``question`` says with a year in every format a period is written
    (``202401``, ``2024-01``, ``2024/01``): the one a record holds is its period."""
    return [f.format(y=y, m=m) for y, m in spoken_months(question) for _, f in _FORMATS]
