"""Hints: every legal choice of a position, best first, in the units the table shows.

The web table and the terminal game both show a hint as a list of :class:`HintLine`: each legal
action with the cards it takes from the table, the points to expect from the hand (a stop is exactly
the points it scores) and, where the search weighs the match score, the chance of winning the match.
The ``hard`` agent's search gives the figures; it sees only the player's own observation.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..actions import DRAW_TAKE_BASE, KOIKOI, PLAY_TAKE_BASE, action_name
from ..cards import MONTH_MASKS, card_list
from ..observation import Observation
from .base import Choice

__all__ = ["HintLine", "hint_lines", "captured_by", "WIN_DIGITS"]

# The match chance is shown to a tenth of a percent (48.3%): three decimals of the fraction.
WIN_DIGITS = 3


@dataclass(frozen=True, slots=True)
class HintLine:
    action: int
    points: float | None  # the points to expect from this hand; None when the search did not weigh it
    win: float | None  # the chance (0..1) of winning the match, where the search weighs the match score
    captures: tuple[int, ...]  # the table cards this action takes (the drawn card's capture is not known yet)

    @property
    def name(self) -> str:
        return action_name(self.action)

    def to_dict(self) -> dict[str, object]:
        return {
            "action": self.action,
            "points": None if self.points is None else round(self.points, 2),
            "win": None if self.win is None else round(self.win, WIN_DIGITS),
            "captures": list(self.captures),
        }


def captured_by(obs: Observation, action: int) -> tuple[int, ...]:
    """The table cards ``action`` takes in the position of ``obs`` (empty for a discard or a decision)."""
    if action < PLAY_TAKE_BASE:  # a play with no choice: nothing, the one card of its month, or all three
        return tuple(card_list(obs.table_mask & MONTH_MASKS[action >> 2]))
    if action < DRAW_TAKE_BASE:
        c, r = divmod(action - PLAY_TAKE_BASE, 4)
        return ((c & ~3) | r,)
    if action < KOIKOI:
        return (action - DRAW_TAKE_BASE,)
    return ()


def hint_lines(obs: Observation, ranked: list[Choice]) -> list[HintLine]:
    """The agent's ranking as hint lines, sorted by what they show: the chance of winning the match
    where there is one, to the tenth of a percent it is shown with (and shown first), then the points
    (so two moves shown with the same chance are in the order of the points beside it); without a
    match chance, the points. The agent's own order breaks ties (and orders choices with no figure,
    such as the only legal action)."""
    order = {c.action: i for i, c in enumerate(ranked)}
    lines = [HintLine(c.action, c.points, c.win, captured_by(obs, c.action)) for c in ranked]
    low = float("-inf")

    def key(line: HintLine) -> tuple[float, float, int]:
        win = -round(line.win, WIN_DIGITS) if line.win is not None else 0.0
        return (win, -(line.points if line.points is not None else low), order[line.action])

    return sorted(lines, key=key)
