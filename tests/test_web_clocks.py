"""Clocks, leaving and rematches at a real server over real sockets (docs/web.md, "Time controls" and
"Leaving a game"): a clock that runs out loses the match, decided by the server; a server that was down
flags nobody for its outage; abort before both have moved, resign after; a claim against a player who
left on their own turn, sooner after a closed tab; a rematch with the seats swapped."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from conftest import Server, limit_args
from websockets.sync.client import connect

from koikoi.clocks import time_control
from koikoi.web.store import Store
from koikoi.web.tablestore import OUTAGE, TableStore

pytestmark = pytest.mark.server  # every test here starts server processes of its own

QUICK = "2+1"  # a test-only control (koikoi serve --time-control): 2 s a decision, 1 s in the bank
SLOW = "20+120"


def clocked_server(database_url: str, tmp_path, **limits) -> Server:
    s = Server(database_url, tmp_path, "--time-control", QUICK, *limit_args(**limits))
    s.start()
    return s


def friend_game(host: httpx.Client, guest: httpx.Client, clock: str, **extra) -> tuple[dict, str]:
    """A friend game with ``clock`` that the guest has joined: the host's creation and the guest's token."""
    r = host.post("/api/games", json={"opponent": "friend", "name": "Host", "clock": clock, **extra})
    assert r.status_code == 201, r.text
    game = r.json()
    r = guest.post(f"/api/invite/{game['invite_token']}/join", json={"name": "Guest"})
    assert r.status_code == 200, r.text
    return game, r.json()["token"]


def state_of(ws, check=lambda s: True, timeout: float = 30) -> dict:
    """The first table on the socket for which ``check`` holds (answers to other messages are skipped)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
        if msg["type"] == "state" and check(msg["state"]):
            return msg["state"]
    raise AssertionError("no such table came")


def reply_of(ws, kind: str, timeout: float = 30) -> dict:
    """The next message of type ``kind`` (an answer, an error): tables and acknowledgements are skipped."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
        if msg["type"] == kind:
            return msg
    raise AssertionError(f"no {kind}")


def table_now(ws, check=lambda s: True) -> dict:
    """Ask for the table (the broadcast of a change may have come before the answer to the request)."""
    ws.send(json.dumps({"type": "state"}))
    return state_of(ws, check)


def play_first_legal(ws, state: dict) -> None:
    ws.send(json.dumps({"type": "action", "action": state["legal"][0], "seq": state["seq"]}))


def both_move_once(sockets: dict[int, object]) -> dict:
    """Moves until each seat has made at least one move; the last table seen on seat 0's socket."""
    moved: set[int] = set()
    state = state_of(sockets[0])
    while len(moved) < 2:
        mover = state["current_player"]
        ws = sockets[mover]
        seq = state["seq"]
        mine = state if mover == 0 else state_of(ws, lambda s, seq=seq: s["seq"] == seq and s["to_move"])
        play_first_legal(ws, mine)
        moved.add(mover)
        state = state_of(sockets[0], lambda s, seq=state["seq"]: s["seq"] > seq)
    return state


def test_a_clock_that_runs_out_loses_the_match(database_url, tmp_path):
    s = clocked_server(database_url, tmp_path)
    try:
        with s.client() as host, s.client() as guest:
            game, guest_token = friend_game(host, guest, QUICK)
            with connect(f"{s.ws_url}/ws/{game['token']}") as ws0, connect(f"{s.ws_url}/ws/{guest_token}") as ws1:
                first = state_of(ws0)
                clock = first["clock"]
                assert clock["control"] == QUICK and clock["banks"] == [1.0, 1.0] and clock["to_move"] in (0, 1)
                assert 0 < clock["left"] <= 2 + 2 + 1  # the first decision's break, its own time, the bank
                # Both move (a player who never moved would have the game aborted), then nobody: the server
                # ends the match on time, and tells both.
                last = both_move_once({0: ws0, 1: ws1})
                loser = last["current_player"]
                for ws in (ws0, ws1):
                    ended = state_of(ws, lambda st: st["status"] == "finished", timeout=30)
                    assert ended["ending"] == {"reason": "time", "winner": 1 - loser}
                    assert ended["match_over"] and ended["match_winner"] == 1 - loser
                    assert ended["legal"] == [] and not ended["to_move"] and ended["clock"]["flagged"]
                ws = ws0 if loser == 0 else ws1
                ws.send(json.dumps({"type": "action", "action": 0, "seq": last["seq"]}))
                assert reply_of(ws, "error")["code"] == "over"
            listed = {g["game_id"]: g for g in host.get("/api/games").json()["games"]}
            assert listed[game["game_id"]]["status"] == "finished"
        # Decided once, in the database: the deadline that ran out is kept.
        store = Store(database_url)
        g = store.game(game["game_id"])
        c = TableStore(store).clock_of(game["game_id"])
        assert (g.status, g.ending, g.winner) == ("finished", "time", 1 - loser)
        assert c is not None and c.deadline is None and c.flagged is not None
        store.close()
    finally:
        s.stop(hard=False)


