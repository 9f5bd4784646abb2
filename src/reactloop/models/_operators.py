"""Which tool an arithmetic expression of a question goes to, by its operators: a pure
function the embedded model's guidance (:func:`reactloop.models._fit.preferred`) applies to
the ranked offer.

A tool that takes two numbers (``add``, ``divide``) does one operation of its kind. An
expression is its tool's only when it is exactly that one operation ("17 + 25": ``add``);
an expression of several operators ("1260/4 + 15", "7*8+2"), a power, or one operation of
another kind ("300 / 4" is no ``add``) goes whole to a tool that takes an expression
(``calculate``), never in parts to a two-number tool. Operators are read as typed, chained
operands included (in "1260/4 + 15" the 4 is both the divisor and the left of the ``+``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from reactloop.messages import ToolSpec

__all__ = ["OP_WORDS", "THEN_OP", "expression_operators", "lacks_number", "spoken_arithmetic", "spoken_powers",
           "spoken_splits", "whole_expression"]

_EXPRESSION = re.compile(r"[-(√]*\d[\d.,\s]*(?:(?:\*\*|[-+*/×÷^%])[\s(]*\d[\d.,]*\s*\)*\s*)+")
_OPERATOR = re.compile(r"\*\*|[-+*/×÷^%]")
_NOT_EXPRESSION = re.compile(r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}:\d{2}\b|\b\d{1,2}/\d{1,2}/\d{4}\b"
                             r"|[\w.-]*[a-z][\w.-]*/[\w./-]+", re.I)
"""Dates, times of day and paths ("data/sales.csv") hold no operator."""
_KINDS: Mapping[str, str] = {"+": "+", "-": "-", "*": "*", "×": "*", "/": "/", "÷": "/",
                             "**": "**", "^": "**", "%": "%"}
_TOOL_KINDS: Mapping[str, str] = {
    "add": "+", "sum": "+", "plus": "+", "subtract": "-", "minus": "-", "difference": "-",
    "multiply": "*", "product": "*", "times": "*", "divide": "/", "quotient": "/",
    "power": "**", "pow": "**", "exponent": "**", "modulo": "%", "mod": "%", "remainder": "%",
}


_SPOKEN: Mapping[str, str] = {"plus": "+", "minus": "-", "times": "*", "multiplied by": "*",
                              "divided by": "/", "over": "/", "x": "*"}


def spoken_arithmetic(question: str) -> list[str]:
    """The arithmetic ``question`` says partly in words, written as typed: "1260 divided by 4
    plus 15" is ``1260 / 4 + 15``, "45 times 3 minus 10" ``45 * 3 - 10``, "the sum of 3, 4
    and 5" ``3 + 4 + 5``, numbers said in words in digits ("ninety nine times eleven": ``99 *
    11``), and the percentages, multiples and averages of :mod:`reactloop._amounts` first."""
    from reactloop._amounts import said_arithmetic, words_to_digits
    from reactloop._ranking import LISTED_OPERANDS, SPOKEN_ARITHMETIC

    out = said_arithmetic(question)  # "increase 250 by 8%", "twice as much as 437"
    question = words_to_digits(question)  # "ninety nine times eleven": 99 times 11
    for m in LISTED_OPERANDS.finditer(question):  # "the sum of 3, 4 and 5": 3 + 4 + 5
        op = " * " if m.group(1).lower().startswith(("mult", "prod")) else " + "
        numbers = re.findall(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?", m.group(2))
        out.append(op.join(n.replace(",", "") for n in numbers))
    for m in SPOKEN_ARITHMETIC.finditer(_NOT_EXPRESSION.sub(" ", question)):
        if out and re.match(r"\s*(?:%|per\s*cent)", question[m.end():], re.I):
            continue  # "250 plus 18 percent" is no "250 + 18"
        text = re.sub(r"\s+(plus|minus|times|multiplied\s+by|divided\s+by|over|x)\s+",
                      lambda w: f" {_SPOKEN[' '.join(w.group(1).lower().split())]} ", m.group(0),
                      flags=re.I)
        text = re.sub(r",(?!\d{3})|\s+(?:and\s+)?then\b", "", text)  # "…by 12, (then) plus 7"
        out.append(" ".join(re.sub(r"\s*([-+*/×÷])\s*", r" \1 ", text).split()))
    return out


_AMOUNT = re.compile(r"(?<![\w.,:])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w:]|[.,]\d)(\s*(?:%|per\s*cent))?",
                     re.I)


def spoken_splits(question: str) -> list[str]:
    """A total shared by a number of people, written as an expression: "dinner came to 184
    euros, plus a 20 euro tip, split 8 ways" is ``(184 + 20) / 8``; a tip or tax said as a
    percentage raises the total ("96 with a 15% tip, between 4 of us": ``96 * 115 / 100 / 4``).
    Empty when the question shares nothing or says no amount."""
    from reactloop._ranking import SPOKEN_SPLIT

    m = SPOKEN_SPLIT.search(question)
    if m is None:
        return []
    group = next(i for i, g in enumerate(m.groups(), 1) if g)
    people, (start, end) = m.group(group), m.span(group)
    text = _NOT_EXPRESSION.sub(" ", question[:start] + " " + question[end:])
    amounts: list[str] = []
    percents: list[str] = []
    for a in _AMOUNT.finditer(text):
        number = a.group(1).replace(",", "") + (a.group(2) or "")
        (percents if a.group(3) else amounts).append(number)
    if not amounts:
        return []
    total = amounts[0] if len(amounts) == 1 else f"({' + '.join(amounts)})"
    for p in percents:
        total = f"{total} * {100 + float(p):g} / 100"
    return [f"{total} / {people}"]


def expression_operators(question: str) -> list[list[str]]:
    """The operators of each arithmetic expression ``question`` types or says partly in words
    ("1260/4 + 15", "1260 divided by 4 plus 15": ``[["/", "+"]]``), each as its kind (``×``
    is ``*``, ``^`` is ``**``); a sign before the first number is none."""
    text = _NOT_EXPRESSION.sub(" ", question)
    spoken = spoken_arithmetic(question)
    if spoken:
        text = " ; ".join(spoken)
    out = []
    for m in _EXPRESSION.finditer(text):
        body = m.group(0).strip().lstrip("-(√ ")
        ops = [_KINDS[o] for o in _OPERATOR.findall(body)]
        if ops:
            out.append(ops)
    return out


def _numeric(spec: ToolSpec) -> bool:
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    kinds = [p.get("type") for p in props.values() if isinstance(p, Mapping)]
    return bool(kinds) and all(k in ("number", "integer") for k in kinds)


def _kind(spec: ToolSpec) -> str | None:
    """The one operation a two-number tool does, by its name (``add``: ``+``), or None."""
    from reactloop._ranking import terms

    found = {_TOOL_KINDS[w] for w in terms(spec.name) if w in _TOOL_KINDS}
    return found.pop() if len(found) == 1 else None


def _takes_text(spec: ToolSpec, question: str) -> bool:
    from reactloop._ranking import evident

    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    return not spec.internal and not _numeric(spec) and evident(spec, question) and any(
        isinstance(p, Mapping) and p.get("type") == "string" for p in props.values())


def whole_expression(tools: Sequence[ToolSpec], question: str) -> list[ToolSpec]:
    """``tools`` without the two-number tools an expression of ``question`` is not exactly
    one operation of (see the module), when another of ``tools`` takes a text argument that
    fits the question (an expression): "(3 + 4) * (10 - 6)" and "1260/4 + 15" go whole to
    ``calculate``, "17 + 25" may go to ``add``."""
    found = expression_operators(question)
    from reactloop._amounts import words_to_digits
    from reactloop._ranking import SPOKEN_POWER

    powered = SPOKEN_POWER.search(words_to_digits(question))  # "twelve squared"
    if not found and not powered:
        return list(tools)
    if not any(_takes_text(t, question) for t in tools):
        return list(tools)
    single = found[0][0] if len(found) == 1 and len(found[0]) == 1 else None
    if powered and not found:
        single = "**"  # "2 to the power of 10": a power tool's, or the expression's
    return [t for t in tools if not _numeric(t) or (single is not None and _kind(t) == single)]


_NUMBER_WORD = re.compile(r"\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
                          r"twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|"
                          r"twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|"
                          r"thousand|million|billion|half|dozen|pi)\b", re.I)


def lacks_number(spec: ToolSpec, question: str) -> bool:
    """Whether ``spec`` takes numbers only (``subtract``, ``km_to_miles``; not an id a search
    finds) and ``question`` gives none, in digits or in words: "What's the difference between
    a terminal and a gate?" is no subtraction, whatever word it shares with one."""
    from reactloop.models._shaping import is_id

    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    return (not spec.internal and _numeric(spec) and not any(is_id(k) for k in props)
            and not any(c.isdigit() for c in question) and not _NUMBER_WORD.search(question))


