"""Whether a tool fits a fresh question at all, beyond sharing a word with it: pure functions
the embedded model's guidance (:func:`~reactloop.models.local.plan_reply`) applies to the
ranked offer. Each is general (a kind of sentence, a kind of argument), never a table of
questions:

- **small talk** (:func:`small_talk`): a remark about oneself or the conversation ("That was
  a long list, thanks!", "My name is Sam") is answered, whatever tool name a word of it says;
- **a formatted argument** (:func:`lacks_format`): a tool whose required argument's docs give
  a format ("HH:MM", "YYYY-MM-DD") is no fit for a question with no value in that format (the
  time in Sydney is not a conversion of 09:00; "a lovely day" has no date);
- **a whole expression** (:func:`whole_expression`): a question with an expression of several
  operators goes whole to a tool that takes an expression, never in parts to ``add``;
- **container words** (:func:`container_span`): "folder", "directory", "file" say what a name
  is, never part of it ("the data folder" is the path ``data``);
- **file names** (:func:`in_folders`, :func:`file_names`): "setup.md in the docs directory" is
  ``docs/setup.md``, and a file tool's path copies a file name, not a verb ("open");
- **examples are no fixes** (:func:`foreign_examples`): a retry never copies a docs' or an
  error's example that shares no word with the question (the time in Paris for Sydney), nor
  the tool an error says to call;
- **a skill's first step** (:func:`first_step`): a skill chosen for a question none of its
  tools shares a word with offers its search, not an answer;
- **a skill's own tools** (:func:`skill_offer`): right after a skill was loaded, its tools
  are offered, not a plain tool sharing a word ("total": ``add``), and of them the ones
  taking as many names as the question gives (two sources: the comparison);
- **expressions** (:func:`expressions`, :func:`spoken_powers`): an expression argument copies
  the question's expression whole, or its power said in words ("2 to the power of 5": ``2**5``);
- **zones** (:func:`zone_choices`): a timezone argument chooses among the zones of the places
  the question names ("Beijing": ``Asia/Shanghai``);
- **found ids** (:func:`needs_found_id`): an action on what a search finds (``show_poi``)
  waits for the search, never an invented id;
- **routes** (:func:`trip_query`, :func:`trip_choices`): a next step for a question "from"
  one place "to" another (or "at" one, "how far ... to" another, or the two said apart:
  :mod:`reactloop.models._trips`) is the route between them, its start and destination the
  places said; a question for one place offers no route;
- **dates** (:mod:`reactloop.models._dates`): "21 October 2027" is a ``YYYY-MM-DD`` value; a
  search whose arguments a question settles (:func:`settled`) is no question for a document;
- **shares** (:func:`spoken_shares`): "15 % of 240", "half of 3 thousand" are expressions;
- **what a search looks for** (:func:`search_terms`, :func:`need_clause`): the thing, never
  where to look ("my documents", "on my map") nor when ("before boarding");
- **names** (:func:`named_values`): a tool taking as many strings as the question says names
  ("consolidation_mart") copies the names, not a number of the question;
- **knowledge** (:func:`small_talk`): what a word means, a fun fact, is answered without tools;
  so are general questions, advice and statements about oneself, by their form
  (:mod:`reactloop.models._pragmatics`);
- **times** (:mod:`reactloop.models._times`): "2 pm", "half past 3", "noon" are ``HH:MM``
  values, and two places said plainly are a conversion's source then its target;
- **options said** (:func:`essential`, :func:`said_options`): an optional argument whose
  documented option the question says ("business class": ``cabin``) is filled with it;
- **names of the skill's data** (:func:`loaded_names`): a search copies the name of the data
  the question says ("pop the check-in hall up on my map": ``check-in hall``), or a word of
  it ("is there a doctor?": ``doctor``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from reactloop.messages import Message, ToolSpec
from reactloop.models._gbnf import Candidates
from reactloop.models._operators import spoken_powers
from reactloop.models._trips import ENDS as _ENDS
from reactloop.models._trips import STARTS as _STARTS
from reactloop.models._trips import near_search, near_values, trip_places, unpriced

__all__ = [
    "EXPRESSION",
    "argument_choices",
    "container_span",
    "essential",
    "expressions",
    "file_names",
    "first_step",
    "fit_values",
    "fitting",
    "foreign_examples",
    "in_folders",
    "is_route",
    "is_trip",
    "lacks_format",
    "loaded_data",
    "loaded_names",
    "name_choices",
    "named_values",
    "need_clause",
    "needs_found_id",
    "preferred",
    "said_options",
    "search_terms",
    "settled",
    "skill_offer",
    "small_talk",
    "spoken_powers",
    "spoken_shares",
    "takes_format",
    "trip_choices",
    "trip_places",
    "trip_query",
    "whole_expression",
    "zone_choices",
]

_SPEAKERS = """i i'm im i've i'll i'd my we we're we've our that that's this it it's
thanks thank bye goodbye nice great cool ok okay wow"""
_SPEAKER = frozenset(_SPEAKERS.split())
"""First words of a remark about oneself or the conversation."""
_WANTS = """need want like wish wonder wondering looking trying please can could would
tell show find give"""
_WANT = frozenset(_WANTS.split())
"""Words that make such a sentence a request ("I need to find gate 7", "I'd like to know")."""
_VALUE = re.compile(r"\d|(?<!\w)[\"“'‘]\w|\w[_/.]\w")
_EXCLAMATION = re.compile(r"^\W*(?:(?:what|such|how)\s+an?\s|have\s+an?\s+(?:nice|good|great|lovely|"
                          r"safe|wonderful)\b)", re.I)
_QUOTED_WORD = re.compile(r"(?<!\w)[\"“'‘]\w[^\"”'’]{0,40}[\"”'’](?!\w)")


_KNOWLEDGE = re.compile(r"^\W*(?:what\s+does\s+(?:a\s+|an\s+|the\s+)?[\w\s-]{1,30}?\s+(?:mean|stand\s+for)"
                        r"\b|what\s+is\s+the\s+meaning\s+of\b|define\s|tell\s+me\s+(?:a|an|some)\s+"
                        r"(?:\w+\s+)?(?:fact|facts|joke|story|riddle)\b)", re.I)
"""A question for what a word means ("What does UTC stand for?") or for a fact or a joke:
knowledge, not a task for a tool."""


def small_talk(question: str) -> bool:
    """Whether ``question`` is a remark, not a request: no question mark, no value (digits,
    quotes, names such as ``notes.txt``), and either an exclamation ("What a lovely day!") or
    a sentence about oneself or the conversation ("I will call you later", "That was a long
    list") that says no want ("I need ...", "I'd like ...", "please"). By their form (modules
    ``_pragmatics``, ``_general_talk``), also a general question, advice, a choice or a
    judgement about nothing concrete and a statement about oneself ("just landed …")."""
    from reactloop.models._file_refs import refers_to_files
    from reactloop.models._general_talk import general_talk, with_apostrophes
    from reactloop.models._pragmatics import (
        advice,
        general_question,
        greeting,
        judgement,
        self_statement,
    )

    text = with_apostrophes(question.strip())
    if refers_to_files(text):  # "when should I call …? it's in my notes": a file's fact
        return False
    plain = _QUOTED_WORD.sub(" x ", text)  # the word asked about is no value to act on
    if text and _KNOWLEDGE.match(plain) and not _VALUE.search(plain):
        return True  # "What does a time zone mean?", "What does 'timezone' mean?": a word's meaning
    if text and (general_question(text) or self_statement(text) or advice(text)
                 or greeting(text) or judgement(text) or general_talk(text)):
        return True  # "Why do we have daylight saving?", "just landed after a 12 hour flight"
    if not text or "?" in text or _VALUE.search(text):
        return False
    if _EXCLAMATION.match(text):
        return True
    words = [w.strip(".,!;:").lower().replace("’", "'") for w in text.split()]
    first = words[0]
    return first in _SPEAKER and not any(w in _WANT or w.endswith("'d") for w in words)


_FORMATS: Mapping[str, str] = {
    "HH:MM": r"\b\d{1,2}:\d{2}\b", "YYYY-MM-DD": r"\b\d{4}-\d{1,2}-\d{1,2}\b",
}
_SCHEMA_FORMATS: Mapping[str, str] = {"date": _FORMATS["YYYY-MM-DD"], "time": _FORMATS["HH:MM"]}


def _format_of(schema: Any) -> str | None:
    if not isinstance(schema, Mapping):
        return None
    if schema.get("format") in _SCHEMA_FORMATS:
        return _SCHEMA_FORMATS[str(schema["format"])]
    described = str(schema.get("description") or "")
    return next((rx for mark, rx in _FORMATS.items() if mark in described), None)


def _formats(spec: ToolSpec) -> list[str]:
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    found = [_format_of(props.get(name)) for name in spec.parameters.get("required") or ()]
    return [rx for rx in found if rx is not None]


def _has(rx: str, question: str) -> bool:
    """Whether ``question`` has a value matching ``rx``; a time of day said in words ("2 pm",
    "half past 3", "noon") is an ``HH:MM`` value too, a date in words ("21 October 2027") a
    ``YYYY-MM-DD`` one."""
    from reactloop.models._dates import YYYY_MM_DD, spoken_dates
    from reactloop.models._times import HHMM, spoken_times

    return bool(re.search(rx, question) or (rx == HHMM and spoken_times(question))
                or (rx == YYYY_MM_DD and spoken_dates(question)))


def lacks_format(spec: ToolSpec, question: str) -> bool:
    """Whether a required argument of ``spec`` documents a format ("HH:MM", "YYYY-MM-DD", a
    JSON-schema ``format`` of date or time) that no value of ``question`` has, or converts
    between zones when it names none (:func:`reactloop.models._times.lacks_zones`)."""
    from reactloop.models._times import lacks_zones

    return any(not _has(rx, question) for rx in _formats(spec)) or lacks_zones(spec, question)


def takes_format(spec: ToolSpec, question: str) -> bool:
    """Whether a required argument of ``spec`` documents a format a value of ``question``
    has ("09:00" is the ``time`` of a conversion, not a clock question's)."""
    from reactloop.models._times import lacks_zones

    return any(_has(rx, question) for rx in _formats(spec)) and not lacks_zones(spec, question)


_DATE = re.compile(r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}(?::\d{2})?\s*[ap]\.?m\b\.?|\b\d{1,2}:\d{2}(?!\d)"
                   r"|\b\d{1,2}\s+(?:in\s+the\s+\w+|at\s+night|o'?clock)")  # "at 6 in the morning"


