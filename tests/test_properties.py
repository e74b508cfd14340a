"""Invariants of the engine over random games (hypothesis): card accounting, legality, scoring,
the decision rule, determinism and cloning, under every preset and random rule variations.

Each game is checked against a small independent model of the rules (docs/rules.md) (captures, the decision
trigger, multipliers, the match end), not against the engine's own bookkeeping.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shrinking import scripted_randoms

from koikoi.actions import DECLARE, DRAW_TAKE_BASE, KOIKOI, NUM_ACTIONS, PLAY_TAKE_BASE, STOP
from koikoi.cards import BRIGHTS, MONTH_MASKS, NUM_CARDS
from koikoi.hand import Hand, IllegalActionError, Phase
from koikoi.match import Match
from koikoi.rules import PRESET_NAMES, PRESETS, RuleSet
from koikoi.yaku import evaluate
from koikoi.yaku import score as yaku_score

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- strategies ------------------------------------------------------------------------------------


@st.composite
def rule_sets(draw) -> RuleSet:
    """A preset with some options changed, and short matches so that an example stays cheap."""
    rules = PRESETS[draw(st.sampled_from(PRESET_NAMES))]
    changes: dict = {}
    maybe = lambda: draw(st.booleans())  # noqa: E731
    if maybe():
        changes["sake_cup"] = draw(st.sampled_from(("both", "animal_only", "either")))
    if maybe():
        changes["sake_yaku"] = draw(
            st.sampled_from(("on", "off", "rain_ruins", "rainman_ruins", "bonus_only", "not_with_brights"))
        )
    if maybe():
        changes["koikoi_multiplier"] = draw(
            st.sampled_from(("none", "additive", "opponent_double", "own_double", "own_and_opponent_double"))
        )
    if maybe():
        changes["seven_point_double"] = draw(st.booleans())
    if maybe():
        changes["bright_table_multiplier"] = draw(st.booleans())
    if maybe():
        changes["exhausted"] = draw(
            st.sampled_from(("draw", "dealer_bonus", "first_player", "second_player", "last_koikoi"))
        )
        changes["exhausted_points"] = draw(st.sampled_from((0, 1, 6)))
    if maybe():
        changes["hand_bonus_declared"] = draw(st.booleans())
        changes["hand_bonus"] = draw(st.sampled_from((0, 6)))
        changes["hand_bonus_two_months"] = draw(st.sampled_from((0, 14)))
    if maybe():
        changes["koikoi_limit"] = draw(st.integers(0, 2))
        changes["koikoi_limit_scope"] = draw(st.sampled_from(("player", "hand")))
    if maybe():
        changes["deal_pattern"] = draw(st.sampled_from(("4-4", "2-2")))
    if maybe():
        changes["first_player"] = draw(st.sampled_from(("winner", "loser", "alternate")))
    if maybe():
        changes["exhausted_dealer"] = draw(st.sampled_from(("keep", "pass")))
    if maybe():
        changes["redeal_on_table_three"] = draw(st.booleans())
    if maybe():
        changes["tsukifuda"] = draw(st.sampled_from((0, 5)))
    if maybe():
        changes["transfer"] = draw(st.booleans())
        changes["starting_score"] = draw(st.sampled_from((0, 10, 50)))
    # Keep matches short: 1-3 hands, or a low target with no hand limit.
    if draw(st.integers(0, 3)) == 0:
        changes["hands"] = 0
        changes["target_score"] = draw(st.integers(5, 20))
    else:
        changes["hands"] = draw(st.integers(1, 3))
        changes["target_score"] = draw(st.sampled_from((0, 0, 15)))
    return rules.replace(**changes)


seeds = st.integers(0, 2**63 - 1)
birth_months = st.tuples(st.integers(1, 12), st.integers(1, 12)).filter(lambda b: b[0] != b[1])


def new_match(rules: RuleSet, seed: int, months: tuple[int, int]) -> Match:
    return Match(rules, seed, birth_months=months if rules.dealer_selection == "birth_month" else None)


# -- snapshots and independent models -------------------------------------------------------------


def _freeze(value):
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, (bytearray, set, dict)):
        return repr(value)
    return value


def hand_snapshot(h: Hand) -> tuple:
    """Every attribute of a hand, with containers frozen (so a later change shows)."""
    names = []
    for klass in type(h).__mro__:
        names += list(getattr(klass, "__slots__", ()))
    names += sorted(getattr(h, "__dict__", {}))
    return tuple((n, _freeze(getattr(h, n))) for n in names if hasattr(h, n))


def match_snapshot(m: Match) -> tuple:
    return (
        tuple(m.scores),
        tuple(m.dealer_draws),
        m.first_dealer,
        m.outcome,
        tuple((r.number, r.dealer, r.month, _freeze(r.decks), tuple(r.actions), r.result) for r in m.hands),
        hand_snapshot(m.hand),
        _freeze(vars(m.chance) if hasattr(m.chance, "__dict__") else m.chance),
    )


def month_mask(c: int) -> int:
    return MONTH_MASKS[c // 4]


def assert_cards_accounted(h: Hand) -> None:
    """Each of the 48 cards in exactly one place, counted independently of the engine's helper."""
    assert h.cards_accounted_for()
    counts = [0] * NUM_CARDS
    for mask in (h.hands[0], h.hands[1], h.table, h.piles[0], h.piles[1]):
        assert 0 <= mask and mask >> NUM_CARDS == 0
        for c in range(NUM_CARDS):
            counts[c] += (mask >> c) & 1
    for c in h.stock[h.stock_pos :]:
        counts[c] += 1
    if h.pending >= 0:
        counts[h.pending] += 1
    assert counts == [1] * NUM_CARDS
    # Drawn stock cards are gone from the stock; the stock never holds a card twice.
    assert len(h.stock) == 24 and sorted(set(h.stock)) == sorted(h.stock)


