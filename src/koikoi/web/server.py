"""Running the app on a socket (uvicorn), with the connection-level limits uvicorn does not have.

uvicorn closes an idle keep-alive connection, but it waits for a new connection's first request for
ever, and its httptools parser takes headers of any length: 2,000 connections that each send a byte
now and then ("slowloris") hold the server's sockets, and one endless header holds its memory. The
protocol here gives a client ``header_timeout`` seconds and ``header_bytes`` bytes to send a request's
line and headers, and lets one address hold at most ``connections_per_address`` connections at once.

Under ``koikoi serve --workers N`` a game's WebSockets are all served by the worker that owns the game
(:mod:`koikoi.web.siblings`): a worker that accepts one for another's game hands the connection over.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import logging
import socket
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.auto import AutoWebSocketsProtocol

from .clientlog import client_log
from .headers import raw_headers
from .limits import Counter, Limits
from .siblings import Siblings, game_of

__all__ = ["guarded_protocol", "guarded_websocket", "head_bytes", "run"]

# The client whose bytes uvicorn is parsing right now, if any (see ClientErrors).
_receiving: contextvars.ContextVar[str | None] = contextvars.ContextVar("koikoi_receiving", default=None)


def guarded_websocket() -> type[asyncio.Protocol]:
    """uvicorn's WebSocket protocol, noting whose bytes it is parsing, so that an error it logs about
    them (a text frame that is not UTF-8: an ERROR with a traceback, every time) is logged by
    :class:`ClientErrors` as one rate-limited line naming the client instead."""
    assert AutoWebSocketsProtocol is not None, "uvicorn[standard] brings the websockets package"
    base: Any = AutoWebSocketsProtocol

    class GuardedWebSocket(base):  # type: ignore[misc, valid-type]
        def data_received(self, data: bytes) -> None:
            client = getattr(self, "client", None)
            token = _receiving.set(f"{client[0]}:{client[1]}" if client else "?")
            try:
                super().data_received(data)
            finally:
                _receiving.reset(token)

    return GuardedWebSocket


class ClientErrors(logging.Filter):
    """On uvicorn's error log: an error logged while parsing a client's bytes is the client's doing, not
    the server's. It becomes one line (the client's address and what was wrong, no traceback) through
    :data:`~koikoi.web.clientlog.client_log`, which no flood of such clients can fill the log with."""

    def filter(self, record: logging.LogRecord) -> bool:
        client = _receiving.get()
        if client is None or record.levelno < logging.WARNING:
            return True
        what = record.getMessage().strip().rstrip(".")
        if record.exc_info and record.exc_info[1] is not None:
            what = f"{what} ({type(record.exc_info[1]).__name__}: {str(record.exc_info[1])[:100]})"
        client_log.warn("client %s: %s; the connection was closed", client, what)
        return False


# A request's line and headers as the client sent them can be a little longer than header_bytes counts
# them (the spaces and line ends it leaves out): what a hand-over may carry.
_HEAD_SLACK = 1024


def head_bytes(limits: Limits) -> int:
    """The most bytes of a request a worker hands over with its connection (:mod:`koikoi.web.siblings`)."""
    return limits.header_bytes + _HEAD_SLACK


def guarded_protocol(limits: Limits, siblings: Siblings | None = None) -> type[asyncio.Protocol]:
    """An HTTP protocol class for uvicorn that enforces ``limits``' connection-level limits, and with
    ``siblings`` hands each game's WebSockets to the worker that owns the game."""
    by_address = Counter()
    most = head_bytes(limits)

    class GuardedHttp(HttpToolsProtocol):
        _header_timer: asyncio.TimerHandle | None = None
        _header_bytes = 0
        _in_headers = False
        _refused = False
        _counted: str | None = None
        # The connection's bytes up to its first request's end of headers, kept for a hand-over; None
        # once there is no hand-over to make (a later request, an adopted connection, too many bytes).
        _raw: bytearray | None = None
        _requests = 0

        def __init__(self, *args: Any, adopted: bytes | None = None, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # A connection handed over by a sibling: the bytes it had read, served here as if read here.
            self._adopted = adopted

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            address = self.client[0] if self.client else "?"
            if not by_address.take(address, limits.connections_per_address):
                self._refuse(
                    b"429 Too Many Requests", f"at most {limits.connections_per_address} connections from one address"
                )
                return
            self._counted = address
            self._start_headers()  # a connection that never sends a byte is timed too
            if self._adopted is not None:
                # Fed before the transport reads anything more, so the client's bytes keep their order.
                head, self._adopted = self._adopted, None
                self.data_received(head)
            elif siblings is not None:
                self._raw = bytearray()

        def _start_headers(self) -> None:
            self._in_headers = True
            self._header_bytes = 0
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(limits.header_timeout, self._too_slow)

        def _end_headers(self) -> None:
            self._in_headers = False
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _too_slow(self) -> None:
            self._header_timer = None
            if self._in_headers and not self.transport.is_closing():
                self._refuse(
                    b"408 Request Timeout", f"the request's headers took longer than {limits.header_timeout:g} s"
                )

        def _refuse(self, status: bytes, text: str) -> None:
            self._refused = True
            body = text.encode()
            self.transport.write(
                b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\n"
                b"content-length: "
                + str(len(body)).encode()
                + b"\r\nconnection: close\r\n"
                + raw_headers()
                + b"\r\n"
                + body
            )
            self.transport.close()

        def _too_large(self) -> None:
            self._end_headers()
            self._refuse(
                b"431 Request Header Fields Too Large",
                f"a request's line and headers are at most {limits.header_bytes} bytes",
            )

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            if self._raw is not None:
                if len(self._raw) + len(data) <= most:
                    self._raw += data
                else:
                    self._raw = None
            super().data_received(data)
            if self._in_headers and not self.transport.is_closing():
                # Headers still unfinished after this chunk: bound what the parser holds meanwhile.
                self._header_bytes += len(data)
                if self._header_bytes > limits.header_bytes:
                    self._too_large()

        # The parser's callbacks. A new request starts its header clock at its first byte; the rest of
        # a refused request's body is still that request, and never counts as the next one's headers.
        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._start_headers()
            self._requests += 1
            if self._requests > 1:
                self._raw = None  # only a connection's first request is handed over (browsers open a new one)

        def on_headers_complete(self) -> None:
            size = len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)
            if size > limits.header_bytes:
                self._too_large()  # however the bytes arrived, in one read or many
                return
            self._end_headers()
            if not self.parser.should_upgrade():
                self._raw = None  # a plain request: nothing to hand over on this connection
            super().on_headers_complete()

        def on_body(self, body: bytes) -> None:
            if not self._refused:
                super().on_body(body)

        def on_message_complete(self) -> None:
            if not self._refused:
                super().on_message_complete()

        def handle_websocket_upgrade(self) -> None:
            self._end_headers()
            self._release()  # the socket is counted by the app from here (sockets_per_address)
            if not self._hand_over():
                super().handle_websocket_upgrade()

        def _hand_over(self) -> bool:
            """Pass this socket to its game's owner, if another worker owns it and can take it now."""
            raw, self._raw = self._raw, None
            if siblings is None or raw is None or self._refused or self.transport.is_closing():
                return False
            game = game_of(self.url)
            if game is None:
                return False
            owner = siblings.owner(game)
            sock = self.transport.get_extra_info("socket")
            if owner == siblings.slot or sock is None or not siblings.hand_over(owner, sock.fileno(), bytes(raw)):
                return False
            # The owner has the connection now: let go of this copy without a byte written (closing one of
            # two descriptors of a socket sends nothing), and read no more from it.
            self.transport.close()
            return True

        def _release(self) -> None:
            if self._counted is not None:
                by_address.give_back(self._counted)
                self._counted = None

        def connection_lost(self, exc: Exception | None) -> None:
            self._end_headers()
            self._release()
            super().connection_lost(exc)

    return GuardedHttp


