"""What only the PostgreSQL store has: selection by URL, migrations, credentials kept out of
errors, a lost connection, pooling. (Everything both stores share runs over both, through the
``store_arg`` fixture, in the other tests/test_sessions_*.py files.)"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from reactloop import (
    Agent,
    Message,
    ModelRequest,
    SessionStoreError,
    ToolCall,
    UserError,
)
from reactloop.context import check_pairs
from reactloop.context._units import INTERRUPTED
from reactloop.sessions import PostgresStore, Session, open_store
from reactloop.sessions._postgres import redact
from reactloop.testing import FunctionModel, ScriptedModel


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reactloop: "), stderr
    return lines[0]


def test_a_url_selects_postgres_and_other_schemes_are_errors(
        postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reactloop.cli import main

    session = Agent(model=ScriptedModel(["hi"])).session("u", store=postgres_url)
    assert isinstance(session.store, PostgresStore)
    assert open_store(postgres_url) is session.store  # one store (one pool) per URL
    session.send_sync("hello")
    assert [m.content for m in open_store(postgres_url).get("u")] == ["hello", "hi"]

    monkeypatch.chdir(tmp_path)  # the old bug: folders named after the URL appeared here
    for url in ("foo://bar/baz", "sqlite:///tmp/x.db", "mysql://u:hunter2@h/db"):
        with pytest.raises(UserError, match="unsupported session store URL") as caught:
            Agent(model=ScriptedModel([])).session("x", store=url)
        assert "hunter2" not in str(caught.value)
        out = CliRunner().invoke(main, ["sessions", "list", "--store", url])
        assert out.exit_code == 1 and "unsupported session store URL" in one_line(out.stderr)
    assert list(tmp_path.iterdir()) == []


def test_the_cli_takes_a_url(postgres_url: str) -> None:
    from reactloop.cli import main

    model = ScriptedModel([ToolCall("add", {"a": 2, "b": 3}), "The sum is 5."])

    def add(a: int, b: int) -> int:
        """Add.

        Args:
            a: first
            b: second
        """
        return a + b

    Agent(model=model, tools=[add]).session("demo", store=postgres_url).send_sync("Add 2+3")
    runner = CliRunner()
    out = runner.invoke(main, ["sessions", "list", "--store", postgres_url])
    assert out.exit_code == 0 and "demo" in out.output and "Add 2+3" in out.output
    out = runner.invoke(main, ["sessions", "show", "demo", "--store", postgres_url])
    assert out.exit_code == 0 and "→ add" in out.output and "The sum is 5." in out.output
    out = runner.invoke(main, ["sessions", "delete", "demo", "--store", postgres_url])
    assert out.exit_code == 0 and open_store(postgres_url).list() == []
    out = runner.invoke(main, ["chat", "--model", "ollama:none", "--new-session", "c",
                               "--store", postgres_url], input="/session\n/exit\n")
    assert out.exit_code == 0 and "session c · 0 messages" in out.output


def test_migrations_are_numbered_and_a_newer_schema_is_refused(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    store.append("s", [Message.user("kept")])
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT version FROM reactloop_migrations ORDER BY version"
                            ).fetchall() == [(1,), (2,), (3,)]
        conn.execute("INSERT INTO reactloop_migrations VALUES (99, 0)")
    store.close()
    PostgresStore(postgres_url).close()  # nothing opened yet: no error
    with pytest.raises(SessionStoreError, match=r"newer reactloop \(schema 99; this one "
                                                r"knows up to 3\): upgrade reactloop"):
        PostgresStore(postgres_url).get("s")
    with psycopg.connect(postgres_url) as conn:  # refused, and nothing was changed
        assert conn.execute("SELECT data FROM reactloop_messages").fetchall() == [
            ('{"role": "user", "content": "kept"}',)]
        conn.execute("DELETE FROM reactloop_migrations WHERE version = 99")
    assert PostgresStore(postgres_url).get("s") == [Message.user("kept")]


def test_credentials_never_appear_in_errors(postgres_server: str) -> None:
    from reactloop.cli import main

    port = postgres_server.rsplit(":", 1)[1]
    secret = "s3cr3t-PASS"
    for url, says in (
        (f"postgresql://postgres:{secret}@127.0.0.1:{port}/no_such_db", "does not exist"),
        (f"postgresql://postgres:{secret}@127.0.0.1:1/db", "cannot be reached"),
        (f"postgresql://postgres@127.0.0.1:1/db?password={secret}", "cannot be reached"),
    ):
        store = PostgresStore(url, timeout=5)
        assert secret not in repr(store) and "***" in repr(store)
        with pytest.raises(SessionStoreError) as caught:
            Agent(model=ScriptedModel([])).session("x", store=store)
        text = str(caught.value)
        assert says in text and secret not in text and "***" in text
        assert caught.value.__cause__ is None and secret not in repr(caught.value.__context__)
        out = CliRunner().invoke(main, ["sessions", "list", "--store", url])
        assert out.exit_code == 1 and secret not in out.output and says in one_line(out.stderr)
    assert redact("postgresql://u:p%40ss@h:5/d?sslmode=require&password=x") == \
        "postgresql://u:***@h:5/d?sslmode=require&password=***"


def test_a_lost_connection_mid_run_is_a_clear_error_and_nothing_is_half_written(
        postgres_url: str) -> None:
    def cut() -> str:
        """Cut the session writer's database connection, as a network failure would."""
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            cut = admin.execute("SELECT pg_terminate_backend(pid) FROM pg_locks"
                                " WHERE locktype = 'advisory' AND granted").fetchall()
        assert cut == [(True,)]
        return "the result nobody stores"

    model = ScriptedModel([ToolCall("cut", {}), "back again"])
    session = Agent(model=model, tools=[cut]).session("lost", store=postgres_url)
    with pytest.raises(SessionStoreError, match="ended the connection") as caught:
        session.send_sync("cut the line")
    assert redact(postgres_url) in str(caught.value)
    stored = open_store(postgres_url).get("lost")  # the pool replaced the dead connections
    assert [m.role for m in stored] == ["user", "assistant"]  # committed ones only, no gap
    assert session.send_sync("and now?").output == "back again"
    stored = open_store(postgres_url).get("lost")
    assert stored[2].content == INTERRUPTED and check_pairs(stored) == []


