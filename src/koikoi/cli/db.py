"""``koikoi db``: upgrade the web app's database schema, or show its revision."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import CliError, Commands, data_dir


def upgrade_done(upgraded: Any) -> str:
    """What an upgrade did (a :class:`koikoi.web.migrate.Upgrade`), in words."""
    now = f"{', '.join(upgraded.after)} (head)"
    if not upgraded.changed:
        return f"at {now} already: nothing to do"
    before = upgraded.before
    if before.before_migrations:
        return f"made before koikoi had migrations: adopted as it was, now at {now}"
    if not before.revisions:
        return f"every table created, at {now}"
    return f"upgraded from {', '.join(before.revisions)} to {now}"


def cmd_db(args: argparse.Namespace) -> int:
    try:
        from ..web.migrate import schema_of
        from ..web.store import Store, StoreError
    except ImportError as e:
        raise CliError(f"the web app needs its libraries ({e.name} is missing): pip install koikoi") from None
    url = args.database_url or str(data_dir() / "koikoi.db")
    if args.db_command == "current" and "://" not in url and not Path(url).expanduser().exists():
        raise CliError(f"no database at {url}")  # looking must not make one
    try:
        store = Store(url, upgrade=args.db_command == "upgrade")
    except StoreError as e:
        raise CliError(str(e)) from None
    try:
        if args.db_command == "upgrade":
            print(f"{store.sqlite_path or store.shown_url}: {upgrade_done(store.upgraded)}")
        else:
            try:
                print(schema_of(store.engine).describe())
            except Exception as e:  # a database that does not answer
                raise CliError(
                    f"cannot use the database {store.shown_url}: {type(e).__name__}: {str(e).splitlines()[0]}"
                ) from None
    finally:
        store.close()
    return 0


def add_parser(sub: Commands) -> None:
    p = sub.add_parser(
        "db",
        help="the web app's database: upgrade its schema, or show its revision",
        description="The schema of the web app's database. 'koikoi serve' upgrades it when it starts; "
        "'koikoi db upgrade' does the same without serving, e.g. once before starting many processes, "
        "and 'koikoi db current' shows where a database stands (docs/web.md, \"Schema migrations\").",
    )
    db = p.add_subparsers(dest="db_command", metavar="COMMAND", title="commands", required=True)
    for name, help_text in [
        ("upgrade", "bring the database's schema to this koikoi's (creating the tables of a new one)"),
        ("current", "print the database's schema revision, and whether it is this koikoi's (changes nothing)"),
    ]:
        q = db.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        q.add_argument(
            "--database-url",
            metavar="URL",
            help="the database: a file path or SQLAlchemy URL, e.g. postgresql://user:password@host/dbname "
            "(default: the SQLite file in the data folder that koikoi serve uses)",
        )
        q.set_defaults(func=cmd_db)
