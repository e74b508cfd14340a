"""The batched NumPy hands play exactly as the engine: same deals, same choices, same outcomes."""

from __future__ import annotations

import random

import numpy as np
import pytest

from koikoi.batch import PHASES, REASONS, BatchHands, random_decks, reference_random
from koikoi.hand import Hand
from koikoi.rules import PRESETS, RuleSet, preset


def outcomes(b: BatchHands) -> list[tuple]:
    return [
        (
            REASONS[b.reason[i]],
            int(b.winner[i]),
            int(b.points[i]),
            [int(x) for x in b.deltas[i]],
            [int(x) for x in b.piles[i]],
            int(b.decisions[i]),
            int(b.base[i]),
            int(b.multiplier[i]),
        )
        for i in range(b.n)
    ]


def engine_outcomes(ref: dict) -> list[tuple]:
    return list(
        zip(
            ref["reason"],
            ref["winner"],
            ref["points"],
            ref["deltas"],
            ref["piles"],
            ref["decisions"],
            ref["base"],
            ref["multiplier"],
        )
    )


def play_both(rules: RuleSet, n: int, seed: int) -> tuple[list, list]:
    rng = np.random.default_rng(seed)
    decks = random_decks(rng, n)
    dealers, months = rng.integers(0, 2, n), rng.integers(1, 13, n)
    us = rng.random((n, 80))
    b = BatchHands(rules, decks, dealers, months)
    t = 0
    while not b.over.all():
        b.step_random(us[:, t])
        t += 1
    # play_turns (a whole turn per pass) makes the same choices from the same numbers.
    turns = BatchHands(rules, decks, dealers, months)
    turns.play_turns(us)
    assert outcomes(turns) == outcomes(b)
    return outcomes(b), engine_outcomes(reference_random(rules, decks, dealers, months, us))


@pytest.mark.parametrize("name", list(PRESETS))
def test_same_outcomes_as_the_engine_for_every_preset(name):
    got, expected = play_both(PRESETS[name], 400, 11)
    assert got == expected
    assert {o[0] for o in got} >= {"stop", "exhausted"}


# Options that change how a hand is dealt, played or settled, with the values to try.
VARIANTS = {
    "sake_cup": ["both", "animal_only", "either"],
    "sake_yaku": ["on", "off", "rain_ruins", "rainman_ruins", "bonus_only", "not_with_brights"],
    "koikoi_multiplier": ["none", "additive", "opponent_double", "own_double", "own_and_opponent_double"],
    "exhausted": ["draw", "dealer_bonus", "first_player", "second_player", "last_koikoi"],
    "exhausted_points": [0, 1, 3],
    "deal_pattern": ["4-4", "2-2"],
    "koikoi_limit": [0, 1, 2],
    "hand_bonus": [0, 6],
    "hand_bonus_two_months": [0, 14],
    "hand_bonus_declared": [False, True],
    "redeal_on_table_four": [False, True],
    "redeal_on_table_pairs": [False, True],
    "redeal_on_both_hand_bonus": [False, True],
    "bright_table_multiplier": [False, True],
    "seven_point_double": [False, True],
    "transfer": [False, True],
    "tsukifuda": [0, 4],
    "akatan_aotan": [0, 10, 6],
    # Values where one yaku replaces another for no more points (the batch's exact path by name).
    "sanko": [5, 8],
    "shiko": [8, 5],
    "ame_shiko": [7, 5],
    "akatan": [5, 8],
    "aotan": [5, 8],
    "ino_shika_cho_plus": [False, True],
    "akatan_plus": [False, True],
    "aotan_plus": [False, True],
    "kasu": [0, 1],
    "tane": [0, 2],
    "goko": [10, 15],
}


@pytest.mark.parametrize("trial", range(12))
def test_same_outcomes_as_the_engine_for_mixed_options(trial):
    rng = random.Random(trial)
    rules = preset(rng.choice(list(PRESETS))).replace(**{k: rng.choice(v) for k, v in VARIANTS.items()})
    got, expected = play_both(rules, 250, 100 + trial)
    assert got == expected, rules


def test_legal_masks_and_explicit_steps_follow_the_engine():
    rules = preset("traditional")  # declared hand bonuses: DECLARE shows up in the masks
    rng = np.random.default_rng(5)
    n = 150
    decks = random_decks(rng, n)
    b = BatchHands(rules, decks, 0, 3)
    hands = [Hand(rules, [int(c) for c in d], 0, 3) for d in decks]
    seen_take = False
    while not b.over.all():
        mask = b.legal_mask()
        actions = np.full(n, -1)
        for i, h in enumerate(hands):
            legal = h.legal_actions()
            assert sorted(np.nonzero(mask[i])[0].tolist()) == sorted(legal), i
            assert PHASES[b.phase[i]] == h.phase.name.lower()
            if legal:
                a = random.Random(i * 1000 + int(b.decisions[i])).choice(legal)
                seen_take |= a >= 48
                actions[i] = a
                h.apply_action(a)
        b.step(actions)
    assert seen_take
    for i, h in enumerate(hands):
        r = h.result
        assert (REASONS[b.reason[i]], int(b.points[i]), [int(x) for x in b.deltas[i]]) == (
            r.reason,
            r.points,
            list(r.deltas),
        )


