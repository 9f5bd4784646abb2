"""The text tool protocol: the parser on its own, and the wrapper over scripted models."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop import Agent, tool
from reactloop.messages import Message, ModelRequest, ToolCall, ToolSpec
from reactloop.models.text_protocol import TextToolProtocol, parse_tool_calls
from reactloop.testing import FunctionModel, ScriptedModel

NAMES = {"add", "search"}


# -- parser ----------------------------------------------------------------------------------
def test_canonical_call_with_thinking() -> None:
    reply = ('<thinking>I need to add.</thinking>\n<tool>\n{"server_name": "local", '
             '"tool_name": "add", "arguments": {"a": 2, "b": 3}}\n</tool>')
    parsed = parse_tool_calls(reply, NAMES)
    assert parsed.calls == (ToolCall("add", {"a": 2, "b": 3}, "text-0"),)
    assert parsed.thinking == "I need to add." and parsed.errors == () and parsed.text == ""


@pytest.mark.parametrize("reply", [
    '<tool>```json\n{"server_name": "local", "tool_name": "add", "arguments": {"a": 2, "b": 3}}\n```</tool>',
    '```\n<tool>{"tool_name": "add", "arguments": {"a": 2, "b": 3}}</tool>\n```',
    '<tool>{"server_name": "local", "tool_name": "add", "arguments": {"a": 2, "b": 3},}</tool>',
    "<tool>{'server_name': 'local', 'tool_name': 'add', 'arguments': {'a': 2, 'b': 3}}</tool>",
    '<tool>{"tool_name": "add", "arguments": {"a": 2, "b": 3}}</tool>',
    'Sure, let me compute that.\n<tool>{"tool_name": "add", "arguments": {"a": 2, "b": 3}}</tool>',
    '<tool>{"tool_name": "add", "arguments": "{\\"a\\": 2, \\"b\\": 3}"}</tool>',
    '<TOOL>{"tool_name": "add", "arguments": {"a": 2, "b": 3}}',  # unclosed tag at the end
])
def test_what_real_models_emit_is_repaired(reply: str) -> None:
    parsed = parse_tool_calls(reply, NAMES)
    assert parsed.errors == ()
    assert [(c.name, dict(c.arguments)) for c in parsed.calls] == [("add", {"a": 2, "b": 3})]


def test_several_tags_and_text_around() -> None:
    reply = ('First I search, then I add.\n'
             '<tool>{"tool_name": "search", "arguments": {"q": "x"}}</tool>\nand\n'
             '<tool>{"tool_name": "add", "arguments": {"a": 1, "b": 1}}</tool>')
    parsed = parse_tool_calls(reply, NAMES, id_prefix="t-")
    assert [(c.name, c.id) for c in parsed.calls] == [("search", "t-0"), ("add", "t-1")]
    assert parsed.text.startswith("First I search")


@pytest.mark.parametrize(("reply", "fragment"), [
    ("<tool></tool>", "empty"),
    ('<tool>{"arguments": {"a": 1}}</tool>', '"tool_name"'),
    ('<tool>{"tool_name": "nope", "arguments": {}}</tool>', "no tool named 'nope'"),
    ('<tool>{"tool_name": "add", "arguments": [1, 2]}</tool>', "must be a JSON object"),
    ("<tool>[1, 2]</tool>", "JSON object"),
])
def test_unusable_calls_give_precise_errors(reply: str, fragment: str) -> None:
    parsed = parse_tool_calls(reply, NAMES)
    assert parsed.calls == () and len(parsed.errors) == 1 and fragment in parsed.errors[0]


def test_plain_answer_has_no_calls() -> None:
    parsed = parse_tool_calls("The answer is 5.", NAMES)
    assert parsed.calls == () and parsed.errors == () and parsed.text == "The answer is 5."


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
)
noise = st.text(max_size=30).filter(lambda s: "<" not in s and "`" not in s)


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(sorted(NAMES)),
       args=st.dictionaries(st.text(min_size=1, max_size=8), json_values, max_size=4),
       before=noise, after=noise, fence=st.booleans(), pad=st.sampled_from(["", " ", "\n", "\n\n  "]),
       server=st.booleans())
def test_valid_calls_survive_fences_whitespace_and_text(
        name: str, args: dict[str, object], before: str, after: str, fence: bool, pad: str,
        server: bool) -> None:
    call: dict[str, object] = {"tool_name": name, "arguments": args}
    if server:
        call = {"server_name": "local", **call}
    body = pad + json.dumps(call) + pad
    if fence:
        body = f"```json\n{body}\n```"
    parsed = parse_tool_calls(f"{before}<tool>{body}</tool>{after}", NAMES)
    assert parsed.errors == ()
    assert [(c.name, dict(c.arguments)) for c in parsed.calls] == [(name, args)]


# -- the wrapper -----------------------------------------------------------------------------
ADD = ToolSpec("add", "Add two numbers.", {"type": "object", "properties": {
    "a": {"type": "integer"}, "b": {"type": "integer"}}})


def test_inner_request_has_protocol_no_native_tools_and_text_history() -> None:
    inner = ScriptedModel(["Done."])
    history = (
        Message.user("2+3?"),
        Message.assistant(None, [ToolCall("add", {"a": 2, "b": 3}, "c1")]),
        Message.tool("c1", "add", "5"),
        Message.tool("c2", "add", "bad", is_error=True),
    )
    request = ModelRequest("Be brief.", history, (ADD,), ("1 iteration left.",))
    response = asyncio.run(TextToolProtocol(inner).request(request))
    assert response.text == "Done." and response.tool_calls == ()
    sent = inner.requests[0]
    assert sent.tools == () and sent.declared_tools == ()
    assert sent.system.startswith("Be brief.") and "<tool>" in sent.system and "- add:" in sent.system
    assert [m.role for m in sent.messages] == ["user", "assistant", "user"]
    assert sent.messages[1].tool_calls == ()
    assert '"tool_name": "add"' in sent.messages[1].content
    assert sent.messages[2].content.count("<tool_result") == 2
    assert 'status="error"' in sent.messages[2].content
    assert sent.notes == ("1 iteration left.",)


def test_unparseable_reply_is_reasked_with_the_error() -> None:
    inner = ScriptedModel([
        '<tool>{"tool_name": "nope"}</tool>',
        '<tool>{"tool_name": "add", "arguments": {"a": 1, "b": 2}}</tool>',
    ])
    response = asyncio.run(TextToolProtocol(inner).request(
        ModelRequest("", (Message.user("1+2?"),), (ADD,))))
    assert [c.name for c in response.tool_calls] == ["add"]
    assert response.finish_reason == "tool_calls"
    feedback = inner.requests[1].messages[-1]
    assert feedback.role == "user" and "no tool named 'nope'" in feedback.content
    assert response.usage is not None and response.usage.input_tokens > 0


def test_reasks_are_bounded_then_text_is_the_answer() -> None:
    inner = FunctionModel(lambda request: "I think <tool>not json at all</tool>")
    response = asyncio.run(TextToolProtocol(inner, max_reasks=2).request(
        ModelRequest("", (Message.user("?"),), (ADD,))))
    assert len(inner.requests) == 3
    assert response.tool_calls == () and response.text == "I think"


def test_no_tools_allowed_means_the_reply_is_the_answer() -> None:
    inner = ScriptedModel(['Answer: 5 <tool>{"tool_name": "add", "arguments": {}}</tool>'])
    response = asyncio.run(TextToolProtocol(inner).request(
        ModelRequest("", (Message.user("?"),), (), declared_tools=(ADD,))))
    assert response.tool_calls == () and response.text == "Answer: 5"
    assert "- add:" in inner.requests[0].system  # the prompt prefix stays the same


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_agent_run_end_to_end() -> None:
    inner = ScriptedModel([
        "<thinking>Use add.</thinking>\n```json\n<tool>{'tool_name': 'add', "
        "'arguments': {'a': 2, 'b': 3,},}</tool>\n```",
        "The sum is 5.",
    ])
    result = Agent(model=TextToolProtocol(inner), tools=[add]).run_sync("What is 2+3?")
    assert result.output == "The sum is 5."
    assert result.metrics.tool_calls == 1
    assert "<tool_result" in inner.requests[1].messages[-1].content
    assert "5" in inner.requests[1].messages[-1].content


def test_streaming_agent_run() -> None:
    inner = ScriptedModel(['<tool>{"tool_name": "add", "arguments": {"a": 1, "b": 1}}</tool>',
                           "Two."])
    agent = Agent(model=TextToolProtocol(inner), tools=[add])

    async def go() -> list[object]:
        return [event async for event in agent.stream("1+1?")]

    events = asyncio.run(go())
    assert any(type(e).__name__ == "TextDeltaEvent" for e in events)
