"""Actions as small ints, and their names.

Every choice a player makes is one int in ``range(NUM_ACTIONS)``:

- ``0..47``: play that card from the hand (it captures whatever it must, or stays on the table);
- ``48 + 4*card + r``: play ``card`` and capture the table card of its month whose index is ``r``
  (only when two table cards of that month give a choice);
- ``240 + t``: the card drawn from the stock captures table card ``t`` (again only with a choice);
- ``KOIKOI``, ``STOP``: the decision after a turn that raised the player's yaku score;
- ``DECLARE``: declare a dealt teshi/kuttsuki on the first turn (with ``hand_bonus_declared``).

>>> action_name(play_action(card("pine-crane")))
'play pine-crane'
>>> parse_action("play pine-crane take pine-plain-1") == play_action(0, 2)
True
>>> action_name(KOIKOI)
'koikoi'
"""

from __future__ import annotations

from .cards import CARD_NAMES, UnknownCardError, card

__all__ = [
    "NUM_ACTIONS", "PLAY_TAKE_BASE", "DRAW_TAKE_BASE", "KOIKOI", "STOP", "DECLARE",
    "play_action", "draw_take_action", "action_name", "parse_action", "ActionParseError",
]

PLAY_TAKE_BASE = 48
DRAW_TAKE_BASE = 240
KOIKOI = 288
STOP = 289
DECLARE = 290
NUM_ACTIONS = 291


class ActionParseError(ValueError):
    """Text that does not name an action."""


def play_action(card_id: int, take: int | None = None) -> int:
    """Play ``card_id`` from the hand, capturing table card ``take`` where there is a choice."""
    if take is None:
        return card_id
    if take >> 2 != card_id >> 2:
        raise ValueError(f"{CARD_NAMES[card_id]} cannot take {CARD_NAMES[take]}: they are of different months")
    return PLAY_TAKE_BASE + 4 * card_id + (take & 3)


def draw_take_action(take: int) -> int:
    """The drawn card captures table card ``take``."""
    return DRAW_TAKE_BASE + take


def action_name(action: int) -> str:
    """The human notation of an action, which :func:`parse_action` reads back."""
    if 0 <= action < PLAY_TAKE_BASE:
        return f"play {CARD_NAMES[action]}"
    if action < DRAW_TAKE_BASE:
        c, r = divmod(action - PLAY_TAKE_BASE, 4)
        return f"play {CARD_NAMES[c]} take {CARD_NAMES[(c & ~3) | r]}"
    if action < KOIKOI:
        return f"take {CARD_NAMES[action - DRAW_TAKE_BASE]}"
    if action == KOIKOI:
        return "koikoi"
    if action == STOP:
        return "stop"
    if action == DECLARE:
        return "declare"
    raise ValueError(f"no action has the number {action}")


def parse_action(text: str) -> int:
    """Read an action from its notation (``play CARD [take CARD]``, ``take CARD``, ``koikoi``, ``stop``,
    ``declare``) or its number."""
    words = text.strip().lower().split()
    try:
        if len(words) == 1 and words[0].isdigit():
            n = int(words[0])
            action_name(n)
            return n
        if words in (["koikoi"], ["koi-koi"]):
            return KOIKOI
        if words in (["stop"], ["agari"]):
            return STOP
        if words == ["declare"]:
            return DECLARE
        if len(words) == 2 and words[0] == "play":
            return play_action(card(words[1]))
        if len(words) == 4 and words[0] == "play" and words[2] == "take":
            return play_action(card(words[1]), card(words[3]))
        if len(words) == 2 and words[0] == "take":
            return draw_take_action(card(words[1]))
    except (UnknownCardError, ValueError) as e:
        raise ActionParseError(f"cannot read action {text!r}: {e}") from None
    raise ActionParseError(
        f"cannot read action {text!r}: expected 'play CARD', 'play CARD take CARD', 'take CARD', "
        "'koikoi', 'stop' or 'declare'")
