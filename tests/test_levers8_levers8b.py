"""Skill levers of the embedded model (issue 23, tenth sitting, levers8b), each checked without
running the model, on phrasings and small skills written here: a trip said without "from"
("Oslo to Copenhagen", "Oslo–Helsinki") chooses the skill whose data holds both places, even beside
a price word that another tool's documentation shares."""

from __future__ import annotations

import pytest

from reactloop import tool
from reactloop._ranking import NAMES_MARK, WORDS_MARK, best_choice
from reactloop.messages import ToolSpec


@tool
def ticket_price(item: str) -> str:
    """The price of an item we sell: how much it costs.

    Args:
        item: the item's name, e.g. 'scarf'
    """
    return "9 EUR"


FERRY = ToolSpec("load_skill", "Load a skill.", {
    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    choices=(("ferry-line", "Search and book ferry crossings between the coast's ports."
              f"{NAMES_MARK}Oslo; Copenhagen; Helsinki; Stockholm{WORDS_MARK}port; cabin"),))


@pytest.mark.parametrize("question", [
    "deck seat Oslo to Copenhagen on 4 May 2027 - how much?",
    "what's the price for a cabin Helsinki–Stockholm on the 2nd of June?",
    "Stockholm to Oslo next week, price?",
])
def test_a_trip_without_from_between_two_places_of_a_skill_chooses_it(question: str) -> None:
    best = best_choice([ticket_price.spec(), FERRY], question)
    assert best is not None and best[1] == "ferry-line"


@pytest.mark.parametrize("question", ["how much is a scarf?", "what time is it in Oslo?",
                                      "is Oslo colder than Helsinki?"])
def test_one_place_or_places_not_joined_are_no_trip(question: str) -> None:
    best = best_choice([ticket_price.spec(), FERRY], question)
    assert best is None


def test_a_trip_said_as_two_data_names_joined_by_to_has_both_legs() -> None:
    from reactloop.models._fit import is_trip, trip_query
    from reactloop.models._trips import trip_places

    names = ["Oslo", "Copenhagen", "Bus Bay 3", "Ferry Pier"]
    assert trip_places("a deck seat oslo to copenhagen on 4 May, price?", names) == (
        "Oslo", "Copenhagen")
    assert trip_places("Ferry Pier → Bus Bay 3 how long?", names) == ("Ferry Pier", "Bus Bay 3")
    assert trip_places("cheapest OSL to Copenhagen next week", names) == ("OSL", "Copenhagen")
    assert trip_places("is Oslo bigger than Copenhagen?", names) is None
    assert is_trip("deck seat Oslo to Copenhagen", names) and not is_trip("deck seat Oslo")
    assert "route" in trip_query("cabin Copenhagen-Oslo", names)


def test_after_loading_a_trip_without_from_offers_the_search_not_the_booking() -> None:
    from reactloop import Message, ToolCall
    from reactloop.models._fit import skill_offer

    @tool
    def find_crossings(origin: str, destination: str, date: str) -> str:
        """Find ferry crossings from one port to another on a day, with prices.

        Args:
            origin: the port of departure
            destination: the port of arrival
            date: the day, YYYY-MM-DD
        """
        return "crossings"

    @tool
    def book_crossing(crossing_id: str, cabin: str = "deck") -> str:
        """Book a crossing found with find_crossings, in a cabin class: deck or cabin.

        Args:
            crossing_id: the crossing's id
            cabin: deck or cabin
        """
        return "booked"

    question = "a cabin seat Oslo to Copenhagen on 4 May 2027, how much?"
    call = ToolCall("load_skill", {"name": "ferry-line"}, id="1")
    messages = [Message.user(question), Message.assistant(None, [call]),
                Message.tool("1", "load_skill", "# Skill: ferry-line\nTools: find_crossings, "
                             "book_crossing")]
    tools = [find_crossings.spec(), book_crossing.spec()]
    offer = skill_offer(tools, tools, messages, question, 3, ["Oslo", "Copenhagen"])
    assert [t.name for t in offer][:1] == ["find_crossings"]


@pytest.mark.parametrize(("question", "spelled_as"), [
    ("do the GL and PLAN figures agree for unit 7?", "gl_ledger and plan_book"),
    ("reconcile gl against the plan book", "gl_ledger against the plan_book"),
    ("what's in the Plan-Book for unit 7", "plan_book"),
])
def test_a_data_name_said_by_its_words_or_abbreviation_is_that_name(
        question: str, spelled_as: str) -> None:
    from reactloop.models._spelled import data_identifiers, spelled

    ledger = ToolSpec("load_skill", "Load a skill.", {
        "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        choices=(("books", "Compare the bookkeeping sources gl_ledger and plan_book. "
                  f"compare_books: Compare two books.{NAMES_MARK}Unit 7"),))
    known = data_identifiers([ledger])
    assert known == ("gl_ledger", "plan_book")  # the tool compare_books is no data name
    assert spelled_as in spelled(question, known)
    assert spelled("plan the day", known) == "plan the day"  # lower case, long: a word
    assert spelled("glue and glass", known) == "glue and glass"


