"""Hidden information stays hidden: a player's observation must not change when the cards they
cannot see (the opponent's hand and the stock) are rearranged, and its JSON must not name them or
carry the seed (STYLE.md 4, docs/rules.md section 2).

The rearranged game is built from scratch: the current hand's deck order is changed only at the
positions that now hold hidden cards, the match is dealt again from those decks
(``ScriptedChance``, no seed at all) and the same actions are replayed.
"""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shrinking import scripted_randoms

from koikoi.actions import KOIKOI
from koikoi.cards import CARD_NAMES, NUM_CARDS, iter_cards
from koikoi.hand import Hand, IllegalActionError
from koikoi.match import Match, ScriptedChance
from koikoi.rules import PRESET_NAMES, PRESETS, RuleSet

BIRTH_MONTHS = (2, 9)


def new_match(rules: RuleSet, seed: int) -> Match:
    return Match(rules, seed, birth_months=BIRTH_MONTHS if rules.dealer_selection == "birth_month" else None)


def hidden_from(m: Match, player: int) -> int:
    """The cards ``player`` cannot see now: the opponent's hand and the rest of the stock."""
    h = m.hand
    seen = h.hands[player] | h.table | h.piles[0] | h.piles[1]
    if h.drawn_card >= 0:
        seen |= 1 << h.drawn_card
    return ((1 << NUM_CARDS) - 1) & ~seen


def hidden_from_spectators(m: Match) -> int:
    """The cards nobody watching can see now: both hands and the rest of the stock."""
    return hidden_from(m, 0) | m.hand.hands[0]


def rearranged(
    m: Match, player: int | None, rng: random.Random, which: int = -1, *, spectator: bool = False
) -> Match | None:
    """The same match with the cards hidden from ``player`` (with ``spectator``, from anyone watching:
    both hands) in hand ``which`` (-1: the current one, -2: the one before, as it ended) shuffled among
    their deck positions, dealt again without a seed and replayed; None if the new deal plays out
    differently (thrown in, or a hand bonus at the deal) or nothing hidden can move."""
    h = m.hand if which == -1 else m.previous_hand
    if h is None:
        return None
    assert m.hands[which].month == h.month and m.hands[which].dealer == h.dealer
    assert spectator or player is not None
    hidden_hands = h.hands[0] | h.hands[1] if spectator else h.hands[1 - (player or 0)]
    deck = m.hands[which].decks[-1]
    hidden_positions = [i for i, c in enumerate(deck) if (hidden_hands >> c) & 1]
    hidden_positions += range(NUM_CARDS - h.stock_count, NUM_CARDS)
    if which == -1:
        expected = hidden_from_spectators(m) if spectator else hidden_from(m, player or 0)
        assert sum(1 << deck[i] for i in hidden_positions) == expected
    if len(hidden_positions) < 2:
        return None
    cards = [deck[i] for i in hidden_positions]
    new_deck = list(deck)
    while new_deck == deck:
        rng.shuffle(cards)
        for i, c in zip(hidden_positions, cards):
            new_deck[i] = c
    # A rearranged deal that is thrown in or ends at once (a hand bonus) is another game: skip it.
    if Hand(m.rules, new_deck, h.dealer, h.month).is_over() or Hand(m.rules, deck, h.dealer, h.month).is_over():
        return None
    expected = [list(rec.decks) for rec in m.hands]
    expected[which][-1] = new_deck
    other = Match(
        m.rules, chance=ScriptedChance([d for ds in expected for d in ds], m.dealer_draws), birth_months=m.birth_months
    )
    for a in m.actions:
        try:
            other.apply_action(a)
        except IllegalActionError:
            # A move the new deal does not allow: the opponent declared a hand bonus (hand_bonus_declared)
            # with cards this deal gives it no longer. Another game, as above.
            return None
    if [rec.decks for rec in other.hands] != expected:
        return None
    return other


