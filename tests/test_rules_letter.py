"""Issue 11, "Rules to the letter": each fix, table-driven, with the words of the seed it follows.

Seeds are the source texts the presets follow (docs/rules.md section 8 names them; docs/rules-notes.md
quotes the readings), quoted here in their language, with a translation.
Whole-hand tests build their deals as tests/test_rulings.py does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_rulings import BOTH_CALL, NO_YAKU, OTHER_CALLS, TRAD, policy

from koikoi.actions import KOIKOI, STOP
from koikoi.cards import CARD_NAMES, cards_mask
from koikoi.hand import Hand, Phase
from koikoi.records import RULES_VERSION, GameRecord, RecordError, replay
from koikoi.rules import option_help, preset
from koikoi.yaku import evaluate, raiser, score


def pile(*names: str) -> int:
    return cards_mask(names)


def yaku_dict(cards, rules, month=None) -> dict[str, int]:
    return {y.name: y.points for y in evaluate(pile(*cards), rules, month)}


PINES = ("pine-crane", "pine-poetry", "pine-plain-1", "pine-plain-2")
MOON_SAKE = ("pampas-moon", "chrysanthemum-sake")
BOTH_SAKE = (*MOON_SAKE, "cherry-curtain")
AKATAN = ("pine-poetry", "plum-poetry", "cherry-poetry")
AOTAN = ("peony-blue", "chrysanthemum-blue", "maple-blue")
FOUR_ANIMALS = ("plum-warbler", "wisteria-cuckoo", "iris-bridge", "peony-butterflies")
FIVE_RIBBONS = ("wisteria-ribbon", "iris-ribbon", "clover-ribbon", "pine-poetry", "plum-poetry")

# -- 1. boardgame: the sake yaku only beside a normal yaku; tsukifuda is a special yaku ----------------------
# Seed 002 lists tsukimi-zake and hanami-zake under "Особливі Якуси" (special yaku), each "бонус Yaku, тільки на
# додаток до принаймні ще одного нормального Yaku" (a bonus yaku, only in addition to at least one other normal
# yaku), and TsukiFuda among the same special yaku.
SEED_002_SAKE = "бонус Yaku, тільки на додаток до принаймні ще одного нормального Yaku"


@pytest.mark.parametrize(
    "cards, month, expected",
    [
        # tsukifuda alone does not carry the sake yaku: 5, not 10
        ((*PINES, *MOON_SAKE), 1, {"tsukifuda": 5}),
        (
            (
                "chrysanthemum-sake",
                "chrysanthemum-blue",
                "chrysanthemum-plain-1",
                "chrysanthemum-plain-2",
                "pampas-moon",
            ),
            9,
            {"tsukifuda": 5},
        ),
        # with akatan (a normal yaku) they count: 15
        ((*PINES, *MOON_SAKE, "plum-poetry", "cherry-poetry"), 1, {"akatan": 5, "tsukifuda": 5, "tsukimi-zake": 5}),
        # the two sake yaku do not carry each other
        (BOTH_SAKE, 1, {}),
        # a normal yaku without tsukifuda carries them
        ((*MOON_SAKE, *AKATAN), 2, {"akatan": 5, "tsukimi-zake": 5}),
    ],
)
def test_boardgame_sake_yaku_need_a_normal_yaku(cards, month, expected):
    assert SEED_002_SAKE  # the rule the table follows
    assert yaku_dict(cards, preset("boardgame"), month) == expected
    assert score(pile(*cards), preset("boardgame"), month) == sum(expected.values())


# -- 2. a new or larger yaku always offers the stop -------------------------------------------------------------
# Seed 002: "Якщо пізніше під час гри гравець, який сказав Koi-Koi, виграє ще одного Yaku АБО збільшить свої
# попередні Yaku, він може знову зупинити гру" (if later the player who said koi-koi wins another yaku OR
# increases their previous yaku, he may stop the game again) - whatever the total does.
SEED_002_AGAIN = "виграє ще одного Yaku АБО збільшить свої попередні Yaku"


@pytest.mark.parametrize(
    "sake_yaku, before, after, offered",
    [
        # the sake yaku ruined by a willow card, tane new: offered although 10 fell to 1
        ("rain_ruins", BOTH_SAKE, (*BOTH_SAKE, "willow-swallow", *FOUR_ANIMALS), True),
        # ruined and nothing new: not offered
        ("rain_ruins", MOON_SAKE, (*MOON_SAKE, "willow-swallow"), False),
        # the rain man ruins tsukimi-zake; tanzaku is new: offered (5 fell to 1)
        ("rainman_ruins", MOON_SAKE, (*MOON_SAKE, "willow-rainman", *FIVE_RIBBONS), True),
        # not_with_brights: shiko 8 loses to the sake yaku 10: nothing new counts, not offered
        ("not_with_brights", BOTH_SAKE, (*BOTH_SAKE, "pine-crane", "paulownia-phoenix"), False),
        # goko 10 ties the sake yaku 10 and counts: a new yaku at the same total, offered
        (
            "not_with_brights",
            (*BOTH_SAKE, "pine-crane", "paulownia-phoenix"),
            (*BOTH_SAKE, "pine-crane", "paulownia-phoenix", "willow-rainman"),
            True,
        ),
        # a yaku held raises its points (tane 1 -> 2): offered
        ("on", ("chrysanthemum-sake", *FOUR_ANIMALS), ("chrysanthemum-sake", *FOUR_ANIMALS, "clover-boar"), True),
        # a card that changes no yaku: not offered
        ("on", MOON_SAKE, (*MOON_SAKE, "pine-plain-1"), False),
    ],
)
def test_a_new_or_larger_yaku_offers_the_stop(sake_yaku, before, after, offered):
    assert SEED_002_AGAIN
    rules = TRAD.replace(sake_yaku=sake_yaku)
    assert raiser(rules)(pile(*before), pile(*after), None) is offered


# Found by playing random deals (lowest card, first koi-koi taken, then stop): under sake_yaku=rain_ruins the
# dealer makes tsukimi-zake + hanami-zake (10) and calls koi-koi; two turns later one turn captures
# willow-lightning and willow-ribbon, which voids both, and completes kasu (10 chaff). Kasu is a new yaku, so
# the stop is offered although the total fell from 10 to 1; the rule before issue 11 (total above the total at
# the last call) played on without offering it.
RAIN_RUINS_KASU = [
    32,
    14,
    0,
    12,
    34,
    35,
    46,
    25,
    47,
    22,
    36,
    38,
    29,
    17,
    45,
    24,
    8,
    16,
    39,
    43,
    6,
    13,
    1,
    15,
    11,
    18,
    28,
    27,
    30,
    26,
    42,
    23,
    37,
    5,
    33,
    31,
    44,
    9,
    10,
    41,
    7,
    4,
    21,
    40,
    20,
    2,
    19,
    3,
]


def _play_to_decision(h: Hand) -> None:
    while not h.is_over() and h.phase != Phase.DECISION:
        h.apply_action(min(h.legal_actions()))


def test_whole_hand_a_new_yaku_after_a_ruin_offers_the_stop():
    h = Hand(TRAD.replace(sake_yaku="rain_ruins"), RAIN_RUINS_KASU, 0)
    _play_to_decision(h)
    assert h.current_player == 0 and h.stock_count == 13
    assert [(y.name, y.points) for y in h.yaku_of(0)] == [("tsukimi-zake", 5), ("hanami-zake", 5)]
    h.apply_action(KOIKOI)
    _play_to_decision(h)
    # the dealer's next turn: the willow cards void the sake yaku, kasu is new
    assert h.current_player == 0 and h.stock_count == 11
    assert h.piles[0] & pile("willow-lightning", "willow-ribbon") == pile("willow-lightning", "willow-ribbon")
    assert [(y.name, y.points) for y in h.yaku_of(0)] == [("kasu", 1)]
    assert h.score_of(0) == 1 < h.decision_score[0] == 10  # the old rule would not have offered it
    assert h.legal_actions() == [KOIKOI, STOP]
    h.apply_action(STOP)
    r = h.result
    assert (r.reason, r.winner, r.base, r.points, r.deltas) == ("stop", 0, 1, 1, (1, 0))


def test_whole_hand_rules_version_1_gave_no_stop_after_the_ruin():
    """The same deal and moves under rules version 1 (kept so older records replay): no decision."""
    h = Hand(TRAD.replace(sake_yaku="rain_ruins"), RAIN_RUINS_KASU, 0, version=1)
    _play_to_decision(h)
    h.apply_action(KOIKOI)
    decisions = []
    while h.stock_count >= 11:  # through the dealer's kasu turn (the stock at 13, then 11)
        if h.phase == Phase.DECISION:
            decisions.append((h.current_player, h.stock_count))
            break
        h.apply_action(min(h.legal_actions()))
    assert decisions == []
    assert [(y.name, y.points) for y in h.yaku_of(0)] == [("kasu", 1)]  # the same pile as above
    assert h.score_of(0) == 1 < h.decision_score[0] == 10 and h.stock_count == 10


# -- 3. not_with_brights: the better of the bright yaku and the sake yaku ------------------------------------
# Seed 000's house rule: the sake yaku do not count together with a bright yaku; the player scores the better
# of the two (a tie: the bright yaku).
@pytest.mark.parametrize(
    "cards, expected",
    [
        # the brief's case: sanko 5 against tsukimi-zake 5 + hanami-zake 5 = 10: the sake yaku
        (("pampas-moon", "chrysanthemum-sake", "cherry-curtain", "pine-crane"), {"tsukimi-zake": 5, "hanami-zake": 5}),
        # sanko 5 against tsukimi-zake 5: a tie keeps the bright yaku
        ((*MOON_SAKE, "pine-crane", "paulownia-phoenix"), {"sanko": 5}),
        # shiko 8 against 10: the sake yaku
        ((*BOTH_SAKE, "pine-crane", "paulownia-phoenix"), {"tsukimi-zake": 5, "hanami-zake": 5}),
        # goko 10 against 10: the bright yaku
        ((*BOTH_SAKE, "pine-crane", "paulownia-phoenix", "willow-rainman"), {"goko": 10}),
        # the other yaku stay either way
        ((*BOTH_SAKE, "pine-crane", *AKATAN), {"akatan": 5, "tsukimi-zake": 5, "hanami-zake": 5}),
    ],
)
def test_not_with_brights_scores_the_better_of_the_two(cards, expected):
    rules = preset("traditional").replace(sake_yaku="not_with_brights")
    assert yaku_dict(cards, rules) == expected
    assert score(pile(*cards), rules) == sum(expected.values())


# -- 4. akatan_plus with aotan_plus: each extra ribbon counted once ------------------------------------------
# Nintendo's sheet: akatan and aotan each "+1 per further ribbon". Held together, the ribbons of one set are
# not extras of the other: only the ribbons outside both sets are extras, added to akatan alone.
@pytest.mark.parametrize(
    "extra, expected",
    [
        ((), {"akatan": 5, "aotan": 5, "tanzaku": 2}),  # 12
        (("willow-ribbon",), {"akatan": 6, "aotan": 5, "tanzaku": 3}),  # 14
        (("willow-ribbon", "iris-ribbon"), {"akatan": 7, "aotan": 5, "tanzaku": 4}),  # 16
    ],
)
def test_akatan_plus_with_aotan_plus_counts_each_extra_once(extra, expected):
    rules = preset("traditional").replace(akatan_plus=True, aotan_plus=True)
    assert yaku_dict((*AKATAN, *AOTAN, *extra), rules) == expected
    # one option alone, or one set alone, is as before
    assert yaku_dict((*AKATAN, *extra), rules)["akatan"] == 5 + len(extra)
    only_aka = preset("traditional").replace(akatan_plus=True)
    assert yaku_dict((*AKATAN, *AOTAN, *extra), only_aka)["akatan"] == 5 + 3 + len(extra)


# -- 5. wikipedia: oya-ken only when neither player made a yaku --------------------------------------------
# Seed 004: "Trong trường hợp cả hai người chơi đều không ghi được một yaku nào khi đã hết chồng bài bốc, nhà cái
# được thưởng 1 điểm" (if neither player scored a yaku when the stock ran out, the dealer gets 1 point).
SEED_004 = "cả hai người chơi đều không ghi được một yaku nào"


@pytest.mark.parametrize("dealer", [0, 1])
@pytest.mark.parametrize(
    "deck, dealer_delta, winner",
    [
        (NO_YAKU, 1, "dealer"),  # nobody made a yaku: oya-ken 1
        (BOTH_CALL, 0, None),  # both made a yaku and called koi-koi: a draw
        (OTHER_CALLS, 0, None),  # only the other player made one (tanzaku 2) and called: no point to the dealer
    ],
)
def test_whole_hand_oya_ken_only_without_yaku(deck, dealer_delta, winner, dealer):
    assert SEED_004
    h = Hand(preset("wikipedia").replace(hand_bonus_declared=False), deck, dealer)
    policy(h)
    r = h.result
    assert r.reason == "exhausted"
    deltas = [0, 0]
    deltas[dealer] = dealer_delta
    assert r.deltas == tuple(deltas)
    assert r.winner == (dealer if winner else None)
    assert [y.name for y in r.yaku] == (["oya-ken"] if winner else [])


# -- 6. BGA's exhausted-hand options read by seat ------------------------------------------------------------
# Seed 001: "НІЧИЯ: Обидва гравці зіграли всі карти з рук, але жоден не отримав очок за Яку. Можна налаштувати,
# щоб перший або другий гравець отримував 6 очок, а інший втрачав 6 очок." (a draw ... can be set so that the
# first or the second player gains 6 points and the other loses 6). First and second player are seats: the
# first player is the one who moves first in the hand, the dealer.
@pytest.mark.parametrize(
    "mode, dealer, deltas",
    [
        ("first_player", 0, (6, -6)),
        ("first_player", 1, (-6, 6)),
        ("second_player", 0, (-6, 6)),
        ("second_player", 1, (6, -6)),
    ],
)
def test_bga_exhausted_options_follow_the_seat(mode, dealer, deltas):
    rules = preset("bga").replace(
        exhausted=mode, exhausted_points=6, hand_bonus_declared=False, bright_table_multiplier=False
    )
    h = Hand(rules, NO_YAKU, dealer)
    policy(h)
    assert h.result.reason == "exhausted" and h.result.deltas == deltas
    doc = dict((name, meaning) for name, _, meaning in option_help())["exhausted"]
    assert "seat" in doc and "dealer" in doc


# -- 7. BGA's negative scores follow the seed ----------------------------------------------------------------
# Seed 001: the winner "отримує очки за свою Яку, суперник втрачає стільки ж очок" (gets the points of their yaku,
# the opponent loses as many), and "Якщо в будь-який момент кількість очок гравця зменшується до нуля, він одразу
# програє гру" (if at any moment a player's points drop to zero, he loses at once). The whole amount is paid, so
# a score can end below zero, and the match reports it as it is.
SEED_001_ZERO = "кількість очок гравця зменшується до нуля, він одразу програє гру"


def test_bga_negative_scores_are_kept():
    assert SEED_001_ZERO
    from koikoi.match import Match

    for seed in range(100):
        m = Match(preset("bga").replace(starting_score=1), seed=seed)
        while not m.is_over():
            legal = m.hand.legal_actions()
            m.apply_action(STOP if STOP in legal else min(legal))
        if min(m.outcome.scores) < 0:
            break
    else:  # pragma: no cover
        pytest.fail("no match in 100 seeds went below zero")
    o = m.outcome
    assert o.reason == "bankrupt"
    loser = 0 if o.scores[0] < o.scores[1] else 1
    paid = -m.hands[-1].result.deltas[loser]
    assert o.scores[loser] < 0 and o.winner == 1 - loser
    before = 1 + sum(h.result.deltas[loser] for h in m.hands[:-1])
    assert 0 < before < paid and o.scores[loser] == before - paid  # the whole amount, no floor at zero


# -- records: the rules version ------------------------------------------------------------------------------
def test_new_records_carry_the_rules_version():
    from koikoi.match import Match

    m = Match(preset("wikipedia"), seed=3)
    rec = GameRecord.from_match(m)
    assert rec.metadata["rules_version"] == RULES_VERSION == 2


# Records written by the engine before rules version 2 (commit b082166, one hand each, with no
# metadata.rules_version): each is a hand whose play or score a version-2 ruling changes.
OLD_RECORDS = sorted((Path(__file__).resolve().parent / "golden" / "rules-v1").glob("*.json"))


def test_there_is_an_old_record_for_every_changed_ruling():
    assert [p.stem for p in OLD_RECORDS] == [
        "akatan-aotan-plus",  # item 4: each extra ribbon counted by both
        "boardgame-tsukifuda-sake",  # item 1: sake yaku carried by tsukifuda
        "not-with-brights",  # item 3: sake yaku voided beside a bright yaku
        "rain-ruins-no-stop",  # item 2: no stop for a new yaku that did not raise the total
        "wikipedia-oya-ken-after-koikoi",  # item 5: oya-ken after a koi-koi call
    ]


@pytest.mark.parametrize("path", OLD_RECORDS, ids=lambda p: p.stem)
def test_an_old_record_replays_under_the_rules_it_was_played_under(path):
    data = json.loads(path.read_text())
    assert "rules_version" not in data["metadata"]  # written before there was a rules version
    rec = GameRecord.from_dict(data)
    assert rec.rules_version == 1
    m = replay(rec)  # every action legal, the hand's result and the outcome as recorded
    assert m.version == 1
    assert [h.result.to_dict() for h in m.hands] == [h.result for h in rec.hands]
    # Saved again, it says which behaviour it was played under, and still replays.
    again = GameRecord.from_match(m)
    assert again.metadata["rules_version"] == 1
    replay(GameRecord.from_dict(again.to_dict()))
    # Under the current rulings the same deals and actions do not give the recorded hand: the record
    # really exercises a changed ruling.
    data["metadata"]["rules_version"] = RULES_VERSION
    with pytest.raises(RecordError) as e:
        replay(GameRecord.from_dict(data))
    assert str(e.value).startswith("hands[0]")


@pytest.mark.parametrize("version", [0, 3, -1, "2", 2.0, True, None])
def test_a_rules_version_this_engine_does_not_play_is_refused(version):
    data = json.loads(OLD_RECORDS[0].read_text())
    data["metadata"]["rules_version"] = version
    with pytest.raises(RecordError) as e:
        GameRecord.from_dict(data)
    assert str(e.value).startswith("metadata.rules_version")
    assert "not a rules version this engine plays (1, 2)" in str(e.value)
    if version == 3:
        assert "newer engine" in str(e.value)


# The version-1 scores of the cases of items 1, 3 and 4, as the engine gave them before the fixes.
@pytest.mark.parametrize(
    "rules, cards, month, old, new",
    [
        (
            preset("boardgame"),
            ["pine-crane", "pine-poetry", "pine-plain-1", "pine-plain-2", "pampas-moon", "chrysanthemum-sake"],
            1,
            10,
            5,
        ),
        (
            preset("traditional").replace(sake_yaku="not_with_brights"),
            ["pampas-moon", "chrysanthemum-sake", "cherry-curtain", "pine-crane"],
            None,
            5,
            10,
        ),
        (
            preset("traditional").replace(akatan_plus=True, aotan_plus=True),
            [n for n in CARD_NAMES if n.endswith(("-poetry", "-blue"))],
            None,
            18,
            12,
        ),
    ],
)
def test_rules_version_1_scores_as_before(rules, cards, month, old, new):
    pile = cards_mask(cards)
    assert score(pile, rules, month, version=1) == sum(y.points for y in evaluate(pile, rules, month, 1)) == old
    assert score(pile, rules, month) == new


def test_an_engine_of_an_unknown_rules_version_is_refused():
    from koikoi.match import Match

    with pytest.raises(ValueError, match="rules version must be one of 1, 2, not 3"):
        Match(preset("wikipedia"), seed=1, version=3)


def test_where_the_total_tells_it_agrees_with_the_yaku_by_name():
    """yaku.total_tells: under such rules a turn makes a new or larger yaku exactly when the total grows,
    so raiser may compare totals only. Checked against the comparison by name on random turns."""
    import random as _random

    from koikoi import yaku as yaku_module
    from koikoi.rules import PRESETS

    rng = _random.Random(7)
    variants = {
        "sanko": [5, 6],
        "shiko": [8, 9],
        "ame_shiko": [7, 6],
        "goko": [10, 15],
        "akatan_aotan": [0, 10, 9],
        "akatan_plus": [False, True],
        "aotan_plus": [False, True],
        "ino_shika_cho_plus": [False, True],
        "sake_yaku": ["on", "off", "bonus_only"],
        "sake_cup": ["both", "animal_only"],
        "tsukifuda": [0, 4],
    }
    checked = 0
    for _ in range(60):
        rules = rng.choice(list(PRESETS.values())).replace(**{k: rng.choice(v) for k, v in variants.items()})
        if not yaku_module.total_tells(rules):
            continue
        total = yaku_module.scorer(rules)

        def by_name(before: int, after: int, month: int, rules=rules) -> bool:
            held = {y.name: y.points for y in yaku_module.evaluate(before, rules, month)}
            return any(y.points > held.get(y.name, 0) for y in yaku_module.evaluate(after, rules, month))

        for _ in range(400):
            cards = rng.sample(range(48), rng.randint(6, 30))
            k = rng.randint(1, 4)
            before = sum(1 << c for c in cards[k:])
            after = before | sum(1 << c for c in cards[:k])
            month = rng.randint(1, 12)
            assert (total(after, month) > total(before, month)) == by_name(before, after, month), (rules, cards, k)
            checked += 1
    assert checked > 5000
