"""The public lobby over the API and its socket, against a real server on a real database (docs/web.md,
"The public lobby"): seeks created, listed, accepted once, cancelled and ended; quick pairing; the
lobby socket's pushes and its word to a paired player; rated games; hostile input."""

from __future__ import annotations

import contextlib
import json
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from conftest import Server, ws_json
from sqlalchemy import update
from test_web_accounts import signup
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from koikoi.web.pairing import POOLS
from koikoi.web.schema import games, seeks
from koikoi.web.store import Store

SEEK = {"rules": {"preset": "nintendo"}, "hands": 3, "rated": False}


def cookies(c: httpx.Client) -> str:
    c.get("/api/lobby")  # a first visit sets the browser's cookie
    return "; ".join(f"{k}={v}" for k, v in c.cookies.items())


def lobby_socket(server: Server, c: httpx.Client):
    return connect(f"{server.ws_url}/ws/lobby", additional_headers={"Cookie": cookies(c)}, open_timeout=30)


def next_of(ws, kind: str, timeout: float = 30) -> dict:
    """The next message of ``kind`` on a lobby socket (lobby pushes come whenever the lobby changes)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
        if msg["type"] == kind:
            return msg
    raise AssertionError(f"no {kind} message")


def lobby_until(ws, check, timeout: float = 30) -> dict:
    """The first lobby push for which ``check(msg)`` holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = next_of(ws, "lobby", deadline - time.monotonic())
        if check(msg):
            return msg
    raise AssertionError("the lobby never showed it")


def test_a_seek_is_listed_accepted_once_and_its_creator_told_their_seat(server: Server):
    with server.client() as ann, server.client() as bob, server.client() as cat:
        with lobby_socket(server, ann) as ws_ann, lobby_socket(server, cat) as ws_cat:
            first = next_of(ws_ann, "lobby")
            assert first["seeks"] == [] and set(first["pools"]) == {"nintendo-3", "nintendo-12", "bga-6", "wikipedia-6"}
            r = ann.post("/api/lobby/seeks", json={**SEEK, "name": "Ann <b>"})
            assert r.status_code == 201, r.text
            seek_id = r.json()["seek_id"]
            # Everyone's lobby shows it, and only its creator's marks it as theirs.
            seen = lobby_until(ws_cat, lambda m: m["seeks"])
            (shown,) = seen["seeks"]
            assert shown["id"] == seek_id and shown["name"] == "Ann <b>" and shown["hands"] == 3
            assert shown["preset"] == "nintendo" and shown["rated"] is False and shown["category"] == "short"
            assert seen["mine"] == []
            assert lobby_until(ws_ann, lambda m: m["seeks"])["mine"] == [seek_id]
            assert "owner" not in json.dumps(seen) and ann.cookies.get("koikoi_id") not in json.dumps(seen)
            listed = bob.get("/api/lobby").json()
            assert [s["id"] for s in listed["seeks"]] == [seek_id] and listed["mine"]["seeks"] == []
            assert ann.get("/api/lobby").json()["mine"]["seeks"] == [seek_id]
            # Its creator cannot accept it; Bob can, once; Cat comes too late.
            assert ann.post(f"/api/lobby/seeks/{seek_id}/accept", json={}).json()["error"] == "own_seek"
            r = bob.post(f"/api/lobby/seeks/{seek_id}/accept", json={"name": "Bob"})
            assert r.status_code == 201, r.text
            taken = r.json()
            assert taken["url"] == f"/play/{taken['token']}" and taken["status"] == "playing"
            r = cat.post(f"/api/lobby/seeks/{seek_id}/accept", json={})
            assert r.status_code == 410 and r.json()["error"] == "seek_taken"
            # Ann is told her own seat over her socket; Cat is told nothing of it.
            told = next_of(ws_ann, "paired")
            assert told["game_id"] == taken["game_id"] and told["seek_id"] == seek_id
            assert told["token"] != taken["token"] and told["url"] == f"/play/{told['token']}"
            gone = lobby_until(ws_cat, lambda m: not m["seeks"])
            assert taken["token"] not in json.dumps(gone) and told["token"] not in json.dumps(gone)
            (playing,) = gone["games"]
            assert playing["game_id"] == taken["game_id"] and [p["name"] for p in playing["players"]] == [
                "Ann <b>",
                "Bob",
            ]
            # The game is each player's, at their own seat.
            for c, token in ((ann, told["token"]), (bob, taken["token"])):
                (game,) = c.get("/api/games").json()["games"]
                assert game["game_id"] == taken["game_id"]
                assert c.get(f"/api/seat/{token}").json()["to_move"] in (True, False)
            assert {s.token for s in Store(server.database_url).seats_of(taken["game_id"])} == {
                told["token"],
                taken["token"],
            }


