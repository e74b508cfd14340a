"""The public lobby in the database (the table ``seeks`` of :mod:`koikoi.web.store`); every method runs on a
database thread (:class:`~koikoi.web.database.Database`).

A row is an open seek (listed in the lobby, for anyone to accept) or a quick-pairing entry (``pool``
set, paired by rating, :mod:`koikoi.web.pairing`). Pairing a row and creating its game happen in one
transaction, and the row is taken with ``UPDATE ... WHERE game_id IS NULL``: of two processes (or two
threads) that pair the same row at the same moment, one updates it and the other's whole transaction,
its game included, is rolled back. So each seek is accepted once and each waiting player paired once.
On PostgreSQL a pool is also paired under an advisory lock, so that two processes do not pair the same
players in the same wave only to have one of them roll back.
"""

from __future__ import annotations

import json
import logging
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, case, delete, exists, func, insert, select, update
from sqlalchemy.engine import Connection

from ..clocks import TimeControl, time_control
from ..rules import PRESETS, RuleSet
from .pairing import POOLS, Waiting, category_of, pair
from .rulelabels import rules_shown
from .schema import accounts, challenges, clocks, games, private_games, rated_games, seats, seeks
from .store import LOBBY_CHANNEL, Store, StoreError, add_clocks, insert_game, new_token, two_player_games

__all__ = [
    "GONE",
    "WAVE_PAIRS",
    "POOL_GONE",
    "SEEK_LIFE",
    "LobbyStore",
    "Pairing",
    "Seek",
    "Seeker",
    "TooMany",
]

log = logging.getLogger("koikoi.web")

SEEK_LIFE = timedelta(minutes=10)  # an open seek ends after this long, accepted or not
GONE = timedelta(seconds=30)  # ... or when its creator has been away from the lobby this long
# A quick-pairing entry ends sooner when its player leaves: nobody should be paired with someone gone.
POOL_GONE = timedelta(seconds=10)
# Asking a pool again this soon after being paired in it gives that pairing (a request answered 503
# after the entry was made, and sent again), not a second place in the pool.
JUST_PAIRED = timedelta(seconds=30)
# A player who aborted this many games with another person in a row (aborted them, resigned before both
# had moved, or never made a first move) waits ABORT_WAIT before the next seek or pool entry, twice as
# long for each more, up to ABORT_WAIT_MAX (as lichess's playban); a game played, won or lost, ends the
# row. Another player's abort neither adds to it nor ends it.
ABORT_STREAK = 3
ABORT_WAIT = 300.0
ABORT_WAIT_MAX = 3600.0
KEEP_PAIRED = timedelta(hours=6)  # a paired row is kept this long, for the list of games being played
_LISTED = 100  # open seeks listed at most (the newest)
_PLAYING = 20  # games being played listed at most (the latest to move)
_POOL_AT_ONCE = 2000  # players of one pool looked at in one wave
# Pairs made in one wave's transaction at most: a wave stays short (its games are made in five
# statements however many they are), and the next wave, at once, pairs the rest.
WAVE_PAIRS = 50


@dataclass(frozen=True, slots=True)
class Seeker:
    """Who is seeking: ``owner`` is who they are (an account's owner key, or a guest's browser id)."""

    owner: str
    account_id: str | None
    name: str
    rating: float
    rd: float
    provisional: bool


class TooMany(Exception):
    """A player holds as many open seeks (``what`` "seeks") or unfinished games ("games") as allowed."""

    def __init__(self, what: str, limit: int) -> None:
        super().__init__(f"{what}: at most {limit}")
        self.what = what
        self.limit = limit


class AbortWait(Exception):
    """A player who aborted ``aborts`` games in a row seeks again ``seconds`` too soon."""

    def __init__(self, aborts: int, seconds: float) -> None:
        super().__init__(f"{aborts} aborts in a row: {seconds:.0f} s to wait")
        self.aborts = aborts
        self.seconds = seconds


class InAGame(Exception):
    """A player who is playing a game with a real-time clock seeks, waits in a pool or accepts another:
    one such game at a time for a person (docs/web.md, "The public lobby"; a bot plays many)."""


