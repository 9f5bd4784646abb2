"""Memory limits: pruning keeps tool pairs together, oldest turns go first (M2)."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop import Agent, Message, ModelRequest, ToolCall
from reactloop.context import check_pairs, is_prompt, latest_prompt, prune, repair, units
from reactloop.events import CompactionEvent, Event
from reactloop.testing import FunctionModel

# -- random histories ----------------------------------------------------------------------


@st.composite
def step(draw: st.DrawFn, counter: list[int]) -> list[Message]:
    kind = draw(st.sampled_from(["calls", "calls", "text", "reminder", "system"]))
    size = draw(st.integers(0, 300))
    if kind == "calls":
        ids = []
        for _ in range(draw(st.integers(1, 3))):
            counter[0] += 1
            ids.append(f"c{counter[0]}")
        calls = [ToolCall("t", {"i": i}, i) for i in ids]
        results = [Message.tool(i, "t", "r" * draw(st.integers(0, 400))) for i in ids]
        return [Message.assistant("x" * size, calls), *results]
    if kind == "text":
        return [Message.assistant("a" * size)]
    if kind == "reminder":
        return [Message.user("please use a tool", kind="reminder")]
    return [Message.system("s" * size)]


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    counter = [0]
    out: list[Message] = []
    if draw(st.booleans()):
        out.append(Message.system("rules"))
    for _ in range(draw(st.integers(0, 6))):
        out.append(Message.user("u" * draw(st.integers(1, 200))))
        for _ in range(draw(st.integers(0, 5))):
            out.extend(draw(step(counter)))
    return out


def _est(m: Message) -> int:
    return 4 + (len(m.content) + 3) // 4 + sum(len(str(c.arguments)) for c in m.tool_calls)


limits = st.one_of(st.none(), st.integers(0, 40))
token_limits = st.one_of(st.none(), st.integers(0, 600))


@settings(max_examples=400, deadline=None)
@given(histories(), limits, token_limits)
def test_pruning_properties(history: list[Message], max_messages: int | None,
                            max_tokens: int | None) -> None:
    out = prune(history, max_messages=max_messages, max_tokens=max_tokens, count=_est)
    kept_ids = {id(m) for m in out}
    # a subsequence of the input, in order
    positions = [next(i for i, m in enumerate(history) if m is k) for k in out]
    assert positions == sorted(positions)
    # tool calls and their results stay together
    assert check_pairs(out) == []
    # never drops a system message, the latest user prompt or the latest step
    assert all(id(m) in kept_ids for m in history if m.role == "system")
    latest = latest_prompt(history)
    if latest is not None:
        assert id(history[latest]) in kept_ids
    all_units = units(history)
    if all_units:
        last = all_units[-1]
        assert all(id(m) in kept_ids for m in history[last.start:last.stop])
    # oldest first: everything removed is older than everything removable that was kept
    protected = {i for i, m in enumerate(history) if m.role == "system" or i == latest}
    if all_units:
        protected |= set(range(all_units[-1].start, all_units[-1].stop))
    removed = [i for i, m in enumerate(history) if id(m) not in kept_ids]
    kept_removable = [i for i, m in enumerate(history)
                      if id(m) in kept_ids and i not in protected]
    if removed and kept_removable:
        assert max(removed) < min(kept_removable)
    # within the limits, unless only protected messages are left
    within = ((max_messages is None or len(out) <= max_messages)
              and (max_tokens is None or sum(map(_est, out)) <= max_tokens))
    assert within or not kept_removable
    if within and not removed:
        assert out is history


@settings(max_examples=200, deadline=None)
@given(histories(), limits)
def test_older_turns_go_whole_before_the_current_turn_loses_steps(
        history: list[Message], max_messages: int | None) -> None:
    out = prune(history, max_messages=max_messages, count=_est)
    latest = latest_prompt(history)
    if latest is None:
        return
    kept = {id(m) for m in out}
    current_removed = any(id(m) not in kept for m in history[latest + 1:])
    if current_removed:  # then no older non-system message survived
        assert all(m.role == "system" for m in history[:latest] if id(m) in kept)
    # a kept history starts with a user prompt or system messages, never with a tool result
    first = next((m for m in out if m.role != "system"), None)
    if first is not None and out is not history and latest is not None:
        assert first.role != "tool"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["user", "assistant", "tool", "system", "call"]), max_size=30),
       limits)
def test_arbitrary_message_soup_never_crashes(roles: list[str], max_messages: int | None) -> None:
    msgs = []
    for i, r in enumerate(roles):
        if r == "call":
            msgs.append(Message.assistant("", [ToolCall("t", {}, f"x{i}")]))
        elif r == "tool":
            msgs.append(Message.tool(f"x{i - 1}", "t", "r"))
        else:
            msgs.append(Message(r, "m"))  # type: ignore[arg-type]
    out = prune(msgs, max_messages=max_messages)
    assert len(out) <= len(msgs)
    fixed = repair(msgs)
    assert check_pairs(fixed) == []


def test_repair_answers_interrupted_calls_and_drops_orphans() -> None:
    calls = [ToolCall("a", {}, "1"), ToolCall("b", {}, "2")]
    history = [Message.user("go"), Message.assistant("", calls), Message.tool("1", "a", "ok")]
    fixed = repair(history)
    assert fixed[:3] == history
    assert fixed[3].tool_call_id == "2" and fixed[3].is_error
    assert "interrupted" in fixed[3].content
    assert repair([Message.tool("zz", "a", "orphan"), Message.user("hi")]) == [Message.user("hi")]
    assert repair(fixed) == fixed


def test_prompt_detection_ignores_reminders_and_summaries() -> None:
    msgs = [Message.user("real"), Message.user("r", kind="reminder"),
            Message.user("s", kind="summary")]
    assert [is_prompt(m) for m in msgs] == [True, False, False]
    assert latest_prompt(msgs) == 0


# -- through the agent ---------------------------------------------------------------------
def test_agent_max_messages_prunes_every_request_and_emits_prune() -> None:
    def fn(request: ModelRequest) -> ToolCall | str:
        if sum(m.role == "tool" for m in request.messages) >= 1 and len(fn_calls) > 12:
            return "done"
        fn_calls.append(1)
        return ToolCall("echo", {"text": f"n{len(fn_calls)}"})

    fn_calls: list[int] = []

    def echo(text: str) -> str:
        """Echo."""
        return text * 10

    model = FunctionModel(fn)
    history = [Message.user("old question"), Message.assistant("old answer")]
    agent = Agent(model=model, tools=[echo], max_iterations=20, max_messages=6)

    async def collect() -> list[Event]:
        return [e async for e in agent.stream("new question", history=history)]

    events = asyncio.run(collect())
    assert events[-1].result.state.value == "completed"  # type: ignore[attr-defined]
    for r in model.requests:
        assert len(r.messages) <= 6
        assert check_pairs(r.messages) == []
        assert any(m.content == "new question" for m in r.messages)
    assert model.requests[-1].messages[0].content == "new question"
    prunes = [e for e in events if isinstance(e, CompactionEvent) and e.tier == "prune"]
    assert prunes and all(e.messages_after < e.messages_before for e in prunes)
    assert all(e.tokens_after < e.tokens_before for e in prunes)
    # the stored history is the pruned one, so the next turn continues from it
    assert len(events[-1].result.messages) <= 7  # type: ignore[attr-defined]


def test_agent_max_tokens_bounds_the_history() -> None:
    big = "word " * 400  # ~500 tokens
    history = []
    for i in range(6):
        history += [Message.user(f"q{i} {big}"), Message.assistant(f"a{i} {big}")]
    model = FunctionModel(lambda r: "ok")
    result = Agent(model=model, max_tokens=1500).run_sync("latest")
    assert result.output == "ok"
    result = Agent(model=model, max_tokens=1500).run_sync("latest", history=history)
    sent = model.requests[-1].messages
    assert sent[-1].content == "latest"
    assert sum(_est(m) for m in sent) <= 1500
    assert sent[0].content.startswith("q")  # whole turns went, oldest first
    assert [m.content[:2] for m in sent[:-1]] == [m.content[:2] for m in history[-len(sent) + 1:]]


def test_limits_are_validated() -> None:
    import pytest

    from reactloop import UserError

    with pytest.raises(UserError, match="max_messages"):
        Agent(model=FunctionModel(lambda r: "x"), max_messages=0)
    with pytest.raises(UserError, match="max_tokens"):
        Agent(model=FunctionModel(lambda r: "x"), max_tokens=-5)
