"""Alembic runs this file to migrate (and to compare the database with ``metadata`` for autogenerate).

:mod:`koikoi.web.migrate` hands it the connection to migrate on, which already holds the upgrade's lock
and transaction; a developer's ``alembic_config(url=...)`` gives a URL instead.
"""

from alembic import context

from koikoi.web.migrate import run_environment

# Only while Alembic runs it: anything else importing this file (pytest's doctest collection) does nothing.
if hasattr(context, "config"):
    run_environment(context)
