"""Playouts for the ``hard`` search: the greedy playout policy, twice.

:func:`playout` plays a hand to its end through the engine's public moves (``legal_actions`` and
``apply_action``): it is the definition of the policy. :func:`fast_playout` plays the same policy on
the hand's cards as plain integers, skipping the engine's legality checks, action lists and event log,
and hands the end of the hand (a stop, a declared hand bonus, an exhausted stock) back to the engine's
own settling code, so the result is the engine's. Both read their random noise from the same place
(``noise[k]``, ``noise[k + 1]``, ... in the same order), so on the same hand they give the same
result; the tests check this over many sampled hands and every preset.

The policy: a player captures the most valuable cards (card values plus the drawn noise), sheds its
least valuable card when nothing matches, takes the better table card when the drawn card matches two,
stops as soon as a yaku lets it, and declares a dealt hand bonus.
"""

from __future__ import annotations

import random

from ..actions import DECLARE, DRAW_TAKE_BASE, KOIKOI, PLAY_TAKE_BASE, STOP
from ..cards import MONTH_MASKS, NUM_CARDS, card_list
from ..hand import Hand
from ..players import card_value
from ..yaku import GATE_BIAS, GATE_TABLES, GATE_TOPS

__all__ = [
    "playout",
    "policy_choice",
    "fast_playout",
    "noise_pool",
    "NOISE_SPAN",
]

_VAL = tuple(card_value(c) for c in range(NUM_CARDS))
_MONTH_OF = tuple(MONTH_MASKS[c >> 2] for c in range(NUM_CARDS))
# The worth of every set of cards within one month (a capture), keyed by its mask.
_SET_VAL: dict[int, float] = {}
for _m in range(12):
    for _sub in range(16):
        _mask = _sub << (4 * _m)
        _SET_VAL[_mask] = sum(_VAL[c] for c in card_list(_mask))
_DISCARD = tuple(-0.5 * v - 1.0 for v in _VAL)
_PLAY_TAKE_VAL = tuple(
    _VAL[(a - PLAY_TAKE_BASE) >> 2] + _VAL[(((a - PLAY_TAKE_BASE) >> 2) & ~3) | (a & 3)]
    for a in range(PLAY_TAKE_BASE, DRAW_TAKE_BASE)
)

# What playing card c is worth by the cards of its month on the table (their 4-bit nibble): a capture
# counts both cards' values, a discard costs. The same sums as in playout(), looked up by index.
_PLAY_VAL = tuple(
    tuple(_VAL[c] + _SET_VAL[nib << (c & ~3)] if nib else _DISCARD[c] for nib in range(16)) for c in range(NUM_CARDS)
)

# The most noise values one playout can read: at most 16 actions a turn (8 cards, each with two
# captures to choose from) over at most 16 turns.
NOISE_SPAN = 256


def noise_pool(rng: random.Random, scale: float, size: int = 4096) -> list[float]:
    """``size + NOISE_SPAN`` noise values in ``[0, scale)``: a playout starting at any offset below
    ``size`` stays inside it."""
    r = rng.random
    return [scale * r() for _ in range(size + NOISE_SPAN)]


def playout(h: Hand, noise: list[float], k: int = 0) -> tuple[int, int]:
    """Play ``h`` to its end by the greedy policy through the engine's moves; the score changes.

    Each valued choice of a card to play reads the next noise value from ``noise[k]`` on. The cards
    are valued by the cards alone, the same for both players, and a player stops at once.
    """
    apply = h.apply_action
    while h.result is None:
        a, k = policy_choice(h, h.legal_actions(), noise, k)
        apply(a)
    return h.result.deltas


def policy_choice(h: Hand, legal: list[int], noise: list[float], k: int = 0) -> tuple[int, int]:
    """The playout policy's choice among ``legal`` (``h.legal_actions()``), and the next noise index:
    one step of :func:`playout`. It reads nothing hidden from the player to move (their cards, the
    table, the piles), so it can play a real seat from any world sampled for it."""
    a0 = legal[0]
    if len(legal) == 1:
        return a0, k
    if a0 >= KOIKOI:
        return STOP, k
    if a0 >= DRAW_TAKE_BASE:
        a1 = legal[1]
        return (a0 if _VAL[a0 - DRAW_TAKE_BASE] >= _VAL[a1 - DRAW_TAKE_BASE] else a1), k
    if legal[-1] == DECLARE:
        return DECLARE, k
    table = h.table
    play_val, pt_val = _PLAY_VAL, _PLAY_TAKE_VAL
    best, best_v = a0, -1e9
    for a in legal:
        if a < PLAY_TAKE_BASE:
            v = play_val[a][table >> (a & 60) & 15] + noise[k]
        else:
            v = pt_val[a - PLAY_TAKE_BASE] + noise[k]
        k += 1
        if v > best_v:
            best, best_v = a, v
    return best, k


