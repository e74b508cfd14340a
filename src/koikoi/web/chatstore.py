"""A game's chat, and a tournament's, in the database (the tables ``chat_messages``, ``chat_mutes`` and
``chat_reports`` of :mod:`koikoi.web.store`); every method runs on a database thread
(:class:`~koikoi.web.database.Database`).

A message is kept with its game, in one of two rooms: ``players`` (the two seats) or ``spectators``; or with
a tournament, in its room ``tournament`` (no game: :mod:`koikoi.web.tournaments`). It is
plain text (checked by :mod:`koikoi.web.chat` before it comes here) or a phrase's id. Its author is known
by their *owner key* (an account's ``a:<id>``, or a guest's browser id), which never leaves the server.
A message of an account that a moderator disabled is refused, and the messages it wrote before are no
longer shown. On PostgreSQL each new message, and each mute, is announced on
:data:`~koikoi.web.store.CHAT_CHANNEL` when its transaction commits.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, func, insert, or_, select
from sqlalchemy.exc import IntegrityError

from .schema import accounts, chat_messages, chat_mutes, chat_reports, games
from .store import CHAT_CHANNEL, TOURNAMENT_CHANNEL, Store

__all__ = ["ROOMS", "ChatMessage", "ChatRefused", "ChatStore"]

ROOMS = ("players", "spectators", "tournament")  # a tournament's room has no game (koikoi.web.tournaments)
HISTORY = 50  # messages of a room sent to a socket that opens (the newest)


class ChatRefused(Exception):
    """A message, mute or report the database side refuses: ``code`` and a message for the author."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class ChatMessage:
    id: int
    game_id: str | None  # None: a tournament's message
    room: str
    seat: int | None
    author: str  # the owner key: never sent to a client
    account_id: str | None
    name: str
    text: str | None
    phrase: str | None
    at: datetime
    tournament_id: str | None = None

    def shown(self) -> dict[str, Any]:
        """What a reader is sent: the words (or the phrase's id), who wrote them and when; not who the
        author is behind their name."""
        return {
            "id": self.id,
            "room": self.room,
            "seat": self.seat,
            "name": self.name,
            "account": self.account_id is not None,
            "text": self.text,
            "phrase": self.phrase,
            "at": self.at.isoformat(),
        }


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def _message(row: Any) -> ChatMessage | None:
    try:
        return ChatMessage(
            id=int(row.id),
            game_id=None if row.game_id is None else str(row.game_id),
            room=str(row.room),
            seat=None if row.seat is None else int(row.seat),
            author=str(row.author),
            account_id=None if row.account_id is None else str(row.account_id),
            name=str(row.name),
            text=None if row.text is None else str(row.text),
            phrase=None if row.phrase is None else str(row.phrase),
            at=_aware(row.at),
            tournament_id=None if row.tournament_id is None else str(row.tournament_id),
        )
    except (TypeError, ValueError, AttributeError):  # a row written by hand: left out, the chat goes on
        return None


def _messages(rows: Any) -> list[ChatMessage]:
    return [m for m in map(_message, rows) if m is not None]


# Messages shown: those whose author's account (if any) is not disabled.
_SHOWN = select(chat_messages).outerjoin(accounts, accounts.c.id == chat_messages.c.account_id)
_NOT_DISABLED = or_(chat_messages.c.account_id.is_(None), accounts.c.disabled.is_(None))


