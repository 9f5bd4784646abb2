"""Questions about the workspace's files that name no path: pure functions the embedded
model's guidance (:func:`reactloop.models.local.plan_reply`) applies so that the listing the
question needs is a visible step.

- **how many files** (:func:`asks_count`): "how many files/folders/documents …" is a listing
  question: the folder lister is offered alone (recursive when the question counts "in total",
  "inside folders", "subfolders" …), a call is required (no counting tool takes "files"), and
  the answer starts with the count of files in the listing (:func:`file_count`);
- **a file named without a path** (:func:`asked_file`): "open my notes", "what's in my
  readme", "total the sales file" — the guidance cannot see the files' names, so the lister is
  called first, then the reader on the listed file whose name is the one said (its stem, in
  the singular or the plural: :func:`entry_step`), and the answer quotes the file.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from reactloop.messages import Message, ToolSpec

__all__ = ["asked_file", "asks_count", "asks_listing", "entry_step", "error_step", "file_count",
           "lister", "listing_offer", "must_list", "said_readers", "says_file"]

_COUNT = re.compile(r"\bhow\s+many\s+(?:\w+\s+){0,2}?(?:files?|folders?|documents?|docs|"
                    r"director(?:y|ies)|sub-?folders?)\b|\b(?:count|number\s+of)\s+(?:(?:the|my|"
                    r"our|all)\s+)*(?:\w+\s+)?(?:files|folders|documents|directories)\b", re.I)
_EVERYWHERE = re.compile(r"\b(?:(?:in|across)\s+(?:my|our|the)\s+(?:whole\s+)?workspace|in\s+total|total|altogether|all\s+together|inside|within|"
                         r"sub-?folders?|sub-?director(?:y|ies)|nested|recursive(?:ly)?|"
                         r"everywhere|including|counting|below|under)\b", re.I)
_OPEN = re.compile(
    r"\b(?:open|read|check|show|see|view|display|skim|pull|bring|grab|fetch|go\s+over|"
    r"summari[sz]e|total|sum|add\s+up|average|look\s+(?:at|in(?:to|side)?|through)|go\s+"
    r"through|what(?:'s|’s|\s+is)\s+(?:in|inside))\s+(?:up\s+)?(?:my|our|the)\s+([a-z][\w-]*)"
    r"(?:\s+(file|doc|document|sheet|spreadsheet|list))?\b", re.I)
_SAYS = re.compile(r"\b(?:what|which|how|where)\b[^?.!]*?\b(?:do|does|did)\s+(?:(?:my|our|the)\s+)?"
                   r"([a-z][\w-]*)(?:\s+(file))?\s+(?:say|said|contain|hold|list|mention)", re.I)
"""A request to open or read a file by its name ("open my notes", "what's in my readme",
"the sales file"), or a question what it says ("what does my todo say about …")."""
_GENERIC_WORDS = """files file folder folders documents document docs directory workspace
directories project stuff things everything all data"""
_GENERIC = frozenset(_GENERIC_WORDS.split())
"""Words that name no one file ("open my files")."""


def asks_count(question: str) -> bool:
    """Whether ``question`` asks how many files or folders there are (see the module)."""
    return bool(_COUNT.search(question))


def asked_file(question: str) -> str | None:
    """The name of the file ``question`` asks to open without a path ("open my notes":
    ``notes``; "the sales file": ``sales``), or None."""
    from reactloop.models._files import named_file

    if named_file(question) is not None:
        return None
    for m in (rx.search(question) for rx in (_OPEN, _SAYS, _KIND, _ACCORDING, _IN_DOCUMENT)):
        if m is None or m.group(1).lower() in _GENERIC:
            continue
        before = question[: m.start(1)].lower().split()
        if not m.group(2) and not {"my", "our"} & set(before[-1:]) and (
                m.group(1).lower() not in _DOCUMENTS):
            continue  # "the weather": no file unless said to be one ("the sales file")
        return m.group(1).lower()
    return None


_KIND = re.compile(r"\b(?:my|our|the)\s+(?:[a-z]+\s+)??([a-z][\w-]*)\s+(file|doc|document|sheet|spreadsheet|"
                   r"table)\b", re.I)
"""A file said by its name and its kind ("the setup doc", "my sales spreadsheet")."""
_ACCORDING = re.compile(r"\baccording\s+to\s+(?:my|our|the)\s+([a-z][\w-]*)(?:\s+(file|doc|"
                        r"document|sheet|spreadsheet))?", re.I)
"""A file the answer is to come from ("according to the FAQ")."""
_DOCUMENTS = frozenset(["faq", "readme", "notes", "todo", "changelog", "memo", "agenda", "minutes",
                        "manual"])
"""Names that say a document by themselves ("check the faq")."""
_IN_DOCUMENT = re.compile(rf"(?:\b(?:in|from|see|per)\s+(?:my|our|the)\s+|\b(?:my|our|the)\s+(?=\w+\s+"
                          rf"(?:says?|said|mentions?|mentioned|lists?|listed)\b))"
                          rf"({'|'.join(_DOCUMENTS)})\b()", re.I)
"""Where the answer is said to be ("it's in the faq", "see my notes", "my notes mention a
meeting")."""


def says_file(question: str) -> bool:
    """Whether ``question`` asks for a listing or says a file plainly as one (its kind: "my
    sales spreadsheet", "the setup doc", or a document's own name: "the faq"), not a thing a
    skill's data may hold ("check my booking")."""
    from reactloop.models._file_refs import refers_to_files

    wanted = asked_file(question)
    return asks_listing(question) or refers_to_files(question) or (wanted is not None and (
        wanted in _DOCUMENTS or bool(_KIND.search(question))))


def lister(spec: ToolSpec) -> bool:
    """Whether ``spec`` lists a folder: its name or description says list and folder (or
    directory), and it requires no string argument but the folder's path."""
    from reactloop._ranking import terms

    words = set(terms(f"{spec.name} {spec.description}"))
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    return (not spec.internal and "list" in words and bool(words & {"folder", "dir", "directori",
                                                                     "directory"})
            and not any(isinstance(props.get(k), Mapping) and props[k].get("type") == "string"
                        and k not in ("path", "folder", "dir", "directory")
                        for k in spec.parameters.get("required") or ()))


_FOLDER = re.compile(r"\b(?:in|inside|under|of)\s+(?:the\s+|my\s+|our\s+)?(?!(?:the|my|our|this|"
                     r"that|a|an)\b)(?P<named>[\w./-]+)\s+(?:folder|directory|dir)\b|(?P<path>"
                     r"\b\w[\w.-]*(?:/[\w.-]+)*)/|\b(?:in|inside|under)\s+(?:the\s+|my\s+|our\s+)?"
                     r"(?P<bare>docs|data|src|reports|documents|images|photos|downloads|archive)"
                     r"\s*(?:[?.!]|$)|\b(?:the|my|our)\s+(?!(?:whole|entire|main|root|same|"
                     r"current|workspace|project|top|this|that)\b)(?P<own>[\w./-]+)\s+(?:folder|"
                     r"directory|dir)\b", re.I)
"""A folder the question names ("in the docs folder", "under src/", "what's in docs?"): the
lister's path."""
_LISTS = re.compile(
    r"\bopen(?:\s+up)?\s+(?:the|my|our)\s+(?:[\w.-]+\s+)?(?:folder|directory|dir)\b|"
    r"\b(?:does|do|is|are)\s+(?:the|my|our)\s+[\w.-]+\s+(?:folder|directory|dir)\s+(?:have|hold|"
    r"include|got)\b|\bis\s+there\s+(?:a|an|any)\s+[\w.-]+(?:\s+file)?\s+in\s+(?:the|my|our)\s+"
    r"[\w.-]+\s+(?:folder|directory|dir)\b|"
    r"\b(?:top|root|first)(?:\s+|-)level\s+of\s+(?:the\s+|my\s+|our\s+|this\s+)?(?:workspace|"
    r"folder|project|directory|dir)\b|"
    r"\b(?:show|list|give|tell|display|see|view|browse)\b(?:\s+\w+){0,3}?\s+(?:(?:all\s+)?(?:"
    r"my|our|the)|all|every)\s+(?:\w+\s+)?(?:files|folders?|documents|docs|contents|dir|"
    r"director(?:y|ies))\b|\bwhat\s+(?:files|folders|documents|docs)\b|\bwhat(?:'s|’s|s|\s+is|"
    r"\s+do\s+(?:i|we)\s+have|\s+have\s+(?:i|we)\s+got|\s+(?:i|we)(?:'ve|\s+have)\s+got)\s+"
    r"(?:in|inside|under)\s+(?:here|there|(?:the|my|our|this)\s+(?:folder|workspace|directory|"
    r"dir|project)|(?:the\s+|my\s+|our\s+)?[\w.-]+\s+(?:folder|directory|dir)|(?:the\s+|my\s+"
    r"|our\s+)?(?:docs|data|src|reports|documents)\s*(?:[?.!]|$))|"
    r"\b(?:list|show|display|see|view|browse|got|have|any|what(?:'s|’s|s)?|which|inside|in|under)\b"
    r"[^.?!]{0,40}?(?<![\w/.:-])[a-z_][\w.-]*/(?![\w.-])", re.I)
"""A request for a listing of the files ("show me my files", "what files are in the data
dir", "what's in docs?", "anything under reports/? show me"; a folder written with its
trailing slash is a path): the lister answers it."""


def asks_listing(question: str) -> bool:
    """Whether ``question`` asks what files or folders there are (see :data:`_LISTS`; not
    what they say, nor the contents of a file it names), or how many (:func:`asks_count`)."""
    from reactloop._ranking import asks_documents
    from reactloop.models._files import named_file

    return (bool(_LISTS.search(question)) and not asks_documents(question) and not _ABOUT.search(
        question) and named_file(question) is None) or asks_count(question)


_ABOUT = re.compile(r"\b(?:about|mention(?:s|ed|ing)?|say(?:s|ing)?|talk(?:s|ing)?|contain(?:s|"
                    r"ing)?|with\s+the\s+word|refer(?:s|ring)?\s+to)\b", re.I)
"""What the files should say ("what documents are there about the invoice?"): a search of
their contents, not a listing."""


_SHALLOW = re.compile(r"\b(?:top|root|first)(?:\s+|-)level\b|\b(?:top|root|main|base)\s+(?:folder|directory|dir)\b|\b(?:without|not|skip|ignore|no)\b"
                      r"[^.?!]*\bsub-?(?:folders|directories|dirs)\b", re.I)
"""Only the folder's own entries ("the top level", "the top folder", "I don't need the
subfolders")."""


def _rooted(spec: ToolSpec, question: str, deep: bool, root: str = "") -> ToolSpec:
    """``spec`` listing the workspace's root (its path left to its default, unless the
    question names a folder), recursive when ``deep`` and it can be."""
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    flag = props.get("recursive")
    from reactloop.models._file_refs import ROOT_WORDS, folder_in

    m = _FOLDER.search(question)
    folder = next((g for g in m.groups() if g), "") if m else (folder_in(question) or root)
    if folder.lower() in ROOT_WORDS:  # "the root directory", "the top folder": the root
        folder = "."
    kept = {k: {**v, "const": folder} for k, v in props.items() if k == "path" and folder
            and isinstance(v, Mapping)}
    if deep and isinstance(flag, Mapping) and flag.get("type") == "boolean":
        kept["recursive"] = {**flag, "const": True}
    if not kept:  # no argument to write: the call's arguments are an empty object
        return dataclasses.replace(spec, parameters={**spec.parameters, "properties": {},
                                                     "required": []})
    params = {**spec.parameters, "properties": kept, "required": list(kept)}
    return dataclasses.replace(spec, parameters=params)


def _wants_listing(question: str) -> bool:
    from reactloop._ranking import asks_documents
    from reactloop.models._file_refs import refers_to_files

    return asks_listing(question) or refers_to_files(question) or (asked_file(question) is not None and (
        not asks_documents(question) or bool(_SAYS.search(question) or _ACCORDING.search(
            question))))  # "what do my notes say", "according to the FAQ": that file


def listing_offer(listed: Sequence[ToolSpec], tools: Sequence[ToolSpec], question: str
                  ) -> tuple[ToolSpec, ...]:
    """The offer for a fresh question that needs a listing (see the module): the lister of
    ``tools`` (recursive where it can be, and for a count only when asked "in total",
    "inside folders" …) and the internal tools of ``listed``; ``listed`` unchanged otherwise,
    or when no tool lists folders (or, for a file named without a path, none reads one)."""
    from reactloop._ranking import name_matches
    from reactloop.models._files import reader, searches_contents

    listed = said_readers(listed, question)
    if not _wants_listing(question) or (not says_file(question) and any(
            name_matches(t, question) for t in listed if not t.internal and not lister(t)
            and not reader(t) and not searches_contents(t))):
        return tuple(listed)  # "check my calendar" with a calendar tool: that tool
    found = [t for t in tools if lister(t)][:1]
    if not found or (not asks_listing(question) and not any(reader(t) for t in tools)):
        return tuple(listed)
    shallow = bool(_SHALLOW.search(question))  # "the top level … not the subfolders"
    deep = (not asks_count(question) or bool(_EVERYWHERE.search(question))) and not shallow
    first = _rooted(found[0], question, deep, "." if shallow else "")
    return (first, *(t for t in listed if t.internal and t.name != first.name))


_IT = re.compile(r"\b(?:read|open|show|check|summari[sz]e|display|view)\s+(?:me\s+)?(?:it|that|this|"
                 r"them|those|these|(?:that|the\s+\w+)\s+one)\b", re.I)


def said_readers(listed: Sequence[ToolSpec], question: str) -> tuple[ToolSpec, ...]:
    """``listed`` without its file readers when ``question`` says no file to read: no name
    or path, no file said in words or by a word pointing back ("it", "that one"). A reader
    offered anyway would read the question's words as a path ("my photos", "1200")."""
    from reactloop.models._file_refs import refers_to_files
    from reactloop.models._files import named_file, reader

    if (named_file(question) is not None or asked_file(question) is not None or _IT.search(
            question) or refers_to_files(question) or _wants_listing(question)):
        return tuple(listed)
    return tuple(t for t in listed if not reader(t))


def must_list(question: str | None, callable_: Sequence[ToolSpec]) -> bool:
    """Whether a fresh ``question`` must call the lister it is offered (no answer yet)."""
    return bool(question) and _wants_listing(question or "") and any(
        lister(t) for t in callable_)


def _entries(result: Message) -> list[Mapping[str, Any]]:
    try:
        data = json.loads(result.content)
    except (json.JSONDecodeError, ValueError):
        return []
    found = data.get("entries") if isinstance(data, Mapping) else None
    return [e for e in found or () if isinstance(e, Mapping) and isinstance(e.get("name"), str)]


def _stem(name: str) -> str:
    stem = name.rsplit("/", 1)[-1].lower()
    return stem.rsplit(".", 1)[0] if "." in stem.lstrip(".") else stem


def _matches(name: str, wanted: str) -> bool:
    stem = _stem(name)
    stem = re.sub(r"[\s_-]+", " ", stem)
    wanted = re.sub(r"[\s_-]+", " ", wanted)
    return stem in (wanted, wanted.removesuffix("s"), f"{wanted}s", wanted.removesuffix("es"))


def _listed_files(result: Message) -> list[str]:
    """The files a listing shows, as paths from the workspace's root (``docs`` listed:
    ``faq.md`` is ``docs/faq.md``)."""
    try:
        data = json.loads(result.content)
    except (json.JSONDecodeError, ValueError):
        return []
    root = str(data.get("path") or ".").strip("/") if isinstance(data, Mapping) else "."
    names = [str(e["name"]) for e in _entries(result) if e.get("type") == "file"]
    return [n if root in ("", ".") or n.startswith(f"{root}/") else f"{root}/{n}" for n in names]


def entry_step(results: Sequence[Message], tools: Sequence[ToolSpec], allowed: set[str],
               question: str) -> ToolSpec | None:
    """After the listing a file named without a path needed (see the module), the reader of
    ``tools`` restricted to the listed file whose name is the one said ("my notes":
    ``notes.txt``, shallowest first; a file said in words: :func:`~reactloop.models.
    _file_refs.chosen_entry`); None when the latest result is no listing, nothing listed
    matches, or no allowed tool reads files."""
    from reactloop.models._file_refs import asks_attribute, chosen_entry, refers_to_files
    from reactloop.models._files import named_file, reader

    if asks_attribute(question):  # "how big is the csv in my data folder": the listing says
        return None
    said = named_file(question)  # "the sales.csv file", not found where it was said
    wanted = asked_file(question) or (_stem(said) if said else None)
    refers = refers_to_files(question)
    if not results or results[-1].is_error or (wanted is None and not refers):
        return None
    listed = _listed_files(results[-1])
    files = [n for n in listed if wanted is not None and _matches(n, wanted)]
    if not files:  # "my travel budget": travel/budget.csv; "what's in data?" stays a listing
        root = json.loads(results[-1].content).get("path") if listed else None
        listing = asks_listing(question)  # "list the csv files": a name must decide
        only = refers and not listing and root not in (None, "", ".")
        chosen = chosen_entry(listed, question, only, by_name=listing)
        files = [chosen] if chosen else []
    readers = [t for t in tools if reader(t) and t.name in allowed]
    if not files or not readers:
        return None
    path = min(files, key=lambda n: (n.count("/"), n))
    spec = readers[0]
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    arg = next(k for k in spec.parameters.get("required") or () if k in props)
    params = {**spec.parameters, "properties": {arg: {**props[arg], "const": path}},
              "required": [arg]}
    return dataclasses.replace(spec, parameters=params)


def error_step(results: Sequence[Message], tools: Sequence[ToolSpec], allowed: set[str],
               question: str) -> ToolSpec | None:
    """After a failure whose message names a folder lister not called yet this turn ("'sales.csv'
    does not exist in the workspace; call list_dir to see what is there"), that lister,
    recursive where it can be (then :func:`entry_step` reads the listed file of the name said);
    None otherwise."""
    if not results or not results[-1].is_error:
        return None
    called = {m.name for m in results}
    named = [t for t in tools if lister(t) and t.name in allowed and t.name not in called
             and re.search(rf"\b{re.escape(t.name)}\b", results[-1].content)]
    return _rooted(named[0], question, True) if named else None


def file_count(data: Any, question: str) -> str:
    """The count a question asks of a listing (``{"entries": [{"name", "type"}, …]}``):
    ``4 files: notes.txt, data/sales.csv, …`` (and the folders when it asks for folders);
    empty for another question or result."""
    asked = _COUNT.search(question)
    if asked is None or not isinstance(data, Mapping):
        return ""
    entries = [e for e in data.get("entries") or () if isinstance(e, Mapping)]
    if not entries:
        return ""
    kinds = ("dir",) if re.search(r"\b(?:folders?|director(?:y|ies))\b(?!.*\bfiles?\b)",
                                  asked.group(0), re.I) else ("file",)
    chosen = [str(e.get("name")) for e in entries if e.get("type") in kinds]
    noun = "folder" if kinds == ("dir",) else "file"
    return f"{len(chosen)} {noun}{'' if len(chosen) == 1 else 's'}: {', '.join(chosen)}"
