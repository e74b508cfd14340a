"""Fixtures for the web app's tests: a real ``koikoi serve`` process on a real socket and database.

The server runs as a child process (so a test can kill and restart it mid-game) on a free loopback
port. The database is a fresh SQLite file, and also PostgreSQL when ``KOIKOI_TEST_POSTGRES_URL`` names
a server (``.ci/run`` starts one); each PostgreSQL test gets a database of its own.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

POSTGRES_URL = os.environ.get("KOIKOI_TEST_POSTGRES_URL")
SRC = Path(__file__).resolve().parent.parent / "src"
# Every process a test starts (servers, their workers, the CLI) runs this checkout's code, whatever
# `pip install -e` last pointed the installed package at.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))
DATABASES = ["sqlite"] + (["postgresql"] if POSTGRES_URL else [])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``koikoi serve`` in a child process; ``restart()`` stops it hard and starts it on the same database."""

    def __init__(self, database_url: str, tmp: Path, *extra: str) -> None:
        self.database_url = database_url
        self.tmp = tmp
        self.extra = list(extra)
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.log = tmp / f"server-{self.port}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def start(self) -> None:
        env = dict(os.environ, XDG_DATA_HOME=str(self.tmp / "data"))
        cmd = [
            sys.executable,
            "-c",
            "import sys; from koikoi.cli import main; sys.exit(main())",
            "serve",
            "--port",
            str(self.port),
            "--database-url",
            self.database_url,
            "--ai-delay",
            "0",
            *self.extra,
        ]
        self.proc = subprocess.Popen(cmd, env=env, stdout=open(self.log, "ab"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"koikoi serve exited with {self.proc.returncode}: {self.log.read_text()}")
            try:
                if httpx.get(self.url + "/api/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"koikoi serve did not start: {self.log.read_text()}")

    def stop(self, *, hard: bool = True) -> None:
        if self.proc is None:
            return
        if hard:
            self.proc.kill()  # as a crash would: no clean shutdown
        else:
            self.proc.terminate()
        self.proc.wait(timeout=20)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def client(self) -> httpx.Client:
        """A browser-like client: it keeps the cookie that identifies it."""
        return httpx.Client(base_url=self.url, timeout=30)


def limit_args(**limits: object) -> list[str]:
    """``koikoi serve`` arguments setting these limits: ``limit_args(games_per_minute=3)`` is
    ``["--limit", "games_per_minute=3"]`` (see :class:`koikoi.web.limits.Limits` for the names)."""
    return [arg for name, value in limits.items() for arg in ("--limit", f"{name}={value}")]


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers",
        "limits(**limits): start the server and sqlite_server fixtures with these --limit NAME=VALUE arguments",
    )


def pytest_terminal_summary(terminalreporter) -> None:
    """The browser tests skipped for want of Chromium (test_web_browser.py's ``browser``): one line, not one each."""
    reasons = [
        r.longrepr[2].removeprefix("Skipped: ")
        for r in terminalreporter.stats.get("skipped", [])
        if isinstance(r.longrepr, tuple) and "browser tests skipped: no Chromium" in r.longrepr[2]
    ]
    if reasons:
        n = len(reasons)
        terminalreporter.write_line(f"{reasons[0]} ({n} test{'' if n == 1 else 's'})", yellow=True)


def _extra_args(request) -> list[str]:
    marker = request.node.get_closest_marker("limits")
    return limit_args(**marker.kwargs) if marker is not None else []


def make_database(kind: str, tmp: Path) -> str:
    """A fresh database of ``kind`` ("sqlite" or "postgresql"): its URL."""
    return _database(kind, tmp)


def _database(kind: str, tmp: Path) -> str:
    if kind == "sqlite":
        return str(tmp / "games.db")
    # A database of its own per test, created on the server named by KOIKOI_TEST_POSTGRES_URL.
    import sqlalchemy as sa

    from koikoi.web.store import normalise_url

    admin = sa.create_engine(normalise_url(POSTGRES_URL), isolation_level="AUTOCOMMIT")
    name = "koikoi_test_" + uuid.uuid4().hex[:12]
    with admin.connect() as conn:
        conn.execute(sa.text(f"CREATE DATABASE {name}"))
    admin.dispose()
    base = sa.engine.make_url(normalise_url(POSTGRES_URL))
    return base.set(database=name).render_as_string(hide_password=False)


@pytest.fixture(params=DATABASES)
def database_url(request, tmp_path) -> str:
    return _database(request.param, tmp_path)


@pytest.fixture
def server(request, database_url, tmp_path):
    s = Server(database_url, tmp_path, *_extra_args(request))
    s.start()
    yield s
    s.stop(hard=False)


@pytest.fixture
def sqlite_server(request, tmp_path):
    s = Server(str(tmp_path / "games.db"), tmp_path, *_extra_args(request))
    s.start()
    yield s
    s.stop(hard=False)


def ws_json(ws) -> dict:
    """The next message on a websockets connection, as JSON."""
    return json.loads(ws.recv(timeout=30))
