"""The rules contract: every implementation of the rules ends the same deals, played with the same
actions, the same way, for every preset (docs/architecture.md, "Where the rules live").

The implementations: the engine (:class:`koikoi.hand.Hand`, and :class:`koikoi.match.Match` over it),
the one-world fast playouts (:func:`koikoi.ai.fastplay.fast_playout` and its frozen copy in
:mod:`koikoi.ai.hard_v1`), the NumPy batch (:class:`koikoi.batch.BatchHands`) and the vector
environment (:class:`koikoi.vector.KoiKoiVectorEnv`, which runs matches over the batch and plays the
``easy`` player in NumPy). Nothing here states what a hand should score: the engine, played through
its checked public moves, is the reference, and each other implementation must agree with it on
the legal actions at every step and on the outcome: the reason the hand ended, the winner, the points,
the score changes, the yaku (where it lists them), their total and multiplier, the cards taken, and
where the hand stopped.

Each preset gets its own deals (shuffled decks, dealers, months) and its own stream of random
numbers for the choices. The deeper per-implementation checks stay with their own tests
(test_fastplay.py: the playout policy and world sampling; test_batch.py: mixed options, row
moves; test_batchplay.py: the batched playouts; test_vector.py: every observation of the vector env).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from typing import Any
from unittest import mock

import numpy as np
import pytest

import koikoi.vector as kvector
from koikoi.ai import hard_v1
from koikoi.ai.fastplay import fast_playout, noise_pool, policy_choice
from koikoi.ai.heuristic import EasyAgent
from koikoi.batch import REASONS, BatchHands
from koikoi.hand import Hand
from koikoi.match import Chance, Match
from koikoi.rules import PRESETS, RuleSet

PRESET_NAMES = sorted(PRESETS)
Deal = tuple[list[int], int, int]  # deck, dealer, month
Outcome = tuple[str, int, int, tuple[int, ...], int, int, tuple[int, ...]]
DEALS = 100  # random deals per preset


@functools.cache
def deals(name: str, n: int = DEALS) -> list[Deal]:
    """The preset's deals: (deck, dealer, month), random, and first the first few random deals that end at
    the deal (a redeal, a hand bonus paid at once) or hold a hand bonus to declare, which plain random
    deals seldom bring."""
    rng = random.Random(f"contract/{name}")
    rules = PRESETS[name]
    rare: dict[str, Deal] = {}
    for _ in range(20000):
        deal = (rng.sample(range(48), 48), rng.randrange(2), rng.randint(1, 12))
        h = Hand(rules, *deal)
        kind = h.result.reason if h.result is not None else ("declarable" if any(h.declarable) else "")
        if kind and kind not in rare:
            rare[kind] = deal
    return list(rare.values()) + [(rng.sample(range(48), 48), rng.randrange(2), rng.randint(1, 12)) for _ in range(n)]


def hand_outcome(h: Hand) -> Outcome:
    """What every implementation must agree on once a hand is over."""
    r = h.result
    assert r is not None and h.is_over()
    winner = -1 if r.winner is None else r.winner
    return (r.reason, winner, r.points, tuple(r.deltas), r.base, r.multiplier, tuple(h.piles))


def batch_outcome(b: BatchHands, i: int) -> Outcome:
    return (
        REASONS[b.reason[i]],
        int(b.winner[i]),
        int(b.points[i]),
        tuple(int(x) for x in b.deltas[i]),
        int(b.base[i]),
        int(b.multiplier[i]),
        tuple(int(x) for x in b.piles[i]),
    )


class Played:
    """One deal played through the engine's checked moves: the actions, the legal actions before each,
    and the hand at its end."""

    def __init__(self, rules: RuleSet, deal: Deal, choose: Callable[[Hand, list[int]], int]) -> None:
        deck, dealer, month = deal
        h = Hand(rules, deck, dealer, month)
        self.actions: list[int] = []
        self.legal: list[list[int]] = []
        while not h.is_over():
            legal = h.legal_actions()
            a = choose(h, legal)
            self.legal.append(legal)
            self.actions.append(a)
            h.apply_action(a)
        self.hand = h
        self.outcome = hand_outcome(h)


def assert_batch_agrees(rules: RuleSet, dealt: list[Deal], played: list[Played]) -> None:
    """BatchHands, stepped with the engine's actions (checked: an action it holds illegal raises), lists the
    same legal actions at every step and ends every row as the engine ended its hand."""
    b = BatchHands(rules, [d[0] for d in dealt], [d[1] for d in dealt], [d[2] for d in dealt])
    longest = max(len(p.actions) for p in played)
    for t in range(longest + 1):
        mask = b.legal_mask()
        for i, p in enumerate(played):
            want = p.legal[t] if t < len(p.actions) else []
            assert np.flatnonzero(mask[i]).tolist() == want, (i, t)
            assert bool(b.over[i]) == (t >= len(p.actions)), (i, t)
        if t < longest:
            b.step([p.actions[t] if t < len(p.actions) else 0 for p in played])
    for i, p in enumerate(played):
        assert batch_outcome(b, i) == p.outcome, (i, p.actions)
        assert int(b.decisions[i]) == len(p.actions)


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_random_play_engine_and_batch(name: str) -> None:
    """Uniformly random legal actions (the same numbers behind them): the engine and the batch."""
    rules = PRESETS[name]
    rng = random.Random(f"contract/{name}/random")
    dealt = deals(name)
    played = [Played(rules, d, lambda h, legal: legal[int(rng.random() * len(legal))]) for d in dealt]
    assert_batch_agrees(rules, dealt, played)
    reasons = {p.outcome[0] for p in played}
    assert "stop" in reasons or "exhausted" in reasons


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_koikoi_happy_play_engine_and_batch(name: str) -> None:
    """Random cards, and koi-koi whenever it may be called: hands with three, four, five calls, where
    the koi-koi bonuses (own_points_then_multiply's points, then its multiplier) and sake_after_koikoi
    apply, which random play seldom reaches."""
    from koikoi.actions import KOIKOI

    rules = PRESETS[name]
    rng = random.Random(f"contract/{name}/koikoi")
    dealt = deals(name)

    def happy(h: Hand, legal: list[int]) -> int:
        return KOIKOI if KOIKOI in legal else legal[int(rng.random() * len(legal))]

    played = [Played(rules, d, happy) for d in dealt]
    assert_batch_agrees(rules, dealt, played)
    if name == "koikoi-japan":  # the deals reach every step of its bonus
        calls = {p.hand.koikoi_calls[p.hand.result.winner] for p in played if p.outcome[0] == "stop"}
        assert {1, 2, 3, 4} <= calls, calls


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_greedy_play_engine_fast_playouts_and_batch(name: str) -> None:
    """The search's greedy playout policy (a player stops at once): defined through the engine's moves
    (policy_choice), played on plain integers by fastplay.fast_playout (whole, and for the score changes
    alone) and hard_v1's frozen copy, and its actions replayed by the batch."""
    rules = PRESETS[name]
    rng = random.Random(f"contract/{name}/greedy/None")  # the deals it always had
    dealt = deals(name)
    noise = noise_pool(rng, 1.5, size=64)
    played = []
    for deal in dealt:
        k0 = rng.randrange(64)
        k = k0

        def greedy(h: Hand, legal: list[int]) -> int:
            nonlocal k
            a, k = policy_choice(h, legal, noise, k)
            return a

        p = Played(rules, deal, greedy)
        played.append(p)
        engine = p.hand
        assert engine.result is not None
        deltas = engine.result.deltas

        fast = Hand(rules, *deal)
        assert fast_playout(fast, noise, k0) == deltas
        assert fast.result == engine.result  # the yaku too: the engine's own settling
        assert hand_outcome(fast) == p.outcome
        assert (fast.stock_pos, fast.current_player, fast.table, fast.hands) == (
            engine.stock_pos,
            engine.current_player,
            engine.table,
            engine.hands,
        )
        assert fast.koikoi_calls == engine.koikoi_calls and fast.cards_accounted_for()
        assert fast_playout(Hand(rules, *deal), noise, k0, deltas_only=True) == deltas

        frozen = Hand(rules, *deal)
        assert hard_v1.fast_playout(frozen, noise, k0) == deltas
        assert frozen.result == engine.result
        assert hand_outcome(frozen) == p.outcome
    assert_batch_agrees(rules, dealt, played)


class DeckList(Chance):
    """A match's chance outcomes read back from the vector env's record of it."""

    def __init__(self, log: dict[str, list[Any]]) -> None:
        self.log = log
        self.decks = self.draws = 0

    def deck(self) -> list[int]:
        self.decks += 1
        deck: list[int] = self.log["decks"][self.decks - 1]
        return deck

    def draw_card(self) -> int:
        self.draws += 1
        card: int = self.log["draws"][self.draws - 1]
        return card


def short(rules: RuleSet) -> RuleSet:
    """The preset with matches short enough to end within the run (the hands' rules unchanged)."""
    if rules.hands > 2:
        rules = rules.replace(hands=2)
    if rules.target_score:
        rules = rules.replace(target_score=8)
    return rules


@pytest.mark.parametrize("opponent", [None, "easy"], ids=["selfplay", "easy"])
@pytest.mark.parametrize("name", PRESET_NAMES)
def test_vector_env_matches_engine_matches(name: str, opponent: str | None) -> None:
    """The vector env deals the preset's decks (in its own order) and is driven by the same kind of random
    numbers; every finished match is replayed through the engine's Match from its record: each action
    is legal there, each of the ``easy`` opponent's is one EasyAgent ranks best, and the final scores
    and the number of hands are the engine's."""
    rules = short(PRESETS[name])
    supply = [d[0] for d in deals(name)]
    dealt = 0

    def contract_decks(rng: np.random.Generator, n: int) -> np.ndarray:
        nonlocal dealt
        out = [supply[(dealt + j) % len(supply)] for j in range(n)]
        dealt += n
        return np.array(out, dtype=np.int64)

    n = 8
    months = (3, 8) if rules.dealer_selection == "birth_month" else None
    rng = random.Random(f"contract/{name}/vector/{opponent}")
    easy = EasyAgent(0)
    finished: list[tuple[dict[str, list[Any]], list[int]]] = []
    with mock.patch.object(kvector, "random_decks", contract_decks):
        venv = kvector.KoiKoiVectorEnv(n, rules=rules, opponent=opponent, birth_months=months, record=True)
        obs, info = venv.reset(seed=len(name))
        logs = [venv.match_log(i) for i in range(n)]
        for _ in range(150):
            masks = obs["action_mask"]
            actions = []
            for i in range(n):
                allowed = np.flatnonzero(masks[i])
                actions.append(int(allowed[int(rng.random() * len(allowed))]))
            obs, rewards, terminated, _, info = venv.step(actions)
            for t in np.flatnonzero(terminated):
                finished.append((logs[t], info["final_scores"][t].tolist()))
                logs[t] = venv.match_log(int(t))
    assert dealt > 0 and finished
    for log, scores in finished:
        assert all(d in supply for d in log["decks"])
        chance = DeckList(log)
        m = Match(rules, chance=chance, birth_months=months)
        for a in log["actions"]:
            legal = m.legal_actions()
            assert a in legal
            if opponent == "easy" and m.current_player == 1:  # the learner sits at seat 0
                ranked = easy.rank(m.observation(1))
                assert {c.action: c.value for c in ranked}[a] == ranked[0].value
            m.apply_action(a)
        assert m.is_over()
        assert m.scores == scores
        assert chance.decks == len(log["decks"])  # the same hands, the same redeals
