"""Ranking tools by relevance to a request: Okapi BM25 over each tool's name, description and
parameter names and descriptions, with light stemming and a small table of everyday synonyms
("plus" finds ``add``, "cost" finds ``price``), because tool documentation and user questions
rarely use the same words. Pure functions over :class:`~reactloop.messages.ToolSpec` values, no
dependencies.

A neutral module: the tool selection of an agent (:mod:`reactloop.tools._select`) and the
embedded model's guidance (:mod:`reactloop.models.local`) both rank with it, so models never
import from tools.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from reactloop._amounts import said_arithmetic
from reactloop._words import plain as _plain
from reactloop.messages import ToolSpec

__all__ = ["EXPONENT_WORDS", "NAMES_MARK", "SPOKEN_ARITHMETIC", "SPOKEN_POWER", "SPOKEN_SHARE", "SPOKEN_SPLIT", "TERMS_MARK", "WORDS_MARK", "asks_documents", "best_choice", "evident", "name_matches", "rank_tools", "said_names", "select_tools", "terms"]

K1 = 1.2
B = 0.75
NAME_WEIGHT = 3
"""Name terms count this many times: a tool's name is its most specific description."""

_WORD = re.compile(r"[a-z]+|\d+")
_STOP_WORDS = """
a an and are as at be by can could do does did for from give given has have how i if in into
is it its me my of on or our please show that the their them then there these this those to
us was we were what when where which who whom why will with would you your yes no not tell
let lets get make want need know find look up return returns number numbers value values
one two e g eg such any s t d ll re ve m
thx thanks thank ty tia pls plz cheers ta kindly
"""
_STOP = frozenset(_STOP_WORDS.split())

# everyday words a user says → words tool documentation uses (both directions are looked up)
_RELATED: Mapping[str, tuple[str, ...]] = {
    "plus": ("add", "sum"), "sum": ("add",), "total": ("add", "sum", "summed"),
    "minus": ("subtract", "difference"), "difference": ("subtract",), "less": ("subtract",),
    "times": ("multiply", "product"), "product": ("multiply",), "multiplied": ("multiply",),
    "divided": ("divide", "quotient"), "quotient": ("divide",),
    "sqrt": ("square", "root"), "squared": ("power", "square"),
    "cost": ("price",), "costs": ("price",), "price": ("cost",), "much": ("price", "cost"),
    "backwards": ("reverse",), "backward": ("reverse",), "reversed": ("reverse",),
    "mail": ("email",), "address": ("email",),
    "km": ("kilometre", "kilometer"), "kilometres": ("km",), "kilometers": ("km",),
    "kg": ("kilogram",), "kilograms": ("kg",), "lb": ("pound",), "lbs": ("pound",),
    "pounds": ("lb",), "mi": ("mile",), "celsius": ("temperature",),
    "fahrenheit": ("temperature",), "weekday": ("day", "week"),
    "date": ("day", "current"),  # "the date" without one given is today's
    "characters": ("letter",), "chars": ("letter",), "length": ("count",), "many": ("count",),
    "weather": ("forecast", "temperature"), "rain": ("weather",), "raining": ("weather",),
    "sunny": ("weather",), "snow": ("weather",), "forecast": ("weather",),
    "time": ("clock", "hour"), "now": ("current",), "hour": ("time",), "clock": ("time",),
    "rn": ("now",),  # "right now", as typed
    "moment": ("current",),
    # intents: to compute, convert or count is what a calculating, converting, counting tool does
    "compute": ("calculate", "evaluate"), "evaluate": ("calculate", "expression"),
    "calculate": ("compute", "evaluate"), "calc": ("calculate",), "math": ("arithmetic",),
    "folder": ("dir", "directory"), "folders": ("dir", "directory"), "directory": ("dir",),
    "list": ("dir", "entries"), "search": ("grep",), "grep": ("search",),
    "ls": ("list", "dir"), "dir": ("list", "directory"),
    "convert": ("conversion",), "conversion": ("convert",), "count": ("number",),
    "mention": ("search", "grep"), "mentions": ("search", "grep"), "contain": ("search",),
    "contains": ("search",), "containing": ("search",),
    "mentioned": ("search", "grep"), "talk": ("mention", "search"), "talks": ("mention", "search"),
    "configured": ("search", "grep"), "defined": ("search", "grep"), "refer": ("search",),
    "contents": ("read",), "content": ("read",),
    # where people eat, wash and shop, as places are categorised
    "eat": ("food",), "hungry": ("food",), "lunch": ("food",), "breakfast": ("food",),
    "dinner": ("food",), "snack": ("food",), "meal": ("food",), "drink": ("food", "coffee"),
    "toilet": ("restroom",), "toilets": ("restroom",), "bathroom": ("restroom",),
    "wc": ("restroom",), "buy": ("shop",), "shopping": ("shop",), "luggage": ("baggage",),
    "bags": ("baggage",),
    # travellers' words for what fare rules call otherwise
    "baby": ("infant",), "babies": ("infant",), "toddler": ("infant", "child"),
    "kid": ("child",), "kids": ("child",), "cancel": ("cancellation", "refund"),
    "misspelled": ("name", "correction"), "misspelt": ("name", "correction"),
    "spelled": ("correction",), "spelt": ("correction",), "surname": ("name",),
    "newborn": ("infant",), "typo": ("correction",), "flying": ("flight",),
    "plane": ("flight",), "ticket": ("flight", "booking"), "fly": ("flight",),
    "flies": ("flight",), "flew": ("flight",),
}


