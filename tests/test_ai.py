"""The computer players of koikoi.ai: legal, reproducible, honest (observation only), ranked hints, stronger
than chance. Search budgets are tiny here: strength is measured by benchmarks/strength.py."""

import random
import re

import pytest

from koikoi.actions import DECLARE, DRAW_TAKE_BASE, KOIKOI, STOP
from koikoi.ai import AGENT_NAMES, Choice, HardAgent, make_agent
from koikoi.cards import card_list
from koikoi.hand import Hand
from koikoi.match import Match, ScriptedChance
from koikoi.rules import PRESETS, preset

FAST = {name: {"playouts": 24, "time_limit": None} for name in ("hard", "expert", "hard-v1")}


def agent(name, seed):
    return make_agent(name, seed=seed, **FAST.get(name, {}))


def play(match, agents, max_hands=None, check=None):
    """Play ``match`` with one agent per seat until it ends (or ``max_hands`` hands are over)."""
    while not match.is_over() and (max_hands is None or len(match.results) < max_hands):
        p = match.current_player
        obs = match.observation(p)
        action = agents[p].choose(obs)
        assert action in obs.legal_actions, (agents[p], obs.phase, action, obs.legal_actions)
        if check:
            check(obs, action)
        match.apply_action(action)
    return match


def test_names_and_aliases():
    assert AGENT_NAMES == ("random", "easy", "medium", "hard", "expert", "hard-v1")
    expert, hard = make_agent("expert"), make_agent("hard")
    assert type(expert).rank is type(hard).rank  # the same search ...
    assert expert.playouts == 5 * hard.playouts and expert.time_limit == 6.0  # ... with five times the budget
    assert hard.batched and expert.batched and not make_agent("hard", batched=False).batched
    assert make_agent("greedy").name == "easy"
    assert make_agent("HARD", seed=1, playouts=5).playouts == 5
    with pytest.raises(ValueError, match="unknown computer player 'grandmaster'"):
        make_agent("grandmaster")
    with pytest.raises(ValueError):
        HardAgent(playouts=0)


@pytest.mark.parametrize("name", AGENT_NAMES)
@pytest.mark.parametrize("rules", sorted(PRESETS))
def test_legal_in_every_preset(name, rules):
    m = Match(PRESETS[rules], seed=11, birth_months=(3, 8))
    play(m, [agent(name, 1), agent("random", 2)], max_hands=2)
    assert len(m.results) >= 1


@pytest.mark.parametrize("name", AGENT_NAMES)
def test_every_phase_is_answered(name):
    """Over a few hands each level meets capture choices, draw choices and koi-koi decisions."""
    phases = set()
    ranked_phases = set()

    def check(obs, action):
        phases.add(obs.phase)
        if obs.legal_actions[0] >= DRAW_TAKE_BASE and obs.legal_actions[0] < KOIKOI:
            assert action >= DRAW_TAKE_BASE
        if KOIKOI in obs.legal_actions:
            ranked_phases.add("koikoi-choice")

    for seed in range(4):
        m = Match(preset("nintendo"), seed=seed)
        play(m, [agent(name, seed), agent(name, seed + 100)], max_hands=3, check=check)
    assert {"play", "draw_choice", "decision"} <= phases
    assert "koikoi-choice" in ranked_phases


def _teshi_match():
    """A traditional match whose dealer (player 0) holds all four pine cards and must declare them."""
    rules = preset("traditional")
    rng = random.Random(5)
    for _ in range(200):
        rest = list(range(4, 48))
        rng.shuffle(rest)
        deck = rest[:4] + [0, 1, 2, 3] + rest[4:]
        m = Match(
            rules,
            chance=ScriptedChance([deck, *[random.Random(i).sample(range(48), 48) for i in range(40)]], draws=[0, 47]),
        )
        if m.observation(0).can_declare:
            return m
    raise AssertionError("no teshi deal found")


@pytest.mark.parametrize("name", ["easy", "medium", "hard"])
def test_a_dealt_hand_bonus_is_declared(name):
    m = _teshi_match()
    obs = m.observation(0)
    assert DECLARE in obs.legal_actions
    assert agent(name, 3).choose(obs) == DECLARE
    assert agent("random", 3).choose(obs) in obs.legal_actions


@pytest.mark.parametrize("name", AGENT_NAMES)
def test_same_seed_same_choices(name):
    def actions(seed):
        m = Match(preset("nintendo"), seed=21)
        play(m, [agent(name, seed), agent(name, seed + 1)], max_hands=2)
        return m.actions

    assert actions(4) == actions(4)
    if name != "easy":  # the greedy player is almost deterministic: ties are rare
        assert actions(4) != actions(5) or name == "medium"


def _other_world(match, rng):
    """The same match with the hidden cards of the player to move dealt differently (same counts)."""
    p = match.current_player
    obs = match.observation(p)
    unseen = card_list(obs.unseen_mask)
    for _ in range(50):
        rng.shuffle(unseen)
        opp = sum(1 << c for c in unseen[: obs.opponent_hand_count])
        stock = unseen[obs.opponent_hand_count :]
        real = match.hand
        if opp != real.hands[1 - p] or tuple(stock) != real.stock[real.stock_pos :]:
            break
    twin = match.clone()
    twin.hand = Hand.from_observation(obs, opp, stock)
    twin.hand._events = real._events[:]  # the public history stays as it was
    assert twin.observation(p) == obs
    return twin


