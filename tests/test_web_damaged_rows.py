"""Damage in any stored column marks only that game broken, and the server always starts (issue 29, item 3).

A database with five games is made once through the real app: a game against the computer with the
player to move (``ai``), a second one (``fine``, never damaged), a friend game waiting for the friend
(``waiting``), one the friend joined (``friend``) and a finished one (``finished``). Each case takes a
copy of one of them (its rows copied under new ids and tokens) and damages one column of it by hand:
text in a number column (SQLite allows it), a date that is not a date, an unknown status or computer
level, numbers out of range, a missing move. Then the app starts on the database holding every damaged
copy at once, and for each: the damaged game answers 409 ``broken`` with the reason, on its seat, its
page and its socket, and is listed broken with the reason in the lobby. The five games themselves are
listed as before and the ``fine`` one takes a move, nothing answers 500, nothing logs a traceback,
nothing is tried again and again, and a second start lists the same games broken. The damage SQLite
alone lets in is tried there only; the rest on PostgreSQL too, when ``KOIKOI_TEST_POSTGRES_URL``
names a server.

The damage that once stopped ``koikoi serve`` from starting (a date that is not a date: exit 3) or
kept it retrying a move once a second (an unknown computer level) is also put before a real
``koikoi serve`` on a free port. A stored review that cannot be read is marked failed and worked out
again when asked for (a review is made from the game, never the other way round), and a computer move
that cannot be made is tried a few times, then leaves its game broken.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from conftest import DATABASES, Server, limit_args, make_database
from fastapi.testclient import TestClient

from koikoi.actions import STOP
from koikoi.web import schema as tables
from koikoi.web.app import create_app
from koikoi.web.limits import Limits
from koikoi.web.store import new_token, normalise_url

# The module's tests share what its module-scoped fixtures make: one worker runs them all, and makes it once.
pytestmark = pytest.mark.xdist_group("test_web_damaged_rows")

# Every damaged game is sent an action over HTTP within a second or two, from one address: the per-address
# limit on HTTP actions (tests/test_web_hardening.py tests it) is raised out of the way.
ACTIONS = {"http_actions_per_second": 1000.0, "http_action_burst": 100_000}

KEYS = ("ai", "fine", "waiting", "friend", "finished")
STATUS = {"ai": "playing", "fine": "playing", "waiting": "waiting", "friend": "playing", "finished": "finished"}
RULES = {"preset": "cardavia", "options": {"hand_bonus": 0}}  # one hand, never won at the deal


def choose(st: dict) -> int:
    legal = st["legal"]
    return STOP if STOP in legal else legal[0]


# The thread each app entered by an AppClient runs its event loop in, and that client: a log kept for one
# app (the module's damaged databases keep theirs across tests) leaves out what another app logs meanwhile,
# whatever order the tests run in.
APP_THREADS: dict[int, TestClient] = {}


class AppClient(TestClient):
    def __enter__(self) -> AppClient:
        super().__enter__()
        APP_THREADS[self.portal.call(threading.get_ident)] = self  # type: ignore[union-attr]
        return self


def app_client(url: str, **kwargs: Any) -> TestClient:
    """The app on ``url``, as ``koikoi serve`` makes it; entering the client runs its start (lifespan)."""
    limits = kwargs.pop("limits", Limits(ai_processes=1, **ACTIONS))
    return AppClient(create_app(url, ai_delay=0, limits=limits, **kwargs), raise_server_exceptions=False)


def my_turn(c: TestClient | httpx.Client, token: str) -> dict:
    for _ in range(400):
        r = c.get(f"/api/seat/{token}")
        assert r.status_code == 200, r.text
        st = r.json()
        if st["to_move"] or st["match_over"]:
            return st
        time.sleep(0.02)
    pytest.fail("the turn never came")


def play_one(c: TestClient | httpx.Client, token: str) -> None:
    """A legal move in a game that must still be played."""
    st = my_turn(c, token)
    r = c.post(f"/api/seat/{token}/action", json={"action": choose(st), "seq": st["seq"]})
    assert r.status_code == 200, r.text


def play_to_the_computer(c: TestClient | httpx.Client, token: str) -> None:
    """Moves until the computer is to move: a card played may leave the player to move still (a drawn card
    that matches two on the table waits for the player's choice; a yaku, for koi-koi or stop)."""
    for _ in range(10):
        play_one(c, token)
        r = c.get(f"/api/seat/{token}")
        assert r.status_code == 200, r.text
        if not r.json()["to_move"]:
            return
    pytest.fail("the computer was never to move")


# -- the database every case starts from ----------------------------------------------------------------


@dataclass
class Base:
    kind: str
    url: str
    games: dict[str, dict[str, str]]  # key -> {"game_id", "token"}: the host's seat
    cookies: dict[str, str]  # the host's browser


def build(kind: str, tmp: Path) -> Base:
    url = make_database(kind, tmp)
    games: dict[str, dict[str, str]] = {}
    with app_client(url) as host:

        def create(opponent: str) -> dict:
            r = host.post("/api/games", json={"name": "Ann", "opponent": opponent, "rules": RULES})
            assert r.status_code == 201, r.text
            return r.json()

        for key in ("ai", "fine"):
            games[key] = create("random")
            play_one(host, games[key]["token"])
            my_turn(host, games[key]["token"])  # the computer has answered: the player is to move
        games["waiting"] = create("friend")
        games["friend"] = create("friend")
        cookies = dict(host.cookies)
        host.cookies.clear()  # the friend joins from a browser of their own
        r = host.post(f"/api/invite/{games['friend']['invite_token']}/join", json={"name": "Bo"})
        assert r.status_code == 200, r.text
        host.cookies.clear()
        host.cookies.update(cookies)
        games["finished"] = create("random")
        for _ in range(200):
            st = my_turn(host, games["finished"]["token"])
            if st["match_over"]:
                break
            host.post(f"/api/seat/{games['finished']['token']}/action", json={"action": choose(st), "seq": st["seq"]})
        else:
            pytest.fail("the game never ended")
    if kind == "sqlite":
        with sqlite3.connect(url) as db:  # the copies are of the file alone: no write left in the WAL
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return Base(kind, url, {k: {"game_id": g["game_id"], "token": g["token"]} for k, g in games.items()}, cookies)


@pytest.fixture(scope="module")
def bases(tmp_path_factory) -> Iterator[dict[str, Base]]:
    """The base database of each kind, made when first asked for."""

    class Lazy(dict):
        def __missing__(self, kind: str) -> Base:
            self[kind] = build(kind, tmp_path_factory.mktemp(f"base-{kind}"))
            return self[kind]

    yield Lazy()


def copy_of(base: Base, tmp: Path) -> str:
    """A database of its own for one case: a copy of the base's file, or a PostgreSQL database made from it."""
    if base.kind == "sqlite":
        path = tmp / "games.db"
        shutil.copy(base.url, path)
        return str(path)
    base_url = sa.engine.make_url(normalise_url(base.url))
    name = "koikoi_test_" + uuid.uuid4().hex[:12]
    admin = sa.create_engine(base_url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(
            sa.text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :db"),
            {"db": base_url.database},
        )
        conn.execute(sa.text(f'CREATE DATABASE {name} TEMPLATE "{base_url.database}"'))
    admin.dispose()
    return base_url.set(database=name).render_as_string(hide_password=False)


# -- the damage ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Damage:
    name: str
    target: str  # the game damaged (its host's seat is asked for)
    sql: tuple[str, ...]  # run with :gid, the target's id, and :future, a time far ahead
    reason: str  # a piece of the reason the game is marked broken with
    sqlite_only: bool = False  # damage PostgreSQL refuses (a type it enforces, a foreign key)

    def __str__(self) -> str:
        return self.name


def _games(column_value: str, target: str = "ai", reason: str = "", **kw: Any) -> Damage:
    return Damage(f"games.{column_value}", target, (f"UPDATE games SET {column_value} WHERE id = :gid",), reason, **kw)


NOTE = "INSERT INTO ai_turns (game_id, seq, owner, until) SELECT id, {seq}, {owner}, {until} FROM games WHERE id = :gid"

DAMAGES = [
    # The games row, column by column.
    _games("created='garbage'", reason="creation time 'garbage'", sqlite_only=True),
    _games("created=5", reason="creation time 5", sqlite_only=True),
    _games("updated='2024-13-45 99:00:00'", reason="time of last change", sqlite_only=True),
    _games("rules='not json'", reason="rules are not a JSON object"),
    _games("rules='[1, 2]'", reason="rules are not a JSON object"),
    _games("rules=x'00ff'", reason="rules are not a JSON object", sqlite_only=True),
    _games("seed='abc'", reason="seed is not a whole number", sqlite_only=True),
    _games("seed=-1", reason="seed is not a whole number"),
    _games("seed=1.5", reason="seed is not a whole number", sqlite_only=True),
    _games("seed=1e30", reason="seed is not a whole number", sqlite_only=True),
    _games("opponent='grandmaster'", reason="computer level 'grandmaster'"),
    _games("opponent='friend'", reason="a seat is stored as the computer's"),
    _games("opponent='random'", target="friend", reason="seats are stored as human and human"),
    _games("opponent=x'00'", reason="opponent", sqlite_only=True),
    _games("ai_seed='abc'", reason="computer's seed", sqlite_only=True),
    _games("ai_seed=-5", reason="computer's seed"),
    _games("status='zzz'", reason="status 'zzz'"),
    _games("status='finished'", reason="stored as finished"),
    _games("status='waiting'", target="friend", reason="waits for the friend"),
    _games("status='playing'", target="finished", reason="stored as playing"),
    _games("moves='abc'", reason="number of moves 'abc'", sqlite_only=True),
    _games("moves=-1", reason="number of moves -1"),
    _games("moves=1000000", reason="the game says 1000000"),
    _games("scores='x,y'", reason="scores 'x,y'"),
    _games("scores='-5,3'", reason="scores [-5, 3]"),
    _games("birth_months='13,0'", reason="birth months '13,0'"),
    _games("birth_months='a'", reason="birth months 'a'"),
    Damage("games.id", "ai", ("UPDATE games SET id = 'renamed-by-hand' WHERE id = :gid",), "missing", sqlite_only=True),
    # Its seats.
    Damage("seats.seat=5", "ai", ("UPDATE seats SET seat = 5 WHERE game_id = :gid AND seat = 1",), "seat number 5"),
    Damage(
        "seats.seat='abc'",
        "ai",
        ("UPDATE seats SET seat = 'abc' WHERE game_id = :gid AND seat = 1",),
        "seat number 'abc'",
        sqlite_only=True,
    ),
    Damage("seats.seat=dup", "friend", ("UPDATE seats SET seat = 0 WHERE game_id = :gid",), "numbered [0, 0]"),
    Damage("seats.kind", "ai", ("UPDATE seats SET kind = 'robot' WHERE game_id = :gid AND seat = 1",), "'robot'"),
    Damage(
        "seats.name",
        "ai",
        ("UPDATE seats SET name = x'00ff' WHERE game_id = :gid AND seat = 1",),
        "name of seat 1",
        sqlite_only=True,
    ),
    Damage(
        "seats.token", "friend", ("UPDATE seats SET token = 'not a link!' WHERE game_id = :gid AND seat = 1",), "link"
    ),
    Damage(
        "seats.owner",
        "friend",
        ("UPDATE seats SET owner = x'00' WHERE game_id = :gid AND seat = 1",),
        "owner of seat 1",
        sqlite_only=True,
    ),
    # Its moves.
    Damage("actions.action=9999", "ai", ("UPDATE actions SET action = 9999 WHERE game_id = :gid AND seq = 0",), "9999"),
    # An action number the engine knows but that is not legal there: the reason, which both players see,
    # does not quote the engine's refusal (it lists the legal actions: the mover's cards).
    Damage(
        "actions.action=illegal",
        "ai",
        (f"UPDATE actions SET action = {STOP} WHERE game_id = :gid AND seq = 0",),
        f"stored move 0 ({STOP}) is not a legal move there",
    ),
    Damage(
        "actions.action='abc'",
        "ai",
        ("UPDATE actions SET action = 'abc' WHERE game_id = :gid AND seq = 0",),
        "'abc', not an action",
        sqlite_only=True,
    ),
    Damage(
        "actions.seat",
        "ai",
        ("UPDATE actions SET seat = 1 - seat WHERE game_id = :gid AND seq = 0",),
        "stored move 0 is by seat",
    ),
    Damage("actions.seat=7", "ai", ("UPDATE actions SET seat = 7 WHERE game_id = :gid AND seq = 0",), "by seat 7"),
    Damage("actions.seq", "ai", ("UPDATE actions SET seq = 50 WHERE game_id = :gid AND seq = 0",), "move 0 is missing"),
    Damage(
        "actions.last",
        "ai",
        ("DELETE FROM actions WHERE game_id = :gid AND seq = (SELECT MAX(seq) FROM actions WHERE game_id = :gid)",),
        "is missing (the game says",
    ),
    # Its invitation.
    Damage(
        "invitations.created",
        "waiting",
        ("UPDATE invitations SET created = 'garbage' WHERE game_id = :gid",),
        "invitation time 'garbage'",
        sqlite_only=True,
    ),
    Damage(
        "invitations.spent='garbage'",
        "friend",
        ("UPDATE invitations SET spent = 'garbage' WHERE game_id = :gid",),
        "invitation was used 'garbage'",
        sqlite_only=True,
    ),
    Damage(
        "invitations.spent",
        "waiting",
        ("UPDATE invitations SET spent = created WHERE game_id = :gid",),
        "invitation is stored as used",
    ),
    Damage("invitations.seat", "friend", ("UPDATE invitations SET seat = 5 WHERE game_id = :gid",), "invited seat 5"),
    # Its note of a computer move to make (ai_turns).
    Damage(
        "ai_turns.until",
        "ai",
        (NOTE.format(seq="moves", owner="'someone'", until="'garbage'"),),
        "claim 'garbage'",
        sqlite_only=True,
    ),
    Damage(
        "ai_turns.seq='abc'",
        "ai",
        (NOTE.format(seq="'abc'", owner="NULL", until="created"),),
        "move number 'abc'",
        sqlite_only=True,
    ),
    Damage("ai_turns.seq", "ai", (NOTE.format(seq="moves - 1", owner="NULL", until="created"),), "not one to make"),
    Damage("ai_turns.friend", "friend", (NOTE.format(seq="0", owner="NULL", until="created"),), "not one to make"),
    Damage(
        "ai_turns.owner",
        "ai",
        (NOTE.format(seq="moves", owner="x'00'", until="created"),),
        "move's process",
        sqlite_only=True,
    ),
    # The reason of a game marked broken already.
    Damage(
        "problems.reason",
        "ai",
        (
            "UPDATE games SET status = 'broken' WHERE id = :gid",
            "INSERT INTO problems (game_id, reason, at) SELECT id, x'00ff', created FROM games WHERE id = :gid",
        ),
        "its stored reason cannot be read",
        sqlite_only=True,
    ),
]

CASES = [
    pytest.param(kind, d, id=f"{kind}-{d.name}")
    for kind in DATABASES
    for d in DAMAGES
    if kind == "sqlite" or not d.sqlite_only
]


def damage(url: str, sql: tuple[str, ...], gid: str) -> None:
    """Run ``sql`` on the database by hand, as an operator or an attacker would: no foreign keys on SQLite."""
    engine = sa.create_engine(normalise_url(url))
    future = sa.bindparam("future", datetime(2999, 1, 1, tzinfo=UTC), type_=sa.DateTime(timezone=True))
    with engine.begin() as conn:
        for stmt in sql:
            q = sa.text(stmt)
            if ":future" in stmt:
                q = q.bindparams(future)
            conn.execute(q, {"gid": gid})
    engine.dispose()


@pytest.fixture
def log_records() -> Iterator[list[logging.LogRecord]]:
    """What the app logs meanwhile."""
    with kept_log() as records:
        yield records


class kept_log:  # noqa: N801 - used as a context manager
    """What the app logs meanwhile; with ``owner``, not what another AppClient's app logs in its loop."""

    def __init__(self, owner: Callable[[], TestClient | None] | None = None) -> None:
        self.owner = owner

    def __enter__(self) -> list[logging.LogRecord]:
        self.records: list[logging.LogRecord] = []
        records, owner = self.records, self.owner

        class Keep(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                app = APP_THREADS.get(record.thread) if owner is not None else None
                if app is None or app is owner():  # type: ignore[misc]
                    records.append(record)

        self.handler = Keep(logging.INFO)
        self.logger = logging.getLogger("koikoi.web")
        self.level = self.logger.level
        self.logger.addHandler(self.handler)
        self.logger.setLevel(logging.INFO)
        return records

    def __exit__(self, *_exc: object) -> None:
        self.logger.removeHandler(self.handler)
        self.logger.setLevel(self.level)


def no_tracebacks(records: list[logging.LogRecord]) -> None:
    """A traceback is an error nobody handled; a move tried again and again, a loop."""
    unhandled = [r.getMessage() for r in records if r.exc_info]
    assert not unhandled, unhandled
    retried = [r.getMessage() for r in records if "could not move" in r.getMessage()]
    assert not retried, retried


def clone(url: str, gid: str) -> dict[str, str]:
    """A copy of game ``gid`` under a new id and new tokens, every row of it: {"game_id", "token"} of its
    first seat (the host's). The copy is the game as the app stored it, for one case to damage."""
    new = new_token(9)
    host = ""
    engine = sa.create_engine(normalise_url(url))
    with engine.begin() as conn:
        row = conn.execute(sa.select(tables.games).where(tables.games.c.id == gid)).mappings().one()
        conn.execute(sa.insert(tables.games).values({**row, "id": new}))
        for seat in conn.execute(sa.select(tables.seats).where(tables.seats.c.game_id == gid)).mappings().all():
            token = new_token()
            host = token if seat["seat"] == 0 else host
            conn.execute(sa.insert(tables.seats).values({**seat, "game_id": new, "token": token}))
        for t in (tables.actions, tables.invitations):
            for r in conn.execute(sa.select(t).where(t.c.game_id == gid)).mappings().all():
                values = {**r, "game_id": new}
                if t is tables.invitations:
                    values["token"] = new_token()
                conn.execute(sa.insert(t).values(values))
    engine.dispose()
    return {"game_id": new, "token": host}


def all_games(c: TestClient | httpx.Client) -> dict[str, dict]:
    """Every game of this browser, over the lobby's pages (bounded)."""
    out: dict[str, dict] = {}
    before = ""
    for _ in range(100):
        r = c.get("/api/games", params={"before": before} if before else None)
        assert r.status_code == 200, r.text
        for g in r.json()["games"]:
            assert g["game_id"] not in out, g  # listed once
            out[g["game_id"]] = g
        before = r.json()["next"]
        if not before:
            return out
    pytest.fail("the lobby's pages never end")


def check_broken(c: TestClient | httpx.Client, game: dict[str, str], reason: str) -> None:
    """The damaged game is broken with its reason: on its seat (twice: when found, and after), its
    moves, its page and in the lobby."""
    for _ in range(2):
        r = c.get(f"/api/seat/{game['token']}")
        assert r.status_code == 409, (r.status_code, r.text[:300])
        assert r.json()["error"] == "broken" and reason in r.json()["message"], r.json()
    r = c.post(f"/api/seat/{game['token']}/action", json={"action": 0, "seq": 0})
    assert (r.status_code, r.json()["error"]) == (409, "broken"), r.text
    r = c.get(f"/play/{game['token']}")
    assert r.status_code == 409, r.status_code
    listed = all_games(c)[game["game_id"]]
    assert listed["status"] == "broken" and reason in listed["problem"], listed
    assert "legal" not in listed["problem"].replace("not a legal move there", ""), listed  # no card is named


def check_unharmed(c: TestClient | httpx.Client, base: Base) -> None:
    """The five games of the base are listed as they were, each seat answers, and the fine one plays."""
    listed = all_games(c)
    for key in KEYS:
        g = base.games[key]
        assert listed[g["game_id"]]["status"] == STATUS[key], listed[g["game_id"]]
        assert not listed[g["game_id"]]["problem"], listed[g["game_id"]]
        assert c.get(f"/api/seat/{g['token']}").status_code == 200
    play_one(c, base.games["fine"]["token"])


class Damaged:
    """One database holding a damaged copy of a game for each case, and the app started on it."""

    def __init__(self, base: Base, tmp: Path) -> None:
        self.base = base
        self.url = copy_of(base, tmp)
        self.games: dict[str, dict[str, str]] = {}
        self.reviewed: dict[str, dict[str, str]] = {}
        for cases, games in ((DAMAGES, self.games), (REVIEW_DAMAGES, self.reviewed)):
            for d in cases:
                if base.kind == "sqlite" or not d.sqlite_only:
                    games[d.name] = clone(self.url, base.games[d.target]["game_id"])
                    damage(self.url, d.sql, games[d.name]["game_id"])
        self.client: TestClient | None = None
        self.log = kept_log(owner=lambda: self.client)
        self.records = self.log.__enter__()
        self.start()

    def start(self) -> None:
        # The app starts (the games against the computer are resumed here), whatever the damage.
        limits = Limits(
            ai_processes=1, **ACTIONS, page_size=500, reviews_running=len(REVIEW_DAMAGES), review_playouts=5
        )
        self.client = app_client(self.url, limits=limits)
        self.client.__enter__()
        self.client.cookies.update(self.base.cookies)

    def stop(self) -> None:
        if self.client is not None:
            self.client.__exit__(None, None, None)
            self.client = None

    def close(self) -> None:
        self.stop()
        self.log.__exit__()


@pytest.fixture(scope="module")
def damaged(bases, tmp_path_factory) -> Iterator[dict[str, Damaged]]:
    made: dict[str, Damaged] = {}

    class Lazy(dict):
        def __missing__(self, kind: str) -> Damaged:
            made[kind] = self[kind] = Damaged(bases[kind], tmp_path_factory.mktemp(f"damaged-{kind}"))
            return made[kind]

    yield Lazy()
    for d in made.values():
        d.close()


@pytest.mark.parametrize(("kind", "d"), CASES)
def test_damage_marks_only_that_game_broken(damaged, kind, d):
    db = damaged[kind]
    assert db.client is not None
    game = db.games[d.name]
    check_broken(db.client, game, d.reason)
    with db.client.websocket_connect(f"/ws/{game['token']}") as ws:
        msg = ws.receive_json()
        assert msg["type"] == "error" and msg["code"] == "broken" and d.reason in msg["message"], msg


@pytest.mark.parametrize("kind", DATABASES)
def test_the_other_games_play_on_and_a_second_start_lists_the_same(damaged, kind):
    db = damaged[kind]
    assert db.client is not None
    check_unharmed(db.client, db.base)
    for game in db.games.values():  # each damaged game found (if the cases above did not run)
        assert db.client.get(f"/api/seat/{game['token']}").status_code == 409
    no_tracebacks(db.records)
    db.stop()
    db.start()
    assert db.client is not None
    listed = all_games(db.client)
    assert {gid for gid, g in listed.items() if g["status"] == "broken"} == {g["game_id"] for g in db.games.values()}
    assert all(g["problem"] for g in listed.values() if g["status"] == "broken")
    check_unharmed(db.client, db.base)
    no_tracebacks(db.records)


SERVED = ("games.created='garbage'", "games.updated='2024-13-45 99:00:00'", "games.opponent='grandmaster'")


@pytest.fixture(scope="module")
def served(bases, tmp_path_factory) -> Iterator[dict[str, tuple[Server, dict[str, dict[str, str]]]]]:
    made: dict[str, Server] = {}

    class Lazy(dict):
        def __missing__(self, kind: str) -> tuple[Server, dict[str, dict[str, str]]]:
            base, tmp = bases[kind], tmp_path_factory.mktemp(f"served-{kind}")
            url = copy_of(base, tmp)
            games = {}
            for d in DAMAGES:
                if d.name in SERVED and (kind == "sqlite" or not d.sqlite_only):
                    games[d.name] = clone(url, base.games[d.target]["game_id"])
                    damage(url, d.sql, games[d.name]["game_id"])
            made[kind] = Server(url, tmp, *limit_args(ai_processes=1, **ACTIONS))
            made[kind].start()  # fails if the process exits (as it did: exit 3) or never answers
            self[kind] = (made[kind], games)
            return self[kind]

    yield Lazy()
    for s in made.values():
        s.stop(hard=False)


@pytest.mark.parametrize(("kind", "d"), [c for c in CASES if c.values[1].name in SERVED])
def test_koikoi_serve_starts_on_damage(bases, served, kind, d):
    """What once stopped ``koikoi serve`` (exit 3) or kept it trying a move once a second, before the
    real server on a real port: it starts, and the damaged game is broken with its reason."""
    s, games = served[kind]
    with httpx.Client(base_url=s.url, timeout=30, cookies=bases[kind].cookies) as c:
        check_broken(c, games[d.name], d.reason)


@pytest.mark.parametrize("kind", DATABASES)
def test_koikoi_serve_marks_each_damaged_game_once(bases, served, kind):
    s, games = served[kind]
    with httpx.Client(base_url=s.url, timeout=30, cookies=bases[kind].cookies) as c:
        check_unharmed(c, bases[kind])
        for game in games.values():
            assert c.get(f"/api/seat/{game['token']}").status_code == 409
    time.sleep(2.5)  # a sweep (every 2 s): a move tried again and again would show in the log
    log = s.log.read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]
    assert "could not move" not in log, log[-3000:]
    for game in games.values():
        assert log.count(f"game {game['game_id']} is broken") == 1, log[-3000:]


# -- reviews --------------------------------------------------------------------------------------------

REVIEW = (
    "INSERT INTO reviews (game_id, seat, status, done, total, owner, until, body) "
    "SELECT id, {seat}, {status}, {done}, NULL, {owner}, {until}, {body} FROM games WHERE id = :gid"
)
REVIEW_DAMAGES = [
    Damage(
        "reviews.until",
        "finished",
        (REVIEW.format(seat=0, status="'running'", done=0, owner="'x'", until="'garbage'", body="NULL"),),
        "claim time 'garbage'",
        sqlite_only=True,
    ),
    Damage(
        "reviews.body",
        "finished",
        (REVIEW.format(seat=0, status="'done'", done=0, owner="NULL", until="created", body="'not json'"),),
        "not a JSON object",
    ),
    Damage(
        "reviews.status",
        "finished",
        (REVIEW.format(seat=0, status="'zzz'", done=0, owner="NULL", until="created", body="NULL"),),
        "status 'zzz'",
    ),
    Damage(
        "reviews.done",
        "finished",
        (REVIEW.format(seat=0, status="'running'", done=-3, owner="NULL", until="created", body="NULL"),),
        "decisions judged -3",
    ),
    # A claim by no seat of the game, held for ever: it would keep every review of the game "busy".
    Damage(
        "reviews.seat",
        "finished",
        (REVIEW.format(seat=7, status="'running'", done=0, owner="'x'", until=":future", body="NULL"),),
        "",
    ),
]


@pytest.mark.parametrize(
    ("kind", "d"),
    [
        pytest.param(kind, d, id=f"{kind}-{d.name}")
        for kind in DATABASES
        for d in REVIEW_DAMAGES
        if kind == "sqlite" or not d.sqlite_only
    ],
)
def test_a_damaged_review_is_worked_out_again(damaged, kind, d):
    db = damaged[kind]
    assert db.client is not None
    c, g = db.client, db.reviewed[d.name]
    where = f"/api/games/{g['game_id']}/review"
    r = c.get(where, params={"token": g["token"]})
    assert r.status_code == 200, r.text
    if d.reason:
        assert r.json()["status"] == "failed" and d.reason in r.json()["message"], r.json()
    else:
        assert r.json()["status"] == "none", r.json()
    r = c.post(where, params={"token": g["token"]})
    assert r.status_code in (200, 202), r.text
    assert r.json()["status"] in ("running", "done"), r.json()
    assert c.get(f"/api/seat/{g['token']}").status_code == 200  # the game itself is fine
    assert all_games(c)[g["game_id"]]["status"] == "finished"


# -- a move the computer cannot make, and the lobby's pages ---------------------------------------------


def test_a_computer_move_that_keeps_failing_leaves_its_game_broken(bases, tmp_path, log_records):
    """A search that fails on every try (here: an option the level does not take) is tried a few times,
    then the game is marked broken with the reason, instead of being tried once a second for ever."""
    base = bases["sqlite"]
    url = copy_of(base, tmp_path)
    token = base.games["ai"]["token"]
    with app_client(url, ai_options={"random": {"no_such_option": 1}}) as c:
        c.cookies.update(base.cookies)
        play_to_the_computer(c, token)
        deadline = time.monotonic() + 30
        while (r := c.get(f"/api/seat/{token}")).status_code == 200:
            assert r.json()["status"] == "playing"
            if time.monotonic() > deadline:  # what the server was doing, to tell a stuck worker from a lost claim
                pytest.fail(f"the game was never marked broken: {c.get('/api/health').json()}")
            time.sleep(0.2)
        assert r.status_code == 409 and "could not make move" in r.json()["message"], r.text
        listed = {x["game_id"]: x for x in c.get("/api/games").json()["games"]}
        assert listed[base.games["ai"]["game_id"]]["status"] == "broken"
        assert listed[base.games["fine"]["game_id"]]["status"] == "playing"
    tries = [r.getMessage() for r in log_records if "the computer could not move" in r.getMessage()]
    assert len(tries) == 2, tries  # the third failure marks it broken


def test_a_damaged_time_does_not_end_the_lobby_pages(bases, tmp_path, log_records):
    """The lobby pages by the time each game last changed: a game whose time cannot be read is listed
    broken where it stands, and every game is still listed once, over the pages."""
    base = bases["sqlite"]
    url = copy_of(base, tmp_path)
    damage(url, ("UPDATE games SET updated = 'garbage' WHERE id = :gid",), base.games["waiting"]["game_id"])
    damage(url, ("UPDATE games SET updated = 7 WHERE id = :gid",), base.games["friend"]["game_id"])
    with app_client(url, limits=Limits(ai_processes=1, **ACTIONS, page_size=1)) as c:
        c.cookies.update(base.cookies)
        # The friend game first: the server's sweep at its start may close it (SQLite sorts its time before
        # every date, as if long idle), writing a new time while the pages are read, which moves it ahead
        # of the cursor and out of them; read on its own first, it is marked broken instead. Either way
        # it then stays where it is.
        for _ in range(200):
            r = c.get(f"/api/seat/{base.games['friend']['token']}")
            if r.status_code != 200 or r.json()["status"] != "playing":
                break
            time.sleep(0.05)
        seen: list[dict] = []
        before = ""
        for _ in range(10):
            r = c.get("/api/games", params={"before": before} if before else None)
            assert r.status_code == 200, r.text
            seen += r.json()["games"]
            before = r.json()["next"]
            if not before:
                break
    ids = [g["game_id"] for g in seen]
    assert sorted(ids) == sorted(g["game_id"] for g in base.games.values()), seen
    status = {g["game_id"]: g["status"] for g in seen}
    assert status[base.games["waiting"]["game_id"]] == "broken"
    # SQLite sorts a number before every date: the server's sweep of idle games may close this one first
    # (rewriting its time), as the machine's load has it; either way it is listed, once.
    assert status[base.games["friend"]["game_id"]] in ("broken", "finished")
    assert status[base.games["fine"]["game_id"]] == "playing"
    no_tracebacks(log_records)
