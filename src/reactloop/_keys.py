"""API keys as people paste them: a key with a control character (the line break copied with
it) is refused with a sentence, wherever it comes from (``api_key=``, the environment,
``reactloop keys set``), instead of failing every call later as if the server were down.

Also where stored secrets live (the user's config directory) and how a file of them is written
(atomically, mode 0600), shared by ``reactloop keys`` and the MCP OAuth token store."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

from reactloop.errors import UserError

__all__ = ["check_key", "config_dir", "write_private"]


def config_dir() -> Path:
    """``REACTLOOP_CONFIG_DIR``, else the user's config directory for reactloop."""
    override = os.environ.get("REACTLOOP_CONFIG_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("reactloop", appauthor=False))


def write_private(path: Path, text: str, *, mode: int = 0o600) -> None:
    """Write atomically; the file is created with ``mode`` (never readable by others first)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, mode)  # the umask may have removed bits; never added any
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


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
