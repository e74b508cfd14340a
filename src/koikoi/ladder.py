"""The computer levels on the players' rating scale: played against each other, and placed by their results.

Each pair of neighbouring levels (``random`` – ``easy`` – ``medium`` – ``hard`` – ``expert``) plays
matches in the arena (seats alternating, :mod:`koikoi.arena`); the levels' ratings are the maximum
likelihood fit of the model behind Elo and Glicko-2 (with no uncertainty: a computer level's strength
does not change), where a player rated ``d`` points above another is expected to score
``1 / (1 + 10 ** (-d / 400))`` against it. A draw counts half a win. One virtual draw between each
pair that played keeps a level that won or lost every match at a finite rating.

Results fix only the gaps between levels; where the scale sits is a choice, the *anchor*: ``medium`` is
placed at 1500, the rating every new player starts from, because it is the lobby's default opponent,
the one a newcomer meets first. Until rated games between people and the computer exist to tie the two
scales, "Medium ≈ 1500" says the level a newcomer is assumed to match, and the gaps to the other
levels are measured.

``koikoi ladder`` runs it and writes the ratings to a JSON file; the web app ships one such file
(``koikoi/web/level-ratings.json``) and shows its figures in the lobby.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .ai.registry import lobby_levels

__all__ = ["ANCHOR", "ANCHOR_RATING", "LEVELS", "Result", "fit", "play"]

# The levels the lobby offers are the ones whose ratings it shows.
LEVELS = lobby_levels()
ANCHOR = "medium"
ANCHOR_RATING = 1500.0
_PER_POINT = math.log(10) / 400  # Elo's logistic scale


@dataclass(frozen=True)
class Result:
    """``games`` matches between ``a`` and ``b`` in which ``a`` scored ``score`` (wins + draws / 2)."""

    a: str
    b: str
    games: int
    score: float


def fit(results: Sequence[Result], anchor: str = ANCHOR, anchor_rating: float = ANCHOR_RATING) -> dict[str, float]:
    """Each level's rating from ``results``, ``anchor`` at ``anchor_rating``: the Bradley–Terry fit by
    minorisation–maximisation (Hunter, 2004), one virtual draw added to each pair."""
    pairs: dict[tuple[str, str], list[float]] = {}  # (a, b) -> [games, a's score]
    for r in results:
        if r.games < 0 or not 0 <= r.score <= r.games:
            raise ValueError(f"{r.a} against {r.b}: a score of {r.score} in {r.games} games")
        if r.a == r.b:
            raise ValueError(f"{r.a} cannot play itself in a ladder")
        key, score = ((r.a, r.b), r.score) if r.a < r.b else ((r.b, r.a), r.games - r.score)
        g = pairs.setdefault(key, [1.0, 0.5])  # the virtual draw
        g[0] += r.games
        g[1] += score
    levels = sorted({x for key in pairs for x in key})
    if anchor not in levels:
        raise ValueError(f"the anchor {anchor!r} played no games")
    _check_connected(levels, pairs)
    wins = dict.fromkeys(levels, 0.0)
    for (a, b), (n, s) in pairs.items():
        wins[a] += s
        wins[b] += n - s
    gamma = dict.fromkeys(levels, 1.0)
    for _ in range(10_000):
        new = {}
        for i in levels:
            denom = 0.0
            for (a, b), (n, _s) in pairs.items():
                if i in (a, b):
                    denom += n / (gamma[a] + gamma[b])
            new[i] = wins[i] / denom
        # Scale so the anchor stays at 1: the fit fixes only ratios.
        k = new[anchor]
        new = {i: v / k for i, v in new.items()}
        change = max(abs(math.log(new[i] / gamma[i])) for i in levels)
        gamma = new
        if change < 1e-12:
            break
    return {i: anchor_rating + math.log(gamma[i]) / _PER_POINT for i in levels}


def _check_connected(levels: list[str], pairs: dict[tuple[str, str], list[float]]) -> None:
    seen, todo = {levels[0]}, [levels[0]]
    while todo:
        x = todo.pop()
        for a, b in pairs:
            for y, z in ((a, b), (b, a)):
                if y == x and z not in seen:
                    seen.add(z)
                    todo.append(z)
    if len(seen) != len(levels):
        raise ValueError(f"the levels {sorted(set(levels) - seen)} played none of {sorted(seen)}: no common scale")


def expected(d: float) -> float:
    """The score expected of a player rated ``d`` points above the other."""
    return 1 / (1 + math.exp(-_PER_POINT * d))


def play(
    preset_name: str,
    hands: int,
    games: int,
    seed: int,
    levels: Sequence[str] = LEVELS,
    jobs: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[Result]:
    """Neighbouring ``levels`` play ``games`` matches each under ``preset_name`` cut to ``hands`` hands."""
    from .arena import run_arena
    from .rules import preset

    rules = preset(preset_name).with_settings([f"hands={hands}"])
    out = []
    for i, (a, b) in enumerate(zip(levels, levels[1:])):
        report = run_arena(rules, games=games, seed=seed + i, players=[a, b], jobs=jobs)
        pa = report.players[0]
        out.append(Result(a, b, pa.games, pa.wins + pa.draws / 2))
        if progress is not None:
            progress(f"{a} against {b}: {pa.wins} won, {pa.draws} drawn, {pa.losses} lost of {pa.games}")
    return out
