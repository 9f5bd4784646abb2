"""Prefix stability: how much of each request is byte-identical to the start of the next one.

Provider prompt caches (OpenAI, Anthropic, Gemini) and llama.cpp's KV cache reuse exactly the
longest common prefix of consecutive requests, so this is the share of every request that
does not have to be processed again. Over a 10-iteration reactloop run with a skill loaded and
a plan updated, each request is serialized the way an OpenAI-style adapter sends it — tools,
system prompt, messages, then the volatile notes last — and compared with the next request.

    python benchmarks/prefix.py           # a readable report
    python benchmarks/prefix.py --json    # one JSON object (used by run.py)

Features that do not exist yet in the installed reactloop (``Agent(skills=...)``,
``Agent(planning=True)``) are detected and left out, with a note in the output.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import itertools
import json
import sys
import tempfile
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ITERATIONS = 10

SKILL_MD = """\
---
name: unit-converter
description: Convert between units of length, mass and temperature, and add numbers up. Use it for any question about units or sums.
---
# Unit converter

Work through conversions step by step:

1. Identify the quantity and the unit it is given in.
2. Convert to the base unit (metre, kilogram, kelvin) first, then to the unit asked for.
3. For sums, call the `add` tool once per pair of numbers; never add in your head.
4. Report the result with its unit and at most three decimals.

Common factors: 1 inch = 0.0254 m; 1 foot = 0.3048 m; 1 mile = 1609.344 m;
1 pound = 0.45359237 kg; 1 ounce = 0.028349523125 kg; °F = °C × 9/5 + 32.

