"""The arena and the bot protocol: determinism across worker counts, consistent figures, records, JSON,
real bots over real pipes, misbehaving bots losing with the right reason, and no hidden card sent."""

from __future__ import annotations

import json
import os
import shlex
import sys
import textwrap
import time
from pathlib import Path

import pytest

from koikoi import arena
from koikoi.arena import ArenaError, run_arena, split_players, wilson_interval
from koikoi.cards import CARD_NAMES, NUM_CARDS, iter_cards
from koikoi.cli import main
from koikoi.records import read_record, replay, replay_steps
from koikoi.rules import preset

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_BOT = ROOT / "examples" / "random_bot.py"


def cmd(script: Path, *args: str) -> str:
    return "cmd:" + shlex.join([sys.executable, str(script), *args])


def figures(report) -> list[dict]:
    return [g.figures() for g in report.results]


# -- built-in players ----------------------------------------------------------------------------


def test_results_do_not_depend_on_the_number_of_workers(tmp_path):
    one = run_arena(preset("bga"), 6, 11, ["easy", "random"], jobs=1)
    two = run_arena(preset("bga"), 6, 11, ["easy", "random"], jobs=2)
    assert one.jobs == 1 and two.jobs == 2
    assert figures(one) == figures(two)
    assert [p.to_dict() | {"decision_seconds_mean": 0, "decision_seconds_worst": 0} for p in one.players] == [
        p.to_dict() | {"decision_seconds_mean": 0, "decision_seconds_worst": 0} for p in two.players
    ]
    other = run_arena(preset("bga"), 6, 12, ["easy", "random"], jobs=1)
    assert [g.seed for g in other.results] != [g.seed for g in one.results]
    # The games of a seed are the same whatever their number: game i depends on the seed and i only.
    assert figures(run_arena(preset("bga"), 3, 11, ["easy", "random"], jobs=1)) == figures(one)[:3]


def test_figures_are_consistent_and_match_the_saved_records(tmp_path):
    rules = preset("nintendo")
    report = run_arena(rules, 8, 3, ["easy", "random"], jobs=2, records_dir=tmp_path)
    a, b = report.players
    for p in report.players:
        assert p.wins + p.draws + p.losses == p.games == 8
        lo, hi = p.win_rate_ci
        assert 0 <= lo <= p.win_rate <= hi <= 1
        assert p.koikoi_paid <= p.koikoi_calls
        assert p.decisions > 0 and 0 < p.decision_seconds / p.decisions <= p.decision_worst
    assert (a.wins, a.draws, a.losses) == (b.losses, b.draws, b.wins)
    assert a.hands == b.hands == sum(g.hands for g in report.results)
    assert [g.seats for g in report.results] == [(0, 1), (1, 0)] * 4  # A at seat 0 in even games

    files = sorted(tmp_path.glob("game-*.json"))
    assert [f.name for f in files] == [f"game-{i:04d}.json" for i in range(1, 9)]
    totals = {
        "wins": [0, 0],
        "points": [0, 0],
        "calls": [0, 0],
        "paid": [0, 0],
        "hand_wins": [0, 0],
        "decisions": [0, 0],
    }
    for g, path in zip(report.results, files):
        record = read_record(path)
        assert g.record == str(path)
        assert record.metadata["arena"] == {
            "game": g.index + 1,
            "seed": g.seed,
            "time_limit": arena.DEFAULT_TIME_LIMIT,
            "on_timeout": "forfeit",
        }
        assert [p["arena_player"] for p in record.players] == ["AB"[g.seats[0]], "AB"[g.seats[1]]]
        match = replay(record)  # the record replays and checks every hand
        assert match.is_over()
        seat_of = {g.seats[0]: 0, g.seats[1]: 1}  # player -> seat
        if match.outcome.winner is not None:
            totals["wins"][g.seats[match.outcome.winner]] += 1
        assert g.winner == (None if match.outcome.winner is None else g.seats[match.outcome.winner])
        assert g.scores == [match.scores[seat_of[0]], match.scores[seat_of[1]]]
        # Count koi-koi calls and whether they paid from the record itself.
        calls: dict[tuple[int, int], int] = {}
        for step in replay_steps(record, check=False):
            totals["decisions"][g.seats[step.player]] += 1
            if step.action == 288:
                key = (step.hand_number, step.player)
                calls[key] = calls.get(key, 0) + 1
        for number, h in enumerate(match.hands, 1):
            for seat in (0, 1):
                player = g.seats[seat]
                totals["points"][player] += max(0, h.result.deltas[seat])
                totals["calls"][player] += calls.get((number, seat), 0)
                if h.result.winner == seat:
                    totals["hand_wins"][player] += 1
                    totals["paid"][player] += calls.get((number, seat), 0)
    for i, p in enumerate(report.players):
        assert p.wins == totals["wins"][i]
        assert p.points_won == totals["points"][i]
        assert p.koikoi_calls == totals["calls"][i]
        assert p.koikoi_paid == totals["paid"][i]
        assert p.hand_wins == totals["hand_wins"][i]
        assert p.decisions == totals["decisions"][i]
    assert sum(p.koikoi_calls for p in report.players) > 0  # the koi-koi figures were exercised


