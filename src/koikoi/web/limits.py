"""The server's limits: how much one client may ask of it, and how much it keeps in memory.

Every limit has a default fit for a server on the internet and can be changed with ``koikoi serve
--limit NAME=VALUE`` (``docs/web.md``, "Deploying", lists them). A request over a limit is refused
with 429 (too many), 413 (too large) or 422 (a value out of range) and a message that names the limit.
"""

from __future__ import annotations

import dataclasses
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, cast

__all__ = ["Limits", "LimitError", "RateLimiter", "Counter", "parse_limit"]


def _limit(default: Any, doc: str, lo: float = 0, hi: float = 10**9) -> Any:
    return field(default=default, metadata={"doc": doc, "min": lo, "max": hi})


@dataclass(frozen=True)
class Limits:
    """What one client may do and what the server holds; ``Limits.docs()`` describes each."""

    games_per_minute: int = _limit(20, "games one client address may create per minute", 1)
    open_games_per_browser: int = _limit(50, "unfinished games one browser may hold at once", 1)
    sockets_per_seat: int = _limit(4, "WebSockets open at once on one seat (tabs, devices)", 1)
    sockets_per_address: int = _limit(64, "WebSockets open at once from one client address", 1)
    connections_per_address: int = _limit(64, "HTTP connections held open at once by one client address", 1)
    proxy_connections: int = _limit(
        2000,
        "HTTP connections held open at once by a proxy named by --forwarded-allow-ips (all its clients' together)",
        1,
    )
    max_connections: int = _limit(4096, "connections and requests in progress, all clients together", 16)
    messages_per_second: float = _limit(10.0, "WebSocket messages one socket may send per second, sustained", 0.1)
    message_burst: int = _limit(40, "WebSocket messages one socket may send at once before the rate applies", 1)
    http_actions_per_second: float = _limit(
        10.0, "actions one client address may send over HTTP per second, sustained (as messages on a socket)", 0.1
    )
    http_action_burst: int = _limit(40, "actions one client address may send over HTTP at once", 1)
    replays_per_minute: int = _limit(
        30, "replays, record downloads and record uploads one client address may ask for per minute", 1
    )
    hints_pending: int = _limit(8, "hint searches waiting or running, all games together", 1)
    reviews_running: int = _limit(2, "game reviews being worked out at once, all games together", 1, 64)
    review_playouts: int = _limit(0, "playouts per decision of a game review (0: the expert level's)", 0, 10**6)
    review_record_decisions: int = _limit(
        400, "decisions of one player that the review of an uploaded record judges at most", 1, 100_000
    )
    header_timeout: float = _limit(10.0, "seconds a client has to send a request's headers", 0.5, 600)
    body_timeout: float = _limit(20.0, "seconds a client has to send a request's body", 0.5, 600)
    keep_alive: int = _limit(5, "seconds an idle HTTP connection is kept open", 1, 600)
    header_bytes: int = _limit(16384, "bytes of request line and headers", 1024, 1 << 20)
    json_bytes: int = _limit(65536, "bytes of a JSON request body", 1024, 1 << 24)
    record_bytes: int = _limit(2 * 1024 * 1024, "bytes of an uploaded game record", 1024, 1 << 26)
    message_bytes: int = _limit(4096, "characters of one WebSocket message", 256, 1 << 20)
    unread_bytes: int = _limit(
        262144, "bytes written to a WebSocket and not yet read, past which the server closes it", 65536, 1 << 26
    )
    live_games: int = _limit(2000, "games kept in memory; idle ones beyond this go back to the database", 10)
    idle_seconds: float = _limit(600.0, "seconds after which a game nobody watches leaves memory", 1)
    ai_processes: int = _limit(2, "worker processes for the computer's moves and hints", 1, 64)
    page_size: int = _limit(50, "games listed per page of the lobby", 1, 500)
    signups_per_hour: int = _limit(5, "accounts one client address may create per hour", 1)
    logins_per_minute: int = _limit(
        10,
        "sign-ins (and password changes) one client address may try per minute; each account also "
        "takes at most 10 wrong passwords in 30 minutes",
        1,
    )
    seeks_per_player: int = _limit(
        3, "open seeks one player (an account, or a guest's browser) may have in the lobby", 1, 100
    )
    seeks_per_minute: int = _limit(
        30,
        "seeks and quick-pairing requests one client address may make per minute (an accepted seek is a game)",
        1,
    )
    lobby_sockets: int = _limit(5000, "lobby WebSockets open at once on one server process, all clients together", 1)
    lobby_opens_per_minute: int = _limit(
        60, "lobby WebSockets one client address may open per minute (as many at once), sustained", 1
    )
    computer_offer_seconds: float = _limit(
        15.0, "seconds a player waits in quick pairing before the page offers a computer opponent", 1, 3600
    )
    claim_seconds: float = _limit(
        40.0, "seconds a player must have been away on their own turn before the other may claim victory", 1, 3600
    )
    claim_closed_seconds: float = _limit(
        10.0, "the same, when the away player closed the tab (the server saw the page leave)", 1, 3600
    )
    invitation_seconds: float = _limit(86400.0, "seconds a friend's invitation stays open before it expires", 60)
    idle_game_seconds: float = _limit(
        30 * 86400.0, "seconds without a move after which an unfinished casual game is closed", 60
    )
    database_seconds: float = _limit(
        2.0, "seconds a request waits for the database before it is answered unavailable (503)", 0.1, 60
    )
    spectators_per_game: int = _limit(
        200, "spectators of one game at once, all server processes together (counted in the database)", 1, 100000
    )
    watch_sockets_per_address: int = _limit(16, "spectator WebSockets open at once from one client address", 1)
    watch_sockets: int = _limit(5000, "spectator WebSockets open at once on one server process, all games together", 1)
    chat_per_minute: float = _limit(
        12.0, "chat messages one person (a seat's player, a signed-in spectator) may send per minute, sustained", 0.1
    )
    chat_burst: int = _limit(4, "chat messages one person may send at once before chat_per_minute applies", 1, 1000)
    chat_messages_per_game: int = _limit(
        1000, "chat messages kept in one game's players' room; more are refused", 1, 100000
    )
    spectator_chat_per_game: int = _limit(
        1000, "chat messages kept in one game's spectators' room (a budget of its own); more are refused", 1, 100000
    )
    chat_messages_per_spectator: int = _limit(
        100, "chat messages one spectator may write in one game's spectators' room", 1, 100000
    )
    puzzles_per_minute: float = _limit(
        30.0, "puzzle requests (a new puzzle, an answer) one person and one client address may make per minute", 1.0
    )
    puzzle_burst: int = _limit(10, "puzzle requests one person may make at once before puzzles_per_minute applies", 1)
    lesson_moves_per_minute: float = _limit(
        60.0, "lesson moves (a position, a move judged) one person and one client address may ask per minute", 1.0
    )
    lesson_burst: int = _limit(20, "lesson moves one person may ask at once before lesson_moves_per_minute applies", 1)

    @classmethod
    def docs(cls) -> list[tuple[str, Any, str]]:
        """(name, default, description) of every limit, for the docs and ``--help``."""
        return [(f.name, f.default, f.metadata["doc"]) for f in dataclasses.fields(cls)]

    def with_changes(self, changes: dict[str, str]) -> Limits:
        """These limits with ``changes`` (text values, as typed on the command line) applied."""
        out: dict[str, Any] = {}
        fields = {f.name: f for f in dataclasses.fields(self)}
        for name, text in changes.items():
            f = fields.get(name.replace("-", "_"))
            if f is None:
                raise LimitError(f"no limit named {name!r}; the limits are {', '.join(fields)}")
            # Every limit is a whole number or a number (Limits' fields).
            kind = cast("type[int] | type[float]", type(f.default))
            try:
                value = kind(text)
            except ValueError:
                raise LimitError(
                    f"limit {f.name} takes {'a whole number' if kind is int else 'a number'}, not {text!r}"
                ) from None
            lo, hi = f.metadata["min"], f.metadata["max"]
            if not lo <= value <= hi:
                raise LimitError(f"limit {f.name} must be between {lo} and {hi}, not {text}")
            out[f.name] = value
        return dataclasses.replace(self, **out)


