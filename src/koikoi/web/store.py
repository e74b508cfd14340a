"""Where the web app keeps its games: SQLite by default, PostgreSQL for larger deployments (SQLAlchemy).

A game is stored as what is needed to rebuild it exactly: its rule set, its secret seed and the list
of actions in order. A match is a pure function of those (:class:`koikoi.match.Match`), so a server that
restarts replays the actions and continues where the game was. An action is written (and committed)
before the player is told it was accepted; the primary key ``(game_id, seq)`` makes a second write of
the same turn fail instead of forking the game.

Nothing read back is trusted: a value that is not what this module wrote (text in a number column,
which SQLite allows; a date that is not a date; an unknown status) raises :class:`StoreError` naming
the game and the column, and the caller marks that game broken. A query over many games reads each
row on its own terms, so one damaged row never hides the others (docs/web.md, "Deploying": a damaged game).
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    bindparam,
    create_engine,
    delete,
    event,
    exists,
    func,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError

from .. import glicko2, safejson
from ..clocks import TimeControl, deadline_of, decision_start, time_control
from ..rules import RULES_VERSION
from .schema import (
    StoreError,
    accounts,
    actions,
    ai_turns,
    clocks,
    games,
    invitations,
    normalise_url,
    private_games,
    problems,
    rated_games,
    rating_history,
    ratings,
    reviews,
    seats,
    tournament_games,
)

if TYPE_CHECKING:
    from .migrate import Upgrade

__all__ = [
    "Move",
    "Store",
    "StoredGame",
    "StoredSeat",
    "Invitation",
    "StoreError",
    "StoredReview",
    "ListedGame",
    "STATUSES",
    "ENDINGS",
    "NO_RESULT",
    "RATED_GAMES_A_PAIR",
    "result_for",
    "normalise_url",
    "new_token",
    "insert_game",
    "two_player_games",
    "rate",
    "add_clock",
    "add_clocks",
    "NOTIFY_CHANNEL",
    "LOBBY_CHANNEL",
    "BOT_CHANNEL",
    "CHAT_CHANNEL",
]

# On PostgreSQL every change to a game is announced on this channel (LISTEN/NOTIFY) when it commits, so
# that every server process on the database can tell its players. The payload is "<game id> <moves>":
# no card, no state; the database stays the one source of truth (docs/web.md, "Scaling out").
NOTIFY_CHANNEL = "koikoi_games"
_NOTIFY = text("SELECT pg_notify('koikoi_games', :payload)")
# The public lobby's changes (koikoi.web.lobby) have a channel of their own: "lobby" when the list of
# seeks or games changed, "owner <owner>" when a seek or quick-pairing entry of that owner was paired.
LOBBY_CHANNEL = "koikoi_lobby"
# Bots online (koikoi.web.bots): "<bot account id>" when a challenge to that bot, or one of its games,
# came or went, so that the process holding the bot's stream tells it.
BOT_CHANNEL = "koikoi_bots"
# Chat and spectators (koikoi.web.chat, koikoi.web.spectators): "chat <game id> <message id>" for a new
# message, "mute <game id>" when a player muted or unmuted, "watch <game id>" when the spectators changed.
CHAT_CHANNEL = "koikoi_chat"
# Tournaments (koikoi.web.tournaments): "tour <id>" when its standings or state changed, "paired <id>
# <account id> <game id>" when that player was paired into that match, "ended <id>" when one of its
# matches ended, "chat <id> <message id>" for its chat, "list" when the list of tournaments changed.
TOURNAMENT_CHANNEL = "koikoi_tournaments"
_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
# What a game can be: waiting for the friend, being played, over, or damaged beyond playing.
STATUSES = ("waiting", "playing", "finished", "broken")
# How a finished game ended when it did not end with its last hand: a player ran out of time, resigned,
# aborted it before both had moved, or had victory claimed against them after leaving; an invitation
# nobody took in 24 hours; a casual game without a move for 30 days (docs/web.md, "Leaving a game").
ENDINGS = ("time", "resign", "abort", "claim", "expired", "closed")
# The endings with no result: nobody won, and no rating changes.
NO_RESULT = ("abort", "expired", "closed")
_REVIEW_STATUSES = ("running", "done", "failed")
# At most this many rated games between the same two accounts count in any 24 hours (docs/web.md,
# "Players and ratings"): more are played and finished as any other, and move no rating, so that two
# accounts of one person cannot farm a rating from each other (lichess catches boosting by review; this
# server has no reviewers, so a rule).
RATED_GAMES_A_PAIR = 5
PAIR_WINDOW = timedelta(hours=24)
_SEED_LIMIT = 1 << 63  # seeds are drawn below 2**62; a BIGINT holds less than 2**63


def _stored_rating(row: Any) -> glicko2.Rating:
    if row is None:
        return glicko2.new_player()
    updated = row.updated if row.updated.tzinfo is not None else row.updated.replace(tzinfo=UTC)
    return glicko2.Rating(row.rating, row.rd, row.volatility, row.games, updated.timestamp())


def rate(
    conn: Any, game_id: str, scores: tuple[int, int], now: datetime, *, lock: bool, winner: int | None = None
) -> None:
    """Update both players' ratings for a rated game that has just ended, in the transaction that stores
    its last move: once (``rated`` is set), and with nothing if that transaction does not commit. The
    result is the scores' unless ``winner`` says who won a game that ended early (time, resignation)."""
    q = select(rated_games).where((rated_games.c.game_id == game_id) & rated_games.c.rated.is_(None))
    game = conn.execute(q.with_for_update() if lock else q).first()
    if game is None:
        return  # not a rated game, or already rated
    players = (game.account0, game.account1)
    rows = []
    for account in players:
        rq = select(ratings).where((ratings.c.account_id == account) & (ratings.c.category == game.category))
        rows.append(conn.execute(rq.with_for_update() if lock else rq).first())
    # Counted after the rating rows are locked: another game of the pair that ends at the same moment
    # waits for them, then counts this one.
    if pair_games_counted(conn, players, now) >= RATED_GAMES_A_PAIR:
        conn.execute(update(rated_games).where(rated_games.c.game_id == game_id).values(rated=now))
        return
    if winner is not None:
        score0 = 1.0 if winner == 0 else 0.0
    else:
        score0 = 1.0 if scores[0] > scores[1] else 0.0 if scores[0] < scores[1] else 0.5
    new = glicko2.rate_game(_stored_rating(rows[0]), _stored_rating(rows[1]), score0, glicko2.LICHESS, now.timestamp())
    for seat, (account, row, rating) in enumerate(zip(players, rows, new)):
        score = score0 if seat == 0 else 1 - score0
        result = {"wins": int(score == 1), "draws": int(score == 0.5), "losses": int(score == 0)}
        values = {"rating": rating.rating, "rd": rating.rd, "volatility": rating.volatility, "games": rating.games}
        if row is None:
            conn.execute(
                insert(ratings).values(account_id=account, category=game.category, updated=now, **values, **result)
            )
        else:
            conn.execute(
                update(ratings)
                .where((ratings.c.account_id == account) & (ratings.c.category == game.category))
                .values(updated=now, **values, **{k: getattr(ratings.c, k) + v for k, v in result.items()})
            )
        conn.execute(
            insert(rating_history).values(
                account_id=account, category=game.category, game_id=game_id, at=now, rating=rating.rating, rd=rating.rd
            )
        )
    conn.execute(update(rated_games).where(rated_games.c.game_id == game_id).values(rated=now))


