"""Player accounts: what a name and a password may be, how passwords are kept, and session tokens.

Accounts are optional: a guest plays as before, known by the browser's signed id (``browsers``). An
account adds a name that others see, ratings, and games that follow the player to any device.

- **Names** are NFKC-normalised (so a full-width ``Ａｎｎ`` is ``Ann``), then 3–20 ASCII letters, digits,
  ``-`` or ``_``, beginning and ending with a letter or digit, and unique ignoring case (``name_key``).
  ASCII only, as on lichess: a name is part of a URL (``/@/<name>``), and letters from other scripts
  would let one player take a name that looks like another's (a Cyrillic ``а`` for a Latin ``a``).
- **Passwords**: at least 8 characters (after NFKC, so that the same password typed on another keyboard
  still matches), at most 256 (hashing is the server's work, bounded like everything a client sends),
  not the name, and not among the most common passwords (``common-passwords.txt``, one a line).
- **Kept** only as Argon2id hashes (argon2-cffi, OWASP's minimum parameters: 19 MiB, 2 passes, 1 lane),
  computed on threads of their own, never on the event loop, shared fairly (:class:`Passwords`).
- **Sessions** are random tokens in an ``HttpOnly`` cookie; the database keeps only their SHA-256, so a
  copy of it opens no session.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import heapq
import re
import secrets
import unicodedata
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, TypeVar

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from .cookies import SESSION
from .errors import GameError
from .i18n import LANGUAGES, catalog

__all__ = [
    "NAME_MAX",
    "NAME_MIN",
    "PASSWORD_MAX",
    "PASSWORD_MIN",
    "SESSION_COOKIE",
    "Passwords",
    "check_name",
    "check_password",
    "computer_names",
    "passes_for",
    "name_key",
    "new_session_token",
    "session_key",
]

T = TypeVar("T")

NAME_MIN, NAME_MAX = 3, 20
PASSWORD_MIN, PASSWORD_MAX = 8, 256
SESSION_COOKIE = SESSION  # its name over plain HTTP; over HTTPS __Host-koikoi_session (koikoi.web.cookies)

_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_-]{1,18})[A-Za-z0-9]")
_TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(32)
# Names that would pass for the house: the computer players, staff, or nobody in particular.
RESERVED = frozenset(
    {
        "admin",
        "administrator",
        "anonymous",
        "computer",
        "easy",
        "expert",
        "guest",
        "hard",
        "koikoi",
        "koi-koi",
        "medium",
        "moderator",
        "nobody",
        "random",
        "root",
        "server",
        "staff",
        "system",
    }
)


def check_name(raw: object) -> str:
    """The account name ``raw`` stands for, normalised; a :class:`GameError` ``bad_name`` saying what is
    wrong otherwise."""
    if not isinstance(raw, str):
        raise GameError("bad_account_name", "a name is a string of 3 to 20 letters, digits, '-' or '_'", 422)
    if len(raw) > 4 * NAME_MAX:  # before normalising: bound the work
        raise GameError("bad_account_name", f"a name has at most {NAME_MAX} characters", 422)
    name = unicodedata.normalize("NFKC", raw).strip()
    if not NAME_MIN <= len(name) <= NAME_MAX:
        raise GameError("bad_account_name", f"a name has {NAME_MIN} to {NAME_MAX} characters", 422)
    if not _NAME.fullmatch(name):
        raise GameError(
            "bad_account_name",
            "a name has only letters a-z, digits, '-' and '_', and begins and ends with a letter or digit",
            422,
        )
    if name_key(name) in RESERVED or name_key(name) in computer_names():
        raise GameError("bad_account_name", f"the name {name!r} is kept for the server", 422)
    return name


@cache
def computer_names() -> frozenset[str]:
    """The computer players' names in every language the pages speak, keyed as names are (:func:`name_key`)
    and as they would be typed in ASCII: Ryū is ``ryū``, ``ryu`` and ``ryuu``. Nobody may sign up as, or
    sit at a table under, the name of one of the computer players."""
    out: set[str] = set()
    for lang in LANGUAGES:
        for key, name in catalog(lang).items():
            if not key.startswith("computer.name."):
                continue
            out.add(name_key(unicodedata.normalize("NFKC", name)))
            plain, long = "", ""
            for ch in unicodedata.normalize("NFKD", name):
                if ch == "\u0304" and long:  # a macron: the vowel is long, written twice
                    long += long[-1]
                if not unicodedata.combining(ch):
                    plain, long = plain + ch, long + ch
            out |= {name_key(plain), name_key(long)}
    return frozenset(out)


def passes_for(raw: object) -> tuple[str | None, bool]:
    """Whom the name a guest typed could pass for: the account name it would be (keyed as account names
    are; None for text no account could have, such as ``Ann Smith``), and whether it is a computer
    player's name in some language."""
    if not isinstance(raw, str) or len(raw) > 4 * NAME_MAX:
        return None, False
    name = " ".join(unicodedata.normalize("NFKC", raw).split())
    return (name_key(name) if _NAME.fullmatch(name) else None), name_key(name) in computer_names()


