"""Live rendering of a run: the trace and progress on stderr, the answer alone on stdout.

In a terminal a live line shows the iteration, what is happening, the time it has taken and
the tokens so far; each model call then leaves a line with its tokens and tokens per second.
Compaction, retries and cut-off replies are shown as they happen. ``-v`` adds every request
and response (redacted); ``-q`` prints nothing but the answer. The same trace lines are kept
(:attr:`Renderer.trace`) so ``reactloop logs show`` can print them again.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape
from rich.panel import Panel
from rich.status import Status
from rich.text import Text

from reactloop.cli._observe import dumps, request_to_dict, response_to_dict
from reactloop.cli._outcome import Outcome, judge
from reactloop.events import Event
from reactloop.messages import ModelRequest, ModelResponse
from reactloop.result import RunResult

__all__ = ["NORMAL", "QUIET", "VERBOSE", "Renderer", "print_trace", "short"]

QUIET, NORMAL, VERBOSE = -1, 0, 1
_SHORT = 200
# events that are drawn by the progress line or elsewhere, never as trace lines
_NOT_TRACED = {"run_start", "iteration_start", "request", "text_delta", "model_response",
               "run_end", "step", "partial_output"}


def short(text: Any, limit: int | None = _SHORT) -> str:
    flat = " ".join(str(text).split())
    if limit is None or len(flat) <= limit:
        return flat
    return flat[: limit - 1] + "…"


def _json(value: Any, limit: int | None) -> str:
    try:
        return short(json.dumps(value, ensure_ascii=False, default=str), limit)
    except (TypeError, ValueError):
        return short(repr(value), limit)


# -- trace lines: one function per event type, over the event's to_dict() ------------------------
Format = Callable[[Mapping[str, Any], "int | None"], "str | None"]


def _tool_call(d: Mapping[str, Any], limit: int | None) -> str:
    call = d.get("call") or {}
    flag = " [bold red](writes)[/]" if d.get("writes") else ""
    return (f"[bold cyan]→ {escape(str(call.get('name')))}[/]"
            f"({escape(_json(call.get('arguments', {}), limit and 160))}){flag}")


def _tool_result(d: Mapping[str, Any], limit: int | None) -> str:
    r = d.get("result") or {}
    if r.get("error"):
        return f"  [red]✗ {escape(str(r.get('name')))}: {escape(short(r['error'], limit))}[/]"
    cached = " [dim](repeated call: earlier result)[/]" if r.get("cached") else ""
    return f"  [green]← {escape(short(r.get('content', ''), limit))}[/]{cached}"


def _no_tool_call(d: Mapping[str, Any], limit: int | None) -> str:
    if d.get("reminded"):
        return "[yellow]  (answered without a tool call: reminded to use one)[/]"
    return "[yellow]  (answered without a tool call)[/]"


def _compaction(d: Mapping[str, Any], limit: int | None) -> str:
    return (f"[yellow]  context {'pruned' if d.get('tier') == 'prune' else 'compacted'} "
            f"({escape(str(d.get('tier')))}): {d.get('tokens_before', 0)} → "
            f"{d.get('tokens_after', 0)} tokens in {float(d.get('duration') or 0):.1f}s[/]")


def _retry(d: Mapping[str, Any], limit: int | None) -> str:
    return (f"[yellow]  model call failed ({escape(short(d.get('error', ''), 160))}); "
            f"retry {d.get('attempt')} in {float(d.get('wait') or 0):.1f}s[/]")


def _cache_and_cost(m: Any) -> str:
    """The summary's cache hit rate (when the provider cached) and cost (when priced)."""
    out = ""
    if m.cache_hit_rate:
        out += f" ({100 * m.cache_hit_rate:.0f} % from cache)"
    if m.cost_usd is not None and m.requests:
        out += f" · ${m.cost_usd:.4f}"
    return out


def _model_call(d: Mapping[str, Any], limit: int | None) -> str:
    secs = float(d.get("seconds") or 0)
    if d.get("error"):
        return f"[red]  model call failed after {secs:.1f}s: {escape(short(d['error'], 200))}[/]"
    out, tin = int(d.get("output_tokens") or 0), int(d.get("input_tokens") or 0)
    rate = f" · {out / secs:.1f} tokens/s" if secs >= 0.1 and out else ""
    what = "summary for compaction" if d.get("summary") else "model"
    cache = ""
    if d.get("cache_read_tokens") or d.get("cache_write_tokens"):
        cache = (f" · cache {int(d.get('cache_read_tokens') or 0)} read, "
                 f"{int(d.get('cache_write_tokens') or 0)} written")
    line = f"[dim]  {what}: {secs:.1f}s · {tin} in, {out} out{cache}{rate}[/]"
    if d.get("finish_reason") == "length":
        line += f"\n[yellow]  reply cut off at the output-token limit ({out} tokens)[/]"
    return line


