"""Quick pairing: who plays whom among the players waiting in a pool (docs/web.md, "Quick pairing").

A pool is a rule set, a match length and a time control ("nintendo, 3 hands, 10+60"). Players who ask
to play someone now wait in it, and every wave (a second or so) the waiting players are paired, in the
spirit of lichess's pools (lila, modules/pool): closest ratings first, and a window of acceptable rating
gaps that widens the longer a player waits, so that nobody waits for ever for the perfect opponent, and
a new player (whose rating is still uncertain) is paired more widely than an established one.

This module is pure: the service that keeps the waiting list in the database calls :func:`pair` under a
lock (one process pairs a pool at a time), and removes the paired players in the same transaction as
it creates their games, so that each player is paired exactly once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["CATEGORIES", "POOLS", "Pool", "Waiting", "category_of", "pair", "window"]


@dataclass(frozen=True)
class Pool:
    """A quick-pairing pool: games under ``preset`` of ``hands`` hands, played with the time control
    ``clock`` (koikoi.clocks; running out loses), rated between two accounts."""

    key: str
    preset: str
    hands: int
    clock: str


# A few pools, so that the players who want a quick game are not spread too thin: the two lengths
# Nintendo's game offers first, and the six-hand matches of Board Game Arena and the Wikipedia rules.
# Each is played on a real-time clock, as lichess's pools are (a stranger who walks away must not hold
# the other for ever): 10 s a decision for the 3-hand match, whose ~24 decisions a player leave a 60 s
# bank room enough; 20 s and a 120 s bank for the 6- and 12-hand matches, whose bank (it never refills)
# must last 50 to 100 decisions.
POOLS: dict[str, Pool] = {
    p.key: p
    for p in (
        Pool("nintendo-3", "nintendo", 3, "10+60"),
        Pool("nintendo-12", "nintendo", 12, "20+120"),
        Pool("bga-6", "bga", 6, "20+120"),
        Pool("wikipedia-6", "wikipedia", 6, "20+120"),
    )
}

# The rating categories (docs/ratings.md): short matches, where one lucky hand decides much, and long
# ones, where skill shows; the rule sets differ only in points and are one game to a player's skill.
SHORT_MAX_HANDS = 3
CATEGORIES = ("short", "long")


def category_of(hands: int) -> str:
    """The rating category of a match of ``hands`` hands."""
    return "short" if hands <= SHORT_MAX_HANDS else "long"


@dataclass(frozen=True)
class Waiting:
    """One player waiting in a pool. ``person`` is who they are (an account, or a guest's browser):
    two entries of one person (two tabs) are never paired together."""

    entry: str
    person: str
    rating: float
    rd: float
    since: float  # when they began waiting (seconds, any clock shared by all entries)


# The window of rating gaps a waiting player accepts: at first about one class of player, plus half the
# uncertainty of their rating, widening every second they wait, up to any opponent at all.
WINDOW_START = 100.0
WINDOW_PER_SECOND = 50.0
WINDOW_MAX = 1000.0


def window(w: Waiting, now: float) -> float:
    """The largest rating gap ``w`` accepts at ``now``."""
    waited = max(0.0, now - w.since)
    return min(WINDOW_MAX, WINDOW_START + w.rd / 2 + WINDOW_PER_SECOND * waited)


def pair(waiting: Sequence[Waiting], now: float) -> list[tuple[Waiting, Waiting]]:
    """Pairs of ``waiting`` to play each other now; each entry in at most one pair. The longest-waiting
    player is served first, with the closest rating that either player's window accepts (so that a
    newcomer's narrow window does not make a long wait longer); nobody is paired with themselves."""
    by_rating = sorted(waiting, key=lambda w: (w.rating, w.since, w.entry))
    position = {w.entry: i for i, w in enumerate(by_rating)}
    taken: set[str] = set()
    pairs: list[tuple[Waiting, Waiting]] = []
    for w in sorted(waiting, key=lambda w: (w.since, w.entry)):
        if w.entry in taken:
            continue
        reach = window(w, now)
        best: Waiting | None = None
        for step in (-1, 1):  # outward from w in rating order, on each side
            j = position[w.entry] + step
            while 0 <= j < len(by_rating):
                other = by_rating[j]
                j += step
                gap = abs(other.rating - w.rating)
                if gap > WINDOW_MAX:
                    break  # nobody further on this side is in anyone's reach
                if other.entry in taken or other.person == w.person:
                    continue
                if gap <= max(reach, window(other, now)):
                    if best is None or gap < abs(best.rating - w.rating):
                        best = other
                    break  # the closest on this side that accepts
                if gap > reach:
                    continue  # only a wider window further on could accept: look on
        if best is not None:
            taken.update((w.entry, best.entry))
            pairs.append((w, best))
    return pairs
