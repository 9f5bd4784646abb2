"""Anthropic Messages API adapter, over the official ``anthropic`` SDK (imported lazily).

Translation only: the system prompt goes to ``system``, assistant tool calls become
``tool_use`` blocks, tool results become ``tool_result`` blocks (consecutive ones merged into
one user message, as the API requires strict user/assistant alternation), and the volatile
notes go last, as a text block at the end of the final user message. Thinking blocks
(extended thinking, switched on with ``ModelSettings(extra={"thinking": {...}})``) are kept,
signature and all, in ``provider_details["anthropic"]["thinking"]`` and sent back first in
the assistant turn: with tool use the API rejects a turn whose thinking is missing.

The SDK's own retries are switched off; the key lookup, error translation and retries are
shared with the other adapters (:mod:`reactloop.models._provider`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from reactloop.messages import (
    FinishReason,
    Message,
    ModelRequest,
    ModelResponse,
    OutputMode,
    TextDelta,
    ToolCall,
    ToolSpec,
    Usage,
)
from reactloop.models._base import Model
from reactloop.models._profiles import anthropic_context_window
from reactloop.models._provider import (
    call_with_retries,
    find_api_key,
    require_extra,
    sdk_error,
    translating,
)
from reactloop.models._retry import RetryListener, RetryPolicy
from reactloop.models._schema import strict_schema

__all__ = ["AnthropicModel", "build_params", "parse_message", "translate_error"]

API_KEY_ENV = "ANTHROPIC_API_KEY"
PROVIDER = "anthropic"
"""The key of this adapter's entries in ``provider_details``."""

_STOP_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "pause_turn": "stop",
    "refusal": "stop",
}


def _usage(usage: dict[str, Any]) -> Usage:
    # Anthropic's input_tokens leaves out the cached part; reactloop's (and OpenTelemetry's)
    # input tokens are all of them, as OpenAI and Gemini count them
    read = int(usage.get("cache_read_input_tokens") or 0)
    written = int(usage.get("cache_creation_input_tokens") or 0)
    return Usage(int(usage.get("input_tokens") or 0) + read + written,
                 int(usage.get("output_tokens") or 0), read, written)


class AnthropicModel(Model):
    """A Claude model through the Anthropic Messages API.

    Args:
        name: the model name, e.g. ``"claude-sonnet-4-5"``.
        api_key: the API key (default: the ``ANTHROPIC_API_KEY`` environment variable).
        base_url: another endpoint (a proxy, or a loopback server in tests).
        max_tokens: output-token limit when the request's settings give none (the API
            requires one).
        retry: how to retry 429, 5xx, connection errors and timeouts.
        timeout: seconds for one HTTP request.
        on_retry: called as ``on_retry(attempt, wait_seconds, error)`` before each retry.
        context_window: tokens the model attends to (default: known for Claude models).
    """

    provider = "anthropic"

    def __init__(
        self,
        name: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int = 4096,
        retry: RetryPolicy = RetryPolicy(),  # noqa: B008 - frozen, so sharing is safe
        timeout: float = 60.0,
        on_retry: RetryListener | None = None,
        context_window: int | None = None,
    ) -> None:
        require_extra("anthropic", "anthropic", "AnthropicModel")
        key = find_api_key("AnthropicModel", api_key, (API_KEY_ENV,))
        from anthropic import AsyncAnthropic

        self.name = name
        self.max_tokens = max_tokens
        self.retry = retry
        self.on_retry = on_retry
        self.context_window = context_window or anthropic_context_window(name)
        # max_retries=0: retrying is ours (with_retries), so waits are reported as run events
        self._client: Any = AsyncAnthropic(
            api_key=key, base_url=base_url, max_retries=0, timeout=timeout
        )

    async def request(self, request: ModelRequest) -> ModelResponse:
        params = build_params(request, self.name, self.max_tokens)
        message = await call_with_retries(lambda: self._client.messages.create(**params),
                                          translate_error, self.retry, self.on_retry)
        return parse_message(message.model_dump(mode="json"), self.name)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        params = build_params(request, self.name, self.max_tokens)
        # only opening the stream is retried: once text has been yielded, a retry would repeat it
        events = await call_with_retries(
            lambda: self._client.messages.create(**params, stream=True), translate_error,
            self.retry, self.on_retry)
        acc = _StreamAccumulator()
        with translating(translate_error):
            async for event in events:
                delta = acc.feed(event.model_dump(mode="json"))
                if delta:
                    yield TextDelta(delta)
        yield parse_message(acc.message, self.name)

    def output_mode(self, *, tools: bool) -> OutputMode:
        return "native"  # structured output (output_config.format), also next to tools

    async def aclose(self) -> None:
        await self._client.close()


