"""Puzzles as the server serves them (docs/web.md, "Puzzles"): a puzzle to solve, near the solver's rating,
the day's, or the next of a streak; each answer checked here, against the line the page never sees.

A puzzle is served with a fresh token for the try (:mod:`koikoi.web.puzzlestore` keeps its hash and whose
it is) and the position as the player to move sees it (:func:`koikoi.web.views.seat_view`: their hand,
the table, the piles, counts of the opponent's hand and of the stock; never the record the puzzle is kept
with). Each answer names the move of the line it answers and the action; a right one brings the next
position (after the move and the draw the game's deal makes next) or, at the end of the line, the
solution and the ratings; a wrong one ends the try. A try answers once: a second answer to a move already
answered, an answer to another person's try, or to one that is over, is refused and changes nothing.

An account's first try at a puzzle in the rated modes moves its puzzle rating and the puzzle's, by
Glicko-2 as the game ratings do (:mod:`koikoi.glicko2`); a guest's rating lives in their browser, which
sends it with each answer, and only theirs moves (a guest moves no puzzle's rating).
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import threading
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

from .. import glicko2
from ..actions import action_name, check_action
from ..puzzlegen import shipped_json
from ..puzzles import Puzzle, PuzzleError
from .accountstore import Account
from .database import Database
from .errors import GameError
from .limits import Limits, RateLimiter
from .puzzlestore import Finished, PuzzleStore, StoredPuzzle, attempt_key, row_of
from .rulelabels import rules_shown
from .store import Store
from .views import seat_view

__all__ = ["MODES", "PuzzleService", "Solver"]

log = logging.getLogger("koikoi.web")

MODES = ("rated", "daily", "streak")
PARSED_KEPT = 256  # puzzles kept parsed here (a try answers two or three times)
STREAK_START, STREAK_STEP = 1000.0, 60.0  # a streak's puzzles: this rating first, then this much harder each
MAX_STREAK = 10_000


class Solver:
    """Who asks: an account, or a guest known by their browser's id (hashed: it is their credential)."""

    def __init__(self, account: Account | None, browser: str) -> None:
        self.account = account
        self.guest = None if account is not None else hashlib.sha256(f"guest:{browser}".encode()).hexdigest()

    @property
    def account_id(self) -> str | None:
        return None if self.account is None else self.account.id

    @property
    def key(self) -> str:
        return self.account_id or f"g:{self.guest}"


def _number(data: dict[str, Any], key: str, low: float, high: float) -> float:
    value = data.get(key)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not low <= value <= high:
        raise GameError("bad_puzzle_request", f"'{key}' is a number from {low:g} to {high:g}", 422)
    return float(value)


