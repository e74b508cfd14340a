"""Glicko-2 ratings (koikoi.glicko2): Glickman's worked example, lichess's own test figures, agreement
with the `glicko2` package from PyPI, and the properties rated play relies on."""

from __future__ import annotations

import dataclasses
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from koikoi.glicko2 import (
    CONVERGENCE_TOLERANCE,
    GLICKMAN,
    LICHESS,
    SCALE,
    Parameters,
    Rating,
    as_of,
    new_player,
    on_leaderboard_at,
    provisional_at,
    rate_game,
    rd_as_of,
    update,
)

DAY = 86_400.0
T0 = 1_700_000_000.0  # any timestamp will do; the module never reads a clock

# --- Glickman's worked example ----------------------------------------------------------------------

# "Example of the Glicko-2 system": a 1500/200/0.06 player, τ = 0.5, beats 1400/30 and loses to
# 1550/100 and 1700/300 (the opponents' volatilities do not enter the player's update).
EXAMPLE_PLAYER = Rating(1500, 200, 0.06)
EXAMPLE_GAMES = [(Rating(1400, 30, 0.06), 1.0), (Rating(1550, 100, 0.06), 0.0), (Rating(1700, 300, 0.06), 0.0)]


@pytest.mark.parametrize(
    "params, tau",
    [
        (GLICKMAN, None),  # the paper's values, nothing bounded
        (dataclasses.replace(LICHESS, tau=0.5), None),  # lichess's bounds (RD 45..500, σ ≤ 0.1) do not bite
        (LICHESS, 0.5),  # τ given to this one update
    ],
)
def test_glickmans_worked_example(params, tau):
    new = update(EXAMPLE_PLAYER, EXAMPLE_GAMES, params, tau=tau)
    # The paper prints μ' = -0.2069, φ' = 0.8722 and σ' = 0.05999 on the Glicko-2 scale ...
    assert round((new.rating - 1500) / SCALE, 4) == -0.2069
    assert round(new.rd / SCALE, 4) == 0.8722
    assert abs(new.volatility - 0.05999) < 0.00001  # 0.0599960 exactly; the paper cuts it to 5 places
    # ... and r' = 1464.06, RD' = 151.52. It converts the rounded μ', so the exact 1464.0507 is 0.01 off.
    assert new.rating == pytest.approx(1464.06, abs=0.01)
    assert round(new.rd, 2) == 151.52
    assert new.games == 3 and new.updated_at is None


# --- lichess's figures -------------------------------------------------------------------------------

# scalachess, rating/src/test/scala/glicko/impl/RatingCalculatorTest.scala (the calculator lila rates
# games with): one game, τ = 0.75, no time added; each case is (white, black, outcome) and the expected
# (rating, RD, volatility) of white and of black with lichess's own tolerances.
LICHESS_CASES = [
    ((1500, 500, 0.09), (1500, 500, 0.09), 1.0, (1741, 396, 0.0899983), (1258, 396, 0.0899983), (1, 1, 1e-7)),
    ((1500, 500, 0.09), (1500, 500, 0.09), 0.5, (1500, 396, 0.0899954), (1500, 396, 0.0899954), (1, 1, 1e-7)),
    ((1500, 80, 0.06), (1500, 80, 0.06), 1.0, (1517, 78, 0.06), (1482, 78, 0.06), (1, 1, 1e-5)),
    ((1400, 79, 0.06), (1550, 110, 0.065), 1.0, (1422, 77, 0.06), (1506, 105, 0.065), (1, 1, 1e-5)),
    ((1400, 79, 0.06), (1550, 110, 0.065), 0.0, (1389, 78, 0.06), (1568, 105, 0.065), (1, 1, 1e-5)),
    ((1200, 60, 0.053), (1850, 200, 0.062), 1.0, (1216.7, 59.9, 0.053013), (1636, 196.9, 0.062028), (0.1, 0.1, 1e-6)),
    ((1200, 60, 0.053), (1850, 200, 0.062), 0.0, (1199.3, 59.9, 0.052999), (1855.4, 196.9, 0.061999), (0.1, 0.1, 1e-6)),
    (
        (1200, 60, 0.053),
        (1850, 200, 0.062),
        0.5,
        (1208.0, 59.9, 0.053002),
        (1745.7, 196.98729, 0.062006),
        (0.1, 0.1, 1e-6),
    ),
]


