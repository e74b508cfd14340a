"""Piles of cards as NumPy ``uint64`` masks (bit c is card c), for the batched rules in
:mod:`koikoi.batch` and the vector environment in :mod:`koikoi.vector`: the constants and bit tricks
both use (counting cards, the lowest card, a pile's months), written once.
"""

from __future__ import annotations

import numpy as np

from .cards import MONTH_MASKS, NUM_CARDS

u64 = np.uint64
BIT = np.array([1 << c for c in range(NUM_CARDS)], dtype=np.uint64)
MONTH_OF = np.array([MONTH_MASKS[c >> 2] for c in range(NUM_CARDS)], dtype=np.uint64)
MONTH_MASK = np.array(MONTH_MASKS, dtype=np.uint64)
# The same with a 65th entry for "no card" (index 64, as low_index gives for an empty mask): a row
# that plays no card reads 0 from them, so its writes need no mask.
BIT_OR_NONE = np.append(BIT, np.zeros(65 - NUM_CARDS, dtype=np.uint64))
MONTH_OR_NONE = np.append(MONTH_OF, np.zeros(65 - NUM_CARDS, dtype=np.uint64))
SHIFTS = np.arange(NUM_CARDS, dtype=np.uint64)
LOW_NIBBLES = u64(sum(1 << (4 * m) for m in range(12)))
_PAIRS1 = u64(sum(1 << i for i in range(0, NUM_CARDS, 2)))
_PAIRS2 = u64(sum(3 << (4 * m) for m in range(12)))
_N2 = u64(sum(2 << (4 * m) for m in range(12)))
ONE, TWO, THREE = u64(1), u64(2), u64(3)
FIFTEEN = u64(15)
FULL = u64((1 << NUM_CARDS) - 1)
ZERO = u64(0)


def popcount(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.bitwise_count(x).astype(np.int64)
    return out


def low_index(x: np.ndarray) -> np.ndarray:
    """The index of the lowest set bit of each (non-zero) mask."""
    low = x & (~x + ONE)
    return popcount(low - ONE)


def kth_bit(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    """The index of the k-th (0-based) set bit of each mask (64 where there is none; k < 8: a hand
    holds at most 8 cards). Every row takes every step, the rows done masked: ``x & (x - s)`` drops
    the lowest set bit where ``s`` is 1 and keeps ``x`` where it is 0, three in-place operations a
    step (``np.where`` on a fresh array took four and their allocations)."""
    x = x.copy()
    t = np.empty_like(x)
    s = np.empty(len(x), dtype=np.uint64)
    for i in range(int(k.max()) if len(k) else 0):
        np.greater(k, i, out=s)
        np.subtract(x, s, out=t)
        x &= t
    return low_index(x)


def bits_of(masks: np.ndarray) -> np.ndarray:
    """Card masks, shape (..., k), as booleans, shape (..., k, 48): entry c is bit c."""
    m = np.ascontiguousarray(masks, dtype="<u8")
    b = np.unpackbits(m.view(np.uint8).reshape(*m.shape, 8), axis=-1, bitorder="little")
    return b[..., :NUM_CARDS].view(bool)


def month_counts(m: np.ndarray) -> np.ndarray:
    x = (m & _PAIRS1) + ((m >> ONE) & _PAIRS1)
    return (x & _PAIRS2) + ((x >> TWO) & _PAIRS2)


def months_present(m: np.ndarray) -> np.ndarray:
    return popcount((m | m >> ONE | m >> TWO | m >> THREE) & LOW_NIBBLES)


def two_card_months(m: np.ndarray) -> np.ndarray:
    y = month_counts(m) ^ _N2
    out: np.ndarray = (LOW_NIBBLES & ~(y | y >> ONE | y >> TWO)) * FIFTEEN
    return out


def fours_pairs(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return popcount((month_counts(m) >> TWO) & LOW_NIBBLES), popcount(two_card_months(m)) >> 2


def has_three(m: np.ndarray) -> np.ndarray:
    """Whether some month has exactly three cards in each mask (a count of 3 is the only one, of 0..4,
    with its nibble's two low bits set)."""
    c = month_counts(m)
    out: np.ndarray = (c & (c >> ONE) & LOW_NIBBLES) != 0
    return out
