"""Players over HTTP: an account's public page data (its ratings, its results, its recent games) and the
leaderboards.

Only accounts are listed: a guest has no name here. What is shown of a player is public by nature (the
name, since when, ratings and results, and which games they played against whom, when, under which
rules and how they ended); nothing of their sessions or password, and never a seat token: those open
a game's seat, its replay and its record. The player's own view of their page alone links their games
(a replay, a record, a game to go on with), with their own seat's token.
A rating's RD is shown as of now (it grows while its player is away, docs/ratings.md), and so are the
provisional "?" and the leaderboard's bar (RD at most 75, a rated game in the last 30 days).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from markupsafe import Markup

from ... import glicko2
from ...rules import PRESETS
from ..accounts import check_name, name_key
from ..accountstore import Account
from ..context import AppContext, account_of, translator
from ..errors import GameError
from ..i18n import Translator
from ..pairing import CATEGORIES
from ..ratingchart import Point, rating_chart
from ..rulelabels import LIST_CHANGES, match_length, rules_label, rules_shown

__all__ = ["LEADERBOARD_SIZE", "make_router", "rating_now"]

LEADERBOARD_SIZE = 50
ACTIVE = timedelta(days=30)  # a leaderboard lists players with a rated game this recent
RECENT_GAMES = 20  # a player's page lists this many of their last games


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


def public_game(game: dict[str, Any]) -> dict[str, Any]:
    """A game of :meth:`AccountStore.recent_games` as anyone may see it: no seat token, no seat."""
    opponent = game["opponent_account"]
    return {
        "game_id": game["game_id"],
        "updated": game["updated"].isoformat() if game["updated"] is not None else None,
        "status": game["status"],
        "opponent": opponent or game["opponent"],
        "opponent_url": f"/@/{opponent}" if opponent else None,
        "opponent_bot": bool(game.get("opponent_bot")),
        "preset": game["preset"],
        "rules_label": rules_shown(game["rules"]) if game["rules"] is not None else None,
        "hands": game["hands"],
        "target_score": game["target_score"],
        "result": game["result"],
        "rated": game["rated"],
        "category": game["category"],
    }


def rules_text(tr: Translator, game: dict[str, Any]) -> str:
    """A listed game's rules and length in words ("Nintendo · 12 hands"); "?" for what is damaged."""
    rules = game["rules"]
    if rules is None:
        return "? · ?"
    return f"{rules_label(tr, rules, LIST_CHANGES)} · {match_length(tr, rules)}"


def against(tr: Translator, game: dict[str, Any]) -> Markup:
    """Who a game was against ("against <name>") in the page's language, the name a link to the
    opponent's page if they have one."""
    shown = public_game(game)
    if shown["opponent"] is None:
        return Markup("{}").format(tr("player.state.waiting"))
    before, _, after = tr("lobby.vs", name="\x00").partition("\x00")
    # A bot's name carries its badge wherever it is shown (docs/web.md, "Bots online").
    badge = Markup(' <span class="badge bot">{}</span>').format(tr("bot.badge")) if shown["opponent_bot"] else ""
    if shown["opponent_url"] is None:
        return Markup("{}{}{}").format(before, shown["opponent"], after)
    return Markup('{}<a href="{}">{}</a>{}{}').format(before, shown["opponent_url"], shown["opponent"], badge, after)


def run_by(tr: Translator, bot: dict[str, Any] | None) -> Markup:
    """Who runs a bot ("Run by <name>"), the name a link to their page; empty for a person."""
    if bot is None or not bot["owner"]:
        return Markup("")
    before, _, after = tr("bot.run_by", name="\x00").partition("\x00")
    return Markup('{}<a href="{}">{}</a>{}').format(before, bot["owner_url"], bot["owner"], after)


def game_entry(tr: Translator, game: dict[str, Any], own: bool) -> dict[str, Any]:
    """A listed game as the page shows it; ``own``: the page's player is the one looking at it."""
    status = game["status"]
    if status == "finished":  # (koikoi.web.store.result_for: None is a game with no result, an abort)
        outcome = tr(f"player.result.{game['result']}") if game["result"] is not None else tr("match.no_result")
    elif status == "playing":
        outcome = tr("player.state.playing")
    elif status == "broken":
        outcome = tr("lobby.broken")
    else:
        outcome = "" if status == "waiting" else "?"
    links = []
    # Only the player's own view links their games, with their own seat's token. Others see no replay
    # for now: public replays of rated games come with spectators (issue 32), which need no seat token.
    if own and status == "finished":
        token = game["token"]
        links = [
            (f"/replay/{game['game_id']}?token={token}", tr("match.replay")),
            (f"/api/games/{game['game_id']}/record?token={token}", tr("match.download")),
        ]
    elif own and status in ("playing", "waiting"):
        links = [(f"/play/{game['token']}", tr("lobby.resume"))]
    updated = game["updated"]
    return {
        "game_id": game["game_id"],
        "status": status,
        "against": against(tr, game),
        "rules": rules_text(tr, game),
        "when": tr.when(updated) if updated is not None else "?",
        "when_iso": updated.isoformat() if updated is not None else None,
        "outcome": outcome,
        "result": game["result"],
        "rated": tr(f"player.rated.{game['category']}") if game["category"] in CATEGORIES else tr("player.unrated"),
        "links": links,
    }


