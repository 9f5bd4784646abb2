"""Levers of the tenth sitting (levers8a, issue 23): questions that need no tool though they
name a place, a kind or a duration, and expressions whose result is a decimal. Each checked
without the model, in phrasings of its own (none from an eval set)."""

from __future__ import annotations

import pytest

from reactloop._demo_tools import calculate
from reactloop.models._fit import small_talk


@pytest.mark.parametrize("question", [
    "Is it considered rude to haggle in Marrakech?",  # a judgement about a place
    "Would a 40 minute connection in Zurich be enough?",  # ... with a duration
    "Is travelling by night train in Italy worth it, or is that overrated?",
    "Do you think remote work will still be common in 2030?",  # an opinion with a year
    "any suggestions for a 9 hour train ride to Vienna?",  # advice with a duration and a city
    "How do most travellers handle a red-eye flight?",  # what people do
    "Why does India have a half-hour time offset?",  # a why about a named place
    "What is Vienna famous for?",  # what a place is like
    "What's the best way to memorise SQL joins?",  # advice about a kind
    "Why do designers export SVG files instead of PNG?",  # kinds said as acronyms
    "what app should I use to edit a JSON file on a Chromebook?",
    "Tell me something fun about the number e",
    # the second round: more forms of the same kinds
    "What should we eat while we're in Naples?",  # advice about a place
    "what's Montreal like in the spring?",  # what a place is like
    "Should I stretch during a 10 hour flight?",  # a yes/no for advice
    "Nervous about my exam on Friday, got any words of comfort?",
    "Does it snow much in Vienna?",  # the weather of a place
    "Is it cheaper to convert dollars at a bank or an exchange booth?",  # no clock to convert
    "How should I organise a shared folder for a team?",  # how-to advice
    "My friend says Oslo is super expensive, is that true?",  # a judgement after a remark
    "Do you have any advice on keeping spreadsheets tidy?",
    "do most people tip taxi drivers in Greece",
    "Who invented the spreadsheet?",
    "How do you say thank you in Portuguese?",
    "Is it hot in Lisbon in July?",  # the weather of a place
])
def test_judgements_opinions_and_advice_about_named_things_call_no_tool(question: str) -> None:
    assert small_talk(question), question


@pytest.mark.parametrize("question", [
    "Do you think you could show me my files?",  # a polite request, not an opinion
    "any tips for getting from Terminal B to gate 31?",  # a gate number: something to find
    "Is it worth the walk, where is the nearest pharmacy?",  # a place to find
    "Is 6 am in Vienna too early to ring someone in Denver?",  # a time of day, two places
    "Would it be cheaper to fly from Zurich to Vienna on 3 March 2027?",  # a leg on a date
    "Do you think 48 * 12 is more than 500?",  # an expression
    "What's the best way to get to gate 9?",  # a route
    "Do you think what time it is in Lima now is past noon?",  # the clock in a place
    "Is notes.md worth reading?",  # a file
    "Should I head to gate 14 already?",  # a gate number
    "How should I get to the pharmacy?",  # a route
    "please convert 9 am Denver time to Oslo",  # a clock to convert
    "Convert Oslo time to Denver time",  # ... said without a figure
    "What's the time in Oslo? Is it true it's dark all day?",  # the clock asked
    "what's the Skyway Bar like?",  # a name of the skill's data, not a place
    "is hot chocolate sold at any cafe here?",  # "hot" of a thing to find, not the weather
])
def test_requests_among_such_forms_still_use_tools(question: str) -> None:
    assert not small_talk(question), question


@pytest.mark.parametrize(("expression", "result"), [
    ("2.5 * 4.6", 11.5), ("0.7 + 0.1", 0.8), ("19.99 * 3", 59.97), ("1 / 8", 0.125),
    ("2 ** 70", 2 ** 70), ("10 / 3", 3.33333333333333),
])
def test_calculate_gives_the_decimal_said_not_its_binary_noise(expression: str,
                                                                result: float) -> None:
    assert calculate(expression) == result
    assert str(calculate(expression)) == str(result)
