"""How games end besides their last hand, at a real server on a real database (docs/web.md, "Leaving a
game" and "Time controls"): what abort, resign and a rematch do to ratings; "the computer plays my move"
when a casual game's clock runs out; invitations nobody took and casual games nobody moves in, ended by
the server's own sweep."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from conftest import Server
from sqlalchemy import select, update
from test_web_accounts import signup
from test_web_clocks import (
    QUICK,
    both_move_once,
    clocked_server,
    friend_game,
    reply_of,
    state_of,
    table_now,
)
from websockets.sync.client import ClientConnection, connect

from koikoi.web.schema import games, invitations
from koikoi.web.store import RATED_GAMES_A_PAIR, Store

RATED = {"rules": {"preset": "nintendo"}, "hands": 1, "rated": True, "clock": "20+120"}
NO_SHOW = "3+2"  # a test-only control (koikoi serve --time-control) whose first move's time runs out soon


def ratings(server: Server, name: str) -> dict:
    with server.client() as c:
        # No entry until a first rated match in the category.
        return c.get(f"/api/players/{name}").json()["ratings"].get("short", {"games": 0})


def rated_game(server: Server, ann: httpx.Client, bob: httpx.Client, clock: str = RATED["clock"]) -> dict[str, str]:
    """A rated lobby game between Ann's seek and Bob, who accepts it: each one's seat token."""
    r = ann.post("/api/lobby/seeks", json={**RATED, "clock": clock})
    assert r.status_code == 201, r.text
    taken = bob.post(f"/api/lobby/seeks/{r.json()['seek_id']}/accept", json={}).json()
    store = Store(server.database_url)
    ann_seat = next(s for s in store.seats_of(taken["game_id"]) if s.token != taken["token"])
    store.close()
    return {"ann": ann_seat.token, "bob": taken["token"]}


def seated(server: Server, tokens: dict[str, str]) -> dict[str, int]:
    with httpx.Client(base_url=server.url) as c:
        return {who: c.get(f"/api/seat/{t}").json()["seat"] for who, t in tokens.items()}


@contextmanager
def resigned_by_bob(
    server: Server, tokens: dict[str, str], finished=lambda s: s["status"] == "finished"
) -> Iterator[tuple[dict[str, int], ClientConnection, ClientConnection, dict]]:
    """The rated game ``tokens`` played until both have moved, then resigned by Bob (a loss, not an
    abort): its seats, Ann's and Bob's open sockets, and Ann's first finished table for which
    ``finished`` holds."""
    seats = seated(server, tokens)
    with connect(f"{server.ws_url}/ws/{tokens['ann']}") as wa, connect(f"{server.ws_url}/ws/{tokens['bob']}") as wb:
        both_move_once({seats["ann"]: wa, seats["bob"]: wb})
        wb.send(json.dumps({"type": "resign"}))
        assert reply_of(wb, "ended")["ending"] == "resign"
        yield seats, wa, wb, table_now(wa, finished)


def rating_said(st: dict) -> bool:
    """A finished table that says what the game did to the ratings."""
    return st["status"] == "finished" and st["rating"] is not None


def test_abort_rates_nobody_resign_rates_the_leaver_and_a_rated_rematch_is_rated(server: Server):
    with server.client() as ann, server.client() as bob:
        assert signup(ann, "AnnE").status_code == 201 and signup(bob, "BobE").status_code == 201
        # Aborted before both moved: no result, no rating.
        tokens = rated_game(server, ann, bob)
        with connect(f"{server.ws_url}/ws/{tokens['ann']}") as ws:
            assert state_of(ws)["can_abort"]
            ws.send(json.dumps({"type": "abort"}))
            assert reply_of(ws, "ended")["ending"] == "abort"
            assert table_now(ws, lambda s: s["status"] == "finished")["rematch"] is None  # nothing to play again
        assert ratings(server, "AnnE")["games"] == 0 and ratings(server, "BobE")["games"] == 0
        # Resigned after both moved: the leaver's loss counts.
        tokens = rated_game(server, ann, bob)
        with resigned_by_bob(server, tokens) as (seats, wa, wb, st):
            assert st["ending"] == {"reason": "resign", "winner": seats["ann"]}
            a, b = ratings(server, "AnnE"), ratings(server, "BobE")
            assert a["games"] == 1 and b["games"] == 1 and a["rating"] > 1500 > b["rating"]
            # The rematch, offered by the loser and taken by the winner, is rated too.
            wb.send(json.dumps({"type": "rematch"}))
            assert reply_of(wb, "rematch")["token"] is None
            assert table_now(wa, lambda s: (s["rematch"] or {}).get("offered_by") == seats["bob"])
            wa.send(json.dumps({"type": "rematch"}))
            ann_new = reply_of(wa, "rematch")["token"]
            wb.send(json.dumps({"type": "rematch"}))  # asked again once it is made: Bob's seat in it
            bob_new = reply_of(wb, "rematch")["token"]
        with connect(f"{server.ws_url}/ws/{ann_new}") as wa, connect(f"{server.ws_url}/ws/{bob_new}") as wb:
            st = state_of(wa)
            assert st["seat"] == 1 - seats["ann"] and st["status"] == "playing"  # the seats swapped
            both_move_once({st["seat"]: wa, 1 - st["seat"]: wb})
            wa.send(json.dumps({"type": "resign"}))
            assert reply_of(wa, "ended")["ending"] == "resign"
        a, b = ratings(server, "AnnE"), ratings(server, "BobE")
        assert a["games"] == 2 and b["games"] == 2


def move_first(ws) -> dict:
    """The player on ``ws``, to move, makes their first turn (a card played, and the choice a drawn card
    that matches two on the table asks for): the table once it is the other player's turn."""
    st = state_of(ws, lambda s: s["to_move"])
    me = st["current_player"]
    while st["current_player"] == me and st["status"] == "playing":
        action = 288 if 288 in st["legal"] else st["legal"][0]  # koi-koi: a stop would end the one-hand match
        ws.send(json.dumps({"type": "action", "action": action, "seq": st["seq"]}))
        st = state_of(ws, lambda s, seq=st["seq"]: s["seq"] > seq)
    return st


