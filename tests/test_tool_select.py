"""Tool retrieval (reactloop._ranking, reactloop.tools._select): BM25 over names, descriptions and parameters."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from reactloop._ranking import name_matches, rank_tools, select_tools, terms
from reactloop.messages import ToolSpec


def spec(name: str, description: str, **params: str) -> ToolSpec:
    return ToolSpec(name, description, {"type": "object", "properties": {
        k: {"type": "string", "description": v} for k, v in params.items()}})


TOOLS = [
    spec("add", "Add two numbers and return the sum.", a="the first number", b="the second"),
    spec("subtract", "Subtract b from a.", a="the number to subtract from", b="the number"),
    spec("word_count", "Count the words in a piece of text.", text="the text"),
    spec("count_letters", "Count the letters in a word.", word="the word"),
    spec("capital_of", "Look up the capital city of a country.", country="the country"),
    spec("get_weather", "The weather forecast for a city.", city="the city"),
    spec("calculate", "Evaluate an arithmetic expression.", expression="e.g. (1 + 2) * 3"),
]


def best(query: str) -> str:
    return rank_tools(TOOLS, query)[0][1].name


@pytest.mark.parametrize(("query", "tool"), [
    ("What is 17 plus 25?", "add"),              # everyday words find documentation words
    ("What is 1234 minus 234?", "subtract"),
    ("Compute (3 + 4) * 5", "calculate"),         # operators count as words
    ("How many words are in 'the letters of a word'?", "word_count"),  # quotes are data
    ("How many letters does the word 'tree' have?", "count_letters"),
    ("Which city is the capital of Peru?", "capital_of"),
    ("Is it raining in Oslo?", "get_weather"),
])
def test_the_most_relevant_tool_ranks_first(query: str, tool: str) -> None:
    assert best(query) == tool


def test_terms_stem_split_names_and_drop_stop_words() -> None:
    assert terms("countLetters in the_words") == ["count", "letter", "word"]
    assert "add" in terms("17 plus 25", expand=True)
    assert "time" not in terms("12 times 7", expand=True)  # "times" is not about the clock


def test_select_keeps_k_best_and_the_tools_it_must_keep() -> None:
    control = spec("task_completion", "Finish the task.", result="the answer")
    chosen = select_tools([*TOOLS, control], "What is 17 plus 25?", 2, keep=["task_completion"])
    assert [t.name for t in chosen] == ["add", "subtract", "task_completion"]
    assert len(select_tools(TOOLS, "hello there", 3)) == 3  # k tools, whatever the query


def test_min_ratio_drops_weak_matches_and_offers_nothing_unrelated() -> None:
    assert [t.name for t in select_tools(TOOLS, "What is 17 plus 25?", 3, min_ratio=0.5)] \
        == ["add"]
    assert select_tools(TOOLS, "Hello! Who are you?", 3, min_ratio=0.5) == []
    with pytest.raises(ValueError, match="k must be at least 1"):
        select_tools(TOOLS, "x", 0)


def test_name_matches_means_the_question_names_the_tool() -> None:
    assert name_matches(TOOLS[0], "what is 2 plus 2")
    assert name_matches(TOOLS[4], "the capital of Peru")
    assert not name_matches(TOOLS[4], "how big is Peru")


# -- Agent(tool_selection=...): the loop offers the tools that fit the request ---------------
def _catalogue() -> list[Any]:
    """40 tools, as a large MCP server would offer: 5 real ones and 35 unrelated."""
    from reactloop import Tool

    def make(name: str, doc: str) -> Any:
        def fn(city: str = "") -> str:
            return f"{name}({city})"
        return Tool(fn, name=name, description=doc)

    real = [make("get_weather", "The weather forecast for a city."),
            make("capital_of", "Look up the capital city of a country."),
            make("convert_currency", "Convert an amount of money into US dollars."),
            make("flight_status", "Whether a flight is on time, delayed or cancelled."),
            make("population", "How many people live in a city.")]
    filler = [make(f"inventory_{i}", f"Stock level of warehouse item group {i}.")
              for i in range(35)]
    return [*filler, *real]


def _names(request: Any) -> list[str]:
    return [t.name for t in request.tools]


def test_tool_selection_offers_the_best_k_for_each_turn() -> None:
    from reactloop import Agent, ModelResponse, ToolCall
    from reactloop.testing import ScriptedModel

    model = ScriptedModel([
        ModelResponse(tool_calls=[ToolCall("get_weather", {"city": "Oslo"})]),
        ModelResponse("Rain in Oslo."),
        ModelResponse("Lima."),
    ])
    agent = Agent(model=model, tools=_catalogue(), tool_selection=3)
    chat = agent.conversation()
    first = asyncio.run(chat.send("Is it raining in Oslo? What's the weather?"))
    assert first.output == "Rain in Oslo."
    asyncio.run(chat.send("Which city is the capital of Peru?"))
    one, two, three = model.requests
    assert _names(one) == ["get_weather"]  # the only tool that matches a word of it
    assert _names(two) == _names(one)  # stable all turn long: the prompt prefix is kept
    assert _names(three) == ["get_weather", "capital_of", "population"]  # at most 3
    hello = ScriptedModel([ModelResponse("Hi!")])
    Agent(model=hello, tools=_catalogue(), tool_selection=3).run_sync("Hello there!")
    assert len(_names(hello.requests[0])) == 40  # no signal: nothing is hidden
    assert all(len(_names(r)) == 40 for r in _all_tools_requests())


def _all_tools_requests() -> list[Any]:
    from reactloop import Agent, ModelResponse
    from reactloop.testing import ScriptedModel

    model = ScriptedModel([ModelResponse("ok")])
    Agent(model=model, tools=_catalogue()).run_sync("Is it raining in Oslo?")
    return model.requests  # without tool_selection every tool is offered


def test_tool_selection_keeps_loop_control_and_tools_added_during_the_run() -> None:
    from reactloop import Agent, ModelResponse, Tool, ToolCall
    from reactloop.extensions import Extension
    from reactloop.testing import ScriptedModel

    class AddsATool(Extension):
        key = "adds"

        def after_tools(self, ctx: Any, results: Any) -> None:
            ctx.add_tools([Tool(lambda: "x", name="inventory_extra",
                                description="Stock of one more item.")])

    model = ScriptedModel([
        ModelResponse(tool_calls=[ToolCall("population", {"city": "Lagos"})]),
        ModelResponse(tool_calls=[ToolCall("task_completion", {"result": "15 million"})]),
    ])
    agent = Agent(model=model, tools=_catalogue(), tool_selection=2, loop_control=True,
                  extensions=[AddsATool()])
    result = agent.run_sync("How many people live in Lagos?")
    assert result.output == "15 million"
    first, second = (set(_names(r)) for r in model.requests)
    assert first == {"population", "task_completion", "ask_question", "converse"}
    assert second == first | {"inventory_extra"}  # added by an extension: always offered


def test_tool_selection_by_a_function_and_its_mistakes() -> None:
    from reactloop import Agent, ModelResponse, RunState
    from reactloop.testing import ScriptedModel

    seen: list[tuple[int, str]] = []

    def by_prefix(tools: Any, text: str) -> list[str]:
        seen.append((len(tools), text))
        return [t.name for t in tools if t.name.startswith("flight")]

    model = ScriptedModel([ModelResponse("On time.")])
    Agent(model=model, tools=_catalogue(), tool_selection=by_prefix).run_sync("Is LH400 late?")
    assert seen == [(40, "Is LH400 late?")] and _names(model.requests[0]) == ["flight_status"]
    wrong = Agent(model=ScriptedModel([ModelResponse("x")]), tools=_catalogue(),
                  tool_selection=lambda tools, text: ["no_such_tool"])
    result = wrong.run_sync("Is LH400 late?")
    assert result.state == RunState.ERROR
    assert "tool_selection returned 'no_such_tool', which is not among" in result.output


@pytest.mark.parametrize("value", [0, -2, True, "three", 2.5])
def test_tool_selection_is_checked_when_the_agent_is_built(value: Any) -> None:
    from reactloop import Agent
    from reactloop.errors import UserError
    from reactloop.testing import ScriptedModel

    with pytest.raises(UserError, match="tool_selection must be"):
        Agent(model=ScriptedModel([]), tools=_catalogue(), tool_selection=value)
