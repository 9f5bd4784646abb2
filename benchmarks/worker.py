"""One framework, one workload, in a fresh process; prints one JSON object on stdout.

Started by ``run.py`` (reactloop with the project's interpreter, the peers with
``benchmarks/.venv-peers``), so machine noise and memory never leak from one framework into
another. Standard library only, apart from the framework under test.

    python benchmarks/worker.py overhead FRAMEWORK --runs 200 --warmup 20
    python benchmarks/worker.py concurrency FRAMEWORK --n 1000 --delay 0.05
    python benchmarks/worker.py otel reactloop --runs 200 --warmup 20
    python benchmarks/worker.py version FRAMEWORK
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

N_CALLS = 10
"""Tool calls per run of the common workload (so 11 model calls a run)."""


def framework(name: str) -> ModuleType:
    return importlib.import_module(f"frameworks.{name}_fw")


def max_rss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def current_rss_kb() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


async def overhead(fw: ModuleType, runs: int, warmup: int, n_calls: int) -> dict[str, Any]:
    """Sequential runs, alternating a run with ``n_calls`` tool calls and one that answers at
    once, so the difference isolates the cost of a tool-call iteration."""
    counter = [0, 0]
    with_tools = fw.build(0.0, n_calls, counter)
    no_tools = fw.build(0.0, 0, counter)
    for _ in range(warmup):
        await with_tools()
        await no_tools()
    counter[:] = [0, 0]
    t_tools: list[float] = []
    t_answer: list[float] = []
    reported: set[int] = set()
    gc.collect()
    for _ in range(runs):
        t0 = time.perf_counter()
        reported.add(await with_tools())
        t1 = time.perf_counter()
        await no_tools()
        t2 = time.perf_counter()
        t_tools.append(t1 - t0)
        t_answer.append(t2 - t1)
    return {
        "runs": runs,
        "median_run_s": statistics.median(t_tools),
        "median_answer_only_s": statistics.median(t_answer),
        "per_iteration_s": (statistics.median(t_tools) - statistics.median(t_answer)) / n_calls,
        "model_calls": counter[0],
        "tool_executions": counter[1],
        "expected_model_calls": runs * (n_calls + 2),
        "expected_tool_executions": runs * n_calls,
        "reported_tool_calls": sorted(reported),
    }


OTEL_MODES = ("off", "memory", "otlp")
"""Instrumentation off; on, spans kept in memory; on, exported over OTLP/HTTP (batched)."""

# a loopback OTLP/HTTP receiver in its own process (so its CPU is not ours): it decodes every
# export and counts the spans, so the benchmark can check they all arrived
_SINK = r"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
count = [0]
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path == "/v1/traces":
            req = ExportTraceServiceRequest.FromString(body)
            count[0] += sum(len(s.spans) for r in req.resource_spans for s in r.scope_spans)
        self.send_response(200); self.send_header("content-length", "0"); self.end_headers()
    def do_GET(self):
        data = str(count[0]).encode()
        self.send_response(200); self.send_header("content-length", str(len(data)))
        self.end_headers(); self.wfile.write(data)
    def log_message(self, *a): pass
srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()
"""


