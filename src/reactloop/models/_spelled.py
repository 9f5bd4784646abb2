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

__all__ = ["data_identifiers", "spelled"]

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
