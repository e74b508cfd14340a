"""Fixtures for the whole suite, and for the web app's tests: a real ``koikoi serve`` process on a real
socket and database, and a real Chromium.

The server runs as a child process (so a test can kill and restart it mid-game) on a loopback port of
its own. The database is a fresh SQLite file, and also PostgreSQL when ``KOIKOI_TEST_POSTGRES_URL`` names
a server (``.ci/run`` starts one); each PostgreSQL test gets a database of its own.

The suite runs in parallel (pytest-xdist, ``-n`` in pyproject.toml) and in random order (pytest-randomly),
so nothing here may be shared between two tests that could run at once: every worker takes its ports
from a range of its own, every test's files live under its own ``tmp_path``, and ``$XDG_DATA_HOME`` (where
the CLI saves games and the server its default database) is a folder of the worker's, never the home.

Markers, set here from the fixtures a test uses (or by a module that starts its own processes):
``browser`` (starts Chromium) and ``server`` (starts a ``koikoi serve`` or another server process).
``pytest -m "not browser and not server"`` is the quick loop for people changing the code.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import shutil
import socket
import ssl
import time
import uuid
from pathlib import Path

import httpx
import pytest
from serverfork import ServeProcess

POSTGRES_URL = os.environ.get("KOIKOI_TEST_POSTGRES_URL")
SRC = Path(__file__).resolve().parent.parent / "src"
# Every process a test starts (servers, their workers, the CLI) runs this checkout's code, whatever
# `pip install -e` last pointed the installed package at.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))
DATABASES = ["sqlite"] + (["postgresql"] if POSTGRES_URL else [])


# Ports below the kernel's ephemeral range (32768 and up on Linux): no outgoing connection is handed one of
# them, and each xdist worker counts through a block of its own, so two tests running at once never pick the
# same port between looking at it and the server binding it (port 0's answer can be handed out again at once).
_PORT_BLOCK = 1500
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
_WORKER_INDEX = int(_WORKER.removeprefix("gw")) if _WORKER.removeprefix("gw").isdigit() else 0
_ports = itertools.cycle(
    range(20000 + (_WORKER_INDEX % 8) * _PORT_BLOCK, 20000 + (_WORKER_INDEX % 8 + 1) * _PORT_BLOCK)
)


def free_port() -> int:
    """A loopback port nobody listens on, from this worker's own block."""
    for _ in range(_PORT_BLOCK):
        port = next(_ports)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:  # taken, or still in TIME_WAIT from an earlier server: the next one
                continue
            return port
    raise RuntimeError(f"no free loopback port in this worker's block of {_PORT_BLOCK}")


# The servers speak plain HTTP: a client needs no certificate store, and building one (what httpx does for
# each new client by default) costs tens of milliseconds of CPU, which added up to most of a worker's time
# when a client was made for every look at whether a server had started.
NO_TLS = ssl.create_default_context()
# A client lets an idle connection go well before the server does (its keep_alive limit: 5 s). With both at
# 5 s (httpx's default), a request sent on a connection just as the server closed it was reset by the peer.
KEEP_ALIVE = httpx.Limits(keepalive_expiry=2.0)


