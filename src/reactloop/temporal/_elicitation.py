"""MCP elicitation on Temporal: live or durable, said plainly.

* **Durable: the resumable form** (a 2026-07-28 server answers ``tools/call`` with an
  input-required result, :mod:`reactloop.mcp._input_required`). The call's activity does not
  ask anyone: it returns the server's questions (:func:`deferring`, :func:`reported`). The
  workflow publishes each as an ``mcp_input_required`` custom event (``id``, ``server``,
  ``tool``, ``call_id``, ``message``, ``mode``, ``schema``, ``url``, ``elicitation_id``),
  lists it in
  ``RunHandle.pending_inputs()`` and waits — durably, however long it takes, through worker
  restarts — for ``RunHandle.answer(id, ElicitationAnswer)`` (the update ``reactloop.answer``).
  Then a *new* activity sends the call again with the answers (``mcp_elicitation`` event with
  the action); accept, decline and cancel all reach the server.
* **Live: the classic form** (the server asks inside an open ``tools/call``). It waits in the
  worker process that holds the connection, answered by the server's own
  ``elicitation=`` handler; if that process dies, the call ends like any interrupted tool
  ("may or may not have taken effect"). A server without a handler is told at once that
  nobody can answer live on a worker (:data:`refuse_live`): a clear ending, never a hang.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from reactloop.events import CustomEvent
from reactloop.mcp._elicitation import Elicitation, ElicitationAnswer
from reactloop.mcp._input_required import Deferral, deferral

__all__ = ["ANSWER", "PendingInputs", "deferring", "refuse_live", "reported"]

ANSWER = "reactloop.answer"
"""The workflow update that answers one pending question: ``{"id", "action", "content"}``."""

_ACTIONS = ("accept", "decline", "cancel")


class _RefuseLive:
    """The elicitation handler of MCP servers a worker opens without one of their own: it
    announces the capability (so resumable questions are asked, and wait durably) and refuses
    the classic, live form with the reason. It asks nobody, so sampling that needs a person's
    yes (``sampling="ask"``) stays unannounced, as without a handler."""

    asks_nobody = True

    def __call__(self, request: Elicitation) -> ElicitationAnswer:
        raise RuntimeError(
            f"MCP server {request.server!r} asked inside an open tool call (the classic, live "
            "form of elicitation); on a Temporal worker nobody can answer that. Give the server "
            "an elicitation= handler, or use a server that returns input-required results "
            "(answered durably with RunHandle.answer)")


refuse_live = _RefuseLive()


# -- the activity's side ------------------------------------------------------------------------
@contextmanager
def deferring(arg: Mapping[str, Any]) -> Iterator[Deferral]:
    """While an MCP call's activity runs: questions for the user are deferred (and a resumed
    call starts from ``arg["resume"]``, the answers the workflow collected)."""
    held = Deferral(resume=arg.get("resume"))
    token = deferral.set(held)
    try:
        yield held
    finally:
        deferral.reset(token)


def reported(out: dict[str, Any], held: Deferral) -> dict[str, Any]:
    """The activity's output: the server's questions instead of the call's (placeholder)
    result, when it asked."""
    if held.pending is None:
        return out
    return {"input_required": held.pending, "events": out.get("events") or []}


# -- the workflow's side ------------------------------------------------------------------------
class PendingInputs:
    """The questions of one conversation that wait for the user's answer (workflow state:
    changed only by the workflow's code and its ``reactloop.answer`` update)."""

    def __init__(self, publish: Callable[[dict[str, Any] | None], None]) -> None:
        self.publish = publish
        self.waiting: dict[str, dict[str, Any]] = {}
        """Open questions by id (``mcp_input_required`` event data)."""
        self.answers: dict[str, dict[str, Any]] = {}
        """Answers given and not yet sent, by id: ``{"action", "content"}``."""

    async def resolve(self, out: dict[str, Any], *, run_id: str, call_id: str, tool: str,
                      again: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
                      ) -> dict[str, Any]:
        """Wait for the answers to the questions ``out`` reports (``tool``: the name the model
        called), send the call again (``again(resume)``, a new activity), until it gives its
        result."""
        from temporalio import workflow

        events: list[Any] = []
        for round_no in range(100):  # the activity gives up after MAX_ROUNDS rounds itself
            pending = out.get("input_required")
            if pending is None:
                return {**out, "events": events + list(out.get("events") or ())}
            events += out.get("events") or ()
            ask = {"run_id": run_id, "call_id": call_id, "tool": tool, "round": round_no}
            ids = {self._ask(ask, key, pending["server"], q): key
                   for key, q in pending["asks"].items()}
            await workflow.wait_condition(self._answered(ids))
            answers = dict(pending.get("answered") or {})
            for qid, key in ids.items():
                given, asked = self.answers.pop(qid), self.waiting.pop(qid)
                answers[key] = {"type": "ElicitResult", "data": given}
                self._event(run_id, "mcp_elicitation", {
                    "server": asked["server"], "action": given["action"],
                    "message": asked["message"], "id": qid})
            out = await again({"state": pending.get("state"), "answers": answers})
        raise RuntimeError("an MCP server kept asking for input")  # pragma: no cover

    def _answered(self, ids: Mapping[str, str]) -> Callable[[], bool]:
        return lambda: all(i in self.answers for i in ids)

    def _ask(self, ask: Mapping[str, Any], key: str, server: str,
             question: Mapping[str, Any]) -> str:
        call_id, round_no = ask["call_id"], ask["round"]
        qid = f"{call_id}/{key}" + (f"/{round_no}" if round_no else "")
        data = {**question, "id": qid, "server": server, "tool": ask["tool"],
                "call_id": call_id}
        self.waiting[qid] = data
        self._event(ask["run_id"], "mcp_input_required", data)
        return qid

    def _event(self, run_id: str, name: str, data: dict[str, Any]) -> None:
        from reactloop.temporal._codec import event_to_dict

        self.publish(event_to_dict(CustomEvent(run_id, name, dict(data))))

    # -- the update -------------------------------------------------------------------------
    def check(self, arg: Mapping[str, Any]) -> None:
        """Refuse an answer that does not apply (before anything is recorded)."""
        if not isinstance(arg, Mapping):
            raise ValueError("answer with {'id': ..., 'action': ..., 'content': ...}")
        qid = arg.get("id")
        if qid not in self.waiting or qid in self.answers:
            open_ids = [i for i in self.waiting if i not in self.answers]
            raise ValueError(f"no question {qid!r} waits for an answer (waiting: "
                             f"{', '.join(open_ids) or 'none'})")
        if arg.get("action") not in _ACTIONS:
            raise ValueError(f"action must be one of {', '.join(_ACTIONS)}, got "
                             f"{arg.get('action')!r}")
        content = arg.get("content")
        if content is not None and not isinstance(content, Mapping):
            raise ValueError(f"content must be an object of the form's values, got {content!r}")
        if arg["action"] == "accept":
            _check_form(self.waiting[qid], content or {})

    def answer(self, arg: Mapping[str, Any]) -> dict[str, Any]:
        self.check(arg)  # again: two updates may pass their validators before either runs
        accepted = arg["action"] == "accept"
        self.answers[str(arg["id"])] = {"action": arg["action"],
                                        "content": dict(arg.get("content") or {})
                                        if accepted else None}
        return {"id": arg["id"]}

    def listing(self) -> dict[str, dict[str, Any]]:
        """The questions still waiting for an answer."""
        return {i: dict(q) for i, q in self.waiting.items() if i not in self.answers}


def _check_form(question: Mapping[str, Any], content: Mapping[str, Any]) -> None:
    """An accepted form names its fields (the server checks the values themselves)."""
    fields = question_of(question).fields
    names = {f.name for f in fields}
    missing = [f.name for f in fields if f.required and f.name not in content]
    unknown = [k for k in content if k not in names]
    if missing or (unknown and names):
        wrong = (f"missing {', '.join(missing)}" if missing else
                 f"unknown {', '.join(map(str, unknown))}")
        raise ValueError(f"the answer to {question.get('id')!r} does not fill the form: "
                         f"{wrong} (its fields: {', '.join(sorted(names))})")


def question_of(data: Mapping[str, Any]) -> Elicitation:
    """An ``mcp_input_required`` event's data (or a listed question) as an Elicitation."""
    return Elicitation(str(data.get("server", "")), str(data.get("message", "")),
                       dict(data.get("schema") or {}),
                       mode="url" if data.get("mode") == "url" else "form",
                       url=data.get("url"), tool=data.get("tool"),
                       elicitation_id=data.get("elicitation_id"))