def test_a_rated_game_nobody_played_is_not_rated(server: Server):
    """A rating moves only for a game both players played: before both have moved, a resignation is an
    abort, whoever resigns, so two accounts cannot trade rated wins without playing (issue 43: one went
    from 1500 to 2306 in 30 such games)."""
    with server.client() as ann, server.client() as bob:
        assert signup(ann, "AnnF").status_code == 201 and signup(bob, "BobF").status_code == 201
        for n in range(4):  # (each aborts twice at most: a third in a row would make them wait to seek)
            tokens = rated_game(server, ann, bob)
            seats = seated(server, tokens)
            with (
                connect(f"{server.ws_url}/ws/{tokens['ann']}") as wa,
                connect(f"{server.ws_url}/ws/{tokens['bob']}") as wb,
            ):
                by_seat = {seats["ann"]: wa, seats["bob"]: wb}
                first = state_of(wa)["current_player"]
                if n < 2:  # nobody has moved: Ann or Bob resigns
                    quitter = (wa, wb)[n % 2]
                else:  # the first player has moved, the other not yet: either resigns
                    move_first(by_seat[first])
                    quitter = by_seat[first] if n == 2 else by_seat[1 - first]
                quitter.send(json.dumps({"type": "resign"}))
                assert reply_of(quitter, "ended")["ending"] == "abort"
                for ws in (wa, wb):
                    st = table_now(ws, lambda s: s["status"] == "finished")
                    assert st["ending"] == {"reason": "abort", "winner": None} and st["rematch"] is None
        assert ratings(server, "AnnF")["games"] == 0 and ratings(server, "BobF")["games"] == 0
        with server.client() as c:
            played = c.get("/api/players/AnnF").json()
        assert played["ratings"] == {}, played


