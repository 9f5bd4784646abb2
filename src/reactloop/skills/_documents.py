"""What a skill's documents are about: the headings, the table headers and the row labels of
its reference documents (``references/fare_rules.md``: "Fare rules", "checked bags",
"carry-on", "economy", "premium"), so a question on one of them ("the carry-on limit in
premium economy?") ranks the skill that can answer it, though its description never says
the word. Collected once per skill folder (cached by the files' sizes and modification
times), from Markdown and text files other than ``SKILL.md``, never from code.

They travel in ``load_skill``'s choice text (:attr:`~reactloop.messages.ToolSpec.choices`),
which only ranking reads; those of two words or more also with the names of the skill's data
(:func:`document_phrases`).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

__all__ = ["document_phrases", "document_terms"]

_SUFFIXES = (".md", ".txt", ".rst")
_MAX_FILES = 20
_MAX_CHARS = 20_000
_MAX_TERMS = 200
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_BOLD = re.compile(r"\*\*([^*\n]{2,40})\*\*")
_CELL_TEXT = re.compile(r"[`*]")


def _cells(line: str) -> list[str]:
    return [_CELL_TEXT.sub("", c).strip() for c in line.strip().strip("|").split("|")]


def _labels(text: str) -> list[str]:
    """A document's headings, its tables' header cells and first cells of rows, its bold
    terms: the things it tells about (not its sentences)."""
    out: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        heading = _HEADING.match(line)
        if heading:
            out.append(heading.group(1))
        elif _SEPARATOR.match(line) and i and "|" in lines[i - 1]:
            out += _cells(lines[i - 1])  # the header row above the |---| line
        elif line.lstrip().startswith("|") and i and not _SEPARATOR.match(line):
            out += _cells(line)[:1]  # a row's label
        out += _BOLD.findall(line)
    return [c for c in out if c and len(c) <= 60 and any(ch.isalpha() for ch in c)]


def _documents(folder: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__")))
        out += [Path(dirpath, f) for f in sorted(filenames)
                if f.endswith(_SUFFIXES) and f != "SKILL.md"]
    return out[:_MAX_FILES]


@lru_cache(maxsize=64)
def _cached(folder: str, stamp: tuple[tuple[str, int, int], ...]) -> tuple[str, ...]:
    terms: dict[str, None] = {}
    for name, _, _ in stamp:
        try:
            text = Path(folder, name).read_text(encoding="utf-8")[:_MAX_CHARS]
        except (OSError, UnicodeDecodeError):
            continue
        for label in _labels(text):
            terms[" ".join(label.split())] = None
    return tuple(terms)[:_MAX_TERMS]


def document_terms(folder: str | os.PathLike[str]) -> tuple[str, ...]:
    """The headings, table headers, row labels and bold terms of the documents of the skill
    in ``folder`` (see the module), each once, in file order."""
    root = Path(folder)
    stamp = []
    for path in _documents(root):
        try:
            st = path.stat()
        except OSError:
            continue
        stamp.append((path.relative_to(root).as_posix(), st.st_size, st.st_mtime_ns))
    return _cached(str(root), tuple(stamp)) if stamp else ()


def document_phrases(folder: str | os.PathLike[str]) -> tuple[str, ...]:
    """Of :func:`document_terms`, the labels of two or three words, two of them more than a
    little word ("checked bags", "cancellation refund"): said in a question, they name the
    skill's matter as a name of its data does."""
    from reactloop.skills._names import _is_phrase

    return tuple(t for t in document_terms(folder) if _is_phrase(t.lower()))
