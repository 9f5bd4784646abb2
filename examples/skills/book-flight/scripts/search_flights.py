"""Search the sample schedule for flights on one day; print the offers as JSON.

Usage:
    python scripts/search_flights.py --from LHR --to JFK --date 2026-12-01
        [--cabin economy|premium|business|first] [--passengers 1]

--from/--to take an IATA code or a city ("London", "Tokyo"). Errors print {"error": ...}
and exit with status 2. The same query always prints the same flights.
"""

from __future__ import annotations

import argparse
import json

from _flights import (
    check_cabin,
    check_passengers,
    flight_offer,
    now,
    parse_date,
    resolve_airports,
    routes,
)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--from", dest="origin", required=True, help="IATA code or city")
    p.add_argument("--to", dest="destination", required=True, help="IATA code or city")
    p.add_argument("--date", required=True, help="YYYY-MM-DD")
    p.add_argument("--cabin", default="economy")
    p.add_argument("--passengers", type=int, default=1)
    args = p.parse_args()
    today = now().date()
    origins = resolve_airports(args.origin)
    destinations = resolve_airports(args.destination)
    day = parse_date(args.date, today)
    cabin = check_cabin(args.cabin)
    passengers = check_passengers(args.passengers)
    offers = [flight_offer(r, day, cabin, passengers, today) for r in routes()
              if r["origin"] in origins and r["destination"] in destinations]
    offers.sort(key=lambda o: o["departure"])
    result = {
        "query": {"from": origins, "to": destinations, "date": day.isoformat(),
                  "cabin": cabin, "passengers": passengers},
        "count": len(offers),
        "flights": offers,
    }
    if not offers:
        served = sorted({r["destination"] for r in routes() if r["origin"] in origins})
        result["message"] = ("no direct flights on this route; from "
                             f"{'/'.join(origins)} there are flights to {', '.join(served) or 'nowhere'}")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
