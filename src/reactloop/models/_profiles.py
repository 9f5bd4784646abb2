"""Capability facts about models, as small pure functions (no SDK imports, no I/O).

Adapters ask these when the user did not say; an explicit argument always wins.
"""

from __future__ import annotations

__all__ = ["openai_context_window"]

# (name prefix, context window in tokens); the longest matching prefix wins, so more specific
# entries (``gpt-4-turbo``) beat their family (``gpt-4``)
_OPENAI_CONTEXT: tuple[tuple[str, int], ...] = (
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4-32k", 32_768),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("o1-mini", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
)


def openai_context_window(name: str) -> int | None:
    """The context window of an OpenAI model family, or None when the name is not known
    (e.g. a model served by an OpenAI-compatible server)."""
    name = name.strip().lower().removeprefix("openai/")
    best: tuple[int, int] | None = None  # (prefix length, window)
    for prefix, window in _OPENAI_CONTEXT:
        if name.startswith(prefix) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), window)
    return best[1] if best else None