def test_a_server_that_was_down_flags_nobody_for_its_outage(database_url, tmp_path):
    s = clocked_server(database_url, tmp_path)
    try:
        with s.client() as host, s.client() as guest:
            game, _ = friend_game(host, guest, QUICK)
            s.stop()  # a crash, at once: the game's clock has about 5 s left
            time.sleep(OUTAGE + 6)  # past its deadline, while no server ran
            s.start()
            r = host.get("/api/games").json()["games"]
            assert [g["status"] for g in r if g["game_id"] == game["game_id"]] == ["playing"]
            with connect(f"{s.ws_url}/ws/{game['token']}") as ws:
                st = state_of(ws)
                assert st["status"] == "playing" and st["clock"]["left"] > 0
                # ... and the clock runs on from where the outage stopped it (nobody has moved: an abort).
                assert state_of(ws, lambda x: x["status"] == "finished", timeout=30)["ending"]["reason"] == "abort"
    finally:
        s.stop(hard=False)


def test_a_short_restart_flags_nobody(database_url, tmp_path):
    """A restart shorter than an outage (kill -9 on SQLite, SIGTERM on PostgreSQL, then a start at once) is
    not charged to the player to move: the new process makes good the whole time since the last sign of
    life of any."""
    hard = "://" not in database_url  # a plain path: SQLite
    s = Server(database_url, tmp_path, "--time-control", "3+1")
    s.start()
    store = Store(database_url)
    try:
        with s.client() as host, s.client() as guest:
            game, guest_token = friend_game(host, guest, "3+1")
            tokens = {0: game["token"], 1: guest_token}
            with connect(f"{s.ws_url}/ws/{tokens[0]}") as ws0, connect(f"{s.ws_url}/ws/{tokens[1]}") as ws1:
                mover = both_move_once({0: ws0, 1: ws1})["current_player"]  # a move now can lose on time
            before = TableStore(store).clock_of(game["game_id"])
            assert before is not None and before.deadline is not None
            s.stop(hard=hard)
            down = time.monotonic()
            time.sleep(2.5)  # less than an outage (OUTAGE, 4 s): no process serves, the mover has < 4 s left
            s.start()
            after = TableStore(store).clock_of(game["game_id"])
            assert after is not None and after.deadline is not None and after.flagged is None
            # Moved on by at least the time nobody served (from the stop to the new process's first sign of
            # life, which comes before it answers anyone); today's main moved it by nothing.
            assert after.deadline - before.deadline >= 2.5, (before, after, time.monotonic() - down)
            with connect(f"{s.ws_url}/ws/{tokens[mover]}") as ws:
                st = state_of(ws)
                assert st["status"] == "playing" and st["to_move"] and st["clock"]["left"] > 0, st
                play_first_legal(ws, st)
                moved = state_of(ws, lambda x, seq=st["seq"]: x["seq"] > seq)
                assert moved.get("ending") is None or moved["ending"]["reason"] != "time", moved
    finally:
        store.close()
        s.stop(hard=False)


