"""Images and documents in messages: :class:`Image` and :class:`Document`, both
:class:`Attachment` s.

An attachment is a value: bytes (or a URL) with a media type, named by the SHA-256 of its
bytes. A message carries its attachments beside its text (``Message.attachments``); wherever a
message is serialised — the session stores, a saved run, a server's response — an attachment
is written as a small reference (:meth:`Attachment.ref`) and its bytes are kept once per
content hash apart from the messages (a blob table, the ``attachments`` section of a saved
run), so a conversation that repeats its history does not repeat the bytes.

Every constructor checks what it is given before anything is stored or sent: the size (at
most :data:`MAX_PART_BYTES`), that the bytes are what the media type claims (the magic bytes
of PNG, JPEG, GIF, WebP and PDF; UTF-8 for text), and that a URL is public (reactloop never
fetches URLs; it passes them to the provider, and refuses loopback, private and link-local
addresses so that no provider is pointed at one).

    from reactloop import Agent, Image

    agent.run_sync(["What is in this picture?", Image.from_path("shot.png")])
"""

from __future__ import annotations

import base64
import ipaddress
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

from reactloop.errors import UserError

__all__ = [
    "DOCUMENT_TYPES",
    "IMAGE_TYPES",
    "MAX_ATTACHMENTS",
    "MAX_PART_BYTES",
    "Attachment",
    "AttachmentKind",
    "Document",
    "Image",
    "Prompt",
    "attachment_from_path",
    "attachment_from_ref",
    "split_prompt",
]

AttachmentKind = Literal["image", "document"]

