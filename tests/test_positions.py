"""Positions (koikoi.observation.positions): the hand in dealt order, the table's slots with their gaps,
the piles in capture order; a dealt hand played by hand, invariants over random matches of every
preset, records, and no hidden card in them (the opponent's hand order above all)."""

from __future__ import annotations

import json
import random

import pytest
from test_no_leak import rearranged

from koikoi.cards import CARD_NAMES, card, iter_cards
from koikoi.hand import Hand
from koikoi.match import Match, ScriptedChance
from koikoi.observation import Positions, hand_positions, positions
from koikoi.records import GameRecord, replay_steps
from koikoi.rules import PRESET_NAMES, preset

BIRTH_MONTHS = (2, 9)

# A deal under 4-4 with player 0 dealing: the non-dealer (player 1) gets cards 1-4 and 13-16, the dealer
# 5-8 and 17-20, the table 9-12 and 21-24; the stock follows.
DEALT = {
    "p1": ["chrysanthemum-sake", "iris-plain-2", "willow-swallow", "wisteria-ribbon"],
    "p0": ["maple-deer", "plum-poetry", "paulownia-phoenix", "cherry-plain-1"],
    "table": ["pine-crane", "plum-warbler", "cherry-curtain", "iris-plain-1"],
    "p1b": ["peony-blue", "clover-plain-1", "pampas-plain-1", "maple-plain-1"],
    "p0b": ["willow-ribbon", "wisteria-plain-1", "peony-plain-1", "chrysanthemum-plain-1"],
    "tableb": ["iris-bridge", "iris-ribbon", "clover-boar", "pampas-moon"],
    "stock": [
        "maple-blue",
        "pine-poetry",
        "willow-rainman",
        "chrysanthemum-blue",
        "paulownia-plain-1",
        "pine-plain-1",
        "plum-plain-1",
    ],
}


def scripted_deck() -> list[int]:
    named = [name for part in DEALT.values() for name in part]
    deck = [card(n) for n in named]
    return deck + [c for c in range(48) if c not in deck]


def names(cards) -> list[str | None]:
    return [None if c is None else CARD_NAMES[c] for c in cards]


def test_a_hand_played_by_hand():
    rules = preset("cardavia")
    deck = scripted_deck()
    h = Hand(rules, deck, dealer=0, month=1)
    p0 = hand_positions(h, deck, 0)
    # The dealt order, not the sorted one; the dealt table in slots 0-7.
    assert names(p0.hand) == DEALT["p0"] + DEALT["p0b"]
    assert list(p0.hand) != sorted(p0.hand)
    assert names(p0.table) == DEALT["table"] + DEALT["tableb"]
    assert p0.piles == ((), ())
    assert names(hand_positions(h, deck, 1).hand) == DEALT["p1"] + DEALT["p1b"]
    # (player, the card played, what happens) and then the table (slot by slot, "_" a gap) and, where
    # given, both piles as they must lie.
    turns = [
        (0, "plum-poetry", "takes plum-warbler from slot 1; maple-blue is drawn and fills that gap",
         "pine-crane maple-blue cherry-curtain iris-plain-1 iris-bridge iris-ribbon clover-boar pampas-moon",
         ["plum-poetry plum-warbler", ""]),
        (1, "iris-plain-2", "takes the three irises, in slot order; pine-poetry drawn takes pine-crane",
         "_ maple-blue cherry-curtain _ _ _ clover-boar pampas-moon",
         ["plum-poetry plum-warbler",
          "iris-plain-2 iris-plain-1 iris-bridge iris-ribbon pine-poetry pine-crane"]),
        (0, "wisteria-plain-1", "joins the table at the first gap (0); willow-rainman drawn at the next (3)",
         "wisteria-plain-1 maple-blue cherry-curtain willow-rainman _ _ clover-boar pampas-moon", None),
        (1, "maple-plain-1", "takes maple-blue (slot 1); chrysanthemum-blue drawn fills slot 1",
         "wisteria-plain-1 chrysanthemum-blue cherry-curtain willow-rainman _ _ clover-boar pampas-moon", None),
        (0, "peony-plain-1", "slot 4; paulownia-plain-1 drawn: slot 5; the table has no gap left",
         "wisteria-plain-1 chrysanthemum-blue cherry-curtain willow-rainman peony-plain-1 paulownia-plain-1 "
         "clover-boar pampas-moon", None),
        (1, "wisteria-ribbon", "takes wisteria-plain-1 (slot 0); pine-plain-1 drawn fills it",
         "pine-plain-1 chrysanthemum-blue cherry-curtain willow-rainman peony-plain-1 paulownia-plain-1 "
         "clover-boar pampas-moon", None),
        (0, "maple-deer", "no gap: a new slot at the end, and another for plum-plain-1 drawn",
         "pine-plain-1 chrysanthemum-blue cherry-curtain willow-rainman peony-plain-1 paulownia-plain-1 "
         "clover-boar pampas-moon maple-deer plum-plain-1",
         ["plum-poetry plum-warbler",
          "iris-plain-2 iris-plain-1 iris-bridge iris-ribbon pine-poetry pine-crane maple-plain-1 maple-blue "
          "wisteria-ribbon wisteria-plain-1"]),
    ]  # fmt: skip
    for player, played, what, table, piles in turns:
        assert h.current_player == player, what
        h.apply_action(card(played))
        for seat in (0, 1):
            p = hand_positions(h, deck, seat)
            assert names(p.table) == [None if n == "_" else n for n in table.split()], what
            if piles is not None:
                assert [names(pile) for pile in p.piles] == [pile.split() for pile in piles], what
    # Played cards leave the dealt order; the rest keep their places.
    assert names(hand_positions(h, deck, 0).hand) == [
        "paulownia-phoenix", "cherry-plain-1", "willow-ribbon", "chrysanthemum-plain-1"
    ]  # fmt: skip
    assert names(hand_positions(h, deck, 1).hand) == [
        "chrysanthemum-sake",
        "willow-swallow",
        "peony-blue",
        "clover-plain-1",
        "pampas-plain-1",
    ]


