"""Games and seats over HTTP: the presets, a rule set checked, a game created or listed, an invitation
taken, and a seat's table, moves and hints.

A browser's games are those its cookie (``koikoi_id``) created or joined; a seat is reached by its
secret token. New games and moves over HTTP are rate-limited per address (the table's socket has
limits of its own, :mod:`.table`), and bodies are JSON only, within ``json_bytes``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from ...ai.registry import lobby_levels
from ..context import AppContext, owner_of
from ..games import OPPONENTS, GameError, Unavailable, rules_from_request
from ..limits import RateLimiter

__all__ = ["make_router"]


def make_router(ctx: AppContext) -> APIRouter:
    router = APIRouter()
    service, limits = ctx.service, ctx.limits
    creations = RateLimiter(limits.games_per_minute / 60, limits.games_per_minute)
    action_rate = RateLimiter(limits.http_actions_per_second, limits.http_action_burst)

    @router.get("/api/presets")
    async def presets() -> dict[str, Any]:
        return {
            "presets": ctx.preset_options,
            "options": ctx.option_specs,
            "opponents": list(OPPONENTS),
            "levels": list(lobby_levels()),
        }

    @router.post("/api/rules/check")
    async def check_rules(request: Request) -> dict[str, Any]:
        return {"rules": rules_from_request((await ctx.json_body(request)).get("rules")).to_dict()}

    @router.post("/api/games")
    async def create_game(request: Request) -> JSONResponse:
        data = await ctx.json_body(request)
        ctx.within(creations, request, "too_many_games", f"at most {limits.games_per_minute} new games a minute")
        created = await service.create(
            owner=owner_of(request),
            name=await ctx.seat_name(request, data),
            opponent=data.get("opponent"),
            rules=data.get("rules"),
            birth_months=data.get("birth_months"),
            clock=data.get("clock"),
            on_time=data.get("on_time"),
            private=data.get("private", False),
        )
        created["url"] = f"/play/{created['token']}"
        if "invite_token" in created:
            created["invite_url"] = f"/invite/{created['invite_token']}"
        response = JSONResponse(created, status_code=201)
        return response

    @router.get("/api/games")
    async def my_games(request: Request, before: str = "") -> dict[str, Any]:
        if len(before) > 100:
            raise GameError("bad_cursor", "'before' must be the 'next' value of the previous page")
        return await service.games_of(owner_of(request), before=before or None)

    @router.post("/api/invite/{token}/join")
    async def join(request: Request, token: str) -> dict[str, Any]:
        data = await ctx.json_body(request)
        out = await service.join(token, owner=owner_of(request), name=await ctx.seat_name(request, data))
        out["url"] = f"/play/{out['token']}"
        return out

    @router.get("/api/seat/{token}")
    async def state(token: str) -> dict[str, Any]:
        seat, game = await service.seat_game(token)
        await service.catch_up(game)
        return service.view(game, seat.seat)

    @router.post("/api/seat/{token}/action", response_model=None)
    async def act(request: Request, token: str) -> dict[str, Any] | JSONResponse:
        ctx.within(
            action_rate,
            request,
            "rate_limited",
            f"at most {limits.http_actions_per_second:g} actions a second over HTTP",
        )
        data = await ctx.json_body(request)
        try:
            return await service.act(token, data.get("action"), data.get("seq"))
        except Unavailable as e:  # the move is not stored (yet): the table as it is, to try again from
            out = {"error": e.code, "message": e.message, "state": await ctx.table_now(token)}
            return JSONResponse(out, status_code=e.status, headers={"Retry-After": "1"})

    @router.get("/api/seat/{token}/hint")
    async def hint(token: str, seq: int) -> dict[str, Any]:
        return await service.hint(token, seq)

    return router
