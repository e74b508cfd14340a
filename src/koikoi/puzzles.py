"""Puzzles: positions from games between computer players in which one move is clearly the best.

A puzzle is a moment of a recorded game (a :class:`~koikoi.records.GameRecord` that stops there) and
the player to move, with a **line**: the move that is clearly best and, where the same player must then
decide again before the opponent moves (a capture choice after the draw, koi-koi or stop), the answer
to that too. "Clearly best" is the review's search (:func:`koikoi.review.review_agent`) saying so twice:

1. at the review's budget, the move is worth at least :data:`MIN_GAP` points of the hand more than every
   other legal move (identical moves, such as either of two plain cards of a month, are one move:
   :func:`koikoi.review.merge_twins`), each difference beyond :data:`MIN_SIGMAS` of its standard errors;
2. again on fresh worlds, at :data:`CONFIRM_FACTOR` times the budget, with the same move best by as much.

Points of the hand are what the table shows: a stop is worth exactly what it scores; without transfers
the opponent's points count against. The puzzles come from the first hand of a match (so that no match
score weighs on the choice), and the search sees only what the player sees.

Themes (:data:`THEMES`) say what the move does, from what the review can tell: it completes a yaku,
takes a card the opponent's yaku needs, is a koi-koi decision, chooses between two captures, takes or
plays the sake cup, or comes in the last turns of the hand. The reasons are the review's own (why the
best move beats the next best, :func:`koikoi.review.move_parts`).

A puzzle is plain JSON (:meth:`Puzzle.to_dict`), one a line in a puzzle file (``koikoi puzzles
generate``); :meth:`Puzzle.from_dict` reads it back and checks it all: that its record replays, that its
line is legal and played by the player to move.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .actions import DRAW_TAKE_BASE, KOIKOI, PLAY_TAKE_BASE, STOP, action_name, parse_action
from .ai.base import Choice
from .cards import MONTH_MASKS, SAKE_CUP
from .match import Match
from .observation import Observation
from .records import GameRecord, RecordError, replay, replay_steps
from .review import (
    DEFAULT_PLAYOUTS,
    loss_noise,
    merge_twins,
    move_effect,
    move_parts,
    move_signature,
    moved_card,
    points_of,
    review_agent,
    yaku_gain,
)

__all__ = [
    "FORMAT",
    "VERSION",
    "MIN_GAP",
    "MIN_SIGMAS",
    "CONFIRM_FACTOR",
    "SCAN_SHARE",
    "SCAN_GAP",
    "MAX_LINE",
    "THEMES",
    "PuzzleError",
    "FindStats",
    "LineMove",
    "Puzzle",
    "clearly_best",
    "find_puzzles",
    "distinct_moves",
    "first_rating",
    "puzzle_seed",
    "themes_of",
]

FORMAT = "koikoi-puzzle"
VERSION = 1
MIN_GAP = 1.5  # points of the hand the best move is worth more than every other
MIN_SIGMAS = 4.0  # ... each difference beyond this many of its standard errors
CONFIRM_FACTOR = 10  # the confirming search's budget, in times the review's
# A first look at every decision with a fifteenth of the budget (20,000 playouts of the review's 300,000),
# so that the review's budget (seconds a decision) is spent only where one move already stands out by
# SCAN_GAP: most decisions have two moves within a point of each other.
SCAN_SHARE = 15
SCAN_GAP = 1.0
MAX_LINE = 3  # moves of one line at most (a play, the choice after the draw, koi-koi or stop)
THEMES = ("yaku", "deny", "koikoi", "capture", "sake", "endgame")
MAX_PUZZLE_CHARS = 20_000  # a puzzle's JSON (one hand's record and a short line) is about 2,000


class PuzzleError(ValueError):
    """A puzzle that cannot be read: what is wrong and where."""


@dataclass(frozen=True, slots=True)
class LineMove:
    """One move of a puzzle's line: the best ``action``, the ``runner_up`` (the next best move), what each
    is worth in points of the hand at the confirming budget, the standard error of the difference, and
    the reason's parts (:func:`koikoi.review.reason_text`)."""

    action: int
    runner_up: int
    best: float
    second: float
    stderr: float
    reason: tuple[dict[str, Any], ...] = ()

    @property
    def gap(self) -> float:
        return round(self.best - self.second, 2)

    def to_dict(self) -> dict[str, Any]:
        return {
            "move": action_name(self.action),
            "runner_up": action_name(self.runner_up),
            "best": self.best,
            "second": self.second,
            "stderr": self.stderr,
            "reason": [dict(p) for p in self.reason],
        }


