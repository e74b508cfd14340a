"""The worker processes of one ``koikoi serve --workers N`` talking to each other over Unix sockets.

One worker owns each game (:func:`owner_of`, a stable hash of its id), and every WebSocket of that game
is served there, so that one process, not two, applies and pushes each of its moves. The kernel hands
a new connection to any worker; one that gets a game's socket it does not own passes the connection
itself to the owner (the socket's file descriptor and the request bytes already read, over the owner's
Unix socket) and lets go of it. The owner serves it as if it had accepted it. Where the owner cannot be
reached (it is restarting, or its queue is full), the worker serves the socket itself: any process can
serve any game through the database, so routing saves work and never decides what is right.

The same sockets answer a request for a worker's health, so that any worker can report all of them.

Each worker listens on ``<directory>/worker-<slot>.sock``, a ``SOCK_SEQPACKET`` socket: a message
arrives whole or not at all, with its descriptor. The directory is the supervisor's, mode 0700: only
this user's processes can connect, which is why a message is believed. Its sizes are bounded all the
same (one descriptor, ``head_bytes`` bytes), and anything else is dropped with a warning.

Messages, one per connection: ``S`` + request bytes with one descriptor (a hand-over; no answer), and
``H`` (health), answered with ``h`` + a JSON object.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import socket
import stat
import zlib
from collections.abc import Callable
from typing import Any

__all__ = ["GAME_ID", "HEALTH_SECONDS", "Siblings", "SiblingsError", "game_of", "owner_of", "socket_path"]

log = logging.getLogger("koikoi.web")

GAME_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")  # what may be routed: a game id as the store makes them
HEALTH_SECONDS = 0.25  # how long health_all waits for another worker's answer

_HAND_OVER = b"S"
_HEALTH = b"H"
_ANSWER = b"h"
_ANSWER_BYTES = 65536  # a health answer: a few hundred bytes; anything longer is not one
_PENDING = 64  # Unix connections waiting for their one message; more are closed at once
_MESSAGE_SECONDS = 1.0  # a sibling sends its message as it connects: one that does not is dropped
_ACCEPTS_PER_WAKE = 32  # so that a burst of hand-overs does not hold up the event loop's other work


class SiblingsError(ValueError):
    """The workers' directory cannot be trusted (not private to this user), or a setting is out of range."""


def owner_of(game_id: str, workers: int) -> int:
    """The slot (0..workers-1) of the worker that owns ``game_id``: the same in every process, every run.

    >>> owner_of("Zx3_kQ9a-bc", 1)
    0
    >>> owner_of("Zx3_kQ9a-bc", 4) == zlib.crc32(b"Zx3_kQ9a-bc") % 4
    True
    """
    return zlib.crc32(game_id.encode()) % workers


def game_of(target: bytes) -> str | None:
    """The game a WebSocket request is for: ``game`` in the query of ``/ws/<token>?game=<id>``, if it
    is a well-formed id; else None (served where it arrived).

    >>> game_of(b"/ws/tok?game=Zx3_kQ9a-bc")
    'Zx3_kQ9a-bc'
    >>> game_of(b"/ws/tok"), game_of(b"/ws/tok?game=../etc"), game_of(b"/api/x?game=Zx3_kQ9a-bc")
    (None, None, None)
    >>> game_of(b"/ws/tok?game=Zx3_kQ9a-bc&game=Zx3_kQ9a-bc") is None
    True
    """
    path, _, query = target.partition(b"?")
    if not path.startswith(b"/ws/"):
        return None
    values = [value for name, _, value in (part.partition(b"=") for part in query.split(b"&")) if name == b"game"]
    if len(values) != 1:  # none, or several that a load balancer and this worker might read differently
        return None
    text = values[0].decode("ascii", "replace")
    return text if GAME_ID.fullmatch(text) else None


def socket_path(directory: str, slot: int) -> str:
    """Where worker ``slot`` listens."""
    return os.path.join(directory, f"worker-{slot}.sock")


def _check_private(directory: str) -> None:
    st = os.stat(directory)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise SiblingsError(
            f"{directory} is not a directory private to this user (mode {stat.S_IMODE(st.st_mode):o}, "
            f"owner {st.st_uid}, we are {os.getuid()}): the workers cannot trust messages there"
        )


def _tcp_socket(fd: int) -> socket.socket | None:
    """``fd`` as a socket object if it is a TCP connection; otherwise it is closed and None returned."""
    try:
        sock = socket.socket(fileno=fd)
    except OSError:  # not a socket at all
        os.close(fd)
        return None
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.type != socket.SOCK_STREAM:
        sock.close()
        return None
    return sock


