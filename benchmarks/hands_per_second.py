"""Random full hands on one core, through the Hand API, the Match API and ``koikoi simulate``, against the
pure-Python yardstick in the same run: prints hands per CPU-second and the ratios.

    python3 benchmarks/hands_per_second.py [--rules PRESET|all] [--hands N] [--rounds R] [--seed S]
        [--yardstick DIR] [--seconds T] [--stdlib-shuffle] [--json]

``Hand`` API: each hand is dealt from a random deck order (redeals included: a deal that must be thrown
in costs its time and is dealt again) and played to its end with uniformly random legal actions
(koi-koi or stop at random too), through ``Hand.legal_actions`` and ``Hand.apply_action``, the calls an
AI makes. The deck orders are the harness's, not the engine's, and are made before the timing starts:
with NumPy when it is installed, else with ``random.shuffle`` (``--stdlib-shuffle`` forces that).

``Match`` API: whole matches of ``koikoi.Match`` (the engine shuffles and deals, from its seed) played
with random legal actions through ``Match.legal_actions`` and ``Match.apply_action``; hands counted are
the hands that ended. ``simulate``: ``koikoi simulate``'s own loop (``koikoi.cli.simulate``).

The yardstick is ``python_hands_per_second`` of ``yardstick.py`` in ``--yardstick`` (default
``../shared/yardstick`` from the repository root); without it the figures are printed without ratios.
Timing is CPU time (``time.process_time``) in interleaved rounds (Hand, Match, simulate, yardstick,
then again), and each figure is the best of its rounds: the machine's other load only slows rounds down.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import time
from functools import partial
from pathlib import Path

import koikoi
from koikoi.hand import Hand

try:
    import numpy as np
except ImportError:  # pragma: no cover - the figure then includes a pure-Python shuffle per hand
    np = None

ROOT = Path(__file__).resolve().parents[1]


def random_decks(count: int, seed: int, stdlib: bool) -> list[list[int]]:
    """``count`` random deck orders (lists of the 48 card ids), made before the timing starts."""
    if np is not None and not stdlib:
        gen = np.random.default_rng(seed)
        return gen.permuted(np.tile(np.arange(48, dtype=np.int64), (count, 1)), axis=1).tolist()
    rng = random.Random(seed)
    decks = []
    for _ in range(count):
        deck = list(range(48))
        rng.shuffle(deck)
        decks.append(deck)
    return decks


def play_hands(rules: koikoi.RuleSet, decks: list[list[int]], n: int, seed: int) -> tuple[int, int]:
    """Play ``n`` hands with random legal actions through the Hand API, dealt from ``decks`` in turn (a
    deal thrown in takes the next deck); return (hands, actions)."""
    # random.Random.choice costs more than the engine's own work per action; indexing with
    # random() keeps the harness's share of the measured time small.
    rnd = random.Random(seed).random
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
    if played < n:
        raise RuntimeError(f"{len(decks)} decks dealt only {played} playable hands")
    return played, actions


def play_matches(rules: koikoi.RuleSet, n: int, seed: int) -> tuple[int, int]:
    """Play whole matches with random legal actions through the Match API until ``n`` hands have
    ended; return (hands, actions)."""
    rnd = random.Random(seed).random
    birth = (2, 9) if rules.dealer_selection == "birth_month" else None
    hands = actions = 0
    match_seed = seed * 1_000_003
    while hands < n:
        match_seed += 1
        m = koikoi.Match(rules, seed=match_seed, birth_months=birth)
        legal, apply = m.legal_actions, m.apply_action
        acts = legal()
        while acts:  # empty exactly when the match is over
            apply(acts[int(rnd() * len(acts))])
            actions += 1
            acts = legal()
        hands += sum(1 for h in m.hands if h.result is not None)
    return hands, actions


def simulated(rules: koikoi.RuleSet, games: int, seed: int, birth: tuple[int, int] | None) -> tuple[int, None]:
    """``koikoi simulate``'s loop (its own function); return (hands, None)."""
    from koikoi.cli import simulate

    return simulate(rules, games, seed, birth)["hands"], None


def load_yardstick(directory: Path):
    """``python_hands_per_second`` from ``directory/yardstick.py``, or None when it is not there."""
    path = directory / "yardstick.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("_koikoi_bench_yardstick", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.python_hands_per_second


def cpu_rate(fn) -> tuple[float, float]:
    """(units per CPU-second, extra) for ``fn() -> (units, extra)``."""
    t = time.process_time()
    units, extra = fn()
    return units / (time.process_time() - t), extra


