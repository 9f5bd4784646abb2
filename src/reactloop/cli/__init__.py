"""The ``reactloop`` command: ``run`` a task, ``chat`` interactively, and more.

Heavy imports (the agent, rich, model SDKs) happen inside the commands so that
``reactloop --help`` stays fast.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import click

from reactloop.cli._temporal_run import run_on_temporal_if_asked, temporal_options

__all__ = ["main"]


def _run_options(f: Any) -> Any:
    """Options of run and chat beyond building the agent."""
    options = [
        click.option("--agent", "agent_spec", metavar="MODULE:ATTR",
                     help="Use this Agent (or a function returning one) instead of building "
                          "one from the options above."),
        click.option("--mcp-include", multiple=True, metavar="PATTERN",
                     help="Offer only these MCP tools (name or pattern such as 'git_*'). "
                          "Repeatable."),
        click.option("--mcp-exclude", multiple=True, metavar="PATTERN",
                     help="Never offer these MCP tools (name or pattern). Repeatable."),
        click.option("--verbose", "-v", is_flag=True,
                     help="Also show every request and response in full (keys redacted)."),
        click.option("--quiet", "-q", is_flag=True, help="Print the answer only."),
        click.option("--session", "session_id", metavar="ID",
                     help="Continue this stored session (a unique prefix of its id is enough)."),
        click.option("--continue", "-c", "cont", is_flag=True,
                     help="Continue the most recent session."),
        click.option("--no-log", is_flag=True,
                     help="Do not store this conversation (reactloop logs will not show it)."),
        click.option("--store", "store_path", metavar="PATH|URL",
                     help="Where sessions and the run log are kept: a SQLite file (default: in "
                          "the user's data directory, or the config's store) or a "
                          "postgresql:// URL."),
        click.option("--otlp", metavar="URL",
                     help="Send OpenTelemetry traces and metrics over OTLP/HTTP to this "
                          "receiver (e.g. http://127.0.0.1:4318); the OTEL_EXPORTER_OTLP_* "
                          "variables work too. Needs reactloop[otel]."),
        click.option("--approve-all", is_flag=True,
                     help="Approve every tool call that needs approval, without asking."),
        click.option("--deny-all", is_flag=True,
                     help="Deny every tool call that needs approval, without asking."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _seconds(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """A positive, finite number of seconds: NaN and inf would never expire."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise click.BadParameter(f"{value} is not a positive, finite number of seconds "
                                 "(e.g. 30 or 2.5)", ctx, param)
    return value


def _agent_options(f: Any) -> Any:
    options = [
        click.option("--model", "-m", default=None,
                     help="'local', 'local:/path.gguf', 'openai:<name>', 'anthropic:<name>', "
                          "'gemini:<name>' or 'ollama:<name>' (default: the config's model, "
                          "else local; reactloop models lists them)."),
        click.option("--base-url", metavar="URL",
                     help="An OpenAI-compatible server for an openai:<name> model "
                          "(vLLM, llama.cpp server, LM Studio, Ollama)."),
        click.option("--text-tools", is_flag=True,
                     help="Use the text tool protocol (<tool>{...}</tool>) instead of native "
                          "function calling, for models without it."),
        click.option("--tool-choice", type=click.Choice(["auto", "required", "none"]),
                     default="auto", show_default=True,
                     help="Whether the model may, must or must not call a tool in each step "
                          "(the last step never calls tools)."),
        click.option("--max-iterations", "-n", type=click.IntRange(min=1), default=10,
                     show_default=True, help="Model calls per run; the last one must answer."),
        click.option("--tools", "-t", "tool_specs", multiple=True, metavar="MODULE:ATTR",
                     help="Your own tools: a function, a Tool, or a list of them. Repeatable."),
        click.option("--skills", "skill_dirs", multiple=True,
                     type=click.Path(exists=True, file_okay=False),
                     help="A folder of Agent Skills (SKILL.md). Repeatable."),
        click.option("--workspace", "-w", type=click.Path(exists=True, file_okay=False),
                     help="Add read_file/list_dir/grep/run_command confined to this folder."),
        click.option("--env-allow", "env_allow", multiple=True, metavar="NAME",
                     help="With --workspace: pass this secret-looking environment variable "
                          "(or shell pattern) to run_command anyway. Repeatable."),
        click.option("--mcp", "mcp_config", type=click.Path(exists=True, dir_okay=False),
                     help="An mcpServers JSON config; its servers' tools become available."),
        click.option("--instructions", "-i", default="", help="Instructions (persona)."),
        click.option("--loop-control", is_flag=True,
                     help="Require a tool in every step; end with task_completion."),
        click.option("--timeout", "max_execution_time", type=float, callback=_seconds,
                     metavar="SECONDS", help="Seconds for the whole run."),
        click.option("--tool-timeout", type=float, callback=_seconds, metavar="SECONDS",
                     help="Seconds any one tool call may take."),
        click.option("--tool-selection", type=click.IntRange(min=1), metavar="K",
                     help="Offer the model only the K tools that best fit each request "
                          "(BM25 over names and descriptions); for many tools."),
        click.option("--demo-tools/--no-demo-tools", default=None,
                     help="Built-in add/multiply/calculate/current_time tools "
                          "(default: on when no other tools are given)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _build_agent(opts: dict[str, Any]) -> Any:
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
        model=_build_model(opts), instructions=opts["instructions"], tools=tools,
        skills=opts["skill_dirs"], mcp_servers=mcp_servers,
        max_iterations=opts["max_iterations"],
        max_execution_time=opts.get("max_execution_time"),
        tool_timeout=opts.get("tool_timeout"), loop_control=opts["loop_control"],
        workspace=_build_workspace(opts),
        model_settings=ModelSettings(tool_choice=opts.get("tool_choice") or "auto",
                                     **opts.get("model_options", {})),
        output_type=opts.get("output_type"), tool_selection=opts.get("tool_selection"),
    )


def _build_workspace(opts: dict[str, Any]) -> Any:
    from reactloop.errors import UserError

    folder, allow = opts.get("workspace"), tuple(opts.get("env_allow") or ())
    if not allow:
        return folder
    if not folder:
        raise UserError("--env-allow only applies to --workspace commands; add --workspace DIR")
    from reactloop.tools.workspace import Workspace

    return Workspace(folder, env_allow=allow)


def _build_model(opts: dict[str, Any]) -> Any:
    from reactloop.errors import UserError
    from reactloop.models._provider import MissingAPIKey
    from reactloop.models._resolve import resolve_model

    try:
        model: Any = resolve_model(opts["model"], base_url=opts.get("base_url") or None)
    except MissingAPIKey as exc:
        name = exc.env_vars[0]
        raise UserError(f"{exc}; or store it with: reactloop keys set {name}") from None
    if opts.get("text_tools"):
        from reactloop.models.text_protocol import TextToolProtocol

        model = TextToolProtocol(model)
    return model


def _fail(message: str, code: int = 1) -> None:
    click.echo(f"reactloop: {message}", err=True)
    sys.exit(code)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="reactloop")
