"""Tournaments over HTTP and WebSocket (docs/web.md, "Tournaments"; :mod:`koikoi.web.tournaments`): the
list and the tournament pages, their data as JSON, a tournament made, joined, paused or withdrawn from,
berserk at the table, ``/ws/tournament/<id>`` (the standings pushed as they change, and a player told of
their next match), and the bot API's joining and leaving.

Bounded as the lobby is: tournaments made per address (``seeks_per_minute``) and per player (a few to
come at once), tournament sockets per address and per process (``sockets_per_address``,
``lobby_sockets``), messages per socket. The socket tells a player's seat token, so it opens only from
this site's own pages (``Origin``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fastapi import APIRouter, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import HTMLResponse, JSONResponse

from ... import safejson
from ..accounts import check_name, name_key, session_key
from ..chat import PHRASES
from ..context import AppContext, account_of, address_of, credentials, other_site
from ..cookies import is_secure
from ..database import Unavailable
from ..errors import GameError
from ..limits import Counter, RateLimiter
from ..sockets import UNREAD_BYTES, bound_send_buffer, refuse, reset
from ..tournaments import TournamentService, TourSocket
from ..tourneysettings import is_id

__all__ = ["make_router"]


SOCKET_TAKES = (
    'the tournament socket takes {"type": "ping"}, {"type": "page", "page": N}, {"type": "chat", "text": ...} '
    '(or "phrase"), and {"type": "report", "id": N}'
)


def _page(value: Any) -> int:
    """A standings page asked for: 1.., or 0 for "the page with my own line"."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 5:
        return int(value)
    if type(value) is int and 0 <= value <= 99999:
        return value
    return 1


