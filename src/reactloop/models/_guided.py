"""The embedded model's guidance behind a server: the same levers, sent per request.

``OpenAIModel(..., guidance=Guidance())`` (CLI ``--guidance full``, or ``guidance = "full"`` in
a model's config entry) steers a small model served by an OpenAI-compatible server the way
:class:`~reactloop.models.local.LocalModel` steers the embedded one. The decisions are ours and
are made before the request leaves, by the same pure functions
(:func:`~reactloop.models.local.plan_reply`, :func:`~reactloop.models._skill_select.skill_call`):

- **on our side of the wire, exactly as embedded**: the ranked tool offer (``tool_limit``: the
  prompt lists only the tools that fit the question), skill selection (``load_skills``: a
  question that fits a skill gets the ``load_skill`` call without a request), essential
  arguments, whether the reply must call or must answer (``require_call``,
  ``answer_after_result``), the prompt itself (the tool catalogue and the JSON reply protocol in
  the system message, rendered by :func:`~reactloop.models.local.render_messages`, so it only
  grows during a turn), and after the reply: note stripping and repeated sentences removed
  (:func:`~reactloop.models._repeat.collapse_repeats`). Sampling defaults to the embedded
  model's: temperature 0, seed 0, at most 256 tokens unless the request says otherwise.
- **sent as a constraint** (``guided_format``):

  - ``"grammar"`` (llama-cpp-python's ``python -m llama_cpp.server``, which reads a GBNF
    ``grammar`` field; the C++ ``llama-server``'s ``json_schema`` field is not used): the very
    grammar the embedded model gets (:func:`~reactloop.models._gbnf.reply_grammar`): the reply
    is ``{"answer": "..."}`` or a call of one of the offered tools, tool names enumerated,
    arguments shaped by each tool's JSON schema, string and number arguments restricted to the
    values guided models may copy (the conversation's, plus after a failure the error's and
    the tool's own examples), the answer starting with a short tool result, every string,
    number and array capped, one compact layout. ``repeat_penalty`` is sent as 1.0 (the
    embedded model's; that server's default is 1.1).
  - ``"json_schema"`` (Ollama, whose OpenAI-compatible endpoint turns ``response_format``
    ``{"type": "json_schema", ...}`` into its own ``format`` field; also vLLM, LM Studio):
    the same reply as a JSON schema (:func:`reply_schema`): answer or call, tool names as
    ``const``, arguments from each tool's schema, copyable values as ``enum``, caps as
    ``maxLength``/``maxItems``. Not carried over: the answer's prefix (a ``pattern`` is not
    portable across servers' schema converters) and the compact layout.

- **not carried over at all**: the repetition guard inside generation
  (:class:`~reactloop.models._repeat.NoRepeatNgram` is a llama.cpp logits processor, which no
  server accepts over HTTP; repeated sentences are still removed afterwards), attachments
  (the guided prompt is text), and typed answers (``output_type``: such requests go out
  unguided, as without guidance).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from reactloop.errors import UserError
from reactloop.messages import FinishReason, ModelRequest, ModelResponse, ToolSpec, Usage
from reactloop.models._gbnf import Candidates, Caps

__all__ = ["GUIDANCE_LEVELS", "GUIDED_FORMATS", "GuidedFormat", "apply_guidance", "guidance_for",
           "guided_params", "guided_reply", "reply_schema", "skill_response"]

GuidedFormat = Literal["grammar", "json_schema"]
GUIDED_FORMATS: tuple[GuidedFormat, ...] = ("grammar", "json_schema")
GUIDANCE_LEVELS = ("full", "caps", "off")
"""``--guidance`` values: every lever, the size caps only, or none."""


def guidance_for(level: str) -> Any:
    """The :class:`~reactloop.models.local.Guidance` a ``--guidance`` value names (None for
    ``"off"``)."""
    from reactloop.models.local import Guidance

    if level == "full":
        return Guidance()
    if level == "caps":
        return Guidance.caps_only()
    if level == "off":
        return None
    raise UserError(f"unknown guidance {level!r}: use one of {', '.join(GUIDANCE_LEVELS)}")


def apply_guidance(model: Any, level: str) -> Any:
    """``model`` (as :func:`~reactloop.models._resolve.resolve_model` built it) steered as
    ``level`` says (``--guidance``, a model's ``guidance`` config entry). ``"off"`` (the
    default) leaves a model that takes no guidance as it is."""
    guidance = guidance_for(level)
    if not hasattr(model, "guidance") or getattr(model, "base_url", "") is None:
        if guidance is None:
            return model
        raise UserError("--guidance applies to the embedded model and to OpenAI-compatible "
                        "servers: use -m local, -m ollama:NAME or -m openai:NAME --base-url URL")
    if guidance is None and hasattr(model, "answer_tokens"):
        # the embedded model's replies are always grammar-constrained: off means the caps
        guidance = guidance_for("caps")
    model.guidance = guidance
    return model


def skill_response(request: ModelRequest, guidance: Any, name: str) -> ModelResponse | None:
    """The ``load_skill`` call a fresh question fitting a skill gets (no request is sent)."""
    from reactloop.models._skill_select import skill_call

    call = skill_call(request) if guidance.load_skills else None
    if call is None:
        return None
    return ModelResponse(None, [call], Usage(0, 0), "tool_calls", name)


def guided_params(request: ModelRequest, guidance: Any, model_name: str, fmt: GuidedFormat,
                  *, max_tokens_field: str = "max_tokens") -> tuple[dict[str, Any], Any]:
    """The ``chat.completions.create`` arguments of a guided request, and the reply plan
    (:class:`~reactloop.models.local.ReplyPlan`) its reply is read with."""
    from reactloop.models._local_prompt import render_messages
    from reactloop.models.local import DEFAULT_ANSWER_TOKENS, plan_reply

    plan = plan_reply(request, guidance)
    settings = request.settings
    params: dict[str, Any] = {
        "model": model_name,
        "messages": render_messages(request, plan.listed, extra=plan.extra,
                                    brief_skills=guidance.brief_skills),
        max_tokens_field: settings.max_tokens or DEFAULT_ANSWER_TOKENS,
        "temperature": settings.temperature if settings.temperature is not None else 0.0,
        "seed": 0,
    }
    extra: dict[str, Any] = {}
    if plan.grammar is not None and fmt == "grammar":
        extra = {"grammar": plan.grammar, "repeat_penalty": 1.0}
    elif plan.grammar is not None:
        params["response_format"] = {"type": "json_schema", "json_schema": {
            "name": "reply", "schema": reply_schema(plan, guidance.caps)}}
    extra.update(settings.extra or {})
    if extra:
        params["extra_body"] = extra
    return params, plan


def guided_reply(wire: ModelResponse, request: ModelRequest, guidance: Any, plan: Any
                 ) -> ModelResponse:
    """The server's reply (its JSON text) as an answer or a tool call, cleaned up as the
    embedded model's is."""
    from reactloop.models._local_prompt import strip_notes
    from reactloop.models._repeat import collapse_repeats
    from reactloop.models.local import parse_reply

    text = wire.text or ""
    parsed = parse_reply(text, request.tools) if plan.grammar is not None else (
        ModelResponse(text))
    answer = parsed.text
    if answer is not None and guidance.strip_notes:
        answer = strip_notes(answer, request) or plan.prefix
    if answer and guidance.stop_repeats:
        answer = collapse_repeats(answer)
    finish: FinishReason = "length" if wire.finish_reason == "length" else (
        "tool_calls" if parsed.tool_calls else "stop")
    return ModelResponse(answer, parsed.tool_calls, wire.usage, finish, wire.model_name)