def _custom(d: Mapping[str, Any], limit: int | None) -> str:
    data = d.get("data")
    if d.get("name") == "mcp_warning" and isinstance(data, Mapping):
        return f"[yellow]  MCP: {escape(short(data.get('message', ''), limit))}[/]"
    return f"[magenta]  • {escape(str(d.get('name')))}: {escape(_json(data, limit))}[/]"


def _warning(d: Mapping[str, Any], limit: int | None) -> str:
    return (f"[yellow]  warning ({escape(str(d.get('source')))}): "
            f"{escape(short(d.get('message', ''), limit))}[/]")


def _plan(d: Mapping[str, Any], limit: int | None) -> str:
    return f"[blue]  plan: {escape(_json(d.get('plan'), limit and 160))}[/]"


def _thought(d: Mapping[str, Any], limit: int | None) -> str | None:
    text = (d.get("text") or "").strip()
    return f"[dim italic]  {escape(short(text, limit))}[/]" if text else None


def _approval_requested(d: Mapping[str, Any], limit: int | None) -> str:
    p = d.get("approval") or {}
    return (f"[bold yellow]  ? {escape(str(p.get('tool_name')))}"
            f"({escape(_json(p.get('arguments', {}), limit and 160))}) waits for approval[/]")


def _approval_decided(d: Mapping[str, Any], limit: int | None) -> str:
    name = escape(str((d.get("call") or {}).get("name")))
    decision = d.get("decision") or {}
    if not decision.get("approved"):
        reason = decision.get("reason")
        return f"[yellow]  {name}: denied{escape(': ' + short(reason, limit)) if reason else ''}[/]"
    if decision.get("arguments") is not None:
        edited = escape(_json(decision["arguments"], limit and 160))
        return f"[yellow]  {name}: approved, with the arguments edited to {edited}[/]"
    return f"[yellow]  {name}: approved[/]"


def _fallback(d: Mapping[str, Any], limit: int | None) -> str:
    return (f"[yellow]  {escape(str(d.get('failed')))} failed "
            f"({escape(short(d.get('error', ''), 160))}); {escape(str(d.get('next')))} "
            "takes the request[/]")


def _guardrail(d: Mapping[str, Any], limit: int | None) -> str | None:
    outcome, name = d.get("outcome"), escape(f"{d.get('guardrail')} ({d.get('kind')})")
    if outcome == "tripped":
        return f"[red]  guardrail {name} refused: {escape(short(d.get('reason', ''), 160))}[/]"
    return f"[dim]  guardrail {name}: {escape(str(outcome))}[/]"


def _queued(d: Mapping[str, Any], limit: int | None) -> str:
    return (f"[dim]  waited {float(d.get('waited') or 0):.1f}s for a free "
            f"{escape(str(d.get('model')))} slot (model concurrency)[/]")


def _handoff(d: Mapping[str, Any], limit: int | None) -> str:
    return f"[bold magenta]⇢ handed to {escape(str(d.get('to_agent')))}[/]"


_FORMATS: dict[str, Format] = {
    "approval_requested": _approval_requested, "approval_decided": _approval_decided,
    "tool_call": _tool_call, "tool_result": _tool_result, "tool_error": _tool_result,
    "no_tool_call": _no_tool_call, "compaction": _compaction, "retry": _retry,
    "model_call": _model_call, "custom": _custom, "plan_update": _plan, "thought": _thought,
    "warning": _warning, "handoff": _handoff, "fallback": _fallback, "guardrail": _guardrail,
    "queued": _queued,
}


def trace_line(d: Mapping[str, Any], limit: int | None = _SHORT) -> str | None:
    """The markup line for one recorded event (``None``: nothing to show)."""
    kind = str(d.get("type"))
    fmt = _FORMATS.get(kind)
    if fmt is not None:
        line = fmt(d, limit)
        agent = d.get("agent")  # a sub-agent's run (an agent called as a tool): indented
        return f"    [magenta]{escape(str(agent))}[/] {line.lstrip()}" if agent and line else line
    if kind in _NOT_TRACED:
        return None
    rest = {k: v for k, v in d.items() if k not in ("type", "run_id")}
    return f"[dim]  • {escape(kind)}: {escape(_json(rest, limit))}[/]"  # new event kinds


def print_trace(console: Console, events: Iterable[Mapping[str, Any]], *,
                full: bool = False) -> None:
    for d in events:
        line = trace_line(d, None if full else _SHORT)
        if line:
            console.print(line)


