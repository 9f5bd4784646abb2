"""Data names said in other words (a pure function of the question and the skills' texts): a
name a skill writes as one identifier ("consolidation_mart", "fi_reporting") is said by its
words ("the consolidation mart", "fi-reporting") or by its first part alone as an
abbreviation ("FI", "BPC", "bpc") when no other name of the skills starts with it. The levers
that read names ("Compare fi_reporting and bpc_reporting": one source each) then read them in
such a question too.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from reactloop.messages import ToolSpec

__all__ = ["bought_kind", "compound_heads", "data_form", "data_identifiers", "spelled", "wanted_kind",
           "when_words", "without_when"]

_IDENT = re.compile(r"(?<![\w./`\-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w/`(:\-]|\.\w)")
"""An identifier written in a skill's description, not a file (``fare_rules.md``), a path, a
code span, a call (``show_poi(``) or a tool's entry (``search_pois:``)."""


def data_identifiers(specs: Sequence[ToolSpec]) -> tuple[str, ...]:
    """The identifiers the choices' descriptions (a skill's text before its data names) write,
    other than the names of tools (``search_flights``, or a skill's tool it lists as
    ``name: what it does``)."""
    from reactloop._ranking import NAMES_MARK, WORDS_MARK

    tools = {s.name for s in specs}
    texts = [text.partition(NAMES_MARK)[0].partition(WORDS_MARK)[0]
             for s in specs for _, text in s.choices]
    tools |= {t for text in texts for t in re.findall(r"(\w+): ", text)}  # a skill's tools
    found = [i for text in texts for i in _IDENT.findall(text)]
    return tuple(i for i in dict.fromkeys(found) if i not in tools)


def spelled(question: str, known: Sequence[str]) -> str:
    """``question`` with the ``known`` identifiers it says in other words written as they are
    ("do the FI and BPC numbers agree": "do the fi_reporting and bpc_reporting numbers
    agree")."""
    heads = Counter(i.split("_")[0] for i in known)
    for ident in known:
        if re.search(rf"(?<![\w.]){re.escape(ident)}(?!\w)", question):
            continue
        parts = ident.split("_")
        words = r"[\s-]+".join(re.escape(p) for p in parts)
        question = re.sub(rf"(?<![\w.]){words}(?!\w)", ident, question, flags=re.I)
        head = parts[0]
        if heads[head] != 1 or not head.isalpha():
            continue
        short = rf"|{re.escape(head)}" if len(head) <= 3 else ""  # "bpc" as typed
        question = re.sub(rf"(?<![\w.])(?:{re.escape(head.upper())}{short})(?![\w.]|\s+{re.escape(parts[1])})",
                          ident, question)
    return question


def data_form(question: str, known: Sequence[str], terms: Sequence[str] = ()
              ) -> tuple[str, ...]:
    """The data's own name (of ``known``: the loaded skill's names and words) for the thing
    the question wants or asks the opening hours of, said in another form: "somewhere I can
    nurse her" is the data's ``nursing``, "when does check-in open" its ``Check-in Hall``
    (the shortest such name); empty when the data has none, or when a thing wanted is a word
    of the data's sentences (``terms``: "does fries? starving" searches the fries, not food)."""
    from reactloop._ranking import _stem_held, asked_open, wanted
    from reactloop._ranking import terms as terms_of
    from reactloop._words import says

    things = wanted(question)
    said = [t for t in things if t.split() and set(t.lower().split()) <= set(terms)]
    if said:  # "does fries? starving": the data's sentences say fries, so not its "food"
        return (said[0],)
    for thing in [*asked_open(question), *things]:
        want = terms_of(thing)
        fits = ([n for n in known if says(n, thing)]  # "check-in" is "Check-in Hall"'s
                or [n for n in known if want and all(_stem_held(w, set(terms_of(n))) for w in want)])
        if fits:
            return (min(fits, key=len),)
    return wanted_kind(question, known)


def bought_kind(bought: tuple[str, ...], names: Sequence[str]) -> tuple[str, ...]:
    """The data's name for the kind of place that sells ``bought`` when the data holds none
    of its words ("buy aspirin": ``medicine``), else empty."""
    from reactloop._words import plain

    known = {w for n in names for w in plain(n).split()}
    if any(w in known for b in bought for w in plain(b).split()):
        return ()
    return wanted_kind(" ".join(bought), names)


def wanted_kind(question: str, known: Sequence[str]) -> tuple[str, ...]:
    """The data's name (of ``known``) for the kind of place that has what ``question`` wants,
    when the data holds none of its words ("anywhere for a latte?": ``coffee``; "somewhere
    quiet to sit": ``lounge``; :mod:`reactloop._wants`), the first word's; else empty."""
    from reactloop._wants import bare_kinds, kinds
    from reactloop._words import plain

    held = {plain(n): n for n in known}
    for kind in bare_kinds(question):  # "anywhere to eat?": food
        if plain(kind) in held:
            return (held[plain(kind)],)
    for word in re.findall(r"[a-z]+", question.lower()):
        for kind in kinds(word):
            if plain(kind) in held:
                return (held[plain(kind)],)
    return ()


def compound_heads(spec: ToolSpec, values: tuple[str, ...], known: set[str]
                    ) -> tuple[str, ...]:
    """The first parts of the compound words among ``values`` that the data does not know
    whole but knows the first part of, its second part a word of the data or of the search's
    documentation ("bookshop": ``book``, the data holding "books" and its docs "shop")."""
    from reactloop._ranking import _document
    from reactloop._words import plain

    doc = set(_document(spec)) | known
    out = []
    for v in values:
        word = plain(v.split()[-1]) if v.split() else ""
        if plain(v) in known or len(word) < 6:
            continue
        out += [word[:i] for i in range(3, len(word) - 2)
                if word[:i] in known and plain(word[i:]) in doc]
    return tuple(dict.fromkeys(w for w in out if w not in values))


def when_words(question: str) -> set[str]:
    """The words of the question's clauses of time about the journey ("two hours before my
    flight": ``before``, ``my``, ``flight``): they say when, not what is wanted."""
    return {w.lower() for m in _WHEN_CLAUSE.finditer(question)
            for w in re.findall(r"\w+", m.group(0))}


_WHEN_CLAUSE = re.compile(r",?\s*\b(?:before|after|during|until|till)\s+(?:(?:my|our|the|your)\s+"
                          r"(?:\w+\s+)?)?(?:flight|plane|boarding|departure|layover|connection|trip)s?\b"
                          r"(?:\s+(?:leaves|departs|boards|takes\s+off))?", re.I)


def without_when(question: str) -> str:
    """``question`` without its clauses of time about the journey ("two hours before my flight,
    anything to eat?": the flight says when; what is asked is something to eat), when more
    than such a clause is left."""
    rest = _WHEN_CLAUSE.sub("", question)
    return rest if re.search(r"[a-z]{3}", rest, re.I) else question
