"""Load on a tournament: an arena of many scripted players on ``koikoi serve --workers N`` (PostgreSQL).

Makes a fresh database on the PostgreSQL server of ``--database-url`` (dropped at the end), its
``--players`` accounts and their sessions directly in it (signing up hundreds of players through Argon2id
would measure the password hashing), starts ``koikoi serve --workers N`` on loopback with an extra time
control for quick matches, makes an arena that starts a few seconds later and has every player join it
over the HTTP API. Each player then holds its tournament page's socket (``/ws/tournament/<id>``) and, when
told ``paired``, plays its match over the seat's socket (``/ws/<token>``): a "thinking" time of
``--think`` seconds, then the first legal action, stopping whenever it may (one-hand matches, so that
matches end often). It measures:

- **next pairing**: from a player seeing their match end (the seat's socket says the match is over) to
  their tournament socket saying ``paired`` for the next one (p50, p99, max);
- **standings seen**: from a match's end to the first push of the player's own tournament socket whose
  own line counts that match (p50, p99, max);
- **takeover** (``--kill-director-at S``): S seconds into the run, the worker that directs the arena (from
  ``/api/health?all=1``'s ``tournaments_directed``) is killed with SIGKILL; the time until another
  process holds the tournament's lease (``tournaments.director`` changes), read from the database every
  50 ms, and what the players saw meanwhile.

It ends with the check that the standings are exact: every counted match's points are in its two
players' scores, and no player ever held two matches being played.

    python3 benchmarks/tournament_load.py --players 500 --seconds 120 --workers 2 \\
        --database-url postgresql://postgres@127.0.0.1:54330/postgres --kill-director-at 60
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parent))
from web_load import cpu_seconds, free_port, get_health, start_server, wait_for_workers  # noqa: E402

from koikoi.web.accounts import name_key, new_session_token, session_key  # noqa: E402
from koikoi.web.accountstore import AccountStore  # noqa: E402
from koikoi.web.schema import games, tournament_games, tournament_players, tournaments  # noqa: E402
from koikoi.web.store import Store, normalise_url  # noqa: E402

CLOCK = "5+30"  # a quick real-time control, offered by --time-control for this run
STOP = 289


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] * 1000


@dataclass
class Stats:
    next_pairing: list[float] = field(default_factory=list)
    standings: list[float] = field(default_factory=list)
    matches: int = 0
    errors: dict[str, int] = field(default_factory=dict)

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


def postgres_cpu() -> float:
    """CPU seconds of every postgres process on this machine (the database of the run, if it is local)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            stat = (p / "stat").read_text()
        except OSError:
            continue
        if "(postgres)" in stat:
            fields = stat.rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def fresh_database(url: str) -> tuple[str, str]:
    """A new, empty database on the server of ``url``: (its URL, its name)."""
    admin = create_engine(normalise_url(url), isolation_level="AUTOCOMMIT")
    name = "koikoi_tload_" + secrets.token_hex(5)
    with admin.connect() as conn:
        conn.execute(text(f"CREATE DATABASE {name}"))
    admin.dispose()
    return make_url(normalise_url(url)).set(database=name).render_as_string(hide_password=False), name


