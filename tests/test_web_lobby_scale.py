"""The public lobby with two server processes on one PostgreSQL database (docs/web.md, "The public
lobby"): a seek made on one process is pushed to the other's sockets and accepted there, its creator is
told over the first; a rated match is rated once; a crowd asking for quick pairing on both processes at
the same moment is paired each exactly once.

Real ``koikoi serve`` processes, real sockets, the PostgreSQL named by ``KOIKOI_TEST_POSTGRES_URL``.
"""

from __future__ import annotations

import contextlib
import threading

import httpx
import pytest
from conftest import POSTGRES_URL, Server, make_database
from sqlalchemy import select
from test_web_accounts import signup
from test_web_lobby import lobby_socket, lobby_until, next_of, play_out

from koikoi.web.schema import seats, seeks
from koikoi.web.store import Store

pytestmark = pytest.mark.server  # every test here starts server processes of its own

needs_pg = pytest.mark.skipif(not POSTGRES_URL, reason="needs PostgreSQL: set KOIKOI_TEST_POSTGRES_URL")


@pytest.fixture
def two(tmp_path):
    pg = make_database("postgresql", tmp_path)
    a, b = Server(pg, tmp_path), Server(pg, tmp_path)
    a.start()
    b.start()
    yield a, b
    for s in (a, b):
        s.stop(hard=False)


def on(server: Server, other: httpx.Client) -> httpx.Client:
    """A client of ``server`` with the cookies (browser id, session) of ``other``: one browser, another process."""
    c = httpx.Client(base_url=server.url, timeout=30)
    c.cookies.update(other.cookies)
    return c


@needs_pg
def test_a_rated_seek_across_two_processes(two):
    a, b = two
    with a.client() as ann, b.client() as bob:
        assert signup(ann, "AnnX").status_code == 201 and signup(bob, "BobX").status_code == 201
        with lobby_socket(a, ann) as ws_ann, lobby_socket(b, bob) as ws_bob:
            next_of(ws_bob, "lobby")
            seek = {"rules": {"preset": "cardavia"}, "hands": 1, "rated": True, "clock": "20+120"}
            r = ann.post("/api/lobby/seeks", json=seek)
            assert r.status_code == 201, r.text
            seek_id = r.json()["seek_id"]
            shown = lobby_until(ws_bob, lambda m: m["seeks"])["seeks"][0]  # pushed by the other process
            assert shown["id"] == seek_id and shown["name"] == "AnnX" and shown["rated"] is True
            taken = bob.post(f"/api/lobby/seeks/{seek_id}/accept", json={}).json()
            told = next_of(ws_ann, "paired")  # told by the process Ann is on
            assert told["game_id"] == taken["game_id"] and told["token"] != taken["token"]
            # The seek's clock, made with the game on Bob's process, runs as Ann's process reads it.
            clock = ann.get(f"/api/seat/{told['token']}").json()["clock"]
            assert clock["control"] == "20+120" and clock["left"] > 0
        store = Store(a.database_url)
        mine = {s.token: s.seat for s in store.seats_of(taken["game_id"])}
        store.close()
        play_out(a, {mine[told["token"]]: told["token"], mine[taken["token"]]: taken["token"]})
        for c in (ann, on(b, ann)):
            for name in ("AnnX", "BobX"):
                assert c.get(f"/api/players/{name}").json()["ratings"]["short"]["games"] == 1


@needs_pg
def test_a_crowd_on_two_processes_is_paired_each_exactly_once(two):
    a, b = two
    n = 40
    clients = [(a if i % 2 else b).client() for i in range(n)]
    results: list[dict] = [{} for _ in range(n)]
    go = threading.Barrier(n)

    def ask(i: int) -> None:
        go.wait()
        r = clients[i].post("/api/lobby/quick", json={"pool": "nintendo-3", "name": f"P{i}"})
        results[i] = r.json() if r.status_code in (200, 201) else {"error": r.text}

    servers = [b if i % 2 == 0 else a for i in range(n)]
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(lobby_socket(servers[i], clients[i])) for i in range(n)]
        for ws in socks:
            next_of(ws, "lobby")
        threads = [threading.Thread(target=ask, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all("entry_id" in r for r in results), results
        told = [next_of(ws, "paired") for ws in socks]
    games = {}
    for i, msg in enumerate(told):
        games.setdefault(msg["game_id"], []).append(i)
    assert len(games) == n // 2 and all(len(players) == 2 for players in games.values())
    store = Store(a.database_url)
    with store.engine.connect() as conn:
        rows = conn.execute(select(seeks.c.id, seeks.c.game_id)).all()
        owners = conn.execute(select(seats.c.game_id, seats.c.owner)).all()
    store.close()
    assert len(rows) == n and len({r.game_id for r in rows}) == n // 2  # one game per pair, nobody twice
    by_game: dict[str, set] = {}
    for g, owner in owners:
        by_game.setdefault(g, set()).add(owner)
    assert len(by_game) == n // 2 and all(len(o) == 2 for o in by_game.values())  # never one with themselves
    for c in clients:
        c.close()
