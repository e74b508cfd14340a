"""A game as one server process holds it in memory (:class:`LiveGame`): the stored game and seats, the
match rebuilt from its moves, its sockets, and what happens at the table besides the moves. The units
of :mod:`koikoi.web.games` (the mover, the clocks, the finisher, the rematches, the attendance, the
computer player) all work on it, each under its lock where it changes the match."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..match import Match
from .store import StoredGame, StoredSeat
from .tablestore import Presence, StoredClock

__all__ = ["LiveGame", "Extras", "Sender", "TextSender", "movers_of"]

# A seat's socket: a message, or its text already encoded (a broadcast encodes once for all of them)
Sender = Callable[[dict[str, Any] | str], Awaitable[None]]
TextSender = Callable[[str], Awaitable[None]]  # a spectator's socket: one JSON text for all of them


@dataclass
class Extras:
    """A game's row, clock and presence: what :class:`LiveGame` keeps besides the moves."""

    stored: StoredGame
    clock: StoredClock | None
    presence: list[Presence] | None
    rated: str | None = None
    rating: dict[str, Any] | None = None


@dataclass
class LiveGame:
    stored: StoredGame
    seats: list[StoredSeat]
    match: Match
    moves: int
    status: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    listeners: dict[int, set[Sender]] = field(default_factory=lambda: {0: set(), 1: set()})
    ai_task: asyncio.Task[None] | None = None
    hints: dict[tuple[int, int], asyncio.Future[Any]] = field(default_factory=dict)  # (seat, seq) -> ranking
    invite: str | None = None  # the invitation token, shown to the host until the friend joins
    # A move whose write the database has not yet answered for (its mover was told ``unavailable``):
    # no other move is taken until it lands or fails. After a write that failed to reach the database
    # (it may or may not have landed), the copy is caught up before the next move.
    in_doubt: asyncio.Task[None] | None = None
    needs_sync: bool = False
    writing: int | None = None  # the move number being stored, while its write is on its way
    heard: int = 0  # GameService._hearing() when this copy was last read from the database
    last_used: float = field(default_factory=time.monotonic)
    # What happens at the table besides the moves (koikoi.web.tablestore), as last read or changed here.
    clock: StoredClock | None = None
    ending: str | None = None
    winner: int | None = None
    rematch_offer: int | None = None
    rematch: str | None = None
    presence: list[Presence] | None = None  # only for games with a real-time clock (claims need one)
    rated: str | None = None  # the rating category of a rated game; None for a casual one
    rating: dict[str, Any] | None = None  # what a finished rated game did to the ratings (TableStore.rating_change)
    movers: set[int] = field(default_factory=set)  # the seats that have moved (abort is for before both)
    timer: asyncio.TimerHandle | None = None  # the flag of the player to move, at their deadline
    extras_stale: bool = False  # something besides the moves changed in the database (an ending, presence)

    @property
    def over(self) -> bool:
        """Played to its end, or ended before it (time, resignation, claim, abort): nothing hidden is left
        to keep, so its record, replay and review may be shown."""
        return self.match.is_over() or (self.status == "finished" and self.ending is not None)

    def take_extras(self, extras: Extras) -> None:
        """The table as stored besides the moves (read with the game, or after a change elsewhere)."""
        self.clock = extras.clock
        self.ending, self.winner = extras.stored.ending, extras.stored.winner
        self.rematch_offer, self.rematch = extras.stored.rematch_offer, extras.stored.rematch
        self.presence = extras.presence
        self.rated = extras.rated
        self.rating = extras.rating

    bots: frozenset[int] = frozenset()  # the seats held by bots' accounts (koikoi.web.bots): marked BOT
    # The spectators' sockets on this process (koikoi.web.spectators): told each change, as the seats are.
    spectators: set[TextSender] = field(default_factory=set)

    @property
    def ai_seat(self) -> int | None:
        for s in self.seats:
            if s.kind == "ai":
                return s.seat
        return None

    def players(self) -> list[dict[str, Any]]:
        return [
            {
                "name": s.name,
                "kind": s.kind,
                "level": self.stored.opponent if s.kind == "ai" else None,
                "joined": s.kind == "ai" or s.owner is not None,
                "bot": s.seat in self.bots,
            }
            for s in self.seats
        ]


def movers_of(actions: list[tuple[int, int]]) -> set[int]:
    """The seats that have made a move (each stored action is its mover's seat and its number)."""
    return {seat for seat, _ in actions}
