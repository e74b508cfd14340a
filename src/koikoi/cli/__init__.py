"""The ``koikoi`` command: score a pile, show rule sets, simulate, play in the terminal, replay records.

>>> main(["score", "--rules", "cardavia", "--json", "pine-crane", "cherry-curtain", "pampas-moon"])
{"yaku": [{"name": "sanko", "points": 6}], "total": 6}
0
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import random
import socket
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from .. import __version__
from ..actions import KOIKOI, action_name
from ..cards import CARD_NAMES, UnknownCardError, card
from ..hand import IllegalActionError
from ..match import Match
from ..rules import PRESET_NAMES, PRESETS, YAKU_OPTIONS, RuleError, RuleSet, load_rules, option_help, preset
from ..terminal import ON_TIME, PlayClock, PlaySession, ended_early
from ..yaku import evaluate

__all__ = ["main", "CliError"]


class CliError(Exception):
    """A bad input on the command line: printed as one ``koikoi: error:`` line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (see '{self.prog} --help')")


PRESET_DESCRIPTIONS = {
    "traditional": "the classic rules (seed 000): a base of 7+ doubles, no koi-koi bonus, a draw when "
    "the stock runs out, 12 hands",
    "bga": "Board Game Arena (seed 001): +1 multiplier per koi-koi, brights on the table multiply, "
    "50 points each that the loser pays, 6 hands",
    "boardgame": "the boxed board game (seed 002): wild sake cup, sake yaku only as a bonus, tsukifuda, "
    "first to 50 (needs birth months)",
    "cardavia": "Cardavia (seed 003): a single hand, higher bright values, no sake yaku, no multipliers",
    "wikipedia": "Wikipedia (seed 004): 7+ doubles, winning after the opponent's koi-koi doubles, "
    "1 point to the dealer when the stock runs out",
    "nintendo": "Nintendo's rule sheet: +1 per extra card on ino-shika-cho/akatan/aotan, akatan+aotan "
    "10, 7+ and the opponent's koi-koi double",
    "traditional-all-doubles": "seed 000 with all doublings: 7+, one's own koi-koi and the opponent's "
    "koi-koi each double (x2 x2 = x4)",
}


def _yaku_label(option: str) -> str:
    return option.replace("_", "-")


# -- shared argument handling ---------------------------------------------------------------------


def _add_rules_args(p: argparse.ArgumentParser, *, required: bool, default: str | None = None) -> None:
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


def _rules_from(args: argparse.Namespace, *, default: str | None = None) -> RuleSet:
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


