"""A tool = name, description, JSON-schema parameters and an action (features T1, T2).

The schema sent to the model and the validator that checks arguments are built from the same
function signature, lazily on first use, so decorating a function costs next to nothing and
``import reactloop`` stays fast.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import math
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from reactloop import _threads
from reactloop.errors import UserError
from reactloop.messages import ToolSpec

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["ApprovalRule", "Tool", "ToolArgumentsError", "ToolContext", "check_rule", "tool"]

_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

ApprovalRule = bool | Callable[[Mapping[str, Any], "ToolContext"], bool]
"""Whether a call needs a person's approval: always (``True``), never (``False``), or as a
callable ``(arguments, context) -> bool`` decides per call."""


class ToolArgumentsError(Exception):
    """Arguments did not validate; the message says which field failed and why."""


@dataclass
class ToolContext:
    """Handed to a tool that declares a parameter annotated ``ToolContext``.

    That parameter is left out of the schema the model sees.
    """

    tool_name: str
    call_id: str
    run_id: str
    deps: Any = None
    """Whatever was passed as ``Agent(deps=...)``."""
    _emit: Callable[[str, Any], None] | None = field(default=None, repr=False)
    _add_tools: Callable[[Sequence[Tool]], None] | None = field(default=None, repr=False)
    state: dict[str, Any] = field(default_factory=dict, repr=False)
    """The run's extension state (``RunContext.state``): the plan, the loaded skills…
    Extensions read it here; what a tool changes must also be derivable from its result
    (see ``Extension.after_tools``), since tools may run in another process."""

    def emit(self, name: str, data: Any = None) -> None:
        """Send a ``custom`` event (a UI update, progress…) into the run's event stream."""
        if self._emit is not None:
            self._emit(name, data)

    def add_tools(self, tools: Sequence[Tool]) -> None:
        """Make more tools callable from the next iteration on (e.g. a skill's tools).

        They are appended after the existing tools, so the request prefix changes only once.
        """
        if self._add_tools is None:
            raise RuntimeError("this tool was called outside a run; tools cannot be added")
        self._add_tools(tools)


def check_rule(what: str, rule: Any) -> ApprovalRule:
    """``rule`` if it is an :data:`ApprovalRule`; else a :class:`UserError` naming ``what``."""
    if not isinstance(rule, bool) and not callable(rule):
        raise UserError(f"{what} (requires_approval / approve) must be True, False or a "
                        f"callable (arguments, context) -> bool, got {rule!r}")
    return rule  # type: ignore[no-any-return]


def _is_context_annotation(annotation: Any) -> bool:
    return annotation is ToolContext or annotation == "ToolContext"


def _check_retries(name: str, retries: object) -> int:
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise UserError(f"tool {name!r}: retries must be an integer >= 0, got {retries!r}")
    return retries


def _check_timeout(name: str, timeout: Any) -> None:
    # NaN passes a "<= 0" check and never expires; inf never expires either
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not math.isfinite(timeout) or timeout <= 0):
        raise UserError(f"tool {name!r}: timeout must be a positive, finite number of seconds, "
                        f"got {timeout!r}; pass e.g. timeout=30, or None for none")


def _checked_name(fn: Any, name: str | None) -> str:
    if not callable(fn):
        raise UserError(
            f"tool {fn!r} is not callable: pass a function, a Tool, or decorate with @tool"
        )
    name = name or getattr(fn, "__name__", None) or type(fn).__name__
    if not _NAME_RE.match(name):
        raise UserError(
            f"tool name {name!r} is invalid: use 1-64 characters from [A-Za-z0-9_-] "
            "(every provider accepts those); pass name=... to @tool"
        )
    return name


