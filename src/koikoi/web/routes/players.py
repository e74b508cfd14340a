"""Players over HTTP: an account's public page data (its ratings, its results) and the leaderboards.

Only accounts are listed: a guest has no name here. What is shown of a player is public by nature (the
name, since when, ratings and results); nothing of their sessions, password or games in progress.
A rating's RD is shown as of now (it grows while its player is away, docs/ratings.md), and so are the
provisional "?" and the leaderboard's bar (RD at most 75, a rated game in the last 30 days).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from ... import glicko2
from ..accounts import check_name, name_key
from ..accountstore import Account
from ..context import AppContext, translator
from ..errors import GameError
from ..pairing import CATEGORIES
from ..ratingchart import Point, rating_chart

__all__ = ["LEADERBOARD_SIZE", "make_router", "rating_now"]

LEADERBOARD_SIZE = 50
ACTIVE = timedelta(days=30)  # a leaderboard lists players with a rated game this recent


def rating_now(row: dict[str, Any], now: float) -> dict[str, Any]:
    """A stored rating as a page shows it: the RD grown to ``now``, provisional or not."""
    updated = row["updated"] if row["updated"].tzinfo is not None else row["updated"].replace(tzinfo=UTC)
    stored = glicko2.Rating(row["rating"], row["rd"], row["volatility"], row["games"], updated.timestamp())
    current = glicko2.as_of(stored, now)
    return {
        "rating": round(current.rating),
        "rd": round(current.rd, 1),
        "volatility": round(current.volatility, 5),
        "provisional": glicko2.provisional_at(stored, now),
        "games": row["games"],
        "wins": row["wins"],
        "draws": row["draws"],
        "losses": row["losses"],
    }


def make_router(ctx: AppContext) -> APIRouter:
    router = APIRouter()
    service, store, accounts = ctx.service, ctx.store, ctx.accounts

    async def player(name: str) -> tuple[Account, dict[str, Any]]:
        try:
            key = name_key(check_name(name))
        except GameError:
            raise GameError("not_found", "there is no player of that name", 404) from None
        account = await service.db(accounts.account_named, key)
        if account is None:
            raise GameError("not_found", "there is no player of that name", 404)
        rows = await service.db(store.ratings_of, account.id)
        now = time.time()
        return account, {
            "name": account.name,
            "created": account.created.isoformat(),
            "url": f"/@/{account.name}",
            "ratings": {row["category"]: rating_now(row, now) for row in rows},
        }

    @router.get("/api/players/{name}")
    async def player_api(name: str) -> dict[str, Any]:
        return (await player(name))[1]

    @router.get("/@/{name}", response_class=HTMLResponse)
    async def player_page(request: Request, name: str) -> HTMLResponse:
        account, shown = await player(name)
        tr = translator(request)
        categories = []
        for category in CATEGORIES:
            if category not in shown["ratings"]:
                continue
            history = await service.db(store.rating_history_of, account.id, category)
            points = [Point(h["at"].timestamp(), h["rating"], h["rd"]) for h in history]
            title = tr("player.chart_title", name=shown["name"])
            categories.append(
                {"category": category, "shown": shown["ratings"][category], "chart": rating_chart(points, title)}
            )
        return ctx.page(
            request,
            "player.html",
            "player",
            player=shown,
            since=account.created.strftime("%Y-%m-%d"),
            categories=categories,
        )

    @router.get("/leaderboard/{category}", response_class=HTMLResponse)
    async def leaderboard_page(request: Request, category: str) -> HTMLResponse:
        board = await leaderboard(category)
        tr = translator(request)
        return ctx.page(
            request,
            "leaderboard.html",
            "leaderboard",
            category_name=tr(f"player.category.{category}"),
            players=board["players"],
        )

    @router.get("/api/leaderboard/{category}")
    async def leaderboard(category: str) -> dict[str, Any]:
        if category not in CATEGORIES:
            raise GameError("not_found", f"the categories are {', '.join(CATEGORIES)}", 404)
        since = datetime.now(UTC) - ACTIVE
        rows = await service.db(
            store.leaderboard,
            category,
            active_since=since,
            max_rd=glicko2.LEADERBOARD_RD,
            limit=LEADERBOARD_SIZE,
        )
        now = time.time()
        listed = []
        for row in rows:
            shown = rating_now(row, now)
            if shown["rd"] <= glicko2.LEADERBOARD_RD:  # the stored RD may have grown past the bar since
                listed.append({"name": row["name"], "url": f"/@/{row['name']}", **shown})
        return {"category": category, "players": listed}

    return router