def whole_expression(tools: Sequence[ToolSpec], question: str) -> list[ToolSpec]:
    """``tools`` without the two-number tools an expression of ``question`` is not exactly one
    operation of, when another takes the expression whole ("(3 + 4) * (10 - 6)", "1260/4 +
    15": ``calculate``, not ``add(3, 10)``): :func:`reactloop.models._operators.whole_expression`."""
    from reactloop.models._operators import whole_expression as whole

    return whole(tools, question)


_CONTAINERS = frozenset({"folder", "folders", "directory", "directories", "dir", "file",
                         "files", "document", "documents"})


def container_span(span: str) -> bool:
    """Whether a word of ``span`` only says what kind of thing a name is ("folder", "data
    folder", "in the docs directory"): no value (the name alone is)."""
    return any(w.strip(".,!?") in _CONTAINERS for w in span.lower().split())


READ = "load_skill_reference"
_REFERENCE = re.compile(r"\breferences?/[\w./-]+")  # a document the skill says to read


def fitting(tools: Sequence[ToolSpec], question: str, keep: Sequence[str], *,
            guided_skills: bool, loaded: bool) -> list[ToolSpec]:
    """``tools`` without those that cannot fit a fresh ``question`` (small talk: none; a
    documented format the question lacks; numbers when it gives none), ranked afterwards; ``keep`` (loop control) stays.
    With ``guided_skills`` (the guidance loads skills itself) ``load_skill`` is never offered,
    and the skill-document reader only once a skill was ``loaded``: a workspace file is no
    skill reference."""
    from reactloop.models._operators import lacks_number

    if small_talk(question):
        return [t for t in tools if t.name in keep]
    return [t for t in tools if t.name in keep or not (
        (guided_skills and (t.choices or (t.name == READ and not loaded)))
        or lacks_format(t, question) or lacks_number(t, question))]


