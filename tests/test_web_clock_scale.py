"""Clocks and claims over several server processes on one PostgreSQL database (docs/web.md, "Time
controls", "Leaving a game" and "Scaling out"): the clock of a game whose process is killed runs out
through another process, by the deadline stored before the kill (the death of one process is not an
outage while another beats); and a claim made on one process while the leaver comes back through
another is decided once, one way or the other, on both processes and in the database.

Real ``koikoi serve`` processes on real ports, real WebSockets, the PostgreSQL named by
``KOIKOI_TEST_POSTGRES_URL``. Without it these tests are skipped.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack

import httpx
import pytest
from conftest import POSTGRES_URL, Server, limit_args, make_database
from test_web_clocks import both_move_once, friend_game, play_first_legal, reply_of, state_of, table_now
from websockets.sync.client import connect

from koikoi.web.store import Store
from koikoi.web.tablestore import TableStore

pytestmark = pytest.mark.server  # every test here starts server processes of its own

needs_pg = pytest.mark.skipif(not POSTGRES_URL, reason="needs PostgreSQL: set KOIKOI_TEST_POSTGRES_URL")

QUICK = "5+3"  # a test-only control (koikoi serve --time-control): 5 s a decision, 3 s in the bank
SLOW = "20+120"
# Every client of these tests comes from 127.0.0.1: the per-address limits are raised for them.
MANY = limit_args(
    games_per_minute=1000, open_games_per_browser=1000, sockets_per_address=1000, connections_per_address=1000
)


@pytest.fixture
def pg(tmp_path) -> str:
    return make_database("postgresql", tmp_path)


def stored(pg: str, game_id: str):
    """The game's row and its clock, as the database holds them now."""
    store = Store(pg)
    try:
        return store.game(game_id), TableStore(store).clock_of(game_id)
    finally:
        store.close()


def health(s: Server) -> dict:
    return httpx.get(s.url + "/api/health", timeout=10).json()


@needs_pg
def test_the_clock_of_a_killed_process_runs_out_through_another(pg, tmp_path, sockets):
    a = Server(pg, tmp_path, "--time-control", QUICK)
    b = Server(pg, tmp_path, "--time-control", QUICK)
    a.start()
    b.start()
    try:
        with a.client() as host, b.client() as guest_b, a.client() as guest_a:
            # Game 1 is open on both processes (the host's seat on A, the guest's on B); game 2 only on A,
            # so B has never held it when A dies: its flag must come from B's sweep of the database.
            g1, t1 = friend_game(host, guest_b, QUICK)
            g2, t2 = friend_game(host, guest_a, QUICK)
            ws1h, ws1g = (
                sockets.enter_context(connect(f"{a.ws_url}/ws/{g1['token']}")),
                sockets.enter_context(connect(f"{b.ws_url}/ws/{t1}")),
            )
            ws2h, ws2g = (
                sockets.enter_context(connect(f"{a.ws_url}/ws/{g2['token']}")),
                sockets.enter_context(connect(f"{a.ws_url}/ws/{t2}")),
            )
            last = [both_move_once({0: ws1h, 1: ws1g}), both_move_once({0: ws2h, 1: ws2g})]
            a.stop(hard=True)  # SIGKILL, mid-game, while the player to move's clock runs
            for ws in (ws1h, ws2h, ws2g):
                ws.close()
            games = [g1["game_id"], g2["game_id"]]
            before = [stored(pg, gid) for gid in games]
            for (g, c), st in zip(before, last):
                assert g.status == "playing" and c is not None and c.deadline is not None, (g, c)
                assert c.flagged is None and st["status"] == "playing"
            losers = [st["current_player"] for st in last]
            # The player on B sees game 1 end on time, with the right winner ...
            ended = state_of(ws1g, lambda s: s["status"] == "finished", timeout=60)
            assert ended["ending"] == {"reason": "time", "winner": 1 - losers[0]}
            assert ended["clock"]["flagged"] and ended["match_over"] and ended["match_winner"] == 1 - losers[0]
            ws1g.close()
            # ... and game 2, which nobody on B watched, ends too.
            give_up = time.monotonic() + 60
            while stored(pg, games[1])[0].status == "playing" and time.monotonic() < give_up:
                time.sleep(0.2)
            # Its players, back through B, find it lost on time.
            for token, seat in ((g2["token"], 0), (t2, 1)):
                with connect(f"{b.ws_url}/ws/{token}") as ws:
                    st = state_of(ws)
                    assert st["status"] == "finished" and st["seat"] == seat
                    assert st["ending"] == {"reason": "time", "winner": 1 - losers[1]}
        for gid, loser, (_, clock_before) in zip(games, losers, before):
            g, c = stored(pg, gid)
            assert (g.status, g.ending, g.winner) == ("finished", "time", 1 - loser)
            # The deadline that ran out is the one stored before the kill: B did not take A's death for
            # an outage of every server (which would have moved each running deadline on).
            assert c.deadline is None and c.flagged == clock_before.deadline
            assert c.turn_started == clock_before.turn_started
        assert health(b)["flags"] == 2  # each game ended on time once, by B
    finally:
        a.stop(hard=False)
        b.stop(hard=False)


