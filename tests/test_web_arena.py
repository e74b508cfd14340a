"""Arena tournaments (koikoi.web.arena): points with streaks and berserk, the performance tie-break,
standings, the end's grace time, and the pairing of each wave: nobody twice, never the same opponent twice
in a row, neighbours in the standings, and nobody left waiting who could have been paired."""

from __future__ import annotations

import functools
import operator
import random
from collections.abc import Callable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from koikoi.web.arena import (
    DRAW,
    LOSS,
    WIN,
    ArenaStanding,
    ArenaWaiting,
    berserk_counts,
    counts_at_end,
    pair_arena,
    performance,
    rank_standings,
    scored,
    standings_order,
)

# -- points ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "streak", "berserk", "expected"),
    [
        (WIN, 0, False, (2, 1)),  # a first win
        (WIN, 1, False, (2, 2)),  # a second win: not yet on fire
        (WIN, 2, False, (4, 3)),  # a third win: on fire, doubled
        (WIN, 7, False, (4, 8)),  # still on fire
        (DRAW, 0, False, (1, 0)),
        (DRAW, 1, False, (1, 0)),  # a draw resets the streak
        (DRAW, 2, False, (2, 0)),  # a draw on fire is doubled, and puts the fire out
        (LOSS, 0, False, (0, 0)),
        (LOSS, 5, False, (0, 0)),  # a loss resets the streak, and doubled nothing is nothing
        (WIN, 0, True, (3, 1)),  # berserk win
        (WIN, 1, True, (3, 2)),
        (WIN, 2, True, (5, 3)),  # berserk win on fire: 2 * 2 + 1, the bonus not doubled
        (DRAW, 0, True, (1, 0)),  # berserk gives nothing but on a win
        (DRAW, 3, True, (2, 0)),
        (LOSS, 0, True, (0, 0)),
        (LOSS, 4, True, (0, 0)),
    ],
)
def test_scored(result: str, streak: int, berserk: bool, expected: tuple[int, int]) -> None:
    assert scored(result, streak, berserk=berserk) == expected


def test_a_whole_arena_of_results() -> None:
    results = [
        (WIN, False),  # 2, streak 1
        (WIN, True),  # 3, streak 2 (berserk: +1)
        (WIN, False),  # 4 on fire, streak 3
        (WIN, True),  # 5 on fire + berserk, streak 4
        (DRAW, False),  # 2 on fire, streak 0
        (WIN, False),  # 2, streak 1
        (LOSS, True),  # 0, streak 0
        (WIN, False),  # 2, streak 1
        (WIN, False),  # 2, streak 2
        (DRAW, True),  # 2 on fire (berserk is nothing on a draw), streak 0
        (LOSS, False),  # 0, streak 0
    ]
    total, streak, totals, streaks = 0, 0, [], []
    for result, berserk in results:
        points, streak = scored(result, streak, berserk=berserk)
        total += points
        totals.append(total)
        streaks.append(streak)
    assert totals == [2, 5, 9, 14, 16, 18, 18, 20, 22, 24, 24]
    assert streaks == [1, 2, 3, 4, 0, 1, 0, 1, 2, 0, 0]


@pytest.mark.parametrize("result", ["win", "WON", "Won", "", "lose", "drawn", "loss"])
def test_an_unknown_result_is_refused(result: str) -> None:
    with pytest.raises(ValueError, match="result") as raised:
        scored(result, 0)
    assert repr(result) in str(raised.value)


def test_a_negative_streak_is_refused() -> None:
    with pytest.raises(ValueError, match=r"streak.*-1"):
        scored(WIN, -1)


# -- performance and standings ---------------------------------------------------------------------


