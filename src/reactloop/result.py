"""What a run produces: :class:`RunResult` with its :class:`Step` s and :class:`Metrics`."""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from itertools import repeat
from typing import TYPE_CHECKING, Any, Generic, NoReturn

from reactloop.approvals import PendingApproval
from reactloop.attachments import Attachment
from reactloop.messages import Message, ToolCall

__all__ = ["Metrics", "OutputT", "RunResult", "RunState", "Step", "ToolResult", "jsonable"]

if TYPE_CHECKING:
    from typing_extensions import TypeVar

    OutputT = TypeVar("OutputT", default=str)
    """The type of a run's answer: ``str`` unless the agent has an ``output_type``."""
else:  # the default matters to type checkers only: no typing_extensions at import time
    from typing import TypeVar

    OutputT = TypeVar("OutputT")


class RunState(enum.StrEnum):
    """Where a run is (the first two) or how it ended (the rest)."""

    THINKING = "thinking"
    TOOL_CALLING = "tool_calling"
    COMPLETED = "completed"
    MAX_ITERATIONS = "max_iterations"
    WAITING_FOR_USER = "waiting_for_user"
    WAITING_FOR_APPROVAL = "waiting_for_approval"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"
    ERROR = "error"
    USAGE_LIMIT = "usage_limit"
    """A usage limit (``Agent(usage_limits=...)``: requests, tool calls, tokens, cost) would
    have been passed; the output says which and what was done, like ``MAX_ITERATIONS``."""
    BLOCKED = "blocked"
    """A guardrail tripped (``GuardrailTripped``); the output is its reason and nothing it
    refused was returned or stored."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The uniform result of one tool call: ``{name, result, error}``."""

    name: str
    result: Any = None
    """The tool's return value (None when it failed)."""
    error: str | None = None
    """What went wrong, as the model is told; None on success."""
    call_id: str = ""
    arguments: Mapping[str, Any] = field(default_factory=dict)
    content: str = ""
    """The text the model sees."""
    traceback: str | None = None
    """For exceptions: the traceback (events and logs only, never the model)."""
    duration: float = 0.0
    cached: bool = False
    """True when an identical earlier call's result was reused."""
    attachments: tuple[Attachment, ...] = ()
    """Images and documents the tool returned (they go to the model with ``content``)."""
    run: RunResult[Any] | None = field(default=None, repr=False, compare=False)
    """The sub-run's result when the call ran an agent (``agent.as_tool()``): its steps,
    metrics and messages, nested under the call (not part of saved runs)."""

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self, *, full: bool = False) -> dict[str, Any]:
        """``{name, result, error}``; with ``full``, every field (for saved runs)."""
        d = {"name": self.name, "result": jsonable(self.result), "error": self.error}
        if full:
            d.update(call_id=self.call_id, arguments=jsonable(dict(self.arguments)),
                     content=self.content, duration=self.duration, cached=self.cached)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ToolResult:
        """Inverse of :meth:`to_dict` (``full`` gives back every field)."""
        return cls(str(d["name"]), d.get("result"), d.get("error"), str(d.get("call_id", "")),
                   dict(d.get("arguments") or {}), str(d.get("content", "")), None,
                   float(d.get("duration", 0.0)), bool(d.get("cached", False)))


@dataclass(frozen=True, slots=True)
class Step:
    """One iteration: what the model said, which tools it called, what they returned."""

    iteration: int
    text: str | None
    tool_calls: tuple[ToolCall, ...]
    results: tuple[ToolResult, ...]
    started_at: float
    """Unix timestamp."""
    ended_at: float
    model: str | None = None
    """The model that answered in this step (with a ``FallbackModel``: the one that took
    the request), when known."""

    def to_dict(self) -> dict[str, Any]:
        d = {
            "iteration": self.iteration,
            "text": self.text,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "results": [r.to_dict() for r in self.results],
            "started_at": self.started_at,
            "ended_at": self.ended_at,
        }
        if self.model is not None:
            d["model"] = self.model
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Step:
        return cls(int(d["iteration"]), d.get("text"),
                   tuple(ToolCall(c["name"], c.get("arguments") or {}, c.get("id"))
                         for c in d.get("tool_calls", ())),
                   tuple(ToolResult.from_dict(r) for r in d.get("results", ())),
                   float(d.get("started_at", 0.0)), float(d.get("ended_at", 0.0)),
                   d.get("model"))


