"""Argument matchers and text normalisation: small pure functions the scorers share.

A matcher answers one question — does this value satisfy the expectation? — and, when it does
not, says why in a few words (``"got 123, want 1234"``), because a report that only says
"failed" sends the user to the raw logs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["MATCHER_KEYS", "Matcher", "normalize", "show"]

MatcherKind = Literal["equals", "regex", "approx", "text", "contains", "one_of", "ignore"]
MATCHER_KEYS: tuple[str, ...] = ("equals", "regex", "approx", "text", "contains", "one_of",
                                 "ignore")
"""The keys that make a YAML mapping a matcher instead of a literal value."""

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_SPACES = re.compile(r"\s+")
_EDGE_PUNCT = " \t\n.,;:!?\"'`()[]{}"


def normalize(text: str) -> str:
    """Case-folded, whitespace collapsed, thousands separators and surrounding punctuation
    removed: ``" The answer: 1,234. "`` → ``"the answer: 1234"``."""
    text = _THOUSANDS.sub("", str(text))
    text = _SPACES.sub(" ", text).strip(_EDGE_PUNCT).casefold()
    return text


def show(value: Any, limit: int = 60) -> str:
    """A short, readable rendering of a value for reasons."""
    text = repr(value) if isinstance(value, str) else _json_like(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_like(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value).lower() if value is not None else "null"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.replace(",", "").strip())
        except ValueError:
            return None
    return None


def _equal(got: Any, want: Any) -> bool:
    # 17 == 17.0 (JSON does not distinguish), but True is not 1
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        return (isinstance(got, (int, float)) and not isinstance(got, bool)
                and float(got) == float(want))
    if isinstance(want, Mapping) and isinstance(got, Mapping):
        return set(got) == set(want) and all(_equal(got[k], want[k]) for k in want)
    if isinstance(want, (list, tuple)) and isinstance(got, (list, tuple)):
        return len(got) == len(want) and all(_equal(g, w) for g, w in zip(got, want, strict=True))
    return bool(got == want) and type(got) is type(want)


@dataclass(frozen=True, slots=True)
class Matcher:
    """One expectation on a value.

    Kinds: ``equals`` (exact; numbers compare numerically), ``regex`` (``re.search`` on the
    value as text), ``approx`` (a number within ``tol`` absolute or ``rel`` relative),
    ``text`` (equal after :func:`normalize`), ``contains`` (a substring after normalising),
    ``one_of`` (equal to any of a list), ``ignore`` (anything, even absent).
    """

    kind: MatcherKind
    value: Any = None
    tol: float = 1e-9
    """``approx``: absolute tolerance."""
    rel: float = 0.0
    """``approx``: relative tolerance."""

    def check(self, got: Any) -> str | None:
        """None when ``got`` matches, else the reason it does not."""
        if self.kind == "ignore":
            return None
        ok = self._matches(got)
        return None if ok else f"got {show(got)}, want {self.describe()}"

    def _matches(self, got: Any) -> bool:
        kind, want = self.kind, self.value
        if kind == "equals":
            return _equal(got, want)
        if kind == "regex":
            return re.search(want, got if isinstance(got, str) else _json_like(got)) is not None
        if kind == "approx":
            x = _number(got)
            return x is not None and math.isclose(x, float(want), rel_tol=self.rel,
                                                  abs_tol=self.tol)
        if kind == "text":
            return normalize(_text(got)) == normalize(_text(want))
        if kind == "contains":
            return normalize(_text(want)) in normalize(_text(got))
        if kind == "one_of":
            return any(_equal(got, w) for w in want)
        raise AssertionError(kind)  # pragma: no cover - kinds are validated on load

    def describe(self) -> str:
        """The expectation in a few characters, e.g. ``1234``, ``~6.21±0.01``, ``/^a.*/``."""
        kind, want = self.kind, self.value
        if kind == "equals":
            return show(want)
        if kind == "regex":
            return f"/{want}/"
        if kind == "approx":
            tol = f"±{_json_like(self.tol)}" if self.tol > 1e-9 else ""
            rel = f"±{self.rel:.0%}" if self.rel else ""
            return f"~{_json_like(float(want))}{tol}{rel}"
        if kind == "text":
            return f"{show(want)} (any case)"
        if kind == "contains":
            return f"text containing {show(want)}"
        if kind == "one_of":
            return "one of " + ", ".join(show(w) for w in want)
        return "anything"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else _json_like(value)
