"""A request is sized with the tools the model's prompt holds (``Model.sent_tools``): the
embedded model lists only the turn's ranked offer, so a run with many tools and one large
result is not compacted (a summary by the 135M model replaced the question, and took 20 s)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from reactloop import Agent, tool
from reactloop.context._tokens import TokenCounter
from reactloop.messages import Message, ModelRequest, ToolCall, ToolSpec
from reactloop.testing import ScriptedModel


def _tools(n: int) -> list[Any]:
    def make(i: int) -> Any:
        @tool(name=f"lookup_{i}")
        def lookup(term: str) -> str:
            """Look a term up in the reference number {i}: its definition, its synonyms, its
            history and a long list of related entries, with examples of use."""
            return "x" * 4000

        return lookup

    return [make(i) for i in range(n)]


class _Window(ScriptedModel):
    context_window = 2000


class _FewTools(_Window):
    def sent_tools(self, request: ModelRequest) -> tuple[ToolSpec, ...]:
        return request.all_tools[:1]


def _compacted(model: ScriptedModel) -> list[dict[str, int]]:
    agent = Agent(model=model, tools=_tools(12))

    async def run() -> list[dict[str, int]]:
        sizes = []
        async for ev in agent.stream("look up 'gate'"):
            if ev.type == "request":
                sizes.append(dict(ev.tokens))
            assert ev.type != "compaction", "compacted"
        return sizes

    return asyncio.run(run())


def test_the_default_counts_every_tool_and_a_model_may_say_it_sends_fewer() -> None:
    script = [ToolCall("lookup_0", {"term": "gate"}), "done"]
    with pytest.raises(AssertionError, match="compacted"):
        _compacted(_Window(list(script)))  # twelve schemas and a 4,000-character result
    sizes = _compacted(_FewTools(list(script)))
    assert len(sizes) == 2 and 0 < sizes[0]["tools"] < 200  # one schema counted
    counter = TokenCounter(len)
    assert counter.sent_tools is None  # a plain counter: every tool of the run


def test_the_embedded_model_sizes_a_request_with_its_ranked_offer() -> None:
    pytest.importorskip("llama_cpp")
    from reactloop.models.local import LocalModel

    model = LocalModel()
    tools = [t.spec() for t in _tools(12)]

    @tool
    def current_time(timezone: str) -> str:
        """The current time in an IANA timezone, e.g. Europe/Paris."""
        return ""

    request = ModelRequest(system="", messages=(Message.user("What time is it in Tokyo?"),),
                           tools=(*tools, current_time.spec()))
    sent = model.sent_tools(request)
    assert model.guidance is not None and model.guidance.tool_limit is not None
    assert "current_time" in {t.name for t in sent}
    assert len(sent) <= model.guidance.tool_limit < len(request.all_tools)
    counter = TokenCounter.for_model(model)
    assert counter.sent_tools is not None
    assert counter.request(request)["tools"] < TokenCounter(model.count_tokens).request(
        request)["tools"]
