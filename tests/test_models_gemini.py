"""The Gemini adapter against recorded ``generateContent`` payloads served on loopback.

The real ``google-genai`` SDK (pointed at 127.0.0.1 through ``http_options.base_url``) sends
real HTTP and parses the recorded bytes; the server captures what was sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("google.genai")

from _recorded_server import RecordedServer, Reply, payload, recorded_server
from reactloop import Agent, tool
from reactloop.errors import ModelHTTPError, UserError
from reactloop.messages import Message, ToolCall
from reactloop.models._base import (
    ModelRequest,
    ModelResponse,
    ModelSettings,
    TextDelta,
    ToolSpec,
)
from reactloop.models._retry import RetryPolicy
from reactloop.models.gemini import GeminiModel

ADD = ToolSpec("add", "Add two numbers.", {"type": "object", "properties": {
    "a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]})
DONE = ToolSpec("task_completion", "Finish.", {"type": "object", "properties": {}})


def g(name: str, status: int = 200, **headers: str) -> Reply:
    return payload("gemini", name, status, **headers)


@pytest.fixture
def server() -> Iterator[RecordedServer]:
    with recorded_server() as s:
        yield s


def make(server: RecordedServer, **kw: Any) -> GeminiModel:
    kw.setdefault("retry", RetryPolicy(base_delay=0.01, jitter=0))
    return GeminiModel("gemini-2.5-flash", api_key="gk-test", base_url=server.url, **kw)


def ask(model: GeminiModel, request: ModelRequest) -> ModelResponse:
    async def go() -> ModelResponse:
        try:
            return await model.request(request)
        finally:
            await model.aclose()

    return asyncio.run(go())


def req(*messages: Message, **kw: Any) -> ModelRequest:
    return ModelRequest("You are terse.", messages or (Message.user("Hi"),), **kw)


def test_text_reply_and_request_shape(server: RecordedServer) -> None:
    server.queue(g("text.json"))
    response = ask(make(server), req())
    assert response.text == "Hello! How can I help you today?"
    assert response.finish_reason == "stop" and response.tool_calls == ()
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (8, 9)
    sent = server.requests[0]
    assert sent.path.endswith("/models/gemini-2.5-flash:generateContent")
    assert sent.headers["x-goog-api-key"] == "gk-test"
    assert sent.body["contents"] == [{"role": "user", "parts": [{"text": "Hi"}]}]
    assert sent.body["systemInstruction"]["parts"] == [{"text": "You are terse."}]
    assert "tools" not in sent.body


def test_one_tool_call_gets_a_stable_id(server: RecordedServer) -> None:
    server.queue(g("tool_call.json"), g("tool_call.json"))
    first = ask(make(server), req(tools=(ADD,)))
    again = ask(make(server), req(tools=(ADD,)))
    assert first.tool_calls == (ToolCall("add", {"a": 2, "b": 3}, "gemini-1-0"),)
    assert again.tool_calls == first.tool_calls
    assert first.finish_reason == "tool_calls"
    body = server.requests[0].body
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "add" and declaration["description"] == "Add two numbers."
    schema = declaration.get("parametersJsonSchema", declaration.get("parameters_json_schema"))
    assert schema == dict(ADD.parameters)
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}


def test_several_tool_calls_in_one_turn(server: RecordedServer) -> None:
    server.queue(g("tool_calls_parallel.json"))
    response = ask(make(server), req(tools=(ADD,)))
    assert response.text == "Let me look both up."
    assert [(c.name, c.id) for c in response.tool_calls] == [
        ("get_weather", "gemini-1-0"), ("get_time", "gemini-1-1")]


def test_max_tokens_is_length(server: RecordedServer) -> None:
    server.queue(g("max_tokens.json"))
    response = ask(make(server), req(settings=ModelSettings(max_tokens=10)))
    assert response.finish_reason == "length"
    assert server.requests[0].body["generationConfig"]["maxOutputTokens"] == 10


def test_function_responses_merged_and_notes_last(server: RecordedServer) -> None:
    server.queue(g("final_answer.json"))
    history = (
        Message.user("weather and time?"),
        Message.assistant(None, [ToolCall("get_weather", {"location": "SF"}, "gemini-1-0"),
                                 ToolCall("get_time", {}, "api-id-7")]),
        Message.tool("gemini-1-0", "get_weather", "sunny"),
        Message.tool("api-id-7", "get_time", "boom", is_error=True),
    )
    ask(make(server), req(*history, tools=(ADD,), notes=("2 iterations left.",)))
    contents = server.requests[0].body["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[1]["parts"] == [
        {"functionCall": {"name": "get_weather", "args": {"location": "SF"}}},
        {"functionCall": {"name": "get_time", "args": {}, "id": "api-id-7"}},
    ]
    assert contents[2]["parts"] == [
        {"functionResponse": {"name": "get_weather", "response": {"result": "sunny"}}},
        {"functionResponse": {"name": "get_time", "response": {"error": "boom"},
                              "id": "api-id-7"}},
        {"text": "2 iterations left."},
    ]


def test_forced_last_iteration_keeps_declarations_and_mode_none(server: RecordedServer) -> None:
    server.queue(g("final_answer.json"), g("final_answer.json"))
    ask(make(server), req(tools=(), declared_tools=(ADD,)))
    body = server.requests[0].body
    assert [d["name"] for d in body["tools"][0]["functionDeclarations"]] == ["add"]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "NONE"}}
    ask(make(server), req(tools=(DONE,), declared_tools=(ADD, DONE)))
    assert server.requests[1].body["toolConfig"] == {"functionCallingConfig": {
        "mode": "ANY", "allowedFunctionNames": ["task_completion"]}}


def test_stream(server: RecordedServer) -> None:
    server.queue(g("stream_tool_calls.sse"))
    model = make(server)

    async def go() -> list[TextDelta | ModelResponse]:
        try:
            return [item async for item in model.stream(req(tools=(ADD,)))]
        finally:
            await model.aclose()

    items = asyncio.run(go())
    assert [i.text for i in items if isinstance(i, TextDelta)] == ["Let me", " look both up."]
    final = items[-1]
    assert isinstance(final, ModelResponse)
    assert final.text == "Let me look both up."
    assert [c.name for c in final.tool_calls] == ["get_weather", "get_time"]
    assert final.usage is not None and final.usage.output_tokens == 40
    assert "streamGenerateContent" in server.requests[0].path
    assert "alt=sse" in server.requests[0].path


def test_retries_429_then_500_then_success(server: RecordedServer) -> None:
    server.queue(g("error_429.json", 429, retry_after="0.05"), g("error_500.json", 500),
                 g("text.json"))
    waits: list[tuple[int, float, int]] = []
    model = make(server, on_retry=lambda n, w, e: waits.append(
        (n, w, getattr(e, "status_code", -1))))
    assert ask(model, req()).text == "Hello! How can I help you today?"
    assert waits == [(1, 0.05, 429), (2, 0.02, 500)]


@pytest.mark.parametrize(("name", "status", "start"), [
    ("error_400.json", 400, "* GenerateContentRequest.contents"),
    ("error_401.json", 401, "Request had invalid authentication credentials."),
])
def test_client_errors_fail_fast(server: RecordedServer, name: str, status: int,
                                 start: str) -> None:
    server.queue(g(name, status))
    waits: list[float] = []
    with pytest.raises(ModelHTTPError) as info:
        ask(make(server, on_retry=lambda n, w, e: waits.append(w)), req())
    assert info.value.status_code == status and info.value.retryable is False
    assert info.value.message.startswith(start)
    assert waits == [] and len(server.requests) == 1


def test_missing_key_names_both_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(UserError, match=r"GEMINI_API_KEY.*GOOGLE_API_KEY"):
        GeminiModel("gemini-2.5-flash")


def test_key_from_google_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from reactloop.models._resolve import resolve_model

    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "gk-env")
    model = resolve_model("gemini:gemini-2.5-flash")
    assert isinstance(model, GeminiModel) and model.name == "gemini-2.5-flash"


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_agent_run_end_to_end(server: RecordedServer) -> None:
    server.queue(g("tool_call.json"), g("final_answer.json"))
    result = Agent(model=make(server), tools=[add]).run_sync("What is 2+3?")
    assert result.output == "2 + 3 = 5"
    assert result.metrics.tool_calls == 1
    assert result.metrics.input_tokens == 62 + 95
    contents = server.requests[1].body["contents"]
    assert contents[-1]["role"] == "user"
    assert contents[-1]["parts"][0] == {
        "functionResponse": {"name": "add", "response": {"result": "5"}}}
