"""The two places of a trip a question says, for a route's start and destination arguments
(pure functions used by :mod:`reactloop.models._fit`):

- **both legs said** ("from gate 12 to the water refill station", "to Paris from London",
  "I'm at gate 3. How far is it to the pharmacy?", "flights frankfurt to new york"), or two
  of the data's names joined by "to" or a dash ("a business seat Paris to London");
- **where one goes, and where one is** said apart: the place after "the way to", "get to",
  "walk to", "directions to" is the destination, and the place the traveller is at or has
  just left ("I'm by the bookshop", "I just dropped off my rental car", "coming from gate 9")
  is the start: "I just dropped off my rental car. Can you show me the way to gate 2?" goes
  from the rental car to gate 2, never from "2" to "2"; where the question says neither, the
  one other place of the data it names (``names``: "Rental car returned, which way to gate
  2?" names the data's "Car Rental Center") is the start; a start said as "here" ("get to
  gate 16 from here") is where one is. A place said in other words than
  the data's one name it fits ("rental car": "Car Rental Center") is that name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from reactloop._words import plain as _plain
from reactloop.messages import ToolSpec
from reactloop.models._gbnf import Candidates

__all__ = ["ENDS", "STARTS", "near_search", "trip_places"]

STARTS = frozenset({"start", "origin", "from", "from_place", "begin"})
"""Names of a route's start argument."""
ENDS = frozenset({"destination", "to", "end", "to_place", "target"})
"""Names of a route's destination argument."""

_PLACE = r"([A-Za-z0-9'-]+(?:\s+[A-Za-z0-9'-]+){0,4}?)"
_STOP_PLACE = r"(?=\s+(?:on|at|in|by|for|before|after|via|please|and|then|now|right\s+now)\b|\s+[-–—]\s|[,.?!;]|$)"
_LEGS = (re.compile(rf"\bfrom\s+(?:the\s+)?{_PLACE}\s+to\s+(?:the\s+)?{_PLACE}{_STOP_PLACE}", re.I),
         re.compile(rf"\bto\s+(?:the\s+)?{_PLACE}\s+from\s+(?:the\s+)?{_PLACE}{_STOP_PLACE}", re.I),
         re.compile(rf"\b(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:at|in|near)\s+(?:the\s+)?{_PLACE}"
                    rf"{_STOP_PLACE}.*?\bto\s+(?:the\s+)?{_PLACE}{_STOP_PLACE}", re.I),
         re.compile(rf"\b(?:flights?|trains?|buses|trips?|routes?|way|walk)\s+(?!(?:me|us)\b)(?:the\s+)?{_PLACE}\s+"
                    rf"to\s+(?:the\s+)?{_PLACE}{_STOP_PLACE}", re.I))
_TO = re.compile(rf"\b(?:way|directions?|route(?:\s+me|\s+us)?|path|walk(?:\s+me|\s+us)?|walking|get|go|head|"
                 rf"make\s+it|"
                 rf"guide\s+me|take\s+me|lead\s+me|bring\s+me)\s+(?:back\s+|over\s+)?to\s+(?:the\s+)?"
                 rf"{_PLACE}{_STOP_PLACE}", re.I)
"""Where one goes: "the way to gate 2", "how do I get to the pharmacy", "I have to make it to
gate 8"."""
_NEAREST = re.compile(r"\b(?:nearest|closest)\s+(?:[a-z'-]+\s+){1,3}?to\s+(?!the\s+nearest|the\s+closest)"
                      r"|\b(?:nearest|closest)\s+to\b", re.I)
