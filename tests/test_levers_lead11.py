"""Levers from the lead's eleventh round (issue 23), each tested without the model, in
phrasings of no eval set."""

from __future__ import annotations

import json

from reactloop.models._shaping import render_result

CONVERSION = json.dumps({
    "source": {"timezone": "America/Lima", "datetime": "2027-03-04T08:15:00-05:00",
               "day_of_week": "Thursday", "is_dst": False},
    "target": {"timezone": "Asia/Kolkata", "datetime": "2027-03-04T18:45:00+05:30",
               "day_of_week": "Thursday", "is_dst": False},
    "time_difference": "+10.5h"})


def test_a_conversion_answer_starts_with_its_target_written_as_people_write_times() -> None:
    line = render_result(CONVERSION, "8:15 in Lima is what in Kolkata?")
    # the asked-for side first, its clock time readable on its own ("18:45", not "T18:45:00")
    assert line.startswith("target: timezone Asia/Kolkata, datetime 2027-03-04 18:45 (UTC+05:30)")
    assert "source: timezone America/Lima, datetime 2027-03-04 08:15 (UTC-05:00)" in line
    assert "T18:45" not in line


def test_seconds_and_utc_of_a_timestamp_are_kept() -> None:
    assert render_result('{"at": "2027-01-02T03:04:05Z"}') == "at: 2027-01-02 03:04:05 (UTC)"
    assert render_result('{"at": "2027-01-02T03:04"}') == "at: 2027-01-02 03:04"


def test_any_city_of_the_world_resolves_to_its_zone() -> None:
    from reactloop._demo_tools import current_time
    from reactloop._zones import city_zone

    # no zone is named after these: GeoNames' table (src/reactloop/_cities.tsv) knows them
    assert city_zone("Nagoya") == "Asia/Tokyo"
    assert city_zone("düsseldorf") == city_zone("Dusseldorf") == "Europe/Berlin"
    assert city_zone("Cologne") == "Europe/Berlin"  # an exonym of Köln
    assert city_zone("Gothenburg, Sweden") == "Europe/Stockholm"
    assert city_zone("Atlantis") is None
    assert current_time("Leeds").endswith(("GMT", "BST"))


def test_a_city_named_like_a_word_counts_only_where_it_is_said_as_a_place() -> None:
    from reactloop._zones import places_in, zones_in

    assert zones_in("What time is it over in Leeds?") == ["Europe/London"]
    assert zones_in("it's 9:00 in Bern, what's that for my friend in kobe") == [
        "Europe/Zurich", "Asia/Tokyo"]
    assert zones_in("10:30 Nagoya time is what in Lima?") == ["Asia/Tokyo", "America/Lima"]
    # the same names as words or people: no place
    assert places_in("Split the bill four ways") == []
    assert places_in("Nice to meet you! Reading anything good?") == []
    assert places_in("Charlotte says hello") == []


def test_a_power_with_its_exponent_said_as_a_word_is_an_expression() -> None:
    from reactloop._ranking import terms
    from reactloop.models._fit import spoken_powers

    assert spoken_powers("hey, what's 13 to the fifth power?") == ["13**5"]
    assert spoken_powers("3 to the power of seven") == ["3**7"]
    assert spoken_powers("9 raised to the third") == ["9**3"]
    assert "calculate" in terms("what's 13 to the fifth power?", expand=True)
    assert spoken_powers("take lift 2 to the third floor") == []


def test_a_clause_comma_between_spoken_operations_is_no_part_of_a_number() -> None:
    from reactloop.models._operators import spoken_arithmetic

    assert spoken_arithmetic("ok: 845 divided by 5, minus 9?") == ["845 / 5 - 9"]
    assert spoken_arithmetic("what is 3,400 plus 25") == ["3,400 + 25"]


