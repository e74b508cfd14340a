"""Abuse of the web app, as an attacker on the same machine would try it, and what it costs honest players.

Starts ``koikoi serve`` on loopback with a fresh SQLite database and runs each scenario against it,
printing the figure next to the limit that holds it:

1. ``replay``: the largest valid record the server takes is uploaded to ``/api/replay`` while
   ``/api/health`` is asked every 20 ms; prints how long the upload took and the slowest health answer
   (the event loop's blocked time).
2. ``sockets``: 500 WebSockets opened on one seat while two honest players play a friend game; prints
   how many the server kept and the honest game's action round trip (p50 / p99) before and during.
3. ``hints``: 120 hint requests over 10 games against ``hard`` while the honest game plays on and a
   game against ``easy`` waits for the computer; prints the refusals, the honest round trip and the
   computer's reply time, before and during.
4. ``games``: 5,000 games created (with the creation limits raised, so that the memory bound is what
   is measured); prints the server's RSS before and after and how many games it keeps in memory. Then
   the same from one address at the default limits: how many are refused.
5. ``slowloris``: 2,000 connections that send half a request line and wait; prints how many the
   server refused at once and how many it still holds after the header timeout.

The scenarios below run against an unrelated honest friend game, played from an address of its own
(127.0.0.3) by two players over WebSockets: its action round trip (p50 / p99) is measured for 6 s
before the attack and for as long as the attack lasts (an action held up by the attack counts in full,
however long its answer takes, up to 20 s after the attack; one still unanswered then counts as that
long). The attacker is 127.0.0.1; "other clients" are 127.0.0.2.

6. ``quadratic-http``: JSON bodies ``"`` + ``\\"`` x N (16, 32 and 64 KB: a string that never ends, which
   a backtracking scan reads in time N squared) POSTed by 3 clients for 10 s to ``/api/rules/check``,
   ``/api/games`` and the join and action routes of made-up tokens.
7. ``quadratic-ws``: 4,095-character WebSocket messages of that shape, from the attacker's own friend
   game (both seats, 2 sockets each), 9 a second on each socket for 10 s.
8. ``quadratic-record``: records of that shape (1 and 2 MB, bare and inside a JSON object) uploaded to
   ``/api/replay``, one after another, each given 20 s.
9. ``refused-sockets``: 4,200 WebSockets with made-up tokens from one address, opened as fast as the
   server takes them for 45 s and held without reading past the first message (never closed politely),
   while other clients (127.0.0.2) ask for ``/api/health`` and ``/api/rules/check``: how many of
   theirs got a 503 or failed.
10. ``replay-flood``: a friend game of the most hands the rules allow, played to the end at random
    (over HTTP, the table pushed over WebSockets), then its replay asked by 4 clients in a loop for 10 s.
11. ``http-actions``: a friend game played as fast as it goes over ``POST /api/seat/<token>/action``,
    the table read with ``GET /api/seat/<token>``, for 10 s: actions a second, and the 429s.
12. ``bad-types``: JSON bodies with a wrong type in every field, to every POST route (and records with
    one to ``/api/replay``): the status codes (a 5xx is a finding) and whether every answer carries the
    security headers. Run with the creation limits raised, so that every body reaches the checks.
13. ``planted-cookie``: a ``koikoi_id`` cookie chosen by an attacker is sent by a victim who creates a
    game; then the attacker, with the same cookie, lists ``/api/games``: seeing the victim's game (and
    its seat token) is a finding. The server should replace a cookie it did not give out.
14. ``bad-utf8-frames``: 200 WebSockets on the attacker's own seat that each send one text frame that
    is not UTF-8: how the server answered, how much its log grew and whether it logged a traceback.
15. ``lobby-opens``: with 300 open seeks in the lobby (about 35 KB of lists), 640 lobby WebSockets opened
    from 10 addresses (127.0.0.10 to .19, 16 at a time from each) as fast as they go, each reading its
    first message and closing: how many were sent the lobby or refused, and the server's CPU while they
    opened (CPU-seconds a second, and per open).
16. ``sign-in-flood``: 48 addresses (127.0.1.1 to .48) each keep one sign-in with a made-up name in flight
    for 20 s, at the default limits (each address stays under its own), while a real player signs in
    every 2 s, from a browser that never signed in before and from one that did (its device cookie): how
    long each of their sign-ins took and how it was answered.
17. ``lockout``: wrong passwords for a real account from 10 addresses (127.0.2.1 to .10), 3 each, then the
    owner signs in from the browser they signed in with before, and from a new one: how each was answered.

Every scenario prints one line with the honest game's p50 / p99 before and during, the 5xx answers the
attack got (for a WebSocket: an error "server" or a close 1011) and the attack's own outcome; then a
table of all. The target: no attack takes the unrelated game's p99 above 100 ms, and none gets a 5xx.

Bounded: loopback only (127.0.0.0/8), fixed counts, every wait has a time limit; each scenario takes
under about a minute. The server is whichever ``koikoi`` the interpreter imports: to measure another
checkout, run with ``PYTHONPATH=<checkout>/src``. Figures are noisy on a busy machine: run it alone.

    python3 benchmarks/web_attack.py                 # every scenario
    python3 benchmarks/web_attack.py --only replay,hints
    python3 benchmarks/web_attack.py --only quadratic-http,planted-cookie
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import dataclasses
import json
import os
import random
import socket
import statistics
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import websockets
from web_load import cpu_seconds  # the server's CPU, its worker processes included

STOP = 289
OLD_SCENARIOS = ("replay", "sockets", "hints", "games", "slowloris")
NEW_SCENARIOS = (
    "quadratic-http",
    "quadratic-ws",
    "quadratic-record",
    "refused-sockets",
    "replay-flood",
    "http-actions",
    "bad-types",
    "planted-cookie",
    "bad-utf8-frames",
    "lobby-opens",
    "sign-in-flood",
    "lockout",
)
SCENARIOS = OLD_SCENARIOS + NEW_SCENARIOS

ATTACKER = "127.0.0.1"  # the server's own address: every attack comes from it
OTHER = "127.0.0.2"  # other clients, asking while an attack runs
HONEST = "127.0.0.3"  # the unrelated honest game
TARGET_P99_MS = 100.0
SECURITY_HEADERS = (
    "content-security-policy",
    "x-frame-options",
    "x-content-type-options",
    "referrer-policy",
    "cross-origin-opener-policy",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, tmp: Path, *limits: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws = f"ws://127.0.0.1:{self.port}"
        self.log = tmp / f"attack-{self.port}.log"
        cmd = [
            sys.executable,
            "-c",
            "import sys; from koikoi.cli import main; sys.exit(main())",
            "serve",
            "--port",
            str(self.port),
            "--database-url",
            str(tmp / f"attack-{self.port}.db"),
            "--ai-delay",
            "0",
        ]
        for limit in limits:
            cmd += ["--limit", limit]
        self._stderr = open(self.log, "wb")
        self.proc = subprocess.Popen(
            cmd,
            env=dict(os.environ, XDG_DATA_HOME=str(tmp)),
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
        )
        for _ in range(300):
            try:
                if httpx.get(self.url + "/api/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise SystemExit("the server did not start")

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def open_files(self) -> int:
        try:
            return len(os.listdir(f"/proc/{self.proc.pid}/fd"))
        except OSError:
            return -1

    def log_size(self) -> int:
        return self.log.stat().st_size

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=20)
        self._stderr.close()


def pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))] * 1000 if v else float("nan")


def show(values: list[float]) -> str:
    return f"p50 {pct(values, 0.5):.1f} ms, p99 {pct(values, 0.99):.1f} ms ({len(values)} actions)"


# -- an honest friend game, played while the attack runs ----------------------------------------------


async def friend_game(base: str, ws_base: str) -> tuple[str, str]:
    async with httpx.AsyncClient(base_url=base) as host, httpx.AsyncClient(base_url=base) as guest:
        g = (
            await host.post(
                "/api/games",
                json={"name": "Ann", "opponent": "friend", "rules": {"preset": "nintendo", "options": {"hands": 12}}},
            )
        ).json()
        j = (await guest.post(f"/api/invite/{g['invite_token']}/join", json={"name": "Bo"})).json()
        return g["token"], j["token"]


async def honest_play(base: str, ws_base: str, until: float, think: float = 0.05) -> list[float]:
    """Two honest players play friend games (a new one when a match ends) until ``until``; returns each
    action's round trip, from sending it to its acknowledgement."""
    times: list[float] = []
    rng = random.Random(7)

    async def one(token: str) -> None:
        async with websockets.connect(f"{ws_base}/ws/{token}", max_size=2**22) as ws:
            sent = None
            acted = -1
            st = None
            while time.monotonic() < until:
                try:
                    msg = json.loads(await asyncio.wait_for(ws.recv(), max(0.05, until - time.monotonic())))
                except TimeoutError:
                    return
                if msg["type"] == "ack":
                    if sent is not None:
                        times.append(time.perf_counter() - sent)
                    sent = None
                elif msg["type"] == "error":
                    sent = None
                    st = msg.get("state", st)
                else:
                    st = msg["state"]
                # The state after our own move may be ours again; it comes before the ack: act once both are in.
                if st is None:
                    continue
                if st["match_over"]:
                    return
                if st["to_move"] and sent is None and st["seq"] != acted:
                    await asyncio.sleep(think)
                    acted = st["seq"]
                    sent = time.perf_counter()
                    action = rng.choice(st["legal"])
                    await ws.send(json.dumps({"type": "action", "action": action, "seq": st["seq"]}))

    while time.monotonic() < until:
        tokens = await friend_game(base, ws_base)
        await asyncio.gather(one(tokens[0]), one(tokens[1]))
    return times


