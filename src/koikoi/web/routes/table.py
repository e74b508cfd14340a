"""The WebSocket a table plays over, ``/ws/<seat token>``: the seat's table sent, then each message
answered (a move, a hint, the table again, a ping) until the socket closes.

Every socket counts against its address from the start, a refused one too, and against its seat once
the seat is known (``sockets_per_address``, ``sockets_per_seat``); messages are rate-limited per
socket. A client that stops reading is reset once its socket holds ``unread_bytes``, so that it never
holds up the player whose move is being broadcast. A socket whose move was refused because the
database did not answer is told ``{"type": "available"}`` when it answers again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from ... import safejson
from .. import wire
from ..chat import CHAT_TYPES, ChatError
from ..clientlog import client_log
from ..context import PARSE_INLINE, AppContext, address_of
from ..games import GameError, Unavailable
from ..limits import Counter, RateLimiter
from ..sockets import UNREAD_BYTES, bound_send_buffer, refuse, reset

# What answer() returns for the page's "bye" (it is being closed): noted, never sent back.
BYE = "_bye"

__all__ = ["RETRY_AFTER", "RefusedSockets", "make_router"]

log = logging.getLogger("koikoi.web")
# How long a note of a player at or away from the table is retried while the database does not answer.
PRESENCE_RETRY_SECONDS = 60.0
# A socket that failed while the server wrote to it (the page closed meanwhile) may hold the page's last
# words unread: this many messages are looked at, each waited for this long, for a "bye" or a close
# with "going away" (1001), so that a tab closed before its table came still counts as closed.
LAST_WORDS = 4
LAST_WORDS_WAIT = 0.1

# When the database answers again, the sockets whose moves were refused are told so, this many every
# this many seconds (500 a second): about the moves a process stores in that time.
TELL_AT_ONCE = 25
TELL_EVERY = 0.05

# A socket refused because the database did not answer is told to come back after about this many
# seconds (the page waits between half and one and a half times it).
RETRY_AFTER = 5

Send = Callable[[dict[str, Any] | str], Awaitable[None]]


class RefusedSockets:
    """The sockets told 'unavailable' since the database last answered (their send functions): when it
    answers again, each is told so at once, and its page sends the refused move again without waiting
    for its own retry timer."""

    def __init__(self) -> None:
        self._sends: dict[Send, None] = {}  # a dict for its order: the first refused are told first
        self._telling: set[asyncio.Task[None]] = set()

    def add(self, send: Send) -> None:
        self._sends[send] = None

    def discard(self, send: Send) -> None:
        self._sends.pop(send, None)

    def database_back(self) -> None:
        """Tell every refused socket, in the background (called on the event loop)."""
        if not self._sends:
            return
        sends = list(self._sends)
        self._sends.clear()
        task = asyncio.get_running_loop().create_task(self._tell(sends))
        self._telling.add(task)
        task.add_done_callback(self._telling.discard)

    async def _tell(self, sends: list[Send]) -> None:
        # A few at a time: a crowd of moves sent again all at once would hold up every other request
        # of the process (health included) while it lands.
        for i, send in enumerate(sends):
            if i and i % TELL_AT_ONCE == 0:
                await asyncio.sleep(TELL_EVERY)
            try:
                await send({"type": "available"})
            except Exception:  # that socket closed or stopped reading: its own loop ends it
                pass


def make_router(ctx: AppContext) -> APIRouter:
    router = APIRouter()
    service, limits = ctx.service, ctx.limits
    sockets_by_address = Counter()
    sockets_by_seat = Counter()
    refused_sockets = RefusedSockets()
    service.db.on_return.append(refused_sockets.database_back)

    @router.websocket("/ws/{token}")
    async def socket(ws: WebSocket, token: str) -> None:
        address = address_of(ws)
        # uvicorn's transport, put in the scope by SecurityHeaders (koikoi.web.headers); None if it has none.
        transport = ws.scope.get("koikoi.transport")
        # Every socket counts against its address from the start, a refused one too, until it is closed.
        if not sockets_by_address.take(address, limits.sockets_per_address):
            await ws.accept()
            error = {
                "type": "error",
                "code": "too_many_sockets",
                "message": f"at most {limits.sockets_per_address} connections from one address",
            }
            await refuse(ws, transport, error, 4429)
            return
        try:
            await ws.accept()
            try:
                # ?game= names the game (the page's sockets do): its seats are read with it, in one trip
                seat, game = await service.seat_game(token, ws.query_params.get("game"), hello=True)
            except GameError as e:
                # 4503: the database did not answer, and the page tries again after retry_after seconds
                # (each page a different share of them: a crowd turned away comes back spread out);
                # 4404: no such seat.
                if isinstance(e, Unavailable):
                    await refuse(ws, transport, {**e.to_dict(), "retry_after": RETRY_AFTER}, 4503)
                else:
                    await refuse(ws, transport, e.to_dict(), 4404)
                return
            if not sockets_by_seat.take(seat.token, limits.sockets_per_seat):
                error = {
                    "type": "error",
                    "code": "too_many_sockets",
                    "message": f"this seat is open in {limits.sockets_per_seat} places already: close one of them",
                }
                await refuse(ws, transport, error, 4429)
                return
            closed = [False]
            first = sockets_by_seat.get(seat.token) == 1  # the first here: the player is at the table
            try:
                await play_on(ws, transport, token, seat.seat, game, address, closed, seat if first else None)
            finally:
                sockets_by_seat.give_back(seat.token)
                if sockets_by_seat.get(seat.token) == 0:
                    await present(
                        lambda: service.depart(seat, service.live.get(seat.game_id) or game, closed=closed[0]),
                        still=lambda: sockets_by_seat.get(seat.token) == 0,
                    )
        finally:
            sockets_by_address.give_back(address)

    retrying: set[asyncio.Task[None]] = set()  # notes of presence being asked again, held here

    async def present(change: Callable[[], Awaitable[None]], *, still: Callable[[], bool]) -> None:
        """Note a player arriving at or leaving the table. A database that does not answer is asked again,
        in the background, while the note still holds (``still``: no socket of the seat came or went
        since), for up to PRESENCE_RETRY_SECONDS: a lost "left" would keep a closed tab at the table, and
        its claim would come only with the clock. A retry is dropped once ``still`` is false, so an
        earlier note never overwrites a later one."""
        try:
            await change()
        except Unavailable as e:
            if still():
                task = asyncio.create_task(again(change, still, e))
                retrying.add(task)
                task.add_done_callback(retrying.discard)
        except Exception as e:
            log.warning("could not note a player at or away from the table: %s", e)

    async def again(change: Callable[[], Awaitable[None]], still: Callable[[], bool], error: Exception) -> None:
        deadline = time.monotonic() + PRESENCE_RETRY_SECONDS
        delay = 0.25
        while still():
            if time.monotonic() + delay > deadline:
                log.warning("could not note a player at or away from the table: %s", error)
                return
            await asyncio.sleep(delay)
            delay = min(2 * delay, 2.0)
            if not still():
                return
            try:
                await change()
                return
            except Unavailable as e:
                error = e
            except Exception as e:
                log.warning("could not note a player at or away from the table: %s", e)
                return

    async def play_on(
        ws: WebSocket,
        transport: asyncio.Transport | None,
        token: str,
        seat: int,
        game: Any,
        address: str,
        closed: list[bool],
        arriving: Any,
    ) -> None:
        """A seat's socket, once accepted: the table sent, then each message answered until it closes.
        ``closed[0]`` is set when the page said it is being closed (or the browser said it went away);
        ``arriving``, the seat, when this is its first socket here (the player is at the table now)."""
        # A message is written at once (no extra hop through a queue on the hot path), unless the socket
        # already holds unread bytes: a client that stops reading is closed instead of holding up the
        # player whose move is being broadcast.
        bound_send_buffer(transport, limits.unread_bytes)

        async def send(msg: dict[str, Any] | str) -> None:
            """A message, or its text already encoded (a broadcast encodes once for every socket)."""
            if transport is not None and transport.get_write_buffer_size() > UNREAD_BYTES:
                reset(transport)
                raise RuntimeError("a socket that does not read")
            await ws.send_text(msg if isinstance(msg, str) else wire.text(msg))

        rate = RateLimiter(limits.messages_per_second, limits.message_burst, max_keys=1)
        # The client's protocol errors, counted here and logged once, when the socket ends (clientlog).
        refused = {"bad_message": 0, "rate_limited": 0}
        game.listeners[seat].add(send)
        ctx.open_sockets += 1
        try:
            if arriving is not None:  # once the socket listens: the news of it comes back to this game
                await present(
                    lambda: service.arrive(arriving, game),
                    still=lambda: sockets_by_seat.get(arriving.token) > 0,
                )
            await service.catch_up(game)  # another process may have moved since this one last looked
            await send({"type": "state", "state": service.view(game, seat)})
            if ws.query_params.get("chat") == "1":  # a page with a chat: the players' chat, and how many watch
                await ctx.chat.hello_seat(game, seat, send)
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    closed[0] = closed[0] or message.get("code") == 1001  # "going away": the tab closed
                    break
                if not rate.allow(""):
                    reply: dict[str, Any] | None = {
                        "type": "error",
                        "code": "rate_limited",
                        "message": f"at most {limits.messages_per_second:g} messages a second: wait a moment",
                    }
                elif message.get("text") is None:
                    reply = {
                        "type": "error",
                        "code": "bad_message",
                        "message": "messages are JSON text frames, not binary",
                    }
                else:
                    reply = await answer(message["text"], token, seat)
                if reply is not None and reply.get("type") == BYE:
                    closed[0] = True
                    continue
                if reply is not None:
                    if reply.get("code") in refused:
                        refused[reply["code"]] += 1
                    elif reply.get("code") == "unavailable":
                        refused_sockets.add(send)
                    await send(reply)
        except (WebSocketDisconnect, RuntimeError):  # it closed, or stopped reading
            closed[0] = closed[0] or await said_goodbye(ws)
        finally:
            ctx.open_sockets -= 1
            refused_sockets.discard(send)
            # The game may have been rebuilt (after a conflict); drop the listener wherever it is.
            for g in (game, service.live.get(game.stored.id)):
                if g is not None:
                    g.listeners[seat].discard(send)
            service.forget_if_idle(game)
            if refused["bad_message"] or refused["rate_limited"]:
                client_log.warn(
                    "client %s: %d malformed messages and %d over the rate on a socket of game %s",
                    address,
                    refused["bad_message"],
                    refused["rate_limited"],
                    game.stored.id,
                )

    async def said_goodbye(ws: WebSocket) -> bool:
        """Whether a page whose socket ended while the server wrote to it had said that it is being closed
        (a "bye", or the close code 1001) in what it sent meanwhile and the server had not read yet."""
        for _ in range(LAST_WORDS):
            try:
                message = await asyncio.wait_for(ws.receive(), LAST_WORDS_WAIT)
            except Exception:  # nothing more came, or the socket cannot be read any more
                return False
            if message["type"] == "websocket.disconnect":
                return bool(message.get("code") == 1001)
            text = message.get("text")
            if not isinstance(text, str) or len(text) > limits.message_bytes or len(text) > PARSE_INLINE:
                continue
            try:
                msg = safejson.loads(text, max_depth=4)
            except ValueError:
                continue
            if isinstance(msg, dict) and msg.get("type") == "bye":
                return True
        return False

    async def answer(text: str, token: str, seat: int) -> dict[str, Any] | None:
        """The reply to one text message of a seat's socket (None: no reply)."""
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
            if kind == "action":
                return await service.act(token, msg.get("action"), msg.get("seq"))
            if kind == "hint":
                return await service.hint(token, msg.get("seq"))
            if kind == "state":
                seat_, game = await service.seat_game(token)
                await service.catch_up(game)
                return {"type": "state", "state": service.view(game, seat_.seat)}
            if kind == "ping":
                return {"type": "pong"}
            if kind in ("resign", "abort"):
                return await service.leave_game(token, kind)
            if kind == "claim":
                return await service.claim(token)
            if kind == "rematch":
                return await service.offer_rematch(token)
            if kind == "decline_rematch":
                return await service.decline_rematch(token)
            if kind == "bye":  # the page is being closed: the claim against this player comes sooner
                return {"type": BYE}
            if kind in CHAT_TYPES:  # the players' chat (koikoi.web.chat)
                return await ctx.chat.from_seat(token, msg)
            shown = kind if isinstance(kind, str) and len(kind) <= 20 else "?"
            raise GameError(
                "bad_message",
                f"unknown message type {shown!r}: use action, hint, state, ping, resign, abort, claim or rematch",
            )
        except ChatError as e:
            return e.to_dict()
        except GameError as e:
            out = e.to_dict()
            if e.code in ("stale", "not_your_turn", "unavailable"):
                out["state"] = await ctx.table_now(token)
            return out
        except Exception:  # never let one message take the server down; the player keeps their table
            log.exception("error answering a message on seat %s", seat)
            return {"type": "error", "code": "server", "message": "the server could not handle that message"}

    return router