_STOP_RELATED: Mapping[str, str] = {"find": "search", "look": "search"}
"""Stop words that still say an intent (only with ``expand``)."""
_REPLACED = frozenset({"times"})
"""Words whose stem would mislead ("times" is not about time): only their related words count."""
_SYMBOLS: Mapping[str, tuple[str, ...]] = {
    "+": ("add", "sum"), "*": ("multiply", "product"), "×": ("multiply", "product"),
    "/": ("divide",), "÷": ("divide",), "^": ("power",), "**": ("power",),
    "√": ("square", "root"),
}
_ARITHMETIC = re.compile(r"[\d)]\s*(?:\*\*|[-+*/×÷^])\s*[\d(]|√")
"""An arithmetic expression ("2**10", "(17 + 25) * 2", "3^4"): a signal for the tools that
evaluate one, even when no word of the question names them."""
EXPONENT_WORDS = {w: n for n, words in enumerate(
    ("", "", "second two", "third three", "fourth four", "fifth five", "sixth six",
     "seventh seven", "eighth eight", "ninth nine", "tenth ten", "eleventh eleven",
     "twelfth twelve"), start=0) for w in words.split()}
"""An exponent said as a word ("to the fourth", "to the power of four")."""
SPOKEN_POWER = re.compile(r"(\d+(?:\.\d+)?)\s+(?:(?:raised\s+)?to\s+the\s+(?:power|exponent)"
                          r"(?:\s+of)?|raised\s+to)\s+(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)\s+"
                          r"(squared|cubed)\b|(\d+(?:\.\d+)?)\s+(?:raised\s+)?to\s+the\s+(\d+)"
                          r"(?:st|nd|rd|th)(?:\s+power)?\b|(\d+(?:\.\d+)?)\s+(?:raised\s+)?to\s+"
                          r"(?:the\s+)?(?:power\s+(?:of\s+)?)?(" + "|".join(EXPONENT_WORDS) +
                          r")(?:\s+power)?\b(?!\s+(?:floor|level|gate|terminal|row|place|time))", re.I)
"""A power said in words ("2 to the power of 5", "7 squared", "14 to the fourth power", "3 to
the power of four"): an expression as well."""
_OPERAND = r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?),?"
"""A number as typed (thousands may be grouped: "2,500"), and the comma a clause may put after
it ("936 divided by 12, plus 7")."""
_THEN = r"(?:\s+(?:and\s+)?then)?"
"""An operation said after "then" ("936 divided by 12, then minus 9")."""
_SPOKEN_OP = r"(?:plus|minus|times|multiplied\s+by|divided\s+by|over)"
SPOKEN_ARITHMETIC = re.compile(
    rf"(?<![\w.]){_OPERAND}(?:(?:{_THEN}\s+(?:{_SPOKEN_OP}|x)\s+|\s*[-+*/×÷]\s*){_OPERAND})*"
    rf"{_THEN}\s+{_SPOKEN_OP}\s+{_OPERAND}"
    rf"(?:(?:{_THEN}\s+(?:{_SPOKEN_OP}|x)\s+|\s*[-+*/×÷]\s*){_OPERAND})*(?![\w.])", re.I)
"""Arithmetic said in words, or partly in words ("1260 divided by 4 plus 15", "45 times 3 - 10"):
an expression as well."""
SPOKEN_SPLIT = re.compile(
    r"\bsplit(?:ting)?\s+(?:[^\s.?!]+\s+){0,4}?(\d+)\s+ways\b|"
    r"\b(?:split|splitting|divided|dividing|shared?|sharing)\s+(?:it\s+|that\s+|this\s+|"
    r"the\s+\w+\s+)?(?:evenly\s+|equally\s+)?(?:between|among|amongst|across)\s+(?:the\s+)?"
    r"(\d+)\b|\b(\d+)\s+(?:of\s+us|people|persons|friends|guests|colleagues)\b"
    r"(?=.*\b(?:each|per\s+(?:person|head)|split|share|sharing|splitting)\b)", re.I)
"""A total shared by a number of people ("split 8 ways", "shared between 4 of us", "6
friends, how much each?"): the amounts said, added, divided by it — an expression as well."""
LISTED_OPERANDS = re.compile(
    r"\b(sum|total|add|adding|plus|multiply|multiplying|product)(?:\s+(?:up|together|of|all))*"
    r"\s+(?:the\s+numbers\s+)?(\d+(?:\.\d+)?(?:\s*,\s*\d+(?:\.\d+)?)+,?\s+(?:and|&)\s+"
    r"\d+(?:\.\d+)?)(?![\w.])", re.I)
