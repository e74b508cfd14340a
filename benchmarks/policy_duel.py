"""Two batched playout policies against each other, hand by hand: the quick loop for a better one.

The search's batched playouts (:mod:`koikoi.ai.batchplay`) are played by a policy on arrays. This plays
``--hands`` fresh deals with one policy in seat 0 and the other in seat 1, then the same deals with the
seats swapped (duplicate play), every player stopping at its first yaku as in a playout, and prints
the first policy's mean point difference per hand with its standard error, and each policy's cost in
microseconds of CPU time per hand (both seats played by it). Tens of thousands of hands take seconds.

    python3 benchmarks/policy_duel.py --a yaku --b greedy --hands 20000 --seed 1

A policy is ``greedy`` or ``yaku`` (``koikoi.ai.search.PLAYOUT_POLICIES``); ``--noise-a``/``--noise-b``
are their noise in the search's units (the search's ``noise``, 1.5 by default; 0: none).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from koikoi.ai.batchplay import YAKU_NOISE, GreedyPolicy, YakuPolicy
from koikoi.ai.search import PLAYOUT_POLICIES
from koikoi.batch import BatchHands, random_decks
from koikoi.rules import PRESETS, RuleSet, preset


class SeatPolicies:
    """Seat 0 plays ``first``, seat 1 ``second``. A batch plays a whole turn per pass and the players
    alternate, so the mover of a row at the t-th call is the row's first mover if t is even."""

    def __init__(self, batch: BatchHands, first: Any, second: Any) -> None:
        self.first_mover = batch.current_player.copy()
        self.calls = 0
        self.policies = (first, second)

    def card(self, *args: np.ndarray) -> np.ndarray:
        seat = self.first_mover ^ (self.calls & 1)
        self.calls += 1
        a, b = (p.card(*args) for p in self.policies)
        return np.where(seat == 0, a, b)

    def low(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        return self.policies[0].low(low, high)  # (every policy takes a drawn card's capture alike)


def make_policy(name: str, noise: np.ndarray, rules: RuleSet) -> Any:
    if name == "yaku":
        return YakuPolicy(noise * YAKU_NOISE, len(noise), rules)
    return GreedyPolicy(noise, len(noise))


def duel(rules: RuleSet, a: str, b: str, hands: int, seed: int, noise_a: float = 0.0, noise_b: float = 0.0):
    """``a``'s point differences against ``b`` (array of ``hands``: the mean of the two seatings of each
    deal), the deals from ``seed``; the noise drawn once per deal and card, for each policy."""
    gen = np.random.default_rng(seed)
    decks = random_decks(gen, hands)
    na, nb = gen.random((hands, 48)) * noise_a, gen.random((hands, 48)) * noise_b
    out = np.zeros(hands)
    for a_seat in (0, 1):
        batch = BatchHands(rules, decks)
        pa, pb = make_policy(a, na, rules), make_policy(b, nb, rules)
        seats = (pa, pb) if a_seat == 0 else (pb, pa)
        batch.play_policy(SeatPolicies(batch, *seats))
        d = batch._deltas
        out += (d[a_seat] - d[1 - a_seat]) / 2
    return out


def cost(rules: RuleSet, name: str, hands: int, seed: int) -> float:
    """CPU microseconds per hand of ``name`` playing both seats, over ``hands`` deals."""
    decks = random_decks(np.random.default_rng(seed), hands)
    noise = np.random.default_rng(seed).random((hands, 48)) * 1.5
    batch = BatchHands(rules, decks)
    t = time.process_time()
    batch.play_policy(make_policy(name, noise, rules))
    return (time.process_time() - t) / hands * 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", default="yaku", choices=PLAYOUT_POLICIES)
    ap.add_argument("--b", default="greedy", choices=PLAYOUT_POLICIES)
    ap.add_argument("--rules", default="nintendo", choices=sorted(PRESETS))
    ap.add_argument("--hands", type=int, default=20000, help="deals, each played twice (default 20000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--noise-a", type=float, default=0.0)
    ap.add_argument("--noise-b", type=float, default=0.0)
    args = ap.parse_args(argv)
    if not 1 <= args.hands <= 1_000_000:
        ap.error(f"--hands must be from 1 to 1000000, not {args.hands}")
    rules = preset(args.rules)
    d = duel(rules, args.a, args.b, args.hands, args.seed, args.noise_a, args.noise_b)
    se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
    print(
        f"{args.a} (noise {args.noise_a:g}) vs {args.b} (noise {args.noise_b:g}), {args.rules}: "
        f"{d.mean():+.3f} points a hand (standard error {se:.3f}) over {args.hands} deals played twice, "
        f"seed {args.seed}"
    )
    for name in dict.fromkeys((args.a, args.b)):
        print(f"    {name}: {cost(rules, name, min(args.hands, 4096), args.seed):.1f} CPU us a hand")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
