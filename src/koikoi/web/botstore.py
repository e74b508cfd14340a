"""Bots online in the database: bot accounts, their API tokens and people's challenges to them (the columns
``accounts.bot_since`` and ``bot_owner``, the tables ``bot_tokens`` and ``challenges`` of
:mod:`koikoi.web.store`). Every method runs on a database thread (:class:`~koikoi.web.database.Database`).

A bot is an account like a person's (its name, its ratings, its games: its owner key ``a:<id>`` stands in
its seats) that never signs in: it has no password, and acts through tokens that only the bot API takes.
A token is kept as its SHA-256, as a session is. Accepting a challenge makes the game in the same
transaction that takes the challenge (``UPDATE ... WHERE status = 'open'``), so a challenge leads to one
game at most, whichever process or request accepts it.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from ..clocks import time_control
from ..rules import RuleSet
from .accountstore import Account, owner_key
from .pairing import category_of
from .schema import accounts, bot_tokens, challenges, clocks, games, rated_games, seats
from .store import BOT_CHANNEL, LOBBY_CHANNEL, Store, StoreError, insert_game, new_token

__all__ = [
    "BotInfo",
    "BotStore",
    "Challenge",
    "Challenger",
    "TokenCheck",
    "TooMany",
    "CHALLENGE_GONE",
    "CHALLENGE_LIFE",
    "ONLINE",
    "NO_PASSWORD",
]

ONLINE = timedelta(seconds=30)  # a bot whose token was used this recently (a stream renews it) is connected
SEEN_EVERY = timedelta(seconds=10)  # how often a token's last use is written (not on every request)
CHALLENGE_LIFE = timedelta(minutes=2)  # a challenge nobody answered ends after this long
CHALLENGE_GONE = timedelta(seconds=20)  # ... or when its challenger stopped asking after it this long
KEEP_ENDED = timedelta(hours=1)  # an ended challenge is kept this long, for its challenger to learn why
# ... and an accepted one as long as the lobby keeps a paired seek: the lobby lists the games being played
# that challenges and seeks made.
KEEP_ACCEPTED = timedelta(hours=6)
# What stands for a bot's password hash: no Argon2 hash looks like it, so no password ever matches.
NO_PASSWORD = "!bot: no password; plays through its tokens"
STATUSES = ("open", "accepted", "declined", "cancelled", "expired")


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(at: datetime | None) -> datetime | None:
    return at.replace(tzinfo=UTC) if at is not None and at.tzinfo is None else at


class TooMany(Exception):
    """A limit on bots, tokens or challenges reached: ``what`` says which, ``limit`` how many."""

    def __init__(self, what: str, limit: int) -> None:
        super().__init__(f"{what}: at most {limit}")
        self.what = what
        self.limit = limit


@dataclass(frozen=True, slots=True)
class BotInfo:
    """A bot's account as others may see it: who runs it (``owner_name``; None: the server's operator) and
    whether it is connected now."""

    id: str
    name: str
    created: datetime
    owner_id: str | None
    owner_name: str | None
    disabled: bool
    online: bool

    @property
    def account(self) -> Account:
        return Account(self.id, self.name, self.created)

    @property
    def owner(self) -> str:
        return owner_key(self.id)


@dataclass(frozen=True, slots=True)
class TokenCheck:
    """What a bearer token's key stands for: the bot (None: no such token), and whether it may act."""

    bot: BotInfo | None
    revoked: bool


@dataclass(frozen=True, slots=True)
class Challenger:
    owner: str  # an account's owner key, or a guest's browser id
    account_id: str | None
    name: str
    rating: float
    provisional: bool


@dataclass(frozen=True, slots=True)
class Challenge:
    id: str
    bot_id: str
    owner: str
    account_id: str | None
    name: str
    rules: dict[str, Any]
    rated: bool
    rating: float
    provisional: bool
    status: str
    reason: str | None
    created: datetime
    game_id: str | None
    token: str | None
    clock: str | None = None  # the time control its game is played with (koikoi.clocks); None: none

    @property
    def hands(self) -> int:
        hands = self.rules.get("hands", 0)
        return hands if type(hands) is int else 0

    def for_bot(self) -> dict[str, Any]:
        """What the bot is told of a challenge: nothing of who the challenger is but their name and rating."""
        rules = {k: v for k, v in self.rules.items() if k != "rules_version"}
        return {
            "id": self.id,
            "challenger": {
                "name": self.name,
                "account": self.account_id is not None,
                "rating": round(self.rating),
                "provisional": self.provisional,
            },
            "rules": rules,
            "preset": str(rules.get("name", "?")).removesuffix(" (custom)"),
            "custom": str(rules.get("name", "")).endswith(" (custom)"),
            "hands": self.hands,
            "rated": self.rated,
            "clock": self.clock,
            "category": category_of(self.hands),
            "created": self.created.isoformat(),
        }