def test_cancelling_and_the_limit_on_seeks(server: Server):
    with server.client() as ann, server.client() as bob:
        ids = [ann.post("/api/lobby/seeks", json=SEEK).json()["seek_id"] for _ in range(3)]
        r = ann.post("/api/lobby/seeks", json=SEEK)
        assert r.status_code == 429 and r.json()["error"] == "too_many_seeks"
        assert bob.delete(f"/api/lobby/seeks/{ids[0]}").status_code == 404  # not Bob's
        r = ann.delete(f"/api/lobby/seeks/{ids[0]}")
        assert r.status_code == 200 and r.json() == {"seek_id": ids[0], "cancelled": True}
        assert ann.delete(f"/api/lobby/seeks/{ids[0]}").status_code == 404
        assert bob.post(f"/api/lobby/seeks/{ids[0]}/accept", json={}).status_code == 404
        assert ann.post("/api/lobby/seeks", json=SEEK).status_code == 201  # room for one again
        assert sorted(s["id"] for s in bob.get("/api/lobby").json()["seeks"]) != []


def test_a_seek_ends_when_its_creator_is_gone(server: Server):
    with server.client() as ann, server.client() as bob:
        seek_id = ann.post("/api/lobby/seeks", json=SEEK).json()["seek_id"]
        store = Store(server.database_url)
        with store.engine.begin() as conn:  # as if Ann's page had closed 31 s ago
            conn.execute(update(seeks).values(seen=datetime.now(UTC) - timedelta(seconds=31)))
        deadline = time.monotonic() + 30
        while bob.get("/api/lobby").json()["seeks"] and time.monotonic() < deadline:
            time.sleep(0.5)
        assert bob.get("/api/lobby").json()["seeks"] == []
        assert bob.post(f"/api/lobby/seeks/{seek_id}/accept", json={}).status_code == 404
        store.close()


@pytest.mark.limits(signups_per_hour=50)
def test_a_rated_seek_needs_two_accounts_and_rates_the_match_once(server: Server):
    with server.client() as ann, server.client() as guest, server.client() as bob:
        r = guest.post("/api/lobby/seeks", json={**SEEK, "rated": True})
        assert r.status_code == 403 and r.json()["error"] == "sign_in"
        assert signup(ann, "AnnR").status_code == 201 and signup(bob, "BobR").status_code == 201
        r = ann.post(
            "/api/lobby/seeks",
            json={"rules": {"preset": "nintendo", "options": {"goko": 8}}, "hands": 1, "rated": True},
        )
        assert r.status_code == 422 and r.json()["error"] == "bad_rules"
        rated = {"rules": {"preset": "cardavia"}, "hands": 1, "rated": True, "name": "x"}
        r = ann.post("/api/lobby/seeks", json=rated)
        assert r.status_code == 422 and r.json()["error"] == "clock_needed"  # a stranger's rated game has a clock
        assert ann.get("/api/lobby").json()["seeks"] == []
        r = ann.post("/api/lobby/seeks", json={**rated, "clock": "20+120"})
        assert r.status_code == 201, r.text
        seek = r.json()
        assert seek["seek"]["clock"] == "20+120"
        assert seek["seek"]["name"] == "AnnR" and seek["seek"]["rating"] == 1500 and seek["seek"]["provisional"]
        r = guest.post(f"/api/lobby/seeks/{seek['seek_id']}/accept", json={})
        assert r.status_code == 403 and r.json()["error"] == "sign_in"
        taken = bob.post(f"/api/lobby/seeks/{seek['seek_id']}/accept", json={}).json()
        mine = next(s for s in Store(server.database_url).seats_of(taken["game_id"]) if s.token != taken["token"])
        play_out(server, {0: mine.token, 1: taken["token"]} if mine.seat == 0 else {0: taken["token"], 1: mine.token})
        ratings = {n: server.client().get(f"/api/players/{n}").json()["ratings"] for n in ("AnnR", "BobR")}
        assert ratings["AnnR"]["short"]["games"] == 1 and ratings["BobR"]["short"]["games"] == 1
        assert ratings["AnnR"]["short"]["rating"] + ratings["BobR"]["short"]["rating"] in range(2990, 3011)