class Tool:
    """A callable the model may use. Build one with :func:`tool` or ``Tool(fn)``."""

    _own_validate = False  # a subclass's own validate() runs for every call (no shortcut)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._own_validate = cls.validate is not Tool.validate

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        repeatable: bool = False,
        origin: str | None = None,
        validate: bool = True,
        inline: bool = False,
        requires_approval: ApprovalRule = False,
        retries: int = 0,
        internal: bool = False,
    ) -> None:
        """
        Args:
            fn: the action, sync or async.
            name: the name the model sees (default: the function's name).
            description: what the tool does (default: the docstring's summary).
            parameters: an explicit JSON schema; skips validation unless ``validate`` is set
                (used for MCP tools, whose server validates).
            timeout: seconds one call may take.
            repeatable: allow identical repeated calls in one run (e.g. a clock).
            origin: where the tool came from, for error messages.
            validate: check arguments against the signature before calling.
            inline: run a *sync* function directly on the event loop instead of in a worker
                thread. Saves the thread hop (~100 µs) for quick, pure functions; never use it
                for anything that blocks (I/O, sleeps, heavy computation).
            requires_approval: each call waits for a person's decision (``True``), or a
                callable ``(arguments, context) -> bool`` decides per call.
            retries: more attempts after a failure, for a call that is safe to repeat
                (honoured by durable runtimes: ``reactloop.temporal``); default 0.
            internal: the tool touches only the run's own state (loop control, the typed
                answer, the plan, loading skills): its calls never wait for approval, are
                never answered from an identical earlier call, and ``tool_selection`` always
                offers it.
        """
        self.fn = fn
        self.name = _checked_name(fn, name)
        _check_timeout(self.name, timeout)
        self.retries = _check_retries(self.name, retries)
        self._description = description
        self._explicit_parameters = dict(parameters) if parameters is not None else None
        self.timeout, self.repeatable = timeout, repeatable
        self.origin = origin or _origin_of(fn)
        self._validate = validate and parameters is None
        self.inline, self.internal = inline, internal
        self._rule = check_rule(f"tool {self.name!r}: rule", requires_approval)
        self._is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
        )
        self._model: type[BaseModel] | None = None
        self._schema: dict[str, Any] | None = None
        self._context_param: str | None = None
        self._spec: ToolSpec | None = None
        self._param_names: tuple[str, ...] = ()
        self._plain: tuple[tuple[str, type, Any], ...] | None = None  # _plain_parameters
        functools.update_wrapper(self, fn, updated=())

    @property
    def requires_approval(self) -> ApprovalRule:
        """Whether a call waits for a person's approval (see ``__init__``)."""
        return self._rule

    @requires_approval.setter
    def requires_approval(self, rule: ApprovalRule) -> None:
        global rules_changed
        self._rule = rule
        rules_changed = True  # registries can no longer trust what they saw when adding tools

    # -- the model-facing view -------------------------------------------------------------
    @property
    def description(self) -> str:
        if self._description is None:
            self._build()
        return self._description or ""

    @property
    def parameters(self) -> dict[str, Any]:
        if self._explicit_parameters is not None:
            return self._explicit_parameters
        if self._schema is None:
            self._build()
        assert self._schema is not None
        return self._schema

    @functools.cached_property
    def wants_context(self) -> bool:
        """Whether the function takes a :class:`ToolContext` (built only for those): read from
        the signature on first use, then a plain attribute (no call per tool call)."""
        if self._model is None and self._explicit_parameters is None:
            self._build()
        return self._context_param is not None

    def spec(self) -> ToolSpec:
        if self._spec is None:
            self._spec = ToolSpec(self.name, self.description, self.parameters, self.internal)
        return self._spec

    def renamed(self, name: str) -> Tool:
        """A copy with another name (e.g. a namespace prefix)."""
        clone = Tool(
            self.fn,
            name=name,
            description=self.description,
            parameters=self._explicit_parameters,
            timeout=self.timeout,
            repeatable=self.repeatable,
            origin=self.origin,
            validate=self._validate,
            inline=self.inline,
            requires_approval=self.requires_approval,
            retries=self.retries,
            internal=self.internal,
        )
        return clone

    # -- execution ---------------------------------------------------------------------------
    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Validated keyword arguments for the action; raises :class:`ToolArgumentsError`."""
        if not self._validate:
            return dict(arguments)
        if self._model is None:
            self._build()
        assert self._model is not None
        if self._plain is not None and self._is_plain(arguments):
            # pydantic would return them unchanged, with the defaults filled in
            return {k: arguments.get(k, default)
                    for k, _, default in self._plain}
        from pydantic import ValidationError

        try:
            parsed = self._model.model_validate(arguments)
        except ValidationError as exc:
            raise ToolArgumentsError(_format_validation_error(exc, self._param_names)) from None
        return {k: getattr(parsed, k) for k in self._param_names}

    def _is_plain(self, arguments: Mapping[str, Any]) -> bool:
        """The arguments are a dict of the declared plain types, every required one there and
        no other (see :func:`_plain_parameters`): validating would change nothing."""
        plain = self._plain
        if plain is None or type(arguments) is not dict:
            return False
        n = 0
        for k, kind, default in plain:
            if k in arguments:
                if type(arguments[k]) is not kind:
                    return False
                n += 1
            elif default is _REQUIRED:
                return False
        return n == len(arguments)

    async def call(self, arguments: Mapping[str, Any], context: ToolContext | None = None) -> Any:
        """Validate ``arguments`` and run the action (sync actions run on one of reactloop's
        worker threads: a call given up on — timeout, deadline, cancel — is abandoned, and
        neither the run nor the process waits for it).

        Arguments that already have the declared plain types go to the action as they are
        (the action's own defaults are the declared ones): no validation, no copy."""
        kwargs: Mapping[str, Any] = arguments
        plain, ready = self._plain, not self._validate
        if plain is not None and type(arguments) is dict and not self._own_validate:
            # _is_plain, without the call
            n = 0
            for k, kind, default in plain:
                if k in arguments:
                    if type(arguments[k]) is not kind:
                        break
                    n += 1
                elif default is _REQUIRED:
                    break
            else:
                ready = ready or n == len(arguments)
        if not ready:
            kwargs = self.validate(arguments)
        if self._context_param is not None:
            kwargs = {**kwargs, self._context_param: context}
        fn = self.fn
        if self._is_async:
            return await fn(**kwargs)
        if self.inline:
            result = fn(**kwargs)
        else:  # run_in_thread's work, without its coroutine
            job = _threads.start(fn, kwargs)
            try:
                result = await job.future
            except asyncio.CancelledError:
                _threads.abandon(job)
                raise
        if type(result) not in _SCALAR_TYPES and inspect.isawaitable(result):
            # a sync wrapper that returned a coroutine
            return await result
        return result

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Calling the tool calls the function, so decorated functions stay usable."""
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, origin={self.origin!r})"

    # -- schema building ---------------------------------------------------------------------
    def _build(self) -> None:
        from pydantic import ConfigDict, Field, create_model

        summary, arg_docs = _parse_docstring(inspect.getdoc(self.fn) or "")
        if self._description is None:
            self._description = summary
        if self._explicit_parameters is not None:
            return
        try:
            sig = inspect.signature(self.fn)
            hints = _type_hints(self.fn)
        except (TypeError, ValueError, NameError) as exc:
            raise UserError(f"tool {self.name!r}: cannot read its signature ({exc})") from exc
        fields: dict[str, Any] = {}
        names: list[str] = []
        for pname, param in sig.parameters.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise UserError(
                    f"tool {self.name!r}: *args/**kwargs cannot be described to a model; "
                    "give every parameter a name and a type"
                )
            annotation = hints.get(pname, param.annotation)
            if _is_context_annotation(annotation):
                self._context_param = pname
                continue
            if isinstance(annotation, str):  # a name get_type_hints could not resolve
                raise UserError(
                    f"tool {self.name!r}: cannot resolve the type hint {annotation!r} of "
                    f"parameter {pname!r}; import the names it uses at module level"
                )
            if annotation is inspect.Parameter.empty:
                annotation = Any
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[pname] = (annotation, Field(default, description=arg_docs.get(pname)))
            names.append(pname)
        self._param_names = tuple(names)
        self._plain = _plain_parameters(sig, hints, names)
        model_name = "".join(p.capitalize() for p in re.split(r"[_-]", self.name)) + "Args"
        self._model = create_model(
            model_name, __config__=ConfigDict(extra="forbid"), **fields
        )
        schema = self._model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            if isinstance(prop, dict):
                prop.pop("title", None)
        schema.setdefault("properties", {})
        self._schema = schema


rules_changed = False
"""Some tool's ``requires_approval`` was set after it was made: :class:`ToolRegistry` then
asks every tool per call instead of trusting what it saw when the tools were added."""
_REQUIRED: Any = object()
_SCALAR_TYPES = (int, float, str, bool)


def _plain_parameters(sig: inspect.Signature, hints: dict[str, Any], names: Sequence[str]
                      ) -> tuple[tuple[str, type, Any], ...] | None:
    """Each parameter's type and default (``_REQUIRED``) when every one is a plain
    ``int``/``float``/``str``/``bool`` with a scalar (or no) default, else None. Arguments of
    exactly those types need no validation: pydantic would return them unchanged."""
    out: list[tuple[str, type, Any]] = []
    for name in names:
        param = sig.parameters[name]
        kind = hints.get(name, param.annotation)
        default = _REQUIRED if param.default is inspect.Parameter.empty else param.default
        if kind not in _SCALAR_TYPES or not (default is _REQUIRED or default is None
                                             or type(default) in _SCALAR_TYPES):
            return None
        out.append((name, kind, default))
    return tuple(out)


def _type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    import typing

    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn).__call__
    try:
        return typing.get_type_hints(target, include_extras=True)  # keep Annotated[…, Field]
    except NameError:
        # an annotation refers to a name that only exists under TYPE_CHECKING; fall back
        return {}


def _origin_of(fn: Callable[..., Any]) -> str:
    module = getattr(fn, "__module__", None) or "?"
    qual = getattr(fn, "__qualname__", None) or type(fn).__name__
    return f"{module}.{qual}"


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Summary (the text before the first section) and per-argument descriptions."""
    if not doc:
        return "", {}
    from docstring_parser import parse

    parsed = parse(doc)
    parts = [p for p in (parsed.short_description, parsed.long_description) if p]
    summary = "\n\n".join(parts).strip()
    return summary, {p.arg_name: (p.description or "").strip() for p in parsed.params}


def _format_validation_error(exc: Any, expected: tuple[str, ...]) -> str:
    problems = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(x) for x in err.get("loc", ())) or "arguments"
        if err.get("type") == "extra_forbidden":
            problems.append(f"unexpected argument '{loc}' (expected: {', '.join(expected)})")
        elif err.get("type") == "missing":
            problems.append(f"missing required argument '{loc}'")
        else:
            got = err.get("input")
            problems.append(f"argument '{loc}': {err.get('msg')} (got {got!r})")
    return "Invalid arguments: " + "; ".join(problems)


