"""A remote A2A agent (any framework's) used where a local one is: :class:`A2AAgent`.

Built on the official ``a2a-sdk`` client (JSON-RPC, streaming when the card says so),
imported on the first call. One call sends one message and follows the task to its end or to
an interruption:

- ``completed``: the answer (its artifacts' text parts; a data part comes back as its value);
- ``input-required``: the remote's question, returned to the model with how to answer (call
  the tool again: the next call continues the same task);
- ``failed``, ``rejected``, ``canceled``, ``auth-required``, a remote that is down, slow (the
  call's ``timeout``) or sends what the protocol does not allow: a tool error
  (:class:`~reactloop.ToolRetry`) saying so, which the model can recover from.

The remote's run nests in the calling run as an agent called as a tool does
(:mod:`reactloop.a2a._nested`: its events tagged with ``agent`` and ``parent_run_id``, a
``run_end`` with its answer, its usage counted into the caller's metrics); where no run
surrounds the call, its updates are ``a2a`` custom events instead. With OpenTelemetry in
use, each request carries the current trace (``traceparent``), so a reactloop remote's spans
join the caller's trace. The calls made within one run share one A2A context (derived from the
run id), so they continue one conversation with the remote; the task a question waits in is
kept in the run's state (on Temporal, where a tool's state changes stay in its activity, the
answer goes to a new task in the same context, which a reactloop remote continues alike).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
import sys
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reactloop import _nesting
from reactloop.a2a._nested import Nest
from reactloop.errors import ToolRetry, UserError
from reactloop.tools._registry import WithRun

if TYPE_CHECKING:
    from reactloop.tools import Tool, ToolContext

__all__ = ["A2AAgent", "A2AReply", "json_value"]

_STATE_KEY = "reactloop.a2a"
_NAME_BAD = re.compile(r"[^A-Za-z0-9_-]+")
_INTERRUPTED = frozenset({"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"})
_TERMINAL = frozenset({"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED",
                       "TASK_STATE_REJECTED"})


@dataclass(slots=True)
class A2AReply:
    """How one message to a remote agent ended."""

    state: str
    """The task's last state, as the protocol names it (``TASK_STATE_COMPLETED``…)."""
    output: Any = None
    """The answer: text, or a data part's value (``completed``); the question
    (``input-required``); the reason (other endings)."""
    task_id: str = ""
    context_id: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    """Tokens the remote reports (reactloop servers do: ``input_tokens``, ``output_tokens``)."""

    @property
    def waiting(self) -> bool:
        """The remote waits for an answer (``input-required``): send it in the same task."""
        return self.state == "TASK_STATE_INPUT_REQUIRED"


