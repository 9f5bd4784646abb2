"""Files given on the command line (``reactloop run -a FILE``, chat's ``/attach PATH``) as
attachments: a picture becomes an :class:`~reactloop.Image`, anything else a
:class:`~reactloop.Document`; ``-`` reads the bytes from stdin. Bad files fail here, with one
line naming the file, before anything runs or is stored."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from reactloop.attachments import (
    MAX_PART_BYTES,
    Attachment,
    Document,
    Image,
    attachment_from_path,
    sniff,
)
from reactloop.errors import UserError

__all__ = ["load_attachment", "load_attachments"]


def load_attachments(paths: Sequence[str]) -> tuple[Attachment, ...]:
    """The attachments of ``paths`` in order (``-``: stdin's bytes, at most once)."""
    if list(paths).count("-") > 1:
        raise UserError("--attach - reads stdin once: give it at most once")
    return tuple(load_attachment(p) for p in paths)


def load_attachment(path: str) -> Attachment:
    """One file (or ``-``, stdin's bytes) as an Image or a Document."""
    if path == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None or sys.stdin.isatty():
            raise UserError("--attach - reads the file's bytes from stdin: pipe them in "
                            "(reactloop run -a - 'describe it' < shot.png)")
        data = stream.read(MAX_PART_BYTES + 1)
        if not data:
            raise UserError("--attach - read nothing from stdin: pipe the file in")
        kind = sniff(data)
        cls: type[Attachment] = Image if kind and kind.startswith("image/") else Document
        return cls.from_bytes(data, name="stdin")  # type: ignore[no-any-return]
    return attachment_from_path(path)