def play_out(server: Server, tokens: dict[int, str]) -> None:
    """Both seats play the match to its end over HTTP (stop at once, else the first legal action)."""
    with httpx.Client(base_url=server.url, timeout=30) as c:
        for _ in range(2000):
            views = {seat: c.get(f"/api/seat/{t}").json() for seat, t in tokens.items()}
            if any(v["match_over"] for v in views.values()):
                return
            for seat, v in views.items():
                if v["to_move"]:
                    r = c.post(f"/api/seat/{tokens[seat]}/action", json={"action": v["legal"][0], "seq": v["seq"]})
                    assert r.status_code == 200, r.text
        raise AssertionError("the match did not end")


def test_quick_pairing_pairs_two_players_once_and_never_one_with_themselves(server: Server):
    with server.client() as ann, server.client() as bob:
        with lobby_socket(server, ann) as ws_ann, lobby_socket(server, bob) as ws_bob:
            r = ann.post("/api/lobby/quick", json={"pool": "nintendo-3", "name": "Ann"})
            assert r.status_code == 201, r.text
            entry = r.json()
            assert entry["status"] == "waiting" and entry["pool"] == "nintendo-3"
            assert entry["computer"]["level"] in ("easy", "medium", "hard", "expert") and entry["offer_after"] == 15
            # The same player asking again (another tab) waits once, and is not paired with themselves.
            again = ann.post("/api/lobby/quick", json={"pool": "nintendo-3"}).json()
            assert again["entry_id"] == entry["entry_id"] and again["status"] == "waiting"
            time.sleep(1.2)  # two waves
            assert ann.get(f"/api/lobby/quick/{entry['entry_id']}").json()["status"] == "waiting"
            assert bob.get(f"/api/lobby/quick/{entry['entry_id']}").status_code == 404  # not Bob's
            lobby_until(ws_bob, lambda m: m["pools"]["nintendo-3"]["waiting"] == 1)
            r = bob.post("/api/lobby/quick", json={"pool": "nintendo-3", "name": "Bob"})
            assert r.status_code in (200, 201), r.text
            told_ann, told_bob = next_of(ws_ann, "paired"), next_of(ws_bob, "paired")
            assert told_ann["game_id"] == told_bob["game_id"] and told_ann["token"] != told_bob["token"]
            assert ann.get(f"/api/lobby/quick/{entry['entry_id']}").json()["token"] == told_ann["token"]
            assert ann.delete(f"/api/lobby/quick/{entry['entry_id']}").json()["error"] == "paired"
            store = Store(server.database_url)
            seats = store.seats_of(told_ann["game_id"])
            assert {s.token for s in seats} == {told_ann["token"], told_bob["token"]}
            assert store.game(told_ann["game_id"]).rules["hands"] == 3
            store.close()


def test_leaving_the_lobby_leaves_the_pool(server: Server):
    with server.client() as ann, server.client() as bob:
        with lobby_socket(server, ann):
            entry = ann.post("/api/lobby/quick", json={"pool": "bga-6"}).json()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and bob.get("/api/lobby").json()["pools"]["bga-6"]["waiting"]:
            time.sleep(0.2)
        assert bob.get("/api/lobby").json()["pools"]["bga-6"]["waiting"] == 0
        assert ann.get(f"/api/lobby/quick/{entry['entry_id']}").status_code == 404


BAD_SEEKS = [
    ({"rules": {"preset": "nope"}, "hands": 3}, "bad_rules"),
    ({"rules": {"preset": "nintendo"}, "hands": 0}, "bad_seek"),
    ({"rules": {"preset": "nintendo"}, "hands": 13}, "bad_seek"),
    ({"rules": {"preset": "nintendo"}, "hands": "3"}, "bad_seek"),
    ({"rules": {"preset": "nintendo"}, "hands": True}, "bad_seek"),
    ({"rules": {"preset": "nintendo"}, "hands": 3, "rated": "yes"}, "bad_seek"),
    ({"rules": {"preset": "boardgame"}, "hands": 3}, "bad_rules"),
    ({"rules": [1, 2], "hands": 3}, "bad_rules"),
    ({"rules": {"preset": "nintendo"}, "hands": 3, "name": "x" * 500}, "bad_name"),
]


