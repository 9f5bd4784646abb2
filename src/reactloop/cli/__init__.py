"""The ``reactloop`` command: ``run`` a task, ``chat`` interactively, and more.

Heavy imports (the agent, rich, model SDKs) happen inside the commands so that
``reactloop --help`` stays fast.
"""

from __future__ import annotations

import asyncio
import math
import sys
from typing import Any

import click

__all__ = ["main"]

EXIT_CODES = {
    "completed": 0,
    "error": 1,
    "max_iterations": 2,
    "waiting_for_user": 3,
    "timed_out": 4,
    "cancelled": 130,
}


def _seconds(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """A positive, finite number of seconds: NaN and inf would never expire."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise click.BadParameter(f"{value} is not a positive, finite number of seconds "
                                 "(e.g. 30 or 2.5)", ctx, param)
    return value


def _agent_options(f: Any) -> Any:
    options = [
        click.option("--model", "-m", default="local", show_default=True,
                     help="'local', 'local:/path.gguf', 'openai:<name>', 'anthropic:<name>', "
                          "'gemini:<name>' or 'ollama:<name>'."),
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
        model_settings=ModelSettings(tool_choice=opts.get("tool_choice") or "auto"),
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
    """reactloop: run LLM agent loops — the model picks tools, reactloop runs them."""


@main.command()
@click.argument("task")
@_agent_options
@click.option("--json", "as_json", is_flag=True, help="Print the RunResult as JSON.")
def run(task: str, as_json: bool, **opts: Any) -> None:
    """Run TASK to completion and print the answer."""
    from reactloop.errors import ReactloopError

    try:
        agent = _build_agent(opts)
    except ReactloopError as exc:
        _fail(str(exc))
    result = asyncio.run(_run(agent, task, as_json))
    code = EXIT_CODES.get(result.state.value, 1)
    if code:
        reason = f"{result.error}" if result.error else result.output
        _fail(f"run ended {result.state.value}: {' '.join(reason.split())[:300]}", code)


async def _run(agent: Any, task: str, as_json: bool) -> Any:
    from rich.console import Console

    from reactloop.cli._render import Renderer
    from reactloop.events import RunEndEvent

    if as_json:
        result = await agent.run(task)
        click.echo(result.to_json(indent=2))
        return result
    renderer = Renderer(Console(stderr=False, highlight=False))
    result = None
    try:
        async for event in agent.stream(task):
            if isinstance(event, RunEndEvent):
                result = event.result
            else:
                renderer.handle(event)
    finally:
        renderer.stop()
    assert result is not None
    renderer.finish(result)
    return result


@main.command()
@_agent_options
@click.option("--session", "session_id", metavar="ID",
              help="Continue (or start) a persistent session with this id.")
@click.option("--new-session", is_flag=True, help="Start a persistent session; prints its id.")
@click.option("--store", "store_path", metavar="PATH|URL",
              help="Where sessions are kept: a SQLite file (default: in the user's data "
                   "directory) or a postgresql:// URL.")
def chat(session_id: str | None, new_session: bool, store_path: str | None,
         **opts: Any) -> None:
    """An interactive multi-turn conversation (type /exit or Ctrl-D to leave)."""
    from reactloop.errors import ReactloopError

    try:
        agent = _build_agent(opts)
        if session_id or new_session or store_path:
            conversation = agent.session(session_id, store=store_path)
        else:
            conversation = agent.conversation()
    except ReactloopError as exc:
        _fail(str(exc))
    asyncio.run(_chat(conversation))


async def _chat(conversation: Any) -> None:
    from rich.console import Console

    from reactloop.cli._render import Renderer
    from reactloop.errors import ReactloopError
    from reactloop.events import RunEndEvent

    console = Console(highlight=False)
    from reactloop.sessions import MemoryStore

    session_id = None if isinstance(conversation.store, MemoryStore) else conversation.id
    suffix = f" — session {session_id}" if session_id else ""
    console.print(f"[dim]reactloop chat{suffix} — /exit or Ctrl-D to leave[/]")
    waiting = getattr(conversation, "waiting_for", None)
    if callable(waiting):
        waiting = waiting()
    if waiting:
        console.print(f"[yellow]The agent asked: {waiting}[/]")
    while True:
        try:
            text = await asyncio.to_thread(console.input, "[bold]you>[/] ")
        except (EOFError, KeyboardInterrupt):
            console.print()
            return
        if text.strip() in ("/exit", "/quit"):
            return
        if not text.strip():
            continue
        renderer = Renderer(console)
        try:
            async for event in conversation.stream(text):
                if isinstance(event, RunEndEvent):
                    renderer.finish(event.result)
                else:
                    renderer.handle(event)
        except ReactloopError as exc:  # a busy session or a failing store: one line, go on
            renderer.stop()
            click.echo(f"reactloop: {exc}", err=True)


def _attach_optional_groups() -> None:
    # command groups owned by other modules; each is attached only if it exists
    for module, attr in (("reactloop.cli.mcp", "mcp_group"),
                         ("reactloop.cli.sessions", "sessions_group"),
                         ("reactloop.cli.serve", "serve_command")):
        import importlib.util

        if importlib.util.find_spec(module) is None:
            continue
        try:
            group = getattr(__import__(module, fromlist=[attr]), attr)
        except (ImportError, AttributeError):
            continue
        main.add_command(group)


_attach_optional_groups()
