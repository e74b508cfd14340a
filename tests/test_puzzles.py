"""Puzzles (koikoi.puzzles, koikoi.puzzlegen, ``koikoi puzzles``): what makes a move clearly best, the puzzles
found in real games at a small budget (their lines legal, answered by the move or its twin and by no
other), their JSON read back with every fault named, and the generator: deterministic for a seed
whatever the jobs, and going on after a stop."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from importlib import resources

import pytest

from koikoi.actions import KOIKOI, STOP, action_name
from koikoi.ai.base import Choice
from koikoi.match import Match
from koikoi.puzzlegen import (
    SHIPPED,
    GenerateSettings,
    generate,
    play_game,
    puzzles_in,
    puzzles_of_game,
    read_file,
    shipped_puzzles,
)
from koikoi.puzzles import (
    MIN_GAP,
    THEMES,
    Puzzle,
    PuzzleError,
    clearly_best,
    distinct_moves,
    find_puzzles,
    puzzle_seed,
)
from koikoi.review import DEFAULT_PLAYOUTS, move_signature, review_agent
from koikoi.rules import preset

BUDGET = 1000  # playouts of the "review" here: small for a 2-core machine (the shipped set uses 300,000)


def position_with(moves: int) -> Match:
    """A fresh deal whose first player has at least ``moves`` different moves."""
    for seed in range(100):
        m = Match(preset("nintendo"), seed=seed)
        if distinct_moves(m.observation(m.current_player)) >= moves:
            return m
    raise AssertionError("no such deal")


def test_a_move_is_clearly_best_only_by_the_margin_and_beyond_the_noise():
    m = position_with(3)
    obs = m.observation(m.current_player)
    by_sign: dict[object, int] = {}
    for a in obs.legal_actions:
        by_sign.setdefault(move_signature(obs, a), a)
    a, b, c = list(by_sign.values())[:3]
    rest = [x for x in by_sign.values() if x not in (a, b, c)]

    def ranked(best: float, second: float, stderr: float) -> list[Choice]:
        out = [Choice(a, best, points=best, stderr=stderr), Choice(b, second, points=second, stderr=stderr)]
        return out + [Choice(x, -5.0, points=-5.0, stderr=stderr) for x in [c, *rest]]

    found = clearly_best(obs, ranked(4.0, 2.0, 0.1))
    assert found is not None and found.action == a and found.runner_up == b and found.gap == 2.0
    assert clearly_best(obs, ranked(4.0, 4.0 - MIN_GAP + 0.01, 0.01)) is None  # not by the margin
    assert clearly_best(obs, ranked(4.0, 2.0, 0.4)) is None  # 2 points are within 4 standard errors of 0.57
    assert clearly_best(obs, ranked(4.0, 2.0, 0.3)) is not None  # ... and beyond those of 0.42
    unknown = ranked(4.0, 2.0, 0.1)
    unknown[1] = Choice(b, 2.0, points=2.0, stderr=None)  # a move measured too little to say
    assert clearly_best(obs, unknown) is None


def test_a_twin_of_the_best_move_is_no_rival_and_answers_the_puzzle_as_well():
    # A hand with two plain cards of one month: playing either is one move.
    for seed in range(300):
        m = Match(preset("nintendo"), seed=seed)
        obs = m.observation(m.current_player)
        twins = [
            (x, y)
            for x in obs.legal_actions
            for y in obs.legal_actions
            if x < y and move_signature(obs, x) == move_signature(obs, y)
        ]
        if twins:
            break
    else:
        raise AssertionError("no deal with twin moves")
    x, y = twins[0]
    others = [a for a in obs.legal_actions if move_signature(obs, a) != move_signature(obs, x)]
    ranked = [Choice(x, 3.0, points=3.0, stderr=0.05), Choice(y, 3.2, points=3.2, stderr=0.05)]
    ranked += [Choice(a, 0.0, points=0.0, stderr=0.05) for a in others]
    found = clearly_best(obs, ranked)
    assert found is not None and move_signature(obs, found.action) == move_signature(obs, x)


@pytest.fixture(scope="module")
def found() -> list[Puzzle]:
    """The puzzles of the first games of seed 1 at a small budget (a few seconds of a core)."""
    out: list[Puzzle] = []
    for game in range(3):
        record = play_game("nintendo", 1, game)
        out += find_puzzles(record, seed=game, playouts=BUDGET)
    assert out, "no puzzle in three games: the search or the thresholds changed"
    return out


def test_a_puzzles_line_is_the_players_and_clearly_best_at_each_move(found):
    for p in found:
        m = p.start()
        assert not m.is_over() and m.current_player == p.player
        for i, move in enumerate(p.line):
            obs = m.observation(p.player)
            assert m.current_player == p.player and move.action in obs.legal_actions
            assert move.gap >= MIN_GAP and move.best - move.second >= MIN_GAP
            assert p.answers(obs, i, move.action)
            assert not p.answers(obs, i, move.runner_up)
            for other in obs.legal_actions:  # the line's move or its twin, and nothing else
                same = move_signature(obs, other) == move_signature(obs, move.action)
                assert p.answers(obs, i, other) is same
            m.apply_action(move.action)
        assert set(p.themes) <= set(THEMES)
        if any(mv.action in (KOIKOI, STOP) for mv in p.line):
            assert "koikoi" in p.themes
        assert 800 <= p.rating <= 2300


def test_a_puzzle_hides_nothing_it_need_not_keep_and_reads_back_the_same(found):
    for p in found:
        d = p.to_dict()
        assert d["record"]["seed"] is None and d["record"]["created"] is None
        back = Puzzle.from_dict(json.loads(json.dumps(d)))
        assert back.to_dict() == d
        assert back.observation(0).legal_actions == p.observation(0).legal_actions


def test_finding_puzzles_is_deterministic_for_a_seed(found):
    again = [
        p.to_dict()
        for game in range(3)
        for p in find_puzzles(play_game("nintendo", 1, game), seed=game, playouts=BUDGET)
    ]
    assert again == [p.to_dict() for p in found]


def broken(puzzle: Puzzle, change) -> str:
    d = copy.deepcopy(puzzle.to_dict())
    change(d)
    with pytest.raises(PuzzleError) as e:
        Puzzle.from_dict(d)
    return str(e.value)


def test_a_faulty_puzzle_is_refused_with_what_is_wrong_and_where(found):
    p = found[0]

    legal = p.observation(0).legal_actions
    bad = action_name(next(a for a in range(48) if a not in legal))  # a card the player does not hold

    assert "is not a legal move there" in broken(p, lambda d: d["line"][0].update(move=bad))
    assert "'player' is 0 or 1" in broken(p, lambda d: d.update(player=2))
    assert "points better than the next" in broken(p, lambda d: d["line"][0].update(second=d["line"][0]["best"] - 1))
    assert "'themes'" in broken(p, lambda d: d.update(themes=["fun"]))
    deal = p.record.hands[0].deals[0]
    twice = [deal[1], *deal[1:]]  # one card dealt twice, another never
    assert "its record" in broken(p, lambda d: d["record"]["hands"][0]["deals"].__setitem__(0, twice))
    assert "'rating'" in broken(p, lambda d: d.update(rating=10_000))
    assert "format" in broken(p, lambda d: d.update(format="chess-puzzle"))
    assert "not player" in broken(p, lambda d: d.update(player=1 - d["player"]))


def test_the_generator_is_the_same_whatever_the_jobs_and_goes_on_after_a_stop(tmp_path):
    settings = GenerateSettings(games=3, seed=3, playouts=300)
    whole = tmp_path / "whole.jsonl"
    assert generate(settings, whole, jobs=2, command="test") == 3
    header, games = read_file(whole)
    assert header["seed"] == 3 and header["command"] == "test" and sorted(games) == [0, 1, 2]
    # A stop in the middle of a line: that game is played again, the others are kept.
    cut = tmp_path / "cut.jsonl"
    lines = whole.read_text().splitlines(keepends=True)
    cut.write_text("".join(lines[:2]) + lines[2][: len(lines[2]) // 2])
    assert generate(settings, cut, jobs=1, command="test") == 2
    assert read_file(cut)[1] == games
    assert generate(settings, cut, jobs=1) == 0  # nothing left to do
    fewer = GenerateSettings(games=2, seed=3, playouts=300)
    assert generate(fewer, cut, jobs=1, command="fewer") == 0  # the same games, fewer of them
    header, kept = read_file(cut)
    assert header["command"] == "fewer" and header["games"] == 2 and kept == {g: games[g] for g in (0, 1)}
    assert generate(settings, cut, jobs=1, command="test") == 1
    with pytest.raises(PuzzleError, match="made with seed 3, not 4"):
        generate(GenerateSettings(games=3, seed=4, playouts=300), cut)
    assert [p.to_dict() for p in puzzles_in(cut)] == [p.to_dict() for p in puzzles_in(whole)]
    assert puzzles_of_game(settings, 0).puzzles == games[0]


def test_the_command_makes_a_file_that_its_check_reads(tmp_path):
    out = tmp_path / "p.jsonl"
    cmd = [sys.executable, "-m", "koikoi", "puzzles", "generate", "--games", "1", "--seed", "5", "--budget", "300"]
    r = subprocess.run([*cmd, "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "1 game played now" in r.stdout
    header, _ = read_file(out)
    made = "koikoi puzzles generate --games 1 --seed 5 --jobs 1 --rules nintendo --budget 300"
    assert header["command"] == f"{made} --out {out}"
    r = subprocess.run([sys.executable, "-m", "koikoi", "puzzles", "check", str(out)], capture_output=True, text=True)
    assert r.returncode == 0 and "every one replays" in r.stdout, r.stderr
    # Into a server's database: the new ones only.
    n = len(list(puzzles_in(out)))
    assert n > 0
    db = tmp_path / "server.db"
    imp = [sys.executable, "-m", "koikoi", "puzzles", "import", str(out), "--database-url", str(db)]
    r = subprocess.run(imp, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and f"{n} puzzles, {n} new" in r.stdout, r.stderr
    r = subprocess.run(imp, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and f"{n} puzzles, 0 new" in r.stdout, r.stderr
    out.write_text('{"format": "something else"}\n')
    r = subprocess.run([sys.executable, "-m", "koikoi", "puzzles", "check", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and "not a puzzle file" in r.stderr
    r = subprocess.run([*cmd[:-4], "--rules", "chess", "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and "no rule preset 'chess'" in r.stderr


def test_the_shipped_set_is_whole_and_a_sample_of_it_holds_at_the_reviews_budget():
    """At least 300 puzzles ship, each read and checked; three of them, spread over the set, are searched
    again on fresh worlds at the review's budget (the whole set: benchmarks/puzzles.py --verify)."""
    shipped = shipped_puzzles()
    assert len(shipped) >= 300
    assert len({p.id for p in shipped}) == len(shipped)
    with resources.as_file(resources.files("koikoi") / "data" / SHIPPED) as path:
        header, _ = read_file(path)
    assert header["command"].startswith("koikoi puzzles generate ") and header["playouts"] == DEFAULT_PLAYOUTS
    for p in shipped[:: len(shipped) // 3][:3]:
        m = p.start()
        for i, move in enumerate(p.line):
            obs = m.observation(p.player)
            again = clearly_best(obs, review_agent(puzzle_seed(p.id, "test", i)).rank(obs))
            assert again is not None and p.answers(obs, i, again.action), (p.id, i)
            m.apply_action(move.action)


def test_the_themes_say_what_the_move_does():
    # The sake cup taken by a chrysanthemum card (a yaku too, with the moon in the pile).
    from koikoi.cards import cards_mask
    from koikoi.hand import Hand
    from koikoi.puzzles import LineMove, themes_of

    deck = [c for c in range(48) if c not in (32, 34, 28)]
    hand = Hand.set_up(
        preset("nintendo"),
        hands=(cards_mask([34, *deck[:3]]), cards_mask(deck[3:7])),
        table=cards_mask([32, *deck[7:10]]),
        piles=(cards_mask([28]), 0),
        stock=deck[10:],
        player=0,
    )
    obs = Match.from_hand(hand).observation(0)
    take = LineMove(34, deck[0], 5.0, 1.0, 0.1)
    assert {"sake", "yaku"} <= themes_of(obs, take)
    assert "koikoi" in themes_of(obs, LineMove(KOIKOI, STOP, 3.0, 1.0, 0.1))
