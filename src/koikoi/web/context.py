"""What the web app's routers share: the game service, the workers, the limits, and how a request is read.

:func:`koikoi.web.app.create_app` builds one :class:`AppContext` and hands it to every router of
:mod:`koikoi.web.routes`; a router keeps what only it uses (its own rate limiters, say) to itself. The
helpers here are the ones every area needs alike: who is asking and from where, in which language, a
page rendered, a request's body read within the limits, and an error answered as JSON.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi import Request, WebSocket
from fastapi.responses import HTMLResponse, JSONResponse
from jinja2 import DictLoader, Environment, select_autoescape
from starlette.requests import HTTPConnection

from .. import __version__, safejson
from ..cards import CARD_NAMES, MONTH_NAMES, NUM_CARDS, kind_of
from ..rules import PRESETS, RuleSet
from .accounts import Passwords, common_passwords, passes_for
from .accountstore import Account, AccountStore
from .bots import BotService
from .browsers import BrowserIds
from .cardart import CardArt
from .chat import ChatService
from .cookies import BROWSER, LANG, SESSION, credential, is_secure, our_cookies
from .devices import DeviceCookies
from .games import GameError, GameService, Unavailable
from .i18n import LANGUAGES, Translator, choose_language
from .learnservice import LearnService
from .limits import Limits, RateLimiter
from .lobby import LobbyService
from .looplag import LoopLag
from .preloaded import read_templates
from .puzzleservice import PuzzleService
from .reviews import ReviewService
from .schedule import Scheduled
from .spectators import Spectators
from .store import Store
from .tournaments import TournamentService
from .workers import ThinkPool

__all__ = [
    "BROWSER_COOKIE",
    "LANG_COOKIE",
    "PARSE_INLINE",
    "AppContext",
    "account_of",
    "address_of",
    "error",
    "option_specs",
    "other_site",
    "cookie_of",
    "credentials",
    "owner_of",
    "script_json",
    "translator",
]

HERE = Path(__file__).parent
LANG_COOKIE = LANG
BROWSER_COOKIE = BROWSER  # a browser's signed id (koikoi.web.browsers): a guest's games are its
# A JSON text longer than this is parsed off the event loop (a linear parse, but 64 KB is still ~1 ms).
PARSE_INLINE = 4096


def owner_of(request: Request) -> str:
    """The asking browser's id, which the app's ``identify`` middleware has read from its cookie."""
    owner: str = request.state.owner
    return owner


def account_of(request: Request) -> Account | None:
    """The account the asking browser is signed in to (None: a guest), read by ``identify``."""
    return getattr(request.state, "account", None)


def other_site(headers: Mapping[str, str], secure: bool) -> str | None:
    """Why a request (or a WebSocket's opening) sent by a browser page of another site is refused (None:
    it is not). It carries our cookies, which are the player's credentials (their browser id, their
    session): the browser says where the page comes from, and another site is not us. A page of the same
    host over plain HTTP is another site too, for a server over HTTPS (``secure``): anyone on the network
    can write such a page."""
    if headers.get("sec-fetch-site") == "cross-site":
        return "a request from another site cannot act for you here"
    origin = headers.get("origin")
    if origin is None:
        return None  # not sent by a browser page of another site (those always send it)
    host = headers.get("host", "")
    sent = urlsplit(origin)
    if origin == "null" or sent.netloc.lower() != host.lower():
        return f"a request from {origin[:100]!r} cannot act for you on {host[:100]!r}"
    if sent.scheme.lower() != ("https" if secure else "http"):
        return f"a request from {origin[:100]!r} cannot act for you over {'https' if secure else 'http'}"
    return None


def cookie_of(conn: HTTPConnection, cookie: str) -> str | None:
    """One of our credential cookies (:data:`~koikoi.web.cookies.DEVICE`, say) of a request, under the name
    its scheme uses; :class:`GameError` ``two_cookies`` if it came twice."""
    return credential(our_cookies(conn), cookie, is_secure(conn))


def credentials(conn: HTTPConnection) -> tuple[str | None, str | None]:
    """(browser id cookie, session cookie) of a request or a WebSocket's opening, under the names its
    scheme uses (:mod:`koikoi.web.cookies`); :class:`GameError` ``two_cookies`` if one came twice."""
    jar = our_cookies(conn)
    secure = is_secure(conn)
    return credential(jar, BROWSER, secure), credential(jar, SESSION, secure)


def address_of(request: Request | WebSocket) -> str:
    return request.client.host if request.client else "?"


def translator(request: Request) -> Translator:
    """The asker's language: ``?lang=``, else the cookie the menu set, else the browser's Accept-Language."""
    lang = choose_language(
        request.query_params.get("lang"), request.cookies.get(LANG_COOKIE), request.headers.get("accept-language")
    )
    return Translator(lang)


def error(e: GameError) -> JSONResponse:
    """The JSON answer to a refused request: its code and message."""
    # A body refused before it was read (too large, too slow) ends the connection: what is left of
    # it must not be taken for the next request.
    headers = {"Connection": "close"} if e.status in (408, 413) else None
    if isinstance(e, Unavailable):
        headers = {"Retry-After": "1"}
    body: dict[str, Any] = {"error": e.code, "message": e.message}
    if e.params:
        body["params"] = e.params
    return JSONResponse(body, status_code=e.status, headers=headers)


def script_json(value: Any) -> str:
    """JSON that is safe inside a ``<script type="application/json">`` element: no ``<``, ``>`` or ``&``
    survives, so no text of a player's (or of an address) can end the element or open a comment."""
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def option_specs() -> list[dict[str, Any]]:
    """Every rule option with its type, choices and bounds, for the lobby's editor."""
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


