"""Running the app on a socket (uvicorn), with the connection-level limits uvicorn does not have.

uvicorn closes an idle keep-alive connection, but it waits for a new connection's first request for
ever, and its httptools parser takes headers of any length: 2,000 connections that each send a byte
now and then ("slowloris") hold the server's sockets, and one endless header holds its memory. The
protocol here gives a client ``header_timeout`` seconds and ``header_bytes`` bytes to send a request's
line and headers, and lets one address hold at most ``connections_per_address`` connections at once.

Under ``koikoi serve --workers N`` a game's WebSockets are all served by the worker that owns the game
(:mod:`koikoi.web.siblings`): a worker that accepts one for another's game hands the connection over.

What uvicorn documents is used as documented: its settings (:func:`run`: ``limit_concurrency``,
``timeout_keep_alive``, ``ws_max_size``, ``ws_max_queue``, ``timeout_graceful_shutdown``, the proxy
headers) and a protocol class of our own for ``http`` and ``ws``. What none of its settings can do, the
protocols here do, and for that they lean on the following of uvicorn's undocumented insides, and on
nothing else of them (``tests/test_web_uvicorn.py`` checks each against the installed uvicorn, and
pyproject.toml keeps uvicorn below its next minor release, so that an upgrade is a deliberate step):

- ``HttpToolsProtocol`` and the WebSocket protocol uvicorn picks (``AutoWebSocketsProtocol``), built
  as ``cls(config=, server_state=, app_state=)``; the first takes the httptools parser's callbacks
  (``on_message_begin``, ``on_url``, ``on_header``, ``on_headers_complete``, ``on_body``,
  ``on_message_complete``), keeps its parser in ``parser`` and turns to a WebSocket in
  ``handle_websocket_upgrade()``;
- that a WebSocket's app task is started from within its protocol's ``connection_made`` or
  ``data_received`` (the task inherits the context, and with it the connection's transport:
  :data:`~koikoi.web.sockets.websocket_transport`);
- ``uvicorn.Server``'s ``startup(sockets)``, ``shutdown(sockets)``, ``started``, ``server_state`` and
  ``lifespan.state`` (a connection handed over by a sibling is served as one accepted here).

Everything else they take (the connection, the client's address, the event loop) comes from asyncio's
documented protocol interface, not from uvicorn's attributes.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import faulthandler
import gc
import ipaddress
import logging
import socket
from collections.abc import Callable, Iterator
from typing import Any, cast

import uvicorn
from starlette.applications import Starlette
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.auto import AutoWebSocketsProtocol

from .clientlog import client_log
from .headers import raw_headers
from .limits import Counter, Limits
from .siblings import Siblings, game_of
from .sockets import websocket_transport

__all__ = ["guarded_protocol", "guarded_websocket", "head_bytes", "run", "trusted_proxies"]

# The client whose bytes uvicorn is parsing right now, if any (see ClientErrors).
_receiving: contextvars.ContextVar[str | None] = contextvars.ContextVar("koikoi_receiving", default=None)


def _peer(transport: asyncio.BaseTransport) -> tuple[str, str]:
    """The client's address and ``address:port`` (``"?"`` for a connection that has none), from what
    asyncio knows of the connection."""
    peer = transport.get_extra_info("peername")
    if isinstance(peer, tuple) and len(peer) >= 2:
        return str(peer[0]), f"{peer[0]}:{peer[1]}"
    return "?", "?"


def guarded_websocket() -> type[asyncio.Protocol]:
    """uvicorn's WebSocket protocol, noting whose bytes it is parsing, so that an error it logs about
    them (a text frame that is not UTF-8: an ERROR with a traceback, every time) is logged by
    :class:`ClientErrors` as one rate-limited line naming the client instead; and handing the app the
    connection's transport (:data:`~koikoi.web.sockets.websocket_transport`), so that a table can see
    a client that stops reading."""
    assert AutoWebSocketsProtocol is not None, "uvicorn[standard] brings the websockets package"
    # uvicorn types the protocol it picks as a factory, not a class: a class it is (checked by
    # tests/test_web_uvicorn.py), and one to derive from.
    base: type[asyncio.Protocol] = AutoWebSocketsProtocol  # type: ignore[assignment]

    # A base class picked when uvicorn is imported, which mypy cannot check a class against.
    class GuardedWebSocket(base):  # type: ignore[valid-type, misc]
        _koikoi_transport: asyncio.Transport | None = None
        _koikoi_client = "?"

        @contextlib.contextmanager
        def _serving(self) -> Iterator[None]:
            # Set while uvicorn works on the connection: the app's task, which it starts meanwhile,
            # inherits both (asyncio copies the current context into every task it creates).
            client = _receiving.set(self._koikoi_client)
            transport = websocket_transport.set(self._koikoi_transport)
            try:
                yield
            finally:
                websocket_transport.reset(transport)
                _receiving.reset(client)

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            # A stream's transport (uvloop's is one without deriving from asyncio.Transport).
            self._koikoi_transport = cast(asyncio.Transport, transport)
            self._koikoi_client = _peer(transport)[1]
            with self._serving():
                super().connection_made(transport)

        def data_received(self, data: bytes) -> None:
            with self._serving():
                super().data_received(data)

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


def trusted_proxies(forwarded_allow_ips: str | None) -> Callable[[str], bool]:
    """Whether a peer address is one of the proxies named by ``--forwarded-allow-ips`` ("*", or addresses
    and networks separated by commas, as uvicorn takes them)."""
    if not forwarded_allow_ips:
        return lambda address: False
    words = [w.strip() for w in forwarded_allow_ips.split(",") if w.strip()]
    if "*" in words:
        return lambda address: True
    networks = []
    for w in words:
        with contextlib.suppress(ValueError):
            networks.append(ipaddress.ip_network(w, strict=False))

    def trusted(address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in n for n in networks)

    return trusted


def guarded_protocol(
    limits: Limits, siblings: Siblings | None = None, forwarded_allow_ips: str | None = None
) -> type[asyncio.Protocol]:
    """An HTTP protocol class for uvicorn that enforces ``limits``' connection-level limits, and with
    ``siblings`` hands each game's WebSockets to the worker that owns the game.

    A proxy named by ``forwarded_allow_ips`` holds the connections of all its clients: it counts against
    ``proxy_connections``, not ``connections_per_address`` (each client's own requests are counted by
    their forwarded address, by every rate limit that counts addresses)."""
    by_address = Counter()
    most = head_bytes(limits)
    is_proxy = trusted_proxies(forwarded_allow_ips)

    # The state here is named _koikoi_*, apart from uvicorn's own; no name this class adds is one of
    # uvicorn's (tests/test_web_uvicorn.py).
    class GuardedHttp(HttpToolsProtocol):
        _koikoi_transport: asyncio.Transport
        _koikoi_header_timer: asyncio.TimerHandle | None = None
        _koikoi_header_bytes = 0
        _koikoi_in_headers = False
        _koikoi_refused = False
        _koikoi_counted: str | None = None
        # The request's target and the size of its headers, as the parser hands them over.
        _koikoi_url = b""
        _koikoi_header_size = 0
        # The connection's bytes up to its first request's end of headers, kept for a hand-over; None
        # once there is no hand-over to make (a later request, an adopted connection, too many bytes).
        _koikoi_raw: bytearray | None = None
        _koikoi_requests = 0

        def __init__(self, *args: Any, adopted: bytes | None = None, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # A connection handed over by a sibling: the bytes it had read, served here as if read here.
            self._koikoi_adopted = adopted

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self._koikoi_transport = cast(asyncio.Transport, transport)  # a stream's (see GuardedWebSocket)
            super().connection_made(self._koikoi_transport)
            address = _peer(transport)[0]
            most_here = limits.proxy_connections if is_proxy(address) else limits.connections_per_address
            if not by_address.take(address, most_here):
                self._refuse(b"429 Too Many Requests", f"at most {most_here} connections from one address")
                return
            self._koikoi_counted = address
            self._start_headers()  # a connection that never sends a byte is timed too
            if self._koikoi_adopted is not None:
                # Fed before the transport reads anything more, so the client's bytes keep their order.
                head, self._koikoi_adopted = self._koikoi_adopted, None
                self.data_received(head)
            elif siblings is not None:
                self._koikoi_raw = bytearray()

        def _start_headers(self) -> None:
            self._koikoi_in_headers = True
            self._koikoi_header_bytes = 0
            if self._koikoi_header_timer is None:
                self._koikoi_header_timer = asyncio.get_running_loop().call_later(limits.header_timeout, self._too_slow)

        def _end_headers(self) -> None:
            self._koikoi_in_headers = False
            if self._koikoi_header_timer is not None:
                self._koikoi_header_timer.cancel()
                self._koikoi_header_timer = None

        def _too_slow(self) -> None:
            self._koikoi_header_timer = None
            if self._koikoi_in_headers and not self._koikoi_transport.is_closing():
                self._refuse(
                    b"408 Request Timeout", f"the request's headers took longer than {limits.header_timeout:g} s"
                )

        def _refuse(self, status: bytes, text: str) -> None:
            self._koikoi_refused = True
            body = text.encode()
            self._koikoi_transport.write(
                b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\n"
                b"content-length: "
                + str(len(body)).encode()
                + b"\r\nconnection: close\r\n"
                + raw_headers()
                + b"\r\n"
                + body
            )
            self._koikoi_transport.close()

        def _too_large(self) -> None:
            self._end_headers()
            self._refuse(
                b"431 Request Header Fields Too Large",
                f"a request's line and headers are at most {limits.header_bytes} bytes",
            )

        def data_received(self, data: bytes) -> None:
            if self._koikoi_refused:
                return
            if self._koikoi_raw is not None:
                if len(self._koikoi_raw) + len(data) <= most:
                    self._koikoi_raw += data
                else:
                    self._koikoi_raw = None
            super().data_received(data)
            if self._koikoi_in_headers and not self._koikoi_transport.is_closing():
                # Headers still unfinished after this chunk: bound what the parser holds meanwhile.
                self._koikoi_header_bytes += len(data)
                if self._koikoi_header_bytes > limits.header_bytes:
                    self._too_large()

        # The parser's callbacks (httptools'). A new request starts its header clock at its first byte;
        # the rest of a refused request's body is still that request, and never counts as the next
        # one's headers.
        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._koikoi_url = b""
            self._koikoi_header_size = 0
            self._start_headers()
            self._koikoi_requests += 1
            if self._koikoi_requests > 1:
                self._koikoi_raw = None  # only a connection's first request is handed over (browsers open a new one)

        def on_url(self, url: bytes) -> None:
            self._koikoi_url += url
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            # A header's name, value and the ": " and line end between; the spaces after a value are
            # not part of it (RFC 9110, 5.5).
            self._koikoi_header_size += len(name) + len(value.rstrip(b" \t")) + 4
            super().on_header(name, value)

        def on_headers_complete(self) -> None:
            if len(self._koikoi_url) + self._koikoi_header_size > limits.header_bytes:
                self._too_large()  # however the bytes arrived, in one read or many
                return
            self._end_headers()
            if not self.parser.should_upgrade():
                self._koikoi_raw = None  # a plain request: nothing to hand over on this connection
            super().on_headers_complete()

        def on_body(self, body: bytes) -> None:
            if not self._koikoi_refused:
                super().on_body(body)

        def on_message_complete(self) -> None:
            if not self._koikoi_refused:
                super().on_message_complete()

        def handle_websocket_upgrade(self) -> None:
            self._end_headers()
            self._release()  # the socket is counted by the app from here (sockets_per_address)
            if not self._hand_over():
                super().handle_websocket_upgrade()

        def _hand_over(self) -> bool:
            """Pass this socket to its game's owner, if another worker owns it and can take it now."""
            raw, self._koikoi_raw = self._koikoi_raw, None
            transport = self._koikoi_transport
            if siblings is None or raw is None or self._koikoi_refused or transport.is_closing():
                return False
            game = game_of(self._koikoi_url)
            if game is None:
                return False
            owner = siblings.owner(game)
            sock = transport.get_extra_info("socket")
            if owner == siblings.slot or sock is None or not siblings.hand_over(owner, sock.fileno(), bytes(raw)):
                return False
            # The owner has the connection now: let go of this copy without a byte written (closing one of
            # two descriptors of a socket sends nothing), and read no more from it.
            transport.close()
            return True

        def _release(self) -> None:
            if self._koikoi_counted is not None:
                by_address.give_back(self._koikoi_counted)
                self._koikoi_counted = None

        def connection_lost(self, exc: Exception | None) -> None:
            self._end_headers()
            self._release()
            super().connection_lost(exc)

    return GuardedHttp


