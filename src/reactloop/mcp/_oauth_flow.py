"""The OAuth flow of remote MCP servers, through the official SDK's client auth
(``mcp.client.auth.OAuthClientProvider``: discovery, dynamic client registration, PKCE,
refresh). See :mod:`reactloop.mcp._oauth` for the settings and the token store.

Two ways to use the SDK's provider:

* in a run (:func:`run_auth`), tokens come from the store and are refreshed when they expire;
  the provider's redirect handler never opens anything: it raises
  :class:`~reactloop.mcp._oauth.LoginRequired`, so the run ends with one line naming
  ``reactloop mcp login`` (no browser, no hang);
* in a login (:func:`login`), the authorization URL is shown (and opened in a browser when
  one is available) and a loopback listener receives the redirect.

Imported only with the SDK.
"""

from __future__ import annotations

import asyncio
import html
import logging
import os
import secrets
import sys
import unicodedata
import webbrowser
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack, suppress
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlparse

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from reactloop.errors import UserError
from reactloop.mcp._oauth import OAuth, TokenFile, login_required

if TYPE_CHECKING:
    from reactloop.mcp._errors import ServerConfig

__all__ = ["login", "run_auth"]

LOGIN_TIMEOUT = 300.0
"""Seconds a login waits for the browser's redirect."""
READ_TIMEOUT = 10.0
"""Seconds the callback listener waits for a request's line and headers (a browser's
speculative preconnect sends nothing: it must not hold the listener open)."""

RedirectHandler = Callable[[str], Awaitable[None]]


class _Quiet(logging.Filter):
    """The SDK logs a traceback when its flow fails and a warning when a refresh is refused;
    reactloop reports both in one line (a run's login hint, a login's error), so those records
    go to DEBUG, without the traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage().startswith(("OAuth flow error", "Token refresh failed")):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            record.exc_info = record.exc_text = None
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        return True


def _install_filter() -> None:
    logger = logging.getLogger("mcp.client.auth.oauth2")
    if not any(isinstance(f, _Quiet) for f in logger.filters):
        logger.addFilter(_Quiet())


_install_filter()


class _Provider(OAuthClientProvider):
    """The SDK's provider, knowing when a stored access token expires (the SDK keeps that in
    memory only, so a new process would send an expired token instead of refreshing it)."""

    async def _initialize(self) -> None:
        await super()._initialize()
        expires = getattr(self.context.storage, "expires_at", None)
        if callable(expires) and self.context.current_tokens is not None:
            self.context.token_expiry_time = expires()


def _storage(server: ServerConfig, oauth: OAuth) -> Any:
    return oauth.storage if oauth.storage is not None else TokenFile(server.url, server.name)


def _metadata(oauth: OAuth, redirect_uri: str) -> OAuthClientMetadata:
    return OAuthClientMetadata.model_validate({
        "redirect_uris": [redirect_uri], "client_name": oauth.client_name,
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
        "token_endpoint_auth_method": "none", **({"scope": oauth.scope} if oauth.scope else {}),
    })


def run_auth(server: ServerConfig, oauth: OAuth) -> OAuthClientProvider:
    """The provider of a run: stored tokens, refreshed when they expire; a needed login raises
    :class:`LoginRequired` (before connecting when the file holds no tokens at all)."""
    storage = _storage(server, oauth)
    redirect = "http://127.0.0.1/callback"
    if isinstance(storage, TokenFile):
        entry = storage.entry()
        if not entry.get("tokens"):
            raise login_required(server.name, server.url, oauth, "needs a login (no tokens "
                                 "stored)")
        redirect = ((entry.get("client") or {}).get("redirect_uris") or [redirect])[0]

    async def refuse(url: str) -> None:
        raise login_required(server.name, server.url, oauth,
                             "needs a new login (its tokens were refused and could not be "
                             "refreshed)")

    async def never() -> AuthorizationCodeResult:  # pragma: no cover - refuse raised first
        raise UserError("no login in a run")

    return _Provider(server.url, _metadata(oauth, redirect), storage, refuse, never)


# -- login --------------------------------------------------------------------------------------
async def login(server: ServerConfig, oauth: OAuth, *, open_browser: bool = True,
                redirect_handler: RedirectHandler | None = None,
                say: Callable[[str], None] | None = None,
                within: float = LOGIN_TIMEOUT) -> int:
    """Log in to ``server``: authorize (the URL shown, a browser opened when one is
    available, the redirect received on a loopback port), store the tokens, and list the
    server's tools with them. Returns how many tools the server offers.

    ``redirect_handler(url)`` replaces showing the URL (tests follow it with an HTTP client).

    Raises:
        UserError: the login failed, was refused or timed out (one sentence).
    """
    show = say or (lambda line: print(line, file=sys.stderr, flush=True))
    storage = _storage(server, oauth)
    listener = _Callback()
    await listener.start(await _port(storage, oauth))
    try:
        client = await storage.get_client_info()
        if client is not None and listener.redirect_uri not in [str(u) for u in
                                                                  client.redirect_uris or ()]:
            client = None  # registered for another port: register again
        seen = _LoginStorage(storage, client)  # the stored tokens stay until new ones come
        provider = _Provider(server.url, _metadata(oauth, listener.redirect_uri), seen,
                             listener.expecting(redirect_handler or _shower(show, open_browser)),
                             lambda: listener.wait(within))
        count = await _connect(server, provider)
        if not seen.stored:
            raise UserError(f"MCP server {server.name!r} ({server.url}) answered without asking "
                            "for a login, so nothing was stored; it does not need \"oauth\"")
        return count
    except Exception as exc:
        raise _login_error(server, exc) from None
    finally:
        await listener.close()


async def _port(storage: Any, oauth: OAuth) -> int:
    if oauth.callback_port:
        return oauth.callback_port
    client = await storage.get_client_info()
    for uri in (client.redirect_uris or ()) if client is not None else ():
        parsed = urlparse(str(uri))
        if parsed.hostname in ("127.0.0.1", "localhost") and parsed.port:
            return parsed.port
    return 0


def _shower(show: Callable[[str], None], open_browser: bool) -> RedirectHandler:
    async def redirect(url: str) -> None:
        show("Open this URL to log in (waiting for the redirect):")
        show(url)
        if open_browser and _has_browser():
            with suppress(webbrowser.Error):
                webbrowser.open(url)
    return redirect


def _has_browser() -> bool:
    """A graphical browser can be shown (on Linux: a display); console browsers are not
    started in the user's terminal."""
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY")
                                                 or os.environ.get("WAYLAND_DISPLAY")):
        return False
    try:
        webbrowser.get()
    except webbrowser.Error:
        return False
    return True


