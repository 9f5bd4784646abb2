"""Issue 27: prompt caching — Anthropic cache_control breakpoints pinned on a recorded
multi-turn request sequence (the real SDK against a loopback server); OpenAI's
prompt_cache_key stable per session."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest

from _recorded_server import RecordedServer, payload, recorded_server
from reactloop import Agent, RunState
from reactloop.models._anthropic_cache import MAX_BREAKPOINTS, add_cache_breakpoints
from reactloop.models._retry import RetryPolicy

pytest.importorskip("anthropic")

# a persona long enough to be cacheable (over 1,024 tokens by the 4-characters estimate)
PERSONA = "You are a careful arithmetic assistant. " * 120


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture
def server() -> Iterator[RecordedServer]:
    with recorded_server() as s:
        yield s


def _marks(body: dict[str, Any]) -> list[str]:
    """Where the breakpoints are: ``system``, ``tool:<name>`` or ``<message>.<block>:<kind>``."""
    out = []
    system = body.get("system")
    if isinstance(system, list) and any("cache_control" in b for b in system):
        out.append("system")
    out += [f"tool:{t['name']}" for t in body.get("tools", ()) if "cache_control" in t]
    for i, m in enumerate(body["messages"]):
        for j, block in enumerate(m["content"]):
            if "cache_control" in block:
                out.append(f"{i}.{j}:{m['role']}:{block['type']}")
    return out


def _prefix(body: dict[str, Any], mark: str) -> str:
    """The request bytes the provider caches up to ``mark`` (tools, system, history)."""
    i, j = (int(x) for x in mark.split(":")[0].split("."))
    messages = [*body["messages"][:i], {**body["messages"][i],
                                        "content": body["messages"][i]["content"][:j + 1]}]
    strip = json.loads(json.dumps(messages).replace(', "cache_control": {"type": '
                                                     '"ephemeral"}', ""))
    return json.dumps([body.get("tools"), body.get("system"), strip], sort_keys=True)


def test_breakpoints_on_a_recorded_multi_turn_sequence(server: RecordedServer) -> None:
    from reactloop.models.anthropic import AnthropicModel

    server.queue(payload("anthropic", "tool_call.json"), payload("anthropic", "tool_call.json"),
                 payload("anthropic", "text.json"), payload("anthropic", "text.json"))
    model = AnthropicModel("claude-haiku-4-5", api_key="sk-test", base_url=server.url,
                           retry=RetryPolicy(base_delay=0.01, jitter=0))
    session = Agent(model, instructions=PERSONA, tools=[add]).conversation()

    async def two_turns() -> list[RunState]:  # one event loop: the SDK's client is reused
        return [(await session.send(q)).state for q in ("What is 2 + 3, twice?", "And now?")]

    assert asyncio.run(two_turns()) == [RunState.COMPLETED] * 2
    bodies = [r.body for r in server.requests]
    assert [_marks(b) for b in bodies] == [
        ["system", "0.0:user:text"],  # the first request: the prompt
        ["system", "0.0:user:text", "2.0:user:tool_result"],
        ["system", "2.0:user:tool_result", "4.0:user:tool_result"],
        ["system", "4.0:user:tool_result", "6.0:user:text"],  # the second turn
    ]
    for body in bodies:
        assert len(_marks(body)) <= MAX_BREAKPOINTS
    # each call reads what the call before it wrote: its "previous" breakpoint covers the
    # very bytes of the previous call's latest one
    for before, after in itertools.pairwise(bodies):
        assert _prefix(after, _marks(after)[1]) == _prefix(before, _marks(before)[-1])


def test_small_requests_keep_their_plain_shape() -> None:
    params: dict[str, Any] = {"system": "Be terse.", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Hi"}]}]}
    assert add_cache_breakpoints(params, notes=False) == 0
    assert params["system"] == "Be terse." and "cache_control" not in json.dumps(params)


def test_volatile_notes_are_never_cached_and_without_a_system_the_last_tool_is() -> None:
    tools = [{"name": f"t{i}", "description": "x" * 3000, "input_schema": {}} for i in range(2)]
    params: dict[str, Any] = {"tools": tools, "messages": [{"role": "user", "content": [
        {"type": "text", "text": "question"}, {"type": "text", "text": "Plan: step 1"}]}]}
    assert add_cache_breakpoints(params, notes=True) == 2
    assert _marks(params) == ["tool:t1", "0.0:user:text"]  # not the note (0.1)


def test_caching_can_be_switched_off(server: RecordedServer) -> None:
    from reactloop.models.anthropic import AnthropicModel

    server.queue(payload("anthropic", "text.json"))
    model = AnthropicModel("claude-haiku-4-5", api_key="sk-test", base_url=server.url,
                           prompt_caching=False)
    Agent(model, instructions=PERSONA).run_sync("hi")
    assert "cache_control" not in json.dumps(server.requests[0].body)


def test_openai_prompt_cache_key_is_stable_per_session(server: RecordedServer) -> None:
    pytest.importorskip("openai")
    from reactloop.models.openai import OpenAIModel

    server.queue(*[payload("openai", "plain.json")] * 4)

    def model(**kw: Any) -> Any:
        return OpenAIModel("gpt-4o-mini", api_key="sk-test", base_url=server.url + "/v1", **kw)

    async def main() -> None:
        agent = Agent(model(prompt_cache_key=True))
        first, second = agent.conversation(), agent.conversation()
        await first.send("one")
        await first.send("two")
        await second.send("three")
        await Agent(model()).run("a compatible server gets no key by default")

    asyncio.run(main())
    keys = [r.body.get("prompt_cache_key") for r in server.requests]
    assert keys[0] == keys[1] and keys[0] != keys[2] and keys[3] is None
    assert keys[0].startswith("rl-") and len(keys[0]) == 35  # a hash, not the session id
