"""The database's schema over time: Alembic migrations, shipped with the package, run when a store opens.

The migrations are in ``koikoi/web/migrations/versions`` (one file a revision, ``0001_baseline.py``
first), and Alembic is configured here, in code: no ``alembic.ini``, nothing read from the current folder
and nothing downloaded. :func:`upgrade` brings a database to the newest revision (the *head*):

* an empty database gets every table;
* a database made before koikoi had migrations (its tables, no ``alembic_version``) is adopted: the
  baseline keeps its tables as they are and records it at revision 0001, then the later revisions run;
* a database at the head is left alone, after one look at its ``alembic_version`` (the common case, on
  every start: no lock is taken for it, and Alembic is not even imported);
* a database at a revision this code does not know (a newer koikoi upgraded it) is refused with
  :class:`SchemaError`, naming the revision, and nothing is changed.

Processes that upgrade the same database at once take turns: on PostgreSQL the upgrade holds an
advisory lock (``pg_advisory_lock``), on SQLite a write transaction taken at once (``BEGIN IMMEDIATE``),
and each process looks at the revision again once it holds the lock. All of an upgrade runs in one
transaction (both databases change their schema transactionally), so a failed upgrade leaves the database
as it was. docs/web.md, "Schema migrations", says when it runs and how to add a revision.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError

from .._version import __version__
from .schema import StoreError

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

__all__ = ["MIGRATIONS", "LOCK_KEY", "SchemaError", "Schema", "alembic_config", "head", "schema_of", "upgrade"]

MIGRATIONS = Path(__file__).with_name("migrations")
# The PostgreSQL advisory lock that upgrades take in turn (a number of koikoi's own: b"koikoi" + 0x0101).
LOCK_KEY = 0x6B6F696B6F690101


class SchemaError(StoreError):
    """A database whose schema this code cannot use or upgrade (a newer revision, a table not koikoi's)."""


@dataclass(frozen=True, slots=True)
class Schema:
    """Where a database's schema stands."""

    revisions: tuple[str, ...]  # as recorded in its alembic_version (empty: none recorded)
    head: str  # the newest revision this code knows
    tables: bool  # it holds any of koikoi's tables
    unknown: tuple[str, ...] = ()  # its revisions that this code does not know

    @property
    def current(self) -> bool:
        return self.revisions == (self.head,)

    @property
    def before_migrations(self) -> bool:
        """Made by koikoi before it had migrations: its tables, no revision."""
        return not self.revisions and self.tables

    def describe(self) -> str:
        if self.unknown:
            return f"{', '.join(self.revisions)} (unknown to koikoi {__version__}, whose newest is {self.head})"
        if self.current:
            return f"{self.head} (head)"
        if self.before_migrations:
            return f"none: made before koikoi had migrations (an upgrade adopts it at 0001, then {self.head})"
        if not self.revisions:
            return f"none: an empty database (an upgrade creates every table, at {self.head})"
        return f"{', '.join(self.revisions)} (behind: an upgrade brings it to {self.head})"


def alembic_config(*, connection: Connection | None = None, url: str | None = None) -> Config:
    """Alembic's configuration for koikoi's migrations. ``connection``: migrate on it (the caller holds
    the lock and the transaction); ``url``: a developer's database, for ``alembic.command`` by hand."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("path_separator", "os")
    cfg.set_main_option("file_template", "%%(rev)s_%%(slug)s")  # versions/0002_accounts.py
    if url is not None:
        from .schema import normalise_url

        cfg.set_main_option("sqlalchemy.url", normalise_url(url).replace("%", "%%"))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


@cache
def _script() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


@cache
def _known() -> frozenset[str]:
    return frozenset(s.revision for s in _script().walk_revisions())


def head() -> str:
    """The newest revision of the schema (one: a second head is an error of the migrations)."""
    heads = _script().get_heads()
    if len(heads) != 1:
        raise SchemaError(f"koikoi's migrations have {len(heads)} heads ({', '.join(heads)}): merge them")
    return heads[0]


def _look(conn: Connection) -> Schema:
    from alembic.runtime.migration import MigrationContext

    from .schema import metadata

    revisions = tuple(sorted(MigrationContext.configure(conn).get_current_heads()))
    tables = bool(set(metadata.tables) & set(inspect(conn).get_table_names()))
    return Schema(revisions, head(), tables, tuple(r for r in revisions if r not in _known()))


def schema_of(engine: Engine) -> Schema:
    """Where the database's schema stands; changes nothing."""
    with engine.connect() as conn:
        return _look(conn)


def _refuse_unknown(schema: Schema) -> None:
    if schema.unknown:
        which = ", ".join(repr(r) for r in schema.unknown)
        raise SchemaError(
            f"its schema is at revision {which}, which koikoi {__version__} does not know (its newest is "
            f"{schema.head!r}): a newer koikoi upgraded it. Run that version or a newer one, or restore the "
            "backup taken before the upgrade; nothing was changed"
        )


@dataclass(frozen=True, slots=True)
class Upgrade:
    """What :func:`upgrade` did."""

    before: Schema
    after: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return self.before.revisions != self.after


# A revision file's own lines, as Alembic's template writes them (for _head_by_reading).
_REVISION = re.compile(r"""^revision\b[^=\n]*=\s*['"]([^'"]+)['"]\s*$""", re.M)
_DOWN_REVISION = re.compile(r"^down_revision\b[^=\n]*=(.*)$", re.M)


@cache
def _head_by_reading() -> str | None:
    """The head, read from the revision files' ``revision =`` and ``down_revision =`` lines without
    Alembic (whose import is most of what a start spends on the schema); None when anything there is not
    plain, and then Alembic works it out."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in (MIGRATIONS / "versions").glob("*.py"):
        if path.name == "__init__.py":
            continue
        source = path.read_text(encoding="utf-8")
        revision, down = _REVISION.findall(source), _DOWN_REVISION.findall(source)
        if len(revision) != 1 or len(down) != 1:
            return None
        revisions.add(revision[0])
        parents.update(re.findall(r"""['"]([^'"]+)['"]""", down[0]))
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None


def _at_head(engine: Engine) -> str | None:
    """The head when the database records it already (one query), else None."""
    known = _head_by_reading()
    if known is None:
        return None
    try:
        with engine.connect() as conn:
            found = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    except DBAPIError:  # no such table (or no database: the full look says which)
        return None
    return known if found == [known] else None


def upgrade(engine: Engine) -> Upgrade:
    """Bring the database to the head revision (see the module's docstring); :class:`SchemaError` for a
    database at a revision this code does not know, or holding tables of koikoi's names that are not."""
    current = _at_head(engine)
    if current is not None:  # every start but the first after an upgrade: Alembic is not even imported
        at = Schema((current,), current, tables=True)
        return Upgrade(at, at.revisions)
    seen = schema_of(engine)
    _refuse_unknown(seen)
    if seen.current:
        return Upgrade(seen, seen.revisions)
    with _upgrading(engine) as conn:
        seen = _look(conn)  # again, holding the lock: another process may have upgraded it meanwhile
        _refuse_unknown(seen)
        if not seen.current:
            from alembic import command

            command.upgrade(alembic_config(connection=conn), "head")
        after = _look(conn).revisions
    return Upgrade(seen, after)


@contextmanager
def _upgrading(engine: Engine) -> Iterator[Connection]:
    """A connection holding the upgrade's lock, in a transaction that commits when the block ends."""
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": LOCK_KEY})  # waits for another's upgrade
            conn.commit()  # the lock is the session's: it outlives this transaction
            try:
                with conn.begin():
                    yield conn
            finally:
                try:
                    conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": LOCK_KEY})
                    conn.commit()
                except Exception:
                    conn.invalidate()  # the lock goes with the connection, never back to the pool
        elif engine.dialect.name == "sqlite":
            # Foreign keys off for the upgrade, as SQLite asks of a change to a table others refer to (a
            # table rebuilt by a batch migration); checked before the commit instead. The pragma does
            # nothing inside a transaction, so it comes first.
            conn.exec_driver_sql("PRAGMA foreign_keys=OFF")
            try:
                conn.exec_driver_sql("BEGIN IMMEDIATE")  # the write lock now: a second upgrader waits here
                try:
                    yield conn
                    broken = conn.exec_driver_sql("PRAGMA foreign_key_check").all()
                    if broken:
                        raise SchemaError(f"the upgrade would leave rows referring to nothing: {broken[:5]}")
                    conn.commit()
                except BaseException:
                    conn.rollback()
                    raise
            finally:
                conn.exec_driver_sql("PRAGMA foreign_keys=ON")
                conn.commit()
        else:
            with conn.begin():
                yield conn


def run_environment(context: Any) -> None:
    """What ``migrations/env.py`` does when Alembic runs it: migrate (or compare, for autogenerate) on the
    connection :func:`upgrade` holds, or on a developer's database named by ``alembic_config(url=...)``."""
    from .schema import metadata

    if context.is_offline_mode():
        raise SchemaError("koikoi's migrations run on a database, not as SQL text (no --sql)")
    config = context.config
    options = {"target_metadata": metadata, "render_as_batch": True, "compare_type": True}
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, **options)
        with context.begin_transaction():
            context.run_migrations()
        return
    from sqlalchemy import create_engine

    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise SchemaError("no database to migrate: alembic_config(url=...) names one")
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            context.configure(connection=conn, **options)
            with context.begin_transaction():
                context.run_migrations()
            conn.commit()
    finally:
        engine.dispose()
