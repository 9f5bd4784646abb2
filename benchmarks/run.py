"""The benchmark suite: reactloop side by side with its peers, one command.

    python benchmarks/run.py                 # full run (about 15-25 minutes on 2 cores)
    python benchmarks/run.py --quick         # smoke run, under 3 minutes (CI)
    python benchmarks/run.py --json out.json # also write every figure as JSON

The peers (pydantic-ai, openai-agents, langgraph, smolagents) are installed into
``benchmarks/.venv-peers`` from the pinned ``benchmarks/requirements-peers.txt`` on the first
run; after that everything is offline. If that virtualenv cannot be made, the peers are
reported as unavailable and reactloop is still measured.

Each framework's workload runs in its own fresh process; the processes of the different
frameworks alternate (the order rotates every repetition) so machine noise hits them alike;
each figure is the median over repetitions, each repetition measured after a warm-up.
See ``benchmarks/README.md`` for what every figure means.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import venv
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PEERS_VENV = HERE / ".venv-peers"
PEERS_REQUIREMENTS = HERE / "requirements-peers.txt"
STAMP = PEERS_VENV / ".requirements.sha256"
N_CALLS = 10

sys.path.insert(0, str(HERE))
from frameworks import FRAMEWORKS  # noqa: E402

TARGETS = {
    "overhead_us": 100.0,
    "overhead_vs_fastest_peer": 0.25,
    "import_ms": 150.0,
    "help_ms": 300.0,
    "concurrency_pct": 95.0,
    "memory_vs_lightest_peer": 0.5,
    "prefix_pct": 99.0,
    "otel_added_us": 30.0,
}
TARGETS_28 = {
    "iteration_us": 15.0,
    "ideal_pct": 85.0,
    "kib_per_run": 16.0,
    "scale_ratio": 0.85,
    "gc_share_pct": 15.0,
    "import_ms": 60.0,
    "help_ms": 150.0,
}
"""Issue 28's targets, checked on the async-tool row (``reactloop_async``): µs per tool-call
iteration with nothing listening (≤ 20 with callbacks, ≤ 15 without: the workload has none),
% of ideal and KiB per run at 1,000 concurrent runs, the throughput of 10,000 runs against
1,000's, the garbage collector's share of the wall at 10,000, import and ``--help``."""


# -- small helpers ------------------------------------------------------------------------------
def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def bench_env(*, write_bytecode: bool = False) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if write_bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["OPENAI_API_KEY"] = env.get("OPENAI_API_KEY") or "sk-benchmark-not-used"
    for quiet in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"):
        env[quiet] = "false"
    env["OTEL_SDK_DISABLED"] = "true"
    env["HF_HUB_OFFLINE"] = "1"
    return env


def run_json(cmd: Sequence[str], timeout: float) -> dict[str, Any]:
    """Run ``cmd``; its last stdout line is a JSON object. Failures come back as
    ``{"error": ...}`` so one broken framework never stops the suite."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=bench_env(),
                           cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    lines = p.stdout.strip().splitlines()
    if p.returncode != 0 or not lines:
        tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"error": f"exit {p.returncode}: {tail[:300]}"}
    try:
        out: dict[str, Any] = json.loads(lines[-1])
    except json.JSONDecodeError:
        return {"error": f"unreadable output: {lines[-1][:200]}"}
    return out


def rotated(items: Sequence[str], k: int) -> list[str]:
    k %= max(1, len(items))
    return [*items[k:], *items[:k]]


# -- machine facts -------------------------------------------------------------------------------
def machine_facts() -> dict[str, Any]:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_gib = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=ROOT).stdout.strip() or "?"
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": mem_gib,
        "os": platform.platform(),
        "python": platform.python_version(),
        "reactloop_commit": commit,
        "load_average_at_start": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }


# -- the peers' virtualenv ------------------------------------------------------------------------
def peers_python(install: bool, timeout: float) -> tuple[str | None, str]:
    """The peers' interpreter, installing the pinned peers first if needed; or (None, why)."""
    py = PEERS_VENV / "bin" / "python"
    want = hashlib.sha256(PEERS_REQUIREMENTS.read_bytes()).hexdigest()
    if py.exists() and STAMP.exists() and STAMP.read_text().strip() == want:
        return str(py), "installed"
    if not install:
        return None, "not installed (run without --no-install to install them)"
    log(f"installing the peers into {PEERS_VENV.relative_to(ROOT)} (pinned, one time)")
    started = time.monotonic()
    try:
        if not py.exists():
            venv.EnvBuilder(with_pip=True, clear=True).create(PEERS_VENV)
        p = subprocess.run([str(py), "-m", "pip", "install", "--quiet", "-r",
                            str(PEERS_REQUIREMENTS)], capture_output=True, text=True,
                           timeout=timeout)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"could not create the peers' virtualenv: {exc}"
    if p.returncode != 0:
        errors = [ln for ln in p.stderr.splitlines() if ln.startswith("ERROR")]
        return None, "pip install failed: " + (errors[-1] if errors else p.stderr[-300:])
    STAMP.write_text(want)
    log(f"peers installed in {time.monotonic() - started:.0f} s")
    return str(py), "installed"