def result_for(
    status: str, ending: str | None, winner: int | None, scores: tuple[int, int] | None, seat: int
) -> str | None:
    """How a game went for ``seat``: ``won``, ``lost`` or ``draw``; None while it is not over, for a game
    that ended with no result (aborted, expired, closed), or when its scores cannot be read. The one
    source of every page's and list's result: a game that ended early (on time, resigned, claimed) was
    won by its stored winner, whatever the scores were then (often 0-0).

    >>> result_for("finished", "time", 1, (0, 0), 1), result_for("finished", None, None, (3, 5), 0)
    ('won', 'lost')
    >>> result_for("finished", "abort", None, (0, 0), 0) is None
    True
    """
    if status != "finished" or ending in NO_RESULT:
        return None
    if ending is not None:
        return None if winner is None else "won" if winner == seat else "lost"
    if scores is None:
        return None
    mine, theirs = scores[seat], scores[1 - seat]
    return "won" if mine > theirs else "lost" if mine < theirs else "draw"


def pair_games_counted(conn: Any, players: tuple[str, str], now: datetime) -> int:
    """How many rated games between the two accounts ``players`` moved their ratings in the 24 hours up to
    ``now`` (a game that counted has a line in the rating history; one past the limit has none)."""
    a, b = players
    pair = ((rated_games.c.account0 == a) & (rated_games.c.account1 == b)) | (
        (rated_games.c.account0 == b) & (rated_games.c.account1 == a)
    )
    q = (
        select(func.count())
        .select_from(rating_history.join(rated_games, rated_games.c.game_id == rating_history.c.game_id))
        .where((rating_history.c.account_id == a) & (rating_history.c.at >= now - PAIR_WINDOW) & pair)
    )
    return int(conn.execute(q).scalar_one())


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
class Move:
    """A move to store (:meth:`Store.add_actions`), as :meth:`Store.add_action` takes it."""

    game_id: str
    seq: int
    seat: int
    action: int
    status: str
    scores: tuple[int, int]
    computer_next: bool = False
    computer_game: bool = True
    clock: tuple[float, float, float | None, float | None] | None = None


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
    ending: str | None = None  # ENDINGS: how it ended before its last hand; None when it did not
    winner: int | None = None  # the seat that won a game that ended so (None: no result)
    rematch_offer: int | None = None  # the seat that offered a rematch, once the match is over
    rematch: str | None = None  # the rematch's game id, once accepted


@dataclass(frozen=True, slots=True)
class ListedGame:
    """One game on a page of a lobby (:meth:`Store.games_of`)."""

    game: StoredGame | None  # None when its stored data cannot be read: ``problem`` says why
    seat: StoredSeat  # the lister's seat (its fields as stored, when ``game`` is None)
    other_name: str
    problem: str
    marked: bool  # the game is marked broken in the database (with its reason) already
    updated: datetime | None  # when it last changed, if that can be read: the key of the next page
    other_bot: bool = False  # the other seat is a bot's (koikoi.web.bots): listed with its BOT mark


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
# On PostgreSQL the move's announcement rides on the same statement (one round trip fewer a move).
_ADVANCE_GAME_NOTIFY = _ADVANCE_GAME.returning(func.pg_notify(NOTIFY_CHANNEL, bindparam("payload")))
_CLEAR_TURN = delete(ai_turns).where(ai_turns.c.game_id == bindparam("gid"))
_SET_CLOCK = (
    update(clocks)
    .where(clocks.c.game_id == bindparam("gid"))
    .values(
        bank0=bindparam("b0"), bank1=bindparam("b1"), turn_started=bindparam("started"), deadline=bindparam("deadline")
    )
)
_SEAT_BY_TOKEN = select(seats).where(seats.c.token == bindparam("token"))
# A game that has just ended, if it is a tournament's match: its tournament's director is told at once
# ("ended <tournament id>", koikoi.web.tournaments), so that the result is counted and its players paired
# again without waiting for the director's next look. Nothing is announced for any other game.
_TOURNAMENT_ENDED = select(
    func.pg_notify(TOURNAMENT_CHANNEL, func.concat("ended ", tournament_games.c.tournament_id))
).where(tournament_games.c.game_id == bindparam("gid"))


