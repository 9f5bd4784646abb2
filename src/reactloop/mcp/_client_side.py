"""The client's side of one MCP connection: what reactloop answers and hears from a server.

* ``sampling/createMessage`` → :mod:`reactloop.mcp._sampling` (the run's model);
* ``elicitation/create`` → the server's elicitation handler (:mod:`reactloop.mcp._elicitation`),
  form and URL mode; ``notifications/elicitation/complete`` → ``mcp_elicitation_complete``
  events (``server``, ``elicitation_id``, ``url``); a tool call refused with ``-32042`` (URL
  elicitation required) shows the URLs through the handler, waits (at most the server's
  ``timeout``) for the completion of each and is sent once more (:meth:`ClientSide.url_required`);
* ``roots/list`` → the server's roots (the workspace, when the CLI has one);
* ``notifications/message`` (server logs) → the ``reactloop.mcp`` logger, as
  ``reactloop.mcp.<server>`` records at the matching level;
* ``notifications/progress`` of a tool call → ``mcp_progress`` events (``server``, ``tool``,
  ``progress``, ``total``, ``message``);
* ``notifications/tools/list_changed`` → the tools are listed again after the next call
  of that server, and new ones offered from the next iteration on (``mcp_tools_changed``).

One :class:`ClientSide` per ``open()``; it outlives restarts of the server. Imported only with
the SDK.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp_types as types

from reactloop.errors import ToolRetry
from reactloop.mcp._elicitation import Elicitation, ElicitationAnswer, answer_of, default_elicitor
from reactloop.mcp._sampling import answer_sampling, default_policy

if TYPE_CHECKING:
    from mcp.client.session import ClientRequestContext, IncomingMessage
    from mcp.shared.dispatcher import ProgressFnT

    from reactloop.mcp._errors import ServerConfig
    from reactloop.tools._source import CallerRun, Emit

__all__ = ["ClientSide"]

log = logging.getLogger("reactloop.mcp")

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO,
           "warning": logging.WARNING, "error": logging.ERROR, "critical": logging.CRITICAL,
           "alert": logging.CRITICAL, "emergency": logging.CRITICAL}


class ClientSide:
    """Callbacks of the SDK's client for one server, and the calls in flight on it."""

    def __init__(self, server: ServerConfig, emit: Emit) -> None:
        self.server, self.emit = server, emit
        self.callers: list[CallerRun] = []
        """Runs with a tool call open on this server, oldest first."""
        self.last_caller: weakref.ref[CallerRun] | None = None
        """The latest run seen (a late log or progress goes to it while it lives); a weak
        reference, so a finished run is not kept alive for the connection's life."""
        self.tools_changed = False
        """The server said its tools changed and they were not listed again since."""
        self.tasks: list[asyncio.Task[None]] = []
        """Resource subscriptions listening (2026-07-28 connections)."""
        self.known: set[str] = set()
        """Names of the tools offered so far."""
        self.asking = 0
        """Questions to the user open now (a call's timeout waits while there are)."""
        self.answered = float("-inf")
        """When the last question was answered (the event loop's clock)."""
        self.policy = server.sampling or default_policy(server.transport)
        self.elicitation = server.elicitation or default_elicitor.get()
        """Who answers the server's questions (the server's handler, else the context's)."""
        self.model: Any = None  # the server's own sampling model, resolved on first use
        self.urls: dict[str, str] = {}
        """URL elicitations shown to the user, by id (their URL)."""
        self.completed: set[str] = set()
        """Ids of URL elicitations the server said are complete."""
        self.completion = asyncio.Condition()
        self.root_list = [{"uri": Path(r).resolve().as_uri(), "name": Path(r).name or r}
                          for r in server.roots]
        """The roots as ``roots/list`` answers them (absolute ``file://`` URIs)."""

    # -- what the SDK's client is given ----------------------------------------------------------
    def client_options(self) -> dict[str, Any]:
        """Keyword arguments for ``mcp.Client``: a capability is announced only when
        reactloop can honour it."""
        # 2026-07-28 servers send logs only to a client that opts in, per request
        level = "debug" if logging.getLogger(f"reactloop.mcp.{self.server.name}").isEnabledFor(
            logging.DEBUG) else "info"
        out: dict[str, Any] = {"logging_callback": self.on_log, "log_level": level,
                               "message_handler": self.on_message}
        # "ask" needs somebody to ask (a Temporal worker's stand-in handler asks nobody)
        person = self.elicitation is not None and not getattr(self.elicitation, "asks_nobody",
                                                              False)
        if self.policy == "allow" or (self.policy == "ask" and person):
            out["sampling_callback"] = self.on_sampling
        if self.elicitation is not None:
            out["elicitation_callback"] = self.on_elicitation
        if self.server.roots:
            out["list_roots_callback"] = self.on_roots
        return out

    def caller(self) -> CallerRun | None:
        """The run whose call is open on this server (the latest), else the last one seen."""
        if self.callers:
            return self.callers[-1]
        return self.last_caller() if self.last_caller is not None else None

    def enter(self, caller: CallerRun | None) -> None:
        if caller is not None:
            self.callers.append(caller)
            self.last_caller = weakref.ref(caller)

    def leave(self, caller: CallerRun | None) -> None:
        if caller is not None and caller in self.callers:
            self.callers.remove(caller)

    def _emit(self, name: str, data: dict[str, Any]) -> None:
        caller = self.caller()
        (caller.emit if caller is not None else self.emit)(name, data)

    # -- requests from the server ----------------------------------------------------------------
    async def on_sampling(self, context: ClientRequestContext,
                          params: types.CreateMessageRequestParams
                          ) -> types.CreateMessageResult | types.ErrorData:
        server = self.server
        if self.model is None and server.sampling_model is not None:
            from reactloop.models._resolve import resolve_model

            try:
                self.model = resolve_model(server.sampling_model)
            except Exception as exc:  # a bad model name: the server hears it, the run goes on
                return types.ErrorData(code=types.INTERNAL_ERROR,
                                       message=f"sampling_model {server.sampling_model!r}: {exc}")
        asking = self.policy == "ask"  # a person decides: the call's timeout waits
        self.asking += asking
        try:
            return await answer_sampling(
                params, server=server.name, policy=self.policy, model=self.model,
                caller=self.caller(), emit=self.emit, ask=self.elicitation,
                limit=server.timeout)
        finally:
            self.asking -= asking
            if asking:
                self.answered = asyncio.get_running_loop().time()

    async def on_elicitation(self, context: ClientRequestContext,
                             params: types.ElicitRequestParams
                             ) -> types.ElicitResult | types.ErrorData:
        handler = self.elicitation
        if handler is None:  # pragma: no cover - the capability is not announced then
            return types.ErrorData(code=types.INVALID_REQUEST, message="Elicitation not supported")
        if isinstance(params, types.ElicitRequestURLParams):
            request = self._url_request(params)
        else:
            request = Elicitation(self.server.name, params.message,
                                  dict(params.requested_schema or {}))
        try:
            answer = await self._ask(handler, request)
        except Exception as exc:  # the server hears why; the tool call goes on
            return types.ErrorData(code=types.INTERNAL_ERROR,
                                   message=f"the elicitation handler failed: {exc}")
        content = dict(answer.content or {}) if answer.action == "accept" else None
        return types.ElicitResult(action=answer.action, content=content)

    async def _ask(self, handler: Any, request: Elicitation) -> ElicitationAnswer:
        """Ask the user (the call's timeout waits meanwhile); ``mcp_elicitation`` events."""
        self.asking += 1
        try:
            answer = await answer_of(handler, request)
        except Exception as exc:
            self._emit("mcp_elicitation", {"server": self.server.name, "action": "error",
                                           "message": request.message, "error": str(exc)})
            raise
        finally:
            self.asking -= 1
            self.answered = asyncio.get_running_loop().time()
        self._emit("mcp_elicitation", {"server": self.server.name, "action": answer.action,
                                       "message": request.message})
        return answer

    def _url_request(self, params: types.ElicitRequestURLParams,
                     tool: str | None = None) -> Elicitation:
        if params.elicitation_id:
            self.urls[params.elicitation_id] = params.url
        return Elicitation(self.server.name, params.message, mode="url", url=params.url,
                           tool=tool, elicitation_id=params.elicitation_id)

    async def url_required(self, exc: BaseException, tool: str) -> bool:
        """A call refused with ``-32042`` (URL elicitation required): each URL is shown to the
        user through the elicitation handler; True (send the call again, once) when the user
        accepted them all and the server said each is complete (right away when it gives no
        ids). False when ``exc`` is another error.

        Raises:
            ToolRetry: nobody to ask, the user declined, or no completion within the server's
                ``timeout``: a sentence for the model naming the URL.
        """
        from mcp.shared.exceptions import MCPError

        if not isinstance(exc, MCPError) or exc.code != types.URL_ELICITATION_REQUIRED:
            return False
        data = exc.data if isinstance(exc.data, dict) else {}
        steps = [types.ElicitRequestURLParams.model_validate(e)
                 for e in data.get("elicitations") or ()]
        name, urls = self.server.name, ", ".join(p.url for p in steps) or "?"
        if self.elicitation is None or not steps:
            raise ToolRetry(f"MCP server {name!r} needs the user to open {urls} before {tool!r} "
                            "can run, and there is nobody to ask here")
        for step in steps:
            answer = await self._ask(self.elicitation, self._url_request(step, tool))
            if answer.action != "accept":
                raise ToolRetry(f"the user did not open {step.url} ({answer.action}); MCP "
                                f"server {name!r} needs that before {tool!r} can run")
        ids = {p.elicitation_id for p in steps if p.elicitation_id}
        try:
            async with asyncio.timeout(self.server.timeout), self.completion:
                await self.completion.wait_for(lambda: ids <= self.completed)
        except TimeoutError:
            raise ToolRetry(f"MCP server {name!r} did not confirm the step at {urls} within "
                            f"{self.server.timeout:g} s; call {tool!r} again once it is done"
                            ) from None
        return True

    async def elicitation_completed(self, elicitation_id: str) -> None:
        """The server said a URL elicitation is complete."""
        self.completed.add(elicitation_id)
        async with self.completion:
            self.completion.notify_all()
        self._emit("mcp_elicitation_complete", {"server": self.server.name,
                                                "elicitation_id": elicitation_id,
                                                "url": self.urls.get(elicitation_id)})

    async def on_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult.model_validate({"roots": self.root_list})

    # -- notifications ---------------------------------------------------------------------------
    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        name = f"reactloop.mcp.{self.server.name}"
        data = params.data if isinstance(params.data, str) else repr(params.data)
        origin = f" ({params.logger})" if params.logger else ""
        logging.getLogger(name).log(_LEVELS.get(params.level, logging.INFO),
                                    "MCP server %r%s: %s", self.server.name, origin, data)

    async def on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.tools_changed = True
        elif isinstance(message, types.ElicitCompleteNotification):
            await self.elicitation_completed(message.params.elicitation_id)
        elif isinstance(message, types.ResourceUpdatedNotification):
            self.resource_updated(str(message.params.uri))
        elif isinstance(message, Exception):
            log.debug("MCP server %r: transport error: %r", self.server.name, message)

    def resource_updated(self, uri: str) -> None:
        self._emit("mcp_resource_updated", {"server": self.server.name, "uri": uri})

    async def listen_resource(self, client: Any, uri: str) -> None:
        """Subscribe to ``uri`` on a 2026-07-28 connection (a ``subscriptions/listen``
        stream, ended by :meth:`stop`); returns once the server acknowledged it."""
        acked = asyncio.Event()

        async def listen() -> None:
            try:
                async with client.listen(resource_subscriptions=[uri]) as events:
                    acked.set()
                    async for event in events:
                        self.resource_updated(str(getattr(event, "uri", uri)))
            except Exception as exc:
                log.debug("MCP server %r: subscription to %s ended: %r", self.server.name,
                          uri, exc)
            finally:
                acked.set()

        self.tasks.append(asyncio.create_task(listen()))
        await acked.wait()

    async def stop(self) -> None:
        """End the subscriptions (before the connection closes)."""
        tasks, self.tasks = self.tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def progress(self, tool: str) -> ProgressFnT:
        """The progress callback of one call of ``tool``."""
        async def on_progress(progress: float, total: float | None, message: str | None
                              ) -> None:
            self._emit("mcp_progress", {"server": self.server.name, "tool": tool,
                                        "progress": progress, "total": total,
                                        "message": message})
        return on_progress
