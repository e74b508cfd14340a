"""Arena tournaments: points, streaks, berserk, standings and who plays whom (issue 45).

An arena, in the spirit of lichess's arenas (lila, modules/tournament), runs for a fixed time. Players join
at any time, pause and come back at any time, and as soon as one of their matches ends they wait to be
paired again, with a player near them in the standings, so that the leaders meet the leaders. A match
scores 2 points for a win, 1 for a draw and 0 for a loss; two wins in a row set a player "on fire", and
while on fire each result scores double, until a draw or a loss puts the fire out. A player may berserk:
halve their own clock for one more point if they win, granted only when they made enough decisions in the
match (a player who berserks and then throws the match at once must not gain by it). An aborted match
scores nothing and changes no streak: the caller simply never calls :func:`scored` for it. Matches still
being played at the end may finish within a grace time; a match that ends later does not count. The
standings rank by points; equal points are separated by the performance (the average opponent rating,
moved 500 points per win over losses), then by rating.

This module is pure, like the lobby's quick pairing (:mod:`koikoi.web.pairing`): the tournament service
keeps the arena in the database, works out each player's standing from its counted matches, and every wave
(a second or so) calls :func:`pair_arena` on the players waiting, under a lock, creating the paired games
and taking the players off the waiting list in one transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "BERSERK_BONUS",
    "DRAW",
    "FIRE_STREAK",
    "LOSS",
    "PERFORMANCE_SPREAD",
    "POINTS",
    "RESULTS",
    "WIN",
    "ArenaStanding",
    "ArenaWaiting",
    "berserk_counts",
    "counts_at_end",
    "pair_arena",
    "performance",
    "rank_standings",
    "scored",
    "standings_order",
]

# A result as the finished match gave it, for one player.
WIN, DRAW, LOSS = "won", "draw", "lost"
RESULTS = (WIN, DRAW, LOSS)

POINTS = {WIN: 2, DRAW: 1, LOSS: 0}
# Wins in a row before a match from which that match's points are doubled: two wins make a player "on fire".
FIRE_STREAK = 2
# The point a counted berserk adds to a win; added after the doubling, so it is never doubled itself.
BERSERK_BONUS = 1
# The performance moves this many rating points per win over losses, a game's worth of rating.
PERFORMANCE_SPREAD = 500.0


def scored(result: str, streak: int, *, berserk: bool = False) -> tuple[int, int]:
    """(points, streak after) for one player's match ``result``.

    ``streak`` is the player's wins in a row before this match; at :data:`FIRE_STREAK` or more the player
    is on fire and the result's points are doubled (a win 4, a draw 2). A win adds one to the streak, a
    draw or a loss sets it back to 0. ``berserk`` is true when the player berserked and the berserk counts
    (:func:`berserk_counts`): one more point for a win only, after the doubling.

    >>> scored(WIN, 0), scored(WIN, 2), scored(DRAW, 2), scored(WIN, 3, berserk=True)
    ((2, 1), (4, 3), (2, 0), (5, 4))
    """
    if result not in POINTS:
        raise ValueError(f"result must be one of {', '.join(map(repr, RESULTS))}, not {result!r}")
    if streak < 0:
        raise ValueError(f"streak must be 0 or more, not {streak!r}")
    points = POINTS[result] * (2 if streak >= FIRE_STREAK else 1)
    if result == WIN:
        return points + (BERSERK_BONUS if berserk else 0), streak + 1
    # A berserk that did not win gains nothing: its price was the halved clock, its prize only a win.
    return points, 0


def performance(opponent_ratings_sum: float, games: int, wins: int, losses: int) -> float | None:
    """The tie-break between equal scores: the average rating of the opponents, plus
    :data:`PERFORMANCE_SPREAD` times (wins - losses) / games, as lichess's arena performance; None before
    any counted game (such a player sorts after those who have one).

    >>> performance(3000.0, 2, 1, 0)
    1750.0
    >>> performance(0.0, 0, 0, 0) is None
    True
    """
    if games < 0 or wins < 0 or losses < 0:
        raise ValueError(f"games, wins and losses must be 0 or more, not {games!r}, {wins!r}, {losses!r}")
    if wins + losses > games:
        raise ValueError(f"{wins} wins and {losses} losses are more than {games} games")
    if games == 0:
        return None
    return (opponent_ratings_sum + PERFORMANCE_SPREAD * (wins - losses)) / games


@dataclass(frozen=True, slots=True)
class ArenaStanding:
    """One player's line in an arena's standings: ``score`` is their points (:func:`scored`, summed over
    their counted matches), ``games`` those matches (``wins + draws + losses``), ``streak`` their wins in
    a row now, ``performance`` the tie-break (:func:`performance`, None before any game) and ``rating``
    their rating when the standings were made (the last tie-break, and the whole order before anyone has
    played)."""

    id: str
    score: int
    games: int
    wins: int
    draws: int
    losses: int
    streak: int
    performance: float | None
    rating: float

    def __post_init__(self) -> None:
        counts = (self.score, self.games, self.wins, self.draws, self.losses, self.streak)
        if min(counts) < 0:
            raise ValueError(f"{self.id}: score, games, wins, draws, losses and streak must be 0 or more")
        if self.wins + self.draws + self.losses != self.games:
            raise ValueError(f"{self.id}: {self.wins} + {self.draws} + {self.losses} is not {self.games} games")

    @property
    def on_fire(self) -> bool:
        """Whether this player's next result scores double."""
        return self.streak >= FIRE_STREAK


