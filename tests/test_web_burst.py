"""A burst of WebSockets against a real server: 1,000 opened at once are all accepted and all get their
table, on one process (SQLite) and on ``--workers 2`` (PostgreSQL, each socket routed to its game's
owner). The figures of a 2,000-socket burst are ``benchmarks/web_load.py``'s "connection burst" line."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
import websockets
from conftest import NO_TLS, POSTGRES_URL, Server, limit_args, make_database

from koikoi.web.siblings import owner_of

pytestmark = pytest.mark.server  # every test here starts server processes of its own

GAMES = 100  # two seats each, each seat opened five times: 1,000 sockets
OPENINGS = 5
BURST_LIMITS = limit_args(
    games_per_minute=100000,
    open_games_per_browser=100000,
    sockets_per_address=100000,
    connections_per_address=100000,
    sockets_per_seat=OPENINGS,
)


def set_up_games(url: str) -> list[tuple[str, str]]:
    """``GAMES`` friend games, joined: (game id, seat token) for each seat."""
    seats = []
    with httpx.Client(base_url=url, timeout=60) as host, httpx.Client(base_url=url, timeout=60) as guest:
        for _ in range(GAMES):
            r = host.post("/api/games", json={"opponent": "friend", "rules": {"preset": "cardavia"}})
            assert r.status_code == 201, r.text
            game = r.json()
            r = guest.post(f"/api/invite/{game['invite_token']}/join", json={"name": "Bob"})
            assert r.status_code == 200, r.text
            seats += [(game["game_id"], game["token"]), (game["game_id"], r.json()["token"])]
    return seats


async def burst(s: Server, seats: list[tuple[str, str]]) -> tuple[int, list[str], dict]:
    """Open every seat ``OPENINGS`` times, all at once: (sockets that got their table, failures, and
    ``/api/health?all=1`` read while they are all open)."""
    failures: list[str] = []

    async def one(game_id: str, token: str) -> websockets.ClientConnection | None:
        try:
            ws = await websockets.connect(f"{s.ws_url}/ws/{token}?game={game_id}", open_timeout=60)
            msg = json.loads(await asyncio.wait_for(ws.recv(), 60))
            if msg["type"] != "state" or msg["state"]["game_id"] != game_id:
                failures.append(f"first message {msg['type']} {msg.get('code', '')}: {msg.get('message', '')}"[:200])
            return ws
        except Exception as e:  # counted: the test says how many and why
            failures.append(f"{type(e).__name__}: {e}"[:200])
            return None

    opened = await asyncio.gather(*(one(g, t) for g, t in seats for _ in range(OPENINGS)))
    good = [ws for ws in opened if ws is not None]
    async with httpx.AsyncClient(timeout=10) as c:
        health = (await c.get(s.url + "/api/health?all=1")).json()
    await asyncio.gather(*(ws.close() for ws in good), return_exceptions=True)
    return len(good), failures, health


def check_burst(s: Server, workers: int) -> None:
    seats = set_up_games(s.url)
    tables, failures, health = asyncio.run(burst(s, seats))
    assert not failures, f"{len(failures)} of {len(seats) * OPENINGS} sockets failed: {sorted(set(failures))[:5]}"
    assert tables == GAMES * 2 * OPENINGS
    # Every socket is on its game's owner (one process: all on it).
    expected = [0] * workers
    for game_id, _token in seats:
        expected[owner_of(game_id, workers)] += OPENINGS
    assert [w["sockets"] for w in health["all"]] == expected, health["all"]


def wait_for_workers(s: Server, workers: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        everyone = httpx.get(s.url + "/api/health?all=1", timeout=10, verify=NO_TLS).json()["all"]
        if len(everyone) == workers and all(w.get("ok") for w in everyone):
            return
        time.sleep(0.2)
    raise AssertionError(f"the {workers} workers did not all start: {everyone}")


def test_a_burst_of_sockets_on_one_process(tmp_path):
    s = Server(str(tmp_path / "games.db"), tmp_path, *BURST_LIMITS)
    s.start()
    try:
        check_burst(s, 1)
    finally:
        s.stop(hard=False)


@pytest.mark.skipif(not POSTGRES_URL, reason="needs KOIKOI_TEST_POSTGRES_URL (several processes need PostgreSQL)")
def test_a_burst_of_sockets_on_two_workers(tmp_path):
    s = Server(make_database("postgresql", tmp_path), tmp_path, "--workers", "2", *BURST_LIMITS)
    s.start()
    try:
        wait_for_workers(s, 2)
        check_burst(s, 2)
    finally:
        s.stop(hard=False)


@pytest.mark.skipif(not POSTGRES_URL, reason="needs KOIKOI_TEST_POSTGRES_URL")
@pytest.mark.parametrize("named", [True, False], ids=["game-named", "token-only"])
def test_every_player_back_after_a_restart_gets_a_table_not_a_refusal(tmp_path, named):
    """After a restart every player reconnects at once, and nothing of theirs is in memory: each socket's
    table is read from PostgreSQL. The reads queue behind each other; while the database answers, each
    waits its turn instead of being refused ("unavailable") after ``database_seconds`` and coming back
    as a storm of retries. The deadline is set low here (0.25 s), and each player has two tabs open, so
    that 400 sockets are a crowd on a CI machine: before the queue, 100 games of a restarted server
    refused most of them."""
    s = Server(make_database("postgresql", tmp_path), tmp_path, *BURST_LIMITS)
    s.start()
    try:
        seats = set_up_games(s.url)  # at the usual deadline: a loaded CI machine may take 0.25 s for a write
        s.extra += limit_args(database_seconds=0.25)
        s.restart()  # hard: as a crash, and nothing of any game in memory
        first: list[str] = []

        async def one(game_id: str, token: str) -> None:
            path = f"/ws/{token}?game={game_id}" if named else f"/ws/{token}"
            try:
                async with websockets.connect(s.ws_url + path, open_timeout=60) as ws:
                    msg = json.loads(await asyncio.wait_for(ws.recv(), 60))
                    ok = msg["type"] == "state" and msg["state"]["game_id"] == game_id
                    first.append("table" if ok else f"{msg['type']} {msg.get('code', '')}")
            except Exception as e:  # counted: the test says how many and why
                first.append(f"{type(e).__name__}: {e}"[:120])

        async def everyone() -> None:
            await asyncio.gather(*(one(g, t) for g, t in seats for _tab in range(2)))

        asyncio.run(everyone())
        refused = [f for f in first if f != "table"]
        assert not refused, f"{len(refused)} of {2 * len(seats)} sockets got no table first: {sorted(set(refused))[:5]}"
        log = s.log.read_text(errors="replace")
        assert "Traceback" not in log and "Exception in ASGI" not in log, log[-3000:]
    finally:
        s.stop(hard=False)