def _whole_number(text: str, low: int, high: int | None, not_a_number: str, out_of_range: str) -> int:
    """An argparse value: a whole number in low..high, with the messages to show otherwise."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(not_a_number.format(repr(text))) from None
    if n < low or (high is not None and n > high):
        raise argparse.ArgumentTypeError(out_of_range.format(n))
    return n


def _month_arg(text: str) -> int:
    return _whole_number(text, 1, 12, "a month is a number 1..12, not {}", "a month is a number 1..12, not {}")


def _positive(text: str) -> int:
    return _whole_number(text, 1, None, "expected a whole number, not {}", "expected a number of at least 1, not {}")


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None


def _birth_months(rules: RuleSet, given: Sequence[int] | None) -> tuple[int, int] | None:
    if given is not None:
        return (given[0], given[1])
    return (1, 7) if rules.dealer_selection == "birth_month" else None


def _console(file: Any = None):
    from ..render import make_console

    return make_console(file)


# -- koikoi score ---------------------------------------------------------------------------------


def cmd_score(args: argparse.Namespace) -> int:
    rules = _rules_from(args)
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

    console = _console()
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


# -- koikoi rules ---------------------------------------------------------------------------------


def cmd_rules(args: argparse.Namespace) -> int:
    if args.markdown:
        if args.preset or args.rules_file or args.set or args.json:
            raise CliError(
                "--markdown prints the whole rules reference (docs/rules.md) and takes no preset, "
                "--rules-file, --set or --json"
            )
        from ..rulesdoc import rules_markdown

        sys.stdout.write(rules_markdown())
        return 0
    if not args.preset and not args.rules_file:
        if args.set:
            raise CliError("--set needs a preset: koikoi rules PRESET --set option=value")
        if args.json:
            print(json.dumps({name: PRESET_DESCRIPTIONS.get(name, "") for name in PRESET_NAMES}))
            return 0
        from rich.table import Table

        console = _console()
        table = Table(box=None, show_header=False, padding=(0, 2))
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column()
        for name in PRESET_NAMES:
            table.add_row(name, PRESET_DESCRIPTIONS.get(name, ""))
        console.print("Presets (show one with 'koikoi rules PRESET'):")
        console.print(table)
        return 0
    args.rules = args.preset
    rules = _rules_from(args)
    data = rules.to_dict()
    yaku = {_yaku_label(o): data[o] for o in YAKU_OPTIONS}
    if args.json:
        print(json.dumps({"name": rules.name, "options": data, "yaku": yaku}))
        return 0
    from rich.table import Table
    from rich.text import Text

    console = _console()
    title = f"Rule set {rules.name}"
    base = PRESETS.get(rules.name)
    changed = {k for k, v in data.items() if base is not None and getattr(base, k) != v}
    if changed:
        title += f" (changed: {', '.join(sorted(changed))})"
    console.print(Text(title, style="bold"))
    if rules.name in PRESET_DESCRIPTIONS:
        console.print(PRESET_DESCRIPTIONS[rules.name])
    ytable = Table(title="Yaku", title_justify="left", box=None, header_style="bold", padding=(0, 2))
    ytable.add_column("yaku")
    ytable.add_column("points", justify="right")
    ytable.add_column("cards")
    docs = {name: meaning for name, _, meaning in option_help()}
    for option in YAKU_OPTIONS:
        pts = data[option]
        ytable.add_row(_yaku_label(option), str(pts) if pts else Text("off", style="dim"), docs[option])
    bonus = data["hand_bonus"]
    ytable.add_row("teshi / kuttsuki", str(bonus) if bonus else Text("off", style="dim"), docs["hand_bonus"])
    console.print(ytable)
    otable = Table(title="Options", title_justify="left", box=None, header_style="bold", padding=(0, 2))
    otable.add_column("option", no_wrap=True)
    otable.add_column("value", no_wrap=True)
    otable.add_column("meaning (allowed values)")
    for name, allowed, meaning in option_help():
        if name in YAKU_OPTIONS:
            continue
        value = data[name]
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        style = "bold yellow" if name in changed else "cyan"
        otable.add_row(name, Text(shown, style=style), Text(meaning).append(f" ({allowed})", style="dim"))
    console.print(otable)
    return 0


# -- koikoi simulate ------------------------------------------------------------------------------


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
    rules = _rules_from(args)
    stats = simulate(rules, args.games, args.seed, _birth_months(rules, args.birth_months))
    if args.json:
        print(json.dumps(stats))
        return 0
    from rich.table import Table

    console = _console()
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


# -- koikoi arena ---------------------------------------------------------------------------------


def cmd_arena(args: argparse.Namespace) -> int:
    import signal

    from .. import arena

    if args.summarize:
        given = [
            "--" + k.replace("_", "-")
            for k in ("rules", "rules_file", "games", "seed", "players", "player_set", "jsonl", "resume", "records")
            if getattr(args, k)
        ]
        if given:
            raise CliError(f"--summarize reads the --jsonl files of finished runs: it takes no {', '.join(given)}")
        try:
            report = arena.summarize_files(args.summarize)
        except arena.ArenaError as e:
            raise CliError(str(e)) from None
    else:
        for name in ("games", "seed", "players"):
            if getattr(args, name) is None:
                raise CliError(f"--{name} is required (or --summarize FILE... to read finished runs)")
        rules = _rules_from(args)
        signals: list[int] = []

        def stop(signum: int, frame: object) -> None:
            signals.append(signum)
            raise KeyboardInterrupt  # the same way out as Ctrl-C: bots killed, the --jsonl file kept

        try:
            previous = signal.signal(signal.SIGTERM, stop)
        except ValueError:  # not the main thread: SIGTERM keeps its default
            previous = None
        try:
            players = arena.apply_player_settings(arena.split_players(args.players), args.player_set)
            progress_cb, finish = _arena_progress(args.games, enabled=not args.json and sys.stderr.isatty())
            try:
                report = arena.run_arena(
                    rules,
                    args.games,
                    args.seed,
                    players,
                    jobs=args.jobs,
                    time_limit=args.time_limit,
                    on_timeout=args.on_timeout,
                    records_dir=args.records,
                    logs_dir=args.logs,
                    birth_months=_birth_months(rules, None),
                    progress=progress_cb,
                    jsonl=args.jsonl,
                    resume=args.resume,
                )
            finally:
                finish()
        except arena.ArenaError as e:
            raise CliError(str(e)) from None
        except KeyboardInterrupt:
            note = ""
            if args.jsonl:
                note = f"; the finished games are in {args.jsonl}: the same command with --resume goes on"
            print(f"koikoi arena: interrupted{note}", file=sys.stderr)
            return 128 + (signals[0] if signals else signal.SIGINT)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
    if args.json:
        print(json.dumps(report.to_dict()))
        return 0
    _print_arena(report)
    return 0


def _arena_progress(total: int, *, enabled: bool):
    if not enabled:
        return None, lambda: None
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    bar = Progress(
        TextColumn("games"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task("games", total=total)
    bar.start()
    return (lambda done: bar.update(task, completed=done)), bar.stop


def _print_arena(report) -> None:
    from rich.table import Table
    from rich.text import Text

    console = _console()
    a, b = report.players
    seeds = report.seed if isinstance(report.seed, list) else [report.seed]
    seed_text = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {', '.join(map(str, seeds))}"
    console.print(
        Text(
            f"{report.games} games, {report.rules.name} rules, {seed_text}: "
            f"A = {a.spec}, B = {b.spec} (A at seat 0 in games 1, 3, 5, ...)",
            style="bold",
        ),
        highlight=False,
        soft_wrap=True,
    )
    table = Table(box=None, header_style="bold", padding=(0, 2))
    table.add_column("")
    for p in report.players:
        table.add_column(f"{p.label}: {p.name}", justify="right")

    def row(label: str, f) -> None:
        table.add_row(label, *(f(p) for p in report.players))

    def share(n: int, of: int) -> str:
        return f"{n} ({100 * n / of:.1f}%)" if of else str(n)

    def ms(x: float | None) -> str:
        return "-" if x is None else f"{1e6 * x:.0f} µs" if x < 0.001 else f"{1000 * x:.2f} ms"

    row("wins / draws / losses", lambda p: f"{p.wins} / {p.draws} / {p.losses}")
    row("win rate (draw = half)", lambda p: f"{100 * p.win_rate:.1f}%")
    row("95% interval (Wilson)", lambda p: "{:.1f}% - {:.1f}%".format(*(100 * x for x in p.win_rate_ci)))
    row("points won per match", lambda p: f"{p.to_dict()['points_won_per_match']:.2f}")
    row("points won per hand", lambda p: f"{p.to_dict()['points_won_per_hand']:.3f}")
    row("hands won", lambda p: share(p.hand_wins, p.hands))
    row("koi-koi calls per hand", lambda p: f"{p.to_dict()['koikoi_calls_per_hand']:.3f}")
    row("koi-koi paid (won that hand)", lambda p: share(p.koikoi_paid, p.koikoi_calls))
    row("time per decision, mean", lambda p: ms(p.to_dict()["decision_seconds_mean"]))
    row("time per decision, worst", lambda p: ms(p.to_dict()["decision_seconds_worst"]))
    row(f"decisions over {report.time_limit:g} s", lambda p: str(p.overruns))
    row("matches lost by forfeit", lambda p: str(p.forfeits))
    console.print(table)
    d = report.difference

    def interval(ci, digits: int) -> str:
        if ci is None:
            return "no interval from one match"
        return f"95% interval {ci[0]:+.{digits}f} to {ci[1]:+.{digits}f}"

    console.print(
        f"A - B, points won: {d.per_match:+.2f} per match ({interval(d.per_match_ci, 2)}), "
        f"{d.per_hand:+.3f} per hand ({interval(d.per_hand_ci, 3)}); normal approximation over "
        f"{d.matches} match{'es' if d.matches != 1 else ''}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    forfeits = report.forfeits
    if forfeits:
        console.print(Text(f"Forfeits ({len(forfeits)}):", style="bold red"))
        for f in forfeits[:20]:
            console.print(
                f"  game {f['game']}: {f['player']} ({f['spec']}) at seat {f['seat']}, hand {f['hand']}: "
                f"{f['kind']}: {f['reason']}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
            if f["stderr"]:
                last = f["stderr"].splitlines()[-1]
                console.print(f"    its stderr ends: {last}", markup=False, highlight=False, soft_wrap=True)
        if len(forfeits) > 20:
            console.print(f"  ... and {len(forfeits) - 20} more (--json lists them all)")
    over = "the first legal action played" if report.on_timeout == "first" else "a forfeit"
    notes = [f"time limit {report.time_limit:g} s per decision (over it: {over})"]
    if report.seconds is not None:
        notes.append(f"{report.seconds:.1f} s with {report.jobs} worker process{'es' if report.jobs != 1 else ''}")
    if report.jsonl is not None:
        notes.append(f"matches in {report.jsonl}" + (f" ({report.resumed} from before)" if report.resumed else ""))
    console.print(Text("; ".join(notes), style="dim"), soft_wrap=True)


def _seconds(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {text!r}") from None
    if not x > 0 or x == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, not {text}")
    return x


def _port(text: str) -> int:
    return _whole_number(text, 1, 65535, "expected a port number, not {}", "a port is 1..65535, not {}")


def _nonnegative_seconds(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {text!r}") from None
    if not 0 <= x <= 60:
        raise argparse.ArgumentTypeError(f"expected 0 to 60 seconds, not {text}")
    return x


# -- koikoi serve ---------------------------------------------------------------------------------


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
            url, card_art=args.card_art, ai_delay=args.ai_delay, limits=limits, time_controls=extra_controls
        )
        store = app.state.store
        if store.is_sqlite:
            if args.workers > 1:
                raise StoreError(
                    f"--workers {args.workers} needs PostgreSQL: an SQLite database is served by one process "
                    "(give --database-url postgresql://user:password@host/dbname)"
                )
            store.hold_sqlite()  # a second koikoi serve on the same file is refused, and says why
    except (StoreError, CardArtError) as e:
        raise CliError(str(e)) from None
    where = store.sqlite_path or store.shown_url
    print(f"koikoi {__version__}: games are kept in {where}")
    if store.upgraded is not None and store.upgraded.changed:
        print(f"its schema: {_upgrade_done(store.upgraded)}")
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
                "limits": dict(parse_limit(x) for x in args.limit or ()),
                "forwarded_allow_ips": args.forwarded_allow_ips,
            }
            print(f"{args.workers} server processes share the port", flush=True)
            return run_workers(settings, host=args.host, port=args.port, workers=args.workers)
        run(app, host=args.host, port=args.port, limits=limits, forwarded_allow_ips=args.forwarded_allow_ips)
    except OSError as e:
        raise CliError(f"cannot listen on {args.host}:{args.port}: {e.strerror or e}") from None
    return 0


# -- koikoi db ------------------------------------------------------------------------------------


def _upgrade_done(upgraded: Any) -> str:
    """What an upgrade did (a :class:`koikoi.web.migrate.Upgrade`), in words."""
    now = f"{', '.join(upgraded.after)} (head)"
    if not upgraded.changed:
        return f"at {now} already: nothing to do"
    before = upgraded.before
    if before.before_migrations:
        return f"made before koikoi had migrations: adopted as it was, now at {now}"
    if not before.revisions:
        return f"every table created, at {now}"
    return f"upgraded from {', '.join(before.revisions)} to {now}"


def cmd_db(args: argparse.Namespace) -> int:
    try:
        from ..web.migrate import schema_of
        from ..web.store import Store, StoreError
    except ImportError as e:
        raise CliError(f"the web app needs its libraries ({e.name} is missing): pip install koikoi") from None
    url = args.database_url or str(data_dir() / "koikoi.db")
    if args.db_command == "current" and "://" not in url and not Path(url).expanduser().exists():
        raise CliError(f"no database at {url}")  # looking must not make one
    try:
        store = Store(url, upgrade=args.db_command == "upgrade")
    except StoreError as e:
        raise CliError(str(e)) from None
    try:
        if args.db_command == "upgrade":
            print(f"{store.sqlite_path or store.shown_url}: {_upgrade_done(store.upgraded)}")
        else:
            try:
                print(schema_of(store.engine).describe())
            except Exception as e:  # a database that does not answer
                raise CliError(
                    f"cannot use the database {store.shown_url}: {type(e).__name__}: {str(e).splitlines()[0]}"
                ) from None
    finally:
        store.close()
    return 0


# -- koikoi ladder ----------------------------------------------------------------------------------


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


# -- koikoi admin ---------------------------------------------------------------------------------


def cmd_admin(args: argparse.Namespace) -> int:
    """The accounts of the web app's database, for whoever runs it: no mail server resets a password."""
    try:
        from ..web.accounts import Passwords, check_password, name_key
        from ..web.accountstore import AccountStore
        from ..web.errors import GameError
        from ..web.store import Store, StoreError
    except ImportError as e:
        raise CliError(f"the web app needs its libraries ({e.name} is missing): pip install koikoi") from None
    url = args.database_url or str(data_dir() / "koikoi.db")
    if "://" not in url and not Path(url).expanduser().exists():
        raise CliError(f"no database at {url}")
    try:
        store = Store(url)
    except StoreError as e:
        raise CliError(str(e)) from None
    try:
        accounts = AccountStore(store)
        if args.admin_command in _ADMIN_BOTS:
            return _admin_bots(args, store, accounts)
        if args.admin_command == "list":
            rows = accounts.listing(limit=args.limit)
            for r in rows:
                state = "disabled" if r["disabled"] else f"{r['sessions']} session(s)"
                bot = "  bot" if r.get("bot") else ""
                print(f"{r['name']:<20}  since {r['created']:%Y-%m-%d}  {state}{bot}")
            print(f"{len(rows)} account(s)")
            return 0
        if args.admin_command == "reports":
            _print_reports(store, args.limit)
            return 0
        found = accounts.login_of(name_key(args.name))
        if found is None:
            raise CliError(f"no account named {args.name!r}")
        account = found.account
        if args.admin_command == "reset-password":
            typed = sys.stdin.readline().rstrip("\n") if not sys.stdin.isatty() else _ask_password()
            try:
                password = check_password(typed, account.name)
            except GameError as e:
                raise CliError(e.message) from None
            passwords = Passwords(threads=1)
            try:
                accounts.set_password(account.id, passwords.hasher.hash(password))
            finally:
                passwords.close()
            print(f"{account.name}: new password set; every session ended")
        elif args.admin_command == "disable":
            accounts.set_disabled(account.id, True)
            print(f"{account.name}: disabled; every session ended")
        else:
            accounts.set_disabled(account.id, False)
            print(f"{account.name}: enabled")
    finally:
        store.close()
    return 0


