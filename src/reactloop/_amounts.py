"""Arithmetic people say rather than type, written as the expression a calculator takes: a
number said in words ("seven hundred and twelve": ``712``), an amount raised or lowered by a
percentage ("increase 250 by 8%": ``250 * 108 / 100``; "15% off 1250", "85 with a 12 percent
discount": ``1250 * 85 / 100``; "64 and a 20% tip": ``64 * 120 / 100``), a multiple or a
fraction of an amount ("twice as much as 437": ``437 * 2``; "three quarters of 96": ``96 * 3 /
4``) and the average of numbers listed ("the average of 12, 18 and 27": ``(12 + 18 + 27) / 3``).

Pure functions of the question's text, imported by the ranking (a signal for the tool that
evaluates an expression) and by the embedded model's guidance (the expression an argument may
copy); this module imports nothing of reactloop's.
"""

from __future__ import annotations

import re
from itertools import pairwise

__all__ = ["said_arithmetic", "words_to_digits"]

_UNITS = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
     "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
     "nineteen"])}
_TENS = {w: 10 * i for i, w in enumerate(
    ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"])
    if w != "_"}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6,
           "hundered": 100, "hundread": 100, "thousend": 1000}  # and as typed in a hurry
_TENS.update({"fourty": 40, "ninty": 90})  # typed as often as the right spelling
_WORD = "|".join(sorted([*_UNITS, *_TENS, *_SCALES], key=len, reverse=True))
_RUN = re.compile(rf"\b(?:{_WORD})(?:(?:\s+|-|(?:(?<=hundred)|(?<=hundered)|(?<=thousand)|(?<=million))\s+and\s+|)"
                  rf"(?:{_WORD}))*\b", re.I)
"""A number said in words, its words apart, hyphenated or run together ("fivehundred")."""


def _value(words: list[str]) -> int | None:
    """The number ``words`` say, or None when they are no one number ("one two")."""
    for a, b in pairwise(words):
        if b not in _SCALES and (a in _UNITS or (a in _TENS and (b in _TENS or _UNITS[b] >= 10))):
            return None
    total = current = 0
    for w in words:
        if w in _UNITS or w in _TENS:
            current += _UNITS.get(w, 0) + _TENS.get(w, 0)
        elif _SCALES[w] == 100:
            current = (current or 1) * 100
        else:  # thousand, million
            total += (current or 1) * _SCALES[w]
            current = 0
    return total + current


def words_to_digits(text: str) -> str:
    """``text`` with each number said in words written in digits ("ninety nine times eleven":
    ``99 times 11``; "seven hundred and twelve": ``712``); a lone "one" (``which one``) and a
    lone "zero" stay words."""
    def digits(m: re.Match[str]) -> str:
        words = re.findall(_WORD, m.group(0).lower())  # "and" is no number word
        if len(words) == 1 and words[0] in ("one", "zero"):
            return m.group(0)
        value = _value(words)
        return m.group(0) if value is None else str(value)

    return _RUN.sub(digits, text)


_N = r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
_MONEY = r"(?:[$€£]\s*)?"
_PCT = rf"{_N}\s*(?:%|per\s*cent\b|pct\b)"
_UP = (r"(?:increase[sd]?|rais(?:e|es|ed)|rise[sn]?|rose|jump(?:s|ed)?|climb(?:s|ed)?|"
       r"grow(?:s|n)?|grew|bump(?:ed)?|add(?:ed)?|mark(?:ed)?\s+up)")
_DOWN = (r"(?:decrease[sd]?|reduc(?:e|es|ed)|lower(?:ed)?|cut|drop(?:ped)?|discount(?:ed)?|"
         r"take|took|knock(?:ed)?|subtract(?:ed)?|fall(?:s|en)?|fell|shr[iau]nk(?:s)?)")
