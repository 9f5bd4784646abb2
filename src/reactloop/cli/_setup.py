"""What ``run`` and ``chat`` share: config and keys, the agent, the session store, the notice.

Order of precedence for every setting: the command line, then the config file's entry for the
model (``[models."openai:gpt-4o-mini"]``), then its top-level entries, then the defaults.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import click
from click.core import ParameterSource

from reactloop.cli._config import Config, apply_keys, load_config
from reactloop.errors import UserError
from reactloop.events import Event, RunEndEvent
from reactloop.result import RunResult

__all__ = ["Setup", "consume", "prepare"]

# options that configure the agent built from flags; --agent brings its own
_AGENT_FLAGS = ("model", "base_url", "text_tools", "tool_choice", "max_iterations",
                "tool_specs", "skill_dirs", "workspace", "mcp_config", "instructions",
                "loop_control", "max_execution_time", "tool_timeout", "demo_tools",
                "env_allow", "output_schema", "tool_selection")
_SMOLLM = "SmolLM2-135M"
NOTICE = ("note: the embedded model is SmolLM2-135M, a tiny offline demo that is often wrong. "
          "For real answers use -m openai:gpt-4o-mini, -m ollama:llama3.2 or "
          "-m openai:NAME --base-url URL (set a default: reactloop config set model NAME; "
          "hide this note: reactloop config set notice false)")


@dataclass
class Setup:
    """A ready agent, its configuration and the store its runs are logged in."""

    agent: Any
    config: Config
    model_spec: str
    store: Any = None
    """The session store, or None with ``--no-log``."""
    tools_seen: dict[str, Any] = field(default_factory=dict)
    """Tools of MCP servers, by name, as their servers started."""
    include: tuple[str, ...] = ()
    """``--mcp-include`` patterns."""
    exclude: tuple[str, ...] = ()
    """``--mcp-exclude`` patterns."""


def _unwrap(model: Any) -> Any:
    for _ in range(5):  # wrappers such as TextToolProtocol keep the model in .model
        inner = model.__dict__.get("inner") or model.__dict__.get("model")
        if inner is None:
            return model
        model = inner
    return model


def is_demo_model(model: Any) -> bool:
    inner = _unwrap(model)
    return type(inner).__name__ == "LocalModel" and _SMOLLM in str(getattr(inner, "name", ""))


def _check_agent_flags(ctx: click.Context) -> None:
    given = [f"--{name.replace('_', '-')}" for name in _AGENT_FLAGS
             if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE]
    if given:
        raise click.UsageError(f"--agent brings its own model and tools; drop {', '.join(given)}")


def _apply_config(opts: dict[str, Any], config: Config) -> str:
    """Fill the model options from the config; returns the model string.

    The top-level ``base_url`` belongs to the top-level ``model``: it applies when the model
    comes from the config, not to a model named with ``-m`` (give that one its own)."""
    from_config = not opts.get("model") and config.get("model")
    spec = opts.get("model") or config.get("model") or "local"
    opts["model"] = spec
    per = config.model_options(spec)
    if not opts.get("base_url"):
        opts["base_url"] = per.get("base_url") or (config.get("base_url") if from_config
                                                   else None)
    if per.get("text_tools") and not opts.get("text_tools"):
        opts["text_tools"] = True
    opts.setdefault("model_options", {k: per[k] for k in ("temperature", "max_tokens")
                                      if k in per})
    return str(spec)


def prepare(ctx: click.Context, opts: dict[str, Any], *, log: bool | None) -> Setup:
    """Load config and keys, build (or load) the agent and open the store.

    Raises:
        UserError: the config, a key or the agent is wrong (the message says how to fix it).
    """
    from reactloop.cli._observe import register_secrets

    config = load_config()
    apply_keys()  # stored keys reach the adapters through the environment; env vars win
    register_secrets()  # and are never shown (-v) nor logged
    if opts.get("agent_spec"):
        _check_agent_flags(ctx)
        from reactloop.cli._load import load_agent

        agent = load_agent(opts["agent_spec"])
        spec = str(getattr(agent.model, "name", "agent"))
    else:
        from reactloop.cli import _build_agent

        spec = _apply_config(opts, config)
        agent = _build_agent(opts)
    setup = Setup(agent, config, spec, include=tuple(opts.get("mcp_include") or ()),
                  exclude=tuple(opts.get("mcp_exclude") or ()))
    if log is None:
        log = config.get("log") is not False
    if log:
        from reactloop.sessions import open_store

        setup.store = open_store(opts.get("store_path") or config.get("store"))
    return setup


def show_notice(setup: Setup, err: Any, verbosity: int) -> None:
    """The one-line notice about the embedded demo model (not with -q or ``notice = false``)."""
    if verbosity >= 0 and setup.config.get("notice") is not False \
            and is_demo_model(setup.agent.model):
        err.print(NOTICE, style="yellow", markup=False, highlight=False)


def pick_session(store: Any, session_id: str | None, cont: bool) -> str | None:
    """The existing session to continue (by unique prefix, or the latest with ``-c``), or None
    for a new one. An unknown id is an error, never a new session."""
    from reactloop.cli._ids import resolve_id

    if session_id is None and not cont:
        return None
    if store is None:
        raise click.UsageError("--session and -c/--continue need the session log; drop --no-log")
    if session_id is not None and cont:
        raise click.UsageError("give --session ID or -c/--continue, not both")
    infos = store.list()
    if cont:
        if not infos:
            raise UserError(f"there is no session to continue in {_where(store)}")
        return str(infos[0].id)
    assert session_id is not None
    return resolve_id(session_id, [i.id for i in infos], what="session", where=_where(store),
                      hint="reactloop sessions list")


def _where(store: Any) -> str:
    from reactloop.cli._ids import store_label

    return store_label(store)


async def consume(events: AsyncIterator[Event], handle: Callable[[Event], None]
                  ) -> tuple[RunResult | None, bool]:
    """Feed ``events`` to ``handle`` in a task that Ctrl-C cancels (this run only).

    Returns the run's result (None if it never arrived) and whether Ctrl-C cancelled it.
    """
    import asyncio

    got: list[RunResult] = []

    async def feed() -> None:
        async for event in events:
            if isinstance(event, RunEndEvent) and event.parent_run_id is None:
                got.append(event.result)
            else:
                handle(event)

    loop = asyncio.get_running_loop()
    task = asyncio.create_task(feed())
    interrupted: list[bool] = []

    def on_sigint() -> None:
        interrupted.append(True)
        task.cancel()

    unsupported = (NotImplementedError, RuntimeError, ValueError)  # Windows, not main thread
    with contextlib.suppress(*unsupported):
        loop.add_signal_handler(signal.SIGINT, on_sigint)
    try:
        await asyncio.wait({task})  # our own cancellation still propagates from here
    finally:
        with contextlib.suppress(*unsupported):
            loop.remove_signal_handler(signal.SIGINT)
    if not task.cancelled() and task.exception() is not None:
        raise task.exception()  # type: ignore[misc]
    return (got[0] if got else None), bool(interrupted)


def start_tracing(endpoint: str | None) -> Callable[[], None]:
    """``--otlp URL`` or the ``OTEL_EXPORTER_OTLP_*`` variables: trace every run (GenAI
    spans and metrics); returns what flushes and stops it before the command exits."""
    from reactloop import _instrument

    if not _instrument.otlp_wanted(endpoint):
        return _nothing
    return _instrument.start_otlp(endpoint)


def _nothing() -> None:
    pass


def fail(message: str, code: int = 1) -> None:
    click.echo(f"reactloop: {message}", err=True)
    sys.exit(code)