def test_sends_beyond_the_pool_size_do_not_wait_for_each_other(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, max_size=1)
    n, entered = 4, []
    all_in = asyncio.Event()

    async def model(request: ModelRequest) -> str:
        entered.append(request.messages[-1].content)
        if len(entered) == n:
            all_in.set()
        await all_in.wait()  # every send is running at once, each holding its writer
        return "done"

    sessions = [Session(Agent(model=FunctionModel(model)), f"s{i}", store) for i in range(n)]

    async def go() -> list[str]:
        results = await asyncio.wait_for(
            asyncio.gather(*(s.send(f"from s{i}") for i, s in enumerate(sessions))), 60)
        return [r.output for r in results]

    assert asyncio.run(go()) == ["done"] * n
    for i in range(n):
        assert [m.content for m in store.get(f"s{i}")] == [f"from s{i}", "done"]
    store.close()


def test_the_cli_run_log_lives_in_postgresql_too(postgres_url: str, tmp_path: Path) -> None:
    from _cli import reactloop

    proc = reactloop(tmp_path, "run", "--agent", "cli_agents:echo", "--store", postgres_url,
                     "first words")
    assert (proc.returncode, proc.stdout) == (0, "turn 1: first words\n"), proc.stderr
    again = reactloop(tmp_path, "run", "-c", "--agent", "cli_agents:echo", "--store",
                      postgres_url, "more words")
    assert again.stdout == "turn 2: more words\n", again.stderr
    runs = json.loads(reactloop(tmp_path, "logs", "--json", "--store", postgres_url).stdout)
    assert [r["prompt"] for r in runs] == ["more words", "first words"]
    assert len({r["session_id"] for r in runs}) == 1
    shown = reactloop(tmp_path, "logs", "show", runs[1]["id"][:6], "--store", postgres_url)
    assert shown.returncode == 0 and "turn 1: first words" in shown.stdout, shown.stderr
    unknown = reactloop(tmp_path, "logs", "show", "zzz", "--store", postgres_url)
    assert unknown.returncode == 1 and "no run 'zzz' in postgresql://" in unknown.stderr
    reactloop(tmp_path, "sessions", "delete", runs[0]["session_id"], "--store", postgres_url)
    assert json.loads(reactloop(tmp_path, "logs", "--json", "--store",
                                postgres_url).stdout) == []  # the session's log went with it


def test_a_database_of_schema_1_gains_the_run_log(postgres_url: str) -> None:
    PostgresStore(postgres_url).append("s", [Message.user("kept")])
    with psycopg.connect(postgres_url) as conn:  # as reactloop left it before the run log
        conn.execute("DROP TABLE reactloop_runs")
        conn.execute("DROP TABLE reactloop_attachments")
        conn.execute("DELETE FROM reactloop_migrations WHERE version >= 2")
    store = PostgresStore(postgres_url)
    assert store.get("s") == [Message.user("kept")]
    store.log_run("r1", "s", {"prompt": "hi"})
    assert [(r["id"], r["prompt"]) for r in store.runs()] == [("r1", "hi")]
