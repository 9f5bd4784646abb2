"""Typed final answers on the embedded model (``Agent(output_type=...)``, mode ``"native"``).

The reply's JSON schema has a branch per callable tool and an answer branch
``{"answer": <the type's own JSON schema>}``; llama.cpp turns it into the sampling grammar, so a
typed answer is valid by construction, like a tool call. Open-ended lists and strings are
bounded for the grammar only (:func:`capped`); the answer is validated against the schema as
given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reactloop.messages import ModelRequest, ToolSpec

__all__ = ["ANSWER_SCHEMA", "MAX_CHARS", "MAX_ITEMS", "capped", "response_schema",
           "typed_answer_schema"]

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"],
}


def _hoist_defs(schema: Mapping[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    schema = dict(schema)
    defs.update(schema.pop("$defs", {}) or {})
    return schema


def response_schema(tools: Sequence[ToolSpec], tool_choice: str, *, structured: bool = False,
                    answer: Mapping[str, Any] = ANSWER_SCHEMA) -> dict[str, Any] | None:
    """The JSON schema the reply must match, or None for free text.

    ``structured`` (the run has tools) keeps replies in the JSON shape even when no tool may be
    called, so the model keeps answering in the format its history shows. ``answer`` is the
    shape of a final answer (see :func:`typed_answer_schema`).
    """
    if not tools or tool_choice == "none":
        return dict(answer) if structured else None
    defs: dict[str, Any] = {}
    branches: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {"tool": {"const": t.name},
                           "arguments": _hoist_defs(t.parameters, defs)},
            "required": ["tool", "arguments"],
        }
        for t in tools
    ]
    if tool_choice != "required":
        branches.append(_hoist_defs(answer, defs))
    schema: dict[str, Any] = branches[0] if len(branches) == 1 else {"anyOf": branches}
    if defs:
        schema = {**schema, "$defs": defs}
    return schema


def typed_answer_schema(request: ModelRequest) -> dict[str, Any] | None:
    """The answer branch for a typed final answer, or None when the request wants none."""
    out = request.output_schema
    if out is None or out.mode != "native":
        return None
    defs: dict[str, Any] = {}
    branch: dict[str, Any] = {"type": "object",
                              "properties": {"answer": capped(_hoist_defs(out.schema, defs))},
                              "required": ["answer"]}
    if defs:
        branch["$defs"] = {name: capped(d) for name, d in defs.items()}
    return branch


MAX_ITEMS = 24
MAX_CHARS = 240
_NESTED = ("properties", "$defs", "definitions", "patternProperties")
_NESTED_LIST = ("anyOf", "oneOf", "allOf", "prefixItems")


def capped(schema: Any) -> Any:
    """``schema`` with every open-ended list and string bounded (``maxItems``/``maxLength``),
    for the grammar only (the answer is still validated against the schema as given).

    Why: a grammar keeps a reply valid token by token but cannot make it end; a small model
    under greedy decoding can repeat a list item or a phrase until the token limit cuts the
    JSON off. Bounded, the answer closes within the reply's token budget."""
    if not isinstance(schema, Mapping):
        return schema
    out = dict(schema)
    for key in _NESTED:
        if isinstance(out.get(key), Mapping):
            out[key] = {k: capped(v) for k, v in out[key].items()}
    for key in _NESTED_LIST:
        if isinstance(out.get(key), list):
            out[key] = [capped(v) for v in out[key]]
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), Mapping):
            out[key] = capped(out[key])
    kinds = out.get("type")
    kinds = set(kinds) if isinstance(kinds, list) else {kinds}
    if "array" in kinds and "maxItems" not in out:
        out["maxItems"] = MAX_ITEMS
    if "string" in kinds and not {"maxLength", "enum", "const", "format", "pattern"} & set(out):
        out["maxLength"] = MAX_CHARS
    return out