def test_performance() -> None:
    assert performance(0.0, 0, 0, 0) is None  # no game yet
    assert performance(1500.0, 1, 1, 0) == 2000.0
    assert performance(1500.0, 1, 0, 1) == 1000.0
    assert performance(1500.0, 1, 0, 0) == 1500.0  # a draw: the opponent's rating
    assert performance(1400.0 + 1600.0 + 1800.0, 3, 2, 1) == pytest.approx(1600.0 + 500.0 / 3)
    assert performance(4000.0, 4, 0, 4) == 500.0
    for games, wins, losses in [(-1, 0, 0), (1, -1, 0), (1, 0, -1), (2, 2, 1), (0, 1, 0)]:
        with pytest.raises(ValueError):
            performance(1500.0, games, wins, losses)


def row(
    id: str, score: int = 0, perf: float | None = None, rating: float = 1500.0, wins: int = 0, streak: int = 0
) -> ArenaStanding:
    games = 0 if perf is None else max(wins, 1)
    return ArenaStanding(id, score, games, wins, games - wins, 0, streak, perf, rating)


def test_a_standing_is_consistent() -> None:
    ArenaStanding("a", 7, 4, 3, 1, 0, 1, 1700.0, 1500.0)
    with pytest.raises(ValueError, match="games"):
        ArenaStanding("a", 7, 4, 3, 0, 0, 1, 1700.0, 1500.0)
    with pytest.raises(ValueError, match="0 or more"):
        ArenaStanding("a", -1, 0, 0, 0, 0, 0, None, 1500.0)
    assert not row("a", streak=1).on_fire and row("a", streak=2).on_fire


def test_standings_order_score_then_performance_then_rating_then_id() -> None:
    rows = [
        row("low-score", 2, 2400.0, 2500.0),
        row("no-game", 0, None, 2600.0),
        row("perf-1600", 6, 1600.0, 1500.0),
        row("perf-1800", 6, 1800.0, 1400.0),
        row("perf-none", 6, None, 2000.0),  # cannot happen with points, but must sort after any performance
        row("b-same", 6, 1600.0, 1500.0),  # same score, performance and rating as perf-1600: the id decides
        row("rated-1700", 6, 1600.0, 1700.0),
        row("top", 9, 1200.0, 1000.0),
    ]
    ranked = rank_standings(random.Random(4).sample(rows, len(rows)))
    assert [(place, s.id) for place, s in ranked] == [
        (1, "top"),
        (2, "perf-1800"),
        (3, "rated-1700"),
        (4, "b-same"),
        (5, "perf-1600"),
        (6, "perf-none"),
        (7, "low-score"),
        (8, "no-game"),
    ]
    assert [s for _, s in ranked] == sorted(rows, key=standings_order)


def test_equal_lines_still_get_distinct_places() -> None:
    rows = [row(x, 4, 1500.0, 1500.0) for x in "dcba"]
    assert [(place, s.id) for place, s in rank_standings(rows)] == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]


def test_before_anyone_plays_the_standings_follow_ratings() -> None:
    rows = [row("a", rating=1500.0), row("b", rating=1900.0), row("c", rating=1200.0), row("d", rating=1900.0)]
    assert [s.id for _, s in rank_standings(rows)] == ["b", "d", "a", "c"]
    assert rank_standings([]) == []


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.one_of(st.none(), st.sampled_from([1400.0, 1500.0])), st.integers(0, 2)),
        max_size=12,
    ),
    st.randoms(use_true_random=False),
)
def test_rank_standings_is_a_total_order(raw: list[tuple[int, float | None, int]], rnd: random.Random) -> None:
    rows = [row(f"p{i}", score, perf, 1500.0 + 100 * r) for i, (score, perf, r) in enumerate(raw)]
    ranked = rank_standings(rows)
    assert [place for place, _ in ranked] == list(range(1, len(rows) + 1))
    assert rank_standings(rnd.sample(rows, len(rows))) == ranked  # the order given makes no difference
    for (_, s), (_, t) in zip(ranked, ranked[1:]):
        assert s.score >= t.score
        if s.score == t.score:
            assert t.performance is None or (s.performance is not None and s.performance >= t.performance)


# -- the end, berserk ------------------------------------------------------------------------------


