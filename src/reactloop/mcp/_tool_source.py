""":class:`MCPServer`: an MCP server (stdio or streamable HTTP) as a reactloop tool source.

The client side: reactloop connects to the server and offers its tools to a model.
:mod:`reactloop.mcp._serve` is the other direction, reactloop's tools served over MCP.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import shlex
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal

from typing_extensions import Unpack

from reactloop._redact import add_secret, is_secret_name
from reactloop.errors import UserError
from reactloop.mcp._errors import MCPServerError, require_sdk
from reactloop.mcp._names import derive_http_name, derive_stdio_name, safe_name, tool_names
from reactloop.mcp._options import ClientOptions, check_options
from reactloop.tools._tool import Tool

if TYPE_CHECKING:
    import mcp_types

    from reactloop.mcp._connection import Link
    from reactloop.mcp._elicitation import Elicitor
    from reactloop.mcp._oauth import OAuth
    from reactloop.mcp._resources import PromptInfo, ResourceInfo
    from reactloop.messages import Message
    from reactloop.tools._source import Emit

__all__ = ["MCPServer", "MCPServerError", "MCPTool", "MCPTools"]

log = logging.getLogger("reactloop.mcp")


def _secret_headers(headers: Mapping[str, str] | None) -> dict[str, str] | None:
    """``headers``, their values under secret-looking names (``Authorization``, ``X-Api-Key``)
    registered for redaction: a token never shows in events, logs or errors."""
    if headers is None:
        return None
    for key, secret in headers.items():
        if is_secret_name(key):
            add_secret(secret.removeprefix("Bearer ").strip())
    return dict(headers)


def _ignore(name: str, data: Any = None) -> None:
    """The default ``emit``: events go nowhere."""



class MCPTool(Tool):
    """A tool of an MCP server, with what the server says about it (MCP tool annotations).

    Annotations are hints from the server, not guarantees; :attr:`writes` is what the CLI
    shows (and where approvals will hook in).
    """

    def __init__(self, fn: Any, *, server: str, remote_name: str,
                 read_only: bool | None = None, destructive: bool | None = None,
                 **kwargs: Any) -> None:
        super().__init__(fn, **kwargs)
        self.server = server
        """The server's name."""
        self.remote_name = remote_name
        """The tool's name on the server."""
        self.read_only = read_only
        """``readOnlyHint`` as the server sent it (None: not said)."""
        self.destructive = destructive
        """``destructiveHint`` as the server sent it (None: not said)."""

    live_events = True
    """Its server's progress, questions and sampling are events while it runs (a streaming
    run yields them at once, not after the tool batch)."""

    @property
    def writes(self) -> bool | None:
        """True when the server marks the tool as changing things (``readOnlyHint: false``
        or ``destructiveHint: true``), False when it marks it read-only, None when it says
        nothing."""
        if self.read_only is True:
            return False
        if self.read_only is False or self.destructive is True:
            return True
        return None


class MCPTools(list[Tool]):
    """What :meth:`MCPServer.open` yields: the server's tools (a plain list) plus the state of
    its connection."""

    def __init__(self, tools: Iterable[Tool], server: MCPServer, link: Link | None) -> None:
        super().__init__(tools)
        self.server = server
        self._link = link

    @property
    def connected(self) -> bool:
        """False when the server was skipped or its connection is currently lost."""
        return self._link is not None and self._link.connected

    @property
    def restarts(self) -> int:
        """How often the server was restarted after it stopped."""
        return 0 if self._link is None else self._link.restarts

    def _live(self) -> Link:
        if self._link is None:
            raise MCPServerError(f"MCP server {self.server.name!r} is not running (it was "
                                 "skipped)", server=self.server.name)
        return self._link

    async def list_resources(self) -> list[ResourceInfo]:
        """The server's resources and resource templates."""
        from reactloop.mcp._resources import list_resources

        return await list_resources(self._live())

    async def read_resource(self, uri: str) -> str:
        """A resource's content as text (raises ``ToolRetry`` with the server's message)."""
        from reactloop.mcp._resources import read_resource

        return await read_resource(self._live(), uri)

    async def subscribe_resource(self, uri: str) -> None:
        """Hear about changes of a resource: ``mcp_resource_updated`` events (``server``,
        ``uri``) in the ``emit`` given to ``open`` (or the run calling the server)."""
        from reactloop.mcp._resources import subscribe_resource

        await subscribe_resource(self._live(), uri)

    async def list_prompts(self) -> list[PromptInfo]:
        """The server's prompts (name, description, arguments)."""
        from reactloop.mcp._resources import list_prompts

        return await list_prompts(self._live())

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None
                         ) -> list[Message]:
        """A prompt's messages, e.g. to send: ``await session.send(msgs[-1].content)``."""
        from reactloop.mcp._resources import get_prompt

        return await get_prompt(self._live(), name, arguments)