ToolFunc = Callable[..., Any] | Callable[..., Awaitable[Any]]


@overload
def tool(fn: ToolFunc, /) -> Tool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    repeatable: bool = False,
    inline: bool = False,
    requires_approval: ApprovalRule = False,
    retries: int = 0,
    internal: bool = False,
) -> Callable[[ToolFunc], Tool]: ...
def tool(
    fn: ToolFunc | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    repeatable: bool = False,
    inline: bool = False,
    requires_approval: ApprovalRule = False,
    retries: int = 0,
    internal: bool = False,
) -> Tool | Callable[[ToolFunc], Tool]:
    """Turn a typed function (sync or async) into a :class:`Tool`.

    The schema comes from the type hints, the descriptions from the Google-style docstring::

        @tool
        def add(a: int, b: int) -> int:
            \"\"\"Add two integers.

            Args:
                a: first addend
                b: second addend
            \"\"\"
            return a + b

    Args:
        name: override the tool's name.
        description: override the docstring summary.
        timeout: seconds one call may take before the model gets a timeout error.
        repeatable: identical calls in one run are executed again instead of answered from
            the earlier result (for tools whose answer changes, such as a clock).
        inline: run a sync function on the event loop instead of a worker thread (only for
            quick, non-blocking functions).
        requires_approval: a person approves each call before it runs (``True``), or a
            callable ``(arguments, context) -> bool`` decides per call (see
            :mod:`reactloop.approvals`).
        retries: the call is safe to repeat: a failed attempt may be retried this many times
            on a durable runtime (``reactloop.temporal``); default 0 (attempted once).
        internal: the tool touches only the run's own state: never waits for approval, is
            never answered from an identical earlier call, and is always offered.
    """

    def wrap(f: ToolFunc) -> Tool:
        return Tool(f, name=name, description=description, timeout=timeout,
                    repeatable=repeatable, inline=inline, requires_approval=requires_approval,
                    retries=retries, internal=internal)

    return wrap(fn) if fn is not None else wrap