def test_illegal_actions_change_nothing():
    rng = np.random.default_rng(3)
    b = BatchHands(preset("nintendo"), random_decks(rng, 4))
    live = ~b.over
    before = (b.hands.copy(), b.table.copy(), b.decisions.copy())
    actions = np.array([int(np.nonzero(m)[0][0]) if ok else 0 for m, ok in zip(b.legal_mask(), live)])
    first = int(np.argmax(live))
    actions[first] = 289  # STOP, not legal while playing a card
    with pytest.raises(ValueError, match=f"hand {first}: action 289 is not legal now"):
        b.step(actions)
    assert (b.hands == before[0]).all() and (b.table == before[1]).all() and (b.decisions == before[2]).all()
    with pytest.raises(ValueError, match="one action per hand"):
        b.step([0, 1])
    with pytest.raises(ValueError, match="deck 1 does not hold"):
        BatchHands(preset("nintendo"), [list(range(48)), [0] * 48])


def test_rows_played_apart_and_put_back_end_as_in_the_whole_batch():
    # play_random goes on with the last live rows in a batch of their own; that must change nothing.
    rules = preset("wikipedia")
    rng = np.random.default_rng(9)
    n = 300
    decks, dealers, months = random_decks(rng, n), rng.integers(0, 2, n), rng.integers(1, 13, n)
    us = rng.random((n, 80))
    whole, split = BatchHands(rules, decks, dealers, months), BatchHands(rules, decks, dealers, months)
    for t in range(12):
        whole.step_random(us[:, t])
        split.step_random(us[:, t])
    live = np.flatnonzero(~split.over)
    assert 0 < len(live) < n
    sub = split._rows(live)
    t = 12
    while not whole.over.all():
        whole.step_random(us[:, t])
        sub.step_random(us[live, t])
        t += 1
    assert sub.over.all()
    split._put(live, sub)
    assert outcomes(split) == outcomes(whole)


def test_play_random_plays_every_hand_to_a_legal_end():
    rng = np.random.default_rng(4)
    b = BatchHands(preset("nintendo"), random_decks(rng, 2000), rng.integers(0, 2, 2000))
    b.play_random(rng)
    assert b.over.all()
    # Every card is somewhere at the end: hands, table, piles and the stock left make the deck.
    left = np.array([np.bitwise_or.reduce((1 << b.stock[i, b.stock_pos[i] :]).astype(np.uint64)) for i in range(b.n)])
    whole = b.hands[:, 0] | b.hands[:, 1] | b.table | b.piles[:, 0] | b.piles[:, 1] | left
    assert (whole == np.uint64((1 << 48) - 1)).all()
    stopped = b.reason == REASONS.index("stop")
    assert stopped.sum() > 500 and (b.points[stopped] > 0).all()


def test_apply_to_a_few_rows_changes_those_rows_as_the_full_width_step_does():
    rules = preset("traditional")
    rng = np.random.default_rng(12)
    n = 400
    decks = random_decks(rng, n)
    few, wide = BatchHands(rules, decks, 1, 5), BatchHands(rules, decks, 1, 5)
    for _ in range(30):
        if few.over.all():
            break
        a = few.random_actions(rng.random(n))
        rows = (a >= 0) & (rng.random(n) < 0.05)  # well under an eighth of the rows: moved apart
        few.apply(a, rows)
        wide._apply(a, rows)
        for name in BatchHands._ROW_STATE + BatchHands._SEAT_STATE:
            assert np.array_equal(getattr(few, name), getattr(wide, name)), name
    assert (few.decisions > 0).sum() > n // 2


def test_the_row_state_lists_name_every_array_a_row_holds():
    """``_rows`` and ``_put`` move rows by these two lists: an array added to a batch and left out of
    them would be dropped from the rows moved apart."""
    b = BatchHands.blank(preset("traditional"), 3)
    arrays = {name for name, v in vars(b).items() if isinstance(v, np.ndarray)} - {"_ar", "_ar24"}
    assert arrays == set(BatchHands._ROW_STATE) | set(BatchHands._SEAT_STATE)
    assert not set(BatchHands._ROW_STATE) & set(BatchHands._SEAT_STATE)