def main() -> None:
    """reactloop: run LLM agent loops — the model picks tools, reactloop runs them.

    \b
    Answers go to stdout; the trace, progress and summary to stderr.
    Shell completion (bash; zsh and fish likewise):
      eval "$(_REACTLOOP_COMPLETE=bash_source reactloop)"
    """


@main.command()
@click.argument("task", required=False)
@_agent_options
@_run_options
@click.option("--json", "as_json", is_flag=True, help="Print the RunResult as JSON.")
@click.option("--output-schema", "output_schema", metavar="FILE.json",
              type=click.Path(exists=True, dir_okay=False),
              help="A JSON Schema the answer must match; the validated JSON is printed.")
@temporal_options
@click.pass_context
def run(ctx: click.Context, /, task: str | None, **opts: Any) -> None:
    """Run TASK to completion and print the answer.

    TASK '-' reads the task from stdin; text piped into stdin is added to the task
    (cat notes.md | reactloop run "summarise this"). Tool calls that need approval are
    asked about on the terminal (or --approve-all / --deny-all); with --session ID or -c
    and no TASK, run decides the calls a stored session has waiting and goes on.
    Exit code: 0 completed, 1 error, 2 max iterations, 3 waiting for the user,
    4 timed out, 5 answer cut off, 6 the last tool step failed, 7 tool calls wait for
    approval, 130 cancelled.
    """
    from reactloop.cli._run import run_command

    run_on_temporal_if_asked(ctx, task, opts)  # --temporal: the run is a workflow (exits)

    run_command(ctx, task, opts)


@main.command()
@_agent_options
@_run_options
@click.option("--new-session", is_flag=False, flag_value="", default=None, metavar="[ID]",
              help="Start a new session (with this id, if given).")
@click.pass_context
def chat(ctx: click.Context, /, **opts: Any) -> None:
    """An interactive conversation (/help lists the commands; Ctrl-D leaves)."""
    from reactloop.cli._chat import chat_command

    chat_command(ctx, opts)


def _attach_optional_groups() -> None:
    # command groups owned by other modules; each is attached only if it exists
    for module, attr in (("reactloop.cli.mcp", "mcp_group"),
                         ("reactloop.cli.sessions", "sessions_group"),
                         ("reactloop.cli.serve", "serve_command"),
                         ("reactloop.cli.logs", "logs_group"),
                         ("reactloop.cli.config", "config_group"),
                         ("reactloop.cli.config", "keys_group"),
                         ("reactloop.cli.config", "models_command"),
                         ("reactloop.cli.eval", "eval_command"),
                         ("reactloop.cli.worker", "worker_command")):
        import importlib.util

        if importlib.util.find_spec(module) is None:
            continue
        try:
            group = getattr(__import__(module, fromlist=[attr]), attr)
        except (ImportError, AttributeError):
            continue
        main.add_command(group)


_attach_optional_groups()
