"""Hints in the units on the screen (issue 12, item 5): every legal choice, best first, a stop worth
exactly the points it scores, each play with the cards it takes, and the match chance where the search
weighs the match score."""

from __future__ import annotations

import os
import re

import pytest
from test_cli import Driver

from koikoi.actions import KOIKOI, STOP, action_name
from koikoi.ai import make_agent
from koikoi.ai.hints import captured_by, hint_lines
from koikoi.ai.search import match_win_chance
from koikoi.cards import CARD_NAMES
from koikoi.match import Match
from koikoi.rules import preset


def _hint(m: Match, seed: int = 1):
    obs = m.observation(m.current_player)
    return obs, hint_lines(obs, make_agent("hard", seed=seed, playouts=600, time_limit=None).rank(obs))


def _to_decision(rules, seeds=range(200)) -> Match:
    for seed in seeds:
        m = Match(rules, seed=seed)
        while not m.is_over():
            legal = m.legal_actions()
            if KOIKOI in legal:
                return m
            m.apply_action(legal[0])
    pytest.fail("no koi-koi decision in 200 seeds")  # pragma: no cover


@pytest.mark.parametrize("name", ["nintendo", "bga", "cardavia", "traditional"])
def test_a_stop_in_the_hint_is_exactly_the_points_it_scores(name):
    m = _to_decision(preset(name))
    obs, lines = _hint(m)
    me = obs.player
    by_action = {line.action: line for line in lines}
    assert set(by_action) == set(obs.legal_actions) == {STOP, KOIKOI}
    # the decision dialog's stop button: the yaku total times the multiplier
    assert by_action[STOP].points == obs.yaku_scores[me] * obs.multipliers[me]
    after = m.clone()
    after.apply_action(STOP)
    assert after.results[-1].deltas[me] == after.results[-1].points == by_action[STOP].points


@pytest.mark.parametrize("name", ["nintendo", "bga", "cardavia", "wikipedia"])
def test_every_legal_choice_is_listed_best_first_with_what_it_takes(name):
    for seed in range(3):
        m = Match(preset(name), seed=seed)
        for _ in range(seed * 3):  # a few positions into the hand
            if m.is_over():
                break
            m.apply_action(m.legal_actions()[-1])
        if m.is_over():
            continue
        obs, lines = _hint(m, seed)
        assert sorted(line.action for line in lines) == sorted(obs.legal_actions)
        shown = [line.to_dict() for line in lines]
        if len(lines) > 1:
            assert all(v["points"] is not None for v in shown)
            # sorted by what is shown: the chance to win as shown (where there is one), then the points
            figures = [(v["win"] if v["win"] is not None else 0.0, v["points"]) for v in shown]
            assert figures == sorted(figures, reverse=True)
        # What each play takes is what the engine takes when it is played.
        for line in lines:
            assert line.captures == captured_by(obs, line.action)
            if line.action >= 240:
                continue
            after = m.clone()
            after.apply_action(line.action)
            ev = next(e for e in reversed(after.observation(obs.player).events) if e[1] == "play")
            player, kind, card, captured = ev
            assert (player, card) == (obs.player, line.action if line.action < 48 else (line.action - 48) // 4)
            assert captured & ~(1 << card) == sum(1 << c for c in line.captures)


def test_the_match_chance_is_given_where_the_match_score_is_weighed():
    # nintendo: 12 hands, no transfers: the search weighs the match, and the chance is shown
    m = Match(preset("nintendo"), seed=3)
    _, lines = _hint(m)
    assert all(line.win is not None and 0.0 <= line.win <= 1.0 for line in lines)
    # bga: points transfer, so the model does not apply: points only
    m = Match(preset("bga"), seed=3)
    obs, lines = _hint(m)
    assert match_win_chance(obs) is None
    assert all(line.win is None and line.points is not None for line in lines)


def test_hints_with_the_same_shown_chance_are_in_the_order_of_their_points():
    # Issue 33, item 7: a list sorted by an unshown fraction of a percent showed -10.5 above -10.1.
    from koikoi.ai.base import Choice

    m = Match(preset("nintendo"), seed=3)
    obs = m.observation(m.current_player)
    a, b, c = obs.legal_actions[:3]
    ranked = [Choice(a, 1.0, "", -10.5, 0.12041), Choice(b, 0.9, "", -10.1, 0.12039), Choice(c, 0.5, "", 3.0, 0.1)]
    lines = hint_lines(obs, ranked)
    assert [line.action for line in lines] == [b, a, c]  # 12.0% both: the points decide
    assert [(d["win"], d["points"]) for d in (line.to_dict() for line in lines)] == [
        (0.12, -10.1),
        (0.12, -10.5),
        (0.1, 3.0),
    ]
    # without a match chance the points alone
    plain = [Choice(a, 0.0, "", -10.5), Choice(b, 0.0, "", -10.1)]
    assert [line.action for line in hint_lines(obs, plain)] == [b, a]


def test_the_match_chance_in_the_last_hand_is_the_final_score():
    m = Match(preset("cardavia"), seed=1)  # one hand: the hand decides the match
    chance = match_win_chance(m.observation(m.current_player))
    assert chance is not None
    assert (chance(3), chance(0), chance(-1)) == (1.0, 0.5, 0.0)


def test_the_terminal_hint_lists_every_move_sorted_with_what_it_takes(tmp_path):
    data_env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"), COLUMNS="100")
    m = Match(preset("cardavia"), seed=11)
    d = Driver(["play", "--rules", "cardavia", "--seed", "11", "--record", str(tmp_path / "g.json")], data_env)
    assert "Your move" in d.prompt().splitlines()[-1]
    d.answer("hint")
    shown = d.prompt(timeout=60)
    d.answer("q")
    d.prompt()
    assert "Hint (best first by chance to win the match, then points):" in shown
    rows = re.findall(r"^\s+(\d+)\. (.+?)\s+(\d+\.\d)% to win\s+([+-]\d+\.\d) points\s+takes (.+)$", shown, re.M)
    obs = m.observation(0)
    assert m.current_player == 0 and len(rows) == len(obs.legal_actions)
    assert [int(r[0]) for r in rows] == list(range(1, len(rows) + 1))
    # Sorted by what is shown: the chance first, then the points beside it.
    figures = [(float(r[2]), float(r[3])) for r in rows]
    assert figures == sorted(figures, reverse=True)
    by_name = {r[1].strip(): r[4].strip() for r in rows}
    for a in obs.legal_actions:
        takes = ", ".join(CARD_NAMES[c] for c in captured_by(obs, a)) or "nothing"
        assert by_name[action_name(a)] == takes
