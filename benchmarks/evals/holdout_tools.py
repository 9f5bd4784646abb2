"""Tools of ``holdout.yaml``: a second catalogue, written after the retrieval and the guidance
were tuned on ``everyday.yaml``, to check that what helps there is not fitted to it."""

from __future__ import annotations

import datetime as _dt

POPULATION = {"paris": "2.1 million", "tokyo": "14 million", "lagos": "15.4 million"}
TO_USD = {"euro": 1.08, "pound": 1.27, "yen": 0.0067}
PHONES = {"bob smith": "+1 555 0100", "maria garcia": "+34 600 123 456"}
FLIGHTS = {"LH400": "delayed by 40 minutes", "AF11": "on time"}


def _num(x: float) -> float:
    return int(x) if float(x).is_integer() else x


def population(city: str) -> str:
    """How many people live in a city.

    Args:
        city: the city's name
    """
    return POPULATION.get(city.strip().lower(), f"no data for {city!r}")


def convert_currency(amount: float, currency: str) -> float:
    """Convert an amount of money in another currency into US dollars.

    Args:
        amount: how much money
        currency: the currency's name, e.g. 'euro' or 'yen'
    """
    rate = TO_USD.get(currency.strip().lower().rstrip("s"))
    if rate is None:
        raise ValueError(f"unknown currency {currency!r}; known: {', '.join(TO_USD)}")
    return _num(round(amount * rate, 2))


def percent_of(percent: float, value: float) -> float:
    """Compute a percentage of a value.

    Args:
        percent: the percentage, e.g. 15 for 15 %
        value: the value to take the percentage of
    """
    return _num(round(value * percent / 100, 4))


def power(base: float, exponent: float) -> float:
    """Raise a number to a power.

    Args:
        base: the base
        exponent: the exponent
    """
    return _num(base ** exponent)


def meters_to_feet(meters: float) -> float:
    """Convert a length from meters to feet.

    Args:
        meters: the length in meters
    """
    return _num(round(meters * 3.28084, 2))


def hours_to_minutes(hours: float) -> float:
    """Convert a duration from hours to minutes.

    Args:
        hours: the duration in hours
    """
    return _num(hours * 60)


def phone_number(name: str) -> str:
    """Look up a person's phone number in the address book.

    Args:
        name: the person's full name
    """
    return PHONES.get(" ".join(name.lower().split()), f"no entry for {name!r}")


def flight_status(flight: str) -> str:
    """Whether a flight is on time, delayed or cancelled.

    Args:
        flight: the flight number, e.g. 'BA117'
    """
    return FLIGHTS.get(flight.strip().upper(), f"unknown flight {flight!r}")


def vowel_count(text: str) -> int:
    """Count the vowels (a, e, i, o, u) in a text.

    Args:
        text: the text
    """
    return sum(1 for ch in text.lower() if ch in "aeiou")


def uppercase(text: str) -> str:
    """Write a text in capital letters.

    Args:
        text: the text
    """
    return text.upper()


def is_leap_year(year: int) -> str:
    """Tell whether a year is a leap year.

    Args:
        year: the year, e.g. 1900
    """
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return f"{year} is {'a' if leap else 'not a'} leap year"


def add_days(date: str, days: int) -> str:
    """The date a number of days after a given date.

    Args:
        date: the start date as YYYY-MM-DD
        days: how many days later
    """
    return (_dt.date.fromisoformat(date.strip()) + _dt.timedelta(days=days)).isoformat()


TOOLS = [population, convert_currency, percent_of, power, meters_to_feet, hours_to_minutes,
         phone_number, flight_status, vowel_count, uppercase, is_leap_year, add_days]
