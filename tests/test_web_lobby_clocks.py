"""Games between strangers carry a time control, against a real server on SQLite and PostgreSQL (docs/web.md,
"The public lobby", "Bots online" and "Time controls"): a seek's clock goes to its game and runs out there;
a bad or missing clock is refused by name and nothing is made; quick pairing makes games on the pool's
clock, the first mover's running; a challenge's clock goes to the bot's game, whose clock runs out as
anyone's; an owner plays their own bot casually only; the games challenges made are listed in the lobby."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from conftest import Server, limit_args
from sqlalchemy import func, select
from test_web_accounts import signup
from test_web_bots import answer_of, bearer, make_bot, next_event, stream, until_online
from test_web_clocks import QUICK
from test_web_lobby import lobby_socket, lobby_until, next_of

from koikoi.web.pairing import POOLS
from koikoi.web.schema import challenges, clocks, seeks
from koikoi.web.store import Store
from koikoi.web.tablestore import TableStore

pytestmark = pytest.mark.server  # every test here starts server processes of its own


@pytest.fixture
def clocked(database_url, tmp_path):
    """A server that offers the test-only control QUICK besides the standard ones."""
    s = Server(
        database_url, tmp_path, "--time-control", QUICK, *limit_args(signups_per_hour=100, logins_per_minute=100)
    )
    s.start()
    yield s
    s.stop(hard=False)


def stored_clock(server: Server, game_id: str):
    store = Store(server.database_url)
    try:
        return TableStore(store).clock_of(game_id)
    finally:
        store.close()


def count(server: Server, table) -> int:
    store = Store(server.database_url)
    try:
        with store.engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(table)).scalar_one()
    finally:
        store.close()


def finished(c: httpx.Client, token: str, timeout: float = 60) -> dict:
    """The seat's table once the game is over (the server ends it; nobody here moves)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        table = c.get(f"/api/seat/{token}").json()
        if table["status"] == "finished":
            return table
        time.sleep(0.3)
    raise AssertionError("the game never ended")


def test_a_seeks_clock_goes_to_its_game_and_runs_out_there(clocked: Server):
    with clocked.client() as ann, clocked.client() as bob:
        with lobby_socket(clocked, bob) as ws_bob:
            next_of(ws_bob, "lobby")
            r = ann.post("/api/lobby/seeks", json={"rules": {"preset": "nintendo"}, "hands": 3, "clock": QUICK})
            assert r.status_code == 201, r.text
            seek = r.json()
            assert seek["seek"]["clock"] == QUICK
            # Everyone's lobby lists it with its clock.
            (shown,) = lobby_until(ws_bob, lambda m: m["seeks"])["seeks"]
            assert shown["id"] == seek["seek_id"] and shown["clock"] == QUICK
            taken = bob.post(f"/api/lobby/seeks/{seek['seek_id']}/accept", json={"name": "Bob"})
            assert taken.status_code == 201, taken.text
            game_id, token = taken.json()["game_id"], taken.json()["token"]
            # The game has the seek's clock, running from now for whoever moves first; time running out loses.
            c = stored_clock(clocked, game_id)
            assert c is not None and c.control.id == QUICK and c.on_time == "lose"
            assert c.turn_started is not None and c.deadline is not None
            table = bob.get(f"/api/seat/{token}").json()
            assert table["clock"]["control"] == QUICK and table["clock"]["to_move"] == table["current_player"]
            first = table["current_player"]
            # The lobby's list of games being played shows the clock too.
            listed = bob.get("/api/lobby").json()["games"]
            assert [(g["game_id"], g["clock"]) for g in listed] in ([(game_id, QUICK)], [])  # [] once over
        # Nobody moves: the first mover's time runs out, decided by the server: they never came, so the game
        # is aborted (no result), not lost.
        over = finished(bob, token)
        assert over["ending"] == {"reason": "abort", "winner": None, "no_show": first} and over["clock"]["flagged"]


