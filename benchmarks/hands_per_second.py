"""Random full hands through the public API, on one core: prints hands per second.

    python3 benchmarks/hands_per_second.py [--rules PRESET] [--hands N] [--seed S]

Each hand is dealt from a seeded shuffle (redeals included) and played to its end with uniformly
random legal actions (koi-koi or stop at random too), through ``Hand.legal_actions`` and
``Hand.apply_action``, the same calls an AI makes.
"""

from __future__ import annotations

import argparse
import random
import time

import koikoi
from koikoi.hand import Hand


def play_hands(rules: koikoi.RuleSet, n: int, seed: int) -> tuple[int, int]:
    """Play ``n`` hands; return (hands, actions)."""
    # random.Random.choice/shuffle cost more than the engine's own work per action; indexing with
    # random() keeps the harness's share of the measured time small.
    rnd = random.Random(seed).random
    deck = list(range(48))
    actions = 0
    played = 0
    dealer = 0
    while played < n:
        for i in range(47, 0, -1):
            j = int(rnd() * (i + 1))
            deck[i], deck[j] = deck[j], deck[i]
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
    ap.add_argument("--hands", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    names = koikoi.PRESET_NAMES if args.rules == "all" else (args.rules,)
    total_hands = 0
    total_time = 0.0
    for name in names:
        rules = koikoi.preset(name)
        play_hands(rules, 500, args.seed + 1)  # warm the scorer's memo and the interpreter
        t0 = time.perf_counter()
        hands, actions = play_hands(rules, args.hands, args.seed)
        dt = time.perf_counter() - t0
        total_hands += hands
        total_time += dt
        print(f"{name:12s} {hands:7d} hands {actions / hands:5.1f} actions/hand  "
              f"{hands / dt:9,.0f} hands/s  {actions / dt:10,.0f} actions/s")
    if len(names) > 1:
        print(f"{'all':12s} {total_hands:7d} hands {'':19s}{total_hands / total_time:9,.0f} hands/s")


if __name__ == "__main__":
    main()
