"""Load on the web app: many concurrent games played by scripted clients over real WebSockets.

Starts ``koikoi serve`` on loopback with a fresh SQLite database (or ``--database-url``), sets up
``--games`` games between two browser-like clients each (created and joined over the HTTP API, as the
invitation link does), then lets both seats of every game play: each seat waits its "thinking" time
when it is to move, sends a legal action and times the round trip until the server's acknowledgement
(the action checked, stored and sent to both seats). No computer opponent is involved, so the figures
are the server's own, without AI thinking time. The server is whichever ``koikoi`` the interpreter
imports (printed as "server code"): to measure another checkout, run with ``PYTHONPATH=<checkout>/src``.

Prints the throughput of actions and the 50th/99th percentile round trip, over a run of
``--seconds`` after a warm-up. Bounded: loopback only, a fixed number of games and a time limit.

    python3 benchmarks/web_load.py --games 500 --seconds 60

Every seat opens its WebSocket at the start, all together (the connection burst), as
``/ws/<token>?game=<game id>`` (a server that routes a game's sockets to one worker reads ``game``;
an older one ignores it). The "connection burst" line says how many sockets opened, how many
handshakes timed out (the client's open timeout, 10 s) or failed (by kind), how many seats got their
first table, and the time from the first connect to the last first table. A socket that fails or is
refused is opened again as the page does it: after 0.5 s, doubling up to 16 s until a table comes (or
after the server's ``retry_after`` where it says one), each wait 0.5 to 1.5 times that. A seat whose
move is refused with the error ``unavailable`` (the database does not answer) sends the same move for
the same table
again, as the page does (after 0.5 s, then every second, or at once when the server says
``available``: its database answers again), until it is acknowledged, or the new table comes (the
first try was stored after all; the retry is then answered ``stale``); such moves are not measured
round trips, and the ``unavailable`` errors are counted apart from the other errors.

Through servers already running (``--url http://127.0.0.1:PORT``, loopback only), such as the documented
deployment behind its proxy (benchmarks/deployment.py starts one and runs this against it): nothing is
started, every client talks to that address, ``--server-pids`` names the processes whose CPU is counted,
and with ``--database-url`` the acknowledged moves are checked in the database.

Scaling out (docs/web.md, "Scaling out"), two ways, both on one ``--database-url`` (PostgreSQL):

- ``--workers N`` starts N separate ``koikoi serve`` processes on N ports, and puts the two seats of each
  game on different processes on purpose, so that every move crosses from one process to the other
  through the database. ``--kill-at S`` kills one process (SIGKILL) S seconds into the measured time:
  its players reconnect to another process, as a load balancer would send them, and the run reports
  the reconnect times. Per process it prints actions per second and the CPU time per action (the
  server and its computer-player workers).
- ``--serve-workers N`` starts one ``koikoi serve --workers N`` (N worker processes under a supervisor,
  on one port; N=1 is a plain ``koikoi serve``) and connects every seat to that port. Per worker (the
  supervisor's child processes, each with its computer-player workers) it prints the CPU time, and
  where ``/api/health?all=1`` reports each worker's ``actions`` (moves it stored), the actions it
  stored in the measured time, per second and the CPU per action; "n/a" where the server does not say.

``--hard-games K`` adds K games against the ``hard`` computer (their human seat played the same way).
Every run ends with the check that no acknowledged action is missing from the database (there must be
none).

    python3 benchmarks/web_load.py --workers 2 --games 1000 --database-url postgresql://... --seconds 60
    python3 benchmarks/web_load.py --serve-workers 2 --games 1000 --database-url postgresql://... --seconds 60

A database that stops answering: ``--stall-db SECONDS --stall-at S`` (PostgreSQL on this machine only;
it signals the server's processes, so it runs as root or as the database's owner) stops every process
of the PostgreSQL server (the postmaster named in ``<data_directory>/postmaster.pid``, the data
directory read with ``SHOW data_directory`` before the run, and all its descendants) with SIGSTOP
S seconds into the measured time, for SECONDS, then sends SIGCONT (always: on an error, Ctrl+C and
SIGTERM too, and a guard process sends it 10 s after the stall's end if the benchmark itself dies). From
2 s before the stall until 5 s after it, ``GET /api/health`` is asked every 50 ms (each on a new
connection, with a 2 s timeout, not waiting for the one before; the clients' own event loop is in the
figure too). Do not use it on a PostgreSQL that others use: it stops all of it. It prints:

- ``health before the stall`` / ``during the stall`` / ``in the 5 s after SIGCONT`` (by when each request
  was sent): requests, p50, p99 and max latency (a failed request counts as the time until it failed, a
  timeout as 2 s), and how many failed or timed out, by kind; with several workers, the slowest answer
  during the stall by the worker that gave it;
- ``after SIGCONT``: the time from SIGCONT to the first acknowledgement of a move sent after it; how many
  games had a move pending at SIGCONT (a seat had sent a move not yet acknowledged, or refused as
  ``unavailable`` and not yet made again) and the time until 90% of them moved again (a seat of the game
  saw a higher move number than at SIGCONT); and the ``unavailable`` errors. After an ``unavailable`` a
  seat may send its move again while the first one is still being stored: the server then answers
  ``stale``, counted with the errors.

    python3 benchmarks/web_load.py --serve-workers 2 --games 200 --seconds 30 --stall-db 5 --stall-at 10 \\
        --database-url postgresql://postgres@127.0.0.1:5432/koikoi_bench

The public lobby (docs/web.md, "The public lobby"): ``--lobby`` runs quick pairing under load instead of
games: ``--players`` guests (500) with a lobby socket each ask for quick pairing at the same moment, on
``--serve-workers N``; it checks on the database that each was paired exactly once, and prints the time
to be paired and the lobby socket's push latency (benchmarks/lobby_load.py says how each is measured).

    python3 benchmarks/web_load.py --lobby --players 500 --serve-workers 2 \\
        --database-url postgresql://postgres@127.0.0.1:5432/koikoi_bench

Clocks (docs/web.md, "Time controls"): ``--clocks CONTROL`` plays ``--games`` friend games with that
real-time control on ``--serve-workers N``; the players of each game move for a while (``--play-min``
to ``--play-max`` s) and then stop, so that every game ends on time, and it prints how late each flag
came (the database's ``games.updated`` minus ``clocks.flagged``: p50, p90, p99, max, how many later
than 1 s) with the machine's load average meanwhile (benchmarks/clock_load.py says how each is measured).

    python3 benchmarks/web_load.py --clocks 5+5 --games 1000 --serve-workers 2 \\
        --database-url postgresql://postgres@127.0.0.1:5432/koikoi_bench

How many games a setup holds: ``--ramp STEP`` adds ``STEP`` games at a time (set up, their seats
connected and playing as above), waits ``--ramp-settle`` seconds after each step's burst, measures the
round trips for ``--ramp-seconds``, and stops at the first step whose p99 passes ``--ramp-p99`` ms (100)
or whose moves were refused (``unavailable``, or any error), or at ``--games``. It prints a line per step
(actions per second, p50, p99, the servers' CPU per action) and "held N games": the last step under
the p99, with nothing refused. Works with ``--workers N`` and ``--serve-workers N``.

    python3 benchmarks/web_load.py --ramp 250 --games 5000 --serve-workers 2 \\
        --database-url postgresql://postgres@127.0.0.1:5432/koikoi_bench

Where the server's time goes: ``--profile PATH`` samples the (first) server process with py-spy
(``pip install py-spy``) over the measured time, writes the samples to ``PATH`` (collapsed stacks, for
``flamegraph.pl`` or speedscope) and prints the functions found in most busy samples.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import ipaddress
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import websockets

STOP = 289
OPEN_TIMEOUT = 10.0  # seconds the client gives a WebSocket handshake (websockets' open_timeout)
HEALTH_EVERY = 0.05  # seconds between two health requests around a database stall
HEALTH_TIMEOUT = 2.0
HEALTH_BEFORE = 2.0  # seconds of health requests before the stall
HEALTH_AFTER = 5.0  # and after it


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Every simulated player comes from 127.0.0.1 and the hosts share one cookie jar, which the per-address
# and per-browser limits would (rightly) refuse: those are raised here. Every other limit is the default.
ONE_ADDRESS_LIMITS = [
    "games_per_minute=100000",
    "open_games_per_browser=100000",
    "sockets_per_address=100000",
    "connections_per_address=100000",
]


def start_server(port: int, database_url: str, data: Path, extra: list[str] | None = None) -> subprocess.Popen:
    env = dict(os.environ, XDG_DATA_HOME=str(data))
    cmd = [
        sys.executable,
        "-c",
        "import sys; from koikoi.cli import main; sys.exit(main())",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--database-url",
        database_url,
        "--ai-delay",
        "0",
    ]
    for limit in ONE_ADDRESS_LIMITS:
        cmd += ["--limit", limit]
    cmd += extra or []
    # The server's log goes to a file: a pipe nobody reads would fill up, and the server's next line
    # would then block its event loop.
    log = open(data / f"server-{port}.log", "wb")  # noqa: SIM115 (the child keeps it open)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=log)
    log.close()
    for _ in range(300):
        if proc.poll() is not None:
            break
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    if proc.poll() is None:
        proc.kill()
    raise SystemExit(f"the server did not start: {(data / f'server-{port}.log').read_text(errors='replace')[-4000:]}")


def server_logs(data: Path) -> list[str]:
    """A line on each server's log: how many lines it wrote, and the last of them."""
    out = []
    for path in sorted(data.glob("server-*.log")):
        lines = path.read_text(errors="replace").splitlines()
        last = f"; the last: {lines[-1][:300]}" if lines else ""
        out.append(f"server log ({path.stem}): {len(lines)} lines, {path.stat().st_size} bytes{last}")
    return out