def test_a_bill_shared_by_people_is_its_amounts_added_and_divided() -> None:
    from reactloop._ranking import terms
    from reactloop.models._operators import spoken_splits

    q = "lunch was 131 dollars and we left a 19 dollar tip; split 6 ways, what does each owe?"
    assert spoken_splits(q) == ["(131 + 19) / 6"]
    assert "calculate" in terms(q, expand=True)
    assert spoken_splits("The taxi is $75 with a 20% tip, shared between 3 of us") == [
        "75 * 120 / 100 / 3"]
    assert spoken_splits("We split the 2,100 rent 3 ways") == ["2100 / 3"]
    assert spoken_splits("let's split the check") == []  # no amount, no count: no expression


SALES = "     1\tmonth,amount\n     2\tjanuary,1200\n     3\tfebruary,1350\n     4\tmarch,900\n"


def test_a_tables_total_against_a_target_the_question_says() -> None:
    from reactloop.models._tables import table_total

    assert table_total(SALES, "we hoped for 2,000 in january and march; did we make it?") == (
        "amount january 1200 + march 900 = 2100; 100 over the 2000 aimed for")
    assert table_total(SALES, "Our budget target was 4000 overall. Did we hit it?") == (
        "amount january 1200 + february 1350 + march 900 = 3450; 550 short of the 4000 aimed for")


def test_an_operation_on_one_named_row() -> None:
    from reactloop.models._tables import table_total

    assert table_total(SALES, "what would march be plus 40?") == "amount march 900 + 40 = 940"
    assert table_total(SALES, "and if february doubled?") == "amount february 1350 * 2 = 2700"
    assert table_total(SALES, "march up by 10%?") == "amount march 900 + 90 = 990"


def test_where_one_just_ate_is_the_start_of_the_way() -> None:
    from reactloop.models._trips import trip_places

    names = ["Noodle House", "Gate 4", "Gate 11"]
    assert trip_places("just had lunch at the Noodle House and boarding is at gate 11, "
                       "how far is that?", names) == ("Noodle House", "Gate 11")


def test_a_target_beaten_by_how_much_is_the_totals_gap_not_a_rows_difference() -> None:
    line = render_result(SALES, "we aimed for 3,000 over january and february, did we beat "
                                "it and by how much?")
    assert line.startswith("amount january 1200 + february 1350 = 2550; 450 short of the 3000")


def _first_request(question: str):  # type: ignore[no-untyped-def]
    from pathlib import Path

    from reactloop import Agent
    from reactloop.testing import ScriptedModel

    model = ScriptedModel(["ok"])
    skills = Path(__file__).resolve().parents[1] / "examples" / "skills"
    Agent(model=model, skills=[skills]).run_sync(question)
    return model.requests[0]


def test_a_thing_wanted_chooses_the_skill_whose_data_holds_it_over_a_word_of_another() -> None:
    from reactloop.models._skill_select import skill_call

    # "flight" is book-flight's word; newspapers are what the airport's data sells
    call = skill_call(_first_request(
        "before my flight I'd like to pick up some newspapers, anywhere that sells them?"))
    assert call is not None and call.arguments == {"name": "airport"}
    call = skill_call(_first_request("where could I buy a flight to Singapore?"))
    assert call is not None and call.arguments == {"name": "book-flight"}


def test_now_at_an_hour_over_there_asks_the_clock_and_a_sensible_way_is_advice() -> None:
    from reactloop.models._fit import small_talk

    assert not small_talk("my cousin lives in Leeds. would right now be a strange hour there?")
    assert small_talk("My desk is chaos. What's a smart way to keep my papers and notes tidy?")
    assert not small_talk("What's the best way to get to gate 5?")


def test_an_operation_said_after_then_continues_the_expression() -> None:
    from reactloop.models._operators import spoken_arithmetic

    assert spoken_arithmetic("so 770 divided by 11, and then minus 4?") == ["770 / 11 - 4"]


def test_lead12_history_measures_and_beginners_are_knowledge_and_advice() -> None:
    from reactloop.models._fit import small_talk

    assert small_talk("How did sailors find their way before GPS existed?")
    assert small_talk("why do trains in Japan run so fast, like 300 km/h? curious")
    assert small_talk("I want to learn to code. Where should an absolute beginner start?")
    assert not small_talk("where should I start in Terminal A?")  # a place, there


