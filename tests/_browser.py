"""The dev UI in a real browser, for the UI tests: Playwright driving Chromium (headless).

Chromium: the system's (or ``$REACTLOOP_CHROMIUM``), else Playwright's own; the test set-up
(``python scripts/test_setup.py``) installs one. Without Playwright or a Chromium, a test is
skipped as ``conftest.require`` says.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from _scripts import load_script
from conftest import require

VIEWPORT = {"width": 1440, "height": 900}


def chromium() -> str | None:
    setup = load_script("test_setup")  # it knows where a Chromium is (it installs one)
    return setup.system_chromium() or setup.playwright_chromium()


@contextmanager
def launched() -> Iterator[Any]:
    """A headless Chromium under Playwright, closed at the end."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    require(sync_playwright, "Playwright is not installed: pip install 'reactloop[test]'")
    path = chromium()
    require(path, "Chromium is not installed: python scripts/test_setup.py (or apt-get "
                  "install chromium, or set REACTLOOP_CHROMIUM to a Chromium binary)")
    assert sync_playwright is not None and path is not None
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, headless=True,
                                    args=["--no-sandbox", "--disable-gpu"])
        yield browser
        browser.close()


@contextmanager
def watched_page(browser: Any, **context: Any) -> Iterator[Any]:
    """A page in a new context of ``browser`` (1440×900; ``context``: more options), closed
    at the end; a script error or an error on the console (a CSP violation) fails the test
    once the block has passed. Playwright waits 30 s at the most, unless told otherwise."""
    ctx = browser.new_context(viewport=VIEWPORT, **context)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.set_default_timeout(30_000)
    try:
        yield page
    finally:
        ctx.close()
    assert errors == [], errors  # no script error, no CSP violation


def ask(page: Any, text: str) -> None:
    """Type ``text`` into the chat's input and send it."""
    page.fill("#input", text)
    page.press("#input", "Enter")
