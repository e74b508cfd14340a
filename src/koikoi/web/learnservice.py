"""Lessons as the server plays them (docs/web.md, "Learn"; :mod:`koikoi.lessons`): an exercise's position,
a learner's move judged, and an account's stars.

The server keeps nothing of a lesson under way: the page sends the right moves made so far with each new
one, and the exercise is replayed from its set-up position (two or three moves, a few milliseconds, on a
thread). A replayed move that is not one of the exercise's right ones is refused, so that a page cannot
walk the engine anywhere else. Each request counts against ``lesson_moves_per_minute`` per person and per
address. Stars are the page's to count (wrong moves are the learner's own business); an account keeps the
best it has earned in each lesson.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..actions import check_action
from ..lessons import LESSONS, Exercise, Lesson, LessonError, Verdict, lesson_named
from ..match import Match
from .accountstore import Account
from .database import Database
from .errors import GameError
from .learnstore import LearnStore
from .limits import Limits, RateLimiter
from .store import Store
from .views import seat_view

__all__ = ["PAGES", "LearnService"]

# The lessons in their order: the engine's exercises, then the rule sets' page and the first game.
PAGES: tuple[str, ...] = (*(lesson.name for lesson in LESSONS), "rulesets", "firstgame")
MAX_MOVES = 4  # no exercise asks for more decisions than this


def _lesson(name: str) -> Lesson:
    try:
        return lesson_named(name)
    except LessonError as e:
        raise GameError("no_lesson", str(e), 404) from None


def _view(m: Match, over: bool) -> dict[str, Any]:
    # The table's seq is the page's to number (a wrong move shows the same position again, as a new one).
    players = [{"name": ""}, {"name": ""}]
    return seat_view(m, 0, seq=0, players=players, status="finished" if over else "playing", hints=False)


class LearnService:
    def __init__(self, store: Store, db: Database, limits: Limits) -> None:
        self.db = db
        self.lstore = LearnStore(store)
        self.rate = RateLimiter(limits.lesson_moves_per_minute / 60, limits.lesson_burst)

    def within(self, keys: tuple[str, ...]) -> None:
        for key in keys:
            if not self.rate.allow(key):
                raise GameError(
                    "rate_limited", f"too many lesson moves: try again in {self.rate.retry_after(key):.0f} s", 429
                )

    async def move(self, lesson_name: str, exercise_name: str, data: dict[str, Any]) -> dict[str, Any]:
        """``{"done": [the right moves made], "action": the next one}`` (no ``action``: the position to
        start from, or to go on from)."""
        lesson = _lesson(lesson_name)
        try:
            exercise = lesson.exercise(exercise_name)
        except LessonError as e:
            raise GameError("no_lesson", str(e), 404) from None
        done = data.get("done", [])
        if not isinstance(done, list) or len(done) >= min(exercise.moves, MAX_MOVES):
            raise GameError("bad_lesson_move", f"'done' is a list of fewer than {exercise.moves} moves", 422)
        try:
            moves = [check_action(a) for a in done]
            action = None if data.get("action") is None else check_action(data["action"])
        except (TypeError, ValueError) as e:
            raise GameError("bad_lesson_move", str(e), 422) from None
        return await asyncio.to_thread(self._move, lesson, exercise, moves, action)

    @staticmethod
    def _move(lesson: Lesson, exercise: Exercise, done: list[int], action: int | None) -> dict[str, Any]:
        try:
            if action is None:
                return {"view": _view(lesson.after(exercise, done), False), "step": len(done)}
            verdict: Verdict = lesson.judge(exercise, done, action)
        except LessonError as e:
            raise GameError("bad_lesson_move", str(e), 422) from None
        return {
            "right": verdict.right,
            "done": verdict.done,
            "step": len(done) + int(verdict.right),
            "reason": [dict(p) for p in verdict.reason],
            "view": _view(verdict.match, verdict.done),
        }

    # -- progress ------------------------------------------------------------------------------------

    async def stars(self, account: Account) -> dict[str, int]:
        return await self.db(self.lstore.stars_of, account.id)

    async def keep(self, account: Account | None, data: dict[str, Any]) -> dict[str, int]:
        """``{"stars": {lesson: 1 to 3}}``: an account keeps the best of each (a guest's stay in their
        browser)."""
        if account is None:
            raise GameError("sign_in", "a guest's lessons are kept in their browser: sign in to keep them", 403)
        stars = data.get("stars")
        if not isinstance(stars, dict) or not 1 <= len(stars) <= len(PAGES):
            raise GameError("bad_progress", f"'stars' maps lessons to 1, 2 or 3 (at most {len(PAGES)} lessons)", 422)
        for lesson, n in stars.items():
            if lesson not in PAGES:
                raise GameError("bad_progress", f"there is no lesson {str(lesson)[:40]!r}", 422)
            if type(n) is not int or not 1 <= n <= 3:
                raise GameError("bad_progress", f"a lesson's stars are 1, 2 or 3, not {str(n)[:20]}", 422)
        return await self.db(self.lstore.keep, account.id, stars)
