"""Tournaments on two server processes sharing one PostgreSQL database (docs/web.md, "Who runs a
tournament"): one process directs an arena; killed with SIGKILL, the other takes it over within seconds,
and nothing is lost: every match is counted once, nobody is paired twice, the standings are exact.
Scheduled tournaments (``koikoi serve --tournaments FILE``) are made once however many processes read the
schedule, and a schedule with a mistake stops the server at its start.

Real ``koikoi serve`` processes, real sockets, the PostgreSQL named by ``KOIKOI_TEST_POSTGRES_URL``.
"""

from __future__ import annotations

import json
import time

import httpx
import pytest
from conftest import POSTGRES_URL, Server, make_database
from sqlalchemy import create_engine, select
from test_web_accounts import signup
from test_web_lobby import play_out
from test_web_tournaments import ARENA, seated, soon, token_of, until

from koikoi.web.schema import games, tournament_games, tournament_players, tournaments
from koikoi.web.store import normalise_url

pytestmark = pytest.mark.server

needs_pg = pytest.mark.skipif(not POSTGRES_URL, reason="needs PostgreSQL: set KOIKOI_TEST_POSTGRES_URL")


def on(server: Server, other: httpx.Client) -> httpx.Client:
    """A client of ``server`` with the cookies of ``other``: the same browser, another process."""
    c = httpx.Client(base_url=server.url, timeout=30)
    c.cookies.update(other.cookies)
    return c


@needs_pg
def test_a_killed_director_is_taken_over_and_nothing_is_lost(tmp_path):
    pg = make_database("postgresql", tmp_path)
    a, b = Server(pg, tmp_path), Server(pg, tmp_path)
    a.start()
    b.start()
    engine = create_engine(normalise_url(pg))
    names = ["Ann", "Bob", "Cat", "Dan"]
    players = {n: a.client() for n in names}
    try:
        for n, c in players.items():
            assert signup(c, n).status_code in (200, 201)
        r = players["Ann"].post("/api/tournaments", json={**ARENA, "starts": soon(3), "minutes": 30})
        assert r.status_code == 201, r.text
        tid = r.json()["id"]
        for c in players.values():
            assert c.post(f"/api/tournaments/{tid}/join", json={}).status_code == 200
        first = {n: seated(c, tid) for n, c in players.items()}
        # The director: whichever process holds the lease. It is killed as a crash would.
        directing = {s: s.client().get("/api/health").json()["tournaments_directed"] for s in (a, b)}
        (director,) = [s for s, n in directing.items() if n == 1]
        survivor = b if director is a else a
        with engine.connect() as conn:
            old = conn.execute(select(tournaments.c.director).where(tournaments.c.id == tid)).scalar()
        director.stop(hard=True)

        def taken() -> bool:
            with engine.connect() as conn:
                now = conn.execute(select(tournaments.c.director).where(tournaments.c.id == tid)).scalar()
            return now not in (None, old)

        until(taken, timeout=30, every=0.05)  # how soon is measured by benchmarks/tournament_load.py
        assert survivor.client().get("/api/health").json()["tournament_takeovers"] == 1
        # The matches made before the kill are played out on the survivor and counted once each.
        here = {n: on(survivor, c) for n, c in players.items()}
        matches = {g["game_id"]: [] for g in first.values()}
        for g in first.values():
            matches[g["game_id"]].append(token_of(g))
        for tokens in matches.values():
            play_out(survivor, dict(enumerate(tokens)))
        again = {
            n: until(lambda c=c, n=n: (g := seated(c, tid))["game_id"] != first[n]["game_id"] and g, 30)
            for n, c in here.items()
        }
        assert len({g["game_id"] for g in again.values()}) == 2
        with engine.connect() as conn:
            rows = conn.execute(
                select(tournament_games).where(tournament_games.c.tournament_id == tid).order_by(tournament_games.c.id)
            ).all()
            standing = {
                r.account_id: r
                for r in conn.execute(select(tournament_players).where(tournament_players.c.tournament_id == tid))
            }
            unfinished = conn.execute(
                select(tournament_games.c.game_id)
                .join(games, games.c.id == tournament_games.c.game_id)
                .where((tournament_games.c.tournament_id == tid) & (games.c.status == "playing"))
            ).all()
        counted = [r for r in rows if r.counted is not None]
        assert len(counted) == 2 and all(r.game_id in matches for r in counted)  # each of the first two, once
        assert len(unfinished) == 2  # the second round: each player in exactly one match being played
        for r in counted:
            p0, p1 = standing[r.account0], standing[r.account1]
            assert p0.games == p1.games == 1
            assert r.points0 + r.points1 == 2  # a win and a loss (2 + 0) or a draw (1 + 1): no streak yet
        assert sum(p.score for p in standing.values()) == sum(r.points0 + r.points1 for r in counted)
        for c in here.values():
            c.close()
    finally:
        for c in players.values():
            c.close()
        for s in (a, b):
            s.stop(hard=False)
        engine.dispose()


