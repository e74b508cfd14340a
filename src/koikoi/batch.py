"""Many hands at once: the engine's rules on NumPy arrays, for training throughput (``koikoi[rl]``).

:class:`BatchHands` holds ``n`` hands side by side, one row each, with card sets as 48-bit masks in
``uint64`` arrays, and moves all of them one decision at a time with array operations. It plays by the
same rules as :class:`koikoi.hand.Hand` for every :class:`~koikoi.rules.RuleSet` option, and gives the
same results: ``tests/test_batch.py`` replays the same deals and the same choices through the engine
and compares every hand's outcome, piles and number of decisions.

Two ways to move the hands:

- ``step(actions)``: one engine action id per hand (ignored for hands that are over); an illegal
  action raises ``ValueError`` naming the hand, and changes nothing.
- ``step_random(u)``: each hand to move takes ``legal[int(u * len(legal))]``, where ``legal`` is the
  engine's ``legal_actions()`` order, for one number ``u`` in [0, 1) per hand. :func:`reference_random`
  makes the same choices through the engine, one hand at a time, so the two can be compared.

>>> import numpy as np
>>> from koikoi.rules import preset
>>> rng = np.random.default_rng(7)
>>> b = BatchHands(preset("nintendo"), random_decks(rng, 1000))
>>> b.play_random(rng)
>>> bool(b.over.all()), int((b.reason == REASONS.index("stop")).sum()) > 500
(True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

try:
    import numpy as np
except ImportError as e:  # the optional extra is not installed: say how to get it
    raise ImportError("koikoi.batch needs NumPy: pip install 'koikoi[rl]'") from e

from .actions import DECLARE, DRAW_TAKE_BASE, KOIKOI, NUM_ACTIONS, PLAY_TAKE_BASE, STOP
from .cards import (
    ANIMALS,
    BLUE_RIBBONS,
    BRIGHTS,
    CHAFF,
    CURTAIN,
    INO_SHIKA_CHO,
    MONTH_MASKS,
    MOON,
    NUM_CARDS,
    POETRY_RIBBONS,
    RAIN_MAN,
    RIBBONS,
    SAKE_CUP,
    WILLOW,
)
from .rules import RuleSet
from .yaku import raiser, total_tells

__all__ = ["BatchHands", "REASONS", "PHASES", "random_decks", "reference_random"]

REASONS = ("", "stop", "exhausted", "hand_bonus", "redeal")
PHASES = ("play", "draw_choice", "decision", "over")
_PLAY, _DRAW_CHOICE, _DECISION, _OVER = range(4)
_NONE, _STOP_R, _EXHAUSTED_R, _BONUS_R, _REDEAL_R = range(5)

_U = np.uint64
_BIT = np.array([1 << c for c in range(NUM_CARDS)], dtype=np.uint64)
_MONTH_OF = np.array([MONTH_MASKS[c >> 2] for c in range(NUM_CARDS)], dtype=np.uint64)
_MONTH_MASK = np.array(MONTH_MASKS, dtype=np.uint64)
_SHIFTS = np.arange(NUM_CARDS, dtype=np.uint64)
_LOW = _U(sum(1 << (4 * m) for m in range(12)))
_PAIRS1 = _U(sum(1 << i for i in range(0, NUM_CARDS, 2)))
_PAIRS2 = _U(sum(3 << (4 * m) for m in range(12)))
_N2 = _U(sum(2 << (4 * m) for m in range(12)))
_ONE, _TWO, _THREE = _U(1), _U(2), _U(3)
_FIFTEEN = _U(15)

# 4-4: four cards to the non-dealer, four to the dealer, four to the table, twice; 2-2 the same in twos.
_DEALS = {
    "4-4": ([0, 1, 2, 3, 12, 13, 14, 15], [4, 5, 6, 7, 16, 17, 18, 19], [8, 9, 10, 11, 20, 21, 22, 23]),
    "2-2": ([0, 1, 6, 7, 12, 13, 18, 19], [2, 3, 8, 9, 14, 15, 20, 21], [4, 5, 10, 11, 16, 17, 22, 23]),
}


def _pc(x: np.ndarray) -> np.ndarray:
    return np.bitwise_count(x).astype(np.int64)


def _low_index(x: np.ndarray) -> np.ndarray:
    """The index of the lowest set bit of each (non-zero) mask."""
    low = x & (~x + _ONE)
    return _pc(low - _ONE)


def _kth_bit(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    """The index of the k-th (0-based) set bit of each mask (k is small: a hand holds at most 8 cards)."""
    x, k = x.copy(), k.copy()
    for _ in range(int(k.max()) if len(k) else 0):
        more = k > 0
        x[more] &= x[more] - _ONE  # drop the lowest set bit
        k -= more
    return _low_index(x)


def _month_counts(m: np.ndarray) -> np.ndarray:
    x = (m & _PAIRS1) + ((m >> _ONE) & _PAIRS1)
    return (x & _PAIRS2) + ((x >> _TWO) & _PAIRS2)


def _months_present(m: np.ndarray) -> np.ndarray:
    return _pc((m | m >> _ONE | m >> _TWO | m >> _THREE) & _LOW)


def _two_card_months(m: np.ndarray) -> np.ndarray:
    y = _month_counts(m) ^ _N2
    return (_LOW & ~(y | y >> _ONE | y >> _TWO)) * _FIFTEEN


def _fours_pairs(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return _pc((_month_counts(m) >> _TWO) & _LOW), _pc(_two_card_months(m)) >> 2


def random_decks(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` shuffled decks, one per row (card ids, top card first)."""
    return rng.permuted(np.tile(np.arange(NUM_CARDS, dtype=np.int64), (n, 1)), axis=1)