def test_lead12_the_top_level_of_the_workspace_is_listed() -> None:
    from reactloop.models._listing import asks_listing

    assert asks_listing("what sits at the top level of my workspace? skip the subfolders")


def test_lead12_a_thing_left_behind_is_what_the_search_looks_for() -> None:
    from reactloop._ranking import wanted

    assert wanted("left my phone charger on the plane... can I buy one here?") == [
        "phone charger"]
    assert wanted("what time is it in Lima?") == []


def test_lead12_a_count_of_travellers_said_fills_the_count_argument() -> None:
    from reactloop.messages import ToolCall, ToolSpec
    from reactloop.models._filters import said_filters

    spec = ToolSpec("find_trains", "Find trains.", {"type": "object", "properties": {
        "origin": {"type": "string"}, "travellers": {"type": "integer"}}, "required": ["origin"]})
    call = ToolCall("find_trains", {"origin": "Bern"})
    assert said_filters(call, [spec], "my husband and I go to Bern").arguments == {
        "origin": "Bern", "travellers": 2}
    assert said_filters(call, [spec], "a family of five to Bern").arguments["travellers"] == 5
    assert said_filters(call, [spec], "to Bern at 10:30").arguments == {"origin": "Bern"}


def test_lead12_the_cheapest_is_the_tools_pick_not_a_sum_of_its_records() -> None:
    from reactloop.models._shaping import headline

    result = json.dumps({"headline": "2 trains on 2027-05-04; cheapest IC7 at 09:00, 90 EUR.",
                         "offers": [{"id": "IC7", "total_price": 90}, {"id": "EC9",
                                                                     "total_price": 120}]})
    assert headline(result, "cheapest train on 4 May 2027, total for both of us?").startswith(
        "2 trains on 2027-05-04; cheapest IC7")


def test_lead12_a_thing_wanted_of_two_words_chooses_no_skill_by_one_of_them() -> None:
    from reactloop.models._skill_select import skill_call

    # "travel" is a word of the data-analyst's accounts: the wanted thing is a travel adapter
    call = skill_call(_first_request(
        "forgot my travel adapter in the hotel... can I buy one somewhere in this airport?"))
    assert call is None or call.arguments != {"name": "data-analyst"}


def test_lead12_the_top_level_is_listed_flat_at_the_root() -> None:
    from reactloop.messages import ToolSpec
    from reactloop.models._listing import listing_offer

    lister = ToolSpec("list_dir", "List a folder of the workspace.", {"type": "object",
                      "properties": {"path": {"type": "string"}, "recursive": {
                          "type": "boolean"}}})
    (spec,) = listing_offer((), (lister,), "what's at the top level of my workspace? "
                                           "no need for the subfolders")
    assert spec.parameters["properties"] == {"path": {"type": "string", "const": "."}}


def test_a_search_keeps_a_span_that_says_more_than_the_datas_word() -> None:
    from reactloop.messages import ToolSpec
    from reactloop.models._fit import search_terms
    from reactloop.models.local import Candidates

    search = ToolSpec("find_places", "Find places at the station.", {
        "type": "object", "properties": {"term": {"type": "string"}}, "required": ["term"]})
    found = Candidates((), ("platform", "platform C7", "C7"))
    # "platform" is a word of the data; "platform C7" names the one asked for
    got = search_terms(search, found, "Where is platform C7?", ["platform", "Platform 7"])
    assert "platform C7" in got.strings


def test_a_place_said_with_a_code_is_not_shortened_to_the_datas_word() -> None:
    from reactloop.models._trips import trip_places

    names = ["gate", "Gate 7", "Plaza Coffee Bar", "Burger Point"]
    assert trip_places("directions from gate C7 to the Burger Point please", names) == (
        "gate C7", "Burger Point")
