"""Puzzles over HTTP (docs/web.md, "Puzzles"; :mod:`koikoi.web.puzzleservice`): the puzzles page, a puzzle
to try, an answer, and a solver's puzzle rating. Every request counts against ``puzzles_per_minute`` per
person and per address, as other actions do."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from ..context import AppContext, account_of, address_of, owner_of
from ..puzzleservice import MODES, Solver

__all__ = ["make_router"]


def make_router(ctx: AppContext) -> APIRouter:
    router = APIRouter()
    puzzles = ctx.puzzles

    def solver(request: Request) -> Solver:
        who = Solver(account_of(request), owner_of(request))
        puzzles.within(who, address_of(request))
        return who

    @router.get("/puzzles", response_class=HTMLResponse)
    async def page(request: Request) -> HTMLResponse:
        mode = request.query_params.get("mode", "rated")
        account = account_of(request)
        mine = await puzzles.profile(account) if account is not None else None
        return ctx.page(
            request,
            "puzzles.html",
            "puzzles",
            config={"mode": mode if mode in MODES else "rated", "solver": mine},
        )

    @router.post("/api/puzzles/next")
    async def next_puzzle(request: Request) -> dict[str, Any]:
        data = await ctx.json_body(request)
        return await puzzles.next(solver(request), data)

    @router.post("/api/puzzles/attempts/{token}")
    async def answer(request: Request, token: str) -> dict[str, Any]:
        data = await ctx.json_body(request)
        return await puzzles.answer(solver(request), token, data)

    @router.get("/api/puzzles/me")
    async def me(request: Request) -> dict[str, Any]:
        account = account_of(request)
        return {"solver": await puzzles.profile(account) if account is not None else None}

    return router
