"""The headers every HTTP response carries, whoever writes it: the app, its error pages, the connection guard.

Seat tokens travel in addresses, so no response may be framed by another site, send a referrer, or run
inline script. :class:`SecurityHeaders` wraps the whole app, outside Starlette's last-resort error
handler, so that even a 500 carries them; :mod:`koikoi.web.server` writes them into the responses its
guard sends before the app is reached (408, 429, 431).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .sockets import websocket_transport

__all__ = ["SECURITY_HEADERS", "SecurityHeaders", "raw_headers"]

SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
        b"frame-ancestors 'none'",
    ),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


def raw_headers() -> bytes:
    """:data:`SECURITY_HEADERS` as HTTP/1.1 header lines, for a response written by hand."""
    return b"".join(name + b": " + value + b"\r\n" for name, value in SECURITY_HEADERS)


class SecurityHeaders:
    """ASGI middleware adding :data:`SECURITY_HEADERS` to every HTTP response. A 500 also says
    ``Connection: close``: the server drops the connection after an error, and the client must not
    send its next request on it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                # The socket's transport (koikoi.web.sockets), so that the table can see a client that
                # stops reading.
                scope["koikoi.transport"] = websocket_transport.get()
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), *SECURITY_HEADERS]
                if message["status"] >= 500:
                    headers = [(k, v) for k, v in headers if k.lower() != b"connection"]
                    headers.append((b"connection", b"close"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)
