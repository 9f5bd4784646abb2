"""Names: a server's default name from its command or URL, and provider-safe tool names.

Every provider accepts tool names of 1-64 characters from ``[A-Za-z0-9_-]``, so an MCP tool
``get-current.time`` on server ``time`` becomes ``time_get-current_time``. Long names are cut
and given a short hash so two long names that share a prefix stay distinct.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import re
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

__all__ = ["derive_http_name", "derive_stdio_name", "safe_name", "tool_names"]

MAX_TOOL_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")

# Programs that run another program named in their arguments (`uvx mcp-server-git`).
_LAUNCHERS = re.compile(
    r"^(python(\d+(\.\d+)?)?|pypy3?|uv|uvx|pipx|npx|pnpm|pnpx|yarn|bunx|bun|node|deno|docker"
    r"|podman|sh|bash|env)(\.exe|\.cmd)?$"
)
# Launcher words and options that take a value, skipped when looking for the real program.
_LAUNCHER_WORDS = {"run", "exec", "dlx", "tool", "x", "-m", "-y", "--yes", "-i", "--rm", "-c"}
_OPTIONS_WITH_VALUE = {"--from", "--with", "-p", "--python", "--package", "-e", "--env", "-v"}
_PREFIXES = ("mcp-server-", "mcp_server_", "server-", "server_", "mcp-", "mcp_")
_SUFFIXES = ("-mcp-server", "_mcp_server", "-server", "_server", "-mcp", "_mcp")


def safe_name(text: str, fallback: str = "mcp") -> str:
    """``text`` with runs of unsafe characters replaced by ``_`` (never empty)."""
    cleaned = _UNSAFE.sub("_", text).strip("_")
    return cleaned or fallback


def derive_stdio_name(command: str, args: Sequence[str] = ()) -> str:
    """A short server name from how it is started (best effort; pass ``name=`` to choose).

    ``mcp-server-time`` → ``time``; ``python -m mcp_server_git`` → ``git``;
    ``npx -y @modelcontextprotocol/server-filesystem /tmp`` → ``filesystem``.
    """
    program = _program(command, args)
    base = os.path.basename(program.rstrip("/\\")) or program  # also drops an npm @scope/
    base = re.split(r"@|==|>=|\[", base, maxsplit=1)[0] or base  # versions and extras
    base = re.sub(r"\.(py|js|mjs|cjs|ts|exe|cmd)$", "", base)
    return safe_name(_strip_affixes(base.lower()))


def derive_http_name(url: str) -> str:
    """A short server name from a URL: ``https://mcp.deepwiki.com/mcp`` → ``deepwiki``;
    loopback and IP addresses keep the port: ``http://127.0.0.1:8000/mcp`` → ``127_0_0_1_8000``."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if not host:
        return "mcp"
    if _is_ip(host) or "." not in host:
        return safe_name(f"{host}_{parts.port}" if parts.port else host)
    labels = host.split(".")
    while len(labels) > 2 and labels[0] in {"www", "mcp", "api"}:
        labels.pop(0)
    return safe_name(_strip_affixes(labels[0]))


def tool_names(prefix: str, names: Iterable[str]) -> list[str]:
    """Provider-safe, unique names for ``names`` (in order), each starting with ``prefix``.

    A name that already starts with the prefix is not prefixed again: server ``git``'s
    ``git_status`` stays ``git_status`` (not ``git_git_status``); ``-`` and ``_`` and the
    case do not matter for that comparison (``Git-status`` → ``Git-status``).
    """
    taken: set[str] = set()
    out: list[str] = []
    for name in names:
        full = name if _has_prefix(name, prefix) else prefix + name
        candidate = _fit(safe_name(full, fallback=prefix or "tool"))
        n = 2
        unique = candidate
        while unique in taken:  # two names that differ only in unsafe characters
            suffix = f"_{n}"
            unique = candidate[: MAX_TOOL_NAME - len(suffix)] + suffix
            n += 1
        taken.add(unique)
        out.append(unique)
    return out


def _has_prefix(name: str, prefix: str) -> bool:
    def norm(text: str) -> str:
        return re.sub(r"[^a-z0-9]+", "_", text.lower())

    stem, full = norm(prefix), norm(name)
    return bool(stem.strip("_")) and full.startswith(stem) and len(full) > len(stem)


def _fit(name: str) -> str:
    if len(name) <= MAX_TOOL_NAME:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:8]
    return f"{name[: MAX_TOOL_NAME - 9]}_{digest}"


def _program(command: str, args: Sequence[str]) -> str:
    """The program a launcher runs, or the command itself."""
    if not _LAUNCHERS.match(os.path.basename(command).lower()):
        return command
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in _OPTIONS_WITH_VALUE:
            skip = True
        elif arg in _LAUNCHER_WORDS or arg.startswith("-"):
            continue
        else:
            return arg
    return command


def _strip_affixes(name: str) -> str:
    for prefix in _PREFIXES:
        if name.startswith(prefix) and len(name) > len(prefix):
            name = name[len(prefix) :]
            break
    for suffix in _SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
            break
    return name


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True
