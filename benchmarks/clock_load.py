"""Clocks under load: ``web_load.py --clocks CONTROL`` (this module holds that run; see web_load.py's help).

``--games`` friend games with the real-time control CONTROL (the server it starts offers it through
``koikoi serve --time-control CONTROL``), set up over the HTTP API as two browsers do, ``SETUP_AT_ONCE``
at a time; each game's two seats connect over WebSockets as soon as it is set up (its clock started
when the friend joined) to the server's one port (``--serve-workers N``: the kernel spreads the sockets
over the workers, so most games have a seat on each). The players of a game move, thinking
``--think-min`` to ``--think-max`` s a decision, until a moment drawn for the game between ``--play-min``
and ``--play-max`` s after it was set up (each having made a first move by then: a player who never moves
has the game aborted, not flagged); then they stop, and the player to move runs out of time: the server
ends every game on time, each at its own moment.

It prints, from the database, for each game ended on time: how late the flag was, ``games.updated``
(when the ending was written) minus ``clocks.flagged`` (the deadline it enforced): count, p50, p90,
p99, max and how many are later than 1 s. Besides, as the players saw it: when the finished table
reached each player's socket minus the same deadline. And what the figure depends on: the machine's
load average (``/proc/loadavg``, read every second of the run) and its cores, each worker's flags and
how late its event loop ran (``/api/health?all=1``), and whether a server moved the deadlines on for an
outage (its log says so; there must be none).

    python3 benchmarks/web_load.py --clocks 5+5 --games 1000 --serve-workers 2 \\
        --database-url postgresql://postgres@127.0.0.1:5432/koikoi_bench
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

import httpx
import websockets

__all__ = ["ClockGame", "clock_run", "print_clocks", "lateness_of"]

SETUP_AT_ONCE = 25  # games being set up at once
OPEN_TIMEOUT = 10.0
STOP = 289
SLACK = 60.0  # seconds the run waits, past the last deadline it could have, for the flags still to come


@dataclass
class ClockGame:
    i: int
    game_id: str = ""
    tokens: tuple[str, str] = ("", "")
    stop_at: float = 0.0  # time.time() after which its players move no more (each has made a first move)
    first_moved: list[bool] = field(default_factory=lambda: [False, False])  # per seat
    moves: int = 0  # moves acknowledged
    seen_end: list[float | None] = field(default_factory=lambda: [None, None])  # time.time() of the end, per seat
    ending: dict[str, Any] | None = None
    errors: dict[str, int] = field(default_factory=dict)


@dataclass
class Load:
    """The machine's 1-minute load average, read every second."""

    samples: list[float] = field(default_factory=list)
    client_lag: list[float] = field(default_factory=list)  # how late this process's 50 ms timers fire

    async def watch_lag(self, until: asyncio.Event) -> None:
        """How late the clients' own event loop runs: part of every time the players saw."""
        while not until.is_set():
            t = time.perf_counter()
            await asyncio.sleep(0.05)
            self.client_lag.append(time.perf_counter() - t - 0.05)

    async def watch(self, until: asyncio.Event) -> None:
        while not until.is_set():
            try:
                with open("/proc/loadavg") as f:
                    self.samples.append(float(f.read().split()[0]))
            except (OSError, ValueError, IndexError):
                pass
            try:
                await asyncio.wait_for(until.wait(), 1.0)
            except TimeoutError:
                pass


async def _post(http: httpx.AsyncClient, url: str, body: dict[str, Any], refused: list[int]) -> dict[str, Any]:
    """A browser's request, made again when a kept-alive connection closed just as it was reused, and a
    second later when the server answers 503 (its database is busy), as the page does."""
    transport_errors = 0
    for _ in range(30):
        try:
            r = await http.post(url, json=body)
        except httpx.TransportError:
            transport_errors += 1
            if transport_errors == 3:
                raise
            continue
        if r.status_code != 503:
            r.raise_for_status()
            return r.json()
        refused[0] += 1
        await asyncio.sleep(1.0)
    raise RuntimeError(f"{url}: the server answered 503 thirty times")


async def _set_up(
    host: httpx.AsyncClient, guest: httpx.AsyncClient, g: ClockGame, control: str, refused: list[int]
) -> None:
    made = await _post(host, "/api/games", {"name": f"host{g.i}", "opponent": "friend", "clock": control}, refused)
    joined = await _post(guest, f"/api/invite/{made['invite_token']}/join", {"name": f"guest{g.i}"}, refused)
    g.game_id, g.tokens = made["game_id"], (made["token"], joined["token"])


