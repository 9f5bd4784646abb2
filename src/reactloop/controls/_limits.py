"""Usage limits: :class:`UsageLimits` (configuration) and :class:`Budget` (what a run, a
session or a parent run has used, checked against its limits).

A run's budget links to the budget it runs inside — the session's, or the parent run's when
the run is a sub-agent called from a tool — so every request, token, tool call and dollar
counts toward every limit above it, and a limit anywhere in the chain ends the run.
"""

from __future__ import annotations

import contextvars
import math
from dataclasses import dataclass, fields
from typing import Any

from reactloop.errors import UsageLimitExceeded, UserError
from reactloop.messages import Usage

__all__ = ["Budget", "UsageLimits", "outer_budget"]


@dataclass(frozen=True, slots=True)
class UsageLimits:
    """Ceilings on what one run (``Agent(usage_limits=...)``) or one session
    (``session.usage_limits``) may use. ``None`` means no limit.

    They are checked before each model call — with the request's counted tokens, so a call
    that would go over is never sent — and after it; a run that reaches one ends
    ``RunState.USAGE_LIMIT`` with a usable answer (what was done), like ``max_iterations``.
    These are not ``ModelSettings.max_tokens`` (the cap on one response).
    """

    max_requests: int | None = None
    """Model calls."""
    max_tool_calls: int | None = None
    """Tool calls run (a response whose calls would pass it runs none of them)."""
    max_input_tokens: int | None = None
    """Input tokens over all calls (each call sends the whole request again)."""
    max_output_tokens: int | None = None
    max_total_tokens: int | None = None
    """Input plus output tokens."""
    max_cost_usd: float | None = None
    """US dollars, priced by ``genai-prices`` (``pip install 'reactloop[cost]'``); a run whose
    model has no known price cannot be held to it and ends ``USAGE_LIMIT`` before its call."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            if f.name == "max_cost_usd":
                if (isinstance(value, bool) or not isinstance(value, int | float)
                        or not math.isfinite(value) or value <= 0):
                    raise UserError(f"UsageLimits(max_cost_usd=...) must be a positive number "
                                    f"of US dollars or None, got {value!r}")
            elif isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UserError(f"UsageLimits({f.name}=...) must be an integer of at least 1 "
                                f"or None, got {value!r}")

    @property
    def any(self) -> bool:
        """True when at least one limit is set."""
        return any(getattr(self, f.name) is not None for f in fields(self))


class Budget:
    """Usage of one scope (a run or a session) and its limits, linked to the scope it runs
    in (``parent``). Charges go to the whole chain; checks look at the whole chain."""

    __slots__ = ("cost", "input_tokens", "limits", "output_tokens", "parent", "requests",
                 "tool_calls", "unpriced")

    def __init__(self, limits: UsageLimits | None = None, parent: Budget | None = None) -> None:
        self.limits = limits if limits is not None and limits.any else None
        self.parent = parent
        self.requests = self.tool_calls = self.input_tokens = self.output_tokens = 0
        self.cost = 0.0
        self.unpriced: str | None = None
        """A model whose calls had no known price (the cost is then unknown)."""

    def chain(self) -> list[Budget]:
        out: list[Budget] = []
        b: Budget | None = self
        while b is not None:
            out.append(b)
            b = b.parent
        return out

    # -- charges -----------------------------------------------------------------------------
    def charge_call(self, usage: Usage | None, cost: float | None, model: str) -> None:
        for b in self.chain():
            b.requests += 1
            if usage is not None:
                b.input_tokens += usage.input_tokens
                b.output_tokens += usage.output_tokens
            if cost is None:
                b.unpriced = b.unpriced or model
            else:
                b.cost += cost

    def add(self, metrics: Any) -> None:
        """Count a finished run's :class:`~reactloop.Metrics` (a session's totals)."""
        self.requests += metrics.requests
        self.tool_calls += metrics.tool_calls
        self.input_tokens += metrics.input_tokens
        self.output_tokens += metrics.output_tokens
        if metrics.cost_usd is None:
            self.unpriced = self.unpriced or "a model"
        else:
            self.cost += metrics.cost_usd

    def seeded(self, limits: UsageLimits | None) -> Budget:
        """A new budget with ``limits`` that starts from this one's usage."""
        b = Budget(limits)
        b.requests, b.tool_calls = self.requests, self.tool_calls
        b.input_tokens, b.output_tokens = self.input_tokens, self.output_tokens
        b.cost, b.unpriced = self.cost, self.unpriced
        return b

    def charge_tools(self, n: int) -> None:
        for b in self.chain():
            b.tool_calls += n

    # -- checks ------------------------------------------------------------------------------
    def check_call(self, tokens: int, input_price: float | None, model: str) -> None:
        """Before a model call whose request counts ``tokens``: raise
        :class:`UsageLimitExceeded` when sending it would pass a limit."""
        for b in self.chain():
            if b.limits is not None:
                _check_call(b, b.limits, tokens, input_price, model)

    def check_spent(self) -> None:
        """After a model call: raise :class:`UsageLimitExceeded` when a limit is passed."""
        for b in self.chain():
            lim = b.limits
            if lim is None:
                continue
            _over("max_input_tokens", b.input_tokens, lim.max_input_tokens)
            _over("max_output_tokens", b.output_tokens, lim.max_output_tokens)
            _over("max_total_tokens", b.input_tokens + b.output_tokens, lim.max_total_tokens)
            if lim.max_cost_usd is not None and b.cost > lim.max_cost_usd:
                raise UsageLimitExceeded(
                    f"the usage limit max_cost_usd={lim.max_cost_usd:g} was passed "
                    f"(${b.cost:.6f} spent)", "max_cost_usd")

    def check_tools(self, n: int) -> None:
        """Before running ``n`` tool calls."""
        for b in self.chain():
            lim = b.limits
            if lim is not None and lim.max_tool_calls is not None \
                    and b.tool_calls + n > lim.max_tool_calls:
                raise UsageLimitExceeded(
                    f"the usage limit max_tool_calls={lim.max_tool_calls} would be passed "
                    f"({b.tool_calls} run, {n} more asked for)", "max_tool_calls")

    def to_dict(self) -> dict[str, Any]:
        return {"requests": self.requests, "tool_calls": self.tool_calls,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cost_usd": None if self.unpriced else self.cost}


def _over(name: str, used: int, limit: int | None) -> None:
    if limit is not None and used > limit:
        raise UsageLimitExceeded(f"the usage limit {name}={limit} was passed ({used} used)",
                                 name)


def _check_call(b: Budget, lim: UsageLimits, tokens: int, input_price: float | None,
                model: str) -> None:
    if lim.max_requests is not None and b.requests + 1 > lim.max_requests:
        raise UsageLimitExceeded(f"the usage limit max_requests={lim.max_requests} was "
                                 f"reached ({b.requests} calls made)", "max_requests")
    for name, used, limit in (
            ("max_input_tokens", b.input_tokens, lim.max_input_tokens),
            ("max_total_tokens", b.input_tokens + b.output_tokens, lim.max_total_tokens)):
        if limit is not None and used + tokens > limit:
            raise UsageLimitExceeded(
                f"the usage limit {name}={limit} would be passed by the next model call "
                f"({used} used, the request counts {tokens})", name)
    if lim.max_output_tokens is not None and b.output_tokens >= lim.max_output_tokens:
        raise UsageLimitExceeded(f"the usage limit max_output_tokens={lim.max_output_tokens} "
                                 f"was reached ({b.output_tokens} used)", "max_output_tokens")
    if lim.max_cost_usd is None:
        return
    if b.unpriced or input_price is None:
        raise UsageLimitExceeded(
            f"the usage limit max_cost_usd={lim.max_cost_usd:g} cannot be enforced: the cost "
            f"of {b.unpriced or model} is unknown (install 'reactloop[cost]', or use a model "
            "genai-prices knows)", "max_cost_usd")
    if b.cost + input_price * tokens > lim.max_cost_usd:
        raise UsageLimitExceeded(
            f"the usage limit max_cost_usd={lim.max_cost_usd:g} would be passed by the next "
            f"model call (${b.cost:.6f} spent, its input alone costs about "
            f"${input_price * tokens:.6f})", "max_cost_usd")


outer_budget: contextvars.ContextVar[Budget | None] = contextvars.ContextVar(
    "reactloop_outer_budget", default=None)
"""The budget a new run runs inside: set by a session around its run, and by a run around
its tool batches (so a sub-agent called from a tool shares its parent's limits)."""
