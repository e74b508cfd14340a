"""Where the web app keeps its games: SQLite by default, PostgreSQL for larger deployments (SQLAlchemy).

A game is stored as what is needed to rebuild it exactly: its rule set, its secret seed and the list
of actions in order. A match is a pure function of those (:class:`koikoi.match.Match`), so a server that
restarts replays the actions and continues where the game was. An action is written (and committed)
before the player is told it was accepted; the primary key ``(game_id, seq)`` makes a second write of
the same turn fail instead of forking the game.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    bindparam,
    create_engine,
    delete,
    event,
    func,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError

from .. import safejson
from ..rules import RULES_VERSION

__all__ = [
    "Store",
    "StoredGame",
    "StoredSeat",
    "Invitation",
    "StoreError",
    "StoredReview",
    "normalise_url",
    "new_token",
    "NOTIFY_CHANNEL",
]

# On PostgreSQL every change to a game is announced on this channel (LISTEN/NOTIFY) when it commits, so
# that every server process on the database can tell its players. The payload is "<game id> <moves>":
# no card, no state; the database stays the one source of truth (docs/web.md, "Scaling out").
NOTIFY_CHANNEL = "koikoi_games"
_NOTIFY = text("SELECT pg_notify('koikoi_games', :payload)")
_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)

metadata = MetaData()

games = Table(
    "games",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("created", DateTime(timezone=True), nullable=False),
    Column("updated", DateTime(timezone=True), nullable=False),
    Column("rules", Text, nullable=False),  # the RuleSet as JSON
    Column("seed", BigInteger, nullable=False),  # secret: never sent to a client before the game ends
    Column("opponent", String(16), nullable=False),  # "friend" or an AI level
    Column("ai_seed", BigInteger, nullable=False),
    Column("status", String(16), nullable=False),  # waiting (for the friend), playing, finished, broken
    Column("moves", Integer, nullable=False),  # actions stored so far
    Column("scores", String(64), nullable=False),  # "s0,s1", for listing without replaying
    Column("birth_months", String(8), nullable=True),  # "m0,m1" when the rules choose the dealer by them
)

seats = Table(
    "seats",
    metadata,
    Column("token", String(64), primary_key=True),  # the secret that gives access to one seat
    Column("game_id", String(32), ForeignKey("games.id"), nullable=False, index=True),
    Column("seat", Integer, nullable=False),
    Column("kind", String(16), nullable=False),  # human or ai
    Column("name", String(64), nullable=False),
    Column("owner", String(64), nullable=True, index=True),  # the browser that holds this seat
)

invitations = Table(
    "invitations",
    metadata,
    # The secret in a friend's invitation link. It is not a seat token: it lets one person take the
    # seat once (``spent``), and the seat's own token is made at that moment and given only to them.
    Column("token", String(64), primary_key=True),
    Column("game_id", String(32), ForeignKey("games.id"), nullable=False, index=True),
    Column("seat", Integer, nullable=False),
    Column("created", DateTime(timezone=True), nullable=False),
    Column("spent", DateTime(timezone=True), nullable=True),
)

problems = Table(
    "problems",
    metadata,
    # A game whose stored data the engine cannot rebuild: marked broken with the reason, never fatal.
    Column("game_id", String(32), ForeignKey("games.id"), primary_key=True),
    Column("reason", Text, nullable=False),
    Column("at", DateTime(timezone=True), nullable=False),
)

ai_turns = Table(
    "ai_turns",
    metadata,
    # A computer move waiting to be made: a row while a game's computer is to move. The process that
    # thinks claims it (owner, until); a claim whose lease ran out (its process died) is taken over.
    Column("game_id", String(32), ForeignKey("games.id"), primary_key=True),
    Column("seq", Integer, nullable=False),  # the move number the computer is to make
    Column("owner", String(32), nullable=True),  # the process thinking, if any
    Column("until", DateTime(timezone=True), nullable=False),  # when its claim runs out
)

reviews = Table(
    "reviews",
    metadata,
    # A game review (koikoi.review) of one seat of a finished game: worked out once, then kept. While it
    # is worked out the row holds the progress and the claim of the process doing it (owner, until), so
    # that a second request, here or in another process, waits for the same review instead of starting
    # one; a claim whose lease ran out (its process died) is taken over.
    Column("game_id", String(32), ForeignKey("games.id"), primary_key=True),
    Column("seat", Integer, primary_key=True),
    Column("status", String(16), nullable=False),  # running, done, failed
    Column("done", Integer, nullable=False),  # decisions judged so far
    Column("total", Integer, nullable=True),  # decisions to judge, once known
    Column("owner", String(32), nullable=True),
    Column("until", DateTime(timezone=True), nullable=False),
    Column("body", Text, nullable=True),  # the review as JSON when done; what went wrong when failed
)

actions = Table(
    "actions",
    metadata,
    Column("game_id", String(32), ForeignKey("games.id"), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("seat", Integer, nullable=False),
    Column("action", Integer, nullable=False),
    Column("at", DateTime(timezone=True), nullable=False),
)


class StoreError(Exception):
    """A database that cannot be used, or a write that lost a race (``conflict``)."""

    def __init__(self, message: str, *, conflict: bool = False) -> None:
        super().__init__(message)
        self.conflict = conflict


@dataclass(frozen=True, slots=True)
class StoredSeat:
    token: str
    game_id: str
    seat: int
    kind: str
    name: str
    owner: str | None


@dataclass(frozen=True, slots=True)
class Invitation:
    token: str
    game_id: str
    seat: int
    created: datetime
    spent: datetime | None


@dataclass(frozen=True, slots=True)
class StoredGame:
    id: str
    created: datetime
    updated: datetime
    rules: dict[str, Any]
    seed: int
    opponent: str
    ai_seed: int
    status: str
    moves: int
    scores: tuple[int, int]
    birth_months: tuple[int, int] | None = None
    # The engine's rules version the game is played under (koikoi.rules.RULES_VERSIONS). It is kept in
    # the rules column beside the options; a game stored before it was kept there is version 1.
    rules_version: int = 1


@dataclass(frozen=True, slots=True)
class StoredReview:
    game_id: str
    seat: int
    status: str
    done: int
    total: int | None
    owner: str | None
    until: datetime
    body: str | None


def new_token(nbytes: int = 18) -> str:
    return secrets.token_urlsafe(nbytes)


def normalise_url(url: str) -> str:
    """A SQLAlchemy URL from what a user types: ``postgresql://`` uses psycopg 3, a bare path is SQLite."""
    if "://" not in url:
        return f"sqlite:///{Path(url).expanduser().resolve()}"
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def _now() -> datetime:
    return datetime.now(UTC)


