"""Book one flight found by search_flights.py; print the confirmation as JSON.

Usage:
    python scripts/book_flight.py --flight-id BA117-20261201 --passenger "Jane Doe"
        [--passenger "John Doe" ...] [--cabin economy] [--email jane@example.com]

Only run this after the user has confirmed the flight, the cabin and every passenger's full
name. This sample writes nothing: the booking reference is derived from the booking itself.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import re

from _flights import check_cabin, check_passengers, fail, find_route, flight_offer, now

_ID = re.compile(r"^([A-Z0-9]{2,3}\d{1,4})-(\d{8})$")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--flight-id", required=True, help="e.g. BA117-20261201")
    p.add_argument("--passenger", action="append", required=True, help="full name; repeat")
    p.add_argument("--cabin", default="economy")
    p.add_argument("--email", default=None)
    args = p.parse_args()
    m = _ID.match(args.flight_id.strip().upper())
    if m is None:
        fail(f"flight id {args.flight_id!r} is not like BA117-20261201; use a flight_id "
             "printed by search_flights.py")
    route = find_route(m.group(1))
    if route is None:
        fail(f"no flight {m.group(1)} in the schedule; search again with search_flights.py")
    day = dt.datetime.strptime(m.group(2), "%Y%m%d").date()
    today = now().date()
    if day < today:
        fail(f"flight {args.flight_id} departed in the past (today is {today.isoformat()})")
    names = [" ".join(n.split()) for n in args.passenger]
    if any(len(n.split()) < 2 for n in names):
        fail("every passenger needs a first and a last name", passengers=names)
    cabin = check_cabin(args.cabin)
    offer = flight_offer(route, day, cabin, check_passengers(len(names)), today)
    if not offer["bookable"]:
        fail(f"only {offer['seats_left']} seats left in {cabin} on {offer['flight']}",
             code=1, flight=offer)
    seed = "|".join([offer["flight_id"], cabin, *names])
    reference = hashlib.sha256(seed.encode()).hexdigest()[:6].upper()
    print(json.dumps({
        "status": "confirmed",
        "booking_reference": reference,
        "flight": offer,
        "passengers": names,
        "email": args.email,
        "total_price": offer["total_price"],
        "currency": offer["currency"],
        "fare_rules": "references/fare_rules.md",
    }, indent=2))


if __name__ == "__main__":
    main()