async def _seat(
    port: int, g: ClockGame, seat: int, think: tuple[float, float], rng: random.Random, give_up: float
) -> None:
    """One player: moves while the game's time to play lasts, then sits until the server ends the game."""
    url = f"ws://127.0.0.1:{port}/ws/{g.tokens[seat]}?game={g.game_id}"
    while time.time() < give_up:
        try:
            ws = await websockets.connect(url, max_size=2**22, open_timeout=OPEN_TIMEOUT)
        except Exception as e:  # a handshake that did not complete: counted, and tried again
            g.errors[f"connect {type(e).__name__}"] = g.errors.get(f"connect {type(e).__name__}", 0) + 1
            await asyncio.sleep(rng.uniform(0.1, 0.5))
            continue
        acted_on = -1
        try:
            async with ws:
                while True:
                    async with asyncio.timeout(max(0.1, give_up - time.time())):
                        raw = await ws.recv()
                    msg = json.loads(raw)
                    kind = msg.get("type")
                    if kind == "ack":
                        g.moves += 1
                        continue
                    if kind == "error":
                        code = msg.get("code", "?")
                        g.errors[code] = g.errors.get(code, 0) + 1
                        continue
                    if kind != "state":
                        continue
                    st = msg["state"]
                    if st["status"] == "finished":
                        g.seen_end[seat] = time.time()
                        g.ending = st["ending"]
                        return
                    if not st["to_move"] or st["seq"] == acted_on:
                        continue
                    acted_on = st["seq"]
                    pause = rng.uniform(*think)
                    # Time to stop playing: this decision is never made, and the player runs out. Each player
                    # makes a first move in any case: one who never moved would have the game aborted (no
                    # result), not flagged, and flags are what this run measures.
                    if g.first_moved[seat] and time.time() + pause >= g.stop_at:
                        continue
                    await asyncio.sleep(pause)
                    legal = st["legal"]
                    action = STOP if STOP in legal else rng.choice(legal)
                    await ws.send(json.dumps({"type": "action", "action": action, "seq": st["seq"]}))
                    g.first_moved[seat] = True
        except TimeoutError:
            return
        except (OSError, websockets.ConnectionClosed):
            await asyncio.sleep(rng.uniform(0.1, 0.5))  # back to the table, as the page does


async def clock_run(port: int, args: Any) -> dict[str, Any]:
    """Set up and play ``args.games`` clocked games on the server at ``port``; what each game saw."""
    from koikoi.clocks import HAND_BREAK, time_control

    control = time_control(args.clocks)
    base = f"http://127.0.0.1:{port}"
    rng = random.Random(args.seed)
    think = (args.think_min, args.think_max)
    games = [ClockGame(i) for i in range(args.games)]
    # The latest deadline a game can have: its time to play, then the decision being made (with a new
    # hand's break) and the whole bank.
    worst = args.play_max + HAND_BREAK + control.per_move + control.bank
    done = asyncio.Event()
    load = Load()
    watchers = [asyncio.create_task(load.watch(done)), asyncio.create_task(load.watch_lag(done))]
    gate = asyncio.Semaphore(SETUP_AT_ONCE)
    seats: list[asyncio.Task[None]] = []
    started = time.time()

    refused = [0]  # set-up requests answered 503 (made again a second later)
    failed: dict[str, int] = {}  # games that could not be set up, by why

    async def begin(g: ClockGame) -> None:
        async with gate:
            try:
                await _set_up(host, guest, g, args.clocks, refused)
            except (httpx.HTTPError, RuntimeError) as e:
                # e.g. a join in doubt after a 503 that had landed: made again, the invitation is spent
                why = f"{type(e).__name__} {getattr(getattr(e, 'response', None), 'status_code', '')}".strip()
                failed[why] = failed.get(why, 0) + 1
                return
        g.stop_at = time.time() + rng.uniform(args.play_min, args.play_max)
        give_up = g.stop_at + worst + SLACK
        for seat in (0, 1):
            seats.append(asyncio.create_task(_seat(port, g, seat, think, random.Random(rng.random()), give_up)))

    # Two browsers set every game up, the hosts' and the guests' (the per-browser limits are raised):
    # a client of its own for each would cost the clients' process more than the server its answers.
    limits = httpx.Limits(max_connections=SETUP_AT_ONCE)
    async with (
        httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as host,
        httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as guest,
    ):
        await asyncio.gather(*(begin(g) for g in games))
    set_up_in = time.time() - started
    games = [g for g in games if g.game_id]
    print(
        f"set up {len(games)} clocked games ({args.clocks}) in {set_up_in:.1f} s (requests answered 503 and made "
        f"again: {refused[0]}; games not set up: {failed or 'none'}); playing",
        flush=True,
    )
    await asyncio.gather(*seats, return_exceptions=True)
    done.set()
    await asyncio.gather(*watchers)
    return {
        "games": games,
        "load": load.samples,
        "client_lag": load.client_lag,
        "set_up_in": set_up_in,
        "seconds": time.time() - started,
    }


