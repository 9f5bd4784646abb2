"""A file of the workspace said in words, not by its name: pure functions the embedded model's
guidance (:mod:`reactloop.models._listing`) uses so that such a question lists the workspace
and then reads the file it means, and never writes the words as a path.

- **where the answer is said to be** (:func:`refers_to_files`): "it's in my notes", "my docs
  folder has an faq, read it", "in my data folder there's a spreadsheet", "the docs
  directory has a setup guide", "whats in notes", "according to the sales data file" — a
  fact asked of a file that is named by a document's word (faq, notes, readme, guide …) or a
  folder's, never by a path. Generic words ("my files", "my photos") name no file: "how do I
  back up my photos and files?" is advice.
- **which listed file it is** (:func:`chosen_entry`): of the files a listing shows (paths
  joined to the folder listed, ``docs`` + ``faq.md``: ``docs/faq.md``), the one whose name is
  a word of the question (``setup`` for "the setup guide"), then one in a folder the
  question names, of a kind it names ("spreadsheet": ``.csv``); the only file of a folder
  listed for the question when no name decides.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["ROOT_WORDS", "asks_attribute", "chosen_entry", "folder_in", "refers_to_files"]

_DOC_WORDS = """faq faqs readme notes note todo todos changelog memo memos agenda minutes manual
guide handbook notebook journal log logs"""
_DOCS = frozenset(_DOC_WORDS.split())
"""Words that say a document by themselves ("check my notes", "the faq")."""
_FOLDER_WORDS = "docs data documents reports src archive downloads"
_FOLDERS = frozenset(_FOLDER_WORDS.split())
"""Folder names said bare ("in my docs", "under data")."""
_GENERIC_WORDS = """files file folder folders document documents directory directories workspace
project stuff things everything all photos pictures pics images videos music computer laptop
phone drive disk cloud desktop stuff one ones them it this that these those some any"""
_GENERIC = frozenset(_GENERIC_WORDS.split())
"""Words that name no one file or folder ("my files", "my photos")."""
_KINDS = (r"folder|directory|dir|file|doc|document|guide|notes|sheet|spreadsheet|csv|table|"
          r"instructions|page|list|manual")
_KIND_WORDS = frozenset(_KINDS.split("|"))
_DET = r"(?:my|our|the)"

_WORD = r"(?!(?:in|inside|under|from|within|into|on|at|of|and|or|to|for)\b)\w[\w-]*"
_LOCATED = re.compile(
    rf"\b(?:in|inside|under|from|per|see|within|into)\s+{_DET}\s+(?:({_WORD})\s+)?({_WORD})"
    rf"(?:\s+({_KINDS}))?\b|\baccording\s+to\s+{_DET}\s+(?:({_WORD})\s+)?({_WORD})"
    rf"(?:\s+({_KINDS}))?\b", re.I)
"""Where the answer is said to be ("in my notes", "in my data folder", "according to the
sales file")."""
_HOLDS = re.compile(rf"\b{_DET}\s+(\w[\w-]*)\s+(?:folder|directory|dir)\s+(?:has|holds|contains|"
                    rf"includes|got)\b|\b{_DET}\s+(?:(\w[\w-]*)\s+)?(\w[\w-]*)\s+(file|doc|document|"
                    rf"guide|notes|sheet|spreadsheet|recipe|list|instructions|manual)\b", re.I)
"""A folder said to hold a file ("my docs folder has an faq"), or a file said by its name and
its kind ("the setup guide", "my sales spreadsheet")."""
_THE_DOC = re.compile(r"(?:\b(?:(?:my|our)\s+(?:faq|readme|notes|todo|changelog|memo|journal)|the\s+"
                      r"(?:faq|readme|changelog|todo\s+list))|^\W*(?:faq|readme|notes|todo|journal|memo|agenda|"
                      r"changelog)\s*[:-])(?!\s+(?:of|for|on)\b)", re.I)
"""A document said by its own word ("the faq under docs says …", "my readme", "faq: …")."""
_WHATEVER = re.compile(r"\b(?:open|read|check)\s+(?:up\s+)?(?:whatever|what(?:'s|\s+is)|the\s+"
                       r"(?:file|one|thing)|the\s+files?)\s+(?:is\s+)?(?:in|inside)\s+(?:there|it)\b",
                       re.I)
"""The file of a folder just said ("check the data folder, open whatever is in there")."""
_BARE = re.compile(r"\bwhat(?:'s|’s|s|\s+is)\s+(?:in|inside)\s+(\w[\w-]*)\s*(?:[?.!]|$)", re.I)
"""A document said bare ("whats in notes"): its contents."""
_ASKS = re.compile(r"\?|\b(?:sum|add|total|average|compute|calculate|summari[sz]e|count|"
                   r"whats|what|when|where|which|who|how|tell|read|open|check|look|give|show|"
                   r"find|say|says|said)\b", re.I)
_ADVICE = re.compile(r"\b(?:should\s+(?:i|we)\s+(?:keep|store|put|use|move|organi[sz]e|save|write)|"
                     r"how\s+(?:do|can|should)\s+(?:i|we)\s+(?:keep|organi[sz]e|store|back\s*up|sync|"
                     r"clean|sort|name|tidy)|(?:good|best|better|smart|easy|easiest|simple|quick|sensible|right)\s+(?:way|app|tool|place|system))\b", re.I)
"""A question for advice about one's files ("should I keep my notes in markdown?"), not a
fact from them."""
_ATTRIBUTE = re.compile(r"\b(?:how\s+(?:big|large|heavy)|(?:file\s*)?size|bytes?|kb|kilobytes?|mb|"
                        r"(?:what(?:'s|s|\s+is)\s+(?:it|that|the\s+file)\s+)?called|its\s+name|"
                        r"(?:file\s*)?name\s+of)\b", re.I)
"""A question for what a listing says of a file ("how big is the csv in my data folder?",
"what's it called"), not for its contents."""
ROOT_WORDS = frozenset(["top", "root", "main", "base", "home", "current", "whole", "entire", "project", "workspace", "upper", "outermost", "topmost", "top-level"])
"""Words that say the workspace's root folder, not a folder of that name."""


_LINK_WORDS = "a an the my our and or of to for with from in on at"
_LINKS = frozenset(_LINK_WORDS.split())


def _named(name: str | None, kind: str | None) -> bool:
    """Whether ``name`` (with its ``kind`` word, if any) says one file or folder."""
    if not name:
        return False
    low = name.lower()
    if low in _GENERIC or low.isdigit() or low in _LINKS:
        return False
    return bool(kind) or low in _DOCS


def _said(a: str | None, b: str | None, kind: str | None, ended: bool) -> bool:
    """Whether the words ``a b`` (and ``kind``) after "in my" say a file or folder: a
    document's word, a name with its kind ("sales file", "data folder"), or a folder's name
    ending the phrase ("in my docs,")."""
    if kind and (_named(b, kind) or _named(a, kind)):
        return True
    if b and b.lower() in ("csv", "spreadsheet"):
        return True  # "the amounts in the csv"
    if b and b.lower() in _KIND_WORDS - {"file", "folder", "directory", "dir", "doc"}:
        return _named(a, b)  # "in the setup instructions"
    if b and b.lower() in _GENERIC and b.lower() in ("file", "folder", "directory", "doc"):
        return _named(a, "file")  # "in my data folder"
    return _named(a, None) or _named(b, None) or bool(
        b and ended and not kind and b.lower() in _FOLDERS)


def asks_attribute(question: str) -> bool:
    """Whether ``question`` asks what a listing says of a file (its size), not its contents."""
    return _ATTRIBUTE.search(question) is not None


def refers_to_files(question: str) -> bool:
    """Whether ``question`` asks a fact of a workspace file said in words (see the module);
    a question naming a file or path, asking for a listing or which file says something is
    another's (:mod:`reactloop.models._files`, :mod:`reactloop.models._listing`)."""
    from reactloop._ranking import asks_documents
    from reactloop.models._files import named_file

    text = " ".join(question.split())
    if not text or named_file(text) is not None or _ADVICE.search(text) or not _ASKS.search(
            text) or asks_documents(text) or asks_attribute(text):
        return False  # "is there anything in my notes about the gym?": a search
    for m in _LOCATED.finditer(text):
        a, b, kind = (m.group(1), m.group(2), m.group(3)) if m.group(2) else (
            m.group(4), m.group(5), m.group(6))
        ended = re.match(r"\s*(?:[?.!,;:]|$)", text[m.end():]) is not None
        if _said(a, b, kind, ended):
            return True  # "in my notes", "in the sales data file", "under docs,"
    for m in _HOLDS.finditer(text):
        if m.group(1) and _named(m.group(1), "folder"):
            return True
        if _named(m.group(3), m.group(4)) or (m.group(3) and m.group(3).lower() in _GENERIC
                                              and _named(m.group(2), "file")):
            return True
    if _THE_DOC.search(text) or (_WHATEVER.search(text) and folder_in(text)):
        return True
    bare = _BARE.search(text)
    return bool(bare and bare.group(1).lower() in _DOCS)


def folder_in(question: str) -> str | None:
    """The folder ``question`` names in words ("my docs folder", "in my docs"), or None."""
    m = re.search(rf"\b{_DET}?\s*(\w[\w-]*)\s+(?:folder|directory|dir)\b", question, re.I)
    if m and m.group(1).lower() in ROOT_WORDS:  # "the top folder of my workspace": its root
        return None
    if m and m.group(1).lower() not in _GENERIC | {"the", "my", "our", "a", "an", "this", "that"}:
        return m.group(1)
    m = re.search(rf"\b(?:in|inside|under|within)\s+{_DET}?\s*({'|'.join(_FOLDERS)})\b(?!\s+("
                  rf"?:file|doc|guide|sheet))", question, re.I)
    return m.group(1) if m else None


def _words(question: str) -> set[str]:
    words = {w.lower() for w in re.findall(r"[A-Za-z][\w-]*", question)}
    return words | {w[:-1] for w in words if w.endswith("s") and len(w) > 3}  # singulars too


_KIND_EXT = {"spreadsheet": ("csv", "tsv", "xlsx", "xls"), "sheet": ("csv", "tsv", "xlsx"),
             "csv": ("csv",), "table": ("csv", "tsv"), "markdown": ("md",), "text": ("txt",)}


def chosen_entry(files: Sequence[str], question: str, listed_only: bool, *,
                 by_name: bool = False) -> str | None:
    """Of the listed ``files`` (paths relative to the workspace), the one ``question`` means
    (see the module): the best by name, folder and kind (``by_name``: only a name decides);
    the only file when none is named and ``listed_only`` (a folder was listed for the
    question); None otherwise."""
    said = _words(question)

    def score(path: str) -> int:
        parts = path.lower().split("/")
        stem = parts[-1].rsplit(".", 1)[0] if "." in parts[-1].lstrip(".") else parts[-1]
        ext = parts[-1].rsplit(".", 1)[-1] if "." in parts[-1] else ""
        stem = stem.removesuffix("s") if len(stem) > 3 else stem  # "pancakes": "pancake recipe"
        stems = {w.removesuffix("s") if len(w) > 3 else w
                 for w in re.split(r"[\s_.-]+", stem)} - {""}
        named = 4 if stem in said or (stems and stems <= said) else (
            2 if stems & said - _GENERIC else 0)
        folder = 1 if set(parts[:-1]) & said else 0
        kind = 1 if not by_name and any(ext in exts for word, exts in _KIND_EXT.items()
                                        if word in said) else 0
        return named + folder + kind if named or kind else 0

    ranked = sorted(files, key=lambda p: (-score(p), p.count("/"), p))
    if ranked and score(ranked[0]) > 0 and (len(ranked) == 1 or score(ranked[0]) > score(
            ranked[1])):
        return ranked[0]
    return files[0] if listed_only and len(files) == 1 else None
