"""Watching a game (docs/web.md, "Spectators"): its page ``/watch/<game id>``, the public table as JSON, and
the spectator's WebSocket ``/ws/watch/<game id>``, which sends the public table each time the game changes,
how many watch, and the spectators' chat (written by signed-in spectators).

Bounded like every socket: spectator sockets per address (``watch_sockets_per_address``) and per process
(``watch_sockets``), spectators per game (``spectators_per_game``), messages per socket. The socket carries
the spectator's account (it writes in the chat under their name), so it is opened only from this site's
own pages (``Origin``), as the lobby's is.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from fastapi import APIRouter, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import HTMLResponse

from ... import safejson
from ..accounts import session_key
from ..accountstore import Account
from ..chat import CHAT_TYPES, PHRASES, ChatError
from ..clientlog import client_log
from ..context import PARSE_INLINE, AppContext, account_of, address_of, credentials, other_site, translator
from ..cookies import is_secure
from ..games import GameError, LiveGame
from ..limits import Counter, RateLimiter
from ..rulelabels import rules_label
from ..sockets import UNREAD_BYTES, bound_send_buffer, refuse, reset

__all__ = ["make_router"]

log = logging.getLogger("koikoi.web")

# The close code a refused spectator's socket gets, by the error's code (the page tries again on 4503).
_CLOSE_CODES = {
    "no_game": 4404,
    "private_game": 4403,
    "playing_here": 4409,
    "broken": 4409,
    "unavailable": 4503,
    "two_cookies": 4400,
}


def make_router(ctx: AppContext) -> APIRouter:
    router = APIRouter()
    service, spectators, chat, limits = ctx.service, ctx.spectators, ctx.chat, ctx.limits
    sockets_by_address = Counter()

    def owners_of(browser: str | None, account: Account | None) -> set[str]:
        """Who a spectator is, as a seat's owner would name them: their browser, and their account."""
        return {o for o in (browser, account.owner if account is not None else None) if o}

    @router.get("/watch/{game_id}", response_class=HTMLResponse)
    async def watch_page(request: Request, game_id: str) -> HTMLResponse:
        account = account_of(request)
        browser = ctx.browsers.read(credentials(request)[0])
        game = await spectators.watchable(game_id, owners_of(browser, account))
        # A computer's seat is named as the table names it in the page's language ("Hana", not "Easy").
        t = translator(request)
        names = [
            t(f"computer.name.{game.stored.opponent}")
            if s.kind == "ai" and f"computer.name.{game.stored.opponent}" in t.catalog
            else s.name
            for s in game.seats
        ]
        return ctx.page(
            request,
            "table.html",
            "table",
            watch=True,
            names=names,
            rules_label=rules_label(translator(request), game.match.rules.to_dict()),
            config={"game_id": game.stored.id, "watch": True, "phrases": list(PHRASES)},
        )

    @router.get("/api/watch/{game_id}")
    async def watched(game_id: str) -> dict[str, Any]:
        game = await spectators.game(game_id)
        await service.catch_up(game)
        return {"state": service.spectator_view(game), "watchers": await spectators.count(game), "private": False}

    # -- the spectator's socket ---------------------------------------------------------------------------

    async def who(ws: WebSocket) -> tuple[str | None, Account | None]:
        cookie, session_cookie = credentials(ws)  # GameError two_cookies: the socket is refused
        browser = ctx.browsers.read(cookie)
        session = session_key(session_cookie or "")
        account = None if session is None else await service.db(ctx.accounts.session, session)
        return browser, account

    @router.websocket("/ws/watch/{game_id}")
    async def watch_socket(ws: WebSocket, game_id: str) -> None:
        address = address_of(ws)
        transport = ws.scope.get("koikoi.transport")
        if not sockets_by_address.take(address, limits.watch_sockets_per_address):
            await ws.accept()
            error = {
                "type": "error",
                "code": "too_many_sockets",
                "message": f"at most {limits.watch_sockets_per_address} games watched at once from one address",
            }
            await refuse(ws, transport, error, 4429)
            return
        try:
            await ws.accept()
            refused = other_site(ws.headers, is_secure(ws))
            if refused is not None:
                await refuse(ws, transport, {"type": "error", "code": "bad_origin", "message": refused}, 4403)
                return
            if spectators.open >= limits.watch_sockets:
                error = {"type": "error", "code": "busy", "message": "this server has all the spectators it can hold"}
                await refuse(ws, transport, error, 4503)
                return
            try:
                browser, account = await who(ws)
                game = await spectators.watchable(game_id, owners_of(browser, account))
                await spectators.room_for(game)
            except GameError as e:
                await refuse(ws, transport, e.to_dict(), _CLOSE_CODES.get(e.code, 4429))
                return
            await watch_on(ws, transport, game, account, address)
        finally:
            sockets_by_address.give_back(address)

    async def watch_on(
        ws: WebSocket, transport: asyncio.Transport | None, game: LiveGame, account: Account | None, address: str
    ) -> None:
        bound_send_buffer(transport, limits.unread_bytes)

        async def send(text: str) -> None:
            if transport is not None and transport.get_write_buffer_size() > UNREAD_BYTES:
                reset(transport)
                raise RuntimeError("a socket that does not read")
            await ws.send_text(text)

        rate = RateLimiter(limits.messages_per_second, limits.message_burst, max_keys=1)
        refused = {"bad_message": 0, "rate_limited": 0}
        spectators.join(game, send)
        try:
            await service.catch_up(game)  # another process may have moved since this one last looked
            await send(json.dumps({"type": "state", "state": service.spectator_view(game)}))
            await chat.hello_spectator(game, send, account is not None)
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                if not rate.allow(""):
                    reply: dict[str, Any] | None = {
                        "type": "error",
                        "code": "rate_limited",
                        "message": f"at most {limits.messages_per_second:g} messages a second: wait a moment",
                    }
                elif message.get("text") is None:
                    reply = {"type": "error", "code": "bad_message", "message": "messages are JSON text frames"}
                else:
                    reply = await answer(message["text"], game, account)
                if reply is not None:
                    if reply.get("code") in refused:
                        refused[reply["code"]] += 1
                    await send(json.dumps(reply))
        except (WebSocketDisconnect, RuntimeError):  # it closed, or stopped reading
            pass
        finally:
            spectators.leave(game, send)
            if refused["bad_message"] or refused["rate_limited"]:
                client_log.warn(
                    "client %s: %d malformed messages and %d over the rate on a spectator's socket of game %s",
                    address,
                    refused["bad_message"],
                    refused["rate_limited"],
                    game.stored.id,
                )

    async def answer(text: str, game: LiveGame, account: Account | None) -> dict[str, Any] | None:
        """The reply to one text message of a spectator's socket (None: no reply)."""
        try:
            if len(text) > limits.message_bytes:
                raise GameError("bad_message", f"a message has at most {limits.message_bytes} characters")
            try:
                if len(text) <= PARSE_INLINE:
                    msg = safejson.loads(text, max_depth=4)
                else:  # only where message_bytes was raised past the default
                    msg = await asyncio.get_running_loop().run_in_executor(ctx.parsers, safejson.loads, text, 4)
            except safejson.NestingError as e:
                raise GameError("bad_message", f"a message is a flat JSON object; this one is {e}") from None
            except ValueError:
                raise GameError("bad_message", "a message must be a JSON object") from None
            if not isinstance(msg, dict):
                raise GameError("bad_message", "a message must be a JSON object")
            kind = msg.get("type")
            now = service.live.get(game.stored.id) or game  # read again meanwhile (after a conflict)
            if kind == "ping":
                return {"type": "pong"}
            if kind == "bye":  # the page is closing (a cached page of an older release says so): nothing to do
                return None
            if kind == "state":
                await service.catch_up(now)
                return {"type": "state", "state": service.spectator_view(now)}
            if kind in CHAT_TYPES:
                return await chat.from_spectator(now, account, msg)
            shown = kind if isinstance(kind, str) and len(kind) <= 20 else "?"
            raise GameError("bad_message", f"unknown message type {shown!r}: use state, ping, bye, chat or report")
        except ChatError as e:
            return e.to_dict()
        except GameError as e:
            return e.to_dict()
        except Exception:  # never let one message take the server down
            log.exception("error answering a message on a spectator's socket of game %s", game.stored.id)
            return {"type": "error", "code": "server", "message": "the server could not handle that message"}

    return router
