"""A database that stops answering under a real server (docs/web.md, "When the database does not answer").

A PostgreSQL server of this test's own (so that stopping it stops nobody else's tests) is frozen with
SIGSTOP under a real ``koikoi serve``: the process keeps answering ``/api/health`` and the tables it holds,
``/api/ready`` says 503, a move gets ``unavailable`` with the table, and once the database is continued
the move that was in doubt lands (both seats are told), the refused sockets are told ``available`` and
their moves are taken, play goes on, and nothing acknowledged is lost.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import NO_TLS, Server, free_port, limit_args
from test_web_browser import READY, act_once, create_table, new_page, seq, take_turn, wait_js
from websockets.sync.client import connect

from koikoi.actions import STOP

_BIN = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"))
pytestmark = [pytest.mark.server, pytest.mark.skipif(not _BIN, reason="PostgreSQL's server programs are not installed")]


def _as_postgres(cmd: list[str]) -> list[str]:
    # PostgreSQL refuses to run as root: as root (CI), run its programs as the postgres user.
    if os.geteuid() != 0:
        return cmd
    return ["su", "postgres", "-s", "/bin/sh", "-c", shlex.join(cmd)]


@pytest.fixture
def own_postgres() -> Iterator[tuple[str, Path]]:
    """A throwaway PostgreSQL server: (its URL, its data directory)."""
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root without a postgres user to run PostgreSQL as")
    pgbin = _BIN[-1].parent
    # Not under pytest's own temporary folder: as root that is closed to the postgres user.
    data = Path(tempfile.mkdtemp(prefix="koikoi-pg-"))
    if os.geteuid() == 0:
        shutil.chown(data, "postgres")
    port = free_port()
    subprocess.run(
        _as_postgres([str(pgbin / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"]),
        check=True,
        capture_output=True,
    )
    opts = f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off"
    start = [str(pgbin / "pg_ctl"), "-D", str(data), "-o", opts, "-l", str(data / "log"), "-w", "start"]
    subprocess.run(_as_postgres(start), check=True, capture_output=True)
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres", data
    finally:
        _signal_all(data, signal.SIGCONT)
        subprocess.run(
            _as_postgres([str(pgbin / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]), capture_output=True
        )
        shutil.rmtree(data, ignore_errors=True)


def _server_pids(data: Path) -> list[int]:
    """The postmaster of the server at ``data`` and every process under it."""
    top = int((data / "postmaster.pid").read_text().split()[0])
    pids, todo = [], [top]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        for task in Path(f"/proc/{pid}/task").glob("*"):
            with contextlib.suppress(OSError):
                todo += [int(x) for x in (task / "children").read_text().split()]
    return pids


def _signal_all(data: Path, sig: int) -> None:
    for pid in _server_pids(data):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def _next(ws, kinds: tuple[str, ...] = ("state",), timeout: float = 30) -> dict:
    """The next message of one of ``kinds`` on ``ws`` (others skipped)."""
    deadline = time.monotonic() + timeout
    while True:
        msg = json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
        if msg["type"] in kinds:
            return msg


def _table(ws) -> dict:
    """The next table pushed on ``ws``."""
    return _next(ws, ("state",), timeout=20)["state"]


def _choose(st: dict) -> int:
    return STOP if STOP in st["legal"] else st["legal"][0]


def test_a_stalled_database_freezes_nothing_and_loses_nothing(own_postgres, tmp_path):
    url, data = own_postgres
    s = Server(url, tmp_path, *limit_args(database_seconds=1))
    s.start()
    try:
        with s.client() as host, s.client() as friend:
            game = host.post("/api/games", json={"opponent": "friend", "rules": {"preset": "cardavia"}}).json()
            r = friend.post(f"/api/invite/{game['invite_token']}/join", json={"name": "Bob"})
            tokens = [game["token"], r.json()["token"]]
            other = host.post("/api/games", json={"opponent": "friend", "rules": {"preset": "cardavia"}}).json()
            cpu = host.post("/api/games", json={"opponent": "random", "rules": {"preset": "cardavia"}}).json()
            with (
                connect(f"{s.ws_url}/ws/{tokens[0]}") as ws0,
                connect(f"{s.ws_url}/ws/{tokens[1]}") as ws1,
                connect(f"{s.ws_url}/ws/{other['token']}") as ws_other,
                connect(f"{s.ws_url}/ws/{cpu['token']}") as ws_cpu,
            ):
                socks = [ws0, ws1]
                st = _table(ws0)
                _table(ws1)
                _table(ws_other)
                while not (cpu_st := _table(ws_cpu))["to_move"]:  # the computer may open the game
                    pass
                for _ in range(2):  # two moves while the database answers
                    st = _play(socks, st)
                assert httpx.get(s.url + "/api/ready", timeout=5, verify=NO_TLS).status_code == 200
                # -- the database stops -----------------------------------------------------------------
                _signal_all(data, signal.SIGSTOP)
                try:
                    health = httpx.get(s.url + "/api/health", timeout=2).json()
                    assert health["ok"]
                    mover = st["current_player"]
                    seat_state = st
                    move = _choose(st) if mover == 0 else _choose(_fresh_state(socks[1]))
                    socks[mover].send(json.dumps({"type": "action", "action": move, "seq": seat_state["seq"]}))
                    refused = _next(socks[mover], ("error", "ack"), timeout=10)
                    assert refused["type"] == "error" and refused["code"] == "unavailable", refused
                    assert refused["state"]["seq"] == seat_state["seq"]  # the table as it was: nothing applied
                    # The same move again: refused at once while the first one is in doubt.
                    socks[mover].send(json.dumps({"type": "action", "action": move, "seq": seat_state["seq"]}))
                    again = _next(socks[mover], ("error", "ack"), timeout=10)
                    assert again["code"] == "unavailable", again
                    # A move of another game, refused at once (nothing of it in doubt): the database has
                    # not answered the first write for a while now.
                    cpu_move = {"type": "action", "action": _choose(cpu_st), "seq": cpu_st["seq"]}
                    ws_cpu.send(json.dumps(cpu_move))
                    cpu_refused = _next(ws_cpu, ("error", "ack"), timeout=10)
                    assert cpu_refused["code"] == "unavailable" and cpu_refused["state"]["seq"] == cpu_st["seq"]
                    # Everything else this process holds is still served; health says the database is away.
                    assert _fresh_state(ws_other)["status"] == "waiting"
                    health = httpx.get(s.url + "/api/health", timeout=2).json()
                    assert health["database"]["reachable"] is False, health
                    r = httpx.get(s.url + "/api/ready", timeout=2)
                    assert r.status_code == 503 and r.json()["ready"] is False
                    r = httpx.post(
                        f"{s.url}/api/seat/{tokens[mover]}/action",
                        json={"action": move, "seq": seat_state["seq"]},
                        timeout=5,
                    )
                    assert r.status_code == 503 and r.json()["error"] == "unavailable", r.text
                    assert r.headers["retry-after"] == "1" and r.json()["state"]["seq"] == seat_state["seq"]
                    r = httpx.get(s.url + "/", timeout=5)  # a page that needs no database
                    assert r.status_code == 200
                finally:
                    _signal_all(data, signal.SIGCONT)
                # -- the database is back: the move in doubt lands, both seats are told --------------------
                landed = seat_state["seq"] + 1
                assert _state_at(socks[1 - mover], landed)["seq"] == landed
                # The refused seats are told that the database answers again, without asking.
                kinds = {
                    m["type"]
                    for m in _until(socks[mover], lambda m: m["type"] == "state" and m["state"]["seq"] >= landed)
                }
                if "available" not in kinds:
                    assert _next(socks[mover], ("available",), timeout=10)
                assert _next(ws_cpu, ("available", "state", "ack"), timeout=10)["type"] == "available"
                # ... and the move refused at once, sent again, is taken.
                ws_cpu.send(json.dumps(cpu_move))
                while (msg := _next(ws_cpu, ("state", "ack", "error")))["type"] == "state":
                    pass
                assert msg == {"type": "ack", "seq": cpu_st["seq"] + 1}, msg
                # A socket that was never refused is not told.
                assert "available" not in {
                    m["type"] for m in _until(ws_other, lambda m: m["type"] == "pong", ping=True)
                }
                deadline = time.monotonic() + 20
                while httpx.get(s.url + "/api/ready", timeout=5, verify=NO_TLS).status_code != 200:
                    assert time.monotonic() < deadline, "the server did not see the database come back"
                    time.sleep(0.1)
                # Play goes on: a few more moves, each acknowledged.
                st = _fresh_state(ws0)
                for _ in range(4):
                    if st["match_over"]:
                        break
                    st = _play(socks, st)
        # Nothing acknowledged was lost: the database has every move the seats were told of.
        from koikoi.web.store import Store

        store = Store(url)
        try:
            stored = store.game(game["game_id"])
            assert stored is not None and stored.moves == st["seq"] and stored.moves >= landed
        finally:
            store.close()
    finally:
        s.stop(hard=False)


def _play(socks: list, st: dict) -> dict:
    """One move by the seat to move (``st`` is seat 0's table), acknowledged, and both seats told of it;
    seat 0's new table."""
    mover = st["current_player"]
    view = st if mover == 0 else _fresh_state(socks[1])
    socks[mover].send(json.dumps({"type": "action", "action": _choose(view), "seq": view["seq"]}))
    while (msg := _next(socks[mover], ("state", "ack", "error")))["type"] == "state":
        pass
    assert msg["type"] == "ack" and msg["seq"] == view["seq"] + 1, msg
    return _state_at(socks[0], view["seq"] + 1) if mover == 1 else _fresh_state(socks[0])


def _until(ws, last, ping: bool = False) -> list[dict]:
    """The messages on ``ws`` up to the first for which ``last`` is true (a ping sent first if asked)."""
    if ping:
        ws.send(json.dumps({"type": "ping"}))
    seen = []
    while True:
        seen.append(msg := _next(ws, ("state", "ack", "error", "available", "pong"), timeout=20))
        if last(msg):
            return seen


def _state_at(ws, seq: int) -> dict:
    """The first table pushed on ``ws`` at move ``seq`` or later."""
    while (st := _table(ws))["seq"] < seq:
        pass
    return st


def _fresh_state(ws) -> dict:
    """The seat's table now: asked for, then a ping; the last table before the pong is the answer (what
    was pushed before it is read past)."""
    ws.send(json.dumps({"type": "state"}))
    ws.send(json.dumps({"type": "ping"}))
    last = None
    while (msg := _next(ws, ("state", "pong"), timeout=20))["type"] == "state":
        last = msg["state"]
    assert last is not None
    return last


def test_the_page_says_the_database_is_away_and_sends_the_move_again(own_postgres, tmp_path, browser):  # noqa: F811
    """Chromium at a table while the database stops: the move it sends is refused as unavailable, the
    page says so and sends it again by itself, every second; when the database is back the server says
    ``available`` and the page sends the move at once (its own timers stopped, to tell the two apart),
    and the move is on the table."""
    url, data = own_postgres
    s = Server(url, tmp_path, *limit_args(database_seconds=1))
    s.start()
    try:
        page = new_page(browser)
        page.clock.install()  # the page's timers, to be stopped below; time flows until then
        frames: list[tuple[str, dict]] = []

        def watch(ws) -> None:
            ws.on("framesent", lambda payload: frames.append(("sent", json.loads(payload))))
            ws.on("framereceived", lambda payload: frames.append(("received", json.loads(payload))))

        page.on("websocket", watch)
        create_table(page, s, "random", preset="nintendo")
        act_once(page)
        page.wait_for_selector(READY)
        at = seq(page)
        stalled_from = len(frames)
        _signal_all(data, signal.SIGSTOP)
        try:
            # Another request keeps the database busy until its deadline: from then on the server knows
            # that it does not answer, and the page's move is refused at once, with nothing in doubt.
            r = httpx.post(s.url + "/api/games", json={"opponent": "random"}, timeout=10)
            assert r.status_code == 503 and r.json()["error"] == "unavailable", r.text
            for _ in range(5):  # a card whose month lies twice on the table asks for the card to take
                if take_turn(page, use_keys=False) in ("play", "pick", "stop"):
                    break
            wait_js(page, "document.body.classList.contains('unavailable')", timeout=15000)
            assert "not answering" in page.inner_text("#status")
            assert seq(page) == at
            page.wait_for_timeout(1800)  # it keeps trying meanwhile, on its timer
            assert page.evaluate("document.body.classList.contains('unavailable')")
            actions = [m for way, m in frames[stalled_from:] if way == "sent" and m["type"] == "action"]
            assert len(actions) >= 2 and all(m == actions[0] for m in actions), actions
            page.clock.pause_at(page.evaluate("Date.now()") + 10)
            sent_before = len(frames)
        finally:
            _signal_all(data, signal.SIGCONT)
        # With its timers stopped, only the server's word can make the page send the move again.
        told = ("received", {"type": "available"})

        def sent_when_told() -> bool:
            later = frames[sent_before:]
            return told in later and ("sent", actions[0]) in later[later.index(told) :]

        deadline = time.monotonic() + 20
        while not sent_when_told():
            assert time.monotonic() < deadline, frames[sent_before:]
            page.wait_for_timeout(50)
        page.clock.resume()
        wait_js(page, f"Number(document.body.dataset.seq) > {at}", timeout=20000)
        wait_js(page, "!document.body.classList.contains('unavailable')", timeout=20000)
        act_once(page)  # and play goes on
        assert not page.errors  # type: ignore[attr-defined]
    finally:
        s.stop(hard=False)


def test_a_tab_closed_while_the_database_is_away_is_noted_when_it_returns(own_postgres, tmp_path):
    """A player who closes their tab while the database is stuck is still noted as gone once it answers
    again: the note is asked again rather than lost, so the claim against the closed tab comes after its
    short wait, not only when the clock runs out."""
    from test_web_clocks import SLOW, both_move_once, friend_game, play_first_legal, state_of, table_now

    url, data = own_postgres
    s = Server(url, tmp_path, *limit_args(database_seconds=1, claim_seconds=30, claim_closed_seconds=1))
    s.start()
    try:
        with s.client() as host, s.client() as guest:
            game, guest_token = friend_game(host, guest, SLOW)
            with connect(f"{s.ws_url}/ws/{game['token']}") as ws0, connect(f"{s.ws_url}/ws/{guest_token}") as ws1:
                st = both_move_once({0: ws0, 1: ws1})
                while st["current_player"] != 0:
                    st = _play([ws0, ws1], st)
                _signal_all(data, signal.SIGSTOP)
                try:
                    # The host's move waits on the database (in doubt), and from then on calls are refused at
                    # once: the guest's closing tab is refused too.
                    play_first_legal(ws0, st)
                    refused = _next(ws0, ("error", "ack"), timeout=10)
                    while refused["type"] == "ack" and refused["seq"] <= st["seq"]:
                        # the acknowledgement of the host's earlier move, which came after its table
                        refused = _next(ws0, ("error", "ack"), timeout=10)
                    assert refused["code"] == "unavailable", refused
                    ws1.send(json.dumps({"type": "bye"}))
                    ws1.close(code=1001)
                    time.sleep(1.5)
                finally:
                    _signal_all(data, signal.SIGCONT)
                # The move lands: it was in doubt and goes through now, or (when a sweep's call held the
                # database thread as it stopped) it was refused before it reached the database, and is sent
                # again once the server says the database answers, as the page does. The host plays on
                # while the turn is still theirs (a capture to choose, koi-koi or stop).
                _next(ws0, ("available",), timeout=30)
                now = table_now(ws0)
                while now["current_player"] == 0:
                    play_first_legal(ws0, now)  # answered "stale" if the move in doubt landed meanwhile
                    now = state_of(ws0, lambda t, seq=now["seq"]: t["seq"] > seq)
                # The guest's turn, and the guest's closed tab is noted, so the claim comes.
                claim = state_of(ws0, lambda t: t["claim"] is not None and t["claim"]["closed"], timeout=30)
                assert claim["away"] == [False, True] and claim["current_player"] == 1
                assert claim["claim"]["in"] <= 1
    finally:
        s.stop(hard=False)
