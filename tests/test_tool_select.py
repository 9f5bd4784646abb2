"""Tool retrieval (reactloop.tools._select): BM25 over names, descriptions and parameters."""

from __future__ import annotations

import pytest

from reactloop.messages import ToolSpec
from reactloop.tools._select import name_matches, rank_tools, select_tools, terms


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
