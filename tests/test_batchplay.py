"""The search's batched playouts (koikoi.ai.batchplay) play the greedy policy by the engine's rules:
every world of a batch ends as the engine ends it when the same choices are made through its public
moves, for every preset, from every phase; and the sampled hidden cards are always a possible deal."""

import random

import numpy as np
import pytest
from test_fastplay import _positions

from koikoi.actions import DECLARE, DRAW_TAKE_BASE, PLAY_TAKE_BASE, STOP
from koikoi.ai.batchplay import _PLAY_VALUE, _VAL, YAKU_NOISE, YakuPolicy, _gain_table, play_worlds, sample_hidden
from koikoi.ai.heuristic import _targets_of
from koikoi.ai.search import WorldSampler
from koikoi.cards import card_list
from koikoi.hand import hand_bonus_of
from koikoi.rules import PRESETS


def _greedy_move(h, noise):
    """The batched policy's move through the engine: the best legal action by value plus the world's
    noise for the card played; the better of two table cards for a drawn card; declare; stop."""
    legal = h.legal_actions()
    a0 = legal[0]
    if len(legal) == 1:
        return a0
    if STOP in legal:
        return STOP
    if a0 >= DRAW_TAKE_BASE:
        t0, t1 = a0 - DRAW_TAKE_BASE, legal[1] - DRAW_TAKE_BASE
        return a0 if _VAL[t0] >= _VAL[t1] else legal[1]
    if DECLARE in legal:
        return DECLARE
    a, best = a0, -1e18
    for x in legal:
        if x < PLAY_TAKE_BASE:
            v = _PLAY_VALUE[x * 16 + (h.table >> (x & 60) & 15)] + noise[x]
        else:
            c = (x - PLAY_TAKE_BASE) >> 2
            v = _VAL[c] + _VAL[(c & ~3) | (x & 3)] + noise[c]
        if v > best:
            a, best = x, v
    return a


def _play_out(h, moves):
    """Play ``h`` to its end, seat p's moves by ``moves[p](h)``; the score changes."""
    while h.result is None:
        h.apply_action(moves[h.current_player](h))
    return h.result.deltas


def _greedy(h, noise):
    move = lambda h: _greedy_move(h, noise)  # noqa: E731
    return _play_out(h, (move, move))


def _yaku_move(h, noise):
    """The yaku policy's move through the engine, written out card by card: a capture is worth the yaku
    progress of the cards taken (for the mover, and ``deny`` times for the other player), a discard
    costs by the chance the other player takes it; a choice card takes the table card worth more; draw
    choices, declaring and stopping as the greedy policy."""
    legal = h.legal_actions()
    if len(legal) == 1 or STOP in legal or legal[0] >= DRAW_TAKE_BASE or DECLARE in legal:
        return _greedy_move(h, noise)
    rules = h.rules
    targets = _targets_of(rules)
    gains = [_gain_table(m, need, pts) for m, need, pts in targets]
    pol = YakuPolicy(np.zeros((1, 48)), 1, rules)
    deny, cw, dw = pol.deny, pol.card_weight, pol.discard_weight
    p = h.current_player
    pile, other, hand, table = h.piles[p], h.piles[1 - p], h._hands[p], h.table
    own, opp = [], []
    for (m, _, _), g in zip(targets, gains):
        x, y = min((pile & m).bit_count(), 7), min((other & m).bit_count(), 7)
        own.append(g[x * 8 + y])
        opp.append(g[y * 8 + x])

    def worth(c, of):
        return sum(v for (m, _, _), v in zip(targets, of) if m >> c & 1)

    def mine(c):
        return worth(c, own) + deny * worth(c, opp)

    unseen = ((1 << 48) - 1) & ~(hand | table | pile | other)
    q = 1.0 - h._hands[1 - p].bit_count() / max(unseen.bit_count(), 1)
    powers = [1.0, q, q * q, q * q * q]
    best, best_v = -1, -1e18
    for c in card_list(hand):
        month = 15 << (c & ~3)
        on_table = card_list(table & month)
        if on_table:
            tj = [mine(t) for t in on_table]
            v = mine(c) + (max(tj) if len(tj) == 2 else sum(tj))
        else:
            p_take = 1.0 - powers[(unseen & month).bit_count()]
            if (hand & month).bit_count() > 1:
                p_take *= 0.5
            v = -dw * p_take * (worth(c, opp) + 0.3) - 0.3 * worth(c, own)
        v += cw * _PLAY_VALUE[c * 16 + (table >> (c & ~3) & 15)] + noise[c] * YAKU_NOISE
        if v > best_v:
            best, best_v = c, v
    on_table = card_list(table & (15 << (best & ~3)))
    if len(on_table) != 2:
        return best
    lo, hi = on_table
    high = mine(hi) + cw * _VAL[hi] > mine(lo) + cw * _VAL[lo]
    return PLAY_TAKE_BASE + best * 4 + ((hi if high else lo) & 3)