def test_play_turns_finishes_hands_left_mid_turn_by_steps():
    rules = preset("bga")
    rng = np.random.default_rng(21)
    n = 300
    decks, dealers, months = random_decks(rng, n), rng.integers(0, 2, n), rng.integers(1, 13, n)
    us = rng.random((n, 80))
    steps, mixed = BatchHands(rules, decks, dealers, months), BatchHands(rules, decks, dealers, months)
    for t in range(7):
        steps.step_random(us[:, t])
        mixed.step_random(us[:, t])
    assert ((mixed.phase == PHASES.index("draw_choice")) | (mixed.phase == PHASES.index("decision"))).any()
    t = 7
    while not steps.over.all():
        steps.step_random(us[:, t])
        t += 1
    mixed.play_turns(us)
    assert outcomes(mixed) == outcomes(steps)


@pytest.mark.parametrize("trial", range(8))
def test_the_batch_scorer_gives_the_engine_total_of_any_pile(trial):
    # Piles of every size, biased to the yaku cards so that every family's tables are reached, under
    # mixed options: the look-up tables must give koikoi.yaku.score's total for each.
    from koikoi.batch import Scorer
    from koikoi.cards import ANIMALS, BRIGHTS, RIBBONS
    from koikoi.yaku import score

    rng = random.Random(500 + trial)
    rules = preset(rng.choice(list(PRESETS))).replace(**{k: rng.choice(v) for k, v in VARIANTS.items()})
    special = [c for c in range(48) if (BRIGHTS | ANIMALS | RIBBONS) >> c & 1]
    piles, months = [], []
    for _ in range(3000):
        cards = rng.sample(special, rng.randint(0, len(special))) + rng.sample(range(48), rng.randint(0, 30))
        piles.append(sum(1 << c for c in set(cards)))
        months.append(rng.randint(1, 12))
    got = Scorer(rules)(np.array(piles, dtype=np.uint64), np.array(months, dtype=np.int64))
    assert got.tolist() == [score(p, rules, m) for p, m in zip(piles, months)]


def test_the_scorer_gate_passes_exactly_the_piles_at_some_yaku_threshold():
    # The gate's byte counters against the families counted card by card; a pile it stops scores 0.
    from koikoi.batch import Scorer
    from koikoi.cards import (
        ANIMALS,
        BLUE_RIBBONS,
        BRIGHTS,
        CHAFF,
        CURTAIN,
        INO_SHIKA_CHO,
        MOON,
        POETRY_RIBBONS,
        RIBBONS,
        SAKE_CUP,
    )

    rng = random.Random(77)
    piles = [sum(1 << c for c in rng.sample(range(48), rng.randint(0, 30))) for _ in range(5000)]
    piles += [
        BRIGHTS,
        ANIMALS,
        RIBBONS,
        CHAFF | SAKE_CUP,
        SAKE_CUP | MOON,
        SAKE_CUP | CURTAIN,
        SAKE_CUP,
        MOON | CURTAIN,
    ]

    def at_threshold(p: int) -> bool:
        counts = [
            ((p & m).bit_count(), t) for m, t in ((BRIGHTS, 3), (ANIMALS, 5), (RIBBONS, 5), (CHAFF | SAKE_CUP, 10))
        ]
        trios = [p & m == m for m in (INO_SHIKA_CHO, POETRY_RIBBONS, BLUE_RIBBONS)]
        return any(n >= t for n, t in counts) or any(trios) or bool(p & SAKE_CUP and p & (MOON | CURTAIN))

    rules = preset("nintendo").replace(tsukifuda=0)
    scorer = Scorer(rules)
    arr, months = np.array(piles, dtype=np.uint64), np.ones(len(piles), dtype=np.int64)
    assert scorer.maybe(arr, months).tolist() == [at_threshold(p) for p in piles]
    assert not scorer.full(arr, months)[~scorer.maybe(arr, months)].any()


def test_random_decks_are_permutations_with_every_card_equally_likely_at_every_position():
    n = 24_000
    decks = random_decks(np.random.default_rng(2024), n)
    assert decks.dtype == np.int64 and decks.shape == (n, 48)
    assert (np.sort(decks, axis=1) == np.arange(48)).all()
    # (card, position) counts against n / 48 each: chi-square with 47 x 47 degrees of freedom (mean
    # 2209, sd 66); a shuffle that favoured any card at any position by a few percent would pass 2600.
    counts = np.zeros((48, 48))
    np.add.at(counts, (decks, np.broadcast_to(np.arange(48), decks.shape)), 1)
    expected = n / 48
    assert ((counts - expected) ** 2 / expected).sum() < 2600
    # The same generator state gives the same decks (reset(seed=...) repeats a run).
    assert (random_decks(np.random.default_rng(2024), n) == decks).all()
