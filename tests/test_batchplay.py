"""The search's batched playouts (koikoi.ai.batchplay) play the greedy policy by the engine's rules:
every world of a batch ends as the engine ends it when the same choices are made through its public
moves, for every preset, from every phase; and the sampled hidden cards are always a possible deal."""

import random

import numpy as np
import pytest
from test_fastplay import _positions

from koikoi.actions import DECLARE, DRAW_TAKE_BASE, KOIKOI, PLAY_TAKE_BASE, STOP
from koikoi.ai.batchplay import _PLAY_VALUE, _VAL, GreedyPolicy, play_worlds, sample_hidden, worlds
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


def _engine_world(sampler, held, stock):
    h = sampler.template.clone()
    o = sampler.other
    h._hands[o] = held
    h._cards[o] = card_list(held)
    h.stock = tuple(stock)
    if h.rules.hand_bonus_declared:
        h.declarable[o] = hand_bonus_of(held, h.rules) is not None
    return h


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_batched_playouts_end_every_world_as_the_engine_does(name):
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
        got = play_worlds(sampler.template, sampler.other, held, stocks, actions, noise)
        for i, a in enumerate(actions):
            for k in range(w):
                h = _engine_world(sampler, int(held[k]), [int(c) for c in stocks[k]])
                h.apply_action(a)
                assert tuple(int(x) for x in got[i, k]) == _greedy(h, noise[k]), (name, obs.phase, a, k)
                compared += 1
    assert compared > 300
    assert {"play", "decision"} <= phases


def _calls_koikoi(world, points, left, calls):
    """The koi-koi rule of the test policy below: a mix of everything it is given, so that a wrong one shows."""
    return (world + points + 2 * left + 3 * calls) % 3 == 0


class _CallingPolicy(GreedyPolicy):
    """The greedy policy, calling koi-koi by :func:`_calls_koikoi`."""

    def __init__(self, noise, rows):
        super().__init__(noise, rows)
        self.worlds = len(noise)

    def koikoi(self, rows, points, left, calls):
        return _calls_koikoi(rows % self.worlds, points, left, calls)


def _calling_move(h, noise, world, started):
    """:class:`_CallingPolicy`'s move through the engine; ``started[0]``: a card was played by the policy
    (a decision pending before that stops, as the batched playouts stop it)."""
    legal = h.legal_actions()
    if STOP in legal:
        p = h.current_player
        if (
            KOIKOI in legal
            and started[0]
            and _calls_koikoi(world, h.turn_score[p], h._hands[p].bit_count(), h.koikoi_calls[p])
        ):
            return KOIKOI
        return STOP
    if not (len(legal) == 1 or DECLARE in legal or legal[0] >= DRAW_TAKE_BASE):
        started[0] = True
    return _greedy_move(h, noise)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_a_policy_may_call_koikoi(name):
    """A policy with a koikoi method (:meth:`koikoi.batch.BatchHands.play_policy`) calls koi-koi where it
    says so (and the rules allow it): every world still ends as the engine ends it."""
    rng = random.Random(name + "/calls")
    gen = np.random.default_rng(len(name) + 7)
    compared = called = 0
    for obs in _positions(PRESETS[name], 30, rng):
        sampler = WorldSampler(obs, random.Random(1))
        w = 8
        held, stocks = sample_hidden(gen, sampler.unseen, sampler.n_opp, None, w)
        noise = gen.random((w, 48)) * 0.5
        actions = list(obs.legal_actions)
        b = worlds(sampler.template, sampler.other, held, stocks, len(actions))
        b.apply(np.repeat(np.array(actions, dtype=np.int64), w), np.ones(b.n, dtype=bool))
        b.play_policy(_CallingPolicy(noise, b.n))
        got = b._deltas.T.reshape(len(actions), w, 2)
        for i, a in enumerate(actions):
            for k in range(w):
                h = _engine_world(sampler, int(held[k]), [int(c) for c in stocks[k]])
                h.apply_action(a)
                started = [False]
                move = lambda h, n=noise[k], k=k, s=started: _calling_move(h, n, k, s)  # noqa: E731
                calls_before = sum(h.koikoi_calls)
                assert tuple(int(x) for x in got[i, k]) == _play_out(h, (move, move)), (name, obs.phase, a, k)
                called += sum(h.koikoi_calls) > calls_before
                compared += 1
    assert compared > 200
    assert called > 10  # koi-koi was called in the playouts, not only allowed


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
