"""Embedded model: prompt processing per iteration with llama.cpp's KV cache reused vs rebuilt.

A 6-iteration reactloop run on the real embedded model (``reactloop.models.local.LocalModel``,
SmolLM2-135M-Instruct). The model really generates every reply; iterations 1-5 are asked for a
tool call (``tool_choice="required"``, so the run has a fixed shape) and iteration 6 is the
forced answer. Each run is done twice on the same loaded model:

- **reused**: as reactloop runs normally; llama.cpp keeps the evaluated tokens and only
  processes what the new request adds after the longest common prefix;
- **rebuilt**: ``Llama.reset()`` before every model call, so the whole prompt is processed.

Prompt-processing time is the duration of the first ``Llama.eval`` of each completion (the
prompt; later evals decode one token each). Both modes start their run from an empty cache.

    python benchmarks/embedded.py [--reps 3] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

ITERATIONS = 6


def unavailable() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (pip install 'reactloop[local]')"
    try:
        from reactloop.models.local import LocalModel  # noqa: F401
    except ImportError as exc:
        return f"reactloop.models.local is not available ({exc})"
    return None


class Probe:
    """Wraps a LocalModel: forces the run's shape and times prompt evaluation."""

    def __init__(self, inner: Any) -> None:
        from reactloop import Model

        self.inner = inner
        self.llm = inner._load()  # we poke llama.cpp directly: benchmark-only
        self.rebuild = False
        self.records: list[dict[str, Any]] = []
        self._first = False
        original = self.llm.eval

        def timed_eval(tokens: Sequence[int]) -> Any:
            if not self._first:
                return original(tokens)
            self._first = False
            t = time.perf_counter()
            out = original(tokens)
            self.records.append({"tokens": len(tokens), "ms": (time.perf_counter() - t) * 1000})
            return out

        self.llm.eval = timed_eval
        probe = self

        class Wrapped(Model):
            name = inner.name
            context_window = inner.context_window

            async def request(self, request: Any) -> Any:
                if request.tools:
                    request = request.with_settings(tool_choice="required")
                if probe.rebuild:
                    probe.llm.reset()
                probe._first = True
                return await inner.request(request)

        self.model = Wrapped()

    async def run(self, rebuild: bool) -> list[dict[str, Any]]:
        from reactloop import Agent, ModelSettings, tool

        @tool
        def add(a: int, b: int) -> int:
            """Add two integers.

            Args:
                a: first addend
                b: second addend
            """
            return a + b

        self.rebuild = rebuild
        self.records = []
        self.llm.reset()  # both modes start from an empty cache
        agent = Agent(model=self.model, tools=[add], max_iterations=ITERATIONS,
                      model_settings=ModelSettings(max_tokens=96))
        result = await agent.run("Add 2 and 3, then add 4 to the result, and keep going.")
        if result.metrics.iterations != ITERATIONS:
            raise RuntimeError(f"expected {ITERATIONS} iterations, got "
                               f"{result.metrics.iterations} ({result.state})")
        return self.records


async def measure(reps: int) -> dict[str, Any]:
    from reactloop.models.local import LocalModel

    t = time.perf_counter()
    probe = Probe(LocalModel())
    load_s = time.perf_counter() - t
    await probe.run(rebuild=False)  # warm-up
    reuse: list[list[dict[str, Any]]] = []
    rebuild: list[list[dict[str, Any]]] = []
    for _ in range(reps):
        reuse.append(await probe.run(rebuild=False))
        rebuild.append(await probe.run(rebuild=True))

    def per_iteration(runs: list[list[dict[str, Any]]], key: str) -> list[float]:
        n = min(len(r) for r in runs)
        return [statistics.median(r[i][key] for r in runs) for i in range(n)]

    out = {
        "model": probe.inner.name,
        "load_s": load_s,
        "reps": reps,
        "iterations": ITERATIONS,
        "reuse_ms": per_iteration(reuse, "ms"),
        "rebuild_ms": per_iteration(rebuild, "ms"),
        "reuse_tokens": per_iteration(reuse, "tokens"),
        "rebuild_tokens": per_iteration(rebuild, "tokens"),
    }
    # iteration 1 is a full evaluation in both modes; the figure is iterations 2..6
    for mode in ("reuse", "rebuild"):
        out[f"{mode}_ms_per_iteration"] = statistics.mean(out[f"{mode}_ms"][1:])
        out[f"{mode}_tokens_per_iteration"] = statistics.mean(out[f"{mode}_tokens"][1:])
    out["speedup"] = out["rebuild_ms_per_iteration"] / out["reuse_ms_per_iteration"]
    await probe.inner.aclose()
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    why = unavailable()
    if why:
        out: dict[str, Any] = {"skipped": why}
    else:
        try:
            out = asyncio.run(measure(a.reps))
        except Exception as exc:  # the model is being built right now: report, don't crash
            out = {"error": f"{type(exc).__name__}: {exc}"}
    if a.json:
        print(json.dumps(out))
    elif "reuse_ms" in out:
        print(f"{out['model']}, {out['iterations']} iterations, median of {out['reps']} runs")
        print("iteration  reused: tokens   ms   rebuilt: tokens   ms")
        for i in range(len(out["reuse_ms"])):
            print(f"{i + 1:9d}  {out['reuse_tokens'][i]:14.0f} {out['reuse_ms'][i]:5.0f}  "
                  f"{out['rebuild_tokens'][i]:15.0f} {out['rebuild_ms'][i]:5.0f}")
        print(f"iterations 2-{out['iterations']}: {out['reuse_ms_per_iteration']:.0f} ms reused vs "
              f"{out['rebuild_ms_per_iteration']:.0f} ms rebuilt ({out['speedup']:.1f}x)")
    else:
        print(out.get("skipped") or out.get("error"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