class _Server(uvicorn.Server):
    """uvicorn's server, which with ``siblings`` also listens for connections handed over by them and
    serves each with ``http`` (the protocol class it serves its own with), as if it had accepted it."""

    def __init__(
        self,
        config: uvicorn.Config,
        *,
        http: Callable[..., asyncio.Protocol],  # guarded_protocol's class
        siblings: Siblings | None,
        health: Callable[[], dict[str, Any]] | None,
        exits_on_stop: bool = False,
    ) -> None:
        super().__init__(config)
        # The process ends with this server (koikoi serve, not a server run inside another program): a
        # stop that hangs may end it (see shutdown).
        self._koikoi_exits = exits_on_stop
        self._koikoi_http = http
        self._koikoi_siblings = siblings
        self._koikoi_health = health
        self._koikoi_adopting: set[asyncio.Task[None]] = set()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self._koikoi_siblings is None or not self.started:
            return
        self._koikoi_siblings.start(self._adopt, self._koikoi_health)

    def _adopt(self, sock: socket.socket, head: bytes) -> None:
        config, http = self.config, self._koikoi_http

        def protocol() -> asyncio.Protocol:
            # What uvicorn's own protocol factory makes (uvicorn.Server.startup), given the bytes read.
            return http(config=config, server_state=self.server_state, app_state=self.lifespan.state, adopted=head)

        sock.setblocking(False)
        task = asyncio.get_running_loop().create_task(self._connect(protocol, sock))
        self._koikoi_adopting.add(task)
        task.add_done_callback(self._koikoi_adopting.discard)

    @staticmethod
    async def _connect(protocol: Callable[[], asyncio.Protocol], sock: socket.socket) -> None:
        try:
            await asyncio.get_running_loop().connect_accepted_socket(protocol, sock)
        except Exception as e:  # the client left meanwhile, say
            logging.getLogger("koikoi.web").warning("could not serve a connection from a sibling worker: %s", e)
            sock.close()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # A stop never hangs: the connections get 5 s (timeout_graceful_shutdown), the app's own closing
        # is bounded too, but a thread stuck in a call (a database that stopped answering) would keep the
        # interpreter from exiting. After STOP_SECONDS every thread's stack goes to the log, and the
        # process exits; nothing is lost by it (every move is in the database before it is answered).
        # Only where the process is the server's own: a program that runs one inside (a test) goes on.
        if self._koikoi_exits:
            faulthandler.dump_traceback_later(STOP_SECONDS, exit=True)
        if self._koikoi_siblings is not None:
            self._koikoi_siblings.close()  # first: no connection is handed to a worker that is stopping
        await super().shutdown(sockets)


STOP_SECONDS = 15  # the most a stop (SIGTERM, Ctrl+C) takes before the process exits regardless

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
    app: Starlette,
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
    http = guarded_protocol(limits, siblings, forwarded_allow_ips)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        http=http,
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
    health = getattr(app.state, "local_health", None)
    server = _Server(config, http=http, siblings=siblings, health=health, exits_on_stop=True)
    server.run(sockets=None if sock is None else [sock])