"""A thing looked for near a place ("the nearest restroom to gate 19", "which cafe is
closest to gate 4"), not a way from one to the other."""
_OWN = r"(?:(?:my|our|the|a|an)\s+)?"
_AT = re.compile(
    rf"\b(?:(?:i'?m|i\s+am|we'?re|we\s+are)(?:\s+(?:just|still))?"
    rf"(?:\s+[a-z]+ing(?:\s+(?:a|an|the|some|my|our)\s+[a-z]+)?)?|i'?ve\s+been"
    rf"|standing|sitting|waiting)\s+(?:at|in|near|"
    rf"by|next\s+to|outside)\s+{_OWN}{_PLACE}{_STOP_PLACE}"
    rf"|\b(?:just\s+)?(?:finished|done|had|ate|grabbed|bought|got)(?:\s+[a-z]+ing)?"
    rf"(?:\s+(?:(?:a|an|the|some|my|our)\s+)?[a-z]+){{0,2}}?\s+(?:at|in)\s+{_OWN}{_PLACE}{_STOP_PLACE}"
    rf"|\b(?:just\s+)?(?:left|dropped\s+off|returned|parked(?:\s+at)?|got\s+off|arrived\s+at|"
    rf"(?:came|coming|walked|walking)\s+(?:out\s+of|from))\s+{_OWN}{_PLACE}{_STOP_PLACE}"
    rf"|\bfrom\s+{_OWN}{_PLACE}{_STOP_PLACE}"
    rf"|(?:^|[.!?;]\s*)(?:(?:currently|now|still|just)\s+)?(?:at|by)\s+{_OWN}{_PLACE}{_STOP_PLACE}"
    rf"|\bcurrently\s+(?:at|by|near|in)\s+{_OWN}{_PLACE}{_STOP_PLACE}", re.I)
"""Where one is: "I'm by the bookshop", "I just dropped off my rental car", "from gate 9"."""
_THERE = re.compile(rf"\s+(?:at|by|near|outside|in)\s+(?!(?:the\s+)?(?:moment|minute|present|"
                    rf"time)\b){_OWN}{_PLACE}{_STOP_PLACE}", re.I)
_THITHER = re.compile(r"\b(?:way|directions?|route|path|walk|get|go|head|guide\s+me|take\s+me|"
                      r"lead\s+me|bring\s+me)\s+(?:over\s+)?there\b|\bhow\s+far\b", re.I)
"""Where one goes, said as "there" ("the way there", "get there") or left unsaid ("I'm at the
cafe, my gate is 13: how far?"): the other place said."""
_ELSEWHERE = re.compile(rf"\b(?:at|to|on|from)\s+{_OWN}{_PLACE}{_STOP_PLACE}", re.I)
"""Another place the question says: "boarding is at gate 10", "my bus leaves from bay 4"."""


def trip_places(question: str, names: Sequence[str] = ()) -> tuple[str, str] | None:
    """The start and the destination of a trip the question says (see the module), or
    None; ``names`` are the places the data holds. "The nearest X to Y" is no trip: X is
    looked for near Y. A date is no part of a place ("London 14.07.2027")."""
    if _NEAREST.search(question):
        return None
    from reactloop.models._dates import without_dates

    question = without_dates(question)
    for i, leg in enumerate(_LEGS):
        m = leg.search(question)
        if m:
            a, b = _named(m.group(1).strip(), names), _named(m.group(2).strip(), names)
            return _here((b, a) if i == 1 else (a, b), question, names)
    joined = _joined(question, names)
    if joined is not None:  # "business class Paris to London", "Oslo–Bergen"
        return joined
    to = _TO.search(question)
    at = _AT.search(question)
    if to is None:
        return _thither(question, at, names) or _apart(question, names)
    end = _named(to.group(1).strip(), names)
    if at is not None:  # "returned my bike at the bike shed": the place after "at"
        start = _named(_start(question, at).strip(), names)
    else:  # the one other place of the data the question names
        said = [n for n in _said(question[:to.start(1)] + " " + question[to.end(1):], names)
                if _plain(n) != _plain(end)]
        if len(said) != 1:
            return None
        start = said[0]
    return (start, end) if _plain(start) != _plain(end) else None


_HERE = frozenset({"here", "where i am", "where we are", "my location", "my spot"})
"""What a leg says for the place one is at ("how do I get to gate 16 from here")."""


