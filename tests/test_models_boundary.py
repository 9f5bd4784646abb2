"""The model boundary under a misbehaving server (issue 31), for every provider adapter.

The real SDKs talk HTTP to a loopback server that answers what broken servers, proxies and
captive portals answer: streams cut off before their finish reason, empty streams, tool-call
arguments that are not JSON, responses far past ``max_tokens``, and 200 pages of HTML.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from _adapter_tests import ask, collect
from _adapter_tests import server as server  # the fixture
from _recorded_server import RecordedServer, Reply
from reactloop import Agent, RunResult, RunState, tool
from reactloop._arguments import arguments_problem, parse_arguments
from reactloop.errors import ModelError, ModelHTTPError
from reactloop.events import RunEndEvent
from reactloop.messages import Message
from reactloop.models import Model, ModelRequest, ModelResponse, ModelSettings, TextDelta, ToolSpec
from reactloop.models._retry import RetryPolicy

DELETE = ToolSpec("delete_path", "Delete a path.", {
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
GARBAGE = '{"path": }}}garbage[['
HTML = b"<html><head><title>Hotel WiFi</title></head><body>Please log in</body></html>"
NO_RETRY = RetryPolicy(max_retries=0)


def _openai(server: RecordedServer, **kw: Any) -> Model:
    pytest.importorskip("openai")
    from reactloop.models.openai import OpenAIModel

    return OpenAIModel("gpt-4o-mini", base_url=f"{server.url}/v1", api_key="sk-test",
                       retry=NO_RETRY, **kw)


def _anthropic(server: RecordedServer, **kw: Any) -> Model:
    pytest.importorskip("anthropic")
    from reactloop.models.anthropic import AnthropicModel

    return AnthropicModel("claude-haiku-4-5", base_url=server.url, api_key="sk-test",
                          retry=NO_RETRY, **kw)


def _gemini(server: RecordedServer, **kw: Any) -> Model:
    pytest.importorskip("google.genai")
    from reactloop.models.gemini import GeminiModel

    return GeminiModel("gemini-2.5-flash", base_url=server.url, api_key="gk-test",
                       retry=NO_RETRY, **kw)


# -- the wire: each provider's stream of text pieces and of one tool call ---------------------
def _sse(events: list[Any], names: list[str] | None = None) -> Reply:
    lines = []
    for i, event in enumerate(events):
        head = f"event: {names[i]}\n" if names else ""
        lines.append(f"{head}data: {event if isinstance(event, str) else json.dumps(event)}\n\n")
    return Reply(200, "".join(lines).encode(), "text/event-stream")


def openai_stream(texts: list[str], args: Sequence[str] = (),
                  finish: str | None = "stop") -> Reply:
    chunks: list[Any] = [{"choices": [{"index": 0, "delta": {"content": t}}]} for t in texts]
    if args:
        chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [{
            "index": 0, "id": "call_1", "type": "function",
            "function": {"name": "delete_path", "arguments": ""}}]}}]})
        chunks += [{"choices": [{"index": 0, "delta": {"tool_calls": [{
            "index": 0, "function": {"arguments": a}}]}}]} for a in args]
    if finish is not None:
        chunks += [{"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}, "[DONE]"]
    return _sse(chunks)


def anthropic_stream(texts: list[str], args: Sequence[str] = (),
                     finish: str | None = "end_turn") -> Reply:
    events: list[tuple[str, Any]] = [("message_start", {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
        "content": [], "usage": {"input_tokens": 5, "output_tokens": 1}}})]
    events.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": {"type": "text", "text": ""}}))
    events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "text_delta", "text": t}})
               for t in texts]
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    if args:
        events.append(("content_block_start", {"type": "content_block_start", "index": 1,
                                               "content_block": {"type": "tool_use",
                                                                 "id": "toolu_1",
                                                                 "name": "delete_path",
                                                                 "input": {}}}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {
            "type": "input_json_delta", "partial_json": a}}) for a in args]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": 1}))
    if finish is not None:
        events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": finish},
                                      "usage": {"output_tokens": 9}}),
                   ("message_stop", {"type": "message_stop"})]
    return _sse([e for _, e in events], [n for n, _ in events])


def gemini_stream(texts: list[str], args: Sequence[str] = (),
                  finish: str | None = "STOP") -> Reply:
    chunks: list[Any] = [{"candidates": [{"content": {"role": "model", "parts": [{"text": t}]}}]}
                         for t in texts]
    if args:  # Gemini sends arguments as objects, never as text
        chunks.append({"candidates": [{"content": {"role": "model", "parts": [{
            "functionCall": {"name": "delete_path", "args": {"path": "".join(args)}}}]}}]})
    if finish is not None:
        chunks.append({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]},
                                       "finishReason": finish}],
                       "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 9}})
    return _sse(chunks)


ADAPTERS: dict[str, tuple[Callable[..., Model], Callable[..., Reply]]] = {
    "openai": (_openai, openai_stream),
    "anthropic": (_anthropic, anthropic_stream),
    "gemini": (_gemini, gemini_stream),
}


def _streamed(agent: Agent[Any]) -> RunResult[Any]:
    async def go() -> RunResult[Any]:
        result = None
        async for event in agent.stream("Clean up."):
            if isinstance(event, RunEndEvent):
                result = event.result
        assert result is not None
        return result

    return asyncio.run(go())


def _request(max_tokens: int | None = None) -> ModelRequest:
    return ModelRequest("Be brief.", (Message.user("Clean up the old build."),), (DELETE,),
                        settings=ModelSettings(max_tokens=max_tokens))


# -- a stream cut off before its finish reason -------------------------------------------------
@pytest.mark.parametrize("provider", list(ADAPTERS))
def test_a_cut_off_stream_is_a_retryable_error_not_an_answer(server: RecordedServer,
                                                             provider: str) -> None:
    make, stream = ADAPTERS[provider]
    server.queue(stream(["The cleanup is ", "COMPLE"], finish=None))
    with pytest.raises(ModelHTTPError) as caught:
        collect(make(server), _request())
    assert caught.value.retryable and "ended before the model finished" in str(caught.value)


@pytest.mark.parametrize("provider", list(ADAPTERS))
def test_tool_calls_of_a_cut_off_stream_never_run(server: RecordedServer, provider: str) -> None:
    make, stream = ADAPTERS[provider]
    ran: list[str] = []

    @tool
    def delete_path(path: str) -> str:
        """Delete a path."""
        ran.append(path)
        return "deleted"

    server.queue(stream(["Deleting."], args=['{"path": "/data/bu', 'ild/old'], finish=None))
    result = _streamed(Agent(model=make(server), tools=[delete_path]))
    assert ran == []  # not "/data/build/old", the truncated value
    assert result.state is RunState.ERROR and isinstance(result.error, ModelHTTPError)
    assert result.output != "Deleting."


@pytest.mark.parametrize("provider", list(ADAPTERS))
def test_an_empty_stream_is_an_error_not_an_empty_answer(server: RecordedServer,
                                                         provider: str) -> None:
    make, _ = ADAPTERS[provider]
    server.queue(Reply(200, b"", "text/event-stream"))
    with pytest.raises(ModelHTTPError, match="without sending anything"):
        collect(make(server), _request())


# -- arguments that are not JSON ---------------------------------------------------------------
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_garbage_arguments_go_back_as_an_error_and_the_tool_never_runs(
        server: RecordedServer, provider: str) -> None:
    make, stream = ADAPTERS[provider]
    ran: list[str] = []

    @tool
    def delete_path(path: str) -> str:
        """Delete a path."""
        ran.append(path)
        return "deleted"

    server.queue(stream([], args=[GARBAGE], finish="tool_calls" if provider == "openai"
                        else "tool_use"), stream(["Sorry, I will not delete anything."]))
    result = _streamed(Agent(model=make(server), tools=[delete_path]))
    assert ran == []  # never path=""
    assert result.output == "Sorry, I will not delete anything."
    (error,) = [r for s in result.steps for r in s.results]
    assert error.error is not None and "did not run" in error.error and "garbage" in error.error
    sent = json.dumps(server.requests[1].body)
    assert "Invalid arguments for delete_path" in sent


def test_garbage_arguments_of_an_approval_gated_tool_ask_nobody(server: RecordedServer) -> None:
    ran: list[str] = []

    @tool(requires_approval=True)
    def delete_path(path: str) -> str:
        """Delete a path."""
        ran.append(path)
        return "deleted"

    server.queue(openai_stream([], args=[GARBAGE], finish="tool_calls"),
                 openai_stream(["Nothing deleted."]))
    result = _streamed(Agent(model=_openai(server), tools=[delete_path]))
    assert result.state is RunState.COMPLETED and result.output == "Nothing deleted."
    assert ran == []


@pytest.mark.parametrize(("provider", "finish"), [("openai", "length"),
                                                   ("anthropic", "max_tokens")])
def test_arguments_cut_by_max_tokens_are_not_closed_but_refused(
        server: RecordedServer, provider: str, finish: str) -> None:
    make, stream = ADAPTERS[provider]
    server.queue(stream([], args=['{"path": "/data/build/old'], finish=finish))
    final = collect(make(server), _request())[-1]
    assert isinstance(final, ModelResponse) and final.finish_reason == "length"
    (call,) = final.tool_calls
    assert call.arguments == {} and "not closed" in (arguments_problem(call) or "")


def test_garbage_arguments_in_a_whole_reply_never_run(server: RecordedServer) -> None:
    body = {"id": "c", "object": "chat.completion", "model": "gpt-4o-mini", "choices": [{
        "index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "delete_path", "arguments": GARBAGE}}]}}]}
    server.queue(Reply(200, json.dumps(body).encode()))
    (call,) = ask(_openai(server), _request()).tool_calls
    assert call.arguments == {} and "garbage" in (arguments_problem(call) or "")


@pytest.mark.parametrize(("raw", "expected"), [
    ("{'path': 'a', 'force': True,}", {"path": "a", "force": True}),  # quotes, Python, comma
    ('{path: "a"}', {"path": "a"}),  # a bare key
    ('{"path": "a", "tags": ["x", "y"', {"path": "a", "tags": ["x", "y"]}),  # closers, complete
    ('"{\\"path\\": \\"a\\"}"', {"path": "a"}),  # JSON inside a JSON string
])
def test_repair_fixes_only_syntax(raw: str, expected: dict[str, Any]) -> None:
    assert parse_arguments(raw) == expected


@pytest.mark.parametrize("raw", [
    GARBAGE, '{"path": }', '{"path": "a"}}', "rm -rf /", '{"path": "/data/bu',
    '{"path": "a", "n": 1', "[1, 2]",
])
def test_repair_never_invents_drops_or_truncates(raw: str) -> None:
    problem = parse_arguments(raw, complete=not raw.endswith("1"))
    assert isinstance(problem, str)


# -- the size cap on one response --------------------------------------------------------------
@pytest.mark.parametrize("provider", list(ADAPTERS))
def test_a_response_past_the_cap_ends_as_length(server: RecordedServer, provider: str) -> None:
    make, stream = ADAPTERS[provider]
    server.queue(stream(["x" * 400] * 10))
    items = collect(make(server, max_response_chars=1000), _request())
    final = items[-1]
    assert isinstance(final, ModelResponse) and final.finish_reason == "length"
    assert final.text == "x" * 1000
    assert "".join(i.text for i in items if isinstance(i, TextDelta)) == "x" * 1000


@pytest.mark.parametrize("provider", list(ADAPTERS))
def test_the_cap_follows_max_tokens(server: RecordedServer, provider: str) -> None:
    make, stream = ADAPTERS[provider]
    server.queue(stream(["y" * 100] * 10))
    final = collect(make(server), _request(max_tokens=10))[-1]
    assert isinstance(final, ModelResponse) and final.text == "y" * 320  # 32 characters a token
    assert final.finish_reason == "length"


@pytest.mark.parametrize("provider", ["openai", "gemini"])  # Anthropic always sets max_tokens
def test_the_default_cap_without_max_tokens_is_one_mebibyte(server: RecordedServer,
                                                           provider: str) -> None:
    make, stream = ADAPTERS[provider]
    server.queue(stream(["z" * (1 << 16)] * 18))  # 1.125 MiB
    final = collect(make(server), _request())[-1]
    assert isinstance(final, ModelResponse) and final.finish_reason == "length"
    assert final.text is not None and len(final.text) == 1 << 20


@pytest.mark.parametrize("provider", list(ADAPTERS))
def test_tool_calls_of_a_capped_response_never_run(server: RecordedServer, provider: str) -> None:
    make, stream = ADAPTERS[provider]
    server.queue(stream(["w" * 50], args=['{"path": "/data/build/old_cache"}']))
    final = collect(make(server, max_response_chars=60), _request())[-1]
    assert isinstance(final, ModelResponse) and final.finish_reason == "length"
    (call,) = final.tool_calls
    assert "size cap (60 characters)" in (arguments_problem(call) or "")


def test_the_cap_applies_to_a_whole_reply_too(server: RecordedServer) -> None:
    body = {"id": "c", "object": "chat.completion", "model": "gpt-4o-mini", "choices": [{
        "index": 0, "finish_reason": "stop", "message": {"role": "assistant",
                                                         "content": "v" * 5000}}]}
    server.queue(Reply(200, json.dumps(body).encode()))
    response = ask(_openai(server, max_response_chars=100), _request())
    assert response.text == "v" * 100 and response.finish_reason == "length"


# -- a 200 that is not the API -----------------------------------------------------------------
@pytest.mark.parametrize("provider", list(ADAPTERS))
@pytest.mark.parametrize("streaming", [False, True])
def test_a_captive_portal_page_is_a_clear_model_error(server: RecordedServer, provider: str,
                                                      streaming: bool) -> None:
    make, _ = ADAPTERS[provider]
    server.queue(Reply(200, HTML, "text/html; charset=utf-8"))
    model = make(server)
    with pytest.raises(ModelError) as caught:
        if streaming:
            collect(model, _request())
        else:
            ask(model, _request())
    message = str(caught.value)
    assert f"127.0.0.1:{server.port}" in message  # the URL
    assert "text/html" in message and "Hotel WiFi" in message  # the type and the first bytes
    assert not isinstance(caught.value, ModelHTTPError) or not caught.value.retryable
