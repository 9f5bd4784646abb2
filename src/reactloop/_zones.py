"""Timezones as people name them: a city, a region (a state, province or island) or a country resolved to its IANA
timezone name. The timezone database names a zone after one city of it (``Asia/Shanghai``,
``America/Los_Angeles``): the other cities of the world come from GeoNames (``_cities.tsv``,
every city of 100,000 people or more, written by ``scripts/make_city_zones.py``), with a few
names people use listed here (countries of one zone, "NYC"). Used by the demo tool
``current_time`` and by the embedded model's guidance for timezone-typed arguments
(:func:`reactloop.models._fit.zone_values`).

In running text a GeoNames city counts only where it is said as a place ("in Leeds", "from
nagoya", "Leeds time", "9:00 Bern"), however it is written: many cities are named like words
or people ("Split the bill", "Nice to meet you", "Charlotte says hi")."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache

__all__ = ["city_zone", "place_of", "places_in", "zones_in"]

_CITIES: Mapping[str, str] = {
    # Asia
    "beijing": "Asia/Shanghai", "peking": "Asia/Shanghai", "guangzhou": "Asia/Shanghai",
    "shenzhen": "Asia/Shanghai", "chengdu": "Asia/Shanghai", "china": "Asia/Shanghai",
    "mumbai": "Asia/Kolkata", "bombay": "Asia/Kolkata", "delhi": "Asia/Kolkata",
    "new delhi": "Asia/Kolkata", "bangalore": "Asia/Kolkata", "bengaluru": "Asia/Kolkata",
    "chennai": "Asia/Kolkata", "hyderabad": "Asia/Kolkata", "calcutta": "Asia/Kolkata",
    "pune": "Asia/Kolkata", "india": "Asia/Kolkata", "osaka": "Asia/Tokyo",
    "kyoto": "Asia/Tokyo", "japan": "Asia/Tokyo", "busan": "Asia/Seoul", "korea": "Asia/Seoul",
    "hanoi": "Asia/Bangkok", "saigon": "Asia/Ho_Chi_Minh", "ho chi minh city": "Asia/Ho_Chi_Minh",
    "abu dhabi": "Asia/Dubai", "doha": "Asia/Qatar", "tel aviv": "Asia/Jerusalem",
    "lahore": "Asia/Karachi", "islamabad": "Asia/Karachi", "bali": "Asia/Makassar",
    # Europe
    "munich": "Europe/Berlin", "frankfurt": "Europe/Berlin", "hamburg": "Europe/Berlin",
    "cologne": "Europe/Berlin", "germany": "Europe/Berlin", "barcelona": "Europe/Madrid",
    "seville": "Europe/Madrid", "spain": "Europe/Madrid", "milan": "Europe/Rome",
    "venice": "Europe/Rome", "florence": "Europe/Rome", "naples": "Europe/Rome",
    "italy": "Europe/Rome", "geneva": "Europe/Zurich", "manchester": "Europe/London",
    "edinburgh": "Europe/London", "glasgow": "Europe/London", "liverpool": "Europe/London",
    "england": "Europe/London", "scotland": "Europe/London", "lyon": "Europe/Paris",
    "marseille": "Europe/Paris", "france": "Europe/Paris",
    "porto": "Europe/Lisbon", "rotterdam": "Europe/Amsterdam", "krakow": "Europe/Warsaw",
    "st petersburg": "Europe/Moscow", "saint petersburg": "Europe/Moscow", "kiev": "Europe/Kyiv",
    # the Americas
    "san francisco": "America/Los_Angeles", "seattle": "America/Los_Angeles",
    "san diego": "America/Los_Angeles", "las vegas": "America/Los_Angeles",
    "portland": "America/Los_Angeles", "silicon valley": "America/Los_Angeles",
    "california": "America/Los_Angeles", "washington": "America/New_York",
    "boston": "America/New_York", "miami": "America/New_York", "atlanta": "America/New_York",
    "philadelphia": "America/New_York", "orlando": "America/New_York",
    "nyc": "America/New_York", "dallas": "America/Chicago", "houston": "America/Chicago",
    "austin": "America/Chicago", "new orleans": "America/Chicago",
    "minneapolis": "America/Chicago", "salt lake city": "America/Denver",
    "montreal": "America/Toronto", "ottawa": "America/Toronto", "quebec": "America/Toronto",
    "calgary": "America/Edmonton", "rio de janeiro": "America/Sao_Paulo",
    "rio": "America/Sao_Paulo", "brasilia": "America/Sao_Paulo",
    # Africa and Oceania
    "cape town": "Africa/Johannesburg", "pretoria": "Africa/Johannesburg",
    "canberra": "Australia/Sydney", "wellington": "Pacific/Auckland",
    "gold coast": "Australia/Brisbane",
}
"""Cities (and a few one-zone countries) that are no zone's own name, as people say them."""


