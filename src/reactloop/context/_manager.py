"""What the loop calls before each model call: memory limits, compaction, the request event.

:meth:`ContextPolicy.prepare` builds the request, prunes the history to the memory limits,
compacts it when the request passes ``threshold`` of the context window, and reports the
token count per section. The history is rewritten only when pruning or a compaction tier
actually changes something, so in between the request prefix stays byte-stable.

Convergence: each tier runs at most once per compaction, in order, until the request is under
``target``; after the last tier, a request that still does not fit the window ends the run
with :class:`~reactloop.errors.ContextTooSmall` instead of compacting again and again.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from reactloop.context._prune import prune
from reactloop.context._summary import ModelCall, Summarize
from reactloop.context._tiers import shorten_tool_results, unload_skills
from reactloop.context._tokens import PER_MESSAGE, TokenCounter
from reactloop.context._units import check_pairs, latest_prompt
from reactloop.errors import ContextTooSmall, UserError
from reactloop.events import CompactionEvent, Event, RequestEvent
from reactloop.messages import Message, ModelRequest, Usage
from reactloop.models._base import Model

__all__ = ["Compaction", "ContextPolicy", "Prepared", "Tally", "Tier"]

Tier = Callable[[list[Message]], list[Message] | Awaitable[list[Message]]]
"""A compaction step: ``fn(messages) -> messages`` (sync or async). Return the input list
itself when there is nothing to do."""


@dataclass(frozen=True)
class Compaction:
    """When and how to compact the history (``Agent(compaction=Compaction(...))``).

    Compaction needs a context window: ``context_window`` here, else the model's.
    """

    threshold: float = 0.8
    """Compact when a request would use more than this fraction of the context window."""
    target: float = 0.6
    """Tiers run until the request is under this fraction, so the next iterations do not
    compact again right away."""
    context_window: int | None = None
    """Tokens the model attends to; default: ``model.context_window``."""
    reserve: int | None = None
    """Tokens kept free for the answer; default: the request's ``max_tokens``, else 1/16 of
    the window."""
    keep_last: int = 4
    """Recent steps (an assistant message with its tool results, or a message) kept whole by
    tiers 1 and 3."""
    excerpt_head: int = 800
    """Characters kept from the start of an old tool result (tier 1)."""
    excerpt_tail: int = 400
    """Characters kept from its end."""
    skill_recency: int = 6
    """Steps in which a loaded skill must be mentioned to stay loaded (tier 2)."""
    summary_tokens: int = 512
    """The longest summary tier 3 asks for."""
    summarizer: Model | None = None
    """The model that writes summaries (default: the agent's model)."""
    tiers: Sequence[Tier] | None = None
    """Replace the three default tiers with your own ``list[Message] -> list[Message]``
    functions; they run in this order."""

    def __post_init__(self) -> None:
        if not 0 < self.target <= self.threshold:
            raise UserError(f"Compaction: need 0 < target <= threshold, got target="
                            f"{self.target!r}, threshold={self.threshold!r}")
        if self.context_window is not None and self.context_window < 1:
            raise UserError(f"Compaction: context_window must be positive, got "
                            f"{self.context_window!r}")
        if self.keep_last < 0 or self.skill_recency < 0:
            raise UserError("Compaction: keep_last and skill_recency must be >= 0")


class Tally:
    """One run's history token count: its message list, how many are counted, their tokens.
    Lives on the run (``RunContext.tally``); only appended messages are counted again."""

    __slots__ = ("counted", "messages", "tokens")

    def __init__(self, messages: list[Message]) -> None:
        self.messages, self.counted, self.tokens = messages, 0, 0


@dataclass(slots=True)
class Prepared:
    """What :meth:`ContextPolicy.prepare` decided for one model call."""

    messages: list[Message]
    """The history to keep (the same list object when nothing was pruned or compacted)."""
    request: ModelRequest
    events: list[Event]
    """``compaction`` events and the ``request`` event, in order."""
    usage: Usage
    """Tokens a summarizer spent."""
    tally: Tally
    error: ContextTooSmall | None = None
    """Set when even compaction could not make the request fit; the run must end."""


class ContextPolicy:
    """An agent's context policy: memory limits and compaction. Holds no per-run state (the
    token-count cache is per model and shared by every run)."""

    def __init__(self, model: Model, *, max_messages: int | None = None,
                 max_tokens: int | None = None, compaction: Compaction | None = None) -> None:
        self.model = model
        self.max_messages = max_messages
        self.max_tokens = max_tokens
        self.compaction = compaction
        self._counter: TokenCounter | None = None

    @property
    def counter(self) -> TokenCounter:
        if self._counter is None:  # built lazily: it may import tiktoken
            self._counter = TokenCounter.for_model(self.model)
        return self._counter

    def sizes(self) -> bool:
        """Whether a request must be sized even when no one reads its ``request`` event: a
        memory limit prunes, or compaction has a context window to keep within."""
        if self.max_messages is not None or self.max_tokens is not None:
            return True
        c = self.compaction  # window(), inlined (read before every model call)
        return c is not None and ((c.context_window if c.context_window else None)
                                  or self.model.context_window) is not None

    def window(self) -> int | None:
        c = self.compaction
        return (c.context_window if c and c.context_window else None) or self.model.context_window

    async def prepare(self, messages: list[Message], build: Callable[[list[Message]], ModelRequest],
                      *, run_id: str, iteration: int, tally: Tally | None = None,
                      call: ModelCall | None = None,
                      clock: Callable[[], float] = time.perf_counter) -> Prepared:
        """Prune, compact if needed, and size the request that ``build(messages)`` makes.

        A pure function of its inputs apart from the summarizer's model calls (sent through
        ``call``) and ``clock`` (the run's monotonic clock, for the tiers' durations): it
        returns the new history and the events instead of touching a run."""
        events: list[Event] = []
        if self.max_messages is not None or self.max_tokens is not None:
            messages, pruned = self._prune(messages, run_id)
            events.extend(pruned)
        request = build(messages)
        tally = _tally(tally, messages, self.counter)
        sizes = self.counter.request(request, tally.tokens)
        window, c = self.window(), self.compaction
        usage = Usage()
        if window is None or c is None or sizes["total"] <= window * c.threshold:
            events.append(RequestEvent(run_id, iteration, sizes))
            return Prepared(messages, request, events, usage, tally)
        progress = await self._compact(messages, c, sizes, window, run_id, call, clock)
        events.extend(progress.events)
        messages, usage = progress.messages, progress.usage
        request = build(messages)
        tally = _tally(None, messages, self.counter)
        sizes = self.counter.request(request, tally.tokens)
        reserve = c.reserve if c.reserve is not None else (
            request.settings.max_tokens or window // 16)
        error = None
        if sizes["total"] > window - reserve:
            error = self._too_small(messages, sizes, window, reserve, events)
        else:
            events.append(RequestEvent(run_id, iteration, sizes))
        return Prepared(messages, request, events, usage, tally, error)

    def _prune(self, before: list[Message], run_id: str) -> tuple[list[Message], list[Event]]:
        after = prune(before, max_messages=self.max_messages, max_tokens=self.max_tokens,
                      count=self.counter.message)
        if after is before:
            return before, []
        n_before, n_after = self.counter.messages(before), self.counter.messages(after)
        return after, [CompactionEvent(run_id, "prune", n_before, n_after, 0.0, len(before),
                                       len(after))]

    async def _compact(self, messages: list[Message], c: Compaction, sizes: dict[str, int],
                       window: int, run_id: str, call: ModelCall | None,
                       clock: Callable[[], float]) -> _Progress:
        progress = _Progress(messages, run_id, self.counter, sizes, clock)
        target = window * c.target
        if c.tiers is not None:
            for tier in c.tiers:
                if await progress.apply(tier) <= target:
                    break
        else:
            await self._default_tiers(progress, c, window, target, call)
        return progress

    async def _default_tiers(self, progress: _Progress, c: Compaction, window: int,
                             target: float, call: ModelCall | None) -> None:
        """Tier 1, tier 2, then tier 3 — each only if the ones before were not enough.

        Tiers 1 and 3 keep the last ``keep_last`` steps whole; if even a summary could not
        bring the request under ``target`` that way, they keep fewer (halving down to the
        last step, whose tool results tier 1 then shortens too), which beats compacting again
        on every iteration or giving up."""
        def shorten(keep: int) -> Tier:
            return _named("tool_results", functools.partial(
                shorten_tool_results, keep_last=keep, head=c.excerpt_head, tail=c.excerpt_tail))

        if await progress.apply(shorten(c.keep_last)) <= target:
            return
        skills = functools.partial(unload_skills, recent=c.skill_recency)
        if await progress.apply(_named("skills", skills)) <= target:
            return
        model = c.summarizer or self.model
        summarize = Summarize(model, counter=self.counter if model is self.model else None,
                              summary_tokens=c.summary_tokens,
                              chunk_tokens=(model.context_window or window) // 2, call=call)
        keep = c.keep_last
        for keep in _halvings(c.keep_last):
            summarize.keep_last = max(keep, 1)
            shortened = shorten_tool_results(progress.messages, keep_last=keep,
                                             head=c.excerpt_head, tail=c.excerpt_tail)
            kept = self.counter.messages(summarize.survivors(shortened))
            if progress.fixed + kept + c.summary_tokens + PER_MESSAGE <= target:
                break
        if keep < c.keep_last:
            await progress.apply(shorten(keep))
        await progress.apply(summarize)

    def _too_small(self, messages: list[Message], sizes: dict[str, int], window: int,
                   reserve: int, events: Sequence[Event]) -> ContextTooSmall:
        latest = latest_prompt(messages)
        own = self.counter.message(messages[latest]) if latest is not None else 0
        tried = ", ".join(e.tier for e in events if isinstance(e, CompactionEvent)) or "none"
        return ContextTooSmall(
            f"the request needs {sizes['total']} tokens but the context window is {window} "
            f"({reserve} kept for the answer), even after compaction (tiers that changed the "
            f"history: {tried}). The latest user message alone takes {own} tokens, the system "
            f"prompt {sizes['system']}, the tools {sizes['tools']}. Use a model with a larger "
            "context window, fewer tools, or a shorter message."
        )


def _tally(tally: Tally | None, messages: list[Message], counter: TokenCounter) -> Tally:
    """``tally`` brought up to date with ``messages`` (the loop only appends; pruning and
    compaction make a new list, which starts a new tally)."""
    if tally is None or tally.messages is not messages or len(messages) < tally.counted:
        tally = Tally(messages)
    if tally.counted < len(messages):
        message = counter.message
        tally.tokens += sum(message(m) for m in messages[tally.counted:])
        tally.counted = len(messages)
    return tally


class _Progress:
    """The history while tiers run, its request size, and one event per tier that helped."""

    def __init__(self, messages: list[Message], run_id: str, counter: TokenCounter,
                 sizes: dict[str, int], clock: Callable[[], float]) -> None:
        self.run_id, self.counter, self.clock = run_id, counter, clock
        self.messages: list[Message] = messages
        self.total = sizes["total"]
        self.fixed = sizes["total"] - sizes["history"]  # system, tools and notes
        self.events: list[Event] = []
        self.usage = Usage()

    async def apply(self, tier: Tier) -> int:
        """Run ``tier``; returns the request size afterwards."""
        started = self.clock()
        used = getattr(tier, "usage", None)  # a tier that calls a model (Summarize)
        out: Any = tier(self.messages)
        if inspect.isawaitable(out):
            out = await out
        now = getattr(tier, "usage", None)
        if isinstance(now, Usage):
            before = used if isinstance(used, Usage) else Usage()
            self.usage = self.usage + Usage(now.input_tokens - before.input_tokens,
                                            now.output_tokens - before.output_tokens)
        name = getattr(tier, "__name__", type(tier).__name__)
        if out is self.messages or _same(out, self.messages):
            return self.total
        _check_tier(name, self.messages, out)
        after = self.fixed + self.counter.messages(out)
        self.events.append(CompactionEvent(self.run_id, name, self.total, after,
                                           self.clock() - started, len(self.messages),
                                           len(out)))
        self.messages, self.total = list(out), after
        return after


def _halvings(keep: int) -> list[int]:
    """``keep``, then halved down to 1, then 0: 4 -> [4, 2, 1, 0]."""
    out = [keep]
    while out[-1] > 1:
        out.append(out[-1] // 2)
    if out[-1] != 0:
        out.append(0)
    return out


def _named(name: str, fn: functools.partial[list[Message]]) -> Tier:
    def tier(messages: list[Message]) -> list[Message]:
        return fn(messages)

    tier.__name__ = name
    return tier


def _same(a: Sequence[Message], b: Sequence[Message]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _check_tier(name: str, before: Sequence[Message], after: Sequence[Message]) -> None:
    if not check_pairs(before) and check_pairs(after):
        raise UserError(f"compaction tier {name!r} separated tool calls from their results: "
                        + "; ".join(check_pairs(after)))