def standings_order(standing: ArenaStanding) -> tuple[int, bool, float, float, str]:
    """The sort key of the standings, first place first: ``sorted(rows, key=standings_order)``. Score
    highest first, then performance highest first (no performance yet comes after any), then rating
    highest first, then id, so that the order is total and the same on every server."""
    perf = standing.performance
    return (-standing.score, perf is None, -perf if perf is not None else 0.0, -standing.rating, standing.id)


def rank_standings(rows: Iterable[ArenaStanding]) -> list[tuple[int, ArenaStanding]]:
    """The standings in :func:`standings_order`, each with its place, 1 to n. Places are never shared, not
    even by equal scores and performances: the rating and then the id decide, so that a table reads 1, 2,
    3... and a place names one player (a pairing by place, :class:`ArenaWaiting`, needs exactly that).

    Before anyone has played every score is 0 and every performance None, so the places follow ratings.
    """
    return list(enumerate(sorted(rows, key=standings_order), start=1))


def counts_at_end(ended_at: float, arena_end: float, grace: float) -> bool:
    """Whether a match that ended at ``ended_at`` counts in an arena that ends at ``arena_end``: it must end
    strictly before the end plus ``grace`` seconds, the time the matches still being played at the end are
    given to finish (no new match starts after the end; a match never started cannot count either)."""
    if grace < 0:
        raise ValueError(f"grace must be 0 or more seconds, not {grace!r}")
    return ended_at < arena_end + grace


def berserk_counts(moves_made: int, minimum: int) -> bool:
    """Whether a player's berserk earns its bonus: only when they made at least ``minimum`` decisions in the
    match, so that a berserk followed by a quick resignation, or a match the opponent abandoned at once,
    earns nothing."""
    if moves_made < 0 or minimum < 0:
        raise ValueError(f"moves_made and minimum must be 0 or more, not {moves_made!r}, {minimum!r}")
    return moves_made >= minimum


@dataclass(frozen=True, slots=True)
class ArenaWaiting:
    """A player waiting to be paired in an arena.

    ``rank`` is their place in the current standings (:func:`rank_standings`; 1 is first), which is what
    brings near players together; before anyone has played the standings follow ratings, so the first
    pairings do too. ``last_opponent`` is the id of their last match's opponent in this arena, if any: they
    are not paired with that player again straight away. ``waiting_since`` (Unix seconds) is when their last
    match ended or when they joined or came back from a pause; it decides the seats."""

    id: str
    rank: int
    rating: float
    last_opponent: str | None
    waiting_since: float