class _Line:
    """The live progress line, rendered afresh at every refresh (so the time moves)."""

    def __init__(self, r: Renderer) -> None:
        self.r = r

    def __rich__(self) -> Text:
        r, now = self.r, time.perf_counter()
        parts = [f"iteration {r.k}/{r.n}" if r.k else "starting", r.phase,
                 f"{now - r.phase_at:.0f}s", f"{now - r.started:.0f}s in all"]
        tokens = r.tokens_in + r.tokens_out + r.streamed
        if tokens:
            parts.append(f"{tokens} tokens")
        if r.streamed and r.first_delta_at is not None and now > r.first_delta_at:
            parts.append(f"~{r.streamed / (now - r.first_delta_at):.1f} tokens/s")
        elif r.rate is not None:
            parts.append(f"last reply {r.rate:.1f} tokens/s")
        return Text(" · ".join(parts), style="cyan")


class Renderer:
    """Draws one run (or one chat turn) from its events and its model calls.

    Args:
        err: where the trace, progress and summary go (stderr).
        out: a console for the answer when stdout is a terminal; ``None`` writes the bare
            answer to stdout (for pipes).
        verbosity: ``QUIET``, ``NORMAL`` or ``VERBOSE``.
        tools_seen: MCP tools by name, filled as their servers start; those that change
            things (``writes``) are flagged in the trace.
        model_spec: the model as typed (for hints).
    """

    def __init__(self, err: Console, out: Console | None, *, verbosity: int = NORMAL,
                 tools_seen: Mapping[str, Any] | None = None, model_spec: str = "MODEL"
                 ) -> None:
        self.err, self.out, self.verbosity = err, out, verbosity
        self.tools_seen = tools_seen if tools_seen is not None else {}
        self.model_spec = model_spec
        self.trace: list[dict[str, Any]] = []
        """Every trace line's data, for the run log."""
        self.live = err.is_terminal and verbosity >= NORMAL
        self.status: Status | None = None
        self.reset()

    def reset(self) -> None:
        """Forget the previous turn (chat)."""
        self.trace = []
        self.k = self.n = 0
        self.started = self.phase_at = time.perf_counter()
        self.phase = "starting"
        self.tokens_in = self.tokens_out = self.streamed = 0
        self.first_delta_at: float | None = None
        self.rate: float | None = None
        self.truncated = False
        self.request_seen = False
        self.cost: float | None = None
        """Money spent, when the provider reports it (``provider_details["cost"]``)."""

    # -- output helpers ----------------------------------------------------------------------
    def _record(self, d: dict[str, Any]) -> None:
        self.trace.append(d)
        if self.verbosity >= NORMAL:
            line = trace_line(d, None if self.verbosity >= VERBOSE else _SHORT)
            if line:
                self.err.print(line, highlight=False)

    def _set_phase(self, phase: str) -> None:
        self.phase, self.phase_at = phase, time.perf_counter()
        if self.live and self.status is None:
            self.status = self.err.status(_Line(self), spinner="dots")
            self.status.start()

    def stop(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def note(self, markup: str) -> None:
        """A line on stderr (not in quiet mode)."""
        if self.verbosity >= NORMAL:
            self.err.print(markup, highlight=False)

    # -- the model, as ObservedRuntime reports it -------------------------------------------
    def call_started(self, request: ModelRequest) -> None:
        self.streamed, self.first_delta_at = 0, None
        # a call before this iteration's request event summarizes old turns (compaction)
        self._set_phase("waiting for the model" if self.request_seen
                        else "compacting: summarizing earlier turns")
        if self.verbosity >= VERBOSE:
            self.err.print(f"[bold]── request (iteration {self.k}) ──[/]")
            self.err.print(dumps(request_to_dict(request)), markup=False, highlight=False)

    def call_ended(self, request: ModelRequest, response: ModelResponse | None,
                   seconds: float, error: BaseException | None) -> None:
        usage = response.usage if response is not None else None
        d: dict[str, Any] = {"type": "model_call", "iteration": self.k, "seconds": seconds,
                             "summary": not self.request_seen,
                             "input_tokens": usage.input_tokens if usage else 0,
                             "output_tokens": usage.output_tokens if usage else self.streamed,
                             "cache_read_tokens": usage.cache_read_tokens if usage else 0,
                             "cache_write_tokens": usage.cache_write_tokens if usage else 0,
                             "finish_reason": response.finish_reason if response else None,
                             # a cancelled call (not an Exception) did not fail
                             "error": f"{type(error).__name__}: {error}"
                             if isinstance(error, Exception) else None}
        cost = (response.provider_details or {}).get("cost") if response is not None else None
        if isinstance(cost, (int, float)) and not isinstance(cost, bool):
            self.cost = (self.cost or 0.0) + float(cost)
        if usage is not None:
            self.tokens_in += usage.input_tokens
            self.tokens_out += usage.output_tokens
        else:
            self.tokens_out += self.streamed
        self.streamed = 0
        if seconds > 0 and d["output_tokens"]:
            self.rate = d["output_tokens"] / seconds
        if self.verbosity >= VERBOSE and response is not None:
            self.err.print("[bold]── response ──[/]")
            self.err.print(dumps(response_to_dict(response)), markup=False, highlight=False)
        self._record(d)

    def tool_progress(self, data: Mapping[str, Any]) -> None:
        """An MCP server's progress on the tool it runs, shown in the progress line."""
        total, message = data.get("total"), data.get("message")
        done = f"{data.get('progress', 0):g}" + (f"/{total:g}" if total else "")
        self._set_phase(f"running {data.get('tool', 'a tool')} · {done}"
                        + (f" · {short(message, 60)}" if message else ""))

    # -- events ------------------------------------------------------------------------------
    def handle(self, event: Event) -> None:
        t = event.type
        if event.parent_run_id is not None:  # a sub-agent's run: its calls, under the call
            if t in _FORMATS:
                self._record(event.to_dict())
            return
        if t == "text_delta":
            if self.first_delta_at is None:
                self.first_delta_at = time.perf_counter()
                self.phase = "writing"
            self.streamed += 1
            return
        if t == "run_start":
            self.n = int(getattr(event, "max_iterations", 0))
            self._set_phase("starting")
        elif t == "iteration_start":
            self.k = int(getattr(event, "iteration", 0))
            self.request_seen = False
            self._set_phase("preparing the request")
        elif t == "request":
            self.request_seen = True
        elif t == "model_response":
            response = getattr(event, "response", None)
            self.truncated = getattr(response, "finish_reason", None) == "length"
            if response is not None and response.tool_calls and (response.text or "").strip():
                self._record({"type": "thought", "text": response.text})
        elif t == "tool_call":
            name = getattr(getattr(event, "call", None), "name", "")
            self._set_phase(f"running {name}")
            writes = bool(getattr(self.tools_seen.get(name), "writes", False))
            self._record({**event.to_dict(), "writes": writes})
        elif t not in _NOT_TRACED:
            self._record(event.to_dict())

    # -- the end -----------------------------------------------------------------------------
    def finish(self, result: RunResult, *, model: Any = None, footer: str = "",
               answer: bool = True) -> Outcome:
        """Print the answer (stdout) and the summary (stderr); return the outcome.

        A run that failed (``error``) has no answer: stdout stays empty and stderr gets one
        line with the reason."""
        self.stop()
        outcome = judge(result, truncated=self.truncated, model=model,
                        model_spec=self.model_spec)
        failed = outcome.label == "error"
        if answer and not failed:
            self.print_answer(result, outcome)
        if self.verbosity >= NORMAL and not failed:
            self.print_summary(result, outcome, footer)
        elif not outcome.ok:
            self.err.print(f"reactloop: run ended {outcome.label}: {outcome.notes[0]}",
                           markup=False, highlight=False)
        return outcome

    def print_answer(self, result: RunResult[Any], outcome: Outcome) -> None:
        if outcome.label == "waiting_for_approval":
            return  # no answer yet: the summary says what waits
        # a typed answer (output_type, --output-schema) prints as its validated JSON
        text = result.output if isinstance(result.output, str) else result.text
        if self.out is None:
            if text:
                sys.stdout.write(text if text.endswith("\n") else text + "\n")
                sys.stdout.flush()
            return
        style = "green" if outcome.ok else "yellow"
        if result.output is not None and not isinstance(result.output, str):
            from rich.json import JSON

            self.out.print(Panel(JSON(text), title=f"answer · {outcome.label}",
                                 border_style=style))
            return
        self.out.print(Panel(Markdown(text or "(no answer)"),
                             title=f"answer · {outcome.label}", border_style=style))

    def print_summary(self, result: RunResult, outcome: Outcome, footer: str) -> None:
        m = result.metrics
        mark = "[green]✓[/]" if outcome.ok else "[yellow]![/]"
        calls = f"{m.tool_calls} tool call{'s' if m.tool_calls != 1 else ''}"
        line = (f"{mark} [bold]{outcome.label}[/] · {m.iterations} iteration"
                f"{'s' if m.iterations != 1 else ''} · {calls} · "
                f"{m.input_tokens}+{m.output_tokens} tokens{_cache_and_cost(m)} · "
                f"{m.execution_time:.1f}s")
        self.err.print(line + (f" [dim]· {escape(footer)}[/]" if footer else ""),
                       highlight=False)
        for note in outcome.notes:
            if note != outcome.label:
                self.err.print(f"  [yellow]{escape(note)}[/]", highlight=False)
