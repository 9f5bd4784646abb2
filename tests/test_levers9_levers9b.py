"""Time levers of the embedded model (issue 23, eleventh sitting, levers9b), each checked
without running the model, on phrasings written here: a zone's name typed in lower case
("asia/tokyo") or an abbreviation in capitals ("EST", "PST") is a zone, and a part of the day
said of a dated trip ("the same morning") asks for no clock."""

from __future__ import annotations

import pytest

from reactloop._demo_tools import current_time
from reactloop._ranking import NAMES_MARK, best_choice, terms
from reactloop._zones import city_zone, zones_in
from reactloop.messages import ToolSpec
from reactloop.models._fit import zone_choices

CONVERT = ToolSpec("time_convert_time", "Convert time between timezones", {
    "type": "object", "properties": {
        "source_timezone": {"type": "string", "description": "Source IANA timezone name"},
        "time": {"type": "string", "description": "Time to convert in 24-hour format (HH:MM)"},
        "target_timezone": {"type": "string", "description": "Target IANA timezone name"}},
    "required": ["source_timezone", "time", "target_timezone"]})


@pytest.mark.parametrize(("question", "zones"), [
    ("asia/tokyo 18:30 -> europe/lisbon", ["Asia/Tokyo", "Europe/Lisbon"]),
    ("africa/nairobi 06:05 in america/mexico_city", ["Africa/Nairobi", "America/Mexico_City"]),
    ("convert 7pm EUROPE/ROME to America/bogota", ["Europe/Rome", "America/Bogota"]),
])
def test_a_zone_name_typed_in_any_case_is_the_zone(question: str, zones: list[str]) -> None:
    assert zones_in(question) == zones
    offered = zone_choices(CONVERT, question).parameters["properties"]
    assert offered["source_timezone"]["enum"] == [zones[0]]
    assert offered["target_timezone"]["enum"] == [zones[1]]


@pytest.mark.parametrize(("question", "zones"), [
    ("what's 3pm EST in CET?", ["EST", "CET"]),
    ("10:00 PST to GMT", ["America/Los_Angeles", "GMT"]),
    ("8:30 IST is what in BST", ["Asia/Kolkata", "Europe/London"]),
    ("noon utc in jst", ["UTC"]),  # only UTC and GMT count in lower case
])
def test_a_time_abbreviation_in_capitals_is_a_zone(question: str, zones: list[str]) -> None:
    assert zones_in(question) == zones


def test_the_demo_clock_takes_a_zone_typed_in_lower_case_or_an_abbreviation() -> None:
    assert city_zone("asia/baku") == "Asia/Baku" and city_zone("PDT") == "America/Los_Angeles"
    assert current_time.fn("australia/darwin").endswith("ACST")
    assert city_zone("Prc") is None and zones_in("c'est la vie, est-ce que ROC is fine") == []