@pytest.mark.parametrize("white, black, score, want_white, want_black, tolerances", LICHESS_CASES)
def test_lichess_rates_a_game_the_same(white, black, score, want_white, want_black, tolerances):
    got = rate_game(Rating(*white), Rating(*black), score, LICHESS, T0)
    for new, want in zip(got, (want_white, want_black)):
        for value, expected, tolerance in zip((new.rating, new.rd, new.volatility), want, tolerances):
            assert abs(value - expected) <= tolerance + 1e-9


def test_lichess_rd_goes_from_60_to_110_in_a_year():
    # The stated reason for lila's 0.21436 rating periods a day, for a typical volatility of 0.06.
    assert rd_as_of(Rating(1500, 60, 0.06, updated_at=T0), T0 + 365 * DAY) == pytest.approx(110, abs=0.05)


def test_a_new_player_is_lichess_s():
    player = new_player()
    assert (player.rating, player.rd, player.volatility, player.games, player.updated_at) == (1500, 500, 0.09, 0, None)
    assert player.provisional and not player.on_leaderboard


# --- agreement with the glicko2 package from PyPI ----------------------------------------------------

# glicko2 2.1.0 (Ryan Kirkman's, in the `test` extra) follows the same paper: the Illinois iteration of
# the 2012 revision (not the 2005 Newton iteration), the same ε = 0.000001, the same "≤ 0" test, step 6
# with the new volatility. But its f(x) in step 5 has μ² (its `__rating`) where the paper has φ², so its
# new volatility differs from the paper's whenever μ² ≠ φ², by as much as 0.01 (and the rating by points).
# So we compare in two ways, each to a tolerance a float rounding fits:
# - against the package with that one function corrected (everything else is the package's own code);
# - against the unmodified package on players whose μ² equals φ² (a rating of 1500 ± RD), where the
#   package's f is the paper's.
pkg = pytest.importorskip("glicko2", reason="the glicko2 package (in the test extra) is the reference")


class PaperPlayer(pkg.Player):
    """The package's player with step 5's f(x) as the paper writes it (φ², not μ²)."""

    def _f(self, x, delta, v, a):
        ex = math.exp(x)
        phi2 = self._Player__rd**2
        return ex * (delta**2 - phi2 - v - ex) / (2 * (phi2 + v + ex) ** 2) - (x - a) / self._tau**2


def package_update(cls, player, games, tau):
    reference = cls(player.rating, player.rd, player.volatility)
    reference._tau = tau  # the package's τ is a class attribute, 0.5 unless set
    if games:
        reference.update_player([o.rating for o, _ in games], [o.rd for o, _ in games], [s for _, s in games])
    else:
        reference.did_not_compete()
    return reference


def assert_agree(ours, theirs):
    # Both run the same iteration to the same ε and usually agree to float rounding (1e-12). But step
    # 5 stops once the bracket on ln σ'² is narrower than ε and returns one end of it, so σ' is only
    # defined to within ε of the root in ln σ'² (a relative ε in σ'): when f(C) comes within rounding
    # of 0, inputs that differ in the last bit (the package computes v and Δ in another order) can end
    # on the other side, up to 2ε apart in ln σ'². The RD and rating follow σ' much less than that.
    assert ours.volatility == pytest.approx(theirs.vol, rel=2 * CONVERGENCE_TOLERANCE)
    assert ours.rd == pytest.approx(theirs.rd, rel=2 * CONVERGENCE_TOLERANCE)
    assert ours.rating == pytest.approx(theirs.rating, abs=0.001)


ratings = st.floats(600, 2800)
rds = st.floats(30, 500)
volatilities = st.floats(0.02, 0.15)
taus = st.sampled_from([0.3, 0.5, 0.75, 1.0, 1.2])
scores = st.sampled_from([0.0, 0.5, 1.0])
players = st.builds(Rating, ratings, rds, volatilities)
periods = st.lists(st.tuples(players, scores), min_size=0, max_size=20)


