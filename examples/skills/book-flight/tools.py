"""The book-flight skill's tools (seed 003): the skill's scripts as tools, for models that do
not write command lines (a small model fills a tool's arguments far more reliably than it
writes ``python …/search_flights.py --from LHR …``).

Each tool runs the matching script in ``scripts/`` with the same Python, so the scripts stay
the one implementation (and ``BOOK_FLIGHT_NOW`` fixes their clock for demos and tests).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from reactloop import ToolRetry, tool

SCRIPTS = Path(__file__).resolve().parent / "scripts"


def _run(script: str, *args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(SCRIPTS / script), *args], capture_output=True,
                          text=True, timeout=60, check=False)
    try:
        data = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise ToolRetry(f"{script} failed: {done.stderr.strip() or done.stdout.strip()}") from None
    if "error" in data:
        extra = {k: v for k, v in data.items() if k != "error"}
        raise ToolRetry(f"{data['error']}{f' ({json.dumps(extra)})' if extra else ''}")
    return dict(data)


@tool
def search_flights(origin: str, destination: str, date: str, cabin: str = "economy",
                   passengers: int = 1) -> dict[str, Any]:
    """Find flights from one city or airport to another on a day, with times and prices.

    Args:
        origin: where the flight leaves: a city or an IATA code, e.g. 'London' or 'LHR'.
        destination: where it goes, e.g. 'New York' or 'JFK'.
        date: the day of the flight, YYYY-MM-DD, e.g. '2026-12-01'.
        cabin: economy, premium, business or first.
        passengers: how many travel (the total price is for all of them).
    """
    found = _run("search_flights.py", "--from", origin, "--to", destination, "--date", date,
                 "--cabin", cabin, "--passengers", str(passengers))
    return {"headline": _offers(found), **found}


@tool
def book_flight(flight_id: str, passengers: list[str], cabin: str = "economy"
                ) -> dict[str, Any]:
    """Book a flight found with search_flights, once the traveller has confirmed it.

    Args:
        flight_id: the offer's flight_id from search_flights, e.g. 'BA117-20261201'.
        passengers: every passenger's first and last name, e.g. ['Ada Lovelace'].
        cabin: economy, premium, business or first.
    """
    args = [a for name in passengers for a in ("--passenger", name)]
    booked = _run("book_flight.py", "--flight-id", flight_id, "--cabin", cabin, *args)
    return {"headline": f"Booked {flight_id}: booking reference "
                        f"{booked.get('booking_reference')}.", **booked}


def _offers(found: dict[str, Any]) -> str:
    """The search in one line: how many flights, each (up to five: flight, departure, total
    price) when there are several — "what are my options?" is answered by them — and the
    cheapest."""
    flights = found.get("flights") or []
    q = found.get("query") or {}
    route = f"from {'/'.join(q.get('from', ()))} to {'/'.join(q.get('to', ()))} on {q.get('date')}"
    if not flights:
        return f"No flights {route}."
    best = min(flights, key=lambda f: f["total_price"])
    each = "; ".join(f"{f['flight']} {f['departure'][-5:]} {f['total_price']} {f['currency']}"
                     for f in flights[:5])
    listed = f" ({each})" if len(flights) > 1 else ""
    return (f"{len(flights)} flight{'s' if len(flights) > 1 else ''} {route}{listed}; cheapest "
            f"{best['flight']} at {best['departure'][-5:]}, {best['total_price']} "
            f"{best['currency']}.")
