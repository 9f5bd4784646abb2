"""Attachments on the wire (issue 26): each adapter's request body, sent by the real SDK to a
loopback server replaying recorded payloads, is checked against the SDK's own request types
(pydantic validation of its TypedDicts / models). No network.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import TypeAdapter

from _files import pdf, png
from _recorded_server import RecordedServer, payload, recorded_server
from reactloop import Agent, Document, Image, RunState
from reactloop.attachments import IMAGE_TYPES

PNG = png(seed=5)
PLOT = png(seed=9)
PDF = pdf("Invoice total: 42 EUR")


def _materialised(value: Any) -> Any:
    """Pydantic checks ``Iterable`` fields lazily: walk them so every item is validated."""
    if isinstance(value, dict):
        return {k: _materialised(v) for k, v in value.items()}
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    if hasattr(value, "__iter__"):
        return [_materialised(v) for v in value]
    return value


def _b64(data: bytes, *, urlsafe: bool = False) -> str:
    return (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(data).decode()


def add(a: int, b: int) -> object:
    """Add two integers and draw the sum.

    Args:
        a: first addend
        b: second addend
    """
    return [f"{a + b}", Image.from_bytes(PLOT, name="plot.png")]


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city
    """
    return f"sunny in {city}"


@pytest.fixture
def server() -> Iterator[RecordedServer]:
    with recorded_server() as s:
        yield s


def _prompt() -> list[object]:
    return ["What do these show?", Image.from_bytes(PNG, name="shot.png"),
            Document.from_bytes(PDF, name="invoice.pdf"),
            Image.from_url("https://example.com/cat.jpg")]


# -- OpenAI (and OpenAI-compatible servers) -----------------------------------------------
def _openai(server: RecordedServer, *, compatible: bool = False) -> Any:
    import openai

    from reactloop.models.openai import OpenAIModel

    if compatible:  # a server of its own (vLLM, Ollama…): pictures natively, PDFs as text
        return OpenAIModel("llava", base_url=server.url + "/v1", api_key="sk-test")
    client = openai.AsyncOpenAI(api_key="sk-test", base_url=server.url + "/v1", max_retries=0)
    return OpenAIModel("gpt-4o", client=client)  # as against api.openai.com


