"""The fast paths give exactly what the plain ones gave (issue 14): the seeded deck, the events kept
from one observation to the next, the observation itself, and the environment's encoding.

Each fast path is compared with a plain reference written here the way the code computed it before,
over many seeds, random hands and every preset, after every action.
"""

from __future__ import annotations

import copy
import random

import pytest

from koikoi.actions import KOIKOI
from koikoi.cards import FULL_DECK, iter_cards
from koikoi.hand import Hand, IllegalActionError
from koikoi.match import Match, SeededChance, _shuffled_deck
from koikoi.rules import PRESET_NAMES, PRESETS, RuleSet

BIRTH_MONTHS = (2, 9)


def new_match(rules: RuleSet, seed: int) -> Match:
    return Match(rules, seed, birth_months=BIRTH_MONTHS if rules.dealer_selection == "birth_month" else None)


def pick(legal: list[int], rng: random.Random) -> int:
    # Koi-koi often, so that hands run long and reach every phase and multiplier.
    if KOIKOI in legal and rng.random() < 0.7:
        return KOIKOI
    return rng.choice(legal)


# -- the seeded deck -----------------------------------------------------------------------------


def test_the_fast_deck_is_random_shuffle_for_many_seeds():
    for seed in [*range(3000), 2**31 - 1, 2**32, 2**63 - 1, 2**64 + 7, -5]:
        a, b = random.Random(seed), random.Random(seed)
        expected = list(range(48))
        a.shuffle(expected)
        assert _shuffled_deck(b.getrandbits) == expected, seed
        # The generator is left exactly where shuffle leaves it, so later draws agree too.
        assert b.getstate() == a.getstate(), seed


def test_seeded_chance_gives_the_decks_and_draws_it_gave_before():
    for seed in range(300):
        chance = SeededChance(seed)
        plain = random.Random(seed)
        for step in range(6):
            if step % 3 == 2:
                assert chance.draw_card() == plain.randrange(48)
            deck = list(range(48))
            plain.shuffle(deck)
            assert chance.deck() == deck
        twin = chance.clone()
        assert twin.deck() == chance.deck()


def test_a_generator_of_another_kind_still_shuffles_with_its_own_method():
    class Counting(random.Random):
        shuffles = 0

        def shuffle(self, x):  # type: ignore[override]
            Counting.shuffles += 1
            super().shuffle(x)

    chance = SeededChance(4)
    chance.rng = Counting(4)
    plain = random.Random(4)
    deck = list(range(48))
    plain.shuffle(deck)
    assert chance.deck() == deck and Counting.shuffles == 1


# -- events and observations -----------------------------------------------------------------------


def rebuilt_events(h: Hand) -> tuple:
    return tuple((e.player, e.kind, e.card, e.captured) for e in h.events)


def reference_observation(m: Match, player: int) -> dict:
    """The observation's fields computed the plain way (as observe() did before issue 14)."""
    h = m.hand
    other = 1 - player
    hand = h.hands[player]
    drawn = h.drawn_card if h.drawn_card >= 0 else None
    seen = hand | h.table | h.piles[0] | h.piles[1] | (0 if drawn is None else 1 << drawn)
    yaku = (tuple((y.name, y.points) for y in h.yaku_of(0)), tuple((y.name, y.points) for y in h.yaku_of(1)))
    scores = (sum(p for _, p in yaku[0]), sum(p for _, p in yaku[1]))
    over = m.is_over()
    cards = lambda mask: tuple(iter_cards(mask))  # noqa: E731
    return {
        "player": player,
        "rules": m.rules.name,
        "hand_number": len(m.hands),
        "month": h.month,
        "dealer": h.dealer,
        "current_player": h.current_player,
        "phase": h.phase.name.lower(),
        "hand": cards(hand),
        "table": cards(h.table),
        "piles": (cards(h.piles[0]), cards(h.piles[1])),
        "opponent_hand_count": h.hands[other].bit_count(),
        "stock_count": h.stock_count,
        "drawn_card": drawn,
        "scores": tuple(m.scores),
        "yaku": yaku,
        "yaku_scores": scores,
        "decision_scores": tuple(h.decision_score),
        "koikoi_calls": tuple(h.koikoi_calls),
        "multipliers": (h.multiplier_for(0, scores[0]), h.multiplier_for(1, scores[1])),
        "table_brights": h.table_brights,
        "legal_actions": tuple(h.legal_actions()) if h.current_player == player and not over else (),
        "can_declare": h.can_declare(player),
        "events": rebuilt_events(h),
        "previous_hand_events": () if m.previous_hand is None else rebuilt_events(m.previous_hand),
        "results": tuple(rec.result for rec in m.hands if rec.result is not None),
        "match_over": over,
        "match_winner": m.winner(),
        "hand_mask": hand,
        "table_mask": h.table,
        "pile_masks": tuple(h.piles),
        "unseen_mask": FULL_DECK & ~seen,
        "rule_set": m.rules,
    }


