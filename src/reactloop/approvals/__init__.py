"""Human approval of tool calls: the values a run hands out and takes back, and the pure
functions that keep each decision bound to what it decides.

A call needs approval when its tool says so (``@tool(requires_approval=True)``, or a callable
``(arguments, context) -> bool`` deciding per call) or the agent's policy does
(``Agent(approve=True)`` or the same kind of callable, over all tools). A run that reaches
such a call runs the other calls of that response, then ends ``WAITING_FOR_APPROVAL`` with
``result.pending_approvals``. Decisions — approve, deny with a reason (the model sees the
denial as the tool's result), or approve with edited arguments — continue it, in this
process or any other.

A call that runs an agent (``agent.as_tool()``) whose own calls wait makes the whole run wait:
its entry holds the sub-run's saved state (``"nested"``), :func:`pending_approvals` lists the
sub-run's waiting calls in its place, decisions for them are recorded inside it, and once none
waits the agent call counts as approved — resuming runs it again, which continues the sub-run.

Where the state lives: the assistant message that made the calls carries, in
``metadata["approvals"]``, an entry per call that needs a decision (``{"hash": ...,
"decision": None}``), and the decision once made. The history alone therefore says what
waits and what was decided: a waiting run survives being saved (``RunResult.save()``), stored
in a session, or its process being killed, and a decision applies once. A decided call whose
result is missing (the process died while it ran) is answered as interrupted, never run
again (``reactloop.context.repair``).

The seam for servers and workflows (what ``Session.resume`` does):

1. :func:`pending_approvals` lists what waits (also ``RunContext.to_dict()["pending_approvals"]``);
2. :meth:`Decision.from_dict` reads decisions sent as JSON;
3. :func:`apply_decisions` checks them against the history and returns the history with the
   decisions recorded (raises :class:`~reactloop.errors.ApprovalError`, applying nothing, on
   an unknown, already decided or mismatched call); store that history *before* running on;
4. ``agent.resume(history)`` / ``agent.resume_stream(history)`` runs the decided calls and
   continues the run (a saved run: ``agent.resume(saved, decisions=...)`` does 3 and 4).

The package holds both sides: the values and the history bookkeeping here, and the loop's gate
(which calls of a response wait, what a decision makes of a call) in
:mod:`reactloop.approvals._gate`, which needs the tool registry and is imported by the loop only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from reactloop.errors import ApprovalError
from reactloop.messages import Message, ToolCall, message_from_dict

__all__ = [
    "APPROVALS_KEY",
    "DENIED",
    "Decision",
    "PendingApproval",
    "apply_decisions",
    "arguments_hash",
    "decided_calls",
    "pending_approvals",
]

APPROVALS_KEY = "approvals"
"""The key of an assistant message's ``metadata`` that holds its calls' approval entries."""
NESTED = "nested"
"""The key of an approvals entry holding a waiting sub-run's state (``RunContext.to_dict()``)."""
ASKS = "asks"
"""The key of such an entry holding the question the sub-agent asked the user (the run waits
for the answer, not for a decision)."""
DENIED = "denied by the user: "
"""How the error of a denied call's result starts (a person's decision, not a failure)."""

_NOT_PROMPTS = ("reminder", "note")


