"""Tournaments against a real server on a real database (docs/web.md, "Tournaments"): an arena made, joined,
paired, its results counted with streaks and its end; a Swiss event's rounds and byes; pausing; the page's
socket telling a player of their match; bad requests refused with a clear error and nothing changed."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from conftest import Server
from test_web_accounts import signup
from test_web_bots import bearer, make_bot
from test_web_lobby import next_of, play_out
from websockets.sync.client import connect

pytestmark = pytest.mark.server

ARENA = {"kind": "arena", "name": "Evening arena", "rules": {"preset": "nintendo"}, "hands": 1, "clock": "10+60"}


def soon(seconds: float) -> str:
    """A start time ``seconds`` from now, as a request writes it."""
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()


def until(check, timeout: float = 20.0, every: float = 0.1):
    """``check()``'s first truthy value within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(every)
    raise AssertionError("it never happened")


def seated(c: httpx.Client, tid: str) -> dict:
    """The match the player is paired into, once they are."""
    return until(lambda: (c.get(f"/api/tournaments/{tid}").json().get("me") or {}).get("game"))


def token_of(game: dict) -> str:
    return game["url"].rsplit("/", 1)[1]


def move_once(c: httpx.Client, token: str) -> None:
    """The seat makes one legal move, when it is its turn (a stop rather than a koi-koi: none here)."""
    st = until(lambda: (s := c.get(f"/api/seat/{token}").json())["to_move"] and s)
    action = st["legal"][0]
    r = c.post(f"/api/seat/{token}/action", json={"action": action, "seq": st["seq"]})
    assert r.status_code == 200, r.text


def both_move_then_resign(server: Server, players: dict[str, httpx.Client], games: dict[str, dict], loser: str):
    """Both seats of one match move (so that it is no abort), then ``loser`` resigns."""
    game_id = games[loser]["game_id"]
    seated_here = [n for n in players if games[n]["game_id"] == game_id]
    assert len(seated_here) == 2
    moved: set[str] = set()
    while moved != set(seated_here):
        for name in seated_here:
            token = token_of(games[name])
            st = players[name].get(f"/api/seat/{token}").json()
            if st["to_move"]:
                players[name].post(f"/api/seat/{token}/action", json={"action": st["legal"][0], "seq": st["seq"]})
                moved.add(name)
        time.sleep(0.05)
    with connect(f"{server.ws_url}/ws/{token_of(games[loser])}", open_timeout=30) as ws:
        ws.send(json.dumps({"type": "resign"}))
        until(lambda: players[loser].get(f"/api/seat/{token_of(games[loser])}").json()["status"] == "finished")


def test_an_arena_pairs_its_players_counts_their_results_and_streaks(server: Server):
    names = ["Ann", "Bob", "Cat", "Dan"]
    players = {n: server.client() for n in names}
    try:
        for n, c in players.items():
            assert signup(c, n).status_code in (200, 201)
        r = players["Ann"].post("/api/tournaments", json={**ARENA, "starts": soon(3), "minutes": 30, "rated": True})
        assert r.status_code == 201, r.text
        tid = r.json()["id"]
        for c in players.values():
            r = c.post(f"/api/tournaments/{tid}/join", json={})
            assert r.status_code == 200 and r.json()["joined"], r.text
        games = {n: seated(c, tid) for n, c in players.items()}
        # Everyone is paired once, into two matches of two.
        by_game: dict[str, list[str]] = {}
        for n, g in games.items():
            by_game.setdefault(g["game_id"], []).append(n)
        assert sorted(len(v) for v in by_game.values()) == [2, 2]
        # Each match's first player resigns after both have moved: the other wins 2 points.
        winners = []
        for pair in by_game.values():
            loser, winner = pair
            both_move_then_resign(server, players, games, loser)
            winners.append(winner)
        view = until(
            lambda: (
                (v := players["Ann"].get(f"/api/tournaments/{tid}").json())["standings"]["rows"][1]["score"] == 2 and v
            )
        )
        rows = view["standings"]["rows"]
        assert sorted(r["name"] for r in rows[:2]) == sorted(winners)
        assert [r["score"] for r in rows] == [2, 2, 0, 0] and [r["rank"] for r in rows] == [1, 2, 3, 4]
        assert all(r["games"] == 1 for r in rows)
        # And everyone is paired again, never with the same opponent twice in a row.
        again = {
            n: until(lambda c=c, n=n: (g := seated(c, tid))["game_id"] != games[n]["game_id"] and g)
            for n, c in players.items()
        }
        for n in names:
            other = [m for m in names if m != n and again[m]["game_id"] == again[n]["game_id"]]
            previous = [m for m in names if m != n and games[m]["game_id"] == games[n]["game_id"]]
            assert other and other != previous
        # Nothing secret in what anyone is shown: no other player's seat token, no password.
        text = players["Bob"].get(f"/api/tournaments/{tid}").text
        for n in names:
            if n != "Bob":
                assert token_of(again[n]) not in text
    finally:
        for c in players.values():
            c.close()