def translate_error(exc: Exception) -> Exception:
    """The SDK's errors as :class:`~reactloop.errors.ModelHTTPError` /
    :class:`~reactloop.errors.ModelError` (the adapter boundary); others pass through."""
    import anthropic

    return sdk_error(exc, anthropic, "the Anthropic API")


# -- request (pure) --------------------------------------------------------------------------
def _tool_json(spec: ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description,
            "input_schema": dict(spec.parameters)}


def _tools_and_choice(request: ModelRequest) -> tuple[list[ToolSpec], dict[str, Any] | None]:
    """The tools to send and the ``tool_choice``.

    We send the run's full tool list every time and narrow the choice instead, so the
    request prefix (and Anthropic's prompt cache) stays the same on the forced last iteration.
    """
    all_tools, allowed = list(request.all_tools), list(request.tools)
    if not all_tools:
        return [], None
    if not allowed or request.settings.tool_choice == "none":
        return all_tools, {"type": "none"}
    if len(allowed) < len(all_tools):
        if len(allowed) == 1:
            return all_tools, {"type": "tool", "name": allowed[0].name}
        all_tools = allowed  # a subset the API cannot express as a choice: send it instead
    if request.settings.tool_choice == "required":
        return all_tools, {"type": "any"}
    return all_tools, {"type": "auto"}


def _blocks(m: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if m.role == "tool":
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.tool_call_id or "",
                                 "content": m.content}
        if m.is_error:
            block["is_error"] = True
        return [block]
    # thinking blocks go back first and unchanged: with tool use, the API rejects an assistant
    # turn whose thinking (and its signature) is missing
    blocks.extend(dict(b) for b in _details(m.provider_details).get("thinking") or ())
    if m.content:  # the API rejects empty text blocks
        blocks.append({"type": "text", "text": m.content})
    for call in m.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id or "", "name": call.name,
                       "input": dict(call.arguments)})
    return blocks


def render_messages(request: ModelRequest) -> tuple[str, list[dict[str, Any]]]:
    """``(system, messages)`` in the Messages API's shape, notes last."""
    system = [request.system] if request.system else []
    out: list[dict[str, Any]] = []
    for m in request.messages:
        if m.role == "system":
            system.append(m.content)
            continue
        role = "assistant" if m.role == "assistant" else "user"
        blocks = _blocks(m)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:  # strict alternation: merge into the previous turn
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    if request.notes:
        note = {"type": "text", "text": "\n\n".join(request.notes)}
        if out and out[-1]["role"] == "user":
            out[-1]["content"].append(note)
        else:
            out.append({"role": "user", "content": [note]})
    return "\n\n".join(system), out


def build_params(request: ModelRequest, model: str, max_tokens: int) -> dict[str, Any]:
    """Keyword arguments for ``client.messages.create``."""
    system, messages = render_messages(request)
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": request.settings.max_tokens or max_tokens,
        "messages": messages,
    }
    if system:
        params["system"] = system
    tools, choice = _tools_and_choice(request)
    if tools:
        params["tools"] = [_tool_json(t) for t in tools]
    if choice is not None:
        params["tool_choice"] = choice
    if request.settings.temperature is not None:
        params["temperature"] = request.settings.temperature
    out = request.output_schema
    if out is not None and out.mode == "native":
        params["output_config"] = {"format": {"type": "json_schema",
                                              "schema": structured_schema(out.schema)}}
    if request.settings.extra:
        params["extra_body"] = dict(request.settings.extra)
    return params


def _details(provider_details: Mapping[str, Any] | None) -> Mapping[str, Any]:
    details = (provider_details or {}).get(PROVIDER)
    return details if isinstance(details, Mapping) else {}


