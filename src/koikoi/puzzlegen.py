"""Making puzzles: games between computer players, searched for puzzles (:mod:`koikoi.puzzles`), into a file.

``koikoi puzzles generate --games N --seed S --jobs J --out FILE`` plays N first hands between computer
players and writes every puzzle found in them. The file is JSON lines: a header (what made it, the
command line included), then one line per game, ``{"game": i, "puzzles": [...]}``, written as each game is
done. It is deterministic for a seed: game ``i`` is dealt and played from the seed and ``i`` alone, and
its searches are seeded the same way, so the same puzzles come out whatever the number of jobs and
however often the run was stopped and started again. A run that finds the file already there goes on
with the games it lacks (a line cut short by a stop is dropped first).
"""

from __future__ import annotations

import gzip
import json
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from .ai import make_agent
from .match import Match
from .puzzles import Puzzle, PuzzleError, distinct_moves, find_puzzles, puzzle_seed
from .records import GameRecord, replay_steps
from .review import DEFAULT_PLAYOUTS
from .rules import preset

__all__ = [
    "FILE_FORMAT",
    "SHIPPED",
    "shipped_puzzles",
    "shipped_json",
    "puzzles_in",
    "GenerateSettings",
    "GameDone",
    "play_game",
    "puzzles_of_game",
    "generate",
    "read_file",
]

FILE_FORMAT = "koikoi-puzzle-file"
SHIPPED = "puzzles-nintendo.jsonl.gz"  # the set in the package (koikoi/data), made by this module's generate
# The two players of a generated game: a middling one and the search at a small budget, seat by seat from
# the seed, so that the positions are those of real play, with its good moves and its slips.
PLAYERS: tuple[tuple[str, dict[str, Any]], ...] = (("medium", {}), ("hard", {"playouts": 3000, "time_limit": None}))


@dataclass(frozen=True)
class GenerateSettings:
    games: int
    seed: int
    rules: str = "nintendo"
    playouts: int = DEFAULT_PLAYOUTS  # the review's budget (the confirming search has ten times it)

    def header(self, command: str) -> dict[str, Any]:
        return {
            "format": FILE_FORMAT,
            "version": 1,
            "games": self.games,
            "seed": self.seed,
            "rules": self.rules,
            "playouts": self.playouts,
            "command": command,
        }


@dataclass(frozen=True)
class GameDone:
    game: int
    puzzles: list[dict[str, Any]]
    decisions: int  # the decisions with a choice in the game's first hand
    seconds: float  # of the process's time (CPU) it took


def play_game(rules_name: str, seed: int, game: int) -> GameRecord:
    """Game ``game`` of a run: the first hand of a match under ``rules_name``, between the two players of
    :data:`PLAYERS`, dealt and played from ``seed`` and ``game`` alone."""
    rules = preset(rules_name)
    base = puzzle_seed(seed, "game", game)
    m = Match(rules, seed=base)
    order = [0, 1] if base % 2 == 0 else [1, 0]
    agents = [make_agent(PLAYERS[order[i]][0], seed=puzzle_seed(base, i), **PLAYERS[order[i]][1]) for i in (0, 1)]
    while not m.is_over() and m.hand_number == 1:
        p = m.current_player
        m.apply_action(agents[p].choose(m.observation(p)))
    names = [{"name": PLAYERS[order[i]][0], "kind": "computer"} for i in (0, 1)]
    return GameRecord.from_match(m, players=names, metadata={"generator": "koikoi puzzles generate"})


def puzzles_of_game(settings: GenerateSettings, game: int) -> GameDone:
    """Play game ``game`` and find its puzzles (run in a worker process)."""
    began = time.process_time()
    record = play_game(settings.rules, settings.seed, game)
    found = [
        p.to_dict()
        for p in find_puzzles(record, seed=puzzle_seed(settings.seed, "search", game), playouts=settings.playouts)
    ]
    for p in found:
        p["source"] = {"seed": settings.seed, "game": game, "step": p["source"]["step"]}
    decisions = sum(
        1
        for step in replay_steps(record, check=False)
        if step.hand_number == 1 and distinct_moves(step.before.observation(step.player)) >= 2
    )
    return GameDone(game, found, decisions, time.process_time() - began)


