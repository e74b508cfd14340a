"""Quick pairing under load: ``web_load.py --lobby`` (this module holds that run; see web_load.py's help).

``--players`` browser-like guests (each its own cookie) open the lobby's WebSocket on the server
(``koikoi serve --workers N`` on one port: the kernel spreads the connections over the workers), and
then all ask for quick pairing in one pool at the same moment. Each player is paired when its socket
says ``paired`` (or the request's own answer does). It prints:

- ``paired``: how many players were paired, and the check on the database that each was paired
  exactly once (every entry in one game, every game with two different players, as many games as pairs);
- ``time to be paired``: from a player's request to the word that they were paired, p50/p99/max;
- ``lobby push``: with every socket still open, one client posts a seek ``--seeks`` times; the time from
  posting it to each socket's push that shows it, p50/p99/max over all sockets and seeks.

    python3 benchmarks/web_load.py --lobby --players 500 --serve-workers 2 --database-url postgresql://...
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import websockets

__all__ = ["lobby_run", "print_lobby"]

POOL = "nintendo-3"
SETUP_AT_ONCE = 50  # players set up (cookie, socket) at once


async def _request(http: httpx.AsyncClient, method: str, url: str, **kw: Any) -> httpx.Response:
    """A request of a player's, tried again (up to three times) when a kept-alive connection was closed by
    the server just as it was reused: what a browser does too."""
    for attempt in range(3):
        try:
            return await http.request(method, url, **kw)
        except (httpx.ReadError, httpx.RemoteProtocolError, httpx.ConnectError):
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


class Player:
    def __init__(self, i: int) -> None:
        self.i = i
        self.cookie = ""
        self.asked = 0.0
        self.paired_at: float | None = None
        self.games: set[str] = set()
        self.seen_seeks: dict[str, float] = {}  # seek id -> when a push first showed it
        self.ws: Any = None
        # Each player its own client (its cookie, its connection), as each browser is: one client shared
        # by hundreds of requests at once spends more time in its connection pool than the server does.
        self.http: httpx.AsyncClient | None = None
        self.reader: asyncio.Task[None] | None = None

    async def read(self) -> None:
        async for raw in self.ws:
            msg = json.loads(raw)
            now = time.monotonic()
            if msg.get("type") == "paired":
                self.games.add(msg["game_id"])
                if self.paired_at is None:
                    self.paired_at = now
            elif msg.get("type") == "lobby":
                for s in msg.get("seeks", ()):
                    self.seen_seeks.setdefault(s["id"], now)


async def _set_up(base: str, ws_base: str, p: Player) -> None:
    p.http = httpx.AsyncClient(base_url=base, timeout=60, limits=httpx.Limits(max_connections=1))
    r = await p.http.get("/api/lobby")
    r.raise_for_status()
    p.cookie = "; ".join(f"{k}={v}" for k, v in r.cookies.items())
    p.ws = await websockets.connect(f"{ws_base}/ws/lobby", additional_headers={"Cookie": p.cookie}, open_timeout=30)
    first = json.loads(await p.ws.recv())
    assert first["type"] == "lobby", first
    p.reader = asyncio.get_running_loop().create_task(p.read())


async def lobby_run(port: int, players: int, seeks: int) -> dict[str, Any]:
    base, ws_base = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}"
    crowd = [Player(i) for i in range(players)]
    gate = asyncio.Semaphore(SETUP_AT_ONCE)

    async def set_up(p: Player) -> None:
        async with gate:
            await _set_up(base, ws_base, p)

    await asyncio.gather(*(set_up(p) for p in crowd))
    print(f"lobby: {players} players with a lobby socket open each", flush=True)

    refused = 0

    async def ask(p: Player) -> None:
        nonlocal refused
        p.asked = time.monotonic()
        assert p.http is not None
        for _ in range(20):
            # Asking twice gives the same entry: a retried request is harmless.
            r = await _request(p.http, "POST", "/api/lobby/quick", json={"pool": POOL, "name": f"P{p.i}"})
            if r.status_code != 503:
                break
            refused += 1  # the database is busy: try again after a second, as the page does
            await asyncio.sleep(1.0)
        out = r.json()
        if r.status_code not in (200, 201):
            raise RuntimeError(f"player {p.i}: {r.status_code} {out}")
        if out["status"] == "paired":
            p.games.add(out["game_id"])
            if p.paired_at is None:
                p.paired_at = time.monotonic()
        p.entry = out["entry_id"]  # type: ignore[attr-defined]

    started = time.monotonic()
    await asyncio.gather(*(ask(p) for p in crowd))
    asked_in = time.monotonic() - started
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(p.paired_at is None for p in crowd):
        await asyncio.sleep(0.05)
    await asyncio.sleep(1.0)  # any second word (there must be none) has time to come
    waits = sorted(p.paired_at - p.asked for p in crowd if p.paired_at is not None)
    games_told = [len(p.games) for p in crowd]

    # The lobby's push: one seeker posts a seek; every socket's push that shows it is timed.
    seeker = crowd[0]
    push: list[float] = []
    missed = 0
    for _ in range(seeks):
        sent = time.monotonic()
        assert seeker.http is not None
        r = await _request(seeker.http, "POST", "/api/lobby/seeks", json={"rules": {"preset": "nintendo"}, "hands": 3})
        seek_id = r.json()["seek_id"]
        until = time.monotonic() + 10
        while time.monotonic() < until and not all(seek_id in p.seen_seeks for p in crowd):
            await asyncio.sleep(0.01)
        for p in crowd:
            if seek_id in p.seen_seeks:
                push.append(p.seen_seeks[seek_id] - sent)
            else:
                missed += 1
        await _request(seeker.http, "DELETE", f"/api/lobby/seeks/{seek_id}")
        await asyncio.sleep(0.6)
    for p in crowd:
        if p.reader is not None:
            p.reader.cancel()
        await p.ws.close()
        if p.http is not None:
            await p.http.aclose()
    return {
        "players": players,
        "asked_in": asked_in,
        "waits": waits,
        "told": games_told,
        "entries": [getattr(p, "entry", None) for p in crowd],
        "push": sorted(push),
        "push_missed": missed,
        "seeks": seeks,
        "refused": refused,
    }


def check_once(database_url: str, entries: list[str | None]) -> tuple[int, int, list[str]]:
    """From the database: (entries paired, games, problems) for the run's entries."""
    from sqlalchemy import create_engine, select

    from koikoi.web.schema import seats, seeks
    from koikoi.web.store import normalise_url

    engine = create_engine(normalise_url(database_url))
    ids = [e for e in entries if e]
    with engine.connect() as conn:
        rows = conn.execute(select(seeks.c.id, seeks.c.owner, seeks.c.game_id).where(seeks.c.id.in_(ids))).all()
        game_ids = sorted({r.game_id for r in rows if r.game_id})
        owners = conn.execute(select(seats.c.game_id, seats.c.owner).where(seats.c.game_id.in_(game_ids))).all()
    engine.dispose()
    problems = []
    if len(rows) != len(ids):
        problems.append(f"{len(ids) - len(rows)} entries are gone from the database")
    unpaired = sum(1 for r in rows if r.game_id is None)
    if unpaired:
        problems.append(f"{unpaired} entries were never paired")
    by_game: dict[str, list[str]] = {}
    for g, owner in owners:
        by_game.setdefault(g, []).append(owner)
    per_game: dict[str, int] = {}
    for r in rows:
        if r.game_id:
            per_game[r.game_id] = per_game.get(r.game_id, 0) + 1
    if any(n != 2 for n in per_game.values()):
        problems.append("a game holds other than two entries")
    if any(len(set(o)) != 2 for o in by_game.values()):
        problems.append("a game seats one player twice")
    owners_seen = [r.owner for r in rows if r.game_id]
    if len(owners_seen) != len(set(owners_seen)):
        problems.append("a player was paired twice")
    return sum(1 for r in rows if r.game_id), len(game_ids), problems


