"""Skills chosen like tools: a fresh question that fits a skill (a choice of ``load_skill``,
:attr:`~reactloop.messages.ToolSpec.choices`) better than every tool loads that skill first, as
a ``load_skill`` call the model "made" — so the call and its result are an ordinary step of the
run (trace, events, history).

The embedded model's guidance does this itself (``Guidance.load_skills``); for any other model
``Agent(skill_selection=True)`` wraps it in :class:`SkillSelection` (off by default: a capable
model reads the skills catalog and decides on its own).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence

from reactloop._ranking import best_choice, evident, rank_tools, terms
from reactloop.messages import (
    Message,
    ModelRequest,
    ModelResponse,
    OutputMode,
    TextDelta,
    ToolCall,
    ToolSpec,
    Usage,
)
from reactloop.models._base import Model
from reactloop.models._fit import (
    _NAMED,
    _string_arguments,
    lacks_format,
    settled,
    small_talk,
    takes_format,
)
from reactloop.models._listing import lister, says_file
from reactloop.models._shaping import is_id
from reactloop.models._spelled import data_identifiers, spelled, without_when

__all__ = ["SkillSelection", "reference_call", "skill_call"]


def reads_document(name: str) -> bool:
    """``name`` is the skills' document reader (``load_skill_reference``): what it returns is
    material to answer from, not a mere load (the engines name no extension's tool)."""
    return name == _READ_DOCUMENT


_READ_DOCUMENT = "load_skill_reference"


def _fresh_question(messages: Sequence[Message]) -> str | None:
    """The last real user message, when no tool has answered since."""
    for m in reversed(messages):
        if m.role == "tool":
            return None
        if m.role == "user" and not m.metadata.get("kind"):
            return m.content
    return None


def skill_call(request: ModelRequest) -> ToolCall | None:
    """A ``load_skill`` call (any tool with choices) when a fresh question fits one of its
    choices better than every tool, and that choice was not loaded (or tried) before."""
    question = _fresh_question(request.messages)
    if not question or request.settings.tool_choice == "none" or small_talk(question):
        return None
    question = spelled(question, data_identifiers(request.all_tools))  # "FI": fi_reporting
    question = without_when(question)  # "before my flight" says when, not what
    allowed = [t for t in request.all_tools if t.name in {s.name for s in request.tools}]
    if says_file(question) and any(lister(t) for t in allowed):
        return None  # "my sales spreadsheet", "show me my files": the workspace's
    # a value in a tool's documented format ("09:00" of a conversion) is that tool's, even
    # when the places around it are in a skill's data ("from London to Tokyo")
    formatted = any(not t.internal and evident(t, question) and takes_format(t, question)
                    for t in allowed)
    best = best_choice(allowed, question, names=not formatted)
    if best is None:
        return None
    spec, value = best
    required = spec.parameters.get("required") or list(spec.parameters.get("properties") or ())
    if not required:
        return None
    call = ToolCall(spec.name, {str(required[0]): value})
    if any(c.name == call.name and c.arguments == call.arguments
           for m in request.messages for c in m.tool_calls):
        return None
    return call


_FILES = re.compile(r"^Files \(read one with (\w+)\): (.+)$", re.M)
_DOCUMENTS = (".md", ".txt", ".rst")
_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?!\s|$)|\n(?!\n))+[.!?]?")
"""A sentence of the instructions, across single line breaks; a dot inside a word
(``fare_rules.md``) does not end it."""


def _just_loaded(messages: Sequence[Message]) -> tuple[str, Message] | None:
    """The question and the ``load_skill`` result that followed it, when nothing else has."""
    results: list[Message] = []
    for m in reversed(messages):
        if m.role == "tool":
            results.append(m)
        elif m.role == "user" and not m.metadata.get("kind"):
            loads = [r for r in results if r.name == "load_skill" and not r.is_error]
            if loads and len(loads) == len(results):
                return m.content, loads[0]
            return None
    return None


