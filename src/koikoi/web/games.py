"""The games being played, one owner for them all in a process (:class:`GameService`): it holds each game
in memory (:class:`~koikoi.web.livegame.LiveGame`), creates and joins games, reads a game from the
database and rebuilds it from its seed and stored actions (after a restart), keeps it in step with the
other processes on the database, builds what each seat and each spectator may see, and sends idle
games back to the database. The jobs of a table are units of their own, which the owner calls and
which call it back:

- :class:`~koikoi.web.mover.Mover`: a move checked, stored, applied and told (the hot path);
- :class:`~koikoi.web.gameclocks.GameClocks`: the flags at the deadlines, the clocks' sweep;
- :class:`~koikoi.web.finisher.Finisher`: resignations, aborts and claims;
- :class:`~koikoi.web.rematches.Rematches`;
- :class:`~koikoi.web.attendance.Attendance`: who is at the table;
- :class:`~koikoi.web.computer.ComputerPlayer`: the computer's turns, and hints.

Every move, the computer's too, is stored before it is applied, so a restart never loses or repeats one.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import random
import re
import time
import unicodedata
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..ai import AGENT_ALIASES, AGENT_NAMES
from ..ai.registry import lobby_levels
from ..clocks import TIME_CONTROLS, ClockError, TimeControl, time_control
from ..match import Match
from ..records import GameRecord
from ..rules import PRESETS, RULES_VERSION, RuleError, RuleSet
from .attendance import Attendance
from .botstore import bot_seats
from .botview import protocol_view
from .computer import HINT_PLAYOUTS, ComputerPlayer
from .database import Database, Unavailable
from .errors import GameError
from .fanout import Listener
from .finisher import Finisher
from .gameclocks import GameClocks
from .limits import Limits
from .livegame import Extras, LiveGame, movers_of
from .mover import Mover
from .movewriter import MoveWriter
from .rematches import Rematches, playable_seed
from .rulelabels import rules_shown
from .shown import odd_character
from .store import (
    NO_RESULT,
    STATUSES,
    Invitation,
    ListedGame,
    Store,
    StoredGame,
    StoredSeat,
    StoreError,
    new_token,
    result_for,
)
from .tablestore import ON_TIME, TableStore
from .views import seat_view, spectator_view
from .workers import ThinkPool

__all__ = ["GameService", "GameError", "LiveGame", "Unavailable", "OPPONENTS", "HINT_PLAYOUTS", "playable_seed"]

log = logging.getLogger("koikoi.web")

OPPONENTS = ("friend", *lobby_levels())  # for new games; a stored one against any level of koikoi.ai loads
# Every SWEEP_SECONDS a process checks its games against the database, in case a notification was lost.
SWEEP_SECONDS = 2.0
MAX_NAME = 40
_TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{8,64}")


def _level_problem(opponent: str) -> str | None:
    """Why a stored game's opponent is not one this server can play (None: "friend" or a known level)."""
    key = opponent.strip().lower()
    if opponent == "friend" or AGENT_ALIASES.get(key, key) in AGENT_NAMES:
        return None
    return f"its computer level {opponent!r} is not one this server has ({', '.join(AGENT_NAMES)})"


def _result(game: StoredGame, seat: int) -> str | None:
    """How a finished game went for ``seat``: "won", "lost" or "draw"; None while it is not over, or for a
    match that ended early with no winner (an aborted one)."""
    scores = (game.scores[0], game.scores[1])
    return result_for(game.status, game.ending, game.winner, scores, seat)


def _listed_broken(seat: StoredSeat, other_name: str, problem: str, updated: datetime | None) -> dict[str, Any]:
    """A lobby's entry for a game whose stored data cannot be read (or is not there)."""
    return {
        "game_id": seat.game_id,
        "token": seat.token,
        "seat": seat.seat,
        "status": "broken",
        "problem": problem,
        "opponent": "",
        "opponent_name": other_name,
        "rules": "",
        "rules_label": None,
        "hands": None,
        "target_score": None,
        "scores": [0, 0],
        "result": None,
        "moves": 0,
        "updated": "" if updated is None else updated.isoformat(),
    }


def clean_name(name: object, default: str) -> str:
    """A player's name as typed: text of at most ``MAX_NAME`` characters, no control characters."""
    if name is None or name == "":
        return default
    if not isinstance(name, str):
        raise GameError("bad_name", "a name must be text", 422)
    if len(name) > 4 * MAX_NAME:
        raise GameError("bad_name", f"a name has at most {MAX_NAME} characters, not {len(name)}", 422)
    for ch in name:
        cat = unicodedata.category(ch)
        if cat == "Cs":
            raise GameError("bad_name", "a name must be valid Unicode text (it holds a lone surrogate)", 422)
        if cat in ("Cc", "Cf", "Co", "Cn") and ch not in " \t":
            raise GameError("bad_name", f"a name cannot hold the control or unassigned character U+{ord(ch):04X}", 422)
    name = " ".join(name.split())
    if not name:
        return default
    if len(name) > MAX_NAME:
        raise GameError("bad_name", f"a name has at most {MAX_NAME} characters, not {len(name)}", 422)
    odd = odd_character(name)
    if odd is not None:
        raise GameError("bad_name", f"a name cannot hold {odd}: it would fool the other players", 422)
    return name


