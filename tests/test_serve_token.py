"""A server bound beyond 127.0.0.1 needs its token on every API call.

The server binds 127.0.0.2 (not the loopback address the rules trust, yet still on this
machine, so no test reaches beyond loopback); the token comes from REACTLOOP_SERVE_TOKEN."""

from __future__ import annotations

import pytest

from conftest import SERVE_TOKEN, ServeProcess, parse_sse

httpx = pytest.importorskip("httpx", reason="pip install 'reactloop[test]'")
pytest.importorskip("starlette", reason="pip install 'reactloop[serve]'")


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    server = ServeProcess("--agent", "serve_agents:agent", "--host", "127.0.0.2",
                          store=tmp_path_factory.mktemp("token") / "sessions.sqlite3",
                          env={"REACTLOOP_SERVE_TOKEN": SERVE_TOKEN}).start()
    assert server.url.startswith("http://127.0.0.2:")
    assert server.wait_for("API calls need the header 'Authorization: Bearer <token>'")
    yield server
    server.stop()


@pytest.mark.parametrize("headers", [{}, {"authorization": "Bearer wrong-token-0123456789"},
                                     {"authorization": f"Basic {SERVE_TOKEN}"},
                                     {"authorization": f"Bearer {SERVE_TOKEN}x"}])
def test_every_api_call_needs_the_token(guarded, headers) -> None:
    with httpx.Client(base_url=guarded.url, headers=headers, timeout=30) as c:
        for method, path in (("GET", "/api/health"), ("GET", "/api/sessions"),
                             ("POST", "/api/sessions"), ("GET", "/api/sessions/x"),
                             ("DELETE", "/api/sessions/x"), ("POST", "/api/agui"),
                             ("POST", "/api/sessions/x/messages"), ("GET", "/api/info")):
            r = c.request(method, path, json={"text": "hello"})
            assert r.status_code == 401, (method, path)
            assert r.headers["www-authenticate"] == "Bearer"
            assert "Authorization: Bearer <token>" in r.json()["error"]
            assert SERVE_TOKEN not in r.text


def test_with_the_token_everything_works(guarded) -> None:
    auth = {"authorization": f"Bearer {SERVE_TOKEN}"}
    with httpx.Client(base_url=guarded.url, headers=auth, timeout=60) as c:
        assert c.get("/api/health").json() == {"status": "ok"}
        session_id = c.post("/api/sessions").json()["id"]
        with c.stream("POST", f"/api/sessions/{session_id}/messages",
                      json={"text": "hello token"}) as r:
            events = parse_sse(r.iter_lines())
        assert events[-1][0] == "run_end"
        assert events[-1][1]["result"]["state"] == "completed"
        assert SERVE_TOKEN not in c.get(f"/api/sessions/{session_id}").text
        assert SERVE_TOKEN not in c.get("/api/info").text
        # the Host check still applies with a token
        assert c.get("/api/health", headers={"host": "attacker.example"}).status_code == 403


def test_the_page_itself_loads_without_the_token(guarded) -> None:
    # the dev UI has no secrets; it asks for the token before calling the API
    with httpx.Client(base_url=guarded.url, timeout=30) as c:
        assert c.get("/").status_code == 200
        assert "token-dialog" in c.get("/").text
        assert c.get("/static/js/api.js").status_code == 200
