"""Not a framework: the floor. Each "run" only awaits the fake model's 11 delays, with no loop,
no tools and no messages, so the concurrency row shows what bare asyncio reaches on this
machine (the best any asyncio framework could do)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

NAME = "bare asyncio (floor)"
DIST = "python"
IMPORT = "import asyncio"
PEER = False
WORKLOADS = ("concurrency",)


def build(delay: float, n_calls: int, counter: list[int]) -> Callable[[], Awaitable[int]]:
    async def run_once() -> int:
        for _ in range(n_calls + 1):
            counter[0] += 1
            if delay:
                await asyncio.sleep(delay)
        counter[1] += n_calls
        return n_calls

    return run_once
