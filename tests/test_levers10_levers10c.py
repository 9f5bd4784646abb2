"""Levers of the twelfth sitting (levers10c, issue 23): the airport, flights and time. A
region said as a place for the clock (a state, province or island), ... Each checked without
the model, in phrasings of its own (none from an eval set)."""

from __future__ import annotations

import pytest


# -- a region (state, province, island) is a place for the clock ------------------------------
@pytest.mark.parametrize(("said", "zone"), [
    ("Nevada", "America/Los_Angeles"), ("oklahoma", "America/Chicago"),
    ("Manitoba", "America/Winnipeg"), ("Ontario", "America/Toronto"),  # not the Californian city
    ("Tasmania", "Australia/Hobart"), ("Rajasthan", "Asia/Kolkata"), ("Sicily", "Europe/Rome"),
    ("Hawaii", "Pacific/Honolulu"), ("New South Wales", "Australia/Sydney"),
])
def test_a_region_said_as_a_place_is_its_zone(said: str, zone: str) -> None:
    from reactloop._demo_tools import current_time
    from reactloop._zones import city_zone, zones_in

    assert city_zone(said) == zone
    assert zones_in(f"what's the time over in {said} at the moment") == [zone]
    assert current_time.fn(said).endswith(  # type: ignore[attr-defined]
        current_time.fn(zone).rsplit(" ", 1)[-1])  # type: ignore[attr-defined]


# -- what a traveller wants is found where the data keeps that kind of thing -----------------
@pytest.mark.parametrize(("question", "term"), [
    ("my back is killing me, anywhere I can buy ibuprofen?", "medicine"),
    ("is there a place where I can get an espresso before boarding?", "coffee"),
    ("is there somewhere quiet where I could take a nap?", "lounge"),
    ("I can't find my passport anywhere, who do I ask?", "lost and found"),
    ("where do I hand in my suitcases?", "bag drop"),
    ("want to pick up some vodka for my uncle before my flight, where?", "liquor"),
])
def test_a_want_the_data_does_not_name_is_searched_as_its_kind_of_place(
        question: str, term: str) -> None:
    from tests.test_levers_pragmatics import _after_load, _first

    from reactloop.models._skill_select import skill_call

    call = skill_call(_first(question))  # "before my flight" is when, not a booking
    assert call is not None and call.arguments == {"name": "airport"}, question
    plan = _after_load(question, "airport")
    assert plan.candidates is not None and plan.candidates["search_pois"].strings == (term,)


def test_a_thing_the_data_names_is_searched_as_said() -> None:
    from tests.test_levers_pragmatics import _after_load

    plan = _after_load("where could I buy some perfume?", "airport")
    assert plan.candidates is not None and plan.candidates["search_pois"].strings == ("perfume",)


def test_the_hours_of_the_x_place_are_the_xs() -> None:
    from tests.test_levers_pragmatics import _after_load, _first

    from reactloop.models._skill_select import skill_call

    for question in ("when does the burger joint shut tonight?",
                     "what time does the noodle spot open?"):
        call = skill_call(_first(question))  # not the clock's "what time"
        assert call is not None and call.arguments == {"name": "airport"}, question
    plan = _after_load("when does the burger joint shut tonight?", "airport")
    assert plan.candidates is not None and plan.candidates["search_pois"].strings == ("burger",)


# -- a time said in words with its minutes ---------------------------------------------------
@pytest.mark.parametrize(("question", "times"), [
    ("convert nine forty-five in the evening Lisbon time to Denver time", ["21:45"]),
    ("if it's eight oh five in Athens, what time is it in Perth?", ["08:05"]),
    ("the call is at eleven twenty", ["11:20"]),
    ("I had three twenty dollar notes", []),  # money, not a time
    ("she is one of the ten twenty-somethings", []),
])
def test_a_time_said_in_words_with_its_minutes(question: str, times: list[str]) -> None:
    from reactloop.models._times import spoken_times

    assert spoken_times(question) == times


def test_a_conversion_said_in_words_is_a_conversion() -> None:
    from tests.test_levers_pragmatics import _first, _offer

    names, _ = _offer(_first("convert nine forty-five in the evening Lisbon time to Denver time"))
    assert names[0] == "convert_time"


def test_a_magazine_for_the_plane_is_the_airports() -> None:
    from tests.test_levers_pragmatics import _first

    from reactloop.models._skill_select import skill_call

    call = skill_call(_first("where could I pick up a magazine to read on the plane?"))
    assert call is not None and call.arguments == {"name": "airport"}