@pytest.mark.server
def test_a_player_who_never_moves_has_the_game_aborted_not_lost(database_url, tmp_path):
    """A rated game whose player to move never makes a first move is aborted when their first move's time
    is up (the test clock's own time here, 3 + 2 s, and 3 s more for the deal; 30 s on the standard
    ones): no result, no rating, and both are told who did not come. The same for the second player's
    first move. (The quick test clock's 2 s a move could run out on a loaded machine before the first
    player here has made theirs.)"""
    s = Server(database_url, tmp_path, "--time-control", NO_SHOW)
    s.start()
    try:
        with s.client() as ann, s.client() as bob:
            assert signup(ann, "AnnN").status_code == 201 and signup(bob, "BobN").status_code == 201
            for moved in (0, 1):  # nobody moves; the first player moves and the second does not
                tokens = rated_game(s, ann, bob, NO_SHOW)
                seats = seated(s, tokens)
                with connect(f"{s.ws_url}/ws/{tokens['ann']}") as wa, connect(f"{s.ws_url}/ws/{tokens['bob']}") as wb:
                    by_seat = {seats["ann"]: wa, seats["bob"]: wb}
                    first = state_of(wa)["current_player"]
                    absent = first
                    if moved:
                        absent = move_first(by_seat[first])["current_player"]
                        assert absent == 1 - first
                    for ws in (wa, wb):
                        over = state_of(ws, lambda st: st["status"] == "finished", timeout=30)
                        assert over["ending"] == {"reason": "abort", "winner": None, "no_show": absent}
                        assert over["clock"]["flagged"] and over["rematch"] is None
                # The one who did not come aborted it: their row of aborts grows (test_web_lobby.py).
                store = Store(database_url)
                with store.engine.connect() as conn:
                    game_id = httpx.get(f"{s.url}/api/seat/{tokens['ann']}").json()["game_id"]
                    row = conn.execute(select(games.c.aborted_by).where(games.c.id == game_id)).one()
                store.close()
                assert row.aborted_by == absent
        assert ratings(s, "AnnN")["games"] == 0 and ratings(s, "BobN")["games"] == 0
    finally:
        s.stop(hard=False)


@pytest.mark.server
def test_the_computer_plays_a_casual_players_move_when_their_time_runs_out(database_url, tmp_path):
    s = clocked_server(database_url, tmp_path)
    try:
        with s.client() as host, s.client() as guest:
            game, guest_token = friend_game(host, guest, QUICK, on_time="computer")
            with connect(f"{s.ws_url}/ws/{game['token']}") as ws0, connect(f"{s.ws_url}/ws/{guest_token}") as ws1:
                first = state_of(ws0)
                assert first["clock"]["on_time"] == "computer"
                # Nobody moves: the server moves for whoever is to move, and the match goes on.
                for ws in (ws0, ws1):
                    moved = state_of(ws, lambda st: st["seq"] > first["seq"], timeout=30)
                    assert moved["status"] == "playing" and moved["ending"] is None
                    assert not moved["clock"]["flagged"]
    finally:
        s.stop(hard=False)


