"""Imported by serverfork.py's fork server only, before it forks any server: everything a starting
``koikoi serve`` would import on its way (the app, Alembic and the migrations, the templates' libraries),
and one SQLite database migrated to the newest revision, :data:`TEMPLATE`.

A forked server whose SQLite file does not exist yet starts from a copy of :data:`TEMPLATE` (what its own
first start would have made) instead of running every migration again; ``koikoi db`` and the store's own
tests still migrate empty databases from scratch, and a server given an existing file opens it as it is.
"""

from __future__ import annotations

import atexit
import gc
import os
import shutil
import tempfile

from koikoi.web.app import create_app
from koikoi.web.limits import Limits

_folder = tempfile.mkdtemp(prefix="koikoi-test-template-")
atexit.register(shutil.rmtree, _folder, True)
TEMPLATE = os.path.join(_folder, "games.db")
_app = create_app(TEMPLATE, ai_delay=0, limits=Limits())
_app.state.store.close()
del _app
if os.path.exists(TEMPLATE + "-wal"):  # not checkpointed into the file: no template, every server migrates
    TEMPLATE = ""

# What the fork server holds now is left out of every collection in the servers it forks: the server's
# start (koikoi.web.server.tune_collector) collects once, and would otherwise walk every object of the
# imports and the template's app again in each server, writing to every page of the inherited memory.
gc.collect()
gc.freeze()
