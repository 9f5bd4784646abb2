"""Shared by the book-flight scripts: airports, routes and deterministic sample flights.

Standard library only. Every number is derived from the bundled CSV files and a SHA-256 hash
of the flight and date, so the same query always prints the same flights.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

DATA = Path(__file__).resolve().parent.parent / "data"
CABINS = {"economy": 1.0, "premium": 1.8, "business": 3.6, "first": 6.0}
CURRENCY = "USD"
NOW_ENV = "BOOK_FLIGHT_NOW"
"""An ISO date-time that replaces the clock (for demos and tests)."""


def fail(message: str, code: int = 2, **extra: Any) -> NoReturn:
    """Print ``{"error": message, ...}`` as JSON and exit with ``code``."""
    print(json.dumps({"error": message, **extra}, indent=2))
    sys.exit(code)


def now() -> dt.datetime:
    fixed = os.environ.get(NOW_ENV)
    if fixed:
        try:
            value = dt.datetime.fromisoformat(fixed)
        except ValueError:
            fail(f"{NOW_ENV}={fixed!r} is not an ISO date-time such as 2026-11-30T09:00:00")
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    return dt.datetime.now(dt.UTC)


def airports() -> list[dict[str, str]]:
    with (DATA / "airports.csv").open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def routes() -> list[dict[str, str]]:
    with (DATA / "routes.csv").open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def resolve_airports(text: str) -> list[str]:
    """IATA codes for an airport code, a city ("Tokyo" → HND, NRT) or an alias."""
    needle = text.strip().lower()
    table = airports()
    for a in table:
        if needle == a["iata"].lower():
            return [a["iata"]]
    found = [a["iata"] for a in table
             if needle in (a["city"].lower(), a["name"].lower())
             or needle in a["aliases"].lower().split(" ")
             or needle == a["aliases"].lower()]
    if not found:
        known = [f"{a['iata']} ({a['city']})" for a in table]
        fail(f"unknown airport or city {text!r}", known_airports=known)
    return found


def parse_date(text: str, today: dt.date) -> dt.date:
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        fail(f"date {text!r} is not in the form YYYY-MM-DD")
    if day < today:
        fail(f"date {day.isoformat()} is in the past (today is {today.isoformat()})")
    if day > today + dt.timedelta(days=355):
        fail(f"date {day.isoformat()} is more than 355 days ahead; schedules are not open yet")
    return day


def _unit(*parts: str) -> float:
    """A number in [0, 1) fixed by ``parts``."""
    digest = hashlib.sha256("|".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def flight_offer(route: dict[str, str], day: dt.date, cabin: str, passengers: int,
                 today: dt.date) -> dict[str, Any]:
    """One dated flight of ``route``, priced for ``cabin`` and ``passengers``."""
    hh, mm = (int(x) for x in route["departure"].split(":"))
    depart = dt.datetime.combine(day, dt.time(hh, mm))
    arrive = depart + dt.timedelta(minutes=int(route["duration_min"]))
    days_ahead = (day - today).days
    demand = 0.85 + 0.4 * _unit(route["flight"], day.isoformat())  # 0.85 … 1.25
    late = 1.0 + max(0, 14 - days_ahead) * 0.03  # +3 % a day inside two weeks
    fare = round(float(route["base_fare"]) * CABINS[cabin] * demand * late)
    seats = 1 + int(9 * _unit(route["flight"], day.isoformat(), cabin))
    return {
        "flight_id": f"{route['flight']}-{day.strftime('%Y%m%d')}",
        "flight": route["flight"],
        "airline": route["airline"],
        "from": route["origin"],
        "to": route["destination"],
        "departure": depart.strftime("%Y-%m-%d %H:%M"),
        "arrival": arrive.strftime("%Y-%m-%d %H:%M"),
        "duration": f"{int(route['duration_min']) // 60}h{int(route['duration_min']) % 60:02d}m",
        "cabin": cabin,
        "fare_per_person": fare,
        "total_price": fare * passengers,
        "currency": CURRENCY,
        "seats_left": seats,
        "bookable": seats >= passengers,
    }


def find_route(flight: str) -> dict[str, str] | None:
    for r in routes():
        if r["flight"] == flight.upper():
            return r
    return None


def check_cabin(cabin: str) -> str:
    cabin = cabin.strip().lower()
    if cabin not in CABINS:
        fail(f"unknown cabin {cabin!r}", cabins=list(CABINS))
    return cabin


def check_passengers(n: int) -> int:
    if not 1 <= n <= 9:
        fail(f"passengers must be between 1 and 9, got {n}")
    return n
