"""How fast the hard player's playouts run: the engine-driven policy against the fast path.

    python3 benchmarks/playouts.py [--rules nintendo] [--worlds 300] [--rounds 7]

Samples worlds from the first observation of many deals (the opponent's hand and the stock dealt at
random from the unseen cards), plays each to the end of the hand with ``playout`` (through
``Hand.legal_actions`` / ``Hand.apply_action``) and with ``fast_playout``, checks that both give the
same result, and prints microseconds per playout (best and median of the rounds, one core).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from koikoi.ai.fastplay import fast_playout, noise_pool, playout
from koikoi.ai.search import WorldSampler
from koikoi.match import Match
from koikoi.rules import preset


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="nintendo")
    ap.add_argument("--worlds", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)
    rules = preset(args.rules)
    rng = random.Random(1)
    worlds = []
    seed = 0
    while len(worlds) < args.worlds:
        seed += 1
        m = Match(rules, seed=seed, birth_months=(3, 9))
        obs = m.observation(m.current_player)
        if obs.phase != "play":
            continue
        world = WorldSampler(obs, rng).sample()
        world.apply_action(obs.legal_actions[0])
        worlds.append(world)
    noise = noise_pool(rng, 1.5)
    for w in worlds:  # the same policy, the same result
        assert playout(w.clone(), noise, 7) == fast_playout(w.clone(), noise, 7)
    print(f"{args.rules}: {len(worlds)} sampled worlds from the first move of a hand, one core")
    for name, fn in (("engine-driven playout", playout), ("fast_playout", fast_playout)):
        per = []
        for r in range(args.rounds):
            t = time.perf_counter()
            for w in worlds:
                fn(w.clone(), noise, r)
            per.append((time.perf_counter() - t) / len(worlds) * 1e6)
        print(
            f"  {name:<22} best {min(per):6.1f} µs, median {statistics.median(per):6.1f} µs per playout "
            f"(a clone included)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