def test_bad_seeks_say_why_and_change_nothing(server: Server):
    with server.client() as c:
        for body, code in BAD_SEEKS:
            r = c.post("/api/lobby/seeks", json=body)
            assert r.status_code == 422 and r.json()["error"] == code, (body, r.text)
        assert c.get("/api/lobby").json()["seeks"] == []


def test_hostile_lobby_requests(server: Server):
    with server.client() as c:
        for pool in (None, 3, "x" * 1000, "nintendo-4", ["nintendo-3"]):
            r = c.post("/api/lobby/quick", json={"pool": pool})
            assert r.status_code == 422 and r.json()["error"] == "bad_pool", r.text
        for seek_id in ("x" * 33, "nope", "%00", "../x"):
            assert c.post(f"/api/lobby/seeks/{seek_id}/accept", json={}).status_code == 404
            assert c.delete(f"/api/lobby/seeks/{seek_id}").status_code == 404
            assert c.get(f"/api/lobby/quick/{seek_id}").status_code == 404
        r = c.post("/api/lobby/seeks", content=b"{" * 5000, headers={"content-type": "application/json"})
        assert r.status_code == 400
        r = c.post("/api/lobby/seeks", content="rules=1", headers={"content-type": "application/x-www-form-urlencoded"})
        assert r.status_code == 415
        host = server.url.split("//")[1]
        r = c.post("/api/lobby/seeks", json=SEEK, headers={"Origin": "http://evil.example", "Host": host})
        assert r.status_code == 403 and r.json()["error"] == "bad_origin"
        assert c.get("/api/lobby").json()["seeks"] == []


def test_the_lobby_socket_refuses_other_sites_and_strangers_and_only_listens(server: Server):
    with server.client() as c:
        cookie = cookies(c)
        with connect(
            f"{server.ws_url}/ws/lobby", additional_headers={"Cookie": cookie, "Origin": "http://evil.example"}
        ) as ws:
            assert ws_json(ws)["code"] == "bad_origin"
            with pytest.raises(ConnectionClosed):
                ws.recv(timeout=10)
        with connect(f"{server.ws_url}/ws/lobby") as ws:  # no cookie: not a page of ours
            assert ws_json(ws)["code"] == "no_cookie"
        with lobby_socket(server, c) as ws:
            assert next_of(ws, "lobby")["seeks"] == []
            ws.send(json.dumps({"type": "ping"}))
            assert next_of(ws, "pong")["type"] == "pong"
            assert c.get("/api/health").json()["lobby_sockets"] == 1
            ws.send("x" * 3000)
            assert next_of(ws, "error")["code"] == "bad_message"
            ws.send(b"\x00\x01")
            assert next_of(ws, "error")["code"] == "bad_message"


@pytest.mark.limits(sockets_per_address=3)
def test_lobby_sockets_are_limited_per_address(server: Server):
    with server.client() as c:
        with contextlib.ExitStack() as stack:
            for _ in range(3):
                next_of(stack.enter_context(lobby_socket(server, c)), "lobby")
            with lobby_socket(server, c) as extra:
                assert ws_json(extra)["code"] == "too_many_sockets"


@pytest.mark.limits(seeks_per_player=100, seeks_per_minute=1000, lobby_opens_per_minute=1000)
def test_lobby_sockets_that_open_together_share_one_read_of_the_lobby(server: Server):
    with server.client() as ann, server.client() as bob:
        ids = [ann.post("/api/lobby/seeks", json=SEEK).json()["seek_id"] for _ in range(30)]
        before = ann.get("/api/health").json()["lobby_reads"]
        # 40 sockets open at once (half Ann's, half Bob's): each is sent every listed seek, and its own ones.
        who = [ann, bob] * 20
        with contextlib.ExitStack() as stack:
            socks = [stack.enter_context(lobby_socket(server, c)) for c in who]
            firsts = [next_of(ws, "lobby") for ws in socks]
        assert all({x["id"] for x in first["seeks"]} == set(ids) for first in firsts)
        assert all(set(first["mine"]) == set(ids) for c, first in zip(who, firsts) if c is ann)
        assert all(first["mine"] == [] for c, first in zip(who, firsts) if c is bob)
        reads = ann.get("/api/health").json()["lobby_reads"] - before
        # Shared: one read for the opens, and the push of the 30 seeks' changes if it came meanwhile (on
        # today's main, each open read and encoded the lobby: 40).
        assert reads <= 3, reads
        # A change is never hidden by the shared read: the next socket to open is sent the new seek.
        new = bob.post("/api/lobby/seeks", json=SEEK).json()["seek_id"]
        with lobby_socket(server, bob) as ws:
            first = next_of(ws, "lobby")
            assert new in {x["id"] for x in first["seeks"]} and first["mine"] == [new]


