"""Which browser is asking: the ``koikoi_id`` cookie, issued and signed by the server only.

A browser's id lists its games in the lobby, so an id a client could choose would let it plant that
id in someone else's browser (through a sibling site, say) and then read their lobby: their games,
their seat tokens, their hand. So the cookie is ``<id>.<signature>``, an HMAC of the id under a key
the server keeps in its database (one key for every process and host on that database); a cookie
without a valid signature is replaced by a fresh id, never adopted.

Cookies from before ids were signed are bare ids. Such an id is adopted (and signed) once, by the
first browser that shows it after the upgrade, and only if it already holds a seat; any later showing
of the same bare id is refused, so a bare id cannot be planted either.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from datetime import UTC, datetime

from sqlalchemy import insert
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from .keys import server_key
from .schema import adopted_browser_ids as adopted_ids

__all__ = ["BrowserIds"]

_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")
_SIGNATURE = re.compile(r"[A-Za-z0-9_-]{22}")
_KEY_NAME = "browser_ids"


class BrowserIds:
    """Issues, signs and checks browser ids, with the signing key kept in the database at ``engine`` (a
    :class:`~koikoi.web.store.Store`'s, whose opening made the tables)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._key = server_key(engine, _KEY_NAME)

    def _signature(self, browser: str) -> str:
        digest = hmac.new(self._key, browser.encode(), hashlib.sha256).digest()[:16]
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

    def cookie(self, browser: str) -> str:
        """The cookie value for ``browser``: the id and its signature."""
        return f"{browser}.{self._signature(browser)}"

    def issue(self) -> tuple[str, str]:
        """A new browser id and its cookie value."""
        browser = secrets.token_urlsafe(18)
        return browser, self.cookie(browser)

    def read(self, value: str | None) -> str | None:
        """The browser id in a cookie value the server signed, or None for anything else."""
        if not value or len(value) > 100:
            return None
        browser, dot, signature = value.partition(".")
        if not dot or not _ID.fullmatch(browser) or not _SIGNATURE.fullmatch(signature):
            return None
        return browser if hmac.compare_digest(signature, self._signature(browser)) else None

    def adopt(self, value: str | None, holds_a_seat: bool) -> bool:
        """Whether a bare id from before ids were signed is adopted now: it holds a seat (``holds_a_seat``,
        which the caller looked up) and no browser showed it since the upgrade."""
        if not value or not holds_a_seat or not _ID.fullmatch(value):
            return False
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(adopted_ids).values(id=value, at=datetime.now(UTC)))
        except IntegrityError:
            return False  # adopted already, by the browser that showed it first
        return True

    @staticmethod
    def may_be_bare(value: str | None) -> bool:
        """Whether ``value`` has the shape of a bare id from before ids were signed (worth looking up)."""
        return bool(value) and _ID.fullmatch(value or "") is not None