class _NoAgents(dict[str, Any]):
    """The one empty :attr:`Metrics.agents` every run without sub-agents or handoffs shares
    (a new ``{}`` per run was 64 bytes of every live run, issue 28): equal to ``{}``, shown,
    saved, copied and pickled as ``{}``; it refuses to be changed (the field is a
    ``Mapping``: reactloop replaces it, never writes into it)."""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # ``type(m)(items)`` (``dataclasses.asdict``, copying code) makes a plain dict
        return dict(*args, **kwargs) if args or kwargs else super().__new__(cls)

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("Metrics.agents cannot be changed in place: assign a new mapping "
                        "(metrics.agents = {...})")

    __setitem__ = __delitem__ = __ior__ = _refuse
    update = setdefault = pop = popitem = clear = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return _no_agents, ()

    def __copy__(self) -> _NoAgents:
        return self

    def __deepcopy__(self, memo: Any) -> _NoAgents:
        return self


_NO_AGENTS: _NoAgents = _NoAgents()


def _no_agents() -> _NoAgents:
    return _NO_AGENTS


@dataclass(slots=True)
class Metrics:
    iterations: int = 0
    tool_calls: int = 0
    execution_time: float = 0.0
    """Seconds."""
    input_tokens: int = 0
    """Every input token (cache reads and writes included)."""
    output_tokens: int = 0
    success: bool = False
    requests: int = 0
    """Model calls (a retried cut-off reply and a summarizer's calls count too)."""
    cache_read_tokens: int = 0
    """Input tokens the provider served from its prompt cache (part of ``input_tokens``)."""
    cache_write_tokens: int = 0
    """Input tokens written to the provider's prompt cache (part of ``input_tokens``)."""
    cost_usd: float | None = 0.0
    """What the model calls cost in US dollars, from ``genai-prices`` (``reactloop[cost]``);
    ``None`` when any call's price is unknown ("cost unknown", never a made-up 0)."""
    agents: Mapping[str, Metrics] = field(default_factory=repeat(_NO_AGENTS).__next__)
    """The sub-agents' share of these totals (agents called as tools, at any depth, and
    agents that handed the run off), by agent name, each summed over its calls; empty
    without either. The totals above include it: see :attr:`RunResult.metrics_by_agent` for
    every agent's own share."""

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def cache_hit_rate(self) -> float | None:
        """The share of input tokens read from the prompt cache (None without input)."""
        return self.cache_read_tokens / self.input_tokens if self.input_tokens else None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "iterations": self.iterations,
            "tool_calls": self.tool_calls,
            "execution_time": self.execution_time,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "success": self.success,
            "requests": self.requests,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cost_usd": self.cost_usd,
        }
        if self.agents:
            d["agents"] = {name: m.to_dict() for name, m in self.agents.items()}
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Metrics:
        cost = d.get("cost_usd", 0.0)
        return cls(int(d.get("iterations", 0)), int(d.get("tool_calls", 0)),
                   float(d.get("execution_time", 0.0)), int(d.get("input_tokens", 0)),
                   int(d.get("output_tokens", 0)), bool(d.get("success", False)),
                   int(d.get("requests", 0)), int(d.get("cache_read_tokens", 0)),
                   int(d.get("cache_write_tokens", 0)),
                   None if cost is None else float(cost),
                   agents={str(k): cls.from_dict(v) for k, v in agents.items()} if (
                       agents := d.get("agents")) else _NO_AGENTS)


