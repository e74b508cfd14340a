"""Failover through the documented deployment: Caddy (deploy/Caddyfile, its addresses changed for loopback)
in front of two ``koikoi serve`` processes on one PostgreSQL. A friend game is played through Caddy, the
process holding both seats is killed (SIGKILL), and both seats reconnect through Caddy at once, as fast as
they can: the figure is the time from the kill to both seats holding the game's table again (served by
the other process, nothing lost). A page adds its own first wait, 250 to 750 ms (table.js), on top.

    python3 benchmarks/caddy_failover.py --database-url postgresql://postgres@127.0.0.1:54330/postgres --rounds 5

Needs ``caddy`` on the PATH (Debian: ``apt install caddy``; it is run in the foreground, never as a
service). Prints each round's time and the median and worst.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from websockets.sync.client import connect

ROOT = Path(__file__).resolve().parent.parent
KOIKOI = [sys.executable, "-c", "import sys; from koikoi.cli import main; sys.exit(main())"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_up(url: str, proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited with {proc.returncode}")
        try:
            if httpx.get(url + "/api/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"{what} did not start")


def serve(port: int, database_url: str, log: Path, extra: list[str] | None = None) -> subprocess.Popen:
    argv = [*KOIKOI, "serve", "--port", str(port), "--database-url", database_url, "--forwarded-allow-ips", "127.0.0.1"]
    argv += extra or []
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    p = subprocess.Popen(argv, stdout=log.open("a"), stderr=subprocess.STDOUT, env=env)
    wait_up(f"http://127.0.0.1:{port}", p, f"koikoi serve on {port}")
    return p


def start_caddy(tmp: Path, front_port: int, ports: list[int]) -> subprocess.Popen:
    """Caddy in the foreground with deploy/Caddyfile, its addresses changed for loopback: it listens on
    ``front_port`` and sends to the processes on ``ports``."""
    text = (ROOT / "deploy" / "Caddyfile").read_text()
    text = text.replace(":80 {", f"http://127.0.0.1:{front_port} {{")
    text = text.replace("app1:8000 app2:8000", " ".join(f"127.0.0.1:{p}" for p in ports))
    (tmp / "Caddyfile").write_text("{\n\tadmin off\n\tauto_https off\n}\n" + text)
    env = {**os.environ, "HOME": str(tmp), "XDG_DATA_HOME": str(tmp), "XDG_CONFIG_HOME": str(tmp)}
    return subprocess.Popen(
        ["caddy", "run", "--adapter", "caddyfile", "--config", str(tmp / "Caddyfile")],
        stdout=(tmp / "caddy.log").open("w"),
        stderr=subprocess.STDOUT,
        env=env,
    )


def stop_all(procs: list[subprocess.Popen], timeout: float = 20) -> None:
    """SIGTERM to each at once, then wait for each (a kill for one that outlasts ``timeout``)."""
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()


def state(ws, timeout: float = 20) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        msg = json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
        if msg["type"] == "state":
            return msg["state"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--database-url", required=True, help="PostgreSQL, shared by both processes")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    caddy = subprocess.run(["caddy", "version"], capture_output=True, text=True).stdout.strip()
    tmp = Path(tempfile.mkdtemp(prefix="koikoi-failover-"))
    ports = [free_port(), free_port()]
    front_port = free_port()
    servers = [serve(p, args.database_url, tmp / f"serve-{p}.log") for p in ports]
    front = start_caddy(tmp, front_port, ports)
    url, ws_url = f"http://127.0.0.1:{front_port}", f"ws://127.0.0.1:{front_port}"
    times = []
    try:
        wait_up(url, front, "caddy")
        for k in range(args.rounds):
            with httpx.Client(base_url=url, timeout=10) as host, httpx.Client(base_url=url, timeout=10) as friend:
                game = host.post(
                    "/api/games", json={"name": "Ann", "opponent": "friend", "rules": {"preset": "nintendo"}}
                ).json()
                seat = friend.post(f"/api/invite/{game['invite_token']}/join", json={"name": "Bob"}).json()
            urls = [f"{ws_url}/ws/{t}?game={game['game_id']}" for t in (game["token"], seat["token"])]
            socks = [connect(u) for u in urls]
            seq = max(state(s)["seq"] for s in socks)
            held = [httpx.get(f"http://127.0.0.1:{p}/api/health", timeout=5).json()["sockets"] for p in ports]
            owner = held.index(max(held))
            t0 = time.monotonic()
            servers[owner].send_signal(signal.SIGKILL)
            servers[owner].wait()
            for s in socks:
                s.close()
            back = []
            tries: list[str] = []
            for u in urls:
                while True:
                    try:
                        with connect(u, open_timeout=5) as ws:
                            st = state(ws, timeout=5)
                            assert st["seq"] >= seq
                            back.append(time.monotonic() - t0)
                            break
                    except Exception as e:
                        tries.append(f"{time.monotonic() - t0:.2f}s {type(e).__name__}: {str(e)[:60]}")
                        time.sleep(0.02)
            if os.environ.get("FAILOVER_DEBUG"):
                print("   ", back, tries[:5])
            took = max(back)
            times.append(took)
            print(f"round {k + 1}: both seats back in {took * 1000:.0f} ms (the killed process held {max(held)})")
            servers[owner] = serve(ports[owner], args.database_url, tmp / f"serve-{ports[owner]}.log")
            # Caddy passes over the killed process for fail_duration (10 s) after the failure it saw: the
            # next round starts once that is over, so that the next game may be hashed to either.
            time.sleep(11)
    finally:
        stop_all([front, *servers])
    median, worst = statistics.median(times) * 1000, max(times) * 1000
    print(f"{caddy}; {len(times)} rounds: median {median:.0f} ms, worst {worst:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
