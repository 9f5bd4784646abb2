"""The dev UI shows a sub-agent's run nested under the call that started it (issue 24), in a
real browser (Playwright driving Chromium, as tests/test_serve_ui.py)."""

from __future__ import annotations

import pytest

from conftest import ServeProcess
from test_serve_ui import ask, browser  # noqa: F401 - the browser fixture


@pytest.fixture(scope="module")
def team_server(tmp_path_factory):
    pytest.importorskip("starlette", reason="pip install 'reactloop[serve]'")
    server = ServeProcess("--agent", "serve_agents:team",
                          store=tmp_path_factory.mktemp("multi-ui") / "sessions.sqlite3").start()
    yield server
    server.stop()


def test_a_sub_agents_run_shows_nested_under_its_call(browser, team_server) -> None:  # noqa: F811
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.set_default_timeout(30_000)
    try:
        page.goto(team_server.url + "/")
        expect(page.locator("#conn")).to_have_attribute("data-state", "ok")
        ask(page, "hello team")
        turn = page.locator(".trace .turn").first
        expect(turn).to_have_attribute("data-state", "completed")
        call = page.locator('.trace .row.call[data-tool="helper"]')
        expect(call).to_have_attribute("data-state", "ok")
        sub = call.locator(".sub-run")
        expect(sub).to_have_attribute("data-agent", "helper")
        expect(sub).to_have_attribute("data-state", "completed")
        expect(sub.locator(".sub-call[data-tool=echo]")).to_have_attribute("data-state", "ok")
        expect(sub.locator(".sub-call[data-tool=echo]")).to_contain_text("hello team")
        expect(sub.locator(".sub-reply")).to_have_text("echoed: hello team")
        # the sub-run's events did not end the turn early nor reach the chat as answers
        expect(page.locator(".messages .msg.assistant:not(.interim) .bubble").last).to_have_text(
            "The helper said echoed: hello team")
        expect(page.locator(".trace .turn")).to_have_count(1)
        expect(page.locator(".trace .iter")).to_have_count(2)  # the team agent's own
    finally:
        context.close()
    assert errors == [], errors
