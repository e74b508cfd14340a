"""The arena's statistics: win rates with their Wilson intervals, the difference in points with its
interval, and the figures of each player over many games."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..lineup import spec_options
from ..rules import RuleSet
from .game import GameResult

_Z95 = 1.959963984540054


def wilson_interval(successes: float, n: int, z: float = _Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default); ``successes`` may be fractional.

    >>> lo, hi = wilson_interval(60, 100)
    >>> round(lo, 3), round(hi, 3)
    (0.502, 0.691)
    >>> wilson_interval(0, 0)
    (0.0, 1.0)
    """
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(0.0, p * (1 - p) / n + z * z / (4 * n * n))) / denom
    lo = 0.0 if successes <= 0 else max(0.0, centre - half)
    hi = 1.0 if successes >= n else min(1.0, centre + half)  # exact at the ends, whatever the rounding
    return (lo, hi)


@dataclass(slots=True)
class PlayerStats:
    """One player's figures over the arena. The win rate counts a drawn match as half a win."""

    label: str  # A or B
    spec: str
    name: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    forfeits: int = 0
    points_won: int = 0
    hands: int = 0
    hand_wins: int = 0
    koikoi_calls: int = 0
    koikoi_paid: int = 0
    decisions: int = 0
    decision_seconds: float = 0.0
    decision_worst: float = 0.0
    overruns: int = 0

    @property
    def options(self) -> dict[str, Any]:
        return spec_options(self.spec)

    @property
    def win_rate(self) -> float:
        return (self.wins + self.draws / 2) / self.games if self.games else 0.0

    @property
    def win_rate_ci(self) -> tuple[float, float]:
        return wilson_interval(self.wins + self.draws / 2, self.games)

    def to_dict(self) -> dict[str, Any]:
        lo, hi = self.win_rate_ci

        def r(x: float) -> float:
            return round(x, 6)

        return {
            "player": self.label,
            "spec": self.spec,
            "options": self.options,
            "name": self.name,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "forfeits": self.forfeits,
            "win_rate": r(self.win_rate),
            "win_rate_ci95": [r(lo), r(hi)],
            "points_won": self.points_won,
            "points_won_per_match": r(self.points_won / self.games) if self.games else 0.0,
            "hands": self.hands,
            "hand_wins": self.hand_wins,
            "points_won_per_hand": r(self.points_won / self.hands) if self.hands else 0.0,
            "koikoi_calls": self.koikoi_calls,
            "koikoi_calls_per_hand": r(self.koikoi_calls / self.hands) if self.hands else 0.0,
            "koikoi_paid": self.koikoi_paid,
            "koikoi_paid_rate": r(self.koikoi_paid / self.koikoi_calls) if self.koikoi_calls else None,
            "decisions": self.decisions,
            "decision_seconds_mean": r(self.decision_seconds / self.decisions) if self.decisions else None,
            "decision_seconds_worst": r(self.decision_worst) if self.decisions else None,
            "overruns": self.overruns,
        }


@dataclass(frozen=True, slots=True)
class Difference:
    """A's points won minus B's, per match and per hand, each with a 95% interval (normal approximation;
    None with fewer than two matches). Matches are the independent units: the per-hand interval is
    that of a ratio of sums over matches (the delta method), as hands of one match are not independent."""

    matches: int
    hands: int
    per_match: float
    per_match_ci: tuple[float, float] | None
    per_hand: float
    per_hand_ci: tuple[float, float] | None

    def to_dict(self) -> dict[str, Any]:
        def r(x: float) -> float:
            return round(x, 6)

        return {
            "of": "A's points won minus B's; 95% interval, normal approximation over matches",
            "matches": self.matches,
            "hands": self.hands,
            "per_match": r(self.per_match),
            "per_match_ci95": None if self.per_match_ci is None else [r(x) for x in self.per_match_ci],
            "per_hand": r(self.per_hand),
            "per_hand_ci95": None if self.per_hand_ci is None else [r(x) for x in self.per_hand_ci],
        }


