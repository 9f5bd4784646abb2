"""The bundled data sources (CSV files under ``data/``) loaded into an in-memory DuckDB.

``data/sources.json`` describes each source: its file, a description, its dimension columns
(text keys such as company, period, account) and its measure columns (numbers). DuckDB is
imported on first use only, and the tables are loaded once per process.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Catalog", "SourceInfo", "UnknownSource", "catalog"]

DATA_DIR = Path(__file__).resolve().parent / "data"
MAX_ROWS = 500

FilterValue = str | int | float | list[str | int | float]


class UnknownSource(LookupError):
    """A source, column or measure that does not exist; the message lists what does."""


@dataclass(frozen=True)
class SourceInfo:
    name: str
    description: str
    file: Path
    dimensions: tuple[str, ...]
    measures: tuple[str, ...]


class Catalog:
    """The sources of one data folder, queried through DuckDB."""

    def __init__(self, data_dir: Path = DATA_DIR) -> None:
        manifest = json.loads((data_dir / "sources.json").read_text(encoding="utf-8"))
        self.sources = {
            name: SourceInfo(name, spec["description"], data_dir / spec["file"],
                             tuple(spec["dimensions"]), tuple(spec["measures"]))
            for name, spec in manifest.items()
        }
        self._con: Any = None
        self._lock = threading.Lock()

    def source(self, name: str) -> SourceInfo:
        info = self.sources.get(name)
        if info is None:
            raise UnknownSource(f"Source '{name}' not found. Available sources: "
                                f"{', '.join(self.sources)}")
        return info

    def _cursor(self) -> Any:
        # one connection, loaded once; each query gets its own cursor because tools run in
        # worker threads and a DuckDB connection must not be shared between threads
        with self._lock:
            if self._con is None:
                import duckdb

                con = duckdb.connect(":memory:")
                for info in self.sources.values():
                    types = {c: "VARCHAR" for c in info.dimensions}
                    types.update({m: "DOUBLE" for m in info.measures})
                    con.read_csv(str(info.file), header=True, dtype=types).create(info.name)
                self._con = con
            return self._con.cursor()

    def row_count(self, name: str) -> int:
        info = self.source(name)
        return int(self._cursor().execute(f'SELECT count(*) FROM "{info.name}"').fetchone()[0])

    def query(self, name: str, filters: Mapping[str, FilterValue] | None = None,
              group_by: Sequence[str] | None = None, measures: Sequence[str] | None = None,
              limit: int | None = 50) -> list[dict[str, Any]]:
        """Rows of ``name`` matching ``filters``; with ``group_by``, the measures summed per
        group (``limit=None``: all rows). Column names are checked against the manifest,
        values are bound parameters."""
        info = self.source(name)
        measures = list(measures or info.measures)
        for m in measures:
            if m not in info.measures:
                raise UnknownSource(f"'{m}' is not a measure of {name}; measures: "
                                    f"{', '.join(info.measures)}")
        where, params = self._where(info, filters or {})
        if group_by:
            for col in group_by:
                self._check_dimension(info, col)
            cols = ", ".join(f'"{c}"' for c in group_by)
            sums = ", ".join(f'SUM("{m}") AS "{m}"' for m in measures)
            sql = (f'SELECT {cols}, {sums} FROM "{info.name}"{where} GROUP BY {cols} '
                   f"ORDER BY {cols}")
        else:
            order = ", ".join(f'"{c}"' for c in info.dimensions)
            sql = f'SELECT * FROM "{info.name}"{where} ORDER BY {order}'
        if limit is not None:
            sql += f" LIMIT {max(1, min(int(limit), MAX_ROWS))}"
        cur = self._cursor().execute(sql, params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def _check_dimension(self, info: SourceInfo, col: str) -> None:
        if col not in info.dimensions:
            raise UnknownSource(f"'{col}' is not a column of {info.name}; its columns are "
                                f"{', '.join(info.dimensions)} (and measures "
                                f"{', '.join(info.measures)})")

    def _where(self, info: SourceInfo, filters: Mapping[str, FilterValue]
               ) -> tuple[str, list[str]]:
        clauses: list[str] = []
        params: list[str] = []
        for col, value in filters.items():
            self._check_dimension(info, col)
            values = [value] if isinstance(value, (str, int, float)) else list(value)
            if not values:
                continue
            marks = ", ".join("?" for _ in values)
            clauses.append(f'"{col}" IN ({marks})')
            params.extend(_text(v) for v in values)
        return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def _text(value: str | int | float) -> str:
    # dimensions are text: a model may send 1001 or 202401.0 for "1001" / "202401"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


_default: Catalog | None = None
_default_lock = threading.Lock()


def catalog() -> Catalog:
    """The catalog of the bundled ``data/`` folder (created on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Catalog()
        return _default