_REGIONS: Mapping[str, str] = {
    # the United States' states (those of two zones: the zone of most of their people)
    "alabama": "America/Chicago", "alaska": "America/Anchorage", "arizona": "America/Phoenix",
    "arkansas": "America/Chicago", "colorado": "America/Denver",
    "connecticut": "America/New_York", "delaware": "America/New_York",
    "florida": "America/New_York", "hawaii": "Pacific/Honolulu", "idaho": "America/Boise",
    "illinois": "America/Chicago", "indiana": "America/Indiana/Indianapolis",
    "iowa": "America/Chicago", "kansas": "America/Chicago", "kentucky": "America/New_York",
    "louisiana": "America/Chicago", "maine": "America/New_York", "maryland": "America/New_York",
    "massachusetts": "America/New_York", "michigan": "America/Detroit",
    "minnesota": "America/Chicago", "mississippi": "America/Chicago",
    "missouri": "America/Chicago", "montana": "America/Denver", "nebraska": "America/Chicago",
    "nevada": "America/Los_Angeles", "new hampshire": "America/New_York",
    "new jersey": "America/New_York", "new mexico": "America/Denver",
    "north carolina": "America/New_York", "north dakota": "America/Chicago",
    "ohio": "America/New_York", "oklahoma": "America/Chicago", "oregon": "America/Los_Angeles",
    "pennsylvania": "America/New_York", "rhode island": "America/New_York",
    "south carolina": "America/New_York", "south dakota": "America/Chicago",
    "tennessee": "America/Chicago", "texas": "America/Chicago", "utah": "America/Denver",
    "vermont": "America/New_York", "virginia": "America/New_York",
    "washington state": "America/Los_Angeles", "west virginia": "America/New_York",
    "wisconsin": "America/Chicago", "wyoming": "America/Denver",
    # Canada's provinces, Australia's states, Mexico's and Brazil's best known
    "ontario": "America/Toronto", "british columbia": "America/Vancouver",
    "alberta": "America/Edmonton", "manitoba": "America/Winnipeg",
    "saskatchewan": "America/Regina", "nova scotia": "America/Halifax",
    "new brunswick": "America/Moncton", "newfoundland": "America/St_Johns",
    "yukon": "America/Whitehorse", "queensland": "Australia/Brisbane",
    "new south wales": "Australia/Sydney", "tasmania": "Australia/Hobart",
    "western australia": "Australia/Perth", "south australia": "Australia/Adelaide",
    "northern territory": "Australia/Darwin", "baja california": "America/Tijuana",
    "yucatan": "America/Merida", "amazonas": "America/Manaus",
    # India's states (one zone), and regions and islands people travel to
    "goa": "Asia/Kolkata", "kerala": "Asia/Kolkata", "rajasthan": "Asia/Kolkata",
    "tamil nadu": "Asia/Kolkata", "karnataka": "Asia/Kolkata", "maharashtra": "Asia/Kolkata",
    "gujarat": "Asia/Kolkata", "west bengal": "Asia/Kolkata", "java": "Asia/Jakarta",
    "sumatra": "Asia/Jakarta", "phuket": "Asia/Bangkok", "hokkaido": "Asia/Tokyo",
    "okinawa": "Asia/Tokyo", "tibet": "Asia/Shanghai", "zanzibar": "Africa/Dar_es_Salaam",
    "bavaria": "Europe/Berlin", "catalonia": "Europe/Madrid", "andalusia": "Europe/Madrid",
    "andalucia": "Europe/Madrid", "mallorca": "Europe/Madrid", "majorca": "Europe/Madrid",
    "ibiza": "Europe/Madrid", "tenerife": "Atlantic/Canary", "canary islands": "Atlantic/Canary",
    "algarve": "Europe/Lisbon", "tuscany": "Europe/Rome", "sicily": "Europe/Rome",
    "sardinia": "Europe/Rome", "lombardy": "Europe/Rome", "crete": "Europe/Athens",
    "corsica": "Europe/Paris", "brittany": "Europe/Paris", "normandy": "Europe/Paris",
    "provence": "Europe/Paris", "wales": "Europe/London", "northern ireland": "Europe/London",
    "cornwall": "Europe/London", "yorkshire": "Europe/London", "tyrol": "Europe/Vienna",
    "flanders": "Europe/Brussels", "transylvania": "Europe/Bucharest",
}
"""Regions people name as places (a state, province or island): the zone of most of their
people. Read before the GeoNames cities: "Ontario" is the province, not the Californian city."""


_AREAS = frozenset({"Africa", "America", "Asia", "Atlantic", "Australia", "Europe", "Indian",
                    "Pacific"})


