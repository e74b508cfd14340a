"""Swiss tournaments of Koi-Koi matches (issue 45): who plays whom each round, and the standings.

A Swiss tournament pairs, every round, players who have done about equally well so far, nobody twice
against the same opponent; after a few rounds the best have met the best, without the many rounds a
round robin would take. The pairings follow FIDE's Dutch system (C.04.3), the most used and the most
studied: :func:`pair_round` asks the library ``pairing_core`` for them, and :func:`standings` ranks
the entrants. A match is two players; it is won, lost or drawn, or it ends with no result (aborted).

This module is pure (the standard library and ``pairing_core``): the tournament service keeps the
entrants and the games in the database, and calls these functions with all of them.

>>> field = [SwissEntrant(name, rating, 1) for name, rating in (("ann", 1800), ("bob", 1700),
...                                                             ("cat", 1600), ("dan", 1500))]
>>> pair_round(field, [], 1)
[('ann', 'cat'), ('dan', 'bob')]

The rules, and why
------------------
Points. A win is 1, a draw ½, a loss 0, as in chess, so that FIDE's pairing rules and tie-breaks mean
what they say. A bye is scored as a win (FIDE's pairing-allocated bye: the player was ready to play
and it is nobody's fault there was nobody left; a bye written down with no result still has its
point, which comes from the pairing, not from a match), and a player gets at most one bye while
another player who has had none could take it. A match with no result (aborted) is 0 for both: nobody won
it, and a point given for it would reward walking away. A late joiner starts with 0, or, with
``late_points="half"``, with ½ for each round missed before joining (counted as points, not as games
nor as a bye): the organiser's choice between a fresh start and a place nearer their level.

Pairing numbers. The active entrants are numbered by rating, highest first, ties by id: the Dutch
system pairs the top half of a score group against the bottom half by these numbers, and keeps them
as the last word when everything else is equal. String ids become these numbers for
``pairing_core``, and back.

Seats. Seat 0 deals first in a match, as White moves first in chess, so the colours of chess are the
seats: "w" for seat 0, "b" for seat 1, "-" for a round without a game (a bye, not yet joined). The
seats of a pair follow FIDE's colour allocation (C.04.3 E.1 to E.5: grant both preferences, else the
stronger, else alternate from the last round they sat differently, else the higher-ranked player's,
else the higher-ranked player gets seat 0 when their pairing number is odd). They are computed here
from ``pairing_core``'s pairs rather than read from its White, whose allocation differs from FIDE's
in two places (measured: in round 1 it gives every top-half player White, where FIDE alternates;
and it ranks a pair by pairing number alone where FIDE ranks by score first). The pairs it chooses
are the same either way: it only asks whether some seating is legal.

Nobody meets the same opponent twice, ``pairing_core``'s absolute criterion; an aborted match counts
as having met (they sat down together, and a second try at the same pairing is what the tournament
is meant to avoid). If no pairing keeps both that and the seat limits (never three times in a row in
one seat, never more than two games more in one seat than in the other), the seat limits give way: the round is
paired again without seats, which are then chosen as above. If the round still cannot be paired
without a second bye, a second bye is allowed. Only when no pairing without a repeated opponent
exists at all does :func:`pair_round` raise :class:`SwissError` (the caller ends the tournament).

Floats (FIDE's rules that keep one player from being paired out of their score group round after
round) are left out: given the float histories, ``pairing_core``'s search ran out of its 2,000,000
steps in round 7 of a 100-player tournament after 75 s (two random tournaments in three); without
them the whole tournament takes 0.1 s.

Tie-breaks. Points, then Buchholz (the sum of the final points of every opponent met: a score made
against strong opposition is worth more), then Sonneborn-Berger (the points of the opponents beaten,
plus half those of the opponents drawn: it weighs the wins by whom they were against), then rating,
then id (so that the order is total and never depends on the order of the input). Byes and rounds
not played add nothing to either: there was no opponent. An aborted match adds nothing either: it
decided nothing about either player.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

# pairing_core 0.4.1 ships no py.typed marker: its names are Any here, and turned into ints at once.
from pairing_core import (  # type: ignore[import-untyped]
    DUTCH_TILL2026_COMPAT,
    CanonicalPlayer,
    CanonicalRequest,
    pair_canonical,
)
from pairing_core.errors import EngineTimeoutError, ImpossiblePairingError  # type: ignore[import-untyped]

__all__ = [
    "LATE_POINTS",
    "MAX_ENTRANTS",
    "MAX_ROUNDS",
    "SwissEntrant",
    "SwissError",
    "SwissGame",
    "SwissStanding",
    "pair_round",
    "standings",
]

# Bounds on the work one call may be asked to do. pair_round's time, measured on the project's 2-core
# development machine (Python 3.11, pairing_core 0.4.1) over a 7-round tournament with random results
# (a sixth of the matches aborted), pair_round called once a round and timed around the call:
#   100 players: at most 0.01 s a round (0.1 s for the 7 rounds);
#   500 players: round 1 0.01 s, round 2 1.2 s, rounds 3-7 0.2-0.4 s (2.5 s in all);
#   1000 players: round 2 9 s, round 3 3.4 s, rounds 4-7 0.6-1.6 s (17 s in all);
#   2000 players: round 2 85 s, round 3 27 s, rounds 4-7 6-15 s (2.5 min in all).
# Round 2 is the slowest: its score groups are the largest with a history to respect. Round 1 is
# written down here (see _untouched_field): pairing_core would take 6 s for 500 players, 65 s for 1000.
# standings() takes 0.1 s for 2000 players. Callers pair off their event loop.
MAX_ENTRANTS = 2000
MAX_ROUNDS = 50

LATE_POINTS = ("zero", "half")
_RESULTS = (1.0, 0.5, 0.0)

# The ruleset: pairing_core offers two Dutch rulesets, DUTCH_TILL2026_COMPAT (FIDE's rules until
# January 2026, a search that backtracks over score groups) and fide2026's DUTCH_2026 (the 2026
# rules, an exact search over every criterion). Both are deterministic (no randomness; the same
# request gives the same pairing). DUTCH_2026 is unusable at our sizes: it ran out of its 2,000,000
# steps in round 3 of a 20-player tournament (after 22 s) and in round 2 of a 100-player one (after
# 16 s), where DUTCH_TILL2026_COMPAT pairs 2000 players for 7 rounds (figures above). The two
# deviations from FIDE that pairing_core documents for it (round 1 colours, a bar on a third float)
# are out of the way here: this module seats every pair itself and passes no float history.
_RULESET = DUTCH_TILL2026_COMPAT


@dataclass(frozen=True, slots=True)
class SwissEntrant:
    """One entrant of a tournament."""

    id: str  # an account id (any string)
    rating: float  # their rating when they joined; it orders the pairing numbers
    joined_round: int  # the first round they can be paired in (1: from the start; a late join: later)
    withdrawn: bool = False  # withdrawn: never paired again; their past games stay


@dataclass(frozen=True, slots=True)
class SwissGame:
    """One match of a round, or a bye."""

    round: int
    first: str  # seat 0, the "white" of chess: this player deals first in the match
    second: str | None  # None: a bye for `first` (scored as a win, at most once per player)
    result: float | None  # first's score: 1.0 won, 0.5 drawn, 0.0 lost; None: no result
    # (an aborted match: 0 points for both, but they have met; or not yet finished)


@dataclass(frozen=True, slots=True)
class SwissStanding:
    """One entrant's line in the standings. ``played`` counts the matches with a result (``wins``
    + ``draws`` + ``losses``): byes and aborted matches are not among them."""

    id: str
    rank: int
    points: float
    buchholz: float
    sonneborn_berger: float
    played: int
    wins: int
    draws: int
    losses: int
    byes: int
    withdrawn: bool


class SwissError(ValueError):
    """A tournament that cannot be paired or ranked as asked; the message says what is wrong."""


def pair_round(
    entrants: Iterable[SwissEntrant], games: Iterable[SwissGame], round_number: int, *, late_points: str = "zero"
) -> list[tuple[str, str | None]]:
    """Round `round_number`'s pairing of every entrant who is not withdrawn and whose joined_round <= round_number:
    (seat 0, seat 1) pairs and at most one (id, None) bye, deterministic for the same input.
    `games` are all games of the earlier rounds (all finished). late_points: "zero" (a late joiner starts
    with 0 points) or "half" (half a point for each round they missed before joining).

    The pairs come top board first (FIDE's board order: the higher score at the board, then the sum of
    both, then the higher-ranked player's pairing number), the bye last. Raises :class:`SwissError` when
    the input is inconsistent, and when no pairing without a repeated opponent exists."""
    people, past = _checked(entrants, games, late_points)
    if isinstance(round_number, bool) or not isinstance(round_number, int):
        raise SwissError(f"the round to pair is {round_number!r}: a round is a whole number")
    if round_number < 1:
        raise SwissError(f"the round to pair is {round_number}: rounds are numbered from 1")
    if round_number > MAX_ROUNDS:
        raise SwissError(f"the round to pair is {round_number}: a Swiss tournament has at most {MAX_ROUNDS} rounds")
    for g in past:
        if g.round >= round_number:
            raise SwissError(
                f"{_describe(g)} is among the games given to pair round {round_number}: "
                "they must all be of earlier rounds"
            )
    records = _records(people, past, round_number - 1, late_points)
    active = sorted(
        (e for e in people if not e.withdrawn and e.joined_round <= round_number), key=lambda e: (-e.rating, e.id)
    )
    ids = {e.id for e in active}
    players = [
        _Player(
            id=e.id,
            number=n,
            rating=e.rating,
            points=records[e.id].points,
            seats="".join(records[e.id].seats.get(r, "-") for r in range(1, round_number)),
            opponents=frozenset(o for o in records[e.id].met if o in ids),
            byes=records[e.id].byes,
        )
        for n, e in enumerate(active, start=1)
    ]
    if _untouched_field(players):
        pairs, bye = _first_round(players)
    else:
        pairs, bye = _pair_by_core(players, round_number)
    boards = sorted((_seated(a, b) for a, b in pairs), key=_board_order)
    out: list[tuple[str, str | None]] = [(a.id, b.id) for a, b in boards]
    if bye is not None:
        out.append((bye.id, None))
    return out


def standings(
    entrants: Iterable[SwissEntrant], games: Iterable[SwissGame], *, late_points: str = "zero"
) -> list[SwissStanding]:
    """Ranked: points, then Buchholz, then Sonneborn–Berger, then rating (higher first), then id.

    Every entrant has a line, withdrawn ones too (their games stay). The standings are after the last
    round that has a game in `games`: a late joiner's ½ points (late_points="half") count the rounds up
    to that one that they missed."""
    people, past = _checked(entrants, games, late_points)
    through = max((g.round for g in past), default=0)
    records = _records(people, past, through, late_points)
    rows = []
    for e in people:
        r = records[e.id]
        rows.append(
            (
                e,
                r.points,
                sum(records[o].points for o, _ in r.scored),
                # a win counts the opponent's points, a draw half of them, a loss nothing
                sum(records[o].points * score for o, score in r.scored),
                r,
            )
        )
    rows.sort(key=lambda row: (-row[1], -row[2], -row[3], -row[0].rating, row[0].id))
    return [
        SwissStanding(
            id=e.id,
            rank=rank,
            points=points,
            buchholz=buchholz,
            sonneborn_berger=sb,
            played=len(r.scored),
            wins=sum(1 for _, s in r.scored if s == 1.0),
            draws=sum(1 for _, s in r.scored if s == 0.5),
            losses=sum(1 for _, s in r.scored if s == 0.0),
            byes=r.byes,
            withdrawn=e.withdrawn,
        )
        for rank, (e, points, buchholz, sb, r) in enumerate(rows, start=1)
    ]


# --- the input, checked, and what it says of each entrant -------------------------------------------


def _describe(g: SwissGame) -> str:
    if g.second is None:
        return f"the round-{g.round} bye of {g.first!r}"
    return f"the round-{g.round} game {g.first!r} against {g.second!r}"


def _checked(
    entrants: Iterable[SwissEntrant], games: Iterable[SwissGame], late_points: str
) -> tuple[tuple[SwissEntrant, ...], tuple[SwissGame, ...]]:
    """The entrants and games, once each is known to make sense with the others."""
    if late_points not in LATE_POINTS:
        raise SwissError(f"late_points is {late_points!r}: it is 'zero' or 'half'")
    people = tuple(entrants)
    if len(people) > MAX_ENTRANTS:
        raise SwissError(f"{len(people)} entrants: a Swiss tournament takes at most {MAX_ENTRANTS}")
    joined: dict[str, int] = {}
    for e in people:
        if e.id in joined:
            raise SwissError(f"the entrant {e.id!r} is entered twice")
        if isinstance(e.joined_round, bool) or not isinstance(e.joined_round, int):
            raise SwissError(f"the entrant {e.id!r} joins in round {e.joined_round!r}: a round is a whole number")
        if not 1 <= e.joined_round <= MAX_ROUNDS:
            raise SwissError(f"the entrant {e.id!r} joins in round {e.joined_round}: rounds run from 1 to {MAX_ROUNDS}")
        if isinstance(e.rating, bool) or not isinstance(e.rating, int | float) or not math.isfinite(e.rating):
            raise SwissError(f"the entrant {e.id!r} has the rating {e.rating!r}: a rating is a finite number")
        joined[e.id] = e.joined_round
    past = []
    seen: set[tuple[int, str]] = set()  # (round, id) of everyone with a game in that round
    for g in games:
        if isinstance(g.round, bool) or not isinstance(g.round, int) or not 1 <= g.round <= MAX_ROUNDS:
            raise SwissError(f"{_describe(g)} is in round {g.round!r}: rounds run from 1 to {MAX_ROUNDS}")
        if g.first == g.second:
            raise SwissError(f"{_describe(g)} pairs {g.first!r} with themselves")
        for who in (g.first, g.second):
            if who is None:
                continue
            if who not in joined:
                raise SwissError(f"{_describe(g)} names {who!r}, who is not an entrant")
            if g.round < joined[who]:
                raise SwissError(
                    f"{_describe(g)}: {who!r} plays in round {g.round}, before joining in round {joined[who]}"
                )
            if (g.round, who) in seen:
                raise SwissError(f"{who!r} has two games in round {g.round}")
            seen.add((g.round, who))
        if g.result is not None and (isinstance(g.result, bool) or g.result not in _RESULTS):
            raise SwissError(f"{_describe(g)} has the result {g.result!r}: a result is 1.0, 0.5, 0.0 or None")
        if g.second is None and g.result not in (1.0, None):
            raise SwissError(f"{_describe(g)} has the result {g.result!r}: a bye is a win, 1.0 (or None)")
        result = None if g.result is None else float(g.result)
        past.append(SwissGame(g.round, g.first, g.second, result))
    return people, tuple(past)


@dataclass(slots=True)
class _Record:
    """What the games up to some round say of one entrant."""

    points: float = 0.0
    byes: int = 0
    seats: dict[int, str] = field(default_factory=dict)  # round -> "w" (seat 0) or "b" (seat 1)
    met: list[str] = field(default_factory=list)  # the opponent of every match, aborted ones too
    scored: list[tuple[str, float]] = field(default_factory=list)  # (opponent, own score) of matches with a result


def _records(
    people: tuple[SwissEntrant, ...], games: tuple[SwissGame, ...], through: int, late_points: str
) -> dict[str, _Record]:
    records = {e.id: _Record() for e in people}
    for g in games:
        if g.round > through:
            continue
        first = records[g.first]
        if g.second is None:
            first.byes += 1
            first.points += 1.0  # a bye is a win, whether or not its result was written down
            continue
        second = records[g.second]
        first.seats[g.round], second.seats[g.round] = "w", "b"
        first.met.append(g.second)
        second.met.append(g.first)
        if g.result is not None:
            first.points += g.result
            second.points += 1.0 - g.result
            first.scored.append((g.second, g.result))
            second.scored.append((g.first, 1.0 - g.result))
    if late_points == "half":
        for e in people:
            records[e.id].points += 0.5 * max(0, min(e.joined_round - 1, through))
    return records


# --- the pairing ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Player:
    """An entrant to pair this round, as the pairing sees them."""

    id: str
    number: int  # the pairing number: 1 is the highest rating
    rating: float
    points: float
    seats: str  # one letter a round before this one: "w" seat 0, "b" seat 1, "-" no game
    opponents: frozenset[str]  # every active entrant they have met
    byes: int

    @property
    def rank(self) -> tuple[float, int]:
        """FIDE's order for pairing (C.04.3 A.2): score, then pairing number; the lower, the higher ranked."""
        return (-self.points, self.number)


def _untouched_field(players: list[_Player]) -> bool:
    """True when nobody to pair has a game, a bye or a point more than another: round 1, in practice.
    The Dutch pairing is then fixed by the rules (the top half against the bottom half, in order, the
    last player's bye when the number is odd), and _first_round writes it down, where pairing_core
    spends time growing as the fourth power of the field proving it (6 s for 500 players, 65 s for 1000;
    tests/test_swiss.py checks that the two agree)."""
    return all(p.seats.strip("-") == "" and p.byes == 0 and p.points == players[0].points for p in players)


def _first_round(players: list[_Player]) -> tuple[list[tuple[_Player, _Player]], _Player | None]:
    bye = players[-1] if len(players) % 2 else None
    half = len(players) // 2
    return [(players[i], players[half + i]) for i in range(half)], bye


def _pair_by_core(players: list[_Player], round_number: int) -> tuple[list[tuple[_Player, _Player]], _Player | None]:
    """The Dutch pairing by pairing_core, with the seat limits given up, and then a second bye allowed,
    only when the round cannot be paired otherwise (the module's docstring says why)."""
    by_number = {p.number: p for p in players}
    numbers = {p.id: p.number for p in players}
    odd_with_byes = len(players) % 2 == 1 and any(p.byes for p in players)
    tries = [(True, True), (False, True)] + ([(False, False)] if odd_with_byes else [])
    gave_up = False
    last: tuple[Any, ...] | None = None
    for keep_seats, keep_byes in tries:
        request = tuple(_canonical(p, numbers, keep_seats, keep_byes) for p in players)
        if request == last:
            continue  # nobody has a seat to give up: the same question has the same answer
        last = request
        try:
            result = pair_canonical(CanonicalRequest(players=request, ruleset=_RULESET, round_number=round_number))
        except ImpossiblePairingError:
            gave_up = False  # each try asks less than the one before: the last one's answer is the answer
            continue
        except EngineTimeoutError:
            gave_up = True
            continue
        pairs: list[tuple[_Player, _Player]] = []
        bye: _Player | None = None
        for board in result.pairings:
            if board.is_bye:
                bye = by_number[int(board.white_id)]
            else:
                pairs.append((by_number[int(board.white_id)], by_number[int(board.black_id)]))
        return pairs, bye
    if gave_up:
        raise SwissError(
            f"round {round_number} could not be paired: the search for a pairing of {len(players)} players "
            "gave up after pairing_core's bound of 2,000,000 steps without finding one"
        )
    raise SwissError(
        f"round {round_number} cannot be paired: among the {len(players)} players to pair, there is no pairing "
        "in which nobody meets an opponent again"
    )


def _canonical(p: _Player, numbers: dict[str, int], keep_seats: bool, keep_byes: bool) -> Any:
    return CanonicalPlayer(
        id=p.number,
        pairing_no=p.number,
        rating=max(0, round(p.rating)),
        points=p.points,
        # Without seats, "-" stays: pairing_core gives the bye to the player with the fewest rounds
        # without a game, among those with the fewest points.
        color_hist=p.seats if keep_seats else p.seats.replace("w", "").replace("b", ""),
        opponents=tuple(sorted(numbers[o] for o in p.opponents)),
        received_bye=keep_byes and p.byes > 0,
        float_hist="",
    )


# --- the seats ---------------------------------------------------------------------------------------


def _preference(seats: str) -> tuple[str | None, int]:
    """A player's seat preference, FIDE's colour preference (C.04.3 A.6) over the games they played:
    (the seat, "w" or "b", and its strength, 3 absolute, 2 strong, 1 mild), or (None, 0) before any
    game. The difference counts seat 0 games less seat 1 games."""
    played = seats.replace("-", "")
    if not played:
        return None, 0
    difference = played.count("w") - played.count("b")
    if difference > 1 or played[-2:] == "ww":
        return "b", 3
    if difference < -1 or played[-2:] == "bb":
        return "w", 3
    if difference == 1:
        return "b", 2
    if difference == -1:
        return "w", 2
    return ("b" if played[-1] == "w" else "w"), 1


def _seated(a: _Player, b: _Player) -> tuple[_Player, _Player]:
    """(seat 0, seat 1) for a pair, by FIDE's colour allocation (C.04.3 E.1 to E.5), with seat 0 as
    White and White as the initial colour."""
    high, low = (a, b) if a.rank < b.rank else (b, a)
    (want_high, strength_high), (want_low, strength_low) = _preference(high.seats), _preference(low.seats)

    def give(p: _Player, seat: str) -> tuple[_Player, _Player]:
        other = low if p is high else high
        return (p, other) if seat == "w" else (other, p)

    if want_high is None and want_low is None:  # E.5: neither has played
        return give(high, "w" if high.number % 2 == 1 else "b")
    if want_high is None or want_low is None or want_high != want_low:  # E.1: grant both
        return give(high, want_high) if want_high is not None else give(low, want_low or "w")
    if strength_high != strength_low:  # E.2: grant the stronger
        return give(high, want_high) if strength_high > strength_low else give(low, want_low)
    if strength_high == 3:  # E.2, both absolute: grant the wider difference
        wide_high, wide_low = (abs(p.seats.count("w") - p.seats.count("b")) for p in (high, low))
        if wide_high != wide_low:
            return give(high, want_high) if wide_high > wide_low else give(low, want_low)
    for r in range(len(high.seats) - 1, -1, -1):  # E.3: alternate from the last round they sat differently
        seat_high, seat_low = high.seats[r], low.seats[r]
        if seat_high != "-" and seat_low != "-" and seat_high != seat_low:
            return give(high, seat_low)
    return give(high, want_high)  # E.4: grant the higher-ranked player's preference


def _board_order(pair: tuple[_Player, _Player]) -> tuple[float, float, int]:
    """FIDE's board order (C.04.2): the higher-ranked player's score, the sum of both, then their number."""
    high = min(pair, key=lambda p: p.rank)
    return (-high.points, -(pair[0].points + pair[1].points), high.number)