def test_the_same_hand_through_a_match_and_its_json():
    deck = scripted_deck()
    # dealer_selection random: one drawn card, its parity names the dealer (0: an even card id).
    m = Match(preset("cardavia"), chance=ScriptedChance([deck], [0]))
    assert m.hand.dealer == 0
    m.apply_action(card("plum-poetry"))
    m.apply_action(card("iris-plain-2"))
    p = positions(m, 1)
    assert p == hand_positions(m.hand, deck, 1)
    assert p.to_dict() == {
        "hand": ["chrysanthemum-sake", "willow-swallow", "wisteria-ribbon", "peony-blue", "clover-plain-1",
                 "pampas-plain-1", "maple-plain-1"],
        "table": [None, "maple-blue", "cherry-curtain", None, None, None, "clover-boar", "pampas-moon"],
        "piles": [["plum-poetry", "plum-warbler"],
                  ["iris-plain-2", "iris-plain-1", "iris-bridge", "iris-ribbon", "pine-poetry", "pine-crane"]],
    }  # fmt: skip
    json.dumps(p.to_dict())


def test_a_drawn_card_waiting_for_its_choice_is_on_no_slot():
    # Draw a card whose month has two cards on the table: it waits in drawn_card, on no slot.
    rng = random.Random(11)
    rules = preset("nintendo")
    found = 0
    for seed in range(400):
        m = Match(rules, seed=seed)
        while not m.is_over() and found < 5:
            if m.hand.drawn_card >= 0:
                p = positions(m, m.current_player)
                assert m.hand.drawn_card not in p.table
                assert m.hand.drawn_card not in p.piles[0] + p.piles[1]
                found += 1
                break
            m.apply_action(rng.choice(m.legal_actions()))
        if found >= 5:
            break
    assert found == 5


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_invariants_over_random_matches(name):
    rules = preset(name)
    rng = random.Random(name)
    for seed in range(12):
        m = Match(rules, seed=seed, birth_months=BIRTH_MONTHS)
        last: dict[int, Positions] = {}
        hand_number = 0
        while True:
            if m.hand_number != hand_number:
                hand_number, last = m.hand_number, {}
            deck = m.hands[-1].decks[-1]
            # The deck cards dealt to the non-dealer and to the dealer (docs/records.md, "Chance").
            indexes = {
                "4-4": ((0, 1, 2, 3, 12, 13, 14, 15), (4, 5, 6, 7, 16, 17, 18, 19)),
                "2-2": ((0, 1, 6, 7, 12, 13, 18, 19), (2, 3, 8, 9, 14, 15, 20, 21)),
            }[rules.deal_pattern]
            for seat in (0, 1):
                obs = m.observation(seat)
                p = positions(m, seat)
                # The same cards as the observation's sets.
                assert sorted(p.hand) == list(obs.hand)
                assert sorted(c for c in p.table if c is not None) == list(obs.table)
                assert [sorted(pile) for pile in p.piles] == [list(pile) for pile in obs.piles]
                # The hand keeps the dealt order.
                dealt = [deck[i] for i in indexes[seat == m.hand.dealer]]
                assert list(p.hand) == [c for c in dealt if c in p.hand]
                before = last.get(seat)
                if before is not None:
                    # A card on the table never moves; slots are never removed; piles only grow at the end.
                    assert len(p.table) >= len(before.table)
                    for slot, c in enumerate(before.table):
                        if c is not None and c in p.table:
                            assert p.table[slot] == c
                    for pile, was in zip(p.piles, before.piles):
                        assert pile[: len(was)] == was
                    assert [c for c in before.hand if c in p.hand] == list(p.hand)
                last[seat] = p
            if m.is_over():
                break
            m.apply_action(rng.choice(m.legal_actions()))


