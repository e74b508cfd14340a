"""Issue 16, items 1, 3 and 4: player options (spec syntax and --player-set) checked before any game,
seen by worker processes and kept in the records and the summary; the points won and the A - B
difference with its interval; one time limit for every player, forfeit or first legal action, with
overrun counts. Overruns come from a bot that sleeps on chosen decisions, or from a built-in player
whose work cannot fit the limit, never from how fast the machine happens to be."""

from __future__ import annotations

import json
import math
import re
import shlex
import sys
import textwrap
from pathlib import Path

import pytest

from koikoi.ai import make_agent
from koikoi.arena import (
    ArenaError,
    GameResult,
    apply_player_settings,
    game_jobs,
    make_builtin,
    points_difference,
    run_arena,
    split_players,
)
from koikoi.cli import main
from koikoi.match import Match
from koikoi.playerspec import SpecError, parse_assignment, parse_spec
from koikoi.records import read_record, replay, replay_steps
from koikoi.rules import preset


def cmd(script: Path, *args: str) -> str:
    return "cmd:" + shlex.join([sys.executable, str(script), *args])


# -- 1. player options ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, name, options",
    [
        ("hard", "hard", {}),
        ("hard[time_limit=none;playouts=11000]", "hard", {"time_limit": None, "playouts": 11000}),
        (" medium[ koikoi_playouts = 0 ] ", "medium", {"koikoi_playouts": 0}),
        ("hard[noise=1.5;match_play=blend]", "hard", {"noise": 1.5, "match_play": "blend"}),
        ("hard-v1[playouts=10]", "hard-v1", {"playouts": 10}),
        ("cmd:./bot --x=[1;2]", "cmd:./bot --x=[1;2]", {}),  # a command line is never read for options
        ("policy:runs/a[1].npz", "policy:runs/a[1].npz", {}),
    ],
)
def test_spec_syntax(text, name, options):
    spec = parse_spec(text)
    assert (spec.name, spec.options) == (name, options)
    assert parse_spec(str(spec)) == spec  # what the arena writes reads back the same


@pytest.mark.parametrize(
    "text, message",
    [
        ("hard[playouts]", "'playouts' is not an option"),
        ("hard[playouts=1;playouts=2]", "given twice"),
        ("hard[playouts=1", "one pair of brackets at the end"),
        ("hard[a=1][b=2]", "one pair of brackets at the end"),
        ("hard[noise=a b]", "is not a value"),
        ("hard[noise=nan]", "not a finite number"),
        ("ha rd", "not a player name"),
    ],
)
def test_spec_syntax_errors(text, message):
    with pytest.raises(SpecError, match=message.replace("[", r"\[")):
        parse_spec(text)


