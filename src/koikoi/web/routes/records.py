"""Records and reviews: a finished game's record and replay, its review for one of its players, and a
record file uploaded to be replayed, and reviewed.

All of it is worked out in the records' own worker process (``records_pool`` of the
:class:`~koikoi.web.context.AppContext`), never on the event loop: a long record takes a while to
check, encode or review, and other players must not wait. Records and replays are rate-limited per
address (``replays_per_minute``), and at most two uploaded files are read at once; more are refused
(429) rather than queued.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from ..context import AppContext
from ..games import GameError
from ..limits import RateLimiter
from ..replays import Replays
from ..workers import JobError

__all__ = ["make_router"]


def make_router(ctx: AppContext) -> APIRouter:
    router = APIRouter()
    service, limits, reviews, records_pool = ctx.service, ctx.limits, ctx.reviews, ctx.records_pool
    replay_rate = RateLimiter(limits.replays_per_minute / 60, limits.replays_per_minute)
    replays = asyncio.Semaphore(2)  # record uploads being read at once; more are refused
    finished = Replays(records_pool)  # finished games' records and replays, written out once

    def limit_replays(request: Request) -> None:
        ctx.within(
            replay_rate, request, "rate_limited", f"at most {limits.replays_per_minute} replays and records a minute"
        )

    async def written_out(game_id: str, token: str) -> tuple[str, str]:
        """A finished game's record and replay (JSON texts), worked out once, off the event loop: for one of
        its players (``token``), or for anyone when the game may be watched (koikoi.web.spectators)."""
        game = await (service.finished_game(game_id, token) if token else ctx.spectators.finished(game_id))
        try:
            return await finished.get(game.stored.id, lambda: service.record_of(game))
        except (JobError, RuntimeError) as e:
            raise GameError("busy", f"the record could not be written out now: {e}", 503) from None

    @router.get("/api/games/{game_id}/record")
    async def record(request: Request, game_id: str, token: str = "") -> Response:
        limit_replays(request)
        text, _replay = await written_out(game_id, token)
        return Response(
            text,
            media_type="application/json",
            headers={"Content-Disposition": f'attachment; filename="koikoi-{game_id}.json"'},
        )

    @router.get("/api/games/{game_id}/replay")
    async def replay_of_game(request: Request, game_id: str, token: str = "") -> Response:
        limit_replays(request)
        _text, replay = await written_out(game_id, token)
        return Response(replay, media_type="application/json")

    @router.get("/api/games/{game_id}/review")
    async def review_status(game_id: str, token: str = "") -> dict[str, Any]:
        return await reviews.status(game_id, token)

    @router.post("/api/games/{game_id}/review")
    async def review_start(game_id: str, token: str = "") -> JSONResponse:
        out = await reviews.start(game_id, token)
        return JSONResponse(out, status_code=200 if out["status"] == "done" else 202)

    @router.post("/api/replay")
    async def replay_upload_api(request: Request) -> Response:
        limit_replays(request)
        raw = await ctx.read_body(request, limits.record_bytes, "a record file")
        if replays.locked():
            raise GameError("busy", "the server is reading other records: try again in a moment", 429)
        async with replays:
            # In a worker process of its own: a long record takes a while to check and to encode, and
            # other players must not wait (a thread would still hold the interpreter lock against them).
            try:
                body = await records_pool.read_record(raw)
            except JobError as e:
                raise GameError("bad_record", str(e)) from None
            except RuntimeError as e:
                raise GameError("busy", f"the record could not be read now: {e}", 503) from None
        return Response(body, media_type="application/json")

    @router.post("/api/replay/review")
    async def review_upload(request: Request, seat: str = "") -> Response:
        """The review of an uploaded record, for ``seat`` 0 or 1 (left out: its one human player): a
        stream of JSON lines, the progress after each decision and then the review (ReviewService.review_record)."""
        limit_replays(request)
        if seat not in ("", "0", "1"):
            raise GameError("bad_seat", "'seat' is the player to review: 0 or 1 (or left out)", 422)
        raw = await ctx.read_body(request, limits.record_bytes, "a record file")
        steps = await reviews.review_record(raw, int(seat) if seat else None)

        async def lines() -> AsyncIterator[str]:
            async for step in steps:
                yield json.dumps(step) + "\n"

        return StreamingResponse(
            lines(),
            media_type="application/x-ndjson",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    return router
