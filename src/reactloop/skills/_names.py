"""The names a skill's bundled data holds ("Cafe Aroma" in the airport's ``data/pois.json``,
"Singapore" in book-flight's ``data/airports.csv``, and labels in lower case of two or three
words such as a place's tag "lost and found"): a question naming one of them is about
that skill, whatever else its words say ("until what time is Cafe Aroma open?" is the
airport's, not the clock's). Collected once per skill folder (cached by the files' sizes and
modification times), only from data files (JSON, CSV, TSV), never from code.

They travel with ``load_skill``'s choices (:attr:`~reactloop.messages.ToolSpec.choices`,
after :data:`NAMES_MARK`), which only ranking reads (:func:`reactloop._ranking.best_choice`).
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from reactloop._ranking import NAMES_MARK, TERMS_MARK, WORDS_MARK

__all__ = ["NAMES_MARK", "TERMS_MARK", "WORDS_MARK", "data_names", "data_terms", "data_words"]

_SUFFIXES = (".json", ".csv", ".tsv")
_MAX_BYTES = 2_000_000
_MAX_NAMES = 2000
_NAME = re.compile(r"[A-Z][\w'&.-]*(?: [\w'&.-]+){0,3}")
_WORD = re.compile(r"[a-z]{3,20}")
"""A name: a capitalised word and up to three more ("Cafe Aroma", "Terminal A", "EUR")."""


def _is_name(value: str) -> bool:
    text = value.strip()
    return (len(text) <= 40 and bool(_NAME.fullmatch(text)) and not text.endswith(".")
            and any(c.isalpha() for c in text[1:] or text))


_PHRASE = re.compile(r"[a-z][a-z'-]+(?: (?:&|[a-z][a-z'-]*)){1,2}")
_COMMON = frozenset(["a", "an", "and", "at", "for", "in", "of", "on", "or", "the", "to", "with", "by", "from", "per"])


def _is_phrase(value: str) -> bool:
    """A label in lower case of two or three words, two of them more than a little word
    ("lost and found", "first aid", "duty free" among a place's tags): said in a question, it
    names the skill's thing as well as a capitalised name ("on time" or "per day" do not)."""
    text = " ".join(value.split())
    return (len(text) <= 30 and bool(_PHRASE.fullmatch(text))
            and sum(w not in _COMMON and w != "&" for w in text.split()) >= 2)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _file_names(path: Path) -> Iterator[str]:
    try:
        if path.stat().st_size > _MAX_BYTES:
            return
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    if path.suffix == ".json":
        try:
            yield from _strings(json.loads(text))
        except ValueError:
            return
    else:
        for row in csv.reader(text.splitlines(), delimiter="\t" if path.suffix == ".tsv"
                              else ","):
            yield from row[:50]


def _data_files(folder: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__")))
        out += [Path(dirpath, f) for f in sorted(filenames) if f.endswith(_SUFFIXES)]
    return out[:200]


_SENTENCE = re.compile(r"\w+(?:[ ,;:-]+\w+){2,}[.!]?")
"""A short sentence of the data ("Burgers and fries.", "Nursing and baby changing room.")."""


@lru_cache(maxsize=64)
def _cached(folder: str, stamp: tuple[tuple[str, int, int], ...]
            ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    names: dict[str, None] = {}
    words: dict[str, None] = {}
    said: dict[str, None] = {}
    for name, _, _ in stamp:
        for value in _file_names(Path(folder, name)):
            if _is_name(value) or _is_phrase(value):
                names[" ".join(value.split())] = None
            elif _WORD.fullmatch(value) and len(words) < _MAX_NAMES:
                words[value] = None
            elif len(value) <= 200 and _SENTENCE.fullmatch(value.strip()) and (
                    len(said) < _MAX_NAMES):
                said.update(dict.fromkeys(_WORD.findall(value.lower())))
            if len(names) >= _MAX_NAMES:
                return tuple(names), tuple(words), tuple(said)
    return tuple(names), tuple(words), tuple(said)


def _stamp(folder: str | os.PathLike[str]) -> tuple[str, tuple[tuple[str, int, int], ...]]:
    root = Path(folder)
    stamp = []
    for path in _data_files(root):
        try:
            st = path.stat()
        except OSError:
            continue
        stamp.append((path.relative_to(root).as_posix(), st.st_size, st.st_mtime_ns))
    return str(root), tuple(stamp)


def data_names(folder: str | os.PathLike[str]) -> tuple[str, ...]:
    """The names (capitalised, up to four words; or labels of two or three words in lower
    case, :func:`_is_phrase`) in the data files of the skill in ``folder``, in file order,
    each once (see the module)."""
    root, stamp = _stamp(folder)
    return _cached(root, stamp)[0] if stamp else ()


def data_words(folder: str | os.PathLike[str]) -> tuple[str, ...]:
    """The values of one word in lower case in the data files of the skill in ``folder``
    (a place's tags and category: "doctor", "pharmacy"), each once: what its search can find
    by name, which a search's term is chosen among ("is there a doctor?": ``doctor``, not
    "feel"). They never choose the skill (too common: "help", "city")."""
    root, stamp = _stamp(folder)
    return _cached(root, stamp)[1] if stamp else ()


def data_terms(folder: str | os.PathLike[str]) -> tuple[str, ...]:
    """The words of the short sentences in the data files of the skill in ``folder`` (a
    place's description "Burgers and fries.": ``burgers``, ``and``, ``fries``), each once: a
    thing a question wants ("anywhere that does fries?") that only a description says still
    finds the skill (:func:`reactloop._ranking.best_choice`)."""
    root, stamp = _stamp(folder)
    return _cached(root, stamp)[2] if stamp else ()
