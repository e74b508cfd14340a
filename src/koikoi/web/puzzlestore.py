"""Puzzles in the database (the tables ``puzzles``, ``puzzle_ratings`` and ``puzzle_attempts`` of
:mod:`koikoi.web.schema`); every method runs on a database thread (:class:`~koikoi.web.database.Database`).

A puzzle's JSON stays here: the page is sent positions, never the record (:mod:`koikoi.web.puzzleservice`).
A try is kept from the moment a puzzle is served, by the hash of its token, with whose it is; it ends once,
solved or failed, in the transaction that rates it: the solver's puzzle rating and the puzzle's own move
together, by Glicko-2 (:func:`koikoi.glicko2.rate_game`), for an account's first try at a puzzle.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import func, insert, select, update

from .. import glicko2
from ..puzzles import Puzzle
from .schema import puzzle_attempts, puzzle_ratings, puzzles
from .store import Store

__all__ = ["row_of", "NEAREST", "Attempt", "Finished", "PuzzleRating", "PuzzleStore", "StoredPuzzle", "attempt_key"]

NEAREST = 12  # a new puzzle is drawn from this many, the nearest the solver's rating (not tried yet)
PUZZLE_RD = 300.0  # a new puzzle's deviation: its first rating is a guess, soon corrected


def attempt_key(token: str) -> str:
    """What is kept of a try's token: its hash (a stolen table holds no token)."""
    return hashlib.sha256(token.encode()).hexdigest()


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class StoredPuzzle:
    id: str
    rules: str
    themes: tuple[str, ...]
    moves: int
    rating: float
    rd: float
    volatility: float
    plays: int
    solved: int
    data: str  # the puzzle's JSON: for the server only

    @staticmethod
    def from_row(row: Any) -> StoredPuzzle:
        return StoredPuzzle(
            id=row.id,
            rules=row.rules,
            themes=tuple(row.themes.split()),
            moves=int(row.moves),
            rating=float(row.rating),
            rd=float(row.rd),
            volatility=float(row.volatility),
            plays=int(row.plays),
            solved=int(row.solved),
            data=row.data,
        )


@dataclass(frozen=True, slots=True)
class PuzzleRating:
    rating: float
    rd: float
    volatility: float
    plays: int
    solved: int
    best_streak: int
    updated: datetime | None


@dataclass(frozen=True, slots=True)
class Attempt:
    key: str
    puzzle_id: str
    account_id: str | None
    guest: str | None
    mode: str
    streak: int
    rated: bool
    done: int
    result: str | None
    rating_before: float | None
    rating_after: float | None

    @staticmethod
    def from_row(row: Any) -> Attempt:
        return Attempt(
            key=row.key,
            puzzle_id=row.puzzle_id,
            account_id=row.account_id,
            guest=row.guest,
            mode=row.mode,
            streak=int(row.streak),
            rated=bool(row.rated),
            done=int(row.done),
            result=row.result,
            rating_before=row.rating_before,
            rating_after=row.rating_after,
        )


@dataclass(frozen=True, slots=True)
class Finished:
    """A try as it ended: the solver's rating before and after (None: not rated), the puzzle's after, and
    the streak (puzzles solved in a row, this one included) where the mode is streak."""

    attempt: Attempt
    rating_before: float | None
    rating_after: float | None
    puzzle_rating: float
    streak: int
    guest_after: glicko2.Rating | None = None  # a guest's new rating, for their browser to keep


def row_of(puzzle: dict[str, Any]) -> dict[str, Any]:
    """A puzzle's row (:meth:`PuzzleStore.add`) from its JSON (:meth:`koikoi.puzzles.Puzzle.to_dict`)."""
    return {
        "id": puzzle["id"],
        "rules": puzzle["record"]["rules"]["name"],
        "themes": puzzle["themes"],
        "moves": len(puzzle["line"]),
        "rating": puzzle["rating"],
        "data": json.dumps(puzzle, separators=(",", ":")),
    }