def pair_arena(waiting: Sequence[ArenaWaiting]) -> list[tuple[str, str]]:
    """Who plays whom among the players ``waiting`` now, as (seat 0, seat 1) id pairs.

    The players are put in standings order (rank, then rating highest first, then id) and paired with
    their neighbours in that order, each with the nearest player below them who is not yet paired and was
    not their last opponent, nor had them as last opponent (the same two never play twice in a row).
    So with no such conflict the pairs are exactly 1-2, 3-4, 5-6...; when 1 and 2 just played each other,
    1 plays 3 and 2 plays 4. A player who finds nobody waits for the next wave; but when two are left who
    just played each other (at the bottom, say), they are first swapped into the nearest pair that allows
    it, or the nearest two pairs, so that nobody waits needlessly. The players left over are pairwise
    barred from playing each other, hence at most 3; and when the last opponents come from real matches
    (each player plays one match at a time), at most 2, and the pairs are as many as any pairing allows.

    Seats: the player who has waited longer takes seat 0 (the better-placed one on a tie). Who deals first
    is drawn, so a seat matters little; tying it to waiting time rather than to the standings keeps any
    small seat effect from falling always to the leaders.

    Deterministic: the same waiting players, in any order, give the same pairs, listed from the top of the
    standings down. O(n log n): the sort, then one pass whose steps past a neighbour are bounded by the
    conflicts (each player has one last opponent), then at most one swap, found among the pairs sorted.

    >>> a, b, c = (ArenaWaiting(x, i, 1500.0, None, 0.0) for i, x in enumerate("abc", start=1))
    >>> pair_arena([c, b, a])
    [('a', 'b')]
    >>> pair_arena([a, ArenaWaiting("b", 2, 1500.0, "a", 0.0), c])
    [('a', 'c')]
    """
    order = sorted(waiting, key=lambda w: (w.rank, -w.rating, w.id))
    position = {w.id: i for i, w in enumerate(order)}
    if len(position) != len(order):
        raise ValueError("a player is waiting twice: " + ", ".join(_twice(w.id for w in order)))
    n = len(order)
    # Each player's one last opponent, as a position (-1 when none is waiting): the conflicts, both ways.
    last = [position.get(w.last_opponent, -1) if w.last_opponent is not None else -1 for w in order]

    def allowed(i: int, j: int) -> bool:
        return i != j and last[i] != j and last[j] != i

    # The players not yet paired below the one being served, as a linked list of positions, so that a
    # paired player is skipped at no cost and each step past a neighbour is a conflict (at most 2n in all).
    after = list(range(1, n + 1))
    before = list(range(-1, n - 1))

    def unlink(i: int) -> None:
        if before[i] >= 0:
            after[before[i]] = after[i]
        if after[i] < n:
            before[after[i]] = before[i]

    partner = [-1] * n
    head = 0  # the first unpaired, unserved position
    while head < n:
        i = head
        unlink(i)
        head = after[i]
        j = head
        while j < n and not allowed(i, j):
            j = after[j]
        if j < n:
            partner[i], partner[j] = j, i
            if j == head:
                head = after[j]
            unlink(j)

    while _pair_the_left_over(partner, allowed):
        pass  # each success pairs two more, of at most 3 left over

    pairs: list[tuple[str, str]] = []
    for i in range(n):
        j = partner[i]
        if j > i:
            first, second = order[i], order[j]
            # The longer wait takes seat 0; on a tie the better place (i, as i < j).
            if second.waiting_since < first.waiting_since:
                first, second = second, first
            pairs.append((first.id, second.id))
    return pairs


def _pair_the_left_over(partner: list[int], allowed: Callable[[int, int], bool]) -> bool:
    """Pairs two of the players the pass left over (``partner`` -1), if it can, by an augmenting path
    through one or two of the pairs made, the nearest first (by position); True when it did.

    Any two players left over are barred from each other (else the better placed would have taken the
    other), so there are at most 3 of them, and at most 2 when the last opponents come from real matches.
    In that case the bars form a forest (a player has one last opponent, and only two players can each be
    the other's: a longer circle would need each match to end after the one before it, round to the
    first), and with u and v left over, every pair that no swap with u and v can break up has both its
    players barred from u, or both from v: then one pair of each kind gives u - a = b - c = d - v, since a
    bar between b and c would close the circle u, c, b, v; and with pairs of one kind only, u (or v) is
    barred from everyone else and no pairing places them all. So trying one pair, then two, gives as many
    pairs as any pairing could.
    """
    left = [i for i, p in enumerate(partner) if p < 0]
    pairs = [(i, p) for i, p in enumerate(partner) if p > i]
    for u, v in ((left[a], left[b]) for a in range(len(left)) for b in range(a + 1, len(left))):
        middle = u + v
        # Nearest first, so that nobody moves far from their place. In a pair (p, q), u taking p and v
        # taking q comes first: the better placed with the better placed keeps both new pairs close.
        near = sorted(pairs, key=lambda pq: (abs(pq[0] + pq[1] - middle), pq[0]))
        ends = [(a, b) for p, q in near for a, b in ((p, q), (q, p))]
        for_u = [(a, b) for a, b in ends if allowed(u, a)]  # u takes a from b
        for a, b in for_u:
            if allowed(b, v):
                partner[u], partner[a], partner[b], partner[v] = a, u, v, b
                return True
        for_v = [(c, d) for c, d in ends if allowed(d, v)]  # c is taken from d, who then plays v
        # Each (c, d) that b skips has c barred from b (or is b's own pair): the steps are bounded by
        # the bars, not by the number of pairs squared.
        for a, b in for_u:
            for c, d in for_v:
                if c != a and c != b and allowed(b, c):
                    partner[u], partner[a], partner[b], partner[c], partner[d], partner[v] = a, u, c, b, v, d
                    return True
    return False


def _twice(ids: Iterable[str]) -> list[str]:
    """The ids that come more than once, each once, sorted."""
    seen: set[str] = set()
    twice: set[str] = set()
    for i in ids:
        (twice if i in seen else seen).add(i)
    return sorted(twice)