class Siblings:
    """This worker (``slot`` of ``workers``) among its siblings, whose sockets are in ``directory``.

    Stored by the server as ``app.state.siblings``; the app reports :meth:`identity` in its health and
    answers ``/api/health?all=1`` with :meth:`health_all`.
    """

    def __init__(self, slot: int, workers: int, directory: str, *, head_bytes: int) -> None:
        if not 0 <= slot < workers:
            raise SiblingsError(f"worker slot {slot} is not one of 0..{workers - 1}")
        _check_private(directory)
        self.slot = slot
        self.workers = workers
        self.directory = directory
        self.head_bytes = head_bytes
        self.handed_over = 0  # connections this worker passed to their game's owner
        self.adopted = 0  # connections it took from a sibling
        self._listener: socket.socket | None = None
        self._pending: dict[socket.socket, asyncio.TimerHandle] = {}
        self._adopt: Callable[[socket.socket, bytes], None] | None = None
        self._health: Callable[[], dict[str, Any]] | None = None

    # -- who is who ----------------------------------------------------------------------------------

    def identity(self) -> dict[str, int]:
        """``{"worker": slot, "workers": N}``, for this worker's health."""
        return {"worker": self.slot, "workers": self.workers}

    def owner(self, game_id: str) -> int:
        return owner_of(game_id, self.workers)

    # -- listening -----------------------------------------------------------------------------------

    def start(
        self, adopt: Callable[[socket.socket, bytes], None], health: Callable[[], dict[str, Any]] | None = None
    ) -> None:
        """Listen on this worker's socket, in the running event loop. ``adopt(sock, head)`` serves a
        connection handed over (``head``: the bytes its first worker had read); ``health()`` is this
        worker's health, answered to a sibling (without it: ``{"ok": True}`` and :meth:`identity`). It
        must answer at once: it runs on the event loop and never waits for the database."""
        self._adopt = adopt
        self._health = health
        path = socket_path(self.directory, self.slot)
        try:
            os.unlink(path)  # the socket of this slot's previous worker, which died without removing it
        except FileNotFoundError:
            pass
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        listener.setblocking(False)
        listener.bind(path)
        listener.listen(1024)  # a burst of connections hands many over at once
        self._listener = listener
        asyncio.get_running_loop().add_reader(listener.fileno(), self._accept)

    def close(self) -> None:
        """Stop listening; siblings serve this worker's games themselves meanwhile."""
        loop = asyncio.get_running_loop()
        if self._listener is not None:
            loop.remove_reader(self._listener.fileno())
            self._listener.close()
            self._listener = None
            try:
                os.unlink(socket_path(self.directory, self.slot))
            except OSError:
                pass
        for conn in list(self._pending):
            self._drop(conn)

    def _accept(self) -> None:
        if self._listener is None:
            return
        loop = asyncio.get_running_loop()
        for _ in range(_ACCEPTS_PER_WAKE):
            try:
                conn, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:  # out of descriptors, say: the sibling serves the socket itself
                log.warning("could not accept a sibling worker's connection: %s", e)
                return
            conn.setblocking(False)
            # The message is normally there already (a sibling connects and sends at once): taken now,
            # it needs no place among the pending ones, however many siblings hand over at once.
            if self._receive_now(conn):
                continue
            if len(self._pending) >= _PENDING:
                conn.close()
                continue
            self._pending[conn] = loop.call_later(_MESSAGE_SECONDS, self._drop, conn)
            loop.add_reader(conn.fileno(), self._receive, conn)

    def _drop(self, conn: socket.socket) -> None:
        timer = self._pending.pop(conn, None)
        if timer is None:
            return
        timer.cancel()
        asyncio.get_running_loop().remove_reader(conn.fileno())
        conn.close()

    def _receive(self, conn: socket.socket) -> None:
        if self._receive_now(conn):
            self._drop(conn)

    def _receive_now(self, conn: socket.socket) -> bool:
        """Read and handle ``conn``'s one message: False if it has not arrived yet (nothing done), True
        once it is handled (``conn`` is then closed, or to be dropped by the caller)."""
        try:
            data, fds, flags, _ = socket.recv_fds(conn, 1 + self.head_bytes, 1)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            if conn not in self._pending:
                conn.close()
            return True
        try:
            self._handle(conn, data, fds, flags)
        except Exception:  # one bad message must not stop this worker's other work
            log.exception("could not handle a sibling worker's message")
        finally:
            for fd in fds:  # any descriptor not taken by a hand-over
                os.close(fd)
            if conn not in self._pending:
                conn.close()
        return True

    def _handle(self, conn: socket.socket, data: bytes, fds: list[int], flags: int) -> None:
        if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
            log.warning(
                "dropped a sibling worker's message of over %d bytes or with more than one descriptor",
                1 + self.head_bytes,
            )
        elif data[:1] == _HAND_OVER and len(fds) == 1:
            sock = _tcp_socket(fds.pop())
            if sock is None:
                log.warning("dropped a hand-over from a sibling worker whose descriptor is not a TCP connection")
                return
            self.adopted += 1
            assert self._adopt is not None
            try:
                self._adopt(sock, data[1:])
            except Exception:
                sock.close()
                raise
        elif data == _HEALTH and not fds:
            self._answer(conn)
        elif data or fds:
            log.warning(
                "dropped a malformed message from a sibling worker (%d bytes, %d descriptors)", len(data), len(fds)
            )

    def _answer(self, conn: socket.socket) -> None:
        try:
            if self._health is not None:
                health = self._health()
            else:
                health = {"ok": True, "pid": os.getpid(), **self.identity()}
            answer = _ANSWER + json.dumps(health, default=str).encode()
        except Exception as e:  # the health itself failed: say so, rather than go silent
            answer = _ANSWER + json.dumps({**self.identity(), "ok": False, "error": f"{type(e).__name__}"}).encode()
        if len(answer) > _ANSWER_BYTES:
            answer = _ANSWER + json.dumps({**self.identity(), "ok": False, "error": "health too large"}).encode()
        try:
            conn.send(answer)
        except OSError:  # the asker gave up, or its buffer is full: it reports no answer
            pass

    # -- asking the others ---------------------------------------------------------------------------

    def hand_over(self, slot: int, fd: int, head: bytes) -> bool:
        """Pass the TCP connection ``fd`` and the bytes read from it to worker ``slot``, without waiting:
        True once the owner has it (the caller then closes its copy, writing nothing), False where it
        cannot be reached now (the caller serves the connection itself)."""
        if len(head) > self.head_bytes or slot == self.slot:
            return False
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as unix:
            unix.setblocking(False)
            try:
                unix.connect(socket_path(self.directory, slot))  # a full queue: BlockingIOError
                sent = socket.send_fds(unix, [_HAND_OVER + head], [fd])
            except OSError:  # not there (dead, restarting), refusing, or busy
                return False
        if sent != 1 + len(head):  # a seqpacket goes whole or not at all; never half
            return False
        self.handed_over += 1
        return True

    async def health_of(self, slot: int) -> dict[str, Any]:
        """Worker ``slot``'s health, asked over its socket; ``{"worker": slot, "ok": False, "error": why}``
        when it does not answer within :data:`HEALTH_SECONDS`."""
        try:
            return await asyncio.wait_for(self._ask(slot), HEALTH_SECONDS)
        except TimeoutError:
            why = f"no answer within {HEALTH_SECONDS:g} s"
        except BlockingIOError:
            why = "its queue is full"
        except OSError as e:
            why = f"cannot reach it ({e.strerror or e})"
        except ValueError as e:
            why = str(e)
        return {"worker": slot, "ok": False, "error": why}

    async def _ask(self, slot: int) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as unix:
            unix.setblocking(False)
            unix.connect(socket_path(self.directory, slot))
            unix.send(_HEALTH)
            data = await loop.sock_recv(unix, _ANSWER_BYTES + 1)
        if not data:
            raise ValueError("it closed the connection without answering")
        if len(data) > _ANSWER_BYTES or data[:1] != _ANSWER:
            raise ValueError("its answer is not a health answer")
        try:
            health = json.loads(data[1:])
        except ValueError:
            raise ValueError("its answer is not JSON") from None
        if not isinstance(health, dict):
            raise ValueError("its answer is not a JSON object")
        health.setdefault("worker", slot)
        return health

    async def health_all(self, local: dict[str, Any]) -> list[dict[str, Any]]:
        """Every worker's health in slot order: ``local`` (this worker's, as the caller made it) in this
        one's place, the others asked at once, each within :data:`HEALTH_SECONDS`."""

        async def one(slot: int) -> dict[str, Any]:
            return local if slot == self.slot else await self.health_of(slot)

        return list(await asyncio.gather(*(one(j) for j in range(self.workers))))