MAX_PART_BYTES = 20 * 1024 * 1024
"""The largest attachment reactloop accepts (20 MiB, what the strictest provider takes for an
image inline); larger bytes are refused before they are read whole."""
MAX_ATTACHMENTS = 100
"""The most attachments one prompt (or one tool result) may carry."""

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""Image types every provider family takes."""
DOCUMENT_TYPES = ("application/pdf", "text/plain", "text/markdown", "text/csv", "text/html",
                  "application/json")
"""Document types reactloop checks and can turn into text for a text-only model."""

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
)
_LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa")


def _guess_type(name: str) -> tuple[str | None, str | None]:
    import mimetypes  # on first use: it reads the system's type tables

    return mimetypes.guess_type(name)


def sniff(data: bytes) -> str | None:
    """The media type the first bytes of ``data`` announce (images and PDF), or ``None``."""
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _size_text(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MiB" if n >= 1024 * 1024 else f"{n:,} bytes"


def _too_large(what: str, size: int) -> UserError:
    return UserError(f"{what} is {_size_text(size)}; an attachment may be at most "
                     f"{_size_text(MAX_PART_BYTES)}: shrink or split it (or send a URL)")


@dataclass(frozen=True, slots=True)
class Attachment:
    """Bytes (or a URL) with a media type; the base of :class:`Image` and :class:`Document`.

    Build one with :meth:`from_path`, :meth:`from_bytes` or :meth:`from_url`. Two attachments
    with the same bytes are equal (and stored once), whatever their names.
    """

    kind: ClassVar[AttachmentKind]
    media_type: str
    """``image/png``, ``application/pdf``…; ``""`` for a URL whose type is not known."""
    data: bytes | None = field(default=None, repr=False, compare=False)
    """The bytes; ``None`` for a URL, or for a reference whose bytes were not loaded."""
    url: str | None = None
    """A public http(s) URL the provider fetches (reactloop never does)."""
    name: str | None = field(default=None, compare=False)
    """A file name to show (and to give providers that want one)."""
    sha256: str = ""
    """Hex SHA-256 of the bytes (of the URL for a URL): the attachment's identity."""
    size: int = 0
    """Bytes (0 for a URL)."""

    def __post_init__(self) -> None:
        if self.data is not None:
            data = bytes(self.data)  # a bytearray or memoryview becomes immutable bytes
            object.__setattr__(self, "data", data)
            if len(data) > MAX_PART_BYTES:
                raise _too_large(f"{self.kind} {self.name or ''}".rstrip(), len(data))
            self._check_bytes(data)
            if not self.sha256:
                object.__setattr__(self, "sha256", _sha256(data).hexdigest())
            object.__setattr__(self, "size", len(data))
        elif self.url is not None:
            _check_url(self.url)
            if not self.sha256:
                object.__setattr__(self, "sha256",
                                   _sha256(self.url.encode()).hexdigest())
        elif not self.sha256:
            raise UserError(f"an {type(self).__name__} needs bytes, a URL or a content hash: "
                            f"use {type(self).__name__}.from_path, .from_bytes or .from_url")

    # -- constructors ---------------------------------------------------------------------
    @classmethod
    def from_bytes(cls, data: bytes, media_type: str | None = None, *,
                   name: str | None = None) -> Any:
        """An attachment of ``data``; ``media_type`` is found from the bytes when not given,
        and checked against them when given."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise UserError(f"{cls.__name__}.from_bytes takes bytes, got "
                            f"{type(data).__name__}")
        data = bytes(data)
        return cls(cls._media_type(data, media_type, name), data, name=name)

    @classmethod
    def from_path(cls, path: str | os.PathLike[str], media_type: str | None = None) -> Any:
        """An attachment of the file at ``path`` (its size is checked before it is read)."""
        p = Path(path).expanduser()
        try:
            size = p.stat().st_size
            if size > MAX_PART_BYTES:
                raise _too_large(str(p), size)
            with p.open("rb") as f:
                data = f.read(MAX_PART_BYTES + 1)  # bounded even if the file grows meanwhile
        except OSError as exc:
            raise UserError(f"cannot read {p} ({exc.strerror or exc}): pass the path of a "
                            "readable file") from None
        if len(data) > MAX_PART_BYTES:
            raise _too_large(str(p), len(data))
        guessed = media_type or _guess_type(p.name)[0]
        if media_type is None and guessed is not None and sniff(data) is not None:
            guessed = None  # the bytes know better than the file name
        return cls(cls._media_type(data, guessed, p.name), data, name=p.name)

    @classmethod
    def from_url(cls, url: str, media_type: str | None = None) -> Any:
        """An attachment the provider fetches from ``url`` (public http or https only)."""
        if not isinstance(url, str):
            raise UserError(f"{cls.__name__}.from_url takes a URL string, got "
                            f"{type(url).__name__}")
        _check_url(url)
        path = urlsplit(url).path
        guessed = media_type or _guess_type(path)[0] or ""
        if guessed and not cls._fits(guessed):
            raise UserError(f"{url} is {guessed}, not {cls._what()}: use "
                            f"{'Document' if cls.kind == 'image' else 'Image'}.from_url")
        return cls(guessed, url=url, name=path.rsplit("/", 1)[-1] or None)

    # -- what subclasses decide -----------------------------------------------------------
    @classmethod
    def _media_type(cls, data: bytes, claimed: str | None, name: str | None) -> str:
        raise NotImplementedError

    @classmethod
    def _fits(cls, media_type: str) -> bool:
        raise NotImplementedError

    @classmethod
    def _what(cls) -> str:
        raise NotImplementedError

    def _check_bytes(self, data: bytes) -> None:
        raise NotImplementedError

    # -- serialisation --------------------------------------------------------------------
    def ref(self) -> dict[str, Any]:
        """The attachment as a JSON reference: everything but the bytes."""
        d: dict[str, Any] = {"kind": self.kind, "media_type": self.media_type,
                             "sha256": self.sha256}
        if self.url is not None:
            d["url"] = self.url
        else:
            d["size"] = self.size
        if self.name:
            d["name"] = self.name
        return d

    @property
    def available(self) -> bool:
        """True when the bytes or a URL are at hand (a bare reference is not)."""
        return self.data is not None or self.url is not None

    def label(self) -> str:
        """One line for logs and text-only renderings: kind, name, type and size."""
        what = self.name or self.url or self.sha256[:12]
        size = f", {_size_text(self.size)}" if self.size else ""
        return f"[{self.kind} {what} ({self.media_type or 'unknown type'}{size})]"

    def bytes_or_error(self) -> bytes:
        """The bytes, or a :class:`UserError` for a reference whose bytes are not loaded."""
        if self.data is None:
            raise UserError(f"{self.label()} has no bytes here (a reference whose data was "
                            "not loaded): read the history from its session store, or attach "
                            "the file again")
        return self.data

    def base64(self) -> str:
        """The bytes as base64 text (what the provider APIs take inline)."""
        return base64.b64encode(self.bytes_or_error()).decode("ascii")

    def data_url(self) -> str:
        """``data:<media type>;base64,...`` — or the URL, for a URL attachment."""
        if self.url is not None:
            return self.url
        return f"data:{self.media_type};base64,{self.base64()}"

    def with_data(self, data: bytes) -> Any:
        """This reference with its bytes loaded (checked against its hash)."""
        if _sha256(data).hexdigest() != self.sha256:
            raise UserError(f"the bytes given for {self.label()} do not match its sha256")
        return type(self)(self.media_type, data, name=self.name, sha256=self.sha256)


def _check_url(url: str) -> None:
    """Refuse what is not a public http(s) URL (see the module docstring)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"attachment URL {url[:200]!r} is not an http(s) URL: pass a public "
                        "https URL, or the file itself (from_path / from_bytes)")
    host = parts.hostname.rstrip(".").lower()
    private = host in _LOCAL_NAMES or host.endswith(_LOCAL_SUFFIXES) or "." not in host
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        private = not ip.is_global or ip.is_multicast
    if private:
        raise UserError(f"attachment URL {url[:200]!r} points at a local or private address; "
                        "reactloop sends only public URLs to a provider: read the file and "
                        "pass its bytes (from_path / from_bytes)")


