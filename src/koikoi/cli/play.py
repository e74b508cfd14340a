"""``koikoi play``: a match against the computer in the terminal (:mod:`koikoi.terminal`)."""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..match import Match
from ..terminal import ON_TIME, PlayClock, PlaySession, ended_early
from .common import (
    CliError,
    Commands,
    add_rules_args,
    birth_months,
    data_dir,
    integer,
    load_records,
    month_arg,
    new_console,
    read_record,
    rules_from,
    whole_number,
)

# The web lobby's defaults (lobby.js, lobby.html), so that a first game is the same game everywhere.
PLAY_DEFAULT_RULES = "nintendo"
PLAY_DEFAULT_OPPONENT = "medium"


# The levels a person plays: not every agent of koikoi.ai. hard-v1, the old hard frozen as a yardstick
# for measuring later versions, is for 'koikoi arena' only. The same as koikoi.ai.registry's
# playable_levels() (tests/test_cli.py holds them equal), written out so that building the parser,
# which every koikoi command does, does not load the computer players.
PLAY_OPPONENTS = ("random", "greedy", "easy", "medium", "hard", "expert")


def opponent_of_record(players: Sequence[dict[str, Any]]) -> str | None:
    """The computer level a saved game was played against, if it is one 'koikoi play' offers."""
    for p in players[1:]:
        ai = p.get("ai")
        if p.get("kind") == "computer" and ai in PLAY_OPPONENTS:
            return str(ai)
    return None


def _latest_unfinished() -> Path:
    rec = load_records()
    folder = data_dir() / "games"
    candidates = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True) if folder.is_dir() else []
    for path in candidates:
        try:
            record = rec.read_record(path)
            match = rec.replay(record)
        except (rec.RecordError, OSError):
            continue
        if not match.is_over() and ended_early(record.metadata) is None:
            return path
    raise CliError(f"no unfinished game to resume in {folder}; start one with 'koikoi play'")


def _play_clock(args: argparse.Namespace, interactive: bool) -> PlayClock | None:
    """The player's clock that --time-control and --on-time ask for (None without one)."""
    from ..clocks import REAL_TIME, ClockError, time_control

    if args.time_control is None:
        if args.on_time is not None:
            raise CliError("--on-time says what happens when your clock runs out: it needs --time-control")
        return None
    choices = f"{' or '.join(REAL_TIME)} (seconds a decision + seconds in the bank; any such pair, e.g. 5+30)"
    try:
        control = time_control(args.time_control)
    except ClockError:
        raise CliError(f"--time-control: {args.time_control[:40]!r} is not a time control; choose {choices}") from None
    if control.correspondence:
        raise CliError(
            f"--time-control: {control.id} is a correspondence control (days a move), for games on the web; "
            f"at the terminal choose {choices}"
        )
    _clock_needs_a_terminal(interactive)
    return PlayClock(control, args.on_time or "lose")


def _clock_needs_a_terminal(interactive: bool, what: str = "--time-control") -> None:
    from .. import ttyline

    if not ttyline.AVAILABLE:
        raise CliError(f"{what} needs a POSIX terminal (the clock reads keys one by one)")
    if not interactive:
        raise CliError(
            f"{what} needs a terminal: the clock counts down on the screen while you type, so standard "
            "input and output cannot be a pipe or a file"
        )


def _play_hands(text: str) -> int:
    return whole_number(text, 1, 12, "--hands is a number of hands, 1 to 12, not {}", "--hands is 1 to 12, not {}")


