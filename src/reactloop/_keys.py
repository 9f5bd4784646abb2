"""API keys as people paste them: a key with a control character (the line break copied with
it) is refused with a sentence, wherever it comes from (``api_key=``, the environment,
``reactloop keys set``), instead of failing every call later as if the server were down."""

from __future__ import annotations

import unicodedata

from reactloop.errors import UserError

__all__ = ["check_key"]


def check_key(key: str, what: str) -> None:
    """Refuse a key with a control character (a line break pasted with it): sent in a header,
    it would fail every call as if the server could not be reached.

    Raises:
        UserError: naming ``what``, the character and where it is (never the key itself).
    """
    for i, ch in enumerate(key):
        if unicodedata.category(ch) == "Cc":
            name = {"\n": "a line break", "\r": "a carriage return", "\t": "a tab"}.get(
                ch, f"the control character U+{ord(ch):04X}")
            raise UserError(f"{what} contains {name} (at character {i + 1} of {len(key)}); "
                            "a key never does, so it was probably copied with it: set the key "
                            "again without it")
