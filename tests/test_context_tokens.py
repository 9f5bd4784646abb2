"""Token counting per model family, cached per message, and the request event (M3)."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from reactloop import Agent, Message, Model, ModelRequest, ModelResponse, ToolCall
from reactloop.context import PER_MESSAGE, TokenCounter, estimate_tokens, tiktoken_counter
from reactloop.context import _tokens as tokens_module
from reactloop.events import Event, RequestEvent
from reactloop.testing import FunctionModel, ScriptedModel


class WordModel(Model):
    """A model with its own tokenizer: one token per word."""

    name = "words"

    def __init__(self) -> None:
        self.counted: list[str] = []

    def count_tokens(self, text: str) -> int:
        self.counted.append(text)
        return len(text.split())

    async def request(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse(text="fine")


def test_estimate_is_four_characters_a_token() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    counter = TokenCounter.for_model(FunctionModel(lambda r: "x"))
    assert counter.family == "estimate"
    assert counter.message(Message.user("abcdefgh")) == PER_MESSAGE + 2


def test_a_model_with_its_own_tokenizer_is_used() -> None:
    model = WordModel()
    counter = TokenCounter.for_model(model)
    assert counter.family == "model"
    assert counter.message(Message.user("one two three")) == PER_MESSAGE + 3


def test_counts_are_cached_per_message() -> None:
    model = WordModel()
    counter = TokenCounter.for_model(model)
    history = [Message.user(f"message number {i}") for i in range(50)]
    assert counter.messages(history) == 50 * (PER_MESSAGE + 3)
    counted = len(model.counted)
    for _ in range(10):  # ten more iterations over the same history
        counter.messages(history)
    assert len(model.counted) == counted
    counter.message(Message.user("message number 0"))  # an equal but new object: counted
    assert len(model.counted) == counted + 1


def test_tool_calls_and_tool_specs_are_counted() -> None:
    counter = TokenCounter(estimate_tokens)
    bare = counter.message(Message.assistant(""))
    with_call = counter.message(Message.assistant("", [ToolCall("search", {"q": "x" * 40})]))
    assert with_call > bare + 10
    agent = Agent(model=FunctionModel(lambda r: "x"), tools=[_search])
    specs = agent.spec.tools.specs()
    assert counter.tools(specs) > 10 and counter.tools(()) == 0


def _search(q: str) -> str:
    """Search the docs.

    Args:
        q: the query
    """
    return q


def test_tiktoken_is_never_downloaded(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    if importlib.util.find_spec("tiktoken") is None:
        pytest.skip("tiktoken is not installed")
    import requests

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("tiktoken tried to download an encoding")

    monkeypatch.setattr(requests, "get", no_network)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # an empty cache
    assert tiktoken_counter("gpt-4o") is None
    assert tiktoken_counter("openai:gpt-4o") is None
    assert tiktoken_counter("claude-sonnet-4") is None  # not an OpenAI model at all
    model = FunctionModel(lambda r: "x")
    model.name = "gpt-4o"
    assert TokenCounter.for_model(model).family == "estimate"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # caching disabled: would always download
    assert tiktoken_counter("gpt-4o") is None


def test_tiktoken_is_used_when_its_encoding_is_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("tiktoken") is None:
        pytest.skip("tiktoken is not installed")
    import tiktoken

    # a byte-level encoding built in memory stands in for the cached o200k_base file
    fake = tiktoken.Encoding("bytes", pat_str=r"\S+|\s+",
                             mergeable_ranks={bytes([i]): i for i in range(256)},
                             special_tokens={})
    asked: list[str] = []

    def get_encoding(name: str) -> tiktoken.Encoding:
        asked.append(name)
        return fake

    monkeypatch.setattr(tokens_module, "_tiktoken_cached", lambda name: True)
    monkeypatch.setattr(tiktoken, "get_encoding", get_encoding)
    model = FunctionModel(lambda r: "x")
    model.name = "openai:gpt-4o-mini"
    counter = TokenCounter.for_model(model)
    assert counter.family == "tiktoken" and asked == ["o200k_base"]
    assert counter.text("héllo") == len("héllo".encode())  # one token per byte


def test_embedded_model_counts_with_its_own_tokenizer() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed")
    from reactloop.models.local import LocalModel

    model = LocalModel()
    counter = TokenCounter.for_model(model)
    assert counter.family == "model"
    n = counter.text("The quick brown fox jumps over the lazy dog.")
    assert 8 <= n <= 14  # a real BPE tokenizer, not the 4-characters estimate (11)


# -- the request event ---------------------------------------------------------------------
def test_a_request_event_before_every_model_call_with_tokens_per_section() -> None:
    model = ScriptedModel([ToolCall("_search", {"q": "cats"}), "Cats are great."])
    agent = Agent(model=model, tools=[_search], instructions="Be brief.",
                  context_providers=[lambda prompt: "Retrieved: cats purr."])

    async def collect() -> list[Event]:
        return [e async for e in agent.stream("Tell me about cats")]

    events = asyncio.run(collect())
    types = [e.type for e in events]
    requests = [e for e in events if isinstance(e, RequestEvent)]
    assert len(requests) == len(model.requests) == 2
    for e in requests:  # each request event comes right before its model's response
        assert types[types.index("request", events.index(e)) + 1] in ("model_response",
                                                                      "text_delta")
    first, second = requests
    counter = agent.spec.context.counter
    assert first.tokens["system"] == counter.text(model.requests[0].system) > 0
    assert first.tokens["tools"] > 0 and first.tokens["notes"] > 0
    assert first.tokens["total"] == sum(first.tokens[k] for k in
                                        ("system", "tools", "history", "notes"))
    assert second.tokens["history"] > first.tokens["history"]
    assert second.tokens["system"] == first.tokens["system"]
    assert (first.iteration, second.iteration) == (1, 2)
