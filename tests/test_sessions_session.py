"""Sessions: multi-turn persistence, compaction, secrets, other backends, and the CLI."""

from __future__ import annotations

import asyncio
import builtins
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import aclosing
from pathlib import Path

import pytest
from click.testing import CliRunner

from reactloop import (
    Agent,
    Event,
    Message,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    RunResult,
    RunState,
    SessionBusy,
    ToolCall,
    UserError,
)
from reactloop.context import Compaction, check_pairs
from reactloop.sessions import Session, SessionInfo, SessionStore, open_store
from reactloop.testing import FunctionModel, ScriptedModel


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first
        b: second
    """
    return a + b


def another(store_arg: str) -> SessionStore:
    """A second store object on the same file or database (its own connections)."""
    return type(open_store(store_arg))(store_arg)  # type: ignore[call-arg]


def test_a_session_remembers_across_sends_and_store_objects(store_arg: str) -> None:
    path = store_arg
    model = ScriptedModel([ToolCall("add", {"a": 2, "b": 3}), "5", "You asked about 2+3."])
    agent = Agent(model=model, tools=[add])
    session = agent.session("math", store=path)
    assert isinstance(session, Session) and session.id == "math" and session.messages == []
    first = session.send_sync("What is 2+3?")
    assert first.output == "5" and len(session.messages) == 4
    again = agent.session("math", store=another(path))  # another store object, same data
    assert again.messages == session.messages
    second = again.send_sync("What did I ask?")
    assert [m.content for m in model.requests[-1].messages][:1] == ["What is 2+3?"]
    assert second.messages[:4] == first.messages
    assert another(path).get("math") == list(second.messages)


def test_new_sessions_get_unique_ids(tmp_path: Path) -> None:
    agent = Agent(model=ScriptedModel(["a", "b"]))
    one, two = agent.session(store=tmp_path / "s.db"), agent.session(store=tmp_path / "s.db")
    assert one.id != two.id and len(one.id) >= 16


def test_stream_and_async_send(store_arg: str) -> None:
    model = ScriptedModel(["streamed answer", "plain"])
    session = Agent(model=model).session("s", store=store_arg)

    async def go() -> list[str]:
        types = [e.type async for e in session.stream("hi")]
        await session.send("again")
        return types

    types = asyncio.run(go())
    assert types[0] == "run_start" and types[-1] == "run_end" and "text_delta" in types
    assert [m.content for m in another(store_arg).get("s")] == [
        "hi", "streamed answer", "again", "plain"]


def test_an_abandoned_stream_keeps_what_was_written(store_arg: str) -> None:
    model = ScriptedModel([ToolCall("add", {"a": 1, "b": 1}), "2", "fine"])
    session = Agent(model=model, tools=[add]).session("s", store=store_arg)

    async def stop_early() -> None:
        async with aclosing(session.stream("1+1?")) as events:
            async for event in events:
                if event.type == "tool_result":
                    break

    asyncio.run(stop_early())
    assert [m.role for m in session.messages] == ["user", "assistant", "tool"]
    assert session.messages == another(store_arg).get("s")
    session.send_sync("go on")  # the session is usable again
    assert check_pairs(session.messages) == []


def test_one_message_at_a_time(store_arg: str) -> None:
    gate, entered = asyncio.Event(), asyncio.Event()

    async def slow(request: ModelRequest) -> str:
        entered.set()
        await gate.wait()
        return "ok"

    session = Agent(model=FunctionModel(slow)).session("s", store=store_arg)

    async def go() -> None:
        first = asyncio.create_task(session.send("one"))
        await entered.wait()  # the first message is with the model
        with pytest.raises(SessionBusy, match=r"session 's' is busy: another writer \(pid"):
            await session.send("two")
        other = Agent(model=ScriptedModel(["three"])).session("s", store=another(store_arg))
        with pytest.raises(SessionBusy):  # another session object on the same id, too
            await other.send("three")
        other.wait = 60  # …or it waits for the first to finish
        waiting = asyncio.create_task(other.send("three"))
        await asyncio.sleep(0)
        assert not waiting.done()
        gate.set()
        await first
        assert (await waiting).output == "three"
        assert [m.content for m in other.messages] == ["one", "ok", "three", "three"]

    asyncio.run(go())


def test_compaction_rewrites_the_stored_history(store_arg: str) -> None:
    def fn(request: ModelRequest) -> ModelResponse | ToolCall:
        if request.system.startswith("You compress"):
            return ModelResponse(text="summary: many fetches")
        if len(model.requests) > 20:
            return ModelResponse(text="done")
        return ToolCall("fetch", {"i": len(model.requests)})

    def fetch(i: int) -> str:
        """Fetch.

        Args:
            i: which
        """
        return "data " * 400

    model = FunctionModel(fn, context_window=4000)
    agent = Agent(model=model, tools=[fetch], max_iterations=40,
                  compaction=Compaction(keep_last=2))
    session = agent.session("big", store=store_arg)
    result = session.send_sync("fetch a lot")
    assert result.state is RunState.COMPLETED
    assert any(m.metadata.get("kind") == "summary" for m in result.messages)
    stored = another(store_arg).get("big")
    assert stored == list(result.messages) == session.messages
    assert Session(agent, "big", open_store(store_arg)).messages == stored


def test_api_keys_are_never_stored(store_arg: str, tmp_path: Path) -> None:
    secret = "sk-test-DO-NOT-STORE-0123456789"

    class KeyedModel(ScriptedModel):
        api_key = secret

    model = KeyedModel([ToolCall("add", {"a": 1, "b": 2}), "3"])
    agent = Agent(model=model, tools=[add], deps={"api_key": secret},
                  model_settings=ModelSettings(extra={"api_key": secret}))
    agent.session("k", store=store_arg).send_sync("1+2")
    if "://" in store_arg:  # every column of every reactloop table
        import psycopg

        with psycopg.connect(store_arg) as conn:
            raw = "".join(str(row) for table in ("sessions", "messages", "migrations")
                          for row in conn.execute(f"SELECT * FROM reactloop_{table}"))
        assert "1+2" in raw and secret not in raw
    else:
        data = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
        assert data and secret.encode() not in data


class DictWriter:
    def __init__(self, store: DictStore, session_id: str) -> None:
        self.store, self.session_id = store, session_id

    def get(self) -> builtins.list[Message]:
        return self.store.get(self.session_id)

    def append(self, messages: Sequence[Message]) -> None:
        self.store.data.setdefault(self.session_id, []).extend(messages)

    def replace(self, messages: Sequence[Message]) -> None:
        self.store.data[self.session_id] = builtins.list(messages)

    def close(self) -> None:
        self.store.busy.discard(self.session_id)

    def __enter__(self) -> DictWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class DictStore:
    """A minimal other backend: the protocol is all a session needs."""

    def __init__(self) -> None:
        self.data: dict[str, builtins.list[Message]] = {}
        self.busy: set[str] = set()

    def get(self, session_id: str) -> builtins.list[Message]:
        return builtins.list(self.data.get(session_id, []))

    def writer(self, session_id: str) -> DictWriter:
        if session_id in self.busy:
            raise SessionBusy(f"session {session_id!r} is busy")
        self.busy.add(session_id)
        return DictWriter(self, session_id)

    def append(self, session_id: str, messages: Sequence[Message]) -> None:
        with self.writer(session_id) as w:
            w.append(messages)

    def replace(self, session_id: str, messages: Sequence[Message]) -> None:
        with self.writer(session_id) as w:
            w.replace(messages)

    def clear(self, session_id: str) -> None:
        self.data[session_id] = []

    def delete(self, session_id: str) -> bool:
        return self.data.pop(session_id, None) is not None

    def close(self) -> None:
        pass

    def list(self) -> builtins.list[SessionInfo]:
        return [SessionInfo(k, 0, 0, len(v)) for k, v in self.data.items()]


def test_any_store_implementing_the_protocol_works() -> None:
    store = DictStore()
    assert isinstance(store, SessionStore)
    session = Agent(model=ScriptedModel(["a"])).session("m", store=store)
    session.send_sync("q")
    assert [m.content for m in store.data["m"]] == ["q", "a"] and store.busy == set()
    session.clear()
    assert store.data["m"] == [] and session.messages == []
    with pytest.raises(UserError, match="not a session store"):
        Agent(model=ScriptedModel([])).session("x", store=object())  # type: ignore[arg-type]


# -- the CLI -------------------------------------------------------------------------------
def test_cli_list_show_delete(tmp_path: Path) -> None:
    from reactloop.cli import main

    path = tmp_path / "s.sqlite3"
    model = ScriptedModel([ToolCall("add", {"a": 2, "b": 3}), "The sum is 5."])
    Agent(model=model, tools=[add]).session("demo", store=path).send_sync("Add 2 and 3")
    runner = CliRunner()

    out = runner.invoke(main, ["sessions", "list", "--store", str(path)])
    assert out.exit_code == 0 and "demo" in out.output and "Add 2 and 3" in out.output
    out = runner.invoke(main, ["sessions", "list", "--store", str(path), "--json"])
    assert json.loads(out.output)[0]["messages"] == 4

    out = runner.invoke(main, ["sessions", "show", "demo", "--store", str(path)])
    assert out.exit_code == 0
    for text in ("Add 2 and 3", "→ add", '"a": 2', "← add: 5", "The sum is 5."):
        assert text in out.output
    out = runner.invoke(main, ["sessions", "show", "demo", "--store", str(path), "--json"])
    assert json.loads(out.output)[1]["tool_calls"][0]["name"] == "add"

    out = runner.invoke(main, ["sessions", "show", "nope", "--store", str(path)])
    assert out.exit_code == 1 and "no session 'nope'" in out.output
    out = runner.invoke(main, ["sessions", "delete", "demo", "--store", str(path)])
    assert out.exit_code == 0 and "deleted" in out.output
    out = runner.invoke(main, ["sessions", "delete", "demo", "--store", str(path)])
    assert out.exit_code == 1
    out = runner.invoke(main, ["sessions", "list", "--store", str(path)])
    assert "no sessions" in out.output


def test_cli_without_a_store_file(tmp_path: Path) -> None:
    from reactloop.cli import main

    missing = tmp_path / "missing.sqlite3"
    runner = CliRunner()
    assert "no sessions" in runner.invoke(main, ["sessions", "list", "--store",
                                                 str(missing)]).output
    out = runner.invoke(main, ["sessions", "show", "x", "--store", str(missing)])
    assert out.exit_code == 1 and "no session store" in out.output
    assert not missing.exists()  # reading never creates a store


# -- one behaviour: conversation and session ---------------------------------------------------
def test_conversation_and_session_are_one_class(tmp_path: Path) -> None:
    from reactloop import Conversation
    from reactloop.sessions import MemoryStore

    agent = Agent(model=ScriptedModel(["a", "b", "c", "d"]))
    conversation, session = agent.conversation(), agent.session("s", store=tmp_path / "s.db")
    assert isinstance(conversation, Session) and isinstance(conversation, Conversation)
    assert type(session) is Session and isinstance(conversation.store, MemoryStore)
    for chat in (conversation, session):  # the same behaviour, with and without a file
        chat.send_sync("one")
        assert chat.last is not None and chat.last.output in ("a", "c")
        chat.messages.append(Message.user("not stored"))  # a copy: changes nothing
        chat.send_sync("two")
        assert [m.role for m in chat.messages] == ["user", "assistant"] * 2
        assert chat.store.get(chat.id) == chat.messages
    assert repr(conversation).startswith("Conversation(")


def test_a_conversation_starts_from_a_history_and_repairs_it() -> None:
    from reactloop import Conversation
    from reactloop.context._units import INTERRUPTED

    history = [Message.user("2+3?"), Message.assistant("", [ToolCall("add", {"a": 2, "b": 3},
                                                                     "c1")])]
    model = ScriptedModel(["I was interrupted; 5."])
    conversation = Conversation(Agent(model=model, tools=[add]), history)
    assert conversation.messages[2].content == INTERRUPTED  # every call has its result
    conversation.send_sync("well?")
    assert [m.content for m in model.requests[0].messages][:1] == ["2+3?"]
    assert check_pairs(model.requests[0].messages) == []


def test_history_only_starts_a_new_session(tmp_path: Path) -> None:
    agent = Agent(model=ScriptedModel(["a"]))
    agent.session("s", store=tmp_path / "s.db").send_sync("hi")
    with pytest.raises(UserError, match="already has 2 messages"):
        Session(agent, "s", tmp_path / "s.db", history=[Message.user("earlier")])


def test_any_object_with_run_and_stream_is_an_agent() -> None:
    class Echo:
        """Not a reactloop Agent: the public run/stream with history and on_message."""

        def __init__(self) -> None:
            self.agent = Agent(model=FunctionModel(
                lambda r: f"{len(r.messages)} messages so far"))

        def run(self, prompt: str, *, history: Sequence[Message] = (),
                on_message: Callable[[Message], None] | None = None) -> Awaitable[RunResult]:
            return self.agent.run(prompt, history=history, on_message=on_message)

        def stream(self, prompt: str, *, history: Sequence[Message] = (),
                   on_message: Callable[[Message], None] | None = None
                   ) -> AsyncIterator[Event]:
            return self.agent.stream(prompt, history=history, on_message=on_message)

    chat = Session(Echo())
    assert chat.send_sync("one").output == "1 messages so far"
    assert chat.send_sync("two").output == "3 messages so far"


def test_sessions_never_import_the_agent_or_the_loop() -> None:
    import ast

    import reactloop.sessions

    folder = Path(reactloop.sessions.__file__).parent
    for source in folder.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not name.startswith(("reactloop.agent", "reactloop._loop")), source
            if isinstance(node, ast.ImportFrom) and node.module == "reactloop":
                assert "Agent" not in [a.name for a in node.names], source


def test_import_reactloop_loads_no_database_driver() -> None:
    import subprocess
    import sys

    code = ("import sys, reactloop\n"
            "print([m for m in ('sqlite3', 'psycopg', 'psycopg_pool') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_wait_is_a_finite_number_of_seconds() -> None:
    session = Agent(model=ScriptedModel([])).conversation()
    for bad in (float("nan"), float("inf"), -1, "5", True):
        with pytest.raises(UserError, match="wait must be a finite number"):
            session.wait = bad  # type: ignore[assignment]
    with pytest.raises(UserError, match="wait must be a finite number"):
        Session(Agent(model=ScriptedModel([])), wait=float("nan"))
    session.wait = 2
    assert session.wait == 2.0
