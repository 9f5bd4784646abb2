"""Real files made in the tests: PNG images (zlib, by hand) and PDFs (written with pypdf)."""

from __future__ import annotations

import io
import struct
import zlib


def png(width: int = 4, height: int = 3, seed: int = 0, *, size: int | None = None) -> bytes:
    """A valid RGB PNG; ``seed`` varies the pixels (so the hash), ``size`` pads it with a
    private ancillary chunk to about that many bytes."""
    raw = b"".join(b"\x00" + bytes((x * 40 + seed) % 256 for x in range(width * 3))
                   for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw))
    if size is not None:
        pad = max(0, size - len(body) - 8 - 12)
        body += chunk(b"prVt", bytes((seed + i) % 251 for i in range(pad)))
    return b"\x89PNG\r\n\x1a\n" + body + chunk(b"IEND", b"")


def pdf(*pages: str) -> bytes:
    """A PDF whose pages show ``pages`` (one line of text each), written with pypdf."""
    from pypdf import PdfWriter
    from pypdf.generic import (
        DecodedStreamObject,
        DictionaryObject,
        NameObject,
    )

    writer = PdfWriter()
    font = DictionaryObject({
        NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica")})
    font_ref = writer._add_object(font)
    for text in pages:
        page = writer.add_blank_page(width=612, height=792)
        stream = DecodedStreamObject()
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream.set_data(f"BT /F1 18 Tf 72 700 Td ({escaped}) Tj ET".encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject(
            {NameObject("/F1"): font_ref})})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
