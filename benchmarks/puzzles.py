"""Puzzles: how many a game gives, what they cost, and whether the shipped ones hold (koikoi.puzzles).

Plays ``--games`` first hands between the generator's computer players (koikoi.puzzlegen, seed ``--seed``)
and searches each for puzzles as ``koikoi puzzles generate`` does, at the review's budget (``--budget``,
by default the expert's 300,000 playouts, the confirming search ten times it). It prints, per game: the
decisions with a choice, those the quick look passed on, the candidates (clearly best at the review's
budget), those confirmed at ten times it, and the process time per game and per puzzle.

``--verify`` then searches every puzzle of the shipped set again (koikoi/data), each move of each line,
at the review's budget on fresh worlds, and counts those whose move is still clearly best (1.5 points
over every other, beyond four standard errors).

    python3 benchmarks/puzzles.py --games 10 --seed 99 --verify
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

from koikoi.puzzlegen import play_game, shipped_puzzles
from koikoi.puzzles import FindStats, Puzzle, clearly_best, find_puzzles, puzzle_seed
from koikoi.review import DEFAULT_PLAYOUTS, review_agent


def one_game(seed: int, game: int, budget: int) -> tuple[FindStats, int, float]:
    began = time.process_time()
    stats = FindStats()
    found = list(
        find_puzzles(
            play_game("nintendo", seed, game), seed=puzzle_seed(seed, "bench", game), playouts=budget, stats=stats
        )
    )
    return stats, len(found), time.process_time() - began


def verify(p: Puzzle, budget: int) -> bool:
    m = p.start()
    for i, move in enumerate(p.line):
        obs = m.observation(p.player)
        again = clearly_best(obs, review_agent(puzzle_seed(p.id, "verify", i), budget).rank(obs))
        if again is None or not p.answers(obs, i, again.action):
            return False
        m.apply_action(move.action)
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--seed", type=int, default=99)
    ap.add_argument("--budget", type=int, default=DEFAULT_PLAYOUTS)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--verify", action="store_true", help="search every shipped puzzle again")
    args = ap.parse_args()
    total = FindStats()
    puzzles = 0
    cpu = 0.0
    t0 = time.monotonic()
    with ProcessPoolExecutor(args.jobs) as pool:
        for stats, n, seconds in pool.map(
            one_game, [args.seed] * args.games, range(args.games), [args.budget] * args.games
        ):
            total.add(stats)
            puzzles += n
            cpu += seconds
    g = args.games
    print(
        f"{g} games (seed {args.seed}, review budget {args.budget:,} playouts), "
        f"{time.monotonic() - t0:.0f} s on {args.jobs} processes"
    )
    print(f"decisions searched per game: {total.decisions / g:.1f}; past the quick look: {total.looked / g:.2f}")
    print(
        f"candidates per game: {total.candidates / g:.2f}; confirmed at ten times the budget: {total.confirmed / g:.2f}"
        f" ({total.confirmed}/{total.candidates} of the candidates)"
    )
    print(
        f"puzzles: {puzzles} ({puzzles / g:.2f} a game); process time: {cpu / g:.1f} s a game, "
        f"{cpu / max(1, puzzles):.1f} s a puzzle"
    )
    if args.verify:
        shipped = shipped_puzzles()
        t0 = time.monotonic()
        with ProcessPoolExecutor(args.jobs) as pool:
            held = sum(pool.map(verify, shipped, [args.budget] * len(shipped)))
        print(
            f"shipped puzzles still clearly best on fresh worlds at the review's budget: {held}/{len(shipped)} "
            f"({time.monotonic() - t0:.0f} s)"
        )


if __name__ == "__main__":
    main()
