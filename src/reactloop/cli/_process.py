"""For the commands that own their process (``serve``, ``worker``, ``eval``): the garbage
collector after start-up.

Everything alive once a command has started — modules, classes, the agent, its tools, the
server — lives as long as the process. :func:`settle_heap` collects once and then freezes
those objects (:func:`gc.freeze`): the collector no longer walks them in its full collections,
which otherwise revisit them again and again while thousands of runs are alive. The library
itself never changes the collector's settings; only these commands, whose process is theirs.
"""

from __future__ import annotations

import gc

__all__ = ["settle_heap"]


def settle_heap() -> None:
    """Collect, then move every object alive now out of the collector's scans (for good)."""
    gc.collect()
    gc.freeze()
