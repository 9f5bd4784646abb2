"""Input-required results, the resumable form of MCP elicitation (2026-07-28), in-process:
reactloop drives the rounds itself. Live (a plain Agent, the CLI's terminal form), the
server's question goes to the elicitation handler and the call is sent again with the answer;
deferred (what a Temporal activity does), the call stops with the question, and a call sent
later — to a new server process — with the answer completes. Real server:
tests/mcp_input_server.py (FastMCP, sealed request state with a fixed key), which logs what it
asked and received with its process id.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import run
from reactloop import Agent, RunState, ToolCall
from reactloop.mcp import Elicitation, ElicitationAnswer, MCPServer
from reactloop.testing import ScriptedModel

pytestmark = pytest.mark.slow

pytest.importorskip("mcp")

INPUT_SERVER = str(Path(__file__).with_name("mcp_input_server.py"))
FEATURES = str(Path(__file__).with_name("mcp_features_server.py"))


def _never(request: Elicitation) -> ElicitationAnswer:
    raise AssertionError("a deferred question must not be asked live")


def _server(log: Path, **options: Any) -> MCPServer:
    return MCPServer.stdio(sys.executable, [INPUT_SERVER], name="input",
                           env={"REACTLOOP_TEST_LOG": str(log)}, **options)


def _lines(log: Path) -> list[list[str]]:
    return [line.split() for line in log.read_text().splitlines()] if log.exists() else []


def _book(log: Path, handler: Any) -> Any:
    model = ScriptedModel([ToolCall("input_book", {"city": "Lima"}), "done"])
    agent = Agent(model, mcp_servers=[_server(log, elicitation=handler)])
    result = agent.run_sync("Book me a seat to Lima.")
    assert result.state is RunState.COMPLETED, result.output
    return next(m for m in result.messages if m.role == "tool")


def test_the_handler_answers_and_the_call_is_sent_again_with_the_answer(tmp_path: Path
                                                                        ) -> None:
    seen: list[Elicitation] = []

    def accept(request: Elicitation) -> ElicitationAnswer:
        seen.append(request)
        return ElicitationAnswer.accept(name="Ada", seats=2)

    log = tmp_path / "log"
    assert _book(log, accept).content == "booked 2 to Lima for Ada"
    [request] = seen  # asked once, though the server's resolver ran in both rounds
    assert (request.server, request.message) == ("input", "Who is travelling?")
    assert [f.name for f in request.fields] == ["name", "seats"]
    assert [line[:-1] for line in _lines(log)] == [["asked"], ["asked"],
                                                   ["booked", "Lima", "Ada", "2"]]


def test_decline_and_cancel_reach_the_server(tmp_path: Path) -> None:
    log = tmp_path / "log"
    assert _book(log, lambda r: ElicitationAnswer.decline()).content == "not booked: decline"
    assert _book(log, lambda r: ElicitationAnswer.cancel()).content == "not booked: cancel"
    assert [line[:-1] for line in _lines(log) if line[0] != "asked"] == [
        ["not-booked", "Lima", "decline"], ["not-booked", "Lima", "cancel"]]


def test_without_a_handler_the_tool_fails_at_once_naming_elicitation(tmp_path: Path) -> None:
    message = _book(tmp_path / "log", None)
    assert message.is_error and "elicitation" in message.content.lower()


async def _deferred(server: MCPServer, resume: Any = None, tool: str = "input_book",
                    arguments: dict[str, Any] | None = None) -> tuple[Any, Any]:
    """Call ``tool`` (``book`` to Lima unless told) the way a Temporal activity does:
    questions deferred. Returns its output (None while a question waits) and the pending."""
    from reactloop.mcp._input_required import Deferral, InputPending, deferral

    held = Deferral(resume=resume)
    token = deferral.set(held)
    try:
        async with server.open() as tools:
            called = next(t for t in tools if t.name == tool)
            try:
                out = await called.call({"city": "Lima"} if arguments is None else arguments)
            except InputPending:
                out = None
            return out, held.pending
    finally:
        deferral.reset(token)


def _answers(pending: Any, data: dict[str, Any]) -> dict[str, Any]:
    [key] = pending["asks"]
    return {"state": pending["state"],
            "answers": {key: {"type": "ElicitResult", "data": data}}}


def test_a_deferred_question_is_answered_later_by_a_new_server_process(tmp_path: Path
                                                                       ) -> None:
    log = tmp_path / "log"
    out, pending = run(_deferred(_server(log, elicitation=_never)))
    assert out is None and pending["server"] == "input" and pending["tool"] == "book"
    [question] = pending["asks"].values()
    assert question["message"] == "Who is travelling?" and question["mode"] == "form"
    assert set(question["schema"]["properties"]) == {"name", "seats"}
    [[what, first_pid]] = _lines(log)
    assert what == "asked"
    answer = {"action": "accept", "content": {"name": "Ada", "seats": 3}}
    out, again = run(_deferred(_server(log, elicitation=_never), _answers(pending, answer)))  # a new process
    assert out == "booked 3 to Lima for Ada" and again is None
    booked = [line for line in _lines(log) if line[0] == "booked"]
    assert booked[0][:-1] == ["booked", "Lima", "Ada", "3"] and booked[0][-1] != first_pid


def test_a_server_that_cannot_open_its_old_state_says_so(tmp_path: Path) -> None:
    """The features server seals its request state with a key of its own process: a new
    process refuses the old state (the call fails with the server's error, nothing runs)."""
    server = MCPServer.stdio(sys.executable, [FEATURES], name="features", elicitation=_never)

    def call(resume: Any) -> Any:
        return _deferred(server, resume, "features_book", {})

    _, pending = run(call(None))
    answer = {"action": "accept", "content": {"name": "Ada", "seats": 1}}
    from mcp.shared.exceptions import MCPError

    with pytest.raises(MCPError, match="Invalid or expired requestState"):
        run(call(_answers(pending, answer)))
