"""Secrets the server processes share through the database (the table ``server_keys``): made once, by
the first process to ask, and read by every other; one key a use (signing browser ids, device cookies)."""

from __future__ import annotations

import secrets

from sqlalchemy import insert, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from .schema import server_keys

__all__ = ["server_key"]


def server_key(engine: Engine, name: str) -> bytes:
    """The key named ``name``, made now if no process made it before."""
    with engine.begin() as conn:
        row = conn.execute(select(server_keys.c.value).where(server_keys.c.name == name)).first()
    if row is None:
        try:
            with engine.begin() as conn:
                conn.execute(insert(server_keys).values(name=name, value=secrets.token_urlsafe(48)))
        except IntegrityError:
            pass  # another process made it at the same moment: use theirs
        with engine.begin() as conn:
            row = conn.execute(select(server_keys.c.value).where(server_keys.c.name == name)).first()
    assert row is not None
    return str(row.value).encode()