def test_unused_invitations_expire_and_idle_casual_games_close(server: Server):
    with server.client() as host, server.client() as guest, server.client() as ann, server.client() as bob:
        waiting = host.post("/api/games", json={"opponent": "friend", "name": "Host"}).json()
        idle, _ = friend_game_without_clock(host, guest)
        fresh, _ = friend_game_without_clock(host, guest)
        assert signup(ann, "AnnX").status_code == 201 and signup(bob, "BobX").status_code == 201
        rated = rated_game(server, ann, bob)
        with httpx.Client(base_url=server.url) as c:
            rated_id = c.get(f"/api/seat/{rated['ann']}").json()["game_id"]
        store = Store(server.database_url)
        long_ago = datetime.now(UTC) - timedelta(days=31)
        with store.engine.begin() as conn:
            conn.execute(
                update(invitations)
                .where(invitations.c.game_id == waiting["game_id"])
                .values(created=datetime.now(UTC) - timedelta(hours=25))
            )
            conn.execute(update(games).where(games.c.id == idle["game_id"]).values(updated=long_ago))
            conn.execute(update(games).where(games.c.id == rated_id).values(updated=long_ago))
        store.close()
        server.restart()  # the server's sweep runs at its start, then every minute
        with httpx.Client(base_url=server.url) as c:

            def view(token: str) -> dict:
                return c.get(f"/api/seat/{token}").json()

            # The sweep runs within a second of the start: wait for its first end, then look at them all.
            deadline = time.monotonic() + 30
            while view(waiting["token"])["ending"] is None and time.monotonic() < deadline:
                time.sleep(0.2)
            assert view(waiting["token"])["ending"] == {"reason": "expired", "winner": None}
            assert view(idle["token"])["ending"] == {"reason": "closed", "winner": None}
            assert view(fresh["token"])["status"] == "playing"  # moved in lately
            assert view(rated["ann"])["status"] == "playing"  # a rated game is for its clock to end
            r = guest.post(f"/api/invite/{waiting['invite_token']}/join", json={"name": "Late"})
            assert r.status_code == 410 and r.json()["error"] == "invite_expired", r.text


def friend_game_without_clock(host: httpx.Client, guest: httpx.Client) -> tuple[dict, str]:
    r = host.post("/api/games", json={"opponent": "friend", "name": "Host"})
    assert r.status_code == 201, r.text
    game = r.json()
    r = guest.post(f"/api/invite/{game['invite_token']}/join", json={"name": "Guest"})
    assert r.status_code == 200, r.text
    return game, r.json()["token"]


def test_a_match_ended_early_has_its_record_replay_and_review(server: Server):
    """Over is over: a resigned match keeps nothing hidden, so its players may download, replay and review
    it, and anyone may replay it, the record saying how it ended."""
    from koikoi.records import GameRecord, replay

    with server.client() as host, server.client() as guest, server.client() as stranger:
        game, guest_token = friend_game_without_clock(host, guest)
        gid = game["game_id"]
        with connect(f"{server.ws_url}/ws/{game['token']}") as w0, connect(f"{server.ws_url}/ws/{guest_token}") as w1:
            both_move_once({0: w0, 1: w1})
            r = host.get(f"/api/games/{gid}/record", params={"token": game["token"]})
            assert r.status_code == 403 and r.json()["error"] == "not_finished"  # not while it is played
            assert stranger.get(f"/api/games/{gid}/replay").json()["error"] == "not_finished"
            w1.send(json.dumps({"type": "resign"}))
            assert reply_of(w1, "ended")["ending"] == "resign"
        r = host.get(f"/api/games/{gid}/record", params={"token": game["token"]})
        assert r.status_code == 200, r.text
        rec = GameRecord.from_json(r.text)
        assert rec.metadata["ending"] == "resign" and rec.metadata["winner"] == 0
        m = replay(rec)  # the actions up to the resignation, each legal
        assert not m.is_over() and len(m.actions) >= 2
        mine = host.get(f"/api/games/{gid}/replay", params={"token": game["token"]})
        public = stranger.get(f"/api/games/{gid}/replay")
        assert mine.status_code == public.status_code == 200
        assert len(public.json()["frames"]) == len(m.actions) + 1
        r = guest.post(f"/api/games/{gid}/review", params={"token": guest_token})
        assert r.status_code in (200, 202), r.text
        deadline = time.monotonic() + 300
        while (st := guest.get(f"/api/games/{gid}/review", params={"token": guest_token}).json())[
            "status"
        ] == "running":
            assert time.monotonic() < deadline, st
            time.sleep(0.5)
        assert st["status"] == "done", st


