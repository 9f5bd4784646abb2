"""Questions about the user's files: pure functions the embedded model's guidance
(:func:`reactloop.models.local.plan_reply`) applies to the ranked offer of a fresh question.

- **a named file is read first** (:func:`file_offer`): a question that names a file ("add up
  january and february in data/sales.csv", "the total in report.csv") asks about what the
  file holds: its reader is offered, and no tool that would take the question's own numbers
  (``add``, ``calculate``) — the figures are in the file, and the answer computes with them
  once it is read (:mod:`reactloop.models._tables`);
- **a question whether the files say something** (:func:`document_offer`): "is there a doc
  that says what time we open?", "did I write down the port anywhere?" is a search through
  the files' contents (``grep``), whatever other tool a word of it names ("time":
  ``current_time``);
- **what such a search looks for** (:func:`any_word_pattern`): the words the files would
  say, not the kind of answer asked ("what time" is no word of "The office opens at 9 am"),
  as one regular expression matching any of their stems (``(?i)open|morn``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from reactloop.messages import ToolSpec

__all__ = ["any_word_pattern", "document_offer", "file_offer", "named_file", "reader",
           "searches_contents"]

_PATHS = frozenset({"path", "file", "filename", "file_path", "filepath"})
_PREFIX = "(?i)"


def named_file(question: str) -> str | None:
    """The first file name or path ``question`` says, or None."""
    from reactloop._ranking import _FILENAME

    m = _FILENAME.search(question)
    return m.group(0) if m else None


def _string_args(spec: ToolSpec) -> list[str]:
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    return [k for k in spec.parameters.get("required") or () if isinstance(props.get(k), Mapping)
            and props[k].get("type") == "string"]


def reader(spec: ToolSpec) -> bool:
    """Whether ``spec`` reads a file: its only required string argument is a path, and its
    description says it reads."""
    from reactloop._ranking import terms

    args = _string_args(spec)
    return (not spec.internal and len(args) == 1 and args[0].lower() in _PATHS
            and "read" in terms(f"{spec.name} {spec.description}"))


def searches_contents(spec: ToolSpec) -> bool:
    """Whether ``spec`` searches the contents of files (``grep``): its name or description
    says search or grep, and file or contents, and it takes what to look for."""
    from reactloop._ranking import terms

    words = set(terms(f"{spec.name} {spec.description}"))
    args = [a.lower() for a in _string_args(spec)]
    return (not spec.internal and bool(words & {"grep", "search"})
            and bool(words & {"file", "content"})
            and any(a in ("pattern", "query", "regex", "term", "text") for a in args))


def _numeric(spec: ToolSpec) -> bool:
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    kinds = [p.get("type") for p in props.values() if isinstance(p, Mapping)]
    return bool(kinds) and all(k in ("number", "integer") for k in kinds)


def _expression(spec: ToolSpec) -> bool:
    return any("expression" in a.lower() for a in _string_args(spec))


def file_offer(listed: Sequence[ToolSpec], tools: Sequence[ToolSpec], question: str
               ) -> tuple[ToolSpec, ...]:
    """The offer for a fresh question that names a file (see the module): a reader of
    ``tools`` first (added when the ranking left it out), then the listed tools other than
    those computing with the question's own numbers; ``listed`` unchanged when the question
    names no file or no tool reads one."""
    if named_file(question) is None:
        return tuple(listed)
    readers = [t for t in listed if reader(t)] or [t for t in tools if reader(t)][:1]
    if not readers:
        return tuple(listed)
    rest = [t for t in listed if t not in readers and not _numeric(t) and not _expression(t)]
    return (*readers, *rest)


def document_offer(listed: Sequence[ToolSpec], tools: Sequence[ToolSpec], question: str
                   ) -> tuple[ToolSpec, ...]:
    """The offer for a fresh question whether the files say something (see the module):
    the content search of ``tools`` (added when the ranking left it out) and the internal
    tools of ``listed``; ``listed`` unchanged for another question, or when no tool searches
    contents, or when the question names a file (:func:`file_offer`)."""
    from reactloop._ranking import asks_documents

    if named_file(question) is not None or not asks_documents(question):
        return tuple(listed)
    search = [t for t in listed if searches_contents(t)] or [
        t for t in tools if searches_contents(t)][:1]
    if not search:
        return tuple(listed)
    return (*search, *(t for t in listed if t.internal and t not in search))


_KINDS = frozenset(["time", "times", "day", "days", "date", "dates", "hour", "hours", "year", "years", "month", "months", "week", "weeks", "number", "numbers", "amount", "price", "cost", "many", "much", "long", "often", "far", "old", "big"])
"""The kind of answer a question asks for ("what time", "how many"): no word of the files."""
_ASKED = re.compile(r"\b(?:what|which|how)\s+(\w+)", re.I)
_LOOKING = """saying got down jot jotted noted docs readme according check checking look looking
through scan go"""
_NOT_SAID = frozenset(_LOOKING.split())
"""Words of looking, writing down or of the files themselves: no word the files say."""


def any_word_pattern(values: Sequence[str], question: str) -> tuple[str, ...]:
    """The regular-expression values of a content search (``(?i)time``, ``(?i)open``,
    ``(?i)morning``) as one pattern matching any of the words the files would say: without
    the kind of answer asked ("what time"), each word as its stem ("opens": ``open``), the
    question's order kept, a derived noun as its root ("installation": ``install``); ``values``
    unchanged when none is left."""
    from reactloop._ranking import terms

    asked = {m.group(1).lower() for m in _ASKED.finditer(question)} & _KINDS
    words: list[str] = []
    for value in values:
        bare = value.removeprefix(_PREFIX)
        for word in bare.split():
            if word.lower() in asked or word.lower() in _NOT_SAID or re.search(r"[^\w-]", word):
                continue
            stems = terms(word) or ([word] if word.isdigit() else [])
            # a name keeps its capitals ("Globex"), a derived word its root
            words += [word if _root(s) == word.lower() else _root(s) for s in stems
                      if len(s) >= 3 or s.isdigit()]
    said = question.lower()
    words = sorted(dict.fromkeys(words), key=lambda w: (said.find(w.lower()) < 0,
                                                        said.find(w.lower())))
    if not words:
        kept = tuple(v for v in values if v.removeprefix(_PREFIX).lower() not in asked)
        return kept or tuple(values)
    return (_PREFIX + "|".join(words),)


_SUFFIXES = ("ations", "ation")


def _root(stem: str) -> str:
    """``stem`` without a suffix that derives a noun ("installation": ``install``), so that a
    search finds the verb a file writes ("Install the package")."""
    for suffix in _SUFFIXES:
        if stem.endswith(suffix) and len(stem) - len(suffix) >= 4:
            return stem[: -len(suffix)]
    return stem
