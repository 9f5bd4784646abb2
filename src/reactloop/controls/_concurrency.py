"""A per-model limit on calls in flight, shared by every run in the process.

``Agent(model_concurrency=8)``: at most 8 calls to the agent's model at once, counted across
every run on the event loop that uses the same model with the same limit — the server's
sessions, ``eval --concurrency``, many ``asyncio.gather``-ed runs — so a burst queues here
instead of turning into a provider's 429s. Off unless set (no pool, no lock).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable

from reactloop.models._base import Model

__all__ = ["acquire", "pool", "pool_key"]

_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop,
                                  dict[tuple[str, int], asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary())


def pool_key(model: Model) -> str:
    """Which model a slot is for: provider, name and endpoint (two servers are two pools)."""
    base = getattr(model, "base_url", None)
    return f"{model.provider}:{model.name}" + (f"@{base}" if base else "")


def pool(key: str, size: int) -> asyncio.Semaphore:
    """The process's (this event loop's) pool of ``size`` slots for ``key``."""
    loop = asyncio.get_running_loop()
    pools = _pools.get(loop)
    if pools is None:
        pools = _pools[loop] = {}
    sem = pools.get((key, size))
    if sem is None:
        sem = pools[(key, size)] = asyncio.Semaphore(size)
    return sem


async def acquire(sem: asyncio.Semaphore, clock: Callable[[], float]) -> float:
    """Take a slot; the seconds spent waiting for it (0.0 when one was free)."""
    if not sem.locked():
        await sem.acquire()
        return 0.0
    started = clock()
    await sem.acquire()
    return clock() - started
