"""Issue 27: what calls cost, from genai-prices — a recorded call of each provider family
through its real adapter on loopback; unknown prices are None, never 0."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from _recorded_server import RecordedServer, payload, recorded_server
from reactloop import Agent, ModelResponse, Usage
from reactloop.controls._cost import call_cost, price_key
from reactloop.events import ModelResponseEvent, RunEndEvent
from reactloop.models._retry import RetryPolicy
from reactloop.testing import FunctionModel, ScriptedModel

pytest.importorskip("genai_prices")
QUICK = RetryPolicy(base_delay=0.01, jitter=0)


@pytest.fixture
def server() -> Iterator[RecordedServer]:
    with recorded_server() as s:
        yield s


def _openai(url: str) -> Any:
    from reactloop.models.openai import OpenAIModel

    return OpenAIModel("gpt-4o-mini", api_key="sk-test", base_url=url + "/v1", retry=QUICK)


def _anthropic(url: str) -> Any:
    from reactloop.models.anthropic import AnthropicModel

    return AnthropicModel("claude-haiku-4-5", api_key="sk-test", base_url=url, retry=QUICK)


def _gemini(url: str) -> Any:
    from reactloop.models.gemini import GeminiModel

    return GeminiModel("gemini-2.5-flash", api_key="gk-test", base_url=url, retry=QUICK)


# (adapter, recorded reply, tokens in/out in it, list prices in $ per million in/out)
FAMILIES = {
    "openai": (_openai, "plain.json", (25, 8), (0.15, 0.60)),  # gpt-4o-mini-2024-07-18
    "anthropic": (_anthropic, "text.json", (12, 11), (3.0, 15.0)),  # claude-sonnet-4-5 answered
    "gemini": (_gemini, "text.json", (8, 9), (0.30, 2.50)),  # gemini-2.5-flash
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_recorded_call_of_each_provider_family_is_priced(server: RecordedServer,
                                                           family: str) -> None:
    pytest.importorskip({"openai": "openai", "anthropic": "anthropic",
                         "gemini": "google.genai"}[family])
    make, reply, (tin, tout), (pin, pout) = FAMILIES[family]
    server.queue(payload(family, reply))
    result = Agent(make(server.url)).run_sync("hi")
    expected = tin * pin / 1e6 + tout * pout / 1e6
    assert (result.metrics.input_tokens, result.metrics.output_tokens) == (tin, tout)
    assert result.metrics.cost_usd == pytest.approx(expected)
    assert result.to_dict()["metrics"]["cost_usd"] == pytest.approx(expected)


def test_each_model_response_event_carries_its_calls_cost() -> None:
    replies = iter([ModelResponse("a", usage=Usage(1_000, 0), model_name="gpt-4o"),
                    ModelResponse("b", usage=Usage(1_000, 0), model_name="no-such-model-x")])
    conversation = Agent(FunctionModel(lambda r: next(replies))).conversation()

    async def main() -> list[Any]:
        return [e for q in ("one", "two") for e in [x async for x in conversation.stream(q)]]

    events = asyncio.run(main())
    costs = [e.cost_usd for e in events if isinstance(e, ModelResponseEvent)]
    assert costs == [pytest.approx(1_000 * 2.5e-6), None]
    ends = [e.result.metrics.cost_usd for e in events if isinstance(e, RunEndEvent)]
    assert ends == [pytest.approx(0.0025), None]


def test_cached_input_and_cache_writes_have_their_own_prices() -> None:
    # claude-sonnet-4-5: $3/M input, $0.30/M cache reads, $3.75/M cache writes, $15/M output
    usage = Usage(input_tokens=10_000, output_tokens=100, cache_read_tokens=6_000,
                  cache_write_tokens=3_000)
    cost = call_cost(price_key("anthropic", "claude-sonnet-4-5"), usage)
    assert cost == pytest.approx((1_000 * 3 + 6_000 * 0.30 + 3_000 * 3.75 + 100 * 15) / 1e6)
    # gpt-4o: cached input at half price
    cost = call_cost(price_key("openai", "gpt-4o"), Usage(2_000, 0, cache_read_tokens=1_000))
    assert cost == pytest.approx((1_000 * 2.5 + 1_000 * 1.25) / 1e6)


def test_unknown_prices_say_unknown_never_zero() -> None:
    assert Agent(ScriptedModel(["hi"])).run_sync("q").metrics.cost_usd is None
    custom = FunctionModel(lambda r: ModelResponse("hi", usage=Usage(10, 10),
                                                   model_name="my-own-finetune-7"))
    assert Agent(custom).run_sync("q").metrics.cost_usd is None
    assert call_cost(price_key("openai", "no-such-model-anywhere"), Usage(1, 1)) is None
    session = Agent(ScriptedModel(["a"])).conversation()
    session.send_sync("q")
    assert session.usage["cost_usd"] is None and session.usage["requests"] == 1


def test_a_session_adds_up_the_cost_of_its_runs() -> None:
    reply = ModelResponse("ok", usage=Usage(1_000_000, 0), model_name="gpt-4o")
    model = FunctionModel(lambda r: reply)
    session = Agent(model).conversation()
    session.send_sync("one")
    session.send_sync("two")
    assert session.usage["cost_usd"] == pytest.approx(5.0)  # 2 × 1M input tokens × $2.50/M
    assert session.usage["input_tokens"] == 2_000_000


def test_import_reactloop_does_not_import_genai_prices() -> None:
    code = "import sys, reactloop; print('genai_prices' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_eval_transcripts_add_up_the_cost_of_their_turns() -> None:
    from reactloop.evals._transcript import Transcript, TranscriptBuilder

    def end(cost: float | None) -> RunEndEvent:
        reply = ModelResponse("ok", usage=Usage(1_000, 0),
                              model_name="gpt-4o" if cost is not None else "unknown-x")
        result = Agent(FunctionModel(lambda r: reply)).run_sync("q")
        assert result.metrics.cost_usd == (pytest.approx(cost) if cost is not None else None)
        return RunEndEvent(result.run_id, result)

    priced = TranscriptBuilder(("a", "b"))
    priced.add(end(0.0025))
    priced.add(end(0.0025))
    assert priced.transcript.cost_usd == pytest.approx(0.005)
    assert Transcript.from_dict(priced.transcript.to_dict()).cost_usd == pytest.approx(0.005)
    mixed = TranscriptBuilder(("a", "b"))
    mixed.add(end(0.0025))
    mixed.add(end(None))
    assert mixed.transcript.cost_usd is None  # unknown, not a partial sum
