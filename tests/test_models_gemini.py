"""The Gemini adapter against recorded ``generateContent`` payloads served on loopback.

The real ``google-genai`` SDK (pointed at 127.0.0.1 through ``http_options.base_url``) sends
real HTTP and parses the recorded bytes; the server captures what was sent.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest

pytest.importorskip("google.genai")

from _adapter_tests import ADD, DONE, add, ask, collect, fails_fast, maker, req, retry_waits
from _adapter_tests import server as server  # the fixture
from _recorded_server import PAYLOADS as ALL_PAYLOADS
from _recorded_server import RecordedServer, Reply, payload
from reactloop import Agent
from reactloop.errors import UserError
from reactloop.messages import (
    Message,
    ModelResponse,
    ModelSettings,
    TextDelta,
    ToolCall,
    messages_from_json,
    messages_to_json,
)
from reactloop.models.gemini import GeminiModel

PAYLOADS = ALL_PAYLOADS / "gemini"
make = maker(GeminiModel, "gemini-2.5-flash", "gk-test")


def g(name: str, status: int = 200, **headers: str) -> Reply:
    return payload("gemini", name, status, **headers)


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
    items = collect(make(server), req(tools=(ADD,)))
    assert [i.text for i in items if isinstance(i, TextDelta)] == ["Let me", " look both up."]
    final = items[-1]
    assert isinstance(final, ModelResponse)
    assert final.text == "Let me look both up."
    assert [c.name for c in final.tool_calls] == ["get_weather", "get_time"]
    assert final.usage is not None and final.usage.output_tokens == 40
    assert "streamGenerateContent" in server.requests[0].path
    assert "alt=sse" in server.requests[0].path


def test_retries_429_then_500_then_success(server: RecordedServer) -> None:
    response, waits = retry_waits(server, make, g("error_429.json", 429, retry_after="0.05"),
                                  g("error_500.json", 500), g("text.json"))
    assert response.text == "Hello! How can I help you today?"
    assert waits == [(1, 0.05, 429), (2, 0.02, 500)]


@pytest.mark.parametrize(("name", "status", "start"), [
    ("error_400.json", 400, "* GenerateContentRequest.contents"),
    ("error_401.json", 401, "Request had invalid authentication credentials."),
])
def test_client_errors_fail_fast(server: RecordedServer, name: str, status: int,
                                 start: str) -> None:
    assert fails_fast(server, make, g(name, status)).message.startswith(start)


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


# -- thought signatures (Gemini 2.5 / 3): kept with the message, sent back on the next turn ---
def _recorded_signature(name: str, part: int = 0) -> str:
    data = json.loads((PAYLOADS / name).read_text())
    signature: str = data["candidates"][0]["content"]["parts"][part]["thoughtSignature"]
    return signature


def _same_bytes(sent: Any, recorded: str) -> bool:
    # the SDK sends bytes as URL-safe base64, the API answers in standard base64; proto3 JSON
    # parsing accepts both, so what matters is that the bytes are the same
    return isinstance(sent, str) and base64.urlsafe_b64decode(sent) == base64.b64decode(recorded)


def _model_turns(server: RecordedServer, index: int) -> list[dict[str, Any]]:
    return [c for c in server.requests[index].body["contents"] if c["role"] == "model"]


def test_call_signature_round_trips_through_a_run_and_stored_history(
        server: RecordedServer) -> None:
    signature = _recorded_signature("thought_signature_call.json")
    server.queue(g("thought_signature_call.json"), g("thought_signature_text.json"),
                 g("text.json"))
    model = make(server)
    result = Agent(model=model, tools=[add]).run_sync("What is 2+3?")
    assert result.output == "2 + 3 = 5"
    (call,) = [c for m in result.messages for c in m.tool_calls]
    assert call.provider_details == {"gemini": {"thought_signature": signature}}
    # the next request of the same run sends the signature back on the function-call part
    (turn,) = _model_turns(server, 1)
    (part,) = turn["parts"]
    assert part["functionCall"] == {"name": "add", "args": {"a": 2, "b": 3}}
    assert _same_bytes(part["thoughtSignature"], signature)
    # stored as JSON and loaded again (a session in another process), it is sent back again
    history = messages_from_json(messages_to_json(result.messages))
    assert history == list(result.messages)
    ask(make(server), req(*history, Message.user("And 3+4?"), tools=(ADD,)))
    assert _same_bytes(_model_turns(server, 2)[0]["parts"][0]["thoughtSignature"], signature)


def test_text_signature_is_kept_on_the_response_and_sent_back(server: RecordedServer) -> None:
    signature = _recorded_signature("thought_signature_text.json")
    server.queue(g("thought_signature_text.json"), g("text.json"))
    response = ask(make(server), req())
    assert response.text == "2 + 3 = 5"
    assert response.provider_details == {"gemini": {"thought_signature": signature}}
    # the loop stores it on the assistant message (Message.assistant(..., provider_details=))
    stored = Message.assistant(response.text, response.tool_calls,
                               provider_details=response.provider_details)
    (loaded,) = messages_from_json(messages_to_json([stored]))
    ask(make(server), req(Message.user("Hi"), loaded, Message.user("Thanks")))
    (turn,) = _model_turns(server, 1)
    (part,) = turn["parts"]
    assert part["text"] == "2 + 3 = 5" and _same_bytes(part["thoughtSignature"], signature)


def test_parallel_calls_only_the_first_is_signed(server: RecordedServer) -> None:
    signature = _recorded_signature("thought_signature_parallel.json")
    server.queue(g("thought_signature_parallel.json"), g("text.json"))
    response = ask(make(server), req(tools=(ADD,)))
    first, second = response.tool_calls
    assert first.provider_details == {"gemini": {"thought_signature": signature}}
    assert second.provider_details is None and response.provider_details is None
    history = (Message.user("Hi"), Message.assistant(None, response.tool_calls),
               Message.tool(first.id or "", "get_weather", "sunny"),
               Message.tool(second.id or "", "get_time", "noon"))
    ask(make(server), req(*history, tools=(ADD,)))
    first_part, second_part = _model_turns(server, 1)[0]["parts"]
    assert _same_bytes(first_part.get("thoughtSignature"), signature)
    assert "thoughtSignature" not in second_part


def test_streamed_signature_in_a_trailing_empty_part(server: RecordedServer) -> None:
    signature = _recorded_signature("thought_signature_text.json")
    server.queue(g("thought_signature_stream.sse"))
    model = make(server)

    async def go() -> list[TextDelta | ModelResponse]:
        try:
            return [item async for item in model.stream(req())]
        finally:
            await model.aclose()

    items = asyncio.run(go())
    assert [i.text for i in items if isinstance(i, TextDelta)] == ["2 + 3", " = 5"]
    final = items[-1]
    assert isinstance(final, ModelResponse) and final.text == "2 + 3 = 5"
    assert final.provider_details == {"gemini": {"thought_signature": signature}}


def test_messages_without_details_send_no_signature(server: RecordedServer) -> None:
    server.queue(g("text.json"))
    history = (Message.user("Hi"), Message.assistant("Hello"), Message.user("Bye"))
    ask(make(server), req(*history))
    assert _model_turns(server, 0) == [{"role": "model", "parts": [{"text": "Hello"}]}]


def test_context_window_is_known_for_gemini_models() -> None:
    assert GeminiModel("gemini-2.5-flash", api_key="gk-test").context_window == 1_048_576
    assert GeminiModel("gemini-1.5-pro-002", api_key="gk-test").context_window == 2_097_152
    assert GeminiModel("tuned-model", api_key="gk-test").context_window is None
    assert GeminiModel("gemini-2.5-pro", api_key="gk-test",
                       context_window=50_000).context_window == 50_000


def test_stream_open_is_retried(server: RecordedServer) -> None:
    # the SDK sends the request on the first iteration: an error status there is still retried
    server.queue(g("error_429.json", 429, retry_after="0"), g("stream_tool_calls.sse"))
    waits: list[float] = []
    model = make(server, on_retry=lambda n, w, e: waits.append(w))

    async def go() -> list[TextDelta | ModelResponse]:
        try:
            return [item async for item in model.stream(req(tools=(ADD,)))]
        finally:
            await model.aclose()

    items = asyncio.run(go())
    assert waits == [0.0] and len(server.requests) == 2
    assert [i.text for i in items if isinstance(i, TextDelta)] == ["Let me", " look both up."]
    final = items[-1]
    assert isinstance(final, ModelResponse) and len(final.tool_calls) == 2
