"""The dev UI shows a sub-agent's run nested under the call that started it (issue 24), in a
real browser (Playwright driving Chromium, as tests/test_serve_ui.py)."""

from __future__ import annotations

import pytest

from _browser import ask, watched_page
from conftest import serving


@pytest.fixture(scope="module")
def team_server(tmp_path_factory):
    yield from serving(tmp_path_factory, "multi-ui", "--agent", "serve_agents:team")


def test_a_sub_agents_run_shows_nested_under_its_call(browser, team_server) -> None:
    from playwright.sync_api import expect

    with watched_page(browser) as page:
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
