"""The ``koikoi`` command: score a pile, show rule sets, simulate, play in the terminal, replay records.

Each command is a module of this package with its parser (``add_parser``) and what it runs
(``cmd_<command>``); :mod:`koikoi.cli.common` holds what they share.

>>> main(["score", "--rules", "cardavia", "--json", "pine-crane", "cherry-curtain", "pampas-moon"])
{"yaku": [{"name": "sanko", "points": 6}], "total": 6}
0
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .. import __version__
from ..cards import UnknownCardError
from ..hand import IllegalActionError
from ..rules import PRESET_DESCRIPTIONS, RuleError
from . import admin, arena, bot, db, importer, ladder, play, puzzles, replay, review, rules, score, serve, simulation
from .common import CliError, Parser, data_dir
from .play import PLAY_DEFAULT_OPPONENT, PLAY_DEFAULT_RULES
from .simulation import simulate

# PRESET_DESCRIPTIONS lives in koikoi.rules; it is named here too for code that imported it from the CLI.
__all__ = [
    "main",
    "CliError",
    "build_parser",
    "data_dir",
    "simulate",
    "PLAY_DEFAULT_OPPONENT",
    "PLAY_DEFAULT_RULES",
    "PRESET_DESCRIPTIONS",
]

# The commands in the order 'koikoi --help' lists them.
_COMMANDS = (play, serve, db, ladder, admin, bot, score, rules, simulation, arena, replay, review, puzzles, importer)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="koikoi",
        description="Koi-Koi, the hanafuda card game: play in the terminal, score capture piles, "
        "compare rule sets, simulate, replay and review games.",
        epilog="Run 'koikoi COMMAND --help' for the options of one command.",
    )
    parser.add_argument("--version", action="version", version=f"koikoi {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for command in _COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``koikoi`` command; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help()
            return 2
        status: int = args.func(args)
        return status
    except SystemExit as e:  # --help and --version
        return e.code if isinstance(e.code, int) else 0
    except (CliError, RuleError, UnknownCardError, IllegalActionError) as e:
        print(f"koikoi: error: {e}", file=sys.stderr)
        return 2
    except _record_errors() as e:
        print(f"koikoi: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 1


def _record_errors() -> tuple[type[BaseException], ...]:
    try:
        from ..records import RecordError
    except ImportError:
        return ()
    return (RecordError,)
