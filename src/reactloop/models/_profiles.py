"""Capability facts about models, as small pure functions (no SDK imports, no I/O).

Adapters ask these when the user did not say; an explicit argument always wins. A name that is
not known gives None (compaction then does not guess a window).
"""

from __future__ import annotations

__all__ = ["anthropic_context_window", "gemini_context_window", "openai_context_window"]

_Table = tuple[tuple[str, int], ...]

# (name prefix, context window in tokens); the longest matching prefix wins, so more specific
# entries (``gpt-4-turbo``) beat their family (``gpt-4``)
_OPENAI_CONTEXT: _Table = (
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

# every Claude 3 and later model has a 200k window (Sonnet's 1M is an opt-in beta header)
_ANTHROPIC_CONTEXT: _Table = (
    ("claude-", 200_000),
    ("claude-2.0", 100_000),
    ("claude-instant", 100_000),
)

_GEMINI_CONTEXT: _Table = (
    ("gemini-", 1_048_576),  # 2.0, 2.5 and 3 families, flash and pro alike
    ("gemini-1.5-pro", 2_097_152),
    ("gemini-1.0-pro", 32_760),
    ("gemini-pro", 32_760),  # the 1.0 alias
    ("gemma-3", 131_072),
)


def _lookup(table: _Table, name: str, *prefixes: str) -> int | None:
    name = name.strip().lower()
    for prefix in prefixes:  # "openai/gpt-4o", "models/gemini-2.5-flash"
        name = name.removeprefix(prefix)
    best: tuple[int, int] | None = None  # (prefix length, window)
    for prefix, window in table:
        if name.startswith(prefix) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), window)
    return best[1] if best else None


def openai_context_window(name: str) -> int | None:
    """The context window of an OpenAI model family, or None when the name is not known
    (e.g. a model served by an OpenAI-compatible server)."""
    return _lookup(_OPENAI_CONTEXT, name, "openai/")


def anthropic_context_window(name: str) -> int | None:
    """The context window of a Claude model, or None when the name is not a Claude model."""
    return _lookup(_ANTHROPIC_CONTEXT, name, "anthropic/")


def gemini_context_window(name: str) -> int | None:
    """The context window of a Gemini (or Gemma) model, or None when the name is not known."""
    return _lookup(_GEMINI_CONTEXT, name, "models/", "google/")