def _to_guests_turn(ws0, ws1) -> dict:
    """Both players move once, then the host moves until it is the guest's turn: the table then."""
    st = both_move_once({0: ws0, 1: ws1})
    while st["current_player"] != 1:
        play_first_legal(ws0, st)
        st = state_of(ws0, lambda s, seq=st["seq"]: s["seq"] > seq)
    assert st["status"] == "playing"
    return st


def _claim_race(a: Server, b: Server, pg: str, round_no: int, start: threading.Barrier) -> str:
    """One round: the guest (on A) closes the tab on their turn; once the host (on B) may claim, the host
    claims on B while the guest comes back on A. Checks that exactly one of the two won, everywhere, and
    returns which: "claim" or "back"."""
    with b.client() as host, a.client() as guest, ExitStack() as sockets:
        game, guest_token = friend_game(host, guest, SLOW)
        ws0 = sockets.enter_context(connect(f"{b.ws_url}/ws/{game['token']}"))
        ws1 = sockets.enter_context(connect(f"{a.ws_url}/ws/{guest_token}"))
        try:
            st = _to_guests_turn(ws0, ws1)
            seq = st["seq"]
            ws1.send(json.dumps({"type": "bye"}))
            ws1.close(code=1001)  # the tab closed, on its own turn: the claim comes after claim_closed_seconds
            claim = state_of(ws0, lambda s: s["claim"] is not None and s["away"] == [False, True])["claim"]
            while claim is None or claim["in"] > 0:
                time.sleep(0.1 if claim is None else min(1.0, claim["in"] + 0.05))
                claim = table_now(ws0)["claim"]
            start.wait(timeout=120)  # every round's race starts at once: the processes are busy with all
            time.sleep((round_no % 5) * 0.01)  # and the claim goes first by a little, or not
            got: dict[str, object] = {}

            def come_back() -> None:
                got["ws"] = ws = sockets.enter_context(connect(f"{a.ws_url}/ws/{guest_token}"))
                got["first"] = state_of(ws)

            back = threading.Thread(target=come_back)
            back.start()
            ws0.send(json.dumps({"type": "claim"}))
            reply = json.loads(ws0.recv(timeout=30))
            while reply["type"] not in ("ended", "error"):  # tables pushed meanwhile
                reply = json.loads(ws0.recv(timeout=30))
            back.join(timeout=60)
            ws1 = got["ws"]
            if reply["type"] == "ended":
                # The claim won: the game is over on both processes, and the guest, back, finds it lost.
                assert reply == {"type": "ended", "ending": "claim"}
                lost = (
                    got["first"]
                    if got["first"]["status"] == "finished"
                    else state_of(ws1, lambda s: s["status"] == "finished")
                )
                assert lost["ending"] == {"reason": "claim", "winner": 0} and lost["legal"] == []
                ws1.send(json.dumps({"type": "action", "action": 0, "seq": seq}))  # too late to move
                assert reply_of(ws1, "error")["code"] == "over"
                g, _ = stored(pg, game["game_id"])
                assert (g.status, g.ending, g.winner) == ("finished", "claim", 0)
                return "claim"
            # The guest was back first: the claim is refused by name, and the game goes on.
            assert reply["type"] == "error" and reply["code"] == "no_claim", reply
            assert "back at the table" in reply["message"]
            mine = got["first"]
            assert mine["status"] == "playing" and mine["to_move"] and mine["seq"] == seq
            play_first_legal(ws1, mine)
            assert reply_of(ws1, "ack")["seq"] == seq + 1
            after = state_of(ws0, lambda s: s["seq"] > seq)
            assert after["status"] == "playing" and after["ending"] is None
            g, _ = stored(pg, game["game_id"])
            assert g.status == "playing" and g.ending is None
            return "back"
        finally:
            ws0.close()
            ws1.close()


@needs_pg
def test_a_claim_raced_by_the_leaver_coming_back_elsewhere_is_decided_once(pg, tmp_path):
    rounds = 20
    extra = [*MANY, *limit_args(claim_seconds=1, claim_closed_seconds=1)]
    a, b = Server(pg, tmp_path, *extra), Server(pg, tmp_path, *extra)
    a.start()
    b.start()
    try:
        start = threading.Barrier(rounds)

        def one(i: int) -> str:
            try:
                return _claim_race(a, b, pg, i, start)
            except BaseException:
                start.abort()  # the other rounds stop waiting for this one
                raise

        with ThreadPoolExecutor(rounds) as pool:
            futures = [pool.submit(one, i) for i in range(rounds)]
        failed = [f.exception() for f in futures if f.exception() is not None]
        first = next((e for e in failed if not isinstance(e, threading.BrokenBarrierError)), None)
        if failed:
            raise first or failed[0]
        outcomes = [f.result() for f in futures]
        assert set(outcomes) <= {"back", "claim"} and len(outcomes) == rounds
        print(f"claim races: {outcomes.count('claim')} won by the claim, {outcomes.count('back')} by the return")
        # Nothing went wrong on either process meanwhile (a 500, an exception in a task).
        for s in (a, b):
            log = s.log.read_text(errors="replace")
            assert "Traceback" not in log and " 500 " not in log, log[-4000:]
    finally:
        a.stop(hard=False)
        b.stop(hard=False)
