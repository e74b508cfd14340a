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

Two kinds of call share the threads. A player's move, and everything else by default, comes first. A
table read for a socket that has just opened (:meth:`Database.queued`: after a restart, every player of
the process reconnects at once) waits its turn behind them, and while the database answers it may wait
up to :data:`QUEUE_SECONDS` in the queue without being refused: a burst of reconnections is served at
the rate the threads serve it, instead of being refused after ``wait`` and coming back as a storm of
retries, and the games already at their tables play on meanwhile.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
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
# A call of :meth:`Database.queued` (a table read for a socket that has just opened) may wait this long
# in all while the database answers.
QUEUE_SECONDS = 30.0
# At most this many such calls wait at once (each is a socket's first table): past it, refused at once.
MAX_QUEUED = 1024

FIRST, LATER = 0, 1  # the two kinds of call, in the order the threads take them


class Unavailable(GameError):
    """The database does not answer now: nothing was done, or a write is in doubt until it does."""

    def __init__(self, message: str) -> None:
        super().__init__("unavailable", message, 503)


class Database:
    """Runs the store's methods on threads of their own; use from the event loop only."""

    def __init__(
        self,
        store: Store,
        *,
        wait: float = 2.0,
        max_pending: int = 2048,
        threads: int | None = None,
        queue_wait: float = QUEUE_SECONDS,
        max_queued: int = MAX_QUEUED,
    ) -> None:
        self.store = store
        self.wait = wait
        self.queue_wait = queue_wait
        self.max_pending = max_pending
        self.max_queued = max_queued
        self.threads = 1 if store.is_sqlite else threads or THREADS_POSTGRES
        # (kind, call number, work): the threads take the first kind first, each kind in its order.
        self._queue: queue.PriorityQueue[tuple[int, int, _Work | None]] = queue.PriorityQueue()
        self._workers = [
            threading.Thread(target=self._serve, name=f"koikoi-db-{i}", daemon=True) for i in range(self.threads)
        ]
        for t in self._workers:
            t.start()
        self._closed = False
        self._pending = 0  # calls submitted and not yet finished (queued or running)
        self._queued = 0  # of them, calls of the LATER kind
        # call number -> when a thread began it, while it runs there (written by the threads themselves)
        self._running: dict[int, float] = {}
        self._calls = itertools.count(1)
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
        """Start ``fn(*args, **kwargs)`` on a database thread, before any :meth:`queued` call that waits;
        its future, which the caller may stop waiting for (the call still runs to its end).
        :class:`Unavailable` at once, and nothing started, when calls are stuck past the deadline or too
        many wait."""
        future: asyncio.Future[T] = self._submit(FIRST, fn, args, kwargs).future
        return future

    def check(self) -> None:
        """:class:`Unavailable` when a call made now would be refused (as :meth:`submit` would refuse it)."""
        if self.stuck:
            self._owed = True
            raise Unavailable(f"the database has not answered for {self.stuck_for():.1f} s: try again in a moment")
        if self._pending >= self.max_pending:
            self._owed = True
            raise Unavailable(f"{self._pending} calls are waiting for the database: try again in a moment")
        if self._closed:
            raise Unavailable("the server is stopping")

    def _submit(self, kind: int, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Work:
        self.check()
        loop = asyncio.get_running_loop()
        work = _Work(next(self._calls), kind, fn, args, kwargs, loop, loop.create_future())
        self._pending += 1
        if kind == LATER:
            self._queued += 1
        work.future.add_done_callback(lambda f: self._finished(work, f))
        self._queue.put((kind, work.call, work))
        return work

    def _serve(self) -> None:
        # A database thread: the calls in the queue's order, until a None says stop.
        while True:
            _kind, _call, work = self._queue.get()
            if work is None:
                return
            self._running[work.call] = time.monotonic()
            try:
                result = _once_more_if_dropped(work.fn, work.args, work.kwargs)
            except BaseException as e:  # for the caller, on the event loop
                work.answer(None, e)
            else:
                work.answer(result, None)
            finally:
                self._running.pop(work.call, None)

    def _finished(self, work: _Work, future: asyncio.Future[Any]) -> None:
        self._pending -= 1
        if work.kind == LATER:
            self._queued -= 1
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

    async def queued(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on a database thread once the calls that come first (:meth:`submit`) are served:
        a table read for a socket that has just opened. It waits, in the queue and on its thread, up to
        ``queue_wait`` while the database answers (some call comes back at least every ``wait``
        seconds: on a loaded machine one call may run long while the others go through); it is refused
        (:class:`Unavailable`) once no call has come back for ``wait``, or the last one failed for want
        of the database, and at once past ``max_queued`` such calls."""
        if self._queued >= self.max_queued:
            self._owed = True
            raise Unavailable(f"{self._queued} tables are waiting to be read: try again in a moment")
        future: asyncio.Future[T] = self._submit(LATER, fn, args, {}).future
        queued_at = time.monotonic()
        while True:  # woken when the answer comes, or when one of the limits may have been reached
            now = time.monotonic()
            waited = now - queued_at
            silent = now - max(self.answered_at or queued_at, queued_at)  # since a call last came back
            failing = self.failed_at is not None and (self.answered_at is None or self.answered_at < self.failed_at)
            left = min(self.queue_wait - waited, self.wait - silent, self.wait - waited if failing else self.wait)
            if left <= 0:
                break
            try:
                return await self._result(future, left)
            except TimeoutError:
                continue
        self._owed = True
        if waited >= self.queue_wait:
            raise Unavailable(f"the table waited {waited:.0f} s to be read: try again in a moment")
        raise Unavailable(f"the database did not answer within {self.wait:g} s: try again in a moment")

    async def _result(self, future: asyncio.Future[T], timeout: float) -> T:
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except SQLAlchemyError as e:
            if away(e):
                self._owed = True
                raise Unavailable(f"the database cannot be reached: {_first_line(e)}") from None
            raise

    async def wait_for(self, future: asyncio.Future[T]) -> T:
        """The result of a :meth:`submit`-ted call, waited for at most ``wait`` seconds."""
        try:
            return await self._result(future, self.wait)
        except TimeoutError:
            self._owed = True
            raise Unavailable(f"the database did not answer within {self.wait:g} s: try again in a moment") from None

    def close(self) -> None:
        """Stop the threads once they finish what they run; calls still queued are cancelled. Threads
        stuck on a database that does not answer are left to end with the process (they are daemons)."""
        self._closed = True
        while True:
            try:
                _kind, _call, work = self._queue.get_nowait()
            except queue.Empty:
                break
            if work is not None:
                work.cancel()
        for i, _ in enumerate(self._workers):
            self._queue.put((LATER + 1, i, None))


class _Work:
    """One call for a database thread, and the event loop's future its answer goes to."""

    __slots__ = ("call", "kind", "fn", "args", "kwargs", "loop", "future")

    def __init__(
        self,
        call: int,
        kind: int,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        loop: asyncio.AbstractEventLoop,
        future: asyncio.Future[Any],
    ) -> None:
        self.call, self.kind, self.fn, self.args, self.kwargs = call, kind, fn, args, kwargs
        self.loop, self.future = loop, future

    def __lt__(self, other: _Work) -> bool:  # never compared: (kind, call) is unique; for the type checker
        return self.call < other.call

    def answer(self, result: Any, error: BaseException | None) -> None:
        """On the database thread: hand the answer to the event loop (gone if the server stopped)."""
        try:
            self.loop.call_soon_threadsafe(self._settle, result, error)
        except RuntimeError:  # the event loop is closed: nobody waits any more
            pass

    def _settle(self, result: Any, error: BaseException | None) -> None:
        if self.future.done():  # cancelled (the server stops)
            return
        if error is not None:
            self.future.set_exception(error)
        else:
            self.future.set_result(result)

    def cancel(self) -> None:
        try:
            self.loop.call_soon_threadsafe(self.future.cancel)
        except RuntimeError:
            pass


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
