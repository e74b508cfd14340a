"""``koikoi ladder``: the computer levels on the players' rating scale (:mod:`koikoi.ladder`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..rules import PRESETS
from .common import CliError, Commands


def cmd_ladder(args: argparse.Namespace) -> int:
    """The computer levels placed on the players' rating scale (koikoi.ladder), written as JSON."""
    from .. import ladder

    levels = [x.strip() for x in args.levels.split(",") if x.strip()]
    unknown = [x for x in levels if x not in ladder.LEVELS]
    if unknown or len(levels) < 2 or ladder.ANCHOR not in levels:
        raise CliError(
            f"--levels takes two or more of {', '.join(ladder.LEVELS)}, {ladder.ANCHOR} among them"
            + (f" (not {', '.join(unknown)})" if unknown else "")
        )
    if args.preset not in PRESETS:
        raise CliError(f"no preset {args.preset!r}; the presets are {', '.join(PRESETS)}")

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    results = ladder.play(args.preset, args.hands, args.games, args.seed, levels, jobs=args.jobs, progress=say)
    ratings = ladder.fit(results)
    out = {
        "preset": args.preset,
        "hands": args.hands,
        "games_per_pair": args.games,
        "seed": args.seed,
        "anchor": {ladder.ANCHOR: ladder.ANCHOR_RATING},
        "results": [{"a": r.a, "b": r.b, "games": r.games, "score_a": r.score} for r in results],
        "ratings": {level: round(ratings[level]) for level in levels},
    }
    text = json.dumps(out, indent=1) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text, end="")
    return 0


def add_parser(sub: Commands) -> None:
    p = sub.add_parser(
        "ladder",
        help="place the computer levels on the players' rating scale by matches between them",
        description="Neighbouring computer levels play matches in the arena; a Bradley-Terry fit on "
        "Elo's scale places them, medium anchored at 1500, the rating a new player starts from "
        "(koikoi.ladder). Prints the ratings as JSON (and writes them to --out).",
    )
    p.add_argument("--preset", default="nintendo", help="the rule set (default: nintendo)")
    p.add_argument("--hands", type=int, default=3, help="hands a match (default: 3)")
    p.add_argument("--games", type=int, default=40, help="matches between each pair of neighbours (default: 40)")
    p.add_argument("--seed", type=int, default=1, help="the arena's seed (default: 1)")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: one per core)")
    p.add_argument("--levels", default="random,easy,medium,hard,expert", help="the levels, weakest first")
    p.add_argument("--out", help="also write the JSON to this file")
    p.set_defaults(func=cmd_ladder)
