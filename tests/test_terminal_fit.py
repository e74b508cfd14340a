"""The terminal game's screen budget (issue 33, item 8): at 80×24, at every decision of many matches, the
table is drawn whole in the 23 lines above the prompt, with or without a hint in place of the hand and a
question's lines under it. The pseudo-terminal tests (test_terminal.py) play a few games through
``koikoi play`` itself; these lay out every position of many, which a pty would take minutes to reach.
"""

from __future__ import annotations

import io
import random
import re

import pytest
from rich.console import Console, Group
from rich.text import Text

from koikoi import Match, preset
from koikoi.ai.hints import captured_by
from koikoi.cards import CARD_NAMES
from koikoi.terminal import PlaySession

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
CLEAR = "\x1b[2J"


def screen(session: PlaySession, out: io.StringIO) -> list[str]:
    """What the last draw left on the screen: the lines after its clear."""
    out.seek(0)
    out.truncate()
    session.draw()
    text = ANSI.sub("", out.getvalue().rsplit(CLEAR, 1)[-1])
    return text.rstrip("\n").split("\n")


def hint_for(session: PlaySession, obs) -> list:
    """A hint for every legal choice, with figures of the widest the screen shows (-10.5 pts, 100% win)."""
    from koikoi.ai.hints import HintLine

    lines = [HintLine(a, -10.5, 1.0, captured_by(obs, a)) for a in obs.legal_actions]
    return [session.hint_row(obs, line) for line in lines]


@pytest.mark.parametrize("rules, seed", [("nintendo", 1), ("nintendo", 2), ("traditional", 3), ("bga", 4)])
def test_every_position_fits_80x24(tmp_path, rules, seed):
    rng = random.Random(seed)
    match = Match(preset(rules).replace(hands=3), seed=seed)
    out = io.StringIO()
    console = Console(file=out, width=80, height=24, force_terminal=True, color_system=None, emoji=False)
    session = PlaySession(match, tmp_path / "g.json", "You", "easy", console, interactive=True)
    shown = 0
    while not match.is_over():
        obs = match.observation(0)
        if match.current_player == 0:
            session.show()
            question = None
            if obs.phase == "draw_choice":  # the take question's three lines under the table
                question = Group(
                    Text("You drew a card: it matches two table cards. Which one do you take?"),
                    Text("  1  x"),
                    Text("  2  y"),
                )
            elif obs.phase == "decision":
                question = Text("Your yaku: ... Stopping now scores 10 × 2 = 20 points.")
            session.sticky = question
            for hint in (None, hint_for(session, obs)) if obs.phase != "draw_choice" else (None,):
                session.hint = hint
                lines = screen(session, out)
                shown += 1
                assert len(lines) <= 23 and lines[0].startswith("Koi-Koi ·"), "\n".join(lines)
                assert all(len(line.rstrip()) <= 80 for line in lines)
                assert sum(line.startswith(("Computer · ", "You · ")) for line in lines) == 2, "\n".join(lines)
                assert any(line.startswith("─ Table · ") for line in lines)
                if hint is not None:
                    rows = lines[next(i for i, x in enumerate(lines) if x.startswith("─ Hint")) + 1 :]
                    rows = [r for r in rows if r.strip() and not r.startswith("Your yaku")]
                    assert len(rows) == len(hint), "\n".join(lines)  # a row each, none wrapped
                    for (key, c, *_), row in zip(hint, rows):
                        assert row.split()[0] == key and (c is None or CARD_NAMES[c] in row), row
            session.sticky = session.hint = None
        match.apply_action(rng.choice(obs.legal_actions) if match.current_player == 0 else match.legal_actions()[0])
    assert shown > 40


def test_the_folded_layout_is_used_when_nothing_else_fits(tmp_path):
    """A late position with both piles long: the compact layout is too tall for 24 lines with a hint,
    so each player folds into one line (the pile counted by kind)."""
    match = Match(preset("nintendo"), seed=3)
    while len(match.actions) < 22:
        match.apply_action(match.legal_actions()[0])
    assert match.current_player == 0
    out = io.StringIO()
    console = Console(file=out, width=80, height=24, force_terminal=True, color_system=None, emoji=False)
    session = PlaySession(match, tmp_path / "g.json", "You", "easy", console, interactive=True)
    session.show()
    obs = match.observation(0)
    session.hint = hint_for(session, obs)
    session.sticky = Group(*(Text(f"line {i}") for i in range(8)))  # a question of eight lines under it
    lines = screen(session, out)
    assert len(lines) <= 23, "\n".join(lines)
    assert "Computer · 0 points · 5 in hand · ◆3 ▬3 ·4" in lines, "\n".join(lines)
    assert "You · 3 points · dealer (oya) · ▬1 ·1" in lines, "\n".join(lines)


def test_the_help_fits_80_columns_and_24_lines():
    """The help is shown in place of the table: every line within 79 columns (a line of the clock's part
    ran to 81, and the terminal wrapped its last word), all of it with the clock's part and the prompt in
    24 lines."""
    from koikoi.render import LEGEND
    from koikoi.terminal import CLOCK_HELP, PLAY_HELP

    text = PLAY_HELP + "\n" + CLOCK_HELP + LEGEND
    assert max(len(line) for line in text.splitlines()) <= 79
    assert len(text.splitlines()) + 1 <= 24