class A2AAgent:
    """A remote agent reached over A2A, usable as a tool (:meth:`as_tool`).

    Args:
        url: the agent's base URL (its card is at ``/.well-known/agent-card.json``) or the
            card's own URL.
        token: sent as ``Authorization: Bearer <token>`` (``reactloop serve --token``).
        name: the agent's name for tool names and events (default: from the URL).
        description: what the agent does, for the model (default: a sentence naming the
            URL; :meth:`fetch_card` reads the card's).
        timeout: seconds one call may take (connecting, then the whole task), default 300.
        headers: more HTTP headers for every request.
        transport: an ``httpx`` transport for the requests, e.g. ``httpx.ASGITransport(app)``
            to call an app in this process (``reactloop.serve.create_app``).
    """

    def __init__(self, url: str, token: str | None = None, *, name: str | None = None,
                 description: str | None = None, timeout: float = 300.0,
                 headers: Mapping[str, str] | None = None, transport: Any = None) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise UserError(f"A2AAgent needs an http(s) URL, got {url!r}")
        if not timeout or timeout <= 0:
            raise UserError(f"A2AAgent timeout must be a positive number of seconds, "
                            f"got {timeout!r}")
        self.url = url.rstrip("/")
        self.token = token
        self.name = name or _name_of(self.url)
        self.description = description or f"The remote agent at {self.url} (A2A)."
        self.timeout = timeout
        self.headers = dict(headers or {})
        self.transport = transport
        self._card: Any = None

    def __repr__(self) -> str:
        return f"A2AAgent({self.url!r}, name={self.name!r})"

    @classmethod
    async def connect(cls, url: str, token: str | None = None, **options: Any) -> A2AAgent:
        """An :class:`A2AAgent` whose name and description come from the remote's card
        (fetched now: a remote that is down fails here, with a :class:`~reactloop.ToolRetry`
        naming it), so :meth:`as_tool` describes the remote as it describes itself."""
        agent = cls(url, token, **options)
        try:
            await agent.fetch_card()
        except Exception as exc:
            raise ToolRetry(f"the A2A agent at {agent.url} has no readable card: "
                            f"{_describe(exc)}") from None
        return agent

    # -- the card ------------------------------------------------------------------------------
    async def fetch_card(self) -> dict[str, Any]:
        """The remote's agent card (as JSON); also takes its name and description when none
        were given."""
        card = await self._resolve()
        from google.protobuf.json_format import MessageToDict

        return MessageToDict(card)

    async def _resolve(self) -> Any:
        if self._card is None:
            from a2a.client import A2ACardResolver

            async with self._http() as http:
                base, _, path = self.url.partition("/.well-known/")
                resolver = A2ACardResolver(http, base, f"/.well-known/{path}" if path
                                           else "/.well-known/agent-card.json")
                self._card = await resolver.get_agent_card()
            if self.name == _name_of(self.url) and self._card.name:
                self.name = _NAME_BAD.sub("_", self._card.name)[:64]
            if self.description.endswith("(A2A).") and self._card.description:
                self.description = self._card.description
        return self._card

    def _http(self) -> Any:
        import httpx

        headers = {**self.headers, **_trace_headers()}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return httpx.AsyncClient(headers=headers, transport=self.transport, verify=_tls(),
                                 timeout=httpx.Timeout(self.timeout, connect=10.0))

    # -- one message ---------------------------------------------------------------------------
    async def send(self, text: str, *, context_id: str | None = None,
                   task_id: str | None = None,
                   on_update: Any = None) -> A2AReply:
        """Send ``text`` (in ``context_id``; continuing ``task_id`` when it waits for input)
        and follow the task; ``on_update(dict)`` sees every stream response as JSON.

        Raises:
            ToolRetry: the remote is down, slow, or answered outside the protocol.
        """
        try:
            async with asyncio.timeout(self.timeout):
                return await self._send(text, context_id or uuid.uuid4().hex, task_id or "",
                                        on_update)
        except ToolRetry:
            raise
        except TimeoutError:
            raise ToolRetry(f"the remote agent {self.name!r} ({self.url}) did not finish within "
                            f"{self.timeout:g} s; try a smaller task, or do without it") from None
        except Exception as exc:  # down, garbage, protocol errors: all the model's to handle
            raise ToolRetry(f"the remote agent {self.name!r} ({self.url}) failed: "
                            f"{_describe(exc)}; try again later or do without it") from None

    async def _send(self, text: str, context_id: str, task_id: str,
                    on_update: Any) -> A2AReply:
        from a2a.client import ClientConfig, ClientFactory
        from a2a.types import Message, Part, Role, SendMessageRequest

        card = await self._resolve()
        message = Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex,
                          context_id=context_id, task_id=task_id, parts=[Part(text=text)])
        async with self._http() as http:
            client = ClientFactory(ClientConfig(
                streaming=card.capabilities.streaming, httpx_client=http)).create(card)
            tracker = _Tracker(context_id, task_id)
            try:
                async for response in _stream(client, SendMessageRequest(message=message)):
                    data = tracker.take(response)
                    if on_update is not None:
                        on_update(data)
            finally:
                await client.close()
        return tracker.reply()

    # -- as a tool -----------------------------------------------------------------------------
    def as_tool(self, name: str | None = None, description: str | None = None) -> Tool:
        """A tool whose one parameter is ``task`` (str): the message for the remote agent.

        Within one run, successive calls continue one A2A conversation (context), and a call
        after the remote asked a question answers it (same task)."""
        from reactloop._multi import AgentTool
        from reactloop.tools import ToolContext

        tool_name = name or _NAME_BAD.sub("_", f"ask_{self.name}")[:64]
        tool_call = self._tool_call

        async def call_remote(task: str, ctx: ToolContext) -> Any:
            """Send a task to the remote agent.

            Args:
                task: the whole task for the remote agent, or the answer to its question.
            """
            return await tool_call(tool_name, task, ctx)

        call_remote.__annotations__["ctx"] = ToolContext
        # an AgentTool: the loop streams the sub-run's events live, as for agent.as_tool()
        return AgentTool(call_remote, name=tool_name, origin=f"A2A agent {self.url}",
                    description=description or (
                        f"Ask the remote agent {self.name!r}: {self.description} "
                        "Give the whole task in `task`; if it asks a question, call this tool "
                        "again with the answer."))

    async def _tool_call(self, tool_name: str, task: str, ctx: ToolContext) -> Any:
        memory = ctx.state.setdefault(_STATE_KEY, {}).setdefault(tool_name, {})
        # one context per (run, tool): derived from the run id, so a tool running elsewhere
        # (a Temporal activity, which gets the state but returns none) keeps it too
        context_id = memory.get("context_id") or (
            uuid.uuid5(uuid.NAMESPACE_URL, f"reactloop:{ctx.run_id}/{tool_name}").hex
            if ctx.run_id else uuid.uuid4().hex)
        memory["context_id"] = context_id

        with contextlib.suppress(Exception):  # its name first; a failure is send()'s to say
            await self._resolve()
        frame = _nesting.current.get()  # the calling run: the remote's run nests in it
        nest = None if frame is None else Nest(frame, self.name, task, self.url)

        def update(data: dict[str, Any]) -> None:
            summary = _summary(data)
            memory["running_task"] = summary["task_id"] or memory.get("running_task")
            if nest is not None:
                nest.update(summary)
            else:  # no run around this call (e.g. a Temporal activity): custom events
                ctx.emit("a2a", {"agent": self.name, "url": self.url, **summary})

        try:
            reply = await self.send(task, context_id=context_id,
                                    task_id=memory.get("waiting_task"), on_update=update)
        except asyncio.CancelledError:
            waiting = memory.get("running_task")
            if waiting:
                asyncio.get_running_loop().create_task(self._cancel_quietly(waiting))
            raise
        memory["waiting_task"] = reply.task_id if reply.waiting else None
        memory["running_task"] = None
        if nest is None:
            return self._tool_result(tool_name, reply)
        run = nest.finish(reply.state, reply.output, _text(reply.output))
        try:
            value = self._tool_result(tool_name, reply)
        except ToolRetry as exc:
            return WithRun(None, run, exc.message)
        # a question goes back to the model (it answers by calling again), so that run is
        # not given to the loop, which would hold the call for the user instead
        return WithRun(value, None if reply.waiting else run)

    def _tool_result(self, tool_name: str, reply: A2AReply) -> Any:
        if reply.state == "TASK_STATE_COMPLETED":
            return reply.output
        if reply.waiting:
            return (f"The remote agent {self.name!r} asks: {_text(reply.output)} "
                    f"(answer by calling {tool_name} again with the answer as `task`)")
        what = {"TASK_STATE_AUTH_REQUIRED": "needs authentication it cannot get here",
                "TASK_STATE_REJECTED": "declined the task",
                "TASK_STATE_CANCELED": "cancelled the task",
                "TASK_STATE_FAILED": "failed"}.get(reply.state, f"ended {reply.state}")
        raise ToolRetry(f"the remote agent {self.name!r} {what}: {_text(reply.output)}")

    async def _cancel_quietly(self, task_id: str) -> None:
        """Best effort: tell the remote that a task this run gave up on is cancelled."""
        from a2a.client import ClientConfig, ClientFactory
        from a2a.types import CancelTaskRequest

        try:
            async with asyncio.timeout(5), self._http() as http:
                client = ClientFactory(ClientConfig(httpx_client=http)).create(self._card)
                await client.cancel_task(CancelTaskRequest(id=task_id))
        except Exception:  # the caller has moved on; the remote may be gone
            return


