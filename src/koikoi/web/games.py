"""The games being played: the authoritative match of each, its seats, the AI's turns and who to tell.

Every action goes through :meth:`GameService.act`: it checks the seat, the turn, the sequence number
the client saw and the action's legality against the engine, stores the action, and only then applies
it and tells both seats. A game not in memory (after a restart) is rebuilt from its seed and stored
actions. The computer's moves are stored the same way, so a restart never loses or repeats one.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..ai import AGENT_NAMES, make_agent
from ..hand import IllegalActionError
from ..match import Match
from ..records import GameRecord
from ..rules import PRESETS, RuleError, RuleSet
from .store import Store, StoredGame, StoredSeat, StoreError
from .views import seat_view

__all__ = ["GameService", "GameError", "OPPONENTS", "HINT_PLAYOUTS"]

log = logging.getLogger("koikoi.web")

OPPONENTS = ("friend", *AGENT_NAMES)
HINT_PLAYOUTS = 1500
MAX_NAME = 40

Sender = Callable[[dict[str, Any]], Awaitable[None]]


class GameError(Exception):
    """A request that cannot be done; ``code`` is stable (the page translates it), ``message`` says why."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status

    def to_dict(self) -> dict[str, Any]:
        return {"type": "error", "code": self.code, "message": self.message}


@dataclass
class LiveGame:
    stored: StoredGame
    seats: list[StoredSeat]
    match: Match
    moves: int
    status: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    listeners: dict[int, set[Sender]] = field(default_factory=lambda: {0: set(), 1: set()})
    ai_task: asyncio.Task | None = None
    hints: dict[tuple[int, int], asyncio.Future] = field(default_factory=dict)  # (seat, seq) -> ranking

    @property
    def ai_seat(self) -> int | None:
        for s in self.seats:
            if s.kind == "ai":
                return s.seat
        return None

    def players(self) -> list[dict[str, Any]]:
        return [{"name": s.name, "kind": s.kind, "level": self.stored.opponent if s.kind == "ai" else None,
                 "joined": s.kind == "ai" or s.owner is not None} for s in self.seats]


def clean_name(name: Any, default: str) -> str:
    if name is None or name == "":
        return default
    if not isinstance(name, str):
        raise GameError("bad_name", "a name must be text")
    name = " ".join(name.split())
    if not name:
        return default
    if len(name) > MAX_NAME:
        raise GameError("bad_name", f"a name has at most {MAX_NAME} characters, not {len(name)}")
    return name


