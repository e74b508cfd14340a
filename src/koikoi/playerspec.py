"""Player specs: a computer player and its options written as one string, ``NAME[OPTION=VALUE;...]``.

The same spelling serves ``koikoi arena --players``, ``--player-set``, ``benchmarks/strength.py`` and
``SingleAgentEnv(opponent=...)``. Options sit in square brackets after a built-in player's name,
separated by semicolons: no comma (the comma separates the two players of ``--players A,B``) and no
colon (``strength.py``'s ``A:B`` pairs). A ``cmd:`` bot or a ``policy:`` file is never read for options:
everything after its prefix is the command or the file name, brackets included.

>>> spec = parse_spec("hard[time_limit=none;playouts=11000]")
>>> spec.name, spec.options
('hard', {'time_limit': None, 'playouts': 11000})
>>> str(spec)
'hard[time_limit=none;playouts=11000]'
>>> parse_spec("cmd:./bot --depth=[3;4]").name
'cmd:./bot --depth=[3;4]'
>>> parse_assignment("A.time_limit=2.5", "AB")
('A', 'time_limit', 2.5)

This module only reads and writes the spelling; which options a player takes, and which values, is
checked where players are made (``koikoi.lineup.make_builtin``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "PlayerSpec",
    "SpecError",
    "parse_spec",
    "parse_value",
    "format_value",
    "parse_assignment",
    "with_options",
    "BOT_PREFIXES",
]

BOT_PREFIXES = ("cmd:", "policy:")  # players whose text after the prefix is theirs, never options
_NAME = re.compile(r"[A-Za-z0-9_.+/-]+\Z")
_OPTION = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_WORD = re.compile(r"[A-Za-z0-9_.+/-]+\Z")  # a value: no space, comma, colon, semicolon, bracket or '='
_INT = re.compile(r"[+-]?[0-9]+\Z")


def _shown(text: str, limit: int = 60) -> str:
    """``text`` quoted for a message, cut short: an error need not repeat a megabyte of input."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


class SpecError(ValueError):
    """A player spec or option that cannot be read: the message says what is wrong and how to write it."""


@dataclass(frozen=True, slots=True)
class PlayerSpec:
    """A player's name (a built-in name, ``cmd:COMMAND`` or ``policy:FILE``) and its options."""

    name: str
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def is_bot(self) -> bool:
        """A ``cmd:`` or ``policy:`` player, which takes no options."""
        return self.name.startswith(BOT_PREFIXES)

    def __str__(self) -> str:
        if not self.options:
            return self.name
        return f"{self.name}[{';'.join(f'{k}={format_value(v)}' for k, v in self.options.items())}]"


def parse_value(raw: str, where: str = "value") -> Any:
    """An option's value: ``none`` is None, ``true``/``false`` booleans, then a whole number, a number,
    or a word (``blend``).

    >>> [parse_value(s) for s in ("none", "true", "800", "-2", "0.5", "1e3", "blend")]
    [None, True, 800, -2, 0.5, 1000.0, 'blend']
    """
    text = raw.strip()
    low = text.lower()
    if low == "none":
        return None
    if low in ("true", "false"):
        return low == "true"
    if _INT.match(text):
        try:
            return int(text)
        except ValueError:  # Python reads no more than 4300 digits (reading them takes the square)
            raise SpecError(f"{where}: a whole number of {len(text.lstrip('+-'))} digits is too long") from None
    try:
        x = float(text)
    except ValueError:
        pass
    else:
        if x != x or x in (float("inf"), float("-inf")):
            raise SpecError(f"{where}: {_shown(raw)} is not a finite number")
        return x
    if not _WORD.match(text):
        raise SpecError(
            f"{where}: {_shown(raw)} is not a value: write none, true, false, a number or a word "
            "(letters, digits and _ . + / -, no spaces, commas, colons, semicolons, brackets or '=')"
        )
    return text


def format_value(value: Any) -> str:
    """The spelling :func:`parse_value` reads back to ``value``."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def _options(text: str, where: str) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for part in text.split(";"):
        part = part.strip()
        if not part:
            continue
        key, eq, raw = part.partition("=")
        key = key.strip()
        if not eq or not _OPTION.match(key) or not raw.strip():
            raise SpecError(f"{where}: {_shown(part)} is not an option: write OPTION=VALUE, options separated by ';'")
        if key in options:
            raise SpecError(f"{where}: the option {key} is given twice")
        options[key] = parse_value(raw, f"{where}: {key}")
    return options


def parse_spec(text: str) -> PlayerSpec:
    """Read ``NAME``, ``NAME[OPTION=VALUE;...]``, ``cmd:COMMAND`` or ``policy:FILE``.

    >>> parse_spec("medium[koikoi_playouts=0]")
    PlayerSpec(name='medium', options={'koikoi_playouts': 0})
    >>> parse_spec("hard[playouts]")
    Traceback (most recent call last):
    ...
    koikoi.playerspec.SpecError: player 'hard[playouts]': 'playouts' is not an option: write OPTION=VALUE, ...
    """
    text = text.strip()
    if text.startswith(BOT_PREFIXES):
        return PlayerSpec(text)
    where = f"player {_shown(text)}"
    name, bracket, rest = text.partition("[")
    name = name.strip()
    if not bracket:
        if not _NAME.match(name):
            raise SpecError(f"{where} is not a player name (letters, digits and _ . + / -)")
        return PlayerSpec(name)
    if not rest.endswith("]") or "[" in rest or "]" in rest[:-1]:
        raise SpecError(f"{where}: options go in one pair of brackets at the end, as hard[playouts=800;noise=1]")
    if not _NAME.match(name):
        raise SpecError(f"{where}: {_shown(name)} is not a player name (letters, digits and _ . + / -)")
    return PlayerSpec(name, _options(rest[:-1], where))


def parse_assignment(text: str, labels: Iterable[str]) -> tuple[str, str, Any]:
    """Read ``LABEL.OPTION=VALUE`` (``--player-set A.playouts=800``): the label, the option and its value.

    >>> parse_assignment("hard/b.noise=3", ["hard/a", "hard/b"])
    ('hard/b', 'noise', 3)
    """
    known = list(labels)
    key, eq, raw = text.partition("=")
    label, dot, option = key.strip().rpartition(".")
    label, option = label.strip(), option.strip()
    if not eq or not dot or not label or not _OPTION.match(option) or not raw.strip():
        raise SpecError(f"{_shown(text)} is not an option setting: write PLAYER.OPTION=VALUE, as A.time_limit=none")
    if label not in known:
        raise SpecError(f"{_shown(text)}: no player {_shown(label)} here; the players are {', '.join(known)}")
    return label, option, parse_value(raw, f"{label}.{option}")


def with_options(spec: str | PlayerSpec, options: Mapping[str, Any]) -> PlayerSpec:
    """``spec`` with ``options`` added (replacing those of the same name); a bot takes none.

    >>> str(with_options("hard[noise=1]", {"playouts": 800, "noise": 2}))
    'hard[noise=2;playouts=800]'
    """
    base = spec if isinstance(spec, PlayerSpec) else parse_spec(spec)
    if not options:
        return base
    if base.is_bot:
        raise SpecError(
            f"{base.name}: only built-in players take options; a bot reads its own command line "
            "(cmd:) and a trained policy has none (policy:)"
        )
    return PlayerSpec(base.name, {**base.options, **options})
