"""An arena run: the games drawn from one seed, played in this process or in worker processes, each
written to the ``--jsonl`` file as it ends so that a stopped run can be resumed; and the report of
such files merged."""

from __future__ import annotations

import os
import random
import signal
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from .. import safejson
from ..lineup import DEFAULT_TIME_LIMIT, ArenaError, canonical_spec, check_player, spec_options
from ..rules import RuleSet
from .game import GameJob, GameResult, play_game
from .players import ON_TIMEOUT
from .stats import ArenaReport, summarize


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
            game = (g.arena_seed, g.index)
            if game in where:
                raise ArenaError(
                    f"game {g.index + 1} of seed {g.arena_seed} is in both {where[game]} and {f.path}: "
                    "a game counted twice would weigh twice"
                )
            where[game] = f.path
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


def _open_run_file(path: Path, header: dict[str, Any], games: int, resume: bool, done: list[GameResult]) -> TextIO:
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
