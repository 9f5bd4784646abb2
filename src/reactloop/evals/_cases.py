"""Eval cases and their YAML form.

A cases file is a mapping (or just the list of cases)::

    agent:                      # optional: how to build the agent (CLI flags win)
      tools: [tools.py:TOOLS]   # module:attr, or a .py file relative to this file
      max_iterations: 10
    judge:
      model: openai:gpt-4o-mini # for cases with a rubric
    defaults:                   # merged into every case
      max_tool_calls: 3
    cases:
      - name: add
        input: What is 17 plus 25?
        tool_calls:
          - name: add
            args: {a: 17, b: {approx: 25, tol: 0.5}}
        order: in_order         # exact | in_order | any_order
        output: {contains: "42"}
        state: completed
        rubric: Does the answer say that the sum is 42?

Every mistake in a file is reported with where it is and how to fix it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast, get_args

from reactloop.attachments import Attachment, attachment_from_path
from reactloop.errors import UserError
from reactloop.evals._matchers import MATCHER_KEYS, Matcher
from reactloop.result import RunState

__all__ = [
    "Case",
    "EvalConfigError",
    "ExpectedCall",
    "OrderMode",
    "OutputCheck",
    "Suite",
    "load_suite",
    "parse_suite",
]

OrderMode = Literal["exact", "in_order", "any_order"]
_ORDERS: tuple[str, ...] = get_args(OrderMode)
_CASE_KEYS = ("name", "input", "tool_calls", "order", "max_tool_calls", "max_iterations",
              "output", "state", "rubric", "tags", "metadata", "attachments")
_OUTPUT_KEYS = ("contains", "not_contains", "regex", "equals")
_CALL_KEYS = ("name", "args", "strict", "agent")
_SUITE_KEYS = ("agent", "judge", "defaults", "cases", "name")
_STATES = tuple(s.value for s in RunState if s not in (RunState.THINKING, RunState.TOOL_CALLING))


class EvalConfigError(UserError):
    """A cases file (or a case built in Python) is invalid; the message says where and why."""


@dataclass(frozen=True, slots=True)
class ExpectedCall:
    """A tool call the agent should make."""

    name: str
    args: Mapping[str, Matcher] = field(default_factory=dict)
    """Per-argument matchers. Arguments not listed are not checked (unless ``strict``)."""
    strict: bool = False
    """Fail when the call has arguments that are not listed."""
    agent: str | None = None
    """A call made by this sub-agent (an agent called as a tool) in its own run; None: a call
    of the case's run. Expect a sub-agent call itself as a call named after the agent (with
    its ``task``), and a handoff as a ``transfer_to_<agent>`` call."""

    def describe(self) -> str:
        args = ", ".join(f"{k}={m.describe()}" for k, m in self.args.items()
                         if m.kind != "ignore")
        by = f"{self.agent}: " if self.agent is not None else ""
        return f"{by}{self.name}({args})"


@dataclass(frozen=True, slots=True)
class OutputCheck:
    """Checks on the final answer (all must hold)."""

    contains: tuple[str, ...] = ()
    """Each must appear, compared after normalising (case, spaces, thousands separators); a
    number only as a whole number (``42`` is not found in ``420`` or ``4.2``)."""
    not_contains: tuple[str, ...] = ()
    regex: tuple[str, ...] = ()
    """Each must be found (``re.search``) in the raw answer."""
    equals: str | None = None
    """The whole answer, after normalising."""

    def __bool__(self) -> bool:
        return bool(self.contains or self.not_contains or self.regex or self.equals is not None)


@dataclass(frozen=True, slots=True)
class Case:
    """One eval case: an input and what a good run looks like."""

    name: str
    input: tuple[str, ...]
    """The user's message, or several turns of one conversation."""
    tool_calls: tuple[ExpectedCall, ...] = ()
    order: OrderMode = "in_order"
    """``exact``: these calls and no others, in this order; ``in_order``: these calls in this
    order, others allowed in between; ``any_order``: these calls in any order."""
    max_tool_calls: int | None = None
    max_iterations: int | None = None
    """A check on the iterations the run used (the agent's budget is set on the agent)."""
    output: OutputCheck = OutputCheck()
    state: RunState | None = None
    """The run state the last turn must end in."""
    rubric: str | None = None
    """A yes/no question for the LLM judge about the answer."""
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    attachments: tuple[Attachment, ...] = ()
    """Files sent with the first turn (YAML: paths, relative to the cases file)."""


@dataclass(frozen=True, slots=True)
class Suite:
    """A cases file: the cases, plus optional agent and judge configuration."""

    cases: tuple[Case, ...]
    name: str = "eval"
    agent: Mapping[str, Any] = field(default_factory=dict)
    """The file's ``agent:`` section, as written (see :func:`reactloop.evals.build_agent`)."""
    judge_model: str | None = None
    base_dir: Path = field(default_factory=Path.cwd)
    """Relative paths in ``agent:`` are resolved from here (the file's folder)."""


