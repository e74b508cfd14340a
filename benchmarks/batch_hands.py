"""Random hands per second with the batched NumPy simulation (``koikoi.batch``), against the NumPy
yardstick in the same run.

Ours: batches of B hands are dealt (the shuffles included in the time) and played to their end with
uniformly random legal actions, by the full rules of the preset: whole hands, koi-koi called or not at
random, every option of the rule set (``full``). The yardstick (``numpy_hands_per_second`` from
``yardstick.py``, imported from ``--yardstick``, default ``../shared/yardstick`` next to the repository)
plays a stripped-down hand with no options that stops at the first yaku; so ours is also measured
under the same "stop at the first yaku" play (``stop``: a player always stops when it may), the like
for like comparison. Hands that were dealt again (redeals) are not counted.

Rounds are interleaved (ours full, ours stop, yardstick, for each batch size, then again) and the best
of ``--rounds`` is kept. Rates are per second of CPU time of this process (``time.process_time``), and
``ratio`` is ours / yardstick from the same run.

    python3 benchmarks/batch_hands.py --rules nintendo --batch 4096 20000 --seconds 3 --json
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import multiprocessing as mp
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

from koikoi.batch import REASONS, BatchHands, random_decks
from koikoi.rules import PRESETS

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from hands_per_second import yardstick_rate  # noqa: E402  (the same CPU-time reading of the yardstick)


def ours(rules_name: str, batch: int, seconds: float, rng: np.random.Generator, stop: bool) -> float:
    """Hands per CPU second, dealing and playing batches of ``batch`` for about ``seconds``."""
    rules = PRESETS[rules_name]
    redeal = REASONS.index("redeal")
    hands = 0
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - start_wall < seconds:
        b = BatchHands(rules, random_decks(rng, batch), rng.integers(0, 2, batch), rng.integers(1, 13, batch))
        if stop:
            b.play_random(rng, stop_at_yaku=True)
        else:
            b.play_random(rng)
        hands += int((b.reason != redeal).sum())
    return hands / (time.process_time() - start_cpu)


def measure(args: tuple[str, list[int], float, int, int, str]) -> dict[str, dict[str, float]]:
    rules_name, batches, seconds, rounds, seed, ydir = args
    sys.path.insert(0, ydir)
    module = importlib.import_module("yardstick")
    rng = np.random.default_rng(seed)
    # An older koikoi.batch (for "before" figures) has no stop_at_yaku: then only full hands are measured.
    can_stop = "stop_at_yaku" in inspect.signature(BatchHands.play_random).parameters
    kinds = ("full", "stop", "yardstick") if can_stop else ("full", "yardstick")
    best = {str(b): dict.fromkeys(kinds, 0.0) for b in batches}
    for _ in range(rounds):
        for b in batches:
            row = best[str(b)]
            row["full"] = max(row["full"], ours(rules_name, b, seconds, rng, False))
            if can_stop:
                row["stop"] = max(row["stop"], ours(rules_name, b, seconds, rng, True))
            row["yardstick"] = max(row["yardstick"], yardstick_rate(partial(module.numpy_hands_per_second, b), seconds))
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rules", default="nintendo", choices=list(PRESETS))
    ap.add_argument("--batch", type=int, nargs="+", default=[4096, 20000], help="batch sizes (default 4096 20000)")
    ap.add_argument("--seconds", type=float, default=3, help="seconds per measurement (default 3)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the best is kept (default 3)")
    ap.add_argument("--jobs", type=int, default=1, help="processes, each measuring the same (default 1)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--yardstick", default=str(ROOT.parent / "shared" / "yardstick"), help="yardstick.py's folder")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    ydir = str(Path(args.yardstick).resolve())
    if not (Path(ydir) / "yardstick.py").is_file():
        sys.exit(f"no yardstick.py in {ydir}: pass --yardstick DIR")
    jobs = [(args.rules, args.batch, args.seconds, args.rounds, args.seed + j, ydir) for j in range(args.jobs)]
    if args.jobs == 1:
        results = [measure(jobs[0])]
    else:
        with mp.get_context("spawn").Pool(args.jobs) as pool:
            results = pool.map(measure, jobs)
    out: dict[str, dict[str, float | None]] = {}
    for b in args.batch:
        key = str(b)
        row: dict[str, float | None] = {k: sum(r[key][k] for r in results) for k in results[0][key]}
        row["ratio_full"] = row["full"] / row["yardstick"]  # type: ignore[operator]
        row.setdefault("stop", None)
        row["ratio_stop"] = None if row["stop"] is None else row["stop"] / row["yardstick"]  # type: ignore[operator]
        out[key] = row
    if args.json:
        print(json.dumps({"rules": args.rules, "jobs": args.jobs, "rounds": args.rounds, "batches": out}))
        return
    print(f"{args.rules}, {args.jobs} process(es), best of {args.rounds} interleaved rounds, hands per CPU second")
    for key, row in out.items():
        stop = "" if row["stop"] is None else f"stop at first yaku {row['stop']:>9,.0f} ({row['ratio_stop']:.2f}x) · "
        print(
            f"B={key:>6}: full hands {row['full']:>9,.0f} ({row['ratio_full']:.2f}x) · "
            f"{stop}yardstick {row['yardstick']:>9,.0f}"
        )


if __name__ == "__main__":
    main()
