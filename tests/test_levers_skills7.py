"""Skill levers of the embedded model (issue 23, ninth sitting), each checked without running
the model, on phrasings and small data written here: where one is said with what one does
there ("I'm browsing at the bookshop") and a trip to "there", the other place said; a month
said in words with a year as a period filter in the data's own format; a skill's verb name
word ("book") said as a noun chooses no skill."""

from __future__ import annotations

import pytest

from reactloop.messages import ToolSpec

ROUTE = ToolSpec("draw_route", "Draw the walking route between two places on the map.", {
    "type": "object", "properties": {"start": {"type": "string"},
                                     "destination": {"type": "string"}},
    "required": ["start", "destination"]})


@pytest.mark.parametrize(("question", "trip"), [
    ("I'm snacking at the food court; my train leaves at platform 7. Which way there?",
     ("food court", "platform 7")),
    ("We're queuing in the ticket hall and the show is at stage B. Guide me there.",
     ("ticket hall", "stage B")),
    ("I'm reading near the fountain, how do I get to the museum shop?",
     ("fountain", "museum shop")),
])
def test_where_one_is_doing_something_and_a_trip_there_make_a_trip(
        question: str, trip: tuple[str, str]) -> None:
    from reactloop.models._fit import trip_places

    assert trip_places(question) == trip
    assert trip_places("The show is at stage B. Which way there?") is None  # no start said


def test_a_trip_there_goes_to_the_other_place_of_the_data_said() -> None:
    from reactloop.models._fit import argument_choices, is_trip, trip_query

    names = ["Food Court", "Platform 7", "Ticket Hall"]
    question = "I'm snacking at the food court and my train is on platform 7; the way there?"
    assert is_trip(question)
    assert "route" in trip_query(question)
    props = argument_choices(ROUTE, question, names).parameters["properties"]
    assert (props["start"]["enum"], props["destination"]["enum"]) == (
        ["Food Court"], ["Platform 7"])
