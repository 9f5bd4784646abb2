"""The bundled example skills (feature D1): data-analyst's comparison engine and tools, the
airport's search and directions with UI events, and book-flight's scripts."""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from reactloop import Tool, ToolCall, ToolResult
from reactloop.skills import SkillSet
from reactloop.tools import ToolRegistry

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "skills"
SKILLS = SkillSet.discover([EXAMPLES])


def module(skill: str, name: str) -> ModuleType:
    """A plain module of a skill folder, imported from its file."""
    path = EXAMPLES / skill / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_test_{skill.replace('-', '_')}_{name}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


class Runner:
    """Loads a skill through ``load_skill`` and calls tools the way the loop does."""

    def __init__(self, skill: str) -> None:
        self.registry = ToolRegistry(SKILLS.tools())
        self.events: list[tuple[str, Any]] = []
        self.call("load_skill", name=skill)

    def _add(self, tools: Sequence[Tool]) -> None:
        for t in tools:
            if t.name not in self.registry:
                self.registry.add(t)

    def call(self, tool_name: str, /, **arguments: Any) -> ToolResult:
        return asyncio.run(self.registry.execute(
            [ToolCall(tool_name, arguments, "c")], run_id="examples",
            emit=lambda n, d: self.events.append((n, d)), add_tools=self._add))[0]

    def ok(self, tool_name: str, /, **arguments: Any) -> Any:
        r = self.call(tool_name, **arguments)
        assert r.error is None, r.error
        return r.result


# -- data-analyst: the engine alone ----------------------------------------------------------
comparison = module("data-analyst", "comparison")
T = comparison.Thresholds


@pytest.mark.parametrize(
    ("a", "b", "thresholds", "status"),
    [
        (1000.0, 1000.0, T(), "match"),
        (1000.0, 1000.004, T(), "match"),  # within the 0.01 tolerance
        (287200.0, 286900.0, T(), "minor_diff"),  # 300 = 0.10 %
        (1000.0, 985.0, T(), "major_diff"),  # 1.5 % > 1 %
        (1000.0, 990.0, T(), "minor_diff"),  # exactly 1 % is not above it
        (1_500_000.0, 1_492_000.0, T(), "major_diff"),  # 0.53 %, but 8,000 > 5,000
        (1_500_000.0, 1_492_000.0, T(major_abs=10_000), "minor_diff"),
        (1_500_000.0, 1_492_000.0, T(major_abs=None), "minor_diff"),
        (1_500_000.0, 1_492_000.0, T(major_pct=0.5, major_abs=None), "major_diff"),
        (1000.0, 1000.5, T(tolerance=1.0), "match"),
        (0.0, 5.0, T(), "major_diff"),  # no percentage base
        (1000.0, None, T(), "major_diff"),  # missing in source B
        (None, 1000.0, T(), "major_diff"),
    ],
)
def test_classify(a: float | None, b: float | None, thresholds: Any, status: str) -> None:
    assert comparison.classify(a, b, thresholds)[0] == status


def test_compare_aligns_by_key_sums_duplicates_and_reports_missing_rows() -> None:
    rows_a = [{"k": "x", "v": 100}, {"k": "x", "v": 50}, {"k": "y", "v": 200}, {"k": "z", "v": 1}]
    rows_b = [{"k": "x", "v": 150}, {"k": "y", "v": 199.5}, {"k": "w", "v": 7}]
    result = comparison.compare(rows_a, rows_b, ["k"], "v", top_n=2)
    assert result["summary"] == {
        "total_rows": 4, "matches": 1, "minor_differences": 1, "major_differences": 2,
        "only_in_source_a": 1, "only_in_source_b": 1,
        "total_source_a": 351, "total_source_b": 356.5, "total_diff": -5.5,
    }
    top = result["top_differences"]
    assert [d["key"] for d in top] == [{"k": "w"}, {"k": "z"}]  # largest |difference| first
    assert top[0] == {"key": {"k": "w"}, "source_a_value": None, "source_b_value": 7,
                      "absolute_diff": -7, "percentage_diff": None, "status": "major_diff",
                      "missing_in": "source_a"}
    assert result["interpretation"] == (
        "Poor alignment (25.0%): 2 rows with major differences, 1 row with minor difference")


def test_interpretation_labels() -> None:
    def summary(matches: int, minor: int, major: int) -> dict[str, int]:
        return {"total_rows": matches + minor + major, "matches": matches,
                "minor_differences": minor, "major_differences": major}

    assert comparison.interpret(summary(10, 0, 0)) == "Perfect alignment (100.0%)"
    assert comparison.interpret(summary(87, 2, 1)).startswith("Good alignment (96.7%)")
    assert comparison.interpret(summary(8, 2, 0)).startswith("Moderate alignment (80.0%)")
    assert comparison.interpret(summary(0, 0, 0)).startswith("No rows to compare")