def get_health(port: int, all_workers: bool = False, timeout: float = 10) -> dict[str, Any] | None:
    """``/api/health`` (``?all=1``: every worker's) on a new connection; None when it does not answer."""
    try:
        r = httpx.get(f"http://127.0.0.1:{port}/api/health" + ("?all=1" if all_workers else ""), timeout=timeout)
        return r.json() if r.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None


def health_entries(health: dict[str, Any] | None, n: int) -> dict[int, dict[str, Any]] | None:
    """Worker slot -> that worker's health, from ``/api/health?all=1`` of a server of ``n`` workers; None
    from a server without ``all`` (for one process, its own health where it counts its ``actions``)."""
    if not isinstance(health, dict):
        return None
    if not isinstance(health.get("all"), list):
        if n == 1 and isinstance(health.get("actions"), int) and isinstance(health.get("pid"), int):
            return {health.get("worker", 0): health}
        return None
    return {e["worker"]: e for e in health["all"] if isinstance(e, dict) and isinstance(e.get("worker"), int)}


def wait_for_workers(port: int, n: int, limit: float = 30) -> None:
    """After ``koikoi serve --workers n`` first answers: wait until every worker answers too (health's
    ``all`` list, or, from a server without it, n different workers or pids seen answering), at most
    ``limit`` s."""
    deadline = time.monotonic() + limit
    seen: set[Any] = set()
    while time.monotonic() < deadline:
        health = get_health(port, all_workers=True, timeout=2)
        entries = health_entries(health, n)
        if entries is not None:
            if len(entries) >= n and all(e.get("ok") for e in entries.values()):
                return
        else:
            health = health or get_health(port, timeout=2)  # ?all=1 may be refused: plain health then
            if health is not None:
                seen.add(health.get("worker", health.get("pid")))
                if len(seen) >= n:
                    return
        time.sleep(0.1)
    print(f"note: not every one of the {n} workers was seen answering within {limit:.0f} s; going on", flush=True)


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (from /proc)."""
    out: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                out += [int(x) for x in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
    except OSError:
        pass
    return out


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (not ``pid`` itself)."""
    out: list[int] = []
    todo = children(pid)
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children(p)
    return out


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of a process and all its descendants (the computer-player workers)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for p in [pid, *descendants(pid)]:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, ValueError, IndexError):
            continue
    return total


@dataclass
class SeatInfo:
    game: int  # the game's index in this run
    game_id: str
    token: str
    home: int  # the index of the port this seat connects to first
    hard: bool  # the human seat of a game against the computer
    retry_after: float = 0.0  # the server turned the socket away and said to come back after this, s
    tries: int = 0  # reconnections since the last table (the page's backoff)


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    hard_latencies: list[float] = field(default_factory=list)  # the human's moves in games against the computer
    errors: int = 0  # errors other than unavailable
    error_codes: dict[str, int] = field(default_factory=dict)
    unavailable: int = 0  # 'unavailable' errors (the database does not answer)
    unavailable_on_moves: int = 0  # ... of which answered a move (the others, a request for the table)
    recording: bool = False
    games_finished: int = 0
    by_port: dict[int, int] = field(default_factory=dict)  # measured actions acknowledged by each process
    acked: dict[str, int] = field(default_factory=dict)  # token -> the highest move number acknowledged to it
    reconnects: list[float] = field(default_factory=list)  # seconds from a lost connection to the table again
    # The connection burst: each seat's handshakes until its first table.
    burst_started: float | None = None  # perf_counter of the first connect
    opened: set[str] = field(default_factory=set)  # seats whose socket opened
    first_table: dict[str, float] = field(default_factory=dict)  # token -> perf_counter of its first table
    handshake_timeouts: int = 0  # before the seat's first table
    handshake_failures: dict[str, int] = field(default_factory=dict)  # kind -> count, before the first table
    later_timeouts: int = 0  # handshakes of reconnections, after a first table
    later_failures: dict[str, int] = field(default_factory=dict)
    # Around a database stall (perf_counter times).
    game_seq: dict[int, int] = field(default_factory=dict)  # game -> the highest move number seen
    outstanding: dict[str, int] = field(default_factory=dict)  # token -> game, while a move of it is unanswered
    stopped_at: float | None = None
    resumed_at: float | None = None
    pending_at_resume: dict[int, int] = field(default_factory=dict)  # game -> its move number at SIGCONT
    moved_after: dict[int, float] = field(default_factory=dict)  # game -> seconds from SIGCONT to its next move
    first_ack_after: float | None = None  # seconds from SIGCONT to the first ack of a move sent after it
    acks_during_stall: int = 0
    # The clients' own event loop: how late a 20 ms timer fires while measuring (a round trip includes it).
    client_lag: list[float] = field(default_factory=list)

    def handshake_failed(self, token: str, e: BaseException) -> None:
        before = token not in self.first_table
        if isinstance(e, TimeoutError):
            if before:
                self.handshake_timeouts += 1
            else:
                self.later_timeouts += 1
            return
        kind = type(e).__name__
        status = getattr(getattr(e, "response", None), "status_code", None)
        if status is not None:
            kind += f" {status}"
        counts = self.handshake_failures if before else self.later_failures
        counts[kind] = counts.get(kind, 0) + 1

    def saw(self, game: int, seq: Any, now: float) -> None:
        """A move number of ``game`` seen by one of its seats (in a state or an acknowledgement)."""
        if not isinstance(seq, int):
            return
        if seq > self.game_seq.get(game, -1):
            self.game_seq[game] = seq
        was = self.pending_at_resume.get(game)
        if was is not None and seq > was and game not in self.moved_after and self.resumed_at is not None:
            self.moved_after[game] = now - self.resumed_at

    def resumed(self, now: float) -> None:
        """SIGCONT sent: note the games that were waiting on the server for a move."""
        self.resumed_at = now
        self.pending_at_resume = {g: self.game_seq.get(g, -1) for g in set(self.outstanding.values())}