_ADMIN_BOTS = ("make-bot", "bot-token", "revoke-bot-tokens")


def _admin_bots(args: argparse.Namespace, store: Any, accounts: Any) -> int:
    """``koikoi admin make-bot NAME [--owner OWNER]``, ``bot-token NAME``, ``revoke-bot-tokens NAME``."""
    from ..web.accounts import check_name, name_key
    from ..web.bots import new_bot_token
    from ..web.botstore import BotStore
    from ..web.errors import GameError
    from ..web.store import StoreError

    bots = BotStore(store)
    if args.admin_command == "make-bot":
        try:
            name = check_name(args.name)
        except GameError as e:
            raise CliError(e.message) from None
        owner_id = None
        if args.owner:
            found = accounts.login_of(name_key(args.owner))
            if found is None or bots.bot(found.account.id) is not None:
                raise CliError(f"no person's account named {args.owner!r} to run the bot")
            owner_id = found.account.id
        try:
            bots.make_bot(name, name_key(name), owner_id)
        except StoreError as e:
            raise CliError(f"{e}: a bot is an account of its own, with a name of its own") from None
        print(f"{name}: a bot account; give it a token with 'koikoi admin bot-token {name}'")
        return 0
    bot = bots.bot_named(name_key(args.name))
    if bot is None:
        raise CliError(f"no bot named {args.name!r} (make one with 'koikoi admin make-bot NAME')")
    if args.admin_command == "bot-token":
        token, key, hint = new_bot_token()
        bots.add_token(bot.id, key, hint, max_tokens=1_000)
        print(token)  # shown this once: only its hash is kept
        print(
            f"{bot.name}: a new token ({hint}...), shown above this once; keep it in a file of yours", file=sys.stderr
        )
    else:
        print(f"{bot.name}: {bots.revoke(bot.id)} token(s) revoked")
    return 0


