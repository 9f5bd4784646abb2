"""Files given on the command line (``reactloop run -a FILE``, chat's ``/attach PATH``) as
attachments: a picture becomes an :class:`~reactloop.Image`, anything else a
:class:`~reactloop.Document`; ``-`` reads the bytes from stdin. Bad files fail here, with one
line naming the file, before anything runs or is stored."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from reactloop.attachments import MAX_PART_BYTES, Attachment, Document, Image, sniff
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
    from pathlib import Path

    p = Path(path).expanduser()
    if p.is_dir():
        raise UserError(f"--attach {path}: is a folder; attach files one by one")
    with_head = _head(p)
    kind = sniff(with_head)
    if (kind and kind.startswith("image/")) or p.suffix.lower() in (".png", ".jpg", ".jpeg",
                                                                     ".gif", ".webp"):
        return Image.from_path(p)  # type: ignore[no-any-return]
    return Document.from_path(p)  # type: ignore[no-any-return]


def _head(p: object) -> bytes:
    from pathlib import Path

    assert isinstance(p, Path)
    try:
        with p.open("rb") as f:
            return f.read(16)
    except OSError as exc:
        raise UserError(f"cannot read {p} ({exc.strerror or exc}): pass the path of a readable "
                        "file") from None
