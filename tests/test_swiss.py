"""Swiss tournaments (koikoi.web.swiss): the Dutch pairings, byes, late joins, withdrawals, seats, and the
standings with their tie-breaks; random tournaments played through, and every input refused by name."""

from __future__ import annotations

import math
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pairing_core import DUTCH_TILL2026_COMPAT, CanonicalPlayer, CanonicalRequest, pair_canonical

from koikoi.web.swiss import (
    LATE_POINTS,
    MAX_ENTRANTS,
    MAX_ROUNDS,
    SwissEntrant,
    SwissError,
    SwissGame,
    SwissStanding,
    pair_round,
    standings,
)


def E(id: str, rating: float = 1500.0, joined: int = 1, withdrawn: bool = False) -> SwissEntrant:
    return SwissEntrant(id, rating, joined, withdrawn)


def G(round: int, first: str, second: str | None, result: float | None = 1.0) -> SwissGame:
    return SwissGame(round, first, second, result)


def seeded(n: int) -> list[SwissEntrant]:
    """p1..pn, p1 the highest rating: their pairing numbers are their names."""
    return [E(f"p{i}", 2000 - 10 * i) for i in range(1, n + 1)]


# --- brute force, for small fields ----------------------------------------------------------------


def can_pair_afresh(players: list[str], met: set[frozenset[str]]) -> bool:
    """Whether ``players`` can all be paired with nobody meeting an opponent again (when their number
    is odd, one of them, anyone, sits out): a plain search over perfect matchings."""
    n = len(players)
    allowed = [[i != j and frozenset((players[i], players[j])) not in met for j in range(n)] for i in range(n)]

    @cache
    def pairs_up(left: int) -> bool:  # left: a bit for each player still to pair
        if not left:
            return True
        i = (left & -left).bit_length() - 1
        rest = left & ~(1 << i)
        return any(rest >> j & 1 and allowed[i][j] and pairs_up(rest & ~(1 << j)) for j in range(n))

    everyone = (1 << n) - 1
    if n % 2 == 0:
        return pairs_up(everyone)
    return any(pairs_up(everyone & ~(1 << k)) for k in range(n))


def met_so_far(games: list[SwissGame]) -> set[frozenset[str]]:
    return {frozenset((g.first, g.second)) for g in games if g.second is not None}


def points_from_scratch(field: list[SwissEntrant], games: list[SwissGame], late_points: str) -> dict[str, float]:
    through = max((g.round for g in games), default=0)
    late = 0.5 if late_points == "half" else 0.0
    points = {e.id: late * min(e.joined_round - 1, through) for e in field}
    for g in games:
        if g.second is None:
            points[g.first] += 1.0
        elif g.result is not None:
            points[g.first] += g.result
            points[g.second] += 1.0 - g.result
    return points


# --- random tournaments ---------------------------------------------------------------------------