def test_counts_at_end() -> None:
    end = 1_700_000_000.0
    assert counts_at_end(end - 600, end, 60)
    assert counts_at_end(end, end, 60)  # at the end, within the grace
    assert counts_at_end(end + 59.999, end, 60)
    assert not counts_at_end(end + 60, end, 60)  # strictly before the end plus the grace
    assert not counts_at_end(end + 3600, end, 60)
    assert counts_at_end(end - 0.001, end, 0) and not counts_at_end(end, end, 0)
    with pytest.raises(ValueError, match="grace"):
        counts_at_end(end, end, -1)


def test_berserk_counts() -> None:
    assert berserk_counts(7, 7) and berserk_counts(30, 7)
    assert not berserk_counts(6, 7) and not berserk_counts(0, 7)
    assert berserk_counts(0, 0)
    for moves, minimum in [(-1, 7), (7, -1)]:
        with pytest.raises(ValueError):
            berserk_counts(moves, minimum)


# -- pairing ---------------------------------------------------------------------------------------


def waiting(*spec: tuple[str, str | None], since: Sequence[float] = ()) -> list[ArenaWaiting]:
    """Players ranked 1, 2, 3... in the order given, each (id, last opponent)."""
    return [
        ArenaWaiting(x, place, 1500.0, last, since[place - 1] if since else 0.0)
        for place, (x, last) in enumerate(spec, start=1)
    ]


def as_sets(pairs: list[tuple[str, str]]) -> list[frozenset[str]]:
    return [frozenset(p) for p in pairs]


def test_neighbours_are_paired_best_first() -> None:
    got = pair_arena(waiting(*[(x, None) for x in "abcdefg"]))
    assert got == [("a", "b"), ("c", "d"), ("e", "f")]  # g, the last of 7, waits for the next wave
    assert pair_arena([]) == [] and pair_arena(waiting(("a", None))) == []


def test_last_opponents_are_not_paired_again() -> None:
    # 1 and 2 just played: 1 plays 3, 2 plays 4.
    got = pair_arena(waiting(("a", "b"), ("b", "a"), ("c", None), ("d", None)))
    assert as_sets(got) == [frozenset("ac"), frozenset("bd")]
    # Either side's last opponent bars the pair: b has played c since, but a's last match was b.
    got = pair_arena(waiting(("a", "b"), ("b", "c"), ("c", "b"), ("d", None)))
    assert as_sets(got) == [frozenset("ac"), frozenset("bd")]
    # And the other way round: b's last match was a (a's own last opponent is not known here).
    got = pair_arena(waiting(("a", None), ("b", "a"), ("c", None), ("d", None)))
    assert as_sets(got) == [frozenset("ac"), frozenset("bd")]
    # Two who just played each other and nobody else: they wait.
    assert pair_arena(waiting(("a", "b"), ("b", "a"))) == []


def test_a_last_opponent_who_is_not_waiting_bars_nobody() -> None:
    assert pair_arena(waiting(("a", "z"), ("b", "y"))) == [("a", "b")]


def test_two_left_at_the_bottom_are_swapped_into_the_pair_above() -> None:
    # Without the swap, a-b then c and d, who just played each other, would both wait.
    got = pair_arena(waiting(("a", None), ("b", None), ("c", "d"), ("d", "c")))
    assert as_sets(got) == [frozenset("ac"), frozenset("bd")]
    # The nearest pair that can take them: c-d, not a-b, so that nobody moves far from their place.
    got = pair_arena(waiting(("a", None), ("b", None), ("c", None), ("d", None), ("e", "f"), ("f", "e")))
    assert got == [("a", "b"), ("c", "e"), ("d", "f")]


def test_or_into_the_two_pairs_above() -> None:
    # u and v just played; p and q each played u before, r and s each played v: no single pair can take
    # both u and v, but u-r, s-p, q-v pairs everybody (the pass gives p-q, r-s and leaves u and v; the
    # nearer pair, r-s, is the one broken up for u).
    got = pair_arena(waiting(("p", "u"), ("q", "u"), ("r", "v"), ("s", "v"), ("u", "v"), ("v", "u")))
    assert got == [("p", "s"), ("q", "v"), ("r", "u")]