@dataclass(frozen=True)
class Puzzle:
    """A position (``record`` stops there; ``player`` is to move) and its ``line`` (see the module's text)."""

    id: str
    record: GameRecord
    player: int
    line: tuple[LineMove, ...]
    themes: tuple[str, ...]
    rating: float  # the first guess of its rating (:func:`first_rating`), before anyone solved it
    source: Mapping[str, Any]  # where it comes from: the generator's seed and game

    def start(self) -> Match:
        """The position: the match as its record leaves it."""
        return replay(self.record)

    def position(self, done: int) -> Match:
        """The position after the first ``done`` moves of the line (each followed by the draw that the
        record's deal makes next, as the game would have gone on)."""
        m = self.start()
        for move in self.line[:done]:
            m.apply_action(move.action)
        return m

    def observation(self, done: int) -> Observation:
        obs: Observation = self.position(done).observation(self.player)
        return obs

    def answers(self, obs: Observation, done: int, action: int) -> bool:
        """Whether ``action`` is the line's move ``done`` in ``obs`` (or a move identical to it)."""
        if action not in obs.legal_actions:
            return False
        return move_signature(obs, action) == move_signature(obs, self.line[done].action)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "id": self.id,
            "player": self.player,
            "line": [m.to_dict() for m in self.line],
            "themes": list(self.themes),
            "rating": self.rating,
            "source": dict(self.source),
            "record": self.record.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Puzzle:
        """A puzzle from its JSON, checked: its record replays, its line is legal and the player's."""
        if not isinstance(data, dict):
            raise PuzzleError(f"a puzzle is a JSON object, not {type(data).__name__}")
        if data.get("format") != FORMAT or data.get("version") != VERSION:
            raise PuzzleError(f"not a puzzle of this program: format {FORMAT!r}, version {VERSION} expected")
        pid = data.get("id")
        if not isinstance(pid, str) or not 1 <= len(pid) <= 32 or not pid.isalnum():
            raise PuzzleError("'id' is 1 to 32 letters and digits")
        where = f"puzzle {pid}"
        player = data.get("player")
        if player not in (0, 1) or isinstance(player, bool):
            raise PuzzleError(f"{where}: 'player' is 0 or 1")
        try:
            record = GameRecord.from_dict(data.get("record"))
            m = replay(record)
        except RecordError as e:
            raise PuzzleError(f"{where}: its record: {e}") from None
        raw_line = data.get("line")
        if not isinstance(raw_line, list) or not 1 <= len(raw_line) <= MAX_LINE:
            raise PuzzleError(f"{where}: 'line' is a list of 1 to {MAX_LINE} moves")
        line = []
        for i, raw in enumerate(raw_line):
            line.append(_line_move(raw, f"{where}: line[{i}]"))
        hand = m.hand_number
        for i, move in enumerate(line):
            if m.is_over() or m.hand_number != hand or m.current_player != player:
                raise PuzzleError(f"{where}: line[{i}]: it is not player {player}'s turn in this hand there")
            if move.action not in m.legal_actions() or move.runner_up not in m.legal_actions():
                raise PuzzleError(f"{where}: line[{i}]: {action_name(move.action)} is not a legal move there")
            m.apply_action(move.action)
        themes = data.get("themes")
        if not isinstance(themes, list) or not all(t in THEMES for t in themes):
            raise PuzzleError(f"{where}: 'themes' are some of {', '.join(THEMES)}")
        rating = data.get("rating")
        if not isinstance(rating, (int, float)) or isinstance(rating, bool) or not 400 <= rating <= 3500:
            raise PuzzleError(f"{where}: 'rating' is a number from 400 to 3500")
        source = data.get("source", {})
        if not isinstance(source, dict) or any(not isinstance(v, (int, str)) for v in source.values()):
            raise PuzzleError(f"{where}: 'source' holds plain numbers and words")
        return cls(pid, record, player, tuple(line), tuple(themes), float(rating), dict(source))


