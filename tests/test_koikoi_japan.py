"""The koikoi-japan preset and the options it brought (docs/rules.md; issue 47): each rule of KoiKoi-Japan
as KoiKoi-AI's engine plays it (``koikoigame.py``: ``yaku``, ``yaku_point``, ``round_point``,
``claim_koikoi``, the deal's redeal), checked on the engine with positions set up for it. The contract
suite (test_rules_contract.py) checks that the batch agrees."""

from __future__ import annotations

import pytest

from koikoi.actions import KOIKOI, STOP, parse_action
from koikoi.cards import CARD_NAMES, cards_mask
from koikoi.hand import Hand
from koikoi.match import Match
from koikoi.rules import RuleSet, preset
from koikoi.yaku import evaluate

KKJ = preset("koikoi-japan")
SANKO = ("pine-crane", "cherry-curtain", "pampas-moon")


def set_up(
    pile0: tuple[str, ...],
    calls: tuple[int, int],
    pile1: tuple[str, ...] = (),
    last: int | None = None,
    rules: RuleSet = KKJ,
) -> Hand:
    """Player 0 to play, ``pile0`` and ``pile1`` captured, the rest dealt in a fixed order."""
    placed = cards_mask(list(pile0) + list(pile1))
    rest = [c for c in range(48) if not placed >> c & 1]
    hand0, hand1, table, stock = rest[:4], rest[4:8], rest[8:14], rest[14:]
    return Hand.set_up(
        rules,
        hands=(sum(1 << c for c in hand0), sum(1 << c for c in hand1)),
        table=sum(1 << c for c in table),
        piles=(cards_mask(list(pile0)), cards_mask(list(pile1))),
        stock=stock,
        player=0,
        koikoi_calls=calls,
        last_koikoi=last,
    )


@pytest.mark.parametrize(("calls", "points"), [(1, 6), (2, 7), (3, 8), (4, 10), (5, 15), (6, 20)])
def test_own_koikoi_calls_add_a_point_each_then_multiply(calls, points):
    """yaku_point: +1 a call for one to three calls, then the points times (calls - 2)."""
    h = set_up(SANKO, (calls, 0))
    result = h.settle_stop(0, "stop")
    assert result.points == points and result.deltas == (points, -points)
    names = [y.name for y in result.yaku]
    if calls <= 3:
        assert names == ["sanko", "koikoi"] and result.multiplier == 1 and result.base == 5 + calls
    else:
        assert names == ["sanko"] and result.multiplier == calls - 2 and result.base == 5


def test_the_opponents_koikoi_doubles_nothing_and_seven_points_are_not_doubled():
    h = set_up(("pine-crane", "cherry-curtain", "pampas-moon", "paulownia-phoenix"), (1, 2), ("clover-boar",), last=1)
    result = h.settle_stop(0, "stop")
    assert (result.base, result.multiplier, result.points) == (9, 1, 9)  # shiko 8 + one call


def test_sake_yaku_are_worth_three_after_ones_own_koikoi():
    moon_sake = ("pampas-moon", "chrysanthemum-sake")
    assert evaluate(cards_mask(list(moon_sake)), KKJ)[0].points == 1
    both = ("pampas-moon", "chrysanthemum-sake", "cherry-curtain")
    h = set_up(both, (1, 0))
    result = h.settle_stop(0, "stop")
    # tsukimi-zake 3 + hanami-zake 3 + one call; the curtain and moon are two brights: no sanko.
    assert {y.name: y.points for y in result.yaku} == {"tsukimi-zake": 3, "hanami-zake": 3, "koikoi": 1}
    assert result.points == 7
    # Under another sake_yaku setting the option changes nothing.
    rain = set_up(both, (1, 0), rules=KKJ.replace(sake_yaku="rain_ruins")).settle_stop(0, "stop")
    assert {y.name: y.points for y in rain.yaku} == {"tsukimi-zake": 1, "hanami-zake": 1, "koikoi": 1}


def test_akatan_and_aotan_together_score_ten_on_top_of_five_and_five():
    ribbons = "pine-poetry plum-poetry cherry-poetry peony-blue chrysanthemum-blue maple-blue".split()
    assert {y.name: y.points for y in evaluate(cards_mask(ribbons), KKJ)} == {
        "akatan-aotan": 10,
        "akatan": 5,
        "aotan": 5,
        "tanzaku": 2,
    }
    # Nintendo's pair replaces both instead.
    assert [y.name for y in evaluate(cards_mask(ribbons), preset("nintendo"))] == ["akatan-aotan", "tanzaku"]


