"""Token counting per model family, cached per message (feature M3).

Which counter a model gets (:meth:`TokenCounter.for_model`):

1. a model that overrides :meth:`Model.count_tokens` counts with its own tokenizer (the
   embedded GGUF model uses llama.cpp's, so the counts are exact);
2. a model whose name tiktoken recognises (``gpt-4o``, ``o3``, ``openai:gpt-4.1``…) uses
   tiktoken, *if* tiktoken is installed and the encoding is already in its local cache — we
   never download during a run (warm the cache once with
   ``python -c "import tiktoken; tiktoken.get_encoding('o200k_base')"``);
3. everything else uses the documented estimate of :meth:`Model.count_tokens`: one token per
   4 characters, rounded up. For English prose and JSON this is within about 20% of the real
   tokenizers of Claude, Gemini and Llama-family models, which is precise enough to decide
   when to compact.

Each message adds :data:`PER_MESSAGE` tokens for the role and delimiters, as chat templates do.
Attachments count by a documented estimate (:func:`attachment_tokens`): an image
:data:`IMAGE_TOKENS` (less for a small PNG or GIF), a PDF :data:`PDF_PAGE_TOKENS` a page, a
text document its text.
Counts are cached per message object, so a long conversation is not re-counted on every
iteration: the loop keeps the same immutable :class:`Message` objects from one request to the
next and only new ones are counted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from reactloop.attachments import Attachment
from reactloop.messages import Message, ModelRequest, ToolSpec
from reactloop.models._base import Model

__all__ = ["PER_MESSAGE", "TokenCounter", "estimate_tokens", "tiktoken_counter"]

PER_MESSAGE = 4
"""Tokens added per message for the role and the template's delimiters."""
_CACHE_SIZE = 16_384  # cached message counts; the whole cache is dropped when it overflows
_TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


IMAGE_TOKENS = 1_600
"""The estimate for an image: about what Anthropic charges for a full-size picture (OpenAI's
high detail charges 765 for a 1024×1024 one); a smaller PNG or GIF counts
``width × height / 750``, Anthropic's rule."""
PDF_PAGE_TOKENS = 2_000
"""The estimate per PDF page (text plus the page image providers add)."""