NAMES = ["ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal", "ivy", "jon", "kim", "lou"]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_random_tournaments_keep_the_rules(data: st.DataObject) -> None:
    # Small fields over many rounds run out of new opponents, where second byes and failures happen.
    n = data.draw(st.one_of(st.integers(1, len(NAMES)), st.integers(3, 7)), label="entrants")
    ids = data.draw(st.permutations(NAMES), label="ids")[:n]
    ratings = data.draw(st.lists(st.sampled_from([1200.0, 1500.0, 1800.0]), min_size=n, max_size=n), label="ratings")
    joins = data.draw(st.lists(st.sampled_from([1, 1, 1, 2, 3]), min_size=n, max_size=n), label="joined")
    leaves = data.draw(st.lists(st.sampled_from([None, None, None, 2, 3, 4, 5]), min_size=n, max_size=n), label="left")
    rounds = data.draw(st.one_of(st.integers(1, 6), st.just(6)), label="rounds")
    late_points = data.draw(st.sampled_from(LATE_POINTS), label="late_points")

    games: list[SwissGame] = []
    field: list[SwissEntrant] = []
    for r in range(1, rounds + 1):
        field = [E(ids[i], ratings[i], joins[i], withdrawn=leaves[i] is not None and leaves[i] <= r) for i in range(n)]
        active = [e.id for e in field if not e.withdrawn and e.joined_round <= r]
        met = met_so_far(games)
        had_bye = {g.first for g in games if g.second is None}
        try:
            pairs = pair_round(field, games, r, late_points=late_points)
        except SwissError as e:
            # The only way a consistent tournament fails: nobody can be paired afresh.
            assert "cannot be paired" in str(e)
            assert not can_pair_afresh(active, met)
            break
        # The same input in another order pairs the same.
        assert pair_round(field[::-1], games[::-1], r, late_points=late_points) == pairs

        seated = [who for pair in pairs for who in pair if who is not None]
        assert len(seated) == len(set(seated)), "nobody plays twice in a round"
        assert sorted(seated) == sorted(active), "every active entrant, and only they, are paired"
        assert all(a != b for a, b in pairs), "nobody plays themselves"
        byes = [a for a, b in pairs if b is None]
        assert len(byes) == len(active) % 2, "a bye when the number is odd, and only then"
        assert all(b is not None for _, b in pairs[: len(pairs) - len(byes)]), "the bye comes last"
        assert not any(frozenset(pair) in met for pair in pairs if pair[1] is not None), "no opponent twice"
        if byes and byes[0] in had_bye:
            # A second bye only when no one without a bye could take it, the others all paired afresh.
            for fresh in set(active) - had_bye:
                assert not can_pair_afresh([p for p in active if p != fresh], met), (byes[0], fresh)

        for a, b in pairs:
            if b is None:
                games.append(G(r, a, None, data.draw(st.sampled_from([1.0, None]))))
            else:
                games.append(G(r, a, b, data.draw(st.sampled_from([1.0, 1.0, 0.5, 0.0, 0.0, None]))))

    table = standings(field, games, late_points=late_points)
    assert table == standings(field[::-1], games[::-1], late_points=late_points)
    assert [s.rank for s in table] == list(range(1, n + 1))
    assert sorted(s.id for s in table) == sorted(ids)
    points = points_from_scratch(field, games, late_points)
    rating = {e.id: e.rating for e in field}
    for s in table:
        assert s.points == points[s.id]
        scored = [(g.second, g.result) for g in games if g.first == s.id and g.second and g.result is not None]
        scored += [(g.first, 1.0 - g.result) for g in games if g.second == s.id and g.result is not None]
        assert s.buchholz == sum(points[o] for o, _ in scored)
        assert s.sonneborn_berger == sum(points[o] for o, x in scored if x == 1.0) + sum(
            points[o] / 2 for o, x in scored if x == 0.5
        )
        assert s.played == len(scored) == s.wins + s.draws + s.losses
        assert s.byes == sum(1 for g in games if g.first == s.id and g.second is None)
        assert s.withdrawn == next(e.withdrawn for e in field if e.id == s.id)
    keys = [(-s.points, -s.buchholz, -s.sonneborn_berger, -rating[s.id], s.id) for s in table]
    assert keys == sorted(keys)


# --- known pairings -------------------------------------------------------------------------------


def test_round_one_is_the_top_half_against_the_bottom_half_seats_alternating():
    # FIDE's round 1 (C.04.3): 1-5, 6-2, 3-7, 8-4; the top seed deals first on board 1, and the seat of
    # the higher-ranked player alternates down the boards. The names are not in rating order.
    names = ["hal", "bob", "gus", "ann", "fay", "cat", "eve", "dan"]
    ratings = [1300.0, 2000.0, 1400.0, 2100.0, 1500.0, 1900.0, 1600.0, 1800.0]
    field = [E(name, rating) for name, rating in zip(names, ratings)]
    # by rating: ann 1, bob 2, cat 3, dan 4, eve 5, fay 6, gus 7, hal 8
    assert pair_round(field, [], 1) == [("ann", "eve"), ("fay", "bob"), ("cat", "gus"), ("hal", "dan")]
    # Odd: the lowest-rated has the bye.
    assert pair_round([*field, E("ivy", 1000.0)], [], 1)[-1] == ("ivy", None)


def test_equal_ratings_are_numbered_by_id():
    field = [E("b"), E("d"), E("a"), E("c")]
    assert pair_round(field, [], 1) == [("a", "c"), ("d", "b")]


def test_round_one_is_what_pairing_core_pairs():
    # pair_round writes down round 1 without pairing_core's search (its cost grows as the fourth power
    # of the field); the two must agree, pair for pair and on the bye.
    for n in range(1, 41):
        players = tuple(CanonicalPlayer(id=i, pairing_no=i, rating=3000 - i, points=0.0) for i in range(1, n + 1))
        core = pair_canonical(CanonicalRequest(players=players, ruleset=DUTCH_TILL2026_COMPAT, round_number=1))
        expected = {frozenset((f"p{b.white_id}", f"p{b.black_id}" if b.black_id else None)) for b in core.pairings}
        got = {frozenset(pair) for pair in pair_round(seeded(n), [], 1)}
        assert got == expected, n
    # A field with nothing behind it later on (everyone joined in round 3) is paired as in round 1.
    late = [E(e.id, e.rating, joined=3) for e in seeded(6)]
    assert pair_round(late, [], 3, late_points="half") == pair_round(seeded(6), [], 1)