class PuzzleService:
    def __init__(self, store: Store, db: Database, limits: Limits) -> None:
        self.store = store
        self.db = db
        self.pstore = PuzzleStore(store)
        self.rate = RateLimiter(limits.puzzles_per_minute / 60, limits.puzzle_burst)
        self._parsed: OrderedDict[str, Puzzle] = OrderedDict()
        self._parsed_lock = threading.Lock()

    # -- the set ---------------------------------------------------------------------------------------

    async def ensure_shipped(self) -> int:
        """On a server's first start, the shipped set goes into its database (once: another process that
        does it at the same moment makes one of the two find them there). Taken as it is, a few
        milliseconds: each puzzle is checked when it is first served (:meth:`_puzzle`)."""
        if await self.db(self.pstore.count):
            return 0
        try:
            return await self.db(lambda: self.pstore.add([row_of(p) for p in shipped_json()]))
        except Exception as e:  # another process imported them meanwhile (a key taken twice)
            if await self.db(self.pstore.count):
                return 0
            raise GameError("no_puzzles", f"the shipped puzzles could not be imported: {e}", 500) from None

    # -- serving -------------------------------------------------------------------------------------

    def within(self, solver: Solver, address: str) -> None:
        for key in (solver.key, f"addr:{address}"):
            if not self.rate.allow(key):
                raise GameError(
                    "rate_limited", f"too many puzzle requests: try again in {self.rate.retry_after(key):.0f} s", 429
                )

    def _puzzle(self, stored: StoredPuzzle) -> Puzzle:
        """The puzzle, parsed and checked once (kept: a try answers a few times). On a database thread:
        several may ask at once, so the kept ones are shared under a lock."""
        with self._parsed_lock:
            p = self._parsed.get(stored.id)
            if p is not None:
                self._parsed.move_to_end(stored.id)
                return p
        try:
            p = Puzzle.from_dict(json.loads(stored.data))
        except (PuzzleError, ValueError) as e:
            log.error("puzzle %s in the database cannot be played: %s", stored.id, e)
            raise GameError("no_puzzles", "this puzzle cannot be played: it is damaged in the database", 409) from None
        with self._parsed_lock:
            self._parsed[stored.id] = p
            while len(self._parsed) > PARSED_KEPT:
                self._parsed.popitem(last=False)
        return p

    def _view(self, p: Puzzle, done: int, *, over: bool = False, seq: int | None = None) -> dict[str, Any]:
        """The position after ``done`` moves of the line as the solver sees it; nothing to play once ``over``.
        ``seq`` numbers it for the table (each answer's view a new one, a wrong answer's too)."""
        m = p.position(done)
        status = "finished" if over or done >= len(p.line) or m.is_over() else "playing"
        players = [{"name": ""}, {"name": ""}]
        return seat_view(m, p.player, seq=done if seq is None else seq, players=players, status=status, hints=False)

    async def next(self, solver: Solver, data: dict[str, Any]) -> dict[str, Any]:
        """A puzzle to try: ``{"mode": "rated" | "daily" | "streak", "avoid": [ids just shown], "rating",
        "rd"}`` (the last two: a guest's, as their browser keeps them)."""
        mode = data.get("mode", "rated")
        if mode not in MODES:
            raise GameError("bad_puzzle_request", f"'mode' is one of {', '.join(MODES)}", 422)
        avoid = data.get("avoid", [])
        if (
            not isinstance(avoid, list)
            or len(avoid) > 20
            or not all(isinstance(a, str) and len(a) <= 16 for a in avoid)
        ):
            raise GameError("bad_puzzle_request", "'avoid' is a list of at most 20 puzzle ids", 422)
        guest = None
        if solver.account is None and "rating" in data:
            guest = glicko2.Rating(_number(data, "rating", 400, 4000), _number(data, "rd", 45, 500), 0.09)
        return await self.db(self._next, solver, mode, tuple(avoid), guest)

    def _next(self, solver: Solver, mode: str, avoid: tuple[str, ...], guest: glicko2.Rating | None) -> dict[str, Any]:
        mine = self.pstore.rating_of(solver.account_id) if solver.account_id is not None else None
        rating = mine.rating if mine is not None else guest.rating if guest is not None else 1500.0
        streak = 0
        if mode == "daily":
            stored = self.pstore.daily(datetime.now(UTC).date())
        elif mode == "streak":
            streak = min(self.pstore.streak_now(solver.account_id, solver.guest), MAX_STREAK)
            stored = self.pstore.pick(STREAK_START + STREAK_STEP * streak, solver.account_id, avoid)
        else:
            stored = self.pstore.pick(rating, solver.account_id, avoid)
        if stored is None:
            raise GameError("no_puzzles", "this server has no puzzles yet", 404)
        p = self._puzzle(stored)
        rated = (
            mode in ("rated", "daily")
            and solver.account_id is not None
            and not self.pstore.tried(solver.account_id, stored.id)
        )
        token = secrets.token_urlsafe(24)
        self.pstore.start(
            attempt_key(token),
            stored.id,
            account_id=solver.account_id,
            guest=solver.guest,
            mode=mode,
            streak=streak,
            rated=rated,
            rating_before=rating if (rated or guest is not None) else None,
        )
        return {
            "token": token,
            "mode": mode,
            "puzzle": {
                "id": stored.id,
                "rating": round(stored.rating),
                "plays": stored.plays,
                "moves": stored.moves,
                "rules": rules_shown(p.record.rules.to_dict()),
                "seat": p.player,
            },
            "rated": rated or (guest is not None and mode != "streak"),
            "streak": streak,
            "solver": None if mine is None else self._solver(mine),
            "view": self._view(p, 0),
        }

    @staticmethod
    def _solver(r: Any) -> dict[str, Any]:
        return {
            "rating": round(r.rating),
            "provisional": r.rd >= glicko2.PROVISIONAL_RD,
            "plays": r.plays,
            "solved": r.solved,
            "best_streak": r.best_streak,
        }

    async def answer(self, solver: Solver, token: Any, data: dict[str, Any]) -> dict[str, Any]:
        """One answer: ``{"move": the line's move it answers (0, 1, ...), "action": the action, "rating",
        "rd"}`` (the last two: a guest's, for their rating)."""
        if not isinstance(token, str) or not 10 <= len(token) <= 64:
            raise GameError("no_attempt", "no such try: ask for a puzzle first", 404)
        move = data.get("move")
        if type(move) is not int or not 0 <= move < 10:
            raise GameError("bad_puzzle_request", "'move' is the number of the line's move answered (0, 1, ...)", 422)
        try:
            action = check_action(data.get("action"))
        except (TypeError, ValueError) as e:
            raise GameError("bad_puzzle_request", f"'action': {e}", 422) from None
        guest = None
        if solver.account is None and "rating" in data:
            guest = glicko2.Rating(_number(data, "rating", 400, 4000), _number(data, "rd", 45, 500), 0.09)
        return await self.db(self._answer, solver, attempt_key(token), move, action, guest)

    def _answer(self, solver: Solver, key: str, move: int, action: int, guest: glicko2.Rating | None) -> dict[str, Any]:
        a = self.pstore.attempt(key)
        if a is None or (a.account_id, a.guest) != (solver.account_id, solver.guest):
            raise GameError("no_attempt", "no such try: ask for a puzzle first", 404)  # another's: none of theirs
        if a.result is not None:
            raise GameError("attempt_over", "this try is over: ask for the next puzzle", 409)
        if move != a.done:
            raise GameError("stale", f"this try is at move {a.done} of its line, not {move}", 409)
        stored = self.pstore.get(a.puzzle_id)
        if stored is None:
            raise GameError("no_puzzles", "this puzzle is no longer here", 404)
        p = self._puzzle(stored)
        obs = p.observation(move)
        right = p.answers(obs, move, action)
        if right and move + 1 < len(p.line):
            if not self.pstore.advance(key, move):
                raise GameError("stale", "this move was answered already", 409)
            return {"correct": True, "over": False, "done": move + 1, "view": self._view(p, move + 1)}
        finished = self.pstore.finish(key, move, right, guest if a.mode != "streak" else None)
        if finished is None:
            raise GameError("stale", "this move was answered already", 409)
        return self._over(p, finished, right, move)

    def _over(self, p: Puzzle, f: Finished, right: bool, move: int) -> dict[str, Any]:
        mine = self.pstore.rating_of(f.attempt.account_id) if f.attempt.account_id is not None else None
        return {
            "correct": right,
            "over": True,
            "done": move + int(right),
            "view": self._view(p, move + int(right), over=True, seq=move + 1),
            "solution": [
                {
                    "action": m.action,
                    "name": action_name(m.action),
                    "points": m.best,
                    "runner_up": m.runner_up,
                    "runner_up_points": m.second,
                    "reason": [dict(r) for r in m.reason],
                }
                for m in p.line
            ],
            "themes": list(p.themes),
            "rating": None
            if f.rating_after is None or f.rating_before is None
            else {"before": round(f.rating_before), "after": round(f.rating_after)},
            "guest_rating": None
            if f.guest_after is None
            else {"rating": round(f.guest_after.rating, 1), "rd": round(f.guest_after.rd, 1)},
            "puzzle_rating": round(f.puzzle_rating),
            "streak": f.streak if f.attempt.mode == "streak" else None,
            "solver": None if mine is None else self._solver(mine),
        }

    async def profile(self, account: Account) -> dict[str, Any] | None:
        mine = await self.db(self.pstore.rating_of, account.id)
        return None if mine is None else self._solver(mine)
