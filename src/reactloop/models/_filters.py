"""Filters a question says, for a tool's object argument (a pure function used by
:mod:`reactloop.models.local` on a guided call): an argument documented with an example object
(``filters: dimension values to keep, e.g. {"company": "1001", "period": "202401"}``) takes
the values the question gives for those keys ("what did company 2001 spend in period
202403?": ``{"company": "2001", "period": "202403"}``); a key whose example is a year and
month (``"period": "202401"``) takes a month said in words with a year ("in January 2024":
``202401``, :mod:`reactloop.models._months`), written the example's way. The keys another tool
shows for its argument of the same name count too (a comparison's filters show only
``company``, the query's beside it also ``period``). A small model never writes such an
object well, and without it a table's first rows answer for the wrong company.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from reactloop.messages import ToolCall, ToolSpec

__all__ = ["said_filters"]

_KEY = re.compile(r"[\"'](\w+)[\"']\s*:")
"""A key of the example object a description shows: ``{"company": "1001"}``."""
_EXAMPLE = re.compile(r"[\"'](\w+)[\"']\s*:\s*(\[?)\s*[\"']([^\"']*)[\"']")
"""A key of the example object with its (first) example value, and whether it is a list."""


def _object_arguments(spec: ToolSpec) -> dict[str, list[str]]:
    """The object arguments of ``spec`` with the keys their description's example shows."""
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    out = {}
    for name, p in props.items():
        if not isinstance(p, Mapping):
            continue
        types = [p.get("type"), *(a.get("type") for a in p.get("anyOf") or ()
                                  if isinstance(a, Mapping))]
        keys = list(dict.fromkeys(_KEY.findall(str(p.get("description") or ""))))
        if "object" in types and keys:
            out[name] = keys
    return out


def _value(key: str, question: str) -> str | None:
    """The value ``question`` gives for ``key``, said right after it ("company 2001",
    "period: 202403", "company 2001's"): a code with a digit, or a capitalised name."""
    m = re.search(rf"\b{re.escape(key.replace('_', ' '))}s?\s*(?:[:=#]\s*|no\.?\s+)?"
                  r"([A-Za-z]*\d[\w.-]*|[A-Z][\w.-]*)", question, re.I)
    if m is None:
        return None
    return re.sub(r"'s$|[.]$", "", m.group(1))


def _examples(spec: ToolSpec, name: str) -> dict[str, tuple[str, bool]]:
    """The example value (and whether a list) of each key of ``spec``'s argument ``name``."""
    p = (spec.parameters.get("properties") or {}).get(name) or {}
    return {k: (v, bool(lst)) for k, lst, v in _EXAMPLE.findall(str(p.get("description") or ""))}


def _said_month(example: tuple[str, bool] | None, question: str) -> str | list[str] | None:
    """The months ``question`` says in words with a year, written as ``example`` writes a
    period; several only where the example is a list."""
    from reactloop.models._months import in_format, spoken_months

    if example is None:
        return None
    months = [v for y, m in spoken_months(question) if (v := in_format(example[0], y, m))]
    if not months or (len(months) > 1 and not example[1]):
        return None
    return months if example[1] and len(months) > 1 else months[0]


def said_filters(call: ToolCall, tools: Sequence[ToolSpec], question: str) -> ToolCall:
    """``call`` with its object arguments (see the module) that it left out or left empty
    filled with the keys the question gives values for, when it gives any."""
    spec = next((t for t in tools if t.name == call.name), None)
    if spec is None or not isinstance(call.arguments, Mapping):
        return call
    added: dict[str, Any] = {}
    for name, keys in _object_arguments(spec).items():
        if call.arguments.get(name):
            continue
        # a key a sibling's same argument shows ("period" of a query's filters) is one too
        examples = {**{k: v for t in tools if t.name != spec.name
                       for k, v in _examples(t, name).items()}, **_examples(spec, name)}
        keys = list(dict.fromkeys([*keys, *examples]))
        said: dict[str, Any] = {k: v for k in keys if (v := _value(k, question) or _said_month(
            examples.get(k), question)) is not None}
        if said:
            added[name] = said
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    count = people(question)
    for name, schema in props.items():  # "me and my wife": passengers 2
        if (count is not None and name.lower() in _HEADS and name not in call.arguments
                and isinstance(schema, Mapping) and schema.get("type") == "integer"):
            added[name] = count
    if not added:
        return call
    return dataclasses.replace(call, arguments={**call.arguments, **added})


_HEADS = frozenset({"passengers", "people", "persons", "travellers", "travelers", "guests",
                    "adults", "tickets", "seats", "pax", "party_size", "headcount"})
"""An integer argument that counts people (how many travel, dine, stay)."""
_NUMBER_WORDS = {w: n for n, w in enumerate(["zero", "one", "two", "three", "four", "five", "six",
                                               "seven", "eight", "nine", "ten", "eleven",
                                               "twelve"])}
_COUNTED = re.compile(r"\b(\d{1,2}|" + "|".join(list(_NUMBER_WORDS)[2:]) + r")\s+(?:of\s+us|"
                      r"people|persons|passengers|travell?ers|adults|guests|tickets|seats)\b|"
                      r"\b(?:for|we'?re|we\s+are|party\s+of|family\s+of|group\s+of)\s+"
                      r"(\d{1,2}|" + "|".join(list(_NUMBER_WORDS)[2:]) + r")\b(?!\s*[:.]\d)", re.I)
_TWO = re.compile(r"\b(?:both\s+of\s+us|the\s+two\s+of\s+us|(?:me|i)\s+and\s+my\s+\w+|my\s+"
                  r"(?:wife|husband|partner|girlfriend|boyfriend|friend|mum|mom|dad|son|daughter|"
                  r"brother|sister|colleague)\s+and\s+(?:i|me)\b)", re.I)


def people(question: str) -> int | None:
    """How many people the question says travel (or dine, or stay): "for 3 adults", "the two
    of us", "me and my wife", "a family of four"; None when it says no count."""
    m = _COUNTED.search(question)
    if m:
        said = (m.group(1) or m.group(2)).lower()
        return int(said) if said.isdigit() else _NUMBER_WORDS[said]
    return 2 if _TWO.search(question) else None