def _print_reports(store: Any, limit: int) -> None:
    """The chat messages players reported, newest first: when, the game, the room, the author (their
    account, or a guest), the words as written (quoted, escaped) and who reported them."""
    from ..web.chatstore import ChatStore

    rows = ChatStore(store).reports(limit=limit)
    for r in rows:
        if r["account"] is None:
            author = f"{r['name']} (guest)"
        else:
            author = f"{r['name']} (account {r['account']}{', disabled' if r['disabled'] else ''})"
        words = f"[phrase: {r['phrase']}]" if r["phrase"] else json.dumps(r["text"] or "", ensure_ascii=False)
        reporter = str(r["reporter_name"]) + (" (account)" if str(r["reporter"]).startswith("a:") else " (guest)")
        at = r["at"]
        when = at.strftime("%Y-%m-%d %H:%M") if hasattr(at, "strftime") else str(at)  # SQLite keeps any text
        print(
            f"{when}  game {r['game_id']}  {r['room']}  message {r['message_id']}  "
            f"{author}: {words}  reported by {reporter}"
        )
    print(f"{len(rows)} report(s)")


def _ask_password() -> str:
    import getpass

    first = getpass.getpass("new password: ")
    if getpass.getpass("again: ") != first:
        raise CliError("the two passwords differ")
    return first


