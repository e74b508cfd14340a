"""benchmarks/ismcts.py: information-set MCTS, the measuring stick for a search that plans its later moves.
It ranks only legal moves, sees nothing hidden, spends its iterations in a tree of both players' choices,
values a stop exactly, and plays and reports full matches."""

import random
import sys
from pathlib import Path

import pytest

from koikoi.actions import KOIKOI, STOP
from koikoi.match import Match
from koikoi.rules import preset

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import ismcts  # noqa: E402

from koikoi.ai.search import _stop_deltas, match_utility  # noqa: E402


def _positions(count: int, seed: int):
    """(match, player to move) at decisions with a choice, from random play."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        m = Match(preset("nintendo"), seed=rng.randrange(10**6))
        for _ in range(rng.randrange(1, 30)):
            if m.is_over():
                break
            m.apply_action(rng.choice(m.legal_actions()))
        if not m.is_over() and len(m.legal_actions()) > 1:
            out.append(m)
    return out


@pytest.mark.parametrize("guided", [False, True])
def test_it_ranks_every_legal_move_and_reads_nothing_hidden(guided):
    for m in _positions(6, seed=11):
        p = m.current_player
        obs = m.observation(p)
        agent = ismcts.Ismcts(seed=5, iterations=300, guided=guided)
        ranked = agent.rank(obs)
        assert sorted(c.action for c in ranked) == sorted(obs.legal_actions)
        visits = [int(c.explain.split()[2]) for c in ranked]
        assert sum(visits) == 300 and visits == sorted(visits, reverse=True)  # the most visited first
        if obs.phase == "play" and len(obs.hand) > 1:  # the tree went past the root's own choices
            assert agent.nodes > len(obs.legal_actions)
        # The same seed on the same observation with the hidden cards dealt otherwise: the same ranking.
        h = m.hand
        other = 1 - p
        unseen = [c for c in range(48) if h._hands[other] >> c & 1] + list(h.stock[h.stock_pos :])
        random.Random(3).shuffle(unseen)
        n = h._hands[other].bit_count()
        h._hands[other] = sum(1 << c for c in unseen[:n])
        h._cards[other] = sorted(unseen[:n])
        h.stock = tuple(h.stock[: h.stock_pos]) + tuple(unseen[n:])
        again = ismcts.Ismcts(seed=5, iterations=300, guided=guided).rank(m.observation(p))
        assert [(c.action, c.value) for c in again] == [(c.action, c.value) for c in ranked]


def test_a_stop_is_valued_exactly():
    """Stopping ends the hand: every visit of it scores the same, the points of stopping weighed by the
    match score, as hard computes them."""
    rules = preset("nintendo")
    rng = random.Random(7)
    found = 0
    for _ in range(4000):
        m = Match(rules, seed=rng.randrange(10**6))
        while not m.is_over() and STOP not in m.legal_actions():
            m.apply_action(rng.choice(m.legal_actions()))
        if m.is_over() or KOIKOI not in m.legal_actions():
            continue
        obs = m.observation(m.current_player)
        ranked = {c.action: c for c in ismcts.Ismcts(seed=1, iterations=200).rank(obs)}
        d = _stop_deltas(obs)
        utility, _ = match_utility(obs, "win")
        assert ranked[STOP].value == pytest.approx(utility(d[obs.player] - d[1 - obs.player]))
        assert ranked[KOIKOI].value != ranked[STOP].value
        found += 1
        if found == 3:
            break
    assert found == 3


def test_it_plays_matches_and_reports(capsys):
    outcome, diff, hands, mine, theirs = ismcts.play_match((100, 6.0, False, "easy", "nintendo", 3, 1, {}))
    assert outcome == (0 if diff > 0 else 1 if diff == 0 else 2)
    assert hands >= 1 and mine and theirs
    assert ismcts.main(["--iterations", "50", "--guided", "--against", "easy", "--matches", "2"]) == 0
    out = capsys.readouterr().out
    assert "ismcts (50 iterations, c 6, guided) vs easy:" in out and "of 2;" in out
    with pytest.raises(SystemExit):
        ismcts.main(["--against", "nobody"])
    with pytest.raises(ValueError, match="iterations"):
        ismcts.Ismcts(iterations=0)
