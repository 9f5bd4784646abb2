"""The text tool protocol (seed 002): tool calling for models without native function calling.

:class:`TextToolProtocol` wraps any :class:`~reactloop.models._base.Model`. The system prompt
teaches the format::

    <thinking>why this tool</thinking>
    <tool>{"server_name": "local", "tool_name": "add", "arguments": {"a": 2, "b": 3}}</tool>

no native tools are sent, and past calls and results are rendered back as that same text.
Replies are parsed by :func:`parse_tool_calls`, which tolerates what real models emit (code
fences, trailing commas, single quotes, a missing ``server_name``, text around the tags,
several tags). What it cannot repair goes back to the model as a precise error, at most
``max_reasks`` times; after that the text is returned as the answer. A reply cut off by the
token limit is not re-asked: it keeps ``finish_reason="length"`` and the loop retries it with
more room. Streaming shows the answer text only (never thinking or tool tags).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from reactloop._arguments import repair_json
from reactloop.messages import (
    FinishReason,
    Message,
    ModelRequest,
    ModelResponse,
    TextDelta,
    ToolCall,
    ToolSpec,
    Usage,
)
from reactloop.models._base import Model
from reactloop.models._provider import TextBuffer

__all__ = ["ParsedReply", "TextToolProtocol", "parse_tool_calls", "protocol_prompt",
           "render_messages"]

_THINKING = re.compile(r"<thinking>(.*?)(?:</thinking>|\Z)", re.S | re.I)
_TOOL = re.compile(r"<tool>(.*?)(?:</tool>|\Z)", re.S | re.I)
_FENCE = re.compile(r"^\s*```[\w-]*\s*\n?|\n?\s*```\s*$")
# fences left empty once the tool tag inside them is gone, and one left open at the end (an
# unclosed tag took its closing fence); fences around real content (code) stay
_EMPTY_FENCE = re.compile(r"```[\w-]*\s*```|```[\w-]*\s*\Z")
# the end of a partial reply that may still become a tag or a fence: held back in streams
_UNFINISHED = re.compile(r"(</?[A-Za-z_]*|`+[\w-]*\s*)\Z")


@dataclass(frozen=True, slots=True)
class ParsedReply:
    """What :func:`parse_tool_calls` found in one reply."""

    calls: tuple[ToolCall, ...] = ()
    thinking: str | None = None
    """The ``<thinking>`` text, if any."""
    text: str = ""
    """The reply without thinking and tool tags (the answer, when there are no calls)."""
    errors: tuple[str, ...] = field(default=())
    """One precise message per ``<tool>`` tag that could not be used."""


def _loads(body: str, complete: bool = True) -> Any:
    """``body`` as JSON, its syntax repaired (quotes, trailing commas, and closing brackets
    when the reply was ``complete``) but no value guessed; None when that is not enough.
    A reply cut off by the token limit is never closed: its last value may be cut too."""
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        pass
    try:
        return repair_json(body, close=complete)
    except (ValueError, SyntaxError):
        return None


def _one_call(body: str, tool_names: Collection[str] | None, complete: bool = True
              ) -> tuple[str, Mapping[str, Any]] | str:
    """``(name, arguments)`` from one tag's body, or an error message."""
    body = _FENCE.sub("", body.strip()).strip()
    if not body:
        return "the <tool> tag is empty; put the JSON call inside it"
    obj = _loads(body, complete)
    if not isinstance(obj, dict):
        return f"the <tool> tag does not hold a JSON object: {body[:200]!r}"
    name = obj.get("tool_name") or obj.get("name") or obj.get("tool")
    if not isinstance(name, str) or not name:
        return 'the call has no "tool_name"; write {"tool_name": "...", "arguments": {...}}'
    args = obj.get("arguments", obj.get("args", {}))
    if isinstance(args, str):
        args = _loads(args, complete) if args.strip() else {}
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return f'"arguments" of {name} must be a JSON object, got {type(args).__name__}'
    if tool_names is not None and name not in tool_names:
        known = ", ".join(sorted(tool_names)) or "none"
        return f"there is no tool named {name!r}; the tools are: {known}"
    return name, args