# The statements of the hot path, built once: building a statement costs more than running it.
_INSERT_ACTION = insert(actions)
_ADVANCE_GAME = (
    update(games)
    .where(games.c.id == bindparam("gid"), games.c.moves == bindparam("seq"))
    .values(
        moves=bindparam("next"),
        status=bindparam("new_status"),
        updated=bindparam("now"),
        scores=bindparam("new_scores"),
    )
)
_SEAT_BY_TOKEN = select(seats).where(seats.c.token == bindparam("token"))


class Store:
    """The games, seats and actions in one database."""

    def __init__(self, url: str) -> None:
        url = normalise_url(url)
        try:
            parsed = make_url(url)
        except ArgumentError:
            raise StoreError(
                f"not a database URL: {url!r} (give a file path or e.g. postgresql://user:password@host/dbname)"
            ) from None
        self.url = url
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        if self.is_sqlite and parsed.database not in (None, "", ":memory:"):
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        try:
            kwargs: dict[str, Any] = {}
            if self.is_sqlite:
                kwargs["connect_args"] = {"check_same_thread": False}
            else:
                kwargs.update(pool_size=10, max_overflow=20, pool_pre_ping=True)
            self.engine: Engine = create_engine(url, **kwargs)
        except ImportError as e:
            raise StoreError(
                f"the database driver {e.name} is not installed (for PostgreSQL: pip install 'koikoi[postgres]')"
            ) from None
        except Exception as e:  # a missing driver, a bad option
            raise StoreError(f"cannot open the database {parsed.render_as_string(hide_password=True)}: {e}") from None
        if self.is_sqlite:
            event.listen(self.engine, "connect", _sqlite_pragmas)
        try:
            metadata.create_all(self.engine)
        except Exception as e:
            raise StoreError(
                f"cannot use the database {parsed.render_as_string(hide_password=True)}: "
                f"{type(e).__name__}: {str(e).splitlines()[0]}"
            ) from None

    @property
    def shown_url(self) -> str:
        return make_url(self.url).render_as_string(hide_password=True)

    @property
    def sqlite_path(self) -> str | None:
        return make_url(self.url).database if self.is_sqlite else None

    def hold_sqlite(self) -> None:
        """Mark an SQLite database as served by this process, for as long as it lives: a second server
        process on the same file would not hear this one's moves, so it is refused and told why."""
        import fcntl

        path = self.sqlite_path
        if not path or path == ":memory:":
            return
        lock = open(f"{path}.serving", "a")  # noqa: SIM115 - held open until the process ends
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            raise StoreError(
                f"another koikoi serve is using {path}: an SQLite database is served by one process; "
                "to run several, use PostgreSQL (--database-url postgresql://user:password@host/dbname)"
            ) from None
        self._serving_lock = lock

    def close(self) -> None:
        self.engine.dispose()

    # -- writing ------------------------------------------------------------------------------------------

    def create_game(
        self,
        *,
        rules: dict[str, Any],
        seed: int,
        opponent: str,
        ai_seed: int,
        status: str,
        seat_specs: list[tuple[int, str, str, str | None]],
        birth_months: tuple[int, int] | None = None,
        invite_seat: int | None = None,
        rules_version: int = RULES_VERSION,
    ) -> tuple[str, list[str], str | None]:
        """Store a new game; ``seat_specs`` are (seat, kind, name, owner).

        Returns the id, the seat tokens and, with ``invite_seat``, the invitation token for that seat.
        The invited seat's own token is a secret nobody is given: :meth:`join` replaces it.
        """
        game_id = new_token(9)
        tokens = [new_token() for _ in seat_specs]
        invite = new_token() if invite_seat is not None else None
        now = _now()
        with self.engine.begin() as conn:
            conn.execute(
                insert(games).values(
                    id=game_id,
                    created=now,
                    updated=now,
                    rules=json.dumps({**rules, "rules_version": rules_version}),
                    seed=seed,
                    opponent=opponent,
                    ai_seed=ai_seed,
                    status=status,
                    moves=0,
                    scores="0,0",
                    birth_months=None if birth_months is None else f"{birth_months[0]},{birth_months[1]}",
                )
            )
            for token, (seat, kind, name, owner) in zip(tokens, seat_specs):
                conn.execute(
                    insert(seats).values(token=token, game_id=game_id, seat=seat, kind=kind, name=name, owner=owner)
                )
            if invite is not None:
                conn.execute(
                    insert(invitations).values(token=invite, game_id=game_id, seat=invite_seat, created=now, spent=None)
                )
        return game_id, tokens, invite

    def invitation(self, token: str) -> Invitation | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(invitations).where(invitations.c.token == token)).first()
        return None if row is None else Invitation(**row._asdict())

    def invitation_of(self, game_id: str) -> Invitation | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(invitations).where(invitations.c.game_id == game_id)).first()
        return None if row is None else Invitation(**row._asdict())

    def join(self, invite_token: str, owner: str, name: str) -> str:
        """Spend an invitation: the invited seat gets a fresh token, returned to the one who joins only.

        Raises :class:`StoreError` with ``conflict`` when the invitation was spent meanwhile.
        """
        fresh = new_token()
        now = _now()
        with self.engine.begin() as conn:
            inv = conn.execute(select(invitations).where(invitations.c.token == invite_token)).first()
            if inv is None:
                # A game made before invitations had their own tokens: its link is the empty seat's token.
                old = conn.execute(
                    select(seats.c.game_id).where(
                        seats.c.token == invite_token, seats.c.owner.is_(None), seats.c.kind == "human"
                    )
                ).first()
                if old is None:
                    raise StoreError("no such invitation")
                conn.execute(
                    update(seats).where(seats.c.token == invite_token).values(token=fresh, owner=owner, name=name)
                )
                conn.execute(
                    update(games)
                    .where(games.c.id == old.game_id, games.c.status == "waiting")
                    .values(status="playing", updated=now)
                )
                self._notify(conn, old.game_id, 0)
                return fresh
            spent = conn.execute(
                update(invitations)
                .where(invitations.c.token == invite_token, invitations.c.spent.is_(None))
                .values(spent=now)
            )
            if spent.rowcount != 1:
                raise StoreError("this invitation was already used", conflict=True)
            taken = conn.execute(
                update(seats)
                .where(seats.c.game_id == inv.game_id, seats.c.seat == inv.seat, seats.c.owner.is_(None))
                .values(token=fresh, owner=owner, name=name)
            )
            if taken.rowcount != 1:
                raise StoreError("this seat was already taken", conflict=True)
            conn.execute(
                update(games)
                .where(games.c.id == inv.game_id, games.c.status == "waiting")
                .values(status="playing", updated=now)
            )
            self._notify(conn, inv.game_id, 0)
        return fresh

    def mark_broken(self, game_id: str, reason: str) -> None:
        """Record that a game cannot be rebuilt, and why; its players see it listed as broken."""
        now = _now()
        with self.engine.begin() as conn:
            conn.execute(update(games).where(games.c.id == game_id).values(status="broken", updated=now))
            if conn.execute(select(problems.c.game_id).where(problems.c.game_id == game_id)).first() is None:
                conn.execute(insert(problems).values(game_id=game_id, reason=reason[:2000], at=now))
            conn.execute(delete(ai_turns).where(ai_turns.c.game_id == game_id))
            self._notify(conn, game_id, -1)

    def problem_of(self, game_id: str) -> str | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(problems.c.reason).where(problems.c.game_id == game_id)).first()
        return None if row is None else row.reason

    def add_action(
        self,
        game_id: str,
        seq: int,
        seat: int,
        action: int,
        *,
        status: str,
        scores: tuple[int, int],
        computer_next: bool = False,
    ) -> None:
        """Store action number ``seq`` (0-based) of a game, and the game's new status, in one transaction.

        ``computer_next``: the computer is to make the next move; its turn is noted for any process to
        claim (:meth:`claim_computer_turn`), and otherwise the game's turn note, if any, is cleared.
        """
        now = _now()
        try:
            with self.engine.begin() as conn:
                conn.execute(
                    _INSERT_ACTION, {"game_id": game_id, "seq": seq, "seat": seat, "action": action, "at": now}
                )
                res = conn.execute(
                    _ADVANCE_GAME,
                    {
                        "gid": game_id,
                        "seq": seq,
                        "next": seq + 1,
                        "new_status": status,
                        "now": now,
                        "new_scores": f"{scores[0]},{scores[1]}",
                    },
                )
                if res.rowcount != 1:
                    raise StoreError(f"game {game_id}: move {seq} was already stored", conflict=True)
                conn.execute(delete(ai_turns).where(ai_turns.c.game_id == game_id))
                if computer_next:
                    conn.execute(insert(ai_turns).values(game_id=game_id, seq=seq + 1, owner=None, until=_EPOCH))
                self._notify(conn, game_id, seq + 1)
        except IntegrityError:
            raise StoreError(f"game {game_id}: move {seq} was already stored", conflict=True) from None

    def _notify(self, conn: Any, game_id: str, moves: int) -> None:
        """Announce a change to a game when this transaction commits (PostgreSQL; one process on SQLite)."""
        if not self.is_sqlite:
            conn.execute(_NOTIFY, {"payload": f"{game_id} {moves}"})

    # -- the computer's turns -------------------------------------------------------------------------

    def _clock(self, lease: float) -> tuple[Any, Any]:
        """(now, now + ``lease`` seconds) for the claims: the database's own clock on PostgreSQL, so that
        processes on hosts whose clocks differ agree on when a claim runs out (SQLite has one process)."""
        if self.is_sqlite:
            now = _now()
            return now, now + timedelta(seconds=lease)
        return func.now(), func.now() + timedelta(seconds=lease)

    def note_computer_turn(self, game_id: str, seq: int) -> None:
        """Note that the computer is to make move ``seq`` (for a game whose turn was never noted)."""
        try:
            with self.engine.begin() as conn:
                if conn.execute(select(ai_turns.c.game_id).where(ai_turns.c.game_id == game_id)).first() is None:
                    conn.execute(insert(ai_turns).values(game_id=game_id, seq=seq, owner=None, until=_EPOCH))
        except IntegrityError:
            pass  # another process noted it at the same moment

    def claim_computer_turn(self, game_id: str, seq: int, owner: str, lease: float) -> bool:
        """Claim the computer's move ``seq`` of a game for ``owner`` for ``lease`` seconds: True when it
        is that move that waits (not one already made, as a process behind the database may think) and
        no other process holds a live claim on it. A claim is renewed by claiming again."""
        now, until = self._clock(lease)
        free = or_(ai_turns.c.owner.is_(None), ai_turns.c.until < now, ai_turns.c.owner == owner)
        try:
            with self.engine.begin() as conn:
                got = conn.execute(
                    update(ai_turns)
                    .where(ai_turns.c.game_id == game_id, ai_turns.c.seq == seq, free)
                    .values(owner=owner, until=until)
                )
                if got.rowcount == 1:
                    return True
                row = conn.execute(select(ai_turns).where(ai_turns.c.game_id == game_id)).first()
                if row is None:  # a game whose turn was never noted (made before the note existed)
                    stored = conn.execute(select(games.c.moves).where(games.c.id == game_id)).first()
                    if stored is None or stored.moves != seq:
                        return False
                    conn.execute(insert(ai_turns).values(game_id=game_id, seq=seq, owner=owner, until=until))
                    return True
                return False  # another process is thinking, or this move was made already
        except IntegrityError:
            return False  # another process claimed it at the same moment

    def release_computer_turn(self, game_id: str, owner: str) -> None:
        """Give a claimed turn back at once (the move could not be made): another process may take it."""
        with self.engine.begin() as conn:
            conn.execute(
                update(ai_turns)
                .where(ai_turns.c.game_id == game_id, ai_turns.c.owner == owner)
                .values(owner=None, until=_EPOCH)
            )

    def drop_computer_turn(self, game_id: str) -> None:
        """Forget a game's note of a computer move that is not (any more) to be made."""
        with self.engine.begin() as conn:
            conn.execute(
                delete(ai_turns).where(
                    ai_turns.c.game_id == game_id, or_(ai_turns.c.owner.is_(None), ai_turns.c.until < self._clock(0)[0])
                )
            )

    def computer_turns_due(self, limit: int = 100) -> list[str]:
        """Games whose computer is to move and which no process is thinking about (or whose thinker died)."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(ai_turns.c.game_id)
                .where(or_(ai_turns.c.owner.is_(None), ai_turns.c.until < self._clock(0)[0]))
                .order_by(ai_turns.c.until)
                .limit(limit)
            ).all()
        return [r.game_id for r in rows]

    def progress_of(self, game_ids: list[str]) -> dict[str, tuple[int, str]]:
        """(moves, status) of each of ``game_ids`` as stored: what a process checks its copies against."""
        out: dict[str, tuple[int, str]] = {}
        with self.engine.connect() as conn:
            for i in range(0, len(game_ids), 500):
                chunk = game_ids[i : i + 500]
                for r in conn.execute(
                    select(games.c.id, games.c.moves, games.c.status).where(games.c.id.in_(chunk))
                ).all():
                    out[r.id] = (r.moves, r.status)
        return out

    def set_status(self, game_id: str, status: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(games).where(games.c.id == game_id).values(status=status, updated=_now()))

    # -- reviews ------------------------------------------------------------------------------------------

    def review(self, game_id: str, seat: int) -> StoredReview | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(reviews).where(reviews.c.game_id == game_id, reviews.c.seat == seat)).first()
        if row is None:
            return None
        d = row._asdict()
        if d["until"].tzinfo is None:  # SQLite hands back naive datetimes; they were stored in UTC
            d["until"] = d["until"].replace(tzinfo=UTC)
        return StoredReview(**d)

    def claim_review(self, game_id: str, seat: int, owner: str, lease: float) -> str:
        """Claim the review of ``seat`` in a game for ``owner``: "claimed" (work it out now), "done" (it is
        stored), "running" (a live claim holds it) or "other" (a review of the game's other seat runs:
        one review at a time per game). A failed review, or one whose claim ran out, is claimed again."""
        now, until = self._clock(lease)
        live = (reviews.c.status == "running") & (reviews.c.until >= now)
        try:
            with self.engine.begin() as conn:
                other = conn.execute(
                    select(reviews.c.seat).where(reviews.c.game_id == game_id, reviews.c.seat != seat, live)
                ).first()
                if other is not None:
                    return "other"
                row = conn.execute(
                    select(reviews.c.status).where(reviews.c.game_id == game_id, reviews.c.seat == seat)
                ).first()
                fresh = {"status": "running", "done": 0, "total": None, "owner": owner, "until": until, "body": None}
                if row is None:
                    conn.execute(insert(reviews).values(game_id=game_id, seat=seat, **fresh))
                    return "claimed"
                if row.status == "done":
                    return "done"
                got = conn.execute(
                    update(reviews)
                    .where(reviews.c.game_id == game_id, reviews.c.seat == seat, reviews.c.status != "done", ~live)
                    .values(**fresh)
                )
                return "claimed" if got.rowcount == 1 else "running"
        except IntegrityError:
            return "running"  # another process claimed it at the same moment

    def review_progress(self, game_id: str, seat: int, owner: str, done: int, total: int, lease: float) -> bool:
        """Note the progress of a claimed review and renew the claim; False when the claim was lost."""
        _now_, until = self._clock(lease)
        with self.engine.begin() as conn:
            got = conn.execute(
                update(reviews)
                .where(
                    reviews.c.game_id == game_id,
                    reviews.c.seat == seat,
                    reviews.c.owner == owner,
                    reviews.c.status == "running",
                )
                .values(done=done, total=total, until=until)
            )
        return got.rowcount == 1

    def end_review(self, game_id: str, seat: int, owner: str, *, body: str, failed: bool = False) -> bool:
        """Store a claimed review (``body``: its JSON), or mark it failed (``body``: why); False when the
        claim was lost meanwhile (another process took over), and nothing is written."""
        with self.engine.begin() as conn:
            got = conn.execute(
                update(reviews)
                .where(
                    reviews.c.game_id == game_id,
                    reviews.c.seat == seat,
                    reviews.c.owner == owner,
                    reviews.c.status == "running",
                )
                .values(status="failed" if failed else "done", body=body[:2000] if failed else body, owner=None)
            )
        return got.rowcount == 1

    # -- reading ------------------------------------------------------------------------------------------

    def seat(self, token: str) -> StoredSeat | None:
        with self.engine.connect() as conn:
            row = conn.execute(_SEAT_BY_TOKEN, {"token": token}).first()
        return None if row is None else StoredSeat(**row._asdict())

    def seats_of(self, game_id: str) -> list[StoredSeat]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(seats).where(seats.c.game_id == game_id).order_by(seats.c.seat)).all()
        return [StoredSeat(**r._asdict()) for r in rows]

    def game(self, game_id: str) -> StoredGame | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(games).where(games.c.id == game_id)).first()
        return None if row is None else _game(row)

    def actions_of(self, game_id: str, since: int = 0, until: int | None = None) -> list[tuple[int, int]]:
        """(seat, action) in order, action numbers ``since`` up to ``until`` (excluded; None: all).

        Reading a game's row and then its actions up to the row's ``moves`` gives a consistent pair
        even while another process adds moves: the row is updated in the same transaction as its action.
        """
        q = select(actions.c.seat, actions.c.action).where(actions.c.game_id == game_id, actions.c.seq >= since)
        if until is not None:
            q = q.where(actions.c.seq < until)
        with self.engine.connect() as conn:
            rows = conn.execute(q.order_by(actions.c.seq)).all()
        return [(r.seat, r.action) for r in rows]

    def games_of(
        self, owner: str, *, limit: int = 50, before: tuple[datetime, str] | None = None
    ) -> list[tuple[StoredGame | None, StoredSeat, str, str]]:
        """A page of the games in which ``owner`` holds a seat, newest first: (game, seat, opponent's name,
        problem). ``before`` is the (updated, id) of the last game of the previous page. ``game`` is None
        for a game whose stored data cannot be read (``problem`` says why)."""
        other = seats.alias("other")
        q = (
            select(
                games,
                seats.c.token,
                seats.c.seat,
                seats.c.kind,
                seats.c.name,
                seats.c.owner,
                other.c.name.label("other_name"),
                problems.c.reason.label("problem"),
            )
            .join(seats, seats.c.game_id == games.c.id)
            .outerjoin(other, (other.c.game_id == games.c.id) & (other.c.seat != seats.c.seat))
            .outerjoin(problems, problems.c.game_id == games.c.id)
            .where(seats.c.owner == owner)
        )
        if before is not None:
            at, gid = before
            q = q.where((games.c.updated < at) | ((games.c.updated == at) & (games.c.id < gid)))
        q = q.order_by(games.c.updated.desc(), games.c.id.desc()).limit(limit)
        with self.engine.connect() as conn:
            rows = conn.execute(q).all()
        out: list[tuple[StoredGame | None, StoredSeat, str, str]] = []
        for r in rows:
            d = r._asdict()
            seat = StoredSeat(
                token=d.pop("token"),
                game_id=d["id"],
                seat=d.pop("seat"),
                kind=d.pop("kind"),
                name=d.pop("name"),
                owner=d.pop("owner"),
            )
            other_name = d.pop("other_name") or ""
            problem = d.pop("problem") or ""
            try:
                game: StoredGame | None = _game_from(d)
            except StoreError as e:
                game, problem = None, problem or str(e)
            out.append((game, seat, other_name, problem))
        return out

    def open_games_of(self, owner: str) -> int:
        """How many unfinished games ``owner`` holds a seat in."""
        with self.engine.connect() as conn:
            return conn.execute(
                select(func.count())
                .select_from(games.join(seats, seats.c.game_id == games.c.id))
                .where(seats.c.owner == owner, games.c.status.in_(("waiting", "playing")))
            ).scalar_one()

    def ids_with_status(self, status: str) -> list[tuple[str, str]]:
        """(id, opponent) of every game with ``status``: just the keys, which parse whatever else is stored."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(games.c.id, games.c.opponent).where(games.c.status == status)).all()
        return [(r.id, r.opponent) for r in rows]


