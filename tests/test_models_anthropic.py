"""The Anthropic adapter against recorded Messages API payloads served on loopback.

The real ``anthropic`` SDK sends real HTTP to a stdlib server on 127.0.0.1 and parses the
recorded bytes; the server captures the request bodies so we can assert what was sent.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("anthropic")

from _adapter_tests import ADD, DONE, add, ask, collect, fails_fast, maker, req, retry_waits
from _adapter_tests import server as server  # the fixture
from _recorded_server import PAYLOADS as ALL_PAYLOADS
from _recorded_server import RecordedServer, payload
from reactloop import Agent
from reactloop.errors import ModelHTTPError, UserError
from reactloop.messages import (
    Message,
    ModelResponse,
    ModelSettings,
    TextDelta,
    ToolCall,
    messages_from_json,
    messages_to_json,
)
from reactloop.models._retry import RetryPolicy
from reactloop.models.anthropic import AnthropicModel

PAYLOADS = ALL_PAYLOADS / "anthropic"
make = maker(AnthropicModel, "claude-haiku-4-5", "sk-test")


def a(name: str, status: int = 200, **headers: str) -> Any:
    return payload("anthropic", name, status, **headers)


# -- parsing ---------------------------------------------------------------------------------
def test_text_reply_and_request_shape(server: RecordedServer) -> None:
    server.queue(a("text.json"))
    response = ask(make(server), req())
    assert response.text == "Hello! How can I help you today?"
    assert response.tool_calls == () and response.finish_reason == "stop"
    assert response.usage is not None and response.usage.input_tokens == 12
    assert response.usage.output_tokens == 11
    sent = server.requests[0]
    assert sent.path == "/v1/messages"
    assert "sk-test" in (sent.headers.get("x-api-key"), sent.headers.get("authorization", "")[7:])
    assert sent.body["system"] == "You are terse."
    assert sent.body["model"] == "claude-haiku-4-5" and sent.body["max_tokens"] == 4096
    assert sent.body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
    assert "tools" not in sent.body and "tool_choice" not in sent.body


def test_one_tool_call(server: RecordedServer) -> None:
    server.queue(a("tool_call.json"))
    response = ask(make(server), req(tools=(ADD,)))
    assert response.text == "I'll add those numbers for you."
    assert response.tool_calls == (ToolCall("add", {"a": 2, "b": 3}, "toolu_01A09q90qw90lq917835lq9"),)
    assert response.finish_reason == "tool_calls"
    body = server.requests[0].body
    assert body["tools"] == [{"name": "add", "description": "Add two numbers.",
                              "input_schema": dict(ADD.parameters)}]
    assert body["tool_choice"] == {"type": "auto"}


def test_several_tool_calls_in_one_turn(server: RecordedServer) -> None:
    server.queue(a("tool_calls_parallel.json"))
    response = ask(make(server), req(tools=(ADD,)))
    assert [c.name for c in response.tool_calls] == ["get_weather", "get_time"]
    assert response.tool_calls[1].arguments == {"timezone": "America/Los_Angeles"}
    assert response.text is None


def test_max_tokens_is_length(server: RecordedServer) -> None:
    server.queue(a("max_tokens.json"))
    response = ask(make(server), req(settings=ModelSettings(max_tokens=10)))
    assert response.finish_reason == "length"
    assert server.requests[0].body["max_tokens"] == 10


# -- request body ----------------------------------------------------------------------------
def test_tool_results_merged_and_notes_last(server: RecordedServer) -> None:
    server.queue(a("final_answer.json"))
    history = (
        Message.user("weather and time?"),
        Message.assistant("Checking.", [ToolCall("get_weather", {"location": "SF"}, "t1"),
                                        ToolCall("get_time", {}, "t2")]),
        Message.tool("t1", "get_weather", "sunny"),
        Message.tool("t2", "get_time", "boom", is_error=True),
    )
    ask(make(server), req(*history, tools=(ADD,), notes=("2 iterations left.", "plan: x")))
    messages = server.requests[0].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"location": "SF"}},
        {"type": "tool_use", "id": "t2", "name": "get_time", "input": {}},
    ]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "sunny"},
        {"type": "tool_result", "tool_use_id": "t2", "content": "boom", "is_error": True},
        {"type": "text", "text": "2 iterations left.\n\nplan: x"},
    ]


def test_forced_last_iteration_keeps_tools_and_says_none(server: RecordedServer) -> None:
    server.queue(a("final_answer.json"), a("final_answer.json"))
    ask(make(server), req(tools=(), declared_tools=(ADD,)))
    body = server.requests[0].body
    assert [t["name"] for t in body["tools"]] == ["add"]
    assert body["tool_choice"] == {"type": "none"}
    # with loop control the last iteration narrows the choice to task_completion
    ask(make(server), req(tools=(DONE,), declared_tools=(ADD, DONE)))
    body = server.requests[1].body
    assert [t["name"] for t in body["tools"]] == ["add", "task_completion"]
    assert body["tool_choice"] == {"type": "tool", "name": "task_completion"}


def test_required_tool_choice_is_any(server: RecordedServer) -> None:
    server.queue(a("tool_call.json"))
    ask(make(server), req(tools=(ADD,), settings=ModelSettings(tool_choice="required")))
    assert server.requests[0].body["tool_choice"] == {"type": "any"}


# -- streaming -------------------------------------------------------------------------------
def test_stream_text_deltas_and_tool_call_json(server: RecordedServer) -> None:
    server.queue(a("stream_tool_calls.sse"))
    items = collect(make(server), req(tools=(ADD,)))
    deltas = [i.text for i in items if isinstance(i, TextDelta)]
    assert deltas == ["Okay", ", let's check", " the weather and time."]
    final = items[-1]
    assert isinstance(final, ModelResponse)
    assert final.text == "Okay, let's check the weather and time."
    assert final.tool_calls == (
        ToolCall("get_weather", {"location": "San Francisco, CA"}, "toolu_01T1x1fJ34qAmk2tNTrN7Up6"),
        ToolCall("get_time", {"timezone": "America/Los_Angeles"}, "toolu_01Ab2Cd3Ef4Gh5Ij6Kl7Mn8"),
    )
    assert final.finish_reason == "tool_calls"
    assert final.usage is not None and (final.usage.input_tokens, final.usage.output_tokens) == (472, 89)
    assert server.requests[0].body["stream"] is True


def test_stream_text(server: RecordedServer) -> None:
    server.queue(a("stream_text.sse"))
    items = collect(make(server), req())
    assert "".join(i.text for i in items if isinstance(i, TextDelta)) == "Hello! How can I help?"
    final = items[-1]
    assert isinstance(final, ModelResponse) and final.finish_reason == "stop"


# -- errors and retries ----------------------------------------------------------------------
def test_retries_429_then_500_then_success_honouring_retry_after(server: RecordedServer) -> None:
    response, waits = retry_waits(server, make, a("error_429.json", 429, retry_after="0.05"),
                                  a("error_500.json", 500), a("text.json"))
    assert response.text == "Hello! How can I help you today?"
    assert waits == [(1, 0.05, 429), (2, 0.02, 500)]  # Retry-After, then base_delay * 2
    assert len(server.requests) == 3


@pytest.mark.parametrize(("name", "status", "message"), [
    ("error_400.json", 400, "messages: text content blocks must be non-empty"),
    ("error_401.json", 401, "invalid x-api-key"),
])
def test_client_errors_fail_fast(server: RecordedServer, name: str, status: int,
                                 message: str) -> None:
    assert fails_fast(server, make, a(name, status)).message == message


def test_retries_exhausted_raise_the_last_error(server: RecordedServer) -> None:
    server.queue(a("error_500.json", 500), a("error_500.json", 500))
    with pytest.raises(ModelHTTPError) as info:
        ask(make(server, retry=RetryPolicy(max_retries=1, base_delay=0.01, jitter=0)), req())
    assert info.value.status_code == 500 and info.value.retryable
    assert info.value.message == "Internal server error"


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(UserError, match="ANTHROPIC_API_KEY"):
        AnthropicModel("claude-sonnet-4-5")


def test_resolve_model_string(monkeypatch: pytest.MonkeyPatch) -> None:
    from reactloop.models._resolve import resolve_model

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    model = resolve_model("anthropic:claude-haiku-4-5")
    assert isinstance(model, AnthropicModel) and model.name == "claude-haiku-4-5"


# -- end to end ------------------------------------------------------------------------------
def test_agent_run_end_to_end(server: RecordedServer) -> None:
    server.queue(a("tool_call.json"), a("final_answer.json"))
    result = Agent(model=make(server), tools=[add]).run_sync("What is 2+3?")
    assert result.output == "2 + 3 = 5"
    assert result.metrics.tool_calls == 1
    assert result.metrics.input_tokens == 384 + 480
    second = server.requests[1].body["messages"]
    assert second[-1]["role"] == "user"
    results = [b for b in second[-1]["content"] if b["type"] == "tool_result"]
    assert results == [{"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
                        "content": "5"}]


# -- extended thinking: the blocks (and their signatures) go back on the next turn ----------
def _recorded_thinking() -> list[dict[str, Any]]:
    content = json.loads((PAYLOADS / "thinking_tool_call.json").read_text())["content"]
    return [b for b in content if b["type"] in ("thinking", "redacted_thinking")]


def test_thinking_blocks_are_kept_and_sent_back_first(server: RecordedServer) -> None:
    thinking = _recorded_thinking()
    server.queue(a("thinking_tool_call.json"), a("final_answer.json"))
    response = ask(make(server), req(tools=(ADD,)))
    assert response.text == "Let me add them."
    assert response.tool_calls == (ToolCall("add", {"a": 2, "b": 3}, "toolu_01Th1nk"),)
    assert response.provider_details == {"anthropic": {"thinking": thinking}}
    # stored (as the loop stores it) and loaded from JSON, then sent with the tool result
    stored = Message.assistant(response.text, response.tool_calls,
                               provider_details=response.provider_details)
    (loaded,) = messages_from_json(messages_to_json([stored]))
    ask(make(server), req(Message.user("2+3?"), loaded,
                          Message.tool("toolu_01Th1nk", "add", "5"), tools=(ADD,)))
    assistant = server.requests[1].body["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"] == [
        *thinking,
        {"type": "text", "text": "Let me add them."},
        {"type": "tool_use", "id": "toolu_01Th1nk", "name": "add", "input": {"a": 2, "b": 3}},
    ]


def test_streamed_thinking_and_signature_are_assembled(server: RecordedServer) -> None:
    signature = _recorded_thinking()[0]["signature"]
    server.queue(a("thinking_stream.sse"))
    items = collect(make(server), req(tools=(ADD,)))
    assert not [i for i in items if isinstance(i, TextDelta)]  # thinking is not answer text
    final = items[-1]
    assert isinstance(final, ModelResponse)
    assert final.tool_calls == (ToolCall("add", {"a": 2, "b": 3}, "toolu_01Th1nkStr"),)
    assert final.provider_details == {"anthropic": {"thinking": [{
        "type": "thinking", "signature": signature,
        "thinking": "The user asks for 2 + 3. The add tool does exactly that."}]}}


def test_context_window_is_known_for_claude_models() -> None:
    assert AnthropicModel("claude-sonnet-4-5", api_key="sk-test").context_window == 200_000
    assert AnthropicModel("claude-3-5-haiku-latest",
                          api_key="sk-test").context_window == 200_000
    assert AnthropicModel("my-proxy-model", api_key="sk-test").context_window is None
    assert AnthropicModel("claude-sonnet-4-5", api_key="sk-test",
                          context_window=1_000_000).context_window == 1_000_000
