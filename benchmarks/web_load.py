"""Load on the web app: many concurrent games played by scripted clients over real WebSockets.

Starts ``koikoi serve`` on loopback with a fresh SQLite database (or ``--database-url``), sets up
``--games`` games between two browser-like clients each (created and joined over the HTTP API, as the
invitation link does), then lets both seats of every game play: each seat waits its "thinking" time
when it is to move, sends a legal action and times the round trip until the server's acknowledgement
(the action checked, stored and sent to both seats). No computer opponent is involved, so the figures
are the server's own, without AI thinking time.

Prints the throughput of actions and the 50th/99th percentile round trip, over a run of
``--seconds`` after a warm-up. Bounded: loopback only, a fixed number of games and a time limit.

    python3 benchmarks/web_load.py --games 500 --seconds 60

Scaling out (docs/web.md, "Scaling out"): ``--workers N`` starts N ``koikoi serve`` processes on N ports
sharing one ``--database-url`` (PostgreSQL), and puts the two seats of each game on different processes
on purpose, so that every move crosses from one process to the other through the database.
``--hard-games K`` adds K games against the ``hard`` computer (their human seat played the same way);
``--kill-at S`` kills one process (SIGKILL) S seconds into the measured time: its players reconnect to
another process, as a load balancer would send them, and the run reports the reconnect times and any
acknowledged action missing from the database (there must be none). Per process it prints actions per
second and the CPU time per action (the server and its computer-player workers).

    python3 benchmarks/web_load.py --workers 2 --games 1000 --database-url postgresql://... --seconds 60
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import websockets

STOP = 289


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
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(300):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"the server did not start: {proc.stderr.read().decode() if proc.stderr else ''}")


class Stats:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.hard_latencies: list[float] = []  # the human's moves in games against the computer
        self.errors = 0
        self.error_codes: dict[str, int] = {}
        self.recording = False
        self.games_finished = 0
        self.by_port: dict[int, int] = {}  # measured actions acknowledged by each process
        self.acked: dict[str, int] = {}  # token -> the highest move number acknowledged to it
        self.reconnects: list[float] = []  # seconds from a lost connection to the table again


async def seat(
    ports: list[int],
    alive: set[int],
    home: int,
    token: str,
    stats: Stats,
    think: tuple[float, float],
    rng: random.Random,
    stop_at: float,
    hard: bool = False,
) -> None:
    """One player: plays its seat over a WebSocket to process ``home``; if that process dies, goes on
    through another (as a load balancer would send it) and times the way back to its table."""
    port = ports[home]
    lost_at: list[float | None] = [None]  # when the connection was lost, until the table is back
    while time.monotonic() < stop_at:
        try:
            async with websockets.connect(f"ws://127.0.0.1:{port}/ws/{token}", max_size=2**22) as ws:
                await _play(ws, port, token, stats, think, rng, stop_at, hard, lost_at)
                return
        except (OSError, websockets.ConnectionClosed, websockets.InvalidStatus, TimeoutError):
            if lost_at[0] is None:
                lost_at[0] = time.perf_counter()
            others = [p for p in ports if p in alive and p != port] or [p for p in ports if p in alive]
            if not others:
                return
            port = others[rng.randrange(len(others))]
            await asyncio.sleep(rng.uniform(0.05, 0.5))  # a page waits a moment before it reconnects


async def _play(ws, port, token, stats, think, rng, stop_at, hard, lost_at) -> bool:
    state = None
    sent_at = None
    acted_on = -1  # the seq of the last state this seat answered
    sent_seq = -1
    while time.monotonic() < stop_at:
        try:
            raw = await asyncio.wait_for(ws.recv(), timeout=max(0.1, stop_at - time.monotonic()))
        except TimeoutError:
            return True
        msg = json.loads(raw)
        kind = msg["type"]
        if kind == "ack":
            if sent_at is not None and stats.recording:
                (stats.hard_latencies if hard else stats.latencies).append(time.perf_counter() - sent_at)
                stats.by_port[port] = stats.by_port.get(port, 0) + 1
            stats.acked[token] = max(stats.acked.get(token, 0), msg["seq"])
            sent_at = None
        elif kind == "error":
            stats.errors += 1
            stats.error_codes[msg.get("code", "?")] = stats.error_codes.get(msg.get("code", "?"), 0) + 1
            sent_at = None
            state = msg.get("state", state)
        else:
            state = msg["state"]
            if lost_at[0] is not None:
                stats.reconnects.append(time.perf_counter() - lost_at[0])
                lost_at[0] = None
        if state is None:
            continue
        if state["match_over"]:
            stats.games_finished += 1
            return True
        # The state that follows our own move can already be ours again (a capture choice, koi-koi):
        # it arrives before the acknowledgement, so the move is made once both are in.
        if state["to_move"] and sent_at is None and state["seq"] != acted_on:
            await asyncio.sleep(rng.uniform(*think))
            legal = state["legal"]
            action = STOP if STOP in legal else rng.choice(legal)
            acted_on = state["seq"]
            sent_seq = state["seq"]
            sent_at = time.perf_counter()
            await ws.send(json.dumps({"type": "action", "action": action, "seq": sent_seq}))
    return True


async def set_up(ports: list[int], games: int, hard_games: int) -> list[tuple[int, str, int, str | None]]:
    """Create the games and join them, as two browsers per game, the host on one process and the guest
    on the next; returns (host's process, host's token, guest's process, guest's token or None for a
    game against the computer)."""
    n = len(ports)
    limits = httpx.Limits(max_connections=50)
    hosts = [httpx.AsyncClient(base_url=f"http://127.0.0.1:{p}", timeout=60, limits=limits) for p in ports]
    try:

        async def one(i: int) -> tuple[int, str, int, str | None]:
            home, away = i % n, (i + 1) % n
            hard = i >= games
            r = await hosts[home].post(
                "/api/games",
                json={"name": f"host{i}", "opponent": "hard" if hard else "friend", "rules": {"preset": "nintendo"}},
            )
            r.raise_for_status()
            g = r.json()
            if hard:  # the human plays from the other process, which must hear the computer's moves
                return away, g["token"], away, None
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{ports[away]}", timeout=60) as guest:
                r = await guest.post(f"/api/invite/{g['invite_token']}/join", json={"name": f"guest{i}"})
                r.raise_for_status()
            return home, g["token"], away, r.json()["token"]  # the guest's own seat token, made when joining

        async def retried(i: int) -> tuple[int, str, int, str | None]:
            # A kept-alive connection may be closed by the server (its keep-alive limit) just as the
            # client reuses it, on a loaded machine: set that game up again, from the start.
            for attempt in range(3):
                try:
                    return await one(i)
                except httpx.TransportError:
                    if attempt == 2:
                        raise
            raise AssertionError("unreachable")

        out: list[tuple[int, str, int, str | None]] = []
        total = games + hard_games
        for start in range(0, total, 50):
            out += await asyncio.gather(*(retried(i) for i in range(start, min(total, start + 50))))
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


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of a process and all its descendants (the computer-player workers)."""
    total = 0.0
    todo = [pid]
    tick = os.sysconf("SC_CLK_TCK")
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(x) for x in (task / "children").read_text().split()]
        except (OSError, ValueError, IndexError):
            continue
    return total