def test_a_row_named_in_other_words_gives_its_figure_without_a_quantity_word() -> None:
    from reactloop.models._shaping import figure

    rows = {"rows": [{"unit": "7", "line": "Fees domestic", "amount": 120.0},
                     {"unit": "7", "line": "Fees foreign", "amount": 80.0},
                     {"unit": "7", "line": "Office rent", "amount": 50.0}]}
    assert figure(rows, "foreign fees of unit 7 in the ledger?").startswith("amount 80")
    assert figure(rows, "office rent for unit 7 please").startswith("amount 50")
    assert figure(rows, "show unit 7") == ""  # nothing named: no figure


PLACES = ["Ticket Hall", "Harbour Cafe", "Pier 4", "Pier 12", "Bike Shed"]


@pytest.mark.parametrize(("question", "trip"), [
    # where one is, said with what follows it; where one goes left to "how far"
    ("waiting in the Harbour Cafe at the moment, our boat leaves from pier 12. how far is it?",
     ("Harbour Cafe", "Pier 12")),
    # "route me to": the destination; where one just was, the other place the data names
    ("Done with my coffee at Harbour Cafe. Route me to pier 4, how many metres?",
     ("Harbour Cafe", "Pier 4")),
])
def test_a_walk_said_from_where_one_is_to_a_place_or_how_far(
        question: str, trip: tuple[str, str]) -> None:
    from reactloop.models._trips import trip_places

    assert trip_places(question, PLACES) == trip
    assert trip_places("Route me somewhere nice", PLACES) is None


def test_a_search_looks_for_what_the_data_knows_before_the_need_said_around_it() -> None:
    from reactloop.models._fit import search_terms
    from reactloop.models.local import Candidates

    search = ToolSpec("find_places", "Find places in the harbour.", {
        "type": "object", "properties": {"term": {"type": "string"}}, "required": ["term"]})
    question = "Need plasters urgently. is there a first aid post somewhere?"
    found = Candidates((), ("plasters", "urgently", "plasters urgently", "first aid post",
                            "first aid"))
    got = search_terms(search, found, question, ["Harbour Cafe", "first aid", "plasters box"])
    assert got.strings == ("first aid",)


def test_a_filter_key_a_sibling_tool_shows_is_filled_from_the_question() -> None:
    from reactloop import ToolCall
    from reactloop.models._filters import said_filters

    @tool
    def ledger_rows(book: str, filters: dict[str, str] | None = None) -> str:
        """Rows of one ledger.

        Args:
            book: the ledger's name.
            filters: values to keep, e.g. {"branch": "B7", "month": "2024-01"}.
        """
        return "rows"

    @tool
    def ledger_diff(book_a: str, book_b: str, filters: dict[str, str] | None = None) -> str:
        """Compare two ledgers.

        Args:
            book_a: the reference ledger.
            book_b: the other ledger.
            filters: values to keep in both, e.g. {"branch": "B7"}.
        """
        return "diff"

    call = ToolCall("ledger_diff", {"book_a": "sales", "book_b": "stock"})
    question = "For March 2025, do sales and stock agree?"
    filled = said_filters(call, [ledger_diff.spec(), ledger_rows.spec()], question)
    assert filled.arguments["filters"] == {"month": "2025-03"}
    assert said_filters(call, [ledger_diff.spec()], question) == call  # no example: no key


