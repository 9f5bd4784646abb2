"""Issue 18: two ``reactloop serve`` processes on one PostgreSQL store serve one session in turn
(as two machines behind a load balancer would)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ServeProcess, parse_sse

httpx = pytest.importorskip("httpx", reason="pip install 'reactloop[test]'")
pytest.importorskip("starlette", reason="pip install 'reactloop[serve]'")


def send(client, session_id: str, text: str) -> list[tuple[str, dict]]:
    with client.stream("POST", f"/api/sessions/{session_id}/messages",
                       json={"text": text}) as r:
        assert r.status_code == 200, r.read()
        return parse_sse(r.iter_lines())


def test_two_servers_on_one_postgres_store_serve_one_session_alternately(
        postgres_url: str, tmp_path: Path) -> None:
    # the later --store wins: both servers use the database, not their SQLite files
    a = ServeProcess("--agent", "serve_agents:agent", "--store", postgres_url,
                     store=tmp_path / "a.sqlite3").start()
    b = ServeProcess("--agent", "serve_agents:agent", "--store", postgres_url,
                     store=tmp_path / "b.sqlite3").start()
    try:
        with httpx.Client(base_url=a.url, timeout=60) as ca, \
                httpx.Client(base_url=b.url, timeout=60) as cb:
            sid = ca.post("/api/sessions").json()["id"]
            for client, text in ((ca, "hello one"), (cb, "hello two"), (ca, "hello three")):
                events = send(client, sid, text)
                assert events[-1][0] == "run_end"
                assert events[-1][1]["result"]["state"] == "completed"
            for client in (ca, cb):
                got = client.get(f"/api/sessions/{sid}").json()
                users = [m["content"] for m in got["messages"] if m["role"] == "user"]
                assert users == ["hello one", "hello two", "hello three"]
                roles = [m["role"] for m in got["messages"]]
                assert roles == ["user", "assistant", "tool", "assistant"] * 3
        assert not (tmp_path / "a.sqlite3").exists() and not (tmp_path / "b.sqlite3").exists()
    finally:
        a.stop()
        b.stop()


def test_a_session_running_on_the_other_server_gets_409(postgres_url: str,
                                                         tmp_path: Path) -> None:
    import uuid
    a = ServeProcess("--agent", "serve_agents:agent", "--store", postgres_url,
                     store=tmp_path / "a.sqlite3").start()
    b = ServeProcess("--agent", "serve_agents:agent", "--store", postgres_url,
                     store=tmp_path / "b.sqlite3").start()
    gate = f"gate-{uuid.uuid4().hex}"
    try:
        with httpx.Client(base_url=a.url, timeout=60) as ca, \
                httpx.Client(base_url=b.url, timeout=60) as cb:
            sid = ca.post("/api/sessions").json()["id"]
            with ca.stream("POST", f"/api/sessions/{sid}/messages",
                           json={"text": f"wait {gate}"}) as first:
                lines = first.iter_lines()
                assert next(lines) == "event: run_start"  # a holds the session's writer lock
                busy = cb.post(f"/api/sessions/{sid}/messages", json={"text": "hello"})
                assert busy.status_code == 409, busy.text
                assert "another process" in busy.json()["error"]
                send(ca, ca.post("/api/sessions").json()["id"], f"release {gate}")
                rest = parse_sse(["event: run_start", *lines])
            assert rest[-1][1]["result"]["state"] == "completed"
            # nothing of the refused message was stored; b serves the session now
            assert send(cb, sid, "hello after")[-1][1]["result"]["state"] == "completed"
            users = [m["content"] for m in cb.get(f"/api/sessions/{sid}").json()["messages"]
                     if m["role"] == "user"]
            assert users == [f"wait {gate}", "hello after"]
    finally:
        a.stop()
        b.stop()