def _telemetry(mode: str, sink: str) -> tuple[Any, Callable[[], int]]:
    """The telemetry for ``mode`` and a function returning the spans it has delivered."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from reactloop._otel._export import otlp_telemetry
    from reactloop._otel._telemetry import Telemetry

    if mode == "memory":
        exporter = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
        kept = [0]

        def delivered() -> int:  # emptied after every run, outside the timing
            kept[0] += len(exporter.get_finished_spans())
            exporter.clear()
            return kept[0]

        meter = MeterProvider(metric_readers=[InMemoryMetricReader()])
        return Telemetry(tracer_provider, meter), delivered
    telemetry, stop = otlp_telemetry(sink, env={})

    def received() -> int:
        stop()  # flush what is batched
        with urllib.request.urlopen(sink, timeout=10) as r:
            return int(r.read())

    return telemetry, received


def _sdk_floor(telemetry: Any, reps: int) -> float:
    """Seconds the OpenTelemetry SDK alone takes for what one traced tool-call iteration asks
    of it: a chat span (4 attributes, 4 more at its end), its 3 histogram points and an
    execute_tool span (5 attributes), with nothing of reactloop around them."""
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind

    tracer, root = telemetry.tracer, telemetry.tracer.start_span("invoke_agent floor")
    parent = trace.set_span_in_context(root)
    m = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "reactloop.testing",
         "gen_ai.request.model": "function"}
    t0 = time.perf_counter()
    for i in range(reps):
        chat = tracer.start_span("chat function", parent, SpanKind.CLIENT,
                                 {**m, "reactloop.iteration": i})
        telemetry.token_usage.record(90, {**m, "gen_ai.token.type": "input"})
        telemetry.token_usage.record(9, {**m, "gen_ai.token.type": "output"})
        telemetry.duration.record(0.001, m)
        chat.set_attributes({"gen_ai.usage.input_tokens": 90, "gen_ai.usage.output_tokens": 9,
                             "gen_ai.response.model": "function",
                             "gen_ai.response.finish_reasons": ("tool_calls",)})
        chat.end()
        tracer.start_span("execute_tool add", parent, SpanKind.INTERNAL, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "add",
            "gen_ai.tool.type": "function", "gen_ai.tool.call.id": f"call_{i}",
            "gen_ai.tool.description": "Add two integers."}).end()
    elapsed = (time.perf_counter() - t0) / reps
    root.end()
    return elapsed


async def otel_overhead(runs: int, warmup: int, n_calls: int) -> dict[str, Any]:
    """reactloop's tool-call iteration with instrumentation off, on with the in-memory
    exporter and on with the OTLP exporter, run by run in turn in one process (the order
    rotates), so machine noise hits the three alike."""
    os.environ.pop("OTEL_SDK_DISABLED", None)  # run.py sets it for the peers
    from reactloop import _instrument

    fw = framework("reactloop")
    sink_proc = subprocess.Popen(  # noqa: ASYNC220 - before the measured part, on purpose
        [sys.executable, "-c", _SINK], stdout=subprocess.PIPE, text=True)
    try:
        assert sink_proc.stdout is not None
        sink = f"http://127.0.0.1:{sink_proc.stdout.readline().strip()}"
        made = {m: _telemetry(m, sink) for m in OTEL_MODES if m != "off"}
        counter = [0, 0]
        with_tools, no_tools = fw.build(0.0, n_calls, counter), fw.build(0.0, 0, counter)
        times: dict[str, tuple[list[float], list[float]]] = {m: ([], []) for m in OTEL_MODES}
        spans = dict.fromkeys(OTEL_MODES, 0)
        floor: list[float] = []
        gc.collect()
        for i in range(warmup + runs):
            for mode in OTEL_MODES[i % 3:] + OTEL_MODES[:i % 3]:
                _instrument.set_active(made[mode][0] if mode in made else None)
                t0 = time.perf_counter()
                await with_tools()
                t1 = time.perf_counter()
                await no_tools()
                t2 = time.perf_counter()
                spans[mode] += 2 + 2 * n_calls + 2  # 2 runs, n tools, n + 2 model calls
                if i >= warmup:
                    times[mode][0].append(t1 - t0)
                    times[mode][1].append(t2 - t1)
                if mode == "memory":
                    if i >= warmup:
                        floor.append(_sdk_floor(made[mode][0], n_calls))
                        spans[mode] += n_calls * 2 + 1
                    made[mode][1]()
        _instrument.set_active(None)
        delivered = {m: made[m][1]() for m in made}
    finally:
        sink_proc.kill()
        sink_proc.wait()
    out: dict[str, Any] = {"runs": runs, "spans_expected": {m: spans[m] for m in made},
                           "spans_delivered": delivered,
                           "sdk_floor_per_iteration_s": statistics.median(floor)}
    for mode, (tools, answer) in times.items():
        out[f"{mode}_per_iteration_s"] = (statistics.median(tools)
                                          - statistics.median(answer)) / n_calls
        out[f"{mode}_median_run_s"] = statistics.median(tools)
    return out


class GcTimer:
    """Counts the garbage collector's passes and the time they take while active."""

    def __init__(self) -> None:
        self.collections, self.seconds, self._t = 0, 0.0, 0.0

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._t = time.perf_counter()
        else:
            self.collections += 1
            self.seconds += time.perf_counter() - self._t

    def __enter__(self) -> GcTimer:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)


async def concurrency(fw: ModuleType, n: int, delay: float, n_calls: int) -> dict[str, Any]:
    """``n`` runs started at once; each model call first awaits ``delay`` seconds."""
    if getattr(fw, "THREADED", False):
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=n + 8))
    counter = [0, 0]
    run_once: Callable[[], Awaitable[int]] = fw.build(delay, n_calls, counter)
    await asyncio.gather(*(run_once() for _ in range(min(10, n))))  # warm-up
    counter[:] = [0, 0]
    gc.collect()
    gc_time = GcTimer()
    rss_before, peak_before = current_rss_kb(), max_rss_kb()
    t0 = time.perf_counter()
    with gc_time:
        results = await asyncio.gather(*(run_once() for _ in range(n)), return_exceptions=True)
    wall = time.perf_counter() - t0
    peak_after, rss_after = max_rss_kb(), current_rss_kb()
    errors = [repr(r) for r in results if isinstance(r, BaseException)]
    ideal = (n_calls + 1) * delay
    model_calls = counter[0]
    return {
        "n": n,
        "delay_s": delay,
        "wall_s": wall,
        "ideal_s": ideal,
        "model_calls": model_calls,
        "tool_executions": counter[1],
        "expected_model_calls": n * (n_calls + 1),
        "calls_per_s": model_calls / wall,
        "pct_of_ideal": 100.0 * (model_calls / wall) / (n * (n_calls + 1) / ideal),
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "rss_before_kb": rss_before,
        "rss_after_kb": rss_after,
        "peak_rss_delta_kb": max(0, peak_after - peak_before),
        "peak_rss_kb": peak_after,
        "kb_per_run": max(0, peak_after - peak_before) / n,
        "gc_collections": gc_time.collections,
        "gc_s": gc_time.seconds,
    }


def version(fw: ModuleType) -> dict[str, Any]:
    from importlib.metadata import PackageNotFoundError, version

    try:
        v = platform.python_version() if fw.DIST == "python" else version(fw.DIST)
    except PackageNotFoundError:
        v = "?"
    return {"name": fw.NAME, "dist": fw.DIST, "version": v, "python": sys.version.split()[0]}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("workload", choices=["overhead", "concurrency", "otel", "version"])
    p.add_argument("framework")
    p.add_argument("--runs", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--delay", type=float, default=0.05)
    p.add_argument("--calls", type=int, default=N_CALLS)
    a = p.parse_args(argv)
    fw = framework(a.framework)
    if a.workload == "version":
        out = version(fw)
    elif a.workload == "overhead":
        out = asyncio.run(overhead(fw, a.runs, a.warmup, a.calls))
    elif a.workload == "otel":
        out = asyncio.run(otel_overhead(a.runs, a.warmup, a.calls))
    else:
        out = asyncio.run(concurrency(fw, a.n, a.delay, a.calls))
    out["framework"] = fw.NAME
    print(json.dumps(out))


if __name__ == "__main__":
    main()
