"""The store's calls, made off the event loop: a few threads, a deadline for each caller, and a verdict on
whether the database answers.

The event loop serves every game of the process, so it never waits on the database itself: each call to
the :class:`~koikoi.web.store.Store` runs on one of a bounded set of threads (one on SQLite, which has one
writer anyway), and the coroutine that asked waits at most ``wait`` seconds for it. While the database
does not answer (a stalled or restarting server, a lost network), callers get :class:`Unavailable` (the
``unavailable`` code, 503) instead of a frozen process; once a call has been running for
:data:`STUCK_SECONDS`, new ones are refused at once rather than queued behind it, and at most
``max_pending`` calls are ever waiting. A call whose caller gave up still finishes when the database comes back: a write
that was in doubt then lands (or fails) and whoever submitted it learns which (:meth:`Database.submit`);
and those refused meanwhile are told (:attr:`Database.on_return`), so that they try again at once.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError, SQLAlchemyError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from .errors import GameError
from .store import Store

__all__ = ["Database", "Unavailable", "THREADS_POSTGRES"]

log = logging.getLogger("koikoi.web")

T = TypeVar("T")

# PostgreSQL serves several connections at once; the store's pool holds 10 (and 20 more at peaks), so
# these threads never wait for a connection of their own. Few: a call is mostly the interpreter's work
# (SQLAlchemy, psycopg), which one thread at a time does, and more threads only fight over it.
THREADS_POSTGRES = 3
# A call the database has been at for this long means it is not answering (a move takes milliseconds):
# from then on new calls are refused at once, so that few writes are left in doubt when it comes back.
STUCK_SECONDS = 0.5


class Unavailable(GameError):
    """The database does not answer now: nothing was done, or a write is in doubt until it does."""

    def __init__(self, message: str) -> None:
        super().__init__("unavailable", message, 503)


class Database:
    """Runs the store's methods on threads of their own; use from the event loop only."""

    def __init__(self, store: Store, *, wait: float = 2.0, max_pending: int = 2048, threads: int | None = None) -> None:
        self.store = store
        self.wait = wait
        self.max_pending = max_pending
        self.threads = 1 if store.is_sqlite else threads or THREADS_POSTGRES
        self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="koikoi-db")
        self._pending = 0  # calls submitted and not yet finished (queued or running)
        # call number -> when a thread began it, while it runs there (written by the threads themselves)
        self._running: dict[int, float] = {}
        self._calls = 0
        self.failed_at: float | None = None  # when the last call failed for want of a database
        self.last_error = ""
        self.answered_at: float | None = None  # when the last call came back fine
        # Called (on the event loop) when a call comes back fine after some caller was told Unavailable:
        # whoever was refused may try again now rather than on a timer of their own.
        self.on_return: list[Callable[[], None]] = []
        self._owed = False  # a caller was refused, and the database has not answered since

    # -- the verdict ------------------------------------------------------------------------------------

    def stuck_for(self) -> float:
        """How long the call that a thread has been running longest has been at it (0 when none is):
        time spent queued behind other calls does not count, only time the database took."""
        running = list(self._running.values())
        if not running:
            return 0.0
        return time.monotonic() - min(running)

    @property
    def stuck(self) -> bool:
        """Whether a call has been running longer than :data:`STUCK_SECONDS`: the database is not
        answering (a move takes milliseconds), and new calls are refused rather than queued behind it."""
        return self.stuck_for() > min(self.wait, STUCK_SECONDS)

    @property
    def reachable(self) -> bool:
        """False while calls are stuck, or since the last call failed to reach it."""
        if self.stuck:
            return False
        if self.failed_at is not None and (self.answered_at is None or self.answered_at < self.failed_at):
            return False
        return True

    def state(self) -> dict[str, Any]:
        """For ``/api/health``: whether the database answers, and why not; never waits on it."""
        out: dict[str, Any] = {"reachable": self.reachable, "pending": self._pending}
        if self.stuck:
            out["problem"] = f"no answer for {self.stuck_for():.1f} s"
        elif not out["reachable"]:
            out["problem"] = self.last_error
        return out

    # -- calls ------------------------------------------------------------------------------------------

    def submit(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> asyncio.Future[T]:
        """Start ``fn(*args, **kwargs)`` on a database thread; its future, which the caller may stop
        waiting for (the call still runs to its end). :class:`Unavailable` at once, and nothing
        started, when calls are stuck past the deadline or too many wait."""
        if self.stuck:
            self._owed = True
            raise Unavailable(f"the database has not answered for {self.stuck_for():.1f} s: try again in a moment")
        if self._pending >= self.max_pending:
            self._owed = True
            raise Unavailable(f"{self._pending} calls are waiting for the database: try again in a moment")
        self._calls += 1
        call = self._calls
        self._pending += 1
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._pool, functools.partial(self._run, call, fn, args, kwargs))
        future.add_done_callback(self._finished)
        return future

    def _run(self, call: int, fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:
        # On a database thread.
        self._running[call] = time.monotonic()
        try:
            return _once_more_if_dropped(fn, args, kwargs)
        finally:
            self._running.pop(call, None)

    def _finished(self, future: asyncio.Future[Any]) -> None:
        self._pending -= 1
        if future.cancelled():
            return
        e = future.exception()  # retrieved here, so a call nobody waits for any more is never "unhandled"
        if e is None or not away(e):
            self.answered_at = time.monotonic()
            if self._owed and not self.stuck:  # it answers again, and no other call is still stuck
                self._owed = False
                for tell in self.on_return:
                    tell()
            return
        self.failed_at = time.monotonic()
        self.last_error = _first_line(e)

    async def __call__(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` on a database thread; :class:`Unavailable` if the database does not
        answer within the deadline or cannot be reached."""
        return await self.wait_for(self.submit(fn, *args, **kwargs))

    async def wait_for(self, future: asyncio.Future[T]) -> T:
        """The result of a :meth:`submit`-ted call, waited for at most ``wait`` seconds."""
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.wait)
        except TimeoutError:
            self._owed = True
            raise Unavailable(f"the database did not answer within {self.wait:g} s: try again in a moment") from None
        except SQLAlchemyError as e:
            if away(e):
                self._owed = True
                raise Unavailable(f"the database cannot be reached: {_first_line(e)}") from None
            raise

    def close(self) -> None:
        # Threads stuck on a database that does not answer are left to end with the process.
        self._pool.shutdown(wait=False, cancel_futures=True)


def _once_more_if_dropped(fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:
    """``fn(*args, **kwargs)``, and once more if it failed on a connection the database had dropped (after
    a restart of PostgreSQL, every pooled connection is dead; SQLAlchemy then discards them all, and the
    second try gets a fresh one). This replaces a ping before every call. A write whose connection died
    after it was sent may have landed: its second try then fails on the move's key, which the caller
    takes for a move already stored."""
    try:
        return fn(*args, **kwargs)
    except DBAPIError as e:
        if not e.connection_invalidated:
            raise
    return fn(*args, **kwargs)


def away(e: BaseException) -> bool:
    """Whether ``e`` says the database could not be reached or did not answer, rather than refused
    something (a conflict, bad data: those are the caller's to handle)."""
    # A lost or refused connection, a server shutting down or locked (SQLite), no connection free in time.
    return isinstance(e, (OperationalError, InterfaceError, DisconnectionError, PoolTimeout))


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:200] if text else ''}"
