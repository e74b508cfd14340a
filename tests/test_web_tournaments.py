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


def test_a_tournament_refuses_bad_settings_and_guests_with_a_clear_error(server: Server):
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


def test_a_password_tournament_takes_only_who_knows_it(server: Server):
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
