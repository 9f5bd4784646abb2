"""The airport skill's tools (seed 001): search, details, directions, and two UI tools.

``show_poi`` and ``show_directions`` have a side effect: they send a ``ui`` event into the
run's event stream (``ToolContext.emit``), which an app renders on its map.
"""

from __future__ import annotations

from typing import Any

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
    """Walking directions between two points: distance, minutes and steps.

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
    """Show a point of interest on the user's map and return its details.

    Args:
        poi_id: the point's id, from search_pois.
    """
    try:
        details = airport_map().details(poi_id)
    except MapError as exc:
        raise ToolRetry(str(exc)) from None
    ctx.emit("ui", {"action": "show_poi", "poi_id": poi_id, "name": details["name"],
                    "building": details["building"]})
    return details


@tool
def show_directions(waypoints: list[int], ctx: ToolContext) -> dict[str, Any]:
    """Draw a walking route through two or more points on the user's map and return it.

    Args:
        waypoints: point ids in walking order: the start, any stops, the destination.
    """
    try:
        route = airport_map().directions(waypoints)
    except MapError as exc:
        raise ToolRetry(str(exc)) from None
    ctx.emit("ui", {"action": "show_directions", "waypoints": list(waypoints),
                    "path": route["path"], "distance_m": route["distance_m"]})
    return route
