"""The search's batched playouts (koikoi.ai.batchplay) play the greedy policy by the engine's rules:
every world of a batch ends as the engine ends it when the same choices are made through its public
moves, for every preset, from every phase; and the sampled hidden cards are always a possible deal."""

import random

import numpy as np
import pytest
from test_fastplay import _positions

from koikoi.actions import DECLARE, DRAW_TAKE_BASE, KOIKOI, PLAY_TAKE_BASE, STOP
from koikoi.ai.batchplay import (
    _PLAY_VALUE,
    _VAL,
    YAKU_NOISE,
    GreedyPolicy,
    PlayValues,
    YakuPolicy,
    _gain_table,
    play_worlds,
    sample_hidden,
    worlds,
)
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


def _calls_koikoi(world, points, left, calls):
    """The koi-koi rule of the test policy below: a mix of everything it is given, so that a wrong one shows."""
    return (world + points + 2 * left + 3 * calls) % 3 == 0


class _CallingPolicy(GreedyPolicy):
    """The greedy policy on other card values, calling koi-koi by :func:`_calls_koikoi`."""

    def __init__(self, noise, rows):
        super().__init__(noise, rows, _VALUES)
        self.worlds = len(noise)

    def koikoi(self, rows, points, left, calls):
        return _calls_koikoi(rows % self.worlds, points, left, calls)


_PLAYED = [(7 * c) % 11 + 0.5 for c in range(48)]
_TAKEN = [(5 * c) % 13 + 0.25 for c in range(48)]
_SHED = [-((3 * c) % 7) - 0.75 for c in range(48)]
_VALUES = PlayValues(_PLAYED, _TAKEN, _SHED)


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
    a0 = legal[0]
    if len(legal) == 1 or DECLARE in legal:
        return _greedy_move(h, noise)
    if a0 >= DRAW_TAKE_BASE:
        t0, t1 = a0 - DRAW_TAKE_BASE, legal[1] - DRAW_TAKE_BASE
        return a0 if _TAKEN[t0] >= _TAKEN[t1] else legal[1]
    started[0] = True
    a, best = a0, -1e18
    for x in legal:
        if x < PLAY_TAKE_BASE:
            c = x
            v = (_SHED[c] if not h.table >> (c & 60) & 15 else _PLAYED[c] + _best_take(h.table, c)) + noise[c]
        else:
            c = (x - PLAY_TAKE_BASE) >> 2
            v = _PLAYED[c] + _TAKEN[(c & ~3) | (x & 3)] + noise[c]
        if v > best:
            a, best = x, v
    return a


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_a_policy_may_call_koikoi_and_value_cards_its_own_way(name):
    """A policy with a koikoi method calls koi-koi where it says so (and the rules allow it), and one made
    of other card values plays by them: every world still ends as the engine ends it."""
    rng = random.Random(name + "/calls")
    gen = np.random.default_rng(len(name) + 7)
    compared = called = 0
    for obs in _positions(PRESETS[name], 30, rng):
        sampler = WorldSampler(obs, random.Random(1))
        w = 8
        held, stocks = sample_hidden(gen, sampler.unseen, sampler.n_opp, None, w)
        noise = gen.random((w, 48)) * 0.5
        actions = list(obs.legal_actions)
        got = play_worlds(sampler.template, sampler.other, held, stocks, actions, noise, _CallingPolicy)
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


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_play_cut_after_some_turns_goes_on_where_it_stopped(name):
    """``play_policy(turns=k)`` leaves the hands still in play at the start of a turn, with the player to
    play it; playing on from there ends every world as playing it through does (koi-koi calls too)."""
    rng = random.Random(name + "/cut")
    gen = np.random.default_rng(len(name) + 11)
    waited = 0
    for obs in _positions(PRESETS[name], 12, rng):
        sampler = WorldSampler(obs, random.Random(1))
        w = 8
        held, stocks = sample_hidden(gen, sampler.unseen, sampler.n_opp, None, w)
        noise = gen.random((w, 48)) * 0.5
        actions = np.repeat(np.array(obs.legal_actions, dtype=np.int64), w)
        for turns in (0, 1, 2, 5):
            whole, cut = (worlds(sampler.template, sampler.other, held, stocks, len(obs.legal_actions)) for _ in "ab")
            for b in (whole, cut):
                b.apply(actions, np.ones(b.n, dtype=bool))
            whole.play_policy(_CallingPolicy(noise, whole.n))
            policy = _CallingPolicy(noise, cut.n)
            cut.play_policy(policy, turns=turns)
            waiting = ~cut.over
            waited += int(waiting.sum())
            assert (cut.phase[waiting] == 0).all()  # at the start of a turn
            # the player to move holds a card more than the other, or as many when they move second
            counts = np.bitwise_count(cut._hands).astype(int)
            mover = cut.current_player[waiting]
            ahead = counts[mover, np.flatnonzero(waiting)] - counts[1 - mover, np.flatnonzero(waiting)]
            assert set(ahead.tolist()) <= {0, 1}
            cut.play_policy(policy)
            assert (cut._deltas == whole._deltas).all(), (name, obs.phase, turns)
    assert waited > 100
    with pytest.raises(ValueError, match="turns must be at least 0"):
        worlds(sampler.template, sampler.other, held, stocks, 1).play_policy(_CallingPolicy(noise, w), turns=-1)


def _best_take(table, c):
    """What card ``c``'s plain play takes, by the test's values: all of the month's table cards (one or
    three; two cards make a choice, played as its own actions)."""
    return sum(_TAKEN[t] for t in range(c & ~3, (c & ~3) + 4) if table >> t & 1)


def test_play_values_need_a_value_for_every_card():
    assert (PlayValues().play == _PLAY_VALUE).all()
    with pytest.raises(ValueError, match="taken needs a value for each of the 48 cards, not 47"):
        PlayValues(taken=[1.0] * 47)
    with pytest.raises(ValueError, match="shed holds a value that is not a finite number"):
        PlayValues(shed=[0.0] * 47 + [float("nan")])


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