def reference_call(request: ModelRequest) -> ToolCall | None:
    """Right after a skill was loaded for a question: a ``load_skill_reference`` call for the
    skill's document (a listed ``.md``/``.txt`` file other than SKILL.md) that fits the
    question better than every tool — ranked by its path and the instructions' sentences that
    name it ("For baggage ... read references/fare_rules.md")."""
    loaded = _just_loaded(request.messages)
    if loaded is None or request.settings.tool_choice == "none":
        return None
    question, result = loaded
    question = spelled(question, data_identifiers(request.all_tools))
    listing = _FILES.search(result.content)
    allowed = {t.name for t in request.tools}
    if listing is None or listing.group(1) not in allowed:
        return None
    skill = next((c.arguments.get("name") for m in request.messages for c in m.tool_calls
                  if c.id == result.tool_call_id and isinstance(c.arguments, dict)), None)
    files = [f.strip() for f in listing.group(2).split(",")]
    documents = [f for f in files if f.lower().endswith(_DOCUMENTS) and f != "SKILL.md"]
    if not isinstance(skill, str) or not documents:
        return None
    body = result.content[:listing.start()]
    pseudo = {f: ToolSpec(f, " ".join([*(s for s in _SENTENCE.findall(body)
                                         if f in s or f.rsplit("/", 1)[-1] in s),
                                       *_words_of(body, f)]), {})
              for f in documents}
    # a tool that needs an id (book_flight's flight_id) acts on what another step found: it is
    # no first step, so it does not compete with the document
    # and one whose argument's documented format the question lacks (a search by date for
    # "Can I change my flight to another day?") does not either
    # the skill's own tools (those its load result names) compete, not a plain tool that
    # shares a word ("how much": a price lookup)
    tools = [t for t in request.all_tools if t.name in allowed and not t.internal
             and not any(is_id(k) for k in t.parameters.get("required") or ())
             and not lacks_format(t, question)
             and re.search(rf"\b{re.escape(t.name)}\b", result.content)]
    # the skill's own name words chose the skill ("flight" of book-flight): every tool of it
    # shares them, so what the question asks of the skill is in its other words
    given = set(_NAMED.findall(question))  # a task on the things it names is a tool's
    if given and any(_string_arguments(t) == len(given) for t in tools):
        return None
    if any(settled(t, question) for t in tools):  # a trip on a day: the search, not the rules
        return None
    named = set(terms(skill))
    asked = " ".join(w for w in question.split() if not set(terms(w)) & named) or question
    ranked = rank_tools([*tools, *pseudo.values()], asked)
    score, top = ranked[0] if ranked else (0.0, None)
    if score <= 0 or top is None or top.name not in pseudo:
        return None
    return ToolCall(listing.group(1), {"skill": skill, "path": top.name})


_FOLDER = re.compile(r"^Folder: (.+?)(?: \(|$)", re.M)


def _words_of(body: str, document: str) -> list[str]:
    """The distinct words of a skill's document (the skill's folder is in its load result):
    what it answers ("infants ... on a lap"), each word once."""
    from pathlib import Path

    folder = _FOLDER.search(body)
    if folder is None:
        return []
    try:
        text = (Path(folder.group(1)) / document).read_text(encoding="utf-8")[:4000]
    except (OSError, UnicodeDecodeError):
        return []
    return list(dict.fromkeys(re.findall(r"[A-Za-z][a-z]{3,}", text)))


class SkillSelection(Model):
    """``model``, except that a question fitting a skill first loads it (see the module)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.name, self.provider = model.name, model.provider
        self.context_window = model.context_window

    def _load(self, request: ModelRequest) -> ModelResponse | None:
        call = skill_call(request) or reference_call(request)
        if call is None:
            return None
        return ModelResponse(None, [call], Usage(0, 0), "tool_calls", self.name)

    async def request(self, request: ModelRequest) -> ModelResponse:
        return self._load(request) or await self.model.request(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        loaded = self._load(request)
        if loaded is not None:
            yield loaded
            return
        async for item in self.model.stream(request):
            yield item

    def output_mode(self, *, tools: bool) -> OutputMode:
        return self.model.output_mode(tools=tools)

    def count_tokens(self, text: str) -> int:
        return self.model.count_tokens(text)

    async def aclose(self) -> None:
        await self.model.aclose()