def fast_playout(h: Hand, noise: list[float], k: int = 0, *, deltas_only: bool = False) -> tuple[int, int]:
    """The same as :func:`playout` (same policy, same noise, same result), about three times faster.

    ``deltas_only``: a stop is settled to its score changes alone, by the engine's own scoring and
    multipliers (``Hand.scorer``, ``Hand.stop_payout``), and ``h`` is left unsettled, part-way
    through the playout: for a searcher that throws the world away and reads only the score changes
    (it saves writing the playout's state back and listing the yaku, about a tenth of a search's time).
    """
    play_val, pt_val = _PLAY_VAL, _PLAY_TAKE_VAL
    month_of, val = _MONTH_OF, _VAL
    # A hand that does not start with a card to play (a capture choice, a koi-koi decision) takes its
    # first steps through the engine, exactly as playout() does.
    while h.phase_code != 0:
        if h.result is not None:
            return _deltas(h)
        legal = h.legal_actions()
        a0 = legal[0]
        if a0 >= KOIKOI or len(legal) == 1:
            h.apply_action(STOP if a0 >= KOIKOI else a0)
        else:
            a1 = legal[1]
            h.apply_action(a0 if val[a0 - DRAW_TAKE_BASE] >= val[a1 - DRAW_TAKE_BASE] else a1)
    if h.result is not None:
        return _deltas(h)
    hands, cards, table, two, piles, pos, p = h.export_state()
    stock = h.stock
    raised = h.raiser
    declarable = h.declarable
    month = h.month
    g0, g1, g2, g3 = GATE_TABLES
    bias, tops = GATE_BIAS, GATE_TOPS
    tsuki = h.tsukifuda_mask
    while True:
        hand = hands[p]
        if declarable[p] and hand.bit_count() == 8:
            h.restore_state(hands, table, piles, pos, p, cards)
            h.apply_action(DECLARE)
            return _deltas(h)
        # The choice of the card to play, in the order of the engine's legal actions: the plain plays
        # by card id, then the cards whose month lies twice on the table, two captures each.
        choice = hand & two
        take = -1
        if not choice:
            mine = cards[p]
            if len(mine) == 1:
                c = mine[0]  # one card left: nothing to choose
            else:
                best_v = -1e9
                for a in mine:
                    v = play_val[a][table >> (a & 60) & 15] + noise[k]
                    k += 1
                    if v > best_v:
                        c, best_v = a, v
        else:
            best_v = -1e9
            c = -1
            for a in cards[p]:
                if not choice >> a & 1:
                    v = play_val[a][table >> (a & 60) & 15] + noise[k]
                    k += 1
                    if v > best_v:
                        c, best_v = a, v
            rest = choice
            while rest:
                low = rest & -rest
                rest ^= low
                a = low.bit_length() - 1
                m = table & month_of[a]
                first = m & -m
                base = 4 * a
                for t in (first.bit_length() - 1, (m ^ first).bit_length() - 1):
                    v = pt_val[base + (t & 3)] + noise[k]
                    k += 1
                    if v > best_v:
                        c, take, best_v = a, t, v
        cbit = 1 << c
        hands[p] = hand ^ cbit
        cards[p].remove(c)
        pile = before = piles[p]
        captured = False
        if take >= 0:
            table ^= 1 << take
            pile |= cbit | (1 << take)
            captured = True
        else:
            m = table & month_of[c]
            if m:
                table ^= m
                pile |= m | cbit
                captured = True
            else:
                table |= cbit
        # The draw step.
        d = stock[pos]
        pos += 1
        dbit = 1 << d
        m = table & month_of[d]
        if m:
            first = m & -m
            second = m ^ first
            if second and not second & (second - 1):  # two table cards: take the better
                t0, t1 = first.bit_length() - 1, second.bit_length() - 1
                m = first if val[t0] >= val[t1] else second
            table ^= m
            pile |= m | dbit
            captured = True
        else:
            table |= dbit
        two &= ~(month_of[c] | month_of[d])
        piles[p] = pile
        # A pile that the score gate (koikoi.yaku.may_score) passes over scores nothing, so it raises nothing.
        if (
            captured
            and (
                (g0[pile & 4095] + g1[pile >> 12 & 4095] + g2[pile >> 24 & 4095] + g3[pile >> 36] + bias) & tops
                or (tsuki and pile & tsuki == tsuki)
            )
            and raised(before, pile, month)
        ):
            # A playout player always stops.
            if deltas_only:  # what settle_stop would pay, without settling the hand
                return h.stop_payout(p, h.scorer(pile, month))[2]
            h.restore_state(hands, table, piles, pos, p)
            return h.settle_stop(p, "stop").deltas
        if not (hands[0] or hands[1]):
            h.restore_state(hands, table, piles, pos, p)
            return h.settle_exhausted().deltas
        p = 1 - p


def _deltas(h: Hand) -> tuple[int, int]:
    """The score changes of a hand the engine has settled."""
    result = h.result
    assert result is not None
    return result.deltas