async def seat(
    ports: list[int],
    alive: set[int],
    s: SeatInfo,
    stats: Stats,
    think: tuple[float, float],
    rng: random.Random,
    stop_at: float,
) -> None:
    """One player: plays its seat over a WebSocket to process ``s.home``; if that process dies, goes on
    through another (as a load balancer would send it) and times the way back to its table."""
    port = ports[s.home]
    lost_at: list[float | None] = [None]  # when the connection was lost, until the table is back
    while time.monotonic() < stop_at:
        if stats.burst_started is None:
            stats.burst_started = time.perf_counter()
        url = f"ws://127.0.0.1:{port}/ws/{s.token}?game={s.game_id}"
        try:
            ws = await websockets.connect(url, max_size=2**22, open_timeout=OPEN_TIMEOUT)
        except Exception as e:  # the handshake did not complete: counted by kind, then tried again
            stats.handshake_failed(s.token, e)
        else:
            stats.opened.add(s.token)
            try:
                async with ws:
                    await _play(ws, port, s, stats, think, rng, stop_at, lost_at)
                    return
            except (OSError, websockets.ConnectionClosed, TimeoutError):
                pass
        if lost_at[0] is None:
            lost_at[0] = time.perf_counter()
        others = [p for p in ports if p in alive and p != port] or [p for p in ports if p in alive]
        if not others:
            return
        port = others[rng.randrange(len(others))]
        # As the page (table.js): 0.5 s, doubling up to 16 s until a table comes, or the server's
        # retry_after if longer, each time 0.5 to 1.5 times that.
        s.tries = min(s.tries + 1, 6)
        wait = max(0.25 * 2**s.tries, s.retry_after) * rng.uniform(0.5, 1.5)
        s.retry_after = 0.0
        await asyncio.sleep(wait)


async def _play(
    ws: Any,
    port: int,
    s: SeatInfo,
    stats: Stats,
    think: tuple[float, float],
    rng: random.Random,
    stop_at: float,
    lost_at: list[float | None],
) -> None:
    state = None
    sent_at: float | None = None
    acted_on = -1  # the seq of the last state this seat answered
    sent_seq = -1
    refreshing = False  # after 'unavailable': waiting for the table asked for again
    last_move: tuple[int, int] = (0, 0)  # (action, seq) of the last move sent
    retry: tuple[int, int] | None = None  # a move refused as unavailable, being sent again
    tries = 0  # ... how many times so far
    again_at: float | None = None  # when to send it again (or ask for the table again), monotonic
    token = s.token

    async def send_again() -> None:
        nonlocal again_at
        again_at = None
        if retry is not None:
            await ws.send(json.dumps({"type": "action", "action": retry[0], "seq": retry[1]}))
        elif refreshing:
            await ws.send(json.dumps({"type": "state"}))

    while time.monotonic() < stop_at:
        until = stop_at if again_at is None else min(stop_at, again_at)
        try:
            # asyncio.timeout, not wait_for: no task made per message (the clients share the servers' cores).
            async with asyncio.timeout(max(0.0 if again_at is not None else 0.1, until - time.monotonic())):
                raw = await ws.recv()
        except TimeoutError:
            if again_at is not None and time.monotonic() < stop_at:
                await send_again()
                continue
            return
        now = time.perf_counter()
        msg = json.loads(raw)
        kind = msg.get("type")
        if kind == "available":  # the database answers again: as the page, send the refused move now
            if again_at is not None:
                await send_again()
            continue
        if kind == "ack":
            if sent_at is not None:
                if stats.recording:
                    (stats.hard_latencies if s.hard else stats.latencies).append(now - sent_at)
                    stats.by_port[port] = stats.by_port.get(port, 0) + 1
                if stats.resumed_at is not None and sent_at >= stats.resumed_at and stats.first_ack_after is None:
                    stats.first_ack_after = now - stats.resumed_at
            if stats.stopped_at is not None and stats.resumed_at is None:
                stats.acks_during_stall += 1
            stats.acked[token] = max(stats.acked.get(token, 0), msg["seq"])
            stats.saw(s.game, msg["seq"], now)
            stats.outstanding.pop(token, None)
            sent_at = None
            retry, tries = None, 0
        elif kind == "error":
            code = msg.get("code", "?")
            if isinstance(msg.get("retry_after"), (int, float)):  # the socket is turned away: when to come back
                s.retry_after = min(float(msg["retry_after"]), 60.0)
            if msg.get("state") is not None:
                state = msg["state"]
            if code == "unavailable":
                # The database did not answer (the move may or may not be stored): not a measured round
                # trip. As the page does, send the same move for the same table again in half a second;
                # if the first one was stored after all, the new table comes and this one is "stale".
                stats.unavailable += 1
                if retry is not None or sent_at is not None:
                    stats.unavailable_on_moves += 1
                    retry = retry or last_move
                    sent_at = None
                    tries += 1
                    again_at = time.monotonic() + 0.5 * min(tries, 2)  # as the page: after 0.5 s, then every 1 s
                    continue
                refreshing = True
                again_at = time.monotonic() + rng.uniform(0.3, 0.6)
                continue
            retry, tries = None, 0
            stats.errors += 1
            stats.error_codes[code] = stats.error_codes.get(code, 0) + 1
            sent_at = None
            stats.outstanding.pop(token, None)
        elif kind == "state":
            state = msg["state"]
            s.tries = 0
            if retry is not None and state["seq"] > retry[1]:
                retry, tries = None, 0  # the table moved on: the move in doubt was stored
            if token not in stats.first_table:
                stats.first_table[token] = now
            if lost_at[0] is not None:
                stats.reconnects.append(now - lost_at[0])
                lost_at[0] = None
            if refreshing:  # the table asked for after 'unavailable': a move refused then may be made again
                refreshing = False
                acted_on = -1
            if state["seq"] > sent_seq:
                stats.outstanding.pop(token, None)
        else:
            continue
        if state is None or refreshing:
            continue
        stats.saw(s.game, state["seq"], now)
        if state["match_over"]:
            stats.games_finished += 1
            return
        # The state that follows our own move can already be ours again (a capture choice, koi-koi):
        # it arrives before the acknowledgement, so the move is made once both are in.
        if state["to_move"] and sent_at is None and state["seq"] != acted_on:
            await asyncio.sleep(rng.uniform(*think))
            legal = state["legal"]
            action = STOP if STOP in legal else rng.choice(legal)
            acted_on = state["seq"]
            sent_seq = state["seq"]
            sent_at = time.perf_counter()
            stats.outstanding[token] = s.game
            last_move = (action, sent_seq)
            await ws.send(json.dumps({"type": "action", "action": action, "seq": sent_seq}))


async def watch_lag(stats: Stats, stop_at: float) -> None:
    """How late the clients' event loop wakes a 20 ms timer, until ``stop_at``."""
    while time.monotonic() < stop_at:
        t = time.perf_counter()
        await asyncio.sleep(0.02)
        stats.client_lag.append(time.perf_counter() - t - 0.02)


async def set_up(
    ports: list[int], games: int, hard_games: int, first: int = 0
) -> list[tuple[int, str, int, str | None, str]]:
    """Create the games and join them, as two browsers per game, the host on one process and the guest
    on the next; returns (host's process, host's token, guest's process, guest's token or None for a
    game against the computer, game id). ``first``: the number of the first game (games set up
    earlier in the run come before it)."""
    n = len(ports)
    limits = httpx.Limits(max_connections=50)
    hosts = [httpx.AsyncClient(base_url=f"http://127.0.0.1:{p}", timeout=60, limits=limits) for p in ports]
    try:

        async def one(i: int) -> tuple[int, str, int, str | None, str]:
            home, away = i % n, (i + 1) % n
            hard = i - first >= games
            r = await hosts[home].post(
                "/api/games",
                json={"name": f"host{i}", "opponent": "hard" if hard else "friend", "rules": {"preset": "nintendo"}},
            )
            r.raise_for_status()
            g = r.json()
            if hard:  # the human plays from the other process, which must hear the computer's moves
                return away, g["token"], away, None, g["game_id"]
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{ports[away]}", timeout=60) as guest:
                r = await guest.post(f"/api/invite/{g['invite_token']}/join", json={"name": f"guest{i}"})
                r.raise_for_status()
            # the guest's own seat token, made when joining
            return home, g["token"], away, r.json()["token"], g["game_id"]

        async def retried(i: int) -> tuple[int, str, int, str | None, str]:
            # A kept-alive connection may be closed by the server (its keep-alive limit) just as the
            # client reuses it, on a loaded machine: set that game up again, from the start.
            for attempt in range(3):
                try:
                    return await one(i)
                except httpx.TransportError:
                    if attempt == 2:
                        raise
            raise AssertionError("unreachable")

        out: list[tuple[int, str, int, str | None, str]] = []
        end = first + games + hard_games
        for start in range(first, end, 50):
            out += await asyncio.gather(*(retried(i) for i in range(start, min(end, start + 50))))
        return out
    finally:
        for h in hosts:
            await h.aclose()


