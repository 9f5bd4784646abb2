"""``reactloop serve``: an agent over HTTP — a sessions API with server-sent events, the AG-UI
and A2A protocols, and a dev UI that shows every iteration of a run.

::

    from reactloop.serve import create_app

    app = create_app(agent, store="sessions.sqlite3")   # any ASGI server can run it
    # or from the shell: reactloop serve --agent mymodule:agent

Sessions are reactloop's persistent sessions (the same SQLite store as
``reactloop sessions``). The server binds 127.0.0.1 unless given a token; see
:func:`create_app` for the security rules. Needs the ``serve`` extra
(``pip install 'reactloop[serve]'``: Starlette, uvicorn, ag-ui-protocol).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from reactloop.errors import UserError

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from reactloop.agent import Agent
    from reactloop.serve._security import Policy
    from reactloop.sessions import SessionStore

__all__ = ["create_app"]

DEFAULT_MAX_BODY = 4 * 1024 * 1024


def _require_extra() -> None:
    missing = [m for m in ("starlette", "uvicorn", "ag_ui")
               if importlib.util.find_spec(m) is None]
    if missing:
        raise UserError(f"reactloop serve needs {', '.join(missing)}, which is not installed; "
                        "install it with: pip install 'reactloop[serve]'")


def _a2a_wanted(a2a: bool | None) -> bool:
    """Whether to serve A2A: ``a2a``, or (None) whether its extra is installed."""
    installed = all(importlib.util.find_spec(m) is not None for m in ("a2a", "sse_starlette"))
    if a2a and not installed:
        raise UserError("serving A2A needs a2a-sdk, which is not installed; install it with: "
                        "pip install 'reactloop[a2a]'")
    return installed if a2a is None else a2a


def _policy(host: str, token: str | None, allowed_hosts: Iterable[str],
            allowed_origins: Iterable[str], max_body_bytes: int) -> Policy:
    """The guard's policy from ``create_app``'s arguments (checked: see there)."""
    from reactloop.serve._security import LOOPBACK_HOSTS, WILDCARD_HOSTS, Policy, check_bind

    check_bind(host, token)
    if max_body_bytes < 1024:
        raise UserError(f"max_body_bytes must be at least 1024, got {max_body_bytes}")
    bind = host.strip("[]").lower()
    hosts = None if bind in WILDCARD_HOSTS else frozenset(
        {*LOOPBACK_HOSTS, bind, *(h.strip("[]").lower() for h in allowed_hosts)})
    return Policy(token=token, allowed_hosts=hosts,
                  allowed_origins=frozenset(o.rstrip("/") for o in allowed_origins),
                  max_body=max_body_bytes)


def create_app(agent: Agent, store: SessionStore | str | os.PathLike[str] | None = None,
               token: str | None = None, *, host: str = "127.0.0.1",
               allowed_hosts: Iterable[str] = (), allowed_origins: Iterable[str] = (),
               max_body_bytes: int = DEFAULT_MAX_BODY, debug: bool = False,
               a2a: bool | None = None,
               elicitation_timeout: float | None = 600.0) -> ASGIApp:
    """The ASGI app serving ``agent``: sessions API, SSE runs, AG-UI, A2A and the dev UI.

    Args:
        agent: the :class:`~reactloop.Agent` every session runs (one run per session at a
            time; sessions never share state).
        store: where sessions live: a :class:`~reactloop.sessions.SessionStore`, the path of a
            SQLite file, or None for the default store (the one ``reactloop sessions`` uses).
        token: when set, every ``/api/`` request needs ``Authorization: Bearer <token>``
            (at least 16 characters). Required when ``host`` is not a loopback address.
        host: the address the server will bind (``127.0.0.1``, ``localhost`` or ``::1`` keep
            it on this machine; ``0.0.0.0``/``::`` answer to any name).
        allowed_hosts: more ``Host`` names to answer to (the loopback names and ``host`` are
            always allowed); requests naming any other host are refused (DNS rebinding).
        allowed_origins: browser origins (``https://app.example``) allowed to call the API
            besides the server's own; they also get CORS headers.
        max_body_bytes: the largest request body accepted (413 beyond).
        debug: send tools' tracebacks (``result.traceback`` of ``tool_error`` events) to
            clients also when a token is set. They show the server's file paths, so with a
            token (serving beyond this machine) clients get the error sentence only; without
            one (loopback, the dev UI) they always get the traceback.
        a2a: answer the A2A protocol (the agent card at ``/.well-known/agent-card.json``,
            JSON-RPC at ``/api/a2a``, behind the token like the rest of ``/api/``). None (the
            default): when the ``a2a`` extra (``a2a-sdk``) is installed; True: required.
        elicitation_timeout: seconds an MCP server's question (elicitation) waits for a
            client's answer before it is answered ``cancel`` (the server hears it, the run
            goes on to its end); None: no limit, the question waits until it is answered,
            ended only by the run's ``max_execution_time`` when the agent has one, by a
            sessions-API client going away, or by the process stopping (an AG-UI or A2A
            question nobody answers then waits as long as the server runs). The question
            reaches the clients as a ``custom`` event ``mcp_elicitation_request`` (the dev UI
            shows a form), an AG-UI interrupt or the A2A ``input-required`` state.

    Raises:
        UserError: the ``serve`` extra is missing (or the ``a2a`` one, with ``a2a=True``),
            ``host`` is exposed without a token, the token is too short, ``agent`` is not
            an Agent, or ``elicitation_timeout`` is not positive.
    """
    _require_extra()
    serve_a2a = _a2a_wanted(a2a)
    from reactloop.agent import Agent
    from reactloop.serve._app import build_app
    from reactloop.serve._security import environ_secrets
    from reactloop.sessions import open_store

    if not isinstance(agent, Agent):
        raise UserError(f"create_app needs a reactloop Agent, got {type(agent).__name__}")
    policy = _policy(host, token, allowed_hosts, allowed_origins, max_body_bytes)
    if elicitation_timeout is not None and not elicitation_timeout > 0:
        raise UserError(f"elicitation_timeout must be a positive number of seconds (or None), "
                        f"got {elicitation_timeout!r}")
    owns_store = store is None or isinstance(store, (str, os.PathLike))
    return build_app(agent, open_store(store), owns_store=owns_store, policy=policy,
                     scrub=environ_secrets(token), details=debug or token is None,
                     a2a=serve_a2a, elicitation_timeout=elicitation_timeout)
