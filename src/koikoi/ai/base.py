"""The agent interface: ``choose(obs)`` picks an action, ``rank(obs)`` lists every legal one with a value.

An agent reads one :class:`~koikoi.observation.Observation` and nothing else; its randomness comes
from its own seeded generator, so the same seed and the same observations give the same choices.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..actions import action_name
from ..observation import Observation

__all__ = ["Agent", "Choice", "check_to_move", "sort_choices"]


@dataclass(frozen=True, slots=True)
class Choice:
    """One legal action with the agent's estimate of its worth, in points for the player to move.

    ``value`` is what the agent expects this player to gain from the hand (points won minus points
    lost, multipliers included) if it takes ``action``; heuristic agents give a rougher estimate on the
    same scale. ``explain`` says briefly where the number comes from.

    Where the agent weighs the match score, ``value`` is in those weighed units; ``points`` is then
    the plain expectation for the hand, in the units a player sees on the table (a stop is exactly the
    points it scores, multipliers included; without transfers, the opponent's points count against),
    and ``win`` the chance (0..1) of winning the match after this choice. Either is None when the agent
    does not estimate it. ``stderr`` is the standard error of ``points`` (the spread of the playouts'
    points over the square root of their number; 0 for an exact value such as a stop), None where the
    agent does not sample or measured too few playouts to say.
    """

    action: int
    value: float
    explain: str = ""
    points: float | None = None
    win: float | None = None
    stderr: float | None = None

    @property
    def name(self) -> str:
        return action_name(self.action)

    def __str__(self) -> str:
        tail = f" ({self.explain})" if self.explain else ""
        return f"{self.name}: {self.value:+.2f}{tail}"


class Agent:
    """A computer player. Subclasses implement :meth:`rank`; :meth:`choose` takes the best choice."""

    name = "agent"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def rank(self, obs: Observation) -> list[Choice]:  # pragma: no cover - interface
        """Every legal action of ``obs`` with its value, best first."""
        raise NotImplementedError

    def choose(self, obs: Observation) -> int:
        check_to_move(obs)
        return self.rank(obs)[0].action

    def __repr__(self) -> str:
        return f"{type(self).__name__}(seed={self.seed!r})"


def check_to_move(obs: Observation) -> None:
    """Refuse, with the reason, an observation where this player has nothing to do (not their turn)."""
    if not obs.legal_actions:
        raise ValueError(
            f"player {obs.player} has no legal action now (phase {obs.phase}, player {obs.current_player} to move)"
        )


def sort_choices(choices: list[Choice], rng: random.Random) -> list[Choice]:
    """Best first; equal values in an order drawn from ``rng`` (so ties do not always favour low ids)."""
    keyed = [(-c.value, rng.random(), c) for c in choices]
    keyed.sort(key=lambda t: (t[0], t[1]))
    return [c for _, _, c in keyed]