@settings(max_examples=300, deadline=None)
@given(players, periods, taus)
def test_agrees_with_the_package_as_the_paper_writes_it(player, games, tau):
    assert_agree(update(player, games, GLICKMAN, tau=tau), package_update(PaperPlayer, player, games, tau))


def test_agrees_with_the_package_on_many_seeded_rating_periods():
    rng = random.Random(20240601)
    for _ in range(5000):
        tau = rng.uniform(0.2, 1.5)
        player = Rating(rng.uniform(0, 4000), rng.uniform(5, 800), rng.uniform(0.005, 0.3))
        games = [
            (Rating(rng.uniform(0, 4000), rng.uniform(5, 800), rng.uniform(0.005, 0.3)), rng.choice([0.0, 0.5, 1.0]))
            for _ in range(rng.randint(0, 40))
        ]
        assert_agree(update(player, games, GLICKMAN, tau=tau), package_update(PaperPlayer, player, games, tau))


@settings(max_examples=200, deadline=None)
@given(rds, st.sampled_from([-1, 1]), volatilities, periods, taus)
def test_agrees_with_the_unmodified_package_where_its_f_is_the_papers(rd, side, volatility, games, tau):
    player = Rating(1500 + side * rd, rd, volatility)  # μ² = φ²
    assert_agree(update(player, games, GLICKMAN, tau=tau), package_update(pkg.Player, player, games, tau))


def test_the_unmodified_package_differs_where_the_volatility_moves():
    # A 2200 player loses ten games to 1400s: the paper's volatility jumps to 0.0712; the package's f
    # barely moves it (0.0611). This pins down why the comparisons above correct it.
    player, games = Rating(2200, 50, 0.06), [(Rating(1400, 50, 0.06), 0.0)] * 10
    ours = update(player, games, GLICKMAN, tau=1.2)
    assert ours.volatility == pytest.approx(0.071191, abs=1e-6)
    assert package_update(pkg.Player, player, games, 1.2).vol == pytest.approx(0.061111, abs=1e-6)
    assert_agree(ours, package_update(PaperPlayer, player, games, 1.2))


def test_the_unmodified_package_reproduces_the_worked_example_too():
    assert_agree(
        update(EXAMPLE_PLAYER, EXAMPLE_GAMES, GLICKMAN), package_update(PaperPlayer, EXAMPLE_PLAYER, EXAMPLE_GAMES, 0.5)
    )
    theirs = package_update(pkg.Player, EXAMPLE_PLAYER, EXAMPLE_GAMES, 0.5)
    assert (round(theirs.rating, 2), round(theirs.rd, 2), round(theirs.vol, 5)) == (1464.05, 151.52, 0.05999)


# --- properties --------------------------------------------------------------------------------------

lichess_players = st.builds(
    Rating,
    st.floats(900, 2800),
    st.floats(LICHESS.min_rd, LICHESS.max_rd),
    st.floats(0.02, LICHESS.max_volatility),
    st.integers(0, 10_000),
    st.one_of(st.none(), st.floats(T0 - 3000 * DAY, T0)),
)
both_modes = st.sampled_from([None, T0])


@settings(max_examples=200, deadline=None)
@given(lichess_players, st.lists(st.tuples(lichess_players, scores), max_size=15), both_modes)
def test_the_rd_stays_within_lichess_s_bounds(player, games, now):
    new = update(player, games, LICHESS, now=now)
    assert LICHESS.min_rd <= new.rd <= LICHESS.max_rd
    assert new.volatility <= LICHESS.max_volatility
    assert LICHESS.min_rd <= rd_as_of(new, T0 + 10_000 * DAY) <= LICHESS.max_rd


