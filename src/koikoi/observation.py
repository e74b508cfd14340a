"""One player's view of a match: everything public plus their own hand, never anything hidden.

The opponent's hand, the stock order and the seed are not in it, in any form: the only things
told about them are the number of cards (docs/rules.md section 2: hidden information stays hidden).

>>> from koikoi.match import Match
>>> from koikoi.rules import preset
>>> obs = Match(preset("nintendo"), seed=1).observation(0)
>>> len(obs.hand) + obs.opponent_hand_count, obs.stock_count
(16, 24)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import match as _match_module
from .actions import action_name
from .cards import CARD_NAMES, FULL_DECK, iter_cards
from .hand import HandResult
from .match import Match
from .rules import RuleSet

__all__ = ["Observation", "observe"]


def _cards(mask: int) -> tuple[int, ...]:
    return tuple(iter_cards(mask))


@dataclass(frozen=True, slots=True)
class Observation:
    """What one player sees. Card collections are sorted tuples of card ids; ``*_mask`` the same as masks.

    ``events`` are the public happenings of this hand (player, kind, card, captured mask);
    ``previous_hand_events`` those of the hand before, so a view can show how it ended.
    ``rule_set`` is the whole rule set in force (public: both players agreed on it).
    """

    player: int
    rules: str
    hand_number: int
    month: int
    dealer: int
    current_player: int
    phase: str
    hand: tuple[int, ...]
    table: tuple[int, ...]
    piles: tuple[tuple[int, ...], tuple[int, ...]]
    opponent_hand_count: int
    stock_count: int
    drawn_card: int | None
    scores: tuple[int, int]
    yaku: tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]
    yaku_scores: tuple[int, int]
    decision_scores: tuple[int, int]
    koikoi_calls: tuple[int, int]
    multipliers: tuple[int, int]
    table_brights: int
    legal_actions: tuple[int, ...]
    can_declare: bool
    events: tuple[tuple[int, str, int, int], ...]
    previous_hand_events: tuple[tuple[int, str, int, int], ...]
    results: tuple[HandResult, ...]
    match_over: bool
    match_winner: int | None
    hand_mask: int
    table_mask: int
    pile_masks: tuple[int, int]
    unseen_mask: int
    rule_set: RuleSet

    @property
    def to_move(self) -> bool:
        return self.current_player == self.player and not self.match_over

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form with card names, for clients and logs."""

        def names(cs: tuple[int, ...]) -> list[str]:
            return [CARD_NAMES[c] for c in cs]

        return {
            "player": self.player,
            "rules": self.rules,
            "hand_number": self.hand_number,
            "month": self.month,
            "dealer": self.dealer,
            "current_player": self.current_player,
            "phase": self.phase,
            "hand": names(self.hand),
            "table": names(self.table),
            "piles": [names(p) for p in self.piles],
            "opponent_hand_count": self.opponent_hand_count,
            "stock_count": self.stock_count,
            "drawn_card": None if self.drawn_card is None else CARD_NAMES[self.drawn_card],
            "scores": list(self.scores),
            "yaku": [[{"name": n, "points": p} for n, p in ys] for ys in self.yaku],
            "yaku_scores": list(self.yaku_scores),
            "decision_scores": list(self.decision_scores),
            "koikoi_calls": list(self.koikoi_calls),
            "multipliers": list(self.multipliers),
            "table_brights": self.table_brights,
            "legal_actions": [{"id": a, "name": action_name(a)} for a in self.legal_actions],
            "can_declare": self.can_declare,
            "events": _events_dict(self.events),
            "previous_hand_events": _events_dict(self.previous_hand_events),
            "results": [r.to_dict() for r in self.results],
            "match_over": self.match_over,
            "match_winner": self.match_winner,
            "rule_set": self.rule_set.to_dict(),
        }


def _events_dict(events: tuple[tuple[int, str, int, int], ...]) -> list[dict[str, Any]]:
    return [
        {
            "player": p,
            "kind": k,
            "card": None if c < 0 else CARD_NAMES[c],
            "captured": [CARD_NAMES[x] for x in iter_cards(m)],
        }
        for p, k, c, m in events
    ]


def observe(match: Match, player: int) -> Observation:
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, not {player!r}")
    h = match.hand
    other = 1 - player
    hand = h.hands[player]
    drawn = h.pending if h.pending >= 0 else None
    seen = hand | h.table | h.piles[0] | h.piles[1] | (0 if drawn is None else 1 << drawn)
    yaku = (tuple((y.name, y.points) for y in h.yaku_of(0)), tuple((y.name, y.points) for y in h.yaku_of(1)))
    scores = (sum(p for _, p in yaku[0]), sum(p for _, p in yaku[1]))
    over = match.is_over()
    mine = h.current_player == player and not over
    return Observation(
        player=player,
        rules=match.rules.name,
        hand_number=match.hand_number,
        month=h.month,
        dealer=h.dealer,
        current_player=h.current_player,
        phase=h.phase.name.lower(),
        hand=_cards(hand),
        table=_cards(h.table),
        piles=(_cards(h.piles[0]), _cards(h.piles[1])),
        opponent_hand_count=h.hands[other].bit_count(),
        stock_count=h.stock_count,
        drawn_card=drawn,
        scores=(match.scores[0], match.scores[1]),
        yaku=yaku,
        yaku_scores=scores,
        decision_scores=(h.decision_score[0], h.decision_score[1]),
        koikoi_calls=(h.koikoi_calls[0], h.koikoi_calls[1]),
        multipliers=(h.multiplier_for(0, scores[0]), h.multiplier_for(1, scores[1])),
        table_brights=h.table_brights,
        legal_actions=tuple(h.legal_actions()) if mine else (),
        can_declare=h.can_declare(player),
        events=tuple((e.player, e.kind, e.card, e.captured) for e in h.events),
        previous_hand_events=()
        if match.previous_hand is None
        else tuple((e.player, e.kind, e.card, e.captured) for e in match.previous_hand.events),
        results=tuple(match.results),
        match_over=over,
        match_winner=match.winner(),
        hand_mask=hand,
        table_mask=h.table,
        pile_masks=(h.piles[0], h.piles[1]),
        unseen_mask=FULL_DECK & ~seen,
        rule_set=match.rules,
    )


# Match.observation(player) builds its view through this module, which sits above it.
_match_module._observer = observe
