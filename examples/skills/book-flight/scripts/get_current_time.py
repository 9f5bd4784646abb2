"""Print the current date and time as JSON, to turn "tomorrow" or "next Friday" into a date.

Usage: python scripts/get_current_time.py
Set BOOK_FLIGHT_NOW=2026-11-30T09:00:00 to fix the clock (demos, tests).
"""

from __future__ import annotations

import json

from _flights import now


def main() -> None:
    current = now()
    print(json.dumps({
        "now": current.isoformat(timespec="seconds"),
        "date": current.date().isoformat(),
        "weekday": current.strftime("%A"),
        "timezone": current.tzname() or "UTC",
    }, indent=2))


if __name__ == "__main__":
    main()
