"""``koikoi play`` and ``koikoi replay`` in a real pseudo-terminal (pexpect) of a set size, read back as the
screen a person sees (the pyte terminal emulator): rows × columns of characters, nothing scrolled away."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")
pyte = pytest.importorskip("pyte")

from koikoi import Match, preset  # noqa: E402
from koikoi.actions import parse_action  # noqa: E402
from koikoi.cards import CARD_NAMES, MONTH_MASKS, card, iter_cards  # noqa: E402
from koikoi.cli import PLAY_DEFAULT_OPPONENT, PLAY_DEFAULT_RULES  # noqa: E402
from koikoi.records import GameRecord, read_record, write_record  # noqa: E402
from koikoi.render import describe_event  # noqa: E402

KOIKOI = shutil.which("koikoi")
if KOIKOI is None:  # pragma: no cover - the package is installed with its console script
    pytest.skip("the koikoi console script is not installed", allow_module_level=True)

ROOT = Path(__file__).resolve().parent.parent
SIZES = [(24, 80), (40, 100)]  # (rows, columns)


class Terminal:
    """A program in a pseudo-terminal of ``rows`` × ``cols``, and the screen it has drawn."""

    def __init__(self, args: list[str], rows: int, cols: int, home: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        env.update(XDG_DATA_HOME=str(home), TERM="xterm-256color")
        self.rows, self.cols = rows, cols
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.child = pexpect.spawn(KOIKOI, args, dimensions=(rows, cols), env=env, timeout=30)
        self.ended = False
        self.out = b""  # everything written, scrolled away or not

    def prompt(self) -> list[str]:
        """Wait for the next prompt (or the end) and return the screen's lines."""
        i = self.child.expect([r"> ", pexpect.EOF])
        data = self.child.before + (self.child.after if i == 0 else b"")
        self.out += data
        self.stream.feed(data)
        self.ended = i == 1
        return self.lines

    def send(self, text: str) -> list[str]:
        self.child.sendline(text)
        return self.prompt()

    @property
    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    @property
    def last_line(self) -> str:
        return next((line for line in reversed(self.lines) if line.strip()), "")

    def text(self) -> str:
        """The screen as one string, a wrapped line joined again (runs of spaces count as one)."""
        return " ".join(" ".join(self.lines).split())

    def close(self) -> None:
        self.child.close(force=True)


def answer(last_line: str) -> str:
    if "Your move" in last_line or "Take" in last_line:
        return "1"
    if "koi-koi" in last_line:
        return "s"
    if "Press Enter" in last_line:
        return ""
    raise AssertionError(f"unexpected prompt {last_line!r}")


def new_game(path: Path, rules: str, seed: int, *, ai_seed: int = 7, opponent: str = "greedy", **options) -> Path:
    """A game with no move yet, saved as ``koikoi play`` saves it, with the computer's own seed fixed, so
    that 'koikoi play --resume' plays the same game every time."""
    match = Match(preset(rules).replace(**options) if options else preset(rules), seed=seed)
    players = [{"name": "You", "kind": "human"}, {"name": "Computer", "kind": "computer", "ai": opponent}]
    players[1]["ai_seed"] = ai_seed
    write_record(GameRecord.from_match(match, players=players), path)
    return path


def one_line(text: str) -> str:
    return " ".join(text.split())


def table_fits(term: Terminal) -> None:
    """The table's first line is the screen's first line: nothing scrolled away."""
    assert term.lines[0].startswith("Koi-Koi ·"), "\n".join(term.lines)
    assert term.last_line.startswith(("Your move", "Take", "s stop")), term.last_line


