"""Typed outputs (``Agent(output_type=T)``): the answer's schema, its validation, the words
that send validation errors back to the model, and partial answers while streaming.

How the answer is enforced (``Agent(output_mode=...)``; ``"auto"`` asks the model for its
strongest means, :meth:`~reactloop.models.Model.output_mode`):

- ``native``: the request carries the schema (``ModelRequest.output_schema``) and the adapter
  makes the model follow it (a grammar for the embedded model, a JSON-schema response format
  for OpenAI-compatible servers, structured output for Anthropic and Gemini);
- ``tool``: a ``final_answer`` tool whose arguments are the answer;
- ``prompted``: the schema is in the system prompt and the answer is parsed from the text.

In every mode the loop validates the answer (pydantic for Python types, ``jsonschema`` for a
JSON-schema dict) and sends the errors back to the model, at most ``output_retries`` times.
Non-object types (``int``, ``list[...]``, unions) travel wrapped as ``{"result": ...}``,
because providers want an object at the top.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reactloop.errors import OutputAttempt, OutputValidationError, ToolRetry, UserError
from reactloop.messages import Message, OutputMode, OutputSchema
from reactloop.models._base import Model
from reactloop.tools._tool import Tool

__all__ = ["FINAL_ANSWER", "OUTPUT_ERRORS", "OutputInvalid", "OutputSpec", "PartialOutput",
           "Verdict", "attempts", "build_output", "judge", "judge_tool"]

FINAL_ANSWER = "final_answer"
"""The tool the model answers through in ``tool`` mode."""
OUTPUT_ERRORS = "output_errors"
"""Metadata key of the reminder that sends validation errors back (its value: the errors)."""
MODES = ("auto", "native", "tool", "prompted")
_NOTHING: Any = object()
_FENCE = re.compile(r"```[\w-]*\s*\n?(.*?)```", re.S)
_NAME = re.compile(r"[^A-Za-z0-9_-]+")


class OutputInvalid(Exception):
    """An answer did not validate; ``errors`` says why, for the model."""

    def __init__(self, errors: str) -> None:
        self.errors = errors
        super().__init__(errors)


def build_output(output_type: Any, mode: str, retries: Any, model: Model, *,
                 has_tools: bool) -> OutputSpec | None:
    """The agent's output spec (None without ``output_type``, or for ``str``); configuration
    errors raise :class:`UserError` here, at construction."""
    if mode not in MODES:
        raise UserError(f"output_mode must be one of {', '.join(MODES)}, got {mode!r}")
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise UserError(f"output_retries must be an integer of at least 0, got {retries!r}")
    if output_type is None or output_type is str:
        return None
    resolved: OutputMode = (model.output_mode(tools=has_tools) if mode == "auto"
                            else mode)  # type: ignore[assignment]
    return OutputSpec(output_type, resolved, retries)


class OutputSpec:
    """What an agent's answer must be, and how to check it."""

    __slots__ = ("_validator", "adapter", "json_schema", "mode", "name", "request_schema",
                 "retries", "schema", "wrapped")

    def __init__(self, target: Any, mode: OutputMode, retries: int) -> None:
        self.mode, self.retries = mode, retries
        self.adapter: Any = None
        self._validator: Any = None
        if isinstance(target, Mapping):
            self.json_schema = _checked_json_schema(target)
            name = str(target.get("title") or "output")
        else:
            self.adapter, self.json_schema = _pydantic(target)
            name = getattr(target, "__name__", None) or "output"
        self.name = (_NAME.sub("_", name) or "output")[:64]
        self.wrapped = not _is_object(self.json_schema)
        self.schema = _wrap(self.json_schema) if self.wrapped else dict(self.json_schema)
        """The schema on the wire (always an object)."""
        self.request_schema = OutputSchema(self.name, self.schema, mode)

    # -- validation --------------------------------------------------------------------------
    def parse(self, text: str) -> tuple[Any, str]:
        """The answer in ``text`` as ``(value, canonical JSON)``; raises :class:`OutputInvalid`.

        Lenient about the envelope (code fences, prose around the JSON, a wrapped or bare
        value), strict about the value."""
        data, problem = _load_json(text)
        candidates: list[Any] = [] if problem else [data]
        if self.wrapped:
            if isinstance(data, dict) and set(data) == {"result"}:
                candidates.insert(0, data["result"])
            candidates.append(text.strip())  # a bare string, e.g. for a Literal
        first: OutputInvalid | None = None
        for candidate in candidates:
            try:
                return self.validate(candidate)
            except OutputInvalid as exc:
                first = first or exc
        raise first or OutputInvalid(problem or "the answer is empty")

    def parse_arguments(self, arguments: Mapping[str, Any]) -> tuple[Any, str]:
        """The answer given as ``final_answer``'s arguments (``tool`` mode)."""
        data: Any = dict(arguments)
        if self.wrapped:
            if "result" not in data:
                raise OutputInvalid("missing the required argument 'result'")
            data = data["result"]
        return self.validate(data)

    def validate(self, data: Any) -> tuple[Any, str]:
        """Validate JSON data: ``(value, canonical JSON)`` or :class:`OutputInvalid`."""
        if self.adapter is not None:
            from pydantic import ValidationError

            try:
                value = self.adapter.validate_python(data)
            except ValidationError as exc:
                raise OutputInvalid(_pydantic_errors(exc)) from None
            return value, self.adapter.dump_json(value).decode()
        problems = sorted(self._json_validator().iter_errors(data), key=lambda e: list(e.path))
        if problems:
            raise OutputInvalid("; ".join(
                f"{'.'.join(str(p) for p in e.path) or 'answer'}: {e.message}"
                for e in problems[:10]))
        return data, json.dumps(data, ensure_ascii=False)

    def _json_validator(self) -> Any:
        if self._validator is None:
            from jsonschema.validators import validator_for

            self._validator = validator_for(self.json_schema)(self.json_schema)
        return self._validator

    # -- the model's side --------------------------------------------------------------------
    def tool(self) -> Tool:
        """The ``final_answer`` tool (``tool`` mode): it checks the answer, so a bad one comes
        back to the model as the tool's error."""
        spec = self

        def final_answer(**arguments: Any) -> str:
            try:
                spec.parse_arguments(arguments)
            except OutputInvalid as exc:
                raise ToolRetry(f"The final answer does not match its schema: {exc.errors}. "
                                "Call final_answer again with corrected arguments.") from None
            return "Final answer received."

        return Tool(final_answer, name=FINAL_ANSWER, parameters=self.schema, repeatable=True,
                    inline=True, internal=True, origin="reactloop (output_type)",
                    description="Give your final answer: the arguments are the answer. Call "
                                "it once you have everything you need.")

    def prompt_section(self) -> str:
        """The system-prompt section of ``prompted`` mode."""
        return ("Final answer format: when you answer, reply with only a JSON value matching "
                "this JSON schema (no other text, no code fences):\n"
                + json.dumps(self.json_schema, ensure_ascii=False))

    def final_note(self) -> str:
        """The note of the forced last iteration: it asks for the typed answer."""
        if self.mode == "tool":
            return ("This is your last iteration. Call final_answer now with your final "
                    "answer, based on what you already have.")
        return ("This is your last iteration and tools are no longer available. Reply now with "
                "only the JSON of your final answer, based on what you already have.")

    def feedback(self, errors: str) -> str:
        """What the model is told when its text answer did not validate."""
        if self.mode == "tool":
            return (f"Your answer does not match the required schema: {errors}. Call "
                    "final_answer with the answer as its arguments.")
        return (f"Your answer does not match the required format: {errors}. Reply with only "
                "the corrected JSON.")