def test_bad_clocks_are_refused_by_name_and_nothing_is_made(clocked: Server):
    with clocked.client() as ann, clocked.client() as cat:
        assert signup(ann, "Ann").status_code == 201
        assert signup(cat, "Cat").status_code == 201
        token = make_bot(ann, "Robo")
        seek = {"rules": {"preset": "nintendo"}, "hands": 1}
        bad = [
            ({"clock": "1+1"}, "bad_clock", "unknown time control '1+1'"),
            ({"clock": 60}, "bad_clock", "unknown time control of type int"),
            ({"clock": ["10+60"]}, "bad_clock", "unknown time control of type list"),
            ({"clock": {"per": 10}}, "bad_clock", "unknown time control of type dict"),
            ({"clock": "x" * 10_000}, "bad_clock", "unknown time control 'xxxxxxxxxxxxxxxxxxx"),
            ({"clock": "10+60\x00"}, "bad_clock", "unknown time control"),
            ({"clock": "10+60", "on_time": "computer"}, "bad_clock", "running out of time loses"),
            ({"clock": "10+60", "on_time": 1}, "bad_clock", "running out of time loses"),
            ({"rated": True}, "clock_needed", "a rated game is played with a clock"),
            ({"rated": True, "clock": "none"}, "clock_needed", "a rated game is played with a clock"),
            ({"rated": True, "clock": None}, "clock_needed", "a rated game is played with a clock"),
        ]
        for changes, code, words in bad:
            r = cat.post("/api/lobby/seeks", json={**seek, **changes})
            assert r.status_code == 422, (changes, r.text)
            assert r.json()["error"] == code and words in r.json()["message"], (changes, r.text)
        assert count(clocked, seeks) == 0 and cat.get("/api/lobby").json()["seeks"] == []
        with stream(clocked, token) as ws:
            until_online(clocked, "Robo")
            for changes, code, words in bad:
                r = cat.post("/api/challenges", json={**seek, "bot": "Robo", **changes})
                assert r.status_code == 422, (changes, r.text)
                assert r.json()["error"] == code and words in r.json()["message"], (changes, r.text)
            assert count(clocked, challenges) == 0
            # No clock at all is a casual game's choice, a seek's and a challenge's alike.
            r = cat.post("/api/lobby/seeks", json={**seek, "clock": "none"})
            assert r.status_code == 201 and r.json()["seek"]["clock"] is None
            r = cat.post("/api/challenges", json={**seek, "bot": "Robo"})
            assert r.status_code == 201 and r.json()["clock"] is None
            assert next_event(ws, "challenge")["challenge"]["clock"] is None


def test_quick_pairing_makes_games_on_the_pools_clock_the_first_movers_running(clocked: Server):
    pool = POOLS["nintendo-3"]
    with clocked.client() as ann, clocked.client() as bob:
        listed = ann.get("/api/lobby").json()["pools"]
        assert {k: p["clock"] for k, p in listed.items()} == {k: p.clock for k, p in POOLS.items()}
        page = ann.get("/lobby?lang=en").text
        assert "10 s a move + 1:00 in the bank" in page and "20 s a move + 2:00 in the bank" in page
        with lobby_socket(clocked, ann) as ws_ann, lobby_socket(clocked, bob) as ws_bob:
            next_of(ws_ann, "lobby")
            next_of(ws_bob, "lobby")
            first = ann.post("/api/lobby/quick", json={"pool": "nintendo-3", "name": "Ann"}).json()
            assert first["status"] == "waiting" and first["clock"] == pool.clock
            second = bob.post("/api/lobby/quick", json={"pool": "nintendo-3", "name": "Bob"}).json()
            told = second if second["status"] == "paired" else next_of(ws_bob, "paired")
            other = next_of(ws_ann, "paired")
            assert other["game_id"] == told["game_id"]
        game_id = told["game_id"]
        c = stored_clock(clocked, game_id)
        assert c is not None and c.control.id == pool.clock and c.on_time == "lose"
        assert c.banks == (60.0, 60.0) and c.deadline is not None and c.deadline > time.time()
        for client, token in ((ann, other["token"]), (bob, told["token"])):
            table = client.get(f"/api/seat/{token}").json()
            assert table["status"] == "playing" and table["rules"]["hands"] == 3
            clock = table["clock"]
            assert clock["control"] == "10+60" and clock["to_move"] == table["current_player"]
            assert 0 < clock["left"] <= 10 + 8 + 60  # the hand's first decision, its own time, the bank
        (listed_game,) = ann.get("/api/lobby").json()["games"]
        assert listed_game["game_id"] == game_id and listed_game["clock"] == pool.clock
        assert not listed_game["rated"]  # two guests: casual, on the clock all the same