def _game(row: Any) -> StoredGame:
    return _game_from(row._asdict())


def _game_from(d: dict[str, Any]) -> StoredGame:
    """A stored game from its row; :class:`StoreError` naming the column when one cannot be read."""
    try:
        s0, s1 = (int(x) for x in d["scores"].split(","))
    except (ValueError, AttributeError):
        raise StoreError(f"game {d['id']}: its stored scores {str(d['scores'])[:40]!r} are not two numbers") from None
    created, updated = d["created"], d["updated"]
    # SQLite hands back naive datetimes; they were stored in UTC.
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    if updated.tzinfo is None:
        updated = updated.replace(tzinfo=UTC)
    bm = d.get("birth_months")
    try:
        months = None if not bm else tuple(int(x) for x in bm.split(","))
        if months is not None and len(months) != 2:
            raise ValueError
    except ValueError:
        raise StoreError(f"game {d['id']}: its stored birth months {str(bm)[:20]!r} are not two months") from None
    try:
        rules = safejson.loads(d["rules"])
        if not isinstance(rules, dict):
            raise ValueError("not an object")
    except ValueError as e:
        raise StoreError(f"game {d['id']}: its stored rules are not a JSON object ({e})") from None
    version = rules.pop("rules_version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        raise StoreError(f"game {d['id']}: its stored rules version {str(version)[:20]!r} is not a whole number")
    return StoredGame(
        id=d["id"],
        created=created,
        updated=updated,
        rules=rules,
        seed=d["seed"],
        opponent=d["opponent"],
        ai_seed=d["ai_seed"],
        status=d["status"],
        moves=d["moves"],
        scores=(s0, s1),
        birth_months=months,
        rules_version=version,
    )  # type: ignore[arg-type]


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # WAL lets readers go on during a write; synchronous=NORMAL in WAL mode loses nothing when the
    # process dies (only a power cut can drop the last commits), and keeps a commit well under a millisecond.
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=5000")
    cur.close()
