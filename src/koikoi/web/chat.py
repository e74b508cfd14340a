"""The chat at a table: the two players' room, and a separate room for the spectators.

- **Who writes where.** The players' room is open to both seats (guests included) of a game between two
  people, over the seat's own socket. The spectators' room is open to signed-in spectators, over the
  spectator's socket (:mod:`koikoi.web.routes.watch`); a guest watching reads it. A player is never sent
  the spectators' room (it could carry advice); their table has no way to ask for it, and a player may
  open the game's spectator page only once the game is over. Spectators never read the players' room.
- **What a message is.** Plain text of at most :data:`MAX_CHARS` characters once trimmed, without control,
  format (the zero-width joiners of emoji aside), private-use or unassigned characters; or a phrase's id
  (:data:`PHRASES`), which each reader's page shows in its own language, for players without a shared
  language. It is kept with the game (:class:`~koikoi.web.chatstore.ChatStore`) before anyone is sent it,
  and sent as data: the pages put it in the document as text, never as HTML.
- **Bounds.** ``chat_per_minute`` and ``chat_burst`` per person (their account or browser); each room
  its own budget, so that spectators can never fill the players' room and silence them:
  ``chat_messages_per_game`` for the players', ``spectator_chat_per_game`` for the spectators', of which
  one spectator writes at most ``chat_messages_per_spectator``; and the socket's own limits
  (``message_bytes``, ``messages_per_second``).
- **Mute and report.** A player mutes the other: the other's messages are not delivered to them any more,
  now and after a reload (kept in the database). Anyone who may write in a room reports a message there
  (once per message); ``koikoi admin reports`` lists the reports, ``koikoi admin disable`` stops an
  account's chat (its sockets too: the database refuses its messages) and hides what it wrote.
- **Several processes.** A message stored by one process is announced on
  :data:`~koikoi.web.store.CHAT_CHANNEL` (``chat <game id> <message id>``); each process that holds a
  socket of that game reads it and delivers it to its own sockets, once (messages carry their id, and a
  page shows each id once).
"""

from __future__ import annotations

import asyncio
import json
import logging
import unicodedata
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .chatstore import ChatMessage, ChatRefused, ChatStore
from .games import GameError, GameService, LiveGame, Unavailable
from .limits import Limits, RateLimiter
from .livegame import Sender, TextSender
from .shown import odd_character
from .spectators import Spectators
from .store import CHAT_CHANNEL

__all__ = ["MAX_CHARS", "PHRASES", "CHAT_TYPES", "ChatError", "ChatService", "Chatter", "clean_text", "words_of"]

log = logging.getLogger("koikoi.web")

MAX_CHARS = 200
# One-click phrases, shown to each reader in their own language (locales: "phrase.<id>").
PHRASES = (
    "hello",
    "yoroshiku",
    "good_luck",
    "have_fun",
    "nice_move",
    "thank_you",
    "sorry",
    "good_game",
    "well_played",
    "bye",
)
CHAT_TYPES = ("chat", "mute", "report")  # the socket messages this module answers
_JOINERS = {"\u200c", "\u200d"}  # zero-width (non-)joiners: emoji sequences and some scripts need them
_DELIVERED_KEPT = 500  # message ids remembered per game, so that each is delivered once
_FETCH_AFTER = 0.02  # announced messages are read together, this long after the first
HELLO_TRIES = 8  # a socket that opened while the database did not answer is told its chat later, so often


class ChatError(GameError):
    """A chat message, mute or report refused: its answer says it is about the chat."""

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "about": "chat"}


@dataclass(frozen=True, slots=True)
class Chatter:
    """Who writes: the room, their owner key (account or browser: never shown), account, name, seat."""

    room: str
    author: str
    account_id: str | None
    name: str
    seat: int | None = None


def clean_text(text: Any) -> str:
    """A chat message's text as it is kept: trimmed, at most :data:`MAX_CHARS` characters, plain text."""
    if not isinstance(text, str):
        raise ChatError("bad_chat", "a chat message's 'text' must be text", 422)
    words: str = text
    if len(words) > 4 * MAX_CHARS:  # before looking at each character
        raise ChatError("chat_too_long", f"a chat message has at most {MAX_CHARS} characters, not {len(words)}", 422)
    words = words.strip()
    if not words:
        raise ChatError("bad_chat", "a chat message cannot be empty", 422)
    if len(words) > MAX_CHARS:
        raise ChatError("chat_too_long", f"a chat message has at most {MAX_CHARS} characters, not {len(words)}", 422)
    for ch in words:
        cat = unicodedata.category(ch)
        if cat == "Cs":
            raise ChatError("bad_chat", "a chat message must be valid Unicode text (it holds a lone surrogate)", 422)
        if cat in ("Cc", "Co", "Cn") or (cat == "Cf" and ch not in _JOINERS):
            raise ChatError(
                "bad_chat", f"a chat message is plain text: it cannot hold the control character U+{ord(ch):04X}", 422
            )
    odd = odd_character(words)
    if odd is not None:
        raise ChatError("bad_chat", f"a chat message cannot hold {odd}", 422)
    return words


