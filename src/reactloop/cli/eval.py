"""``reactloop eval CASES.yaml``: run an eval, print the report, exit non-zero for CI.

Exit codes: 0 passed; 1 the pass rate is under ``--fail-under`` (or a case regressed, with
``--fail-on-regression``); 2 the cases file, a flag or a cassette is invalid.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import sys
from pathlib import Path
from typing import Any

import click

__all__ = ["eval_command"]

_AGENT_FLAGS = ("model", "base_url", "tools", "skills", "max_iterations", "instructions",
                "guidance")


def _rate(value: str) -> float:
    try:
        x = float(value.rstrip("%").strip())
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a rate: give 0.8 or 80%") from None
    x = x / 100 if value.strip().endswith("%") or x > 1 else x
    if not 0 <= x <= 1:
        raise click.BadParameter(f"{value!r} is not between 0 and 1 (or 0% and 100%)")
    return x


@click.command("eval")
@click.argument("cases_file", metavar="CASES.yaml", type=click.Path(dir_okay=False))
@click.option("--agent", "agent_spec", metavar="MODULE:ATTR",
              help="The agent under test: an Agent or a function returning one "
                   "(module:attr or file.py:attr). Default: the file's agent: section.")
@click.option("--model", "-m", help="Model for the agent (as for `reactloop run`).")
@click.option("--base-url", metavar="URL", help="An OpenAI-compatible server for openai:<name>.")
@click.option("--tools", "-t", multiple=True, metavar="MODULE:ATTR",
              help="Tools for the agent (module:attr or file.py:attr). Repeatable.")
@click.option("--skills", multiple=True, type=click.Path(exists=True, file_okay=False),
              help="A folder of Agent Skills. Repeatable.")
@click.option("--max-iterations", "-n", type=click.IntRange(min=1),
              help="Model calls per run (default 10, as for `reactloop run`).")
@click.option("--instructions", "-i", help="Instructions (persona) for the agent.")
@click.option("--guidance", type=click.Choice(["full", "caps", "off"]), default=None,
              help="Steer a small model as the embedded one is steered, as for `reactloop run`: "
                   "full, caps (size limits only) or off. For -m local (default: by model "
                   "size) and OpenAI-compatible servers (default: off, or the model's "
                   "`guidance` config entry); overrides the file's agent: guidance.")
@click.option("--repeat", "-r", type=click.IntRange(min=1), default=1, show_default=True,
              help="Runs per case; the report gives the pass rate's spread over them.")
@click.option("--concurrency", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Runs at once.")
@click.option("--case", "case_patterns", multiple=True, metavar="PATTERN",
              help="Only cases whose name matches this glob pattern. Repeatable.")
@click.option("--judge-model", metavar="MODEL", help="Model for rubric cases (the LLM judge).")
@click.option("--baseline", type=click.Path(dir_okay=False), metavar="FILE.json",
              help="A report written with --json: show fixed, regressed and new cases.")
@click.option("--fail-under", type=str, metavar="RATE",
              help="Exit 1 when the pass rate is below RATE (0.8 or 80%).")
@click.option("--fail-on-regression", is_flag=True,
              help="Exit 1 when a case passes less often than in --baseline.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), metavar="OUT",
              help="Write the full report (criteria, transcripts) as JSON.")
@click.option("--markdown", "markdown_out", type=click.Path(dir_okay=False), metavar="OUT",
              help="Write the report as Markdown.")
@click.option("--replay", type=click.Path(dir_okay=False), metavar="CASSETTE",
              help="Answer model calls from a cassette: re-score without calling the model.")
@click.option("--record", type=click.Path(dir_okay=False), metavar="CASSETTE",
              help="Record every model call of this eval into a cassette.")
def eval_command(cases_file: str, agent_spec: str | None, **opts: Any) -> None:
    """Run the cases of CASES.yaml on an agent and report per case and criterion.

    Progress goes to stderr, the report to stdout.
    """
    from reactloop.errors import ReactloopError

    fail_under = _rate(opts["fail_under"]) if opts["fail_under"] is not None else None
    given = [f for f in _AGENT_FLAGS if opts.get(f)]
    if agent_spec and given:
        raise click.UsageError(f"--agent builds the whole agent; drop --{given[0].replace('_', '-')}"
                               " (or drop --agent)")
    try:
        _check_outputs(opts)  # before any case runs (and is paid for)
        from reactloop.cli import _process

        _process.settle_heap()  # the process is ours: start-up objects leave the GC's scans
        report = asyncio.run(_evaluate(cases_file, agent_spec, opts))
    except ReactloopError as exc:
        click.echo(f"reactloop eval: {exc}", err=True)
        sys.exit(2)
    click.echo(report.to_text())
    try:
        if opts["json_out"]:
            report.save(opts["json_out"])
        if opts["markdown_out"]:
            Path(opts["markdown_out"]).write_text(report.to_markdown(), encoding="utf-8")
    except OSError as exc:
        click.echo(f"reactloop eval: cannot write the report: {exc.strerror or exc} "
                   f"({exc.filename})", err=True)
        sys.exit(2)
    if fail_under is not None and report.pass_rate < fail_under:
        click.echo(f"reactloop eval: pass rate {100 * report.pass_rate:.1f} % is under "
                   f"--fail-under {100 * fail_under:.1f} %", err=True)
        sys.exit(1)
    if opts["fail_on_regression"] and report.comparison and report.comparison.regressed:
        names = ", ".join(c for c, _, _ in report.comparison.regressed)
        click.echo(f"reactloop eval: regressed since the baseline: {names}", err=True)
        sys.exit(1)


_OUTPUTS = (("json_out", "--json"), ("markdown_out", "--markdown"), ("record", "--record"))


def _check_outputs(opts: dict[str, Any]) -> None:
    """Every file the eval will write can be written: its folder exists (``--record``
    creates its own) and it is not a folder. Raises :class:`EvalConfigError` naming it."""
    from reactloop.evals import EvalConfigError

    for key, flag in _OUTPUTS:
        if not opts.get(key):
            continue
        path = Path(opts[key])
        if path.is_dir():
            raise EvalConfigError(f"{flag} {path} is a folder; give a file path")
        folder = path.parent
        if key != "record" and not folder.is_dir():
            raise EvalConfigError(f"{flag} {path}: the folder {folder} does not exist; create "
                                  "it first (nothing was run)")
        if folder.is_dir() and not os.access(folder, os.W_OK):
            raise EvalConfigError(f"{flag} {path}: the folder {folder} is not writable "
                                  "(nothing was run)")


def _select(suite: Any, patterns: tuple[str, ...]) -> Any:
    from dataclasses import replace

    from reactloop.evals import EvalConfigError

    if not patterns:
        return suite
    cases = tuple(c for c in suite.cases if any(fnmatch.fnmatchcase(c.name, p) for p in patterns))
    if not cases:
        raise EvalConfigError(f"no case matches --case {' '.join(patterns)}; the cases are: "
                              + ", ".join(c.name for c in suite.cases[:20]))
    return replace(suite, cases=cases)


def _agent_config(suite: Any, agent_spec: str | None, opts: dict[str, Any]) -> dict[str, Any]:
    if agent_spec:
        from reactloop.cli._load import load_agent

        return {"agent": load_agent(agent_spec)}
    config = dict(suite.agent)
    for flag in _AGENT_FLAGS:
        value = opts.get(flag)
        if value:  # flags given on the command line win over the file
            config[flag] = list(value) if isinstance(value, tuple) else value
    # paths given as flags are relative to the working directory, not to the cases file
    if opts.get("tools"):
        config["tools"] = [_resolve_tools(v) if _is_file(v) else v for v in opts["tools"]]
    if opts.get("skills"):
        config["skills"] = [str(Path(v).resolve()) for v in opts["skills"]]
    if config.get("guidance") is None and isinstance(config.get("model") or "local", str):
        # as `reactloop run`: the model's profile, [models."NAME"] guidance = "full"
        from reactloop.cli._config_files import load_config

        profile = load_config().model_options(str(config.get("model") or "local"))
        if profile.get("guidance"):
            config["guidance"] = profile["guidance"]
    return config


def _is_file(spec: str) -> bool:
    return spec.rpartition(":")[0].endswith(".py")


def _resolve_tools(spec: str) -> str:
    target, _, attr = spec.rpartition(":")
    return f"{Path(target).resolve()}:{attr}"


async def _evaluate(cases_file: str, agent_spec: str | None, opts: dict[str, Any]) -> Any:
    from reactloop.evals import Cassette, Report, build_agent, evaluate, load_suite
    from reactloop.evals._cassette import cassette_model

    suite = _select(load_suite(cases_file), opts["case_patterns"])
    config = _agent_config(suite, agent_spec, opts)
    base_dir = Path.cwd() if agent_spec else suite.base_dir
    replay = Cassette.load(opts["replay"]) if opts["replay"] else None
    record = Cassette() if opts["record"] else None
    baseline = Report.load(opts["baseline"]) if opts["baseline"] else None
    if replay is not None and not agent_spec:
        config["model"] = cassette_model(None, replay=replay)  # no model is loaded at all
        config.pop("guidance", None)  # it shaped the recorded requests, not the replies
    agent = build_agent(config, base_dir)
    total = len(suite.cases) * opts["repeat"]
    click.echo(f"eval {suite.name}: {len(suite.cases)} cases × {opts['repeat']} on "
               f"{agent.model.name}" + (f", replaying {opts['replay']}" if replay else ""),
               err=True)
    try:
        report = await evaluate(agent, suite, repeat=opts["repeat"],
                                concurrency=opts["concurrency"], judge=opts["judge_model"],
                                record=record, replay=replay, on_progress=_progress(total))
    finally:
        await agent.model.aclose()
    if replay is not None:
        report.replayed_from = opts["replay"]
    if record is not None:
        record.save(opts["record"])
    if baseline is not None:
        report.compare(baseline, opts["baseline"])
    return report


def _progress(total: int) -> Any:
    width = len(str(total))

    def show(p: Any) -> None:
        run = p.run
        mark = "PASS" if run.passed else "FAIL"
        first = f"  {run.failures[0].name}: {run.failures[0].reason}" if run.failures else ""
        if len(first) > 110:
            first = first[:109] + "…"
        click.echo(f"[{p.done:>{width}}/{total}] {mark}  {run.case} "
                   f"({run.transcript.seconds:.1f} s){first}", err=True)

    return show