"""Three numbers or more to add or multiply ("the sum of 3, 4 and 5"): more than a tool of two
numbers takes, an expression as well."""
_AMOUNT = r"(\d[\d,]*(?:\.\d+)?)(?:\s+(hundred|thousand|million|billion)\b)?"
SPOKEN_SHARE = re.compile(r"(?:(\d+(?:\.\d+)?)\s*(?:%|per\s*cent\b)|\b(half|a\s+third|one\s+"
                          r"third|a\s+quarter|one\s+quarter|a\s+fifth|one\s+fifth|a\s+tenth|"
                          r"one\s+tenth|double|twice|triple)(?:\s+of)?)\s+(?:of\s+)?" + _AMOUNT,
                          re.I)
"""A share said in words ("15 % of 240", "12 percent of 80", "half of 3 thousand"): an
expression as well."""
_LISTING = re.compile(r"^\W*(?:which|what)\s+(?:[a-z]+\s+){0,3}?[a-z]+[^s\W]s\s+"
                      r"(?:are|can|could|do|does|exist|should|would|will|i|we|there)\b")
"""A question for the members of a plural ("Which sources can I compare?", "What files are
there?"): a signal for the tool that lists them."""
_INSIDE = re.compile(r"^\W*what(?:'s|’s|s|\s+is|\s+do\s+i\s+have)\s+(?:inside|in)\s", re.I)
"""A question for what a place holds ("What's in the workspace?"): a listing, unless it names
a file."""
_WHICH_FILE = re.compile(r"\b(?:which|what)\s+(?:(?!(?:do|does|did|is|are|was|were)\b)[a-z]+\s+)?"
                         r"(?:file|doc|document|note|page|text)s?\s+"
                         r"(?!(?:are|r|do|does|i|we|you|there|in|inside|is\s+in|exist)\b)[a-z]+|\b(?:file|doc|"
                         r"document|note)s?\s+(?:was|is)\s+(?:that|it)\s+in\b", re.I)
"""A question for the file that holds something ("Which note mentions the printer?", "Which
file was that in?"): a search through the files' contents."""
_DOC = r"(?:file|doc|document|note|page|text|readme|faq|memo|record)s?"
_ABOUT_DOCUMENTS = re.compile(
    rf"\b(?:in|into|to|inside|within)\s+(?:one|some|any|a)\s+(?:of\s+(?:my|our|the)\s+)?{_DOC}\b"
    rf"(?=[^?.!]*(?:[.,;!]\s*|\b)(?:which|where|what)\b)|\bone\s+of\s+(?:my|our|the)\s+{_DOC}"
    rf"\s+(?:has|have|had|contains?|holds?|says?|mentions?)\b|"
    rf"\b(?:wrote|typed|saved|noted|jotted|put|stored|written|entered)\b[^?.!]*\bsomewhere\b|"
    rf"\bis\s+there\s+(?:a|an|any|some)\s+(?:\w+\s+)?{_DOC}\s+(?:that|which|where|saying|"
    rf"about|on|mentioning|explaining|describing|telling|with|listing)\b|\b(?:any|some)\s+"
    rf"(?:\w+\s+)?{_DOC}\s+(?:that|which|saying|about|on|mentioning|explaining|describing|"
    rf"telling|with|listing)\b|\b(?:do|does|did)\s+(?:any|one)\s+of\s+(?:my|the|our)\s+"
    rf"{_DOC}\b|\b(?:which|what)\s+(?:one\s+)?of\s+(?:my|our|the|these|those)\s+{_DOC}\b|"
    rf"\bdo\s+(?:i|we)\s+have\s+(?:a|an|any)\s+{_DOC}\b|\b(?:where|did)\s+(?:i|we)"
    rf"\s+(?:write|wrote|note|noted|jot|jotted|put|keep|kept|mention|mentioned|save|saved)\b|"
    rf"\b(?:anything|something)\s+(?:written|noted|jotted|saved)\b|\baccording\s+to\s+(?:my|our|"
    rf"the)\s+{_DOC}\b|\b(?:check|search|scan|look\s+(?:through|in|at)|go\s+through)\s+(?:my|our|"
    rf"the)\s+{_DOC}\s+(?:for|about|to)\b|\b(?:do|does|did)\s+(?:my|our|the)\s+{_DOC}\s+(?:say|"
    rf"mention|tell|list|cover|explain)\b|"
    rf"\b(?:in|among|across)\s+(?:any|one)\s+of\s+(?:my|our|the)\s+{_DOC}\b|\b(?:anything|"
    rf"something)\s+(?:in|among|across)\s+(?:my|our|the)\s+{_DOC}\s+(?:about|on|regarding|"
    rf"mentioning|saying|that|which|with)\b|\b(?:what|"
    rf"which)\b.*\b(?:says?|said|written|mentions?|mentioned)\b.*\b(?:in|among)\s+(?:my|our|"
    rf"the)\s+{_DOC}\b", re.I)
