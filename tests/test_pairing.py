"""Quick pairing (koikoi.web.pairing): closest ratings, windows that widen with waiting, nobody twice."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from koikoi.web.pairing import POOLS, WINDOW_MAX, Waiting, category_of, pair, window


def w(entry: str, rating: float, since: float = 0.0, person: str | None = None, rd: float = 50.0) -> Waiting:
    return Waiting(entry, person or entry, rating, rd, since)


def test_closest_ratings_are_paired():
    got = pair([w("a", 1500), w("b", 1900), w("c", 1520), w("d", 1880)], now=0.0)
    assert {frozenset((x.entry, y.entry)) for x, y in got} == {frozenset("ac"), frozenset("bd")}


def test_a_gap_too_wide_waits_until_the_windows_widen():
    players = [w("a", 1500), w("b", 1800)]
    assert pair(players, now=0.0) == []  # 300 apart: beyond a fresh 125-point window
    assert window(players[0], 0.0) < 300 <= window(players[0], 4.0)
    assert len(pair(players, now=4.0)) == 1


def test_an_uncertain_rating_is_paired_more_widely():
    assert window(w("new", 1500, rd=500), 0.0) > window(w("old", 1500, rd=50), 0.0)


def test_nobody_plays_themselves():
    tabs = [w("tab1", 1500, person="ann"), w("tab2", 1500, person="ann")]
    assert pair(tabs, now=100.0) == []
    got = pair([*tabs, w("bob", 1500)], now=0.0)
    assert len(got) == 1 and {got[0][0].person, got[0][1].person} == {"ann", "bob"}


def test_the_longest_waiting_is_served_first():
    # b waited longest; a and c are both 10 from b: b gets one of them, and the third waits.
    got = pair([w("a", 1490, since=5), w("b", 1500, since=0), w("c", 1510, since=5)], now=5.0)
    assert len(got) == 1 and got[0][0].entry == "b"


def test_the_pools():
    assert {p.key for p in POOLS.values()} == {"nintendo-3", "nintendo-12", "bga-6", "wikipedia-6"}
    assert category_of(1) == category_of(3) == "short" and category_of(6) == category_of(12) == "long"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(800, 2600), st.integers(0, 30), st.integers(0, 5), st.integers(45, 500)),
        max_size=40,
    ),
    st.integers(0, 40),
)
def test_each_player_is_paired_at_most_once_and_within_a_window(raw, now):
    waiting = [w(f"e{i}", r, since=s, person=f"p{p}", rd=rd) for i, (r, s, p, rd) in enumerate(raw)]
    got = pair(waiting, now=float(now))
    seen = [x.entry for couple in got for x in couple]
    assert len(seen) == len(set(seen))
    for a, b in got:
        assert a.person != b.person
        assert abs(a.rating - b.rating) <= max(window(a, now), window(b, now)) <= WINDOW_MAX
    # Nobody left waiting could have been paired with another left waiting.
    left = [x for x in waiting if x.entry not in set(seen)]
    for i, a in enumerate(left):
        for b in left[i + 1 :]:
            fits = abs(a.rating - b.rating) <= max(window(a, now), window(b, now))
            assert not (fits and a.person != b.person), (a, b)


def test_a_big_wave_pairs_nearly_everyone_with_someone_close():
    rng = random.Random(7)
    waiting = [w(f"e{i}", rng.gauss(1500, 200), since=rng.uniform(0, 2)) for i in range(1000)]
    got = pair(waiting, now=2.0)
    assert len(got) >= 495  # a few at the far ends may wait for their windows to widen
    assert max(abs(a.rating - b.rating) for a, b in got) < 200
