"""A small tool the lever tests offer beside the demo tools: it shares words ("count", "word")
with many questions, so a lever that routes by words alone would pick it."""

from __future__ import annotations

from reactloop import tool


@tool
def count_letters(word: str) -> int:
    """Count the letters in a word.

    Args:
        word: the word whose letters to count
    """
    return len(word)
