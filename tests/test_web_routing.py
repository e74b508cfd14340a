"""``koikoi serve --workers N`` serves every WebSocket of a game on the worker that owns it
(:mod:`koikoi.web.siblings`; docs/web.md, "Running several processes"), and a worker that does not
answer costs nothing but the routing.

Which process holds a socket is read from the server's side, not only from what the app reports
(``/api/health?all=1``, each worker's count of open sockets): the kernel's table of TCP connections
(/proc/net/tcp) names each connection's inode, and /proc/<pid>/fd names the worker that holds it. The
workers' own Unix sockets say which pid is in which slot.

The end-to-end tests need PostgreSQL (``KOIKOI_TEST_POSTGRES_URL``) and are skipped without it; the
tests of the Unix sockets' bounds run anywhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest
from conftest import POSTGRES_URL, free_port, make_database
from test_web_scale import choose, create, next_state, state_at
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from koikoi.web.siblings import Siblings, SiblingsError, owner_of, socket_path

needs_pg = pytest.mark.skipif(not POSTGRES_URL, reason="needs PostgreSQL: set KOIKOI_TEST_POSTGRES_URL")

KOIKOI = [sys.executable, "-c", "import sys; from koikoi.cli import main; sys.exit(main())"]


class Workers:
    """``koikoi serve --workers 2`` on a free port: its supervisor, its workers' directory and pids."""

    def __init__(self, pg: str, tmp: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}"
        self.log = tmp / "workers.log"
        env = dict(os.environ, XDG_DATA_HOME=str(tmp / "data"))
        cmd = [*KOIKOI, "serve", "--port", str(self.port), "--database-url", pg, "--workers", "2", "--ai-delay", "0"]
        self.proc = subprocess.Popen(cmd, env=env, stdout=open(self.log, "wb"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        found: list[str] = []
        while not found and time.monotonic() < deadline:
            found = glob.glob(os.path.join(tempfile.gettempdir(), f"koikoi-workers-{self.proc.pid}-*"))
            time.sleep(0.1)
        assert found, self.log.read_text()
        self.directory = found[0]
        self.asker = Siblings(0, 2, self.directory, head_bytes=1)  # only asks: it never listens
        self.pids = self.wait_slots()

    def health(self, slot: int) -> dict:
        return asyncio.run(self.asker.health_of(slot))

    def wait_slots(self, but: int | None = None, timeout: float = 30) -> list[int]:
        """Each slot's worker pid, once every slot answers (with a pid other than ``but``)."""
        deadline = time.monotonic() + timeout
        while True:
            answers = [self.health(slot) for slot in (0, 1)]
            if all(a["ok"] and a.get("pid") not in (None, but) for a in answers):
                assert [a["worker"] for a in answers] == [0, 1] and all(a["workers"] == 2 for a in answers)
                # Served on the port too (uvicorn listens there before the Unix socket is bound).
                httpx.get(self.url + "/api/health", timeout=5).raise_for_status()
                return [a["pid"] for a in answers]
            assert time.monotonic() < deadline, (answers, self.log.read_text())
            time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        assert self.proc.returncode == 0, self.log.read_text()
        assert not os.path.exists(self.directory)  # the supervisor removes its workers' sockets


@pytest.fixture
def workers(tmp_path):
    w = Workers(make_database("postgresql", tmp_path), tmp_path)
    yield w
    if w.proc.poll() is None:
        w.stop()


def _socket_inodes(server_port: int, client_port: int) -> set[str]:
    """The inodes of the server's end of the TCP connection from ``client_port`` (any state)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(FileNotFoundError), open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                local, remote, inode = fields[1], fields[2], fields[9]
                if int(local.rsplit(":", 1)[1], 16) == server_port and int(remote.rsplit(":", 1)[1], 16) == client_port:
                    found.add(inode)
    return found


def holders(ws, server_port: int, pids: list[int]) -> set[int]:
    """Which of ``pids`` hold the server's end of the WebSocket ``ws``."""
    inodes = _socket_inodes(server_port, ws.socket.getsockname()[1])
    held = set()
    for pid in pids:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    link = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if link.startswith("socket:[") and link[8:-1] in inodes:
                        held.add(pid)
    return held


def assert_held_by(ws, w: Workers, pid: int, pids: list[int]) -> None:
    # The worker that handed a socket over closes its copy on its next turn of the event loop.
    deadline = time.monotonic() + 5
    while (held := holders(ws, w.port, pids)) != {pid} and time.monotonic() < deadline:
        time.sleep(0.05)
    assert held == {pid}, (held, pid, pids)


def friend_game(w: Workers, host: httpx.Client, friend: httpx.Client) -> tuple[str, list[str]]:
    """A friend game, joined: its id and its two seats' tokens."""
    game = create(host, "friend", hand_bonus=0)
    r = friend.post(f"/api/invite/{game['invite_token']}/join", json={"name": "Bob"})
    assert r.status_code == 200, r.text
    return game["game_id"], [game["token"], r.json()["token"]]


def first_state(ws) -> dict:
    """The table a new socket is sent, once the game is under way: a worker that made the game may
    still hold it as waiting for the friend who joined through the other, until the database says so."""
    st = next_state(ws)
    while st["status"] == "waiting":
        st = next_state(ws)
    return st


def open_seat(w: Workers, token: str, game_id: str | None):
    query = "" if game_id is None else f"?game={game_id}"
    return connect(f"{w.ws_url}/ws/{token}{query}", open_timeout=10)


def play(socks: list[list], seq: int, moves: int) -> int:
    """From move ``seq`` on, play ``moves`` moves through whichever socket's seat is to move; every
    socket of both seats must be told each one. Returns the seq reached."""
    everyone = socks[0] + socks[1]
    for ws in everyone:  # each socket's table now, whatever it has read so far
        ws.send(json.dumps({"type": "state"}))
    st = [state_at(ws, seq) for ws in everyone]
    assert all(v["seq"] == seq for v in st), [v["seq"] for v in st]
    for _ in range(moves):
        if st[0]["match_over"]:
            break
        i = next(i for i, v in enumerate(st) if v["to_move"])
        everyone[i].send(json.dumps({"type": "action", "action": choose(st[i]), "seq": seq}))
        seq += 1
        st = [state_at(ws, seq, timeout=15) for ws in everyone]
        assert all(v["seq"] == seq for v in st), [v["seq"] for v in st]
    return seq


@needs_pg
def test_every_socket_of_a_game_is_served_by_its_owner(workers):
    w = workers
    with httpx.Client(base_url=w.url, timeout=30) as host, httpx.Client(base_url=w.url, timeout=30) as friend:
        games: list[tuple[str, list[str]]] = []
        while len(games) < 12 and not all(sum(owner_of(g, 2) == k for g, _ in games) >= 2 for k in (0, 1)):
            games.append(friend_game(w, host, friend))
        assert all(sum(owner_of(g, 2) == k for g, _ in games) >= 2 for k in (0, 1)), games
        games = games[:6]
        with contextlib.ExitStack() as stack:
            socks: dict[str, list[list]] = {}
            for game_id, tokens in games:
                # Each seat twice, each on a new connection: the kernel hands them to either worker.
                socks[game_id] = [[stack.enter_context(open_seat(w, t, game_id)) for _ in range(2)] for t in tokens]
            seqs = {}
            for game_id, seats in socks.items():
                owner = w.pids[owner_of(game_id, 2)]
                for ws in seats[0] + seats[1]:
                    st = first_state(ws)
                    assert st["status"] == "playing"
                    seqs[game_id] = st["seq"]
                    assert_held_by(ws, w, owner, w.pids)
            # The workers' own counts say the same: each holds the sockets of its games, and no other.
            expected = [4 * sum(owner_of(g, 2) == k for g, _ in games) for k in (0, 1)]
            deadline = time.monotonic() + 5
            while True:
                report = httpx.get(w.url + "/api/health?all=1", timeout=5).json()["all"]
                if [h["sockets"] for h in report] == expected or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert [(h["worker"], h["pid"], h["sockets"]) for h in report] == list(zip((0, 1), w.pids, expected))
            # Moves sent over routed sockets reach every socket of both seats.
            game_id, tokens = games[0]
            seq = play(socks[game_id], seqs[game_id], 4)
            # A socket that does not name its game is served wherever it lands, and plays all the same.
            plain = stack.enter_context(open_seat(w, tokens[1], None))
            assert next_state(plain)["seq"] == seq and len(holders(plain, w.port, w.pids)) == 1
            socks[game_id][1].append(plain)
            play(socks[game_id], seq, 3)
            # A malformed game id is served where it lands too.
            odd = stack.enter_context(open_seat(w, tokens[0], "../../x"))
            assert first_state(odd)["seq"] >= 0


@needs_pg
def test_a_killed_owner_loses_nothing_and_gets_its_games_back(workers):
    w = workers
    with httpx.Client(base_url=w.url, timeout=30) as host, httpx.Client(base_url=w.url, timeout=30) as friend:
        game_id, tokens = friend_game(w, host, friend)
    slot = owner_of(game_id, 2)
    dead, survivor = w.pids[slot], w.pids[1 - slot]
    with contextlib.ExitStack() as stack:
        socks = [[stack.enter_context(open_seat(w, t, game_id))] for t in tokens]
        for seat in socks:
            assert_held_by(seat[0], w, dead, w.pids)
            seq = first_state(seat[0])["seq"]
        acked = play(socks, seq, 3)
        os.kill(dead, signal.SIGKILL)
        for seat in socks:  # the pages see their sockets close ...
            with pytest.raises(ConnectionClosed):
                while True:
                    seat[0].recv(timeout=10)
        # ... and reconnect, while the owner's slot is empty: the other worker serves the game from the
        # database, every acknowledged move there.
        assert not w.health(slot)["ok"]
        socks = [[stack.enter_context(open_seat(w, t, game_id))] for t in tokens]
        for seat in socks:
            assert_held_by(seat[0], w, survivor, [dead, survivor])
            assert next_state(seat[0])["seq"] == acked
        acked = play(socks, acked, 2)
        # The supervisor starts the slot again; new sockets of the game go to it, and the game goes on
        # between a socket there and one still on the other worker.
        pids = w.wait_slots(but=dead)
        reborn = pids[slot]
        assert pids[1 - slot] == survivor
        fresh = stack.enter_context(open_seat(w, tokens[0], game_id))
        socks[0].append(fresh)
        assert_held_by(fresh, w, reborn, [reborn, survivor])
        assert next_state(fresh)["seq"] == acked
        play(socks, acked, 2)


@pytest.mark.server
@needs_pg
def test_a_single_process_routes_nothing(tmp_path):
    from conftest import Server

    s = Server(make_database("postgresql", tmp_path), tmp_path)
    s.start()
    try:
        with s.client() as host, httpx.Client(base_url=s.url, timeout=30) as friend:
            game = create(host, "friend", hand_bonus=0)
            assert friend.post(f"/api/invite/{game['invite_token']}/join", json={"name": "Bob"}).status_code == 200
        with connect(f"{s.ws_url}/ws/{game['token']}?game={game['game_id']}") as ws:
            assert first_state(ws)["status"] == "playing"
        assert not glob.glob(os.path.join(tempfile.gettempdir(), f"koikoi-workers-{s.proc.pid}-*"))
    finally:
        s.stop(hard=False)


# -- the Unix sockets' bounds, in one process ------------------------------------------------------------


@pytest.fixture
def private_dir():
    d = tempfile.mkdtemp(prefix="koikoi-siblings-test-")
    yield d
    for name in os.listdir(d):
        os.unlink(os.path.join(d, name))
    os.rmdir(d)


def _send(path: str, data: bytes, fds: tuple[int, ...] | list[int] = ()) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
        s.connect(path)
        if fds:
            socket.send_fds(s, [data], list(fds))
        else:
            s.send(data)


def test_a_directory_others_can_enter_is_refused(private_dir):
    os.chmod(private_dir, 0o755)
    with pytest.raises(SiblingsError, match="not a directory private to this user"):
        Siblings(0, 2, private_dir, head_bytes=100)
    os.chmod(private_dir, 0o700)
    with pytest.raises(SiblingsError, match="slot 2 is not one of 0..1"):
        Siblings(2, 2, private_dir, head_bytes=100)


def test_a_sibling_sending_garbage_is_dropped_and_the_worker_goes_on(private_dir):
    async def main() -> None:
        adopted: list[tuple[socket.socket, bytes]] = []
        me = Siblings(0, 2, private_dir, head_bytes=100)
        me.start(lambda sock, head: adopted.append((sock, head)), lambda: {"ok": True, "sockets": 3})
        other = Siblings(1, 2, private_dir, head_bytes=100)
        path = socket_path(private_dir, 0)
        tcp_server = socket.create_server(("127.0.0.1", 0))
        client = socket.create_connection(tcp_server.getsockname())
        served, _ = tcp_server.accept()
        extra = socket.create_connection(tcp_server.getsockname())
        r, wfd = os.pipe()
        unix_a, unix_b = socket.socketpair()
        try:
            _send(path, b"garbage")
            _send(path, b"S" + b"x" * 500, [served.fileno()])  # over head_bytes
            _send(path, b"S" + b"x" * 10, [served.fileno(), extra.fileno()])  # two descriptors
            _send(path, b"S" + b"x" * 10, [r])  # not a socket
            _send(path, b"S" + b"x" * 10, [unix_a.fileno()])  # not a TCP connection
            _send(path, b"S" + b"x" * 10)  # no descriptor
            _send(path, b"H", [served.fileno()])  # health with a descriptor
            _send(path, b"")
            await asyncio.sleep(0.2)
            assert adopted == []
            # The worker still answers, and still adopts a well-formed hand-over.
            assert await other.health_of(0) == {"ok": True, "sockets": 3, "worker": 0}
            assert other.hand_over(0, served.fileno(), b"GET /ws/x?game=abcdefgh HTTP/1.1\r\n\r\n")
            await asyncio.sleep(0.1)
            assert [head for _, head in adopted] == [b"GET /ws/x?game=abcdefgh HTTP/1.1\r\n\r\n"]
            sock = adopted[0][0]
            assert sock.getpeername() == client.getsockname()  # the same connection, another descriptor
            sock.sendall(b"hello")
            assert client.recv(5) == b"hello"
            # A head over the limit, or a slot with no worker, is not handed over: served where it is.
            assert not other.hand_over(0, served.fileno(), b"x" * 101)
            assert not me.hand_over(1, served.fileno(), b"GET / HTTP/1.1\r\n\r\n")
            # Connections that never send: at most 64 held, each let go after a second.
            idle = [socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) for _ in range(80)]
            for s in idle:
                s.setblocking(False)
                with contextlib.suppress(BlockingIOError):
                    s.connect(path)
            await asyncio.sleep(0.2)
            assert len(me._pending) == 64
            await asyncio.sleep(1.0)
            assert not me._pending
            for s in idle:
                s.close()
            assert (await other.health_of(0))["ok"]
            me.close()
            assert not os.path.exists(path)
        finally:
            for s in (tcp_server, client, served, extra, unix_a, unix_b, *(a for a, _ in adopted)):
                s.close()
            os.close(r)
            os.close(wfd)

    asyncio.run(main())


def test_health_all_reports_a_worker_that_does_not_answer(private_dir):
    async def main() -> None:
        me = Siblings(1, 4, private_dir, head_bytes=100)
        me.start(lambda sock, head: sock.close())
        # Slot 0 is a worker that answers garbage, slot 2 one that never answers, slot 3 none at all.
        liar = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        liar.bind(socket_path(private_dir, 0))
        liar.listen(8)
        liar.setblocking(False)
        loop = asyncio.get_running_loop()

        def lie() -> None:
            conn, _ = liar.accept()
            conn.recv(16)  # the request, sent as the asker connects
            conn.send(b"h[1, 2]")
            conn.close()

        loop.add_reader(liar.fileno(), lie)
        mute = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        mute.bind(socket_path(private_dir, 2))
        mute.listen(8)
        try:
            local = {"ok": True, "worker": 1, "workers": 4, "pid": os.getpid()}
            report = await me.health_all(local)
            assert report[1] is local
            assert report[0] == {"worker": 0, "ok": False, "error": "its answer is not a JSON object"}
            assert report[2] == {"worker": 2, "ok": False, "error": "no answer within 0.25 s"}
            assert report[3]["worker"] == 3 and not report[3]["ok"] and "cannot reach it" in report[3]["error"]
            # Without the app's health, a worker answers with its identity.
            asker = Siblings(0, 4, private_dir, head_bytes=100)
            assert await asker.health_of(1) == {"ok": True, "pid": os.getpid(), "worker": 1, "workers": 4}
        finally:
            loop.remove_reader(liar.fileno())
            liar.close()
            mute.close()
            me.close()

    asyncio.run(main())
