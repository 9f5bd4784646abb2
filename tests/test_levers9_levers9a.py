"""Levers of the eleventh sitting (levers9a, issue 23): questions for the model's own
knowledge or choice that say a tool's words or numbers (``models/_general_talk.py``). Each
checked without the model, in phrasings of its own (none from an eval set)."""

from __future__ import annotations

import pytest

from reactloop.messages import ToolSpec
from reactloop.models._fit import fitting, small_talk
from reactloop.models._general_talk import about_only


@pytest.mark.parametrize("question", [
    # a choice asked of the assistant, or a comparison of two alternatives
    "Beach holiday or city break, which would you choose and why?",
    "would you rather have a window desk or a quiet corner at the office?",
    "Do you prefer paper maps or phone navigation?",
    "Is it smarter to keep my photos on my laptop or on a phone?",
    "Is it quicker to learn chess or poker?",
    "which is older, the pyramids or the Great Wall?",
    "Which do you think is more durable for travel, a hard suitcase or a soft one?",
    "if you had to pick, trains or planes?",
])
def test_a_choice_or_a_comparison_of_alternatives_calls_no_tool(question: str) -> None:
    assert small_talk(question), question


@pytest.mark.parametrize("question", [
    # numbers that are the topic, not operands
    "Why does a minute have 60 seconds and not 10?",
    "Why is a year 365 days and a bit?",
    "Tell me a fun fact about the number 12",
    "what were the 3 biggest empires of the 15th century?",
    "my son turns 8 next month, any ideas for his party?",
    "Can you explain how a clock works to a 6 year old?",
    "why does a keyboard go 1 to 9 and then 0?",
    "In 1912 the Titanic sank. How did they send messages from ships back then?",
])
def test_a_number_that_is_the_topic_is_no_value_to_act_on(question: str) -> None:
    assert small_talk(question), question


@pytest.mark.parametrize("question", [
    # forms of a question for knowledge that say a tool's words
    "How do hot air balloons steer?",  # how a thing behaves
    "how are street names decided in a new town?",
    "What happens to a plane's engines when it flies through ash?",
    "what's the history of the stopwatch?",
    "where does the word 'salary' come from?",  # an origin, no place to find
    "What happens to your ears when a flight lands?",
    "How many rivers flow through Europe, approximately?",  # an estimate
    "which is the longest bridge in the world?",  # the world's superlative
    "how formal should a thank-you email to a client be?",  # a norm
    "Is a peanut a nut or a bean?",  # a kind's class
    "what time of the year is best for seeing the northern lights?",  # a season, no clock
    "What time do kids usually go to bed in Italy?",  # a habit, no clock
    "How does a phone know where you are indoors?",  # where someone is, no place to find
    "how were dates like AD and BC decided?",  # examples, no target
])
def test_forms_of_a_question_for_knowledge_call_no_tool(question: str) -> None:
    assert small_talk(question), question


@pytest.mark.parametrize("question", [
    "Is the capital of Canada Toronto or Ottawa?",  # a fact a tool looks up
    "Is 2028-02-29 a tuesday or a wednesday?",  # a value
    "which is bigger, 3**5 or 250?",  # an expression
    "which is closer to gate 7, the pharmacy or the bakery?",  # a place to find
    "which is cheaper, a kiwi or a lemon?",  # a shop's prices
    "is it earlier in Lima or in Quito right now?",  # the clock
    "do you prefer the 7:15 or the 8:40 train?",  # values
    "how did profit change from march to april?",  # a figure's change
    "how do passengers get to the lounge from here?",  # a way there
    "how many kilometres is 13.1 miles, roughly?",  # a conversion
    "roughly what is 812 times 19?",  # arithmetic
    "which is faster to reach gate 9, the walkway or the shuttle?",  # a numbered thing
    "how long should the meeting in the setup doc be?",  # a document of the user's
    "How does the Sky Deck lounge work?",  # a name the data may hold
    "what time does the bakery open?",  # a place's hours
    "what happens to my order B3050 if I cancel?",  # an order of the user's
    "Why is 0.1 + 0.2 not 0.3?",  # an expression
    "what does a plum cost in your store?",  # the assistant's shop is a tool's data
    "what is the ratio of 840 to 56, roughly?",  # an operation said in words
])
def test_requests_among_such_forms_still_use_tools(question: str) -> None:
    assert not small_talk(question), question


def test_about_only_keeps_operands_codes_and_measures() -> None:
    assert about_only("why 24 hours and not 10?") == "why some hours and not some?"
    assert about_only("what is 40 plus 2?") == "what is 40 plus 2?"
    assert about_only("is order 4411 late?") == "is order 4411 late?"
    assert about_only("why is 5 km so far?") == "why is 5 km so far?"


def test_the_offer_for_a_choice_holds_no_tool() -> None:
    spec = ToolSpec(name="read_file", description="Read a file of the workspace.",
                    parameters={"type": "object", "properties": {"path": {"type": "string"}},
                                "required": ["path"]})
    question = "Is it safer to keep my files on a laptop or in an email inbox?"
    assert fitting([spec], question, (), guided_skills=True, loaded=False) == []
    assert fitting([spec], "read notes.txt", (), guided_skills=True, loaded=False) == [spec]


