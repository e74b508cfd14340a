"""The HTML pages: the lobby, a seat's table, an invitation, a replay, the rules of each preset, the account.

A page is rendered on the server in the asker's language (:meth:`~koikoi.web.context.AppContext.page`);
what its script needs (a seat token, a game id, the presets) goes with it as JSON. A page for a game
that is not there is answered with the error page (the app's handler for
:class:`~koikoi.web.errors.GameError`).
"""

from __future__ import annotations

import re

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ...clocks import time_control
from ...rules import PRESETS, RuleSet
from ...yaku import YAKU_NAMES
from ..chat import PHRASES
from ..context import AppContext, owner_of, translator
from ..games import OPPONENTS, GameError
from ..i18n import Translator

__all__ = ["clock_label", "make_router", "match_length", "rules_label"]

_TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{8,64}")


def rules_label(tr: Translator, rules: RuleSet) -> str:
    """A rule set's name for people: the preset's display name, marked when options were changed."""
    base = rules.name.removesuffix(" (custom)")
    label = tr(f"preset.{base}") if base in PRESETS else rules.name
    return tr("invite.custom_rules", rules=label) if base != rules.name else label


def match_length(tr: Translator, rules: RuleSet) -> str:
    """How long a match under ``rules`` runs, in words: "12 hands", or "until 50 points"."""
    if rules.hands:
        return tr.plural("lobby.hands", rules.hands, n=rules.hands)
    return tr.plural("lobby.until_target", rules.target_score, target=rules.target_score)


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
        return ctx.page(request, "table.html", "table", config=config)

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
            rules=rules_label(tr, rules),
            length=match_length(tr, rules),
            config={"token": token},
        )

    @router.get("/replay/{game_id}", response_class=HTMLResponse)
    async def replay_page(request: Request, game_id: str, token: str = "") -> HTMLResponse:
        if not _TOKEN_RE.fullmatch(game_id) or (token and not _TOKEN_RE.fullmatch(token)):
            raise GameError("no_game", "no game has this address", 404)
        return ctx.page(request, "replay.html", "replay", config={"game_id": game_id, "token": token})

    @router.get("/replay", response_class=HTMLResponse)
    async def replay_upload(request: Request) -> HTMLResponse:
        return ctx.page(request, "replay.html", "replay", config={"game_id": None, "token": None})

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