class PartialOutput:
    """Feeds on streamed text; :meth:`feed` returns the answer so far whenever a longer prefix
    validates as the output type (``None`` when nothing new validates)."""

    __slots__ = ("_last", "_spec", "_text")

    def __init__(self, spec: OutputSpec) -> None:
        self._spec, self._text, self._last = spec, "", _NOTHING

    def feed(self, delta: str) -> tuple[Any] | None:
        self._text += delta
        text = self._text
        starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
        body = text[min(starts):] if starts else text.strip()
        if not body:
            return None
        from pydantic_core import from_json

        try:
            data = from_json(body, allow_partial="trailing-strings")
        except ValueError:
            return None
        spec = self._spec
        if spec.wrapped and isinstance(data, dict) and set(data) <= {"result"}:
            if "result" not in data:
                return None
            data = data["result"]
        value = data
        if spec.adapter is not None:
            from pydantic import ValidationError

            try:
                value = spec.adapter.validate_python(data, experimental_allow_partial=True)
            except ValidationError:
                return None
        if value == self._last:
            return None
        self._last = value
        return (value,)


# -- judging answers against the retry budget ------------------------------------------------
@dataclass(frozen=True, slots=True)
class Verdict:
    """What the loop does with an answer: accept it (``value``, ``text``), send ``feedback``
    back to the model, or end the run with ``error`` (the retries are spent)."""

    value: tuple[Any] | None = None
    text: str = ""
    feedback: Message | None = None
    error: OutputValidationError | None = None


