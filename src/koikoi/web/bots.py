"""Bots online, one server process's side (docs/web.md, "Bots online"): bot tokens checked, the bots'
event streams, challenges made, answered and ended, and the bots' seeks.

A bot is an account that plays through a program (``koikoi bot connect`` runs any program that speaks
docs/bot-protocol.md). It acts only with a token (``Authorization: Bearer kkb_...``) that only the bot API
(``/api/bot/...``) takes, never a session cookie; a session is never taken there either. Its games are
ordinary games between two players, rated when the challenge or seek was: it plays them over the very
seat sockets a browser plays over (``/ws/<seat token>``), where its own seat alone is sent, with the
bot protocol's observation of that seat beside the table (:mod:`koikoi.web.botview`).

Its stream, ``/api/bot/stream``, tells it of its games (``gameStart``, ``gameFinish``) and of the
challenges people send it (``challenge``, ``challengeGone``). What it is told is read from the database,
never kept here: the challenges and games live there (:class:`~koikoi.web.botstore.BotStore`), and a
change made by any process is announced on :data:`~koikoi.web.store.BOT_CHANNEL` (PostgreSQL) so that
the process holding the bot's stream reads it at once. A lost announcement delays nothing for long:
every stream's bot is read again every :data:`REFRESH_EVERY` seconds. A bot's stream also holds a place
in the lobby (:class:`~koikoi.web.lobby.LobbySocket`), which keeps its seeks open and says when one was
accepted.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import random
import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..rules import RuleSet
from .accounts import check_name, name_key
from .accountstore import Account
from .botstore import BotInfo, BotStore, Challenge, Challenger, TooMany
from .errors import GameError
from .games import GameService, playable_seed
from .limits import Limits
from .lobby import LobbyService, LobbySocket, seek_rules, stranger_clock
from .pairing import category_of
from .store import BOT_CHANNEL, StoreError
from .tasks import cancel_all

__all__ = [
    "BotService",
    "BotStream",
    "DECLINE_REASONS",
    "TOKEN_PREFIX",
    "bot_token_key",
    "new_bot_token",
]

log = logging.getLogger("koikoi.web")

TOKEN_PREFIX = "kkb_"  # a bot's token: never mistaken for a session's (43 characters, no prefix)
_TOKEN = re.compile(r"kkb_[A-Za-z0-9_-]{43}")
_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")
_HINT = re.compile(r"kkb_[A-Za-z0-9_-]{4}")
REFRESH_EVERY = 5.0  # every stream's bot is read again this often (a lost announcement, an expiry)
KEEP_EVERY = 10.0  # the tokens of the open streams are marked in use (connected), and checked, this often
BOTS_PER_OWNER = 5  # bots one account may run
TOKENS_PER_BOT = 5  # live tokens of one bot
CHALLENGES_PER_BOT = 20  # challenges waiting for one bot's answer
# Why a bot declines, as the challenger's page says it (bot.reason.<reason> in every language).
DECLINE_REASONS = ("generic", "later", "rules", "length", "rated", "casual", "clock")


def new_bot_token() -> tuple[str, str, str]:
    """A fresh token, the hash the database keeps of it, and its first characters (shown to tell tokens
    apart; they say nothing useful of the rest)."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    key = bot_token_key(token)
    assert key is not None
    return token, key, token[:8]


def bot_token_key(token: Any) -> str | None:
    """What the database keeps of a bot token (its SHA-256); None for anything not shaped like one.

    >>> bot_token_key("kkb_" + "A" * 43) == bot_token_key("kkb_" + "A" * 43) != None
    True
    >>> bot_token_key("A" * 43) is None  # a session's token is no bot's
    True
    """
    if not isinstance(token, str) or not _TOKEN.fullmatch(token):
        return None
    return hashlib.sha256(token.encode()).hexdigest()


def _seeds(rules: RuleSet) -> tuple[int, int, int]:
    """A fresh deal's secret seed, the (unused) computer's seed, and the seat that moves first."""
    seed, first = playable_seed(rules, None)
    return seed, random.SystemRandom().getrandbits(62), first