async def computer_reply_times(base: str, ws_base: str, until: float) -> list[float]:
    """A game against ``easy``: the time from our action to the computer's next move being shown."""
    async with httpx.AsyncClient(base_url=base) as c:
        g = (
            await c.post(
                "/api/games",
                json={"name": "Cy", "opponent": "easy", "rules": {"preset": "nintendo", "options": {"hands": 12}}},
            )
        ).json()
    out: list[float] = []
    async with websockets.connect(f"{ws_base}/ws/{g['token']}", max_size=2**22) as ws:
        sent = None
        while time.monotonic() < until:
            try:
                msg = json.loads(await asyncio.wait_for(ws.recv(), max(0.05, until - time.monotonic())))
            except TimeoutError:
                break
            st = msg.get("state")
            if st is None:
                continue
            if st["match_over"]:
                break
            if st["to_move"]:
                if sent is not None and st["current_player"] == 0:
                    out.append(time.perf_counter() - sent)
                    sent = None
                legal = st["legal"]
                await ws.send(
                    json.dumps({"type": "action", "action": STOP if STOP in legal else legal[0], "seq": st["seq"]})
                )
                sent = time.perf_counter()
    return out


# -- what a scenario found, and the honest game measured around an attack ----------------------------


@dataclass
class Result:
    """One scenario's figures: the honest game's round trips before and during the attack (seconds; None
    where the scenario does not play one), the 5xx answers the attack got, and what else it found."""

    name: str
    before: list[float] | None = None
    during: list[float] | None = None
    server_errors: int = 0
    outcome: dict[str, int] = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)
    honest_failures: int = 0  # the honest game's own requests and sockets that failed during the attack
    note: str = ""

    def met(self) -> bool:
        if self.during is not None and (not self.during or pct(self.during, 0.99) > TARGET_P99_MS):
            return False
        return self.server_errors == 0 and self.honest_failures == 0 and not self.findings

    def line(self) -> str:
        parts = [f"{self.name}:"]
        if self.before is not None:
            parts.append(f"honest game before {show(self.before)};")
        if self.during is not None:
            parts.append(f"during {show(self.during)};")
            if self.honest_failures:
                parts.append(f"{self.honest_failures} of its requests failed;")
        parts.append(f"5xx {self.server_errors};")
        parts.append("outcome " + (", ".join(f"{k}: {v}" for k, v in self.outcome.items()) or "-"))
        text = " ".join(parts)
        if self.note:
            text += f"; {self.note}"
        if self.findings:
            text += "; FINDINGS: " + "; ".join(self.findings)
        return text


def summary(results: list[Result]) -> str:
    def pp(v: list[float] | None) -> str:
        return "-" if v is None else f"{pct(v, 0.5):.0f} / {pct(v, 0.99):.0f} ms" if v else "none"

    rows = [("scenario", "before p50/p99", "during p50/p99", "5xx", "target met?")]
    for r in results:
        why = []
        if r.during is not None and (not r.during or pct(r.during, 0.99) > TARGET_P99_MS):
            why.append("p99")
        if r.server_errors:
            why.append("5xx")
        if r.honest_failures:
            why.append("honest failures")
        if r.findings:
            why.append("finding")
        rows.append(
            (r.name, pp(r.before), pp(r.during), str(r.server_errors), "yes" if r.met() else f"NO ({', '.join(why)})")
        )
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    out = [" | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    out.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(out) + (
        f"\ntarget: no attack takes the unrelated game's p99 above {TARGET_P99_MS:.0f} ms, none gets a 5xx "
        "(the honest game's own requests all answered, and no other finding)"
    )


def tally(counts: dict[str, int], key: str, n: int = 1) -> None:
    counts[key] = counts.get(key, 0) + n


def fives(counts: dict[str, int]) -> int:
    """The 5xx answers among ``counts``, whose keys start with the status code."""
    return sum(v for k, v in counts.items() if k[:1] == "5" and k[:3].isdigit())


def random_token(n: int = 20) -> str:
    return "".join(random.choices(string.ascii_letters + string.digits, k=n))


def quadratic(size: int) -> bytes:
    """``"`` + ``\\"`` x N, ``size`` bytes at most: a JSON string that never ends, each of whose quotes
    starts another scan to the end in a backtracking string pattern."""
    return b'"' + b'\\"' * ((size - 1) // 2)


def client_at(base: str, local: str, **kwargs: Any) -> httpx.AsyncClient:
    """An HTTP client whose connections come from the loopback address ``local``."""
    return httpx.AsyncClient(base_url=base, transport=httpx.AsyncHTTPTransport(local_address=local), **kwargs)


class Honest:
    """An unrelated friend game from its own address, played in the background by two honest players
    over WebSockets (a new game when one ends), each action's round trip recorded with when it was sent
    and answered."""

    def __init__(self, s: Server, local: str = HONEST, think: float = 0.05, grace: float = 20.0) -> None:
        self.s = s
        self.local = local
        self.think = think
        self.grace = grace
        self.samples: list[tuple[float, float]] = []  # (sent, answered), time.monotonic()
        self.failures: list[tuple[float, str]] = []
        self.rng = random.Random(7)
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """Stop once the actions in flight are answered (at most ``grace`` seconds)."""
        self._stop.set()
        assert self._task is not None
        try:
            await asyncio.wait_for(self._task, self.grace + 15)
        except TimeoutError:
            self.failures.append((time.monotonic(), "did not stop"))

    def before(self, t: float) -> list[float]:
        return [b - a for a, b in self.samples if b < t]

    def overlapping(self, t0: float, t1: float) -> list[float]:
        return [b - a for a, b in self.samples if b >= t0 and a <= t1]

    def failed_between(self, t0: float, t1: float) -> int:
        return sum(1 for t, _ in self.failures if t0 <= t <= t1)

    async def _game(self) -> tuple[str, str]:
        async with (
            client_at(self.s.url, self.local, timeout=30) as host,
            client_at(self.s.url, self.local, timeout=30) as guest,
        ):
            r = await host.post(
                "/api/games",
                json={"name": "Ann", "opponent": "friend", "rules": {"preset": "nintendo", "options": {"hands": 12}}},
            )
            r.raise_for_status()
            g = r.json()
            r = await guest.post(f"/api/invite/{g['invite_token']}/join", json={"name": "Bo"})
            r.raise_for_status()
            return g["token"], r.json()["token"]

    async def _seat(self, token: str) -> None:
        async with websockets.connect(
            f"{self.s.ws}/ws/{token}", max_size=2**22, open_timeout=30, local_addr=(self.local, 0)
        ) as ws:
            sent: float | None = None
            acted = -1
            st = None
            stopping: float | None = None
            while True:
                if self._stop.is_set():
                    if sent is None:
                        return
                    stopping = stopping or time.monotonic()
                    if time.monotonic() - stopping > self.grace:  # still unanswered: counts as this long
                        self.samples.append((sent, time.monotonic()))
                        return
                try:
                    msg = json.loads(await asyncio.wait_for(ws.recv(), 0.25))
                except TimeoutError:
                    continue
                if msg["type"] == "ack":
                    if sent is not None:
                        self.samples.append((sent, time.monotonic()))
                    sent = None
                elif msg["type"] == "error":
                    sent = None
                    st = msg.get("state", st)
                    if msg.get("code") not in ("stale", "not_your_turn"):
                        self.failures.append((time.monotonic(), f"error {msg.get('code')}"))
                elif "state" in msg:
                    st = msg["state"]
                if st is None:
                    continue
                if st["match_over"]:
                    if sent is None:
                        return
                    continue
                if st["to_move"] and sent is None and st["seq"] != acted and not self._stop.is_set():
                    await asyncio.sleep(self.think)
                    acted = st["seq"]
                    sent = time.monotonic()
                    action = self.rng.choice(st["legal"])
                    await ws.send(json.dumps({"type": "action", "action": action, "seq": st["seq"]}))

    async def _run(self) -> None:
        while not self._stop.is_set():
            try:
                a, b = await self._game()
                tasks = [asyncio.create_task(self._seat(a)), asyncio.create_task(self._seat(b))]
                done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
                for t in pending:
                    t.cancel()
                for t in done:
                    t.result()
            except Exception as e:  # a refused request, a socket closed on us: a failure, and a new game
                self.failures.append((time.monotonic(), f"{type(e).__name__}: {e}"[:200]))
                await asyncio.sleep(0.5)


async def measured(
    s: Server, name: str, attack: Callable[[], Awaitable[Result]], *, before_s: float = 6.0, min_during_s: float = 4.0
) -> Result:
    """Run ``attack`` while the honest game plays: its round trips ``before_s`` seconds before the attack
    and those in flight while it runs (at least ``min_during_s``: a quick attack's effect may lag)."""
    honest = Honest(s)
    honest.start()
    await asyncio.sleep(before_s)
    t0 = time.monotonic()
    try:
        result = await attack()
    except Exception as e:
        result = Result(name, findings=[f"the attack failed: {type(e).__name__}: {e}"[:300]])
    left = min_during_s - (time.monotonic() - t0)
    if left > 0:
        await asyncio.sleep(left)
    t1 = time.monotonic()
    await honest.stop()
    result.before = honest.before(t0)
    result.during = honest.overlapping(t0, t1)
    result.honest_failures = honest.failed_between(t0, time.monotonic())
    if honest.failures:
        kinds: dict[str, int] = {}
        for _, what in honest.failures:
            tally(kinds, what.split(":")[0])
        result.note = (result.note + "; " if result.note else "") + f"honest game's failures: {kinds}"
    return result


# -- a WebSocket by hand: the handshake and frames, for what a library would not send -----------------


async def ws_open(
    port: int, path: str, *, local: str | None = None, timeout: float = 10.0
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, int]:
    """A raw WebSocket handshake on ``path``: (reader, writer, the answer's status code)."""
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection("127.0.0.1", port, local_addr=(local, 0) if local else None), timeout
    )
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    except BaseException:
        writer.transport.abort()
        raise
    return reader, writer, int(head.split(b" ", 2)[1])