def test_the_step_after_a_search_is_no_route_when_the_question_is_no_trip() -> None:
    from reactloop import Message, ToolCall
    from reactloop.models.local import Turn, follow_up

    find = ToolSpec("find_stalls", "Find market stalls. Then mark the stall found with "
                    "mark_stall, or the path to it with draw_path.", {
                        "type": "object", "properties": {"term": {"type": "string"}},
                        "required": ["term"]})
    mark = ToolSpec("mark_stall", "Mark a stall on the map, with its details.", {
        "type": "object", "properties": {"stall_id": {"type": "integer"}},
        "required": ["stall_id"]})
    path = ToolSpec("draw_path", "Draw the path from one place to another place.", {
        "type": "object", "properties": {"start": {"type": "string"},
                                         "destination": {"type": "string"}},
        "required": ["start", "destination"]})
    call = ToolCall("find_stalls", {"term": "cheese"}, id="1")
    result = Message.tool("1", "find_stalls", '[{"id": 7, "name": "Cheese Place"}]')
    del call
    tools, allowed = [find, mark, path], {"find_stalls", "mark_stall", "draw_path"}
    turn = Turn("when does the cheese place open in the morning?", (result,))
    nxt = follow_up(turn, tools, allowed)
    assert nxt is not None and nxt.name == "mark_stall"
    trip = Turn("the way from the cheese place to the other place?", (result,))
    nxt = follow_up(trip, tools, allowed)
    assert nxt is not None and nxt.name == "draw_path"


def test_a_compound_word_the_data_knows_the_first_part_of_searches_for_it() -> None:
    from reactloop.models._fit import search_terms
    from reactloop.models.local import Candidates

    search = ToolSpec("find_places", "Find places in the harbour: a shop, a kiosk, a cafe.", {
        "type": "object", "properties": {"term": {"type": "string"}}, "required": ["term"]})
    names = ["Harbour Cafe", "fish", "maps", "tea"]
    found = Candidates((), ("mark", "the fishshop", "fishshop", "mark the fishshop"))
    assert search_terms(search, found, "mark the fishshop", names).strings == ("fish",)
    found = Candidates((), ("any", "teakiosk", "any teakiosk"))
    assert search_terms(search, found, "any teakiosk?", names).strings == ("tea",)
    found = Candidates((), ("fisherman", "a fisherman"))  # "erman" is nothing the data says
    assert "fish" not in search_terms(search, found, "a fisherman?", names).strings


def test_a_row_named_without_a_measure_still_gets_the_field_asked() -> None:
    from reactloop.models._shaping import figure

    rows = [{"unit": "7002", "kind": "Main store", "city": "Bergen"},
            {"unit": "7002", "kind": "Outlet", "city": "Voss"}]
    assert figure(rows, "which city is unit 7002's main store in?") == (
        "city Bergen (1 record: 7002)")


def test_where_a_boat_leaves_from_is_where_one_goes_not_where_one_comes_from() -> None:
    from reactloop import ToolCall
    from reactloop.models._shaping import order_directions

    call = ToolCall("draw_path", {"start": "Harbour Cafe", "destination": "Pier 12"})
    question = "sitting in the Harbour Cafe, my ferry leaves from pier 12. how far is it?"
    assert order_directions(call, question) == call
    back = ToolCall("draw_path", {"start": "Pier 12", "destination": "Harbour Cafe"})
    assert order_directions(back, "the way to Pier 12 from Harbour Cafe?").arguments == {
        "start": "Harbour Cafe", "destination": "Pier 12"}


def test_a_time_of_day_is_no_search_term() -> None:
    from reactloop.models._fit import search_terms
    from reactloop.models.local import Candidates

    search = ToolSpec("find_places", "Find places in the harbour.", {
        "type": "object", "properties": {"term": {"type": "string"}}, "required": ["term"]})
    found = Candidates((), ("10:30pm", "at 10:30pm", "tea", "Harbour Cafe", "7 am"))
    got = search_terms(search, found, "tea at the Harbour Cafe at 10:30pm or 7 am?", [])
    assert not {"10:30pm", "at 10:30pm", "7 am"} & set(got.strings)
    assert "Harbour Cafe" in got.strings
    assert "42" in search_terms(search, Candidates((), ("42", "pier")), "pier 42 or 42?", []).strings