# -- koikoi bot ----------------------------------------------------------------------------------


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
            args.server, token, program, policy=policy, time_limit=args.time_limit, seek=seek, logs=args.logs
        )
    except botconnect.ConnectError as e:
        print(f"koikoi bot connect: {e}", file=sys.stderr)
        return e.code
    return botconnect.run(connector)


# -- records (koikoi play / replay) ---------------------------------------------------------------


def _records():
    try:
        from .. import records
    except ImportError as e:  # pragma: no cover - records.py ships with the package
        raise CliError(f"game records are not available: {e}") from None
    return records


def data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "koikoi"


# -- koikoi play ----------------------------------------------------------------------------------

# The web lobby's defaults (lobby.js, lobby.html), so that a first game is the same game everywhere.
PLAY_DEFAULT_RULES = "nintendo"
PLAY_DEFAULT_OPPONENT = "medium"


def _opponent_of(players: Sequence[dict[str, Any]]) -> str | None:
    for p in players[1:]:
        if p.get("kind") == "computer" and p.get("ai") in ("random", "greedy", "easy", "medium", "hard"):
            return p["ai"]
    return None


def _latest_unfinished() -> Path:
    rec = _records()
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
    return _whole_number(text, 1, 12, "--hands is a number of hands, 1 to 12, not {}", "--hands is 1 to 12, not {}")


def cmd_play(args: argparse.Namespace) -> int:
    console = _console()
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
        rec = _records()
        path = Path(args.record) if args.record else _latest_unfinished()
        record = _read_record(path)
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
        opponent = args.opponent or _opponent_of(record.players) or "greedy"  # records from before the default changed
        ai_seed = record.players[1].get("ai_seed") if len(record.players) > 1 else None
        console.print(f"Resuming the game in {path}", markup=False, highlight=False, soft_wrap=True)
    else:
        clock = _play_clock(args, interactive)
        if args.hands is not None:
            if any(setting.split("=", 1)[0].strip() == "hands" for setting in args.set):
                raise CliError("give --hands N or --set hands=N, not both")
            args.set = [*args.set, f"hands={args.hands}"]
        rules = _rules_from(args, default=PLAY_DEFAULT_RULES)
        seed = args.seed if args.seed is not None else random.SystemRandom().getrandbits(31)
        try:
            match = Match(rules, seed=seed, birth_months=_birth_months(rules, args.birth_months))
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


