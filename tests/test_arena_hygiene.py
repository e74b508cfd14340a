"""Arena hygiene with real processes: no bot process outlives its match (children in the bot's group,
grandchildren that left it with setsid, after a normal end, a forfeit, a timeout, an interrupt, or the
arena's own death by SIGKILL); a bot's stderr is kept to a bounded tail; a bot's bad lines (deep
nesting, out-of-range or mistyped action numbers, endless lines) cost it the match, never the arena.

Every test kills what it started: the pids the bots report are SIGKILLed at teardown, whatever the
test's outcome.
"""

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

from koikoi import arena, botproto
from koikoi.arena import run_arena
from koikoi.botproto import MAX_LINE_BYTES, STDERR_KEEP_BYTES, STDERR_TAIL_BYTES, BotProcess
from koikoi.rules import preset

ROOT = Path(__file__).resolve().parent.parent
linux_only = pytest.mark.skipif(
    not botproto.launcher_available(), reason="setsid grandchildren are only caught by the Linux launcher"
)


def cmd(script: Path, *args: str) -> str:
    return "cmd:" + shlex.join([sys.executable, str(script), *args])


def gone(pid: int) -> bool:
    """Not running: no such process, or a zombie (an orphan whose reaper is slow)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0] == "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):  # reaped between the open and the read: ESRCH
        return True


def all_gone(pids: list[int], within: float = 5.0) -> list[int]:
    """The pids still running after waiting up to ``within`` seconds for them to go."""
    deadline = time.monotonic() + within
    while True:
        alive = [p for p in pids if not gone(p)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.02)


@pytest.fixture
def pid_dir(tmp_path):
    """A folder where bots write the pids of everything they start; all of them are killed at the end."""
    d = tmp_path / "pids"
    d.mkdir()
    yield d
    for p in d.glob("*.pid"):
        try:
            os.kill(int(p.read_text() or p.stem.split("-")[-1]), signal.SIGKILL)
        except (ProcessLookupError, PermissionError, ValueError):
            pass


def pids_in(d: Path) -> dict[str, int]:
    return {p.stem: int(p.read_text()) for p in d.glob("*.pid")}


# A bot that, at hello, starts a child in its own group, a grandchild that calls setsid and whose parent
# exits (a daemon: an orphan outside the bot's session), and a child with a session of its own; it
# writes every pid to PID_DIR/<game>-<seat>-<what>.pid, then plays (the first legal action) or misbehaves.
FAMILY_BOT = """\
import json, os, subprocess, sys, time
pid_dir, behaviour = sys.argv[1], sys.argv[2]
SLEEP = [sys.executable, "-c", "import time; time.sleep(300)"]
DAEMON = '''
import os, sys, time
pid = os.fork()
if pid:
    open(sys.argv[1], "w").write(str(pid))
    os._exit(0)
os.setsid()
time.sleep(300)
'''
def note(game, what, pid):
    with open(os.path.join(pid_dir, f"{game}-{what}.tmp"), "w") as f:
        f.write(str(pid))
    os.replace(os.path.join(pid_dir, f"{game}-{what}.tmp"), os.path.join(pid_dir, f"{game}-{what}.pid"))

decisions = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        game = f"{msg['game']}-{msg['seat']}"
        note(game, "bot", os.getpid())
        note(game, "child", subprocess.Popen(SLEEP).pid)
        note(game, "session", subprocess.Popen(SLEEP, start_new_session=True).pid)
        target = os.path.join(pid_dir, f"{game}-daemon.tmp")
        subprocess.run([sys.executable, "-c", DAEMON, target], check=True)
        os.replace(target, os.path.join(pid_dir, f"{game}-daemon.pid"))
        print(json.dumps({"name": "family"}), flush=True)
    elif msg["type"] == "choose":
        decisions += 1
        if behaviour == "hang":
            time.sleep(300)
        elif behaviour == "garbage":
            print("no idea", flush=True)
        elif behaviour == "exit":
            sys.exit(4)
        else:
            print(json.dumps({"action": msg["observation"]["legal_actions"][0]["id"]}), flush=True)
    elif msg["type"] == "quit" and behaviour == "linger":
        time.sleep(300)  # ignores quit: killed after the grace period
