"""What a case's run did, taken only from reactloop's own events.

A :class:`Transcript` is the scorers' whole view of a run: the tool calls with their results,
the final answer and state, iterations, tokens and time. It is plain data (JSON round trip),
so reports carry it and a changed scorer can be applied to it later.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reactloop.events import (
    Event,
    RunEndEvent,
    RunStartEvent,
    ToolCallEvent,
    ToolErrorEvent,
    ToolResultEvent,
)

__all__ = ["CallRecord", "Transcript", "TranscriptBuilder"]


@dataclass(slots=True)
class CallRecord:
    """One tool call of the run and what came back."""

    name: str
    arguments: Mapping[str, Any]
    result: str | None = None
    """The text the model saw (None if the call never finished)."""
    error: str | None = None
    turn: int = 0
    agent: str | None = None
    """The sub-agent whose run made the call (an agent called as a tool); None: the case's
    own run (also after a handoff: ``transfer_to_…`` is a call of that run)."""

    def to_dict(self) -> dict[str, Any]:
        d = {"name": self.name, "arguments": dict(self.arguments), "result": self.result,
             "error": self.error, "turn": self.turn}
        if self.agent is not None:
            d["agent"] = self.agent
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CallRecord:
        return cls(d["name"], d.get("arguments") or {}, d.get("result"), d.get("error"),
                   int(d.get("turn", 0)), d.get("agent"))


@dataclass(slots=True)
class Transcript:
    """A run of one case (all its turns), as the events told it."""

    inputs: tuple[str, ...]
    calls: list[CallRecord] = field(default_factory=list)
    output: str = ""
    """The last turn's answer."""
    state: str = "error"
    """The last turn's :class:`~reactloop.RunState` value."""
    iterations: int = 0
    """Model calls over all turns."""
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    model: str = ""
    error: str | None = None
    """Why the run failed (``state == "error"``), or why it could not run at all."""
    cost_usd: float | None = 0.0
    """What the model calls cost (genai-prices); None when a price is unknown."""

    def to_dict(self) -> dict[str, Any]:
        return {"inputs": list(self.inputs), "calls": [c.to_dict() for c in self.calls],
                "output": self.output, "state": self.state, "iterations": self.iterations,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "seconds": round(self.seconds, 4), "model": self.model, "error": self.error,
                "cost_usd": self.cost_usd}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Transcript:
        return cls(tuple(d.get("inputs") or ()),
                   [CallRecord.from_dict(c) for c in d.get("calls") or ()],
                   d.get("output") or "", d.get("state") or "error",
                   int(d.get("iterations", 0)), int(d.get("input_tokens", 0)),
                   int(d.get("output_tokens", 0)), float(d.get("seconds", 0.0)),
                   d.get("model") or "", d.get("error"), d.get("cost_usd"))


class TranscriptBuilder:
    """Feed it every event of every turn; :attr:`transcript` is the result."""

    def __init__(self, inputs: tuple[str, ...]) -> None:
        self.transcript = Transcript(inputs)
        self._turn = 0
        self._by_id: dict[str, CallRecord] = {}

    def next_turn(self) -> None:
        self._turn += 1

    def add(self, event: Event) -> None:
        t = self.transcript
        if isinstance(event, ToolCallEvent):
            record = CallRecord(event.call.name, dict(event.call.arguments), turn=self._turn,
                                agent=event.agent)
            t.calls.append(record)
            self._by_id[event.call.id or f"#{len(t.calls)}"] = record
        elif isinstance(event, (ToolResultEvent, ToolErrorEvent)):
            r = event.result
            found = self._by_id.get(r.call_id)
            if found is not None:
                found.result, found.error = r.content, r.error
        elif isinstance(event, RunStartEvent):
            t.model = t.model or event.model
        elif isinstance(event, RunEndEvent) and event.parent_run_id is None:
            result = event.result
            m = result.metrics
            t.output, t.state = result.output, result.state.value
            t.iterations += m.iterations
            t.input_tokens += m.input_tokens
            t.output_tokens += m.output_tokens
            t.cost_usd = None if t.cost_usd is None or m.cost_usd is None \
                else t.cost_usd + m.cost_usd
            if result.error is not None:
                t.error = f"{type(result.error).__name__}: {result.error}"