def test_bad_time_controls_are_refused_by_name(sqlite_server):
    with sqlite_server.client() as c:
        for clock, words in (
            ("1+1", "unknown time control '1+1'"),
            (5, "unknown time control of type int"),
            ("x" * 500, "unknown time control 'xxxxxxxxxxxxxxxxxxx"),
        ):
            r = c.post("/api/games", json={"opponent": "friend", "clock": clock})
            assert r.status_code == 422 and r.json()["error"] == "bad_clock" and words in r.json()["message"], r.text
        r = c.post("/api/games", json={"opponent": "medium", "clock": "10+60"})
        assert r.status_code == 422 and "against the computer has no clock" in r.json()["message"]
        r = c.post("/api/games", json={"opponent": "friend", "clock": "10+60", "on_time": "win"})
        assert r.status_code == 422 and r.json()["error"] == "bad_clock"
        assert c.get("/api/games").json()["games"] == []  # nothing was made


@pytest.mark.limits(claim_seconds=2, claim_closed_seconds=1)
def test_abort_resign_and_rematch(server: Server):
    with server.client() as host, server.client() as guest:
        # Abort: before both have moved, no result.
        game, guest_token = friend_game(host, guest, SLOW)
        with connect(f"{server.ws_url}/ws/{game['token']}") as ws0:
            assert state_of(ws0)["can_abort"]
            ws0.send(json.dumps({"type": "abort"}))
            assert reply_of(ws0, "ended") == {"type": "ended", "ending": "abort"}
            st = table_now(ws0, lambda x: x["status"] == "finished")
            assert st["ending"] == {"reason": "abort", "winner": None} and st["rematch"] is None
        # Resign, once both have moved: abort is refused, resign is a loss; then a rematch.
        game, guest_token = friend_game(host, guest, SLOW)
        with connect(f"{server.ws_url}/ws/{game['token']}") as ws0, connect(f"{server.ws_url}/ws/{guest_token}") as ws1:
            both_move_once({0: ws0, 1: ws1})
            ws1.send(json.dumps({"type": "abort"}))
            assert reply_of(ws1, "error")["code"] == "no_abort"
            ws1.send(json.dumps({"type": "resign"}))
            assert reply_of(ws1, "ended")["ending"] == "resign"
            st = table_now(ws0, lambda x: x["status"] == "finished")
            assert st["ending"] == {"reason": "resign", "winner": 0} and st["match_winner"] == 0
            assert st["rematch"] == {"offered_by": None, "made": False}
            ws0.send(json.dumps({"type": "resign"}))
            assert reply_of(ws0, "error")["code"] == "over"
            # The host offers a rematch; the guest sees it and accepts; each is given their new seat.
            ws0.send(json.dumps({"type": "rematch"}))
            assert reply_of(ws0, "rematch") == {"type": "rematch", "token": None}
            assert table_now(ws1, lambda x: (x["rematch"] or {}).get("offered_by") == 0)
            ws1.send(json.dumps({"type": "rematch"}))
            guest_new = reply_of(ws1, "rematch")["token"]
            assert table_now(ws0, lambda x: x["rematch"]["made"])
            ws0.send(json.dumps({"type": "rematch"}))
            host_new = reply_of(ws0, "rematch")["token"]
        assert host_new and guest_new and host_new != guest_new
        with connect(f"{server.ws_url}/ws/{host_new}") as a, connect(f"{server.ws_url}/ws/{guest_new}") as b:
            sa, sb = state_of(a), state_of(b)
            assert (sa["seat"], sb["seat"]) == (1, 0)  # the seats swapped
            assert sa["game_id"] == sb["game_id"] != game["game_id"]
            assert [p["name"] for p in sa["players"]] == ["Guest", "Host"]
            assert sa["clock"]["control"] == SLOW and sa["status"] == "playing"


