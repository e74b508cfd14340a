"""``koikoi replay``: step through a game record."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..actions import action_name
from ..cards import CARD_NAMES
from ..match import Match
from ..terminal import ended_early
from .common import Commands, load_records, new_console, read_record


def cmd_replay(args: argparse.Namespace) -> int:
    from rich.rule import Rule
    from rich.text import Text

    from ..render import describe_event, render_game, render_outcome, render_result

    rec = load_records()
    path = Path(args.file)
    record = read_record(path)
    rules = record.rules
    names = [str(p.get("name") or f"player {i}") for i, p in enumerate(record.players)]
    step_mode = args.step or (not args.all and sys.stdin.isatty() and sys.stdout.isatty())
    console = new_console()
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


def add_parser(sub: Commands) -> None:
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
