"""Gemini adapter over the official ``google-genai`` SDK (imported lazily).

Translation only, in the message shapes of seed 001: the system prompt becomes
``system_instruction``, assistant tool calls ``functionCall`` parts of a ``model`` turn, tool
results ``functionResponse`` parts (consecutive ones merged into one ``user`` turn), and the
volatile notes a text part at the end of the final user turn.

Thought signatures (Gemini 2.5 and 3 send them on function-call and text parts, and require
them back on the next turn) are kept in ``provider_details["gemini"]["thought_signature"]``
of the call or of the response, and sent back on the same parts.

Gemini does not always give calls an id. We then make one that is stable for the conversation
(``gemini-<turn>-<index>``, from the history length) and map results back by name; ids the API
did give are sent back with their responses.

The SDK's own retries stay off; the key lookup, error translation and retries are shared with
the other adapters (:mod:`reactloop.models._provider`).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import sys
from collections.abc import AsyncIterator, Mapping
from typing import Any

from reactloop._arguments import invalid_call
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
from reactloop.models._profiles import gemini_context_window
from reactloop.models._provider import (
    ProviderModel,
    ResponseBudget,
    TextBuffer,
    cap_problem,
    empty_stream,
    end_of_stream,
    http_error,
    model_error,
    reply_check,
    require_extra,
    translating,
)
from reactloop.models._retry import RetryListener, RetryPolicy

__all__ = ["GENERATED_ID_PREFIX", "GeminiModel", "build_config", "parse_response",
           "render_contents", "translate_error"]

API_KEY_ENVS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
WHERE = "the Gemini API"
PROVIDER = "gemini"
"""The key of this adapter's entries in ``provider_details``."""

GENERATED_ID_PREFIX = "gemini-"
"""Ids we made up for calls the API gave none; they are never sent back."""

_FINISH: dict[str, FinishReason] = {"STOP": "stop", "MAX_TOKENS": "length"}


class GeminiModel(ProviderModel):
    """A Gemini model through the Gemini API (``generateContent``).

    Args:
        name: the model name, e.g. ``"gemini-2.5-flash"``.
        api_key: the API key (default: ``GEMINI_API_KEY``, then ``GOOGLE_API_KEY``).
        base_url: another endpoint (a proxy, or a loopback server in tests).
        max_tokens: output-token limit when the request's settings give none (None: the
            API's default).
        retry: how to retry 429, 5xx, connection errors and timeouts.
        timeout: seconds for one HTTP request.
        on_retry: called as ``on_retry(attempt, wait_seconds, error)`` before each retry.
        context_window: tokens the model attends to (default: known for Gemini models).
        max_response_chars: the cap on one response's text plus tool-call arguments (default:
            ``max_tokens * 32`` when a limit is set, else 1 MiB); past it the response ends
            with ``finish_reason="length"``.
    """

    provider = "gcp.gemini"
    key_env = API_KEY_ENVS

    def __init__(
        self,
        name: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int | None = None,
        retry: RetryPolicy = RetryPolicy(),  # noqa: B008 - frozen, so sharing is safe
        timeout: float = 60.0,
        on_retry: RetryListener | None = None,
        context_window: int | None = None,
        max_response_chars: int | None = None,
    ) -> None:
        require_extra("google.genai", "gemini", "GeminiModel")
        key = self._api_key(api_key)
        from google import genai
        from google.genai import types

        super().__init__(name, retry=retry, on_retry=on_retry,
                         context_window=context_window or gemini_context_window(name),
                         max_response_chars=max_response_chars)
        self.max_tokens = max_tokens
        self.accepts = frozenset((*IMAGE_TYPES, "application/pdf"))
        # retry_options=None means the SDK never retries: retrying is ours (with_retries);
        # the hook turns a 200 that is not the API's (a captive portal) into a clear error
        options = types.HttpOptions(
            base_url=base_url, timeout=int(timeout * 1000), retry_options=None,
            async_client_args={"event_hooks": {"response": [reply_check(WHERE)]}})
        self._client: Any = genai.Client(api_key=key, http_options=options)

    def _translate(self, exc: Exception) -> Exception:
        return translate_error(exc)

    def _args(self, request: ModelRequest) -> dict[str, Any]:
        return {"model": self.name, "contents": render_contents(request),
                "config": build_config(request, self.max_tokens)}

    async def request(self, request: ModelRequest) -> ModelResponse:
        kwargs = self._args(request)
        response = await self._call(lambda: self._client.aio.models.generate_content(**kwargs))
        return parse_response(_dump(response), len(request.messages), self.name,
                              self.budget(request, self.max_tokens))

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        kwargs = self._args(request)

        async def open_stream() -> tuple[AsyncIterator[Any], list[Any]]:
            # the SDK sends the request on the first iteration, not when the stream is opened:
            # the first chunk is part of opening, so an error status is retried like in request()
            chunks = aiter(await self._client.aio.models.generate_content_stream(**kwargs))
            try:
                return chunks, [await anext(chunks)]
            except StopAsyncIteration:
                return chunks, []

        # only opening the stream is retried: once text has been yielded, a retry would repeat it
        chunks, first = await self._call(open_stream)
        if not first:
            raise empty_stream(WHERE)
        merged = _Merged(self.budget(request, self.max_tokens))
        with translating(translate_error):
            for text in merged.add(_dump(first[0])):
                yield TextDelta(text)
            async for chunk in chunks:
                if merged.budget.exceeded:
                    break  # the cap: stop reading, the response ends as "length"
                for text in merged.add(_dump(chunk)):
                    yield TextDelta(text)
        end_of_stream(WHERE, received=True,  # an empty stream was refused above
                      finished=merged.finish_reason is not None, budget=merged.budget)
        yield parse_response(merged.result(), len(request.messages), self.name)

    def output_mode(self, *, tools: bool) -> OutputMode:
        # Gemini 1.x/2.x reject a JSON response schema next to function calling
        older = self.name.removeprefix("models/").startswith(("gemini-1", "gemini-2"))
        return "tool" if tools and older else "native"

    async def aclose(self) -> None:
        await self._client.aio.aclose()


