"""The dev UI in a real browser: Playwright driving Debian's Chromium (headless).

The airport assistant of seed 001: ask "where is gate B12?", see the tool calls in the trace,
the answer in the chat and the marker on the map; ask for directions and see the route;
reload and find it all again; then a run of 500+ events. A screenshot is saved as a test
artifact (``build/test-artifacts/serve-ui.png``, or ``$REACTLOOP_TEST_ARTIFACTS``); with
``REACTLOOP_UPDATE_SCREENSHOT=1`` it also replaces ``docs/serve.png``. The skills are served
from a copy in a neutral folder (``/tmp/reactloop-demo-…/skills``): the trace shows a skill's
folder, and the picture must not show the machine it was taken on.

Chromium: the system's (or ``$REACTLOOP_CHROMIUM``), else Playwright's own; the test set-up
(``python scripts/test_setup.py``) installs one.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from _browser import ask, watched_page
from conftest import serving

ROOT = Path(__file__).resolve().parents[1]
BURST = 180  # tool calls in one response: 2 events each, plus ~180 text deltas (> 500 events)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The test agent (tests/serve_agents.py) with the example skills copied to a neutral
    folder, on its own server (so the sessions list holds this module's sessions only)."""
    pytest.importorskip("starlette", reason="pip install 'reactloop[serve]'")  # before mkdtemp
    demo = Path(tempfile.mkdtemp(prefix="reactloop-demo-"))
    skills = shutil.copytree(ROOT / "examples" / "skills", demo / "skills")
    yield from serving(tmp_path_factory, "serve-ui", "--agent", "serve_agents:agent",
                       env={"SERVE_TEST_SKILLS": str(skills)})
    shutil.rmtree(demo, ignore_errors=True)


@pytest.fixture
def page(browser, served):
    with watched_page(browser, color_scheme="light", device_scale_factor=1) as page:
        yield page


