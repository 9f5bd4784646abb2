"""Context management (features M2, M3): token counting, memory limits, compaction.

Everything here works on the neutral :class:`~reactloop.Message` model, so it behaves the
same for every provider::

    from reactloop import Agent
    from reactloop.context import Compaction

    agent = Agent(model, max_messages=200, compaction=Compaction(threshold=0.8, keep_last=4))

The pieces are plain functions you can also call yourself: :func:`prune`,
:func:`shorten_tool_results`, :func:`unload_skills`, :class:`Summarize`, :func:`repair`.
"""

from reactloop.context._manager import Compaction, Tier
from reactloop.context._prune import prune
from reactloop.context._summary import Summarize
from reactloop.context._tiers import excerpt, shorten_tool_results, unload_skills
from reactloop.context._tokens import PER_MESSAGE, TokenCounter, estimate_tokens, tiktoken_counter
from reactloop.context._units import Unit, check_pairs, is_prompt, latest_prompt, repair, units

__all__ = [
    "PER_MESSAGE",
    "Compaction",
    "Summarize",
    "Tier",
    "TokenCounter",
    "Unit",
    "check_pairs",
    "estimate_tokens",
    "excerpt",
    "is_prompt",
    "latest_prompt",
    "prune",
    "repair",
    "shorten_tool_results",
    "tiktoken_counter",
    "units",
    "unload_skills",
]