async def run(args: argparse.Namespace, ports: list[int], servers: list[subprocess.Popen]) -> tuple[Stats, dict]:
    t0 = time.perf_counter()
    pairs = await set_up(ports, args.games, args.hard_games)
    print(f"set up {len(pairs)} games in {time.perf_counter() - t0:.1f} s", flush=True)
    stats = Stats()
    rng = random.Random(args.seed)
    stop_at = time.monotonic() + args.warmup + args.seconds
    alive = set(ports)
    tasks = []
    think = (args.think_min, args.think_max)
    for home, a, away, b in pairs:
        seats = [(home, a, b is None)] + ([(away, b, False)] if b is not None else [])
        for where, token, hard in seats:
            tasks.append(
                asyncio.create_task(
                    seat(ports, alive, where, token, stats, think, random.Random(rng.random()), stop_at, hard)
                )
            )
            await asyncio.sleep(0)  # open the sockets a few at a time, as players arrive
    await asyncio.sleep(args.warmup)
    stats.recording = True
    cpu = {p: cpu_seconds(s.pid) for p, s in zip(ports, servers)}
    measured_from = time.monotonic()
    print(f"{len(tasks)} connections open; measuring for {args.seconds:.0f} s", flush=True)
    killed = None
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
    info = {"cpu": cpu, "killed": killed, "seconds": time.monotonic() - measured_from, "pairs": pairs}
    return stats, info


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=500, help="concurrent games between two players (default 500)")
    ap.add_argument("--hard-games", type=int, default=0, help="concurrent games against hard besides (default 0)")
    ap.add_argument("--workers", type=int, default=1, help="koikoi serve processes on one database (default 1)")
    ap.add_argument("--kill-at", type=float, help="kill one process this many seconds into the measured time")
    ap.add_argument("--seconds", type=float, default=60, help="measured time (default 60)")
    ap.add_argument("--warmup", type=float, default=10, help="seconds before measuring (default 10)")
    ap.add_argument("--think-min", type=float, default=1.0, help="a player's least thinking time per move, s")
    ap.add_argument("--think-max", type=float, default=3.0, help="a player's most thinking time per move, s")
    ap.add_argument("--database-url", help="default: a fresh SQLite file in a temporary folder (one process only)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if not 1 <= args.games <= 5000 or not 0 < args.seconds <= 600 or not 0 <= args.hard_games <= 500:
        ap.error("--games is 1..5000, --hard-games 0..500 and --seconds at most 600")
    if not 1 <= args.workers <= 8:
        ap.error("--workers is 1..8")
    if args.workers > 1 and not args.database_url:
        ap.error("--workers needs --database-url postgresql://... (SQLite is served by one process)")
    if args.kill_at is not None and (args.workers < 2 or not 0 < args.kill_at < args.seconds):
        ap.error("--kill-at needs --workers 2 or more and a time inside --seconds")
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or str(Path(tmp) / "load.db")
        ports = [free_port() for _ in range(args.workers)]
        servers = [start_server(port, url, Path(tmp)) for port in ports]
        try:
            # uvloop (uvicorn's own event loop, installed with it) keeps the scripted clients' share of
            # the machine's CPU small: they run on the same 2 cores as the servers they measure.
            with asyncio.Runner(loop_factory=_loop_factory()) as runner:
                stats, info = runner.run(run(args, ports, servers))
        finally:
            for server in servers:
                if server.poll() is None:
                    server.terminate()
                    server.wait(timeout=30)
        lost, checked = lost_actions(url, stats)
    lat = sorted(stats.latencies)
    if not lat:
        raise SystemExit("no action was measured")
    p = lambda xs, q: xs[min(len(xs) - 1, int(q * len(xs)))] * 1000  # noqa: E731
    db = "SQLite" if not args.database_url else args.database_url.split(":")[0]
    print(
        f"games: {args.games} concurrent ({2 * args.games} WebSockets) and {args.hard_games} against hard, "
        f"thinking {args.think_min:g}-{args.think_max:g} s per move, database {db}, {args.workers} process(es)"
    )
    print(
        f"actions: {len(lat)} in {args.seconds:.0f} s = {len(lat) / args.seconds:.1f} per second; "
        f"errors {stats.errors} {stats.error_codes or ''}; matches finished {stats.games_finished}"
    )
    print(
        f"round trip (send -> stored, both seats told -> ack): p50 {p(lat, 0.50):.1f} ms, p99 {p(lat, 0.99):.1f} ms, "
        f"mean {statistics.fmean(lat) * 1000:.1f} ms, max {lat[-1] * 1000:.1f} ms"
    )
    if stats.hard_latencies:
        hl = sorted(stats.hard_latencies)
        print(f"human moves in games against hard: {len(hl)}, p50 {p(hl, 0.5):.1f} ms, p99 {p(hl, 0.99):.1f} ms")
    for port in sorted(info["cpu"]):
        n = stats.by_port.get(port, 0)
        cpu = info["cpu"][port]
        tag = " (killed)" if port == info["killed"] else ""
        per = f"{cpu / n * 1000:.2f} ms CPU per action" if n else "no actions"
        print(f"process on port {port}{tag}: {n} actions = {n / args.seconds:.1f} per second; {cpu:.1f} s CPU, {per}")
    total_cpu = sum(info["cpu"].values())
    per_action = total_cpu / (len(lat) + len(stats.hard_latencies)) * 1000
    print(f"all processes: {total_cpu:.1f} s CPU, {per_action:.2f} ms per action")
    if info["killed"] is not None:
        rc = sorted(stats.reconnects)
        if rc:
            print(
                f"reconnects after the kill: {len(rc)}, p50 {p(rc, 0.5):.0f} ms, p99 {p(rc, 0.99):.0f} ms, "
                f"max {rc[-1] * 1000:.0f} ms"
            )
        else:
            print("reconnects after the kill: none measured")
    print(f"acknowledged actions missing from the database: {lost} (seats checked: {checked})")


if __name__ == "__main__":
    main()