def _ms(xs: list[float], q: float) -> str:
    if not xs:
        return "n/a"
    return f"{1000 * xs[min(len(xs) - 1, int(q * len(xs)))]:.0f} ms"


def print_lobby(out: dict[str, Any], database_url: str, workers: int) -> None:
    n = out["players"]
    paired, games, problems = check_once(database_url, out["entries"])
    told_once = sum(1 for t in out["told"] if t == 1)
    told_more = sum(1 for t in out["told"] if t > 1)
    print(
        f"lobby: {n} players asked for quick pairing ({POOL}) within {1000 * out['asked_in']:.0f} ms, "
        f"koikoi serve --workers {workers}, {database_url.split(':')[0]}; "
        f"requests refused as unavailable (and sent again after 1 s): {out['refused']}"
    )
    print(
        f"paired: {paired} of {n} in the database, {games} games; told once: {told_once}, "
        f"told of two games or more: {told_more}; exactly once: {'yes' if not problems and paired == n else 'NO'}"
        + (f" ({'; '.join(problems)})" if problems else "")
    )
    w = out["waits"]
    print(
        f"time to be paired: {len(w)} players, p50 {_ms(w, 0.5)}, p99 {_ms(w, 0.99)}, "
        f"max {_ms(w, 1.0)} (target: p99 under 2000 ms)"
    )
    p = out["push"]
    print(
        f"lobby push (a new seek shown on every socket): {len(p)} pushes over {out['seeks']} seeks, "
        f"p50 {_ms(p, 0.5)}, p99 {_ms(p, 0.99)}, max {_ms(p, 1.0)}, missed {out['push_missed']}"
    )