def preferred(listed: Sequence[ToolSpec], question: str, keep: Sequence[str]
              ) -> tuple[ToolSpec, ...]:
    """Of the ranked offer, the tools a value of the question is for: those whose documented
    format it has ("09:00" is a conversion's time), and a tool that takes a whole expression
    rather than its parts (:func:`whole_expression`)."""
    formatted = [t for t in listed if t.name not in keep and takes_format(t, question)]
    if formatted:
        listed = [t for t in listed if t in formatted or t.name in keep]
    return tuple(whole_expression(listed, question))


_EXAMPLE = re.compile(r"(?:e\.g\.,?|such as|like|for example)\s+((?:['\"“‘][^'\"”’]+['\"”’]"
                      r"(?:,\s*|\s+or\s+)?)+|[\w/+.-]+)", re.I)


def foreign_examples(spec: ToolSpec, error: str, question: str) -> set[str]:
    """The examples a tool's docs or its error give ("use an IANA name like 'Europe/Paris'",
    "e.g. 'America/San_Francisco'") that share no word with ``question``: a retry may copy an
    example that fixes what the user said (Paris → Europe/Paris), never one that replaces it
    (answering the time in Paris when asked about Sydney is worse than failing)."""
    from reactloop._ranking import terms

    texts = [error, spec.description] + [
        str(p.get("description") or "") for p in (spec.parameters.get("properties") or {})
        .values() if isinstance(p, Mapping)]
    asked = set(terms(question))
    # "call list_dir to see what is there": a tool the error names is no value
    found = {name for name in re.findall(r"\bcall\s+(\w+)", error) if name not in question}
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    # a default or an enum value is an option of the tool, not an example
    options = {v for p in props.values() if isinstance(p, Mapping)
               for v in [p.get("default"), *(p.get("enum") or ())]}
    for text in texts:
        for group in _EXAMPLE.findall(text):
            for value in re.findall(r"['\"“‘]([^'\"”’]+)['\"”’]", group) or [group]:
                value = value.strip("\"'“”‘’.,;:()")
                if value and value not in options and not set(terms(value)) & asked:
                    found.add(value)
    return found


_IN_FOLDER = re.compile(r"([\w.-]+\.[a-z]{1,4})\s+(?:in|from|under|inside)\s+(?:the\s+)?([\w./-]+)\s+"
                        r"(?:folder|directory|dir)\b", re.I)


def in_folders(values: Sequence[str], question: str) -> list[str]:
    """``values`` with a file the question places in a folder ("setup.md in the docs
    directory") as its path (``docs/setup.md``), which replaces the bare name."""
    paths = {m.group(1): f"{m.group(2).strip('/')}/{m.group(1)}"
             for m in _IN_FOLDER.finditer(question)}
    return list(dict.fromkeys(paths.get(v, v) for v in values))


_FILE_NAME = re.compile(r"[\w./-]*\w\.[a-z]{1,4}")
_PATHS = ("path", "file", "filename")