_PLUS_WORDS = r"(?:plus|\+|more|higher|up|on\s+top|extra|added)"
_MINUS_WORDS = r"(?:minus|-|less|lower|down|off|discount(?:ed)?|reduced|cheaper)"
_AFTER = r"(?:\s*(?:dollars?|euros?|pounds?|usd|eur|gbp|bucks))?"
_FORMS = [
    # "increase 250 by 8%", "cut 1250 by 15 percent"
    (re.compile(rf"\b({_UP}|{_DOWN})\s+(?:the\s+\w+\s+(?:of\s+)?)?{_MONEY}{_N}{_AFTER}\s+by\s+{_PCT}",
                re.I), "verb"),
    # "250 plus 18 percent", "1250 minus 15%", "250 increased by 8%", "85 with 10% off"
    (re.compile(rf"{_MONEY}(?<![\w.,]){_N}{_AFTER}\s+(?:(?:(?:is|was|gets|got|goes|go|went|will\s+go|would\s+go)\s+)?({_UP}|{_DOWN}|"
                rf"{_PLUS_WORDS}|{_MINUS_WORDS})\s+(?:by\s+)?|with\s+(?:a\s+)?|and\s+(?:a\s+)?|\+\s*|-\s*)"
                rf"{_PCT}(?:\s+({_UP}|{_DOWN}|{_PLUS_WORDS}|{_MINUS_WORDS}|tip|tax|vat|service|"
                rf"surcharge|markup|raise|fee|interest|gratuity))?", re.I), "after"),
    # "15% off 1250", "a 12 percent discount on 85", "8% more than 250", "a 20% tip on 64"
    (re.compile(rf"{_PCT}\s+(?:pay\s+|salary\s+|price\s+|rent\s+|wage\s+)?(?:(?:{_UP}|{_DOWN}|{_PLUS_WORDS}|{_MINUS_WORDS}|tip|tax|vat|"
                rf"service\s+charge|surcharge|markup|raise|fee|interest|gratuity|reduction|"
                rf"increase|decrease)(?:\s+than)?)\s+(?:on|of|to|for|from|off|than)?\s*(?:the\s+|a\s+|an\s+|"
                rf"my\s+|our\s+|his\s+|her\s+|their\s+)?(?:[a-z']+\s+){{0,2}}?(?:of\s+)?{_MONEY}{_N}(?![\d.,]\d)",
                re.I), "before"),
    # "rent is 1,150 and it goes up by 3%": a change of the amount said in the same clause
    (re.compile(rf"{_MONEY}(?<![\w.,]){_N}{_AFTER}(?:\s+[a-z']+){{1,6}}?\s+({_UP}|{_DOWN}|{_PLUS_WORDS}|"
                rf"{_MINUS_WORDS})(?:\s+(?:up|down))?\s+by\s+{_PCT}", re.I), "clause"),
    # "the bill came to 64 and i want to leave a 20% tip"
    (re.compile(rf"{_MONEY}(?<![\w.,]){_N}{_AFTER}\b[^%?!.]*?\b{_PCT}\s+(tip|tax|vat|"
                rf"service\s+charge|surcharge|markup|gratuity|discount|off)\b", re.I), "tail"),
    # "dinner was 86.40 and we want to tip 18 percent": the word before the percentage
    (re.compile(rf"{_MONEY}(?<![\w.,]){_N}{_AFTER}\b[^%?!.]*?\b(tip|tax|vat|surcharge|markup|"
                rf"gratuity|discount)\s+(?:(?:is|was|of|at|by|would\s+be|will\s+be)\s+)?(?:a\s+|an\s+)?{_PCT}",
                re.I), "named"),
]
_CHANGE_ASKED = re.compile(r"\bhow\s+much\s+(?:do|did|would|will|can|could|am|are|is)\s+(?:i|we|you|"
                           r"they)\s+(?:save|saving|get\s+off|knock\s+off)\b|\bhow\s+much\s+(?:is|"
                           r"would\s+be|will\s+be)\s+the\s+(?:saving|savings|discount|tip|tax|vat|"
                           r"raise|increase|surcharge|fee|interest)\b|\bwhat(?:'s|\s+is|\s+are)\s+(?:the|"
                           r"my|our)\s+(?:saving|savings)\b", re.I)
