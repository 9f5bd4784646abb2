"""MCP elicitation: a server asks the user for input while one of its tools runs.

This is the classic form (the server asks inside an open ``tools/call``): a *live* wait in the
process that holds the connection. The tool call, and with it the run, waits until the handler
answers; if the process dies meanwhile, the call ends like any interrupted tool ("may or may
not have taken effect"). Declining and cancelling are answers the server receives. The
resumable form (2026-07-28 input-required results, answered by the same handler, durable on
Temporal) is driven by :mod:`reactloop.mcp._input_required`.

The handler is yours to give: ``MCPServer.stdio(..., elicitation=handler)`` with
``handler(request: Elicitation) -> ElicitationAnswer`` (sync or async). ``reactloop run`` and
``reactloop chat`` ask on the terminal (:mod:`reactloop.mcp._ask_terminal`); ``reactloop
serve`` asks its clients — a form in the dev UI, the sessions API, an AG-UI interrupt, the A2A
``input-required`` state — and answers ``cancel`` when nobody does in time
(:mod:`reactloop.serve._elicit`); answers from the wire are checked against the requested
schema with :func:`checked_answer`. Without a handler reactloop does not announce the
capability, so servers do not ask; a server that asks anyway gets an error at once (its tool
fails with a clear message, never a hang).

Values only: this module imports neither the SDK nor anything that does.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Elicitation", "ElicitationAnswer", "Elicitor", "FormField", "answer_of",
           "checked_answer", "default_elicitor", "form_fields"]

Action = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True)
class Elicitation:
    """What a server asks the user."""

    server: str
    """The server's name."""
    message: str
    """The server's question, to show the user."""
    schema: Mapping[str, Any] = field(default_factory=dict)
    """The requested JSON schema (form mode): a flat object of strings, numbers, booleans
    and enums."""
    mode: Literal["form", "url"] = "form"
    """``url``: the server asks the user to open :attr:`url` (sign in, pay…) instead. Show the
    whole URL and its site; never open it without the user's consent. ``accept`` means the
    user agreed to go there; the server says when the step is done
    (``notifications/elicitation/complete``, an ``mcp_elicitation_complete`` event)."""
    url: str | None = None
    tool: str | None = None
    """The tool whose call is waiting (when one is known)."""
    elicitation_id: str | None = None
    """URL mode on 2025-11-25 connections: the id the server's completion notification names."""

    @property
    def fields(self) -> list[FormField]:
        """The form's fields, in schema order."""
        return form_fields(self.schema)

    def to_dict(self) -> dict[str, Any]:
        """As JSON values (what ``reactloop serve`` sends its clients)."""
        return {"server": self.server, "message": self.message, "mode": self.mode,
                "url": self.url, "tool": self.tool, "schema": dict(self.schema)}


@dataclass(frozen=True)
class ElicitationAnswer:
    """The user's answer: ``accept`` with :attr:`content` (the form's values), ``decline``
    (no) or ``cancel`` (dismissed without choosing)."""

    action: Action
    content: Mapping[str, Any] | None = None

    @classmethod
    def accept(cls, **content: Any) -> ElicitationAnswer:
        return cls("accept", content)

    @classmethod
    def decline(cls) -> ElicitationAnswer:
        return cls("decline")

    @classmethod
    def cancel(cls) -> ElicitationAnswer:
        return cls("cancel")


Elicitor = Callable[[Elicitation], "Awaitable[ElicitationAnswer] | ElicitationAnswer"]
"""``handler(request) -> ElicitationAnswer``, sync or async."""


default_elicitor: ContextVar[Elicitor | None] = ContextVar("reactloop_mcp_elicitor",
                                                          default=None)
"""The handler of servers that have none of their own, for servers opened in this context
(``reactloop run`` and ``chat`` set the terminal form here, so ``--agent`` servers ask too)."""


async def answer_of(handler: Elicitor, request: Elicitation) -> ElicitationAnswer:
    """Ask ``handler``; its answer, checked (a wrong type is a ``TypeError`` naming it)."""
    got = handler(request)
    if inspect.isawaitable(got):
        got = await got
    if not isinstance(got, ElicitationAnswer):
        raise TypeError(f"an elicitation handler must return an ElicitationAnswer, got {got!r}")
    return got


