"""Tournaments the server makes on a schedule (``koikoi serve --tournaments FILE``; docs/web.md,
"Scheduled tournaments"): an hourly arena, a daily Swiss event, and so on, read from a TOML file.

Each ``[[tournament]]`` table of the file is one recurring tournament: its ``name``, how often it comes
(``every``: ``"1h"`` to ``"24h"``, or ``"1d"`` to ``"7d"``), when in that period it starts (``at``:
``"MM"`` minutes past the hour for an hourly one, ``"HH:MM"`` in UTC otherwise; for a weekly one
``"1d"``.. counts days from 1970-01-01, a Thursday), and the settings a player would give
(:func:`koikoi.web.tournaments.settings_from_request`: ``kind``, ``preset`` and ``hands``, ``clock``,
``minutes`` or ``rounds``, ``rated``, ``berserk``, ``bots``, ...). The file is read once at the start,
every entry checked; an error names the entry and what is wrong, and the server does not start.

Every process of a server reads the same file and makes the next occurrences (those starting within
:data:`AHEAD`) as they come due; each occurrence has a unique key in the database (its name and start),
so two processes never make it twice.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ..clocks import TIME_CONTROLS
from .errors import GameError
from .tourneysettings import settings_from_request

__all__ = ["AHEAD", "MAX_ENTRIES", "Scheduled", "ScheduleError", "occurrences", "read_schedule"]

AHEAD = timedelta(hours=2)  # an occurrence is made (and listed as coming up) this long before it starts
MAX_ENTRIES = 50
MAX_BYTES = 64 * 1024
_EVERY = re.compile(r"([1-9][0-9]?)([hd])")
_KEYS = {
    "name",
    "kind",
    "every",
    "at",
    "preset",
    "options",
    "hands",
    "clock",
    "minutes",
    "rounds",
    "round_every",
    "late",
    "rated",
    "berserk",
    "bots",
}


class ScheduleError(ValueError):
    """A schedule file that cannot be used: the message names the entry and what is wrong."""


@dataclass(frozen=True, slots=True)
class Scheduled:
    """One recurring tournament: every ``every``, starting ``offset`` into each period (UTC, periods counted
    from 1970-01-01), with ``settings`` as a request would give them."""

    name: str
    every: timedelta
    offset: timedelta
    settings: dict[str, Any]


def occurrences(s: Scheduled, now: datetime, ahead: timedelta = AHEAD) -> list[datetime]:
    """The starts of ``s`` after ``now`` and up to ``now + ahead``."""
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    period = s.every.total_seconds()
    since = (now - epoch).total_seconds() - s.offset.total_seconds()
    n = int(since // period) + 1
    out: list[datetime] = []
    while True:
        start = epoch + s.offset + timedelta(seconds=n * period)
        if start > now + ahead:
            return out
        out.append(start)
        n += 1


def _entry(i: int, raw: Any, time_controls: tuple[str, ...]) -> Scheduled:
    where = f"tournament {i + 1}"
    if not isinstance(raw, dict):
        raise ScheduleError(f"{where}: a [[tournament]] table, not {type(raw).__name__}")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise ScheduleError(f"{where}: unknown setting {unknown[0]!r} (the settings: {', '.join(sorted(_KEYS))})")
    name = raw.get("name")
    if isinstance(name, str):
        where = f"tournament {i + 1} ({name[:40]!r})"
    every_text = raw.get("every")
    m = _EVERY.fullmatch(every_text) if isinstance(every_text, str) else None
    if m is None or (m[2] == "h" and not 1 <= int(m[1]) <= 24) or (m[2] == "d" and not 1 <= int(m[1]) <= 7):
        raise ScheduleError(f'{where}: "every" is "1h" to "24h" or "1d" to "7d"')
    every = timedelta(hours=int(m[1])) if m[2] == "h" else timedelta(days=int(m[1]))
    at = raw.get("at", "00:00" if every >= timedelta(days=1) else "00")
    if every == timedelta(hours=1):
        ok = isinstance(at, str) and re.fullmatch(r"[0-5][0-9]", at)
        offset = timedelta(minutes=int(at)) if ok else None
        hint = '"MM", minutes past the hour'
    else:
        ok = isinstance(at, str) and re.fullmatch(r"([01][0-9]|2[0-3]):[0-5][0-9]", at)
        offset = timedelta(hours=int(at[:2]), minutes=int(at[3:])) if ok else None
        hint = '"HH:MM" in UTC'
    if offset is None or offset >= every:
        raise ScheduleError(f'{where}: "at" is {hint}, within the period')
    settings = {k: v for k, v in raw.items() if k not in ("every", "at", "preset", "options")}
    settings["rules"] = {
        "preset": raw.get("preset", "nintendo"),
        **({"options": raw["options"]} if "options" in raw else {}),
    }
    settings["starts_in"] = 0
    # Checked now, as a request would be: a mistake stops the server at its start, not at three in the morning.
    try:
        settings_from_request(settings, time_controls, datetime.now(UTC))
    except GameError as e:
        raise ScheduleError(f"{where}: {e.message}") from None
    return Scheduled(" ".join(str(name).split()), every, offset, settings)


def read_schedule(path: str | Path, time_controls: tuple[str, ...] = TIME_CONTROLS) -> list[Scheduled]:
    """The recurring tournaments of the TOML file at ``path``, every entry checked."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise ScheduleError(f"cannot read {p}: {e.strerror or e}") from None
    if len(data) > MAX_BYTES:
        raise ScheduleError(f"{p} is over {MAX_BYTES // 1024} KB: a schedule is a few tables")
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ScheduleError(f"{p} is not TOML: {e}") from None
    unknown = sorted(set(doc) - {"tournament"})
    if unknown:
        raise ScheduleError(f"{p}: unknown table {unknown[0]!r}: write each as [[tournament]]")
    entries = doc.get("tournament", [])
    if not isinstance(entries, list) or len(entries) > MAX_ENTRIES:
        raise ScheduleError(f"{p}: up to {MAX_ENTRIES} [[tournament]] tables")
    out = [_entry(i, raw, time_controls) for i, raw in enumerate(entries)]
    names = [s.name for s in out]
    if len(set(names)) != len(names):
        raise ScheduleError(f"{p}: two tournaments are named {next(n for n in names if names.count(n) > 1)!r}")
    return out