def resolve(table: int, pile: int, c: int, take: int | None) -> tuple[int, int]:
    """RULES 2.4: a card takes its one match, the chosen of two, all of three, or stays on the table."""
    matches = table & month_mask(c)
    n = matches.bit_count()
    if n == 0:
        return table | (1 << c), pile
    if n == 2:
        assert take is not None and (matches >> take) & 1
        got = 1 << take
    else:
        assert take is None
        got = matches
    return table & ~got, pile | got | (1 << c)


def decode_play(action: int) -> tuple[int, int | None]:
    if action < PLAY_TAKE_BASE:
        return action, None
    c, r = divmod(action - PLAY_TAKE_BASE, 4)
    return c, (c & ~3) | r


def expected_stop_yaku(rules: RuleSet, pile: int, month: int, calls: list[int], p: int) -> list:
    """The yaku a stop scores (docs/rules.md section 4): the pile's, the sake yaku raised after one's own
    koi-koi (sake_after_koikoi, under sake_yaku = on), and own_points_then_multiply's point a call (one to
    three) as "koikoi"."""
    from koikoi.yaku import Yaku

    yaku = evaluate(pile, rules, month)
    if not calls[p] or not yaku:
        return yaku
    if rules.sake_after_koikoi and rules.sake_yaku == "on":
        yaku = [Yaku(y.name, rules.sake_after_koikoi) if y.name.endswith("-zake") else y for y in yaku]
    if rules.koikoi_multiplier == "own_points_then_multiply" and calls[p] <= 3:
        yaku = [*yaku, Yaku("koikoi", calls[p])]
    return yaku


def expected_multiplier(rules: RuleSet, base: int, calls: list[int], p: int, table_brights: int) -> int:
    mult = 2 if rules.seven_point_double and base >= 7 else 1
    km = rules.koikoi_multiplier
    if km == "additive":
        mult *= 1 + calls[p]
    if km == "own_points_then_multiply" and calls[p] >= 4:
        mult *= calls[p] - 2
    if km in ("opponent_double", "own_and_opponent_double") and calls[1 - p]:
        mult *= 2
    if km in ("own_double", "own_and_opponent_double") and calls[p]:
        mult *= 2
    if rules.bright_table_multiplier:
        mult *= max(1, table_brights)
    return mult


def expected_hand_bonus(hand: int, rules: RuleSet) -> int:
    counts = [(hand & m).bit_count() for m in MONTH_MASKS]
    if not rules.hand_bonus:
        return 0
    if counts.count(4) >= 2 and rules.hand_bonus_two_months:
        return rules.hand_bonus_two_months
    if 4 in counts or counts.count(2) == 4:
        return rules.hand_bonus
    return 0