"""


@pytest.fixture
def family_bot(tmp_path):
    path = tmp_path / "family_bot.py"
    path.write_text(FAMILY_BOT)
    return path


@linux_only
@pytest.mark.parametrize(
    "behaviour, forfeit",
    [
        ("play", None),
        ("linger", None),
        ("hang", "timeout"),
        ("garbage", "malformed"),
        ("exit", "crash"),
    ],
)
def test_no_process_of_a_bot_outlives_its_match(family_bot, pid_dir, behaviour, forfeit):
    report = run_arena(
        preset("cardavia"),
        2,
        3,
        [cmd(family_bot, str(pid_dir), behaviour), "random"],
        jobs=1,
        time_limit=0.5 if behaviour == "hang" else 10.0,
    )
    assert [f["kind"] for f in report.forfeits] == ([forfeit] * 2 if forfeit else [])
    pids = pids_in(pid_dir)
    assert sorted(pids) == sorted(f"{g}-{w}" for g in ("1-0", "2-1") for w in ("bot", "child", "session", "daemon"))
    # close() returns only when the launcher has killed and reaped them all: no waiting needed.
    assert all_gone(list(pids.values()), within=0.5) == []


@linux_only
def test_an_interrupted_arena_kills_its_bots(family_bot, pid_dir, monkeypatch):
    class Interrupting:
        name = "interrupting"

        def choose(self, obs):
            raise KeyboardInterrupt

    real = arena.players.make_builtin  # the arena's own players are made there
    monkeypatch.setattr(
        arena.players,
        "make_builtin",
        lambda name, seed, rules: Interrupting() if name == "random" else real(name, seed, rules),
    )
    with pytest.raises(KeyboardInterrupt):
        run_arena(preset("nintendo"), 2, 1, [cmd(family_bot, str(pid_dir), "play"), "random"], jobs=1)
    pids = pids_in(pid_dir)
    assert len(pids) == 4  # one match started, and was interrupted
    assert all_gone(list(pids.values()), within=0.5) == []


ARENA_MAIN = "import sys; from koikoi.cli import main; sys.exit(main(sys.argv[1:]))"


@linux_only
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_killed_arena_leaves_no_bot_behind(family_bot, pid_dir, tmp_path, jobs):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    spec = cmd(family_bot, str(pid_dir), "hang")  # each bot hangs on its first decision, its family alive
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            ARENA_MAIN,
            "arena",
            "--rules",
            "cardavia",
            "--games",
            "2",
            "--seed",
            "1",
            "--jobs",
            str(jobs),
            "--time-limit",
            "120",
            "--players",
            f"{spec},{spec}",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        want = 8 * jobs  # both bots of a game, one game at a time with one worker, two with two
        deadline = time.monotonic() + 60
        while len(pids_in(pid_dir)) < want and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        pids = pids_in(pid_dir)
        assert len(pids) == want, (pids, proc.poll())
        assert all(not gone(p) for p in pids.values())
        proc.kill()  # SIGKILL: the arena gets no chance to clean anything up
        proc.wait()
        assert all_gone(list(pids.values()), within=5.0) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # workers, should any be left
        except (ProcessLookupError, PermissionError):
            pass


# -- stderr ----------------------------------------------------------------------------------------

FLOOD_BOT = """\
import json, os, sys
mb = int(sys.argv[1])
block = (b"x" * 1023 + b"\\n") * 1024
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        for _ in range(mb):
            os.write(2, block)
        os.write(2, b"the end of the flood\\n")
        print(json.dumps({"name": "flood"}), flush=True)
    elif msg["type"] == "choose":
        if sys.argv[2] == "crash":
            sys.exit(6)
        print(json.dumps({"action": msg["observation"]["legal_actions"][0]["id"]}), flush=True)