def _dump(response: Any) -> dict[str, Any]:
    out: dict[str, Any] = response.model_dump(mode="json", exclude_none=True)
    return out


class _Merged:
    """Streamed chunks merged into one response of their own shape; answer text counts
    against ``budget`` and consecutive plain text parts are kept as one (joined once)."""

    def __init__(self, budget: ResponseBudget) -> None:
        self.budget = budget
        self.parts: list[dict[str, Any]] = []
        self.data: dict[str, Any] = {"candidates": [{"content": {"parts": self.parts}}]}
        self.finish_reason: str | None = None
        self._text: TextBuffer | None = None  # the plain text part being streamed

    def add(self, data: dict[str, Any]) -> list[str]:
        """Add one chunk; its answer text."""
        candidate = (data.get("candidates") or [{}])[0]
        texts: list[str] = []
        for part in (candidate.get("content") or {}).get("parts") or ():
            if part.get("text"):
                part["text"] = self.budget.take(part["text"])
            elif part.get("function_call"):
                self.budget.take(str(part["function_call"].get("args") or ""))
            if part.get("text") and not part.get("thought"):
                texts.append(part["text"])
            if set(part) == {"text"}:  # plain text: one growing part
                if self._text is None:
                    self._text = TextBuffer()
                    self.parts.append({"text": ""})
                self._text.append(part["text"])
                continue
            self._close()
            self.parts.append(part)
        if candidate.get("finish_reason"):
            self.finish_reason = self.data["candidates"][0]["finish_reason"] = (
                candidate["finish_reason"])
        for key in ("usage_metadata", "model_version"):
            if data.get(key):
                self.data[key] = data[key]
        return texts

    def _close(self) -> None:
        if self._text is not None:
            self.parts[-1]["text"] = self._text.value()
            self._text = None

    def result(self) -> dict[str, Any]:
        self._close()
        if self.budget.exceeded:
            self.data["candidates"][0]["finish_reason"] = "MAX_TOKENS"
            self.data[_CAPPED] = self.budget.limit
        return self.data


_CAPPED = "reactloop_capped"  # the stream was cut at this size cap


# -- errors ----------------------------------------------------------------------------------
def _transport_errors() -> tuple[type[BaseException], ...]:
    # the SDK talks through httpx or its fork httpx2, whichever is installed; only loaded
    # modules can have raised
    found = (getattr(sys.modules.get(name), "TransportError", None) for name in ("httpx",
                                                                                 "httpx2"))
    return tuple(cls for cls in found if isinstance(cls, type))