def make_router(ctx: AppContext) -> APIRouter:
    router = APIRouter()
    service, store, accounts = ctx.service, ctx.store, ctx.accounts

    async def player(name: str) -> tuple[Account, dict[str, Any], list[dict[str, Any]]]:
        """The account named ``name``, what anyone may see of it, and its recent games as the store has
        them (seat tokens included: for the player's own view only)."""
        try:
            key = name_key(check_name(name))
        except GameError:
            raise GameError("not_found", "there is no player of that name", 404) from None
        account = await service.db(accounts.account_named, key)
        if account is None:
            raise GameError("not_found", "there is no player of that name", 404)
        rows = await service.db(store.ratings_of, account.id)
        recent = await service.db(accounts.recent_games, account.id, RECENT_GAMES)
        puzzles = await ctx.puzzles.profile(account)
        bot = await service.db(ctx.bots.store.bot, account.id)
        now = time.time()
        return (
            account,
            {
                "name": account.name,
                "created": account.created.isoformat(),
                "url": f"/@/{account.name}",
                "ratings": {row["category"]: rating_now(row, now) for row in rows},
                "recent": [public_game(g) for g in recent],
                "puzzles": puzzles,  # their puzzle rating and tallies (None: no puzzle tried)
                # A bot's account: who runs it (None: the server's operator) and whether it is connected.
                "bot": None
                if bot is None
                else {
                    "owner": bot.owner_name,
                    "owner_url": f"/@/{bot.owner_name}" if bot.owner_name else None,
                    "online": bot.online,
                },
            },
            recent,
        )

    @router.get("/api/players/{name}")
    async def player_api(name: str) -> dict[str, Any]:
        return (await player(name))[1]  # public fields only, whoever asks: never a seat token

    @router.get("/@/{name}", response_class=HTMLResponse)
    async def player_page(request: Request, name: str) -> HTMLResponse:
        account, shown, recent = await player(name)
        tr = translator(request)
        viewer = account_of(request)
        own = viewer is not None and viewer.id == account.id
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
            since=tr.date(account.created),
            categories=categories,
            recent=[game_entry(tr, g, own) for g in recent],
            # A bot's page challenges it: the presets a stranger may play (not by birth months).
            presets=[p for p, r in PRESETS.items() if r.dealer_selection != "birth_month"],
            run_by=run_by(tr, shown["bot"]),
            # The bot's owner plays it casually only (a rated game would rate them against their own program).
            own_bot=viewer is not None and shown["bot"] is not None and shown["bot"]["owner"] == viewer.name,
            tournaments=await ctx.tournaments.of_player(account.id),
            config={
                "bot": shown["name"] if shown["bot"] is not None else None,
                "time_controls": list(ctx.service.time_controls),
            },
        )

    @router.get("/leaderboard")
    async def leaderboard_home(request: Request) -> RedirectResponse:
        """The leaderboard without a category: the short matches', the one most played."""
        query = request.url.query
        return RedirectResponse("/leaderboard/short" + (f"?{query}" if query else ""), status_code=307)

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
            bots=board["bots"],
        )

    @router.get("/api/leaderboard/{category}")
    async def leaderboard(category: str) -> dict[str, Any]:
        if category not in CATEGORIES:
            raise GameError("not_found", f"the categories are {', '.join(CATEGORIES)}", 404)
        since = datetime.now(UTC) - ACTIVE
        now = time.time()
        out: dict[str, Any] = {"category": category}
        # People, and the bots apart: a bot is never on the people's leaderboard.
        for key, bots in (("players", False), ("bots", True)):
            rows = await service.db(
                store.leaderboard,
                category,
                active_since=since,
                max_rd=glicko2.LEADERBOARD_RD,
                limit=LEADERBOARD_SIZE,
                bots=bots,
            )
            listed = []
            for row in rows:
                shown = rating_now(row, now)
                if shown["rd"] <= glicko2.LEADERBOARD_RD:  # the stored RD may have grown past the bar since
                    listed.append({"name": row["name"], "url": f"/@/{row['name']}", **shown})
            out[key] = listed
        return out

    return router