def real_time(clock: Any) -> ColumnElement[bool]:
    """Whether a stored time control (a column of them) is a real-time one: correspondence is ``<n>d``."""
    live: ColumnElement[bool] = clock.is_not(None) & ~clock.like("%d")
    return live


def playing_in_real_time(owner: Any) -> ColumnElement[bool]:
    """Whether ``owner`` (a value, or a column such as ``seeks.c.owner``) holds a seat in a game being
    played on a real-time clock."""
    return exists().where(
        (seats.c.owner == owner)
        & (games.c.id == seats.c.game_id)
        & (games.c.status == "playing")
        & (clocks.c.game_id == games.c.id)
        & real_time(clocks.c.control)
    )


def a_person(account: Any) -> ColumnElement[bool]:
    """Whether ``account`` (an id, a column of them, or None: a guest) is a person's and not a bot's: a bot
    is a program, and plays as many games at once as it likes (as lichess's bots do)."""
    return ~exists().where((accounts.c.id == account) & accounts.c.bot_since.is_not(None))


@dataclass(frozen=True, slots=True)
class Pairing:
    """One player paired by a wave: their entry, who they are, their game and their own seat's token."""

    entry: str
    owner: str
    game_id: str
    token: str


@dataclass(frozen=True, slots=True)
class Seek:
    id: str
    owner: str
    account_id: str | None
    name: str
    pool: str | None
    rules: dict[str, Any]
    rated: bool
    rating: float
    rd: float
    provisional: bool
    created: datetime
    seen: datetime
    game_id: str | None
    token: str | None
    private: bool = False  # a casual seek whose game nobody may watch
    clock: str | None = None  # the time control its game is played with (koikoi.clocks); None: none

    @property
    def hands(self) -> int:
        return int(self.rules.get("hands", 0))

    @property
    def preset(self) -> str:
        return str(self.rules.get("name", "?"))

    def shown(self) -> dict[str, Any]:
        """What the lobby shows everyone of an open seek: nothing of who its owner is but the name."""
        return {
            "id": self.id,
            "name": self.name,
            "account": self.account_id is not None,  # a signed-in player: the name links to their page
            "rating": round(self.rating),
            "provisional": self.provisional,
            "preset": self.preset,
            "rules_label": rules_shown(self.rules),
            "hands": self.hands,
            "rated": self.rated,
            "private": self.private,
            "clock": self.clock,
            "category": category_of(self.hands),
            "created": self.created.isoformat(),
        }


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def _seek(row: Any) -> Seek | None:
    """A stored row as a :class:`Seek`; None (logged) when it cannot be read: the lobby goes on without it."""
    try:
        rules = json.loads(row.rules)
        if not isinstance(rules, dict):
            raise ValueError("rules are not an object")
        return Seek(
            id=str(row.id),
            owner=str(row.owner),
            account_id=None if row.account_id is None else str(row.account_id),
            name=str(row.name),
            pool=None if row.pool is None else str(row.pool),
            rules=rules,
            rated=bool(row.rated),
            rating=float(row.rating),
            rd=float(row.rd),
            provisional=bool(row.provisional),
            created=_aware(row.created),
            seen=_aware(row.seen),
            game_id=None if row.game_id is None else str(row.game_id),
            token=None if row.token is None else str(row.token),
            private=bool(getattr(row, "private", None)),
            clock=None if getattr(row, "clock", None) is None else str(row.clock),
        )
    except (TypeError, ValueError, AttributeError) as e:
        log.warning("a lobby seek cannot be read (%s); it is left out", e)
        return None


def _seeker(seek: Seek) -> Seeker:
    return Seeker(seek.owner, seek.account_id, seek.name, seek.rating, seek.rd, seek.provisional)


def pool_rules(preset: str, hands: int) -> dict[str, Any]:
    """A pool's rules as stored: the preset, ``hands`` hands a match."""
    return PRESETS[preset].replace(hands=hands).to_dict()


def _seeks(rows: Iterable[Any]) -> list[Seek]:
    return [s for s in map(_seek, rows) if s is not None]