class _LoginStorage:
    """The store, seen by a login: no tokens (a new authorization) and the registration only
    when it fits the listener's redirect URI."""

    def __init__(self, inner: Any, client: Any) -> None:
        self.inner, self.client = inner, client
        self.stored = False
        """New tokens were stored."""

    async def get_tokens(self) -> Any:
        return None

    async def set_tokens(self, tokens: Any) -> None:
        await self.inner.set_tokens(tokens)
        self.stored = True

    async def get_client_info(self) -> Any:
        return self.client

    async def set_client_info(self, client_info: Any) -> None:
        self.client = client_info
        await self.inner.set_client_info(client_info)


async def _connect(server: ServerConfig, provider: OAuthClientProvider) -> int:
    import httpx2
    from mcp import Client
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client

    headers = dict(server.headers or {})
    async with AsyncExitStack() as stack:
        if server.transport == "sse":
            transport = sse_client(server.url, headers=headers, timeout=30.0, auth=provider)
        else:
            http = await stack.enter_async_context(httpx2.AsyncClient(
                headers=headers, timeout=httpx2.Timeout(30.0, read=300.0), auth=provider))
            transport = streamable_http_client(server.url, http_client=http)
        client = await stack.enter_async_context(Client(transport))
        page = await client.list_tools()
        return len(page.tools)


def _login_error(server: ServerConfig, exc: BaseException) -> UserError:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, UserError):
        return exc
    text = str(exc) or type(exc).__name__
    return UserError(f"login to MCP server {server.name!r} ({server.url}) failed: "
                     f"{type(exc).__name__}: {text}")