def test_rated_games_between_the_same_two_accounts_count_a_few_times_a_day(server: Server):
    """At most RATED_GAMES_A_PAIR rated games between the same two accounts count in any 24 hours: the
    next ones are played and finished as any other, and move no rating (docs/web.md, "Ratings"), so two
    accounts cannot farm a rating from each other. A game with someone else still counts."""
    with server.client() as ann, server.client() as bob, server.client() as cat:
        for c, name in ((ann, "AnnP"), (bob, "BobP"), (cat, "CatP")):
            assert signup(c, name).status_code == 201
        for n in range(RATED_GAMES_A_PAIR + 1):
            tokens = rated_game(server, ann, bob)
            with resigned_by_bob(server, tokens, rating_said) as (seats, _wa, _wb, st):
                assert st["ending"] == {"reason": "resign", "winner": seats["ann"]}
                # The result says what the game did to both ratings; past the pair's count, that it did nothing.
                if n < RATED_GAMES_A_PAIR:
                    ann_r, bob_r = st["rating"]["players"][seats["ann"]], st["rating"]["players"][seats["bob"]]
                    assert (
                        st["rating"]["counted"]
                        and ann_r["after"] > ann_r["before"]
                        and bob_r["after"] < bob_r["before"]
                    )
                    assert ann_r["after"] == round(ratings(server, "AnnP")["rating"])
                else:
                    assert st["rating"] == {"counted": False}
            counted = min(n + 1, RATED_GAMES_A_PAIR)
            assert ratings(server, "AnnP")["games"] == counted and ratings(server, "BobP")["games"] == counted
        before = ratings(server, "AnnP")
        # Cat against Ann: a new pair, which counts.
        tokens = rated_game(server, cat, ann)
        seats = seated(server, tokens)
        with connect(f"{server.ws_url}/ws/{tokens['ann']}") as wc, connect(f"{server.ws_url}/ws/{tokens['bob']}") as wa:
            both_move_once({seats["ann"]: wc, seats["bob"]: wa})
            wa.send(json.dumps({"type": "resign"}))
            assert reply_of(wa, "ended")["ending"] == "resign"
        assert ratings(server, "AnnP")["games"] == before["games"] + 1 and ratings(server, "CatP")["games"] == 1


def test_a_game_won_early_is_won_on_every_page_and_an_abort_has_no_result(server: Server):
    """One source of truth for a game's result (koikoi.web.store.result_for): a game resigned at 0-0 is won
    by the one who stayed on the player page, the API and the Replays page alike, never a draw; an aborted
    one has no result."""
    with server.client() as ann, server.client() as bob:
        assert signup(ann, "AnnR").status_code == 201 and signup(bob, "BobR").status_code == 201
        aborted = rated_game(server, ann, bob)
        with connect(f"{server.ws_url}/ws/{aborted['bob']}") as wb:
            wb.send(json.dumps({"type": "abort"}))
            assert reply_of(wb, "ended")["ending"] == "abort"
        tokens = rated_game(server, ann, bob)
        with resigned_by_bob(server, tokens) as (_seats, _wa, _wb, st):
            assert st["scores"] == [0, 0]  # won at 0-0
        with httpx.Client(base_url=server.url) as c:
            resigned_id = c.get(f"/api/seat/{tokens['ann']}").json()["game_id"]
            aborted_id = c.get(f"/api/seat/{aborted['ann']}").json()["game_id"]
        for who, client, mine in (("AnnR", ann, "won"), ("BobR", bob, "lost")):
            recent = {g["game_id"]: g for g in client.get(f"/api/players/{who}").json()["recent"]}
            assert recent[resigned_id]["result"] == mine and recent[aborted_id]["result"] is None
            page = client.get(f"/@/{who}?lang=en").text
            shown = {"won": "Won", "lost": "Lost"}[mine]
            assert f'data-game="{resigned_id}" data-status="finished" data-result="{mine}"' in page
            item = page.split(f'data-game="{resigned_id}"', 1)[1].split("</li>", 1)[0]
            assert f'<span class="outcome">{shown}</span>' in item, item
            item = page.split(f'data-game="{aborted_id}"', 1)[1].split("</li>", 1)[0]
            assert '<span class="outcome">No result</span>' in item, item
            replays = client.get("/replay?lang=en").text
            assert f'data-game="{resigned_id}" data-result="{mine}"' in replays