def rules_from_request(data: Any) -> RuleSet:
    """A rule set from the lobby's form: ``{"preset": name, "options": {option: value}}``."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise GameError("bad_rules", "rules must be an object with a preset and options", 422)
    name = data.get("preset", "nintendo")
    if not isinstance(name, str):
        raise GameError("bad_rules", f"rules.preset must be a preset's name (text): one of {', '.join(PRESETS)}", 422)
    if name not in PRESETS:
        raise GameError("bad_rules", f"unknown rule preset {name[:40]!r}; choose from {', '.join(PRESETS)}", 422)
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise GameError("bad_rules", "rules.options must be an object of option: value", 422)
    for k, v in options.items():
        if not isinstance(v, (bool, int, str)):  # a list or an object is no option's value
            shown = k[:40]
            raise GameError(
                "bad_rules", f"rules.options.{shown} takes a number, true/false or text, not {v!r:.40}", 422
            )
    try:
        rules = PRESETS[name]
        if options:
            changes = {k: v for k, v in options.items() if k != "name"}
            for k, v in changes.items():
                # JSON has no distinct int and bool, and True would pass for 1: refuse the mix-up.
                current = getattr(rules, k.replace("-", "_"), None)
                if isinstance(current, bool) != isinstance(v, bool):
                    kind = "true or false" if isinstance(current, bool) else type(current).__name__
                    raise RuleError(f"option {k} takes {kind}, not {v!r}")
            rules = rules.replace(**{k.replace("-", "_"): v for k, v in changes.items()})
            if rules != PRESETS[name]:
                rules = rules.replace(name=f"{name} (custom)" if not name.endswith("(custom)") else name)
    except (RuleError, TypeError, ValueError) as e:
        raise GameError("bad_rules", str(e), 422) from None
    return rules


def _extras_of(table: TableStore, stored: StoredGame) -> Extras:
    clock = table.clock_of(stored.id)
    live = clock is not None and clock.control.real_time
    presence = table.presence_of(stored.id, time.time()) if live else None
    # Only a game between two people can be rated: a game against the computer costs no query.
    rated = table.rated_category(stored.id) if stored.opponent == "friend" else None
    rating = table.rating_change(stored.id) if rated is not None and stored.status == "finished" else None
    return Extras(stored, clock, presence, rated, rating)


def _read_extras(store: Store, table: TableStore, game_id: str) -> Extras | None:
    stored = store.game(game_id)
    return None if stored is None else _extras_of(table, stored)


@dataclass
class _StoredParts:
    """What loading a game reads from the database, in one trip to a database thread."""

    stored: StoredGame | None
    seats: list[StoredSeat]
    note: tuple[int, str | None, datetime] | None
    invitation: Invitation | None
    actions: list[tuple[int, int]]
    extras: Extras | None = None
    bots: frozenset[int] = frozenset()


def _read_game(store: Store, game_id: str, table: TableStore | None = None) -> _StoredParts:
    with store.one_trip():
        return _read_parts(store, game_id, table)


def _read_parts(store: Store, game_id: str, table: TableStore | None) -> _StoredParts:
    stored = store.game(game_id)
    if stored is None or stored.status == "broken":
        return _StoredParts(stored, [], None, None, [])
    seats = store.seats_of(game_id)
    note = store.computer_turn(game_id)
    invitation = store.invitation_of(game_id) if stored.opponent == "friend" else None
    extras = None if table is None else _extras_of(table, stored)
    bots = bot_seats(store, [s.owner for s in seats]) if stored.opponent == "friend" else frozenset()
    return _StoredParts(
        stored, seats, note, invitation, store.actions_of(game_id, until=stored.moves), extras=extras, bots=bots
    )


def _read_news(store: Store, game_id: str, since: int) -> tuple[tuple[Any, Any] | None, list[tuple[int, int]]]:
    """A game's stored (moves, status), and its actions from ``since`` on when there are new ones."""
    progress = store.progress_of([game_id]).get(game_id)
    if progress is None or type(progress[0]) is not int or progress[0] <= since:
        return progress, []
    return progress, store.actions_of(game_id, since=since, until=progress[0])