"""A question whether the files say something ("is there a doc that says when we open?",
"did I write down the port anywhere?", "any notes about the printer?"): a search through
the files' contents, whatever other tool a word of it names ("time")."""
_OVER = re.compile(r"\d\s+over\s+\d")
_ALL = re.compile(r"\b(?:all|every)\s+(?:of\s+)?(?:the\s+|my\s+|your\s+)?[a-z]+[^s\W]s\b")
"""A request for all of a plural ("Show me all the files"): a listing as well."""
_DAYTIME = re.compile(r"(?<!in the )(?<!this )(?<!tomorrow )(?<!at )(?<!same )(?<!that )(?<!each )"
                      r"(?<!every )\b(?:late|early|awake|asleep|sleeping|morning|night|evening|afternoon|"
                      r"midnight|noon|daytime|hour|o'?clock|up yet)\b", re.I)
"""A time of day said of a place ("Is it late in Sydney?", "are they awake there?"): with a place
that has a timezone, the question asks for the clock there; not a day's part said of another
time ("that morning", "the same evening", "every night")."""
_NEED = re.compile(r"\b(?:where\s+(?:can|could|do|should)\s+(?:i|we)|is\s+there\s+(?:a|an|any)(?:where)?\b|"
                   r"(?:i|we)\s+(?:need|want|have)\s+to|(?:i|we)\s+could\s+(?:really\s+)?use)\s+\w",
                   re.I)
"""A need said without a place word ("I need to refill my water bottle", "where can I get some
medicine?"): a question for a place or service that provides it."""
_FILENAME = re.compile(r"(?<![\w.@])[\w/-]*[a-z_][\w-]+\.(?!(?:com|org|net|edu|gov|io|co|uk|de|fr)"
                       r"\b)[a-z]{1,4}\b(?![.@]\w)")
