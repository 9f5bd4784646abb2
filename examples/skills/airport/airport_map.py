"""The airport's points of interest and walkways (seed 001), without any agent code.

``data/pois.json`` lists the points of interest; each sits ``offset_m`` metres off a node of
the walkway graph in ``data/walkways.json`` (nodes with names, undirected edges in metres).
Directions are shortest paths on that graph (Dijkstra).
"""

from __future__ import annotations

import heapq
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

__all__ = ["WALKING_SPEED", "AirportMap", "MapError", "airport_map"]

DATA_DIR = Path(__file__).resolve().parent / "data"
WALKING_SPEED = 1.2
"""Metres per second, a relaxed walk with luggage."""


class MapError(LookupError):
    """An unknown point, building or category; the message says what exists."""


@dataclass(frozen=True)
class Leg:
    nodes: tuple[str, ...]
    meters: float


class AirportMap:
    """Points of interest with search, details and walking directions."""

    def __init__(self, data_dir: Path = DATA_DIR) -> None:
        pois = json.loads((data_dir / "pois.json").read_text(encoding="utf-8"))
        walkways = json.loads((data_dir / "walkways.json").read_text(encoding="utf-8"))
        self.pois: dict[int, dict[str, Any]] = {p["id"]: p for p in pois}
        self.node_names: dict[str, str] = dict(walkways["nodes"])
        self.graph: dict[str, dict[str, float]] = {n: {} for n in self.node_names}
        for e in walkways["edges"]:
            self._link(e["from"], e["to"], float(e["meters"]))
        for p in self.pois.values():  # every point is a node of its own, off its walkway node
            self.node_names[_poi_node(p["id"])] = p["name"]
            self.graph[_poi_node(p["id"])] = {}
            self._link(_poi_node(p["id"]), p["node"], float(p["offset_m"]))
        self.buildings = sorted({p["building"] for p in self.pois.values()})
        self._words = {_stem(w) for p in self.pois.values()
                       for w in re.findall(r"[\w-]+", _haystack(p))}
        self.categories = sorted({p["category"] for p in self.pois.values()})

    def _link(self, a: str, b: str, meters: float) -> None:
        if a not in self.graph or b not in self.graph:
            raise ValueError(f"walkway {a}-{b} names an unknown node")
        self.graph[a][b] = self.graph[b][a] = meters

    # -- lookups -----------------------------------------------------------------------------
    def poi(self, poi_id: int) -> dict[str, Any]:
        p = self.pois.get(poi_id)
        if p is None:
            raise MapError(f"No point of interest with id {poi_id}; find ids with search_pois "
                           f"(ids run from {min(self.pois)} to {max(self.pois)})")
        return p

    def details(self, poi_id: int) -> dict[str, Any]:
        p = self.poi(poi_id)
        return {**{k: v for k, v in p.items() if k not in ("node", "offset_m")},
                "location": self.node_names[p["node"]]}

    def search(self, term: str = "", building: str | None = None, category: str | None = None,
               near: int | None = None, limit: int = 10) -> list[dict[str, Any]]:
        """Points whose text contains every word of ``term``, optionally in one building or
        category; sorted by walking distance from ``near`` (a point id) when given, or from the
        place a term names after "near"/"to" when nothing holds it whole ("toilet near gate 19")."""
        building = self._pick(building, self.buildings, "building")
        category = self._pick(category, self.categories, "category")
        hits = self._matching(term, building, category)
        near_said = _NEAR.fullmatch(term.strip()) if not hits and near is None else None
        if near_said:  # "restroom near gate 19": restrooms, the nearest to Gate 19 first
            try:
                near = self.resolve([near_said.group(2)])[0]
            except MapError:
                near = None
            if near is not None:
                term = near_said.group(1)
                hits = self._matching(term, building, category)
        # points whose name holds the whole term come first ("gate 15" → Gate 15)
        hits.sort(key=lambda p: (term.strip().lower() not in p["name"].lower(), p["id"]))
        out = [{"id": p["id"], "name": p["name"], "category": p["category"],
                "building": p["building"]} for p in hits]
        if near is not None:
            dist = self._distances(_poi_node(self.poi(near)["id"]))
            for item in out:
                meters = dist[_poi_node(item["id"])]
                item["distance_m"] = round(meters)
                item["walk_minutes"] = _minutes(meters)
            out = [o for o in out if o["id"] != near]
            # the nearest, among the points named by the whole term first ("gate 11" is Gate
            # 11, not the restroom "between gates 11-12" that happens to be closer)
            whole = term.strip().lower()
            out.sort(key=lambda o: (whole not in o["name"].lower(), o["distance_m"], o["id"]))
        return out[: max(1, limit)]

    def _matching(self, term: str, building: str | None, category: str | None
                  ) -> list[dict[str, Any]]:
        words = [_stem(w) for w in term.lower().split()]
        return [p for p in self.pois.values()
                if (building is None or p["building"] == building)
                and (category is None or p["category"] == category)
                and all(w in _haystack(p) for w in words)]

    def resolve(self, places: Sequence[int | str]) -> list[int]:
        """Point ids for ``places``: ids, or names as people say them ("gate B12", "the coffee
        bar"); a name after the first is the match nearest to the place before it."""
        ids: list[int] = []
        for place in places:
            if isinstance(place, int) or str(place).strip().isdigit():
                ids.append(self.poi(int(place))["id"])
                continue
            words = [w for w in re.findall(r"[\w-]+", str(place).lower()) if w not in _FILLER]
            # words no point knows ("directions", "on the map") say nothing about the place
            words = [w for w in words if _stem(w) in self._words]
            near = ids[-1] if ids else None
            hits = self.search(" ".join(words), near=near, limit=1) if words else []
            if not hits:
                raise MapError(f"No place matches '{place}'; find it with search_pois and pass "
                               "its id")
            ids.append(hits[0]["id"])
        return ids

    def _pick(self, value: str | None, allowed: Sequence[str], what: str) -> str | None:
        if value is None or not value.strip():
            return None
        for a in allowed:  # case-insensitive, and "B" finds "Terminal B"
            if value.strip().lower() in (a.lower(), a.lower().split()[-1]):
                return a
        raise MapError(f"Unknown {what} '{value}'. Known: {', '.join(allowed)}")

    # -- routes ------------------------------------------------------------------------------
    def directions(self, waypoints: Sequence[int]) -> dict[str, Any]:
        """The shortest walk through ``waypoints`` (point ids, at least two), with steps."""
        if len(waypoints) < 2:
            raise MapError("Directions need at least two points: a start and a destination")
        points = [self.poi(w) for w in waypoints]
        nodes: list[str] = [_poi_node(points[0]["id"])]
        meters = 0.0
        for a, b in pairwise(points):
            leg = self._shortest(_poi_node(a["id"]), _poi_node(b["id"]))
            nodes.extend(leg.nodes[1:])
            meters += leg.meters
        return {
            "from": points[0]["name"],
            "to": points[-1]["name"],
            "via": [p["name"] for p in points[1:-1]],
            "distance_m": round(meters),
            "walk_minutes": _minutes(meters),
            "steps": self._steps(nodes),
            "path": nodes,
        }

    def _steps(self, nodes: Sequence[str]) -> list[dict[str, Any]]:
        steps = []
        for a, b in pairwise(nodes):
            steps.append({"instruction": f"Walk from {self.node_names[a]} to {self.node_names[b]}",
                          "distance_m": round(self.graph[a][b])})
            if b == "security":
                steps.append({"instruction": "Pass through security (have your boarding pass "
                              "ready)", "distance_m": 0})
        return steps

    def _shortest(self, start: str, goal: str) -> Leg:
        dist, prev = self._dijkstra(start)
        if goal not in dist:
            raise MapError(f"No walkway connects {self.node_names[start]} and "
                           f"{self.node_names[goal]}")
        path = [goal]
        while path[-1] != start:
            path.append(prev[path[-1]])
        return Leg(tuple(reversed(path)), dist[goal])

    def _distances(self, start: str) -> dict[str, float]:
        return self._dijkstra(start)[0]

    def _dijkstra(self, start: str) -> tuple[dict[str, float], dict[str, str]]:
        dist: dict[str, float] = {start: 0.0}
        prev: dict[str, str] = {}
        queue: list[tuple[float, str]] = [(0.0, start)]
        done: set[str] = set()
        while queue:
            d, node = heapq.heappop(queue)
            if node in done:
                continue
            done.add(node)
            for nxt, w in self.graph[node].items():
                nd = d + w
                if nd < dist.get(nxt, float("inf")):
                    dist[nxt], prev[nxt] = nd, node
                    heapq.heappush(queue, (nd, nxt))
        return dist, prev


