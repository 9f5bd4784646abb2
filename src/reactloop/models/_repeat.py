"""A repetition guard for guided answers: a tiny model sometimes writes the same apology
until the size cap. Two parts, both pure and tested on their own:

- :class:`NoRepeatNgram`, a llama.cpp logits processor: inside an answer, a token that would
  complete an n-gram the reply already contains is pushed down hard (not forbidden: where the
  grammar allows nothing else, it is still taken), so the model closes the answer instead;
- :func:`collapse_repeats`, which removes a sentence the answer already said.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Any

__all__ = ["NGRAM", "PENALTY", "NoRepeatNgram", "collapse_repeats", "counting", "degenerate",
           "repeat_guard"]

NGRAM = 6
"""Tokens in an n-gram that may not occur twice in one answer."""
PENALTY = 50.0
"""Subtracted from the logit of a token that would repeat an n-gram."""
CLOSING = 1e4
"""Subtracted from every logit but the closing quote's once the answer went degenerate."""


class NoRepeatNgram:
    """``processor(input_ids, scores)``: push down tokens that would repeat an n-gram of the
    reply generated so far (the prompt does not count).

    Args:
        is_answer: decides from the first generated tokens whether the reply is an answer
            (tool calls are left alone: their JSON repeats keys by design).
        n: the n-gram length.
    """

    def __init__(self, is_answer: Callable[[Sequence[int]], bool | None], n: int = NGRAM,
                 close: tuple[int, Callable[[list[int]], bytes]] | None = None) -> None:
        self.is_answer, self.n, self.close = is_answer, n, close
        self._prompt: int | None = None
        self._answer: bool | None = None
        self._closed = False
        self._forced = False

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self._prompt is None:
            self._prompt = len(input_ids)  # called first before the first generated token
        out = [int(i) for i in input_ids[self._prompt:]]
        if self._answer is None:
            self._answer = self.is_answer(out)
            if self._answer is None:
                return scores
        if self._forced and out and self.close is not None and out[-1] == self.close[0]:
            self._closed = True  # the quote forced came out (not where a number forbade it)
        if not self._answer or len(out) < self.n or self._closed:
            # once the string is closed the grammar ends the reply ("}"): the quote is not
            # pushed again (with -inf it left no token at all: llama.cpp aborted)
            return scores
        if self.close is not None and degenerate(
                self.close[1](out[-TAIL:]).decode("utf-8", "ignore")):
            quote = self.close[0]  # the answer's string closes now: its quote first
            kept = scores[quote]
            scores -= CLOSING  # not -inf: where the grammar forbids the quote (inside a
            scores[quote] = kept  # number it restricts), what it allows must stay finite
            self._forced = True
            return scores
        for token in repeating(out, self.n):
            scores[token] -= PENALTY
        return scores


TAIL = 96
"""Tokens of the answer's end that :func:`degenerate` looks at."""
_EMPTY_ITEMS = re.compile(r"(?:(?:\\n|\n)\s*(?:[-*•]|\d+[.)])\s*){3}$")
_SAME_LINES = re.compile(r"(?:\\n|\n)([^\n\\]{1,80})(?:(?:\\n|\n)\1){2}$")
_NUMBER = re.compile(r"\d+")
COUNTING = 5
"""Steps of one in a row (among numbers of two digits or more) that make an answer's end a
count ("4505, 4506; 4506, 4507; ..."): a tiny model copying a long table sometimes counts on
to the size cap."""


def counting(tail: str) -> bool:
    """Whether ``tail`` ends counting: its last numbers (two digits or more) only repeat or
    step up by one, with at least :data:`COUNTING` steps of one (the first number is left
    out: the tail may begin inside it)."""
    numbers = [int(n) for n in _NUMBER.findall(tail)[1:][-2 * COUNTING - 1:]]
    if len(numbers) <= COUNTING or min(numbers) < 10:
        return False
    steps = [b - a for a, b in pairwise(numbers)]
    return all(step in (0, 1) for step in steps) and steps.count(1) >= COUNTING


def degenerate(tail: str) -> bool:
    """Whether an answer's end has gone degenerate: three list markers without content
    ("\\n-\\n-\\n-"), the same line three times in a row, or a count (:func:`counting`)."""
    tail = tail.rstrip(" ")
    return bool(_EMPTY_ITEMS.search(tail) or _SAME_LINES.search(tail) or counting(tail))


def repeating(tokens: Sequence[int], n: int) -> set[int]:
    """The tokens that would complete an n-gram already in ``tokens``."""
    head = list(tokens[len(tokens) - (n - 1):])
    return {tokens[i + n - 1] for i in range(len(tokens) - n + 1)
            if list(tokens[i:i + n - 1]) == head}


_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")


def collapse_repeats(text: str) -> str:
    """``text`` without the sentences it already said (compared without case and spaces)."""
    seen: set[str] = set()
    kept = []
    for sentence in _SENTENCE.findall(text):
        key = " ".join(sentence.split()).lower().strip(" .!?")
        if key and key in seen:
            continue
        seen.add(key)
        kept.append(sentence)
    return "".join(kept).strip()


def repeat_guard(llm: Any) -> Any:
    """A :class:`NoRepeatNgram` for a llama.cpp model ``llm``, as llama.cpp's logits processors."""
    from llama_cpp import LogitsProcessorList

    def is_answer(tokens: Sequence[int]) -> bool | None:
        head = llm.detokenize(list(tokens)).decode("utf-8", "ignore").replace(" ", "")
        if head.startswith('{"answer"'):
            return True
        return False if len(head) >= 9 else None

    quote = llm.tokenize(b'"', add_bos=False)[-1]  # a degenerate answer closes its string
    return LogitsProcessorList([NoRepeatNgram(is_answer, close=(quote, lambda t: llm.detokenize(t)))])
