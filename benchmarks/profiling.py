"""Where the loop's per-iteration cost goes, in figures that do not jitter with the load.

    python benchmarks/profiling.py [--top 25] [--paths async,sync,inline] [--json]
                                   [--gc-runs 10000]

For the common workload (the model calls ``add(a, b)`` ten times, then answers; a
``FunctionModel`` that answers at once and keeps no requests) with an ``async def`` tool, a
plain sync tool (run on a worker thread) and ``@tool(inline=True)``, each with nobody
listening and with a callback attached (``callbacks=[obj]``, every ``on_*`` method), it
prints:

- **calls / iteration**: Python and C function calls counted by ``cProfile`` in the main
  thread, (calls of runs with 10 tool calls − calls of runs that answer at once) / 10 / runs,
  so the run's fixed set-up drops out; the same for the whole run (``calls / run``);
- the **top functions** of one iteration by calls (and by ``tottime``, for orientation only:
  times are not figures on a loaded machine);
- **allocations / iteration**: memory blocks and bytes allocated during the iteration and
  still alive at the end of the run (``tracemalloc``: the history, steps and results the
  iteration adds; a finished run's result is kept), and the **peak** of transient memory
  above the start of a run;
- **live run**: ``tracemalloc`` bytes and blocks, and objects tracked by the garbage
  collector, per run while N runs wait in their 6th model call at once, and in their last
  (11th, ``/peak``: every run holds its whole history, the moment the peak RSS of
  ``worker.py concurrency`` sees) — the figure behind "KiB per concurrent run", without the
  allocator's and the RSS's rounding nor the fake model's ``asyncio.sleep``;
- **garbage collector** (per path): what the collector sees of a live run
  (:func:`gc_census`: tracked objects per live run, left per iteration, and allocated per
  iteration and still alive at the next model await, i.e. promoted to the oldest generation
  when thousands of runs wait) and its passes while ``--gc-runs`` runs move in lockstep
  (:func:`gc_collections`: collections per generation and the objects the full ones scan),
  the figures behind "time in the garbage collector" at 10,000 runs (``0`` skips them).

Everything here is deterministic for a given commit and Python version (the sync path's
thread hand-off may add a poll of the event loop now and then: ``regression.py`` measures
that noise). Used by ``benchmarks/regression.py`` (the CI check).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import sys
import threading
import tracemalloc
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

N_CALLS = 10
PATHS = ("async", "sync", "inline")
LISTENERS = ("none", "callback")


class Listener:
    """A callback with every method, doing nothing: the cost of being listened to."""

    def on_start(self, event: Any) -> None: ...
    def on_action(self, event: Any) -> None: ...
    def on_observation(self, event: Any) -> None: ...
    def on_step(self, step: Any) -> None: ...
    def on_finish(self, result: Any) -> None: ...
    def on_error(self, error: Any) -> None: ...


def build(path: str, n_calls: int, listener: str = "none", *,
          gate: Callable[[int], Awaitable[None]] | None = None
          ) -> tuple[Callable[[], Awaitable[Any]], Any]:
    """A ``run_once`` for the workload and the agent; ``gate(k)`` (if given) is awaited in
    the model's ``k``-th call of a run (to hold runs mid-way)."""
    from reactloop import Agent, ModelResponse, ToolCall, tool
    from reactloop.testing import FunctionModel

    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: first addend
            b: second addend
        """
        return a + b

    async def add_async(a: int, b: int) -> int:
        return a + b

    add_async.__doc__ = add.__doc__
    add_tool = {"async": lambda: tool(name="add")(add_async),
                "sync": lambda: tool(add),
                "inline": lambda: tool(inline=True)(add)}[path]()

    def answer(request: Any) -> ModelResponse:
        n = (len(request.messages) - 1) // 2  # the prompt, then a call and its result each
        if n < n_calls:
            return ModelResponse(tool_calls=[ToolCall("add", {"a": n, "b": 1})])
        return ModelResponse(text="done")

    async def gated(request: Any) -> ModelResponse:
        assert gate is not None
        await gate((len(request.messages) - 1) // 2)
        return answer(request)

    # keep no requests (they would count as the run's memory)
    try:
        model = FunctionModel(answer if gate is None else gated, keep_requests=False)
    except TypeError:  # a reactloop from before keep_requests (measured side by side)
        model = FunctionModel(answer if gate is None else gated)
        model.requests = _Forget()
    agent = Agent(model=model, tools=[add_tool], max_iterations=n_calls + 5,
                  callbacks=[Listener()] if listener == "callback" else ())

    async def run_once() -> Any:
        result = await agent.run("Add the numbers.")
        assert result.output == "done" and result.metrics.tool_calls == n_calls, result.output
        return result

    return run_once, agent


class _Forget(list):  # type: ignore[type-arg]
    """A list that keeps nothing (``FunctionModel.requests`` of an older reactloop)."""

    def append(self, item: Any) -> None:
        pass


_thread_calls = [0, 0]
"""Calls counted in threads other than the main one (sync tools' workers), and whether to."""


def _count_thread_calls(frame: Any, event: str, arg: Any) -> None:
    if _thread_calls[1] and event in ("call", "c_call"):
        _thread_calls[0] += 1  # not atomic, but one worker runs at a time here


threading.setprofile(_count_thread_calls)  # every thread started from now on


def _profile(once: Callable[[], Awaitable[Any]], runs: int) -> dict[str, tuple[int, float]]:
    """Calls and own time per function over ``runs`` runs (after a warm-up); the calls made
    in other threads (sync tools' workers) under ``"(worker threads)"``."""
    async def go() -> None:
        for _ in range(3):  # warm-up: caches, the worker thread, lazy imports
            await once()
        gc.collect()
        prof = cProfile.Profile()
        _thread_calls[:] = [0, 1]
        prof.enable()
        for _ in range(runs):
            await once()
        prof.disable()
        _thread_calls[1] = 0
        holder.append(_by_function(prof))
        holder[0]["(worker threads)"] = (_thread_calls[0], 0.0)

    holder: list[dict[str, tuple[int, float]]] = []
    asyncio.run(go())
    return holder[0]


def _by_function(prof: cProfile.Profile) -> dict[str, tuple[int, float]]:
    """The profiler's raw entries, one per code object (``pstats`` would merge, e.g., every
    dataclass's generated ``__init__`` into one ``<string>:2`` line and keep only one)."""
    names = _generated_names()
    out: dict[str, tuple[int, float]] = {}
    for entry in prof.getstats():
        code = entry.code
        if isinstance(code, str):
            label = code
        else:
            where = code.co_filename.rsplit("/src/", 1)[-1].rsplit("/lib/python", 1)[-1]
            where = where.rsplit("/benchmarks/", 1)[-1]
            label = names.get(code) or f"{where}:{code.co_firstlineno}({code.co_qualname})"
        nc, tt = out.get(label, (0, 0.0))
        out[label] = (nc + entry.callcount, tt + entry.inlinetime)
    return out


def _generated_names() -> dict[Any, str]:
    """Generated methods (dataclasses' ``__init__``…) named after their class."""
    names: dict[Any, str] = {}
    for mod_name, mod in list(sys.modules.items()):
        if not mod_name.startswith("reactloop") or mod is None:
            continue
        for cls in list(vars(mod).values()):
            if not isinstance(cls, type):
                continue
            for attr, fn in vars(cls).items():
                code = getattr(fn, "__code__", None)
                if code is not None and code.co_filename.startswith("<"):
                    names[code] = f"{cls.__module__}.{cls.__qualname__}.{attr} (generated)"
    return names


def calls(path: str, listener: str = "none", runs: int = 20, n_calls: int = N_CALLS
          ) -> dict[str, Any]:
    """Function calls per iteration and per run, and the functions of one iteration."""
    with_tools = _profile(build(path, n_calls, listener)[0], runs)
    answer = _profile(build(path, 0, listener)[0], runs)
    a, b = with_tools, answer
    per_iter = {}
    for key, (nc, tt) in a.items():
        nc0, tt0 = b.get(key, (0, 0.0))
        if nc != nc0:
            per_iter[key] = ((nc - nc0) / runs / n_calls, (tt - tt0) / runs / n_calls)
    threads = a.pop("(worker threads)")[0] - b.pop("(worker threads)")[0]
    total_a = sum(nc for nc, _ in a.values())
    total_b = sum(nc for nc, _ in b.values())
    return {"calls_per_iteration": (total_a - total_b) / runs / n_calls,
            "thread_calls_per_iteration": threads / runs / n_calls,
            "calls_per_run": total_a / runs, "calls_answer_only_run": total_b / runs,
            "functions": per_iter}


def allocations(path: str, listener: str = "none", runs: int = 10, n_calls: int = N_CALLS
                ) -> dict[str, float]:
    """tracemalloc: blocks and bytes an iteration leaves alive in the run's result, and the
    peak of transient memory per run."""
    async def kept(once: Callable[[], Awaitable[Any]]) -> tuple[int, int, int]:
        for _ in range(3):
            await once()
        gc.collect()
        results = []
        tracemalloc.start()
        try:
            base = tracemalloc.take_snapshot()
            tracemalloc.reset_peak()
            start = tracemalloc.get_traced_memory()[0]
            peak = 0
            for _ in range(runs):
                results.append(await once())
                peak = max(peak, tracemalloc.get_traced_memory()[1] - start)
                tracemalloc.reset_peak()
                start = tracemalloc.get_traced_memory()[0]
            gc.collect()
            snap = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        diff = snap.compare_to(base, "filename")
        return (sum(d.size_diff for d in diff), sum(d.count_diff for d in diff), peak)

    def measure(n: int) -> tuple[int, int, int]:
        holder: list[tuple[int, int, int]] = []

        async def go() -> None:
            holder.append(await kept(build(path, n, listener)[0]))

        asyncio.run(go())
        return holder[0]

    size, count, peak = measure(n_calls)
    size0, count0, peak0 = measure(0)
    return {"kept_bytes_per_iteration": (size - size0) / runs / n_calls,
            "kept_blocks_per_iteration": (count - count0) / runs / n_calls,
            "kept_bytes_per_run": size / runs, "kept_blocks_per_run": count / runs,
            "peak_bytes_per_run": peak, "peak_bytes_answer_only_run": peak0}


def live_runs(path: str = "async", n: int = 200, at: int = 5) -> dict[str, float]:
    """Memory and GC-tracked objects per run while ``n`` runs wait in the model call that
    follows their ``at``-th tool result (their histories are that long)."""
    async def go() -> dict[str, float]:
        release, all_in = asyncio.Event(), asyncio.Event()
        arrived = [0, 0]  # runs waiting, runs to wait for (0: let them through)

        async def gate(k: int) -> None:
            if k == at and arrived[1]:
                arrived[0] += 1
                if arrived[0] == arrived[1]:
                    all_in.set()
                await release.wait()

        once, _agent = build(path, N_CALLS, gate=gate)
        for _ in range(3):  # warm-up
            await once()
        gc.collect()
        tracked0 = len(gc.get_objects())
        tracemalloc.start()
        try:
            before = tracemalloc.take_snapshot()
            arrived[1] = n
            tasks = [asyncio.ensure_future(once()) for _ in range(n)]
            await all_in.wait()
            gc.collect()
            # counted before the snapshot: its own trace tuples would count as the runs'
            tracked = len(gc.get_objects()) - tracked0
            after = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        release.set()
        await asyncio.gather(*tasks)
        diff = after.compare_to(before, "filename")
        return {"runs": n, "at": at, "bytes_per_live_run": sum(d.size_diff for d in diff) / n,
                "blocks_per_live_run": sum(d.count_diff for d in diff) / n,
                "gc_tracked_per_live_run": tracked / n}

    return asyncio.run(go())


def _tracked_by_type(objs: list[Any]) -> Counter[str]:
    return Counter(type(o).__qualname__ for o in objs)


def gc_census(path: str = "async", n: int = 200, at: int = 5) -> dict[str, Any]:
    """What the collector sees of a live run, counted (not timed): while ``n`` runs wait in
    the model call after their ``at``-th tool result, and again one iteration later.

    - ``tracked_per_live_run``: GC-tracked objects per waiting run (the long-lived total a
      full collection scans);
    - ``left_per_iteration``: how many more each run holds one iteration later (its history);
    - ``promoted_per_iteration``: objects allocated during that iteration and still alive at
      the next model await — with thousands of runs waiting, every one of them outlives the
      young generations and lands in the oldest (a full collection runs once those exceed a
      quarter of the long-lived total). Counted by identity while the first census's
      objects are kept referenced, so no id is reused; the fake model's gate (a coroutine, a
      future and the task's wake-up callback) is included, as ``asyncio.sleep``'s would be.
    """
    async def census(keep: bool) -> tuple[int, Counter[str], Counter[str], Counter[str]]:
        releases = {at: asyncio.Event(), at + 1: asyncio.Event()}
        arrivals = {at: asyncio.Event(), at + 1: asyncio.Event()}
        count = dict.fromkeys(releases, 0)
        on = [False]

        async def gate(k: int) -> None:
            if on[0] and k in releases:
                count[k] += 1
                if count[k] == n:
                    arrivals[k].set()
                await releases[k].wait()

        once, _agent = build(path, N_CALLS, gate=gate)
        for _ in range(3):  # warm-up
            await once()
        gc.collect()
        base = len(gc.get_objects())
        on[0] = True
        tasks = [asyncio.ensure_future(once()) for _ in range(n)]
        snaps = []
        for k in (at, at + 1):
            await arrivals[k].wait()
            gc.collect()
            snaps.append(gc.get_objects())
            if not keep:
                counted = _tracked_by_type(snaps[-1])
                snaps[-1] = counted  # type: ignore[call-overload]
            releases[k].set()
        await asyncio.gather(*tasks)
        if keep:
            old = {id(o) for o in snaps[0]}
            new = _tracked_by_type([o for o in snaps[1] if id(o) not in old])
            return base, Counter(), Counter(), new
        return base, snaps[0], snaps[1], Counter()  # type: ignore[arg-type]

    base, first, second, _ = asyncio.run(census(False))
    new = asyncio.run(census(True))[3]
    left = second - first
    return {"runs": n, "tracked_per_live_run": (sum(first.values()) - base) / n,
            "left_per_iteration": (sum(second.values()) - sum(first.values())) / n,
            "promoted_per_iteration": sum(new.values()) / n,
            "left_by_type": {t: c / n for t, c in left.most_common() if c >= n // 20},
            "promoted_by_type": {t: c / n for t, c in new.most_common() if c >= n // 20}}


class Lockstep:
    """A fake model's wait in which ``n`` runs move together, as with a fixed delay on a fast
    machine: every call waits (on a future of its own, as ``asyncio.sleep`` would) until
    every unfinished run waits, then all go on. Deterministic, unlike a delay under load."""

    def __init__(self, n: int) -> None:
        self.active, self.waiting = n, []  # type: list[asyncio.Future[None]]

    async def __call__(self, k: int) -> None:
        fut = asyncio.get_running_loop().create_future()
        self.waiting.append(fut)
        self._maybe_release()
        await fut

    def finished(self) -> None:
        self.active -= 1
        self._maybe_release()

    def _maybe_release(self) -> None:
        if self.waiting and len(self.waiting) >= self.active:
            waiting, self.waiting = self.waiting, []
            for fut in waiting:
                fut.set_result(None)


def gc_collections(path: str = "async", n: int = 10_000) -> dict[str, Any]:
    """The collector's passes per generation (``gc.get_stats()``), with the default GC
    settings, while ``n`` runs of the workload (11 model calls) run concurrently in lockstep
    (:class:`Lockstep`): allocation-driven, so the same for a commit whatever the load. The
    full (generation 2) collections are the ones whose cost grows with the number of runs:
    ``gen2_scanned_per_run`` adds up the tracked objects each of them walks (the figure
    behind the collector's time at 10,000 runs), per run."""
    async def go() -> list[dict[str, int]]:
        step = Lockstep(n)
        once, _agent = build(path, N_CALLS, gate=step)
        step.active = 1
        for _ in range(3):  # warm-up
            await once()
            step.active = 1
        step.active = n

        async def one() -> None:
            try:
                await once()
            finally:
                step.finished()

        gc.collect()
        gc.callbacks.append(count)
        before = gc.get_stats()
        try:
            await asyncio.gather(*(one() for _ in range(n)))
        finally:
            after = gc.get_stats()
            gc.callbacks.remove(count)
        return [{k: a[k] - b[k] for k in a} for a, b in zip(after, before, strict=True)]

    scanned = [0]

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            scanned[0] += len(gc.get_objects())

    stats = asyncio.run(go())
    return {"runs": n, "gen0": stats[0]["collections"], "gen1": stats[1]["collections"],
            "gen2": stats[2]["collections"], "gen2_scanned_per_run": scanned[0] / n,
            "collected": sum(s["collected"] for s in stats)}


def report(paths: tuple[str, ...], top: int, gc_runs: int = 10_000) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path in paths:
        for listener in LISTENERS:
            c = calls(path, listener)
            out[f"{path}/{listener}"] = {**c, **allocations(path, listener)}
        out[f"{path}/live"] = live_runs(path)
        out[f"{path}/peak"] = live_runs(path, at=N_CALLS)  # the last model call
        if gc_runs:
            out[f"{path}/gc"] = {**gc_census(path), **gc_collections(path, gc_runs)}
    return out


def print_report(out: dict[str, Any], top: int) -> None:
    for key, v in out.items():
        if key.endswith("/gc"):
            print(f"\n== {key}: {v['tracked_per_live_run']:.1f} GC-tracked objects per live "
                  f"run, {v['left_per_iteration']:.2f} more per iteration, "
                  f"{v['promoted_per_iteration']:.2f} allocated per iteration and alive at "
                  f"the next model await; {v['runs']} runs in lockstep: "
                  f"{v['gen0']}/{v['gen1']}/{v['gen2']} collections (generation 0/1/2), "
                  f"{v['gen2_scanned_per_run']:.0f} objects per run scanned by full ones")
            print("   promoted per iteration: " + ", ".join(
                f"{t} {c:.2f}" for t, c in v["promoted_by_type"].items()))
            continue
        if key.endswith(("/live", "/peak")):
            print(f"\n== {key}: {v['bytes_per_live_run'] / 1024:.2f} KiB "
                  f"({v['bytes_per_live_run']:.0f} B), {v['blocks_per_live_run']:.0f} blocks, "
                  f"{v['gc_tracked_per_live_run']:.0f} GC-tracked objects per live run "
                  f"({v['runs']} runs waiting in model call {v['at'] + 1} of {N_CALLS + 1})")
            continue
        print(f"\n== {key}: {v['calls_per_iteration']:.1f} calls / iteration "
              f"(+ {v['thread_calls_per_iteration']:.1f} in worker threads), "
              f"{v['calls_per_run']:.0f} / run ({v['calls_answer_only_run']:.0f} answering "
              f"at once); kept per iteration {v['kept_blocks_per_iteration']:.1f} blocks, "
              f"{v['kept_bytes_per_iteration']:.0f} B; peak {v['peak_bytes_per_run']} B / run")
        fns = sorted(v["functions"].items(), key=lambda kv: (-kv[1][0], kv[0]))
        print("   calls/it  tottime µs/it  function")
        for name, (nc, tt) in fns[:top]:
            print(f"   {nc:8.1f}  {tt * 1e6:13.2f}  {name}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--paths", default=",".join(PATHS))
    p.add_argument("--json", action="store_true")
    p.add_argument("--gc-runs", type=int, default=10_000,
                   help="runs in lockstep for the collector's passes (0: skip the GC figures)")
    a = p.parse_args(argv)
    out = report(tuple(a.paths.split(",")), a.top, a.gc_runs)
    if a.json:
        for v in out.values():
            v.pop("functions", None)
        print(json.dumps(out))
    else:
        print_report(out, a.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