def attachment_tokens(part: Attachment, count_text: Callable[[str], int]) -> int:
    """The documented estimate of one attachment's tokens (see :data:`IMAGE_TOKENS`,
    :data:`PDF_PAGE_TOKENS`; a text document counts as its text)."""
    data = part.data
    if part.kind == "image":
        size = _pixels(data) if data is not None else None
        return IMAGE_TOKENS if size is None else max(1, min(IMAGE_TOKENS, size // 750))
    if data is None:
        return PDF_PAGE_TOKENS
    if part.media_type == "application/pdf":
        return PDF_PAGE_TOKENS * max(1, len(_PAGE.findall(data)))
    return count_text(data.decode("utf-8", "replace"))


_PAGE = re.compile(rb"/Type\s*/Page(?![s\w])")


def _pixels(data: bytes) -> int | None:
    """Width × height of a PNG or GIF from its header; None for other types."""
    if data.startswith(b"\x89PNG") and len(data) >= 24:
        return int.from_bytes(data[16:20], "big") * int.from_bytes(data[20:24], "big")
    if data.startswith(b"GIF") and len(data) >= 10:
        return int.from_bytes(data[6:8], "little") * int.from_bytes(data[8:10], "little")
    return None


def estimate_tokens(text: str) -> int:
    """The documented estimate: one token per 4 characters, rounded up."""
    return (len(text) + 3) // 4


def _tiktoken_cached(encoding: str) -> bool:
    """Whether tiktoken can load ``encoding`` without the network (mirrors tiktoken.load)."""
    import hashlib
    import os
    import tempfile

    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR", os.environ.get("DATA_GYM_CACHE_DIR"))
    if cache_dir is None:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not cache_dir:
        return False
    key = hashlib.sha1(_TIKTOKEN_URL.format(encoding).encode()).hexdigest()
    return os.path.isfile(os.path.join(cache_dir, key))


def tiktoken_counter(model_name: str, *, allow_download: bool = False
                     ) -> Callable[[str], int] | None:
    """A tiktoken counter for ``model_name`` (``"gpt-4o"``, ``"openai:o3"``), or ``None`` when
    tiktoken is missing, does not know the model, or would have to download the encoding."""
    try:
        import tiktoken
        from tiktoken.model import encoding_name_for_model
    except ImportError:
        return None
    name = model_name.split(":", 1)[-1]
    try:
        encoding_name = encoding_name_for_model(name)
    except KeyError:
        return None
    if not allow_download and not _tiktoken_cached(encoding_name):
        return None
    try:
        encoding = tiktoken.get_encoding(encoding_name)
    except Exception:  # a corrupt cache or no network: fall back to the estimate
        return None

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    return count


class TokenCounter:
    """Counts the tokens of messages, tool specs and whole requests for one model family.

    Args:
        count_text: tokens in a string.
        family: a short name for logs and events (``"tiktoken"``, ``"model"``, ``"estimate"``).
        sent_tools: the tools a request's prompt holds (:meth:`Model.sent_tools`; None: all
            of the run's).
    """

    def __init__(self, count_text: Callable[[str], int], family: str = "estimate", *,
                 sent_tools: Callable[[ModelRequest], tuple[ToolSpec, ...]] | None = None
                 ) -> None:
        self.count_text = count_text
        self.family = family
        self.sent_tools = sent_tools
        """The tools a request's prompt holds (None: all of the run's, ``all_tools``)."""
        # the estimate only needs the length, which str() gives faster than JSON
        self._arguments: Callable[[Any], str] = str if family == "estimate" else _dumps
        # id(message) -> (message, tokens); holding the message keeps its id from being reused.
        # The caches are plain dicts: single dict operations are atomic, and a race at worst
        # counts a message twice.
        self._messages: dict[int, tuple[Message, int]] = {}
        self._texts: dict[str, int] = {}
        self._tools: dict[int, tuple[ToolSpec, int]] = {}

    @classmethod
    def for_model(cls, model: Model) -> TokenCounter:
        """The best counter available offline for ``model`` (see the module docstring)."""
        sent = model.sent_tools if type(model).sent_tools is not Model.sent_tools else None
        if type(model).count_tokens is not Model.count_tokens:
            return cls(model.count_tokens, "model", sent_tools=sent)
        counter = tiktoken_counter(model.name)
        if counter is not None:
            return cls(counter, "tiktoken", sent_tools=sent)
        return cls(model.count_tokens, "estimate", sent_tools=sent)

    # -- pieces --------------------------------------------------------------------------------
    def text(self, text: str) -> int:
        """Tokens in ``text`` (cached for strings that recur, such as the system prompt)."""
        if not text:
            return 0
        n = self._texts.get(text)
        if n is None:
            n = self.count_text(text)
            if len(self._texts) > 256:
                self._texts.clear()
            self._texts[text] = n
        return n

    def message(self, message: Message) -> int:
        """Tokens of one message, including :data:`PER_MESSAGE`; cached per message object."""
        hit = self._messages.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        n = PER_MESSAGE + self.count_text(message.content) if message.content else PER_MESSAGE
        for call in message.tool_calls:
            n += self.count_text(call.name + " " + self._arguments(call.arguments))
        if message.name:
            n += 1
        for part in message.attachments:
            n += attachment_tokens(part, self.count_text)
        if len(self._messages) >= _CACHE_SIZE:  # dict operations are atomic: no lock needed
            self._messages.clear()
        self._messages[id(message)] = (message, n)
        return n

    def messages(self, messages: Iterable[Message]) -> int:
        return sum(self.message(m) for m in messages)

    def tools(self, specs: tuple[ToolSpec, ...]) -> int:
        """Tokens of the tool definitions (as JSON, which is close to what providers send);
        cached per spec object (a tool keeps its spec object from run to run)."""
        total = 0
        for spec in specs:
            hit = self._tools.get(id(spec))
            if hit is not None and hit[0] is spec:
                total += hit[1]
                continue
            n = self.count_text(_dumps({"name": spec.name, "description": spec.description,
                                        "parameters": spec.parameters}))
            if len(self._tools) > 4096:
                self._tools.clear()
            self._tools[id(spec)] = (spec, n)
            total += n
        return total

    def notes(self, notes: tuple[str, ...]) -> int:
        """The notes go out as one trailing user message (``ModelRequest.messages_with_notes``)."""
        if not notes:
            return 0
        return PER_MESSAGE + sum(self.count_text(n) for n in notes)

    def request(self, request: ModelRequest, history: int | None = None) -> dict[str, int]:
        """Tokens per section: ``system``, ``tools``, ``history``, ``notes`` and ``total``
        (``history``: the messages' count when the caller already knows it)."""
        sizes = {
            "system": self.text(request.system),
            "tools": self.tools(request.all_tools if self.sent_tools is None
                                else self.sent_tools(request)),
            "history": self.messages(request.messages) if history is None else history,
            "notes": self.notes(request.notes),
        }
        sizes["total"] = sum(sizes.values())
        return sizes

    def __repr__(self) -> str:
        return f"TokenCounter({self.family!r})"


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)
