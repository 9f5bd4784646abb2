"""A live connection to one MCP server, and the restart-once policy around it.

Imported only once the SDK is known to be installed (from :meth:`MCPServer.open`).

Why a dedicated task owns each connection: the SDK's client runs its transport in an anyio task
group entered by whoever enters the client. (1) anyio requires a task group to be exited by the
task that entered it, but a restart can start from any tool-call task; (2) when the transport
fails (an HTTP server that dies mid-request) the task group cancels the task that holds it,
which must never be the agent's run. So a small owner task enters the client and waits; tool
calls talk to the client from their own tasks; closing sets an event and waits for the owner.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, cast

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError

from reactloop._version import __version__
from reactloop.errors import ToolRetry
from reactloop.mcp._client_side import ClientSide
from reactloop.mcp._errors import MCPServerError, ServerConfig
from reactloop.mcp._input_required import call_tool
from reactloop.tools._source import active_caller

if TYPE_CHECKING:
    from mcp.client import Transport

    from reactloop.tools._source import Emit

__all__ = ["Connection", "Link"]

_STDERR_TAIL = 2000
_NOISE_SAMPLE = 120  # characters of the first non-protocol stdout line kept for the message
_CLOSE_WAIT = 10.0  # seconds to let a lost HTTP transport finish unwinding before judging it


@dataclass
class _Attempt:
    """Whether this call's ``tools/call`` request reached the transport."""

    sent: bool = False


_ATTEMPT: contextvars.ContextVar[_Attempt | None] = contextvars.ContextVar(
    "reactloop_mcp_attempt", default=None
)


_CONNECTION: contextvars.ContextVar[Connection | None] = contextvars.ContextVar(
    "reactloop_mcp_connection", default=None
)
"""The connection whose SDK tasks are running (set in its owner task, inherited by the
transport's tasks), so log records of the SDK can be told apart by server."""


class _StdoutNoise(logging.Filter):
    """The SDK logs a full traceback for every stdout line of a server that is not JSON-RPC
    (a banner, a stray ``print``): 50 lines of noise made 550 lines on stderr. For our own
    connections we count such lines instead and name them, once, in the start-up error or an
    ``mcp_warning``; any other record of ours keeps its message on one line, without the
    traceback. Records of other users of the SDK in this process pass unchanged."""

    def filter(self, record: logging.LogRecord) -> bool:
        conn = _CONNECTION.get()
        if conn is None:
            return True
        if record.msg == "Failed to parse JSONRPC message from server":
            conn.note_noise(record.exc_info[1] if record.exc_info else None)
            return False
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            record.msg = f"MCP server {conn.server.name!r}: {record.getMessage()}: {exc!r}"
            record.args = None
            record.exc_info = record.exc_text = None
        return True


def _install_noise_filter() -> None:
    logger = logging.getLogger("mcp.client.stdio")
    if not any(isinstance(f, _StdoutNoise) for f in logger.filters):
        logger.addFilter(_StdoutNoise())


_install_noise_filter()


class _Lost(Exception):
    """The connection ended during a call. ``sent`` is False when the request provably never
    reached the server, so retrying it on a new connection cannot run the tool twice."""

    def __init__(self, sent: bool) -> None:
        super().__init__("connection lost")
        self.sent = sent


