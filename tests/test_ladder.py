"""The computer levels' ratings (koikoi.ladder): the fit recovers known gaps, anchored where it says."""

from __future__ import annotations

import random

import pytest

from koikoi.ladder import ANCHOR_RATING, Result, expected, fit, play


def test_the_fit_recovers_the_gaps_it_was_made_from():
    true = {"random": 900.0, "easy": 1300.0, "medium": 1500.0, "hard": 1650.0, "expert": 1700.0}
    rng = random.Random(3)
    results = []
    for a, b in [("random", "easy"), ("easy", "medium"), ("medium", "hard"), ("hard", "expert"), ("easy", "hard")]:
        n = 4000
        p = expected(true[a] - true[b])
        results.append(Result(a, b, n, sum(rng.random() < p for _ in range(n))))
    got = fit(results)
    assert got["medium"] == pytest.approx(ANCHOR_RATING)
    for level, r in true.items():
        assert got[level] == pytest.approx(r, abs=25), (level, got)


def test_a_level_that_won_everything_stays_finite():
    got = fit([Result("random", "medium", 50, 0.0)])
    assert got["medium"] == pytest.approx(1500) and 0 < got["random"] < 1000


def test_draws_count_half_and_sides_do_not_matter():
    assert fit([Result("easy", "medium", 10, 5.0)])["easy"] == pytest.approx(1500)
    assert fit([Result("medium", "easy", 10, 7.0)]) == pytest.approx(fit([Result("easy", "medium", 10, 3.0)]))


def test_bad_results_are_refused():
    with pytest.raises(ValueError, match="score of 11"):
        fit([Result("easy", "medium", 10, 11)])
    with pytest.raises(ValueError, match="itself"):
        fit([Result("easy", "easy", 10, 5)])
    with pytest.raises(ValueError, match="no common scale"):
        fit([Result("easy", "medium", 10, 5), Result("hard", "expert", 10, 5)])
    with pytest.raises(ValueError, match="anchor"):
        fit([Result("easy", "hard", 10, 5)])


def test_real_levels_play_and_are_placed():
    results = play("nintendo", hands=1, games=6, seed=1, levels=("random", "easy", "medium"), jobs=1)
    assert [(r.a, r.b, r.games) for r in results] == [("random", "easy", 6), ("easy", "medium", 6)]
    got = fit(results)
    assert set(got) == {"random", "easy", "medium"} and got["medium"] == pytest.approx(1500)


def test_the_command_prints_and_writes_the_ratings(tmp_path, capsys):
    import json

    from koikoi.cli import main

    out = tmp_path / "levels.json"
    args = ["ladder", "--hands", "1", "--games", "2", "--levels", "random,easy,medium", "--jobs", "1"]
    assert main([*args, "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    assert set(printed["ratings"]) == {"random", "easy", "medium"} and printed["ratings"]["medium"] == 1500
    assert [(r["a"], r["b"], r["games"]) for r in printed["results"]] == [("random", "easy", 2), ("easy", "medium", 2)]
    assert main(["ladder", "--levels", "easy,hard"]) == 2
    assert "medium among them" in capsys.readouterr().err
    assert main(["ladder", "--levels", "easy,medium,godlike"]) == 2
    assert "not godlike" in capsys.readouterr().err
