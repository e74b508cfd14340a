"""Game reviews on the server: a finished game's review for one of its players, worked out once and kept.

``POST /api/games/<id>/review?token=T`` starts the review of the seat whose token is ``T`` (or answers
the stored one); ``GET`` the same address tells how far it is. The work is :mod:`koikoi.review`, done in
a worker process one decision at a time (:meth:`~koikoi.web.workers.ThinkPool.review`), never on the
event loop; after each decision the progress is written to the ``reviews`` table, so that any server
process on the database can show it, and the finished review is stored there for good.

Only the game's two players may ask (a seat token of that game), only once the game is over (the
review replays the record, which holds the deals). One review runs per game at a time, and at most
``reviews_running`` on one server process; more are refused (429) with a message that says so.

A record file uploaded on the Replays page is nobody's game here: its review (:meth:`ReviewService.
review_record`) is the same work, in the same worker and within the same ``reviews_running``, but kept
nowhere: it goes back to the asker as it is worked out, over the one response that asked for it, so
that it needs no other process and ends when the asker leaves. Its record is read in the worker, and one
with more than ``review_record_decisions`` decisions to judge is refused before any is.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from ..records import GameRecord
from ..review import assemble, review_seed
from .games import GameError, GameService
from .limits import Limits
from .tasks import cancel_all
from .workers import JobError, ThinkPool

__all__ = ["ReviewService", "REVIEW_LEASE"]

log = logging.getLogger("koikoi.web")

# A process working out a review renews its claim after every decision (a second or two); one that
# has not for this long has died, and the next request takes the review over.
REVIEW_LEASE = 60.0


class ReviewService:
    """The reviews of one server process. Use from the event loop only."""

    def __init__(self, games: GameService, pool: ThinkPool, limits: Limits) -> None:
        self.games = games
        self.store = games.store
        self.db = games.db  # the store's calls, off the event loop
        self.pool = pool
        self.limits = limits
        self.owner = games.process_id
        self.running: dict[tuple[str, int], asyncio.Task[None]] = {}
        self._claiming: set[tuple[str, int]] = set()  # reviews being claimed in the database
        self.uploads = 0  # reviews of uploaded records being worked out

    async def _seat(self, game_id: str, token: Any) -> int:
        seat, game = await self.games.seat_game(token)  # 404 for a token that is no seat
        if seat.game_id != game_id:
            raise GameError("bad_token", "this link is not a seat of that game", 403)
        if not game.over:
            # The review replays the record, which holds the opponent's hand and the stock.
            raise GameError("not_finished", "a game can be reviewed once it is over", 409)
        return seat.seat

    async def status(self, game_id: str, token: Any) -> dict[str, Any]:
        """``{"status": "none" | "running" | "done" | "failed", ...}`` of the caller's review."""
        return await self._status(game_id, await self._seat(game_id, token))

    async def _status(self, game_id: str, seat: int) -> dict[str, Any]:
        row = await self.db(self.store.review, game_id, seat)
        if row is None:
            return {"status": "none", "seat": seat}
        if row.status == "done":
            return {"status": "done", "seat": seat, "review": json.loads(row.body or "{}")}
        if row.status == "failed":
            return {"status": "failed", "seat": seat, "message": row.body or ""}
        if row.until < datetime.now(UTC) and (game_id, seat) not in self.running:
            return {"status": "none", "seat": seat}  # its process died: asking again starts it over
        return {"status": "running", "seat": seat, "done": row.done, "total": row.total}

    async def start(self, game_id: str, token: Any) -> dict[str, Any]:
        """Start the caller's review unless it is stored or running; answers its status."""
        seat = await self._seat(game_id, token)
        key = (game_id, seat)
        if key not in self.running:
            row = await self.db(self.store.review, game_id, seat)
            if row is None or row.status != "done":
                await self._claim(key, token)
        return await self._status(game_id, seat)

    async def _claim(self, key: tuple[str, int], token: Any) -> None:
        game_id, seat = key
        if key in self._claiming:  # the same request twice at once: the first one starts it
            return
        self._check_room()
        # Counted from here, before the database is asked: two requests at once cannot both pass the limit.
        self._claiming.add(key)
        try:
            got = await self.db(self.store.claim_review, game_id, seat, self.owner, REVIEW_LEASE)
            if got == "other":
                raise GameError(
                    "busy",
                    "the other player's review of this game is being worked out: ask again when it is done",
                    429,
                )
            if got == "claimed":
                record = await self.games.record(game_id, token)
                self.running[key] = asyncio.get_running_loop().create_task(self._run(key, record))
        finally:
            self._claiming.discard(key)

    def _check_room(self) -> None:
        busy = len(self.running) + len(self._claiming) + self.uploads
        if busy >= self.limits.reviews_running:
            raise GameError(
                "busy",
                f"{busy} game reviews are being worked out already: ask again in a minute",
                429,
            )

    async def review_record(self, raw: bytes, seat: int | None) -> AsyncIterator[dict[str, Any]]:
        """The review of an uploaded record for ``seat`` (None: its one human player, else seat 0).

        The record is read and its decisions listed before this returns, so that a bad record, a bad seat
        or too long a record is refused (:class:`GameError`) before anything is sent; then the iterator
        gives ``{"status": "running", "seat", "done", "total"}`` after each decision and a last
        ``{"status": "done", "seat", "review"}`` (or ``"failed"`` with a ``message``). It holds one of the
        ``reviews_running`` places from this call until it is done or closed."""
        self._check_room()
        place = _Place(self)
        try:
            most = self.limits.review_record_decisions
            read = await self.pool.review(("record", raw, seat, most))
            if read[0] == "too_long":
                raise GameError(
                    "record_too_long",
                    f"{read[2]} made {read[1]:,} decisions in this record; a review judges at most {most:,}",
                    422,
                )
            chosen, todo, seed, text = read
        except GameError:
            place.free()
            raise
        except JobError as e:
            place.free()
            raise GameError("bad_record", str(e)) from None
        except RuntimeError as e:
            place.free()
            raise GameError("busy", f"the record could not be read now: {e}", 503) from None
        except BaseException:
            place.free()
            raise
        return self._judge(place, chosen, todo, seed, text)

    async def _judge(
        self, place: _Place, seat: int, todo: list[Any], seed: int, text: str
    ) -> AsyncIterator[dict[str, Any]]:
        playouts = self.limits.review_playouts or None
        try:
            entries = []
            yield {"status": "running", "seat": seat, "done": 0, "total": len(todo)}
            for i, pos in enumerate(todo):
                entries.append(await self.pool.review(("decision", pos, seed, playouts)))
                yield {"status": "running", "seat": seat, "done": i + 1, "total": len(todo)}
            doc = await self.pool.review(("assemble", text, seat, entries, playouts, seed))
            yield {"status": "done", "seat": seat, "review": doc}
        except (JobError, RuntimeError) as e:
            log.error("review of an uploaded record failed: %s", e)
            yield {"status": "failed", "seat": seat, "message": f"the review could not be worked out: {e}"}
        finally:
            place.free()

    async def _run(self, key: tuple[str, int], record: GameRecord) -> None:
        game_id, seat = key
        owner = self.owner
        try:
            todo = await self.pool.review(("decisions", record.to_json(), seat))
            total = len(todo)
            await self.db(self.store.review_progress, game_id, seat, owner, 0, total, REVIEW_LEASE)
            seed = review_seed(record)
            playouts = self.limits.review_playouts or None
            entries = []
            for i, pos in enumerate(todo):
                entries.append(await self.pool.review(("decision", pos, seed, playouts)))
                if not await self.db(self.store.review_progress, game_id, seat, owner, i + 1, total, REVIEW_LEASE):
                    log.warning("review of game %s seat %d was taken over by another process", game_id, seat)
                    return
            doc = assemble(record, seat, entries, playouts, seed)
            await self.db(self.store.end_review, game_id, seat, owner, body=json.dumps(doc))
        except asyncio.CancelledError:
            raise  # the server is stopping: the claim runs out and the next request starts it over
        except (JobError, RuntimeError) as e:
            log.error("review of game %s seat %d failed: %s", game_id, seat, e)
            await self._fail(key, f"the review could not be worked out: {e}")
        except Exception as e:  # a database error, a bug: the review fails, the server goes on
            log.exception("review of game %s seat %d failed", game_id, seat)
            await self._fail(key, f"the review could not be worked out: {type(e).__name__}")
        finally:
            self.running.pop(key, None)

    async def _fail(self, key: tuple[str, int], message: str) -> None:
        try:
            await self.db(self.store.end_review, key[0], key[1], self.owner, body=message, failed=True)
        except Exception:
            log.exception("could not mark the review of game %s seat %d failed", *key)

    async def close(self) -> None:
        await cancel_all(self.running.values(), "the reviews")


class _Place:
    """One of the ``reviews_running`` places, held by the review of an uploaded record. It is given
    back when the review ends, and also when its iterator is dropped unstarted (the asker left before
    the response began), which runs no ``finally`` of the iterator's."""

    def __init__(self, service: ReviewService) -> None:
        self.service: ReviewService | None = service
        service.uploads += 1

    def free(self) -> None:
        if self.service is not None:
            self.service.uploads -= 1
            self.service = None

    def __del__(self) -> None:
        self.free()