def _loop_factory():
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvicorn[standard] brings it
        return None
    return uvloop.new_event_loop


# The PostgreSQL processes stopped by a stall and not yet continued: main() continues them if all else
# failed (and a guard process does, if this one dies).
_STOPPED: list[int] = []


def _local_host(host: str) -> bool:
    if not host or host.startswith("/") or host.startswith("@") or host == "localhost":
        return True  # a Unix socket (a directory, or an abstract one) or the loopback name
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class DatabaseStall:
    """Stops every process of a PostgreSQL server on this machine (SIGSTOP) and continues them (SIGCONT)."""

    def __init__(self, database_url: str) -> None:
        url = re.sub(r"^postgres(ql)?(\+\w+)?://", "postgresql://", database_url)
        if not url.startswith("postgresql://"):
            raise SystemExit("--stall-db stops a PostgreSQL server: it needs --database-url postgresql://...")
        try:
            import psycopg
            from psycopg.conninfo import conninfo_to_dict
        except ImportError:
            raise SystemExit("--stall-db needs psycopg: pip install '.[postgres]'") from None
        hosts = str(conninfo_to_dict(url).get("host") or os.environ.get("PGHOST", "")).split(",")
        if not all(_local_host(h) for h in hosts):
            raise SystemExit(
                f"--stall-db stops the PostgreSQL server's own processes, so the server must run on this "
                f"machine: the --database-url's host ({','.join(hosts)}) is not localhost, 127.x, ::1 or a "
                f"Unix socket"
            )
        try:
            with psycopg.connect(url, connect_timeout=10) as conn:
                row = conn.execute("SHOW data_directory").fetchone()
        except psycopg.Error as e:
            raise SystemExit(f"--stall-db: could not read the server's data_directory ({e})") from None
        self.data_directory = Path(str(row[0]) if row else "")
        pidfile = self.data_directory / "postmaster.pid"
        try:
            self.postmaster = int(pidfile.read_text().split("\n", 1)[0])
        except (OSError, ValueError) as e:
            raise SystemExit(
                f"--stall-db: cannot read the postmaster's pid from {pidfile} ({e}): the PostgreSQL server must "
                "run on this machine, and the benchmark may need to run as root"
            ) from None
        try:
            cwd = Path(os.readlink(f"/proc/{self.postmaster}/cwd")).resolve()
        except OSError as e:
            raise SystemExit(f"--stall-db: no process {self.postmaster} of PostgreSQL here ({e})") from None
        if cwd != self.data_directory.resolve():
            raise SystemExit(
                f"--stall-db: process {self.postmaster} (from {pidfile}) is not that PostgreSQL server (its "
                f"folder is {cwd}): is the server in a container or on another machine?"
            )
        try:
            os.kill(self.postmaster, 0)
        except PermissionError:
            raise SystemExit(
                f"--stall-db: not allowed to signal PostgreSQL's process {self.postmaster}: run as root or as "
                "the database's owner"
            ) from None
        self.guard: subprocess.Popen | None = None
        self.processes = 0

    def stop(self, seconds: float) -> None:
        # The postmaster first, so that it starts no new process; then all it has started (twice over,
        # for one that was being started at that moment).
        for pid in [self.postmaster, *descendants(self.postmaster), *descendants(self.postmaster)]:
            if pid in _STOPPED:
                continue
            try:
                os.kill(pid, signal.SIGSTOP)
                _STOPPED.append(pid)
            except ProcessLookupError:
                continue
        self.processes = len(_STOPPED)
        # Should this process die before it continues them, a guard does, a little after the stall's end.
        pids = " ".join(str(p) for p in _STOPPED)
        self.guard = subprocess.Popen(
            ["sh", "-c", f"sleep {seconds + 10:.0f}; kill -CONT {pids} 2>/dev/null"],
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def resume(self) -> None:
        resume_stopped()
        if self.guard is not None and self.guard.poll() is None:
            os.killpg(self.guard.pid, signal.SIGTERM)  # its own session: the guard and its sleep
            self.guard.wait()
        self.guard = None


def resume_stopped() -> None:
    while _STOPPED:
        pid = _STOPPED.pop()  # the postmaster last
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            continue


@dataclass
class Probe:
    started: float  # perf_counter
    latency: float
    failure: str | None  # None: answered 200
    worker: Any = None  # which worker answered (health's 'worker', else its 'pid')


async def stall_db(stall: DatabaseStall, stats: Stats, at: float, seconds: float) -> None:
    await asyncio.sleep(max(0.0, at - time.monotonic()))
    try:
        stats.stopped_at = time.perf_counter()
        stall.stop(seconds)
        print(
            f"stopped PostgreSQL (postmaster {stall.postmaster}, {stall.processes} processes) for {seconds:g} s",
            flush=True,
        )
        await asyncio.sleep(seconds)
    finally:
        stall.resume()
        stats.resumed(time.perf_counter())
    print("PostgreSQL continued (SIGCONT)", flush=True)


async def poll_health(ports: list[int], alive: set[int], start_at: float, stats: Stats, limit: float) -> list[Probe]:
    """``GET /api/health`` every 50 ms from ``start_at`` until 5 s after the stall (``limit`` at most),
    each on a new connection with a 2 s timeout, not waiting for the one before."""
    probes: list[Probe] = []
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    # No kept-alive connections: each request is a new connection, which the kernel may hand to any worker.
    limits = httpx.Limits(max_connections=200, max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=HEALTH_TIMEOUT, limits=limits) as client:

        async def one(port: int) -> None:
            t0 = time.perf_counter()
            failure = None
            worker = None
            try:
                r = await client.get(f"http://127.0.0.1:{port}/api/health")
                if r.status_code != 200:
                    failure = f"HTTP {r.status_code}"
                else:
                    h = r.json()
                    worker = h.get("worker", h.get("pid"))
            except httpx.TimeoutException:
                failure = "timeout"
            except (httpx.HTTPError, ValueError) as e:
                failure = type(e).__name__
            probes.append(Probe(t0, time.perf_counter() - t0, failure, worker))

        pending: list[asyncio.Task] = []
        i = 0
        begun = time.monotonic()
        while time.monotonic() < limit:
            if stats.resumed_at is not None and time.perf_counter() > stats.resumed_at + HEALTH_AFTER:
                break
            targets = [p for p in ports if p in alive] or ports
            pending.append(asyncio.create_task(one(targets[i % len(targets)])))
            i += 1
            await asyncio.sleep(max(0.0, begun + i * HEALTH_EVERY - time.monotonic()))
        await asyncio.gather(*pending, return_exceptions=True)
    return probes


@dataclass
class Worker:
    slot: int | None  # the worker's number, where health says it
    pid: int
    cpu: float = 0.0  # CPU seconds in the measured time (its computer-player workers included)
    actions: int | None = None  # moves it stored in the measured time, where health says it
    sockets: int | None = None  # its open WebSockets at the start of the measured time
    note: str = ""


def find_workers(server: subprocess.Popen, n: int, entries: dict[int, dict[str, Any]] | None) -> list[Worker]:
    """The worker processes of ``koikoi serve --workers n``: from health's ``all`` where it has them, and
    the supervisor's other child processes; for n=1, the server itself."""
    if n == 1:
        return [Worker(next(iter(entries)) if entries and len(entries) == 1 else 0, server.pid)]
    found: list[Worker] = []
    for slot, e in sorted((entries or {}).items()):
        if isinstance(e.get("pid"), int):
            found.append(Worker(slot, e["pid"]))
    known = {w.pid for w in found}
    found += [Worker(None, pid) for pid in sorted(children(server.pid)) if pid not in known]
    return found


def worker_window(
    before: list[Worker],
    entries_before: dict[int, dict[str, Any]] | None,
    after: list[Worker],
    entries_after: dict[int, dict[str, Any]] | None,
    cpu_now: dict[int, float],
) -> list[Worker]:
    """The workers over the measured time: ``before`` with their CPU time then, ``after`` found at its end
    with ``cpu_now``; the actions each stored meanwhile where health counts them before and after, in the
    same process."""
    was_by_pid = {w.pid: w for w in before}
    out: list[Worker] = []
    for w in after:
        was = was_by_pid.pop(w.pid, None)
        w.cpu = cpu_now.get(w.pid, 0.0) - (was.cpu if was else 0.0)
        if was is None:
            w.note = "started during the run"
        else:
            w.sockets = was.sockets
            w.slot = w.slot if w.slot is not None else was.slot
        b = (entries_before or {}).get(w.slot) if w.slot is not None else None
        e = (entries_after or {}).get(w.slot) if w.slot is not None else None
        if b and e and b.get("pid") == e.get("pid") == w.pid:
            if isinstance(b.get("actions"), int) and isinstance(e.get("actions"), int):
                w.actions = e["actions"] - b["actions"]
        out.append(w)
    for w in was_by_pid.values():  # ended during the run: its CPU time went with it
        w.note = "ended during the run"
        w.cpu = 0.0
        out.append(w)
    return out


async def run(
    args: argparse.Namespace, ports: list[int], servers: list[subprocess.Popen], stall: DatabaseStall | None
) -> tuple[Stats, dict[str, Any]]:
    # The clients are the measuring instrument: with the collector's defaults their own pauses (up to
    # 300 ms with 2,000 sockets) would be counted in the servers' round trips. As koikoi serve does
    # (koikoi.web.server.GC_THRESHOLDS), young objects get 50,000 allocations to die in first.
    gc.set_threshold(50_000, 20, 10)
    t0 = time.perf_counter()
    pairs = await set_up(ports, args.games, args.hard_games)
    gc.collect()
    gc.freeze()  # the games set up, kept to the end: out of every collection
    print(f"set up {len(pairs)} games in {time.perf_counter() - t0:.1f} s", flush=True)
    stats = Stats()
    rng = random.Random(args.seed)
    stop_at = time.monotonic() + args.warmup + args.seconds
    alive = set(ports)
    tasks = []
    think = (args.think_min, args.think_max)
    for i, (home, a, away, b, game_id) in enumerate(pairs):
        seats = [SeatInfo(i, game_id, a, home, b is None)]
        if b is not None:
            seats.append(SeatInfo(i, game_id, b, away, False))
        for s in seats:
            tasks.append(asyncio.create_task(seat(ports, alive, s, stats, think, random.Random(rng.random()), stop_at)))
            await asyncio.sleep(0)  # open the sockets a few at a time, as players arrive
    await asyncio.sleep(args.warmup)
    stats.recording = True
    serving = args.serve_workers is not None
    workers_before: list[Worker] = []
    entries_before = None
    if serving:
        entries_before = health_entries(await asyncio.to_thread(get_health, ports[0], True), args.serve_workers)
        workers_before = find_workers(servers[0], args.serve_workers, entries_before)
        # The CPU figures read the supervisor's process tree: say so if health answers from elsewhere.
        tree = {servers[0].pid, *descendants(servers[0].pid)}
        for _ in range(2 * args.serve_workers):
            h = await asyncio.to_thread(get_health, ports[0], False, 2)
            if h is not None and isinstance(h.get("pid"), int) and h["pid"] not in tree:
                print(f"note: pid {h['pid']} answered health but is not under the server: its CPU is not counted")
                break
        for w in workers_before:
            w.cpu = cpu_seconds(w.pid)
            e = (entries_before or {}).get(w.slot) if w.slot is not None else None
            if e is not None and isinstance(e.get("sockets"), int):
                w.sockets = e["sockets"]
    cpu: dict[Any, float] = {p: cpu_seconds(s.pid) for p, s in zip(ports, servers)}
    if args.url is not None:  # the caller's processes, by id
        cpu = {f"pid {pid}": cpu_seconds(pid) for pid in args.pids}
    client_cpu = time.process_time()
    measured_from = time.monotonic()
    lag_watch = asyncio.create_task(watch_lag(stats, stop_at))
    print(f"{len(tasks)} connections open; measuring for {args.seconds:.0f} s", flush=True)
    profiler = start_profile(args.profile, servers[0].pid, args.seconds) if args.profile else None
    side: list[asyncio.Task] = []
    poller: asyncio.Task | None = None
    if stall is not None:
        at = measured_from + args.stall_at
        side.append(asyncio.create_task(stall_db(stall, stats, at, args.stall_db)))
        limit = at + args.stall_db + HEALTH_AFTER + 1
        poller = asyncio.create_task(poll_health(ports, alive, at - HEALTH_BEFORE, stats, limit))
        side.append(poller)
    killed = None
    try:
        if args.kill_at is not None:
            await asyncio.sleep(args.kill_at)
            killed = ports[0]
            cpu[killed] = cpu_seconds(servers[0].pid) - cpu[killed]
            alive.discard(killed)
            servers[0].kill()
            print(f"killed the process on port {killed} (SIGKILL) {args.kill_at:g} s into the run", flush=True)
        await asyncio.gather(*tasks, return_exceptions=True)
        for p, s in zip(ports, servers):
            if p != killed:
                cpu[p] = cpu_seconds(s.pid) - cpu[p]
        if args.url is not None:
            cpu = {k: cpu_seconds(int(k.split()[1])) - v for k, v in cpu.items()}
        workers: list[Worker] = []
        if serving:
            entries_after = health_entries(await asyncio.to_thread(get_health, ports[0], True), args.serve_workers)
            found = find_workers(servers[0], args.serve_workers, entries_after)
            cpu_now = {w.pid: cpu_seconds(w.pid) for w in found}
            workers = worker_window(workers_before, entries_before, found, entries_after, cpu_now)
        await asyncio.gather(*side)
    finally:
        if profiler is not None:
            await asyncio.to_thread(profiler.wait)
            print(f"profile of the process on port {ports[0]} over the measured time: {args.profile}")
            print_profile(args.profile)
        for t in side:
            t.cancel()
        await asyncio.gather(*side, return_exceptions=True)  # the stall's finally continues PostgreSQL
    lag_watch.cancel()
    loops: dict[str, Any] = {}  # where the servers report it: how late their event loops ran, last minute
    for p in ports:
        if p == killed:
            continue
        h = await asyncio.to_thread(get_health, p, serving, 5)
        for e in (h or {}).get("all") or ([h] if h else []):
            if isinstance(e, dict) and isinstance(e.get("loop"), dict):
                loops[f"port {p} worker {e.get('worker', 0)} (pid {e.get('pid')})"] = e["loop"]
    info = {
        "loops": loops,
        "client_cpu": time.process_time() - client_cpu,
        "cpu": cpu,
        "killed": killed,
        "seconds": time.monotonic() - measured_from,
        "pairs": pairs,
        "workers": workers,
        "probes": poller.result() if poller is not None and not poller.cancelled() else [],
    }
    return stats, info


def start_profile(path: str, pid: int, seconds: float) -> subprocess.Popen:
    """py-spy sampling the server process (pid) for the measured time, written to ``path`` in the "raw"
    (collapsed stacks) format: ``flamegraph.pl`` or speedscope read it, and ``grep -c`` counts in it."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        raise SystemExit("--profile needs py-spy (pip install py-spy)")
    return subprocess.Popen(
        [
            spy,
            "record",
            "--pid",
            str(pid),
            "--duration",
            str(max(1, int(seconds))),
            "--rate",
            "200",
            "--format",
            "raw",
            "--output",
            path,
            "--nonblocking",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def print_profile(path: str, top: int = 25) -> None:
    """The functions the server spent its samples in, counted once per sample wherever they are on the
    stack (inclusive), the idle event loop's wait left out: the hot path, by share of busy samples."""
    inclusive: dict[str, int] = {}
    busy = 0
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as e:
        print(f"profile: cannot read {path}: {e}")
        return
    for line in lines:
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        if any(idle in frames[-1] for idle in ("select (selectors.py", "epoll", "Condition.wait (threading.py")):
            continue  # waiting for the network, or a database thread waiting for work: idle
        n = int(count)
        busy += n
        for name in {f.split(" (")[0] + " (" + f.split(" (")[-1].split(":")[0] for f in frames}:
            inclusive[name] = inclusive.get(name, 0) + n
    if not busy:
        print("profile: no busy samples")
        return
    print(f"profile: {busy} busy samples; by share of them (inclusive):")
    for name, n in sorted(inclusive.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {100 * n / busy:5.1f} %  {name}")


async def ramp(args: argparse.Namespace, ports: list[int], servers: list[subprocess.Popen]) -> Stats:
    """Games added ``--ramp`` at a time (their seats connect and play, as in a plain run), each step
    measured for ``--ramp-seconds`` once its sockets are in (``--ramp-settle``), until a step's round
    trip p99 passes ``--ramp-p99`` ms, a move is refused ``unavailable``, or ``--games`` are playing:
    prints a line per step and the games held (the last step under the p99)."""
    gc.set_threshold(50_000, 20, 10)
    stats = Stats()
    stats.recording = True
    rng = random.Random(args.seed)
    alive = set(ports)
    think = (args.think_min, args.think_max)
    stop_at = time.monotonic() + 24 * 3600  # the seats play until the ramp ends, and are stopped then
    tasks: list[asyncio.Task] = []
    held, total, worst = 0, 0, ""
    lag_watch = asyncio.create_task(watch_lag(stats, stop_at))
    try:
        while total < args.games:
            n = min(args.ramp, args.games - total)
            pairs = await set_up(ports, n, 0, first=total)
            for i, (home, a, away, b, game_id) in enumerate(pairs, start=total):
                for s in [SeatInfo(i, game_id, a, home, False), SeatInfo(i, game_id, b or "", away, False)]:
                    tasks.append(
                        asyncio.create_task(seat(ports, alive, s, stats, think, random.Random(rng.random()), stop_at))
                    )
                    await asyncio.sleep(0)
            total += n
            await asyncio.sleep(args.ramp_settle)
            stats.latencies.clear()
            unavailable, errors = stats.unavailable, stats.errors
            cpu = sum(cpu_seconds(p.pid) for p in servers)
            await asyncio.sleep(args.ramp_seconds)
            cpu = sum(cpu_seconds(p.pid) for p in servers) - cpu
            lat = sorted(stats.latencies)
            refused, failed = stats.unavailable - unavailable, stats.errors - errors
            p99 = _ms(lat, 0.99) if lat else float("inf")
            per = f"{cpu / len(lat) * 1000:.2f} ms CPU per action" if lat else "no actions"
            print(
                f"ramp: {total} games: {len(lat) / args.ramp_seconds:.1f} actions/s, round trip p50 "
                f"{_ms(lat, 0.5) if lat else float('nan'):.1f} ms, p99 {p99:.1f} ms; {per}; unavailable "
                f"{refused}, errors {failed}; first tables {len(stats.first_table)} of {2 * total}",
                flush=True,
            )
            if p99 >= args.ramp_p99 or refused or failed:
                worst = f"; at {total} games p99 {p99:.1f} ms, unavailable {refused}, errors {failed}"
                break
            held = total
    finally:
        lag_watch.cancel()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    print(
        f"ramp result: held {held} games (steps of {args.ramp}) at round trip p99 under {args.ramp_p99:g} ms, "
        f"with no move refused{worst or ' (the most asked for, --games)'}"
    )
    return stats


def lost_actions(database_url: str, stats: Stats) -> tuple[int, int]:
    """(acknowledged actions missing from the database, seats checked)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from koikoi.web.store import Store

    store = Store(database_url)
    lost = 0
    try:
        for token, acked in stats.acked.items():
            seat = store.seat(token)
            game = store.game(seat.game_id) if seat else None
            if game is None or game.moves < acked:
                lost += 1
    finally:
        store.close()
    return lost, len(stats.acked)


def _ms(xs: list[float], q: float) -> float:
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000


def _kinds(counts: dict[str, int]) -> str:
    return " (" + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) + ")" if counts else ""


def print_burst(stats: Stats, seats: int) -> None:
    firsts = sorted(stats.first_table.values())
    start = stats.burst_started or 0.0
    span = f"{firsts[-1] - start:.2f} s" if firsts else "n/a"
    each = sorted(t - start for t in firsts)
    per = f" (per seat p50 {_ms(each, 0.5) / 1000:.2f} s, p99 {_ms(each, 0.99) / 1000:.2f} s)" if each else ""
    print(
        f"connection burst: {seats} seats, {len(stats.opened)} sockets opened, {stats.handshake_timeouts} handshake "
        f"timeouts (open timeout {OPEN_TIMEOUT:g} s), {sum(stats.handshake_failures.values())} failed"
        f"{_kinds(stats.handshake_failures)}, {len(firsts)} got their first table; first connect -> last first "
        f"table {span}{per}"
    )
    if stats.later_timeouts or stats.later_failures:
        print(
            f"reconnection handshakes: {stats.later_timeouts} timed out, "
            f"{sum(stats.later_failures.values())} failed{_kinds(stats.later_failures)}"
        )


def print_stall(args: argparse.Namespace, stats: Stats, probes: list[Probe]) -> None:
    stopped, resumed = stats.stopped_at, stats.resumed_at
    if stopped is None or resumed is None:
        print("database stall: did not happen")
        return
    print(
        f"database stall: PostgreSQL stopped {args.stall_at:g} s into the measured time for "
        f"{resumed - stopped:.2f} s; {stats.acks_during_stall} acknowledgements arrived meanwhile"
    )

    def line(name: str, ps: list[Probe]) -> str:
        took = sorted(p.latency for p in ps)  # a failed request: the time until it failed (a timeout: 2 s)
        failed: dict[str, int] = {}
        for p in ps:
            if p.failure is not None:
                failed[p.failure] = failed.get(p.failure, 0) + 1
        times = (
            f"p50 {_ms(took, 0.5):.1f} ms, p99 {_ms(took, 0.99):.1f} ms, max {took[-1] * 1000:.1f} ms"
            if took
            else "none sent"
        )
        return (
            f"health {name}: {len(ps)} requests, {times} (a failure counts as the time until it failed); "
            f"{sum(failed.values())} failed/timed out{_kinds(failed)}"
        )

    print(line("before the stall", [p for p in probes if p.started < stopped]))
    during = [p for p in probes if stopped <= p.started < resumed]
    print(line("during the stall", during))
    print(line(f"in the {HEALTH_AFTER:g} s after SIGCONT", [p for p in probes if p.started >= resumed]))
    by_worker: dict[Any, float] = {}
    for p in during:
        if p.worker is not None:
            by_worker[p.worker] = max(by_worker.get(p.worker, 0.0), p.latency)
    if len(by_worker) > 1:
        worst = ", ".join(f"{k}: {v * 1000:.0f} ms" for k, v in sorted(by_worker.items(), key=lambda kv: str(kv[0])))
        print(f"health during the stall, slowest answer by worker: {worst}")
    first = f"{stats.first_ack_after:.2f} s" if stats.first_ack_after is not None else "none"
    pending = len(stats.pending_at_resume)
    moved = sorted(stats.moved_after.values())
    need = -(-9 * pending // 10)  # 90%, rounded up
    ninety = f"{moved[need - 1]:.2f} s" if pending and len(moved) >= need else "not reached"
    print(
        f"after SIGCONT: first acknowledged move sent after it {first}; {pending} games had a move pending, "
        f"90% of them moved again after {ninety} ({len(moved)} of {pending} by the end); "
        f"unavailable {stats.unavailable}"
    )


def print_workers(args: argparse.Namespace, info: dict[str, Any], stats: Stats, port: int) -> None:
    workers: list[Worker] = info["workers"]
    total = info["cpu"][port]
    n = stats.by_port.get(port, 0)
    per = f"{total / n * 1000:.2f} ms CPU per action" if n else "no actions"
    how = f"koikoi serve --workers {args.serve_workers}" if args.serve_workers > 1 else "koikoi serve"
    print(
        f"server on port {port} ({how}, {len(workers)} worker process(es) seen): {n} actions = "
        f"{n / args.seconds:.1f} per second; {total:.1f} s CPU, {per}"
    )
    for w in sorted(workers, key=lambda w: (w.slot is None, w.slot or 0, w.pid)):
        name = f"worker {w.slot}" if w.slot is not None else "worker"
        if w.actions is None:
            acts = "actions n/a"
        elif w.actions:
            acts = (
                f"{w.actions} actions = {w.actions / args.seconds:.1f} per second, "
                f"{w.cpu / w.actions * 1000:.2f} ms CPU per action"
            )
        else:
            acts = "0 actions"
        socks = f"; {w.sockets} sockets at the start" if w.sockets is not None else ""
        note = f" ({w.note})" if w.note else ""
        print(f"  {name} (pid {w.pid}){note}: {w.cpu:.1f} s CPU; {acts}{socks}")
    if args.serve_workers > 1:
        rest = max(0.0, total - sum(w.cpu for w in workers))
        print(f"  supervisor (pid {info['supervisor_pid']}) and the rest: {rest:.1f} s CPU")


def lobby_main(args: argparse.Namespace) -> None:
    """``--lobby``: quick pairing under load on one ``koikoi serve --workers N`` (benchmarks/lobby_load.py)."""
    from lobby_load import print_lobby

    workers = args.serve_workers or 1
    if workers > 1 and not args.database_url:
        raise SystemExit("--serve-workers above 1 needs --database-url postgresql://... (SQLite: one process)")
    import koikoi

    print(f"server code: {Path(koikoi.__file__).resolve().parent}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or str(Path(tmp) / "lobby.db")
        port = free_port()
        extra = ["--workers", str(workers)] if workers > 1 else []
        extra += ["--limit", "seeks_per_minute=100000", "--limit", f"lobby_sockets={args.players + 100}"]
        server = start_server(port, url, Path(tmp), extra)
        try:
            if workers > 1:
                wait_for_workers(port, workers)
            with asyncio.Runner(loop_factory=_loop_factory()) as runner:
                out = runner.run(lobby_load_run(port, args))
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        print_lobby(out, url, workers)


def clock_main(args: argparse.Namespace) -> None:
    """``--clocks CONTROL``: clocked games that run out of time under load (benchmarks/clock_load.py)."""
    from clock_load import clock_run, print_clocks

    workers = args.serve_workers or 1
    import koikoi

    print(f"server code: {Path(koikoi.__file__).resolve().parent}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or str(Path(tmp) / "clocks.db")
        port = free_port()
        extra = ["--workers", str(workers)] if workers > 1 else []
        extra += ["--time-control", args.clocks]
        server = start_server(port, url, Path(tmp), extra)
        try:
            if workers > 1:
                wait_for_workers(port, workers)
            with asyncio.Runner(loop_factory=_loop_factory()) as runner:
                out = runner.run(clock_run(port, args))
            health = get_health(port, all_workers=True)
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        log = "".join(p.read_text(errors="replace") for p in Path(tmp).glob("server-*.log"))
        print_clocks(out, url, workers, health, log)
        for line in server_logs(Path(tmp)):
            print(line)


async def lobby_load_run(port: int, args: argparse.Namespace) -> dict[str, Any]:
    from lobby_load import lobby_run

    return await lobby_run(port, args.players, args.seeks)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=500, help="concurrent games between two players (default 500)")
    ap.add_argument("--hard-games", type=int, default=0, help="concurrent games against hard besides (default 0)")
    ap.add_argument(
        "--workers", type=int, default=1, help="separate koikoi serve processes on one database, seats split"
    )
    ap.add_argument(
        "--serve-workers", type=int, help="one koikoi serve --workers N on one port instead (N=1: plain serve)"
    )
    ap.add_argument("--kill-at", type=float, help="kill one process this many seconds into the measured time")
    ap.add_argument("--stall-db", type=float, help="stop the (local) PostgreSQL server for this many seconds")
    ap.add_argument("--stall-at", type=float, help="... this many seconds into the measured time")
    ap.add_argument("--seconds", type=float, default=60, help="measured time (default 60)")
    ap.add_argument("--warmup", type=float, default=10, help="seconds before measuring (default 10)")
    ap.add_argument("--think-min", type=float, default=1.0, help="a player's least thinking time per move, s")
    ap.add_argument("--think-max", type=float, default=3.0, help="a player's most thinking time per move, s")
    ap.add_argument("--database-url", help="default: a fresh SQLite file in a temporary folder (one process only)")
    ap.add_argument(
        "--url",
        help="play against servers already running behind this address (http://127.0.0.1:PORT, such as a proxy "
        "in front of them) instead of starting one; with --database-url, the moves are checked in the database",
    )
    ap.add_argument(
        "--server-pids", default="", help="with --url: the server processes' ids (comma-separated), for their CPU"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--profile", metavar="PATH", help="sample the (first) server process with py-spy over the measured time"
    )
    ap.add_argument(
        "--ramp",
        type=int,
        metavar="STEP",
        help="add games STEP at a time until the round trip p99 passes --ramp-p99 (at most --games): the games held",
    )
    ap.add_argument("--ramp-p99", type=float, default=100.0, help="with --ramp: the p99 to hold, ms (default 100)")
    ap.add_argument("--ramp-seconds", type=float, default=20.0, help="with --ramp: measured time per step (20)")
    ap.add_argument("--ramp-settle", type=float, default=8.0, help="with --ramp: seconds after a step's burst (8)")
    ap.add_argument(
        "--lobby", action="store_true", help="quick pairing under load instead of games (benchmarks/lobby_load.py)"
    )
    ap.add_argument("--players", type=int, default=500, help="with --lobby: players asking at once (default 500)")
    ap.add_argument("--seeks", type=int, default=20, help="with --lobby: seeks posted to time the push (default 20)")
    ap.add_argument(
        "--clocks",
        metavar="CONTROL",
        help="clocked games that run out of time instead (a real-time control such as 5+5; benchmarks/clock_load.py)",
    )
    ap.add_argument("--play-min", type=float, default=5.0, help="with --clocks: a game's least time of play, s")
    ap.add_argument("--play-max", type=float, default=30.0, help="with --clocks: a game's most time of play, s")
    args = ap.parse_args()
    if args.clocks is not None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
        from koikoi.clocks import ClockError, time_control

        try:
            control = time_control(args.clocks)
        except ClockError as e:
            ap.error(f"--clocks: {e}")
        if control.correspondence:
            ap.error("--clocks needs a real-time control (such as 5+5): a correspondence clock runs for days")
        if not 1 <= args.games <= 5000 or not 0 <= args.play_min <= args.play_max <= 600:
            ap.error("--games is 1..5000 and 0 <= --play-min <= --play-max <= 600")
        if not 0 <= args.think_min <= args.think_max < control.per_move:
            ap.error(f"0 <= --think-min <= --think-max < {control.per_move:g} s (the control's time a decision)")
        if args.serve_workers is not None and not 1 <= args.serve_workers <= 8:
            ap.error("--serve-workers is 1..8")
        if (args.serve_workers or 1) > 1 and not args.database_url:
            ap.error("--serve-workers above 1 needs --database-url postgresql://... (SQLite: one process)")
        if args.workers > 1 or args.lobby or args.kill_at is not None or args.stall_db is not None:
            ap.error("--clocks runs on one koikoi serve (--serve-workers N), alone")
        clock_main(args)
        return
    if args.lobby:
        if not 2 <= args.players <= 5000 or not 1 <= args.seeks <= 200:
            ap.error("--players is 2..5000 and --seeks 1..200")
        lobby_main(args)
        return
    if not 1 <= args.games <= 5000 or not 0 < args.seconds <= 600 or not 0 <= args.hard_games <= 500:
        ap.error("--games is 1..5000, --hard-games 0..500 and --seconds at most 600")
    if not 0 <= args.warmup <= 600 or not 0 <= args.think_min <= args.think_max <= 60:
        ap.error("--warmup is 0..600 and 0 <= --think-min <= --think-max <= 60")
    if not 1 <= args.workers <= 8:
        ap.error("--workers is 1..8")
    if args.serve_workers is not None:
        if not 1 <= args.serve_workers <= 8:
            ap.error("--serve-workers is 1..8")
        if args.workers > 1:
            ap.error("--workers (separate processes) and --serve-workers (one supervisor) are two different runs")
        if args.serve_workers > 1 and not args.database_url:
            ap.error("--serve-workers above 1 needs --database-url postgresql://... (SQLite is served by one process)")
    if args.ramp is not None:
        if not 1 <= args.ramp <= args.games or args.hard_games or args.kill_at is not None or args.stall_db is not None:
            ap.error("--ramp STEP is 1..--games, without --hard-games, --kill-at or --stall-db")
        if not 1 <= args.ramp_seconds <= 600 or not 0 <= args.ramp_settle <= 600 or not 1 <= args.ramp_p99 <= 60000:
            ap.error("--ramp-seconds is 1..600, --ramp-settle 0..600 and --ramp-p99 1..60000 ms")
    if args.url is not None:
        m = re.fullmatch(r"http://(127\.0\.0\.1|localhost):(\d{1,5})/?", args.url)
        if m is None:
            ap.error("--url is http://127.0.0.1:PORT: the benchmark stays on this machine")
        if args.workers > 1 or args.serve_workers is not None or args.ramp is not None:
            ap.error("--url plays against servers already running: not with --workers, --serve-workers or --ramp")
        if args.kill_at is not None or args.stall_db is not None or args.profile:
            ap.error("--url plays against servers already running: not with --kill-at, --stall-db or --profile")
        args.url_port = int(m.group(2))
        try:
            args.pids = [int(p) for p in args.server_pids.split(",") if p.strip()]
        except ValueError:
            ap.error("--server-pids is process ids separated by commas")
    elif args.server_pids:
        ap.error("--server-pids goes with --url")
    if args.workers > 1 and not args.database_url:
        ap.error("--workers needs --database-url postgresql://... (SQLite is served by one process)")
    if args.kill_at is not None and (args.workers < 2 or not 0 < args.kill_at < args.seconds):
        ap.error("--kill-at needs --workers 2 or more and a time inside --seconds")
    if (args.stall_db is None) != (args.stall_at is None):
        ap.error("--stall-db and --stall-at go together")
    stall = None
    if args.stall_db is not None:
        if not 0 < args.stall_db <= 120 or not 0 <= args.stall_at or args.stall_at + args.stall_db >= args.seconds:
            ap.error("--stall-db is 0..120 s, and the stall must end inside --seconds (--stall-at + --stall-db)")
        if not args.database_url:
            ap.error("--stall-db needs --database-url postgresql://... (a PostgreSQL server on this machine)")
        stall = DatabaseStall(args.database_url)  # refuses, with the reason, what it cannot stop
    import koikoi

    print(f"server code: {Path(koikoi.__file__).resolve().parent}", flush=True)

    def interrupted(_signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt  # SIGTERM too stops the servers and continues a stopped PostgreSQL

    signal.signal(signal.SIGTERM, interrupted)
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or str(Path(tmp) / "load.db")
        servers: list[subprocess.Popen] = []
        try:
            if args.url is not None:
                ports = [args.url_port]  # the servers (and their proxy) are the caller's
            elif args.serve_workers is not None:
                ports = [free_port()]
                extra = ["--workers", str(args.serve_workers)] if args.serve_workers > 1 else []
                servers.append(start_server(ports[0], url, Path(tmp), extra))
                if args.serve_workers > 1:
                    wait_for_workers(ports[0], args.serve_workers)
            else:
                ports = [free_port() for _ in range(args.workers)]
                for port in ports:
                    servers.append(start_server(port, url, Path(tmp)))
            # uvloop (uvicorn's own event loop, installed with it) keeps the scripted clients' share of
            # the machine's CPU small: they run on the same 2 cores as the servers they measure.
            with asyncio.Runner(loop_factory=_loop_factory()) as runner:
                if args.ramp:
                    stats = runner.run(ramp(args, ports, servers))
                else:
                    stats, info = runner.run(run(args, ports, servers, stall))
                    info["supervisor_pid"] = servers[0].pid if servers else None
        finally:
            resume_stopped()  # should the stall's own finally not have run
            for server in servers:
                if server.poll() is None:
                    server.terminate()
                    try:
                        server.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        server.kill()
                        server.wait()
        lost, checked = lost_actions(url, stats) if args.url is None or args.database_url else (0, 0)
        logs = server_logs(Path(tmp))
    if args.ramp:
        print(f"acknowledged actions missing from the database: {lost} (seats checked: {checked})")
        for line in logs:
            print(line)
        return
    lat = sorted(stats.latencies)
    db = "SQLite" if not args.database_url else args.database_url.split(":")[0]
    processes = (
        f"koikoi serve --workers {args.serve_workers} (one port)"
        if args.serve_workers is not None
        else f"{args.workers} process(es)"
    )
    if args.url is not None:
        db, processes = args.database_url.split(":")[0] if args.database_url else "unknown", f"servers at {args.url}"
    print(
        f"games: {args.games} concurrent ({2 * args.games} WebSockets) and {args.hard_games} against hard, "
        f"thinking {args.think_min:g}-{args.think_max:g} s per move, database {db}, {processes}"
    )
    print_burst(stats, 2 * args.games + args.hard_games)
    if not lat:
        print(
            f"errors {stats.errors} {stats.error_codes or ''}; unavailable {stats.unavailable}; "
            f"acknowledged actions missing from the database: {lost} (seats checked: {checked})"
        )
        raise SystemExit("no action was measured")
    print(
        f"actions: {len(lat)} in {args.seconds:.0f} s = {len(lat) / args.seconds:.1f} per second; "
        f"errors {stats.errors} {stats.error_codes or ''}; matches finished {stats.games_finished}"
    )
    print(
        f"unavailable (the database did not answer): {stats.unavailable} ({stats.unavailable_on_moves} on moves, "
        f"{stats.unavailable - stats.unavailable_on_moves} on requests for the table)"
    )
    print(
        f"round trip (send -> stored, both seats told -> ack): p50 {_ms(lat, 0.50):.1f} ms, "
        f"p99 {_ms(lat, 0.99):.1f} ms, mean {statistics.fmean(lat) * 1000:.1f} ms, max {lat[-1] * 1000:.1f} ms"
    )
    if stats.hard_latencies:
        hl = sorted(stats.hard_latencies)
        print(f"human moves in games against hard: {len(hl)}, p50 {_ms(hl, 0.5):.1f} ms, p99 {_ms(hl, 0.99):.1f} ms")
    if args.url is not None:
        print(f"played through {args.url} (servers already running)")
        for k in sorted(info["cpu"]):
            print(f"process {k}: {info['cpu'][k]:.1f} s CPU")
    elif args.serve_workers is not None:
        print_workers(args, info, stats, ports[0])
    else:
        for port in sorted(info["cpu"]):
            n = stats.by_port.get(port, 0)
            cpu = info["cpu"][port]
            tag = " (killed)" if port == info["killed"] else ""
            per = f"{cpu / n * 1000:.2f} ms CPU per action" if n else "no actions"
            print(
                f"process on port {port}{tag}: {n} actions = {n / args.seconds:.1f} per second; {cpu:.1f} s CPU, {per}"
            )
    total_cpu = sum(info["cpu"].values())
    per_action = total_cpu / (len(lat) + len(stats.hard_latencies)) * 1000
    if info["cpu"]:
        print(f"all processes: {total_cpu:.1f} s CPU, {per_action:.2f} ms per action")
    for where, loop in info["loops"].items():
        print(
            f"server event loop, {where}: late by p99 {loop.get('late_ms_p99')} ms, "
            f"max {loop.get('late_ms_max')} ms (its last minute)"
        )
    lag = sorted(stats.client_lag)
    if lag:
        print(
            f"the clients (this process): {info['client_cpu']:.1f} s CPU = "
            f"{info['client_cpu'] / args.seconds * 100:.0f}% of a core; their event loop late by "
            f"p50 {_ms(lag, 0.5):.1f} ms, p99 {_ms(lag, 0.99):.1f} ms, max {lag[-1] * 1000:.1f} ms "
            "(part of every round trip above)"
        )
    if info["killed"] is not None or stats.reconnects:
        rc = sorted(stats.reconnects)
        what = "after the kill" if info["killed"] is not None else "(a lost socket back at its table)"
        if rc:
            print(
                f"reconnects {what}: {len(rc)}, p50 {_ms(rc, 0.5):.0f} ms, p99 {_ms(rc, 0.99):.0f} ms, "
                f"max {rc[-1] * 1000:.0f} ms"
            )
        else:
            print(f"reconnects {what}: none measured")
    if stall is not None:
        print_stall(args, stats, info["probes"])
    print(f"acknowledged actions missing from the database: {lost} (seats checked: {checked})")
    for line in logs:
        print(line)


if __name__ == "__main__":
    main()
