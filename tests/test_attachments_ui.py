"""The dev UI takes files (issue 26): picked with the paperclip, dropped or pasted, shown as
thumbnails in the chat and the trace, sent with the message; Playwright driving Chromium."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from _browser import watched_page
from _files import pdf, png
from conftest import serving

PNG = png(seed=11, size=2_000)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    yield from serving(tmp_path_factory, "attach-ui", "--agent", "attach_agents:seeing")


@pytest.fixture(scope="module")
def page(served, browser):
    with watched_page(browser) as page:
        yield page


def test_a_picked_and_a_pasted_file_go_with_the_message(page, served, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    shot, doc = tmp_path / "shot.png", tmp_path / "invoice.pdf"
    shot.write_bytes(PNG)
    doc.write_bytes(pdf("Invoice total: 42 EUR"))
    page.goto(served.url + "/")
    expect(page.locator("#conn")).to_have_attribute("data-state", "ok")
    page.set_input_files("#file-input", [str(shot)])
    expect(page.locator("#tray img.thumb")).to_have_count(1)
    # paste a file into the message box, as from the clipboard
    page.evaluate("""([name, b64]) => {
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const data = new DataTransfer();
        data.items.add(new File([bytes], name, { type: "application/pdf" }));
        const input = document.getElementById("input");
        input.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true,
                                                          cancelable: true }));
    }""", ["invoice.pdf", base64.b64encode(doc.read_bytes()).decode()])
    expect(page.locator("#tray .file-chip")).to_have_text("📄 invoice.pdf")
    page.fill("#input", "What are these?")
    page.press("#input", "Enter")
    answer = page.locator(".messages .msg.assistant .bubble").last
    expect(answer).to_have_text(f"What are these? || image image/png {len(PNG)} | document "
                                f"application/pdf {doc.stat().st_size}")
    expect(page.locator(".messages .msg.user img.thumb")).to_have_count(1)
    expect(page.locator(".trace .turn .parts img.thumb")).to_have_count(1)
    expect(page.locator("#tray")).to_be_hidden()
    # reload: the history has references, shown by name
    page.reload()
    expect(page.locator(".messages .msg.user .file-chip")).to_have_text(
        ["🖼 shot.png", "📄 invoice.pdf"])
