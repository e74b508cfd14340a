"""What knowing the hidden cards would be worth to ``hard``: its search with the real cards in its worlds.

    python3 benchmarks/oracle.py --know hand --against hard --matches 200 --seed 500 --jobs 2 \
        --playouts 11000 [--set hard.playouts=11000 --set hard.time_limit=none]

Player A is ``hard``'s batched search (successive halving, greedy playouts, the match score) whose
worlds hold the real hidden cards instead of guesses: ``--know hand`` gives it the opponent's real
hand (the stock order still shuffled at random, as the player cannot know it), ``--know all`` the hand
and the real stock order (every playout's deal is the real one; only the playouts' choices vary). It is
a measuring stick, never a player: no level, lobby or arena can name it.

The win rate of ``--know hand`` against the honest search at the same budget is the most that any
opponent model (reading discards, captures, the yaku the opponent chases) can add to the search; that of
``--know all``, what a search with the same playouts could reach if nothing were hidden. Matches are
played as ``strength.py`` plays them: full matches, each deal twice with the seats swapped, a 95% Wilson
interval, CPU time per decision.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from strength import agent_seed, duel, duel_arguments, duel_options, play_all, report_duel  # noqa: E402

from koikoi.ai.batchplay import sample_hidden  # noqa: E402
from koikoi.ai.search import HardAgent  # noqa: E402
from koikoi.match import Match  # noqa: E402

KNOW = ("hand", "all")


class Oracle(HardAgent):
    """``hard``'s batched search whose worlds hold the real hidden cards (:attr:`truth`, set before each
    decision by the match loop below): the opponent's hand, and with ``know="all"`` the stock order."""

    name = "oracle"

    def __init__(self, know: str, seed: int, playouts: int) -> None:
        super().__init__(seed, playouts=playouts, time_limit=None, batched=True)
        if know not in KNOW:
            raise ValueError(f"unknown --know {know!r}; choose from {', '.join(KNOW)}")
        self.know = know
        self.truth: tuple[int, list[int]] | None = None  # (the opponent's hand mask, the stock top first)

    def _hidden(self, gen, ws, exponents, count):
        if self.truth is None:
            raise RuntimeError("the oracle was asked to choose without being shown the hidden cards")
        held_mask, stock = self.truth
        if sorted([c for c in ws.unseen if held_mask >> c & 1] + stock) != sorted(ws.unseen):
            raise RuntimeError("the oracle's hidden cards are not the observation's unseen cards")
        held = np.full(count, held_mask, dtype=np.uint64)
        if self.know == "all":
            return held, np.tile(np.array(stock, dtype=np.int64), (count, 1))
        # The real hand, and the stock a random order of the rest: the guesses of a player who knew the
        # opponent's hand and nothing more.
        _, stocks = sample_hidden(gen, stock, 0, None, count)
        return held, stocks


def play_match(task):
    know, playouts, b_name, rules_name, seed, i, options = task
    a_seat = i % 2
    oracle = Oracle(know, agent_seed(seed, i, a_seat), playouts)

    def show(m: Match, obs) -> None:  # the real hidden cards, before each of the oracle's decisions
        p = obs.player
        if p == a_seat:
            h = m.hand
            oracle.truth = (h._hands[1 - p], list(h.stock[h.stock_pos :]))

    return duel(oracle, b_name, rules_name, seed, i, options, show)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--know", choices=KNOW, required=True, help="the real hand only, or the hand and the stock")
    ap.add_argument("--playouts", type=int, default=60000, help="the oracle's playouts a decision")
    duel_arguments(ap, against="hard")
    args = ap.parse_args(argv)
    if args.playouts < 1:
        ap.error("--playouts must be at least 1")
    options = duel_options(ap, args, "oracle.py")
    tasks = [(args.know, args.playouts, args.against, args.rules, args.seed, i, options) for i in range(args.matches)]
    start = time.perf_counter()
    results = play_all(play_match, tasks, args.jobs)
    elapsed = time.perf_counter() - start
    known = "hand" if args.know == "hand" else "hand and the stock"
    label = f"oracle (knows the {known}, {args.playouts} playouts)"
    report_duel(label, "oracle", args.against, results, args.rules, args.seed, elapsed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
