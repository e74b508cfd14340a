"""Agents that look one move ahead: ``random``, ``easy`` (greedy) and ``medium`` (yaku-aware heuristic)."""

from __future__ import annotations

from ..actions import DECLARE, DRAW_TAKE_BASE, KOIKOI, PLAY_TAKE_BASE, STOP
from ..cards import (
    ANIMALS,
    BLUE_RIBBONS,
    BRIGHTS,
    CHAFF,
    CURTAIN,
    INO_SHIKA_CHO,
    MONTH_MASKS,
    MOON,
    POETRY_RIBBONS,
    RAIN_MAN,
    RIBBONS,
    SAKE_CUP,
    iter_cards,
)
from ..observation import Observation
from ..players import _YAKU_WEIGHT, GreedyPlayer, card_value
from ..rules import RuleSet
from ..yaku import scorer
from .base import Agent, Choice, _check_to_move, sort_choices
from .search import HardAgent

__all__ = ["RandomAgent", "EasyAgent", "MediumAgent", "action_cards", "yaku_potential"]


def action_cards(action: int, obs: Observation) -> tuple[int, int]:
    """The card an action moves and the mask of table cards it captures (0: the card stays on the table).

    >>> from koikoi.match import Match
    >>> from koikoi.rules import preset
    >>> obs = Match(preset("nintendo"), seed=1).observation(0)
    >>> card, taken = action_cards(obs.legal_actions[0], obs)
    >>> card in obs.hand
    True
    """
    if action >= DRAW_TAKE_BASE:
        return obs.drawn_card if obs.drawn_card is not None else -1, 1 << (action - DRAW_TAKE_BASE)
    if action >= PLAY_TAKE_BASE:
        c, r = divmod(action - PLAY_TAKE_BASE, 4)
        return c, 1 << ((c & ~3) | r)
    return action, obs.table_mask & MONTH_MASKS[action >> 2]


class RandomAgent(Agent):
    """A uniformly random legal action; every choice is valued 0."""

    name = "random"

    def rank(self, obs: Observation) -> list[Choice]:
        _check_to_move(obs)
        return sort_choices([Choice(a, 0.0, "random") for a in obs.legal_actions], self.rng)

    def choose(self, obs: Observation) -> int:
        _check_to_move(obs)
        return self.rng.choice(obs.legal_actions)


class EasyAgent(Agent):
    """The greedy player: the most valuable capture and the biggest immediate yaku gain; stops at once."""

    name = "easy"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self._greedy = GreedyPlayer(seed)

    def rank(self, obs: Observation) -> list[Choice]:
        _check_to_move(obs)
        me = obs.player
        sure = obs.yaku_scores[me] * obs.multipliers[me]
        if obs.phase == "decision":
            out = [Choice(STOP, float(sure), "stop: the points now")]
            if KOIKOI in obs.legal_actions:
                out.append(Choice(KOIKOI, sure - 1.0, "koi-koi: the easy player never risks it"))
            return out
        rules = obs.rule_set
        total = scorer(rules)
        pile, opp_pile = obs.pile_masks[me], obs.pile_masks[1 - me]
        now, opp_now = total(pile, obs.month), total(opp_pile, obs.month)
        out = []
        for a in obs.legal_actions:
            if a == DECLARE:
                out.append(Choice(a, float(rules.hand_bonus), "declare the dealt hand"))
                continue
            v = self._greedy.value(a, obs, pile, opp_pile, now, opp_now, total)
            out.append(Choice(a, v / _YAKU_WEIGHT, "card values and yaku gained"))
        return sort_choices(out, self.rng)


# -- the medium heuristic ---------------------------------------------------------------------------

_NON_RAIN_BRIGHTS = BRIGHTS & ~RAIN_MAN
_VALUES = tuple(card_value(c) for c in range(48))


