"""The arena: many matches between two players, seats alternating, with statistics.

Player A sits at seat 0 in even-numbered games (counting from 0) and B in odd ones. Every match and
every computer player gets its own seed, drawn in order from the arena seed, so the results of a seed
are the same whether the games run in one process or in many. A player is a built-in computer
player by name (``koikoi.ai``'s levels, or ``koikoi.players``), ``cmd:COMMAND``, an external program
that speaks the bot protocol (``docs/bot-protocol.md``), or ``policy:FILE``, a trained policy
(``koikoi.policy``; it needs the ``rl`` extra, imported only for such a player). Each player sees only
observations of its own seat. A player that crashes, runs out of time, answers garbage or plays an
illegal action loses that match (a forfeit, with its reason) and the arena goes on: nothing a bot sends
stops the arena. A bot and every process it started are killed at the end of its match, however the
match ends, and when the arena itself dies.

>>> from koikoi.rules import preset
>>> report = run_arena(preset("cardavia"), games=4, seed=1, players=["random", "random"], jobs=1)
>>> a, b = report.players
>>> a.wins + a.draws + a.losses, a.wins == b.losses, a.draws == b.draws
(4, True, True)
"""

from __future__ import annotations

import math
import os
import random
import re
import shutil
import signal
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .actions import KOIKOI
from .botproto import (
    BotError,
    BotProcess,
    hand_end_message,
    match_end_message,
    split_command,
)
from .match import Match
from .observation import Observation
from .rules import RuleSet

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
]

DEFAULT_TIME_LIMIT = 5.0
_Z95 = 1.959963984540054
_NAME = re.compile(r"[A-Za-z0-9_.+-]+$")


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
    from .players import PLAYER_KINDS

    names += [n for n in PLAYER_KINDS if n not in names]
    return names


def _ai_module():
    import importlib.util

    if importlib.util.find_spec("koikoi.ai") is None:
        return None
    from . import ai  # an error inside koikoi.ai is a real error: let it show

    return ai if hasattr(ai, "make_agent") else None


POLICY_PREFIX = "policy:"
_policies: dict[tuple[str, int, int], Any] = {}  # (path, mtime, size) -> loaded koikoi.policy.Policy


def load_policy_agent(path: str, seed: int | None = None):
    """A trained policy file (``policy:FILE``) as a player. NumPy is imported only here, so the arena
    works without it; each file is read once per process (a worker plays many games with it)."""
    try:
        from . import policy
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
    """A built-in computer player by name: ``koikoi.ai.make_agent`` first, then ``koikoi.players``;
    ``policy:FILE`` is a trained policy (``koikoi.policy``)."""
    if name.startswith(POLICY_PREFIX):
        return load_policy_agent(name[len(POLICY_PREFIX) :], seed)
    ai = _ai_module()
    if ai is not None:
        try:
            return ai.make_agent(name, seed=seed)
        except ValueError:
            pass
    from .players import make_player

    try:
        return make_player(name, seed, rules)
    except ValueError:
        raise ArenaError(
            f"unknown player {name!r}: give a built-in player ({', '.join(builtin_names())}), "
            "cmd:COMMAND for a bot program or policy:FILE for a trained policy"
        ) from None


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
    """

    def plausible(spec: str) -> bool:
        for prefix in ("cmd:", POLICY_PREFIX):
            if spec.startswith(prefix):
                return len(spec) > len(prefix)
        return bool(_NAME.match(spec))

    cuts = [
        i for i, ch in enumerate(text) if ch == "," and plausible(text[:i].strip()) and plausible(text[i + 1 :].strip())
    ]
    if not cuts:
        raise ArenaError(
            f"--players expects two players as A,B (built-in names, cmd:COMMAND or policy:FILE), not {text!r}"
        )
    if len(cuts) > 1:
        # A plain name on the right is the likelier reading than a command split inside its arguments.
        named = [i for i in cuts if _NAME.match(text[i + 1 :].strip())]
        cmd = [i for i in cuts if text[i + 1 :].strip().startswith("cmd:")]
        pick = cmd if len(cmd) == 1 else named if len(named) == 1 else []
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


class _Builtin:
    """A built-in player behind the arena's agent interface: its errors and illegal actions forfeit."""

    def __init__(self, spec: str, seed: int, rules: RuleSet) -> None:
        self.spec = spec
        self.agent = make_builtin(spec, seed, rules)
        self.name = spec

    def start(self, seat: int, rules: RuleSet, time_limit: float, game: int, bot_seed: int) -> None:
        pass

    def choose(self, obs: Observation, decision: int, time_limit: float) -> int:
        try:
            action = self.agent.choose(obs)
        except Exception as e:  # noqa: BLE001 - any failure of a player costs it the match, not the arena
            raise _Forfeit("error", f"raised {type(e).__name__}: {e}") from None
        try:
            action = int(action)
        except (TypeError, ValueError):
            raise _Forfeit("illegal", f"returned {action!r}, not an action") from None
        if action not in obs.legal_actions:
            raise _Forfeit("illegal", f"returned the illegal action {action!r}")
        return action

    def notify(self, message: dict[str, Any], time_limit: float) -> None:
        pass

    def close(self, polite: bool = True) -> None:
        pass


