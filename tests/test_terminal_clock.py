"""``koikoi play --time-control``: the player's clock in a real pseudo-terminal (pexpect), read back as the
screen a person sees (pyte). The clock counts down on the prompt line while the player types, running out
loses the match on time (saved so), and with ``--on-time computer`` the easy level decides instead and the
game goes on. Short controls such as ``1+0`` are ordinary ``--time-control`` values; nothing here measures
wall-clock durations: the tests wait for what the screen shows, with generous timeouts."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")
pyte = pytest.importorskip("pyte")

from koikoi import Match, preset  # noqa: E402
from koikoi.clocks import time_control  # noqa: E402
from koikoi.records import GameRecord, read_record, write_record  # noqa: E402
from koikoi.terminal import PlayClock, clock_time, ended_early  # noqa: E402

KOIKOI = shutil.which("koikoi")
if KOIKOI is None:  # pragma: no cover - the package is installed with its console script
    pytest.skip("the koikoi console script is not installed", allow_module_level=True)

WAIT = 90  # seconds to wait for something the screen should show: far more than it takes on a busy machine
CLOCK = re.compile(r"^\[(?:(\d+) \+ )?(\d+):(\d\d)\] ")  # [9 + 1:00] or [0:42] at the start of the prompt line


class Screen:
    """``koikoi ARGS`` in a pseudo-terminal of 24 × 80, and what it has drawn."""

    def __init__(self, args: list[str], home: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        env.update(XDG_DATA_HOME=str(home), TERM="xterm-256color")
        self.screen = pyte.Screen(80, 24)
        self.stream = pyte.ByteStream(self.screen)
        self.child = pexpect.spawn(KOIKOI, args, dimensions=(24, 80), env=env, timeout=WAIT)
        self.out = b""
        self.ended = False

    @property
    def prompt_line(self) -> str:
        """The line the cursor is on: the prompt and what is typed after it."""
        return self.screen.display[self.screen.cursor.y].rstrip()

    def text(self) -> str:
        return " ".join(" ".join(line.rstrip() for line in self.screen.display).split())

    def wait_for(self, what: str, test) -> None:
        """Read what the program draws until ``test()`` holds (or it ended and it does not)."""
        deadline = time.monotonic() + WAIT
        while not test():
            left = deadline - time.monotonic()
            assert left > 0 and not self.ended, f"no {what} on the screen:\n" + "\n".join(self.screen.display)
            try:
                data = self.child.read_nonblocking(65536, timeout=min(left, 1.0))
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                self.ended = True
                continue
            self.out += data
            self.stream.feed(data)

    def clock(self) -> float | None:
        """The seconds the prompt line's clock shows (the decision's own and the bank's together)."""
        m = CLOCK.match(self.prompt_line)
        if m is None:
            return None
        return int(m[1] or 0) + int(m[2]) * 60 + int(m[3])

    def exit_status(self) -> int | None:
        self.wait_for("end of the program", lambda: self.ended)
        self.child.close()
        return self.child.exitstatus

    def close(self) -> None:
        self.child.close(force=True)


def human_actions(path: Path) -> int:
    rec = read_record(path)
    from koikoi.records import replay_steps

    return sum(1 for step in replay_steps(rec) if step.player == 0)