"""


@pytest.mark.parametrize("behaviour", ["play", "crash"])
def test_a_bot_flooding_stderr_is_kept_to_a_tail(tmp_path, behaviour):
    bot = tmp_path / "flood.py"
    bot.write_text(FLOOD_BOT)
    logs = tmp_path / "logs"
    report = run_arena(preset("cardavia"), 1, 2, [cmd(bot, "50", behaviour), "random"], jobs=1, logs_dir=logs)
    log = logs / "game-0001.A.stderr.log"
    text = log.read_bytes()
    assert len(text) <= STDERR_KEEP_BYTES + 200
    assert text.startswith(b"[koikoi: the bot wrote 52428821 bytes to stderr; only the last 65536 are kept]\n")
    assert text.endswith(b"the end of the flood\n")
    if behaviour == "crash":
        (f,) = report.forfeits
        assert f["kind"] == "crash" and "exited with status 6" in f["reason"]
        assert f["stderr"].endswith("the end of the flood") and len(f["stderr"]) <= STDERR_TAIL_BYTES + 3
    else:
        assert report.forfeits == []


def test_stderr_is_read_while_the_bot_waits_and_memory_stays_bounded(tmp_path):
    """The bot writes 20 MB to stderr before answering hello: it would block forever on a full pipe."""
    bot = tmp_path / "flood.py"
    bot.write_text(FLOOD_BOT)
    b = BotProcess(shlex.join([sys.executable, str(bot), "20", "play"]))
    try:
        b.start()
        assert b.hello(0, preset("cardavia"), 5.0, game=1, bot_seed=1) == {"name": "flood"}
        # The answer comes on stdout; the last stderr bytes may still be in the pipe for the reader thread.
        deadline = time.monotonic() + 30
        while b._stderr.total < 20 * 1024 * 1024 + 21 and time.monotonic() < deadline:
            time.sleep(0.01)
        tail, total = b._stderr.tail(10 << 20)
        assert len(tail) == STDERR_KEEP_BYTES and tail.endswith(b"the end of the flood\n")
        assert b.stderr_tail().startswith("...") and b.stderr_tail().endswith("the end of the flood")
    finally:
        b.close()
    assert b._stderr.total == 20 * 1024 * 1024 + 21


def test_a_quiet_bot_leaves_no_log_and_a_small_log_is_whole(tmp_path):
    bot = tmp_path / "chatty.py"
    bot.write_text(FLOOD_BOT.replace("for _ in range(mb):", "for _ in range(0):"))
    logs = tmp_path / "logs"
    (logs).mkdir()
    (logs / "game-0001.A.stderr.log").write_text("from an earlier run")
    report = run_arena(preset("cardavia"), 1, 2, [cmd(bot, "0", "play"), "random"], jobs=1, logs_dir=logs)
    assert report.forfeits == []
    assert (logs / "game-0001.A.stderr.log").read_text() == "the end of the flood\n"


# -- bad lines -------------------------------------------------------------------------------------

BAD_LINE_BOT = """\
import json, sys
bad = sys.argv[1]
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(bad if sys.argv[2] == "hello" else json.dumps({"name": "bad lines"}), flush=True)
    elif msg["type"] == "choose":
        print(bad, flush=True)
