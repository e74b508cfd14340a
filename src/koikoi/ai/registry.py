"""Every built-in computer player in one list: its name, how it is made, and where it is offered.

Three places offer computer players, each its own list of them:

- ``lobby``: the web app's opponents (a new game against the computer);
- ``play``: ``koikoi play --opponent``, the terminal game;
- ``arena``: ``koikoi arena``, the learning environments' opponents and the benchmarks, where a
  player may also be named by an alias (``greedy`` is ``easy`` there, ``pimc`` is ``hard``).

A player is made by name wherever it is offered: :func:`make_player` takes the place it is made for,
because one name means two players: ``greedy`` in ``koikoi play`` is the simple greedy player of
:mod:`koikoi.players`, and elsewhere the ``easy`` level. A name a place does not list is still made
(a game saved against ``hard-v1`` resumes against it), but only the places listed offer it anew.

>>> playable_levels()
('random', 'greedy', 'easy', 'medium', 'hard', 'expert')
>>> lobby_levels()
('random', 'easy', 'medium', 'hard', 'expert')
>>> type(make_player("greedy", seed=1, surface="play")).__name__, type(make_player("greedy", seed=1)).__name__
('GreedyPlayer', 'EasyAgent')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..players import GreedyPlayer
from ..rules import RuleSet
from .base import Agent
from .hard_v1 import HardV1Agent
from .heuristic import EasyAgent, MediumAgent, RandomAgent
from .search import ExpertAgent, HardAgent

__all__ = [
    "SURFACES",
    "BuiltinPlayer",
    "BUILTINS",
    "ALIASES",
    "AGENT_NAMES",
    "offered",
    "playable_levels",
    "lobby_levels",
    "arena_names",
    "find",
    "make_player",
    "make_agent",
]

SURFACES = ("lobby", "play", "arena")
_EVERYWHERE = SURFACES


@dataclass(frozen=True, slots=True)
class BuiltinPlayer:
    """A built-in computer player: ``cls(seed, **options)``, or ``cls(seed, rules)`` for one that reads
    the rule set from its maker (``takes_rules``), offered in the places named in ``offered``."""

    name: str
    cls: type[Any]
    offered: tuple[str, ...]
    about: str
    takes_rules: bool = False

    def make(self, seed: int | None = None, rules: RuleSet | None = None, **options: Any) -> Any:
        if self.takes_rules:
            return self.cls(seed, rules, **options)
        return self.cls(seed, **options)


# In the order the places list them.
BUILTINS: tuple[BuiltinPlayer, ...] = (
    BuiltinPlayer("random", RandomAgent, _EVERYWHERE, "a uniformly random legal move"),
    BuiltinPlayer(
        "greedy",
        GreedyPlayer,
        ("play",),
        "the simple greedy player: the most valuable capture; koi-koi only when far behind",
        takes_rules=True,
    ),
    BuiltinPlayer("easy", EasyAgent, _EVERYWHERE, "greedy captures; stops at once"),
    BuiltinPlayer("medium", MediumAgent, _EVERYWHERE, "chases yaku, weighs koi-koi by a few playouts"),
    BuiltinPlayer("hard", HardAgent, _EVERYWHERE, "a search over the worlds the hidden cards may make"),
    BuiltinPlayer("expert", ExpertAgent, _EVERYWHERE, "the same search with five times the budget"),
    # hard as it was before issue 15, frozen: the yardstick a better hard is measured against, not an
    # opponent to offer anyone.
    BuiltinPlayer("hard-v1", HardV1Agent, ("arena",), "hard as it was before issue 15, frozen: a yardstick"),
)
ALIASES: dict[str, str] = {"greedy": "easy", "normal": "medium", "strong": "hard", "pimc": "hard"}

_BY_NAME = {b.name: b for b in BUILTINS}
# The computer levels of koikoi.ai (Agent subclasses), in the list's order.
AGENT_NAMES: tuple[str, ...] = tuple(b.name for b in BUILTINS if issubclass(b.cls, Agent))


def offered(surface: str) -> tuple[str, ...]:
    """The names of the players ``surface`` offers, in order (aliases apart)."""
    if surface not in SURFACES:
        raise ValueError(f"no place {surface!r} offers computer players; the places are {', '.join(SURFACES)}")
    return tuple(b.name for b in BUILTINS if surface in b.offered)


def playable_levels() -> tuple[str, ...]:
    """The computer players ``koikoi play --opponent`` offers."""
    return offered("play")


def lobby_levels() -> tuple[str, ...]:
    """The computer levels the web app's lobby offers."""
    return offered("lobby")


def arena_names() -> list[str]:
    """Every name the arena takes for a built-in player: its players, then the aliases."""
    names = list(offered("arena"))
    return names + [a for a in ALIASES if a not in names]


def find(name: str, surface: str = "arena") -> BuiltinPlayer | None:
    """The player ``name`` (any case, spaces around ignored) stands for in ``surface``: the player of
    that name that ``surface`` offers, else the one the alias names, else the player of that name
    offered elsewhere; None when there is none."""
    key = name.strip().lower()
    found = _BY_NAME.get(key)
    if found is not None and surface in found.offered:
        return found
    if key in ALIASES:
        return _BY_NAME[ALIASES[key]]
    return found


def make_player(
    name: str, seed: int | None = None, rules: RuleSet | None = None, *, surface: str = "arena", **options: Any
) -> Any:
    """The built-in player ``name`` stands for in ``surface`` (see :func:`find`), made with ``seed`` and
    ``options`` (``hard`` and ``expert``: ``playouts``, ``time_limit``, ``noise``, ...)."""
    found = find(name, surface)
    if found is None:
        names = ", ".join([*offered(surface), *(a for a in ALIASES if a not in offered(surface))])
        raise ValueError(f"unknown computer player {name!r}; choose from {names}")
    return found.make(seed, rules, **options)


def make_agent(name: str, seed: int | None = None, **options: Any) -> Agent:
    """A computer level of :mod:`koikoi.ai` by name (``random``, ``easy``, ``medium``, ``hard``, ``expert``,
    ``hard-v1``, or an alias such as ``greedy``).

    ``options`` go to the agent's constructor (``hard`` and ``expert``: ``playouts``, ``time_limit``, ``noise``, ...).
    """
    key = name.strip().lower()
    found = _BY_NAME.get(ALIASES.get(key, key))
    if found is None or not issubclass(found.cls, Agent):
        names = ", ".join([*AGENT_NAMES, *ALIASES])
        raise ValueError(f"unknown computer player {name!r}; choose from {names}")
    agent: Agent = found.make(seed, **options)
    return agent
