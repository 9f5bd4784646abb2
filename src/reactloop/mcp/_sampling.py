"""MCP sampling: a server asks the client's model to generate (``sampling/createMessage``).

Who answers: the model named for the server (``MCPServer(..., sampling_model="openai:…")``,
``"sampling_model"`` in the config file), else the model of the run whose tool call is open
on that server. The answer is bounded by the run's deadline and the server's ``timeout``; its
tokens count in the run's metrics; each request is a ``mcp_sampling`` event (``server``,
``model``, ``outcome``: ``answered``/``refused``/``failed``, ``input_tokens``,
``output_tokens``, ``message``).

Whether to answer (``sampling=``): ``"allow"``, ``"ask"`` (the elicitation handler asks the
user first; without one the request is refused) or ``"deny"``. The default is ``"allow"`` for
stdio servers — a program the user chose to start on their own machine, with their own
environment, can already do anything the user can, including calling the model with the
user's keys, so asking adds friction and no protection — and ``"ask"`` for remote servers,
which are someone else's code spending the user's tokens and reading what the model writes.
A refusal reaches the server as an error (code -1, "User rejected sampling request", as the
specification suggests), and ``"deny"`` does not even announce the capability.

Imported only with the SDK.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal

import mcp_types as types

from reactloop.mcp._elicitation import Elicitation, Elicitor, answer_of
from reactloop.mcp._results import describe_block

if TYPE_CHECKING:
    from reactloop.messages import ModelResponse
    from reactloop.tools._source import CallerRun, Emit

__all__ = ["MAX_SAMPLING_TOKENS", "SamplingPolicy", "answer_sampling", "default_policy"]

SamplingPolicy = Literal["allow", "ask", "deny"]
MAX_SAMPLING_TOKENS = 4096
"""A server's ``maxTokens`` is honoured up to this (a server does not get to spend more)."""
USER_REJECTED = -1


def default_policy(transport: str) -> SamplingPolicy:
    """``allow`` for stdio servers, ``ask`` for remote ones (see the module docstring)."""
    return "allow" if transport == "stdio" else "ask"


async def answer_sampling(
    params: types.CreateMessageRequestParams, *, server: str, policy: SamplingPolicy,
    model: Any, caller: CallerRun | None, emit: Emit, ask: Elicitor | None, limit: float,
) -> types.CreateMessageResult | types.ErrorData:
    """Answer one ``sampling/createMessage`` request (never raises)."""
    emit = caller.emit if caller is not None else emit
    model = model if model is not None else (caller.model if caller is not None else None)
    event: dict[str, Any] = {"server": server, "model": getattr(model, "name", None),
                             "input_tokens": 0, "output_tokens": 0}
    refusal = await _refusal(params, server, policy, model, ask)
    if refusal is not None:
        emit("mcp_sampling", {**event, "outcome": "refused", "message": refusal})
        return types.ErrorData(code=USER_REJECTED, message=refusal)
    if caller is not None and caller.time_left is not None:
        limit = min(limit, max(0.0, caller.time_left))
    try:
        async with asyncio.timeout(limit):
            call = caller.call_model if caller is not None else None
            response: ModelResponse = await (call(model, _request(params)) if call is not None
                                             else model.request(_request(params)))
    except TimeoutError:
        message = f"the model did not answer within {limit:g} s (the run's deadline or timeout)"
        emit("mcp_sampling", {**event, "outcome": "failed", "message": message})
        return types.ErrorData(code=types.INTERNAL_ERROR, message=message)
    except Exception as exc:  # the server gets the error; the run goes on
        message = f"the model failed: {type(exc).__name__}: {exc}"
        emit("mcp_sampling", {**event, "outcome": "failed", "message": message})
        return types.ErrorData(code=types.INTERNAL_ERROR, message=message)
    usage = response.usage
    if usage is not None:
        event.update(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)
        if caller is not None:
            caller.count_usage(usage.input_tokens, usage.output_tokens)
    emit("mcp_sampling", {**event, "outcome": "answered", "message": ""})
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=response.text or ""),
        model=str(response.model_name or getattr(model, "name", "model")),
        stop_reason="maxTokens" if response.finish_reason == "length" else "endTurn")


async def _refusal(params: types.CreateMessageRequestParams, server: str,
                   policy: SamplingPolicy, model: Any, ask: Elicitor | None) -> str | None:
    """Why the request is refused, or None to answer it."""
    if policy == "deny":
        return f"User rejected sampling request: sampling is denied for MCP server {server!r}"
    if model is None:
        return (f"no model to sample with: MCP server {server!r} asked outside a run; name one "
                "with sampling_model")
    if policy == "ask":
        if ask is None:
            return (f"User rejected sampling request: MCP server {server!r} is remote, and "
                    "nobody is there to ask (set sampling to 'allow' to permit it)")
        question = Elicitation(
            server=server, message=f"MCP server {server!r} asks your model to generate "
            f"(up to {min(params.max_tokens, MAX_SAMPLING_TOKENS)} tokens) from: "
            f"{_preview(params)}. Allow?",
            schema={"type": "object", "properties": {"allow": {
                "type": "boolean", "title": "Allow", "default": False}}, "required": ["allow"]})
        try:
            answer = await answer_of(ask, question)
        except Exception as exc:
            return f"User rejected sampling request: asking failed ({exc})"
        if answer.action != "accept" or not (answer.content or {}).get("allow"):
            return "User rejected sampling request"
    return None


def _text(content: Any) -> str:
    blocks = content if isinstance(content, list) else [content]
    return "\n".join(describe_block(b) for b in blocks)


def _preview(params: types.CreateMessageRequestParams, limit: int = 200) -> str:
    text = " ".join(_text(m.content) for m in params.messages)
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _request(params: types.CreateMessageRequestParams) -> Any:
    from reactloop.messages import Message, ModelRequest, ModelSettings

    messages = tuple(Message.user(_text(m.content)) if m.role == "user"
                     else Message.assistant(_text(m.content)) for m in params.messages)
    settings = ModelSettings(max_tokens=min(params.max_tokens, MAX_SAMPLING_TOKENS),
                             temperature=params.temperature)
    return ModelRequest(params.system_prompt or "", messages, (), (), settings)
