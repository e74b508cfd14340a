"""What a view of the game costs: microseconds per ``Match.observation()``, per ``encode()``, per
``action_mask()``, per PettingZoo ``env.step`` and, for comparison, per bare ``Match`` step.

    python3 benchmarks/observation.py [--rules nintendo] [--steps N] [--rounds R] [--yardstick DIR] [--json]

``Match.observation`` is timed as a learning loop takes it: whole matches are played with random
legal actions and the player to move observes after every step; the figure is that loop's time per
step less the same loop's without observations (the same seed: the same matches). ``encode`` and
``action_mask`` are timed on the observations of positions of such matches. ``env.step`` is the
wrapped AEC environment (``koikoi.env.env()``, as PettingZoo's classic games are wrapped) stepped with
random legal actions, each step reading what the wrappers read (its observation and action mask),
resets included; the bare step is ``Match.legal_actions`` plus ``Match.apply_action``. Timing is CPU
time, in interleaved rounds with the pure-Python yardstick (``--yardstick``, default
``../shared/yardstick`` from the repository root), the best of the rounds; each figure is also given
in yardstick hands (its time over the yardstick's time per hand), which the machine's load changes
far less than microseconds.
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

import koikoi  # noqa: E402


def positions(rules: koikoi.RuleSet, steps: int, seed: int) -> list[koikoi.Match]:
    """Copies of matches at ``steps`` positions along random play."""
    rng = random.Random(seed)
    birth = (2, 9) if rules.dealer_selection == "birth_month" else None
    out: list[koikoi.Match] = []
    while len(out) < steps:
        m = koikoi.Match(rules, seed=rng.getrandbits(63), birth_months=birth)
        while not m.is_over() and len(out) < steps:
            out.append(m.clone())
            m.apply_action(rng.choice(m.legal_actions()))
    return out


def time_calls(fn, args: list) -> float:
    t = time.process_time()
    for a in args:
        fn(a)
    return (time.process_time() - t) / len(args) * 1e6


def time_steps(rules: koikoi.RuleSet, steps: int, seed: int, observe: bool) -> float:
    """CPU microseconds per bare Match step (legal actions, then one applied) over random matches;
    with ``observe``, the player to move also takes its observation after every step, as a learning
    loop does (the same seed: the same matches and steps)."""
    rnd = random.Random(seed).random
    birth = (2, 9) if rules.dealer_selection == "birth_month" else None
    done = 0
    match_seed = seed
    t = time.process_time()
    while done < steps:
        match_seed += 1
        m = koikoi.Match(rules, seed=match_seed, birth_months=birth)
        acts = m.legal_actions()
        while acts:
            m.apply_action(acts[int(rnd() * len(acts))])
            done += 1
            if observe and m.outcome is None:
                m.observation(m.hand.current_player)
            acts = m.legal_actions()
    return (time.process_time() - t) / done * 1e6


def time_env_steps(kenv, rules_name: str, steps: int, seed: int) -> float:
    rnd = random.Random(seed).random
    e = kenv.env(rules=rules_name)
    e.reset(seed=seed)
    raw = e.unwrapped
    done = 0
    t = time.process_time()
    while done < steps:
        if raw.match.is_over():
            e.reset()
            continue
        acts = raw.match.legal_actions()
        e.step(acts[int(rnd() * len(acts))])
        done += 1
    return (time.process_time() - t) / done * 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="nintendo")
    ap.add_argument("--steps", type=int, default=20_000, help="positions (and steps) per round (default 20000)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the best counts (default 3)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--yardstick",
        type=Path,
        default=ROOT.parent / "shared" / "yardstick",
        help="the yardstick's directory (default ../shared/yardstick from the repository root)",
    )
    ap.add_argument("--seconds", type=float, default=0.5, help="the yardstick's time per round (default 0.5)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    rules = koikoi.preset(args.rules)
    try:
        from koikoi import env as kenv
    except ImportError:  # the koikoi[rl] extra is missing: only the engine's figures
        kenv = None
    yardstick = load_yardstick(args.yardstick)
    matches = positions(rules, args.steps, args.seed)
    views = [m.observation(m.hand.current_player) for m in matches]
    figures: dict[str, list[float]] = {"observation": [], "bare_match_step": []}  # printed in this order
    if kenv is not None:
        figures.update({"encode": [], "action_mask": [], "env_step": []})
    observed: list[float] = []  # per step, with the observations
    sticks: list[float] = []
    for r in range(args.rounds):
        figures["bare_match_step"].append(time_steps(rules, args.steps, args.seed + r, observe=False))
        observed.append(time_steps(rules, args.steps, args.seed + r, observe=True))
        if kenv is not None:
            figures["encode"].append(time_calls(kenv.encode, views))
            figures["action_mask"].append(time_calls(kenv.action_mask, views))
            figures["env_step"].append(time_env_steps(kenv, args.rules, args.steps, args.seed + r))
        if yardstick is not None:
            sticks.append(yardstick_rate(yardstick, args.seconds))
    stick_us = 1e6 / max(sticks) if sticks else None
    out: dict[str, object] = {
        "benchmark": "observation",
        "rules": args.rules,
        "rounds": args.rounds,
        "positions": args.steps,
        "yardstick_us_per_hand": None if stick_us is None else round(stick_us, 2),
    }
    # Each loop's best round, and the observation the difference of the two bests.
    figures["observation"] = [min(observed) - min(figures["bare_match_step"])]
    for name, values in figures.items():
        best = min(values)
        out[f"{name}_us"] = round(best, 2)
        out[f"{name}_in_yardstick_hands"] = None if stick_us is None else round(best / stick_us, 4)
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"{args.rules}: {args.steps} positions of random matches, best of {args.rounds} interleaved rounds, CPU time")
    if stick_us is None:
        print(f"yardstick: not found in {args.yardstick} (figures without ratios)")
    else:
        print(f"yardstick (pure Python): {stick_us:.1f} µs per hand")
    labels = {
        "observation": "Match.observation()",
        "encode": "env.encode()",
        "action_mask": "env.action_mask()",
        "env_step": "PettingZoo env.step",
        "bare_match_step": "bare Match step",
    }
    for name in figures:
        ratio = out[f"{name}_in_yardstick_hands"]
        shown = "" if ratio is None else f"   ({ratio:.3f} yardstick hands)"
        print(f"  {labels[name]:22s} {out[f'{name}_us']:8.2f} µs{shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