def test_a_tournament_refuses_bad_settings_and_guests_with_a_clear_error(sqlite_server: Server):
    server = sqlite_server  # the checks come before the database: one kind of database is enough
    with server.client() as guest, server.client() as ann:
        r = guest.post("/api/tournaments", json={**ARENA, "starts_in": 0})
        assert r.status_code == 403 and r.json()["error"] == "sign_in"
        assert signup(ann, "Ann").status_code in (200, 201)
        for bad, field in (
            ({"kind": "knockout"}, "kind"),
            ({"name": "x"}, "name"),
            ({"hands": 40}, "hands"),
            ({"clock": "3d"}, "real-time"),
            ({"minutes": 5}, "minutes"),
            ({"starts_in": -3}, "starts_in"),
            ({"access": "password"}, "password"),
            ({"rated": "yes"}, "rated"),
        ):
            r = ann.post("/api/tournaments", json={**ARENA, **bad})
            assert r.status_code == 422 and field in r.json()["message"], (bad, r.text)
        assert ann.get("/api/tournaments").json() == {"upcoming": [], "running": [], "finished": []}
        assert ann.get("/api/tournaments/nope").status_code == 404
        assert ann.post("/api/tournaments/nope/join", json={}).status_code == 404


def test_a_password_tournament_takes_only_who_knows_it(sqlite_server: Server):
    server = sqlite_server  # the password is checked before the database: one kind of database is enough
    with server.client() as ann, server.client() as bob:
        assert signup(ann, "Ann").status_code in (200, 201) and signup(bob, "Bob").status_code in (200, 201)
        r = ann.post("/api/tournaments", json={**ARENA, "access": "password", "password": "sakura", "starts_in": 30})
        assert r.status_code == 201, r.text
        tid = r.json()["id"]
        assert "sakura" not in bob.get(f"/api/tournaments/{tid}").text
        r = bob.post(f"/api/tournaments/{tid}/join", json={"password": "ume"})
        assert r.status_code == 403 and r.json()["error"] == "wrong_password"
        assert bob.get(f"/api/tournaments/{tid}").json()["tournament"]["players"] == 0
        assert bob.post(f"/api/tournaments/{tid}/join", json={"password": "sakura"}).status_code == 200
        assert bob.get(f"/api/tournaments/{tid}").json()["tournament"]["players"] == 1


def test_a_swiss_event_pairs_its_rounds_gives_a_bye_and_ends_with_its_last(server: Server):
    names = ["Ann", "Bob", "Cat"]
    players = {n: server.client() for n in names}
    try:
        for n, c in players.items():
            assert signup(c, n).status_code in (200, 201)
        swiss = {**ARENA, "kind": "swiss", "name": "Three-player Swiss", "rounds": 2, "starts": soon(3)}
        swiss.pop("minutes", None)
        r = players["Ann"].post("/api/tournaments", json=swiss)
        assert r.status_code == 201, r.text
        tid = r.json()["id"]
        for c in players.values():
            assert c.post(f"/api/tournaments/{tid}/join", json={}).status_code == 200
        byes: list[str] = []
        met: list[frozenset[str]] = []
        for round_number in (1, 2):

            def in_round(r: int = round_number) -> dict | None:
                v = players["Ann"].get(f"/api/tournaments/{tid}").json()
                return v if v["tournament"]["round"] == r else None

            view = until(in_round)
            assert view["tournament"]["status"] == "running"
            games = {n: (c.get(f"/api/tournaments/{tid}").json()["me"] or {}).get("game") for n, c in players.items()}
            seated_now = [n for n, g in games.items() if g]
            (bye,) = [n for n in names if n not in seated_now]  # three players: one pair and a bye each round
            byes.append(bye)
            met.append(frozenset(seated_now))
            a, b = seated_now
            assert games[a]["game_id"] == games[b]["game_id"]
            play_out(server, {0: token_of(games[a]), 1: token_of(games[b])})
        assert byes[0] != byes[1] and met[0] != met[1]  # no second bye, nobody met twice
        view = until(
            lambda: (
                (v := players["Bob"].get(f"/api/tournaments/{tid}").json())["tournament"]["status"] == "finished" and v
            )
        )
        rows = view["standings"]["rows"]
        assert [r["rank"] for r in rows] == [1, 2, 3] and len(view["podium"]) == 3
        assert sum(r["byes"] for r in rows) == 2 and sum(r["games"] for r in rows) == 4
        assert sum(r["points"] for r in rows) == 4  # two byes and two matches of one point each
        assert [r["points"] for r in rows] == sorted((r["points"] for r in rows), reverse=True)
        assert players["Cat"].post(f"/api/tournaments/{tid}/join", json={}).json()["error"] == "tournament_over"
    finally:
        for c in players.values():
            c.close()


