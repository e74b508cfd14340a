"""``koikoi serve`` processes forked from one that has already imported the web app.

A server started the plain way (a new Python running ``koikoi serve``) spends a second or more of CPU
importing FastAPI, SQLAlchemy, uvicorn and the app before it serves anything, and the suite starts several
hundred. Here each server is forked by a multiprocessing fork server that imported them once: the same
``koikoi.cli.main(["serve", ...])`` in a process of its own, on a real socket and database, that a test
stops or kills (SIGKILL, as a crash) like any other; only the imports are shared. A test of how the
command itself starts from a shell (its messages, a reinstall under it, ``--workers``' own children) runs
``koikoi`` as a program instead.

This module is imported by the fork server too, so it imports nothing heavy at its top.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
import os
import sys
from collections.abc import Mapping, Sequence

# What the fork server imports once, before it forks any server (serverwarm: what a start imports lazily,
# and a migrated SQLite template).
PRELOAD = ["koikoi.cli", "koikoi.cli.serve", "koikoi.web.app", "koikoi.web.server", "serverfork", "serverwarm"]

_context: multiprocessing.context.ForkServerContext | None = None


def _serve(argv: Sequence[str], env: Mapping[str, str], log: str) -> None:
    """In the forked process: the log as its stdout and stderr, the test's environment, then the command."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.environ.clear()
    os.environ.update(env)
    _from_template(argv)
    from koikoi.cli import main

    code = main(list(argv))
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(code)


def _from_template(argv: Sequence[str]) -> None:
    """A new SQLite database (a plain path, no file there yet) starts as a copy of the migrated template."""
    import shutil

    import serverwarm  # imported already, in the fork server

    if "--database-url" not in argv or not serverwarm.TEMPLATE:
        return
    path = argv[argv.index("--database-url") + 1]
    if "://" in path or os.path.exists(path) or not os.path.isdir(os.path.dirname(path) or "."):
        return
    shutil.copyfile(serverwarm.TEMPLATE, path)


def _start_fork_server() -> None:
    """Start the fork server with this folder on its path. It imports PRELOAD before anything sets its
    ``sys.path`` (Python 3.11's fork server is handed the parent's path and does not use it), and a
    module it cannot import it leaves out without a word: without this, every server imported serverwarm
    itself, migrating a template of its own at each start."""
    import multiprocessing.forkserver

    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.dirname(os.path.abspath(__file__)), before]))
    try:
        multiprocessing.forkserver.ensure_running()
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before


class ServeProcess:
    """A forked ``koikoi serve``, with the part of :class:`subprocess.Popen`'s interface the tests use."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], log: str) -> None:
        global _context
        if _context is None:
            _context = multiprocessing.get_context("forkserver")
            _context.set_forkserver_preload(PRELOAD)
            _start_fork_server()
        # Not a daemon: a server may start processes of its own (the computer players'), which
        # multiprocessing forbids a daemon.
        self._process = _context.Process(target=_serve, args=(list(argv), dict(env), log), daemon=False)
        self._process.start()
        self.pid: int = self._process.pid  # type: ignore[assignment]

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode

    def poll(self) -> int | None:
        return self._process.exitcode

    def kill(self) -> None:
        self._process.kill()

    def terminate(self) -> None:
        self._process.terminate()

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise TimeoutError(f"koikoi serve (pid {self.pid}) did not end within {timeout} s")
        return self._process.exitcode
