"""Tool-call arguments as the model wrote them: parsed, repaired only in their syntax, or
refused.

Models write arguments as JSON text, and small ones slip: single quotes, a trailing comma,
Python's ``True``, a bare key, a closing bracket left off at the end of a finished reply.
:func:`repair_json` fixes exactly those and nothing else: it never invents, drops or
shortens a value, so ``{"path": }}}garbage[[`` is refused, not read as ``path=""``.

A call whose arguments cannot be read is still kept (the model gets an answer to every call it
made), marked by :func:`invalid_call`: its arguments are ``{}`` and
:func:`arguments_problem` returns the sentence that goes back to the model as the call's
error result. The tool never runs and no approval is asked for it. The mark lives in the
call's ``provider_details`` (JSON values), so it survives a stored session.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from collections.abc import Mapping
from typing import Any

from reactloop.messages import ToolCall

__all__ = ["arguments_problem", "call_from_wire", "invalid_call", "parse_arguments",
           "repair_json"]

MARK = "reactloop"
"""The ``provider_details`` key of the mark."""
_SHOWN = 200  # characters of unreadable arguments quoted back to the model


@functools.cache
def _token() -> re.Pattern[str]:
    """The JSON-ish token pattern, compiled on first use (not on ``import reactloop``)."""
    return re.compile(r"""
    (?P<space>\s+)
  | (?P<dq>"(?:[^"\\]|\\.)*")
  | (?P<sq>'(?:[^'\\]|\\.)*')
  | (?P<num>-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>[{}\[\]:,])
""", re.X | re.S)


_WORDS = {"true": "true", "false": "false", "null": "null",
          "True": "true", "False": "false", "None": "null"}
_CLOSER = {"{": "}", "[": "]"}


def _tokens(text: str) -> list[tuple[str, str]]:
    """``(kind, text)`` pairs; ValueError at the first character no JSON token starts with."""
    out: list[tuple[str, str]] = []
    pos, token = 0, _token()
    while pos < len(text):
        m = token.match(text, pos)
        if m is None:
            if text[pos] in "\"'":
                raise ValueError(f"the string at character {pos} is not closed")
            raise ValueError(f"unexpected {text[pos:pos + 20]!r} at character {pos}")
        if m.lastgroup != "space":
            out.append((m.lastgroup or "", m.group()))
        pos = m.end()
    return out


def _next(tokens: list[tuple[str, str]], i: int) -> str:
    return tokens[i + 1][1] if i + 1 < len(tokens) else ""


def _json_piece(kind: str, text: str, following: str) -> str:
    if kind == "sq":  # a Python string literal: the same characters in JSON's quotes
        return json.dumps(ast.literal_eval(text), ensure_ascii=False)
    if kind == "word":
        if following == ":":  # a bare key
            return json.dumps(text)
        if text in _WORDS:
            return _WORDS[text]
        raise ValueError(f"unexpected word {text!r}")
    return text


def repair_json(text: str, *, close: bool = True) -> Any:
    """``text`` parsed as JSON after syntax-only repairs; ValueError when that is not enough.

    Repairs: single-quoted strings, Python's ``True``/``False``/``None``, bare keys, trailing
    commas and (with ``close``: the reply was complete) closing brackets missing at the end.
    Every value of the result is written in ``text``; nothing is guessed.
    """
    tokens = _tokens(text)
    out: list[str] = []
    stack: list[str] = []
    for i, (kind, tok) in enumerate(tokens):
        following = _next(tokens, i)
        # a trailing comma, also one before the closers missing at the end
        if tok == "," and following in ("}", "]", "") and (following or stack):
            continue
        if tok in _CLOSER:
            stack.append(_CLOSER[tok])
        elif tok in ("}", "]") and (not stack or stack.pop() != tok):
            raise ValueError(f"unbalanced {tok!r}")
        out.append(_json_piece(kind, tok, following))
    if stack:
        if not close:
            raise ValueError("the JSON is not closed")
        out.extend(reversed(stack))
    return json.loads("".join(out), strict=False)


def parse_arguments(raw: Any, *, complete: bool = True) -> dict[str, Any] | str:
    """The arguments as a dict, or the sentence saying why they cannot be used.

    ``raw`` is what the provider sent: a JSON string, an object, or nothing (no arguments).
    ``complete``: the reply ended normally, so brackets missing at its end may be closed.
    """
    if isinstance(raw, Mapping):
        return dict(raw)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if not isinstance(raw, str):
        return f"the arguments must be a JSON object, got {type(raw).__name__}"
    try:
        value = json.loads(raw)
    except ValueError:
        try:
            value = repair_json(raw, close=complete)
        except (ValueError, SyntaxError) as exc:
            shown = raw if len(raw) <= _SHOWN else raw[:_SHOWN] + "…"
            return f"the arguments are not valid JSON ({exc}): {shown!r}"
    if isinstance(value, str) and value.strip().startswith("{"):  # JSON inside a JSON string
        return parse_arguments(value, complete=complete)
    if not isinstance(value, dict):
        return f"the arguments must be a JSON object, got {type(value).__name__}"
    return value


def invalid_call(name: str, call_id: str | None, problem: str,
                 provider_details: Mapping[str, Any] | None = None) -> ToolCall:
    """A call whose arguments cannot be used: it never runs, ``problem`` is its error."""
    details = dict(provider_details or {})
    details[MARK] = {"invalid_arguments": problem}
    return ToolCall(name, {}, call_id, details)


def arguments_problem(call: ToolCall) -> str | None:
    """The error result for a call marked by :func:`invalid_call` (None: a usable call)."""
    if not call.provider_details:  # the common case: nothing marked
        return None
    mark = call.provider_details.get(MARK)
    problem = mark.get("invalid_arguments") if isinstance(mark, Mapping) else None
    if not isinstance(problem, str):
        return None
    return (f"Invalid arguments for {call.name}: {problem}. The tool did not run; call it "
            "again with the arguments as one complete JSON object.")


def call_from_wire(name: str, raw: Any, call_id: str | None, *, complete: bool = True,
                   provider_details: Mapping[str, Any] | None = None) -> ToolCall:
    """A :class:`ToolCall` from a provider's name and raw arguments (marked when unusable)."""
    args = parse_arguments(raw, complete=complete)
    if isinstance(args, str):
        return invalid_call(name, call_id, args, provider_details)
    return ToolCall(name, args, call_id, provider_details)
