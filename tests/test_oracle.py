"""benchmarks/oracle.py: the measuring stick that gives hard's search the real hidden cards. Its worlds
hold exactly the real cards, it plays and reports full matches, and no player can be named after it."""

import random
import sys
from pathlib import Path

import numpy as np
import pytest

from koikoi.ai.search import WorldSampler
from koikoi.arena import ArenaError, make_builtin
from koikoi.match import Match
from koikoi.rules import preset

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import oracle  # noqa: E402


def _midgame(seed: int, moves: int) -> Match:
    m = Match(preset("nintendo"), seed=seed)
    rng = random.Random(seed)
    for _ in range(moves):
        m.apply_action(rng.choice(m.legal_actions()))
    return m


@pytest.mark.parametrize("know", oracle.KNOW)
def test_the_worlds_hold_the_real_hidden_cards(know):
    m = _midgame(4, 7)
    p = m.current_player
    obs = m.observation(p)
    h = m.hand
    real_hand, real_stock = h._hands[1 - p], list(h.stock[h.stock_pos :])
    agent = oracle.Oracle(know, seed=1, playouts=100)
    agent.truth = (real_hand, real_stock)
    ws = WorldSampler(obs, random.Random(1))
    held, stocks = agent._hidden(np.random.default_rng(2), ws, None, 6)
    assert held.tolist() == [real_hand] * 6
    if know == "all":
        assert stocks.tolist() == [real_stock] * 6
    else:  # the real hand, the stock shuffled: the same cards in other orders
        assert all(sorted(row) == sorted(real_stock) for row in stocks.tolist())
        assert len({tuple(row) for row in stocks.tolist()}) > 1
    agent.truth = (real_hand, real_stock[1:])  # not the observation's unseen cards
    with pytest.raises(RuntimeError, match="unseen"):
        agent._hidden(np.random.default_rng(2), ws, None, 6)


def test_it_plays_matches_and_reports(capsys):
    outcome, diff, hands, mine, theirs = oracle.play_match(("all", 200, "easy", "nintendo", 3, 1, {}))
    assert outcome == (0 if diff > 0 else 1 if diff == 0 else 2)
    assert hands >= 1 and mine and theirs
    assert oracle.main(["--know", "hand", "--against", "easy", "--playouts", "100", "--matches", "2"]) == 0
    out = capsys.readouterr().out
    assert "oracle (knows the hand, 100 playouts) vs easy:" in out and "of 2;" in out
    with pytest.raises(SystemExit):
        oracle.main(["--know", "hand", "--against", "nobody"])


def test_no_player_can_be_named_oracle():
    with pytest.raises(ArenaError):
        make_builtin("oracle", 1, preset("nintendo"))