def two_player_games(conn: Any, new: list[tuple[dict[str, Any], int, int, str, str, str, str]]) -> list[list[str]]:
    """Insert games between two people (no computer, no invitation) in the transaction ``conn``, all in
    two statements: ``new`` holds (rules, seed, ai seed, name 0, owner 0, name 1, owner 1) for each.
    Returns each game's id and its two seat tokens, ``[game id, token 0, token 1]``. The lobby pairs many
    players in one wave: one round trip a table, not one a row."""
    now = _now()
    out, game_rows, seat_rows = [], [], []
    for rules, seed, ai_seed, name0, owner0, name1, owner1 in new:
        game_id, t0, t1 = new_token(9), new_token(), new_token()
        game_rows.append(
            {
                "id": game_id,
                "created": now,
                "updated": now,
                "rules": json.dumps({**rules, "rules_version": RULES_VERSION}),
                "seed": seed,
                "opponent": "friend",  # two people, as with a friend
                "ai_seed": ai_seed,
                "status": "playing",
                "moves": 0,
                "scores": "0,0",
                "birth_months": None,
            }
        )
        for seat, token, name, owner in ((0, t0, name0, owner0), (1, t1, name1, owner1)):
            seat_rows.append(
                {"token": token, "game_id": game_id, "seat": seat, "kind": "human", "name": name, "owner": owner}
            )
        out.append([game_id, t0, t1])
    if new:
        conn.execute(insert(games), game_rows)
        conn.execute(insert(seats), seat_rows)
    return out


def _clock_row(game_id: str, control: TimeControl, on_time: str, first: int, start: float | None) -> dict[str, Any]:
    started = None if start is None else decision_start(control, start, new_hand=True)
    return {
        "game_id": game_id,
        "control": control.id,
        "on_time": on_time,
        "bank0": control.bank,
        "bank1": control.bank,
        "turn_started": started,
        "deadline": None
        if started is None
        else deadline_of(control, [control.bank] * 2, first, started, first_move=on_time == "lose"),
        "flagged": None,
    }


def add_clock(conn: Any, game_id: str, control: TimeControl, on_time: str, *, first: int, start: float | None) -> None:
    """Give a new game a clock, in the transaction that creates it; it runs from ``start`` (Unix seconds;
    None: not yet, a friend game whose friend has not joined) with ``first`` to move."""
    conn.execute(insert(clocks).values(**_clock_row(game_id, control, on_time, first, start)))


def add_clocks(conn: Any, new: list[tuple[str, TimeControl, str, int]], *, start: float) -> None:
    """Give new games their clocks, running from ``start``, in one statement: ``new`` holds (game id, time
    control, what running out does, the seat to move first) for each (a quick-pairing wave's games)."""
    if new:
        conn.execute(insert(clocks), [_clock_row(g, c, o, first, start) for g, c, o, first in new])


def start_clock(conn: Any, game_id: str, *, first: int, now: float) -> None:
    """Start a game's clock that waited for the friend to join: ``first`` is to move."""
    row = conn.execute(select(clocks).where(clocks.c.game_id == game_id)).first()
    if row is None or row.turn_started is not None:
        return
    control = time_control(row.control)
    started = decision_start(control, now, new_hand=True)
    deadline = deadline_of(control, [row.bank0, row.bank1], first, started, first_move=row.on_time == "lose")
    conn.execute(update(clocks).where(clocks.c.game_id == game_id).values(turn_started=started, deadline=deadline))


def insert_game(
    conn: Any,
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
    computer_first: bool = False,
    clock: tuple[TimeControl, str, int] | None = None,
    private: bool = False,
) -> tuple[str, list[str], str | None]:
    """Insert a new game in the transaction ``conn`` (:meth:`Store.create_game`; the lobby, which pairs
    players and creates their game in one transaction). Returns the id, seat tokens and invitation.
    ``clock``: the time control, what running out does, and the seat to move first; the clock starts
    now unless the game waits for a friend (it starts when they join). ``private``: nobody may watch it
    (a casual game only; the caller checks)."""
    game_id = new_token(9)
    tokens = [new_token() for _ in seat_specs]
    invite = new_token() if invite_seat is not None else None
    now = _now()
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
        conn.execute(insert(seats).values(token=token, game_id=game_id, seat=seat, kind=kind, name=name, owner=owner))
    if invite is not None:
        conn.execute(
            insert(invitations).values(token=invite, game_id=game_id, seat=invite_seat, created=now, spent=None)
        )
    if computer_first:
        conn.execute(insert(ai_turns).values(game_id=game_id, seq=0, owner=None, until=_EPOCH))
    if clock is not None:
        control, on_time, first = clock
        start = None if status == "waiting" else now.timestamp()
        add_clock(conn, game_id, control, on_time, first=first, start=start)
    if private:
        conn.execute(insert(private_games).values(game_id=game_id, since=now))
    return game_id, tokens, invite


