"""Hand.from_observation: a search AI's sampled world, built from what one player sees."""

import random

import pytest

from koikoi.cards import iter_cards
from koikoi.hand import Hand
from koikoi.match import Match
from koikoi.rules import PRESETS


def _hidden_of(match, player):
    h = match.hand
    return h.hands[1 - player], h.stock[h.stock_pos :]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_the_true_hidden_cards_rebuild_the_same_hand(name):
    rng = random.Random(name)
    for seed in range(6):
        m = Match(PRESETS[name], seed, birth_months=(2, 9))
        while not m.is_over():
            h = m.hand
            p = h.current_player
            obs = m.observation(p)
            opp, stock = _hidden_of(m, p)
            twin = Hand.from_observation(obs, opp, stock)
            assert twin.legal_actions() == h.legal_actions()
            # The same actions lead both to the same end of the hand.
            real = h.clone()
            while not real.is_over():
                a = rng.choice(real.legal_actions())
                assert twin.legal_actions() == real.legal_actions()
                real.apply_action(a)
                twin.apply_action(a)
                assert (twin.table, twin.piles, twin.hands) == (real.table, real.piles, real.hands)
            assert twin.result == real.result
            m.apply_action(rng.choice(m.legal_actions()))


def test_any_consistent_guess_is_accepted_and_wrong_ones_are_refused():
    m = Match(PRESETS["nintendo"], 5)
    obs = m.observation(m.current_player)
    unseen = list(iter_cards(obs.unseen_mask))
    random.Random(1).shuffle(unseen)
    k = obs.opponent_hand_count
    guess_hand = sum(1 << c for c in unseen[:k])
    h = Hand.from_observation(obs, guess_hand, unseen[k:])
    assert h.cards_accounted_for() and h.legal_actions() == list(obs.legal_actions)
    with pytest.raises(ValueError, match="unseen cards"):
        Hand.from_observation(obs, guess_hand, unseen[k:-1])  # a card short
    with pytest.raises(ValueError, match="unseen cards"):
        Hand.from_observation(obs, guess_hand | obs.hand_mask & -obs.hand_mask, unseen[k:])  # own card
