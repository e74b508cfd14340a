"""The HTML pages: the lobby, a seat's table, an invitation, a replay, the rules of each preset, the account.

A page is rendered on the server in the asker's language (:meth:`~koikoi.web.context.AppContext.page`);
what its script needs (a seat token, a game id, the presets) goes with it as JSON. A page for a game
that is not there is answered with the error page (the app's handler for
:class:`~koikoi.web.errors.GameError`).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ...clocks import time_control
from ...rules import PRESETS
from ...yaku import YAKU_NAMES
from ..chat import PHRASES
from ..context import AppContext, owner_of, translator
from ..games import OPPONENTS, GameError
from ..i18n import Translator
from ..rulelabels import LIST_CHANGES, match_length, rules_label, shown_label

__all__ = ["clock_label", "make_router"]

_TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{8,64}")


def clock_label(tr: Translator, control: str | None) -> str:
    """A time control in words, as the pages' scripts say it (common.js ``clockName``): "10 s a move +
    1:00 in the bank", "3 days a move"; "No clock" for none."""
    if control is None:
        return tr("clock.none")
    tc = time_control(control)
    if tc.correspondence:
        days = round(tc.per_move / 86400)
        return tr.plural("clock.days", days, n=days)
    bank = int(tc.bank)
    hours, minutes, seconds = bank // 3600, bank % 3600 // 60, bank % 60
    shown = f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"
    return tr("clock.real_time", per=int(tc.per_move), bank=shown)


def finished_entry(tr: Translator, game: dict[str, Any]) -> dict[str, Any]:
    """One of the asker's finished games (GameService.games_of) as the Replays page lists it. Its links
    carry the asker's own seat token: the page lists nobody else's games."""
    opponent = game["opponent"]
    if opponent == "friend" or not opponent:
        vs = game["opponent_name"] or tr("level.friend")
    elif f"computer.name.{opponent}" in tr.catalog:  # the computer by its name and level: "Hana (easy)"
        vs = tr("computer.named", name=tr(f"computer.name.{opponent}"), level=tr(f"computer.level.{opponent}"))
    else:
        vs = tr(f"level.{opponent}")
    result = game["result"]
    updated = _moment(game["updated"])
    rules = {"hands": game["hands"], "target_score": game["target_score"]}
    base = f"/replay/{game['game_id']}?token={game['token']}"
    return {
        "game_id": game["game_id"],
        "against": tr("lobby.vs", name=vs),
        "opponent_bot": game["opponent_bot"],
        "rules": f"{shown_label(tr, game['rules_label'], LIST_CHANGES)} · {match_length(tr, rules)}",
        "scores": f"{game['scores'][game['seat']]}–{game['scores'][1 - game['seat']]}",
        "result": tr(f"player.result.{result}") if result else tr("replays.no_result"),
        "result_key": result or "none",
        "when": tr.when(updated) if updated is not None else "?",
        "when_iso": updated.isoformat() if updated is not None else None,
        "replay": base,
        "review": f"{base}#review",
    }


def _moment(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None


def make_router(ctx: AppContext) -> APIRouter:
    router = APIRouter()
    service = ctx.service

    @router.get("/", response_class=HTMLResponse)
    async def lobby(request: Request) -> HTMLResponse:
        return ctx.page(
            request,
            "lobby.html",
            "lobby",
            config={
                "presets": ctx.preset_options,
                "options": ctx.option_specs,
                "opponents": list(OPPONENTS),
                "time_controls": list(service.time_controls),
            },
        )

    @router.get("/play/{token}", response_class=HTMLResponse)
    async def table(request: Request, token: str) -> Response:
        seat, game = await service.seat_game(token)
        if seat.owner is None:  # a game made before invitations had tokens of their own
            return RedirectResponse(f"/invite/{token}", status_code=303)
        config = {"token": token, "game_id": game.stored.id, "phrases": list(PHRASES)}
        label = rules_label(translator(request), game.match.rules.to_dict())
        return ctx.page(request, "table.html", "table", config=config, rules_label=label)

    @router.get("/invite/{token}", response_class=HTMLResponse)
    async def invite(request: Request, token: str) -> Response:
        mine, game = await service.invitation(token, owner_of(request))
        if mine is not None:  # the friend again, from the browser that joined: their own table
            return RedirectResponse(f"/play/{mine}", status_code=303)
        host = game.seats[0].name
        tr, rules = translator(request), game.match.rules
        return ctx.page(
            request,
            "invite.html",
            "invite",
            host=host,
            rules=rules_label(tr, rules.to_dict()),
            length=match_length(tr, rules.to_dict()),
            config={"token": token},
        )

    @router.get("/replay/{game_id}", response_class=HTMLResponse)
    async def replay_page(request: Request, game_id: str, token: str = "") -> HTMLResponse:
        if not _TOKEN_RE.fullmatch(game_id) or (token and not _TOKEN_RE.fullmatch(token)):
            raise GameError("no_game", "no game has this address", 404)
        return ctx.page(request, "replay.html", "replay", config={"game_id": game_id, "token": token})

    @router.get("/replay", response_class=HTMLResponse)
    async def replays(request: Request, before: str = "") -> HTMLResponse:
        # The Replays page: the asker's own finished games (this browser's, or their account's: the
        # lobby's games, finished ones only), each with its seat's token, and a record file to open.
        if len(before) > 100:
            raise GameError("bad_cursor", "'before' must be the 'next' value of the previous page")
        listed = await service.games_of(owner_of(request), before=before or None, finished=True)
        tr = translator(request)
        return ctx.page(
            request,
            "replay.html",
            "replay",
            games=[finished_entry(tr, g) for g in listed["games"]],
            older=listed["next"],
            config={"game_id": None, "token": None},
        )

    @router.get("/account", response_class=HTMLResponse)
    async def account_page(request: Request) -> HTMLResponse:
        # A guest: sign in or create an account; a signed-in player: their account (the template asks
        # ``account``, which every page has). The forms talk to /api/account/... (routes/accounts.py).
        return ctx.page(request, "account.html", "account")

    @router.get("/rules", response_class=HTMLResponse)
    async def rules_page(request: Request, preset: str = "nintendo") -> HTMLResponse:
        if preset not in PRESETS:
            preset = "nintendo"
        r = PRESETS[preset]
        yaku_points = {y: getattr(r, y.replace("-", "_"), None) for y in YAKU_NAMES}
        return ctx.page(
            request,
            "rules.html",
            "rules",
            preset=preset,
            presets=list(PRESETS),
            rules=r.to_dict(),
            yaku_points=yaku_points,
            months=list(range(1, 13)),
            config={"preset": preset},
        )

    return router