def attempts(messages: Sequence[Message]) -> list[OutputAttempt]:
    """The failed answers of the latest turn, read from the history (so the budget holds
    across a saved and resumed run): text answers followed by a validation reminder, and
    ``final_answer`` calls answered with an error."""
    out: list[OutputAttempt] = []
    calls: dict[str, Any] = {}
    start = 0
    for i, m in enumerate(messages):
        if m.role == "user" and m.metadata.get("kind") not in ("reminder", "note"):
            start = i
    previous: Message | None = None
    for m in messages[start:]:
        if m.role == "assistant":
            calls.update({c.id: c.arguments for c in m.tool_calls if c.id})
        elif m.role == "user" and OUTPUT_ERRORS in m.metadata and previous is not None:
            out.append(OutputAttempt(previous.content, str(m.metadata[OUTPUT_ERRORS])))
        elif m.role == "tool" and m.name == FINAL_ANSWER and m.is_error:
            raw = json.dumps(dict(calls.get(m.tool_call_id or "", {})), default=str)
            out.append(OutputAttempt(raw, m.content))
        previous = m
    return out


def _exhausted(failed: Sequence[OutputAttempt]) -> OutputValidationError:
    last = failed[-1]
    return OutputValidationError(
        f"the answer did not match the output type in {len(failed)} attempts; last problem: "
        f"{last.errors}", last.raw, tuple(failed))


def judge(spec: OutputSpec, messages: Sequence[Message], raw: str) -> Verdict:
    """Judge a text answer; ``messages`` is the history so far (for the retry budget)."""
    try:
        value, text = spec.parse(raw)
    except OutputInvalid as exc:
        failed = attempts(messages)
        if len(failed) >= spec.retries:
            return Verdict(error=_exhausted([*failed, OutputAttempt(raw, exc.errors)]))
        return Verdict(feedback=Message.user(spec.feedback(exc.errors), kind="reminder",
                                             **{OUTPUT_ERRORS: exc.errors}))
    return Verdict((value,), text)


def judge_tool(spec: OutputSpec, messages: Sequence[Message], arguments: Mapping[str, Any],
               ok: bool) -> Verdict:
    """Judge a ``final_answer`` call whose result is already in ``messages`` (an error
    result when the tool found the arguments invalid). An empty verdict: go on."""
    if ok:
        try:
            value, text = spec.parse_arguments(arguments)
        except OutputInvalid:  # the tool accepted it, so only a changed schema lands here
            return Verdict()
        return Verdict((value,), text)
    failed = attempts(messages)
    return Verdict(error=_exhausted(failed)) if len(failed) > spec.retries else Verdict()


# -- helpers --------------------------------------------------------------------------------
def _pydantic(target: Any) -> tuple[Any, dict[str, Any]]:
    from pydantic import TypeAdapter

    try:
        adapter: Any = TypeAdapter(target)
        schema = adapter.json_schema()
    except Exception as exc:  # pydantic raises several kinds for types it cannot handle
        raise UserError(
            f"output_type {target!r} cannot be validated ({type(exc).__name__}: {exc}); use a "
            "pydantic model, a dataclass, a TypedDict, a primitive, a list or a union of "
            "those, or a JSON-schema dict") from None
    return adapter, schema


def _checked_json_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        raise UserError(f"the output schema is not a valid JSON schema: {exc.message}") from None
    return dict(schema)


def _is_object(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "object" and isinstance(schema.get("properties"), Mapping)


def _wrap(schema: Mapping[str, Any]) -> dict[str, Any]:
    inner = dict(schema)
    defs = inner.pop("$defs", None)
    wrapped: dict[str, Any] = {"type": "object", "properties": {"result": inner},
                               "required": ["result"], "additionalProperties": False}
    if defs:
        wrapped["$defs"] = defs
    return wrapped


def _load_json(text: str) -> tuple[Any, str | None]:
    s = text.strip()
    if not s:
        return None, "the answer is empty"
    try:
        return json.loads(s), None
    except ValueError as exc:
        problem = f"the answer is not JSON ({exc})"
    fenced = _FENCE.search(s)
    starts = [i for i in (s.find("{"), s.find("[")) if i >= 0]
    pieces = [fenced.group(1).strip()] if fenced else []
    if starts:
        pieces.append(s[min(starts):max(s.rfind("}"), s.rfind("]")) + 1])
    for piece in pieces:
        try:
            return json.loads(piece), None
        except ValueError:
            continue
    if starts:  # something JSON-like: trailing commas, single quotes…
        from json_repair import repair_json

        repaired = repair_json(s[min(starts):], return_objects=True)
        if repaired not in ("", None):
            return repaired, None
    return None, problem


def _pydantic_errors(exc: Any) -> str:
    problems = []
    for err in exc.errors(include_url=False)[:10]:
        loc = ".".join(str(x) for x in err.get("loc", ())) or "answer"
        got = repr(err.get("input"))
        got = got if len(got) <= 80 else got[:77] + "..."
        problems.append(f"{loc}: {err.get('msg')} (got {got})")
    return "; ".join(problems)