class _Scorer:
    """The yaku total of many piles at once: :func:`koikoi.yaku.score` on arrays."""

    def __init__(self, rules: RuleSet) -> None:
        self.r = rules

    def __call__(self, pile: np.ndarray, month: np.ndarray) -> np.ndarray:
        # Most piles in play score nothing: only those that reach some yaku's threshold are scored in full.
        r = self.r
        maybe = (
            (_pc(pile & _U(BRIGHTS)) >= 3)
            | (_pc(pile & _U(ANIMALS)) >= 5)
            | (_pc(pile & _U(RIBBONS)) >= 5)
            | (_pc(pile & _U(CHAFF | SAKE_CUP)) >= 10)
            | ((pile & _U(INO_SHIKA_CHO)) == _U(INO_SHIKA_CHO))
            | ((pile & _U(POETRY_RIBBONS)) == _U(POETRY_RIBBONS))
            | ((pile & _U(BLUE_RIBBONS)) == _U(BLUE_RIBBONS))
            | (((pile & _U(SAKE_CUP)) != 0) & ((pile & _U(MOON | CURTAIN)) != 0))
        )
        if r.tsukifuda:
            m = _MONTH_MASK[month - 1]
            maybe |= (pile & m) == m
        out = np.zeros(len(pile), dtype=np.int64)
        if maybe.any():
            out[maybe] = self._full(pile[maybe], month[maybe])
        return out

    def _full(self, pile: np.ndarray, month: np.ndarray) -> np.ndarray:
        mode = self.r.sake_cup
        has_sake = (pile & _U(SAKE_CUP)) != 0
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
        zero = np.zeros(len(pile), dtype=np.int64)
        brights = _pc(pile & _U(BRIGHTS))
        rain = (pile & _U(RAIN_MAN)) != 0
        bright_pts = np.where(
            brights == 5,
            r.goko,
            np.where(brights == 4, np.where(rain, r.ame_shiko, r.shiko), np.where((brights == 3) & ~rain, r.sanko, 0)),
        )
        total = bright_pts.astype(np.int64)
        bright_pts = total.copy()
        animals = _pc(pile & _U(ANIMALS if sake_animal else ANIMALS & ~SAKE_CUP))
        ribbons = _pc(pile & _U(RIBBONS))
        if r.ino_shika_cho:
            isc = (pile & _U(INO_SHIKA_CHO)) == _U(INO_SHIKA_CHO)
            total += np.where(isc, r.ino_shika_cho + (animals - 3 if r.ino_shika_cho_plus else 0), 0)
        aka = (pile & _U(POETRY_RIBBONS)) == _U(POETRY_RIBBONS)
        ao = (pile & _U(BLUE_RIBBONS)) == _U(BLUE_RIBBONS)
        if r.akatan_aotan:
            both = aka & ao
            total += np.where(both, r.akatan_aotan + (ribbons - 6 if r.akatan_plus or r.aotan_plus else 0), 0)
            aka, ao = aka & ~both, ao & ~both
        # Both +1 options and both sets held: only the ribbons outside both sets are extras, for akatan.
        shared = aka & ao if r.akatan_plus and r.aotan_plus else np.zeros(len(pile), dtype=bool)
        if r.akatan:
            total += np.where(aka, r.akatan + (np.where(shared, ribbons - 6, ribbons - 3) if r.akatan_plus else 0), 0)
        if r.aotan:
            total += np.where(ao, r.aotan + (np.where(shared, 0, ribbons - 3) if r.aotan_plus else 0), 0)
        if r.tane:
            total += np.where(animals >= 5, r.tane + animals - 5, 0)
        if r.tanzaku:
            total += np.where(ribbons >= 5, r.tanzaku + ribbons - 5, 0)
        if r.kasu:
            chaff = _pc(pile & _U(CHAFF | SAKE_CUP if sake_chaff else CHAFF))
            total += np.where(chaff >= 10, r.kasu + chaff - 10, 0)
        normal = total.copy()  # tsukifuda is a special yaku: it does not carry the bonus-only sake yaku
        if r.tsukifuda:
            m = _MONTH_MASK[month - 1]
            total += np.where((pile & m) == m, r.tsukifuda, 0)
        if (r.tsukimi_zake or r.hanami_zake) and r.sake_yaku != "off":
            pair = ((pile & _U(SAKE_CUP)) != 0) & ((pile & _U(MOON | CURTAIN)) != 0)
            sake = r.sake_yaku
            if sake == "rain_ruins":
                pair &= (pile & _U(WILLOW)) == 0
            elif sake == "rainman_ruins":
                pair &= ~rain
            elif sake == "bonus_only":
                pair &= normal > 0
            extra = zero.copy()
            if r.tsukimi_zake:
                extra += np.where(pair & ((pile & _U(MOON)) != 0), r.tsukimi_zake, 0)
            if r.hanami_zake:
                extra += np.where(pair & ((pile & _U(CURTAIN)) != 0), r.hanami_zake, 0)
            if sake == "not_with_brights":  # the better of the two; a tie keeps the bright yaku
                wins = extra > bright_pts
                total -= np.where(wins, bright_pts, 0)
                extra = np.where(wins, extra, 0)
            total += extra
        return total


