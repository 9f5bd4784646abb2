"""What a model can take of a message's attachments, decided in one place.

Each model declares the media types it reads natively (:attr:`Model.accepts`). Before a
request goes out, :class:`Fitter` gives the model what it can take:

- text documents (plain, Markdown, CSV, HTML, JSON) always go as text, in a ``<document>``
  block after the message's text — every model reads text, and this is faithful;
- a PDF goes as a PDF to a model that accepts ``application/pdf``; any other model gets its
  text, extracted with pypdf (``pip install 'reactloop[pdf]'``), and the run's trace says so
  (a ``custom`` event named ``attachment_as_text``);
- an image goes to a model that accepts its type. A prompt with an image for a model that
  cannot see is refused before any model call (:func:`check_accepts`); an image already in the
  history (a tool's picture, an earlier turn with another model) is replaced by a line saying
  what was left out and why, and the trace says so (``attachment_omitted``).

Conversions are deterministic and cached by content hash, so the request prefix stays
byte-stable from one iteration to the next.

Where a runtime loads the bytes itself just before the model call (a Temporal workflow holds
references only; its model activity reads the bytes from the attachment store), it sets
:data:`resolve_later`: the :class:`Fitter` then passes bare references on unchanged (and tells
the trace what will happen to them), and that runtime fits them once it has the bytes.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

from reactloop.attachments import Attachment, Document, Image
from reactloop.errors import UserError
from reactloop.messages import Message

__all__ = ["Fitter", "accepted", "check_accepts", "document_text", "resolve_later"]

resolve_later: ContextVar[bool] = ContextVar("reactloop_resolve_later", default=False)
"""True where the runtime loads attachment bytes itself before the model call (see the
module docstring); a :class:`Fitter` made there passes bare references on."""

_TEXT_CACHE: dict[str, str] = {}
_TEXT_CACHE_SIZE = 256


_NOTHING: frozenset[str] = frozenset()


def accepted(model: object) -> frozenset[str]:
    """The media types ``model`` reads natively (none for a text-only model)."""
    media = getattr(model, "accepts", ())
    return frozenset(media) if media else _NOTHING


def _model_name(model: object) -> str:
    """``provider:name``, or the name alone when it names its provider (``local:…``)."""
    name = str(getattr(model, "name", model))
    return name if ":" in name else f"{getattr(model, 'provider', '')}:{name}".lstrip(":")


def check_accepts(model: object, parts: Sequence[Attachment]) -> None:
    """Refuse, before any call, a prompt with a part ``model`` cannot take and reactloop
    cannot convert faithfully (an image for a text-only model, a PDF by URL, ...)."""
    accepts = accepted(model)
    for part in parts:
        if part.media_type in accepts:
            continue
        if isinstance(part, Image):
            raise UserError(
                f"model {_model_name(model)} cannot see images ({part.label()}): use a model "
                "that can (openai:gpt-4o, anthropic:claude-sonnet-4-5, gemini:gemini-2.5-flash), "
                "or describe the image in text")
        if isinstance(part, Document) and part.url is not None:
            raise UserError(
                f"model {_model_name(model)} cannot read a document by URL ({part.label()}) "
                "and reactloop does not fetch URLs: download it and pass "
                "Document.from_path(...)")
        if isinstance(part, Document):
            document_text(part)  # a PDF that cannot be read fails here, before anything is stored


def document_text(doc: Document) -> str:
    """The text of a document (a PDF's extracted with pypdf), cached by content hash.

    Raises:
        UserError: the PDF cannot be read (corrupt, encrypted) or pypdf is not installed.
    """
    if doc.data is None:
        raise UserError(f"{doc.label()} has no bytes here (a reference whose data was not "
                        "loaded): read it from its session store or pass the file again")
    if doc.media_type != "application/pdf":
        return doc.data.decode("utf-8")
    hit = _TEXT_CACHE.get(doc.sha256)
    if hit is None:
        hit = _pdf_text(doc)
        if len(_TEXT_CACHE) >= _TEXT_CACHE_SIZE:
            _TEXT_CACHE.clear()
        _TEXT_CACHE[doc.sha256] = hit
    return hit


def _pdf_text(doc: Document) -> str:
    try:
        import pypdf
    except ImportError:
        raise UserError(f"reading the text of {doc.label()} needs pypdf: pip install "
                        "'reactloop[pdf]' (or use a model that reads PDFs)") from None
    assert doc.data is not None
    try:
        reader = pypdf.PdfReader(io.BytesIO(doc.data), strict=False)
        if reader.is_encrypted:
            raise UserError(f"{doc.label()} is encrypted: pass an unencrypted copy")
        pages = [page.extract_text() or "" for page in reader.pages]
    except UserError:
        raise
    except Exception as exc:  # pypdf raises many types for damaged files
        raise UserError(f"{doc.label()} cannot be read as a PDF ({type(exc).__name__}: "
                        f"{str(exc)[:200]}): the file is damaged; pass a good copy") from None
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    return text or "(the PDF has no extractable text; it may be scanned images)"


def as_text_block(doc: Document, text: str) -> str:
    name = f' name="{doc.name}"' if doc.name else ""
    return f'<document{name} type="{doc.media_type}">\n{text}\n</document>'


class Fitter:
    """Turns a history into what one model can take (see the module docstring).

    ``emit(name, data)`` tells the trace about each conversion, once per attachment and run.
    """

    __slots__ = ("_done", "_later", "_told", "accepts", "emit", "model")  # one per run

    def __init__(self, model: object, emit: Callable[[str, Any], None]) -> None:
        self.model = model
        self.accepts = accepted(model)
        self.emit = emit
        # made on the first attachment (most runs have none: two containers less per run)
        self._told: set[str] | None = None
        self._done: dict[int, tuple[Message, Message]] | None = None
        self._later = resolve_later.get()

    def messages(self, messages: Sequence[Message]) -> tuple[Message, ...]:
        """``messages`` with every attachment the model cannot take converted or noted."""
        out = tuple(messages)
        for m in out:
            if m.attachments:
                break
        else:
            return out  # the common case: nothing to fit, no new objects
        return tuple(self._fit(m) if m.attachments else m for m in out)

    def _fit(self, m: Message) -> Message:
        if self._done is None:
            self._done = {}
        hit = self._done.get(id(m))
        if hit is not None and hit[0] is m:
            return hit[1]
        keep: list[Attachment] = []
        texts: list[str] = [m.content] if m.content else []
        for part in m.attachments:
            if part.media_type in self.accepts and part.available:
                keep.append(part)
            elif self._later and not part.available:  # fitted where its bytes are loaded
                keep.append(part)
                self._tell_later(part)
            elif isinstance(part, Document) and part.url is None:
                texts.append(as_text_block(part, document_text(part)))
                if part.media_type == "application/pdf":
                    self._tell("attachment_as_text", part, "the model does not read PDFs: "
                               "it was sent the text pypdf extracted")
            else:
                texts.append(f"({part.label()} left out: model {_model_name(self.model)} "
                             f"cannot take {part.media_type or 'it'})")
                self._tell("attachment_omitted", part, "the model cannot take it")
        fitted = Message(m.role, "\n\n".join(texts), m.tool_calls, m.tool_call_id, m.name,
                         m.is_error, m.metadata, m.provider_details, tuple(keep))
        self._done[id(m)] = (m, fitted)
        return fitted

    def _tell_later(self, part: Attachment) -> None:
        """What the runtime that loads ``part``'s bytes will do with it, told now (as the
        trace of a run that had the bytes says it)."""
        if part.media_type in self.accepts:
            return
        if isinstance(part, Document):
            if part.media_type == "application/pdf":
                self._tell("attachment_as_text", part, "the model does not read PDFs: it is "
                           "sent the text pypdf extracts")
        else:
            self._tell("attachment_omitted", part, "the model cannot take it")

    def _tell(self, name: str, part: Attachment, why: str) -> None:
        if self._told is None:
            self._told = set()
        if part.sha256 not in self._told:
            self._told.add(part.sha256)
            self.emit(name, {**part.ref(), "model": _model_name(self.model), "why": why})