class Store:
    """The games, seats and actions in one database."""

    def __init__(self, url: str, *, upgrade: bool = True) -> None:
        """Open the database at ``url`` and bring its schema to the code's (:func:`koikoi.web.migrate.upgrade`:
        one look when it is current already). ``upgrade`` False opens it as it is (``koikoi db current``)."""
        url = normalise_url(url)
        try:
            parsed = make_url(url)
        except ArgumentError:
            raise StoreError(
                f"not a database URL: {url!r} (give a file path or e.g. postgresql://user:password@host/dbname)"
            ) from None
        self.url = url
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        self._trip = threading.local()  # .conn: the connection of a one_trip() on this thread
        if self.is_sqlite and parsed.database not in (None, "", ":memory:"):
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        try:
            kwargs: dict[str, Any] = {}
            if self.is_sqlite:
                kwargs["connect_args"] = {"check_same_thread": False}
            else:
                # No ping before each use: koikoi.web.database tries a call again once on a fresh connection
                # when the database had dropped the pooled one (a round trip saved on every call).
                kwargs.update(pool_size=10, max_overflow=20)
            self.engine: Engine = create_engine(url, **kwargs)
        except ImportError as e:
            raise StoreError(
                f"the database driver {e.name} is not installed (for PostgreSQL: pip install 'koikoi[postgres]')"
            ) from None
        except Exception as e:  # a missing driver, a bad option
            raise StoreError(f"cannot open the database {parsed.render_as_string(hide_password=True)}: {e}") from None
        if self.is_sqlite:
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self.upgraded: Upgrade | None = None  # what the upgrade on opening found and did (None: not run)
        if upgrade:
            from .migrate import SchemaError
            from .migrate import upgrade as upgrade_schema

            try:
                self.upgraded = upgrade_schema(self.engine)
            except SchemaError as e:
                raise SchemaError(
                    f"cannot use the database {parsed.render_as_string(hide_password=True)}: {e}"
                ) from None
            except Exception as e:
                raise StoreError(
                    f"cannot use the database {parsed.render_as_string(hide_password=True)}: "
                    f"{type(e).__name__}: {str(e).splitlines()[0]}"
                ) from None

    @contextmanager
    def one_trip(self) -> Iterator[None]:
        """The reads made on this thread meanwhile (each through :meth:`reading`) share one connection: a
        game's parts read in one checkout of the pool and one end of its transaction, not one per part."""
        if getattr(self._trip, "conn", None) is not None:
            yield
            return
        with self.engine.connect() as conn:
            self._trip.conn = conn
            try:
                yield
            finally:
                self._trip.conn = None

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """A connection to read with: that of a :meth:`one_trip` on this thread, or one of its own."""
        conn = getattr(self._trip, "conn", None)
        if conn is not None:
            yield conn
            return
        with self.engine.connect() as conn:
            yield conn

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
        computer_first: bool = False,
        clock: tuple[TimeControl, str, int] | None = None,
        private: bool = False,
    ) -> tuple[str, list[str], str | None]:
        """Store a new game; ``seat_specs`` are (seat, kind, name, owner). ``computer_first``: the computer
        makes move 0, noted for any process to claim, as :meth:`add_action` notes its later turns.
        ``clock``: as :func:`insert_game`'s. ``private``: nobody may watch it.

        Returns the id, the seat tokens and, with ``invite_seat``, the invitation token for that seat.
        The invited seat's own token is a secret nobody is given: :meth:`join` replaces it.
        """
        with self.engine.begin() as conn:
            return insert_game(
                conn,
                rules=rules,
                seed=seed,
                opponent=opponent,
                ai_seed=ai_seed,
                status=status,
                seat_specs=seat_specs,
                birth_months=birth_months,
                invite_seat=invite_seat,
                rules_version=rules_version,
                computer_first=computer_first,
                clock=clock,
                private=private,
            )

    def invitation(self, token: str) -> Invitation | None:
        """The invitation with ``token``; :class:`StoreError` (for its game) when it cannot be read."""
        with self.engine.connect() as conn:
            row = conn.execute(select(invitations).where(invitations.c.token == token)).first()
        return None if row is None else _invitation_from(row._asdict())

    def invitation_of(self, game_id: str) -> Invitation | None:
        with self.reading() as conn:
            row = conn.execute(select(invitations).where(invitations.c.game_id == game_id)).first()
        return None if row is None else _invitation_from(row._asdict())

    def join(self, invite_token: str, owner: str, name: str, *, first: int = 0) -> str:
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
            # The game must still wait for its friend: the server's sweep may have just ended it, unused.
            started = conn.execute(
                update(games)
                .where(games.c.id == inv.game_id, games.c.status == "waiting")
                .values(status="playing", updated=now)
            )
            if started.rowcount != 1:
                raise StoreError("this invitation has expired", conflict=True)
            taken = conn.execute(
                update(seats)
                .where(seats.c.game_id == inv.game_id, seats.c.seat == inv.seat, seats.c.owner.is_(None))
                .values(token=fresh, owner=owner, name=name)
            )
            if taken.rowcount != 1:
                raise StoreError("this seat was already taken", conflict=True)
            start_clock(conn, inv.game_id, first=first, now=now.timestamp())
            self._notify(conn, inv.game_id, 0)
        return fresh

    def mark_broken(self, game_id: str, reason: str) -> None:
        """Record that a game cannot be rebuilt, and why; its players see it listed as broken."""
        now = _now()
        with self.engine.begin() as conn:
            got = conn.execute(update(games).where(games.c.id == game_id).values(status="broken", updated=now))
            if got.rowcount == 1 and (
                conn.execute(select(problems.c.game_id).where(problems.c.game_id == game_id)).first() is None
            ):
                conn.execute(insert(problems).values(game_id=game_id, reason=reason[:2000], at=now))
            conn.execute(delete(ai_turns).where(ai_turns.c.game_id == game_id))
            self._notify(conn, game_id, -1)

    def problem_of(self, game_id: str) -> str | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(problems.c.reason).where(problems.c.game_id == game_id)).first()
        return None if row is None else _reason(row.reason)

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
        computer_game: bool = True,
        clock: tuple[float, float, float | None, float | None] | None = None,
    ) -> None:
        """Store action number ``seq`` (0-based) of a game, and the game's new status, in one transaction.

        ``clock``: a game played with a clock, its banks, when the next decision starts using its time,
        and its deadline (None, None once the game is over), stored with the move.

        ``computer_next``: the computer is to make the next move; its turn is noted for any process to
        claim (:meth:`claim_computer_turn`), and otherwise the game's turn note, if any, is cleared.
        ``computer_game`` False (a game between two players, which has no turn notes) skips the clearing.
        """
        self.add_move(Move(game_id, seq, seat, action, status, scores, computer_next, computer_game, clock))

    def add_move(self, move: Move) -> None:
        """:meth:`add_action`, the move given as one value."""
        try:
            with self.engine.begin() as conn:
                self._add(conn, move, _now())
        except IntegrityError:
            raise StoreError(f"game {move.game_id}: move {move.seq} was already stored", conflict=True) from None

    def add_actions(self, moves: list[Move]) -> list[StoreError | None]:
        """Store several games' moves (each as :meth:`add_action` would) in one transaction: one commit
        for them all. Where one of them cannot be stored (another process stored that move first), each
        is stored on its own instead, so that the others land; for each move, None or why it was not
        stored. A move that ends its game rates it, and is best written alone (:meth:`add_action`)."""
        if not moves:
            return []
        now = _now()
        try:
            with self.engine.begin() as conn:
                for move in moves:
                    self._add(conn, move, now)
            return [None] * len(moves)
        except (StoreError, IntegrityError):
            pass  # none of them landed: the transaction was rolled back
        out: list[StoreError | None] = []
        for m in moves:
            try:
                self.add_move(m)
                out.append(None)
            except StoreError as e:
                out.append(e)
        return out

    def _add(self, conn: Connection, move: Move, now: datetime) -> None:
        game_id, seq, scores, clock = move.game_id, move.seq, move.scores, move.clock
        values = {
            "gid": game_id,
            "seq": seq,
            "next": seq + 1,
            "new_status": move.status,
            "now": now,
            "new_scores": f"{scores[0]},{scores[1]}",
        }
        conn.execute(
            _INSERT_ACTION, {"game_id": game_id, "seq": seq, "seat": move.seat, "action": move.action, "at": now}
        )
        if self.is_sqlite:
            advanced = conn.execute(_ADVANCE_GAME, values).rowcount
        else:  # the announcement, when this transaction commits (see _notify)
            announce = {**values, "payload": f"{game_id} {seq + 1}"}
            advanced = len(conn.execute(_ADVANCE_GAME_NOTIFY, announce).all())
        if advanced != 1:
            raise StoreError(f"game {game_id}: move {seq} was already stored", conflict=True)
        if move.computer_game or move.computer_next:
            conn.execute(_CLEAR_TURN, {"gid": game_id})
        if move.computer_next:
            conn.execute(insert(ai_turns).values(game_id=game_id, seq=seq + 1, owner=None, until=_EPOCH))
        if clock is not None:
            conn.execute(
                _SET_CLOCK,
                {"gid": game_id, "b0": clock[0], "b1": clock[1], "started": clock[2], "deadline": clock[3]},
            )
        if move.status == "finished":
            rate(conn, game_id, scores, now, lock=not self.is_sqlite)
            self.tournament_ended(conn, game_id)

    # -- ratings ------------------------------------------------------------------------------------------

    def make_rated(self, game_id: str, category: str, account0: str, account1: str) -> None:
        """Make a game between two accounts count for their ratings in ``category`` when it ends."""
        if account0 == account1:
            raise StoreError("a rated game needs two different accounts")
        with self.engine.begin() as conn:
            conn.execute(
                insert(rated_games).values(
                    game_id=game_id, category=category, account0=account0, account1=account1, rated=None
                )
            )

    def rating_of(self, account_id: str, category: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(ratings).where((ratings.c.account_id == account_id) & (ratings.c.category == category))
            ).first()
        return None if row is None else row._asdict()

    def ratings_of(self, account_id: str) -> list[dict[str, Any]]:
        """The account's rating in each category it has played rated games in."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(ratings).where(ratings.c.account_id == account_id)).all()
        return [r._asdict() for r in rows]

    def leaderboard(
        self, category: str, *, active_since: datetime, max_rd: float, limit: int, bots: bool = False
    ) -> list[dict[str, Any]]:
        """The best ratings of ``category`` among accounts that played since ``active_since``, whose
        stored RD is at most ``max_rd`` (the caller checks the RD as of now), highest first: people's,
        or with ``bots`` the bots' (listed apart, never among the people)."""
        q = (
            select(accounts.c.name, ratings)
            .join(accounts, accounts.c.id == ratings.c.account_id)
            .where(
                (ratings.c.category == category)
                & (ratings.c.updated >= active_since)
                & (ratings.c.rd <= max_rd)
                & accounts.c.disabled.is_(None)
                & (accounts.c.bot_since.is_not(None) if bots else accounts.c.bot_since.is_(None))
            )
            .order_by(ratings.c.rating.desc(), accounts.c.name_key)
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [r._asdict() for r in conn.execute(q)]

    def rating_history_of(self, account_id: str, category: str, limit: int = 500) -> list[dict[str, Any]]:
        """The account's ratings after each rated game in ``category``, oldest first (the last ``limit``)."""
        q = (
            select(rating_history.c.game_id, rating_history.c.at, rating_history.c.rating, rating_history.c.rd)
            .where((rating_history.c.account_id == account_id) & (rating_history.c.category == category))
            .order_by(rating_history.c.at.desc(), rating_history.c.game_id.desc())
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [r._asdict() for r in reversed(conn.execute(q).all())]

    def tournament_ended(self, conn: Any, game_id: str) -> None:
        """In the transaction that ends a game: if it is a tournament's match, tell its director (PostgreSQL;
        on SQLite the one process's director looks every half second)."""
        if not self.is_sqlite:
            conn.execute(_TOURNAMENT_ENDED, {"gid": game_id})

    def announce(self, conn: Any, game_id: str, moves: int) -> None:
        """:meth:`_notify`, for the modules that change games besides this one (koikoi.web.tablestore):
        ``moves`` -1 says that something else than a move changed (an ending, a player leaving)."""
        self._notify(conn, game_id, moves)

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
                row = conn.execute(select(ai_turns.c.game_id).where(ai_turns.c.game_id == game_id)).first()
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

    def drop_computer_turn(self, game_id: str, *, claimed_too: bool = False) -> None:
        """Forget a game's note of a computer move that is not (any more) to be made: unless no process
        holds it, or ``claimed_too`` (a game that is gone or broken: no process will make it)."""
        with self.engine.begin() as conn:
            q = delete(ai_turns).where(ai_turns.c.game_id == game_id)
            if not claimed_too:
                q = q.where(or_(ai_turns.c.owner.is_(None), ai_turns.c.until < self._clock(0)[0]))
            conn.execute(q)

    def computer_turn(self, game_id: str) -> tuple[int, str | None, datetime] | None:
        """A game's note of a computer move to make, (move number, process thinking, claim's end), or
        None; :class:`StoreError` when it cannot be read (a note never read would stall the game)."""
        with self.reading() as conn:
            row = conn.execute(
                select(ai_turns.c.seq, ai_turns.c.owner, ai_turns.c.until).where(ai_turns.c.game_id == game_id)
            ).first()
        if row is None:
            return None
        try:
            seq = _whole(row.seq, "computer's move number", 0, 2**31 - 1)
            owner = None if row.owner is None else _text(row.owner, "computer move's process", 32)
            return seq, owner, _moment(row.until, "end of the computer move's claim")
        except ValueError as e:
            raise _damage(game_id, str(e)) from None

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
        """A seat's stored review. One that cannot be read is marked failed, with what is wrong: it is
        worked out again when asked for (a review is made from the game, never the other way round)."""
        with self.engine.connect() as conn:
            row = conn.execute(select(reviews).where(reviews.c.game_id == game_id, reviews.c.seat == seat)).first()
        if row is None:
            return None
        d = row._asdict()
        problem = _review_problem(d, body=True)
        if problem is None:
            d["until"] = _moment(d["until"], "claim time")  # SQLite hands back naive datetimes, stored in UTC
            return StoredReview(**d)
        with self.engine.begin() as conn:
            return self._mend_review(conn, game_id, seat, problem)

    def _mend_review(self, conn: Any, game_id: str, seat: Any, problem: str) -> StoredReview:
        """Mark a stored review that cannot be read failed (so that asking again works it out anew)."""
        failed: dict[str, Any] = {
            "status": "failed",
            "done": 0,
            "total": None,
            "owner": None,
            "until": _EPOCH,
            "body": f"the stored review could not be read ({problem}): ask for it again",
        }
        conn.execute(update(reviews).where(reviews.c.game_id == game_id, reviews.c.seat == seat).values(**failed))
        return StoredReview(game_id=game_id, seat=seat, **failed)

    def _mend_reviews(self, conn: Any, game_id: str) -> None:
        """Before a claim: the game's review rows that cannot be read are marked failed, and a row for a
        seat the game does not have is dropped, so that no damaged row holds a claim for ever."""
        for r in conn.execute(
            select(
                reviews.c.seat, reviews.c.status, reviews.c.done, reviews.c.total, reviews.c.owner, reviews.c.until
            ).where(reviews.c.game_id == game_id)
        ).all():
            if type(r.seat) is not int or r.seat not in (0, 1):
                conn.execute(delete(reviews).where(reviews.c.game_id == game_id, reviews.c.seat == r.seat))
            elif (problem := _review_problem(r._asdict(), body=False)) is not None:
                self._mend_review(conn, game_id, r.seat, problem)

    def claim_review(self, game_id: str, seat: int, owner: str, lease: float) -> str:
        """Claim the review of ``seat`` in a game for ``owner``: "claimed" (work it out now), "done" (it is
        stored), "running" (a live claim holds it) or "other" (a review of the game's other seat runs:
        one review at a time per game). A failed review, or one whose claim ran out, is claimed again."""
        now, until = self._clock(lease)
        live = (reviews.c.status == "running") & (reviews.c.until >= now)
        try:
            with self.engine.begin() as conn:
                self._mend_reviews(conn, game_id)
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
        """The seat with ``token``; :class:`StoreError` (for its game) when it cannot be read."""
        with self.reading() as conn:
            row = conn.execute(_SEAT_BY_TOKEN, {"token": token}).first()
        return None if row is None else _seat_from(row._asdict())

    def seats_of(self, game_id: str) -> list[StoredSeat]:
        with self.reading() as conn:
            rows = conn.execute(select(seats).where(seats.c.game_id == game_id).order_by(seats.c.seat)).all()
        return [_seat_from(r._asdict()) for r in rows]

    def game(self, game_id: str) -> StoredGame | None:
        with self.reading() as conn:
            row = conn.execute(select(games).where(games.c.id == game_id)).first()
        return None if row is None else _game(row)

    def actions_of(self, game_id: str, since: int = 0, until: int | None = None) -> list[tuple[int, int]]:
        """(seat, action) in order, action numbers ``since`` up to ``until`` (excluded; None: all).

        Reading a game's row and then its actions up to the row's ``moves`` gives a consistent pair
        even while another process adds moves: the row is updated in the same transaction as its action.
        :class:`StoreError` when a move is missing or its seat or action is not a number (whether an
        action is legal is for the engine to say).
        """
        q = select(actions.c.seq, actions.c.seat, actions.c.action).where(
            actions.c.game_id == game_id, actions.c.seq >= since
        )
        if until is not None:
            q = q.where(actions.c.seq < until)
        with self.reading() as conn:
            rows = conn.execute(q.order_by(actions.c.seq)).all()
        out = []
        for n, r in enumerate(rows, start=since):
            if type(r.seq) is not int or r.seq != n:
                raise _damage(game_id, f"its stored move {n} is missing (the next one stored is {_shown(r.seq)})")
            if type(r.seat) is not int or r.seat not in (0, 1):
                raise _damage(game_id, f"its stored move {n} is by seat {_shown(r.seat)}, not 0 or 1")
            if type(r.action) is not int:
                raise _damage(game_id, f"its stored move {n} is {_shown(r.action)}, not an action number")
            out.append((r.seat, r.action))
        if until is not None and since + len(out) < until:  # the last ones, or all, are gone
            raise _damage(game_id, f"its stored move {since + len(out)} is missing (the game says {until} are stored)")
        return out

    def games_of(
        self, owner: str, *, limit: int = 50, before: tuple[datetime, str] | None = None, finished: bool = False
    ) -> list[ListedGame]:
        """A page of the games in which ``owner`` holds a seat, newest first (with ``finished``, only the
        finished ones). ``before`` is the (updated, id) of the last game of the previous page. A game whose
        stored data cannot be read is listed with ``game`` None and the reason; it never hides the others."""
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
                other.c.owner.label("other_owner"),
                problems.c.reason.label("problem"),
            )
            .join(seats, seats.c.game_id == games.c.id)
            .outerjoin(other, (other.c.game_id == games.c.id) & (other.c.seat != seats.c.seat))
            .outerjoin(problems, problems.c.game_id == games.c.id)
            .where(seats.c.owner == owner)
        )
        if finished:
            q = q.where(games.c.status == "finished")
        if before is not None:
            at, gid = before
            q = q.where((games.c.updated < at) | ((games.c.updated == at) & (games.c.id < gid)))
        q = q.order_by(games.c.updated.desc(), games.c.id.desc()).limit(limit)
        with self.engine.connect() as conn:
            rows = conn.execute(q).all()
            others = {o[2:] for o in (r.other_owner for r in rows) if isinstance(o, str) and o.startswith("a:")}
            bots = (
                {
                    a.id
                    for a in conn.execute(
                        select(accounts.c.id).where(
                            accounts.c.id.in_(sorted(others)) & accounts.c.bot_since.is_not(None)
                        )
                    )
                }
                if others
                else set()
            )
        out: list[ListedGame] = []
        for r in rows:
            d = r._asdict()
            seat_row = {k: d.pop(k) for k in ("token", "seat", "kind", "name", "owner")}
            seat_row["game_id"] = d["id"]
            other_owner = d.pop("other_owner")
            other_name = d.pop("other_name")
            problem = d.pop("problem")
            problem = "" if problem is None else _reason(problem)
            updated = d["updated"] if isinstance(d["updated"], datetime) else None
            if updated is not None and updated.tzinfo is None:
                updated = updated.replace(tzinfo=UTC)
            game: StoredGame | None
            try:
                seat = _seat_from(seat_row)
                if other_name is not None and not isinstance(other_name, str):
                    raise _damage(d["id"], f"its stored name of seat {1 - seat.seat} is not text")
                game = _game_from(d)
            except StoreError as e:
                game, seat, problem = None, _seat_as_stored(seat_row), problem or str(e)
            out.append(
                ListedGame(
                    game=game,
                    seat=seat,
                    other_name=other_name if isinstance(other_name, str) else "",
                    problem=problem,
                    marked=d["status"] == "broken",
                    updated=updated,
                    other_bot=isinstance(other_owner, str) and other_owner[2:] in bots,
                )
            )
        return out

    def lost_seats_of(self, owner: str, *, limit: int = 50) -> list[StoredSeat]:
        """Seats of ``owner`` whose game is not in the database (its row was removed or its id changed
        by hand: SQLite checks the link only where this module opens the file)."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(seats).where(seats.c.owner == owner, ~exists().where(games.c.id == seats.c.game_id)).limit(limit)
            ).all()
        return [_seat_as_stored(r._asdict()) for r in rows]

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


# -- reading what is stored, trusting none of it -------------------------------------------------------


def _shown(value: Any, limit: int = 40) -> str:
    """A stored value as a reason may quote it: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _damage(game_id: Any, what: str) -> StoreError:
    """Damage found in game ``game_id``'s stored data: the error its caller marks the game broken with."""
    if isinstance(game_id, str) and len(game_id) <= 64:
        return StoreError(f"game {game_id}: {what}", game_id=game_id)
    return StoreError(f"a game whose stored id {_shown(game_id)} cannot be read: {what}")