def translate_error(exc: Exception) -> Exception:
    """The SDK's errors as :class:`~reactloop.errors.ModelHTTPError` /
    :class:`~reactloop.errors.ModelError` (the adapter boundary); others pass through."""
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        headers = getattr(exc.response, "headers", None) or {}
        message = exc.message or exc.status or str(exc)
        return http_error(int(exc.code or 0), str(message), headers)
    if isinstance(exc, _transport_errors()):  # connection errors and timeouts
        return http_error(0, f"could not reach the Gemini API ({type(exc).__name__}): {exc}")
    if isinstance(exc, ValueError) and "response" in str(exc).lower():
        return model_error(f"the Gemini API answered something unreadable: {exc}")
    return exc


# -- request (pure) --------------------------------------------------------------------------
def _declaration(spec: ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description,
            "parameters_json_schema": dict(spec.parameters)}


def build_config(request: ModelRequest, max_tokens: int | None = None) -> dict[str, Any]:
    """The ``GenerateContentConfig`` (as a dict) for one request.

    We declare the run's full tool list every time and narrow the calling mode instead
    (``NONE``, or ``ANY`` with allowed names), so the request prefix stays the same on the
    forced last iteration.
    """
    config: dict[str, Any] = {"automatic_function_calling": {"disable": True}}
    if request.system:
        config["system_instruction"] = request.system
    all_tools, allowed = list(request.all_tools), list(request.tools)
    if all_tools:
        config["tools"] = [{"function_declarations": [_declaration(t) for t in all_tools]}]
        calling: dict[str, Any]
        if not allowed or request.settings.tool_choice == "none":
            calling = {"mode": "NONE"}
        elif len(allowed) < len(all_tools):
            calling = {"mode": "ANY", "allowed_function_names": [t.name for t in allowed]}
        elif request.settings.tool_choice == "required":
            calling = {"mode": "ANY"}
        else:
            calling = {"mode": "AUTO"}
        config["tool_config"] = {"function_calling_config": calling}
    tokens = request.settings.max_tokens or max_tokens
    if tokens:
        config["max_output_tokens"] = tokens
    if request.settings.temperature is not None:
        config["temperature"] = request.settings.temperature
    out = request.output_schema
    if out is not None and out.mode == "native":  # structured output: JSON of this schema
        config["response_mime_type"] = "application/json"
        config["response_json_schema"] = dict(out.schema)
    config.update(request.settings.extra)
    return config


def _details(provider_details: Mapping[str, Any] | None) -> Mapping[str, Any]:
    details = (provider_details or {}).get(PROVIDER)
    return details if isinstance(details, Mapping) else {}


def _signed(part: dict[str, Any], provider_details: Mapping[str, Any] | None) -> dict[str, Any]:
    """``part`` with the thought signature it came with, as bytes (the SDK's type)."""
    signature = _details(provider_details).get("thought_signature")
    # an undecodable one is not ours to repair: sending the turn without it beats failing here
    if isinstance(signature, str) and signature:
        with contextlib.suppress(binascii.Error, ValueError):
            part["thought_signature"] = base64.urlsafe_b64decode(signature)
    return part


def _model_parts(m: Message) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if m.content or _details(m.provider_details).get("thought_signature"):
        parts.append(_signed({"text": m.content}, m.provider_details))
    for call in m.tool_calls:
        fc: dict[str, Any] = {"name": call.name, "args": dict(call.arguments)}
        if call.id and not call.id.startswith(GENERATED_ID_PREFIX):
            fc["id"] = call.id
        parts.append(_signed({"function_call": fc}, call.provider_details))
    return parts


def _response_part(m: Message, names: dict[str, str]) -> dict[str, Any]:
    name = m.name or names.get(m.tool_call_id or "", "")
    fr: dict[str, Any] = {"name": name,
                          "response": {"error" if m.is_error else "result": m.content}}
    if m.tool_call_id and not m.tool_call_id.startswith(GENERATED_ID_PREFIX):
        fr["id"] = m.tool_call_id
    return {"function_response": fr}


def _part(a: Attachment) -> dict[str, Any]:
    """Bytes as ``inline_data``, a URL as ``file_data``."""
    if a.url is not None:
        data: dict[str, Any] = {"file_uri": a.url}
        if a.media_type:
            data["mime_type"] = a.media_type
        return {"file_data": data}
    return {"inline_data": {"mime_type": a.media_type, "data": a.bytes_or_error()}}