class BatchHands:
    """``n`` hands played side by side. Row ``i`` starts from ``decks[i]``, ``dealers[i]``, ``months[i]``."""

    def __init__(self, rules: RuleSet, decks: Any, dealers: Any = 0, months: Any = 1) -> None:
        decks = np.asarray(decks, dtype=np.int64)
        if decks.ndim != 2 or decks.shape[1] != NUM_CARDS:
            raise ValueError(f"decks must be an array of shape (n, 48), not {decks.shape}")
        n = len(decks)
        if not (np.sort(decks, axis=1) == np.arange(NUM_CARDS)).all():
            bad = int(np.argmin((np.sort(decks, axis=1) == np.arange(NUM_CARDS)).all(axis=1)))
            raise ValueError(f"deck {bad} does not hold each of the 48 card ids exactly once")
        self.rules = rules
        self.n = n
        self.dealer = np.broadcast_to(np.asarray(dealers, dtype=np.int64), (n,)).copy()
        self.month = np.broadcast_to(np.asarray(months, dtype=np.int64), (n,)).copy()
        if not np.isin(self.dealer, (0, 1)).all():
            raise ValueError("dealers must be 0 or 1")
        if ((self.month < 1) | (self.month > 12)).any():
            raise ValueError("months must be 1..12")
        self._score = _Scorer(rules)
        self._raised = raiser(rules)
        self._total_tells = total_tells(rules)
        bits = _BIT[decks]
        non_dealer, dealer_cards, table_cards = (
            np.bitwise_or.reduce(bits[:, idx], axis=1) for idx in _DEALS[rules.deal_pattern]
        )
        self.hands = np.zeros((n, 2), dtype=np.uint64)
        rows = np.arange(n)
        self.hands[rows, self.dealer] = dealer_cards
        self.hands[rows, 1 - self.dealer] = non_dealer
        self.table = table_cards
        self.piles = np.zeros((n, 2), dtype=np.uint64)
        self.stock = decks[:, 24:].copy()
        self.stock_pos = np.zeros(n, dtype=np.int64)
        self.current_player = self.dealer.copy()
        self.phase = np.full(n, _PLAY, dtype=np.int64)
        self.pending = np.full(n, -1, dtype=np.int64)
        self.decision_score = np.zeros((n, 2), dtype=np.int64)
        self.turn_score = np.zeros((n, 2), dtype=np.int64)
        self.turn_pile = np.zeros(n, dtype=np.uint64)  # the mover's pile before the turn (for a draw choice)
        self.koikoi_calls = np.zeros((n, 2), dtype=np.int64)
        self.last_koikoi = np.full(n, -1, dtype=np.int64)
        self.declarable = np.zeros((n, 2), dtype=bool)
        self.table_brights = np.maximum(1, _pc(self.table & _U(BRIGHTS)))
        self.decisions = np.zeros(n, dtype=np.int64)  # actions taken in each hand
        # How each hand ended: reason (an index into REASONS), winner (-1: none), points, deltas, base, multiplier.
        self.reason = np.zeros(n, dtype=np.int64)
        self.winner = np.full(n, -1, dtype=np.int64)
        self.points = np.zeros(n, dtype=np.int64)
        self.deltas = np.zeros((n, 2), dtype=np.int64)
        self.base = np.zeros(n, dtype=np.int64)
        self.multiplier = np.ones(n, dtype=np.int64)
        self._check_deal()

    # -- the deal -------------------------------------------------------------------------------------------

    def _bonus_points(self, hand: np.ndarray) -> np.ndarray:
        """The teshi/kuttsuki points of each dealt hand (0: none), as ``koikoi.hand.hand_bonus_of``."""
        r = self.rules
        if not r.hand_bonus:
            return np.zeros(len(hand), dtype=np.int64)
        fours, pairs = _fours_pairs(hand)
        narrow = _months_present(hand) <= 5
        pts = np.where(fours > 0, r.hand_bonus, np.where(pairs == 4, r.hand_bonus, 0))
        if r.hand_bonus_two_months:
            pts = np.where(fours >= 2, r.hand_bonus_two_months, pts)
        return np.where(narrow, pts, 0).astype(np.int64)

    def _check_deal(self) -> None:
        r = self.rules
        fours, pairs = _fours_pairs(self.table)
        narrow = _months_present(self.table) <= 5
        redeal = narrow & ((r.redeal_on_table_four & (fours > 0)) | (r.redeal_on_table_pairs & (pairs == 4)))
        bonus = np.stack([self._bonus_points(self.hands[:, 0]), self._bonus_points(self.hands[:, 1])], axis=1)
        if r.redeal_on_both_hand_bonus:
            redeal |= (bonus[:, 0] > 0) & (bonus[:, 1] > 0)
        self._end(redeal, _REDEAL_R, -1, 0, 0, 0)
        live = ~redeal
        if r.hand_bonus_declared:
            self.declarable = (bonus > 0) & live[:, None]
            return
        rows = np.arange(self.n)
        d = self.dealer
        first = live & (bonus[rows, d] > 0)
        self._award(np.nonzero(first)[0], d[first], bonus[rows, d][first])
        second = live & ~first & (bonus[rows, 1 - d] > 0)
        self._award(np.nonzero(second)[0], 1 - d[second], bonus[rows, 1 - d][second])

    def _award(self, idx: np.ndarray, player: np.ndarray, pts: np.ndarray) -> None:
        if not len(idx):
            return
        self.reason[idx] = _BONUS_R
        self.winner[idx] = player
        self.points[idx] = pts
        self.base[idx] = pts
        self.multiplier[idx] = 1
        self.deltas[idx, player] = pts
        if self.rules.transfer:
            self.deltas[idx, 1 - player] = -pts
        self.phase[idx] = _OVER
        self.pending[idx] = -1

    def _end(self, mask: np.ndarray, reason: int, winner: Any, points: Any, d0: Any, d1: Any) -> None:
        idx = np.nonzero(mask)[0]
        self.reason[idx] = reason
        self.winner[idx] = winner
        self.points[idx] = points
        self.deltas[idx, 0] = d0
        self.deltas[idx, 1] = d1
        self.phase[idx] = _OVER
        self.pending[idx] = -1

    # -- queries --------------------------------------------------------------------------------------------

    @property
    def over(self) -> np.ndarray:
        return self.phase == _OVER

    def legal_counts(self) -> np.ndarray:
        """How many legal actions each hand's player has (0 for hands that are over)."""
        return self._legal_parts(np.arange(self.n))[0]

    def _legal_parts(self, rows: np.ndarray) -> tuple[np.ndarray, ...]:
        """For the hands ``rows``: the number of legal actions, the plain and the choice cards, their
        counts, and whether koi-koi may be called."""
        p = self.current_player[rows]
        hand = self.hands[rows, p]
        two = _two_card_months(self.table[rows])
        plain, choice = hand & ~two, hand & two
        n_plain, n_choice = _pc(plain), _pc(choice)
        decl = (self.declarable[rows, p] & (_pc(hand) == 8)).astype(np.int64)
        may = self._may_koikoi(rows, p)
        phase = self.phase[rows]
        count = np.select(
            [phase == _PLAY, phase == _DRAW_CHOICE, phase == _DECISION],
            [n_plain + 2 * n_choice + decl, 2, np.where(may, 2, 1)],
            0,
        )
        return count, plain, choice, n_plain, n_choice, may

    def _may_koikoi(self, rows: np.ndarray, p: np.ndarray) -> np.ndarray:
        limit = self.rules.koikoi_limit
        ok = self.hands[rows, p] != 0
        if limit:
            ok &= self.koikoi_calls[rows, p] < limit
        return ok

    def legal_mask(self) -> np.ndarray:
        """A (n, 291) boolean array: which actions each hand's player may take now."""
        n = self.n
        mask = np.zeros((n, NUM_ACTIONS), dtype=bool)
        rows = np.arange(n)
        p = self.current_player
        hand = self.hands[rows, p]
        two = _two_card_months(self.table)
        play = self.phase == _PLAY
        cards = ((hand[:, None] >> _SHIFTS) & _ONE).astype(bool) & play[:, None]
        plain = cards & ~(((two[:, None] >> _SHIFTS) & _ONE).astype(bool))
        mask[:, :NUM_CARDS] = plain
        # Play-and-take: a hand card of a month with two table cards, for each of those two.
        choice = cards & ~plain
        table_bits = ((self.table[:, None] >> _SHIFTS) & _ONE).astype(bool)
        for c in range(NUM_CARDS):
            has = choice[:, c]
            if has.any():
                base = c & ~3
                for r in range(4):
                    mask[:, PLAY_TAKE_BASE + 4 * c + r] = has & table_bits[:, base + r]
        mask[:, DECLARE] = play & self.declarable[rows, p] & (_pc(hand) == 8)
        dc = self.phase == _DRAW_CHOICE
        if dc.any():
            pend = np.where(dc, self.pending, 0)
            month_bits = table_bits & (np.arange(NUM_CARDS)[None, :] >> 2 == (pend >> 2)[:, None])
            mask[:, DRAW_TAKE_BASE : DRAW_TAKE_BASE + NUM_CARDS] = month_bits & dc[:, None]
        dec = self.phase == _DECISION
        mask[:, STOP] = dec
        mask[:, KOIKOI] = dec & self._may_koikoi(rows, p)
        return mask

    # -- moves ----------------------------------------------------------------------------------------------

    def step(self, actions: Sequence[int] | np.ndarray) -> None:
        """One action per hand (engine action ids); hands that are over ignore theirs."""
        a = np.asarray(actions, dtype=np.int64)
        if a.shape != (self.n,):
            raise ValueError(f"step takes one action per hand: shape ({self.n},), not {a.shape}")
        live = ~self.over
        ok = np.zeros(self.n, dtype=bool)
        inside = (a >= 0) & (a < NUM_ACTIONS)
        ok[inside] = self.legal_mask()[np.nonzero(inside)[0], a[inside]]
        bad = live & ~ok
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(
                f"hand {i}: action {int(a[i])} is not legal now (phase {PHASES[self.phase[i]]}); nothing was changed"
            )
        self._apply(np.nonzero(live)[0], a[live])

    def step_random(self, u: np.ndarray) -> np.ndarray:
        """Every hand to move takes ``legal[int(u * len(legal))]`` in the engine's order; returns the actions
        (-1 for hands that are over)."""
        u = np.asarray(u, dtype=np.float64)
        a = np.full(self.n, -1, dtype=np.int64)
        live = np.nonzero(self.phase != _OVER)[0]  # only the hands still going: most of the work is per hand
        if not len(live):
            return a
        count, plain, choice, n_plain, n_choice, may = self._legal_parts(live)
        k = np.floor(u[live] * count).astype(np.int64)
        phase = self.phase[live]
        table = self.table[live]
        out = np.full(len(live), -1, dtype=np.int64)
        play = phase == _PLAY
        # The engine lists the plain plays (cards ascending), then two play-and-take actions per card
        # whose month lies twice on the table (lower table card first), then DECLARE.
        is_plain = play & (k < n_plain)
        if is_plain.any():
            out[is_plain] = _kth_bit(plain[is_plain], k[is_plain])
        is_take = play & ~is_plain & (k < n_plain + 2 * n_choice)
        if is_take.any():
            j = k[is_take] - n_plain[is_take]
            c = _kth_bit(choice[is_take], j // 2)
            matches = table[is_take] & _MONTH_OF[c]
            low = _low_index(matches)
            high = _low_index(matches ^ _BIT[low])
            t = np.where(j % 2 == 0, low, high)
            out[is_take] = PLAY_TAKE_BASE + 4 * c + (t & 3)
        out[play & ~is_plain & ~is_take] = DECLARE
        dc = phase == _DRAW_CHOICE
        if dc.any():
            matches = table[dc] & _MONTH_OF[self.pending[live[dc]]]
            low = _low_index(matches)
            high = _low_index(matches ^ _BIT[low])
            out[dc] = DRAW_TAKE_BASE + np.where(k[dc] == 0, low, high)
        dec = phase == _DECISION
        out[dec] = np.where(may[dec] & (k[dec] == 0), KOIKOI, STOP)
        a[live] = out
        self._apply(live, out)
        return a

    def play_random(self, rng: np.random.Generator, max_steps: int = 200) -> None:
        """Play every hand to its end with uniformly random legal actions."""
        for _ in range(max_steps):
            if self.over.all():
                return
            self.step_random(rng.random(self.n))
        raise RuntimeError("hands did not end")  # pragma: no cover - a hand has at most ~60 decisions

    def _apply(self, idx: np.ndarray, a: np.ndarray) -> None:
        """Apply legal actions ``a`` to the hands ``idx`` (all of them live)."""
        self.decisions[idx] += 1
        phase = self.phase[idx]
        play = phase == _PLAY
        decl = play & (a == DECLARE)
        if decl.any():
            i = idx[decl]
            p = self.current_player[i]
            self._award(i, p, self._bonus_points(self.hands[i, p]))
        moves = play & ~decl
        if moves.any():
            self._play(idx[moves], a[moves])
        dc = phase == _DRAW_CHOICE
        if dc.any():
            self._draw_choice(idx[dc], a[dc])
        dec = phase == _DECISION
        if dec.any():
            self._decide(idx[dec], a[dec])

    def _play(self, i: np.ndarray, a: np.ndarray) -> None:
        p = self.current_player[i]
        plain = a < PLAY_TAKE_BASE
        c = np.where(plain, a, (a - PLAY_TAKE_BASE) // 4)
        cbit = _BIT[c]
        table = self.table[i]
        matches = table & _MONTH_OF[c]
        take = np.where(plain, matches, _BIT[(c & ~3) | ((a - PLAY_TAKE_BASE) & 3)])
        self.hands[i, p] ^= cbit
        has = matches != 0
        table = np.where(has, table ^ take, table | cbit)
        captured = np.where(has, take | cbit, _U(0))
        before = self.piles[i, p]
        pile = before | captured
        d = self.stock[i, self.stock_pos[i]]
        self.stock_pos[i] += 1
        dbit = _BIT[d]
        dm = table & _MONTH_OF[d]
        ndm = _pc(dm)
        choose = ndm == 2
        has_d = (ndm > 0) & ~choose
        table = np.where(has_d, table ^ dm, np.where(choose, table, table | dbit))
        drawn = np.where(has_d, dm | dbit, _U(0))
        pile |= drawn
        self.table[i] = table
        self.piles[i, p] = pile
        if choose.any():
            ci = i[choose]
            self.pending[ci] = d[choose]
            self.turn_pile[ci] = before[choose]
            self.phase[ci] = _DRAW_CHOICE
        rest = ~choose
        self._after_turn(i[rest], p[rest], ((captured | drawn) != 0)[rest], before[rest])

    def _draw_choice(self, i: np.ndarray, a: np.ndarray) -> None:
        p = self.current_player[i]
        t = a - DRAW_TAKE_BASE
        self.table[i] ^= _BIT[t]
        self.piles[i, p] |= _BIT[t] | _BIT[self.pending[i]]
        self.pending[i] = -1
        self.phase[i] = _PLAY
        self._after_turn(i, p, np.ones(len(i), dtype=bool), self.turn_pile[i])

    def _after_turn(self, i: np.ndarray, p: np.ndarray, changed: np.ndarray, before: np.ndarray) -> None:
        # The yaku are checked after both steps of a turn; a yaku new this turn, or one scoring more than
        # before the turn, offers koi-koi or stop (as the engine's yaku.raiser).
        rise = np.zeros(len(i), dtype=bool)
        if changed.any():
            ci, cp = i[changed], p[changed]
            after, month = self.piles[ci, cp], self.month[ci]
            s = self._score(after, month)
            up = s > self._score(before[changed], month)
            # A total that did not grow may still hold a new or larger yaku (the engine's slow path),
            # unless the rules are ones where that cannot happen (see yaku.total_tells).
            if not self._total_tells:
                for j in np.nonzero((s > 0) & ~up)[0]:
                    up[j] = self._raised(int(before[changed][j]), int(after[j]), int(month[j]))
            self.turn_score[ci[up], cp[up]] = s[up]
            self.phase[ci[up]] = _DECISION
            rise[np.nonzero(changed)[0][up]] = True
        self._next_player(i[~rise], p[~rise])

    def _next_player(self, i: np.ndarray, p: np.ndarray) -> None:
        empty = (self.hands[i, 0] == 0) & (self.hands[i, 1] == 0)
        go = i[~empty]
        self.current_player[go] = 1 - p[~empty]
        self.phase[go] = _PLAY
        if empty.any():
            self._settle_exhausted(i[empty])

    def _decide(self, i: np.ndarray, a: np.ndarray) -> None:
        p = self.current_player[i]
        stop = a == STOP
        if stop.any():
            self._settle_stop(i[stop], p[stop], _STOP_R)
        k = ~stop
        if k.any():
            ki, kp = i[k], p[k]
            self.koikoi_calls[ki, kp] += 1
            self.last_koikoi[ki] = kp
            self.decision_score[ki, kp] = self.turn_score[ki, kp]
            self._next_player(ki, kp)

    # -- settling -------------------------------------------------------------------------------------------

    def _multiplier(self, i: np.ndarray, p: np.ndarray, base: np.ndarray) -> np.ndarray:
        r = self.rules
        mult = np.where(r.seven_point_double & (base >= 7), 2, 1).astype(np.int64)
        km = r.koikoi_multiplier
        own, other = self.koikoi_calls[i, p], self.koikoi_calls[i, 1 - p]
        if km == "additive":
            mult *= 1 + own
        else:
            if km in ("opponent_double", "own_and_opponent_double"):
                mult *= np.where(other > 0, 2, 1)
            if km in ("own_double", "own_and_opponent_double"):
                mult *= np.where(own > 0, 2, 1)
        if r.bright_table_multiplier:
            mult *= self.table_brights[i]
        return mult

    def _settle_stop(self, i: np.ndarray, p: np.ndarray, reason: int) -> None:
        base = self._score(self.piles[i, p], self.month[i])
        mult = self._multiplier(i, p, base)
        pts = base * mult
        self.reason[i] = reason
        self.winner[i] = p
        self.points[i] = pts
        self.base[i] = base
        self.multiplier[i] = mult
        self.deltas[i, p] = pts
        self.deltas[i, 1 - p] = -pts if self.rules.transfer else 0
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
            made = (self.koikoi_calls[i, 0] + self.koikoi_calls[i, 1]) > 0
            if made.any():
                self._end(np.isin(np.arange(self.n), i[made]), _EXHAUSTED_R, -1, 0, 0, 0)
            i = i[~made]
        if not len(i):
            return
        if mode in ("dealer_bonus", "last_koikoi") and n:
            d = self.dealer[i]
            self._end(np.isin(np.arange(self.n), i), _EXHAUSTED_R, d, n, 0, 0)
            self.deltas[i, d] = n
            self.deltas[i, 1 - d] = -n if r.transfer else 0
            self.base[i] = n
            self.multiplier[i] = 1
            return
        mask = np.isin(np.arange(self.n), i)
        if mode in ("first_player", "second_player") and n:
            gainer = self.dealer[i] if mode == "first_player" else 1 - self.dealer[i]
            self._end(mask, _EXHAUSTED_R, -1, 0, -n, -n)
            self.deltas[i, gainer] = n
            return
        self._end(mask, _EXHAUSTED_R, -1, 0, 0, 0)


def reference_random(rules: RuleSet, decks: Any, dealers: Any, months: Any, us: np.ndarray) -> dict[str, list]:
    """The engine's own play of the same hands with the same random choices: ``us[i, t]`` is the number
    behind hand ``i``'s ``t``-th decision. For checking :class:`BatchHands` (slow: one hand at a time)."""
    from .hand import Hand

    out: dict[str, list] = {
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