def test_thresholds_are_validated() -> None:
    with pytest.raises(ValueError, match="major_abs"):
        T(major_abs=-1)


# -- data-analyst: the tools on the bundled data ---------------------------------------------
@pytest.fixture(scope="module")
def analyst() -> Runner:
    return Runner("data-analyst")


def test_list_sources(analyst: Runner) -> None:
    sources = analyst.ok("list_sources")
    assert [(s["name"], s["rows"]) for s in sources] == [
        ("fi_reporting", 90), ("bpc_reporting", 90), ("consolidation_mart", 9)]
    assert sources[2]["dimensions"] == ["company", "period", "currency"]


def test_fi_versus_bpc_shows_all_three_classes(analyst: Runner) -> None:
    r = analyst.ok("compare_sources", source_a="fi_reporting", source_b="bpc_reporting")
    assert r["key_columns"] == ["company", "period", "account"]
    s = r["summary"]
    assert (s["total_rows"], s["matches"], s["minor_differences"], s["major_differences"]) == (
        90, 87, 2, 1)
    assert s["total_diff"] == 8000
    assert r["interpretation"] == (
        "Good alignment (96.7%): 1 row with major difference, 2 rows with minor differences")
    major = r["top_differences"][0]
    assert major["key"] == {"company": "1002", "period": "202402", "account": "600000"}
    assert (major["absolute_diff"], major["percentage_diff"], major["status"]) == (
        7500, 4.89, "major_diff")
    assert [d["status"] for d in r["top_differences"]] == ["major_diff", "minor_diff",
                                                           "minor_diff"]


def test_seed_walkthrough_company_1001_period_202401(analyst: Runner) -> None:
    r = analyst.ok("compare_sources", source_a="fi_reporting", source_b="consolidation_mart",
                   measure="amount", filters={"company": "1001", "period": "202401"})
    assert r["summary"] == {
        "total_rows": 1, "matches": 0, "minor_differences": 0, "major_differences": 1,
        "only_in_source_a": 0, "only_in_source_b": 0,
        "total_source_a": 1500000, "total_source_b": 1492000, "total_diff": 8000,
    }
    assert r["top_differences"] == [{
        "key": {"company": "1001", "period": "202401"},
        "source_a_value": 1500000, "source_b_value": 1492000,
        "absolute_diff": 8000, "percentage_diff": 0.53, "status": "major_diff",
    }]
    assert "1 row with major difference" in r["interpretation"]
    assert "|difference| > 5000" in r["rule"]


def test_thresholds_change_the_class(analyst: Runner) -> None:
    args = {"source_a": "fi_reporting", "source_b": "consolidation_mart",
            "filters": {"company": 1001, "period": 202401}}  # numbers are accepted for keys
    lenient = analyst.ok("compare_sources", major_abs_threshold=10000, **args)
    assert lenient["top_differences"][0]["status"] == "minor_diff"
    off = analyst.ok("compare_sources", major_abs_threshold=None, **args)
    assert off["summary"]["minor_differences"] == 1
    strict = analyst.ok("compare_sources", major_pct_threshold=0.5, major_abs_threshold=None,
                        **args)
    assert strict["summary"]["major_differences"] == 1


def test_fi_versus_mart_totals(analyst: Runner) -> None:
    r = analyst.ok("compare_sources", source_a="fi_reporting", source_b="consolidation_mart")
    s = r["summary"]
    assert (s["total_rows"], s["matches"], s["minor_differences"], s["major_differences"]) == (
        9, 7, 1, 1)


def test_unknown_source_lists_the_available_ones(analyst: Runner) -> None:
    r = analyst.call("compare_sources", source_a="fi_reports", source_b="bpc_reporting")
    assert r.error == ("Source 'fi_reports' not found. Available sources: fi_reporting, "
                       "bpc_reporting, consolidation_mart")
    r = analyst.call("query_source", source="bpc")
    assert r.error is not None and "Available sources: fi_reporting" in r.error


def test_query_source_filters_groups_and_checks_columns(analyst: Runner) -> None:
    r = analyst.ok("query_source", source="fi_reporting",
                   filters={"company": "1001", "period": ["202401", "202402"]},
                   group_by=["period"])
    assert r["rows"][0] == {"period": "202401", "amount": 1500000.0}
    assert r["row_count"] == 2
    rows = analyst.ok("query_source", source="bpc_reporting", limit=3)["rows"]
    assert len(rows) == 3 and set(rows[0]) == {"company", "period", "account", "category",
                                               "amount"}
    bad = analyst.call("query_source", source="fi_reporting", filters={"region": "EU"})
    assert bad.error is not None and "'region' is not a column of fi_reporting" in bad.error
    injected = analyst.call("query_source", source="fi_reporting",
                            group_by=['company" FROM x; --'])
    assert injected.error is not None and "is not a column" in injected.error


