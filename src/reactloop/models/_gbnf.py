"""GBNF grammars for the embedded model's replies: a tool call or an answer, as compact JSON.

Written here rather than through llama.cpp's JSON-schema converter because a tiny model needs
more than validity:

- **one fixed layout** (``{"tool": "add", "arguments": {"a": 1, "b": 2}}``, the same bytes as the
  history shows), so no token is spent on optional whitespace;
- **caps** on every string, number and array, so a model cannot spend minutes writing one
  argument (``_2023_2023…``): the JSON always closes within a bounded number of tokens;
- **candidate values**: a number or string argument can be restricted to the values that occur
  in the conversation (``1234``, not ``123``; ``"Japan"``, not ``"Japon"``);
- **an answer prefix**: the answer can be made to start with a tool's result.

Only the JSON-schema features that tool parameters use are translated (types, properties,
required, enum, const, anyOf/oneOf, $ref to $defs, arrays, nested objects); anything else
becomes "any JSON value", still capped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Candidates", "Caps", "GrammarBuilder", "literal", "reply_grammar"]


@dataclass(frozen=True, slots=True)
class Caps:
    """Upper bounds that keep every reply short."""

    string: int = 200
    """Characters in a string argument."""
    answer: int = 600
    """Characters in an answer (after any prefix)."""
    array: int = 16
    """Items in an array."""
    object_keys: int = 8
    """Keys in a free-form object."""
    digits: int = 15


@dataclass(frozen=True, slots=True)
class Candidates:
    """Values from the conversation that arguments are restricted to (empty: no restriction)."""

    numbers: tuple[str, ...] = ()
    """JSON texts of numbers, e.g. ``"1234"``, ``"6.5"``."""
    strings: tuple[str, ...] = ()


def literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    out = text.replace("\\", "\\\\").replace('"', '\\"')
    out = out.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{out}"'


_CHAR = r'[^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})'
_RULE_NAME = re.compile(r"[^a-zA-Z0-9-]+")


@dataclass
class GrammarBuilder:
    """Collects named rules; :meth:`grammar` renders them with a ``root``."""

    caps: Caps = field(default_factory=Caps)
    rules: dict[str, str] = field(default_factory=dict)
    _defs: Mapping[str, Any] = field(default_factory=dict)
    _scope: int = 0
    _def_rules: dict[tuple[int, str], str] = field(default_factory=dict)

    def add(self, hint: str, body: str) -> str:
        """Add a rule (named after ``hint``, made unique) and return its name."""
        base = _RULE_NAME.sub("-", hint).strip("-").lower() or "r"
        name, i = base, 1
        while name in self.rules or name in ("root", "char", "json-string", "json-value"):
            i += 1
            name = f"{base}-{i}"
        self.rules[name] = body
        return name

    def add_defs(self, defs: Mapping[str, Any] | None) -> None:
        """Make a schema's ``$defs`` the ones the ``$ref`` s of the values built next point at
        (replacing the previous schema's: two tools' ``Item`` are two definitions)."""
        self._defs = dict(defs or {})
        self._scope += 1

    def grammar(self, root: str) -> str:
        """The rules as GBNF text, with ``root`` as the start rule."""
        lines = [f"root ::= {root}", f"char ::= {_CHAR}"]
        lines += [f"{name} ::= {body}" for name, body in self.rules.items()]
        return "\n".join(lines) + "\n"

    # -- JSON values -------------------------------------------------------------------------
    def string(self, limit: int | None = None, prefix: str = "") -> str:
        n = self.caps.string if limit is None else limit
        if prefix and prefix[-1].isdigit() and n > 0:
            # a result that ends with a figure ("270") is not made another by what follows
            # ("270.0000001", "72.5"): the next character is no digit, point or comma
            self.rules.setdefault("char-after-figure", _CHAR.replace("\\x1f]", "\\x1f0-9.,]", 1))
            return f'"\\"" {literal(prefix)} (char-after-figure char{{0,{n - 1}}})? "\\""'
        if prefix:
            return f'"\\"" {literal(prefix)} char{{0,{n}}} "\\""'
        # a named rule: llama.cpp expands a repetition's body once per repeat, so a string
        # written inline inside "(…){0,15}" multiplies char{0,200} into too many rules
        name = f"string-{n}"
        self.rules.setdefault(name, f'"\\"" char{{0,{n}}} "\\""')
        return name

    def number(self, integer: bool) -> str:
        d = self.caps.digits
        frac = "" if integer else f' ("." [0-9]{{1,{min(d, 8)}}})?'
        return f'"-"? [0-9]{{1,{d}}}{frac}'

    def enum(self, values: Sequence[Any]) -> str:
        return " | ".join(literal(json.dumps(v, ensure_ascii=False)) for v in values) or '"null"'

    def value(self, schema: Any, hint: str, candidates: Candidates | None = None) -> str:
        """A GBNF expression for a value matching ``schema`` (restricted to ``candidates`` when
        given and applicable)."""
        if not isinstance(schema, Mapping) or not schema:
            return self._any()
        if "$ref" in schema:
            return self._ref(str(schema["$ref"]))
        if "const" in schema:
            return self.enum([schema["const"]])
        if isinstance(schema.get("enum"), list):  # alternatives grouped: a member's value
            return "(" + self.enum(schema["enum"]) + ")"
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                alts = [self.value(s, f"{hint}-{i}", candidates) for i, s in enumerate(schema[key])]
                return "(" + " | ".join(alts) + ")"
        kind = schema.get("type")
        if isinstance(kind, list):
            alts = [self.value({**schema, "type": k}, f"{hint}-{k}", candidates) for k in kind]
            return "(" + " | ".join(alts) + ")"
        return self._typed(str(kind) if kind else "", schema, hint, candidates)

    def _typed(self, kind: str, schema: Mapping[str, Any], hint: str,
               candidates: Candidates | None) -> str:
        if kind == "string":
            if candidates is not None and candidates.strings and not (
                    schema.get("format") or schema.get("pattern")):
                return "(" + self.enum(list(candidates.strings)) + ")"
            limit = schema.get("maxLength")
            cap = min(int(limit), self.caps.string) if isinstance(limit, int) else None
            return self.string(cap)
        if kind in ("number", "integer"):
            if candidates is not None and candidates.numbers:
                nums = [n for n in candidates.numbers if kind == "number" or "." not in n]
                if nums:
                    return "(" + " | ".join(literal(n) for n in nums) + ")"
            return self.number(kind == "integer")
        if kind == "boolean":
            return '("true" | "false")'
        if kind == "null":
            return '"null"'
        if kind == "array":
            return self._array(schema, hint, candidates)
        if kind == "object" or "properties" in schema:
            return self.add(hint, self.object(schema, hint))
        return self._any()

    def _array(self, schema: Mapping[str, Any], hint: str,
               candidates: Candidates | None = None) -> str:
        # an array's items are values like any other: restricted to the candidates too
        item = self.add(f"{hint}-item", self.value(schema.get("items"), f"{hint}-item",
                                                   candidates))
        limit = schema.get("maxItems")
        n = min(int(limit), self.caps.array) if isinstance(limit, int) else self.caps.array
        return f'"[" ({item} (", " {item}){{0,{max(n - 1, 0)}}})? "]"'

    def object(self, schema: Mapping[str, Any], hint: str,
               candidates: Candidates | None = None) -> str:
        """``{"k": v, ...}`` with the properties in schema order, required ones always present."""
        props: Mapping[str, Any] = schema.get("properties") or {}
        if not props:
            return self._free_object() if schema.get("additionalProperties", True) else '"{}"'
        required = set(schema.get("required") or ())
        parts = [(literal(json.dumps(k) + ": ") + " "
                  + self.value(s, f"{hint}-{k}", candidates), k in required)
                 for k, s in props.items()]
        return '"{" ' + self._members(parts) + ' "}"'

    def _members(self, parts: list[tuple[str, bool]]) -> str:
        # "first present member" then ", member" for each later one; required ones are fixed
        if not parts:
            return '""'
        kv, needed = parts[0]
        rest = self._members_after(parts[1:])
        if needed:
            return f"{kv} {rest}".strip()
        skip = self._members(parts[1:])
        return f"(({kv} {rest}) | {skip})".replace("  ", " ")

    def _members_after(self, parts: list[tuple[str, bool]]) -> str:
        out = []
        for kv, needed in parts:
            out.append(f'", " {kv}' if needed else f'(", " {kv})?')
        return " ".join(out)

    def _ref(self, ref: str) -> str:
        name = ref.rsplit("/", 1)[-1]
        rule = self._def_rules.get((self._scope, name))
        if rule is None:
            rule = self.add(f"def-{name}", '"null"')  # placeholder: allows recursion
            self._def_rules[(self._scope, name)] = rule
            self.rules[rule] = self.value(self._defs.get(name, {}), rule)
        return rule

    def _free_object(self) -> str:
        value = self._any()
        key = self.string()
        n = self.caps.object_keys
        return f'"{{" ({key} ": " {value} (", " {key} ": " {value}){{0,{n - 1}}})? "}}"'

    def _any(self) -> str:
        if "json-value" not in self.rules:
            s, num = self.string(), self.number(False)
            n = self.caps.array
            self.rules["json-value"] = (
                f'{s} | {num} | "true" | "false" | "null" | '
                f'"[" (json-value (", " json-value){{0,{n - 1}}})? "]" | '
                f'"{{" ({s} ": " json-value (", " {s} ": " json-value){{0,{n - 1}}})? "}}"')
        return "json-value"


def reply_grammar(tools: Sequence[Any], *, answer: bool, answer_prefix: str = "",
                  caps: Caps | None = None,
                  candidates: Mapping[str, Candidates] | None = None) -> str:
    """The grammar of one reply: a call to one of ``tools`` (:class:`ToolSpec` s) or, if
    ``answer``, ``{"answer": "..."}`` (starting with ``answer_prefix``).

    ``candidates`` maps a tool name to the values its arguments are restricted to.
    """
    b = GrammarBuilder(caps or Caps())
    branches = []
    for t in tools:
        params = dict(t.parameters)
        b.add_defs(params.pop("$defs", None))
        args = b.add(f"args-{t.name}", b.object(params or {"type": "object"}, f"arg-{t.name}",
                                               (candidates or {}).get(t.name)))
        head = literal(f'{{"tool": {json.dumps(t.name)}, "arguments": ')
        branches.append(b.add(f"call-{t.name}", f'{head} {args} "}}"'))
    if answer:
        text = b.string(b.caps.answer, answer_prefix)
        branches.append(b.add("answer", f'{literal("{" + chr(34) + "answer" + chr(34) + ": ")} '
                                        f'{text} "}}"'))
    if not branches:
        raise ValueError("a reply grammar needs tools or an answer")
    return b.grammar(" | ".join(branches))