def test_the_clock_counts_down_on_the_prompt_line_while_the_player_types(tmp_path):
    record = tmp_path / "g.json"
    args = ["play", "--rules", "cardavia", "--seed", "11", "--time-control", "20+30", "--record", str(record)]
    term = Screen(args, tmp_path / "data")
    try:
        term.wait_for("clocked move prompt", lambda: term.clock() is not None and "Your move" in term.prompt_line)
        assert term.screen.display[0].startswith("Koi-Koi ·")  # the table above it, whole
        first = term.clock()
        assert re.match(r"\[\d+ \+ 0:30\] Your move \(1-\d.* >$", term.prompt_line), term.prompt_line
        term.child.send("x")  # typed, not yet entered: the clock's redraws keep it
        term.wait_for("clock going down", lambda: (term.clock() or first) < first)
        term.wait_for("typed text", lambda: term.prompt_line.endswith("> x"))
        assert term.clock() < first
        shown = term.clock()
        term.wait_for("another tick", lambda: (term.clock() or shown) < shown)
        assert term.prompt_line.endswith("> x"), term.prompt_line
        term.child.send("\x7f1\r")  # Backspace, then card 1: a move
        term.wait_for("the move", lambda: "You played" in term.text() or "Take (" in term.prompt_line)
        if "Take (" in term.prompt_line:  # the card matches two on the table: which one
            term.child.send("1\r")
            term.wait_for("the move", lambda: "You played" in term.text())
        term.wait_for("the next clocked prompt", lambda: term.clock() is not None)
        term.child.send("q\r")
        assert term.exit_status() == 0
    finally:
        term.close()
    assert human_actions(record) >= 1
    clock = read_record(record).metadata["clock"]
    assert clock["time_control"] == "20+30" and clock["on_time"] == "lose" and 0 <= clock["bank"] <= 30
    # 'koikoi play --resume' plays on with the game's clock and what is left of its bank.
    term = Screen(["play", "--resume", "--record", str(record)], tmp_path / "data")
    try:
        term.wait_for("clocked move prompt", lambda: term.clock() is not None)
        assert re.match(r"\[\d+ \+ 0:\d\d\] ", term.prompt_line), term.prompt_line
        term.child.send("h\r")  # help, with the clock's own lines, and still the clock at the prompt
        term.wait_for("the clock's help", lambda: "bank alone" in term.text() and term.clock() is not None)
        # All of it on the 24 lines, from its first (issue 33, item 8): the moves, the clock, the legend.
        assert term.screen.display[0].startswith("How to play"), "\n".join(term.screen.display)
        assert "q / quit" in term.text() and "12 paulownia" in term.text()
        term.child.send("\r")
        term.wait_for("the table again", lambda: term.screen.display[0].startswith("Koi-Koi ·"))
        term.child.send("q\r")
        assert term.exit_status() == 0
    finally:
        term.close()


