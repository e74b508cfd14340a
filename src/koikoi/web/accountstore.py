"""Accounts and their sessions in the database (the tables ``accounts`` and ``sessions`` of
:mod:`koikoi.web.store`); every method runs on a database thread (:class:`~koikoi.web.database.Database`).

A signed-in browser plays as its account: the account's *owner key* (``a:<account id>``) stands where a
guest's browser id stands in a seat's ``owner``, so every list of "my games" and every limit on them
works the same for both. Signing up or in moves the browser's guest games to the account; they then
follow the player to any device they sign in on.

Failed sign-ins are counted in the database, so that the limits on guessing a password hold across every
server process: those from browsers the account does not know on the account itself (after
:data:`UNKNOWN_FREE` of them, such browsers wait before the next, longer with each more), and those from
a browser that signed in to it before (its device cookie, :mod:`koikoi.web.devices`) for that browser
alone. Nobody's guessing keeps the owner's own browsers out: OWASP's device cookies, not a lock.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Row, delete, func, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from .schema import accounts, device_failures, games, rated_games, seats, sessions
from .store import Store, StoreError, result_for

__all__ = ["Account", "AccountStore", "Login", "owner_key"]

SESSION_IDLE = timedelta(days=30)  # a session not used for this long has ended
SEEN_EVERY = timedelta(hours=1)  # how often a session's last use is written (not on every request)
SESSIONS_PER_ACCOUNT = 20  # the oldest-used goes when a sign-in would make one more
FAILED_WINDOW = timedelta(minutes=30)  # failures are counted over this long, then forgotten
UNKNOWN_FREE = 5  # wrong passwords from unknown browsers within FAILED_WINDOW before such browsers wait
WAIT_FIRST = timedelta(seconds=15)  # ... that long after the next, twice as long after each more,
WAIT_MAX = timedelta(minutes=15)  # ... up to this
DEVICE_FAILURES_MAX = 10  # wrong passwords from one known browser within FAILED_WINDOW; then it waits too


def owner_key(account_id: str) -> str:
    """What stands for an account in a seat's ``owner`` (never a browser id: those have no colon)."""
    return f"a:{account_id}"


@dataclass(frozen=True, slots=True)
class Account:
    id: str
    name: str
    created: datetime

    @property
    def owner(self) -> str:
        return owner_key(self.id)


@dataclass(frozen=True, slots=True)
class Login:
    """What a sign-in needs to know of the account a name stands for."""

    account: Account
    password_hash: str
    disabled: bool
    locked_until: datetime | None  # too many wrong passwords from unknown browsers: they wait until then


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(at: datetime | None) -> datetime | None:
    if at is not None and at.tzinfo is None:
        return at.replace(tzinfo=UTC)
    return at


