"""benchmarks/playout_policy.py: the search's playout policy played as a player makes the playout's own
choices, from what the player sees, and the script reports a match result."""

import random
import sys
from pathlib import Path

from koikoi.ai.fastplay import noise_pool, policy_choice
from koikoi.match import Match
from koikoi.rules import preset

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import playout_policy  # noqa: E402


def test_the_player_makes_the_playouts_choice_in_the_real_hand():
    """At every decision of a few hands, the policy player choosing from its observation (a sampled world)
    picks what the playout policy picks in the real hand: the policy reads nothing hidden."""
    checked = 0
    for seed in range(3):
        m = Match(preset("nintendo"), seed=seed)
        player = playout_policy.PlayoutPolicyAgent(seed=seed)
        zero = [0.0] * 300
        while not m.is_over():
            obs = m.observation(m.current_player)
            real, _ = policy_choice(m.hand, m.hand.legal_actions(), zero)
            assert player.choose(obs) == real
            m.apply_action(real)
            checked += 1
    assert checked > 100


def test_noise_reaches_the_choice():
    """With noise, the same position can get different choices (the noise is the policy's, as in the search)."""
    m = Match(preset("nintendo"), seed=4)
    obs = m.observation(m.current_player)
    noisy = playout_policy.PlayoutPolicyAgent(seed=1, noise=50.0)
    assert len({noisy.choose(obs) for _ in range(40)}) > 1
    plain = playout_policy.PlayoutPolicyAgent(seed=1)
    assert len({plain.choose(obs) for _ in range(10)}) == 1
    assert policy_choice(m.hand, m.hand.legal_actions(), noise_pool(random.Random(1), 0.0))[0] == plain.choose(obs)


def test_the_script_plays_duplicate_matches_and_reports(capsys):
    assert playout_policy.main(["--against", "easy", "--matches", "4", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("playout policy (noise 0, yaku_weight 0, deny 0.8) vs easy: ")
    assert "of 4; win rate" in out and "points/hand (seed 3)" in out


def test_the_script_refuses_an_odd_count_and_an_unknown_level(capsys):
    import pytest

    for argv, said in (
        (["--matches", "3"], "--matches must be even"),
        (["--against", "grandmaster"], "unknown computer player"),
    ):
        with pytest.raises(SystemExit):
            playout_policy.main(argv)
        assert said in capsys.readouterr().err