def lateness_of(database_url: str, games: list[ClockGame]) -> dict[str, Any]:
    """From the database: each game's ending, and for those ended on time the deadline that ran out and
    when the ending was written."""
    from sqlalchemy import create_engine, select

    from koikoi.web.schema import clocks
    from koikoi.web.schema import games as games_table
    from koikoi.web.store import normalise_url

    engine = create_engine(normalise_url(database_url))
    ids = [g.game_id for g in games if g.game_id]
    rows = []
    with engine.connect() as conn:
        for start in range(0, len(ids), 500):
            q = (
                select(
                    games_table.c.id,
                    games_table.c.status,
                    games_table.c.ending,
                    games_table.c.updated,
                    clocks.c.flagged,
                )
                .join(clocks, clocks.c.game_id == games_table.c.id)
                .where(games_table.c.id.in_(ids[start : start + 500]))
            )
            rows += conn.execute(q).all()
    engine.dispose()
    out: dict[str, Any] = {"endings": {}, "late": {}, "flagged": {}}
    for r in rows:
        key = r.ending if r.status == "finished" else r.status
        out["endings"][str(key)] = out["endings"].get(str(key), 0) + 1
        if r.ending == "time" and r.flagged is not None and r.updated is not None:
            updated = r.updated if r.updated.tzinfo else r.updated.replace(tzinfo=UTC)  # SQLite keeps it naive
            out["late"][r.id] = updated.timestamp() - r.flagged
            out["flagged"][r.id] = r.flagged
    return out


def _ms(xs: list[float], q: float) -> str:
    """The ``q`` quantile of the sorted ``xs`` (seconds), in milliseconds."""
    return f"{1000 * xs[min(len(xs) - 1, int(q * len(xs)))]:.0f} ms"


def _dist(xs: list[float]) -> str:
    if not xs:
        return "none"
    xs = sorted(xs)
    over = sum(1 for x in xs if x > 1.0)
    return (
        f"{len(xs)}, p50 {_ms(xs, 0.5)}, p90 {_ms(xs, 0.9)}, p99 {_ms(xs, 0.99)}, max {_ms(xs, 1.0)}, "
        f"min {_ms(xs, 0.0)}; later than 1 s: {over}"
    )


def print_clocks(out: dict[str, Any], database_url: str, workers: int, health: dict[str, Any] | None, log: str) -> None:
    games: list[ClockGame] = out["games"]
    stored = lateness_of(database_url, games)
    late = list(stored["late"].values())
    print(
        f"clocks: {len(games)} games, {'SQLite' if '://' not in database_url else database_url.split(':')[0]}, "
        f"koikoi serve --workers {workers}; "
        f"the run took {out['seconds']:.0f} s (set-up {out['set_up_in']:.0f} s)"
    )
    print(f"endings in the database: {', '.join(f'{k} {v}' for k, v in sorted(stored['endings'].items()))}")
    print(f"flag lateness (games.updated - clocks.flagged, from the database): {_dist(late)}")
    seen = [
        t - stored["flagged"][g.game_id]
        for g in games
        if g.game_id in stored["flagged"]
        for t in g.seen_end
        if t is not None
    ]
    print(f"the end as the players saw it (finished table on the socket - deadline): {_dist(seen)}")
    lag = sorted(out["client_lag"])
    if lag:
        print(
            f"the clients' own event loop (this process, part of the time the players saw) late by "
            f"p50 {_ms(lag, 0.5)}, p99 {_ms(lag, 0.99)}, max {_ms(lag, 1.0)}"
        )
    unseen = sum(1 for g in games for t in g.seen_end if t is None)
    moves = sum(g.moves for g in games)
    errors: dict[str, int] = {}
    for g in games:
        for k, v in g.errors.items():
            errors[k] = errors.get(k, 0) + v
    print(f"moves acknowledged: {moves}; seats that never saw their game end: {unseen}; errors: {errors or 'none'}")
    loads = out["load"]
    if loads:
        print(
            f"machine load average (1 min) during the run: min {min(loads):.2f}, mean {sum(loads) / len(loads):.2f}, "
            f"max {max(loads):.2f} ({len(loads)} readings); {os.cpu_count()} cores"
        )
    for e in (health or {}).get("all") or ([health] if health else []):
        if isinstance(e, dict):
            loop = e.get("loop") or {}
            print(
                f"worker {e.get('worker')} (pid {e.get('pid')}): flags {e.get('flags', 'n/a')}, event loop late by "
                f"p99 {loop.get('late_ms_p99')} ms, max {loop.get('late_ms_max')} ms (its last minute)"
            )
    moved = log.count("every running clock moved on")
    print(f"deadlines moved on for an outage (server log): {moved} time(s)")
