"""Guidance behind a server (issue 23): the embedded model's constraints sent per request by
the OpenAI-compatible adapter — a GBNF ``grammar`` to llama-cpp-python's server (a real one on
loopback, the same GGUF), a ``response_format`` JSON schema to Ollama (recorded payloads
written from Ollama's documented API: tests/payloads/ollama/README.md). Unguided requests are
built exactly as before."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from _cli import reactloop
from _recorded_server import RecordedServer, payload, recorded_server
from conftest import need
from reactloop import Agent, RunState
from reactloop._demo_tools import DEMO_TOOLS
from reactloop.messages import Message, ModelRequest, ModelSettings
from reactloop.models._guided import apply_guidance, guided_params, reply_schema
from reactloop.models.local import Guidance, plan_reply, render_messages
from reactloop.models.openai import build_params

PAYLOADS = Path(__file__).with_name("payloads") / "ollama"
SPECS = tuple(t.spec() for t in DEMO_TOOLS)


def _request(question: str, **settings: Any) -> ModelRequest:
    return ModelRequest("Be brief.", (Message.user(question),), SPECS,
                        settings=ModelSettings(**settings))


@pytest.fixture
def server() -> Any:
    with recorded_server() as s:
        yield s


def _openai(base_url: str, **kw: Any) -> Any:
    need("openai", "pip install 'reactloop[openai]'")
    from reactloop.models.openai import OpenAIModel

    return OpenAIModel("smollm2", base_url=base_url, **kw)


# -- what a guided request carries ---------------------------------------------------------
def test_a_guided_request_carries_the_embedded_models_grammar_and_prompt() -> None:
    request = _request("What is 17 plus 25?")
    params, plan = guided_params(request, Guidance(), "smollm2", "grammar")
    embedded = plan_reply(request, Guidance())
    assert params["extra_body"]["grammar"] == embedded.grammar  # the very same constraint
    assert params["messages"] == render_messages(request, embedded.listed)
    assert "tools" not in params and "response_format" not in params
    # sampling as the embedded model samples unless the request says otherwise
    assert (params["temperature"], params["seed"], params["max_tokens"]) == (0.0, 0, 256)
    assert params["extra_body"]["repeat_penalty"] == 1.0
    # the ranked offer: only add fits, and since its synonym is in the question, a call is due
    assert [t.name for t in plan.callable] == ["add"] and plan.answer is False
    assert '"{\\"tool\\": \\"add\\", \\"arguments\\": "' in embedded.grammar
    assert '"17" | "25"' in embedded.grammar  # number arguments: only the question's numbers


def test_the_json_schema_form_enumerates_tools_and_copyable_values() -> None:
    import jsonschema
    request = _request("What is 17 plus 25?")
    params, plan = guided_params(request, Guidance(), "qwen", "json_schema")
    assert "extra_body" not in params
    schema = params["response_format"]["json_schema"]["schema"]
    assert schema == reply_schema(plan, Guidance().caps)
    ok = {"tool": "add", "arguments": {"a": 17, "b": 25}}
    jsonschema.validate(ok, schema)
    for bad in ({"tool": "add", "arguments": {"a": 17, "b": 24}},  # 24 was never said
                {"tool": "multiply", "arguments": {"a": 17, "b": 25}},  # not offered
                {"answer": "42"}):  # a call is required
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_small_talk_is_answered_and_string_arguments_are_capped() -> None:
    import jsonschema
    _, plan = guided_params(_request("Hello, how are you?"), Guidance(), "q", "json_schema")
    schema = reply_schema(plan, Guidance().caps)
    jsonschema.validate({"answer": "Fine, thanks."}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"answer": "x" * 601}, schema)
    # with the caps only, every tool is offered and strings are free but bounded
    _, plan = guided_params(_request("What time is it in Tokyo?"), Guidance.caps_only(), "q",
                            "json_schema")
    schema = reply_schema(plan, Guidance.caps_only().caps)
    jsonschema.validate({"tool": "current_time", "arguments": {"timezone": "Asia/Tokyo"}},
                        schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"tool": "current_time", "arguments": {"timezone": "x" * 201}},
                            schema)


def test_an_unguided_request_is_built_byte_for_byte_as_before(server: RecordedServer) -> None:
    server.queue(payload("openai", "plain.json"))
    model = _openai(server.url + "/v1", api_key="sk-test")
    request = _request("What is 17 plus 25?")

    async def main() -> None:
        try:
            await model.request(request)
        finally:
            await model.aclose()

    asyncio.run(main())
    sent = server.requests[0].body
    assert sent == json.loads(json.dumps(build_params(request, "smollm2")))
    assert "grammar" not in json.dumps(sent) and "response_format" not in sent


# -- Ollama: the documented request shape, recorded replies, the real CLI ------------------
def test_ollama_gets_the_reply_as_a_response_format_schema(tmp_path: Path,
                                                            server: RecordedServer) -> None:
    need("openai", "pip install 'reactloop[openai]'")
    server.queue(ollama_reply("guided_call.json"), ollama_reply("guided_answer.json"))
    proc = reactloop(tmp_path, "run", "-m", "ollama:qwen2.5:0.5b", "--base-url",
                     server.url + "/v1", "--guidance", "full", "--no-log", "-q",
                     "What is 17 plus 25?")
    assert proc.returncode == 0, proc.stderr
    assert "42" in proc.stdout
    documented = json.loads((PAYLOADS / "guided_request.json").read_text())
    first = server.requests[0].body
    assert server.requests[0].path == "/v1/chat/completions"
    # the fields Ollama's /v1 reads, in its documented shape; no native-only "format" key
    assert set(first) <= set(documented) | {"stream", "stream_options"}
    assert "format" not in first and "tools" not in first
    fmt = first["response_format"]
    assert fmt["type"] == documented["response_format"]["type"] == "json_schema"
    assert set(fmt["json_schema"]) == set(documented["response_format"]["json_schema"])
    assert fmt["json_schema"]["schema"]["properties"]["tool"] == {"const": "add"}
    assert (first["temperature"], first["seed"]) == (0, 0)
    # after the result, the next reply must answer: the schema has no call branch left
    second = server.requests[1].body["response_format"]["json_schema"]["schema"]
    assert second["required"] == ["answer"]


def ollama_reply(name: str) -> Any:
    return payload("ollama", name)


def test_guidance_needs_a_server_that_takes_constraints(tmp_path: Path) -> None:
    proc = reactloop(tmp_path, "run", "-m", "anthropic:claude-haiku-4-5", "--guidance",
                     "full", "--no-log", "hi", ANTHROPIC_API_KEY="sk-ant-test")
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--guidance applies to the embedded model" in lines[0]
    with pytest.raises(Exception, match="needs an OpenAI-compatible server"):
        _openai(None, api_key="sk-test", guidance=Guidance())  # type: ignore[arg-type]


def test_the_guidance_levels_and_a_models_config_entry(tmp_path: Path) -> None:
    from reactloop.cli._build import build_model

    model = build_model({"model": "openai:smollm2", "base_url": "http://127.0.0.1:9/v1",
                         "guidance": "full"})
    assert model.guidance == Guidance() and model.guided_format == "grammar"
    model = build_model({"model": "ollama:qwen", "guidance": "caps"})
    assert model.guidance == Guidance.caps_only() and model.guided_format == "json_schema"
    assert apply_guidance(model, "off").guidance is None
    # a model's profile in the config: [models."openai:smollm2"] guidance = "full"
    set_it = reactloop(tmp_path, "config", "set", "-m", "openai:smollm2", "guidance",
                       "fast")
    assert set_it.returncode != 0 and "must be full, caps or off" in set_it.stderr
    assert reactloop(tmp_path, "config", "set", "-m", "openai:smollm2", "guidance",
                     "full").returncode == 0


# -- a real llama-cpp-python server on loopback --------------------------------------------
@pytest.mark.slow
def test_llama_cpp_server_answers_a_guided_request_with_a_well_formed_call(
        llama_cpp_server: str) -> None:
    need("openai", "pip install 'reactloop[openai]'")
    import httpx
    import jsonschema
    import openai

    bodies: list[dict[str, Any]] = []

    async def capture(request: httpx.Request) -> None:
        bodies.append(json.loads(request.content))

    async def main() -> Any:
        client = openai.AsyncOpenAI(
            base_url=llama_cpp_server, api_key="none", max_retries=0, timeout=600,
            http_client=httpx.AsyncClient(event_hooks={"request": [capture]}, timeout=600))
        guided = _openai(llama_cpp_server, client=client, guidance=Guidance())
        plain = _openai(llama_cpp_server, client=client)
        request = _request("What is 17 plus 25?", max_tokens=64)
        try:
            return (await guided.request(request),
                    await plain.request(_request("Hello!", max_tokens=8)))
        finally:
            await client.close()

    called, _ = asyncio.run(main())
    offered = {t.name: t for t in SPECS}
    assert len(called.tool_calls) == 1, called
    call = called.tool_calls[0]
    assert call.name in offered
    jsonschema.validate(dict(call.arguments), offered[call.name].parameters)
    assert set(call.arguments.values()) <= {17, 25}  # copied from the question
    assert "grammar" in bodies[0] and "tools" not in bodies[0]
    assert "grammar" not in bodies[1] and bodies[1]["tools"]  # unguided: as before


@pytest.mark.slow
def test_an_agent_runs_guided_through_llama_cpp_server(llama_cpp_server: str) -> None:
    model = _openai(llama_cpp_server, guidance=Guidance(), timeout=600)
    agent = Agent(model=model, tools=DEMO_TOOLS, max_iterations=4)

    async def main() -> Any:
        try:
            return await agent.run("What is 17 plus 25?")
        finally:
            await model.aclose()

    result = asyncio.run(main())
    assert result.state is RunState.COMPLETED
    assert [c.name for s in result.steps for c in s.tool_calls] == ["add"]
    assert "42" in str(result.output)