def assert_same_view(m: Match, player: int) -> None:
    obs = m.observation(player)
    expected = reference_observation(m, player)
    got = {name: getattr(obs, name) for name in expected}
    for name, value in expected.items():
        assert got[name] == value, name
        assert type(got[name]) is type(value), name
    assert obs.events == rebuilt_events(m.hand)


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_observations_equal_the_plain_ones_after_every_action(name):
    rng = random.Random(name)
    for seed in range(4):
        m = new_match(PRESETS[name], seed)
        while True:
            for player in (0, 1):
                assert_same_view(m, player)
            if m.is_over():
                break
            # An observation taken now is not changed by the moves that follow it.
            kept = m.observation(m.current_player)
            frozen = copy.deepcopy(kept)
            m.apply_action(pick(m.legal_actions(), rng))
            assert kept == frozen
            assert m.results == [rec.result for rec in m.hands if rec.result is not None]


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_kept_events_equal_a_rebuild_in_copies_of_a_hand(name):
    rng = random.Random(name)
    rules = PRESETS[name]
    for hand_no in range(40):
        deck = list(range(48))
        rng.shuffle(deck)
        h = Hand(rules, deck, hand_no & 1, hand_no % 12 + 1)
        while not h.is_over():
            # Sometimes ask often, sometimes seldom: each call catches up however many events came.
            if rng.random() < 0.5:
                assert h.public_events() == rebuilt_events(h)
            twin = h.clone()
            h.apply_action(pick(h.legal_actions(), rng))
            assert twin.public_events() == rebuilt_events(twin)
            if not twin.is_over():
                twin.apply_action(pick(twin.legal_actions(), rng))  # the copy goes its own way
                assert twin.public_events() == rebuilt_events(twin)
        assert h.public_events() == rebuilt_events(h)


def test_a_world_built_from_an_observation_starts_without_events():
    m = Match(PRESETS["nintendo"], 3)
    rng = random.Random(3)
    for _ in range(5):
        m.apply_action(pick(m.legal_actions(), rng))
    p = m.current_player
    obs = m.observation(p)
    h = m.hand
    twin = Hand.from_observation(obs, h.hands[1 - p], h.stock[h.stock_pos :])
    assert twin.public_events() == () == rebuilt_events(twin)
    twin.apply_action(twin.legal_actions()[0])
    assert twin.public_events() == rebuilt_events(twin) != ()


def test_results_of_copies_stay_apart():
    rng = random.Random(8)
    m = Match(PRESETS["nintendo"], 8)
    while len(m.results) < 2:
        m.apply_action(pick(m.legal_actions(), rng))
    twin = m.clone()
    shallow = copy.copy(m)  # records' replay snapshots start like this
    shallow.hand = m.hand.clone()
    before = m.results
    while len(twin.results) < 3 and not twin.is_over():
        twin.apply_action(pick(twin.legal_actions(), rng))
    while len(shallow.results) < 4 and not shallow.is_over():
        shallow.apply_action(pick(shallow.legal_actions(), rng))
    assert m.results == before and m.observation(0).results == tuple(before)
    assert twin.observation(0).results == tuple(twin.results)


# -- the environment's encoding --------------------------------------------------------------------