class GameService:
    """All games of one server. Use from the event loop only; :meth:`start` before, :meth:`close` after.

    The event loop never waits on the database: every call to the store goes through :attr:`db`, which
    runs it on a thread of its own and gives up after ``limits.database_seconds`` (``unavailable``)."""

    def __init__(
        self,
        store: Store,
        *,
        limits: Limits | None = None,
        ai_options: dict[str, dict[str, Any]] | None = None,
        ai_delay: float = 0.0,
    ) -> None:
        self.store = store
        self.table = TableStore(store)
        self.limits = limits or Limits()
        self.db = Database(store, wait=self.limits.database_seconds)
        self.writer = MoveWriter(self.db, store)  # the moves, several games' in one commit under load
        # The clock's calls (signs of life, the due games, endings on time) are few, small and due at a
        # moment: on PostgreSQL they have a thread of their own, so that a flag never waits in the queue of
        # moves and catch-ups (under load, hundreds of milliseconds). SQLite has one writer: one queue.
        self.clock_db = self.db if store.is_sqlite else Database(store, wait=self.limits.database_seconds, threads=1)
        self.live: dict[str, LiveGame] = {}
        self.ai_options = ai_options or {}
        self.ai_delay = ai_delay  # a pause before the computer's move, so a person can follow it
        self.pool = ThinkPool(self.limits.ai_processes, hints_pending=self.limits.hints_pending)
        self.seats: dict[str, StoredSeat] = {}  # token -> seat, for the games in memory
        self._loading: dict[str, asyncio.Task[LiveGame]] = {}  # games being read from the database
        self.closing = False
        self._sweeper: asyncio.Task[None] | None = None
        self._syncer: asyncio.Task[None] | None = None
        self._clocker: asyncio.Task[None] | None = None
        self.flags = 0  # games this process ended on time, for /api/health
        self.time_controls: tuple[str, ...] = TIME_CONTROLS  # what players may choose from
        self._tasks: set[asyncio.Task[Any]] = set()  # fire-and-forget work, kept until it ends
        # This process among the others on the same database: the owner of its claims on computer moves.
        self.process_id = new_token(12)
        # On PostgreSQL, other server processes may share the database: listen for their moves.
        self.listener: Listener | None = (
            None if store.is_sqlite else Listener(store.url, self.on_change, self.on_connect)
        )
        self._refreshing: dict[str, bool] = {}  # games being caught up -> news came meanwhile
        self.computer_moves = 0  # computer moves this process has taken on (claimed), for /api/health
        self.thinking = 0  # games whose computer is taking its turns in this process now, for /api/health
        self.actions = 0  # moves this process has stored, for /api/health
        # The jobs of a table, each a unit of its own that this owner calls (and that calls it back).
        self.mover = Mover(self)  # a move checked, stored, applied and told: the hot path
        self.clocks = GameClocks(self)  # flags at the deadlines, the clocks' sweep
        self.finisher = Finisher(self)  # resignations, aborts, claims
        self.rematches = Rematches(self)
        self.attendance = Attendance(self)  # who is at the table (clocked games)
        self.computer = ComputerPlayer(self)  # the computer's turns, and hints

    async def start(self) -> int:
        """Start the workers and the computer in every game that waits for it; returns how many."""
        await self.pool.start()
        # A sign of life before any game is read: if the server (or every server) was down, the deadlines
        # are moved on by the outage first (koikoi.web.tablestore), so that nobody is flagged for it; a
        # starting process knows it was not serving, so a restart's gap counts however short it was.
        gap = await self.clock_db(self.table.beat, self.process_id, time.time(), starting=True)
        if gap:
            log.warning("no server process was serving for %.1f s: every running clock moved on by it", gap)
        loop = asyncio.get_running_loop()
        self._sweeper = loop.create_task(self._sweep_forever())
        self._syncer = loop.create_task(self._sync_forever())
        self._clocker = loop.create_task(self.clocks.run())
        if self.listener is not None:
            self.listener.start()
        return await self.computer.resume()

    def spawn(self, work: Awaitable[Any]) -> None:
        """Run ``work`` in the background, keeping a reference until it ends."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- other processes ----------------------------------------------------------------------------------

    def on_change(self, game_id: str, moves: int) -> None:
        """A game changed in the database (a notification): catch up if this process holds it."""
        game = self.live.get(game_id)
        # Not here, or our own move: stored, or being stored (its notification can come before the
        # database thread's answer does).
        if game is None or (moves > 0 and moves in (game.moves, game.writing)):
            return
        if moves < 0:
            game.extras_stale = True
        if self._idle(game):
            # Nobody here watches it (its sockets are on the process that owns it): drop this copy rather
            # than replay every move of it; whoever asks for it next reads it afresh.
            self._forget(game)
            return
        self.refresh_soon(game)

    def on_connect(self) -> None:
        """The listener (re)connected: notifications may have been missed, so check every game here."""
        for game in list(self.live.values()):
            self.refresh_soon(game)

    def refresh_soon(self, game: LiveGame) -> None:
        gid = game.stored.id
        if self.closing:
            return
        if gid in self._refreshing:  # one refresh at a time per game: the running one goes round again
            self._refreshing[gid] = True
            return
        self._refreshing[gid] = False

        async def run() -> None:
            try:
                while True:
                    await self.refresh(game)
                    if not self._refreshing.get(gid):
                        break
                    self._refreshing[gid] = False  # news came during the refresh: read again
            except Unavailable as e:  # the next sweep, or the listener's reconnection, tries again
                log.warning("could not catch up with game %s: %s", gid, e.message)
            except Exception:
                log.exception("could not catch up with game %s", gid)
            finally:
                self._refreshing.pop(gid, None)

        self.spawn(run())

    async def _sync_forever(self) -> None:
        away = False
        while not self.closing:
            await asyncio.sleep(SWEEP_SECONDS)
            try:
                await self.sweep()
                if away:
                    log.warning("the database answers again")
                away = False
            except Unavailable as e:  # the database is away for a moment: the next sweep tries again
                if not away:
                    log.warning("the sweep could not reach the database: %s", e.message)
                away = True
            except Exception:
                log.exception("the sweep failed")

    async def sweep(self) -> None:
        """Computer moves that no process is making (its thinker died, or it was never started), and,
        with other processes on the database, this process's watched games against the database."""
        for gid in await self.db(self.store.computer_turns_due):
            try:
                await self._sweep_one(gid)
            except Unavailable:
                raise  # the database is away: the next sweep tries again
            except Exception:  # a bug this game brings out must not keep the sweep from the others
                log.exception("the sweep could not look at game %s", gid)
        # Games whose last write was cut short by the database (in doubt, then failed): caught up now.
        for g in [g for g in self.live.values() if g.needs_sync and g.in_doubt is None]:
            self.refresh_soon(g)
        if self.listener is None:
            return
        watched = [g for g in self.live.values() if g.listeners[0] or g.listeners[1] or g.spectators]
        if not watched:
            return
        progress = await self.db(self.store.progress_of, [g.stored.id for g in watched])
        for g in watched:
            if progress.get(g.stored.id, (g.moves, g.status)) != (g.moves, g.status):
                self.refresh_soon(g)

    async def _sweep_one(self, gid: str) -> None:
        try:
            game = await self.load(gid)
        except GameError as e:
            if e.code in ("no_game", "broken"):  # nobody will make this move: forget it, or it comes back
                await self.db(self.store.drop_computer_turn, gid, claimed_too=True)
                return
            raise
        await self.refresh(game)
        if self.computer.waiting(game):
            self.schedule_ai(game)
        elif (game.ai_task is None or game.ai_task.done()) and game.in_doubt is None:
            await self.db(self.store.drop_computer_turn, gid)  # a stale note: the computer is not to move

    # -- creating and joining ---------------------------------------------------------------------------

    def clock_from_request(self, control: Any, on_time: Any, *, rated: bool) -> tuple[TimeControl, str] | None:
        """The time control a player chose (None, "" or "none": no clock) and what running out does."""
        if control is None or control in ("", "none"):
            return None
        if control not in self.time_controls:
            shown = f"{control[:20]!r}" if isinstance(control, str) else f"of type {type(control).__name__}"
            raise GameError(
                "bad_clock", f"unknown time control {shown}: choose none or one of {', '.join(self.time_controls)}", 422
            )
        try:
            tc = time_control(control)
        except ClockError as e:  # pragma: no cover - the offered controls are checked when the server starts
            raise GameError("bad_clock", str(e), 422) from None
        if on_time is None or on_time == "":
            on_time = "lose"
        if on_time not in ON_TIME:
            raise GameError("bad_clock", f"when time runs out the player can {' or '.join(ON_TIME)}, nothing else", 422)
        if on_time == "computer" and rated:
            raise GameError(
                "bad_clock", "in a rated game running out of time loses: the computer cannot move for you", 422
            )
        return tc, on_time

    async def create(
        self,
        *,
        owner: str,
        name: Any,
        opponent: Any,
        rules: Any,
        birth_months: Any = None,
        clock: Any = None,
        on_time: Any = None,
        private: Any = False,
    ) -> dict[str, Any]:
        if not isinstance(private, bool):
            raise GameError("bad_private", "'private' is true (nobody may watch the game) or false", 422)
        if not isinstance(opponent, str) or opponent not in OPPONENTS:
            shown = f"{opponent[:40]!r}" if isinstance(opponent, str) else f"of type {type(opponent).__name__}"
            raise GameError(
                "bad_opponent", f"unknown opponent {shown}: 'opponent' is one of {', '.join(OPPONENTS)}", 422
            )
        rule_set = rules_from_request(rules)
        time_control_ = self.clock_from_request(clock, on_time, rated=False)
        if time_control_ is not None and opponent != "friend":
            raise GameError("bad_clock", "a game against the computer has no clock: choose none", 422)
        you = clean_name(name, "Player")
        months = None
        if rule_set.dealer_selection == "birth_month":
            if (
                not isinstance(birth_months, list)
                or len(birth_months) != 2
                or not all(type(m) is int and 1 <= m <= 12 for m in birth_months)
            ):
                raise GameError(
                    "bad_birth_months",
                    "these rules choose the first dealer by birth month: give "
                    "both players' birth months, two numbers 1..12",
                    422,
                )
            months = (birth_months[0], birth_months[1])
        if await self.db(self.store.open_games_of, owner) >= self.limits.open_games_per_browser:
            raise GameError(
                "too_many_games",
                f"you have {self.limits.open_games_per_browser} unfinished games "
                "(the most this server allows): finish or leave one first",
                429,
            )
        seed, first = playable_seed(rule_set, months)
        ai_seed = random.SystemRandom().getrandbits(62)
        if opponent == "friend":
            specs = [(0, "human", you, owner), (1, "human", "Friend", None)]
            status = "waiting"
        else:
            specs = [(0, "human", you, owner), (1, "ai", opponent.capitalize(), None)]
            status = "playing"
        game_id, tokens, invite = await self.db(
            self.store.create_game,
            rules=rule_set.to_dict(),
            # a game stored by an older engine goes on under the rulings it was started with
            rules_version=RULES_VERSION,
            seed=seed,
            opponent=opponent,
            ai_seed=ai_seed,
            status=status,
            seat_specs=specs,
            birth_months=months,
            invite_seat=1 if opponent == "friend" else None,
            # The computer's first move is noted with the game, so that any process makes it should this
            # one stop before it claims the move (docs/web.md, "Who plays the computer's moves").
            computer_first=opponent != "friend" and first == 1,
            clock=None if time_control_ is None else (*time_control_, first),
            private=private,
        )
        out = {"game_id": game_id, "token": tokens[0], "status": status}
        if invite is not None:
            out["invite_token"] = invite
        else:
            try:
                self.schedule_ai(await self.load(game_id))
            except Unavailable:  # stored: the sweep starts the computer once the database answers
                pass
        return out

    async def invitation(self, invite_token: Any, owner: str) -> tuple[str | None, LiveGame]:
        """The game an invitation is for, and the seat token of ``owner`` if they already took the seat."""
        if not isinstance(invite_token, str) or not _TOKEN_RE.fullmatch(invite_token):
            raise GameError("bad_invite", "no game has this invitation", 404)
        try:
            inv = await self.db(self.store.invitation, invite_token)
            seat = None if inv is not None else await self.db(self.store.seat, invite_token)
        except StoreError as e:  # the invitation (or seat) cannot be read: its game is broken
            raise await self._damaged(e) from None
        if inv is None:
            # a game made before invitations had tokens of their own: the invitation is the seat's token
            if seat is None or seat.kind != "human" or seat.owner is not None:
                raise GameError("bad_invite", "no game has this invitation", 404)
            return None, await self.load(seat.game_id)
        game = await self.load(inv.game_id)
        if inv.spent is None and game.status == "finished":  # nobody took it in time: the server ended it
            raise GameError("invite_expired", "this invitation has expired: nobody took it in time", 410)
        if inv.spent is None:
            return None, game
        taken = next(s for s in game.seats if s.seat == inv.seat)
        if taken.owner == owner:
            return taken.token, game
        raise GameError("invite_used", "this invitation has been used: the seat is taken", 410)

    async def join(self, invite_token: Any, *, owner: str, name: Any) -> dict[str, Any]:
        """Take the invited seat: a fresh seat token, given to the one who joins and nobody else."""
        mine, game = await self.invitation(invite_token, owner)
        if mine is not None:  # they joined already (a second click, a reload): their own seat again
            return {"game_id": game.stored.id, "token": mine}
        for s in game.seats:
            if s.owner == owner:
                raise GameError("own_game", "you cannot play against yourself: send the link to a friend", 409)
        you = clean_name(name, "Friend")
        try:
            token = await self.db(self.store.join, invite_token, owner, you, first=game.match.current_player)
        except StoreError as e:
            now = await self.db(self.store.game, game.stored.id)
            if now is not None and now.status == "finished":  # the server's sweep ended it first
                game.extras_stale = True
                self.refresh_soon(game)
                raise GameError("invite_expired", "this invitation has expired: nobody took it in time", 410) from None
            raise GameError("invite_used", f"this invitation has been used: {e}", 410) from None
        seats = await self.db(self.store.seats_of, game.stored.id)
        game.invite = None
        game.status = "playing"
        game.seats = seats
        self.remember_seats(game)
        if game.clock is not None:  # it started with the friend
            game.clock = await self.db(self.table.clock_of, game.stored.id)
            self.arm(game)
        self.spawn(self.broadcast(game))
        return {"game_id": game.stored.id, "token": token}

    # -- loading ------------------------------------------------------------------------------------------

    async def _seat(self, token: Any, game_id: Any = None, *, hello: bool = False) -> StoredSeat:
        """The seat of ``token``. ``game_id``, where the page names its game (its socket's ``?game=``): the
        game is read (or found in memory) and the seat found among its own, with no lookup of the token of
        its own; a wrong name falls back to the lookup. ``hello``: for a socket that has just opened, the
        reads wait their turn behind the moves of the games being played (:meth:`Database.queued`)."""
        if not isinstance(token, str) or not _TOKEN_RE.fullmatch(token):
            raise GameError("bad_token", "no game has this link", 404)
        seat = self.seats.get(token)
        if seat is not None and seat.game_id in self.live:
            return seat
        if isinstance(game_id, str) and _TOKEN_RE.fullmatch(game_id):
            try:
                game = await self.load(game_id, hello=hello)
            except Unavailable:
                raise
            except GameError:
                game = None  # not the game it says (or a broken one): the token says which it is
            for s in game.seats if game is not None else ():
                if hmac.compare_digest(s.token, token):
                    return s
        try:
            if hello:
                seat = await self.db.queued(self.store.seat, token)
            else:
                seat = await self.db(self.store.seat, token)
        except StoreError as e:  # the seat cannot be read: its game is broken
            raise await self._damaged(e) from None
        if seat is None:
            raise GameError("bad_token", "no game has this link", 404)
        return seat

    async def load(self, game_id: str, *, hello: bool = False) -> LiveGame:
        """The game in memory, or read from the database and rebuilt. A game whose stored data cannot
        be read, or does not hold together, is marked broken with the reason (409 ``broken``), and never
        stops anything else: what is read is checked here once, and then trusted while it is in memory.
        Several requests for a game that is being read wait for the same reading."""
        readings = 0
        while True:
            game = self.live.get(game_id)
            if game is not None:
                if game.status == "broken":  # found damaged while in memory (its socket was told)
                    problem = await self.db(self.store.problem_of, game_id)
                    raise GameError("broken", f"this game cannot be played on: {problem or ''}", 409)
                game.last_used = time.monotonic()
                return game
            loading = self._loading.get(game_id)
            if loading is None:
                loading = asyncio.get_running_loop().create_task(self._load(game_id, hello=hello))
                self._loading[game_id] = loading
                loading.add_done_callback(lambda _t: self._loading.pop(game_id, None))
            loaded = await asyncio.shield(loading)
            readings += 1
            # Between the reading's end and this caller's turn, another process's news may have found the
            # new copy idle (no socket on it yet) and dropped it from memory (on_change): a socket given
            # that copy would listen to a game nobody here keeps up to date, and hear nothing more. The
            # copy in memory now, or a new reading (three at most).
            if self.live.get(game_id) is loaded or readings == 3:
                return loaded

    def _hearing(self) -> int:
        """The listener's connection number while it is connected (0 when not): a copy read while it was
        connected has heard every change since, until it reconnects."""
        return self.listener.connections if self.listener is not None and self.listener.connected else 0

    async def _load(self, game_id: str, *, hello: bool = False) -> LiveGame:
        heard = self._hearing()  # before reading: a change after the read is then heard
        try:
            if hello:  # a socket's first table: after the moves of the games being played
                parts = await self.db.queued(_read_game, self.store, game_id, self.table)
            else:
                parts = await self.db(_read_game, self.store, game_id, self.table)
            stored = parts.stored
            if stored is None:
                raise GameError("no_game", f"no game {game_id}", 404)
            if stored.status == "broken":
                problem = await self.db(self.store.problem_of, game_id)
                raise GameError("broken", f"this game cannot be played on: {problem or ''}", 409)
            self._check_stored(stored, parts.seats, parts.note)
            match = self._rebuild(stored, parts.actions)
            self._check_match(stored, match)
            invite = self._invite_of(stored, parts.seats, parts.invitation)
        except GameError:
            raise  # a game that is not there, or a database that is away (Unavailable)
        except StoreError as e:
            problem = await self.db(self.store.problem_of, game_id)
            if problem is not None:  # marked broken already (a value that cannot be read stays so)
                raise GameError("broken", f"this game cannot be played on: {problem}", 409) from None
            raise await self._damaged(e) from None
        except Exception as e:  # anything the engine cannot rebuild: this game is broken, no other
            raise await self.broken(game_id, f"{type(e).__name__}: {e}") from None
        game = LiveGame(stored=stored, seats=parts.seats, match=match, moves=stored.moves, status=stored.status)
        game.invite = invite
        game.heard = heard
        if parts.extras is not None:
            game.take_extras(parts.extras)
        game.movers = movers_of(parts.actions)
        game.bots = parts.bots  # seats are numbered as listed (checked above)
        self.live[game_id] = game
        self.arm(game)  # once it is the game in memory (_arm sets no flag on a copy that is not)
        self.remember_seats(game)
        if len(self.live) > self.limits.live_games:
            self.evict(keep=game_id)
        return game

    def _check_stored(
        self, stored: StoredGame, seats: list[StoredSeat], note: tuple[int, str | None, datetime] | None
    ) -> None:
        """:class:`StoreError` when a game's row and its seats do not make a game this server can play
        (each value was checked on reading, by :mod:`.store`; here, what they say together)."""
        problem = self._stored_problem(stored, seats, note)
        if problem is not None:
            raise StoreError(f"game {stored.id}: {problem}", game_id=stored.id)

    def _stored_problem(
        self, stored: StoredGame, seats: list[StoredSeat], note: tuple[int, str | None, datetime] | None
    ) -> str | None:
        level = _level_problem(stored.opponent)
        if level is not None:
            return level
        numbers = [s.seat for s in seats]
        kinds = [s.kind for s in seats]
        if numbers != [0, 1]:
            return f"its stored seats are numbered {numbers}, not 0 and 1"
        if stored.opponent == "friend" and kinds != ["human", "human"]:
            return "it is a game between two players, but a seat is stored as the computer's"
        if stored.opponent != "friend" and sorted(kinds) != ["ai", "human"]:
            return f"it is a game against the computer, but its seats are stored as {' and '.join(kinds)}"
        if any(not _TOKEN_RE.fullmatch(s.token) for s in seats):
            return "a seat's stored link is not one this server makes"
        if stored.status == "waiting" and stored.opponent != "friend":
            return "it waits for a friend, but it is a game against the computer"
        if stored.status == "waiting" and stored.moves:
            return f"it waits for the friend, but {stored.moves} moves are stored"
        if note is not None and (stored.opponent == "friend" or note[0] < stored.moves):
            return f"its stored computer move {note[0]} is not one to make (the game is at move {stored.moves})"
        return None

    def _check_match(self, stored: StoredGame, match: Match) -> None:
        """:class:`StoreError` when a game's stored status or scores are not what its moves make."""
        over = match.is_over()
        problem = None
        if stored.ending is not None and over:
            problem = f"it is stored as ended by {stored.ending}, but its {stored.moves} moves end it anyway"
        elif stored.status == "finished" and not over and stored.ending is None:
            problem = f"it is stored as finished, but its {stored.moves} moves do not end it"
        elif stored.status in ("waiting", "playing") and over:
            problem = f"its {stored.moves} moves end it, but it is stored as {stored.status}"
        elif stored.scores != tuple(match.scores) and (stored.moves or stored.scores != (0, 0)):
            problem = f"its stored scores {list(stored.scores)} are not those its moves make ({list(match.scores)})"
        if problem is not None:
            raise StoreError(f"game {stored.id}: {problem}", game_id=stored.id)

    def _invite_of(self, stored: StoredGame, seats: list[StoredSeat], inv: Invitation | None) -> str | None:
        """The invitation token to show a friend game's host while it waits; checks the invitation."""
        if stored.opponent != "friend":
            return None
        if inv is None:  # made before invitations had tokens of their own: the empty seat's token
            if stored.status != "waiting":
                return None
            return next((s.token for s in seats if s.kind == "human" and s.owner is None), None)
        if inv.spent is not None and stored.status == "waiting":
            raise StoreError(
                f"game {stored.id}: its invitation is stored as used, but the game waits for the friend",
                game_id=stored.id,
            )
        return inv.token if stored.status == "waiting" else None

    def _rebuild(self, stored: StoredGame, actions: list[tuple[int, int]]) -> Match:
        """The match of a stored game, from its seed and its first ``stored.moves`` actions."""
        match = Match(
            RuleSet.from_dict(stored.rules),
            seed=stored.seed,
            birth_months=stored.birth_months,
            version=stored.rules_version,
        )
        for n, (seat, action) in enumerate(actions):
            if not match.is_over() and seat != match.current_player:
                raise ValueError(f"stored move {n} is by seat {seat}, but seat {match.current_player} was to move")
            try:
                match.apply_action(action)
            except Exception as e:
                # The engine's message lists the legal actions, the cards of the player to move: it goes to
                # the server's log only, never into the reason both players are shown.
                log.error("game %s: stored move %d (%s) cannot be played: %s", stored.id, n, action, e)
                raise ValueError(f"stored move {n} ({action}) is not a legal move there") from None
        if len(match.actions) != stored.moves:
            raise ValueError(f"{len(match.actions)} moves are stored, but the game says {stored.moves}")
        return match

    async def sync(self, game: LiveGame) -> bool:
        """Bring this process's copy of ``game`` up to the database, where another server process may
        have moved or a friend may have joined; True if anything changed. The caller holds ``game.lock``,
        so no move of this process can come in between. Stored data that cannot be read marks the game
        broken; a database that does not answer raises :class:`Unavailable` and changes nothing."""
        heard = self._hearing()
        try:
            changed = await self._sync_checked(game)
            game.needs_sync = False
            game.heard = heard
            return changed
        except Unavailable:
            raise  # the database is away: not this game's fault
        except StoreError as e:
            await self._damaged(e)
        except Exception as e:
            await self.broken(game.stored.id, f"{type(e).__name__}: {e}")
        game.status = "broken"
        game.needs_sync = False
        return True

    async def _sync_checked(self, game: LiveGame) -> bool:
        """Read everything that changed in the database first, then change this copy at once. A socket's
        first table is sent without the game's lock, so it may be sent while this reads: it then shows
        the copy before the change or after it, never half of each (such as a game finished by a claim
        on another process, shown finished without its ending)."""
        gid = game.stored.id
        progress, news = await self.db(_read_news, self.store, gid, game.moves)
        moved = progress is not None and progress != (game.moves, game.status)
        if not moved and not game.extras_stale:
            return False
        game.extras_stale = False  # news that comes while this reads marks it again
        seats: list[StoredSeat] | None = None
        match: Match | None = None
        movers: set[int] = set()
        moves, status = game.moves, game.status
        if moved:
            assert progress is not None
            moves, status = progress
            if type(moves) is not int or status not in STATUSES:
                fresh = await self.db(self.store.game, gid)  # raises StoreError, naming what cannot be read
                if fresh is None:
                    return False
                moves, status = fresh.moves, fresh.status
                news = []
            if status == "broken":
                game.status = "broken"
                return True
            if game.status == "waiting" and status != "waiting":  # the friend took the seat elsewhere
                seats = await self.db(self.store.seats_of, gid)
            if moves > game.moves and len(news) == moves - game.moves:
                match, movers = game.match.clone(), set(game.movers)
                try:
                    for seat, action in news:
                        match.apply_action(action)
                        movers.add(seat)
                except Exception:  # our copy and the database disagree: the database is right
                    match = None
            if match is None and moves != game.moves:
                parts = await self.db(_read_game, self.store, gid)
                stored = parts.stored
                if stored is None:
                    return False
                match = self._rebuild(stored, parts.actions)
                self._check_match(stored, match)
                movers = movers_of(parts.actions)
                moves, status = stored.moves, stored.status
        extras = await self.db(_read_extras, self.store, self.table, gid)
        # From here on nothing waits: the copy changes all at once.
        if seats is not None:
            game.seats = seats
            game.invite = None
            self.remember_seats(game)
        if match is not None:
            game.match, game.movers = match, movers
        game.moves, game.status = moves, status
        if extras is not None:
            game.take_extras(extras)
            game.status = extras.stored.status
        game.last_used = time.monotonic()
        self.arm(game)
        return True

    async def catch_up(self, game: LiveGame) -> None:
        """Where other processes share the database (or a write of this one was cut short): :meth:`refresh`
        before answering a player, unless the listener has heard every change since this copy was last
        read (it is connected, and has not reconnected since). A database that does not answer leaves the
        table as it is here."""
        listening = self.listener is not None and self.listener.connected
        if listening and game.heard == self._hearing() and not game.needs_sync:
            return
        if self.listener is not None or game.needs_sync:
            try:
                await self.refresh(game)
            except Unavailable:
                pass

    async def refresh(self, game: LiveGame) -> None:
        """:meth:`_sync`, then tell both seats and let the computer move if it is its turn."""
        async with game.lock:
            if game.in_doubt is not None:
                return  # its write settles first, and tells the seats itself
            changed = await self.sync(game)
        if changed:
            await self.broadcast(game)
            self.schedule_ai(game)

    async def broken(self, game_id: str, reason: str) -> GameError:
        log.error("game %s is broken: %s", game_id, reason)
        try:
            await self.db(self.store.mark_broken, game_id, reason)
        except Exception:  # the database itself is in trouble: say so, but do not fail differently
            log.exception("could not mark game %s as broken", game_id)
        game = self.live.get(game_id)
        if game is not None:
            game.status = "broken"
        return GameError("broken", f"this game cannot be played on: {reason}", 409)

    async def _damaged(self, e: StoreError) -> GameError:
        """A game whose stored data cannot be read (``e`` says where): marked broken, when it is known."""
        if e.game_id is None:
            log.error("stored data that cannot be read: %s", e)
            return GameError("broken", f"this game cannot be played on: {e}", 409)
        return await self.broken(e.game_id, str(e))

    def remember_seats(self, game: LiveGame) -> None:
        for s in game.seats:
            self.seats[s.token] = s

    async def seat_game(self, token: Any, game_id: Any = None, *, hello: bool = False) -> tuple[StoredSeat, LiveGame]:
        """The seat of ``token`` and its game. ``game_id`` and ``hello``: see :meth:`_seat`."""
        seat = await self._seat(token, game_id, hello=hello)
        try:
            game = await self.load(seat.game_id, hello=hello)
        except GameError as e:
            if e.code != "no_game":
                raise
            # A seat whose game is gone (its row removed, or its id changed, by hand): damage.
            log.error("game %s of a stored seat is missing from the database", seat.game_id)
            raise GameError("broken", "this game cannot be played on: it is missing from the database", 409) from None
        if seat.kind != "human":
            raise GameError("bad_token", "no game has this link", 404)
        return seat, game

    def spectator_view(self, game: LiveGame) -> dict[str, Any]:
        """What anyone watching may see (:func:`koikoi.web.views.spectator_view`): both hands as counts, and
        the public extras (:meth:`public_extras`: both clocks, the ending, who is away), never a seat's own."""
        v = spectator_view(game.match, seq=game.moves, players=game.players(), status=game.status)
        v["game_id"] = game.stored.id
        v["opponent"] = game.stored.opponent
        v.update(self.public_extras(game))
        if game.ending is not None:  # ended before its last hand (time, resign, claim...): over
            v["match_over"], v["match_winner"] = True, game.winner
        return v

    def view(self, game: LiveGame, seat: int) -> dict[str, Any]:
        v = seat_view(
            game.match, seat, seq=game.moves, players=game.players(), status=game.status, hints=game.ai_seat is not None
        )
        v["game_id"] = game.stored.id
        v["opponent"] = game.stored.opponent
        # The invitation link, for its host, until the friend takes the seat. Never a seat's token.
        v["invite_token"] = game.invite if game.status == "waiting" and game.seats[seat].owner is not None else None
        v.update(self.table_extras(game, seat))
        if game.ending is not None:  # ended before its last hand: over, and nobody is to move
            v["match_over"], v["match_winner"] = True, game.winner
            v["to_move"], v["legal"], v["stakes"] = False, [], None
        if seat in game.bots:  # a bot's own seat: the bot protocol's observation of it, for its program
            v["protocol"] = protocol_view(game.match, seat)
        return v

    async def games_of(self, owner: str, *, before: str | None = None, finished: bool = False) -> dict[str, Any]:
        """One page of ``owner``'s games (with ``finished``, of their finished games), newest first, and the
        cursor of the next page (or None)."""
        cursor = None
        if before:
            at, _, gid = before.partition("~")
            try:
                if not _TOKEN_RE.fullmatch(gid):
                    raise ValueError(gid)
                cursor = (datetime.fromisoformat(at), gid)
            except ValueError:
                raise GameError("bad_cursor", "'before' must be the 'next' value of the previous page") from None
        n = self.limits.page_size
        rows = await self.db(self.store.games_of, owner, limit=n + 1, before=cursor, finished=finished)
        # A game found damaged on the page is marked broken, as opening it would. Marking moves it to
        # the top (it changed): the first page is read once more, in its new order; a later page keeps
        # the order it was read in, so that the next page starts where this one ended.
        if await self._mark_listed(rows[:n]) and cursor is None:
            rows = await self.db(self.store.games_of, owner, limit=n + 1, before=cursor, finished=finished)
        out = []
        if cursor is None and not finished:  # seats whose game is gone from the database: listed first, as broken
            for lost in await self.db(self.store.lost_seats_of, owner, limit=n):
                out.append(_listed_broken(lost, "", "it is missing from the database", None))
        for r in rows[:n]:
            g = r.game
            level = None if g is None or r.marked else _level_problem(g.opponent)  # not marked: the database is away
            problem = r.problem or level
            if g is None or level:
                out.append(_listed_broken(r.seat, r.other_name, problem or "", r.updated))
                continue
            out.append(
                {
                    "game_id": g.id,
                    "token": r.seat.token,
                    "seat": r.seat.seat,
                    "status": g.status,
                    "opponent": g.opponent,
                    "opponent_name": r.other_name,
                    "opponent_bot": r.other_bot,
                    "problem": problem or None,
                    "rules": str(g.rules.get("name", "")),
                    "rules_label": rules_shown(g.rules),
                    "hands": g.rules.get("hands"),
                    "target_score": g.rules.get("target_score"),
                    "scores": list(g.scores),
                    "result": _result(g, r.seat.seat),
                    "moves": g.moves,
                    "updated": g.updated.isoformat(),
                }
            )
        nxt = None
        if len(rows) > n:
            last = rows[n - 1]
            if last.updated is not None:  # a time that cannot be read (and could not be marked): no next page
                nxt = f"{last.updated.isoformat()}~{last.seat.game_id}"
        return {"games": out, "next": nxt}

    async def _mark_listed(self, rows: list[ListedGame]) -> bool:
        """Mark the damaged games of a lobby page broken (unless they are already); True if any was."""
        marked = False
        for r in rows:
            if r.marked or not _TOKEN_RE.fullmatch(r.seat.game_id):
                continue
            if r.game is None:
                reason = r.problem
            else:
                level = _level_problem(r.game.opponent)
                reason = "" if level is None else f"game {r.game.id}: {level}"
            if reason:
                await self.broken(r.seat.game_id, reason)
                marked = True
        return marked

    # -- playing ------------------------------------------------------------------------------------------

    # -- clocks, leaving, claims and rematches -----------------------------------------------------------

    def public_extras(self, game: LiveGame) -> dict[str, Any]:
        """The clock, the ending and who is away from the table: the same for both players and for anyone
        watching (a spectator is sent these and nothing else of :meth:`table_extras`)."""
        out: dict[str, Any] = {
            "clock": None,
            "ending": None if game.ending is None else {"reason": game.ending, "winner": game.winner},
            "away": None,
            "rated": game.rated,
            "rating": game.rating,
        }
        c = game.clock
        if game.ending == "abort" and c is not None and c.flagged is not None:
            # Aborted by the clock: the player to move never made a first move (docs/web.md, "Leaving a game").
            out["ending"]["no_show"] = game.match.current_player
        if c is not None:
            out["clock"] = {
                "control": c.control.id,
                "per_move": c.control.per_move,
                "banks": [round(b, 2) for b in c.banks],
                "to_move": game.match.current_player if c.deadline is not None else None,
                # Seconds from when this view is sent: the page counts down from when it receives it.
                "left": None if c.deadline is None else round(max(0.0, c.deadline - time.time()), 2),
                "move_left": None
                if c.deadline is None or c.turn_started is None
                else round(max(0.0, c.turn_started + c.control.per_move - time.time()), 2),
                "on_time": c.on_time,
                "flagged": c.flagged is not None,
            }
        p = game.presence
        if p is not None and game.status == "playing":
            # Whether each player is at the table, not why (a closed tab and a lost connection look alike).
            out["away"] = [not x.here and x.away_since is not None for x in p]
        return out

    def table_extras(self, game: LiveGame, seat: int) -> dict[str, Any]:
        """The public extras, and the abort, resign, claim and rematch as the player in ``seat`` may see them."""
        out = self.public_extras(game)
        out.update(
            can_abort=game.status == "playing" and len(game.movers) < 2,
            can_resign=game.status == "playing",
            claim=None,
            rematch=None,
        )
        wait = self.finisher.claim_wait(game, seat)
        if wait is not None:
            out["claim"] = {"in": round(wait[0], 2), "closed": wait[1]}
        if game.status == "finished" and game.ending not in NO_RESULT:
            out["rematch"] = {"offered_by": game.rematch_offer, "made": game.rematch is not None}
        return out

    # -- the computer's turns -------------------------------------------------------------------------

    # -- the units' work, for each other (koikoi.web.tableowner.TableOwner) ---------------------------------

    async def broadcast(self, game: LiveGame) -> None:
        await self.mover.broadcast(game)

    async def commit(self, game: LiveGame, seat: int, action: int) -> None:
        await self.mover.commit(game, seat, action)

    def check_turn(self, game: LiveGame, seat: int, seq: int) -> None:
        self.mover.check_turn(game, seat, seq)

    def arm(self, game: LiveGame) -> None:
        self.clocks.arm(game)

    async def on_deadline(self, game: LiveGame) -> None:
        await self.clocks.on_deadline(game)

    def schedule_ai(self, game: LiveGame) -> None:
        self.computer.schedule(game)

    def ended(self, game: LiveGame, ending: str, winner: int | None, *, flagged: float | None = None) -> None:
        self.finisher.ended(game, ending, winner, flagged=flagged)

    def rated_soon(self, game: LiveGame) -> None:
        self.finisher.rated_soon(game)

    # -- the jobs of a table, as the routes ask for them -------------------------------------------------

    async def act(self, token: Any, action: Any, seq: Any) -> dict[str, Any]:
        """A player's move: :meth:`Mover.act`."""
        return await self.mover.act(token, action, seq)

    async def hint(self, token: Any, seq: Any) -> dict[str, Any]:
        """The choices ranked for a player against the computer: :meth:`ComputerPlayer.hint`."""
        return await self.computer.hint(token, seq)

    async def leave_game(self, token: Any, how: Any) -> dict[str, Any]:
        """A resignation or an abort: :meth:`Finisher.leave_game`."""
        return await self.finisher.leave_game(token, how)

    async def claim(self, token: Any) -> dict[str, Any]:
        """A claim of victory over a player who left on their turn: :meth:`Finisher.claim`."""
        return await self.finisher.claim(token)

    async def offer_rematch(self, token: Any) -> dict[str, Any]:
        return await self.rematches.offer(token)

    async def decline_rematch(self, token: Any) -> dict[str, Any]:
        return await self.rematches.decline(token)

    async def arrive(self, seat: StoredSeat, game: LiveGame) -> None:
        await self.attendance.arrive(seat, game)

    async def depart(self, seat: StoredSeat, game: LiveGame, *, closed: bool) -> None:
        await self.attendance.depart(seat, game, closed=closed)

    async def expire(self) -> list[str]:
        return await self.clocks.expire()

    # -- memory -------------------------------------------------------------------------------------------

    def _idle(self, game: LiveGame) -> bool:
        return (
            not game.listeners[0]
            and not game.listeners[1]
            and not game.spectators
            and not game.lock.locked()
            and game.in_doubt is None
            and (game.ai_task is None or game.ai_task.done())
            and not any(not f.done() for f in game.hints.values())
        )

    def _forget(self, game: LiveGame) -> None:
        if self.live.get(game.stored.id) is game:
            del self.live[game.stored.id]
            for s in game.seats:
                self.seats.pop(s.token, None)
        # Its flag goes with it: a copy dropped from memory is not kept up to date, so its timer would fire
        # at a deadline that has moved on (a wasted trip to the database, under load thousands of them,
        # that the real flags queue behind). The clocks' sweep flags the games nobody here holds.
        if game.timer is not None:
            game.timer.cancel()
            game.timer = None

    def forget_if_idle(self, game: LiveGame) -> None:
        """Drop a finished game nobody watches from memory (the database keeps it)."""
        if game.match.is_over() and self._idle(game):
            self._forget(game)

    def evict(self, *, keep: str | None = None, now: float | None = None) -> int:
        """Send games nobody watches back to the database: every one idle for ``idle_seconds``, and the
        least recently used while more than ``live_games`` are in memory. Returns how many left."""
        now = time.monotonic() if now is None else now
        idle = sorted(
            (g for g in self.live.values() if g.stored.id != keep and self._idle(g)), key=lambda g: g.last_used
        )
        over = len(self.live) - self.limits.live_games
        n = 0
        for g in idle:
            if over > 0 or now - g.last_used >= self.limits.idle_seconds:
                self._forget(g)
                over -= 1
                n += 1
        return n

    async def _sweep_forever(self) -> None:
        while not self.closing:
            await asyncio.sleep(min(30.0, self.limits.idle_seconds / 2))
            self.evict()

    # -- records ------------------------------------------------------------------------------------------

    async def finished_game(self, game_id: Any, token: Any) -> LiveGame:
        """The finished game ``game_id``, for the holder of one of its seats' ``token``."""
        seat, game = await self.seat_game(token)
        if seat.game_id != game_id:
            raise GameError("bad_token", "this link is not a seat of that game", 403)
        if not game.over:
            # The record holds the deals and the seed: it would show the opponent's hand and the stock.
            raise GameError("not_finished", "a game can be downloaded once it is over", 403)
        return game

    @staticmethod
    def record_of(game: LiveGame) -> GameRecord:
        players = [{"name": s.name, "kind": "ai" if s.kind == "ai" else "human"} for s in game.seats]
        meta: dict[str, Any] = {"site": "koikoi serve", "game": game.stored.id}
        if game.ending is not None:  # ended before its last hand: the record stops where it did, and says why
            meta["ending"], meta["winner"] = game.ending, game.winner
        return GameRecord.from_match(game.match, players, metadata=meta)

    async def record(self, game_id: Any, token: Any) -> GameRecord:
        return self.record_of(await self.finished_game(game_id, token))

    async def close(self) -> None:
        self.closing = True
        if self.listener is not None:
            await self.listener.close()
        for task in (self._sweeper, self._syncer, self._clocker):
            if task is not None:
                task.cancel()
        for game in self.live.values():
            if game.ai_task is not None:
                game.ai_task.cancel()
            if game.in_doubt is not None:
                game.in_doubt.cancel()
        for task in list(self._tasks):
            task.cancel()
        await self.pool.close()
        self.db.close()
        if self.clock_db is not self.db:
            self.clock_db.close()
