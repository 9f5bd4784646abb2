"""Input-required results: the *resumable* form of MCP elicitation (protocol 2026-07-28,
``mcp`` 2.3, SEP-2322).

A server that needs the user's input before a ``tools/call`` can finish answers the call with
an ``InputRequiredResult`` (its questions, keyed, and an opaque ``requestState``) instead of a
result; the client asks, then sends ``tools/call`` again with the answers (``inputResponses``)
and the state echoed back. Nothing stays open between the two requests, so the wait can be
as long as it takes, even across processes.

reactloop drives this loop itself (:func:`call_tool`), in one of two ways:

* **Live** (an in-process run, the CLI): each question goes to the server's elicitation
  handler (the same ``Elicitation`` → ``ElicitationAnswer`` as the classic form; the CLI asks
  on the terminal), sampling and roots requests to their callbacks, and the call is sent again
  with the answers; the run waits meanwhile, as it does for the classic form.
* **Durable** (a Temporal activity sets :data:`deferral`): a question for the user is not
  asked here. The call ends with :class:`InputPending`, the questions and the state stored on
  the :class:`Deferral` (sampling and roots are answered at once and carried along); the
  workflow waits, durably, for the answer (``RunHandle.answer``), then a new activity sends
  the call again with :attr:`Deferral.resume`. A server restarted meanwhile resumes the call
  if it can open the state it sealed (FastMCP: a shared ``RequestStateSecurity`` key).

Declining and cancelling are answers the server receives, in both ways.
This module imports the SDK only inside its functions (the Temporal side imports it freely).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reactloop.errors import ToolRetry
from reactloop.mcp._elicitation import Elicitation

if TYPE_CHECKING:
    import mcp_types as types
    from mcp import Client
    from mcp.shared.dispatcher import ProgressFnT

__all__ = ["MAX_ROUNDS", "Deferral", "InputPending", "call_tool", "deferral",
           "elicitation_of"]

MAX_ROUNDS = 10
"""Input-required rounds of one call before reactloop gives up (the SDK's default)."""

_RESPONSE_TYPES = ("ElicitResult", "CreateMessageResult", "CreateMessageResultWithTools",
                   "ListRootsResult")


@dataclass
class Deferral:
    """One durable call's questions (set in :data:`deferral` by the host that runs it)."""

    resume: Mapping[str, Any] | None = None
    """Seeds the first request: ``{"state": str | None, "answers": {key: {"type", "data"}}}``
    (the answers the workflow collected for the questions of the call's previous round)."""
    pending: dict[str, Any] | None = None
    """Set when the server asked the user: ``{"server", "state", "asks": {key: question},
    "answered": {key: answer}}``; a question is ``Elicitation``'s fields as data."""


deferral: ContextVar[Deferral | None] = ContextVar("reactloop_mcp_deferral", default=None)
"""Set by a durable host (a Temporal activity): questions for the user are deferred to it."""


class InputPending(ToolRetry):
    """The server asked the user; the call waits for the answer elsewhere (durably). The
    activity that ran the call reports :attr:`Deferral.pending` instead of this message."""


def elicitation_of(server: str, params: Any, tool: str | None = None) -> Elicitation:
    """The :class:`Elicitation` for ``elicitation/create`` params (form or URL mode)."""
    import mcp_types as types

    if isinstance(params, types.ElicitRequestURLParams):
        return Elicitation(server, params.message, mode="url", url=params.url, tool=tool,
                           elicitation_id=params.elicitation_id)
    return Elicitation(server, params.message, dict(params.requested_schema or {}), tool=tool)


async def call_tool(client: Client, server: str, name: str, arguments: dict[str, Any],
                    progress: ProgressFnT | None) -> types.CallToolResult:
    """``tools/call``, driving input-required rounds (live, or deferred under
    :data:`deferral`) until the server gives the result."""
    import mcp_types as types

    defer = deferral.get()
    responses, state = _seed(defer)
    backoff = 0.05
    for _ in range(MAX_ROUNDS + 1):
        result = await _send(client, name, arguments, progress, responses, state)
        if isinstance(result, types.CallToolResult):
            return result
        asks, state = dict(result.input_requests or {}), result.request_state
        if not asks:  # only state: the server is working; ask again shortly (as the SDK)
            await asyncio.sleep(backoff)
            backoff, responses = min(backoff * 2, 0.25), None
            continue
        backoff = 0.05
        later = ({k: r for k, r in asks.items() if isinstance(r, types.ElicitRequest)}
                 if defer is not None else {})
        responses = await _answer(client, {k: r for k, r in asks.items() if k not in later})
        if defer is not None and later:
            defer.pending = _pending(server, name, state, later, responses)
            raise InputPending(f"MCP server {server!r} asked the user a question; "
                               "the call waits for the answer")
    raise ToolRetry(f"MCP server {server!r} asked for input more than {MAX_ROUNDS} times "
                    f"for one call of {name!r}; the call was given up")


async def _send(client: Client, name: str, arguments: dict[str, Any],
                progress: ProgressFnT | None, responses: Any, state: str | None) -> Any:
    """One ``tools/call`` request; a 2026-07-28 server that does not know the tool's listed
    schema (``HEADER_MISMATCH``) gets the tools listed again and the request once more."""
    from mcp.shared.exceptions import MCPError
    from mcp_types.jsonrpc import HEADER_MISMATCH

    def send() -> Any:
        return client.session.call_tool(name, arguments, progress_callback=progress,
                                        input_responses=responses, request_state=state,
                                        allow_input_required=True)
    try:
        return await send()
    except MCPError as exc:
        if exc.code != HEADER_MISMATCH:
            raise
    await client.list_tools(cache_mode="refresh")
    return await send()


async def _answer(client: Client, asks: Mapping[str, Any]) -> dict[str, Any]:
    """Each request answered by the client's callbacks, as the SDK would (one at a time: a
    person answers one form after another); a refusal ends the call with the server's
    error, as in the classic form."""
    from mcp.client.session import ClientRequestContext
    from mcp.shared.exceptions import MCPError
    from mcp_types import ErrorData

    session = client.session
    out: dict[str, Any] = {}
    for key, request in asks.items():
        params = getattr(request, "params", None)
        ctx = ClientRequestContext(session=session, request_id=key,
                                   meta=params.meta if params is not None else None)
        got = await session.dispatch_input_request(ctx, request)
        if isinstance(got, ErrorData):
            raise MCPError.from_error_data(got)
        out[key] = got
    return out


def _pending(server: str, tool: str, state: str | None, later: Mapping[str, Any],
             answered: Mapping[str, Any]) -> dict[str, Any]:
    def question(request: Any) -> dict[str, Any]:
        e = elicitation_of(server, request.params, tool)
        return {"message": e.message, "schema": dict(e.schema), "mode": e.mode, "url": e.url,
                "elicitation_id": e.elicitation_id}

    return {"server": server, "tool": tool, "state": state,
            "asks": {k: question(r) for k, r in later.items()},
            "answered": {k: _dump(r) for k, r in answered.items()}}


def _dump(response: Any) -> dict[str, Any]:
    return {"type": type(response).__name__,
            "data": response.model_dump(mode="json", by_alias=True, exclude_none=True)}


def _seed(defer: Deferral | None) -> tuple[dict[str, Any] | None, str | None]:
    """The responses and state a resumed call starts from (none for a first call)."""
    import mcp_types as types

    resume = defer.resume if defer is not None else None
    if not resume:
        return None, None
    load: Callable[[Mapping[str, Any]], Any] = _loader(types)
    answers = {str(k): load(v) for k, v in (resume.get("answers") or {}).items()}
    state = resume.get("state")
    return answers or None, str(state) if state is not None else None


def _loader(types: Any) -> Callable[[Mapping[str, Any]], Any]:
    def load(item: Mapping[str, Any]) -> Any:
        kind = str(item.get("type"))
        if kind not in _RESPONSE_TYPES:
            raise ToolRetry(f"an answer of unknown type {kind!r} cannot be sent to the server")
        return getattr(types, kind).model_validate(item.get("data") or {})
    return load
