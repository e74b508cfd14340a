"""benchmarks/imitation.py: a level's choices recorded and fitted as playout tables, and the search screened
on them. The fit recovers a policy it is shown, the koi-koi shares count what was called, the script
writes what the screen reads and refuses what it cannot use, and no player can be named after it."""

import json
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from koikoi.ai.batchplay import PlayValues
from koikoi.arena import ArenaError, make_builtin
from koikoi.rules import preset

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import imitation  # noqa: E402


def _recorded(matches=2):
    cards, calls = [], []
    for i in range(matches):
        c, k = imitation.record_match(("hard[playouts=200;time_limit=none]", "nintendo", 11, i, {}))
        cards += c
        calls += k
    return cards, calls


def test_the_records_are_the_choices_the_playouts_model():
    cards, calls = _recorded(1)
    assert len(cards) > 20 and calls
    for hand, nibs, chosen in cards:
        assert hand == sorted(hand) and 2 <= len(hand) <= 8 and 0 <= chosen < len(hand)
        assert all(0 <= n < 16 for n in nibs)
    assert all(points > 0 and 0 <= left <= 8 for points, left, _ in calls)


def test_the_fit_recovers_a_policy_it_is_shown():
    """Choices made by known tables (other than the greedy ones) are learned back: the fitted tables pick the
    same card far more often than the greedy values do."""
    cards, _ = _recorded(2)
    hands, nibs, _ = imitation.card_arrays(cards)
    rng = np.random.default_rng(3)
    truth = rng.normal(0.0, 1.0, 144)
    s, _, _ = imitation._scores(truth, hands, nibs)
    chosen = s.argmax(1)
    assert imitation.agreement(truth, hands, nibs, chosen) == 1.0
    fitted = imitation.fit(hands, nibs, chosen, steps=600)
    greedy = imitation.agreement(imitation.greedy_params(), hands, nibs, chosen)
    learned = imitation.agreement(fitted, hands, nibs, chosen)
    assert learned > 0.85 and learned > greedy + 0.2


def test_the_greedy_params_score_as_the_greedy_policy_values():
    cards, _ = _recorded(1)
    hands, nibs, _ = imitation.card_arrays(cards)
    s, _, _ = imitation._scores(imitation.greedy_params(), hands, nibs)
    play = PlayValues().play
    for row in range(len(hands)):
        for j, c in enumerate(hands[row]):
            if c < 64 and bin(int(nibs[row, j])).count("1") != 2:  # (two table cards: a choice, its own actions)
                assert s[row, j] == pytest.approx(play[c * 16 + nibs[row, j]])


def test_koikoi_shares_count_the_calls():
    calls = [(1, 3, True)] * 30 + [(1, 3, False)] * 10 + [(7, 2, False)] * 20 + [(9, 2, False)] * 5
    shares, total = imitation.koikoi_shares(calls)
    assert total[1, 3] == 40 and total[7, 2] == 25  # 9 points counts as 7 or more
    assert 0.6 < shares[1, 3] < 0.75  # 30 of 40, drawn a little toward the row
    assert shares[7, 2] < 0.1
    assert (shares[:, 0] == 0).all()


def test_learn_writes_what_screen_plays(tmp_path, capsys):
    path = tmp_path / "learned.json"
    level = "hard[playouts=200;time_limit=none]"
    assert imitation.main(["learn", "--level", level, "--matches", "1", "--steps", "50", "--write", str(path)]) == 0
    out = capsys.readouterr().out
    assert "greedy policy" in out and "fitted tables" in out and "koi-koi called at" in out
    learned = json.loads(path.read_text())
    assert all(len(learned[k]) == 48 for k in ("played", "taken", "shed"))
    assert np.array(learned["koikoi"]).shape == (imitation.POINTS, imitation.LEFT)
    for use in imitation.USES:
        args = ["screen", "--tables", str(path), "--use", use, "--playouts", "100", "--matches", "2"]
        assert imitation.main([*args, "--against", "easy"]) == 0
        assert f"imitator ({use} learned from {level}, 100 playouts) vs easy:" in capsys.readouterr().out
    (tmp_path / "bad.json").write_text(json.dumps({"played": []}))
    with pytest.raises(SystemExit, match="no 'taken'"):
        imitation.main(["screen", "--tables", str(tmp_path / "bad.json"), "--matches", "2"])
    with pytest.raises(SystemExit, match="nobody"):
        imitation.main(["learn", "--level", "nobody"])


def test_a_playout_that_calls_koikoi_calls_it():
    """With every share 1 the learned playouts call koi-koi wherever the rules let them, with every share 0
    never: the scores of the same worlds differ."""
    from koikoi.ai.batchplay import play_worlds, sample_hidden
    from koikoi.ai.search import WorldSampler
    from koikoi.match import Match

    m = Match(preset("nintendo"), seed=5)
    obs = m.observation(m.current_player)
    ws = WorldSampler(obs, random.Random(1))
    gen = np.random.default_rng(1)
    held, stocks = sample_hidden(gen, ws.unseen, ws.n_opp, None, 400)
    noise = gen.random((400, 48))
    got = {}
    for share in (0.0, 1.0):
        shares = np.full((imitation.POINTS, imitation.LEFT), share)
        make = lambda n, r, s=shares: imitation.LearnedCalls(n, r, None, s, np.random.default_rng(2))  # noqa: E731
        got[share] = play_worlds(ws.template, ws.other, held, stocks, list(obs.legal_actions), noise, make)
    plain = play_worlds(ws.template, ws.other, held, stocks, list(obs.legal_actions), noise)
    assert (got[0.0] == plain).all()
    assert (got[1.0] != plain).any()


def test_no_player_can_be_named_imitator():
    with pytest.raises(ArenaError):
        make_builtin("imitator", 1, preset("nintendo"))