async def _stream(client: Any, request: Any) -> AsyncIterator[Any]:
    async for response in client.send_message(request):
        yield response


class _Tracker:
    """Follows one task through its stream responses."""

    def __init__(self, context_id: str, task_id: str) -> None:
        self.context_id = context_id
        self.task_id = task_id
        self.state = ""
        self.message: Any = None
        self.artifacts: list[Any] = []
        self.usage: dict[str, int] = {}

    def take(self, response: Any) -> dict[str, Any]:
        from google.protobuf.json_format import MessageToDict

        data: dict[str, Any] = MessageToDict(response)
        kind = response.WhichOneof("payload")
        if kind == "message":  # a message-only answer
            self.state, self.message = "TASK_STATE_COMPLETED", data["message"]
            self.artifacts.append({"parts": data["message"].get("parts", [])})
        elif kind == "task":
            task = data["task"]
            self.task_id, self.context_id = task["id"], task.get("contextId", self.context_id)
            self._status(task.get("status", {}), task.get("metadata", {}))
            self.artifacts = list(task.get("artifacts", [])) or self.artifacts
        elif kind == "status_update":
            update = data["statusUpdate"]
            self.task_id = update.get("taskId", self.task_id)
            self._status(update.get("status", {}), update.get("metadata", {}))
        elif kind == "artifact_update":
            self._artifact(data["artifactUpdate"])
        return data

    def _status(self, status: dict[str, Any], metadata: dict[str, Any]) -> None:
        self.state = status.get("state", self.state)
        if "message" in status:
            self.message = status["message"]
        usage = metadata.get("reactloop", {}).get("usage")
        if isinstance(usage, dict):
            self.usage = {k: int(v) for k, v in usage.items() if isinstance(v, (int, float))}

    def _artifact(self, update: dict[str, Any]) -> None:
        artifact = update.get("artifact", {})
        same = next((a for a in self.artifacts
                     if a.get("artifactId") == artifact.get("artifactId")), None)
        if same is not None and update.get("append"):
            parts, more = same.setdefault("parts", []), list(artifact.get("parts", []))
            if parts and more and "text" in parts[-1] and "text" in more[0]:  # one text, cut
                parts[-1] = {**parts[-1], "text": parts[-1]["text"] + more.pop(0)["text"]}
            parts.extend(more)
        elif same is not None:
            same["parts"] = artifact.get("parts", [])
        else:
            self.artifacts.append(artifact)

    def reply(self) -> A2AReply:
        if self.state not in _TERMINAL | _INTERRUPTED:
            raise ToolRetry(f"the stream ended while the task was {self.state or 'not begun'}")
        parts = [p for a in self.artifacts for p in a.get("parts", [])]
        if self.state != "TASK_STATE_COMPLETED" or not parts:
            parts = (self.message or {}).get("parts", [])
        return A2AReply(self.state, _value(parts), self.task_id, self.context_id, self.usage)