@cache
def _database() -> Mapping[str, str]:
    """The timezone database's own city names ("new york", "los angeles") → zone."""
    from zoneinfo import available_timezones

    found: dict[str, str] = {}
    for name in sorted(available_timezones()):
        if name.split("/", 1)[0] in _AREAS:
            found.setdefault(name.rsplit("/", 1)[-1].replace("_", " ").casefold(), name)
    return found


@cache
def _world() -> Mapping[str, str]:
    """GeoNames' cities (``_cities.tsv``): name as people write it, casefolded → zone."""
    from pathlib import Path

    table = Path(__file__).with_name("_cities.tsv").read_text(encoding="utf-8")
    return dict(line.split("\t", 1) for line in table.splitlines()
                if line and not line.startswith("#"))


@cache
def _countries() -> Mapping[str, str]:
    """The world's countries as the timezone database names them (its ``iso3166.tab`` and
    ``zone.tab``: "Portugal", "Kenya", "Britain (UK)"), casefolded → the zone of the country
    with the most of the world's large cities (Brazil: America/Sao_Paulo); empty when the
    database ships no tables."""
    from collections import Counter

    names, zones = _table("iso3166.tab"), _table("zone.tab")
    weight = Counter(_world().values())
    by_code: dict[str, list[str]] = {}
    for row in zones:
        by_code.setdefault(row[0], []).append(row[2])
    found: dict[str, str] = {}
    bases = Counter(re.sub(r"\s*\(.*\)", "", row[1]) for row in names)
    for code, name, *_ in names:
        if code not in by_code:
            continue
        zone = max(by_code[code], key=lambda z: weight[z])  # the first of a tie: zone.tab's
        base = re.sub(r"\s*\(.*\)", "", name)
        alias = re.fullmatch(r".*\(([A-Z][A-Za-z]+)\)", name)  # "UK", "Burma"; not "French"
        alias = alias if alias and alias.group(1) not in _NOT_ALIASES else None
        for said in (base, alias.group(1) if alias else ""):
            if said and bases[base] == 1:
                found.setdefault(said.replace("&", "and").casefold(), zone)
    return found


_NOT_ALIASES = frozenset({"French", "Dutch", "American", "North", "South"})


def _table(name: str) -> list[list[str]]:
    """The rows of one of the timezone database's tables (``zone.tab``), from the ``tzdata``
    package or the system's zoneinfo folder; none when neither has it."""
    from importlib import resources
    from pathlib import Path
    from zoneinfo import TZPATH

    text = None
    try:
        text = resources.files("tzdata.zoneinfo").joinpath(name).read_text(encoding="utf-8")
    except (ImportError, OSError):
        for folder in TZPATH:
            if (Path(folder) / name).is_file():
                text = (Path(folder) / name).read_text(encoding="utf-8")
                break
    return [line.split("\t") for line in (text or "").splitlines()
            if line and not line.startswith("#")]


def _key(text: str) -> str:
    return " ".join(text.split(",")[0].replace("_", " ").split()).casefold()


def _known(city: str) -> str | None:
    return _CITIES.get(city) or _REGIONS.get(city) or _database().get(city)


def city_zone(text: str) -> str | None:
    """The IANA zone of a city or place named by ``text`` ("Beijing", "san francisco",
    "New York, USA", "Leeds") or written as a zone in any case ("asia/tokyo", "PST"), or
    None."""
    written = _written(text.strip())  # "asia/tokyo", "PST"
    if written:
        return written
    city = _key(text)
    return (_known(city) or _world().get(city) or _countries().get(city)) if city else None


def zones_in(text: str) -> list[str]:
    """The IANA zones of the places ``text`` names (up to three words each, longest first),
    in the order they appear: "15:00 in London ... in Tokyo" gives Europe/London, Asia/Tokyo.
    Zone names written out ("Europe/Paris") count as themselves. A place's name is capitalised
    unless the whole text is lower case ("nice to meet you" is no city)."""
    return list(dict.fromkeys(zone for _, zone in places_in(text)))


def place_of(text: str, zone: str) -> str | None:
    """How ``text`` says the place of ``zone`` ("Tokyo" for Asia/Tokyo), or None."""
    return next((said for said, z in places_in(text) if z == zone), None)


_BEFORE_PLACE = frozenset({"in", "at", "from", "to", "for", "near", "around", "and", "or", "vs",
                           "versus", "between", "am", "pm", "m", "noon", "midnight"})
_AFTER_PLACE = frozenset({"time", "local", "zone", "timezone"})


