"""Computer opponents from easy to strong, and hints: they read one Observation and nothing else.

``make_agent(name, seed)`` builds one; ``agent.choose(obs)`` picks an action and ``agent.rank(obs)``
lists every legal action with its estimated value in points, best first (the hint).

>>> from koikoi.match import Match
>>> from koikoi.rules import preset
>>> m = Match(preset("nintendo"), seed=7)
>>> agents = [make_agent("medium", seed=1), make_agent("hard", seed=2, playouts=40, time_limit=None)]
>>> obs = m.observation(m.current_player)
>>> agents[m.current_player].choose(obs) in obs.legal_actions
True
"""

from __future__ import annotations

from typing import Any

from .base import Agent, Choice
from .hard_v1 import HardV1Agent
from .heuristic import EasyAgent, MediumAgent, RandomAgent
from .search import ExpertAgent, HardAgent

__all__ = [
    "Agent",
    "Choice",
    "RandomAgent",
    "EasyAgent",
    "MediumAgent",
    "HardAgent",
    "ExpertAgent",
    "HardV1Agent",
    "AGENT_NAMES",
    "AGENT_ALIASES",
    "make_agent",
]

_AGENTS: dict[str, type[Agent]] = {
    "random": RandomAgent,
    "easy": EasyAgent,
    "medium": MediumAgent,
    "hard": HardAgent,
    "expert": ExpertAgent,  # the same search with five times the budget
    "hard-v1": HardV1Agent,  # hard as it was before issue 15, frozen: the yardstick for a better hard
}
AGENT_NAMES: tuple[str, ...] = tuple(_AGENTS)
AGENT_ALIASES = {"greedy": "easy", "normal": "medium", "strong": "hard", "pimc": "hard"}


def make_agent(name: str, seed: int | None = None, **options: Any) -> Agent:
    """An agent by level name (``random``, ``easy``, ``medium``, ``hard``, ``expert``, ``hard-v1``, or an
    alias such as ``greedy``).

    ``options`` go to the agent's constructor (``hard`` and ``expert``: ``playouts``, ``time_limit``, ``noise``, ...).
    """
    key = name.strip().lower()
    key = AGENT_ALIASES.get(key, key)
    cls = _AGENTS.get(key)
    if cls is None:
        names = ", ".join([*AGENT_NAMES, *AGENT_ALIASES])
        raise ValueError(f"unknown computer player {name!r}; choose from {names}")
    return cls(seed, **options)