def _whole(value: Any, what: str, low: int, high: int, *, secret: bool = False, span: str = "") -> int:
    if type(value) is int and low <= value <= high:
        return value
    shown = "" if secret else f" {_shown(value)}"
    raise ValueError(f"its stored {what}{shown} is not a whole number {span or f'{low}..{high}'}")


def _text(value: Any, what: str, limit: int, *, choices: tuple[str, ...] = (), secret: bool = False) -> str:
    if isinstance(value, str) and len(value) <= limit and (not choices or value in choices):
        return value
    shown = "" if secret else f" {_shown(value)}"
    if choices:
        raise ValueError(f"its stored {what}{shown} is not one of {', '.join(choices)}")
    raise ValueError(f"its stored {what}{shown} is not text of at most {limit} characters")


def _moment(value: Any, what: str) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)  # SQLite's are naive UTC
    raise ValueError(f"its stored {what} {_shown(value)} is not a date and time")


def _game_from(d: dict[str, Any]) -> StoredGame:
    """A stored game from its row; :class:`StoreError` naming the column when one cannot be read."""
    gid = d["id"]
    try:
        _text(gid, "id", 64)
        created = _moment(d["created"], "creation time")
        updated = _moment(d["updated"], "time of last change")
        scores = d["scores"]
        try:
            s0, s1 = (int(x) for x in scores.split(","))
        except (ValueError, AttributeError, TypeError):
            raise ValueError(f"its stored scores {_shown(scores)} are not two numbers") from None
        bm = d.get("birth_months")
        months: tuple[int, int] | None = None
        if bm is not None and bm != "":
            try:
                m0, m1 = (int(x) for x in bm.split(","))
                if not (1 <= m0 <= 12 and 1 <= m1 <= 12):
                    raise ValueError
            except (ValueError, AttributeError, TypeError):
                raise ValueError(f"its stored birth months {_shown(bm, 20)} are not two months 1..12") from None
            months = (m0, m1)
        try:
            if not isinstance(d["rules"], str):
                raise ValueError(f"not text but {type(d['rules']).__name__}")
            rules = safejson.loads(d["rules"])
            if not isinstance(rules, dict):
                raise ValueError("not an object")
        except ValueError as e:
            raise ValueError(f"its stored rules are not a JSON object ({e})") from None
        version = rules.pop("rules_version", 1)
        if not isinstance(version, int) or isinstance(version, bool):
            raise ValueError(f"its stored rules version {_shown(version, 20)} is not a whole number")
        game = StoredGame(
            id=gid,
            created=created,
            updated=updated,
            rules=rules,
            # The seeds are secret until the game is over: a reason never quotes them.
            seed=_whole(d["seed"], "seed", 0, _SEED_LIMIT - 1, secret=True, span="0..2**63-1"),
            opponent=_text(d["opponent"], "opponent", 16),
            ai_seed=_whole(d["ai_seed"], "computer's seed", 0, _SEED_LIMIT - 1, secret=True, span="0..2**63-1"),
            status=_text(d["status"], "status", 16, choices=STATUSES),
            moves=_whole(d["moves"], "number of moves", 0, 2**31 - 1),
            scores=(s0, s1),
            birth_months=months,
            rules_version=version,
            ending=None if d.get("ending") is None else _text(d["ending"], "ending", 16, choices=ENDINGS),
            winner=None if d.get("winner") is None else _whole(d["winner"], "winner", 0, 1),
            rematch_offer=None if d.get("rematch_offer") is None else _whole(d["rematch_offer"], "rematch offer", 0, 1),
            rematch=None if d.get("rematch") is None else _text(d["rematch"], "rematch", 32),
        )
        if game.ending is not None and game.status != "finished":
            raise ValueError(f"it is stored as ended by {game.ending}, but its status is {game.status}")
    except ValueError as e:
        raise _damage(gid, str(e)) from None
    return game