def check_result_arithmetic(rules: RuleSet, result) -> None:
    """A hand's result agrees with itself and with the rule set (docs/rules.md section 4)."""
    assert result.reason in ("stop", "exhausted", "hand_bonus")
    assert result.points == result.base * result.multiplier
    assert result.base == sum(y.points for y in result.yaku)
    assert result.multiplier >= 1 and result.base >= 0
    if result.winner is not None:
        assert result.deltas[result.winner] == result.points
    if rules.transfer:
        assert sum(result.deltas) == 0
    elif result.reason == "exhausted" and rules.exhausted in ("first_player", "second_player"):
        # RULES 4: that player gains the points and the other loses them, with or without transfer.
        assert sorted(result.deltas) == [-rules.exhausted_points, rules.exhausted_points]
    else:
        assert min(result.deltas) == 0
        assert result.deltas.count(0) >= 1


class Referee:
    """Follows a match action by action and checks every step against the rules (docs/rules.md)."""

    def __init__(self, m: Match, rng: random.Random) -> None:
        self.m = m
        self.rng = rng
        self.rules = m.rules
        self.scores = [m.rules.starting_score] * 2
        self.checked_records = 0
        self.h: Hand | None = None
        self.check_records()

    # A new hand: reset the per-hand model.
    def start_hand(self, h: Hand) -> None:
        self.h = h
        assert h.dealer == self.m.hands[-1].dealer
        assert h.current_player == h.dealer and h.phase == Phase.PLAY
        assert h.hands[0].bit_count() == h.hands[1].bit_count() == h.table.bit_count() == 8
        assert list(h.piles) == [0, 0] and h.stock_count == 24 and not h.events
        self.dealt = (h.hands[0], h.hands[1])
        # A table the rules throw in is never played: four of a month (redeal_on_table_four), three of a
        # month (redeal_on_table_three).
        counts = [(h.table >> (4 * m) & 15).bit_count() for m in range(12)]
        assert not (self.rules.redeal_on_table_four and 4 in counts)
        assert not (self.rules.redeal_on_table_three and 3 in counts)
        self.table_brights = (h.table & BRIGHTS).bit_count()
        self.last_decision = [0, 0]
        self.turn_start = 0
        self.calls = [0, 0]

    def check_records(self) -> None:
        """Scores, dealer rotation and the match end, over every hand settled since the last check."""
        m, rules = self.m, self.rules
        recs = m.hands
        while self.checked_records < len(recs) and recs[self.checked_records].result is not None:
            i = self.checked_records
            rec = recs[i]
            result = rec.result
            check_result_arithmetic(rules, result)
            assert rec.month == i % 12 + 1
            if result.reason == "hand_bonus" and not rec.actions:
                assert not rules.hand_bonus_declared  # awarded at the deal only when not declared
            self.scores[0] += result.deltas[0]
            self.scores[1] += result.deltas[1]
            end = None
            if rules.transfer and min(self.scores) <= 0:
                end = "bankrupt"
            elif rules.target_score and max(self.scores) >= rules.target_score:
                end = "target"
            elif rules.hands and i + 1 >= rules.hands:
                end = "hands"
            self.checked_records += 1
            if end:
                assert m.outcome is not None and m.outcome.reason == end and len(recs) == i + 1
                s0, s1 = self.scores
                assert m.outcome.scores == (s0, s1)
                assert m.outcome.winner == (None if s0 == s1 else (0 if s0 > s1 else 1))
            else:
                assert len(recs) > i + 1, "the match must deal the next hand"
                nxt = recs[i + 1].dealer
                fp = rules.first_player
                if fp == "alternate":
                    assert nxt == 1 - rec.dealer
                elif result.winner is None:
                    # A hand nobody won keeps the deal, or passes it under exhausted_dealer=pass.
                    assert nxt == (1 - rec.dealer if rules.exhausted_dealer == "pass" else rec.dealer)
                elif result.keep_dealer:
                    assert nxt == rec.dealer
                else:
                    assert nxt == (result.winner if fp == "winner" else 1 - result.winner)
        assert list(m.scores) == self.scores
        assert m.is_over() == (m.outcome is not None)
        if m.outcome is None:
            assert self.checked_records == len(recs) - 1 and recs[-1].result is None

    def check_position(self, tries: int | None = 6) -> list[int]:
        """Checks of the position before a move; returns the legal actions. ``tries`` illegal actions
        are tried (None: all of them)."""
        m, h = self.m, self.m.hand
        if h is not self.h:
            self.start_hand(h)
        assert_cards_accounted(h)
        legal = m.legal_actions()
        assert legal, "no legal action before the match is over"
        assert legal == sorted(set(legal)) == h.legal_actions()
        legal_set = set(legal)
        assert all(0 <= a < NUM_ACTIONS for a in legal)
        assert [a for a in range(NUM_ACTIONS) if h.is_legal(a)] == legal
        p = h.current_player
        if h.phase == Phase.PLAY:
            assert STOP not in legal_set and KOIKOI not in legal_set
            played = {decode_play(a)[0] for a in legal if a < DRAW_TAKE_BASE}
            assert sum(1 << c for c in played) == h.hands[p]
            # A dealt teshi/kuttsuki may be declared only on the holder's first turn (RULES 7).
            assert (DECLARE in legal_set) == (
                self.rules.hand_bonus_declared
                and h.hands[p] == self.dealt[p]
                and expected_hand_bonus(self.dealt[p], self.rules) > 0
            )
        elif h.phase == Phase.DRAW_CHOICE:
            matches = h.table & month_mask(h.pending)
            assert matches.bit_count() == 2
            assert legal == sorted(DRAW_TAKE_BASE + c for c in range(NUM_CARDS) if (matches >> c) & 1)
        else:
            assert h.phase == Phase.DECISION
            limit = self.rules.koikoi_limit
            # koikoi_limit_scope=hand counts both players' calls together.
            calls = self.calls[p] if self.rules.koikoi_limit_scope == "player" else sum(self.calls)
            may = bool(h.hands[p]) and (not limit or calls < limit)
            assert legal == ([KOIKOI, STOP] if may else [STOP])
            if not h.hands[p]:
                assert KOIKOI not in legal_set  # RULES 6.3
        # Illegal actions: rejected, and nothing changes.
        before = match_snapshot(m)
        illegal = [a for a in range(NUM_ACTIONS) if a not in legal_set]
        tried = illegal if tries is None else self.rng.sample(illegal, min(tries, len(illegal)))
        for a in tried + [-1, NUM_ACTIONS]:
            try:
                m.apply_action(a)
            except IllegalActionError:
                pass
            else:
                raise AssertionError(f"illegal action {a} was accepted")
            assert match_snapshot(m) == before
        return legal

    def play(self, action: int) -> None:
        """Apply ``action`` and check the result against the model."""
        m, h, rules = self.m, self.m.hand, self.rules
        p, phase = h.current_player, h.phase
        hands, table, piles = h.hands[:], h.table, h.piles[:]
        pos, pending = h.stock_pos, h.pending
        m.apply_action(action)
        turn_done = False
        if phase == Phase.PLAY and action == DECLARE:
            assert h.is_over() and h.result.reason == "hand_bonus" and h.result.winner == p
            assert h.result.points == expected_hand_bonus(hands[p], rules) > 0
        elif phase == Phase.PLAY:
            self.turn_start = piles[p]  # the pile before the turn, for the stop rule below
            c, take = decode_play(action)
            table, pile = resolve(table, piles[p], c, take)
            assert h.hands[p] == hands[p] & ~(1 << c)
            d = h.stock[pos]
            assert h.stock_pos == pos + 1
            if (table & month_mask(d)).bit_count() == 2:
                assert h.phase == Phase.DRAW_CHOICE and h.pending == d and h.current_player == p
                assert (h.table, h.piles[p]) == (table, pile)
            else:
                table, pile = resolve(table, pile, d, None)
                turn_done = True
        elif phase == Phase.DRAW_CHOICE:
            table, pile = resolve(table, piles[p], pending, action - DRAW_TAKE_BASE)
            turn_done = True
        elif action == KOIKOI:
            self.calls[p] += 1
            self.last_decision[p] = yaku_score(piles[p], rules, h.month)
            assert list(h.koikoi_calls) == self.calls and h.last_koikoi == p
            assert not h.is_over() and h.phase == Phase.PLAY and h.current_player == 1 - p
        else:
            assert action == STOP
            r = h.result
            assert h.is_over() and r.reason == "stop" and r.winner == p
            yaku = expected_stop_yaku(rules, piles[p], h.month, self.calls, p)
            base = sum(y.points for y in yaku)
            assert r.base == base > 0  # (a new yaku may score less than the total at the last call)
            assert list(r.yaku) == yaku
            assert r.multiplier == expected_multiplier(rules, base, self.calls, p, self.table_brights)
        if turn_done:
            assert (h.table, h.piles[p], h.piles[1 - p]) == (table, pile, piles[1 - p])
            # RULES 2.5 / 6.1, seed 002: the choice comes exactly when the turn made a yaku the player did
            # not hold before it, or raised the points of one they held.
            held = {y.name: y.points for y in evaluate(self.turn_start, rules, h.month)}
            rose = any(y.points > held.get(y.name, 0) for y in evaluate(pile, rules, h.month))
            if rose:
                assert h.phase == Phase.DECISION and h.current_player == p
            elif h.hands[0] or h.hands[1]:
                assert h.phase == Phase.PLAY and h.current_player == 1 - p
            else:
                assert h.is_over() and h.result.reason == "exhausted"
                self.check_exhausted(h)
        if h.is_over():
            assert h.legal_actions() == [] and h.phase == Phase.OVER
            assert_cards_accounted(h)
        self.check_records()

    def check_exhausted(self, h: Hand) -> None:
        rules, r = self.rules, h.result
        n = rules.exhausted_points
        if rules.exhausted == "last_koikoi" and h.last_koikoi >= 0:
            q = h.last_koikoi
            stopped = expected_stop_yaku(rules, h.piles[q], h.month, self.calls, q)
            assert r.winner == q and r.base == sum(y.points for y in stopped)
        elif rules.exhausted == "dealer_bonus" and n and h.last_koikoi >= 0:
            assert r.winner is None and r.deltas == (0, 0)  # a yaku was made: no oya-ken (seed 004)
        elif rules.exhausted in ("dealer_bonus", "last_koikoi") and n:
            assert r.winner == h.dealer and r.points == n and r.keep_dealer
        elif rules.exhausted in ("first_player", "second_player") and n:
            gainer = h.dealer if rules.exhausted == "first_player" else 1 - h.dealer
            assert r.deltas[gainer] == n and r.deltas[1 - gainer] == -n
        else:
            assert r.winner is None and r.deltas == (0, 0)