# -- airport ---------------------------------------------------------------------------------
airport_map = module("airport", "airport_map")
MAP = airport_map.AirportMap()
GATE_15 = 114


def test_search_by_term_building_category() -> None:
    assert MAP.search("gate 15")[0]["name"] == "Gate 15"
    restrooms = MAP.search("bathrooms", building="Terminal B")
    assert {r["name"] for r in restrooms} == {"Restroom B Central", "Restroom B East"}
    assert [r["name"] for r in MAP.search(category="food", building="b")] == ["Burger Point"]
    assert MAP.search("coffee")[0]["category"] == "food"
    with pytest.raises(airport_map.MapError, match=r"Unknown category 'toilets'\. Known: food"):
        MAP.search(category="toilets")


def test_search_near_a_point_sorts_by_walking_distance() -> None:
    hits = MAP.search("restroom", near=GATE_15)
    assert [h["name"] for h in hits[:2]] == ["Restroom B East", "Restroom B Central"]
    assert hits[0]["distance_m"] == 23  # 15 m off the corridor, then 8 m to the restroom
    distances = [h["distance_m"] for h in hits]
    assert distances == sorted(distances)


def _all_pairs(graph: dict[str, dict[str, float]]) -> dict[tuple[str, str], float]:
    dist = {(a, b): (0.0 if a == b else graph[a].get(b, float("inf")))
            for a in graph for b in graph}
    for k, i, j in itertools.product(graph, graph, graph):  # Floyd-Warshall, as a reference
        if dist[i, k] + dist[k, j] < dist[i, j]:
            dist[i, j] = dist[i, k] + dist[k, j]
    return dist


def test_directions_are_shortest_paths() -> None:
    reference = _all_pairs(MAP.graph)
    for a, b in [(100, GATE_15), (GATE_15, 121), (122, 130), (125, 119)]:
        route = MAP.directions([a, b])
        assert route["distance_m"] == round(reference[f"poi-{a}", f"poi-{b}"])
        assert sum(s["distance_m"] for s in route["steps"]) == route["distance_m"]
        assert route["path"][0] == f"poi-{a}" and route["path"][-1] == f"poi-{b}"


def test_directions_through_security_and_waypoints() -> None:
    route = MAP.directions([122, GATE_15])  # Main Hall restrooms → Gate 15
    assert "security" in route["path"]
    assert any("Pass through security" in s["instruction"] for s in route["steps"])
    via = MAP.directions([100, 127, GATE_15])  # Gate 1 → Duty Free → Gate 15
    assert via["via"] == ["Duty Free Plaza"]
    assert via["distance_m"] == MAP.directions([100, 127])["distance_m"] + MAP.directions(
        [127, GATE_15])["distance_m"]
    with pytest.raises(airport_map.MapError, match="at least two points"):
        MAP.directions([100])


def test_a_place_said_by_its_name_wins_over_a_nearer_one_that_mentions_it() -> None:
    """After the first place, a name is resolved to the nearest match, but a point named
    by the whole term comes first: "gate 11" is Gate 11, not the nearer restroom whose
    description says "between gates 11-12"."""
    hall = MAP.search("check-in hall", limit=1)[0]["id"]
    for gate in (11, 13, 14):
        ids = MAP.resolve([hall, f"gate {gate}"])
        assert MAP.poi(ids[1])["name"] == f"Gate {gate}"
    coffee = MAP.resolve([hall, "the coffee bar"])  # no name holds the term: the nearest
    assert "Coffee" in MAP.poi(coffee[1])["name"]


def test_airport_tools_and_ui_events() -> None:
    desk = Runner("airport")
    assert desk.events[-1][0] == "skill_loaded"
    hits = desk.ok("search_pois", term="bathroom", near_poi_id=GATE_15, limit=1)
    assert hits[0]["name"] == "Restroom B East"
    details = desk.ok("show_poi", poi_id=hits[0]["id"])
    assert details["hours"] == "24h" and "Terminal B" in details["location"]
    assert desk.events[-1] == ("ui", {"action": "show_poi", "poi_id": 135,
                                      "name": "Restroom B East", "building": "Terminal B"})
    route = desk.ok("show_directions", start=GATE_15, destination=135)
    name, data = desk.events[-1]
    assert name == "ui" and data["action"] == "show_directions"
    assert data["waypoints"] == [GATE_15, 135] and data["distance_m"] == route["distance_m"]
    assert desk.ok("get_directions", from_poi_id=GATE_15, to_poi_id=135)["distance_m"] == 23
    bad = desk.call("get_poi_details", poi_id=9)
    assert bad.error is not None and "find ids with search_pois" in bad.error
    n_events = len(desk.events)
    assert desk.call("show_poi", poi_id=9).error is not None
    assert len(desk.events) == n_events  # no UI event for a failed call