def assert_no_leak(m: Match, player: int, rng: random.Random) -> set[int]:
    """Checks one position for one player; returns which hands (-1, -2) a rearranged twin was compared for."""
    obs = m.observation(player)
    data = obs.to_dict()
    text = json.dumps(data, sort_keys=True)
    # The seed is nowhere in the observation, in any field or in the JSON.
    assert str(m.seed) not in text
    assert all(v != m.seed for v in dataclasses.astuple(obs))
    # No hidden card is named: not the opponent's hand, not the stock. The previous hand's events
    # name cards that were public then (played, drawn, captured) and may be hidden again now.
    current = json.dumps({k: v for k, v in data.items() if k != "previous_hand_events"}, sort_keys=True)
    hidden = hidden_from(m, player)
    opp_hand = m.hand.hands[1 - player]
    assert hidden & opp_hand == opp_hand
    for c in iter_cards(hidden):
        assert CARD_NAMES[c] not in current, f"{CARD_NAMES[c]} is hidden from player {player} but shown"
    assert obs.unseen_mask == hidden
    assert obs.opponent_hand_count == opp_hand.bit_count()
    compared = set()
    for which in (-1, -2):
        twin = rearranged(m, player, rng, which)
        if twin is None:
            continue
        assert twin.seed is None and twin.hand.hands[player] == m.hand.hands[player]
        assert twin.observation(player) == obs
        assert json.dumps(twin.observation(player).to_dict(), sort_keys=True) == text
        compared.add(which)
    return compared


def test_card_names_are_not_substrings_of_each_other():
    # The JSON check above looks for names as substrings; that is sound only because of this.
    for a in CARD_NAMES:
        assert [b for b in CARD_NAMES if a in b] == [a]


def koikoi_often(legal: list[int], rng: random.Random) -> int:
    if KOIKOI in legal and rng.random() < 0.7:
        return KOIKOI
    return rng.choice(legal)


@pytest.mark.parametrize("preset_name", PRESET_NAMES)
def test_every_position_of_some_games(preset_name):
    """Every position, for both players, of a few two-hand games per preset; every phase is seen."""
    rules = PRESETS[preset_name].replace(hands=2, target_score=0)
    seen_phases: set[str] = set()
    compared = {-1: 0, -2: 0}
    for seed in range(10**12, 10**12 + 6):
        m = new_match(rules, seed)
        rng = random.Random(seed)
        hand_number = m.hand_number
        while True:
            for player in (0, 1):
                for which in assert_no_leak(m, player, rng):
                    compared[which] += 1
            phase = m.phase.name.lower()
            seen_phases.add("match over" if m.is_over() else phase)
            if m.hand_number != hand_number:
                seen_phases.add("hand over")
                hand_number = m.hand_number
            if m.is_over():
                break
            m.apply_action(koikoi_often(m.legal_actions(), rng))
    assert {"play", "draw_choice", "decision", "hand over", "match over"} <= seen_phases
    assert compared[-1] > 100 and compared[-2] > 20, compared


@settings(max_examples=60, deadline=None)
@given(
    preset_name=st.sampled_from(PRESET_NAMES),
    seed=st.integers(10**12, 2**63 - 1),
    rng=scripted_randoms(),
    stop_at=st.integers(0, 120),
    player=st.integers(0, 1),
    deal_pattern=st.sampled_from(("4-4", "2-2")),
    declared=st.booleans(),
)
def test_random_positions(preset_name, seed, rng, stop_at, player, deal_pattern, declared):
    rules = PRESETS[preset_name].replace(
        hands=3, target_score=0, deal_pattern=deal_pattern, hand_bonus_declared=declared
    )
    m = new_match(rules, seed)
    for _ in range(stop_at):
        if m.is_over():
            break
        m.apply_action(koikoi_often(m.legal_actions(), rng))
    assert_no_leak(m, player, rng)


def test_the_twin_really_differs():
    # The check is not vacuous: the rearranged twin deals the opponent other cards.
    m = new_match(PRESETS["traditional"], 10**12 + 77)
    twin = rearranged(m, 0, random.Random(0))
    assert twin is not None
    assert twin.hand.hands[1] != m.hand.hands[1] or twin.observation(1) != m.observation(1)
    assert twin.observation(0) == m.observation(0)


# -- spectators (koikoi.web.views.spectator_view): nothing of either hand, the stock or the seed ------------


def spectator_cards(view: dict) -> int:
    """Every card a spectator's view names for the current hand (the last hand's own parts left out:
    its events and piles were public then and may be hidden again now)."""
    ids = list(view["hand"]) + list(view["table"])
    for pile in view["piles"]:
        for cards in pile.values():
            ids += cards
    if view["drawn_card"] is not None:
        ids.append(view["drawn_card"])
    for e in view["events"]:
        ids += list(e["captured"]) + ([e["card"]] if e["card"] is not None else [])
    mask = 0
    for c in ids:
        mask |= 1 << c
    return mask