def precompile(interpreters: dict[str, str]) -> None:
    """Write bytecode before anything is timed: this environment sets PYTHONDONTWRITEBYTECODE,
    so without it every fresh interpreter would compile reactloop's sources again. compileall
    covers reactloop's sources; building each framework's agent once with bytecode writing on
    covers the modules that framework imports lazily."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")],
                   capture_output=True, env=bench_env(write_bytecode=True))
    for fw, py in interpreters.items():
        code = (f"import sys; sys.path.insert(0, {str(HERE)!r}); "
                f"import frameworks.{fw}_fw as m; m.build(0.0, 1, [0, 0])")
        subprocess.run([py, "-c", code], capture_output=True, env=bench_env(write_bytecode=True),
                       cwd=ROOT, timeout=300)
    if shutil.which("reactloop"):
        subprocess.run(["reactloop", "--help"], capture_output=True,
                       env=bench_env(write_bytecode=True), timeout=120)


# -- workloads -----------------------------------------------------------------------------------
def interleaved(frameworks: dict[str, str], reps: int,
                one: Callable[[str, str], dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """``one(framework, python)`` for every framework, ``reps`` times, order rotating."""
    out: dict[str, list[dict[str, Any]]] = {fw: [] for fw in frameworks}
    names = list(frameworks)
    for r in range(reps):
        for fw in rotated(names, r):
            out[fw].append(one(fw, frameworks[fw]))
    return out


def taking_part(fws: dict[str, str], workload: str) -> dict[str, str]:
    """The frameworks whose module takes part in ``workload`` (``WORKLOADS``, default all)."""
    import importlib

    out = {}
    for fw, py in fws.items():
        mod = importlib.import_module(f"frameworks.{fw}_fw")
        if workload in getattr(mod, "WORKLOADS", (workload,)):
            out[fw] = py
    return out


def summarize(samples: list[dict[str, Any]], keys: Sequence[str]) -> dict[str, Any]:
    good = [s for s in samples if "error" not in s]
    if not good:
        return {"error": samples[0].get("error", "no samples") if samples else "no samples"}
    out: dict[str, Any] = {k: median([s[k] for s in good]) for k in keys}
    out["repetitions"] = len(good)
    out["samples"] = good
    failed = [s["error"] for s in samples if "error" in s]
    if failed:
        out["failed_repetitions"] = failed
    return out


def w_overhead(fws: dict[str, str], reps: int, runs: int, warmup: int) -> dict[str, Any]:
    log(f"1. loop overhead: {runs} runs x {reps} repetitions per framework")

    def one(fw: str, py: str) -> dict[str, Any]:
        return run_json([py, str(HERE / "worker.py"), "overhead", fw, "--runs", str(runs),
                         "--warmup", str(warmup), "--calls", str(N_CALLS)], timeout=900)

    raw = interleaved(taking_part(fws, "overhead"), reps, one)
    result = {}
    for fw, samples in raw.items():
        s = summarize(samples, ["median_run_s", "median_answer_only_s", "per_iteration_s"])
        if "error" not in s:
            s["work_checked"] = all(
                x["model_calls"] == x["expected_model_calls"]
                and x["tool_executions"] == x["expected_tool_executions"]
                and x["reported_tool_calls"] == [N_CALLS] for x in s["samples"])
        result[fw] = s
    return result


def w_otel(reps: int, runs: int, warmup: int) -> dict[str, Any]:
    """7. reactloop's tool-call iteration with OpenTelemetry off, on with the in-memory
    exporter, on with the OTLP/HTTP exporter (interleaved in one process per repetition)."""
    log(f"7. instrumentation overhead: {runs} runs x 3 modes x {reps} repetitions")
    samples = [run_json([sys.executable, str(HERE / "worker.py"), "otel", "reactloop",
                         "--runs", str(runs), "--warmup", str(warmup), "--calls", str(N_CALLS)],
                        timeout=900) for _ in range(reps)]
    s = summarize(samples, ["off_per_iteration_s", "memory_per_iteration_s",
                            "otlp_per_iteration_s", "sdk_floor_per_iteration_s"])
    if "error" not in s:
        s["work_checked"] = all(x["spans_expected"] == x["spans_delivered"]
                                for x in s["samples"])
    return s


def import_seconds(py: str, statement: str) -> dict[str, Any]:
    code = (f"import time; t = time.perf_counter(); {statement}; "
            "print(time.perf_counter() - t)")
    try:
        p = subprocess.run([py, "-c", code], capture_output=True, text=True, timeout=120,
                           env=bench_env(), cwd="/")
        return {"s": float(p.stdout.strip().splitlines()[-1])}
    except (subprocess.SubprocessError, ValueError, IndexError):
        return {"error": "import failed"}


def w_cold_start(fws: dict[str, str], reps: int) -> dict[str, Any]:
    log(f"2. cold start: import time, {reps} fresh interpreters per framework")
    import importlib

    fws = taking_part(fws, "cold")
    statements = {fw: importlib.import_module(f"frameworks.{fw}_fw").IMPORT for fw in fws}
    raw = interleaved(fws, reps, lambda fw, py: import_seconds(py, statements[fw]))
    out: dict[str, Any] = {}
    for fw, samples in raw.items():
        s = summarize(samples, ["s"])
        out[fw] = {"import": statements[fw], **s}
    out["reactloop_top_imports"] = top_imports(sys.executable, "reactloop")
    exe = shutil.which("reactloop")
    if exe is None:
        out["reactloop --help"] = {"skipped": "no `reactloop` command on PATH"}
    else:
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            p = subprocess.run([exe, "--help"], capture_output=True, env=bench_env())
            times.append(time.perf_counter() - t)
        out["reactloop --help"] = ({"s": median(times), "repetitions": reps} if p.returncode == 0
                                   else {"error": f"exit {p.returncode}"})
    return out


def top_imports(py: str, module: str, n: int = 12) -> list[dict[str, Any]]:
    """The modules with the largest cumulative import time under ``import module``."""
    p = subprocess.run([py, "-X", "importtime", "-c", f"import {module}"], capture_output=True,
                       text=True, env=bench_env(), cwd="/")
    rows = []
    for line in p.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        self_us, cum_us, name = line.removeprefix("import time:").split("|")
        depth = (len(name) - len(name.lstrip()) - 1) // 2
        rows.append({"module": name.strip(), "self_ms": int(self_us) / 1000,
                     "cumulative_ms": int(cum_us) / 1000, "depth": depth})
    # -X importtime prints children before their parent: the rows of `import module` are the
    # ones after the previous top-level row (interpreter start-up, site hooks)
    end = next((i for i, r in enumerate(rows) if r["module"] == module and r["depth"] == 0),
               len(rows) - 1)
    begin = max((i for i in range(end) if rows[i]["depth"] == 0), default=-1) + 1
    top = [r for r in rows[begin:end + 1] if r["depth"] <= 3]
    return sorted(top, key=lambda r: -r["cumulative_ms"])[:n]


def w_concurrency(fws: dict[str, str], reps: int, n: int, delay: float) -> dict[str, Any]:
    log(f"3. concurrency: {n} concurrent runs, {delay * 1000:.0f} ms per model call, "
        f"{reps} repetitions per framework")

    def one(fw: str, py: str) -> dict[str, Any]:
        return run_json([py, str(HERE / "worker.py"), "concurrency", fw, "--n", str(n),
                         "--delay", str(delay), "--calls", str(N_CALLS)], timeout=1200)

    raw = interleaved(taking_part(fws, "concurrency"), reps, one)
    out = {}
    for fw, samples in raw.items():
        s = summarize(samples, ["wall_s", "calls_per_s", "pct_of_ideal", "kb_per_run",
                                "peak_rss_kb", "gc_s"])
        if "error" not in s:
            s["work_checked"] = all(x["model_calls"] == x["expected_model_calls"]
                                    and x["errors"] == 0 for x in s["samples"])
        out[fw] = s
    return out


def w_scale(n: int, delay: float, reps: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """4. ``n`` concurrent runs of reactloop alone, the default (sync) tool and the async one
    (issue 28's row), alternating; every run makes 11 model calls, as at 1,000."""
    log(f"4. scale: reactloop alone, {n} concurrent runs, sync and async tool")
    raw = interleaved({"reactloop": sys.executable, "reactloop_async": sys.executable}, reps,
                      lambda fw, py: run_json([py, str(HERE / "worker.py"), "concurrency", fw,
                                               "--n", str(n), "--delay", str(delay),
                                               "--calls", str(N_CALLS)], timeout=1200))
    keys = ["wall_s", "calls_per_s", "pct_of_ideal", "kb_per_run", "peak_rss_kb", "gc_s"]
    return ({"n": n, **summarize(raw["reactloop"], keys)},
            {"n": n, **summarize(raw["reactloop_async"], keys)})


def w_script(name: str, args: Sequence[str], timeout: float) -> dict[str, Any]:
    return run_json([sys.executable, str(HERE / name), "--json", *args], timeout=timeout)


# -- report ----------------------------------------------------------------------------------------
def fmt(x: Any, spec: str, unit: str = "") -> str:
    if not isinstance(x, (int, float)) or x != x:
        return "-"
    return f"{x:{spec}}{unit}"


def check(ok: bool | None) -> str:
    return "n/a" if ok is None else ("met" if ok else "MISSED")


def targets(res: dict[str, Any]) -> list[tuple[str, str, str, bool | None]]:
    """(target, measured, requirement, met?) rows."""
    rows: list[tuple[str, str, str, bool | None]] = []
    ov = res.get("overhead", {})
    rl = ov.get("reactloop", {})
    is_peer = {fw: info.get("peer", False) for fw, info in res.get("frameworks", {}).items()}
    peers = {fw: v for fw, v in ov.items() if is_peer.get(fw) and "error" not in v}
    rl_us = rl.get("per_iteration_s", float("nan")) * 1e6
    rows.append(("overhead per tool-call iteration", fmt(rl_us, ".0f", " µs"), "≤ 100 µs",
                 rl_us <= TARGETS["overhead_us"] if rl_us == rl_us else None))
    if peers:
        fastest = min(peers, key=lambda fw: peers[fw]["per_iteration_s"])
        f_us = peers[fastest]["per_iteration_s"] * 1e6
        rows.append((f"  vs fastest peer ({fastest}: {f_us:.0f} µs)",
                     fmt(rl_us / f_us, ".2f", "x"), "≤ 0.25x",
                     rl_us / f_us <= TARGETS["overhead_vs_fastest_peer"]))
    else:
        rows.append(("  vs fastest peer", "-", "≤ 0.25x", None))
    cs = res.get("cold_start", {})
    imp = cs.get("reactloop", {}).get("s")
    rows.append(("import reactloop", fmt(imp * 1000 if imp else None, ".0f", " ms"), "< 150 ms",
                 imp * 1000 < TARGETS["import_ms"] if imp else None))
    hlp = cs.get("reactloop --help", {}).get("s")
    rows.append(("reactloop --help", fmt(hlp * 1000 if hlp else None, ".0f", " ms"), "< 300 ms",
                 hlp * 1000 < TARGETS["help_ms"] if hlp else None))
    cc = res.get("concurrency", {})
    pct = cc.get("reactloop", {}).get("pct_of_ideal")
    rows.append(("concurrency, % of ideal", fmt(pct, ".1f", " %"), "≥ 95 %",
                 pct >= TARGETS["concurrency_pct"] if pct is not None else None))
    mem = cc.get("reactloop", {}).get("kb_per_run")
    cpeers = {fw: v for fw, v in cc.items() if is_peer.get(fw) and "error" not in v}
    if cpeers and mem is not None:
        lightest = min(cpeers, key=lambda fw: cpeers[fw]["kb_per_run"])
        l_kb = cpeers[lightest]["kb_per_run"]
        rows.append((f"memory per run vs lightest peer ({lightest}: {l_kb:.0f} KiB)",
                     fmt(mem / l_kb if l_kb else None, ".2f", "x"), "≤ 0.5x",
                     mem / l_kb <= TARGETS["memory_vs_lightest_peer"] if l_kb else None))
    else:
        rows.append(("memory per run vs lightest peer", "-", "≤ 0.5x", None))
    px = res.get("prefix_stability", {})
    share = px.get("min_share_pct")
    rows.append(("prefix stability (worst request)", fmt(share, ".2f", " %"), "≥ 99 %",
                 share >= TARGETS["prefix_pct"] if share is not None else None))
    ot = res.get("otel", {})
    added = ((ot["otlp_per_iteration_s"] - ot["off_per_iteration_s"]) * 1e6
             if "otlp_per_iteration_s" in ot else None)
    rows.append(("OpenTelemetry on (OTLP), added per iteration", fmt(added, ".0f", " µs"),
                 "≤ 30 µs", added <= TARGETS["otel_added_us"] if added is not None else None))
    return rows


def targets_28(res: dict[str, Any]) -> list[tuple[str, str, str, bool | None]]:
    """Issue 28's (target, measured, requirement, met?) rows, on the async-tool row."""
    t = TARGETS_28
    us = res.get("overhead", {}).get("reactloop_async", {}).get("per_iteration_s")
    cc = res.get("concurrency", {}).get("reactloop_async", {})
    sc = res.get("scale_async", {})
    ok = "error" not in cc and "error" not in sc
    pct, kib, rate = cc.get("pct_of_ideal"), cc.get("kb_per_run"), cc.get("calls_per_s")
    ratio = (sc["calls_per_s"] / rate if ok and rate and sc.get("calls_per_s")
             and not res.get("quick") else None)  # quick: 100 runs wait on the model
    gc = 100 * sc["gc_s"] / sc["wall_s"] if ok and sc.get("wall_s") else None
    cs = res.get("cold_start", {})
    imp, hlp = cs.get("reactloop", {}).get("s"), cs.get("reactloop --help", {}).get("s")
    n = f"{sc.get('n', 10000):,}"
    c = f"{res.get('params', {}).get('concurrent_runs', 1000):,}"

    def row(name: str, value: float | None, spec: str, unit: str, need: str,
            met: Callable[[float], bool]) -> tuple[str, str, str, bool | None]:
        return name, fmt(value, spec, unit), need, None if value is None else met(value)

    return [
        row("µs per tool-call iteration (async tool, nothing listening)",
            us * 1e6 if us else None, ".1f", " µs", "≤ 15 µs", lambda v: v <= t["iteration_us"]),
        row(f"% of ideal, {c} concurrent runs", pct, ".1f", " %", "≥ 85 %",
            lambda v: v >= t["ideal_pct"]),
        row(f"KiB per concurrent run ({c} runs)", kib, ".2f", " KiB", "≤ 16 KiB",
            lambda v: v <= t["kib_per_run"]),
        row(f"KiB per concurrent run ({n} runs)", sc.get("kb_per_run") if ok else None, ".2f",
            " KiB", "≤ 16 KiB", lambda v: v <= t["kib_per_run"]),
        row(f"{n} runs: throughput vs {c} runs", ratio, ".2f", "x", "≥ 0.85x",
            lambda v: v >= t["scale_ratio"]),
        row(f"{n} runs: time in the garbage collector", gc, ".0f", " % of the wall", "< 15 %",
            lambda v: v < t["gc_share_pct"]),
        row("import reactloop", imp * 1000 if imp else None, ".0f", " ms", "≤ 60 ms",
            lambda v: v <= t["import_ms"]),
        row("reactloop --help", hlp * 1000 if hlp else None, ".0f", " ms", "≤ 150 ms",
            lambda v: v <= t["help_ms"]),
    ]


def extra_lines(res: dict[str, Any]) -> list[str]:
    """One line each for the reactloop-only workloads (4-6) and the CLI."""
    cs = res.get("cold_start", {})
    extra = []
    sc = res.get("scale", {})
    if "error" not in sc and sc:
        extra.append(f"4. scale (reactloop, {sc['n']} concurrent runs): {sc['pct_of_ideal']:.1f} % "
                     f"of ideal, {sc['calls_per_s']:.0f} model calls/s, "
                     f"{sc['kb_per_run']:.1f} KiB per run, peak RSS {sc['peak_rss_kb'] / 1024:.0f} MiB, "
                     f"wall {sc['wall_s']:.1f} s of which {sc['gc_s']:.1f} s in the garbage collector")
    elif sc:
        extra.append(f"4. scale: {sc.get('error')}")
    sa = res.get("scale_async", {})
    if "error" not in sa and sa:
        extra.append(f"   the same, async tool: {sa['pct_of_ideal']:.1f} % of ideal, "
                     f"{sa['calls_per_s']:.0f} model calls/s, {sa['kb_per_run']:.1f} KiB per run, "
                     f"wall {sa['wall_s']:.1f} s of which {sa['gc_s']:.1f} s in the garbage "
                     "collector")
    elif sa:
        extra.append(f"   the same, async tool: {sa.get('error')}")
    px = res.get("prefix_stability", {})
    if px and "error" not in px:
        extra.append(f"5. prefix stability: worst {px['min_share_pct']:.2f} %, mean "
                     f"{px['mean_share_pct']:.2f} % over {px['requests']} requests "
                     f"({'; '.join(px.get('notes', [])) or 'skill loaded, plan updated'})")
    elif px:
        extra.append(f"5. prefix stability: {px.get('error')}")
    em = res.get("embedded", {})
    if em and "error" not in em and "skipped" not in em:
        extra.append(f"6. embedded model: prompt processing per iteration (2-{em['iterations']}) "
                     f"{em['reuse_ms_per_iteration']:.0f} ms with the KV cache reused vs "
                     f"{em['rebuild_ms_per_iteration']:.0f} ms rebuilt ({em['speedup']:.1f}x); "
                     f"tokens evaluated {em['reuse_tokens_per_iteration']:.0f} vs "
                     f"{em['rebuild_tokens_per_iteration']:.0f}")
    elif em:
        extra.append(f"6. embedded model: {em.get('skipped') or em.get('error')}")
    ot = res.get("otel", {})
    if ot and "error" not in ot and "skipped" not in ot:
        off = ot["off_per_iteration_s"] * 1e6
        mem, otlp = ot["memory_per_iteration_s"] * 1e6, ot["otlp_per_iteration_s"] * 1e6
        extra.append(f"7. OpenTelemetry, µs per tool-call iteration: off {off:.0f}, on with the "
                     f"in-memory exporter {mem:.0f} (+{mem - off:.0f}), on with the OTLP "
                     f"exporter {otlp:.0f} (+{otlp - off:.0f}); the SDK's own calls for one "
                     f"iteration (2 spans, 3 histogram points) take "
                     f"{ot['sdk_floor_per_iteration_s'] * 1e6:.0f}")
    elif ot:
        extra.append(f"7. OpenTelemetry: {ot.get('skipped') or ot.get('error')}")
    hlp = cs.get("reactloop --help", {})
    extra.append("   reactloop --help: " + (fmt(hlp.get("s", 0) * 1000, ".0f", " ms") if "s" in hlp
                                             else str(hlp.get("skipped") or hlp.get("error"))))
    return extra


def print_report(res: dict[str, Any]) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # plain text when rich is missing
        Console = Table = None  # type: ignore[assignment,misc]

    m = res["machine"]
    head = (f"{m['date']} · {m['cpu']} · {m['cores']} cores · {m['memory_gib']} GiB · "
            f"Python {m['python']} · reactloop {m['reactloop_commit']}"
            f"{' · QUICK mode' if res['quick'] else ''}")
    ov, cs, cc = res.get("overhead", {}), res.get("cold_start", {}), res.get("concurrency", {})
    cols = ["framework", "version", "run (10 tool calls)", "µs / tool-call iteration",
            "import", f"concurrency ({res['params']['concurrent_runs']} runs) % ideal",
            "KiB / concurrent run"]
    rows = []
    nan = float("nan")
    for fw in res["frameworks"]:
        info = res["frameworks"][fw]
        if info.get("unavailable"):
            rows.append([info["name"], "-", f"unavailable: {info['unavailable']}"[:60], "", "", "",
                         ""])
            continue
        o, c, i = ov.get(fw, {}), cc.get(fw, {}), cs.get(fw, {})
        rows.append([
            info["name"], info.get("version", "?"),
            o.get("error") or fmt(o.get("median_run_s", nan) * 1000, ".2f", " ms"),
            "" if "error" in o else fmt(o.get("per_iteration_s", nan) * 1e6, ".0f"),
            i.get("error") or fmt(i.get("s", nan) * 1000, ".0f", " ms"),
            c.get("error", "")[:40] or fmt(c.get("pct_of_ideal"), ".1f", " %"),
            "" if "error" in c else fmt(c.get("kb_per_run"), ".1f"),
        ])
    extra = extra_lines(res)
    trows = [[a, b, c, check(d)] for a, b, c, d in targets(res)]
    trows28 = [[a, b, c, check(d)] for a, b, c, d in targets_28(res)]
    if Console is not None:
        con = Console(width=160)
        con.print(f"[bold]reactloop benchmarks[/] — {head}")
        t = Table(*cols)
        for r in rows:
            t.add_row(*r)
        con.print(t)
        for e in extra:
            con.print(e)
        tt = Table("target", "measured", "requirement", "status", title="targets (issue 7)")
        for r in trows:
            style = "red" if r[3] == "MISSED" else ("green" if r[3] == "met" else "dim")
            tt.add_row(*r, style=style)
        con.print(tt)
        t28 = Table("target", "measured", "requirement", "status",
                    title="targets (issue 28, async tool)")
        for r in trows28:
            style = "red" if r[3] == "MISSED" else ("green" if r[3] == "met" else "dim")
            t28.add_row(*r, style=style)
        con.print(t28)
    else:
        print(f"reactloop benchmarks — {head}")
        for r in [cols, *rows]:
            print(" | ".join(str(x) for x in r))
        print("\n".join(extra))
        for r in trows + trows28:
            print(" | ".join(r))


def markdown_report(res: dict[str, Any]) -> str:
    """The results as Markdown, for benchmarks/README.md."""
    m = res["machine"]
    load = m.get("load_average_at_start")
    lines = [
        f"Run of {m['date']}{' (--quick)' if res['quick'] else ''}: {m['cpu']}, {m['cores']} "
        f"cores, {m['memory_gib']} GiB, {m['os']}, Python {m['python']}, reactloop commit "
        f"`{m['reactloop_commit']}`"
        + (f", load average at start {load[0]:.2f}" if load else "") + ".",
        "",
        "| framework | version | run (10 tool calls) | µs / tool-call iteration | import | "
        f"concurrency ({res['params']['concurrent_runs']} runs), % of ideal | "
        "KiB / concurrent run |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    ov, cs, cc = res.get("overhead", {}), res.get("cold_start", {}), res.get("concurrency", {})
    nan = float("nan")
    for fw, info in res["frameworks"].items():
        if info.get("unavailable"):
            lines.append(f"| {info['name']} | unavailable: {info['unavailable']} ||||||")
            continue
        o, c, i = ov.get(fw, {}), cc.get(fw, {}), cs.get(fw, {})
        lines.append(" | ".join([
            f"| {info['name']}", info.get("version", "?"),
            fmt(o.get("median_run_s", nan) * 1000, ".2f", " ms"),
            fmt(o.get("per_iteration_s", nan) * 1e6, ".0f"),
            fmt(i.get("s", nan) * 1000, ".0f", " ms"),
            fmt(c.get("pct_of_ideal"), ".1f", " %"),
            fmt(c.get("kb_per_run"), ".1f"),
        ]) + " |")
    lines += ["", *(f"- {e.strip()}" for e in extra_lines(res)), "",
              "| target | measured | requirement | status |", "|---|---:|---|---|"]
    lines += [f"| {t.strip()} | {mm} | {r} | {check(ok)} |" for t, mm, r, ok in targets(res)]
    lines += ["", "| target (issue 28, async tool) | measured | requirement | status |",
              "|---|---:|---|---|"]
    lines += [f"| {t} | {mm} | {r} | {check(ok)} |" for t, mm, r, ok in targets_28(res)]
    return "\n".join(lines) + "\n"


def discover(py_peers: str | None, why: str) -> tuple[dict[str, str], dict[str, Any]]:
    """The interpreter of every framework that can run, and facts about all of them."""
    import importlib

    interpreters: dict[str, str] = {}
    fw_info: dict[str, dict[str, Any]] = {}
    for fw in FRAMEWORKS:
        mod = importlib.import_module(f"frameworks.{fw}_fw")
        info: dict[str, Any] = {"name": mod.NAME, "dist": mod.DIST, "peer": mod.PEER}
        fw_info[fw] = info
        if mod.PEER and py_peers is None:
            info["unavailable"] = why
            continue
        reason = mod.available() if hasattr(mod, "available") else None
        if reason:
            info["unavailable"] = reason
            continue
        py = py_peers if mod.PEER else sys.executable
        v = run_json([py, str(HERE / "worker.py"), "version", fw], timeout=120)
        if "error" in v:
            info["unavailable"] = v["error"]
            continue
        info["version"] = v["version"]
        interpreters[fw] = py
    for info in fw_info.values():
        log(f"{info['name']}: {info.get('version') or info.get('unavailable')}")
    return interpreters, fw_info


# -- main ----------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="smoke run, under 3 minutes")
    p.add_argument("--json", metavar="PATH", help="write all results as JSON")
    p.add_argument("--markdown", metavar="PATH", help="write the tables as Markdown")
    p.add_argument("--from-json", metavar="PATH",
                   help="measure nothing: print (and --markdown) the results of an earlier --json")
    p.add_argument("--no-peers", action="store_true", help="measure reactloop only")
    p.add_argument("--no-install", action="store_true",
                   help="never install the peers; use them only if already installed")
    p.add_argument("--only", nargs="+", metavar="W",
                   choices=["overhead", "cold", "concurrency", "scale", "prefix", "embedded",
                            "otel"],
                   help="run only these workloads")
    p.add_argument("--reps", type=int, help="repetitions per figure (default 5, quick 3)")
    a = p.parse_args(argv)
    if a.from_json:
        old = json.loads(Path(a.from_json).read_text())
        print_report(old)
        if a.markdown:
            Path(a.markdown).write_text(markdown_report(old))
        return 0
    quick = a.quick
    only = set(a.only or ["overhead", "cold", "concurrency", "scale", "prefix", "embedded",
                          "otel"])
    reps = a.reps or (3 if quick else 5)
    params = {
        "reps": reps,
        "overhead_runs": 30 if quick else 200,
        "overhead_warmup": 5 if quick else 20,
        "concurrent_runs": 100 if quick else 1000,
        "concurrency_reps": 2 if quick else 3,
        "scale_runs": 1000 if quick else 10000,
        "delay_s": 0.05,
        "tool_calls_per_run": N_CALLS,
    }
    started = time.monotonic()
    res: dict[str, Any] = {"quick": quick, "params": params, "machine": machine_facts()}

    py_peers, why = (None, "skipped (--no-peers)") if a.no_peers else peers_python(
        install=not a.no_install, timeout=150 if quick else 900)
    interpreters, res["frameworks"] = discover(py_peers, why)

    precompile(interpreters)
    if "overhead" in only:
        res["overhead"] = w_overhead(interpreters, reps, params["overhead_runs"],
                                     params["overhead_warmup"])
    if "cold" in only:
        res["cold_start"] = w_cold_start(interpreters, reps if quick else reps * 2)
    if "concurrency" in only:
        res["concurrency"] = w_concurrency(interpreters, params["concurrency_reps"],
                                           params["concurrent_runs"], params["delay_s"])
    if "scale" in only and "reactloop" in interpreters:
        n = params["scale_runs"]
        log(f"4. scale: reactloop alone, {n} concurrent runs")
        res["scale"], res["scale_async"] = w_scale(n, params["delay_s"], 1 if quick else 3)
    if "prefix" in only:
        log("5. prefix stability (reactloop)")
        res["prefix_stability"] = w_script("prefix.py", [], timeout=300)
    if "embedded" in only:
        log("6. embedded model: KV cache reused vs rebuilt")
        res["embedded"] = w_script("embedded.py", ["--reps", "1" if quick else "3"],
                                   timeout=300 if quick else 900)
    if "otel" in only and "reactloop" in interpreters:
        import importlib.util

        res["otel"] = (w_otel(reps, params["overhead_runs"], params["overhead_warmup"])
                       if importlib.util.find_spec("opentelemetry.sdk") is not None
                       else {"skipped": "OpenTelemetry is missing: pip install 'reactloop[otel]'"})
    res["targets"] = [{"target": t, "measured": m, "requirement": r, "met": ok}
                      for t, m, r, ok in targets(res)]
    res["targets_28"] = [{"target": t, "measured": m, "requirement": r, "met": ok}
                         for t, m, r, ok in targets_28(res)]
    res["elapsed_s"] = round(time.monotonic() - started, 1)
    print_report(res)
    log(f"done in {res['elapsed_s']:.0f} s")
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps(res, indent=2, default=str))
        log(f"wrote {a.json}")
    if a.markdown:
        Path(a.markdown).write_text(markdown_report(res))
    broken = reactloop_failures(res)
    for b in broken:
        log(f"reactloop failed: {b}")
    return 1 if broken else 0


def reactloop_failures(res: dict[str, Any]) -> list[str]:
    """reactloop's own workloads that failed or did not do the expected work (peers failing
    is reported in the table but never fails the command)."""
    out = []
    for workload in ("overhead", "concurrency"):
        r = res.get(workload, {}).get("reactloop")
        if r is not None and ("error" in r or not r.get("work_checked", True)):
            out.append(f"{workload}: {r.get('error') or 'wrong number of model or tool calls'}")
    for workload in ("scale", "prefix_stability", "embedded", "otel"):
        r = res.get(workload)
        if r and "error" in r:
            out.append(f"{workload}: {r['error']}")
    if res.get("otel", {}).get("work_checked") is False:
        out.append("otel: not every span reached its exporter")
    return out


if __name__ == "__main__":
    sys.exit(main())
