"""The embedded model's levers that generalise beyond the everyday eval's phrasings (issue 23,
``benchmarks/evals/everyday_more.yaml``), each checked without running the model: small talk
that says a tool's word calls nothing, a workspace file is no skill document, an argument's
documented format decides between tools, an expression goes whole to the calculator, a folder
named is the path, a file read or document begins the answer with what the question asks, a
skill's own name words do not choose among its tools, and a retry never swaps the user's city
for an example."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, Message, ModelRequest, ToolCall, tool
from reactloop._demo_tools import add, calculate, current_time, multiply
from reactloop._ranking import select_tools
from reactloop.messages import ModelSettings, ToolSpec
from reactloop.models._fit import fitting, whole_expression
from reactloop.models._shaping import render_result
from reactloop.models._skill_select import reference_call, skill_call
from reactloop.testing import ScriptedModel

pytest.importorskip("llama_cpp")

from reactloop.models.local import Guidance, Turn, conversation_values, plan_reply

ROOT = Path(__file__).resolve().parents[1]
SKILLS = ROOT / "examples" / "skills"
WORKSPACE = ROOT / "benchmarks" / "evals" / "workspace"


@tool
def day_of_week(date: str) -> str:
    """Return the day of the week of a date.

    Args:
        date: the date as YYYY-MM-DD, e.g. '2024-03-15'
    """
    return "Friday"


@tool
def convert_time(source_timezone: str, time: str, target_timezone: str) -> str:
    """Convert time between timezones.

    Args:
        source_timezone: Source IANA timezone name (e.g., 'America/New_York')
        time: Time to convert in 24-hour format (HH:MM)
        target_timezone: Target IANA timezone name (e.g., 'Asia/Tokyo', 'America/San_Francisco')
    """
    return "converted"


def _first(question: str, tools: list[Any], **kwargs: Any) -> ModelRequest:
    """The first request a real agent with ``tools`` (and skills, a workspace) sends."""
    model = ScriptedModel(["ok"])
    Agent(model=model, tools=tools, **kwargs).run_sync(question)
    return model.requests[0]


def _offer(request: ModelRequest) -> tuple[list[str], bool]:
    plan = plan_reply(request, Guidance())
    return [t.name for t in plan.callable], plan.answer


@pytest.mark.parametrize("question", [
    "What a lovely day it is!", "My name is Sam, nice to meet you.",
    "I have no time to chat now, have a good one.", "That was a long list, thanks!",
    "I will call you later, thanks for your help."])
def test_small_talk_that_says_a_tools_word_calls_nothing(question: str) -> None:
    request = _first(question, [day_of_week, current_time], skills=[SKILLS],
                     workspace=WORKSPACE)
    assert _offer(request) == ([], True)
    assert skill_call(request) is None


@pytest.mark.parametrize("question", ["What day of the week was 2024-03-15?",
                                      "I need to know the day of 2024-03-15."])
def test_a_request_saying_the_same_words_still_calls(question: str) -> None:
    assert _offer(_first(question, [day_of_week, current_time])) == (["day_of_week"], False)


@pytest.mark.parametrize("question", ["Show me the contents of docs/faq.md",
                                      "Which file mentions the printer?",
                                      "Could you open setup.md in the docs directory?"])
def test_a_workspace_file_is_no_skill_document(question: str) -> None:
    request = _first(question, [], skills=[SKILLS], workspace=WORKSPACE)
    callable_, _ = _offer(request)
    assert callable_ and not {"load_skill", "load_skill_reference"} & set(callable_)
    assert callable_ == (["grep"] if "mentions" in question else ["read_file"])


def test_no_skill_loader_and_no_document_reader_before_a_skill_is_loaded() -> None:
    request = _first("Show me the contents of docs/faq.md", [], skills=[SKILLS],
                     workspace=WORKSPACE)
    every = request.all_tools
    names = {t.name for t in fitting(every, "Show me the contents of docs/faq.md", [],
                                     guided_skills=True, loaded=False)}
    assert "read_file" in names and not {"load_skill", "load_skill_reference"} & names
    names = {t.name for t in fitting(every, "Show me docs/faq.md", [], guided_skills=True,
                                     loaded=True)}
    assert "load_skill_reference" in names and "load_skill" not in names


def test_an_argument_in_a_documented_format_decides_between_tools() -> None:
    tools = [convert_time, current_time]
    # no HH:MM in the question: no conversion
    assert _offer(_first("Do you know what time it is in Sydney?", tools))[0] == [
        "current_time"]
    # a time given: the tool whose argument takes it
    asked = "When it is 09:00 in Europe/Paris, what time is it in America/New_York?"
    assert _offer(_first(asked, tools))[0] == ["convert_time"]


def test_an_expression_of_several_operators_goes_whole_to_the_calculator() -> None:
    tools = [add, multiply, calculate]
    assert _offer(_first("what's (3 + 4) * (10 - 6)?", tools))[0] == ["calculate"]
    whole = [add.spec(), multiply.spec(), calculate.spec()]
    assert whole_expression(whole, "what's (3 + 4) * (10 - 6)?") == [calculate.spec()]
    assert whole_expression(whole, "Compute 2^8 for me") == [calculate.spec()]
    # one operator: the plain tools stay offered
    specs = [add.spec(), calculate.spec()]
    assert whole_expression(specs, "What is 17 + 25?") == specs


def test_a_folder_named_is_the_path_without_the_word_folder() -> None:
    got = conversation_values(Turn("What's inside the data folder?", ())).strings
    assert "data" in got and not any("folder" in s for s in got)
    got = conversation_values(Turn("Could you open setup.md in the docs directory?", ())).strings
    assert "docs/setup.md" in got and not any("directory" in s for s in got)


def test_a_plain_text_result_begins_the_answer_with_its_lines() -> None:
    read = "     1\tmonth,amount\n     2\tjanuary,1200\n     3\tfebruary,1350\n"
    assert render_result(read, "Read data/sales.csv") == (
        "month,amount; january,1200; february,1350")
    rules = (SKILLS / "book-flight" / "references" / "fare_rules.md").read_text()
    line = render_result(rules, "Can I get a refund if I cancel my flight?")
    assert not line.startswith("# Fare rules") and "refund" in line.split(";")[0]


def test_a_skills_own_name_words_do_not_choose_among_its_tools() -> None:
    question = "Can I get a refund if I cancel my flight booking?"
    model = ScriptedModel([ToolCall("load_skill", {"name": "book-flight"}), "done"])
    Agent(model=model, skills=[SKILLS]).run_sync(question)
    call = reference_call(model.requests[1])
    assert call is not None and call.arguments["path"] == "references/fare_rules.md"


def test_a_retry_never_swaps_the_users_city_for_an_example() -> None:
    spec = current_time.spec()

    def retry(question: str, value: str, error: str) -> str:
        asked = Message.user(question)
        call = Message.assistant(None, [ToolCall("current_time", {"timezone": value}, "c1")])
        failed = Message.tool("c1", "current_time", error, is_error=True)
        request = ModelRequest("sys", (asked, call, failed), (spec,), (), ModelSettings())
        return plan_reply(request, Guidance()).grammar or ""

    hint = "unknown timezone '{}'; use an IANA name like 'Europe/Paris'"
    assert "Europe/Paris" not in retry("What time is it in Atlantis?", "Atlantis",
                                       hint.format("Atlantis"))
    # an example that fixes what the user said stays copyable
    assert "Europe/Paris" in retry("What time is it in Paris?", "Paris", hint.format("Paris"))


def test_a_request_without_format_values_still_ranks_the_tool() -> None:
    specs: list[ToolSpec] = [convert_time.spec(), current_time.spec()]
    assert select_tools(specs, "What time is it in Sydney?", 2)[0].name in {
        "current_time", "convert_time"}


def test_an_hour_asks_the_clock_not_a_skill() -> None:
    request = _first("What hour is it in Singapore at the moment?", [current_time],
                     skills=[SKILLS])
    assert skill_call(request) is None
    assert _offer(request) == (["current_time"], False)


def test_a_file_placed_in_a_folder_is_copied_as_its_path() -> None:
    got = conversation_values(Turn("Could you open setup.md in the docs directory?", ())).strings
    assert "docs/setup.md" in got and "setup.md" not in got


def test_a_retry_does_not_copy_the_tool_an_error_says_to_call() -> None:
    request = _first("Read the file setup.md", [], workspace=WORKSPACE)
    read = next(t for t in request.all_tools if t.name == "read_file")
    asked = Message.user("Read the file setup.md")
    call = Message.assistant(None, [ToolCall("read_file", {"path": "setup.md"}, "c1")])
    failed = Message.tool("c1", "read_file", "'setup.md' does not exist in the workspace; call "
                          "list_dir to see what is there.", is_error=True)
    retry = plan_reply(ModelRequest("sys", (asked, call, failed), (read,), (), ModelSettings()),
                       Guidance())
    assert retry.candidates is not None
    assert "list_dir" not in retry.candidates["read_file"].strings


def test_the_side_a_question_word_asks_about_is_the_target() -> None:
    from reactloop.models._shaping import order_directions

    wrong = ToolCall("convert_time", {"source_timezone": "America/New_York", "time": "09:00",
                                      "target_timezone": "Europe/Paris"})
    asked = "When it is 09:00 in Europe/Paris, what time is it in America/New_York?"
    fixed = order_directions(wrong, asked).arguments
    assert (fixed["source_timezone"], fixed["target_timezone"]) == (
        "Europe/Paris", "America/New_York")
    right = ToolCall("convert_time", {"source_timezone": "Asia/Tokyo", "time": "10:15",
                                      "target_timezone": "Europe/Paris"})
    assert order_directions(right, "What is 10:15 Asia/Tokyo time in Europe/Paris time?") is right
    assert order_directions(right, "If it is 10:15 in Asia/Tokyo, what time is it in "
                                   "Europe/Paris?") is right


def test_the_place_a_time_is_said_in_is_the_source() -> None:
    from reactloop.models._shaping import order_directions
    from reactloop.models._times import zone_of_time

    said_first = ToolCall("convert_time", {"source_timezone": "America/Lima", "time": "06:40",
                                           "target_timezone": "Asia/Seoul"})
    fixed = order_directions(said_first, "what time in America/Lima is 06:40 in Asia/Seoul?")
    assert (fixed.arguments["source_timezone"], fixed.arguments["target_timezone"]) == (
        "Asia/Seoul", "America/Lima")
    later = "What time is it in America/Lima when it's 6:40am in Asia/Seoul?"
    assert order_directions(said_first, later).arguments["source_timezone"] == "Asia/Seoul"
    # "to" ties no place to the time: the direction words decide, as before
    assert zone_of_time("convert 9:00 to lima time from seoul", ("lima", "seoul")) is None
    assert zone_of_time("in lima at 9am, what time is it in seoul?", ("lima", "seoul")) == "lima"
    assert zone_of_time("lima's 08:00 is what in seoul?", ("lima", "seoul")) == "lima"
    assert order_directions(said_first, "Convert 06:40 from America/Lima to Asia/Seoul") is (
        said_first)


def test_a_file_tool_copies_a_file_name_not_a_verb() -> None:
    request = _first("Could you open setup.md in the docs directory?", [], workspace=WORKSPACE)
    plan = plan_reply(request, Guidance())
    assert plan.candidates is not None
    assert plan.candidates["read_file"].strings == ("docs/setup.md",)
    # no file named: the question's words stay (a folder's name)
    plan = plan_reply(_first("Which files are in the docs folder?", [], workspace=WORKSPACE),
                      Guidance())
    assert plan.candidates is not None and "docs" in plan.candidates["list_dir"].strings


@pytest.mark.parametrize(("question", "skill"), [
    ("What is the baggage allowance for business class?", "book-flight"),
    ("Where can I eat something before my flight leaves from gate 4?", "airport")])
def test_a_skill_is_chosen_for_what_its_documents_and_places_answer(question: str,
                                                                     skill: str) -> None:
    request = _first(question, [current_time], skills=[SKILLS])
    call = skill_call(request)
    assert call is not None and call.arguments == {"name": skill}


def test_open_is_no_file_word_without_a_file_name() -> None:
    request = _first("Is the information desk open at night?", [], skills=[SKILLS],
                     workspace=WORKSPACE)
    call = skill_call(request)
    assert call is not None and call.arguments == {"name": "airport"}


def test_a_skill_chosen_for_a_question_offers_its_first_step() -> None:
    question = "Is the information desk open at night?"
    model = ScriptedModel([ToolCall("load_skill", {"name": "airport"}), "done"])
    Agent(model=model, skills=[SKILLS]).run_sync(question)
    # no tool of the skill shares a word with the question: its search, not an answer
    assert _offer(model.requests[1]) == (["search_pois"], False)