def test_a_bot_joins_a_tournament_that_allows_bots_and_no_other(server: Server):
    with server.client() as ann:
        assert signup(ann, "Ann").status_code in (200, 201)
        token = make_bot(ann, "Robo")
        people = ann.post("/api/tournaments", json={**ARENA, "starts_in": 30, "minutes": 30}).json()["id"]
        bots = ann.post("/api/tournaments", json={**ARENA, "starts_in": 30, "minutes": 30, "bots": True}).json()["id"]
        r = httpx.post(f"{server.url}/api/bot/tournaments/{people}/join", headers=bearer(token), json={})
        assert r.status_code == 403 and r.json()["error"] == "no_bots"
        r = httpx.post(f"{server.url}/api/bot/tournaments/{bots}/join", headers=bearer(token), json={})
        assert r.status_code == 200, r.text
        rows = ann.get(f"/api/tournaments/{bots}").json()["standings"]["rows"]
        assert [(row["name"], row["bot"]) for row in rows] == [("Robo", True)]
        # A bot's token opens the bot API alone; a person's join there is refused.
        assert httpx.post(f"{server.url}/api/bot/tournaments/{bots}/join", json={}).status_code == 401
        listed = ann.get("/api/players/Robo/tournaments").json()["tournaments"]
        assert [t["id"] for t in listed] == [bots]


def test_berserk_halves_ones_own_bank_once_before_ones_first_decision(server: Server):
    with server.client() as ann, server.client() as bob:
        for c, n in ((ann, "Ann"), (bob, "Bob")):
            assert signup(c, n).status_code in (200, 201)
        r = ann.post("/api/tournaments", json={**ARENA, "starts": soon(3), "minutes": 30, "berserk": True})
        tid = r.json()["id"]
        for c in (ann, bob):
            assert c.post(f"/api/tournaments/{tid}/join", json={}).status_code == 200
        games = {"Ann": seated(ann, tid), "Bob": seated(bob, tid)}
        tokens = {n: token_of(g) for n, g in games.items()}
        clients = {"Ann": ann, "Bob": bob}
        info = ann.get(f"/api/play/{tokens['Ann']}/tournament").json()["tournament"]
        assert info["id"] == tid and info["can_berserk"] and info["url"] == f"/tournament/{tid}"
        seat = ann.get(f"/api/seat/{tokens['Ann']}").json()
        mine = seat["seat"]
        assert seat["clock"]["banks"] == [60.0, 60.0]  # ARENA's clock: 10 s a decision + 60 s in the bank
        r = ann.post(f"/api/play/{tokens['Ann']}/berserk")
        assert r.status_code == 200, r.text
        banks = until(lambda: (b := ann.get(f"/api/seat/{tokens['Ann']}").json()["clock"]["banks"])[mine] < 60 and b)
        assert banks[mine] == 30.0 and banks[1 - mine] == 60.0
        assert ann.post(f"/api/play/{tokens['Ann']}/berserk").json()["error"] == "berserk_already"
        assert not ann.get(f"/api/play/{tokens['Ann']}/tournament").json()["tournament"]["can_berserk"]
        # Bob moves first or second: once he has decided, it is too late for him.
        while True:
            st = bob.get(f"/api/seat/{tokens['Bob']}").json()
            if st["to_move"]:
                bob.post(f"/api/seat/{tokens['Bob']}/action", json={"action": st["legal"][0], "seq": st["seq"]})
                break
            other = clients["Ann"].get(f"/api/seat/{tokens['Ann']}").json()
            if other["to_move"]:
                ann.post(f"/api/seat/{tokens['Ann']}/action", json={"action": other["legal"][0], "seq": other["seq"]})
        assert bob.post(f"/api/play/{tokens['Bob']}/berserk").json()["error"] == "berserk_late"
        # Nobody else's seat: a token that is not a seat's is refused.
        assert ann.post("/api/play/not-a-token/berserk").status_code in (403, 404)


