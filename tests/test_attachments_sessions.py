"""Attachments in sessions (issue 26): stored once by content hash in SQLite and PostgreSQL,
resumed in a fresh process, deleted with their session, bounded per session."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _files import pdf, png
from reactloop import Agent, Document, Image, Message, UserError
from reactloop.sessions import open_store
from reactloop.testing import ScriptedModel

HERE = Path(__file__).resolve().parent


def _blob_rows(store_arg: str, session_id: str | None = None) -> list[tuple[Any, ...]]:
    store: Any = open_store(store_arg)
    table = "reactloop_attachments" if store_arg.startswith("postgres") else "attachments"
    where = "" if session_id is None else f" WHERE session_id = {store._mark}"
    return store._rows("read", f"SELECT session_id, sha256, size FROM {table}{where}",
                       () if session_id is None else (session_id,))


def test_a_session_stores_each_attachment_once_and_resumes_it_elsewhere(
        store_arg: str) -> None:
    image = Image.from_bytes(png(size=20_000), name="shot.png")
    doc = Document.from_bytes(pdf("Total: 42"), name="inv.pdf")
    agent = Agent(model=ScriptedModel(["one", "two", "three"]))
    session = agent.session("pics", store=store_arg)
    session.send_sync(["What is this?", image])
    session.send_sync(["And this, with the same picture?", image, doc])
    rows = _blob_rows(store_arg, "pics")
    assert sorted(r[1] for r in rows) == sorted([image.sha256, doc.sha256])
    stored = open_store(store_arg).get("pics")
    assert stored[0].attachments == (image,) and stored[0].attachments[0].data == image.data
    # a fresh process reads the bytes back and sends them to its model
    out = subprocess.run([sys.executable, str(HERE / "attach_child.py"), store_arg, "pics"],
                         capture_output=True, text=True, timeout=120, check=True)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {"answer": "resumed", "sent": [[image.sha256, image.size], [],
                                                  [image.sha256, image.size, doc.sha256,
                                                   doc.size], [], []]}


def test_deleting_or_clearing_a_session_deletes_its_attachments(store_arg: str) -> None:
    agent = Agent(model=ScriptedModel(["a", "b"]))
    agent.session("gone", store=store_arg).send_sync(["x", Image.from_bytes(png(seed=1))])
    agent.session("kept", store=store_arg).send_sync(["y", Image.from_bytes(png(seed=2))])
    store = open_store(store_arg)
    assert store.delete("gone")
    assert [r[0] for r in _blob_rows(store_arg)] == ["kept"]
    store.clear("kept")
    assert _blob_rows(store_arg) == []


def test_a_replaced_history_drops_the_bytes_no_message_mentions(store_arg: str) -> None:
    a, b = Image.from_bytes(png(seed=3)), Image.from_bytes(png(seed=4))
    store = open_store(store_arg)
    store.append("r", [Message("user", "a", attachments=(a,)),
                       Message("user", "b", attachments=(b,))])
    store.replace("r", [Message("user", "b", attachments=(b,))])
    assert [r[1] for r in _blob_rows(store_arg, "r")] == [b.sha256]


def test_the_per_session_limit_refuses_a_write_whole(store_arg: str) -> None:
    store: Any = open_store(store_arg)
    store.max_attachment_bytes = 30_000
    try:
        store.append("full", [Message("user", "a",
                                      attachments=(Image.from_bytes(png(size=20_000)),))])
        with pytest.raises(UserError, match=r"would hold 40,\d+ bytes of attachments; a "
                                            r"session holds at most 30,000 bytes.*Nothing of "
                                            r"this message was stored"):
            store.append("full", [Message("user", "b", attachments=(
                Image.from_bytes(png(seed=9, size=20_000)),))])
        assert [m.content for m in store.get("full")] == ["a"]
        assert len(_blob_rows(store_arg, "full")) == 1
    finally:
        del store.max_attachment_bytes


def test_a_send_over_the_session_limit_is_refused_and_nothing_is_stored(
        store_arg: str) -> None:
    store: Any = open_store(store_arg)
    store.max_attachment_bytes = 10_000
    model = ScriptedModel(["never"])
    try:
        session = Agent(model=model).session("over", store=store)
        with pytest.raises(UserError, match="at most 10,000 bytes"):
            session.send_sync(["Look", Image.from_bytes(png(size=20_000))])
        assert model.requests == [] and store.get("over") == []
        assert _blob_rows(store_arg, "over") == []
    finally:
        del store.max_attachment_bytes