def choose(legal: list[int], rng: random.Random) -> int:
    """A random legal action; koi-koi is favoured so that hands run long and exhaust more often."""
    if KOIKOI in legal and rng.random() < 0.75:
        return KOIKOI
    return rng.choice(legal)


def play_out(m: Match, rng: random.Random, max_steps: int = 5000, tries: int | None = 6) -> Referee:
    ref = Referee(m, rng)
    for _ in range(max_steps):
        if m.is_over():
            break
        legal = ref.check_position(tries)
        ref.play(choose(legal, rng))
    assert m.is_over()
    return ref


# -- the properties -----------------------------------------------------------------------------


@SETTINGS
@given(rules=rule_sets(), seed=seeds, months=birth_months, rng=scripted_randoms())
def test_random_games_keep_every_invariant(rules, seed, months, rng):
    m = new_match(rules, seed, months)
    play_out(m, rng)
    # After the end: no legal action, and every action is refused without a change.
    assert m.legal_actions() == []
    before = match_snapshot(m)
    for a in range(NUM_ACTIONS):
        try:
            m.apply_action(a)
        except IllegalActionError:
            pass
        else:
            raise AssertionError(f"action {a} accepted after the match ended")
    assert match_snapshot(m) == before
    assert m.hand.legal_actions() == []


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=rule_sets(),
    limit=st.integers(1, 2),
    first=st.sampled_from(("winner", "loser")),
    seed=seeds,
    months=birth_months,
    rng=scripted_randoms(),
)
def test_options_from_other_programs_keep_every_invariant(rules, limit, first, seed, months, rng):
    # The three options of other programs all on (rule_sets draws each only now and then), in matches
    # long enough for exhausted hands to pass the deal and for both players to call koi-koi.
    rules = rules.replace(
        koikoi_limit=limit,
        koikoi_limit_scope="hand",
        exhausted_dealer="pass",
        redeal_on_table_three=True,
        first_player=first,
        hands=6,
        target_score=0,
        transfer=False,
    )
    play_out(new_match(rules, seed, months), rng)


