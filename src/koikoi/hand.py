"""One hand (round) of Koi-Koi as a state machine (docs/rules.md sections 2, 4 and 7).

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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from operator import itemgetter as _itemgetter
from typing import Any, NamedTuple, Protocol

from .actions import DECLARE, DRAW_TAKE_BASE, KOIKOI, PLAY_TAKE_BASE, STOP, action_name, check_action, is_action
from .cards import BRIGHTS, CARD_NAMES, FULL_DECK, MONTH_MASKS, NUM_CARDS, card_list, mask_to_names
from .rules import RULES_VERSION, RULES_VERSIONS, RuleSet
from .yaku import GATE_BIAS, GATE_TABLES, GATE_TOPS, Raiser, Yaku, evaluator, raiser, scorer, total_tells


class SeenHand(Protocol):
    """What :meth:`Hand.from_observation` reads of a player's view (an
    :class:`koikoi.observation.Observation`, which sits above this module and is not imported here)."""

    @property
    def player(self) -> int: ...
    @property
    def rule_set(self) -> RuleSet: ...
    @property
    def month(self) -> int: ...
    @property
    def dealer(self) -> int: ...
    @property
    def phase(self) -> str: ...
    @property
    def match_over(self) -> bool: ...
    @property
    def current_player(self) -> int: ...
    @property
    def hand_mask(self) -> int: ...
    @property
    def table_mask(self) -> int: ...
    @property
    def pile_masks(self) -> Sequence[int]: ...
    @property
    def unseen_mask(self) -> int: ...
    @property
    def opponent_hand_count(self) -> int: ...
    @property
    def stock_count(self) -> int: ...
    @property
    def drawn_card(self) -> int | None: ...
    @property
    def decision_scores(self) -> Sequence[int]: ...
    @property
    def yaku_scores(self) -> Sequence[int]: ...
    @property
    def koikoi_calls(self) -> Sequence[int]: ...
    @property
    def events(self) -> Sequence[Any]: ...
    @property
    def table_brights(self) -> int: ...


__all__ = ["Hand", "Phase", "HandResult", "IllegalActionError", "hand_bonus_of", "Event", "HandState"]

_MONTH_OF_CARD = tuple(MONTH_MASKS[c >> 2] for c in range(NUM_CARDS))  # the mask of a card's month


@dataclass(frozen=True, slots=True)
class _SetUp:
    """What :meth:`Hand.set_up` knows of its position, in the form of what a player sees (:class:`SeenHand`)."""

    rules: RuleSet
    month: int
    dealer: int
    player: int
    current_player: int
    hand_mask: int
    table_mask: int
    pile_masks: tuple[int, int]
    unseen_mask: int
    opponent_hand_count: int
    stock_count: int
    decision_scores: tuple[int, int]
    yaku_scores: tuple[int, int]
    koikoi_calls: tuple[int, int]
    table_brights: int
    phase: str = "play"
    match_over: bool = False
    drawn_card: int | None = None
    events: tuple[Any, ...] = ()

    @property
    def rule_set(self) -> RuleSet:
        return self.rules


class Phase(IntEnum):
    PLAY = 0  # the hand step: play a card from the hand
    DRAW_CHOICE = 1  # the drawn card matches two table cards: choose one
    DECISION = 2  # the yaku score rose: koi-koi or stop
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "winner": self.winner,
            "points": self.points,
            "deltas": list(self.deltas),
            "yaku": [{"name": y.name, "points": y.points} for y in self.yaku],
            "base": self.base,
            "multiplier": self.multiplier,
        }


class _ResultDraft:
    """A HandResult being filled in (the same slots, writable): see :func:`_hand_result`."""

    __slots__ = HandResult.__slots__


def _hand_result(
    reason: str,
    winner: int | None,
    points: int,
    deltas: tuple[int, int],
    yaku: tuple[Yaku, ...] = (),
    base: int = 0,
    multiplier: int = 1,
    keep_dealer: bool = False,
) -> HandResult:
    """``HandResult(...)`` for the engine, which makes one per hand: a frozen dataclass's ``__init__``
    sets each field through ``object.__setattr__``, which costs more than settling the hand. The draft
    takes plain stores and becomes a HandResult by a ``__class__`` change (allowed between classes of
    the same slots); the result is an ordinary frozen HandResult."""
    r: Any = _ResultDraft()
    r.reason = reason
    r.winner = winner
    r.points = points
    r.deltas = deltas
    r.yaku = yaku
    r.base = base
    r.multiplier = multiplier
    r.keep_dealer = keep_dealer
    try:
        r.__class__ = HandResult
    except TypeError:  # a Python that refuses the change: the plain constructor
        return HandResult(reason, winner, points, deltas, yaku, base, multiplier, keep_dealer)
    return r  # type: ignore[no-any-return]


class Event(NamedTuple):
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


# Events are kept as plain tuples (player, kind code, card, captured mask), and a whole turn as one
# (player, played card, its capture, drawn card, its capture): building the named Events costs more
# than the step itself, so ``events`` names them only when asked.
_EVENT_KINDS = ("play", "draw", "koikoi", "stop", "declare")
_NO_PUBLIC: tuple[int, tuple[tuple[int, str, int, int], ...]] = (0, ())  # none of the events named yet
_PLAY_EV, _DRAW_EV, _KOIKOI_EV, _STOP_EV, _DECLARE_EV = range(5)

_MONTH_LOW_BITS = sum(1 << (4 * m) for m in range(12))
_N1 = _MONTH_LOW_BITS
_N2 = _N1 << 1
_PAIRS1 = sum(1 << i for i in range(0, NUM_CARDS, 2))
_PAIRS2 = _N1 * 3
_N4 = _N1 << 2  # in month counts: the nibbles that hold 4


def _months_present(mask: int) -> int:
    """How many months have at least one card in ``mask``."""
    return ((mask | mask >> 1 | mask >> 2 | mask >> 3) & _MONTH_LOW_BITS).bit_count()


def _month_counts(mask: int) -> int:
    """The number of cards of each month in ``mask``, one month per 4-bit nibble (0..4)."""
    x = (mask & _PAIRS1) + (mask >> 1 & _PAIRS1)
    return (x & _PAIRS2) + (x >> 2 & _PAIRS2)


def _two_card_months(mask: int) -> int:
    """The cards of every month of which exactly two are in ``mask`` (on the table: a choice)."""
    y = _month_counts(mask) ^ _N2  # zero exactly in the nibbles that hold 2
    return (_N1 & ~(y | y >> 1 | y >> 2)) * 15


def _fours_and_pairs(mask: int) -> tuple[int, int]:
    """How many months have all four cards in ``mask``, and how many exactly two."""
    return (_month_counts(mask) >> 2 & _N1).bit_count(), _two_card_months(mask).bit_count() >> 2


def hand_bonus_of(hand: int, rules: RuleSet) -> Yaku | None:
    """The teshi/kuttsuki bonus a dealt hand earns under ``rules``, if any."""
    # Eight cards hold four of a month or four pairs only if they span at most five months.
    if not rules.hand_bonus or _months_present(hand) > 5:
        return None
    fours, pairs = _fours_and_pairs(hand)
    if fours >= 2 and rules.hand_bonus_two_months:
        return Yaku("double-teshi", rules.hand_bonus_two_months)
    if fours:
        return Yaku("teshi", rules.hand_bonus)
    if pairs == 4:
        return Yaku("kuttsuki", rules.hand_bonus)
    return None


_SAKE_YAKU = ("tsukimi-zake", "hanami-zake")  # the yaku sake_after_koikoi raises


def _table_needs_redeal(table: int, rules: RuleSet) -> bool:
    # A count of 3 is the only one with its nibble's two low bits set (counts run 0..4).
    if rules.redeal_on_table_three:
        counts = _month_counts(table)
        if counts & counts >> 1 & _N1:
            return True
    if _months_present(table) > 5:
        return False
    fours, pairs = _fours_and_pairs(table)
    return (rules.redeal_on_table_four and fours > 0) or (rules.redeal_on_table_pairs and pairs == 4)


def _tsukifuda_month(rules: RuleSet, month: int) -> int:
    """The cards of ``month`` where tsukifuda counts, else 0 (``tsukifuda_mask``: apply_action's score gate)."""
    return MONTH_MASKS[month - 1] if rules.tsukifuda and month else 0


# What a new hand takes from its rule set, looked up once per rule set and version (keyed by identity, as
# koikoi.yaku does: hashing a rule set walks all its options): the scorer, the raiser, by month the
# tsukifuda gate, the yaku lister, whether the total alone tells a raise (koikoi.yaku.total_tells), and
# the month nibbles in which a count of three on the table asks for a redeal (none unless redeal_on_table_three).
# A hand's moving parts as plain values, for the fast paths (:meth:`Hand.export_state`): both hand masks,
# both hands as sorted card lists, the table mask, the table's two-card months (the cards of every month
# that lies twice on the table), both capture piles, the stock position and the player to move. The lists
# are copies: a fast path changes them freely and writes them back with :meth:`Hand.restore_state`.
HandState = tuple[list[int], list[list[int]], int, int, list[int], int, int]

_EngineFns = tuple[
    RuleSet,
    int,
    Callable[[int, int | None], int],
    Raiser,
    tuple[int, ...],
    Callable[[int, int | None], tuple[Yaku, ...]],
    bool,
    int,
]
_ENGINE_FNS: dict[int, _EngineFns] = {}


def _engine_fns(rules: RuleSet, version: int) -> _EngineFns:
    fns: _EngineFns = (
        rules,
        version,
        scorer(rules, version),
        raiser(rules),
        tuple(_tsukifuda_month(rules, m) for m in range(13)),
        evaluator(rules, version),
        total_tells(rules),
        _N1 if rules.redeal_on_table_three else 0,
    )
    if len(_ENGINE_FNS) > 256:
        _ENGINE_FNS.clear()
    _ENGINE_FNS[id(rules)] = fns
    return fns


# A player's last scored pile and its total, before any: the empty pile, which scores nothing.
_UNSCORED = (0, 0)

# Phases as plain ints inside the hot path (an enum member lookup costs more than the work).
_PLAY, _DRAW_CHOICE, _DECISION, _OVER = 0, 1, 2, 3
_PHASES = tuple(Phase)
_BIT_OF = {c: 1 << c for c in range(NUM_CARDS)}
_G0, _G1, _G2, _G3 = GATE_TABLES  # the score gate of koikoi.yaku, read inline in apply_action
_CARD_ID = {c: c for c in range(NUM_CARDS)}


class Hand:
    """The state of one hand. Players are 0 and 1; the dealer moves first."""

    __slots__ = (
        "rules",
        "month",
        "dealer",
        "_hands",
        "_cards",
        "_table",
        "_two",
        "piles",
        "stock",
        "stock_pos",
        "current_player",
        "_phase",
        "pending",
        "decision_score",
        "koikoi_calls",
        "last_koikoi",
        "declarable",
        "table_brights",
        "result",
        "_events",
        "_public",
        "scorer",
        "turn_score",
        "turn_pile",
        "raiser",
        "_yaku",
        "_tells",
        "_scored",
        "tsukifuda_mask",
        "version",
    )

    def __init__(
        self, rules: RuleSet, deck: Sequence[int], dealer: int = 0, month: int = 1, version: int = RULES_VERSION
    ) -> None:
        """``version``: the engine's rules version (:data:`koikoi.rules.RULES_VERSIONS`); an older one
        only to replay a record played under it."""
        try:
            # itemgetter looks all the cards up in one call; a card that is no card id raises.
            b: tuple[int, ...] = _itemgetter(*deck)(_BIT_OF) if len(deck) == NUM_CARDS else ()
        except (KeyError, TypeError):
            b = ()
        # 48 powers of two add up to the full deck only if they are the 48 different cards.
        if len(b) != NUM_CARDS or sum(b) != FULL_DECK:
            raise ValueError("a deck order must hold each of the 48 card ids exactly once")
        if dealer not in (0, 1):
            raise ValueError(f"dealer must be 0 or 1, not {dealer!r}")
        if not 1 <= month <= 12:
            raise ValueError(f"month must be 1..12, not {month!r}")
        fns = _ENGINE_FNS.get(id(rules))
        if fns is None or fns[0] is not rules or fns[1] != version:
            if version not in RULES_VERSIONS:
                raise ValueError(f"rules version must be one of {', '.join(map(str, RULES_VERSIONS))}, not {version!r}")
            fns = _engine_fns(rules, version)
        self._deal_cards(rules, fns, b, _itemgetter(*deck[24:])(_CARD_ID), dealer, month, version)

    def _deal_cards(
        self,
        rules: RuleSet,
        fns: _EngineFns,
        b: Sequence[int],
        stock: tuple[int, ...],
        dealer: int,
        month: int,
        version: int,
    ) -> None:
        """The deal, from checked arguments: ``b`` the bits of the deck's first 24 cards (or of all 48), ``stock``
        the other 24 card ids in order, ``fns`` the rule set's engine functions (:func:`_engine_fns`)."""
        self.version = version
        self.rules = rules
        self.month = month
        self.dealer = dealer
        if rules.deal_pattern == "4-4":
            h = b[0] | b[1] | b[2] | b[3] | b[12] | b[13] | b[14] | b[15]
            d = b[4] | b[5] | b[6] | b[7] | b[16] | b[17] | b[18] | b[19]
            table = b[8] | b[9] | b[10] | b[11] | b[20] | b[21] | b[22] | b[23]
        else:  # 2-2
            h = b[0] | b[1] | b[6] | b[7] | b[12] | b[13] | b[18] | b[19]
            d = b[2] | b[3] | b[8] | b[9] | b[14] | b[15] | b[20] | b[21]
            table = b[4] | b[5] | b[10] | b[11] | b[16] | b[17] | b[22] | b[23]
        hands = self._hands = [d, h] if dealer == 0 else [h, d]
        self._cards = [card_list(hands[0]), card_list(hands[1])]  # the same cards as sorted lists
        self._table = table
        # The number of cards of each month (a nibble each) on the table and in both hands (_month_counts,
        # inlined: this runs once per deal).
        x = (table & _PAIRS1) + (table >> 1 & _PAIRS1)
        on_table = (x & _PAIRS2) + (x >> 2 & _PAIRS2)
        x = (h & _PAIRS1) + (h >> 1 & _PAIRS1)
        in_h = (x & _PAIRS2) + (x >> 2 & _PAIRS2)
        x = (d & _PAIRS1) + (d >> 1 & _PAIRS1)
        in_d = (x & _PAIRS2) + (x >> 2 & _PAIRS2)
        y = on_table ^ _N2  # _two_card_months, inlined
        self._two = (_N1 & ~(y | y >> 1 | y >> 2)) * 15
        self.piles = [0, 0]
        self.stock = stock
        self.stock_pos = 0
        self.current_player = dealer
        self._phase = _PLAY
        self.pending = -1
        self.decision_score = [0, 0]
        self.turn_score = [0, 0]
        self.koikoi_calls = [0, 0]
        self.last_koikoi = -1
        self.declarable = [False, False]
        self.table_brights = max(1, (table & BRIGHTS).bit_count())
        self.result: HandResult | None = None
        self._events: list[tuple[int, ...]] = []
        self._public: tuple[int, tuple[tuple[int, str, int, int], ...]] = _NO_PUBLIC
        # Part of the fast interface, read-only: the rule set's yaku total of a pile in a month (memoised),
        # its test for a turn that raised a pile's yaku (koikoi.yaku.raiser), and the cards of this
        # hand's month where tsukifuda counts (else 0). Plain slots: a playout reads them once.
        self.scorer: Callable[[int, int | None], int] = fns[2]
        self.raiser: Raiser = fns[3]
        self.tsukifuda_mask: int = fns[4][month]
        self._yaku = fns[5]
        self._tells = fns[6]
        self._scored = [_UNSCORED, _UNSCORED]
        self.turn_pile = 0  # the mover's pile before this turn, kept while a drawn card awaits its choice
        # A redeal or a hand bonus needs all four cards of a month, or four months of two, among eight
        # cards: a count of 4, or only even counts. Few deals have either, and these tests settle the rest.
        # Under redeal_on_table_three a count of 3 on the table too: fns[7] adds 1 to every month's count,
        # so a 3 reads as a 4 (counts stay under 16, nothing carries); without the option it adds 0.
        if (
            (on_table + fns[7]) & _N4
            or not on_table & _N1
            or in_h & _N4
            or not in_h & _N1
            or in_d & _N4
            or not in_d & _N1
        ):
            self._check_deal()

    # -- the deal -----------------------------------------------------------------------------

    def _check_deal(self) -> None:
        # Only for the deals that the quick tests at the end of __init__ leave open.
        rules = self.rules
        if _table_needs_redeal(self._table, rules):
            self._end(HandResult("redeal", None, 0, (0, 0)))
            return
        if rules.redeal_on_hand_four or rules.redeal_on_hand_pairs:  # either dealt hand: no bonus is paid
            for dealt in self._hands:
                fours, pairs = _fours_and_pairs(dealt)
                if (rules.redeal_on_hand_four and fours) or (rules.redeal_on_hand_pairs and pairs == 4):
                    self._end(HandResult("redeal", None, 0, (0, 0)))
                    return
        bonus = [hand_bonus_of(h, rules) for h in self._hands]
        if bonus[0] and bonus[1] and rules.redeal_on_both_hand_bonus:
            self._end(HandResult("redeal", None, 0, (0, 0)))
            return
        if rules.hand_bonus_declared:
            self.declarable = [bonus[0] is not None, bonus[1] is not None]
            return
        for p in (self.dealer, 1 - self.dealer):
            held = bonus[p]
            if held is not None:
                self._award_hand_bonus(p, held)
                return

    def _award_hand_bonus(self, player: int, bonus: Yaku) -> None:
        deltas = [0, 0]
        deltas[player] = bonus.points
        if self.rules.transfer:
            deltas[1 - player] = -bonus.points
        self._end(_hand_result("hand_bonus", player, bonus.points, (deltas[0], deltas[1]), (bonus,), bonus.points, 1))

    @property
    def needs_redeal(self) -> bool:
        """The deal must be thrown in and dealt again (docs/rules.md section 2)."""
        return self.result is not None and self.result.reason == "redeal"

    # -- queries --------------------------------------------------------------------------------

    @property
    def hands(self) -> list[int]:
        """The masks of both players' hands: a copy, since the engine keeps its own card lists in step."""
        return self._hands[:]

    @property
    def table(self) -> int:
        """The mask of the cards face up on the table."""
        return self._table

    @table.setter
    def table(self, mask: int) -> None:
        # Kept in step with the table: the months where a card played or drawn gives a choice.
        self._table = mask
        self._two = _two_card_months(mask)

    @property
    def events(self) -> list[Event]:
        """The public happenings of this hand so far, oldest first."""
        out = []
        for e in self._events:
            if len(e) == 5:
                p, c, captured, d, drawn = e
                out.append(Event(p, "play", c, captured))
                out.append(Event(p, "draw", d, drawn))
            else:
                p, k, c, m = e
                out.append(Event(p, _EVENT_KINDS[k], c, m))
        return out

    def public_events(self) -> tuple[tuple[int, str, int, int], ...]:
        """The same events as :attr:`events`, as plain ``(player, kind, card, captured)`` tuples (what an
        observation shows). Kept from one call to the next: a call names only the events new since
        the last, so observing after every action costs no more as the hand goes on."""
        done, out = self._public
        events = self._events
        if done == len(events):
            return out
        new: list[tuple[int, str, int, int]] = []
        for e in events[done:]:
            if len(e) == 5:
                p, c, captured, d, drawn = e
                new.append((p, "play", c, captured))
                new.append((p, "draw", d, drawn))
            else:
                new.append((e[0], _EVENT_KINDS[e[1]], e[2], e[3]))
        out += tuple(new)
        self._public = (len(events), out)
        return out

    @property
    def phase(self) -> Phase:
        return _PHASES[self._phase]

    def is_over(self) -> bool:
        return self._phase == _OVER

    @property
    def stock_count(self) -> int:
        return len(self.stock) - self.stock_pos

    @property
    def drawn_card(self) -> int:
        """The card drawn from the stock awaiting a capture choice, or -1."""
        return self.pending

    def score_of(self, player: int) -> int:
        """The yaku total of a player's capture pile now, before multipliers."""
        return self.scorer(self.piles[player], self.month)

    def yaku_of(self, player: int) -> list[Yaku]:
        return list(self._yaku(self.piles[player], self.month))

    def legal_actions(self) -> list[int]:
        """Every legal action of the player to move, sorted; empty when the hand is over."""
        phase = self._phase
        if not phase:  # PLAY
            p = self.current_player
            hand = self._hands[p]
            choice = hand & self._two
            out = self._cards[p][:]
            if choice:
                # A card whose month lies twice on the table is played as two actions, one per
                # table card it may take; these come after the plain plays, so the list stays sorted.
                table = self._table
                while choice:
                    low = choice & -choice
                    choice ^= low
                    c = low.bit_length() - 1
                    out.remove(c)
                    matches = table & _MONTH_OF_CARD[c]
                    first = matches & -matches
                    base = PLAY_TAKE_BASE + 4 * c
                    out.append(base + ((first.bit_length() - 1) & 3))
                    out.append(base + (((matches ^ first).bit_length() - 1) & 3))
            if self.declarable[p] and hand.bit_count() == 8:
                out.append(DECLARE)
            return out
        if phase == _DRAW_CHOICE:
            matches = self._table & _MONTH_OF_CARD[self.pending]
            low = matches & -matches
            return [DRAW_TAKE_BASE + low.bit_length() - 1, DRAW_TAKE_BASE + (matches ^ low).bit_length() - 1]
        if phase == _DECISION:
            return [KOIKOI, STOP] if self._may_koikoi(self.current_player) else [STOP]
        return []

    def can_declare(self, player: int) -> bool:
        """``player`` may declare a dealt teshi/kuttsuki now: it is their first turn, before they play."""
        # Only the first turn, while the hand is still whole (so the hot path never clears a flag).
        return (
            self.declarable[player]
            and self._phase == _PLAY
            and self.current_player == player
            and self._hands[player].bit_count() == 8
        )

    def _may_koikoi(self, player: int) -> bool:
        # RULES 6.3: no koi-koi when no turn remains for the caller; 6.7: the optional call limit.
        if not self._hands[player]:
            return False
        limit = self.rules.koikoi_limit
        if not limit:
            return True
        calls = self.koikoi_calls
        # koikoi_limit_scope = hand: both players' calls count against the one limit.
        return (calls[0] + calls[1] if self.rules.koikoi_limit_scope == "hand" else calls[player]) < limit

    def is_legal(self, action: int) -> bool:
        if type(action) is not int:
            return False
        phase = self._phase
        if phase == _PLAY:
            if 0 <= action < PLAY_TAKE_BASE:
                if not (self._hands[self.current_player] >> action) & 1:
                    return False
                return (self._table & _MONTH_OF_CARD[action]).bit_count() != 2
            if PLAY_TAKE_BASE <= action < DRAW_TAKE_BASE:
                c, r = divmod(action - PLAY_TAKE_BASE, 4)
                if not (self._hands[self.current_player] >> c) & 1:
                    return False
                matches = self._table & _MONTH_OF_CARD[c]
                return matches.bit_count() == 2 and bool((matches >> ((c & ~3) | r)) & 1)
            return action == DECLARE and self.can_declare(self.current_player)
        if phase == _DRAW_CHOICE:
            t = action - DRAW_TAKE_BASE
            return 0 <= t < NUM_CARDS and t >> 2 == self.pending >> 2 and bool((self._table >> t) & 1)
        if phase == _DECISION:
            return action == STOP or (action == KOIKOI and self._may_koikoi(self.current_player))
        return False

    # -- moves ------------------------------------------------------------------------------------

    def apply_action(self, action: int) -> None:
        """Play ``action`` for the player to move. An illegal action raises and changes nothing.

        This is the engine's hot path: legality is checked inline and the draw step that follows
        a hand step is resolved here too, since the stock order was fixed by the deal.
        """
        if type(action) is not int:
            raise self._illegal(action)
        phase = self._phase
        p = self.current_player
        hands = self._hands
        if not phase:  # PLAY
            hand = hands[p]
            table = self._table
            cbit = _BIT_OF.get(action)  # a card's bit (no new int), or None for the other actions
            if cbit is not None:  # a plain play: one of the 48 card ids
                if not hand & cbit or self._two & cbit:
                    raise self._illegal(action)
                c = action
                take = table & _MONTH_OF_CARD[c]  # none, one, or three: all of them
            elif PLAY_TAKE_BASE <= action < DRAW_TAKE_BASE:
                c, r = divmod(action - PLAY_TAKE_BASE, 4)
                cbit = _BIT_OF[c]
                matches = table & _MONTH_OF_CARD[c]
                take = 1 << ((c & ~3) | r)
                if not hand & cbit or matches.bit_count() != 2 or not matches & take:
                    raise self._illegal(action)
            elif action == DECLARE and self.can_declare(p):
                self._events.append((p, _DECLARE_EV, -1, 0))
                declared = hand_bonus_of(hand, self.rules)
                assert declared is not None  # can_declare said the hand holds one
                self._award_hand_bonus(p, declared)
                return
            else:
                raise self._illegal(action)
            hands[p] = hand ^ cbit
            self._cards[p].remove(c)
            piles = self.piles
            pile = before = piles[p]
            if take:  # the play captures (a choice always takes one card)
                table ^= take
                captured = take | cbit
                pile |= captured
            else:
                table |= cbit
                captured = 0
            pos = self.stock_pos
            d = self.stock[pos]
            self.stock_pos = pos + 1
            dbit = _BIT_OF[d]
            matches = table & _MONTH_OF_CARD[d]
            if matches:
                if matches.bit_count() == 2:
                    self._events.append((p, _PLAY_EV, c, captured))
                    self._table = table
                    self._two &= ~_MONTH_OF_CARD[c]
                    piles[p] = pile
                    self.turn_pile = before
                    self.pending = d
                    self._phase = _DRAW_CHOICE
                    return
                table ^= matches
                drawn = matches | dbit
                pile |= drawn
            else:
                table |= dbit
                drawn = 0
            self._events.append((p, c, captured, d, drawn))  # a whole turn: the play, then the draw
            self._table = table
            # After the deal no month ever gets to two table cards again: a card joins the table only
            # when its month has none there. So the months just touched simply leave the choice set.
            if self._two:
                self._two &= ~(_MONTH_OF_CARD[c] | _MONTH_OF_CARD[d])
            piles[p] = pile
            changed = captured or drawn
        elif phase == _DRAW_CHOICE:
            d = self.pending
            t = action - DRAW_TAKE_BASE
            if not (0 <= t < NUM_CARDS and t >> 2 == d >> 2 and (self._table >> t) & 1):
                raise self._illegal(action)
            drawn = (1 << t) | (1 << d)
            self._table ^= 1 << t
            self._two &= ~_MONTH_OF_CARD[d]
            pile = self.piles[p] = self.piles[p] | drawn
            self._events.append((p, _DRAW_EV, d, drawn))
            self.pending = -1
            self._phase = _PLAY
            before = self.turn_pile
            changed = True
        elif phase == _DECISION:
            if action == STOP:
                self._events.append((p, _STOP_EV, -1, 0))
                # The pile has not changed since the decision was offered on its score.
                self.settle_stop(p, "stop", self.turn_score[p])
            elif action == KOIKOI and self._may_koikoi(p):
                self._events.append((p, _KOIKOI_EV, -1, 0))
                self.koikoi_calls[p] += 1
                self.last_koikoi = p
                self.decision_score[p] = self.turn_score[p]
                self._phase = _PLAY
                self._next_player(p)
            else:
                raise self._illegal(action)
            return
        else:
            raise self._illegal(action)
        # RULES 2.5 / 6.1: the yaku are checked only after both steps; a yaku new this turn, or one
        # that scores more than before the turn, offers the choice (even where the total fell).
        # Without a capture this turn the pile, and so its yaku, cannot have changed.
        # Most piles score nothing, which the score gate (koikoi.yaku.may_score) tells without a call.
        if changed and (
            (_G0[pile & 4095] + _G1[pile >> 12 & 4095] + _G2[pile >> 24 & 4095] + _G3[pile >> 36] + GATE_BIAS)
            & GATE_TOPS
            or (tsuki := self.tsukifuda_mask)
            and pile & tsuki == tsuki
        ):
            month = self.month
            s = self.scorer(pile, month)
            scored = self._scored
            last_pile, last_score = scored[p]
            scored[p] = (pile, s)
            # (Rules version 1 offered the choice only when the total beat the total at the last call.)
            if s and (
                (
                    # The pile before this turn is often the one scored last: its total is known. Any
                    # raiser says yes to a higher total, and where the total tells, no to the rest.
                    (s > last_score or not self._tells and self.raiser(before, pile, month, s))
                    if last_pile == before
                    else self.raiser(before, pile, month, s)
                )
                if self.version > 1
                else s > self.decision_score[p]
            ):
                self.turn_score[p] = s
                self._phase = _DECISION
                return
        if hands[0] or hands[1]:
            self.current_player = 1 - p  # the phase is already PLAY
        else:
            self.settle_exhausted()

    def _next_player(self, p: int) -> None:
        if not self._hands[0] and not self._hands[1]:
            self.settle_exhausted()
            return
        self.current_player = 1 - p
        self._phase = _PLAY

    # -- settling (section 4) --------------------------------------------------------------------

    def multiplier_for(self, player: int, base: int) -> int:
        """The product of all multipliers that apply if ``player`` scores ``base`` now."""
        r = self.rules
        mult = 2 if r.seven_point_double and base >= 7 else 1
        km = r.koikoi_multiplier
        if km == "additive":
            mult *= 1 + self.koikoi_calls[player]
        elif km == "own_points_then_multiply":
            if self.koikoi_calls[player] >= 4:  # one to three calls add points instead (stop_base)
                mult *= self.koikoi_calls[player] - 2
        else:
            if km in ("opponent_double", "own_and_opponent_double") and self.koikoi_calls[1 - player]:
                mult *= 2
            if km in ("own_double", "own_and_opponent_double") and self.koikoi_calls[player]:
                mult *= 2
        if r.bright_table_multiplier:
            mult *= self.table_brights
        return mult

    def stop_base(self, player: int, base: int) -> int:
        """The yaku total ``base`` of ``player``'s pile as it scores if they stop now: after their own
        koi-koi, ``sake_after_koikoi`` raises each sake yaku (under ``sake_yaku = on``) and
        ``own_points_then_multiply`` adds a point a call (one to three calls). Without a call, or without
        a yaku, ``base`` itself."""
        calls = self.koikoi_calls[player]
        if not calls or not base:
            return base
        r = self.rules
        if r.sake_after_koikoi and r.sake_yaku == "on":
            for y in self._yaku(self.piles[player], self.month):
                if y.name in _SAKE_YAKU:
                    base += r.sake_after_koikoi - y.points
        if r.koikoi_multiplier == "own_points_then_multiply" and calls <= 3:
            base += calls
        return base

    def _stop_yaku(self, player: int, yaku: tuple[Yaku, ...]) -> tuple[Yaku, ...]:
        # The yaku as stop_base scores them: the raised sake yaku, and the calls' points as "koikoi".
        r, calls = self.rules, self.koikoi_calls[player]
        if not calls or not yaku:
            return yaku
        if r.sake_after_koikoi and r.sake_yaku == "on":
            yaku = tuple(Yaku(y.name, r.sake_after_koikoi) if y.name in _SAKE_YAKU else y for y in yaku)
        if r.koikoi_multiplier == "own_points_then_multiply" and calls <= 3:
            yaku += (Yaku("koikoi", calls),)
        return yaku

    def stop_payout(self, p: int, base: int) -> tuple[int, int, tuple[int, int]]:
        """What ``p`` is paid for stopping on a yaku total of ``base``: the multiplier, the points and
        the score changes (the hand's playouts read these without settling the hand). Part of the fast
        interface: it changes nothing."""
        return self._payout(p, self.stop_base(p, base))

    def _payout(self, p: int, base: int) -> tuple[int, int, tuple[int, int]]:
        # ``base``: stop_base's, raised already.
        mult = self.multiplier_for(p, base)
        points = base * mult
        if self.rules.transfer:
            return mult, points, ((points, -points) if p == 0 else (-points, points))
        return mult, points, ((points, 0) if p == 0 else (0, points))

    def settle_stop(self, p: int, reason: str, base: int = -1) -> HandResult:
        """``p`` scores their pile and the hand ends (``reason``: ``stop`` or ``exhausted``); ``base``, its
        yaku total, where the caller has it already; the result. Part of the fast interface: unchecked,
        for a playout whose rules say ``p`` stops now."""
        pile = self.piles[p]
        yaku = self._yaku(pile, self.month)
        if base < 0:
            base = self.scorer(pile, self.month)  # the yaku's total, already memoised
        if self.koikoi_calls[p]:
            base = self.stop_base(p, base)
            yaku = self._stop_yaku(p, yaku)
        mult, points, deltas = self._payout(p, base)
        result = self.result = _hand_result(reason, p, points, deltas, yaku, base, mult)  # _end, inlined
        self._phase = _OVER
        self.pending = -1
        return result

    def settle_exhausted(self) -> HandResult:
        """The hand ends with both hands played out, paid as the rule set's ``exhausted`` option says;
        the result. Part of the fast interface: unchecked, for a playout that has played every card."""
        r = self.rules
        mode = r.exhausted
        n = r.exhausted_points
        if mode == "last_koikoi" and self.last_koikoi >= 0:
            return self.settle_stop(self.last_koikoi, "exhausted")
        # oya-ken: dealer_bonus pays the dealer only when neither player made a yaku (seed 004); a yaku
        # made and not stopped on always meant a koi-koi call.
        if (
            mode in ("dealer_bonus", "last_koikoi")
            and n
            and not (mode == "dealer_bonus" and (self.koikoi_calls[0] or self.koikoi_calls[1]) and self.version > 1)
        ):
            d = self.dealer
            deltas = [0, 0]
            deltas[d] = n
            if r.transfer:
                deltas[1 - d] = -n
            return self._end(
                _hand_result("exhausted", d, n, (deltas[0], deltas[1]), (Yaku("oya-ken", n),), n, 1, keep_dealer=True)
            )
        if mode in ("first_player", "second_player") and n:
            gainer = self.dealer if mode == "first_player" else 1 - self.dealer
            deltas = [-n, -n]
            deltas[gainer] = n
            return self._end(_hand_result("exhausted", None, 0, (deltas[0], deltas[1])))
        return self._end(_hand_result("exhausted", None, 0, (0, 0)))

    def _end(self, result: HandResult) -> HandResult:
        self.result = result
        self._phase = _OVER
        self.pending = -1
        return result

    # -- the fast interface ----------------------------------------------------------------------
    # For the fast paths that play the rules on plain integers (koikoi.ai.fastplay, koikoi.ai.hard_v1,
    # koikoi.ai.search, koikoi.ai.batchplay) and the views read at every step (koikoi.observation,
    # koikoi.env): the state as plain values, in and out, and the settling steps, with no checks. A
    # caller writes back only a state reached by the rules from one it exported, and settles only where
    # the rules settle (docs/architecture.md, "Where the rules live"). Nothing here copies more than
    # the caller asks for: these run once per playout or per observation, not per move. With these go
    # the read-only slots scorer, raiser and tsukifuda_mask (set at the deal), and settle_stop,
    # settle_exhausted and stop_payout (section 4, below).

    @property
    def hand_masks(self) -> Sequence[int]:
        """Both players' hand masks, as the engine keeps them (no copy: read, never change)."""
        return self._hands

    @property
    def phase_code(self) -> int:
        """:attr:`phase` as a plain int (``Phase(h.phase_code) is h.phase``), cheaper to read in a hot loop."""
        return self._phase

    def export_state(self) -> HandState:
        """The moving parts of the hand as plain values (:data:`HandState`), the lists copied."""
        cards = self._cards
        return (
            self._hands[:],
            [cards[0][:], cards[1][:]],
            self._table,
            self._two,
            self.piles[:],
            self.stock_pos,
            self.current_player,
        )

    def restore_state(
        self,
        hands: list[int],
        table: int,
        piles: list[int],
        stock_pos: int,
        current_player: int,
        cards: list[list[int]] | None = None,
    ) -> None:
        """Take back a state a fast path reached from :meth:`export_state` by the rules (the lists are
        kept, not copied): the hand masks, the table, the piles, the stock position and the player to
        move; ``cards``, the hands as sorted card lists, where the caller kept them in step (else they
        are listed from the masks). The phase, the scores and the event log are left as they are."""
        self._hands = hands
        self._cards = [card_list(hands[0]), card_list(hands[1])] if cards is None else cards
        self.table = table  # and the two-card months with it
        self.piles = piles
        self.stock_pos = stock_pos
        self.current_player = current_player

    def set_hand(self, player: int, mask: int, cards: list[int]) -> None:
        """Replace ``player``'s hand with ``mask`` (``cards``: the same cards as a sorted list, kept): how
        a search deals a sampled world's hidden cards. Unchecked: the cards must be the ones it replaces
        or others not in play."""
        self._hands[player] = mask
        self._cards[player] = cards

    # -- errors, copies ------------------------------------------------------------------------

    def _illegal(self, action: object) -> IllegalActionError:
        over = self._phase == _OVER
        legal = "" if over else "; legal: " + ", ".join(action_name(a) for a in self.legal_actions())
        if not is_action(action):  # not an action number at all: say why, never name a wrong card
            try:
                check_action(action)
            except ValueError as e:
                return IllegalActionError(f"illegal action: {e}" + (" (the hand is over)" if over else legal))
        shown = action_name(action)  # type: ignore[arg-type]
        if over:
            return IllegalActionError(f"illegal action {shown}: the hand is over")
        return IllegalActionError(
            f"illegal action {shown} for player {self.current_player} in phase {self.phase.name.lower()}{legal}"
        )

    @classmethod
    def set_up(
        cls,
        rules: RuleSet,
        *,
        hands: tuple[int, int],
        table: int,
        piles: tuple[int, int] = (0, 0),
        stock: Sequence[int],
        player: int,
        dealer: int | None = None,
        month: int = 1,
        koikoi_calls: tuple[int, int] = (0, 0),
        last_koikoi: int | None = None,
        table_brights: int | None = None,
    ) -> Hand:
        """A hand set up at a chosen moment rather than dealt: ``player`` to play a card from their hand,
        ``hands``, ``table`` and ``piles`` as masks, the ``stock`` in the order it will be drawn (top
        first). Every card of the deck must be in exactly one place. A pile's yaku count as already
        declared (a player holding one has called koi-koi ``koikoi_calls`` times, at least once): only
        what a move adds to them asks for a decision. This is how a lesson shows a position (a pile two
        brights strong, the card that makes the third on the table) and the engine plays on from it.
        """
        if player not in (0, 1):
            raise ValueError(f"player must be 0 or 1, not {player!r}")
        dealer = player if dealer is None else dealer
        if dealer not in (0, 1):
            raise ValueError(f"dealer must be 0 or 1, not {dealer!r}")
        if not 1 <= month <= 12:
            raise ValueError(f"month must be 1..12, not {month!r}")
        stock = tuple(stock)
        places = [("hand 0", hands[0]), ("hand 1", hands[1]), ("the table", table), ("pile 0", piles[0])]
        places += [("pile 1", piles[1]), ("the stock", sum(1 << c for c in stock))]
        seen = 0
        for where, mask in places:
            if not 0 <= mask <= FULL_DECK:
                raise ValueError(f"{where} holds something that is not a card")
            if seen & mask:
                twice = mask_to_names(seen & mask)
                raise ValueError(f"{', '.join(twice)} in {where} and somewhere else too: each card is in one place")
            seen |= mask
        if len(set(stock)) != len(stock):
            raise ValueError("the stock holds a card twice")
        if seen != FULL_DECK:
            raise ValueError(f"{', '.join(mask_to_names(FULL_DECK & ~seen))} in no place: every card is somewhere")
        if not hands[player]:
            raise ValueError(f"player {player} is to play and holds no card")
        if not stock:
            raise ValueError("the stock is empty: a turn draws a card after the one played")
        score = scorer(rules)
        scores = (score(piles[0], month), score(piles[1], month))
        for p in (0, 1):
            if scores[p] and not koikoi_calls[p]:
                raise ValueError(f"pile {p} holds a yaku: its player must have called koi-koi (koikoi_calls)")
        if last_koikoi is None:
            callers = [p for p in (0, 1) if koikoi_calls[p]]
            if len(callers) == 2:
                raise ValueError("both players have called koi-koi: say who called last (last_koikoi)")
            last_koikoi = callers[0] if callers else None
        elif last_koikoi not in (0, 1) or not koikoi_calls[last_koikoi]:
            raise ValueError(f"last_koikoi is a player who called koi-koi, not {last_koikoi!r}")
        seen_hand = _SetUp(
            rules=rules,
            month=month,
            dealer=dealer,
            player=player,
            current_player=player,
            hand_mask=hands[player],
            table_mask=table,
            pile_masks=piles,
            unseen_mask=hands[1 - player] | sum(1 << c for c in stock),
            opponent_hand_count=hands[1 - player].bit_count(),
            stock_count=len(stock),
            decision_scores=scores,
            yaku_scores=scores,
            koikoi_calls=koikoi_calls,
            table_brights=max(1, (table & BRIGHTS).bit_count()) if table_brights is None else table_brights,
            events=() if last_koikoi is None else ((last_koikoi, "koikoi", 0, 0),),
        )
        return cls.from_observation(seen_hand, hands[1 - player], stock)

    @classmethod
    def from_observation(cls, obs: SeenHand, opponent_hand: int, stock: Sequence[int]) -> Hand:
        """A full hand state built from one player's observation plus a guess of the hidden cards.

        ``opponent_hand`` (a mask) and ``stock`` (the stock order, top first) must together hold
        exactly the cards the observation leaves unseen (``obs.unseen_mask``), in the counts it
        shows. This is how a search AI samples worlds it cannot tell apart from the real one
        (determinization) without ever reading the real hidden cards.
        """
        if obs.match_over or obs.phase == "over":
            raise ValueError("the hand in this observation is over")
        stock = tuple(stock)
        stock_mask = 0
        for c in stock:
            stock_mask |= _BIT_OF[c]
        if (
            opponent_hand.bit_count() != obs.opponent_hand_count
            or len(stock) != obs.stock_count
            or stock_mask.bit_count() != len(stock)
            or opponent_hand & stock_mask
            or opponent_hand | stock_mask != obs.unseen_mask
        ):
            raise ValueError(
                "the opponent's hand and the stock must be exactly the unseen cards, "
                f"{obs.opponent_hand_count} in the hand and {obs.stock_count} in the stock"
            )
        me, other = obs.player, 1 - obs.player
        h = cls.__new__(cls)
        h.rules = obs.rule_set
        h.month = obs.month
        h.dealer = obs.dealer
        h._hands = [0, 0]
        h._hands[me], h._hands[other] = obs.hand_mask, opponent_hand
        h._cards = [card_list(h._hands[0]), card_list(h._hands[1])]
        h._table = obs.table_mask
        h._two = _two_card_months(obs.table_mask)
        h.piles = list(obs.pile_masks)
        h.stock = stock
        h.stock_pos = 0
        h.current_player = obs.current_player
        h._phase = Phase[obs.phase.upper()].value
        h.pending = -1 if obs.drawn_card is None else obs.drawn_card
        h.decision_score = list(obs.decision_scores)
        h.turn_score = list(obs.yaku_scores)
        h.koikoi_calls = list(obs.koikoi_calls)
        h.last_koikoi = next((p for p, kind, _, _ in reversed(obs.events) if kind == "koikoi"), -1)
        # A dealt teshi/kuttsuki may still be declared (it lapses with the holder's first play, see
        # can_declare); the opponent's follows from the guessed hand like everything else in it.
        declared = h.rules.hand_bonus_declared
        h.declarable = [declared and hand_bonus_of(m, h.rules) is not None for m in h._hands]
        h.table_brights = obs.table_brights
        h.result = None
        h._events = []
        h._public = _NO_PUBLIC
        h.version = RULES_VERSION
        h.scorer = scorer(h.rules)
        h.raiser = raiser(h.rules)
        h._yaku = evaluator(h.rules)
        h._tells = total_tells(h.rules)
        h._scored = [_UNSCORED, _UNSCORED]
        h.tsukifuda_mask = _tsukifuda_month(h.rules, h.month)
        h.turn_pile = h.piles[h.current_player]
        if h.pending >= 0 and obs.events and obs.events[-1][0] == h.current_player and obs.events[-1][1] == "play":
            h.turn_pile &= ~obs.events[-1][3]  # the hand step's capture was this turn's
        return h

    def clone(self) -> Hand:
        """An independent copy (for search)."""
        h = Hand.__new__(Hand)
        h.rules = self.rules
        h.month = self.month
        h.dealer = self.dealer
        h._hands = self._hands[:]
        h._cards = [self._cards[0][:], self._cards[1][:]]
        h._table = self._table
        h._two = self._two
        h.piles = self.piles[:]
        h.stock = self.stock
        h.stock_pos = self.stock_pos
        h.current_player = self.current_player
        h._phase = self._phase
        h.pending = self.pending
        h.decision_score = self.decision_score[:]
        h.turn_score = self.turn_score[:]
        h.koikoi_calls = self.koikoi_calls[:]
        h.last_koikoi = self.last_koikoi
        h.declarable = self.declarable[:]
        h.table_brights = self.table_brights
        h.result = self.result
        h._events = self._events[:]
        h._public = self._public  # a tuple: shared, and replaced (never changed) as events come
        h.scorer = self.scorer
        h.raiser = self.raiser
        h._yaku = self._yaku
        h._tells = self._tells
        h._scored = self._scored[:]
        h.tsukifuda_mask = self.tsukifuda_mask
        h.turn_pile = self.turn_pile
        h.version = self.version
        return h

    def cards_accounted_for(self) -> bool:
        """Each of the 48 cards is in exactly one place: a hand, the table, a pile, the stock or drawn."""
        places = [self._hands[0], self._hands[1], self._table, self.piles[0], self.piles[1]]
        for c in self.stock[self.stock_pos :]:
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
        return (
            f"<Hand month={self.month} dealer={self.dealer} to_move={self.current_player} "
            f"phase={self.phase.name.lower()} stock={self.stock_count}>"
        )


def dealt_hand(rules: RuleSet, deck: list[int], dealer: int, month: int, version: int = RULES_VERSION) -> Hand:
    """``Hand(rules, deck, dealer, month, version)`` for a deck the engine shuffled itself, a list of the 48 card
    ids each once, and a dealer and month a match chose: none of the checks a deck from outside needs, and only
    the first 24 cards looked up as bits (the stock stays ids); about a microsecond less per deal."""
    fns = _ENGINE_FNS.get(id(rules))
    if fns is None or fns[0] is not rules or fns[1] != version:
        return Hand(rules, deck, dealer, month, version)  # the rule set's first hand: its functions, checked
    h = Hand.__new__(Hand)
    h._deal_cards(rules, fns, _itemgetter(*deck[:24])(_BIT_OF), tuple(deck[24:]), dealer, month, version)
    return h
