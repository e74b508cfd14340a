"""Several server processes on one PostgreSQL database (docs/web.md, "Scaling out"): moves made through
one process reach players connected to another, each computer move is made by exactly one process, and
a process can die without losing a move or leaving a game waiting.

Real ``koikoi serve`` processes on real ports, real WebSockets, the PostgreSQL named by
``KOIKOI_TEST_POSTGRES_URL`` (``.ci/run`` starts one). Without it these tests are skipped.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest
from conftest import POSTGRES_URL, Server, free_port, make_database, ws_json
from websockets.sync.client import connect

from koikoi.actions import STOP

pytestmark = pytest.mark.server  # every test here starts server processes of its own

needs_pg = pytest.mark.skipif(not POSTGRES_URL, reason="needs PostgreSQL: set KOIKOI_TEST_POSTGRES_URL")


KOIKOI = [sys.executable, "-c", "import sys; from koikoi.cli import main; sys.exit(main())"]


@pytest.fixture
def pg(tmp_path) -> str:
    return make_database("postgresql", tmp_path)


@pytest.fixture
def two(pg, tmp_path):
    a, b = Server(pg, tmp_path), Server(pg, tmp_path)
    a.start()
    b.start()
    yield a, b
    for s in (a, b):
        s.stop(hard=False)


def create(client, opponent, preset="cardavia", **options) -> dict:
    r = client.post(
        "/api/games", json={"name": "Ann", "opponent": opponent, "rules": {"preset": preset, "options": options}}
    )
    assert r.status_code == 201, r.text
    return r.json()


def next_state(ws, timeout: float = 30) -> dict:
    """The next state pushed on ``ws`` (acks skipped)."""
    deadline = time.monotonic() + timeout
    while True:
        msg = json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
        assert msg["type"] in ("state", "ack"), msg
        if msg["type"] == "state":
            return msg["state"]


def state_at(ws, seq: int, timeout: float = 30) -> dict:
    """Read pushed states until one at move ``seq`` (or later) arrives; fails if none does."""
    while True:
        st = next_state(ws, timeout)
        if st["seq"] >= seq:
            return st


def choose(st: dict) -> int:
    legal = st["legal"]
    return STOP if STOP in legal else legal[0]


@needs_pg
def test_a_friend_game_across_two_processes_gets_every_push(two):
    a, b = two
    moves = 0
    with a.client() as host, b.client() as friend:
        # A deal can end a one-hand match in a few moves (the first yaku, and a stop): games until at
        # least six moves have been pushed to both seats.
        while moves <= 5:
            moves += play_across(a, b, host, friend)


def play_across(a: Server, b: Server, host: httpx.Client, friend: httpx.Client) -> int:
    """A friend game made on ``a`` and joined on ``b``, played to its end over a socket on each: every
    move reaches both seats. Returns how many moves it took."""
    game = create(host, "friend", hand_bonus=0)
    r = friend.post(f"/api/invite/{game['invite_token']}/join", json={"name": "Bob"})
    assert r.status_code == 200, r.text
    tokens = [game["token"], r.json()["token"]]
    with connect(f"{a.ws_url}/ws/{tokens[0]}") as ws0, connect(f"{b.ws_url}/ws/{tokens[1]}") as ws1:
        socks = [ws0, ws1]
        st = [next_state(ws0), next_state(ws1)]
        if st[0]["status"] == "waiting":  # A learned of the join from B's notification
            st[0] = next_state(ws0)
        assert st[0]["status"] == st[1]["status"] == "playing"
        seq = st[0]["seq"]
        moves = 0
        while not st[0]["match_over"]:
            mover = st[0]["current_player"]
            assert st[mover]["to_move"] and st[mover]["seq"] == seq
            socks[mover].send(json.dumps({"type": "action", "action": choose(st[mover]), "seq": seq}))
            seq += 1
            moves += 1
            # Both seats are told, each by its own process: the other one only through PostgreSQL.
            st = [state_at(ws0, seq), state_at(ws1, seq)]
            assert st[0]["seq"] == st[1]["seq"] == seq
        assert st[1]["match_over"] and st[0]["scores"] == st[1]["scores"]
    listed = {g["game_id"]: g for g in host.get("/api/games").json()["games"]}
    assert listed[game["game_id"]]["status"] == "finished"
    return moves


def _health(s: Server) -> dict:
    return httpx.get(s.url + "/api/health", timeout=5).json()


@needs_pg
def test_each_computer_move_is_made_by_one_process(two):
    a, b = two
    assert _health(a)["listening"] is True and _health(b)["listening"] is True
    with a.client() as c:
        game = create(c, "random", hand_bonus=0)
        token = game["token"]
        # The human's seat is open on both processes, so both hold the game and both see the
        # computer's turns come: only one may think about each.
        with connect(f"{a.ws_url}/ws/{token}") as wa, connect(f"{b.ws_url}/ws/{token}") as wb:
            st = next_state(wa)
            next_state(wb)
            while not st["match_over"]:
                if st["to_move"]:
                    seq = st["seq"]
                    (wa if seq % 2 else wb).send(json.dumps({"type": "action", "action": choose(st), "seq": seq}))
                    st = state_at(wa, seq + 1)
                    state_at(wb, seq + 1)
                else:
                    st = next_state(wa)
    thought = _health(a)["computer_moves"] + _health(b)["computer_moves"]
    from koikoi.web.store import Store

    store = Store(a.database_url)
    try:
        computer_moves = sum(1 for seat, _ in store.actions_of(game["game_id"]) if seat == 1)
    finally:
        store.close()
    assert computer_moves > 0 and thought == computer_moves


@needs_pg
def test_a_killed_process_loses_nothing_and_the_other_finishes_the_game(pg, tmp_path):
    # A thinks slowly (so that it dies while thinking), B at once.
    a = Server(pg, tmp_path, "--ai-delay", "30")
    b = Server(pg, tmp_path)
    a.start()
    b.start()
    try:
        # A game whose computer turn comes after at most one acknowledged move of ours; a deal where our
        # move keeps the turn (a koi-koi decision) or ends the hand is set aside for a new game.
        for _ in range(8):
            with a.client() as c:
                game = create(c, "random", hand_bonus=0)
            token = game["token"]
            acked = []
            seq = 0
            with connect(f"{a.ws_url}/ws/{token}") as ws:
                after = next_state(ws)
                if after["to_move"]:  # the human leads: one move, acknowledged, then the computer's turn
                    seq = after["seq"]
                    ws.send(json.dumps({"type": "action", "action": choose(after), "seq": seq}))
                    after = None
                    while not acked or after is None:  # the new table is pushed, then the move acknowledged
                        msg = ws_json(ws)
                        if msg["type"] == "ack":
                            acked.append(msg["seq"])
                        elif msg["type"] == "state" and msg["state"]["seq"] == seq + 1:
                            after = msg["state"]
                    assert acked == [seq + 1]
            if not after["match_over"] and not after["to_move"]:
                break
        else:  # pragma: no cover - eight deals in a row without a computer turn after one move
            pytest.fail("eight new games gave no computer turn to kill the process in")
        # The computer's turn: A claimed it and sleeps on it (its --ai-delay).
        a.stop(hard=True)  # kill -9
        # The page reconnects, to the other process: the acknowledged move is there, and the
        # computer's move A was making is taken over by B once A's claim runs out.
        with connect(f"{b.ws_url}/ws/{token}") as ws:
            st = next_state(ws)
            assert st["seq"] >= max(acked, default=0)
            deadline = time.monotonic() + 30
            while not st["to_move"] and not st["match_over"]:
                st = next_state(ws, timeout=max(1, deadline - time.monotonic()))
            # and the game goes on to its end through B
            while not st["match_over"]:
                if st["to_move"]:
                    ws.send(json.dumps({"type": "action", "action": choose(st), "seq": st["seq"]}))
                st = next_state(ws)
        from koikoi.web.store import Store

        store = Store(pg)
        try:
            stored = store.actions_of(game["game_id"])
            assert len(stored) >= len(acked) and all(n <= len(stored) for n in acked)  # acknowledged: kept
            assert store.game(game["game_id"]).status == "finished"
        finally:
            store.close()
    finally:
        a.stop(hard=False)
        b.stop(hard=False)


@needs_pg
def test_workers_share_one_port_and_a_killed_worker_is_replaced(pg, tmp_path):
    port = free_port()
    log = open(tmp_path / "workers.log", "wb")
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"))
    cmd = [*KOIKOI, "serve", "--port", str(port), "--database-url", pg, "--workers", "2", "--ai-delay", "0"]
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        pids: set[int] = set()
        deadline = time.monotonic() + 60
        while len(pids) < 2 and time.monotonic() < deadline:
            try:
                with httpx.Client(timeout=2) as c:  # a new connection each time
                    pids.add(c.get(url + "/api/health").json()["pid"])
            except httpx.HTTPError:
                time.sleep(0.2)
        assert len(pids) == 2, (tmp_path / "workers.log").read_text()
        with httpx.Client(base_url=url, timeout=30) as c:
            game = create(c, "random", hand_bonus=0)
        os.kill(next(iter(pids)), signal.SIGKILL)
        # The other worker answers at once, and the killed one is replaced.
        seen: set[int] = set()
        deadline = time.monotonic() + 60
        while len(seen - pids) < 1 and time.monotonic() < deadline:
            try:
                with httpx.Client(timeout=2) as c:
                    seen.add(c.get(url + "/api/health").json()["pid"])
            except httpx.HTTPError:
                time.sleep(0.2)
        assert seen - pids, "no new worker took the killed one's place"
        with httpx.Client(base_url=url, timeout=30) as c:
            st = c.get(f"/api/seat/{game['token']}").json()
            assert st["game_id"] == game["game_id"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
    assert proc.returncode == 0


def test_sqlite_is_served_by_one_process_and_says_so(tmp_path):
    db = tmp_path / "games.db"
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"))
    port = free_port()
    r = subprocess.run(
        [*KOIKOI, "serve", "--port", str(port), "--database-url", str(db), "--workers", "2"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "--workers 2 needs PostgreSQL" in r.stderr, r.stderr
    first = Server(str(db), tmp_path)
    first.start()
    try:
        r = subprocess.run(
            [*KOIKOI, "serve", "--port", str(free_port()), "--database-url", str(db)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 2 and "another koikoi serve is using" in r.stderr and "PostgreSQL" in r.stderr
    finally:
        first.stop(hard=False)