def _read_record(path: Path):
    rec = _records()
    try:
        return rec.read_record(path)
    except OSError as e:
        raise CliError(f"cannot read record {path}: {e.strerror or e}") from None


def _refuse_unfinished(path: Path) -> None:
    rec = _records()
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


# -- koikoi replay --------------------------------------------------------------------------------


def cmd_replay(args: argparse.Namespace) -> int:
    from rich.rule import Rule
    from rich.text import Text

    from ..render import describe_event, render_game, render_outcome, render_result

    rec = _records()
    path = Path(args.file)
    record = _read_record(path)
    rules = record.rules
    names = [str(p.get("name") or f"player {i}") for i, p in enumerate(record.players)]
    step_mode = args.step or (not args.all and sys.stdin.isatty() and sys.stdout.isatty())
    console = _console()
    head = Text(f"Record {path}", style="bold")
    head.append(f" · {rules.name} rules · {names[0]} (player 0) vs {names[1]} (player 1)")
    if record.seed is not None:
        head.append(f" · seed {record.seed}")
    ending = None if record.finished else ended_early(record.metadata)
    if ending is not None:
        head.append(f" · ended early ({ending[0]})", style="dim")
    else:
        head.append(" · finished" if record.finished else " · unfinished", style="dim")
    console.print(head, highlight=False)

    def table(match: Match) -> None:
        console.print(render_game(match.observation(0), rules, names, other=match.observation(1), show_results=False))

    def wait() -> bool:
        if not step_mode:
            return True
        console.print(Text("Enter: next, q: quit > ", style="bold cyan"), end="")
        try:
            return input().strip().lower() not in ("q", "quit")
        except EOFError:
            return False

    shown_hand = 0
    last: Match | None = None
    for step in rec.replay_steps(record):
        if step.hand_number != shown_hand:
            shown_hand = step.hand_number
            h = step.before.hand
            console.print(
                Rule(
                    f"Hand {shown_hand} · month {h.month} · dealer {names[h.dealer]} · "
                    f"scores {step.before.scores[0]}-{step.before.scores[1]}"
                )
            )
            table(step.before)
        new_events = step.hand_after.events[len(step.before.hand.events) :]
        lines = [describe_event((e.player, e.kind, e.card, e.captured), names) for e in new_events]
        if not lines:
            lines = [Text(f"{names[step.player]} ", style="bold").append(action_name(step.action), style="")]
        after_hand = step.hand_after
        if after_hand.phase.name == "DRAW_CHOICE":
            lines.append(
                Text(
                    f"{names[step.player]} drew {CARD_NAMES[after_hand.pending]}, which matches two "
                    "table cards: a choice follows"
                )
            )
        elif after_hand.phase.name == "DECISION":
            lines.append(
                Text(
                    f"{names[step.player]} has a yaku score of {after_hand.score_of(step.player)}: koi-koi or stop?",
                    style="bold green",
                )
            )
        for n, text in enumerate(lines):
            prefix = Text(f"{step.index + 1:>4}. " if n == 0 else "      ", style="dim")
            console.print(prefix + text)
        for k, result in enumerate(step.results):
            console.print(render_result(result, step.hand_number + k, names))
        if step_mode and not step.results:
            table(step.after)
        last = step.after
        if not wait():
            console.print("(replay stopped)")
            return 0
    match = last if last is not None else rec.replay(record)
    if match.is_over() or ending is not None:
        console.print(Rule("End of the match" if ending is None else "End of the match, before its last hand"))
        table(match)
        console.print(render_outcome(match.observation(0), names, ending=ending))
    else:
        if last is None:
            table(match)
        console.print(
            Text(
                f"The record ends here: the game is unfinished, {names[match.current_player]} "
                f"to move. Continue it with 'koikoi play --resume --record {path}'.",
                style="bold",
            )
        )
    return 0


# -- koikoi review --------------------------------------------------------------------------------


def cmd_review(args: argparse.Namespace) -> int:
    from .. import review

    path = Path(args.file)
    record = _read_record(path)
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


def _console_wide():
    # Into a file or a pipe a review's table is read whole: lines as long as its rows, not 80 columns.
    from ..render import make_console

    return make_console(width=200)


def _print_review(doc: dict[str, Any], path: Path) -> None:
    from rich.text import Text

    from ..reviewtable import review_table

    console = _console()
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


