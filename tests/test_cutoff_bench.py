"""benchmarks/cutoff.py: playouts cut after some turns and valued by a learned value of the true state.
The features are antisymmetric, a cut too late for any hand plays exactly the plain playouts, the rows
still in play are worth the value, and learn writes what screen reads."""

import json
import random
import sys
from pathlib import Path

import numpy as np
import pytest
from test_fastplay import _positions

from koikoi.rules import preset

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import cutoff  # noqa: E402

from koikoi.ai.batchplay import GreedyPolicy, play_worlds, sample_hidden, worlds  # noqa: E402
from koikoi.ai.search import WorldSampler  # noqa: E402


def _views(count: int, seed: int):
    """Sampled worlds of positions from random play: (sampler, held, stocks, legal actions)."""
    gen = np.random.default_rng(seed)
    out = []
    for obs in _positions(preset("nintendo"), count, random.Random(seed)):
        sampler = WorldSampler(obs, random.Random(1))
        held, stocks = sample_hidden(gen, sampler.unseen, sampler.n_opp, None, 16)
        out.append((sampler, held, stocks, list(obs.legal_actions)))
    return out


def test_a_seat_swap_negates_the_features():
    for sampler, held, stocks, _ in _views(8, seed=3):
        b = worlds(sampler.template, sampler.other, held, stocks, 1)
        x = cutoff.features(b)
        assert x.shape == (16, cutoff.FEATURES) and np.abs(x).sum() > 0
        for name in ("_hands", "_piles", "_pts", "_calls"):
            getattr(b, name)[:] = getattr(b, name)[::-1].copy()
        b.current_player[:] = 1 - b.current_player
        assert (cutoff.features(b) == -x).all()


def test_a_cut_past_the_end_plays_the_plain_playouts_and_a_cut_values_the_rest():
    gen = np.random.default_rng(5)
    weights = np.zeros(cutoff.FEATURES)
    weights[0] = 1.0  # the yaku points' difference: whole numbers, so the value is exact
    cut_rows = 0
    for sampler, held, stocks, actions in _views(10, seed=7):
        noise = gen.random((16, 48))
        plain = play_worlds(sampler.template, sampler.other, held, stocks, actions, noise)

        def late(noise, rows):
            return cutoff.CutPolicy(noise, rows, 17, weights, np.random.default_rng(0))

        assert (play_worlds(sampler.template, sampler.other, held, stocks, actions, noise, late) == plain).all()

        # Cut after one turn: the rows whose hand goes on are worth their yaku points' difference.
        b = worlds(sampler.template, sampler.other, held, stocks, len(actions))
        b.apply(np.repeat(np.array(actions, dtype=np.int64), 16), np.ones(b.n, dtype=bool))
        b.play_policy(GreedyPolicy(noise, b.n), turns=1)
        live = ~b.over
        cut_rows += int(live.sum())

        def early(noise, rows):
            return cutoff.CutPolicy(noise, rows, 1, weights, np.random.default_rng(0))

        got = play_worlds(sampler.template, sampler.other, held, stocks, actions, noise, early).reshape(-1, 2)
        assert (got[live, 0] == b._pts[0, live] - b._pts[1, live]).all() and (got[live, 1] == 0).all()
        assert (got[~live] == b._deltas.T[~live]).all()  # hands over within the turn: as they ended
    assert cut_rows > 100


def test_learn_writes_the_value_that_screen_plays(tmp_path, capsys):
    value = tmp_path / "value.json"
    tiny = ["--set", "hard.playouts=60", "--set", "hard.time_limit=none"]
    args = ["learn", "--matches", "2", "--seed", "4", *tiny, "--write", str(value)]
    assert cutoff.main(args) == 0
    out = capsys.readouterr().out
    assert "share of the hands' ends explained" in out
    weights = json.loads(value.read_text())["weights"]
    assert len(weights) == cutoff.FEATURES
    assert cutoff.main(["screen", "--value", str(value), "--turns", "2", "--playouts", "60", *tiny,
                        "--matches", "2", "--seed", "4"]) == 0  # fmt: skip
    assert "cutoff (2 turns, 60 playouts) vs hard:" in capsys.readouterr().out
    value.write_text(json.dumps({"weights": weights[:-1]}))
    with pytest.raises(SystemExit, match="holds no value to use"):
        cutoff.main(["screen", "--value", str(value), "--matches", "2"])