def test_airport_question_in_the_browser(page, served) -> None:
    from playwright.sync_api import expect

    page.goto(served.url + "/")
    expect(page.locator("#conn")).to_have_attribute("data-state", "ok")
    expect(page.locator("svg.map .poi")).to_have_count(41)  # every point of the skill's data
    ask(page, "where is gate B12?")

    # the trace: the skill's tool calls, with their results, iteration by iteration
    show = page.locator('.trace .row.call[data-tool="show_poi"]')
    expect(show).to_have_attribute("data-state", "ok")
    expect(show.locator(".call-args")).to_have_text("(poi_id: 111)")
    expect(page.locator('.trace .row.call[data-tool="search_pois"] .call-preview')).to_contain_text(
        '"name":"Gate 12"')
    expect(page.locator(".trace .turn").first).to_have_attribute("data-state", "completed")
    expect(page.locator(".trace .iter")).to_have_count(4)
    expect(page.locator(".trace .chip.tokens").first).to_contain_text("tok")
    # the chat: the answer; the map: the marker on Gate 12
    answer = page.locator(".messages .msg.assistant:not(.interim) .bubble").last
    expect(answer).to_contain_text("Gate 12 is in Terminal B")
    expect(page.locator('svg.map .pin[data-marker="111"]')).to_be_visible()
    expect(page.locator('svg.map .poi[data-poi="111"]')).to_have_class("poi cat-gate active")

    ask(page, "how do I get from gate B12 to the coffee bar?")
    expect(page.locator(".trace .turn").nth(1)).to_have_attribute("data-state", "completed")
    expect(page.locator("svg.map polyline.route")).to_have_attribute(
        "data-route", "poi-111 b1 b0 plaza poi-126")
    expect(page.locator(".map-status")).to_have_text("Route Gate 12 → Plaza Coffee Bar · 290 m")
    session_id = page.evaluate("new URLSearchParams(location.hash.slice(1)).get('s')")
    assert session_id
    expect(page.locator(f'.session[data-id="{session_id}"]')).to_have_class("session active")
    # the picture shows a neutral folder, not where the repository is on this machine
    expect(page.locator(".trace")).to_contain_text("/reactloop-demo-")
    assert str(ROOT) not in page.content()

    artifacts = Path(os.environ.get("REACTLOOP_TEST_ARTIFACTS", ROOT / "build" / "test-artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(artifacts / "serve-ui.png"))
    if os.environ.get("REACTLOOP_UPDATE_SCREENSHOT"):
        shutil.copy(artifacts / "serve-ui.png", ROOT / "docs" / "serve.png")

    # reload: the session's history comes back from the store (chat, trace, map)
    page.reload()
    expect(page.locator(".messages .msg.user .bubble")).to_have_text(
        ["where is gate B12?", "how do I get from gate B12 to the coffee bar?"])
    expect(page.locator(".messages .msg.assistant:not(.interim) .bubble").first).to_contain_text(
        "Gate 12 is in Terminal B")
    expect(page.locator('.trace .row.call[data-tool="show_poi"]')).to_have_attribute(
        "data-state", "ok")
    expect(page.locator(".trace .turn")).to_have_count(2)
    expect(page.locator('svg.map .pin[data-marker="111"]')).to_be_visible()
    expect(page.locator("svg.map polyline.route")).to_have_count(1)


def test_a_run_of_more_than_500_events_renders_completely(page, served) -> None:
    from playwright.sync_api import expect

    page.goto(served.url + "/")
    expect(page.locator("#conn")).to_have_attribute("data-state", "ok")
    events = page.evaluate("""async (n) => {
        // count the events the server sends for the same message, on a session of our own
        const s = await (await fetch('/api/sessions', {method: 'POST'})).json();
        const r = await fetch(`/api/sessions/${s.id}/messages`, {method: 'POST',
            headers: {'Content-Type': 'application/json'}, body: JSON.stringify({text: `burst ${n}`})});
        return (await r.text()).split('\\n\\n').filter(b => b.startsWith('event:')).length;
    }""", BURST)
    assert events > 500
    ask(page, f"burst {BURST}")
    turn = page.locator(".trace .turn").last
    expect(turn).to_have_attribute("data-state", "completed", timeout=60_000)
    expect(turn.locator('.row.call[data-tool="count"][data-state="ok"]')).to_have_count(BURST)
    expect(page.locator(".messages .msg.assistant .bubble").last).to_contain_text(
        f"word{BURST - 1} done.")
    expect(turn.locator(".turn-foot")).to_contain_text(f"{BURST} tool calls")


def test_tool_errors_and_failed_runs_show_in_the_trace(page, served) -> None:
    from playwright.sync_api import expect

    page.goto(served.url + "/")
    expect(page.locator("#conn")).to_have_attribute("data-state", "ok")
    ask(page, "broken tool please")
    call = page.locator('.trace .row.call[data-tool="count"]')
    expect(call).to_have_attribute("data-state", "error")
    expect(call.locator(".call-preview")).to_contain_text(
        "✗ Invalid arguments: argument 'n': Input should be a valid integer")
    expect(page.locator(".messages .msg.assistant .bubble").last).to_have_text(
        "The count tool refused.")
    ask(page, "fail please")
    turn = page.locator(".trace .turn").last
    expect(turn).to_have_attribute("data-state", "error")
    expect(turn.locator(".turn-foot .error-text")).to_contain_text("failed on purpose")
    expect(page.locator(".messages .msg.assistant").last).to_have_attribute("data-state", "error")


def test_approve_deny_and_edit_in_the_dev_ui(page, served) -> None:
    """Issue 14: a call waiting for approval is a card in the chat (also after a reload, read
    from the store); Approve, Deny with a reason and Edit the JSON arguments continue the run."""
    from playwright.sync_api import expect

    page.goto(served.url + "/")
    expect(page.locator("#conn")).to_have_attribute("data-state", "ok")
    ask(page, "transfer 50 to bob")
    card = page.locator('.approvals .approval[data-tool="transfer"]')
    expect(card.locator(".approval-args")).to_contain_text('"amount": 50')
    expect(page.locator(".trace .turn").last).to_have_attribute("data-state",
                                                               "waiting_for_approval")
    row = page.locator('.trace .row.call[data-tool="transfer"]').last
    expect(row).to_have_attribute("data-state", "waiting")
    expect(page.locator('.trace .row.call[data-tool="echo"]').last).to_have_attribute(
        "data-state", "ok")  # the other call of the response ran
    ask(page, "hello")  # refused while the call waits
    expect(page.locator(".messages .notice").last).to_have_text(
        "Decide the tool calls waiting for approval first.")

    page.reload()  # the waiting call comes back from the store
    card = page.locator('.approvals .approval[data-tool="transfer"]')
    expect(card).to_be_visible()
    expect(page.locator('.trace .row.call[data-tool="transfer"]').last).to_have_attribute(
        "data-state", "waiting")
    card.locator("button.approve").click()
    expect(card).to_have_attribute("data-decision", "approved")
    expect(page.locator(".trace .turn").last).to_have_attribute("data-state", "completed")
    row = page.locator('.trace .row.call[data-tool="transfer"]').last
    expect(row).to_have_attribute("data-state", "ok")
    expect(row.locator(".chip.decision")).to_have_text("approved")
    expect(page.locator(".messages .msg.assistant .bubble").last).to_have_text(
        "Transfer done: sent 50 to bob")

    ask(page, "transfer 70 to eve")
    card = page.locator('.approvals:not(.sent) .approval[data-tool="transfer"]')
    card.locator(".approval-reason").fill("eve is not a customer")
    card.locator("button.deny").click()
    expect(page.locator(".messages .msg.assistant .bubble").last).to_have_text(
        "Transfer refused: The user denied this tool call. Reason: eve is not a customer")
    expect(page.locator('.trace .row.call[data-tool="transfer"]').last).to_have_attribute(
        "data-state", "error")

    ask(page, "transfer 5 to carol")
    card = page.locator('.approvals:not(.sent) .approval[data-tool="transfer"]')
    card.locator("button.edit").click()
    card.locator(".approval-editor").fill("{not json")
    card.locator("button.approve").click()
    expect(card.locator(".approval-problem")).to_contain_text("Not valid JSON")
    card.locator(".approval-editor").fill('{"amount": 6, "to": "carol"}')
    card.locator("button.approve").click()
    last = page.locator(".messages .msg.assistant .bubble").last
    expect(last).to_contain_text("Transfer done: (The user edited the arguments to")
    expect(last).to_contain_text("sent 6 to carol")
    expect(page.locator(".trace .turn").last).to_have_attribute("data-state", "completed")
    expect(page.locator(".approvals:not(.sent)")).to_have_count(0)
    artifacts = Path(os.environ.get("REACTLOOP_TEST_ARTIFACTS", ROOT / "build" / "test-artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(artifacts / "serve-approvals.png"))


def test_a_damaged_store_shows_its_message_in_the_dev_ui(browser, tmp_path) -> None:
    """Issue 31: the store's own message (which file, what to do) reaches the page, not a bare
    "500 Internal Server Error"."""
    from playwright.sync_api import expect

    from conftest import ServeProcess

    store = tmp_path / "sessions.sqlite3"
    store.write_bytes(b"this is not a database, " * 200)
    server = ServeProcess("--agent", "serve_agents:agent", store=store).start()
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto(server.url + "/")
        error = page.locator("#session-list .session-error")
        expect(error).to_contain_text(f"cannot open session store {store}")
        expect(error).to_contain_text("not a SQLite database")
        expect(page.locator("#conn")).to_have_attribute("data-state", "down")
    finally:
        context.close()
        server.stop()


def test_a_session_id_with_a_slash_opens_in_the_dev_ui(page, served) -> None:
    """Issue 31: ids holding "/" are reachable; the page sends them percent-encoded."""
    import httpx
    from playwright.sync_api import expect

    sid = "team/ui/7"
    with httpx.Client(base_url=served.url, timeout=60) as client:
        assert client.post("/api/sessions", json={"id": sid}).status_code in (201, 409)
        with client.stream("POST", "/api/sessions/team%2Fui%2F7/messages",
                           json={"text": "hello from a slash"}) as r:
            assert r.status_code == 200
            r.read()
    page.goto(served.url + "/")
    page.locator(f'.session[data-id="{sid}"]').click()
    expect(page.locator(".messages .msg.user .bubble")).to_have_text(["hello from a slash"])
    expect(page.locator(".trace .turn")).to_have_count(1)