def parse_tool_calls(text: str, tool_names: Collection[str] | None = None,
                     *, id_prefix: str = "text-", complete: bool = True) -> ParsedReply:
    """Parse a reply written in the text tool protocol.

    Args:
        text: the model's reply.
        tool_names: the tools that may be called (None: any name).
        id_prefix: call ids are ``f"{id_prefix}{index}"``.
        complete: False when the reply was cut off (finish reason ``length``): a call whose
            JSON is not closed is then an error, not closed by repair.
    """
    thinking_parts = [m.strip() for m in _THINKING.findall(text)]
    rest = _THINKING.sub("", text)
    calls: list[ToolCall] = []
    errors: list[str] = []
    for body in _TOOL.findall(rest):
        found = _one_call(body, tool_names, complete)
        if isinstance(found, str):
            errors.append(found)
        else:
            calls.append(ToolCall(found[0], found[1], f"{id_prefix}{len(calls)}"))
    answer = _answer(rest).strip()
    return ParsedReply(tuple(calls), "\n".join(thinking_parts) or None, answer, tuple(errors))


def _answer(text: str) -> str:
    """``text`` without thinking, tool tags and the fences that only wrapped a tag."""
    return _EMPTY_FENCE.sub("", _TOOL.sub("", _THINKING.sub("", text)))


class _VisibleText:
    """The answer part of a reply as it streams in: thinking and tool tags never show.

    Each delta extends the text shown so far; a tail that may still turn into a tag or a fence
    is held back until it is decided. Should an edit ever change what was already shown, the
    stream shows nothing more (the final response carries the whole answer).

    While the reply holds no ``<`` and no backtick (plain prose, the common case), each delta
    costs only its own length: the reply is kept once and nothing is searched again.
    """

    def __init__(self) -> None:
        self.raw = ""
        self.shown = ""
        self._plain: TextBuffer | None = TextBuffer()  # the reply while it is plain text
        self._held = ""  # plain mode: trailing whitespace not shown yet
        self._shown_any = False

    def feed(self, delta: str) -> str:
        if self._plain is not None:
            if "<" not in delta and "`" not in delta:
                return self._feed_plain(delta)
            self.raw = self._plain.value()  # a tag or a fence may start: the general way
            self.shown = self.raw.strip()
            self._plain = None
        self.raw += delta
        return self._advance(_answer(_UNFINISHED.sub("", self.raw)).strip())

    def _feed_plain(self, delta: str) -> str:
        # what _advance(raw.strip()) would show, from the delta alone
        assert self._plain is not None
        self._plain.append(delta)
        text = self._held + delta if self._shown_any else delta.lstrip()
        body = text.rstrip()
        self._held = text[len(body):]
        if body:
            self._shown_any = True
        return body

    def flush(self) -> str:
        if self._plain is not None:
            return ""  # all of a plain reply but its trailing whitespace is out
        return self._advance(_answer(self.raw).strip())

    def _advance(self, visible: str) -> str:
        if not visible.startswith(self.shown):
            return ""
        new, self.shown = visible[len(self.shown):], visible
        return new


# -- prompt rendering (pure) -----------------------------------------------------------------
def _tool_line(spec: ToolSpec) -> str:
    schema = json.dumps(dict(spec.parameters), separators=(",", ":"))
    return f"- {spec.name}: {spec.description.strip()}\n  arguments schema: {schema}"


def protocol_prompt(tools: Sequence[ToolSpec]) -> str:
    """The part of the system prompt that lists the tools and teaches the format."""
    listing = "\n".join(_tool_line(t) for t in tools)
    return (
        "<tools>\n" + listing + "\n</tools>\n\n"
        "<tool_calling>\n"
        "Before acting, think in <thinking>...</thinking> tags. To call a tool, write:\n"
        "<tool>\n"
        '{"server_name": "local", "tool_name": "<tool name>", "arguments": {...}}\n'
        "</tool>\n"
        "The JSON must be valid: double quotes, no trailing commas. You may call several "
        "tools, one <tool> tag each. Tool results come back in <tool_result> tags. When you "
        "have the answer, reply with plain text and no <tool> tag.\n"
        "</tool_calling>"
    )


def _render_call(call: ToolCall) -> str:
    payload = {"server_name": "local", "tool_name": call.name, "arguments": dict(call.arguments)}
    return f"<tool>{json.dumps(payload, ensure_ascii=False)}</tool>"


def _render_result(m: Message) -> str:
    status = ' status="error"' if m.is_error else ""
    return f'<tool_result tool_name="{m.name or ""}"{status}>\n{m.content}\n</tool_result>'


def render_messages(messages: Sequence[Message]) -> list[Message]:
    """History with tool calls and results rendered as protocol text (no native fields)."""
    out: list[Message] = []
    for m in messages:
        if m.role == "assistant" and m.tool_calls:
            text = "\n".join([m.content] * bool(m.content) + [_render_call(c) for c in m.tool_calls])
            out.append(Message.assistant(text))
        elif m.role == "tool":
            if out and out[-1].role == "user" and out[-1].metadata.get("kind") == "tool_results":
                merged = out[-1].content + "\n" + _render_result(m)
                out[-1] = Message.user(merged, kind="tool_results")
            else:
                out.append(Message.user(_render_result(m), kind="tool_results"))
        else:
            out.append(m)
    return out