Send = Callable[[str], Awaitable[None]]


@dataclass(eq=False)
class BotStream:
    """One bot's open stream on this process: what it was told, and how to tell it more."""

    bot: BotInfo
    key: str  # the hash of the token it was opened with: revoked, the stream ends
    send: Send
    close: Callable[[str], Awaitable[None]]  # says why, and closes it
    games: set[str] = field(default_factory=set)  # games it was told of (gameStart), not yet finished
    challenges: set[str] = field(default_factory=set)  # open challenges it was told of
    ended: bool = False


class BotService:
    """The bots of one process. Use from the event loop; :meth:`start` before, :meth:`close` after."""

    def __init__(self, service: GameService, lobby: LobbyService, limits: Limits) -> None:
        self.service = service
        self.lobby = lobby
        self.db = service.db
        self.limits = limits
        self.store = BotStore(service.store)
        self.streams: dict[str, set[BotStream]] = {}  # bot id -> its streams here
        self._dirty: set[str] = set()  # bots whose streams are to be told what changed
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._closing = False  # the loops end (a cancellation can be lost: koikoi.web.tasks)
        if service.listener is not None:
            service.listener.listen(BOT_CHANNEL, self.on_note, self.on_connect)

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._tell_forever()), loop.create_task(self._keep_forever())]

    async def close(self) -> None:
        self._closing = True
        await cancel_all(self._tasks, "the bots")

    # -- who is asking --------------------------------------------------------------------------------------

    async def authenticate(self, authorization: str | None) -> tuple[BotInfo, str]:
        """The bot whose token an ``Authorization`` header carries, and the token's hash; 401
        ``bot_token`` saying what is wrong otherwise (a session's cookie is never looked at)."""
        if not authorization:
            raise GameError("bot_token", "the bot API takes a bot's token: send 'Authorization: Bearer <token>'", 401)
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise GameError("bot_token", "send the bot's token as 'Authorization: Bearer <token>'", 401)
        key = bot_token_key(token.strip())
        if key is None:
            raise GameError(
                "bot_token",
                f"this is not a bot's token: a bot's token is {TOKEN_PREFIX} and 43 letters, digits, '-' or '_' "
                "(a session's cookie is not one)",
                401,
            )
        found = await self.db(self.store.token, key)
        if found.bot is None:
            raise GameError("bot_token", "this server knows no such bot token", 401)
        if found.revoked:
            raise GameError("bot_token", f"this token of {found.bot.name} has been revoked: make a new one", 401)
        if found.bot.disabled:
            raise GameError("bot_token", f"the bot {found.bot.name} is disabled on this server", 401)
        return found.bot, key

    # -- owners -------------------------------------------------------------------------------------------

    async def make_bot(self, owner: Account, raw_name: Any) -> BotInfo:
        name = check_name(raw_name)
        try:
            await self.db(self.store.make_bot, name, name_key(name), owner.id, max_bots=BOTS_PER_OWNER)
        except StoreError as e:
            if e.conflict:
                raise GameError("name_taken", f"the name {name!r} is taken: choose another", 409) from None
            raise
        except TooMany as e:
            raise GameError("too_many_bots", f"an account runs at most {e.limit} bots", 429) from None
        bot = await self.db(self.store.bot_named, name_key(name))
        assert bot is not None
        return bot

    async def owned(self, owner: Account, raw_name: Any) -> BotInfo:
        """The bot named ``raw_name`` that ``owner`` runs; 404 ``no_bot`` otherwise."""
        try:
            key = name_key(check_name(raw_name))
        except GameError:
            key = None
        bot = None if key is None else await self.db(self.store.bot_named, key)
        if bot is None or bot.owner_id != owner.id:
            raise GameError("no_bot", "you run no bot of that name", 404)
        return bot

    async def new_token(self, bot: BotInfo) -> dict[str, Any]:
        """A new token for ``bot``: the token itself is in this answer and nowhere else, ever."""
        token, key, hint = new_bot_token()
        try:
            await self.db(self.store.add_token, bot.id, key, hint, max_tokens=TOKENS_PER_BOT)
        except TooMany as e:
            raise GameError(
                "too_many_tokens", f"a bot has at most {e.limit} tokens that work: revoke one first", 429
            ) from None
        return {"bot": bot.name, "token": token, "hint": hint}

    async def revoke(self, bot: BotInfo, hint: Any) -> int:
        """Revoke the bot's token whose first characters are ``hint``; its streams end within seconds."""
        if not isinstance(hint, str) or not _HINT.fullmatch(hint):
            raise GameError("no_token", "no token of this bot begins so", 404)
        n = await self.db(self.store.revoke, bot.id, hint)
        if not n:
            raise GameError("no_token", "no token of this bot that works begins so", 404)
        await self._keep()  # its streams here end now; another process's at its next round
        return n

    # -- challenges ---------------------------------------------------------------------------------------

    async def challenge(self, owner: str, account: Account | None, data: dict[str, Any]) -> dict[str, Any]:
        """A person challenges a bot: ``{"bot", "rules": {"preset", "options"}, "hands", "rated", "clock",
        "name"}``. A rated challenge has a clock, as a rated seek does; the bot's owner plays their own bot
        casually only (a rated game would rate them against a program they run: 403 ``own_bot``)."""
        raw = data.get("bot")
        try:
            key = name_key(check_name(raw))
        except GameError:
            key = None
        bot = None if key is None else await self.db(self.store.bot_named, key)
        if bot is None or bot.disabled:
            raise GameError("not_a_bot", "there is no bot of that name to challenge", 404)
        rated = data.get("rated", False)
        if not isinstance(rated, bool):
            raise GameError("bad_seek", "'rated' is true or false", 422)
        rules = seek_rules(data.get("rules"), data.get("hands"), rated=rated)
        if rated and account is None:
            raise GameError("sign_in", "rated games are between accounts: sign in to send a rated challenge", 403)
        if rated and account is not None and bot.owner_id == account.id:
            raise GameError("own_bot", "you run this bot: a game against your own bot is casual, never rated", 403)
        clock = stranger_clock(self.service, data, rated=rated)
        if not bot.online:
            raise GameError("bot_offline", f"{bot.name} is not connected now: challenge it when it is", 409)
        seeker = await self.lobby.seeker(owner, account, data.get("name"), category_of(rules.hands))
        challenger = Challenger(seeker.owner, seeker.account_id, seeker.name, seeker.rating, seeker.provisional)
        try:
            found = await self.db(
                self.store.open_challenge,
                bot.id,
                challenger,
                rules,
                rated=rated,
                clock=clock,
                per_challenger=self.limits.seeks_per_player,
                per_bot=CHALLENGES_PER_BOT,
            )
        except TooMany as e:
            if e.what == "this_bot":
                raise GameError(
                    "challenge_waiting",
                    f"your challenge to {bot.name} is waiting for its answer: one at a time to each bot",
                    409,
                ) from None
            if e.what == "bot":
                raise GameError(
                    "too_many_challenges", f"{bot.name} has {e.limit} challenges waiting: try again soon", 429
                ) from None
            raise GameError(
                "too_many_challenges", f"you have {e.limit} challenges waiting for an answer: cancel one first", 429
            ) from None
        self.changed(bot.id)
        return self.challenger_view(found, bot.name)

    @staticmethod
    def challenger_view(found: Challenge, bot_name: str) -> dict[str, Any]:
        """A challenge as its challenger sees it: once accepted, with their own seat."""
        out: dict[str, Any] = {
            "id": found.id,
            "bot": bot_name,
            "status": found.status,
            "reason": found.reason,
            "rules": {k: v for k, v in found.rules.items() if k != "rules_version"},
            "hands": found.hands,
            "rated": found.rated,
            "clock": found.clock,
        }
        if found.status == "accepted" and found.game_id is not None and found.token is not None:
            out.update(game_id=found.game_id, token=found.token, url=f"/play/{found.token}")
        return out

    async def _bot_name(self, bot_id: str) -> str:
        bot = await self.db(self.store.bot, bot_id)
        return bot.name if bot is not None else "?"

    async def asked(self, challenge_id: Any, owner: str) -> dict[str, Any]:
        """The challenger asks after their challenge (which keeps it open)."""
        found = None if not _is_id(challenge_id) else await self.db(self.store.asked, challenge_id, owner)
        if found is None:
            raise GameError("no_challenge", "you have no such challenge (it may have ended long ago)", 404)
        return self.challenger_view(found, await self._bot_name(found.bot_id))

    async def cancel(self, challenge_id: Any, owner: str) -> dict[str, Any]:
        found = (
            None if not _is_id(challenge_id) else await self.db(self.store.end, challenge_id, "cancelled", owner=owner)
        )
        if found is None:
            raise GameError("no_challenge", "you have no such challenge (it may have ended long ago)", 404)
        self.changed(found.bot_id)
        return self.challenger_view(found, await self._bot_name(found.bot_id))

    async def decline(self, bot: BotInfo, challenge_id: Any, reason: Any) -> dict[str, Any]:
        if reason is None:
            reason = "generic"
        if reason not in DECLINE_REASONS:
            raise GameError("bad_reason", f"'reason' is one of {', '.join(DECLINE_REASONS)}", 422)
        found = (
            None
            if not _is_id(challenge_id)
            else await self.db(self.store.end, challenge_id, "declined", bot_id=bot.id, reason=reason)
        )
        if found is None:
            raise GameError("no_challenge", "there is no such challenge to this bot", 404)
        if found.status != "declined" or found.reason != reason:
            raise GameError("challenge_over", f"this challenge is {found.status} already", 410)
        self.changed(bot.id)
        return {"id": found.id, "status": "declined", "reason": reason}

    async def accept(self, bot: BotInfo, challenge_id: Any) -> dict[str, Any]:
        """The bot accepts: the game is made, and the bot gets its own seat (the challenger theirs, when
        they ask after their challenge)."""
        if not _is_id(challenge_id):
            raise GameError("no_challenge", "there is no such challenge to this bot", 404)
        seat = secrets.randbelow(2)  # who sits where, as chance has it
        try:
            _found, game_id, token = await self.db(
                self.store.accept, challenge_id, bot, _seeds, max_games=self.limits.open_games_per_browser, seat=seat
            )
        except StoreError as e:
            if e.conflict:
                raise GameError("challenge_over", str(e), 410) from None
            raise GameError("no_challenge", "there is no such challenge to this bot", 404) from None
        except TooMany as e:
            whose = "you have" if e.what == "games" else "the challenger has"
            raise GameError(
                "too_many_games", f"{whose} {e.limit} unfinished games (the most this server allows)", 429
            ) from None
        self.changed(bot.id)
        self.lobby.changed()  # its game is among the lobby's games being played
        return {
            "game_id": game_id,
            "token": token,
            "seat": seat,
            "status": "playing",
            "url": f"/play/{token}",
            "socket": f"/ws/{token}?game={game_id}",
        }

    # -- streams -------------------------------------------------------------------------------------------

    def changed(self, bot_id: str) -> None:
        """Something of ``bot_id``'s changed: its streams here are told soon (no-op without streams here)."""
        if bot_id in self.streams:
            self._dirty.add(bot_id)
            self._wake.set()

    def on_note(self, payload: str) -> None:
        """An announcement on the bots' channel: ``<bot id>``."""
        self.changed(payload)

    def on_connect(self) -> None:
        """The listener (re)connected: announcements may have been missed; read every stream's bot again."""
        for bot_id in self.streams:
            self.changed(bot_id)

    def join(self, stream: BotStream) -> LobbySocket:
        """A stream opened: told every open challenge and unfinished game at once. Its place in the lobby
        keeps the bot's seeks open, and the lobby's word that one was accepted reads its games again."""
        self.streams.setdefault(stream.bot.id, set()).add(stream)
        self.changed(stream.bot.id)
        bot_id = stream.bot.id

        async def from_lobby(text: str) -> None:
            if text.startswith('{"type": "paired"'):  # a seek of the bot's was accepted: its game is new
                self.changed(bot_id)

        place = LobbySocket(stream.bot.owner, from_lobby)
        self.lobby.join(place)
        return place

    def leave(self, stream: BotStream, place: LobbySocket) -> None:
        stream.ended = True
        self.lobby.leave(place)
        mine = self.streams.get(stream.bot.id)
        if mine is not None:
            mine.discard(stream)
            if not mine:
                del self.streams[stream.bot.id]

    def streams_of(self, bot_id: str) -> int:
        return len(self.streams.get(bot_id, ()))

    async def _tell_forever(self) -> None:
        while not self._closing:
            try:
                await asyncio.wait_for(self._wake.wait(), REFRESH_EVERY)
            except TimeoutError:
                self._dirty |= set(self.streams)  # now and then, every bot here, whatever was announced
            self._wake.clear()
            dirty, self._dirty = self._dirty, set()
            dirty &= set(self.streams)
            if not dirty:
                continue
            try:
                await self.tell(sorted(dirty))
            except Exception as e:  # the database is away: the next round tries again
                self._dirty |= dirty
                log.debug("could not tell %d bots their news: %s", len(dirty), e)
                await asyncio.sleep(1.0)

    async def tell(self, bot_ids: list[str]) -> None:
        """Tell the streams here of ``bot_ids`` their games and challenges as the database has them now."""
        news = await self.db(self.store.news_of, bot_ids)
        for bot_id, (open_challenges, playing) in news.items():
            for stream in list(self.streams.get(bot_id, ())):
                await self._tell_one(stream, open_challenges, playing)

    async def _tell_one(
        self, stream: BotStream, open_challenges: list[Challenge], playing: list[dict[str, Any]]
    ) -> None:
        messages: list[dict[str, Any]] = []
        now_playing = {g["id"] for g in playing}
        for game in playing:
            if game["id"] not in stream.games:
                stream.games.add(game["id"])
                token = game["token"]
                messages.append(
                    {
                        "type": "gameStart",
                        "game": {**game, "url": f"/play/{token}", "socket": f"/ws/{token}?game={game['id']}"},
                    }
                )
        for gone in sorted(stream.games - now_playing):
            stream.games.discard(gone)
            messages.append({"type": "gameFinish", "game": {"id": gone}})
        now_open = {c.id for c in open_challenges}
        for c in open_challenges:
            if c.id not in stream.challenges:
                stream.challenges.add(c.id)
                messages.append({"type": "challenge", "challenge": c.for_bot()})
        for gone in sorted(stream.challenges - now_open):
            stream.challenges.discard(gone)
            messages.append({"type": "challengeGone", "challenge": {"id": gone}})
        for msg in messages:
            if stream.ended:
                return
            try:
                await stream.send(json.dumps(msg))
            except Exception:  # it closed or stopped reading: its own loop ends it
                return

    async def _keep_forever(self) -> None:
        while not self._closing:
            await asyncio.sleep(KEEP_EVERY)
            try:
                await self._keep()
                for bot_id in await self.db(self.store.expire):
                    self.changed(bot_id)
            except Exception as e:  # the database is away: the next round tries again
                log.debug("could not keep the bots' streams: %s", e)

    async def _keep(self) -> None:
        """Mark the open streams' tokens in use (their bots are connected), and end the streams whose token
        was revoked or whose bot was disabled since."""
        streams = [s for mine in self.streams.values() for s in mine]
        keys = sorted({s.key for s in streams})
        if not keys:
            return
        dead = await self.db(self.store.revoked, keys)
        await self.db(self.store.touch, [k for k in keys if k not in dead])
        for s in streams:
            if s.key in dead and not s.ended:
                s.ended = True
                await s.close("this bot's token has been revoked, or the bot disabled")


def _is_id(value: Any) -> bool:
    return isinstance(value, str) and _ID.fullmatch(value) is not None