def observations(m: Match) -> tuple:
    o0, o1 = m.observation(0), m.observation(1)
    return o0, o1, json.dumps(o0.to_dict(), sort_keys=True), json.dumps(o1.to_dict(), sort_keys=True)


@settings(max_examples=25, deadline=None)
@given(rules=rule_sets(), seed=seeds, months=birth_months, rng=scripted_randoms())
def test_same_seed_and_actions_give_the_same_game(rules, seed, months, rng):
    a, b = new_match(rules, seed, months), new_match(rules, seed, months)
    steps = 0
    while not a.is_over():
        assert observations(a) == observations(b)
        assert a.legal_actions() == b.legal_actions()
        action = choose(a.legal_actions(), rng)
        a.apply_action(action)
        b.apply_action(action)
        steps += 1
    assert b.is_over() and a.outcome == b.outcome and a.actions == b.actions
    assert [r.decks for r in a.hands] == [r.decks for r in b.hands]
    assert observations(a) == observations(b)
    # The record replays: a fresh match from the same seed and the recorded actions ends the same.
    c = new_match(rules, seed, months)
    for action in a.actions:
        c.apply_action(action)
    assert c.outcome == a.outcome and match_snapshot(c)[:5] == match_snapshot(a)[:5]
    assert steps == len(a.actions)