def test_ties_in_rank_go_by_rating_then_id() -> None:
    players = [
        ArenaWaiting("c", 1, 1500.0, None, 0.0),
        ArenaWaiting("a", 1, 1500.0, None, 0.0),
        ArenaWaiting("z", 1, 1800.0, None, 0.0),
        ArenaWaiting("b", 1, 1500.0, None, 0.0),
    ]
    assert pair_arena(players) == [("z", "a"), ("b", "c")]


def test_the_longer_wait_takes_seat_0() -> None:
    got = pair_arena(waiting(("a", None), ("b", None), ("c", None), ("d", None), since=[20.0, 10.0, 5.0, 5.0]))
    assert got == [("b", "a"), ("c", "d")]  # b waited longer; c and d equally long: the better placed


def test_a_player_waiting_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="twice: a"):
        pair_arena(waiting(("a", None), ("b", None), ("a", None)))


def test_a_wave_of_two_thousand() -> None:
    rnd = random.Random(45)
    ids = [f"p{i:04d}" for i in range(2000)]
    plain = [ArenaWaiting(x, i + 1, 1500.0, None, 0.0) for i, x in enumerate(ids)]
    assert pair_arena(plain) == list(zip(ids[::2], ids[1::2]))
    # Everyone just played their neighbour: each pair is broken up, all still paired.
    mutual = [ArenaWaiting(x, i + 1, 1500.0, ids[i ^ 1], 0.0) for i, x in enumerate(ids)]
    got = pair_arena(mutual)
    assert len(got) == 1000 and check_pairing(mutual, got) == []
    # One player was everyone's last opponent (the worst case for the pass's skipping), and random ones.
    star = [ArenaWaiting(x, i + 1, 1500.0, ids[-1] if x != ids[-1] else ids[0], 0.0) for i, x in enumerate(ids)]
    got = pair_arena(star)
    assert len(got) == 999 and check_pairing(star, got) == [ids[-2], ids[-1]]
    messy = [ArenaWaiting(x, rnd.randint(1, 300), 1500.0, rnd.choice(ids), rnd.random()) for x in ids]
    assert len(check_pairing(messy, pair_arena(messy))) <= 3


# The properties, against any waiting list.


def barred(a: ArenaWaiting, b: ArenaWaiting) -> bool:
    return a.last_opponent == b.id or b.last_opponent == a.id


def check_pairing(players: Sequence[ArenaWaiting], pairs: list[tuple[str, str]]) -> list[str]:
    """Asserts what every pairing must be; returns the ids left over, best placed first."""
    by_id = {w.id: w for w in players}
    seated = [x for pair in pairs for x in pair]
    assert len(seated) == len(set(seated)), "nobody twice"
    assert set(seated) <= set(by_id), "only the waiting"
    order = sorted(players, key=lambda w: (w.rank, -w.rating, w.id))
    place = {w.id: i for i, w in enumerate(order)}
    for x, y in pairs:
        assert x != y
        assert not barred(by_id[x], by_id[y]), f"{x} and {y} just played"
        # Seat 0: the longer wait, or on a tie the better place.
        assert (by_id[x].waiting_since, place[x]) < (by_id[y].waiting_since, place[y])
    assert [min(place[x], place[y]) for x, y in pairs] == sorted(min(place[x], place[y]) for x, y in pairs)
    left = [w for w in order if w.id not in set(seated)]
    # Nobody waits who could have played another who waits: the left over are barred from each other.
    assert all(barred(a, b) for i, a in enumerate(left) for b in left[i + 1 :])
    assert len(left) <= 3
    return [w.id for w in left]


ID_POOL = [f"p{i}" for i in range(14)]