def test_a_challenges_clock_goes_to_the_bots_game_and_runs_out_as_anyones(clocked: Server):
    with clocked.client() as ann, clocked.client() as cat:
        assert signup(ann, "Ann").status_code == 201
        token = make_bot(ann, "Robo")
        with stream(clocked, token) as ws:
            until_online(clocked, "Robo")
            r = cat.post(
                "/api/challenges",
                json={"bot": "Robo", "rules": {"preset": "nintendo"}, "hands": 1, "clock": QUICK, "name": "Cat"},
            )
            assert r.status_code == 201 and r.json()["clock"] == QUICK, r.text
            told = next_event(ws, "challenge")["challenge"]
            assert told["clock"] == QUICK
            seat = httpx.post(f"{clocked.url}/api/bot/challenges/{told['id']}/accept", headers=bearer(token)).json()
            start = next_event(ws, "gameStart")["game"]
            assert start["id"] == seat["game_id"] and start["clock"] == QUICK
            mine = answer_of(cat, told["id"])
            assert mine["clock"] == QUICK and mine["status"] == "accepted"
            c = stored_clock(clocked, seat["game_id"])
            assert c is not None and c.control.id == QUICK and c.on_time == "lose" and c.deadline is not None
            first = cat.get(f"/api/seat/{mine['token']}").json()["current_player"]
            # Neither the bot nor Cat moves: whoever is to move runs out of their first move's time, the bot as
            # anyone, and the game is aborted.
            over = finished(cat, mine["token"])
            assert over["ending"] == {"reason": "abort", "winner": None, "no_show": first}
            assert next_event(ws, "gameFinish")["game"]["id"] == seat["game_id"]


def test_an_owner_plays_their_own_bot_casually_and_challenge_games_are_listed(clocked: Server):
    with clocked.client() as ann, clocked.client() as bob:
        assert signup(ann, "Ann").status_code == 201
        assert signup(bob, "Bob").status_code == 201
        token = make_bot(ann, "Robo")
        with stream(clocked, token) as ws:
            until_online(clocked, "Robo")
            body = {"bot": "Robo", "rules": {"preset": "nintendo"}, "hands": 1, "clock": "20+120"}
            # Rated against one's own bot: refused, by name, nothing made (a casual game is fine).
            r = ann.post("/api/challenges", json={**body, "rated": True})
            assert r.status_code == 403 and r.json()["error"] == "own_bot", r.text
            assert count(clocked, challenges) == 0
            # ... nor by accepting the bot's rated seek.
            r = httpx.post(
                f"{clocked.url}/api/bot/seeks",
                json={"rules": {"preset": "nintendo"}, "hands": 1, "rated": True, "clock": "20+120"},
                headers=bearer(token),
            )
            assert r.status_code == 201, r.text
            seek_id = r.json()["seek_id"]
            r = ann.post(f"/api/lobby/seeks/{seek_id}/accept", json={})
            assert r.status_code == 403 and r.json()["error"] == "own_bot", r.text
            assert [s["id"] for s in bob.get("/api/lobby").json()["seeks"]] == [seek_id]  # still open for others
            assert bob.get("/api/lobby").json()["games"] == []
            # Bob may play it rated; Ann casually. Both games are listed among the games being played.
            rated = bob.post("/api/challenges", json={**body, "rated": True}).json()
            casual = ann.post("/api/challenges", json=body).json()
            assert {next_event(ws, "challenge")["challenge"]["id"] for _ in range(2)} == {rated["id"], casual["id"]}
            games = {}
            for cid in (rated["id"], casual["id"]):
                r = httpx.post(f"{clocked.url}/api/bot/challenges/{cid}/accept", headers=bearer(token))
                assert r.status_code == 201, r.text
                games[cid] = r.json()["game_id"]
            listed = {g["game_id"]: g for g in bob.get("/api/lobby").json()["games"]}
            assert set(listed) == set(games.values())
            assert {listed[games[rated["id"]]]["rated"], listed[games[casual["id"]]]["rated"]} == {True, False}
            for g in listed.values():
                assert g["clock"] == "20+120" and [p["bot"] for p in g["players"]].count(True) == 1
                assert "token" not in json.dumps(g)
            # A watcher's lobby socket is pushed the same list.
            with lobby_socket(clocked, bob) as ws_bob:
                pushed = lobby_until(ws_bob, lambda m: len(m["games"]) == 2)
                assert {g["game_id"] for g in pushed["games"]} == set(games.values())
            store = Store(clocked.database_url)
            with store.engine.connect() as conn:
                controls = conn.execute(select(clocks.c.game_id, clocks.c.control)).all()
            store.close()
            assert {(g, "20+120") for g in games.values()} == set(controls)