def _yaku_targets(rules: RuleSet) -> list[tuple[int, int, float]]:
    """(mask of cards, how many are needed, points) for each yaku worth chasing under ``rules``."""
    out: list[tuple[int, int, float]] = []
    if rules.sanko:
        out.append((_NON_RAIN_BRIGHTS, 3, rules.sanko))
    if rules.ino_shika_cho:
        out.append((INO_SHIKA_CHO, 3, rules.ino_shika_cho))
    if rules.akatan:
        out.append((POETRY_RIBBONS, 3, rules.akatan))
    if rules.aotan:
        out.append((BLUE_RIBBONS, 3, rules.aotan))
    if rules.tane:
        out.append((ANIMALS, 5, rules.tane))
    if rules.tanzaku:
        out.append((RIBBONS, 5, rules.tanzaku))
    if rules.kasu:
        out.append((CHAFF | (SAKE_CUP if rules.sake_cup != "animal_only" else 0), 10, rules.kasu))
    if rules.sake_yaku != "off":
        if rules.tsukimi_zake:
            out.append((MOON | SAKE_CUP, 2, rules.tsukimi_zake))
        if rules.hanami_zake:
            out.append((CURTAIN | SAKE_CUP, 2, rules.hanami_zake))
    return out


_TARGETS: dict[int, tuple[RuleSet, list[tuple[int, int, float]]]] = {}


def _targets_of(rules: RuleSet) -> list[tuple[int, int, float]]:
    got = _TARGETS.get(id(rules))
    if got is None or got[0] is not rules:
        got = (rules, _yaku_targets(rules))
        _TARGETS[id(rules)] = got
    return got[1]


# How much a yaku still missing k cards is worth, as a share of its points.
_CLOSENESS = (1.0, 0.35, 0.12, 0.04, 0.01, 0.0)


def yaku_potential(pile: int, available: int, rules: RuleSet) -> float:
    """A rough worth of the yaku ``pile`` may still complete from the ``available`` cards, in points.

    Completed yaku are not counted (the scorer does that); each unfinished one counts its points
    times a share that shrinks fast with the cards still missing, and nothing if too few remain.

    >>> from koikoi.rules import preset
    >>> from koikoi.cards import cards_mask, FULL_DECK
    >>> two = cards_mask(["clover-boar", "maple-deer"])
    >>> yaku_potential(two, FULL_DECK & ~two, preset("nintendo")) > yaku_potential(0, FULL_DECK, preset("nintendo"))
    True
    """
    value = 0.0
    for mask, need, points in _targets_of(rules):
        have = (pile & mask).bit_count()
        missing = need - have
        if missing <= 0 or (available & mask).bit_count() < missing:
            continue
        value += points * _CLOSENESS[min(missing, 5)]
    return value