def test_wilson_interval():
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0
    lo, hi = wilson_interval(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)
    lo, hi = wilson_interval(2.5, 5)  # draws as half wins
    assert lo < 0.5 < hi and lo + hi == pytest.approx(1.0)


def test_cli_json_matches_the_library(capsys):
    code = main(
        [
            "arena",
            "--rules",
            "cardavia",
            "--games",
            "10",
            "--seed",
            "4",
            "--players",
            "easy,random",
            "--jobs",
            "1",
            "--json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    report = run_arena(preset("cardavia"), 10, 4, ["easy", "random"], jobs=1)
    assert out["games"] == 10 and out["seed"] == 4 and out["rules"] == "cardavia"
    for got, p in zip(out["players"], report.players):
        want = p.to_dict()
        for key in (
            "wins",
            "draws",
            "losses",
            "win_rate",
            "win_rate_ci95",
            "points_won_per_match",
            "points_won_per_hand",
            "overruns",
            "koikoi_calls_per_hand",
            "koikoi_paid",
            "forfeits",
        ):
            assert got[key] == want[key], key
    assert [m["winner"] for m in out["matches"]] == [
        None if g.winner is None else "AB"[g.winner] for g in report.results
    ]
    assert "half" in out["win_rate"] and "Wilson" in out["win_rate"]


def test_cli_text_summary_and_set(capsys, tmp_path):
    code = main(
        [
            "arena",
            "--rules",
            "bga",
            "--set",
            "hands=1",
            "--games",
            "4",
            "--seed",
            "2",
            "--players",
            "random,easy",
            "--jobs",
            "1",
            "--records",
            str(tmp_path),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "95% interval (Wilson)" in out and "koi-koi paid" in out and "A: random" in out
    assert all(len(read_record(f).hands) == 1 for f in tmp_path.glob("game-*.json"))  # --set took effect


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--players", "random,nosuchplayer"], "unknown player 'nosuchplayer'"),
        (["--players", "random"], "--players expects two players"),
        (["--players", "random,cmd:/no/such/bot"], "not an executable file"),
        (["--players", "random,cmd:no-such-bot-program-xyz"], "not on the PATH"),
        (["--players", "random,random", "--time-limit", "0"], "positive number of seconds"),
    ],
)
def test_cli_errors(capsys, argv, message):
    code = main(["arena", "--rules", "cardavia", "--games", "2", "--seed", "1", "--jobs", "1", *argv])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("koikoi: error:") and message in err


def test_split_players():
    assert split_players("cmd:python3 bot.py,cmd:./other --x") == ("cmd:python3 bot.py", "cmd:./other --x")
    assert split_players("medium, cmd:python3 a.py --list x,y") == ("medium", "cmd:python3 a.py --list x,y")
    with pytest.raises(ArenaError):
        split_players("random,random,random")


# -- bots ----------------------------------------------------------------------------------------


def test_example_bot_plays_real_matches_over_pipes(tmp_path):
    spec = cmd(EXAMPLE_BOT)
    report = run_arena(preset("nintendo"), 4, 8, [spec, "easy"], jobs=2, records_dir=tmp_path)
    bot = report.players[0]
    assert report.forfeits == []
    assert bot.name == "random_bot"
    assert bot.games == 4 and bot.decisions > 100 and bot.hands == 48
    assert all(replay(read_record(f)).is_over() for f in tmp_path.glob("game-*.json"))
    assert not list(tmp_path.glob("*.stderr.log"))  # a quiet bot leaves no empty logs
    # The bot's randomness comes from bot_seed, so the arena repeats exactly.
    again = run_arena(preset("nintendo"), 4, 8, [spec, "easy"], jobs=1)
    assert figures(again) == [g | {"record": None} for g in figures(report)]


BOT_PRELUDE = """\
import json, os, sys, time
pid_dir = sys.argv[1]
open(os.path.join(pid_dir, f"{os.getpid()}.pid"), "w").close()
decisions = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"name": "bad bot"}), flush=True)
    elif msg["type"] == "choose":
        decisions += 1
        legal = msg["observation"]["legal_actions"]
"""

MISBEHAVIOURS = {
    # kind: (what the bot does on its second decision, the expected reason)
    "crash": ("print('boom: out of ideas', file=sys.stderr, flush=True); sys.exit(3)", "exited with status 3"),
    "timeout": ("time.sleep(60)", "no answer within the time limit of 0.4 s"),
    "malformed": ("print('I think I will play the crane', flush=True)", "not JSON"),
    "illegal": ("print(json.dumps({'action': 289}), flush=True)", "illegal action 289 ('stop')"),
}


def misbehaving_bot(tmp_path: Path, kind: str) -> Path:
    act, _ = MISBEHAVIOURS[kind]
    body = BOT_PRELUDE + textwrap.indent(
        textwrap.dedent(f"""\
        if decisions == 2:
            {act}
        print(json.dumps({{"action": legal[0]["id"]}}), flush=True)
    """),
        "        ",
    )
    path = tmp_path / f"{kind}_bot.py"
    path.write_text(body)
    return path


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a grandchild handed to init may linger a moment as a zombie
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] == "Z"
    except (FileNotFoundError, IndexError):
        return True


@pytest.mark.parametrize("kind", sorted(MISBEHAVIOURS))
def test_misbehaving_bot_loses_the_match_and_the_arena_goes_on(tmp_path, kind):
    pids = tmp_path / "pids"
    pids.mkdir()
    bot = misbehaving_bot(tmp_path, kind)
    records = tmp_path / "records"
    # nintendo: every match has many hands, so the bot always reaches its second decision.
    # A short time limit only where it is the point: a busy machine may be slow to answer at all.
    report = run_arena(
        preset("nintendo"),
        2,
        5,
        ["random", cmd(bot, str(pids))],
        jobs=1,
        time_limit=0.4 if kind == "timeout" else 10.0,
        records_dir=records,
    )
    a, b = report.players
    assert (a.wins, b.losses, b.forfeits, a.forfeits) == (2, 2, 2, 0)
    forfeits = report.forfeits
    assert [f["game"] for f in forfeits] == [1, 2] and [f["seat"] for f in forfeits] == [1, 0]
    for f in forfeits:
        assert f["kind"] == kind and f["player"] == "B"
        assert MISBEHAVIOURS[kind][1] in f["reason"]
        record = read_record(f["record"])
        assert record.metadata["forfeit"]["kind"] == kind
        assert not replay(record).is_over()  # an unfinished match that still replays
    if kind == "crash":
        assert all("boom: out of ideas" in f["stderr"] for f in forfeits)
        assert {p.name for p in records.glob("*.stderr.log")} == {"game-0001.B.stderr.log", "game-0002.B.stderr.log"}
    # Every bot process (and what it started) is gone: killed and reaped, no zombies of ours.
    started = [int(p.stem) for p in pids.glob("*.pid")]
    assert len(started) == 2
    assert all(gone(pid) for pid in started)


def test_timed_out_bot_and_its_children_are_killed(tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    bot = tmp_path / "spawner.py"
    bot.write_text(
        BOT_PRELUDE
        + textwrap.indent(
            textwrap.dedent("""\
        import subprocess
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open(os.path.join(pid_dir, f"{child.pid}.child"), "w").close()
        time.sleep(60)
    """),
            "        ",
        )
    )
    report = run_arena(preset("cardavia"), 1, 1, [cmd(bot, str(pids)), "random"], jobs=1, time_limit=0.3)
    assert report.forfeits[0]["kind"] == "timeout"
    children = [int(p.stem) for p in pids.glob("*.child")]
    assert len(children) == 1
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not gone(children[0]):
        time.sleep(0.05)
    assert gone(children[0])


def test_cli_summary_shows_the_forfeit_reason(tmp_path, capsys):
    bot = misbehaving_bot(tmp_path, "malformed")
    (tmp_path / "pids").mkdir()
    code = main(
        [
            "arena",
            "--rules",
            "nintendo",
            "--games",
            "2",
            "--seed",
            "5",
            "--jobs",
            "2",
            "--players",
            f"{cmd(bot, str(tmp_path / 'pids'))},random",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "Forfeits (2):" in out
    assert "game 1: A" in out and "malformed: answer to choose: not JSON" in out


def test_failing_builtin_player_loses_with_its_error(monkeypatch):
    class Broken:
        name = "broken"

        def choose(self, obs):
            raise RuntimeError("lost its marbles")

    real = arena.players.make_builtin  # the arena's own players are made there
    monkeypatch.setattr(
        arena.players,
        "make_builtin",
        lambda name, seed, rules: Broken() if name == "random" else real(name, seed, rules),
    )
    report = run_arena(preset("cardavia"), 2, 1, ["easy", "random"], jobs=1)
    assert report.players[0].wins == 2
    assert [f["kind"] for f in report.forfeits] == ["error", "error"]
    assert "RuntimeError: lost its marbles" in report.forfeits[0]["reason"]


SPY_BOT = """\
import json, os, random, sys
out_dir = sys.argv[1]
rng = random.Random()
log = None
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        rng.seed(msg["bot_seed"])
        log = open(os.path.join(out_dir, f"game-{msg['game']}.jsonl"), "w")
    log.write(line)
    log.flush()
    if msg["type"] == "hello":
        print(json.dumps({"name": "spy", "author": "tests"}), flush=True)
    elif msg["type"] == "choose":
        print(json.dumps({"action": rng.choice(msg["observation"]["legal_actions"])["name"]}), flush=True)
"""


def strings_in(value) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(strings_in(v) | {k} for k, v in value.items())) if value else set()
    if isinstance(value, list):
        return set().union(*(strings_in(v) for v in value)) if value else set()
    return set()


def test_a_bot_never_receives_the_opponents_hand_the_stock_or_the_seed(tmp_path):
    spy = tmp_path / "spy.py"
    spy.write_text(SPY_BOT)
    seen = tmp_path / "seen"
    seen.mkdir()
    records = tmp_path / "records"
    report = run_arena(preset("bga"), 2, 9, [cmd(spy, str(seen)), "easy"], jobs=1, records_dir=records)
    assert report.forfeits == [] and report.players[0].name == "spy"
    checked = 0
    for g in report.results:
        seat = g.seats.index(0)
        messages = [json.loads(line) for line in (seen / f"game-{g.index + 1}.jsonl").read_text().splitlines()]
        assert [m["type"] for m in messages[:1]] == ["hello"] and messages[0]["seat"] == seat
        assert [m["type"] for m in messages[-2:]] == ["match_end", "quit"]
        assert sum(m["type"] == "hand_end" for m in messages) == g.hands
        chooses = iter(m for m in messages if m["type"] == "choose")
        for step in replay_steps(read_record(g.record), check=False):
            if step.player != seat:
                continue
            msg = next(chooses)
            h = step.before.hand
            seen_mask = h.hands[seat] | h.table | h.piles[0] | h.piles[1]
            if h.drawn_card >= 0:
                seen_mask |= 1 << h.drawn_card
            hidden = {CARD_NAMES[c] for c in iter_cards(((1 << NUM_CARDS) - 1) & ~seen_mask)}
            obs = msg["observation"]
            assert obs["player"] == seat
            assert [a["id"] for a in obs["legal_actions"]] == step.before.legal_actions()
            # previous_hand_events tell how the hand before ended: another deal, whose cards may be hidden now.
            now = {k: v for k, v in obs.items() if k != "previous_hand_events"}
            leaked = strings_in(now) & hidden
            assert not leaked, (leaked, [k for k, v in now.items() if strings_in(v) & leaked])
            before = step.before.previous_hand
            if before is not None:  # what the opponent still held when the hand before ended stays hidden
                held = {CARD_NAMES[c] for c in iter_cards(before.hands[1 - seat])}
                assert not strings_in(obs["previous_hand_events"]) & held
            checked += 1
        assert next(chooses, None) is None
        for m in messages:
            assert "seed" not in strings_in(m)
            assert str(g.seed) not in json.dumps(m)
    assert checked > 50
