"""The everyday tool catalogue of ``everyday.yaml``: 17 small tools a user's agent might offer
all at once — arithmetic, unit conversion, lookups in small tables, dates, text statistics, and
facts the model cannot know (an order's status, a contact's email address).

Every tool is deterministic (no clock, no network), so a recorded eval replays exactly.
"""

from __future__ import annotations

import datetime as _dt
import math

CAPITALS = {"france": "Paris", "japan": "Tokyo", "kenya": "Nairobi", "peru": "Lima",
            "canada": "Ottawa", "australia": "Canberra", "brazil": "Brasilia"}
PRICES = {"apple": 3, "banana": 2, "cherry": 7, "mango": 5, "kiwi": 4}
ORDERS = {"A1001": "shipped on 2024-05-02", "A1002": "delivered on 2024-04-28",
          "B2040": "waiting for payment"}
CONTACTS = {"ada lovelace": "ada@example.org", "alan turing": "alan.turing@example.com",
            "grace hopper": "grace@navy.example"}


def _num(x: float) -> float:
    return int(x) if float(x).is_integer() else x


def add(a: float, b: float) -> float:
    """Add two numbers and return the sum.

    Args:
        a: the first number
        b: the second number
    """
    return _num(a + b)


def subtract(a: float, b: float) -> float:
    """Subtract b from a and return the difference a - b.

    Args:
        a: the number to subtract from
        b: the number to subtract
    """
    return _num(a - b)


def multiply(a: float, b: float) -> float:
    """Multiply two numbers and return the product.

    Args:
        a: the first number
        b: the second number
    """
    return _num(a * b)


def divide(a: float, b: float) -> float:
    """Divide a by b and return the quotient a / b.

    Args:
        a: the number to divide
        b: the number to divide by
    """
    if b == 0:
        raise ValueError("cannot divide by zero")
    return _num(round(a / b, 4))


def square_root(x: float) -> float:
    """Return the square root of a number.

    Args:
        x: the number, at least 0
    """
    return _num(round(math.sqrt(x), 4))


def km_to_miles(km: float) -> float:
    """Convert a distance from kilometres to miles.

    Args:
        km: the distance in kilometres
    """
    return _num(round(km * 0.621371, 2))


def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from degrees Celsius to degrees Fahrenheit.

    Args:
        celsius: the temperature in degrees Celsius
    """
    return _num(round(celsius * 9 / 5 + 32, 1))


def kg_to_pounds(kg: float) -> float:
    """Convert a mass from kilograms to pounds.

    Args:
        kg: the mass in kilograms
    """
    return _num(round(kg * 2.20462, 2))


def capital_of(country: str) -> str:
    """Look up the capital city of a country.

    Args:
        country: the country's name in English, e.g. 'France'
    """
    return CAPITALS.get(country.strip().lower(), f"unknown country {country!r}")


def fruit_price(fruit: str) -> str:
    """Look up the price of one piece of fruit at our shop.

    Args:
        fruit: the fruit's name, e.g. 'apple'
    """
    price = PRICES.get(fruit.strip().lower().rstrip("s"))
    return f"{price} dollars" if price is not None else f"we do not sell {fruit!r}"


def order_status(order_id: str) -> str:
    """Look up the delivery status of a customer's order.

    Args:
        order_id: the order number, e.g. 'A1001'
    """
    return ORDERS.get(order_id.strip().upper(), f"no order {order_id!r}")


def contact_email(name: str) -> str:
    """Look up the email address of a person in the contact list.

    Args:
        name: the person's full name, e.g. 'Alan Turing'
    """
    return CONTACTS.get(" ".join(name.lower().split()), f"no contact named {name!r}")


def word_count(text: str) -> int:
    """Count the words in a piece of text.

    Args:
        text: the text
    """
    return len(text.split())


def count_letters(word: str) -> int:
    """Count the letters in a word.

    Args:
        word: the word
    """
    return sum(1 for ch in word if ch.isalpha())


def reverse_word(word: str) -> str:
    """Return a word spelled backwards.

    Args:
        word: the word to reverse
    """
    return word.strip()[::-1]


def _date(text: str) -> _dt.date:
    try:
        return _dt.date.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{text!r} is not a date like 2024-03-15 (YYYY-MM-DD)") from None


def day_of_week(date: str) -> str:
    """Return the day of the week of a date.

    Args:
        date: the date as YYYY-MM-DD, e.g. '2024-03-15'
    """
    return _date(date).strftime("%A")


def days_between(start: str, end: str) -> int:
    """Count the days from one date to another.

    Args:
        start: the first date as YYYY-MM-DD
        end: the second date as YYYY-MM-DD
    """
    return (_date(end) - _date(start)).days


TOOLS = [add, subtract, multiply, divide, square_root, km_to_miles, celsius_to_fahrenheit,
         kg_to_pounds, capital_of, fruit_price, order_status, contact_email, word_count,
         count_letters, reverse_word, day_of_week, days_between]
