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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import match as _match_module
from .actions import action_name
from .cards import BYTE_CARDS, CARD_NAMES, FULL_DECK, iter_cards
from .hand import Hand, HandResult
from .match import Match
from .rules import RuleSet
from .yaku import evaluator

__all__ = ["Observation", "Positions", "observe", "positions", "hand_positions", "yaku_scores"]


@dataclass(frozen=True, slots=True)
class Observation:
    """What one player sees. Card collections are sorted tuples of card ids; ``*_mask`` the same as masks.

    ``events`` are the public happenings of this hand (player, kind, card, captured mask);
    ``previous_hand_events`` those of the hand before, so a view can show how it ended.
    ``rule_set`` is the whole rule set in force (public: both players agreed on it).
    Where the cards lie (the hand in dealt order, the table's slots, the piles in capture order) is not
    here but in :func:`positions`, computed only when asked for.
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


_PHASE_NAMES = ("play", "draw_choice", "decision", "over")  # by Phase value
_B0, _B1, _B2, _B3, _B4, _B5 = BYTE_CARDS


def _card_tuple(mask: int) -> tuple[int, ...]:
    """The card ids in ``mask``, lowest first: six table lookups instead of a loop over the bits."""
    return (
        *_B0[mask & 255],
        *_B1[mask >> 8 & 255],
        *_B2[mask >> 16 & 255],
        *_B3[mask >> 24 & 255],
        *_B4[mask >> 32 & 255],
        *_B5[mask >> 40],
    )


# The yaku of a pile as an observation shows them, with their total, memoised per rule set like the
# engine's scorer: a view is taken after every action and the piles change far less often.
_YAKU_MEMO_LIMIT = 1 << 16
_YAKU_MEMOS: dict[int, tuple[RuleSet, int, dict[int, tuple[tuple[tuple[str, int], ...], int]]]] = {}


def _yaku_memo(rules: RuleSet, version: int) -> dict[int, tuple[tuple[tuple[str, int], ...], int]]:
    # Keyed by identity (hashing a rule set walks all its options), checked against the object held.
    entry = _YAKU_MEMOS.get(id(rules))
    if entry is not None and entry[0] is rules and entry[1] == version:
        return entry[2]
    if len(_YAKU_MEMOS) > 256:
        _YAKU_MEMOS.clear()
    memo: dict[int, tuple[tuple[tuple[str, int], ...], int]] = {}
    _YAKU_MEMOS[id(rules)] = (rules, version, memo)
    return memo


def _yaku_view(h: Hand, pile: int, memo: dict[int, tuple[tuple[tuple[str, int], ...], int]]) -> tuple[Any, int]:
    key = pile | h.month << 48
    got = memo.get(key)
    if got is None:
        yaku = tuple((y.name, y.points) for y in evaluator(h.rules, h.version)(pile, h.month))
        got = (yaku, sum(p for _, p in yaku))
        if len(memo) >= _YAKU_MEMO_LIMIT:
            memo.clear()
        memo[key] = got
    return got


def yaku_scores(h: Hand, player: int) -> tuple[int, int]:
    """The yaku points of ``player``'s pile and of the other's in hand ``h``, as observations show them."""
    memo = _yaku_memo(h.rules, h.version)
    return _yaku_view(h, h.piles[player], memo)[1], _yaku_view(h, h.piles[1 - player], memo)[1]


class _Draft:
    """An Observation being filled in: the same slots, but writable.

    Observation is frozen, so its own ``__init__`` sets each of its 32 fields through
    ``object.__setattr__``, which costs more than building all their values. A draft takes plain
    attribute stores and then becomes an Observation by a ``__class__`` change, which Python allows
    between classes of the same slots; the object is then an ordinary frozen Observation.
    """

    __slots__ = Observation.__slots__


def _finished(draft: Any) -> Observation:
    try:
        draft.__class__ = Observation
        return draft  # type: ignore[no-any-return]
    except TypeError:  # a Python that refuses the change: the plain constructor
        return Observation(*[getattr(draft, name) for name in _Draft.__slots__])


def observe(match: Match, player: int) -> Observation:
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, not {player!r}")
    h = match.hand
    hands = h.hand_masks
    hand = hands[player]
    table = h.table
    pile0, pile1 = h.piles
    pending = h.pending
    drawn = pending if pending >= 0 else None
    memo = _yaku_memo(h.rules, h.version)
    yaku0, score0 = _yaku_view(h, pile0, memo)
    yaku1, score1 = _yaku_view(h, pile1, memo)
    outcome = match.outcome
    previous = match.previous_hand
    calls = h.koikoi_calls
    decided = h.decision_score
    o: Any = _Draft()
    o.player = player
    o.rules = match.rules.name
    o.hand_number = len(match.hands)
    o.month = h.month
    o.dealer = h.dealer
    o.current_player = h.current_player
    o.phase = _PHASE_NAMES[h.phase_code]
    o.hand = _card_tuple(hand)
    o.table = _card_tuple(table)
    o.piles = (_card_tuple(pile0), _card_tuple(pile1))
    o.opponent_hand_count = hands[1 - player].bit_count()
    o.stock_count = len(h.stock) - h.stock_pos
    o.drawn_card = drawn
    o.scores = (match.scores[0], match.scores[1])
    o.yaku = (yaku0, yaku1)
    o.yaku_scores = (score0, score1)
    o.decision_scores = (decided[0], decided[1])
    o.koikoi_calls = (calls[0], calls[1])
    o.multipliers = (h.multiplier_for(0, score0), h.multiplier_for(1, score1))
    o.table_brights = h.table_brights
    o.legal_actions = tuple(h.legal_actions()) if h.current_player == player and outcome is None else ()
    o.can_declare = h.can_declare(player)
    o.events = h.public_events()
    o.previous_hand_events = () if previous is None else previous.public_events()
    o.results = match.finished_results
    o.match_over = outcome is not None
    o.match_winner = None if outcome is None else outcome.winner
    o.hand_mask = hand
    o.table_mask = table
    o.pile_masks = (pile0, pile1)
    o.unseen_mask = FULL_DECK & ~(hand | table | pile0 | pile1 | (0 if drawn is None else 1 << pending))
    o.rule_set = match.rules
    return _finished(o)


# -- positions ----------------------------------------------------------------------------------------
#
# Where the cards lie, for programs whose choices depend on it (docs/bot-protocol.md, "Positions").
# An Observation holds card sets; the positions are derived from the hand's deal and its public
# events only when asked for, so that Match.observation(), taken after every action by learning loops,
# pays nothing for them.

# The deck indexes (top card first) dealt to the non-dealer, to the dealer and to the table, in the
# order they are dealt, by deal pattern: as Hand._deal_cards deals them (docs/records.md, "Chance").
_DEAL_INDEXES: dict[str, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = {
    "4-4": ((0, 1, 2, 3, 12, 13, 14, 15), (4, 5, 6, 7, 16, 17, 18, 19), (8, 9, 10, 11, 20, 21, 22, 23)),
    "2-2": ((0, 1, 6, 7, 12, 13, 18, 19), (2, 3, 8, 9, 14, 15, 20, 21), (4, 5, 10, 11, 16, 17, 22, 23)),
}


@dataclass(frozen=True, slots=True)
class Positions:
    """Where the cards lie as one player sees them in the current hand (card ids).

    ``hand``: the player's own hand in the order it was dealt, the cards played since taken out.
    ``table``: the table's slots; ``None`` is a gap. The dealt table fills slots 0-7 in the order dealt;
    a card taken from the table leaves its slot empty; a card that joins the table (played or drawn
    without capturing) takes the first gap, or a new slot at the end when there is none. Slots never
    move, so the list only grows.
    ``piles``: both players' captured cards in the order captured; each capture adds the card played or
    drawn, then the cards it took in the order of their table slots.

    The opponent's hand order is not here: it is hidden (only its count is public).
    """

    player: int
    hand: tuple[int, ...]
    table: tuple[int | None, ...]
    piles: tuple[tuple[int, ...], tuple[int, ...]]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form with card names (``null`` for a table gap)."""
        return {
            "hand": [CARD_NAMES[c] for c in self.hand],
            "table": [None if c is None else CARD_NAMES[c] for c in self.table],
            "piles": [[CARD_NAMES[c] for c in pile] for pile in self.piles],
        }