def _line_move(raw: Any, where: str) -> LineMove:
    if not isinstance(raw, dict):
        raise PuzzleError(f"{where}: a move of the line is a JSON object")
    try:
        action = parse_action(str(raw.get("move")))
        runner_up = parse_action(str(raw.get("runner_up")))
    except ValueError as e:
        raise PuzzleError(f"{where}: {e}") from None
    numbers: list[float] = []
    for key in ("best", "second", "stderr"):
        x = raw.get(key)
        if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x):
            raise PuzzleError(f"{where}: '{key}' is a number")
        numbers.append(float(x))
    reason = raw.get("reason", [])
    if not isinstance(reason, list) or not all(isinstance(p, dict) and isinstance(p.get("kind"), str) for p in reason):
        raise PuzzleError(f"{where}: 'reason' is a list of the review's reason parts")
    best, second, stderr = numbers
    if best - second < MIN_GAP:
        raise PuzzleError(f"{where}: the best move is not {MIN_GAP} points better than the next ({best} vs {second})")
    return LineMove(action, runner_up, best, second, stderr, tuple(reason))


# -- finding them ---------------------------------------------------------------------------------------


def distinct_moves(obs: Observation) -> int:
    """How many different moves the position offers (identical ones counted once)."""
    return len({move_signature(obs, a) for a in obs.legal_actions})


def clearly_best(
    obs: Observation, ranked: list[Choice], *, gap: float = MIN_GAP, sigmas: float = MIN_SIGMAS
) -> LineMove | None:
    """The move of the search's ranking that is worth ``gap`` points more than every other (identical
    moves merged), each difference beyond ``sigmas`` standard errors; None if there is none."""
    merged = merge_twins(obs, ranked)
    if len(merged) < 2:
        return None
    best = max(merged, key=points_of)
    others = [c for c in merged if c is not best]
    worst_noise = 0.0
    for c in others:
        noise = loss_noise(c, best)
        diff = points_of(best) - points_of(c)
        if diff < gap or (sigmas and (noise is None or diff <= sigmas * noise)):
            return None
        worst_noise = max(worst_noise, noise or 0.0)
    second = max(others, key=points_of)
    return LineMove(
        best.action,
        second.action,
        round(points_of(best), 2),
        round(points_of(second), 2),
        round(loss_noise(second, best) or 0.0, 3),
    )