def _reask(errors: Sequence[str]) -> str:
    listed = "\n".join(f"- {e}" for e in errors)
    return (
        "Your tool call could not be used:\n" + listed + "\n"
        "Write it again as <tool>{\"server_name\": \"local\", \"tool_name\": \"...\", "
        "\"arguments\": {...}}</tool> with valid JSON, or answer in plain text."
    )


class TextToolProtocol(Model):
    """Tool calling through text, for models without native function calling.

    Args:
        model: the wrapped model; it receives no native tools.
        max_reasks: how often an unusable tool call is sent back with an error before the
            reply is returned as the answer.
    """

    def __init__(self, model: Model, *, max_reasks: int = 2) -> None:
        self.model = model
        self.max_reasks = max_reasks
        self.name = f"text:{model.name}"
        self.provider = model.provider
        self.context_window = model.context_window
        self.accepts = model.accepts  # the wrapped model reads what it reads

    def _inner(self, request: ModelRequest) -> ModelRequest:
        # the tool list comes from all_tools so the system prompt never changes within a run
        parts = [request.system, protocol_prompt(request.all_tools) if request.all_tools else ""]
        return ModelRequest(
            "\n\n".join(p for p in parts if p),
            tuple(render_messages(request.messages)),
            (),
            request.notes,
            replace(request.settings, tool_choice="auto"),
        )

    async def request(self, request: ModelRequest) -> ModelResponse:
        response: ModelResponse | None = None
        async for item in self._attempts(request, stream=False):
            if isinstance(item, ModelResponse):
                response = item
        assert response is not None
        return response

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        """Streams the answer text only: thinking and ``<tool>`` tags never show. A re-asked
        reply streams again, so text before an unusable tag may show twice."""
        async for item in self._attempts(request, stream=True):
            yield item

    async def _once(self, inner: ModelRequest, stream: bool
                    ) -> AsyncIterator[TextDelta | ModelResponse]:
        if not stream:
            yield await self.model.request(inner)
            return
        visible = _VisibleText()
        async for item in self.model.stream(inner):
            if not isinstance(item, TextDelta):
                if tail := visible.flush():
                    yield TextDelta(tail)
                yield item
            elif shown := visible.feed(item.text):
                yield TextDelta(shown)

    async def _attempts(self, request: ModelRequest, *, stream: bool
                        ) -> AsyncIterator[TextDelta | ModelResponse]:
        """Call the model, re-asking (at most ``max_reasks`` times) while a tag is unusable;
        the last item is the :class:`ModelResponse`."""
        inner = self._inner(request)
        names = {t.name for t in request.tools}
        usage: Usage | None = None
        prefix = f"text-{len(request.messages)}-"
        for attempt in range(self.max_reasks + 1):
            response = ModelResponse()
            async for item in self._once(inner, stream):
                if isinstance(item, TextDelta):
                    yield item
                else:
                    response = item
            if response.usage is not None:
                usage = response.usage if usage is None else usage + response.usage
            raw = response.text or ""
            parsed = parse_tool_calls(raw, names, id_prefix=prefix,
                                      complete=response.finish_reason != "length")
            if not names:  # no tools allowed this time (forced last iteration): all is answer
                yield ModelResponse(parsed.text or raw, (), usage, response.finish_reason,
                                    response.model_name)
                return
            # a reply cut off by the token limit is not re-asked: the loop retries it with
            # more room when it sees finish_reason "length"
            if (not parsed.errors or attempt == self.max_reasks
                    or response.finish_reason == "length"):
                break
            inner = ModelRequest(inner.system, (*inner.messages, Message.assistant(raw),
                                 Message.user(_reask(parsed.errors), kind="reminder")),
                                 (), inner.notes, inner.settings)
        if parsed.calls:  # whole calls before a cut-off still say "length"
            finish: FinishReason = ("length" if response.finish_reason == "length"
                                    else "tool_calls")
            yield ModelResponse(parsed.text or None, parsed.calls, usage, finish,
                                response.model_name)
            return
        yield ModelResponse(parsed.text or raw, (), usage, response.finish_reason,
                            response.model_name)

    def count_tokens(self, text: str) -> int:
        return self.model.count_tokens(text)

    async def aclose(self) -> None:
        await self.model.aclose()
