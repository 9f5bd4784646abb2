"""Ids typed by people: a unique prefix is enough; an unknown id is an error, never a new one."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reactloop.errors import UserError

__all__ = ["resolve_id", "store_label"]


def store_label(store: Any) -> str:
    """Where ``store`` keeps its sessions, for messages: its file, or its URL without the
    password."""
    if hasattr(store, "path"):
        return str(store.path)
    if hasattr(store, "url"):
        from reactloop._redact import redact_url

        return redact_url(store.url)
    return repr(store)


def resolve_id(typed: str, known: Iterable[str], *, what: str, where: str, hint: str) -> str:
    """The one id in ``known`` equal to ``typed`` or starting with it.

    Raises:
        UserError: nothing matches (naming ``where`` and the ``hint`` command that lists the
            ids), or the prefix is ambiguous (listing a few of the candidates).
    """
    ids = list(known)
    if typed in ids:
        return typed
    matches = [i for i in ids if typed and i.startswith(typed)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UserError(f"no {what} {typed!r} in {where} ({hint} lists them)")
    shown = ", ".join(matches[:5]) + (", …" if len(matches) > 5 else "")
    raise UserError(f"{what} id {typed!r} is ambiguous: {len(matches)} match ({shown}); "
                    "type more of it")
