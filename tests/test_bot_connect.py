"""``koikoi bot connect`` as a real process against a real server (docs/web.md, "Bots online"): the
arena's example bots play whole matches against a person scripted over the seat socket, on SQLite and
PostgreSQL; the client carries on through a server restart; a bad token and an unreachable server are
said clearly; a program that answers nonsense is stopped and said, and the client goes on; challenges
its options do not allow are declined with the reason."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest import Server, free_port
from test_web_accounts import signup
from test_web_bots import CHALLENGE, answer_of, make_bot, until_online
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from koikoi.web.store import Store

pytestmark = [pytest.mark.server, pytest.mark.limits(signups_per_hour=100, logins_per_minute=100)]

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CLI = "import sys; from koikoi.cli import main; sys.exit(main())"


class Connected:
    """``koikoi bot connect`` in a child process; what it says goes to a log file, read with :meth:`said`."""

    def __init__(self, tmp: Path, server_url: str, token_file: Path, program: list[str], *options: str) -> None:
        self.log = tmp / f"connect-{time.monotonic_ns()}.log"
        cmd = [sys.executable, "-c", CLI, "bot", "connect", "--server", server_url, "--token-file", str(token_file)]
        self.proc = subprocess.Popen(
            [*cmd, *options, "--", *program], stdout=subprocess.DEVNULL, stderr=open(self.log, "w")
        )

    def said(self) -> str:
        return self.log.read_text()

    def wait_for(self, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.said():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"the client never said {text!r}; it said:\n{self.said()}")

    def stop(self) -> int:
        self.proc.terminate()
        return self.proc.wait(timeout=30)


def bot_with_token(server: Server, tmp: Path, owner: httpx.Client, name: str) -> Path:
    token_file = tmp / f"{name}.token"
    token_file.write_text(make_bot(owner, name) + "\n")
    return token_file


def challenge(c: httpx.Client, bot: str, **changes: object) -> dict:
    r = c.post("/api/challenges", json={**CHALLENGE, "bot": bot, **changes})
    assert r.status_code == 201, r.text
    return r.json()


def person_plays(server: Server, token: str, rng: random.Random, *, moves: int | None = None) -> dict:
    """A person at their table over the seat socket, a random legal move each time it is their turn, until
    the match is over (the last table), or after ``moves`` moves. A dropped socket is opened again."""
    made = 0
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        try:
            with connect(f"{server.ws_url}/ws/{token}", open_timeout=10) as ws:
                while True:
                    msg = json.loads(ws.recv(timeout=60))
                    if msg["type"] != "state":
                        continue
                    view = msg["state"]
                    assert "protocol" not in view  # a person's seat: the table alone
                    if view["match_over"] or (moves is not None and made >= moves):
                        return view
                    if view["to_move"]:
                        ws.send(json.dumps({"type": "action", "action": rng.choice(view["legal"]), "seq": view["seq"]}))
                        made += 1
        except (ConnectionClosed, OSError, TimeoutError):
            time.sleep(0.5)  # the server restarts: the page would reconnect too
    raise AssertionError("the match did not end")


@pytest.mark.parametrize("program", ["random_bot.py", "greedy_bot.js"])
def test_an_arena_bot_plays_a_person_a_whole_rated_match(server: Server, tmp_path: Path, program: str):
    command = (
        [sys.executable, str(EXAMPLES / program)] if program.endswith(".py") else ["node", str(EXAMPLES / program)]
    )
    with server.client() as ann, server.client() as cat:
        signup(ann, "Ann")
        signup(cat, "Cat")
        client = Connected(tmp_path, server.url, bot_with_token(server, tmp_path, ann, "Robo"), command)
        try:
            client.wait_for("the stream is open")
            until_online(server, "Robo")
            sent = challenge(cat, "Robo", hands=3, rated=True, clock="20+120")  # a rated game has a clock
            mine = answer_of(cat, sent["id"])
            assert mine["status"] == "accepted", mine
            end = person_plays(server, mine["token"], random.Random(7))
            client.wait_for(f"game {mine['game_id']}: over (hands)")
            said = client.said()
            name = "random_bot" if program.endswith(".py") else "greedy_bot.js"
            version = 1 if program.endswith(".py") else 2
            assert f"accepted Cat's challenge (nintendo, 3 hands, rated): game {mine['game_id']}" in said
            assert f"{name} plays Cat" in said and f"protocol version {version})" in said
            assert "failed" not in said, said
        finally:
            assert client.stop() == 0
    assert end["match_over"] and end["outcome"]["reason"] == "hands" and end["hand_number"] >= 3
    with httpx.Client(base_url=server.url) as c:
        assert c.get("/api/players/Robo").json()["ratings"]["short"]["games"] == 1
        assert c.get("/api/players/Cat").json()["ratings"]["short"]["games"] == 1
    store = Store(server.database_url)
    game = store.game(mine["game_id"])
    assert game is not None and game.status == "finished" and game.moves == end["seq"]
    store.close()


def test_the_client_carries_on_through_a_server_restart(sqlite_server: Server, tmp_path: Path):
    server = sqlite_server
    with server.client() as ann, server.client() as cat:
        signup(ann, "Ann")
        client = Connected(
            tmp_path,
            server.url,
            bot_with_token(server, tmp_path, ann, "Robo"),
            [
                sys.executable,
                str(EXAMPLES / "random_bot.py"),
            ],
        )
        try:
            client.wait_for("the stream is open")
            until_online(server, "Robo")
            sent = challenge(cat, "Robo", hands=2, name="Cat")
            mine = answer_of(cat, sent["id"])
            rng = random.Random(3)
            before = person_plays(server, mine["token"], rng, moves=3)
            assert not before["match_over"]
            server.restart()  # killed as a crash would be, then started again on the same database
            end = person_plays(server, mine["token"], rng)
            client.wait_for(f"game {mine['game_id']}: over (hands)")
            said = client.said()
            assert "lost the stream" in said and f"game {mine['game_id']}: lost its table" in said
            assert said.count("random_bot plays Cat") == 1  # the same program all along
        finally:
            assert client.stop() == 0
    assert end["match_over"]


def test_a_bad_token_or_an_unreachable_server_is_said_clearly(sqlite_server: Server, tmp_path: Path):
    server = sqlite_server
    program = [sys.executable, str(EXAMPLES / "random_bot.py")]

    def run(url: str, token_file: Path, *extra: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-c", CLI, "bot", "connect", "--server", url, "--token-file", str(token_file)]
        return subprocess.run([*cmd, *extra, "--", *program], capture_output=True, text=True, timeout=60)

    not_a_token = tmp_path / "bad.token"
    not_a_token.write_text("hello\n")
    r = run(server.url, not_a_token)
    assert r.returncode == 2 and "does not hold a bot token" in r.stderr, r.stderr
    r = run(server.url, tmp_path / "missing.token")
    assert r.returncode == 2 and "cannot read the token file" in r.stderr, r.stderr
    unknown = tmp_path / "unknown.token"
    unknown.write_text("kkb_" + "A" * 43)
    r = run(server.url, unknown)
    assert r.returncode == 2 and "refuses the token: this server knows no such bot token" in r.stderr, r.stderr
    r = run(f"http://127.0.0.1:{free_port()}", unknown)
    assert r.returncode == 1 and "cannot reach the server at http://127.0.0.1:" in r.stderr, r.stderr
    r = run("ftp://example", unknown)
    assert r.returncode == 2 and "--server is the server's address" in r.stderr, r.stderr
    r = run(server.url, unknown, "--games", "0")
    assert r.returncode == 2 and "--games is 1 to 32" in r.stderr, r.stderr
    r = run(server.url, unknown, "--seek", "bga:1:rated:10+60", "--time-limit", "12")
    assert r.returncode == 2 and "--seek: the clock 10+60 gives a decision less than --time-limit 12 s" in r.stderr
    cmd = [sys.executable, "-c", CLI, "bot", "connect", "--server", server.url, "--token-file", str(unknown)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "give the bot's program after --" in r.stderr, r.stderr


NONSENSE = """
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"name": "Nonsense"}), flush=True)
    elif msg["type"] == "choose":
        print(json.dumps({"action": "fly to the moon"}), flush=True)
