"""Retrieved context (``Agent(context_providers=[fn])``) as an extension.

Each provider is called once per run with the prompt; its text goes at the end of every
request of that run (the ``retrieved`` volatile section). A provider that raises does not end
the run: the run goes on without that provider's text and a ``warning`` event says why.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reactloop.events import WarningEvent
from reactloop.extensions._base import Extension
from reactloop.run_context import RunContext

__all__ = ["ContextProvider", "RetrievedContext"]

ContextProvider = Callable[[str], Any]
"""``fn(prompt) -> str | None`` (sync or async): retrieved context for one turn."""


class RetrievedContext(Extension):
    key = "retrieved"
    start_does_io = True  # the providers call out: a workflow runs start in an activity

    def __init__(self, providers: Sequence[ContextProvider]) -> None:
        self.providers = tuple(providers)

    async def start(self, ctx: RunContext) -> None:
        if isinstance(ctx.state.get(self.key), list):  # a resumed run keeps what it had
            return
        texts: list[str] = []
        for fn in self.providers:
            try:
                text = fn(ctx.prompt)
                if inspect.isawaitable(text):
                    text = await text
            except Exception as exc:
                name = getattr(fn, "__qualname__", repr(fn))
                ctx.emit(WarningEvent(ctx.run_id, "context_provider",
                                      f"context provider {name} failed ({type(exc).__name__}: "
                                      f"{exc}); the run goes on without its context"))
                continue
            if text:
                texts.append(str(text))
        ctx.state[self.key] = texts

    def notes(self, ctx: RunContext) -> Mapping[str, str | None]:
        texts = ctx.state.get(self.key)
        return {"retrieved": "\n\n".join(texts)} if texts else {}