# How a pair's game is made: the seed (secret), the computer's seed, and the seat that moves first (its
# clock runs first), for the rules; worked out by the caller (koikoi.web.games.playable_seed) so that this
# module deals no cards.
NewSeeds = Callable[[RuleSet], tuple[int, int, int]]

# Running out of time loses every game the lobby makes: between strangers the one who stayed wins, rather
# than playing on against the computer ("the computer plays my move" is for friends' casual games).
ON_TIME = "lose"


class LobbyStore:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = store.engine

    def _now(self) -> datetime:
        return datetime.now(UTC)

    def _notify(self, conn: Connection, payloads: list[str]) -> None:
        """Announce ``payloads`` on the lobby's channel when this transaction commits, in one statement."""
        if not self.store.is_sqlite and payloads:
            conn.execute(select(*(func.pg_notify(LOBBY_CHANNEL, p) for p in payloads)))

    # -- seeking ------------------------------------------------------------------------------------------

    def open_seek(
        self,
        seeker: Seeker,
        rules: RuleSet,
        *,
        rated: bool,
        pool: str | None,
        max_open: int,
        max_games: int,
        private: bool = False,
        clock: str | None = None,
    ) -> tuple[Seek, bool]:
        """A new seek (``pool`` None) or quick-pairing entry of ``seeker``, its game to be played with the
        time control ``clock`` (a pool's entry: the pool's). Returns it and whether it is
        new: asking a pool again while waiting in it gives the same entry. Raises :class:`TooMany` past
        ``max_open`` open seeks of one owner, or when they hold ``max_games`` unfinished games already."""
        now = self._now()
        with self.engine.begin() as conn:
            held = conn.execute(
                select(func.count())
                .select_from(games.join(seats, seats.c.game_id == games.c.id))
                .where(seats.c.owner == seeker.owner, games.c.status.in_(("waiting", "playing")))
            ).scalar_one()
            if held >= max_games:
                raise TooMany("games", max_games)
            just = (seeks.c.pool == pool) & (seeks.c.created >= now - JUST_PAIRED)
            mine = _seeks(
                conn.execute(
                    select(seeks)
                    .where((seeks.c.owner == seeker.owner) & (seeks.c.game_id.is_(None) | just))
                    .order_by(seeks.c.created.desc())
                    .limit(50)
                )
            )
            if pool is not None:
                for s in mine:
                    if s.pool == pool:
                        return s, False
            mine = [s for s in mine if s.game_id is None]
            if pool is None and sum(1 for s in mine if s.pool is None) >= max_open:
                raise TooMany("seeks", max_open)
            self._abort_wait(conn, seeker.owner, now)
            if clock is not None and not time_control(clock).correspondence:
                if conn.execute(select(playing_in_real_time(seeker.owner) & a_person(seeker.account_id))).scalar():
                    raise InAGame()
            row: dict[str, Any] = {
                "id": new_token(12),
                "owner": seeker.owner,
                "account_id": seeker.account_id,
                "name": seeker.name,
                "pool": pool,
                "rules": json.dumps(rules.to_dict()),
                "rated": rated,
                "rating": seeker.rating,
                "rd": seeker.rd,
                "provisional": seeker.provisional,
                "created": now,
                "seen": now,
                "game_id": None,
                "token": None,
                "private": private or None,
                "clock": clock,
            }
            conn.execute(insert(seeks).values(**row))
            self._notify(conn, ["lobby"])  # a new seek, or one more waiting in a pool
        return Seek(**{**row, "rules": rules.to_dict(), "private": private}), True

    def seek(self, seek_id: str) -> Seek | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(seeks).where(seeks.c.id == seek_id)).first()
        return None if row is None else _seek(row)

    def cancel(self, seek_id: str, owner: str) -> bool:
        """End an unpaired seek or entry of ``owner``; False if there is none (paired, gone, not theirs)."""
        with self.engine.begin() as conn:
            gone = conn.execute(
                delete(seeks).where((seeks.c.id == seek_id) & (seeks.c.owner == owner) & seeks.c.game_id.is_(None))
            )
            if gone.rowcount == 1:
                self._notify(conn, ["lobby"])
        return gone.rowcount == 1

    def accept(self, seek_id: str, taker: Seeker, seeds: NewSeeds) -> tuple[Seek, Pairing, str]:
        """``taker`` accepts an open seek: its game made, the seek taken, in one transaction. Returns the
        seek (as it was), the seeker's pairing (their seat's token also goes on the row) and the taker's
        seat token.

        Raises :class:`StoreError` (``conflict``) when the seek was taken meanwhile."""
        with self.engine.begin() as conn:
            q = select(seeks).where(seeks.c.id == seek_id)
            row = conn.execute(q if self.store.is_sqlite else q.with_for_update()).first()
            seek = None if row is None else _seek(row)
            if seek is None or seek.pool is not None:
                raise StoreError("there is no such seek")
            if seek.game_id is not None:
                raise StoreError("this seek has been accepted by someone else", conflict=True)
            self._abort_wait(conn, taker.owner, self._now())
            live = seek.clock is not None and not time_control(seek.clock).correspondence
            playing = (playing_in_real_time(taker.owner) & a_person(taker.account_id)) | (
                playing_in_real_time(seek.owner) & a_person(seek.account_id)
            )
            if live and conn.execute(select(playing)).scalar():
                raise InAGame()
            game_id, tokens = self._game(
                conn,
                seek.rules,
                _seeker(seek),
                taker,
                seek.rated,
                seeds,
                private=seek.private and not seek.rated,
                clock=None if seek.clock is None else time_control(seek.clock),
            )
            taken = conn.execute(
                update(seeks)
                .where((seeks.c.id == seek.id) & seeks.c.game_id.is_(None))
                .values(game_id=game_id, token=tokens[0])
            )
            if taken.rowcount != 1:
                raise StoreError("this seek has been accepted by someone else", conflict=True)
            if live:
                self._leave_real_time(conn, [seek.owner, taker.owner])
            self._notify(conn, [f"owner {seek.owner} {game_id}", "lobby"])
        return seek, Pairing(seek.id, seek.owner, game_id, tokens[0]), tokens[1]

    def _game(
        self,
        conn: Connection,
        rules: dict[str, Any],
        first: Seeker,
        second: Seeker,
        rated: bool,
        seeds: NewSeeds,
        *,
        private: bool = False,
        clock: TimeControl | None = None,
    ) -> tuple[str, list[str]]:
        """The game of a pair, in the pairing's transaction: ``first`` at seat 0; rated between accounts;
        ``private``, nobody may watch it (a casual seek only); ``clock``, its time control, running from
        now for whoever moves first."""
        seed, ai_seed, first_mover = seeds(RuleSet.from_dict(rules))
        game_id, tokens, _ = insert_game(
            conn,
            rules=rules,
            seed=seed,
            opponent="friend",  # a game between two people, as with a friend, with no invitation
            ai_seed=ai_seed,
            status="playing",
            seat_specs=[(0, "human", first.name, first.owner), (1, "human", second.name, second.owner)],
            private=private,
            clock=None if clock is None else (clock, ON_TIME, first_mover),
        )
        if rated and first.account_id is not None and second.account_id is not None:
            conn.execute(
                insert(rated_games).values(
                    game_id=game_id,
                    category=category_of(int(rules.get("hands", 0))),
                    account0=first.account_id,
                    account1=second.account_id,
                    rated=None,
                )
            )
        return game_id, tokens

    def _abort_wait(self, conn: Connection, owner: str, now: datetime) -> None:
        """Raise :class:`AbortWait` while ``owner``, who aborted ABORT_STREAK games with another person in a
        row or more, is still to wait (their last 20 finished games are looked at)."""
        rows = conn.execute(
            select(games.c.ending, games.c.aborted_by, games.c.updated, seats.c.seat)
            .select_from(seats.join(games, games.c.id == seats.c.game_id))
            .where((seats.c.owner == owner) & (games.c.status == "finished") & (games.c.opponent == "friend"))
            .order_by(games.c.updated.desc())
            .limit(20)
        ).all()
        aborts, last = 0, None
        for r in rows:
            if r.ending == "abort" and r.aborted_by == r.seat:
                aborts += 1
                last = last or _aware(r.updated)
            elif r.ending not in ("abort", "expired", "closed"):
                break  # a game played: the row ends
        if aborts < ABORT_STREAK or last is None:
            return
        wait = min(ABORT_WAIT * 2 ** (aborts - ABORT_STREAK), ABORT_WAIT_MAX)
        left = (last - now).total_seconds() + wait
        if left > 0:
            raise AbortWait(aborts, left)

    def _leave_real_time(self, conn: Connection, owners: list[str]) -> None:
        """In a pairing's transaction: the players just paired into a real-time game wait in no pool and
        seek no real-time game any more (a wave of another pool that read one of these entries finds it
        gone when it takes it, and is undone: :meth:`pair_pool`)."""
        conn.execute(
            delete(seeks).where(
                seeks.c.owner.in_(owners)
                & seeks.c.game_id.is_(None)
                & real_time(seeks.c.clock)
                & a_person(seeks.c.account_id)
            )
        )

    # -- quick pairing ------------------------------------------------------------------------------------

    def waiting_pools(self) -> list[str]:
        """The pools with someone waiting in them."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(seeks.c.pool).where(seeks.c.pool.is_not(None) & seeks.c.game_id.is_(None)).distinct()
            ).all()
        return [r.pool for r in rows if r.pool in POOLS]

    def pair_pool(self, pool: str, seeds: NewSeeds) -> list[Pairing] | None:
        """One wave of ``pool``: its waiting players paired by rating (:func:`koikoi.web.pairing.pair`), a
        game made for each pair (at most :data:`WAVE_PAIRS`), all in one transaction. Returns a
        :class:`Pairing` for each player paired; None when another process is pairing the pool now."""
        now = self._now()
        with self.engine.begin() as conn:
            if not self.store.is_sqlite:
                # One process pairs a pool at a time; another that finds it busy leaves this wave to it.
                key = zlib.crc32(f"koikoi-pool-{pool}".encode())
                if not conn.execute(select(func.pg_try_advisory_xact_lock(key))).scalar():
                    return None
            # Only what pairing needs: this runs every wave, over everyone waiting.
            rows = conn.execute(
                select(
                    seeks.c.id,
                    seeks.c.owner,
                    seeks.c.account_id,
                    seeks.c.name,
                    seeks.c.rating,
                    seeks.c.rd,
                    seeks.c.provisional,
                    seeks.c.created,
                )
                .where(
                    (seeks.c.pool == pool)
                    & seeks.c.game_id.is_(None)
                    & (seeks.c.seen >= now - POOL_GONE)
                    & ~playing_in_real_time(seeks.c.owner)  # one real-time game at a time
                )
                .order_by(seeks.c.created)
                .limit(_POOL_AT_ONCE)
            ).all()
            if len(rows) < 2:
                return []
            seekers = {}
            candidates = []
            for r in rows:
                try:
                    seekers[r.id] = Seeker(
                        r.owner, r.account_id, r.name, float(r.rating), float(r.rd), bool(r.provisional)
                    )
                    candidates.append(
                        Waiting(r.id, r.owner, float(r.rating), float(r.rd), _aware(r.created).timestamp())
                    )
                except (TypeError, ValueError, AttributeError):
                    continue  # a damaged entry waits out its time and goes
            spec = POOLS[pool]
            rules = pool_rules(spec.preset, spec.hands)
            rule_set = RuleSet.from_dict(rules)
            pairs = pair(candidates, now.timestamp())[:WAVE_PAIRS]
            if not pairs:
                return []
            # The wave's games in a few statements, however many pairs: the games, their seats, their
            # clocks, the rated ones, and the entries taken (each only if still unpaired: all of them, or nothing).
            new, movers = [], []
            for a, b in pairs:
                first, second = seekers[a.entry], seekers[b.entry]
                seed, ai_seed, mover = seeds(rule_set)
                new.append((rules, seed, ai_seed, first.name, first.owner, second.name, second.owner))
                movers.append(mover)
            made = two_player_games(conn, new)
            # Each game on the pool's clock, running from now for whoever moves first.
            control = time_control(spec.clock)
            add_clocks(
                conn, [(g[0], control, ON_TIME, mover) for g, mover in zip(made, movers)], start=self._now().timestamp()
            )
            out: list[Pairing] = []
            rated = []
            for (a, b), (game_id, t0, t1) in zip(pairs, made):
                first, second = seekers[a.entry], seekers[b.entry]
                out += [Pairing(a.entry, first.owner, game_id, t0), Pairing(b.entry, second.owner, game_id, t1)]
                if first.account_id is not None and second.account_id is not None:
                    rated.append(
                        {
                            "game_id": game_id,
                            "category": category_of(spec.hands),
                            "account0": first.account_id,
                            "account1": second.account_id,
                            "rated": None,
                        }
                    )
            if rated:
                conn.execute(insert(rated_games), rated)
            taken = conn.execute(
                update(seeks)
                .where(seeks.c.id.in_([p.entry for p in out]) & seeks.c.game_id.is_(None))
                .values(
                    game_id=case({p.entry: p.game_id for p in out}, value=seeks.c.id),
                    token=case({p.entry: p.token for p in out}, value=seeks.c.id),
                )
            )
            if taken.rowcount != len(out):  # one was taken meanwhile (cancelled): this whole wave is undone
                raise StoreError("a quick-pairing entry changed while its wave paired it", conflict=True)
            self._leave_real_time(conn, [p.owner for p in out])
            self._notify(conn, [f"owner {p.owner} {p.game_id}" for p in out] + ["lobby"])
        return out

    # -- presence and endings -----------------------------------------------------------------------------

    def seen(self, owners: list[str]) -> None:
        """``owners`` are in the lobby now: their unpaired seeks and entries go on."""
        now = self._now()
        with self.engine.begin() as conn:
            for i in range(0, len(owners), 500):
                conn.execute(
                    update(seeks)
                    .where(seeks.c.owner.in_(owners[i : i + 500]) & seeks.c.game_id.is_(None))
                    .values(seen=now)
                )

    def leave_pools(self, owner: str) -> int:
        """``owner`` left the lobby: their quick-pairing entries end (their open seeks wait ``GONE``)."""
        with self.engine.begin() as conn:
            return conn.execute(
                delete(seeks).where((seeks.c.owner == owner) & seeks.c.pool.is_not(None) & seeks.c.game_id.is_(None))
            ).rowcount

    def sweep(self) -> int:
        """End the seeks whose time is up and forget old pairings; how many rows went."""
        now = self._now()
        with self.engine.begin() as conn:
            ended = conn.execute(
                delete(seeks).where(
                    seeks.c.game_id.is_(None)
                    & (
                        (seeks.c.pool.is_(None) & (seeks.c.seen < now - GONE))
                        | (seeks.c.pool.is_not(None) & (seeks.c.seen < now - POOL_GONE))
                        | (seeks.c.created < now - SEEK_LIFE)
                    )
                )
            ).rowcount
            old = conn.execute(
                delete(seeks).where(seeks.c.game_id.is_not(None) & (seeks.c.created < now - KEEP_PAIRED))
            ).rowcount
            if ended:
                self._notify(conn, ["lobby"])
        return ended + old

    # -- what the lobby shows -----------------------------------------------------------------------------

    def mine(self, owner: str) -> list[Seek]:
        """``owner``'s unpaired seeks and entries."""
        with self.engine.connect() as conn:
            return _seeks(
                conn.execute(select(seeks).where((seeks.c.owner == owner) & seeks.c.game_id.is_(None)).limit(50))
            )

    def paired_of(self, owners: list[str], since: datetime) -> list[Seek]:
        """The seeks and entries of ``owners`` (at most 500) paired since ``since`` whose game is still
        being played, the newest first (20 an owner at most)."""
        q = (
            select(seeks)
            .join(games, games.c.id == seeks.c.game_id)
            .where(seeks.c.owner.in_(owners[:500]) & (games.c.created >= since) & (games.c.status == "playing"))
            .order_by(games.c.created.desc())
            .limit(20 * len(owners[:500]))
        )
        with self.engine.connect() as conn:
            return [s for s in _seeks(conn.execute(q)) if s.game_id is not None]

    def bot_runner(self, account_id: str) -> str | None:
        """The account that runs the bot ``account_id`` (None: a person's account, or a bot nobody runs)."""
        with self.engine.connect() as conn:
            return conn.execute(
                select(accounts.c.bot_owner).where((accounts.c.id == account_id) & accounts.c.bot_since.is_not(None))
            ).scalar()

    def listing(self) -> dict[str, Any]:
        """The lobby as everyone sees it: the open seeks (newest first), how many wait in each pool, and
        the games being played that the lobby made, from a seek, a pool or a challenge to a bot (the
        latest to move first), unless private."""
        with self.engine.connect() as conn:
            open_seeks = _seeks(
                conn.execute(
                    select(seeks)
                    .where(seeks.c.pool.is_(None) & seeks.c.game_id.is_(None))
                    .order_by(seeks.c.created.desc())
                    .limit(_LISTED)
                )
            )
            counts = conn.execute(
                select(seeks.c.pool, func.count())
                .where(seeks.c.pool.is_not(None) & seeks.c.game_id.is_(None))
                .group_by(seeks.c.pool)
            ).all()
            playing = conn.execute(
                select(games.c.id, games.c.rules, games.c.moves, games.c.updated, clocks.c.control)
                .outerjoin(clocks, clocks.c.game_id == games.c.id)
                .where(
                    (games.c.status == "playing")
                    & (
                        games.c.id.in_(select(seeks.c.game_id).where(seeks.c.game_id.is_not(None)))
                        | games.c.id.in_(select(challenges.c.game_id).where(challenges.c.game_id.is_not(None)))
                    )
                    & games.c.id.not_in(select(private_games.c.game_id))  # a private game is nobody else's
                )
                .order_by(games.c.updated.desc())
                .limit(_PLAYING)
            ).all()
            ids = [g.id for g in playing]
            names: dict[str, list[tuple[int, str, bool, str]]] = {}
            rated = set()
            if ids:
                for s in conn.execute(
                    select(seats.c.game_id, seats.c.seat, seats.c.name, seats.c.owner).where(seats.c.game_id.in_(ids))
                ):
                    owner = str(s.owner or "")
                    names.setdefault(s.game_id, []).append((s.seat, s.name, owner.startswith("a:"), owner))
                rated = {
                    r.game_id for r in conn.execute(select(rated_games.c.game_id).where(rated_games.c.game_id.in_(ids)))
                }
            # Which of the names shown are bots' (koikoi.web.bots): the lobby marks them BOT.
            owners = {s.account_id for s in open_seeks if s.account_id is not None}
            owners |= {o[2:] for listed in names.values() for _, _, _, o in listed if o.startswith("a:")}
            bots = (
                {
                    r.id
                    for r in conn.execute(
                        select(accounts.c.id).where(
                            accounts.c.id.in_(sorted(owners)) & accounts.c.bot_since.is_not(None)
                        )
                    )
                }
                if owners
                else set()
            )
        shown_games = []
        for g in playing:
            try:
                rules = json.loads(g.rules)
                players = [
                    {"name": n, "account": a, "bot": o[2:] in bots} for _, n, a, o in sorted(names.get(g.id, []))
                ]
                shown_games.append(
                    {
                        "game_id": g.id,
                        "players": players,
                        "preset": str(rules.get("name", "?")),
                        "rules_label": rules_shown(rules),
                        "hands": int(rules.get("hands", 0)),
                        "moves": int(g.moves),
                        "rated": g.id in rated,
                        "clock": None if g.control is None else str(g.control),
                    }
                )
            except (TypeError, ValueError, AttributeError):
                continue  # a damaged game is its players' business (it is marked broken when loaded)
        return {
            "seeks": open_seeks,
            "pools": {str(pool): int(n) for pool, n in counts if pool in POOLS},
            "games": shown_games,
            "bots": bots,
        }