@dataclass(frozen=True, slots=True)
class Image(Attachment):
    """A picture: PNG, JPEG, GIF or WebP (the bytes must be what the type says)."""

    kind: ClassVar[AttachmentKind] = "image"

    @classmethod
    def _fits(cls, media_type: str) -> bool:
        return media_type.startswith("image/")

    @classmethod
    def _what(cls) -> str:
        return "an image"

    @classmethod
    def _media_type(cls, data: bytes, claimed: str | None, name: str | None) -> str:
        found = sniff(data)
        if found is None or not found.startswith("image/"):
            what = "a PDF" if found == "application/pdf" else "not an image reactloop knows"
            raise UserError(f"{name or 'the data'} is {what} (PNG, JPEG, GIF and WebP are); "
                            "pass an image file, or use Document for documents")
        if claimed is not None and claimed != found:
            raise UserError(f"{name or 'the image'} claims {claimed} but its bytes are "
                            f"{found}: pass media_type={found!r} or leave it out")
        return found

    def _check_bytes(self, data: bytes) -> None:
        self._media_type(data, self.media_type, self.name)


@dataclass(frozen=True, slots=True)
class Document(Attachment):
    """A document: PDF, or text (plain, Markdown, CSV, HTML, JSON; UTF-8)."""

    kind: ClassVar[AttachmentKind] = "document"

    @classmethod
    def _fits(cls, media_type: str) -> bool:
        return media_type in DOCUMENT_TYPES

    @classmethod
    def _what(cls) -> str:
        return "a document"

    @classmethod
    def _media_type(cls, data: bytes, claimed: str | None, name: str | None) -> str:
        found = sniff(data)
        if found is not None and found.startswith("image/"):
            raise UserError(f"{name or 'the data'} is an image ({found}): use Image")
        media_type = claimed or found or "text/plain"
        if media_type not in DOCUMENT_TYPES:
            raise UserError(f"{name or 'the document'} is {media_type}; reactloop takes "
                            f"{', '.join(DOCUMENT_TYPES)}: convert it to PDF or text")
        return media_type

    def _check_bytes(self, data: bytes) -> None:
        what = self.name or "the document"
        if self.media_type not in DOCUMENT_TYPES:
            raise UserError(f"{what} is {self.media_type}; reactloop takes "
                            f"{', '.join(DOCUMENT_TYPES)}")
        if self.media_type == "application/pdf":
            if not data.startswith(b"%PDF-"):
                raise UserError(f"{what} claims application/pdf but its bytes are not a PDF "
                                "(no %PDF- header): pass the right file or media type")
            if b"%%EOF" not in data[-2048:]:
                raise UserError(f"{what} is a damaged PDF (it does not end with %%EOF: "
                                "truncated?): pass a complete copy")
            return
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise UserError(f"{what} claims {self.media_type} but its bytes are not UTF-8 "
                            "text: pass the right file or media type") from None

    @property
    def text(self) -> str | None:
        """The text of a text document (``None`` for a PDF or a URL)."""
        if self.data is None or self.media_type == "application/pdf":
            return None
        return self.data.decode("utf-8")


