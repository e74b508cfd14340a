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

from .base import Agent, Choice
from .hard_v1 import HardV1Agent
from .heuristic import EasyAgent, MediumAgent, RandomAgent
from .registry import AGENT_NAMES, ALIASES, make_agent
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

# The one list of computer players (each with where it is offered) is koikoi.ai.registry's.
AGENT_ALIASES = ALIASES