class _ReadWatch:
    """The transport's read stream, noting end of stream (the server exited or hung up)."""

    def __init__(self, inner: Any, on_eof: Callable[[], None]) -> None:
        self._inner = inner
        self._on_eof = on_eof

    @property
    def last_context(self) -> contextvars.Context | None:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_eof()
            raise

    def __aiter__(self) -> _ReadWatch:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _ReadWatch:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class _WriteWatch:
    """The transport's write stream, marking the current call's attempt once its request
    has been handed to the transport."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def send(self, item: Any, /) -> None:
        await self._inner.send(item)
        attempt = _ATTEMPT.get()
        if attempt is not None and getattr(item.message, "method", None) == "tools/call":
            attempt.sent = True

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WriteWatch:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class Connection:
    """One started server process (stdio) or HTTP session, owned by its own task."""

    def __init__(self, server: ServerConfig, side: ClientSide) -> None:
        self.server = server
        self.side = side
        self.client: Client | None = None
        self.tools: list[types.Tool] = []
        self.failure: BaseException | None = None
        self._stderr: IO[bytes] | None = (
            tempfile.TemporaryFile() if server.transport == "stdio" else None  # noqa: SIM115
        )
        self._tail = ""
        self._eof = False
        self._lost = False
        self._stop = asyncio.Event()
        self._owner: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self.noise = 0
        """Lines the server wrote to stdout that are not JSON-RPC messages."""
        self._noise_sample = ""

    @property
    def connected(self) -> bool:
        owner = self._owner
        return (
            self.client is not None
            and owner is not None
            and not owner.done()
            and not (self._eof or self._lost)
        )

    def note_noise(self, exc: BaseException | None) -> None:
        self.noise += 1
        if self.noise == 1:
            errors = getattr(exc, "errors", None)
            try:
                line = errors()[0]["input"] if callable(errors) else ""
            except (IndexError, KeyError, TypeError, ValueError):
                line = ""
            self._noise_sample = str(line)[:_NOISE_SAMPLE]

    def noise_summary(self) -> str:
        """One sentence on the stdout noise seen so far, or ""."""
        if not self.noise:
            return ""
        lines = "1 line" if self.noise == 1 else f"{self.noise} lines"
        return (f"it wrote {lines} to stdout that are not JSON-RPC messages (the first: "
                f"{self._noise_sample!r}); an MCP stdio server must write only protocol "
                "messages to stdout and log to stderr")

    # -- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        """Start the server, shake hands and list its tools; raise on failure or timeout."""
        timeout = self.server.startup_timeout
        ready = self._ready = asyncio.get_running_loop().create_future()
        self._owner = asyncio.create_task(self._own(ready), name=f"mcp server {self.server.name}")
        done, _ = await asyncio.wait({ready}, timeout=timeout)
        if not done:
            raise TimeoutError(f"it did not complete the MCP handshake within {timeout:g} s")
        ready.result()

    async def _own(self, ready: asyncio.Future[None]) -> None:
        _CONNECTION.set(self)  # this task's own context: the SDK's tasks inherit it
        try:
            async with Client(self._transport(), client_info=_client_info(),
                              **self.side.client_options()) as client:
                self.tools = await _list_tools(client)
                async with _listening(client, self.side):  # no change is missed after this
                    self.client = client
                    ready.set_result(None)
                    await self._stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except Exception as exc:  # the connection ended; callers see it through .failure
            self.failure = exc
            if not ready.done():
                ready.set_exception(exc)
        finally:
            self.client = None
            self._lost = True

    def _transport(self) -> Transport:
        server = self.server
        if server.transport == "stdio":
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            params = StdioServerParameters(
                command=server.command,
                args=list(server.args),
                env=dict(server.env) if server.env is not None else None,
                cwd=server.cwd,
            )
            inner = stdio_client(params, errlog=cast(Any, self._stderr))
        elif server.transport == "sse":
            inner = _sse_transport(server.url, server.headers, _oauth(server))
        else:
            inner = _http_transport(server.url, server.headers, _oauth(server))
        return cast("Transport", self._watched(inner))

    @asynccontextmanager
    async def _watched(self, inner: Any) -> AsyncIterator[tuple[_ReadWatch, _WriteWatch]]:
        async with inner as (read, write):
            yield _ReadWatch(read, self._mark_eof), _WriteWatch(write)

    def _mark_eof(self) -> None:
        self._eof = True

    async def close(self) -> None:
        """Stop the server (stdio: close stdin, then terminate its process group) and wait."""
        self._stop.set()
        owner = self._owner
        if owner is not None and not owner.done():
            if self.client is None:  # still starting: nothing waits on the stop event yet
                owner.cancel()
            await _wait_even_if_cancelled(owner)
        if self._ready is not None and self._ready.done() and not self._ready.cancelled():
            self._ready.exception()  # retrieved (start() may have timed out before it was set)
        self._tail = self.stderr_tail()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def stderr_tail(self, limit: int = _STDERR_TAIL) -> str:
        """The last lines the server wrote to stderr (stdio only)."""
        f = self._stderr
        if f is None:
            return self._tail
        size = os.fstat(f.fileno()).st_size
        # pread, not seek: the file offset is shared with the child process that writes to it
        data = os.pread(f.fileno(), min(size, limit), max(0, size - limit))
        text = data.decode("utf-8", errors="replace")
        if size > limit and "\n" in text:
            text = text.split("\n", 1)[1]
        return text.strip()

    # -- calls -------------------------------------------------------------------------------
    async def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """Call a tool; raises ``_Lost`` when the connection ends and TimeoutError on timeout
        (time the user spends answering the server's questions does not count). A server
        that answers with input-required results is answered and called again
        (:mod:`reactloop.mcp._input_required`)."""
        timeout = self.server.timeout
        client, owner = self.client, self._owner
        if client is None or owner is None or not self.connected:
            raise _Lost(sent=False)
        attempt = _Attempt()

        async def send() -> types.CallToolResult:
            _ATTEMPT.set(attempt)  # this task's own context copy: only this call is marked
            return await call_tool(client, self.server.name, name, dict(arguments),
                                   self.side.progress(name))

        task = asyncio.create_task(send())
        try:
            done = await self._wait(task, owner, timeout)
        finally:
            if not task.done():
                task.cancel()  # the SDK tells the server the request was cancelled
                task.add_done_callback(_retrieve)
        if task in done:
            try:
                return task.result()
            except MCPError as exc:
                if _session_expired(exc):  # an HTTP server that restarted: the call never ran
                    self._lost = True
                    raise _Lost(sent=False) from None
                if exc.code != types.CONNECTION_CLOSED:
                    raise
        elif owner not in done:
            raise TimeoutError(timeout)
        raise _Lost(sent=await self._reached_server(attempt))

    async def _wait(self, task: asyncio.Task[Any], owner: asyncio.Task[None], limit: float
                    ) -> set[asyncio.Task[Any]]:
        """Wait for the call (or the connection's end) at most ``limit`` seconds, not
        counting the time a person spends answering the server's questions: the clock starts
        again after each answer."""
        loop = asyncio.get_running_loop()
        until = loop.time() + limit
        while True:
            done, _ = await asyncio.wait({task, owner}, timeout=max(0.0, until - loop.time()),
                                         return_when=asyncio.FIRST_COMPLETED)
            now = loop.time()
            if done:
                return done
            if self.side.asking:
                until = now + limit
            elif self.side.answered + limit > now:
                until = self.side.answered + limit
            else:
                return done

    async def _reached_server(self, attempt: _Attempt) -> bool:
        self._lost = True
        if not attempt.sent:
            return False
        if self.server.transport != "stdio" and self._owner is not None:
            # a refused connection fails the transport: wait for that verdict
            await asyncio.wait({self._owner}, timeout=_CLOSE_WAIT)
            return not _refused(self.failure)
        return True


class Link:
    """The connection of one ``open()``: restarts a lost server once and retries calls that
    provably did not reach it."""

    def __init__(self, server: ServerConfig, emit: Emit) -> None:
        self.server = server
        self.emit = emit
        self.side = ClientSide(server, emit)
        """Sampling, elicitation, roots, logs, progress and list changes of this server."""
        self.conn: Connection | None = None
        self.down: str | None = None
        self.restarts = 0
        self._closed = asyncio.Event()
        self._lock = asyncio.Lock()

    @property
    def connected(self) -> bool:
        return self.conn is not None and self.conn.connected

    async def start(self) -> list[types.Tool]:
        self.conn = await self._connect()
        return self.conn.tools

    async def close(self) -> None:
        self._closed.set()  # a call still running must not restart the server after this
        await self.side.stop()
        conn, self.conn = self.conn, None
        if conn is not None:
            await conn.close()

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Any:
        caller = active_caller()
        self.side.enter(caller)  # sampling and progress reach the run that called
        try:
            return await self._call(tool, arguments)
        finally:
            self.side.leave(caller)

    async def list_tools(self) -> list[types.Tool]:
        """List the server's tools again (after it said they changed)."""
        client = await self.client()
        self.side.tools_changed = False
        return await _list_tools(client, refresh=True)

    async def client(self) -> Client:
        """The SDK's client of the live connection (restarted first if it was lost)."""
        conn, _ = await self._live(None)
        client = conn.client
        if client is None:
            raise ToolRetry(f"MCP server {self.server.name!r} is not connected")
        return client

    @property
    def capabilities(self) -> types.ServerCapabilities | None:
        """What the server announced (None while not connected)."""
        client = self.conn.client if self.conn is not None else None
        return client.server_capabilities if client is not None else None

    async def _call(self, tool: str, arguments: Mapping[str, Any]) -> Any:
        name, timeout = self.server.name, self.server.timeout
        conn, restarted = await self._live(None)
        while True:
            try:
                return await conn.call(tool, arguments)
            except TimeoutError:
                raise ToolRetry(
                    f"MCP server {name!r} did not answer tool {tool!r} within {timeout:g} s; "
                    "the call was cancelled. Try simpler arguments or another approach."
                ) from None
            except _Lost as lost:
                if lost.sent:
                    self._warn("connection_lost", f"the connection closed while {tool!r} ran", conn)
                    raise ToolRetry(
                        f"MCP server {name!r} stopped (crashed or closed the connection) while "
                        f"running {tool!r}; the call may or may not have taken effect. The "
                        "server is restarted for the next call."
                    ) from None
                if restarted:
                    raise ToolRetry(
                        f"MCP server {name!r} stopped again right after a restart, before "
                        f"{tool!r} could be sent; it is not usable now."
                    ) from None
            # the request never reached the server: restart it and send the call again
            conn, restarted = await self._live(conn)

    async def _live(self, failed: Connection | None) -> tuple[Connection, bool]:
        """The current connection, restarted first if it was lost; True when restarted here."""
        async with self._lock:
            if self.down is not None:
                raise ToolRetry(self.down)
            conn = self.conn
            if (
                conn is not None
                and conn is not failed
                and conn.connected
                and not self._closed.is_set()
            ):
                return conn, False
            self.conn = None
            tail = ""
            if conn is not None:
                await conn.close()
                tail = conn.stderr_tail()
            self.conn = await self._restart(tail)
            return self.conn, True

    async def _restart(self, tail: str) -> Connection:
        shut_down = f"MCP server {self.server.name!r} was shut down (its run or session ended)"
        if self._closed.is_set():
            raise ToolRetry(shut_down)
        try:
            conn = await self._connect()
        except MCPServerError as exc:
            self.down = (
                f"MCP server {self.server.name!r} stopped and could not be restarted: {exc.reason}"
            )
            self._warn("restart_failed", self.down, None, exc.stderr_tail or tail)
            raise ToolRetry(self.down) from None
        if self._closed.is_set():  # closed while we were restarting it
            await conn.close()
            raise ToolRetry(shut_down)
        self.restarts += 1
        self._warn("restarted", "the server stopped and was restarted", None, tail)
        return conn

    async def _connect(self) -> Connection:
        conn = Connection(self.server, self.side)
        try:
            await conn.start()
        except BaseException as exc:
            await conn.close()
            if not isinstance(exc, Exception):
                raise
            raise _start_error(self.server, exc, conn.stderr_tail(), conn.noise_summary()
                               ) from exc
        if conn.noise:
            self._warn("stdout_noise", f"ignored stdout noise: {conn.noise_summary()}", conn)
        return conn

    def _warn(self, kind: str, message: str, conn: Connection | None, tail: str = "") -> None:
        if conn is not None:
            tail = conn.stderr_tail()
        self.emit(
            "mcp_warning",
            {"server": self.server.name, "kind": kind, "message": message, "stderr_tail": tail},
        )


def _start_error(server: ServerConfig, exc: Exception, tail: str, noise: str = ""
                 ) -> MCPServerError:
    from reactloop.mcp._oauth import login_needed

    if (needed := login_needed(exc)) is not None:  # one line: the login command
        return MCPServerError(str(needed), server=server.name, reason=str(needed))
    what = "could not be reached" if server.transport != "stdio" else "failed to start"
    reason = _reason(exc) + (f"; {noise}" if noise else "")
    message = f"MCP server {server.name!r} ({server.describe()}) {what}: {reason}"
    if tail:
        message += f"\n--- its stderr (last lines) ---\n{tail}"
    return MCPServerError(message, server=server.name, reason=reason, stderr_tail=tail)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError):
        return f"command not found ({exc.filename or exc})"
    if isinstance(exc, MCPError) and exc.code == types.CONNECTION_CLOSED:
        return "it exited or closed the connection during the handshake"
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_reason(e) for e in exc.exceptions)
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {text}"