def name_key(name: str) -> str:
    """What makes two names the same: case does not count."""
    return name.lower()


def check_password(raw: object, name: str) -> str:
    """The password ``raw`` stands for, normalised; a :class:`GameError` ``weak_password`` or
    ``bad_password`` saying what is wrong otherwise."""
    if not isinstance(raw, str):
        raise GameError("bad_password", "a password is a string", 422)
    if len(raw) > PASSWORD_MAX:
        raise GameError("bad_password", f"a password has at most {PASSWORD_MAX} characters", 422)
    password = unicodedata.normalize("NFKC", raw)
    if len(password) < PASSWORD_MIN:
        raise GameError("weak_password", f"a password has at least {PASSWORD_MIN} characters", 422)
    if password.lower() == name.lower():
        raise GameError("weak_password", "a password must not be the name", 422)
    if not password.strip():
        raise GameError("weak_password", "a password must not be only spaces", 422)
    if len(set(password)) == 1:
        raise GameError("weak_password", "a password must not be one character repeated", 422)
    if password.lower() in common_passwords():
        raise GameError("weak_password", "this password is among the most common ones: choose another", 422)
    return password


def normalised_password(raw: str) -> str:
    """A password as it was hashed (for signing in: no checks but the length, done by the caller)."""
    return unicodedata.normalize("NFKC", raw)


