"""The web app: pages, the JSON API and the WebSocket a table plays over (FastAPI / Starlette).

``create_app(database_url)`` builds it; ``koikoi serve`` runs it with uvicorn (:mod:`koikoi.web.server`).
Every route that acts on a game goes through :class:`~koikoi.web.games.GameService`, which is the only
place that changes a game. A browser is known by a random cookie (``koikoi_id``) so that the lobby can
list its games; a seat is reached by its secret token, which is in the table's address and given only
to the player of that seat. A friend is invited with a separate token that is spent when they join.

Everything from a client is bounded before it is looked at: body sizes, JSON nesting, message rates,
sockets per seat and per address, games created per minute (:class:`~koikoi.web.limits.Limits`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import socket as socketlib
import struct
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__, safejson
from ..ai import AGENT_NAMES
from ..cards import CARD_NAMES, MONTH_NAMES, NUM_CARDS, kind_of
from ..rules import PRESETS, RuleSet
from ..yaku import YAKU_NAMES
from .browsers import BrowserIds
from .cardart import CardArt
from .clientlog import client_log
from .games import OPPONENTS, GameError, GameService, Unavailable, rules_from_request
from .headers import SecurityHeaders
from .i18n import LANGUAGES, Translator, choose_language
from .limits import Counter, Limits, RateLimiter
from .looplag import LoopLag
from .replays import Replays
from .reviews import ReviewService
from .store import Store
from .workers import JobError, ThinkPool

__all__ = ["create_app"]

# When the database answers again, the sockets whose moves were refused are told so, this many every
# this many seconds (500 a second): about the moves a process stores in that time.
TELL_AT_ONCE = 25
TELL_EVERY = 0.05

log = logging.getLogger("koikoi.web")

HERE = Path(__file__).parent
COOKIE = "koikoi_id"
LANG_COOKIE = "koikoi_lang"
_TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{8,64}")
_CARD_RE = re.compile(r"[0-9]|[1-3][0-9]|4[0-7]|back")
# A JSON body longer than this is parsed off the event loop (a linear parse, but 64 KB is still ~1 ms).
_PARSE_INLINE = 4096
_UNREAD_BYTES = 32 * 1024  # written but not taken by the kernel (its buffer is full): the client is not reading


def script_json(value: Any) -> str:
    """JSON that is safe inside a ``<script type="application/json">`` element: no ``<``, ``>`` or ``&``
    survives, so no text of a player's (or of an address) can end the element or open a comment."""
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class _KoiKoiApp(FastAPI):
    """FastAPI with :class:`SecurityHeaders` outside every other layer, Starlette's last-resort error
    handler included, so that even a 500 carries the security headers."""

    def build_middleware_stack(self) -> Any:
        return SecurityHeaders(super().build_middleware_stack())


