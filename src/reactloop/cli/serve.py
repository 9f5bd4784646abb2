"""``reactloop serve``: the agent over HTTP (sessions API, SSE, AG-UI) with the dev UI.

Only click is imported here; the server's
dependencies load when the command runs, so ``reactloop --help`` stays fast.
"""

from __future__ import annotations

from typing import Any

import click

from reactloop.cli._options import agent_options

__all__ = ["serve_command"]


@click.command("serve")
@click.option("--agent", "agent_spec", metavar="MODULE:ATTR",
              help="Serve this Agent (or a function returning one) instead of building one "
                   "from the options below.")
@agent_options
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind; anything but 127.0.0.1/localhost/::1 needs --token.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: any free port; the URL printed says which).")
@click.option("--store", "store_path", type=click.Path(dir_okay=False),
              help="The SQLite session store (default: the one `reactloop sessions` uses).")
@click.option("--token", envvar="REACTLOOP_SERVE_TOKEN", show_envvar=True,
              help="Require 'Authorization: Bearer TOKEN' on every API call (16+ characters).")
@click.option("--allow-host", "allowed_hosts", multiple=True, metavar="NAME",
              help="Also answer to this Host name (e.g. behind a proxy). Repeatable.")
@click.option("--allow-origin", "allowed_origins", multiple=True, metavar="ORIGIN",
              help="Let this browser origin (https://app.example) call the API. Repeatable.")
@click.option("--a2a/--no-a2a", "a2a", default=None,
              help="Answer the A2A protocol (agent card at /.well-known/agent-card.json, "
                   "JSON-RPC at /api/a2a). Default: when the a2a extra is installed.")
@click.option("--elicitation-timeout", type=click.FloatRange(min=0, min_open=True),
              default=600.0, show_default=True, metavar="SECONDS",
              help="How long an MCP server's question (elicitation) waits for a client's "
                   "answer before it is answered 'cancel'.")
@click.option("--debug", is_flag=True,
              help="Send tools' tracebacks to clients also with --token (they show the "
                   "server's files; without a token, on loopback, they are always sent).")
def serve_command(agent_spec: str | None, host: str, port: int,
                  store_path: str | None, token: str | None, allowed_hosts: tuple[str, ...],
                  allowed_origins: tuple[str, ...], debug: bool, a2a: bool | None,
                  elicitation_timeout: float, **opts: Any) -> None:
    """Serve the agent over HTTP: sessions API, AG-UI, A2A, and the dev UI at the printed URL."""
    from reactloop.serve import create_app
    from reactloop.serve._security import check_bind

    # a wrong bind, agent or store: one line (the group's error path)
    check_bind(host, token)  # before the agent loads: fail fast
    agent = _agent(click.get_current_context(), agent_spec, opts)
    app = create_app(agent, store_path, token, host=host, allowed_hosts=allowed_hosts,
                     allowed_origins=allowed_origins, debug=debug, a2a=a2a,
                     elicitation_timeout=elicitation_timeout)
    from reactloop.cli._ids import store_label
    from reactloop.serve._uvicorn import run_server
    from reactloop.sessions import open_store

    store = store_label(open_store(store_path))  # a URL's password never printed

    def ready(url: str) -> None:
        click.echo(f"reactloop serve: {url}  (agent {agent.name!r}, model "
                   f"{agent.model.name!r}, store {store})")
        if token:
            click.echo("API calls need the header 'Authorization: Bearer <token>'; the dev UI "
                       "asks for the token once.")
        if any(getattr(r, "path", "") == "/api/a2a" for r in _routes(app)):
            click.echo(f"A2A: agent card at {url}.well-known/agent-card.json, JSON-RPC at "
                       f"{url}api/a2a")
        click.echo("Press Ctrl-C to stop.")

    run_server(app, host, port, on_ready=ready)


def _routes(app: Any) -> list[Any]:
    """The routes of the app behind the guard (to say what is served)."""
    while not hasattr(app, "routes") and hasattr(app, "app"):
        app = app.app
    return list(getattr(app, "routes", []))


def _agent(ctx: click.Context, agent_spec: str | None, opts: dict[str, Any]) -> Any:
    if agent_spec is None:
        from reactloop.cli._build import build_agent

        return build_agent(opts)
    params = {p.name: p for p in ctx.command.params}
    given = [params[name].opts[0] for name in opts
             if ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)]
    if given:
        raise click.UsageError(f"--agent already defines the agent; drop {', '.join(given)} "
                               "(or drop --agent and build the agent from the options)")
    from reactloop.cli._load import load_agent

    return load_agent(agent_spec)