class _Bot:
    """An external program speaking the bot protocol. Whatever it sends, the arena does not fail: a
    protocol error, or any error the arena meets handling the bot's answer, is the bot's forfeit."""

    def __init__(self, spec: str, stderr_path: Path | None) -> None:
        self.spec = spec
        self.process = BotProcess(spec[4:], stderr_path=stderr_path)
        self.name = spec
        self.match: Match | None = None  # the match played: a version-2 bot is sent positions taken from it

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

    def choose(self, obs: Observation, decision: int, time_limit: float) -> int:
        try:
            return self.process.choose(obs, decision, time_limit, match=self.match)
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
    """Everything a worker needs to play game ``index``: plain data, so it can go to another process."""

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

    @property
    def seats(self) -> tuple[int, int]:
        """The player (0 = A, 1 = B) at seats 0 and 1."""
        return (0, 1) if self.index % 2 == 0 else (1, 0)

    @property
    def stem(self) -> str:
        return f"game-{self.index + 1:0{self.width}d}"


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
    points: list[int] = field(default_factory=lambda: [0, 0])  # net score change over the finished hands
    hands: int = 0
    hand_wins: list[int] = field(default_factory=lambda: [0, 0])
    koikoi_calls: list[int] = field(default_factory=lambda: [0, 0])
    koikoi_paid: list[int] = field(default_factory=lambda: [0, 0])
    decisions: list[int] = field(default_factory=lambda: [0, 0])
    decision_seconds: list[float] = field(default_factory=lambda: [0.0, 0.0])
    decision_worst: list[float] = field(default_factory=lambda: [0.0, 0.0])
    forfeit: dict[str, Any] | None = None  # {"player", "seat", "kind", "reason", "stderr"}
    record: str | None = None

    def figures(self) -> dict[str, Any]:
        """Everything but the timings (which differ from run to run)."""
        d = {k: getattr(self, k) for k in self.__slots__ if k not in ("decision_seconds", "decision_worst")}
        return d


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
            agents[seat] = _Bot(spec, log)
        else:
            agents[seat] = _Builtin(spec, job.agent_seeds[player], rules)
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
                action = agents[seat].choose(obs, decision, job.time_limit)
                spent = time.perf_counter() - start
                result.decisions[player] += 1
                result.decision_seconds[player] += spent
                result.decision_worst[player] = max(result.decision_worst[player], spent)
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
        result.points[player] += r.deltas[seat]
        result.koikoi_calls[player] += calls[seat]
        if r.winner == seat:
            result.hand_wins[player] += 1
            result.koikoi_paid[player] += calls[seat]


def _save_record(job: GameJob, match: Match, result: GameResult) -> str:
    from .records import GameRecord, write_record

    players = []
    for seat in (0, 1):
        player = job.seats[seat]
        spec = job.specs[player]
        players.append(
            {
                "name": result.names[player],
                "kind": "bot" if spec.startswith("cmd:") else "computer",
                "arena_player": "AB"[player],
                "spec": spec,
            }
        )
    meta: dict[str, Any] = {"arena": {"game": job.index + 1, "seed": job.seed}}
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
    points: int = 0
    hands: int = 0
    hand_wins: int = 0
    koikoi_calls: int = 0
    koikoi_paid: int = 0
    decisions: int = 0
    decision_seconds: float = 0.0
    decision_worst: float = 0.0

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
            "name": self.name,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "forfeits": self.forfeits,
            "win_rate": r(self.win_rate),
            "win_rate_ci95": [r(lo), r(hi)],
            "points": self.points,
            "points_per_match": r(self.points / self.games) if self.games else 0.0,
            "hands": self.hands,
            "hand_wins": self.hand_wins,
            "points_per_hand": r(self.points / self.hands) if self.hands else 0.0,
            "koikoi_calls": self.koikoi_calls,
            "koikoi_calls_per_hand": r(self.koikoi_calls / self.hands) if self.hands else 0.0,
            "koikoi_paid": self.koikoi_paid,
            "koikoi_paid_rate": r(self.koikoi_paid / self.koikoi_calls) if self.koikoi_calls else None,
            "decisions": self.decisions,
            "decision_seconds_mean": r(self.decision_seconds / self.decisions) if self.decisions else None,
            "decision_seconds_worst": r(self.decision_worst) if self.decisions else None,
        }