def test_the_comma_between_players_is_never_inside_a_spec():
    assert split_players("hard[time_limit=none;playouts=11000],easy") == (
        "hard[time_limit=none;playouts=11000]",
        "easy",
    )
    assert split_players("cmd:./bot --tags a,b,medium[koikoi_playouts=0]") == (
        "cmd:./bot --tags a,b",
        "medium[koikoi_playouts=0]",
    )
    assert parse_assignment("B.playouts=11000", "AB") == ("B", "playouts", 11000)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("hard[depth=3]", "hard has no option 'depth': its options are playouts, time_limit"),
        ("easy[playouts=3]", "easy has no option 'playouts': it takes no options"),
        ("hard[playouts=2.5]", "hard.playouts is a whole number, not 2.5"),
        ("hard[playouts=many]", "hard.playouts is a whole number, not many"),
        ("hard[time_limit=soon]", "hard.time_limit is a number or none, not soon"),
        ("medium[koikoi_playouts=none]", "medium.koikoi_playouts cannot be none"),
        ("hard[playouts=0]", "playouts must be at least 1, not 0"),  # the player's own check
        ("hard[match_play=fast]", "unknown match_play 'fast'"),
    ],
)
def test_bad_options_are_refused_with_the_reason(spec, message):
    with pytest.raises(ArenaError, match=message.replace("[", r"\[").replace(".", r"\.")):
        make_builtin(spec, 1, preset("nintendo"))


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--players", "hard,easy", "--player-set", "A.depth=3"], "player A: hard has no option 'depth'"),
        (["--players", "hard,easy", "--player-set", "B.playouts=800"], "player B: easy has no option 'playouts'"),
        (["--players", "hard,easy", "--player-set", "C.playouts=800"], "no player 'C' here; the players are A, B"),
        (["--players", "hard,easy", "--player-set", "A.playouts"], "write PLAYER.OPTION=VALUE"),
        (["--players", "hard[playouts=x],easy"], "player A: hard.playouts is a whole number, not x"),
        (["--players", f"cmd:{sys.executable},easy", "--player-set", "A.noise=1"], "only built-in players take"),
    ],
)
def test_cli_refuses_bad_options_before_any_game(tmp_path, capsys, argv, message):
    records, jsonl = tmp_path / "records", tmp_path / "run.jsonl"
    args = ["arena", "--rules", "cardavia", "--games", "2", "--seed", "1", "--jobs", "1", *argv]
    assert main([*args, "--records", str(records), "--jsonl", str(jsonl)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("koikoi: error:") and message in err, err
    assert not records.exists() and not jsonl.exists()  # nothing started


def test_options_reach_the_worker_processes_and_are_recorded(tmp_path):
    """Worker processes build each player from its spec: the games they play are the games of agents
    made here with the same options, and the records and the summary say which options."""
    rules = preset("cardavia")
    players = apply_player_settings(["hard[playouts=12]", "medium"], ["A.time_limit=none", "B.koikoi_playouts=0"])
    assert players == ["hard[playouts=12;time_limit=none]", "medium[koikoi_playouts=0]"]
    report = run_arena(rules, 4, 21, players, jobs=2, records_dir=tmp_path)
    assert report.forfeits == []
    assert [p.to_dict()["options"] for p in report.players] == [
        {"playouts": 12, "time_limit": None},
        {"koikoi_playouts": 0},
    ]
    jobs = game_jobs(rules, 4, 21, players, 5.0)
    for job, g in zip(jobs, report.results):
        record = read_record(g.record)
        replay(record)  # a valid record, options and all
        by_player = {p["arena_player"]: p for p in record.players}
        assert by_player["A"]["options"] == {"playouts": 12, "time_limit": None}
        assert by_player["B"]["options"] == {"koikoi_playouts": 0}
        # The same game played here with agents made by hand: the same actions, one by one.
        agents = {
            0: make_agent("hard", seed=job.agent_seeds[0], playouts=12, time_limit=None),
            1: make_agent("medium", seed=job.agent_seeds[1], koikoi_playouts=0),
        }
        match = Match(rules, seed=job.seed)
        for step in replay_steps(record, check=False):
            obs = match.observation(match.current_player)
            assert agents[job.seats[match.current_player]].choose(obs) == step.action
            match.apply_action(step.action)
        assert match.is_over()


def test_single_agent_env_takes_a_spec_with_options():
    env_module = pytest.importorskip("koikoi.env")
    env = env_module.SingleAgentEnv(opponent="hard[playouts=8;time_limit=none]", rules="cardavia", opponent_seed=3)
    assert env._opponent is None
    env.reset(seed=5)
    agent = env._opponent.agent
    assert (agent.playouts, agent.time_limit) == (8, None)
    with pytest.raises(ArenaError, match="hard has no option 'depth'"):
        env_module.SingleAgentEnv(opponent="hard[depth=2]", rules="cardavia")


# -- 3. points won and the difference --------------------------------------------------------------


def game(a: int, b: int, hands: int) -> GameResult:
    return GameResult(0, 0, (0, 1), None, [a, b], "hands", ["a", "b"], [a, b], hands)


def test_points_difference_by_hand():
    results = [game(12, 0, 12), game(3, 9, 12), game(6, 1, 10), game(0, 2, 6)]
    d = points_difference(results)
    diffs = [12, -6, 5, -2]
    mean = sum(diffs) / 4
    sd = math.sqrt(sum((x - mean) ** 2 for x in diffs) / 3)
    assert d.per_match == mean == 2.25
    assert d.per_match_ci == pytest.approx((mean - 1.959964 * sd / 2, mean + 1.959964 * sd / 2))
    ratio = 9 / 40
    resid = sum((x - ratio * h) ** 2 for x, h in zip(diffs, [12, 12, 10, 6]))
    half = 1.959964 * math.sqrt(resid / (4 * 3)) / (40 / 4)
    assert d.per_hand == ratio and d.per_hand_ci == pytest.approx((ratio - half, ratio + half))
    one = points_difference([game(5, 1, 3)])
    assert (one.per_match, one.per_hand, one.per_match_ci, one.per_hand_ci) == (4.0, 4 / 3, None, None)


def test_summary_shows_points_won_without_sign_and_the_difference(capsys):
    args = ["arena", "--rules", "nintendo", "--set", "hands=3", "--games", "6", "--seed", "3"]
    assert main([*args, "--players", "medium,random", "--jobs", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    a, b = out["players"]
    games = out["matches"]
    assert a["points_won"] >= 0 and b["points_won"] >= 0
    assert a["points_won_per_match"] == round(a["points_won"] / 6, 6)
    d = out["difference"]
    assert d["per_match"] == round((a["points_won"] - b["points_won"]) / 6, 6)
    assert d["per_hand"] == round((a["points_won"] - b["points_won"]) / sum(g["hands"] for g in games), 6)
    lo, hi = d["per_match_ci95"]
    assert lo < d["per_match"] < hi
    assert main([*args, "--players", "medium,random", "--jobs", "1"]) == 0
    text = capsys.readouterr().out
    assert f"{a['points_won_per_match']:.2f}" in text and f"+{a['points_won_per_match']:.2f}" not in text
    assert f"A - B, points won: {d['per_match']:+.2f} per match (95% interval {lo:+.2f} to {hi:+.2f})" in text


def test_transfer_rules_count_points_won_not_score_changes():
    """Under transfer rules the loser's score drops by what the winner gains: each side's points won
    are what it gained, and the difference is A's gain minus B's."""
    rules = preset("nintendo").with_settings(["transfer=true", "hands=3", "starting_score=30"])
    report = run_arena(rules, 4, 7, ["easy", "random"], jobs=1)
    for g in report.results:
        start = 30
        change = [s - start for s in g.scores]
        assert g.points_won[0] - g.points_won[1] == change[0]
        assert min(g.points_won) >= 0


# -- 4. one time limit for everyone ----------------------------------------------------------------

SLOW_BOT = """\
import json, sys, time
slow = {int(x) for x in sys.argv[1].split(",")}  # this bot's own decisions (1, 2, ...) it thinks too long on
mine = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"name": "slow"}), flush=True)
    elif msg["type"] == "choose":
        mine += 1
        legal = msg["observation"]["legal_actions"]
        if mine in slow:
            time.sleep(float(sys.argv[2]))
        # The last legal action, so that the arena's first legal action shows when it is played instead.
        print(json.dumps({"action": legal[-1]["id"]}), flush=True)
"""


def slow_bot(tmp_path: Path) -> Path:
    path = tmp_path / "slow_bot.py"
    path.write_text(textwrap.dedent(SLOW_BOT))
    return path


def bot_decisions(record, seat: int) -> list:
    return [s for s in replay_steps(record, check=False) if s.player == seat]


def test_a_slow_bot_has_the_first_legal_action_played_and_counted(tmp_path):
    bot = slow_bot(tmp_path)
    # The bot sleeps 1.5 s on its own decisions 2 and 4, over the limit of 0.5 s by a margin no machine
    # closes, and answers at once otherwise. The arena waits for its late answers and drops them.
    spec = cmd(bot, "2,4", "1.5")
    report = run_arena(
        preset("cardavia"), 1, 4, [spec, "random"], jobs=1, time_limit=0.5, on_timeout="first", records_dir=tmp_path
    )
    g = report.results[0]
    assert report.forfeits == [] and g.reason != "forfeit"
    assert g.overruns == [2, 0] and report.players[0].overruns == 2
    record = read_record(g.record)
    assert record.metadata["arena"]["overruns"] == [2, 0] and record.metadata["arena"]["on_timeout"] == "first"
    steps = bot_decisions(record, 0)
    for n, step in enumerate(steps, 1):
        legal = step.before.legal_actions()
        expected = legal[0] if n in (2, 4) else legal[-1]
        assert step.action == expected, (n, legal)
    assert len(steps) >= 5  # decisions after the late ones are the bot's own again: it stayed in step


def test_a_slow_bot_forfeits_by_default_and_the_overrun_is_counted(tmp_path):
    bot = slow_bot(tmp_path)
    spec = cmd(bot, "2", "1.5")
    report = run_arena(preset("cardavia"), 1, 4, ["random", spec], jobs=1, time_limit=0.5)
    (f,) = report.forfeits
    assert (f["player"], f["kind"]) == ("B", "timeout") and "0.5 s" in f["reason"]
    assert report.players[1].overruns == 1 and report.players[1].forfeits == 1


def test_a_builtin_player_is_held_to_the_same_limit(capsys):
    """3000 playouts cannot be done in a millisecond on any machine: the built-in player overruns."""
    args = ["arena", "--rules", "cardavia", "--games", "2", "--seed", "2", "--jobs", "1", "--time-limit", "0.001"]
    slow = "hard[playouts=3000;time_limit=none],random"
    assert main([*args, "--players", slow, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [f["kind"] for f in out["forfeits"]] == ["timeout", "timeout"]
    assert all(f["player"] == "A" and "over the time limit of 0.001 s" in f["reason"] for f in out["forfeits"])
    assert out["players"][0]["overruns"] == 2 and out["players"][0]["losses"] == 2
    assert main([*args, "--players", slow, "--on-timeout", "first", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["forfeits"] == [] and out["on_timeout"] == "first"
    assert out["players"][0]["overruns"] >= 2  # at least its first real choice in each game
    assert out["players"][0]["wins"] + out["players"][0]["losses"] + out["players"][0]["draws"] == 2


def load_strength():
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "strength.py"
    spec = importlib.util.spec_from_file_location("strength_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--pairs", "hard:easy", "--set", "hard.depth=2"], "hard has no option 'depth'"),
        (["--pairs", "hard[playouts=1.5]:easy"], "hard.playouts is a whole number, not 1.5"),
        (["--pairs", "hard:easy", "--set", "medium.koikoi_playouts=0"], "no player 'medium' here"),
        (["--pairs", "hard:easy", "--set", "hard.playouts"], "write PLAYER.OPTION=VALUE"),
    ],
)
def test_strength_benchmark_reads_options_as_the_arena_does(argv, message):
    strength = load_strength()
    with pytest.raises(SystemExit, match=message.replace("[", r"\[").replace(".", r"\.")):
        strength.main([*argv, "--matches", "2"])


def test_strength_benchmark_plays_with_options_in_brackets(capsys):
    strength = load_strength()
    args = ["--pairs", "hard[playouts=6;time_limit=none]:easy", "--matches", "2", "--rules", "cardavia"]
    assert strength.main(args) == 0
    out = capsys.readouterr().out
    assert "hard[playouts=6;time_limit=none] vs easy:" in out and "of 2" in out


def test_options_are_written_as_the_type_the_player_takes():
    report = run_arena(preset("cardavia"), 2, 1, ["hard[playouts=8;noise=1;time_limit=1]", "easy"], jobs=1)
    assert report.players[0].spec == "hard[playouts=8;noise=1.0;time_limit=1.0]"
    assert report.players[0].to_dict()["options"] == {"playouts": 8, "noise": 1.0, "time_limit": 1.0}


def test_strength_table_is_written_into_the_docs_between_its_markers(tmp_path, capsys):
    strength = load_strength()
    doc = tmp_path / "ai.md"
    doc.write_text(
        "# Before\n<!-- strength-table:start -->\nold rows\n<!-- strength-table:end -->\nAfter\n", encoding="utf-8"
    )
    tiny = [f"{level}.playouts=12" for level in ("hard", "expert", "hard-v1")]
    argv = ["--table", "--write", str(doc), "--matches", "2", "--hands", "1", "--rules", "cardavia"]
    for setting in tiny:
        argv += ["--set", setting]
    assert strength.main(argv) == 0
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Before\n<!-- strength-table:start -->\n```sh\npython3 benchmarks/strength.py --table")
    assert text.endswith("<!-- strength-table:end -->\nAfter\n") and "old rows" not in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and " vs " in line]
    assert [row.split(" | ")[0] for row in rows] == [f"| {a} vs {b}" for a, b, _ in strength.TABLE]
    assert all(" | 2 | " in row for row in rows)  # --matches caps every pairing
    assert "| expert |" in text and "| hard-v1 |" in text  # the time per decision of each searching level


def test_strength_record_lets_a_stopped_run_finish_where_it_stopped(tmp_path, capsys):
    strength = load_strength()
    record = tmp_path / "strength.jsonl"
    argv = ["--pairs", "easy:random,medium:easy", "--matches", "4", "--hands", "2", "--seed", "5"]

    def scores(out: str) -> list[str]:
        return [line for line in out.splitlines() if " vs " in line]

    assert strength.main(argv) == 0
    plain = scores(capsys.readouterr().out)
    assert strength.main([*argv, "--record", str(record)]) == 0
    out = capsys.readouterr()
    assert scores(out.out) == plain and "0 matches already played, 8 to play" in out.err
    lines = record.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 8

    # Stopped after three matches, in the middle of writing the fourth: the rest is played, nothing twice.
    record.write_text("\n".join(lines[:3]) + "\n" + lines[3][:40], encoding="utf-8")
    assert strength.main([*argv, "--record", str(record)]) == 0
    out = capsys.readouterr()
    assert scores(out.out) == plain and "3 matches already played, 5 to play" in out.err

    def keys(text: str) -> list[str]:
        return sorted(json.loads(line)["key"] for line in text.splitlines())

    assert keys(record.read_text(encoding="utf-8")) == keys("\n".join(lines))  # the times differ, not the matches

    # Other settings do not count as the same matches, and stay in the file.
    assert strength.main([*argv[:-1], "6", "--record", str(record)]) == 0
    assert "0 matches already played, 8 to play" in capsys.readouterr().err
    assert len(record.read_text(encoding="utf-8").splitlines()) == 16

    # Nor do the matches of other code: a change to the engine or a level starts afresh.
    assert strength.main([*argv, "--record", str(record)]) == 0
    assert "8 matches already played, 0 to play" in capsys.readouterr().err
    strength.code_fingerprint = lambda: "a level changed"
    assert strength.main([*argv, "--record", str(record)]) == 0
    assert "0 matches already played, 8 to play" in capsys.readouterr().err

    # A damaged line that is not the last one stops the run before any game, and changes nothing.
    broken = "\n".join([lines[0], "{not json", *lines[1:]]) + "\n"
    record.write_text(broken, encoding="utf-8")
    with pytest.raises(SystemExit, match="line 2 is not a recorded match"):
        strength.main([*argv, "--record", str(record)])
    assert record.read_text(encoding="utf-8") == broken


def test_strength_table_refuses_a_file_without_markers_before_any_game(tmp_path):
    strength = load_strength()
    doc = tmp_path / "ai.md"
    doc.write_text("no markers here\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="needs the lines <!-- strength-table:start -->"):
        strength.main(["--table", "--write", str(doc), "--matches", "2"])
    assert doc.read_text(encoding="utf-8") == "no markers here\n"
    with pytest.raises(SystemExit):
        strength.main(["--pairs", "hard:easy", "--write", str(doc), "--matches", "2"])  # only with --table


FAKE_YARDSTICK = """import time
def python_hands_per_second(seconds):
    n, t = 0, time.perf_counter()
    while time.perf_counter() - t < seconds:
        sum(range(2000))
        n += 1
    return n / (time.perf_counter() - t)
"""


def test_strength_benchmark_gives_times_in_yardstick_hands(tmp_path, capsys, monkeypatch):
    """With --yardstick, each mean time per decision is also given in yardstick hands: the seconds times
    the yardstick's hands per CPU second, read in the same run (here a stand-in yardstick)."""
    strength = load_strength()
    monkeypatch.setattr(strength, "YARDSTICK_SECONDS", 0.2)
    (tmp_path / "yardstick.py").write_text(FAKE_YARDSTICK, encoding="utf-8")
    args = ["--pairs", "hard[playouts=30;time_limit=none]:easy", "--matches", "2", "--hands", "1"]
    assert strength.main([*args, "--rules", "cardavia", "--yardstick", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rate = float(
        re.search(r"yardstick: ([\d,]+) hands per CPU second \([\d,]+, [\d,]+ before and after\)", out)[1].replace(
            ",", ""
        )
    )
    ms, hands = re.search(
        r"hard\S*: ([\d.]+) ms mean \(([\d,]+) yardstick hands\), [\d.]+ ms worst \([\d,]+\) per decision", out
    ).groups()
    assert rate > 0 and abs(float(ms) / 1000 * rate - float(hands.replace(",", ""))) <= 0.00005 * rate + 1, out


def test_strength_benchmark_refuses_a_folder_without_the_yardstick(tmp_path):
    strength = load_strength()
    with pytest.raises(SystemExit, match=f"no yardstick.py in {re.escape(str(tmp_path))}"):
        strength.main(["--pairs", "hard:easy", "--matches", "2", "--yardstick", str(tmp_path)])