def load_suite(path: str | Path) -> Suite:
    """Read and validate a cases YAML file.

    Raises:
        EvalConfigError: the file is missing, is not UTF-8 YAML, or a case is invalid.
    """
    import yaml

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise EvalConfigError(f"cannot read cases file {p}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise EvalConfigError(f"cases file {p} is not UTF-8 text (byte {exc.start}); save it as "
                              "UTF-8 YAML") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise EvalConfigError(f"{p} is not valid YAML: {' '.join(str(exc).split())}") from None
    return parse_suite(data, base_dir=p.resolve().parent, source=str(p), name=p.stem)


def parse_suite(data: Any, *, base_dir: Path | None = None, source: str = "cases",
                name: str = "eval") -> Suite:
    """Validate already-parsed data (a mapping with ``cases``, or a list of cases)."""
    if isinstance(data, list):
        data = {"cases": data}
    if not isinstance(data, Mapping):
        raise EvalConfigError(f"{source}: expected a mapping with 'cases:' or a list of cases, "
                              f"got {type(data).__name__}")
    _unknown(data, _SUITE_KEYS, source)
    raw_cases = data.get("cases")
    if not isinstance(raw_cases, list) or not raw_cases:
        raise EvalConfigError(f"{source}: 'cases' must be a non-empty list of cases")
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, Mapping):
        raise EvalConfigError(f"{source}: 'defaults' must be a mapping of case fields")
    cases = [parse_case({**defaults, **_mapping(c, f"{source}: cases[{i}]")},
                        where=f"{source}: cases[{i}]", base_dir=base_dir)
             for i, c in enumerate(raw_cases)]
    seen: set[str] = set()
    for c in cases:
        if c.name in seen:
            raise EvalConfigError(f"{source}: two cases are named {c.name!r}; names must be "
                                  "unique (reports and cassettes are keyed by them)")
        seen.add(c.name)
    agent = data.get("agent") or {}
    if isinstance(agent, str):
        agent = {"agent": agent}
    if not isinstance(agent, Mapping):
        raise EvalConfigError(f"{source}: 'agent' must be a mapping (model, tools, …) or "
                              "'module:attr'")
    judge = data.get("judge") or {}
    if not isinstance(judge, Mapping) or not isinstance(judge.get("model", ""), str):
        raise EvalConfigError(f"{source}: 'judge' must be a mapping like {{model: 'openai:…'}}")
    return Suite(tuple(cases), str(data.get("name") or name), dict(agent),
                 judge.get("model") or None, base_dir or Path.cwd())


def parse_case(data: Mapping[str, Any], *, where: str = "case",
               base_dir: Path | None = None) -> Case:
    """Validate one case given as a mapping (the YAML form); ``attachments`` paths are read
    from ``base_dir`` (default: the working directory)."""
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise EvalConfigError(f"{where}: every case needs a 'name' (a non-empty string)")
    where = f"{where} ({name!r})"
    _unknown(data, _CASE_KEYS, where)
    order = data.get("order", "in_order")
    if order not in _ORDERS:
        raise EvalConfigError(f"{where}: order must be one of {', '.join(_ORDERS)}, got "
                              f"{order!r}")
    state = data.get("state")
    if state is not None and state not in _STATES:
        raise EvalConfigError(f"{where}: state must be one of {', '.join(_STATES)}, got "
                              f"{state!r}")
    rubric = data.get("rubric")
    if rubric is not None and (not isinstance(rubric, str) or not rubric.strip()):
        raise EvalConfigError(f"{where}: rubric must be a yes/no question (a string)")
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise EvalConfigError(f"{where}: metadata must be a mapping")
    return Case(
        name=name.strip(), input=_input(data.get("input"), where),
        tool_calls=tuple(_call(c, f"{where}: tool_calls[{i}]")
                         for i, c in enumerate(_list(data.get("tool_calls"), where,
                                                     "tool_calls"))),
        order=cast(OrderMode, order),
        max_tool_calls=_count(data.get("max_tool_calls"), where, "max_tool_calls"),
        max_iterations=_count(data.get("max_iterations"), where, "max_iterations"),
        output=_output(data.get("output"), where), state=RunState(state) if state else None,
        rubric=rubric.strip() if rubric else None,
        tags=tuple(str(t) for t in _list(data.get("tags"), where, "tags")),
        metadata=dict(metadata),
        attachments=_attachments(data.get("attachments"), where, base_dir or Path.cwd()),
    )


def _attachments(value: Any, where: str, base_dir: Path) -> tuple[Attachment, ...]:
    paths = _list(value, where, "attachments")
    try:
        return tuple(attachment_from_path(base_dir / str(p)) for p in paths)
    except UserError as exc:
        raise EvalConfigError(f"{where}: attachments: {exc}") from None