def test_the_sake_cup_is_an_animal_and_chaff_and_the_lights_are_the_usual_ones():
    animals = "plum-warbler wisteria-cuckoo iris-bridge clover-boar chrysanthemum-sake".split()
    assert [(y.name, y.points) for y in evaluate(cards_mask(animals), KKJ)] == [("tane", 1)]
    chaff = [n for n in CARD_NAMES if "plain" in n][:9] + ["chrysanthemum-sake"]
    assert ("kasu", 1) in [(y.name, y.points) for y in evaluate(cards_mask(chaff), KKJ)]
    lights = ["pine-crane", "cherry-curtain", "pampas-moon", "willow-rainman", "paulownia-phoenix"]
    for cards, name, pts in [
        (lights, "goko", 10),
        (lights[:3] + lights[4:], "shiko", 8),
        (lights[:4], "ame-shiko", 7),
        (lights[:3], "sanko", 5),
    ]:
        assert [(y.name, y.points) for y in evaluate(cards_mask(cards), KKJ)] == [(name, pts)]


def deck_with_hand(hand: list[int]) -> list[int]:
    """A deck whose first player's hand (the non-dealer's, deal pattern 4-4, dealer 0) is ``hand``."""
    rest = sorted((c for c in range(48) if c not in hand), key=lambda c: (c % 4, c))  # months apart
    # 4-4: four to the non-dealer, four to the dealer, four to the table, twice.
    order = hand[:4] + rest[:4] + rest[4:8] + hand[4:] + rest[8:12] + rest[12:16] + rest[16:]
    return order


def test_four_of_a_month_in_a_dealt_hand_is_a_redeal_and_pays_no_bonus():
    four = [0, 1, 2, 3, 20, 24, 36, 44]  # all of pine, and four cards of four other months
    deck = deck_with_hand(four)
    h = Hand(KKJ, deck, dealer=0)
    assert h.needs_redeal and h.result is not None and h.result.reason == "redeal"
    # The same deal under the traditional rules: teshi, a hand bonus.
    teshi = Hand(preset("traditional"), deck, dealer=0)
    assert teshi.result is None and any(teshi.declarable)
    # OHA's rule: four pairs redeal, as a separate setting.
    pairs = [0, 1, 4, 5, 8, 9, 12, 13]
    oha = KKJ.replace(redeal_on_hand_pairs=True)
    assert Hand(oha, deck_with_hand(pairs), dealer=0).needs_redeal
    assert not Hand(KKJ, deck_with_hand(pairs), dealer=0).needs_redeal


def test_an_exhausted_hand_pays_the_dealer_one_whatever_yaku_are_held_and_the_dealer_keeps_the_deal():
    held = 0
    for seed in range(200):
        m = Match(KKJ, seed=seed)
        while not m.is_over():
            h = m.hand
            legal = m.legal_actions()
            # Koi-koi whenever possible: yaku are held but nobody stops, so hands run out.
            m.apply_action(KOIKOI if KOIKOI in legal else legal[0])
            if m.results and m.results[-1].reason == "exhausted" and h.result is m.results[-1]:
                result, dealer = m.results[-1], h.dealer
                assert result.deltas[dealer] == 1 and result.deltas[1 - dealer] == -1
                held += bool(h.koikoi_calls[0] or h.koikoi_calls[1])
                if not m.is_over():
                    assert m.hand.dealer == dealer  # the dealer deals again
                if held:
                    return
    pytest.fail("no hand ran out with a yaku held")


def test_no_koikoi_on_a_players_last_turn():
    """claim_koikoi: a yaku made on the eighth turn ends the hand (here only stop is legal)."""
    placed = ("pampas-plain-1", "iris-plain-1", "pampas-moon", "pine-crane", "cherry-curtain")
    last = Hand.set_up(
        KKJ,
        hands=(cards_mask(["pampas-plain-1"]), cards_mask(["iris-plain-1"])),
        table=cards_mask(["pampas-moon"]),
        piles=(cards_mask(["pine-crane", "cherry-curtain"]), 0),
        stock=[c for c in range(48) if CARD_NAMES[c] not in placed],
        player=0,
    )
    last.apply_action(parse_action("play pampas-plain-1"))  # the moon: sanko, with no card left
    assert last.legal_actions() == [STOP]


def test_the_match_is_eight_hands_from_thirty_points_and_ends_at_zero():
    assert (KKJ.hands, KKJ.starting_score, KKJ.transfer, KKJ.dealer_selection) == (8, 30, True, "random")
    m = Match(KKJ, seed=11)
    assert m.scores == [30, 30]
    while not m.is_over():
        legal = m.legal_actions()
        m.apply_action(STOP if STOP in legal else legal[-1])
    assert len(m.results) <= 8
    assert len(m.results) == 8 or min(m.scores) <= 0
    assert sum(m.scores) == 60  # the loser pays the winner