def file_names(spec: ToolSpec, values: Candidates) -> Candidates:
    """``values`` for ``spec``, whose only string argument is a path ("path", "file"), with
    the strings left to the file names among them ("docs/setup.md", not "open") when there
    are any: a file tool reads a name, not a verb of the question."""
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    strings = [k for k, p in props.items() if isinstance(p, Mapping) and p.get("type") == "string"]
    names = [v for v in values.strings if _FILE_NAME.fullmatch(v)]
    if len(strings) != 1 or strings[0].lower() not in _PATHS or not names:
        return values
    return dataclasses.replace(values, strings=tuple(names))


def first_step(tools: Sequence[ToolSpec], messages: Sequence[Message]) -> list[ToolSpec]:
    """The first of the tools the latest ``load_skill`` result made callable that needs no id
    (a search, not an action on what a search found): offered when the question chose the
    skill but shares no word with any of its tools ("Is the information desk open at
    night?": ``search_pois``)."""
    from reactloop.models._shaping import is_id

    loads = [m for m in messages if m.role == "tool" and m.name == "load_skill"
             and not m.is_error]
    if not loads:
        return []
    text = loads[-1].content
    named = [t for t in tools if not t.internal and re.search(rf"\b{re.escape(t.name)}\b", text)
             and not any(is_id(k) for k in t.parameters.get("required") or ())]
    named.sort(key=lambda t: text.find(t.name))
    return named[:1]


EXPRESSION = re.compile(r"[-(√]*\d[\d.,\s]*(?:(?:\*\*|[-+*/×÷^%])[\s(]*\d[\d.,]*\s*\)*\s*)+")
"""An arithmetic expression as typed ("(17 + 25) * 2", "2**10")."""


_SCALE = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_SHARE = {"half": "/ 2", "third": "/ 3", "quarter": "/ 4", "fifth": "/ 5", "tenth": "/ 10",
          "double": "* 2", "twice": "* 2", "triple": "* 3"}


def spoken_shares(question: str) -> list[str]:
    """The shares ``question`` says in words, written as expressions: "15 % of 240" is
    ``15 * 240 / 100``, "12 percent of 80" ``12 * 80 / 100``, "half of 3 thousand" ``3000 / 2``."""
    from reactloop._ranking import SPOKEN_SHARE

    out = []
    for m in SPOKEN_SHARE.finditer(question):
        amount = m.group(3).replace(",", "")
        if m.group(4):  # "3 thousand" is 3000
            value = float(amount) * _SCALE[m.group(4).lower()]
            amount = str(int(value)) if value.is_integer() else str(value)
        if m.group(1):
            out.append(f"{m.group(1)} * {amount} / 100")
        else:
            out.append(f"{amount} {_SHARE[m.group(2).lower().split()[-1]]}")
    return out


_SEARCH_ARGS = frozenset({"pattern", "term", "query", "keyword", "keywords", "regex"})
_WHERE_WORDS = ("file document folder workspace directory note mention talk configure define search "
                "map screen mark put display pin highlight doc explain say tell write wrote written "
                "describe cover about something anything somewhere anywhere word page says tells")
_PATTERNS = frozenset({"pattern", "regex"})
"""A text search's pattern argument: a word or two of the contents, never a clause (a whole
clause of a question is seldom written in a file as such), and, for a regular expression,
without regard to case (people type in lower case what files write capitalised)."""
_REGEX = re.compile(r"regular\s+expression|\bregex", re.I)
_META = re.compile(r"[.^$*+?()\[\]{}|\\]")


def _described(spec: ToolSpec, name: str) -> str:
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    about = props.get(name)
    return f"{spec.description} {about.get('description') or ''}" if isinstance(
        about, Mapping) else spec.description


_NEED = re.compile(r"\b(?:need|want|use|get|buy|find|rent|grab)\s+(?:to\s+)?(.+?)(?=\s+(?:before|after|"
                   r"when|while|during|until|since|because|so|if|at|in|on|near)\b|[,.?!;]|$)", re.I)


def need_clause(question: str) -> str:
    """What a need asks for ("I could really use a coffee before boarding": ``a coffee``;
    "I want to rent a car when I land": ``rent a car``), or empty."""
    m = _NEED.search(question)
    return m.group(1) if m else ""


_CLOCK = re.compile(r"(?:at\s+)?(?:\d{1,2}(?::\d{2})?\s*[ap]\.?m\.?|\d{1,2}:\d{2})", re.I)
"""A time of day said alone ("10:30pm", "at 7am"): when, never what a search looks for."""


