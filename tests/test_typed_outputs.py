"""Typed outputs (issue 14) with scripted models: ``Agent(output_type=T)`` gives a ``T`` for
every kind of type, validation errors go back to the model within a budget, the budget ends
in a typed error, tools and a typed answer share a run, and streams show partial answers."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # pydantic wants this one before Python 3.12

from reactloop import (
    Agent,
    ModelRequest,
    ModelResponse,
    OutputValidationError,
    RunState,
    ToolCall,
    UserError,
    tool,
)
from reactloop.testing import FunctionModel, ScriptedModel


class City(BaseModel):
    name: str
    population: int = Field(ge=0)


@dataclasses.dataclass
class Point:
    x: float
    y: float


class Person(TypedDict):
    name: str
    age: int


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


@tool
def population(city: str) -> int:
    """The population of a city.

    Args:
        city: its name
    """
    return {"Paris": 2102650}.get(city, 0)


@pytest.mark.parametrize(("output_type", "reply", "expected"), [
    (City, '{"name": "Paris", "population": 2102650}', City(name="Paris", population=2102650)),
    (Point, '{"x": 1.5, "y": -2}', Point(1.5, -2.0)),
    (Person, '{"name": "Ada", "age": 36}', {"name": "Ada", "age": 36}),
    (int, '{"result": 42}', 42),
    (int, "42", 42),  # a bare value is accepted too (prompted models often write it)
    (bool, "true", True),
    (list[int], '{"result": [1, 2, 3]}', [1, 2, 3]),
    (list[City], '[{"name": "Rome", "population": 1}]', [City(name="Rome", population=1)]),
    (Literal["yes", "no"], "yes", "yes"),
    (Cat | Dog, '{"result": {"kind": "dog", "good": true}}', Dog(kind="dog", good=True)),
    (Cat | Dog, '```json\n{"kind": "cat", "lives": 9}\n```', Cat(kind="cat", lives=9)),
])
def test_every_kind_of_type_comes_back_as_a_value_of_it(output_type: Any, reply: str,
                                                          expected: Any) -> None:
    model = ScriptedModel([reply])
    result = Agent(model=model, output_type=output_type).run_sync("go")
    assert result.state is RunState.COMPLETED, result.text
    assert result.output == expected and type(result.output) is type(expected)
    assert json.loads(result.text) == json.loads(json.dumps(
        dataclasses.asdict(expected) if dataclasses.is_dataclass(expected) else
        expected.model_dump() if isinstance(expected, BaseModel) else
        [e.model_dump() for e in expected] if isinstance(expected, list) and expected
        and isinstance(expected[0], BaseModel) else expected))
    assert result.to_dict()["output"] is not None


def test_without_output_type_nothing_changes() -> None:
    model = ScriptedModel(["plain text"])
    result = Agent(model=model).run_sync("go")
    assert result.output == result.text == "plain text"
    assert model.requests[0].output_schema is None
    assert Agent(model=ScriptedModel(["x"]), output_type=str).spec.output is None


def test_a_failed_validation_goes_back_with_the_errors_and_recovers() -> None:
    model = ScriptedModel([
        "Paris has about two million people.",
        '{"name": "Paris", "population": -5}',
        '{"name": "Paris", "population": 2102650}',
    ])
    result = Agent(model=model, output_type=City).run_sync("Paris?")
    assert result.state is RunState.COMPLETED
    assert result.output == City(name="Paris", population=2102650)
    first_feedback = model.requests[1].messages[-1]
    assert first_feedback.role == "user" and "not JSON" in first_feedback.content
    second_feedback = model.requests[2].messages[-1].content
    assert "population" in second_feedback and "greater than or equal to 0" in second_feedback
    assert result.metrics.iterations == 3


def test_past_the_budget_the_run_ends_with_a_typed_error() -> None:
    model = ScriptedModel(["no", '{"name": 1}', '{"name": "x"}', "never asked"])
    result = Agent(model=model, output_type=City, output_retries=2).run_sync("go")
    assert result.state is RunState.ERROR and result.output is None
    error = result.error
    assert isinstance(error, OutputValidationError)
    assert error.raw_output == '{"name": "x"}'
    assert [a.raw for a in error.attempts] == ["no", '{"name": 1}', '{"name": "x"}']
    assert "population" in error.attempts[-1].errors and "Field required" in str(error)
    assert model.remaining == 1  # exactly 1 + 2 retries, never more
    assert "did not match the output type in 3 attempts" in result.text
    assert result.to_dict()["error"].startswith("OutputValidationError")


def test_zero_retries_ends_at_the_first_invalid_answer() -> None:
    model = ScriptedModel(["nope", "unused"])
    result = Agent(model=model, output_type=int, output_retries=0).run_sync("go")
    assert result.state is RunState.ERROR and len(result.error.attempts) == 1  # type: ignore[union-attr]
    assert model.remaining == 1


def test_tools_and_a_typed_answer_in_one_run() -> None:
    model = ScriptedModel([
        ToolCall("population", {"city": "Paris"}),
        '{"name": "Paris", "population": 2102650}',
    ])
    agent = Agent(model=model, tools=[population], output_type=City)
    result = agent.run_sync("How many people live in Paris?")
    assert result.state is RunState.COMPLETED and result.output.population == 2102650
    assert result.steps[0].results[0].result == 2102650
    assert [t.name for t in model.requests[0].tools] == ["population"]
    schema = model.requests[0].output_schema
    assert schema is not None and schema.mode == "prompted" and schema.name == "City"
    assert '"population"' in model.requests[0].system  # prompted: the schema is in the prompt


def test_the_forced_last_iteration_asks_for_the_typed_answer_and_keeps_its_retries() -> None:
    model = ScriptedModel([
        ToolCall("population", {"city": "Paris"}),
        "It is big.",  # the last iteration: not valid, goes back
        '{"name": "Paris", "population": 2102650}',
    ])
    agent = Agent(model=model, tools=[population], output_type=City, max_iterations=2)
    result = agent.run_sync("Paris?")
    assert result.state is RunState.MAX_ITERATIONS
    assert result.output == City(name="Paris", population=2102650)
    last = model.requests[1]
    assert last.tools == () and "only the JSON of your final answer" in last.notes[-1]
    assert model.requests[2].tools == () and "not JSON" in model.requests[2].messages[-1].content
    assert result.metrics.iterations == 2  # a retry of the last iteration is no new iteration


def test_loop_control_completion_is_validated_too() -> None:
    model = ScriptedModel([
        ToolCall("task_completion", {"result": "done!"}),
        ToolCall("task_completion", {"result": '{"x": 1, "y": 2}'}),
    ])
    result = Agent(model=model, output_type=Point, loop_control=True).run_sync("go")
    assert result.state is RunState.COMPLETED and result.output == Point(1, 2)
    assert "not JSON" in model.requests[1].messages[-1].content


def test_tool_mode_answers_through_a_final_answer_tool() -> None:
    model = ScriptedModel([
        ToolCall("population", {"city": "Paris"}),
        ToolCall("final_answer", {"name": "Paris"}),  # invalid: the tool's error goes back
        ToolCall("final_answer", {"name": "Paris", "population": 2102650}),
    ])
    agent = Agent(model=model, tools=[population], output_type=City, output_mode="tool")
    result = agent.run_sync("Paris?")
    assert result.state is RunState.COMPLETED
    assert result.output == City(name="Paris", population=2102650)
    assert "final_answer" in [t.name for t in model.requests[0].tools]
    assert model.requests[0].output_schema is not None
    assert model.requests[0].output_schema.mode == "tool"
    error = model.requests[2].messages[-1]
    assert error.role == "tool" and error.is_error and "population" in error.content
    assert result.messages[-1].content == "Final answer received."  # every call answered


def test_tool_mode_wraps_non_object_types_and_forces_the_tool_last() -> None:
    model = ScriptedModel([ToolCall("final_answer", {"result": [3, 1, 2]})])
    agent = Agent(model=model, output_type=list[int], output_mode="tool", max_iterations=1)
    result = agent.run_sync("numbers")
    assert result.output == [3, 1, 2] and result.state is RunState.MAX_ITERATIONS
    request = model.requests[0]
    assert [t.name for t in request.tools] == ["final_answer"]
    assert request.tools[0].parameters["required"] == ["result"]
    assert "Call final_answer now" in request.notes[-1]


def test_tool_mode_budget_counts_invalid_final_answer_calls() -> None:
    bad = ToolCall("final_answer", {"name": "x"})
    model = ScriptedModel([bad, bad, bad, "unused"])
    result = Agent(model=model, output_type=City, output_mode="tool").run_sync("go")
    assert result.state is RunState.ERROR
    assert isinstance(result.error, OutputValidationError) and len(result.error.attempts) == 3
    assert model.remaining == 1


def test_native_mode_sends_the_schema_and_no_prompt_section() -> None:
    model = ScriptedModel(['{"result": 7}'])
    agent = Agent(model=model, output_type=int, output_mode="native")
    assert agent.run_sync("seven").output == 7
    request = model.requests[0]
    assert request.output_schema is not None and request.output_schema.mode == "native"
    assert request.output_schema.schema == {
        "type": "object", "properties": {"result": {"type": "integer"}},
        "required": ["result"], "additionalProperties": False}
    assert "JSON schema" not in request.system


def test_a_json_schema_dict_is_validated_with_jsonschema() -> None:
    schema = {"type": "object", "properties": {"tags": {"type": "array",
              "items": {"type": "string"}, "minItems": 1}}, "required": ["tags"]}
    model = ScriptedModel(['{"tags": []}', '{"tags": ["a"]}'])
    result = Agent(model=model, output_type=schema).run_sync("tags")
    assert result.output == {"tags": ["a"]}
    assert "tags" in model.requests[1].messages[-1].content


def test_configuration_errors_are_raised_at_construction() -> None:
    with pytest.raises(UserError, match="output_mode must be one of"):
        Agent(model=ScriptedModel([]), output_type=int, output_mode="grammar")  # type: ignore[arg-type]
    with pytest.raises(UserError, match="output_retries"):
        Agent(model=ScriptedModel([]), output_type=int, output_retries=-1)
    with pytest.raises(UserError, match="cannot be validated"):
        Agent(model=ScriptedModel([]), output_type=object())  # type: ignore[arg-type]
    with pytest.raises(UserError, match="not a valid JSON schema"):
        Agent(model=ScriptedModel([]), output_type={"type": "nonsense"})


def test_streaming_yields_partial_output_as_it_becomes_valid() -> None:
    reply = '{"name": "Paris", "population": 2102650}'
    agent = Agent(model=ScriptedModel([reply]), output_type=City)

    async def main() -> list[Any]:
        return [e async for e in agent.stream("Paris?")]

    events = asyncio.run(main())
    partial = [e.output for e in events if e.type == "partial_output"]
    assert partial and partial[-1] == City(name="Paris", population=2102650)
    assert all(isinstance(p, City) for p in partial)
    assert len(partial) == len({p.model_dump_json() for p in partial})  # only changes
    assert events[-1].result.output == partial[-1]
    assert events[[e.type for e in events].index("partial_output")].to_dict()["output"]


def test_partial_output_of_a_list_grows_item_by_item() -> None:
    def reply(request: ModelRequest) -> ModelResponse:
        return ModelResponse(text='[1, 2, 3, 4]')

    agent = Agent(model=FunctionModel(reply), output_type=list[int])

    async def main() -> list[Any]:
        return [e.output async for e in agent.stream("go") if e.type == "partial_output"]

    seen = asyncio.run(main())
    assert seen[-1] == [1, 2, 3, 4] and seen[0] == [1]


def test_type_checkers_see_the_output_type(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    code = tmp_path / "typed_use.py"
    code.write_text(
        "from pydantic import BaseModel\n"
        "from reactloop import Agent\n"
        "class City(BaseModel):\n    name: str\n"
        "async def main() -> None:\n"
        "    typed = await Agent(output_type=City).run('x')\n"
        "    reveal_type(typed.output)\n"
        "    plain = await Agent().run('x')\n"
        "    reveal_type(plain.output)\n"
        "    listed = Agent(output_type=list[int]).run_sync('x')\n"
        "    reveal_type(listed.output)\n"
        "    union = Agent[int | str](output_type=int | str).run_sync('x')\n"
        "    reveal_type(union.output)\n")
    out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                          "--cache-dir", str(tmp_path / ".mypy"), str(code)],
                         capture_output=True, text=True, check=False).stdout
    revealed = [line.split("Revealed type is ")[1] for line in out.splitlines()
                if "Revealed type is" in line]
    assert [r.replace("builtins.", "") for r in revealed] == [
        '"typed_use.City"', '"str"', '"list[int]"', '"int | str"'], out
    assert "error" not in out.replace("Revealed", ""), out