@pytest.mark.limits(lobby_opens_per_minute=5)
def test_lobby_socket_opens_are_rate_limited_per_address(server: Server):
    with server.client() as c:
        for _ in range(5):
            with lobby_socket(server, c) as ws:
                next_of(ws, "lobby")
        with lobby_socket(server, c) as ws:
            refused = ws_json(ws)
            assert refused["code"] == "rate_limited" and "at most 5 lobby connections a minute" in refused["message"]
            with pytest.raises(ConnectionClosed):
                ws.recv(timeout=10)
            assert ws.close_code == 4429


def test_one_clocked_game_at_a_time_from_the_pools_and_seeks(server: Server):
    """A player waiting in all four pools is paired into one game, however many others come at once: their
    other entries and real-time seeks go with the pairing, and while that game is played they can neither
    wait in a pool, nor seek or accept a real-time game (a correspondence seek is theirs to make)."""
    with contextlib.ExitStack() as stack:
        ann, bob, cat, dan = (stack.enter_context(server.client()) for _ in range(4))
        for c in (ann, bob, cat, dan):
            stack.enter_context(lobby_socket(server, c))  # in the lobby: a pool's entry waits while its player is
        entries = {}
        for pool in POOLS:
            r = ann.post("/api/lobby/quick", json={"pool": pool, "name": "Ann"})
            assert r.status_code == 201 and r.json()["status"] == "waiting", r.text
            entries[pool] = r.json()["entry_id"]
        clocked = {**SEEK, "clock": "10+60"}
        assert ann.post("/api/lobby/seeks", json=clocked).status_code == 201
        # Bob and Cat come to two of Ann's pools at the same moment: one of them plays Ann, the other waits.
        with ThreadPoolExecutor(2) as pool:
            came = list(
                pool.map(
                    lambda who: who[0].post("/api/lobby/quick", json={"pool": who[1], "name": "X"}).json(),
                    [(bob, "nintendo-3"), (cat, "nintendo-12")],
                )
            )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            views = [c.get(f"/api/lobby/quick/{e['entry_id']}").json() for c, e in zip((bob, cat), came)]
            if any(v["status"] == "paired" for v in views):
                break
            time.sleep(0.2)
        time.sleep(1.2)  # two more waves: nothing more may pair Ann
        views = [c.get(f"/api/lobby/quick/{e['entry_id']}").json() for c, e in zip((bob, cat), came)]
        assert sorted(v["status"] for v in views) == ["paired", "waiting"], views
        store = Store(server.database_url)
        owner = store.seats_of(next(v["game_id"] for v in views if v["status"] == "paired"))
        store.close()
        mine = [g for g in ann.get("/api/games").json()["games"] if g["status"] == "playing"]
        assert len(mine) == 1 and mine[0]["game_id"] == owner[0].game_id
        # Ann's other entries and her real-time seek are gone with the pairing.
        waiting = [p for p, e in entries.items() if ann.get(f"/api/lobby/quick/{e}").status_code == 200]
        assert len(waiting) == 1  # the one she was paired from
        assert ann.get("/api/lobby").json()["mine"] == {"seeks": [], "quick": []}
        # While she plays: no pool, no real-time seek, no accepting one, each refused with why.
        refused = [
            ann.post("/api/lobby/quick", json={"pool": "bga-6"}),
            ann.post("/api/lobby/seeks", json=clocked),
        ]
        dans = dan.post("/api/lobby/seeks", json=clocked).json()["seek_id"]
        refused.append(ann.post(f"/api/lobby/seeks/{dans}/accept", json={}))
        for r in refused:
            assert r.status_code == 409 and r.json()["error"] == "in_a_game", r.text
            assert "clock" in r.json()["message"]
        assert ann.post("/api/lobby/seeks", json={**SEEK, "clock": "3d"}).status_code == 201