def words_of(msg: dict[str, Any]) -> tuple[str | None, str | None]:
    """(text, phrase) of a chat message: exactly one of them."""
    text, phrase = msg.get("text"), msg.get("phrase")
    if (text is None) == (phrase is None):
        raise ChatError("bad_chat", "a chat message has either 'text' or 'phrase' (one of the phrases' ids)", 422)
    if phrase is not None:
        if not isinstance(phrase, str) or phrase not in PHRASES:
            shown = phrase[:20] if isinstance(phrase, str) else type(phrase).__name__
            raise ChatError("bad_chat", f"no phrase {shown!r}: the phrases are {', '.join(PHRASES)}", 422)
        return None, phrase
    return clean_text(text), None


class ChatService:
    """The chat of one server process's games. Use from the event loop; :meth:`close` after."""

    def __init__(self, service: GameService, spectators: Spectators, limits: Limits) -> None:
        self.service = service
        self.spectators = spectators
        self.db = service.db
        self.limits = limits
        self.store = ChatStore(service.store)
        self.rate = RateLimiter(limits.chat_per_minute / 60, limits.chat_burst)
        self._mutes: dict[str, set[int]] = {}  # game -> seats that muted the other (read once, then told)
        self._delivered: dict[str, OrderedDict[int, None]] = {}  # game -> message ids delivered here
        self._announced: dict[str, set[int]] = {}  # game -> ids announced by the database, to be read
        self._tasks: set[asyncio.Task[Any]] = set()
        if service.listener is not None:
            service.listener.listen(CHAT_CHANNEL, self.on_note, self.on_connect)

    async def close(self) -> None:
        for t in list(self._tasks):
            t.cancel()

    def _spawn(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- writing --------------------------------------------------------------------------------------------

    async def say(self, game: LiveGame, who: Chatter, msg: dict[str, Any]) -> None:
        """Keep a message of ``who`` with the game, then deliver it to every socket here that may read it."""
        text, phrase = words_of(msg)
        if game.status == "broken":
            raise ChatError("broken", "this game cannot be played on, nor chatted in", 409)
        if not self.rate.allow(who.author):
            raise ChatError(
                "rate_limited",
                f"at most {self.limits.chat_per_minute:g} chat messages a minute: wait "
                f"{self.rate.retry_after(who.author):.0f} s",
                429,
            )
        try:
            message = await self.db(
                self.store.add,
                game.stored.id,
                who.room,
                seat=who.seat,
                author=who.author,
                account_id=who.account_id,
                name=who.name,
                text=text,
                phrase=phrase,
                max_in_room=(
                    self.limits.chat_messages_per_game if who.room == "players" else self.limits.spectator_chat_per_game
                ),
                max_per_author=self.limits.chat_messages_per_spectator if who.room == "spectators" else None,
            )
        except ChatRefused as e:
            raise ChatError(e.code, e.message, 409 if e.code in ("chat_full", "chat_share_used") else 403) from None
        except Unavailable as e:
            raise ChatError("unavailable", e.message, 503) from None
        await self._deliver(game, [message])

    async def from_seat(self, token: str, msg: dict[str, Any]) -> dict[str, Any] | None:
        """A chat, mute or report message on a seat's socket (the players' room); its answer, if any."""
        try:
            seat, game = await self.service.seat_game(token)
            if game.ai_seat is not None or game.bots:
                raise ChatError("no_chat", "the computer, or a bot, does not read the chat: it is for two people", 409)
            kind = msg.get("type")
            if kind == "mute":
                return await self.mute(game, seat.seat, msg.get("muted"))
            author = seat.owner or f"seat:{seat.token[:8]}"
            if kind == "report":
                return await self.report(game, author, seat.name, "players", msg.get("id"))
            account = author[2:] if author.startswith("a:") else None
            await self.say(game, Chatter("players", author, account, seat.name, seat.seat), msg)
            return None
        except ChatError:
            raise
        except GameError as e:  # the seat or its game: said as the chat's answer
            raise ChatError(e.code, e.message, e.status) from None

    async def from_spectator(self, game: LiveGame, account: Any, msg: dict[str, Any]) -> dict[str, Any] | None:
        """A chat or report message on a spectator's socket (the spectators' room); its answer, if any.
        ``account`` is the signed-in spectator's (None: a guest, who reads but does not write)."""
        kind = msg.get("type")
        if kind == "mute":
            raise ChatError("bad_chat", "a player mutes the other player; spectators report a message instead", 422)
        if account is None:
            raise ChatError("chat_sign_in", "sign in to write in the spectators' chat (or to report a message)", 403)
        if kind == "report":
            return await self.report(game, account.owner, account.name, "spectators", msg.get("id"))
        await self.say(game, Chatter("spectators", account.owner, account.id, account.name), msg)
        return None

    # -- muting and reporting -------------------------------------------------------------------------------

    async def mutes_of(self, game_id: str) -> set[int]:
        known = self._mutes.get(game_id)
        if known is None:
            known = await self.db(self.store.mutes, game_id)
            if game_id in self.service.live:
                self._mutes[game_id] = known
        return known

    async def mute(self, game: LiveGame, seat: int, muted: Any) -> dict[str, Any]:
        if not isinstance(muted, bool):
            raise ChatError("bad_chat", "a mute message has 'muted': true (mute the other player) or false", 422)
        try:
            await self.db(self.store.set_mute, game.stored.id, seat, muted)
        except Unavailable as e:
            raise ChatError("unavailable", e.message, 503) from None
        self._mutes.pop(game.stored.id, None)  # read again at the next delivery (other processes: told)
        return {"type": "muted", "muted": muted}

    async def report(self, game: LiveGame, reporter: str, name: str, room: str, message_id: Any) -> dict[str, Any]:
        if type(message_id) is not int or not 0 < message_id < 2**31:
            raise ChatError("bad_chat", "a report names the message's 'id' (a whole number)", 422)
        try:
            message = await self.db(self.store.message, message_id)
            if message is None or message.game_id != game.stored.id or message.room != room:
                raise ChatError("no_message", "there is no such message in this chat", 404)
            if message.author == reporter:
                raise ChatError("own_message", "you cannot report your own message", 409)
            await self.db(self.store.report, message_id, reporter, name)
        except ChatRefused as e:
            raise ChatError(e.code, e.message, 409) from None
        except Unavailable as e:
            raise ChatError("unavailable", e.message, 503) from None
        return {"type": "reported", "id": message_id}

    # -- what a socket that opens is told -------------------------------------------------------------------

    async def hello_seat(self, game: LiveGame, seat: int, send: Sender) -> None:
        """The players' room as it is (what this seat may read of it), and how many watch; from now on
        the socket is sent the players' chat and the count as they change."""
        self.spectators.listening.add(send)

        async def read() -> list[dict[str, Any]]:
            can_chat = game.ai_seat is None and not game.bots  # a bot, a program, does not read the chat
            muted: set[int] = set()
            shown: list[dict[str, Any]] = []
            if can_chat:
                muted = await self.mutes_of(game.stored.id)
                history = await self.db(self.store.recent, game.stored.id, "players")
                shown = [m.shown() for m in history if m.seat == seat or seat not in muted]
            room = {"type": "chat", "room": "players", "history": True, "messages": shown}
            return [{**room, "can_chat": can_chat, "muted": seat in muted}, await self.spectators.hello(game)]

        async def tell(messages: list[dict[str, Any]]) -> None:
            for msg in messages:
                await send(msg)

        await self._hello(game, read, tell, lambda: send in game.listeners[seat])

    async def hello_spectator(self, game: LiveGame, send: TextSender, can_chat: bool) -> None:
        """The spectators' room as it is, and how many watch."""

        async def read() -> list[dict[str, Any]]:
            history = await self.db(self.store.recent, game.stored.id, "spectators")
            room = {"type": "chat", "room": "spectators", "history": True, "messages": [m.shown() for m in history]}
            return [{**room, "can_chat": can_chat, "muted": False}, await self.spectators.hello(game)]

        async def tell(messages: list[dict[str, Any]]) -> None:
            for msg in messages:
                await send(json.dumps(msg))

        await self._hello(game, read, tell, lambda: send in game.spectators)

    async def _hello(
        self,
        game: LiveGame,
        read: Callable[[], Awaitable[list[dict[str, Any]]]],
        tell: Callable[[list[dict[str, Any]]], Awaitable[None]],
        still_open: Callable[[], bool],
    ) -> None:
        """Read what a socket that opens is told, and tell it. While the database does not answer, the
        socket is told later, in the background (the table works without its chat meanwhile)."""
        try:
            messages = await read()
        except Unavailable as e:
            log.warning("no chat history for game %s yet: %s", game.stored.id, e.message)
            self._spawn(self._hello_later(game, read, tell, still_open))
            return
        except Exception:  # a bug, or stored data that cannot be read: the table goes on without its chat
            log.exception("no chat history for game %s", game.stored.id)
            return
        await tell(messages)  # a socket that closed meanwhile: its handler sees it

    async def _hello_later(
        self,
        game: LiveGame,
        read: Callable[[], Awaitable[list[dict[str, Any]]]],
        tell: Callable[[list[dict[str, Any]]], Awaitable[None]],
        still_open: Callable[[], bool],
    ) -> None:
        for attempt in range(HELLO_TRIES):
            await asyncio.sleep(min(5.0, 0.5 * 2**attempt))
            if not still_open():
                return
            try:
                messages = await read()
            except Unavailable:
                continue
            except Exception:
                log.exception("no chat history for game %s", game.stored.id)
                return
            try:
                await tell(messages)
            except Exception:  # it closed meanwhile
                pass
            return

    # -- delivering -----------------------------------------------------------------------------------------

    def _fresh(self, game_id: str, messages: list[ChatMessage]) -> list[ChatMessage]:
        """The messages not yet delivered here, now noted as delivered."""
        done = self._delivered.get(game_id)
        if done is None:
            if len(self._delivered) > 2 * self.limits.live_games:  # games gone from memory: forget them
                for gid in [g for g in self._delivered if g not in self.service.live]:
                    del self._delivered[gid]
                    self._mutes.pop(gid, None)
            done = self._delivered[game_id] = OrderedDict()
        out = []
        for m in messages:
            if m.id in done:
                continue
            done[m.id] = None
            out.append(m)
        while len(done) > _DELIVERED_KEPT:
            done.popitem(last=False)
        return out

    async def _deliver(self, game: LiveGame, messages: list[ChatMessage]) -> None:
        """Send each new message to the sockets here that may read it: the players' room to the seats
        (not to one that muted its author), the spectators' room to the spectators, and nothing else."""
        messages = self._fresh(game.stored.id, messages)
        players = [m for m in messages if m.room == "players"]
        if players and (game.listeners[0] or game.listeners[1]):
            try:
                muted = await self.mutes_of(game.stored.id)
            except Unavailable:  # not known now: each seat gets its own messages only, to be safe
                muted = {0, 1}
            for seat in (0, 1):
                shown = [m.shown() for m in players if m.seat == seat or seat not in muted]
                if not shown:
                    continue
                out = {"type": "chat", "room": "players", "messages": shown}
                for send in list(game.listeners[seat]):
                    if send not in self.spectators.listening:  # a socket without a chat (a program's)
                        continue
                    try:
                        await send(out)
                    except Exception:  # a closed socket: its handler removes it
                        pass
        watched = [m.shown() for m in messages if m.room == "spectators"]
        if watched and game.spectators:
            text = json.dumps({"type": "chat", "room": "spectators", "messages": watched})
            for spectator in list(game.spectators):
                try:
                    await spectator(text)
                except Exception:
                    pass

    # -- what other processes say (PostgreSQL) --------------------------------------------------------------

    def on_note(self, payload: str) -> None:
        """An announcement on the chat's channel: a new message, a mute, the spectators of a game."""
        kind, _, rest = payload.partition(" ")
        if kind == "watch":
            self.spectators.count_news(rest)
        elif kind == "mute":
            self._mutes.pop(rest, None)
        elif kind == "chat":
            game_id, _, number = rest.partition(" ")
            try:
                message_id = int(number)
            except ValueError:
                return
            game = self.service.live.get(game_id)
            done: dict[int, None] = self._delivered.get(game_id) or {}
            if game is None or message_id in done or not (game.listeners[0] or game.listeners[1] or game.spectators):
                return
            waiting = self._announced.setdefault(game_id, set())
            if not waiting:
                asyncio.get_running_loop().call_later(_FETCH_AFTER, lambda: self._spawn(self._fetch(game_id)))
            waiting.add(message_id)

    async def _fetch(self, game_id: str) -> None:
        ids = sorted(self._announced.pop(game_id, set()))
        game = self.service.live.get(game_id)
        if not ids or game is None:
            return
        try:
            await self._deliver(game, await self.db(self.store.by_ids, game_id, ids))
        except Exception as e:  # the database is away: the page shows what it has
            log.warning("could not read the new chat messages of game %s: %s", game_id, e)

    def on_connect(self) -> None:
        """The listener (re)connected: announcements may have been missed; each game with sockets here reads
        its rooms' newest messages (a page shows each message once)."""
        self._mutes.clear()
        for game in list(self.service.live.values()):
            rooms = ["players"] if game.listeners[0] or game.listeners[1] else []
            rooms += ["spectators"] if game.spectators else []
            if rooms:
                self._spawn(self._catch_up(game, rooms))

    async def _catch_up(self, game: LiveGame, rooms: list[str]) -> None:
        try:
            for room in rooms:
                await self._deliver(game, await self.db(self.store.recent, game.stored.id, room, 20))
        except Exception as e:
            log.warning("could not catch up with the chat of game %s: %s", game.stored.id, e)