class MediumAgent(Agent):
    """Values captures by the yaku progress they make for itself and deny the opponent, weighs the risk of
    leaving a card on the table by what is still unseen, and decides koi-koi by a few sampled playouts.

    ``koikoi_playouts`` is the number of playouts behind a koi-koi decision (the hard player's search
    on a tiny budget: the decision is rare and matters most); 0 decides by a hope-against-threat rule
    of thumb instead. Two playouts by default: with four, ``medium`` came within 56% of ``hard``; with
    two it still wins 60% against ``easy`` while ``hard`` wins 66% against it (docs/ai.md).
    """

    name = "medium"
    deny_weight = 0.8  # a point kept from the opponent is worth this much of a point won
    discard_weight = 0.6  # share of a discarded card's worth to the opponent counted as lost
    card_weight = 0.0  # points per unit of plain card value (players.card_value) captured

    def __init__(self, seed: int | None = None, koikoi_playouts: int = 2) -> None:
        super().__init__(seed)
        if koikoi_playouts < 0:
            raise ValueError(f"koikoi_playouts must be 0 or more, not {koikoi_playouts!r}")
        self.koikoi_playouts = koikoi_playouts
        self._search = None
        if koikoi_playouts:
            self._search = HardAgent(
                self.rng.randrange(1 << 32), playouts=koikoi_playouts, time_limit=None, batched=False
            )

    def rank(self, obs: Observation) -> list[Choice]:
        _check_to_move(obs)
        if obs.phase == "decision":
            return self._rank_decision(obs)
        rules = obs.rule_set
        total = scorer(rules)
        me, opp = obs.player, 1 - obs.player
        pile, opp_pile = obs.pile_masks[me], obs.pile_masks[opp]
        month = obs.month
        drawn = 0 if obs.drawn_card is None else 1 << obs.drawn_card
        # What each player may still capture: everything not already in the other's pile.
        open_cards = obs.unseen_mask | obs.hand_mask | obs.table_mask | drawn
        mine_now = total(pile, month) + yaku_potential(pile, open_cards, rules)
        opp_now = total(opp_pile, month) + yaku_potential(opp_pile, open_cards, rules)
        # The chance that the opponent holds a given unseen card.
        unseen_n = obs.unseen_mask.bit_count()
        p_held = obs.opponent_hand_count / unseen_n if unseen_n else 0.0
        out = []
        for a in obs.legal_actions:
            if a == DECLARE:
                out.append(Choice(a, float(rules.hand_bonus), "declare the dealt hand"))
                continue
            card, taken = action_cards(a, obs)
            cbit = 1 << card
            if taken:
                gained = taken | cbit
                rest = open_cards & ~gained
                mine = total(pile | gained, month) + yaku_potential(pile | gained, rest, rules)
                theirs = total(opp_pile, month) + yaku_potential(opp_pile, rest, rules)
                gain = mine - mine_now + self.card_weight * sum(_VALUES[c] for c in iter_cards(gained))
                deny = opp_now - theirs
                value = gain + self.deny_weight * deny
                explain = f"captures {gain:+.1f} for me, denies {deny:.1f}"
            else:
                # Left on the table: the opponent takes it if they hold a card of its month.
                month_mask = MONTH_MASKS[card >> 2]
                unseen_same = (obs.unseen_mask & month_mask).bit_count()
                mine_same = (obs.hand_mask & month_mask & ~cbit).bit_count()
                p_take = 1.0 - (1.0 - p_held) ** unseen_same
                if mine_same:
                    p_take *= 0.5  # we may take it back first
                with_card = opp_pile | cbit
                their_gain = (total(with_card, month) + yaku_potential(with_card, open_cards, rules)) - opp_now
                my_loss = mine_now - (total(pile, month) + yaku_potential(pile, open_cards & ~cbit, rules))
                value = -self.discard_weight * p_take * (their_gain + 0.3) - 0.3 * my_loss
                # Holding on to a partner of a table card keeps a capture for later: prefer to shed loners.
                if obs.table_mask & month_mask:
                    value -= 0.2
                explain = f"discard: opponent takes it with chance {p_take:.0%}"
            out.append(Choice(a, value, explain))
        return sort_choices(out, self.rng)

    def _rank_decision(self, obs: Observation) -> list[Choice]:
        me, opp = obs.player, 1 - obs.player
        sure = float(obs.yaku_scores[me] * obs.multipliers[me])
        stop = Choice(STOP, sure, "stop: the points now")
        if KOIKOI not in obs.legal_actions:
            return [stop]
        if self._search is not None:
            return self._search.rank(obs)
        rules = obs.rule_set
        open_cards = obs.unseen_mask | obs.hand_mask | obs.table_mask
        turns = len(obs.hand)
        opp_pile = obs.pile_masks[opp]
        # Threat: the opponent's nearest yaku (their pile already scoring is the worst case).
        threat = yaku_potential(opp_pile, open_cards, rules) + 3.0 * (obs.yaku_scores[opp] > 0)
        hope = yaku_potential(obs.pile_masks[me], open_cards, rules)
        # A koi-koi doubles the opponent's win where opponent_double applies.
        double = 2.0 if rules.koikoi_multiplier in ("opponent_double", "own_and_opponent_double") else 1.0
        # Behind in the match with hands running out: more reason to gamble.
        behind = obs.scores[opp] - obs.scores[me]
        gamble = 1.0 + (0.5 if behind > 10 else 0.0)
        expected = sure * (1.0 - 0.06 * threat * double) + gamble * hope * min(turns, 5) / 5.0
        if turns < 3 or sure >= 7:
            expected = min(expected, sure - 0.5)
        return sort_choices([stop, Choice(KOIKOI, expected, f"hope {hope:.1f}, threat {threat:.1f}")], self.rng)