"""A file's name ("notes.txt", "docs/faq.md"), not a web or mail address ("example.com"): a
signal for the tool that reads files."""
_DATE = re.compile(r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b\d{4}/\d{1,2}/\d{1,2}\b")
"""Dates are not expressions ("2024-01-01" is no subtraction)."""


def _stem(word: str) -> str:
    # just enough to make "letters"/"letter", "spelled"/"spell", "counting"/"count" meet
    for suffix in ("ing", "ed", "es", "s"):
        if suffix == "es" and not word[:-2].endswith(("s", "x", "z", "ch", "sh")):
            continue  # "changes" is "change" + s, "matches" "match" + es
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return word


_KEYS = ("time", "timezone", "clock", "current", "convert")
"""Words that choose a tool by themselves: typed with two letters swapped ("tiem", "tmie",
"timzeone") they are still meant (with ``expand``); no other word is read as one."""


def _swapped(word: str) -> str | None:
    """The key word ``word`` types with two neighbouring letters swapped, or None."""
    for key in _KEYS:
        if len(word) == len(key) and word != key and sorted(word) == sorted(key):
            diff = [i for i, (a, b) in enumerate(zip(word, key, strict=True)) if a != b]
            if len(diff) == 2 and diff[1] == diff[0] + 1:
                return key
    return None


def terms(text: str, *, expand: bool = False) -> list[str]:
    """Lower-cased, stemmed content words of ``text`` (``snake_case`` and ``camelCase`` split);
    with ``expand``, related everyday words are added."""
    said, text = text, re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ").lower()
    out: list[str] = []
    if expand and _SOME_DATE.search(text):  # "to a later date": no day to look up
        text = _SOME_DATE.sub(lambda m: m.group(0)[:m.start("date") - m.start()], text)
    for word in _WORD.findall(text):
        word = (_swapped(word) or word) if expand else word
        if word in _STOP or word.isdigit():
            if expand and word in _STOP_RELATED:  # "find" says nothing of what, but to search
                out.append(_STOP_RELATED[word])
            continue
        if not (expand and word in _REPLACED):
            out.append(_stem(word))
        if expand:
            out.extend(_stem(w) for w in _RELATED.get(word, ()))
    if expand and (_LISTING.search(text) or _ALL.search(text) or (
            _INSIDE.search(text) and not _FILENAME.search(text))):  # "which sources can I ...": asks for a list
        out.append("list")
    if expand and asks_documents(text) and not _FILENAME.search(text):
        out += ["search", "grep", "contents"]  # "which doc explains X": search the files
    if expand and _DAYTIME.search(text) and _has_zone(text) and not _dated(said):
        # "is it late in Sydney?"; not "in London on 15 November … the same morning": a day's
        out += ["time", "current", "timezone"]
    if expand and _conversion(said):  # "noon in Sydney, what's that in Lima?"
        out += ["convert", "time", "timezone"]
    if expand and _NEED.search(text) and not _FILENAME.search(text):
        out += ["service", "place"]
    if expand and _FILENAME.search(text):  # "setup.md", "docs/faq.md": a file to read
        out += ["file", "read"]
    if expand and _OVER.search(text):  # "10 over 4" divides; "over there" is a place
        out.append("divide")
    if expand and (_ARITHMETIC.search(_DATE.sub(" ", text)) or _spoken_power(text)
                   or SPOKEN_SHARE.search(text) or _spoken_chain(text) or SPOKEN_SPLIT.search(text)
                   or LISTED_OPERANDS.search(text) or said_arithmetic(text)):
        # "17 + 25", "2 to the power of 5": operators are words
        out += ["arithmetic", "expression", "calculate"]
        out += [_stem(w) for sym, words in _SYMBOLS.items() if sym in text for w in words]
    return out


_SOME_DATE = re.compile(r"\b(?:a|an|another|other|some|any)\s+(?:(?:later|earlier|different|new|"
                        r"other|future)\s+)?(?P<date>date|day)\b")
"""A date said as any one ("move it to a later date", "another day"): a change of day, no
date to compute with or today's to tell."""


def _spoken_power(text: str) -> bool:
    """Whether ``text`` says a power, its numbers in digits or words ("twelve squared")."""
    from reactloop._amounts import words_to_digits

    return bool(SPOKEN_POWER.search(text) or SPOKEN_POWER.search(words_to_digits(text)))


def _spoken_chain(text: str) -> bool:
    """Whether ``text`` says an arithmetic of two operators or more partly in words ("1260
    divided by 4 plus 15"): one ("15 plus 27") is a two-number tool's as well."""
    ops = re.compile(r"\b(?:plus|minus|times|by|over|x)\b|[-+*/×÷]")
    from reactloop._amounts import words_to_digits

    # "seven times eight plus nine" is "7 times 8 plus 9"
    return any(len(ops.findall(m.group(0))) >= 2 for m in SPOKEN_ARITHMETIC.finditer(
        words_to_digits(_DATE.sub(" ", text))))


def asks_documents(text: str) -> bool:
    """Whether ``text`` asks which file holds something, or whether the files say something
    ("Which note mentions the printer?", "is there a doc that says when we open?")."""
    return bool(_WHICH_FILE.search(text) or _ABOUT_DOCUMENTS.search(text))


def _conversion(text: str) -> bool:
    """Whether ``text`` says a time of day ("half past 3", "09:15") and two places with a
    timezone: a conversion between them, whether or not it says "convert" or "time"."""
    from reactloop._zones import zones_in
    from reactloop.models._times import spoken_times

    return len(set(zones_in(text))) >= 2 and bool(spoken_times(text))


def _dated(text: str) -> bool:
    """Whether ``text`` says a calendar day ("15 November 2027", "2027-11-15"): a time of day
    with it is that day's (a trip's "same morning"), not the clock's now."""
    from reactloop.models._dates import spoken_dates

    return bool(spoken_dates(text))


def _has_zone(text: str) -> bool:
    from reactloop._zones import zones_in

    return bool(zones_in(text))


def _document(spec: ToolSpec) -> list[str]:
    words = terms(spec.name) * NAME_WEIGHT + terms(spec.description)
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    for name, schema in props.items():
        words += terms(name)
        if isinstance(schema, Mapping):
            words += terms(str(schema.get("description") or ""))
    return words


_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|(?<!\w)'[^']*'(?!\w)")


def rank_tools(specs: Sequence[ToolSpec], query: str) -> list[tuple[float, ToolSpec]]:
    """Every tool with its score for ``query``, best first (ties keep their order).

    The score is BM25, times (1 + the share of the tool's name words the query uses): a
    question that says "word count" is about ``word_count`` more than about
    ``count_letters``. Quoted text is data, not intent, and is left out of the query.
    """
    docs = [Counter(_document(s)) for s in specs]
    if not docs:
        return []
    n = len(docs)
    avg = sum(sum(d.values()) for d in docs) / n or 1.0
    df: Counter[str] = Counter(t for d in docs for t in d)
    query_terms = Counter(terms(_QUOTED.sub(" ", query), expand=True)) or Counter(
        terms(query, expand=True))
    scored = []
    for i, (spec, doc) in enumerate(zip(specs, docs, strict=True)):
        length = sum(doc.values())
        score = 0.0
        for term, q in query_terms.items():
            tf = doc.get(term, 0)
            if not tf:
                continue
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            score += q * idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avg))
        name = set(terms(spec.name))
        coverage = len(name & set(query_terms)) / len(name) if name else 0.0
        scored.append((score * (1 + coverage), -i, spec))
    scored.sort(key=lambda t: (t[0], t[1]), reverse=True)
    return [(score, spec) for score, _, spec in scored]