def render_contents(request: ModelRequest) -> list[dict[str, Any]]:
    """The ``contents`` list: alternating ``user``/``model`` turns, notes last."""
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}  # call id -> tool name, for results that lack a name

    def add(role: str, parts: list[dict[str, Any]]) -> None:
        if not parts:
            return
        if out and out[-1]["role"] == role:  # merge: one turn holds all results of a batch
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": parts})

    for m in request.messages:
        if m.role == "assistant":
            names.update({c.id: c.name for c in m.tool_calls if c.id})
            add("model", _model_parts(m))
        elif m.role == "tool":  # what a tool returned beside text follows its response
            add("user", [_response_part(m, names), *map(_part, m.attachments)])
        elif m.content or m.attachments:  # user, and system messages found in the history
            add("user", [*([{"text": m.content}] if m.content else []),
                         *map(_part, m.attachments)])
    if request.notes:
        add("user", [{"text": "\n\n".join(request.notes)}])
    return out


# -- response (pure) -------------------------------------------------------------------------
def _signature(part: Mapping[str, Any]) -> dict[str, Any] | None:
    """``{"gemini": {"thought_signature": <standard base64>}}`` for a signed part."""
    signature = part.get("thought_signature")
    if not isinstance(signature, str) or not signature:
        return None
    # the SDK dumps bytes as URL-safe base64; keep what the API itself sent
    with contextlib.suppress(binascii.Error, ValueError):
        signature = base64.b64encode(base64.urlsafe_b64decode(signature)).decode("ascii")
    return {PROVIDER: {"thought_signature": signature}}


def parse_response(data: dict[str, Any], turn: int = 0, model_name: str | None = None,
                   budget: ResponseBudget | None = None) -> ModelResponse:
    """A ``GenerateContentResponse`` (as the SDK's snake_case dict) as a
    :class:`ModelResponse`. ``turn`` (the history length) makes generated call ids unique.
    Text and arguments are cut at ``budget`` (then ``finish_reason`` is ``"length"`` and no
    call runs).

    Thought signatures (Gemini 2.5 and 3) are kept for the next turn, which must send them
    back in the same places: a function call's in ``ToolCall.provider_details["gemini"]``,
    one on a text or thought part in ``ModelResponse.provider_details["gemini"]`` (text parts
    are sent back as one part).
    """
    budget = budget or ResponseBudget(1 << 62)
    candidate = (data.get("candidates") or [{}])[0]
    texts: list[str] = []
    calls: list[ToolCall] = []
    details: dict[str, Any] | None = None
    for part in (candidate.get("content") or {}).get("parts") or ():
        if part.get("function_call"):
            calls.append(_call(part, f"{GENERATED_ID_PREFIX}{turn}-{len(calls)}", budget))
            continue
        details = _signature(part) or details
        if part.get("text") and not part.get("thought"):
            texts.append(budget.take(part["text"]))
    usage = data.get("usage_metadata") or {}
    finish = _FINISH.get(candidate.get("finish_reason") or "STOP", "stop")
    capped = budget.limit if budget.exceeded else data.get(_CAPPED)
    if capped:
        finish = "length"
        calls = [invalid_call(c.name, c.id, cap_problem(capped), c.provider_details)
                 for c in calls]
    elif calls and finish == "stop":
        finish = "tool_calls"
    return ModelResponse(
        "".join(texts) or None,
        calls,
        Usage(usage.get("prompt_token_count") or 0, usage.get("candidates_token_count") or 0,
              usage.get("cached_content_token_count") or 0),
        finish,
        data.get("model_version") or model_name,
        details,
    )


def _call(part: Mapping[str, Any], generated_id: str, budget: ResponseBudget) -> ToolCall:
    """A ``function_call`` part as a call; marked never to run when its args are unusable."""
    fc = part["function_call"]
    name, call_id, args = fc.get("name") or "", fc.get("id") or generated_id, fc.get("args")
    if args is not None and not isinstance(args, dict):
        return invalid_call(name, call_id, "the arguments must be a JSON object, got "
                            f"{type(args).__name__}", _signature(part))
    budget.take(str(args) if args else "")
    return ToolCall(name, args or {}, call_id, _signature(part))
