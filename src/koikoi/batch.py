"""Many hands at once: the engine's rules on NumPy arrays, for training throughput (``koikoi[rl]``).

:class:`BatchHands` holds ``n`` hands side by side, one row each, with card sets as 48-bit masks in
``uint64`` arrays, and moves all of them one decision at a time with array operations. It plays by the
same rules as :class:`koikoi.hand.Hand` for every :class:`~koikoi.rules.RuleSet` option, and gives the
same results: ``tests/test_batch.py`` replays the same deals and the same choices through the engine
and compares every hand's outcome, piles and number of decisions.

Every row moves with every array operation (lock-step): a hand that is over, or a row that does not
act in a call, is masked out of the writes instead of being gathered out and scattered back.

Ways to move the hands:

- ``step(actions)``: one engine action id per hand (ignored for hands that are over); an illegal
  action raises ``ValueError`` naming the hand, and changes nothing.
- ``step_random(u)``: each hand to move takes ``legal[int(u * len(legal))]``, where ``legal`` is the
  engine's ``legal_actions()`` order, for one number ``u`` in [0, 1) per hand (``stop_at_yaku=True``:
  a player always stops at a decision). :func:`reference_random` makes the same choices through the
  engine, one hand at a time, so the two can be compared.
- ``play_random(rng)`` / ``play_turns(us)``: every hand to its end with random legal actions, a whole
  turn (the card played, the draw and its choice, the koi-koi decision) per array pass; with ``us``
  the choices are exactly those of ``step_random(us[:, t])`` at call ``t``.
- ``apply(actions, rows)``: actions known to be legal (from ``legal_mask()`` or ``random_actions(u)``),
  only in the rows where ``rows`` holds, unchecked; ``deal(rows, decks, dealers, months)`` deals new
  hands in some rows, for playing hand after hand in the same rows (``koikoi.vector`` plays whole
  matches so).

>>> import numpy as np
>>> from koikoi.rules import preset
>>> rng = np.random.default_rng(7)
>>> b = BatchHands(preset("nintendo"), random_decks(rng, 1000))
>>> b.play_random(rng)
>>> bool(b.over.all()), int((b.reason == REASONS.index("stop")).sum()) > 500
(True, True)
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

try:
    import numpy as np
except ImportError as e:  # the optional extra is not installed: say how to get it
    raise ImportError("koikoi.batch needs NumPy: pip install 'koikoi[rl]'") from e

from .actions import DECLARE, DRAW_TAKE_BASE, KOIKOI, NUM_ACTIONS, PLAY_TAKE_BASE, STOP
from .cardbits import (
    BIT,
    BIT_OR_NONE,
    FULL,
    MONTH_MASK,
    MONTH_OF,
    MONTH_OR_NONE,
    ONE,
    ZERO,
    bits_of,
    fours_pairs,
    has_three,
    kth_bit,
    low_index,
    months_present,
    popcount,
    two_card_months,
    u64,
)
from .cards import (
    ANIMALS,
    BLUE_RIBBONS,
    BRIGHTS,
    CHAFF,
    CURTAIN,
    INO_SHIKA_CHO,
    MOON,
    NUM_CARDS,
    POETRY_RIBBONS,
    RAIN_MAN,
    RIBBONS,
    SAKE_CUP,
    WILLOW,
)
from .rules import RuleSet
from .yaku import Raiser, raiser, total_tells

__all__ = ["BatchHands", "REASONS", "PHASES", "random_decks", "reference_random"]

REASONS = ("", "stop", "exhausted", "hand_bonus", "redeal")
PHASES = ("play", "draw_choice", "decision", "over")
_PLAY, _DRAW_CHOICE, _DECISION, _OVER = range(4)
_NONE, _STOP_R, _EXHAUSTED_R, _BONUS_R, _REDEAL_R = range(5)

_K_BRIGHTS, _K_ANIMALS, _K_RIBBONS, _K_CHAFF = u64(BRIGHTS), u64(ANIMALS), u64(RIBBONS), u64(CHAFF | SAKE_CUP)
_K_ISC, _K_AKA, _K_AO = u64(INO_SHIKA_CHO), u64(POETRY_RIBBONS), u64(BLUE_RIBBONS)
_K_SAKE, _K_MOON_CURTAIN = u64(SAKE_CUP), u64(MOON | CURTAIN)


def _gate_tables() -> tuple[np.ndarray, np.unsignedinteger[Any]]:
    """Eight one-byte counters of a pile, summed from one look-up per byte of it: brights, animals,
    ribbons, chaff (with the sake cup), the ino-shika-cho, akatan and aotan cards, and 3 x sake cup +
    moon + curtain. Each starts at 128 - its threshold (added once, in byte 0's table), so its top
    bit is set exactly when the pile reaches a yaku of that family (the sake pair: at 4, the cup with
    the moon or the curtain). No counter passes 255, so they never carry into each other."""
    families = [(BRIGHTS, 3), (ANIMALS, 5), (RIBBONS, 5), (CHAFF | SAKE_CUP, 10)]
    families += [(INO_SHIKA_CHO, 3), (POETRY_RIBBONS, 3), (BLUE_RIBBONS, 3)]
    weight = [sum(1 << 8 * f for f, (mask, _) in enumerate(families) if mask >> c & 1) for c in range(NUM_CARDS)]
    for c in range(NUM_CARDS):
        weight[c] += (3 * (SAKE_CUP >> c & 1) + ((MOON | CURTAIN) >> c & 1)) << 56
    bias = sum((128 - t) << 8 * f for f, (_, t) in enumerate(families)) + ((128 - 4) << 56)
    tables = np.array(
        [[sum(weight[8 * j + i] for i in range(8) if b >> i & 1) for b in range(256)] for j in range(6)],
        dtype=np.uint64,
    )
    tables[0] += u64(bias)
    return tables, u64(sum(0x80 << 8 * f for f in range(8)))


_GATE, _GATE_TOPS = _gate_tables()
# Byte j of a pile (cards 8j..8j+7) in its in-memory bytes.
_BYTE_COL = [j if sys.byteorder == "little" else 7 - j for j in range(8)]

# 4-4: four cards to the non-dealer, four to the dealer, four to the table, twice; 2-2 the same in twos.
_DEALS = {
    "4-4": ([0, 1, 2, 3, 12, 13, 14, 15], [4, 5, 6, 7, 16, 17, 18, 19], [8, 9, 10, 11, 20, 21, 22, 23]),
    "2-2": ([0, 1, 6, 7, 12, 13, 18, 19], [2, 3, 8, 9, 14, 15, 20, 21], [4, 5, 10, 11, 16, 17, 22, 23]),
}


def _check_decks(decks: Any) -> tuple[np.ndarray, np.ndarray]:
    """The decks as int64 card ids, shape (n, 48), and their cards as bits; a ValueError names the first
    deck that does not hold each card once."""
    decks = np.asarray(decks, dtype=np.int64)
    if decks.ndim != 2 or decks.shape[1] != NUM_CARDS:
        raise ValueError(f"decks must be an array of shape (n, 48), not {decks.shape}")
    inside = (
        ((decks >= 0) & (decks < NUM_CARDS)).all(axis=1)
        if decks.size and (decks.min() < 0 or decks.max() >= NUM_CARDS)
        else np.ones(len(decks), dtype=bool)
    )
    bits = BIT.take(decks, mode="clip")
    # 48 powers of two add up to the full deck only if they are the 48 different cards (no carries).
    good = inside & (bits.sum(axis=1, dtype=np.uint64) == FULL)
    if not good.all():
        raise ValueError(f"deck {int(np.argmin(good))} does not hold each of the 48 card ids exactly once")
    return decks, bits


_CARD_IDS = np.arange(NUM_CARDS, dtype=np.uint64)
_SIX, _ID_BITS = u64(6), u64(63)


def random_decks(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` shuffled decks, one per row (card ids, top card first).

    Each deck is its 48 cards sorted by random 58-bit keys, the card id in the low 6 bits of its key:
    one sort of raw generator output, about four times faster than ``Generator.permuted`` (which took
    a third of a random batch's time at 4,096 hands). The id makes the keys distinct, so equal random
    parts (under 1e-14 a deck) are ordered by id: every deck is still as good as uniform."""
    keys = rng.bit_generator.random_raw((n, NUM_CARDS))
    keys >>= _SIX
    keys <<= _SIX
    keys |= _CARD_IDS
    keys.sort(axis=1)
    keys &= _ID_BITS
    return keys.view(np.int64)


class Scorer:
    """The yaku total of many piles at once: :func:`koikoi.yaku.score` on arrays."""

    def __init__(self, rules: RuleSet) -> None:
        self.r = rules
        r = rules
        # [2 * brights + rain man held]: goko, ame-shiko or shiko, sanko (never with the rain man).
        self._brights = np.array([0] * 6 + [r.sanko, 0, r.shiko, r.ame_shiko, r.goko, r.goko], dtype=np.int64)
        # The other count yaku as look-ups too, one per family, each a function of a few small
        # numbers: [animals + 11 * ino-shika-cho held] (tane, ino-shika-cho), [ribbons + 11 * akatan
        # held + 22 * aotan held] (akatan-aotan, akatan, aotan, tanzaku), [chaff] (kasu). One gather
        # each instead of a comparison, a np.where and an addition per yaku.
        self._animals = np.array([self._animal_pts(n, isc) for isc in (False, True) for n in range(11)], dtype=np.int64)
        self._ribbons = np.array(
            [self._ribbon_pts(n, aka, ao) for ao in (False, True) for aka in (False, True) for n in range(11)],
            dtype=np.int64,
        )
        self._chaff = np.array([r.kasu + n - 10 if r.kasu and n >= 10 else 0 for n in range(26)], dtype=np.int64)

    def _animal_pts(self, n: int, isc: bool) -> int:
        r = self.r
        pts = r.tane + n - 5 if r.tane and n >= 5 else 0
        if r.ino_shika_cho and isc:
            pts += r.ino_shika_cho + (n - 3 if r.ino_shika_cho_plus else 0)
        return pts

    def _ribbon_pts(self, n: int, aka: bool, ao: bool) -> int:
        r = self.r
        pts = r.tanzaku + n - 5 if r.tanzaku and n >= 5 else 0
        if r.akatan_aotan and aka and ao:
            pts += r.akatan_aotan + (n - 6 if r.akatan_plus or r.aotan_plus else 0)
            if not r.akatan_aotan_adds:  # else the pair's points come on top of each set's
                aka = ao = False
        # Both +1 options and both sets held: only the ribbons outside both sets are extras, for akatan.
        shared = aka and ao and r.akatan_plus and r.aotan_plus
        if r.akatan and aka:
            pts += r.akatan + ((n - 6 if shared else n - 3) if r.akatan_plus else 0)
        if r.aotan and ao:
            pts += r.aotan + ((0 if shared else n - 3) if r.aotan_plus else 0)
        return pts

    def __call__(self, pile: np.ndarray, month: np.ndarray) -> np.ndarray:
        # Most piles in play score nothing: only those that reach some yaku's threshold are scored in full.
        out = np.zeros(len(pile), dtype=np.int64)
        idx = np.flatnonzero(self.maybe(pile, month))
        if len(idx):
            out[idx] = self.full(pile[idx], month[idx])
        return out

    def maybe(self, pile: np.ndarray, month: np.ndarray) -> np.ndarray:
        """False where ``pile`` scores nothing: no yaku family at its threshold (a pile that grows only
        gets here once). The counts come from one look-up per byte of the pile (see _GATE)."""
        by = np.ascontiguousarray(pile).view(np.uint8).reshape(-1, 8)
        g = _GATE[0].take(by[:, _BYTE_COL[0]])
        for j in range(1, 6):
            g += _GATE[j].take(by[:, _BYTE_COL[j]])
        maybe: np.ndarray = (g & _GATE_TOPS) != ZERO
        if self.r.tsukifuda:
            m = MONTH_MASK[month - 1]
            maybe |= (pile & m) == m
        return maybe

    def full(self, pile: np.ndarray, month: np.ndarray) -> np.ndarray:
        """The totals of piles that may score (``maybe``); any pile, but slower than the call."""
        mode = self.r.sake_cup
        has_sake = (pile & u64(SAKE_CUP)) != 0
        if mode == "both":
            return self._collect(pile, month, True, True)
        as_animal = self._collect(pile, month, True, False)
        if mode == "animal_only":
            both = self._collect(pile, month, True, True)
            return np.where(has_sake, as_animal, both)
        as_chaff = self._collect(pile, month, False, True)
        both = self._collect(pile, month, True, True)
        return np.where(has_sake, np.maximum(as_animal, as_chaff), both)

    def _collect(self, pile: np.ndarray, month: np.ndarray, sake_animal: bool, sake_chaff: bool) -> np.ndarray:
        r = self.r
        rain = (pile & u64(RAIN_MAN)) != 0
        # The bright yaku by (number of brights, rain man among them): one table look-up.
        bright_pts = self._brights[2 * np.bitwise_count(pile & _K_BRIGHTS) + rain]
        bc = np.bitwise_count
        animals = bc(pile & u64(ANIMALS if sake_animal else ANIMALS & ~SAKE_CUP))
        isc = (pile & _K_ISC) == _K_ISC
        total: np.ndarray = bright_pts + self._animals[animals + 11 * isc]  # a new array: bright_pts is kept
        aka = (pile & _K_AKA) == _K_AKA
        ao = (pile & _K_AO) == _K_AO
        total += self._ribbons[bc(pile & _K_RIBBONS) + 11 * aka + 22 * ao]
        total += self._chaff[bc(pile & u64(CHAFF | SAKE_CUP if sake_chaff else CHAFF))]
        # tsukifuda is a special yaku: it does not carry the bonus-only sake yaku
        normal = total.copy() if r.sake_yaku == "bonus_only" else total
        if r.tsukifuda:
            m = MONTH_MASK[month - 1]
            total += np.where((pile & m) == m, r.tsukifuda, 0)
        if (r.tsukimi_zake or r.hanami_zake) and r.sake_yaku != "off":
            pair = ((pile & u64(SAKE_CUP)) != 0) & ((pile & u64(MOON | CURTAIN)) != 0)
            sake = r.sake_yaku
            if sake == "rain_ruins":
                pair &= (pile & u64(WILLOW)) == 0
            elif sake == "rainman_ruins":
                pair &= ~rain
            elif sake == "bonus_only":
                pair &= normal > 0
            extra = np.zeros(len(pile), dtype=np.int64)
            if r.tsukimi_zake:
                extra += np.where(pair & ((pile & u64(MOON)) != 0), r.tsukimi_zake, 0)
            if r.hanami_zake:
                extra += np.where(pair & ((pile & u64(CURTAIN)) != 0), r.hanami_zake, 0)
            if sake == "not_with_brights":  # the better of the two; a tie keeps the bright yaku
                wins = extra > bright_pts
                total -= np.where(wins, bright_pts, 0)
                extra = np.where(wins, extra, 0)
            total += extra
        return total


class BatchHands:
    """``n`` hands played side by side. Row ``i`` starts from ``decks[i]``, ``dealers[i]``, ``months[i]``.

    Every row moves with every array operation (lock-step): rows whose hand is over, or that do not act
    in a call, are masked out of the writes rather than gathered out and scattered back, which keeps
    the arrays whole and the operations few. Per-player arrays (``hands``, ``piles``, ``koikoi_calls``,
    ...) are ``(n, 2)``: row, then seat.
    """

    def __init__(self, rules: RuleSet, decks: Any, dealers: Any = 0, months: Any = 1) -> None:
        decks, bits = _check_decks(decks)
        self._setup(rules, len(decks))
        self._deal(slice(None), decks, bits, dealers, months)

    @classmethod
    def blank(cls, rules: RuleSet, n: int, engine: tuple[Any, Any, bool] | None = None) -> BatchHands:
        """``n`` rows in the state before a deal (no cards anywhere), for a caller that writes a
        position of its own into them (``koikoi.ai.batchplay``). ``engine``: the rule set's scorer,
        raiser and total-tells flag, when the caller keeps them (they cost a little to build)."""
        b = cls.__new__(cls)
        b._setup(rules, n, engine)
        return b

    def _setup(self, rules: RuleSet, n: int, engine: tuple[Any, Any, bool] | None = None) -> None:
        self.rules = rules
        self.n = n
        if engine is None:
            engine = (Scorer(rules), raiser(rules), total_tells(rules))
        self._score: Scorer = engine[0]
        self._raised: Raiser = engine[1]
        self._total_tells: bool = engine[2]
        self._ar = np.arange(n)
        self._ar24 = self._ar * 24
        # Per-seat state is kept seat-major, (2, n), so one seat's row of values is contiguous; the
        # public (n, 2) views below are transposes of it.
        self._hands = np.zeros((2, n), dtype=np.uint64)
        self._piles = np.zeros((2, n), dtype=np.uint64)
        self._pts = np.zeros((2, n), dtype=np.int64)  # each pile's yaku total now (kept up to date)
        self._calls = np.zeros((2, n), dtype=np.int64)
        self._decision_score = np.zeros((2, n), dtype=np.int64)
        self._turn_score = np.zeros((2, n), dtype=np.int64)
        self._declarable = np.zeros((2, n), dtype=bool)
        self._deltas = np.zeros((2, n), dtype=np.int64)
        self.dealer = np.zeros(n, dtype=np.int64)
        self.month = np.ones(n, dtype=np.int64)
        self.table = np.zeros(n, dtype=np.uint64)
        self.stock = np.zeros((n, 24), dtype=np.int64)
        self.stock_pos = np.zeros(n, dtype=np.int64)
        self.current_player = np.zeros(n, dtype=np.int64)
        self.phase = np.zeros(n, dtype=np.int64)
        self.pending = np.full(n, -1, dtype=np.int64)
        self.turn_pile = np.zeros(n, dtype=np.uint64)  # the mover's pile before the turn (for a draw choice)
        self._turn_before = np.zeros(n, dtype=np.int64)  # its yaku total
        self.last_koikoi = np.full(n, -1, dtype=np.int64)
        self.table_brights = np.ones(n, dtype=np.int64)
        self.decisions = np.zeros(n, dtype=np.int64)  # actions taken in each hand
        # How each hand ended: reason (an index into REASONS), winner (-1: none), points, deltas, base,
        # multiplier, and whether the dealer keeps the deal whoever won (oya-ken).
        self.reason = np.zeros(n, dtype=np.int64)
        self.winner = np.full(n, -1, dtype=np.int64)
        self.points = np.zeros(n, dtype=np.int64)
        self.base = np.zeros(n, dtype=np.int64)
        self.multiplier = np.ones(n, dtype=np.int64)
        self.keep_dealer = np.zeros(n, dtype=bool)

    # -- per-seat views -------------------------------------------------------------------------------------

    hands = property(lambda self: self._hands.T, doc="(n, 2) hand masks by seat.")
    piles = property(lambda self: self._piles.T, doc="(n, 2) capture piles by seat.")
    yaku_points = property(lambda self: self._pts.T, doc="(n, 2) each pile's yaku total now, before multipliers.")
    koikoi_calls = property(lambda self: self._calls.T, doc="(n, 2) koi-koi calls this hand by seat.")
    decision_score = property(lambda self: self._decision_score.T, doc="(n, 2) the total at each seat's last call.")
    turn_score = property(lambda self: self._turn_score.T, doc="(n, 2) the total that offered the last decision.")
    declarable = property(lambda self: self._declarable.T, doc="(n, 2) a dealt hand bonus that may be declared.")
    deltas = property(lambda self: self._deltas.T, doc="(n, 2) the score changes of a hand that is over.")

    # -- the fast interface ---------------------------------------------------------------------------------
    # For the callers that build positions into a batch or read it at every step (koikoi.ai.batchplay,
    # koikoi.vector): the per-seat state as the batch keeps it, seat-major (2, n), one seat's row of values
    # contiguous. These are the arrays themselves, not copies: a write changes the batch, unchecked, so a
    # caller writes only a position the rules can reach (docs/architecture.md, "Where the rules live").

    seat_hands = property(lambda self: self._hands, doc="(2, n) hand masks, seat-major: the array itself.")
    seat_piles = property(lambda self: self._piles, doc="(2, n) capture piles, seat-major: the array itself.")
    seat_points = property(lambda self: self._pts, doc="(2, n) each pile's yaku total now: the array itself.")
    seat_calls = property(lambda self: self._calls, doc="(2, n) koi-koi calls this hand: the array itself.")
    seat_decision_score = property(
        lambda self: self._decision_score, doc="(2, n) the total at each seat's last call: the array itself."
    )
    seat_turn_score = property(
        lambda self: self._turn_score, doc="(2, n) the total that offered the last decision: the array itself."
    )
    seat_declarable = property(
        lambda self: self._declarable, doc="(2, n) a dealt hand bonus that may be declared: the array itself."
    )
    seat_deltas = property(lambda self: self._deltas, doc="(2, n) a finished hand's score changes: the array itself.")
    turn_before = property(
        lambda self: self._turn_before, doc="(n,) the yaku total of ``turn_pile`` (the mover's pile before the turn)."
    )
    scorer = property(lambda self: self._score, doc="The rule set's yaku total of piles in months, row by row.")

    def bonus_points(self, hands: np.ndarray) -> np.ndarray:
        """The teshi/kuttsuki points of each of ``hands`` (masks; 0: none), as ``koikoi.hand.hand_bonus_of``."""
        return self._bonus_points(hands)

    def deal_unchecked(self, rows: np.ndarray, decks: np.ndarray, dealers: Any, months: Any) -> None:
        """:meth:`deal` for decks the caller made itself (:func:`random_decks`: every card once in each),
        without the decks' check."""
        self._deal(rows, decks, BIT[decks], dealers, months)

    def decide(self, rows: np.ndarray, actions: np.ndarray) -> None:
        """Koi-koi or stop (``actions[k]``, KOIKOI or STOP) in each row ``rows[k]`` (indices), all at a
        decision: :meth:`apply`'s step for decisions alone, unchecked."""
        self._decide(rows, actions)

    # -- the deal -------------------------------------------------------------------------------------------

    def deal(self, rows: Any, decks: Any, dealers: Any = 0, months: Any = 1) -> None:
        """Deal new hands in the rows ``rows`` (the other rows are left as they are): for playing one
        hand after another in the same rows, as a match does."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        decks, bits = _check_decks(decks)
        if len(decks) != len(rows):
            raise ValueError(f"deal takes one deck per row: {len(rows)} rows, {len(decks)} decks")
        if len(rows) and (rows.min() < 0 or rows.max() >= self.n):
            raise ValueError(f"rows must be 0..{self.n - 1}")
        self._deal(rows, decks, bits, dealers, months)

    def _deal(self, rows: Any, decks: np.ndarray, bits: np.ndarray, dealers: Any, months: Any) -> None:
        """Deal ``decks`` (checked, with their ``bits``) in ``rows``: an index array or ``slice(None)``."""
        k = len(decks)
        dealer = np.broadcast_to(np.asarray(dealers, dtype=np.int64), (k,))
        month = np.broadcast_to(np.asarray(months, dtype=np.int64), (k,))
        if not ((dealer == 0) | (dealer == 1)).all():
            raise ValueError("dealers must be 0 or 1")
        if ((month < 1) | (month > 12)).any():
            raise ValueError("months must be 1..12")
        non_dealer, dealer_cards, table_cards = (
            np.bitwise_or.reduce(bits[:, idx], axis=1) for idx in _DEALS[self.rules.deal_pattern]
        )
        d1 = dealer == 1
        self._hands[0, rows] = np.where(d1, non_dealer, dealer_cards)
        self._hands[1, rows] = np.where(d1, dealer_cards, non_dealer)
        self.dealer[rows] = dealer
        self.month[rows] = month
        self.table[rows] = table_cards
        self.stock[rows] = decks[:, 24:]
        self.current_player[rows] = dealer
        self.table_brights[rows] = np.maximum(1, popcount(table_cards & u64(BRIGHTS)))
        if not isinstance(rows, slice):  # a new batch starts from this state already
            for a in (self._piles, self._pts, self._calls, self._decision_score, self._turn_score, self._deltas):
                a[:, rows] = 0
            self._declarable[:, rows] = False
            self.stock_pos[rows] = 0
            self.phase[rows] = _PLAY
            self.pending[rows] = -1
            self.turn_pile[rows] = 0
            self._turn_before[rows] = 0
            self.last_koikoi[rows] = -1
            self.decisions[rows] = 0
            self.reason[rows] = _NONE
            self.winner[rows] = -1
            self.points[rows] = 0
            self.base[rows] = 0
            self.multiplier[rows] = 1
            self.keep_dealer[rows] = False
        self._check_deal(rows)

    def _bonus_points(self, hand: np.ndarray) -> np.ndarray:
        """The teshi/kuttsuki points of each dealt hand (0: none), as ``koikoi.hand.hand_bonus_of``."""
        r = self.rules
        if not r.hand_bonus:
            return np.zeros(len(hand), dtype=np.int64)
        fours, pairs = fours_pairs(hand)
        narrow = months_present(hand) <= 5
        pts = np.where(fours > 0, r.hand_bonus, np.where(pairs == 4, r.hand_bonus, 0))
        if r.hand_bonus_two_months:
            pts = np.where(fours >= 2, r.hand_bonus_two_months, pts)
        return np.where(narrow, pts, 0).astype(np.int64)

    def _check_deal(self, rows: Any) -> None:
        r = self.rules
        if isinstance(rows, slice):
            rows = self._ar
        table = self.table[rows]
        # A redeal or a hand bonus needs eight cards within five months; most deals span more (as the
        # engine's Hand._check_deal), and this settles them at once.
        narrow = months_present(table) <= 5
        if r.redeal_on_table_three:  # three of a month fit in a table of up to six months
            narrow |= has_three(table)
        if r.hand_bonus or r.redeal_on_hand_four or r.redeal_on_hand_pairs:
            narrow = narrow | (months_present(self._hands[0, rows]) <= 5) | (months_present(self._hands[1, rows]) <= 5)
        if not narrow.any():
            return
        rows = rows[narrow]
        table = table[narrow]
        fours, pairs = fours_pairs(table)
        narrow = months_present(table) <= 5
        redeal = narrow & ((r.redeal_on_table_four & (fours > 0)) | (r.redeal_on_table_pairs & (pairs == 4)))
        if r.redeal_on_table_three:
            redeal |= has_three(table)
        bonus = np.stack([self._bonus_points(self._hands[0, rows]), self._bonus_points(self._hands[1, rows])])
        if r.redeal_on_both_hand_bonus:
            redeal |= (bonus[0] > 0) & (bonus[1] > 0)
        if r.redeal_on_hand_four or r.redeal_on_hand_pairs:  # either dealt hand: thrown in, no bonus paid
            for seat in (0, 1):
                hand = self._hands[seat, rows]
                h_fours, h_pairs = fours_pairs(hand)
                close = months_present(hand) <= 5
                redeal |= close & ((r.redeal_on_hand_four & (h_fours > 0)) | (r.redeal_on_hand_pairs & (h_pairs == 4)))
        self._end(rows[redeal], _REDEAL_R)
        live = ~redeal
        if r.hand_bonus_declared:
            self._declarable[:, rows] = (bonus > 0) & live
            return
        d = self.dealer[rows]
        k = np.arange(len(rows))
        first = live & (bonus[d, k] > 0)
        self._award(rows[first], d[first], bonus[d, k][first])
        second = live & ~first & (bonus[1 - d, k] > 0)
        self._award(rows[second], 1 - d[second], bonus[1 - d, k][second])

    def _award(self, idx: np.ndarray, player: np.ndarray, pts: np.ndarray) -> None:
        if not len(idx):
            return
        self._end(idx, _BONUS_R)
        self.winner[idx] = player
        self.points[idx] = pts
        self.base[idx] = pts
        self._deltas[player, idx] = pts
        if self.rules.transfer:
            self._deltas[1 - player, idx] = -pts

    def _end(self, idx: np.ndarray, reason: int) -> None:
        """The hands ``idx`` are over for ``reason``: nobody won (yet) and nothing changes hands."""
        self.reason[idx] = reason
        self.winner[idx] = -1
        self.points[idx] = 0
        self.base[idx] = 0
        self.multiplier[idx] = 1
        self._deltas[:, idx] = 0
        self.phase[idx] = _OVER
        self.pending[idx] = -1

    # -- queries --------------------------------------------------------------------------------------------

    @property
    def over(self) -> np.ndarray:
        out: np.ndarray = self.phase == _OVER
        return out

    def _mover(self, a: np.ndarray, p1: np.ndarray) -> np.ndarray:
        """The mover's entry of a per-seat (2, n) array."""
        out: np.ndarray = np.where(p1, a[1], a[0])
        return out

    def _set_mover(self, a: np.ndarray, p1: np.ndarray, rows: np.ndarray, value: Any) -> None:
        """Write ``value`` to the mover's entry of ``a`` in the rows where ``rows`` holds."""
        np.copyto(a[0], value, where=rows & ~p1)
        np.copyto(a[1], value, where=rows & p1)

    def _may_koikoi(self, hand: np.ndarray, p1: np.ndarray) -> np.ndarray:
        ok: np.ndarray = hand != 0
        if self.rules.koikoi_limit:
            calls = self._calls.sum(axis=0) if self.rules.koikoi_limit_scope == "hand" else self._mover(self._calls, p1)
            ok &= calls < self.rules.koikoi_limit
        return ok

    def _under_limit(self, p: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Whether player ``p`` of each of ``rows`` may call koi-koi once more under ``koikoi_limit`` (set):
        their own calls, or under ``koikoi_limit_scope = hand`` both players' calls, below the limit."""
        if self.rules.koikoi_limit_scope == "hand":
            out: np.ndarray = self._calls[0, rows] + self._calls[1, rows] < self.rules.koikoi_limit
            return out
        out = self._calls[p, rows] < self.rules.koikoi_limit
        return out

    def _can_declare(self, hand: np.ndarray, p1: np.ndarray) -> np.ndarray:
        if not self.rules.hand_bonus_declared:
            return np.zeros(self.n, dtype=bool)
        out: np.ndarray = (self.phase == _PLAY) & self._mover(self._declarable, p1) & (popcount(hand) == 8)
        return out

    def _legal_parts(self) -> tuple[np.ndarray, ...]:
        """For every row: the number of legal actions, the plain and the choice cards, their counts, and
        whether koi-koi may be called."""
        p1 = self.current_player == 1
        hand = self._mover(self._hands, p1)
        two = two_card_months(self.table)
        plain, choice = hand & ~two, hand & two
        n_plain, n_choice = popcount(plain), popcount(choice)
        decl = self._can_declare(hand, p1)
        may = self._may_koikoi(hand, p1)
        phase = self.phase
        count = np.where(
            phase == _PLAY,
            n_plain + 2 * n_choice + decl,
            np.where(phase == _DRAW_CHOICE, 2, np.where(phase == _DECISION, 1 + may, 0)),
        )
        return count, plain, choice, n_plain, n_choice, may

    def legal_counts(self) -> np.ndarray:
        """How many legal actions each hand's player has (0 for hands that are over)."""
        return self._legal_parts()[0]

    def legal_mask(self) -> np.ndarray:
        """A (n, 291) boolean array: which actions each hand's player may take now."""
        n = self.n
        p1 = self.current_player == 1
        hand = self._mover(self._hands, p1)
        phase = self.phase
        play, dc, dec = phase == _PLAY, phase == _DRAW_CHOICE, phase == _DECISION
        two = two_card_months(self.table)
        zero = u64(0)
        pend = np.where(dc, self.pending, 0)
        draw_takes = np.where(dc, self.table & MONTH_OF[pend], zero)
        bits = bits_of(np.stack([np.where(play, hand & ~two, zero), draw_takes], axis=1))
        mask = np.zeros((n, NUM_ACTIONS), dtype=bool)
        mask[:, :NUM_CARDS] = bits[:, 0]
        mask[:, DRAW_TAKE_BASE : DRAW_TAKE_BASE + NUM_CARDS] = bits[:, 1]
        # Play-and-take, 48 + 4*card + r = 48 + 16*month + 4*j + r for card 4*month + j: the card is a
        # choice card and table card 4*month + r is there. Only some rows hold a choice card.
        choice = np.where(play, hand & two, zero)
        ci = np.flatnonzero(choice)
        if len(ci):
            k = len(ci)
            cb = bits_of(np.stack([choice[ci], self.table[ci]], axis=1))
            takes = cb[:, 0].reshape(k, 12, 4, 1) & cb[:, 1].reshape(k, 12, 1, 4)
            mask[ci, PLAY_TAKE_BASE:DRAW_TAKE_BASE] = takes.reshape(k, 4 * NUM_CARDS)
        mask[:, DECLARE] = self._can_declare(hand, p1)
        mask[:, STOP] = dec
        mask[:, KOIKOI] = dec & self._may_koikoi(hand, p1)
        return mask

    # -- moves ----------------------------------------------------------------------------------------------

    def step(self, actions: Sequence[int] | np.ndarray) -> None:
        """One action per hand (engine action ids); hands that are over ignore theirs."""
        a = np.asarray(actions, dtype=np.int64)
        if a.shape != (self.n,):
            raise ValueError(f"step takes one action per hand: shape ({self.n},), not {a.shape}")
        live = ~self.over
        self._check_legal(a, live)
        self._apply(a, live)

    def _check_legal(self, a: np.ndarray, rows: np.ndarray, mask: np.ndarray | None = None) -> None:
        """Raise (naming the first bad row) unless ``a`` is legal in every row where ``rows`` holds."""
        if mask is None:
            mask = self.legal_mask()
        inside = (a >= 0) & (a < NUM_ACTIONS)
        ok = inside & mask[self._ar, np.where(inside, a, 0)]
        bad = rows & ~ok
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(
                f"hand {i}: action {int(a[i])} is not legal now (phase {PHASES[self.phase[i]]}); nothing was changed"
            )

    def random_actions(self, u: np.ndarray, stop_at_yaku: bool = False) -> np.ndarray:
        """The action ``legal[int(u * len(legal))]`` of every hand, ``legal`` in the engine's
        ``legal_actions()`` order (-1 for hands that are over); ``stop_at_yaku``: always stop at a
        decision instead."""
        u = np.asarray(u, dtype=np.float64)
        phase = self.phase
        p1 = self.current_player == 1
        hand = self._mover(self._hands, p1)
        table = self.table
        two = two_card_months(table)
        plain, choice = hand & ~two, hand & two
        n_plain, n_choice = popcount(plain), popcount(choice)
        count = n_plain + 2 * n_choice
        if self.rules.hand_bonus_declared:
            count += self._can_declare(hand, p1)
        play = phase == _PLAY
        # The engine lists the plain plays (cards ascending), then two play-and-take actions per card
        # whose month lies twice on the table (lower table card first), then DECLARE. Plain plays are
        # the common case (every row computes them); the rest only in their own rows.
        k = (u * count).astype(np.int64)
        is_plain = k < n_plain
        plain_k = play & is_plain
        out = np.where(play, kth_bit(np.where(plain_k, plain, u64(0)), np.where(plain_k, k, 0)), -1)
        ti = np.flatnonzero(play & ~is_plain)
        if len(ti):
            j = k[ti] - n_plain[ti]
            c = np.minimum(kth_bit(choice[ti], j >> 1), NUM_CARDS - 1)
            matches = table[ti] & MONTH_OF[c]
            low = matches & (~matches + ONE)
            t = low_index(np.where(j & 1 == 0, low, matches ^ low))
            out[ti] = np.where(j < 2 * n_choice[ti], PLAY_TAKE_BASE + 4 * c + (t & 3), DECLARE)
        di = np.flatnonzero(phase == _DRAW_CHOICE)
        if len(di):
            matches = table[di] & MONTH_OF[self.pending[di]]
            low = matches & (~matches + ONE)
            out[di] = DRAW_TAKE_BASE + low_index(np.where(u[di] < 0.5, low, matches ^ low))
        ei = np.flatnonzero(phase == _DECISION)
        if len(ei):
            if stop_at_yaku:
                out[ei] = STOP
            else:
                may = hand[ei] != u64(0)
                if self.rules.koikoi_limit:
                    may &= self._under_limit(self.current_player[ei], ei)
                out[ei] = np.where(may & ((u[ei] * (1 + may)).astype(np.int64) == 0), KOIKOI, STOP)
        return out

    def step_random(self, u: np.ndarray, stop_at_yaku: bool = False) -> np.ndarray:
        """Every hand to move takes ``legal[int(u * len(legal))]`` in the engine's order (``stop_at_yaku``:
        it always stops at a decision); returns the actions (-1 for hands that are over)."""
        a = self.random_actions(u, stop_at_yaku)
        self._apply(a, a >= 0)
        return a

    def play_random(self, rng: np.random.Generator, max_steps: int = 200, stop_at_yaku: bool = False) -> None:
        """Play every hand to its end with uniformly random legal actions (``stop_at_yaku``: a player
        always stops as soon as it may), a whole turn per array pass (as :meth:`play_turns`, with
        fresh numbers from ``rng`` for each choice)."""
        self._play_turns(lambda rows: rng.random(self.n if rows is None else len(rows)), stop_at_yaku, max_steps)

    def play_turns(self, us: np.ndarray, stop_at_yaku: bool = False, max_steps: int = 200) -> None:
        """Play every hand to its end, hand ``i``'s ``t``-th decision taking ``legal[int(us[i, t] *
        len(legal))]``: the choices :meth:`step_random` makes with ``us[:, t]`` at its ``t``-th call (and
        :func:`reference_random` with ``us``). Each array pass plays a whole turn of every hand (the
        card played, the draw and its capture choice, the koi-koi decision), so it takes about 16
        passes where :meth:`step_random` takes one per decision of the longest hand."""
        us = np.ascontiguousarray(us, dtype=np.float64)
        if us.ndim != 2 or len(us) != self.n or us.shape[1] < 1:
            raise ValueError(f"us must have shape ({self.n}, decisions), not {us.shape}")
        flat, base, last = us.ravel(), self._ar * us.shape[1], us.shape[1] - 1

        def draw(rows: np.ndarray | None) -> np.ndarray:
            if rows is None:
                out: np.ndarray = flat[base + np.minimum(self.decisions, last)]
                return out
            out = flat[base[rows] + np.minimum(self.decisions[rows], last)]
            return out

        self._play_turns(draw, stop_at_yaku, max_steps)

    def play_policy(self, policy: Any, max_steps: int = 200) -> None:
        """Play every hand to its end by ``policy``, a whole turn per array pass (as :meth:`play_turns`):
        ``policy.card(hand, plain, choice, n_plain, n_choice, table, pile, other_pile, other_hand, play)``
        gives each row's index into the engine's legal plays (as :meth:`random_actions` orders them: the
        plain cards ascending, then two captures per choice card, lower table card first), for the
        mover's ``hand`` and its ``plain`` and ``choice`` cards (masks, with their counts), the ``table``,
        the mover's ``pile``, the other player's pile and hand (a fair policy reads only the hand's size:
        the mover cannot see it), and ``play``, the rows in play (the others' indices are not read);
        ``policy.low(low, high)`` says where a drawn card that matches two table cards takes the lower
        one (``low``, ``high``: one-card masks). A player under a policy declares a dealt hand bonus as
        soon as it may, and stops at a decision (koi-koi is never called) unless the policy has a
        ``koikoi(rows, points, cards_left, calls)`` method: then, at each decision that a turn's play
        raises (a decision pending when play starts still stops), it calls koi-koi in the rows where that
        gives True and the rules allow a call, from the row indices, the mover's yaku points, the cards
        left in their hand and the koi-koi calls they made before. Search playouts use it
        (``koikoi.ai.batchplay``)."""
        self._play_turns(None, True, max_steps, policy)

    def _policy_u(self, policy: Any) -> np.ndarray:
        """The numbers that make :meth:`random_actions` take ``policy``'s draw choices (a decision
        stops, with ``stop_at_yaku``); for the hands left mid-turn when play starts."""
        u = np.zeros(self.n)
        di = np.flatnonzero(self.phase == _DRAW_CHOICE)
        if len(di):
            m = self.table[di] & MONTH_OF[self.pending[di]]
            low = m & (~m + ONE)
            u[di] = np.where(policy.low(low, m ^ low), 0.0, 0.75)
        return u

    def _play_turns(self, draw: Any, stop_at_yaku: bool, max_steps: int, policy: Any = None) -> None:
        """``draw(rows)``: the number behind the next decision of each row of ``rows`` (None: all);
        or, with ``policy`` (see :meth:`play_policy`), its choices instead."""
        steps = 0
        # Hands stopped mid-turn (by step calls before this one) finish the turn a step at a time.
        while True:
            mid = (self.phase == _DRAW_CHOICE) | (self.phase == _DECISION)
            if not mid.any():
                break
            steps += 1
            if steps > max_steps:
                raise RuntimeError("hands did not end")  # pragma: no cover - a hand has at most 16 turns
            u = draw(None) if policy is None else self._policy_u(policy)
            self._apply(self.random_actions(u, stop_at_yaku), mid)
        # From here every hand in play passes the turn at every pass, so the per-seat state is held
        # relative to the player to move at the first pass: entry j is seat ``cur0 ^ j``, and at pass t
        # the mover's entry is j = t & 1 for every row. That spares choosing each row's seat (and
        # writing both seats back) at every pass; the seats are put back once at the end.
        cur0 = self.current_player.copy()
        flip = cur0 == 1
        rel = [np.where(flip, a[::-1], a) for a in (self._hands, self._piles, self._pts)]
        # Hands that end are over at once but settled together at the end (nothing they hold changes
        # any more): one settling for all of them instead of one per pass.
        stopped: list[np.ndarray] = []
        exhausted: list[np.ndarray] = []
        # The months with two cards on the table, kept from pass to pass: after the deal no month gets
        # to two again (a card joins the table only where its month has none), so a month only leaves
        # the set, when a card of it is played or drawn.
        two = two_card_months(self.table)
        # Each row's next stock card, as a flat index into the stock (a hand draws at most 16 of 24).
        at = self._ar24 + self.stock_pos
        for t in range(max_steps - steps + 1):
            if not self._random_turn(draw, stop_at_yaku, t & 1, cur0, rel, two, at, stopped, exhausted, policy):
                break
        else:
            raise RuntimeError("hands did not end")  # pragma: no cover - a hand has at most 16 turns
        for a, r in zip((self._hands, self._piles, self._pts), rel):
            np.copyto(a, np.where(flip, r[::-1], r))
        if exhausted:
            self._settle_exhausted(np.concatenate(exhausted))
        if stopped:
            i = np.concatenate(stopped)
            self._settle_stop(i, self.winner[i], _STOP_R)

    def _random_turn(
        self,
        draw: Any,
        stop: bool,
        mi: int,
        cur0: np.ndarray,
        rel: list[np.ndarray],
        two: np.ndarray,
        at: np.ndarray,
        stopped: list[np.ndarray],
        exhausted: list[np.ndarray],
        policy: Any = None,
    ) -> bool:
        """One whole turn of every hand in play, its choices from ``draw`` (or ``policy``, see
        :meth:`play_policy`); False if none was. ``mi``:
        the mover's entry in the relative arrays ``rel`` (hands, piles, yaku totals; see _play_turns),
        whose seat is ``cur0 ^ mi``. ``two``: the months with two table cards, ``at``: the flat index of
        each row's next stock card (both updated here). Hands that end are listed in ``stopped`` or
        ``exhausted``, to be settled by the caller."""
        phase = self.phase
        play = phase == _PLAY
        if not play.any():
            return False
        zero = u64(0)
        hands, piles, pts = rel
        hand, pile = hands[mi], piles[mi]
        table = self.table
        # The card played, as random_actions: plain plays for every row, the rest in their own rows.
        plain, choice = hand & ~two, hand & two
        n_plain, n_choice = np.bitwise_count(plain), np.bitwise_count(choice)  # uint8: counts up to 8
        count = n_plain + 2 * n_choice
        if policy is None:
            if self.rules.hand_bonus_declared:
                count = count + self._can_declare(hand, (cur0 ^ mi) == 1)
            k = (draw(None) * count).astype(np.int64)
        else:
            k = policy.card(hand, plain, choice, n_plain, n_choice, table, pile, piles[1 - mi], hands[1 - mi], play)
            if self.rules.hand_bonus_declared:  # declared at once (DECLARE is the last legal action)
                can = self._can_declare(hand, (cur0 ^ mi) == 1)
                count = count + can
                k = np.where(can, count - 1, k)
        is_plain = play & (k < n_plain)
        # 64 (no card) in the rows that play no plain card: BIT_OR_NONE and MONTH_OR_NONE give them 0.
        c = kth_bit(np.where(is_plain, plain, zero), np.where(is_plain, k, 0))
        ti = np.flatnonzero(play & ~is_plain)
        self.decisions += play
        if len(ti):
            j = k[ti] - n_plain[ti]
            c[ti] = np.minimum(kth_bit(choice[ti], j >> 1), NUM_CARDS - 1)
            declared = j >= 2 * n_choice[ti]
            if declared.any():
                di = ti[declared]
                dp = cur0[di] ^ mi
                self._award(di, dp, self._bonus_points(hand[di]))
                self.current_player[di] = dp
                play[di] = False
                c[di] = 64
        cbit = BIT_OR_NONE[c]
        cmonth = MONTH_OR_NONE[c]
        take = table & cmonth  # the table cards of the card's month: all of them are taken, or
        has = take != zero
        if len(ti):  # for a choice card, one of the two: the lower for an even j
            m = take[ti]
            low = m & (~m + ONE)
            take[ti] = np.where(j & 1 == 0, low, m ^ low)
        # A card that matches takes (one, or all three) off the table; one that does not joins it.
        t1 = table ^ np.where(has, take, cbit)
        captured = np.where(has, take | cbit, zero)
        # The card drawn; none (64) in the rows not in play, so that they change nowhere.
        d = np.where(play, self.stock.ravel()[at], 64)
        at += play
        self.stock_pos += play
        dbit = BIT_OR_NONE[d]
        dmonth = MONTH_OR_NONE[d]
        dm = t1 & dmonth
        ndm = np.bitwise_count(dm)
        has_d = (ndm & 1) == 1  # one or three table cards of the drawn card's month: all are taken
        t2 = t1 ^ np.where(has_d, dm, np.where(ndm == 2, zero, dbit))
        two &= ~(cmonth | dmonth)
        gain = captured | np.where(has_d, dm | dbit, zero)
        ci = np.flatnonzero(ndm == 2)
        if len(ci):  # the drawn card's capture choice, its own decision
            m = dm[ci]
            low = m & (~m + ONE)
            tb = np.where(draw(ci) < 0.5 if policy is None else policy.low(low, m ^ low), low, m ^ low)
            self.decisions[ci] += 1
            t2[ci] ^= tb
            gain[ci] |= tb | dbit[ci]
        self.table = t2
        hand ^= cbit
        pile |= gain
        # The yaku after the turn; a new or larger one asks for koi-koi or stop. Only piles that grew
        # and may score are scored: one that may not scores 0 now and scored 0 before (it only grew).
        month = self.month
        gi = np.flatnonzero((gain != zero) & self._score.maybe(pile, month))
        mover_pts = pts[mi]
        before = mover_pts[gi]
        after = self._score.full(pile[gi], month[gi]) if len(gi) else before
        mover_pts[gi] = after
        up = after > before
        if not self._total_tells:
            for j in np.flatnonzero(~up & (after > 0)):
                i = gi[j]
                up[j] = self._raised(int(pile[i] & ~gain[i]), int(pile[i]), int(self.month[i]))
        nxt = play
        if up.any():
            ui, s = gi[up], after[up]
            up_p = cur0[ui] ^ mi
            self._turn_score[up_p, ui] = s
            u2 = None if policy is not None else draw(ui)
            self.decisions[ui] += 1
            call = getattr(policy, "koikoi", None)  # a policy that decides koi-koi itself
            if stop and call is None:
                koikoi = np.zeros(len(ui), dtype=bool)
            else:
                may = hand[ui] != zero
                if self.rules.koikoi_limit:
                    may &= self._under_limit(up_p, ui)
                if call is not None:
                    koikoi = may & call(ui, s, np.bitwise_count(hand[ui]).astype(np.int64), self._calls[up_p, ui])
                else:
                    koikoi = may & ((u2 * (1 + may)).astype(np.int64) == 0)
            si = ui[~koikoi]
            self.phase[si] = _OVER  # settled by _play_turns at the end
            self.winner[si] = self.current_player[si] = up_p[~koikoi]
            stopped.append(si)
            nxt[si] = False
            ki, kp = ui[koikoi], up_p[koikoi]
            self._calls[kp, ki] += 1
            self.last_koikoi[ki] = kp
            self._decision_score[kp, ki] = s[koikoi]
        # Both hands are played out (8 cards each, one a turn) after the 16th turn, the 16th card drawn.
        ex = nxt & (self.stock_pos == 16)
        if ex.any():
            e = np.flatnonzero(ex)
            self.phase[e] = _OVER  # settled by _play_turns at the end
            self.current_player[e] = cur0[e] ^ mi
            exhausted.append(e)
        return True

    # The row state: arrays by row, and per-seat arrays (2, n) by seat then row.
    _ROW_STATE = (
        "dealer month table stock stock_pos current_player phase pending turn_pile _turn_before last_koikoi "
        "table_brights decisions reason winner points base multiplier keep_dealer"
    ).split()
    _SEAT_STATE = "_hands _piles _pts _calls _decision_score _turn_score _declarable _deltas".split()

    def _rows(self, idx: np.ndarray) -> BatchHands:
        """A batch of its own holding a copy of the rows ``idx``."""
        sub = BatchHands.blank(self.rules, len(idx), (self._score, self._raised, self._total_tells))
        for name in self._ROW_STATE:
            setattr(sub, name, getattr(self, name)[idx])
        for name in self._SEAT_STATE:
            setattr(sub, name, getattr(self, name)[:, idx])
        return sub

    def _put(self, idx: np.ndarray, sub: BatchHands) -> None:
        """Write ``sub``'s rows back to the rows ``idx``."""
        for name in self._ROW_STATE:
            getattr(self, name)[idx] = getattr(sub, name)
        for name in self._SEAT_STATE:
            getattr(self, name)[:, idx] = getattr(sub, name)

    def apply(self, actions: np.ndarray, rows: np.ndarray) -> None:
        """Apply ``actions[i]`` in every row where ``rows[i]`` (booleans) holds, unchecked: the caller
        knows them to be legal (from :meth:`legal_mask` or :meth:`random_actions`). The other rows
        stay as they are."""
        a, rows = np.asarray(actions, dtype=np.int64), np.asarray(rows, dtype=bool)
        idx = np.flatnonzero(rows)
        if len(idx) * 8 < self.n:
            # A few rows (an opponent's last moves in koikoi.vector): lock-step over the whole width
            # would cost far more than moving them into a batch of their own and back.
            sub = self._rows(idx)
            sub._apply(a[idx], np.ones(len(idx), dtype=bool))
            self._put(idx, sub)
        else:
            self._apply(a, rows)

    def _apply(self, a: np.ndarray, act: np.ndarray) -> None:
        """Apply legal actions ``a`` in the rows where ``act`` holds (all of them live)."""
        self.decisions += act
        phase = self.phase
        play = act & (phase == _PLAY)
        if self.rules.hand_bonus_declared:
            decl = play & (a == DECLARE)
            if decl.any():
                i = np.flatnonzero(decl)
                p = self.current_player[i]
                self._award(i, p, self._bonus_points(self._hands[p, i]))
                play &= ~decl
        # A draw choice or a koi-koi/stop decision is rare at any one step: only in its own rows.
        ri = np.flatnonzero(act & (phase != _PLAY))
        if len(ri):
            ph = phase[ri]
            dc, dec = ri[ph == _DRAW_CHOICE], ri[ph == _DECISION]
            if len(dc):
                self._draw_choice(dc, a[dc])
            if len(dec):
                self._decide(dec, a[dec])
        if play.any():
            self._play(play, a)

    def _play(self, play: np.ndarray, a: np.ndarray) -> None:
        """A card played from the hand and one drawn from the stock, in the rows where ``play`` holds;
        every row computes it, only those rows keep it."""
        zero = u64(0)
        cur = self.current_player
        p1 = cur == 1
        h, pl = self._hands, self._piles
        pile = np.where(p1, pl[1], pl[0])
        table = self.table
        ap = np.where(play, a, 0)
        is_take = ap >= PLAY_TAKE_BASE
        c = np.where(is_take, (ap - PLAY_TAKE_BASE) >> 2, ap)
        cbit = BIT[c]
        matches = table & MONTH_OF[c]
        take = np.where(is_take, BIT[(c & ~3) | ((ap - PLAY_TAKE_BASE) & 3)], matches)
        has = matches != zero
        # A card that matches takes (one, or all three) off the table; one that does not joins it.
        t1 = table ^ np.where(has, take, cbit)
        captured = np.where(has, take | cbit, zero)
        d = self.stock.ravel()[self._ar24 + np.minimum(self.stock_pos, 23)]
        dbit = BIT[d]
        dm = t1 & MONTH_OF[d]
        ndm = popcount(dm)
        has_d = (ndm & 1) == 1  # one or three table cards of the drawn card's month: all are taken
        choose = play & (ndm == 2)  # two: the player chooses, in a step of its own
        t2 = t1 ^ np.where(has_d, dm, np.where(ndm == 2, zero, dbit))
        gain = np.where(play, captured | np.where(has_d, dm | dbit, zero), zero)
        self.table = np.where(play, t2, table)
        cb = np.where(play, cbit, zero)
        h[0] ^= np.where(p1, zero, cb)
        h[1] ^= np.where(p1, cb, zero)
        pl[0] |= np.where(p1, zero, gain)
        pl[1] |= np.where(p1, gain, zero)
        self.stock_pos += play
        # The yaku of each pile that grew.
        gi = np.flatnonzero(gain)
        gp = cur[gi]
        before = self._pts[gp, gi]
        after = self._score(pile[gi] | gain[gi], self.month[gi]) if len(gi) else before
        ci = np.flatnonzero(choose)
        if len(ci):
            self.pending[ci] = d[ci]
            self.turn_pile[ci] = pile[ci]
            self._turn_before[ci] = self._pts[cur[ci], ci]
            self.phase[ci] = _DRAW_CHOICE
        self._pts[gp, gi] = after
        # A turn that raised the yaku offers koi-koi or stop; the others pass the turn (or end the hand).
        done = ~choose[gi]
        up = done & (after > before)
        if not self._total_tells:
            # A total that did not grow may still hold a new or larger yaku (the engine's slow path).
            for j in np.flatnonzero(done & ~up & (after > 0)):
                i = gi[j]
                up[j] = self._raised(int(pile[i]), int(pile[i] | gain[i]), int(self.month[i]))
        ui, up_p = gi[up], gp[up]
        self._turn_score[up_p, ui] = after[up]
        self.phase[ui] = _DECISION
        nxt = play & ~choose
        nxt[ui] = False
        empty = (h[0] == zero) & (h[1] == zero)
        self.current_player = cur ^ (nxt & ~empty)
        ex = nxt & empty
        if ex.any():
            self._settle_exhausted(np.flatnonzero(ex))

    def _draw_choice(self, i: np.ndarray, a: np.ndarray) -> None:
        p = self.current_player[i]
        tbit = BIT[a - DRAW_TAKE_BASE]
        self.table[i] ^= tbit
        pile = self._piles[p, i] | tbit | BIT[self.pending[i]]
        self._piles[p, i] = pile
        self.pending[i] = -1
        self.phase[i] = _PLAY
        after = self._score(pile, self.month[i])
        self._pts[p, i] = after
        up = after > self._turn_before[i]
        if not self._total_tells:
            for j in np.flatnonzero(~up & (after > 0)):
                up[j] = self._raised(int(self.turn_pile[i[j]]), int(pile[j]), int(self.month[i[j]]))
        self._turn_score[p[up], i[up]] = after[up]
        self.phase[i[up]] = _DECISION
        self._next(i[~up], p[~up])

    def _decide(self, i: np.ndarray, a: np.ndarray) -> None:
        p = self.current_player[i]
        stop = a == STOP
        if stop.any():
            self._settle_stop(i[stop], p[stop], _STOP_R)
        k = ~stop
        if k.any():
            ki, kp = i[k], p[k]
            self._calls[kp, ki] += 1
            self.last_koikoi[ki] = kp
            self._decision_score[kp, ki] = self._turn_score[kp, ki]
            self.phase[ki] = _PLAY
            self._next(ki, kp)

    def _next(self, i: np.ndarray, p: np.ndarray) -> None:
        """The turn passes to the other player, or, with both hands empty, the hand is exhausted."""
        empty = (self._hands[0, i] == u64(0)) & (self._hands[1, i] == u64(0))
        self.current_player[i[~empty]] = 1 - p[~empty]
        if empty.any():
            self._settle_exhausted(i[empty])

    # -- settling -------------------------------------------------------------------------------------------

    def _multiplier(self, i: np.ndarray, p: np.ndarray, base: np.ndarray) -> np.ndarray:
        r = self.rules
        mult = np.where(r.seven_point_double & (base >= 7), 2, 1).astype(np.int64)
        km = r.koikoi_multiplier
        own, other = self._calls[p, i], self._calls[1 - p, i]
        if km == "additive":
            mult *= 1 + own
        elif km == "own_points_then_multiply":  # one to three calls add points instead (_stop_base)
            mult *= np.where(own >= 4, own - 2, 1)
        else:
            if km in ("opponent_double", "own_and_opponent_double"):
                mult *= np.where(other > 0, 2, 1)
            if km in ("own_double", "own_and_opponent_double"):
                mult *= np.where(own > 0, 2, 1)
        if r.bright_table_multiplier:
            mult *= self.table_brights[i]
        return mult

    def _stop_base(self, i: np.ndarray, p: np.ndarray, base: np.ndarray) -> np.ndarray:
        """As ``Hand.stop_base``: after one's own koi-koi, each sake yaku raised to sake_after_koikoi (only
        under sake_yaku = on, where a sake yaku is its two cards and its points), and a point a call for
        one to three calls under own_points_then_multiply; nothing without a yaku."""
        r = self.rules
        own = self._calls[p, i]
        live = (own > 0) & (base > 0)
        if r.sake_after_koikoi and r.sake_yaku == "on":
            pile = self._piles[p, i]
            for pair, pts in ((u64(SAKE_CUP | MOON), r.tsukimi_zake), (u64(SAKE_CUP | CURTAIN), r.hanami_zake)):
                if pts:
                    base = base + np.where(live & ((pile & pair) == pair), r.sake_after_koikoi - pts, 0)
        if r.koikoi_multiplier == "own_points_then_multiply":
            base = base + np.where(live & (own <= 3), own, 0)
        return base

    def _settle_stop(self, i: np.ndarray, p: np.ndarray, reason: int) -> None:
        base = self._pts[p, i]
        r = self.rules
        if (r.sake_after_koikoi and r.sake_yaku == "on") or r.koikoi_multiplier == "own_points_then_multiply":
            base = self._stop_base(i, p, base)
        mult = self._multiplier(i, p, base)
        pts = base * mult
        self.reason[i] = reason
        self.winner[i] = p
        self.points[i] = pts
        self.base[i] = base
        self.multiplier[i] = mult
        self._deltas[p, i] = pts
        self._deltas[1 - p, i] = -pts if self.rules.transfer else 0
        self.phase[i] = _OVER
        self.pending[i] = -1

    def _settle_exhausted(self, i: np.ndarray) -> None:
        r = self.rules
        mode, n = r.exhausted, r.exhausted_points
        if mode == "last_koikoi":
            called = self.last_koikoi[i] >= 0
            if called.any():
                self._settle_stop(i[called], self.last_koikoi[i[called]], _EXHAUSTED_R)
            i = i[~called]
        if mode == "dealer_bonus":  # oya-ken only when neither player made a yaku (seed 004)
            made = (self._calls[0, i] + self._calls[1, i]) > 0
            self._end(i[made], _EXHAUSTED_R)
            i = i[~made]
        if not len(i):
            return
        self._end(i, _EXHAUSTED_R)
        if mode in ("dealer_bonus", "last_koikoi") and n:
            d = self.dealer[i]
            self.winner[i] = d
            self.points[i] = n
            self.base[i] = n
            self.keep_dealer[i] = True
            self._deltas[d, i] = n
            if r.transfer:
                self._deltas[1 - d, i] = -n
        elif mode in ("first_player", "second_player") and n:
            gainer = self.dealer[i] if mode == "first_player" else 1 - self.dealer[i]
            self._deltas[:, i] = -n
            self._deltas[gainer, i] = n


def reference_random(rules: RuleSet, decks: Any, dealers: Any, months: Any, us: np.ndarray) -> dict[str, list[Any]]:
    """The engine's own play of the same hands with the same random choices: ``us[i, t]`` is the number
    behind hand ``i``'s ``t``-th decision. For checking :class:`BatchHands` (slow: one hand at a time)."""
    from .hand import Hand

    out: dict[str, list[Any]] = {
        k: [] for k in ("reason", "winner", "points", "deltas", "piles", "decisions", "base", "multiplier")
    }
    decks = np.asarray(decks)
    n = len(decks)
    dealers = np.broadcast_to(np.asarray(dealers), (n,))
    months = np.broadcast_to(np.asarray(months), (n,))
    for i in range(n):
        h = Hand(rules, [int(c) for c in decks[i]], int(dealers[i]), int(months[i]))
        t = 0
        while not h.is_over():
            legal = h.legal_actions()
            h.apply_action(legal[int(us[i, t] * len(legal))])
            t += 1
        res = h.result
        assert res is not None
        out["reason"].append(res.reason)
        out["winner"].append(-1 if res.winner is None else res.winner)
        out["points"].append(res.points)
        out["deltas"].append(list(res.deltas))
        out["piles"].append(list(h.piles))
        out["decisions"].append(t)
        out["base"].append(res.base)
        out["multiplier"].append(res.multiplier)
    return out