def _session_expired(exc: MCPError) -> bool:
    """The SDK's answer to HTTP 404 for a session the server no longer knows."""
    return exc.code == types.INVALID_REQUEST and exc.message == "Session terminated"


def _refused(exc: BaseException | None) -> bool:
    """Did the transport fail because the server refused the connection (request not sent)?"""
    import httpx2

    if exc is None:
        return False
    if isinstance(exc, (httpx2.ConnectError, httpx2.ConnectTimeout)):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return any(_refused(e) for e in exc.exceptions)
    return _refused(exc.__cause__) if exc.__cause__ is not exc else False


def _oauth(server: ServerConfig) -> Any:
    """The SDK's OAuth provider of a server that uses OAuth (:mod:`reactloop.mcp._oauth`)."""
    oauth = getattr(server, "oauth", None)
    if oauth is None:
        return None
    from reactloop.mcp._oauth_flow import run_auth

    return run_auth(server, oauth)


@asynccontextmanager
async def _http_transport(url: str, headers: Mapping[str, str] | None, auth: Any = None
                          ) -> AsyncIterator[Any]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    # the SDK's defaults: 30 s to connect/write, 300 s to read (responses may be streamed)
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with (
        httpx2.AsyncClient(headers=dict(headers or {}), timeout=timeout, auth=auth) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


@asynccontextmanager
async def _listening(client: Client, side: ClientSide) -> AsyncIterator[None]:
    """On 2026-07-28 connections list changes arrive on a ``subscriptions/listen`` stream
    (older servers send ``notifications/tools/list_changed``, heard by ``side``)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    caps = client.server_capabilities.tools
    if client.protocol_version not in MODERN_PROTOCOL_VERSIONS or not (caps and caps.list_changed):
        yield
        return

    acked = asyncio.Event()

    async def listen() -> None:
        try:
            async with client.listen(tools_list_changed=True) as events:
                acked.set()
                async for _ in events:
                    side.tools_changed = True
        except Exception as exc:  # no list changes then; the tools keep working
            logging.getLogger("reactloop.mcp").debug("MCP server %r: listen ended: %r",
                                                     side.server.name, exc)
        finally:
            acked.set()

    task = asyncio.create_task(listen())
    try:
        await acked.wait()
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@asynccontextmanager
async def _sse_transport(url: str, headers: Mapping[str, str] | None, auth: Any = None
                         ) -> AsyncIterator[Any]:
    from mcp.client.sse import sse_client

    async with sse_client(url, headers=dict(headers or {}), timeout=30.0, auth=auth) as streams:
        yield streams


async def _list_tools(client: Client, refresh: bool = False) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(1000):  # a server whose cursor never ends cannot hang us
        page = await client.list_tools(cursor=cursor, cache_mode="refresh" if refresh else "use")
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _client_info() -> types.Implementation:
    return types.Implementation(name="reactloop", version=__version__)


async def _wait_even_if_cancelled(task: asyncio.Task[None]) -> None:
    """Wait for ``task`` to end even if we are cancelled meanwhile (then re-raise), so a
    cancelled run never returns while a server process it started is still alive."""
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError as exc:
            cancelled = exc
    if cancelled is not None:
        raise cancelled


def _retrieve(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()  # mark retrieved: an abandoned call's late error is not news
