"""Random hands per second with the batched NumPy simulation (``koikoi.batch``), on every core.

Each worker process deals batches of hands (the shuffles included in the time), plays them to the end
with uniformly random legal actions and counts the hands played (redeals not counted). The figure is
the total over the workers.

    python3 benchmarks/batch_hands.py --rules nintendo --seconds 20 --jobs 2 --batch 20000
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time

import numpy as np

from koikoi.batch import REASONS, BatchHands, random_decks
from koikoi.rules import PRESETS


def worker(args: tuple[str, int, float, int]) -> tuple[int, float]:
    rules_name, batch, seconds, seed = args
    rules = PRESETS[rules_name]
    rng = np.random.default_rng(seed)
    redeal = REASONS.index("redeal")
    hands = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        b = BatchHands(rules, random_decks(rng, batch), rng.integers(0, 2, batch), rng.integers(1, 13, batch))
        b.play_random(rng)
        hands += int((b.reason != redeal).sum())
    return hands, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rules", default="nintendo", choices=list(PRESETS))
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--batch", type=int, default=20000, help="hands per batch (default 20000)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    jobs = [(args.rules, args.batch, args.seconds, args.seed + j) for j in range(args.jobs)]
    with mp.get_context("spawn").Pool(args.jobs) as pool:
        results = pool.map(worker, jobs)
    total = sum(h / s for h, s in results)
    for j, (h, s) in enumerate(results):
        print(f"worker {j}: {h} hands in {s:.1f} s = {h / s:,.0f} per second")
    print(f"{args.rules}, batches of {args.batch}, {args.jobs} processes: {total:,.0f} random hands per second")


if __name__ == "__main__":
    main()