def positions(match: Match, player: int) -> Positions:
    """``player``'s :class:`Positions` in the match's current hand (the last hand once it is over).

    Derived from the hand's deal (the last of its recorded decks: redeals come first) and its public
    events when called; ``Match.observation`` does not compute them.

    >>> from koikoi.rules import preset
    >>> m = Match(preset("nintendo"), seed=1)
    >>> p = positions(m, 0)
    >>> len(p.hand), len(p.table), p.piles
    (8, 8, ((), ()))
    >>> sorted(p.hand) == list(m.observation(0).hand)
    True
    """
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, not {player!r}")
    decks = match.hands[-1].decks
    if not decks:
        raise ValueError("the match's current hand has no recorded deal to take the positions from")
    return hand_positions(match.hand, decks[-1], player)


def hand_positions(hand: Hand, deck: Sequence[int], player: int) -> Positions:
    """``player``'s :class:`Positions` in ``hand``, dealt from ``deck`` (48 card ids, top card first).

    Raises ValueError when ``hand`` was not dealt from ``deck`` (a hand rebuilt from an observation,
    say): the positions would be wrong, so none are given.
    """
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, not {player!r}")
    indexes = _DEAL_INDEXES.get(hand.rules.deal_pattern)
    if indexes is None:
        raise ValueError(f"no positions for the deal pattern {hand.rules.deal_pattern!r}")
    if len(deck) != len(CARD_NAMES):
        raise ValueError(f"a deck holds {len(CARD_NAMES)} cards, not {len(deck)}")
    non_dealer, dealer, dealt_table = indexes
    own = [deck[i] for i in (dealer if player == hand.dealer else non_dealer)]
    table: list[int | None] = [deck[i] for i in dealt_table]
    slot_of = {c: i for i, c in enumerate(table) if c is not None}
    piles: tuple[list[int], list[int]] = ([], [])
    played: set[int] = set()
    for p, kind, c, captured in hand.public_events():
        if kind != "play" and kind != "draw":
            continue  # koi-koi, stop and declare move no card
        if p == player and kind == "play":
            played.add(c)
        if not captured:  # the card joins the table: the first gap, else a new slot
            try:
                slot = table.index(None)
                table[slot] = c
            except ValueError:
                slot = len(table)
                table.append(c)
            slot_of[c] = slot
            continue
        taken: list[tuple[int, int]] = []
        for t in iter_cards(captured & ~(1 << c)):
            gone = slot_of.pop(t, None)
            if gone is None:
                raise ValueError(
                    f"this hand was not dealt from this deck: {CARD_NAMES[t]} was taken but never on the table"
                )
            table[gone] = None
            taken.append((gone, t))
        piles[p].append(c)
        piles[p].extend(t for _, t in sorted(taken))
    in_hand = tuple(c for c in own if c not in played)
    out = Positions(player, in_hand, tuple(table), (tuple(piles[0]), tuple(piles[1])))
    # What the deal and the events give must be the hand as it stands, or the deck is another hand's.
    if (
        sum(1 << c for c in in_hand) != hand.hand_masks[player]
        or sum(1 << c for c in table if c is not None) != hand.table
        or sum(1 << c for c in piles[0]) != hand.piles[0]
        or sum(1 << c for c in piles[1]) != hand.piles[1]
    ):
        raise ValueError(
            "this hand was not dealt from this deck: its cards are not where the deal and its events put them"
        )
    return out


# Match.observation(player) builds its view through this module, which sits above it.
_match_module.set_observer(observe)
