"""``koikoi score``: the yaku of a capture pile and their points."""

from __future__ import annotations

import argparse
import json

from ..cards import CARD_NAMES, card
from ..yaku import evaluate
from .common import CliError, Commands, add_rules_args, month_arg, new_console, rules_from


def cmd_score(args: argparse.Namespace) -> int:
    rules = rules_from(args)
    pile = 0
    first_name: dict[int, str] = {}
    for name in args.cards:
        c = card(name)
        if pile >> c & 1:
            same = first_name[c]
            also = f" (as {same!r})" if same.lower() != name.lower() else ""
            raise CliError(f"card {CARD_NAMES[c]!r} is given twice{also}; each card exists once")
        pile |= 1 << c
        first_name[c] = name
    yaku = evaluate(pile, rules, args.month)
    total = sum(y.points for y in yaku)
    if args.json:
        print(json.dumps({"yaku": [{"name": y.name, "points": y.points} for y in yaku], "total": total}))
        return 0
    from rich.table import Table
    from rich.text import Text

    from ..render import cards_block

    console = new_console()
    head = Text(f"{rules.name} rules", style="cyan")
    if args.month:
        head.append(f", month {args.month}")
    head.append(f": {pile.bit_count()} card{'s' if pile.bit_count() != 1 else ''}")
    console.print(head)
    console.print(cards_block(pile))
    if not yaku:
        console.print(Text("no yaku: 0 points", style="bold"))
        return 0
    table = Table(show_header=True, header_style="bold", box=None, padding=(0, 2))
    table.add_column("yaku")
    table.add_column("points", justify="right")
    for y in yaku:
        table.add_row(y.name, str(y.points))
    table.add_row(Text("total", style="bold"), Text(str(total), style="bold"))
    console.print(table)
    console.print(Text("(before multipliers)", style="dim"))
    return 0


def add_parser(sub: Commands) -> None:
    p = sub.add_parser(
        "score",
        help="score a capture pile",
        description="Score a capture pile: each yaku with its points and the total before "
        "multipliers. Cards are named as in docs/rules.md (pine-crane, maple-deer, ...).",
    )
    add_rules_args(p, required=True)
    p.add_argument("--month", type=month_arg, help="the hand's month 1..12 (for tsukifuda)")
    p.add_argument("--json", action="store_true", help='print {"yaku": [{"name", "points"}...], "total"}')
    p.add_argument("cards", nargs="+", metavar="CARD", help="the cards of the pile")
    p.set_defaults(func=cmd_score)
