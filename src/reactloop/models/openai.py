"""OpenAI Chat Completions, over the official ``openai`` SDK (feature P1).

The same adapter talks to any OpenAI-compatible server through ``base_url``: vLLM, the
llama.cpp server (``llama_cpp.server``), Ollama, LM Studio. It only translates:

* :func:`build_params` turns a neutral :class:`~reactloop.models.ModelRequest` into the
  ``chat.completions.create`` arguments (system prompt first, notes last, the run's full tool
  list with ``tool_choice`` restricting it so the request prefix stays cacheable);
* :func:`parse_completion` and :class:`StreamAssembler` turn the wire answer (plain dicts, so
  malformed servers are tolerated) back into a :class:`~reactloop.models.ModelResponse`;
* :func:`translate_error` maps SDK exceptions to :class:`~reactloop.errors.ModelHTTPError`.

Key lookup, error translation and retries are shared with the other adapters
(:mod:`reactloop.models._provider`); the SDK client is built with
``max_retries=0`` so that every retry is visible as an event. ``openai`` is imported lazily:
``import reactloop`` never imports it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from reactloop._redact import add_secret
from reactloop.errors import UserError
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
from reactloop.models._profiles import openai_context_window
from reactloop.models._provider import (
    call_with_retries,
    find_api_key,
    require_extra,
    sdk_error,
    translating,
)
from reactloop.models._retry import RetryListener, RetryPolicy
from reactloop.models._schema import strict_schema

__all__ = [
    "OpenAIModel",
    "StreamAssembler",
    "build_params",
    "make_client",
    "parse_completion",
    "response_format",
    "translate_error",
]

API_KEY_ENV = "OPENAI_API_KEY"
PLACEHOLDER_KEY = "not-needed"
"""Sent to OpenAI-compatible servers that want no key (the SDK insists on one)."""


# -- client, auth, base URL --------------------------------------------------------------------
def make_client(base_url: str | None, api_key: str | None, timeout: float) -> Any:
    """An ``openai.AsyncOpenAI`` with our retry policy in charge (``max_retries=0``).

    The key comes from ``api_key`` or ``OPENAI_API_KEY``; without either, only a custom
    ``base_url`` (a local server) is accepted, with a placeholder key.
    """
    require_extra("openai", "openai", "OpenAIModel")
    import openai

    key = find_api_key("OpenAIModel", api_key, (API_KEY_ENV,), required=base_url is None,
                       fix="for a local OpenAI-compatible server pass base_url=...")
    return openai.AsyncOpenAI(api_key=key or PLACEHOLDER_KEY, base_url=base_url,
                              timeout=timeout, max_retries=0)


class OpenAIModel(Model):
    """A model behind the OpenAI Chat Completions API, or any server that speaks it.

    Args:
        name: the model name sent on the wire, e.g. ``"gpt-4o-mini"``.
        base_url: an OpenAI-compatible server, e.g. ``"http://127.0.0.1:8080/v1"``.
        api_key: the key (default: ``OPENAI_API_KEY``).
        client: a ready ``openai.AsyncOpenAI`` to use instead of building one.
        retry: how 429s, 5xx, connection errors and timeouts are retried.
        timeout: seconds for one HTTP request.
        context_window: tokens the model attends to (default: known for OpenAI families).
        on_retry: called as ``on_retry(attempt, wait_seconds, error)`` before each retry.
        schema_format: how a typed answer's JSON schema is sent: ``"json_schema"`` (OpenAI,
            vLLM, llama.cpp's ``llama-server``, LM Studio, Ollama) or ``"json_object"``
            (``{"type": "json_object", "schema": ...}``, what llama-cpp-python's server reads).
    """

    provider = "openai"

    def __init__(
        self,
        name: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: Any = None,
        retry: RetryPolicy = RetryPolicy(),  # noqa: B008 - frozen, so sharing is safe
        timeout: float = 60.0,
        context_window: int | None = None,
        on_retry: RetryListener | None = None,
        schema_format: str = "json_schema",
    ) -> None:
        if not name:
            raise UserError("OpenAIModel needs a model name, e.g. OpenAIModel('gpt-4o-mini')")
        if schema_format not in ("json_schema", "json_object"):
            raise UserError(f"schema_format must be 'json_schema' or 'json_object', got "
                            f"{schema_format!r}")
        self.schema_format = schema_format
        self.name = name
        self.base_url = base_url
        self.retry = retry
        self.on_retry = on_retry
        self.context_window = context_window or openai_context_window(name)
        self._owns_client = client is None
        self.client: Any = client if client is not None else make_client(base_url, api_key,
                                                                         timeout)
        if client is not None:  # a client built elsewhere: its key is still ours to hide
            add_secret(getattr(client, "api_key", None))
        # OpenAI's own API wants max_completion_tokens (reasoning models reject max_tokens);
        # compatible servers mostly know only max_tokens
        self._max_tokens_field = "max_completion_tokens" if base_url is None else "max_tokens"

    async def request(self, request: ModelRequest) -> ModelResponse:
        params = build_params(request, self.name, max_tokens_field=self._max_tokens_field,
                              schema_format=self.schema_format)
        completion = await call_with_retries(
            lambda: self.client.chat.completions.create(**params), translate_error,
            self.retry, self.on_retry)
        return parse_completion(_as_dict(completion), self.name)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        params = build_params(request, self.name, max_tokens_field=self._max_tokens_field,
                              schema_format=self.schema_format)
        params["stream"] = True
        # servers that ignore this simply send no usage chunk; the final response then has none
        params["stream_options"] = {"include_usage": True}
        # only opening the stream is retried: once deltas are out, a retry would repeat them
        chunks = await call_with_retries(
            lambda: self.client.chat.completions.create(**params), translate_error,
            self.retry, self.on_retry)
        assembler = StreamAssembler(self.name)
        try:
            with translating(translate_error):
                async for chunk in chunks:
                    text = assembler.feed(_as_dict(chunk))
                    if text:
                        yield TextDelta(text)
        finally:
            await chunks.close()
        yield assembler.result()

    def output_mode(self, *, tools: bool) -> OutputMode:
        return "native"  # a JSON-schema response format

    async def aclose(self) -> None:
        if self._owns_client:  # a client passed in belongs to the caller
            self._owns_client = False
            await self.client.close()


def _as_dict(obj: Any) -> Mapping[str, Any]:
    # the SDK's models are built without validation; their dict form is what the server sent,
    # which lets the parsers below tolerate missing or odd fields
    if isinstance(obj, Mapping):
        return obj
    data: Mapping[str, Any] = obj.to_dict()
    return data


# -- request translation -----------------------------------------------------------------------
def _wire_message(m: Message) -> dict[str, Any]:
    if m.role == "assistant" and m.tool_calls:
        return {
            "role": "assistant",
            # a string, even when empty: llama.cpp's server rejects null and its chat templates
            # read the key
            "content": m.content,
            "tool_calls": [
                {
                    "id": c.id or f"call_{i}",
                    "type": "function",
                    "function": {"name": c.name,
                                 "arguments": json.dumps(dict(c.arguments), ensure_ascii=False)},
                }
                for i, c in enumerate(m.tool_calls)
            ],
        }
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content}
    return {"role": m.role, "content": m.content}


def _wire_tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": spec.name, "description": spec.description,
                     "parameters": dict(spec.parameters)},
    }


def _tools_and_choice(request: ModelRequest) -> tuple[Sequence[ToolSpec], Any]:
    """The tools to send and the ``tool_choice`` (None: send none)."""
    all_tools, allowed = request.all_tools, request.tools
    choice = request.settings.tool_choice
    if not all_tools:
        return (), None
    if not allowed or choice == "none":
        # keep the full list (stable prefix, prompt cache) and forbid calling any of it
        return all_tools, "none"
    if choice == "required":
        if len(allowed) == 1:
            # naming the tool works everywhere; llama.cpp's server ignores a bare "required"
            return all_tools, {"type": "function", "function": {"name": allowed[0].name}}
        if len(allowed) == len(all_tools):
            return all_tools, "required"
        # a subset cannot be expressed portably: send only what may be called
        return allowed, "required"
    if len(allowed) == len(all_tools):
        return all_tools, "auto"
    return allowed, "auto"


def response_format(request: ModelRequest, schema_format: str = "json_schema"
                    ) -> dict[str, Any] | None:
    """The ``response_format`` for a typed answer the request wants natively (None: none).

    Strict when the schema can be made strict (OpenAI then guarantees it); the loop validates
    the answer either way."""
    out = request.output_schema
    if out is None or out.mode != "native":
        return None
    if schema_format == "json_object":
        return {"type": "json_object", "schema": dict(out.schema)}
    strict = strict_schema(out.schema)
    return {"type": "json_schema",
            "json_schema": {"name": out.name, "schema": strict or dict(out.schema),
                            "strict": strict is not None}}


def build_params(request: ModelRequest, model_name: str, *,
                 max_tokens_field: str = "max_tokens",
                 schema_format: str = "json_schema") -> dict[str, Any]:
    """The keyword arguments of ``client.chat.completions.create`` for ``request``."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    messages.extend(_wire_message(m) for m in request.messages_with_notes())
    params: dict[str, Any] = {"model": model_name, "messages": messages}
    tools, choice = _tools_and_choice(request)
    if tools:
        params["tools"] = [_wire_tool(t) for t in tools]
        params["tool_choice"] = choice
    fmt = response_format(request, schema_format)
    if fmt is not None:
        params["response_format"] = fmt
    settings = request.settings
    if settings.max_tokens is not None:
        params[max_tokens_field] = settings.max_tokens
    if settings.temperature is not None:
        params["temperature"] = settings.temperature
    if settings.extra:
        # extra_body passes any field through, also ones this SDK version does not know
        params["extra_body"] = dict(settings.extra)
    return params


# -- response translation ----------------------------------------------------------------------
def parse_arguments(raw: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict: JSON, else repaired JSON (``json_repair``), else ``{}``."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if not isinstance(raw, str) or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = _repair_json(raw)
    return value if isinstance(value, dict) else {}


def _repair_json(raw: str) -> Any:
    try:
        import json_repair
    except ImportError:
        return None
    try:
        return json_repair.repair_json(raw, return_objects=True)
    except Exception:  # json_repair is best effort; anything it cannot do means "no repair"
        return None


def _tool_call(name: Any, arguments: Any, call_id: Any) -> ToolCall | None:
    if not isinstance(name, str) or not name:
        return None  # nothing can run a call without a name
    return ToolCall(name, parse_arguments(arguments), call_id if isinstance(call_id, str)
                    and call_id else None)


def _usage(data: Any) -> Usage | None:
    if not isinstance(data, Mapping):
        return None
    details = data.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
    return Usage(int(data.get("prompt_tokens") or 0), int(data.get("completion_tokens") or 0),
                 int(cached or 0))


def _finish(wire_reason: Any, tool_calls: Sequence[ToolCall]) -> FinishReason:
    if wire_reason == "length":
        return "length"
    return "tool_calls" if tool_calls else "stop"


def parse_completion(data: Mapping[str, Any], model_name: str | None = None) -> ModelResponse:
    """A ``ChatCompletion`` (as a dict) as a :class:`ModelResponse`."""
    choices = data.get("choices") or [{}]
    choice: Mapping[str, Any] = choices[0] or {}
    message: Mapping[str, Any] = choice.get("message") or {}
    calls: list[ToolCall] = []
    for wire in message.get("tool_calls") or ():
        function = wire.get("function") or {}
        call = _tool_call(function.get("name"), function.get("arguments"), wire.get("id"))
        if call is not None:
            calls.append(call)
    text = message.get("content") or None
    return ModelResponse(text, calls, _usage(data.get("usage")),
                         _finish(choice.get("finish_reason"), calls),
                         data.get("model") or model_name)


class StreamAssembler:
    """Accumulates ``ChatCompletionChunk`` dicts into one final :class:`ModelResponse`.

    Tool calls arrive as fragments keyed by ``index``: the first carries id and name, the rest
    pieces of the arguments string.
    """

    def __init__(self, model_name: str | None = None) -> None:
        self.model_name = model_name
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: Any = None
        self.usage: Usage | None = None

    def feed(self, chunk: Mapping[str, Any]) -> str | None:
        """Take one chunk; return its text delta, if any."""
        if chunk.get("model"):
            self.model_name = chunk["model"]
        usage = _usage(chunk.get("usage"))
        if usage is not None:
            self.usage = usage
        text: str | None = None
        for choice in chunk.get("choices") or ():
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
            delta = choice.get("delta") or {}
            if delta.get("content"):
                text = (text or "") + delta["content"]
            for fragment in delta.get("tool_calls") or ():
                self._feed_call(fragment)
        if text:
            self.text.append(text)
        return text

    def _feed_call(self, fragment: Mapping[str, Any]) -> None:
        index = fragment.get("index")
        if not isinstance(index, int):
            # servers that omit the index: a fragment with a new id starts a call
            known = any(c["id"] == fragment.get("id") for c in self.calls.values())
            index = len(self.calls) if fragment.get("id") and not known else max(self.calls,
                                                                                 default=0)
        call = self.calls.setdefault(index, {"id": None, "name": "", "arguments": []})
        if fragment.get("id"):
            call["id"] = fragment["id"]
        function = fragment.get("function") or {}
        name = function.get("name")
        # OpenAI sends the name once; llama.cpp's server repeats it in every fragment
        if name and name != call["name"]:
            call["name"] += name
        if function.get("arguments"):
            call["arguments"].append(function["arguments"])

    def result(self) -> ModelResponse:
        calls = [
            call for c in (self.calls[i] for i in sorted(self.calls))
            if (call := _tool_call(c["name"], "".join(c["arguments"]), c["id"])) is not None
        ]
        return ModelResponse("".join(self.text) or None, calls, self.usage,
                             _finish(self.finish_reason, calls), self.model_name)


# -- errors -------------------------------------------------------------------------------------
def translate_error(exc: Exception) -> Exception:
    """The SDK's errors as :class:`~reactloop.errors.ModelHTTPError` /
    :class:`~reactloop.errors.ModelError` (the adapter boundary); others pass through."""
    import openai

    return sdk_error(exc, openai, "the OpenAI API")
