"""The terminal game (``koikoi play``): a match against the computer, one prompt per decision.

The session shows the table with Rich, reads the player's moves (a number, or ``play CARD take
CARD``, ``koikoi``, ``stop`` ...), lets the computer answer, and saves the game as a record after every
move, so that ``koikoi play --resume`` continues after a crash, a kill or ``q``. Argument parsing
and the choice of the record file stay in :mod:`koikoi.cli`.

With a time control (``koikoi play --time-control 10+60``) the player's decisions run a clock, as on the
web (:mod:`koikoi.clocks`): each decision has its own seconds, then the bank pays; the prompt line shows
the countdown and is drawn again every second while the player types (:mod:`koikoi.ttyline`). When it
runs out the match is lost on time, or (``--on-time computer``) the easy computer level makes that
decision and the game goes on. The computer's own decisions run no clock.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .actions import DECLARE, DRAW_TAKE_BASE, KOIKOI, PLAY_TAKE_BASE, STOP, ActionParseError, action_name, parse_action
from .cards import CARD_NAMES, UnknownCardError, card
from .clocks import ClockError, TimeControl, after_move, deadline_of, decision_start, time_control
from .match import Match

if TYPE_CHECKING:  # for the annotations only: the methods import rich and the rest where they use them
    from rich.console import Console, RenderableType
    from rich.text import Text

    from .ai.hints import HintLine
    from .observation import Observation
    from .render import HintRow
    from .ttyline import LineReader

__all__ = [
    "PlaySession",
    "PlayClock",
    "PLAY_HELP",
    "ON_TIME",
    "ENDINGS",
    "play_action_for",
    "ended_early",
    "clock_time",
]

# What happens when the player's clock runs out: the match is lost, or the easy level decides for them.
ON_TIME = ("lose", "computer")
STAND_IN = "easy"  # the level that decides for a player out of time (the web's "computer plays my move")
# How a match may end before its last hand, as a record's metadata says it (``"ending"``, with ``"winner"``):
# the web app's endings (koikoi.web.games), of which the terminal game writes "time".
ENDINGS = ("time", "resign", "claim", "abort", "expired", "closed")


PLAY_HELP = """\
How to play: on your turn play a card from your hand. It takes a table card of
the same month (of two, you choose which; of three, all), else it stays on the
table. Then the stock's top card is turned over and matched the same way. When
your yaku score rises: stop and score, or call koi-koi and play on for more.

  3                     play the card numbered 3 in your hand
  play maple-deer       the same by name ('play CARD take CARD' picks the take)
  take pine-plain-1     a drawn card matching two table cards takes that one
  k / koikoi, s / stop  after a yaku: play on, or end the hand and score
  d / declare           declare a dealt teshi/kuttsuki (where the rules ask)
  ? / hint              the computer's ranking of your moves (estimated points)
  r / redraw            show the table and the last moves again
  q / quit              save and leave; 'koikoi play --resume' continues