def points_difference(results: Sequence[GameResult], z: float = _Z95) -> Difference:
    """The :class:`Difference` of A's and B's points won over ``results``.

    >>> g = lambda a, b, hands: GameResult(0, 0, (0, 1), None, [0, 0], "hands", ["a", "b"], [a, b], hands)
    >>> d = points_difference([g(10, 4, 6), g(3, 5, 6), g(8, 0, 6)])
    >>> d.per_match, round(d.per_hand, 4), [round(x, 3) for x in d.per_match_ci]
    (4.0, 0.6667, [-1.988, 9.988])
    """
    n = len(results)
    d = [g.points_won[0] - g.points_won[1] for g in results]
    h = [g.hands for g in results]
    hands = sum(h)
    per_match = sum(d) / n if n else 0.0
    per_hand = sum(d) / hands if hands else 0.0
    match_ci = hand_ci = None
    if n >= 2:
        sd = math.sqrt(sum((x - per_match) ** 2 for x in d) / (n - 1))
        half = z * sd / math.sqrt(n)
        match_ci = (per_match - half, per_match + half)
        if hands:
            resid = sum((x - per_hand * k) ** 2 for x, k in zip(d, h))
            half = z * math.sqrt(resid / (n * (n - 1))) / (hands / n)
            hand_ci = (per_hand - half, per_hand + half)
    return Difference(n, hands, per_match, match_ci, per_hand, hand_ci)


@dataclass(slots=True)
class ArenaReport:
    """The figures of an arena run, or of several runs' ``--jsonl`` files merged (then ``seed`` lists
    their seeds, and ``jobs`` and ``seconds`` are None)."""

    rules: RuleSet
    games: int
    seed: int | list[int]
    jobs: int | None
    time_limit: float
    players: list[PlayerStats]
    results: list[GameResult]
    seconds: float | None
    on_timeout: str = "forfeit"
    jsonl: str | None = None
    resumed: int = 0  # games read back from the --jsonl file, not played now

    @property
    def difference(self) -> Difference:
        return points_difference(self.results)

    @property
    def forfeits(self) -> list[dict[str, Any]]:
        out = []
        for g in self.results:
            if g.forfeit is not None:
                f = g.forfeit
                out.append(
                    {
                        "game": g.index + 1,
                        "player": "AB"[f["player"]],
                        "spec": self.players[f["player"]].spec,
                        "seat": f["seat"],
                        "hand": f["hand"],
                        "kind": f["kind"],
                        "reason": f["reason"],
                        "stderr": f["stderr"],
                        "record": g.record,
                    }
                )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules.name,
            "rule_set": self.rules.to_dict(),
            "games": self.games,
            "seed": self.seed,
            "jobs": self.jobs,
            "time_limit": self.time_limit,
            "on_timeout": self.on_timeout,
            "seconds": None if self.seconds is None else round(self.seconds, 3),
            "jsonl": self.jsonl,
            "resumed": self.resumed,
            "win_rate": "wins plus half the draws, over the games; 95% Wilson score interval",
            "players": [p.to_dict() for p in self.players],
            "difference": self.difference.to_dict(),
            "forfeits": self.forfeits,
            "matches": [
                {
                    "game": g.index + 1,
                    "arena_seed": g.arena_seed,
                    "seed": g.seed,
                    "seat0": "AB"[g.seats[0]],
                    "winner": None if g.winner is None else "AB"[g.winner],
                    "scores": g.scores,
                    "reason": g.reason,
                    "hands": g.hands,
                    "overruns": g.overruns,
                    "record": g.record,
                }
                for g in self.results
            ],
        }


def summarize(results: Sequence[GameResult], specs: Sequence[str]) -> list[PlayerStats]:
    stats = [PlayerStats("A", specs[0], specs[0]), PlayerStats("B", specs[1], specs[1])]
    for g in results:
        for p, s in enumerate(stats):
            s.name = g.names[p] if g.names[p] != s.spec else s.name
            s.games += 1
            if g.winner is None:
                s.draws += 1
            elif g.winner == p:
                s.wins += 1
            else:
                s.losses += 1
                if g.forfeit is not None:
                    s.forfeits += 1
            s.points_won += g.points_won[p]
            s.hands += g.hands
            s.hand_wins += g.hand_wins[p]
            s.koikoi_calls += g.koikoi_calls[p]
            s.koikoi_paid += g.koikoi_paid[p]
            s.decisions += g.decisions[p]
            s.decision_seconds += g.decision_seconds[p]
            s.decision_worst = max(s.decision_worst, g.decision_worst[p])
            s.overruns += g.overruns[p]
    return stats