class AccountStore:
    """The accounts of the database behind ``store``."""

    def __init__(self, store: Store) -> None:
        self.engine = store.engine

    # -- accounts --------------------------------------------------------------------------------------

    def create(self, name: str, key: str, password_hash: str, browser: str | None, session: str) -> Account:
        """A new account, signed in with the session whose key is ``session``, holding the games of
        ``browser``; :class:`StoreError` (``conflict``) if the name is taken."""
        now = _now()
        account = Account(secrets.token_hex(16), name, now)
        try:
            with self.engine.begin() as conn:
                conn.execute(
                    insert(accounts).values(
                        id=account.id,
                        name=name,
                        name_key=key,
                        password_hash=password_hash,
                        created=now,
                        failed_logins=0,
                    )
                )
                conn.execute(insert(sessions).values(key=session, account_id=account.id, created=now, seen=now))
                if browser is not None:
                    _adopt_games(conn, account.id, browser)
        except IntegrityError:
            raise StoreError(f"the name {name!r} is taken", conflict=True) from None
        return account

    def login_of(self, key: str) -> Login | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(accounts).where(accounts.c.name_key == key)).first()
        if row is None:
            return None
        until = _aware(row.failed_until)
        locked = until if until is not None and until > _now() else None
        return Login(
            Account(row.id, row.name, _aware(row.created) or _now()),
            row.password_hash,
            row.disabled is not None,
            locked,
        )

    def failed(self, account_id: str) -> datetime | None:
        """One more wrong password from a browser the account does not know; the count starts again once
        FAILED_WINDOW has passed. Returns until when such browsers now wait (None: they do not)."""
        now = _now()
        with self.engine.begin() as conn:
            row = conn.execute(
                select(accounts.c.failed_logins, accounts.c.failed_since)
                .where(accounts.c.id == account_id)
                .with_for_update()
            ).first()
            if row is None:
                return None
            since = _aware(row.failed_since)
            count = 1 if since is None or since + FAILED_WINDOW <= now else row.failed_logins + 1
            until = None
            if count >= UNKNOWN_FREE:
                until = now + min(WAIT_MAX, WAIT_FIRST * 2 ** (count - UNKNOWN_FREE))
            values: dict[str, Any] = {"failed_logins": count, "failed_until": until}
            if count == 1:
                values["failed_since"] = now
            conn.execute(update(accounts).where(accounts.c.id == account_id).values(**values))
        return until

    def device_waits(self, device: str) -> datetime | None:
        """Until when a known browser waits after :data:`DEVICE_FAILURES_MAX` wrong passwords of its own
        (None: it does not)."""
        with self.engine.connect() as conn:
            row = conn.execute(select(device_failures).where(device_failures.c.device == device)).first()
        if row is None or row.failures < DEVICE_FAILURES_MAX:
            return None
        until = (_aware(row.since) or _now()) + FAILED_WINDOW
        return until if until > _now() else None

    def device_failed(self, device: str, account_id: str) -> None:
        """One more wrong password from the known browser ``device`` of ``account_id``."""
        now = _now()
        try:
            with self.engine.begin() as conn:
                row = conn.execute(
                    select(device_failures.c.since).where(device_failures.c.device == device).with_for_update()
                ).first()
                if row is None:
                    # The account's other browsers' counts that have run out go first: the table holds
                    # only counts that still matter.
                    conn.execute(
                        delete(device_failures).where(
                            (device_failures.c.account_id == account_id)
                            & (device_failures.c.since <= now - FAILED_WINDOW)
                        )
                    )
                    first = {"device": device, "account_id": account_id, "failures": 1, "since": now}
                    conn.execute(insert(device_failures).values(**first))
                    return
                since = _aware(row.since)
                values: dict[str, Any] = (
                    {"failures": 1, "since": now}
                    if since is None or since + FAILED_WINDOW <= now
                    else {"failures": device_failures.c.failures + 1}
                )
                conn.execute(update(device_failures).where(device_failures.c.device == device).values(**values))
        except IntegrityError:
            pass  # the same browser's other wrong password at the same moment counted first: one is enough

    def signed_in(
        self,
        account_id: str,
        session: str,
        browser: str | None,
        new_hash: str | None = None,
        device: str | None = None,
    ) -> None:
        """A sign-in that succeeded: a new session, the failures forgotten, the browser's games adopted,
        the password's hash replaced when hashing has been made stronger since. From a known browser
        (``device``), only that browser's failures are forgotten: the owner signing in does not give
        whoever is guessing from elsewhere a fresh start."""
        now = _now()
        with self.engine.begin() as conn:
            values: dict[str, object] = {}
            if device is not None:
                conn.execute(delete(device_failures).where(device_failures.c.device == device))
            else:
                values.update(failed_logins=0, failed_since=None, failed_until=None)
            if new_hash is not None:
                values["password_hash"] = new_hash
            if values:
                conn.execute(update(accounts).where(accounts.c.id == account_id).values(**values))
            _prune_sessions(conn, account_id, keep=SESSIONS_PER_ACCOUNT - 1)
            conn.execute(insert(sessions).values(key=session, account_id=account_id, created=now, seen=now))
            if browser is not None:
                _adopt_games(conn, account_id, browser)

    def set_password(self, account_id: str, password_hash: str, keep_session: str | None = None) -> None:
        """A new password; every session but ``keep_session`` ends."""
        with self.engine.begin() as conn:
            conn.execute(
                update(accounts)
                .where(accounts.c.id == account_id)
                .values(password_hash=password_hash, failed_logins=0, failed_since=None, failed_until=None)
            )
            q = delete(sessions).where(sessions.c.account_id == account_id)
            if keep_session is not None:
                q = q.where(sessions.c.key != keep_session)
            conn.execute(q)

    def set_disabled(self, account_id: str, disabled: bool) -> None:
        """Disable an account (its sessions end, it cannot sign in) or enable it again."""
        with self.engine.begin() as conn:
            conn.execute(
                update(accounts).where(accounts.c.id == account_id).values(disabled=_now() if disabled else None)
            )
            if disabled:
                conn.execute(delete(sessions).where(sessions.c.account_id == account_id))

    def listing(self, limit: int = 1000) -> list[dict[str, object]]:
        """Every account (for ``koikoi admin``): name, created, disabled, sessions open, a bot's or not."""
        open_sessions = (
            select(sessions.c.account_id, func.count().label("n")).group_by(sessions.c.account_id).subquery()
        )
        q = (
            select(accounts.c.name, accounts.c.created, accounts.c.disabled, accounts.c.bot_since, open_sessions.c.n)
            .outerjoin(open_sessions, open_sessions.c.account_id == accounts.c.id)
            .order_by(accounts.c.name_key)
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [
                {
                    "name": r.name,
                    "created": _aware(r.created),
                    "disabled": r.disabled is not None,
                    "sessions": r.n or 0,
                    "bot": r.bot_since is not None,
                }
                for r in conn.execute(q)
            ]

    # -- sessions --------------------------------------------------------------------------------------

    def session(self, key: str) -> Account | None:
        """The account signed in with the session ``key``, if it is open (used within SESSION_IDLE, the
        account not disabled); its last use noted at most every SEEN_EVERY."""
        now = _now()
        q = (
            select(sessions.c.seen, accounts.c.id, accounts.c.name, accounts.c.created, accounts.c.disabled)
            .join(accounts, accounts.c.id == sessions.c.account_id)
            .where(sessions.c.key == key)
        )
        with self.engine.connect() as conn:
            row = conn.execute(q).first()
        if row is None or row.disabled is not None:
            return None
        seen = _aware(row.seen) or now
        if seen + SESSION_IDLE <= now:
            self.end_session(key)
            return None
        if seen + SEEN_EVERY <= now:
            with self.engine.begin() as conn:
                conn.execute(update(sessions).where(sessions.c.key == key).values(seen=now))
        return Account(row.id, row.name, _aware(row.created) or now)

    def end_session(self, key: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(delete(sessions).where(sessions.c.key == key))

    def end_sessions(self, account_id: str) -> int:
        """End every session of the account (signed out everywhere); how many there were."""
        with self.engine.begin() as conn:
            return conn.execute(delete(sessions).where(sessions.c.account_id == account_id)).rowcount or 0

    def account_named(self, key: str) -> Account | None:
        login = self.login_of(key)
        return None if login is None else login.account

    # -- games -----------------------------------------------------------------------------------------

    def recent_games(self, account_id: str, limit: int = 20) -> list[dict[str, Any]]:
        """The account's last ``limit`` games against a person (both seats human: never its games against
        the computer), the most recently changed first, for its player page (routes/players.py).

        Each is a dict: ``game_id``, ``updated``, ``status``, ``seat`` (the account's), ``token`` (that
        seat's secret: for the player's own eyes only, never for a page others see), ``opponent`` (the
        other seat's name; None while nobody has accepted the invitation), ``opponent_account`` (the
        opponent's account name, None for a guest), ``opponent_bot`` (that account is a bot's), ``preset``,
        ``hands`` and ``target_score`` (None where the stored rules cannot be read), ``scores`` (the
        account's first; None if unreadable), ``result`` (:func:`~koikoi.web.store.result_for`: ``won``,
        ``lost`` or ``draw`` once finished; None before, and for a game with no result), ``rated`` and
        ``category`` (None when unrated). A game whose two seats are both the account's is listed once,
        from its first seat.
        """
        owner = owner_key(account_id)
        # The account's seat in each game: its first, should it hold both.
        mine = (
            select(seats.c.game_id, func.min(seats.c.seat).label("seat"))
            .where(seats.c.owner == owner)
            .group_by(seats.c.game_id)
            .subquery()
        )
        me, other = seats.alias("me"), seats.alias("other")
        q = (
            select(
                games.c.id,
                games.c.updated,
                games.c.status,
                games.c.rules,
                games.c.scores,
                games.c.ending,
                games.c.winner,
                me.c.seat,
                me.c.token,
                other.c.name.label("other_name"),
                other.c.owner.label("other_owner"),
                rated_games.c.category,
            )
            .join(mine, mine.c.game_id == games.c.id)
            .join(me, (me.c.game_id == games.c.id) & (me.c.seat == mine.c.seat))
            .join(other, (other.c.game_id == games.c.id) & (other.c.seat != mine.c.seat))
            .outerjoin(rated_games, rated_games.c.game_id == games.c.id)
            .where(games.c.opponent == "friend", other.c.kind == "human")
            .order_by(games.c.updated.desc(), games.c.id)
            .limit(limit)
        )
        with self.engine.connect() as conn:
            rows = conn.execute(q).all()
            ids = {r.other_owner[2:] for r in rows if r.other_owner and r.other_owner.startswith("a:")}
            found: Iterable[Row[Any]] = (
                conn.execute(select(accounts.c.id, accounts.c.name, accounts.c.bot_since).where(accounts.c.id.in_(ids)))
                if ids
                else []
            )
            names, bots = {}, set()
            for a in found:
                names[a.id] = a.name
                if a.bot_since is not None:
                    bots.add(a.id)
        listed = []
        for r in rows:
            preset, hands, target, rules = _rules_shown(r.rules)
            stored = _scores(r.scores)
            result = result_for(r.status, r.ending, r.winner, stored, r.seat)
            scores = None if stored is None else (stored[r.seat], stored[1 - r.seat])
            joined = r.other_owner is not None  # an invited seat has no owner until someone accepts
            listed.append(
                {
                    "game_id": r.id,
                    "updated": _aware(r.updated) if isinstance(r.updated, datetime) else None,
                    "status": r.status,
                    "seat": r.seat,
                    "token": r.token,
                    "opponent": r.other_name if joined else None,
                    "opponent_account": names.get(r.other_owner[2:])
                    if joined and r.other_owner.startswith("a:")
                    else None,
                    "opponent_bot": joined and r.other_owner[2:] in bots,
                    "preset": preset,
                    "rules": rules,
                    "hands": hands,
                    "target_score": target,
                    "scores": scores,
                    "result": result,
                    "rated": r.category is not None,
                    "category": r.category,
                }
            )
        return listed


def _rules_shown(text: object) -> tuple[str | None, int | None, int | None, dict[str, Any] | None]:
    """A stored rule set's name, hands and target score, and the rule set itself (koikoi.web.rulelabels
    words it); None for what cannot be read (damage)."""
    try:
        rules = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        rules = None
    if not isinstance(rules, dict):
        return None, None, None, None

    def number(value: object) -> int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10_000 else None

    name = rules.get("name")
    return (
        (name if isinstance(name, str) and name else None),
        number(rules.get("hands")),
        number(rules.get("target_score")),
        rules,
    )


def _scores(text: object) -> tuple[int, int] | None:
    """A game's stored "s0,s1"; None if it is damaged."""
    try:
        s0, s1 = str(text).split(",")
        return int(s0), int(s1)
    except ValueError:
        return None


def _adopt_games(conn: Connection, account_id: str, browser: str) -> None:
    """The guest games of ``browser`` become the account's."""
    conn.execute(update(seats).where(seats.c.owner == browser).values(owner=owner_key(account_id)))


def _prune_sessions(conn: Connection, account_id: str, keep: int) -> None:
    """At most ``keep`` sessions of the account stay: the least recently used go."""
    stale = (
        select(sessions.c.key)
        .where(sessions.c.account_id == account_id)
        .order_by(sessions.c.seen.desc(), sessions.c.key)
        .offset(keep)
    )
    keys = [r.key for r in conn.execute(stale)]
    if keys:
        conn.execute(delete(sessions).where(sessions.c.key.in_(keys)))
