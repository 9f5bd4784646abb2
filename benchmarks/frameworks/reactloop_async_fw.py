"""reactloop with an ``async def`` tool: no worker thread and no inline flag needed (the row
the issue-11 targets use: <= 30 us per tool-call iteration, >= 75 % of ideal at 1,000 runs; and
issue 28's, in ``run.py``'s "targets (issue 28)" table). Its import is reactloop's: it takes no
part in the cold start."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from frameworks import reactloop_fw

NAME = "reactloop (async tool)"
DIST = "reactloop"
IMPORT = "import reactloop"
PEER = False
WORKLOADS = ("overhead", "concurrency")


def build(delay: float, n_calls: int, counter: list[int]) -> Callable[[], Awaitable[int]]:
    return reactloop_fw.build(delay, n_calls, counter, async_tool=True)