def _seat_from(d: dict[str, Any]) -> StoredSeat:
    """A stored seat from its row; :class:`StoreError` (for its game) when a column cannot be read. A
    seat's token and its owner are secrets: a reason never quotes them."""
    gid = d["game_id"]
    try:
        _text(gid, "id", 64)
        seat = _whole(d["seat"], "seat number", 0, 1)
        return StoredSeat(
            token=_text(d["token"], f"link of seat {seat}", 64, secret=True),
            game_id=gid,
            seat=seat,
            kind=_text(d["kind"], f"kind of seat {seat}", 16, choices=("human", "ai")),
            name=_text(d["name"], f"name of seat {seat}", 64),
            owner=None if d["owner"] is None else _text(d["owner"], f"owner of seat {seat}", 64, secret=True),
        )
    except ValueError as e:
        raise _damage(gid, str(e)) from None


def _seat_as_stored(d: dict[str, Any]) -> StoredSeat:
    """A seat whose row cannot be read, as far as it can: enough to list its game as broken."""
    seat = d["seat"]
    return StoredSeat(
        token=d["token"] if isinstance(d["token"], str) else "",
        game_id=d["game_id"] if isinstance(d["game_id"], str) else _shown(d["game_id"]),
        seat=seat if type(seat) is int else -1,
        kind=d["kind"] if isinstance(d["kind"], str) else "",
        name="",
        owner=None,
    )


