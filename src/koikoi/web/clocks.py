"""The web app's time controls: the arithmetic lives in :mod:`koikoi.clocks`, which the terminal game
(``koikoi play --time-control``) uses too without importing the web package; the web modules import it
from here."""

from __future__ import annotations

from ..clocks import (
    CORRESPONDENCE,
    HAND_BREAK,
    REAL_TIME,
    TIME_CONTROLS,
    ClockError,
    TimeControl,
    after_move,
    deadline_of,
    decision_start,
    time_control,
)

__all__ = [
    "TimeControl",
    "TIME_CONTROLS",
    "REAL_TIME",
    "CORRESPONDENCE",
    "HAND_BREAK",
    "ClockError",
    "time_control",
    "after_move",
    "decision_start",
    "deadline_of",
]
