"""URL-mode elicitation (MCP 2025-11-25): the server sends the user to a URL (sign in, link an
account) instead of asking through the client. What the protocol asks of the client: show the
URL (and its site) to the user and never open it unasked, send the user's answer, honour
``notifications/elicitation/complete`` (an ``mcp_elicitation_complete`` event), and answer a
call refused with ``-32042`` (URL elicitation required) by showing its URLs, waiting for their
completion (never without bound) and sending the call once more. Real server:
tests/mcp_url_server.py (a 2025-11-25 server on the wire over stdio)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from _mcp_servers import Events
from conftest import run
from reactloop import Agent, RunState, ToolCall
from reactloop.mcp import Elicitation, ElicitationAnswer, MCPServer
from reactloop.mcp._ask_terminal import form_elicitor
from reactloop.testing import ScriptedModel

pytestmark = pytest.mark.slow

URL_SERVER = str(Path(__file__).with_name("mcp_url_server.py"))


def url_server(handler: Any, **options: Any) -> MCPServer:
    return MCPServer.stdio(sys.executable, [URL_SERVER], name="url", elicitation=handler,
                           **options)


def call(server: MCPServer, tool: str, arguments: dict[str, Any] | None = None,
         events: Events | None = None) -> Any:
    async def go() -> Any:
        async with server.open(events or Events()) as tools:
            (found,) = [t for t in tools if t.name == f"url_{tool}"]
            return await found.call(arguments or {})

    return run(go())


def test_a_url_asked_inside_a_call_is_shown_and_its_completion_heard() -> None:
    seen: list[Elicitation] = []

    def accept(request: Elicitation) -> ElicitationAnswer:
        seen.append(request)
        return ElicitationAnswer.accept()

    events = Events()
    assert call(url_server(accept), "sign_in", events=events) == "signed in"
    (request,) = seen
    assert (request.mode, request.url, request.elicitation_id) == (
        "url", "https://example.com/sign-in?session=abc", "sign-in-1")
    assert request.fields == []
    (done,) = events.named("mcp_elicitation_complete")
    assert done == {"server": "url", "elicitation_id": "sign-in-1",
                    "url": "https://example.com/sign-in?session=abc"}
    assert call(url_server(lambda r: ElicitationAnswer.decline()), "sign_in") == (
        "not signed in: decline")


def test_a_call_refused_with_url_required_is_sent_again_after_the_url_step() -> None:
    seen: list[Elicitation] = []

    async def accept(request: Elicitation) -> ElicitationAnswer:
        seen.append(request)
        return ElicitationAnswer.accept()

    events = Events()
    assert call(url_server(accept), "link_account", events=events) == "account linked"
    (request,) = seen
    assert (request.url, request.elicitation_id, request.tool) == (
        "https://example.com/link?user=7", "link-1", "link_account")
    assert [e["elicitation_id"] for e in events.named("mcp_elicitation_complete")] == ["link-1"]


def run_link(handler: Any, **options: Any) -> Any:
    model = ScriptedModel([ToolCall("url_link_account", {"complete": False}), "done"])
    result = run(Agent(model, mcp_servers=[url_server(handler, **options)]).run("go"))
    assert result.state is RunState.COMPLETED
    return next(m for m in result.messages if m.role == "tool")


def test_a_declined_or_unconfirmed_url_step_is_a_tool_error_never_a_hang() -> None:
    declined = run_link(lambda r: ElicitationAnswer.decline())
    assert declined.is_error
    assert "did not open https://example.com/link?user=7 (decline)" in declined.content
    # accepted, but the server never says the step is complete: bounded by the timeout
    waited = run_link(lambda r: ElicitationAnswer.accept(), timeout=1.0)
    assert waited.is_error and "did not confirm the step" in waited.content
    nobody = run_link(None)
    assert nobody.is_error and "there is nobody to ask here" in nobody.content


def test_the_terminal_shows_the_whole_url_and_its_site() -> None:
    said: list[str] = []

    async def prompt(question: str) -> str:
        said.append(question)
        return "y"

    assert call(url_server(form_elicitor(prompt, said.append)), "sign_in") == "signed in"
    assert "MCP server 'url' asks: Sign in to Example to continue." in said
    assert "  open: https://example.com/sign-in?session=abc" in said
    assert any("on the site example.com" in line for line in said)
