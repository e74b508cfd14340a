"""How fast the hard player's playouts run: the engine-driven policy against the fast path, and the
``hard`` agent's whole search (playouts per CPU-second), against the pure-Python yardstick.

    python3 benchmarks/playouts.py [--rules nintendo] [--worlds 300] [--rounds 3] [--decisions 30]
        [--playouts 2000] [--yardstick DIR] [--json]

Samples worlds from the first observation of many deals (the opponent's hand and the stock dealt at
random from the unseen cards), plays each to the end of the hand with ``playout`` (through
``Hand.legal_actions`` / ``Hand.apply_action``) and with ``fast_playout``, checks that both give the
same result, and prints microseconds per playout (a clone included).

The search figures are ``HardAgent.rank`` without a time limit (so each decision spends exactly its
budget of ``--playouts`` playouts, the same on every run) over the decisions of random matches with
more than one legal action, twice: one world at a time (``batched=False``: worlds sampled, cloned, the
choice applied, ``fast_playout`` run) and batched (the default: each round's worlds played together on
NumPy arrays, ``koikoi.ai.batchplay``). The playouts are counted once, then the same decisions are
timed again.

Timing is CPU time in interleaved rounds with the pure-Python yardstick (``--yardstick``, default
``../shared/yardstick`` from the repository root), the best of the rounds.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hands_per_second import ROOT, load_yardstick, yardstick_rate  # noqa: E402

from koikoi.ai.fastplay import fast_playout, noise_pool, playout  # noqa: E402
from koikoi.ai.search import HardAgent, WorldSampler  # noqa: E402
from koikoi.match import Match  # noqa: E402
from koikoi.rules import preset  # noqa: E402


def sample_worlds(rules, count: int, rng: random.Random) -> list:
    worlds = []
    seed = 0
    while len(worlds) < count:
        seed += 1
        m = Match(rules, seed=seed, birth_months=(3, 9))
        obs = m.observation(m.current_player)
        if obs.phase != "play":
            continue
        world = WorldSampler(obs, rng).sample()
        world.apply_action(obs.legal_actions[0])
        worlds.append(world)
    return worlds


def decisions(rules, count: int, seed: int) -> list:
    """Observations of the player to move, with a choice to make, along random matches."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        m = Match(rules, seed=rng.getrandbits(63), birth_months=(3, 9))
        while not m.is_over() and len(out) < count:
            legal = m.legal_actions()
            if len(legal) > 1 and rng.random() < 0.3:
                out.append(m.observation(m.current_player))
            m.apply_action(rng.choice(legal))
    return out


def count_playouts(observations: list, playouts: int, batched: bool) -> int:
    """How many playouts the search runs over these decisions (fixed: no time limit, fixed seeds)."""
    return sum(run_search(observations, playouts, batched))


def run_search(observations: list, playouts: int, batched: bool) -> list[int]:
    """The playouts of each decision's search."""
    out = []
    for k, obs in enumerate(observations):
        agent = HardAgent(seed=k, playouts=playouts, time_limit=None, batched=batched)
        agent.rank(obs)
        out.append(agent.played)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="nintendo")
    ap.add_argument("--worlds", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--decisions", type=int, default=30, help="search decisions per round (default 30)")
    ap.add_argument("--playouts", type=int, default=2000, help="the search's budget per decision (default 2000)")
    ap.add_argument(
        "--yardstick",
        type=Path,
        default=ROOT.parent / "shared" / "yardstick",
        help="the yardstick's directory (default ../shared/yardstick from the repository root)",
    )
    ap.add_argument("--seconds", type=float, default=0.5, help="the yardstick's time per round (default 0.5)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    rules = preset(args.rules)
    rng = random.Random(1)
    worlds = sample_worlds(rules, args.worlds, rng)
    noise = noise_pool(rng, 1.5)
    for w in worlds:  # the same policy, the same result
        assert playout(w.clone(), noise, 7) == fast_playout(w.clone(), noise, 7)
    observations = decisions(rules, args.decisions, 5)
    totals = {b: count_playouts(observations, args.playouts, b) for b in (False, True)}
    yardstick = load_yardstick(args.yardstick)
    per: dict[str, list[float]] = {"playout_us": [], "fast_playout_us": []}
    search_rates: dict[bool, list[float]] = {False: [], True: []}
    sticks: list[float] = []
    for r in range(args.rounds):
        for name, fn in (("playout_us", playout), ("fast_playout_us", fast_playout)):
            t = time.process_time()
            for w in worlds:
                fn(w.clone(), noise, r)
            per[name].append((time.process_time() - t) / len(worlds) * 1e6)
        for b in (False, True):
            t = time.process_time()
            run_search(observations, args.playouts, b)
            search_rates[b].append(totals[b] / (time.process_time() - t))
        if yardstick is not None:
            sticks.append(yardstick_rate(yardstick, args.seconds))
    stick = max(sticks) if sticks else None
    best = {b: max(search_rates[b]) for b in (False, True)}
    out = {
        "benchmark": "playouts",
        "rules": args.rules,
        "rounds": args.rounds,
        "worlds": len(worlds),
        "playout_us": round(min(per["playout_us"]), 2),
        "fast_playout_us": round(min(per["fast_playout_us"]), 2),
        "decisions": len(observations),
        "budget": args.playouts,
        "yardstick_python_hands_per_cpu_second": None if stick is None else round(stick),
    }
    for b, name in ((False, "one_world"), (True, "batched")):
        out[f"{name}_search_playouts"] = totals[b]
        out[f"{name}_playouts_per_cpu_second"] = round(best[b])
        out[f"{name}_playouts_per_yardstick_hand"] = None if stick is None else round(best[b] / stick, 3)
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"{args.rules}: best of {args.rounds} interleaved rounds, CPU time, one core")
    print(f"  {len(worlds)} sampled worlds from the first move of a hand (a clone included):")
    print(f"    engine-driven playout  {out['playout_us']:7.1f} µs per playout")
    print(f"    fast_playout           {out['fast_playout_us']:7.1f} µs per playout")
    for b, label in ((False, "one world at a time"), (True, "batched (the default)")):
        shown = "" if stick is None else f"   {best[b] / stick:.3f} per yardstick hand"
        print(
            f"  hard search, {label}, {len(observations)} decisions x {args.playouts} playouts budget "
            f"({totals[b]} playouts): {best[b]:,.0f} playouts per CPU-second{shown}"
        )
    if stick is None:
        print(f"  yardstick: not found in {args.yardstick} (figures without ratios)")
    else:
        print(f"  yardstick (pure Python): {stick:,.0f} hands per CPU-second")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
