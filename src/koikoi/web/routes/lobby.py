"""The public lobby over HTTP and its WebSocket (docs/web.md, "The public lobby"): the lobby page, the
lobby as JSON, seeks created, cancelled and accepted, quick pairing, and ``/ws/lobby``, which pushes
the lobby as it changes and tells a player their own seat when their seek is accepted or they are paired.

Everything a client sends is bounded: seeks per player (``seeks_per_player``), seeks and pool requests
per address (``seeks_per_minute``), accepted seeks as new games (``games_per_minute``), lobby sockets per
address and per process (``sockets_per_address``, ``lobby_sockets``) and messages per socket. The socket
tells seat tokens, so it is opened only from this site's own pages (``Origin``), like every request that
changes something.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from fastapi import APIRouter, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import HTMLResponse, JSONResponse

from ..accounts import session_key
from ..accountstore import Account
from ..context import AppContext, account_of, address_of, credentials, other_site, owner_of, translator
from ..cookies import is_secure
from ..database import Unavailable
from ..errors import GameError
from ..limits import Counter, RateLimiter
from ..lobby import LEVEL_RATINGS, LobbySocket
from ..pairing import POOLS
from ..sockets import UNREAD_BYTES, bound_send_buffer, refuse, reset
from .pages import clock_label

__all__ = ["make_router"]

log = logging.getLogger("koikoi.web")


def make_router(ctx: AppContext) -> APIRouter:
    router = APIRouter()
    lobby, limits = ctx.lobby, ctx.limits
    seeking = RateLimiter(limits.seeks_per_minute / 60, limits.seeks_per_minute)
    opens = RateLimiter(limits.lobby_opens_per_minute / 60, limits.lobby_opens_per_minute)  # lobby sockets
    accepting = RateLimiter(limits.games_per_minute / 60, limits.games_per_minute)
    sockets_by_address = Counter()

    @router.get("/lobby", response_class=HTMLResponse)
    async def lobby_page(request: Request) -> HTMLResponse:
        tr = translator(request)
        return ctx.page(
            request,
            "online.html",
            "online",
            pools=list(POOLS.values()),
            pool_clocks={k: clock_label(tr, p.clock) for k, p in POOLS.items()},
            levels=LEVEL_RATINGS,
            config={
                "presets": ctx.preset_options,
                "pools": {k: {"preset": p.preset, "hands": p.hands, "clock": p.clock} for k, p in POOLS.items()},
                "levels": LEVEL_RATINGS,
                "offer_after": limits.computer_offer_seconds,
                "time_controls": list(ctx.service.time_controls),
            },
        )

    @router.get("/api/lobby")
    async def lobby_now(request: Request) -> dict[str, Any]:
        owner = owner_of(request)
        out = await lobby.listing(owner)
        if out["mine"]["seeks"] or out["mine"]["quick"]:
            await service_seen(owner)  # asking after the lobby keeps one's seeks, as a socket does
        out["levels"] = LEVEL_RATINGS
        out["offer_after"] = limits.computer_offer_seconds
        return out

    async def service_seen(owner: str) -> None:
        await ctx.service.db(lobby.store.seen, [owner])

    @router.post("/api/lobby/seeks")
    async def create_seek(request: Request) -> JSONResponse:
        data = await ctx.json_body(request)
        ctx.within(seeking, request, "too_many_seeks", f"at most {limits.seeks_per_minute} seeks a minute")
        data["name"] = await ctx.seat_name(request, data)
        seek = await lobby.create_seek(owner_of(request), account_of(request), data)
        return JSONResponse({"seek_id": seek.id, "seek": seek.shown()}, status_code=201)

    @router.delete("/api/lobby/seeks/{seek_id}")
    async def cancel_seek(request: Request, seek_id: str) -> dict[str, Any]:
        await lobby.cancel(seek_id, owner_of(request))
        return {"seek_id": seek_id, "cancelled": True}

    @router.post("/api/lobby/seeks/{seek_id}/accept")
    async def accept_seek(request: Request, seek_id: str) -> JSONResponse:
        data = await ctx.json_body(request)
        ctx.within(accepting, request, "too_many_games", f"at most {limits.games_per_minute} new games a minute")
        out = await lobby.accept(seek_id, owner_of(request), account_of(request), await ctx.seat_name(request, data))
        return JSONResponse(out, status_code=201)

    @router.post("/api/lobby/quick")
    async def quick(request: Request) -> JSONResponse:
        data = await ctx.json_body(request)
        ctx.within(seeking, request, "too_many_seeks", f"at most {limits.seeks_per_minute} seeks a minute")
        data["name"] = await ctx.seat_name(request, data)
        out = await lobby.quick(owner_of(request), account_of(request), data)
        return JSONResponse(out, status_code=201 if out["status"] == "waiting" else 200)

    @router.get("/api/lobby/quick/{entry_id}")
    async def quick_entry(request: Request, entry_id: str) -> dict[str, Any]:
        return await lobby.entry(entry_id, owner_of(request))

    @router.delete("/api/lobby/quick/{entry_id}")
    async def leave_pool(request: Request, entry_id: str) -> dict[str, Any]:
        try:
            await lobby.cancel(entry_id, owner_of(request))
        except GameError as e:
            if e.code == "seek_taken":
                raise GameError("paired", "you have been paired already: your game is among yours", 409) from None
            raise GameError("no_entry", "there is no such quick-pairing entry of yours (it ended)", 404) from None
        return {"entry_id": entry_id, "cancelled": True}

    # -- the lobby's socket -------------------------------------------------------------------------------

    async def who(ws: WebSocket) -> tuple[str | None, Account | None]:
        """Who opens a lobby socket: their browser id (the page set it), or their account's owner key."""
        cookie, session_cookie = credentials(ws)  # GameError two_cookies: the socket is refused
        owner = ctx.browsers.read(cookie)
        session = session_key(session_cookie or "")
        if session is not None:
            account = await ctx.service.db(ctx.accounts.session, session)
            if account is not None:
                return account.owner, account
        return owner, None

    # Declared before the tables' "/ws/{token}" is included (app.py): this path is the lobby's.
    @router.websocket("/ws/lobby")
    async def lobby_socket(ws: WebSocket) -> None:
        address = address_of(ws)
        transport = ws.scope.get("koikoi.transport")
        if not opens.allow(address):
            await ws.accept()
            error = {
                "type": "error",
                "code": "rate_limited",
                "message": f"at most {limits.lobby_opens_per_minute} lobby connections a minute from one address: "
                f"wait {opens.retry_after(address):.0f} s",
            }
            await refuse(ws, transport, error, 4429)
            return
        if not sockets_by_address.take(address, limits.sockets_per_address):
            await ws.accept()
            error = {
                "type": "error",
                "code": "too_many_sockets",
                "message": f"at most {limits.sockets_per_address} lobby connections from one address",
            }
            await refuse(ws, transport, error, 4429)
            return
        try:
            await ws.accept()
            refused = other_site(ws.headers, is_secure(ws))
            if refused is not None:
                await refuse(ws, transport, {"type": "error", "code": "bad_origin", "message": refused}, 4403)
                return
            if lobby.open_sockets >= limits.lobby_sockets:
                error = {"type": "error", "code": "busy", "message": "the lobby is full on this server: try again soon"}
                await refuse(ws, transport, error, 4503)
                return
            try:
                owner, _account = await who(ws)
            except GameError as e:  # the database is away (503), or a cookie came twice (400)
                await refuse(ws, transport, e.to_dict(), 4503 if isinstance(e, Unavailable) else 4400)
                return
            if owner is None:
                error = {"type": "error", "code": "no_cookie", "message": "open the lobby page first (for its cookie)"}
                await refuse(ws, transport, error, 4401)
                return
            await listen(ws, transport, owner)
        finally:
            sockets_by_address.give_back(address)

    async def listen(ws: WebSocket, transport: asyncio.Transport | None, owner: str) -> None:
        bound_send_buffer(transport, limits.unread_bytes)

        async def send(text: str) -> None:
            if transport is not None and transport.get_write_buffer_size() > UNREAD_BYTES:
                reset(transport)
                raise RuntimeError("a socket that does not read")
            await ws.send_text(text)

        sock = LobbySocket(owner, send)
        rate = RateLimiter(limits.messages_per_second, limits.message_burst, max_keys=1)
        lobby.join(sock)
        try:
            try:
                await lobby.hello(sock)
            except Unavailable as e:
                await send(json.dumps(e.to_dict()))
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                if not rate.allow(""):
                    await send('{"type": "error", "code": "rate_limited", "message": "too many messages: wait"}')
                elif text is not None and len(text) <= 64 and text.replace(" ", "") == '{"type":"ping"}':
                    await send('{"type": "pong"}')
                else:
                    await send(
                        '{"type": "error", "code": "bad_message", "message": '
                        '"the lobby socket only listens; it takes {\\"type\\": \\"ping\\"}"}'
                    )
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            lobby.leave(sock)

    return router
