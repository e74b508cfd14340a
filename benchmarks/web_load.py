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
        self.errors = 0
        self.recording = False
        self.games_finished = 0


async def seat(
    url: str, token: str, stats: Stats, think: tuple[float, float], rng: random.Random, stop_at: float
) -> None:
    async with websockets.connect(f"{url}/ws/{token}", max_size=2**22) as ws:
        state = None
        sent_at = None
        acted_on = -1  # the seq of the last state this seat answered
        while time.monotonic() < stop_at:
            try:
                raw = await asyncio.wait_for(ws.recv(), timeout=max(0.1, stop_at - time.monotonic()))
            except TimeoutError:
                return
            msg = json.loads(raw)
            kind = msg["type"]
            if kind == "ack":
                if sent_at is not None and stats.recording:
                    stats.latencies.append(time.perf_counter() - sent_at)
                sent_at = None
            elif kind == "error":
                stats.errors += 1
                sent_at = None
                state = msg.get("state", state)
            else:
                state = msg["state"]
            if state is None:
                continue
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
                sent_at = time.perf_counter()
                await ws.send(json.dumps({"type": "action", "action": action, "seq": state["seq"]}))


async def set_up(base: str, games: int) -> list[tuple[str, str]]:
    """Create the games and join them, as two browsers per game; returns both seats' tokens."""
    limits = httpx.Limits(max_connections=50)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as host:

        async def one(i: int) -> tuple[str, str]:
            r = await host.post(
                "/api/games", json={"name": f"host{i}", "opponent": "friend", "rules": {"preset": "nintendo"}}
            )
            r.raise_for_status()
            g = r.json()
            async with httpx.AsyncClient(base_url=base, timeout=60) as guest:
                r = await guest.post(f"/api/invite/{g['invite_token']}/join", json={"name": f"guest{i}"})
                r.raise_for_status()
            return g["token"], r.json()["token"]  # the guest's own seat token, made when joining

        out = []
        for start in range(0, games, 50):
            out += await asyncio.gather(*(one(i) for i in range(start, min(games, start + 50))))
        return out


async def run(args: argparse.Namespace, port: int) -> Stats:
    base = f"http://127.0.0.1:{port}"
    t0 = time.perf_counter()
    pairs = await set_up(base, args.games)
    print(f"set up {len(pairs)} games in {time.perf_counter() - t0:.1f} s", flush=True)
    stats = Stats()
    rng = random.Random(args.seed)
    stop_at = time.monotonic() + args.warmup + args.seconds
    ws_base = f"ws://127.0.0.1:{port}"
    tasks = []
    for a, b in pairs:
        for token in (a, b):
            tasks.append(
                asyncio.create_task(
                    seat(ws_base, token, stats, (args.think_min, args.think_max), random.Random(rng.random()), stop_at)
                )
            )
            await asyncio.sleep(0)  # open the sockets a few at a time, as players arrive
    await asyncio.sleep(args.warmup)
    stats.recording = True
    print(f"{len(tasks)} connections open; measuring for {args.seconds:.0f} s", flush=True)
    await asyncio.gather(*tasks, return_exceptions=True)
    return stats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=500, help="concurrent games (default 500)")
    ap.add_argument("--seconds", type=float, default=60, help="measured time (default 60)")
    ap.add_argument("--warmup", type=float, default=10, help="seconds before measuring (default 10)")
    ap.add_argument("--think-min", type=float, default=1.0, help="a player's least thinking time per move, s")
    ap.add_argument("--think-max", type=float, default=3.0, help="a player's most thinking time per move, s")
    ap.add_argument("--database-url", help="default: a fresh SQLite file in a temporary folder")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if not 1 <= args.games <= 5000 or not 0 < args.seconds <= 600:
        ap.error("--games is 1..5000 and --seconds at most 600")
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or str(Path(tmp) / "load.db")
        port = free_port()
        server = start_server(port, url, Path(tmp))
        try:
            stats = asyncio.run(run(args, port))
        finally:
            server.terminate()
            server.wait(timeout=30)
    lat = sorted(stats.latencies)
    if not lat:
        raise SystemExit("no action was measured")
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000  # noqa: E731
    db = "SQLite" if not args.database_url else args.database_url.split(":")[0]
    print(
        f"games: {args.games} concurrent ({2 * args.games} WebSockets), "
        f"thinking {args.think_min:g}-{args.think_max:g} s per move, database {db}"
    )
    print(
        f"actions: {len(lat)} in {args.seconds:.0f} s = {len(lat) / args.seconds:.1f} per second; "
        f"errors {stats.errors}; matches finished {stats.games_finished}"
    )
    print(
        f"round trip (send -> stored, both seats told -> ack): p50 {p(0.50):.1f} ms, p99 {p(0.99):.1f} ms, "
        f"mean {statistics.fmean(lat) * 1000:.1f} ms, max {lat[-1] * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