@dataclass(frozen=True)
class FormField:
    """One field of a requested schema (MCP allows only flat primitive fields)."""

    name: str
    title: str
    description: str
    kind: Literal["string", "integer", "number", "boolean", "choice", "choices"]
    required: bool
    default: Any = None
    options: Sequence[tuple[str, str]] = ()
    """For choices: ``(value, label)`` pairs."""
    minimum: float | None = None
    maximum: float | None = None
    min_items: int | None = None
    max_items: int | None = None
    fmt: str | None = None
    """``email``, ``uri``, ``date``, ``date-time`` (strings)."""
    min_length: int | None = None
    max_length: int | None = None
    """Of strings (``minLength``/``maxLength``)."""

    def parse(self, text: str) -> Any:
        """The value typed as ``text`` on a terminal (a choice by its value, its label or its
        number in the list); ``ValueError`` with a message for the user."""
        text = text.strip()
        if self.kind == "boolean":
            low = text.lower()
            if low in ("y", "yes", "true", "1"):
                return True
            if low in ("n", "no", "false", "0"):
                return False
            raise ValueError("answer yes or no")
        if self.kind in ("integer", "number"):
            return self._number(text)
        if self.kind == "choice":
            return self._choice(text)
        if self.kind == "choices":
            picked = [self._choice(p) for p in text.split(",") if p.strip()]
            if self.min_items is not None and len(picked) < self.min_items:
                raise ValueError(f"choose at least {self.min_items}")
            if self.max_items is not None and len(picked) > self.max_items:
                raise ValueError(f"choose at most {self.max_items}")
            return self._count(picked)
        return self._text(text)

    def from_wire(self, value: Any) -> Any:
        """``value`` (a JSON value a client sent) checked as the field's: a choice is one of
        the values exactly (each item of a list of choices too); other text is parsed as
        :meth:`parse` does; ``ValueError`` with a message for the user."""
        if self.kind == "choice" and isinstance(value, str):
            return self._exact(value)
        if self.kind == "choices" and isinstance(value, list) and all(isinstance(v, str)
                                                                     for v in value):
            return self._count([self._exact(v) for v in value])
        if isinstance(value, str) and self.kind != "choices":
            return self.parse(value)
        if self.kind == "boolean" and isinstance(value, bool):
            return value
        if self.kind in ("integer", "number") and isinstance(value, (int, float)) \
                and not isinstance(value, bool):
            if not math.isfinite(value):
                raise ValueError("not a finite number")
            if self.kind == "integer" and value != int(value):
                raise ValueError("not an integer")
            return self.parse(str(int(value) if self.kind == "integer" else value))
        raise ValueError(f"expected {'a list of choices' if self.kind == 'choices' else self.kind}"
                         f", got {value!r}")

    def _text(self, text: str) -> str:
        if self.fmt is not None and not _FORMATS.get(self.fmt, _ANY).match(text):
            raise ValueError(f"not a valid {self.fmt}")
        if self.min_length is not None and len(text) < self.min_length:
            raise ValueError(f"at least {self.min_length} characters")
        if self.max_length is not None and len(text) > self.max_length:
            raise ValueError(f"at most {self.max_length} characters")
        return text

    def _count(self, picked: list[str]) -> list[str]:
        if self.min_items is not None and len(picked) < self.min_items:
            raise ValueError(f"choose at least {self.min_items}")
        if self.max_items is not None and len(picked) > self.max_items:
            raise ValueError(f"choose at most {self.max_items}")
        return picked

    def _number(self, text: str) -> float | int:
        try:
            value: float | int = int(text) if self.kind == "integer" else float(text)
        except ValueError:
            raise ValueError(f"not {'an integer' if self.kind == 'integer' else 'a number'}"
                             ) from None
        if not math.isfinite(value):
            raise ValueError("not a finite number")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"must be at least {self.minimum:g}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"must be at most {self.maximum:g}")
        return value

    def _choice(self, text: str) -> str:
        text = text.strip()
        for i, (value, label) in enumerate(self.options, 1):
            if text in (value, label, str(i)):
                return value
        raise ValueError("choose one of " + ", ".join(f"{i} ({label})" for i, (_, label)
                                                       in enumerate(self.options, 1)))

    def _exact(self, value: str) -> str:
        """A choice sent over the wire: one of the values exactly (a label or a number in the
        list is the terminal's shorthand; on the wire it could pick another value)."""
        if value in (v for v, _ in self.options):
            return value
        raise ValueError("choose one of the values " + ", ".join(repr(v) for v, _ in
                                                                  self.options))