def test_round_two_when_the_top_half_wins():
    # Worked by hand from C.04.3 (the published worked examples, such as the 14-player tournament of
    # FIDE's Arbiters' Manual, turn on FIDE's float rules from round 2 on, which this module leaves out):
    # after 1-5, 6-2, 3-7, 8-4 won by the top half, the 1-point group {1,2,3,4} pairs S1 {1,2} against
    # S2 {3,4}: 1-3 and 2-4, nobody met before. 1 and 3 both sat first, so both would sit second: the
    # higher-ranked 1 has their wish (E.4), 3-1. 2 and 4 both sat second: 2 sits first, 2-4. The same in
    # the 0-point group {5,6,7,8}: 5-7 (both sat second; 5 is higher-ranked and sits first) and 6-8 (both
    # sat first; 6 sits second), 8-6.
    games = [G(1, "p1", "p5", 1.0), G(1, "p6", "p2", 0.0), G(1, "p3", "p7", 1.0), G(1, "p8", "p4", 0.0)]
    assert pair_round(seeded(8), games, 2) == [("p3", "p1"), ("p2", "p4"), ("p5", "p7"), ("p8", "p6")]


def test_round_two_moves_down_a_pair_that_has_met():
    # Round 1: 1-4, 5-2, 3-6; 1 and 2 win, 3 and 6 draw. Round 2: the 1-point group pairs 1-2 (2 sat
    # second and 1 first, so both wishes are granted: 2-1). The ½-point group {3,6} has met: both move
    # down to the 0-point group {4,5}, where the moved-down players are paired first, S1 {3,6} against
    # S2 {4,5}: 3-4 and 6-5, nobody met before. Seats: 3 sat first and 4 second, so 4-3; 6 sat second and
    # 5 first, so 6-5. Boards: the 1-point board, then the ½-point ones by the higher-ranked's number.
    games = [G(1, "p1", "p4", 1.0), G(1, "p5", "p2", 0.0), G(1, "p3", "p6", 0.5)]
    assert pair_round(seeded(6), games, 2) == [("p2", "p1"), ("p4", "p3"), ("p6", "p5")]


def test_the_higher_ranked_by_score_has_their_seat():
    # FIDE ranks a pair by score before pairing number (C.04.3 A.2), and grants the higher-ranked
    # player's wish when both wish the same (E.4); pairing_core 0.4.1 asks the pairing number alone, and
    # would seat 4-1 and 2-3 here. Round 1: 1-3 drawn, 4-2 won by 4. Round 2: 4 (1 point) moves down to
    # {1,3}, who have met, and is paired with 1; 3 moves down to 2. 4 and 1 both sat first and both wish
    # to sit second: 4 has 1 point to 1's ½, so 1-4. 3 and 2 both sat second: 3 (½) sits first, 3-2.
    games = [G(1, "p1", "p3", 0.5), G(1, "p4", "p2", 1.0)]
    assert pair_round(seeded(4), games, 2) == [("p1", "p4"), ("p3", "p2")]


def test_seat_limits_give_way_to_a_new_opponent():
    # p1 and p4 sat first twice, p2 and p3 second twice: FIDE would have neither pair meet (each would
    # sit a third time in a row where they sat), but they are the only opponents left.
    games = [G(1, "p1", "p2"), G(1, "p4", "p3"), G(2, "p1", "p3"), G(2, "p4", "p2")]
    pairs = pair_round(seeded(4), games, 3)
    assert {frozenset(pair) for pair in pairs} == {frozenset(("p1", "p4")), frozenset(("p2", "p3"))}


def test_a_second_bye_only_when_nobody_else_can_take_it():
    # b and c have met and both had a bye; a joins in round 4 and has had none, but if a sat out, b and
    # c would meet again. So c (fewer points than b) has a second bye, and a plays b.
    field = [E("a", joined=4), E("b"), E("c"), E("d", withdrawn=True)]
    games = [G(1, "b", "c"), G(1, "d", None), G(2, "b", "d"), G(2, "c", None), G(3, "c", "d"), G(3, "b", None)]
    # b sat first in both games: they sit second now, and a (no games yet) first.
    assert pair_round(field, games, 4) == [("a", "b"), ("c", None)]