class _Server(uvicorn.Server):
    """uvicorn's server, which with ``siblings`` also listens for connections handed over by them."""

    def __init__(self, config: uvicorn.Config, app: Any, siblings: Siblings | None) -> None:
        super().__init__(config)
        self.app = app
        self.siblings = siblings
        self._adopting: set[asyncio.Task[Any]] = set()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.siblings is None or not self.started:
            return
        self.siblings.start(self._adopt, getattr(self.app.state, "local_health", None))

    def _adopt(self, sock: socket.socket, head: bytes) -> None:
        config = self.config

        def protocol() -> asyncio.Protocol:
            # What uvicorn's own protocol factory makes (uvicorn.Server.startup), given the bytes read.
            return config.http_protocol_class(  # type: ignore[call-arg]
                config=config, server_state=self.server_state, app_state=self.lifespan.state, adopted=head
            )

        sock.setblocking(False)
        task = asyncio.get_running_loop().create_task(self._connect(protocol, sock))
        self._adopting.add(task)
        task.add_done_callback(self._adopting.discard)

    @staticmethod
    async def _connect(protocol: Any, sock: socket.socket) -> None:
        try:
            await asyncio.get_running_loop().connect_accepted_socket(protocol, sock)
        except Exception as e:  # the client left meanwhile, say
            logging.getLogger("koikoi.web").warning("could not serve a connection from a sibling worker: %s", e)
            sock.close()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.siblings is not None:
            self.siblings.close()  # first: no connection is handed to a worker that is stopping
        await super().shutdown(sockets)


# The cyclic garbage collector's defaults (700, 10, 10) suit small programs. A server holding a thousand
# games and two thousand sockets has about 500,000 objects; a move's short-lived objects outlived the two
# young generations and reached the oldest, whose collection (every few seconds) then walked all of them:
# pauses of 300 ms for every player of the process (benchmarks/web_load.py --games 1000 on SQLite: p99 round
# trip 520 ms with the defaults, 80 ms with these). Young objects now have 50,000 allocations to die in
# first, and what the server holds once started (modules, the app) is left out of every collection.
GC_THRESHOLDS = (50_000, 20, 10)


def tune_collector() -> None:
    """Set :data:`GC_THRESHOLDS`, after collecting and freezing what exists now (see above)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def run(
    app: Any,
    *,
    host: str,
    port: int,
    limits: Limits,
    forwarded_allow_ips: str | None = None,
    sock: socket.socket | None = None,
    siblings: Siblings | None = None,
) -> None:
    """Serve ``app`` until stopped (Ctrl+C or SIGTERM); on ``sock`` if given (a socket shared by
    several worker processes, :mod:`koikoi.web.supervisor`), else on ``host``:``port``. ``siblings``:
    this worker among the others of ``--workers N`` (stored as ``app.state.siblings``)."""
    if siblings is not None:
        app.state.siblings = siblings
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        http=guarded_protocol(limits, siblings),
        ws=guarded_websocket(),
        ws_max_size=limits.message_bytes * 4,
        ws_max_queue=16,
        timeout_keep_alive=limits.keep_alive,
        limit_concurrency=limits.max_connections,
        timeout_graceful_shutdown=5,
        # Client addresses come from the socket unless the operator names the proxy in front.
        proxy_headers=forwarded_allow_ips is not None,
        forwarded_allow_ips=forwarded_allow_ips,
    )
    errors = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, ClientErrors) for f in errors.filters):
        errors.addFilter(ClientErrors())
    tune_collector()
    _Server(config, app, siblings).run(sockets=None if sock is None else [sock])
