"""Lead round 17d (issue 23): a regression of this sitting's levers on the training sets
(a folder said as "the top folder" was listed as a folder named ``top``), by mechanism.
Phrasings are new, in no eval set."""

from __future__ import annotations

from pathlib import Path

import pytest

from reactloop import Agent
from reactloop._demo_tools import calculate
from reactloop.models._file_refs import asks_attribute, folder_in
from reactloop.testing import ScriptedModel

pytest.importorskip("llama_cpp")

from reactloop.models.local import Guidance, plan_reply


@pytest.mark.parametrize("question", [
    "anything markdown in the top folder? what is it called",
    "which files sit in the root directory of the project?",
    "show me what's in the main folder",
])
def test_the_top_folder_is_the_root_not_a_folder_of_that_name(tmp_path: Path, question: str
                                                              ) -> None:
    assert folder_in(question) is None
    (tmp_path / "guide.md").write_text("hello\n", encoding="utf-8")
    model = ScriptedModel(["ok"])
    Agent(model=model, tools=[calculate], workspace=tmp_path).run_sync(question)
    plan = plan_reply(model.requests[0], Guidance())
    path = next((t.parameters["properties"].get("path", {}) for t in plan.callable
                 if t.name == "list_dir"), {})
    assert path.get("const", ".") == ".", (question, path)


def test_a_folder_of_its_own_name_is_still_that_folder() -> None:
    assert folder_in("what's in my invoices folder?") == "invoices"


@pytest.mark.parametrize("question", [
    "there's one csv in my data folder, what's it called?",
    "what is the name of the file in my docs folder",
])
def test_a_files_name_is_the_listings(question: str) -> None:
    assert asks_attribute(question)


@pytest.mark.parametrize("question", [
    "seriously want a pretzel rn, is there a bakery at this airport?",
    "need a phone charger rn. where in the airport can I buy one",
])
def test_right_now_typed_as_rn_asks_no_clock(question: str) -> None:
    # "rn" is "now", no stronger: it does not make a question for a place a question for the time
    from reactloop._ranking import terms

    assert "current" not in terms(question, expand=True)
    assert {"time", "now"} <= set(terms("whats the tiem in lisbon rn", expand=True))