@pytest.mark.parametrize("question", [
    # the second round: more forms of the same kinds, in phrasings of their own
    "who named the days of the week?",  # history: who did it
    "What's the reasoning behind leap years?",  # the idea behind something
    "what's the point of a 7-day week anyway?",  # a compound number, the point of
    "How many stars are in the sky on a clear night?",  # a count of the world's
    "Which is the most visited museum in Europe?",  # the world's superlative, a region
    "I'm 52, am I too old to start running?",  # a judgement of one's own age
    "is nursing a good career for someone who likes people?",  # a judgement of worth
    "what's louder, a jet engine or a rock concert?",  # a comparison of two kinds
    "Do penguins have knees?",  # a yes/no about a kind
    "Should teenagers drink coffee?",  # a norm about others
    "my nephew turns 21 in june, what should I get him?",  # advice about one's own people
    "list a few fun ways to spend a long layover",  # ideas asked for
    "why is it called a 'red-eye'?",  # the word asked about
    "Can you explain the 50/30/20 budgeting rule?",  # a ratio that names a kind
])
def test_more_forms_of_knowledge_advice_and_judgement_call_no_tool(question: str) -> None:
    assert small_talk(question), question


@pytest.mark.parametrize("question", [
    "is it too late to phone Nairobi right now?",  # the clock there
    "am I too early for a call to my aunt in Perth?",  # a time of day with a place
    "Do buses to Oslo leave from terminal C?",  # a one-letter name, the data's
    "which is the biggest shop in this terminal?",  # this place's data
    "how much should I budget for a pear at your shop?",  # a price
    "list the files in my docs folder",  # a listing
    "Does Cafe Aroma serve tea?",  # a name the data may hold
    "what is 90/15?",  # a division
])
def test_requests_among_the_second_rounds_forms_still_use_tools(question: str) -> None:
    assert not small_talk(question), question


@pytest.mark.parametrize("question", [
    # the third round, in phrasings of their own
    "smarter to pay off debt first or to save?",  # a comparison without "is it"
    "how come a day has 24 hours?",  # "how come" is "why"
    "what causes hiccups on a long drive?",  # a cause
    "when was the first email ever sent?",  # the first, in the past
    "I grew up in 1985, what music did people like back then?",  # back then
    "is 15 old for a cat?",  # a norm for a kind
    "do you have a favourite season?",  # about the assistant
    "thanks! any hobbies yourself?",
    "have you got a funny joke about clocks?",
    "where's the best spot on a train for reading?",  # the best spot on a kind of thing
    "what's the best seat in a cinema for sound?",
    "how does a text message get from one phone to another?",  # a process, no route
])
def test_the_third_rounds_forms_call_no_tool(question: str) -> None:
    assert small_talk(question), question


@pytest.mark.parametrize("question", [
    "what caused the delay on order B2040?",  # an order
    "what made my connection so late?",  # one's own trip
    "when is the first flight to Lisbon tomorrow?",  # a schedule, not the past
    "where's the best cafe at the airport?",  # this airport's data
    "how do I get from one terminal to another?",  # a route for the user
])
def test_requests_among_the_third_rounds_forms_still_use_tools(question: str) -> None:
    assert not small_talk(question), question


@pytest.mark.parametrize("question", [
    # the fourth round, in phrasings of their own
    "mountains or the sea — which do you enjoy more?",  # the assistant's view, "or" first
    "cats or dogs? choose one and explain",
    "what is DNS and why does it matter?",  # an acronym's definition
    "what do air traffic controllers do all day?",  # what people of a kind do
    "what was school like in the 1950s?",  # what the past was like
    "what's a leap year and why do we need it?",  # a clause of its own without a comma
    "does chocolate really make you happier?",  # a kind's effect on people
    "which instrument is easiest for a complete beginner?",  # the best for a kind of person
    "what sport would suit someone with bad knees?",  # advice by what suits
])
def test_the_fourth_rounds_forms_call_no_tool(question: str) -> None:
    assert small_talk(question), question


@pytest.mark.parametrize("question", [
    "which gate is best for a quick coffee?",  # the data's places
    "what is CET time right now?",  # the clock
    "which flight is cheapest for a family from Rome to Oslo?",  # a search
    "what do the notes in my workspace say?",  # a document
])
def test_requests_among_the_fourth_rounds_forms_still_use_tools(question: str) -> None:
    assert not small_talk(question), question


@pytest.mark.parametrize("question", [
    "what are 7 albums everyone should hear once?",  # "should" with a verb that is no lookup
    "what are 3 novels every student should read?",
    "hiya! what's new with you?",  # about the assistant
    "what happened in 1492?",  # history by its year
])
def test_the_fifth_rounds_forms_call_no_tool(question: str) -> None:
    assert small_talk(question), question


@pytest.mark.parametrize("question", [
    "which file should I read first?",  # a document of the user's
    "what happened to order A1001?",  # an order
])
def test_requests_among_the_fifth_rounds_forms_still_use_tools(question: str) -> None:
    assert not small_talk(question), question


@pytest.mark.parametrize("question", [
    "nice, thanks! do you like poetry?",  # the assistant's tastes
    "heard any good puns about calendars?",  # a joke asked of the assistant
    "which 5 beaches in Asia are the nicest, in your opinion?",  # the assistant's view
    "what was so important about 1989?",  # what made a time special
    "how long before boarding should I go to a gate for a domestic flight?",  # a norm, a kind
    "how did early clocks get built without metal tools?",  # a process in the past
])
def test_the_sixth_rounds_forms_call_no_tool(question: str) -> None:
    assert small_talk(question), question


@pytest.mark.parametrize("question", [
    "do you like the bakery near gate B7?",  # a place said with a code
    "what is special about Cafe Aroma?",  # a name the data may hold
    "how early should I get to the airport for my flight to Rome?",  # one's own trip
])
def test_requests_among_the_sixth_rounds_forms_still_use_tools(question: str) -> None:
    assert not small_talk(question), question
