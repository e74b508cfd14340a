"""An arena run: the players, the games, their statistics and the ``--jsonl`` file (koikoi.arena)."""

from __future__ import annotations

import math
import os
import random
import shutil
import signal
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import safejson
from ..actions import KOIKOI
from ..botproto import (
    BotError,
    BotProcess,
    hand_end_message,
    match_end_message,
    read_action,
    split_command,
)
from ..match import Match
from ..observation import Observation
from ..playerspec import PlayerSpec, SpecError, format_value, parse_assignment, parse_spec, with_options
from ..rules import RuleSet

__all__ = [
    "ArenaError",
    "GameResult",
    "PlayerStats",
    "ArenaReport",
    "run_arena",
    "play_game",
    "split_players",
    "wilson_interval",
    "builtin_names",
    "DEFAULT_TIME_LIMIT",
    "ON_TIMEOUT",
    "Difference",
    "points_difference",
    "apply_player_settings",
    "canonical_spec",
    "late_answer_seconds",
    "read_run_file",
    "summarize_files",
]

DEFAULT_TIME_LIMIT = 5.0
_Z95 = 1.959963984540054


class ArenaError(ValueError):
    """A bad arena setting: an unknown player, a bot command that cannot run, a bad number."""


# -- statistics ------------------------------------------------------------------------------------


