"""``koikoi simulate``: random self-play statistics.

(Named ``simulation``, not ``simulate``, so that ``koikoi.cli.simulate`` stays the function.)
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

from ..actions import KOIKOI
from ..match import Match
from ..rules import RuleSet
from .common import Commands, add_rules_args, birth_months, integer, month_arg, new_console, positive, rules_from


def simulate(rules: RuleSet, games: int, seed: int, birth_months: tuple[int, int] | None = None) -> dict[str, Any]:
    """Play ``games`` matches of uniformly random legal actions; return the statistics."""
    rng = random.Random(seed)
    getrandbits = rng.getrandbits
    wins = [0, 0]
    draws = 0
    hands = 0
    hand_wins = [0, 0]
    points = 0
    calls = 0
    actions = 0
    endings = {"stop": 0, "exhausted": 0, "hand_bonus": 0}
    start = time.perf_counter()
    for _ in range(games):
        match = Match(rules, seed=rng.getrandbits(63), birth_months=birth_months)
        # Uniformly random actions, each drawn as rng.choice draws it (Match.play_random): the same games
        # for a seed as a loop of apply_action(rng.choice(legal_actions())).
        match.play_random(getrandbits)
        winner = match.winner()
        if winner is None:
            draws += 1
        else:
            wins[winner] += 1
        for h in match.hands:
            r = h.result
            if r is None:
                continue
            hands += 1
            actions += len(h.actions)
            calls += h.actions.count(KOIKOI)
            points += r.points
            endings[r.reason] = endings.get(r.reason, 0) + 1
            if r.winner is not None:
                hand_wins[r.winner] += 1
    seconds = time.perf_counter() - start
    return {
        "rules": rules.name,
        "games": games,
        "seed": seed,
        "hands": hands,
        "actions": actions,
        "seconds": round(seconds, 4),
        "hands_per_second": round(hands / seconds, 1) if seconds else None,
        "games_per_second": round(games / seconds, 1) if seconds else None,
        "wins": wins,
        "draws": draws,
        "hand_wins": hand_wins,
        "mean_points_per_hand": round(points / hands, 4) if hands else 0.0,
        "koikoi_calls_per_hand": round(calls / hands, 4) if hands else 0.0,
        "hand_endings": endings,
    }


def cmd_simulate(args: argparse.Namespace) -> int:
    rules = rules_from(args)
    stats = simulate(rules, args.games, args.seed, birth_months(rules, args.birth_months))
    if args.json:
        print(json.dumps(stats))
        return 0
    from rich.table import Table

    console = new_console()
    table = Table(
        title=f"{args.games} random games, {rules.name} rules, seed {args.seed}",
        title_justify="left",
        box=None,
        show_header=False,
        padding=(0, 2),
    )
    table.add_column(style="bold")
    table.add_column(justify="right")
    hands = stats["hands"]

    def share(n: int, of: int) -> str:
        return f"{n} ({100 * n / of:.1f}%)" if of else str(n)

    table.add_row("hands played", str(hands))
    table.add_row("speed", f"{stats['hands_per_second']:,} hands/s, {stats['games_per_second']:,} games/s")
    table.add_row("wins player 0", share(stats["wins"][0], args.games))
    table.add_row("wins player 1", share(stats["wins"][1], args.games))
    table.add_row("drawn games", share(stats["draws"], args.games))
    table.add_row("mean points per hand", f"{stats['mean_points_per_hand']:.3f}")
    table.add_row("koi-koi calls per hand", f"{stats['koikoi_calls_per_hand']:.3f}")
    for reason, n in stats["hand_endings"].items():
        table.add_row(f"hands ended by {reason.replace('_', ' ')}", share(n, hands))
    console.print(table)
    return 0


def add_parser(sub: Commands) -> None:
    p = sub.add_parser(
        "simulate",
        help="random self-play statistics",
        description="Play matches of uniformly random legal moves (seeded, so repeatable) and "
        "print speed, wins, points, koi-koi calls and how hands ended.",
    )
    add_rules_args(p, required=True)
    p.add_argument("--games", type=positive, required=True, metavar="N", help="number of matches")
    p.add_argument("--seed", type=integer, required=True, metavar="S", help="seed")
    p.add_argument(
        "--birth-months",
        nargs=2,
        type=month_arg,
        metavar=("M0", "M1"),
        help="birth months for dealer_selection=birth_month (default: 1 7)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_simulate)