See references/factors.md for the full table.
"""

SKILL_TOOLS = '''\
from reactloop import tool


@tool
def convert_length(value: float, unit_from: str, unit_to: str) -> float:
    """Convert a length between m, cm, km, in, ft and mi.

    Args:
        value: the length
        unit_from: its unit
        unit_to: the unit wanted
    """
    f = {"m": 1.0, "cm": 0.01, "km": 1000.0, "in": 0.0254, "ft": 0.3048, "mi": 1609.344}
    return value * f[unit_from] / f[unit_to]
'''


def make_skill(root: Path, with_tools: bool) -> Path:
    folder = root / "unit-converter"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD)
    (folder / "references" / "factors.md").write_text("| unit | metres |\n| in | 0.0254 |\n")
    if with_tools:
        (folder / "tools.py").write_text(SKILL_TOOLS)
    return root


# -- the serializer: an OpenAI chat-completions style request, notes last ----------------------
def _tool_json(spec: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": spec.name, "description": spec.description,
                                             "parameters": dict(spec.parameters)}}


def _message_json(m: Any) -> dict[str, Any]:
    if m.role == "assistant" and m.tool_calls:
        return {"role": "assistant", "content": m.content or None, "tool_calls": [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": json.dumps(dict(c.arguments))}}
            for c in m.tool_calls]}
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content}
    return {"role": m.role, "content": m.content}


def serialize_parts(request: Any) -> list[tuple[str, bytes]]:
    """The request as labelled byte chunks in wire order: tools, system, messages, notes.

    The tool list is the run's declared list (``all_tools``): an adapter that can restrict the
    choice with ``tool_choice`` sends it unchanged on the forced last iteration too."""
    tools = getattr(request, "all_tools", None) or request.tools
    parts = [(f"tool {t.name}", json.dumps(_tool_json(t), ensure_ascii=False)) for t in tools]
    parts.append(("system", json.dumps({"role": "system", "content": request.system},
                                       ensure_ascii=False)))
    parts += [(f"message {i} ({m.role})", json.dumps(_message_json(m), ensure_ascii=False))
              for i, m in enumerate(request.messages)]
    if request.notes:
        parts.append(("notes", json.dumps({"role": "user", "content": "\n\n".join(request.notes)},
                                          ensure_ascii=False)))
    return [(label, (text + "\n").encode()) for label, text in parts]


def serialize(request: Any) -> bytes:
    return b"".join(chunk for _, chunk in serialize_parts(request))


def serialize_with_adapter(request: Any) -> bytes | None:
    """The same order (tools, then messages) from reactloop's own OpenAI adapter's payload, as
    a cross-check of the serializer above; None when this reactloop has no such adapter.
    ``tool_choice`` is a request parameter, not prompt text, so it is left out."""
    try:
        from reactloop.models.openai import build_params
    except ImportError:
        return None
    params = build_params(request, "benchmark")
    lines = [json.dumps(t, ensure_ascii=False) for t in params.get("tools", ())]
    lines += [json.dumps(m, ensure_ascii=False) for m in params["messages"]]
    return "".join(line + "\n" for line in lines).encode()


def common_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n  # binary search on equal prefixes: fast for long requests
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def where(request: Any, offset: int) -> str:
    """The label of the chunk holding byte ``offset`` of the serialized request."""
    pos = 0
    for label, chunk in serialize_parts(request):
        if offset < pos + len(chunk):
            return label
        pos += len(chunk)
    return "end"


# -- the run ---------------------------------------------------------------------------------------
def synth(schema: Mapping[str, Any], defs: Mapping[str, Any] | None = None) -> Any:
    """A small valid instance of a JSON schema (for tools whose arguments we don't know)."""
    defs = {**(defs or {}), **schema.get("$defs", {})}
    if "$ref" in schema:
        return synth(defs[schema["$ref"].split("/")[-1]], defs)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return synth(schema[key][0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type", "string")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: synth(v, defs) for k, v in props.items()
                if k in schema.get("required", props)}
    if kind == "array":
        return [synth(schema.get("items", {}), defs) for _ in range(2)]
    return {"integer": 1, "number": 1.5, "boolean": True}.get(kind, "convert 3 miles to km")


class Script:
    """The model's moves: load the skill, update the plan, then tool calls, then answer."""

    def __init__(self) -> None:
        self.requests: list[Any] = []
        self.loaded = self.planned = 0
        self.plan_calls = 0

    def __call__(self, request: Any) -> Any:
        from reactloop import ModelResponse, ToolCall

        self.requests.append(request)
        names = {t.name: t for t in request.tools}
        k = len(self.requests)
        plan_tool = next((n for n in names if "plan" in n), None)
        if "load_skill" in names and not self.loaded:
            self.loaded = 1
            return ModelResponse(tool_calls=[ToolCall("load_skill", {"name": "unit-converter"})])
        if plan_tool and self.plan_calls < 2 and k in (2, 6):
            self.plan_calls += 1
            args = synth(names[plan_tool].parameters)
            return ModelResponse(text="Planning.", tool_calls=[ToolCall(plan_tool, args)])
        if not request.tools:  # the forced last iteration
            return ModelResponse(text="3 miles is 4.828 km.")
        if "convert_length" in names and k == 4:
            return ModelResponse(tool_calls=[ToolCall(
                "convert_length", {"value": 3, "unit_from": "mi", "unit_to": "km"})])
        return ModelResponse(tool_calls=[ToolCall("add", {"a": k, "b": 1})])


async def measure(with_skill_tools: bool) -> dict[str, Any]:
    from reactloop import Agent, tool
    from reactloop.testing import FunctionModel

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: first addend
            b: second addend
        """
        return a + b

    notes: list[str] = []
    params = inspect.signature(Agent).parameters
    script = Script()
    kwargs: dict[str, Any] = {}
    tmp = tempfile.TemporaryDirectory()
    if "skills" in params:
        kwargs["skills"] = [str(make_skill(Path(tmp.name), with_skill_tools))]
    else:
        notes.append("Agent(skills=...) not available: run without a skill")
    if "planning" in params:
        kwargs["planning"] = True
    else:
        notes.append("Agent(planning=True) not available: run without a plan")
    try:
        agent = Agent(model=FunctionModel(script), tools=[add], max_iterations=ITERATIONS,
                      instructions="You help with unit conversions and arithmetic.", **kwargs)
    except Exception as exc:  # a feature half-built right now: measure without it
        for key in ("skills", "planning"):
            if key in kwargs:
                notes.append(f"Agent({key}=...) failed ({type(exc).__name__}: {exc}); left out")
        kwargs.clear()
        agent = Agent(model=FunctionModel(script), tools=[add], max_iterations=ITERATIONS,
                      instructions="You help with unit conversions and arithmetic.")
    plan_updates = errors = 0
    result = None
    async for event in agent.stream("Convert 3 miles to km, then add a few numbers."):
        if event.type == "plan_update":
            plan_updates += 1
        elif event.type == "tool_error":
            errors += 1
        elif event.type == "run_end":
            result = event.result
    tmp.cleanup()
    if "skills" in kwargs and not script.loaded:
        notes.append("the skill was offered but load_skill never was")
    if "planning" in kwargs and not plan_updates:
        notes.append("planning on, but no plan_update event (plan tool not found or its "
                     "call failed)")
    reqs = script.requests
    blobs = [serialize(r) for r in reqs]
    rows = []
    for i in range(len(blobs) - 1):
        same = common_prefix(blobs[i], blobs[i + 1])
        rows.append({
            "request": i + 1, "bytes": len(blobs[i]), "prefix_bytes": same,
            "share_pct": 100.0 * same / len(blobs[i]),
            "diverges_in": where(reqs[i], same) if same < len(blobs[i]) else None,
        })
    shares = [r["share_pct"] for r in rows]
    adapter = [serialize_with_adapter(r) for r in reqs]
    adapter_shares = [100.0 * common_prefix(a, b) / len(a)
                      for a, b in itertools.pairwise(adapter) if a and b]
    return {
        "requests": len(reqs),
        "iterations": result.metrics.iterations if result else None,
        "state": str(result.state.value) if result else None,
        "skill_loaded": bool(script.loaded),
        "skill_with_tools": with_skill_tools,
        "plan_updates": plan_updates,
        "tool_errors": errors,
        "min_share_pct": min(shares) if shares else None,
        "mean_share_pct": sum(shares) / len(shares) if shares else None,
        "per_request": rows,
        "openai_adapter_min_share_pct": min(adapter_shares) if adapter_shares else None,
        "openai_adapter_mean_share_pct": (sum(adapter_shares) / len(adapter_shares)
                                          if adapter_shares else None),
        "notes": notes,
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    a = p.parse_args(argv)
    out = asyncio.run(measure(with_skill_tools=False))
    out["skill_bundling_a_tool"] = {
        k: v for k, v in asyncio.run(measure(with_skill_tools=True)).items()
        if k in ("min_share_pct", "mean_share_pct", "per_request", "notes", "skill_loaded")}
    if a.json:
        print(json.dumps(out))
        return 0
    print(f"{out['requests']} requests, state {out['state']}, skill loaded: {out['skill_loaded']}, "
          f"plan updates: {out['plan_updates']}, tool errors: {out['tool_errors']}")
    for n in out["notes"]:
        print(f"  note: {n}")
    for r in out["per_request"]:
        print(f"  request {r['request']:2d}: {r['bytes']:6d} bytes, {r['share_pct']:6.2f} % reused"
              + (f" (differs from: {r['diverges_in']})" if r["diverges_in"] else ""))
    print(f"worst {out['min_share_pct']:.2f} %, mean {out['mean_share_pct']:.2f} %")
    if out["openai_adapter_min_share_pct"] is not None:
        print(f"cross-check with reactloop's OpenAI adapter payload: worst "
              f"{out['openai_adapter_min_share_pct']:.2f} %, mean "
              f"{out['openai_adapter_mean_share_pct']:.2f} %")
    k2 = out["skill_bundling_a_tool"]
    print(textwrap.dedent(f"""\
        with a skill that bundles a tool (tools.py): worst {k2['min_share_pct']:.2f} %, mean
        {k2['mean_share_pct']:.2f} %"""))
    for r in k2["per_request"]:
        if r["diverges_in"] and r["share_pct"] < 99:
            print(f"  request {r['request']:2d}: {r['share_pct']:6.2f} % (differs from: "
                  f"{r['diverges_in']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
