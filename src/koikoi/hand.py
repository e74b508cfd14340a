"""One hand (round) of Koi-Koi as a state machine (RULES.md sections 2, 4 and 6).

A hand starts from a deck order (the chance outcome: the shuffle) and a dealer. Then the player
to move picks one of ``legal_actions()`` and ``apply_action`` resolves it, including the draw step
that follows a hand step. ``clone()`` copies the state for search.

>>> import random
>>> from koikoi.rules import preset
>>> h = Hand(preset("traditional"), random.Random(5).sample(range(48), 48), dealer=0)
>>> h.current_player, h.phase.name, h.stock_count
(0, 'PLAY', 24)
>>> h.apply_action(h.legal_actions()[0]); h.stock_count
23
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

from .actions import DECLARE, DRAW_TAKE_BASE, KOIKOI, PLAY_TAKE_BASE, STOP, action_name
from .cards import BRIGHTS, CARD_NAMES, FULL_DECK, MONTH_MASKS, NUM_CARDS, mask_to_names
from .rules import RuleSet
from .yaku import Yaku, evaluate, scorer

__all__ = ["Hand", "Phase", "HandResult", "IllegalActionError", "hand_bonus_of", "Event"]

_MONTH = MONTH_MASKS
_MONTH_OF_CARD = tuple(_MONTH[c >> 2] for c in range(NUM_CARDS))


class Phase(IntEnum):
    PLAY = 0          # the hand step: play a card from the hand
    DRAW_CHOICE = 1   # the drawn card matches two table cards: choose one
    DECISION = 2      # the yaku score rose: koi-koi or stop
    OVER = 3


class IllegalActionError(ValueError):
    """An action that is not legal now; the message lists the legal ones. The state is unchanged."""


@dataclass(frozen=True, slots=True)
class HandResult:
    """How a hand ended.

    ``reason`` is ``stop``, ``exhausted``, ``hand_bonus`` or ``redeal`` (never stored: redeals are
    internal). ``winner`` is None for a hand nobody won. ``deltas`` are the score changes of
    players 0 and 1; ``base`` is the yaku total before ``multiplier``.
    """

    reason: str
    winner: int | None
    points: int
    deltas: tuple[int, int]
    yaku: tuple[Yaku, ...] = ()
    base: int = 0
    multiplier: int = 1
    keep_dealer: bool = False

    def to_dict(self) -> dict:
        return {
            "reason": self.reason, "winner": self.winner, "points": self.points, "deltas": list(self.deltas),
            "yaku": [{"name": y.name, "points": y.points} for y in self.yaku],
            "base": self.base, "multiplier": self.multiplier,
        }


@dataclass(frozen=True, slots=True)
class Event:
    """A public happening: ``kind`` is play, draw, koikoi, stop or declare; ``captured`` a mask."""

    player: int
    kind: str
    card: int = -1
    captured: int = 0

    def describe(self) -> str:
        if self.kind in ("play", "draw"):
            verb = "played" if self.kind == "play" else "drew"
            took = mask_to_names(self.captured & ~(1 << self.card))
            return f"{verb} {CARD_NAMES[self.card]}" + (f", took {', '.join(took)}" if took else "")
        return {"koikoi": "called koi-koi", "stop": "stopped", "declare": "declared the dealt hand"}[self.kind]


def hand_bonus_of(hand: int, rules: RuleSet) -> Yaku | None:
    """The teshi/kuttsuki bonus a dealt hand earns under ``rules``, if any."""
    if not rules.hand_bonus:
        return None
    counts = [(hand & m).bit_count() for m in _MONTH]
    fours = counts.count(4)
    if fours >= 2 and rules.hand_bonus_two_months:
        return Yaku("double-teshi", rules.hand_bonus_two_months)
    if fours:
        return Yaku("teshi", rules.hand_bonus)
    if counts.count(2) == 4:
        return Yaku("kuttsuki", rules.hand_bonus)
    return None


def _table_needs_redeal(table: int, rules: RuleSet) -> bool:
    counts = [(table & m).bit_count() for m in _MONTH]
    if rules.redeal_on_table_four and 4 in counts:
        return True
    return rules.redeal_on_table_pairs and counts.count(2) == 4


class Hand:
    """The state of one hand. Players are 0 and 1; the dealer moves first."""

    __slots__ = (
        "rules", "month", "dealer", "hands", "table", "piles", "stock", "stock_pos", "current_player",
        "phase", "pending", "decision_score", "koikoi_calls", "last_koikoi", "declarable", "table_brights",
        "result", "events", "_score", "turn_score",
    )

    def __init__(self, rules: RuleSet, deck: Sequence[int], dealer: int = 0, month: int = 1) -> None:
        if sorted(deck) != list(range(NUM_CARDS)):
            raise ValueError("a deck order must hold each of the 48 card ids exactly once")
        if dealer not in (0, 1):
            raise ValueError(f"dealer must be 0 or 1, not {dealer!r}")
        if not 1 <= month <= 12:
            raise ValueError(f"month must be 1..12, not {month!r}")
        self.rules = rules
        self.month = month
        self.dealer = dealer
        other = 1 - dealer
        hands = [0, 0]
        table = 0
        step = 4 if rules.deal_pattern == "4-4" else 2
        pos = 0
        for _ in range(8 // step):
            for target in (other, dealer, None):
                m = 0
                for c in deck[pos:pos + step]:
                    m |= 1 << c
                pos += step
                if target is None:
                    table |= m
                else:
                    hands[target] |= m
        self.hands = hands
        self.table = table
        self.piles = [0, 0]
        self.stock = tuple(deck[pos:])
        self.stock_pos = 0
        self.current_player = dealer
        self.phase = Phase.PLAY
        self.pending = -1
        self.decision_score = [0, 0]
        self.turn_score = [0, 0]
        self.koikoi_calls = [0, 0]
        self.last_koikoi = -1
        self.declarable = [False, False]
        self.table_brights = max(1, (table & BRIGHTS).bit_count())
        self.result: HandResult | None = None
        self.events: list[Event] = []
        self._score = scorer(rules)
        self._check_deal()

    # -- the deal -----------------------------------------------------------------------------

    def _check_deal(self) -> None:
        rules = self.rules
        if _table_needs_redeal(self.table, rules):
            self._end(HandResult("redeal", None, 0, (0, 0)))
            return
        bonus = [hand_bonus_of(h, rules) for h in self.hands]
        if bonus[0] and bonus[1] and rules.redeal_on_both_hand_bonus:
            self._end(HandResult("redeal", None, 0, (0, 0)))
            return
        if rules.hand_bonus_declared:
            self.declarable = [bonus[0] is not None, bonus[1] is not None]
            return
        for p in (self.dealer, 1 - self.dealer):
            if bonus[p]:
                self._award_hand_bonus(p, bonus[p])
                return

    def _award_hand_bonus(self, player: int, bonus: Yaku) -> None:
        deltas = [0, 0]
        deltas[player] = bonus.points
        if self.rules.transfer:
            deltas[1 - player] = -bonus.points
        self._end(HandResult("hand_bonus", player, bonus.points, (deltas[0], deltas[1]), (bonus,),
                             bonus.points, 1))

    @property
    def needs_redeal(self) -> bool:
        """The deal must be thrown in and dealt again (RULES.md section 2)."""
        return self.result is not None and self.result.reason == "redeal"

    # -- queries --------------------------------------------------------------------------------

    def is_over(self) -> bool:
        return self.phase == Phase.OVER

    @property
    def stock_count(self) -> int:
        return len(self.stock) - self.stock_pos

    @property
    def drawn_card(self) -> int:
        """The card drawn from the stock awaiting a capture choice, or -1."""
        return self.pending

    def score_of(self, player: int) -> int:
        """The yaku total of a player's capture pile now, before multipliers."""
        return self._score(self.piles[player], self.month)

    def yaku_of(self, player: int) -> list[Yaku]:
        return evaluate(self.piles[player], self.rules, self.month)

    def legal_actions(self) -> list[int]:
        """Every legal action of the player to move, sorted; empty when the hand is over."""
        phase = self.phase
        if phase == Phase.PLAY:
            table = self.table
            hand = self.hands[self.current_player]
            out = []
            while hand:
                low = hand & -hand
                c = low.bit_length() - 1
                hand ^= low
                matches = table & _MONTH_OF_CARD[c]
                if matches and matches.bit_count() == 2:
                    base = PLAY_TAKE_BASE + 4 * c
                    low2 = matches & -matches
                    out.append(base + ((low2.bit_length() - 1) & 3))
                    out.append(base + (((matches ^ low2).bit_length() - 1) & 3))
                else:
                    out.append(c)
            if self.declarable[self.current_player]:
                out.append(DECLARE)
            out.sort()
            return out
        if phase == Phase.DRAW_CHOICE:
            matches = self.table & _MONTH_OF_CARD[self.pending]
            low = matches & -matches
            return [DRAW_TAKE_BASE + low.bit_length() - 1, DRAW_TAKE_BASE + (matches ^ low).bit_length() - 1]
        if phase == Phase.DECISION:
            return [KOIKOI, STOP] if self._may_koikoi(self.current_player) else [STOP]
        return []

    def _may_koikoi(self, player: int) -> bool:
        # RULES 6.3: no koi-koi when no turn remains for the caller; 6.7: the optional call limit.
        if not self.hands[player]:
            return False
        limit = self.rules.koikoi_limit
        return not limit or self.koikoi_calls[player] < limit

    def is_legal(self, action: int) -> bool:
        phase = self.phase
        if phase == Phase.PLAY:
            if 0 <= action < PLAY_TAKE_BASE:
                if not (self.hands[self.current_player] >> action) & 1:
                    return False
                return (self.table & _MONTH_OF_CARD[action]).bit_count() != 2
            if PLAY_TAKE_BASE <= action < DRAW_TAKE_BASE:
                c, r = divmod(action - PLAY_TAKE_BASE, 4)
                if not (self.hands[self.current_player] >> c) & 1:
                    return False
                matches = self.table & _MONTH_OF_CARD[c]
                return matches.bit_count() == 2 and bool((matches >> ((c & ~3) | r)) & 1)
            return action == DECLARE and self.declarable[self.current_player]
        if phase == Phase.DRAW_CHOICE:
            t = action - DRAW_TAKE_BASE
            return 0 <= t < NUM_CARDS and t >> 2 == self.pending >> 2 and bool((self.table >> t) & 1)
        if phase == Phase.DECISION:
            return action == STOP or (action == KOIKOI and self._may_koikoi(self.current_player))
        return False

    # -- moves ------------------------------------------------------------------------------------

    def apply_action(self, action: int) -> None:
        """Play ``action`` for the player to move. An illegal action raises and changes nothing."""
        if not self.is_legal(action):
            raise self._illegal(action)
        phase = self.phase
        p = self.current_player
        if phase == Phase.PLAY:
            if action == DECLARE:
                self.events.append(Event(p, "declare"))
                self._award_hand_bonus(p, hand_bonus_of(self.hands[p], self.rules))
                return
            self.declarable[p] = False
            if action < PLAY_TAKE_BASE:
                c = action
                take = 0
            else:
                c, r = divmod(action - PLAY_TAKE_BASE, 4)
                take = 1 << ((c & ~3) | r)
            self.hands[p] ^= 1 << c
            captured = self._resolve(p, c, take)
            self.events.append(Event(p, "play", c, captured))
            # The draw step follows at once: the stock order was fixed by the deal.
            d = self.stock[self.stock_pos]
            self.stock_pos += 1
            if (self.table & _MONTH_OF_CARD[d]).bit_count() == 2:
                self.pending = d
                self.phase = Phase.DRAW_CHOICE
                return
            captured = self._resolve(p, d, 0)
            self.events.append(Event(p, "draw", d, captured))
            self._end_turn(p)
        elif phase == Phase.DRAW_CHOICE:
            d = self.pending
            self.pending = -1
            captured = self._resolve(p, d, 1 << (action - DRAW_TAKE_BASE))
            self.events.append(Event(p, "draw", d, captured))
            self.phase = Phase.PLAY
            self._end_turn(p)
        else:  # DECISION
            if action == STOP:
                self.events.append(Event(p, "stop"))
                self._settle_stop(p, "stop")
            else:
                self.events.append(Event(p, "koikoi"))
                self.koikoi_calls[p] += 1
                self.last_koikoi = p
                self.decision_score[p] = self.turn_score[p]
                self.phase = Phase.PLAY
                self._next_player(p)

    def _resolve(self, p: int, c: int, take: int) -> int:
        """Match card ``c`` against the table; returns the captured mask (0 if it stays)."""
        cbit = 1 << c
        matches = self.table & _MONTH_OF_CARD[c]
        if not matches:
            self.table |= cbit
            return 0
        got = take if take else matches  # one match, or three: capture all of them
        self.table ^= got
        got |= cbit
        self.piles[p] |= got
        return got

    def _end_turn(self, p: int) -> None:
        # RULES 2.5 / 6.1: the yaku score is checked only after both steps; a rise offers the choice.
        s = self._score(self.piles[p], self.month)
        self.turn_score[p] = s
        if s > self.decision_score[p]:
            self.phase = Phase.DECISION
            return
        self._next_player(p)

    def _next_player(self, p: int) -> None:
        if not self.hands[0] and not self.hands[1]:
            self._settle_exhausted()
            return
        self.current_player = 1 - p
        self.phase = Phase.PLAY

    # -- settling (section 4) --------------------------------------------------------------------

    def multiplier_for(self, player: int, base: int) -> int:
        """The product of all multipliers that apply if ``player`` scores ``base`` now."""
        r = self.rules
        mult = 2 if r.seven_point_double and base >= 7 else 1
        km = r.koikoi_multiplier
        if km == "additive":
            mult *= 1 + self.koikoi_calls[player]
        else:
            if km in ("opponent_double", "own_and_opponent_double") and self.koikoi_calls[1 - player]:
                mult *= 2
            if km in ("own_double", "own_and_opponent_double") and self.koikoi_calls[player]:
                mult *= 2
        if r.bright_table_multiplier:
            mult *= self.table_brights
        return mult

    def _settle_stop(self, p: int, reason: str) -> None:
        yaku = tuple(self.yaku_of(p))
        base = sum(y.points for y in yaku)
        mult = self.multiplier_for(p, base)
        points = base * mult
        deltas = [0, 0]
        deltas[p] = points
        if self.rules.transfer:
            deltas[1 - p] = -points
        self._end(HandResult(reason, p, points, (deltas[0], deltas[1]), yaku, base, mult))

    def _settle_exhausted(self) -> None:
        r = self.rules
        mode = r.exhausted
        n = r.exhausted_points
        if mode == "last_koikoi" and self.last_koikoi >= 0:
            self._settle_stop(self.last_koikoi, "exhausted")
            return
        if mode in ("dealer_bonus", "last_koikoi") and n:
            d = self.dealer
            deltas = [0, 0]
            deltas[d] = n
            if r.transfer:
                deltas[1 - d] = -n
            self._end(HandResult("exhausted", d, n, (deltas[0], deltas[1]), (Yaku("oya-ken", n),), n, 1,
                                 keep_dealer=True))
            return
        if mode in ("first_player", "second_player") and n:
            gainer = self.dealer if mode == "first_player" else 1 - self.dealer
            deltas = [-n, -n]
            deltas[gainer] = n
            self._end(HandResult("exhausted", None, 0, (deltas[0], deltas[1])))
            return
        self._end(HandResult("exhausted", None, 0, (0, 0)))

    def _end(self, result: HandResult) -> None:
        self.result = result
        self.phase = Phase.OVER
        self.pending = -1

    # -- errors, copies ------------------------------------------------------------------------

    def _illegal(self, action: object) -> IllegalActionError:
        try:
            shown = action_name(action) if isinstance(action, int) else repr(action)
        except ValueError:
            shown = repr(action)
        if self.phase == Phase.OVER:
            return IllegalActionError(f"illegal action {shown}: the hand is over")
        legal = ", ".join(action_name(a) for a in self.legal_actions())
        return IllegalActionError(
            f"illegal action {shown} for player {self.current_player} in phase {self.phase.name.lower()}; "
            f"legal: {legal}")

    def clone(self) -> Hand:
        """An independent copy (for search)."""
        h = Hand.__new__(Hand)
        h.rules = self.rules
        h.month = self.month
        h.dealer = self.dealer
        h.hands = self.hands[:]
        h.table = self.table
        h.piles = self.piles[:]
        h.stock = self.stock
        h.stock_pos = self.stock_pos
        h.current_player = self.current_player
        h.phase = self.phase
        h.pending = self.pending
        h.decision_score = self.decision_score[:]
        h.turn_score = self.turn_score[:]
        h.koikoi_calls = self.koikoi_calls[:]
        h.last_koikoi = self.last_koikoi
        h.declarable = self.declarable[:]
        h.table_brights = self.table_brights
        h.result = self.result
        h.events = self.events[:]
        h._score = self._score
        return h

    def cards_accounted_for(self) -> bool:
        """Each of the 48 cards is in exactly one place: a hand, the table, a pile, the stock or drawn."""
        places = [self.hands[0], self.hands[1], self.table, self.piles[0], self.piles[1]]
        for c in self.stock[self.stock_pos:]:
            places.append(1 << c)
        if self.pending >= 0:
            places.append(1 << self.pending)
        union = 0
        for m in places:
            if union & m:
                return False
            union |= m
        return union == FULL_DECK

    def __repr__(self) -> str:
        return (f"<Hand month={self.month} dealer={self.dealer} to_move={self.current_player} "
                f"phase={self.phase.name.lower()} stock={self.stock_count}>")
