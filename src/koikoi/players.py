"""Computer players. They read one :class:`~koikoi.observation.Observation` and nothing else.

>>> from koikoi.match import Match
>>> from koikoi.rules import preset
>>> m = Match(preset("cardavia"), seed=3)
>>> players = [GreedyPlayer(1), RandomPlayer(2)]
>>> while not m.is_over():
...     p = m.current_player
...     m.apply_action(players[p].choose(m.observation(p)))
>>> m.is_over()
True
"""

from __future__ import annotations

import random
from collections.abc import Callable

from .actions import DECLARE, DRAW_TAKE_BASE, KOIKOI, PLAY_TAKE_BASE, STOP
from .cards import (
    ANIMALS,
    BLUE_RIBBONS,
    BRIGHTS,
    INO_SHIKA_CHO,
    MONTH_MASKS,
    POETRY_RIBBONS,
    RAIN_MAN,
    RIBBONS,
    SAKE_CUP,
    iter_cards,
)
from .observation import Observation
from .rules import RuleSet
from .yaku import scorer

__all__ = [
    "Player",
    "RandomPlayer",
    "GreedyPlayer",
    "card_value",
    "YAKU_WEIGHT",
    "DENIAL_WEIGHT",
]


class Player:
    """A computer player: ``choose(obs)`` returns one of ``obs.legal_actions``."""

    name = "computer"

    def choose(self, obs: Observation) -> int:  # pragma: no cover - interface
        raise NotImplementedError


class RandomPlayer(Player):
    """Uniformly random legal actions from its own seeded generator."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, obs: Observation) -> int:
        if not obs.legal_actions:
            raise ValueError(f"player {obs.player} has no legal action now")
        return self.rng.choice(obs.legal_actions)


def card_value(c: int) -> float:
    """How much a card is worth holding, roughly: brights most, chaff least.

    >>> card_value(0) > card_value(24) > card_value(25) > card_value(2)
    True
    """
    b = 1 << c
    if b & BRIGHTS:
        return 12.0 if b & RAIN_MAN else 20.0
    if b & SAKE_CUP:
        return 12.0
    if b & INO_SHIKA_CHO:
        return 10.0
    if b & ANIMALS:
        return 6.0
    if b & (POETRY_RIBBONS | BLUE_RIBBONS):
        return 7.0
    if b & RIBBONS:
        return 4.0
    return 1.0


def _mask_value(mask: int) -> float:
    return sum(card_value(c) for c in iter_cards(mask))


# A point of yaku is worth this much card value: completing a yaku beats any single capture.
YAKU_WEIGHT = 25.0
# Completing the opponent's yaku is bad; taking a card they need denies it.
DENIAL_WEIGHT = 12.0


class GreedyPlayer(Player):
    """Captures the most valuable cards and the biggest immediate yaku gain; stops as soon as its
    score rises, unless it is far behind in the match and has turns left to catch up.

    The rule set is public, but an observation carries only its name; pass ``rules`` when playing a
    custom rule set (otherwise the preset of that name is used).
    """

    name = "greedy"

    def __init__(self, seed: int | None = None, rules: RuleSet | None = None) -> None:
        self.rng = random.Random(seed)
        self.rules = rules

    def _rules(self, obs: Observation) -> RuleSet:
        return self.rules if self.rules is not None else obs.rule_set

    def choose(self, obs: Observation) -> int:
        legal = obs.legal_actions
        if not legal:
            raise ValueError(f"player {obs.player} has no legal action now")
        if DECLARE in legal:
            return DECLARE  # a dealt hand bonus is points now, for certain
        if obs.phase == "decision":
            return self._decide(obs)
        rules = self._rules(obs)
        total = scorer(rules)
        me, opp = obs.player, 1 - obs.player
        pile, opp_pile = obs.pile_masks[me], obs.pile_masks[opp]
        now = total(pile, obs.month)
        opp_now = total(opp_pile, obs.month)
        best: list[int] = []
        best_value = float("-inf")
        for a in legal:
            value = self.action_value(a, obs, pile, opp_pile, now, opp_now, total)
            if value > best_value + 1e-9:
                best, best_value = [a], value
            elif abs(value - best_value) <= 1e-9:
                best.append(a)
        return self.rng.choice(best)

    def action_value(
        self,
        action: int,
        obs: Observation,
        pile: int,
        opp_pile: int,
        now: int,
        opp_now: int,
        total: Callable[[int, int | None], int],
    ) -> float:
        """What ``action`` is worth to this player, in card values (a yaku point is :data:`YAKU_WEIGHT`)."""
        table = obs.table_mask
        if action >= DRAW_TAKE_BASE:  # the drawn card takes one of two table cards
            card, took = obs.drawn_card, 1 << (action - DRAW_TAKE_BASE)
        elif action >= PLAY_TAKE_BASE:
            card, r = divmod(action - PLAY_TAKE_BASE, 4)
            took = 1 << ((card & ~3) | r)
        else:
            card = action
            matches = table & MONTH_MASKS[card >> 2]
            took = matches  # one match or three: all of them; none: the card stays
        assert card is not None
        if not took:
            return -self._discard_cost(card, obs)
        gained = took | (1 << card)
        value = _mask_value(gained)
        value += YAKU_WEIGHT * (total(pile | gained, obs.month) - now)
        # Cards the opponent would have liked: what their yaku would gain from them.
        value += DENIAL_WEIGHT * (total(opp_pile | gained, obs.month) - opp_now)
        return value

    def _discard_cost(self, card: int, obs: Observation) -> float:
        """What leaving ``card`` on the table risks: its worth to whoever captures it next."""
        month = MONTH_MASKS[card >> 2]
        unseen = (obs.unseen_mask & month).bit_count()
        mine = (obs.hand_mask & month & ~(1 << card)).bit_count()
        if not unseen and not mine:
            return card_value(card) * 0.1  # nobody can ever take it
        cost = card_value(card)
        if mine:
            cost *= 0.5  # we hold its partner and may take it back ourselves
        return cost

    def _decide(self, obs: Observation) -> int:
        if KOIKOI not in obs.legal_actions:
            return STOP
        me, opp = obs.player, 1 - obs.player
        gain = obs.yaku_scores[me] * obs.multipliers[me]
        behind = obs.scores[opp] - obs.scores[me]
        cards_left = len(obs.hand)
        # Far behind with turns to spare and no threat from the other side: press on.
        far_behind = behind >= 20 and gain < behind
        if far_behind and cards_left >= 3 and obs.yaku_scores[opp] == 0:
            return KOIKOI
        return STOP
