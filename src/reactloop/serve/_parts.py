"""Attachments sent to ``reactloop serve``: the REST body's ``attachments`` and the AG-UI
protocol's ``image``/``document`` input parts, as :class:`~reactloop.Image` and
:class:`~reactloop.Document` values.

Bytes come base64-encoded (their size is checked before they are decoded); a URL is kept as a
URL for the provider (reactloop never fetches it; local and private addresses are refused).
Responses carry references (``Attachment.ref()``), never the bytes.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from reactloop.attachments import (
    MAX_ATTACHMENTS,
    MAX_PART_BYTES,
    Attachment,
    Document,
    Image,
    check_count,
)
from reactloop.errors import UserError

__all__ = ["from_agui_part", "from_rest"]

_CLASSES: dict[str, type[Attachment]] = {"image": Image, "document": Document}


def _decoded(value: object, where: str) -> bytes:
    if not isinstance(value, str):
        raise UserError(f"{where}: the data must be base64 text")
    if len(value) > (MAX_PART_BYTES // 3 + 1) * 4 + 4:  # before decoding: memory stays bounded
        raise UserError(f"{where}: an attachment may be at most {MAX_PART_BYTES // 1024 // 1024}"
                        " MiB")
    try:  # the URL-safe alphabet too, as some clients write it
        return base64.b64decode(value.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        raise UserError(f"{where}: the data is not base64") from None


def _build(kind: str, data: bytes | None, url: str | None, media_type: str | None,
           name: str | None, where: str) -> Attachment:
    cls = _CLASSES.get(kind)
    if cls is None:
        raise UserError(f"{where}: kind must be 'image' or 'document', got {kind!r}")
    if name is not None and not isinstance(name, str):
        raise UserError(f"{where}: name must be text")
    if data is not None:
        return cls.from_bytes(data, media_type or None, name=name)  # type: ignore[no-any-return]
    if url is not None:
        if not isinstance(url, str):
            raise UserError(f"{where}: url must be text")
        return cls.from_url(url, media_type or None)  # type: ignore[no-any-return]
    raise UserError(f"{where}: give data (base64) or a url")


def from_rest(raw: object) -> tuple[Attachment, ...]:
    """``{"attachments": [{"kind", "media_type"?, "data" | "url", "name"?}, ...]}``."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise UserError('attachments must be a list of {"kind": "image"|"document", '
                        '"data": BASE64 | "url": URL, "media_type"?: ..., "name"?: ...}')
    if len(raw) > MAX_ATTACHMENTS:
        check_count([None] * len(raw), "the message")  # type: ignore[list-item]
    out = []
    for i, item in enumerate(raw):
        where = f"attachments[{i}]"
        if not isinstance(item, Mapping):
            raise UserError(f"{where} must be an object")
        data = _decoded(item["data"], where) if item.get("data") is not None else None
        out.append(_build(str(item.get("kind")), data, item.get("url"),
                          item.get("media_type"), item.get("name"), where))
    return tuple(out)


def from_agui_part(part: Any, index: int) -> Attachment:
    """An AG-UI ``image`` or ``document`` input part (a ``data`` or ``url`` source)."""
    where = f"content[{index}] ({part.type})"
    source = part.source
    kind = getattr(source, "type", None)
    media_type = getattr(source, "mime_type", None)
    name = (getattr(part, "metadata", None) or {}).get("filename") if isinstance(
        getattr(part, "metadata", None), Mapping) else None
    if kind == "data":
        return _build(part.type, _decoded(source.value, where), None, media_type, name, where)
    if kind == "url":
        return _build(part.type, None, source.value, media_type, name, where)
    raise UserError(f"{where}: a {kind!r} source is not supported; send the bytes (a 'data' "
                    "source) or a public URL")