def _bound_send_buffer(transport: Any, unread_bytes: int) -> None:
    """Give a WebSocket's kernel send buffer a fixed size, so that a client that stops reading is seen
    (and closed) after ``unread_bytes``. Left to itself, Linux grows the buffer up to tcp_wmem's largest
    (4 MB by default; over a megabyte on loopback for a client that never read a byte): that much would
    be answered, and held, before the server's own buffer fills."""
    sock = transport.get_extra_info("socket") if transport is not None else None
    if sock is None:
        return
    try:
        # What the server itself holds (_UNREAD_BYTES) counts too; Linux doubles the size it is asked
        # for, to cover its own bookkeeping, so half of the rest is asked.
        sock.setsockopt(socketlib.SOL_SOCKET, socketlib.SO_SNDBUF, (unread_bytes - _UNREAD_BYTES) // 2)
    except OSError:
        log.warning("could not bound a WebSocket's send buffer", exc_info=True)


def _reset(transport: Any) -> None:
    """End a connection at once, dropping what it has not sent: a TCP reset. A plain close (even
    asyncio's abort) leaves the kernel to send the unread bytes and then a FIN, to a client that reads
    nothing: the socket would linger, its buffer held, and the client would never hear of it."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socketlib.SOL_SOCKET, socketlib.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            log.warning("could not set a WebSocket to reset on close", exc_info=True)
    transport.abort()


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


def _option_specs() -> list[dict[str, Any]]:
    """Every rule option with its type, choices and bounds, for the lobby's editor."""
    import dataclasses

    specs = []
    for f in dataclasses.fields(RuleSet):
        if f.name == "name":
            continue
        meta = f.metadata
        kind = "bool" if f.type in ("bool", bool) else "int" if f.type in ("int", int) else "str"
        specs.append(
            {
                "name": f.name,
                "type": kind,
                "choices": list(meta.get("choices") or []),
                "minimum": meta.get("minimum"),
                "maximum": meta.get("maximum"),
                "doc": meta.get("doc", ""),
            }
        )
    return specs


def create_app(
    database_url: str,
    *,
    card_art: str | Path | None = None,
    ai_delay: float = 0.6,
    ai_options: dict[str, dict[str, Any]] | None = None,
    limits: Limits | None = None,
) -> FastAPI:
    """The app on the database at ``database_url`` (a file path or SQLAlchemy URL)."""
    limits = limits or Limits()
    store = Store(database_url)
    browsers = BrowserIds(store.engine)
    art = CardArt(card_art)
    service = GameService(store, limits=limits, ai_options=ai_options, ai_delay=ai_delay)
    creations = RateLimiter(limits.games_per_minute / 60, limits.games_per_minute)
    replay_rate = RateLimiter(limits.replays_per_minute / 60, limits.replays_per_minute)
    action_rate = RateLimiter(limits.http_actions_per_second, limits.http_action_burst)
    sockets_by_address = Counter()
    sockets_by_seat = Counter()
    open_sockets = [0]  # the tables' WebSockets open on this process, for /api/health
    # The sockets told 'unavailable' since the database last answered (their send functions): when it
    # answers again, each is told so at once, and its page sends the refused move again without waiting
    # for its own retry timer.
    refused_sockets: dict[Callable[[dict[str, Any]], Awaitable[None]], None] = {}
    telling: set[asyncio.Task[None]] = set()

    async def tell_available(sends: list[Callable[[dict[str, Any]], Awaitable[None]]]) -> None:
        # A few at a time: a crowd of moves sent again all at once would hold up every other request
        # of the process (health included) while it lands.
        for i, send in enumerate(sends):
            if i and i % TELL_AT_ONCE == 0:
                await asyncio.sleep(TELL_EVERY)
            try:
                await send({"type": "available"})
            except Exception:  # that socket closed or stopped reading: its own loop ends it
                pass

    def database_back() -> None:
        if not refused_sockets:
            return
        sends = list(refused_sockets)
        refused_sockets.clear()
        task = asyncio.get_running_loop().create_task(tell_available(sends))
        telling.add(task)
        task.add_done_callback(telling.discard)

    service.db.on_return.append(database_back)
    loop_lag = LoopLag()  # how late the event loop runs, for /api/health
    replays = asyncio.Semaphore(2)  # record uploads being read at once; more are refused
    records_pool = ThinkPool(1, hints_pending=1)  # its own worker: records never wait behind the computer
    # Game reviews, one decision at a time, on the records' worker (after any record upload).
    reviews = ReviewService(service, records_pool, limits)
    finished = Replays(records_pool)  # finished games' records and replays, written out once
    parsers = ThreadPoolExecutor(2, thread_name_prefix="koikoi-json")  # large request bodies
    templates = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(["html"]))
    option_specs = _option_specs()
    preset_options = {n: r.to_dict() for n, r in PRESETS.items()}

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        await records_pool.start()
        lag_task = asyncio.get_running_loop().create_task(loop_lag.run())
        n = await service.start()
        if n:
            log.info("resumed %d games against the computer", n)
        yield
        lag_task.cancel()
        await reviews.close()
        await service.close()
        await records_pool.close()
        parsers.shutdown(wait=False, cancel_futures=True)
        store.close()

    app = _KoiKoiApp(
        title="Koi-Koi",
        version=__version__,
        lifespan=lifespan,
        docs_url="/api/docs",
        redoc_url=None,
        # No "/x/" -> "/x" redirects: their Location would be built from the client's Host header.
        redirect_slashes=False,
    )
    app.state.store = store
    app.state.service = service
    app.state.limits = limits
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    # -- who is asking, in which language ---------------------------------------------------------------

    def owner_of(request: Request) -> str:
        return request.state.owner  # type: ignore[no-any-return]

    def address_of(request: Request | WebSocket) -> str:
        return request.client.host if request.client else "?"

    def adopted(browser: str) -> bool:
        # On a database thread: whether a bare id from before ids were signed holds a seat, and is
        # adopted by this browser now.
        return browsers.adopt(browser, bool(store.games_of(browser, limit=1)))

    async def adopt(browser: str) -> bool:
        try:
            return await service.db(adopted, browser)
        except Exception:  # the database is away: adopt nothing now, the browser may show the id again
            log.warning("could not look up a browser id from before ids were signed", exc_info=True)
            return False

    @app.middleware("http")
    async def identify(request: Request, call_next):
        # The browser's id, from a cookie this server signed (koikoi.web.browsers); anything else is
        # replaced by a fresh id, never adopted, so that no one can plant an id of their choosing.
        raw = request.cookies.get(COOKIE)
        owner = browsers.read(raw)
        fresh: str | None = None
        if owner is None:
            if raw is not None and browsers.may_be_bare(raw) and await adopt(raw):
                owner, fresh = raw, browsers.cookie(raw)
            else:
                owner, fresh = browsers.issue()
        request.state.owner = owner
        response = await call_next(request)
        # Over HTTPS (directly, or behind a proxy named with --forwarded-allow-ips), cookies travel only so.
        secure = request.url.scheme == "https"
        if fresh is not None:
            response.set_cookie(COOKIE, fresh, max_age=5 * 365 * 86400, httponly=True, samesite="lax", secure=secure)
        lang = request.query_params.get("lang")
        if lang in LANGUAGES:
            response.set_cookie(LANG_COOKIE, lang, max_age=365 * 86400, samesite="lax", secure=secure)
        return response

    def within(rate: RateLimiter, request: Request, code: str, limit: str) -> None:
        """Refuse (429) a request over one of the per-address rates; ``limit`` says what the rate is."""
        address = address_of(request)
        if not rate.allow(address):
            raise GameError(code, f"{limit} from one address: try again in {rate.retry_after(address):.0f} s", 429)

    def translator(request: Request) -> Translator:
        lang = choose_language(
            request.query_params.get("lang"), request.cookies.get(LANG_COOKIE), request.headers.get("accept-language")
        )
        return Translator(lang)

    def page(request: Request, name: str, page_kind: str, **context: Any) -> HTMLResponse:
        tr = translator(request)
        config = {
            "page": page_kind,
            "lang": tr.lang,
            "version": __version__,
            "cards": list(CARD_NAMES),
            "kinds": [kind_of(c).name.lower() for c in range(NUM_CARDS)],
            "months": list(MONTH_NAMES),
            **context.pop("config", {}),
        }
        html = templates.get_template(name).render(
            t=tr,
            lang=tr.lang,
            languages=LANGUAGES,
            request=request,
            version=__version__,
            config_json=script_json(config),
            catalog_json=script_json(tr.catalog),
            **context,
        )
        return HTMLResponse(html)

    def error(e: GameError) -> JSONResponse:
        # A body refused before it was read (too large, too slow) ends the connection: what is left of
        # it must not be taken for the next request.
        headers = {"Connection": "close"} if e.status in (408, 413) else None
        if isinstance(e, Unavailable):
            headers = {"Retry-After": "1"}
        return JSONResponse({"error": e.code, "message": e.message}, status_code=e.status, headers=headers)

    async def read_body(request: Request, limit: int, what: str) -> bytes:
        """The request's body, refused (413) past ``limit`` bytes and (408) when it comes too slowly."""
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isascii() or not declared.isdigit() or int(declared) > limit):
            raise GameError("too_large", f"{what} is at most {limit} bytes", 413)
        chunks: list[bytes] = []
        size = 0

        async def read() -> None:
            nonlocal size
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise GameError("too_large", f"{what} is at most {limit} bytes", 413)
                chunks.append(chunk)

        try:
            await asyncio.wait_for(read(), limits.body_timeout)
        except TimeoutError:
            raise GameError("too_slow", f"the request's body took longer than {limits.body_timeout:g} s", 408) from None
        return b"".join(chunks)

    async def json_body(request: Request) -> dict[str, Any]:
        # Only JSON: a plain form posted from another site cannot create or join games in your name.
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            raise GameError("bad_message", "send the request as JSON (Content-Type: application/json)", 415)
        raw = await read_body(request, limits.json_bytes, "a request")
        try:
            if len(raw) <= _PARSE_INLINE:
                data = safejson.loads(raw or b"{}", max_depth=8)
            else:  # a large body is parsed in a thread: the event loop keeps serving every game meanwhile
                data = await asyncio.get_running_loop().run_in_executor(parsers, safejson.loads, raw, 8)
        except safejson.NestingError as e:
            raise GameError("bad_message", f"the request body is {e}") from None
        except (ValueError, UnicodeDecodeError):
            raise GameError("bad_message", "the request body is not valid JSON") from None
        if not isinstance(data, dict):
            raise GameError("bad_message", "the request body must be a JSON object")
        return data

    @app.exception_handler(GameError)
    async def game_error(request: Request, e: GameError) -> Response:
        if request.url.path.startswith("/api/"):
            return error(e)
        # A page (an old or mistyped link): say what is wrong, in the player's language.
        tr = translator(request)
        key = f"error.{e.code}"
        response = page(request, "error.html", "error", message=tr(key) if key in tr.catalog else e.message)
        response.status_code = e.status
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, e: RequestValidationError) -> Response:
        # A query or path value of the wrong type (``?seq=x``): our error format, naming the field.
        first = e.errors()[0] if e.errors() else {}
        where = ".".join(str(x) for x in first.get("loc", ()) if x not in ("query", "path", "body"))
        message = f"{where or 'the request'}: {first.get('msg', 'not valid')}"[:200]
        return error(GameError("bad_message", message, 422))

    @app.exception_handler(Exception)
    async def server_error(request: Request, e: Exception) -> Response:
        # The last resort, a bug of ours: logged, and answered as JSON (SecurityHeaders adds the headers
        # and "Connection: close"), never with the traceback.
        log.error("error answering %s %s", request.method, request.url.path, exc_info=e)
        return JSONResponse({"error": "server", "message": "the server could not handle that request"}, 500)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, e: StarletteHTTPException) -> Response:
        # The API keeps its JSON errors; an address a browser asks for that leads nowhere gets a page.
        if e.status_code != 404 or request.url.path.startswith("/api/"):
            return await http_exception_handler(request, e)
        response = page(request, "error.html", "error", message=translator(request)("error.not_found"))
        response.status_code = 404
        return response

    # -- pages --------------------------------------------------------------------------------------------

    @app.get("/", response_class=HTMLResponse)
    async def lobby(request: Request) -> HTMLResponse:
        return page(
            request,
            "lobby.html",
            "lobby",
            config={"presets": preset_options, "options": option_specs, "opponents": list(OPPONENTS)},
        )

    @app.get("/play/{token}", response_class=HTMLResponse)
    async def table(request: Request, token: str) -> Response:
        seat, game = await service.seat_game(token)
        if seat.owner is None:  # a game made before invitations had tokens of their own
            return RedirectResponse(f"/invite/{token}", status_code=303)
        return page(request, "table.html", "table", config={"token": token, "game_id": game.stored.id})

    @app.get("/invite/{token}", response_class=HTMLResponse)
    async def invite(request: Request, token: str) -> Response:
        mine, game = await service.invitation(token, owner_of(request))
        if mine is not None:  # the friend again, from the browser that joined: their own table
            return RedirectResponse(f"/play/{mine}", status_code=303)
        host = game.seats[0].name
        tr, rules = translator(request), game.match.rules
        return page(
            request,
            "invite.html",
            "invite",
            host=host,
            rules=rules_label(tr, rules),
            length=match_length(tr, rules),
            config={"token": token},
        )

    @app.get("/replay/{game_id}", response_class=HTMLResponse)
    async def replay_page(request: Request, game_id: str, token: str = "") -> HTMLResponse:
        if not _TOKEN_RE.fullmatch(game_id) or (token and not _TOKEN_RE.fullmatch(token)):
            raise GameError("no_game", "no game has this address", 404)
        return page(request, "replay.html", "replay", config={"game_id": game_id, "token": token})

    @app.get("/replay", response_class=HTMLResponse)
    async def replay_upload(request: Request) -> HTMLResponse:
        return page(request, "replay.html", "replay", config={"game_id": None, "token": None})

    @app.get("/rules", response_class=HTMLResponse)
    async def rules_page(request: Request, preset: str = "nintendo") -> HTMLResponse:
        if preset not in PRESETS:
            preset = "nintendo"
        r = PRESETS[preset]
        yaku_points = {y: getattr(r, y.replace("-", "_"), None) for y in YAKU_NAMES}
        return page(
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

    # -- the API ------------------------------------------------------------------------------------------

    def local_health() -> dict[str, Any]:
        """This process's health; never waits on the database (a load balancer's liveness check)."""
        siblings = getattr(app.state, "siblings", None)  # koikoi serve --workers N: which worker this is
        me = siblings.identity() if siblings is not None else {"worker": 0, "workers": 1}
        return {
            "ok": True,
            **me,
            "pid": os.getpid(),
            "version": __version__,
            "live_games": len(service.live),
            "sockets": open_sockets[0],
            "actions": service.actions,
            "computer_moves": service.computer_moves,
            "ai_processes": len(service.pool.pids) + len(records_pool.pids),
            # With other processes on the database: whether this one hears their moves.
            "listening": None if service.listener is None else service.listener.connected,
            "database": service.db.state(),
            "loop": loop_lag.state(),
        }

    app.state.local_health = local_health

    @app.get("/api/health")
    async def health(all: str = "") -> dict[str, Any]:
        me = local_health()
        if all not in ("", "0"):
            siblings = getattr(app.state, "siblings", None)
            # A copy: the list holds this worker's health too, which must not hold the list.
            me["all"] = await siblings.health_all(me.copy()) if siblings is not None else [me.copy()]
        return me

    @app.get("/api/ready")
    async def ready() -> JSONResponse:
        """For a load balancer's readiness check: 503 while the database does not answer."""
        db = service.db.state()
        return JSONResponse({"ready": db["reachable"], "database": db}, status_code=200 if db["reachable"] else 503)

    @app.get("/api/presets")
    async def presets() -> dict[str, Any]:
        return {
            "presets": preset_options,
            "options": option_specs,
            "opponents": list(OPPONENTS),
            "levels": list(AGENT_NAMES),
        }

    @app.post("/api/rules/check")
    async def check_rules(request: Request) -> dict[str, Any]:
        return {"rules": rules_from_request((await json_body(request)).get("rules")).to_dict()}

    @app.post("/api/games")
    async def create_game(request: Request) -> JSONResponse:
        data = await json_body(request)
        within(creations, request, "too_many_games", f"at most {limits.games_per_minute} new games a minute")
        created = await service.create(
            owner=owner_of(request),
            name=data.get("name"),
            opponent=data.get("opponent"),
            rules=data.get("rules"),
            birth_months=data.get("birth_months"),
        )
        created["url"] = f"/play/{created['token']}"
        if "invite_token" in created:
            created["invite_url"] = f"/invite/{created['invite_token']}"
        response = JSONResponse(created, status_code=201)
        return response

    @app.get("/api/games")
    async def my_games(request: Request, before: str = "") -> dict[str, Any]:
        if len(before) > 100:
            raise GameError("bad_cursor", "'before' must be the 'next' value of the previous page")
        return await service.games_of(owner_of(request), before=before or None)

    @app.post("/api/invite/{token}/join")
    async def join(request: Request, token: str) -> dict[str, Any]:
        data = await json_body(request)
        out = await service.join(token, owner=owner_of(request), name=data.get("name"))
        out["url"] = f"/play/{out['token']}"
        return out

    @app.get("/api/seat/{token}")
    async def state(token: str) -> dict[str, Any]:
        seat, game = await service.seat_game(token)
        await service.catch_up(game)
        return service.view(game, seat.seat)

    @app.post("/api/seat/{token}/action", response_model=None)
    async def act(request: Request, token: str) -> dict[str, Any] | JSONResponse:
        within(
            action_rate,
            request,
            "rate_limited",
            f"at most {limits.http_actions_per_second:g} actions a second over HTTP",
        )
        data = await json_body(request)
        try:
            return await service.act(token, data.get("action"), data.get("seq"))
        except Unavailable as e:  # the move is not stored (yet): the table as it is, to try again from
            out = {"error": e.code, "message": e.message, "state": await table_now(token)}
            return JSONResponse(out, status_code=e.status, headers={"Retry-After": "1"})

    @app.get("/api/seat/{token}/hint")
    async def hint(token: str, seq: int) -> dict[str, Any]:
        return await service.hint(token, seq)

    def limit_replays(request: Request) -> None:
        within(
            replay_rate, request, "rate_limited", f"at most {limits.replays_per_minute} replays and records a minute"
        )

    async def written_out(game_id: str, token: str) -> tuple[str, str]:
        """A finished game's record and replay (JSON texts), worked out once, off the event loop."""
        game = await service.finished_game(game_id, token)
        try:
            return await finished.get(game.stored.id, lambda: service.record_of(game))
        except (JobError, RuntimeError) as e:
            raise GameError("busy", f"the record could not be written out now: {e}", 503) from None

    @app.get("/api/games/{game_id}/record")
    async def record(request: Request, game_id: str, token: str = "") -> Response:
        limit_replays(request)
        text, _replay = await written_out(game_id, token)
        return Response(
            text,
            media_type="application/json",
            headers={"Content-Disposition": f'attachment; filename="koikoi-{game_id}.json"'},
        )

    @app.get("/api/games/{game_id}/replay")
    async def replay_of_game(request: Request, game_id: str, token: str = "") -> Response:
        limit_replays(request)
        _text, replay = await written_out(game_id, token)
        return Response(replay, media_type="application/json")

    @app.get("/api/games/{game_id}/review")
    async def review_status(game_id: str, token: str = "") -> dict[str, Any]:
        return await reviews.status(game_id, token)

    @app.post("/api/games/{game_id}/review")
    async def review_start(game_id: str, token: str = "") -> JSONResponse:
        out = await reviews.start(game_id, token)
        return JSONResponse(out, status_code=200 if out["status"] == "done" else 202)

    @app.post("/api/replay")
    async def replay_upload_api(request: Request) -> Response:
        limit_replays(request)
        raw = await read_body(request, limits.record_bytes, "a record file")
        if replays.locked():
            raise GameError("busy", "the server is reading other records: try again in a moment", 429)
        async with replays:
            # In a worker process of its own: a long record takes a while to check and to encode, and
            # other players must not wait (a thread would still hold the interpreter lock against them).
            try:
                body = await records_pool.read_record(raw)
            except JobError as e:
                raise GameError("bad_record", str(e)) from None
            except RuntimeError as e:
                raise GameError("busy", f"the record could not be read now: {e}", 503) from None
        return Response(body, media_type="application/json")

    # -- card faces ---------------------------------------------------------------------------------------

    @app.get("/cards/{name}.svg")
    async def card_face(name: str) -> Response:
        svg = art.svg(name) if _CARD_RE.fullmatch(name) else None
        if svg is None:
            return JSONResponse({"error": "no_card", "message": f"no card {name[:20]!r}: use 0..47 or back"}, 404)
        return Response(svg, media_type="image/svg+xml", headers={"Cache-Control": "public, max-age=3600"})

    # -- the table's socket -------------------------------------------------------------------------------

    async def refuse(ws: WebSocket, transport: Any, error: dict[str, Any], code: int) -> None:
        """Say why a socket is refused, and close it at once. Left to uvicorn, a refused socket is held
        for the client's side of the closing handshake, 10 s: a client that never answers could hold
        thousands of them, and with them every connection slot of the server."""
        try:
            await ws.send_json(error)
            await ws.close(code=code)
        except Exception:  # the client went first
            pass
        finally:
            if transport is not None and not transport.is_closing():
                transport.close()  # the error and the close frame are flushed, then the socket closed
                # A client that reads nothing would keep even those few bytes unflushed: reset it then.
                asyncio.get_running_loop().call_later(1.0, transport.abort)

    @app.websocket("/ws/{token}")
    async def socket(ws: WebSocket, token: str) -> None:
        address = address_of(ws)
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
                seat, game = await service.seat_game(token)
            except GameError as e:
                # 4503: the database did not answer, and the page tries again; 4404: no such seat.
                await refuse(ws, transport, e.to_dict(), 4503 if isinstance(e, Unavailable) else 4404)
                return
            if not sockets_by_seat.take(seat.token, limits.sockets_per_seat):
                error = {
                    "type": "error",
                    "code": "too_many_sockets",
                    "message": f"this seat is open in {limits.sockets_per_seat} places already: close one of them",
                }
                await refuse(ws, transport, error, 4429)
                return
            try:
                await play_on(ws, transport, token, seat.seat, game, address)
            finally:
                sockets_by_seat.give_back(seat.token)
        finally:
            sockets_by_address.give_back(address)

    async def play_on(ws: WebSocket, transport: Any, token: str, seat: int, game: Any, address: str) -> None:
        """A seat's socket, once accepted: the table sent, then each message answered until it closes."""
        # A message is written at once (no extra hop through a queue on the hot path), unless the socket
        # already holds unread bytes: a client that stops reading is closed instead of holding up the
        # player whose move is being broadcast.
        _bound_send_buffer(transport, limits.unread_bytes)

        async def send(msg: dict[str, Any]) -> None:
            if transport is not None and transport.get_write_buffer_size() > _UNREAD_BYTES:
                _reset(transport)
                raise RuntimeError("a socket that does not read")
            await ws.send_json(msg)

        rate = RateLimiter(limits.messages_per_second, limits.message_burst, max_keys=1)
        # The client's protocol errors, counted here and logged once, when the socket ends (clientlog).
        refused = {"bad_message": 0, "rate_limited": 0}
        game.listeners[seat].add(send)
        open_sockets[0] += 1
        try:
            await service.catch_up(game)  # another process may have moved since this one last looked
            await send({"type": "state", "state": service.view(game, seat)})
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
                    reply = {
                        "type": "error",
                        "code": "bad_message",
                        "message": "messages are JSON text frames, not binary",
                    }
                else:
                    reply = await _answer(message["text"], token, seat)
                if reply is not None:
                    if reply.get("code") in refused:
                        refused[reply["code"]] += 1
                    elif reply.get("code") == "unavailable":
                        refused_sockets[send] = None
                    await send(reply)
        except (WebSocketDisconnect, RuntimeError):  # it closed, or stopped reading
            pass
        finally:
            open_sockets[0] -= 1
            refused_sockets.pop(send, None)
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

    async def table_now(token: str) -> dict[str, Any] | None:
        """The seat's table as this process has it, for an error that comes with it (None: not here)."""
        try:
            seat_, game = await service.seat_game(token)
        except GameError:
            return None
        return service.view(game, seat_.seat)

    async def _answer(text: str, token: str, seat: int) -> dict[str, Any] | None:
        try:
            if len(text) > limits.message_bytes:
                raise GameError("bad_message", f"a message has at most {limits.message_bytes} characters")
            try:
                if len(text) <= _PARSE_INLINE:
                    msg = safejson.loads(text, max_depth=4)
                else:  # only where message_bytes was raised past the default
                    msg = await asyncio.get_running_loop().run_in_executor(parsers, safejson.loads, text, 4)
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
            shown = kind if isinstance(kind, str) and len(kind) <= 20 else "?"
            raise GameError("bad_message", f"unknown message type {shown!r}: use action, hint, state or ping")
        except GameError as e:
            out = e.to_dict()
            if e.code in ("stale", "not_your_turn", "unavailable"):
                out["state"] = await table_now(token)
            return out
        except Exception:  # never let one message take the server down; the player keeps their table
            log.exception("error answering a message on seat %s", seat)
            return {"type": "error", "code": "server", "message": "the server could not handle that message"}

    return app