def wilson_interval(successes: float, n: int, z: float = _Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default); ``successes`` may be fractional.

    >>> lo, hi = wilson_interval(60, 100)
    >>> round(lo, 3), round(hi, 3)
    (0.502, 0.691)
    >>> wilson_interval(0, 0)
    (0.0, 1.0)
    """
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(0.0, p * (1 - p) / n + z * z / (4 * n * n))) / denom
    lo = 0.0 if successes <= 0 else max(0.0, centre - half)
    hi = 1.0 if successes >= n else min(1.0, centre + half)  # exact at the ends, whatever the rounding
    return (lo, hi)


# -- players ---------------------------------------------------------------------------------------


def builtin_names() -> list[str]:
    """The names of the built-in computer players (``koikoi.ai``'s levels when it is installed)."""
    names: list[str] = []
    ai = _ai_module()
    if ai is not None:
        names += list(getattr(ai, "AGENT_NAMES", ()))
        names += [n for n in getattr(ai, "AGENT_ALIASES", {}) if n not in names]
    from ..players import PLAYER_KINDS

    names += [n for n in PLAYER_KINDS if n not in names]
    return names


def _ai_module():
    import importlib.util

    if importlib.util.find_spec("koikoi.ai") is None:
        return None
    from .. import ai  # an error inside koikoi.ai is a real error: let it show

    return ai if hasattr(ai, "make_agent") else None


POLICY_PREFIX = "policy:"
_policies: dict[tuple[str, int, int], Any] = {}  # (path, mtime, size) -> loaded koikoi.policy.Policy


def load_policy_agent(path: str, seed: int | None = None):
    """A trained policy file (``policy:FILE``) as a player. NumPy is imported only here, so the arena
    works without it; each file is read once per process (a worker plays many games with it)."""
    try:
        from .. import policy
    except ImportError as e:
        raise ArenaError(f"policy:{path} cannot be played here: {e}") from None  # says which package is missing
    try:
        st = os.stat(path)
        key = (os.path.abspath(path), st.st_mtime_ns, st.st_size)
    except OSError:
        key = None  # load_policy names the problem
    try:
        loaded = _policies.get(key) if key else None
        if loaded is None:
            loaded = policy.load_policy(path)
            if key:
                _policies[key] = loaded
    except policy.PolicyError as e:
        raise ArenaError(str(e)) from None
    return policy.PolicyAgent(loaded, seed, name=POLICY_PREFIX + path)


def make_builtin(name: str, seed: int | None, rules: RuleSet):
    """A built-in computer player by spec: a name with its options, ``hard[playouts=800;time_limit=none]``
    (``koikoi.playerspec``), made by ``koikoi.ai.make_agent`` first, then ``koikoi.players``;
    ``policy:FILE`` is a trained policy (``koikoi.policy``). An unknown player, an option the player
    does not take or a value it refuses raises :class:`ArenaError` saying which."""
    if name.startswith(POLICY_PREFIX):
        return load_policy_agent(name[len(POLICY_PREFIX) :], seed)
    try:
        spec = parse_spec(name)
    except SpecError as e:
        raise ArenaError(str(e)) from None
    if spec.is_bot:
        raise ArenaError(f"{name!r} is a bot, not a built-in player")
    factory, params = _builtin_factory(spec.name, rules)
    options = {key: _option_value(spec.name, key, value, params) for key, value in spec.options.items()}
    try:
        return factory(seed, **options)
    except (ValueError, TypeError) as e:  # the player's own check of a value: playouts must be at least 1
        raise ArenaError(f"player {str(spec)!r}: {e}") from None


_factories: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {}


def _builtin_factory(name: str, rules: RuleSet) -> tuple[Callable[..., Any], dict[str, Any]]:
    """How to make the built-in player ``name`` (``factory(seed, **options)``) and the options it takes
    (name -> the type its constructor declares), read from its constructor once per process."""
    import inspect
    import typing

    known = _factories.get(name)  # koikoi.ai's players only: koikoi.players' depend on the rules
    if known is not None:
        return known
    ai = _ai_module()
    agent: Any = None
    factory: Callable[..., Any] | None = None
    if ai is not None:
        try:
            agent = ai.make_agent(name, seed=0)
        except ValueError:
            agent = None
        else:
            factory = lambda seed, **options: ai.make_agent(name, seed=seed, **options)  # noqa: E731
    if factory is None:
        from ..players import make_player

        try:
            agent = make_player(name, 0, rules)
        except ValueError:
            raise ArenaError(
                f"unknown player {name!r}: give a built-in player ({', '.join(builtin_names())}), "
                "cmd:COMMAND for a bot program or policy:FILE for a trained policy"
            ) from None

        def factory(seed: int | None, **options: Any) -> Any:
            return make_player(name, seed, rules)

        return factory, {}  # koikoi.players' players take no options
    init = type(agent).__init__
    try:
        hints = typing.get_type_hints(init)
    except Exception:  # noqa: BLE001 - an annotation this Python cannot read: take any value
        hints = {}
    params = {
        p.name: hints.get(p.name, Any)
        for p in inspect.signature(init).parameters.values()
        if p.name not in ("self", "seed") and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    _factories[name] = (factory, params)
    return factory, params


def _option_value(player: str, key: str, value: Any, params: dict[str, Any]) -> Any:
    """``value`` as the type the option ``key`` of ``player`` declares, or an ArenaError saying why not."""
    import types
    import typing

    if key not in params:
        takes = f"its options are {', '.join(params)}" if params else "it takes no options"
        raise ArenaError(f"{player} has no option {key!r}: {takes}")
    hint = params[key]
    if hint is Any:
        return value
    union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    allowed = set(typing.get_args(hint)) if union else {hint}
    shown = format_value(value)
    if value is None:
        if type(None) in allowed:
            return None
        raise ArenaError(f"{player}.{key} cannot be none")
    if isinstance(value, bool):
        if bool in allowed:
            return value
    elif isinstance(value, int):
        if int in allowed:
            return value
        if float in allowed:
            return float(value)
    elif isinstance(value, float):
        if float in allowed:
            return value
        if int in allowed:
            raise ArenaError(f"{player}.{key} is a whole number, not {shown}")
    elif str in allowed:
        return value
    wants = " or ".join(
        {bool: "true or false", int: "a whole number", float: "a number", str: "a word", type(None): "none"}.get(
            t, getattr(t, "__name__", str(t))
        )
        for t in sorted(allowed, key=lambda t: (t is type(None), str(t)))
    )
    raise ArenaError(f"{player}.{key} is {wants}, not {shown}")


def check_player(spec: str, rules: RuleSet) -> None:
    """Raise :class:`ArenaError` unless ``spec`` names a player that can play."""
    if spec.startswith("cmd:"):
        try:
            argv = split_command(spec[4:])
        except ValueError as e:
            raise ArenaError(str(e)) from None
        program = argv[0]
        if os.sep in program:
            if not os.access(program, os.X_OK) or os.path.isdir(program):
                raise ArenaError(f"bot program {program!r} is not an executable file")
        elif shutil.which(program) is None:
            raise ArenaError(f"bot program {program!r} is not on the PATH")
        return
    make_builtin(spec, 0, rules)


def split_players(text: str) -> tuple[str, str]:
    """Read ``--players A,B``. A ``cmd:`` command may hold commas as long as the split is unambiguous.

    >>> split_players("greedy,random")
    ('greedy', 'random')
    >>> split_players("cmd:python3 bot.py --tags a,b,hard")
    ('cmd:python3 bot.py --tags a,b', 'hard')
    >>> split_players("policy:runs/ppo.npz,easy")
    ('policy:runs/ppo.npz', 'easy')
    >>> split_players("hard[time_limit=none;playouts=11000],cmd:./bot --opt=a,b")
    ('hard[time_limit=none;playouts=11000]', 'cmd:./bot --opt=a,b')
    """

    def plausible(spec: str) -> bool:
        for prefix in ("cmd:", POLICY_PREFIX):
            if spec.startswith(prefix):
                return len(spec) > len(prefix)
        return named(spec)

    def named(spec: str) -> bool:  # a built-in name, with its options or not
        try:
            return not parse_spec(spec).is_bot
        except SpecError:
            return False

    cuts = [
        i for i, ch in enumerate(text) if ch == "," and plausible(text[:i].strip()) and plausible(text[i + 1 :].strip())
    ]
    if not cuts:
        raise ArenaError(
            f"--players expects two players as A,B (built-in names, NAME[OPTION=VALUE;...], cmd:COMMAND "
            f"or policy:FILE), not {text!r}"
        )
    if len(cuts) > 1:
        # A plain name on the right is the likelier reading than a command split inside its arguments.
        by_name = [i for i in cuts if named(text[i + 1 :].strip())]
        cmd = [i for i in cuts if text[i + 1 :].strip().startswith("cmd:")]
        pick = cmd if len(cmd) == 1 else by_name if len(by_name) == 1 else []
        if len(pick) != 1:
            raise ArenaError(
                f"--players {text!r} can be split at more than one comma; avoid commas in bot "
                "commands (wrap the bot in a script)"
            )
        cuts = pick
    i = cuts[0]
    return text[:i].strip(), text[i + 1 :].strip()


class _Forfeit(Exception):
    def __init__(self, kind: str, reason: str, stderr: str = "") -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.stderr = stderr


ON_TIMEOUT = ("forfeit", "first")


def late_answer_seconds(time_limit: float) -> float:
    """How long a bot over the time limit is waited for under ``on_timeout="first"`` before it counts
    as hung and forfeits: ten times the limit, and at least ten seconds more than the limit.

    >>> late_answer_seconds(5), late_answer_seconds(0.5)
    (50, 10.5)
    """
    return max(10 * time_limit, time_limit + 10)


class _Builtin:
    """A built-in player behind the arena's agent interface: its errors and illegal actions forfeit.

    It runs in the arena's process and cannot be stopped mid-thought, so its time is measured: an
    answer that took longer than the time limit forfeits, or is replaced by the first legal action
    (``on_timeout``), as a bot's would be."""

    def __init__(self, spec: str, seed: int, rules: RuleSet, on_timeout: str = "forfeit") -> None:
        self.spec = spec
        self.agent = make_builtin(spec, seed, rules)
        self.name = spec
        self.on_timeout = on_timeout

    def start(self, seat: int, rules: RuleSet, time_limit: float, game: int, bot_seed: int) -> None:
        pass

    def choose(self, obs: Observation, decision: int, time_limit: float) -> tuple[int, bool]:
        """The action and whether the player overran the time limit (then the first legal action)."""
        start = time.perf_counter()
        try:
            action = self.agent.choose(obs)
        except Exception as e:  # noqa: BLE001 - any failure of a player costs it the match, not the arena
            raise _Forfeit("error", f"raised {type(e).__name__}: {e}") from None
        spent = time.perf_counter() - start
        try:
            action = int(action)
        except (TypeError, ValueError):
            raise _Forfeit("illegal", f"returned {action!r}, not an action") from None
        if action not in obs.legal_actions:
            raise _Forfeit("illegal", f"returned the illegal action {action!r}")
        if spent > time_limit:
            if self.on_timeout == "first":
                return obs.legal_actions[0], True
            raise _Forfeit(
                "timeout", f"took {spent:.3f} s, over the time limit of {time_limit:g} s (decision {decision})"
            )
        return action, False

    def notify(self, message: dict[str, Any], time_limit: float) -> None:
        pass

    def close(self, polite: bool = True) -> None:
        pass


class _Bot:
    """An external program speaking the bot protocol. Whatever it sends, the arena does not fail: a
    protocol error, or any error the arena meets handling the bot's answer, is the bot's forfeit.

    With ``on_timeout="first"`` a bot that does not answer in time has the first legal action played
    for it, as a built-in player that overran would (neither can be stopped mid-thought): the arena
    waits for its late answer (up to :func:`late_answer_seconds`), checks it and throws it away, so the
    bot and the arena stay in step. A bot still silent then is hung, and forfeits."""

    def __init__(self, spec: str, stderr_path: Path | None, on_timeout: str = "forfeit") -> None:
        self.spec = spec
        self.process = BotProcess(spec[4:], stderr_path=stderr_path)
        self.name = spec
        self.on_timeout = on_timeout
        # The match played (set by play_game): a version-2 bot is sent the positions of the cards, which
        # are taken from the match's deal (koikoi.observation.positions).
        self.match: Match | None = None

    def _forfeit(self, e: BotError) -> _Forfeit:
        return _Forfeit(e.kind, str(e), self.process.stderr_tail())

    def _failed(self, e: Exception) -> _Forfeit:
        return _Forfeit(
            "error", f"the arena could not handle the bot: {type(e).__name__}: {e}", self.process.stderr_tail()
        )

    def start(self, seat: int, rules: RuleSet, time_limit: float, game: int, bot_seed: int) -> None:
        try:
            self.process.start()
            info = self.process.hello(seat, rules, time_limit, game=game, bot_seed=bot_seed)
        except BotError as e:
            raise self._forfeit(e) from None
        except Exception as e:  # noqa: BLE001 - a bot never brings the arena down
            raise self._failed(e) from None
        if "name" in info:
            self.name = info["name"]
        self.author = info.get("author")

    def choose(self, obs: Observation, decision: int, time_limit: float) -> tuple[int, bool]:
        """The action and whether the bot overran the time limit (then the first legal action)."""
        start = time.monotonic()
        try:
            try:
                return self.process.choose(obs, decision, time_limit, match=self.match), False
            except BotError as e:
                if e.kind != "timeout" or self.on_timeout != "first":
                    raise
                deadline = start + late_answer_seconds(time_limit)
                late = self.process.read_line(deadline, f"answer to choose (decision {decision}, over the time limit)")
                read_action(late, obs.legal_actions)  # a late answer must still be an answer
                return obs.legal_actions[0], True
        except BotError as e:
            raise self._forfeit(e) from None
        except Exception as e:  # noqa: BLE001
            raise self._failed(e) from None

    def notify(self, message: dict[str, Any], time_limit: float) -> None:
        if self.process.proc is None:
            return  # never started (the other player failed first) or already closed
        try:
            self.process.notify(message, time_limit)
        except BotError as e:
            raise self._forfeit(e) from None
        except Exception as e:  # noqa: BLE001
            raise self._failed(e) from None

    def close(self, polite: bool = True) -> None:
        self.process.close(polite=polite)


# -- one game --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GameJob:
    """Everything a worker needs to play game ``index``: plain data, so it can go to another process
    (the players' options are part of their specs)."""

    index: int
    rules: RuleSet
    seed: int
    specs: tuple[str, str]  # players A and B
    agent_seeds: tuple[int, int]  # for players A and B
    time_limit: float
    birth_months: tuple[int, int] | None = None
    records_dir: str | None = None
    logs_dir: str | None = None
    width: int = 4
    on_timeout: str = "forfeit"

    @property
    def seats(self) -> tuple[int, int]:
        """The player (0 = A, 1 = B) at seats 0 and 1."""
        return (0, 1) if self.index % 2 == 0 else (1, 0)

    @property
    def stem(self) -> str:
        return f"game-{self.index + 1:0{self.width}d}"


_TIMINGS = ("decision_seconds", "decision_worst")


@dataclass(slots=True)
class GameResult:
    """One game's figures, by player (0 = A, 1 = B) unless a name says seat."""

    index: int
    seed: int
    seats: tuple[int, int]
    winner: int | None  # the winning player, None for a drawn match
    scores: list[int]  # final match scores by player
    reason: str  # hands, target, bankrupt or forfeit
    names: list[str]
    points_won: list[int] = field(default_factory=lambda: [0, 0])  # points gained in the finished hands
    hands: int = 0
    hand_wins: list[int] = field(default_factory=lambda: [0, 0])
    koikoi_calls: list[int] = field(default_factory=lambda: [0, 0])
    koikoi_paid: list[int] = field(default_factory=lambda: [0, 0])
    decisions: list[int] = field(default_factory=lambda: [0, 0])
    decision_seconds: list[float] = field(default_factory=lambda: [0.0, 0.0])
    decision_worst: list[float] = field(default_factory=lambda: [0.0, 0.0])
    overruns: list[int] = field(default_factory=lambda: [0, 0])  # decisions over the time limit
    forfeit: dict[str, Any] | None = None  # {"player", "seat", "kind", "reason", "stderr", "hand"}
    record: str | None = None
    arena_seed: int | None = None  # the seed of the arena run it belongs to

    def figures(self) -> dict[str, Any]:
        """Everything but the timings (which differ from run to run)."""
        return {k: getattr(self, k) for k in self.__slots__ if k not in _TIMINGS}

    def to_json(self) -> dict[str, Any]:
        """The line ``--jsonl`` writes for this match; :meth:`from_json` reads it back exactly."""
        times = [
            {
                "count": self.decisions[p],
                "mean": self.decision_seconds[p] / self.decisions[p] if self.decisions[p] else None,
                "max": self.decision_worst[p] if self.decisions[p] else None,
                "total": self.decision_seconds[p],
            }
            for p in (0, 1)
        ]
        return {
            "type": "match",
            "arena_seed": self.arena_seed,
            "game": self.index + 1,
            "seed": self.seed,
            "seats": ["AB"[self.seats[0]], "AB"[self.seats[1]]],
            "names": self.names,
            "winner": None if self.winner is None else "AB"[self.winner],
            "reason": self.reason,
            "scores": self.scores,
            "hands": self.hands,
            "points_won": self.points_won,
            "hand_wins": self.hand_wins,
            "koikoi_calls": self.koikoi_calls,
            "koikoi_paid": self.koikoi_paid,
            "decision_times": times,
            "overruns": self.overruns,
            "forfeit": None if self.forfeit is None else {**self.forfeit, "player": "AB"[self.forfeit["player"]]},
            "record": self.record,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> GameResult:
        """A match line of a ``--jsonl`` file (KeyError, TypeError or ValueError when it is not one)."""
        player = {"A": 0, "B": 1}
        seats = (player[d["seats"][0]], player[d["seats"][1]])
        if sorted(seats) != [0, 1]:
            raise ValueError(f"seats {d['seats']!r} are not A and B")
        forfeit = d["forfeit"]
        if forfeit is not None:
            forfeit = {**forfeit, "player": player[forfeit["player"]]}
        times = d["decision_times"]

        def pair(key: str, kind: type) -> list[Any]:
            value = d[key]
            if not isinstance(value, list) or len(value) != 2 or not all(isinstance(x, kind) for x in value):
                raise ValueError(f"{key} is not a pair of {kind.__name__}s")
            return list(value)

        return cls(
            index=int(d["game"]) - 1,
            seed=int(d["seed"]),
            seats=seats,
            winner=None if d["winner"] is None else player[d["winner"]],
            scores=pair("scores", int),
            reason=str(d["reason"]),
            names=pair("names", str),
            points_won=pair("points_won", int),
            hands=int(d["hands"]),
            hand_wins=pair("hand_wins", int),
            koikoi_calls=pair("koikoi_calls", int),
            koikoi_paid=pair("koikoi_paid", int),
            decisions=[int(t["count"]) for t in times],
            decision_seconds=[float(t["total"]) for t in times],
            decision_worst=[float(t["max"] or 0.0) for t in times],
            overruns=pair("overruns", int),
            forfeit=forfeit,
            record=d["record"],
            arena_seed=d["arena_seed"],
        )


def play_game(job: GameJob) -> GameResult:
    """Play one match of the arena; never raises for a player's failure (that is a forfeit)."""
    rules = job.rules
    seats = job.seats
    agents: list[Any] = [None, None]  # by seat
    logs = Path(job.logs_dir) if job.logs_dir else None
    for seat, player in enumerate(seats):
        spec = job.specs[player]
        if spec.startswith("cmd:"):
            log = logs / f"{job.stem}.{'AB'[player]}.stderr.log" if logs else None
            agents[seat] = _Bot(spec, log, job.on_timeout)
        else:
            agents[seat] = _Builtin(spec, job.agent_seeds[player], rules, job.on_timeout)
    match = Match(rules, seed=job.seed, birth_months=job.birth_months)
    for agent in agents:
        if isinstance(agent, _Bot):
            agent.match = match
    result = GameResult(
        index=job.index,
        seed=job.seed,
        seats=seats,
        winner=None,
        scores=[0, 0],
        reason="",
        names=[job.specs[0], job.specs[1]],
    )
    reported = 0
    calls: dict[int, list[int]] = {}  # hand number -> koi-koi calls by seat
    seat = 0
    try:
        try:
            for seat in (0, 1):
                agents[seat].start(seat, rules, job.time_limit, job.index + 1, job.agent_seeds[seats[seat]])
                result.names[seats[seat]] = agents[seat].name
            decision = 0
            while True:
                while reported < len(match.results):  # hands that ended, at the deal too
                    reported += 1
                    r = match.results[reported - 1]
                    _count_hand(result, seats, r, calls.get(reported, [0, 0]))
                    for seat in (0, 1):
                        agents[seat].notify(hand_end_message(reported, r, match.scores), job.time_limit)
                if match.is_over():
                    break
                seat = match.current_player
                player = seats[seat]
                obs = match.observation(seat)
                decision += 1
                start = time.perf_counter()
                try:
                    action, overran = agents[seat].choose(obs, decision, job.time_limit)
                except _Forfeit as f:
                    result.overruns[player] += f.kind == "timeout"  # an overrun, whatever it costs
                    raise
                finally:
                    spent = time.perf_counter() - start
                    result.decisions[player] += 1
                    result.decision_seconds[player] += spent
                    result.decision_worst[player] = max(result.decision_worst[player], spent)
                if overran:
                    result.overruns[player] += 1
                if action == KOIKOI:
                    calls.setdefault(match.hand_number, [0, 0])[seat] += 1
                match.apply_action(action)
            o = match.outcome
            assert o is not None
            result.winner = None if o.winner is None else seats[o.winner]
            result.reason = o.reason
            for seat in (0, 1):
                try:
                    agents[seat].notify(match_end_message(o.winner, o.scores, o.reason), job.time_limit)
                except _Forfeit:
                    pass  # the match is over: a bot that cannot take the news loses nothing
        except _Forfeit as f:
            player = seats[seat]
            result.winner = 1 - player
            result.reason = "forfeit"
            result.forfeit = {
                "player": player,
                "seat": seat,
                "kind": f.kind,
                "reason": f.reason,
                "stderr": f.stderr,
                "hand": match.hand_number,
            }
            agents[seat].close(polite=False)
            other = 1 - seat
            s = match.scores
            try:
                agents[other].notify(
                    match_end_message(other, s, "forfeit", {"seat": seat, "kind": f.kind, "reason": f.reason}),
                    job.time_limit,
                )
            except _Forfeit:
                pass
    except BaseException:
        # Interrupted (KeyboardInterrupt) or a bug of the arena: no goodbyes, every bot dies now.
        for a in agents:
            if a is not None:
                try:
                    a.close(polite=False)
                except Exception:  # noqa: BLE001 - close the others all the same
                    pass
        raise
    finally:
        for a in agents:
            if a is not None:
                a.close()
    result.scores = [match.scores[seats.index(0)], match.scores[seats.index(1)]]
    if job.records_dir:
        result.record = _save_record(job, match, result)
    return result


def _count_hand(result: GameResult, seats: tuple[int, int], r, calls: list[int]) -> None:
    result.hands += 1
    for seat in (0, 1):
        player = seats[seat]
        # Points gained: under transfer rules the loser's delta is negative, and that is the winner's gain.
        result.points_won[player] += max(0, r.deltas[seat])
        result.koikoi_calls[player] += calls[seat]
        if r.winner == seat:
            result.hand_wins[player] += 1
            result.koikoi_paid[player] += calls[seat]


def spec_options(spec: str) -> dict[str, Any]:
    """The options written in a player spec (none for a bot or a policy)."""
    return {} if spec.startswith(("cmd:", POLICY_PREFIX)) else dict(parse_spec(spec).options)


def _save_record(job: GameJob, match: Match, result: GameResult) -> str:
    from ..records import GameRecord, write_record

    players = []
    for seat in (0, 1):
        player = job.seats[seat]
        spec = job.specs[player]
        entry: dict[str, Any] = {
            "name": result.names[player],
            "kind": "bot" if spec.startswith("cmd:") else "computer",
            "arena_player": "AB"[player],
            "spec": spec,
        }
        options = spec_options(spec)
        if options:
            entry["options"] = options
        players.append(entry)
    arena: dict[str, Any] = {
        "game": job.index + 1,
        "seed": job.seed,
        "time_limit": job.time_limit,
        "on_timeout": job.on_timeout,
    }
    if any(result.overruns):
        arena["overruns"] = [result.overruns[job.seats[0]], result.overruns[job.seats[1]]]  # by seat
    meta: dict[str, Any] = {"arena": arena}
    if result.forfeit is not None:
        meta["forfeit"] = {k: result.forfeit[k] for k in ("seat", "kind", "reason")}
    record = GameRecord.from_match(match, players, metadata=meta)
    path = Path(job.records_dir) / f"{job.stem}.json"  # type: ignore[arg-type]
    write_record(record, path)
    return str(path)


# -- many games ------------------------------------------------------------------------------------


@dataclass(slots=True)
class PlayerStats:
    """One player's figures over the arena. The win rate counts a drawn match as half a win."""

    label: str  # A or B
    spec: str
    name: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    forfeits: int = 0
    points_won: int = 0
    hands: int = 0
    hand_wins: int = 0
    koikoi_calls: int = 0
    koikoi_paid: int = 0
    decisions: int = 0
    decision_seconds: float = 0.0
    decision_worst: float = 0.0
    overruns: int = 0

    @property
    def options(self) -> dict[str, Any]:
        return spec_options(self.spec)

    @property
    def win_rate(self) -> float:
        return (self.wins + self.draws / 2) / self.games if self.games else 0.0

    @property
    def win_rate_ci(self) -> tuple[float, float]:
        return wilson_interval(self.wins + self.draws / 2, self.games)

    def to_dict(self) -> dict[str, Any]:
        lo, hi = self.win_rate_ci
        r = lambda x: round(x, 6)  # noqa: E731
        return {
            "player": self.label,
            "spec": self.spec,
            "options": self.options,
            "name": self.name,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "forfeits": self.forfeits,
            "win_rate": r(self.win_rate),
            "win_rate_ci95": [r(lo), r(hi)],
            "points_won": self.points_won,
            "points_won_per_match": r(self.points_won / self.games) if self.games else 0.0,
            "hands": self.hands,
            "hand_wins": self.hand_wins,
            "points_won_per_hand": r(self.points_won / self.hands) if self.hands else 0.0,
            "koikoi_calls": self.koikoi_calls,
            "koikoi_calls_per_hand": r(self.koikoi_calls / self.hands) if self.hands else 0.0,
            "koikoi_paid": self.koikoi_paid,
            "koikoi_paid_rate": r(self.koikoi_paid / self.koikoi_calls) if self.koikoi_calls else None,
            "decisions": self.decisions,
            "decision_seconds_mean": r(self.decision_seconds / self.decisions) if self.decisions else None,
            "decision_seconds_worst": r(self.decision_worst) if self.decisions else None,
            "overruns": self.overruns,
        }


@dataclass(frozen=True, slots=True)
class Difference:
    """A's points won minus B's, per match and per hand, each with a 95% interval (normal approximation;
    None with fewer than two matches). Matches are the independent units: the per-hand interval is
    that of a ratio of sums over matches (the delta method), as hands of one match are not independent."""

    matches: int
    hands: int
    per_match: float
    per_match_ci: tuple[float, float] | None
    per_hand: float
    per_hand_ci: tuple[float, float] | None

    def to_dict(self) -> dict[str, Any]:
        r = lambda x: round(x, 6)  # noqa: E731
        return {
            "of": "A's points won minus B's; 95% interval, normal approximation over matches",
            "matches": self.matches,
            "hands": self.hands,
            "per_match": r(self.per_match),
            "per_match_ci95": None if self.per_match_ci is None else [r(x) for x in self.per_match_ci],
            "per_hand": r(self.per_hand),
            "per_hand_ci95": None if self.per_hand_ci is None else [r(x) for x in self.per_hand_ci],
        }


def points_difference(results: Sequence[GameResult], z: float = _Z95) -> Difference:
    """The :class:`Difference` of A's and B's points won over ``results``.

    >>> g = lambda a, b, hands: GameResult(0, 0, (0, 1), None, [0, 0], "hands", ["a", "b"], [a, b], hands)
    >>> d = points_difference([g(10, 4, 6), g(3, 5, 6), g(8, 0, 6)])
    >>> d.per_match, round(d.per_hand, 4), [round(x, 3) for x in d.per_match_ci]
    (4.0, 0.6667, [-1.988, 9.988])
    """
    n = len(results)
    d = [g.points_won[0] - g.points_won[1] for g in results]
    h = [g.hands for g in results]
    hands = sum(h)
    per_match = sum(d) / n if n else 0.0
    per_hand = sum(d) / hands if hands else 0.0
    match_ci = hand_ci = None
    if n >= 2:
        sd = math.sqrt(sum((x - per_match) ** 2 for x in d) / (n - 1))
        half = z * sd / math.sqrt(n)
        match_ci = (per_match - half, per_match + half)
        if hands:
            resid = sum((x - per_hand * k) ** 2 for x, k in zip(d, h))
            half = z * math.sqrt(resid / (n * (n - 1))) / (hands / n)
            hand_ci = (per_hand - half, per_hand + half)
    return Difference(n, hands, per_match, match_ci, per_hand, hand_ci)


@dataclass(slots=True)
class ArenaReport:
    """The figures of an arena run, or of several runs' ``--jsonl`` files merged (then ``seed`` lists
    their seeds, and ``jobs`` and ``seconds`` are None)."""

    rules: RuleSet
    games: int
    seed: int | list[int]
    jobs: int | None
    time_limit: float
    players: list[PlayerStats]
    results: list[GameResult]
    seconds: float | None
    on_timeout: str = "forfeit"
    jsonl: str | None = None
    resumed: int = 0  # games read back from the --jsonl file, not played now

    @property
    def difference(self) -> Difference:
        return points_difference(self.results)

    @property
    def forfeits(self) -> list[dict[str, Any]]:
        out = []
        for g in self.results:
            if g.forfeit is not None:
                f = g.forfeit
                out.append(
                    {
                        "game": g.index + 1,
                        "player": "AB"[f["player"]],
                        "spec": self.players[f["player"]].spec,
                        "seat": f["seat"],
                        "hand": f["hand"],
                        "kind": f["kind"],
                        "reason": f["reason"],
                        "stderr": f["stderr"],
                        "record": g.record,
                    }
                )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules.name,
            "rule_set": self.rules.to_dict(),
            "games": self.games,
            "seed": self.seed,
            "jobs": self.jobs,
            "time_limit": self.time_limit,
            "on_timeout": self.on_timeout,
            "seconds": None if self.seconds is None else round(self.seconds, 3),
            "jsonl": self.jsonl,
            "resumed": self.resumed,
            "win_rate": "wins plus half the draws, over the games; 95% Wilson score interval",
            "players": [p.to_dict() for p in self.players],
            "difference": self.difference.to_dict(),
            "forfeits": self.forfeits,
            "matches": [
                {
                    "game": g.index + 1,
                    "arena_seed": g.arena_seed,
                    "seed": g.seed,
                    "seat0": "AB"[g.seats[0]],
                    "winner": None if g.winner is None else "AB"[g.winner],
                    "scores": g.scores,
                    "reason": g.reason,
                    "hands": g.hands,
                    "overruns": g.overruns,
                    "record": g.record,
                }
                for g in self.results
            ],
        }


def game_jobs(
    rules: RuleSet,
    games: int,
    seed: int,
    specs: Sequence[str],
    time_limit: float,
    *,
    birth_months: tuple[int, int] | None = None,
    records_dir: str | None = None,
    logs_dir: str | None = None,
    on_timeout: str = "forfeit",
) -> list[GameJob]:
    """The games of an arena, each with its seeds drawn in order from ``seed``."""
    rng = random.Random(seed)
    width = max(4, len(str(games)))
    jobs = []
    for i in range(games):
        match_seed = rng.getrandbits(63)
        agent_seeds = (rng.getrandbits(63), rng.getrandbits(63))
        jobs.append(
            GameJob(
                i,
                rules,
                match_seed,
                (specs[0], specs[1]),
                agent_seeds,
                time_limit,
                birth_months,
                records_dir,
                logs_dir,
                width,
                on_timeout,
            )
        )
    return jobs


def canonical_spec(spec: str, rules: RuleSet) -> str:
    """A player spec as the arena writes it, each option as the type the player takes
    (``hard[ noise = 1 ]`` -> ``hard[noise=1.0]``); ArenaError for an unknown player or option."""
    if spec.startswith(("cmd:", POLICY_PREFIX)):
        return spec
    try:
        parsed = parse_spec(spec)
    except SpecError as e:
        raise ArenaError(str(e)) from None
    if not parsed.options:
        return str(parsed)
    _, params = _builtin_factory(parsed.name, rules)
    options = {key: _option_value(parsed.name, key, value, params) for key, value in parsed.options.items()}
    return str(PlayerSpec(parsed.name, options))


# -- the --jsonl file --------------------------------------------------------------------------------

JSONL_FORMAT = "koikoi-arena"
JSONL_VERSION = 1


def _run_header(
    rules: RuleSet,
    games: int,
    seed: int,
    specs: Sequence[str],
    time_limit: float,
    on_timeout: str,
    birth_months: tuple[int, int] | None,
    resumed: bool,
) -> dict[str, Any]:
    from .._version import __version__

    return {
        "type": "arena",
        "format": JSONL_FORMAT,
        "version": JSONL_VERSION,
        "engine": f"koikoi {__version__}",
        "rules": rules.name,
        "rule_set": rules.to_dict(),
        "seed": seed,
        "games": games,
        "players": [{"player": "AB"[i], "spec": s, "options": spec_options(s)} for i, s in enumerate(specs)],
        "time_limit": time_limit,
        "on_timeout": on_timeout,
        "birth_months": None if birth_months is None else list(birth_months),
        "resumed": resumed,
    }


@dataclass(slots=True)
class RunFile:
    """What a ``--jsonl`` file holds: its run headers (one per start or resume), its finished matches,
    and how many bytes of it are whole lines (a run killed while writing may leave a part of one)."""

    path: str
    headers: list[dict[str, Any]]
    results: list[GameResult]
    whole_bytes: int


def read_run_file(path: str | os.PathLike[str]) -> RunFile:
    """Read a ``--jsonl`` file; an unreadable line raises :class:`ArenaError` naming the file and line,
    except a last line cut short (no newline), which a killed run may leave and which is left out."""

    name = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ArenaError(f"cannot read {name}: {e.strerror or e}") from None
    headers: list[dict[str, Any]] = []
    results: list[GameResult] = []
    seen: set[int] = set()
    whole = 0
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, 1):
        last = number == len(lines)
        if last:
            break  # after the final newline: empty, or a line the run did not finish writing
        whole += len(raw) + 1
        if not raw.strip():
            continue
        where = f"{name}, line {number}"
        try:
            item = safejson.loads(raw)  # a damaged file nested 30,000 deep is an error, not a RecursionError
        except (ValueError, UnicodeDecodeError):
            raise ArenaError(f"{where}: not a JSON line of an arena run") from None
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "arena":
            if item.get("format") != JSONL_FORMAT or item.get("version") != JSONL_VERSION:
                raise ArenaError(
                    f"{where}: not a {JSONL_FORMAT} version {JSONL_VERSION} header "
                    f"(format {item.get('format')!r}, version {item.get('version')!r})"
                )
            headers.append(item)
        elif kind == "match":
            if not headers:
                raise ArenaError(f"{where}: a match before the run's header line")
            try:
                g = GameResult.from_json(item)
            except (KeyError, TypeError, ValueError) as e:
                raise ArenaError(f"{where}: not a match line the arena writes ({type(e).__name__}: {e})") from None
            if g.index in seen:
                raise ArenaError(f"{where}: game {g.index + 1} is in the file twice")
            seen.add(g.index)
            results.append(g)
        else:
            raise ArenaError(f"{where}: a line of type {kind!r}; an arena run has 'arena' and 'match' lines")
    if not headers:
        raise ArenaError(f"{name} holds no arena run (no header line)")
    return RunFile(name, headers, results, whole)


_SAME_RUN = ("rule_set", "seed", "players", "time_limit", "on_timeout", "birth_months")


def _check_resume(file: RunFile, header: dict[str, Any], games: int) -> None:
    first = file.headers[0]
    for key in _SAME_RUN:
        if first.get(key) != header[key]:
            raise ArenaError(
                f"--resume: {file.path} is a run with another {key.replace('_', ' ')} "
                f"({_brief(first.get(key))}, not {_brief(header[key])}): resume it with the same settings"
            )
    beyond = sorted(g.index + 1 for g in file.results if g.index >= games)
    if beyond:
        raise ArenaError(f"--resume: {file.path} already holds game {beyond[0]}, beyond --games {games}")


def _brief(value: Any) -> str:
    import json

    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def summarize_files(paths: Sequence[str | os.PathLike[str]]) -> ArenaReport:
    """The report of one or more ``--jsonl`` files: runs of the same players, rules and time limit,
    merged (runs with other seeds add games; one game found twice is an error, not counted twice)."""
    from ..rules import RuleSet as _RuleSet

    if not paths:
        raise ArenaError("--summarize needs at least one --jsonl file")
    files = [read_run_file(p) for p in paths]
    first = files[0].headers[0]
    for f in files:
        for h in f.headers:
            for key in ("rule_set", "players", "time_limit", "on_timeout"):
                if h.get(key) != first.get(key):
                    raise ArenaError(
                        f"{f.path} and {files[0].path} are not runs of the same arena: their "
                        f"{key.replace('_', ' ')} differ ({_brief(h.get(key))}, not {_brief(first.get(key))})"
                    )
    results: list[GameResult] = []
    where: dict[tuple[Any, int], str] = {}
    for f in files:
        seed = f.headers[0]["seed"]
        for g in f.results:
            g.arena_seed = seed if g.arena_seed is None else g.arena_seed
            key = (g.arena_seed, g.index)
            if key in where:
                raise ArenaError(
                    f"game {g.index + 1} of seed {g.arena_seed} is in both {where[key]} and {f.path}: "
                    "a game counted twice would weigh twice"
                )
            where[key] = f.path
            results.append(g)
    results.sort(key=lambda g: (str(g.arena_seed), g.index))
    try:
        rules = _RuleSet.from_dict(first["rule_set"])
    except (KeyError, TypeError, ValueError) as e:
        raise ArenaError(f"{files[0].path}: its rule set cannot be read: {e}") from None
    specs = [p["spec"] for p in first["players"]]
    seeds = sorted({f.headers[0]["seed"] for f in files})
    return ArenaReport(
        rules,
        len(results),
        seeds[0] if len(seeds) == 1 else seeds,
        None,
        first["time_limit"],
        summarize(results, specs),
        results,
        None,
        first["on_timeout"],
        jsonl=None,
        resumed=len(results),
    )


def run_arena(
    rules: RuleSet,
    games: int,
    seed: int,
    players: Sequence[str],
    *,
    jobs: int | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
    on_timeout: str = "forfeit",
    records_dir: str | os.PathLike[str] | None = None,
    logs_dir: str | os.PathLike[str] | None = None,
    birth_months: tuple[int, int] | None = None,
    progress: Callable[[int], None] | None = None,
    jsonl: str | os.PathLike[str] | None = None,
    resume: bool = False,
) -> ArenaReport:
    """Play ``games`` matches between ``players`` (A, B) and gather the figures.

    A player is a spec: a built-in name with its options (``hard[time_limit=none;playouts=11000]``,
    :mod:`koikoi.playerspec`), ``cmd:COMMAND`` or ``policy:FILE``; options are checked here, before any
    game. ``time_limit`` is every player's time per decision; over it a player forfeits the match, or
    with ``on_timeout="first"`` has the first legal action played for it (an overrun, counted).
    ``jobs`` worker processes play the games (default: one per core; 1 plays in this process);
    ``progress(done)`` is called as games finish. Bot stderr logs (the last 64 KiB of each) go to
    ``logs_dir`` (default: ``records_dir``; with neither, only the end of a failing bot's stderr is kept,
    in the report). No bot process outlives its match (``docs/bot-protocol.md``, Processes).

    ``jsonl``: a file that gets one JSON line per finished match as it finishes (after a header line
    with the run's settings). It must not hold a run already, unless ``resume``: then the games it holds
    are read back, not played again, and the rest are played and added (the same seeds, so the result
    is that of a run never stopped).
    """
    if len(players) != 2:
        raise ArenaError(f"an arena needs two players, got {len(players)}")
    if games < 1:
        raise ArenaError(f"the number of games must be at least 1, not {games}")
    if not time_limit > 0 or time_limit == float("inf"):
        raise ArenaError(f"the time limit must be a positive number of seconds, not {time_limit}")
    if on_timeout not in ON_TIMEOUT:
        raise ArenaError(f"on_timeout must be {' or '.join(ON_TIMEOUT)}, not {on_timeout!r}")
    if resume and jsonl is None:
        raise ArenaError("--resume continues the run of a --jsonl FILE: give the file")
    if jobs is None:
        jobs = os.cpu_count() or 1
    if jobs < 1:
        raise ArenaError(f"--jobs must be at least 1, not {jobs}")
    specs = []
    for label, spec in zip("AB", players):
        try:
            specs.append(canonical_spec(spec, rules))
            check_player(specs[-1], rules)
        except ArenaError as e:
            raise ArenaError(f"player {label}: {e}") from None
    if rules.dealer_selection == "birth_month" and birth_months is None:
        birth_months = (1, 7)
    header = _run_header(rules, games, seed, specs, time_limit, on_timeout, birth_months, resume)
    done: list[GameResult] = []
    out = None
    if jsonl is not None:
        out = _open_run_file(Path(jsonl), header, games, resume, done)
    try:
        if records_dir is not None:
            Path(records_dir).mkdir(parents=True, exist_ok=True)
        if logs_dir is None:
            logs_dir = records_dir
        finished = {g.index for g in done}
        todo = [
            job
            for job in game_jobs(
                rules,
                games,
                seed,
                specs,
                time_limit,
                birth_months=birth_months,
                records_dir=None if records_dir is None else str(records_dir),
                logs_dir=None if logs_dir is None else str(logs_dir),
                on_timeout=on_timeout,
            )
            if job.index not in finished
        ]
        jobs = max(1, min(jobs, len(todo)))
        start = time.perf_counter()
        results = list(done)

        def finish(g: GameResult) -> None:
            g.arena_seed = seed
            results.append(g)
            if out is not None:
                import json

                out.write(json.dumps(g.to_json(), separators=(",", ":")) + "\n")
                out.flush()
            if progress:
                progress(len(results))

        if progress and done:
            progress(len(done))
        if jobs == 1:
            for job in todo:
                finish(play_game(job))
        elif todo:
            _play_in_workers(todo, jobs, finish)
    finally:
        if out is not None:
            out.close()
    results.sort(key=lambda g: g.index)
    seconds = time.perf_counter() - start
    return ArenaReport(
        rules,
        games,
        seed,
        jobs,
        time_limit,
        summarize(results, specs),
        results,
        seconds,
        on_timeout,
        jsonl=None if jsonl is None else str(jsonl),
        resumed=len(done),
    )


def _open_run_file(path: Path, header: dict[str, Any], games: int, resume: bool, done: list[GameResult]):
    import json

    exists = path.exists() and path.stat().st_size > 0
    if exists and not resume:
        raise ArenaError(f"{path} already holds a run: add --resume to continue it, or give another file")
    if exists:
        file = read_run_file(path)
        _check_resume(file, header, games)
        done.extend(file.results)
        try:
            out = open(path, "r+", encoding="utf-8")
            out.truncate(file.whole_bytes)  # a line cut short by a kill is dropped: its game is played again
            out.seek(file.whole_bytes)
        except OSError as e:
            raise ArenaError(f"cannot write {path}: {e.strerror or e}") from None
    else:
        try:
            out = open(path, "w", encoding="utf-8")
        except OSError as e:
            raise ArenaError(f"cannot write {path}: {e.strerror or e}") from None
        header = {**header, "resumed": False}
    out.write(json.dumps(header, separators=(",", ":")) + "\n")
    out.flush()
    return out


def _play_in_workers(todo: list[GameJob], jobs: int, finish: Callable[[GameResult], None]) -> None:
    import multiprocessing

    # spawn: workers start clean, whatever threads (a progress bar) this process runs.
    pool = ProcessPoolExecutor(
        jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init, initargs=(os.getpid(),)
    )
    futures = [pool.submit(play_game, job) for job in todo]
    try:
        for fut in as_completed(futures):
            finish(fut.result())
    except BaseException:
        # Interrupted: the games under way end now (their bots die with their workers), not when they finish.
        workers = list((getattr(pool, "_processes", None) or {}).values())  # shutdown forgets them
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in workers:
            try:
                proc.kill()
            except (OSError, ValueError, AttributeError):
                pass
        raise
    pool.shutdown(wait=True)


def _worker_init(arena_pid: int) -> None:
    """A worker dies with the arena (Linux), and the bots it runs with it, however the arena ends."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(
            1, ctypes.c_ulong(signal.SIGKILL), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)
        )  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - without it, a worker still ends when the arena's queue closes
        return
    if os.getppid() != arena_pid:
        os._exit(1)


def summarize(results: Sequence[GameResult], specs: Sequence[str]) -> list[PlayerStats]:
    stats = [PlayerStats("A", specs[0], specs[0]), PlayerStats("B", specs[1], specs[1])]
    for g in results:
        for p, s in enumerate(stats):
            s.name = g.names[p] if g.names[p] != s.spec else s.name
            s.games += 1
            if g.winner is None:
                s.draws += 1
            elif g.winner == p:
                s.wins += 1
            else:
                s.losses += 1
                if g.forfeit is not None:
                    s.forfeits += 1
            s.points_won += g.points_won[p]
            s.hands += g.hands
            s.hand_wins += g.hand_wins[p]
            s.koikoi_calls += g.koikoi_calls[p]
            s.koikoi_paid += g.koikoi_paid[p]
            s.decisions += g.decisions[p]
            s.decision_seconds += g.decision_seconds[p]
            s.decision_worst = max(s.decision_worst, g.decision_worst[p])
            s.overruns += g.overruns[p]
    return stats


def apply_player_settings(players: Sequence[str], settings: Sequence[str]) -> list[str]:
    """``players`` (A, B) with ``--player-set`` settings (``A.time_limit=none``) written into their specs.

    >>> apply_player_settings(["hard", "easy"], ["A.time_limit=none", "A.playouts=11000"])
    ['hard[time_limit=none;playouts=11000]', 'easy']
    """
    out = list(players)
    by_label: dict[str, dict[str, Any]] = {}
    try:
        for text in settings:
            label, option, value = parse_assignment(text, "AB")
            by_label.setdefault(label, {})[option] = value
        for label, options in by_label.items():
            i = "AB".index(label)
            out[i] = str(with_options(out[i], options))
    except SpecError as e:
        raise ArenaError(f"--player-set {e}") from None
    return out