def test_a_round_nobody_can_be_paired_afresh_raises():
    games = [G(1, "p1", "p2")]
    with pytest.raises(SwissError, match="round 2 cannot be paired"):
        pair_round(seeded(2), games, 2)


def test_withdrawn_and_late_entrants():
    field = [*seeded(4), E("late", 2500.0, joined=2), E("gone", 2400.0, withdrawn=True)]
    first = pair_round(field, [], 1)
    assert {who for pair in first for who in pair if who} == {"p1", "p2", "p3", "p4"}
    games = [G(1, a, b, 1.0) for a, b in first]
    # Round 2 ("late" is number 1 now, "gone" is never paired): the winners p1 and p4 meet; with
    # late_points="half", "late" is on ½ point, above the losers p2 and p3. The bye goes to the loser with
    # the fewest rounds without a game and then the lowest rank, p3, and "late" moves down to meet p2.
    # Seats: p1 and p4 both sat first, p1 ranks higher and sits second; p2 sat second and sits first.
    assert pair_round(field, games, 2, late_points="half") == [("p4", "p1"), ("p2", "late"), ("p3", None)]
    half = {s.id: s for s in standings(field, games, late_points="half")}
    zero = {s.id: s for s in standings(field, games)}
    assert half["late"].points == 0.5 and zero["late"].points == 0.0
    assert half["late"].played == 0 and half["late"].byes == 0
    assert half["gone"].withdrawn and half["gone"].points == 0.0


# --- the standings ----------------------------------------------------------------------------------


def test_buchholz_and_sonneborn_berger_by_hand():
    # Five players, three rounds, a bye each round and one aborted match (B-C in round 2).
    #   R1: A-B 1-0, C-D ½-½, E bye      R2: E-A 0-1, B-C aborted, D bye      R3: C-E 1-0, D-A ½-½, B bye
    # Points: A 1+1+½ = 2½, B 0+0+1 = 1, C ½+0+1 = 1½, D ½+1+½ = 2, E 1+0+0 = 1.
    # Buchholz (byes and the aborted match add nothing): A = B+E+D = 1+1+2 = 4, B = A = 2½,
    #   C = D+E = 2+1 = 3, D = C+A = 1½+2½ = 4, E = A+C = 2½+1½ = 4.
    # Sonneborn-Berger: A = B+E+½D = 1+1+1 = 3, B = 0, C = ½D+E = 1+1 = 2, D = ½C+½A = ¾+1¼ = 2, E = 0.
    # Ranks: A 2½, D 2, C 1½, then E and B on 1, E first on Buchholz (4 to 2½).
    field = [E(x) for x in "ABCDE"]
    games = [
        G(1, "A", "B", 1.0),
        G(1, "C", "D", 0.5),
        G(1, "E", None, 1.0),
        G(2, "E", "A", 0.0),
        G(2, "B", "C", None),
        G(2, "D", None, 1.0),
        G(3, "C", "E", 1.0),
        G(3, "D", "A", 0.5),
        G(3, "B", None, None),  # a bye whose point was not written down is still a point
    ]
    assert standings(field, games) == [
        SwissStanding("A", 1, 2.5, 4.0, 3.0, played=3, wins=2, draws=1, losses=0, byes=0, withdrawn=False),
        SwissStanding("D", 2, 2.0, 4.0, 2.0, played=2, wins=0, draws=2, losses=0, byes=1, withdrawn=False),
        SwissStanding("C", 3, 1.5, 3.0, 2.0, played=2, wins=1, draws=1, losses=0, byes=0, withdrawn=False),
        SwissStanding("E", 4, 1.0, 4.0, 0.0, played=2, wins=0, draws=0, losses=2, byes=1, withdrawn=False),
        SwissStanding("B", 5, 1.0, 2.5, 0.0, played=1, wins=0, draws=0, losses=1, byes=1, withdrawn=False),
    ]


