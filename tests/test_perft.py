"""Exact counts from the deal, like chess 'perft': the number of legal action sequences of a given
length and the number of distinct states they reach. A change in the deal, the shuffle, the
matching rule or the decision trigger changes these numbers.

Each count below was checked by hand from the dealt cards (see the comments) before it was
written down; the deals themselves are asserted too, so a failure says which part moved.
"""

from __future__ import annotations

import pytest

from koikoi.cards import cards_mask
from koikoi.hand import Hand
from koikoi.match import Match
from koikoi.rules import PRESETS


def state_key(h: Hand) -> tuple:
    """The state without its history (events): two orders of play may reach the same state."""
    return (
        tuple(h.hands),
        h.table,
        tuple(h.piles),
        h.stock_count,
        h.current_player,
        h.phase,
        h.drawn_card,
        tuple(h.koikoi_calls),
        tuple(h.decision_score),
        h.result,
    )


def perft(h: Hand, depth: int, leaves: set) -> int:
    if depth == 0 or h.is_over():
        leaves.add(state_key(h))
        return 1
    total = 0
    for a in h.legal_actions():
        child = h.clone()
        child.apply_action(a)
        total += perft(child, depth - 1, leaves)
    return total


CASES = [
    # traditional, seed 1: the dealer (0) holds plum-poetry, wisteria-cuckoo, peony-blue, peony-plain-1,
    # pampas-geese, maple-deer, maple-plain-1, maple-plain-2; no table month has two cards that one of
    # these matches, so 8 plays. The first stock card, chrysanthemum-blue, meets the two chrysanthemums
    # on the table (the dealer holds none to take one away): every play ends in a draw choice, 8 * 2 = 16.
    # No yaku can form from those few cards, so player 1 plays one of 8 cards, none facing two table cards
    # of its month (the dealer's plays only add plum, pampas, peony and maple, months player 1 lacks):
    # 16 * 8 = 128. Each player has acted once, so no two sequences meet: distinct = sequences.
    (
        "traditional",
        1,
        0,
        "plum-poetry wisteria-cuckoo peony-blue peony-plain-1 pampas-geese maple-deer maple-plain-1 maple-plain-2",
        "pine-plain-1 cherry-curtain cherry-poetry wisteria-plain-2 iris-plain-2 clover-plain-1 "
        "chrysanthemum-plain-1 paulownia-plain-3",
        "cherry-plain-2 wisteria-plain-1 peony-butterflies chrysanthemum-sake chrysanthemum-plain-2 maple-blue "
        "willow-ribbon paulownia-plain-2",
        [(8, 8), (16, 16), (128, 128)],
    ),
    # bga, seed 2: the dealer (1) holds no card of the table's two pairs (pampas, maple): 8 plays. The draw
    # (wisteria-plain-1) never has a choice. Player 0 then has 7 single plays plus maple-blue taking either
    # maple: 8 * 9 = 72. The next draw (cherry-plain-2) meets one cherry; player 1 then has 7 single plays:
    # 72 * 7 = 504. Distinct: player 1's two plays in either order merge (28 pairs * 9 = 252) except where
    # the order shows: wisteria-plain-2 first takes the cuckoo and leaves the drawn wisteria-plain-1 on the
    # table, second the reverse (7 pairs * 9 = 63); iris-ribbon before/after player 0's iris-plain-1
    # (6 more pairs), peony-plain-1 before/after player 0's peony-butterflies (6 more): 252 + 75 = 327.
    (
        "bga",
        2,
        1,
        "pine-plain-2 iris-plain-1 peony-butterflies clover-boar clover-plain-1 chrysanthemum-blue "
        "chrysanthemum-plain-2 maple-blue",
        "plum-warbler plum-plain-1 plum-plain-2 wisteria-plain-2 iris-ribbon peony-plain-1 willow-lightning "
        "paulownia-plain-2",
        "cherry-poetry wisteria-cuckoo peony-blue pampas-geese pampas-plain-1 chrysanthemum-plain-1 maple-deer "
        "maple-plain-2",
        [(8, 8), (72, 72), (504, 327)],
    ),
    # boardgame (2-2 deal), seed 3: the dealer (0) has 7 single plays and pine-plain-1 taking either table
    # pine: 9. The draw (pampas-moon) takes the one pampas; player 1 then has 8 single plays: 72. The next
    # draw (pampas-geese) stays; the dealer has 7 cards left, 8 actions if pine-plain-1 is still held:
    # 16 * 7 + 56 * 8 = 560. Distinct: the dealer's two plays in either order merge (35 unordered pairs * 8
    # = 280) except where the order shows: the two cherry chaff against one cherry-poetry (8), and
    # wisteria-ribbon, iris-ribbon, plum-plain-1 left on the table before or after player 1 plays a card of
    # that month (8 each for wisteria and plum, 16 for the two iris chaff): 280 + 40 = 320.
    (
        "boardgame",
        3,
        0,
        "pine-plain-1 plum-plain-1 cherry-plain-1 cherry-plain-2 wisteria-ribbon iris-ribbon peony-blue willow-swallow",
        "plum-poetry wisteria-plain-2 iris-plain-1 iris-plain-2 clover-boar clover-ribbon paulownia-plain-1 "
        "paulownia-plain-2",
        "pine-poetry pine-plain-2 cherry-poetry peony-plain-1 clover-plain-1 pampas-plain-2 chrysanthemum-plain-2 "
        "paulownia-phoenix",
        [(9, 9), (72, 72), (560, 320)],
    ),
    # koikoi-japan, seed 1: the dealer (0) holds plum-poetry, wisteria-cuckoo, peony-blue, peony-plain-1,
    # pampas-geese, maple-plain-1, maple-plain-2, paulownia-plain-3; the only table month with two cards is
    # chrysanthemum, of which the dealer holds none: 8 plays. The first stock card, chrysanthemum-blue,
    # meets both chrysanthemums: 8 * 2 = 16, and no capture of the turn makes a yaku. Player 1 holds
    # pine-plain-1, cherry-curtain, cherry-poetry, wisteria-plain-2, iris-plain-2, clover-plain-1,
    # chrysanthemum-plain-1, paulownia-plain-2: after the dealer's turn no month on the table has two
    # cards (the draw took one chrysanthemum, each of the dealer's captures emptied its month, plum and
    # pampas gain a single card), so 8 single plays: 16 * 8 = 128, all distinct (each player acted once).
    # The moves are traditional's; what koikoi-japan changes is the deal it keeps and how a hand scores.
    (
        "koikoi-japan",
        1,
        0,
        "plum-poetry wisteria-cuckoo peony-blue peony-plain-1 pampas-geese maple-plain-1 maple-plain-2 "
        "paulownia-plain-3",
        "pine-plain-1 cherry-curtain cherry-poetry wisteria-plain-2 iris-plain-2 clover-plain-1 "
        "chrysanthemum-plain-1 paulownia-plain-2",
        "cherry-plain-2 wisteria-plain-1 peony-butterflies chrysanthemum-sake chrysanthemum-plain-2 maple-blue "
        "willow-swallow paulownia-plain-1",
        [(8, 8), (16, 16), (128, 128)],
    ),
]


@pytest.mark.parametrize(
    "preset_name, seed, dealer, hand0, hand1, table, counts", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES]
)
def test_perft_from_the_deal(preset_name, seed, dealer, hand0, hand1, table, counts):
    rules = PRESETS[preset_name]
    m = Match(rules, seed, birth_months=(2, 9) if rules.dealer_selection == "birth_month" else None)
    assert len(m.hands) == 1 and len(m.hands[0].decks) == 1  # no redeal, no hand bonus
    h = m.hand
    assert h.dealer == dealer
    assert h.hands[0] == cards_mask(hand0.split())
    assert h.hands[1] == cards_mask(hand1.split())
    assert h.table == cards_mask(table.split())
    for depth, (sequences, distinct) in enumerate(counts, start=1):
        leaves: set = set()
        assert (perft(h, depth, leaves), len(leaves)) == (sequences, distinct), f"depth {depth}"
