"""The text tool protocol while streaming: only the answer shows, whatever the chunking."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop import Agent, tool
from reactloop.messages import Message, ModelRequest, ModelResponse, TextDelta, ToolSpec
from reactloop.models._base import Model
from reactloop.models.text_protocol import TextToolProtocol, parse_tool_calls
from reactloop.testing import ScriptedModel

ADD = ToolSpec("add", "Add two numbers.", {"type": "object", "properties": {
    "a": {"type": "integer"}, "b": {"type": "integer"}}})
REQUEST = ModelRequest("", (Message.user("1+2?"),), (ADD,))


class Chunked(Model):
    """Streams each scripted reply in pieces of the given sizes (cycled)."""

    name = "chunked"

    def __init__(self, replies: Sequence[str | ModelResponse], sizes: Sequence[int] = (1,)
                 ) -> None:
        self.replies = [r if isinstance(r, ModelResponse) else ModelResponse(r)
                        for r in replies]
        self.sizes = list(sizes) or [1]
        self.requests: list[ModelRequest] = []

    async def request(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return self.replies.pop(0)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        response = await self.request(request)
        text, i, k = response.text or "", 0, 0
        while i < len(text):
            size = self.sizes[k % len(self.sizes)]
            yield TextDelta(text[i:i + size])
            i, k = i + size, k + 1
        yield response


def _stream(model: Model, request: ModelRequest = REQUEST) -> tuple[str, ModelResponse]:
    async def go() -> tuple[str, ModelResponse]:
        shown: list[str] = []
        final = None
        async for item in model.stream(request):
            if isinstance(item, TextDelta):
                shown.append(item.text)
            else:
                final = item
        assert final is not None
        return "".join(shown), final

    return asyncio.run(go())


CALL = '<tool>{"tool_name": "add", "arguments": {"a": 1, "b": 2}}</tool>'


def test_a_tool_call_streams_no_tags_and_no_thinking() -> None:
    reply = f"<thinking>Use add.</thinking>\nLet me add.\n```json\n{CALL}\n```"
    shown, final = _stream(TextToolProtocol(Chunked([reply])))
    assert shown == "Let me add." == final.text
    assert [(c.name, dict(c.arguments)) for c in final.tool_calls] == [("add", {"a": 1, "b": 2})]


def test_code_blocks_in_an_answer_keep_their_fences() -> None:
    answer = "Run this:\n```python\nprint(1 + 2)\n```\nIt prints 3."
    shown, final = _stream(TextToolProtocol(Chunked([answer], sizes=(3,))))
    assert final.text == answer and shown == answer
    assert parse_tool_calls(answer).text == answer


def test_a_truncated_call_is_not_reasked_but_reported_as_length() -> None:
    cut = ModelResponse('Adding. <tool>{"tool_na', finish_reason="length")
    inner = ScriptedModel([cut, "unused"])
    response = asyncio.run(TextToolProtocol(inner).request(REQUEST))
    assert len(inner.requests) == 1  # the loop retries with more room, not the wrapper
    assert response.finish_reason == "length" and response.tool_calls == ()
    assert response.text == "Adding."


def test_a_call_cut_off_by_the_token_limit_is_not_closed_and_never_runs() -> None:
    """The last value of a cut-off call may be cut too ("b": 2 of "b": 25): repair never
    closes it, so the call is not made and the loop asks again with more room."""
    cut = ModelResponse('<tool>{"tool_name": "add", "arguments": {"a": 1, "b": 2',
                        finish_reason="length")
    response = asyncio.run(TextToolProtocol(ScriptedModel([cut])).request(REQUEST))
    assert response.tool_calls == ()
    assert response.finish_reason == "length"


def test_a_whole_reply_missing_its_closing_brackets_is_still_repaired() -> None:
    whole = ModelResponse('<tool>{"tool_name": "add", "arguments": {"a": 1, "b": 2',
                          finish_reason="stop")
    response = asyncio.run(TextToolProtocol(ScriptedModel([whole])).request(REQUEST))
    assert [dict(c.arguments) for c in response.tool_calls] == [{"a": 1, "b": 2}]


def test_a_reasked_stream_ends_with_the_repaired_call() -> None:
    inner = Chunked(["<tool>{'tool_name': 'nope'}</tool>", f"Adding. {CALL}"], sizes=(2, 5))
    shown, final = _stream(TextToolProtocol(inner))
    assert [c.name for c in final.tool_calls] == ["add"]
    assert shown == "Adding." and len(inner.requests) == 2
    assert "no tool named 'nope'" in inner.requests[1].messages[-1].content


words = st.sampled_from(["The", "answer", "is", "3.", "a < b", "`x`", "\n", "  ", "ok"])
parts = st.one_of(words, st.just("<thinking>hidden plan</thinking>"), st.just(CALL),
                  st.just(f"```json\n{CALL}\n```"), st.just("```py\ncode()\n```"))


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(parts, max_size=8),
       sizes=st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=4))
def test_streamed_text_is_the_final_text_for_any_chunking(pieces: list[str],
                                                          sizes: list[int]) -> None:
    reply = " ".join(pieces)
    shown, final = _stream(TextToolProtocol(Chunked([reply], sizes)))
    assert "hidden plan" not in shown and "tool_name" not in shown
    # a reply with no answer part (only thinking or calls) streams nothing
    assert shown == (final.text if parse_tool_calls(reply).text else "")


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_streamed_agent_run_matches_the_unstreamed_one() -> None:
    script = ["<thinking>Use add.</thinking>" + CALL, "The sum is 3."]

    async def streamed() -> tuple[list[str], object]:
        agent = Agent(model=TextToolProtocol(Chunked(script, sizes=(4,))), tools=[add])
        events = [e async for e in agent.stream("1+2?")]
        deltas = [e.text for e in events if e.type == "text_delta"]
        return deltas, events[-1].result  # type: ignore[attr-defined]

    deltas, result = asyncio.run(streamed())
    plain = Agent(model=TextToolProtocol(Chunked(script)), tools=[add]).run_sync("1+2?")
    assert "".join(deltas) == "The sum is 3." == result.output == plain.output  # type: ignore[attr-defined]
    assert [m.content for m in result.messages] == [m.content for m in plain.messages]  # type: ignore[attr-defined]
