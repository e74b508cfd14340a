"""Schema migrations (koikoi.web.migrate, docs/web.md "Schema migrations"), on SQLite and PostgreSQL.

A database from before migrations existed is made here from ``LEGACY_DDL``: the statements that
``metadata.create_all`` (koikoi.web.store) and ``BrowserIds`` (koikoi.web.browsers) ran on an empty
database, captured from the code of commit bc2c5f1 (the schema is the same up to the last commit without
migrations) and frozen. Its rows are written with plain SQL through tables reflected from that database,
so neither changes when the code's schema does. The only difference between the two databases'
statements is the date-and-time type.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import time
import tomllib
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatch
from pathlib import Path

import pytest
import sqlalchemy as sa
from conftest import POSTGRES_URL, free_port, make_database

from koikoi.cli import main
from koikoi.match import Match
from koikoi.rules import PRESETS, RuleSet
from koikoi.web import migrate
from koikoi.web.games import GameService
from koikoi.web.schema import metadata
from koikoi.web.store import Store, StoreError, normalise_url

ROOT = Path(__file__).resolve().parent.parent
needs_postgres = pytest.mark.skipif(not POSTGRES_URL, reason="KOIKOI_TEST_POSTGRES_URL is not set")

LEGACY_DDL = """
CREATE TABLE games (
    id VARCHAR(32) NOT NULL,
    created {moment} NOT NULL,
    updated {moment} NOT NULL,
    rules TEXT NOT NULL,
    seed BIGINT NOT NULL,
    opponent VARCHAR(16) NOT NULL,
    ai_seed BIGINT NOT NULL,
    status VARCHAR(16) NOT NULL,
    moves INTEGER NOT NULL,
    scores VARCHAR(64) NOT NULL,
    birth_months VARCHAR(8),
    PRIMARY KEY (id)
);
CREATE TABLE seats (
    token VARCHAR(64) NOT NULL,
    game_id VARCHAR(32) NOT NULL,
    seat INTEGER NOT NULL,
    kind VARCHAR(16) NOT NULL,
    name VARCHAR(64) NOT NULL,
    owner VARCHAR(64),
    PRIMARY KEY (token),
    FOREIGN KEY(game_id) REFERENCES games (id)
);
CREATE INDEX ix_seats_game_id ON seats (game_id);
CREATE INDEX ix_seats_owner ON seats (owner);
CREATE TABLE invitations (
    token VARCHAR(64) NOT NULL,
    game_id VARCHAR(32) NOT NULL,
    seat INTEGER NOT NULL,
    created {moment} NOT NULL,
    spent {moment},
    PRIMARY KEY (token),
    FOREIGN KEY(game_id) REFERENCES games (id)
);
CREATE INDEX ix_invitations_game_id ON invitations (game_id);
CREATE TABLE problems (
    game_id VARCHAR(32) NOT NULL,
    reason TEXT NOT NULL,
    at {moment} NOT NULL,
    PRIMARY KEY (game_id),
    FOREIGN KEY(game_id) REFERENCES games (id)
);
CREATE TABLE ai_turns (
    game_id VARCHAR(32) NOT NULL,
    seq INTEGER NOT NULL,
    owner VARCHAR(32),
    until {moment} NOT NULL,
    PRIMARY KEY (game_id),
    FOREIGN KEY(game_id) REFERENCES games (id)
);
CREATE TABLE reviews (
    game_id VARCHAR(32) NOT NULL,
    seat INTEGER NOT NULL,
    status VARCHAR(16) NOT NULL,
    done INTEGER NOT NULL,
    total INTEGER,
    owner VARCHAR(32),
    until {moment} NOT NULL,
    body TEXT,
    PRIMARY KEY (game_id, seat),
    FOREIGN KEY(game_id) REFERENCES games (id)
);
CREATE TABLE actions (
    game_id VARCHAR(32) NOT NULL,
    seq INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    action INTEGER NOT NULL,
    at {moment} NOT NULL,
    PRIMARY KEY (game_id, seq),
    FOREIGN KEY(game_id) REFERENCES games (id)
);
CREATE TABLE server_keys (
    name VARCHAR(32) NOT NULL,
    value VARCHAR(128) NOT NULL,
    PRIMARY KEY (name)
);
CREATE TABLE adopted_browser_ids (
    id VARCHAR(64) NOT NULL,
    at {moment} NOT NULL,
    PRIMARY KEY (id)
);
"""
# The first web release kept only these: its databases got the other tables from create_all when a later
# release opened them, and now from the baseline.
FIRST_RELEASE_TABLES = ("games", "seats", "actions")


def engine_of(url: str) -> sa.Engine:
    return sa.create_engine(normalise_url(url))


def legacy_statements(dialect: str, tables: tuple[str, ...] | None = None) -> list[str]:
    moment = "DATETIME" if dialect == "sqlite" else "TIMESTAMP WITH TIME ZONE"
    statements = [s.strip() for s in LEGACY_DDL.format(moment=moment).split(";") if s.strip()]
    if tables is not None:
        statements = [s for s in statements if s.split()[2 if s.startswith("CREATE TABLE") else 4] in tables]
    return statements


def make_legacy(url: str, tables: tuple[str, ...] | None = None) -> None:
    """A database as koikoi made it before it had migrations (or, with ``tables``, an older one)."""
    engine = engine_of(url)
    with engine.begin() as conn:
        for statement in legacy_statements(engine.dialect.name, tables):
            conn.exec_driver_sql(statement)
    engine.dispose()


def play(rules: dict, seed: int, moves: int | None, to_move: int | None) -> tuple[Match, list[tuple[int, int]]]:
    """A match played ``moves`` moves (to its end with None, and on until seat ``to_move`` is to move) by
    a fixed random player: the moves made."""
    options = {k: v for k, v in rules.items() if k != "rules_version"}
    m = Match(RuleSet.from_dict(options), seed=seed, version=rules["rules_version"])
    rng = random.Random(seed)
    made = []
    while not m.is_over() and (moves is None or len(made) < moves or to_move not in (None, m.current_player)):
        seat, action = m.current_player, rng.choice(m.legal_actions())
        m.apply_action(action)
        made.append((seat, action))
    return m, made


class Legacy:
    """What fill_legacy wrote: the games to play on."""

    playing = "PlayingGame1"  # a friend game in progress
    finished = "FinishedGam1"  # against the computer, over, reviewed
    waiting = "WaitingGame1"  # a friend game whose friend has not come yet
    broken = "BrokenGame01"  # marked broken, with its reason
    thinking = "ThinkingGam1"  # against the computer, the computer to move (its turn noted)
    host = "host-browser-0001"
    tokens = {playing: ("PlayTokenSeat0", "PlayTokenSeat1")}


def fill_legacy(url: str) -> None:
    """Rows as the code before migrations wrote them, through tables reflected from the database."""
    engine = engine_of(url)
    meta = sa.MetaData()
    meta.reflect(engine)
    t = meta.tables
    at = datetime(2026, 3, 1, 12, 30, 15, 123456, tzinfo=UTC)
    rules = {**PRESETS["traditional"].to_dict(), "rules_version": 2}
    one_hand = {**PRESETS["cardavia"].to_dict(), "rules_version": 2}
    games = [
        # id, rules, opponent, status, moves made (None: to the end), seats' kinds
        (Legacy.playing, rules, "friend", "playing", 9, ("human", "human")),
        (Legacy.finished, one_hand, "random", "finished", None, ("human", "ai")),
        (Legacy.waiting, rules, "friend", "waiting", 0, ("human", "human")),
        (Legacy.broken, rules, "friend", "broken", 3, ("human", "human")),
        (Legacy.thinking, rules, "medium", "playing", 4, ("human", "ai")),  # to move: the computer
    ]
    with engine.begin() as conn:
        for n, (gid, game_rules, opponent, status, moves, kinds) in enumerate(games):
            seed = 1_000_003 * (n + 1)
            m, made = play(game_rules, seed, moves, 1 if gid == Legacy.thinking else None)
            conn.execute(
                t["games"].insert(),
                {
                    "id": gid,
                    "created": at,
                    "updated": at + timedelta(minutes=n),
                    "rules": json.dumps(game_rules),
                    "seed": seed,
                    "opponent": opponent,
                    "ai_seed": seed + 1,
                    "status": status,
                    "moves": len(made),
                    "scores": f"{m.scores[0]},{m.scores[1]}",
                    "birth_months": None,
                },
            )
            tokens = Legacy.tokens.get(gid, (f"{gid}-seat0", f"{gid}-seat1"))
            for seat, kind in enumerate(kinds):
                conn.execute(
                    t["seats"].insert(),
                    {
                        "token": tokens[seat],
                        "game_id": gid,
                        "seat": seat,
                        "kind": kind,
                        "name": "Computer" if kind == "ai" else f"Player {seat}",
                        "owner": Legacy.host
                        if seat == 0
                        else None
                        if kind == "ai" or status == "waiting"
                        else "guest-01",
                    },
                )
            for seq, (seat, action) in enumerate(made):
                conn.execute(
                    t["actions"].insert(),
                    {"game_id": gid, "seq": seq, "seat": seat, "action": action, "at": at + timedelta(seconds=seq)},
                )
        conn.execute(
            t["invitations"].insert(),
            [
                {"token": "InviteWaiting1", "game_id": Legacy.waiting, "seat": 1, "created": at, "spent": None},
                {"token": "InvitePlaying1", "game_id": Legacy.playing, "seat": 1, "created": at, "spent": at},
            ],
        )
        conn.execute(t["problems"].insert(), {"game_id": Legacy.broken, "reason": "a test broke it", "at": at})
        thinking = conn.execute(sa.select(t["games"].c.moves).where(t["games"].c.id == Legacy.thinking)).scalar()
        conn.execute(t["ai_turns"].insert(), {"game_id": Legacy.thinking, "seq": thinking, "owner": None, "until": at})
        body = json.dumps({"decisions": [], "seat": 0, "summary": "kept as written"})
        conn.execute(
            t["reviews"].insert(),
            {
                "game_id": Legacy.finished,
                "seat": 0,
                "status": "done",
                "done": 7,
                "total": 7,
                "owner": None,
                "until": at,
                "body": body,
            },
        )
        conn.execute(t["server_keys"].insert(), {"name": "browser_ids", "value": "k" * 64})
        conn.execute(t["adopted_browser_ids"].insert(), {"id": "bare-browser-id-01", "at": at})
    engine.dispose()


def every_row(url: str, columns: dict[str, list[str]] | None = None) -> dict[str, list[tuple[str, ...]]]:
    """Every row of every table but Alembic's, as text, in order: of the tables and columns in ``columns``
    when given (what an older schema had: later revisions add columns, which start empty)."""
    engine = engine_of(url)
    with engine.connect() as conn:
        names = sorted(n for n in sa.inspect(conn).get_table_names() if n != "alembic_version")
        rows = {}
        for n in names:
            if columns is not None and n not in columns:
                continue
            shown = "*" if columns is None else ", ".join(f'"{c}"' for c in columns[n])
            rows[n] = sorted(tuple(map(repr, r)) for r in conn.execute(sa.text(f'SELECT {shown} FROM "{n}"')))
    engine.dispose()
    return rows


def every_column(url: str) -> dict[str, list[str]]:
    """Each table's columns, in order."""
    engine = engine_of(url)
    with engine.connect() as conn:
        inspector = sa.inspect(conn)
        names = [n for n in inspector.get_table_names() if n != "alembic_version"]
        found = {n: [c["name"] for c in inspector.get_columns(n)] for n in names}
    engine.dispose()
    return found


