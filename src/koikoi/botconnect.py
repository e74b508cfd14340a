"""``koikoi bot connect``: a program that speaks the bot protocol plays people on a ``koikoi serve`` server.

The program is the very one ``koikoi arena`` runs (docs/bot-protocol.md; ``examples/random_bot.py``,
``examples/greedy_bot.js``): this client stands where the arena stands. It keeps the bot's stream open
(``/api/bot/stream``, with the bot's token), accepts the challenges its options allow and declines the
others, and for each of the bot's games starts the program (one program per match, as the protocol has
it: :class:`~koikoi.botproto.BotProcess`, the arena's own code), opens the game's seat socket
(``/ws/<seat token>``, the browser's protocol), and turns each table the server sends into the
protocol's messages and each answer of the program into a move: ``hello`` once, ``choose`` when the
bot is to move (the observation of the bot's own seat, which the server sends a bot's seat beside the
table, in the version the program asked for), ``hand_end`` after each hand, ``match_end`` and ``quit``
at the end.

A dropped stream or seat socket is opened again (after 1, 2, 4 ... up to 30 seconds); the program keeps
running meanwhile and the game goes on where it is (a move sent but not acknowledged is sent again, the
same move, for the same table). A program that fails (it exits, answers nonsense, an illegal move or
none within ``--time-limit``) is stopped with everything it started, and its game is left as it is: the
bot makes no more moves there, and the game ends as any game a player walks away from does (the
opponent's claim or the clock, on a server that has them). The other games go on, and new ones start
a new program.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import shlex
import signal
import sys
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .botproto import BotError, BotProcess, hand_end_message, match_end_message, versioned_observation
from .clocks import ClockError, time_control  # pure arithmetic: nothing of the server is loaded
from .rules import PRESETS, RuleSet

__all__ = ["ConnectError", "Policy", "Connector", "read_token", "parse_hands", "parse_seek", "run"]

log = logging.getLogger("koikoi.bot")

T = TypeVar("T")

_TOKEN = re.compile(r"kkb_[A-Za-z0-9_-]{43}")
BACKOFF_MAX = 30.0
HTTP_SECONDS = 15.0
SEEK_EVERY = 30.0  # with --seek, the bot's seeks are looked at this often (and after each game)


class ConnectError(Exception):
    """Why the client cannot go on (a bad token, a server it cannot reach): said, then it exits ``code``."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def read_token(path: str) -> str:
    """The bot token in the file ``path`` (one line; the file is read by no one else if you keep it so)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")[:1000]
    except OSError as e:
        raise ConnectError(f"cannot read the token file {path}: {e.strerror or e}", 2) from None
    token = text.strip()
    if not _TOKEN.fullmatch(token):
        raise ConnectError(
            f"the token file {path} does not hold a bot token (kkb_ and 43 letters, digits, '-' or '_', on one "
            "line): make one on your account page or with 'koikoi admin bot-token NAME'",
            2,
        )
    return token


def parse_hands(text: str) -> frozenset[int]:
    """``--hands``: match lengths as ``3``, ``1,3,6`` or ``1-6``.

    >>> sorted(parse_hands("1,3-4"))
    [1, 3, 4]
    """
    out: set[int] = set()
    for part in text.split(","):
        low, sep, high = part.strip().partition("-")
        try:
            a = int(low)
            b = int(high) if sep else a
        except ValueError:
            raise ValueError(f"--hands takes lengths like 3, 1,3,6 or 1-6, not {text!r}") from None
        if not 1 <= a <= b <= 12:
            raise ValueError(f"--hands: match lengths are 1 to 12 hands, not {part.strip()!r}")
        out |= set(range(a, b + 1))
    return frozenset(out)


def parse_seek(text: str) -> dict[str, Any]:
    """``--seek PRESET:HANDS[:rated|casual][:CLOCK]``: the seek the bot keeps open in the lobby while it
    has room, its game played with the time control CLOCK (docs/web.md, "Time controls"); a rated seek
    has one.

    >>> parse_seek("nintendo:3:rated:10+60")
    {'rules': {'preset': 'nintendo'}, 'hands': 3, 'rated': True, 'clock': '10+60'}
    >>> parse_seek("bga:6")
    {'rules': {'preset': 'bga'}, 'hands': 6, 'rated': False, 'clock': None}
    """
    parts = text.split(":")
    clock = None
    if len(parts) == 4 or (len(parts) == 3 and parts[2] not in ("rated", "casual")):
        clock = parts.pop()
        try:
            time_control(clock)
        except ClockError as e:
            raise ValueError(f"--seek: {e}") from None
    if len(parts) not in (2, 3) or parts[0] not in PRESETS or (len(parts) == 3 and parts[2] not in ("rated", "casual")):
        raise ValueError(
            "--seek is PRESET:HANDS[:rated|casual][:CLOCK], e.g. nintendo:3:rated:10+60 "
            f"(a preset of {', '.join(PRESETS)}), not {text!r}"
        )
    try:
        hands = int(parts[1])
    except ValueError:
        raise ValueError(f"--seek: HANDS is a number of hands, 1 to 12, not {parts[1]!r}") from None
    if not 1 <= hands <= 12:
        raise ValueError(f"--seek: HANDS is a number of hands, 1 to 12, not {hands}")
    rated = len(parts) == 3 and parts[2] == "rated"
    if rated and clock is None:
        raise ValueError(f"--seek: a rated game is played with a clock: add one, e.g. {text}:10+60")
    return {"rules": {"preset": parts[0]}, "hands": hands, "rated": rated, "clock": clock}


def too_quick(clock: Any, time_limit: float) -> bool:
    """Whether a game under ``clock`` (a time control's id, or None) gives a decision less time than the
    program may take: each slow answer would eat the bank until the program lost on time."""
    if not isinstance(clock, str):
        return False
    try:
        return time_control(clock).per_move < time_limit
    except ClockError:
        return False  # a control this client does not know: the server's own, and its clock rules


@dataclass(frozen=True)
class Policy:
    """Which challenges to accept, and how many games at once."""

    games: int = 1
    presets: frozenset[str] | None = None  # None: every preset
    hands: frozenset[int] | None = None  # None: every length
    rated: str = "both"  # both, rated (only), casual (only)
    custom: bool = True  # challenges whose rules change a preset's options
    time_limit: float = 5.0  # the program's time a decision (--time-limit): a clock must give at least that

    def refusal(self, challenge: dict[str, Any], playing: int) -> str | None:
        """Why to decline ``challenge`` (a reason the server knows), or None to accept it."""
        if playing >= self.games:
            return "later"
        if self.presets is not None and challenge.get("preset") not in self.presets:
            return "rules"
        if challenge.get("custom") and not self.custom:
            return "rules"
        if self.hands is not None and challenge.get("hands") not in self.hands:
            return "length"
        if too_quick(challenge.get("clock"), self.time_limit):
            return "clock"
        rated = bool(challenge.get("rated"))
        if self.rated == "rated" and not rated:
            return "rated"
        if self.rated == "casual" and rated:
            return "casual"
        return None


def _ws_url(server: str) -> str:
    return "ws" + server[len("http") :]


def _shown(e: BaseException) -> str:
    text = str(e) or type(e).__name__
    return text if len(text) <= 300 else text[:300] + "..."


class Game:
    """One game of the bot's, played by its own program over the game's seat socket."""

    def __init__(self, connector: Connector, game: dict[str, Any], number: int) -> None:
        self.connector = connector
        self.id = str(game["id"])
        self.token = str(game["token"])
        self.opponent = str((game.get("opponent") or {}).get("name", "?"))
        self.number = number  # the bot protocol's game number: this client's games, from 1
        self.proc: BotProcess | None = None
        self._thread = ThreadPoolExecutor(1, thread_name_prefix=f"koikoi-bot-{self.id}")
        self.reported = -1  # hands told to the program (-1: none yet, the program not started)
        self.answered: tuple[int, int] | None = None  # (seq, action) last sent
        self.done = False
        self.failed: str | None = None

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        # Every call to the program runs on this game's own thread: the one that started it, which the
        # launcher watches (the program dies with it), and never the event loop, which serves every game.
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)

    async def run(self) -> None:
        try:
            await self._play()
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a bug of this client, or of the server's answers: this game only
            self.failed = f"the client failed: {type(e).__name__}: {_shown(e)}"
            log.exception("game %s: %s", self.id, self.failed)
        finally:
            if self.proc is not None:
                polite = not self.failed
                await self._call(lambda: self.proc.close(polite=polite))  # type: ignore[union-attr]
            self._thread.shutdown(wait=False)

    async def _play(self) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

        url = f"{_ws_url(self.connector.server)}/ws/{self.token}?game={self.id}"
        delay = 1.0
        while not self.done:
            try:
                async with connect(url, open_timeout=HTTP_SECONDS, max_size=1 << 20) as ws:
                    delay = 1.0
                    async for raw in ws:
                        await self._on(ws, json.loads(raw))
                        if self.done:
                            return
            except (OSError, TimeoutError, ConnectionClosed, InvalidHandshake, InvalidURI) as e:
                if self.done:
                    return
                log.warning("game %s: lost its table (%s); again in %g s", self.id, _shown(e), delay)
            await asyncio.sleep(delay)
            delay = min(BACKOFF_MAX, delay * 2)

    async def _on(self, ws: Any, msg: Any) -> None:
        if not isinstance(msg, dict):
            return
        kind = msg.get("type")
        if kind == "state":
            await self._table(ws, msg["state"])
        elif kind == "available":  # the server's database is back: the table as it now is
            await ws.send('{"type": "state"}')
        elif kind == "error":
            code = msg.get("code")
            if code == "unavailable":
                return  # the server tells "available" when its database is back; the move is sent again then
            if isinstance(msg.get("state"), dict):  # stale, not our turn: the table as it is comes with it
                await self._table(ws, msg["state"])
            elif code in ("bad_token", "broken", "over"):
                log.error("game %s: the server says %s: %s", self.id, code, msg.get("message"))
                self.done = True
            else:
                log.warning("game %s: the server says %s: %s", self.id, code, msg.get("message"))

    async def _table(self, ws: Any, view: dict[str, Any]) -> None:
        proto = view.get("protocol")
        if not isinstance(proto, dict):
            self._fail("the server sent no bot view for this seat (is this a bot's seat?)")
            return
        obs = proto["observation"]
        try:
            if self.proc is None:
                await self._start(view)
            await self._report(obs)
            outcome = view.get("outcome")
            if outcome is not None:
                await self._end(outcome)
                return
            if view.get("status") == "broken":
                self._fail("the server marked the game broken")
                return
            if view.get("to_move"):
                await self._move(ws, view, obs, proto.get("positions"))
        except BotError as e:
            assert self.proc is not None
            tail = await self._call(self.proc.stderr_tail)
            self._fail(f"the program failed ({e.kind}): {e}" + (f"; its stderr ends: {tail}" if tail else ""))

    async def _start(self, view: dict[str, Any]) -> None:
        c = self.connector
        self.proc = BotProcess(c.command, stderr_path=c.stderr_path(self))
        rules = RuleSet.from_dict(view["rules"])
        seed = random.SystemRandom().getrandbits(63)
        await self._call(self.proc.start)
        info = await self._call(
            lambda: self.proc.hello(view["seat"], rules, c.time_limit, game=self.number, bot_seed=seed)  # type: ignore[union-attr]
        )
        obs = view["protocol"]["observation"]
        self.reported = len(obs.get("results", []))  # hands before the program started are not its news
        log.info(
            "game %s: %s plays %s (seat %d, %s, protocol version %d)",
            self.id,
            info.get("name", c.command),
            self.opponent,
            view["seat"],
            rules.name,
            self.proc.version,
        )

    async def _report(self, obs: dict[str, Any]) -> None:
        results = obs.get("results", [])
        assert self.proc is not None
        while self.reported < len(results):
            self.reported += 1
            message = hand_end_message(self.reported, results[self.reported - 1], obs["scores"])
            await self._call(self.proc.notify, message, self.connector.time_limit)

    async def _move(self, ws: Any, view: dict[str, Any], obs: dict[str, Any], where: Any) -> None:
        seq = view["seq"]
        if self.answered is not None and self.answered[0] == seq:
            action = self.answered[1]  # sent before the connection dropped: the same move again
        else:
            assert self.proc is not None
            if self.proc.version == 2 and where is None:
                raise BotError("protocol", "the server sent no card positions, which protocol version 2 needs")
            decision = seq + 1  # the match's decisions so far, both seats, from 1: as the arena counts them
            message = {
                "type": "choose",
                "decision": decision,
                "time_limit": self.connector.time_limit,
                "observation": versioned_observation(dict(obs), where, version=self.proc.version),
            }
            legal = [int(a) for a in view.get("legal", [])]
            action = await self._call(self.proc.ask, message, legal, decision, self.connector.time_limit)
            self.answered = (seq, action)
        await ws.send(json.dumps({"type": "action", "action": action, "seq": seq}))

    async def _end(self, outcome: dict[str, Any]) -> None:
        assert self.proc is not None
        message = match_end_message(outcome.get("winner"), outcome.get("scores", [0, 0]), outcome.get("reason", ""))
        try:
            await self._call(self.proc.notify, message, self.connector.time_limit)
        except BotError:
            pass  # the match is over: a program that cannot take the news loses nothing
        log.info("game %s: over (%s), scores %s", self.id, outcome.get("reason"), outcome.get("scores"))
        self.done = True

    def _fail(self, why: str) -> None:
        self.failed = why
        self.done = True
        log.error(
            "game %s: %s; the bot makes no more moves in this game, which is left to the opponent's claim or the clock",
            self.id,
            why,
        )


class Connector:
    """The bot's side of the server: its stream, its challenges, its games. :meth:`run` until stopped."""

    def __init__(
        self,
        server: str,
        token: str,
        command: list[str],
        *,
        policy: Policy | None = None,
        time_limit: float = 5.0,
        seek: dict[str, Any] | None = None,
        logs: str | None = None,
        tournaments: list[str] | None = None,
    ) -> None:
        server = server.rstrip("/")
        if not server.startswith(("http://", "https://")):
            raise ConnectError(f"--server is the server's address, http://HOST:PORT or https://HOST, not {server!r}", 2)
        if not command:
            raise ConnectError("give the bot's program after --: koikoi bot connect ... -- python3 my_bot.py", 2)
        self.server = server
        self.token = token
        self.command = shlex.join(command)  # BotProcess splits it back, exactly
        self.policy = policy or Policy()
        self.time_limit = time_limit
        self.seek = seek
        self.tournaments = list(tournaments or [])  # joined once connected; their matches come on the stream
        self.logs = Path(logs) if logs else None
        self.games: dict[str, Game] = {}  # the games being played now
        self.seen: set[str] = set()  # every game started in this run (a failed one is not started again)
        self.accepting = 0  # acceptances on their way
        self.played = 0
        self.name = "?"
        self._tasks: set[asyncio.Task[Any]] = set()
        self._seeking: asyncio.Task[Any] | None = None
        self._http: Any = None

    def stderr_path(self, game: Game) -> Path | None:
        return self.logs / f"game-{game.id}.stderr.log" if self.logs is not None else None

    def _spawn(self, work: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
        import httpx

        try:
            r = await self._http.request(method, path, json=body)
        except httpx.HTTPError as e:
            raise OSError(f"cannot reach the server at {self.server}: {_shown(e)}") from None
        try:
            data = r.json()
        except ValueError:
            data = None
        return r.status_code, data

    async def run(self) -> int:
        import httpx

        headers = {"Authorization": f"Bearer {self.token}", "User-Agent": "koikoi-bot-connect"}
        async with httpx.AsyncClient(base_url=self.server, headers=headers, timeout=HTTP_SECONDS) as http:
            self._http = http
            try:
                status, me = await self._request("GET", "/api/bot/account")
            except OSError as e:
                raise ConnectError(str(e), 1) from None
            if status == 401 and isinstance(me, dict):
                raise ConnectError(f"the server at {self.server} refuses the token: {me.get('message')}", 2)
            if status != 200 or not isinstance(me, dict) or "name" not in me:
                raise ConnectError(
                    f"{self.server} does not answer as a koikoi server with bots (HTTP {status} for /api/bot/account)"
                )
            self.name = str(me["name"])
            owner = f", run by {me['owner']}" if me.get("owner") else ""
            log.info("connected to %s as %s%s; playing with: %s", self.server, self.name, owner, self.command)
            for tid in self.tournaments:
                status, said = await self._request("POST", f"/api/bot/tournaments/{tid}/join", {})
                if status != 200:
                    why = said.get("message") if isinstance(said, dict) else f"HTTP {status}"
                    raise ConnectError(f"could not join tournament {tid}: {why}")
                log.info("joined tournament %s/tournament/%s", self.server, tid)
            try:
                await self._stream_forever()
            finally:
                for task in list(self._tasks):
                    task.cancel()
                for task in list(self._tasks):
                    try:
                        await task
                    except (asyncio.CancelledError, Exception):
                        pass
        return 0

    async def _stream_forever(self) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed, InvalidHandshake

        url = f"{_ws_url(self.server)}/api/bot/stream"
        delay = 1.0
        while True:
            try:
                async with connect(
                    url, additional_headers={"Authorization": f"Bearer {self.token}"}, open_timeout=HTTP_SECONDS
                ) as ws:
                    async for raw in ws:
                        msg = json.loads(raw)
                        if not isinstance(msg, dict):
                            continue
                        if msg.get("type") == "hello":
                            delay = 1.0
                            log.info("the stream is open: waiting for challenges and games")
                            if self.seek is not None and self._seeking is None:
                                self._seeking = self._spawn(self._seek_forever())
                        elif msg.get("type") == "error" and msg.get("code") == "bot_token":
                            raise ConnectError(f"the server refuses the token: {msg.get('message')}", 2)
                        else:
                            await self._event(msg)
            except ConnectError:
                raise
            except (OSError, TimeoutError, ConnectionClosed, InvalidHandshake) as e:
                log.warning("lost the stream (%s); again in %g s", _shown(e), delay)
            await asyncio.sleep(delay)
            delay = min(BACKOFF_MAX, delay * 2)

    async def _event(self, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        if kind == "gameStart" and isinstance(msg.get("game"), dict):
            self.start(msg["game"])
        elif kind == "challenge" and isinstance(msg.get("challenge"), dict):
            self._spawn(self._answer(msg["challenge"]))
        elif kind == "gameFinish":
            self._spawn(self._keep_seek())
        elif kind == "error":
            log.warning("the server says %s: %s", msg.get("code"), msg.get("message"))

    def start(self, game: dict[str, Any]) -> None:
        gid = str(game.get("id"))
        if gid in self.seen or "token" not in game:
            return
        self.seen.add(gid)
        self.played += 1
        one = Game(self, game, self.played)
        self.games[gid] = one

        async def play() -> None:
            try:
                await one.run()
            finally:
                self.games.pop(gid, None)
                self._spawn(self._keep_seek())

        self._spawn(play())

    async def _answer(self, challenge: dict[str, Any]) -> None:
        cid = str(challenge.get("id"))
        who = (challenge.get("challenger") or {}).get("name", "?")
        kind = "rated" if challenge.get("rated") else "casual"
        hands = challenge.get("hands")
        what = f"{challenge.get('preset')}, {hands} hand{'' if hands == 1 else 's'}, {kind}"
        reason = self.policy.refusal(challenge, len(self.games) + self.accepting)
        try:
            if reason is not None:
                status, out = await self._request("POST", f"/api/bot/challenges/{cid}/decline", {"reason": reason})
                if status == 200:
                    log.info("declined %s's challenge (%s): %s", who, what, reason)
                else:  # it ended meanwhile (cancelled, expired)
                    log.info("%s's challenge (%s) ended before it was declined", who, what)
                return
            self.accepting += 1
            try:
                status, out = await self._request("POST", f"/api/bot/challenges/{cid}/accept")
            finally:
                self.accepting -= 1
        except OSError as e:
            log.warning("could not answer %s's challenge: %s", who, e)
            return
        if status == 201 and isinstance(out, dict):
            log.info("accepted %s's challenge (%s): game %s", who, what, out.get("game_id"))
            self.start({"id": out["game_id"], "token": out["token"], "opponent": {"name": who}})
        else:
            message = out.get("message") if isinstance(out, dict) else status
            log.info("could not accept %s's challenge: %s", who, message)

    async def _seek_forever(self) -> None:
        """With ``--seek``: a seek ends after a while in the lobby (or when the stream was away): post a new
        one now and then, as long as there is room."""
        while True:
            await self._keep_seek()
            await asyncio.sleep(SEEK_EVERY)

    async def _keep_seek(self) -> None:
        """With ``--seek``: one open seek while there is room for a game, none when there is not."""
        if self.seek is None:
            return
        try:
            status, out = await self._request("GET", "/api/bot/seeks")
            if status != 200 or not isinstance(out, dict):
                return
            mine = out.get("seeks", [])
            room = len(self.games) + self.accepting < self.policy.games
            if room and not mine:
                status, out = await self._request("POST", "/api/bot/seeks", self.seek)
                if status == 201:
                    log.info("seeking a game in the lobby: %s", self.seek)
                else:
                    log.warning("could not post a seek: %s", out.get("message") if isinstance(out, dict) else status)
            elif not room:
                for s in mine:
                    await self._request("DELETE", f"/api/bot/seeks/{s['id']}")
        except OSError as e:
            log.warning("could not keep the seek: %s", e)


def run(connector: Connector) -> int:
    """Run ``connector`` until it fails (its exit code) or is stopped (SIGINT, SIGTERM: 0)."""

    async def main() -> int:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        assert task is not None
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, task.cancel)
            except (NotImplementedError, RuntimeError):  # not on this platform, or not the main thread
                pass
        try:
            return await connector.run()
        except asyncio.CancelledError:
            log.info("stopped")
            return 0

    try:
        return asyncio.run(main())
    except ConnectError as e:
        print(f"koikoi bot connect: {e}", file=sys.stderr)
        return e.code