"""

CLOCK_HELP = """Your clock is at the start of the prompt: [9 + 1:00] is 9 seconds left of this
decision's own time, then 1:00 in your bank, which pays for slower decisions
and does not refill; [0:42] is the bank alone. The first decision of a hand has
a few seconds more. Help, hints and the table count as your time; the
computer's turns do not.
"""


_Event = tuple[int, str, int, int]  # a move as the observation lists it: (player, kind, card, captured)


class _Layout(Protocol):
    """Builds a screen: the full layout or the compact one, with ``recent`` as the last moves."""

    def __call__(
        self, compact: bool, recent: Sequence[_Event], progress: bool = True, fold: bool = False, /
    ) -> RenderableType: ...


class _Quit(Exception):
    pass


class _OutOfTime(Exception):
    pass


def clock_time(seconds: float) -> str:
    """Seconds left on a clock as the web shows them: 0:42, 1:05:00."""
    sec = max(0, math.ceil(seconds))
    hours, minutes, s = sec // 3600, sec % 3600 // 60, sec % 60
    return f"{hours}:{minutes:02d}:{s:02d}" if hours else f"{minutes}:{s:02d}"


@dataclass
class PlayClock:
    """The clock of the player at the terminal: the bank, and the running decision's start and deadline
    (:func:`time.monotonic` times; nothing runs between decisions)."""

    control: TimeControl
    on_time: str = "lose"
    bank: float = -1.0  # -1: the control's whole bank
    started: float | None = None
    deadline: float | None = None
    hand: int = 0  # the hand of the player's last decision: the next hand's first one gets more time

    def __post_init__(self) -> None:
        if self.bank < 0:
            self.bank = self.control.bank

    @property
    def running(self) -> bool:
        return self.deadline is not None

    def start(self, now: float, hand: int) -> None:
        """A decision begins; the first of a hand has :data:`koikoi.clocks.HAND_BREAK` more (the deal)."""
        self.started = decision_start(self.control, now, new_hand=hand != self.hand)
        self.hand = hand
        self.deadline = deadline_of(self.control, [self.bank], 0, self.started)

    def stop(self, now: float) -> None:
        """The decision is made (or left): what it took beyond its own time comes off the bank."""
        if self.started is None:
            return
        banks, _, _ = after_move(
            self.control, [self.bank], turn_started=self.started, now=now, mover=0, next_player=0, new_hand=False
        )
        self.bank = banks[0]
        self.started = self.deadline = None

    def status(self, now: float) -> Text:
        """What the prompt shows: ``[9 + 1:00] `` (the decision's own seconds, then the bank) or ``[0:42] ``."""
        from rich.text import Text

        assert self.deadline is not None
        left = self.deadline - now
        shown = f"{math.ceil(left - self.bank)} + {clock_time(self.bank)}" if left > self.bank else clock_time(left)
        return Text(f"[{shown}] ", style="bold red" if left < 10 else "bold")

    def to_record(self) -> dict[str, Any]:
        return {"time_control": self.control.id, "on_time": self.on_time, "bank": round(self.bank, 3)}

    @classmethod
    def from_record(cls, value: object) -> PlayClock:
        """The clock a saved game was being played with (its record's ``metadata.clock``); ValueError
        says what is wrong with one that is not a clock."""
        if not isinstance(value, dict):
            raise ValueError("metadata.clock is not an object")
        try:
            control = time_control(value.get("time_control"))
        except ClockError as e:
            raise ValueError(f"metadata.clock.time_control: {e}") from None
        if control.correspondence:
            raise ValueError(f"metadata.clock.time_control: {control.id} is not a real-time control")
        on_time = value.get("on_time")
        if on_time not in ON_TIME:
            raise ValueError(f"metadata.clock.on_time: {on_time!r} is not one of {', '.join(ON_TIME)}")
        bank = value.get("bank")
        if isinstance(bank, bool) or not isinstance(bank, (int, float)) or not 0 <= bank <= control.bank:
            raise ValueError(f"metadata.clock.bank: {bank!r} is not a number of seconds from 0 to {control.bank:g}")
        return cls(control, on_time, float(bank))


def ended_early(metadata: object) -> tuple[str, int | None] | None:
    """How a recorded match ended before its last hand, as its metadata says (``"ending": "time"`` and
    ``"winner": 1``, as the web app and ``koikoi play`` write them): (ending, winner), or None when it did
    not (or says something that is not one of :data:`ENDINGS`)."""
    if not isinstance(metadata, dict):
        return None
    ending, winner = metadata.get("ending"), metadata.get("winner")
    if ending not in ENDINGS or not (winner is None or (type(winner) is int and winner in (0, 1))):
        return None
    return ending, winner


class PlaySession:
    """One terminal game: the human at seat 0, a computer player at seat 1."""

    HUMAN = 0
    COMPUTER = 1

    def __init__(
        self,
        match: Match,
        path: Path,
        name: str,
        opponent: str,
        console: Console,
        *,
        input_fn: Callable[[], str] = input,
        interactive: bool = False,
        ai_seed: int | None = None,
        clock: PlayClock | None = None,
    ) -> None:
        self.match = match
        self.path = path
        self.opponent = opponent
        self.names = (name, "Computer")
        self.console = console
        self.input = input_fn
        self.interactive = interactive
        self.turn_mark = 0
        self.shown_hand = 0
        self.shown_actions = -1
        self.recent: tuple[_Event, ...] = ()  # the moves shown as "Last moves", kept for a redraw
        self.results_line = False
        # What the current question shows under the table (a take choice, a yaku).
        self.sticky: RenderableType | None = None
        # The hint asked for in this position: shown in place of the hand until the move.
        self.hint: list[HintRow] | None = None
        # The computer's own randomness, independent of the match seed (which would reveal the
        # stock order to it); kept in the record so that a resumed game plays on identically.
        self.ai_seed = ai_seed if isinstance(ai_seed, int) else random.SystemRandom().getrandbits(31)
        # A clock needs keys read one by one (the caller checks that this is a terminal).
        self.clock = clock
        self.reader: LineReader | None = None
        if clock is not None:
            from .ttyline import LineReader

            self.reader = LineReader(console)
        self.lost_on_time = False  # the match ended when the player's clock ran out
        # Shown under the table at the next decision (the computer decided for the player).
        self.note: Text | None = None

    # saving
    def save(self) -> None:
        from . import records as rec

        players: list[dict[str, Any]] = [
            {"name": self.names[0], "kind": "human"},
            {"name": self.names[1], "kind": "computer", "ai": self.opponent, "ai_seed": self.ai_seed},
        ]
        metadata: dict[str, Any] = {}
        if self.clock is not None:
            metadata["clock"] = self.clock.to_record()
        if self.lost_on_time:  # as the web app records a match that ended on time
            metadata["ending"], metadata["winner"] = "time", self.COMPUTER
        record = rec.GameRecord.from_match(self.match, players=players, metadata=metadata)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        rec.write_record(record, self.path)

    def computer_action(self, seat: int = COMPUTER, level: str | None = None) -> int:
        """What the computer plays in ``seat`` (at seat 0: for the player, whose clock ran out), from that
        seat's own view only."""
        from .ai.registry import make_player

        # A fresh player seeded by its own seed and the move number: a resumed game plays on identically.
        n = len(self.match.actions)
        level = level or self.opponent
        player = make_player(level, seed=self.ai_seed * 1009 + n, rules=self.match.rules, surface="play")
        action: int = player.choose(self.match.observation(seat))
        return action

    # display
    def show(self, note: RenderableType | None = None) -> None:
        """The table now, with the moves since the player's last turn; ``note`` goes under it."""
        obs = self.match.observation(self.HUMAN)
        n = len(self.match.actions)
        if n != self.shown_actions or obs.hand_number != self.shown_hand:
            new_hand = obs.hand_number != self.shown_hand
            if new_hand:
                start = 0 if self.shown_hand else max(0, len(obs.events) - 4)
                self.turn_mark = start
                self.shown_hand = obs.hand_number
            self.recent = obs.events[self.turn_mark :]
            self.results_line = new_hand
            self.hint = None  # a hint is for the position it was asked in
            if obs.phase == "play" and obs.to_move:
                self.turn_mark = len(obs.events)
            self.shown_actions = n
        self.draw(note)

    def draw(self, note: RenderableType | None = None) -> None:
        """Draw the table again as last shown (``r``): the same last moves, the question's lines, ``note``."""
        from rich.console import Group

        from .render import render_game

        obs = self.match.observation(self.HUMAN)
        notes = [x for x in (self.sticky, note) if x is not None]
        below = Group(*notes) if notes else None

        def build(compact: bool, recent: Sequence[_Event], progress: bool = True, fold: bool = False) -> RenderableType:
            return render_game(
                obs,
                self.match.rules,
                self.names,
                recent=recent,
                show_results=self.results_line,
                compact=compact,
                progress=progress,
                fold=fold,
                hint=self.hint,
            )

        screen = self.fit(build, self.recent, below)
        if self.interactive:
            self.console.clear()
        self.console.print(screen)
        if below is not None:
            self.console.print(below)

    def lines_of(self, renderable: RenderableType | None) -> int:
        if renderable is None:
            return 0
        return len(self.console.render_lines(renderable, self.console.options, pad=False))

    def fit(self, build: _Layout, recent: Sequence[_Event], below: RenderableType | None = None) -> RenderableType:
        """The full layout when it fits the terminal with ``below`` and the prompt, else the compact one:
        without the yaku still to be made, then with fewer of the last moves, then with each player
        folded into one line (the pile counted by kind) and the last moves again, as many as fit.
        Output that is not a terminal gets the full one."""
        full = build(False, recent)
        if not self.interactive:
            return full
        room = self.console.size.height - 1 - self.lines_of(below)
        if self.lines_of(full) <= room:
            return full
        compact = build(True, recent)
        if self.lines_of(compact) <= room:
            return compact
        for fold in (False, True):
            for keep in range(len(recent), -1, -1):
                compact = build(True, recent[len(recent) - keep :], False, fold)
                if self.lines_of(compact) <= room:
                    return compact
        return compact

    def show_hand_end(self, index: int) -> None:
        """How hand ``index + 1`` ended: the last moves, both final piles (the yaku's cards marked), the result."""
        from .render import render_hand_end

        obs = self.match.observation(self.HUMAN)
        result = self.match.results[index]
        number = index + 1
        latest = index == len(self.match.results) - 1
        events = (obs.events if self.match.is_over() else obs.previous_hand_events) if latest else ()
        recent = events[self.turn_mark :] if self.shown_hand == number else events
        month = self.match.hands[index].month

        def build(compact: bool, shown: Sequence[_Event], progress: bool = True, fold: bool = False) -> RenderableType:
            return render_hand_end(
                result,
                number,
                events,
                self.names,
                self.match.rules,
                month,
                recent=shown,
                player=self.HUMAN,
                compact=compact,
            )

        self.hand_end: tuple[_Layout, tuple[_Event, ...]] = (build, tuple(recent))
        self.draw_hand_end()

    def draw_hand_end(self) -> None:
        build, recent = self.hand_end
        screen = self.fit(build, recent)
        if self.interactive:
            self.console.clear()
        self.console.print(screen)

    def wait_enter(self, prompt: str) -> None:
        """After a hand: Enter goes on, r shows the hand's end again, q saves and leaves."""
        while True:
            try:
                text = self.ask(prompt).lower()
            except _Quit:
                return
            if text in ("q", "quit", "exit") and not self.match.is_over():
                raise _Quit("quit")
            if text in ("r", "redraw"):
                self.draw_hand_end()
                continue
            return

    def ask(self, prompt: str) -> str:
        if self.reader is not None:
            from .ttyline import TimeUp

            clock = self.clock if self.clock is not None and self.clock.running else None
            try:
                line = self.reader.read(
                    prompt,
                    deadline=None if clock is None else clock.deadline,
                    status=None if clock is None else clock.status,
                )
            except EOFError:
                raise _Quit("eof") from None
            except TimeUp:
                raise _OutOfTime() from None
            return line.strip()
        self.console.print(prompt, end="", markup=True, highlight=False)
        try:
            line = self.input()
        except EOFError:
            raise _Quit("eof") from None
        if not self.interactive:
            self.console.print(line.strip(), style="dim", markup=False, highlight=False)
        return line.strip()

    def complain(self, message: str) -> None:
        from rich.text import Text

        text = Text("✗ ", style="bold red")
        text.append(message)
        if self.interactive:
            self.draw(text)  # on the table's screen again, so that its top stays in view
        else:
            self.console.print(text, highlight=False)

    def show_help(self) -> None:
        from .render import LEGEND

        if self.interactive:
            self.console.clear()
        # In place of the table, on one screen: with the clock's part 22 lines and the prompt (80×24).
        clock = CLOCK_HELP if self.clock is not None else ""
        self.console.print(PLAY_HELP + "\n" + clock + LEGEND, markup=False, highlight=False)
        if self.interactive:
            self.ask("Enter: back to the table > ")
            self.draw()

    # choosing
    def choose(self) -> int:
        obs = self.match.observation(self.HUMAN)
        legal = obs.legal_actions
        if obs.phase == "decision":
            return self.choose_decision(obs)
        if obs.phase == "draw_choice":
            taken = self.choose_take(obs, obs.drawn_card, [a - DRAW_TAKE_BASE for a in legal], draw=True)
            assert taken is not None  # only a hand card's choice can go back (None); a drawn card's cannot
            return taken
        n = len(obs.hand)
        declare = " · [bold]d[/] declare" if DECLARE in legal else ""
        prompt = f"[bold cyan]Your move[/] (1-{n}{declare} · h help) > "
        while True:
            text = self.ask(prompt)
            low = text.lower()
            if low in ("q", "quit", "exit"):
                raise _Quit("quit")
            if low in ("?", "hint"):
                self.show_hint(obs)
                continue
            if low in ("h", "help"):
                self.show_help()
                continue
            if low in ("r", "redraw"):
                self.draw()
                continue
            if low in ("d",) and DECLARE in legal:
                return DECLARE
            if not text:
                self.complain(f"type the number of the card to play (1-{n}), or h for help")
                continue
            if low.isascii() and low.isdigit() and len(low) < 6:
                k = int(low)
                if not 1 <= k <= n:
                    self.complain(f"{k} is not a card of your hand: choose 1-{n}")
                    continue
                action = self.play_card(obs, obs.hand[k - 1])
                if action is None:
                    self.show()
                    continue
                return action
            try:
                action = parse_action(text)
            except ActionParseError as e:
                if low.split()[0] in ("play", "take", "koikoi", "stop", "declare"):
                    self.complain(f"{e}")
                else:
                    self.complain(f"{text!r} is not a move: type a card number 1-{n}, 'play CARD', or h for help")
                continue
            if action in legal:
                return action
            if action < PLAY_TAKE_BASE and action in obs.hand:
                picked = self.play_card(obs, action)  # two table cards match: ask which
                if picked is None:
                    self.show()
                    continue
                return picked
            self.complain(self.illegal_message(action, obs))

    def illegal_message(self, action: int, obs: Observation) -> str:
        name = action_name(action)
        if action < DRAW_TAKE_BASE:
            c = action if action < PLAY_TAKE_BASE else (action - PLAY_TAKE_BASE) // 4
            if c not in obs.hand:
                return f"cannot {name}: {CARD_NAMES[c]} is not in your hand"
            return f"cannot {name}: that table card is not there"
        return f"cannot {name} now"

    def play_card(self, obs: Observation, c: int) -> int | None:
        options = [a for a in obs.legal_actions if a == c or PLAY_TAKE_BASE + 4 * c <= a < PLAY_TAKE_BASE + 4 * c + 4]
        if len(options) == 1:
            return options[0]
        takes = [((c & ~3) | (a - PLAY_TAKE_BASE - 4 * c)) for a in options]
        picked = self.choose_take(obs, c, takes, draw=False)
        return None if picked is None else play_action_for(c, picked)

    def choose_take(self, obs: Observation, c: int | None, takes: list[int], *, draw: bool) -> int | None:
        try:
            return self._choose_take(obs, c, takes, draw=draw)
        finally:
            self.sticky = None

    def _choose_take(self, obs: Observation, c: int | None, takes: list[int], *, draw: bool) -> int | None:
        from rich.console import Group
        from rich.text import Text

        from .render import card_text

        assert c is not None
        head = Text("You drew " if draw else "You play ", style="bold")
        head.append_text(card_text(c))
        head.append(": it matches two table cards. Which one do you take?")
        lines = [head]
        for i, t in enumerate(takes, 1):
            line = Text(f"  {i}  ", style="bold cyan")
            line.append_text(card_text(t))
            lines.append(line)
        if self.interactive:
            self.sticky = Group(*lines)
            self.draw()
        else:
            for line in lines:
                self.console.print(line)
        back = "" if draw else " · b back"
        while True:
            text = self.ask(f"[bold cyan]Take[/] (1-{len(takes)}{back}) > ")
            low = text.lower()
            if low in ("q", "quit", "exit"):
                raise _Quit("quit")
            if not draw and low in ("b", "back"):
                return None
            if low in ("r", "redraw"):
                self.draw()
                continue
            if low.isascii() and low.isdigit() and len(low) < 6 and 1 <= int(low) <= len(takes):
                t = takes[int(low) - 1]
                return DRAW_TAKE_BASE + t if draw else t
            words = low.split()
            if words and words[0] == "take":
                words = words[1:]
            try:
                t = card(" ".join(words)) if words else -1
            except UnknownCardError as e:
                self.complain(f"{e}; type 1-{len(takes)}")
                continue
            if t in takes:
                return DRAW_TAKE_BASE + t if draw else t
            self.complain(f"type 1-{len(takes)} (or the name of one of those cards)")

    def show_hint(self, obs: Observation) -> None:
        """Every legal move, best first, as the hard computer player sees them from your own view only:
        the points to expect from this hand (a stop is exactly what it scores), the chance of winning
        the match where the search weighs it, and what each play takes from the table."""
        from .ai import make_agent
        from .ai.hints import hint_lines

        lines = hint_lines(obs, make_agent("hard", seed=self.ai_seed + len(self.match.actions)).rank(obs))
        if self.interactive:  # in place of the hand, so that the table stays whole on the screen
            self.hint = [self.hint_row(obs, line) for line in lines]
            self.draw()
            return
        with_win = any(line.win is not None for line in lines)
        # The list is sorted by what it shows first: the chance to win the match where there is one
        # (then the points to expect from this hand), else the points; the title fits 80 columns.
        title = "chance to win the match, then points" if with_win else "points to expect from this hand"
        self.console.print(f"[bold]Hint[/] (best first by {title}):")
        width = max(len(line.name) for line in lines)
        for i, line in enumerate(lines, 1):
            pts = "" if line.points is None else f"{line.points:+6.1f} points"
            win = "" if line.win is None else f"{line.win:6.1%} to win  "
            takes = ""
            if line.action < KOIKOI:  # a play or a capture choice
                takes = "  takes " + (", ".join(CARD_NAMES[c] for c in line.captures) or "nothing")
            self.console.print(
                f"  {i}. {line.name:<{width}}  {win}{pts}{takes}".rstrip(), markup=False, highlight=False
            )

    @staticmethod
    def hint_row(obs: Observation, line: HintLine) -> HintRow:
        """A hint line as :func:`koikoi.render.render_hint` shows it: the key to type first."""
        a = line.action
        if a >= KOIKOI:
            return ({KOIKOI: "k", STOP: "s", DECLARE: "d"}.get(a, "?"), None, a, (), line.points, line.win)
        c = a if a < PLAY_TAKE_BASE else (a - PLAY_TAKE_BASE) // 4 if a < DRAW_TAKE_BASE else obs.drawn_card
        key = str(obs.hand.index(c) + 1) if c in obs.hand else "take"
        return (key, c, a, line.captures, line.points, line.win)

    def choose_decision(self, obs: Observation) -> int:
        try:
            return self._choose_decision(obs)
        finally:
            self.sticky = None

    def _choose_decision(self, obs: Observation) -> int:
        from rich.text import Text

        me = self.HUMAN
        base, mult = obs.yaku_scores[me], obs.multipliers[me]
        yaku = ", ".join(f"{n} {p}" for n, p in obs.yaku[me])
        worth = f"{base} × {mult} = {base * mult}" if mult != 1 else str(base)
        if KOIKOI not in obs.legal_actions:
            self.console.print(f"[bold green]Your yaku: {yaku}.[/] No turn remains, so you stop and score {worth}.")
            return STOP
        line = Text(f"Your yaku: {yaku}.", style="bold green")
        line.append(" Stopping now scores ")
        line.append(worth, style="bold")
        line.append(" points.")
        if self.interactive:
            self.sticky = line
            self.draw()
        else:
            self.console.print(line)
        while True:
            text = self.ask("[bold cyan]s[/] stop and score, or [bold cyan]k[/] koi-koi and play on for more > ")
            low = text.lower()
            if low in ("q", "quit", "exit"):
                raise _Quit("quit")
            if low in ("?", "hint"):
                self.show_hint(obs)
                continue
            if low in ("r", "redraw"):
                self.draw()
                continue
            if low in ("s", "stop", "agari"):
                return STOP
            if low in ("k", "koikoi", "koi-koi", "koi"):
                return KOIKOI
            self.complain("type s to stop and score, or k to call koi-koi")

    # the loop
    def run(self) -> int:
        from .render import render_outcome

        self.save()
        results_seen = len(self.match.results)
        try:
            while not self.match.is_over():
                if self.match.current_player == self.HUMAN:
                    action = self.decide()
                    if action is None:
                        return self.end_on_time()
                else:
                    action = self.computer_action()
                self.match.apply_action(action)
                self.save()
                results = self.match.results
                if len(results) > results_seen:
                    # The hand's last moves and final piles, then its result, before the next deal.
                    for i in range(results_seen, len(results)):
                        self.show_hand_end(i)
                    if self.interactive:
                        over = self.match.is_over()
                        self.wait_enter(
                            "Press Enter for the match results > " if over else "Press Enter for the next hand > "
                        )
                results_seen = len(results)
        except _Quit as q:
            self.stop_clock()
            self.console.print()
            self.console.print(
                f"Game saved to {self.path}. Continue it with: koikoi play --resume --record {self.path}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
            return 0 if str(q) in ("quit", "eof") else 130
        except KeyboardInterrupt:
            self.stop_clock()
            self.console.print()
            self.console.print(
                f"Interrupted. Game saved to {self.path}. Continue it with: koikoi play --resume --record {self.path}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
            return 130
        obs = self.match.observation(self.HUMAN)
        if self.interactive:
            self.console.clear()
        self.console.print(render_outcome(obs, self.names))
        self.console.print(closing_lines(self.path), markup=False, highlight=False, soft_wrap=True)
        return 0

    def decide(self) -> int | None:
        """The player's decision; on a clock that runs out, the stand-in's (None: the match is lost)."""
        note, self.note = self.note, None
        clock = self.clock
        if clock is None:
            self.show(note)
            return self.choose()
        clock.start(time.monotonic(), self.match.hand_number)
        try:
            self.show(note)
            action = self.choose()
        except _OutOfTime:
            clock.stop(time.monotonic())
            if clock.on_time == "lose":
                return None
            action = self.computer_action(self.HUMAN, STAND_IN)
            self.note = self.stand_in_note(action)
            return action
        clock.stop(time.monotonic())
        return action

    def stand_in_note(self, action: int) -> Text:
        from rich.text import Text

        text = Text("Your time ran out: ", style="bold red")
        text.append(f"the computer ({STAND_IN}) played for you: {action_name(action)}.")
        return text

    def stop_clock(self) -> None:
        """Leaving in the middle of a decision: its time so far counts, and is saved with the game."""
        if self.clock is not None and self.clock.running:
            self.clock.stop(time.monotonic())
            self.save()

    def end_on_time(self) -> int:
        """The player's clock ran out on a "lose" clock: the match is lost on time, and saved so."""
        from .render import render_outcome

        self.lost_on_time = True
        self.save()
        if self.interactive:
            self.console.clear()
        obs = self.match.observation(self.HUMAN)
        self.console.print(render_outcome(obs, self.names, ending=("time", self.COMPUTER)))
        self.console.print(closing_lines(self.path), markup=False, highlight=False, soft_wrap=True)
        return 0


def play_action_for(c: int, take: int) -> int:
    return PLAY_TAKE_BASE + 4 * c + (take & 3)


def closing_lines(path: Path) -> str:
    """Where the game record is, and the two commands that read it: each path at the start of a line of its
    own (under the home directory, as ``~/...``), so that a terminal breaks none of them in the middle
    unless it is narrower than the path itself."""
    try:
        shown = "~/" + str(Path(path).resolve().relative_to(Path.home().resolve()))
    except (ValueError, RuntimeError, OSError):  # not under the home directory, or no home at all
        shown = str(path)
    return (
        f"The game record:\n  {shown}\nTo replay it, or to see where points were lost:\n"
        f"  koikoi replay {shown}\n  koikoi review {shown}"
    )
