"""Device cookies (OWASP's "Slow Down Online Guessing Attacks with Device Cookies"): a browser that has
signed in to an account keeps signing in to it while others guess its password.

A sign-in that succeeds gives the browser a cookie (``koikoi_device``; over HTTPS ``__Host-koikoi_device``)
that names the account and a random device id, signed by the server (an HMAC under a key kept in the
database, :mod:`koikoi.web.keys`), so nobody can make one for an account they never signed in to. At the
next sign-in to that account the browser is *known*: the account's wrong passwords from unknown browsers
(which wait longer with each more, :class:`~koikoi.web.accountstore.AccountStore`) do not hold it up, and
its own wrong passwords are counted for it alone, so a stolen cookie buys a few guesses, not a way around
the limit. The cookie holds no secret of the account and signs nobody in by itself.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from sqlalchemy.engine import Engine

from .keys import server_key

__all__ = ["Device", "DeviceCookies"]

_ACCOUNT = re.compile(r"[A-Za-z0-9_-]{1,32}")
_DEVICE = re.compile(r"[A-Za-z0-9_-]{16,32}")
_SIGNATURE = re.compile(r"[A-Za-z0-9_-]{22}")


@dataclass(frozen=True, slots=True)
class Device:
    account_id: str  # the account this browser signed in to
    id: str  # the browser's device id for it


class DeviceCookies:
    def __init__(self, engine: Engine) -> None:
        self._key = server_key(engine, "device_cookies")

    def _signature(self, account_id: str, device: str) -> str:
        digest = hmac.new(self._key, f"{account_id}.{device}".encode(), hashlib.sha256).digest()[:16]
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

    def issue(self, account_id: str) -> str:
        """A new device cookie's value for a browser that just signed in to ``account_id``."""
        device = secrets.token_urlsafe(18)
        return f"{account_id}.{device}.{self._signature(account_id, device)}"

    def read(self, value: str | None) -> Device | None:
        """The device in a cookie value the server signed, or None for anything else."""
        if not value or len(value) > 120:
            return None
        parts = value.split(".")
        if len(parts) != 3:
            return None
        account_id, device, signature = parts
        if not (_ACCOUNT.fullmatch(account_id) and _DEVICE.fullmatch(device) and _SIGNATURE.fullmatch(signature)):
            return None
        if not hmac.compare_digest(signature, self._signature(account_id, device)):
            return None
        return Device(account_id, device)