def _as_place(words: Sequence[str], i: int, n: int) -> bool:
    """Whether ``words[i:i+n]`` is said as a place: after "in"/"from"/… or a time, or before
    "time" ("Leeds time")."""
    before = words[i - 1].casefold() if i else ""
    after = words[i + n].casefold() if i + n < len(words) else ""
    return before in _BEFORE_PLACE or before[:1].isdigit() or after in _AFTER_PLACE


def places_in(text: str) -> list[tuple[str, str]]:
    """The places ``text`` names, as said, each with its zone (see :func:`zones_in`)."""
    found: list[tuple[str, str]] = []
    lower = text == text.lower()
    words = [m.group(0).strip("'") for m in re.finditer(r"[\w/+-]+", text)]
    i = 0
    while i < len(words):
        for n in (3, 2, 1):
            span = " ".join(words[i:i + n])
            zone = _written(span) if n == 1 else None
            whole = len(words[i:i + n]) == n
            if whole and not zone and (lower or span[:1].isupper()):
                zone = _known(_key(span))
            if whole and not zone and _as_place(words, i, n):  # "… for my friend in kobe"
                zone = _world().get(_key(span)) or _countries().get(_key(span))
            if whole and not zone and n == 1 and _as_place(words, i, n) and (
                    lower or span[:1].isupper()):  # "in Melborne": a typo of a zone's city
                zone = _misspelt(_key(span))
            if zone:
                found.append((span, zone))
                i += n
                break
        else:
            i += 1
    return found


def _misspelt(word: str) -> str | None:
    """The zone of the one well-known place (a zone's own city, a country, a city people
    name) that ``word`` misspells by a letter or two ("melborne", "amsterdm"), or None."""
    from difflib import get_close_matches

    if len(word) < 5 or not word.isalpha():
        return None
    near = [n for n in get_close_matches(word, _famous(), n=3, cutoff=0.85)
            if not (n.startswith(word) or word.startswith(n))]  # "German", "Eastern": words
    near += [n for n in _famous() if len(n) == len(word) and sorted(n) == sorted(word)
             and sum(a != b for a, b in zip(n, word, strict=True)) == 2
             and any(word[k:k + 2] == n[k + 1::-1][:2] for k in range(len(n) - 1))]
    near = list(dict.fromkeys(near))
    return _known(near[0]) or _countries().get(near[0]) if len(near) == 1 else None


@cache
def _famous() -> list[str]:
    """The places a misspelling may be of: the names people use, the zones' own cities (not
    a county's, "North_Dakota/Center") and the countries."""
    cities = [n for n, zone in _database().items() if zone.count("/") == 1]
    return sorted({n for n in (*_CITIES, *_REGIONS, *cities, *_countries()) if n.isalpha()})


def _written(word: str) -> str | None:
    """The zone ``word`` writes: an IANA zone's full name in any case ("Europe/Paris",
    "asia/baku": Asia/Baku), or an abbreviation in capitals ("UTC", "CET", "EST" are the
    database's own; "PST", "IST" stand for a city's zone, :data:`_ABBREVIATIONS`)."""
    if word in _ABBREVIATIONS:
        return _ABBREVIATIONS[word]
    if word.casefold() in ("utc", "gmt"):
        return word.upper()
    if word.isupper() and word in _own_abbreviations():
        return word
    return _full_names().get(word.casefold()) if "/" in word else None


_ABBREVIATIONS: Mapping[str, str] = {
    "PST": "America/Los_Angeles", "PDT": "America/Los_Angeles", "MDT": "America/Denver",
    "CST": "America/Chicago", "CDT": "America/Chicago", "EDT": "America/New_York",
    "AKST": "America/Anchorage", "BST": "Europe/London", "CEST": "Europe/Paris",
    "EEST": "Europe/Athens", "MSK": "Europe/Moscow", "IST": "Asia/Kolkata",
    "JST": "Asia/Tokyo", "KST": "Asia/Seoul", "HKT": "Asia/Hong_Kong",
    "SGT": "Asia/Singapore", "AEST": "Australia/Sydney", "AEDT": "Australia/Sydney",
    "NZST": "Pacific/Auckland", "NZDT": "Pacific/Auckland",
}
"""Abbreviations people write for a zone that the database has no zone of that name for."""


@cache
def _full_names() -> Mapping[str, str]:
    """Every ``Area/City`` zone of the database, casefolded → as the database writes it."""
    from zoneinfo import available_timezones

    return {name.casefold(): name for name in available_timezones() if "/" in name}


@cache
def _own_abbreviations() -> frozenset[str]:
    """The database's zones named by a time's abbreviation ("UTC", "GMT", "CET", "EST"; not
    "PRC"): written in capitals, they are the zone."""
    from zoneinfo import available_timezones

    return frozenset({"UTC", "GMT"} | {name for name in available_timezones()
                                       if name.isalpha() and name.isupper() and name.endswith("T")})