def _invitation_from(d: dict[str, Any]) -> Invitation:
    gid = d["game_id"]
    try:
        _text(gid, "id", 64)
        return Invitation(
            token=_text(d["token"], "invitation", 64, secret=True),
            game_id=gid,
            seat=_whole(d["seat"], "invited seat", 0, 1),
            created=_moment(d["created"], "invitation time"),
            spent=None if d["spent"] is None else _moment(d["spent"], "time its invitation was used"),
        )
    except ValueError as e:
        raise _damage(gid, str(e)) from None


def _review_problem(d: dict[str, Any], *, body: bool) -> str | None:
    """What is wrong with a stored review's row, or None (``body``: check that a done one's body is JSON)."""
    try:
        status = _text(d["status"], "status", 16, choices=_REVIEW_STATUSES)
        _whole(d["done"], "count of decisions judged", 0, 2**31 - 1)
        if d["total"] is not None:
            _whole(d["total"], "count of decisions to judge", 0, 2**31 - 1)
        if d["owner"] is not None:
            _text(d["owner"], "owner", 32, secret=True)
        _moment(d["until"], "claim time")
        if body:
            if d["body"] is not None and not isinstance(d["body"], str):
                raise ValueError(f"its stored body is not text but {type(d['body']).__name__}")
            if status == "done":
                try:
                    if not isinstance(json.loads(d["body"] or ""), dict):
                        raise ValueError("not an object")
                except ValueError as e:
                    raise ValueError(f"its stored review is not a JSON object ({_shown(str(e))})") from None
    except ValueError as e:
        return str(e)
    return None


def _reason(value: Any) -> str:
    """A stored reason a game is broken, as it can be shown."""
    return value if isinstance(value, str) else "its stored reason cannot be read"


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # WAL lets readers go on during a write; synchronous=NORMAL in WAL mode loses nothing when the
    # process dies (only a power cut can drop the last commits), and keeps a commit well under a millisecond.
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=5000")
    cur.close()
