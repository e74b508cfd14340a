"""Playouts for the search, many worlds at once: the greedy policy on :class:`koikoi.batch.BatchHands`.

:mod:`koikoi.ai.fastplay` plays one world at a time in plain Python. Here every sampled world of a
search round, once for each choice still alive, is a row of one :class:`~koikoi.batch.BatchHands`,
built from the searcher's own view of the hand (:meth:`Hand.from_observation` and the sampled hidden
cards), and all rows are played to the end together, a turn per array pass, by the engine's rules on
arrays (``tests/test_batch.py`` checks those against the engine).

The policy is the greedy one of :mod:`koikoi.ai.fastplay`: a player captures the most valuable cards,
sheds its least valuable card when nothing matches, takes the better table card for a drawn card that
matches two, declares a dealt hand bonus and stops as soon as a yaku lets it. Its noise is drawn once
per world and card (``noise[w, c]``), not per choice: a world's player keeps its whims for the whole
hand, and every choice is measured with the same whims (common random numbers).

:class:`YakuPolicy` (the search's ``policy="yaku"``) plays like ``medium`` instead: a capture is worth
the yaku progress it makes for the mover and what it keeps from the other player, a discard costs by
the chance the other player takes it, from what the mover can see. It is the better player (about
+0.17 points a hand against the greedy policy, both stopping at their first yaku) but costs about five
times as much, and did not make the search stronger even at equal playouts (docs/ai.md), so the search
plays greedy by default.

NumPy is needed (``pip install numpy``, in the ``koikoi[rl]`` extra); without it the search plays
one world at a time (:mod:`koikoi.ai.fastplay`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..batch import BatchHands, _Scorer
from ..cards import NUM_CARDS
from ..hand import Hand
from ..players import card_value
from ..rules import RuleSet
from ..yaku import raiser, total_tells
from .fastplay import card_gain

__all__ = ["GreedyPolicy", "YakuPolicy", "PlayValues", "worlds", "play_worlds", "sample_hidden"]

_VAL = [card_value(c) for c in range(NUM_CARDS)]
_NONE = 64  # the index _low_index gives an empty mask: "no card" (a hand holds fewer than 8)
_WIDTH = _NONE + 1


def _play_table(played: list[float], taken: list[float], shed: list[float] | None) -> np.ndarray:
    out = np.full(_WIDTH * 16, -1e9)
    for c in range(NUM_CARDS):
        base = c & ~3
        for nib in range(16):
            table = [base + j for j in range(4) if nib >> j & 1]
            if not table:
                v = -0.5 * _VAL[c] - 1.0 if shed is None else shed[c]
            elif len(table) == 2:
                v = played[c] + max(taken[t] for t in table)
            else:
                v = played[c] + sum(taken[t] for t in table)
            out[c * 16 + nib] = v
    return out


class PlayValues:
    """What the greedy policy's choices are worth, as tables. ``play``: playing card c by its month's table
    nibble, flat as ``[c * 16 + nibble]``: a capture is worth the card played and the cards it takes (of
    two table cards, the better one: a choice card takes one), a card that takes nothing costs; "no card"
    rows are never chosen. ``card``: a table card's worth to whoever takes it (which of two a drawn card
    takes). ``high_better``: for a choice card, 1 where the higher of its month's two table cards is the
    better take (the engine lists the lower one's capture first), flat as ``[month * 16 + nibble]``.

    By default the card values of :mod:`koikoi.ai.fastplay`, as the search plays; other tables of 48
    values each may replace them: ``played`` for the card played when it captures, ``taken`` for each
    table card taken, ``shed`` for a card that takes nothing (``benchmarks/imitation.py`` fits them to
    a level's choices)."""

    def __init__(
        self, played: list[float] | None = None, taken: list[float] | None = None, shed: list[float] | None = None
    ) -> None:
        for name, values in (("played", played), ("taken", taken), ("shed", shed)):
            if values is not None and len(values) != NUM_CARDS:
                raise ValueError(f"{name} needs a value for each of the {NUM_CARDS} cards, not {len(values)}")
            if values is not None and not all(math.isfinite(v) for v in values):
                raise ValueError(f"{name} holds a value that is not a finite number")
        take = _VAL if taken is None else [float(v) for v in taken]
        self.play = _play_table(_VAL if played is None else [float(v) for v in played], take, shed)
        self.card = np.array(take + [0.0] * (_WIDTH - NUM_CARDS))
        self.high_better = np.zeros(12 * 16, dtype=np.int64)
        for m in range(12):
            for nib in range(16):
                t = [4 * m + j for j in range(4) if nib >> j & 1]
                if len(t) == 2 and take[t[1]] > take[t[0]]:
                    self.high_better[m * 16 + nib] = 1


_GREEDY = PlayValues()
_PLAY_VALUE = _GREEDY.play
_CARD_VALUE = _GREEDY.card
_HIGH_BETTER = _GREEDY.high_better
_SHIFT = np.array([c & ~3 for c in range(NUM_CARDS)] + [0] * (_WIDTH - NUM_CARDS), dtype=np.uint64)
_ONE = np.uint64(1)
_FIFTEEN = np.uint64(15)


def _low_index(x: np.ndarray) -> np.ndarray:
    low = x & (~x + _ONE)
    return np.bitwise_count(low - _ONE).astype(np.int64)


def _hand_cards(hand: np.ndarray) -> np.ndarray:
    """Each row's hand as card indices, ascending, shape ``(rows, 8)``: 64 ("no card") after the last."""
    cards = np.empty((len(hand), 8), dtype=np.int64)
    m = hand.copy()
    for i in range(8):
        low = m & (~m + _ONE)
        cards[:, i] = np.bitwise_count(low - _ONE)
        m ^= low
    return cards


class GreedyPolicy:
    """The greedy playout policy for :meth:`BatchHands.play_policy`, with ``noise`` of shape
    ``(worlds, 48)``: row ``r`` of the batch plays world ``r % worlds``; ``values``: what its choices are
    worth (:class:`PlayValues`; by default the card values of :mod:`koikoi.ai.fastplay`)."""

    def __init__(self, noise: np.ndarray, rows: int, values: PlayValues | None = None) -> None:
        self.values = _GREEDY if values is None else values
        w = len(noise)
        padded = np.zeros((w, _WIDTH))
        padded[:, :NUM_CARDS] = noise
        self.noise = padded.ravel()
        self.base = ((np.arange(rows) % w) * _WIDTH)[:, None]

    def card(
        self,
        hand: np.ndarray,
        plain: np.ndarray,
        choice: np.ndarray,
        n_plain: np.ndarray,
        n_choice: np.ndarray,
        table: np.ndarray,
        pile: np.ndarray,
        other_pile: np.ndarray,
        other_hand: np.ndarray,
        play: np.ndarray,
    ) -> np.ndarray:
        n = len(hand)
        cards = _hand_cards(hand)
        nib = (table[:, None] >> _SHIFT[cards]) & _FIFTEEN
        v = self.values.play[cards * 16 + nib.astype(np.int64)] + self.noise[self.base[:n] + cards]
        c = cards[np.arange(n), v.argmax(axis=1)]
        below = (_ONE << np.minimum(c, 63).astype(np.uint64)) - _ONE
        chosen = (choice >> np.minimum(c, 63).astype(np.uint64)) & _ONE
        nib_c = ((table >> _SHIFT[c]) & _FIFTEEN).astype(np.int64)
        month = np.minimum(c, NUM_CARDS - 1) >> 2  # (rows not in play hold no card: their k is unused)
        as_choice = n_plain + 2 * np.bitwise_count(choice & below) + self.values.high_better[month * 16 + nib_c]
        as_plain = np.bitwise_count(plain & below).astype(np.int64)
        return np.where(chosen == _ONE, as_choice, as_plain)

    def low(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        card = self.values.card
        return card[_low_index(low)] >= card[_low_index(high)]


# The yaku policy's values are points, the greedy one's card values (1 to 20): its noise is scaled down.
YAKU_NOISE = 0.1
_FULL = np.uint64((1 << NUM_CARDS) - 1)
_NIB_COUNT = np.array([bin(i).count("1") for i in range(16)], dtype=np.int64)


def _gain_table(mask: int, need: int, points: float) -> np.ndarray:
    """``[have * 8 + other_have]``: the points one more card of a yaku's cards brings a pile holding
    ``have`` of them while the other pile holds ``other_have`` (0 where the yaku is out of reach)."""
    size = mask.bit_count()
    out = np.zeros(64)
    for have in range(min(size, 7) + 1):
        for other in range(min(size - have, 7) + 1):
            g = 0.0 if size - other < need else card_gain(need - have, need, points)
            out[have * 8 + other] = g
    return out


_YAKU_TABLES: dict[int, tuple[RuleSet, Any]] = {}


def _yaku_tables(rules: RuleSet) -> Any:
    """The yaku policy's tables for ``rules``, made once: each yaku's mask and gain table
    (:func:`_gain_table`), each card's kind (its set of yaku: cards of one kind are worth the same),
    the kinds of each card's month's four cards, and the yaku of each kind (yaku by kind, 0 or 1)."""
    got = _YAKU_TABLES.get(id(rules))
    if got is None or got[0] is not rules:
        from .heuristic import _targets_of  # heuristic imports the search, which imports this module

        targets = _targets_of(rules)
        masks = [np.uint64(m) for m, _, _ in targets]
        gains = [_gain_table(m, need, pts) for m, need, pts in targets]
        kinds = [tuple(m >> c & 1 for m, _, _ in targets) for c in range(NUM_CARDS)]
        kinds += [(0,) * len(targets)] * (_WIDTH - NUM_CARDS)  # "no card" (64) is of no yaku
        distinct = sorted(set(kinds))
        kind = np.array([distinct.index(x) for x in kinds], dtype=np.int64)
        month_kinds = np.array(
            [[kind[(c & ~3) + j] if c < NUM_CARDS else kind[_NONE] for j in range(4)] for c in range(_WIDTH)]
        )
        member = np.array(distinct, dtype=np.float64).T
        got = _YAKU_TABLES[id(rules)] = (rules, (masks, gains, kind, month_kinds, member))
    return got[1]


class YakuPolicy(GreedyPolicy):
    """A playout policy that plays like ``medium`` on arrays: a capture is worth the yaku progress it makes
    for the mover and ``deny`` times what it keeps from the other player; a discard costs by the chance
    that the other player takes it (from what the mover cannot see) and what that card would give them."""

    def __init__(
        self,
        noise: np.ndarray,
        rows: int,
        rules: RuleSet,
        deny: float = 0.8,
        card_weight: float = 0.02,
        discard_weight: float = 0.6,
    ) -> None:
        super().__init__(noise, rows)
        self.masks, self.gains, self.kind, self.month_kinds, self.member = _yaku_tables(rules)
        self.k = self.member.shape[1]
        self.deny = deny
        self.card_weight = card_weight
        self.discard_weight = discard_weight

    def card(
        self,
        hand: np.ndarray,
        plain: np.ndarray,
        choice: np.ndarray,
        n_plain: np.ndarray,
        n_choice: np.ndarray,
        table: np.ndarray,
        pile: np.ndarray,
        other_pile: np.ndarray,
        other_hand: np.ndarray,
        play: np.ndarray,
    ) -> np.ndarray:
        n = len(hand)
        idx = np.flatnonzero(play)
        if len(idx) * 4 > n * 3:  # (most rows are still in play: all of them at once)
            return self._card(self.base[:n], hand, choice, n_plain, table, pile, other_pile, other_hand)
        # The rest are over: their card is never read. Hands end at their first yaku, so about half
        # the rows of a playout's turn are over, and this policy costs enough to leave them out.
        k = np.zeros(n, dtype=np.int64)
        if len(idx):
            parts = (hand, choice, n_plain, table, pile, other_pile, other_hand)
            k[idx] = self._card(self.base[idx], *(a[idx] for a in parts))
        return k

    def _card(
        self,
        base: np.ndarray,
        hand: np.ndarray,
        choice: np.ndarray,
        n_plain: np.ndarray,
        table: np.ndarray,
        pile: np.ndarray,
        other_pile: np.ndarray,
        other_hand: np.ndarray,
    ) -> np.ndarray:
        n = len(hand)
        nt = len(self.masks)
        own = np.empty((n, nt))
        opp = np.empty((n, nt))
        for t, (m, g) in enumerate(zip(self.masks, self.gains)):
            a = np.minimum(np.bitwise_count(pile & m), 7).astype(np.int64)
            b = np.minimum(np.bitwise_count(other_pile & m), 7)
            own[:, t] = g[a * 8 + b]
            opp[:, t] = g[b * 8 + a]
        k = self.k
        k_opp = (opp @ self.member).ravel()  # (n, kinds): what taking a card of each kind gives the other player
        k_all = (own @ self.member).ravel() + self.deny * k_opp  # and is worth to the mover, with the denial
        cards = _hand_cards(hand)
        rows = np.arange(n)[:, None]
        shift = _SHIFT[cards]
        nib = ((table[:, None] >> shift) & _FIFTEEN).astype(np.int64)
        at = rows * k
        mk = self.month_kinds[cards]
        # The worth of each of the month's four cards where it lies on the table (0 where it does not).
        tj = [np.where((nib >> j) & 1 == 1, k_all[at + mk[:, :, j]], 0.0) for j in range(4)]
        t_sum = tj[0] + tj[1] + tj[2] + tj[3]
        t_max = np.maximum(np.maximum(tj[0], tj[1]), np.maximum(tj[2], tj[3]))
        ntab = _NIB_COUNT[nib]
        take = np.where(ntab == 2, t_max, t_sum)
        at_c = at + self.kind[cards]
        mine = k_all[at_c]
        # Discards: the chance the other player takes the card, from the cards the mover cannot see.
        unseen = _FULL & ~(hand | table | pile | other_pile)
        n_unseen = np.maximum(np.bitwise_count(unseen), 1).astype(np.float64)
        q = 1.0 - np.bitwise_count(other_hand) / n_unseen
        q2 = q * q
        powers = np.stack([np.ones(n), q, q2, q2 * q, q2 * q2], axis=1).ravel()  # 4: "no card" rows
        same = _NIB_COUNT[((unseen[:, None] >> shift) & _FIFTEEN).astype(np.int64)]
        p_take = 1.0 - powers[rows * 5 + same]
        mine_same = _NIB_COUNT[((hand[:, None] >> shift) & _FIFTEEN).astype(np.int64)] > 1
        p_take = np.where(mine_same, 0.5 * p_take, p_take)
        opp_c = k_opp[at_c]
        shed = -self.discard_weight * p_take * (opp_c + 0.3) - 0.3 * (mine - self.deny * opp_c)
        v = np.where(ntab > 0, mine + take, shed)
        v += self.card_weight * _PLAY_VALUE[cards * 16 + nib] + self.noise[base + cards]
        best = v.argmax(axis=1)
        ar = np.arange(n)
        c = cards[ar, best]
        below = (_ONE << np.minimum(c, 63).astype(np.uint64)) - _ONE
        chosen = (choice >> np.minimum(c, 63).astype(np.uint64)) & _ONE
        nib_c = nib[ar, best]
        mo = np.minimum(c, NUM_CARDS - 1) >> 2
        # Of a choice card's two table cards, the one worth more to the mover.
        lo_j = _LOW_J[nib_c]
        hi_j = _HIGH_J[nib_c]
        mk_c = self.month_kinds[c]
        hb = k_all[ar * k + mk_c[ar, hi_j]] + self.card_weight * _CARD_VALUE[mo * 4 + hi_j]
        lb = k_all[ar * k + mk_c[ar, lo_j]] + self.card_weight * _CARD_VALUE[mo * 4 + lo_j]
        as_choice = n_plain + 2 * np.bitwise_count(choice & below) + (hb > lb)
        as_plain = np.bitwise_count(hand & ~choice & below).astype(np.int64)
        return np.where(chosen == _ONE, as_choice, as_plain)


_LOW_J = np.array([(i & -i).bit_length() - 1 if i else 0 for i in range(16)], dtype=np.int64)
_HIGH_J = np.array([i.bit_length() - 1 if i else 0 for i in range(16)], dtype=np.int64)


_ENGINES: dict[int, tuple[RuleSet, _Scorer, Any, bool]] = {}


def _engine(rules: RuleSet) -> tuple[_Scorer, Any, bool]:
    got = _ENGINES.get(id(rules))
    if got is None or got[0] is not rules:
        got = _ENGINES[id(rules)] = (rules, _Scorer(rules), raiser(rules), total_tells(rules))
    return got[1], got[2], got[3]


def worlds(template: Hand, other: int, held: np.ndarray, stocks: np.ndarray, repeat: int) -> BatchHands:
    """A batch of ``repeat * len(held)`` rows: ``template`` (a hand built from one player's view, with
    any guess of the hidden cards) with the hidden cards of world ``w`` in row ``r`` where
    ``r % len(held) == w``: ``held[w]`` the opponent's hand (a mask, seat ``other``), ``stocks[w]``
    the stock order (top first; as long as the template's stock)."""
    w = len(held)
    n = w * repeat
    rules = template.rules
    b = BatchHands.blank(rules, n, _engine(rules))
    me = 1 - other
    month = template.month
    score = template.scorer
    hands, declarable = b.seat_hands, b.seat_declarable
    hands[me] = template.hand_masks[me]
    hands[other] = np.tile(held, repeat)
    for seat in (0, 1):
        pile = template.piles[seat]
        b.seat_piles[seat] = pile
        b.seat_points[seat] = score(pile, month)
        b.seat_calls[seat] = template.koikoi_calls[seat]
        b.seat_decision_score[seat] = template.decision_score[seat]
        b.seat_turn_score[seat] = template.turn_score[seat]
    declarable[me] = template.declarable[me]
    if rules.hand_bonus_declared:
        declarable[other] = b.bonus_points(hands[other]) > 0
    b.dealer[:] = template.dealer
    b.month[:] = month
    b.table[:] = template.table
    left = stocks.shape[1]
    b.stock[:, 24 - left :] = np.tile(stocks, (repeat, 1))
    b.stock_pos[:] = 24 - left
    b.current_player[:] = template.current_player
    b.phase[:] = template.phase_code
    b.pending[:] = template.pending
    b.turn_pile[:] = template.turn_pile
    b.turn_before[:] = score(template.turn_pile, month)
    b.last_koikoi[:] = template.last_koikoi
    b.table_brights[:] = template.table_brights
    return b


def play_worlds(
    template: Hand,
    other: int,
    held: np.ndarray,
    stocks: np.ndarray,
    actions: list[int],
    noise: np.ndarray,
    policy: str | Callable[[np.ndarray, int], Any] = "greedy",
) -> np.ndarray:
    """Each of ``actions`` played first in every world (``held``, ``stocks``: see :func:`worlds`),
    then the greedy policy with ``noise`` (``(worlds, 48)``) to the end of the hand; the score changes,
    shape ``(len(actions), worlds, 2)``. ``policy``: "greedy", "yaku" (:class:`YakuPolicy`), or a
    function of the noise and the number of rows that makes the policy (``benchmarks/imitation.py``).
    A policy so made with an int ``turns`` plays only that many turns after the action; then its
    ``value(batch, rows)`` gives the rows still in play a score difference (seat 0's minus seat 1's,
    whole numbers), counted as seat 0's change (``benchmarks/cutoff.py``)."""
    w = len(held)
    b = worlds(template, other, held, stocks, len(actions))
    b.apply(np.repeat(np.array(actions, dtype=np.int64), w), np.ones(b.n, dtype=bool))
    if callable(policy):
        made = policy(noise, b.n)
        turns = getattr(made, "turns", None)
        b.play_policy(made, turns=turns)
        if turns is not None:
            rows = np.flatnonzero(~b.over)
            if len(rows):
                b.seat_deltas[0, rows] = made.value(b, rows)
                b.seat_deltas[1, rows] = 0
    elif policy == "yaku":
        b.play_policy(YakuPolicy(noise * YAKU_NOISE, b.n, template.rules))
    else:
        b.play_policy(GreedyPolicy(noise, b.n))
    return b.seat_deltas.T.reshape(len(actions), w, 2)


_BIT = np.array([1 << c for c in range(NUM_CARDS)], dtype=np.uint64)


def sample_hidden(
    rng: np.random.Generator, unseen: list[int], n_opp: int, exponents: list[float] | None, count: int
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` guesses of the hidden cards: the opponent's hands (masks of ``n_opp`` of the ``unseen``
    cards) and the stock orders (the rest, uniformly shuffled). With ``exponents``, a card's chance of
    being held is weighted (Efraimidis and Spirakis: the ``n_opp`` largest keys ``u ** exponent``),
    as :class:`koikoi.ai.search.WorldSampler` does one world at a time."""
    cards = np.array(unseen, dtype=np.int64)
    k = len(cards)
    if exponents is not None and 0 < n_opp < k:
        keys = rng.random((count, k)) ** np.array(exponents)
        order = np.argsort(-keys, axis=1, kind="stable")
        dealt = cards[order]
        dealt[:, n_opp:] = rng.permuted(dealt[:, n_opp:], axis=1)
    else:
        dealt = rng.permuted(np.broadcast_to(cards, (count, k)), axis=1)
    held = np.bitwise_or.reduce(_BIT[dealt[:, :n_opp]], axis=1) if n_opp else np.zeros(count, dtype=np.uint64)
    return held, np.ascontiguousarray(dealt[:, n_opp:])
