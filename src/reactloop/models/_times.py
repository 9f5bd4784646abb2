"""Times and timezones as a question says them, for a guided call's arguments (pure functions
used by :mod:`reactloop.models._fit`):

- **times of day** (:func:`spoken_times`): "2 pm", "half past 3", "quarter to 9", "noon",
  "7:05" are the ``HH:MM`` values an argument documented as ``HH:MM`` takes ("14:00",
  "03:30", "08:45", "12:00", "07:05"); an hour may be said in words ("eight", with its
  minutes too: "ten fifteen", "seven oh five") and the half
  of the day as a part of it ("11 in the morning": "11:00", "half past 3 in the afternoon":
  "15:30");
- **a time argument** (:func:`time_choices`): an ``HH:MM`` argument chooses among them;
- **the zone a time is said in** (:func:`zone_of_time`): "what time in B is 19:25 in A?" and
  "9am London time" tie the time to A and London, the conversion's source.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from reactloop.messages import ToolSpec

__all__ = ["HHMM", "format_arguments", "spoken_times", "time_choices", "zone_of_time"]

HHMM = r"\b\d{1,2}:\d{2}\b"
"""How a documented ``HH:MM`` value is found in a question."""

_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
          "twelve"]
_HOUR = rf"(1[0-2]|0?[1-9]|{'|'.join(_WORDS)})"
_MERIDIEM = (r"\s*(a\.?\s?m\.?|p\.?\s?m\.?|in\s+the\s+(?:morning|afternoon|evening)|at\s+night|"
             r"tonight)(?![a-z])")
_TEENS = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
          "eighteen", "nineteen"]
_TENS = ["twenty", "thirty", "forty", "fifty"]
_MINUTES = (rf"(?:oh[\s-]+(?:{'|'.join(_WORDS[:9])})|{'|'.join(_TEENS)}|(?:{'|'.join(_TENS)})"
            rf"(?:[\s-]*(?:{'|'.join(_WORDS[:9])}))?)")
"""Minutes said in words ("oh five", "fifteen", "forty-five")."""
_TIMES = re.compile(
    rf"\b(?P<clock>([01]?\d|2[0-3]):([0-5]\d))(?:{_MERIDIEM})?"
    rf"|\b(?P<said>{'|'.join(_WORDS)})[\s-]+(?P<mins>{_MINUTES})\b(?:{_MERIDIEM})?"
    rf"|\b(?P<hour>{_HOUR}){_MERIDIEM}"
    rf"|\b(?P<part>half|quarter)\s+(?P<rel>past|to|after)\s+(?P<of>{_HOUR})\b(?:{_MERIDIEM})?"
    rf"|\b(?P<oclock>{_HOUR})\s*o'?\s?clock\b(?:{_MERIDIEM})?"
    r"|\b(?P<named>noon|midday|midnight)\b", re.I)


def _hm(hour: int, minute: int, meridiem: str | None) -> str:
    if meridiem:
        night = bool(re.search(r"night", meridiem, re.I))  # "2 at night": 02:00, "11": 23:00
        pm = meridiem.lower().startswith("p") or bool(re.search(
            r"afternoon|evening", meridiem, re.I)) or (night and 5 <= hour < 12)
        hour = hour % 12 + (12 if pm else 0)
    return f"{hour % 24:02d}:{minute:02d}"


def _int(said: str) -> int:
    """An hour said in digits or in words ("eight": 8)."""
    return int(said) if said.isdigit() else _WORDS.index(said.lower()) + 1


_HALF_DAY = re.compile(r"^(?:am|pm|in\s+the\s+\w+|at\s+night|tonight)$", re.I)


def _one(m: re.Match[str]) -> str:
    groups = [g for g in m.groups() if g and _HALF_DAY.match(g.replace(".", "").replace(
        " ", "") if len(g) <= 6 else g)]
    meridiem = groups[-1] if groups else None
    if m.group("clock"):
        hour, minute = (int(x) for x in m.group("clock").split(":"))
        return _hm(hour, minute, meridiem if hour <= 12 else None)
    if m.group("said"):  # "ten fifteen", "seven forty-five in the evening"
        return _hm(_int(m.group("said")), _said_minutes(m.group("mins")), meridiem)
    if m.group("hour"):
        return _hm(_int(m.group("hour")), 0, meridiem)
    if m.group("part"):
        hour = _int(m.group("of"))
        minute = 30 if m.group("part").lower() == "half" else 15
        if m.group("rel").lower() == "to":
            hour, minute = (hour - 1) or 12, 60 - minute
        return _hm(hour, minute, meridiem)
    if m.group("oclock"):
        return _hm(_int(m.group("oclock")), 0, meridiem)
    return "00:00" if m.group("named").lower() == "midnight" else "12:00"


def _said_minutes(said: str) -> int:
    """Minutes said in words ("oh five": 5, "forty-five": 45)."""
    words = re.split(r"[\s-]+", said.lower())
    if words[0] == "oh":
        return _WORDS.index(words[1]) + 1
    if words[0] in _TEENS:
        return _TEENS.index(words[0]) + 10
    return 20 + 10 * _TENS.index(words[0]) + (_WORDS.index(words[1]) + 1 if len(words) > 1 else 0)


def spoken_times(question: str) -> list[str]:
    """The times of day ``question`` says, as ``HH:MM``, in its order (see the module)."""
    return list(dict.fromkeys(_one(m) for m in _TIMES.finditer(question) if _as_time(m)))


_SAID_BEFORE = re.compile(r"(?:\b(?:at|convert|is|it's|its|from|till|until|by|around)|[,:])\s*$", re.I)
_SAID_AFTER = re.compile(r"^(?:\s*(?:[,.?!;)]|$)|\s+[A-Z]|\s+(?:your|my|our|their|local|time|in|to|"
                         r"for|there|here)\b)")


def _as_time(m: re.Match[str]) -> bool:
    """A time said in words with its minutes ("ten fifteen") counts where said as a time: with
    its half of the day, after "at"/"convert"/…, or before a place, "time" or the sentence's
    end (not "two twenty dollar bills")."""
    if not m.group("said") or re.search(_MERIDIEM + "$", m.group(0), re.I):
        return True
    text = m.string
    return bool(_SAID_BEFORE.search(text[:m.start()]) or _SAID_AFTER.match(text[m.end():]))


def format_arguments(spec: ToolSpec, marker: str, fmt: str) -> list[str]:
    """The free string arguments of ``spec`` documented with ``marker`` (``"HH:MM"``) or
    declared with the JSON Schema ``format`` ``fmt`` (``"time"``)."""
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    return [k for k, p in props.items() if isinstance(p, Mapping) and p.get("type") == "string"
            and "enum" not in p and (marker in str(p.get("description") or "")
                                     or p.get("format") == fmt)]


def time_choices(spec: ToolSpec, question: str) -> ToolSpec:
    """``spec`` with its ``HH:MM`` arguments restricted to the times the question says (typed
    or spoken, :func:`spoken_times`), when it says any."""
    names = format_arguments(spec, "HH:MM", "time")
    times = spoken_times(question) if names else []
    if not times:
        return spec
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    changed = {k: {**p, "enum": times} if k in names else p for k, p in props.items()}
    return dataclasses.replace(spec, parameters={**spec.parameters, "properties": changed})


_MINE = re.compile(r"\s*(?:,\s*)?(?:my|our)\s+(?:own\s+)?(?:local\s+)?time\b", re.I)
_THEIRS = re.compile(r"\s*(?:,\s*)?(?:their|his|her|your)\s+(?:own\s+)?(?:local\s+)?time\b", re.I)
"""A time said as another person's ("16:00 their time"): the place that is not the user's."""
_HOME = re.compile(r"\b(?:i'?m|i\s+am|we'?re|we\s+are|i\s+live|we\s+live|based|here|staying)\s+"
                   r"(?:\w+\s+)?in\s+\0|\b(?:writing|calling|texting|messaging)\s+(?:you\s+)?"
                   r"from\s+\0|(?:^|[.!?;]\s*)\0\s+here\b|\0\s+here\s*[.,!;:-]", re.I)
"""Where the user is, the place written as NUL: "I'm in X", "based in X", "X here.",
"writing from X" (the target of a time said as someone else's)."""


def zone_of_time(text: str, places: Sequence[str]) -> str | None:
    """Which one of ``places`` (lower case, as ``text`` says them) the question ties to a time
    of day: written right before it as its label, at the start or after "convert"/"from"
    ("asia/baku 09:15 in australia/darwin"), or said right after it ("19:25 in Prague", "9am London time", "noon here in Lima";
    not "9:00 to Paris") or, failing that, right before it ("in Tokyo at 9am", "Oslo's
    08:00"); None when it ties none or several."""
    spans = [m.span() for m in _TIMES.finditer(text)]
    mine = [p for p in places if _HOME.search(text.replace(p, "\0"))]
    if len(mine) == 1 and any(_MINE.match(text, end) for _, end in spans):
        return mine[0]  # "08:30 my time": where I am
    if len(mine) == 1 and len(places) == 2 and any(_THEIRS.match(text, end) for _, end in spans):
        return next(p for p in places if p != mine[0])  # "Oslo here … 16:00 their time"
    # a place written right before the time, as its label ("asia/baku 09:15 in …", "Oslo
    # 8am to Lima"), is the time's, whatever follows
    labelled = {place for place in places for start, _ in spans if re.search(
        rf"(?:^|[^\w\s'/]\s*|\b(?:convert|from|is|what'?s)\s+){re.escape(place)}\s+$",
        text[:start])}
    if len(labelled) == 1:
        return labelled.pop()
    for after in (True, False):
        tied = set()
        for place in places:
            p = re.escape(place)
            rx = (re.compile(rf"\s*(?:(?!(?:in)?to\b)[a-z.]+\s+)?(?:(?:in|at)\s+)?{p}\b")
                  if after else re.compile(rf"\b{p}(?:'s|\s+time)?\s+(?:at\s+)?$"))
            if any(rx.match(text, end) if after else rx.search(text[:start])
                   for start, end in spans):
                tied.add(place)
        if tied:
            return tied.pop() if len(tied) == 1 else None
    return None


def lacks_zones(spec: ToolSpec, question: str) -> bool:
    """Whether ``spec`` converts between zones (two required ``…timezone`` arguments) and
    ``question`` names no zone, city or region: a time alone ("until 10:45 pm") is no
    conversion, however much it looks like the tool's ``time``."""
    required = spec.parameters.get("required") or ()
    if sum("zone" in str(name).lower() for name in required) < 2:
        return False
    from reactloop._zones import zones_in

    return not zones_in(question)
