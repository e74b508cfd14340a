"""The web app: pages, the JSON API and the WebSocket a table plays over (FastAPI / Starlette).

``create_app(database_url)`` builds it; ``koikoi serve`` runs it with uvicorn (:mod:`koikoi.web.server`).
Every route that acts on a game goes through :class:`~koikoi.web.games.GameService`, which is the only
place that changes a game. A browser is known by a random cookie (``koikoi_id``) so that the lobby can
list its games; a seat is reached by its secret token, which is in the table's address and given only
to the player of that seat. A friend is invited with a separate token that is spent when they join.

Everything from a client is bounded before it is looked at: body sizes, JSON nesting, message rates,
sockets per seat and per address, games created per minute (:class:`~koikoi.web.limits.Limits`).

This module only wires the app: the shared parts (:class:`~koikoi.web.context.AppContext`), their
start and stop, the middleware, the error handlers, and the routers of :mod:`koikoi.web.routes`, one
to an area, which hold the routes themselves.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from ..clocks import TIME_CONTROLS
from .accounts import SESSION_COOKIE, session_key
from .context import BROWSER_COOKIE, LANG_COOKIE, AppContext, error, other_site, translator
from .cookies import HOST_PREFIX, cookie_name, credential, is_secure, our_cookies
from .database import Unavailable
from .errors import GameError
from .headers import SecurityHeaders
from .i18n import LANGUAGES
from .limits import Limits
from .preloaded import PreloadedStatic, read_static
from .routes import (
    accounts,
    bots,
    cards,
    games,
    health,
    lobby,
    pages,
    players,
    records,
    table,
    watch,
)
from .routes import learn as learn_routes
from .routes import puzzles as puzzle_routes
from .routes import tournaments as tournament_routes
from .schedule import read_schedule

__all__ = ["create_app"]

log = logging.getLogger("koikoi.web")

COOKIE = BROWSER_COOKIE
STATIC = Path(__file__).parent / "static"


class _KoiKoiApp(FastAPI):
    """FastAPI with :class:`SecurityHeaders` outside every other layer, Starlette's last-resort error
    handler included, so that even a 500 carries the security headers."""

    def build_middleware_stack(self) -> Any:
        return SecurityHeaders(super().build_middleware_stack())


def create_app(
    database_url: str,
    *,
    card_art: str | Path | None = None,
    ai_delay: float = 0.6,
    ai_options: dict[str, dict[str, Any]] | None = None,
    limits: Limits | None = None,
    time_controls: tuple[str, ...] = (),
    tournaments: str | None = None,
) -> FastAPI:
    """The app on the database at ``database_url`` (a file path or SQLAlchemy URL); ``time_controls``
    are offered besides the standard ones (koikoi.clocks); ``tournaments``: the file of the tournaments
    made on a schedule (koikoi.web.schedule), read now (:class:`~koikoi.web.schedule.ScheduleError`)."""
    offered = (*TIME_CONTROLS, *(c for c in time_controls if c not in TIME_CONTROLS))
    schedule = read_schedule(tournaments, offered) if tournaments else []
    ctx = AppContext.open(
        database_url,
        card_art=card_art,
        ai_delay=ai_delay,
        ai_options=ai_options,
        limits=limits or Limits(),
        schedule=schedule,
    )
    ctx.service.time_controls = (*TIME_CONTROLS, *(c for c in time_controls if c not in TIME_CONTROLS))
    store, service, browsers = ctx.store, ctx.service, ctx.browsers

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await ctx.records_pool.start()
        lag_task = asyncio.get_running_loop().create_task(ctx.loop_lag.run())
        n = await service.start()
        if n:
            log.info("resumed %d games against the computer", n)
        await ctx.lobby.start()
        await ctx.bots.start()
        await ctx.spectators.start()
        await ctx.tournaments.start()
        try:
            added = await ctx.puzzles.ensure_shipped()
            if added:
                log.info("imported the %d puzzles shipped with the program", added)
        except Exception as e:  # the database is away, or the set is damaged: puzzles wait, games go on
            log.warning("could not import the shipped puzzles: %s", e)
        yield
        await ctx.tournaments.close()  # gives its directing leases back: another process takes over at once
        await ctx.bots.close()
        await ctx.spectators.close()
        await ctx.chat.close()
        await ctx.lobby.close()  # at most a few seconds (koikoi.web.tasks): nothing of it is kept here
        lag_task.cancel()
        await ctx.reviews.close()
        await service.close()
        await ctx.records_pool.close()
        ctx.parsers.shutdown(wait=False, cancel_futures=True)
        ctx.passwords.close()
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
    app.state.limits = ctx.limits
    # For the server's siblings (koikoi serve --workers N), which ask each worker for its health.
    app.state.local_health = functools.partial(health.local_health, ctx, app.state)
    # Read now, not at each request: a reinstall of the package under a running server leaves its pages
    # whole (koikoi.web.preloaded).
    app.mount("/static", PreloadedStatic(read_static(STATIC)), name="static")

    # -- who is asking ------------------------------------------------------------------------------------

    def adopted(key: str, browser: str | None = None) -> bool:
        # On a database thread: whether a bare id from before ids were signed (or ``browser``, under the
        # adoption ``key``) holds a seat, and is adopted by this browser now.
        return browsers.adopt(key, bool(store.games_of(browser or key, limit=1)))

    async def adopt(key: str, browser: str | None = None) -> bool:
        """Whether the id ``key`` (or ``browser``, adopted under ``key``) from before is adopted now."""
        try:
            return len(key) <= 64 and await service.db(adopted, key, browser)
        except Exception:  # the database is away: adopt nothing now, the browser may show the id again
            log.warning("could not look up a browser id from an older server", exc_info=True)
            return False

    @app.middleware("http")
    async def identify(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        # The browser's id, from a cookie this server signed (koikoi.web.browsers); anything else is
        # replaced by a fresh id, never adopted, so that no one can plant an id of their choosing.
        secure = is_secure(request)  # over HTTPS the credentials are __Host- cookies (koikoi.web.cookies)
        request.state.owner, request.state.account = "", None
        try:
            jar = our_cookies(request)
        except GameError as e:
            return await game_error(request, e)
        raw = credential(jar, COOKIE, secure)
        owner = browsers.read(raw)
        fresh: str | None = None
        if owner is None:
            if raw is not None and browsers.may_be_bare(raw) and await adopt(raw):
                owner, fresh = raw, browsers.cookie(raw)
            elif (
                raw is None
                and secure
                and (moved := browsers.read(jar.get(COOKIE)))
                and await adopt(f"{HOST_PREFIX}{moved}", moved)
            ):
                # Its plain-named cookie from before __Host- names (a server that went to HTTPS, or an
                # older one): adopted under the new name once, by the first browser that shows it over
                # HTTPS, and only if it holds a seat, as a bare id is.
                owner, fresh = moved, browsers.cookie(moved)
            else:
                owner, fresh = browsers.issue()
        request.state.owner = owner
        request.state.account = None
        # A bot's token opens the bot API alone, and the bot API takes no session (koikoi.web.bots).
        bot_api = request.url.path.startswith("/api/bot/")
        if not bot_api and request.headers.get("authorization", "")[:7].lower() == "bearer ":
            return error(GameError("token_here", "a bot's token opens the bot API alone (/api/bot/...), not this", 401))
        # A signed-in browser plays as its account (koikoi.web.accountstore): its games, its limits.
        session = None if bot_api else session_key(credential(jar, SESSION_COOKIE, secure) or "")
        if session is not None:
            try:
                account = await service.db(ctx.accounts.session, session)
            except Unavailable:
                account = None  # the database is away: a guest for now; what needs it is refused anyway
            if account is not None:
                request.state.account = account
                request.state.owner = account.owner
        refused = foreign_origin(request, secure)
        if refused is not None:
            return error(GameError("bad_origin", refused, 403))
        response = await call_next(request)
        if request.state.account is not None and response.headers.get("content-type", "").startswith("text/html"):
            # A page that shows who is signed in: not kept, so that Back after signing out shows no one.
            response.headers["Cache-Control"] = "no-store"
        # Over HTTPS (directly, or behind a proxy named with --forwarded-allow-ips), cookies travel only so.
        if fresh is not None:
            response.set_cookie(
                cookie_name(COOKIE, secure),
                fresh,
                max_age=5 * 365 * 86400,
                httponly=True,
                samesite="lax",
                secure=secure,
            )
        if secure:  # plain-named credentials from before __Host- names: read once above, then let go
            for plain in (COOKIE, SESSION_COOKIE):
                if plain in jar:
                    response.delete_cookie(plain, httponly=True, samesite="lax", secure=True)
        lang = request.query_params.get("lang")
        if lang in LANGUAGES:
            response.set_cookie(LANG_COOKIE, lang, max_age=365 * 86400, samesite="lax", secure=secure)
        return response

    def foreign_origin(request: Request, secure: bool) -> str | None:
        """Why a request that changes something, sent by a browser from another site, is refused (None:
        it is not, or it changes nothing)."""
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return None
        return other_site(request.headers, secure)

    # -- errors -------------------------------------------------------------------------------------------

    @app.exception_handler(GameError)
    async def game_error(request: Request, e: GameError) -> Response:
        if request.url.path.startswith("/api/"):
            return error(e)
        # A page (an old or mistyped link): say what is wrong, in the player's language.
        tr = translator(request)
        key = f"error.{e.code}"
        response = ctx.page(request, "error.html", "error", message=tr(key) if key in tr.catalog else e.message)
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
        response = ctx.page(request, "error.html", "error", message=translator(request)("error.not_found"))
        response.status_code = 404
        return response

    # -- the routes, one router to an area ----------------------------------------------------------------

    # The order is the one /api/docs lists them in; the lobby's socket, /ws/lobby, comes before the
    # tables' /ws/{token}, which would take it otherwise (the spectators' /ws/watch/{id} has two parts).
    areas = (pages, health, accounts, players, lobby, bots, games, records, cards, watch, puzzle_routes, learn_routes)
    for area in areas:
        app.include_router(area.make_router(ctx))
    app.include_router(tournament_routes.make_router(ctx, ctx.tournaments))  # /ws/tournament/{id}: before /ws/{token}
    app.include_router(table.make_router(ctx))
    return app
