"""Attachments of durable runs: their bytes in a session store, references in Temporal.

Temporal records every workflow input, activity argument and result in the workflow's history,
and refuses payloads over its limit (2 MB by default). So the bytes of an image or a document
never cross Temporal: the starter (``TemporalAgent.start``) writes them to an attachment store
that the workers reach too, and the workflow's input, history, events and results carry
references only (``Attachment.ref()``: kind, media type, sha256, size, name). The model
activity reads the bytes back just before it calls the model; a tool activity writes the
pictures a tool returns the same way.

The attachment store is a session store (:class:`~reactloop.sessions.SessionStore`; a SQLite
file by default, or a ``postgresql://`` URL for workers on other machines), configured with
``TemporalAgent(store=...)`` (``reactloop worker --store``, ``reactloop run --temporal
--store``). A workflow's attachments are the session ``temporal:<workflow id>`` of that store,
each stored once by content hash in its ``attachments`` table (migration 3); deleting that
session (``store.delete(...)``, ``reactloop sessions``) drops them.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from reactloop.attachments import Attachment
from reactloop.errors import SessionBusy, UserError
from reactloop.messages import Message
from reactloop.sessions._store import SessionStore

__all__ = ["AttachmentStore", "session_of"]

_CACHE_BYTES = 64 * 1024 * 1024
"""Bytes a worker keeps of the attachments it read (a run calls its model many times)."""
_BUSY_SECONDS = 30.0
"""How long a write waits for another writer of the same workflow's session."""


def session_of(workflow_id: str) -> str:
    """The session of the attachment store that holds a workflow's attachments."""
    sid = f"temporal:{workflow_id}"
    if len(sid) <= 200:  # the longest session id a store takes
        return sid
    return f"temporal:{workflow_id[:120]}…{hashlib.sha256(workflow_id.encode()).hexdigest()}"


class AttachmentStore:
    """The bytes of a durable agent's attachments, by workflow and content hash.

    Args:
        store: a session store, the path of a SQLite file, or a ``postgresql://`` URL;
            ``None``: the default SQLite file (as ``agent.session()``). Opened on first use.
    """

    def __init__(self, store: SessionStore | str | Any | None = None) -> None:
        self.spec = store
        self._store: SessionStore | None = None
        self._cache: OrderedDict[tuple[str, str], bytes] = OrderedDict()
        self._cached = 0

    @property
    def store(self) -> SessionStore:
        if self._store is None:
            from reactloop.sessions import open_store

            self._store = open_store(self.spec)
        return self._store

    def where(self) -> str:
        """The store, as a message names it (a URL's password masked)."""
        return repr(self._store) if self._store is not None else repr(self.spec)

    # -- writing -------------------------------------------------------------------------------
    async def put(self, workflow_id: str, parts: Sequence[Attachment], what: str) -> None:
        """Store the bytes of ``parts`` (those that have some) for ``workflow_id``."""
        held = tuple(a for a in parts if a.data is not None)
        if held:
            await asyncio.to_thread(self._put, workflow_id, held, what)
            for a in held:
                self._keep((session_of(workflow_id), a.sha256), a.data or b"")

    def _put(self, workflow_id: str, parts: tuple[Attachment, ...], what: str) -> None:
        sid = session_of(workflow_id)
        note = Message("user", f"attachments of Temporal workflow {workflow_id}: {what}",
                       attachments=parts, metadata={"temporal_workflow": workflow_id})
        deadline = time.monotonic() + _BUSY_SECONDS
        while True:
            try:
                self.store.append(sid, [note])  # the bytes once per hash, with this note
                break
            except SessionBusy:  # another activity of the run writes right now
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    # -- reading -------------------------------------------------------------------------------
    async def resolve(self, workflow_id: str, messages: Sequence[Message]) -> tuple[Message, ...]:
        """``messages`` with the bytes of every bare reference loaded.

        Raises:
            UserError: a referenced attachment is not in this store (named by its hash).
        """
        wanted = {a.sha256 for m in messages for a in m.attachments if not a.available}
        if not wanted:
            return tuple(messages)
        blobs = await self.get(workflow_id, wanted)
        return tuple(_loaded(m, blobs) if m.attachments else m for m in messages)

    async def get(self, workflow_id: str, shas: Iterable[str]) -> dict[str, bytes]:
        sid = session_of(workflow_id)
        out = {sha: data for sha in shas if (data := self._hit((sid, sha))) is not None}
        missing = set(shas) - set(out)
        if missing:
            found = await asyncio.to_thread(self._read, sid)
            for sha in missing:
                if sha not in found:
                    raise UserError(
                        f"attachment {sha} (of workflow {workflow_id}) is not in this worker's "
                        f"attachment store {self.where()}: configure the store the run's "
                        "starter used on the worker too (TemporalAgent(store=...), reactloop "
                        "worker --store PATH|URL), for example one postgresql:// URL for both")
                out[sha] = found[sha]
                self._keep((sid, sha), found[sha])
        return out

    def _read(self, sid: str) -> dict[str, bytes]:
        return {a.sha256: a.data for m in self.store.get(sid) for a in m.attachments
                if a.data is not None}

    def _hit(self, key: tuple[str, str]) -> bytes | None:
        data = self._cache.get(key)
        if data is not None:
            self._cache.move_to_end(key)
        return data

    def _keep(self, key: tuple[str, str], data: bytes) -> None:
        if key in self._cache or len(data) > _CACHE_BYTES:
            return
        self._cache[key] = data
        self._cached += len(data)
        while self._cached > _CACHE_BYTES:
            _, old = self._cache.popitem(last=False)
            self._cached -= len(old)

    def __repr__(self) -> str:
        return f"AttachmentStore({self.where()})"


def _loaded(m: Message, blobs: dict[str, bytes]) -> Message:
    parts = tuple(a.with_data(blobs[a.sha256]) if not a.available else a
                  for a in m.attachments)
    return Message(m.role, m.content, m.tool_calls, m.tool_call_id, m.name, m.is_error,
                   m.metadata, m.provider_details, parts)
