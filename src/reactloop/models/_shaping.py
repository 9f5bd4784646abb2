"""Small pure helpers of the embedded model's guidance (:mod:`reactloop.models.local`), each a
lever measured in ``benchmarks/evals/README.md``:

- :func:`render_result`: a tool result (JSON, or plain text) as one line of text, so that an answer
  after it can start from it (the records' names, a conversion's target) as it starts from a
  short result;
- :func:`culprits`: the values of a failed call that its error quotes back (``'workspace' does
  not exist``): a retry may not copy them again;
- :func:`content_span`, :func:`id_arguments`: a loaded skill's tools copy content words, not
  the skill's own name ("airport"); an id argument copies an id a result gave;
- :func:`order_directions`: a call's from/to arguments put the way the question says them
  ("from London to Tokyo" never becomes Tokyo → London);
- :func:`headline`: a JSON object result's own ``headline`` (a one-line summary a tool may put
  first) begins the answer; :func:`distinct`: of two offered tools whose names mean the same
  (``get_directions``/``show_directions``) only the better-ranked one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from reactloop._ranking import terms
from reactloop.messages import Message, ToolCall, ToolSpec
from reactloop.models._doc_tables import table_cells

__all__ = ["MAX_RENDERED", "content_span", "culprits", "distinct", "headline", "id_arguments",
           "is_id", "order_directions", "paired_zones", "render_result", "result_ids"]

MAX_RENDERED = 240
"""The longest rendering of a structured result an answer starts with."""
_ID = re.compile(r"(^|_)id$")


_ISO = re.compile(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::00(?:\.0+)?)?(:\d{2}(?:\.\d+)?)?"
                  r"(Z|[+-]\d{2}:\d{2})?")
_FIRST = ("target", "result", "converted")
"""Members that hold what a result was asked for (a conversion's target) and so come first."""


def _scalar(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    # "2026-11-27T09:40:00+03:30" as a person writes it: "2026-11-27 09:40 (UTC+03:30)"
    return _ISO.sub(lambda m: f"{m[1]} {m[2]}{m[3] or ''}" + (
        f" (UTC{m[4] if m[4] != 'Z' else ''})" if m[4] else ""), str(value)).strip()


def _first(data: Mapping[str, Any]) -> list[tuple[Any, Any]]:
    """A JSON object's members, the asked-for ones (:data:`_FIRST`) first."""
    return sorted(data.items(), key=lambda kv: not str(kv[0]).lower().startswith(_FIRST))


def _skipped(key: Any, value: Any) -> bool:
    return bool(_ID.search(str(key))) or isinstance(value, bool) or value in (None, "", [], {})


def _flat(value: Any, *, record: bool = False) -> str:
    """``value`` as text (ids, flags and empty values left out): a record of a list by its
    values ("Gate 15, gate, Terminal B"), any other object by ``key value`` pairs."""
    if isinstance(value, Mapping):
        return ", ".join(t if record else f"{k} {t}" for k, v in value.items()
                         if not _skipped(k, v) and (t := _flat(v)))
    if isinstance(value, list):
        return ", ".join(t for v in value if (t := _flat(v, record=True)))
    return _scalar(value)


def render_result(text: str, question: str = "") -> str:
    """A tool result as one line: a JSON object's members as ``key: values``, a JSON list's
    records as their values, plain text (a file read, a document) as its lines, joined by
    ``;`` and cut at one within :data:`MAX_RENDERED` characters; empty for a JSON scalar. The
    records or lines that share the most words with ``question`` come first ("gate 15": Gate
    15 before Gate 1; "a refund": the fare table's refund row before the title), and the cells
    of a document's table it asks for first (:func:`~reactloop.models._doc_tables.table_cells`)."""
    cut = False
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        cut = True
        from reactloop._ranking import terms

        data = _whole_records(text)  # a shortened JSON result: the records kept whole
        items = [] if data else text_lines(text, set(terms(question, expand=True)))
        if not data and (found := _target(text, question) or table_change(text, question)
                         or table_difference(
                text, question) or _total(text, question)):
            items = [found, *items]  # "by how much did february beat january?" in a CSV
        if not data and (found := table_cells(text, question)):
            items = [found, *items]  # "the carry-on limit in premium?" of a fare table
    if isinstance(data, Mapping):  # a conversion's target before its source
        items = [f"{k}: {t}" for k, v in _first(data) if not _skipped(k, v) and (t := _flat(v))]
    elif isinstance(data, list):
        asked = set(_TOKEN.findall(question.lower()))
        records = [t for v in data if (t := _flat(v, record=True))]
        if _asks_list(question) and all(isinstance(v, Mapping) and "name" in v for v in data):
            records = [str(v["name"]) for v in data]  # "Which sources are there?": their names
        items = sorted(records, key=lambda t: -len(set(_TOKEN.findall(t.lower())) & asked))
    elif data is not None:
        return ""
    if not cut and (found := file_count(data, question) or record_rows(data, question)
                    or extreme(data, question) or figure(data, question)):  # "the total for company 1002": the sum, first
        items = [found, *items]
    out = ""
    for item in items:
        joined = f"{out}; {item}" if out else item
        if len(joined) > MAX_RENDERED:
            break
        out = joined
    if not out and items:
        out = items[0][:MAX_RENDERED - 1].rstrip() + "…"
    return " ".join(out.split())


_QUANTITY = frozenset({"total", "sum", "much", "altogether", "overall", "year", "spend", "spent",
                       "paid", "pay", "earn", "cost"})
_CODE = re.compile(r"\b\d{3,}\b")


def _records(data: Any) -> list[Mapping[str, Any]]:
    """The first list of records of a result (a table's rows, a comparison's differences),
    each with its nested members (``key: {company: …}``) lifted to its own."""
    if isinstance(data, Mapping):
        data = next((v for v in data.values() if isinstance(v, list) and v
                     and isinstance(v[0], Mapping)), [])
    rows = [r for r in data if isinstance(r, Mapping)] if isinstance(data, list) else []
    return [{**{k: v for k, v in r.items() if not isinstance(v, Mapping)},
             **{k: v for n in r.values() if isinstance(n, Mapping) for k, v in n.items()}}
            for r in rows]


_DIFFER = frozenset({"differ", "difference", "gap", "discrepancy", "deviation", "diff", "agree",
                     "match", "mismatch", "reconcile", "consistent"})


_RECORD = re.compile(r"\{[^{}]*\}")


def _whole_records(text: str) -> list[Any] | None:
    """The whole records of a JSON result cut short (a long table's first rows), or None."""
    if not text.lstrip().startswith(("{", "[")):
        return None
    records = []
    for m in _RECORD.finditer(text):
        try:
            records.append(json.loads(m.group(0)))
        except ValueError:
            continue
    return records or None


def figure(data: Any, question: str) -> str:
    """The figure a question asks of a table result: the records whose fields hold the
    question's codes ("company 1002", "period 202402"), their numeric measure summed ("What's
    the total amount for company 1002?": ``amount total 3231000 (3 records: 1002)``), or the
    figure of the records a text value it says names ("personnel expenses of company 1001?");
    empty when it asks neither or the records have no one measure to sum."""
    from reactloop._ranking import terms

    records = _records(data)
    asked = set(terms(question))
    if asked & _DIFFER:  # "by how much do they differ", "where's the gap": the difference
        asked |= {"diff", "total"}
    if not records:
        return ""
    whole, (records, said) = records, _narrowed(records, question)
    if not asked & _QUANTITY and not any(not _CODE.fullmatch(v) for v in said):
        found = lookup(whole, question)  # nor a row named ("personnel expenses of 1001?")
        if found or len(records) != 1 or len(whole) == 1:
            return found  # the one record its codes name ("account 500000, company 1002"): its figure
    measures = [k for k, v in records[0].items() if isinstance(v, int | float)
                and not isinstance(v, bool) and not _ID.search(str(k))] if records else []
    named = sorted((k for k in measures if set(terms(k)) & asked),  # a difference asked: its own
                   key=lambda k: "diff" not in terms(k) or not asked & _DIFFER)
    # several named ("differ": absolute_diff, percentage_diff): the first, the absolute one
    measure = named[0] if named else measures[0] if len(measures) == 1 else None
    if measure is None or not all(isinstance(r.get(measure), int | float) for r in records):
        return "" if asked & _QUANTITY else lookup(records, question)
    total = _scalar(round(sum(r[measure] for r in records), 2))
    scope = f"{len(records)} record{'s' if len(records) > 1 else ''}"
    scope += f": {', '.join(said)}" if said else ""
    if asked & _DIFFER and 1 < len(records) <= _PARTS:  # where the difference is: its parts
        scope += "; " + ", ".join(_part(r, measure, said) for r in sorted(
            records, key=lambda r: -abs(r[measure])))
    return f"{measure} {'total ' if len(records) > 1 else ''}{total} ({scope})"


_PARTS = 5


def _narrowed(records: list[Mapping[str, Any]], question: str
              ) -> tuple[list[Mapping[str, Any]], list[str]]:
    """The records holding the question's codes ("company 2001") and the text values it says
    ("on rent and facilities": an account named "Rent and facilities") and the months it says
    in words (:func:`~reactloop.models._months.month_codes`), with what it said."""
    from reactloop._words import says
    from reactloop.models._months import month_codes

    said = []  # a month said in words ("January 2024") is the period a record writes "202401"
    for code in dict.fromkeys([*_CODE.findall(question), *month_codes(question)]):
        keys = {k for r in records for k, v in r.items() if _scalar(v) == code}
        if keys:
            records = [r for r in records if any(_scalar(r.get(k)) == code for k in keys)]
            said.append(code)
    named = sorted({v for r in records for v in r.values() if isinstance(v, str)
                    and v not in said and _WORDY.search(v) and (says(question, v)
                                                                or _reordered(question, v))})
    for value in named:  # each said value narrows the records that hold it
        kept = [r for r in records if value in r.values()]
        if kept and len(kept) < len(records):
            records, said = kept, [*said, value]
    return records, said


def _reordered(question: str, value: str) -> bool:
    """Whether ``question`` says the words of a ``value`` of two or three words one after the
    other in another order ("export revenue" for "Revenue export")."""
    from reactloop._words import plain

    own = plain(value).split()
    if not 2 <= len(own) <= 3:
        return False
    asked = plain(question).split()
    return any(sorted(asked[i:i + len(own)]) == sorted(own) for i in range(len(asked)))


_WORDY = re.compile(r"[^\W\d_]{3}|[^\W\d_]\d|\d[^\W\d_]")
"""A text value to look for in a question: a word ("Rent and facilities") or a code of
letters and digits ("S7"), not a bare number ("2": 2 kg of anything)."""


def _part(record: Mapping[str, Any], measure: str, said: Sequence[str]) -> str:
    """One record of a summed difference as its own labels (those the question did not say)
    and its value: ``202401 major_diff 8000``."""
    labels = sorted((v for v in record.values() if isinstance(v, str) and v not in said),
                    key=lambda v: not _CODE.fullmatch(v))  # its codes (202401) first
    return " ".join([*labels, _scalar(record[measure])])


def lookup(records: Sequence[Mapping[str, Any]], question: str) -> str:
    """The value a question asks of the records holding its codes: a field it names
    ("which currency is company 2001 reported in?": ``currency USD (3 records: 2001)``);
    empty when it names no code or no text field."""
    from reactloop._ranking import terms

    codes = [c for c in dict.fromkeys(_CODE.findall(question))
             if any(_scalar(v) == c for r in records for v in r.values())]
    if not codes:
        return ""
    found = [r for r in records if all(any(_scalar(v) == c for v in r.values()) for c in codes)]
    # "account 630000" names a record by its code, not the field account_name
    labels = {t for w, c in _LABELLED.findall(question) if c in codes for t in terms(w)}
    asked = set(terms(question))
    fields = [k for k in (found[0] if found else {}) if set(terms(str(k))) & asked
              and not set(terms(str(k))) & labels
              and not any(_scalar(r.get(k)) in codes for r in found)]
    if len(fields) != 1:
        return ""
    values = list(dict.fromkeys(_scalar(r.get(fields[0])) for r in found))
    scope = f"{len(found)} record{'s' if len(found) > 1 else ''}: {', '.join(codes)}"
    return f"{fields[0]} {', '.join(values)} ({scope})"


_LABELLED = re.compile(r"\b([A-Za-z]\w*)\s*[:#=]?\s*(\d{3,})\b")
"""A code said after the word that names its field ("account 630000")."""
_MORE = re.compile(r"\b(?:by\s+how\s+much|beat|exceed|differ\w*|difference|gap)\b|"
                   r"\b(?:more|less|fewer|higher|lower|bigger|smaller)\b.*\bthan\b", re.I)


def table_difference(text: str, question: str) -> str:
    """The difference a question asks between two rows of a CSV text (a file read, its line
    numbers left out) that it names by a cell ("By how much did february beat january?":
    ``amount february 1350 - january 1200 = 150``), in the question's order; empty otherwise."""
    import csv

    lines = [_NUMBERED.sub("", line) for line in text.splitlines() if line.strip()]
    rows = list(csv.reader(lines))
    if len(rows) < 3 or not _MORE.search(question) or len({len(r) for r in rows}) != 1:
        return ""
    header, body = rows[0], rows[1:]
    said = question.lower()
    named = sorted((r for r in body if any(c.strip() and re.search(
        rf"\b{re.escape(c.strip().lower())}\b", said) for c in r if not _number(c))),
        key=lambda r: min(said.find(c.strip().lower()) for c in r
                          if c.strip() and c.strip().lower() in said))
    measures = [i for i in range(len(header)) if named and all(
        _number(r[i]) is not None for r in named)]
    if len(named) != 2 or len(measures) != 1:
        return ""
    i = measures[0]
    a, b = (_number(r[i]) or 0.0 for r in named)
    label = [next(c for c in r if _number(c) is None) for r in named]
    return (f"{header[i]} {label[0]} {_scalar(a)} - {label[1]} {_scalar(b)} = "
            f"{_scalar(round(a - b, 6))}")


def table_change(text: str, question: str) -> str:
    from reactloop.models._changes import table_change as change
    from reactloop.models._projections import table_projection
    from reactloop.models._scaled_rows import row_repeated, row_share

    # "say march goes up by the same amount february did": the next row projected, first;
    # "a whole year of months like january", "february's share of the total" before both
    return (row_share(text, question) or row_repeated(text, question)
            or table_projection(text, question) or change(text, question))


def record_rows(data: Any, question: str) -> str:
    from reactloop.models._record_rows import record_rows as rows

    return rows(_records(data), question, _narrowed)  # "how much did it drop from 202401 to 202403?"


def extreme(data: Any, question: str) -> str:
    from reactloop.models._extremes import extreme as pick

    return pick(_records(data), question, _narrowed)  # "which company had the highest total?"


def file_count(data: Any, question: str) -> str:
    from reactloop.models._listing import file_count as count

    return count(data, question)


def _target(text: str, question: str) -> str:
    from reactloop.models._tables import table_target

    return table_target(text, question)  # "we aimed for 2,500: did we beat it, by how much?"


def _total(text: str, question: str) -> str:
    from reactloop.models._tables import table_total

    return table_total(text, question)


def _number(cell: str) -> float | None:
    try:
        return float(cell.replace(",", "").strip())
    except ValueError:
        return None


def _asks_list(question: str) -> bool:
    """Whether ``question`` asks for the members of a plural ("Which sources are available?",
    "List the sources")."""
    from reactloop._ranking import terms

    return bool(question) and "list" in terms(question, expand=True)


_NUMBERED = re.compile(r"^\s*\d+\t")
_OMITTED = re.compile(r"^\[… \d+ characters omitted")


def text_lines(text: str, asked: set[str]) -> list[str]:
    """The lines of a plain-text result (a file's, without the line numbers a reader adds),
    those sharing most words (``asked``: stemmed terms of the question) first; blank lines,
    table rules and lines too long to begin an answer left out."""
    from reactloop._ranking import terms

    lines = [" ".join(_NUMBERED.sub("", line).split()) for line in text.splitlines()]
    # a line too long to begin an answer is left out, not cut (MAX_RENDERED of _shaping)
    lines = [line for line in lines if line.strip("|-: ") and len(line) <= 240
             and not _OMITTED.match(line)]  # the context's excerpt marker is no content
    return sorted(lines, key=lambda line: -len(set(terms(line)) & asked))


_TOKEN = re.compile(r"[a-z]+|\d+")


def _ids(value: Any, out: list[tuple[str, set[str]]]) -> None:
    if isinstance(value, Mapping):
        words = {w for v in value.values() if isinstance(v, (str, int)) and not isinstance(v, bool)
                 for w in _TOKEN.findall(str(v).lower())}
        for k, v in value.items():
            if _ID.search(str(k)) and isinstance(v, int) and not isinstance(v, bool):
                out.append((json.dumps(v), words))
            else:
                _ids(v, out)
    elif isinstance(value, list):
        for v in value:
            _ids(v, out)


def result_ids(results: Sequence[Message], question: str = "") -> tuple[str, ...]:
    """The ids (members named ``id`` or ``..._id``) of the JSON results, in order: what an id
    argument of the next call copies ("show it" after a search). When records share words with
    ``question`` ("gate 3": the record named "Gate 3"), only the ids of those sharing the most."""
    found: list[tuple[str, set[str]]] = []
    for m in results:
        try:
            _ids(json.loads(m.content), found)
        except (json.JSONDecodeError, ValueError):
            continue
    asked = set(_TOKEN.findall(question.lower()))
    best = max((len(words & asked) for _, words in found), default=0)
    return tuple(dict.fromkeys(i for i, words in found if len(words & asked) >= best))


def is_id(name: str) -> bool:
    """Whether an argument's name says it is an id (``id``, ``poi_id``)."""
    return bool(_ID.search(name))


_QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"")


def culprits(messages: Sequence[Message], failed: Sequence[Message]) -> dict[str, set[str]]:
    """Per tool, the string values of its failed calls that their errors quote back (the wrong
    value, as in "'workspace' does not exist", or within a quoted message: "'No time zone found
    with key Paris'"), which a retry may not copy again."""
    calls = {c.id: c for m in messages for c in m.tool_calls}
    out: dict[str, set[str]] = {}
    for result in failed:
        call = calls.get(result.tool_call_id or "")
        if call is None or not isinstance(call.arguments, Mapping):
            continue
        quoted = {q for pair in _QUOTED.findall(result.content) for q in pair if q}
        # quoted alone ('Paris' does not exist) or as a word of a quoted message ('No time
        # zone found with key Paris')
        bad = {v for v in call.arguments.values() if isinstance(v, str) and v.strip() and (
            v in quoted or any(re.search(rf"(?<![\w/]){re.escape(v)}(?![\w/])", q)
                               for q in quoted))}
        if bad:
            out.setdefault(call.name, set()).update(bad)
    return out


_SOURCE = ("source", "from", "origin", "start")
_TARGET = ("target", "to", "destination", "dest", "end")


def _role(name: str) -> tuple[str, str] | None:
    parts = name.lower().split("_")
    for i, part in enumerate(parts):
        rest = "_".join(parts[:i] + parts[i + 1:])
        if part in _SOURCE:
            return "source", rest
        if part in _TARGET:
            return "target", rest
    return None


def order_directions(call: ToolCall, question: str) -> ToolCall:
    """``call`` with a source/target (from/to) pair of string arguments swapped when the question
    says them the other way: "from B" for the target's value, "to A" for the source's, or the
    source's value after the question word and the target's before it ("When it is 09:00 in
    A, what time is it in B?"); a time said in a place ties that place to the source ("what
    time in B is 19:25 in A?", :func:`~reactloop.models._times.zone_of_time`) before all."""
    args = call.arguments
    roles: dict[str, dict[str, str]] = {}
    for name in args:
        role = _role(str(name))
        if role is not None and isinstance(args[name], str):
            roles.setdefault(role[1], {})[role[0]] = str(name)
    from reactloop.models._times import zone_of_time

    text = " ".join(question.lower().split())
    swapped = dict(args)
    for pair in roles.values():
        if len(pair) != 2:
            continue
        src, dst = (_said(args[pair[k]], question).lower() for k in ("source", "target"))
        said_from_target = _origin(dst, text) and not _origin(src, text)
        said_to_source = f"to {src}" in text and f"to {dst}" not in text
        # "When it is 09:00 in Paris, what time is it in New York?": the side the (last)
        # question word asks about is the target, the side said before it the source
        asked = max(text.rfind(w) for w in ("what ", "how ", "which "))
        asked_source = asked > 0 and -1 < text.find(dst) < asked < text.find(src)
        timed = zone_of_time(text, (src, dst))  # "what time in B is 19:25 in A": A is the source
        if src != dst and (timed == dst if timed else (
                said_from_target or said_to_source or asked_source)):
            swapped[pair["source"]], swapped[pair["target"]] = (
                args[pair["target"]], args[pair["source"]])
    return call if swapped == dict(args) else ToolCall(call.name, swapped, call.id)


def _origin(place: str, text: str) -> bool:
    """Whether ``text`` says ``place`` as where one comes "from", not where one's flight or
    train leaves from ("my flight leaves from gate 13": where one goes)."""
    return any(m.group(1) not in _DEPARTS
               for m in re.finditer(rf"(\w*)\s*from {re.escape(place)}(?!\w)", text))


_DEPARTS = frozenset({"leaves", "leaving", "departs", "departing", "boards", "boarding",
                      "goes", "going", "leave", "depart"})


def paired_zones(spec: ToolSpec, names: Sequence[str], zones: Sequence[str],
                 question: str) -> dict[str, list[str]] | None:
    """For a source/target pair among the timezone arguments ``names`` and exactly two zones
    the question names: each argument's one zone, the source first as said, unless the
    question says them the other way (:func:`order_directions`): a conversion between two
    places said plainly ("11:00 in Cairo … in Bangkok") never takes one zone twice;
    None otherwise."""
    if len(zones) != 2 or len(names) != 2:
        return None
    roles = {(_role(n) or ("", ""))[0]: n for n in names}
    if set(roles) != {"source", "target"}:
        return None
    call = order_directions(ToolCall(spec.name, {roles["source"]: zones[0],
                                                 roles["target"]: zones[1]}), question)
    return {n: [str(call.arguments[n])] for n in names}


def _said(value: str, question: str) -> str:
    """How the question says ``value``: itself, or the place of a timezone ("Tokyo" for
    Asia/Tokyo, which the guidance offers for a city said)."""
    if value.lower() in question.lower():
        return value
    from reactloop._zones import place_of

    return place_of(question, value) or value


def content_span(span: str, context: set[str]) -> bool:
    """Whether ``span`` is a value for a loaded skill's tool: none of its words is the skill's
    own ("airport"), and it neither starts nor ends with a filler word ("get a coffee"; a
    number or a capital letter is no filler: "gate 15", "Terminal A")."""
    words = span.split()

    def content(word: str) -> bool:  # "Terminal A": a capital letter is a name
        return bool(terms(word)) or any(c.isdigit() for c in word) or (
            len(word) == 1 and word.isupper() and word != "I")

    return bool(words) and content(words[0]) and content(words[-1]) and not any(
        set(terms(w)) & context for w in words)


def id_arguments(spec: ToolSpec) -> list[str]:
    """The required integer arguments named as ids (``poi_id``)."""
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    return [k for k in spec.parameters.get("required") or () if is_id(k)
            and isinstance(props.get(k), Mapping) and props[k].get("type") == "integer"]


def headline(text: str, question: str = "", short: int = 120) -> str:
    """``text``, or its JSON object's ``headline`` string when ``text`` is longer than
    ``short`` characters and starts with one — unless ``question`` asks a figure of the
    records holding its codes (:func:`figure`: "for company 1002"; a date's numbers are no
    codes), which comes first."""
    if len(text) <= short or not text.startswith('{"headline"'):
        return text
    try:
        data = json.loads(text)
        value = data.get("headline")
    except (json.JSONDecodeError, AttributeError):
        return text
    # "the cheapest … total for both of us": one record, the tool's own pick, never a sum;
    # a date's numbers ("on 1 Aug 2027") are no codes of the records
    from reactloop.models._dates import without_dates

    picked = extreme(data, question)  # "which company has the biggest gap?": computed
    asked = figure(data, question) if not picked and _CODE.search(without_dates(
        question)) and not _PICK.search(question) else ""
    return picked or asked or (value if isinstance(value, str) else text)


_PICK = re.compile(r"\b(?:cheapest|lowest|least\s+expensive|fastest|quickest|earliest|soonest|"
                   r"latest|shortest|best)\b", re.I)


def distinct(tools: Sequence[ToolSpec]) -> tuple[ToolSpec, ...]:
    """``tools`` without those whose name means the same as a better-ranked one's
    (``get_directions`` after ``show_directions``): a tiny model cannot tell them apart."""
    seen: set[frozenset[str]] = set()
    out = []
    for t in tools:
        words = frozenset(terms(t.name))
        if words and words in seen:
            continue
        seen.add(words)
        out.append(t)
    return tuple(out)
