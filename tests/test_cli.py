"""The ``koikoi`` command, run as a real console command (and in-process where that is quicker)."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from koikoi import Match, preset
from koikoi.cards import CARD_NAMES
from koikoi.cli import main
from koikoi.players import GreedyPlayer, RandomPlayer
from koikoi.records import read_record
from koikoi.render import render_game, to_text

KOIKOI = shutil.which("koikoi")
if KOIKOI is None:  # pragma: no cover - the package is installed with its console script
    pytest.skip("the koikoi console script is not installed", allow_module_level=True)


def run(*args: str, input: str | None = None, env: dict | None = None, timeout: float = 30):
    return subprocess.run([KOIKOI, *args], input=input, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture
def data_env(tmp_path):
    env = dict(os.environ)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    env["COLUMNS"] = "100"
    return env


# -- score ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rules, cards, extra, expected",
    [
        (
            "traditional",
            ["pine-crane", "cherry-curtain", "pampas-moon", "chrysanthemum-sake"],
            [],
            {
                "yaku": [
                    {"name": "sanko", "points": 5},
                    {"name": "tsukimi-zake", "points": 5},
                    {"name": "hanami-zake", "points": 5},
                ],
                "total": 15,
            },
        ),
        (
            "cardavia",
            ["pine-crane", "cherry-curtain", "pampas-moon", "chrysanthemum-sake"],
            [],
            {"yaku": [{"name": "sanko", "points": 6}], "total": 6},
        ),
        (
            "cardavia",
            ["pine-crane", "cherry-curtain", "pampas-moon", "willow-rainman", "paulownia-phoenix"],
            [],
            {"yaku": [{"name": "goko", "points": 15}], "total": 15},
        ),
        (
            "nintendo",
            [
                "pine-poetry",
                "plum-poetry",
                "cherry-poetry",
                "peony-blue",
                "chrysanthemum-blue",
                "maple-blue",
                "iris-ribbon",
            ],
            [],
            {"yaku": [{"name": "akatan-aotan", "points": 11}, {"name": "tanzaku", "points": 3}], "total": 14},
        ),
        (
            "boardgame",
            ["cherry-curtain", "cherry-poetry", "cherry-plain-1", "cherry-plain-2"],
            ["--month", "3"],
            {"yaku": [{"name": "tsukifuda", "points": 5}], "total": 5},
        ),
        (
            "boardgame",
            ["cherry-curtain", "cherry-poetry", "cherry-plain-1", "cherry-plain-2"],
            ["--month", "4"],
            {"yaku": [], "total": 0},
        ),
        (
            "wikipedia",
            ["pine-poetry", "plum-poetry", "cherry-poetry"],
            ["--set", "akatan=9"],
            {"yaku": [{"name": "akatan", "points": 9}], "total": 9},
        ),
        (
            "wikipedia",
            ["pampas-moon", "chrysanthemum-sake", "willow-swallow"],
            ["--set", "sake_yaku=rain_ruins"],
            {"yaku": [], "total": 0},
        ),
    ],
)
def test_score_json(rules, cards, extra, expected, capsys):
    assert main(["score", "--rules", rules, *extra, "--json", *cards]) == 0
    assert json.loads(capsys.readouterr().out) == expected


def test_score_json_console_command():
    r = run("score", "--rules", "bga", "--json", "clover-boar", "maple-deer", "peony-butterflies")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == '{"yaku": [{"name": "ino-shika-cho", "points": 5}], "total": 5}'


def test_score_text_lists_yaku_and_total():
    r = run("score", "--rules", "traditional", "pine-crane", "cherry-curtain", "pampas-moon", "chrysanthemum-sake")
    assert r.returncode == 0, r.stderr
    lines = [line.split() for line in r.stdout.splitlines()]
    assert ["sanko", "5"] in lines and ["tsukimi-zake", "5"] in lines and ["hanami-zake", "5"] in lines
    assert ["total", "15"] in lines


def test_score_rules_file(tmp_path, capsys):
    f = tmp_path / "house.toml"
    f.write_text('preset = "cardavia"\nsanko = 4\n')
    assert main(["score", "--rules-file", str(f), "--json", "pine-crane", "cherry-curtain", "pampas-moon"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 4


def test_score_no_yaku_text(capsys):
    assert main(["score", "--rules", "nintendo", "pine-plain-1"]) == 0
    assert "no yaku" in capsys.readouterr().out


# -- errors -----------------------------------------------------------------------------------------


def test_unknown_card_names_it_and_suggests():
    r = run("score", "--rules", "traditional", "--json", "pine-crane", "maple-dear")
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.startswith("koikoi: error:")
    assert "maple-dear" in r.stderr and "maple-deer" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_unknown_card_suggests_only_what_is_near():
    """A word near no card gets no guesses ("foo" once suggested paulownia-phoenix for its alias "hoo");
    a month's name alone suggests that month's cards."""
    from koikoi.cards import UnknownCardError

    assert str(UnknownCardError("foo")) == "unknown card 'foo'"
    maple = UnknownCardError("maple")
    assert maple.suggestions[:2] == ["maple-deer", "maple-blue"] and len(maple.suggestions) == 4
    assert UnknownCardError("crne").suggestions == ["pine-crane"]
    assert UnknownCardError("maple-dear").suggestions[0] == "maple-deer"


@pytest.mark.parametrize(
    "argv, words",
    [
        (["score", "--rules", "traditional", "pine-crane", "crane"], ["twice", "pine-crane"]),
        (["score", "--rules", "tradition", "pine-crane"], ["preset", "tradition"]),
        (["score", "--rules", "traditional", "--set", "akatn=3", "pine-crane"], ["akatn", "akatan"]),
        (["score", "--rules", "traditional", "--set", "sake_cup=sometimes", "pine-crane"], ["sake_cup", "sometimes"]),
        (["score", "--rules", "traditional", "--set", "akatan", "pine-crane"], ["option=value"]),
        (["score", "--rules", "traditional", "--set", "name=foo", "pine-crane"], ["name=foo", "not an option"]),
        (["rules", "nintendo", "--set", "name=foo"], ["name=foo", "not an option"]),
        (["score", "--rules", "traditional", "--month", "13", "pine-crane"], ["month", "13"]),
        (["score", "pine-crane"], ["--rules"]),
        (["score", "--rules-file", "/nonexistent/rules.toml", "pine-crane"], ["/nonexistent/rules.toml"]),
        (["rules", "nope"], ["nope"]),
        (["simulate", "--rules", "traditional", "--games", "0", "--seed", "1"], ["--games"]),
        (["simulate", "--rules", "traditional", "--games", "2"], ["--seed"]),
        (["replay", "/nonexistent/game.json"], ["/nonexistent/game.json"]),
        (["play", "--resume", "--record", "/nonexistent/game.json"], ["/nonexistent/game.json"]),
        (["play", "--hands", "0"], ["--hands is 1 to 12, not 0"]),
        (["play", "--hands", "three"], ["--hands is a number of hands", "'three'"]),
        (["play", "--hands", "3", "--set", "hands=2"], ["--hands N or --set hands=N, not both"]),
        (["play", "--resume", "--hands", "3"], ["--hands"]),
        (["frobnicate"], ["frobnicate"]),
    ],
)
def test_bad_input_is_one_error_line_and_exit_2(argv, words, capsys):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("koikoi: error:") and len(err.strip().splitlines()) == 1
    for w in words:
        assert w in err


def test_name_is_not_a_settable_option(capsys):
    """--set name=foo would relabel the rules ("foo rules"); the option lists never offer it."""
    import re

    for bad in ("name=foo", "zzzz=1", "nme=1"):
        assert main(["score", "--rules", "nintendo", "--set", bad, "pine-crane"]) == 2
        err = capsys.readouterr().err
        listed = re.search(r"(options are|did you mean) (.*)", err)
        assert listed, err
        assert "name" not in re.split(r"[ ,?]+", listed.group(2)), err
    assert "foo rules" not in capsys.readouterr().out
    # A rules file still names itself (the records keep the name), and a setting keeps it.
    assert preset("bga").with_settings(["hands=3"]).name == "bga"


def test_unreadable_record_is_an_error(tmp_path, capsys):
    f = tmp_path / "bad.json"
    f.write_text("{not json")
    assert main(["replay", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("koikoi: error:") and str(f) in err


def test_help_is_clear():
    r = run("--help")
    assert r.returncode == 0
    for command in ("play", "score", "rules", "simulate", "replay"):
        assert command in r.stdout
    for command in ("play", "score", "rules", "simulate", "replay"):
        assert main([command, "--help"]) == 0


# -- rules ------------------------------------------------------------------------------------------


def test_rules_lists_presets_with_descriptions():
    r = run("rules")
    assert r.returncode == 0
    for name in ("traditional", "bga", "boardgame", "cardavia", "wikipedia", "nintendo"):
        line = next(line for line in r.stdout.splitlines() if line.split()[:1] == [name])
        assert len(line.split()) > 3  # the name and a description


def test_rules_preset_shows_options_and_yaku(capsys):
    assert main(["rules", "cardavia"]) == 0
    out = capsys.readouterr().out
    rows = {tuple(line.split()[:2]) for line in out.splitlines() if line.split()}
    assert ("goko", "15") in rows and ("hands", "1") in rows and ("sake_yaku", "off") in rows
    assert ("tsukimi-zake", "off") in rows


def test_rules_json_with_set(capsys):
    assert main(["rules", "bga", "--set", "hands=3", "--set", "goko=12", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["options"]["hands"] == 3 and data["yaku"]["goko"] == 12
    assert data["options"]["transfer"] is True


# -- simulate ---------------------------------------------------------------------------------------


def test_simulate_json_figures_are_consistent():
    r = run("simulate", "--rules", "traditional", "--games", "20", "--seed", "5", "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["games"] == 20
    assert sum(s["wins"]) + s["draws"] == 20
    assert s["hands"] == 20 * 12  # traditional plays 12 hands
    assert sum(s["hand_endings"].values()) == s["hands"]
    assert s["hands_per_second"] > 0 and s["games_per_second"] > 0
    assert s["mean_points_per_hand"] > 0 and s["koikoi_calls_per_hand"] >= 0


def test_simulate_is_repeatable_and_takes_birth_months(capsys):
    def stats(*extra):
        assert main(["simulate", "--rules", "boardgame", "--games", "5", "--seed", "9", "--json", *extra]) == 0
        s = json.loads(capsys.readouterr().out)
        return {k: v for k, v in s.items() if k not in ("seconds", "hands_per_second", "games_per_second")}

    a, b = stats(), stats("--birth-months", "1", "7")
    assert a == b
    assert sum(a["wins"]) + a["draws"] == 5


def test_simulate_text(capsys):
    assert main(["simulate", "--rules", "cardavia", "--set", "hands=2", "--games", "10", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    for words in (
        "hands/s",
        "games/s",
        "wins player 0",
        "drawn games",
        "mean points per hand",
        "koi-koi calls per hand",
        "hands ended by stop",
        "hands ended by exhausted",
    ):
        assert words in out


# -- rendering --------------------------------------------------------------------------------------


def test_render_never_shows_the_opponents_hand():
    for seed in range(3):
        m = Match(preset("traditional"), seed=seed)
        for step in range(24):
            if m.is_over():
                break
            for me in (0, 1) if step % 4 == 0 else ():
                obs, theirs = m.observation(me), m.observation(1 - me)
                text = to_text(render_game(obs, m.rules, ("You", "Computer"), recent=obs.events))
                assert "Your hand" in text or not obs.hand
                for c in theirs.hand:
                    assert CARD_NAMES[c] not in text, (seed, step, CARD_NAMES[c])
                for c in obs.hand:
                    assert CARD_NAMES[c] in text
            m.apply_action(m.legal_actions()[step % len(m.legal_actions())])


# -- players ----------------------------------------------------------------------------------------


def test_greedy_beats_random():
    wins = [0, 0]
    for seed in range(60):
        m = Match(preset("cardavia"), seed=seed)
        greedy_seat = seed % 2
        players = {greedy_seat: GreedyPlayer(seed), 1 - greedy_seat: RandomPlayer(seed)}
        while not m.is_over():
            p = m.current_player
            action = players[p].choose(m.observation(p))
            assert action in m.legal_actions()
            m.apply_action(action)
        if m.winner() is not None:
            wins[0 if m.winner() == greedy_seat else 1] += 1
    assert wins[0] > 2 * wins[1], wins


# -- play, resume, replay ---------------------------------------------------------------------------


class Driver:
    """Talks to ``koikoi play`` through pipes: waits for each prompt and answers it."""

    def __init__(self, args: list[str], env: dict) -> None:
        self.proc = subprocess.Popen(
            [KOIKOI, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env
        )
        self.out = b""

    def prompt(self, timeout: float = 20) -> str | None:
        """The text since the last answer, once a prompt ('> ') shows; None when the program ended."""
        start = len(self.out)
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while True:
            if self.out.endswith(b"> "):
                return self.out[start:].decode()
            left = deadline - time.monotonic()
            assert left > 0, f"no prompt within {timeout}s:\n{self.out[start:].decode()[-2000:]}"
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    self.proc.wait(timeout=10)
                    return None
                self.out += chunk

    def answer(self, text: str) -> None:
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()
        self.out += b"\n"

    def text(self) -> str:
        return self.out.decode()


def answer_for(screen: str) -> str:
    last = screen.rstrip().splitlines()[-1]
    if "Your move" in last:
        return "1"
    if "Take" in last:
        return "2"
    if "koi-koi" in last:
        return "s"
    raise AssertionError(f"unexpected prompt {last!r}")


def play_to_end(d: Driver, limit: int = 80) -> None:
    for _ in range(limit):
        screen = d.prompt()
        if screen is None:
            return
        d.answer(answer_for(screen))
    raise AssertionError("the game did not end")


def test_play_a_full_match_typing_numbers(tmp_path, data_env):
    record = tmp_path / "game.json"
    d = Driver(["play", "--rules", "cardavia", "--seed", "11", "--record", str(record)], data_env)
    first = d.prompt()
    assert "Your hand" in first and "Table" in first and "Computer" in first
    d.answer("banana")  # bad input: a clear message, then the same prompt again
    again = d.prompt()
    assert "'banana' is not a move" in again and "Your move" in again.splitlines()[-1]
    d.answer("42")
    again = d.prompt()
    assert "42 is not a card of your hand" in again
    d.answer("1")
    play_to_end(d)
    assert d.proc.returncode == 0, d.text()[-3000:]
    out = d.text()
    assert "Results" in out and ("wins the match" in out or "win the match" in out or "drawn" in out)
    rec = read_record(record)
    assert rec.finished and len(rec.hands) == 1
    assert rec.players[0]["kind"] == "human" and rec.players[1]["ai"] == "medium"  # the web lobby's default too
    # The replay shows the whole game, both hands, every action and the result.
    r = run("replay", str(record), "--all", env=data_env)
    assert r.returncode == 0, r.stderr
    assert "Hand 1 over" in r.stdout and "End of the match" in r.stdout
    n_actions = len(rec.hands[0].actions)
    assert f"{n_actions:>4}. " in r.stdout
    deck = rec.hands[0].deals[-1]
    for name in deck[:16]:  # both players' dealt hands are visible
        assert name in r.stdout


def test_resume_after_the_process_is_killed(tmp_path, data_env):
    record = tmp_path / "game.json"
    d = Driver(
        ["play", "--rules", "cardavia", "--seed", "4", "--opponent", "random", "--record", str(record)], data_env
    )
    for _ in range(3):
        d.answer(answer_for(d.prompt()))
    d.prompt()
    d.proc.send_signal(signal.SIGKILL)
    d.proc.wait(timeout=10)
    saved = read_record(record)
    assert not saved.finished
    done = saved.hands[0].actions
    assert sum(1 for _ in done) >= 3
    d2 = Driver(["play", "--resume", "--record", str(record)], data_env)
    screen = d2.prompt()
    assert "Resuming" in screen
    d2.answer(answer_for(screen))
    play_to_end(d2)
    assert d2.proc.returncode == 0, d2.text()[-3000:]
    final = read_record(record)
    assert final.finished
    assert final.hands[0].actions[: len(done)] == done  # nothing played before the kill was lost
    assert final.players[1]["ai"] == "random"


def test_resume_keeps_every_level_it_offers_and_no_other():
    from koikoi.cli.play import PLAY_OPPONENTS, opponent_of_record

    you = {"kind": "human", "name": "You"}
    for level in PLAY_OPPONENTS:  # expert too: a game saved against expert goes on against expert
        assert opponent_of_record([you, {"kind": "computer", "ai": level}]) == level
    assert opponent_of_record([you, {"kind": "computer", "ai": "hard-v1"}]) is None
    assert opponent_of_record([you, {"kind": "human", "ai": "hard"}]) is None


def test_play_offers_the_registrys_levels():
    from koikoi.ai.registry import playable_levels
    from koikoi.cli.play import PLAY_OPPONENTS

    assert PLAY_OPPONENTS == playable_levels()


def test_eof_saves_and_resume_finds_the_default_record(data_env):
    r = run("play", "--rules", "cardavia", "--seed", "2", input="", env=data_env)
    assert r.returncode == 0, r.stderr
    assert "Game saved to" in r.stdout
    games = list(Path(data_env["XDG_DATA_HOME"], "koikoi", "games").glob("*.json"))
    assert len(games) == 1 and not read_record(games[0]).finished
    d = Driver(["play", "--resume"], data_env)
    screen = d.prompt()
    assert str(games[0]) in screen
    d.answer(answer_for(screen))
    play_to_end(d)
    assert d.proc.returncode == 0
    assert read_record(games[0]).finished
    r = run("play", "--resume", env=data_env)
    assert r.returncode == 2 and r.stderr.startswith("koikoi: error:") and "no unfinished game" in r.stderr


def test_play_refuses_to_overwrite_an_unfinished_record(tmp_path, data_env):
    record = tmp_path / "game.json"
    assert (
        run("play", "--rules", "cardavia", "--seed", "2", "--record", str(record), input="", env=data_env).returncode
        == 0
    )
    r = run("play", "--rules", "cardavia", "--seed", "3", "--record", str(record), input="", env=data_env)
    assert r.returncode == 2 and "--resume" in r.stderr and r.stderr.startswith("koikoi: error:")


def test_play_notation_and_quit(tmp_path, data_env):
    record = tmp_path / "game.json"
    m = Match(preset("cardavia"), seed=8)
    hand = m.observation(0).hand
    d = Driver(["play", "--rules", "cardavia", "--seed", "8", "--record", str(record)], data_env)
    d.prompt()
    d.answer("help")
    assert "koi-koi" in d.prompt()
    d.answer(f"play {CARD_NAMES[hand[-1]]}")
    while True:
        screen = d.prompt()
        if "Your move" in screen.splitlines()[-1]:
            break
        d.answer(answer_for(screen))
    d.answer("q")
    assert d.prompt() is None and d.proc.returncode == 0
    assert "koikoi play --resume" in d.text()
    rec = read_record(record)
    assert f"play {CARD_NAMES[hand[-1]]}" in " ".join(rec.hands[0].actions)


def test_every_preset_has_a_description():
    from koikoi.rules import PRESET_DESCRIPTIONS, PRESET_NAMES

    assert set(PRESET_DESCRIPTIONS) == set(PRESET_NAMES)
    assert all(PRESET_DESCRIPTIONS[name].strip() for name in PRESET_NAMES)


def test_play_refuses_the_hard_v1_yardstick_and_names_the_levels(tmp_path, capsys):
    """hard-v1, the old hard kept frozen to measure later versions against, is no opponent for a person:
    'koikoi play' refuses it with the levels it has, starts no game and writes no record."""
    record = tmp_path / "game.json"
    assert main(["play", "--opponent", "hard-v1", "--record", str(record)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("koikoi: error: argument --opponent: invalid choice: 'hard-v1'")
    assert "(choose from 'random', 'greedy', 'easy', 'medium', 'hard', 'expert')" in err
    assert err.count("\n") == 1 and not record.exists()
    assert main(["play", "--help"]) == 0
    assert "hard-v1" not in capsys.readouterr().out


def test_arena_still_plays_the_hard_v1_yardstick(capsys):
    argv = ["arena", "--rules", "cardavia", "--games", "1", "--seed", "3", "--players", "hard-v1,random"]
    assert main([*argv, "--jobs", "1", "--json"]) == 0
    a, b = json.loads(capsys.readouterr().out)["players"]
    assert (a["name"], b["name"]) == ("hard-v1", "random")
    assert a["decisions"] > 0 and a["forfeits"] == 0


def test_play_hands_sets_the_match_length(tmp_path, data_env):
    """``koikoi play --hands 1``: a one-hand match without spelling ``--set hands=1``."""
    record = tmp_path / "game.json"
    argv = ["play", "--rules", "nintendo", "--hands", "1", "--seed", "2", "--record", str(record)]
    r = run(*argv, input="", env=data_env)
    assert r.returncode == 0, r.stderr
    rec = read_record(record)
    assert rec.rules.hands == 1 and rec.rules.name == "nintendo"
