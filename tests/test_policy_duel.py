"""benchmarks/policy_duel.py: two batched playout policies in the two seats play each hand as the engine
plays it with each seat's policy, and a policy against itself comes out even."""

import sys
from pathlib import Path

import numpy as np
from test_batchplay import _greedy_move, _play_out, _yaku_move

from koikoi.batch import random_decks
from koikoi.hand import Hand
from koikoi.rules import preset

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import policy_duel  # noqa: E402

_MOVES = {"greedy": _greedy_move, "yaku": _yaku_move}


def test_each_seat_plays_its_own_policy_as_the_engine_does():
    rules = preset("nintendo")
    hands, seed = 60, 8
    got = policy_duel.duel(rules, "yaku", "greedy", hands, seed, 1.5, 1.5)
    gen = np.random.default_rng(seed)
    decks = random_decks(gen, hands)
    na, nb = gen.random((hands, 48)) * 1.5, gen.random((hands, 48)) * 1.5
    for i in range(hands):
        want = 0.0
        for a_seat in (0, 1):
            ya = lambda h, i=i: _MOVES["yaku"](h, na[i])  # noqa: E731
            gr = lambda h, i=i: _MOVES["greedy"](h, nb[i])  # noqa: E731
            d = _play_out(Hand(rules, [int(c) for c in decks[i]], 0, 1), (ya, gr) if a_seat == 0 else (gr, ya))
            want += (d[a_seat] - d[1 - a_seat]) / 2
        assert got[i] == want, i
    assert got.any()  # the policies differ somewhere


def test_a_policy_against_itself_is_even_and_the_script_reports(capsys):
    assert not policy_duel.duel(preset("nintendo"), "yaku", "yaku", 200, 3).any()
    assert policy_duel.main(["--a", "yaku", "--b", "greedy", "--hands", "300", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("yaku (noise 0) vs greedy (noise 0), nintendo: ") and "over 300 deals played twice" in out
    assert "yaku:" in out and "greedy:" in out
