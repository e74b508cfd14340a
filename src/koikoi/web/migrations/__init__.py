"""The database's migrations (Alembic): ``env.py``, the template of a new one and ``versions/``, one file a
revision. :mod:`koikoi.web.migrate` runs them; docs/web.md, "Schema migrations", says how to add one."""
