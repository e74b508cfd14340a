"""What every WebSocket of the server does alike (a table's, :mod:`.routes.table`; the lobby's,
:mod:`.routes.lobby`): a bounded send buffer, so that a client that stops reading is seen and reset,
and a refusal that says why and closes at once."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import socket as socketlib
import struct
from typing import Any

from fastapi import WebSocket

__all__ = ["UNREAD_BYTES", "bound_send_buffer", "refuse", "reset", "websocket_transport"]

log = logging.getLogger("koikoi.web")

UNREAD_BYTES = 32 * 1024  # written but not taken by the kernel (its buffer is full): the client is not reading

# The connection a WebSocket is served on, as asyncio handed it to the server's protocol: set by
# koikoi.web.server while uvicorn works on the connection, and so inherited by the app's task, which
# uvicorn starts meanwhile; put in the scope as "koikoi.transport" by koikoi.web.headers.SecurityHeaders.
# None under another server (a test client): the routes do without it then.
websocket_transport: contextvars.ContextVar[asyncio.Transport | None] = contextvars.ContextVar(
    "koikoi_websocket_transport", default=None
)


def bound_send_buffer(transport: asyncio.Transport | None, unread_bytes: int) -> None:
    """Give a WebSocket's kernel send buffer a fixed size, so that a client that stops reading is seen
    (and closed) after ``unread_bytes``. Left to itself, Linux grows the buffer up to tcp_wmem's largest
    (4 MB by default; over a megabyte on loopback for a client that never read a byte): that much would
    be answered, and held, before the server's own buffer fills."""
    sock = transport.get_extra_info("socket") if transport is not None else None
    if sock is None:
        return
    try:
        # What the server itself holds (UNREAD_BYTES) counts too; Linux doubles the size it is asked
        # for, to cover its own bookkeeping, so half of the rest is asked.
        sock.setsockopt(socketlib.SOL_SOCKET, socketlib.SO_SNDBUF, (unread_bytes - UNREAD_BYTES) // 2)
    except ValueError:  # uvloop's socket of a connection closed meanwhile: "negative file descriptor"
        return
    except OSError:
        log.warning("could not bound a WebSocket's send buffer", exc_info=True)


def reset(transport: asyncio.Transport) -> None:
    """End a connection at once, dropping what it has not sent: a TCP reset. A plain close (even
    asyncio's abort) leaves the kernel to send the unread bytes and then a FIN, to a client that reads
    nothing: the socket would linger, its buffer held, and the client would never hear of it."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socketlib.SOL_SOCKET, socketlib.SO_LINGER, struct.pack("ii", 1, 0))
        except ValueError:  # closed meanwhile (uvloop: "negative file descriptor"): nothing left to reset
            pass
        except OSError:
            log.warning("could not set a WebSocket to reset on close", exc_info=True)
    transport.abort()


async def refuse(ws: WebSocket, transport: asyncio.Transport | None, error: dict[str, Any], code: int) -> None:
    """Say why a socket is refused, and close it at once. Left to uvicorn, a refused socket is held
    for the client's side of the closing handshake, 10 s: a client that never answers could hold
    thousands of them, and with them every connection slot of the server."""
    try:
        await ws.send_json(error)
        await ws.close(code=code)
    except Exception:  # the client went first
        pass
    finally:
        if transport is not None and not transport.is_closing():
            transport.close()  # the error and the close frame are flushed, then the socket closed
            # A client that reads nothing would keep even those few bytes unflushed: reset it then.
            asyncio.get_running_loop().call_later(1.0, transport.abort)