def select_tools(specs: Sequence[ToolSpec], query: str, k: int, *,
                 keep: Iterable[str] = (), min_ratio: float = 0.0) -> list[ToolSpec]:
    """The ``k`` tools most relevant to ``query``, best first, then those named in ``keep``
    (e.g. loop-control tools, which must always stay available).

    With ``min_ratio`` > 0, tools scoring below ``min_ratio`` × the best score are left out,
    and when no tool matches any word of the query only the ``keep`` tools come back (a tiny
    model offered unrelated tools calls them anyway). With ``min_ratio`` = 0 exactly ``k``
    tools come back; ties (and a query that matches nothing) keep the given order.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    kept = set(keep)
    ranked = rank_tools([s for s in specs if s.name not in kept], query)
    best = ranked[0][0] if ranked else 0.0
    if min_ratio > 0:
        ranked = [(score, s) for score, s in ranked if score > 0 and score >= min_ratio * best]
    chosen = [s for _, s in ranked[:k]]
    return [*chosen, *(s for s in specs if s.name in kept)]


def name_matches(spec: ToolSpec, query: str) -> bool:
    """Whether ``query`` uses a word of the tool's name (or a related everyday word): the
    signal that the user is asking for exactly what this tool does."""
    return bool(set(terms(spec.name)) & set(terms(query, expand=True)))


def says_name(spec: ToolSpec, query: str) -> bool:
    """Whether ``query`` (outside its quotes) says every word of the tool's name, or a related
    everyday word for it ("Count the words": ``word_count``, not ``count_letters``)."""
    named = set(terms(spec.name))
    return bool(named) and named <= set(terms(_QUOTED.sub(" ", query), expand=True))


def evident(spec: ToolSpec, query: str) -> bool:
    """Whether ``query`` names the tool (:func:`name_matches`) or shares at least two words
    with its documentation: one word of a description ("line" in "Write one line of a poem")
    is too little to offer the tool to a small model."""
    if name_matches(spec, query):
        return True
    asked = set(terms(_QUOTED.sub(" ", query), expand=True))
    return len(asked & set(_document(spec))) >= 2


NAMES_MARK = "\nNames in its data: "
"""Where a choice's text lists the names its skill's data holds (``; ``-separated), which
count for a query that says them (:func:`said_names`)."""
WORDS_MARK = "\nWords in its data: "
"""After the names (:data:`NAMES_MARK`), the one-word values of the skill's data (``; ``-
separated): what its search finds, never counted for choosing the skill."""
TERMS_MARK = "\nTerms of its data's sentences: "
"""After the words (:data:`WORDS_MARK`), the words of the data's short sentences ("Burgers and
fries."): a thing a query wants that only they say ("fries") still finds the skill."""
_TRIP = re.compile(r"\bfrom\b.+\bto\b|\bto\b.+\bfrom\b", re.I)


def said_names(names: Sequence[str], query: str) -> list[str]:
    """The ``names`` (a skill's data: "Cafe Aroma", "Singapore", "EUR") that ``query`` says,
    as whole words, however punctuated ("lost and found" says "Lost & Found", "restrooms" a
    "Restroom"; :func:`reactloop._words.plain`), a code in capitals only in capitals ("ACTUAL" is not
    "actual"). A place
    the world knows (a city with a timezone) is the skill's only in a trip between two of its
    names ("from London to Singapore", "Paris to London"), never alone ("the time in London")."""
    spoken = f" {_plain(query)} "  # a substring test: a skill's data may hold 2,000 names
    said = [n for n in names if n.strip() and f" {_plain(n)} " in spoken and (
        not n.isupper() or re.search(rf"(?<![\w/-]){re.escape(n)}(?![\w/-])", query))]
    if len(said) >= 2 and (_TRIP.search(query) or _joined(said, spoken)):
        return said
    return _own(said)


def _joined(said: Sequence[str], spoken: str) -> bool:
    """Two of the ``said`` names one after the other, joined by "to" or a dash or arrow
    ("Paris to London", "London–Dubai"): a trip between them even without "from"."""
    words = [_plain(n) for n in said]
    return any(f" {a} to {b} " in spoken or f" {a} {b} " in spoken
               for a in words for b in words if a != b)


def _own(names: Sequence[str]) -> list[str]:
    """``names`` without the places the world knows (a city with a timezone)."""
    if not names:
        return []
    from reactloop._zones import city_zone

    return [n for n in names if not city_zone(n)]


_SHOPPING = re.compile(r"\b(?:sells?|selling|sold|buy|stock|stocks|shop|store|anywhere|somewhere|where(?=\s*\?)|"
                       r"where\s+(?:can|could|do|should)\s+(?:i|we)|is\s+there|(?:can|could)\s+(?:i|we)\s+"
                       r"(?:still\s+)?(?:get|buy|grab|find)\s+(?:a|an|some)\b|how\s+(?:do|can|could)\s+(?:i|we)\s+"
                       r"(?:get|find|catch|take)\s+(?:a|an)\b)\b", re.I)
