"""JSON-schema rewrites that providers' structured-output modes require (pure functions).

OpenAI's strict mode (and Anthropic's structured output) accept a subset of JSON Schema:
every object closed (``additionalProperties: false``) and, for OpenAI, every property
required. :func:`strict_schema` rewrites a schema into that subset, or says it cannot (an
object with free-form keys, such as ``dict[str, int]``), in which case adapters send the
schema non-strict. The answer is validated by the loop either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["strict_schema"]

# keywords without meaning for generation that strict modes reject
_DROP = ("default", "title", "examples")


def strict_schema(schema: Mapping[str, Any], *, all_required: bool = True
                  ) -> dict[str, Any] | None:
    """``schema`` closed everywhere (and with every property required when
    ``all_required``), or None when it has an object whose keys are free-form."""
    try:
        out: dict[str, Any] = _strict(schema, all_required)
    except _Open:
        return None
    return out


class _Open(Exception):
    pass


def _strict(node: Any, all_required: bool) -> Any:
    if isinstance(node, list):
        return [_strict(n, all_required) for n in node]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP:
            continue
        if key in ("properties", "$defs", "definitions", "patternProperties"):
            out[key] = {k: _strict(v, all_required) for k, v in value.items()}
        else:
            out[key] = _strict(value, all_required)
    if out.get("type") == "object" or "properties" in out:
        extra = out.get("additionalProperties")
        if extra not in (None, False) or "patternProperties" in out:
            raise _Open
        if "properties" not in out and extra is None:
            raise _Open  # a bare "type": "object" means any keys
        out["additionalProperties"] = False
        out.setdefault("properties", {})
        if all_required:
            out["required"] = list(out["properties"])
    return out
