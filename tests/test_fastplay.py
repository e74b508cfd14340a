"""The search's fast playout plays exactly the policy that the engine-driven playout defines, and the
world sampler builds exactly the hands Hand.from_observation builds."""

import random

import pytest

from koikoi.ai.fastplay import NOISE_SPAN, fast_playout, noise_pool, playout
from koikoi.ai.search import WorldSampler
from koikoi.cards import card_list
from koikoi.hand import Hand
from koikoi.match import Match
from koikoi.rules import PRESETS


def _positions(rules, count, rng):
    """Observations of the player to move, from random play to a random depth (every phase comes up)."""
    out = []
    seed = 0
    while len(out) < count:
        seed += 1
        m = Match(rules, seed=seed, birth_months=(2, 10))
        for _ in range(rng.randrange(0, 34)):
            if m.is_over():
                break
            m.apply_action(rng.choice(m.observation(m.current_player).legal_actions))
        if m.is_over():
            continue
        obs = m.observation(m.current_player)
        if obs.phase != "over":
            out.append(obs)
    return out


def _world(obs, rng):
    unseen = card_list(obs.unseen_mask)
    rng.shuffle(unseen)
    n = obs.opponent_hand_count
    return Hand.from_observation(obs, sum(1 << c for c in unseen[:n]), unseen[n:])


def _state(h):
    return (h.result, h.piles, h.hands, h.table, h.stock_pos, h.current_player, h.is_over())


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_fast_playout_is_the_engine_playout(name):
    rng = random.Random(name)
    phases = set()
    compared = 0
    for obs in _positions(PRESETS[name], 40, rng):
        phases.add(obs.phase)
        world = _world(obs, rng)
        noise = noise_pool(rng, rng.choice([0.0, 1.5, 4.0]), size=64)
        for a in obs.legal_actions:
            k = rng.randrange(64)
            slow, fast, bare = world.clone(), world.clone(), world.clone()
            slow.apply_action(a)
            fast.apply_action(a)
            bare.apply_action(a)
            assert playout(slow, noise, k) == fast_playout(fast, noise, k)
            # What the search reads: the score changes alone, from a hand it throws away.
            assert fast_playout(bare, noise, k, deltas_only=True) == slow.result.deltas, (name, obs.phase, a)
            assert _state(slow) == _state(fast), (name, obs.phase, a)
            assert fast.cards_accounted_for()
            compared += 1
    assert compared > 100
    assert {"play", "decision"} <= phases


def test_fast_playout_declares_a_dealt_hand_bonus():
    """Traditional rules make the hand bonus a declaration: the policy declares it, in both versions."""
    rules = PRESETS["traditional"]
    rng = random.Random(3)
    seen = 0
    for _ in range(3000):
        deck = rng.sample(range(48), 48)
        h = Hand(rules, deck, dealer=0)
        if h.is_over() or not any(h.declarable):
            continue
        noise = noise_pool(rng, 1.5, size=8)
        slow, fast = h.clone(), h.clone()
        assert playout(slow, noise) == fast_playout(fast, noise)
        assert _state(slow) == _state(fast)
        assert fast.result.reason in ("hand_bonus", "stop", "exhausted")
        seen += fast.result.reason == "hand_bonus"
    assert seen >= 3


def test_a_playout_reads_at_most_noise_span_values():
    """The noise pool's tail is long enough for any playout, even with a capture choice every turn."""
    rng = random.Random(5)
    for name in ("nintendo", "traditional", "bga"):
        for obs in _positions(PRESETS[name], 30, rng):
            h = _world(obs, rng)
            h.apply_action(obs.legal_actions[0])
            fast_playout(h, [0.5] * NOISE_SPAN, 0)  # an IndexError would mean the span is too short


@pytest.mark.parametrize("name", ["nintendo", "traditional", "boardgame"])
def test_world_sampler_builds_what_from_observation_builds(name):
    rng = random.Random(7)
    for obs in _positions(PRESETS[name], 25, rng):
        sample = WorldSampler(obs, random.Random(1)).build
        order = card_list(obs.unseen_mask)
        rng.shuffle(order)
        n = obs.opponent_hand_count
        got = sample(order[:])
        want = Hand.from_observation(obs, sum(1 << c for c in order[:n]), order[n:])
        for slot in Hand.__slots__:
            if slot != "_score":
                assert getattr(got, slot) == getattr(want, slot), slot
        # The sampler's hands are independent of each other and of the template.
        again = sample(order[:])
        again.apply_action(obs.legal_actions[0])
        assert _state(sample(order[:])) == _state(want)
