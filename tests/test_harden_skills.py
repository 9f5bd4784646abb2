"""Skills written by others load leniently (issue 10): one over-long description used to fail
the whole ``Agent``. Deviations load with one logged warning; only an unusable skill is
skipped, and never stops the others."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from reactloop import Agent, ModelResponse, ToolCall
from reactloop.testing import ScriptedModel

# the shape of the real skill that failed: a 1,068-character description
LONG = ("Use this skill whenever the user wants to create, read, edit or analyse spreadsheets. "
        * 13)[:1068]


def make_skill(root: Path, folder: str, text: str) -> Path:
    d = root / folder
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(text, encoding="utf-8")
    return d


@pytest.fixture
def collection(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    make_skill(root, "xlsx", f"---\nname: xlsx\ndescription: {LONG}\n---\n# XLSX\nUse openpyxl.\n")
    make_skill(root, "pdf", "---\nname: pdf\ndescription: Work with PDF files.\n---\n# PDF\n")
    make_skill(root, "notes", "# Just notes, no front matter\n")
    return root


def test_a_collection_with_a_long_description_and_a_broken_skill_loads(
    collection: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel([
        ModelResponse(tool_calls=[ToolCall("load_skill", {"name": "xlsx"})]),
        ModelResponse(text="done"),
    ])
    with caplog.at_level(logging.WARNING, logger="reactloop.skills"):
        agent = Agent(model=model, skills=[collection])
        Agent(model=ScriptedModel([]), skills=[collection])  # a second agent: no new warnings
        result = agent.run_sync("Summarise the spreadsheet")
    catalog = model.requests[0].system
    [entry] = [line for line in catalog.splitlines() if line.startswith("- xlsx: ")]
    assert entry == f"- xlsx: {LONG[:1023]}…"  # the catalogue entry stays short
    assert "- pdf: Work with PDF files." in catalog
    assert "notes" not in catalog
    assert "# XLSX" in result.steps[0].results[0].content  # the long one is usable
    xlsx = str(collection / "xlsx" / "SKILL.md")
    notes = str(collection / "notes" / "SKILL.md")
    assert caplog.messages == [  # in the order the folders are found; each once
        f"skipped a skill that cannot be used: {notes}: no YAML front matter. Start the file "
        "with a line '---', then 'name: <skill-name>' and 'description: <what it does and "
        "when to use it>', then a closing '---' line",
        f"{xlsx}: loaded, though it does not follow the Agent Skills format: 'description' "
        "has 1068 characters, more than 1024; the catalogue shows the first 1024",
    ]
