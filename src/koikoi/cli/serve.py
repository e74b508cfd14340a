"""``koikoi serve``: the web app on a port."""

from __future__ import annotations

import argparse
import errno
import socket

from .. import __version__
from .common import CliError, Commands, data_dir, whole_number
from .db import upgrade_done


def _port(text: str) -> int:
    return whole_number(text, 1, 65535, "expected a port number, not {}", "a port is 1..65535, not {}")


def _nonnegative_seconds(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {text!r}") from None
    if not 0 <= x <= 60:
        raise argparse.ArgumentTypeError(f"expected 0 to 60 seconds, not {text}")
    return x


def _limit_names() -> list[str]:
    try:
        from ..web.limits import Limits
    except ImportError:  # pragma: no cover - the web app's libraries are missing; serve says so
        return []
    return [name for name, _default, _doc in Limits.docs()]


def _check_port(host: str, port: int) -> None:
    """Bind the address as the server will (uvicorn: IPv6 for a host with ':', SO_REUSEADDR), then let go."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
    except OSError as e:
        reason = "the port is in use" if e.errno == errno.EADDRINUSE else (e.strerror or str(e))
        raise CliError(f"cannot listen on {host}:{port}: {reason}") from None


def _workers_arg(text: str) -> int:
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= 64:
        raise argparse.ArgumentTypeError(f"{text[:20]!r} is not a number of processes 1..64")
    return int(text)


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from ..web.app import create_app
        from ..web.cardart import CardArtError
        from ..web.limits import LimitError, Limits, parse_limit
        from ..web.schedule import ScheduleError
        from ..web.server import run
        from ..web.store import StoreError
    except ImportError as e:
        raise CliError(f"the web app needs its libraries ({e.name} is missing): pip install koikoi") from None
    _check_port(args.host, args.port)  # before anything is printed or created: a busy port is the only message
    url = args.database_url or str(data_dir() / "koikoi.db")
    try:
        limits = Limits().with_changes(dict(parse_limit(x) for x in args.limit or ()))
    except LimitError as e:
        raise CliError(f"--limit: {e}") from None
    extra_controls = tuple(args.time_control or ())
    try:
        from ..clocks import ClockError, time_control

        for c in extra_controls:
            time_control(c)
    except ClockError as e:
        raise CliError(f"--time-control: {e}") from None
    try:
        app = create_app(
            url,
            card_art=args.card_art,
            ai_delay=args.ai_delay,
            limits=limits,
            time_controls=extra_controls,
            tournaments=args.tournaments,
        )
        store = app.state.store
        if store.is_sqlite:
            if args.workers > 1:
                raise StoreError(
                    f"--workers {args.workers} needs PostgreSQL: an SQLite database is served by one process "
                    "(give --database-url postgresql://user:password@host/dbname)"
                )
            store.hold_sqlite()  # a second koikoi serve on the same file is refused, and says why
    except (StoreError, CardArtError, ScheduleError) as e:
        raise CliError(str(e)) from None
    where = store.sqlite_path or store.shown_url
    print(f"koikoi {__version__}: games are kept in {where}")
    if store.upgraded is not None and store.upgraded.changed:
        print(f"its schema: {upgrade_done(store.upgraded)}")
    if args.card_art:
        print(f"card faces from {args.card_art}")
    print(
        f"open http://{'localhost' if args.host in ('0.0.0.0', '::') else args.host}:{args.port} in your browser "
        "(Ctrl+C stops the server; games continue where they were when it starts again)",
        flush=True,
    )
    try:
        if args.workers > 1:
            from ..web.supervisor import run_workers

            store.close()  # the workers open their own
            settings = {
                "database_url": url,
                "card_art": args.card_art,
                "ai_delay": args.ai_delay,
                "time_controls": extra_controls,
                "tournaments": args.tournaments,
                "limits": dict(parse_limit(x) for x in args.limit or ()),
                "forwarded_allow_ips": args.forwarded_allow_ips,
            }
            print(f"{args.workers} server processes share the port", flush=True)
            return run_workers(settings, host=args.host, port=args.port, workers=args.workers)
        run(app, host=args.host, port=args.port, limits=limits, forwarded_allow_ips=args.forwarded_allow_ips)
    except OSError as e:
        raise CliError(f"cannot listen on {args.host}:{args.port}: {e.strerror or e}") from None
    return 0


def add_parser(sub: Commands) -> None:
    p = sub.add_parser(
        "serve",
        help="run the web app: play in the browser against the computer or a friend",
        description="Start the web app. Games are kept in a database (by default an SQLite file "
        "in your data folder, shown at start), so nothing is lost when it stops.",
    )
    p.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1; 0.0.0.0 for every interface)"
    )
    p.add_argument("--port", type=_port, default=8000, help="port (default: 8000)")
    p.add_argument(
        "--database-url",
        metavar="URL",
        help="where to keep the games: a file path or SQLAlchemy URL, e.g. "
        "postgresql://user:password@host/dbname (default: an SQLite file in the data folder)",
    )
    p.add_argument(
        "--card-art",
        metavar="DIR",
        help="a folder of card images named m<month>-<index>.svg (index 0 = the month's highest card)",
    )
    p.add_argument(
        "--ai-delay",
        type=_nonnegative_seconds,
        default=0.6,
        help="seconds the computer waits before each move, so that its play can be followed (default: 0.6)",
    )
    p.add_argument(
        "--time-control",
        action="append",
        metavar="CONTROL",
        help="offer one more time control besides the standard ones (repeatable), e.g. 3+5 for a quick test "
        "or an event: seconds a decision + seconds in the bank, or days a move (3d)",
    )
    p.add_argument(
        "--tournaments",
        metavar="FILE",
        help="a TOML file of tournaments to make on a schedule (an hourly arena, a daily Swiss event, ...); "
        'docs/web.md, "Scheduled tournaments", shows one',
    )
    p.add_argument(
        "--limit",
        action="append",
        metavar="NAME=VALUE",
        help="change one of the server's limits (repeatable), e.g. --limit games_per_minute=60; "
        "docs/web.md lists them all: " + ", ".join(_limit_names()),
    )
    p.add_argument(
        "--forwarded-allow-ips",
        metavar="IPS",
        help="behind a reverse proxy: the proxy's addresses (comma-separated), whose "
        "X-Forwarded-For then gives the client's address for the per-address limits",
    )
    p.add_argument(
        "--workers",
        type=_workers_arg,
        default=1,
        metavar="N",
        help="server processes on this port (default: 1); more than one needs a PostgreSQL database, "
        "which any number of koikoi serve processes, here or on other hosts, can share",
    )
    p.set_defaults(func=cmd_serve)
