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
    "period: 202403", "company 2001's"): a code with a digit, or a capitalised name — never a
    lower-case word ("which company had …", "over all periods": no value)."""
    m = re.search(rf"(?i:\b{re.escape(key.replace('_', ' '))}s?)\b\s*(?:[:=#]\s*|"
                  r"(?i:no)\.?\s+)?([A-Za-z]*\d[\w.-]*|[A-Z][\w.-]*)", question)
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
    """``call`` with its object arguments (see the module) filled with the keys the question
    gives values for, when it gives any: an argument the call left out or empty takes them,
    one it wrote takes the question's value for each key it says, and loses a lower-case
    word copied from right after a key ("which company had …": "had"); and a "which company
    had the highest …" groups by that key (:func:`_grouping`)."""
    spec = next((t for t in tools if t.name == call.name), None)
    if spec is None or not isinstance(call.arguments, Mapping):
        return call
    added: dict[str, Any] = {}
    for name, keys in _object_arguments(spec).items():
        # a key a sibling's same argument shows ("period" of a query's filters) is one too
        examples = {**{k: v for t in tools if t.name != spec.name
                       for k, v in _examples(t, name).items()}, **_examples(spec, name)}
        keys = list(dict.fromkeys([*keys, *examples]))
        said: dict[str, Any] = {k: v for k in keys if (v := _value(k, question) or _said_month(
            examples.get(k), question)) is not None}
        said.update(_by_shape(examples, said, question))
        written = call.arguments.get(name)
        if isinstance(written, Mapping) and written:
            said = {**{k: v for k, v in written.items() if k not in said
                       and not _copied_word(k, v, question)}, **said}
            if said == dict(written):
                continue
            added[name] = said or None
        elif said:
            added[name] = said
    added.update(_grouping(spec, call, question, [k for n in _object_arguments(spec)
                                                  for k in _keys_of(tools, n)]))
    added.update(_operands(spec, call, question))
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    count = people(question)
    for name, schema in props.items():  # "me and my wife": passengers 2
        if (count is not None and name.lower() in _HEADS and name not in call.arguments
                and isinstance(schema, Mapping) and schema.get("type") == "integer"):
            added[name] = count
    if not added:
        return call
    return dataclasses.replace(call, arguments={**call.arguments, **added})


def _keys_of(tools: Sequence[ToolSpec], name: str) -> list[str]:
    """The keys any of ``tools`` shows in the example of its argument ``name``."""
    return list(dict.fromkeys(k for t in tools for k in _examples(t, name)))


def _copied_word(key: str, value: Any, question: str) -> bool:
    """Whether ``value`` is the lower-case word ``question`` says right after ``key`` ("which
    company had …": "had"), copied as its value by a small model: no value at all."""
    return isinstance(value, str) and value.isalpha() and value.islower() and bool(re.search(
        rf"\b{re.escape(key.replace('_', ' '))}s?\s+{re.escape(value)}\b", question, re.I))


_CODE = re.compile(r"(?<![\w.,/-])\d{3,}(?![\w/-]|[.,]\d)")
_YEAR_SAID = re.compile(r"\b(?:in|during|since|until|year|of)\s+$", re.I)


def _by_shape(examples: Mapping[str, tuple[str, bool]], said: Mapping[str, Any],
              question: str) -> dict[str, str]:
    """The keys whose example is a code of digits ("company": "1001", "period": "202401")
    and that the question gives no value after their name, each with the one code of the
    question written the example's way (as many digits; a year and month for a period's)
    that no other key took: "what did 1002 book in 202403?" is company 1002, period 202403.
    A month said in words ("March 2024") holds no code, nor does a year after "in"."""
    from reactloop.models._months import _SAID, in_format

    text = _SAID.sub(" ", question)
    taken = {str(v) for v in said.values()}
    codes = [m.group(0) for m in _CODE.finditer(text) if m.group(0) not in taken and not (
        re.fullmatch(r"(?:19|20)\d\d", m.group(0)) and _YEAR_SAID.search(text[:m.start()]))]
    out: dict[str, str] = {}
    for key, (example, _) in examples.items():
        if key in said or not example.isdigit():
            continue
        period = in_format(example, 2000, 1) is not None
        fits = [c for c in codes if len(c) == len(example) and (
            not period or in_format(c, 2000, 1) is not None)]
        if len(fits) == 1 and fits[0] not in out.values():
            out[key] = fits[0]
    return out


_WHICH = re.compile(r"\b(?:which|what)\s+(\w+?)(?:s|es)?\b", re.I)
_EXTREME = re.compile(r"\b(?:highest|lowest|most|least|biggest|smallest|largest|greatest|"
                      r"fewest|top|best|worst|max(?:imum)?|min(?:imum)?|more|less)\b", re.I)


_ASKED_OF = re.compile(r"\s*((?:(?!\b(?:in|for|of|across|over|according|from|during|between|"
                       r"among|at|by|per|than)\b)[\w\s'])*)", re.I)
"""The words after "the highest" up to the scope ("the highest total amount" in …; "the least
on cleaning" names rows)."""
_OVERALL = frozenset({"total", "totals", "amount", "amounts", "sum", "value", "values", "figure",
                      "figures", "number", "overall", "balance", "combined", "result", "the",
                      "reported", "booked", "one", "was", "is", "has", "had"})


def _grouping(spec: ToolSpec, call: ToolCall, question: str, keys: Sequence[str]
              ) -> dict[str, Any]:
    """A list argument that groups (``group_by``) set to the key a question asks the
    extreme of ("which company had the highest total?": ``["company"]``), so that the
    result holds one summed record per company; nothing otherwise."""
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    found = next((m.group(1).lower() for m in _WHICH.finditer(question)
                  if m.group(1).lower() in keys), None)
    extreme = _EXTREME.search(question)
    asked = _ASKED_OF.match(question[extreme.end():]) if extreme else None
    if found is None or asked is None or any(w.lower() not in _OVERALL for w in asked.group(
            1).split()):  # "the most personnel expenses": those rows, not every row
        return {}
    for name, schema in props.items():
        types = [schema.get("type"), *(a.get("type") for a in schema.get("anyOf") or ()
                                       if isinstance(a, Mapping))] if isinstance(
            schema, Mapping) else []
        if "group" in name.lower() and "array" in types and call.arguments.get(name) != [found]:
            return {name: [found]}
    return {}


_OPERAND = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.,])\d+(?:\.\d+)?(?![\w])")


def _operands(spec: ToolSpec, call: ToolCall, question: str) -> dict[str, Any]:
    """The two numbers of a two-number tool's call (``multiply(a, b)``) that wrote one of the
    question's two numbers twice ("365 multiplied by 24": ``24, 24``): the question's two, in
    its order; nothing otherwise."""
    from reactloop._amounts import words_to_digits

    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    names = list(props)
    if len(names) != 2 or not all(isinstance(props[n], Mapping) and props[n].get("type") in (
            "number", "integer") for n in names):
        return {}
    a, b = (call.arguments.get(n) for n in names)
    said = list(dict.fromkeys(float(n.replace(",", "")) for n in _OPERAND.findall(
        words_to_digits(question))))
    if a is None or a != b or len(said) != 2 or float(a) not in said:
        return {}
    if re.search(r"\d\s+(?:from|into)\s+\d", words_to_digits(question)):
        said.reverse()  # "subtract 487 from 2003": 2003 first
    integer = all(props[n].get("type") == "integer" or v.is_integer() for n, v in zip(
        names, said, strict=True))
    return {n: int(v) if integer and v.is_integer() else v for n, v in zip(names, said, strict=True)}


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
