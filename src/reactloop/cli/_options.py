"""The click options ``run``, ``chat`` and ``serve`` share: building the agent from flags
(:func:`agent_options`) and running it (:func:`run_options`)."""

from __future__ import annotations

import math
from typing import Any

import click

__all__ = ["agent_options", "run_options", "seconds"]


def run_options(f: Any) -> Any:
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


def seconds(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """A positive, finite number of seconds: NaN and inf would never expire."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise click.BadParameter(f"{value} is not a positive, finite number of seconds "
                                 "(e.g. 30 or 2.5)", ctx, param)
    return value


def positive_usd(ctx: click.Context, param: click.Parameter, value: float | None
                 ) -> float | None:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise click.BadParameter(f"{value} is not a positive number of US dollars "
                                 "(e.g. 0.05)", ctx, param)
    return value


def _limit_options() -> list[Any]:
    """Usage limits of each run (``UsageLimits``); over one, the run ends ``usage_limit``."""
    count = click.IntRange(min=1)
    return [
        click.option("--max-cost", type=float, callback=positive_usd, metavar="USD",
                     help="Stop the run before it spends more than this (US dollars, priced "
                          "by genai-prices: reactloop[cost])."),
        *(click.option(f"--max-{what}", type=count, metavar="N",
                       help=f"Stop the run before it passes N {label}.")
          for what, label in (("requests", "model calls"), ("tool-calls", "tool calls"),
                              ("input-tokens", "input tokens"),
                              ("output-tokens", "output tokens"),
                              ("total-tokens", "input plus output tokens"))),
    ]


def agent_options(f: Any) -> Any:
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
        click.option("--timeout", "max_execution_time", type=float, callback=seconds,
                     metavar="SECONDS", help="Seconds for the whole run."),
        click.option("--tool-timeout", type=float, callback=seconds, metavar="SECONDS",
                     help="Seconds any one tool call may take."),
        click.option("--tool-selection", type=click.IntRange(min=1), metavar="K",
                     help="Offer the model only the K tools that best fit each request "
                          "(BM25 over names and descriptions); for many tools."),
        click.option("--skill-selection", is_flag=True, default=False,
                     help="Load the skill that fits a question best before the model acts "
                          "(the embedded model always does)."),
        click.option("--guidance", type=click.Choice(["full", "caps", "off"]), default=None,
                     help="Steer a small model as the embedded one is steered: full (ranked "
                          "tool offer, skill loading, constrained calls and arguments), caps "
                          "(size limits only) or off. For -m local (default: by model size) "
                          "and OpenAI-compatible servers (default: off): llama.cpp's server "
                          "gets a GBNF grammar, Ollama a JSON schema, per request."),
        click.option("--fallback-model", "fallback_models", multiple=True, metavar="MODEL",
                     help="A model that takes the request when the one before it fails "
                          "after its retries (5xx, 429, connection errors). Repeatable."),
        *_limit_options(),
        click.option("--demo-tools/--no-demo-tools", default=None,
                     help="Built-in add/multiply/calculate/current_time tools "
                          "(default: on when no other tools are given)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f
