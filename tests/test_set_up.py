"""Hand.set_up and Match.from_hand: a position set up by hand (a lesson's) plays exactly as the same position
reached in a game, and a position that cannot be is refused with what is wrong."""

from __future__ import annotations

import random

import pytest

from koikoi.cards import CARD_NAMES, cards_mask
from koikoi.hand import Hand, Phase
from koikoi.match import Match
from koikoi.rules import PRESETS, preset


def moments(name: str, seed: int):
    """Every moment of a random match whose player is to play a card (no drawn card waiting)."""
    rng = random.Random(seed)
    m = Match(PRESETS[name], seed, birth_months=(3, 8))
    while not m.is_over():
        h = m.hand
        if h.phase == Phase.PLAY and h.stock_count and h.hands[h.current_player]:
            yield h
        m.apply_action(rng.choice(m.legal_actions()))


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_a_position_set_up_plays_as_the_same_position_in_a_game(name):
    rng = random.Random(name)
    checked = 0
    for seed in range(3):
        for h in moments(name, seed):
            if rng.random() > 0.3:
                continue
            twin = Hand.set_up(
                h.rules,
                hands=(h.hands[0], h.hands[1]),
                table=h.table,
                piles=(h.piles[0], h.piles[1]),
                stock=h.stock[h.stock_pos :],
                player=h.current_player,
                dealer=h.dealer,
                month=h.month,
                koikoi_calls=(h.koikoi_calls[0], h.koikoi_calls[1]),
                last_koikoi=None if h.last_koikoi < 0 else h.last_koikoi,
                table_brights=h.table_brights,
            )
            real = h.clone()
            while not real.is_over():
                assert twin.legal_actions() == real.legal_actions()
                assert (twin.current_player, twin.phase, twin.table, twin.piles) == (
                    real.current_player,
                    real.phase,
                    real.table,
                    real.piles,
                )
                a = rng.choice(real.legal_actions())
                real.apply_action(a)
                twin.apply_action(a)
            assert twin.is_over() and twin.result == real.result
            checked += 1
    assert checked > 5


def test_a_match_plays_on_from_a_hand_set_up():
    rules = preset("nintendo").replace(hands=1)
    names = [c for c in CARD_NAMES]
    deck = list(range(48))
    hand = Hand.set_up(
        rules,
        hands=(cards_mask(deck[0:4]), cards_mask(deck[4:8])),
        table=cards_mask(deck[8:14]),
        piles=(cards_mask(deck[14:16]), cards_mask(deck[16:18])),
        stock=deck[18:],
        player=0,
    )
    m = Match.from_hand(hand, seed=3)
    assert m.observation(0).hand == tuple(deck[0:4]) and names[0] == CARD_NAMES[0]
    rng = random.Random(1)
    while not m.is_over():
        m.apply_action(rng.choice(m.legal_actions()))
    assert m.outcome is not None and len(m.results) == 1


def refused(**changes) -> str:
    deck = list(range(48))
    args = dict(
        hands=(cards_mask(deck[0:4]), cards_mask(deck[4:8])),
        table=cards_mask(deck[8:14]),
        piles=(0, 0),
        stock=deck[14:],
        player=0,
    )
    args.update(changes)
    with pytest.raises(ValueError) as e:
        Hand.set_up(preset("nintendo"), **args)
    return str(e.value)


def test_a_position_that_cannot_be_is_refused_with_what_is_wrong():
    deck = list(range(48))
    assert "in hand 1 and somewhere else too" in refused(hands=(cards_mask(deck[0:4]), cards_mask(deck[3:8])))
    assert "pine-crane" in refused(hands=(cards_mask(deck[1:4]), cards_mask(deck[4:8]))) and "in no place" in refused(
        hands=(cards_mask(deck[1:4]), cards_mask(deck[4:8]))
    )
    assert "holds no card" in refused(hands=(0, cards_mask(deck[0:8])))
    assert "the stock is empty" in refused(stock=[], piles=(cards_mask(deck[14:]), 0))
    brights = cards_mask([0, 8, 28])  # the crane, the curtain, the moon: sanko
    rest = [c for c in deck if c not in (0, 8, 28)]
    msg = refused(
        hands=(cards_mask(rest[0:4]), cards_mask(rest[4:8])),
        table=cards_mask(rest[8:14]),
        piles=(brights, 0),
        stock=rest[14:],
    )
    assert "holds a yaku" in msg
    assert "say who called last" in refused(koikoi_calls=(1, 1))
    assert "last_koikoi is a player who called" in refused(koikoi_calls=(1, 0), last_koikoi=1)
    assert "player must be 0 or 1" in refused(player=2)
    assert "month must be 1..12" in refused(month=13)
