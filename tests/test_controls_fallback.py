"""Issue 27: FallbackModel — after the primary's retries are spent on a retryable failure,
the next model takes the same request (recorded servers on loopback)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from _recorded_server import RecordedServer, payload, recorded_server
from reactloop import Agent, FallbackModel, ModelHTTPError, RunState, UserError
from reactloop.errors import ModelError
from reactloop.events import FallbackEvent, RetryEvent, RunEndEvent
from reactloop.messages import ModelRequest
from reactloop.models._retry import RetryPolicy
from reactloop.testing import FunctionModel, ScriptedModel

pytest.importorskip("anthropic")
pytest.importorskip("openai")

QUICK = RetryPolicy(max_retries=2, base_delay=0.01, jitter=0)


@pytest.fixture
def servers() -> Iterator[tuple[RecordedServer, RecordedServer]]:
    with recorded_server() as down, recorded_server() as up:
        yield down, up


def _models(down: RecordedServer, up: RecordedServer) -> tuple[Any, Any]:
    from reactloop.models.anthropic import AnthropicModel
    from reactloop.models.openai import OpenAIModel

    primary = AnthropicModel("claude-haiku-4-5", api_key="sk-test", base_url=down.url,
                             retry=QUICK)
    backup = OpenAIModel("gpt-4o-mini", api_key="sk-test", base_url=up.url + "/v1", retry=QUICK)
    return primary, backup


def test_a_primary_answering_503_falls_back_after_its_retries(
        servers: tuple[RecordedServer, RecordedServer]) -> None:
    down, up = servers
    down.queue(*[payload("anthropic", "error_500.json", 503)] * 3)  # 1 try + 2 retries
    up.queue(payload("openai", "plain.json"))
    result = Agent(FallbackModel(*_models(down, up))).run_sync("What is 17 + 25?")
    assert result.state is RunState.COMPLETED and result.output == "17 + 25 = 42."
    assert len(down.requests) == 3 and len(up.requests) == 1
    # the same request: the user's message reached the fallback as it reached the primary
    assert down.requests[0].body["messages"][-1]["content"][0]["text"] == "What is 17 + 25?"
    assert up.requests[0].body["messages"][-1]["content"] == "What is 17 + 25?"
    assert result.steps[-1].model == "gpt-4o-mini-2024-07-18"  # the model that answered


def test_a_stream_falls_back_before_its_first_text(
        servers: tuple[RecordedServer, RecordedServer]) -> None:
    down, up = servers
    down.queue(*[payload("anthropic", "error_500.json", 503)] * 3)
    up.queue(payload("openai", "done_stream.sse"))
    agent = Agent(FallbackModel(*_models(down, up)))

    async def main() -> list[Any]:
        return [e async for e in agent.stream("hi")]

    events = asyncio.run(main())
    assert isinstance(events[-1], RunEndEvent)
    result = events[-1].result
    assert result.state is RunState.COMPLETED and result.output == "Handled the transfer."
    assert "".join(e.text for e in events if e.type == "text_delta") == result.output
    assert [e.attempt for e in events if isinstance(e, RetryEvent)] == [1, 2]
    (switch,) = [e for e in events if isinstance(e, FallbackEvent)]
    assert (switch.failed, switch.next) == ("claude-haiku-4-5", "gpt-4o-mini")
    assert "503" in switch.error
    assert [e.type for e in events].index("fallback") < [e.type for e in events].index(
        "text_delta")


def test_a_non_retryable_error_does_not_fall_back(
        servers: tuple[RecordedServer, RecordedServer]) -> None:
    down, up = servers
    down.queue(payload("anthropic", "error_400.json", 400))
    result = Agent(FallbackModel(*_models(down, up))).run_sync("hi")
    assert result.state is RunState.ERROR and isinstance(result.error, ModelHTTPError)
    assert result.error.status_code == 400 and up.requests == []


def test_errors_the_user_lists_fall_back_too() -> None:
    def broken(request: ModelRequest) -> str:
        raise ModelError("the reply did not parse")

    fallback = FallbackModel(FunctionModel(broken), ScriptedModel(["fine"]),
                             fallback_on=[ModelError])
    result = Agent(fallback).run_sync("hi")
    assert result.output == "fine" and result.steps[-1].model == "scripted"
    only_http = FallbackModel(FunctionModel(broken), ScriptedModel(["fine"]))
    assert Agent(only_http).run_sync("hi").state is RunState.ERROR


def test_model_strings_are_resolved_only_when_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fallback = FallbackModel(ScriptedModel(["primary answers"]), "openai:gpt-4o")
    assert Agent(fallback).run_sync("hi").output == "primary answers"  # no key needed
    assert repr(fallback) == "FallbackModel(scripted, openai:gpt-4o)"


def test_fallback_model_is_checked() -> None:
    with pytest.raises(UserError, match="at least one fallback"):
        FallbackModel(ScriptedModel([]))
    with pytest.raises(UserError, match="Model objects or model strings"):
        FallbackModel(ScriptedModel([]), 42)  # type: ignore[arg-type]
