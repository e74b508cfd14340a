"""A tournament's settings, from a player's request or the server's schedule (docs/web.md, "Tournaments"):
every field checked, with an error that names the one that is wrong."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from ..clocks import ClockError, time_control
from .errors import GameError
from .lobby import seek_rules

__all__ = [
    "ARENA_MINUTES",
    "GRACE",
    "MIN_MOVES",
    "SWISS_ROUNDS",
    "UPCOMING_PER_CREATOR",
    "is_id",
    "settings_from_request",
]

NAME_CHARS = (3, 40)
MAX_AHEAD = timedelta(days=7)  # a tournament starts within a week
ARENA_MINUTES = (10, 720)
SWISS_ROUNDS = (1, 20)
ROUND_EVERY = (60, 86400)
GRACE = 600  # seconds after an arena's end in which a match in progress still counts (docs/web.md)
MIN_MOVES = 7  # a berserk counts after this many of the player's own decisions in the match
UPCOMING_PER_CREATOR = 3  # upcoming tournaments a player may have made at once
_NAME = re.compile(r"[^\x00-\x1f\x7f]+")
_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")


def is_id(value: Any) -> bool:
    """Whether ``value`` may be a tournament's id (a URL-safe token): anything else names none."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def _bool(data: dict[str, Any], key: str, default: bool) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise GameError("bad_tournament", f"'{key}' is true or false", 422)
    return value


def _whole(data: dict[str, Any], key: str, low: int, high: int, default: int | None = None) -> int:
    value = data.get(key, default)
    if type(value) is not int or not low <= value <= high:
        raise GameError("bad_tournament", f"'{key}' is a whole number from {low} to {high}", 422)
    return value


def settings_from_request(data: dict[str, Any], time_controls: tuple[str, ...], now: datetime) -> dict[str, Any]:
    """A new tournament's stored values from a request's body (or the server's schedule), every field
    checked, with an error that names the one that is wrong:

    ``{"kind": "arena" | "swiss", "name", "rules": {"preset", "options"}, "hands": 1..12, "clock",
    "starts_in": minutes from now (0..10080) or "starts": an ISO time with its zone, "minutes" (arena,
    10..720), "rounds" (swiss, 1..20), "round_every" (swiss: seconds between rounds' starts, or null: each
    round as soon as the last ends), "late" (swiss: "zero" or "half"), "rated", "bots", "berserk" (arena),
    "access": "open" | "password" | "link", "password"}``."""
    kind = data.get("kind")
    if kind not in ("arena", "swiss"):
        raise GameError("bad_tournament", '\'kind\' is "arena" or "swiss"', 422)
    name = data.get("name")
    if not isinstance(name, str) or not NAME_CHARS[0] <= len(" ".join(name.split())) <= NAME_CHARS[1]:
        raise GameError("bad_tournament", f"'name' is {NAME_CHARS[0]} to {NAME_CHARS[1]} characters", 422)
    name = " ".join(name.split())
    if not _NAME.fullmatch(name):
        raise GameError("bad_tournament", "'name' has a character that is not text", 422)
    rated = _bool(data, "rated", True)
    rules = seek_rules(data.get("rules"), data.get("hands"), rated=rated)
    clock = data.get("clock")
    try:
        control = time_control(clock)
    except ClockError as e:
        raise GameError("bad_clock", str(e), 422) from None
    if clock not in time_controls or control.correspondence:
        offered = ", ".join(c for c in time_controls if not time_control(c).correspondence)
        raise GameError("bad_clock", f"a tournament's matches are played on a real-time clock: one of {offered}", 422)
    if "starts" in data:
        try:
            starts = datetime.fromisoformat(str(data["starts"])[:40])
        except ValueError:
            raise GameError(
                "bad_tournament", "'starts' is a date and time such as 2026-12-24T20:00:00+00:00", 422
            ) from None
        if starts.tzinfo is None:
            raise GameError("bad_tournament", "'starts' names its time zone (e.g. +00:00)", 422)
        starts = starts.astimezone(UTC)
        if starts < now - timedelta(minutes=1) or starts > now + MAX_AHEAD:
            raise GameError("bad_tournament", "'starts' is from now to a week from now", 422)
    else:
        starts = now + timedelta(minutes=_whole(data, "starts_in", 0, int(MAX_AHEAD.total_seconds() // 60), 5))
    access = data.get("access", "open")
    if access not in ("open", "password", "link"):
        raise GameError("bad_tournament", '\'access\' is "open", "password" or "link"', 422)
    password = data.get("password")
    if access == "password":
        if not isinstance(password, str) or not 4 <= len(password) <= 64:
            raise GameError("bad_tournament", "'password' (to join) is 4 to 64 characters", 422)
    values: dict[str, Any] = {
        "kind": kind,
        "name": name,
        "rules": rules.to_dict(),
        "clock": control.id,
        "rated": rated,
        "bots": _bool(data, "bots", False),
        "berserk": kind == "arena" and _bool(data, "berserk", True),
        "min_moves": MIN_MOVES,
        "access": access,
        "starts": starts,
        "grace": GRACE,
        "late": "zero",
    }
    if kind == "arena":
        values["minutes"] = _whole(data, "minutes", *ARENA_MINUTES, 60)
    else:
        values["rounds"] = _whole(data, "rounds", *SWISS_ROUNDS, 5)
        every = data.get("round_every")
        if every is not None:
            values["round_every"] = _whole(data, "round_every", *ROUND_EVERY)
        late = data.get("late", "zero")
        if late not in ("zero", "half"):
            raise GameError("bad_tournament", '\'late\' is "zero" or "half" (points a late joiner starts with)', 422)
        values["late"] = late
    if access == "password":
        values["_password"] = password
    return values
