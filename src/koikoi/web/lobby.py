"""The public lobby of one server process: open seeks, quick pairing, and the lobby's WebSockets.

The lobby lives in the database (:class:`~koikoi.web.lobbystore.LobbyStore`); this module is one
process's side of it. It keeps the lobby sockets open here (by who holds them: an account's owner key or
a guest's browser id) and

- pushes every socket the lobby as it is (the open seeks, how many wait in each pool, the games being
  played) when it changes, at most every :data:`PUSH_EVERY` seconds, one text for all;
- sends a socket that opens the text last pushed (a :class:`Snapshot`), when nothing changed since and it
  is younger than :data:`REFRESH_EVERY`: an open costs one small query (the player's own seeks), not a
  read of the whole lobby and its encoding (35 KB with 300 seeks, about 13 ms of the event loop), and
  opens at the same moment share one read;
- tells a player over their sockets when their seek was accepted or they were paired (``paired``, with
  their own seat's token: only their sockets are told), wherever that happened;
- pairs the quick-pairing pools in waves (:data:`WAVE_EVERY`) and at once when someone joins a pool;
- keeps the seeks of its sockets' players alive (``seen``) and ends those whose players are gone.

Across processes on PostgreSQL, changes are announced on :data:`~koikoi.web.store.LOBBY_CHANNEL` (the
same listening connection as the games', :mod:`koikoi.web.fanout`): ``lobby`` when the lists changed,
``owner <owner>`` when a seek of that owner was paired. On SQLite there is one process, which tells
itself. A lost announcement loses nothing: the lists are pushed again every :data:`REFRESH_EVERY`
seconds, a paired player finds the game among their games, and a page that reconnects is told the
pairings of the last :data:`TELL_AGAIN` seconds.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from typing import Any

from .. import glicko2
from ..ai.registry import lobby_levels
from ..rules import PRESETS, RuleSet
from .accountstore import Account
from .games import GameError, GameService, clean_name, playable_seed, rules_from_request
from .limits import Limits
from .lobbystore import WAVE_PAIRS, AbortWait, InAGame, LobbyStore, Pairing, Seek, Seeker, TooMany
from .pairing import POOLS, category_of
from .store import LOBBY_CHANNEL, StoreError
from .tasks import cancel_all

__all__ = ["LEVEL_RATINGS", "LobbyService", "LobbySocket", "computer_for", "level_ratings", "stranger_clock"]

log = logging.getLogger("koikoi.web")

PUSH_EVERY = 0.5  # the lobby is pushed at most this often (a burst of changes makes one push)
REFRESH_EVERY = 10.0  # ... and at least this often while anyone watches (moves in the games listed)
WAVE_EVERY = 0.5  # quick-pairing waves, and at once when someone joins a pool
BUSY_AGAIN = 0.05  # a pool another process is pairing is looked at again this soon
WAIT_FOR_WAVE = 1.0  # a request to join a pool waits this long for the wave that may pair it
KEEP_EVERY = 5.0  # the seeks of this process's sockets are kept alive, and ended ones swept, this often
TELL_AGAIN = 15.0  # a socket that (re)connects is told the pairings of this many seconds before
TELL_BATCH = 0.02  # pairings announced within this long are looked up together
TELL_TRIES = 5  # a pairing made by another process is looked up this many times (a second apart) at most
MAX_HANDS = 12  # a seek's match length: 1 to 12 hands, as the presets offer


def level_ratings() -> dict[str, dict[str, int]]:
    """The computer levels' ratings per category, measured by ``koikoi ladder`` (docs/ratings.md)."""
    data = json.loads(resources.files("koikoi.web").joinpath("level-ratings.json").read_text())
    return {c: {k: int(v) for k, v in data[c]["ratings"].items() if k in lobby_levels()} for c in ("short", "long")}


LEVEL_RATINGS = level_ratings()


