"""MCP elicitation: a server asks the user while its tool runs; the handler's answer (accept
with values, decline, cancel) reaches the server. Real servers: the reference server (stdio)
and tests/mcp_features_server.py (FastMCP, a 2026-07-28 connection: input-required results).
The terminal form (reactloop.mcp._ask_terminal) is driven by scripted answer lines here and
through a pseudo-terminal in tests/test_cli_mcp_features.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from _mcp_servers import everything, features
from conftest import run
from reactloop import Agent, RunState, ToolCall
from reactloop.mcp import Elicitation, ElicitationAnswer
from reactloop.mcp._ask_terminal import form_elicitor
from reactloop.testing import ScriptedModel

pytestmark = pytest.mark.slow


def book_with(handler: Any, **options: Any) -> Any:
    model = ScriptedModel([ToolCall("features_book", {}), "done"])
    result = run(Agent(model, mcp_servers=[features(elicitation=handler, **options)]).run("go"))
    assert result.state is RunState.COMPLETED
    return next(m for m in result.messages if m.role == "tool")


def test_accept_decline_and_cancel_reach_the_server() -> None:
    seen: list[Elicitation] = []

    async def accept(request: Elicitation) -> ElicitationAnswer:
        seen.append(request)
        return ElicitationAnswer.accept(name="Ada", seats=2)

    assert book_with(accept).content == "booked 2 for Ada (window: False)"
    assert book_with(lambda r: ElicitationAnswer.decline()).content == "not booked: decline"
    assert book_with(lambda r: ElicitationAnswer.cancel()).content == "not booked: cancel"
    (request,) = seen
    assert request.server == "features" and request.message == "Who is travelling?"
    fields = {f.name: f for f in request.fields}
    assert (fields["seats"].kind, fields["seats"].minimum, fields["seats"].maximum) == (
        "integer", 1, 8)
    assert fields["window"].kind == "boolean" and not fields["window"].required


def test_without_a_handler_the_server_is_told_at_once_never_a_hang() -> None:
    tool_message = book_with(None)
    assert tool_message.is_error and "elicit" in tool_message.content.lower()

    async def names() -> list[str]:
        async with everything().open() as tools:
            return [t.name for t in tools]

    assert "everything_trigger-elicitation-request" not in run(names())


def test_a_failing_handler_is_an_error_the_server_hears() -> None:
    def broken(request: Elicitation) -> ElicitationAnswer:
        raise RuntimeError("no screen")

    tool_message = book_with(broken)
    assert tool_message.is_error


def test_time_spent_answering_does_not_count_against_the_tools_timeout() -> None:
    async def slow_person(request: Elicitation) -> ElicitationAnswer:
        await asyncio.sleep(3)  # a person taking longer than the server's timeout
        return ElicitationAnswer.accept(name="Bo", seats=1)

    assert book_with(slow_person, timeout=1.5, startup_timeout=60).content == "booked 1 for Bo (window: False)"


def test_the_terminal_form_fills_the_reference_servers_schema() -> None:
    answers = iter(["y", "Ada", "maybe", "y", "", "ada@example", "ada@example.com",
                    "https://ada.dev", "1815-12-10", "500", "7", "", "7", "2", "1,3", "",
                    "", "2"])
    said: list[str] = []

    async def prompt(question: str) -> str:
        said.append(question)
        return next(answers)

    model = ScriptedModel([ToolCall("everything_trigger-elicitation-request", {}), "done"])
    server = everything(elicitation=form_elicitor(prompt, said.append))
    result = run(Agent(model, mcp_servers=[server]).run("go"))
    text = next(m for m in result.messages if m.role == "tool").content
    assert "User provided the requested information" in text
    assert "- Name: Ada" in text and "- Email: ada@example.com" in text
    assert "- Favorite Integer: 7" in text
    assert '"untitledSingleSelectEnum": "Rachel"' in text
    assert '"untitledMultipleSelectEnum": [\n      "Guitar",\n      "Violin"\n    ]' in text
    assert "  answer yes or no" in said and "  not a valid email" in said
    assert "  must be at most 100" in said and "  choose one of 1 (Monica), 2 (Rachel), " \
        "3 (Joey), 4 (Chandler), 5 (Ross), 6 (Phoebe)" in said


def test_the_terminal_form_declines_and_cancels() -> None:
    async def no(question: str) -> str:
        return "n"

    async def gone(question: str) -> str:
        raise EOFError

    assert book_with(form_elicitor(no, print)).content == "not booked: decline"
    assert book_with(form_elicitor(gone, print)).content == "not booked: cancel"


def test_url_mode_shows_the_address_and_accepts() -> None:
    said: list[str] = []

    async def prompt(question: str) -> str:
        said.append(question)
        return "y"

    model = ScriptedModel([ToolCall("everything_trigger-url-elicitation",
                                    {"url": "https://example.com/sign-in"}), "done"])
    server = everything(elicitation=form_elicitor(prompt, said.append))
    result = run(Agent(model, mcp_servers=[server]).run("go"))
    text = next(m for m in result.messages if m.role == "tool").content
    assert "User completed the URL elicitation flow" in text
    assert "  open: https://example.com/sign-in" in said
