"""Tournaments as players see them: made, joined, paused or withdrawn from, their pages' data, and the
tournament pages' sockets (docs/web.md, "Tournaments").

A tournament lives in the database (:mod:`koikoi.web.tourneystore`) and is run by one process's
:class:`~koikoi.web.director.Director` at a time; this module is every process's side of it. It checks
what a player asks for (a new tournament's settings, a password), and keeps the tournament pages' sockets
here: each is pushed the standings when they change (a player's own line at most every :data:`PUSH_EVERY`
seconds, the pages at most every :data:`PAGES_EVERY`; one read for every socket of a tournament), and a
player's own sockets are told, with their seat's token, when they are paired into a match. Across
processes on PostgreSQL the changes are announced on :data:`~koikoi.web.store.TOURNAMENT_CHANNEL`; a lost
announcement loses nothing (the pages are pushed again every :data:`REFRESH_EVERY` seconds, and a player's
current match is in the page's data).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .. import glicko2
from .accounts import Passwords
from .accountstore import Account, owner_key
from .arena import performance
from .chat import ChatError, words_of
from .chatstore import ChatMessage, ChatRefused, ChatStore
from .database import Database
from .director import Director, arena_ranks, swiss_entrants, swiss_games
from .errors import GameError
from .limits import Limits, RateLimiter
from .rulelabels import rules_shown
from .schedule import Scheduled, occurrences
from .store import TOURNAMENT_CHANNEL, Store
from .swiss import standings as swiss_standings
from .tasks import cancel_all
from .tourneysettings import UPCOMING_PER_CREATOR, is_id, settings_from_request
from .tourneystore import Entrant, Paired, Played, Tournament, TourneyError, TourneyStore, schedule_key

__all__ = ["PAGE_ROWS", "TournamentService", "TourSocket", "is_id"]

log = logging.getLogger("koikoi.web")

PUSH_EVERY = 0.25  # players' own lines are pushed at most this often (a burst of results makes one push)
PAGES_EVERY = 1.0  # ... and a tournament's pages of standings at most this often (hundreds of sockets each)
REFRESH_EVERY = 10.0  # ... and at least this often (the countdown and a lost announcement)
KEEP_EVERY = 5.0  # the players with a tournament page here are marked present this often
SCHEDULE_EVERY = 30.0  # the scheduled tournaments coming due are made this often
PAGE_ROWS = 20  # standings rows a page shows (and the API gives) at a time
TOKENS_KEPT = 10000  # seat tokens of players' current matches kept here at most
CHAT_KEPT = 500  # chat messages per tournament remembered as delivered here (each goes to a page once)
STANDINGS_KEPT = 200  # tournaments' standings kept here at most (those with sockets here stay)


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat()


def summary(t: Tournament, now: datetime) -> dict[str, Any]:
    """What the list and the page say of a tournament (nothing secret: no password, no director)."""
    out: dict[str, Any] = {
        "id": t.id,
        "kind": t.kind,
        "name": t.name,
        "status": t.status,
        "starts": _iso(t.starts),
        "ends": _iso(t.ends),
        "ended": _iso(t.ended),
        "seconds_to_start": max(0.0, round((t.starts - now).total_seconds(), 1)),
        "seconds_left": None if t.ends is None else max(0.0, round((t.ends - now).total_seconds(), 1)),
        "rules": rules_shown(t.rules),
        "preset": t.rules.get("name"),
        "hands": t.hands,
        "clock": t.clock,
        "rated": t.rated,
        "bots": t.bots,
        "berserk": t.berserk,
        "min_moves": t.min_moves,
        "access": "password" if t.access == "password" else "open",
        "minutes": t.minutes,
        "grace": t.grace,
        "rounds": t.rounds,
        "round": t.round,
        "round_every": t.round_every,
        "late": t.late,
        "players": t.players,
        "url": f"/tournament/{t.id}",
    }
    return out


def standings_rows(t: Tournament, entrants: list[Entrant], played: list[Played] | None) -> list[dict[str, Any]]:
    """Every player's line of the standings, in order (ranks 1..n)."""
    by_id = {e.account_id: e for e in entrants}
    rows: list[dict[str, Any]] = []
    if t.kind == "arena":
        ranks = arena_ranks(entrants)
        for e in sorted(entrants, key=lambda e: ranks[e.account_id]):
            perf = performance(e.opponent_ratings, e.games, e.wins, e.losses)
            rows.append(
                {
                    "rank": ranks[e.account_id],
                    "name": e.name,
                    "bot": e.bot,
                    "score": e.score,
                    "fire": e.streak >= 2,
                    "streak": e.streak,
                    "games": e.games,
                    "wins": e.wins,
                    "draws": e.draws,
                    "losses": e.losses,
                    "berserks": e.berserks,
                    "performance": None if perf is None else round(perf),
                    "rating": round(e.rating),
                    "paused": e.paused,
                    "playing": e.game_id,
                }
            )
        return rows
    table = swiss_standings(swiss_entrants(entrants), swiss_games(played or []), late_points=t.late)
    for s in table:
        e = by_id[s.id]
        rows.append(
            {
                "rank": s.rank,
                "name": e.name,
                "bot": e.bot,
                "points": s.points,
                "buchholz": s.buchholz,
                "sonneborn_berger": s.sonneborn_berger,
                "games": s.played,
                "wins": s.wins,
                "draws": s.draws,
                "losses": s.losses,
                "byes": s.byes,
                "rating": round(e.rating),
                "paused": e.paused,
                "playing": e.game_id,
            }
        )
    return rows


