"""OpenTelemetry instrumentation (issue 15): GenAI spans, span events, metrics, content policy.

Spans are collected in memory with ``reactloop.testing.capture_spans()``. The main run goes
through the real OpenAI adapter against a loopback server replaying recorded payloads, so
the retry, the usage figures and the response model are the adapter's own.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import StatusCode

import reactloop
from _recorded_server import RecordedServer, payload, recorded_server
from conftest import MCP_DEMO_SERVER, run
from reactloop import (
    Agent,
    ModelHTTPError,
    ModelResponse,
    RetryPolicy,
    RunState,
    ToolCall,
    Usage,
    UserError,
    _instrument,
    tool,
)
from reactloop.testing import ScriptedModel, capture_spans

CONTENT_KEYS = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
                "gen_ai.tool.call.arguments", "gen_ai.tool.call.result")


@pytest.fixture(autouse=True)
def _instrumentation_off() -> Iterator[None]:
    before = _instrument.set_active(None)
    yield
    _instrument.set_active(before)


def _openai(server: RecordedServer) -> Any:
    pytest.importorskip("openai")
    from reactloop.models.openai import OpenAIModel

    return OpenAIModel("gpt-4o-mini", base_url=f"{server.url}/v1", api_key="sk-test",
                       retry=RetryPolicy(base_delay=0.01, jitter=0))


def _weather_agent(server: RecordedServer, spans: Any) -> Agent:
    """get_weather fails, add works; each waits for the other (so they provably overlap) and
    opens a span of its own inside its tool call."""
    tracer = spans.tracer_provider.get_tracer("test")
    started = {"get_weather": asyncio.Event(), "add": asyncio.Event()}

    async def meet(me: str, other: str) -> None:
        started[me].set()
        await asyncio.wait_for(started[other].wait(), 10)

    @tool
    async def get_weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: the city
        """
        with tracer.start_as_current_span("inside get_weather"):
            await meet("get_weather", "add")
        raise RuntimeError(f"weather service down for {city}")

    @tool
    async def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: first addend
            b: second addend
        """
        with tracer.start_as_current_span("inside add"):
            await meet("add", "get_weather")
        return a + b

    server.queue(payload("openai", "error_429.json", 429, retry_after="0"),
                 payload("openai", "two_tool_calls.json"), payload("openai", "plain.json"))
    return Agent(model=_openai(server), tools=[get_weather, add], max_iterations=2,
                 name="weather-agent")


def _attrs(span: ReadableSpan) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, (list, tuple)) else v
            for k, v in (span.attributes or {}).items()}


def _events(span: ReadableSpan) -> list[tuple[str, dict[str, Any]]]:
    return [(e.name, dict(e.attributes or {})) for e in span.events]


def test_run_with_parallel_tools_an_error_a_retry_and_the_forced_last_iteration() -> None:
    with recorded_server() as server, capture_spans() as spans:
        result = _weather_agent(server, spans).run_sync("Weather in Paris, and 17 + 25?")
        metrics = spans.metrics()
    assert result.state is RunState.MAX_ITERATIONS and result.output == "17 + 25 = 42."

    [root] = [s for s in spans if s.parent is None]
    assert root.name == "invoke_agent weather-agent"
    kids = spans.children(root)
    assert [s.name for s in kids[:1] + kids[3:]] == ["chat gpt-4o-mini"] * 2
    assert {s.name for s in kids[1:3]} == {"execute_tool get_weather", "execute_tool add"}
    chat1, chat2 = kids[0], kids[3]
    tools = {s.name.split()[1]: s for s in kids[1:3]}
    assert len(spans) == 7  # nothing else: run, 2 chats, 2 tools, a span inside each tool
    for name, span in tools.items():  # the tools' own spans nest under their own tool span
        assert [s.name for s in spans.children(span)] == [f"inside {name}"]
    # the two tool spans overlap in time: the tools ran concurrently
    weather, add = tools["get_weather"], tools["add"]
    assert max(weather.start_time, add.start_time) < min(weather.end_time, add.end_time)

    assert _attrs(root) == {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "openai",
        "gen_ai.agent.name": "weather-agent", "gen_ai.request.model": "gpt-4o-mini",
        "reactloop.run.id": result.run_id, "reactloop.run.state": "max_iterations",
        "reactloop.run.iterations": 2, "reactloop.run.tool_calls": 2,
        "reactloop.usage.input_tokens": 82 + 25, "reactloop.usage.output_tokens": 49 + 8,
        # genai-prices: gpt-4o-2024-08-06 answered first, then gpt-4o-mini-2024-07-18
        "reactloop.usage.cost_usd": pytest.approx(82 * 2.5e-6 + 49 * 10e-6 + 25 * 0.15e-6
                                                  + 8 * 0.6e-6),
    }
    assert root.status.status_code is StatusCode.UNSET
    assert _events(root) == [
        ("reactloop.budget_note", {"reactloop.iteration": 1, "reactloop.iterations_left": 1}),
        ("reactloop.final_iteration", {"reactloop.iteration": 2}),
    ]
    assert _attrs(chat1) == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini", "reactloop.iteration": 1,
        "gen_ai.response.model": "gpt-4o-2024-08-06",
        "gen_ai.response.finish_reasons": ("tool_calls",),
        "gen_ai.usage.input_tokens": 82, "gen_ai.usage.output_tokens": 49,
        "reactloop.usage.cost_usd": pytest.approx(82 * 2.5e-6 + 49 * 10e-6),
    }
    [(retry, retry_attrs)] = _events(chat1)
    assert retry == "reactloop.retry"
    assert retry_attrs["reactloop.retry.attempt"] == 1
    assert retry_attrs["error.type"] == "429"
    assert "Rate limit reached" in retry_attrs["reactloop.retry.error"]
    assert _attrs(chat2) == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini", "reactloop.iteration": 2,
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
        "gen_ai.response.finish_reasons": ("stop",),
        "gen_ai.usage.input_tokens": 25, "gen_ai.usage.output_tokens": 8,
        "reactloop.usage.cost_usd": pytest.approx(25 * 0.15e-6 + 8 * 0.6e-6),
    }
    assert _attrs(weather) == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.type": "function", "gen_ai.tool.call.id": "call_8qty38aDbcPSDWl6ZgmDLFg9",
        "gen_ai.tool.description": "The weather in a city.", "error.type": "RuntimeError",
    }
    assert weather.status.status_code is StatusCode.ERROR
    assert weather.status.description is None  # the message is content: not by default
    assert _attrs(add) == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "add",
        "gen_ai.tool.type": "function", "gen_ai.tool.call.id": "call_Lx7bA1dZcS3QnPqkI0wWyVdD",
        "gen_ai.tool.description": "Add two integers.",
    }
    assert add.status.status_code is StatusCode.UNSET

    # tokens: on chat spans only, and they add up to the run's totals
    chats = spans.named("chat")
    assert sum(s.attributes["gen_ai.usage.input_tokens"] for s in chats) \
        == result.metrics.input_tokens == root.attributes["reactloop.usage.input_tokens"]
    assert sum(s.attributes["gen_ai.usage.output_tokens"] for s in chats) \
        == result.metrics.output_tokens
    assert not [s for s in spans if s not in chats
                and any(k.startswith("gen_ai.usage.") for k in s.attributes or {})]

    # the conventions' histograms
    sums: dict[str, int] = {}
    for a, p in metrics["gen_ai.client.token.usage"]:  # one point per response model
        assert a["gen_ai.operation.name"] == "chat" and a["gen_ai.provider.name"] == "openai"
        sums[a["gen_ai.token.type"]] = sums.get(a["gen_ai.token.type"], 0) + p.sum
    assert sums == {"input": 107, "output": 57}
    durations = metrics["gen_ai.client.operation.duration"]
    assert sorted(a["gen_ai.response.model"] for a, _ in durations) \
        == ["gpt-4o-2024-08-06", "gpt-4o-mini-2024-07-18"]
    assert sum(p.count for _, p in durations) == 2


def test_content_is_absent_by_default() -> None:
    with recorded_server() as server, capture_spans() as spans:
        _weather_agent(server, spans).run_sync("Weather in Paris, and 17 + 25?")
    for span in spans:
        values = [*span.attributes.values(), *(v for e in span.events
                                               for v in (e.attributes or {}).values())]
        assert not set(CONTENT_KEYS) & set(span.attributes), span.name
        assert not [v for v in values if "Paris" in str(v) or "service down" in str(v)]
        assert span.status.description is None or "Paris" not in span.status.description


def test_content_with_include_content_is_redacted() -> None:
    key = "sk-proj-" + "x9" * 12

    @tool
    def lookup(city: str) -> str:
        """Look a city up.

        Args:
            city: the city
        """
        return f"{city}: sunny (fetched with {key})"

    model = ScriptedModel([
        ModelResponse(tool_calls=[ToolCall("lookup", {"city": "Paris"}, "call_1")]),
        ModelResponse(text="Sunny in Paris.", finish_reason="stop")])
    agent = Agent(model=model, tools=[lookup], instructions="Be brief.")
    with capture_spans(include_content=True,
                       redact=lambda text: text.replace("Paris", "P***")) as spans:
        agent.run_sync("Weather in Paris?")
    everything = json.dumps([dict(s.attributes) for s in spans])
    assert key not in everything and "Paris" not in everything
    [chat1, chat2] = spans.named("chat")
    assert json.loads(chat1.attributes["gen_ai.system_instructions"])[0]["type"] == "text"
    assert "Be brief." in chat1.attributes["gen_ai.system_instructions"]
    assert json.loads(chat1.attributes["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "Weather in P***?"}]}]
    assert json.loads(chat1.attributes["gen_ai.output.messages"]) == [{
        "role": "assistant", "finish_reason": "tool_calls",
        "parts": [{"type": "tool_call", "id": "call_1", "name": "lookup",
                   "arguments": {"city": "P***"}}]}]
    tool_message = json.loads(chat2.attributes["gen_ai.input.messages"])[-1]
    assert tool_message["role"] == "tool"
    assert tool_message["parts"][0]["response"] == "P***: sunny (fetched with [REDACTED])"
    [call] = spans.named("execute_tool")
    assert json.loads(call.attributes["gen_ai.tool.call.arguments"]) == {"city": "P***"}
    assert call.attributes["gen_ai.tool.call.result"] == "P***: sunny (fetched with [REDACTED])"


def test_a_model_error_ends_the_run_span_with_error_type() -> None:
    model = ScriptedModel([ModelHTTPError(401, "bad key sk-ant-" + "k" * 20, retryable=False)])
    with capture_spans() as spans:
        result = Agent(model=model, name="failing").run_sync("hi")
    assert result.state is RunState.ERROR
    [chat] = spans.named("chat")
    [root] = spans.named("invoke_agent")
    assert chat.parent.span_id == root.context.span_id
    assert chat.attributes["error.type"] == "401"
    assert chat.attributes["http.response.status_code"] == 401
    assert chat.status.status_code is StatusCode.ERROR
    assert "sk-ant-" not in (chat.status.description or "")
    assert root.attributes["error.type"] == "ModelHTTPError"
    assert root.attributes["reactloop.run.state"] == "error"
    assert root.status.status_code is StatusCode.ERROR


def test_streamed_run_records_the_stream_and_first_chunk() -> None:
    model = ScriptedModel([ModelResponse(text="one two three")])

    async def go() -> list[str]:
        return [e.type async for e in Agent(model=model).stream("count")]

    with capture_spans() as spans:
        types = run(go())
    assert types.count("text_delta") == 3
    [chat] = spans.named("chat")
    assert chat.attributes["gen_ai.request.stream"] is True
    assert 0 <= chat.attributes["gen_ai.response.time_to_first_chunk"] \
        <= (chat.end_time - chat.start_time) / 1e9
    assert chat.attributes["gen_ai.usage.output_tokens"] > 0


def test_closing_a_stream_ends_every_span_as_cancelled() -> None:
    release = asyncio.Event()

    @tool
    async def slow() -> str:
        """Waits until the test says so."""
        await release.wait()
        return "done"

    model = ScriptedModel([ToolCall("slow", {}), "never asked"])

    async def go() -> None:
        events = Agent(model=model, tools=[slow]).stream("go")
        async for event in events:
            if event.type == "tool_call":
                break
        await events.aclose()

    with capture_spans() as spans:
        run(go())
    [root] = spans.named("invoke_agent")
    assert root.attributes["reactloop.run.state"] == "cancelled"
    assert root.attributes["error.type"] == "cancelled"
    assert [s.name for s in spans.children(root)] == ["chat scripted"]
    assert all(s.end_time is not None for s in spans)


def test_span_events_for_pruning_reminders_and_a_loop_control_ending() -> None:
    model = ScriptedModel([
        ModelResponse(text="I think it is Paris."),  # no tool: reminded
        ModelResponse(tool_calls=[ToolCall("ask_question", {"question": "Which date?"})]),
    ])
    agent = Agent(model=model, loop_control=True, max_messages=2, name="booker")
    history = [reactloop.Message.user("earlier"), reactloop.Message.assistant("ok")]
    with capture_spans() as spans:
        result = agent.run_sync("Book a flight", history=history)
    assert result.state is RunState.WAITING_FOR_USER
    [root] = spans.named("invoke_agent")
    names = [name for name, _ in _events(root)]
    assert names[0] == "reactloop.compaction" and "reactloop.no_tool_call" in names
    assert names[-1] == "reactloop.loop_control"
    events = dict(_events(root))
    assert events["reactloop.compaction"]["reactloop.compaction.tier"] == "prune"
    assert events["reactloop.no_tool_call"] == {"reactloop.iteration": 1,
                                                "reactloop.reminded": True}
    assert events["reactloop.loop_control"] == {"gen_ai.tool.name": "ask_question",
                                                "reactloop.run.state": "waiting_for_user"}
    assert root.status.status_code is StatusCode.UNSET


def test_session_runs_carry_the_conversation_id(tmp_path: Any) -> None:
    model = ScriptedModel(["first", "second"])
    session = Agent(model=model).session("trip-42", store=tmp_path / "s.sqlite3")
    with capture_spans() as spans:
        session.send_sync("hello")
        run(_drain(session.stream("again")))
    assert len(spans.named("invoke_agent")) == 2
    assert {s.attributes.get("gen_ai.conversation.id") for s in spans} == {"trip-42"}


async def _drain(events: Any) -> None:
    async for _ in events:
        pass


def test_mcp_tool_calls_are_execute_tool_spans() -> None:
    pytest.importorskip("mcp")
    from reactloop.mcp import MCPServer

    demo = MCPServer.stdio(sys.executable, [MCP_DEMO_SERVER], name="demo")
    model = ScriptedModel([ToolCall("demo_echo", {"text": "hi"}), "echoed"])
    with capture_spans() as spans:
        result = Agent(model=model, mcp_servers=[demo]).run_sync("echo hi")
    assert result.output == "echoed"
    [root] = spans.named("invoke_agent")
    [call] = spans.named("execute_tool")
    assert call.name == "execute_tool demo_echo"
    assert call.parent.span_id == root.context.span_id
    assert call.attributes["gen_ai.tool.call.id"] and "error.type" not in call.attributes


def test_instrument_turns_it_on_for_all_agents_and_instrument_false_opts_out() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    model = ScriptedModel(["a", "b", "c"])
    Agent(model=model, name="before").run_sync("x")  # off: nothing turned it on
    reactloop.instrument(tracer_provider=provider)
    Agent(model=model, name="on").run_sync("x")
    Agent(model=model, name="opted-out", instrument=False).run_sync("x")
    assert [s.name for s in exporter.get_finished_spans()] == ["chat scripted", "invoke_agent on"]


def test_agent_instrument_true_uses_the_global_provider_when_instrument_was_not_called() -> None:
    code = (
        "from opentelemetry import trace\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from opentelemetry.sdk.trace.export import SimpleSpanProcessor\n"
        "from opentelemetry.sdk.trace.export.in_memory_span_exporter import "
        "InMemorySpanExporter\n"
        "exporter = InMemorySpanExporter(); provider = TracerProvider()\n"
        "provider.add_span_processor(SimpleSpanProcessor(exporter))\n"
        "trace.set_tracer_provider(provider)\n"
        "from reactloop import Agent\n"
        "from reactloop.testing import ScriptedModel\n"
        "Agent(model=ScriptedModel(['hi']), instrument=True, name='g').run_sync('x')\n"
        "Agent(model=ScriptedModel(['hi']), name='plain').run_sync('x')\n"
        "print(sorted(s.name for s in exporter.get_finished_spans()))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "['chat scripted', 'invoke_agent g']"


def test_a_run_without_instrumentation_never_imports_opentelemetry() -> None:
    code = (
        "import sys\n"
        "from reactloop import Agent\n"
        "from reactloop.testing import ScriptedModel\n"
        "Agent(model=ScriptedModel(['hi']), instrument=False).run_sync('x')\n"
        "Agent(model=ScriptedModel(['hi'])).run_sync('x')\n"
        "print([m for m in sys.modules if m.startswith('opentelemetry')])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_without_the_extra_turning_it_on_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk", None)
    with pytest.raises(UserError, match=r"pip install 'reactloop\[otel\]'"):
        Agent(model=ScriptedModel([]), instrument=True)
    with pytest.raises(UserError, match=r"reactloop\[otel\]"):
        reactloop.instrument()
    with pytest.raises(UserError, match=r"reactloop\[otel\]"), capture_spans():
        pass


def test_bad_settings_are_configuration_errors() -> None:
    with pytest.raises(UserError, match="instrument must be True, False or None"):
        Agent(model=ScriptedModel([]), instrument="yes")  # type: ignore[arg-type]
    with pytest.raises(UserError, match="include_content must be True or False"):
        reactloop.instrument(include_content="no")  # type: ignore[arg-type]
    with pytest.raises(UserError, match="redact must be a function"):
        reactloop.instrument(redact="x")  # type: ignore[arg-type]


def test_cached_input_tokens_are_reported_where_the_provider_reports_them() -> None:
    usage = Usage(120, 10, cache_read_tokens=100, cache_write_tokens=20)
    model = ScriptedModel([ModelResponse(text="hi", usage=usage)])
    with capture_spans() as spans:
        Agent(model=model).run_sync("x")
    [chat] = spans.named("chat")
    assert chat.attributes["gen_ai.usage.input_tokens"] == 120
    assert chat.attributes["gen_ai.usage.cache_read.input_tokens"] == 100
    assert chat.attributes["gen_ai.usage.cache_creation.input_tokens"] == 20


def test_adapters_report_cached_input_tokens_as_part_of_the_input() -> None:
    from reactloop.models.anthropic import parse_message
    from reactloop.models.gemini import parse_response
    from reactloop.models.openai import parse_completion

    anthropic = parse_message({"content": [{"type": "text", "text": "hi"}], "usage": {
        "input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 20}})
    # Anthropic's input_tokens leave the cached part out; ours (and OpenTelemetry's) do not
    assert anthropic.usage == Usage(130, 5, 100, 20)
    openai = parse_completion({"choices": [{"message": {"content": "hi"}}], "usage": {
        "prompt_tokens": 130, "completion_tokens": 5,
        "prompt_tokens_details": {"cached_tokens": 100}}})
    assert openai.usage == Usage(130, 5, 100, 0)
    gemini = parse_response({"candidates": [{"content": {"parts": [{"text": "hi"}]}}],
                             "usage_metadata": {"prompt_token_count": 130,
                                                "candidates_token_count": 5,
                                                "cached_content_token_count": 100}})
    assert gemini.usage == Usage(130, 5, 100, 0)


def test_another_runtime_executes_each_traced_call_as_a_batch_of_one() -> None:
    from reactloop.runtime import LocalRuntime

    class Counting(LocalRuntime):
        def __init__(self) -> None:
            self.batches: list[int] = []

        async def run_tools(self, batch: Any) -> Any:
            self.batches.append(len(batch.calls))
            return await super().run_tools(batch)

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: first addend
            b: second addend
        """
        return a + b

    model = ScriptedModel([[ToolCall("add", {"a": 1, "b": 2}), ToolCall("add", {"a": 3, "b": 4})],
                           "3 and 7"])
    runtime = Counting()
    with capture_spans() as spans:
        result = Agent(model=model, tools=[add], runtime=runtime).run_sync("add")
    assert [r.result for r in result.steps[0].results] == [3, 7]
    assert runtime.batches == [1, 1]
    assert len(spans.named("execute_tool add")) == 2


def test_otlp_settings_from_the_standard_variables() -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    from reactloop._otel._export import otlp_telemetry

    assert _instrument.otlp_wanted(None, {}) is False
    assert _instrument.otlp_wanted("http://127.0.0.1:4318", {}) is True
    assert _instrument.otlp_wanted(None, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318"})
    assert _instrument.otlp_wanted(None, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://x"})
    with pytest.raises(UserError, match="set it to http/protobuf"):
        otlp_telemetry(None, {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
    with pytest.raises(UserError, match=r"--otlp needs the receiver's http:// or https:// URL"):
        otlp_telemetry("127.0.0.1:4318", {})
    telemetry, stop = otlp_telemetry("http://127.0.0.1:9", {
        "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
        "OTEL_SERVICE_NAME": "my-agent"})
    try:
        assert telemetry.include_content is True
        assert telemetry.tracer_provider.resource.attributes["service.name"] == "my-agent"
    finally:
        stop()