SCHEDULE = """
[[tournament]]
name = "Hourly 3-hand arena"
kind = "arena"
every = "1h"
at = "00"
preset = "nintendo"
hands = 3
clock = "10+60"
minutes = 55
"""


def test_scheduled_tournaments_are_made_once_whatever_the_processes(tmp_path):
    schedule = tmp_path / "tournaments.toml"
    schedule.write_text(SCHEDULE)
    url = make_database("postgresql", tmp_path) if POSTGRES_URL else str(tmp_path / "games.db")
    servers = [Server(url, tmp_path, "--tournaments", str(schedule)) for _ in range(2 if POSTGRES_URL else 1)]
    for s in servers:
        s.start()
    try:
        with servers[0].client() as c:

            def listed() -> list[dict]:
                got = c.get("/api/tournaments").json()["upcoming"]
                return got if len(got) >= 2 else []

            made = until(listed, timeout=30)
            # Within the next two hours an hourly arena comes twice: each occurrence made once.
            assert [t["name"] for t in made] == ["Hourly 3-hand arena"] * 2
            assert made[0]["starts"] < made[1]["starts"] and made[0]["hands"] == 3 and made[0]["minutes"] == 55
        # The other process shows the same two: an occurrence is one row, whichever process made it.
        with servers[-1].client() as c:
            assert len(c.get("/api/tournaments").json()["upcoming"]) == 2
    finally:
        for s in servers:
            s.stop(hard=False)


def test_a_schedule_with_a_mistake_stops_the_server_at_its_start_and_says_why(tmp_path):
    schedule = tmp_path / "tournaments.toml"
    schedule.write_text(SCHEDULE.replace('every = "1h"', 'every = "90m"'))
    s = Server(str(tmp_path / "games.db"), tmp_path, "--tournaments", str(schedule))
    with pytest.raises(RuntimeError, match='"every" is'):
        s.start()


@needs_pg
def test_the_tournament_chat_and_standings_cross_processes(tmp_path):
    from test_web_lobby import next_of
    from test_web_tournaments import tournament_socket

    pg = make_database("postgresql", tmp_path)
    a, b = Server(pg, tmp_path), Server(pg, tmp_path)
    a.start()
    b.start()
    try:
        with a.client() as ann, b.client() as bob:
            assert signup(ann, "Ann").status_code in (200, 201)
            assert signup(bob, "Bob").status_code in (200, 201)
            tid = ann.post("/api/tournaments", json={**ARENA, "starts_in": 30}).json()["id"]
            with tournament_socket(a, ann, tid) as wa, tournament_socket(b, bob, tid) as wb:
                next_of(wa, "chat")
                next_of(wb, "chat")
                wa.send(json.dumps({"type": "chat", "text": "from the first process"}))
                assert next_of(wb, "chat")["messages"][0]["text"] == "from the first process"
                # Bob joins on the second process: Ann's page, on the first, shows him.
                assert bob.post(f"/api/tournaments/{tid}/join", json={}).status_code == 200
                deadline = time.monotonic() + 20
                names: list[str] = []
                while names != ["Bob"] and time.monotonic() < deadline:
                    names = [r["name"] for r in next_of(wa, "tournament")["standings"]["rows"]]
                assert names == ["Bob"]
    finally:
        for s in (a, b):
            s.stop(hard=False)