class _Callback:
    """A one-shot HTTP listener on 127.0.0.1 for the authorization redirect."""

    def __init__(self) -> None:
        self.result: asyncio.Future[AuthorizationCodeResult] = (
            asyncio.get_running_loop().create_future())
        self.server: asyncio.Server | None = None
        self.redirect_uri = ""
        self._open: set[asyncio.StreamWriter] = set()
        self.state: str | None = None
        """The ``state`` of the authorization URL: a redirect without it is not this login's."""

    async def start(self, port: int) -> None:
        try:
            self.server = await asyncio.start_server(self._serve, "127.0.0.1", port)
        except OSError as exc:
            raise UserError(f"cannot listen for the login redirect on 127.0.0.1:{port}: "
                            f"{exc.strerror or exc}; choose another with --port (or "
                            '"oauth": {"callback_port": N})') from None
        bound = self.server.sockets[0].getsockname()[1]
        self.redirect_uri = f"http://127.0.0.1:{bound}/callback"

    def expecting(self, show: RedirectHandler) -> RedirectHandler:
        """``show``, learning the authorization URL's ``state`` first (so a page that sends
        the browser to the listener can neither end the login nor give it a code)."""
        async def redirect(url: str) -> None:
            states = parse_qs(urlparse(url).query).get("state")
            self.state = states[0] if states else None
            await show(url)
        return redirect

    async def wait(self, within: float) -> AuthorizationCodeResult:
        try:
            async with asyncio.timeout(within):
                return await asyncio.shield(self.result)
        except TimeoutError:
            raise UserError(f"no login redirect arrived within {within:g} s; run the login "
                            "again and open the URL it prints") from None

    async def close(self) -> None:
        """Stop listening and end the connections still open (an idle one would make
        ``wait_closed`` wait for it from Python 3.12.1 on). They are closed rather than their
        handlers cancelled: a handler reads the end and returns (3.12.1 logs a cancelled one
        as an error)."""
        if self.server is not None:
            self.server.close()
            for writer in list(self._open):
                writer.close()
            with suppress(TimeoutError):
                async with asyncio.timeout(READ_TIMEOUT):
                    await self.server.wait_closed()
        if not self.result.done():
            self.result.cancel()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._open.add(writer)
        try:
            line = await self._request_line(reader)
            if line is None:
                return  # nothing (or too little) came in time: a preconnect
            parts = line.split()
            target = urlparse(parts[1]) if len(parts) > 1 else urlparse("/")
            if target.path != "/callback":
                await _reply(writer, 404, "Not found.")
                return
            query = {k: v[0] for k, v in parse_qs(target.query).items()}
            await _reply(writer, *self._take(query))
        except ConnectionError:
            pass  # the browser went away (or close() ended the connection) before the reply
        finally:
            writer.close()
            self._open.discard(writer)

    @staticmethod
    async def _request_line(reader: asyncio.StreamReader) -> str | None:
        """The request line, its headers read past, within :data:`READ_TIMEOUT`."""
        try:
            async with asyncio.timeout(READ_TIMEOUT):
                line = (await reader.readline()).decode("latin-1")
                while (await reader.readline()).strip():
                    pass  # the headers
        except (TimeoutError, ValueError, ConnectionError):
            return None  # ValueError: a line over the reader's limit
        return line or None  # empty: the connection ended (or close() ended it)

    def _take(self, query: dict[str, str]) -> tuple[int, str]:
        if self.result.done():
            return 409, "This login was already completed; you can close this window."
        state = query.get("state", "").encode()
        if self.state is None or not secrets.compare_digest(state, self.state.encode()):
            return 400, ("This redirect is not the one of the login under way (its state does "
                         "not match); nothing was done.")
        if "error" in query:
            why = _printable(query.get("error_description") or query["error"])
            self.result.set_exception(UserError(f"the authorization server refused the login: "
                                                f"{why}"))
            return 400, f"Login refused: {why}"
        if "code" not in query:
            return 400, "The redirect carries no authorization code."
        self.result.set_result(AuthorizationCodeResult(code=query["code"],
                                                       state=query.get("state"),
                                                       iss=query.get("iss")))
        return 200, "Logged in. You can close this window and return to the terminal."


REASON_LIMIT = 300
"""Characters of an authorization server's reason shown (it comes from the redirect's URL)."""


def _printable(text: str) -> str:
    """``text`` without control (or format) characters, cut at :data:`REASON_LIMIT`: it is
    printed on the user's terminal, and anybody can write it into the redirect."""
    text = "".join(c if not unicodedata.category(c).startswith("C") else " " for c in text)
    text = " ".join(text.split())
    return text if len(text) <= REASON_LIMIT else text[:REASON_LIMIT] + "…"


async def _reply(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    body = f"<!doctype html><title>reactloop</title><p>{html.escape(text)}</p>".encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 409: "Conflict"}[status]
    writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
                 f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
    await writer.drain()