def test_openai_sends_image_and_file_parts_and_tool_pictures_after_the_results(
        server: RecordedServer) -> None:
    from openai.types.chat import ChatCompletionMessageParam

    server.queue(payload("openai", "two_tool_calls.json"), payload("openai", "plain.json"))
    result = Agent(model=_openai(server), tools=[add, get_weather]).run_sync(_prompt())
    assert result.state is RunState.COMPLETED, result.error
    first, second = (r.body["messages"] for r in server.requests)
    check = TypeAdapter(ChatCompletionMessageParam)
    for m in second:
        _materialised(check.validate_python(m))
    assert first[-1] == {"role": "user", "content": [
        {"type": "text", "text": "What do these show?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{_b64(PNG)}"}},
        {"type": "file", "file": {"filename": "invoice.pdf",
                                  "file_data": f"data:application/pdf;base64,{_b64(PDF)}"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}}]}
    # tool messages hold text only: the picture follows the batch's results as a user message
    assert [m["role"] for m in second[-4:]] == ["assistant", "tool", "tool", "user"]
    assert second[-3]["content"] == "sunny in Paris"
    assert second[-2]["content"] == "42\n[image plot.png (image/png, 81 bytes)]"
    assert second[-1]["content"] == [
        {"type": "text", "text": "Returned by add (call call_Lx7bA1dZcS3QnPqkI0wWyVdD):"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{_b64(PLOT)}"}}]
    assert second[:len(first)] == first  # the prefix is byte-stable


def test_an_openai_compatible_server_gets_pictures_and_a_pdfs_text(
        server: RecordedServer) -> None:
    from openai.types.chat import ChatCompletionMessageParam

    server.queue(payload("openai", "plain.json"))
    model = _openai(server, compatible=True)
    assert model.accepts == frozenset(IMAGE_TYPES)
    Agent(model=model).run_sync(_prompt())
    last = server.requests[0].body["messages"][-1]
    check = TypeAdapter(ChatCompletionMessageParam)  # alive while its lazy iterators run
    _materialised(check.validate_python(last))
    assert [p["type"] for p in last["content"]] == ["text", "image_url", "image_url"]
    assert "Invoice total: 42 EUR" in last["content"][0]["text"]


# -- Anthropic ------------------------------------------------------------------------------
def test_anthropic_sends_image_and_document_blocks_and_pictures_inside_tool_results(
        server: RecordedServer) -> None:
    from anthropic.types import MessageParam

    from reactloop.models.anthropic import AnthropicModel

    server.queue(payload("anthropic", "tool_call.json"), payload("anthropic", "text.json"))
    model = AnthropicModel("claude-sonnet-4-5", api_key="sk-ant-test", base_url=server.url)
    result = Agent(model=model, tools=[add]).run_sync(_prompt())
    assert result.state is RunState.COMPLETED, result.error
    first, second = (r.body["messages"] for r in server.requests)
    check = TypeAdapter(MessageParam)
    for m in second:
        _materialised(check.validate_python(m))
    assert first[0]["content"] == [
        {"type": "text", "text": "What do these show?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": _b64(PNG)}},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                        "data": _b64(PDF)}, "title": "invoice.pdf"},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}}]
    (result_block,) = second[-1]["content"]
    assert result_block["type"] == "tool_result" and result_block["content"] == [
        {"type": "text", "text": "5\n[image plot.png (image/png, 81 bytes)]"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": _b64(PLOT)}}]


# -- Gemini ---------------------------------------------------------------------------------
def test_gemini_sends_inline_and_file_data_and_pictures_after_a_function_response(
        server: RecordedServer) -> None:
    from google.genai import types

    from reactloop.models.gemini import GeminiModel

    server.queue(payload("gemini", "tool_call.json"), payload("gemini", "text.json"))
    model = GeminiModel("gemini-2.5-flash", api_key="test-key", base_url=server.url)
    result = Agent(model=model, tools=[add]).run_sync(_prompt())
    assert result.state is RunState.COMPLETED, result.error
    first, second = (r.body["contents"] for r in server.requests)
    for content in second:
        types.Content.model_validate_json(json.dumps(content))
    # (the SDK writes the blobs' own fields in snake case and URL-safe base64; the API takes
    # both)
    assert first[0] == {"role": "user", "parts": [
        {"text": "What do these show?"},
        {"inlineData": {"mime_type": "image/png", "data": _b64(PNG, urlsafe=True)}},
        {"inlineData": {"mime_type": "application/pdf", "data": _b64(PDF, urlsafe=True)}},
        {"fileData": {"file_uri": "https://example.com/cat.jpg", "mime_type": "image/jpeg"}}]}
    response, picture = second[-1]["parts"]
    assert response["functionResponse"]["name"] == "add"
    assert picture == {"inlineData": {"mime_type": "image/png",
                                      "data": _b64(PLOT, urlsafe=True)}}


def test_every_adapter_declares_what_it_reads() -> None:
    from reactloop.models.anthropic import AnthropicModel
    from reactloop.models.gemini import GeminiModel
    from reactloop.models.local import LocalModel
    from reactloop.models.text_protocol import TextToolProtocol

    full = frozenset((*IMAGE_TYPES, "application/pdf"))
    assert AnthropicModel("c", api_key="k").accepts == full
    assert GeminiModel("g", api_key="k").accepts == full
    assert LocalModel.accepts == frozenset()  # text only: PDFs as text, pictures refused
    assert TextToolProtocol(AnthropicModel("c", api_key="k")).accepts == full