def structured_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A typed answer's schema in the subset structured output accepts: the SDK's own
    rewrite when it has one (it moves unsupported constraints into descriptions), else
    closed objects."""
    try:
        from anthropic.lib._parse._transform import transform_schema
    except ImportError:
        return strict_schema(schema, all_required=False) or dict(schema)
    rewritten: dict[str, Any] = transform_schema(dict(schema))
    return rewritten


# -- response (pure) -------------------------------------------------------------------------
_THINKING_KEYS = {"thinking": ("type", "thinking", "signature"),
                  "redacted_thinking": ("type", "data")}


def parse_message(message: dict[str, Any], model_name: str | None = None) -> ModelResponse:
    """A Messages API ``message`` object (as JSON) as a :class:`ModelResponse`.

    Thinking blocks (extended thinking, switched on through ``ModelSettings.extra``) are kept
    whole in ``provider_details["anthropic"]["thinking"]``: the next turn must send them back.
    """
    texts: list[str] = []
    calls: list[ToolCall] = []
    thinking: list[dict[str, Any]] = []
    for block in message.get("content") or ():
        kind = block.get("type")
        if kind == "text":
            texts.append(block.get("text") or "")
        elif kind == "tool_use":
            args = block.get("input")
            calls.append(ToolCall(block.get("name") or "", args if isinstance(args, dict) else {},
                                  block.get("id")))
        elif kind in _THINKING_KEYS:
            thinking.append({k: block[k] for k in _THINKING_KEYS[kind] if k in block})
    usage = message.get("usage") or {}
    finish = _STOP_REASONS.get(message.get("stop_reason") or "", "stop")
    if calls and finish == "stop":
        finish = "tool_calls"
    return ModelResponse(
        "".join(texts) or None,
        calls,
        _usage(usage),
        finish,
        message.get("model") or model_name,
        {PROVIDER: {"thinking": thinking}} if thinking else None,
    )


class _StreamAccumulator:
    """Rebuilds the final ``message`` from raw stream events; returns text deltas as they come.

    Tool-call arguments arrive as ``input_json_delta`` fragments and are parsed once the block
    stops (partial JSON is not valid JSON).
    """

    def __init__(self) -> None:
        self.message: dict[str, Any] = {"content": [], "usage": {}}
        self._json: dict[int, list[str]] = {}

    def feed(self, event: dict[str, Any]) -> str:
        kind = event.get("type")
        if kind == "message_start":
            start = event.get("message") or {}
            self.message.update({k: v for k, v in start.items() if k != "content"})
            self.message["usage"] = dict(start.get("usage") or {})
        elif kind == "content_block_start":
            block = dict(event.get("content_block") or {})
            content: list[dict[str, Any]] = self.message["content"]
            index = event.get("index", len(content))
            while len(content) <= index:
                content.append({})
            content[index] = block
            if block.get("type") == "tool_use":
                self._json[index] = []
        elif kind == "content_block_delta":
            return self._delta(event.get("index", 0), event.get("delta") or {})
        elif kind == "content_block_stop":
            self._finish_block(event.get("index", 0))
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            if delta.get("stop_reason"):
                self.message["stop_reason"] = delta["stop_reason"]
            for key, value in (event.get("usage") or {}).items():
                if value is not None:
                    self.message["usage"][key] = value
        return ""

    def _delta(self, index: int, delta: dict[str, Any]) -> str:
        block = self.message["content"][index]
        if delta.get("type") == "text_delta":
            text: str = delta.get("text") or ""
            block["text"] = block.get("text", "") + text
            return text
        if delta.get("type") == "input_json_delta":
            self._json.setdefault(index, []).append(delta.get("partial_json") or "")
        elif delta.get("type") == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + (delta.get("thinking") or "")
        elif delta.get("type") == "signature_delta":
            block["signature"] = block.get("signature", "") + (delta.get("signature") or "")
        return ""

    def _finish_block(self, index: int) -> None:
        fragments = self._json.pop(index, None)
        if fragments is None:
            return
        raw = "".join(fragments)
        args = _loads_lenient(raw)
        self.message["content"][index]["input"] = args if isinstance(args, dict) else {}


def _loads_lenient(raw: str) -> Any:
    """Streamed tool arguments as an object; repaired when ``json_repair`` is installed."""
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        try:
            from json_repair import repair_json
        except ImportError:
            return {}
        return repair_json(raw, return_objects=True)