def _joined(question: str, names: Sequence[str]) -> tuple[str, str] | None:
    """Two of the data's ``names`` (or one and a code in capitals: "NYC") said one after the
    other, joined by "to" or a dash or arrow ("a seat Paris to London", "London–Dubai",
    "NYC to London"), as a trip between them."""
    spoken = f" {_plain(question)} "
    said = [n for n in names if n.strip() and f" {_plain(n)} " in spoken]
    if not said:
        return None
    said += re.findall(r"(?<![\w-])[A-Z]{2,5}(?![\w-])", question)  # a code: "NYC", "SFO"
    pairs = [(m.start(), a, b) for a in said for b in said if _plain(a) != _plain(b)
             for m in [re.search(rf"(?<!\w){re.escape(a)}\s*(?:\s+to\s+|[-–—>→]+)\s*"
                                 rf"{re.escape(b)}(?!\w)", question, re.I)] if m]
    return min(pairs)[1:] if pairs else None


def _here(trip: tuple[str, str], question: str, names: Sequence[str]) -> tuple[str, str] | None:
    """``trip`` with a start said as "here" made the place where one is ("I'm in the lounge"),
    or None when the question says none."""
    if _plain(trip[0]) not in _HERE:
        return trip
    at = _AT.search(question)
    start = _named(_start(question, at).strip(), names) if at else ""
    return (start, trip[1]) if start and _plain(start) not in _HERE else None


def _start(question: str, at: re.Match[str]) -> str:
    """The place where one is that ``at`` (a match of ``_AT``) says."""
    there = _THERE.match(question, at.end())
    return there.group(1) if there else next(g for g in at.groups() if g)


def _thither(question: str, at: re.Match[str] | None,
             names: Sequence[str]) -> tuple[str, str] | None:
    """A trip to "there" ("I'm browsing at the bookshop and my gate is gate 10; the way
    there?"): from where one is to the one other place said — of the data's names, else the
    place after another "at"."""
    if at is None or not _THITHER.search(question):
        return None
    start = _named(_start(question, at).strip(), names)
    rest = question[:at.start()] + " " + question[at.end():]
    others = [n for n in _said(rest, names) if _plain(n) != _plain(start)]
    if not others:
        others = [_named(m.group(1).strip(), names) for m in _ELSEWHERE.finditer(rest)
                  if _plain(m.group(1)) not in ("", _plain(start), "there")]
    others = list(dict.fromkeys(others))
    return (start, others[0]) if len(others) == 1 else None


_LEAVES = re.compile(r"\b(?:from|out\s+of|leav(?:e|es|ing)|depart(?:s|ing)?(?:\s+from)?|"
                     r"fly(?:ing)?\s+out\s+of)\s+(?:the\s+)?$", re.I)
"""What a trip's start is said after: "from", "out of", "leave", "departing from"."""


def _apart(question: str, names: Sequence[str]) -> tuple[str, str] | None:
    """A trip between two of the data's ``names`` said apart, the start after "from", "out
    of" or "leave" and the other the destination ("a meeting in Oslo on 4 May, I'd fly out
    of Madrid that morning", "Tokyo from Beijing on July 4"); None unless exactly two of the
    data's places are said and one of them so."""
    found: dict[str, tuple[re.Match[str], str]] = {}
    for name in names:  # a place is a proper name: the data's "flight" in lower case is none
        m = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", question, re.I)
        if name.strip() and name != name.lower() and m:
            found.setdefault(_plain(name), (m, name))
    if len(found) != 2:
        return None
    starts = [name for m, name in found.values() if _LEAVES.search(question[:m.start()])]
    if len(starts) != 1:
        return None
    end = next(name for _, name in found.values() if name != starts[0])
    return starts[0], end


def _words(text: str) -> list[str]:
    return _plain(text).split()


def _said(question: str, names: Sequence[str]) -> list[str]:
    """The ``names`` of two words or more that ``question`` says as a run of two or more of
    their words, in any order ("rental car" says "Car Rental Center")."""
    asked = _words(question)
    out = []
    for name in names:
        own = set(_words(name))
        if len(own) < 2:
            continue
        run = longest = 0
        for w in asked:
            run = run + 1 if w in own else 0
            longest = max(longest, run)
        if longest >= 2:
            out.append(name)
    return out


def _named(place: str, names: Sequence[str]) -> str:
    """``place`` as the one data name it fits, all its words (two or more) among the name's
    ("rental car": "Car Rental Center"), or the name it starts with ("Burger Point now");
    else as said."""
    words = set(_words(place))
    fits = [n for n in names if len(words) >= 2 and words <= set(_words(n))]
    if len(fits) == 1:
        return fits[0]
    # "the Plaza Coffee Bar right now": the data's longest name the place starts with
    heads = [n for n in names if len(n) < len(place) and _plain(place).startswith(_plain(n) + " ")
             and not re.search(r"\d", place[len(n):])]  # "gate B12" is no "gate" and a word
    return max(heads, key=len) if heads else place


