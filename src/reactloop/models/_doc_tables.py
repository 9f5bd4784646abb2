"""The cells of a document's table that a question asks for (a pure function used by
:func:`reactloop.models._shaping.render_result`): a Markdown table's rows are named by their
first cell and its columns by their headers, so "What's the carry-on limit in premium?" over a
fare table is the cell of the row "premium" and the column "carry-on" — ``premium carry-on:
1 × 10 kg`` — which begins the answer instead of the table's first lines. A row said alone
gives all its cells, a column said alone its cell in every row.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["table_cells"]

_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_NUMBERED = re.compile(r"^\s*\d+\t")  # a file reader's line numbers
_MAX_ROWS = 4


def _cells(line: str) -> list[str]:
    return [" ".join(c.replace("`", "").replace("*", "").split())
            for c in _NUMBERED.sub("", line).strip().strip("|").split("|")]


def _tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """The Markdown tables of ``text``: each header and its rows."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if not (i and _SEPARATOR.match(_NUMBERED.sub("", line)) and "|" in lines[i - 1]):
            continue
        header, rows = _cells(lines[i - 1]), []
        for row in lines[i + 1:]:
            if "|" not in row or not row.strip():
                break
            cells = _cells(row)
            if len(cells) == len(header):
                rows.append(cells)
        out.append((header, rows))
    return out


def _said_rows(rows: Sequence[list[str]], question: str) -> list[list[str]]:
    """The rows whose label (first cell) the question says; of two said one right after the
    other ("premium economy") the first, which qualifies the second."""
    from reactloop._words import plain as _plain

    spoken = f" {_plain(question)} "
    said = [r for r in rows if r[0] and f" {_plain(r[0])} " in spoken]
    return [r for r in said if not any(
        f" {_plain(o[0])} {_plain(r[0])} " in spoken for o in said if o is not r)]


def table_cells(text: str, question: str) -> str:
    """The cells of the tables in ``text`` that ``question`` asks for (see the module), as
    ``row column: cell`` (a row alone: ``row: column cell, …``; a column alone: ``column:
    row cell, …``); empty when it names no row and no column of any table."""
    from reactloop._ranking import terms

    asked = set(terms(question, expand=True))
    for header, rows in _tables(text):
        if len(header) < 2 or not rows:
            continue
        columns = [i for i, h in enumerate(header) if i and set(terms(h)) & asked]
        said = _said_rows(rows, question)[:_MAX_ROWS]
        if said and columns:
            return "; ".join(f"{r[0]} {header[i]}: {r[i]}" for r in said for i in columns)
        if said:
            return "; ".join(f"{r[0]}: " + ", ".join(f"{h} {c}" for h, c in zip(
                header[1:], r[1:], strict=True)) for r in said)
        if columns and len(columns) <= 2:
            return "; ".join(f"{header[i]}: " + ", ".join(f"{r[0]} {r[i]}" for r in rows)
                             for i in columns)
    return ""