_ANY = re.compile(r".*", re.S)
_FORMATS = {
    "email": re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+"),
    "uri": re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+"),
    "date": re.compile(r"\d{4}-\d{2}-\d{2}"),
    "date-time": re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?"
                            r"(Z|[+-]\d{2}:?\d{2})?"),
}


def form_fields(schema: Mapping[str, Any]) -> list[FormField]:
    """The fields of a requested schema, in order."""
    props = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    return [_field(name, spec, name in required) for name, spec in props.items()
            if isinstance(spec, Mapping)]


def _field(name: str, spec: Mapping[str, Any], required: bool) -> FormField:
    kind: Any = spec.get("type", "string")
    options = _options(spec)
    if kind == "array":
        items = spec.get("items") or {}
        options, kind = _options(items), "choices"
    elif options:
        kind = "choice"
    elif kind not in ("string", "integer", "number", "boolean"):
        kind = "string"
    return FormField(
        name=name, title=str(spec.get("title") or name),
        description=str(spec.get("description") or ""), kind=kind, required=required,
        default=spec.get("default"), options=options, minimum=spec.get("minimum"),
        maximum=spec.get("maximum"), min_items=spec.get("minItems"),
        max_items=spec.get("maxItems"), fmt=spec.get("format"),
        min_length=spec.get("minLength"), max_length=spec.get("maxLength"))


def _options(spec: Mapping[str, Any]) -> list[tuple[str, str]]:
    if "enum" in spec:
        values = [str(v) for v in spec["enum"]]
        names = spec.get("enumNames") or values
        return list(zip(values, [str(n) for n in names], strict=False))
    for key in ("oneOf", "anyOf"):
        if isinstance(spec.get(key), list):
            return [(str(o.get("const")), str(o.get("title") or o.get("const")))
                    for o in spec[key] if isinstance(o, Mapping) and "const" in o]
    return []


def checked_answer(request: Elicitation, action: object,
                   content: object = None) -> ElicitationAnswer:
    """The answer a client sent over the wire (``action`` and, to accept a form, ``content``:
    the values by field name), checked against the requested schema: required fields present,
    each value of its field's type (a finite number, a boolean, one of the choices' values
    exactly…), within its range (``minimum``/``maximum``, ``minLength``/``maxLength``,
    ``minItems``/``maxItems``) and of its format; absent optional fields take their default.
    ``ValueError`` naming the field and the problem otherwise (the client shows it and asks
    again)."""
    if action not in ("accept", "decline", "cancel"):
        raise ValueError(f"the action must be accept, decline or cancel, got {action!r}")
    if action != "accept" or request.mode == "url":
        return ElicitationAnswer(action)
    if content is None:
        content = {}
    if not isinstance(content, Mapping):
        raise ValueError("content must be an object of the form's values by field name")
    fields = {f.name: f for f in request.fields}
    unknown = sorted(set(content) - set(fields))
    if unknown:
        raise ValueError(f"the form has no field {unknown[0]!r}; its fields: "
                         f"{', '.join(fields) or 'none'}")
    out: dict[str, Any] = {}
    for name, f in fields.items():
        value = content.get(name)
        if value is None or value == "":
            if f.default is not None:
                out[name] = f.default
            elif f.required:
                raise ValueError(f"{f.title}: an answer is required")
            continue
        try:
            out[name] = f.from_wire(value)
        except (ValueError, OverflowError) as exc:
            raise ValueError(f"{f.title}: {exc}") from None
    return ElicitationAnswer("accept", out)
