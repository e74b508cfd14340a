"""Random full hands through the public API, on one core: prints hands per second.

    python3 benchmarks/hands_per_second.py [--rules PRESET|all] [--hands N] [--rounds R] [--seed S]

Each hand is dealt from a fresh random deck order (redeals included: a deal that must be thrown
in costs its time and is dealt again) and played to its end with uniformly random legal actions
(koi-koi or stop at random too), through ``Hand.legal_actions`` and ``Hand.apply_action``, the
calls an AI makes. The figure is hands per second of one process; each rule set is measured in
``--rounds`` rounds and the best and median rounds are printed (the machine's other load only
ever slows a round down).

The random deck orders are the harness's, not the engine's: they are drawn in batches with NumPy
when it is installed (a 48-card shuffle in pure Python costs as much as a third of a hand), else
shuffled one by one with the standard library; ``--stdlib-shuffle`` forces the latter.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import koikoi
from koikoi.hand import Hand

try:
    import numpy as np
except ImportError:  # pragma: no cover - the figure then includes a pure-Python shuffle per hand
    np = None


def deck_source(seed: int, stdlib: bool):
    """An endless supply of random deck orders (lists of the 48 card ids)."""
    if np is not None and not stdlib:
        gen = np.random.default_rng(seed)
        base = np.tile(np.arange(48, dtype=np.int64), (4096, 1))
        while True:
            yield from gen.permuted(base, axis=1).tolist()
    rng = random.Random(seed)
    deck = list(range(48))
    while True:
        rng.shuffle(deck)
        yield deck


def play_hands(rules: koikoi.RuleSet, n: int, seed: int, stdlib: bool = False) -> tuple[int, int]:
    """Play ``n`` hands with random legal actions; return (hands, actions)."""
    # random.Random.choice costs more than the engine's own work per action; indexing with
    # random() keeps the harness's share of the measured time small.
    rnd = random.Random(seed).random
    decks = deck_source(seed, stdlib)
    actions = 0
    played = 0
    dealer = 0
    for deck in decks:
        if played >= n:
            break
        hand = Hand(rules, deck, dealer, played % 12 + 1)
        if hand.needs_redeal:
            continue
        legal, apply = hand.legal_actions, hand.apply_action
        acts = legal()
        while acts:  # legal_actions() is empty exactly when the hand is over
            apply(acts[int(rnd() * len(acts))])
            actions += 1
            acts = legal()
        played += 1
        dealer ^= 1
    return played, actions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="all", help="a preset name, or 'all' (default)")
    ap.add_argument("--hands", type=int, default=4_000, help="hands per round (default 4000)")
    ap.add_argument("--rounds", type=int, default=12, help="rounds per rule set (default 12)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--stdlib-shuffle", action="store_true", help="shuffle each deck with random.shuffle")
    args = ap.parse_args()
    names = koikoi.PRESET_NAMES if args.rules == "all" else (args.rules,)
    print(
        f"random full hands, one process, {args.rounds} rounds of {args.hands} hands per rule set; "
        f"decks from {'random.shuffle' if args.stdlib_shuffle or np is None else 'NumPy batches'}"
    )
    bests = []
    for name in names:
        rules = koikoi.preset(name)
        play_hands(rules, 500, args.seed + 10_000, args.stdlib_shuffle)  # warm up
        rates = []
        per_hand = 0.0
        for r in range(args.rounds):
            t0 = time.perf_counter()
            hands, actions = play_hands(rules, args.hands, args.seed + r, args.stdlib_shuffle)
            rates.append(hands / (time.perf_counter() - t0))
            per_hand = actions / hands
        bests.append(max(rates))
        print(
            f"{name:24s} {per_hand:5.1f} actions/hand   best {max(rates):9,.0f} hands/s   "
            f"median {statistics.median(rates):9,.0f} hands/s"
        )
    if len(names) > 1:
        print(f"{'all (mean of bests)':24s} {'':19s}best {statistics.fmean(bests):9,.0f} hands/s")


if __name__ == "__main__":
    main()
