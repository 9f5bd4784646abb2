"""The embedded model: prompt rendering and grammar (pure), and real end-to-end runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reactloop import Agent, Message, ModelRequest, RunState, ToolCall, UserError, tool
from reactloop.errors import ModelError
from reactloop.models._base import ToolSpec
from reactloop.models.local import (
    LocalModel,
    default_model_path,
    parse_reply,
    render_messages,
    response_schema,
)

pytest.importorskip("llama_cpp")


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


SPEC = add.spec()


def test_schema_offers_each_tool_and_the_answer() -> None:
    schema = response_schema([SPEC], "auto")
    assert schema is not None
    branches = schema["anyOf"]
    assert branches[0]["properties"]["tool"] == {"const": "add"}
    assert branches[0]["properties"]["arguments"] == SPEC.parameters
    assert branches[1]["required"] == ["answer"]
    forced = response_schema([SPEC], "required")
    assert forced is not None and "anyOf" not in forced  # no answer branch
    assert response_schema([], "auto") is None
    assert response_schema([], "auto", structured=True) == {
        "type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def test_nested_definitions_are_hoisted_to_the_root() -> None:
    spec = ToolSpec("f", "", {"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}},
                              "$defs": {"P": {"type": "object"}}})
    schema = response_schema([spec], "auto")
    assert schema is not None and schema["$defs"] == {"P": {"type": "object"}}
    assert "$defs" not in schema["anyOf"][0]["properties"]["arguments"]


def test_replies_parse_into_calls_or_answers() -> None:
    call = parse_reply('{"tool": "add", "arguments": {"a": 1, "b": 2}}', [SPEC])
    assert call.tool_calls[0] == ToolCall("add", {"a": 1, "b": 2})
    assert parse_reply('{"answer": "3"}', [SPEC]).text == "3"
    assert parse_reply('{"answer": "cut of', [SPEC]).text == '{"answer": "cut of'


def test_rendered_prompt_only_grows_between_iterations() -> None:
    history = [Message.user("What is 1+2?")]
    first = ModelRequest("sys", tuple(history), (SPEC,), ("Budget: 2 iterations left.",))
    history += [Message.assistant(None, [ToolCall("add", {"a": 1, "b": 2}, "c1")]),
                Message.tool("c1", "add", "3")]
    second = ModelRequest("sys", tuple(history), (), ("last iteration",), declared_tools=(SPEC,))
    a, b = render_messages(first), render_messages(second)
    # everything but the trailing note-carrying user turn is a prefix of the next prompt
    assert b[: len(a) - 1] == a[:-1]
    assert a[-1]["content"].startswith(b[len(a) - 1]["content"])
    assert "Tool add returned: 3" in b[-1]["content"]
    assert "Now answer my question: What is 1+2?" in b[-1]["content"]
    assert "add(a: integer, b: integer)" in b[0]["content"]  # tools stay listed


def test_missing_and_corrupt_model_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        Agent(model=f"local:{tmp_path / 'nope.gguf'}")
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a model at all")
    with pytest.raises(UserError, match="not a GGUF model file"):
        Agent(model=f"local:{bad}")
    truncated = tmp_path / "truncated.gguf"
    with default_model_path().open("rb") as f:
        truncated.write_bytes(f.read(50_000))
    result = Agent(model=LocalModel(truncated)).run_sync("hi")
    assert result.state is RunState.ERROR and isinstance(result.error, ModelError)
    assert "not a usable GGUF model" in str(result.error)


@pytest.fixture(scope="module")
def local() -> LocalModel:
    return LocalModel()


def test_real_embedded_model_calls_a_tool_and_ends(local: LocalModel) -> None:
    result = Agent(model=local, tools=[add], max_iterations=4).run_sync("What is 17 + 25?")
    calls = [r for s in result.steps for r in s.results]
    assert calls, "the model made no tool call"
    assert calls[0].name == "add" and calls[0].error is None  # valid by construction
    assert result.state in (RunState.COMPLETED, RunState.MAX_ITERATIONS)
    assert result.output.strip()
    assert result.metrics.input_tokens > 0 and result.metrics.output_tokens > 0


def test_real_embedded_model_without_tools_answers_in_text(local: LocalModel) -> None:
    result = Agent(model=local, model_settings=None).run_sync("Say hello.")
    assert result.state is RunState.COMPLETED and result.output.strip()
    assert not result.output.lstrip().startswith("{")


def test_cli_run_on_the_embedded_model_prints_json() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "reactloop", "run", "--json", "-n", "4", "What is 17 + 25?"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600, check=False,
    )
    data = json.loads(proc.stdout)
    # 5: the answer was cut off, 6: the last tool step failed (the CLI's honest endings)
    expected = {"completed": {0, 5, 6}, "max_iterations": {2, 5}}[data["state"]]
    assert proc.returncode in expected, proc.stderr
    assert data["metrics"]["tool_calls"] >= 1
    assert any(r["error"] is None for s in data["steps"] for r in s["results"])