def tournament_socket(server: Server, c: httpx.Client | None, tid: str):
    headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in c.cookies.items())} if c is not None else {}
    return connect(f"{server.ws_url}/ws/tournament/{tid}", additional_headers=headers, open_timeout=30)


def test_the_tournament_chat_is_written_by_accounts_read_by_all_and_reported(server: Server):
    with server.client() as ann, server.client() as bob, server.client() as guest:
        for c, n in ((ann, "Ann"), (bob, "Bob")):
            assert signup(c, n).status_code in (200, 201)
        tid = ann.post("/api/tournaments", json={**ARENA, "starts_in": 30}).json()["id"]
        guest.get("/tournaments")  # a guest's browser cookie
        with (
            tournament_socket(server, ann, tid) as wa,
            tournament_socket(server, bob, tid) as wb,
            tournament_socket(server, guest, tid) as wg,
        ):
            for ws, writes in ((wa, True), (wb, True), (wg, False)):
                hello = next_of(ws, "chat")
                assert hello["history"] and hello["messages"] == [] and hello["can_chat"] is writes
            wa.send(json.dumps({"type": "chat", "text": "  Good luck <b>all</b>  "}))
            for ws in (wa, wb, wg):
                (m,) = next_of(ws, "chat")["messages"]
                assert m["name"] == "Ann" and m["text"] == "Good luck <b>all</b>" and m["room"] == "tournament"
                assert "author" not in m
            wb.send(json.dumps({"type": "chat", "phrase": "good_luck"}))
            assert next_of(wa, "chat")["messages"][0]["phrase"] == "good_luck"
            # A guest reads, and cannot write; nonsense is refused with a reason; nothing is kept of either.
            wg.send(json.dumps({"type": "chat", "text": "hi"}))
            assert next_of(wg, "error")["code"] == "sign_in"
            wa.send(json.dumps({"type": "chat", "text": "x" * 300}))
            assert next_of(wa, "error")["code"] == "chat_too_long"
            wa.send(json.dumps({"type": "chat", "text": "a", "phrase": "hello"}))
            assert next_of(wa, "error")["code"] == "bad_chat"
            wa.send(json.dumps({"type": "dance"}))
            assert next_of(wa, "error")["code"] == "bad_message"
            # Bob reports Ann's message once; a message of another room is none of this room's.
            wb.send(json.dumps({"type": "report", "id": m["id"]}))
            assert next_of(wb, "reported")["id"] == m["id"]
            wb.send(json.dumps({"type": "report", "id": m["id"]}))
            assert next_of(wb, "error")["code"] == "already_reported"
            wb.send(json.dumps({"type": "report", "id": 10**9}))
            assert next_of(wb, "error")["code"] == "no_message"
        # A page that opens later gets the room's history.
        with tournament_socket(server, guest, tid) as wg:
            texts = [x.get("text") or x.get("phrase") for x in next_of(wg, "chat")["messages"]]
            assert texts == ["Good luck <b>all</b>", "good_luck"]


def test_a_change_reaches_the_players_own_line_first_and_then_every_page(sqlite_server: Server):
    """A push sends a player's own line (small, what they wait for after a result) before the pages of the
    standings, which go to every socket and come at most every PAGES_EVERY seconds; both come."""
    server = sqlite_server
    with server.client() as ann, server.client() as bob, server.client() as guest:
        for c, n in ((ann, "Ann"), (bob, "Bob")):
            assert signup(c, n).status_code in (200, 201)
        tid = ann.post("/api/tournaments", json={**ARENA, "starts_in": 60}).json()["id"]
        for c in (ann, bob):
            assert c.post(f"/api/tournaments/{tid}/join", json={}).json()["joined"]
        guest.get("/tournaments")
        with tournament_socket(server, ann, tid) as wa, tournament_socket(server, guest, tid) as wg:
            assert next_of(wa, "tournament")["me"]["paused"] is False
            next_of(wg, "tournament")
            assert ann.post(f"/api/tournaments/{tid}/pause").json()["paused"]
            seen = []
            while True:
                msg = json.loads(wa.recv(timeout=30))
                seen.append(msg["type"])
                if msg["type"] == "me":
                    assert msg["me"]["paused"] is True
                if msg["type"] == "tournament" and any(r["paused"] for r in msg["standings"]["rows"]):
                    break
            assert "me" in seen and seen.index("me") < len(seen) - 1, seen
            page = next_of(wg, "tournament")
            while not any(r["paused"] for r in page["standings"]["rows"]):
                page = next_of(wg, "tournament")
            assert page["me"] is None and {r["name"] for r in page["standings"]["rows"]} == {"Ann", "Bob"}