def drop_database(url: str, name: str) -> None:
    admin = create_engine(normalise_url(url), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
    admin.dispose()


def make_players(db_url: str, n: int) -> list[tuple[str, str]]:
    """``n`` accounts, each signed in: (name, session token). One Argon2id hash for all (never checked)."""
    from argon2 import PasswordHasher

    store = Store(db_url)  # brings the schema to the head
    accounts = AccountStore(store)
    hashed = PasswordHasher().hash("not used by the benchmark")
    out = []
    for i in range(n):
        name = f"p{i:04d}"
        token = new_session_token()
        key = session_key(token)
        assert key is not None
        accounts.create(name, name_key(name), hashed, None, key)
        out.append((name, token))
    store.close()
    return out


def closed_how(e: BaseException) -> str:
    """How a socket closed, for the errors' tally: the close frames each side sent (None: no frame, a reset)."""
    rcvd, sent = getattr(e, "rcvd", None), getattr(e, "sent", None)
    if rcvd is None and sent is None:
        return ""
    return f"(received {rcvd.code if rcvd else None}, sent {sent.code if sent else None})"


class Player:
    def __init__(self, name: str, session: str, port: int, tid: str, stats: Stats, rng: random.Random) -> None:
        self.name, self.session, self.port, self.tid = name, session, port, tid
        self.stats, self.rng = stats, rng
        self.ended_at: float | None = None  # when their last match ended (monotonic)
        self.games_seen = 0  # their own line's match count in the last push
        self.expect_games = 0
        self.standings_from: float | None = None
        self.playing = False
        self.played: set[str] = set()  # the matches (seat URLs) it has played or is playing
        self.next_url: str | None = None  # a match it was told of while still finishing the last

    @property
    def cookie(self) -> dict[str, str]:
        return {"Cookie": f"koikoi_session={self.session}"}

    async def run(self, stop_at: float, think: tuple[float, float]) -> None:
        from websockets.asyncio.client import connect

        url = f"ws://127.0.0.1:{self.port}/ws/tournament/{self.tid}"
        while time.monotonic() < stop_at:
            try:
                async with connect(url, additional_headers=self.cookie, open_timeout=20, max_size=2**22) as ws:
                    while time.monotonic() < stop_at:
                        try:
                            async with asyncio.timeout(max(0.1, stop_at - time.monotonic())):
                                raw = await ws.recv()
                        except TimeoutError:
                            return
                        now = time.monotonic()
                        if isinstance(raw, str) and raw.startswith('{"type": "tournament"') and '"me": null' in raw:
                            continue  # the page of the standings, alike for all: a browser draws it, a client need not
                        msg = json.loads(raw)
                        if msg.get("type") in ("tournament", "me"):
                            me = msg.get("me") or {}
                            if self.standings_from is not None and me.get("games", 0) >= self.expect_games:
                                self.stats.standings.append(now - self.standings_from)
                                self.standings_from = None
                            if me.get("game"):  # its match, as its page shows it (told while the socket was away)
                                self.start(me["game"]["url"], now, stop_at, think)
                        elif msg.get("type") == "paired":
                            self.start(msg["url"], now, stop_at, think)
            except Exception as e:  # the socket's process died (the director killed): back, as a page comes back
                self.stats.error(f"tournament socket: {type(e).__name__} {closed_how(e)}")
                await asyncio.sleep(0.5 + self.rng.random())

    def start(self, url: str, now: float, stop_at: float, think: tuple[float, float]) -> None:
        """A match to play: now, or as soon as the one being finished is (the pairing can come first)."""
        if url in self.played:
            return
        self.played.add(url)
        if self.ended_at is not None:
            self.stats.next_pairing.append(now - self.ended_at)
            self.ended_at = None
        if self.playing:
            self.next_url = url
        else:
            asyncio.ensure_future(self.play(url, stop_at, think))

    async def play(self, url: str, stop_at: float, think: tuple[float, float]) -> None:
        from websockets.asyncio.client import connect

        self.playing = True
        token = url.rsplit("/", 1)[1]
        try:
            for _attempt in range(20):
                try:
                    async with connect(f"ws://127.0.0.1:{self.port}/ws/{token}", open_timeout=20) as ws:
                        while time.monotonic() < stop_at:
                            msg = json.loads(await ws.recv())
                            if msg.get("type") != "state":
                                continue
                            st = msg["state"]
                            if st.get("match_over") or st.get("status") == "finished":
                                now = time.monotonic()
                                if self.next_url is not None:  # the next pairing came before this end did
                                    self.stats.next_pairing.append(0.0)
                                else:
                                    self.ended_at = now
                                self.stats.matches += 1
                                self.expect_games += 1
                                self.standings_from = now
                                return
                            if st.get("to_move") and st.get("legal"):
                                await asyncio.sleep(self.rng.uniform(*think))
                                legal = st["legal"]
                                action = STOP if STOP in legal else legal[0]
                                await ws.send(json.dumps({"type": "action", "action": action, "seq": st["seq"]}))
                        return
                except Exception as e:  # its process was killed: the match goes on on another one
                    self.stats.error(f"seat socket: {type(e).__name__} {closed_how(e)}")
                    await asyncio.sleep(0.5 + self.rng.random())
        finally:
            self.playing = False
            if self.next_url is not None:
                url, self.next_url = self.next_url, None
                asyncio.ensure_future(self.play(url, stop_at, think))


async def watch_director(engine: Any, tid: str, old: str, killed: float, out: dict[str, float]) -> None:
    while time.monotonic() - killed < 60:
        with engine.connect() as conn:
            now = conn.execute(select(tournaments.c.director).where(tournaments.c.id == tid)).scalar()
        if now not in (None, old):
            out["takeover"] = time.monotonic() - killed
            return
        await asyncio.sleep(0.05)


async def run(args: argparse.Namespace, port: int, server: Any, db_url: str, sessions: list[tuple[str, str]]) -> None:
    stats = Stats()
    rng = random.Random(args.seed)
    starts = (datetime.now(UTC) + timedelta(seconds=15)).isoformat()
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as c:
        r = await c.post(
            "/api/tournaments",
            json={
                "kind": "arena",
                "name": "Load arena",
                "rules": {"preset": "nintendo"},
                "hands": 1,
                "clock": CLOCK,
                "starts": starts,
                "minutes": 60,
                "rated": True,
                "berserk": False,
            },
            headers={"Cookie": f"koikoi_session={sessions[0][1]}"},
        )
        if r.status_code != 201:
            raise SystemExit(f"could not make the arena: {r.text}")
        tid = r.json()["id"]
        sem = asyncio.Semaphore(20)

        async def join(token: str) -> None:
            async with sem:
                j = await c.post(f"/api/tournaments/{tid}/join", json={}, headers={"Cookie": f"koikoi_session={token}"})
                if j.status_code != 200:
                    stats.error(f"join {j.status_code}")

        t0 = time.monotonic()
        await asyncio.gather(*(join(tok) for _n, tok in sessions))
        print(f"{len(sessions)} players joined in {time.monotonic() - t0:.1f} s", flush=True)
    players = [Player(n, tok, port, tid, stats, random.Random(rng.random())) for n, tok in sessions]
    cpu0 = (cpu_seconds(server.pid), time.process_time(), postgres_cpu(), time.monotonic())
    stop_at = time.monotonic() + 15 + args.seconds
    think = (args.think_min, args.think_max)
    tasks = [asyncio.ensure_future(p.run(stop_at, think)) for p in players]
    engine = create_engine(normalise_url(db_url))
    takeover: dict[str, float] = {}
    if args.kill_director_at is not None:
        await asyncio.sleep(15 + args.kill_director_at)
        health = get_health(port, all_workers=True) or {}
        entries = health.get("all") or [health]
        directing = [e for e in entries if e.get("tournaments_directed")]
        with engine.connect() as conn:
            old = conn.execute(select(tournaments.c.director).where(tournaments.c.id == tid)).scalar()
        if directing and old:
            pid = directing[0]["pid"]
            before = (len(stats.next_pairing), len(stats.standings))
            os.kill(pid, signal.SIGKILL)
            killed = time.monotonic()
            print(f"killed the director (worker pid {pid}) at {args.kill_director_at} s", flush=True)
            await watch_director(engine, tid, old, killed, takeover)
            takeover["before"] = before  # type: ignore[assignment]
        else:
            print("note: no worker says it directs the arena; nothing killed", flush=True)
    await asyncio.gather(*tasks, return_exceptions=True)
    wall = time.monotonic() - cpu0[3]
    cpu = (cpu_seconds(server.pid) - cpu0[0], time.process_time() - cpu0[1], postgres_cpu() - cpu0[2])
    with engine.connect() as conn:
        rows = conn.execute(select(tournament_games).where(tournament_games.c.tournament_id == tid)).all()
        standing = {
            r.account_id: r
            for r in conn.execute(select(tournament_players).where(tournament_players.c.tournament_id == tid))
        }
        live = conn.execute(
            select(tournament_games.c.account0, tournament_games.c.account1)
            .join(games, games.c.id == tournament_games.c.game_id)
            .where((tournament_games.c.tournament_id == tid) & (games.c.status == "playing"))
        ).all()
    engine.dispose()
    counted = [r for r in rows if r.counted is not None]
    total = sum(s.score for s in standing.values())
    points = sum((r.points0 or 0) + (r.points1 or 0) for r in counted)
    in_two = [a for a in {x for r in live for x in r} if sum(a in r for r in live) > 1]
    print(f"match ends seen by the players: {stats.matches} (two a match); made: {len(rows)}, counted: {len(counted)}")
    print(
        f"next pairing after a match's end: p50 {pct(stats.next_pairing, 0.5):.0f} ms, "
        f"p99 {pct(stats.next_pairing, 0.99):.0f} ms, max {pct(stats.next_pairing, 1):.0f} ms "
        f"({len(stats.next_pairing)} waits)"
    )
    print(
        f"standings seen by the player after a match's end: p50 {pct(stats.standings, 0.5):.0f} ms, "
        f"p99 {pct(stats.standings, 0.99):.0f} ms, max {pct(stats.standings, 1):.0f} ms ({len(stats.standings)})"
    )
    if "takeover" in takeover:
        print(f"director killed: another process held the lease {takeover['takeover']:.2f} s later")
    elif args.kill_director_at is not None:
        print("director killed: NO takeover within 60 s")
    print(
        f"standings exact: scores {total} = counted points {points}: {total == points}; "
        f"players in two live matches at once: {len(in_two)}"
    )
    print(
        f"CPU over the {wall:.0f} s played: the server's processes {cpu[0]:.0f} s "
        f"({100 * cpu[0] / wall:.0f} % of a core), the clients {cpu[1]:.0f} s ({100 * cpu[1] / wall:.0f} %), "
        f"PostgreSQL {cpu[2]:.0f} s ({100 * cpu[2] / wall:.0f} %); the machine has {os.cpu_count()} cores"
    )
    if stats.errors:
        print("client errors: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.errors.items())))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=int, default=500)
    ap.add_argument("--seconds", type=float, default=120, help="how long the arena is played (after its start)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--database-url", required=True, help="a PostgreSQL server (a fresh database is made on it)")
    ap.add_argument("--think-min", type=float, default=1.0, help="seconds a player thinks, at least (as web_load.py)")
    ap.add_argument("--think-max", type=float, default=3.0, help="... and at most")
    ap.add_argument("--kill-director-at", type=float, default=None, metavar="S")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--logs", metavar="DIR", help="keep the server's log there")
    args = ap.parse_args()
    if not 2 <= args.players <= 2000:
        raise SystemExit("--players is 2 to 2000")
    db_url, name = fresh_database(args.database_url)
    try:
        t0 = time.monotonic()
        sessions = make_players(db_url, args.players)
        print(f"{args.players} accounts made in {time.monotonic() - t0:.1f} s", flush=True)
        port = free_port()
        with tempfile.TemporaryDirectory() as tmp:
            extra = [
                "--time-control",
                CLOCK,
                "--limit",
                "seeks_per_minute=100000",
                "--limit",
                "lobby_sockets=100000",
                "--limit",
                "lobby_opens_per_minute=100000",
                "--limit",
                "logins_per_minute=100000",  # joins, from one address here
            ]
            if args.workers > 1:
                extra += ["--workers", str(args.workers)]
            server = start_server(port, db_url, Path(tmp), extra)
            try:
                if args.workers > 1:
                    wait_for_workers(port, args.workers)
                asyncio.run(run(args, port, server, db_url, sessions))
            finally:
                server.send_signal(signal.SIGTERM)
                try:
                    server.wait(timeout=30)
                except Exception:
                    server.kill()
                logs = sorted(Path(tmp).glob("server-*.log"))
                tracebacks = sum(p.read_text(errors="replace").count("Traceback") for p in logs)
                print(f"tracebacks in the server's log: {tracebacks}")
                if args.logs:
                    for p in logs:
                        (Path(args.logs) / p.name).write_bytes(p.read_bytes())
    finally:
        drop_database(args.database_url, name)


if __name__ == "__main__":
    main()