"""A question for the change a percentage makes, not the amount after it ("how much do I
save?", "how much is the tip?")."""
_LOWERS = re.compile(rf"^(?:{_DOWN}|{_MINUS_WORDS}|reduction|decrease)$", re.I)


def _plain(number: str) -> str:
    return number.replace(",", "")


def _percent_changes(text: str) -> list[str]:
    out = []
    for rx, form in _FORMS:
        for m in rx.finditer(text):
            if form == "verb":
                word, amount, pct = m.group(1), m.group(2), m.group(3)
            elif form == "after":
                amount, word, pct = m.group(1), m.group(2) or m.group(4) or m.group(0), m.group(3)
                if m.group(2) is None and m.group(4) is None and "-" not in m.group(0)[
                        len(m.group(1)):] and not re.search(r"\b(?:with|and)\b", m.group(0), re.I):
                    continue
                if m.group(2) is None and m.group(4) is None:
                    word = "-" if re.search(rf"{_N}\s*-", m.group(0)) else "+"
            elif form == "before":
                pct, amount = m.group(1), m.group(2)
                word = m.group(0)[m.group(0).lower().find("%") + 1:] if "%" in m.group(0) else \
                    re.sub(rf"^{_PCT}\s+", "", m.group(0), flags=re.I)
                word = word.split()[0] if word.split() else "+"
            elif form == "clause" or form == "named":
                amount, word, pct = m.group(1), m.group(2), m.group(3)
            else:
                amount, pct, word = m.group(1), m.group(2), m.group(3)
            lower = bool(_LOWERS.match(word.strip().lower())) or word.strip() == "-" or (
                word.strip().lower() == "off")
            if form == "after" and m.group(4) and _LOWERS.match(m.group(4)):
                lower = True
            share = 100 - float(_plain(pct)) if lower else 100 + float(_plain(pct))
            if _CHANGE_ASKED.search(text):  # "how much do I save": the change itself
                share = float(_plain(pct))
            out.append(f"{_plain(amount)} * {share:g} / 100")
        if out:  # the first form that reads the question reads it whole
            break
    return list(dict.fromkeys(out))


_FRACTION = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4,
             "fifth": 5, "fifths": 5, "tenth": 10, "tenths": 10, "eighth": 8, "eighths": 8}
_FRACTIONS = re.compile(rf"(?<![\w.])(\d+)\s+({'|'.join(_FRACTION)})\s+of\s+(?:the\s+)?{_MONEY}{_N}",
                        re.I)
_MULTIPLE = re.compile(rf"\b(twice|double|triple|(\d+(?:\.\d+)?)\s+times)\s+(?:as\s+\w+\s+as|"
                       rf"the\s+(?:amount|size|number|price|value)\s+of|that\s+of)\s+{_MONEY}{_N}",
                       re.I)
_MEAN = re.compile(rf"\b(?:average|mean)\s+(?:of\s+)?(?:the\s+numbers\s+)?({_N}(?:\s*,\s*{_N})*"
                   rf",?\s+(?:and|&)\s+{_N})(?![\w.])", re.I)


def _shares(text: str) -> list[str]:
    out = []
    for m in _FRACTIONS.finditer(text):  # "3 quarters of 96" (said "three quarters of 96")
        out.append(f"{_plain(m.group(3))} * {m.group(1)} / {_FRACTION[m.group(2).lower()]}")
    for m in _MULTIPLE.finditer(text):  # "twice as much as 437", "3 times the price of 12"
        word = m.group(1).lower()
        factor = m.group(2) or ("3" if word == "triple" else "2")
        out.append(f"{_plain(m.group(3))} * {factor}")
    for m in _MEAN.finditer(text):  # "the average of 12, 18 and 27"
        numbers = [_plain(n) for n in re.findall(_N, m.group(1))]
        out.append(f"({' + '.join(numbers)}) / {len(numbers)}")
    return out


