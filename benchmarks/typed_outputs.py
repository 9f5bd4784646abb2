"""Typed outputs on the embedded model: how often ``Agent(output_type=T)`` gives a valid ``T``.

For each of a dozen small schemas (a pydantic model, a dataclass, a TypedDict, primitives,
lists, a Literal, a union, a nested model, an optional field) the real embedded model
(SmolLM2-135M-Instruct through ``reactloop.models.local.LocalModel``) answers a question whose
answer is in the prompt. Two rates per mode:

- **valid**: the run ended with ``result.output`` a validated ``T`` (within the default
  ``output_retries=2``);
- **correct**: that value also holds the expected facts (a small check per case).

``native`` is the default for the embedded model (a grammar built from the schema, so the
answer is valid by construction); ``prompted`` (the schema in the prompt, no grammar) shows
what the grammar buys. Greedy decoding (temperature 0): the figures are reproducible.

    python benchmarks/typed_outputs.py [--modes native,prompted] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import importlib.util
import json
import sys
import time
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel
from typing_extensions import TypedDict


class City(BaseModel):
    name: str
    country: str


class Person(BaseModel):
    name: str
    age: int


@dataclasses.dataclass
class Point:
    x: float
    y: float


class Book(TypedDict):
    title: str
    year: int


class Cat(BaseModel):
    animal: Literal["cat"]
    lives: int


class Dog(BaseModel):
    animal: Literal["dog"]
    breed: str


class Address(BaseModel):
    city: str


class Order(BaseModel):
    item: str
    quantity: int
    address: Address


class Contact(BaseModel):
    name: str
    email: str | None


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    output_type: Any
    prompt: str
    correct: Callable[[Any], bool]


CASES: tuple[Case, ...] = (
    Case("model", City, "Paris is the capital of France. Give the city and its country.",
         lambda v: v.name == "Paris" and v.country == "France"),
    Case("model with int", Person, "Ada is 36 years old. Give her name and age.",
         lambda v: v.name == "Ada" and v.age == 36),
    Case("dataclass", Point, "The point is at x = 3 and y = 4. Give its coordinates.",
         lambda v: (v.x, v.y) == (3, 4)),
    Case("TypedDict", Book, "The novel Dune was published in 1965. Give its title and year.",
         lambda v: v["title"] == "Dune" and v["year"] == 1965),
    Case("int", int, "Tom has 7 apples. How many apples does Tom have?", lambda v: v == 7),
    Case("bool", bool, "Paris is in France. Is Paris in France? Answer true or false.",
         lambda v: v is True),
    Case("list[int]", list[int], "List the numbers one, two and three.",
         lambda v: v == [1, 2, 3]),
    Case("list[str]", list[str], "The tags are python, agents and llm. List the tags.",
         lambda v: [t.lower() for t in v] == ["python", "agents", "llm"]),
    Case("Literal", Literal["positive", "negative"],
         "Review: 'I love this product, it is great!' Is the review positive or negative?",
         lambda v: v == "positive"),
    Case("union", Cat | Dog, "My pet is a cat with 9 lives. Describe my pet.",
         lambda v: isinstance(v, Cat) and v.lives == 9),
    Case("nested model", Order, "Send 3 books to Berlin. Give the item, quantity and address.",
         lambda v: v.quantity == 3 and "book" in v.item.lower()
         and v.address.city == "Berlin"),
    Case("optional field", Contact, "Contact: Bob, email bob@example.com. Give the contact.",
         lambda v: v.name == "Bob" and v.email == "bob@example.com"),
)


def unavailable() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (pip install 'reactloop[local]')"
    return None


async def run_case(model: Any, case: Case, mode: str) -> dict[str, Any]:
    from reactloop import Agent

    agent = Agent(model=model, output_type=case.output_type, output_mode=mode,  # type: ignore[arg-type]
                  max_iterations=2)
    started = time.perf_counter()
    result = await agent.run(case.prompt)
    seconds = time.perf_counter() - started
    valid = result.output is not None and result.error is None
    try:
        correct = valid and bool(case.correct(result.output))
    except Exception:  # a check that trips over an odd value counts as wrong
        correct = False
    attempts = 1 + sum(1 for m in result.messages if "output_errors" in m.metadata)
    return {"case": case.name, "mode": mode, "valid": valid, "correct": correct,
            "attempts": attempts, "seconds": round(seconds, 2), "state": result.state.value,
            "answer": result.text[:120]}


async def measure(modes: list[str]) -> list[dict[str, Any]]:
    from reactloop.models.local import LocalModel

    model = LocalModel()
    rows = []
    try:
        for mode in modes:
            for case in CASES:
                rows.append(await run_case(model, case, mode))
    finally:
        await model.aclose()
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for mode in dict.fromkeys(r["mode"] for r in rows):
        mine = [r for r in rows if r["mode"] == mode]
        out[mode] = {"cases": len(mine),
                     "valid_rate": sum(r["valid"] for r in mine) / len(mine),
                     "correct_rate": sum(r["correct"] for r in mine) / len(mine),
                     "first_try_rate": sum(r["valid"] and r["attempts"] == 1
                                           for r in mine) / len(mine),
                     "mean_seconds": sum(r["seconds"] for r in mine) / len(mine)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="native",
                        help="comma-separated output modes (native, prompted, tool)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    reason = unavailable()
    if reason:
        print(f"skipped: {reason}", file=sys.stderr)
        return 0
    rows = asyncio.run(measure([m.strip() for m in args.modes.split(",") if m.strip()]))
    totals = summary(rows)
    if args.json:
        print(json.dumps({"rows": rows, "summary": totals}, indent=2))
        return 0
    print(f"{'case':16} {'mode':9} {'valid':>5} {'correct':>7} {'tries':>5} {'s':>6}  answer")
    for r in rows:
        print(f"{r['case']:16} {r['mode']:9} {'yes' if r['valid'] else 'NO':>5} "
              f"{'yes' if r['correct'] else 'no':>7} {r['attempts']:>5} {r['seconds']:>6.1f}  "
              f"{r['answer']}")
    for mode, t in totals.items():
        print(f"{mode}: valid {t['valid_rate']:.0%} ({t['first_try_rate']:.0%} at the first "
              f"try), correct {t['correct_rate']:.0%} of {t['cases']:.0f} schemas, "
              f"{t['mean_seconds']:.1f} s per run")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