OP_WORDS = {"plus": "+", "add": "+", "minus": "-", "less": "-", "times": "*", "multiplied": "*",
             "divided": "/", "over": "/"}
THEN_OP = re.compile(r"\s*,?\s*(plus|add|minus|less|times|multiplied\s+by|divided\s+by|over)\s+"
                      r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\d.]|\s+(?:squared|cubed|to\b))",
                      re.I)
"""An operation that goes on after a power said in words ("815 squared minus 799")."""


def spoken_powers(question: str) -> list[str]:
    """The powers ``question`` says in words, written as expressions: "2 to the power of 5"
    is ``2**5``, "10 raised to the power 3" ``10**3``, "7 squared" ``7**2``."""
    out = []
    from reactloop._amounts import words_to_digits
    from reactloop._ranking import EXPONENT_WORDS, SPOKEN_POWER

    question = words_to_digits(question)  # "twelve squared plus five": 12**2 + 5
    for m in SPOKEN_POWER.finditer(question):
        if m.group(1):
            out.append(f"{m.group(1)}**{m.group(2)}")
        elif m.group(5):  # "3 to the 4th power"
            out.append(f"{m.group(5)}**{m.group(6)}")
        elif m.group(7):  # "14 to the fourth power", "3 to the power of four"
            out.append(f"{m.group(7)}**{EXPONENT_WORDS[m.group(8).lower()]}")
        else:
            out.append(f"{m.group(3)}**{2 if m.group(4).lower() == 'squared' else 3}")
        while more := THEN_OP.match(question, m.end()):  # "815 squared minus 799"
            out[-1] += f" {OP_WORDS[more.group(1).lower().split()[0]]} {more.group(2).replace(',', '')}"
            m = more
    return out