def _yaku(h, noise):
    move = lambda h: _yaku_move(h, noise)  # noqa: E731
    return _play_out(h, (move, move))


def _engine_world(sampler, held, stock):
    h = sampler.template.clone()
    o = sampler.other
    h._hands[o] = held
    h._cards[o] = card_list(held)
    h.stock = tuple(stock)
    if h.rules.hand_bonus_declared:
        h.declarable[o] = hand_bonus_of(held, h.rules) is not None
    return h


@pytest.mark.parametrize("policy", ["greedy", "yaku"])
@pytest.mark.parametrize("name", sorted(PRESETS))
def test_batched_playouts_end_every_world_as_the_engine_does(name, policy):
    rng = random.Random(name)
    gen = np.random.default_rng(len(name))
    phases = set()
    compared = 0
    for obs in _positions(PRESETS[name], 40, rng):
        phases.add(obs.phase)
        sampler = WorldSampler(obs, random.Random(1), rng.choice([1.0, 0.05]))
        w = 8
        held, stocks = sample_hidden(gen, sampler.unseen, sampler.n_opp, sampler.exponents, w)
        noise = gen.random((w, 48)) * rng.choice([0.5, 1.5, 4.0])  # no ties (noise 0 breaks them apart)
        actions = list(obs.legal_actions)
        got = play_worlds(sampler.template, sampler.other, held, stocks, actions, noise, policy)
        reference = _yaku if policy == "yaku" else _greedy
        for i, a in enumerate(actions):
            for k in range(w):
                h = _engine_world(sampler, int(held[k]), [int(c) for c in stocks[k]])
                h.apply_action(a)
                assert tuple(int(x) for x in got[i, k]) == reference(h, noise[k]), (name, obs.phase, a, k)
                compared += 1
    assert compared > 300
    assert {"play", "decision"} <= phases


@pytest.mark.parametrize("weighted", [False, True])
def test_sampled_hidden_cards_are_always_a_possible_deal(weighted):
    rng = random.Random(4)
    gen = np.random.default_rng(4)
    for obs in _positions(PRESETS["nintendo"], 20, rng):
        sampler = WorldSampler(obs, random.Random(1))
        unseen = sampler.unseen
        exps = [rng.choice([1.0, 20.0]) for _ in unseen] if weighted else None
        held, stocks = sample_hidden(gen, unseen, sampler.n_opp, exps, 50)
        assert stocks.shape == (50, obs.stock_count)
        for h, s in zip(held, stocks):
            mask = sum(1 << int(c) for c in s)
            assert int(h).bit_count() == obs.opponent_hand_count
            assert len(set(s.tolist())) == len(s) and not int(h) & mask
            assert int(h) | mask == obs.unseen_mask


def test_weighted_sampling_makes_a_card_less_likely_in_the_opponents_hand():
    """A card of exponent 20 (weight 1/20) is rarely held; the stock order stays uniform."""
    rng = random.Random(9)
    obs = next(o for o in _positions(PRESETS["nintendo"], 10, rng) if o.opponent_hand_count >= 4)
    sampler = WorldSampler(obs, random.Random(1))
    unseen = sampler.unseen
    exps = [20.0] + [1.0] * (len(unseen) - 1)
    held, stocks = sample_hidden(np.random.default_rng(2), unseen, sampler.n_opp, exps, 4000)
    rare = ((held >> np.uint64(unseen[0])) & np.uint64(1)).mean()
    plain = ((held >> np.uint64(unseen[1])) & np.uint64(1)).mean()
    assert rare < plain / 3
    # Where it is in the stock, it is anywhere in it: its mean place is near the middle.
    places = [int(np.flatnonzero(s == unseen[0])[0]) for s in stocks if (s == unseen[0]).any()]
    assert abs(np.mean(places) - (stocks.shape[1] - 1) / 2) < 0.6