def _value(parts: list[dict[str, Any]]) -> Any:
    """The text of ``parts``, or the value of a lone data part."""
    if len(parts) == 1 and "data" in parts[0]:
        return json_value(parts[0]["data"])
    out: list[str] = []
    for part in parts:
        if "text" in part:
            out.append(part["text"])
        elif "data" in part:
            out.append(json.dumps(part["data"], ensure_ascii=False))
        elif "url" in part:
            out.append(f"[file: {part['url']}]")
    return "\n".join(out)


def json_value(value: Any) -> Any:
    """``value`` read from a protobuf ``Value`` as JSON reads it: protobuf keeps every number
    as a double, so whole numbers come back as ints (``3.0`` → ``3``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53:
        return int(value)
    if isinstance(value, dict):
        return {k: json_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_value(v) for v in value]
    return value


def _summary(data: dict[str, Any]) -> dict[str, Any]:
    """An ``a2a`` event's data: the response's kind, task, state and (for a reactloop
    remote) its own event."""
    kind, body = next(iter(data.items()), ("", {}))
    body = body if isinstance(body, dict) else {}
    out: dict[str, Any] = {"kind": kind}
    task = body if kind == "task" else {}
    out["task_id"] = body.get("taskId") or task.get("id", "")
    status = body.get("status") or {}
    if status.get("state"):
        out["state"] = status["state"]
    remote = (body.get("metadata") or {}).get("reactloop", {})
    if "event" in remote:
        out["event"] = json_value(remote["event"])
    elif "state" in remote:  # a reactloop remote's ending: its state and usage
        out["end"] = json_value(remote)
    if kind == "artifactUpdate":
        out["artifact"] = body.get("artifact", {})
    return out


def _trace_headers() -> dict[str, str]:
    """The current trace as W3C headers (``traceparent``), when OpenTelemetry is in use (never
    imported for this): the remote's spans then join the caller's trace."""
    if "opentelemetry.propagate" not in sys.modules and "opentelemetry.trace" not in sys.modules:
        return {}
    from opentelemetry.propagate import inject

    carrier: dict[str, str] = {}
    inject(carrier)
    return carrier


@functools.cache
def _tls() -> Any:
    """One TLS context for every call: building one loads the CA bundle (tens of ms), which
    a client made per call would otherwise pay each time."""
    import httpx

    return httpx.create_ssl_context()


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _name_of(url: str) -> str:
    host = url.split("://", 1)[-1].split("/", 1)[0]
    return _NAME_BAD.sub("_", host)[:60] or "remote"


def _describe(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    cause = exc.__cause__ or exc.__context__
    if cause is not None and str(cause) and str(cause) not in text:
        text = f"{text} ({cause})"
    return f"{type(exc).__name__}: {text[:500]}"