"""


def test_a_program_that_answers_nonsense_is_stopped_and_the_client_goes_on(sqlite_server: Server, tmp_path: Path):
    server = sqlite_server
    bot = tmp_path / "nonsense.py"
    bot.write_text(NONSENSE)
    with server.client() as ann, server.client() as cat, server.client() as dan:
        signup(ann, "Ann")
        signup(dan, "Dan")
        options = ["--rules", "nintendo,bga", "--hands", "1-2", "--casual-only", "--no-custom", "--time-limit", "12"]
        client = Connected(
            tmp_path, server.url, bot_with_token(server, tmp_path, ann, "Robo"), [sys.executable, str(bot)], *options
        )
        try:
            client.wait_for("the stream is open")
            until_online(server, "Robo")
            # Challenges the options do not allow are declined, each with its reason.
            for changes, reason in (
                ({"rules": {"preset": "cardavia"}}, "rules"),
                ({"rules": {"preset": "nintendo", "options": {"goko": 12}}}, "rules"),
                ({"hands": 3}, "length"),
                ({"clock": "10+60"}, "clock"),  # 10 s a decision, and the program may take 12
            ):
                answer = answer_of(cat, challenge(cat, "Robo", **changes)["id"])
                assert (answer["status"], answer["reason"]) == ("declined", reason), (changes, answer)
            answer = answer_of(dan, challenge(dan, "Robo", rated=True, clock="1d")["id"])
            assert (answer["status"], answer["reason"]) == ("declined", "casual")
            # A game the program answers nonsense in: stopped, said, the game left as it is.
            for _ in range(2):  # a failed game frees its place: the next challenge is accepted again
                mine = answer_of(cat, challenge(cat, "Robo")["id"])
                assert mine["status"] == "accepted", mine
                deadline = time.monotonic() + 60
                with httpx.Client(base_url=server.url) as c:
                    while time.monotonic() < deadline:
                        view = c.get(f"/api/seat/{mine['token']}").json()
                        if view["to_move"]:
                            c.post(
                                f"/api/seat/{mine['token']}/action",
                                json={"action": view["legal"][0], "seq": view["seq"]},
                            )
                        if f"game {mine['game_id']}: the program failed (illegal)" in client.said():
                            break
                        time.sleep(0.1)
                client.wait_for(f"game {mine['game_id']}: the program failed (illegal)")
                assert "'fly to the moon'" in client.said()
                view = httpx.get(f"{server.url}/api/seat/{mine['token']}").json()
                assert view["status"] == "playing" and not view["to_move"]  # the bot's turn, and it moves no more
            assert client.proc.poll() is None  # the client itself goes on
        finally:
            assert client.stop() == 0


def test_a_bot_seeks_in_the_lobby_and_a_person_accepts_it(sqlite_server: Server, tmp_path: Path):
    server = sqlite_server
    with server.client() as ann, server.client() as cat:
        signup(ann, "Ann")
        program = [sys.executable, str(EXAMPLES / "random_bot.py")]
        token_file = bot_with_token(server, tmp_path, ann, "Robo")
        client = Connected(tmp_path, server.url, token_file, program, "--seek", "bga:1:casual:20+120")
        try:
            client.wait_for("seeking a game in the lobby")
            (seek,) = cat.get("/api/lobby").json()["seeks"]
            assert (seek["name"], seek["bot"], seek["preset"], seek["hands"], seek["rated"]) == (
                "Robo",
                True,
                "bga",
                1,
                False,
            )
            assert seek["clock"] == "20+120"  # the time control --seek named
            r = cat.post(f"/api/lobby/seeks/{seek['id']}/accept", json={"name": "Cat"})
            assert r.status_code == 201, r.text
            taken = r.json()
            end = person_plays(server, taken["token"], random.Random(5))
            assert end["match_over"] and [p["bot"] for p in end["players"]].count(True) == 1
            client.wait_for(f"game {taken['game_id']}: over (")  # by the hands, or a bankruptcy under bga
            # Room again: it seeks again.
            deadline = time.monotonic() + 60
            while client.said().count("seeking a game in the lobby") < 2:
                assert time.monotonic() < deadline, client.said()
                time.sleep(0.1)
            assert [s["name"] for s in cat.get("/api/lobby").json()["seeks"]] == ["Robo"]
        finally:
            assert client.stop() == 0


def test_a_bot_joins_an_arena_with_tournament_and_plays_the_match_it_is_paired_into(sqlite_server: Server, tmp_path):
    from datetime import UTC, datetime, timedelta

    server = sqlite_server
    with server.client() as ann:
        signup(ann, "Ann")
        starts = (datetime.now(UTC) + timedelta(seconds=4)).isoformat()
        r = ann.post(
            "/api/tournaments",
            json={
                "kind": "arena",
                "name": "Bots welcome",
                "rules": {"preset": "nintendo"},
                "hands": 1,
                "clock": "10+60",
                "starts": starts,
                "minutes": 20,
                "bots": True,
                "rated": False,
            },
        )
        assert r.status_code == 201, r.text
        tid = r.json()["id"]
        assert ann.post(f"/api/tournaments/{tid}/join", json={}).status_code == 200
        token_file = bot_with_token(server, tmp_path, ann, "Robo")
        client = Connected(
            tmp_path,
            server.url,
            token_file,
            [sys.executable, str(EXAMPLES / "random_bot.py")],
            "--tournament",
            f"{server.url}/tournament/{tid}",
        )
        try:
            client.wait_for(f"joined tournament {server.url}/tournament/{tid}")
            deadline = time.monotonic() + 60
            game = None
            while game is None and time.monotonic() < deadline:
                game = (ann.get(f"/api/tournaments/{tid}").json()["me"] or {}).get("game")
                time.sleep(0.2)
            assert game is not None, "Ann was never paired with the bot"
            end = person_plays(server, game["url"].rsplit("/", 1)[1], random.Random(3))
            client.wait_for(f"game {game['game_id']}: over")
            assert end["match_over"]
            rows = ann.get(f"/api/tournaments/{tid}").json()["standings"]["rows"]
            assert {r["name"] for r in rows} == {"Ann", "Robo"}
        finally:
            assert client.stop() == 0
    # A tournament that is not one is said clearly, and the client stops.
    bad = subprocess.run(
        [
            sys.executable,
            "-c",
            CLI,
            "bot",
            "connect",
            "--server",
            server.url,
            "--token-file",
            str(token_file),
            "--tournament",
            "no-such-one",
            "--",
            sys.executable,
            str(EXAMPLES / "random_bot.py"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode != 0 and "could not join tournament no-such-one: there is no such tournament" in bad.stderr
