"""OpenAI Chat Completions, over the official ``openai`` SDK (feature P1).

The same adapter talks to any OpenAI-compatible server through ``base_url``: vLLM, the
llama.cpp server (``llama_cpp.server``), Ollama, LM Studio. With ``guidance`` a small model
there is steered like the embedded one: the prompt, tool offer and reply constraints of
:mod:`reactloop.models._guided` (a GBNF ``grammar`` or a ``response_format`` JSON schema per
request); without it every request is built as below. It only translates:

* :func:`build_params` turns a neutral :class:`~reactloop.models.ModelRequest` into the
  ``chat.completions.create`` arguments (system prompt first, notes last, the run's full tool
  list with ``tool_choice`` restricting it so the request prefix stays cacheable);
* :func:`parse_completion` and :class:`StreamAssembler` turn the wire answer (plain dicts, so
  malformed servers are tolerated) back into a :class:`~reactloop.models.ModelResponse`;
* :func:`translate_error` maps SDK exceptions to :class:`~reactloop.errors.ModelHTTPError`.

A reply is checked before it is used: a 200 that is not JSON (a captive portal) is a
:class:`~reactloop.errors.ModelError` naming the URL, the content type and the first bytes; a
stream that ends without a finish reason (cut off) or without any chunk is a retryable
connection error, never an answer; one response's text plus arguments is capped
(``max_response_chars``), past which it ends with ``finish_reason="length"``.

Key lookup, error translation, retries and the size cap are shared with the other adapters
(:mod:`reactloop.models._provider`); the SDK client is built with
``max_retries=0`` so that every retry is visible as an event. ``openai`` is imported lazily:
``import reactloop`` never imports it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from reactloop._arguments import call_from_wire, invalid_call
from reactloop._redact import add_secret
from reactloop.attachments import IMAGE_TYPES, Attachment
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
from reactloop.models._guided import (
    GUIDED_FORMATS,
    GuidedFormat,
    guided_params,
    guided_reply,
    skill_response,
)
from reactloop.models._profiles import openai_context_window
from reactloop.models._provider import (
    DEFAULT_MAX_RESPONSE_CHARS,
    ProviderModel,
    ResponseBudget,
    TextBuffer,
    cap_problem,
    end_of_stream,
    find_api_key,
    model_error,
    parsed_reply,
    require_extra,
    sdk_error,
    translating,
)
from reactloop.models._retry import RetryListener, RetryPolicy
from reactloop.models._schema import strict_schema
from reactloop.models._typed_local import typed_answer_schema

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
WHERE = "the OpenAI API"
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


class OpenAIModel(ProviderModel):
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
        max_response_chars: the cap on one response's text plus tool-call arguments (default:
            ``max_tokens * 32`` when the request sets ``max_tokens``, else 1 MiB); past it the
            response ends with ``finish_reason="length"``.
        prompt_cache_key: send a ``prompt_cache_key`` stable per session (a hash of its id),
            so its requests reach the same prompt cache; ``None`` (the default) sends it to
            OpenAI's own API only (other servers may reject the field).
        guidance: steer a small model behind an OpenAI-compatible server as the embedded one
            is steered (a :class:`~reactloop.models.local.Guidance`; see
            :mod:`reactloop.models._guided` for what is carried over the wire). ``None`` (the
            default): requests are sent as they always were.
        guided_format: how guided constraints travel: ``"grammar"`` (a GBNF ``grammar``
            field, what llama-cpp-python's ``llama_cpp.server`` reads) or ``"json_schema"``
            (a ``response_format`` JSON schema: Ollama, vLLM, LM Studio).
    """

    provider = "openai"
    key_env = (API_KEY_ENV,)

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
        max_response_chars: int | None = None,
        prompt_cache_key: bool | None = None,
        guidance: Any = None,
        guided_format: GuidedFormat = "grammar",
    ) -> None:
        if not name:
            raise UserError("OpenAIModel needs a model name, e.g. OpenAIModel('gpt-4o-mini')")
        if schema_format not in ("json_schema", "json_object"):
            raise UserError(f"schema_format must be 'json_schema' or 'json_object', got "
                            f"{schema_format!r}")
        if guided_format not in GUIDED_FORMATS:
            raise UserError(f"guided_format must be 'grammar' or 'json_schema', got "
                            f"{guided_format!r}")
        if guidance is not None and base_url is None and client is None:
            raise UserError("guidance needs an OpenAI-compatible server that takes a grammar "
                            "or a JSON schema per request: pass base_url=... (llama.cpp's "
                            "server, Ollama, vLLM)")
        super().__init__(name, retry=retry, on_retry=on_retry,
                         context_window=context_window or openai_context_window(name),
                         max_response_chars=max_response_chars)
        # OpenAI reads pictures and PDFs; an OpenAI-compatible server (Ollama, vLLM, llama.cpp)
        # is assumed to read pictures only, so PDFs reach it as their text (set model.accepts
        # to change either)
        self.accepts = frozenset((*IMAGE_TYPES, "application/pdf") if base_url is None
                                 else IMAGE_TYPES)
        self.schema_format = schema_format
        self.base_url = base_url
        self._owns_client = client is None
        self.client: Any = client if client is not None else make_client(base_url, api_key,
                                                                         timeout)
        if client is not None:  # a client built elsewhere: its key is still ours to hide
            add_secret(getattr(client, "api_key", None))
        # OpenAI's own API wants max_completion_tokens (reasoning models reject max_tokens);
        # compatible servers mostly know only max_tokens
        self._max_tokens_field = "max_completion_tokens" if base_url is None else "max_tokens"
        self.prompt_cache_key = base_url is None if prompt_cache_key is None else prompt_cache_key
        self.guidance = guidance
        self.guided_format: GuidedFormat = guided_format

    def _translate(self, exc: Exception) -> Exception:
        return translate_error(exc)

    def _params(self, request: ModelRequest) -> dict[str, Any]:
        return build_params(request, self.name, max_tokens_field=self._max_tokens_field,
                            schema_format=self.schema_format, cache_key=self.prompt_cache_key)

    def _guided(self, request: ModelRequest) -> bool:
        return self.guidance is not None and typed_answer_schema(request) is None

    async def _guided_request(self, request: ModelRequest) -> ModelResponse:
        loaded = skill_response(request, self.guidance, self.name)
        if loaded is not None:  # the question fits a skill: load it first, as a step
            return loaded
        params, plan = guided_params(request, self.guidance, self.name, self.guided_format,
                                     max_tokens_field=self._max_tokens_field)
        raw = await self._call(
            lambda: self.client.chat.completions.with_raw_response.create(**params))
        with translating(translate_error):
            completion = await parsed_reply(raw, WHERE)
        wire = parse_completion(_as_dict(completion), self.name, self.budget(request))
        return guided_reply(wire, request, self.guidance, plan)

    async def request(self, request: ModelRequest) -> ModelResponse:
        if self._guided(request):
            return await self._guided_request(request)
        params = self._params(request)
        raw = await self._call(
            lambda: self.client.chat.completions.with_raw_response.create(**params))
        with translating(translate_error):
            completion = await parsed_reply(raw, WHERE)
        return parse_completion(_as_dict(completion), self.name, self.budget(request))

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        if self._guided(request):
            # a guided reply is JSON, read whole (as the embedded model's): one text delta
            response = await self._guided_request(request)
            if response.text:
                yield TextDelta(response.text)
            yield response
            return
        params = self._params(request)
        params["stream"] = True
        # servers that ignore this simply send no usage chunk; the final response then has none
        params["stream_options"] = {"include_usage": True}
        # only opening the stream is retried: once deltas are out, a retry would repeat them
        raw = await self._call(
            lambda: self.client.chat.completions.with_raw_response.create(**params))
        chunks = await parsed_reply(raw, WHERE, stream=True)
        assembler = StreamAssembler(self.name, self.budget(request))
        try:
            with translating(translate_error):
                async for chunk in chunks:
                    text = assembler.feed(_as_dict(chunk))
                    if text:
                        yield TextDelta(text)
                    if assembler.budget.exceeded:
                        break  # the cap: stop reading, the response ends as "length"
        finally:
            await chunks.close()
        end_of_stream(WHERE, received=bool(assembler.chunks),
                      finished=assembler.finish_reason is not None, budget=assembler.budget,
                      url=raw.url)
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
    if isinstance(obj, str | bytes):  # JSON sent with another content type
        try:
            obj = json.loads(obj)
        except ValueError:
            obj = obj[:200]
        if isinstance(obj, Mapping):
            return obj
    if not hasattr(obj, "to_dict"):  # JSON, but not an object: not what the API sends
        raise model_error(f"the OpenAI API answered something that is not a completion: "
                          f"{str(obj)[:200]!r}")
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
    if m.attachments:
        text = [{"type": "text", "text": m.content}] if m.content else []
        return {"role": m.role, "content": text + [_wire_part(a) for a in m.attachments]}
    return {"role": m.role, "content": m.content}