FLIGHTS = ToolSpec("load_skill", "Load a skill.", {
    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    choices=(("fly-away", "Search and book flights between major cities. Use when the user "
              f"wants to find, compare or book a flight.{NAMES_MARK}Lisbon; Oslo; Madrid"),))


@pytest.mark.parametrize("question", [
    "I have a job interview in Oslo on 4 March 2027 and would fly from Lisbon that morning, "
    "economy. What is there and what does it cost?",
    "Conference in Madrid on the 2nd of June, I'd fly out of Oslo early the same morning",
    "got a wedding in Lisbon 2027-09-18, flying in from Madrid the night before, any options?",
])
def test_a_part_of_the_day_of_a_dated_trip_asks_for_no_clock(question: str) -> None:
    assert "current" not in terms(question, expand=True)
    best = best_choice([current_time.spec(), CONVERT, FLIGHTS], question)
    assert best is not None and best[1] == "fly-away"


@pytest.mark.parametrize("question", ["is it still morning in Oslo?",
                                      "Are they asleep in Lisbon right now?"])
def test_a_part_of_the_day_said_of_a_place_still_asks_for_its_clock(question: str) -> None:
    assert "current" in terms(question, expand=True)


@pytest.mark.parametrize(("question", "zones"), [
    ("if it's 9:00 in Portugal what time is it in Kenya?", ["Europe/Lisbon", "Africa/Nairobi"]),
    ("8:00 in Japan is what time in Brazil?", ["Asia/Tokyo", "America/Sao_Paulo"]),
    ("how late is it in new zealand", ["Pacific/Auckland"]),
    ("how long do I roast a turkey at 180 degrees", []),  # a country only where said as a place
])
def test_a_country_said_as_a_place_is_the_zone_of_most_of_its_cities(
        question: str, zones: list[str]) -> None:
    assert zones_in(question) == zones


@pytest.mark.parametrize(("question", "zones"), [
    ("whats 17:20 in Amsterdm in Bangkok time", ["Europe/Amsterdam", "Asia/Bangkok"]),
    ("right now in Melborne, what time is it?", ["Australia/Melbourne"]),
    ("time in sydeny pls", ["Australia/Sydney"]),
    ("say nine o'clock in German", []),  # a word the name starts is no misspelling of it
    ("we meet at 9 in Eastern", []),
])
def test_a_place_misspelt_by_a_letter_is_the_place(question: str, zones: list[str]) -> None:
    assert zones_in(question) == zones


PLACES = ["Oslo", "Madrid", "Lisbon", "Rome", "OSL", "flight", "madrid"]


@pytest.mark.parametrize(("question", "trip"), [
    ("I have a job interview in Oslo on 4 March 2027 and would fly from Lisbon that morning",
     ("Lisbon", "Oslo")),
    ("need to be in rome on 3 june 2027, flying out of madrid, economy pls", ("Madrid", "Rome")),
    ("My trip: Madrid from Lisbon, July 4, 2027, 2 passengers. Options?", ("Lisbon", "Madrid")),
    ("One-way Rome to Oslo 14.07.2027, cheapest option?", ("Rome", "Oslo")),
    ("Our offsite is in Rome on March 3rd 2027; I'm leaving from Oslo. Which flight then?",
     ("Oslo", "Rome")),  # the data's "flight" in lower case is no place
    ("is Oslo colder than Madrid in winter?", None),  # two places, no start said
])
def test_a_trip_said_apart_goes_from_the_place_left_to_the_other(
        question: str, trip: tuple[str, str] | None) -> None:
    from reactloop.models._trips import trip_places

    assert trip_places(question, PLACES) == trip


@pytest.mark.parametrize(("question", "dates"), [
    ("Rome to Oslo 14.07.2027", ["2027-07-14"]), ("Lisbon to Rome, 2027/04/20", ["2027-04-20"]),
    ("on 7/14/2027 please", ["2027-07-14"]), ("on 05/10/2027", ["2027-05-10", "2027-10-05"]),
    ("version 3.5/2027 costs 12.50", []),
])
def test_a_date_typed_in_numbers_with_dots_or_slashes_is_a_date(
        question: str, dates: list[str]) -> None:
    from reactloop._ranking import terms
    from reactloop.models._dates import spoken_dates

    assert spoken_dates(question) == dates
    assert dates == [] or "calculate" not in terms(question, expand=True)  # no division


def test_a_trip_between_two_places_of_a_skill_on_a_day_chooses_the_skill() -> None:
    from reactloop import tool

    @tool
    def add(a: float, b: float) -> float:
        """Add two numbers: the sum, the total."""
        return a + b

    trips = ToolSpec("load_skill", "Load a skill.", {
        "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        choices=(("fly-away", f"Search and book flights.{NAMES_MARK}Lisbon; Oslo; Madrid"),))
    question = "We're four people going from Oslo to Madrid on 2027-09-09. How much in total?"
    clock = ToolSpec("clock", "The time in a zone such as 'Europe/Oslo' or 'Europe/Madrid'.", {})
    best = best_choice([add.spec(), clock, trips], question)
    assert best is not None and best[1] == "fly-away"
    assert best_choice([add.spec(), clock, trips], "time difference from Oslo to Madrid?") is None


@pytest.mark.parametrize("question", [
    "can we push our flight to a later date? would that cost extra",
    "is it possible to rebook the flight for another day, and is there a fee?",
])
def test_a_date_said_as_any_one_is_no_day_to_look_up(question: str) -> None:
    from reactloop import tool

    @tool
    def day_of_week(date: str) -> str:
        """The day of the week of a date.

        Args:
            date: the date, YYYY-MM-DD
        """
        return "Friday"

    assert "current" not in terms(question, expand=True)
    best = best_choice([day_of_week.spec(), current_time.spec(), FLIGHTS], question)
    assert best is not None and best[1] == "fly-away"
    assert "current" in terms("what's the date today?", expand=True)


def test_a_dates_numbers_are_no_codes_of_a_search_result() -> None:
    import json

    from reactloop.models._shaping import headline

    result = json.dumps({"headline": "2 flights from OSL to FCO on 2027-08-01; cheapest XY12 at "
                                     "900 USD", "flights": [
                            {"flight": "XY12", "total_price": 900, "seats_left": 4},
                            {"flight": "XY14", "total_price": 1100, "seats_left": 9}]})
    question = "what does a first class seat from Oslo to Rome cost on 1 Aug 2027?"
    assert headline(result, question).startswith("2 flights from OSL")


def test_a_flight_search_headline_names_each_option_and_the_cheapest(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util
    from pathlib import Path

    monkeypatch.setenv("BOOK_FLIGHT_NOW", "2026-11-27T09:00:00")
    path = Path(__file__).resolve().parents[1] / "examples/skills/book-flight/tools.py"
    spec = importlib.util.spec_from_file_location("book_flight_tools_9b", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found = module.search_flights.fn("London", "Paris", "2027-03-12")
    cheapest = min(found["flights"], key=lambda f: f["total_price"])
    assert all(f["flight"] in found["headline"] for f in found["flights"])
    assert found["headline"].endswith(f"cheapest {cheapest['flight']} at "
                                      f"{cheapest['departure'][-5:]}, "
                                      f"{cheapest['total_price']} USD.")


@pytest.mark.parametrize("question", ["got my surname spelt wrong when I booked, can I fix it?",
                                      "I spelled the last name wrong on our tickets"])
def test_a_misspelt_name_asks_for_the_rule_on_name_corrections(question: str) -> None:
    asked = terms(question, expand=True)
    assert "name" in asked and "correction" in asked