def parse_matcher(value: Any, where: str = "argument") -> Matcher:
    """A YAML argument expectation → :class:`Matcher` (a plain value means ``equals``)."""
    if not (isinstance(value, Mapping) and value and set(value) & set(MATCHER_KEYS)):
        return Matcher("equals", value)
    keys = [k for k in value if k in MATCHER_KEYS]
    if len(keys) != 1:
        raise EvalConfigError(f"{where}: give exactly one of {', '.join(MATCHER_KEYS)}, got "
                              f"{', '.join(map(str, keys))}")
    kind = keys[0]
    allowed = {kind, "tol", "rel"} if kind == "approx" else {kind}
    extra = set(value) - allowed
    if extra:
        raise EvalConfigError(f"{where}: unknown key(s) {', '.join(sorted(map(str, extra)))} "
                              f"next to {kind!r}" + (" (approx takes tol and rel)"
                                                      if kind == "approx" else ""))
    want = value[kind]
    if kind == "ignore":
        return Matcher("ignore")
    if kind == "approx":
        return _approx(value, where)
    if kind == "regex":
        try:
            re.compile(str(want))
        except re.error as exc:
            raise EvalConfigError(f"{where}: invalid regex {want!r}: {exc}") from None
        return Matcher("regex", str(want))
    if kind == "one_of" and not isinstance(want, list):
        raise EvalConfigError(f"{where}: one_of takes a list of values")
    return Matcher(cast(Any, kind), want)


def _approx(value: Mapping[str, Any], where: str) -> Matcher:
    nums = {}
    for key in ("approx", "tol", "rel"):
        v = value.get(key, 0 if key != "approx" else None)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (key != "approx" and v < 0):
            raise EvalConfigError(f"{where}: {key} must be a number"
                                  + (" of at least 0" if key != "approx" else "")
                                  + f", got {v!r}")
        nums[key] = float(v)
    return Matcher("approx", nums["approx"], tol=nums["tol"] or 1e-9, rel=nums["rel"])


def _input(value: Any, where: str) -> tuple[str, ...]:
    turns = [value] if isinstance(value, str) else value
    if (not isinstance(turns, list) or not turns
            or not all(isinstance(t, str) and t.strip() for t in turns)):
        raise EvalConfigError(f"{where}: 'input' must be the user's message (a string) or a "
                              "list of messages (several turns)")
    return tuple(turns)


def _call(value: Any, where: str) -> ExpectedCall:
    if isinstance(value, str):
        value = {"name": value}
    data = _mapping(value, where)
    _unknown(data, _CALL_KEYS, where)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise EvalConfigError(f"{where}: an expected call needs the tool's 'name'")
    args = data.get("args") or {}
    if not isinstance(args, Mapping):
        raise EvalConfigError(f"{where}: 'args' must map argument names to expected values")
    agent = data.get("agent")
    if agent is not None and (not isinstance(agent, str) or not agent):
        raise EvalConfigError(f"{where}: 'agent' names the sub-agent that makes the call (a "
                              "non-empty string)")
    return ExpectedCall(name, {str(k): parse_matcher(v, f"{where}: args.{k}")
                               for k, v in args.items()}, bool(data.get("strict", False)),
                        agent)


def _output(value: Any, where: str) -> OutputCheck:
    if value is None:
        return OutputCheck()
    if isinstance(value, str):
        value = {"contains": value}
    data = _mapping(value, f"{where}: output")
    _unknown(data, _OUTPUT_KEYS, f"{where}: output")
    regex = tuple(str(r) for r in _strings(data.get("regex")))
    for r in regex:
        try:
            re.compile(r)
        except re.error as exc:
            raise EvalConfigError(f"{where}: output.regex {r!r} is invalid: {exc}") from None
    equals = data.get("equals")
    return OutputCheck(tuple(_strings(data.get("contains"))),
                       tuple(_strings(data.get("not_contains"))), regex,
                       None if equals is None else str(equals))


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [str(v) for v in items]


def _list(value: Any, where: str, key: str) -> Sequence[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise EvalConfigError(f"{where}: '{key}' must be a list")
    return value


def _count(value: Any, where: str, key: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise EvalConfigError(f"{where}: '{key}' must be a whole number of at least 0, got "
                              f"{value!r}")
    return value


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise EvalConfigError(f"{where}: expected a mapping, got {type(value).__name__}")
    return value


def _unknown(data: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    extra = [str(k) for k in data if k not in allowed]
    if extra:
        import difflib

        hints = [f"{k!r} (did you mean {m[0]!r}?)" if (m := difflib.get_close_matches(k, allowed, 1))
                 else repr(k) for k in extra]
        raise EvalConfigError(f"{where}: unknown key {', '.join(hints)}; allowed: "
                              f"{', '.join(allowed)}")
