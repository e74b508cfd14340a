"""``koikoi puzzles``: make puzzles from games between computer players (:mod:`koikoi.puzzlegen`), and check a
puzzle file; ``koikoi serve`` imports them (``koikoi puzzles import`` into a server's database)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from .common import CliError, Commands, data_dir, positive


def cmd_generate(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from ..puzzlegen import GameDone, GenerateSettings, generate
    from ..puzzles import PuzzleError
    from ..rules import PRESETS

    if args.rules not in PRESETS:
        raise CliError(f"no rule preset {args.rules!r}; the presets are {', '.join(PRESETS)}")
    settings = GenerateSettings(
        games=args.games, seed=args.seed, rules=args.rules, **({"playouts": args.budget} if args.budget else {})
    )
    # The command line, kept in the file's header: what made it, to make it again.
    words = ["--games", str(args.games), "--seed", str(args.seed), "--jobs", str(args.jobs), "--rules", args.rules]
    if args.budget:
        words += ["--budget", str(args.budget)]
    command = "koikoi puzzles generate " + " ".join(shlex.quote(w) for w in [*words, "--out", args.out])
    bar = None
    if sys.stderr.isatty():
        bar = Progress(
            TextColumn("games"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[found]} puzzles"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        task = bar.add_task("games", total=args.games, found=0)
        bar.start()
    found = 0

    def progress(done: GameDone, count: int, total: int) -> None:
        nonlocal found
        found += len(done.puzzles)
        if bar is not None:
            bar.update(task, completed=count, found=found)
        else:
            print(f"game {done.game}: {len(done.puzzles)} puzzles ({count}/{total} games done)", file=sys.stderr)

    try:
        played = generate(settings, args.out, jobs=args.jobs, command=command, progress=progress)
    except PuzzleError as e:
        raise CliError(str(e)) from None
    finally:
        if bar is not None:
            bar.stop()
    games = "1 game" if played == 1 else f"{played} games"
    print(f"{games} played now, {found} puzzles found in them; all in {args.out}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from ..puzzlegen import puzzles_in
    from ..puzzles import PuzzleError

    try:
        count = sum(1 for _ in puzzles_in(Path(args.file)))
    except (OSError, PuzzleError) as e:
        raise CliError(str(e)) from None
    print(f"{args.file}: {count} puzzles, every one replays and its line is legal")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from ..puzzlegen import puzzles_in
    from ..puzzles import PuzzleError

    try:
        from ..web.puzzlestore import PuzzleStore
        from ..web.store import Store, StoreError
    except ImportError as e:
        raise CliError(f"the web app needs its libraries ({e.name} is missing): pip install koikoi") from None
    try:
        found = list(puzzles_in(Path(args.file)))
    except (OSError, PuzzleError) as e:
        raise CliError(str(e)) from None
    url = args.database_url or str(data_dir() / "koikoi.db")
    try:
        store = Store(url, upgrade=True)
    except StoreError as e:
        raise CliError(str(e)) from None
    try:
        added = PuzzleStore(store).add_puzzles(found)
    finally:
        store.close()
    print(f"{args.file}: {len(found)} puzzles, {added} new in {store.sqlite_path or store.shown_url}")
    return 0


def add_parser(sub: Commands) -> None:
    p = sub.add_parser(
        "puzzles",
        help="make puzzles from games between computer players",
        description="Puzzles are positions from games between computer players in which one move is "
        "clearly the best (docs/puzzles.md).",
    )
    inner = p.add_subparsers(dest="puzzles_command", metavar="ACTION", required=True)
    g = inner.add_parser(
        "generate",
        help="play games and write the puzzles found in them",
        description="Play the first hand of GAMES matches between computer players and search every "
        "decision for one move that is clearly the best (1.5 points of the hand better than every other, "
        "beyond four standard errors, confirmed at ten times the budget). Deterministic for a seed; a "
        "run stopped and started again with the same file goes on where it was.",
    )
    g.add_argument("--games", type=positive, required=True, help="how many games to play")
    g.add_argument("--seed", type=int, default=0, help="the run's seed (default 0)")
    g.add_argument("--jobs", type=positive, default=1, help="worker processes (default 1)")
    g.add_argument("--rules", default="nintendo", metavar="PRESET", help="the rule preset (default nintendo)")
    g.add_argument("--budget", type=positive, metavar="PLAYOUTS", help="the review's budget (default the expert's)")
    g.add_argument("--out", required=True, metavar="FILE", help="the puzzle file to write (or to go on with)")
    g.set_defaults(func=cmd_generate)
    c = inner.add_parser("check", help="read a puzzle file and check every puzzle in it")
    c.add_argument("file", metavar="FILE")
    c.set_defaults(func=cmd_check)
    i = inner.add_parser(
        "import",
        help="add a puzzle file's puzzles to a server's database",
        description="Add the puzzles of a puzzle file (made by 'koikoi puzzles generate') to the database of "
        "'koikoi serve'; those already there keep their ratings. A server imports the shipped set by itself "
        "at its first start.",
    )
    i.add_argument("file", metavar="FILE")
    i.add_argument(
        "--database-url",
        metavar="URL",
        help="the database: a file path or SQLAlchemy URL (default: the SQLite file koikoi serve uses)",
    )
    i.set_defaults(func=cmd_import)