# -- book-flight scripts ---------------------------------------------------------------------
SCRIPTS = EXAMPLES / "book-flight" / "scripts"
NOW = "2026-11-30T09:00:00"


def script(name: str, *args: str, now: str = NOW) -> tuple[int, dict[str, Any]]:
    env = {**os.environ, "BOOK_FLIGHT_NOW": now}
    done = subprocess.run([sys.executable, str(SCRIPTS / name), *args], capture_output=True,
                          text=True, env=env, timeout=60, cwd=SCRIPTS.parent, check=False)
    return done.returncode, json.loads(done.stdout)


def test_get_current_time() -> None:
    code, out = script("get_current_time.py")
    assert code == 0
    assert out == {"now": "2026-11-30T09:00:00+00:00", "date": "2026-11-30",
                   "weekday": "Monday", "timezone": "UTC"}


def test_search_flights_is_deterministic() -> None:
    args = ("--from", "LHR", "--to", "JFK", "--date", "2026-12-01")
    code, out = script("search_flights.py", *args)
    assert code == 0 and out["count"] == 4
    assert [f["flight_id"] for f in out["flights"]] == [
        "BA117-20261201", "VS3-20261201", "AA101-20261201", "BA175-20261201"]
    first = out["flights"][0]
    assert (first["departure"], first["arrival"], first["duration"]) == (
        "2026-12-01 08:20", "2026-12-01 16:20", "8h00m")
    assert script("search_flights.py", *args) == (code, out)


def test_search_flights_by_city_cabin_and_passengers() -> None:
    code, out = script("search_flights.py", "--from", "Beijing", "--to", "tokyo", "--date",
                       "2026-12-01", "--cabin", "business", "--passengers", "2")
    assert code == 0
    assert out["query"]["from"] == ["PEK"] and out["query"]["to"] == ["HND", "NRT"]
    assert out["count"] == 5
    for f in out["flights"]:
        assert f["cabin"] == "business" and f["total_price"] == 2 * f["fare_per_person"]
    _, economy = script("search_flights.py", "--from", "PEK", "--to", "HND", "--date",
                        "2026-12-01")
    assert economy["flights"][0]["fare_per_person"] < out["flights"][0]["fare_per_person"]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--from", "Mars", "--to", "JFK", "--date", "2026-12-01"), "unknown airport or city"),
        (("--from", "LHR", "--to", "JFK", "--date", "01/12/2026"), "YYYY-MM-DD"),
        (("--from", "LHR", "--to", "JFK", "--date", "2026-11-01"), "is in the past"),
        (("--from", "LHR", "--to", "JFK", "--date", "2026-12-01", "--cabin", "deluxe"),
         "unknown cabin"),
        (("--from", "LHR", "--to", "JFK", "--date", "2026-12-01", "--passengers", "12"),
         "between 1 and 9"),
    ],
)
def test_search_flights_errors(args: tuple[str, ...], fragment: str) -> None:
    code, out = script("search_flights.py", *args)
    assert code == 2 and fragment in out["error"]


def test_search_flights_without_a_route_says_where_one_can_fly() -> None:
    code, out = script("search_flights.py", "--from", "SIN", "--to", "JFK", "--date",
                       "2026-12-01")
    assert code == 0 and out["count"] == 0 and "no direct flights" in out["message"]


def test_book_flight() -> None:
    code, out = script("book_flight.py", "--flight-id", "BA117-20261201", "--passenger",
                       "Jane Doe", "--cabin", "economy")
    assert code == 0 and out["status"] == "confirmed"
    assert len(out["booking_reference"]) == 6
    assert out["passengers"] == ["Jane Doe"]
    _, search = script("search_flights.py", "--from", "LHR", "--to", "JFK", "--date",
                       "2026-12-01")
    assert out["total_price"] == search["flights"][0]["total_price"]
    again = script("book_flight.py", "--flight-id", "ba117-20261201", "--passenger",
                   "Jane  Doe")
    assert again[1]["booking_reference"] == out["booking_reference"]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--flight-id", "BA117", "--passenger", "Jane Doe"), "is not like BA117-20261201"),
        (("--flight-id", "XX999-20261201", "--passenger", "Jane Doe"), "no flight XX999"),
        (("--flight-id", "BA117-20261101", "--passenger", "Jane Doe"), "in the past"),
        (("--flight-id", "BA117-20261201", "--passenger", "Jane"), "first and a last name"),
    ],
)
def test_book_flight_errors(args: tuple[str, ...], fragment: str) -> None:
    code, out = script("book_flight.py", *args)
    assert code == 2 and fragment in out["error"]


def test_fare_rules_reference_is_readable() -> None:
    text = SKILLS.read_reference("book-flight", "references/fare_rules.md")
    assert text.startswith("# Fare rules") and "business" in text