@settings(max_examples=200, deadline=None)
@given(lichess_players, lichess_players, both_modes)
def test_a_win_never_lowers_a_rating_and_a_loss_never_raises_it(player, opponent, now):
    assert update(player, [(opponent, 1)], LICHESS, now=now).rating >= player.rating
    assert update(player, [(opponent, 0)], LICHESS, now=now).rating <= player.rating
    assert update(player, [(opponent, 1)], GLICKMAN, now=now).rating > player.rating
    assert update(player, [(opponent, 0)], GLICKMAN, now=now).rating < player.rating


@settings(max_examples=200, deadline=None)
@given(lichess_players, st.floats(0, 5000), st.floats(0, 5000))
def test_inactivity_only_grows_the_rd(player, days, more_days):
    now = T0 + days * DAY
    assert rd_as_of(player, now) >= player.rd
    assert rd_as_of(player, now + more_days * DAY) >= rd_as_of(player, now)
    idle = update(player, [], LICHESS, now=now)
    assert (idle.rating, idle.volatility, idle.games) == (player.rating, player.volatility, player.games)
    assert idle.rd == rd_as_of(player, now)
    # Growing in two steps gives what one step over the whole time gives.
    assert rd_as_of(as_of(player, now), now + more_days * DAY) == pytest.approx(rd_as_of(player, now + more_days * DAY))
    # The paper's rating period without games: only step 6, φ' = sqrt(φ² + σ²).
    assert update(player, [], GLICKMAN).rd == pytest.approx(math.hypot(player.rd, player.volatility * SCALE))


def test_no_time_passes_for_a_rating_that_does_not_follow_the_clock():
    player = Rating(1500, 60, 0.06)
    assert rd_as_of(player, T0 + 1000 * DAY) == 60
    assert as_of(player, T0) == player
    # A rated game (or an update at a time) starts its clock.
    assert update(player, [(player, 1)], LICHESS, now=T0).updated_at == T0
    assert update(player, [], LICHESS, now=T0) == dataclasses.replace(player, updated_at=T0)
    # A clock that stepped back counts as no time.
    assert rd_as_of(Rating(1500, 60, 0.06, updated_at=T0), T0 - DAY) == 60


def test_provisional_and_leaderboard_as_of_a_time():
    player = Rating(1500, 60, 0.06, updated_at=T0)
    assert player.on_leaderboard and not player.provisional
    assert on_leaderboard_at(player, T0 + 30 * DAY) and not provisional_at(player, T0 + 30 * DAY)
    assert not on_leaderboard_at(player, T0 + 120 * DAY)  # RD ≈ 79 after four months away
    assert provisional_at(player, T0 + 366 * DAY)
    assert Rating(1500, 110, 0.06).provisional and not Rating(1500, 109.9, 0.06).provisional
    assert Rating(1500, 75, 0.06).on_leaderboard and not Rating(1500, 75.1, 0.06).on_leaderboard


@settings(max_examples=200, deadline=None)
@given(lichess_players, lichess_players, scores)
def test_a_rated_game_updates_both_sides_from_their_pre_game_ratings(a, b, score):
    new_a, new_b = rate_game(a, b, score, LICHESS, T0)
    assert new_a == update(a, [(b, score)], LICHESS, now=T0)
    assert new_b == update(b, [(a, 1 - score)], LICHESS, now=T0)
    assert (new_a.games, new_b.games) == (a.games + 1, b.games + 1)
    assert new_a.updated_at == new_b.updated_at == T0
    # Which side is "a" does not matter.
    assert rate_game(b, a, 1 - score, LICHESS, T0) == (new_b, new_a)


@settings(max_examples=200, deadline=None)
@given(st.floats(900, 2800), st.floats(900, 2800), rds, volatilities, scores)
def test_equal_rds_make_a_game_zero_sum(rating_a, rating_b, rd, volatility, score):
    a, b = Rating(rating_a, rd, volatility), Rating(rating_b, rd, volatility)
    new_a, new_b = rate_game(a, b, score, LICHESS, T0)
    assert new_a.rating - a.rating == pytest.approx(b.rating - new_b.rating, abs=1e-9)
    assert new_a.rd == pytest.approx(new_b.rd) and new_a.volatility == pytest.approx(new_b.volatility)


