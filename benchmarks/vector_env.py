"""Agent steps per second of the vectorised environment (``koikoi.vector``), against the pure-Python
yardstick in the same run.

Each process makes its own ``KoiKoiVectorEnv`` per batch size, resets it and steps it with a uniformly
random legal action per table (``sample_actions``, included in the time), whole matches under the
preset with autoreset, observations and masks built every step. An agent step is one action of the
caller at one table: ``num_envs`` per ``step`` (self-play: both seats are the caller's; with
``--opponent`` the opponent's moves happen inside ``step`` and are not counted).

The yardstick (``python_hands_per_second`` from ``yardstick.py``, imported from ``--yardstick``, default
``../shared/yardstick`` next to the repository) runs in the same process, interleaved with ours
(every batch size, then the yardstick, round after round); the best of ``--rounds`` is kept. Rates are
per second of CPU time (``time.process_time``); ``ratio`` is ours / yardstick in the same process.
With ``--jobs N`` the N processes run at once and the figures are their sum. ``--json`` gives the
curve and, as ``steps_per_second`` (with ``batch``), the figure at the fastest batch size.

    python3 benchmarks/vector_env.py --jobs 1 --batch 256 1024 4096 16384 --seconds 3 --json
"""

from __future__ import annotations

import argparse
import importlib
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path

import numpy as np

from koikoi.rules import PRESETS
from koikoi.vector import KoiKoiVectorEnv

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from hands_per_second import yardstick_rate  # noqa: E402  (the same CPU-time reading of the yardstick)


def ours(env: KoiKoiVectorEnv, rng: np.random.Generator, seconds: float) -> float:
    """Agent steps per CPU second for about ``seconds``."""
    steps = 0
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - start_wall < seconds:
        for _ in range(10):
            env.step(env.sample_actions(rng))
        steps += 10 * env.num_envs
    return steps / (time.process_time() - start_cpu)


def measure(args: tuple[str, str | None, list[int], float, int, int, str]) -> dict[str, float]:
    rules_name, opponent, batches, seconds, rounds, seed, ydir = args
    sys.path.insert(0, ydir)
    module = importlib.import_module("yardstick")
    rng = np.random.default_rng(seed)
    rules = PRESETS[rules_name]
    months = (3, 8) if rules.dealer_selection == "birth_month" else None
    envs = {b: KoiKoiVectorEnv(b, rules=rules, opponent=opponent, birth_months=months) for b in batches}
    for b, env in envs.items():
        env.reset(seed=seed + b)
    best = {str(b): 0.0 for b in batches}
    best["yardstick"] = 0.0
    for _ in range(rounds):
        for b, env in envs.items():
            best[str(b)] = max(best[str(b)], ours(env, rng, seconds))
        best["yardstick"] = max(best["yardstick"], yardstick_rate(module.python_hands_per_second, seconds))
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rules", default="nintendo", choices=list(PRESETS))
    ap.add_argument("--opponent", default=None, choices=["random", "easy"], help="default: self-play")
    ap.add_argument("--batch", type=int, nargs="+", default=[256, 1024, 4096, 16384], help="tables per env")
    ap.add_argument("--seconds", type=float, default=3, help="seconds per measurement (default 3)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the best is kept (default 3)")
    ap.add_argument("--jobs", type=int, default=1, help="processes, each with its own vector env (default 1)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--yardstick", default=str(ROOT.parent / "shared" / "yardstick"), help="yardstick.py's folder")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    ydir = str(Path(args.yardstick).resolve())
    if not (Path(ydir) / "yardstick.py").is_file():
        sys.exit(f"no yardstick.py in {ydir}: pass --yardstick DIR")
    jobs = [
        (args.rules, args.opponent, args.batch, args.seconds, args.rounds, args.seed + 1000 * j, ydir)
        for j in range(args.jobs)
    ]
    if args.jobs == 1:
        results = [measure(jobs[0])]
    else:
        with mp.get_context("spawn").Pool(args.jobs) as pool:
            results = pool.map(measure, jobs)
    yard = sum(r["yardstick"] for r in results) / len(results)  # one process's yardstick
    curve = {}
    for b in args.batch:
        total = sum(r[str(b)] for r in results)
        per_process = [r[str(b)] / r["yardstick"] for r in results]
        curve[str(b)] = {"steps_per_second": total, "ratio_per_process": sum(per_process) / len(per_process)}
    best_b = max(curve, key=lambda k: curve[k]["steps_per_second"])
    out = {
        "rules": args.rules,
        "opponent": args.opponent,
        "jobs": args.jobs,
        "rounds": args.rounds,
        "batch": int(best_b),
        "steps_per_second": curve[best_b]["steps_per_second"],
        "ratio_per_process": curve[best_b]["ratio_per_process"],
        "yardstick_python_hands_per_second": yard,
        "curve": curve,
    }
    if args.json:
        print(json.dumps(out))
        return
    who = "self-play" if args.opponent is None else f"against {args.opponent}"
    print(f"{args.rules}, {who}, {args.jobs} process(es), best of {args.rounds} interleaved rounds, per CPU second")
    for b, row in curve.items():
        print(
            f"num_envs={b:>6}: {row['steps_per_second']:>10,.0f} agent steps/s "
            f"({row['ratio_per_process']:.1f}x the Python yardstick per process)"
        )
    print(f"yardstick (pure Python, one process): {yard:,.0f} hands/s")


if __name__ == "__main__":
    main()
