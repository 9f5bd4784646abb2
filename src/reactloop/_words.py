"""Words to compare names by (a neutral module of pure functions, like :mod:`reactloop._ranking`,
which uses it): a name of a skill's data, a label of its documents or a row of a table is said
in a question however it is punctuated or inflected ("lost and found" says "Lost & Found").
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["plain", "says"]

_AND = re.compile(r"\s*(?:&|\+)\s*")
_APART = re.compile(r"[^\w'/-]+|'s\b|'(?!\w)|_|(?<=[^\W\d])-(?=[^\W\d])|(?<!\w)[-/]|[-/](?!\w)")


@lru_cache(maxsize=8192)
def plain(text: str) -> str:
    """``text`` as words to compare names by: lower-cased, "&" said as "and", punctuation as
    spaces, a plural as its singular ("Lost & Found" is "lost and found", "Restrooms" is a
    "restroom", "check-in" is "check in"); a dash or slash at a digit stays ("gates 1-2" does
    not say "Gate 1")."""
    words = _APART.sub(" ", _AND.sub(" and ", text.lower())).split()
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
                    for w in words)


def says(text: str, name: str) -> bool:
    """Whether ``text`` says ``name`` as whole words, however punctuated (see :func:`plain`)."""
    wanted = plain(name)
    return bool(wanted) and f" {wanted} " in f" {plain(text)} "