class ChatStore:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = store.engine

    def _announce(self, conn: Any, payload: str) -> None:
        if not self.store.is_sqlite:
            conn.execute(select(func.pg_notify(CHAT_CHANNEL, payload)))

    def add(
        self,
        game_id: str | None,
        room: str,
        *,
        seat: int | None,
        author: str,
        account_id: str | None,
        name: str,
        text: str | None,
        phrase: str | None,
        max_in_room: int,
        max_per_author: int | None = None,
        tournament_id: str | None = None,
    ) -> ChatMessage:
        """Keep a message with its game (or, ``tournament_id`` and no game, with a tournament's room);
        :class:`ChatRefused` when its author's account is disabled, the room holds ``max_in_room`` messages
        already, or (where given) its author has written ``max_per_author`` of them. Each room counts its
        own, so spectators never fill the players' room."""
        if room not in ROOMS:
            raise ValueError(f"no chat room {room!r}")
        now = datetime.now(UTC)
        with self.engine.begin() as conn:
            accounts_to_check = {account_id} | ({author[2:]} if author.startswith("a:") else set())
            for aid in accounts_to_check - {None}:
                row = conn.execute(select(accounts.c.disabled).where(accounts.c.id == aid)).first()
                if row is not None and row.disabled is not None:
                    raise ChatRefused("account_disabled", "this account has been disabled: it cannot chat")
            if tournament_id is not None:
                in_room = (chat_messages.c.tournament_id == tournament_id) & (chat_messages.c.room == room)
            else:
                in_room = (chat_messages.c.game_id == game_id) & (chat_messages.c.room == room)
            held = conn.execute(select(func.count()).select_from(chat_messages).where(in_room)).scalar_one()
            if held >= max_in_room:
                raise ChatRefused(
                    "chat_full", f"this game's {room}' chat holds {max_in_room} messages, the most it keeps"
                )
            if max_per_author is not None:
                own = conn.execute(
                    select(func.count()).select_from(chat_messages).where(in_room & (chat_messages.c.author == author))
                ).scalar_one()
                if own >= max_per_author:
                    raise ChatRefused(
                        "chat_share_used",
                        f"you have written {own} messages in this game's {room}' chat, the most one person may",
                    )
            values: dict[str, Any] = {
                "game_id": game_id,
                "room": room,
                "seat": seat,
                "author": author,
                "account_id": account_id,
                "name": name,
                "text": text,
                "phrase": phrase,
                "at": now,
                "tournament_id": tournament_id,
            }
            try:
                got = conn.execute(insert(chat_messages).values(**values))
            except IntegrityError:
                raise ChatRefused("no_game", f"no game {game_id or tournament_id}") from None
            key = got.inserted_primary_key
            assert key is not None  # the key of the row just inserted (None only for other statements)
            message_id = int(key[0])
            if tournament_id is not None:  # the tournament's pages hear of it on the tournaments' channel
                if not self.store.is_sqlite:
                    conn.execute(select(func.pg_notify(TOURNAMENT_CHANNEL, f"chat {tournament_id} {message_id}")))
            else:
                self._announce(conn, f"chat {game_id} {message_id}")
        return ChatMessage(id=message_id, **values)

    def recent(self, game_id: str, room: str, limit: int = HISTORY) -> list[ChatMessage]:
        """The newest ``limit`` messages of a room that are shown, oldest first."""
        q = (
            _SHOWN.where((chat_messages.c.game_id == game_id) & (chat_messages.c.room == room) & _NOT_DISABLED)
            .order_by(chat_messages.c.id.desc())
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return list(reversed(_messages(conn.execute(q))))

    def recent_in_tournament(self, tournament_id: str, limit: int = HISTORY) -> list[ChatMessage]:
        """The newest ``limit`` messages of a tournament's room that are shown, oldest first."""
        q = (
            _SHOWN.where((chat_messages.c.tournament_id == tournament_id) & _NOT_DISABLED)
            .order_by(chat_messages.c.id.desc())
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return list(reversed(_messages(conn.execute(q))))

    def by_ids_in_tournament(self, tournament_id: str, ids: list[int]) -> list[ChatMessage]:
        """The messages of a tournament's room with these ids that are shown, in order (at most 500 ids)."""
        q = _SHOWN.where(
            (chat_messages.c.tournament_id == tournament_id) & chat_messages.c.id.in_(ids[:500]) & _NOT_DISABLED
        ).order_by(chat_messages.c.id)
        with self.engine.connect() as conn:
            return _messages(conn.execute(q))

    def by_ids(self, game_id: str, ids: list[int]) -> list[ChatMessage]:
        """The messages of a game with these ids that are shown, in order (at most 500 ids)."""
        q = _SHOWN.where(
            (chat_messages.c.game_id == game_id) & chat_messages.c.id.in_(ids[:500]) & _NOT_DISABLED
        ).order_by(chat_messages.c.id)
        with self.engine.connect() as conn:
            return _messages(conn.execute(q))

    def message(self, message_id: int) -> ChatMessage | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(chat_messages).where(chat_messages.c.id == message_id)).first()
        return None if row is None else _message(row)

    # -- muting ---------------------------------------------------------------------------------------------

    def mutes(self, game_id: str) -> set[int]:
        """The seats of a game that muted the other."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(chat_mutes.c.seat).where(chat_mutes.c.game_id == game_id)).all()
        return {r.seat for r in rows if r.seat in (0, 1)}

    def set_mute(self, game_id: str, seat: int, muted: bool) -> None:
        """``seat`` mutes (or unmutes) the other player of the game."""
        with self.engine.begin() as conn:
            conn.execute(delete(chat_mutes).where((chat_mutes.c.game_id == game_id) & (chat_mutes.c.seat == seat)))
            if muted:
                conn.execute(insert(chat_mutes).values(game_id=game_id, seat=seat, at=datetime.now(UTC)))
            self._announce(conn, f"mute {game_id}")

    # -- reports --------------------------------------------------------------------------------------------

    def report(self, message_id: int, reporter: str, reporter_name: str) -> None:
        """Keep a report of a message; :class:`ChatRefused` when this person reported it already."""
        try:
            with self.engine.begin() as conn:
                conn.execute(
                    insert(chat_reports).values(
                        message_id=message_id, reporter=reporter, reporter_name=reporter_name, at=datetime.now(UTC)
                    )
                )
        except IntegrityError:
            raise ChatRefused("already_reported", "you have reported this message already") from None

    def reports(self, limit: int = 100) -> list[dict[str, Any]]:
        """The newest reports, for the moderators: when, the game, the room, the message, its author (their
        name, and their account's name if they have one) and who reported it."""
        author = accounts.alias("author_account")
        q = (
            select(
                chat_reports.c.at,
                chat_reports.c.reporter,
                chat_reports.c.reporter_name,
                chat_messages.c.id.label("message_id"),
                chat_messages.c.game_id,
                chat_messages.c.tournament_id,
                chat_messages.c.room,
                chat_messages.c.name,
                chat_messages.c.text,
                chat_messages.c.phrase,
                chat_messages.c.at.label("written"),
                author.c.name.label("account"),
                author.c.disabled,
                games.c.status,
            )
            .join(chat_messages, chat_messages.c.id == chat_reports.c.message_id)
            .outerjoin(author, author.c.id == chat_messages.c.account_id)
            .outerjoin(games, games.c.id == chat_messages.c.game_id)
            .order_by(chat_reports.c.at.desc(), chat_reports.c.message_id.desc())
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [r._asdict() for r in conn.execute(q)]