def search_terms(spec: ToolSpec, values: Candidates, question: str = "",
                 names: Sequence[str] = (), data_terms: Sequence[str] = ()) -> Candidates:
    """``values`` for ``spec``, a search whose only required string argument is what to look
    for (``pattern``, ``term``, ``query``), without the spans that are only filler or say where
    to look ("search my documents for invoice": ``invoice``, not ``my`` or ``documents``); of
    them the ``names`` (of the data searched) said, when the question says one ("pop the
    check-in hall up on my map": ``check-in hall``, not ``pop``)."""
    from reactloop._ranking import terms, wanted
    from reactloop.models import _spelled
    from reactloop.models._shaping import content_span

    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    strings = [k for k in spec.parameters.get("required") or list(props)[:1]
               if isinstance(props.get(k), Mapping) and props[k].get("type") == "string"]
    if len(strings) != 1 or strings[0].lower() not in _SEARCH_ARGS or not values.strings:
        return values
    where = set(terms(_WHERE_WORDS)) | set(terms(spec.name))
    kept = tuple(v for v in values.strings if content_span(v, where)
                 and not _CLOCK.fullmatch(v.strip()))  # "at 10:30pm" is when, not what
    need = need_clause(question).lower()  # the thing needed, not when ("before boarding")
    kept = tuple(v for v in kept if not set(v.lower().split()) & _spelled.when_words(question)) or kept
    spans, kept = kept, tuple(v for v in kept if v.lower() in need) or kept
    if bought := tuple(v for v in spans if set(v.lower().split()) <= {  # "forgot my travel
            w for t in wanted(question, bought=True) for w in t.split()}):  # adapter … buy one?"
        return dataclasses.replace(values, strings=_spelled.bought_kind(bought, names) or bought)
    # "anything about Acme": the name, not "through"; but "in Terminal A" says where to look
    said = _names_said(question)
    where = {w for n in said if _located(n, question) for w in n.split()}
    proper = {n for n in said if not set(n.split()) & where}
    kept = tuple(v for v in kept if set(v.split()) & proper) or kept
    if strings[0].lower() in _PATTERNS:
        kept = tuple(v for v in kept if len(v.split()) <= 2) or kept
        if _REGEX.search(_described(spec, strings[0])):  # "instal" finds "Install the package"
            kept = tuple(v if v.startswith("(?i)") else "(?i)" + _META.sub(r"\\\g<0>", v)
                         for v in kept)
            from reactloop.models._files import any_word_pattern

            kept = any_word_pattern(kept, question)  # "(?i)open|morn", not "(?i)time"
    kept = _documented_words(spec, kept)  # "eat": the "food" the search's docs list
    from reactloop._words import plain

    known = {plain(n) for n in names if not _located(n, question)}
    kept += _spelled.compound_heads(spec, kept, known)  # "the bookshop": the data's "books"
    # "Need aspirin badly. is there a chemist?": what the data knows, if the need is not; but
    # "gate B12" says more (a code) than the data's "gate" ("the family room" than "family")
    from reactloop._ranking import asked_open  # "boarding's at 9, how late can I stay in X": X

    data = ((_spelled.data_form(question, names) if asked_open(question) else ())
            or tuple(v for v in kept if plain(v) in known) or (_spelled.wanted_kind(need, names) if need else ())
            or tuple(v for v in spans if plain(v) in known)  # "an espresso before boarding"
            or _spelled.data_form(question, names, data_terms))  # "nurse her": the data's "nursing"
    if data and not any(re.search(rf"(?i)^{re.escape(d)}\s+\w*\d", v) for v in kept for d in data):
        kept = tuple(v for v in data if not any(
            v != o and f" {v.lower()} " in f" {o.lower()} " for o in data))
    return dataclasses.replace(values, strings=kept) if kept else values


def _documented_words(spec: ToolSpec, values: tuple[str, ...]) -> tuple[str, ...]:
    """``values`` with, before each one-word value, the everyday related words its search's
    own documentation uses ("eat": ``food``, which the airport's categories list), when every
    one-word value has one (else a word of its own names the thing: "eat noodles")."""
    from reactloop._ranking import _RELATED, _document

    doc = set(_document(spec))
    related = {v: [r for r in _RELATED.get(v.lower(), ()) if r in doc]
               for v in values if " " not in v}
    if not related or not all(related.values()):  # "eat noodles": the noodles are the thing
        return values
    return tuple(dict.fromkeys(w for v in values for w in [*related.get(v, ()), v]))


def _located(name: str, question: str) -> bool:
    """Whether ``question`` says ``name`` as where ("the nearest restroom in Terminal A"),
    not as what."""
    return bool(re.search(rf"\b(?:in|at|near|inside|within|from)\s+(?:the\s+)?"
                          rf"{re.escape(name)}(?!\w)", question, re.I))


def _names_said(question: str) -> set[str]:
    """The capitalised names of ``question`` not at a sentence's start ("Acme"), alone and
    joined ("Skyline Lounge")."""
    from reactloop.models._pragmatics import capitalised_names

    words = capitalised_names(question)
    joined = re.findall(r"\b[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)+", question)
    return {*words, *(j for j in joined if set(j.split()) <= set(words))}


def named_values(spec: ToolSpec, question: str, values: Candidates) -> Candidates:
    """``values`` for ``spec`` left to the names the question says ("consolidation_mart")
    when it says as many as the tool takes required strings: a source is a name, never the
    company number "2001" of the same question."""
    names = tuple(dict.fromkeys(_NAMED.findall(question)))
    if not names or _string_arguments(spec) != len(names) or not values.strings:
        return values
    return dataclasses.replace(values, strings=names)


