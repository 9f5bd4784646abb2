"""The airport skill's tools (seed 001): search, details, directions, and two UI tools.

``show_poi`` and ``show_directions`` have a side effect: they send a ``ui`` event into the
run's event stream (``ToolContext.emit``), which an app renders on its map.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator

from reactloop import ToolContext, ToolRetry, tool

from .airport_map import MapError, airport_map


@tool
def search_pois(
    term: str = "",
    building: str | None = None,
    category: str | None = None,
    near_poi_id: int | None = None,
    limit: int = 10,
) -> list[dict[str, Any]]:
    """Search the airport's points of interest (gates, restrooms, food, shops, services).

    Then show the place found on the map with show_poi, or the way to it with show_directions.

    Args:
        term: words to look for, e.g. 'bathroom', 'coffee', 'gate 15' (empty: everything).
        building: only this building: 'Main Hall', 'Airside Plaza', 'Terminal A', 'Terminal B'.
        category: only this category: gate, restroom, food, shop, lounge, service, medical,
            transport.
        near_poi_id: sort by walking distance from this point (its id) and add distances.
        limit: at most this many results.
    """
    try:
        return airport_map().search(term, building, category, near_poi_id, limit)
    except MapError as exc:
        raise ToolRetry(str(exc)) from None


@tool
def get_poi_details(poi_id: int) -> dict[str, Any]:
    """Everything known about one point of interest: hours, location, description.

    Args:
        poi_id: the point's id, from search_pois.
    """
    try:
        return airport_map().details(poi_id)
    except MapError as exc:
        raise ToolRetry(str(exc)) from None


@tool
def get_directions(from_poi_id: int, to_poi_id: int) -> dict[str, Any]:
    """The walk between two points as text only: distance, minutes and each step of the way.

    Args:
        from_poi_id: where the walk starts.
        to_poi_id: where it ends.
    """
    try:
        return airport_map().directions([from_poi_id, to_poi_id])
    except MapError as exc:
        raise ToolRetry(str(exc)) from None


@tool
def show_poi(poi_id: int, ctx: ToolContext) -> dict[str, Any]:
    """Show a place (a gate, restroom, cafe, shop, service) on the user's map, with its details.

    Args:
        poi_id: the point's id, from search_pois.
    """
    try:
        details = airport_map().details(poi_id)
    except MapError as exc:
        raise ToolRetry(str(exc)) from None
    ctx.emit("ui", {"action": "show_poi", "poi_id": poi_id, "name": details["name"],
                    "building": details["building"]})
    return {"headline": _where(details), **details}


Place = Annotated[str, BeforeValidator(str)]
"""A place as text: its id ("111", or 111) or its name as the traveller says it ("gate B12")."""


@tool
def show_directions(start: Place, destination: Place, ctx: ToolContext,
                    via: list[Place] | None = None) -> dict[str, Any]:
    """Directions on the user's map: draw the walking route from one place to another.

    Args:
        start: where the walk starts: an id from search_pois or the place's name as the
            traveller says it.
        destination: where it ends, the same way.
        via: stops in between, in order.
    """
    desk = airport_map()
    start, destination = _trip(str(start), str(destination))
    try:
        ids = desk.resolve([start, *(via or ()), destination])
        route = desk.directions(ids)
    except MapError as exc:
        raise ToolRetry(str(exc)) from None
    ctx.emit("ui", {"action": "show_directions", "waypoints": ids,
                    "path": route["path"], "distance_m": route["distance_m"]})
    return {"headline": _route(route), **route}


def _trip(start: str, destination: str) -> tuple[str, str]:
    """A start or destination written as the whole trip ("gate 15 to the pharmacy") is split
    into both."""
    for value in (start, destination):
        parts = re.split(r"\bto\b", value, maxsplit=1, flags=re.I)
        if len(parts) == 2 and parts[0].strip() and parts[1].strip():
            head, tail = parts[0].strip(), parts[1].strip()
            if value == start:
                return head, tail if destination in (start, "") else destination
            return start if start not in ("", destination) else head, tail
    return start, destination


def _where(details: dict[str, Any]) -> str:
    """One line for the traveller: the place, its building, its hours."""
    return f"{details['name']} is in {details['building']} ({details['location']}), open {details['hours']}."


def _route(route: dict[str, Any]) -> str:
    """One line for the traveller: where the walk goes, how far and how long."""
    through = " through security" if "security" in route["path"] else ""
    return (f"From {route['from']} to {route['to']}: {route['distance_m']} m{through}, about "
            f"{route['walk_minutes']:g} minutes on foot.")