def test_sonneborn_berger_then_rating_then_id_break_ties():
    # A round robin of four: equal points mean equal Buchholz (everyone else's points), so
    # Sonneborn-Berger decides. R1: A-B ½, C-D 1-0; R2: A-C 1-0, B-D 1-0; R3: A-D 0-1, B-C ½.
    # A and C both have 1½ and Buchholz 4½; A's SB = ½B + C = 1 + 1½ = 2½, C's = D + ½B = 1 + 1 = 2:
    # A ranks above C, though C has the higher rating.
    field = [E("A", 1500.0), E("B", 1500.0), E("C", 1900.0), E("D", 1500.0)]
    games = [
        G(1, "A", "B", 0.5),
        G(1, "C", "D", 1.0),
        G(2, "A", "C", 1.0),
        G(2, "B", "D", 1.0),
        G(3, "A", "D", 0.0),
        G(3, "B", "C", 0.5),
    ]
    table = standings(field, games)
    assert [(s.id, s.points, s.buchholz, s.sonneborn_berger) for s in table] == [
        ("B", 2.0, 4.0, 2.5),  # ½A + D + ½C = ¾ + 1 + ¾
        ("A", 1.5, 4.5, 2.5),
        ("C", 1.5, 4.5, 2.0),
        ("D", 1.0, 5.0, 1.5),
    ]
    # With nothing played, rating (highest first) and then id order the table.
    assert [s.id for s in standings([E("b"), E("a"), E("c", 1600.0)], [])] == ["c", "a", "b"]


# --- inputs refused ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entrants", "games", "round_number", "message"),
    [
        ([E("a"), E("a")], [], 1, "'a' is entered twice"),
        (seeded(2), [], 0, "rounds are numbered from 1"),
        (seeded(2), [], -3, "rounds are numbered from 1"),
        (seeded(2), [], MAX_ROUNDS + 1, f"at most {MAX_ROUNDS} rounds"),
        (seeded(2), [G(1, "p1", "p2", 0.25)], 2, "has the result 0.25"),
        (seeded(2), [G(1, "p1", "p2", 2.0)], 2, "has the result 2.0"),
        (seeded(2), [G(1, "p1", "p2", True)], 2, "has the result True"),
        (seeded(2), [G(1, "p1", "zed", 1.0)], 2, "names 'zed', who is not an entrant"),
        (seeded(2), [G(1, "zed", None, 1.0)], 2, "names 'zed', who is not an entrant"),
        (seeded(2), [G(1, "p1", None, 0.5)], 2, "a bye is a win"),
        (seeded(2), [G(1, "p1", None, 0.0)], 2, "a bye is a win"),
        (seeded(2), [G(2, "p1", "p2", 1.0)], 2, "must all be of earlier rounds"),
        (seeded(2), [G(3, "p1", "p2", 1.0)], 2, "must all be of earlier rounds"),
        (seeded(2), [G(1, "p1", "p1", 1.0)], 2, "pairs 'p1' with themselves"),
        (seeded(3), [G(1, "p1", "p2"), G(1, "p3", "p1")], 2, "'p1' has two games in round 1"),
        ([E("a"), E("b", joined=2)], [G(1, "a", "b")], 2, "'b' plays in round 1, before joining in round 2"),
        ([E("a"), E("b", joined=0)], [], 1, "joins in round 0"),
        ([E("a"), E("b", rating=math.nan)], [], 1, "a rating is a finite number"),
        ([E(f"e{i}") for i in range(MAX_ENTRANTS + 1)], [], 1, f"at most {MAX_ENTRANTS}"),
    ],
)
def test_inconsistent_input_is_refused_by_name(entrants, games, round_number, message):
    with pytest.raises(SwissError, match=message):
        pair_round(entrants, games, round_number)


@pytest.mark.parametrize(
    ("entrants", "games", "message"),
    [
        ([E("a"), E("a")], [], "'a' is entered twice"),
        (seeded(2), [G(1, "p1", "p2", 0.3)], "has the result 0.3"),
        (seeded(2), [G(1, "p1", "nobody")], "who is not an entrant"),
        (seeded(2), [G(1, "p1", None, 0.5)], "a bye is a win"),
        (seeded(2), [G(MAX_ROUNDS + 1, "p1", "p2")], f"rounds run from 1 to {MAX_ROUNDS}"),
        (seeded(2), [G(0, "p1", "p2")], f"rounds run from 1 to {MAX_ROUNDS}"),
        ([E(f"e{i}") for i in range(MAX_ENTRANTS + 1)], [], f"at most {MAX_ENTRANTS}"),
    ],
)
def test_standings_refuse_inconsistent_input(entrants, games, message):
    with pytest.raises(SwissError, match=message):
        standings(entrants, games)


def test_late_points_must_be_zero_or_half():
    with pytest.raises(SwissError, match="late_points is 'some'"):
        pair_round(seeded(2), [], 1, late_points="some")
    with pytest.raises(SwissError, match="late_points is 'some'"):
        standings(seeded(2), [], late_points="some")


def test_swiss_error_is_a_value_error():
    assert issubclass(SwissError, ValueError)