@dataclass(slots=True)
class RunResult(Generic[OutputT]):
    """The outcome of a run. A run that hits a limit still returns one, with a usable output.

    ``output`` is a ``str`` — or, for an agent with ``output_type=T``, a validated ``T``
    (``None`` when such a run ended without a valid answer: see ``state``, ``error`` and
    ``text``)."""

    output: OutputT
    state: RunState
    steps: Sequence[Step]
    metrics: Metrics
    messages: Sequence[Message]
    """The stored history (never contains budget notes)."""
    error: BaseException | None = None
    """Set when ``state`` is ``ERROR``."""
    plan: Any = None
    """The plan, when planning was used."""
    run_id: str = ""
    """The run's id (as on its events)."""
    context: Any = field(default=None, repr=False, compare=False)
    """The run's :class:`~reactloop.RunContext` (its state as data); see :meth:`save`."""
    text: str = ""
    """The answer as text: the validated JSON for a typed run, else the same as ``output``;
    for a run that ended without an answer, why (the question, the fallback explanation)."""
    pending_approvals: Sequence[PendingApproval] = ()
    """``WAITING_FOR_APPROVAL``: the calls waiting for a decision (resume with decisions)."""
    agent: str = ""
    """The name of the agent that answered (after a handoff: the agent handed to)."""
    parent_run_id: str | None = None
    """For a sub-run (an agent called as a tool): the run that called it."""

    def __post_init__(self) -> None:
        if not self.text and isinstance(self.output, str):
            self.text = self.output

    @property
    def metrics_by_agent(self) -> dict[str, Metrics]:
        """Every agent's own share of :attr:`metrics`: this run's agent (what its own model
        calls and tools did; after a handoff, since the handoff), each sub-agent and each
        agent that handed off (:attr:`Metrics.agents`)."""
        own = replace(self.metrics, agents={})
        for sub in self.metrics.agents.values():
            own = combine_metrics(own, sub, -1, shared_only=True)
        out = dict(self.metrics.agents)
        name = self.agent or "agent"
        out[name] = merge_metrics(out[name], own) if name in out else own
        return out

    @property
    def finished(self) -> bool:
        """True when the model finished the task (``COMPLETED``)."""
        return self.state is RunState.COMPLETED

    def to_dict(self) -> dict[str, Any]:
        return {
            "output": jsonable(self.output),
            "text": self.text,
            "state": self.state.value,
            "finished": self.finished,
            "steps": [s.to_dict() for s in self.steps],
            "metrics": self.metrics.to_dict(),
            "messages": [m.to_dict() for m in self.messages],
            "error": None if self.error is None else f"{type(self.error).__name__}: {self.error}",
            "plan": jsonable(self.plan),
            "run_id": self.run_id,
            "pending_approvals": [p.to_dict() for p in self.pending_approvals],
            "agent": self.agent,
        }

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)

    def save(self) -> str:
        """The run's state as JSON — history, steps, metrics, the plan, loaded skills, every
        extension's state, the calls waiting for approval — for :meth:`Agent.resume` in any
        process (the answer to the question a ``WAITING_FOR_USER`` run asked, or the decisions
        a ``WAITING_FOR_APPROVAL`` run waits for). Attachments are written once each, by
        content hash, however often the history mentions them."""
        if self.context is None:
            raise ValueError("this result was not produced by a run; there is nothing to save")
        return json.dumps(self.context.to_dict(attachments=True), ensure_ascii=False)


_OWN_FIELDS = frozenset(("iterations", "execution_time"))
"""Counted per run: a sub-agent's iterations and time are its own, not its parent's (every
other number — tool calls, tokens, and whatever else is counted — adds up)."""


def combine_metrics(a: Metrics, b: Metrics, sign: int = 1, *, shared_only: bool = False
                    ) -> Metrics:
    """``a`` plus (``sign=-1``: minus) ``b``, field by field; ``shared_only`` leaves the
    per-run fields (iterations, time) as in ``a``. An unknown value (None) stays unknown;
    ``success`` holds when both hold (for a sum); ``agents`` is ``a``'s."""
    out = replace(a, agents=dict(a.agents))
    for f in fields(Metrics):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name == "agents" or (shared_only and f.name in _OWN_FIELDS):
            continue
        if isinstance(x, bool):
            setattr(out, f.name, x and y if sign > 0 else x)
        elif isinstance(x, int | float) and isinstance(y, int | float):
            setattr(out, f.name, x + sign * y)
        else:  # None: unknown (a cost without a price)
            setattr(out, f.name, None)
    return out


def merge_metrics(a: Metrics, b: Metrics) -> Metrics:
    """Two shares of one agent's work added up (``success``: both succeeded)."""
    return combine_metrics(a, b)


def jsonable(value: Any) -> Any:
    """``value`` as JSON data (objects with ``to_dict``, dataclasses, pydantic models…)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Attachment):  # a reference: bytes never go into events or JSON
        return value.ref()
    if isinstance(value, list | tuple) and any(isinstance(v, Attachment) for v in value):
        return [jsonable(v) for v in value]
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and not isinstance(value, type):
        return to_dict()
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value, fallback=str)