def reference_encode(obs, np):
    """koikoi_v0 the plain way (as encode() did before issue 14)."""
    from koikoi.env import OBSERVATION_SIZE, PHASES, SLICES

    bits = np.int64(1) << np.arange(48, dtype=np.int64)
    cards = lambda mask: ((np.int64(mask) & bits) != 0).astype(np.float32)  # noqa: E731
    s = SLICES
    me, opp = obs.player, 1 - obs.player
    v = np.zeros(OBSERVATION_SIZE, np.float32)
    v[s["hand"]] = cards(obs.hand_mask)
    v[s["table"]] = cards(obs.table_mask)
    v[s["own_captures"]] = cards(obs.pile_masks[me])
    v[s["opponent_captures"]] = cards(obs.pile_masks[opp])
    if obs.drawn_card is not None:
        v[s["drawn_card"].start + obs.drawn_card] = 1
    v[s["unseen"]] = cards(obs.unseen_mask)
    v[s["phase"].start + PHASES.index(obs.phase)] = 1
    v[s["month"].start + obs.month - 1] = 1
    v[s["dealer"]] = float(obs.dealer == me)
    v[s["stock_count"]] = obs.stock_count / 24
    v[s["opponent_hand_count"]] = obs.opponent_hand_count / 8
    v[s["koikoi_calls"]] = [min(obs.koikoi_calls[me], 3) / 3, min(obs.koikoi_calls[opp], 3) / 3]
    v[s["yaku_points"]] = np.clip([obs.yaku_scores[me] / 10, obs.yaku_scores[opp] / 10], 0, 10)
    v[s["scores"]] = np.clip([obs.scores[me] / 50, obs.scores[opp] / 50], -100, 100)
    hands = obs.rule_set.hands
    v[s["progress"]] = min(len(obs.results) / hands, 1.0) if hands else 0.0
    return v


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_encode_and_action_mask_equal_the_plain_ones(name):
    np = pytest.importorskip("numpy")
    pytest.importorskip("gymnasium")
    pytest.importorskip("pettingzoo")
    from koikoi.env import NUM_ACTIONS, OBSERVATION_SIZE, action_mask, encode

    rng = random.Random(name)
    for seed in range(3):
        m = new_match(PRESETS[name], seed)
        while True:
            for player in (0, 1):
                obs = m.observation(player)
                v = encode(obs)
                assert v.dtype == np.float32 and v.shape == (OBSERVATION_SIZE,) and v.flags.writeable
                assert v.tobytes() == reference_encode(obs, np).tobytes()
                mask = action_mask(obs)
                plain = np.zeros(NUM_ACTIONS, np.int8)
                plain[list(obs.legal_actions)] = 1
                assert mask.dtype == np.int8 and mask.flags.writeable and mask.tobytes() == plain.tobytes()
            if m.is_over():
                break
            m.apply_action(pick(m.legal_actions(), rng))


def test_encode_clips_extreme_scores_as_before():
    np = pytest.importorskip("numpy")
    pytest.importorskip("gymnasium")
    pytest.importorskip("pettingzoo")
    import dataclasses

    from koikoi.env import encode

    obs = Match(PRESETS["nintendo"], 2).observation(0)
    for scores, yaku in (((10_000, -10_000), (0, 150)), ((-1, 1), (3, 99)), ((0, 0), (0, 0))):
        odd = dataclasses.replace(obs, scores=scores, yaku_scores=yaku, koikoi_calls=(7, 2))
        assert encode(odd).tobytes() == reference_encode(odd, np).tobytes()


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_the_decision_comes_exactly_when_the_raiser_says_so(name):
    # A turn's score is compared with the total of the pile scored last where that is the pile before the
    # turn; the decision must still come exactly when the rule set's raiser (the plain test) says so,
    # after every turn of random hands, in copies of hands, and with the sake cup read either way.
    from koikoi.hand import Phase
    from koikoi.yaku import raiser, scorer

    rules = PRESETS[name]
    raised, total = raiser(rules), scorer(rules)
    rng = random.Random(name)
    offered = 0
    for i in range(300):
        deck = list(range(48))
        rng.shuffle(deck)
        h = Hand(rules, deck, i & 1, i % 12 + 1)
        start = h.piles[:]
        while h.result is None:
            if rng.random() < 0.1:
                h = h.clone()
            p, phase = h.current_player, h.phase
            if phase == Phase.PLAY:
                start[p] = h.piles[p]
            action = pick(h.legal_actions(), rng)
            h.apply_action(action)
            if phase == Phase.DECISION or h.phase == Phase.DRAW_CHOICE or h.result is not None:
                continue
            after = h.piles[p]
            s = total(after, h.month)
            expected = bool(s) and after != start[p] and raised(start[p], after, h.month, s)
            assert (h.phase == Phase.DECISION) == expected, (deck, action)
            offered += expected
    assert offered > 100  # many turns offer the decision, so the comparison means something


# -- koikoi simulate ----------------------------------------------------------------------------------


