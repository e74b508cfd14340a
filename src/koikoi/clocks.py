"""Time controls: how long a player has for each decision, and what a game's clock says after a move.

A real-time control gives each decision a few seconds of its own and each player a bank for the
decisions that take longer: ``10+60`` is 10 s a decision and 60 s in the bank, which does not refill (a
Koi-Koi hand is about eight decisions a player, so the bank is what a whole match may overrun by). A
correspondence control gives each move some days and has no bank. On the web the server is
authoritative: the deadline of the player to move is stored with the game (koikoi.web.tablestore) and
any server process ends a game whose deadline has passed; ``koikoi play`` (koikoi.terminal) runs the
same clock for the player at the terminal. This module is the arithmetic only, without a database or a
web library, so that both can use it.

>>> c = time_control("10+60")
>>> c.per_move, c.bank, c.correspondence
(10.0, 60.0, False)
>>> after_move(c, [60.0, 60.0], turn_started=100.0, now=115.0, mover=0, next_player=1, new_hand=False)
([55.0, 60.0], 115.0, 185.0)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "TimeControl",
    "TIME_CONTROLS",
    "REAL_TIME",
    "CORRESPONDENCE",
    "HAND_BREAK",
    "FIRST_MOVE",
    "ClockError",
    "time_control",
    "after_move",
    "decision_start",
    "deadline_of",
]

# What a player chooses from (docs/web.md, "Time controls"). A server may offer one more, for tests and
# events, with `koikoi serve --extra-time-control` (never a default).
REAL_TIME = ("10+60", "20+120")
CORRESPONDENCE = ("1d", "3d", "7d")
TIME_CONTROLS = (*REAL_TIME, *CORRESPONDENCE)
# The first decision of a hand (the game's first included) gets this much more on a real-time clock: the
# players read the last hand's summary and watch the deal first.
HAND_BREAK = 8.0
DAY = 86400.0
# A player's first decision of the game has at most this long on a real-time clock (or the control's
# own time a decision, if longer), and at most a day by correspondence: a player who does not come has
# the game aborted, with no result, rather than keeping the other waiting for the whole bank and then
# losing it on time (docs/web.md, "Leaving a game").
FIRST_MOVE = 30.0
_REAL_TIME_RE = re.compile(r"([1-9][0-9]{0,2})\+([0-9]{1,4})")
_CORRESPONDENCE_RE = re.compile(r"([1-9][0-9]?)d")


class ClockError(ValueError):
    """A time control that is not one: the message says what is wrong."""


@dataclass(frozen=True, slots=True)
class TimeControl:
    id: str  # as written: "10+60", "3d"
    per_move: float  # seconds each decision has of its own
    bank: float  # seconds each player has besides, for the whole match (0 for correspondence)
    correspondence: bool

    @property
    def real_time(self) -> bool:
        return not self.correspondence


def time_control(text: object) -> TimeControl:
    """The time control written ``text``: ``<seconds a decision>+<seconds in the bank>`` (real time,
    e.g. ``10+60``) or ``<days>d`` (correspondence, a move every so many days, e.g. ``3d``).

    >>> time_control("3d").per_move
    259200.0
    >>> time_control("ten")
    Traceback (most recent call last):
    ...
    koikoi.clocks.ClockError: 'ten' is not a time control: write 10+60 (seconds a move + bank) or 3d (days)
    """
    if not isinstance(text, str) or len(text) > 16:
        raise ClockError("a time control is a short text such as 10+60 or 3d")
    m = _REAL_TIME_RE.fullmatch(text)
    if m is not None:
        return TimeControl(text, float(m[1]), float(m[2]), False)
    m = _CORRESPONDENCE_RE.fullmatch(text)
    if m is not None:
        return TimeControl(text, int(m[1]) * DAY, 0.0, True)
    raise ClockError(f"{text!r} is not a time control: write 10+60 (seconds a move + bank) or 3d (days)")


def decision_start(control: TimeControl, now: float, *, new_hand: bool) -> float:
    """When a decision that begins at ``now`` starts using its time: later by :data:`HAND_BREAK` (or the
    decision's own time, if shorter) for the first decision of a hand on a real-time clock."""
    return now + min(HAND_BREAK, control.per_move) if new_hand and control.real_time else now


def deadline_of(
    control: TimeControl, banks: list[float], seat: int, turn_started: float, *, first_move: bool = False
) -> float:
    """When ``seat``, whose decision started using its time at ``turn_started``, runs out; for a
    ``first_move`` (``seat`` has not moved yet in the game), when they have not come (:data:`FIRST_MOVE`).

    >>> c = time_control("10+60")
    >>> deadline_of(c, [60.0, 60.0], 0, 100.0), deadline_of(c, [60.0, 60.0], 0, 100.0, first_move=True)
    (170.0, 130.0)
    """
    deadline = turn_started + control.per_move + (0.0 if control.correspondence else banks[seat])
    if first_move:
        allowance = min(control.per_move, DAY) if control.correspondence else max(FIRST_MOVE, control.per_move)
        deadline = min(deadline, turn_started + allowance)
    return deadline


def after_move(
    control: TimeControl,
    banks: list[float],
    *,
    turn_started: float,
    now: float,
    mover: int,
    next_player: int,
    new_hand: bool,
    first_move: bool = False,
) -> tuple[list[float], float, float]:
    """The banks after ``mover`` decided at ``now`` (their decision's time started at ``turn_started``),
    and when ``next_player``'s decision starts using its time and when it runs out (``first_move``: it is
    their first of the game). A decision that took longer than its own time took the rest from the mover's
    bank; the bank never goes below zero (a move that came after the deadline is refused before it gets
    here)."""
    out = list(banks)
    if control.real_time:
        over = max(0.0, (now - turn_started) - control.per_move)
        out[mover] = max(0.0, out[mover] - over)
    started = decision_start(control, now, new_hand=new_hand)
    return out, started, deadline_of(control, out, next_player, started, first_move=first_move)
