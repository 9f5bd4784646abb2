"""Lead round 17c (issue 23): two regressions of this sitting's levers, on the training sets,
taken by mechanism. Phrasings are new, in no eval set.

- A thing the data's sentences say ("nachos" of "Tacos and nachos.") is searched as said, even
  when a remark around it ("so hungry") maps to the data's kind of place (``food``).
- A question for what a listing says of a file (its size) is answered from the listing, not by
  reading the file the listing shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from _lever_tools import count_letters
from reactloop import Agent, ModelRequest, ToolCall
from reactloop._demo_tools import calculate, current_time
from reactloop.models._file_refs import asks_attribute, refers_to_files
from reactloop.models._spelled import data_form
from reactloop.testing import ScriptedModel

pytest.importorskip("llama_cpp")

from reactloop.models.local import Guidance, plan_reply


# -- a thing the data's sentences say is searched as said ------------------------------------
@pytest.mark.parametrize("question", [
    "anywhere close by that does nachos? hungry",
    "where can i get nachos, im starving",
    "is there a place that sells nachos? starving here",
])
def test_a_thing_the_datas_sentences_say_beats_the_kind_a_remark_maps_to(question: str) -> None:
    names = ["food", "Taco Stand", "Gate 4"]
    terms = ["tacos", "and", "nachos", "gate"]
    assert data_form(question, names, terms) == ("nachos",)
    # without the sentences' words, the remark's kind of place is the data's form
    assert data_form(question, names) == ("food",)


def test_a_remark_alone_still_maps_to_the_kind_of_place() -> None:
    assert data_form("so hungry, anywhere to grab a bite?", ["food", "Taco Stand"],
                     ["tacos", "nachos"]) == ("food",)


# -- a file's size is the listing's ---------------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "march.csv").write_text("item,cost\nrent,900\n", encoding="utf-8")
    return tmp_path


def _requests(workspace: Path, question: str, script: list[Any]) -> list[ModelRequest]:
    model = ScriptedModel([*script, "ok"])
    Agent(model=model, tools=[calculate, count_letters, current_time],
          workspace=workspace).run_sync(question)
    return model.requests


@pytest.mark.parametrize("question", [
    "how large is the spreadsheet in my reports folder? bytes please",
    "what size is the csv inside my reports folder",
])
def test_a_files_size_is_answered_from_the_listing(workspace: Path, question: str) -> None:
    assert asks_attribute(question) and not refers_to_files(question)
    first = plan_reply(_requests(workspace, question, [])[0], Guidance())
    assert [t.name for t in first.callable] == ["list_dir"], question
    listed = ToolCall("list_dir", {"path": "reports", "recursive": True})
    second = plan_reply(_requests(workspace, question, [listed])[1], Guidance())
    assert "read_file" not in [t.name for t in second.callable], question


def test_a_fact_inside_the_file_is_still_read(workspace: Path) -> None:
    question = "what did rent cost? it's in the spreadsheet in my reports folder"
    assert not asks_attribute(question) and refers_to_files(question)
    listed = ToolCall("list_dir", {"path": "reports", "recursive": True})
    second = plan_reply(_requests(workspace, question, [listed])[1], Guidance())
    assert [t.name for t in second.callable] == ["read_file"]


def test_the_loaded_skills_sentence_words_reach_the_search() -> None:
    # the wiring: the airport's data says "Burgers and fries." in a description, not a name
    from tests.test_levers_workspace_expr import SKILLS

    model = ScriptedModel([ToolCall("load_skill", {"name": "airport"}), "ok"])
    Agent(model=model, tools=[calculate], skills=[SKILLS]).run_sync(
        "anywhere close by that does fries? hungry")
    plan = plan_reply(model.requests[1], Guidance())
    assert plan.candidates["search_pois"].strings == ("fries",)
