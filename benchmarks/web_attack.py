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

Bounded: loopback only, fixed counts, every wait has a time limit.

    python3 benchmarks/web_attack.py                 # every scenario
    python3 benchmarks/web_attack.py --only replay,hints
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
SCENARIOS = ("replay", "sockets", "hints", "games", "slowloris")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, tmp: Path, *limits: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws = f"ws://127.0.0.1:{self.port}"
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
        self.proc = subprocess.Popen(
            cmd,
            env=dict(os.environ, XDG_DATA_HOME=str(tmp)),
            stdout=subprocess.DEVNULL,
            stderr=open(tmp / f"attack-{self.port}.log", "wb"),
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

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


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


async def scenario_replay(tmp: Path) -> None:
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
    finally:
        s.stop()


async def scenario_sockets(tmp: Path) -> None:
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
    finally:
        s.stop()


async def scenario_hints(tmp: Path) -> None:
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
    finally:
        s.stop()


async def scenario_games(tmp: Path) -> None:
    s = Server(tmp, "games_per_minute=100000", "open_games_per_browser=100000")
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
    finally:
        s.stop()


async def scenario_slowloris(tmp: Path) -> None:
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
    finally:
        s.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=",".join(SCENARIOS), help=f"scenarios, comma-separated: {', '.join(SCENARIOS)}")
    args = ap.parse_args()
    chosen = [x.strip() for x in args.only.split(",") if x.strip()]
    for x in chosen:
        if x not in SCENARIOS:
            ap.error(f"no scenario {x!r}; choose from {', '.join(SCENARIOS)}")
    with tempfile.TemporaryDirectory() as tmp:
        for x in chosen:
            asyncio.run(globals()[f"scenario_{x}"](Path(tmp)))


if __name__ == "__main__":
    main()
