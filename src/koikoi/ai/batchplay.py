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
hand, and every choice is measured with the same whims (common random numbers). (A policy that plays
like ``medium`` was a better player but did not make the search stronger: docs/ai-research.md.)

NumPy is needed (``pip install numpy``, in the ``koikoi[rl]`` extra); without it the search plays
one world at a time (:mod:`koikoi.ai.fastplay`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..batch import BatchHands, Scorer
from ..cardbits import BIT, FIFTEEN, ONE, low_index
from ..cards import NUM_CARDS
from ..hand import Hand
from ..players import card_value
from ..rules import RuleSet
from ..yaku import raiser, total_tells

__all__ = ["GreedyPolicy", "worlds", "play_worlds", "sample_hidden"]

_VAL = [card_value(c) for c in range(NUM_CARDS)]
_NONE = 64  # the index low_index gives an empty mask: "no card" (a hand holds fewer than 8)
_WIDTH = _NONE + 1


def _play_table() -> np.ndarray:
    """What playing card c is worth by its month's table nibble, flat as ``[c * 16 + nibble]``: a capture
    is worth the card played and the cards it takes (of two table cards, the better one: a choice card
    takes one), a card that takes nothing costs; "no card" rows are never chosen."""
    out = np.full(_WIDTH * 16, -1e9)
    for c in range(NUM_CARDS):
        base = c & ~3
        for nib in range(16):
            table = [base + j for j in range(4) if nib >> j & 1]
            if not table:
                v = -0.5 * _VAL[c] - 1.0
            elif len(table) == 2:
                v = _VAL[c] + max(_VAL[t] for t in table)
            else:
                v = _VAL[c] + sum(_VAL[t] for t in table)
            out[c * 16 + nib] = v
    return out


def _high_better() -> np.ndarray:
    """For a choice card, 1 where the higher of its month's two table cards is the better take (the
    engine lists the lower one's capture first), flat as ``[month * 16 + nibble]``."""
    out = np.zeros(12 * 16, dtype=np.int64)
    for m in range(12):
        for nib in range(16):
            t = [4 * m + j for j in range(4) if nib >> j & 1]
            if len(t) == 2 and _VAL[t[1]] > _VAL[t[0]]:
                out[m * 16 + nib] = 1
    return out


# The greedy policy's values (the card values of koikoi.ai.fastplay), as tables: playing a card by its
# month's table nibble, a table card's worth to whoever takes it, which of two table cards is better.
_PLAY_VALUE = _play_table()
_CARD_VALUE = np.array(_VAL + [0.0] * (_WIDTH - NUM_CARDS))
_HIGH_BETTER = _high_better()
_SHIFT = np.array([c & ~3 for c in range(NUM_CARDS)] + [0] * (_WIDTH - NUM_CARDS), dtype=np.uint64)


def _hand_cards(hand: np.ndarray) -> np.ndarray:
    """Each row's hand as card indices, ascending, shape ``(rows, 8)``: 64 ("no card") after the last."""
    cards = np.empty((len(hand), 8), dtype=np.int64)
    m = hand.copy()
    for i in range(8):
        low = m & (~m + ONE)
        cards[:, i] = np.bitwise_count(low - ONE)
        m ^= low
    return cards


class GreedyPolicy:
    """The greedy playout policy for :meth:`BatchHands.play_policy`, with ``noise`` of shape
    ``(worlds, 48)``: row ``r`` of the batch plays world ``r % worlds``."""

    def __init__(self, noise: np.ndarray, rows: int) -> None:
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
        nib = (table[:, None] >> _SHIFT[cards]) & FIFTEEN
        v = _PLAY_VALUE[cards * 16 + nib.astype(np.int64)] + self.noise[self.base[:n] + cards]
        c = cards[np.arange(n), v.argmax(axis=1)]
        below = (ONE << np.minimum(c, 63).astype(np.uint64)) - ONE
        chosen = (choice >> np.minimum(c, 63).astype(np.uint64)) & ONE
        nib_c = ((table >> _SHIFT[c]) & FIFTEEN).astype(np.int64)
        month = np.minimum(c, NUM_CARDS - 1) >> 2  # (rows not in play hold no card: their k is unused)
        as_choice = n_plain + 2 * np.bitwise_count(choice & below) + _HIGH_BETTER[month * 16 + nib_c]
        as_plain = np.bitwise_count(plain & below).astype(np.int64)
        k: np.ndarray = np.where(chosen == ONE, as_choice, as_plain)
        return k

    def low(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        lower: np.ndarray = _CARD_VALUE[low_index(low)] >= _CARD_VALUE[low_index(high)]
        return lower


_ENGINES: dict[int, tuple[RuleSet, Scorer, Any, bool]] = {}


def _engine(rules: RuleSet) -> tuple[Scorer, Any, bool]:
    got = _ENGINES.get(id(rules))
    if got is None or got[0] is not rules:
        got = _ENGINES[id(rules)] = (rules, Scorer(rules), raiser(rules), total_tells(rules))
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
) -> np.ndarray:
    """Each of ``actions`` played first in every world (``held``, ``stocks``: see :func:`worlds`),
    then the greedy policy with ``noise`` (``(worlds, 48)``) to the end of the hand; the score changes,
    shape ``(len(actions), worlds, 2)``."""
    w = len(held)
    b = worlds(template, other, held, stocks, len(actions))
    b.apply(np.repeat(np.array(actions, dtype=np.int64), w), np.ones(b.n, dtype=bool))
    b.play_policy(GreedyPolicy(noise, b.n))
    deltas: np.ndarray = b.seat_deltas.T.reshape(len(actions), w, 2)
    return deltas


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
    held = np.bitwise_or.reduce(BIT[dealt[:, :n_opp]], axis=1) if n_opp else np.zeros(count, dtype=np.uint64)
    return held, np.ascontiguousarray(dealt[:, n_opp:])
