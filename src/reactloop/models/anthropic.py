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

from collections.abc import AsyncIterator, Mapping
from typing import Any

from reactloop._arguments import invalid_call, parse_arguments
from reactloop.attachments import IMAGE_TYPES, Attachment
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
from reactloop.models._anthropic_cache import add_cache_breakpoints
from reactloop.models._profiles import anthropic_context_window
from reactloop.models._provider import (
    ProviderModel,
    ResponseBudget,
    TextBuffer,
    cap_problem,
    end_of_stream,
    parsed_reply,
    require_extra,
    sdk_error,
    translating,
)
from reactloop.models._retry import RetryListener, RetryPolicy
from reactloop.models._schema import strict_schema

__all__ = ["AnthropicModel", "build_params", "parse_message", "translate_error"]

API_KEY_ENV = "ANTHROPIC_API_KEY"
WHERE = "the Anthropic API"
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


class AnthropicModel(ProviderModel):
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
        max_response_chars: the cap on one response's text, thinking and tool-call arguments
            (default: ``max_tokens * 32``); past it the response ends with
            ``finish_reason="length"``.
        prompt_caching: mark prompt-cache breakpoints automatically (the tools/system block,
            the previous and the latest history message); ``False`` sends none.
    """

    provider = "anthropic"
    key_env = (API_KEY_ENV,)

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
        max_response_chars: int | None = None,
        prompt_caching: bool = True,
    ) -> None:
        require_extra("anthropic", "anthropic", "AnthropicModel")
        key = self._api_key(api_key)
        from anthropic import AsyncAnthropic

        super().__init__(name, retry=retry, on_retry=on_retry,
                         context_window=context_window or anthropic_context_window(name),
                         max_response_chars=max_response_chars)
        self.max_tokens = max_tokens
        self.accepts = frozenset((*IMAGE_TYPES, "application/pdf"))
        self.prompt_caching = prompt_caching
        # max_retries=0: retrying is ours (with_retries), so waits are reported as run events
        self._client: Any = AsyncAnthropic(
            api_key=key, base_url=base_url, max_retries=0, timeout=timeout
        )

    def _translate(self, exc: Exception) -> Exception:
        return translate_error(exc)

    async def request(self, request: ModelRequest) -> ModelResponse:
        params = build_params(request, self.name, self.max_tokens, cache=self.prompt_caching)
        raw = await self._call(lambda: self._client.messages.with_raw_response.create(**params))
        with translating(translate_error):
            message = await parsed_reply(raw, WHERE)
        return parse_message(message.model_dump(mode="json"), self.name,
                             self.budget(request, self.max_tokens))

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        params = build_params(request, self.name, self.max_tokens, cache=self.prompt_caching)
        # only opening the stream is retried: once text has been yielded, a retry would repeat it
        raw = await self._call(
            lambda: self._client.messages.with_raw_response.create(**params, stream=True))
        events = await parsed_reply(raw, WHERE, stream=True)
        acc = _StreamAccumulator(self.budget(request, self.max_tokens))
        try:
            with translating(translate_error):
                async for event in events:
                    delta = acc.feed(event.model_dump(mode="json"))
                    if delta:
                        yield TextDelta(delta)
                    if acc.budget.exceeded:
                        break  # the cap: stop reading, the response ends as "length"
        finally:
            await events.close()
        end_of_stream(WHERE, received=bool(acc.events), finished=acc.stopped,
                      budget=acc.budget, url=raw.url)
        yield parse_message(acc.result(), self.name)

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
        content: Any = m.content
        if m.attachments:  # pictures and documents go inside the result, beside its text
            content = ([{"type": "text", "text": m.content}] if m.content else []) + [
                _part(a) for a in m.attachments]
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.tool_call_id or "",
                                 "content": content}
        if m.is_error:
            block["is_error"] = True
        return [block]
    # thinking blocks go back first and unchanged: with tool use, the API rejects an assistant
    # turn whose thinking (and its signature) is missing
    blocks.extend(dict(b) for b in _details(m.provider_details).get("thinking") or ())
    if m.content:  # the API rejects empty text blocks
        blocks.append({"type": "text", "text": m.content})
    blocks.extend(_part(a) for a in m.attachments)
    for call in m.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id or "", "name": call.name,
                       "input": dict(call.arguments)})
    return blocks


def _part(a: Attachment) -> dict[str, Any]:
    """An ``image`` or ``document`` block, its source base64 bytes or a URL."""
    source = ({"type": "url", "url": a.url} if a.url is not None else
              {"type": "base64", "media_type": a.media_type, "data": a.base64()})
    block: dict[str, Any] = {"type": a.kind, "source": source}
    if a.kind == "document" and a.name:
        block["title"] = a.name
    return block


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


def build_params(request: ModelRequest, model: str, max_tokens: int, *,
                 cache: bool = True) -> dict[str, Any]:
    """Keyword arguments for ``client.messages.create`` (with prompt-cache breakpoints
    unless ``cache`` is False: :mod:`reactloop.models._anthropic_cache`)."""
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
    if cache:
        add_cache_breakpoints(params, notes=bool(request.notes))
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


def parse_message(message: dict[str, Any], model_name: str | None = None,
                  budget: ResponseBudget | None = None) -> ModelResponse:
    """A Messages API ``message`` object (as JSON) as a :class:`ModelResponse`, its text and
    arguments cut at ``budget`` (then ``finish_reason`` is ``"length"`` and no call runs).

    Thinking blocks (extended thinking, switched on through ``ModelSettings.extra``) are kept
    whole in ``provider_details["anthropic"]["thinking"]``: the next turn must send them back.
    """
    budget = budget or ResponseBudget(1 << 62)
    texts: list[str] = []
    calls: list[ToolCall] = []
    thinking: list[dict[str, Any]] = []
    for block in message.get("content") or ():
        kind = block.get("type")
        if kind == "text":
            texts.append(budget.take(block.get("text") or ""))
        elif kind == "tool_use":
            calls.append(_call(block, budget))
        elif kind in _THINKING_KEYS:
            thinking.append({k: block[k] for k in _THINKING_KEYS[kind] if k in block})
    usage = message.get("usage") or {}
    finish = _STOP_REASONS.get(message.get("stop_reason") or "", "stop")
    if budget.exceeded or message.get(_CAPPED):
        finish = "length"
        calls = [invalid_call(c.name, c.id, cap_problem(budget.limit if budget.exceeded
                                                        else message[_CAPPED])) for c in calls]
    elif calls and finish == "stop":
        finish = "tool_calls"
    return ModelResponse(
        "".join(texts) or None,
        calls,
        _usage(usage),
        finish,
        message.get("model") or model_name,
        {PROVIDER: {"thinking": thinking}} if thinking else None,
    )


def _call(block: Mapping[str, Any], budget: ResponseBudget) -> ToolCall:
    """A ``tool_use`` block as a call; marked never to run when its input is unusable."""
    name, call_id = block.get("name") or "", block.get("id")
    problem, args = block.get(_INVALID), block.get("input")
    if problem is None and not isinstance(args, dict):
        problem = f"the arguments must be a JSON object, got {type(args).__name__}"
    if problem is not None or not isinstance(args, dict):
        return invalid_call(name, call_id, str(problem))
    budget.take(str(args) if args else "")
    return ToolCall(name, args, call_id)


_INVALID = "reactloop_invalid"  # a block key: why the streamed input cannot be used
_CAPPED = "reactloop_capped"  # a message key: the stream was cut at this size cap


class _StreamAccumulator:
    """Rebuilds the final ``message`` from raw stream events; returns text deltas as they come.

    Tool-call arguments arrive as ``input_json_delta`` fragments and are parsed at the end
    (partial JSON is not valid JSON; the stop reason says whether the reply was complete). Text, thinking and arguments count against
    ``budget``; once it is spent nothing more is taken. Long texts are kept once
    (:class:`~reactloop.models._provider.TextBuffer`), joined at the end.
    """

    def __init__(self, budget: ResponseBudget) -> None:
        self.message: dict[str, Any] = {"content": [], "usage": {}}
        self.budget = budget
        self.events = 0
        self.stopped = False
        """The end marker came (``message_stop``, or a stop reason): the reply is complete."""
        self._json: dict[int, TextBuffer] = {}
        self._texts: dict[tuple[int, str], TextBuffer] = {}

    def feed(self, event: dict[str, Any]) -> str:
        self.events += 1
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
                self._json[index] = TextBuffer()
        elif kind == "content_block_delta":
            return self._delta(event.get("index", 0), event.get("delta") or {})
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            if delta.get("stop_reason"):
                self.message["stop_reason"] = delta["stop_reason"]
                self.stopped = True
            for key, value in (event.get("usage") or {}).items():
                if value is not None:
                    self.message["usage"][key] = value
        elif kind == "message_stop":
            self.stopped = True
        return ""

    def _delta(self, index: int, delta: dict[str, Any]) -> str:
        kind = delta.get("type")
        if kind == "input_json_delta":
            self._json.setdefault(index, TextBuffer()).append(
                self.budget.take(delta.get("partial_json") or ""))
        elif kind in ("text_delta", "thinking_delta"):
            field = "text" if kind == "text_delta" else "thinking"
            text = self.budget.take(delta.get(field) or "")
            self._texts.setdefault((index, field), TextBuffer()).append(text)
            return text if kind == "text_delta" else ""
        elif kind == "signature_delta":
            block = self.message["content"][index]
            block["signature"] = block.get("signature", "") + (delta.get("signature") or "")
        return ""

    def _finish_block(self, index: int, complete: bool) -> None:
        fragments = self._json.pop(index)
        args = parse_arguments(fragments.value(), complete=complete)
        block = self.message["content"][index]
        block["input"] = args if isinstance(args, dict) else {}
        if isinstance(args, str):
            block[_INVALID] = args

    def result(self) -> dict[str, Any]:
        """The message, its texts joined (a cut stream's unfinished calls say so)."""
        content = self.message["content"]
        for (index, field), buffer in self._texts.items():
            content[index][field] = buffer.value()
        self._texts.clear()
        # arguments cut by max_tokens are not closed: that would shorten a value
        complete = self.message.get("stop_reason") != "max_tokens"
        for index in list(self._json):
            self._finish_block(index, complete)
        if self.budget.exceeded:
            self.message["stop_reason"] = "max_tokens"
            self.message[_CAPPED] = self.budget.limit
        return self.message