def computer_for(category: str, rating: float) -> dict[str, Any]:
    """The computer level whose rating in ``category`` is the closest to ``rating`` (random excluded:
    it is no opponent to offer anyone)."""
    levels = {k: v for k, v in LEVEL_RATINGS[category].items() if k != "random"}
    level = min(levels, key=lambda k: (abs(levels[k] - rating), levels[k]))
    return {"level": level, "rating": levels[level]}


Send = Callable[[str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The lobby as one read found it, encoded once for every socket: ``base`` is the JSON text of
    ``{"type": "lobby", ...}`` without its closing brace (each socket's own ``"mine"`` goes there);
    ``mine`` is each owner's listed seeks; ``changes`` the count of changes it saw; ``at`` when it was read
    (``time.monotonic()``)."""

    base: str
    mine: dict[str, list[str]]
    changes: int
    at: float

    def text(self, mine: list[str]) -> str:
        return f'{self.base}, "mine": {json.dumps(mine)}}}'


@dataclass(eq=False)
class LobbySocket:
    """One lobby socket on this process: who holds it, and how to send it a text."""

    owner: str
    send: Send
    opened: float = field(default_factory=time.time)
    told: set[str] = field(default_factory=set)  # the games it was told it was paired into


class LobbyService:
    """The lobby, as one process serves it. Use from the event loop; :meth:`start` before, :meth:`close` after."""

    def __init__(self, service: GameService, limits: Limits) -> None:
        self.service = service
        self.db = service.db
        self.limits = limits
        self.store = LobbyStore(service.store)
        self.sockets: dict[str, set[LobbySocket]] = {}  # owner -> their sockets here
        self.open_sockets = 0
        self.pushes = 0  # lobby pushes sent, for tests and health
        self._dirty = asyncio.Event()
        self._closing = False  # the loops end (a cancellation can be lost: koikoi.web.tasks)
        self._changes = 0  # changes seen (here or announced): a snapshot read before one is stale
        self._snapshot: Snapshot | None = None
        self._reading: asyncio.Future[Snapshot] | None = None  # the read under way, shared by its askers
        self._reading_changes = 0  # the changes seen when that read began
        self.snapshot_reads = 0  # reads of the whole lobby for its sockets, for tests and health
        self._wave_wanted = asyncio.Event()
        self._to_tell: set[str] = set()  # players here paired by another process, to be told soon
        self._next_wave: asyncio.Future[list[Pairing]] | None = None  # made on the event loop, by start()
        self._tasks: list[asyncio.Task[None]] = []
        self._background: set[asyncio.Task[Any]] = set()
        if service.listener is not None:
            service.listener.listen(LOBBY_CHANNEL, self.on_note, self.changed)

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._next_wave = loop.create_future()
        self._tasks = [
            loop.create_task(self._push_forever()),
            loop.create_task(self._waves_forever()),
            loop.create_task(self._keep_forever()),
        ]

    async def close(self) -> None:
        self._closing = True
        await cancel_all([*self._tasks, *self._background], "the lobby")

    def _spawn(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- what other processes say -------------------------------------------------------------------------

    def changed(self) -> None:
        """The lobby's lists changed (here or in another process): push them soon."""
        self._changes += 1
        self._dirty.set()

    def on_note(self, payload: str) -> None:
        """An announcement on the lobby's channel."""
        if payload == "lobby":
            self.changed()
        elif payload.startswith("owner "):
            owner, _, game_id = payload[6:].rpartition(" ")
            mine = self.sockets.get(owner)
            # Told already when the pairing was made here: only another process's pairing is looked up.
            if mine and any(game_id not in sock.told for sock in mine):
                # Many pairings come at once (a wave): their players are looked up together, shortly.
                if not self._to_tell:
                    asyncio.get_running_loop().call_later(TELL_BATCH, self._tell_batch)
                self._to_tell.add(owner)

    def _tell_batch(self) -> None:
        owners, self._to_tell = self._to_tell, set()
        owners &= set(self.sockets)
        if owners:
            self._spawn(self.tell_paired(sorted(owners)))

    def _paired_here(self, pairings: list[Pairing]) -> None:
        """Pairings made by this process: the lobby changed, and the players with a socket here are told
        their seats at once (another process's players hear of it through the database)."""
        self.changed()
        for p in pairings:
            if p.owner in self.sockets:
                self._spawn(self._tell(p.owner, p.entry, p.game_id, p.token))

    async def _tell(self, owner: str, seek_id: str, game_id: str, token: str) -> None:
        message = json.dumps(
            {"type": "paired", "seek_id": seek_id, "game_id": game_id, "token": token, "url": f"/play/{token}"}
        )
        for sock in list(self.sockets.get(owner, ())):
            if game_id in sock.told:
                continue
            sock.told.add(game_id)
            try:
                await sock.send(message)
            except Exception:  # it closed or stopped reading: its own loop ends it
                pass

    # -- seeking ------------------------------------------------------------------------------------------

    async def seeker(self, owner: str, account: Account | None, name: Any, category: str) -> Seeker:
        """Who is seeking, with their rating in ``category`` as of now (a guest's is a new player's)."""
        now = time.time()
        player = glicko2.new_player()
        if account is not None:
            row = await self.db(self.service.store.rating_of, account.id, category)
            if row is not None:
                updated = row["updated"] if row["updated"].tzinfo is not None else row["updated"].replace(tzinfo=UTC)
                player = glicko2.Rating(row["rating"], row["rd"], row["volatility"], row["games"], updated.timestamp())
        current = glicko2.as_of(player, now)
        return Seeker(
            owner=owner,
            account_id=None if account is None else account.id,
            name=account.name if account is not None else clean_name(name, "Guest"),
            rating=current.rating,
            rd=current.rd,
            provisional=glicko2.provisional_at(player, now),
        )

    async def _room_for_a_game(self, owner: str) -> None:
        if await self.db(self.service.store.open_games_of, owner) >= self.limits.open_games_per_browser:
            raise GameError(
                "too_many_games",
                f"you have {self.limits.open_games_per_browser} unfinished games "
                "(the most this server allows): finish or leave one first",
                429,
            )

    async def create_seek(self, owner: str, account: Account | None, data: dict[str, Any]) -> Seek:
        """A new open seek from a request's body: ``{"rules": {"preset", "options"}, "hands", "rated",
        "private", "clock"}``."""
        rated = data.get("rated", False)
        if not isinstance(rated, bool):
            raise GameError("bad_seek", "'rated' is true or false", 422)
        private = data.get("private", False)
        if not isinstance(private, bool):
            raise GameError("bad_seek", "'private' is true (nobody may watch the game) or false", 422)
        if private and rated:
            raise GameError("bad_seek", "a rated game is always public: only a casual game can be private", 422)
        rules = seek_rules(data.get("rules"), data.get("hands"), rated=rated)
        if rated and account is None:
            raise GameError("sign_in", "rated games are between accounts: sign in to seek a rated game", 403)
        clock = stranger_clock(self.service, data, rated=rated)
        seeker = await self.seeker(owner, account, data.get("name"), category_of(rules.hands))
        seek, _ = await self._open(
            seeker,
            rules,
            rated=rated,
            pool=None,
            max_open=self.limits.seeks_per_player,
            private=private,
            clock=clock,
        )
        self.changed()
        return seek

    async def _open(
        self,
        seeker: Seeker,
        rules: RuleSet,
        *,
        rated: bool,
        pool: str | None,
        max_open: int,
        private: bool = False,
        clock: str | None = None,
    ) -> tuple[Seek, bool]:
        try:
            return await self.db(
                self.store.open_seek,
                seeker,
                rules,
                rated=rated,
                pool=pool,
                max_open=max_open,
                max_games=self.limits.open_games_per_browser,
                private=private,
                clock=clock,
            )
        except InAGame:
            raise _in_a_game() from None
        except AbortWait as e:
            raise _abort_wait(e) from None
        except TooMany as e:
            if e.what == "games":
                raise GameError(
                    "too_many_games",
                    f"you have {e.limit} unfinished games (the most this server allows): finish or leave one first",
                    429,
                ) from None
            raise GameError(
                "too_many_seeks", f"you have {e.limit} open seeks (the most): cancel one first", 429
            ) from None

    async def cancel(self, seek_id: Any, owner: str) -> None:
        if not _is_id(seek_id):
            raise GameError("no_seek", "there is no such seek", 404)
        if not await self.db(self.store.cancel, seek_id, owner):
            seek = await self.db(self.store.seek, seek_id)
            if seek is not None and seek.owner == owner and seek.game_id is not None:
                raise GameError("seek_taken", "this seek has been accepted already: its game is among yours", 409)
            raise GameError("no_seek", "there is no such seek of yours (it may have ended)", 404)
        self.changed()

    async def accept(self, seek_id: Any, owner: str, account: Account | None, name: Any) -> dict[str, Any]:
        """Accept an open seek: the same answer as creating a game (``game_id``, ``token``, ``url``)."""
        if not _is_id(seek_id):
            raise GameError("no_seek", "there is no such seek", 404)
        seek = await self.db(self.store.seek, seek_id)
        if seek is None or seek.pool is not None:
            raise GameError("no_seek", "there is no such seek (it may have ended)", 404)
        if seek.owner == owner:
            raise GameError("own_seek", "this is your own seek: wait for someone to accept it", 409)
        if seek.game_id is not None:
            raise GameError("seek_taken", "someone else accepted this seek first", 410)
        if seek.rated and account is None:
            raise GameError("sign_in", "this seek is for a rated game: sign in to accept it", 403)
        if seek.rated and account is not None and seek.account_id is not None:
            if await self.db(self.store.bot_runner, seek.account_id) == account.id:
                raise GameError("own_bot", "you run this bot: a game against your own bot is casual, never rated", 403)
        await self._room_for_a_game(owner)
        taker = await self.seeker(owner, account, name, category_of(seek.hands))
        try:
            _seek, seeker, token = await self.db(self.store.accept, seek_id, taker, _seeds)
        except InAGame:
            raise _in_a_game() from None
        except AbortWait as e:
            raise _abort_wait(e) from None
        except StoreError as e:
            if e.conflict:
                raise GameError("seek_taken", "someone else accepted this seek first", 410) from None
            raise GameError("no_seek", "there is no such seek (it may have ended)", 404) from None
        self._paired_here([seeker])
        return {"game_id": seeker.game_id, "token": token, "status": "playing", "url": f"/play/{token}"}

    # -- quick pairing ------------------------------------------------------------------------------------

    async def quick(self, owner: str, account: Account | None, data: dict[str, Any]) -> dict[str, Any]:
        """Wait in a pool (``{"pool"}``), paired at once if someone fitting waits already."""
        key = data.get("pool")
        if not isinstance(key, str) or key not in POOLS:
            raise GameError("bad_pool", f"'pool' is one of {', '.join(POOLS)}", 422)
        pool = POOLS[key]
        rules = PRESETS[pool.preset].replace(hands=pool.hands)
        seeker = await self.seeker(owner, account, data.get("name"), category_of(pool.hands))
        entry, new = await self._open(seeker, rules, rated=True, pool=key, max_open=1, clock=pool.clock)
        out = self.entry_view(entry)
        if new:
            self.changed()
            # Paired by the next wave when someone fitting waits already: its answer says so (a page with
            # a socket hears it there too); else the player waits, told over the lobby socket.
            for p in await self.next_wave(WAIT_FOR_WAVE):
                if p.entry == entry.id:
                    out.update(status="paired", game_id=p.game_id, token=p.token, url=f"/play/{p.token}")
        return out

    def entry_view(self, entry: Seek) -> dict[str, Any]:
        """A quick-pairing entry as its own player sees it (with their seat, once paired)."""
        category = category_of(entry.hands)
        out: dict[str, Any] = {
            "entry_id": entry.id,
            "pool": entry.pool,
            "clock": POOLS[entry.pool].clock if entry.pool in POOLS else entry.clock,
            "status": "paired" if entry.game_id is not None else "waiting",
            "since": entry.created.isoformat(),
            "rating": round(entry.rating),
            "provisional": entry.provisional,
            "category": category,
            # After this long with nobody, the page offers (never forces) a computer of about this strength.
            "offer_after": self.limits.computer_offer_seconds,
            "computer": computer_for(category, entry.rating),
        }
        if entry.game_id is not None and entry.token is not None:
            out.update(game_id=entry.game_id, token=entry.token, url=f"/play/{entry.token}")
        return out

    async def entry(self, entry_id: Any, owner: str) -> dict[str, Any]:
        """An entry of ``owner``'s, asked after (which keeps it alive, for clients without a socket)."""
        if not _is_id(entry_id):
            raise GameError("no_entry", "there is no such quick-pairing entry", 404)
        entry = await self.db(self.store.seek, entry_id)
        if entry is None or entry.owner != owner or entry.pool is None:
            raise GameError("no_entry", "there is no such quick-pairing entry of yours (it may have ended)", 404)
        if entry.game_id is None:
            await self.db(self.store.seen, [owner])
        return self.entry_view(entry)

    async def next_wave(self, wait: float) -> list[Pairing]:
        """Ask for a wave now, and the pairings it made (within ``wait`` seconds; none after that). The
        requests that come while one wave runs share the next: a crowd asking at once costs a few waves,
        not a transaction each."""
        wave = self._next_wave
        self._wave_wanted.set()
        if wave is None:  # not started
            return []
        try:
            return await asyncio.wait_for(asyncio.shield(wave), wait)
        except (TimeoutError, Exception):
            return []

    async def wave(self, pool: str) -> tuple[list[Pairing], bool]:
        """Pair who can be paired in ``pool`` now: each player paired, with their seat; and whether the
        pool was busy (another process pairing it)."""
        try:
            pairings = await self.db(self.store.pair_pool, pool, _seeds)
        except StoreError as e:
            if not e.conflict:
                raise
            log.info("a quick-pairing wave of %s lost a race (%s); the next wave pairs them", pool, e)
            return [], True
        if pairings is None:
            return [], True
        if pairings:
            self._paired_here(pairings)
        return pairings, False

    async def _waves_forever(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._closing:
            try:
                await asyncio.wait_for(self._wave_wanted.wait(), WAVE_EVERY)
            except TimeoutError:
                pass
            self._wave_wanted.clear()
            # The requests waiting for this wave; the ones that come from now on wait for the next.
            this, self._next_wave = self._next_wave, loop.create_future()
            assert this is not None
            made: list[Pairing] = []
            try:
                for pool in await self.db(self.store.waiting_pools):
                    while True:
                        got, busy = await self.wave(pool)
                        made += got
                        if busy:  # another process is pairing it: look again in a moment
                            self._wave_wanted.set()
                            await asyncio.sleep(BUSY_AGAIN)
                            break
                        if len(got) < 2 * WAVE_PAIRS:
                            break  # a full wave leaves others to pair: the next one goes at once
            except Exception as e:  # the database is away: the next wave tries again
                log.debug("a quick-pairing wave failed: %s", e)
            finally:
                this.set_result(made)

    # -- the lobby's sockets ------------------------------------------------------------------------------

    def join(self, sock: LobbySocket) -> None:
        self.sockets.setdefault(sock.owner, set()).add(sock)
        self.open_sockets += 1
        self._spawn(self.tell_paired([sock.owner], since=sock.opened - TELL_AGAIN))

    def leave(self, sock: LobbySocket) -> None:
        mine = self.sockets.get(sock.owner)
        if mine is None or sock not in mine:
            return
        mine.discard(sock)
        self.open_sockets -= 1
        if not mine:
            del self.sockets[sock.owner]
            # Their last lobby page here closed: they no longer wait in a pool (their open seeks wait a
            # while, GONE, for a page that comes back).
            self._spawn(self._left(sock.owner))

    async def _left(self, owner: str) -> None:
        try:
            if owner not in self.sockets and await self.db(self.store.leave_pools, owner) > 0:
                self.changed()
        except Exception as e:
            log.debug("could not take %s out of the pools: %s", owner, e)

    async def tell_paired(self, owners: list[str], since: float | None = None) -> None:
        """Tell the sockets here of ``owners`` of their seeks and entries paired lately."""
        here = [o for o in owners if self.sockets.get(o)]
        if not here:
            return
        start = since if since is not None else min(s.opened for o in here for s in self.sockets[o]) - TELL_AGAIN
        for _attempt in range(TELL_TRIES):
            try:
                paired = await self.db(self.store.paired_of, here, datetime.fromtimestamp(start, UTC))
                break
            except Exception as e:  # the database is busy or away: again in a moment
                log.debug("could not tell %d players of their pairings: %s", len(here), e)
                await asyncio.sleep(1.0)
        else:
            return  # the page asks after its entry too, and the game is among the player's games
        for seek in reversed(paired):  # the oldest first: a page goes to the last one it is told
            if seek.game_id is not None and seek.token is not None:
                await self._tell(seek.owner, seek.id, seek.game_id, seek.token)

    async def listing(self, owner: str | None = None) -> dict[str, Any]:
        """The lobby as JSON (``GET /api/lobby``, and what the sockets are pushed): with ``owner``, also
        their own open seeks and quick-pairing entries."""
        listed = await self.db(self.store.listing)
        out = self._shown(listed)
        if owner is not None:
            mine = await self.db(self.store.mine, owner)
            out["mine"] = {
                "seeks": [s.id for s in mine if s.pool is None],
                "quick": [self.entry_view(s) for s in mine if s.pool is not None],
            }
        return out

    def _shown(self, listed: dict[str, Any]) -> dict[str, Any]:
        return {
            "seeks": [{**s.shown(), "bot": s.account_id in listed["bots"]} for s in listed["seeks"]],
            "pools": {
                key: {
                    "preset": pool.preset,
                    "hands": pool.hands,
                    "clock": pool.clock,
                    "category": category_of(pool.hands),
                    "waiting": listed["pools"].get(key, 0),
                }
                for key, pool in POOLS.items()
            },
            "games": listed["games"],
        }

    async def _push_forever(self) -> None:
        while not self._closing:
            try:
                await asyncio.wait_for(self._dirty.wait(), REFRESH_EVERY)
            except TimeoutError:
                pass
            self._dirty.clear()
            if self.sockets:
                try:
                    await self.push()
                except Exception as e:  # the database is away: the next change or refresh tries again
                    log.debug("could not push the lobby: %s", e)
            await asyncio.sleep(PUSH_EVERY)

    async def snapshot(self, *, fresh: bool = False) -> Snapshot:
        """The lobby as last read, if no change came since and it is younger than :data:`REFRESH_EVERY`
        (``fresh``: read it again regardless); else read now, one read for everyone asking meanwhile."""
        snap = self._snapshot
        if (
            not fresh
            and snap is not None
            and snap.changes == self._changes
            and time.monotonic() - snap.at < REFRESH_EVERY
        ):
            return snap
        reading = self._reading
        if reading is None or self._reading_changes != self._changes:  # none, or begun before a change
            reading = self._reading = asyncio.ensure_future(self._read_snapshot())
            self._reading_changes = self._changes
            reading.add_done_callback(self._read_done)
        return await asyncio.shield(reading)

    def _read_done(self, reading: asyncio.Future[Snapshot]) -> None:
        if self._reading is reading:
            self._reading = None
        if reading.cancelled() or reading.exception() is not None:
            return
        got = reading.result()
        if self._snapshot is None or got.at >= self._snapshot.at:  # reads may end out of order
            self._snapshot = got

    async def _read_snapshot(self) -> Snapshot:
        changes, at = self._changes, time.monotonic()
        listed = await self.db(self.store.listing)
        self.snapshot_reads += 1
        mine: dict[str, list[str]] = {}
        for s in listed["seeks"]:
            mine.setdefault(s.owner, []).append(s.id)
        return Snapshot(json.dumps({"type": "lobby", **self._shown(listed)})[:-1], mine, changes, at)

    async def push(self) -> None:
        """Send every socket here the lobby as it is now: one text for all, with each player's own seeks."""
        snap = await self.snapshot(fresh=True)
        for owner, socks in list(self.sockets.items()):
            text = snap.text(snap.mine.get(owner, []))
            for sock in list(socks):
                try:
                    await sock.send(text)
                except Exception:  # it closed or stopped reading: its own loop ends it
                    pass
        self.pushes += 1

    async def hello(self, sock: LobbySocket) -> None:
        """The lobby as it is, to a socket that just opened: the shared snapshot, with the player's own
        open seeks (all of them, also those past the listing's end)."""
        snap = await self.snapshot()
        mine = await self.db(self.store.mine, sock.owner)
        await sock.send(snap.text([s.id for s in mine if s.pool is None]))

    async def _keep_forever(self) -> None:
        while not self._closing:
            await asyncio.sleep(KEEP_EVERY)
            try:
                if self.sockets:
                    await self.db(self.store.seen, list(self.sockets))
                if await self.db(self.store.sweep):
                    self.changed()
            except Exception as e:  # the database is away: the next round tries again
                log.debug("could not keep the lobby: %s", e)


_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")


def _in_a_game() -> GameError:
    return GameError(
        "in_a_game",
        "you are playing a game with a real-time clock, or the seek's player is: one such game at a time "
        "(finish it first; correspondence games are not counted)",
        409,
    )


def _abort_wait(e: AbortWait) -> GameError:
    minutes = max(1, math.ceil(e.seconds / 60))
    return GameError(
        "abort_wait",
        f"you aborted {e.aborts} games in a row without playing them: you can seek a game again in {minutes} min",
        429,
        params={"aborts": e.aborts, "minutes": minutes},
    )


def _is_id(value: Any) -> bool:
    """Whether ``value`` may be a seek's id (they are URL-safe tokens): anything else names none, and
    never reaches the database (PostgreSQL refuses a NUL in text outright)."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def seek_rules(rules: Any, hands: Any, *, rated: bool) -> RuleSet:
    """A seek's rule set: a preset (with options, unless rated) and a match length of 1 to 12 hands."""
    if type(hands) is not int or not 1 <= hands <= MAX_HANDS:
        raise GameError("bad_seek", f"'hands' is the match length, a whole number from 1 to {MAX_HANDS}", 422)
    if rated and isinstance(rules, dict) and rules.get("options"):
        raise GameError("bad_rules", "a rated game is played under a preset as it is: no options", 422)
    rule_set = rules_from_request(rules)
    if rule_set.dealer_selection == "birth_month":
        raise GameError(
            "bad_rules", "these rules choose the first dealer by the players' birth months: not for strangers", 422
        )
    return rule_set.replace(hands=hands)


def stranger_clock(service: GameService, data: dict[str, Any], *, rated: bool) -> str | None:
    """The time control a seek or a challenge to a bot asks for: ``"clock"`` is one the server offers
    (koikoi.clocks), or absent, None or "none" for no clock. Running out of time loses such a game
    (``"on_time"``, if given, says "lose"), and a rated one has a clock: a rated game without one could be
    held for ever by a player who stops moving, their rating safe (lichess rates no game without a clock)."""
    on_time = data.get("on_time")
    if on_time not in (None, "", "lose"):
        raise GameError(
            "bad_clock",
            "in a game with a stranger running out of time loses: 'on_time' is \"lose\" or left out",
            422,
        )
    chosen = service.clock_from_request(data.get("clock"), None, rated=rated)
    if chosen is None and rated:
        raise GameError(
            "clock_needed",
            f"a rated game is played with a clock: 'clock' is one of {', '.join(service.time_controls)}",
            422,
        )
    return None if chosen is None else chosen[0].id


def _seeds(rules: RuleSet) -> tuple[int, int, int]:
    """A fresh deal's secret seed, the (unused, two people play) computer's seed, and the seat that moves
    first (whose clock runs first)."""
    seed, first = playable_seed(rules, None)
    return seed, random.SystemRandom().getrandbits(62), first