def assert_nothing_hidden_watched(m: Match, rng: random.Random) -> set[int]:
    """One position as a spectator sees it; returns which hands (-1, -2) a rearranged twin was compared for."""
    from koikoi.web.views import spectator_view

    players = [{"name": "A", "kind": "human", "level": None, "joined": True}] * 2
    status = "finished" if m.is_over() else "playing"
    view = spectator_view(m, seq=len(m.actions), players=players, status=status)
    text = json.dumps(view, sort_keys=True)
    assert str(m.seed) not in text and "seed" not in text
    assert view["hand"] == [] and view["legal"] == [] and view["stakes"] is None and not view["can_declare"]
    assert view["to_move"] is False and view["hints"] is False and view["spectator"] is True
    if not m.is_over():
        hidden = hidden_from_spectators(m)
        assert not spectator_cards(view) & hidden, "a spectator was shown a card of a hand or of the stock"
        assert view["hand_counts"] == [m.hand.hands[0].bit_count(), m.hand.hands[1].bit_count()]
    compared = set()
    for which in (-1, -2):
        twin = rearranged(m, None, rng, which, spectator=True)
        if twin is None:
            continue
        assert twin.seed is None
        assert json.dumps(spectator_view(twin, seq=len(m.actions), players=players, status=status), sort_keys=True) == (
            text
        )
        compared.add(which)
    return compared


@pytest.mark.parametrize("preset_name", PRESET_NAMES)
def test_every_position_a_spectator_sees_hides_both_hands(preset_name):
    """Every position of a few two-hand games per preset as a spectator sees it: the same whichever way
    both hands and the stock are dealt, and naming none of their cards."""
    rules = PRESETS[preset_name].replace(hands=2, target_score=0)
    compared = {-1: 0, -2: 0}
    for seed in range(10**12, 10**12 + 4):
        m = new_match(rules, seed)
        rng = random.Random(seed)
        while True:
            for which in assert_nothing_hidden_watched(m, rng):
                compared[which] += 1
            if m.is_over():
                break
            m.apply_action(koikoi_often(m.legal_actions(), rng))
    assert compared[-1] > 50 and compared[-2] > 10, compared


@settings(max_examples=40, deadline=None)
@given(
    preset_name=st.sampled_from(PRESET_NAMES),
    seed=st.integers(10**12, 2**63 - 1),
    rng=scripted_randoms(),
    stop_at=st.integers(0, 120),
    deal_pattern=st.sampled_from(("4-4", "2-2")),
    declared=st.booleans(),
)
def test_random_positions_watched(preset_name, seed, rng, stop_at, deal_pattern, declared):
    rules = PRESETS[preset_name].replace(
        hands=3, target_score=0, deal_pattern=deal_pattern, hand_bonus_declared=declared
    )
    m = new_match(rules, seed)
    for _ in range(stop_at):
        if m.is_over():
            break
        m.apply_action(koikoi_often(m.legal_actions(), rng))
    assert_nothing_hidden_watched(m, rng)


def test_the_spectators_twin_really_differs():
    # Not vacuous: the twin deals both players other cards, and both players see it, but spectators do not.
    from koikoi.web.views import spectator_view

    m = new_match(PRESETS["traditional"], 10**12 + 77)
    twins = [rearranged(m, None, random.Random(i), spectator=True) for i in range(20)]
    assert all(t is not None for t in twins)
    assert any(t.hand.hands[0] != m.hand.hands[0] and t.hand.hands[1] != m.hand.hands[1] for t in twins if t)
    players = [{"name": "A", "kind": "human", "level": None, "joined": True}] * 2
    for t in twins:
        assert t is not None
        assert spectator_view(t, seq=0, players=players, status="playing") == spectator_view(
            m, seq=0, players=players, status="playing"
        )


def test_a_spectator_is_told_less_than_either_player():
    """The spectator's view is the public part of a seat's: every field it has, a seat has with the
    same value, except the hand (empty), the counts of both hands and the fields that say so."""
    from koikoi.web.views import seat_view, spectator_view

    m = new_match(PRESETS["traditional"], 10**12 + 5)
    rng = random.Random(5)
    for _ in range(9):
        m.apply_action(koikoi_often(m.legal_actions(), rng))
    players = [{"name": "A", "kind": "human", "level": None, "joined": True}] * 2
    watched = spectator_view(m, seq=9, players=players, status="playing")
    seats = [seat_view(m, s, seq=9, players=players, status="playing", hints=True) for s in (0, 1)]
    own = {"spectator", "hand_counts", "hand", "seat", "opponent_hand_count", "to_move", "legal", "can_declare"}
    for key, value in watched.items():
        if key in own or key in ("hints", "stakes"):
            continue
        assert value == seats[0][key] == seats[1][key], key
    assert seats[m.current_player]["legal"] and not watched["legal"]
