"""``koikoi review``: where a player lost points in a game record (:mod:`koikoi.review`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

from .common import CliError, Commands, new_console, positive, read_record


def cmd_review(args: argparse.Namespace) -> int:
    from .. import review

    path = Path(args.file)
    record = read_record(path)
    try:
        player = review.choose_player(record, args.player)
    except ValueError as e:
        raise CliError(str(e)) from None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = None
    if not args.json and sys.stderr.isatty():
        bar = Progress(
            TextColumn("decisions"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
    task = None

    def progress(done: int, total: int) -> None:
        nonlocal task
        if bar is None:
            return
        if task is None:
            task = bar.add_task("decisions", total=total)
            bar.start()
        bar.update(task, completed=done)

    try:
        doc = review.review_record(record, player, playouts=args.budget, progress=progress)
    finally:
        if bar is not None:
            bar.stop()
    if args.json:
        print(json.dumps(doc))
        return 0
    _print_review(doc, path)
    return 0


def _console_wide() -> Console:
    # Into a file or a pipe a review's table is read whole: lines as long as its rows, not 80 columns.
    from ..render import make_console

    return make_console(width=200)


def _print_review(doc: dict[str, Any], path: Path) -> None:
    from rich.text import Text

    from ..reviewtable import review_table

    console = new_console()
    # On a terminal the lines wrap between words, to its width; into a file or a pipe they are kept
    # whole (whatever COLUMNS says: readline exports it to every child of an interactive Python).
    whole = not console.is_terminal
    if whole:
        console = _console_wide()
    s = doc["summary"]
    console.print(
        Text(
            f"Review of {doc['name']} (player {doc['player']}) in {path} · {doc['rules']} rules · "
            f"{doc['engine']['playouts']:,} playouts a decision",
            style="bold",
        ),
        highlight=False,
        soft_wrap=whole,
    )
    console.print(review_table(doc, console.width))
    console.print(
        Text(
            f"{s['decisions']} decisions with a choice; {s['points_lost']:.2f} points lost in all; "
            f"{s['mistakes']} mistakes (more than {doc['threshold']:g} point lost and more than "
            f"{doc.get('noise_factor', 2):g} standard errors, or a koi-koi that cost the hand: "
            f"{s['koikoi_mistakes']}); ± is the playouts' standard error",
            style="bold",
        ),
        highlight=False,
        soft_wrap=whole,
    )


def add_parser(sub: Commands) -> None:
    p = sub.add_parser(
        "review",
        help="find where a player lost points in a game record",
        description="Replay a game record and judge every decision of one player with the strongest "
        "search: the value of the move played and of the best move in points of the hand, the points "
        "lost, the costly mistakes (more than 1 point, or a koi-koi that cost the hand) and why. The "
        "same record always gives the same review (docs/review.md).",
    )
    p.add_argument("file", metavar="RECORD", help="a game record (as saved by 'koikoi play' or the web app)")
    p.add_argument("--player", metavar="0|1|NAME", help="the player to review (default: the human player, else 0)")
    p.add_argument(
        "--budget",
        type=positive,
        metavar="PLAYOUTS",
        help="playouts per decision (default: the expert level's; fewer is faster and rougher)",
    )
    p.add_argument("--json", action="store_true", help="print the review as JSON (docs/review.md)")
    p.set_defaults(func=cmd_review)
