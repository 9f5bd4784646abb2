"""MCP sampling: a server's ``sampling/createMessage`` answered by the agent's model, within
the run's deadline, counted in its metrics, visible as ``mcp_sampling`` events, and refusable
by configuration. Real servers: the reference server (server-everything, over stdio) and
tests/mcp_features_server.py (FastMCP, over stdio and streamable HTTP)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from _mcp_servers import FEATURES, everything, features, served
from conftest import run
from reactloop import Agent, ModelResponse, RunState, ToolCall, ToolRetry
from reactloop.events import CustomEvent
from reactloop.mcp import ElicitationAnswer, MCPServer
from reactloop.messages import Usage
from reactloop.testing import FunctionModel, ScriptedModel

pytestmark = pytest.mark.slow


async def collect(agent: Agent, prompt: str) -> tuple[Any, list[Any]]:
    events = [ev async for ev in agent.stream(prompt)]
    return events[-1].result, [e for e in events if isinstance(e, CustomEvent)]


def custom(events: list[Any], name: str) -> list[Any]:
    return [e.data for e in events if e.name == name]


def test_the_reference_server_samples_the_agents_own_model() -> None:
    model = ScriptedModel([
        ToolCall("everything_trigger-sampling-request", {"prompt": "say hi", "maxTokens": 20}),
        ModelResponse(text="hi from the model", usage=Usage(7, 3)),  # the sampling answer
        "The server got its answer.",
    ])
    agent = Agent(model, mcp_servers=[everything()])
    result, events = run(collect(agent, "Trigger sampling."))
    assert result.state is RunState.COMPLETED, result.output
    tool_message = next(m for m in result.messages if m.role == "tool")
    assert "hi from the model" in tool_message.content  # the server echoes what it got back
    sampled = model.requests[1]  # what the server asked, as a request to our model
    assert sampled.system == "You are a helpful test server."
    assert sampled.messages[-1].content.endswith("say hi")
    assert sampled.settings.max_tokens == 20 and sampled.tools == ()
    (event,) = custom(events, "mcp_sampling")
    assert event["server"] == "everything" and event["outcome"] == "answered"
    assert (event["input_tokens"], event["output_tokens"]) == (7, 3)
    assert result.metrics.input_tokens >= 7 and result.metrics.output_tokens >= 3


def test_a_server_named_model_answers_instead_of_the_agents() -> None:
    sampler = ScriptedModel(["five words from the sampler"])
    model = ScriptedModel([ToolCall("features_summarize", {"text": "a long text"}), "done"])
    agent = Agent(model, mcp_servers=[features(sampling_model=sampler)])
    result, events = run(collect(agent, "Summarize."))
    assert result.state is RunState.COMPLETED, result.output
    tool_message = next(m for m in result.messages if m.role == "tool")
    assert tool_message.content == "summary: five words from the sampler"
    assert sampler.requests[0].system == "Summarize in five words."
    assert custom(events, "mcp_sampling")[0]["model"] == "scripted"


def test_denied_sampling_is_not_announced_and_an_asking_server_hears_no() -> None:
    model = ScriptedModel([ToolCall("features_summarize", {"text": "x"}), "done"])
    result, _ = run(collect(Agent(model, mcp_servers=[features(sampling="deny")]), "go"))
    tool_message = next(m for m in result.messages if m.role == "tool")
    assert tool_message.is_error
    assert "sampling" in tool_message.content.lower()
    assert len(model.requests) == 2  # the model was never asked to sample

    async def tools_of_everything() -> list[str]:
        async with everything(sampling="deny").open(lambda *a: None) as tools:
            return [getattr(t, "remote_name", t.name) for t in tools]

    names = run(tools_of_everything())  # it registers its sampling tool only for capable clients
    assert "echo" in names and "trigger-sampling-request" not in names


def test_a_remote_server_is_asked_about_by_default(tmp_path) -> None:
    asked: list[Any] = []

    def person(answer: bool):
        def ask(request: Any) -> ElicitationAnswer:
            asked.append(request)
            return ElicitationAnswer.accept(allow=answer)
        return ask

    with served([sys.executable, FEATURES, "--http", "{port}"]) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        for handler, expect in ((None, "error"), (person(False), "error"),
                                (person(True), "summary: yes")):
            model = ScriptedModel([ToolCall("remote_summarize", {"text": "some text"}),
                                   *(["yes"] if expect != "error" else []), "done"])
            server = MCPServer.http(url, name="remote", elicitation=handler)
            assert server.sampling is None  # the default: ask, for a remote server
            result, events = run(collect(Agent(model, mcp_servers=[server]), "go"))
            tool_message = next(m for m in result.messages if m.role == "tool")
            if expect == "error":  # nobody to ask: not announced; a person said no: refused
                assert tool_message.is_error, tool_message.content
                outcomes = [e["outcome"] for e in custom(events, "mcp_sampling")]
                assert outcomes == ([] if handler is None else ["refused"])
            else:
                assert tool_message.content == expect
    assert len(asked) == 2 and "asks your model to generate" in asked[0].message
    assert asked[0].fields[0].kind == "boolean"


def test_sampling_ends_with_the_runs_deadline() -> None:
    async def model_fn(request: Any) -> ModelResponse:
        if request.system == "Summarize in five words.":
            await asyncio.Event().wait()  # a model that never answers the server
        return ModelResponse(tool_calls=[ToolCall("features_summarize", {"text": "x"})])

    agent = Agent(FunctionModel(model_fn), mcp_servers=[features()], max_execution_time=3)
    result = run(agent.run("go"))
    assert result.state is RunState.TIMED_OUT


def test_sampling_goes_through_the_runs_runtime_and_is_traced() -> None:
    from reactloop.testing import capture_spans

    model = ScriptedModel([ToolCall("features_summarize", {"text": "a long text"}),
                           "five words", "done"])
    with capture_spans() as spans:
        result = run(Agent(model, mcp_servers=[features()]).run("Summarize."))
    assert result.state is RunState.COMPLETED
    chats = [s for s in spans if s.name.startswith("chat ")]
    assert len(chats) == 3  # the run's two model calls and the server's sampling request


def test_sampling_outside_a_run_without_a_model_is_refused_with_the_fix() -> None:
    async def main() -> Any:
        async with everything().open() as tools:
            (tool,) = [t for t in tools if t.name == "everything_trigger-sampling-request"]
            return await tool.call({"prompt": "hi"})

    with pytest.raises(ToolRetry, match="name one with sampling_model"):
        run(main())