@pytest.mark.parametrize("rows, cols", SIZES)
def test_a_whole_game_fits_the_terminal_and_every_hand_ends_on_screen(rows, cols, tmp_path):
    """Item 10 and 11: at every prompt the table is whole from its first line; when a hand ends the screen
    shows every move since the player's last one (the computer's last play and draw too), both final
    piles with the winning yaku's cards marked, then the result box, all in view."""
    record = new_game(tmp_path / "g.json", "cardavia", 11, hands=2)
    term = Terminal(["play", "--resume", "--record", str(record)], rows, cols, tmp_path / "data")
    layouts = set()
    ends = []
    try:
        term.prompt()
        for _ in range(200):
            last = term.last_line
            if term.ended:
                break
            if "Press Enter" in last:
                ends.append((term.lines, term.text()))
            else:
                table_fits(term)
                layouts.add("boxes" if any(line.startswith("╭─ Table") for line in term.lines) else "compact")
            term.send(answer(last))
        assert term.ended, "the game did not end"
        final_screen = term.text()
    finally:
        term.close()
    # Small terminals get the compact layout, larger ones the boxes.
    assert layouts == {"compact"} if rows < 30 else "boxes" in layouts, layouts
    rec = read_record(record)
    assert rec.finished and len(rec.hands) == 2 and len(ends) == 2
    assert "Results" in final_screen and "final score" in final_screen
    # Where to learn from the game (the long record path may wrap the words at any letter).
    assert "koikoireview" in "".join(final_screen.split()), final_screen
    names = ["You", "Computer"]
    for (lines, text), hand, obs_events in zip(ends, rec.hands, _hand_events(rec)):
        assert lines[0].startswith(f"Hand {hand.number} is over"), "\n".join(lines)
        # Every move since the player's last play, in order, before the piles and the result box.
        last_play = max(i for i, e in enumerate(obs_events) if e[0] == 0 and e[1] == "play")
        shown = [one_line(describe_event(e, names).plain) for e in obs_events[last_play:]]
        at = [text.find(s) for s in shown]
        assert all(i >= 0 for i in at) and at == sorted(at), (shown, text)
        assert text.index("Computer · captured") < text.index("You · captured") < text.index(f"Hand {hand.number} over")
        assert at[-1] < text.index("Computer · captured")
        result = hand.result
        if result["winner"] is not None and any(
            y["name"] not in ("teshi", "kuttsuki", "oya-ken") for y in result["yaku"]
        ):
            assert "✓" in text  # the winning yaku's cards are marked
        assert [ln for ln in lines if ln][-1].startswith("Press Enter for")


def _hand_events(rec) -> list[list[tuple[int, str, int, int]]]:
    """Each hand's public events as the player saw them, by playing the record's actions again."""
    match = Match(rec.rules, seed=rec.seed)
    out = []
    for hand in rec.hands:
        for action in hand.actions:
            match.apply_action(parse_action(action))
        obs = match.observation(0)
        out.append(list(obs.events if match.is_over() else obs.previous_hand_events))
    return out


def test_the_computer_ends_the_hand_and_its_last_moves_are_shown(tmp_path):
    """Item 10 as reported: the computer's last play and draw and its stop were never on the screen."""
    for seed in range(11, 31):
        record = new_game(tmp_path / f"g{seed}.json", "cardavia", seed)
        term = Terminal(["play", "--resume", "--record", str(record)], 24, 80, tmp_path / "data")
        try:
            term.prompt()
            while "Press Enter" not in term.last_line and not term.ended:
                term.send(answer(term.last_line))
            text, lines = term.text(), term.lines
        finally:
            term.close()
        result = read_record(record).hands[0].result
        if result["reason"] == "stop" and result["winner"] == 1:
            break
    else:
        pytest.fail("no game of 20 ended with the computer's stop")
    assert lines[0].startswith("Hand 1 is over")
    assert re.search(r"Computer played .*Computer drew .*Computer stopped", text), text
    assert text.index("Computer stopped") < text.index("Hand 1 over")
    assert "✓" in text.split("Computer · captured", 1)[1].split("You · captured")[0]


@pytest.mark.parametrize("rows, cols", SIZES)
def test_help_shows_the_legend_and_r_redraws_the_last_moves(rows, cols, tmp_path):
    """Item 11: h explains ★ ◆ ▬ · and the month numbers, all on one screen; r after an error draws the
    same table again, last moves included."""
    record = new_game(tmp_path / "g.json", "cardavia", 11)
    term = Terminal(["play", "--resume", "--record", str(record)], rows, cols, tmp_path / "data")
    try:
        term.prompt()
        while True:  # the first move, and what the computer did after it
            term.send(answer(term.last_line))
            if "Your move" in term.last_line:
                break
        after_move = term.lines
        assert "─ Last moves" in term.text() or "╭─ Last moves" in term.text()
        assert "Computer played" in term.text() and "Computer drew" in term.text()
        table_fits(term)
        term.send("h")
        help_screen = term.text()
        assert term.lines[0].startswith("How to play"), "\n".join(term.lines)  # the whole help is in view
        for words in ("★ bright", "◆ animal", "▬ ribbon", "· plain (chaff)", "(n) after a card is its month"):
            assert words in help_screen, words
        for month, name in enumerate(("pine", "plum", "cherry", "wisteria", "iris", "peony"), 1):
            assert f"{month} {name}" in help_screen
        assert "12 paulownia" in help_screen and "r / redraw" in help_screen
        term.send("")
        assert term.lines == after_move  # back to the same table
        term.send("nonsense")
        assert "'nonsense' is not a move" in term.text()
        table_fits(term)  # the error sits under the table, whose top stays in view
        term.send("r")
        assert term.lines == after_move
    finally:
        term.close()


