"""A session with pictures: what it costs on disk and to resume.

    python benchmarks/attachments.py                      # ten 1 MB images, SQLite
    python benchmarks/attachments.py --images 10 --mb 1 --turns 20 --json out.json

One session on a fresh SQLite store gets ``--images`` turns, each sending a new picture of
``--mb`` MB (a valid PNG whose pixels are followed by random bytes, so nothing compresses),
then ``--turns`` text-only turns that resend the whole history (pictures included) to the
model, as every later turn does. Figures:

- **stored**: the database file's size (after a WAL checkpoint) and the bytes in the
  attachments table, against the pictures' own size — the bytes are kept once per content hash,
  so the store grows by the pictures' size, not by pictures × turns;
- **resume**: the time to open the store in a new process, read the session (messages and
  their bytes) and hand the history to the model (a scripted one), median of ``--repeat``.

The model is a ``reactloop.testing.ScriptedModel`` (no network); times are wall-clock on this
machine and are reported, not asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

from reactloop import Agent, Image
from reactloop.testing import ScriptedModel

MB = 1024 * 1024

_RESUME = """
import sys, time, json
t0 = time.perf_counter()
from reactloop import Agent
from reactloop.testing import ScriptedModel
t1 = time.perf_counter()
model = ScriptedModel(["resumed"])
Agent(model=model).session(sys.argv[2], store=sys.argv[1]).send_sync("and now?")
t2 = time.perf_counter()
sent = sum(len(a.data or b"") for m in model.requests[0].messages for a in m.attachments)
print(json.dumps({"import_s": t1 - t0, "resume_s": t2 - t1, "bytes_sent": sent}))
"""


def picture(size: int, seed: int) -> bytes:
    """A valid 1x1 PNG padded with a private chunk of random bytes to ``size`` bytes."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    head = chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
    body = chunk(b"IDAT", zlib.compress(bytes((0, seed % 256, 0, 0))))
    pad = max(0, size - 8 - len(head) - len(body) - 12 - 12)
    return b"\x89PNG\r\n\x1a\n" + head + body + chunk(b"prVt", os.urandom(pad)) + chunk(
        b"IEND", b"")


def build(path: Path, images: int, size: int, turns: int) -> dict[str, Any]:
    model = ScriptedModel(["seen"] * (images + turns))
    session = Agent(model=model).session("pictures", store=path)
    started = time.perf_counter()
    for i in range(images):
        session.send_sync([f"What is in picture {i}?", Image.from_bytes(picture(size, i))])
    for i in range(turns):
        session.send_sync(f"text turn {i}")
    session.store.close()
    with sqlite3.connect(path) as conn:  # fold the WAL into the file before measuring it
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (blob_bytes,) = conn.execute("SELECT coalesce(sum(size), 0) FROM attachments").fetchone()
        (message_bytes,) = conn.execute("SELECT coalesce(sum(length(data)), 0) FROM messages"
                                        ).fetchone()
        (messages,) = conn.execute("SELECT count(*) FROM messages").fetchone()
    return {"write_s": time.perf_counter() - started, "file_bytes": path.stat().st_size,
            "attachment_bytes": blob_bytes, "message_json_bytes": message_bytes,
            "messages": messages, "history_bytes_resent": sum(
                len(a.data or b"") for r in model.requests for m in r.messages
                for a in m.attachments)}


def resume(path: Path, repeat: int) -> dict[str, Any]:
    runs = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", _RESUME, str(path), "pictures"],
                             capture_output=True, text=True, check=True, timeout=600)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {"resume_s_median": statistics.median(r["resume_s"] for r in runs),
            "import_s_median": statistics.median(r["import_s"] for r in runs),
            "bytes_sent_on_resume": runs[-1]["bytes_sent"]}


def measure(images: int = 10, mb: float = 1.0, turns: int = 10, repeat: int = 3
            ) -> dict[str, Any]:
    size = int(mb * MB)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sessions.sqlite3"
        out = {"images": images, "image_bytes": size, "text_turns": turns,
               **build(path, images, size, turns), **resume(path, repeat)}
    out["pictures_bytes"] = images * size
    out["file_over_pictures"] = out["file_bytes"] / max(1, out["pictures_bytes"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=10)
    parser.add_argument("--mb", type=float, default=1.0, help="size of each picture")
    parser.add_argument("--turns", type=int, default=10, help="text turns after the pictures")
    parser.add_argument("--repeat", type=int, default=3, help="resumes to take the median of")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    out = measure(args.images, args.mb, args.turns, args.repeat)
    mib = MB
    print(f"session: {out['images']} pictures of {out['image_bytes'] / mib:.1f} MiB, then "
          f"{out['text_turns']} text turns ({out['messages']} messages)")
    print(f"  pictures' own size      {out['pictures_bytes'] / mib:8.1f} MiB")
    print(f"  stored file (SQLite)    {out['file_bytes'] / mib:8.1f} MiB "
          f"({out['file_over_pictures']:.2f}x the pictures)")
    print(f"  attachments table       {out['attachment_bytes'] / mib:8.1f} MiB")
    print(f"  messages (JSON)         {out['message_json_bytes'] / 1024:8.1f} KiB")
    print(f"  pictures sent to the model over all turns {out['history_bytes_resent'] / mib:.1f} "
          "MiB (what storing each turn's history would cost)")
    print(f"  resume in a new process {out['resume_s_median'] * 1000:8.0f} ms (median of "
          f"{args.repeat}; plus {out['import_s_median'] * 1000:.0f} ms importing reactloop), "
          f"{out['bytes_sent_on_resume'] / mib:.1f} MiB of pictures sent again")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