# -- the reply as a JSON schema ------------------------------------------------------------
def reply_schema(plan: Any, caps: Caps) -> dict[str, Any]:
    """The reply ``plan`` allows, as one JSON schema (see the module for what it carries)."""
    defs: dict[str, Any] = {}
    branches: list[dict[str, Any]] = []
    for spec in plan.callable:
        args = _arguments(spec, (plan.candidates or {}).get(spec.name), caps, defs)
        branches.append({"type": "object",
                         "properties": {"tool": {"const": spec.name}, "arguments": args},
                         "required": ["tool", "arguments"], "additionalProperties": False})
    if plan.answer:
        text = {"type": "string", "maxLength": caps.answer + len(plan.prefix)}
        branches.append({"type": "object", "properties": {"answer": text},
                         "required": ["answer"], "additionalProperties": False})
    schema: dict[str, Any] = branches[0] if len(branches) == 1 else {"anyOf": branches}
    if defs:
        schema = {**schema, "$defs": defs}
    return schema


def _arguments(spec: ToolSpec, candidates: Candidates | None, caps: Caps,
               defs: dict[str, Any]) -> dict[str, Any]:
    params = dict(spec.parameters) or {"type": "object"}
    # $ref points at the document's root: every tool's $defs move there, under names of its
    # own (two tools' pydantic models both named Item must not share one definition)
    own = params.pop("$defs", None) or {}
    renamed = {k: f"{spec.name}__{k}" for k in own}
    params = dict(_renamed_refs(params, renamed))
    defs.update({renamed[k]: _capped(_renamed_refs(v, renamed), None, caps)
                 for k, v in own.items()})
    props: Mapping[str, Any] = params.get("properties") or {}
    if props:
        params["properties"] = {k: _capped(v, candidates, caps) for k, v in props.items()}
    return params