class PuzzleStore:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = store.engine

    # -- the puzzles ----------------------------------------------------------------------------------

    def count(self) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(puzzles)).scalar() or 0)

    def add(self, rows: list[dict[str, Any]]) -> int:
        """Add the puzzles not here yet (by id): ``{"id", "rules", "themes", "moves", "rating", "data"}``
        each; returns how many were added. A puzzle already here keeps its rating and tallies."""
        if not rows:
            return 0
        now = datetime.now(UTC)
        added = 0
        with self.engine.begin() as conn:
            have = set()
            ids = [r["id"] for r in rows]
            for i in range(0, len(ids), 500):
                have |= set(conn.execute(select(puzzles.c.id).where(puzzles.c.id.in_(ids[i : i + 500]))).scalars())
            fresh = []
            for r in rows:
                if r["id"] in have:
                    continue
                have.add(r["id"])
                fresh.append(
                    {
                        "id": r["id"],
                        "rules": r["rules"],
                        "themes": " ".join(r["themes"]),
                        "moves": r["moves"],
                        "rating": r["rating"],
                        "rd": PUZZLE_RD,
                        "volatility": glicko2.LICHESS.start_volatility,
                        "plays": 0,
                        "solved": 0,
                        "data": r["data"],
                        "added": now,
                    }
                )
            for i in range(0, len(fresh), 200):
                conn.execute(insert(puzzles), fresh[i : i + 200])
                added += len(fresh[i : i + 200])
        return added

    def add_puzzles(self, found: list[Puzzle]) -> int:
        """Add these puzzles (:meth:`add`), each kept as its JSON."""
        return self.add([row_of(p.to_dict()) for p in found])

    def get(self, puzzle_id: str) -> StoredPuzzle | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(puzzles).where(puzzles.c.id == puzzle_id)).first()
        return None if row is None else StoredPuzzle.from_row(row)

    def pick(
        self, target: float, account_id: str | None, avoid: tuple[str, ...] = (), seed: int | None = None
    ) -> StoredPuzzle | None:
        """A puzzle near ``target``: drawn from the :data:`NEAREST` nearest by rating that the account has not
        tried (any puzzle for a guest) and that are not in ``avoid`` (the ones a page just showed)."""
        q = select(puzzles).order_by(func.abs(puzzles.c.rating - target), puzzles.c.id).limit(NEAREST)
        if account_id is not None:
            tried = select(puzzle_attempts.c.puzzle_id).where(puzzle_attempts.c.account_id == account_id)
            q = q.where(puzzles.c.id.not_in(tried))
        if avoid:
            q = q.where(puzzles.c.id.not_in(list(avoid)))
        with self.engine.connect() as conn:
            rows = conn.execute(q).all()
            if not rows and account_id is not None:  # every one near it tried already: the nearest again
                rows = conn.execute(
                    select(puzzles).order_by(func.abs(puzzles.c.rating - target), puzzles.c.id).limit(NEAREST)
                ).all()
        if not rows:
            return None
        return StoredPuzzle.from_row(random.Random(seed).choice(rows))

    def daily(self, day: date) -> StoredPuzzle | None:
        """The day's puzzle, the same for everyone: drawn by the date from the puzzles of 1,200 to 1,800
        (all of them if none is there), in the order of their ids."""
        with self.engine.connect() as conn:
            ids = list(
                conn.execute(
                    select(puzzles.c.id).where(puzzles.c.rating.between(1200, 1800)).order_by(puzzles.c.id)
                ).scalars()
            )
            if not ids:
                ids = list(conn.execute(select(puzzles.c.id).order_by(puzzles.c.id)).scalars())
        if not ids:
            return None
        n = int.from_bytes(hashlib.sha256(day.isoformat().encode()).digest()[:8], "big")
        return self.get(ids[n % len(ids)])

    # -- solvers --------------------------------------------------------------------------------------

    def rating_of(self, account_id: str) -> PuzzleRating | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(puzzle_ratings).where(puzzle_ratings.c.account_id == account_id)).first()
        if row is None:
            return None
        return PuzzleRating(
            float(row.rating),
            float(row.rd),
            float(row.volatility),
            int(row.plays),
            int(row.solved),
            int(row.best_streak),
            _aware(row.updated),
        )

    def tried(self, account_id: str, puzzle_id: str) -> bool:
        with self.engine.connect() as conn:
            return (
                conn.execute(
                    select(puzzle_attempts.c.key)
                    .where((puzzle_attempts.c.account_id == account_id) & (puzzle_attempts.c.puzzle_id == puzzle_id))
                    .limit(1)
                ).first()
                is not None
            )

    def streak_now(self, account_id: str | None, guest: str | None) -> int:
        """The puzzles solved in a row in streak mode by this solver, up to their last streak try (0 if it
        failed, or is still open: a streak goes on only from a solved puzzle)."""
        who = puzzle_attempts.c.account_id == account_id if account_id is not None else puzzle_attempts.c.guest == guest
        with self.engine.connect() as conn:
            row = conn.execute(
                select(puzzle_attempts.c.streak, puzzle_attempts.c.result)
                .where(who & (puzzle_attempts.c.mode == "streak"))
                .order_by(puzzle_attempts.c.started.desc())
                .limit(1)
            ).first()
        if row is None or row.result != "solved":
            return 0
        return int(row.streak) + 1

    # -- tries ----------------------------------------------------------------------------------------

    def start(
        self,
        key: str,
        puzzle_id: str,
        *,
        account_id: str | None,
        guest: str | None,
        mode: str,
        streak: int,
        rated: bool,
        rating_before: float | None,
    ) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                insert(puzzle_attempts).values(
                    key=key,
                    puzzle_id=puzzle_id,
                    account_id=account_id,
                    guest=guest,
                    mode=mode,
                    streak=streak,
                    rated=rated,
                    done=0,
                    result=None,
                    rating_before=rating_before,
                    rating_after=None,
                    started=datetime.now(UTC),
                    ended=None,
                )
            )

    def attempt(self, key: str) -> Attempt | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(puzzle_attempts).where(puzzle_attempts.c.key == key)).first()
        return None if row is None else Attempt.from_row(row)

    def advance(self, key: str, done: int) -> bool:
        """One more move of the line answered right: from ``done`` to ``done + 1``, if the try is still
        where the answer found it (False: another answer came first)."""
        with self.engine.begin() as conn:
            n = conn.execute(
                update(puzzle_attempts)
                .where(
                    (puzzle_attempts.c.key == key)
                    & (puzzle_attempts.c.done == done)
                    & puzzle_attempts.c.result.is_(None)
                )
                .values(done=done + 1)
            ).rowcount
        return n == 1

    def finish(self, key: str, done: int, solved: bool, guest_rating: glicko2.Rating | None = None) -> Finished | None:
        """End the try (``done`` moves answered right, then solved or failed), once: None if it had ended
        already or moved on. A rated try moves the account's puzzle rating and the puzzle's together; a
        guest's try moves only the guest's (``guest_rating``, as their browser keeps it: not stored)."""
        now = datetime.now(UTC)
        with self.engine.begin() as conn:
            q = select(puzzle_attempts).where(puzzle_attempts.c.key == key)
            row = conn.execute(q if self.store.is_sqlite else q.with_for_update()).first()
            if row is None or row.result is not None or int(row.done) != done:
                return None
            a = Attempt.from_row(row)
            result = "solved" if solved else "failed"
            p = conn.execute(select(puzzles).where(puzzles.c.id == a.puzzle_id)).first()
            if p is None:
                return None
            score = 1.0 if solved else 0.0
            puzzle = glicko2.Rating(float(p.rating), float(p.rd), float(p.volatility), int(p.plays))
            before = after = None
            guest_after = None
            puzzle_after = puzzle.rating
            if a.rated and a.account_id is not None:
                mine_row = self._rating_row(conn, a.account_id, now)
                mine = glicko2.Rating(
                    float(mine_row.rating),
                    float(mine_row.rd),
                    float(mine_row.volatility),
                    int(mine_row.plays),
                    _aware(mine_row.updated).timestamp(),
                )
                new_mine, new_puzzle = glicko2.rate_game(mine, puzzle, score, glicko2.LICHESS, now.timestamp())
                before, after, puzzle_after = mine.rating, new_mine.rating, new_puzzle.rating
                conn.execute(
                    update(puzzle_ratings)
                    .where(puzzle_ratings.c.account_id == a.account_id)
                    .values(
                        rating=new_mine.rating,
                        rd=new_mine.rd,
                        volatility=new_mine.volatility,
                        updated=now,
                        plays=puzzle_ratings.c.plays + 1,
                        solved=puzzle_ratings.c.solved + int(solved),
                    )
                )
                conn.execute(
                    update(puzzles)
                    .where(puzzles.c.id == a.puzzle_id)
                    .values(
                        rating=new_puzzle.rating,
                        rd=new_puzzle.rd,
                        volatility=new_puzzle.volatility,
                        plays=puzzles.c.plays + 1,
                        solved=puzzles.c.solved + int(solved),
                    )
                )
            elif guest_rating is not None:
                guest_after, _ = glicko2.rate_game(guest_rating, puzzle, score, glicko2.LICHESS, now.timestamp())
                before, after = guest_rating.rating, guest_after.rating
            streak = a.streak + 1 if solved else a.streak
            if a.mode == "streak" and a.account_id is not None and solved:
                self._rating_row(conn, a.account_id, now)
                conn.execute(
                    update(puzzle_ratings)
                    .where((puzzle_ratings.c.account_id == a.account_id) & (puzzle_ratings.c.best_streak < streak))
                    .values(best_streak=streak)
                )
            conn.execute(
                update(puzzle_attempts)
                .where(puzzle_attempts.c.key == key)
                .values(result=result, ended=now, rating_after=after, done=done + int(solved))
            )
        return Finished(a, before, after, puzzle_after, streak, guest_after)

    @staticmethod
    def _rating_row(conn: Any, account_id: str, now: datetime) -> Any:
        """In a try's transaction: the account's puzzle rating row, made (a new player's) if it has none."""
        q = select(puzzle_ratings).where(puzzle_ratings.c.account_id == account_id)
        row = conn.execute(q).first()
        if row is None:
            new = glicko2.new_player()
            conn.execute(
                insert(puzzle_ratings).values(
                    account_id=account_id,
                    rating=new.rating,
                    rd=new.rd,
                    volatility=new.volatility,
                    plays=0,
                    solved=0,
                    best_streak=0,
                    updated=now,
                )
            )
            row = conn.execute(q).first()
        return row