def drive_hand(h: Hand, rng: random.Random) -> list[int]:
    actions = []
    while not h.is_over():
        a = rng.choice(h.legal_actions())
        h.apply_action(a)
        actions.append(a)
    return actions


@settings(max_examples=40, deadline=None)
@given(
    rules=rule_sets(),
    deck_seed=seeds,
    dealer=st.integers(0, 1),
    month=st.integers(1, 12),
    rng=scripted_randoms(),
    cut=st.floats(0, 1),
)
def test_clone_is_independent_and_continues_identically(rules, deck_seed, dealer, month, rng, cut):
    deck = random.Random(deck_seed).sample(range(NUM_CARDS), NUM_CARDS)
    h = Hand(rules, deck, dealer, month)
    # Play to a random point of the hand.
    prefix = drive_hand(h.clone(), random.Random(rng.random()))
    for a in prefix[: int(cut * len(prefix))]:
        h.apply_action(a)
    before = hand_snapshot(h)
    twin = h.clone()
    assert hand_snapshot(twin) == before
    # Play the clone elsewhere: the original does not move.
    drive_hand(h.clone(), random.Random(rng.random()))
    drive_hand(twin.clone(), random.Random(rng.random()))
    assert hand_snapshot(h) == before and hand_snapshot(twin) == before
    # The same actions on both keep them identical to the end.
    while not h.is_over():
        a = rng.choice(h.legal_actions())
        h.apply_action(a)
        twin.apply_action(a)
        assert hand_snapshot(twin) == hand_snapshot(h)
        assert twin.legal_actions() == h.legal_actions()
    assert twin.result == h.result


@settings(max_examples=30, deadline=None)
@given(rules=rule_sets(), seed=seeds, rng=scripted_randoms())
def test_after_previews_every_action_as_playing_it_would(rules, seed, rng):
    """Match.after(a), at every step of a match: who moves next, the scores, the hand number and the end
    as a copy that played ``a`` has them, and the match itself unchanged."""
    m = new_match(rules, seed, (1, 2))
    while not m.is_over():
        a = rng.choice(m.legal_actions())
        before = match_snapshot(m)
        preview = m.after(a)
        played = m.clone()
        played.apply_action(a)
        assert match_snapshot(m) == before
        assert (preview.current_player, preview.scores, preview.hand_number, preview.is_over()) == (
            played.current_player,
            played.scores,
            played.hand_number,
            played.is_over(),
        )
        m.apply_action(a)


# -- regression tests (minimised from property failures) -----------------------------------------


def bonus_deck(dealer_cards: list[int], other_cards: list[int], seed: int) -> list[int]:
    """A 4-4 deal giving the dealer and the non-dealer these cards; the rest shuffled by ``seed``."""
    rest = [c for c in range(NUM_CARDS) if c not in dealer_cards and c not in other_cards]
    random.Random(seed).shuffle(rest)
    deck = other_cards[:4] + dealer_cards[:4] + rest[:4] + other_cards[4:] + dealer_cards[4:] + rest[4:]
    return deck


TESHI = [0, 1, 2, 3, 4, 8, 12, 16]  # all four pine cards
KUTTSUKI = [0, 1, 4, 5, 8, 9, 12, 13]  # four pairs
DOUBLE_TESHI = [0, 1, 2, 3, 4, 5, 6, 7]  # pine and plum complete
PLAIN = [20, 24, 28, 32, 36, 40, 44, 45]  # no bonus