def read_file(path: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[int, list[dict[str, Any]]]]:
    """A puzzle file's header and its games' puzzles (as JSON); a last line cut short is left out. A file
    whose name ends in ``.gz`` is read through gzip (the set shipped in the package is one)."""
    header: dict[str, Any] | None = None
    games: dict[int, list[dict[str, Any]]] = {}
    opened = gzip.open(path, "rt", encoding="utf-8") if str(path).endswith(".gz") else open(path, encoding="utf-8")
    with opened as f:
        for number, line in enumerate(f, 1):
            if not line.endswith("\n"):
                break  # cut short by a stop: that game is done again
            try:
                data = json.loads(line)
            except json.JSONDecodeError as e:
                raise PuzzleError(f"{path}, line {number}: not JSON ({e.msg})") from None
            if header is None:
                if not isinstance(data, dict) or data.get("format") != FILE_FORMAT:
                    raise PuzzleError(f"{path}: not a puzzle file (its first line names format {FILE_FORMAT!r})")
                header = data
                continue
            if (
                not isinstance(data, dict)
                or not isinstance(data.get("game"), int)
                or not isinstance(data.get("puzzles"), list)
            ):
                raise PuzzleError(f'{path}, line {number}: a game\'s line is {{"game": N, "puzzles": [...]}}')
            games[data["game"]] = data["puzzles"]
    if header is None:
        raise PuzzleError(f"{path}: empty: not a puzzle file")
    return header, games


def puzzles_in(path: str | os.PathLike[str]) -> Iterator[Puzzle]:
    """Every puzzle of a puzzle file, checked (:meth:`Puzzle.from_dict`), in the order of its games."""
    _, games = read_file(path)
    for game in sorted(games):
        for p in games[game]:
            yield Puzzle.from_dict(p)


def shipped_json() -> list[dict[str, Any]]:
    """The puzzles shipped in the package (``koikoi/data``) as their JSON, unchecked: a server imports them
    so at its first start (each is checked when it is first served; the tests check every one)."""
    with resources.as_file(resources.files("koikoi") / "data" / SHIPPED) as path:
        _, games = read_file(path)
    return [p for game in sorted(games) for p in games[game]]


def shipped_puzzles() -> list[Puzzle]:
    """The puzzles shipped in the package, read and checked."""
    return [Puzzle.from_dict(p) for p in shipped_json()]


def generate(
    settings: GenerateSettings,
    out: str | os.PathLike[str],
    *,
    jobs: int = 1,
    command: str = "",
    progress: Callable[[GameDone, int, int], None] | None = None,
) -> int:
    """Play the run's games that ``out`` lacks and append their puzzles; returns how many games were
    played now. A file made with another seed, rules or budget is refused; one made by a run of more
    games keeps only this run's (the same, game by game: each is made from the seed alone).
    ``progress(done, games_done, games)`` is called after each game."""
    path = Path(out)
    done: dict[int, list[dict[str, Any]]] = {}
    if path.exists():
        header, done = read_file(path)
        mine = settings.header(command)
        for key in ("seed", "rules", "playouts"):
            if header.get(key) != mine[key]:
                raise PuzzleError(
                    f"{path} was made with {key} {header.get(key)!r}, not {mine[key]!r}: "
                    "give another file, or the same settings to go on with it"
                )
        # Write it again, under this run's header (its command makes the file as it will be): without a
        # line a stop cut short, nor the games past this run's count; then append the games it lacks.
        done = {g: v for g, v in done.items() if g < settings.games}
        lines = [json.dumps(mine)] + [json.dumps({"game": g, "puzzles": done[g]}) for g in sorted(done)]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        path.write_text(json.dumps(settings.header(command)) + "\n", encoding="utf-8")
    todo = [g for g in range(settings.games) if g not in done]
    count = len(done)
    with open(path, "a", encoding="utf-8") as f:
        for result in _run(settings, todo, jobs):
            f.write(json.dumps({"game": result.game, "puzzles": result.puzzles}) + "\n")
            f.flush()
            count += 1
            if progress is not None:
                progress(result, count, settings.games)
    return len(todo)


def _run(settings: GenerateSettings, todo: list[int], jobs: int) -> Iterator[GameDone]:
    if jobs <= 1:
        for g in todo:
            yield puzzles_of_game(settings, g)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(puzzles_of_game, settings, g) for g in todo]
        for fut in as_completed(futures):  # each written as soon as it is done: a stop loses the least
            yield fut.result()
