"""Dates as a question says them, for a guided call's arguments (pure functions used by
:mod:`reactloop.models._fit`): "21 October 2027", "Oct 21st, 2027", "the 3rd of March" and
"2027-10-21" are the ``YYYY-MM-DD`` values an argument documented as ``YYYY-MM-DD`` (or with
the JSON-schema format ``date``) takes, and so are "2027/10/21", "21.10.2027" and
"10/21/2027" — a model may only copy what the conversation says, so
a date said in words would otherwise never reach such an argument. A date without a year is
the next one on or after today.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from reactloop.messages import ToolSpec
from reactloop.models._times import format_arguments

__all__ = ["YYYY_MM_DD", "date_choices", "spoken_dates", "without_dates"]

YYYY_MM_DD = r"\b\d{4}-\d{1,2}-\d{1,2}\b"
"""How a documented ``YYYY-MM-DD`` value is found in a question."""

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_MONTH = r"(?P<{}>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|" \
         r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DAY = r"(?P<{}>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<{}>(?:19|20)\d\d))?"
_DATES = re.compile(
    r"(?P<iso>\b\d{4}-\d{1,2}-\d{1,2}\b)"
    r"|(?<![\d./])(?P<ymd>(?:19|20)\d\d(?P<s1>[/.])\d{1,2}(?P=s1)\d{1,2})(?![\d/]|\.\d)"
    r"|(?<![\d./])(?P<dmy>\d{1,2}(?P<s2>[/.])\d{1,2}(?P=s2)(?:19|20)\d\d)(?![\d/]|\.\d)"
    rf"|\b(?:the\s+)?{_DAY.format('d1')}(?:\s+of)?\s+{_MONTH.format('m1')}{_YEAR.format('y1')}\b"
    rf"|\b{_MONTH.format('m2')}\s+(?:the\s+)?{_DAY.format('d2')}{_YEAR.format('y2')}\b", re.I)


def _numeric(m: re.Match[str]) -> list[str]:
    """A date typed in numbers with dots or slashes: year first ("2027/04/20"), or day first
    with dots ("14.07.2027"); with slashes month first ("7/14/2027") or day first
    ("14/7/2027"), both when both can be ("05/10/2027": the fifth of October, or May 10)."""
    if m.group("ymd"):
        y, mo, d = (int(x) for x in re.split(r"[/.]", m.group("ymd")))
        orders = [(y, mo, d)]
    else:
        a, b, y = (int(x) for x in re.split(r"[/.]", m.group("dmy")))
        orders = [(y, b, a)] if m.group("s2") == "." else [(y, a, b), (y, b, a)]
    out = []
    for y, mo, d in orders:
        try:
            out.append(dt.date(y, mo, d).isoformat())
        except ValueError:
            continue
    return out


def _date(m: re.Match[str], today: dt.date) -> str | None:
    if m.group("iso"):
        return m.group("iso")
    day, month, year = ((m.group("d1"), m.group("m1"), m.group("y1")) if m.group("d1")
                        else (m.group("d2"), m.group("m2"), m.group("y2")))
    number = next(i for i, name in enumerate(_MONTHS, 1) if name.startswith(month[:3].lower()))
    try:
        when = dt.date(int(year) if year else today.year, number, int(day))
        if not year and when < today:  # "on 3 March" said in April: next year's
            when = dt.date(today.year + 1, number, int(day))
    except ValueError:  # "31 February"
        return None
    return when.isoformat()


def spoken_dates(question: str, today: dt.date | None = None) -> list[str]:
    """The dates ``question`` says, typed or in words, as ``YYYY-MM-DD``, in its order (see
    the module); ``today`` (default: the local date) places a date said without a year."""
    today = today or dt.date.today()
    found = (_numeric(m) if m.group("ymd") or m.group("dmy") else [_date(m, today)]
             for m in _DATES.finditer(question))
    return list(dict.fromkeys(d for said in found for d in said if d))


def without_dates(question: str) -> str:
    """``question`` with the dates it says (typed or in words) blanked: their numbers are no
    ids or amounts ("flights on 21 October 2027" gives no flight id)."""
    return _DATES.sub(" ", question)


def date_choices(spec: ToolSpec, question: str) -> ToolSpec:
    """``spec`` with its ``YYYY-MM-DD`` arguments restricted to the dates the question says
    (typed or in words, :func:`spoken_dates`), when it says any."""
    names = format_arguments(spec, "YYYY-MM-DD", "date")
    dates = spoken_dates(question) if names else []
    if not dates:
        return spec
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    changed = {k: {**p, "enum": dates} if k in names else p for k, p in props.items()}
    return dataclasses.replace(spec, parameters={**spec.parameters, "properties": changed})