@dataclass
class AppContext:
    """One app's shared parts. Every route that acts on a game goes through ``service``."""

    limits: Limits
    store: Store
    service: GameService
    browsers: BrowserIds
    devices: DeviceCookies
    art: CardArt
    # Its own worker: records and reviews never wait behind the computer's moves.
    records_pool: ThinkPool
    reviews: ReviewService
    loop_lag: LoopLag  # how late the event loop runs, for /api/health
    parsers: ThreadPoolExecutor  # large request bodies and socket messages are parsed here
    templates: Environment
    option_specs: list[dict[str, Any]]
    preset_options: dict[str, dict[str, Any]]
    accounts: AccountStore
    passwords: Passwords  # Argon2id, on threads of its own
    lobby: LobbyService  # the public lobby: seeks, quick pairing, the lobby's sockets
    bots: BotService  # bots online: their tokens, streams and challenges
    spectators: Spectators  # who may watch a game, and the spectators' sockets here
    chat: ChatService  # the players' and the spectators' chat
    tournaments: TournamentService  # arenas and Swiss events, and this process's director of them
    puzzles: PuzzleService  # puzzles served, and their answers checked
    learn: LearnService  # the lessons' moves judged, and an account's stars
    open_sockets: int = 0  # the tables' WebSockets open on this process, for /api/health

    @classmethod
    def open(
        cls,
        database_url: str,
        *,
        card_art: str | Path | None,
        ai_delay: float,
        ai_options: dict[str, dict[str, Any]] | None,
        limits: Limits,
        schedule: list[Scheduled] | None = None,
    ) -> AppContext:
        """The parts of an app on the database at ``database_url``; the workers start with the app."""
        store = Store(database_url)
        browsers = BrowserIds(store.engine)
        art = CardArt(card_art)
        service = GameService(store, limits=limits, ai_options=ai_options, ai_delay=ai_delay)
        # What the pages read from the package's files, read now: a reinstall under a running server
        # (pip install -e . in its environment) then leaves every page whole until the next start.
        templates = read_templates(HERE / "templates")
        for lang in LANGUAGES:
            Translator(lang)  # the language's texts and plural rules, kept (functools.cache)
        common_passwords()
        records_pool = ThinkPool(1, hints_pending=1)
        lobby = LobbyService(service, limits)
        spectators = Spectators(service, limits)
        bots = BotService(service, lobby, limits)
        passwords = Passwords()
        return cls(
            limits=limits,
            store=store,
            service=service,
            browsers=browsers,
            devices=DeviceCookies(store.engine),
            art=art,
            records_pool=records_pool,
            # Game reviews, one decision at a time, on the records' worker (after any record upload).
            reviews=ReviewService(service, records_pool, limits),
            loop_lag=LoopLag(),
            parsers=ThreadPoolExecutor(2, thread_name_prefix="koikoi-json"),
            templates=Environment(loader=DictLoader(templates), autoescape=select_autoescape(["html"])),
            option_specs=option_specs(),
            preset_options={n: r.to_dict() for n, r in PRESETS.items()},
            accounts=AccountStore(store),
            passwords=passwords,
            lobby=lobby,
            bots=bots,
            spectators=spectators,
            chat=ChatService(service, spectators, limits),
            tournaments=TournamentService(
                store,
                service.db,
                service.process_id,
                passwords,
                limits=limits,
                time_controls=lambda: service.time_controls,
                listener=service.listener,
                bots=lambda: list(bots.streams),
                bot_changed=bots.changed,
                schedule=schedule or [],
            ),
            puzzles=PuzzleService(store, service.db, limits),
            learn=LearnService(store, service.db, limits),
        )

    def within(self, rate: RateLimiter, request: Request, code: str, limit: str) -> None:
        """Refuse (429) a request over one of the per-address rates; ``limit`` says what the rate is."""
        address = address_of(request)
        if not rate.allow(address):
            raise GameError(code, f"{limit} from one address: try again in {rate.retry_after(address):.0f} s", 429)

    def page(self, request: Request, name: str, page_kind: str, **context: Any) -> HTMLResponse:
        """The template ``name`` rendered in the asker's language; ``config`` goes to the page's script.
        Every page knows the signed-in account (None: a guest): ``account`` in the template, for the
        header, and its name as ``config["account"]``."""
        tr = translator(request)
        account = account_of(request)
        config = {
            "page": page_kind,
            "lang": tr.lang,
            "account": account.name if account is not None else None,  # the signed-in player's name
            "version": __version__,
            "cards": list(CARD_NAMES),
            "kinds": [kind_of(c).name.lower() for c in range(NUM_CARDS)],
            "months": list(MONTH_NAMES),
            **context.pop("config", {}),
        }
        html = self.templates.get_template(name).render(
            t=tr,
            lang=tr.lang,
            languages=LANGUAGES,
            request=request,
            account=account,  # the header names a signed-in player (autoescaped, as every value)
            version=__version__,
            config_json=script_json(config),
            catalog_json=script_json(tr.catalog),
            **context,
        )
        return HTMLResponse(html)

    async def read_body(self, request: Request, limit: int, what: str) -> bytes:
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

        body_timeout = self.limits.body_timeout
        try:
            await asyncio.wait_for(read(), body_timeout)
        except TimeoutError:
            raise GameError("too_slow", f"the request's body took longer than {body_timeout:g} s", 408) from None
        return b"".join(chunks)

    async def seat_name(self, request: Request, data: dict[str, Any]) -> Any:
        """The name a player sits down or seeks under: a signed-in player's is their account's, so that
        nobody can pass for another account; a guest's is the one they typed, unless it is a registered
        player's or a computer player's name (409 ``name_taken``: sign in, or choose another)."""
        account = account_of(request)
        if account is not None:
            return account.name
        raw = data.get("name")
        key, computer = passes_for(raw)
        shown = " ".join(str(raw).split())
        if computer:
            raise GameError("name_taken", f"{shown!r} is a computer player's name: choose another", 409)
        if key is not None and await self.service.db(self.accounts.account_named, key) is not None:
            raise GameError(
                "name_taken", f"{shown!r} is a registered player's name: sign in to use it, or choose another", 409
            )
        return raw

    async def json_body(self, request: Request) -> dict[str, Any]:
        """The request's body as a JSON object, within ``json_bytes`` and eight levels of nesting."""
        # Only JSON: a plain form posted from another site cannot create or join games in your name.
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            raise GameError("bad_message", "send the request as JSON (Content-Type: application/json)", 415)
        raw = await self.read_body(request, self.limits.json_bytes, "a request")
        try:
            if len(raw) <= PARSE_INLINE:
                data = safejson.loads(raw or b"{}", max_depth=8)
            else:  # a large body is parsed in a thread: the event loop keeps serving every game meanwhile
                data = await asyncio.get_running_loop().run_in_executor(self.parsers, safejson.loads, raw, 8)
        except safejson.NestingError as e:
            raise GameError("bad_message", f"the request body is {e}") from None
        except (ValueError, UnicodeDecodeError):
            raise GameError("bad_message", "the request body is not valid JSON") from None
        if not isinstance(data, dict):
            raise GameError("bad_message", "the request body must be a JSON object")
        return data

    async def table_now(self, token: str) -> dict[str, Any] | None:
        """The seat's table as this process has it, for an error that comes with it (None: not here)."""
        try:
            seat, game = await self.service.seat_game(token)
        except GameError:
            return None
        return self.service.view(game, seat.seat)