_PRICE_WORDS = re.compile(r"\b(?:fares?|prices?|costs?)\b", re.I)


def unpriced(question: str, names: Sequence[str] = ()) -> str:
    """``question`` without its words of a price when it says a trip on a calendar day: "Paris
    to London on 17 November 2027, what's the fare?" asks the search's price, not a document
    of fare rules (a question for rules says their matter: "refund", "change the date")."""
    from reactloop.models._dates import spoken_dates

    if trip_places(question, names) is None or not spoken_dates(question):
        return question
    return _PRICE_WORDS.sub(" ", question)


_NEAR_THING = re.compile(
    r"\b(?:nearest|closest)\s+([a-z'-]+(?:\s+[a-z'-]+)?)\s+(?:to|from)\s+(?:the\s+)?"
    r"|\b([a-z'-]+)\s+(?:(?:that'?s\s+|is\s+)?(?:near|nearest\s+to|closest\s+to|close\s+to|next\s+to|"
    r"by)|nearby)\s+(?:the\s+)?", re.I)
_NEAR_GATE = re.compile(r"(gate\s+[A-Za-z]?\d+|[A-Z]\d+)\b", re.I)
_VAGUE = frozenset({"place", "spot", "somewhere", "anywhere", "something", "anything", "one",
                    "thing", "stuff", "is", "are", "there", "any", "it"})


def near_search(question: str, names: Sequence[str] = ()) -> str | None:
    """What a search looks for near a place the question names, as the search takes it
    ("the nearest toilet to gate 19?": ``toilet near gate 19``; "a snack close to gate 3":
    ``snack near gate 3``): the thing, or the data's word for it (:func:`wanted_kind`), and
    the place (a gate, or another name of the data) after it; None when no such pair."""
    from reactloop.models._spelled import wanted_kind

    known = {_plain(n) for n in names}
    for m in [*_NEAR_THING.finditer(question), *_HERE_THING.finditer(question)]:
        thing = next(g for g in m.groups() if g).lower()
        kind = (thing,) if not names or _plain(thing) in known else wanted_kind(thing, names)
        if thing in _VAGUE and names:  # "a cappuccino somewhere close to gate 5": the cappuccino's
            before = question[:m.start()]
            kind = wanted_kind(before, names) or tuple(
                w for w in _plain(before).split() if w in known and w not in _VAGUE)[:1]
        at = _AT_GATE.search(question) if m.re is _HERE_THING else None
        rest = question[m.end():]
        gate = _NEAR_GATE.match(rest) if at is None else at
        place = gate.group(1) if gate else next(
            (n for n in names if re.match(rf"{re.escape(n)}\b", rest, re.I)), None)
        if place and kind:
            return f"{kind[0]} near {place}"
    return None


_HERE_THING = re.compile(r"\b(?:nearest|closest)\s+([a-z'-]+)(?!\s+(?:to|from)\b)", re.I)
_AT_GATE = re.compile(r"\b(?:i'?m|i\s+am|we'?re|we\s+are|sitting|standing|waiting)\s+(?:at|by|near)\s+"
                      r"(?:the\s+)?(gate\s+[A-Za-z]?\d+|[A-Z]\d+)\b", re.I)
"""'I'm at gate 5, nearest toilet?': the thing near where one is."""


def near_values(spec: ToolSpec, question: str, values: Candidates, names: Sequence[str]
                ) -> Candidates:
    """``values`` for a search of a skill's data (its ``names``; the search's text argument
    is a ``term`` or ``query``), left to the thing near the place the question names
    (:func:`near_search`), when it names one: the search sorts by nearness to a place it
    names."""
    import dataclasses

    props = spec.parameters.get("properties") or {}
    near = near_search(question, names) if names and {"term", "query"} & set(props) else None
    return dataclasses.replace(values, strings=(near,)) if near and values.strings else values
