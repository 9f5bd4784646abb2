"""The guard in front of every request of ``reactloop serve``.

One pure ASGI middleware (so streamed responses pass through untouched) that, in order:

1. checks the ``Host`` header against the names the server answers to — a page on another
   site that rebinds its DNS name to 127.0.0.1 still sends its own name, and is refused;
2. checks the ``Origin`` header, when a browser sends one: only the server's own origin and
   the origins allowed explicitly may call it (cross-site requests are refused);
3. checks ``Authorization: Bearer <token>`` on every ``/api/`` path when a token is set
   (constant-time comparison);
4. reads the request body up to a size limit (413 beyond it) before the app sees it;
5. adds protective headers to every response.

It also knows the secrets that must never leave the process (the token, and environment
variables named like keys): :func:`environ_secrets` registers them with reactloop's redaction,
which scrubs everything the app sends.
"""

from __future__ import annotations

import hmac
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:  # only types: this module imports without the serve extra
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["LOOPBACK_HOSTS", "MIN_TOKEN_LENGTH", "WILDCARD_HOSTS", "Guard", "Policy", "Scrubber",
           "check_bind", "environ_secrets", "event_data", "is_loopback", "secret_values"]

def event_data(event: Any, *, details: bool) -> dict[str, Any]:
    """``event.to_dict()`` as a client may see it: without ``details``, every tool traceback in
    it (a ``tool_error``'s, and those inside a sub-run's or a result's steps) is dropped and
    the error sentence stays. The one rule for SSE, AG-UI and any other encoder."""
    data: dict[str, Any] = event.to_dict()
    return data if details else _without_tracebacks(data)


def _without_tracebacks(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (None if k == "traceback" else _without_tracebacks(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_without_tracebacks(v) for v in value]
    return value


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
"""Bind addresses that keep the server on this machine (no token needed)."""
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})
_SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


MIN_TOKEN_LENGTH = 16
"""Shorter tokens are refused (they could be guessed)."""
_TOKEN_HINT = "make one with: python -c \"import secrets; print(secrets.token_urlsafe(32))\""


def is_loopback(host: str) -> bool:
    """True for the bind addresses that keep the server on this machine."""
    return host.strip("[]").lower() in LOOPBACK_HOSTS


def check_bind(host: str, token: str | None) -> None:
    """:class:`UserError` unless binding ``host`` with ``token`` is safe: a token of
    :data:`MIN_TOKEN_LENGTH`+ characters whenever ``host`` is not a loopback address."""
    from reactloop.errors import UserError

    if token is not None and len(token) < MIN_TOKEN_LENGTH:
        raise UserError(f"the token is shorter than {MIN_TOKEN_LENGTH} characters; "
                        f"{_TOKEN_HINT}")
    if token is None and not is_loopback(host):
        raise UserError(f"host {host!r} exposes the server beyond this machine: pass a token "
                        "(--token TOKEN or REACTLOOP_SERVE_TOKEN); every API call then needs "
                        f"'Authorization: Bearer TOKEN'; {_TOKEN_HINT}")


@dataclass(frozen=True, slots=True)
class Policy:
    """What the guard lets through (built by ``create_app`` from its arguments)."""

    token: str | None
    """The bearer token every ``/api/`` request needs; None: no authentication (loopback)."""
    allowed_hosts: frozenset[str] | None
    """Host names the server answers to (lower case, no port); None: any (a wildcard bind,
    which always has a token)."""
    allowed_origins: frozenset[str]
    """Browser origins (``scheme://host[:port]``) allowed besides the server's own."""
    max_body: int
    """The largest request body accepted, in bytes."""


