"""Levers for the kinds the blind ``holdout_everyday7.yaml`` run found still missing (issue 23,
ninth sitting, after that run): each checked without the model, in phrasings of its own."""

from __future__ import annotations

import pytest

from reactloop._ranking import asks_documents
from reactloop.models._fit import small_talk
from reactloop.models._trips import trip_places


@pytest.mark.parametrize("question", [
    "Usually, how long does it take to clear security at a big airport?",
    "Generally, should you tip a taxi driver?",
    "In simple terms, what does it mean to amortise a loan?",
    "what does it mean when a flight is overbooked?",
    "What's the difference between a PDF file and a Word document?",
    "How do an Airbus and a Boeing differ, in general?",
    "hey! off to see my sister tomorrow, so excited lol",
    "evening all, long day at work, pretty tired",
])
def test_general_questions_and_greetings_with_a_mood_call_no_tool(question: str) -> None:
    assert small_talk(question), question


@pytest.mark.parametrize("question", [
    "Usually, what time is it in Lima right now?",  # a place with a zone: the clock
    "What's the difference between notes.md and setup.md?",  # two files to read
    "What's the difference in price between the Lounge Pass and the Fast Track?",
    "hey! list my files please",  # a request after a greeting
    "morning! so excited, where is gate 4?",  # a question after a greeting
    "hi, Cafe Aroma, nervous",  # a name: something to act on
])
def test_requests_and_named_things_still_use_tools(question: str) -> None:
    assert not small_talk(question), question


def test_which_of_my_files_is_a_search_of_their_contents() -> None:
    assert asks_documents("Which of my files has the word invoice in it?")
    assert asks_documents("what one of the docs mentions port 5432?")
    assert not asks_documents("Which of my flights is cheaper?")


def test_a_leg_from_here_starts_where_one_is() -> None:
    names = ["Skyway Bar", "Gate 21", "Pharmacy"]
    assert trip_places("I'm at the Skyway Bar. How do I get to gate 21 from here?", names) == (
        "Skyway Bar", "Gate 21")
    assert trip_places("We are in the pharmacy; the way to gate 21 from here, please?",
                       names) == ("pharmacy", "Gate 21")
    assert trip_places("How do I get to gate 21 from here?", names) is None  # where is "here"?
    assert trip_places("from the Skyway Bar to gate 21", names) == ("Skyway Bar", "Gate 21")