def test_no_hidden_card_and_no_opponent_order_in_positions():
    # Rearranging what player 0 cannot see (the opponent's hand, in its deck places, and the stock) leaves
    # player 0's positions exactly as they were: nothing of the opponent's order gets through.
    rng = random.Random(5)
    compared = 0
    for seed in range(60):
        m = Match(preset("nintendo"), seed=seed)
        steps = rng.randrange(0, 14)
        for _ in range(steps):
            if m.is_over():
                break
            m.apply_action(rng.choice(m.legal_actions()))
        if m.is_over():
            continue
        for player in (0, 1):
            twin = rearranged(m, player, rng)
            if twin is None:
                continue
            assert positions(twin, player) == positions(m, player)
            text = json.dumps(positions(m, player).to_dict())
            h = m.hand
            hidden = ((1 << 48) - 1) & ~(h.hands[player] | h.table | h.piles[0] | h.piles[1])
            if h.drawn_card >= 0:
                hidden &= ~(1 << h.drawn_card)
            for c in iter_cards(hidden):
                assert CARD_NAMES[c] not in text
            compared += 1
    assert compared > 50


def test_the_opponents_dealt_order_changes_nothing():
    # The same cards dealt to player 1 in another order: player 0's positions are the same.
    deck = scripted_deck()
    other = list(deck)
    other[0:4], other[12:16] = deck[12:16], deck[0:4]
    rules = preset("cardavia")
    a, b = Hand(rules, deck, 0, 1), Hand(rules, other, 0, 1)
    for h in (a, b):
        h.apply_action(card("plum-poetry"))
    assert hand_positions(a, deck, 0) == hand_positions(b, other, 0)
    assert hand_positions(a, deck, 1).hand != hand_positions(b, other, 1).hand


def test_wrong_deck_or_player_is_refused():
    deck = scripted_deck()
    rules = preset("cardavia")
    h = Hand(rules, deck, 0, 1)
    with pytest.raises(ValueError, match="player must be 0 or 1, not 2"):
        hand_positions(h, deck, 2)
    with pytest.raises(ValueError, match="a deck holds 48 cards, not 47"):
        hand_positions(h, deck[:47], 0)
    swapped = list(deck)
    swapped[4], swapped[8] = deck[8], deck[4]  # a dealer's card and a table card change places
    with pytest.raises(ValueError, match="not dealt from this deck"):
        hand_positions(h, swapped, 0)
    m = Match(rules, seed=1)
    with pytest.raises(ValueError, match="player must be 0 or 1"):
        positions(m, -1)


def test_records_give_the_positions_of_every_step():
    rules = preset("bga")
    m = Match(rules, seed=21)
    rng = random.Random(21)
    while not m.is_over():
        m.apply_action(rng.choice(m.legal_actions()))
    record = GameRecord.from_json(GameRecord.from_match(m).to_json())
    steps = list(replay_steps(record))
    ends = 0
    for step in steps:
        for seat in (0, 1):
            same_hand = step.after.hand_number == step.hand_number and not step.results
            if same_hand:
                assert step.positions(seat) == positions(step.after, seat)
            else:
                ends += 1
                # At the end of a hand: where every card lay when it ended.
                final = step.positions(seat)
                h = step.hand_after
                assert sorted(c for c in final.table if c is not None) == sorted(iter_cards(h.table))
                assert [sorted(p) for p in final.piles] == [sorted(iter_cards(p)) for p in h.piles]
    assert ends >= 2
