"""Typed outputs through every adapter (issue 14): the embedded model for real (a grammar from
the answer's JSON schema), a real llama.cpp OpenAI-compatible server on loopback (a JSON-schema
response format), and recorded OpenAI, Anthropic and Gemini payloads replayed on loopback to
the real SDKs (each provider's structured-output request, and the typed answer parsed)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from _recorded_server import RecordedServer, payload, recorded_server
from conftest import need
from reactloop import Agent, RunState, tool
from reactloop.messages import Message, ModelRequest, OutputSchema
from reactloop.models._retry import RetryPolicy
from reactloop.models._schema import strict_schema


class City(BaseModel):
    city: str
    country: str
    population: int


PARIS = City(city="Paris", country="France", population=2102650)


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


class Sum(BaseModel):
    total: int


@pytest.fixture
def server() -> Iterator[RecordedServer]:
    with recorded_server() as s:
        yield s


# ---- the embedded model, for real ---------------------------------------------------------
@pytest.fixture(scope="module")
def local_model() -> Iterator[Any]:
    need("llama_cpp", "pip install 'reactloop[local]'")
    from reactloop.models.local import LocalModel

    model = LocalModel()
    yield model
    asyncio.run(model.aclose())


@pytest.mark.slow
def test_embedded_model_answers_a_small_schema_valid_by_construction(local_model: Any) -> None:
    agent = Agent(model=local_model, output_type=City, max_iterations=2)
    assert agent.spec.output is not None and agent.spec.output.mode == "native"
    result = agent.run_sync("Paris is the capital of France and has 2102650 inhabitants. "
                            "Give the city, its country and its population.")
    assert result.state is RunState.COMPLETED, result.text
    assert isinstance(result.output, City)
    assert result.output.city == "Paris" and result.output.country == "France"
    stored = json.loads(result.messages[-1].content)  # the JSON answer is in the history
    assert stored == json.loads(result.text) == result.output.model_dump()


@pytest.mark.slow
def test_embedded_model_lists_and_tools_with_a_typed_answer(local_model: Any) -> None:
    listed = Agent(model=local_model, output_type=list[int], max_iterations=2).run_sync(
        "List the numbers one to five.")
    assert listed.state is RunState.COMPLETED and isinstance(listed.output, list)
    assert all(isinstance(n, int) for n in listed.output)

    agent = Agent(model=local_model, tools=[add], output_type=Sum, max_iterations=3)
    result = agent.run_sync("What is 17 + 25? Use the add tool.")
    assert result.state in (RunState.COMPLETED, RunState.MAX_ITERATIONS), result.text
    assert isinstance(result.output, Sum)  # valid by construction, also after a tool
    assert any(c.name == "add" for s in result.steps for c in s.tool_calls)


# ---- a real llama.cpp OpenAI-compatible server ---------------------------------------------
@pytest.mark.slow
def test_llama_cpp_server_with_a_json_schema_response_format(llama_cpp_server: str) -> None:
    need("openai", "pip install 'reactloop[openai]'")
    from reactloop.models.openai import OpenAIModel

    async def main() -> Any:
        # llama-cpp-python's server reads the schema from {"type": "json_object", "schema": …}
        model = OpenAIModel("smollm2", base_url=llama_cpp_server, schema_format="json_object")
        agent = Agent(model=model, output_type=City, max_iterations=2,
                      instructions="Answer with the facts the user gives.")
        try:
            return await agent.run("Paris is the capital of France and has 2102650 "
                                   "inhabitants. Give the city, its country and its population.")
        finally:
            await model.aclose()

    result = asyncio.run(main())
    assert result.state is RunState.COMPLETED, result.text
    assert isinstance(result.output, City) and result.output.city == "Paris"


# ---- recorded payloads: OpenAI -------------------------------------------------------------
def _openai(server: RecordedServer) -> Any:
    need("openai", "pip install 'reactloop[openai]'")
    from reactloop.models.openai import OpenAIModel

    return OpenAIModel("gpt-4o-mini", base_url=server.url + "/v1", api_key="sk-test",
                       retry=RetryPolicy(base_delay=0.01, jitter=0))


def test_openai_strict_json_schema_response_format(server: RecordedServer) -> None:
    server.queue(payload("openai", "typed_output.json"))
    result = Agent(model=_openai(server), output_type=City).run_sync("Paris?")
    assert result.state is RunState.COMPLETED and result.output == PARIS
    body = server.requests[0].body
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "City"
    assert fmt["json_schema"]["strict"] is True
    schema = fmt["json_schema"]["schema"]
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["city", "country", "population"]
    assert "JSON schema" not in body["messages"][0]["content"]  # native: no prompted schema


def test_openai_streams_partial_typed_output(server: RecordedServer) -> None:
    server.queue(payload("openai", "typed_stream.sse"))
    agent = Agent(model=_openai(server), output_type=City)

    async def main() -> list[Any]:
        return [e async for e in agent.stream("Paris?")]

    events = asyncio.run(main())
    partial = [e.output for e in events if e.type == "partial_output"]
    assert partial[-1] == PARIS and len(partial) >= 2  # grew while the answer streamed
    assert partial[0].population != PARIS.population  # a prefix that already validated
    assert events[-1].result.output == PARIS
    assert server.requests[0].body["stream"] is True
    assert server.requests[0].body["response_format"]["type"] == "json_schema"


def test_open_objects_are_sent_non_strict() -> None:
    assert strict_schema({"type": "object", "additionalProperties": {"type": "integer"}}) is None
    need("openai", "pip install 'reactloop[openai]'")
    from reactloop.models.openai import response_format

    request = ModelRequest("", (Message.user("x"),), output_schema=OutputSchema(
        "counts", {"type": "object", "properties": {"result": {
            "type": "object", "additionalProperties": {"type": "integer"}}}}))
    fmt = response_format(request)
    assert fmt is not None and fmt["json_schema"]["strict"] is False
    assert response_format(request, "json_object") == {
        "type": "json_object", "schema": dict(request.output_schema.schema)}  # type: ignore[union-attr]
    prompted = ModelRequest("", (), output_schema=OutputSchema("x", {}, "prompted"))
    assert response_format(prompted) is None  # only native requests are enforced


# ---- recorded payloads: Anthropic ----------------------------------------------------------
def test_anthropic_native_structured_output(server: RecordedServer) -> None:
    need("anthropic", "pip install 'reactloop[anthropic]'")
    from reactloop.models.anthropic import AnthropicModel

    server.queue(payload("anthropic", "typed_output.json"))
    model = AnthropicModel("claude-haiku-4-5", api_key="sk-test", base_url=server.url,
                           retry=RetryPolicy(base_delay=0.01, jitter=0))
    agent = Agent(model=model, tools=[add], output_type=City)
    assert agent.spec.output is not None and agent.spec.output.mode == "native"
    result = agent.run_sync("Paris?")
    assert result.state is RunState.COMPLETED and result.output == PARIS
    body = server.requests[0].body
    fmt = body["output_config"]["format"]
    assert fmt["type"] == "json_schema"
    assert fmt["schema"]["additionalProperties"] is False
    assert set(fmt["schema"]["properties"]) == {"city", "country", "population"}
    assert [t["name"] for t in body["tools"]] == ["add"]  # tools and the typed answer together


def test_anthropic_final_answer_tool_mode(server: RecordedServer) -> None:
    need("anthropic", "pip install 'reactloop[anthropic]'")
    from reactloop.models.anthropic import AnthropicModel

    server.queue(payload("anthropic", "typed_output.json"))
    model = AnthropicModel("claude-haiku-4-5", api_key="sk-test", base_url=server.url)
    agent = Agent(model=model, output_type=City, output_mode="tool")
    agent.run_sync("Paris?")  # the recorded reply is text JSON: accepted leniently
    body = server.requests[0].body
    assert "output_config" not in body
    final = next(t for t in body["tools"] if t["name"] == "final_answer")
    assert final["input_schema"]["required"] == ["city", "country", "population"]


# ---- recorded payloads: Gemini -------------------------------------------------------------
def test_gemini_native_response_schema(server: RecordedServer) -> None:
    need("google.genai", "pip install 'reactloop[gemini]'")
    from reactloop.models.gemini import GeminiModel

    server.queue(payload("gemini", "typed_output.json"))
    model = GeminiModel("gemini-2.5-flash", api_key="gk-test", base_url=server.url,
                        retry=RetryPolicy(base_delay=0.01, jitter=0))
    result = Agent(model=model, output_type=City).run_sync("Paris?")
    assert result.state is RunState.COMPLETED and result.output == PARIS
    config = server.requests[0].body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"]["required"] == ["city", "country", "population"]


def test_gemini_picks_a_final_answer_tool_next_to_tools_on_older_models() -> None:
    need("google.genai", "pip install 'reactloop[gemini]'")
    from reactloop.models.gemini import GeminiModel

    older = GeminiModel("gemini-2.5-flash", api_key="gk-test")
    newer = GeminiModel("gemini-3-pro-preview", api_key="gk-test")
    assert older.output_mode(tools=True) == "tool" and older.output_mode(tools=False) == "native"
    assert newer.output_mode(tools=True) == "native"
    agent = Agent(model=older, tools=[add], output_type=City)
    assert agent.spec.output is not None and agent.spec.output.mode == "tool"
    assert "final_answer" in agent.tools


def test_the_embedded_grammar_bounds_open_ended_lists_and_strings() -> None:
    """A grammar cannot make a reply end: a tiny model under greedy decoding repeated a list
    item until the token limit cut the JSON off (benchmarks/typed_outputs.py, list[str]).
    The grammar's schema bounds every open-ended list and string; validation does not."""
    from reactloop.models.local import MAX_CHARS, MAX_ITEMS, capped, typed_answer_schema

    class Tagged(BaseModel):
        tags: list[str]
        kind: str = "note"

    schema = {"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string"}},
        "few": {"type": "array", "maxItems": 3, "items": {"enum": ["a", "b"]}},
        "code": {"type": "string", "pattern": "^[A-Z]+$"},
        "either": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}
    out = capped(schema)
    props = out["properties"]
    assert props["tags"] == {"type": "array", "maxItems": MAX_ITEMS,
                             "items": {"type": "string", "maxLength": MAX_CHARS}}
    assert props["few"] == schema["properties"]["few"]  # bounded already, enums are
    assert props["code"] == schema["properties"]["code"]  # a pattern is the model's limit
    assert props["either"]["anyOf"][0]["maxLength"] == MAX_CHARS
    assert "maxItems" not in schema["properties"]["tags"]  # the caller's schema is untouched

    request = ModelRequest("", (Message.user("tags?"),), output_schema=OutputSchema(
        "Tagged", Tagged.model_json_schema(), "native"))
    branch = typed_answer_schema(request)
    assert branch is not None
    assert branch["properties"]["answer"]["properties"]["tags"]["maxItems"] == MAX_ITEMS
    long = ["x" * (MAX_CHARS + 1)] * (MAX_ITEMS + 1)  # the answer itself may be longer
    from reactloop.testing import ScriptedModel

    assert Agent(model=ScriptedModel([json.dumps({"tags": long})]), output_type=Tagged
                 ).run_sync("tags?").output == Tagged(tags=long)