def test_replay_step_mode_shows_its_prompt(tmp_path):
    """Item 11: 'koikoi replay FILE' in step mode says what Enter and q do at every step."""
    record = new_game(tmp_path / "g.json", "cardavia", 11)
    term = Terminal(["play", "--resume", "--record", str(record)], 24, 80, tmp_path / "data")
    try:
        term.prompt()
        for _ in range(4):
            term.send(answer(term.last_line))
    finally:
        term.close()
    term = Terminal(["replay", str(record), "--step"], 24, 80, tmp_path / "data")
    try:
        term.prompt()
        assert term.last_line == "Enter: next, q: quit >", term.lines
        term.send("")
        assert term.last_line == "Enter: next, q: quit >"
        assert "   1. You played" in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", term.out.decode())
        term.send("q")
        assert term.ended and "(replay stopped)" in term.text()
    finally:
        term.close()


def test_play_starts_with_the_lobbys_defaults(tmp_path):
    """Item 12: 'koikoi play' with no options plays the web lobby's preset against its opponent."""
    static = ROOT / "src" / "koikoi" / "web"
    lobby_js = (static / "static" / "lobby.js").read_text()
    lobby_html = (static / "templates" / "lobby.html").read_text()
    assert re.search(r'preset\.value = localStorage\.getItem\("koikoi\.preset"\) \|\| "([\w-]+)"', lobby_js)[1] == (
        PLAY_DEFAULT_RULES
    )
    assert re.search(r'<option value="(\w+)" selected>', lobby_html)[1] == PLAY_DEFAULT_OPPONENT
    record = tmp_path / "g.json"
    term = Terminal(["play", "--record", str(record)], 24, 80, tmp_path / "data")
    try:
        term.prompt()
        assert term.lines[0].startswith(f"Koi-Koi · {PLAY_DEFAULT_RULES} rules")
        term.send("q")
    finally:
        term.close()
    rec = read_record(record)
    assert rec.rules.name == PLAY_DEFAULT_RULES and rec.players[1]["ai"] == PLAY_DEFAULT_OPPONENT


HINT_ROW = re.compile(
    r"^(\d+|[ksd]) +(?:(\S) (\S+) \((\d+)\)(?: → (\S+))?|(\S.*?)) +([+-]\d+\.\d) pts(?: +(\d+)% win)?$"
)


def test_a_hint_keeps_the_whole_table_on_an_80x24_screen(tmp_path):
    """Issue 33, item 8: '?' mid-hand showed the hint under a table that already filled the 24 lines,
    scrolling its top away, and its 'takes …' lines wrapped. At every decision of a whole hand the hint
    now takes the hand's place: the header, both players, the table, every choice on a line of its own
    (the number to type, the card, what it takes, the figures: each row whole, none wrapped onto the
    next line) and the prompt are all on the screen."""
    record = new_game(tmp_path / "g.json", "cardavia", 11)
    term = Terminal(["play", "--resume", "--record", str(record)], 24, 80, tmp_path / "data")
    hints = 0
    try:
        term.prompt()
        while "Press Enter" not in term.last_line and not term.ended:
            last = term.last_line
            rec = read_record(record)
            match = Match(rec.rules, seed=rec.seed)
            for hand in rec.hands:
                for action in hand.actions:
                    match.apply_action(parse_action(action))
            obs = match.observation(0)
            if "Take" not in last:
                before = term.lines
                assert before[0].startswith("Koi-Koi ·") and any(x.startswith("─ Your hand") for x in before)
                lines = term.send("?")
                hints += 1
                assert lines[0].startswith("Koi-Koi ·"), "\n".join(lines)
                assert term.last_line == last, "\n".join(lines)  # the same question, asked again
                assert sum(x.startswith("Computer · ") for x in lines) == 1, "\n".join(lines)
                assert sum(x.startswith("You · ") for x in lines) == 1, "\n".join(lines)
                assert any(x.startswith("─ Table · ") for x in lines), "\n".join(lines)
                start = next(i for i, x in enumerate(lines) if x.startswith("─ Hint · best first"))
                rows = [HINT_ROW.match(x) for x in lines[start + 1 :] if x and x != term.last_line]
                assert all(rows) and len(rows) == len(obs.legal_actions), "\n".join(lines)
                for row in rows:
                    if row[2] is None:  # a decision: k koi-koi or s stop
                        assert row[1] in "ks" and obs.phase == "decision", row[0]
                        continue
                    number, name = int(row[1]), row[3]
                    assert obs.hand[number - 1] == card(name), row[0]  # the number to type plays that card
                    takes = obs.table_mask & MONTH_MASKS[card(name) >> 2]
                    shown = [
                        t for t in iter_cards(takes) if CARD_NAMES[t].split("-", 1)[1] in (row[5] or "").split("/")
                    ]
                    assert len(shown) == (takes.bit_count() if takes.bit_count() != 2 else 1), row[0]
            term.send(answer(term.last_line))
    finally:
        term.close()
    assert hints >= 6