"""

BAD_LINES = {
    # id: (the line, the kind, what the reason says)
    "deep": ("[" * 30000, "malformed", "nested 30000 levels deep; at most 32 are allowed"),
    "deep-in-object": ('{"action": ' + "[" * 30000 + "]" * 30000 + "}", "malformed", "nested 30001 levels deep"),
    "minus-300": ('{"action": -300}', "illegal", "there is no action -300: action numbers are 0 to 290"),
    "minus-1": ('{"action": -1}', "illegal", "there is no action -1: action numbers are 0 to 290"),
    "minus-2**63": (
        json.dumps({"action": -(2**63)}),
        "illegal",
        "there is no action -9223372036854775808: action numbers are 0 to 290",
    ),
    "true": ('{"action": true}', "malformed", "'action' must be an action number (0 to 290) or its notation, not true"),
    "291": ('{"action": 291}', "illegal", "there is no action 291: action numbers are 0 to 290"),
    "2**70": (
        json.dumps({"action": 2**70}),
        "illegal",
        "there is no action 1180591620717411303424: action numbers are 0 to 290",
    ),
    "float": ('{"action": 3.0}', "malformed", "must be an action number (0 to 290) or its notation, not 3.0"),
    "5000-digits": ('{"action": ' + "9" * 5000 + "}", "malformed", "unreadable JSON"),
    "long-line": (
        '{"action": 0, "x": "' + "a" * (MAX_LINE_BYTES + 10) + '"}',
        "malformed",
        f"at most {MAX_LINE_BYTES} are allowed",
    ),
}


@pytest.mark.parametrize("which", sorted(BAD_LINES))
def test_a_bad_line_costs_the_bot_the_match_not_the_arena(tmp_path, which):
    line, kind, reason = BAD_LINES[which]
    bot = tmp_path / "bad.py"
    bot.write_text(BAD_LINE_BOT)
    report = run_arena(preset("cardavia"), 2, 7, ["random", cmd(bot, line, "choose")], jobs=1)
    assert [g.reason for g in report.results] == ["forfeit", "forfeit"]  # both matches played
    assert report.players[0].wins == 2
    for f in report.forfeits:
        assert f["player"] == "B" and f["kind"] == kind, f
        assert reason in f["reason"], f["reason"]
        assert f["reason"].startswith("answer to choose")
        assert len(f["reason"]) < 400  # the line is shown cut short


@pytest.mark.parametrize(
    "line, reason",
    [
        (BAD_LINES["deep"][0], BAD_LINES["deep"][2]),
        (BAD_LINES["long-line"][0], BAD_LINES["long-line"][2]),
        ("true", "expected a JSON object, got 'true'"),
        ('{"name": ' + "[" * 40 + "]" * 40 + "}", "nested 41 levels deep; at most 32 are allowed"),
        ('{"name": "' + "x" * 300 + '"}', "'name' is 300 characters long; at most 200 are allowed"),
    ],
    ids=["deep", "long-line", "not-an-object", "deep-name", "long-name"],
)
def test_a_bad_answer_to_hello_costs_the_bot_the_match(tmp_path, line, reason):
    bot = tmp_path / "bad.py"
    bot.write_text(BAD_LINE_BOT)
    report = run_arena(preset("cardavia"), 2, 7, [cmd(bot, line, "hello"), "random"], jobs=2)
    assert [f["kind"] for f in report.forfeits] == ["malformed", "malformed"]
    assert all(f["reason"].startswith("answer to hello") and reason in f["reason"] for f in report.forfeits)


def test_read_action_checks_the_number_before_anything_else():
    for value in (-1, -144, -300, -(2**63), 291, 2**70):
        with pytest.raises(botproto.BotError, match=f"there is no action {value}: action numbers are 0 to 290"):
            botproto.read_action(json.dumps({"action": value}), [0, 1])
    with pytest.raises(botproto.BotError, match=r"no action 1234567890123456789\d*\.\.\.\d+ \(60 digits\)"):
        botproto.read_action('{"action": ' + "1234567890" * 6 + "}", [0])
    assert botproto.read_action('{"action": 290}', [290]) == 290
    # In range, but no action at all (a card taking itself): illegal, said plainly, without a name.
    with pytest.raises(botproto.BotError, match=r"illegal action 181; legal: 0 "):
        botproto.read_action('{"action": 181}', [0, 1])


def test_a_missing_program_is_a_forfeit_with_the_reason(tmp_path):
    b = BotProcess(str(tmp_path / "no-such-bot"))
    with pytest.raises(botproto.BotError, match="could not start .*no-such-bot.*No such file"):
        b.start()
    b.close()
    assert b.proc is None
