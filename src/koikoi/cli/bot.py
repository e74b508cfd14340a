"""``koikoi bot connect``: a bot program plays people on a server (:mod:`koikoi.botconnect`)."""

from __future__ import annotations

import argparse
import re
import sys

from ..rules import PRESETS
from .common import CliError, Commands, integer


def cmd_bot(args: argparse.Namespace) -> int:
    """``koikoi bot connect``: a bot program plays people on a server (koikoi.botconnect)."""
    import logging

    try:
        from .. import botconnect
    except ImportError as e:  # pragma: no cover - httpx and websockets are dependencies
        raise CliError(f"koikoi bot connect needs {e.name}: pip install koikoi") from None
    program = list(args.program)
    if program[:1] == ["--"]:
        program = program[1:]
    if not program:
        raise CliError("give the bot's program after --: koikoi bot connect --server URL --token-file F -- COMMAND")
    if not 1 <= args.games <= 32:
        raise CliError(f"--games is 1 to 32, not {args.games}")
    if not 0.1 <= args.time_limit <= 600:
        raise CliError(f"--time-limit is 0.1 to 600 seconds, not {args.time_limit:g}")
    presets = None
    if args.rules:
        presets = frozenset(x.strip() for x in args.rules.split(",") if x.strip())
        unknown = sorted(presets - set(PRESETS))
        if unknown or not presets:
            raise CliError(
                f"--rules takes presets of {', '.join(PRESETS)}" + (f", not {', '.join(unknown)}" if unknown else "")
            )
    try:
        hands = botconnect.parse_hands(args.hands) if args.hands else None
        seek = botconnect.parse_seek(args.seek) if args.seek else None
    except ValueError as e:
        raise CliError(str(e)) from None
    policy = botconnect.Policy(
        games=args.games,
        presets=presets,
        hands=hands,
        rated="rated" if args.rated_only else "casual" if args.casual_only else "both",
        custom=not args.no_custom,
        time_limit=args.time_limit,
    )
    if seek is not None and botconnect.too_quick(seek["clock"], args.time_limit):
        raise CliError(
            f"--seek: the clock {seek['clock']} gives a decision less than --time-limit {args.time_limit:g} s: "
            "choose a slower clock or a shorter time limit"
        )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("koikoi bot connect: %(asctime)s %(message)s", "%H:%M:%S"))
    logger = logging.getLogger("koikoi.bot")
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING if args.quiet else logging.INFO)
    logger.propagate = False
    try:
        token = botconnect.read_token(args.token_file)
        connector = botconnect.Connector(
            args.server,
            token,
            program,
            policy=policy,
            time_limit=args.time_limit,
            seek=seek,
            logs=args.logs,
            tournaments=args.tournament or [],
        )
    except botconnect.ConnectError as e:
        print(f"koikoi bot connect: {e}", file=sys.stderr)
        return e.code
    return botconnect.run(connector)


def _tournament_id(text: str) -> str:
    """A tournament's id, as its page's address ends (/tournament/<id>), or that address."""
    tid = text.rstrip("/").rsplit("/", 1)[-1]
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", tid):
        raise argparse.ArgumentTypeError(f"{text[:60]!r} is not a tournament's id or address")
    return tid


def add_parser(sub: Commands) -> None:
    p = sub.add_parser(
        "bot",
        help="bots online: link a bot program to a koikoi serve server",
        description='Bots online (docs/web.md, "Bots online"): a program that speaks the bot protocol '
        "(docs/bot-protocol.md), the same that koikoi arena runs, plays people on a server.",
    )
    botsub = p.add_subparsers(dest="bot_command", metavar="COMMAND", title="commands", required=True)
    q = botsub.add_parser(
        "connect",
        help="play people on a server with a bot program",
        description="Keep the bot's stream open on the server, accept the challenges these options "
        "allow (declining the others), and play each game with a new run of COMMAND, which speaks "
        "docs/bot-protocol.md as for koikoi arena. Dropped connections are opened again. A program that "
        "fails stops playing its game (left to the opponent's claim or the clock); the others go on.",
        usage="koikoi bot connect --server URL --token-file FILE [options] -- COMMAND [ARGS...]",
    )
    q.add_argument("--server", required=True, metavar="URL", help="the server, e.g. https://koikoi.example")
    q.add_argument("--token-file", required=True, metavar="FILE", help="a file holding the bot's token (kkb_...)")
    q.add_argument("--games", type=integer, default=1, metavar="N", help="games at once, 1 to 32 (default: 1)")
    q.add_argument("--rules", metavar="PRESETS", help="accept these presets only, e.g. nintendo,bga (default: all)")
    q.add_argument("--hands", metavar="LENGTHS", help="accept these match lengths only: 3, 1,3,6 or 1-6 (default: all)")
    rated = q.add_mutually_exclusive_group()
    rated.add_argument("--rated-only", action="store_true", help="accept rated challenges only")
    rated.add_argument("--casual-only", action="store_true", help="accept casual challenges only")
    q.add_argument("--no-custom", action="store_true", help="decline rules that change a preset's options")
    q.add_argument(
        "--time-limit",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="the program's time for each decision, as the arena's --time-limit (default: 5)",
    )
    q.add_argument(
        "--seek",
        metavar="PRESET:HANDS[:rated][:CLOCK]",
        help="keep a seek open in the lobby while there is room for a game, e.g. nintendo:3:rated:10+60 "
        "(a rated seek has a time control)",
    )
    q.add_argument(
        "--tournament",
        action="append",
        type=_tournament_id,
        metavar="ID",
        help="join this tournament (repeatable; one that allows bots): its matches are played as they come",
    )
    q.add_argument("--logs", metavar="DIR", help="keep each game's stderr of the program in DIR")
    q.add_argument("--quiet", action="store_true", help="say only what goes wrong")
    q.add_argument("program", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]", help="the bot's program")
    q.set_defaults(func=cmd_bot)
