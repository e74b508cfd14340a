"""Issue 16, item 2: ``--jsonl`` writes each match as it finishes; ``--resume`` continues a run that
was killed (a real ``koikoi arena`` process stopped by SIGINT or SIGTERM) to the result of a run never
stopped; ``--summarize`` prints the summary of such files, merging runs.

The kill comes at a known point, not after some time: the bot waits, from a chosen game on, until a
gate file exists, and says so with a marker file; the arena is signalled while it waits."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from koikoi.arena import ArenaError, GameResult, read_run_file, run_arena, summarize_files
from koikoi.cli import main
from koikoi.rules import preset

GATED_BOT = """\
import json, os, random, sys, time
gate_game, gate, marks = int(sys.argv[1]), sys.argv[2], sys.argv[3]
rng = random.Random()
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        rng.seed(msg["bot_seed"])
        game = msg["game"]
        print(json.dumps({"name": "gated"}), flush=True)
    elif msg["type"] == "choose":
        if game >= gate_game and not os.path.exists(gate):
            open(os.path.join(marks, f"waiting-{game}"), "w").close()
            while not os.path.exists(gate):
                time.sleep(0.02)
        print(json.dumps({"action": rng.choice(msg["observation"]["legal_actions"])["id"]}), flush=True)
"""

# SIGINT as a terminal's Ctrl-C finds a program run in the foreground: Python's KeyboardInterrupt. A shell
# starts a background job with SIGINT ignored and the ignoring is inherited, so a test suite run in the
# background would otherwise send its SIGINT to an arena that rightly ignores it.
ARENA_MAIN = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from koikoi.cli import main; sys.exit(main(sys.argv[1:]))"
)
TIMINGS = {"decision_seconds_mean", "decision_seconds_worst"}
RUN_ONLY = {"seconds", "jobs", "jsonl", "resumed"}  # how the figures were gathered, not the figures


def comparable(summary: dict) -> dict:
    out = {k: v for k, v in summary.items() if k not in RUN_ONLY}
    out["players"] = [{k: v for k, v in p.items() if k not in TIMINGS} for p in summary["players"]]
    out["matches"] = [{k: v for k, v in m.items() if k != "record"} for m in summary["matches"]]
    out["forfeits"] = [{k: v for k, v in f.items() if k != "record"} for f in summary["forfeits"]]
    return out


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_each_match_is_a_line_with_its_figures(tmp_path):
    path = tmp_path / "run.jsonl"
    report = run_arena(preset("nintendo").with_settings(["hands=2"]), 5, 3, ["easy", "medium"], jobs=2, jsonl=path)
    header, *matches = lines(path)
    assert header["type"] == "arena" and header["seed"] == 3 and header["games"] == 5
    assert [p["spec"] for p in header["players"]] == ["easy", "medium"] and header["on_timeout"] == "forfeit"
    assert sorted(m["game"] for m in matches) == [1, 2, 3, 4, 5]
    by_game = {m["game"]: m for m in matches}
    for g in report.results:
        m = by_game[g.index + 1]
        assert m["seats"] == ["AB"[g.seats[0]], "AB"[g.seats[1]]] and m["scores"] == g.scores
        assert m["koikoi_calls"] == g.koikoi_calls and m["hands"] == g.hands
        for p in (0, 1):
            t = m["decision_times"][p]
            assert t["count"] == g.decisions[p] > 0
            assert t["max"] == g.decision_worst[p] and t["mean"] == pytest.approx(g.decision_seconds[p] / t["count"])
        back = GameResult.from_json(m)
        assert back.figures() == g.figures() and back.decision_seconds == g.decision_seconds


def arena_command(tmp_path: Path, jsonl: Path, jobs: int, *extra: str) -> list[str]:
    bot = tmp_path / "gated.py"
    bot.write_text(GATED_BOT)
    spec = "cmd:" + shlex.join([sys.executable, str(bot), "5", str(tmp_path / "gate"), str(tmp_path)])
    return [
        sys.executable,
        "-c",
        ARENA_MAIN,
        "arena",
        "--rules",
        "cardavia",
        "--games",
        "8",
        "--seed",
        "13",
        "--players",
        f"{spec},easy",
        "--time-limit",
        "120",
        "--jobs",
        str(jobs),
        "--jsonl",
        str(jsonl),
        *extra,
    ]


@pytest.mark.parametrize("sig, jobs", [(signal.SIGINT, 1), (signal.SIGTERM, 2)])
def test_a_killed_run_resumed_gives_the_summary_of_a_run_never_stopped(tmp_path, capsys, sig, jobs):
    jsonl = tmp_path / "run.jsonl"
    argv = arena_command(tmp_path, jsonl, jobs)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        deadline = time.monotonic() + 120
        # The bot waits from game 5 on, and a worker may start it before the arena has written the game
        # that worker finished: wait for both, so that the run is midway.
        while not (list(tmp_path.glob("waiting-*")) and jsonl.exists() and read_run_file(jsonl).results):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the gated bot never started waiting"
            time.sleep(0.05)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + sig, (proc.returncode, err)
    assert "interrupted" in err and "--resume" in err
    kept = read_run_file(jsonl)
    played = sorted(g.index + 1 for g in kept.results)
    assert played and max(played) < 8 and 5 not in played  # stopped midway, game 5 unfinished
    (tmp_path / "gate").touch()

    done = subprocess.run(argv + ["--resume", "--json"], capture_output=True, env=env, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    resumed = json.loads(done.stdout)
    assert resumed["resumed"] == len(played) and resumed["games"] == 8
    matches = [m for m in lines(jsonl) if m["type"] == "match"]
    assert sorted(m["game"] for m in matches) == list(range(1, 9))  # each game once
    assert [h["resumed"] for h in lines(jsonl) if h["type"] == "arena"] == [False, True]

    whole = tmp_path / "whole.jsonl"
    assert main(arena_command(tmp_path, whole, 1, "--json")[3:]) == 0
    # A run never stopped, in this process: the same figures, game by game.
    never_stopped = json.loads(capsys.readouterr().out)
    assert comparable(resumed) == comparable(never_stopped)
    assert resumed["forfeits"] == [] and resumed["players"][0]["name"] == "gated"
    assert main(["arena", "--summarize", str(jsonl), "--json"]) == 0
    assert comparable(json.loads(capsys.readouterr().out)) == comparable(never_stopped)


def test_summarize_merges_runs_and_reads_like_one(tmp_path, capsys):
    rules = preset("nintendo").with_settings(["hands=2"])
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    r1 = run_arena(rules, 4, 1, ["medium", "easy"], jobs=1, jsonl=one)
    r2 = run_arena(rules, 6, 2, ["medium", "easy"], jobs=2, jsonl=two)
    assert main(["arena", "--summarize", str(one), str(two), "--json"]) == 0
    merged = json.loads(capsys.readouterr().out)
    assert merged["games"] == 10 and merged["seed"] == [1, 2]
    for i, p in enumerate(merged["players"]):
        a, b = r1.players[i], r2.players[i]
        assert p["wins"] == a.wins + b.wins and p["draws"] == a.draws + b.draws
        assert p["points_won"] == a.points_won + b.points_won and p["hands"] == a.hands + b.hands
        assert p["koikoi_calls"] == a.koikoi_calls + b.koikoi_calls
        assert p["decisions"] == a.decisions + b.decisions
    diffs = [g.points_won[0] - g.points_won[1] for g in r1.results + r2.results]
    assert merged["difference"]["per_match"] == round(sum(diffs) / 10, 6)
    assert sorted((m["arena_seed"], m["game"]) for m in merged["matches"]) == [(1, i) for i in range(1, 5)] + [
        (2, i) for i in range(1, 7)
    ]
    assert main(["arena", "--summarize", str(one), str(two)]) == 0
    text = capsys.readouterr().out
    assert "10 games, nintendo rules, seeds 1, 2: A = medium, B = easy" in text and "A - B, points won" in text


def test_a_line_cut_short_by_a_kill_is_played_again(tmp_path):
    rules = preset("cardavia")
    path = tmp_path / "run.jsonl"
    whole = run_arena(rules, 6, 5, ["easy", "random"], jobs=1, jsonl=path)
    text = path.read_text().splitlines(keepends=True)
    path.write_text("".join(text[:4]) + text[4][:40])  # header, games 1-3, and part of game 4's line
    assert sorted(g.index for g in read_run_file(path).results) == [0, 1, 2]
    again = run_arena(rules, 6, 5, ["easy", "random"], jobs=1, jsonl=path, resume=True)
    assert again.resumed == 3
    assert [g.figures() for g in again.results] == [g.figures() for g in whole.results]
    assert all(line.endswith("\n") and json.loads(line) for line in path.read_text().splitlines(keepends=True))


@pytest.mark.parametrize(
    "change, message",
    [
        ({"players": ["easy", "medium"]}, "another players"),
        ({"seed": 6}, "another seed"),
        ({"time_limit": 2.0}, "another time limit"),
        ({"games": 2}, "already holds game 3, beyond --games 2"),
    ],
)
def test_resume_refuses_another_run(tmp_path, change, message):
    path = tmp_path / "run.jsonl"
    base = {"rules": preset("cardavia"), "games": 3, "seed": 5, "players": ["easy", "random"]}
    run_arena(**base, jobs=1, jsonl=path)
    before = path.read_text()
    with pytest.raises(ArenaError, match=message):
        run_arena(**(base | change), jobs=1, jsonl=path, resume=True)
    with pytest.raises(ArenaError, match="already holds a run: add --resume"):
        run_arena(**base, jobs=1, jsonl=path)
    assert path.read_text() == before  # a refused run changes nothing


def test_summarize_refuses_what_cannot_be_merged(tmp_path, capsys):
    rules = preset("cardavia")
    a, b, bad = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "bad.jsonl"
    run_arena(rules, 2, 1, ["easy", "random"], jobs=1, jsonl=a)
    run_arena(rules, 2, 2, ["random", "easy"], jobs=1, jsonl=b)
    with pytest.raises(ArenaError, match="not runs of the same arena: their players differ"):
        summarize_files([a, b])
    with pytest.raises(ArenaError, match="game 1 of seed 1 is in both"):
        summarize_files([a, a])
    bad.write_text(a.read_text().splitlines()[0] + "\n{oops\n")
    with pytest.raises(ArenaError, match="bad.jsonl, line 2: not a JSON line"):
        summarize_files([bad])
    # A damaged line nested past the depth any run writes: the same error, never a RecursionError.
    bad.write_text(a.read_text().splitlines()[0] + "\n" + "[" * 30_000 + "\n")
    with pytest.raises(ArenaError, match="bad.jsonl, line 2: not a JSON line"):
        summarize_files([bad])
    assert main(["arena", "--summarize", str(a), "--players", "easy,random"]) == 2
    assert "--summarize reads the --jsonl files of finished runs: it takes no --players" in capsys.readouterr().err
    assert main(["arena", "--rules", "cardavia", "--games", "2", "--seed", "1"]) == 2
    assert "--players is required" in capsys.readouterr().err