def scripted_match(rules: RuleSet, dealer_cards: list[int], other_cards: list[int], seed: int = 3) -> Match:
    from koikoi.match import ScriptedChance

    deck = bonus_deck(dealer_cards, other_cards, seed)
    # Dealer draw (declared before the decks): player 0 draws pine, player 1 plum, so 0 deals.
    chance = ScriptedChance(
        [deck] + [random.Random(seed + i).sample(range(NUM_CARDS), NUM_CARDS) for i in range(1, 40)], draws=[0, 4]
    )
    m = Match(rules, chance=chance)
    assert m.hands[0].decks == [deck] and m.hands[0].dealer == 0
    return m


@pytest.mark.parametrize("dealt, points", [(TESHI, 6), (KUTTSUKI, 6), (DOUBLE_TESHI, 14)])
@pytest.mark.parametrize("holder", [0, 1])
def test_declared_hand_bonus(dealt, points, holder):
    rules = PRESETS["traditional"].replace(hands=2)
    cards = (dealt, PLAIN) if holder == 0 else (PLAIN, dealt)
    m = scripted_match(rules, *cards)
    # can_declare means "now": only the dealer, who moves first, can declare at the deal.
    assert [m.observation(p).can_declare for p in (0, 1)] == [holder == 0, False]
    ref = Referee(m, random.Random(1))
    if holder == 1:  # the dealer moves first; the non-dealer's first turn follows
        ref.check_position(tries=None)
        ref.play(choose([a for a in m.legal_actions() if a != DECLARE], ref.rng))
        while m.hand.current_player != 1:
            ref.play(STOP if STOP in m.legal_actions() else m.legal_actions()[0])
    assert DECLARE in ref.check_position(tries=None)
    ref.play(DECLARE)
    assert m.results[0].reason == "hand_bonus" and m.results[0].points == points
    assert m.results[0].deltas[holder] == points and m.results[0].winner == holder


@pytest.mark.parametrize("holder", [0, 1])
def test_undeclared_hand_bonus_lapses_after_the_first_turn(holder):
    rules = PRESETS["traditional"].replace(hands=1)
    m = scripted_match(rules, *((TESHI, PLAIN) if holder == 0 else (PLAIN, TESHI)))
    ref = Referee(m, random.Random(2))
    turns = 0
    while not m.is_over():
        legal = ref.check_position(tries=None)
        if m.phase == Phase.PLAY and m.current_player == holder:
            assert (DECLARE in legal) == (turns == 0)
            turns += 1
        ref.play(choose([a for a in legal if a != DECLARE], ref.rng))
    assert turns >= 1 and m.results[0].reason != "hand_bonus"


@pytest.mark.parametrize("preset_name", ["wikipedia", "bga", "nintendo", "cardavia"])
@pytest.mark.parametrize("holder", [0, 1])
def test_hand_bonus_awarded_at_the_deal(preset_name, holder):
    rules = PRESETS[preset_name].replace(hands=3, dealer_selection="draw")
    m = scripted_match(rules, *((TESHI, PLAIN) if holder == 0 else (PLAIN, TESHI)))
    first = m.hands[0]
    assert first.result is not None and first.result.reason == "hand_bonus" and first.actions == []
    assert first.result.winner == holder and first.result.base == 6
    play_out(m, random.Random(4))


def test_equal_birth_months_fall_back_to_drawing_for_the_deal():
    # Minimised from test_random_games_keep_every_invariant: boardgame with birth_months=(1, 1) tied on
    # every dealer draw and failed after 1000 draws with "the dealer draw never settled". Equal birth
    # months cannot decide, so the players draw cards as with dealer_selection=draw.
    for seed in range(20):
        m = Match(PRESETS["boardgame"], seed, birth_months=(1, 1))
        a, b = m.dealer_draws[-2:]
        assert len(m.dealer_draws) % 2 == 0 and a >> 2 != b >> 2
        assert m.first_dealer == (0 if a >> 2 < b >> 2 else 1)
        drawn = Match(PRESETS["boardgame"].replace(dealer_selection="draw"), seed, birth_months=(1, 1))
        assert (drawn.first_dealer, drawn.dealer_draws) == (m.first_dealer, m.dealer_draws)
    # Other dealer selections do not read the birth months, so equal ones are fine there.
    assert Match(PRESETS["traditional"], 0, birth_months=(1, 1)).legal_actions()
    # Months six apart tie only on two cards' months; the draw settles.
    assert Match(PRESETS["boardgame"], 0, birth_months=(1, 7)).legal_actions()