@dataclass(slots=True)
class ArenaReport:
    rules: RuleSet
    games: int
    seed: int
    jobs: int
    time_limit: float
    players: list[PlayerStats]
    results: list[GameResult]
    seconds: float

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
            "seconds": round(self.seconds, 3),
            "win_rate": "wins plus half the draws, over the games; 95% Wilson score interval",
            "players": [p.to_dict() for p in self.players],
            "forfeits": self.forfeits,
            "matches": [
                {
                    "game": g.index + 1,
                    "seed": g.seed,
                    "seat0": "AB"[g.seats[0]],
                    "winner": None if g.winner is None else "AB"[g.winner],
                    "scores": g.scores,
                    "reason": g.reason,
                    "hands": g.hands,
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
            )
        )
    return jobs


def run_arena(
    rules: RuleSet,
    games: int,
    seed: int,
    players: Sequence[str],
    *,
    jobs: int | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
    records_dir: str | os.PathLike[str] | None = None,
    logs_dir: str | os.PathLike[str] | None = None,
    birth_months: tuple[int, int] | None = None,
    progress: Callable[[int], None] | None = None,
) -> ArenaReport:
    """Play ``games`` matches between ``players`` (A, B) and gather the figures.

    ``jobs`` worker processes play them (default: one per core; 1 plays in this process);
    ``progress(done)`` is called as games finish. Bot stderr logs (the last 64 KiB of each) go to
    ``logs_dir`` (default: ``records_dir``; with neither, only the end of a failing bot's stderr is kept,
    in the report). No bot process outlives its match (``docs/bot-protocol.md``, Processes).
    """
    if len(players) != 2:
        raise ArenaError(f"an arena needs two players, got {len(players)}")
    if games < 1:
        raise ArenaError(f"the number of games must be at least 1, not {games}")
    if not time_limit > 0:
        raise ArenaError(f"the time limit must be a positive number of seconds, not {time_limit}")
    if jobs is None:
        jobs = os.cpu_count() or 1
    if jobs < 1:
        raise ArenaError(f"--jobs must be at least 1, not {jobs}")
    jobs = min(jobs, games)
    for spec in players:
        check_player(spec, rules)
    if rules.dealer_selection == "birth_month" and birth_months is None:
        birth_months = (1, 7)
    if records_dir is not None:
        Path(records_dir).mkdir(parents=True, exist_ok=True)
    if logs_dir is None:
        logs_dir = records_dir
    todo = game_jobs(
        rules,
        games,
        seed,
        players,
        time_limit,
        birth_months=birth_months,
        records_dir=None if records_dir is None else str(records_dir),
        logs_dir=None if logs_dir is None else str(logs_dir),
    )
    start = time.perf_counter()
    results: list[GameResult] = []
    if jobs == 1:
        for job in todo:
            results.append(play_game(job))
            if progress:
                progress(len(results))
    else:
        import multiprocessing

        # spawn: workers start clean, whatever threads (a progress bar) this process runs.
        with ProcessPoolExecutor(
            jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init, initargs=(os.getpid(),)
        ) as pool:
            futures = [pool.submit(play_game, job) for job in todo]
            try:
                for fut in as_completed(futures):
                    results.append(fut.result())
                    if progress:
                        progress(len(results))
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
        results.sort(key=lambda g: g.index)
    seconds = time.perf_counter() - start
    return ArenaReport(rules, games, seed, jobs, time_limit, summarize(results, players), results, seconds)


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
            s.points += g.points[p]
            s.hands += g.hands
            s.hand_wins += g.hand_wins[p]
            s.koikoi_calls += g.koikoi_calls[p]
            s.koikoi_paid += g.koikoi_paid[p]
            s.decisions += g.decisions[p]
            s.decision_seconds += g.decision_seconds[p]
            s.decision_worst = max(s.decision_worst, g.decision_worst[p])
    return stats
