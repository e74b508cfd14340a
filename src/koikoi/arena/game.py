"""One game of the arena: a match between two players from plain data (so that it can be played in
another process), its figures, and its record."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..actions import KOIKOI
from ..botproto import hand_end_message, match_end_message
from ..hand import HandResult
from ..lineup import spec_options
from ..match import Match
from ..rules import RuleSet
from .players import BotSeat, BuiltinSeat, Forfeit


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
            agents[seat] = BotSeat(spec, log, job.on_timeout)
        else:
            agents[seat] = BuiltinSeat(spec, job.agent_seeds[player], rules, job.on_timeout)
    match = Match(rules, seed=job.seed, birth_months=job.birth_months)
    for agent in agents:
        if isinstance(agent, BotSeat):
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
                except Forfeit as f:
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
                except Forfeit:
                    pass  # the match is over: a bot that cannot take the news loses nothing
        except Forfeit as f:
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
            except Forfeit:
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


def _count_hand(result: GameResult, seats: tuple[int, int], r: HandResult, calls: list[int]) -> None:
    result.hands += 1
    for seat in (0, 1):
        player = seats[seat]
        # Points gained: under transfer rules the loser's delta is negative, and that is the winner's gain.
        result.points_won[player] += max(0, r.deltas[seat])
        result.koikoi_calls[player] += calls[seat]
        if r.winner == seat:
            result.hand_wins[player] += 1
            result.koikoi_paid[player] += calls[seat]


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