def plain_simulate_actions(rules: RuleSet, games: int, seed: int) -> list[list[int]]:
    """The actions of ``koikoi simulate``'s games as its loop chose them before issue 14: rng.choice."""
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        m = new_match(rules, rng.getrandbits(63))
        while not m.is_over():
            m.apply_action(rng.choice(m.legal_actions()))
        out.append(m.actions)
    return out


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_simulate_plays_the_games_rng_choice_played(name, monkeypatch):
    import koikoi.cli
    import koikoi.cli.simulation

    played: list[Match] = []
    real = koikoi.cli.simulation.Match

    def recording(*args, **kwargs):
        m = real(*args, **kwargs)
        played.append(m)
        return m

    monkeypatch.setattr(koikoi.cli.simulation, "Match", recording)
    rules = PRESETS[name]
    birth = BIRTH_MONTHS if rules.dealer_selection == "birth_month" else None
    koikoi.cli.simulate(rules, 6, 11, birth)
    assert [m.actions for m in played] == plain_simulate_actions(rules, 6, 11)


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_play_random_plays_what_rng_choice_plays_from_any_point(name):
    # From a fresh match, and from matches stopped part-way (in any phase, in any hand), play_random must
    # leave the match, its records and the generator exactly as a loop of rng.choice would.
    rules = PRESETS[name]
    steer = random.Random(name)
    for seed in range(10):
        m = new_match(rules, seed)
        for _ in range(steer.randrange(60)):
            if m.is_over():
                break
            m.apply_action(pick(m.legal_actions(), steer))
        twin = m.clone()
        a, b = random.Random(seed), random.Random(seed)
        m.play_random(a.getrandbits)
        while not twin.is_over():
            twin.apply_action(b.choice(twin.legal_actions()))
        assert m.is_over() and m.outcome == twin.outcome and m.scores == twin.scores
        assert [(h.decks, h.actions, h.result) for h in m.hands] == [(h.decks, h.actions, h.result) for h in twin.hands]
        assert a.getstate() == b.getstate()
        m.play_random(a.getrandbits)  # a finished match: nothing to play, nothing drawn
        assert a.getstate() == b.getstate() and len(m.actions) == len(twin.actions)


# -- the deal --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_the_quick_deal_test_misses_no_redeal_and_no_hand_bonus(name):
    # Hand() runs the full check of the deal (redeals, hand bonuses) only where a month count allows
    # one; running it on every deal must change nothing.
    rules = PRESETS[name]
    rng = random.Random(name)
    acted = 0
    for i in range(3000):
        deck = list(range(48))
        rng.shuffle(deck)
        h = Hand(rules, deck, i & 1, i % 12 + 1)
        twin = Hand(rules, deck, i & 1, i % 12 + 1)
        twin.result, twin._phase, twin.declarable = None, 0, [False, False]
        twin._check_deal()
        assert (twin.result, twin.declarable, twin._phase) == (h.result, h.declarable, h._phase), deck
        acted += h.result is not None or any(h.declarable)
    assert acted  # the deals include some that the check acts on


def hand_state(h: Hand) -> dict:
    return {name: getattr(h, name) for name in Hand.__slots__}


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_a_deal_without_checks_equals_the_checked_deal(name):
    # dealt_hand skips the checks of a deck from outside (a match's own shuffle needs none) and looks up
    # only the first 24 cards as bits; the hand must be the one Hand() deals, under both rules versions.
    from koikoi.hand import dealt_hand
    from koikoi.rules import RULES_VERSIONS

    rules = PRESETS[name]
    rng = random.Random(name)
    for i in range(600):
        deck = list(range(48))
        rng.shuffle(deck)
        version = sorted(RULES_VERSIONS)[i % len(RULES_VERSIONS)]
        plain = Hand(rules, deck, i & 1, i % 12 + 1, version)
        quick = dealt_hand(rules, deck, i & 1, i % 12 + 1, version)
        assert type(quick) is Hand and hand_state(quick) == hand_state(plain), deck
        assert type(quick.stock) is tuple and all(type(c) is int for c in quick.stock)


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_a_seeded_match_plays_as_its_decks_replayed_through_checked_deals(name):
    # A seeded match deals its own shuffles without checks; the same decks read back by ScriptedChance
    # go through Hand() with every check. Both must be the same match after every action.
    from koikoi.match import ScriptedChance

    rules = PRESETS[name]
    birth = BIRTH_MONTHS if rules.dealer_selection == "birth_month" else None
    rng = random.Random(name)
    for seed in range(8):
        m = Match(rules, seed, birth_months=birth)
        actions = []
        while not m.is_over():
            a = pick(m.legal_actions(), rng)
            actions.append(a)
            m.apply_action(a)
        decks = [d for h in m.hands for d in h.decks]
        again = Match(rules, chance=ScriptedChance(decks, m.dealer_draws), birth_months=birth)
        twin = Match(rules, seed, birth_months=birth)
        for a in actions:
            assert hand_state(again.hand) == hand_state(twin.hand)
            again.apply_action(a)
            twin.apply_action(a)
        assert again.outcome == twin.outcome == m.outcome and again.scores == twin.scores
        assert [(h.decks, h.actions, h.result) for h in again.hands] == [
            (h.decks, h.actions, h.result) for h in m.hands
        ]