_VALUES = ("const", "enum", "default", "examples")  # JSON values, not schemas


def _renamed_refs(schema: Any, renamed: Mapping[str, str]) -> Any:
    """``schema`` with its ``#/$defs/NAME`` references pointing at ``renamed[NAME]``."""
    if isinstance(schema, list):
        return [_renamed_refs(s, renamed) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out = {k: v if k in _VALUES else _renamed_refs(v, renamed) for k, v in schema.items()}
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref[len("#/$defs/"):]
        out["$ref"] = "#/$defs/" + renamed.get(name, name)
    return out


def _capped(schema: Any, candidates: Candidates | None, caps: Caps) -> Any:
    """``schema`` with the caps, and restricted to ``candidates`` (top-level values and their
    alternatives only, as in the grammar)."""
    if not isinstance(schema, Mapping) or "$ref" in schema or "const" in schema or (
            "enum" in schema):
        return schema
    out = dict(schema)
    for key in ("anyOf", "oneOf"):
        if isinstance(out.get(key), list):
            out[key] = [_capped(s, candidates, caps) for s in out[key]]
    kind = out.get("type")
    if isinstance(kind, list):
        return {"anyOf": [_capped({**out, "type": k}, candidates, caps) for k in kind]}
    if kind == "string":
        return _string(out, candidates, caps)
    if kind in ("number", "integer"):
        nums = [json.loads(n) for n in (candidates.numbers if candidates else ())
                if kind == "number" or "." not in n]
        return {**out, "enum": nums} if nums else out
    if kind == "array":
        limit = out.get("maxItems")
        out["maxItems"] = min(int(limit), caps.array) if isinstance(limit, int) else caps.array
        if isinstance(out.get("items"), Mapping):
            out["items"] = _capped(out["items"], None, caps)
    elif kind == "object" and isinstance(out.get("properties"), Mapping):
        out["properties"] = {k: _capped(v, None, caps) for k, v in out["properties"].items()}
    return out


def _string(schema: dict[str, Any], candidates: Candidates | None, caps: Caps
            ) -> dict[str, Any]:
    if candidates is not None and candidates.strings and not (
            schema.get("format") or schema.get("pattern")):
        return {**schema, "enum": list(candidates.strings)}
    limit = schema.get("maxLength")
    return {**schema, "maxLength": min(int(limit), caps.string) if isinstance(limit, int)
            else caps.string}
