"""How strong the computer players are: full matches between levels, seats alternating.

    python3 benchmarks/strength.py --pairs hard:easy,hard:medium,medium:easy,easy:random \
        --matches N --rules nintendo --seed S --jobs 2 [--set hard.playouts=800]

A player may be a named variant of a level, LEVEL/NAME, with its own options: ``--pairs hard/a:hard/b
--set hard/a.noise=1 --set hard/b.noise=3`` plays two differently tuned hard players against each other.

For each pairing A:B, matches come in pairs on the same deals: matches 2j and 2j+1 are both dealt from
seed S+j, with A in seat 0 and then in seat 1 (duplicate play: the luck of the deal cancels out of
the pair); each agent gets its own seed derived from S, i and its seat. Prints per
pairing: A's wins/draws/losses, A's win rate with a 95% Wilson interval, A's mean point difference per
hand, and the mean and worst seconds per decision of each level (decisions with one legal action are
answered without thought and left out of the timing).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
import time
from collections import defaultdict

from koikoi.ai import make_agent
from koikoi.match import Match
from koikoi.rules import preset


def _options(settings: list[str]) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = defaultdict(dict)
    for s in settings:
        key, _, raw = s.partition("=")
        level, _, opt = key.partition(".")
        if not opt or not raw:
            raise SystemExit(f"--set wants LEVEL.OPTION=VALUE, not {s!r}")
        value: object
        if raw == "none":
            value = None
        else:
            try:
                value = int(raw)
            except ValueError:
                try:
                    value = float(raw)
                except ValueError:
                    value = raw  # a word, e.g. hard.match_play=blend
        out[level][opt] = value
    return out


def play_match(task):
    a_name, b_name, rules_name, seed, i, options = task
    rules = preset(rules_name)
    a_seat = i % 2
    names = [b_name, b_name]
    names[a_seat] = a_name
    agents = [
        make_agent(names[p].split("/")[0], seed=seed * 7919 + i * 31 + p, **options.get(names[p], {})) for p in (0, 1)
    ]
    m = Match(rules, seed=seed + i // 2)
    times: list[list[float]] = [[], []]
    while not m.is_over():
        p = m.current_player
        obs = m.observation(p)
        t = time.perf_counter()
        action = agents[p].choose(obs)
        if len(obs.legal_actions) > 1:
            times[p].append(time.perf_counter() - t)
        m.apply_action(action)
    s = m.outcome.scores
    diff = s[a_seat] - s[1 - a_seat]
    hands = len(m.results)
    return a_name, b_name, (0 if diff > 0 else 1 if diff == 0 else 2), diff, hands, times[a_seat], times[1 - a_seat]


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", default="hard:easy,hard:medium,medium:easy,easy:random")
    ap.add_argument("--matches", type=int, default=20)
    ap.add_argument("--rules", default="nintendo")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="LEVEL.OPTION=VALUE",
        help="an agent option, e.g. hard.playouts=800 or hard.time_limit=none",
    )
    args = ap.parse_args(argv)
    if args.matches % 2:
        ap.error("--matches must be even: each deal is played twice, with the seats swapped")
    options = _options(args.set)
    pairs = [tuple(p.split(":")) for p in args.pairs.split(",") if p]
    tasks = [(a, b, args.rules, args.seed, i, options) for a, b in pairs for i in range(args.matches)]
    start = time.perf_counter()
    if args.jobs > 1:
        with multiprocessing.Pool(args.jobs) as pool:
            results = pool.map(play_match, tasks, chunksize=1)
    else:
        results = list(map(play_match, tasks))
    for a, b in pairs:
        rows = [r for r in results if r[0] == a and r[1] == b]
        wdl = [sum(1 for r in rows if r[2] == k) for k in range(3)]
        n = len(rows)
        score = wdl[0] + 0.5 * wdl[1]
        lo, hi = wilson(score, n)
        hands = sum(r[4] for r in rows)
        per_hand = sum(r[3] for r in rows) / hands if hands else 0.0
        ta = [t for r in rows for t in r[5]]
        tb = [t for r in rows for t in r[6]]
        print(
            f"{a} vs {b}: {wdl[0]}W {wdl[1]}D {wdl[2]}L of {n}; win rate {score / n:.1%} "
            f"(95% CI {lo:.1%}-{hi:.1%}, draws as half); {per_hand:+.2f} points/hand"
        )
        for name, ts in ((a, ta), (b, tb)):
            if ts:
                print(
                    f"    {name}: {sum(ts) / len(ts) * 1000:.1f} ms mean, {max(ts) * 1000:.1f} ms worst "
                    f"per decision ({len(ts)} decisions)"
                )
    print(
        f"({args.rules}, {args.matches} matches per pairing, seed {args.seed}, {time.perf_counter() - start:.0f} s)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