def ws_frame(opcode: int, payload: bytes, mask: bytes | None = None) -> bytes:
    """One final client frame (masked, as a client's must be)."""
    mask = os.urandom(4) if mask is None else mask
    n = len(payload)
    if n < 126:
        head = bytes([0x80 | opcode, 0x80 | n])
    elif n < 1 << 16:
        head = bytes([0x80 | opcode, 0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([0x80 | opcode, 0x80 | 127]) + n.to_bytes(8, "big")
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def ws_read(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One frame from the server: (opcode, payload)."""
    b0, b1 = await reader.readexactly(2)
    n = b1 & 0x7F
    if n == 126:
        n = int.from_bytes(await reader.readexactly(2), "big")
    elif n == 127:
        n = int.from_bytes(await reader.readexactly(8), "big")
    mask = await reader.readexactly(4) if b1 & 0x80 else None
    data = await reader.readexactly(n)
    if mask:
        data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
    return b0 & 0x0F, data


async def friend_pair(base: str, local: str = ATTACKER, hands: int = 12) -> dict[str, Any]:
    """A friend game with both seats taken: its id and the two seat tokens."""
    async with client_at(base, local, timeout=30) as host, client_at(base, local, timeout=30) as guest:
        r = await host.post(
            "/api/games",
            json={"name": "Mo", "opponent": "friend", "rules": {"preset": "nintendo", "options": {"hands": hands}}},
        )
        r.raise_for_status()
        g = r.json()
        r = await guest.post(f"/api/invite/{g['invite_token']}/join", json={"name": "Ed"})
        r.raise_for_status()
        return {"game_id": g["game_id"], "tokens": [g["token"], r.json()["token"]]}


# -- the scenarios ------------------------------------------------------------------------------------


def big_record(limit: int = 2 * 1024 * 1024) -> str:
    """The longest valid record under the upload limit: a match played at random for as many hands as a
    record may hold (an unfinished match, under rules that play to a target score nobody reaches)."""
    import dataclasses

    from koikoi.match import Match
    from koikoi.records import MAX_RECORD_HANDS, GameRecord
    from koikoi.rules import PRESETS, RuleSet

    top = next(f for f in dataclasses.fields(RuleSet) if f.name == "target_score").metadata["maximum"]
    rules = PRESETS["nintendo"].replace(hands=0, target_score=top, name="long")
    rng = random.Random(1)
    m = Match(rules, seed=1)
    while len(m.hands) < MAX_RECORD_HANDS and not m.is_over():
        m.apply_action(rng.choice(m.legal_actions()))
    text = GameRecord.from_match(m).to_json()
    while len(text) > limit:  # trim whole hands off the end until it fits
        m = Match(rules, seed=1)
        rng = random.Random(1)
        n = len(GameRecord.from_json(text).hands) * limit // len(text) - 1
        while len(m.hands) < n:
            m.apply_action(rng.choice(m.legal_actions()))
        text = GameRecord.from_match(m).to_json()
    return text


async def scenario_replay(tmp: Path) -> Result:
    record = big_record()
    s = Server(tmp)
    try:
        health: list[float] = []
        done = asyncio.Event()

        async def poll() -> None:
            async with httpx.AsyncClient(base_url=s.url) as c:
                await c.get("/api/health")  # connected before the upload starts: only the server is timed
                while not done.is_set():
                    t = time.perf_counter()
                    await c.get("/api/health")
                    health.append(time.perf_counter() - t)
                    if os.environ.get("ATTACK_DEBUG"):
                        print(f"  health {time.perf_counter():.3f} {health[-1] * 1000:.1f} ms", flush=True)
                    await asyncio.sleep(0.02)

        async with httpx.AsyncClient(base_url=s.url, timeout=600) as c:
            poller = asyncio.create_task(poll())
            await asyncio.sleep(0.2)
            t = time.perf_counter()
            r = await c.post("/api/replay", content=record.encode())
            took = time.perf_counter() - t
            done.set()
            await poller
        frames = len(r.json()["frames"]) if r.status_code == 200 else 0
        print(
            f"replay: a {len(record) / 1024:.0f} KB record ({frames} frames) answered {r.status_code} in "
            f"{took:.2f} s; /api/health during it: {len(health)} answers, slowest {max(health) * 1000:.1f} ms, "
            f"median {statistics.median(health) * 1000:.1f} ms  [limit: blocked < 100 ms; records up to "
            f"2 MB, parsed off the event loop]"
        )
        return Result(
            "replay",
            during=health,
            server_errors=int(r.status_code >= 500),
            outcome={str(r.status_code): 1},
            note="'during': /api/health answers while the upload is read, not an honest game",
        )
    finally:
        s.stop()


async def scenario_sockets(tmp: Path) -> Result:
    s = Server(tmp)
    try:
        before = await honest_play(s.url, s.ws, time.monotonic() + 8)
        async with httpx.AsyncClient(base_url=s.url) as c:
            victim = (await c.post("/api/games", json={"name": "V", "opponent": "friend"})).json()["token"]
        held: list[websockets.ClientConnection] = []

        async def flood() -> int:
            kept = 0
            for _ in range(500):
                try:
                    ws = await websockets.connect(f"{s.ws}/ws/{victim}", open_timeout=5)
                except Exception:
                    continue
                held.append(ws)
                try:
                    first = json.loads(await asyncio.wait_for(ws.recv(), 5))
                    if first.get("type") == "state":
                        kept += 1
                except Exception:
                    pass
            return kept

        until = time.monotonic() + 12
        kept, during = await asyncio.gather(flood(), honest_play(s.url, s.ws, until))
        for ws in held:
            await ws.close()
        print(
            f"sockets: 500 WebSockets on one seat -> {kept} kept, {500 - kept} refused  [limit: "
            f"sockets_per_seat 4, sockets_per_address 64]; honest game before: {show(before)}; during: "
            f"{show(during)}"
        )
        return Result("sockets", before=before, during=during, outcome={"kept": kept, "refused": 500 - kept})
    finally:
        s.stop()


async def scenario_hints(tmp: Path) -> Result:
    s = Server(tmp)
    try:
        until = time.monotonic() + 10
        before, ai_before = await asyncio.gather(
            honest_play(s.url, s.ws, until), computer_reply_times(s.url, s.ws, until)
        )
        games = []
        seqs: dict[str, int] = {}
        async with httpx.AsyncClient(base_url=s.url) as c:
            for i in range(10):
                r = await c.post(
                    "/api/games", json={"name": f"H{i}", "opponent": "hard", "rules": {"preset": "nintendo"}}
                )
                games.append(r.json()["token"])
            # Each game at the player's turn first (the computer may deal and move first), so that only the
            # hints are measured, not the hard computer's own first moves.
            for t in games:
                for _ in range(200):
                    st = (await c.get(f"/api/seat/{t}")).json()
                    if st["to_move"]:
                        break
                    await asyncio.sleep(0.05)
                seqs[t] = st["seq"]
        answers: dict[str, int] = {}

        async def flood() -> None:
            async with httpx.AsyncClient(base_url=s.url, timeout=60, limits=httpx.Limits(max_connections=20)) as c:

                async def ask(token: str, seq: int) -> None:
                    r = await c.get(f"/api/seat/{token}/hint", params={"seq": seq})
                    error = r.json().get("error", "") if r.headers.get("content-type") == "application/json" else ""
                    key = str(r.status_code) + ("" if r.status_code == 200 else " " + error)
                    answers[key] = answers.get(key, 0) + 1

                await asyncio.sleep(2)  # the computer's game is under way first
                await asyncio.gather(*(ask(t, seqs[t]) for t in games for _ in range(12)))

        until = time.monotonic() + 15
        _, during, ai_during = await asyncio.gather(
            flood(), honest_play(s.url, s.ws, until), computer_reply_times(s.url, s.ws, until)
        )
        shown = ", ".join(f"{k}: {v}" for k, v in sorted(answers.items()))
        print(
            f"hints: 120 requests over 10 games against hard -> {shown}  [limit: one pending per seat, "
            f"hints_pending 8, hints use at most all workers but one]"
        )
        print(f"hints: honest game before: {show(before)}; during: {show(during)}")
        print(
            f"hints: the computer (easy) replied in mean {statistics.fmean(ai_before) * 1000:.0f} ms, worst "
            f"{max(ai_before) * 1000:.0f} ms before; mean {statistics.fmean(ai_during) * 1000:.0f} ms, worst "
            f"{max(ai_during) * 1000:.0f} ms during  [limit: normal think + 1 s]"
        )
        return Result("hints", before=before, during=during, server_errors=fives(answers), outcome=answers)
    finally:
        s.stop()


async def scenario_games(tmp: Path) -> Result:
    s = Server(tmp, "games_per_minute=100000", "open_games_per_browser=100000")
    outcome: dict[str, int] = {}
    try:
        rss0 = s.rss_mb()
        async with httpx.AsyncClient(base_url=s.url, timeout=60, limits=httpx.Limits(max_connections=20)) as c:
            codes: dict[int, int] = {}

            async def make(i: int) -> None:  # against the computer: each game is loaded and played at once
                r = await c.post("/api/games", json={"name": f"G{i}", "opponent": "random"})
                codes[r.status_code] = codes.get(r.status_code, 0) + 1

            t = time.perf_counter()
            for start in range(0, 5000, 100):
                await asyncio.gather(*(make(i) for i in range(start, start + 100)))
            took = time.perf_counter() - t
            live = (await c.get("/api/health")).json()["live_games"]
        for k, v in codes.items():
            tally(outcome, f"{k} (raised limits)", v)
        print(
            f"games: 5,000 created in {took:.1f} s ({codes}); RSS {rss0:.0f} MB before, {s.rss_mb():.0f} MB "
            f"after; {live} games in memory  [limit: live_games 2000, idle ones go back to the database]"
        )
    finally:
        s.stop()
    s = Server(tmp)
    try:
        async with httpx.AsyncClient(base_url=s.url, timeout=60) as c:
            codes = {}
            for i in range(100):
                c.cookies.clear()  # a new browser each time: only the per-address limit holds
                r = await c.post("/api/games", json={"name": f"G{i}", "opponent": "friend"})
                codes[r.status_code] = codes.get(r.status_code, 0) + 1
        print(
            f"games: 100 creations in a burst from one address at the default limits -> {codes}  [limit: "
            f"games_per_minute 20, open_games_per_browser 50]"
        )
        for k, v in codes.items():
            tally(outcome, f"{k} (default limits)", v)
    finally:
        s.stop()
    return Result("games", server_errors=fives(outcome), outcome=outcome)


async def scenario_slowloris(tmp: Path) -> Result:
    s = Server(tmp, "header_timeout=5")
    try:
        socks = []
        refused_at_once = 0
        for _ in range(2000):
            k = socket.socket()
            k.settimeout(2)
            try:
                k.connect(("127.0.0.1", s.port))
                k.send(b"GET /api/health HT")
            except OSError:
                refused_at_once += 1
                k.close()
                continue
            socks.append(k)
        await asyncio.sleep(0.5)

        def closed(k: socket.socket) -> bool:
            k.setblocking(False)
            try:
                data = k.recv(4096)
                return True if data == b"" or data.startswith(b"HTTP/1.1 4") else False
            except BlockingIOError:
                return False
            except OSError:
                return True

        early = sum(closed(k) for k in socks)
        t = time.perf_counter()
        # An honest player elsewhere: another loopback address (the attacker's own address is refused).
        other = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
        async with httpx.AsyncClient(base_url=s.url, transport=other) as c:
            ok = (await c.get("/api/health")).status_code
        health_ms = (time.perf_counter() - t) * 1000
        await asyncio.sleep(6)
        still = sum(not closed(k) for k in socks)
        for k in socks:
            k.close()
        print(
            f"slowloris: 2,000 half-sent requests -> {early + refused_at_once} refused at once, /api/health "
            f"from another address meanwhile {ok} in {health_ms:.0f} ms, {still} still held after the 5 s header "
            f"timeout  [limits: "
            f"connections_per_address 64, header_timeout 10 s by default]"
        )
        return Result(
            "slowloris",
            server_errors=int(ok >= 500),
            outcome={"refused at once": early + refused_at_once, "held after the timeout": still},
            findings=[f"{still} connections held after the header timeout"] if still else [],
            note=f"/api/health from another address: {ok} in {health_ms:.0f} ms",
        )
    finally:
        s.stop()


# -- the scenarios of issue 29: each against the honest game ------------------------------------------


async def scenario_quadratic_http(tmp: Path, seconds: float = 10.0, clients: int = 3) -> Result:
    s = Server(tmp)
    fake = random_token()
    paths = ["/api/rules/check", "/api/games", f"/api/invite/{fake}/join", f"/api/seat/{fake}/action"]
    bodies = [quadratic(16 * 1024), quadratic(32 * 1024), quadratic(64 * 1024)]
    codes: dict[str, int] = {}
    took: list[float] = []

    async def attack() -> Result:
        end = time.monotonic() + seconds

        async def client(i: int) -> None:
            async with client_at(s.url, ATTACKER, timeout=45) as c:
                k = 0
                while time.monotonic() < end:  # client i starts with size i: the 64 KB body goes at once
                    path, body = paths[(k + i) % len(paths)], bodies[(i + k // len(paths)) % len(bodies)]
                    k += 1
                    t = time.perf_counter()
                    try:
                        r = await c.post(path, content=body, headers={"content-type": "application/json"})
                        tally(codes, str(r.status_code))
                    except httpx.TimeoutException:
                        tally(codes, "timeout (45 s)")
                    except httpx.HTTPError as e:
                        tally(codes, type(e).__name__)
                    took.append(time.perf_counter() - t)

        await asyncio.gather(*(client(i) for i in range(clients)))
        return Result(
            "quadratic-http",
            server_errors=fives(codes),
            outcome=codes,
            note=f"{len(took)} bodies of 16/32/64 KB; answered in median {statistics.median(took) * 1000:.0f} ms, "
            f"slowest {max(took) * 1000:.0f} ms",
            findings=[f"{codes.get('timeout (45 s)', 0)} bodies unanswered in 45 s"]
            if "timeout (45 s)" in codes
            else [],
        )

    try:
        return await measured(s, "quadratic-http", attack)
    finally:
        s.stop()


async def scenario_quadratic_ws(tmp: Path, seconds: float = 10.0, rate: float = 9.0) -> Result:
    s = Server(tmp)
    text = quadratic(4096).decode()
    replies: dict[str, int] = {}
    sent = [0]

    async def attack() -> Result:
        game = await friend_pair(s.url)
        socks = []
        for token in game["tokens"]:
            for _ in range(2):
                socks.append(
                    await websockets.connect(
                        f"{s.ws}/ws/{token}", max_size=2**22, open_timeout=30, local_addr=(ATTACKER, 0)
                    )
                )
        answered = [0]

        async def read(ws: websockets.ClientConnection) -> None:
            try:
                async for raw in ws:
                    msg = json.loads(raw)
                    if msg.get("type") == "error":
                        answered[0] += 1
                        tally(replies, f"error {msg.get('code')}")
                    elif msg.get("type") != "state":
                        answered[0] += 1
                        tally(replies, str(msg.get("type")))
            except websockets.ConnectionClosed:
                pass
            code = ws.close_code
            if code not in (None, 1000):
                tally(replies, f"closed {code}")

        async def write(ws: websockets.ClientConnection) -> None:
            end = time.monotonic() + seconds
            nxt = time.monotonic()
            while time.monotonic() < end:
                try:
                    await asyncio.wait_for(ws.send(text), 10)
                except (websockets.ConnectionClosed, TimeoutError):
                    return
                sent[0] += 1
                nxt += 1 / rate
                await asyncio.sleep(max(0.0, nxt - time.monotonic()))

        readers = [asyncio.create_task(read(ws)) for ws in socks]
        await asyncio.gather(*(write(ws) for ws in socks))
        t = time.monotonic()
        while answered[0] < sent[0] and time.monotonic() - t < 20 and not all(r.done() for r in readers):
            await asyncio.sleep(0.1)
        backlog = time.monotonic() - t
        for ws in socks:
            await ws.close()
        await asyncio.gather(*readers)
        bad = replies.get("error server", 0) + replies.get("closed 1011", 0)
        return Result(
            "quadratic-ws",
            server_errors=bad,
            outcome=replies,
            note=f"{sent[0]} messages of 4,095 characters sent, {answered[0]} answered; the last answered "
            f"{backlog:.1f} s after the sending stopped",
            findings=[f"{sent[0] - answered[0]} messages unanswered 20 s on"] if answered[0] < sent[0] else [],
        )

    try:
        return await measured(s, "quadratic-ws", attack)
    finally:
        s.stop()


async def scenario_quadratic_record(tmp: Path, per_upload: float = 20.0) -> Result:
    s = Server(tmp)
    limit = 2 * 1024 * 1024
    shape = quadratic(limit - 16)
    uploads = [
        (
            "object, shape as a string value",
            json.dumps({"format": "koikoi-record", "note": shape.decode()[: limit // 2 - 64]}),
        ),
        ("bare 1 MB", quadratic(1024 * 1024)),
        ("bare 2 MB", quadratic(limit)),
        ("object, shape unescaped", b'{"format": "koikoi-record", "hands": ' + shape[: limit - 64] + b"}"),
    ]
    codes: dict[str, int] = {}
    took: dict[str, float] = {}

    async def attack() -> Result:
        async with client_at(s.url, ATTACKER, timeout=per_upload) as c:
            for label, body in uploads:
                data = body.encode() if isinstance(body, str) else body
                t = time.perf_counter()
                try:
                    r = await c.post("/api/replay", content=data, headers={"content-type": "application/json"})
                    key = str(r.status_code)
                    if r.status_code >= 400 and r.headers.get("content-type", "").startswith("application/json"):
                        key += " " + str(r.json().get("error"))
                except httpx.TimeoutException:
                    key = f"timeout ({per_upload:g} s)"
                except httpx.HTTPError as e:
                    key = type(e).__name__
                took[label] = time.perf_counter() - t
                tally(codes, f"{label} ({len(data) / 1024:.0f} KB): {key}")
        late = [k for k in codes if "timeout" in k]
        return Result(
            "quadratic-record",
            server_errors=sum(v for k, v in codes.items() if k.split(": ")[-1][:1] == "5"),
            outcome=codes,
            note="answered in " + ", ".join(f"{v:.1f} s" for v in took.values()),
            findings=[f"{len(late)} uploads unanswered in {per_upload:g} s"] if late else [],
        )

    try:
        return await measured(s, "quadratic-record", attack)
    finally:
        s.stop()


async def scenario_refused_sockets(
    tmp: Path, count: int = 4200, seconds: float = 45.0, parallel: int = 48, others: int = 2
) -> Result:
    s = Server(tmp)
    held: list[asyncio.StreamWriter] = []
    attack_codes: dict[str, int] = {}
    other_codes: dict[str, int] = {}

    async def attack() -> Result:
        end = time.monotonic() + seconds
        started = [0]

        async def opener() -> None:
            while started[0] < count and time.monotonic() < end:
                started[0] += 1
                try:
                    reader, writer, status = await ws_open(s.port, f"/ws/{random_token()}", timeout=10)
                except (OSError, TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as e:
                    tally(attack_codes, f"failed: {type(e).__name__}")
                    continue
                held.append(writer)  # never read again, never closed politely
                if status != 101:
                    tally(attack_codes, str(status))
                    continue
                try:
                    _, data = await asyncio.wait_for(ws_read(reader), 10)
                    tally(attack_codes, f"101 then {json.loads(data).get('code')}")
                except Exception as e:
                    tally(attack_codes, f"101 then {type(e).__name__}")

        async def other(i: int) -> None:
            async with client_at(s.url, OTHER, timeout=10) as c:
                k = 0
                while time.monotonic() < end:
                    k += 1
                    try:
                        if k % 2:
                            r = await c.get("/api/health")
                        else:
                            r = await c.post("/api/rules/check", json={"rules": {"preset": "nintendo"}})
                        tally(other_codes, str(r.status_code))
                    except httpx.HTTPError as e:
                        tally(other_codes, f"failed: {type(e).__name__}")
                    await asyncio.sleep(0.05)

        peak_fds = [0]
        opened_in = [0.0]

        async def watch() -> None:  # the server's open files (its sockets), sampled
            t = time.monotonic()
            while time.monotonic() < end:
                peak_fds[0] = max(peak_fds[0], s.open_files())
                if started[0] < count:
                    opened_in[0] = time.monotonic() - t
                await asyncio.sleep(0.5)

        openers = [asyncio.create_task(opener()) for _ in range(parallel)]
        await asyncio.gather(*(other(i) for i in range(others)), watch(), *openers)
        for w in held:
            w.transport.abort()
        failed_others = sum(v for k, v in other_codes.items() if not k.startswith("2"))
        outcome = {f"attack {k}": v for k, v in attack_codes.items()}
        outcome.update({f"others {k}": v for k, v in other_codes.items()})
        return Result(
            "refused-sockets",
            server_errors=fives(attack_codes) + fives(other_codes),
            outcome=outcome,
            note=f"{started[0]} sockets opened in {opened_in[0]:.0f} s; the server held at most {peak_fds[0]} "
            f"open files; the other clients' requests: {sum(other_codes.values())}, "
            f"{failed_others} of them refused or failed",
            findings=[f"{failed_others} of the other clients' requests got a 503 or failed"] if failed_others else [],
        )

    try:
        return await measured(s, "refused-sockets", attack)
    finally:
        s.stop()


async def play_out(s: Server, tokens: list[str], deadline: float) -> dict[str, int]:
    """Play a friend game to its end at random: the table pushed over each seat's WebSocket, the actions
    POSTed. Returns the actions' status codes (with "over" if the match ended before ``deadline``)."""
    codes: dict[str, int] = {}
    rng = random.Random(3)
    async with client_at(s.url, ATTACKER, timeout=30) as c:

        async def seat(token: str) -> bool:
            async with websockets.connect(
                f"{s.ws}/ws/{token}", max_size=2**22, open_timeout=30, local_addr=(ATTACKER, 0)
            ) as ws:
                acted = -1
                while time.monotonic() < deadline:
                    try:
                        msg = json.loads(await asyncio.wait_for(ws.recv(), 1))
                    except TimeoutError:  # an action refused: ask for the table again
                        acted = -1
                        await ws.send(json.dumps({"type": "state"}))
                        continue
                    st = msg.get("state")
                    if st is None:
                        continue
                    if st["match_over"]:
                        return True
                    if st["to_move"] and st["seq"] > acted:
                        acted = st["seq"]
                        for _ in range(50):
                            r = await c.post(
                                f"/api/seat/{token}/action", json={"action": rng.choice(st["legal"]), "seq": st["seq"]}
                            )
                            tally(codes, str(r.status_code))
                            if r.status_code != 429:
                                break
                            await asyncio.sleep(min(2.0, float(r.headers.get("retry-after") or 0.2)))
            return False

        ends = await asyncio.gather(seat(tokens[0]), seat(tokens[1]))
    if any(ends):
        tally(codes, "over")
    return codes


def longest_match() -> int:
    """The most hands the rule option ``hands`` allows (100), at most 100."""
    from koikoi.rules import RuleSet

    top = next(f for f in dataclasses.fields(RuleSet) if f.name == "hands").metadata.get("maximum") or 100
    return min(100, int(top))


def known_limits(*settings: str) -> list[str]:
    """Of ``NAME=VALUE`` settings, those the server under test has (an older one refuses unknown names)."""
    from koikoi.web.limits import Limits

    names = {name for name, _default, _doc in Limits.docs()}
    return [x for x in settings if x.partition("=")[0] in names]


async def scenario_replay_flood(tmp: Path, seconds: float = 10.0, clients: int = 4, setup: float = 55.0) -> Result:
    # The long game is played over HTTP as fast as it goes: setting up, not the attack, so the server's
    # limit on HTTP actions (where it has one) is raised for it. The replays are asked at the defaults.
    s = Server(tmp, *known_limits("http_actions_per_second=1000", "http_action_burst=1000"))
    try:
        hands = longest_match()
        t = time.monotonic()
        game = await friend_pair(s.url, hands=hands)
        played = await play_out(s, game["tokens"], time.monotonic() + setup)
        setup_s = time.monotonic() - t
        played_note = ", ".join(f"{k}: {v}" for k, v in played.items())
        url = f"/api/games/{game['game_id']}/replay"
        codes: dict[str, int] = {}
        took: list[float] = []
        size = [0]

        async def attack() -> Result:
            end = time.monotonic() + seconds

            async def client() -> None:
                async with client_at(s.url, ATTACKER, timeout=30) as c:
                    while time.monotonic() < end:
                        t = time.perf_counter()
                        try:
                            r = await c.get(url, params={"token": game["tokens"][0]})
                            tally(codes, str(r.status_code))
                            if r.status_code == 200:  # a 429 says nothing of the replay's size
                                size[0] = len(r.content)
                        except httpx.HTTPError as e:
                            tally(codes, type(e).__name__)
                        took.append(time.perf_counter() - t)

            await asyncio.gather(*(client() for _ in range(clients)))
            return Result(
                "replay-flood",
                server_errors=fives(codes),
                outcome=codes,
                note=f"a {hands}-hand game played in {setup_s:.0f} s ({played_note}); its replay "
                f"({size[0] / 1024:.0f} KB) answered in median {statistics.median(took) * 1000:.0f} ms, slowest "
                f"{max(took) * 1000:.0f} ms",
                findings=[] if "over" in played else [f"the {hands}-hand game did not finish in {setup:.0f} s"],
            )

        return await measured(s, "replay-flood", attack)
    finally:
        s.stop()


async def scenario_http_actions(tmp: Path, seconds: float = 10.0) -> Result:
    s = Server(tmp)
    codes: dict[str, int] = {}

    async def attack() -> Result:
        rng = random.Random(5)
        game = await friend_pair(s.url, hands=longest_match())
        games, acks, cur = 1, 0, 0
        async with client_at(s.url, ATTACKER, timeout=30) as c:
            t0 = time.monotonic()
            end = t0 + seconds
            while time.monotonic() < end:
                tokens = game["tokens"]
                r = await c.get(f"/api/seat/{tokens[cur]}")
                tally(codes, f"GET {r.status_code}")
                if r.status_code != 200:
                    await asyncio.sleep(0.05)
                    continue
                st = r.json()
                if st["match_over"]:
                    game, games = await friend_pair(s.url, hands=longest_match()), games + 1
                    continue
                if not st["to_move"]:
                    cur ^= 1
                    continue
                r = await c.post(
                    f"/api/seat/{tokens[cur]}/action", json={"action": rng.choice(st["legal"]), "seq": st["seq"]}
                )
                tally(codes, f"POST {r.status_code}")
                if r.status_code == 200:
                    acks += 1
                elif r.status_code == 429:
                    await asyncio.sleep(0.05)
            took = time.monotonic() - t0
        too_many = codes.get("GET 429", 0) + codes.get("POST 429", 0)
        return Result(
            "http-actions",
            server_errors=sum(v for k, v in codes.items() if k.split()[-1][:1] == "5"),
            outcome=codes,
            note=f"{acks / took:.0f} actions a second got through ({acks} in {took:.1f} s, {games} game(s)); "
            f"{too_many} answered 429",
        )

    try:
        return await measured(s, "http-actions", attack)
    finally:
        s.stop()


WRONG: list[Any] = [[], {}, "x", "", 0, -1, 1.5, True, None, 10**40, [1], {"a": 1}, "\u0000"]


def wrong_bodies() -> list[bytes]:
    """JSON bodies with a wrong type (or no object at all) in every field the JSON routes read."""
    raw = [b"", b"[]", b'"x"', b"1", b"null", b"true", b"{}", b'{"a": 1, "a": 2}']
    named: list[dict[str, Any]] = [
        {"rules": {"preset": []}},
        {"rules": {"preset": {}}},
        {"rules": {"options": {"hands": "x"}}},
        {"name": []},
        {"opponent": 5},
        {"birth_months": "x"},
        {"action": "1", "seq": None},
        {"rules": {"options": {"": 1}}},
        {"rules": {"options": {"x" * 1000: 1}}},
        {"rules": {"preset": "nintendo (custom)"}},
    ]
    birth = {"opponent": "friend", "rules": {"preset": "nintendo", "options": {"dealer_selection": "birth_month"}}}
    for w in WRONG:
        named += [
            {"rules": w},
            {"rules": {"preset": w}},
            {"rules": {"options": w}},
            {"name": w, "opponent": "friend"},
            {"opponent": w},
            {**birth, "birth_months": w},
            {**birth, "birth_months": [w, 1]},
            {"action": w, "seq": 0},
            {"action": 0, "seq": w},
            {"type": w, "action": w, "seq": w},
        ]
    return raw + [json.dumps(b).encode() for b in named]


def option_bodies() -> list[bytes]:
    """A wrong type for every rule option."""
    from koikoi.rules import RuleSet

    names = [f.name for f in dataclasses.fields(RuleSet) if f.name != "name"]
    return [json.dumps({"rules": {"preset": "nintendo", "options": {n: w}}}).encode() for n in names for w in WRONG]


def with_opponent(bodies: list[bytes]) -> list[bytes]:
    """The bodies for ``POST /api/games``: an opponent where a body names none, so that a wrong type
    elsewhere is reached (the opponent is checked first)."""
    out = []
    for b in bodies:
        try:
            v = json.loads(b)
        except ValueError:
            v = None
        out.append(
            json.dumps({"opponent": "friend", **v}).encode() if isinstance(v, dict) and "opponent" not in v else b
        )
    return out


def record_bodies() -> list[bytes]:
    """A short valid record with a wrong type in one field at a time (top level, rules, a hand, a player)."""
    from koikoi.match import Match
    from koikoi.records import GameRecord
    from koikoi.rules import PRESETS

    m = Match(PRESETS["nintendo"].replace(hands=1), seed=3)
    rng = random.Random(3)
    while not m.is_over():
        m.apply_action(rng.choice(m.legal_actions()))
    good = GameRecord.from_match(m).to_dict()
    out = [json.dumps(good).encode()]
    few = [[], "x", None, 1.5, -1]
    for key in good:
        for w in WRONG:
            out.append(json.dumps({**good, key: w}).encode())
    for key in good["rules"]:
        for w in few:
            out.append(json.dumps({**good, "rules": {**good["rules"], key: w}}).encode())
    for key in good["hands"][0]:
        for w in WRONG:
            out.append(json.dumps({**good, "hands": [{**good["hands"][0], key: w}]}).encode())
    for key in good["players"][0]:
        for w in few:
            out.append(json.dumps({**good, "players": [{**good["players"][0], key: w}, good["players"][1]]}).encode())
    return out


async def scenario_bad_types(tmp: Path, budget: float = 40.0) -> Result:
    s = Server(tmp, "games_per_minute=100000", "open_games_per_browser=100000")
    codes: dict[str, int] = {}
    missing: dict[str, int] = {}
    examples: list[str] = []

    async def attack() -> Result:
        generic, options, records = wrong_bodies(), option_bodies(), record_bodies()
        game = await friend_pair(s.url)
        end = time.monotonic() + budget
        skipped = 0
        async with (
            client_at(s.url, ATTACKER, timeout=30) as c,
            client_at(s.url, ATTACKER, timeout=30) as host,
        ):
            invite = [""]

            async def fresh_invite() -> None:
                r = await host.post("/api/games", json={"opponent": "friend"})
                invite[0] = r.json()["invite_token"]

            await fresh_invite()
            review = f"/api/games/{game['game_id']}/review?token={game['tokens'][0]}"
            routes: list[tuple[str, Callable[[], str], list[bytes]]] = [
                ("rules/check", lambda: "/api/rules/check", generic + options),
                ("games", lambda: "/api/games", with_opponent(generic + options)),
                ("join", lambda: f"/api/invite/{invite[0]}/join", generic),
                ("action", lambda: f"/api/seat/{game['tokens'][0]}/action", generic),
                ("review", lambda: review, generic),
                ("replay", lambda: "/api/replay", generic + records),
            ]
            for name, path, bodies in routes:
                for body in bodies:
                    if time.monotonic() > end:
                        skipped += 1
                        continue
                    try:
                        try:
                            r = await c.post(path(), content=body, headers={"content-type": "application/json"})
                        except (httpx.ReadError, httpx.RemoteProtocolError):
                            # a kept-alive connection the server closed (after a 500, say): once more, anew
                            tally(codes, f"{name} retried on a new connection")
                            r = await c.post(path(), content=body, headers={"content-type": "application/json"})
                    except httpx.HTTPError as e:
                        tally(codes, f"{name} {type(e).__name__}")
                        if len(examples) < 8 and (x := f"{name} {type(e).__name__} on {body[:80]!r}") not in examples:
                            examples.append(x)
                        continue
                    tally(codes, f"{name} {r.status_code}")
                    x = f"{name} {r.status_code} on {body[:80]!r}"
                    if r.status_code >= 500 and len(examples) < 8 and x not in examples:
                        examples.append(x)
                    for h in SECURITY_HEADERS:
                        if h not in r.headers:
                            tally(missing, h)
                    if name == "join" and r.status_code == 200:
                        await fresh_invite()  # that body joined: the next needs an invitation again
        findings = [f"5xx or no answer: {', '.join(examples)}"] if examples else []
        if missing:
            findings.append(f"answers without security headers: {missing}")
        if skipped:
            findings.append(f"{skipped} bodies not sent in the {budget:.0f} s budget")
        sent = sum(codes.values())
        return Result(
            "bad-types",
            server_errors=sum(v for k, v in codes.items() if k.split()[-1][:1] == "5"),
            outcome=dict(sorted(codes.items())),
            note=f"{sent} bodies; every answer checked for {', '.join(SECURITY_HEADERS)}",
            findings=findings,
        )

    try:
        return await measured(s, "bad-types", attack)
    finally:
        s.stop()


def set_cookie(r: httpx.Response, name: str = "koikoi_id") -> str | None:
    for v in r.headers.get_list("set-cookie"):
        k, _, rest = v.partition("=")
        if k.strip() == name:
            return rest.split(";")[0]
    return None


async def scenario_planted_cookie(tmp: Path) -> Result:
    s = Server(tmp)
    codes: dict[str, int] = {}

    async def attack() -> Result:
        chosen = "planted_" + random_token(16)

        async def ask(method: str, path: str, cookie: str, **kw: Any) -> httpx.Response:
            async with client_at(s.url, ATTACKER, timeout=30) as c:  # a fresh client: only this cookie
                r = await c.request(method, path, headers={"cookie": f"koikoi_id={cookie}"}, **kw)
            tally(codes, f"{method} {path} {r.status_code}")
            return r

        r = await ask("POST", "/api/games", chosen, json={"name": "Victim", "opponent": "friend"})
        victim = r.json()
        replaced = set_cookie(r)
        mine = replaced if replaced and replaced != chosen else chosen
        own = await ask("GET", "/api/games", mine)
        seen = await ask("GET", "/api/games", chosen)
        by_victim = [g["game_id"] for g in own.json().get("games", [])]
        by_planter = seen.json().get("games", [])
        sees = any(g.get("game_id") == victim["game_id"] for g in by_planter)
        token = any(g.get("token") == victim["token"] for g in by_planter)
        findings = []
        if sees:
            findings.append("the planter sees the victim's game" + (" and its seat token" if token else ""))
        if victim["game_id"] not in by_victim:
            findings.append("the victim does not see its own game")
        return Result(
            "planted-cookie",
            outcome=codes,
            server_errors=fives({k.split()[-1]: v for k, v in codes.items()}),
            note=f"the server {'replaced' if mine != chosen else 'kept'} the planted cookie; the victim "
            f"{'sees' if victim['game_id'] in by_victim else 'does NOT see'} its game; the planter "
            f"{'SEES' if sees else 'does not see'} it",
            findings=findings,
        )

    try:
        return await measured(s, "planted-cookie", attack)
    finally:
        s.stop()


NOT_UTF8 = [
    b"\xff\xfe\xfd\xfc",
    b"\xc3\x28",  # a lead byte, then no continuation
    b"\xed\xa0\x80",  # an encoded surrogate
    b"\xf8\x88\x80\x80\x80",  # a five-byte form
    b"\xe2\x82",  # cut short
    b'{"type": "ping", "x": "\xff"}',  # JSON with one bad byte
]


async def scenario_bad_utf8_frames(tmp: Path, count: int = 200) -> Result:
    s = Server(tmp)
    answers: dict[str, int] = {}

    async def attack() -> Result:
        game = await friend_pair(s.url)
        token = game["tokens"][0]
        size0 = s.log_size()
        for i in range(count):
            try:
                reader, writer, status = await ws_open(s.port, f"/ws/{token}", local=ATTACKER)
            except (OSError, TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as e:
                tally(answers, f"failed: {type(e).__name__}")
                continue
            try:
                if status != 101:
                    tally(answers, str(status))
                    continue
                writer.write(ws_frame(0x1, NOT_UTF8[i % len(NOT_UTF8)]))
                got = None
                while got is None:
                    op, data = await asyncio.wait_for(ws_read(reader), 5)
                    if op == 0x8:
                        got = f"closed {int.from_bytes(data[:2], 'big') if len(data) >= 2 else 1005}"
                    elif op == 0x1:
                        msg = json.loads(data)
                        if msg.get("type") != "state":
                            got = f"{msg.get('type')} {msg.get('code', '')}".strip()
                tally(answers, got)
            except asyncio.IncompleteReadError:
                tally(answers, "connection ended")
            except TimeoutError:
                tally(answers, "no answer in 5 s")
            finally:
                writer.transport.abort()
            await asyncio.sleep(0.01)
        await asyncio.sleep(1)  # what the server has to say about the last one
        grown = s.log_size() - size0
        with open(s.log, "rb") as f:
            f.seek(size0)
            new = f.read()
        tb = b"Traceback" in new
        bad = answers.get("error server", 0) + answers.get("closed 1011", 0)
        return Result(
            "bad-utf8-frames",
            server_errors=bad,
            outcome=answers,
            note=f"the server's log grew {grown} bytes ({grown / max(1, count):.0f} a frame); traceback: "
            f"{'YES' if tb else 'no'}",
            findings=["the server logged a traceback"] if tb else [],
        )

    try:
        return await measured(s, "bad-utf8-frames", attack)
    finally:
        s.stop()


async def scenario_lobby_opens(
    tmp: Path, seeks: int = 300, addresses: int = 10, per_address: int = 64, parallel: int = 16
) -> Result:
    # The seeks are set up from three guests with the seek limits raised (setting up, not the attack); the
    # lobby sockets are opened at the defaults.
    s = Server(tmp, *known_limits("seeks_per_player=100", "seeks_per_minute=100000"))
    codes: dict[str, int] = {}
    creators = [client_at(s.url, "127.0.0.4", timeout=30) for _ in range(seeks // 100)]
    cookies: dict[str, str] = {}

    async def attack() -> Result:
        reads0 = (await creators[0].get("/api/health")).json().get("lobby_reads")
        cpu0, t0 = cpu_seconds(s.proc.pid), time.monotonic()

        async def opener(local: str, n: int) -> None:
            for _ in range(n):
                try:
                    async with websockets.connect(
                        f"{s.ws}/ws/lobby",
                        additional_headers={"Cookie": cookies[local]},
                        local_addr=(local, 0),
                        open_timeout=30,
                        max_size=2**22,
                    ) as ws:
                        msg = json.loads(await asyncio.wait_for(ws.recv(), 30))
                        tally(codes, "lobby" if msg["type"] == "lobby" else f"refused {msg.get('code')}")
                except Exception as e:
                    tally(codes, f"failed: {type(e).__name__}")

        await asyncio.gather(*(opener(local, per_address // parallel) for local in cookies for _ in range(parallel)))
        took, cpu = time.monotonic() - t0, cpu_seconds(s.proc.pid) - cpu0
        reads1 = (await creators[0].get("/api/health")).json().get("lobby_reads")
        opened = sum(codes.values())
        failed = sum(v for k, v in codes.items() if k.startswith("failed"))
        reads = "not counted" if reads0 is None else str(reads1 - reads0)
        return Result(
            "lobby-opens",
            outcome=codes,
            note=f"{size / 1024:.0f} KB of lists; {opened} opens in {took:.1f} s; server CPU {cpu:.2f} s "
            f"({cpu / took:.2f} CPU-s a second, {cpu / opened * 1000:.1f} ms an open); reads of the whole "
            f"lobby: {reads}",
            findings=[f"{failed} opens failed (not refused with a reason)"] if failed else [],
        )

    try:
        for c in creators:  # they stay while the attack runs, so their seeks do
            for _ in range(100):
                r = await c.post("/api/lobby/seeks", json={"rules": {"preset": "nintendo"}, "hands": 3, "rated": False})
                r.raise_for_status()
        size = len((await creators[0].get("/api/lobby")).content)
        for k in range(addresses):
            local = f"127.0.0.{10 + k}"
            async with client_at(s.url, local, timeout=30) as c:
                await c.get("/api/lobby")  # a page's first visit: its cookie
                cookies[local] = "; ".join(f"{n}={v}" for n, v in c.cookies.items())
        return await measured(s, "lobby-opens", attack)
    finally:
        for c in creators:
            await c.aclose()
        s.stop()


async def scenario_sign_in_flood(tmp: Path, seconds: float = 20.0, addresses: int = 48, every: float = 2.0) -> Result:
    s = Server(tmp)
    password = "correct horse battery"
    flood: dict[str, int] = {}
    mine: dict[str, list[tuple[float, int]]] = {"new browser": [], "known browser": []}

    async def attack() -> Result:
        end = time.monotonic() + seconds

        async def flooder(k: int) -> None:
            async with client_at(s.url, f"127.0.1.{k + 1}", timeout=60) as c:
                while time.monotonic() < end:
                    try:
                        r = await c.post("/api/account/login", json={"name": random_token(12), "password": "x" * 12})
                        tally(flood, str(r.status_code))
                        if r.status_code == 429:
                            await asyncio.sleep(0.2)  # it comes back as soon as it may
                    except httpx.HTTPError as e:
                        tally(flood, type(e).__name__)

        async def player() -> None:
            await asyncio.sleep(1.0)
            while time.monotonic() < end:
                for kind, c in (("new browser", client_at(s.url, "127.0.0.5", timeout=60)), ("known browser", known)):
                    t = time.perf_counter()
                    r = await c.post("/api/account/login", json={"name": "Owner", "password": password})
                    mine[kind].append((time.perf_counter() - t, r.status_code))
                    if c is not known:
                        await c.aclose()
                await asyncio.sleep(every)

        await asyncio.gather(player(), *(flooder(k) for k in range(addresses)))
        lines = []
        slow = 0
        for kind, got in mine.items():
            took = [t for t, _code in got]
            codes: dict[str, int] = {}
            for _t, code in got:
                tally(codes, str(code))
            slow += sum(1 for t, code in got if code != 200 or t > 2.0)
            lines.append(f"{kind}: {codes}, {show(took)}" if took else f"{kind}: none")
        return Result(
            "sign-in-flood",
            server_errors=sum(v for k, v in flood.items() if k.startswith("5") and k != "503"),
            outcome={f"flood {k}": v for k, v in flood.items()},
            note="the player's sign-ins: " + "; ".join(lines),
            findings=[f"{slow} of the player's sign-ins failed or took over 2 s"] if slow else [],
        )

    known = client_at(s.url, "127.0.0.6", timeout=60)
    try:
        r = await known.post("/api/account/signup", json={"name": "Owner", "password": password})
        r.raise_for_status()  # the known browser: it signed up, and keeps its device cookie (if given one)
        await known.post("/api/account/logout")
        return await measured(s, "sign-in-flood", attack)
    finally:
        await known.aclose()
        s.stop()


async def scenario_lockout(tmp: Path, addresses: int = 10, each: int = 3) -> Result:
    s = Server(tmp)
    password = "correct horse battery"
    codes: dict[str, int] = {}
    known = client_at(s.url, "127.0.0.6", timeout=30)
    try:
        r = await known.post("/api/account/signup", json={"name": "Owner", "password": password})
        r.raise_for_status()
        await known.post("/api/account/logout")
        for k in range(addresses):
            async with client_at(s.url, f"127.0.2.{k + 1}", timeout=30) as c:
                for _ in range(each):
                    r = await c.post("/api/account/login", json={"name": "Owner", "password": "guessing, guessing"})
                    tally(codes, f"attacker {r.status_code}")
        r = await known.post("/api/account/login", json={"name": "Owner", "password": password})
        tally(codes, f"owner, known browser {r.status_code}")
        known_ok = r.status_code == 200
        async with client_at(s.url, "127.0.0.7", timeout=30) as c:
            r = await c.post("/api/account/login", json={"name": "Owner", "password": password})
            tally(codes, f"owner, new browser {r.status_code} {r.json().get('error', '')}".rstrip())
        return Result(
            "lockout",
            outcome=codes,
            findings=[] if known_ok else ["the owner's known browser was locked out"],
        )
    finally:
        await known.aclose()
        s.stop()


# -- running them -------------------------------------------------------------------------------------


def scenario(name: str) -> Callable[[Path], Awaitable[Result]]:
    return globals()["scenario_" + name.replace("-", "_")]  # type: ignore[no-any-return]


def parse_only(text: str) -> list[str]:
    """The scenarios named in ``--only`` (comma-separated), in the order given; ValueError on an unknown one."""
    chosen = [x.strip() for x in text.split(",") if x.strip()]
    for x in chosen:
        if x not in SCENARIOS:
            raise ValueError(f"no scenario {x!r}; choose from {', '.join(SCENARIOS)}")
    return chosen


async def run_one(name: str, tmp: Path) -> Result:
    try:
        return await scenario(name)(tmp)
    except BaseException as e:  # one scenario's failure (a server that never started) ends only it
        if isinstance(e, KeyboardInterrupt):
            raise
        return Result(name, findings=[f"the scenario failed: {type(e).__name__}: {e}"[:300]])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=",".join(SCENARIOS), help=f"scenarios, comma-separated: {', '.join(SCENARIOS)}")
    args = ap.parse_args()
    try:
        chosen = parse_only(args.only)
    except ValueError as e:
        ap.error(str(e))
    import importlib.util

    spec = importlib.util.find_spec("koikoi")
    print(f"koikoi from {spec.origin if spec else '?'}; {os.cpu_count()} CPUs", flush=True)
    results: list[Result] = []
    with tempfile.TemporaryDirectory() as tmp:
        for x in chosen:
            t = time.monotonic()
            r = asyncio.run(run_one(x, Path(tmp)))
            results.append(r)
            print(f"{r.line()}  [{time.monotonic() - t:.0f} s]", flush=True)
    print()
    print(summary(results))


if __name__ == "__main__":
    main()