_FILLER = frozenset({"a", "an", "the", "my", "our", "to", "from", "at", "of", "on", "in",
                     "for", "by", "near", "with", "and", "me", "please", "nearest", "closest",
                     "next", "way"})


_NEAR = re.compile(r"(?:(?:the\s+)?(?:nearest|closest)\s+)?(.+?)\s+(?:(?:nearest|closest)\s+to|"
                   r"near(?:est)?(?:\s+to)?|close(?:st)?\s+to|next\s+to|by|to|from)\s+(.+)", re.I)
"""A term that says a thing near a place ("restroom near gate 19", "nearest cafe to B12")."""


def _poi_node(poi_id: int) -> str:
    return f"poi-{poi_id}"


def _stem(word: str) -> str:
    # "restrooms" finds "restroom", "gates" finds "gate"
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _haystack(p: dict[str, Any]) -> str:
    return " ".join([p["name"], p["category"], p["building"], p["description"], *p["tags"],
                     *_codes(p)]).lower()


def _codes(p: dict[str, Any]) -> list[str]:
    """What travellers call a gate: Gate 12 of Terminal B is also "B12" (boarding passes
    print it so)."""
    number = p["name"].split()[-1]
    terminal = p["building"].split()[-1]
    if p["category"] != "gate" or not number.isdigit() or not p["building"].startswith("Terminal"):
        return []
    return [f"{terminal}{number}"]


def _minutes(meters: float) -> float:
    return max(1.0, round(meters / WALKING_SPEED / 60, 1))


_map: AirportMap | None = None


def airport_map() -> AirportMap:
    """The bundled airport (loaded on first use)."""
    global _map
    if _map is None:
        _map = AirportMap()
    return _map