def _challenge(row: Any) -> Challenge | None:
    """A stored row as a :class:`Challenge`; None when it cannot be read (it is then left out)."""
    try:
        rules = json.loads(row.rules)
        if not isinstance(rules, dict) or row.status not in STATUSES:
            raise ValueError("not a challenge")
        created = _aware(row.created)
        if not isinstance(created, datetime):
            raise ValueError("no date")
        return Challenge(
            id=str(row.id),
            bot_id=str(row.bot_id),
            owner=str(row.owner),
            account_id=None if row.account_id is None else str(row.account_id),
            name=str(row.name),
            rules=rules,
            rated=bool(row.rated),
            rating=float(row.rating),
            provisional=bool(row.provisional),
            status=str(row.status),
            reason=None if row.reason is None else str(row.reason),
            created=created,
            game_id=None if row.game_id is None else str(row.game_id),
            token=None if row.token is None else str(row.token),
            clock=None if getattr(row, "clock", None) is None else str(row.clock),
        )
    except (TypeError, ValueError, AttributeError):
        return None


# How a game's deal is made: its secret seed, the (unused: two people play) computer's seed, and the seat
# that moves first (whose clock runs first).
NewSeeds = Callable[[RuleSet], tuple[int, int, int]]


class BotStore:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = store.engine

    def _notify(self, conn: Connection, bot_ids: Iterable[str]) -> None:
        """Tell every process, when this transaction commits, that these bots have news (PostgreSQL)."""
        ids = sorted(set(bot_ids))
        if not self.store.is_sqlite and ids:
            conn.execute(select(*(func.pg_notify(BOT_CHANNEL, i) for i in ids)))

    # -- bots -------------------------------------------------------------------------------------------

    def make_bot(self, name: str, key: str, owner_id: str | None, *, max_bots: int | None = None) -> Account:
        """A new bot account named ``name`` (``key``: the name ignoring case), run by ``owner_id``'s account
        (None: by the server's operator). :class:`StoreError` (``conflict``) if the name is taken;
        :class:`TooMany` when the owner has ``max_bots`` already."""
        now = _now()
        account = Account(secrets.token_hex(16), name, now)
        try:
            with self.engine.begin() as conn:
                if owner_id is not None and max_bots is not None:
                    held = conn.execute(
                        select(func.count()).select_from(accounts).where(accounts.c.bot_owner == owner_id)
                    ).scalar_one()
                    if held >= max_bots:
                        raise TooMany("bots", max_bots)
                conn.execute(
                    insert(accounts).values(
                        id=account.id,
                        name=name,
                        name_key=key,
                        password_hash=NO_PASSWORD,
                        created=now,
                        failed_logins=0,
                        bot_since=now,
                        bot_owner=owner_id,
                    )
                )
        except IntegrityError:
            raise StoreError(f"the name {name!r} is taken", conflict=True) from None
        return account

    def _bots(self, conn: Connection, where: Any) -> list[BotInfo]:
        owners = accounts.alias("owners")
        seen = (
            select(bot_tokens.c.account_id, func.max(bot_tokens.c.seen).label("seen"))
            .where(bot_tokens.c.revoked.is_(None))
            .group_by(bot_tokens.c.account_id)
            .subquery()
        )
        q = (
            select(
                accounts.c.id,
                accounts.c.name,
                accounts.c.created,
                accounts.c.disabled,
                accounts.c.bot_owner,
                owners.c.name.label("owner_name"),
                seen.c.seen,
            )
            .outerjoin(owners, owners.c.id == accounts.c.bot_owner)
            .outerjoin(seen, seen.c.account_id == accounts.c.id)
            .where(accounts.c.bot_since.is_not(None) & where)
            .order_by(accounts.c.name_key)
        )
        now = _now()
        out = []
        for r in conn.execute(q):
            last = _aware(r.seen)
            out.append(
                BotInfo(
                    id=r.id,
                    name=r.name,
                    created=_aware(r.created) or now,
                    owner_id=r.bot_owner,
                    owner_name=r.owner_name,
                    disabled=r.disabled is not None,
                    online=r.disabled is None and isinstance(last, datetime) and last + ONLINE > now,
                )
            )
        return out

    def bot(self, account_id: str) -> BotInfo | None:
        """The bot whose account is ``account_id`` (None: no account, or a person's)."""
        with self.engine.connect() as conn:
            found = self._bots(conn, accounts.c.id == account_id)
        return found[0] if found else None

    def bot_named(self, key: str) -> BotInfo | None:
        """The bot named ``key`` (the name ignoring case); None for a person or nobody."""
        with self.engine.connect() as conn:
            found = self._bots(conn, accounts.c.name_key == key)
        return found[0] if found else None

    def bots_of(self, owner_id: str) -> list[tuple[BotInfo, list[dict[str, Any]]]]:
        """The bots ``owner_id`` runs, each with its tokens (:meth:`tokens_of`)."""
        with self.engine.connect() as conn:
            bots = self._bots(conn, accounts.c.bot_owner == owner_id)
            return [(b, self._tokens(conn, b.id)) for b in bots]

    def bot_ids(self, account_ids: Iterable[str]) -> set[str]:
        """Which of ``account_ids`` (at most 500 looked at) are bots'."""
        ids = sorted(set(account_ids))[:500]
        if not ids:
            return set()
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(accounts.c.id).where(accounts.c.id.in_(ids) & accounts.c.bot_since.is_not(None))
            ).all()
        return {r.id for r in rows}

    # -- tokens -----------------------------------------------------------------------------------------

    def add_token(self, bot_id: str, key: str, hint: str, *, max_tokens: int) -> None:
        """A new token for the bot (its hash ``key``); :class:`TooMany` past ``max_tokens`` live ones."""
        with self.engine.begin() as conn:
            live = conn.execute(
                select(func.count())
                .select_from(bot_tokens)
                .where((bot_tokens.c.account_id == bot_id) & bot_tokens.c.revoked.is_(None))
            ).scalar_one()
            if live >= max_tokens:
                raise TooMany("tokens", max_tokens)
            conn.execute(
                insert(bot_tokens).values(
                    key=key, account_id=bot_id, hint=hint, created=_now(), seen=None, revoked=None
                )
            )

    def _tokens(self, conn: Connection, bot_id: str) -> list[dict[str, Any]]:
        rows = conn.execute(
            select(bot_tokens.c.hint, bot_tokens.c.created, bot_tokens.c.seen, bot_tokens.c.revoked)
            .where(bot_tokens.c.account_id == bot_id)
            .order_by(bot_tokens.c.created.desc())
            .limit(50)
        ).all()
        return [
            {
                "hint": r.hint,
                "created": _aware(r.created),
                "seen": _aware(r.seen),
                "revoked": _aware(r.revoked),
            }
            for r in rows
        ]

    def tokens_of(self, bot_id: str) -> list[dict[str, Any]]:
        """The bot's tokens, newest first: ``hint`` (the token's first characters), ``created``, ``seen``
        (last used), ``revoked``. Never a token itself: only its hash is kept."""
        with self.engine.connect() as conn:
            return self._tokens(conn, bot_id)

    def revoke(self, bot_id: str, hint: str | None = None) -> int:
        """Revoke the bot's live token whose hint is ``hint`` (None: every one); how many were."""
        q = update(bot_tokens).where((bot_tokens.c.account_id == bot_id) & bot_tokens.c.revoked.is_(None))
        if hint is not None:
            q = q.where(bot_tokens.c.hint == hint)
        with self.engine.begin() as conn:
            n = conn.execute(q.values(revoked=_now())).rowcount or 0
            if n:
                self._notify(conn, [bot_id])  # its streams close
        return n

    def token(self, key: str) -> TokenCheck:
        """The bot whose token has the hash ``key``; its last use written at most every SEEN_EVERY."""
        now = _now()
        with self.engine.connect() as conn:
            row = conn.execute(
                select(bot_tokens.c.account_id, bot_tokens.c.seen, bot_tokens.c.revoked).where(bot_tokens.c.key == key)
            ).first()
            if row is None:
                return TokenCheck(None, False)
            found = self._bots(conn, accounts.c.id == row.account_id)
        bot = found[0] if found else None
        if bot is None or row.revoked is not None:
            return TokenCheck(bot, row.revoked is not None)
        seen = _aware(row.seen)
        if not isinstance(seen, datetime) or seen + SEEN_EVERY <= now:
            self.touch([key])
        return TokenCheck(bot, False)

    def touch(self, keys: list[str]) -> None:
        """These tokens are in use now (a stream open with each): their bots are connected."""
        if not keys:
            return
        with self.engine.begin() as conn:
            conn.execute(update(bot_tokens).where(bot_tokens.c.key.in_(keys[:500])).values(seen=_now()))

    def revoked(self, keys: list[str]) -> set[str]:
        """Which of ``keys`` have been revoked (or are gone) since: their streams end."""
        if not keys:
            return set()
        with self.engine.connect() as conn:
            live = {
                r.key
                for r in conn.execute(
                    select(bot_tokens.c.key)
                    .join(accounts, accounts.c.id == bot_tokens.c.account_id)
                    .where(
                        bot_tokens.c.key.in_(keys[:500])
                        & bot_tokens.c.revoked.is_(None)
                        & accounts.c.disabled.is_(None)
                    )
                )
            }
        return set(keys[:500]) - live

    # -- challenges ---------------------------------------------------------------------------------------

    def open_challenge(
        self,
        bot_id: str,
        challenger: Challenger,
        rules: RuleSet,
        *,
        rated: bool,
        per_challenger: int,
        per_bot: int,
        clock: str | None = None,
    ) -> Challenge:
        """A new challenge to the bot, its game to be played with the time control ``clock``;
        :class:`TooMany` ("this_bot" when the challenger has one waiting for this bot already, so that a
        few browsers cannot fill the bot's queue and keep everyone else out; "challenges" when the
        challenger has ``per_challenger`` open already; "bot" when the bot has ``per_bot`` waiting)."""
        now = _now()
        with self.engine.begin() as conn:
            if conn.execute(
                select(challenges.c.id).where(
                    (challenges.c.owner == challenger.owner)
                    & (challenges.c.bot_id == bot_id)
                    & (challenges.c.status == "open")
                )
            ).first():
                raise TooMany("this_bot", 1)
            mine = conn.execute(
                select(func.count())
                .select_from(challenges)
                .where((challenges.c.owner == challenger.owner) & (challenges.c.status == "open"))
            ).scalar_one()
            if mine >= per_challenger:
                raise TooMany("challenges", per_challenger)
            waiting = conn.execute(
                select(func.count())
                .select_from(challenges)
                .where((challenges.c.bot_id == bot_id) & (challenges.c.status == "open"))
            ).scalar_one()
            if waiting >= per_bot:
                raise TooMany("bot", per_bot)
            row: dict[str, Any] = {
                "id": new_token(12),
                "bot_id": bot_id,
                "owner": challenger.owner,
                "account_id": challenger.account_id,
                "name": challenger.name,
                "rules": json.dumps(rules.to_dict()),
                "rated": rated,
                "rating": challenger.rating,
                "provisional": challenger.provisional,
                "status": "open",
                "reason": None,
                "created": now,
                "seen": now,
                "game_id": None,
                "token": None,
                "clock": clock,
            }
            conn.execute(insert(challenges).values(**row))
            self._notify(conn, [bot_id])
        found = _challenge(_Row(row))
        assert found is not None
        return found

    def challenge(self, challenge_id: str) -> Challenge | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(challenges).where(challenges.c.id == challenge_id)).first()
        return None if row is None else _challenge(row)

    def asked(self, challenge_id: str, owner: str) -> Challenge | None:
        """The challenge ``challenge_id`` of ``owner``'s, asked after by them (which keeps it open)."""
        with self.engine.begin() as conn:
            conn.execute(
                update(challenges)
                .where((challenges.c.id == challenge_id) & (challenges.c.owner == owner))
                .where(challenges.c.status == "open")
                .values(seen=_now())
            )
            row = conn.execute(
                select(challenges).where((challenges.c.id == challenge_id) & (challenges.c.owner == owner))
            ).first()
        return None if row is None else _challenge(row)

    def end(
        self,
        challenge_id: str,
        status: str,
        *,
        owner: str | None = None,
        bot_id: str | None = None,
        reason: str | None = None,
    ) -> Challenge | None:
        """End an open challenge (``cancelled`` by its challenger ``owner``, ``declined`` by its ``bot_id``
        with ``reason``). Returns it as it now is; None when it is not theirs. Ended already, it is
        returned unchanged (its status says how it ended)."""
        with self.engine.begin() as conn:
            q = select(challenges).where(challenges.c.id == challenge_id)
            row = conn.execute(q if self.store.is_sqlite else q.with_for_update()).first()
            found = None if row is None else _challenge(row)
            if found is None or (owner is not None and found.owner != owner):
                return None
            if bot_id is not None and found.bot_id != bot_id:
                return None
            if found.status != "open":
                return found
            conn.execute(
                update(challenges)
                .where((challenges.c.id == challenge_id) & (challenges.c.status == "open"))
                .values(status=status, reason=reason)
            )
            self._notify(conn, [found.bot_id])
        return dataclasses.replace(found, status=status, reason=reason)

    def accept(
        self, challenge_id: str, bot: BotInfo, seeds: NewSeeds, *, max_games: int, seat: int
    ) -> tuple[Challenge, str, str]:
        """The bot accepts a challenge: its game made (the bot at ``seat``), the challenge taken, in one
        transaction. Returns the challenge as it was, the game's id and the bot's seat token.

        Raises :class:`StoreError` when it is no open challenge to this bot (``conflict``: it ended or was
        taken meanwhile), :class:`TooMany` ("games") when the bot or the challenger holds ``max_games``
        unfinished games."""
        with self.engine.begin() as conn:
            q = select(challenges).where(challenges.c.id == challenge_id)
            row = conn.execute(q if self.store.is_sqlite else q.with_for_update()).first()
            found = None if row is None else _challenge(row)
            if found is None or found.bot_id != bot.id:
                raise StoreError("there is no such challenge to this bot")
            if found.status != "open":
                raise StoreError(f"this challenge is {found.status} already", conflict=True)
            for owner in (bot.owner, found.owner):
                held = conn.execute(
                    select(func.count())
                    .select_from(games.join(seats, seats.c.game_id == games.c.id))
                    .where(seats.c.owner == owner, games.c.status.in_(("waiting", "playing")))
                ).scalar_one()
                if held >= max_games:
                    raise TooMany("games" if owner == bot.owner else "challenger_games", max_games)
            rules = {k: v for k, v in found.rules.items() if k != "rules_version"}
            seed, ai_seed, first = seeds(RuleSet.from_dict(rules))
            people = [(found.name, found.owner, found.account_id), (bot.name, bot.owner, bot.id)]
            if seat == 0:
                people.reverse()
            game_id, tokens, _ = insert_game(
                conn,
                rules=rules,
                seed=seed,
                opponent="friend",  # a game between two players, as with a friend, with no invitation
                ai_seed=ai_seed,
                status="playing",
                seat_specs=[(i, "human", name, owner) for i, (name, owner, _a) in enumerate(people)],
                # The bot's clock runs as anyone's, from now for whoever moves first; running out loses.
                clock=None if found.clock is None else (time_control(found.clock), "lose", first),
            )
            if found.rated and found.account_id is not None:
                conn.execute(
                    insert(rated_games).values(
                        game_id=game_id,
                        category=category_of(found.hands),
                        account0=people[0][2],
                        account1=people[1][2],
                        rated=None,
                    )
                )
            taken = conn.execute(
                update(challenges)
                .where((challenges.c.id == challenge_id) & (challenges.c.status == "open"))
                .values(status="accepted", game_id=game_id, token=tokens[1 - seat])
            )
            if taken.rowcount != 1:
                raise StoreError("this challenge ended meanwhile", conflict=True)
            self._notify(conn, [bot.id])
            if not self.store.is_sqlite:  # the lobby's list of games being played has one more
                conn.execute(select(func.pg_notify(LOBBY_CHANNEL, "lobby")))
        return found, game_id, tokens[seat]

    def expire(self) -> list[str]:
        """End the open challenges nobody waits for (their challenger gone, or too old) and forget the old
        ended ones; the bots whose challenges ended."""
        now = _now()
        stale = (challenges.c.status == "open") & (
            (challenges.c.seen < now - CHALLENGE_GONE) | (challenges.c.created < now - CHALLENGE_LIFE)
        )
        with self.engine.begin() as conn:
            rows = conn.execute(select(challenges.c.id, challenges.c.bot_id).where(stale).limit(500)).all()
            if rows:
                conn.execute(
                    update(challenges)
                    .where(challenges.c.id.in_([r.id for r in rows]) & (challenges.c.status == "open"))
                    .values(status="expired")
                )
                self._notify(conn, [r.bot_id for r in rows])
            conn.execute(
                challenges.delete().where(
                    ((challenges.c.status.not_in(("open", "accepted"))) & (challenges.c.created < now - KEEP_ENDED))
                    | ((challenges.c.status == "accepted") & (challenges.c.created < now - KEEP_ACCEPTED))
                )
            )
        return sorted({r.bot_id for r in rows})

    # -- what a bot is told ---------------------------------------------------------------------------------

    def news_of(self, bot_ids: list[str]) -> dict[str, tuple[list[Challenge], list[dict[str, Any]]]]:
        """For each bot (at most 200): its open challenges (the oldest first, at most 50) and its unfinished
        games (at most 100), each game as ``{"id", "token", "seat", "status", "rules", "rated", "clock",
        "opponent": {"name", "account", "bot"}}``: the bot's own seat token, for its stream alone."""
        ids = bot_ids[:200]
        out: dict[str, tuple[list[Challenge], list[dict[str, Any]]]] = {i: ([], []) for i in ids}
        if not ids:
            return out
        owners = {owner_key(i): i for i in ids}
        me, other = seats.alias("me"), seats.alias("other")
        with self.engine.connect() as conn:
            for row in conn.execute(
                select(challenges)
                .where(challenges.c.bot_id.in_(ids) & (challenges.c.status == "open"))
                .order_by(challenges.c.created)
                .limit(50 * len(ids))
            ):
                found = _challenge(row)
                if found is not None and len(out[found.bot_id][0]) < 50:
                    out[found.bot_id][0].append(found)
            rows = conn.execute(
                select(
                    games.c.id,
                    games.c.status,
                    games.c.rules,
                    me.c.owner,
                    me.c.seat,
                    me.c.token,
                    other.c.name.label("other_name"),
                    other.c.owner.label("other_owner"),
                    rated_games.c.game_id.label("rated"),
                    clocks.c.control.label("clock"),
                )
                .join(me, me.c.game_id == games.c.id)
                .join(other, (other.c.game_id == games.c.id) & (other.c.seat != me.c.seat))
                .outerjoin(rated_games, rated_games.c.game_id == games.c.id)
                .outerjoin(clocks, clocks.c.game_id == games.c.id)
                .where(me.c.owner.in_(list(owners)) & games.c.status.in_(("waiting", "playing")))
                .order_by(games.c.created)
                .limit(100 * len(ids))
            ).all()
            other_accounts = {
                r.other_owner[2:] for r in rows if isinstance(r.other_owner, str) and r.other_owner.startswith("a:")
            }
            bots = (
                {
                    r.id
                    for r in conn.execute(
                        select(accounts.c.id).where(
                            accounts.c.id.in_(sorted(other_accounts)) & accounts.c.bot_since.is_not(None)
                        )
                    )
                }
                if other_accounts
                else set()
            )
        for r in rows:
            try:
                rules = json.loads(r.rules)
                if not isinstance(rules, dict):
                    continue
            except (TypeError, ValueError):
                continue  # a damaged game: its seat socket says it is broken
            listed = out[owners[r.owner]][1]
            if len(listed) >= 100:
                continue
            other_owner = r.other_owner if isinstance(r.other_owner, str) else ""
            listed.append(
                {
                    "id": r.id,
                    "token": r.token,
                    "seat": r.seat,
                    "status": r.status,
                    "rules": {k: v for k, v in rules.items() if k != "rules_version"},
                    "rated": r.rated is not None,
                    "clock": r.clock,
                    "opponent": {
                        "name": r.other_name,
                        "account": other_owner.startswith("a:"),
                        "bot": other_owner[2:] in bots,
                    },
                }
            )
        return out


class _Row:
    """A dict read as a row (attribute access), for :func:`_challenge` on what was just inserted."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)


def bot_seats(store: Store, seat_owners: list[str | None]) -> frozenset[int]:
    """Which seats (by index in ``seat_owners``, their stored owners) are bots': a game's table marks them
    BOT, and a bot's own seat is sent the bot protocol's observation (koikoi.web.botview)."""
    held = [(i, o[2:]) for i, o in enumerate(seat_owners) if isinstance(o, str) and o.startswith("a:")]
    if not held:
        return frozenset()
    with store.reading() as conn:
        rows = conn.execute(
            select(accounts.c.id).where(
                accounts.c.id.in_(sorted({a for _, a in held})) & accounts.c.bot_since.is_not(None)
            )
        ).all()
    bots = {r.id for r in rows}
    return frozenset(i for i, account in held if account in bots)
