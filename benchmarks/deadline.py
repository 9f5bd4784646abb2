"""How long ``run_sync`` takes to return when a sync tool blocks past the run's deadline.

The scripted model calls one sync tool that sleeps ``--sleep`` seconds (default 10); the agent
has ``max_execution_time=--limit`` (default 3), and a second case uses ``tool_timeout=--limit``
instead (the model then answers). Each case runs in a fresh interpreter, so the figures also
show when the *process* can exit while the tool's thread still sleeps:

- ``run_sync``: seconds from the call to its return (should be about ``--limit``);
- ``process``: seconds from starting the child interpreter to its exit (start-up and
  ``import reactloop``, the run, interpreter shutdown): never ``--sleep`` or more.

Usage: python benchmarks/deadline.py [--limit 3] [--sleep 10] [--json PATH]
A functional check more than a performance figure: on a loaded machine the times stretch, but a
returned-at-the-deadline run stays far from the tool's duration.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

CHILD = """
import json, sys, time
from reactloop import Agent, ToolCall
from reactloop.testing import ScriptedModel

def slow() -> str:
    \"\"\"Sleep, then answer.\"\"\"
    time.sleep({sleep})
    return "woke up"

setting = {{"{setting}": {limit}}}
agent = Agent(model=ScriptedModel([ToolCall("slow", {{}}), "answered without the tool"]),
              tools=[slow], **setting)
start = time.perf_counter()
result = agent.run_sync("go")
took = time.perf_counter() - start
print(json.dumps({{"state": result.state.value, "run_sync": took}}), flush=True)
"""


def measure(setting: str, limit: float, sleep: float) -> dict[str, Any]:
    """One case in a fresh interpreter: ``run_sync``'s time and the process's."""
    code = CHILD.format(setting=setting, limit=limit, sleep=sleep)
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=max(120.0, 4 * sleep), check=False)
    total = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{setting}: the child failed ({proc.returncode}): {proc.stderr}")
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    out.update(setting=setting, limit=limit, sleep=sleep, process=total)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=float, default=3.0, help="deadline / tool timeout, s")
    parser.add_argument("--sleep", type=float, default=10.0, help="how long the tool sleeps, s")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    rows = [measure(s, args.limit, args.sleep) for s in ("max_execution_time", "tool_timeout")]
    print(f"a sync tool sleeps {args.sleep:g} s; limit {args.limit:g} s")
    print(f"{'setting':<20} {'state':<10} {'run_sync s':>10} {'process s':>10}")
    for r in rows:
        print(f"{r['setting']:<20} {r['state']:<10} {r['run_sync']:>10.2f} {r['process']:>10.2f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    late = [r for r in rows if r["process"] >= args.sleep]
    return 1 if late else 0  # the run or the process waited for the tool


if __name__ == "__main__":
    sys.exit(main())