_CLASSES: dict[str, type[Attachment]] = {"image": Image, "document": Document}


def attachment_from_ref(ref: Mapping[str, Any],
                        blobs: Mapping[str, bytes] | None = None) -> Attachment:
    """The attachment a :meth:`Attachment.ref` describes, with its bytes from ``blobs``
    (by sha256) when they are there; else a bare reference (``available`` is False)."""
    cls = _CLASSES.get(str(ref.get("kind")))
    if cls is None:
        raise ValueError(f"unknown attachment kind {ref.get('kind')!r}")
    sha = str(ref["sha256"])
    media_type, name = str(ref.get("media_type") or ""), ref.get("name")
    if ref.get("url"):
        return cls(media_type, url=str(ref["url"]), name=name, sha256=sha)
    data = None if blobs is None else blobs.get(sha)
    if data is None:
        return cls(media_type, name=name, sha256=sha, size=int(ref.get("size") or 0))
    return cls(media_type, data, name=name, sha256=sha)


def attachment_from_path(path: str | os.PathLike[str]) -> Attachment:
    """The file at ``path`` as an :class:`Image` (a picture, by its bytes or its name) or
    else a :class:`Document`."""
    p = Path(path).expanduser()
    if p.is_dir():
        raise UserError(f"{p} is a folder: attach files one by one")
    try:
        with p.open("rb") as f:
            head = f.read(16)
    except OSError as exc:
        raise UserError(f"cannot read {p} ({exc.strerror or exc}): pass the path of a "
                        "readable file") from None
    found = sniff(head)
    guessed = _guess_type(p.name)[0] or ""
    if (found or guessed).startswith("image/"):
        return Image.from_path(p)  # type: ignore[no-any-return]
    return Document.from_path(p)  # type: ignore[no-any-return]


def split_prompt(prompt: object) -> tuple[str, tuple[Attachment, ...]]:
    """A prompt (a string, or a list of strings and attachments) as its text (the strings
    joined by blank lines) and its attachments, in order."""
    if isinstance(prompt, str):
        return prompt, ()
    if isinstance(prompt, Attachment):
        prompt = [prompt]
    if not isinstance(prompt, Sequence | Iterable) or isinstance(prompt, bytes | Mapping):
        raise UserError(f"prompt must be a string, or a list of strings, Images and "
                        f"Documents; got {type(prompt).__name__}")
    texts: list[str] = []
    parts: list[Attachment] = []
    for item in prompt:
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, Attachment):
            parts.append(item)
        else:
            hint = (" (wrap a file with Image.from_path or Document.from_path)"
                    if isinstance(item, os.PathLike | bytes) else "")
            raise UserError(f"a prompt part must be a string, an Image or a Document, got "
                            f"{type(item).__name__}{hint}")
    check_count(parts, "a prompt")
    return "\n\n".join(texts), tuple(parts)


def check_count(parts: Sequence[Attachment], where: str) -> None:
    """Refuse more than :data:`MAX_ATTACHMENTS` attachments in one message."""
    if len(parts) > MAX_ATTACHMENTS:
        raise UserError(f"{where} carries {len(parts)} attachments; at most {MAX_ATTACHMENTS} "
                        "go in one message: send them over several messages, or combine them")


Prompt = str | Sequence[str | Attachment]
"""What a run takes as the user's message: text, or text and attachments in a list."""


def _sha256(data: bytes) -> Any:
    import hashlib  # on first use: import reactloop stays light

    return hashlib.sha256(data)