def rules_from_request(data: Any) -> RuleSet:
    """A rule set from the lobby's form: ``{"preset": name, "options": {option: value}}``."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise GameError("bad_rules", "rules must be an object with a preset and options")
    name = data.get("preset", "nintendo")
    if name not in PRESETS:
        raise GameError("bad_rules", f"unknown rule preset {name!r}; choose from {', '.join(PRESETS)}")
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise GameError("bad_rules", "options must be an object of option: value")
    try:
        rules = PRESETS[name]
        if options:
            changes = {k: v for k, v in options.items() if k != "name"}
            for k, v in changes.items():
                # JSON has no distinct int and bool, and True would pass for 1: refuse the mix-up.
                current = getattr(rules, k.replace("-", "_"), None)
                if isinstance(current, bool) != isinstance(v, bool):
                    kind = "true or false" if isinstance(current, bool) else type(current).__name__
                    raise RuleError(f"option {k} takes {kind}, not {v!r}")
            rules = rules.replace(**{k.replace("-", "_"): v for k, v in changes.items()})
            if rules != PRESETS[name]:
                rules = rules.replace(name=f"{name} (custom)" if not name.endswith("(custom)") else name)
    except (RuleError, TypeError, ValueError) as e:
        raise GameError("bad_rules", str(e)) from None
    return rules


class GameService:
    """All games of one server. Use from the event loop only."""

    def __init__(self, store: Store, *, ai_options: dict[str, dict[str, Any]] | None = None,
                 ai_delay: float = 0.0) -> None:
        self.store = store
        self.live: dict[str, LiveGame] = {}
        self.ai_options = ai_options or {}
        self.ai_delay = ai_delay  # a pause before the computer's move, so a person can follow it
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="koikoi-ai")
        self.seats: dict[str, StoredSeat] = {}  # token -> seat, for the games in memory
        self._closing = False

    # -- creating and joining ---------------------------------------------------------------------------

    def create(self, *, owner: str, name: Any, opponent: Any, rules: Any, birth_months: Any = None) -> dict[str, Any]:
        if opponent not in OPPONENTS:
            raise GameError("bad_opponent", f"unknown opponent {opponent!r}; choose from {', '.join(OPPONENTS)}")
        rule_set = rules_from_request(rules)
        you = clean_name(name, "Player")
        months = None
        if rule_set.dealer_selection == "birth_month":
            if (not isinstance(birth_months, list) or len(birth_months) != 2
                    or not all(type(m) is int and 1 <= m <= 12 for m in birth_months)):
                raise GameError("bad_birth_months", "these rules choose the first dealer by birth month: give "
                                                    "both players' birth months, two numbers 1..12")
            months = (birth_months[0], birth_months[1])
        seed = random.SystemRandom().getrandbits(62)
        ai_seed = random.SystemRandom().getrandbits(62)
        if opponent == "friend":
            specs = [(0, "human", you, owner), (1, "human", "Friend", None)]
            status = "waiting"
        else:
            specs = [(0, "human", you, owner), (1, "ai", opponent.capitalize(), None)]
            status = "playing"
        game_id, tokens = self.store.create_game(rules=rule_set.to_dict(), seed=seed, opponent=opponent,
                                                 ai_seed=ai_seed, status=status, seat_specs=specs,
                                                 birth_months=months)
        out = {"game_id": game_id, "token": tokens[0], "status": status}
        if opponent == "friend":
            out["invite_token"] = tokens[1]
        else:
            self.schedule_ai(self.load(game_id))
        return out

    def join(self, token: str, *, owner: str, name: Any) -> dict[str, Any]:
        """Take the friend's seat of a game through its invite token."""
        seat = self._seat(token)
        game = self.load(seat.game_id)
        if seat.kind != "human":
            raise GameError("bad_token", "this link is not an invitation")
        if seat.owner is not None and seat.owner != owner:
            raise GameError("seat_taken", "someone else already took this seat", 409)
        for s in game.seats:
            if s.seat != seat.seat and s.owner == owner:
                raise GameError("own_game", "you cannot play against yourself: send the link to a friend", 409)
        you = clean_name(name, "Friend")
        self.store.claim_seat(token, owner, you)
        if game.status == "waiting":
            self.store.set_status(game.stored.id, "playing")
            game.status = "playing"
        game.seats = self.store.seats_of(game.stored.id)
        self._remember_seats(game)
        asyncio.get_event_loop().create_task(self.broadcast(game))
        return {"game_id": game.stored.id, "token": token}

    # -- loading ------------------------------------------------------------------------------------------

    def _seat(self, token: Any) -> StoredSeat:
        if not isinstance(token, str) or not (8 <= len(token) <= 64):
            raise GameError("bad_token", "no game has this link", 404)
        seat = self.seats.get(token)
        if seat is not None and seat.game_id in self.live:
            return seat
        seat = self.store.seat(token)
        if seat is None:
            raise GameError("bad_token", "no game has this link", 404)
        return seat

    def load(self, game_id: str) -> LiveGame:
        game = self.live.get(game_id)
        if game is not None:
            return game
        stored = self.store.game(game_id)
        if stored is None:
            raise GameError("no_game", f"no game {game_id}", 404)
        match = Match(RuleSet.from_dict(stored.rules), seed=stored.seed, birth_months=stored.birth_months)
        for _seat, action in self.store.actions_of(game_id):
            match.apply_action(action)
        game = LiveGame(stored=stored, seats=self.store.seats_of(game_id), match=match, moves=stored.moves,
                        status=stored.status)
        self.live[game_id] = game
        self._remember_seats(game)
        return game

    def _remember_seats(self, game: LiveGame) -> None:
        for s in game.seats:
            self.seats[s.token] = s

    def seat_game(self, token: Any) -> tuple[StoredSeat, LiveGame]:
        seat = self._seat(token)
        return seat, self.load(seat.game_id)

    def view(self, game: LiveGame, seat: int) -> dict[str, Any]:
        v = seat_view(game.match, seat, seq=game.moves, players=game.players(), status=game.status,
                      hints=game.ai_seat is not None)
        v["game_id"] = game.stored.id
        v["opponent"] = game.stored.opponent
        # The invitation link, for its host, until the friend takes the seat.
        v["invite_token"] = next((s.token for s in game.seats
                                  if s.seat != seat and s.kind == "human" and s.owner is None), None)
        return v

    def games_of(self, owner: str) -> list[dict[str, Any]]:
        out = []
        for g, seat in self.store.games_of(owner):
            names = {s.seat: s.name for s in self.store.seats_of(g.id)}
            out.append({"game_id": g.id, "token": seat.token, "seat": seat.seat, "status": g.status,
                        "opponent": g.opponent, "opponent_name": names.get(1 - seat.seat, ""),
                        "rules": g.rules.get("name", ""), "scores": list(g.scores), "moves": g.moves,
                        "updated": g.updated.isoformat()})
        return out

    # -- playing ------------------------------------------------------------------------------------------

    async def act(self, token: Any, action: Any, seq: Any) -> dict[str, Any]:
        seat, game = self.seat_game(token)
        if seat.kind != "human":
            raise GameError("bad_token", "no game has this link", 404)
        if type(action) is not int or type(seq) is not int:
            raise GameError("bad_message", "an action needs an integer 'action' and the integer 'seq' of the "
                                           "state it answers")
        async with game.lock:
            self._check_turn(game, seat.seat, seq)
            if not game.match.hand.is_legal(action):
                try:
                    game.match.hand.apply_action(action)  # raises, with the list of legal actions
                except (IllegalActionError, ValueError) as e:
                    raise GameError("illegal", str(e)) from None
                raise GameError("illegal", f"action {action} is not legal now")  # pragma: no cover
            self._commit(game, seat.seat, action)
        await self.broadcast(game)
        self.schedule_ai(game)
        return {"type": "ack", "seq": game.moves}

    def _check_turn(self, game: LiveGame, seat: int, seq: int) -> None:
        if game.status == "waiting":
            raise GameError("waiting", "your friend has not joined yet: send them the invitation link")
        if game.match.is_over():
            raise GameError("over", "the game is over")
        if seq != game.moves:
            raise GameError("stale", f"the game has moved on (you answered move {seq}, it is at move "
                                     f"{game.moves}): here is the current table", 409)
        if game.match.current_player != seat:
            raise GameError("not_your_turn", "it is not your turn", 409)

    def _commit(self, game: LiveGame, seat: int, action: int) -> None:
        """Store the action, then apply it: if storing fails, nothing changes."""
        trial = game.match.clone()
        trial.apply_action(action)
        status = "finished" if trial.is_over() else game.status
        scores = (trial.scores[0], trial.scores[1])
        try:
            self.store.add_action(game.stored.id, game.moves, seat, action, status=status, scores=scores)
        except StoreError as e:
            # Another server process wrote this move first: forget our copy and rebuild from the database.
            self.live.pop(game.stored.id, None)
            raise GameError("stale", str(e), 409) from None
        game.match.apply_action(action)
        game.moves += 1
        game.status = status

    async def broadcast(self, game: LiveGame) -> None:
        for seat in (0, 1):
            listeners = list(game.listeners[seat])
            if not listeners:
                continue
            msg = {"type": "state", "state": self.view(game, seat)}
            for send in listeners:
                try:
                    await send(msg)
                except Exception:  # a closed socket: its handler removes it
                    game.listeners[seat].discard(send)

    # -- the computer's turns -------------------------------------------------------------------------

    def schedule_ai(self, game: LiveGame) -> None:
        ai = game.ai_seat
        if ai is None or self._closing or game.status != "playing" or game.match.is_over():
            return
        if game.match.current_player != ai:
            return
        if game.ai_task is not None and not game.ai_task.done():
            return
        game.ai_task = asyncio.get_event_loop().create_task(self._ai_turns(game, ai))

    async def _ai_turns(self, game: LiveGame, ai: int) -> None:
        loop = asyncio.get_running_loop()
        while not self._closing and not game.match.is_over() and game.match.current_player == ai:
            seq = game.moves
            obs = game.match.observation(ai)
            agent = make_agent(game.stored.opponent, seed=(game.stored.ai_seed + seq) & ((1 << 62) - 1),
                               **self.ai_options.get(game.stored.opponent, {}))
            if self.ai_delay:
                await asyncio.sleep(self.ai_delay)
            try:
                action = await loop.run_in_executor(self.pool, agent.choose, obs)
            except RuntimeError:  # the pool shut down: the server is stopping
                return
            async with game.lock:
                if game.moves != seq or self._closing:
                    return
                self._commit(game, ai, action)
            await self.broadcast(game)

    def resume_ai_games(self) -> int:
        """After a start: let the computer move in every game that waits for it."""
        n = 0
        for g in self.store.games_with_status("playing"):
            if g.opponent != "friend":
                try:
                    game = self.load(g.id)
                except Exception:  # a game the engine can no longer rebuild: leave it, say so
                    log.exception("cannot rebuild game %s", g.id)
                    continue
                self.schedule_ai(game)
                n += 1
        return n

    async def hint(self, token: Any, seq: Any) -> dict[str, Any]:
        seat, game = self.seat_game(token)
        if game.ai_seat is None:
            raise GameError("no_hints", "hints are given in games against the computer only")
        if type(seq) is not int:
            raise GameError("bad_message", "a hint request needs the integer 'seq' of the state it is for")
        self._check_turn(game, seat.seat, seq)
        # One search per position: asking again (or many times at once) waits for the same answer.
        key = (seat.seat, seq)
        future = game.hints.get(key)
        if future is None:
            game.hints = {k: f for k, f in game.hints.items() if k[1] == seq}
            obs = game.match.observation(seat.seat)
            agent = make_agent("hard", seed=(game.stored.ai_seed ^ 0x5A5A5A) + seq, playouts=HINT_PLAYOUTS,
                               time_limit=1.0)
            future = asyncio.get_running_loop().run_in_executor(self.pool, agent.rank, obs)
            game.hints[key] = future
        choices = await asyncio.shield(future)
        return {"type": "hint", "seq": seq,
                "choices": [{"action": c.action, "value": round(c.value, 2)} for c in choices]}

    def forget_if_idle(self, game: LiveGame) -> None:
        """Drop a finished game nobody watches from memory (the database keeps it)."""
        if game.match.is_over() and not game.listeners[0] and not game.listeners[1]:
            if self.live.get(game.stored.id) is game:
                del self.live[game.stored.id]
                for s in game.seats:
                    self.seats.pop(s.token, None)

    # -- records ------------------------------------------------------------------------------------------

    def record(self, game_id: Any, token: Any) -> GameRecord:
        seat, game = self.seat_game(token)
        if seat.game_id != game_id:
            raise GameError("bad_token", "this link is not a seat of that game", 403)
        if not game.match.is_over():
            # The record holds the deals and the seed: it would show the opponent's hand and the stock.
            raise GameError("not_finished", "a game can be downloaded once it is over", 403)
        players = [{"name": s.name, "kind": "ai" if s.kind == "ai" else "human"} for s in game.seats]
        return GameRecord.from_match(game.match, players, metadata={"site": "koikoi serve", "game": game.stored.id})

    async def close(self) -> None:
        self._closing = True
        for game in self.live.values():
            if game.ai_task is not None:
                game.ai_task.cancel()
        self.pool.shutdown(wait=False, cancel_futures=True)
