"""Issue 29 in the dev UI, in a real browser (Playwright driving Chromium, headless, as
tests/test_serve_ui.py): an MCP server's question while its tool runs is a form built from the
requested schema (required marks, defaults, checks before anything is sent); Accept sends the
values to the server and the run completes with them; Decline is an answer the server hears.

The served agent is tests/elicit_agents.py; its MCP server tests/mcp_elicit_server.py (FastMCP,
``ctx.elicit``). A screenshot of the filled form is saved as a test artifact
(``build/test-artifacts/serve-elicitation.png``, or ``$REACTLOOP_TEST_ARTIFACTS``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from _browser import ask, watched_page
from conftest import require, serving

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    yield from serving(tmp_path_factory, "elicit-ui", "--agent", "elicit_agents:agent")


@pytest.fixture
def page(served, browser):
    with watched_page(browser, color_scheme="light") as page:
        yield page


def _form(page, url: str, text: str, server: str):
    """The dev UI at ``url``, asked ``text``: the form of the question MCP server ``server``
    asks (a locator; the question may still be on its way)."""
    from playwright.sync_api import expect

    page.goto(url + "/")
    expect(page.locator("#conn")).to_have_attribute("data-state", "ok")
    ask(page, text)
    return page.locator(f'form.elicit[data-server="{server}"]')


def test_the_form_is_filled_checked_and_accepted(page, served) -> None:
    from playwright.sync_api import expect

    form = _form(page, served.url, "book", "asker")
    # the MCP server starts with the run: slow on a loaded machine
    expect(form.locator(".elicit-message")).to_have_text("Who is travelling?", timeout=60_000)
    fields = form.locator(".elicit-field")
    expect(fields).to_have_count(5)
    # required marks, kinds and defaults from the schema
    for name, kind in [("name", "string"), ("seats", "integer"), ("budget", "number"),
                       ("window", "boolean"), ("meal", "choice")]:
        expect(form.locator(f'.elicit-field[data-field="{name}"]')).to_have_attribute(
            "data-kind", kind)
    expect(form.locator(".elicit-required")).to_have_count(2)
    expect(form.locator('[data-field="name"] .elicit-required')).to_have_count(1)
    expect(form.locator('[data-field="seats"] .elicit-required')).to_have_count(1)
    expect(form.locator('input[name="budget"]')).to_have_value("100")
    expect(form.locator('select[name="meal"]')).to_have_value("none")
    expect(form.locator('input[name="window"]')).not_to_be_checked()

    # checked before anything is sent
    form.locator("button.elicit-accept").click()
    expect(form.locator('[data-field="name"] .elicit-error')).to_have_text(
        "An answer is required.")
    form.locator('input[name="name"]').fill("Ada")
    form.locator('input[name="seats"]').fill("9")
    form.locator("button.elicit-accept").click()
    expect(form.locator('[data-field="seats"] .elicit-error')).to_have_text("At most 8.")
    expect(form).not_to_have_attribute("data-answer", "accept")

    form.locator('input[name="seats"]').fill("2")
    form.locator('input[name="budget"]').fill("80.5")
    form.locator('input[name="window"]').check()
    form.locator('select[name="meal"]').select_option("vegan")
    artifacts = Path(os.environ.get("REACTLOOP_TEST_ARTIFACTS", ROOT / "build" / "test-artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(artifacts / "serve-elicitation.png"))
    form.locator("button.elicit-accept").click()
    expect(form).to_have_attribute("data-answer", "accept")
    expect(form.locator(".elicit-status")).to_have_text("accepted")
    # the server received the values and the run completed with them
    expect(page.locator(".messages .msg.assistant .bubble").last).to_have_text(
        'done: booked: {"budget": 80.5, "meal": "vegan", "name": "Ada", "seats": 2, '
        '"window": true}', timeout=30_000)
    expect(page.locator(".trace .turn").last).to_have_attribute("data-state", "completed")


def test_declining_in_the_dev_ui_reaches_the_server(page, served) -> None:
    from playwright.sync_api import expect

    form = _form(page, served.url, "confirm", "asker")
    expect(form.locator(".elicit-message")).to_have_text("Really?", timeout=60_000)
    form.locator("button.elicit-decline").click()
    expect(form).to_have_attribute("data-answer", "decline")
    expect(page.locator(".messages .msg.assistant .bubble").last).to_have_text(
        "done: not confirmed: decline", timeout=30_000)


@pytest.fixture(scope="module")
def everything_served(tmp_path_factory):
    from _mcp_servers import EVERYTHING, NPM_HINT

    require(EVERYTHING.exists(), NPM_HINT)
    yield from serving(tmp_path_factory, "everything-ui", "--agent", "elicit_agents:everything")


def test_the_reference_servers_form_in_the_dev_ui(everything_served, page) -> None:
    """Every field kind of ``@modelcontextprotocol/server-everything``'s form: titled choices,
    several choices (checkboxes, at most 3), an email checked before sending, a URL question."""
    from playwright.sync_api import expect

    form = _form(page, everything_served.url, "form", "everything")
    expect(form.locator('[data-field="name"]')).to_be_visible(timeout=60_000)
    expect(form.locator('[data-field="untitledMultipleSelectEnum"]')).to_have_attribute(
        "data-kind", "choices")
    expect(form.locator('select[name="titledSingleSelectEnum"] option:checked')).to_have_text(
        "Superman")  # the title shown, the value sent
    expect(form.locator('select[name="legacyTitledEnum"] option:checked')).to_have_text("Cats")
    instruments = form.locator('[data-field="untitledMultipleSelectEnum"]')
    expect(instruments.locator('input[value="Guitar"]')).to_be_checked()  # the default
    form.locator('input[name="name"]').fill("Ada")
    form.locator('input[name="email"]').fill("ada@example")
    for value in ("Piano", "Drums", "Bass"):
        instruments.locator(f'input[value="{value}"]').check()
    form.locator("button.elicit-accept").click()
    expect(form.locator('[data-field="email"] .elicit-error')).to_have_text(
        "Not a valid email.")
    expect(instruments.locator(".elicit-error")).to_have_text("Choose at most 3.")
    form.locator('input[name="email"]').fill("ada@example.com")
    instruments.locator('input[value="Guitar"]').uncheck()
    instruments.locator('input[value="Bass"]').uncheck()
    form.locator('select[name="legacyTitledEnum"]').select_option(label="Dogs")
    form.locator("button.elicit-accept").click()
    expect(form).to_have_attribute("data-answer", "accept")
    answer = page.locator(".messages .msg.assistant .bubble").last
    expect(answer).to_contain_text("User provided the requested information",
                                   timeout=30_000)
    expect(answer).to_contain_text('"legacyTitledEnum": "pet-2"')
    expect(answer).to_contain_text('"Piano",')
    expect(answer).to_contain_text('"Drums"')

    ask(page, "sign in")
    form = page.locator('form.elicit[data-server="everything"]').last
    link = form.locator("a.elicit-url")
    expect(link).to_have_attribute("href", "https://example.com/sign-in", timeout=60_000)
    form.locator("button.elicit-accept").click()
    expect(page.locator(".messages .msg.assistant .bubble").last).to_contain_text(
        "User completed the URL elicitation flow", timeout=30_000)
