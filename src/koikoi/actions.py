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

import re

from .cards import CARD_NAMES, NUM_CARDS, UnknownCardError, card

__all__ = [
    "NUM_ACTIONS",
    "PLAY_TAKE_BASE",
    "DRAW_TAKE_BASE",
    "KOIKOI",
    "STOP",
    "DECLARE",
    "play_action",
    "draw_take_action",
    "action_name",
    "parse_action",
    "ActionParseError",
    "is_action",
    "check_action",
]

PLAY_TAKE_BASE = 48
DRAW_TAKE_BASE = 240
KOIKOI = 288
STOP = 289
DECLARE = 290
NUM_ACTIONS = 291


class ActionParseError(ValueError):
    """Text that does not name an action."""


def _shown(value: object) -> str:
    # A stranger's value in a message: never a megabyte of digits or text.
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value) if -(10**12) < value < 10**12 else f"<{'-' if value < 0 else ''}{value.bit_length()} bits>"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _card_id(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < NUM_CARDS:
        raise ValueError(f"{what} must be a card id 0..{NUM_CARDS - 1}, not {_shown(value)}")
    return value


def play_action(card_id: int, take: int | None = None) -> int:
    """Play ``card_id`` from the hand, capturing table card ``take`` where there is a choice."""
    _card_id(card_id, "the card played")
    if take is None:
        return card_id
    _card_id(take, "the card taken")
    if take >> 2 != card_id >> 2:
        raise ValueError(f"{CARD_NAMES[card_id]} cannot take {CARD_NAMES[take]}: they are of different months")
    if take == card_id:
        raise ValueError(f"{CARD_NAMES[card_id]} cannot take itself")
    return PLAY_TAKE_BASE + 4 * card_id + (take & 3)


def draw_take_action(take: int) -> int:
    """The drawn card captures table card ``take``."""
    return DRAW_TAKE_BASE + _card_id(take, "the card taken")


def _name(action: int) -> str | None:
    if action < PLAY_TAKE_BASE:
        return f"play {CARD_NAMES[action]}"
    if action < DRAW_TAKE_BASE:
        c, r = divmod(action - PLAY_TAKE_BASE, 4)
        take = (c & ~3) | r
        return None if take == c else f"play {CARD_NAMES[c]} take {CARD_NAMES[take]}"
    if action < KOIKOI:
        return f"take {CARD_NAMES[action - DRAW_TAKE_BASE]}"
    return ("koikoi", "stop", "declare")[action - KOIKOI]


# None marks the 48 numbers 48 + 4*c + (c & 3), a card taking itself: no action has them.
_NAMES: tuple[str | None, ...] = tuple(_name(a) for a in range(NUM_ACTIONS))


def is_action(action: object) -> bool:
    """Whether ``action`` is the number of an action: an ``int`` (not a bool) in ``range(NUM_ACTIONS)``
    that names something a player could do.

    >>> is_action(0), is_action(290), is_action(-1), is_action(291), is_action(True), is_action(181)
    (True, True, False, False, False, False)
    """
    return (
        isinstance(action, int)
        and not isinstance(action, bool)
        and 0 <= action < NUM_ACTIONS
        and _NAMES[action] is not None
    )


def check_action(action: object) -> int:
    """``action`` if :func:`is_action`; else a ``ValueError`` naming it and the valid numbers.

    >>> check_action(-300)
    Traceback (most recent call last):
    ...
    ValueError: no action has the number -300: actions are numbered 0..290
    """
    if isinstance(action, bool) or not isinstance(action, int):
        raise ValueError(
            f"an action is a whole number 0..{NUM_ACTIONS - 1}, not {_shown(action)} ({type(action).__name__})"
        )
    if not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"no action has the number {_shown(action)}: actions are numbered 0..{NUM_ACTIONS - 1}")
    if _NAMES[action] is None:
        c = (action - PLAY_TAKE_BASE) // 4
        raise ValueError(f"no action has the number {action}: it would be {CARD_NAMES[c]} taking itself")
    return action


def action_name(action: int) -> str:
    """The human notation of an action, which :func:`parse_action` reads back; a ``ValueError`` for
    anything that is not an action number (see :func:`check_action`)."""
    return _NAMES[check_action(action)]  # type: ignore[return-value]


_NUMBER = re.compile(r"[+-]?[0-9]+")


def parse_action(text: str) -> int:
    """Read an action from its notation (``play CARD [take CARD]``, ``take CARD``, ``koikoi``, ``stop``,
    ``declare``) or its number (ASCII digits)."""
    if not isinstance(text, str):
        raise ActionParseError(f"an action is read from text, not {_shown(text)} ({type(text).__name__})")
    words = text.strip().lower().split()
    try:
        if len(words) == 1 and _NUMBER.fullmatch(words[0]):
            digits = words[0].lstrip("+-").lstrip("0")
            if len(digits) > 3:  # int() of a long run of digits is slow, or refused outright
                raise ValueError(
                    f"no action has the number {words[0][:12]}...: actions are numbered 0..{NUM_ACTIONS - 1}"
                )
            # The digits without their leading zeros: int() refuses a run of 4300 zeros as well.
            return check_action(-int(digits or "0") if words[0].startswith("-") else int(digits or "0"))
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
        raise ActionParseError(f"cannot read action {_shown(text)}: {e}") from None
    raise ActionParseError(
        f"cannot read action {_shown(text)}: expected 'play CARD', 'play CARD take CARD', 'take CARD', "
        "'koikoi', 'stop' or 'declare'"
    )