def _wire_part(a: Attachment) -> dict[str, Any]:
    """An image (bytes as a data URL, or its URL) or a PDF (bytes; the API takes no URL)."""
    if a.kind == "image":
        return {"type": "image_url", "image_url": {"url": a.data_url()}}
    if a.url is not None:
        raise UserError(f"the OpenAI API takes documents as bytes, not URLs ({a.label()}): "
                        "download it and pass Document.from_path(...)")
    return {"type": "file", "file": {"filename": a.name or "document.pdf",
                                     "file_data": a.data_url()}}


def _tool_parts(tools: Sequence[Message]) -> dict[str, Any]:
    """What tools returned beside text, as the user message that follows their results: a
    tool message holds text only in the Chat Completions API."""
    content: list[dict[str, Any]] = []
    for m in tools:
        content.append({"type": "text", "text": f"Returned by {m.name} "
                                                f"(call {m.tool_call_id}):"})
        content.extend(_wire_part(a) for a in m.attachments)
    return {"role": "user", "content": content}


def wire_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """``messages`` in the Chat Completions shape; pictures and files tools returned follow
    the batch's tool messages as one user message (the API takes them nowhere else)."""
    out: list[dict[str, Any]] = []
    returned: list[Message] = []
    for m in messages:
        if returned and m.role != "tool":
            out.append(_tool_parts(returned))
            returned = []
        out.append(_wire_message(m))
        if m.role == "tool" and m.attachments:
            returned.append(m)
    if returned:
        out.append(_tool_parts(returned))
    return out


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
                 schema_format: str = "json_schema", cache_key: bool = False) -> dict[str, Any]:
    """The keyword arguments of ``client.chat.completions.create`` for ``request``
    (``cache_key``: with ``prompt_cache_key``, from ``request.cache_key``)."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    messages.extend(wire_messages(request.messages_with_notes()))
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
    if cache_key and request.cache_key:  # hashed: a session id is not the provider's business
        params["prompt_cache_key"] = "rl-" + hashlib.sha256(
            request.cache_key.encode()).hexdigest()[:32]
    if settings.extra:
        # extra_body passes any field through, also ones this SDK version does not know
        params["extra_body"] = dict(settings.extra)
    return params


# -- response translation ----------------------------------------------------------------------
def _tool_call(name: Any, arguments: Any, call_id: Any, *, complete: bool = True,
               capped: int | None = None) -> ToolCall | None:
    """The call, marked invalid when its arguments cannot be used as sent (see
    :mod:`reactloop._arguments`): such a call never runs and its error goes back to the model.

    ``complete``: the reply ended normally (missing closing brackets may be added);
    ``capped``: the response was cut at this size cap; none of its calls may run."""
    if not isinstance(name, str) or not name:
        return None  # nothing can run a call without a name
    cid = call_id if isinstance(call_id, str) and call_id else None
    if capped is not None:
        return invalid_call(name, cid, cap_problem(capped))
    return call_from_wire(name, arguments, cid, complete=complete)


def _usage(data: Any) -> Usage | None:
    if not isinstance(data, Mapping):
        return None
    details = data.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
    return Usage(int(data.get("prompt_tokens") or 0), int(data.get("completion_tokens") or 0),
                 int(cached or 0))


def _finish(wire_reason: Any, tool_calls: Sequence[ToolCall], capped: bool = False
            ) -> FinishReason:
    if wire_reason == "length" or capped:
        return "length"
    return "tool_calls" if tool_calls else "stop"


def parse_completion(data: Mapping[str, Any], model_name: str | None = None,
                     budget: ResponseBudget | None = None) -> ModelResponse:
    """A ``ChatCompletion`` (as a dict) as a :class:`ModelResponse`, its text and arguments
    cut at ``budget`` (then ``finish_reason`` is ``"length"``)."""
    budget = budget or ResponseBudget(1 << 62)  # no cap unless given
    choices = data.get("choices") or [{}]
    choice: Mapping[str, Any] = choices[0] or {}
    message: Mapping[str, Any] = choice.get("message") or {}
    text = budget.cut(message.get("content") or None)
    complete = choice.get("finish_reason") not in (None, "length")
    calls: list[ToolCall] = []
    for wire in message.get("tool_calls") or ():
        function = wire.get("function") or {}
        args = function.get("arguments")
        if isinstance(args, str):
            args = budget.take(args)
        call = _tool_call(function.get("name"), args, wire.get("id"), complete=complete,
                          capped=budget.limit if budget.exceeded else None)
        if call is not None:
            calls.append(call)
    return ModelResponse(text or None, calls, _usage(data.get("usage")),
                         _finish(choice.get("finish_reason"), calls, budget.exceeded),
                         data.get("model") or model_name)


class StreamAssembler:
    """Accumulates ``ChatCompletionChunk`` dicts into one final :class:`ModelResponse`.

    Tool calls arrive as fragments keyed by ``index``: the first carries id and name, the rest
    pieces of the arguments string. Text and arguments count against ``budget`` (the size
    cap): once it is spent, :meth:`feed` takes nothing more and the response says
    ``"length"``. The text is kept once (:class:`~reactloop.models._provider.TextBuffer`).
    """

    def __init__(self, model_name: str | None = None,
                 budget: ResponseBudget | None = None) -> None:
        self.model_name = model_name
        self.budget = budget or ResponseBudget(DEFAULT_MAX_RESPONSE_CHARS)
        self.text = TextBuffer()
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: Any = None
        self.usage: Usage | None = None
        self.chunks = 0
        """Chunks fed so far (none at all: the stream was empty)."""

    def feed(self, chunk: Mapping[str, Any]) -> str | None:
        """Take one chunk; return its text delta, if any."""
        self.chunks += 1
        if self.budget.exceeded:
            return None
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
                text = (text or "") + self.budget.take(delta["content"])
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
        call = self.calls.setdefault(index, {"id": None, "name": "", "arguments": TextBuffer()})
        if fragment.get("id"):
            call["id"] = fragment["id"]
        function = fragment.get("function") or {}
        name = function.get("name")
        # OpenAI sends the name once; llama.cpp's server repeats it in every fragment
        if name and name != call["name"]:
            call["name"] += name
        if function.get("arguments"):
            call["arguments"].append(self.budget.take(function["arguments"]))

    def result(self) -> ModelResponse:
        complete = self.finish_reason not in (None, "length") and not self.budget.exceeded
        capped = self.budget.limit if self.budget.exceeded else None
        calls = [
            call for c in (self.calls[i] for i in sorted(self.calls))
            if (call := _tool_call(c["name"], c["arguments"].value(), c["id"],
                                   complete=complete, capped=capped)) is not None
        ]
        return ModelResponse(self.text.value() or None, calls, self.usage,
                             _finish(self.finish_reason, calls, self.budget.exceeded),
                             self.model_name)


# -- errors -------------------------------------------------------------------------------------
def translate_error(exc: Exception) -> Exception:
    """The SDK's errors as :class:`~reactloop.errors.ModelHTTPError` /
    :class:`~reactloop.errors.ModelError` (the adapter boundary); others pass through."""
    import openai

    return sdk_error(exc, openai, "the OpenAI API")