@pytest.mark.parametrize("name", AGENT_NAMES)
def test_hidden_cards_do_not_change_the_choice(name):
    """An agent sees only its observation: reshuffling what it cannot see changes nothing it does."""
    rng = random.Random(8)
    m = Match(preset("nintendo"), seed=33)
    movers = [agent("medium", 1), agent("medium", 2)]
    checked = 0
    while not m.is_over() and checked < 12:
        p = m.current_player
        obs = m.observation(p)
        if len(obs.legal_actions) > 1 and obs.unseen_mask:
            twin = _other_world(m, rng)
            assert agent(name, 9).choose(obs) == agent(name, 9).choose(twin.observation(p))
            assert agent(name, 9).rank(obs) == agent(name, 9).rank(twin.observation(p))
            checked += 1
        m.apply_action(movers[p].choose(obs))
    assert checked == 12


@pytest.mark.parametrize("name", AGENT_NAMES)
def test_rank_lists_every_legal_action_and_agrees_with_choose(name):
    m = Match(preset("wikipedia"), seed=5)
    movers = [agent("easy", 1), agent("easy", 2)]
    for _ in range(30):
        if m.is_over():
            break
        p = m.current_player
        obs = m.observation(p)
        ranked = agent(name, 6).rank(obs)
        assert all(isinstance(c, Choice) for c in ranked)
        assert sorted(c.action for c in ranked) == sorted(obs.legal_actions)
        if name != "random":
            assert agent(name, 6).choose(obs) == ranked[0].action
        if name in ("easy", "medium"):
            values = [c.value for c in ranked]
            assert values == sorted(values, reverse=True)
        assert str(ranked[0]).startswith(ranked[0].name)
        m.apply_action(movers[p].choose(obs))


def test_hard_ranks_its_finalists_by_value_and_values_a_stop_exactly():
    rules = preset("nintendo").replace(hands=0, target_score=1000)  # no match weighting of the values
    seen_stop = 0
    for seed in range(40):
        m = Match(rules, seed=seed)
        movers = [agent("easy", 1), agent("easy", 2)]
        while not m.is_over():
            p = m.current_player
            obs = m.observation(p)
            if KOIKOI in obs.legal_actions:
                ranked = HardAgent(seed=1, playouts=30, time_limit=None).rank(obs)
                stop = next(c for c in ranked if c.action == STOP)
                assert stop.value == obs.yaku_scores[p] * obs.multipliers[p]
                assert ranked[0].value >= ranked[1].value
                seen_stop += 1
            m.apply_action(movers[p].choose(obs))
        if seen_stop >= 3:
            break
    assert seen_stop >= 3


def test_an_agent_refuses_an_observation_without_a_move():
    m = Match(preset("nintendo"), seed=1)
    waiting = m.observation(1 - m.current_player)
    for name in AGENT_NAMES:
        with pytest.raises(ValueError, match="no legal action"):
            agent(name, 1).choose(waiting)


def _hands_margin(level, opponent, hands, seed):
    """Points of ``level`` minus points of ``opponent`` over the first hands of ``hands`` matches, seats
    alternating (a first hand of twelve: the agents play for points, not yet for the match)."""
    margin = 0
    for i in range(hands):
        seat = i % 2
        agents = [agent(opponent, seed + i), agent(opponent, seed + i)]
        agents[seat] = agent(level, seed + 1000 + i)
        deltas = play(Match(preset("nintendo"), seed=seed + i), agents, max_hands=1).results[0].deltas
        margin += deltas[seat] - deltas[1 - seat]
    return margin


def test_medium_beats_random():
    assert _hands_margin("medium", "random", 60, seed=500) > 60  # about +5 a hand when measured


def test_hard_beats_random():
    assert _hands_margin("hard", "random", 30, seed=700) > 0


@pytest.mark.parametrize("opponent", ["medium", "hard"])
def test_play_against_a_level_and_ask_for_a_hint(opponent, tmp_path, monkeypatch, capsys):
    import io
    import json

    from koikoi.cli import main

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.setattr("sys.stdin", io.StringIO("?\nq\n"))
    record = tmp_path / "game.json"
    assert main(["play", "--rules", "nintendo", "--seed", "4", "--opponent", opponent, "--record", str(record)]) == 0
    out = capsys.readouterr().out
    hint = out[out.index("Hint") :].splitlines()[1:3]
    assert all(re.match(r"\d+\. play ", line.strip()) for line in hint), out[-2000:]
    assert json.loads(record.read_text())["players"][1]["ai"] == opponent


def test_medium_decides_koikoi_by_a_few_playouts_or_by_rule_of_thumb():
    with pytest.raises(ValueError, match="koikoi_playouts"):
        make_agent("medium", koikoi_playouts=-1)
    seen = 0
    for seed in range(30):
        m = Match(preset("nintendo"), seed=seed)
        players = [make_agent("easy", seed=seed), make_agent("easy", seed=seed + 1)]
        while not m.is_over() and seen < 3:
            p = m.current_player
            obs = m.observation(p)
            if KOIKOI in obs.legal_actions:
                searched = make_agent("medium", seed=1).rank(obs)
                assert {c.action for c in searched} == {KOIKOI, STOP}
                assert any("2 playouts" in c.explain for c in searched)
                ruled = make_agent("medium", seed=1, koikoi_playouts=0).rank(obs)
                assert {c.action for c in ruled} == {KOIKOI, STOP}
                assert not any("playouts" in c.explain for c in ruled)
                seen += 1
            m.apply_action(players[p].choose(obs))
        if seen >= 3:
            break
    assert seen >= 3
