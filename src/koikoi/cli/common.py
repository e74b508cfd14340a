"""What the ``koikoi`` commands share: the error, the parser that raises it, the rule-set options, the
number arguments, the console, the data folder and the game records."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import IO, TYPE_CHECKING, NoReturn, TypeAlias

from ..rules import PRESET_NAMES, RuleSet, load_rules, preset

if TYPE_CHECKING:
    from rich.console import Console

    from ..records import GameRecord

# What ArgumentParser.add_subparsers() returns, to which each command module adds its parser (argparse
# documents the method, not the class; typeshed's generic name is spelled as a string, not subscripted
# at run time).
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


class CliError(Exception):
    """A bad input on the command line: printed as one ``koikoi: error:`` line, exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (see '{self.prog} --help')")


# -- the rule set ---------------------------------------------------------------------------------


def add_rules_args(p: argparse.ArgumentParser, *, required: bool, default: str | None = None) -> None:
    hint = f" (default: {default})" if default else ""
    p.add_argument(
        "--rules",
        metavar="PRESET",
        help=f"the rule set: one of {', '.join(PRESET_NAMES)}{hint}"
        + (" (required unless --rules-file is given)" if required else ""),
    )
    p.add_argument("--rules-file", metavar="FILE", help='a TOML rules file (preset = "bga" then options to change)')
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="OPTION=VALUE",
        help="change one rule option (repeatable); 'koikoi rules PRESET' lists them",
    )


def rules_from(args: argparse.Namespace, *, default: str | None = None) -> RuleSet:
    if args.rules and args.rules_file:
        raise CliError("give --rules or --rules-file, not both")
    if args.rules_file:
        rules = load_rules(args.rules_file)
    elif args.rules:
        rules = preset(args.rules)
    elif default is not None:
        rules = preset(default)
    else:
        raise CliError(f"--rules PRESET is required (presets: {', '.join(PRESET_NAMES)})")
    if args.set:
        rules = rules.with_settings(args.set)
    return rules


def birth_months(rules: RuleSet, given: Sequence[int] | None) -> tuple[int, int] | None:
    if given is not None:
        return (given[0], given[1])
    return (1, 7) if rules.dealer_selection == "birth_month" else None


# -- numbers --------------------------------------------------------------------------------------


def whole_number(text: str, low: int, high: int | None, not_a_number: str, out_of_range: str) -> int:
    """An argparse value: a whole number in low..high, with the messages to show otherwise."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(not_a_number.format(repr(text))) from None
    if n < low or (high is not None and n > high):
        raise argparse.ArgumentTypeError(out_of_range.format(n))
    return n


def month_arg(text: str) -> int:
    return whole_number(text, 1, 12, "a month is a number 1..12, not {}", "a month is a number 1..12, not {}")


def positive(text: str) -> int:
    return whole_number(text, 1, None, "expected a whole number, not {}", "expected a number of at least 1, not {}")


def integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None


# -- output, files --------------------------------------------------------------------------------


def new_console(file: IO[str] | None = None) -> Console:
    from ..render import make_console

    return make_console(file)


def data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "koikoi"


def load_records() -> ModuleType:
    """:mod:`koikoi.records`, imported when a command needs it."""
    try:
        from .. import records
    except ImportError as e:  # pragma: no cover - records.py ships with the package
        raise CliError(f"game records are not available: {e}") from None
    return records


def read_record(path: Path) -> GameRecord:
    rec = load_records()
    try:
        record: GameRecord = rec.read_record(path)
    except OSError as e:
        raise CliError(f"cannot read record {path}: {e.strerror or e}") from None
    return record