def arguments_hash(tool_name: str, arguments: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the tool's name and its arguments as canonical JSON: what a decision
    is bound to, so a decision made for other arguments is refused."""
    canonical = json.dumps({"tool": tool_name, "arguments": arguments}, sort_keys=True,
                           separators=(",", ":"), ensure_ascii=False, default=str)
    import hashlib  # on first use: import reactloop stays light

    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class Decision:
    """A person's decision on one call waiting for approval. Make one from the
    :class:`PendingApproval` (``.approve()``, ``.deny(reason)``, ``.edit(arguments)``) so it
    carries the call id and the arguments hash it was made for."""

    call_id: str
    arguments_hash: str
    """The hash of the arguments the person saw (:attr:`PendingApproval.arguments_hash`)."""
    approved: bool
    reason: str | None = None
    """Why the call was denied (the model reads it as the call's result)."""
    arguments: Mapping[str, Any] | None = None
    """Approved with these arguments instead of the model's (an edit)."""

    @property
    def action(self) -> Literal["approve", "deny", "edit"]:
        if not self.approved:
            return "deny"
        return "approve" if self.arguments is None else "edit"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"call_id": self.call_id, "arguments_hash": self.arguments_hash,
                             "approved": self.approved}
        if self.reason is not None:
            d["reason"] = self.reason
        if self.arguments is not None:
            d["arguments"] = dict(self.arguments)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Decision:
        """Read ``{"call_id", "arguments_hash", "approved", "reason"?, "arguments"?}`` (what
        :meth:`to_dict` writes; e.g. the body a UI posts)."""
        if not isinstance(data, Mapping):
            raise ApprovalError(f"a decision is an object with call_id, arguments_hash and "
                                f"approved, got {data!r}")
        call_id, digest, approved = (data.get("call_id"), data.get("arguments_hash"),
                                     data.get("approved"))
        if not isinstance(call_id, str) or not isinstance(digest, str) \
                or not isinstance(approved, bool):
            raise ApprovalError("a decision needs call_id (string), arguments_hash (string) "
                                f"and approved (true/false), got {dict(data)!r}",
                                str(call_id or ""))
        reason, arguments = data.get("reason"), data.get("arguments")
        if reason is not None and not isinstance(reason, str):
            raise ApprovalError(f"the reason of the decision for {call_id!r} must be a string",
                                call_id)
        if arguments is not None and (not approved or not isinstance(arguments, Mapping)):
            raise ApprovalError(f"edited arguments for {call_id!r} must be a JSON object on an "
                                "approving decision", call_id)
        return cls(call_id, digest, approved, reason, arguments)


@dataclass(frozen=True, slots=True)
class PendingApproval:
    """A tool call waiting for a person's decision (``result.pending_approvals``)."""

    call_id: str
    tool_name: str
    arguments: Mapping[str, Any]
    """The arguments the model chose."""
    arguments_hash: str
    """:func:`arguments_hash` of the tool name and arguments; decisions must repeat it."""

    def approve(self) -> Decision:
        """Run the call as the model asked."""
        return Decision(self.call_id, self.arguments_hash, True)

    def deny(self, reason: str = "") -> Decision:
        """Do not run it; the model gets ``reason`` as the call's (error) result."""
        return Decision(self.call_id, self.arguments_hash, False, reason)

    def edit(self, arguments: Mapping[str, Any]) -> Decision:
        """Run it with ``arguments`` instead (the model is told they were edited)."""
        return Decision(self.call_id, self.arguments_hash, True, None, dict(arguments))

    def to_dict(self) -> dict[str, Any]:
        return {"call_id": self.call_id, "tool_name": self.tool_name,
                "arguments": dict(self.arguments), "arguments_hash": self.arguments_hash}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PendingApproval:
        return cls(str(data["call_id"]), str(data["tool_name"]),
                   dict(data.get("arguments") or {}), str(data["arguments_hash"]))


def gate(hashes: Mapping[str, str], run_id: str = "") -> dict[str, Any]:
    """The assistant-message metadata announcing calls (id → hash) that wait for decisions
    in run ``run_id`` (so a run continued from a bare history keeps its id)."""
    entry: dict[str, Any] = {"decision": None, "run_id": run_id} if run_id else {"decision": None}
    return {APPROVALS_KEY: {cid: {"hash": h, **entry} for cid, h in hashes.items()}}


def waiting_run_id(messages: Sequence[Message]) -> str:
    """The id of the run whose calls wait (or were just decided) in ``messages``, or ``""``."""
    gated, _ = _latest_turn(messages)
    for i in reversed(gated):
        for entry in (_entries(messages[i]) or {}).values():
            if isinstance(entry, Mapping) and entry.get("run_id"):
                return str(entry["run_id"])
    return ""


def _entries(m: Message) -> Mapping[str, Any] | None:
    if m.role != "assistant" or not m.tool_calls:
        return None
    entries = m.metadata.get(APPROVALS_KEY)
    return entries if isinstance(entries, Mapping) else None


def _latest_turn(messages: Sequence[Message]) -> tuple[list[int], set[str]]:
    """Indices of gated assistant messages after the latest prompt, and the call ids answered
    there (calls wait only in the latest turn: a new prompt is refused while any waits)."""
    gated: list[int] = []
    answered: set[str] = set()
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role == "tool" and m.tool_call_id:
            answered.add(m.tool_call_id)
        elif m.role == "user" and m.metadata.get("kind") not in _NOT_PROMPTS:
            break
        elif _entries(m) is not None:
            gated.append(i)
    gated.reverse()
    return gated, answered


def pending_approvals(messages: Sequence[Message]) -> list[PendingApproval]:
    """The calls of ``messages`` waiting for a decision, in call order."""
    gated, answered = _latest_turn(messages)
    out: list[PendingApproval] = []
    for i in gated:
        entries = _entries(messages[i]) or {}
        for call in messages[i].tool_calls:
            entry = entries.get(call.id or "")
            if entry is None or entry.get("decision") is not None or call.id in answered:
                continue
            nested = entry.get(NESTED)
            if isinstance(nested, Mapping):  # an agent's calls wait: theirs are the ones
                out.extend(pending_approvals(_nested_messages(nested)))
            else:
                out.append(PendingApproval(call.id or "", call.name, dict(call.arguments),
                                           str(entry.get("hash", ""))))
    return out


def _nested_messages(nested: Mapping[str, Any]) -> list[Message]:
    return [message_from_dict(m) for m in nested.get("messages") or ()]


def nested_runs(messages: Sequence[Message]) -> dict[str, Mapping[str, Any]]:
    """The saved sub-runs of the decided agent calls of ``messages``, by call id (what
    resuming continues)."""
    gated, answered = _latest_turn(messages)
    out: dict[str, Mapping[str, Any]] = {}
    for i in gated:
        for cid, entry in (_entries(messages[i]) or {}).items():
            nested = entry.get(NESTED) if isinstance(entry, Mapping) else None
            if isinstance(nested, Mapping) and cid not in answered:
                out[cid] = nested
    return out


def _apply_nested(messages: Sequence[Message], decisions: list[Decision]
                  ) -> tuple[list[Decision], dict[int, dict[str, Any]]]:
    """Record the decisions for calls waiting inside sub-runs; the others are returned. The
    changed approvals entries come back by message index."""
    owner: dict[str, tuple[int, str]] = {}
    gated, answered = _latest_turn(messages)
    for i in gated:
        for cid, entry in (_entries(messages[i]) or {}).items():
            nested = entry.get(NESTED) if isinstance(entry, Mapping) else None
            if isinstance(nested, Mapping) and entry.get("decision") is None \
                    and cid not in answered:
                for p in pending_approvals(_nested_messages(nested)):
                    owner[p.call_id] = (i, cid)
    groups: dict[tuple[int, str], list[Decision]] = {}
    rest = []
    for d in decisions:
        if d.call_id in owner:
            groups.setdefault(owner[d.call_id], []).append(d)
        else:
            rest.append(d)
    changed: dict[int, dict[str, Any]] = {}
    for (i, cid), ds in groups.items():
        new = changed.setdefault(i, {k: dict(v) for k, v in (_entries(messages[i]) or {}).items()})
        entry = new[cid]
        inner = apply_decisions(_nested_messages(entry[NESTED]), ds)
        entry[NESTED] = {**entry[NESTED], "messages": [m.to_dict() for m in inner]}
        if not pending_approvals(inner):  # all decided: the agent call goes on
            entry["decision"] = Decision(cid, str(entry.get("hash", "")), True).to_dict()
    return rest, changed


def decided_calls(messages: Sequence[Message]) -> list[tuple[ToolCall, Decision]]:
    """Calls decided but not yet answered (the next run executes or denies them), in order."""
    gated, answered = _latest_turn(messages)
    out: list[tuple[ToolCall, Decision]] = []
    for i in gated:
        entries = _entries(messages[i]) or {}
        for call in messages[i].tool_calls:
            entry = entries.get(call.id or "")
            decision = entry.get("decision") if entry is not None else None
            if decision is not None and call.id not in answered:
                out.append((call, Decision.from_dict(decision)))
    return out


def apply_decisions(messages: Sequence[Message],
                    decisions: Iterable[Decision | Mapping[str, Any]]) -> list[Message]:
    """``messages`` with ``decisions`` recorded on the calls they decide.

    All or nothing: raises :class:`~reactloop.errors.ApprovalError` (and records nothing)
    when a decision names no call that waits, a call already decided (or answered), or
    other arguments than the call's (the hash differs), or when a call gets two decisions.
    Calls left without a decision keep waiting.
    """
    checked = [d if isinstance(d, Decision) else Decision.from_dict(d) for d in decisions]
    direct, changed = _apply_nested(messages, checked)
    index: dict[str, tuple[int, ToolCall, Mapping[str, Any]]] = {}
    answered: set[str] = set()
    for i, m in enumerate(messages):
        if m.role == "tool" and m.tool_call_id:
            answered.add(m.tool_call_id)
        entries = _entries(m)
        if entries is None:
            continue
        for call in m.tool_calls:
            if call.id and call.id in entries:
                index[call.id] = (i, call, entries[call.id])
    seen: set[str] = set()
    for d in direct:
        _check(d, index, answered, seen, messages)
        i, call, entry = index[d.call_id]
        new = changed.setdefault(i, {k: dict(v) for k, v in (_entries(messages[i]) or {}).items()})
        new[d.call_id] = {**entry, "decision": d.to_dict()}
    out = list(messages)
    for i, entries in changed.items():
        out[i] = replace(out[i], metadata={**out[i].metadata, APPROVALS_KEY: entries})
    return out


def _check(d: Decision, index: Mapping[str, tuple[int, ToolCall, Mapping[str, Any]]],
           answered: set[str], seen: set[str], messages: Sequence[Message]) -> None:
    if d.call_id in seen:
        raise ApprovalError(f"two decisions for tool call {d.call_id!r}: send one", d.call_id)
    seen.add(d.call_id)
    found = index.get(d.call_id)
    if found is None:
        waiting = ", ".join(f"{p.call_id} ({p.tool_name})"
                            for p in pending_approvals(messages)) or "none"
        raise ApprovalError(f"no tool call {d.call_id!r} waits for approval (waiting: "
                            f"{waiting})", d.call_id)
    _, call, entry = found
    if entry.get("decision") is not None or d.call_id in answered:
        before = entry.get("decision") or {}
        how = ("approved" if before.get("approved") else "denied") if before else "answered"
        raise ApprovalError(f"tool call {d.call_id!r} ({call.name}) was already {how}; a "
                            "decision applies once and nothing runs twice", d.call_id)
    if d.arguments_hash != entry.get("hash"):
        raise ApprovalError(
            f"the decision for tool call {d.call_id!r} ({call.name}) was made for other "
            f"arguments (hash {d.arguments_hash[:12]}…, the call's is "
            f"{str(entry.get('hash'))[:12]}…); show the pending call again and decide anew",
            d.call_id)
