"""Bots online over HTTP and WebSocket (docs/web.md, "Bots online"; :mod:`koikoi.web.bots`).

Three kinds of callers, each with its own credential and no other:

- a signed-in person manages the bots they run (``/api/account/bots...``: make one, make a token, shown
  once, revoke one): their session cookie, as for the rest of their account;
- anyone challenges a bot (``/api/challenges...``, the bot's player page), as a guest or signed in,
  and asks after the challenge until the bot answers (their seat comes in that answer);
- a bot, with ``Authorization: Bearer <token>`` and nothing else, on ``/api/bot/...``: its stream of
  games and challenges, accepting and declining, its seeks. No cookie is read there (the app's
  ``identify`` middleware skips the session of a bot API request, and refuses a bot's token anywhere
  else).

Bounded as everything else: bot API calls per address (``messages_per_second``, ``message_burst``, as
a socket's messages), before the token is looked up; games made per address (``games_per_minute``);
bots made per address (``signups_per_hour``: a bot is an account); challenges per address
(``seeks_per_minute``) and per challenger (``seeks_per_player``); streams per address
(``sockets_per_address``) and per bot on a process (``sockets_per_seat``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fastapi import APIRouter, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse

from ..accountstore import Account
from ..bots import BotStream
from ..context import AppContext, account_of, address_of, owner_of
from ..database import Unavailable
from ..errors import GameError
from ..limits import Counter, RateLimiter
from ..sockets import UNREAD_BYTES, bound_send_buffer, refuse, reset

__all__ = ["make_router"]


def make_router(ctx: AppContext) -> APIRouter:
    router = APIRouter()
    bots, lobby, limits = ctx.bots, ctx.lobby, ctx.limits
    calls = RateLimiter(limits.messages_per_second, limits.message_burst)
    accepting = RateLimiter(limits.games_per_minute / 60, limits.games_per_minute)
    making = RateLimiter(limits.signups_per_hour / 3600, limits.signups_per_hour)
    challenging = RateLimiter(limits.seeks_per_minute / 60, limits.seeks_per_minute)
    streams_by_address = Counter()

    def require(request: Request) -> Account:
        account = account_of(request)
        if account is None:
            raise GameError("not_signed_in", "sign in first", 401)
        return account

    # -- the bots a person runs ---------------------------------------------------------------------------

    @router.get("/api/account/bots")
    async def my_bots(request: Request) -> dict[str, Any]:
        account = require(request)
        listed = await ctx.service.db(bots.store.bots_of, account.id)
        return {
            "bots": [
                {
                    "name": bot.name,
                    "url": f"/@/{bot.name}",
                    "created": bot.created.isoformat(),
                    "online": bot.online,
                    "tokens": [
                        {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in t.items()} for t in tokens
                    ],
                }
                for bot, tokens in listed
            ]
        }

    @router.post("/api/account/bots")
    async def make_bot(request: Request) -> JSONResponse:
        account = require(request)
        data = await ctx.json_body(request)
        ctx.within(making, request, "rate_limited", f"at most {limits.signups_per_hour} new accounts an hour")
        bot = await bots.make_bot(account, data.get("name"))
        return JSONResponse({"name": bot.name, "url": f"/@/{bot.name}", "owner": account.name}, status_code=201)

    @router.post("/api/account/bots/{name}/tokens")
    async def make_token(request: Request, name: str) -> JSONResponse:
        bot = await bots.owned(require(request), name)
        ctx.within(making, request, "rate_limited", f"at most {limits.signups_per_hour} new tokens an hour")
        return JSONResponse(await bots.new_token(bot), status_code=201)

    @router.delete("/api/account/bots/{name}/tokens/{hint}")
    async def revoke_token(request: Request, name: str, hint: str) -> dict[str, Any]:
        bot = await bots.owned(require(request), name)
        return {"bot": bot.name, "hint": hint, "revoked": await bots.revoke(bot, hint)}

    # -- challenging a bot --------------------------------------------------------------------------------

    @router.post("/api/challenges")
    async def challenge(request: Request) -> JSONResponse:
        data = await ctx.json_body(request)
        ctx.within(
            challenging, request, "too_many_challenges", f"at most {limits.seeks_per_minute} challenges a minute"
        )
        account = account_of(request)
        data["name"] = await ctx.seat_name(request, data)
        out = await bots.challenge(owner_of(request), account, data)
        return JSONResponse(out, status_code=201)

    @router.get("/api/challenges/{challenge_id}")
    async def challenge_now(request: Request, challenge_id: str) -> dict[str, Any]:
        return await bots.asked(challenge_id, owner_of(request))

    @router.delete("/api/challenges/{challenge_id}")
    async def cancel_challenge(request: Request, challenge_id: str) -> dict[str, Any]:
        return await bots.cancel(challenge_id, owner_of(request))

    # -- the bot API --------------------------------------------------------------------------------------

    async def the_bot(request: Request) -> Any:
        ctx.within(calls, request, "rate_limited", f"at most {limits.messages_per_second:g} bot API calls a second")
        bot, _key = await bots.authenticate(request.headers.get("authorization"))
        return bot

    @router.get("/api/bot/account")
    async def bot_account(request: Request) -> dict[str, Any]:
        bot = await the_bot(request)
        return {
            "name": bot.name,
            "url": f"/@/{bot.name}",
            "created": bot.created.isoformat(),
            "owner": bot.owner_name,
            "online": bot.online,
        }

    @router.post("/api/bot/challenges/{challenge_id}/accept")
    async def accept(request: Request, challenge_id: str) -> JSONResponse:
        bot = await the_bot(request)
        ctx.within(accepting, request, "too_many_games", f"at most {limits.games_per_minute} new games a minute")
        return JSONResponse(await bots.accept(bot, challenge_id), status_code=201)

    @router.post("/api/bot/challenges/{challenge_id}/decline")
    async def decline(request: Request, challenge_id: str) -> dict[str, Any]:
        bot = await the_bot(request)
        has_body = request.headers.get("content-length", "0") != "0" or "transfer-encoding" in request.headers
        data = await ctx.json_body(request) if has_body else {}
        return await bots.decline(bot, challenge_id, data.get("reason"))

    @router.get("/api/bot/seeks")
    async def bot_seeks(request: Request) -> dict[str, Any]:
        bot = await the_bot(request)
        mine = await ctx.service.db(lobby.store.mine, bot.owner)
        return {"seeks": [{**s.shown(), "bot": True} for s in mine if s.pool is None]}

    @router.post("/api/bot/seeks")
    async def bot_seek(request: Request) -> JSONResponse:
        bot = await the_bot(request)
        data = await ctx.json_body(request)
        ctx.within(challenging, request, "too_many_seeks", f"at most {limits.seeks_per_minute} seeks a minute")
        data["name"] = bot.name
        seek = await lobby.create_seek(bot.owner, bot.account, data)
        return JSONResponse({"seek_id": seek.id, "seek": {**seek.shown(), "bot": True}}, status_code=201)

    @router.delete("/api/bot/seeks/{seek_id}")
    async def bot_cancel_seek(request: Request, seek_id: str) -> dict[str, Any]:
        bot = await the_bot(request)
        await lobby.cancel(seek_id, bot.owner)
        return {"seek_id": seek_id, "cancelled": True}

    @router.post("/api/bot/quick")
    async def bot_quick(request: Request) -> dict[str, Any]:
        await the_bot(request)  # a bad token is told so first
        raise GameError(
            "bot_quick",
            "bots do not enter quick pairing, which is for people: post a seek (POST /api/bot/seeks) "
            "or wait for people's challenges",
            403,
        )

    # -- the bot's stream ---------------------------------------------------------------------------------

    @router.websocket("/api/bot/stream")
    async def stream(ws: WebSocket) -> None:
        address = address_of(ws)
        transport = ws.scope.get("koikoi.transport")
        if not streams_by_address.take(address, limits.sockets_per_address):
            await ws.accept()
            error = {
                "type": "error",
                "code": "too_many_sockets",
                "message": f"at most {limits.sockets_per_address} bot streams from one address",
            }
            await refuse(ws, transport, error, 4429)
            return
        try:
            await ws.accept()
            if not calls.allow(address):
                error = {"type": "error", "code": "rate_limited", "message": "too many bot API calls: wait a moment"}
                await refuse(ws, transport, error, 4429)
                return
            try:
                bot, key = await bots.authenticate(ws.headers.get("authorization"))
            except GameError as e:
                await refuse(ws, transport, e.to_dict(), 4503 if isinstance(e, Unavailable) else 4401)
                return
            if bots.streams_of(bot.id) >= limits.sockets_per_seat:
                error = {
                    "type": "error",
                    "code": "too_many_sockets",
                    "message": f"{bot.name} has {limits.sockets_per_seat} streams open here already: close one",
                }
                await refuse(ws, transport, error, 4429)
                return
            await listen(ws, transport, bot, key)
        finally:
            streams_by_address.give_back(address)

    async def listen(ws: WebSocket, transport: asyncio.Transport | None, bot: Any, key: str) -> None:
        bound_send_buffer(transport, limits.unread_bytes)

        async def send(text: str) -> None:
            if transport is not None and transport.get_write_buffer_size() > UNREAD_BYTES:
                reset(transport)
                raise RuntimeError("a socket that does not read")
            await ws.send_text(text)

        async def close(reason: str) -> None:
            await refuse(ws, transport, {"type": "error", "code": "bot_token", "message": reason}, 4401)

        hello = {"type": "hello", "bot": {"name": bot.name, "url": f"/@/{bot.name}", "owner": bot.owner_name}}
        await send(json.dumps(hello))
        one = BotStream(bot, key, send, close)
        place = bots.join(one)
        rate = RateLimiter(limits.messages_per_second, limits.message_burst, max_keys=1)
        try:
            while not one.ended:
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
                        '{"type": "error", "code": "bad_message", "message": "the bot stream takes '
                        '{\\"type\\": \\"ping\\"}; answer challenges over HTTP (/api/bot/challenges/<id>/accept)"}'
                    )
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            bots.leave(one, place)

    return router