def cmd_play(args: argparse.Namespace) -> int:
    console = new_console()
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if args.resume:
        if args.rules or args.rules_file or args.set or args.seed is not None or args.hands is not None:
            raise CliError(
                "--resume continues a saved game with its own rules and seed; "
                "drop --rules/--rules-file/--set/--hands/--seed"
            )
        if args.time_control is not None or args.on_time is not None:
            raise CliError(
                "--resume continues a saved game with its own clock (or none); drop --time-control/--on-time"
            )
        rec = load_records()
        path = Path(args.record) if args.record else _latest_unfinished()
        record = read_record(path)
        match = rec.replay(record)
        if match.is_over():
            raise CliError(f"the game in {path} is already over; replay it with 'koikoi replay {path}'")
        ending = ended_early(record.metadata)
        if ending is not None:
            how = "on time" if ending[0] == "time" else f"by {ending[0]}"
            raise CliError(f"the game in {path} ended {how}; replay it with 'koikoi replay {path}'")
        clock = None
        if "clock" in record.metadata:
            try:
                clock = PlayClock.from_record(record.metadata["clock"])
            except ValueError as e:
                raise CliError(f"{path}: the game's clock cannot be read: {e}") from None
            _clock_needs_a_terminal(interactive, f"this game is played on a clock ({clock.control.id}): it")
        name = args.name or record.players[0].get("name") or "You"
        # "greedy": records from before the default changed
        opponent = args.opponent or opponent_of_record(record.players) or "greedy"
        ai_seed = record.players[1].get("ai_seed") if len(record.players) > 1 else None
        console.print(f"Resuming the game in {path}", markup=False, highlight=False, soft_wrap=True)
    else:
        clock = _play_clock(args, interactive)
        if args.hands is not None:
            if any(setting.split("=", 1)[0].strip() == "hands" for setting in args.set):
                raise CliError("give --hands N or --set hands=N, not both")
            args.set = [*args.set, f"hands={args.hands}"]
        rules = rules_from(args, default=PLAY_DEFAULT_RULES)
        seed = args.seed if args.seed is not None else random.SystemRandom().getrandbits(31)
        try:
            match = Match(rules, seed=seed, birth_months=birth_months(rules, args.birth_months))
        except ValueError as e:
            raise CliError(str(e)) from None
        if args.record:
            path = Path(args.record)
            if path.exists():
                _refuse_unfinished(path)
        else:
            path = _new_record_path()
        name = args.name or "You"
        opponent = args.opponent or PLAY_DEFAULT_OPPONENT
        ai_seed = None
    session = PlaySession(match, path, name, opponent, console, interactive=interactive, ai_seed=ai_seed, clock=clock)
    return session.run()


def _new_record_path() -> Path:
    # Named by time only: the seed would tell the player the stock order before the game ends.
    folder = data_dir() / "games"
    stem = time.strftime("%Y%m%d-%H%M%S")
    path = folder / f"{stem}.json"
    n = 1
    while path.exists():  # never overwrite another game
        n += 1
        path = folder / f"{stem}-{n}.json"
    return path


def _refuse_unfinished(path: Path) -> None:
    rec = load_records()
    try:
        record = rec.read_record(path)
        match = rec.replay(record)
    except (rec.RecordError, OSError, ValueError):
        raise CliError(f"{path} exists and is not a game record; choose another --record file") from None
    if not match.is_over() and ended_early(record.metadata) is None:
        raise CliError(
            f"{path} holds an unfinished game; continue it with 'koikoi play --resume --record {path}' "
            "or choose another --record file"
        )


def add_parser(sub: Commands) -> None:
    p = sub.add_parser(
        "play",
        help="play a match against the computer in the terminal",
        description="Play a match against a computer player. Type the number of a card to "
        "play it; every move is saved, so 'koikoi play --resume' continues.",
    )
    add_rules_args(p, required=False, default=PLAY_DEFAULT_RULES)
    p.add_argument(
        "--hands",
        type=_play_hands,
        metavar="N",
        help="hands in the match, 1 to 12 (as --set hands=N; default: the rule set's), e.g. 1 for a quick game",
    )
    p.add_argument("--seed", type=integer, help="seed of the shuffles (default: random)")
    p.add_argument(
        "--opponent",
        choices=PLAY_OPPONENTS,
        help=f"the computer player: random, easy (greedy), medium, hard or expert (default: {PLAY_DEFAULT_OPPONENT})",
    )
    p.add_argument("--name", help="your name (default: You)")
    p.add_argument(
        "--record",
        metavar="FILE",
        help="where to save the game record after every move (default: a new file under $XDG_DATA_HOME/koikoi/games)",
    )
    p.add_argument(
        "--resume", action="store_true", help="continue an unfinished game: the --record FILE, or the latest saved one"
    )
    p.add_argument(
        "--birth-months",
        nargs=2,
        type=month_arg,
        metavar=("YOURS", "COMPUTER"),
        help="birth months for dealer_selection=birth_month (default: 1 7)",
    )
    p.add_argument(
        "--time-control",
        metavar="S+B",
        help="play on a clock (needs a terminal): S seconds each decision, then a bank of B seconds for the match "
        "that does not refill, e.g. 10+60 or 20+120 (default: no clock)",
    )
    p.add_argument(
        "--on-time",
        choices=ON_TIME,
        help="when your clock runs out: lose the match, or let the computer (easy) make that decision and go on "
        "(default: lose)",
    )
    p.set_defaults(func=cmd_play)
