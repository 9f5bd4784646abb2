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
