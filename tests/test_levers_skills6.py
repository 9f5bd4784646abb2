"""Skill levers of the embedded model (issue 23, eighth sitting), each checked without running
the model, on small skills written here (not only the example skills): a name of a skill's
data said however punctuated ("lost and found" for "Lost & Found") or a label of its data in
lower case chooses the skill; the headings and table labels of a skill's documents rank it
for a question on them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, tool
from reactloop._ranking import said_names
from reactloop.models._skill_select import reference_call, skill_call
from reactloop.skills._names import data_names
from reactloop.testing import ScriptedModel


@tool
def convert_units(value: float, unit: str) -> str:
    """Convert a value from one unit to another.

    Args:
        value: the amount to convert
        unit: the unit to convert to
    """
    return "converted"


@tool
def count_items(text: str) -> int:
    """Count how many items, pieces or words a text lists.

    Args:
        text: the text whose items to count
    """
    return len(text.split())


def _skill(root: Path, name: str, description: str, files: dict[str, str]) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n"
                                     "Answer from the skill's files.\n")
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    return folder


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    """A stadium (places with names and lower-case tags) and a ferry line (crossings, and a
    document of its ticket rules as a table)."""
    places = [{"name": "Lost & Found", "tags": ["help desk", "umbrellas"], "stand": "North"},
              {"name": "East Stand Kiosks", "tags": ["hot dogs", "first aid", "blankets"],
               "stand": "East"}]
    _skill(tmp_path, "stadium", "Seats, stands and services of the city stadium.",
           {"data/places.json": json.dumps(places), "tools.py": STADIUM_TOOLS})
    rules = ("# Ticket rules\n\n| ticket | hand luggage | pets |\n|---|---|---|\n"
             "| saver | 1 bag | no |\n| flexi | 2 bags | small dogs |\n")
    _skill(tmp_path, "ferry", "Book ferry crossings between the islands.",
           {"data/crossings.csv": "from,to,departs\nNorthport,Gull Island,08:15\n",
            "references/ticket_rules.md": rules, "tools.py": FERRY_TOOLS})
    return tmp_path


STADIUM_TOOLS = '''
from reactloop import tool


@tool
def find_places(term: str) -> str:
    """Find places of the stadium by what they are or offer.

    Args:
        term: what to look for, e.g. 'kiosk'.
    """
    return "found"
'''


FERRY_TOOLS = '''
from reactloop import tool


@tool
def find_crossings(origin: str, destination: str, date: str, fare: str = "saver") -> str:
    """Find ferry crossings from one port to another on a day, with their prices.

    Args:
        origin: the port the ferry leaves from, e.g. 'Northport'.
        destination: the port it goes to.
        date: the day of the crossing, YYYY-MM-DD.
        fare: saver, flexi, premium or family.
    """
    return "found"


@tool
def reserve_crossing(crossing_id: str) -> str:
    """Reserve a crossing found with find_crossings.

    Args:
        crossing_id: the crossing's id from find_crossings, e.g. 'NP1-20270303'.
    """
    return "reserved"
'''


def _first_request(question: str, skills: Path) -> Any:
    model = ScriptedModel(["ok"])
    Agent(model=model, tools=[convert_units], skills=[skills]).run_sync(question)
    return model.requests[0]


def test_a_name_said_however_punctuated_is_said() -> None:
    names = ["Lost & Found", "Restrooms", "Check-in Hall", "Gate 1", "EUR"]
    assert said_names(names, "is there a lost and found around?") == ["Lost & Found"]
    assert said_names(names, "any restroom nearby") == ["Restrooms"]
    assert said_names(names, "where's the check in hall") == ["Check-in Hall"]
    assert said_names(names, "the corridor at gates 1-2") == []  # a range names no gate
    assert said_names(names, "I'm at gate 1.") == ["Gate 1"]
    assert said_names(names, "in eur please") == []  # a code in capitals only in capitals


@pytest.mark.parametrize("question", [
    "I left my umbrella on the ferry... where's the lost and found?",
    "Where is lost-and-found?",
    "are hot dogs sold anywhere here?",
])
def test_a_name_or_label_of_a_skills_data_chooses_it(question: str, skills: Path) -> None:
    call = skill_call(_first_request(question, skills))
    assert call is not None and call.arguments == {"name": "stadium"}, question


def test_a_lower_case_label_of_little_words_is_no_name(tmp_path: Path) -> None:
    folder = _skill(tmp_path, "trains", "Train times.", {"data/status.json": json.dumps(
        [{"status": "on time"}, {"status": "per day"}, {"note": "Delayed by the weather."},
         {"tags": ["dining car", "quiet zone"]}])})
    assert data_names(folder) == ("dining car", "quiet zone")


def test_the_labels_of_a_skills_documents_rank_it(skills: Path) -> None:
    from reactloop.skills._documents import document_phrases, document_terms

    assert document_terms(skills / "ferry") == (
        "Ticket rules", "ticket", "hand luggage", "pets", "saver", "flexi")
    # its labels of two words or more count as names: said, they choose the skill
    assert document_phrases(skills / "ferry") == ("Ticket rules", "hand luggage")
    model = ScriptedModel(["ok"])
    Agent(model=model, tools=[convert_units, count_items], skills=[skills]).run_sync(
        "How many pieces of hand-luggage can I bring?")
    call = skill_call(model.requests[0])
    assert call is not None and call.arguments == {"name": "ferry"}
    question = "How much hand luggage can I take on a flexi?"
    call = skill_call(_first_request(question, skills))
    assert call is not None and call.arguments == {"name": "ferry"}
    # and once loaded, its document is what the question reads
    model = ScriptedModel([call, "done"])
    Agent(model=model, tools=[convert_units], skills=[skills]).run_sync(question)
    read = reference_call(model.requests[1])
    assert read is not None and read.arguments["path"] == "references/ticket_rules.md"


@pytest.mark.parametrize(("said", "iso"), [
    ("on 3 March 2027", "2027-03-03"), ("March 3rd, 2027", "2027-03-03"),
    ("the 14th of feb 2028", "2028-02-14"), ("Sept 9 2027", "2027-09-09"),
    ("2027-03-03", "2027-03-03")])
def test_a_date_said_in_words_is_a_yyyy_mm_dd_value(said: str, iso: str) -> None:
    import datetime as dt

    from reactloop.models._dates import spoken_dates

    assert spoken_dates(f"a crossing {said} please", dt.date(2026, 11, 26)) == [iso]
    assert spoken_dates("on 30 February 2027", dt.date(2026, 11, 26)) == []
    assert spoken_dates("I may need 3 seats") == []
    # without a year: the next such day
    assert spoken_dates("on 3 March", dt.date(2027, 4, 1)) == ["2028-03-03"]


def _loaded(question: str, skills: Path) -> Any:
    from reactloop import ToolCall

    pytest.importorskip("llama_cpp")
    from reactloop.models.local import Guidance, plan_reply

    model = ScriptedModel([ToolCall("load_skill", {"name": "ferry"}), "done"])
    Agent(model=model, tools=[convert_units], skills=[skills]).run_sync(question)
    return model.requests[1], plan_reply(model.requests[1], Guidance())


def test_a_priced_trip_on_a_date_in_words_searches_not_reads_the_rules(skills: Path) -> None:
    question = "How much is a flexi ticket from Northport to Gull Island on 3 March 2027?"
    request, plan = _loaded(question, skills)
    assert reference_call(request) is None  # the search takes the date: no document read
    assert [t.name for t in plan.callable if not t.internal] == ["find_crossings"]
    props = plan.callable[0].parameters["properties"]
    assert props["date"]["enum"] == ["2027-03-03"]
    assert props["fare"]["enum"] == ["flexi"]


def test_an_option_said_before_another_qualifies_it() -> None:
    from reactloop.messages import ToolSpec
    from reactloop.models._fit import said_options

    spec = ToolSpec("hire_car", "Hire a car.", {"type": "object", "properties": {
        "category": {"type": "string", "description": "compact, premium, suv or van"}}})
    assert said_options(spec, "a premium suv for two days") == {"category": ["premium"]}
    assert said_options(spec, "a compact or a van?") == {"category": ["compact", "van"]}


@pytest.mark.parametrize(("question", "trip"), [
    ("I just returned my bike at the bike shed. What's the way to the library?",
     ("bike shed", "library")),
    ("I'm sitting in the canteen - how do I get to lecture hall 4?",
     ("canteen", "lecture hall 4")),
    ("Just got off the shuttle bus, which way to the sports centre?",
     ("shuttle bus", "sports centre")),
    ("Directions to room 12 please, I'm near the main gate.", ("main gate", "room 12")),
])
def test_where_one_goes_and_where_one_is_said_apart_make_a_trip(
        question: str, trip: tuple[str, str]) -> None:
    from reactloop.models._fit import trip_places

    assert trip_places(question) == trip
    assert trip_places("What's the way to the library?") is None  # no start said


def test_a_start_in_the_datas_words_is_the_datas_name() -> None:
    from reactloop.messages import ToolSpec
    from reactloop.models._fit import argument_choices, trip_places

    names = ["Bike Shed North", "Library", "Lecture Hall 4", "Room 12"]
    # said apart, the one other place of the data the question names is the start
    assert trip_places("Shed for bikes is behind me; the way to room 12?", names) is None
    assert trip_places("Bike shed north done. Which way to room 12?", names) == (
        "Bike Shed North", "Room 12")
    assert trip_places("I'm at the north bike shed, the way to room 12?", names) == (
        "Bike Shed North", "Room 12")
    route = ToolSpec("find_route", "Walking route between two places.", {
        "type": "object", "properties": {"start": {"type": "string"},
                                         "destination": {"type": "string"}},
        "required": ["start", "destination"]})
    props = argument_choices(route, "I just left the bike shed north. Way to lecture hall 4?",
                             names).parameters["properties"]
    assert (props["start"]["enum"], props["destination"]["enum"]) == (
        ["Bike Shed North"], ["Lecture Hall 4"])


@tool
def query_sales(table: str, filters: dict[str, str] | None = None) -> str:
    """Rows of one sales table.

    Args:
        table: the table's name.
        filters: column values to keep, e.g. {"store": "S12", "year": "2024"}.
    """
    return "rows"


def test_the_values_a_question_gives_for_an_examples_keys_fill_the_filters() -> None:
    from reactloop import ToolCall
    from reactloop.models._filters import said_filters

    spec = query_sales.spec()
    call = ToolCall("query_sales", {"table": "weekly_sales"})
    filled = said_filters(call, [spec], "What did store S7 sell in year 2023 in weekly_sales?")
    assert filled.arguments == {"table": "weekly_sales",
                                "filters": {"store": "S7", "year": "2023"}}
    assert said_filters(call, [spec], "How is store 12's trend?").arguments["filters"] == {
        "store": "12"}
    # nothing said for its keys, or the call gave what was said: the call as it was
    assert said_filters(call, [spec], "Show weekly_sales") == call
    given = ToolCall("query_sales", {"table": "t", "filters": {"store": "S7"}})
    assert said_filters(given, [spec], "store S7 please") == given
    # (levers10a) a value the call wrote for a key the question gives another value: the question's
    other = ToolCall("query_sales", {"table": "t", "filters": {"store": "S1"}})
    assert said_filters(other, [spec], "store S7 please").arguments["filters"] == {"store": "S7"}


def test_a_figure_asked_of_named_records_is_theirs_and_a_difference_shows_its_parts() -> None:
    from reactloop.models._shaping import figure

    rows = {"rows": [
        {"store": "S7", "year": "2023", "line": "Garden furniture", "revenue": 1200.0},
        {"store": "S7", "year": "2023", "line": "Kitchen tools", "revenue": 800.0},
        {"store": "S9", "year": "2023", "line": "Garden furniture", "revenue": 500.0}]}
    assert figure(rows, "What did store S7 earn on garden furniture in 2023?") == (
        "revenue 1200 (1 record: 2023, Garden furniture, S7)")
    diffs = {"top_differences": [
        {"key": {"store": "S7", "month": "202301"}, "absolute_diff": -40, "status": "minor"},
        {"key": {"store": "S7", "month": "202302"}, "absolute_diff": 950, "status": "major"}]}
    assert figure(diffs, "Where do the two ledgers differ for store S7?") == (
        "absolute_diff total 910 (2 records; 202302 major S7 950, 202301 minor S7 -40)")


def test_the_cells_of_a_documents_table_that_a_question_asks_for_begin_the_answer() -> None:
    from reactloop.models._doc_tables import table_cells
    from reactloop.models._shaping import render_result

    rules = ("# Room rules\n\n| room | late checkout | breakfast | pets |\n|---|---|---|---|\n"
             "| standard | until 11:00 | extra | no |\n| deluxe | until 13:00 | included | no |\n"
             "| suite | until 15:00 | included | small dogs |\n\n- Quiet hours from 22:00.\n")
    # a row and a column said: their cell; of "deluxe standard" the first qualifies
    assert table_cells(rules, "Until when is late checkout in a deluxe standard room?") == (
        "deluxe late checkout: until 13:00")
    assert table_cells(rules, "Tell me about the suite") == (
        "suite: late checkout until 15:00, breakfast included, pets small dogs")
    assert table_cells(rules, "Is breakfast included?") == (
        "breakfast: standard extra, deluxe included, suite included")
    assert table_cells(rules, "When are quiet hours?") == ""  # no row, no column
    assert render_result(rules, "Can I bring pets to the suite?").startswith(
        "suite pets: small dogs; ")


def test_a_search_looks_for_the_word_the_skills_data_holds(skills: Path) -> None:
    from reactloop import ToolCall

    pytest.importorskip("llama_cpp")
    from reactloop.models.local import Guidance, plan_reply
    from reactloop.skills._names import data_words

    assert "blankets" in data_words(skills / "stadium")
    assert "blankets" not in data_names(skills / "stadium")  # a word never chooses the skill
    model = ScriptedModel([ToolCall("load_skill", {"name": "stadium"}), "done"])
    Agent(model=model, tools=[convert_units], skills=[skills]).run_sync(
        "Brr, I am freezing, is there a blanket somewhere?")
    plan = plan_reply(model.requests[1], Guidance())
    assert plan.candidates is not None
    assert plan.candidates["find_places"].strings == ("blanket",)