# -- the nearest thing to a place: one search, sorted by walking distance from the place ------
@pytest.mark.parametrize(("question", "term"), [
    ("closest bathroom to gate 16?", "bathroom near gate 16"),
    ("is there any coffee near gate B14", "coffee near gate B14"),
    ("I'm sitting at gate 2, where's the nearest toilet?", "toilet near gate 2"),
    ("a painkiller close to gate 9, anywhere?", "medicine near gate 9"),
])
def test_the_nearest_thing_to_a_place_is_searched_near_it(question: str, term: str) -> None:
    from tests.test_levers_pragmatics import _after_load

    plan = _after_load(question, "airport")
    assert plan.candidates is not None and plan.candidates["search_pois"].strings == (term,)


def test_the_airport_search_sorts_a_thing_near_a_place_by_distance() -> None:
    from tests.test_skills_examples import MAP

    found = MAP.search("bathroom near gate 16", limit=2)
    assert [f["name"] for f in found] == ["Restroom B East", "Restroom B Central"]
    assert found[0]["distance_m"] < found[1]["distance_m"]
    assert MAP.search("trains to the city")[0]["name"] == "Rail Station"  # held whole
    assert MAP.search("gate 16")[0]["name"] == "Gate 16"


# -- where one is, said without "I'm", and "walk me to" -----------------------------------
@pytest.mark.parametrize(("question", "trip"), [
    ("at gate 17 now. how far to the burger place?", ("Gate 17", "burger place")),
    ("currently by gate 5, walk me to the pharmacy", ("Gate 5", "pharmacy")),
    ("At A3 right now; directions to the noodle house?", ("A3", "Noodle House")),
])
def test_where_one_is_said_bare_is_the_routes_start(question: str, trip: tuple[str, str]) -> None:
    from reactloop.models._trips import trip_places

    names = ["Gate 17", "Gate 5", "Noodle House", "Airport Pharmacy", "Burger Point"]
    assert trip_places(question, names) == trip


# -- "before my flight" says when: what is asked is elsewhere -------------------------------
@pytest.mark.parametrize(("question", "term"), [
    ("three hours to kill before my flight, anywhere to eat?", "food"),
    ("got time before boarding, where could I get a cappuccino?", "coffee"),
    ("after my flight lands I'd like a shower, is there one?", "shower"),
])
def test_a_clause_of_time_about_the_flight_is_no_topic(question: str, term: str) -> None:
    from tests.test_levers_pragmatics import _after_load, _first

    from reactloop.models._skill_select import skill_call
    from reactloop.models._spelled import without_when

    call = skill_call(_first(question))
    assert call is not None and call.arguments == {"name": "airport"}, question
    plan = _after_load(question, "airport")
    assert plan.candidates is not None and plan.candidates["search_pois"].strings == (term,)
    assert without_when("before my flight") == "before my flight"  # nothing else is said


def test_a_rule_question_about_the_flight_stays_the_flights() -> None:
    from tests.test_levers_pragmatics import _first

    from reactloop.models._skill_select import skill_call

    for question in ("can I still change my ticket a day before the flight?",
                     "what do I get back if I cancel two weeks before my flight?"):
        call = skill_call(_first(question))
        assert call is not None and call.arguments == {"name": "book-flight"}, question


def test_a_thing_wanted_somewhere_close_to_a_gate_is_searched_near_it() -> None:
    from tests.test_levers_pragmatics import _after_load

    plan = _after_load("Might I find an espresso anywhere close to gate 8?", "airport")
    assert plan.candidates is not None
    assert plan.candidates["search_pois"].strings == ("coffee near gate 8",)
    # the gate's number is no id to show: the search finds the place first
    plan = _after_load("closest bookshop to gate 14?", "airport")
    assert [t.name for t in plan.callable] == ["search_pois"]


def test_hours_asked_as_kept_and_an_hour_said_in_the_morning() -> None:
    from tests.test_levers_pragmatics import _after_load, _first

    from reactloop.models._skill_select import skill_call

    call = skill_call(_first("what hours does the noodle house keep?"))
    assert call is not None and call.arguments == {"name": "airport"}
    plan = _after_load("is the pharmacy open at 7 in the morning?", "airport")
    assert [t.name for t in plan.callable] == ["search_pois"]  # 7 is no id


def test_a_cup_of_something_is_the_something() -> None:
    from reactloop._ranking import wanted

    assert wanted("where's somewhere I can get a mug of cocoa?")[:1] == ["cocoa"]
    assert wanted("can I pick up a packet of gum anywhere?")[:1] == ["gum"]