@cache
def common_passwords() -> frozenset[str]:
    text = resources.files(__package__).joinpath("common-passwords.txt").read_text(encoding="utf-8")
    return frozenset(line.strip().lower() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def new_session_token() -> str:
    return secrets.token_urlsafe(32)


def session_key(token: str) -> str | None:
    """What the database keeps of a session token (its SHA-256); None for anything not shaped like one."""
    if not isinstance(token, str) or not _TOKEN.fullmatch(token):
        return None
    return hashlib.sha256(token.encode()).hexdigest()


def _decoy_hash(hasher: PasswordHasher) -> str:
    """An Argon2id hash string with ``hasher``'s parameters and a random salt and digest: verifying a
    password against it costs what a real one does, and no password matches it (``_verify`` says no for
    a missing account anyway). Written out rather than computed: hashing a throwaway password at every
    start cost a fifth of a second of CPU."""

    def b64(n: int) -> str:  # the PHC string format: standard base64 without padding
        return base64.b64encode(secrets.token_bytes(n)).decode("ascii").rstrip("=")

    return (
        f"$argon2id$v=19$m={hasher.memory_cost},t={hasher.time_cost},p={hasher.parallelism}"
        f"${b64(hasher.salt_len)}${b64(hasher.hash_len)}"
    )


# Who goes first for the hashing threads (lower first): a browser that signed in to the account before
# (its device cookie), then anyone naming an account (or signing up, or changing a password), then sign-ins
# to names that have no account, which a flood of made-up names would otherwise be all of.
KNOWN_BROWSER, KNOWN_NAME, UNKNOWN_NAME = 0, 1, 2
# OWASP's Argon2id minimum (m = 19 MiB, t = 2, p = 1): about 20 ms a hash on the reference machine, where
# RFC 9106's second recommendation (64 MiB, t = 3, p = 4) took 115 ms; hashes made with other parameters
# are made again at the next sign-in (Passwords.needs_rehash).
ARGON2_TIME, ARGON2_MEMORY_KIB, ARGON2_LANES = 2, 19 * 1024, 1


@dataclass(order=True)
class _Turn:
    rank: int
    seq: int
    ready: asyncio.Future[None] = field(compare=False)


class Passwords:
    """Argon2id hashing on a few threads of its own (argon2-cffi releases the GIL while it works), so
    that a sign-in never holds up the event loop, shared fairly: at most ``max_pending`` wait or run, of
    which at most ``per_address`` from one client address and ``unknown_share`` for names that have no
    account (the rest are refused, 503 ``busy``), and the threads take the waiting by rank
    (:data:`KNOWN_BROWSER` first), then in order of coming."""

    def __init__(
        self, threads: int = 2, max_pending: int = 32, *, per_address: int = 4, unknown_share: int = 8
    ) -> None:
        self.hasher = PasswordHasher(time_cost=ARGON2_TIME, memory_cost=ARGON2_MEMORY_KIB, parallelism=ARGON2_LANES)
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="koikoi-argon2")
        self._threads = threads
        self._running = 0
        self._waiting: list[_Turn] = []
        self._seq = 0
        self._pending = 0
        self._by_address: dict[str, int] = {}
        self._unknown = 0
        self.max_pending = max_pending
        self.per_address = per_address
        self.unknown_share = unknown_share
        # Checked when a name has no account, so that the answer takes as long as a wrong password.
        self.decoy = _decoy_hash(self.hasher)

    async def _run(self, fn: Callable[..., T], *args: Any, address: str = "", rank: int = KNOWN_NAME) -> T:
        if (
            self._pending >= self.max_pending
            or self._by_address.get(address, 0) >= self.per_address
            or (rank == UNKNOWN_NAME and self._unknown >= self.unknown_share)
        ):
            raise GameError("busy", "too many sign-ins at once: try again in a moment", 503)
        self._pending += 1
        self._by_address[address] = self._by_address.get(address, 0) + 1
        self._unknown += rank == UNKNOWN_NAME
        try:
            await self._turn(rank)
            try:
                return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)
            finally:
                self._next()
        finally:
            self._pending -= 1
            self._unknown -= rank == UNKNOWN_NAME
            left = self._by_address[address] - 1
            if left:
                self._by_address[address] = left
            else:
                del self._by_address[address]

    async def _turn(self, rank: int) -> None:
        """Wait for a free thread: at once if one is, else until :meth:`_next` hands this one over."""
        if self._running < self._threads and not self._waiting:
            self._running += 1
            return
        self._seq += 1
        turn = _Turn(rank, self._seq, asyncio.get_running_loop().create_future())
        heapq.heappush(self._waiting, turn)
        try:
            await turn.ready
        except asyncio.CancelledError:
            if turn.ready.done() and not turn.ready.cancelled():
                self._next()  # it was handed a thread as it was given up: hand that on
            raise

    def _next(self) -> None:
        """A thread is free: the best waiting turn takes it, or nobody does."""
        while self._waiting:
            turn = heapq.heappop(self._waiting)
            if not turn.ready.done():
                turn.ready.set_result(None)
                return
        self._running -= 1

    async def hash(self, password: str, *, address: str = "") -> str:
        return await self._run(self.hasher.hash, password, address=address)

    async def verify(
        self, stored: str | None, password: str, *, address: str = "", known_browser: bool = False
    ) -> bool:
        """Whether ``password`` matches the ``stored`` hash (None: no such account; as slow as a miss).
        ``address`` and ``known_browser`` (a device cookie of this account) decide its place in line."""
        rank = KNOWN_BROWSER if known_browser else UNKNOWN_NAME if stored is None else KNOWN_NAME
        return await self._run(self._verify, stored, password, address=address, rank=rank)

    def _verify(self, stored: str | None, password: str) -> bool:
        try:
            self.hasher.verify(stored if stored is not None else self.decoy, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False
        return stored is not None

    def needs_rehash(self, stored: str) -> bool:
        return self.hasher.check_needs_rehash(stored)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