def aborted_game(server: Server, seeker: httpx.Client, taker: httpx.Client, by: httpx.Client) -> str:
    """A game from ``seeker``'s real-time seek, accepted by ``taker`` and aborted at once by ``by``."""
    seek = seeker.post("/api/lobby/seeks", json={**SEEK, "clock": "10+60"})
    assert seek.status_code == 201, seek.text
    taken = taker.post(f"/api/lobby/seeks/{seek.json()['seek_id']}/accept", json={})
    assert taken.status_code == 201, taken.text
    game_id = taken.json()["game_id"]
    token = next(g["token"] for g in by.get("/api/games").json()["games"] if g["game_id"] == game_id)
    with connect(f"{server.ws_url}/ws/{token}") as ws:
        ws.send(json.dumps({"type": "abort"}))
        while (msg := json.loads(ws.recv(timeout=30)))["type"] != "ended":
            pass
    assert msg["ending"] == "abort"
    return game_id


def test_aborting_three_games_in_a_row_earns_a_growing_wait_before_the_next(server: Server):
    """A player who aborts three games in a row waits 5 minutes before the next seek, pool entry or accept,
    twice as long for each more; another player's aborts are not theirs, and a game played ends the row."""
    with server.client() as ann, server.client() as bob:
        ann_aborted = [aborted_game(server, ann, bob, by=ann) for _ in range(2)]
        aborted_game(server, bob, ann, by=bob)  # Bob's abort: neither adds to Ann's row nor ends it
        ann_aborted.append(aborted_game(server, bob, ann, by=ann))
        bobs = bob.post("/api/lobby/seeks", json=SEEK).json()["seek_id"]  # Bob aborted once: he may seek
        refused = [
            ann.post("/api/lobby/seeks", json=SEEK),
            ann.post("/api/lobby/quick", json={"pool": "nintendo-3"}),
            ann.post(f"/api/lobby/seeks/{bobs}/accept", json={}),
        ]
        for r in refused:
            assert r.status_code == 429 and r.json()["error"] == "abort_wait", r.text
            assert r.json()["params"] == {"aborts": 3, "minutes": 5} and "in 5 min" in r.json()["message"]
        # Five minutes later (the games' end moved back), she may; one more abort, and the wait doubles.
        store = Store(server.database_url)
        with store.engine.begin() as conn:
            conn.execute(
                update(games)
                .where(games.c.id.in_(ann_aborted))
                .values(updated=datetime.now(UTC) - timedelta(minutes=5, seconds=1))
            )
        store.close()
        ann_aborted.append(aborted_game(server, ann, bob, by=ann))
        r = ann.post("/api/lobby/seeks", json=SEEK)
        assert r.status_code == 429 and r.json()["params"] == {"aborts": 4, "minutes": 10}, r.text
        # A game played, both having moved and one resigned, ends the row.
        seek = bob.post("/api/lobby/seeks", json=SEEK).json()["seek_id"]
        taken = ann.post(f"/api/lobby/seeks/{seek}/accept", json={})
        assert taken.status_code == 429  # (not even accepting)
        store = Store(server.database_url)
        with store.engine.begin() as conn:
            conn.execute(
                update(games).where(games.c.id.in_(ann_aborted)).values(updated=datetime.now(UTC) - timedelta(hours=1))
            )
        store.close()
        game_id = ann.post(f"/api/lobby/seeks/{seek}/accept", json={}).json()["game_id"]
        tokens = {
            c: next(g["token"] for g in c.get("/api/games").json()["games"] if g["game_id"] == game_id)
            for c in (ann, bob)
        }
        moved: set[str] = set()
        while len(moved) < 2:
            for c, token in tokens.items():
                v = c.get(f"/api/seat/{token}").json()
                if v["to_move"]:
                    action = 288 if 288 in v["legal"] else v["legal"][0]
                    assert (
                        c.post(f"/api/seat/{token}/action", json={"action": action, "seq": v["seq"]}).status_code == 200
                    )
                    moved.add(token)
        with connect(f"{server.ws_url}/ws/{tokens[ann]}") as ws:
            ws.send(json.dumps({"type": "resign"}))
            while (msg := json.loads(ws.recv(timeout=30)))["type"] != "ended":
                pass
        assert msg["ending"] == "resign"
        aborted_game(server, ann, bob, by=ann)  # one abort after a game played: no wait
        assert ann.post("/api/lobby/seeks", json=SEEK).status_code == 201
