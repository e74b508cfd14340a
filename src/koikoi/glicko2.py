"""Glicko-2 ratings for rated online games: Glickman's algorithm exactly, with lichess's parameters.

Rated games need a rating that says how sure it is. Glicko-2 gives each player a rating, a rating
deviation (RD: how uncertain the rating is) and a volatility (how erratic the player's results are),
and this module computes it exactly as Mark E. Glickman's "Example of the Glicko-2 system" (Boston
University, 2012, revised 2022) lays it out, steps 1 to 8, with the Illinois algorithm for the new
volatility. The parameters are lichess's (lila, ``modules/rating/src/main/Glicko.scala``): players start
at 1500 with RD 500 and volatility 0.09, τ is 0.75, RD stays within [45, 500], and a rating with RD 110
or more is provisional. ``docs/ratings.md`` says where each number comes from.

The paper updates everyone at the end of a *rating period* (a week, a month) from the games played in
it. An online server rates each game as it ends, so it follows lichess instead: each game is a rating
period of its own that adds no time (lila calls it with ``skipDeviationIncrease = true``), and the
time between games enters as a fractional number of rating periods that grows the RD before the
game. ``update`` does either: without ``now`` it is the paper's rating period; with ``now`` (a
timestamp in seconds) it is lichess's game-by-game update.

Everything here is pure (no clock, no I/O) and uses only the standard library; ratings are immutable.

>>> a, b = new_player(), new_player()
>>> a2, b2 = rate_game(a, b, 1, LICHESS, now=1_700_000_000.0)
>>> round(a2.rating), round(a2.rd), round(b2.rating), a2.games
(1741, 397, 1259, 1)
>>> a2.provisional
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Real

__all__ = [
    "SCALE",
    "CONVERGENCE_TOLERANCE",
    "PROVISIONAL_RD",
    "LEADERBOARD_RD",
    "RATING_PERIODS_PER_DAY",
    "Parameters",
    "LICHESS",
    "GLICKMAN",
    "Rating",
    "new_player",
    "rd_as_of",
    "as_of",
    "provisional_at",
    "on_leaderboard_at",
    "update",
    "rate_game",
]

# Steps 2 and 8 of the paper: the Glicko-2 scale is the Glicko scale centred on 1500 and divided by
# 173.7178 (= 400 / ln 10), so that a rating difference becomes a logistic log-odds.
SCALE = 173.7178
CENTRE = 1500.0
# Step 5: the Illinois iteration stops when the bracket around ln σ'² is narrower than ε.
CONVERGENCE_TOLERANCE = 0.000001
# The iteration converges in a handful of steps for any real input; the cap (lila's ITERATION_MAX) only
# turns a bug or a broken float into an error instead of a hung request.
_MAX_ITERATIONS = 1000

# lila, modules/rating/src/main/Glicko.scala: `provisionalDeviation = 110` (the "?" after a rating) and
# `standardRankableDeviation = 75` (who may appear on a leaderboard).
PROVISIONAL_RD = 110.0
LEADERBOARD_RD = 75.0
# lila, modules/rating/src/main/Glicko.scala: `ratingPeriodsPerDay = 0.21436`, "chosen so a typical
# player's RD goes from 60 -> 110 in 1 year" (with volatility 0.06). One rating period is thus about
# 4.67 days; lila counts the periods since the last game fractionally, to the millisecond.
RATING_PERIODS_PER_DAY = 0.21436
_SECONDS_PER_DAY = 86_400.0


def _number(name: str, value: object) -> float:
    """``value`` as a float that is not NaN (infinities pass; the caller decides), or a ValueError."""
    # bool is an int to Python, but a True where a number belongs is a mistake, not a 1.
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    result = float(value)
    if math.isnan(result):
        raise ValueError(f"{name} must be a number, got NaN")
    return result


def _finite(name: str, value: object) -> float:
    result = _number(name, value)
    if math.isinf(result):
        raise ValueError(f"{name} must be finite, got {result}")
    return result


def _positive(name: str, value: object) -> float:
    result = _finite(name, value)
    if result <= 0:
        raise ValueError(f"{name} must be positive, got {result}")
    return result


@dataclass(frozen=True)
class Parameters:
    """The constants of a rating system. The defaults are lichess's; ``GLICKMAN`` is the paper's.

    ``min_rd``/``max_rd`` bound every RD this module produces; ``max_volatility``, ``min_rating`` and
    ``max_rating_change`` (per update) bound the rest, as lila's ``Glicko.cap`` and
    ``Perf.addOrReset`` do. ``float('inf')`` (or ``-inf`` for ``min_rating``) turns a bound off.
    """

    start_rating: float = 1500.0
    start_rd: float = 500.0  # lila `maxDeviation`: a new player is as uncertain as anyone can be
    start_volatility: float = 0.09  # lila `defaultVolatility`
    tau: float = 0.75  # lila `tau`; Glickman suggests 0.3 to 1.2
    min_rd: float = 45.0  # lila `minDeviation`: nobody is ever certain
    max_rd: float = 500.0  # lila `maxDeviation`
    max_volatility: float = 0.1  # lila `maxVolatility`: "past this, it might not stabilize ever again"
    min_rating: float = 400.0  # lila `minRating`
    max_rating_change: float = 700.0  # lila `maxRatingDelta`: the most one update (game) moves a rating
    provisional_rd: float = PROVISIONAL_RD
    leaderboard_rd: float = LEADERBOARD_RD
    rating_periods_per_day: float = RATING_PERIODS_PER_DAY

    def __post_init__(self) -> None:
        for name in ("min_rd", "max_rd", "max_volatility", "min_rating", "max_rating_change"):
            _number(name, getattr(self, name))  # an infinite bound is no bound
        _finite("start_rating", self.start_rating)
        _positive("start_rd", self.start_rd)
        _positive("start_volatility", self.start_volatility)
        _positive("tau", self.tau)
        _positive("provisional_rd", self.provisional_rd)
        _positive("leaderboard_rd", self.leaderboard_rd)
        if _finite("rating_periods_per_day", self.rating_periods_per_day) < 0:
            raise ValueError(f"rating_periods_per_day must not be negative, got {self.rating_periods_per_day}")
        if not 0 <= self.min_rd <= self.max_rd:
            raise ValueError(f"need 0 <= min_rd <= max_rd, got min_rd={self.min_rd}, max_rd={self.max_rd}")
        if not self.min_rd <= self.start_rd <= self.max_rd:
            raise ValueError(f"start_rd {self.start_rd} is outside [min_rd, max_rd] = [{self.min_rd}, {self.max_rd}]")
        if self.start_volatility > self.max_volatility:
            raise ValueError(f"start_volatility {self.start_volatility} is above max_volatility {self.max_volatility}")
        if self.start_rating < self.min_rating:
            raise ValueError(f"start_rating {self.start_rating} is below min_rating {self.min_rating}")
        if self.max_rating_change <= 0:
            raise ValueError(f"max_rating_change must be positive, got {self.max_rating_change}")


LICHESS = Parameters()
# The paper's own values (an unrated player is 1500/350/0.06; the example uses τ = 0.5) with none of
# lichess's bounds: what the worked example and other plain Glicko-2 implementations compute.
GLICKMAN = Parameters(
    start_rd=350.0,
    start_volatility=0.06,
    tau=0.5,
    min_rd=0.0,
    max_rd=math.inf,
    max_volatility=math.inf,
    min_rating=-math.inf,
    max_rating_change=math.inf,
)


@dataclass(frozen=True)
class Rating:
    """One player's rating on the Glicko scale (the scale players see, centred on 1500).

    ``games`` counts rated games; ``updated_at`` is the timestamp (seconds, as ``time.time()``) the RD
    was last brought up to date, or None for ratings that do not follow the clock (the paper's rating
    periods, or a new player). Construction checks every field and raises ValueError.
    """

    rating: float
    rd: float
    volatility: float
    games: int = 0
    updated_at: float | None = None

    def __post_init__(self) -> None:
        # Stored as floats, so that equal ratings compare, hash and serialise alike whether an int or
        # a float came in.
        object.__setattr__(self, "rating", _finite("rating", self.rating))
        object.__setattr__(self, "rd", _positive("rd", self.rd))
        object.__setattr__(self, "volatility", _positive("volatility", self.volatility))
        if isinstance(self.games, bool) or not isinstance(self.games, int) or self.games < 0:
            raise ValueError(f"games must be a whole number >= 0, got {self.games!r}")
        if self.updated_at is not None:
            object.__setattr__(self, "updated_at", _finite("updated_at", self.updated_at))

    @property
    def provisional(self) -> bool:
        """True while the stored RD is at least lichess's 110 (shown with a "?"). Time since
        ``updated_at`` is not counted here: ``provisional_at`` counts it."""
        return self.rd >= PROVISIONAL_RD

    @property
    def on_leaderboard(self) -> bool:
        """True when the stored RD is at most lichess's 75, sure enough for a leaderboard (see
        ``on_leaderboard_at`` for the RD as of a given time)."""
        return self.rd <= LEADERBOARD_RD


def new_player(params: Parameters = LICHESS) -> Rating:
    """The rating a player starts with."""
    return Rating(params.start_rating, params.start_rd, params.start_volatility)


def _elapsed_periods(player: Rating, now: float, params: Parameters) -> float:
    if player.updated_at is None:
        return 0.0
    # A wall clock that stepped back (an NTP correction) counts as no time: an RD never shrinks with time.
    seconds = max(0.0, now - player.updated_at)
    return seconds / _SECONDS_PER_DAY * params.rating_periods_per_day


def rd_as_of(player: Rating, now: float, params: Parameters = LICHESS) -> float:
    """The player's RD at time ``now``, grown by inactivity since ``updated_at``; what to display.

    On the Glicko-2 scale φ' = sqrt(φ² + σ²·t), t the rating periods elapsed (fractional), bounded to
    [min_rd, max_rd]: the paper's step 6 (and Glicko's RD rule) for t periods, as lila's
    ``liveDeviation`` computes it.
    """
    now = _finite("now", now)
    # Worked on the Glicko scale (φ = RD/SCALE, so σ²·t becomes (σ·SCALE)²·t): no time then gives the
    # stored RD back exactly, and more time never a smaller RD, rounding included.
    growth = (player.volatility * SCALE) ** 2 * _elapsed_periods(player, now, params)
    grown = math.sqrt(player.rd * player.rd + growth)
    return min(params.max_rd, max(params.min_rd, grown))


def as_of(player: Rating, now: float, params: Parameters = LICHESS) -> Rating:
    """The player's rating at time ``now``: the RD grown by inactivity (``rd_as_of``), the clock moved
    on to ``now``. Growing in two steps gives the RD that one step over the whole time gives. A rating
    that does not follow the clock (``updated_at`` None) is returned as it is."""
    now = _finite("now", now)
    if player.updated_at is None:
        return player
    rd = rd_as_of(player, now, params)
    return Rating(player.rating, rd, player.volatility, player.games, max(now, player.updated_at))


def provisional_at(player: Rating, now: float, params: Parameters = LICHESS) -> bool:
    """Whether the rating is provisional at ``now`` (its RD grows while the player is away)."""
    return rd_as_of(player, now, params) >= params.provisional_rd


def on_leaderboard_at(player: Rating, now: float, params: Parameters = LICHESS) -> bool:
    """Whether the rating is sure enough for a leaderboard at ``now``."""
    return rd_as_of(player, now, params) <= params.leaderboard_rd


def _check_score(score: object, name: str = "score") -> float:
    if isinstance(score, bool) or not isinstance(score, Real) or score not in (0, 0.5, 1):
        raise ValueError(f"{name} must be 1 (a win), 0.5 (a draw) or 0 (a loss), got {score!r}")
    return float(score)


def _checked_results(results: Sequence[tuple[Rating, float]]) -> list[tuple[Rating, float]]:
    if isinstance(results, str | bytes) or not isinstance(results, Sequence):
        raise ValueError(f"results must be a sequence of (opponent Rating, score) pairs, got {results!r}")
    checked = []
    for i, item in enumerate(results):
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], Rating)):
            raise ValueError(f"results[{i}] must be an (opponent Rating, score) pair, got {item!r}")
        checked.append((item[0], _check_score(item[1], f"the score of results[{i}]")))
    return checked


def _g(phi: float) -> float:
    """Step 3: how much a game against an opponent with deviation φ says (1 for a sure opponent)."""
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, opponent_mu: float, opponent_g: float) -> float:
    """Step 3's E: the expected score, 1 / (1 + exp(-g(φj)(μ - μj))), without overflow far apart."""
    x = opponent_g * (mu - opponent_mu)
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _new_volatility(sigma: float, phi: float, v: float, delta: float, tau: float) -> float:
    """Step 5: σ', the root of f, by the Illinois algorithm (regula falsi that halves a stale end)."""
    a = math.log(sigma * sigma)
    delta2, phi2 = delta * delta, phi * phi
    tau2 = tau * tau

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta2 - phi2 - v - ex) / (2.0 * (phi2 + v + ex) ** 2) - (x - a) / tau2

    # 5.2: bracket the root between A and B.
    big_a = a
    if delta2 > phi2 + v:
        big_b = math.log(delta2 - phi2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    # 5.3 and 5.4.
    f_a, f_b = f(big_a), f(big_b)
    iterations = 0
    while abs(big_b - big_a) > CONVERGENCE_TOLERANCE:
        iterations += 1
        if iterations > _MAX_ITERATIONS:
            raise RuntimeError(f"the volatility did not converge (σ={sigma}, φ={phi}, v={v}, Δ={delta}, τ={tau})")
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        # "≤ 0", as lila and the glicko2 package test it: with "< 0" an f(C) of exactly 0 would leave A
        # and B where they are, and the loop would never end.
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    # 5.5.
    return math.exp(big_a / 2.0)


def _bounded(
    before: Rating,
    rating: float,
    rd: float,
    volatility: float,
    games: int,
    updated_at: float | None,
    params: Parameters,
) -> Rating:
    """lila's bounds after an update: the rating change, then the floor (``addOrReset`` then ``cap``)."""
    change = max(-params.max_rating_change, min(params.max_rating_change, rating - before.rating))
    return Rating(
        max(params.min_rating, before.rating + change),
        min(params.max_rd, max(params.min_rd, rd)),
        min(params.max_volatility, volatility),
        games,
        updated_at,
    )


def update(
    player: Rating,
    results: Sequence[tuple[Rating, float]],
    params: Parameters = LICHESS,
    *,
    tau: float | None = None,
    now: float | None = None,
) -> Rating:
    """The player's rating after ``results``: (opponent's pre-game rating, score) pairs, score 1 for a
    win, 0.5 for a draw, 0 for a loss. ``tau`` overrides ``params.tau``.

    Without ``now`` this is one rating period of the paper: steps 1 to 8, step 6 adding one period's
    worth of uncertainty; with no games only step 6 applies and only the RD grows. ``updated_at`` is
    kept as it was.

    With ``now`` this is lichess's game-by-game update: the player's and the opponents' RDs are first
    grown by the time since their ``updated_at`` (``as_of``), then steps 1 to 8 run with no period
    added in step 6; ``updated_at`` becomes ``now``. With no games the RD grows to its value at ``now``.

    Either way the result is then bounded by ``params`` (RD, volatility, rating change, rating floor).
    Bad input raises ValueError.
    """
    if not isinstance(player, Rating):
        raise ValueError(f"player must be a Rating, got {player!r}")
    if not isinstance(params, Parameters):
        raise ValueError(f"params must be Parameters, got {params!r}")
    tau = params.tau if tau is None else _positive("tau", tau)
    games = _checked_results(results)
    if now is None:
        periods = 1.0  # the update closes a rating period (step 6 as written)
        updated_at = player.updated_at
    else:
        now = _finite("now", now)
        periods = 0.0  # the time is already in the RDs (lila's skipDeviationIncrease = true)
        player = as_of(player, now, params)
        games = [(as_of(opponent, now, params), score) for opponent, score in games]
        # The first rated game starts a new player's clock; a clock that stepped back is not followed.
        updated_at = now if player.updated_at is None else max(now, player.updated_at)

    # Step 2: to the Glicko-2 scale.
    mu, phi, sigma = (player.rating - CENTRE) / SCALE, player.rd / SCALE, player.volatility
    if not games:
        # Step 6 alone: "the player's rating and volatility parameters remain the same". Worked on the
        # Glicko scale, as in rd_as_of, so that no time gives the RD back exactly.
        rd_new = math.sqrt(player.rd * player.rd + periods * (sigma * SCALE) ** 2)
        return _bounded(player, player.rating, rd_new, sigma, player.games, updated_at, params)

    # Steps 3 and 4: the estimated variance v from the game outcomes, and the improvement Δ.
    information = 0.0
    surprise = 0.0  # Σ g(φj)(sj - Ej)
    for opponent, score in games:
        opponent_g = _g(opponent.rd / SCALE)
        expected = _expected(mu, (opponent.rating - CENTRE) / SCALE, opponent_g)
        information += opponent_g * opponent_g * expected * (1.0 - expected)
        surprise += opponent_g * (score - expected)
    if information == 0.0:
        raise ValueError("the ratings are too far apart for the games to carry any information")
    v = 1.0 / information
    delta = v * surprise

    # Step 5: the new volatility.
    sigma_new = _new_volatility(sigma, phi, v, delta, tau)
    # Step 6: the pre-period RD, grown by the new volatility over the periods elapsed.
    phi_star = math.sqrt(phi * phi + periods * sigma_new * sigma_new)
    # Step 7: the new RD and rating.
    phi_new = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    mu_new = mu + phi_new * phi_new * surprise
    # Step 8: back to the Glicko scale.
    return _bounded(
        player,
        mu_new * SCALE + CENTRE,
        phi_new * SCALE,
        sigma_new,
        player.games + len(games),
        updated_at,
        params,
    )


def rate_game(a: Rating, b: Rating, score_a: float, params: Parameters, now: float) -> tuple[Rating, Rating]:
    """Both players' ratings after one rated game that ended at ``now``; ``score_a`` is a's score (1, 0.5
    or 0) and b scores the rest. Each side is updated once, from the other's pre-game rating."""
    score_a = _check_score(score_a, "score_a")
    return (
        update(a, [(b, score_a)], params, now=now),
        update(b, [(a, 1.0 - score_a)], params, now=now),
    )
