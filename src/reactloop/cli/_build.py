"""Building what ``run``, ``chat`` and ``serve`` run: config and keys, the model, the agent (from
flags or ``--agent``), the session store, the notice about the demo model.

Order of precedence for every setting: the command line, then the config file's entry for the
model (``[models."openai:gpt-4o-mini"]``), then its top-level entries, then the defaults.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import click
from click.core import ParameterSource

from reactloop.cli._config_files import Config, apply_keys, load_config
from reactloop.cli._observe import ObservedRuntime, Observer, register_secrets
from reactloop.errors import UserError

__all__ = ["NOTICE", "Setup", "build_agent", "build_model", "is_demo_model", "pick_session",
           "prepare", "show_notice", "start_tracing"]

# options that configure the agent built from flags; --agent brings its own
_AGENT_FLAGS = ("model", "base_url", "text_tools", "tool_choice", "max_iterations",
                "tool_specs", "skill_dirs", "workspace", "mcp_config", "instructions",
                "loop_control", "max_execution_time", "tool_timeout", "demo_tools",
                "env_allow", "output_schema", "tool_selection", "fallback_models", "max_cost",
                "max_requests", "max_tool_calls", "max_input_tokens", "max_output_tokens",
                "max_total_tokens", "skill_selection", "guidance")
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
    if per.get("guidance") and not opts.get("guidance"):  # the model's profile
        opts["guidance"] = per["guidance"]
    opts.setdefault("model_options", {k: per[k] for k in ("temperature", "max_tokens")
                                      if k in per})
    # each --fallback-model with its own base_url from the config ([models."NAME"])
    opts["fallback_urls"] = [config.model_options(m).get("base_url")
                             for m in opts.get("fallback_models") or ()]
    return str(spec)


def prepare(ctx: click.Context, opts: dict[str, Any], *, log: bool | None,
            observer: Observer | None = None, seen: dict[str, Any] | None = None) -> Setup:
    """Load config and keys, build (or load) the agent and open the store.

    Args:
        log: keep the run log (None: as the config says).
        observer: told about every model call: the agent is built with an
            :class:`ObservedRuntime` around its runtime (which also filters and records the
            tools of MCP servers into ``seen``, the same dict as ``Setup.tools_seen``).

    Raises:
        UserError: the config, a key or the agent is wrong (the message says how to fix it).
    """
    config = load_config()
    apply_keys()  # stored keys reach the adapters through the environment; env vars win
    register_secrets()  # and are never shown (-v) nor logged
    setup = Setup(None, config, "", tools_seen=seen if seen is not None else {},
                  include=tuple(opts.get("mcp_include") or ()),
                  exclude=tuple(opts.get("mcp_exclude") or ()))

    def observed(inner: Any) -> Any:
        if observer is None:
            return inner
        return ObservedRuntime(inner, observer, setup.tools_seen, include=setup.include,
                               exclude=setup.exclude)

    if opts.get("agent_spec"):
        _check_agent_flags(ctx)
        from reactloop.cli._load import load_agent

        loaded = load_agent(opts["agent_spec"])
        setup.agent = loaded if observer is None else with_runtime(loaded,
                                                                   observed(loaded.runtime))
        setup.model_spec = str(getattr(loaded.model, "name", "agent"))
    else:
        from reactloop.runtime import LocalRuntime

        setup.model_spec = _apply_config(opts, config)
        setup.agent = build_agent(opts, observed(LocalRuntime()))
    if log is None:
        log = config.get("log") is not False
    if log:
        from reactloop.sessions import open_store

        setup.store = open_store(opts.get("store_path") or config.get("store"))
    return setup


def with_runtime(agent: Any, runtime: Any) -> Any:
    """A new agent like ``agent`` whose calls go through ``runtime`` (``agent`` itself, which
    may be shared by the user's module, is left as it was: agents are not changed in place)."""
    new = copy.copy(agent)  # the configuration (its frozen spec included) is shared, not copied
    new.runtime = runtime
    return new


def build_agent(opts: dict[str, Any], runtime: Any = None) -> Any:
    """The agent the flags describe (``runtime``: where its calls run; default in-process)."""
    from reactloop import Agent, ModelSettings
    from reactloop.cli._load import load_tools

    tools = load_tools(tuple(opts["tool_specs"]))
    mcp_servers: list[Any] = []
    if opts.get("mcp_config"):
        from reactloop.mcp import load_mcp_config

        mcp_servers = list(load_mcp_config(opts["mcp_config"]))
    demo = opts.get("demo_tools")
    if demo is None:
        demo = not (tools or opts["skill_dirs"] or opts.get("workspace") or mcp_servers)
    if demo:
        from reactloop._demo_tools import DEMO_TOOLS

        tools = [*DEMO_TOOLS, *tools]
    return Agent(
        model=build_model(opts), instructions=opts["instructions"], tools=tools,
        skills=opts["skill_dirs"], mcp_servers=mcp_servers,
        max_iterations=opts["max_iterations"],
        max_execution_time=opts.get("max_execution_time"),
        tool_timeout=opts.get("tool_timeout"), loop_control=opts["loop_control"],
        workspace=build_workspace(opts),
        model_settings=ModelSettings(tool_choice=opts.get("tool_choice") or "auto",
                                     **opts.get("model_options", {})),
        output_type=opts.get("output_type"), tool_selection=opts.get("tool_selection"),
        runtime=runtime, usage_limits=_usage_limits(opts),
        skill_selection=bool(opts.get("skill_selection")),
    )


def _usage_limits(opts: dict[str, Any]) -> Any:
    from reactloop import UsageLimits

    return UsageLimits(max_cost_usd=opts.get("max_cost"), **{
        name: opts.get(name) for name in ("max_requests", "max_tool_calls", "max_input_tokens",
                                          "max_output_tokens", "max_total_tokens")})


def build_workspace(opts: dict[str, Any]) -> Any:
    from reactloop.errors import UserError

    folder, allow = opts.get("workspace"), tuple(opts.get("env_allow") or ())
    if not allow:
        return folder
    if not folder:
        raise UserError("--env-allow only applies to --workspace commands; add --workspace DIR")
    from reactloop.tools.workspace import Workspace

    return Workspace(folder, env_allow=allow)


def build_model(opts: dict[str, Any]) -> Any:
    from reactloop.errors import UserError
    from reactloop.models._provider import MissingAPIKey
    from reactloop.models._resolve import resolve_model

    try:
        model: Any = resolve_model(opts["model"], base_url=opts.get("base_url") or None)
        fallbacks = [resolve_model(spec, base_url=url or None) for spec, url in
                     zip(opts.get("fallback_models") or (), opts.get("fallback_urls") or (),
                         strict=True)]
    except MissingAPIKey as exc:
        name = exc.env_vars[0]
        raise UserError(f"{exc}; or store it with: reactloop keys set {name}") from None
    if opts.get("guidance"):
        from reactloop.models._guided import apply_guidance

        model = apply_guidance(model, opts["guidance"])
    if fallbacks:
        from reactloop import FallbackModel

        model = FallbackModel(model, *fallbacks)
    if opts.get("text_tools"):
        from reactloop.models.text_protocol import TextToolProtocol

        model = TextToolProtocol(model)
    return model


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


def start_tracing(endpoint: str | None) -> Callable[[], None]:
    """``--otlp URL`` or the ``OTEL_EXPORTER_OTLP_*`` variables: trace every run (GenAI
    spans and metrics); returns what flushes and stops it before the command exits."""
    from reactloop import _instrument

    if not _instrument.otlp_wanted(endpoint):
        return _nothing
    return _instrument.start_otlp(endpoint)


def _nothing() -> None:
    pass
