"""The state of one run as plain data: :class:`RunContext`.

Everything a run accumulates lives here — the history, the steps, the metrics, and the
per-run state of extensions (the plan, the loaded skills) keyed by extension — never on
agent-level objects, so any number of runs can share one :class:`~reactloop.Agent`. A context
serialises to JSON (:meth:`RunContext.to_dict`) and is rebuilt from it in another process
(:meth:`RunContext.from_dict`), which is how a waiting run resumes.

This module sits below the loop: it imports values (messages, events, results) and the tool
registry, and nothing that imports it back.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reactloop._repeats import seen_key
from reactloop.approvals import PendingApproval, pending_approvals
from reactloop.events import CustomEvent, Event
from reactloop.messages import Message, ToolCall, attachment_blobs, message_from_dict
from reactloop.result import Metrics, Step, ToolResult, jsonable
from reactloop.tools._registry import ToolRegistry
from reactloop.tools._tool import Tool

__all__ = ["SNAPSHOT_VERSION", "RunContext"]

SNAPSHOT_VERSION = 1
"""Version of the shape :meth:`RunContext.to_dict` writes; a newer one is refused."""


class RunContext:
    """The mutable, serialisable state of one run.

    Extensions keep their per-run data in :attr:`state` under their own key and announce
    changes with :meth:`emit`; the loop appends to :attr:`messages` only through
    :meth:`append`, which also feeds the write-ahead hook.
    """

    __slots__ = ("conversation_id", "deps", "iteration", "messages", "metrics", "on_message",
                 "open_calls", "pending", "prompt", "reminders", "run_id", "seen", "state", "steps",
                 "tally", "tools")

    def __init__(self, run_id: str, prompt: str, messages: Sequence[Message], *,
                 tools: ToolRegistry | None = None, deps: Any = None,
                 state: Mapping[str, Any] | None = None,
                 on_message: Callable[[Message], None] | None = None,
                 conversation_id: str | None = None) -> None:
        self.run_id = run_id
        """The run's id (on every event)."""
        self.conversation_id = conversation_id
        """The conversation (session) this run is a turn of, when the caller said
        (``gen_ai.conversation.id`` in traces); not part of the saved run."""
        self.prompt = prompt
        """The user message that started this run."""
        self.messages: list[Message] = list(messages)
        """The history as it will be stored (never budget notes)."""
        self.steps: list[Step] = []
        self.metrics = Metrics()
        self.iteration = 0
        """The current iteration (1-based; 0 before the first model call)."""
        self.state: dict[str, Any] = dict(state or {})
        """Per-run state of extensions, keyed by extension (``"plan"``, ``"skills"``…).
        Values are JSON data or objects with ``to_dict()``."""
        self.tools = tools if tools is not None else ToolRegistry()
        """The tools callable in this run (the agent's, plus what extensions added)."""
        self.deps = deps
        self.on_message = on_message
        self.pending: list[Event] = []
        """Events raised by tools and extensions, flushed into the stream by the loop."""
        self.seen: tuple[ToolResult, ...] = ()
        """Successful results of non-repeatable calls, for repeated calls (one with the same
        name and arguments is answered from it: ``reactloop._repeats``). Saved runs write
        each with its key, ``[name, [[arg, value], ...]]`` or a string."""
        self.reminders = 0
        self.open_calls: tuple[ToolCall, ...] = ()
        """Tool calls in :attr:`messages` whose results are not there yet."""
        self.tally: Any = None
        """Token-count cache of the history (``reactloop.context.Tally``)."""

    # -- what extensions and tools use --------------------------------------------------------
    def emit(self, event: Event) -> None:
        """Queue an event; the loop yields it after the current model call or tool batch."""
        self.pending.append(event)

    def emit_custom(self, name: str, data: Any = None) -> None:
        """Queue a ``custom`` event (what ``ToolContext.emit`` does)."""
        self.pending.append(CustomEvent(self.run_id, name, data))

    def add_tools(self, tools: Sequence[Tool]) -> None:
        """Make ``tools`` callable from the next iteration on (appended: the request prefix
        changes once). Names already present are left alone."""
        for t in tools:
            if t.name not in self.tools:
                self.tools.add(t)

    def append(self, *messages: Message) -> None:
        """Add messages to the history, handing each to the write-ahead hook first."""
        self.messages += messages  # no extend() call: this runs twice per iteration
        if self.on_message is not None:
            for m in messages:
                self.on_message(m)

    def flush(self) -> list[Event]:
        """Take the queued events (a new list; :attr:`pending` is replaced only when it held
        some, so a run without events makes no list that outlives an iteration)."""
        out = self.pending
        if not out:
            return []
        self.pending = []
        return out

    @property
    def pending_approvals(self) -> list[PendingApproval]:
        """Tool calls waiting for a person's decision (read from the history, where the
        assistant message that made them records them; see :mod:`reactloop.approvals`)."""
        return pending_approvals(self.messages)

    # -- serialisation ------------------------------------------------------------------------
    def to_dict(self, *, attachments: bool = False) -> dict[str, Any]:
        """The run as JSON-ready data (tools and ``deps`` are configuration, not state).

        ``pending_approvals`` is there for readers without reactloop (a UI, a workflow);
        it is derived from ``messages``, which stay the source when the run is read back.
        Messages hold attachments as references; with ``attachments``, their bytes are added
        once per content hash (base64, under ``"attachments"``), as :meth:`RunResult.save`
        does."""
        data: dict[str, Any] = {
            "version": SNAPSHOT_VERSION,
            "run_id": self.run_id,
            "prompt": self.prompt,
            "iteration": self.iteration,
            "messages": [m.to_dict() for m in self.messages],
            "steps": [s.to_dict() for s in self.steps],
            "metrics": self.metrics.to_dict(),
            "state": {k: jsonable(v) for k, v in self.state.items()},
            "seen": [[_key_json(seen_key(ToolCall(r.name, dict(r.arguments)))),
                      r.to_dict(full=True)] for r in self.seen],
            "reminders": self.reminders,
            "pending_approvals": [p.to_dict() for p in self.pending_approvals],
        }
        if attachments and (blobs := attachment_blobs(self.messages)):
            data["attachments"] = {sha: {"media_type": a.media_type,
                                         "data": base64.b64encode(a.data or b"").decode()}
                                   for sha, a in blobs.items()}
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, deps: Any = None) -> RunContext:
        """Rebuild a context written by :meth:`to_dict` (raises ``ValueError`` on a shape it
        does not know)."""
        version = data.get("version")
        if not isinstance(version, int) or version > SNAPSHOT_VERSION:
            raise ValueError(f"a saved run of version {version!r} cannot be read by this "
                             f"reactloop (it reads up to {SNAPSHOT_VERSION}); upgrade reactloop")
        blobs = {sha: base64.b64decode(b["data"])
                 for sha, b in (data.get("attachments") or {}).items()}
        ctx = cls(str(data["run_id"]), str(data.get("prompt", "")),
                  [message_from_dict(m, blobs) for m in data.get("messages", ())],
                  deps=deps, state=data.get("state") or {})
        ctx.iteration = int(data.get("iteration", 0))
        ctx.steps = [Step.from_dict(s) for s in data.get("steps", ())]
        ctx.metrics = Metrics.from_dict(data.get("metrics") or {})
        # the saved keys are not needed: each result has its name and arguments (older
        # reactloops read them)
        ctx.seen = tuple(ToolResult.from_dict(v) for _, v in data.get("seen") or ())
        ctx.reminders = int(data.get("reminders", 0))
        return ctx

    def __repr__(self) -> str:
        return (f"RunContext({self.run_id!r}, iteration={self.iteration}, "
                f"messages={len(self.messages)})")


def _key_json(key: Any) -> Any:
    """A repeated-call key as JSON: keys are strings or ``(name, arg, value, arg, value…)``
    (``reactloop._repeats``), written ``[name, [[arg, value], ...]]``."""
    if isinstance(key, str):
        return key
    return [key[0], [[key[i], key[i + 1]] for i in range(1, len(key), 2)]]
