"""``koikoi arena``: many matches between two players or bots (:mod:`koikoi.arena`), and their figures."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..arena import ArenaReport, PlayerStats

from .common import CliError, Commands, add_rules_args, birth_months, integer, new_console, positive, rules_from


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
        rules = rules_from(args)
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
                    birth_months=birth_months(rules, None),
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


def _arena_progress(total: int, *, enabled: bool) -> tuple[Callable[[int], None] | None, Callable[[], None]]:
    """The progress bar on standard error: what to call with the games done, and what stops it."""
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

    def done(n: int) -> None:
        bar.update(task, completed=n)

    return done, bar.stop


def _print_arena(report: ArenaReport) -> None:
    from rich.table import Table
    from rich.text import Text

    console = new_console()
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

    def row(label: str, f: Callable[[PlayerStats], str]) -> None:
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

    def interval(ci: tuple[float, float] | None, digits: int) -> str:
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


def add_parser(sub: Commands) -> None:
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
    add_rules_args(p, required=True)
    p.add_argument("--games", type=positive, metavar="N", help="number of matches (required to play)")
    p.add_argument("--seed", type=integer, metavar="S", help="seed of all the matches (required to play)")
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
        "--jobs", type=positive, metavar="J", help="worker processes (default: one per core; 1 plays in this process)"
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
