"""Levers for workspace files said in words and for questions that need no tool (issue 23,
tenth lever sitting, levers10b), each checked without running the model — the offer, the
call a reply must make — on a workspace written by the test, in phrasings of no eval set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from _lever_tools import count_letters
from reactloop import Agent, ModelRequest, ToolCall
from reactloop._demo_tools import calculate, current_time
from reactloop.models._file_refs import chosen_entry, refers_to_files
from reactloop.models._fit import small_talk
from reactloop.testing import ScriptedModel

pytest.importorskip("llama_cpp")

from reactloop.models.local import Guidance, plan_reply

TOOLS = [calculate, count_letters, current_time]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "manuals").mkdir()
    (tmp_path / "manuals" / "wifi.md").write_text("The guest password is tulip42.\n",
                                                  encoding="utf-8")
    (tmp_path / "manuals" / "boiler.md").write_text("Bleed the radiators in October.\n",
                                                    encoding="utf-8")
    (tmp_path / "budget").mkdir()
    (tmp_path / "budget" / "q3.csv").write_text("item,cost\nrent,900\nfood,310\n",
                                                encoding="utf-8")
    (tmp_path / "journal.txt").write_text("Dentist on Thursday at 4.\n", encoding="utf-8")
    return tmp_path


def _requests(workspace: Path, question: str, script: list[Any]) -> list[ModelRequest]:
    model = ScriptedModel([*script, "ok"])
    Agent(model=model, tools=TOOLS, workspace=workspace).run_sync(question)
    return model.requests


# -- a file said in words: list (the folder said, or everything), then read the one meant ----
@pytest.mark.parametrize(("question", "listing", "path"), [
    ("the manuals folder has a wifi page; what's the guest password?",
     {"path": "manuals", "recursive": True}, "manuals/wifi.md"),
    ("which day is the dentist? it's written in my journal",
     {"recursive": True}, "journal.txt"),
    ("In my budget folder there's a spreadsheet, what did food cost?",
     {"path": "budget", "recursive": True}, "budget/q3.csv"),
    ("whats in journal", {"recursive": True}, "journal.txt"),
])
def test_a_file_said_in_words_is_listed_then_read(workspace: Path, question: str,
                                                  listing: dict[str, Any], path: str) -> None:
    first = plan_reply(_requests(workspace, question, [])[0], Guidance())
    assert [t.name for t in first.callable] == ["list_dir"] and not first.answer, question
    second = plan_reply(_requests(workspace, question, [ToolCall("list_dir", listing)])[1],
                        Guidance())
    assert [t.name for t in second.callable] == ["read_file"] and not second.answer, question
    assert second.callable[0].parameters["properties"]["path"]["const"] == path


def test_a_listed_subfolder_entry_is_read_by_its_path_from_the_root(workspace: Path) -> None:
    """A listing of ``manuals`` shows ``wifi.md``; the read is ``manuals/wifi.md`` (a bare
    ``wifi.md`` does not exist at the root: the read failed and the listing was the answer)."""
    question = "look at the wifi doc in manuals, what's the password for guests?"
    plan = plan_reply(_requests(workspace, question, [ToolCall("list_dir", {
        "path": "manuals"})])[1], Guidance())
    assert [t.name for t in plan.callable] == ["read_file"] and not plan.answer
    assert plan.callable[0].parameters["properties"]["path"]["const"] == "manuals/wifi.md"


def test_a_listing_question_is_answered_with_the_listing(workspace: Path) -> None:
    question = "what's in the manuals folder?"
    plan = plan_reply(_requests(workspace, question, [ToolCall("list_dir", {
        "path": "manuals", "recursive": True})])[1], Guidance())
    assert "read_file" not in [t.name for t in plan.callable]


@pytest.mark.parametrize("question", [
    "How do I back up my pictures and documents so nothing gets lost?",
    "should I keep my journal on paper or in an app?",
    "my downloads are such a mess haha",
    "Is it safer to keep my photos on a usb stick or online?",
])
def test_files_talked_about_are_no_file_said(question: str) -> None:
    assert not refers_to_files(question)


def test_a_file_said_in_words_is_no_judgement() -> None:
    """"When should I …" is advice by its form, unless the answer is said to be in a file."""
    assert not small_talk("When should I bleed the radiators? It's in my manuals folder.")
    assert small_talk("When should I bleed the radiators?")


@pytest.mark.parametrize(("files", "question", "only", "path"), [
    (["manuals/wifi.md", "manuals/boiler.md"], "the boiler guide in manuals", True,
     "manuals/boiler.md"),
    (["budget/q3.csv"], "what did rent cost in my budget?", True, "budget/q3.csv"),
    (["journal.txt", "budget/q3.csv"], "the spreadsheet in my budget folder", False,
     "budget/q3.csv"),
    (["manuals/wifi.md", "manuals/boiler.md"], "when does it open?", True, None),
])
def test_the_listed_file_meant(files: list[str], question: str, only: bool,
                               path: str | None) -> None:
    assert chosen_entry(files, question, only) == path


# -- questions that need no tool --------------------------------------------------------------
@pytest.mark.parametrize("question", [
    "our shared drive is a disaster honestly, nobody ever finds anything",
    "my inbox is overflowing again lol",
    "How many teeth does an adult have?",
    "how much protein should a person eat every day?",
])
def test_remarks_and_a_kinds_quantity_are_talk(question: str) -> None:
    assert small_talk(question), question


@pytest.mark.parametrize("question", [
    "my order 5521 never arrived",  # a value: the order's
    "how much does a pear cost?",  # a price, a tool's
    "how many letters does the word kiwi have?",  # a count of a word, a tool's
    "my flight to Rome got cancelled, find me another one",  # a request after it
])
def test_a_value_or_a_request_stays_for_the_tools(question: str) -> None:
    assert not small_talk(question), question


@pytest.mark.parametrize("question", [
    "What is rsync used for?",
    "what does the tar command do?",
])
def test_what_a_thing_is_for_is_talk(question: str) -> None:
    assert small_talk(question), question


# -- which file holds a value: a search; a reader needs a file said -------------------------
@pytest.mark.parametrize("question", [
    "I jotted 4471 into one of my files, which was it?",
    "one of my docs has the word tulip, where is it?",
])
def test_a_value_in_one_of_the_files_is_searched(workspace: Path, question: str) -> None:
    plan = plan_reply(_requests(workspace, question, [])[0], Guidance())
    assert [t.name for t in plan.callable] == ["grep"] and not plan.answer, question


@pytest.mark.parametrize("question", [
    "What's the best way to keep my pictures and files safe from a disk failure?",
    "I wiped a file by mistake, can it be undone?",
])
def test_no_reader_when_no_file_is_said(workspace: Path, question: str) -> None:
    plan = plan_reply(_requests(workspace, question, [])[0], Guidance())
    assert "read_file" not in [t.name for t in plan.callable], question


@pytest.mark.parametrize(("question", "path"), [
    ("the readme under manuals says where the boiler is, what does it say?", None),
    ("what's the second step in the boiler instructions?", "manuals/boiler.md"),
    ("how much is food in my q3 spreadsheet?", "budget/q3.csv"),
])
def test_documents_said_by_their_word_or_kind(workspace: Path, question: str,
                                              path: str | None) -> None:
    first = plan_reply(_requests(workspace, question, [])[0], Guidance())
    assert [t.name for t in first.callable] == ["list_dir"] and not first.answer, question
    if path:
        second = plan_reply(_requests(workspace, question, [ToolCall("list_dir", {
            "recursive": True})])[1], Guidance())
        assert second.callable[0].parameters["properties"]["path"]["const"] == path


def test_a_value_written_somewhere_is_searched(workspace: Path) -> None:
    question = "I noted tulip42 somewhere... which file?"
    plan = plan_reply(_requests(workspace, question, [])[0], Guidance())
    assert [t.name for t in plan.callable] == ["grep"] and not plan.answer


@pytest.mark.parametrize("question", [
    "what's the safest way to store old family photos?",
    "Whats the simplest way to keep track of my receipts?",
])
def test_the_safest_or_simplest_way_is_advice(question: str) -> None:
    assert small_talk(question), question


@pytest.mark.parametrize(("question", "listing", "path"), [
    # a file's name said in the singular ("the boiler manual": boiler.md), or with its folder
    ("in my manuals folder, what does the wifi page say?", {"path": "manuals"},
     "manuals/wifi.md"),
    ("tell me what's on my q3 budget sheet", {"recursive": True}, "budget/q3.csv"),
])
def test_the_named_entry_is_read_after_a_listing(workspace: Path, question: str,
                                                 listing: dict[str, Any], path: str) -> None:
    plan = plan_reply(_requests(workspace, question, [ToolCall("list_dir", listing)])[1],
                      Guidance())
    assert [t.name for t in plan.callable] == ["read_file"], question
    assert plan.callable[0].parameters["properties"]["path"]["const"] == path


def test_plural_file_names_match_a_singular_said() -> None:
    files = ["cooking/waffles.md", "cooking/soups.md", "readme.txt"]
    assert chosen_entry(files, "how much sugar is in my waffle recipe?", False) == (
        "cooking/waffles.md")


def test_a_listing_of_a_kind_reads_no_file() -> None:
    assert chosen_entry(["budget/q3.csv"], "list the csv files in budget", False,
                        by_name=True) is None


@pytest.mark.parametrize("question", [
    "Whats the difference between a JPEG and a RAW photo?",  # "whats": "what's"
    "how can I organize years of scanned receipts?",
])
def test_typed_contractions_and_how_to_questions_are_talk(question: str) -> None:
    assert small_talk(question), question


@pytest.mark.parametrize("question", [
    "total the costs in the csv inside my budget folder",
    "look at the manuals folder, open whatever is in there and tell me the password",
    "journal: when is the dentist?",
])
def test_more_files_said_in_words(question: str) -> None:
    assert refers_to_files(question), question