class Server:
    """``koikoi serve`` in a process of its own; ``restart()`` stops it hard and starts it on the same database."""

    def __init__(self, database_url: str, tmp: Path, *extra: str) -> None:
        self.database_url = database_url
        self.tmp = tmp
        self.extra = list(extra)
        self.port = free_port()
        self.proc: ServeProcess | None = None
        self.log = tmp / f"server-{self.port}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def start(self) -> None:
        test = _running[0]
        if test is not None and test.get_closest_marker("server") is None:
            raise RuntimeError(
                f"{test.nodeid} starts a koikoi serve and is not marked: add @pytest.mark.server, so that the "
                'quick loop (-m "not browser and not server") leaves it out'
            )
        env = dict(os.environ, XDG_DATA_HOME=str(self.tmp / "data"))
        argv = ["serve", "--port", str(self.port), "--database-url", self.database_url, "--ai-delay", "0", *self.extra]
        # Forked from a process that imported the web app once (serverfork.py): a real server process, on
        # SQLite or PostgreSQL, without a second of imports at every start.
        self.proc = ServeProcess(argv, env, str(self.log))
        _live_servers.append(self)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"koikoi serve exited with {self.proc.returncode}: {self.log.read_text()}")
            if self._listening():
                try:
                    with httpx.Client(timeout=5, verify=NO_TLS) as c:
                        if c.get(self.url + "/api/health").status_code == 200:
                            return
                except httpx.HTTPError:
                    pass
            time.sleep(0.02)
        raise RuntimeError(f"koikoi serve did not start: {self.log.read_text()}")

    def _listening(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True
        except OSError:
            return False

    def stop(self, *, hard: bool = True) -> None:
        if self.proc is None:
            return
        if hard:
            self.proc.kill()  # as a crash would: no clean shutdown
        else:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except TimeoutError as e:
            # A server that does not stop on SIGTERM is a bug to understand: say what its log said, and do
            # not leave it running for the rest of the run.
            self.proc.kill()
            self.proc.wait(timeout=20)
            tail = self.log.read_text(errors="replace")[-4000:] if self.log.exists() else "(no log)"
            raise TimeoutError(f"{e}; its log's last lines:\n{tail}") from None
        finally:
            if self.proc is not None and self.proc.poll() is not None:
                self.proc = None
                if self in _live_servers:
                    _live_servers.remove(self)

    def restart(self) -> None:
        self.stop()
        self.start()

    def client(self) -> httpx.Client:
        """A browser-like client: it keeps the cookie that identifies it."""
        return httpx.Client(base_url=self.url, timeout=30, verify=NO_TLS, limits=KEEP_ALIVE)


def limit_args(**limits: object) -> list[str]:
    """``koikoi serve`` arguments setting these limits: ``limit_args(games_per_minute=3)`` is
    ``["--limit", "games_per_minute=3"]`` (see :class:`koikoi.web.limits.Limits` for the names)."""
    return [arg for name, value in limits.items() for arg in ("--limit", f"{name}={value}")]


def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto``: one worker more than the cores this process may use. Many tests spend part of their
    time waiting on processes of their own (a server, Chromium, a clock running down), and a third
    worker keeps both cores of the reference machine busy meanwhile (the suite: 740 s with two workers,
    598 s with three)."""
    return len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) + 1


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers",
        "limits(**limits): start the server and sqlite_server fixtures with these --limit NAME=VALUE arguments",
    )
    config.addinivalue_line("markers", "browser: the test starts Chromium (set from the fixtures it uses)")
    config.addinivalue_line(
        "markers", "server: the test starts a koikoi serve, or another server process (PostgreSQL, a bot host)"
    )


# Fixtures that start a server process, and the browser's; a module whose tests start servers of their own
# says so with ``pytestmark = pytest.mark.server``.
SERVER_FIXTURES = {
    *("server", "sqlite_server", "shared_server", "slow_server", "web", "limited", "served", "clocked", "claims"),
    *("two", "workers", "moved_server", "own_postgres"),
}


def pytest_collection_modifyitems(items) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if "browser" in names:
            item.add_marker(pytest.mark.browser)
        if names & SERVER_FIXTURES or "browser" in names:
            item.add_marker(pytest.mark.server)


# The test running now, for Server.start's check of its mark (None between tests and while a module's
# fixtures are made).
_running: list[pytest.Item | None] = [None]


# What a failed test leaves behind for its report (pytest_runtest_makereport): the servers and the browser
# windows open in this worker when it failed.
_live_servers: list[Server] = []
_live_contexts: list = []

# A table page's own state, read when a test fails: what it has taken from the server, whether its socket
# is open, what stands in the way of its next move. (Each read is guarded: other pages lack these names.)
PAGE_STATE = """() => { const g = (f) => { try { return f(); } catch (e) { return null; } };
    return { path: location.pathname, seq: document.body.dataset.seq ?? null, classes: document.body.className,
        truth: g(() => truth && { seq: truth.seq, hand: truth.hand_number, to_move: truth.to_move,
            phase: truth.phase, legal: truth.legal.length, match_over: truth.match_over }),
        latest: g(() => latestSeq), backlog: g(() => backlog), pending: g(() => pending),
        socket: g(() => ws.readyState), dialog: document.querySelector('dialog[open]')?.id ?? null,
        status: document.getElementById('status')?.textContent ?? null }; }"""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test's report says what its servers and pages were doing: a failure seen once in CI can be
    understood from its report alone (the temporary files are gone by then)."""
    report = yield
    if report.when == "call" and report.failed:
        for server in _live_servers:
            report.sections.append((f"koikoi serve on port {server.port}", _server_state(server)))
        pages = [page for context in _live_contexts for page in context.pages]
        if pages:
            report.sections.append(("the pages", "\n".join(_page_state(page) for page in pages)))
    return report


def _server_state(server: Server) -> str:
    try:
        with httpx.Client(timeout=3, verify=NO_TLS) as c:
            health = c.get(server.url + "/api/health").text
    except httpx.HTTPError as e:
        health = f"no answer: {e!r}"
    try:
        tail = server.log.read_text(errors="replace").splitlines()[-30:]
    except OSError as e:
        tail = [f"no log: {e}"]
    return "/api/health: " + health + "\nthe log's last lines:\n" + "\n".join(tail)


def _page_state(page) -> str:
    try:
        return f"{page.url}: {json.dumps(page.evaluate(PAGE_STATE))}"
    except Exception as e:  # noqa: BLE001  (a page closed, crashed or navigating says so instead)
        return f"{page.url}: could not be read ({str(e).splitlines()[0]})"


@pytest.fixture(autouse=True)
def _the_running_test(request):
    _running[0] = request.node
    yield
    _running[0] = None


@pytest.fixture(scope="session", autouse=True)
def _own_data_home(tmp_path_factory):
    """The worker's own ``$XDG_DATA_HOME``: no test reads or writes the user's saved games or database."""
    os.environ["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("xdg-data"))


def pytest_terminal_summary(terminalreporter, config) -> None:
    """The browser tests skipped for want of Chromium (test_web_browser.py's ``browser``): one line, not one each."""
    reasons = [
        r.longrepr[2].removeprefix("Skipped: ")
        for r in terminalreporter.stats.get("skipped", [])
        if isinstance(r.longrepr, tuple) and "browser tests skipped: no Chromium" in r.longrepr[2]
    ]
    if reasons:
        n = len(reasons)
        terminalreporter.write_line(f"{reasons[0]} ({n} test{'' if n == 1 else 's'})", yellow=True)
    # The order was random (pytest-randomly; -q hides its header line): how to run this order again.
    seed = getattr(config.option, "randomly_seed", None)
    if isinstance(seed, int) and not getattr(config.option, "randomly_dont_reorganize", False):
        terminalreporter.write_line(f"tests ran in a random order: --randomly-seed={seed} repeats it")


def _extra_args(request) -> list[str]:
    marker = request.node.get_closest_marker("limits")
    return limit_args(**marker.kwargs) if marker is not None else []


def make_database(kind: str, tmp: Path) -> str:
    """A fresh, empty database of ``kind`` ("sqlite" or "postgresql"): its URL."""
    return _database(kind, tmp)


def _database(kind: str, tmp: Path, *, migrated: bool = False) -> str:
    """A database of its own for one test: empty, or (``migrated``, on PostgreSQL) a copy of the worker's
    template, which the server's own upgrade brought to the head revision once (see :func:`_template`)."""
    if kind == "sqlite":
        return str(tmp / "games.db")  # SQLite's migrations cost a start next to nothing: no template
    # A database of its own per test, created on the server named by KOIKOI_TEST_POSTGRES_URL.
    import sqlalchemy as sa

    from koikoi.web.store import normalise_url

    admin = sa.create_engine(normalise_url(POSTGRES_URL), isolation_level="AUTOCOMMIT")
    name = "koikoi_test_" + uuid.uuid4().hex[:12]
    with admin.connect() as conn:
        conn.execute(sa.text(f"CREATE DATABASE {name}" + (f" TEMPLATE {_template()}" if migrated else "")))
    admin.dispose()
    base = sa.engine.make_url(normalise_url(POSTGRES_URL))
    return base.set(database=name).render_as_string(hide_password=False)


# The PostgreSQL databases of the ``server`` fixture are copies of a template migrated once per worker: a
# server started on an empty PostgreSQL database runs every migration first, 0.23 s more CPU a start
# (0.80 s against 0.57 s, server and database together), and the fixture starts some 75 of them a run.
# make_database, and database_url without a server, still give empty databases (the migrations' tests).
_TEMPLATE: list[str] = []


def _template() -> str:
    """The worker's template database's name (made on first use, by the server's own upgrade)."""
    if not _TEMPLATE:
        import sqlalchemy as sa

        from koikoi.web.store import Store

        url = _database("postgresql", Path("."))
        Store(url).close()  # no connection left on it: CREATE DATABASE ... TEMPLATE needs none
        _TEMPLATE.append(str(sa.engine.make_url(url).database))
    return _TEMPLATE[0]


# Debian's chromium-headless-shell first: Chromium's own headless build, the one Playwright drives by default.
# It has no browser window to keep and costs a third less CPU than the full browser run headless (tests
# of test_web_table and test_web_pages, -n 2: 148.5 s of the machine's CPU with /usr/bin/chromium, 99.5 s
# with the shell); the full browser is used where the shell is not installed.
CHROMIUM = (
    os.environ.get("KOIKOI_CHROMIUM")
    or shutil.which("chromium-headless-shell")
    or shutil.which("chromium")
    or shutil.which("chromium-browser")
)
NO_CHROMIUM = "browser tests skipped: no Chromium"


# Playwright's sync API runs its event loop in a greenlet of the main thread, and while Chromium is open
# that loop counts as this thread's running loop: a test that then calls ``asyncio.run`` would be refused
# ("cannot be called from a running event loop"). So one Chromium serves all of a worker's browser tests,
# and every other test runs with the loop set aside (pytest_runtest_protocol below), as if no browser were
# open; only browser tests, and the browser's own start and stop, see it. A Chromium per module instead
# was started again whenever xdist handed a worker tests of two modules in turn: 227 launches in one run,
# about 170 s of CPU.
_PLAYWRIGHT_LOOP: list[asyncio.AbstractEventLoop | None] = [None]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    loop = _PLAYWRIGHT_LOOP[0]
    if loop is None or item.get_closest_marker("browser") is not None:
        return (yield)
    asyncio._set_running_loop(None)
    try:
        return (yield)
    finally:
        asyncio._set_running_loop(_PLAYWRIGHT_LOOP[0])  # None if the browser stopped meanwhile (the last test)


@pytest.fixture(scope="session")
def chromium():
    """One Chromium for the worker's browser tests (tests use ``browser``). Without Chromium the test is
    skipped, or fails where ``KOIKOI_REQUIRE_BROWSER=1``."""
    if not CHROMIUM or not os.access(CHROMIUM, os.X_OK):
        where = f" at {CHROMIUM}" if CHROMIUM else ""
        if os.environ.get("KOIKOI_REQUIRE_BROWSER") == "1":
            pytest.fail(
                f"Chromium is needed for the browser tests (KOIKOI_REQUIRE_BROWSER=1) and is not{where}: "
                "apt install chromium-headless-shell (or chromium, or set KOIKOI_CHROMIUM)"
            )
        # pytest_terminal_summary sums these skips up in one line at the end of the run.
        how = "apt install chromium-headless-shell (or chromium, or set KOIKOI_CHROMIUM)"
        pytest.skip(f"{NO_CHROMIUM}{where}: {how} to run them")
    from playwright.sync_api import sync_playwright

    p = sync_playwright().start()
    loop = _PLAYWRIGHT_LOOP[0] = asyncio.get_running_loop()
    try:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield b
        finally:
            # The session ends in the last test's teardown, which may be another test's: the loop put back.
            asyncio._set_running_loop(loop)
            b.close()
    finally:
        asyncio._set_running_loop(loop)
        _PLAYWRIGHT_LOOP[0] = None
        p.stop()


class TestBrowser:
    """The worker's Chromium as one test sees it: every context (a private window, with its own cookies and
    storage) that the test opens is closed when the test ends, so that no page of an earlier test goes on
    running its timers and sockets beside a later one."""

    __test__ = False  # not a test class, whatever its name

    def __init__(self, browser) -> None:
        self._browser = browser
        self._contexts: list = []

    def new_context(self, **kw):
        context = self._browser.new_context(**kw)
        _live_contexts.append(context)
        self._contexts.append(context)
        return context

    def new_page(self, **kw):
        return self.new_context(**kw).new_page()

    def __getattr__(self, name: str):
        return getattr(self._browser, name)

    def close_all(self) -> None:
        for context in self._contexts:
            try:
                context.close()
            except Exception:  # noqa: BLE001  (already closed by the test, or the browser is gone)
                pass
            if context in _live_contexts:
                _live_contexts.remove(context)
        self._contexts.clear()


@pytest.fixture
def browser(chromium):
    """The browser a test opens its pages in (see :class:`TestBrowser`)."""
    b = TestBrowser(chromium)
    yield b
    b.close_all()


@pytest.fixture(params=DATABASES)
def database_url(request, tmp_path) -> str:
    # The database the test's ``server`` serves is migrated already (the template); without one, empty.
    return _database(request.param, tmp_path, migrated="server" in request.fixturenames)


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


@pytest.fixture
def web(sqlite_server):
    """The server a browser test plays on."""
    return sqlite_server


@pytest.fixture
def sockets():
    """For WebSocket connections that a test opens and closes at moments of its own rather than in one
    ``with`` block: ``ws = sockets.enter_context(connect(url))``. (websockets' ``connect()`` is a context
    manager; one not entered is deprecated.) Whatever is still open is closed when the test ends."""
    with contextlib.ExitStack() as stack:
        yield stack


def ws_json(ws) -> dict:
    """The next message on a websockets connection, as JSON."""
    return json.loads(ws.recv(timeout=30))