def standings_ids(entrants: list[Entrant], rows: list[dict[str, Any]]) -> list[str]:
    """The account id of each line of :func:`standings_rows`, in order (a name is one account's)."""
    by_name = {e.name: e.account_id for e in entrants}
    return [by_name[r["name"]] for r in rows]


@dataclass(frozen=True, slots=True)
class Standings:
    """A tournament's standings as one read found them, shared by every socket and request meanwhile."""

    tournament: Tournament
    rows: list[dict[str, Any]]
    at: float
    # account id -> its row's index (never sent: a player finds their own row by it)
    where: dict[str, int] = field(default_factory=dict)
    changes: int = 0  # the tournament's changes seen here when it was read


Send = Callable[[str], Awaitable[None]]


@dataclass(eq=False)
class TourSocket:
    """One tournament page's socket on this process: whose it is (an account id, or None: a spectator),
    which page of the standings it shows, and how to send it a text."""

    tournament_id: str
    account_id: str | None
    send: Send
    page: int = 1
    told: set[str] = field(default_factory=set)  # the matches it was told of
    last_me: str = ""  # the last own line it was sent


class TournamentService:
    """Tournaments as one process serves them. Use from the event loop: :meth:`start`, then :meth:`close`."""

    def __init__(
        self,
        store: Store,
        db: Database,
        process: str,
        passwords: Passwords,
        *,
        limits: Limits,
        time_controls: Callable[[], tuple[str, ...]],
        listener: Any = None,
        tick: float | None = None,
        bots: Callable[[], list[str]] = list,
        bot_changed: Callable[[str], None] = lambda _bot: None,
        schedule: list[Scheduled] | None = None,
    ) -> None:
        """``bots``: the bots with a stream open here (present in their tournaments); ``bot_changed``: tell a
        bot's streams here to read its games again (it was paired); ``schedule``: the tournaments this server
        makes as they come due (koikoi.web.schedule)."""
        self.schedule = schedule or []
        self.store = store
        self.db = db
        self.tstore = TourneyStore(store)
        self.passwords = passwords
        self.time_controls = time_controls
        self.bots = bots
        self.bot_changed = bot_changed
        self.director = Director(
            db,
            self.tstore,
            process,
            on_change=self.changed,
            on_paired=self.paired_here,
            **({"tick": tick} if tick else {}),
        )
        self.sockets: dict[str, set[TourSocket]] = {}
        self.pushes = 0
        self._cache: dict[str, Standings] = {}
        self._changes: dict[str, int] = {}  # changes seen per tournament: a read from before one is stale
        self._reading: dict[str, asyncio.Future[Standings]] = {}  # the read under way, shared by its askers
        self.standings_reads = 0  # reads of whole standings, for tests and health
        self._tokens: dict[tuple[str, str], str] = {}  # (account id, game id) -> that player's seat token
        self.chat = ChatStore(store)
        self.chat_rate = RateLimiter(limits.chat_per_minute / 60, limits.chat_burst)
        self.limits = limits
        self._told: dict[str, OrderedDict[int, None]] = {}  # tournament -> chat messages delivered here
        self._dirty: set[str] = set()
        self._pages_due: set[str] = set()  # tournaments whose pages changed since they were last sent
        self._pages_at: dict[str, float] = {}  # when each tournament's pages were last sent here
        self._wake = asyncio.Event()
        self._closing = False
        self._tasks: list[asyncio.Task[None]] = []
        self._background: set[asyncio.Task[Any]] = set()
        if listener is not None:
            listener.listen(TOURNAMENT_CHANNEL, self.on_note, self.on_connect)

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        await self.director.start()
        self._tasks = [loop.create_task(self._push_forever()), loop.create_task(self._keep_forever())]

    async def close(self) -> None:
        self._closing = True
        await cancel_all([*self._tasks, *self._background], "the tournaments")
        await self.director.close()

    def _spawn(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- what changes -------------------------------------------------------------------------------------

    def changed(self, tournament_id: str) -> None:
        """A tournament changed (here, or announced by another process): its pages are pushed soon."""
        self._changes[tournament_id] = self._changes.get(tournament_id, 0) + 1
        if len(self._changes) > TOKENS_KEPT:  # bounded: those of tournaments nobody looks at go
            self._changes = {t: n for t, n in self._changes.items() if t in self.sockets}
        if tournament_id in self.sockets:
            self._dirty.add(tournament_id)
            self._wake.set()

    def on_note(self, payload: str) -> None:
        kind, _, rest = payload.partition(" ")
        if kind == "tour":
            self.changed(rest)
            self.director.wake()
        elif kind == "ended":  # a match ended: its director counts it (and pairs its players) now
            self.director.wake()
        elif kind == "chat":
            tid, _, number = rest.partition(" ")
            if tid in self.sockets and number.isdigit() and len(number) < 19:
                self._spawn(self._chat_news(tid, [int(number)]))
        elif kind == "paired":
            tid, account_id, game_id = (rest.split(" ") + ["", ""])[:3]
            self.changed(tid)
            if game_id and any(s.account_id == account_id for s in self.sockets.get(tid, ())):
                self._spawn(self.tell_paired(tid, account_id, game_id))

    def paired_here(self, tournament_id: str, paired: list[Paired]) -> None:
        """Players this process's director paired: their pages here are told their seats, their bots' streams
        here read their games (another process's hear of it through the database's announcements)."""
        here = {s.account_id for s in self.sockets.get(tournament_id, ())}
        for p in paired:
            self._keep_token(p.account_id, p.game_id, p.token)  # their own line's match, with no read
            if p.account_id in here:
                self._spawn(self.tell_paired(tournament_id, p.account_id, p.game_id, p.token))
            self.bot_changed(p.account_id)

    def on_connect(self) -> None:
        for tid in list(self.sockets):
            self.changed(tid)

    # -- made, joined, left -------------------------------------------------------------------------------

    async def create(self, account: Account | None, data: dict[str, Any]) -> Tournament:
        if account is None:
            raise GameError("sign_in", "sign in to make a tournament", 403)
        values = settings_from_request(data, self.time_controls(), datetime.now(UTC))
        password = values.pop("_password", None)
        if password is not None:
            values["password_hash"] = await self.passwords.hash(password)
        values["created_by"] = account.id
        mine = await self.db(self.tstore.upcoming_by, account.id)
        if mine >= UPCOMING_PER_CREATOR:
            raise GameError(
                "too_many_tournaments",
                f"you have {UPCOMING_PER_CREATOR} tournaments to come (the most): wait for one to start",
                429,
            )
        made = await self.db(self.tstore.create, values)
        assert made is not None
        self.director.wake()
        return made

    async def tournament(self, tournament_id: Any) -> Tournament:
        t = await self.db(self.tstore.get, tournament_id) if is_id(tournament_id) else None
        if t is None:
            raise GameError("no_tournament", "there is no such tournament", 404)
        return t

    async def join(
        self, tournament_id: Any, account: Account | None, data: dict[str, Any], *, bot: bool = False
    ) -> dict[str, Any]:
        """``account`` joins (``bot``: through the bot API, a bot's account), or comes back."""
        if account is None:
            raise GameError("sign_in", "tournaments are between accounts: sign in to join", 403)
        t = await self.tournament(tournament_id)
        if t.access == "password":
            stored = await self.db(self.tstore.password_hash, t.id)
            given = data.get("password")
            if not isinstance(given, str) or len(given) > 64 or not await self.passwords.verify(stored, given):
                raise GameError("wrong_password", "this tournament's password is not that", 403)
        rating = glicko2.new_player().rating
        row = await self.db(self.store.rating_of, account.id, t.category)
        if row is not None:
            rating = float(row["rating"])
        try:
            entrant = await self.db(self.tstore.join, t.id, account.id, account.name, rating, bot=bot)
        except TourneyError as e:
            raise GameError(e.code, str(e), e.status) from None
        self.changed(t.id)
        self.director.wake()
        return {"joined": True, "paused": entrant.paused}

    async def pause(self, tournament_id: Any, account: Account | None) -> dict[str, Any]:
        if account is None:
            raise GameError("sign_in", "sign in first", 403)
        t = await self.tournament(tournament_id)
        if not await self.db(self.tstore.pause, t.id, account.id):
            raise GameError("not_joined", "you are not a player of this tournament", 409)
        self.changed(t.id)
        return {"joined": True, "paused": True}

    async def berserk(self, game_id: str, seat: int, to_move: int, first_move: bool) -> None:
        why = await self.db(self.tstore.berserk, game_id, seat, to_move=to_move, first_move=first_move)
        if why is not None:
            messages = {
                "not_a_tournament_game": "only a tournament's match has berserk",
                "no_berserk": "this tournament has no berserk",
                "over": "this match is over",
                "berserk_already": "you have berserked already",
                "berserk_late": "berserk is for the start of a match, before your first move",
            }
            raise GameError(why, messages.get(why, why), 409)

    async def match_info(self, game_id: str, seat: int, playing: bool) -> dict[str, Any] | None:
        """What a table shows of its tournament: its name and page, its kind and status, and whether this
        seat may berserk now (allowed, not yet done, no decision of theirs made)."""
        got = await self.db(self.tstore.match_of, game_id, seat)
        if got is None:
            return None
        t, berserked, moved = got
        return {
            "id": t.id,
            "name": t.name,
            "kind": t.kind,
            "status": t.status,
            "url": f"/tournament/{t.id}",
            "berserked": berserked,
            "can_berserk": t.berserk and playing and not berserked and not moved,
        }

    # -- the tournament's chat ----------------------------------------------------------------------------

    async def chat_message(self, sock: TourSocket, name: str | None, msg: dict[str, Any]) -> dict[str, Any] | None:
        """A chat or report message on a tournament page's socket: the tournament's room is written by
        signed-in players (a guest reads it), each within ``chat_per_minute`` and ``chat_burst``, the room
        within ``spectator_chat_per_game`` messages and an author within ``chat_messages_per_spectator``."""
        if sock.account_id is None or name is None:
            raise ChatError("sign_in", "sign in to write in the tournament's chat", 403)
        author = owner_key(sock.account_id)
        if msg.get("type") == "report":
            number = msg.get("id")
            if type(number) is not int or not 0 < number < 1 << 62:
                raise ChatError("no_message", "there is no such message here", 404)
            found = await self.db(self.chat.message, number)
            if found is None or found.tournament_id != sock.tournament_id or found.room != "tournament":
                raise ChatError("no_message", "there is no such message here", 404)
            try:
                await self.db(self.chat.report, number, author, name)
            except ChatRefused as e:
                raise ChatError(e.code, e.message, 409) from None
            return {"type": "reported", "id": number}
        text, phrase = words_of(msg)
        if not self.chat_rate.allow(author):
            raise ChatError(
                "rate_limited",
                f"at most {self.limits.chat_per_minute:g} chat messages a minute: wait "
                f"{self.chat_rate.retry_after(author):.0f} s",
                429,
            )
        try:
            message = await self.db(
                self.chat.add,
                None,
                "tournament",
                seat=None,
                author=author,
                account_id=sock.account_id,
                name=name,
                text=text,
                phrase=phrase,
                max_in_room=self.limits.spectator_chat_per_game,
                max_per_author=self.limits.chat_messages_per_spectator,
                tournament_id=sock.tournament_id,
            )
        except ChatRefused as e:
            raise ChatError(e.code, e.message, 409 if e.code in ("chat_full", "chat_share_used") else 403) from None
        await self._deliver_chat(sock.tournament_id, [message])
        return None

    async def _chat_news(self, tournament_id: str, ids: list[int]) -> None:
        """Messages another process kept: read and delivered to the pages here."""
        try:
            got = await self.db(self.chat.by_ids_in_tournament, tournament_id, ids)
        except Exception as e:  # the database is away: the page's next open reads the history
            log.debug("could not read tournament %s's chat: %s", tournament_id, e)
            return
        await self._deliver_chat(tournament_id, got)

    async def _deliver_chat(self, tournament_id: str, messages: list[ChatMessage]) -> None:
        if tournament_id not in self._told and len(self._told) >= STANDINGS_KEPT:
            self._told = {k: v for k, v in self._told.items() if k in self.sockets}  # bounded, as the cache
        told = self._told.setdefault(tournament_id, OrderedDict())
        fresh = [m for m in messages if m.id not in told]
        for m in fresh:
            told[m.id] = None
        while len(told) > CHAT_KEPT:
            told.popitem(last=False)
        if not fresh:
            return
        text = json.dumps({"type": "chat", "messages": [m.shown() for m in fresh]})
        for sock in list(self.sockets.get(tournament_id, ())):
            try:
                await sock.send(text)
            except Exception:  # it closed or stopped reading: its own loop ends it
                pass

    async def chat_hello(self, sock: TourSocket) -> None:
        """The room's latest messages, to a page that opens (and whether it may write)."""
        got = await self.db(self.chat.recent_in_tournament, sock.tournament_id)
        await sock.send(
            json.dumps(
                {
                    "type": "chat",
                    "history": True,
                    "messages": [m.shown() for m in got],
                    "can_chat": sock.account_id is not None,
                }
            )
        )

    # -- what the pages show ------------------------------------------------------------------------------

    async def standings(self, tournament_id: str) -> Standings:
        """The standings: as last read, if no change came since (and it is younger than
        :data:`REFRESH_EVERY`), else read now. One read at a time per tournament, shared by everyone asking
        meanwhile: hundreds of pages that open at once (a restart, the start of a big arena) cost one read,
        not one each."""
        cached = self._cache.get(tournament_id)
        changes = self._changes.get(tournament_id, 0)
        if cached is not None and cached.changes == changes and time.monotonic() - cached.at < REFRESH_EVERY:
            return cached
        reading = self._reading.get(tournament_id)
        if reading is None:
            reading = asyncio.ensure_future(self._read_standings(tournament_id, changes))
            self._reading[tournament_id] = reading
            reading.add_done_callback(functools.partial(self._read_done, tournament_id))
        # A change that comes while this is read is pushed by the next push (the change marks it).
        return await asyncio.shield(reading)

    def _read_done(self, tournament_id: str, _reading: asyncio.Future[Standings]) -> None:
        self._reading.pop(tournament_id, None)

    async def _read_standings(self, tournament_id: str, changes: int) -> Standings:
        if not is_id(tournament_id):
            raise GameError("no_tournament", "there is no such tournament", 404)
        # Read and ranked on a database thread: up to 2,000 players' lines, not on the event loop.
        standings = await self.db(self._standings_now, tournament_id, changes)
        if standings is None:
            raise GameError("no_tournament", "there is no such tournament", 404)
        if len(self._cache) >= STANDINGS_KEPT:  # bounded: those of tournaments nobody watches here go
            self._cache = {k: v for k, v in self._cache.items() if k in self.sockets}
        self._cache[tournament_id] = standings
        self.standings_reads += 1
        return standings

    def _standings_now(self, tournament_id: str, changes: int) -> Standings | None:
        """On a database thread: a tournament's standings as the database has them now."""
        got = self.tstore.standings_data(tournament_id)
        if got is None:
            return None
        t, entrants, played = got
        rows = standings_rows(t, entrants, played)
        where = {account_id: i for i, account_id in enumerate(standings_ids(entrants, rows))}
        return Standings(t, rows, time.monotonic(), where, changes)

    async def view(self, tournament_id: Any, account: Account | None, page: int = 1) -> dict[str, Any]:
        """A tournament's page data: the tournament, one page of its standings (``page`` 0: the page with
        the asker's own line), the podium once it is over, and the asker's own standing and match."""
        s = await self.standings(str(tournament_id) if is_id(tournament_id) else "")
        return await self._view(s, account.id if account is not None else None, page)

    async def _view(self, s: Standings, account_id: str | None, page: int) -> dict[str, Any]:
        out = self._page(s, self._page_of(s, account_id, page))
        out["me"] = await self._me(s, account_id)
        return out

    def _page_of(self, s: Standings, account_id: str | None, page: int) -> int:
        """The standings page to show: ``page``, or for 0 the one with ``account_id``'s own line."""
        pages = max(1, math.ceil(len(s.rows) / PAGE_ROWS))
        if page == 0:
            mine = s.where.get(account_id or "")
            page = 1 if mine is None else mine // PAGE_ROWS + 1
        return min(max(1, page), pages)

    def _page(self, s: Standings, page: int) -> dict[str, Any]:
        """One page of the standings, the same for everyone who looks at it (``me`` None)."""
        t = s.tournament
        pages = max(1, math.ceil(len(s.rows) / PAGE_ROWS))
        return {
            "type": "tournament",
            "tournament": summary(t, datetime.now(UTC)),
            "standings": {
                "page": page,
                "pages": pages,
                "rows": s.rows[(page - 1) * PAGE_ROWS : page * PAGE_ROWS],
                "players": len(s.rows),
            },
            "podium": s.rows[:3] if t.status == "finished" else [],
            "me": None,
        }

    async def _me(self, s: Standings, account_id: str | None) -> dict[str, Any] | None:
        """A player's own standing and current match (its seat's token: for them alone)."""
        mine = s.where.get(account_id or "")
        if mine is None or account_id is None:
            return None
        row = s.rows[mine]
        me: dict[str, Any] = {
            "rank": row["rank"],
            "score": row.get("score", row.get("points")),
            "games": row["games"],
            "paused": row["paused"],
            "game": None,
        }
        if row["playing"] and s.tournament.status == "running":
            token = await self.token_of(account_id, row["playing"])
            if token is not None:
                me["game"] = {"game_id": row["playing"], "url": f"/play/{token}"}
        return me

    async def token_of(self, account_id: str, game_id: str) -> str | None:
        """A player's seat token in a match: read once, then kept (a seat's token never changes), so that a
        push to hundreds of players' pages does not read each of theirs again."""
        token = self._tokens.get((account_id, game_id))
        if token is None:
            token = await self.db(self.tstore.token_of, account_id, game_id)
            if token is not None:
                self._keep_token(account_id, game_id, token)
        return token

    def _keep_token(self, account_id: str, game_id: str, token: str) -> None:
        if len(self._tokens) >= TOKENS_KEPT:
            self._tokens.clear()
        self._tokens[(account_id, game_id)] = token

    async def listing(self) -> dict[str, Any]:
        now = datetime.now(UTC)
        listed = await self.db(self.tstore.listing)
        return {status: [summary(t, now) for t in ts] for status, ts in listed.items()}

    async def of_player(self, account_id: str) -> list[dict[str, Any]]:
        """The tournaments a player joined, for their page: each with their score and games."""
        now = datetime.now(UTC)
        got = await self.db(self.tstore.tournaments_of, account_id)
        return [
            {
                **summary(t, now),
                "score": e.score / 2 if t.kind == "swiss" else e.score,
                "games": e.games,
                "wins": e.wins,
            }
            for t, e in got
        ]

    # -- the pages' sockets -------------------------------------------------------------------------------

    def open_sockets(self) -> int:
        return sum(len(s) for s in self.sockets.values())

    def join_socket(self, sock: TourSocket) -> None:
        self.sockets.setdefault(sock.tournament_id, set()).add(sock)
        if sock.account_id is not None:
            self._spawn(self._seen(sock.tournament_id, [sock.account_id]))

    def leave_socket(self, sock: TourSocket) -> None:
        mine = self.sockets.get(sock.tournament_id)
        if mine is not None:
            mine.discard(sock)
            if not mine:
                del self.sockets[sock.tournament_id]

    async def _seen(self, tournament_id: str, account_ids: list[str]) -> None:
        try:
            await self.db(self.tstore.seen, tournament_id, account_ids)
        except Exception as e:  # the database is away: the next keep marks them
            log.debug("could not mark tournament players present: %s", e)

    async def hello(self, sock: TourSocket) -> None:
        s = await self.standings(sock.tournament_id)
        view = await self._view(s, sock.account_id, sock.page)
        sock.last_me = json.dumps({"type": "me", "me": view["me"]})
        await sock.send(json.dumps(view))

    async def tell_paired(self, tournament_id: str, account_id: str, game_id: str, token: str | None = None) -> None:
        """Tell a player's sockets on this tournament's page of the match they were just paired into (its
        seat's ``token`` when the director here made it; else read once, by :meth:`token_of`)."""
        if token is None:
            token = await self.token_of(account_id, game_id)
            if token is None:
                return
        text = json.dumps({"type": "paired", "game_id": game_id, "url": f"/play/{token}"})
        for sock in list(self.sockets.get(tournament_id, ())):
            if sock.account_id == account_id and game_id not in sock.told:
                sock.told.add(game_id)
                try:
                    await sock.send(text)
                except Exception:  # it closed or stopped reading: its own loop ends it
                    pass

    async def push(self, tournament_id: str) -> None:
        """Send each player with a socket here their own line and match (``{"type": "me"}``) when it changed,
        then, at most every :data:`PAGES_EVERY` seconds, every socket its page of the standings (one text a
        page, encoded once for all). Own lines go first: they are small, and they are what a player waits
        for after a result; a page of twenty lines that comes a little later costs hundreds of sockets less."""
        socks = list(self.sockets.get(tournament_id, ()))
        if not socks:
            return
        s = await self.standings(tournament_id)
        for sock in socks:
            if sock.account_id is None or sock.account_id not in s.where:
                continue
            me = json.dumps({"type": "me", "me": await self._me(s, sock.account_id)})
            if me != sock.last_me:
                sock.last_me = me
                try:
                    await sock.send(me)
                except Exception:  # it closed or stopped reading: its own loop ends it
                    pass
        now = time.monotonic()
        if now - self._pages_at.get(tournament_id, 0.0) < PAGES_EVERY:
            self._pages_due.add(tournament_id)  # sent by a later push, when their time comes
            return
        self._pages_at[tournament_id] = now
        self._pages_due.discard(tournament_id)
        shared: dict[int, str] = {}
        for sock in socks:
            page = self._page_of(s, sock.account_id, sock.page)
            if page not in shared:
                shared[page] = json.dumps(self._page(s, page))
            try:
                await sock.send(shared[page])
            except Exception:  # it closed or stopped reading: its own loop ends it
                pass
        self.pushes += 1

    async def _push_forever(self) -> None:
        last_full = time.monotonic()
        while not self._closing:
            try:
                await asyncio.wait_for(self._wake.wait(), PUSH_EVERY if self._pages_due else REFRESH_EVERY)
            except TimeoutError:
                pass
            self._wake.clear()
            began = time.monotonic()
            if began - last_full >= REFRESH_EVERY:
                self._dirty |= set(self.sockets)
                last_full = began
            self._dirty |= {t for t in self._pages_due if began - self._pages_at.get(t, 0.0) >= PAGES_EVERY}
            self._pages_due &= set(self.sockets)
            if len(self._pages_at) > STANDINGS_KEPT:  # bounded: those of tournaments nobody looks at here go
                self._pages_at = {t: at for t, at in self._pages_at.items() if t in self.sockets}
            dirty, self._dirty = self._dirty, set()
            for tid in dirty:
                try:
                    await self.push(tid)
                except Exception as e:  # the database is away: the next change or refresh tries again
                    log.debug("could not push tournament %s: %s", tid, e)
            # At most every PUSH_EVERY seconds from one push's start to the next: a push's own time (a read,
            # hundreds of sends) is not added to the next change's wait.
            await asyncio.sleep(max(0.0, PUSH_EVERY - (time.monotonic() - began)))

    async def ensure_scheduled(self) -> int:
        """Make the scheduled tournaments that start within :data:`~koikoi.web.schedule.AHEAD` and are not
        made yet (by this process or another): how many this call made."""
        made = 0
        now = datetime.now(UTC)
        for s in self.schedule:
            for start in occurrences(s, now):
                values = settings_from_request({**s.settings, "starts": start.isoformat()}, self.time_controls(), now)
                values["schedule"] = schedule_key(s.name, start)
                if await self.db(self.tstore.create, values) is not None:
                    made += 1
                    log.info("made the scheduled tournament %r of %s", s.name, start.isoformat())
        return made

    async def _keep_forever(self) -> None:
        schedule_every = int(SCHEDULE_EVERY / KEEP_EVERY)
        rounds = 0
        while not self._closing:
            if self.schedule and rounds % schedule_every == 0:
                try:
                    await self.ensure_scheduled()
                except Exception as e:  # the database is away: the next round makes them
                    log.debug("could not make the scheduled tournaments: %s", e)
            rounds += 1
            await asyncio.sleep(KEEP_EVERY)
            bots = self.bots()
            if bots:
                try:
                    await self.db(self.tstore.seen_everywhere, bots)
                except Exception as e:  # the database is away: the next keep marks them
                    log.debug("could not mark bots present in their tournaments: %s", e)
            for tid, socks in list(self.sockets.items()):
                ids = sorted({s.account_id for s in socks if s.account_id is not None})
                if ids:
                    await self._seen(tid, ids)
