"""Tier 3 of compaction: old steps summarized by a model into one message."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence

from reactloop.context._tiers import excerpt
from reactloop.context._tokens import TokenCounter
from reactloop.context._units import Unit, latest_prompt, units
from reactloop.messages import Message, ModelRequest, ModelResponse, ModelSettings, Usage
from reactloop.models._base import Model

__all__ = ["SUMMARY_HEADER", "SUMMARY_SYSTEM", "ModelCall", "Summarize"]

ModelCall = Callable[[Model, ModelRequest], Awaitable[ModelResponse]]
"""How a summarizer request is sent (the run's runtime seam; default ``model.request``)."""

SUMMARY_SYSTEM = (
    "You compress the history of an AI agent's work so that it can continue with less "
    "context. Write a concise plain-text summary: the user's requests; what was done (tools "
    "called and the key facts they returned, keeping exact numbers, names, ids and paths that "
    "may matter later); decisions made; the current plan; what is still open. Never invent "
    "anything. Do not call tools."
)
SUMMARY_HEADER = "[Summary of earlier messages, written to save context]"
_MAX_LINE = 4000  # characters of one message shown to the summarizer


def _render(m: Message) -> list[str]:
    if m.metadata.get("kind") == "summary":
        return [f"Earlier summary: {m.content.removeprefix(SUMMARY_HEADER).strip()}"]
    text = m.content if len(m.content) <= _MAX_LINE else excerpt(m.content, 2800, 1000)
    if m.role == "tool":
        return [f"Result of {m.name or 'tool'}{' (error)' if m.is_error else ''}: {text}"]
    lines = [f"{m.role.capitalize()}: {text}"] if text else []
    for c in m.tool_calls:
        args = json.dumps(dict(c.arguments), ensure_ascii=False, default=str)
        lines.append(f"Assistant called {c.name}({args})")
    return lines


class Summarize:
    """Tier 3: every step before the last ``keep_last`` becomes one summary message.

    The latest user prompt, system messages and the latest step that called one of
    ``pinned_tools`` (``update_plan``: the plan must survive) are kept as they are. A history
    larger than the summarizer's own window is summarized in chunks, each folded into the
    summary so far. When the summary would not be smaller than what it replaces, the history
    is returned unchanged.

    Args:
        model: the model that writes the summary.
        counter: measures the pieces (default: the model's :class:`TokenCounter`).
        keep_last: recent steps kept whole.
        summary_tokens: the longest summary asked for.
        chunk_tokens: the most transcript tokens sent in one summarizer request.
        call: sends a request (default: ``model.request``); the loop passes its runtime's.
    """

    def __init__(self, model: Model, *, counter: TokenCounter | None = None, keep_last: int = 4,
                 summary_tokens: int = 512, chunk_tokens: int = 3000,
                 pinned_tools: Sequence[str] = ("update_plan",),
                 call: ModelCall | None = None) -> None:
        self.model = model
        self.call = call
        self.counter = counter or TokenCounter.for_model(model)
        self.keep_last = keep_last
        self.summary_tokens = summary_tokens
        self.chunk_tokens = max(256, chunk_tokens)
        self.pinned_tools = frozenset(pinned_tools)
        self.usage = Usage()
        self.__name__ = "summary"

    def _plan(self, messages: Sequence[Message]) -> tuple[int, list[Unit], Unit | None, int | None]:
        """(tail start, units to summarize, pinned unit, latest prompt index)."""
        all_units = units(messages)
        keep = min(max(self.keep_last, 0), len(all_units))
        tail = all_units[-keep].start if keep else len(messages)
        latest = latest_prompt(messages)
        span = [u for u in all_units if u.start < tail]
        pinned = next((u for u in reversed(span)
                       if any(c.name in self.pinned_tools for c in messages[u.start].tool_calls)),
                      None)
        doomed = [u for u in span if messages[u.start].role != "system"
                  and u.start != latest and u is not pinned]
        return tail, doomed, pinned, latest

    async def __call__(self, messages: list[Message]) -> list[Message]:
        _, doomed, _, _ = self._plan(messages)
        if not doomed or (len(doomed) == 1
                          and messages[doomed[0].start].metadata.get("kind") == "summary"):
            return messages
        lines = [line for u in doomed for m in messages[u.start:u.stop] for line in _render(m)]
        summary = await self._summarize(lines)
        if not summary:
            return messages
        cap = self.summary_tokens * 4
        if len(summary) > cap:
            summary = summary[:cap].rstrip() + " …"
        note = Message.user(f"{SUMMARY_HEADER}\n{summary}", kind="summary",
                            summarized=sum(len(u) for u in doomed))
        out = self._assemble(messages, note)
        if self.counter.messages(out) >= self.counter.messages(messages):
            return messages
        return out

    def survivors(self, messages: Sequence[Message]) -> list[Message]:
        """The messages a summary would leave in place (to predict the size afterwards)."""
        return self._assemble(messages, None)

    def _assemble(self, messages: Sequence[Message], note: Message | None) -> list[Message]:
        tail, _, pinned, latest = self._plan(messages)
        out = [m for m in messages[:tail] if m.role == "system"]
        if latest is not None and latest < tail:
            out.append(messages[latest])
        if note is not None:
            out.append(note)
        if pinned is not None:
            out.extend(messages[pinned.start:pinned.stop])
        out.extend(messages[tail:])
        return out

    def _chunks(self, lines: list[str]) -> list[str]:
        chunks: list[str] = []
        current: list[str] = []
        size = 0
        for line in lines:
            n = self.counter.text(line) + 1
            if current and size + n > self.chunk_tokens:
                chunks.append("\n".join(current))
                current, size = [], 0
            current.append(line)
            size += n
        if current:
            chunks.append("\n".join(current))
        return chunks

    async def _summarize(self, lines: list[str]) -> str:
        summary = ""
        settings = ModelSettings(max_tokens=self.summary_tokens, temperature=0.0,
                                 tool_choice="none")
        for chunk in self._chunks(lines):
            before = f"Summary so far:\n{summary}\n\n" if summary else ""
            prompt = f"{before}Messages to summarize:\n{chunk}\n\nWrite the updated summary."
            request = ModelRequest(SUMMARY_SYSTEM, (Message.user(prompt),), settings=settings)
            response = await (self.call(self.model, request) if self.call is not None
                              else self.model.request(request))
            if response.usage is not None:
                self.usage = self.usage + response.usage
            summary = (response.text or "").strip() or summary
        return summary