def make_router(ctx: AppContext, tournaments: TournamentService) -> APIRouter:
    router = APIRouter()
    limits = ctx.limits
    making = RateLimiter(limits.seeks_per_minute / 60, limits.seeks_per_minute)
    opens = RateLimiter(limits.lobby_opens_per_minute / 60, limits.lobby_opens_per_minute)
    calls = RateLimiter(limits.messages_per_second, limits.message_burst)
    # Joining may check a password (Argon2id, tens of milliseconds of a core): as often as signing in.
    joining = RateLimiter(limits.logins_per_minute / 60, limits.logins_per_minute)
    sockets_by_address = Counter()

    # -- pages --------------------------------------------------------------------------------------------

    @router.get("/tournaments", response_class=HTMLResponse)
    async def list_page(request: Request) -> HTMLResponse:
        return ctx.page(
            request,
            "tournaments.html",
            "tournaments",
            presets=sorted(ctx.preset_options),
            time_controls=[c for c in ctx.service.time_controls if not c.endswith("d")],
            config={
                "time_controls": [c for c in ctx.service.time_controls if not c.endswith("d")],
                "presets": ctx.preset_options,
                "options": ctx.option_specs,
            },
        )

    @router.get("/tournament/{tournament_id}", response_class=HTMLResponse)
    async def tournament_page(request: Request, tournament_id: str) -> HTMLResponse:
        view = await tournaments.view(tournament_id, account_of(request), 0)
        # The chat reads as a spectators' room does (chat.js): "watch" mode, one's own lines by account name.
        config = {"view": view, "watch": True, "phrases": list(PHRASES)}
        return ctx.page(request, "tournament.html", "tournament", view=view, config=config)

    # -- data ---------------------------------------------------------------------------------------------

    @router.get("/api/tournaments")
    async def listing() -> dict[str, Any]:
        return await tournaments.listing()

    @router.post("/api/tournaments")
    async def create(request: Request) -> JSONResponse:
        data = await ctx.json_body(request)
        ctx.within(making, request, "too_many_tournaments", f"at most {limits.seeks_per_minute} a minute")
        t = await tournaments.create(account_of(request), data)
        return JSONResponse({"id": t.id, "url": f"/tournament/{t.id}"}, status_code=201)

    @router.get("/api/tournaments/{tournament_id}")
    async def one(request: Request, tournament_id: str) -> dict[str, Any]:
        return await tournaments.view(tournament_id, account_of(request), _page(request.query_params.get("page")))

    @router.post("/api/tournaments/{tournament_id}/join")
    async def join(request: Request, tournament_id: str) -> dict[str, Any]:
        has_body = request.headers.get("content-length", "0") != "0" or "transfer-encoding" in request.headers
        data = await ctx.json_body(request) if has_body else {}
        ctx.within(joining, request, "rate_limited", f"at most {limits.logins_per_minute} joins a minute")
        return await tournaments.join(tournament_id, account_of(request), data)

    @router.post("/api/tournaments/{tournament_id}/pause")
    async def pause(request: Request, tournament_id: str) -> dict[str, Any]:
        return await tournaments.pause(tournament_id, account_of(request))

    @router.get("/api/players/{name}/tournaments")
    async def of_player(name: str) -> dict[str, Any]:
        try:
            key = name_key(check_name(name))
        except GameError:
            raise GameError("not_found", "there is no player of that name", 404) from None
        account = await ctx.service.db(ctx.accounts.account_named, key)
        if account is None:
            raise GameError("not_found", "there is no player of that name", 404)
        return {"name": account.name, "tournaments": await tournaments.of_player(account.id)}

    # -- berserk, at the table ----------------------------------------------------------------------------

    @router.get("/api/play/{token}/tournament")
    async def match_of(token: str) -> dict[str, Any]:
        """The tournament a seat's match belongs to, for its table: a link back, and whether the seat may
        still berserk ({"tournament": null}: not a tournament's match)."""
        seat, game = await ctx.service.seat_game(token)
        return {"tournament": await tournaments.match_info(game.stored.id, seat.seat, game.status == "playing")}

    @router.post("/api/play/{token}/berserk")
    async def berserk(request: Request, token: str) -> dict[str, Any]:
        seat, game = await ctx.service.seat_game(token)
        async with game.lock:
            if game.status != "playing":
                raise GameError("over", "this match is not being played", 409)
            await tournaments.berserk(game.stored.id, seat.seat, game.match.current_player, game.moves == 0)
            game.extras_stale = True
        ctx.service.refresh_soon(game)
        return {"berserk": True}

    # -- the bot API --------------------------------------------------------------------------------------

    async def the_bot(request: Request) -> Any:
        ctx.within(calls, request, "rate_limited", f"at most {limits.messages_per_second:g} bot API calls a second")
        bot, _key = await ctx.bots.authenticate(request.headers.get("authorization"))
        return bot

    @router.post("/api/bot/tournaments/{tournament_id}/join")
    async def bot_join(request: Request, tournament_id: str) -> dict[str, Any]:
        bot = await the_bot(request)
        has_body = request.headers.get("content-length", "0") != "0" or "transfer-encoding" in request.headers
        data = await ctx.json_body(request) if has_body else {}
        ctx.within(joining, request, "rate_limited", f"at most {limits.logins_per_minute} joins a minute")
        return await tournaments.join(tournament_id, bot.account, data, bot=True)

    @router.post("/api/bot/tournaments/{tournament_id}/pause")
    async def bot_pause(request: Request, tournament_id: str) -> dict[str, Any]:
        bot = await the_bot(request)
        return await tournaments.pause(tournament_id, bot.account)

    # -- the tournament page's socket ---------------------------------------------------------------------

    @router.websocket("/ws/tournament/{tournament_id}")
    async def socket(ws: WebSocket, tournament_id: str) -> None:
        address = address_of(ws)
        transport = ws.scope.get("koikoi.transport")
        await ws.accept()
        if not opens.allow(address):
            error = {"type": "error", "code": "rate_limited", "message": "too many tournament connections: wait"}
            await refuse(ws, transport, error, 4429)
            return
        if not sockets_by_address.take(address, limits.sockets_per_address):
            error = {"type": "error", "code": "too_many_sockets", "message": "too many connections from one address"}
            await refuse(ws, transport, error, 4429)
            return
        try:
            refused = other_site(ws.headers, is_secure(ws))
            if refused is not None:
                await refuse(ws, transport, {"type": "error", "code": "bad_origin", "message": refused}, 4403)
                return
            if tournaments.open_sockets() >= limits.lobby_sockets:
                error = {"type": "error", "code": "busy", "message": "too many tournament pages open: try again soon"}
                await refuse(ws, transport, error, 4503)
                return
            if not is_id(tournament_id):
                await refuse(ws, transport, {"type": "error", "code": "no_tournament", "message": "no such"}, 4404)
                return
            try:
                _cookie, session_cookie = credentials(ws)
                account_id, name = None, None
                session = session_key(session_cookie or "")
                if session is not None:
                    account = await ctx.service.db(ctx.accounts.session, session)
                    if account is not None:
                        account_id, name = account.id, account.name
            except GameError as e:
                await refuse(ws, transport, e.to_dict(), 4503 if isinstance(e, Unavailable) else 4400)
                return
            await listen(ws, transport, tournament_id, account_id, name)
        finally:
            sockets_by_address.give_back(address)

    async def listen(
        ws: WebSocket, transport: asyncio.Transport | None, tournament_id: str, account_id: str | None, name: str | None
    ) -> None:
        bound_send_buffer(transport, limits.unread_bytes)

        async def send(text: str) -> None:
            if transport is not None and transport.get_write_buffer_size() > UNREAD_BYTES:
                reset(transport)
                raise RuntimeError("a socket that does not read")
            await ws.send_text(text)

        sock = TourSocket(tournament_id, account_id, send)
        rate = RateLimiter(limits.messages_per_second, limits.message_burst, max_keys=1)
        try:
            await tournaments.hello(sock)
            await tournaments.chat_hello(sock)
        except GameError as e:
            await refuse(ws, transport, e.to_dict(), 4404 if e.status == 404 else 4503)
            return
        tournaments.join_socket(sock)
        try:
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                if not rate.allow(""):
                    await send('{"type": "error", "code": "rate_limited", "message": "too many messages: wait"}')
                    continue
                data: Any = None
                if text is not None and len(text) <= limits.message_bytes:
                    try:
                        data = safejson.loads(text, max_depth=2)
                    except (ValueError, safejson.NestingError):
                        data = None
                kind = data.get("type") if isinstance(data, dict) else None
                if kind == "ping":
                    await send('{"type": "pong"}')
                elif kind == "page":
                    sock.page = _page(data.get("page"))
                    await tournaments.hello(sock)
                elif kind in ("chat", "report"):
                    try:
                        answer = await tournaments.chat_message(sock, name, data)
                    except GameError as e:
                        answer = {**e.to_dict(), "about": "chat"}
                    if answer is not None:
                        await send(json.dumps(answer))
                else:
                    await send(json.dumps({"type": "error", "code": "bad_message", "message": SOCKET_TAKES}))
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            tournaments.leave_socket(sock)

    return router