_WANT = re.compile(r"\b(?:want|need|buy|get|grab|find|catch|pick\s+up|looking\s+for|sells?|selling|"
                   r"stocks?|forgot|forgotten|lost|left|broke|broken|ran\s+out\s+of|"
                   r"(?:that|which)\s+(?:does|do|serves?|offers?|makes?|has|have)|"
                   r"(?:where|somewhere)\s+(?:i|we)\s+(?:can|could|might)(?:\s+go\s+and)?(?:\s+(?:get|buy|grab|find))?)\s+"
                   r"(?:(?:a|an|some|any|the|more|new|couple|few|of|pair|bit|my|our|cup|mug|bottle|"
                   r"glass|pack|packet|box|slice|piece|bar)\s+)*"
                   r"([a-z]{3,}(?:\s+[a-z]{3,})?)", re.I)
_NOT_WANTED = frozenset({"them", "they", "this", "that", "these", "those", "one", "ones", "there",
                         "here", "something", "anything", "help", "food", "stuff", "thing",
                         "things", "read", "eat", "drink", "before", "after", "while", "when",
                         "home", "behind", "somewhere", "anywhere", "everything", "around",
                         "nearby", "near", "into", "now", "please", "today", "tonight",
                         "her", "him", "me", "us", "it", "you", "go", "be", "get"})


_BOUGHT = re.compile(r"\b(?:buy|sells?|selling|forgot|forgotten|lost|left|broke|broken|ran\s+out"
                     r"\s+of|pick\s+up)\b", re.I)


def wanted(query: str, *, bought: bool = False) -> list[str]:
    """The things a query asks where to get ("I want a couple of magazines … anywhere here
    that sells them?": ``magazines``): words of what is wanted, bought or sold, when the query
    asks where; a skill whose data holds one is the query's (:func:`best_choice`)."""
    if not _SHOPPING.search(query) or (bought and not _BOUGHT.search(query)):
        return []  # with ``bought``: only a thing to buy or left behind, not one "needed"
    said = (" ".join(w for w in m.group(1).lower().split() if w not in _NOT_WANTED)
            for m in _WANT.finditer(query))
    found = list(dict.fromkeys(t for t in said if t))
    return [*found, *(w for w in _kinds_wanted(query) if w not in found and w not in _NOT_WANTED)]


def _kinds_wanted(query: str) -> list[str]:
    """The words of a where-question that say a want a kind of place meets ("is there
    somewhere quiet …": ``quiet``; :mod:`reactloop._wants`)."""
    from reactloop._wants import kinds

    return [w for w in dict.fromkeys(re.findall(r"[a-z]+", query.lower())) if kinds(w)]


_OPEN = re.compile(
    r"\b(?:is|are)\s+(?:the\s+|a\s+|an\s+|any\s+)?([a-z]{3,}(?:\s+[a-z]{3,})?)\s+(?:still\s+|even\s+|"
    r"already\s+)?(?:open|closed)\b|\b(?:when|what\s+time|what\s+hours|how\s+late|how\s+early|"
    r"until\s+when)\s+"
    r"(?:does|do|is|are|will|did)\s+(?:the\s+|a\s+)?([a-z]{3,}(?:-[a-z]+)?(?:\s+[a-z]{3,})?)\s+(?:open|close|"
    r"shut|closing|opening|open\s+until|keep)\b|\b(?:hours|opening\s+times?)\s+(?:of|for)\s+(?:the\s+)?"
    r"([a-z]{3,}(?:\s+[a-z]{3,})?)|\b([a-z]{3,}(?:\s+[a-z]{3,})?)(?:'s)?\s+(?:opening\s+(?:hours|times)|"
    r"hours\s+of\s+(?:business|opening))\b|\b(?:until\s+(?:what\s+time|when)|till\s+(?:what\s+time|when)|"
    r"how\s+late)\s+(?:can|could|may)\s+(?:i|we)\s+(?:stay|remain|sit|hang\s+(?:out|around))\s+(?:in|at|"
    r"inside)\s+(?:the\s+)?([a-z]{3,}(?:\s+[a-z]{3,})?)", re.I)
"""A question for a place's opening hours ("is the pharmacy open at 6am?", "what time does the
bakery close?", "how late can I stay in the spa?"): the place is a thing a skill's data may
hold."""


def asked_open(query: str) -> list[str]:
    """The places whose opening hours ``query`` asks ("is the pharmacy still open": ``pharmacy``)."""
    said = (" ".join(w for w in next(g for g in m.groups() if g).lower().split()
                     if w not in _NOT_WANTED and w not in ("it", "you", "they", "still", "place",
                                                           "spot", "joint"))  # "the noodle place"
            for m in _OPEN.finditer(query))
    return [t for t in dict.fromkeys(said) if t]


def _held(things: Sequence[str], data: str) -> list[str]:
    """The ``things`` (words said as things) that a skill's ``data`` text (its names and
    words) holds, in any form ("book": "books")."""
    own = set(terms(data)) if things else set()
    return [t for t in things if all(_stem_held(w, own) for w in terms(t)) or _kind_held(t, own)]


