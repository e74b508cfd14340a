"""The server's cookies: their names, and reading them so that no other site can plant one.

- **Names.** ``koikoi_session`` (a signed-in account's session, :mod:`koikoi.web.accounts`),
  ``koikoi_id`` (the browser's signed id, :mod:`koikoi.web.browsers`) and ``koikoi_device`` (the browser
  signed in to an account before, :mod:`koikoi.web.devices`) are the player's credentials; over
  HTTPS they are named with the ``__Host-`` prefix. A browser keeps a ``__Host-`` cookie only when it was
  set ``Secure``, by this very host, for the whole site (``Path=/``, no ``Domain``): a sibling subdomain,
  or a page of the same host over plain HTTP, cannot set one for us ("cookie tossing"). Over plain HTTP (a
  server on one's own machine) the prefix cannot be used and the plain names are. ``koikoi_lang`` (the
  language a page was last asked in) is no credential, and keeps its plain name.
- **Two of one name.** A browser sends every cookie that matches the address, and a planted cookie of our
  name (with another ``Domain`` or ``Path``) would come beside ours, in an order the server cannot
  trust. So a request that carries one of our cookies twice is refused (400 ``two_cookies``), never read
  "last wins"; the player is told to clear this site's cookies.
"""

from __future__ import annotations

from starlette.requests import HTTPConnection

from .errors import GameError

__all__ = [
    "BROWSER",
    "DEVICE",
    "HOST_PREFIX",
    "LANG",
    "SESSION",
    "cookie_name",
    "credential",
    "is_secure",
    "our_cookies",
]

SESSION = "koikoi_session"
BROWSER = "koikoi_id"
DEVICE = "koikoi_device"  # koikoi.web.devices: this browser signed in to an account before
LANG = "koikoi_lang"
HOST_PREFIX = "__Host-"
_CREDENTIALS = frozenset({SESSION, BROWSER, DEVICE})
_OURS = frozenset({*_CREDENTIALS, LANG, *(HOST_PREFIX + c for c in _CREDENTIALS)})
_MAX_COOKIE_HEADERS = 8  # HTTP/1.1 browsers send one Cookie header; a few more are tolerated, not read


def is_secure(conn: HTTPConnection) -> bool:
    """Whether the connection came over HTTPS (directly, or behind a proxy named with
    ``--forwarded-allow-ips``): its cookies are then the ``__Host-`` ones."""
    return conn.url.scheme in ("https", "wss")


def cookie_name(cookie: str, secure: bool) -> str:
    """The name ``cookie`` (one of :data:`SESSION`, :data:`BROWSER`, :data:`LANG`) goes by on a connection
    over HTTPS (``secure``) or plain HTTP."""
    return HOST_PREFIX + cookie if secure and cookie in _CREDENTIALS else cookie


def our_cookies(conn: HTTPConnection) -> dict[str, str]:
    """Our cookies on ``conn``, by the names they came under (other sites' cookies on the same host are
    left alone); :class:`~koikoi.web.games.GameError` ``two_cookies`` if one of ours came twice. One pass
    over the header: linear in its length, which the HTTP server bounds."""
    found: dict[str, str] = {}
    for header in conn.headers.getlist("cookie")[:_MAX_COOKIE_HEADERS]:
        for part in header.split(";"):
            name, _eq, value = part.partition("=")
            name = name.strip()
            if name not in _OURS:
                continue
            if name in found:
                raise GameError(
                    "two_cookies",
                    f"this request carries two cookies named {name!r}, one of them not set by this site: "
                    "clear this site's cookies in the browser, then sign in again",
                    400,
                )
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            found[name] = value
    return found


def credential(cookies: dict[str, str], cookie: str, secure: bool) -> str | None:
    """The value of ``cookie`` (:data:`SESSION`, :data:`BROWSER` or :data:`DEVICE`) under the name this connection's
    scheme uses (over HTTPS the plain name is not read: anyone could have set it)."""
    return cookies.get(cookie_name(cookie, secure))