class Guard:
    """The ASGI middleware described in the module docstring."""

    def __init__(self, app: ASGIApp, policy: Policy) -> None:
        self.app = app
        self.policy = policy
        self._token = policy.token.encode() if policy.token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self.app(scope, receive, send)
            return  # no websockets here
        headers = _headers(scope)
        origin = headers.get("origin")
        refused = self._refusal(scope, headers, origin)
        if refused is not None:
            await _reply(send, *refused, cors_origin=None)
            return
        cors = origin if origin in self.policy.allowed_origins else None
        if scope["method"] == "OPTIONS" and cors is not None:
            await _reply(send, 204, "", cors_origin=cors, preflight=True)
            return
        if scope["method"] in _BODY_METHODS:
            body = await _read_body(receive, headers, self.policy.max_body)
            if body is None:
                await _reply(send, 413, f"the request body is larger than "
                             f"{self.policy.max_body} bytes", cors_origin=cors)
                return
            receive = _replay(body, receive)
        await self.app(scope, receive, _with_headers(send, cors))

    def _refusal(self, scope: Scope, headers: Mapping[str, str], origin: str | None
                 ) -> tuple[int, str] | None:
        host = headers.get("host", "")
        allowed = self.policy.allowed_hosts
        if allowed is not None and _hostname(host) not in allowed:
            return 403, (f"host {host!r} is not served here (DNS rebinding protection); start "
                         "the server with --allow-host NAME to answer to another name")
        if origin is not None and origin not in self.policy.allowed_origins \
                and not _same_origin(origin, host):
            return 403, (f"cross-origin request from {origin!r} refused; allow it with "
                         "--allow-origin ORIGIN")
        path: str = scope["path"]
        if (self._token is not None and (path.startswith("/api/") or path == "/api")
                and not self._authorized(headers.get("authorization", ""))):
            return 401, ("missing or wrong token: send the header "
                         "'Authorization: Bearer <token>' given to reactloop serve")
        return None

    def _authorized(self, header: str) -> bool:
        scheme, _, value = header.partition(" ")
        assert self._token is not None
        # compare_digest takes the same time wherever the first difference is
        return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(),
                                                                  self._token)


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in scope["headers"]:
        out.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
    return out


def _hostname(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):  # [::1]:8000
        return host[1:host.find("]")] if "]" in host else host
    name, sep, port = host.rpartition(":")
    return name if sep and port.isdigit() else host


def _same_origin(origin: str, host: str) -> bool:
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.strip().lower()


async def _read_body(receive: Receive, headers: Mapping[str, str], limit: int) -> bytes | None:
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # then wait for the disconnect, as the server would say

    return replay


def _with_headers(send: Send, cors_origin: str | None) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            headers.extend(_SECURITY_HEADERS)
            if cors_origin is not None:
                headers.extend(_cors(cors_origin, preflight=False))
            message = {**message, "headers": headers}
        await send(message)

    return wrapped


def _cors(origin: str, *, preflight: bool) -> list[tuple[bytes, bytes]]:
    out = [(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin")]
    if preflight:
        out += [(b"access-control-allow-methods", b"GET, POST, DELETE, OPTIONS"),
                (b"access-control-allow-headers", b"authorization, content-type, accept"),
                (b"access-control-max-age", b"600")]
    return out


async def _reply(send: Send, status: int, message: str, *, cors_origin: str | None,
                 preflight: bool = False) -> None:
    body = b"" if status == 204 else json.dumps({"error": message}).encode()
    headers = [*_SECURITY_HEADERS]
    if body:
        headers += [(b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    if cors_origin is not None:
        headers.extend(_cors(cors_origin, preflight=preflight))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


# -- secrets ---------------------------------------------------------------------------------

def secret_values(environ: Mapping[str, str], extra: Iterable[str | None] = ()) -> list[str]:
    """The values that must never appear in a response: environment variables named like
    secrets (reactloop's one set of secret-name rules, :func:`reactloop._redact.is_secret_name`:
    ``DB_PASSWORD``, ``GITHUB_PAT``, ``SERVICE_TOKEN``, ``*_API_KEY``…) and ``extra``."""
    from reactloop._redact import environ_secret_values

    found = set(environ_secret_values(environ))
    found.update(v for v in extra if v)
    return sorted(found, key=len, reverse=True)  # longest first: no partial leftovers


class Scrubber:
    """Scrubs secrets from outgoing text and JSON with reactloop's redaction.

    JSON is checked as text first (the common case: nothing found, nothing to do); when
    something is found, the secrets are replaced inside the decoded strings and the JSON is
    encoded again, so a replacement can never break an escape sequence."""

    def __init__(self, redact: Callable[[str], str]) -> None:
        self.text = redact

    def json(self, data: Any) -> str:
        """``data`` as JSON, without secrets."""
        text = json.dumps(data, ensure_ascii=False, default=str)
        return text if self.text(text) == text else json.dumps(
            self._values(json.loads(text)), ensure_ascii=False)

    def json_text(self, text: str) -> str:
        """A JSON document's text, without secrets."""
        if self.text(text) == text:
            return text
        try:
            data = json.loads(text)
        except ValueError:
            return self.text(text)
        return json.dumps(self._values(data), ensure_ascii=False)

    def _values(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k): self._values(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._values(v) for v in value]
        return value


def environ_secrets(token: str | None) -> Scrubber:
    """Register this process's secret-looking environment values and ``token`` with reactloop's
    redaction (registered secrets, credential headers, key-shaped strings) and return the
    :class:`Scrubber` for everything the app sends."""
    from reactloop._redact import add_secret, redact

    for value in secret_values(os.environ, [token]):
        add_secret(value)
    return Scrubber(redact)
