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
