"""``koikoi serve --workers N``: N server processes on one listening socket, on one PostgreSQL database.

The supervisor binds the address once and starts N worker processes (``python -m koikoi.web.supervisor``)
that inherit the socket: the kernel hands each new connection to one of them. Every worker is a whole
server (its own games in memory, its own computer players) and they keep in step through the database
(:mod:`koikoi.web.fanout`). Each worker has a slot 0..N-1 and a Unix socket in a directory private to
the supervisor, through which a game's WebSockets reach the worker that owns the game
(:mod:`koikoi.web.siblings`). A worker that dies is started again in its slot; its players' pages
reconnect, land on another worker and go on, and a computer move it was thinking about is taken over
(docs/web.md, "Scaling out"). SIGTERM or Ctrl+C stops them all.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

__all__ = ["run_workers", "bind"]

log = logging.getLogger("koikoi.web")

_ENV = "KOIKOI_SERVE_WORKER"  # the worker's settings, as JSON


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, as uvicorn would make it (IPv6 for a host with ':', SO_REUSEADDR)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def run_workers(settings: dict[str, Any], *, host: str, port: int, workers: int) -> int:
    """Serve with ``workers`` processes until SIGTERM/SIGINT; ``settings`` are create_app's and run's."""
    sock = bind(host, port)
    siblings = _private_directory()
    # Each slot its own settings: a worker restarted in a slot is that slot's worker again.
    shared = {**settings, "fd": sock.fileno(), "workers": workers, "siblings": siblings}
    envs = [dict(os.environ, **{_ENV: json.dumps({**shared, "slot": i})}) for i in range(workers)]
    cmd = [sys.executable, "-m", "koikoi.web.supervisor"]
    procs: list[subprocess.Popen[bytes] | None] = [None] * workers
    started = [0.0] * workers
    stopping = False

    def stop(_signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True

    old_term = signal.signal(signal.SIGTERM, stop)
    old_int = signal.signal(signal.SIGINT, stop)
    try:
        while not stopping:
            for i, p in enumerate(procs):
                if p is not None and p.poll() is None:
                    continue
                if p is not None:
                    print(f"worker {p.pid} ended ({p.returncode}); starting another", file=sys.stderr, flush=True)
                # One start a second at most per slot, so a worker that cannot start does not spin.
                wait = started[i] + 1.0 - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                procs[i] = subprocess.Popen(cmd, env=envs[i], pass_fds=(sock.fileno(),))
                started[i] = time.monotonic()
            time.sleep(0.2)
    finally:
        signal.signal(signal.SIGTERM, old_term)
        signal.signal(signal.SIGINT, old_int)
        for p in procs:
            if p is not None and p.poll() is None:
                p.terminate()
        deadline = time.monotonic() + 10
        for p in procs:
            if p is None:
                continue
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        sock.close()
        shutil.rmtree(siblings, ignore_errors=True)
    return 0


def _private_directory() -> str:
    """A new directory only this user can enter (mode 0700), for the workers' Unix sockets; its name
    carries the supervisor's pid. A socket's path is at most 107 bytes: a long $TMPDIR gives way to /tmp."""
    prefix = f"koikoi-workers-{os.getpid()}-"
    parent = tempfile.gettempdir()
    if len(os.path.join(parent, prefix + "x" * 8, "worker-63.sock")) > 100:
        parent = "/tmp"
    path = tempfile.mkdtemp(prefix=prefix, dir=parent)
    os.chmod(path, 0o700)  # mkdtemp's mode already; said here because the workers' trust rests on it
    return path


def _worker() -> int:
    from .app import create_app
    from .limits import Limits
    from .server import head_bytes, run
    from .siblings import Siblings, SiblingsError

    settings = json.loads(os.environ[_ENV])
    limits = Limits().with_changes(settings["limits"])
    app = create_app(
        settings["database_url"],
        card_art=settings["card_art"],
        ai_delay=settings["ai_delay"],
        limits=limits,
        time_controls=tuple(settings.get("time_controls", ())),
        tournaments=settings.get("tournaments"),
    )
    sock = socket.socket(fileno=settings["fd"])
    siblings: Siblings | None = None
    try:
        siblings = Siblings(settings["slot"], settings["workers"], settings["siblings"], head_bytes=head_bytes(limits))
    except (SiblingsError, OSError) as e:  # serve all the same: routing saves work, it decides nothing
        log.error("worker %s serves every game's sockets itself: %s", settings["slot"], e)
    run(
        app,
        host="",
        port=0,
        limits=limits,
        forwarded_allow_ips=settings["forwarded_allow_ips"],
        sock=sock,
        siblings=siblings,
    )
    return 0


if __name__ == "__main__":
    sys.exit(_worker())