def revisions(url: str) -> list[str]:
    engine = engine_of(url)
    with engine.connect() as conn:
        found = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all()
    engine.dispose()
    return list(found)


def structure(url: str) -> dict[str, dict]:
    """What reflection finds of each table: columns (name, type, nullable), primary key, foreign keys, indexes."""
    engine = engine_of(url)
    insp = sa.inspect(engine)
    found = {}
    for name in sorted(insp.get_table_names()):
        if name == "alembic_version":
            continue
        found[name] = {
            "columns": [(c["name"], str(c["type"]), c["nullable"]) for c in insp.get_columns(name)],
            "primary key": insp.get_pk_constraint(name),
            # In no particular order: SQLAlchemy writes a table's foreign keys in the order of a set, and a
            # column added later (ALTER TABLE ... ADD COLUMN ... REFERENCES) is listed where SQLite puts it.
            "foreign keys": sorted(insp.get_foreign_keys(name), key=lambda fk: fk["constrained_columns"]),
            "indexes": sorted((i["name"], tuple(i["column_names"]), bool(i["unique"])) for i in insp.get_indexes(name)),
            "unique": insp.get_unique_constraints(name),
        }
    engine.dispose()
    return found


def differences(url: str) -> list:
    """What Alembic's autogenerate finds between the database and ``metadata`` (nothing, when they agree)."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    engine = engine_of(url)
    with engine.connect() as conn:
        found = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), metadata)
    engine.dispose()
    return found


def koikoi(*args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "import sys; from koikoi.cli import main; sys.exit(main())", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def kind_of(url: str) -> str:
    return "sqlite" if "://" not in url else "postgresql"


# -- the migrations are the schema ---------------------------------------------------------------------


def test_an_empty_database_upgraded_has_the_schema_metadata_describes(database_url, tmp_path):
    """Alembic's compare finds nothing between the migrated database and ``metadata``, and reflection finds
    the same tables, columns, keys and indexes as in a database ``metadata.create_all`` made: a migration
    that forgets a column (or a change to ``metadata`` without a migration) fails here."""
    store = Store(database_url)
    assert store.upgraded is not None and store.upgraded.changed and not store.upgraded.before.revisions
    store.close()
    assert revisions(database_url) == [migrate.head()]
    assert differences(database_url) == []
    (tmp_path / "made").mkdir()
    made = make_database(kind_of(database_url), tmp_path / "made")
    engine = engine_of(made)
    metadata.create_all(engine)
    engine.dispose()
    assert structure(database_url) == structure(made)


def test_the_head_is_read_without_alembic_as_alembic_reads_it():
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(migrate.alembic_config())
    assert script.get_heads() == [migrate.head()]  # one head: two would need a merge revision
    assert migrate._head_by_reading() == migrate.head()
    chain = [s.revision for s in script.walk_revisions()][::-1]
    files = sorted(p.name for p in (migrate.MIGRATIONS / "versions").glob("[0-9]*.py"))
    assert [f.split("_", 1)[0] for f in files] == chain, "versions/NNNN_name.py, numbered in order"


def test_the_migrations_ship_with_the_package():
    """Every file of the migrations is in a built package: its .py files are modules of packages, and
    package-data names the others (a wheel holds them: docs/web.md, "Schema migrations")."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["koikoi"]
    package = ROOT / "src" / "koikoi"
    files = [p for p in migrate.MIGRATIONS.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert any(p.name == "env.py" for p in files) and any(p.name == "script.py.mako" for p in files)
    for path in files:
        if path.suffix == ".py":
            assert (path.parent / "__init__.py").exists(), path
        else:
            assert any(fnmatch(path.relative_to(package).as_posix(), pattern) for pattern in data), path


# -- a database from before migrations ------------------------------------------------------------------


def test_a_database_from_before_migrations_is_adopted_and_loses_nothing(database_url):
    make_legacy(database_url)
    fill_legacy(database_url)
    before = every_row(database_url)
    legacy_columns = every_column(database_url)
    assert sum(map(len, before.values())) > 50 and all(before.values())
    store = Store(database_url)
    assert store.upgraded is not None and store.upgraded.before.before_migrations
    assert revisions(database_url) == [migrate.head()]
    assert every_row(database_url, legacy_columns) == before  # nothing lost, nothing changed
    after = every_row(database_url)
    assert not any(rows for t, rows in after.items() if t not in before)  # the later revisions' tables
    assert differences(database_url) == []
    # The server's own path: each game read, checked and rebuilt as a request would; one played on.
    assert store.problem_of(Legacy.broken) == "a test broke it"
    assert store.review(Legacy.finished, 0).body is not None
    assert store.invitation("InviteWaiting1").spent is None
    assert len(store.games_of(Legacy.host)) == 5
    assert store.computer_turn(Legacy.thinking)[0] == store.game(Legacy.thinking).moves >= 4

    async def play_on() -> None:
        service = GameService(store)
        try:
            for gid in (Legacy.playing, Legacy.finished, Legacy.waiting, Legacy.thinking):
                game = await service.load(gid)
                assert game.status != "broken", (gid, store.problem_of(gid))
            game = await service.load(Legacy.playing)
            mover = Legacy.tokens[Legacy.playing][game.match.current_player]
            ack = await service.act(mover, game.match.legal_actions()[0], game.moves)
            assert ack == {"type": "ack", "seq": 10}, ack
        finally:
            await service.close()

    asyncio.run(play_on())
    assert store.game(Legacy.playing).moves == 10 and len(store.actions_of(Legacy.playing)) == 10
    store.close()


def test_a_database_from_the_first_release_gets_the_later_tables(database_url):
    make_legacy(database_url, FIRST_RELEASE_TABLES)
    engine = engine_of(database_url)
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO games VALUES ('FirstRelease', '2025-01-01 00:00:00', '2025-01-01 00:00:00', "
            "'{\"rules_version\": 1}', 7, 'friend', 8, 'playing', 0, '0,0', NULL)"
        )
    engine.dispose()
    Store(database_url).close()
    assert differences(database_url) == []
    assert every_row(database_url)["games"][0][0] == "'FirstRelease'"


def test_a_table_that_is_not_koikois_is_refused(tmp_path):
    url = str(tmp_path / "other.db")
    engine = engine_of(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE games (name TEXT, publisher TEXT)")
    engine.dispose()
    with pytest.raises(StoreError, match="a table 'games' that is not koikoi's: its columns are name, publisher"):
        Store(url)
    assert sa.inspect(engine_of(url)).get_table_names() == ["games"]  # nothing made beside it


def test_a_table_others_refer_to_can_be_rebuilt_on_sqlite(tmp_path):
    """A future migration may rebuild ``games`` on SQLite (``batch_alter_table``), which foreign keys
    forbid while they are on: the upgrade turns them off and checks them all before it commits."""
    from alembic.operations import Operations
    from alembic.runtime.migration import MigrationContext

    url = str(tmp_path / "games.db")
    make_legacy(url)
    fill_legacy(url)
    store = Store(url)
    before = every_row(url)
    with migrate._upgrading(store.engine) as conn:
        with Operations(MigrationContext.configure(conn)).batch_alter_table("games", recreate="always") as batch:
            batch.add_column(sa.Column("rated", sa.Integer(), nullable=True))
    rebuilt = every_row(url)
    assert [row[:-1] for row in rebuilt["games"]] == before["games"]  # the new column last, empty
    assert {n: r for n, r in rebuilt.items() if n != "games"} == {n: r for n, r in before.items() if n != "games"}
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1  # on again, for the store's use
    with pytest.raises(StoreError, match="rows referring to nothing"):  # a change that orphans rows
        with migrate._upgrading(store.engine) as conn:
            conn.exec_driver_sql("DELETE FROM games WHERE id = ?", (Legacy.finished,))
    assert every_row(url) == rebuilt  # rolled back
    store.close()


# -- a database at the head, or past it ------------------------------------------------------------------


def test_opening_a_database_at_the_head_again_changes_nothing(database_url):
    Store(database_url).close()
    rows = every_row(database_url)
    engine = engine_of(database_url)
    statements: list[str] = []
    sa.event.listen(engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    done = migrate.upgrade(engine)
    engine.dispose()
    assert not done.changed and done.after == (migrate.head(),)
    assert statements == ["SELECT version_num FROM alembic_version"]  # one look, no lock, no change
    again = Store(database_url)
    assert again.upgraded is not None and not again.upgraded.changed
    again.close()
    assert every_row(database_url) == rows


def test_a_database_newer_than_the_code_is_refused_by_its_revision(database_url):
    Store(database_url).close()
    engine = engine_of(database_url)
    with engine.begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '9f1e2d3c0b4a'")
        conn.exec_driver_sql("DROP TABLE adopted_browser_ids")  # as if that newer koikoi had dropped it
    engine.dispose()
    rows = every_row(database_url)
    with pytest.raises(StoreError, match=r"at revision '9f1e2d3c0b4a', which koikoi .* does not know") as e:
        Store(database_url)
    assert "a newer koikoi upgraded it" in str(e.value) and "nothing was changed" in str(e.value)
    assert every_row(database_url) == rows and revisions(database_url) == ["9f1e2d3c0b4a"]
    # koikoi serve says the same, and starts nothing.
    assert main(["serve", "--port", str(free_port()), "--database-url", database_url]) == 2
    r = koikoi("db", "current", "--database-url", database_url)
    assert r.returncode == 0 and r.stdout.startswith("9f1e2d3c0b4a (unknown to koikoi"), r
    r = koikoi("db", "upgrade", "--database-url", database_url)
    assert r.returncode == 2 and "'9f1e2d3c0b4a'" in r.stderr and "Traceback" not in r.stderr, r


# -- the command line ---------------------------------------------------------------------------------------


def test_koikoi_db_upgrade_and_current_on_a_real_file(tmp_path):
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"))
    head = migrate.head()
    path = tmp_path / "games.db"
    r = koikoi("db", "current", "--database-url", str(path), env=env)
    assert r.returncode == 2 and f"no database at {path}" in r.stderr and not path.exists(), r
    r = koikoi("db", "upgrade", "--database-url", str(path), env=env)
    assert r.returncode == 0 and r.stdout == f"{path}: every table created, at {head} (head)\n", r
    r = koikoi("db", "current", "--database-url", str(path), env=env)
    assert (r.returncode, r.stdout) == (0, f"{head} (head)\n"), r
    r = koikoi("db", "upgrade", "--database-url", str(path), env=env)
    assert r.returncode == 0 and r.stdout == f"{path}: at {head} (head) already: nothing to do\n", r
    # A file from before migrations, and the default database (koikoi serve's, in the data folder).
    old = tmp_path / "data" / "koikoi" / "koikoi.db"
    old.parent.mkdir(parents=True)
    make_legacy(str(old))
    fill_legacy(str(old))
    rows = every_row(str(old))
    legacy_columns = every_column(str(old))
    r = koikoi("db", "current", env=env)
    assert r.returncode == 0 and r.stdout.startswith("none: made before koikoi had migrations"), r
    r = koikoi("db", "upgrade", env=env)
    assert r.returncode == 0 and "adopted as it was, now at" in r.stdout and str(old) in r.stdout, r
    assert every_row(str(old), legacy_columns) == rows and revisions(str(old)) == [head]
    r = koikoi("db", env=env)
    assert r.returncode == 2 and "koikoi db --help" in r.stderr


# -- upgrades at the same moment -----------------------------------------------------------------------------


def _upgrades_at_once(url: str, hold) -> None:
    """Two ``koikoi db upgrade`` of one fresh database started while ``hold`` (a context manager) holds
    what an upgrade waits for: both wait, then both succeed, one creating the tables."""
    with hold:
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "koikoi.cli", "db", "upgrade", "--database-url", url],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        time.sleep(3)  # each has started, looked, and waits for the lock
        assert [p.poll() for p in procs] == [None, None], [p.communicate() for p in procs if p.poll() is not None]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    said = sorted(out.split(": ", 1)[1] for out, _err in outs)
    head = migrate.head()
    assert said == [f"at {head} (head) already: nothing to do\n", f"every table created, at {head} (head)\n"], outs
    assert revisions(url) == [head] and differences(url) == []


class _Holding:
    def __init__(self, url: str, *statements: str) -> None:
        self.engine = sa.create_engine(normalise_url(url), isolation_level="AUTOCOMMIT")
        self.statements = statements

    def __enter__(self) -> None:
        self.conn = self.engine.connect()
        for statement in self.statements:
            self.conn.exec_driver_sql(statement)

    def __exit__(self, *exc) -> None:
        self.conn.close()  # the lock goes with the connection
        self.engine.dispose()


@needs_postgres
def test_upgrades_at_the_same_moment_take_turns_on_postgresql(tmp_path):
    url = make_database("postgresql", tmp_path)
    _upgrades_at_once(url, _Holding(url, f"SELECT pg_advisory_lock({migrate.LOCK_KEY})"))


def test_upgrades_at_the_same_moment_take_turns_on_sqlite(tmp_path):
    url = str(tmp_path / "games.db")
    engine = engine_of(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("PRAGMA journal_mode=WAL")  # as the store opens it
    engine.dispose()
    # The write lock, held for less than the store's busy_timeout (5 s): the upgraders wait for it.
    _upgrades_at_once(url, _Holding(url, "BEGIN IMMEDIATE"))