class LimitError(ValueError):
    """A limit set to something it cannot be."""


def parse_limit(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` from the command line."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise LimitError(f"a limit is NAME=VALUE, e.g. games_per_minute=30, not {text!r}")
    return name.strip(), value.strip()


class RateLimiter:
    """Token buckets by key: ``rate`` per second on average, ``burst`` at once.

    Remembers at most ``max_keys`` keys; the least recently seen are forgotten first (a forgotten key
    starts again with a full bucket, which only ever errs towards letting an honest client through).
    """

    def __init__(self, rate: float, burst: float, *, max_keys: int = 100_000) -> None:
        self.rate = rate
        self.burst = burst
        self.max_keys = max_keys
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def allow(self, key: str, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        tokens, at = self._buckets.pop(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - at) * self.rate)
        ok = tokens >= 1
        if ok:
            tokens -= 1
        self._buckets[key] = (tokens, now)
        if len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)
        return ok

    def retry_after(self, key: str) -> float:
        """Seconds until ``key`` may try again."""
        tokens, _at = self._buckets.get(key, (self.burst, 0.0))
        return max(0.0, (1 - tokens) / self.rate)


class Backoff:
    """Failures by key (a client address's wrong passwords): after ``free`` within ``window`` seconds, the
    key waits ``first`` seconds after the next, twice as long after each more, up to ``most``; forgotten
    once ``window`` has passed since its first. Remembers at most ``max_keys`` keys, as RateLimiter."""

    def __init__(self, free: int, first: float, most: float, window: float, *, max_keys: int = 100_000) -> None:
        self.free, self.first, self.most, self.window, self.max_keys = free, first, most, window, max_keys
        self._keys: OrderedDict[str, tuple[int, float, float]] = OrderedDict()  # (failures, since, until)

    def wait(self, key: str, now: float | None = None) -> float:
        """Seconds ``key`` must still wait (0: none)."""
        now = time.monotonic() if now is None else now
        _n, _since, until = self._keys.get(key, (0, now, 0.0))
        return max(0.0, until - now)

    def failed(self, key: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        n, since, _until = self._keys.pop(key, (0, now, 0.0))
        if now - since > self.window:
            n, since = 0, now
        n += 1
        until = now + min(self.most, self.first * 2 ** (n - self.free - 1)) if n > self.free else 0.0
        self._keys[key] = (n, since, until)
        if len(self._keys) > self.max_keys:
            self._keys.popitem(last=False)


class Counter:
    """How many of something each key holds now (connections by address, sockets by seat)."""

    def __init__(self) -> None:
        self._n: dict[str, int] = {}

    def get(self, key: str) -> int:
        return self._n.get(key, 0)

    def take(self, key: str, limit: int) -> bool:
        """Count one more for ``key`` if that stays within ``limit``; False (and nothing counted) if not."""
        n = self._n.get(key, 0)
        if n >= limit:
            return False
        self._n[key] = n + 1
        return True

    def give_back(self, key: str) -> None:
        n = self._n.get(key, 0) - 1
        if n <= 0:
            self._n.pop(key, None)
        else:
            self._n[key] = n