class MCPServer:
    """An MCP server whose tools an agent can call. Build one with :meth:`stdio` or :meth:`http`.

    It is a tool source: ``Agent(mcp_servers=[...])`` opens it when a run starts and closes it
    when the run ends. Opening starts the server (stdio) or connects (HTTP), lists its tools and
    yields them as :class:`~reactloop.Tool` objects named ``<name>_<tool>`` (or
    ``<prefix><tool>``); closing shuts it down, also on errors and cancellation, and kills the
    server's whole process group if it does not exit when its stdin closes.

    To keep one server running across several runs (a chat session), open it yourself and pass
    the tools::

        server = MCPServer.stdio("mcp-server-time")
        async with server.open(emit) as tools:      # started once
            agent = Agent(model, tools=tools)
            await agent.run("What time is it in Tokyo?")
            await agent.run("And in Lima?")           # same server process
        # stopped here

    The same object may be opened any number of times, also concurrently; each ``open`` is an
    independent connection.
    """

    transport: Literal["stdio", "http", "sse"]

    def __init__(
        self,
        *,
        transport: Literal["stdio", "http", "sse"],
        name: str,
        command: str = "",
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        url: str = "",
        headers: Mapping[str, str] | None = None,
        required: bool = True,
        timeout: float = 60.0,
        startup_timeout: float | None = None,
        prefix: str | None = None,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] = (),
        **options: Unpack[ClientOptions],
    ) -> None:
        """Prefer :meth:`stdio` and :meth:`http`; this stores what they checked."""
        require_sdk()
        for label, value in (("timeout", timeout), ("startup_timeout", startup_timeout)):
            if value is not None and (isinstance(value, bool) or not value > 0):
                raise UserError(f"MCP server {name!r}: {label} must be positive, got {value!r}")
        self.transport = transport
        self.name = safe_name(name)
        self.command = command
        self.args = tuple(str(a) for a in args)
        self.env = dict(env) if env is not None else None
        self.cwd = os.fspath(cwd) if cwd is not None else None
        self.url = url
        self.headers = _secret_headers(headers)
        self.required = required
        self.timeout = float(timeout)
        """Seconds one tool call may take before the model gets a timeout error."""
        self.startup_timeout = float(startup_timeout if startup_timeout is not None else timeout)
        """Seconds to start the server, complete the handshake and list its tools."""
        self.prefix = f"{self.name}_" if prefix is None else prefix
        for label, patterns in (("include", include or ()), ("exclude", exclude)):
            if isinstance(patterns, str) or not all(isinstance(x, str) for x in patterns):
                raise UserError(f"MCP server {name!r}: {label} must be a list of tool names or "
                                f"patterns (fnmatch, e.g. 'git_*'), got {patterns!r}")
        self.include = tuple(include) if include is not None else None
        """Only these tools (names or fnmatch patterns, as the server or the model names
        them); None: all."""
        self.exclude = tuple(exclude)
        """Never these tools (names or patterns)."""
        checked = check_options(self.name, options, transport)
        self.sampling: Literal["allow", "ask", "deny"] | None = checked["sampling"]
        """Whether the server's sampling requests are answered (None: by transport)."""
        self.sampling_model: Any = checked["sampling_model"]
        """The model that answers them (None: the calling run's model)."""
        self.elicitation: Elicitor | None = checked["elicitation"]
        """Asks the user when the server asks (None: not announced)."""
        self.roots: tuple[str, ...] = checked["roots"]
        """Directories offered as the client's roots."""
        self.resources: bool = checked["resources"]
        """Offer ``<prefix>list_resources``/``read_resource`` tools (if the server has any)."""
        self.oauth: OAuth | None = checked["oauth"]
        """OAuth settings (None: no OAuth); see :meth:`login`."""

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        name: str | None = None,
        required: bool = True,
        timeout: float = 60.0,
        prefix: str | None = None,
        *,
        startup_timeout: float | None = None,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] = (),
        **options: Unpack[ClientOptions],
    ) -> MCPServer:
        """A server started as a subprocess that speaks MCP over its stdin/stdout.

        Args:
            command: the program, e.g. ``"mcp-server-time"``, ``"uvx"`` or ``"npx"``.
            args: its arguments.
            env: extra environment variables (API keys…); like other MCP clients, the server
                otherwise inherits only ``HOME``, ``PATH``, ``USER`` and a few more.
            cwd: its working directory. Its stderr's last lines are shown when it fails to
                start and sent with ``mcp_warning`` events.
            name: the server's name, the default prefix of its tool names. By default it is
                derived from the program: ``mcp-server-time`` and ``python -m mcp_server_time``
                give ``time``, ``npx -y @modelcontextprotocol/server-filesystem`` gives
                ``filesystem`` (``mcp-server-``/``server-``/``-mcp`` are dropped).
            required: if False, a server that fails to start is skipped with an
                ``mcp_warning`` event instead of failing the run.
            timeout: seconds one tool call may take.
            prefix: tool name prefix (default ``"<name>_"``; ``""`` for none).
            startup_timeout: seconds to start and list tools (default: ``timeout``).
            include: offer only these tools: names or fnmatch patterns (``"git_*"``), matched
                against the server's name for the tool and the name the model sees.
            exclude: never offer these tools (names or patterns, as for ``include``).
            options: ``sampling``, ``sampling_model``, ``elicitation``, ``roots``, ``resources``.
        """
        if not isinstance(command, str) or not command.strip():
            raise UserError(f"MCPServer.stdio: command must be a non-empty string, got {command!r}")
        if isinstance(args, str):
            raise UserError(
                f"MCPServer.stdio({command!r}): args must be a list of strings, not one string"
            )
        return cls(
            transport="stdio",
            name=name or derive_stdio_name(command, args),
            command=command,
            args=args,
            env=env,
            cwd=cwd,
            required=required,
            timeout=timeout,
            startup_timeout=startup_timeout,
            prefix=prefix,
            include=include,
            exclude=exclude,
            **options,
        )

    @classmethod
    def http(
        cls,
        url: str,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        required: bool = True,
        timeout: float = 60.0,
        prefix: str | None = None,
        *,
        startup_timeout: float | None = None,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] = (),
        **options: Unpack[ClientOptions],
    ) -> MCPServer:
        """A server reached over MCP's streamable HTTP transport at ``url``.

        ``name`` defaults to the host: ``https://mcp.deepwiki.com/mcp`` gives ``deepwiki``,
        ``http://127.0.0.1:8000/mcp`` gives ``127_0_0_1_8000``. ``headers`` are sent with
        every request (e.g. ``{"Authorization": "Bearer ..."}``). A server that went away is
        reconnected once, like a stdio server is restarted. ``oauth=True`` (or settings, see
        :class:`reactloop.mcp._oauth.OAuth`) signs in with OAuth: log in first with
        :meth:`login` or ``reactloop mcp login``. Other arguments as in :meth:`stdio`.
        """
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise UserError(f"MCPServer.http: url must start with http:// or https://, got {url!r}")
        return cls(
            transport="http",
            name=name or derive_http_name(url),
            url=url,
            headers=headers,
            required=required,
            timeout=timeout,
            startup_timeout=startup_timeout,
            prefix=prefix,
            include=include,
            exclude=exclude,
            **options,
        )

    @classmethod
    def sse(
        cls,
        url: str,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        required: bool = True,
        timeout: float = 60.0,
        prefix: str | None = None,
        *,
        startup_timeout: float | None = None,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] = (),
        **options: Unpack[ClientOptions],
    ) -> MCPServer:
        """A server reached over MCP's older HTTP+SSE transport (protocol 2024-11-05, still
        common) at ``url``, usually ending in ``/sse``. Arguments as in :meth:`http`."""
        server = cls.http(url, headers, name, required, timeout, prefix,
                          startup_timeout=startup_timeout, include=include, exclude=exclude,
                          **options)
        server.transport = "sse"
        return server

    async def login(self, *, open_browser: bool = True, redirect_handler: Any = None,
                    within: float = 300.0) -> int:
        """Log in to this OAuth server ahead of a run (``reactloop mcp login`` in Python):
        the authorization URL is printed on stderr (and opened in a browser when one is
        available; ``redirect_handler(url)``, async, replaces both), a loopback port receives
        the redirect (for at most ``within`` seconds), and the tokens are stored. Returns the
        number of the server's tools.

        Raises:
            UserError: the server does not use OAuth, or the login failed (one sentence).
        """
        if self.oauth is None:
            raise UserError(f"MCP server {self.name!r} does not use OAuth: give oauth=True "
                            '(or "oauth": true in its config entry)')
        require_sdk()
        from reactloop.mcp._oauth_flow import login

        return await login(self, self.oauth, open_browser=open_browser,
                           redirect_handler=redirect_handler, within=within)

    def describe(self) -> str:
        """The command line or URL, for messages (never the headers)."""
        if self.transport != "stdio":
            return self.url
        return shlex.join([self.command, *self.args])

    def __repr__(self) -> str:
        return f"MCPServer.{self.transport}({self.describe()!r}, name={self.name!r})"

    @asynccontextmanager
    async def open(self, emit: Emit = _ignore) -> AsyncIterator[MCPTools]:
        """Start the server and yield its tools; stop it on exit.

        Raises:
            MCPServerError: the server failed to start (only when ``required``).
        """
        require_sdk()
        from reactloop.mcp._connection import Link

        link = Link(self, emit)
        try:
            try:
                listing = await link.start()
            except MCPServerError as exc:
                if self.required:
                    raise
                log.info("skipping MCP server %r: %s", self.name, exc)
                emit(
                    "mcp_warning",
                    {
                        "server": self.name,
                        "kind": "skipped",
                        "message": str(exc),
                        "stderr_tail": exc.stderr_tail,
                    },
                )
                listing = None
            if listing is None:
                yield MCPTools([], self, None)
            else:
                tools = [*self._tools(link, listing, emit),
                         *await self._resource_tools(link, listing)]
                link.side.known.update(t.name for t in tools)
                link.side.tools_changed = False  # listed just now
                yield MCPTools(tools, self, link)
        finally:
            await link.close()

    def _tools(self, link: Link, listing: Sequence[mcp_types.Tool], emit: Emit) -> list[Tool]:
        # names come from the whole listing, so filters never change a tool's name
        names = tool_names(self.prefix, [t.name for t in listing])
        pairs = [(t, n) for t, n in zip(listing, names, strict=True)
                 if self._wanted(t.name, n)]
        for pattern in self.include or ():
            if not any(_matches(pattern, t.name, n) for t, n in zip(listing, names,
                                                                    strict=True)):
                emit("mcp_warning", {"server": self.name, "kind": "filter", "stderr_tail": "",
                                     "message": f"include pattern {pattern!r} matches none of "
                                                f"the tools of MCP server {self.name!r}: "
                                                f"{', '.join(names)}"})
        return [self._tool(link, t, n) for t, n in pairs]

    async def _resource_tools(self, link: Link, listing: Sequence[mcp_types.Tool]
                              ) -> list[Tool]:
        """The resource tools, when the server has resources (announcing the capability
        with nothing in it, as SDK servers do by default, adds no tools)."""
        caps = link.capabilities
        if not self.resources or caps is None or caps.resources is None:
            return []
        from reactloop.mcp._resources import list_resources, resource_tools

        try:
            if not await list_resources(link):
                return []
        except Exception as exc:  # a server that fails to list: its tools still work
            log.info("MCP server %r: listing resources failed: %r", self.name, exc)
            return []

        taken = set(tool_names(self.prefix, [t.name for t in listing]))
        return [t for t in resource_tools(link, self.prefix, taken)
                if self._wanted(t.name[len(self.prefix):], t.name)]

    async def _refresh(self, link: Link) -> None:
        """The server said its tools changed: list them again and offer the new ones to the
        calling run (appended, so the request prefix changes once; tools that went away stay
        listed and their calls get the server's error)."""
        from reactloop.tools._source import active_caller

        listing = await link.list_tools()
        caller = active_caller()
        if caller is None:
            return
        known = link.side.known
        tools = [t for t in self._tools(link, listing, caller.emit) if t.name not in known]
        known.update(t.name for t in tools)
        if tools:
            caller.add_tools(tools)
            caller.emit("mcp_tools_changed", {"server": self.name,
                                              "added": [t.name for t in tools]})

    def _wanted(self, remote: str, public: str) -> bool:
        if self.include is not None and not any(_matches(p, remote, public)
                                                for p in self.include):
            return False
        return not any(_matches(p, remote, public) for p in self.exclude)

    def _tool(self, link: Link, spec: mcp_types.Tool, public_name: str) -> Tool:
        from reactloop.mcp._results import tool_output

        remote = spec.name

        async def call(**arguments: Any) -> Any:
            try:
                result = await link.call(remote, arguments)
            except Exception as exc:  # -32042: the user's URL step first, then once more
                if not await link.side.url_required(exc, remote):
                    raise
                result = await link.call(remote, arguments)
            if link.side.tools_changed:  # offered from the next iteration on
                await self._refresh(link)
            return tool_output(result)

        call.__qualname__ = call.__name__ = public_name
        description = spec.description or spec.title or f"{remote} (from MCP server {self.name!r})"
        hints = spec.annotations
        return MCPTool(
            call,
            server=self.name,
            remote_name=remote,
            read_only=hints.read_only_hint if hints is not None else None,
            destructive=hints.destructive_hint if hints is not None else None,
            name=public_name,
            description=description,
            parameters=spec.input_schema,  # passed through unchanged; the server validates
            origin=f"MCP server {self.name!r}",
            repeatable=True,  # a server's state changes between calls (git status, a clock)
        )


def _matches(pattern: str, remote: str, public: str) -> bool:
    return fnmatch.fnmatchcase(remote, pattern) or fnmatch.fnmatchcase(public, pattern)