def puzzle_seed(*parts: object) -> int:
    """A seed made from ``parts`` (numbers, words): the same parts, the same seed, on any machine."""
    text = ":".join(map(str, parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


@dataclass
class FindStats:
    """What a search for puzzles looked at: decisions with a choice, those the quick look passed on to the
    review's budget, the candidates (clear at the review's budget) and those confirmed at ten times it."""

    decisions: int = 0
    looked: int = 0
    candidates: int = 0
    confirmed: int = 0

    def add(self, other: FindStats) -> None:
        self.decisions += other.decisions
        self.looked += other.looked
        self.candidates += other.candidates
        self.confirmed += other.confirmed


def _judged(obs: Observation, seed: int, playouts: int, scan: int, stats: FindStats) -> LineMove | None:
    """The clearly best move of ``obs`` by the module's two searches (after a quick look with ``scan``
    playouts, unless 0), or None."""
    stats.decisions += 1
    if scan:
        quick = review_agent(puzzle_seed(seed, "scan"), scan).rank(obs)
        if clearly_best(obs, quick, gap=SCAN_GAP, sigmas=0.0) is None:
            return None
    stats.looked += 1
    first = clearly_best(obs, review_agent(seed, playouts).rank(obs))
    if first is None:
        return None
    stats.candidates += 1
    again = clearly_best(obs, review_agent(puzzle_seed(seed, "confirm"), playouts * CONFIRM_FACTOR).rank(obs))
    if again is None or move_signature(obs, again.action) != move_signature(obs, first.action):
        return None
    stats.confirmed += 1
    reason: list[dict[str, Any]] = []
    if again.action not in (KOIKOI, STOP) and again.runner_up not in (KOIKOI, STOP):
        reason = move_parts(obs, again.runner_up, again.action)
    elif {again.action, again.runner_up} == {KOIKOI, STOP}:
        worth = {again.action: again.best, again.runner_up: again.second}
        kind = "stop_was_worth" if again.action == STOP else "koikoi_was_worth"
        reason = [{"kind": kind, "stop": worth[STOP], "koikoi": worth[KOIKOI]}]
    return replace(again, reason=tuple(reason))


def themes_of(obs: Observation, move: LineMove) -> set[str]:
    """What a move of a line does (:data:`THEMES`)."""
    out: set[str] = set()
    action = move.action
    if action in (KOIKOI, STOP):
        out.add("koikoi")
    elif action < KOIKOI:
        got, _ = move_effect(obs, action)
        if got and yaku_gain(obs.pile_masks[obs.player], got, obs):
            out.add("yaku")
        if any(p.get("kind") == "left_for" for p in move.reason):
            out.add("deny")
        if (got | 1 << moved_card(obs, action)) & SAKE_CUP:
            out.add("sake")
        if action >= DRAW_TAKE_BASE or (
            action >= PLAY_TAKE_BASE and (obs.table_mask & MONTH_MASKS[moved_card(obs, action) >> 2]).bit_count() == 2
        ):
            out.add("capture")
    if obs.hand_mask.bit_count() <= 2:
        out.add("endgame")
    return out


def first_rating(obs: Observation, line: tuple[LineMove, ...]) -> float:
    """A puzzle's rating before anyone has tried it: a guess from what makes one harder (more moves to
    choose from, a longer line, a smaller margin), which the solvers' results then correct (Glico-2, with
    a puzzle's deviation starting wide)."""
    guess = 1500 + 60 * (distinct_moves(obs) - 4) + 150 * (len(line) - 1) - 40 * min(line[0].gap - MIN_GAP, 5.0)
    return float(round(min(2300.0, max(800.0, guess))))


def find_puzzles(
    record: GameRecord, *, seed: int, playouts: int | None = None, hand: int = 1, stats: FindStats | None = None
) -> Iterator[Puzzle]:
    """The puzzles of one hand of a recorded game (both players' decisions), in the order they come.

    Deterministic: each decision's searches are seeded from ``seed`` and the decision's place. A decision
    that is part of a puzzle's line is not made a puzzle of its own. ``stats`` counts what was looked at."""
    stats = stats if stats is not None else FindStats()
    budget = playouts or DEFAULT_PLAYOUTS
    scan = max(1, budget // SCAN_SHARE)
    covered = -1
    for step in replay_steps(record, check=False):
        if step.hand_number != hand or step.index <= covered:
            continue
        player = step.player
        m = step.before
        obs: Observation = m.observation(player)
        if distinct_moves(obs) < 2:
            continue
        start_record = _prefix(record, m)
        start_obs = obs
        line: list[LineMove] = []
        themes: set[str] = set()
        while len(line) < MAX_LINE:
            move = _judged(obs, puzzle_seed(seed, step.index, len(line)), budget, scan if not line else 0, stats)
            if move is None:
                break
            line.append(move)
            themes |= themes_of(obs, move)
            m.apply_action(move.action)
            if m.is_over() or m.hand_number != hand or m.current_player != player:
                break
            obs = m.observation(player)
            if distinct_moves(obs) < 2:
                break
        if not line:
            continue
        covered = step.index + len(line) - 1  # the record's own next steps, when it followed the line
        ident = hashlib.sha256(f"{start_record.to_json()}|{player}".encode()).hexdigest()[:10]
        yield Puzzle(
            id=ident,
            record=start_record,
            player=player,
            line=tuple(line),
            themes=tuple(t for t in THEMES if t in themes),
            rating=first_rating(start_obs, tuple(line)),
            source={"seed": seed, "step": step.index},
        )


def _prefix(record: GameRecord, before: Match) -> GameRecord:
    """The record of the game up to ``before`` (a replay's snapshot), without what would tell anyone more
    (the seed that dealt it, the date): the deal itself is what the server keeps, and never shows."""
    rec = GameRecord.from_match(before, players=record.players, metadata={})
    return replace(rec, seed=None, created=None, metadata={"rules_version": rec.metadata["rules_version"]})
