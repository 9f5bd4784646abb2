"""Compaction (M3): each tier on its own, then the tiers in a run, convergence, stability."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest

from reactloop import Agent, Message, ModelRequest, RunState, ToolCall, UserError
from reactloop.context import (
    Compaction,
    Summarize,
    TokenCounter,
    check_pairs,
    estimate_tokens,
    shorten_tool_results,
    unload_skills,
)
from reactloop.context._summary import SUMMARY_HEADER, SUMMARY_SYSTEM
from reactloop.errors import ContextTooSmall
from reactloop.events import CompactionEvent, Event, RequestEvent
from reactloop.messages import ModelResponse, Usage
from reactloop.testing import FunctionModel

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "skills"


def step(i: int, result: str, name: str = "fetch", **args: object) -> list[Message]:
    call = ToolCall(name, args or {"i": i}, f"c{i}")
    return [Message.assistant("", [call]), Message.tool(f"c{i}", name, result)]


def history(n: int, size: int = 5000) -> list[Message]:
    out = [Message.user("collect the data")]
    for i in range(n):
        out += step(i, f"<{i}>" + "x" * size + f"</{i}>")
    return out


# -- tier 1 --------------------------------------------------------------------------------
def test_tier1_shortens_old_tool_results_to_head_and_tail() -> None:
    msgs = history(6)
    out = shorten_tool_results(msgs, keep_last=2, head=100, tail=50)
    assert check_pairs(out) == []
    assert len(out) == len(msgs)
    for i in range(4):  # old results: excerpted, with a marker and both ends kept
        m = out[2 + 2 * i]
        assert m.content.startswith(f"<{i}>") and m.content.endswith(f"</{i}>")
        assert "characters omitted" in m.content and len(m.content) < 400
        assert m.metadata["compacted"] == "excerpt"
    assert out[-1] is msgs[-1] and out[-3] is msgs[-3]  # the last two steps stay whole
    assert out[0] is msgs[0] and out[1] is msgs[1]  # only tool results change


def test_tier1_is_idempotent_and_returns_the_same_list_when_idle() -> None:
    msgs = history(6)
    once = shorten_tool_results(msgs, keep_last=2, head=100, tail=50)
    assert shorten_tool_results(once, keep_last=2, head=100, tail=50) is once
    small = history(6, size=10)
    assert shorten_tool_results(small, keep_last=0) is small


def test_tier1_leaves_skills_and_plans_to_their_own_tiers() -> None:
    msgs = [Message.user("go"), *step(0, "y" * 5000, name="load_skill", name_="x"),
            *step(1, "z" * 5000, name="update_plan"), *history(3)[1:]]
    out = shorten_tool_results(msgs, keep_last=1, head=10, tail=10)
    assert out[2] is msgs[2] and out[4] is msgs[4]


# -- tier 2 --------------------------------------------------------------------------------
def _load(i: int, skill: str, body: str) -> list[Message]:
    call = ToolCall("load_skill", {"name": skill}, f"s{i}")
    text = (f"# Skill: {skill}\nFolder: /skills/{skill} (relative paths…)\n\n{body}\n\n"
            f"Tools now callable: {skill.replace('-', '_')}_tool")
    return [Message.assistant("", [call]), Message.tool(f"s{i}", "load_skill", text)]


def test_tier2_unloads_skills_not_mentioned_recently() -> None:
    msgs = [Message.user("go"), *_load(0, "airport", "A" * 3000),
            *_load(1, "data-analyst", "D" * 3000),
            *_load(2, "book-flight", "B" * 3000)]
    msgs += step(10, "the airport map")  # mentions 'airport' by name
    msgs += step(11, "ok", name="book_flight_tool")  # uses a tool of book-flight
    msgs += step(12, "nothing relevant")
    out = unload_skills(msgs, recent=3)
    assert check_pairs(out) == []
    by_skill = {m.content.split("'")[1] if "unloaded" in m.content else m.content[9:20]: m
                for m in out if m.name == "load_skill"}
    assert "data-analyst" in by_skill and by_skill["data-analyst"].metadata["compacted"] == \
        "unloaded"
    stub = by_skill["data-analyst"].content
    assert "load_skill_reference" in stub and "SKILL.md" in stub
    kept = [m for m in out if m.name == "load_skill" and "unloaded" not in m.content]
    assert len(kept) == 2  # airport (mentioned) and book-flight (its tool was used)
    assert unload_skills(out, recent=3) is out  # idempotent


def test_tier2_stub_tells_how_to_reload_and_that_works() -> None:
    from reactloop.skills import SkillSet

    skills = SkillSet.discover([EXAMPLES])
    name = skills.names[0]
    text, _ = skills.load(name, {})
    msgs = [Message.user("go"), Message.assistant("", [ToolCall("load_skill", {"name": name},
                                                                "s")]),
            Message.tool("s", "load_skill", text), *history(4, size=10)[1:]]
    out = unload_skills(msgs, recent=2)
    stub = out[2].content
    assert "unloaded" in stub
    again = skills.read_reference(name, "SKILL.md")  # what the stub says to call
    assert skills.get(name).body.strip()[:60] in again


def test_tier2_handles_skill_references() -> None:
    call = ToolCall("load_skill_reference", {"skill": "airport", "path": "ref/big.md"}, "r")
    msgs = [Message.user("go"), Message.assistant("", [call]),
            Message.tool("r", "load_skill_reference", "R" * 4000), *history(4, size=10)[1:]]
    out = unload_skills(msgs, recent=2)
    assert "ref/big.md" in out[2].content and "load_skill_reference" in out[2].content


# -- tier 3 --------------------------------------------------------------------------------
def summarizer(text: str = "They fetched items 0-9; all fine.") -> FunctionModel:
    def fn(request: ModelRequest) -> ModelResponse:
        assert request.system == SUMMARY_SYSTEM and request.tools == ()
        return ModelResponse(text=text, usage=Usage(100, 10))

    return FunctionModel(fn)


def test_tier3_summarizes_old_steps_and_keeps_the_last_ones_whole() -> None:
    msgs = [Message.user("old question"), Message.assistant("old answer"), *history(8, 500)]
    model = summarizer()
    tier = Summarize(model, keep_last=3)
    out = asyncio.run(tier(msgs))
    assert check_pairs(out) == []
    # the latest prompt, the summary, then the last three steps exactly as they were
    assert out[0].content == "collect the data"
    assert out[1].metadata["kind"] == "summary" and out[1].content.startswith(SUMMARY_HEADER)
    assert "items 0-9" in out[1].content
    assert out[2:] == msgs[-6:] and all(a is b for a, b in zip(out[2:], msgs[-6:], strict=True))
    prompt = model.requests[0].messages[0].content
    assert "old question" in prompt and "<0>" in prompt and "Assistant called fetch" in prompt
    assert tier.usage == Usage(100, 10)


def test_tier3_keeps_the_latest_plan_update() -> None:
    msgs = [Message.user("go"), *step(0, '{"goal": "g"}', name="update_plan"),
            *history(6, 500)[1:]]
    out = asyncio.run(Summarize(summarizer(), keep_last=2)(msgs))
    assert next(m.name for m in out if m.role == "tool") == "update_plan"
    assert check_pairs(out) == []


def test_tier3_does_nothing_when_there_is_nothing_old() -> None:
    msgs = history(2, 100)
    model = summarizer()
    assert asyncio.run(Summarize(model, keep_last=4)(msgs)) is msgs
    assert model.requests == []


def test_tier3_refuses_a_summary_longer_than_what_it_replaces() -> None:
    msgs = history(5, 10)
    out = asyncio.run(Summarize(summarizer("long " * 2000), keep_last=1,
                                summary_tokens=5000)(msgs))
    assert out is msgs


def test_tier3_summarizes_in_chunks_when_the_history_is_larger_than_its_window() -> None:
    msgs = history(20, 3000)
    seen: list[str] = []

    def fn(request: ModelRequest) -> str:
        seen.append(request.messages[0].content)
        return f"summary {len(seen)}"

    out = asyncio.run(Summarize(FunctionModel(fn), keep_last=1, chunk_tokens=2000)(msgs))
    assert len(seen) > 3
    assert all(estimate_tokens(s) < 2000 + 600 for s in seen)
    assert all(f"summary {i}" in seen[i] for i in range(1, len(seen)))  # each folds the last
    assert f"summary {len(seen)}" in out[1].content


# -- in a run ------------------------------------------------------------------------------
def run_events(agent: Agent, prompt: str) -> list[Event]:
    async def collect() -> list[Event]:
        return [e async for e in agent.stream(prompt)]

    return asyncio.run(collect())


def worker(n_calls: int, window: int, size: int = 2400) -> tuple[FunctionModel, list[str]]:
    summaries: list[str] = []

    def fn(request: ModelRequest) -> ModelResponse | ToolCall:
        if request.system == SUMMARY_SYSTEM:
            summaries.append(request.messages[0].content)
            return ModelResponse(text=f"summary #{len(summaries)}: fetched items so far",
                                 usage=Usage(50, 5))
        done = sum(m.role == "tool" for m in request.messages)
        if len([r for r in model.requests if r.system != SUMMARY_SYSTEM]) > n_calls:
            return ModelResponse(text=f"finished after {done} visible results")
        return ToolCall("fetch", {"i": len(model.requests)})

    model = FunctionModel(fn, context_window=window)
    return model, summaries


def fetch(i: int) -> str:
    """Fetch item i.

    Args:
        i: the item
    """
    return f"<item {i}>" + "data " * 480 + f"</item {i}>"


def test_a_long_run_stays_under_the_window_and_the_prefix_is_stable_between_compactions(
) -> None:
    model, summaries = worker(40, window=6000)
    agent = Agent(model=model, tools=[fetch], max_iterations=60,
                  compaction=Compaction(keep_last=3))
    events = run_events(agent, "fetch forty items")
    result = events[-1].result  # type: ignore[attr-defined]
    assert result.state is RunState.COMPLETED, result.output
    sizes = [e.tokens["total"] for e in events if isinstance(e, RequestEvent)]
    assert max(sizes) <= 6000
    tiers = [e.tier for e in events if isinstance(e, CompactionEvent)]
    assert "tool_results" in tiers and "summary" in tiers and summaries
    for e in events:
        if isinstance(e, CompactionEvent):
            assert e.tokens_after < e.tokens_before and e.duration >= 0
    # between compactions each request extends the previous one: the prefix is untouched
    main = [r for r in model.requests if r.system != SUMMARY_SYSTEM]
    compacted_before: list[bool] = []  # per request: did a compaction precede it?
    pending = False
    for e in events:
        if isinstance(e, CompactionEvent):
            pending = True
        elif isinstance(e, RequestEvent):
            compacted_before.append(pending)
            pending = False
    for k in range(1, len(main)):
        prev, cur = main[k - 1].messages, main[k].messages
        if not compacted_before[k]:
            assert all(a is b for a, b in zip(prev, cur[:len(prev)], strict=True))
        assert check_pairs(cur) == []
        assert cur[0].content == "fetch forty items"
    # compaction is rare: most requests did not rewrite the history
    assert sum(compacted_before) < len(main) / 3
    # the summarizer's usage is counted in the run's metrics
    assert result.metrics.input_tokens == 50 * len(summaries)


def test_tiers_stop_as_soon_as_the_target_is_reached() -> None:
    model, summaries = worker(16, window=10000)
    agent = Agent(model=model, tools=[fetch], max_iterations=20,
                  compaction=Compaction(keep_last=2, threshold=0.8, target=0.7))
    events = run_events(agent, "fetch items")
    tiers = [e.tier for e in events if isinstance(e, CompactionEvent)]
    assert tiers and set(tiers) == {"tool_results"}  # shortening was enough
    assert summaries == []


def test_an_impossible_budget_ends_the_run_with_error_instead_of_looping() -> None:
    model = FunctionModel(lambda r: "never called", context_window=200)
    result = Agent(model=model).run_sync("x" * 4000)
    assert result.state is RunState.ERROR
    assert isinstance(result.error, ContextTooSmall)
    assert "latest user message alone takes" in str(result.error)
    assert model.requests == []


def test_when_no_tier_can_help_the_run_ends_after_the_tiers_ran_once() -> None:
    model, summaries = worker(50, window=3000)
    agent = Agent(model=model, tools=[fetch], max_iterations=60,
                  instructions="Follow the house rules. " * 420)  # ~2600 of the 3000 tokens
    events = run_events(agent, "fetch")
    result = events[-1].result  # type: ignore[attr-defined]
    assert result.state is RunState.ERROR and isinstance(result.error, ContextTooSmall)
    assert "context window is 3000" in str(result.error)
    # it stopped at the first request that could not fit: one tool result in, no looping
    assert result.metrics.iterations == 2 and len(model.requests) == 1
    tiers = [e.tier for e in events if isinstance(e, CompactionEvent)]
    assert tiers == ["tool_results"] and summaries == []  # nothing old enough to summarize


def test_more_whole_steps_than_the_window_holds_degrade_to_fewer() -> None:
    # keep_last=10 steps of ~600 tokens cannot stay whole in 3000 tokens: tiers 1 and 3 keep
    # fewer instead of failing or compacting on every iteration
    model, summaries = worker(30, window=3000)
    agent = Agent(model=model, tools=[fetch], max_iterations=40,
                  compaction=Compaction(keep_last=10))
    events = run_events(agent, "fetch")
    assert events[-1].result.state is RunState.COMPLETED  # type: ignore[attr-defined]
    sizes = [e.tokens["total"] for e in events if isinstance(e, RequestEvent)]
    assert max(sizes) <= 3000
    compactions = sum(1 for a, b in itertools.pairwise(events)
                      if isinstance(a, CompactionEvent) and isinstance(b, RequestEvent))
    assert compactions < len(sizes) / 2 and summaries


def test_compaction_can_be_switched_off_and_needs_a_window() -> None:
    model, _ = worker(6, window=2000)
    result = Agent(model=model, tools=[fetch], compaction=False).run_sync("go")
    assert result.state is RunState.COMPLETED  # the fake model has no real limit
    model2, _ = worker(6, window=None)  # type: ignore[arg-type]
    events = run_events(Agent(model=model2, tools=[fetch]), "go")
    assert not any(isinstance(e, CompactionEvent) for e in events)


def test_compaction_options_are_validated() -> None:
    with pytest.raises(UserError):
        Compaction(threshold=0.5, target=0.9)
    with pytest.raises(UserError):
        Agent(model=FunctionModel(lambda r: "x"), compaction="yes")  # type: ignore[arg-type]


def test_custom_tiers_are_plain_functions_and_must_keep_pairs() -> None:
    def drop_tool_messages(messages: list[Message]) -> list[Message]:
        return [m for m in messages if m.role != "tool"]

    model, _ = worker(20, window=3000)
    agent = Agent(model=model, tools=[fetch], max_iterations=30,
                  compaction=Compaction(tiers=[drop_tool_messages]))
    result = agent.run_sync("go")
    assert result.state is RunState.ERROR and isinstance(result.error, UserError)
    assert "drop_tool_messages" in str(result.error)

    def forget_old(messages: list[Message]) -> list[Message]:
        return [messages[0], *messages[-2:]]

    model, _ = worker(20, window=3000)
    events = run_events(Agent(model=model, tools=[fetch], max_iterations=30,
                              compaction=Compaction(tiers=[forget_old])), "go")
    assert events[-1].result.state is RunState.COMPLETED  # type: ignore[attr-defined]
    assert {e.tier for e in events if isinstance(e, CompactionEvent)} == {"forget_old"}


def test_every_provider_sees_the_same_compaction() -> None:
    # compaction works on neutral messages before the adapter: the counter is the only
    # per-model piece, so a model with its own tokenizer compacts the same way
    class Words(FunctionModel):
        def count_tokens(self, text: str) -> int:
            return len(text.split()) * 2

    model = Words(lambda r: "ok" if r.system != SUMMARY_SYSTEM else "s", context_window=500)
    assert TokenCounter.for_model(model).family == "model"
    result = Agent(model=model).run_sync("word " * 100, history=history(6, 300))
    assert result.state is RunState.COMPLETED
    assert sum(model.count_tokens(m.content) for m in model.requests[-1].messages) < 500


def test_tier2_matches_results_to_calls_within_their_step() -> None:
    # call ids restart in every run, so a conversation can hold the same id twice
    first = [Message.assistant("", [ToolCall("load_skill", {"name": "airport"}, "call_1_0")]),
             Message.tool("call_1_0", "load_skill", "# Skill: airport\n" + "A" * 3000)]
    second = [Message.assistant("", [ToolCall("fetch", {"i": 1}, "call_1_0")]),
              Message.tool("call_1_0", "fetch", "F" * 3000)]
    msgs = [Message.user("a"), *first, Message.user("b"), *second, *history(4, 10)[1:]]
    out = unload_skills(msgs, recent=2)
    assert "unloaded" in out[2].content and out[5] is msgs[5]
