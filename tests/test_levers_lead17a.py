"""Levers of lead17a (issue 23): time and airport. A conversion tool is not offered for a
time that names no zone, a "their time" is the other person's place when the user says
where they are, a key word typed with two letters swapped still chooses its tool, and "make
it to Y" is where one goes. Each checked without the model, in phrasings of its own."""

from __future__ import annotations

from reactloop import tool
from reactloop._ranking import select_tools, terms
from reactloop.models._fit import lacks_format, takes_format
from reactloop.models._times import zone_of_time
from reactloop.models._trips import trip_places


@tool
def shift_clock(time: str, source_timezone: str, target_timezone: str) -> str:
    """Convert a time of day between two time zones.

    Args:
        time: the time, HH:MM.
        source_timezone: the IANA zone the time is in.
        target_timezone: the IANA zone to convert to.
    """
    return time


@tool
def clock_now(timezone: str) -> str:
    """The current time in a timezone."""
    return timezone


@tool
def place_finder(query: str) -> str:
    """Find a place (a shop, a gate, a lounge) on the terminal map."""
    return query


def test_a_time_without_any_zone_is_no_conversion() -> None:
    spec = shift_clock.spec()
    alone = "Boarding closes at 21:20. How long is the bakery open?"
    assert lacks_format(spec, alone) and not takes_format(spec, alone)
    zoned = "Boarding closes at 21:20 in Madrid, what's that in Karachi?"
    assert takes_format(spec, zoned) and not lacks_format(spec, zoned)


def test_their_time_is_the_place_that_is_not_the_users() -> None:
    text = "quito here. my aunt in warsaw can talk at 18:40 her time, what is that on my clock?"
    assert zone_of_time(text, ("quito", "warsaw")) == "warsaw"
    text = "i'm in perth; a vendor in athens suggests 07:50 their time. when is that for me?"
    assert zone_of_time(text, ("perth", "athens")) == "athens"
    text = "writing from cairo: my boss in lima wants 10:05 his time, what's that here?"
    assert zone_of_time(text, ("cairo", "lima")) == "lima"
    # "my time" still ties the time to where I am
    text = "i'm in perth, call athens at 07:50 my time?"
    assert zone_of_time(text, ("perth", "athens")) == "perth"


def test_a_key_word_typed_with_two_letters_swapped_still_chooses_its_tool() -> None:
    assert "time" in terms("waht tmie is it in Hanoi", expand=True)
    assert "now" in terms("time in Rome rn?", expand=True)  # "rn" is "now", no stronger
    chosen = select_tools([place_finder.spec(), clock_now.spec()], "tiem in Hanoi rn", 1,
                          min_ratio=0.5)
    assert [s.name for s in chosen] == ["clock_now"]
    # words one letter away, or not a swap of neighbours, stay themselves
    assert terms("the item on the tile", expand=True) == ["item", "tile"]
    assert "time" not in terms("emit a mite", expand=True)


def test_make_it_to_a_place_is_where_one_goes() -> None:
    names = ["Tea Corner", "Gate 21", "Prayer Room"]
    q = "All sorted at the tea corner, but now I have to make it to gate 21. Which way do I go?"
    assert trip_places(q, names) == ("Tea Corner", "Gate 21")


def test_how_late_one_may_stay_in_a_place_asks_its_opening_hours() -> None:
    from reactloop._ranking import asked_open

    assert asked_open("My train is at 23:10. Until what time can I stay in the Quiet Room?") == [
        "quiet room"]
    assert asked_open("how late can we hang out at the arcade?") == ["arcade"]
    assert asked_open("till when could I remain inside the spa") == ["spa"]


def test_the_place_whose_hours_are_asked_is_searched_not_a_remark_before_it() -> None:
    from reactloop.messages import ToolSpec
    from reactloop.models._fit import search_terms
    from reactloop.models.local import Candidates

    search = ToolSpec("find_places", "Find places on the terminal map.", {
        "type": "object", "properties": {"term": {"type": "string"}}, "required": ["term"]})
    names = ["Boarding", "Sunset Spa", "Gate 4", "spa", "boarding"]
    question = "Boarding starts at 22:05. How late can I stay in the Sunset Spa?"
    found = Candidates((), ("Boarding", "Sunset Spa", "boarding starts", "the Sunset Spa"))
    assert search_terms(search, found, question, names).strings == ("Sunset Spa",)