def _kind_held(thing: str, own: set[str]) -> bool:
    """The data holds the kind of place that has ``thing`` ("whisky": ``liquor``; see
    :mod:`reactloop._wants`)."""
    from reactloop._wants import kinds

    return any(all(_stem_held(w, own) for w in terms(k)) for word in thing.lower().split()
               for k in kinds(word))


def _stem_held(word: str, own: set[str]) -> bool:
    """``word`` is one of ``own``'s, or the same word in another form the stemmer leaves
    apart ("nurse" and "nursing": "nurse", "nurs")."""
    return word in own or (len(word) >= 4 and any(
        len(o) >= 4 and abs(len(o) - len(word)) <= 2 and (o.startswith(word) or
                                                           word.startswith(o)) for o in own))


def best_choice(specs: Sequence[ToolSpec], query: str, *, names: bool = True
                ) -> tuple[ToolSpec, str] | None:
    """The tool and choice (a skill of ``load_skill``: :attr:`ToolSpec.choices`) that fit
    ``query`` better than every other tool, ranked by the same BM25 as the tools; None when a
    plain tool fits best or nothing matches. With ``names``, the names a choice's data holds
    that the query says (:func:`said_names`) count as the choice's own name; a skill's verb
    said as a thing ("a book", :mod:`reactloop._verbs`) counts for the skill whose data holds
    it, never for the verb's."""
    from reactloop._verbs import as_things, name_verbs

    pseudo: dict[int, tuple[ToolSpec, str]] = {}
    owned: dict[int, list[str]] = {}
    whole: dict[int, list[str]] = {}  # of owned: the things its data says as they were said
    docs = [s for s in specs if not s.internal]
    # "a book" is a thing, not book-flight's verb: a thing the skill's data holds is its name
    query, things = as_things(query, name_verbs(c for s in specs for c in s.choices))
    things += wanted(query)  # "anywhere here that sells magazines?": the data holding them
    things += asked_open(query)  # "is the pharmacy open at 6am?": the data holding it
    for spec in specs:
        for value, text in spec.choices:
            head, _, words = text.partition(WORDS_MARK)
            text, _, listed = head.partition(NAMES_MARK)
            said = said_names(listed.split("; ") if listed and names else [], query)
            # a name the skill's data holds ("Cafe Aroma") counts as much as its own name
            doc = ToolSpec(value, " ".join([text, *said * NAME_WEIGHT]), {})
            pseudo[id(doc)] = (spec, value)
            docs.append(doc)
            data = f"{listed} {words.replace(TERMS_MARK, ' ')}"
            held = _held(things, data)
            owned[id(doc)] = said + held  # a trip: its places
            whole[id(doc)] = [t for t in held if re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])",
                                                           data, re.I)]
    if not pseudo:
        return None
    named = (_named_choice(docs, pseudo, query)
             or _owned_choice(docs, pseudo, owned, dated=_dated(query))
             or _owned_choice(docs, pseudo, whole))  # "check-in", not "checked bags"
    if named is not None:
        return named
    ranked = rank_tools(docs, query)
    score, top = ranked[0]
    return pseudo.get(id(top)) if score > 0 else None


def _owned_choice(docs: Sequence[ToolSpec], pseudo: Mapping[int, tuple[ToolSpec, str]],
                  owned: Mapping[int, list[str]], *, dated: bool = False
                  ) -> tuple[ToolSpec, str] | None:
    """The one choice whose data holds a name the query says ("Cafe Aroma", not a city the
    world knows) that no tool's documentation has — or, for a trip between two of its
    places on a calendar day (``dated``: "from London to Singapore on 2027-09-09"), even one
    a tool's documentation has as an example ("Europe/London")."""
    hits = [d for d in docs if owned.get(id(d))]
    if len(hits) != 1:
        return None
    said = [n.lower() for n in owned[id(hits[0])]]
    if dated and len(said) >= 2:
        return pseudo[id(hits[0])]
    if any(n in _text(d).lower() for d in docs if id(d) not in pseudo for n in said):
        return None
    return pseudo[id(hits[0])]


_NAME = re.compile(r"(?<![\w.])[a-z]\w*_\w+")


def _named_choice(docs: Sequence[ToolSpec], pseudo: Mapping[int, tuple[ToolSpec, str]],
                  query: str) -> tuple[ToolSpec, str] | None:
    """The one choice whose text spells a name the query uses ("consolidation_mart") that no
    tool's documentation has: a name says what it belongs to more than any common word."""
    names = set(_NAME.findall(query))
    if not names:
        return None
    hits = [d for d in docs if any(n in _text(d) for n in names)]
    if len(hits) == 1 and id(hits[0]) in pseudo:
        return pseudo[id(hits[0])]
    return None


def _text(spec: ToolSpec) -> str:
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    return " ".join([spec.name, spec.description, *(
        str(p.get("description") or "") for p in props.values() if isinstance(p, Mapping))])