def yardstick_rate(python_hands_per_second, seconds: float) -> float:
    # The yardstick reports hands per wall-clock second over its own loop; the hands it played are
    # that rate times the wall time, and they are divided by the CPU time instead.
    w, t = time.perf_counter(), time.process_time()
    per_wall = python_hands_per_second(seconds)
    hands = per_wall * (time.perf_counter() - w)
    return hands / (time.process_time() - t)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="nintendo", help="a preset name, or 'all' (default nintendo)")
    ap.add_argument("--hands", type=int, default=3000, help="hands per round and API (default 3000)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds; the best counts (default 5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--yardstick",
        type=Path,
        default=ROOT.parent / "shared" / "yardstick",
        help="the yardstick's directory (default ../shared/yardstick from the repository root)",
    )
    ap.add_argument("--seconds", type=float, default=0.5, help="the yardstick's time per round (default 0.5)")
    ap.add_argument("--stdlib-shuffle", action="store_true", help="make the Hand-API decks with random.shuffle")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    from koikoi.cli import simulate

    names = koikoi.PRESET_NAMES if args.rules == "all" else (args.rules,)
    yardstick = load_yardstick(args.yardstick)
    games = {}  # matches per simulate round: about --hands hands
    for name in names:
        rules = koikoi.preset(name)
        birth = (2, 9) if rules.dealer_selection == "birth_month" else None
        play_hands(rules, random_decks(400, args.seed + 10_000, args.stdlib_shuffle), 300, 0)  # warm up
        probe = simulate(rules, 20, args.seed, birth)
        games[name] = max(1, round(args.hands * 20 / max(probe["hands"], 1)))
    rates: dict[str, dict[str, list[float]]] = {name: {"hand": [], "match": [], "simulate": []} for name in names}
    per_hand: dict[str, float] = {}
    sticks: list[float] = []
    for r in range(args.rounds):
        for name in names:
            rules = koikoi.preset(name)
            birth = (2, 9) if rules.dealer_selection == "birth_month" else None
            decks = random_decks(args.hands * 11 // 10 + 50, args.seed + r, args.stdlib_shuffle)  # some are thrown in
            rate, actions = cpu_rate(partial(play_hands, rules, decks, args.hands, args.seed + r))
            rates[name]["hand"].append(rate)
            per_hand[name] = actions / args.hands
            rates[name]["match"].append(cpu_rate(partial(play_matches, rules, args.hands, args.seed + r))[0])
            rates[name]["simulate"].append(cpu_rate(partial(simulated, rules, games[name], args.seed + r, birth))[0])
        if yardstick is not None:
            sticks.append(yardstick_rate(yardstick, args.seconds))
    stick = max(sticks) if sticks else None
    out = {
        "benchmark": "hands_per_second",
        "rounds": args.rounds,
        "hands_per_round": args.hands,
        "decks": "random.shuffle" if args.stdlib_shuffle or np is None else "NumPy",
        "yardstick_python_hands_per_cpu_second": None if stick is None else round(stick),
        "rules": {},
    }
    for name in names:
        row: dict[str, object] = {"actions_per_hand": round(per_hand[name], 2)}
        for api in ("hand", "match", "simulate"):
            best = max(rates[name][api])
            row[f"{api}_api_hands_per_cpu_second" if api != "simulate" else "simulate_hands_per_cpu_second"] = round(
                best
            )
            row[f"{api}_ratio"] = None if stick is None else round(best / stick, 3)
        out["rules"][name] = row  # type: ignore[index]
    if args.json:
        print(json.dumps(out))
        return 0
    print(
        f"random full hands, one process, best of {args.rounds} interleaved rounds, CPU time; "
        f"Hand-API decks from {out['decks']}"
    )
    if stick is None:
        print(f"yardstick: not found in {args.yardstick} (figures without ratios)")
    else:
        print(f"yardstick (pure Python, {args.yardstick}): {stick:,.0f} hands per CPU-second")
    for name in names:
        row = out["rules"][name]  # type: ignore[index]
        print(f"{name} ({row['actions_per_hand']} actions per hand):")
        for label, key, ratio in (
            ("Hand API", "hand_api_hands_per_cpu_second", "hand_ratio"),
            ("Match API", "match_api_hands_per_cpu_second", "match_ratio"),
            ("koikoi simulate", "simulate_hands_per_cpu_second", "simulate_ratio"),
        ):
            shown = "" if row[ratio] is None else f"   {row[ratio]:.2f}x the yardstick"
            print(f"  {label:16s} {row[key]:9,} hands per CPU-second{shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