_UNIT = r"(second|minute|hour|day|week|month|year)s?"
_IN: dict[tuple[str, str], int] = {
    ("minute", "second"): 60, ("hour", "minute"): 60, ("hour", "second"): 3600,
    ("day", "hour"): 24, ("day", "minute"): 1440, ("day", "second"): 86400, ("week", "day"): 7,
    ("week", "hour"): 168, ("year", "month"): 12, ("year", "week"): 52, ("year", "day"): 365}
"""How many of the second unit one of the first holds (a month's days vary: none)."""
_RATE = re.compile(rf"{_MONEY}(?<![\w.,]){_N}{_AFTER}\s+(?:a|an|per|each|every)\s+{_UNIT}\b"
                   rf"(?:[^?!]*?\b(?:for|in|over|after)\s+(?:(?:a|one|the)\s+(?:(?:whole|full|entire)\s+)?"
                   rf"|{_N}\s+)?{_UNIT}\b|[^?!]*?\b(?:a|per|each|every)\s+{_UNIT}\b)", re.I)
_HOW_MANY_IN = re.compile(rf"\bhow\s+many\s+{_UNIT}\s+(?:are\s+)?(?:there\s+)?(?:in|per)\s+"
                          rf"{_N}\s+{_UNIT}\b", re.I)


def _per(big: str, small: str) -> int | None:
    return 1 if big == small else _IN.get((big, small))


def _rates(text: str) -> list[str]:
    """An amount per unit of time over a span ("350 a month for 14 months": ``350 * 14``;
    "1200 a month, what's that for a year": ``1200 * 12``; "80 a day, per week": ``80 * 7``),
    and a span in a smaller unit ("how many minutes in 7 hours": ``7 * 60``)."""
    out = []
    for m in _RATE.finditer(text):
        amount, unit = _plain(m.group(1)), m.group(2).lower()
        count, span = m.group(3), (m.group(4) or m.group(5) or "").lower()
        factor = _per(span, unit)
        if factor is None:
            continue
        terms = [amount, *([_plain(count)] if count else []), *([str(factor)] if factor > 1 else [])]
        if len(terms) > 1:
            out.append(" * ".join(terms))
    for m in _HOW_MANY_IN.finditer(text):
        factor = _per(m.group(3).lower(), m.group(1).lower())
        if factor is not None and factor > 1:
            out.append(f"{_plain(m.group(2))} * {factor}")
    return out


_RATIO = re.compile(rf"\bwhat\s+(?:percent(?:age)?|%|share|fraction)\s+of\s+{_MONEY}{_N}{_AFTER}\s+"
                    rf"(?:is|are|was|were|would\s+be|makes?|comes?\s+to)\s+{_MONEY}{_N}(?![\d.,]\d)|"
                    rf"(?<![\w.,]){_MONEY}{_N}{_AFTER}\s+(?:is|are|was|were|makes?)\s+what\s+(?:percent(?:age)?|%|share)"
                    rf"\s+of\s+{_MONEY}{_N}(?![\d.,]\d)|(?<![\w.,]){_N}\s+(?:out\s+of|of)\s+{_N},?\s+"
                    rf"(?:as|in)\s+(?:a\s+)?percent(?:age)?\b", re.I)


def _ratios(text: str) -> list[str]:
    """A part as a percentage of a whole ("what percent of 180 is 45", "45 is what percentage
    of 180", "45 out of 180 as a percentage": ``45 / 180 * 100``)."""
    out = []
    for m in _RATIO.finditer(text):
        whole, part = (m.group(1), m.group(2)) if m.group(1) else (
            (m.group(4), m.group(3)) if m.group(3) else (m.group(6), m.group(5)))
        out.append(f"{_plain(part)} / {_plain(whole)} * 100")
    return out


def said_arithmetic(question: str) -> list[str]:
    """The expressions of the arithmetic ``question`` says in words (see the module), numbers
    said in words included; empty when it says none of these forms."""
    text = words_to_digits(question)
    return list(dict.fromkeys([*_percent_changes(text), *_shares(text), *_rates(text),
                               *_ratios(text)]))
