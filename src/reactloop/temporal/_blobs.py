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
each stored once by content hash in its ``attachments`` table (migration 3), with a note (a
message of that session) per write naming them; deleting that session (``store.delete(...)``,
``reactloop sessions``) drops them. A start that fails (the id is another conversation's, the
server refuses) takes its note back, and with it the bytes no other note mentions. A SQL store
is read by hash (``attachment_data``): a worker loads only the attachments it lacks.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from reactloop.attachments import Attachment
from reactloop.errors import SessionBusy, UserError
from reactloop.messages import Message
from reactloop.sessions._store import SessionStore, SessionWriter

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
    async def put(self, workflow_id: str, parts: Sequence[Attachment], what: str
                  ) -> str | None:
        """Store the bytes of ``parts`` (those that have some) for ``workflow_id``, with a note
        (a message of the session) mentioning them. Returns the note's id, for
        :meth:`take_back` (``None``: nothing to store)."""
        held = tuple(a for a in parts if a.data is not None)
        if not held:
            return None
        note_id = uuid.uuid4().hex
        note = Message("user", f"attachments of Temporal workflow {workflow_id}: {what}",
                       attachments=held,
                       metadata={"temporal_workflow": workflow_id, "temporal_note": note_id})
        # the bytes once per hash, with this note
        await asyncio.to_thread(self._locked, workflow_id, lambda w: w.append([note]))
        for a in held:
            self._keep((session_of(workflow_id), a.sha256), a.data or b"")
        return note_id

    async def take_back(self, workflow_id: str, note_id: str | None) -> None:
        """Undo :meth:`put` ``note_id``: its note goes, and the bytes no other note of the
        workflow's session mentions (another starter's, the workflow's own, stored before or
        since, keep theirs)."""
        if note_id is None:
            return

        def drop(w: SessionWriter) -> None:
            kept = [m for m in w.get() if m.metadata.get("temporal_note") != note_id]
            w.replace(kept)  # a replaced history drops the bytes no message mentions

        await asyncio.to_thread(self._locked, workflow_id, drop)
        sid = session_of(workflow_id)
        for key in [k for k in self._cache if k[0] == sid]:
            self._cached -= len(self._cache.pop(key))

    def _locked(self, workflow_id: str, write: Callable[[SessionWriter], None]) -> None:
        """``write`` as the only writer of the workflow's session."""
        sid = session_of(workflow_id)
        deadline = time.monotonic() + _BUSY_SECONDS
        while True:
            try:
                w = self.store.writer(sid)
                break
            except SessionBusy:  # another activity of the run writes right now
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
        with w:
            write(w)

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
            found = await asyncio.to_thread(self._read, sid, missing)
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

    def _read(self, sid: str, shas: set[str]) -> dict[str, bytes]:
        """The bytes of ``shas`` the store holds for ``sid``: only those, from a SQL store
        (another store: read from the session's messages)."""
        by_hash = getattr(self.store, "attachment_data", None)
        if by_hash is not None:
            return dict(by_hash(sid, shas))
        return {a.sha256: a.data for m in self.store.get(sid) for a in m.attachments
                if a.data is not None and a.sha256 in shas}

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