def test_a_clock_that_runs_out_loses_the_match_on_time(tmp_path):
    home = tmp_path / "data"
    term = Screen(["play", "--rules", "cardavia", "--seed", "11", "--time-control", "1+0"], home)
    try:
        term.wait_for("the end of the match", lambda: "ran out of time: Computer wins" in term.text())
        assert term.exit_status() == 0
    finally:
        term.close()
    text = term.text()
    assert "You ran out of time: Computer wins the match." in text and "koikoi replay" in text
    (record,) = (home / "koikoi" / "games").glob("*.json")
    # Each path starts a line of its own (issue 43, item 22): a terminal breaks none of them mid-word
    # unless it is narrower than the path (this test's temporary one is longer than 80 columns).
    lines = [line.rstrip() for line in term.screen.display]
    assert ("  " + str(record))[:80] in lines, lines
    for command in ("replay", "review"):
        assert any(line.startswith(f"  koikoi {command} {str(record)[:40]}") for line in lines), lines
    rec = read_record(record)
    # Written as the web app writes a match that ended on time.
    assert (rec.metadata["ending"], rec.metadata["winner"]) == ("time", 1) and ended_early(rec.metadata) == ("time", 1)
    assert rec.metadata["clock"] == {"time_control": "1+0", "on_time": "lose", "bank": 0.0}
    env = dict(os.environ, XDG_DATA_HOME=str(home))
    # The match is over: it cannot be resumed, and the latest game to resume is not this one.
    r = subprocess.run([KOIKOI, "play", "--resume"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "no unfinished game to resume" in r.stderr, r.stderr
    r = subprocess.run(
        [KOIKOI, "play", "--resume", "--record", str(record)], env=env, capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 2 and "ended on time" in r.stderr, r.stderr
    r = subprocess.run([KOIKOI, "replay", "--all", str(record)], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "ended early (time)" in r.stdout and "You ran out of time: Computer wins the match." in r.stdout


def test_on_time_computer_plays_for_the_player_and_the_game_goes_on(tmp_path):
    record = tmp_path / "g.json"
    args = ["play", "--rules", "cardavia", "--set", "hands=1", "--seed", "11", "--record", str(record)]
    term = Screen([*args, "--time-control", "1+0", "--on-time", "computer"], tmp_path / "data")
    try:
        # Nothing is typed: every decision of the player's is the easy level's, and the hand ends.
        term.wait_for("the stand-in's note", lambda: "the computer (easy) played for you" in term.text())
        term.wait_for("the end of the hand", lambda: "Press Enter for the match results" in term.prompt_line)
        term.child.send("\r")
        term.wait_for("the results", lambda: "final score" in term.text())
        assert term.exit_status() == 0
    finally:
        term.close()
    rec = read_record(record)
    assert rec.finished and "ending" not in rec.metadata and human_actions(record) >= 2
    assert rec.metadata["clock"] == {"time_control": "1+0", "on_time": "computer", "bank": 0.0}


@pytest.mark.parametrize(
    "args, message",
    [
        (["--time-control", "3d"], "3d is a correspondence control (days a move), for games on the web; at the "),
        (["--time-control", "ten"], "'ten' is not a time control; choose 10+60 or 20+120"),
        (["--on-time", "computer"], "--on-time says what happens when your clock runs out: it needs --time-control"),
        (["--time-control", "10+60"], "--time-control needs a terminal"),
    ],
)
def test_clock_options_that_cannot_be_played_say_why(tmp_path, args, message):
    """Through a pipe there is no clock (nothing could count down on a screen); bad choices name the good ones."""
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path))
    r = subprocess.run(
        [KOIKOI, "play", "--record", str(tmp_path / "g.json"), *args],
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and message in " ".join(r.stderr.split()), r.stderr
    assert not (tmp_path / "g.json").exists()


def test_the_players_clock_takes_overtime_from_the_bank():
    c = PlayClock(time_control("10+60"))
    c.start(100.0, hand=1)  # the hand's first decision: 8 s more
    assert (c.started, c.deadline) == (108.0, 178.0)
    assert c.status(100.0).plain == "[18 + 1:00] "
    c.stop(123.0)  # 15 s of its own time taken, 5 s more from the bank
    assert c.bank == 55.0 and not c.running
    c.start(200.0, hand=1)  # the same hand: no break
    assert c.deadline == 265.0 and c.status(209.5).plain == "[1 + 0:55] " and c.status(230.0).plain == "[0:35] "
    again = PlayClock.from_record(c.to_record())
    assert (again.control, again.on_time, again.bank) == (c.control, "lose", 55.0)
    assert clock_time(3725) == "1:02:05" and clock_time(0.2) == "0:01"
    bad_clocks = [
        {"time_control": "3d", "on_time": "lose", "bank": 0},
        {"time_control": "10+60", "on_time": "lose", "bank": 61},
    ]
    for bad in [*bad_clocks, {"time_control": "10+60", "on_time": "never", "bank": 1}, []]:
        with pytest.raises(ValueError):
            PlayClock.from_record(bad)


def test_the_terminal_clock_leaves_the_web_package_alone():
    """The terminal game's clock is the web's arithmetic (koikoi.clocks) without the web app's libraries."""
    code = (
        "import sys, koikoi.cli, koikoi.terminal, koikoi.ttyline, koikoi.clocks; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('fastapi', 'starlette', 'sqlalchemy') "
        "or m.startswith('koikoi.web')))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr


def test_a_record_of_a_match_ended_early_on_the_web_is_over_at_the_terminal(tmp_path):
    """The web app's record of a resigned match (metadata.ending and winner, the match cut short): not a
    game to resume, and its replay says how it ended."""
    match = Match(preset("cardavia"), seed=3)
    for _ in range(3):
        match.apply_action(match.legal_actions()[0])
    record = tmp_path / "resigned.json"
    meta = {"site": "koikoi serve", "ending": "resign", "winner": 0}
    write_record(GameRecord.from_match(match, ["Aiko", "Ben"], metadata=meta), record)
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path))
    r = subprocess.run(
        [KOIKOI, "play", "--resume", "--record", str(record)], env=env, capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 2 and "ended by resign" in r.stderr, r.stderr
    r = subprocess.run([KOIKOI, "replay", "--all", str(record)], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "Ben resigned: Aiko wins the match." in r.stdout, r.stdout[-2000:]
    assert "unfinished" not in r.stdout
    assert ended_early({"ending": "resign", "winner": True}) is None and ended_early({"ending": "nap"}) is None
    assert ended_early({"ending": "abort", "winner": None}) == ("abort", None)