@pytest.mark.limits(claim_seconds=30, claim_closed_seconds=1)
def test_a_tab_closed_before_its_table_came_counts_as_closed(server: Server, sockets):
    """A page that says "bye" and closes (going away) at once, before the server has sent its table: the
    server's write then fails, and the page's last words, still unread, say it was closed. They were lost
    once, and such a tab counted as a dropped connection: its claim came with the longer wait."""
    with server.client() as host, server.client() as guest:
        game, guest_token = friend_game(host, guest, SLOW)
        ws0 = sockets.enter_context(connect(f"{server.ws_url}/ws/{game['token']}"))
        ws1 = sockets.enter_context(connect(f"{server.ws_url}/ws/{guest_token}"))
        st = both_move_once({0: ws0, 1: ws1})
        while st["current_player"] != 1:  # the guest's turn: a claim against them can come
            play_first_legal(ws0, st)
            st = state_of(ws0, lambda s, seq=st["seq"]: s["seq"] > seq)
        ws1.close(code=1011)
        assert state_of(ws0, lambda s: s["claim"] is not None)["claim"]["closed"] is False
        for _ in range(3):
            ws1 = sockets.enter_context(connect(f"{server.ws_url}/ws/{guest_token}"))
            ws1.send(json.dumps({"type": "bye"}))
            ws1.close(code=1001)
            # (The guest's coming back may show first: its table says the claim is gone.)
            claim = state_of(ws0, lambda s: s["claim"] is not None and s["claim"]["closed"], timeout=15)["claim"]
            assert claim["in"] <= 1


@pytest.mark.limits(claim_seconds=3, claim_closed_seconds=1)
def test_a_claim_against_a_player_who_left_on_their_turn(server: Server, sockets):
    with server.client() as host, server.client() as guest:
        game, guest_token = friend_game(host, guest, SLOW)
        ws0 = sockets.enter_context(connect(f"{server.ws_url}/ws/{game['token']}"))
        ws1 = sockets.enter_context(connect(f"{server.ws_url}/ws/{guest_token}"))
        st = both_move_once({0: ws0, 1: ws1})
        # Make it the guest's turn, then the guest loses their connection (no word of closing).
        while st["current_player"] != 1:
            play_first_legal(ws0, st)
            st = state_of(ws0, lambda s, seq=st["seq"]: s["seq"] > seq)
        ws0.send(json.dumps({"type": "claim"}))
        assert reply_of(ws0, "error")["code"] == "no_claim"  # the guest is at the table
        ws1.close(code=1011)  # a dropped connection, not a closed tab
        away = state_of(ws0, lambda s: s["claim"] is not None)
        assert away["claim"]["closed"] is False and 0 < away["claim"]["in"] <= 3 and away["away"] == [False, True]
        ws0.send(json.dumps({"type": "claim"}))
        assert reply_of(ws0, "error")["code"] == "too_soon"
        # Back in time: no claim. Then the tab closes ("going away"): the claim comes sooner.
        ws1 = sockets.enter_context(connect(f"{server.ws_url}/ws/{guest_token}"))
        assert state_of(ws0, lambda s: s["claim"] is None and s["away"] == [False, False])
        ws1.send(json.dumps({"type": "bye"}))
        ws1.close(code=1001)
        # (On a loaded machine a table may first show the guest away before the server has read the
        # "bye": a claim then comes later for a moment, never sooner; the closed tab's follows.)
        claim = state_of(ws0, lambda s: s["claim"] is not None and s["claim"]["closed"])["claim"]
        assert claim["in"] <= 1
        time.sleep(claim["in"] + 0.2)
        ws0.send(json.dumps({"type": "claim"}))
        assert reply_of(ws0, "ended") == {"type": "ended", "ending": "claim"}
        st = table_now(ws0, lambda s: s["status"] == "finished")
        assert st["ending"] == {"reason": "claim", "winner": 0}
        ws0.close()
        # The leaver comes back to a lost game.
        with connect(f"{server.ws_url}/ws/{guest_token}") as ws1:
            st = state_of(ws1)
            assert st["status"] == "finished" and st["ending"]["winner"] == 0


def play_until_turn_of(sockets: dict[int, object], seat: int, state: dict) -> dict:
    """Each player to move plays their first legal action until ``seat`` is to move; the table then,
    as seat 0's socket saw it."""
    while state["current_player"] != seat:
        mover, seq = state["current_player"], state["seq"]
        mine = state if mover == 0 else state_of(sockets[1], lambda s, seq=seq: s["seq"] == seq and s["to_move"])
        play_first_legal(sockets[mover], mine)
        state = state_of(sockets[0], lambda s, seq=seq: s["seq"] > seq)
    return state