# -- the parser -----------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="koikoi",
        description="Koi-Koi, the hanafuda card game: play in the terminal, score capture piles, "
        "compare rule sets, simulate, replay and review games.",
        epilog="Run 'koikoi COMMAND --help' for the options of one command.",
    )
    parser.add_argument("--version", action="version", version=f"koikoi {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")

    p = sub.add_parser(
        "play",
        help="play a match against the computer in the terminal",
        description="Play a match against a computer player. Type the number of a card to "
        "play it; every move is saved, so 'koikoi play --resume' continues.",
    )
    _add_rules_args(p, required=False, default=PLAY_DEFAULT_RULES)
    p.add_argument(
        "--hands",
        type=_play_hands,
        metavar="N",
        help="hands in the match, 1 to 12 (as --set hands=N; default: the rule set's), e.g. 1 for a quick game",
    )
    p.add_argument("--seed", type=_int, help="seed of the shuffles (default: random)")
    p.add_argument(
        "--opponent",
        choices=("random", "greedy", "easy", "medium", "hard", "expert"),
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
        type=_month_arg,
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

    p = sub.add_parser(
        "db",
        help="the web app's database: upgrade its schema, or show its revision",
        description="The schema of the web app's database. 'koikoi serve' upgrades it when it starts; "
        "'koikoi db upgrade' does the same without serving, e.g. once before starting many processes, "
        "and 'koikoi db current' shows where a database stands (docs/web.md, \"Schema migrations\").",
    )
    db = p.add_subparsers(dest="db_command", metavar="COMMAND", title="commands", required=True)
    for name, help_text in [
        ("upgrade", "bring the database's schema to this koikoi's (creating the tables of a new one)"),
        ("current", "print the database's schema revision, and whether it is this koikoi's (changes nothing)"),
    ]:
        q = db.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        q.add_argument(
            "--database-url",
            metavar="URL",
            help="the database: a file path or SQLAlchemy URL, e.g. postgresql://user:password@host/dbname "
            "(default: the SQLite file in the data folder that koikoi serve uses)",
        )
        q.set_defaults(func=cmd_db)

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

    p = sub.add_parser(
        "admin",
        help="the web app's accounts and chat reports: list them, reset a password, disable or enable one",
        description='The accounts of the web app\'s database (docs/web.md, "Accounts", "Moderation"). A new '
        "password is read from standard input (or asked twice on a terminal); resetting it or disabling the "
        "account ends every session of it. A disabled account cannot chat any more, and what it wrote is "
        "no longer shown.",
    )
    admin = p.add_subparsers(dest="admin_command", metavar="COMMAND", title="commands", required=True)
    for name, help_text in [
        ("list", "list the accounts: name, since when, sessions open or disabled"),
        ("reset-password", "set a new password for an account"),
        ("disable", "disable an account: it cannot sign in, and its sessions end"),
        ("enable", "enable a disabled account again"),
        ("make-bot", 'make a bot\'s account, which plays people through a program (docs/web.md, "Bots online")'),
        ("bot-token", "make a new API token for a bot, printed once on standard output"),
        ("revoke-bot-tokens", "revoke every token of a bot: its connections end"),
        ("reports", "list the chat messages players reported, newest first: message, author, game, reporter, time"),
    ]:
        q = admin.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        if name == "list":
            q.add_argument("--limit", type=int, default=1000, help="list at most this many (default: 1000)")
        elif name == "reports":
            q.add_argument("--limit", type=int, default=100, help="list at most this many (default: 100)")
        else:
            q.add_argument("name", help="the account's name (case does not matter)")
        if name == "make-bot":
            q.add_argument("--owner", metavar="NAME", help="the person's account that runs it (default: none)")
        q.add_argument(
            "--database-url",
            metavar="URL",
            help="the database: a file path or SQLAlchemy URL (default: the SQLite file koikoi serve uses)",
        )
        q.set_defaults(func=cmd_admin)

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
    q.add_argument("--games", type=_int, default=1, metavar="N", help="games at once, 1 to 32 (default: 1)")
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
    q.add_argument("--logs", metavar="DIR", help="keep each game's stderr of the program in DIR")
    q.add_argument("--quiet", action="store_true", help="say only what goes wrong")
    q.add_argument("program", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]", help="the bot's program")
    q.set_defaults(func=cmd_bot)

    p = sub.add_parser(
        "score",
        help="score a capture pile",
        description="Score a capture pile: each yaku with its points and the total before "
        "multipliers. Cards are named as in docs/rules.md (pine-crane, maple-deer, ...).",
    )
    _add_rules_args(p, required=True)
    p.add_argument("--month", type=_month_arg, help="the hand's month 1..12 (for tsukifuda)")
    p.add_argument("--json", action="store_true", help='print {"yaku": [{"name", "points"}...], "total"}')
    p.add_argument("cards", nargs="+", metavar="CARD", help="the cards of the pile")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser(
        "rules",
        help="list the presets, or show every option and yaku value of one",
        description="Without PRESET: list the presets. With PRESET: every option with its "
        "value and meaning, and every yaku value.",
    )
    p.add_argument("preset", nargs="?", metavar="PRESET", help=f"one of {', '.join(PRESET_NAMES)}")
    p.add_argument("--rules-file", metavar="FILE", help="show a TOML rules file instead of a preset")
    p.add_argument(
        "--set", action="append", default=[], metavar="OPTION=VALUE", help="change one rule option (repeatable)"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--markdown",
        action="store_true",
        help="print the whole rules reference as Markdown, the text of docs/rules.md "
        "(koikoi rules --markdown > docs/rules.md)",
    )
    p.set_defaults(func=cmd_rules, rules=None)

    p = sub.add_parser(
        "simulate",
        help="random self-play statistics",
        description="Play matches of uniformly random legal moves (seeded, so repeatable) and "
        "print speed, wins, points, koi-koi calls and how hands ended.",
    )
    _add_rules_args(p, required=True)
    p.add_argument("--games", type=_positive, required=True, metavar="N", help="number of matches")
    p.add_argument("--seed", type=_int, required=True, metavar="S", help="seed")
    p.add_argument(
        "--birth-months",
        nargs=2,
        type=_month_arg,
        metavar=("M0", "M1"),
        help="birth months for dealer_selection=birth_month (default: 1 7)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser(
        "arena",
        help="play many matches between two players (or bots) and compare them",
        description="Play N matches between players A and B, seats alternating (A is player 0 "
        "in games 1, 3, 5, ...), each seeded from S, and print wins, draws and "
        "losses with a 95% Wilson interval on the win rate (a draw counts as half "
        "a win), each side's points won and the difference A - B with its 95% "
        "interval, koi-koi calls and their pay-off, and time per decision. "
        "A player is a built-in name, with options in brackets if wanted "
        "(hard[time_limit=none;playouts=11000]), cmd:COMMAND, a program speaking the bot "
        "protocol (docs/bot-protocol.md), or policy:FILE, a trained policy "
        "(koikoi.policy, docs/env.md); a player that crashes, runs out of time, answers "
        "garbage or plays an illegal action loses that match. With --jsonl each finished "
        "match is written as it ends, --resume goes on from such a file, and "
        "--summarize FILE... prints the summary of finished runs (merged).",
    )
    _add_rules_args(p, required=True)
    p.add_argument("--games", type=_positive, metavar="N", help="number of matches (required to play)")
    p.add_argument("--seed", type=_int, metavar="S", help="seed of all the matches (required to play)")
    p.add_argument(
        "--players",
        metavar="A,B",
        help="two players (required to play): built-in names (random, easy, medium, hard, greedy, ...), "
        "each with options if wanted as NAME[OPTION=VALUE;...], cmd:COMMAND or policy:FILE",
    )
    p.add_argument(
        "--player-set",
        action="append",
        default=[],
        metavar="PLAYER.OPTION=VALUE",
        help="an option of built-in player A or B (repeatable), e.g. A.time_limit=none or B.playouts=11000; "
        "VALUE is none, true, false, a number or a word; unknown options and bad values are refused before "
        "any game",
    )
    p.add_argument(
        "--jobs", type=_positive, metavar="J", help="worker processes (default: one per core; 1 plays in this process)"
    )
    p.add_argument(
        "--time-limit",
        type=_seconds,
        default=5.0,
        metavar="SECONDS",
        help="every player's time for one decision, built-in players too (default: 5); see --on-timeout",
    )
    p.add_argument(
        "--on-timeout",
        choices=("forfeit", "first"),
        default="forfeit",
        help="a player over the time limit loses the match (forfeit, the default), or has the first legal "
        "action played for it (first); either way the overrun is counted",
    )
    p.add_argument("--records", metavar="DIR", help="save each match's record in DIR (game-0001.json, ...)")
    p.add_argument("--logs", metavar="DIR", help="save each bot's stderr in DIR (default: the --records DIR)")
    p.add_argument(
        "--jsonl",
        metavar="FILE",
        help="write one JSON line per finished match to FILE as it ends (players and seats, scores, hands, "
        "koi-koi calls, decision times, overruns), after a line with the run's settings",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="go on with the run in the --jsonl FILE: its games are kept, the others played (same seeds: "
        "the result is that of a run never stopped); the settings must be the same",
    )
    p.add_argument(
        "--summarize",
        nargs="+",
        metavar="FILE",
        help="print the summary of --jsonl files instead of playing (several runs of the same players, "
        "rules and time limit are merged)",
    )
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.set_defaults(func=cmd_arena)

    p = sub.add_parser(
        "replay",
        help="step through a game record",
        description="Show a recorded game action by action, both hands visible. Press Enter "
        "for the next action, q to quit; with --all (or without a terminal) "
        "everything is printed.",
    )
    p.add_argument("file", metavar="FILE", help="a game record (as saved by 'koikoi play')")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--step", action="store_true", help="wait for Enter after each action (default on a terminal)")
    mode.add_argument("--all", action="store_true", help="print the whole game at once")
    p.set_defaults(func=cmd_replay)

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
        type=_positive,
        metavar="PLAYOUTS",
        help="playouts per decision (default: the expert level's; fewer is faster and rougher)",
    )
    p.add_argument("--json", action="store_true", help="print the review as JSON (docs/review.md)")
    p.set_defaults(func=cmd_review)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``koikoi`` command; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help()
            return 2
        return args.func(args)
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
