"""The data-analyst skill's tools (seed 000): list, query and compare the bundled sources.

reactloop imports this file when the skill is loaded, as a module of a package rooted at this
folder, so the relative imports below find ``comparison.py`` and ``sources.py`` next to it.
"""

from __future__ import annotations

import re
from typing import Any

from reactloop import ToolRetry, tool

from .comparison import Thresholds, compare
from .sources import FilterValue, UnknownSource, catalog


@tool
def list_sources() -> list[dict[str, Any]]:
    """List the data sources that can be queried and compared, with their columns."""
    cat = catalog()
    return [
        {
            "name": info.name,
            "description": info.description,
            "dimensions": list(info.dimensions),
            "measures": list(info.measures),
            "rows": cat.row_count(info.name),
        }
        for info in cat.sources.values()
    ]


@tool
def query_source(
    source: str,
    filters: dict[str, FilterValue] | None = None,
    group_by: list[str] | None = None,
    limit: int = 50,
) -> dict[str, Any]:
    """Query one data source: its rows, or its measures summed per group.

    Args:
        source: the source's name, as given by list_sources.
        filters: dimension values to keep, e.g. {"company": "1001", "period": ["202401",
            "202402"]}.
        group_by: dimensions to group by; the measures are summed per group.
        limit: at most this many rows (up to 500).
    """
    try:
        rows = catalog().query(_source_name(source), filters, group_by, limit=limit)
    except UnknownSource as exc:
        raise ToolRetry(str(exc)) from None
    return {"source": source, "row_count": len(rows), "rows": rows}


@tool
def compare_sources(
    source_a: str,
    source_b: str,
    measure: str = "amount",
    key_columns: list[str] | None = None,
    filters: dict[str, FilterValue] | None = None,
    major_pct_threshold: float = 1.0,
    major_abs_threshold: float | None = 5000.0,
    top_n: int = 10,
) -> dict[str, Any]:
    """Compare a measure between two sources, row by row, aligned by key columns.

    A difference is major when it exceeds major_pct_threshold percent of source_a's value or
    major_abs_threshold in absolute terms; a match when it is at most 0.01; otherwise minor.

    Args:
        source_a: the reference source.
        source_b: the source compared against it.
        measure: the measure column to compare.
        key_columns: dimensions that align rows (default: the dimensions both sources
            share, such as company and period).
        filters: dimension values to keep in both sources, e.g. {"company": "1001"}.
        major_pct_threshold: percentage above which a difference is major.
        major_abs_threshold: absolute amount above which a difference is major (null: none).
        top_n: how many of the largest differences to return.
    """
    cat = catalog()
    try:
        source_a, source_b = _source_name(source_a), _source_name(source_b)
        a, b = cat.source(source_a), cat.source(source_b)
        if measure not in a.measures or measure not in b.measures:
            shared = sorted(set(a.measures) & set(b.measures))
            raise UnknownSource(f"'{measure}' is not a measure of both sources; shared "
                                f"measures: {', '.join(shared) or '(none)'}")
        keys = key_columns or _shared_keys(a.dimensions, b.dimensions)
        rows_a = cat.query(source_a, filters, keys, [measure], limit=None)
        rows_b = cat.query(source_b, filters, keys, [measure], limit=None)
        thresholds = Thresholds(major_pct=major_pct_threshold, major_abs=major_abs_threshold)
    except (UnknownSource, ValueError) as exc:
        raise ToolRetry(str(exc)) from None
    result = compare(rows_a, rows_b, keys, measure, thresholds, top_n=top_n)
    return {"headline": _headline(source_a, source_b, measure, result["summary"]),
            "source_a": source_a, "source_b": source_b, "measure": measure,
            "key_columns": keys, **result}


def _headline(a: str, b: str, measure: str, s: dict[str, Any]) -> str:
    """The comparison in one line, for the answer to start with."""
    return (f"Total {measure}: {a} {s['total_source_a']:,.0f}, {b} {s['total_source_b']:,.0f}, "
            f"difference {s['total_diff']:,.0f}; {s['major_differences']} major and "
            f"{s['minor_differences']} minor differences.")


def _source_name(text: str) -> str:
    """A source's name as people type it: exact, or the one known name the text contains
    ("the fi_reporting source" is fi_reporting); anything else unchanged (an error lists the
    sources)."""
    known = catalog().sources
    name = text.strip().strip("'\"`").lower()
    if name in known:
        return name
    found = [k for k in known if re.search(rf"(?<![\w]){re.escape(k)}(?![\w])", name)]
    return found[0] if len(found) == 1 else text


def _shared_keys(a: tuple[str, ...], b: tuple[str, ...]) -> list[str]:
    # text columns that describe a row rather than identify it are not keys
    descriptive = {"account_name", "currency", "category"}
    keys = [c for c in a if c in b and c not in descriptive]
    if not keys:
        raise UnknownSource(f"the sources share no key columns ({', '.join(a)} vs "
                            f"{', '.join(b)}); pass key_columns")
    return keys