@pytest.mark.limits(claim_seconds=30, claim_closed_seconds=3)
def test_the_claim_counts_down_only_on_the_absent_players_own_turn(server: Server, sockets):
    with server.client() as host, server.client() as guest:
        game, guest_token = friend_game(host, guest, SLOW)
        ws0 = sockets.enter_context(connect(f"{server.ws_url}/ws/{game['token']}"))
        ws1 = sockets.enter_context(connect(f"{server.ws_url}/ws/{guest_token}"))
        play_until_turn_of({0: ws0, 1: ws1}, 0, both_move_once({0: ws0, 1: ws1}))
        # The guest closes the tab on the host's turn. No "bye" first: the close code alone says so.
        ws1.close(code=1001)
        away = state_of(ws0, lambda s: s["away"] == [False, True])
        assert away["current_player"] == 0 and away["claim"] is None
        ws0.send(json.dumps({"type": "claim"}))
        assert reply_of(ws0, "error")["code"] == "no_claim"
        time.sleep(3.5)  # longer than a closed tab's wait, all of it on the host's own turn
        ws0.send(json.dumps({"type": "claim"}))
        assert reply_of(ws0, "error")["code"] == "no_claim"
        # Now the guest is to move: the countdown starts from their turn, not from when they left.
        mine = table_now(ws0)
        while mine["current_player"] == 0:
            play_first_legal(ws0, mine)
            mine = state_of(ws0, lambda s, seq=mine["seq"]: s["seq"] > seq)
        claim = mine["claim"]
        assert claim["closed"] is True and 0 < claim["in"] <= 3
        ws0.send(json.dumps({"type": "claim"}))
        assert reply_of(ws0, "error")["code"] == "too_soon"
        time.sleep(claim["in"] + 0.2)
        ws0.send(json.dumps({"type": "claim"}))
        assert reply_of(ws0, "ended") == {"type": "ended", "ending": "claim"}
        ws0.close()


def clocked_game(store: Store) -> str:
    """A friend game with a running 10+60 clock, written straight into the database: its id."""
    from koikoi.web.store import insert_game

    with store.engine.begin() as conn:
        gid, _tokens, _ = insert_game(
            conn,
            rules={"name": "nintendo"},
            seed=1,
            opponent="friend",
            ai_seed=2,
            status="playing",
            seat_specs=[(0, "human", "A", "a"), (1, "human", "B", "b")],
            clock=(time_control("10+60"), "lose", 0),
        )
    return gid


def test_an_outage_moves_every_running_deadline_on_once(tmp_path):
    store = Store(str(tmp_path / "games.db"))
    table = TableStore(store)
    assert table.beat("p1", 1000.0) == 0.0  # the first sign of life ever: nothing to make good
    gid = clocked_game(store)
    before = table.clock_of(gid)
    assert before is not None and before.deadline is not None
    assert table.beat("p1", 1001.0) == 0.0 and table.clock_of(gid) == before  # no gap
    gap = table.beat("p2", 1101.0)  # 100 s without a sign of life from anyone
    assert gap == pytest.approx(99.0)
    after = table.clock_of(gid)
    assert after.deadline == pytest.approx(before.deadline + 99.0)
    assert table.beat("p1", 1101.5) == 0.0  # the other process finds it made good already
    store.close()


def test_a_starting_process_makes_good_a_gap_however_short(database_url):
    store = Store(database_url)
    table = TableStore(store)
    try:
        assert table.beat("old", 1000.0, starting=True) == 0.0  # the first sign of life ever
        gid = clocked_game(store)
        deadline = table.clock_of(gid).deadline
        assert table.beat("old", 1001.0) == 0.0
        # A running process silent for 1.8 s is no outage; a starting one knows nobody served meanwhile.
        assert table.beat("old", 1002.8) == 0.0 and table.clock_of(gid).deadline == deadline
        assert table.beat("new", 1004.6, starting=True) == pytest.approx(1.8)
        assert table.clock_of(gid).deadline == pytest.approx(deadline + 1.8)
        if not store.is_sqlite:
            # With several processes (PostgreSQL), one that starts beside a living one makes good nothing:
            # the living one was serving.
            assert table.beat("third", 1005.4, starting=True) == 0.0
            assert table.clock_of(gid).deadline == pytest.approx(deadline + 1.8)
    finally:
        store.close()
