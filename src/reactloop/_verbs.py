"""A skill's name that begins with a verb ("book-flight", "order-food") says that verb: its
word said as a thing ("a book", "the books", "any order") is no request to do it (pure
functions used by :func:`reactloop._ranking.best_choice`). Such a word is left out of the
question for ranking the skills, and counts instead for the skill whose data holds the thing
("Any place to buy a book before my flight?": the airport, whose shop sells books; not the
flight booking).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["as_things", "name_verbs"]

_DETERMINER = (r"(?:a|an|the|any|some|my|your|our|his|her|their|this|that|these|those|one|"
               r"two|three|few|more|other|new|old|good|second-?hand|used|paper)")


def name_verbs(skills: Iterable[tuple[str, str]]) -> set[str]:
    """The first words of the skill names of two words or more that their descriptions use as
    a verb on the second ("book-flight": "Search and book flights", "... book a flight": ``book``;
    never "data-analyst", whose first word acts on nothing)."""
    out = set()
    for name, description in skills:
        words = [w for w in re.split(r"[-_\s]+", name.lower()) if w]
        if len(words) < 2 or not words[0].isalpha():
            continue
        verb, thing = re.escape(words[0]), re.escape(re.sub(r"s$", "", words[1]))
        if re.search(rf"\b{verb}\s+(?:(?:a|an|the|your|my)\s+{thing}|{thing}s)\b",
                     description, re.I):
            out.add(words[0])
    return out


def _thing(verb: str) -> re.Pattern[str]:
    """``verb`` said as a thing: after a determiner ("a book", "any good book"), or in the
    plural not followed by what it acts on ("books", not "books a table")."""
    return re.compile(
        rf"\b{_DETERMINER}\s+(?:[a-z]+\s+)?{verb}s?\b"
        rf"|\b{verb}s\b(?!\s+(?:a|an|the|me|us|my|our|it|them|for)\b)", re.I)


def as_things(query: str, verbs: Iterable[str]) -> tuple[str, list[str]]:
    """``query`` without the ``verbs`` it says only as things, and those words: a verb also
    said as one ("a book ... book it") stays."""
    things = []
    for verb in sorted(verbs):
        rx = _thing(re.escape(verb))
        every = re.findall(rf"\b{re.escape(verb)}s?\b", query, re.I)
        if every and len(every) == len(rx.findall(query)):
            query = re.sub(rf"\b{re.escape(verb)}s?\b", " ", query, flags=re.I)
            things.append(verb)
    return query, things