def test_a_draw_between_equals_changes_no_rating():
    a = Rating(1620, 90, 0.06, 40, T0 - DAY)
    new_a, new_b = rate_game(a, a, 0.5, LICHESS, T0)
    assert new_a == new_b and new_a.rating == 1620 and new_a.rd < rd_as_of(a, T0)


def test_lichess_s_bounds_on_rating():
    # One game can move a rating by at most max_rating_change, and no rating goes under min_rating.
    tight = dataclasses.replace(LICHESS, max_rating_change=10)
    assert update(new_player(), [(new_player(), 1)], tight).rating == 1510
    low = Rating(410, 300, 0.09)
    assert update(low, [(Rating(410, 45, 0.06), 0)], LICHESS).rating == 400


def test_ratings_are_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        new_player().rating = 2000  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        LICHESS.tau = 0.5  # type: ignore[misc]


# --- bad input -----------------------------------------------------------------------------------------

GOOD = Rating(1500, 200, 0.06)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: Rating(1500, -1, 0.06), "rd must be positive"),
        (lambda: Rating(1500, 0, 0.06), "rd must be positive"),
        (lambda: Rating(math.nan, 200, 0.06), "rating must be a number, got NaN"),
        (lambda: Rating(math.inf, 200, 0.06), "rating must be finite"),
        (lambda: Rating(1500, 200, 0), "volatility must be positive"),
        (lambda: Rating(1500, 200, "0.06"), "volatility must be a number"),
        (lambda: Rating(1500, 200, 0.06, games=-1), "games must be a whole number"),
        (lambda: Rating(1500, 200, 0.06, games=1.5), "games must be a whole number"),
        (lambda: Rating(1500, 200, 0.06, updated_at=math.nan), "updated_at must be a number"),
        (lambda: update(GOOD, [(GOOD, 2)]), "score of results\\[0\\] must be 1 \\(a win\\), 0.5 \\(a draw\\) or 0"),
        (lambda: update(GOOD, [(GOOD, 0.25)]), "must be 1 \\(a win\\), 0.5"),
        (lambda: update(GOOD, [(GOOD, math.nan)]), "must be 1 \\(a win\\), 0.5"),
        (lambda: update(GOOD, [(GOOD, True)]), "must be 1 \\(a win\\), 0.5"),
        (lambda: update(GOOD, [(GOOD, "1")]), "must be 1 \\(a win\\), 0.5"),
        (lambda: update(GOOD, [GOOD]), "results\\[0\\] must be an \\(opponent Rating, score\\) pair"),
        (lambda: update(GOOD, [((1500, 200, 0.06), 1)]), "results\\[0\\] must be an \\(opponent Rating, score\\) pair"),
        (lambda: update(GOOD, "won"), "results must be a sequence"),
        (lambda: update(GOOD, [], tau=0), "tau must be positive"),
        (lambda: update(GOOD, [], now=math.nan), "now must be a number, got NaN"),
        (lambda: update((1500, 200, 0.06), []), "player must be a Rating"),
        (lambda: update(GOOD, [(Rating(1e9, 30, 0.06), 1)]), "too far apart for the games to carry any information"),
        (lambda: rate_game(GOOD, GOOD, -1, LICHESS, T0), "score_a must be 1 \\(a win\\)"),
        (lambda: rate_game(GOOD, GOOD, 1, LICHESS, math.inf), "now must be finite"),
        (lambda: rd_as_of(GOOD, None), "now must be a number"),
        (lambda: Parameters(tau=-0.5), "tau must be positive"),
        (lambda: Parameters(min_rd=60, max_rd=50), "need 0 <= min_rd <= max_rd"),
        (lambda: Parameters(start_rd=600), "start_rd 600 is outside"),
        (lambda: Parameters(rating_periods_per_day=-1), "rating_periods_per_day must not be negative"),
        (lambda: Parameters(max_volatility=math.nan), "max_volatility must be a number, got NaN"),
    ],
)
def test_bad_input_raises_a_value_error_naming_the_problem(make, message):
    with pytest.raises(ValueError, match=message):
        make()