def test_a_finished_match_names_itself_for_any_action():
    m = Match(PRESETS["cardavia"], 5)
    while not m.is_over():
        m.apply_action(m.legal_actions()[0])
    assert m.legal_actions() == []
    for bad in (0, 300, KOIKOI, "koikoi", None):
        with pytest.raises(IllegalActionError, match=r"the match is over \(\w+\); no action is legal"):
            m.apply_action(bad)


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_the_environment_observes_what_encode_gives(name):
    pytest.importorskip("numpy")
    pytest.importorskip("gymnasium")
    pytest.importorskip("pettingzoo")
    from koikoi.env import AGENTS, action_mask, encode, raw_env

    rules = PRESETS[name]
    e = raw_env(rules, birth_months=BIRTH_MONTHS if rules.dealer_selection == "birth_month" else None)
    rng = random.Random(name)
    for seed in range(3):
        e.reset(seed=seed)
        while True:
            for seat, agent in enumerate(AGENTS):
                got = e.observe(agent)
                obs = e.match.observation(seat)
                assert got["observation"].tobytes() == encode(obs).tobytes()
                assert got["action_mask"].tobytes() == action_mask(obs).tobytes()
                assert got["observation"].flags.writeable and got["action_mask"].flags.writeable
            if e.match.is_over():
                break
            e.step(pick(e.match.legal_actions(), rng))


# -- the score gate --------------------------------------------------------------------------------


def test_the_score_gate_passes_exactly_the_piles_that_may_score():
    from koikoi.cards import (
        ANIMALS,
        BLUE_RIBBONS,
        BRIGHTS,
        CHAFF,
        CURTAIN,
        INO_SHIKA_CHO,
        MONTH_MASKS,
        MOON,
        POETRY_RIBBONS,
        RIBBONS,
        SAKE_CUP,
    )
    from koikoi.yaku import may_score, scorer

    def plain(pile: int, month_mask: int) -> bool:
        return (
            (pile & BRIGHTS).bit_count() >= 3
            or (pile & ANIMALS).bit_count() >= 5
            or (pile & RIBBONS).bit_count() >= 5
            or (pile & (CHAFF | SAKE_CUP)).bit_count() >= 10
            or pile & INO_SHIKA_CHO == INO_SHIKA_CHO
            or pile & POETRY_RIBBONS == POETRY_RIBBONS
            or pile & BLUE_RIBBONS == BLUE_RIBBONS
            or bool(pile & SAKE_CUP and pile & (MOON | CURTAIN))
            or pile & month_mask == month_mask
        )

    rng = random.Random(14)
    scorers = [scorer(r) for r in PRESETS.values()]
    for _ in range(100_000):
        pile = sum(1 << c for c in rng.sample(range(48), rng.randint(0, 30)))
        month = rng.randint(1, 12)
        mask = rng.choice([MONTH_MASKS[month - 1], 1 << 48])
        assert may_score(pile, mask) == plain(pile, mask), hex(pile)
        if not may_score(pile):  # a pile the gate passes over scores nothing under any rule set
            assert not any(s(pile, None) for s in scorers)


def test_scores_and_yaku_memoised_by_signature_equal_evaluate_under_mixed_options():
    # The scorer and the yaku lists are memoised by a pile's signature (its counts and a few cards):
    # every pile sharing a signature must score alike under every option that reads a pile.
    from koikoi.cards import CURTAIN, MOON, RAIN_MAN, SAKE_CUP, WILLOW
    from koikoi.rules import preset
    from koikoi.yaku import evaluate, evaluator, scorer

    rng = random.Random(1414)
    special = [SAKE_CUP, MOON, CURTAIN, RAIN_MAN, WILLOW]
    for k in range(24):
        rules = preset(rng.choice(PRESET_NAMES)).replace(
            sake_cup=rng.choice(["both", "animal_only", "either"]),
            sake_yaku=rng.choice(["on", "off", "rain_ruins", "rainman_ruins", "bonus_only", "not_with_brights"]),
            ino_shika_cho_plus=rng.random() < 0.5,
            akatan_plus=rng.random() < 0.5,
            aotan_plus=rng.random() < 0.5,
            tsukifuda=rng.choice([0, 4]),
        )
        for version in (1, 2):
            total, listed = scorer(rules, version), evaluator(rules, version)
            for _ in range(1500):
                pile = sum(1 << c for c in rng.sample(range(48), rng.randint(3, 26)))
                pile |= rng.choice(special) if rng.random() < 0.6 else 0
                month = rng.randint(1, 12)
                want = evaluate(pile, rules, month, version)
                assert listed(pile, month) == tuple(want), (k, version, pile, month)
                assert total(pile, month) == sum(y.points for y in want), (k, version, pile, month)