def fit_values(spec: ToolSpec, question: str, values: Candidates,
               names: Sequence[str] = (), terms: Sequence[str] = ()) -> Candidates:
    """``values`` for ``spec`` fitted to what its arguments are: an expression
    (:func:`expressions`), what a search looks for (:func:`search_terms`; a name the loaded
    skill's data holds, ``names``, when the question says one; a word of its sentences,
    ``terms``, as said), names (:func:`named_values`)."""
    searched = search_terms(spec, expressions(spec, question, values), question, names, terms)
    return named_values(spec, question, near_values(spec, question, searched, names))


def loaded_names(tools: Sequence[ToolSpec], messages: Sequence[Message]) -> tuple[str, ...]:
    """The names the data of the skill loaded last holds ("Cafe Aroma"), and its one-word
    values ("doctor"), as its ``load_skill`` choice lists them
    (:data:`reactloop._ranking.NAMES_MARK`, :data:`~reactloop._ranking.WORDS_MARK`)."""
    return loaded_data(tools, messages)[0]


def loaded_data(tools: Sequence[ToolSpec], messages: Sequence[Message]
                ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """:func:`loaded_names`, and the words of the same skill's data sentences ("fries" of
    "Burgers and fries.", :data:`~reactloop._ranking.TERMS_MARK`), read in one pass."""
    from reactloop._ranking import NAMES_MARK, TERMS_MARK, WORDS_MARK

    ok = {m.tool_call_id for m in messages if m.role == "tool" and not m.is_error}
    loaded = [v for m in messages for c in m.tool_calls if c.id in ok
              and isinstance(c.arguments, Mapping) for v in c.arguments.values()
              if any(t.choices for t in tools if t.name == c.name) and isinstance(v, str)]
    text = next((t for s in tools for v, t in s.choices if loaded and v == loaded[-1]), "")
    head, _, terms = text.partition(TERMS_MARK)
    names, _, words = head.partition(WORDS_MARK)
    listed = [*names.partition(NAMES_MARK)[2].split("; "), *words.split("; ")]
    return tuple(n for n in listed if n), tuple(terms.split())


def expressions(spec: ToolSpec, question: str, values: Candidates) -> Candidates:
    """``values`` for ``spec``, whose only string argument is an expression, left to the
    question's expressions (as typed, or its powers said in words) when it has any: "Can you
    work out (50 - 5) / 9 for me?" is ``(50 - 5) / 9``, not a span with "for me"."""
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    strings = [k for k, p in props.items() if isinstance(p, Mapping) and p.get("type") == "string"]
    if len(strings) != 1 or "expression" not in strings[0].lower() or not values.strings:
        return values
    typed = [e for e in values.strings if EXPRESSION.fullmatch(e)]
    from reactloop.models._operators import spoken_arithmetic, spoken_splits

    found = [*spoken_splits(question), *spoken_powers(question), *spoken_shares(question),
             *spoken_arithmetic(question), *typed]
    if not found:
        return values
    return dataclasses.replace(values, strings=tuple(dict.fromkeys(found)))


def _zone_argument(name: str, schema: Any) -> bool:
    text = f"{name} {schema.get('description') or ''}".lower() if isinstance(
        schema, Mapping) else ""
    return "timezone" in text or "time zone" in text or "iana" in text


def zone_choices(spec: ToolSpec, question: str) -> ToolSpec:
    """``spec`` with its timezone arguments restricted to the IANA zones of the places the
    question names ("15:00 in London" offers ``Europe/London``), when it names any: a zone is
    written the database's way, a city is said the user's way (:mod:`reactloop._zones`); which
    of them is the source and which the target is the question's order (``order_directions``)."""
    from reactloop._zones import zones_in

    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    names = [k for k, p in props.items() if _zone_argument(k, p) and isinstance(p, Mapping)
             and p.get("type") == "string" and "enum" not in p]
    zones = zones_in(question) if names else []
    if not zones:
        return spec
    from reactloop.models._shaping import paired_zones

    # two places said plainly: the first is the source, the second the target, never one twice
    pair = paired_zones(spec, names, zones, question) or {}
    changed = {k: {**p, "enum": pair.get(k, zones)} if k in names else p
               for k, p in props.items()}
    return dataclasses.replace(spec, parameters={**spec.parameters, "properties": changed})


def trip_choices(spec: ToolSpec, question: str, names: Sequence[str] = ()) -> ToolSpec:
    """``spec`` with its start and destination string arguments (``start``/``origin``,
    ``destination``) restricted to the places of the trip the question says
    (:func:`trip_places`): a route goes from where the user is to where they go, never from
    a stray number ("3") or verb ("Guide") of the question."""
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    required = spec.parameters.get("required") or ()
    start = [k for k in required if k.lower() in _STARTS]
    end = [k for k in required if k.lower() in _ENDS]
    places = trip_places(question, names) if len(start) == len(end) == 1 else None
    if places is None or any("enum" in (props.get(k) or {}) for k in (*start, *end)):
        return spec
    changed = {k: {**p, "type": "string", "enum": [places[0] if k in start else places[1]]}
               if k in (*start, *end) else p for k, p in props.items()}
    return dataclasses.replace(spec, parameters={**spec.parameters, "properties": changed})


def settled(spec: ToolSpec, question: str) -> bool:
    """Whether ``question`` gives every required argument of ``spec``: a trip's start and
    destination (:func:`trip_places`), a value in each documented format (a date, said any
    way), an option said ("How much is a flexi ticket from Northport to Gull Island on 3 March
    2027?" settles a search by origin, destination and date): a task for the tool, not a
    question for a document."""
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    required = [k for k in spec.parameters.get("required") or () if k in props]
    places = trip_places(question) if is_route(spec) else None
    options = said_options(spec, question)
    return bool(required) and all(
        (places is not None and k.lower() in _STARTS | _ENDS)
        or ((rx := _format_of(props[k])) is not None and _has(rx, question))
        or k in options for k in required)


def _searches(spec: ToolSpec) -> bool:
    """Whether ``spec``'s first argument says what to look for (``term``, ``query``): a search."""
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    first = [*(spec.parameters.get("required") or ()), *props][:1]
    return bool(first) and first[0].lower() in _SEARCH_ARGS


def is_route(spec: ToolSpec) -> bool:
    """Whether ``spec`` takes a route: a start and a destination among its required arguments."""
    required = {k.lower() for k in spec.parameters.get("required") or ()}
    return bool(required & _STARTS and required & _ENDS)


def argument_choices(spec: ToolSpec, question: str, names: Sequence[str] = ()) -> ToolSpec:
    """``spec`` with the arguments the question settles restricted to its values: timezones
    (:func:`zone_choices`), a trip's start and destination (:func:`trip_choices`), a time of
    day said any way ("2 pm": ``14:00``, :func:`reactloop.models._times.time_choices`), a
    date said any way ("21 October 2027": ``2027-10-21``, :func:`~reactloop.models._dates.
    date_choices`)."""
    from reactloop.models._dates import date_choices
    from reactloop.models._times import time_choices

    timed = time_choices(trip_choices(zone_choices(spec, question), question, names), question)
    return name_choices(date_choices(timed, question), question)


def settled_choices(spec: ToolSpec, turn: Any, names: Sequence[str]) -> ToolSpec:
    """:func:`argument_choices` for the ``turn`` (``reactloop.models.local.Turn``), unless
    ``spec`` is the tool that just failed: its next try may need another value."""
    if turn.failed and spec.name == turn.results[-1].name:
        return spec
    return argument_choices(spec, turn.question or "", names)


def name_choices(spec: ToolSpec, question: str) -> ToolSpec:
    """``spec`` with each of its required string arguments restricted to its own one of the
    names the question says ("Do fi_reporting and consolidation_mart agree?": ``source_a``
    the first, ``source_b`` the second), when it says as many (two or more) as the tool takes:
    never one name twice."""
    names = list(dict.fromkeys(_NAMED.findall(question)))
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    keys = [k for k in spec.parameters.get("required") or () if isinstance(props.get(k), Mapping)
            and props[k].get("type") == "string"]
    if len(names) < 2 or len(keys) != len(names) or any("enum" in props[k] for k in keys):
        return spec
    changed = {k: {**p, "enum": [names[keys.index(k)]]} if k in keys else p
               for k, p in props.items()}
    return dataclasses.replace(spec, parameters={**spec.parameters, "properties": changed})


def needs_found_id(spec: ToolSpec, question: str, found: bool) -> bool:
    """Whether ``spec`` acts on what a search finds (a required id: ``poi_id``) while nothing was
    found yet (``found``: this turn) and the question gives no value for it (no digit, or one of
    a place something is near: "Show the Burger Point", "the closest cafe to gate 3")."""
    from reactloop.models._dates import without_dates
    from reactloop.models._shaping import is_id

    # a date or a time of day is no id ("flights to Paris on 2027-11-05", "on 21 October")
    said = _DATE.sub(" ", without_dates(question))
    if found or (any(c.isdigit() for c in said) and near_search(question) is None):
        return False
    return any(is_id(k) for k in spec.parameters.get("required") or ())


_TRIP = re.compile(r"\bfrom\s+\S.*?\bto\s+\S|\bto\s+\S.*?\bfrom\s+\S|\bhow\s+far\b|\b(?:way|"
                   r"walk|route|directions|get|guide\s+me|take\s+me)\s+(?:back\s+)?to\s+\S", re.I)


def is_trip(question: str, names: Sequence[str] = ()) -> bool:
    """Whether ``question`` asks for the way between places (see :func:`trip_query`), or
    says a trip's two places (:func:`trip_places`: "flights frankfurt to new york", or two of
    the data's ``names`` joined by "to": "a seat Paris to London")."""
    return bool(_TRIP.search(question)) or trip_places(question, names) is not None


def trip_query(question: str, names: Sequence[str] = ()) -> str:
    """``question`` for ranking a next step: one that goes "from" one place "to" another asks
    for the way between them (a route, directions from a start to a destination), not for
    either place alone."""
    if not is_trip(question, names):
        return question
    return f"{question} route directions walking start destination"


_NAMED = re.compile(r"(?<![\w.])[a-z]\w*_\w+")
"""A name of a thing the question refers to ("fi_reporting", "consolidation_mart")."""


def _string_arguments(spec: ToolSpec) -> int:
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    return sum(1 for k in spec.parameters.get("required") or ()
               if isinstance(props.get(k), Mapping) and props[k].get("type") == "string")


def _documents_asked(loaded: str, question: str) -> bool:
    """Whether a word of a document the skill's instructions name (``references/fare_rules.md``:
    fare, rules) is a word of ``question``."""
    from reactloop._ranking import terms

    asked = set(terms(question))
    return any(set(terms(" ".join(re.split(r"[/_.-]", path)))) & asked
               for path in _REFERENCE.findall(loaded))


def skill_offer(listed: Sequence[ToolSpec], tools: Sequence[ToolSpec],
                messages: Sequence[Message], question: str, limit: int,
                places: Sequence[str] = ()) -> tuple[ToolSpec, ...]:
    """The offer right after a skill was loaded for ``question``: the skill's own tools (those
    its ``load_skill`` result names) ranked for the question — a plain tool that shares a
    word ("total": ``add``) is no step of the skill — and of them, when the question names
    things ("bpc_reporting against fi_reporting"), those taking as many names as it gives
    (two: the comparison; one: the query). None fits, or only tools acting on an id nothing
    found yet: the skill's first step (:func:`first_step`, the search) first. The internal
    tools of ``listed`` stay. ``places``: the names the skill's data holds (two of them joined
    by "to" are a trip: "a seat Paris to London")."""
    from reactloop._ranking import select_tools

    loads = [m for m in messages if m.role == "tool" and m.name == "load_skill"
             and not m.is_error]
    own = [t for t in tools if not t.internal and loads
           and re.search(rf"\b{re.escape(t.name)}\b", loads[-1].content)]
    if not own:
        return tuple(listed)
    names = set(_NAMED.findall(question))
    arity = [t for t in own if names and _string_arguments(t) == len(names)]
    if not is_trip(question, places):  # a route needs a start and a destination said
        own = [t for t in own if not is_route(t)] or own
    ranked = select_tools(arity or own, trip_query(question, places), limit, min_ratio=0.5)
    if arity and not ranked:
        ranked = arity[:limit]
    # a document the skill names that the question asks about ("baggage rules":
    # references/fare_rules.md) is offered after its tools
    reader = [t for t in tools if t.name == READ and t not in ranked]
    question = unpriced(question, places)  # "Paris to London on 17 Nov: what's the fare?"
    if reader and _documents_asked(loads[-1].content, question):
        ranked = [*ranked[:max(1, limit) - 1], *reader]
    acting = [t for t in ranked if t.name != READ]
    if acting and all(needs_found_id(t, question, False) for t in acting):
        # "until what time is Cafe Aroma open?": details need the id a search finds first
        from reactloop._ranking import name_matches

        search = [t for t in own if (_searches(t) or name_matches(t, question))
                  and not needs_found_id(t, question, False) and t not in ranked]
        ranked = [*search, *ranked][:max(1, limit)]
    return (*(ranked or first_step(tools, messages)), *(t for t in listed if t.internal))


def essential(spec: ToolSpec, question: str = "") -> ToolSpec:
    """``spec`` with only its required arguments (or its first one, made required, when none
    is required), and the optional ones whose documented options ``question`` says
    (:func:`said_options`: "business class" fills ``cabin``, restricted to ``business``)."""
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    required = [k for k in spec.parameters.get("required") or () if k in props]
    said = {k: v for k, v in said_options(spec, question).items() if k not in required}
    keep = (required or list(props)[:1]) + list(said)
    if len(keep) == len(props) and set(keep) == set(required):
        return spec
    kept = {k: {**props[k], "enum": said[k]} if k in said else props[k] for k in keep}
    params = {**spec.parameters, "properties": kept, "required": keep}
    return dataclasses.replace(spec, parameters=params)


_OPTIONS = re.compile(r"\b[a-z]+(?:,\s*[a-z]+)+,?\s+or\s+[a-z]+\b")
"""Options a description lists: "economy, premium, business or first"."""


def said_options(spec: ToolSpec, question: str) -> dict[str, list[str]]:
    """The string arguments of ``spec`` whose options (an ``enum``, or a list in their
    description: "economy, premium, business or first") ``question`` says, each with the
    options said; of two said one after the other ("premium economy") the first, which
    qualifies the second."""
    words = set(re.findall(r"[a-z]+", question.lower()))
    out: dict[str, list[str]] = {}
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    for name, p in props.items():
        if not isinstance(p, Mapping) or p.get("type") != "string":
            continue
        options = [str(v) for v in p.get("enum") or ()] or [
            w for m in _OPTIONS.findall(str(p.get("description") or "").lower())
            for w in re.findall(r"[a-z]+", m) if w != "or"]
        said = [o for o in options if o.lower() in words]
        # "premium economy": an option said before another qualifies it, the first is meant
        said = [o for o in said if not any(re.search(
            rf"\b{re.escape(x.lower())}\s+{re.escape(o.lower())}\b", question.lower())
            for x in said if x != o)]
        if said and len(said) < len(options):
            out[name] = said
    return out