@st.composite
def waiting_lists(draw: st.DrawFn, max_size: int = 12) -> list[ArenaWaiting]:
    ids = draw(st.lists(st.sampled_from(ID_POOL), unique=True, max_size=max_size))
    return [
        ArenaWaiting(
            x,
            draw(st.integers(1, 6)),  # few places: ties, which the rating and then the id break
            draw(st.sampled_from([1400.0, 1500.0, 1600.0])),
            # Anyone as last opponent, even one not waiting, or themselves (which bars nothing).
            draw(st.one_of(st.none(), st.sampled_from(ID_POOL))),
            draw(st.sampled_from([0.0, 1.0, 2.0])),
        )
        for x in ids
    ]


def places_between(players: Sequence[ArenaWaiting], x: str, y: str) -> tuple[int, int]:
    """(players placed strictly between x and y, players waiting who are barred from the better placed)."""
    order = sorted(players, key=lambda w: (w.rank, -w.rating, w.id))
    place = {w.id: i for i, w in enumerate(order)}
    upper = order[min(place[x], place[y])]
    return abs(place[x] - place[y]) - 1, sum(1 for w in order if w is not upper and barred(upper, w))


@settings(max_examples=300, deadline=None)
@given(waiting_lists(), st.randoms(use_true_random=False))
def test_any_wave_is_a_valid_pairing(players: list[ArenaWaiting], rnd: random.Random) -> None:
    pairs = pair_arena(players)
    check_pairing(players, pairs)
    # Deterministic, whatever the order the players come in.
    assert pair_arena(rnd.sample(players, len(players))) == pairs
    # Near in the standings: in every pair the pass made, the players between the two are at most as many
    # as those barred from the better placed (each was skipped, or taken above by one who skipped him).
    # Only a swap of the left over may pair further, and it remakes 3 pairs at most.
    far = [(x, y) for x, y in pairs if operator.gt(*places_between(players, x, y))]
    assert len(far) <= 3


@settings(max_examples=200, deadline=None)
@given(waiting_lists())
def test_with_no_last_opponent_waiting_the_pairs_are_neighbours(players: list[ArenaWaiting]) -> None:
    players = [ArenaWaiting(w.id, w.rank, w.rating, None, w.waiting_since) for w in players]
    order = [w.id for w in sorted(players, key=lambda w: (w.rank, -w.rating, w.id))]
    assert as_sets(pair_arena(players)) == [frozenset(p) for p in zip(order[::2], order[1::2])]


@st.composite
def real_waves(draw: st.DrawFn) -> list[ArenaWaiting]:
    """Waiting players whose last opponents come from matches played one after another, each player in
    one match at a time: the last opponents of a real arena."""
    pool = ID_POOL[:12]
    last: dict[str, str] = {}
    for a, b in draw(st.lists(st.tuples(st.sampled_from(pool), st.sampled_from(pool)), max_size=40)):
        if a != b:
            last[a], last[b] = b, a
    ids = draw(st.lists(st.sampled_from(pool), unique=True, max_size=10))
    return [
        ArenaWaiting(x, draw(st.integers(1, 10)), 1500.0, last.get(x), draw(st.sampled_from([0.0, 1.0]))) for x in ids
    ]


def most_pairs(n: int, allowed: Callable[[int, int], bool]) -> int:
    """The largest number of pairs among n players, by trying every pairing."""

    @functools.cache
    def best(free: frozenset[int]) -> int:
        if len(free) < 2:
            return 0
        i = min(free)
        rest = free - {i}
        return max([best(rest)] + [1 + best(rest - {j}) for j in rest if allowed(i, j)])

    return best(frozenset(range(n)))


@settings(max_examples=300, deadline=None)
@given(real_waves())
def test_a_real_wave_pairs_as_many_as_possible(players: list[ArenaWaiting]) -> None:
    pairs = pair_arena(players)
    left = check_pairing(players, pairs)
    assert len(left) <= 2
    assert len(pairs) == most_pairs(len(players), lambda i, j: not barred(players[i], players[j]))
