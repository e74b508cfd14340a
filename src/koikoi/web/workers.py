"""The computer's thinking, in worker processes: moves first, hints after, never on the event loop.

A ``hard`` decision is a quarter of a second of pure Python. Run in a thread of the server it would hold
the interpreter lock against every other game's messages; so the computer's moves and the hints run in
a few worker processes (``python -m koikoi.web.workers``), each fed one job at a time over a pipe.
They start when there is work for them (when more jobs wait than workers are free) and then stay:
a server nobody asks to think starts none, and the first computer move waits for one start (a tenth of a
second) once.

- **Priority.** A computer move waiting for a worker goes before any waiting hint, and hints may use
  at most all workers but one, so a flood of hint requests never holds up a computer opponent by more
  than one search.
- **Bounded.** At most ``hints_pending`` hints wait or run at once; more are refused (the caller turns
  that into a 429). Computer moves are bounded by the games in play (one pending move each).
- **No orphans.** A worker asks the kernel to kill it when the server dies (``PR_SET_PDEATHSIG``), and
  checks its parent every second as well, so no worker outlives the server, however the server ends:
  a clean stop, SIGTERM or SIGKILL. A worker that dies is started again.

Jobs and answers are pickled; only the server talks to its own workers, over their stdin and stdout.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import os
import pickle
import signal
import struct
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ThinkPool", "PoolBusy", "JobError", "Job"]

log = logging.getLogger("koikoi.web")

_LEN = struct.Struct(">I")
_JOB_TIMEOUT = 60.0  # a search has its own cap (3 s of CPU for hard, 6 s for expert); this catches a stuck worker


class PoolBusy(Exception):
    """Too many hints are waiting: the caller should say so (429) rather than queue more."""


class JobError(Exception):
    """The job itself failed (a bad record, a bug in a search); the worker is fine and goes on."""


@dataclass
class Job:
    # "choose" (a computer move), "rank" (a hint), "record" (read and replay an uploaded record), "game"
    # (write out a finished game's record and replay) or "review" (one step of a game review: its
    # decisions listed, or one decision judged; koikoi.web.reviews)
    kind: str
    level: str
    seed: int
    options: dict[str, Any]
    observation: Any
    future: asyncio.Future[Any] = field(init=False, repr=False)  # given by ThinkPool._submit, on the loop


class _Worker:
    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        env = dict(os.environ, KOIKOI_WORKER_PARENT=str(os.getpid()))
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "koikoi.web.workers",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
        )

    async def call(self, job: Job) -> Any:
        proc = self.proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        data = pickle.dumps((job.kind, job.level, job.seed, job.options, job.observation))
        proc.stdin.write(_LEN.pack(len(data)) + data)
        await proc.stdin.drain()
        head = await asyncio.wait_for(proc.stdout.readexactly(_LEN.size), _JOB_TIMEOUT)
        (n,) = _LEN.unpack(head)
        ok, value = pickle.loads(await proc.stdout.readexactly(n))
        if not ok:
            raise JobError(value)
        return value

    def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            try:
                self.proc.kill()
            except ProcessLookupError:
                pass

    async def stop(self) -> None:
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        if proc.stdin is not None:
            proc.stdin.close()  # end of input: the worker exits
        try:
            await asyncio.wait_for(proc.wait(), 2)
        except TimeoutError:
            self.kill()
            await proc.wait()


class ThinkPool:
    """Up to ``processes`` workers, started as jobs come; :meth:`choose` for the computer's moves,
    :meth:`rank` for hints."""

    def __init__(self, processes: int = 2, *, hints_pending: int = 8) -> None:
        self.processes = max(1, processes)
        self.hints_pending = hints_pending
        self._moves: deque[Job] = deque()
        self._hints: deque[Job] = deque()
        self._hints_running = 0
        self._ready = asyncio.Condition()
        self._workers: list[_Worker] = []
        self._free = 0  # workers started (or starting) and not working on a job
        self._tasks: list[asyncio.Task[None]] = []
        self._closed = False

    @property
    def hint_slots(self) -> int:
        """Workers that hints may use at once: all but one, so a computer move always finds one free."""
        return max(1, self.processes - 1)

    @property
    def pids(self) -> list[int]:
        return [w.proc.pid for w in self._workers if w.proc is not None and w.proc.returncode is None]

    async def start(self) -> None:
        """Ready for jobs. No process starts yet: a worker starts when more jobs wait than workers are free,
        up to ``processes`` (a server that nobody asks to think keeps none, and its start costs none)."""

    def _add_worker(self) -> None:
        w = _Worker()
        self._workers.append(w)
        self._free += 1  # free from the moment it starts: the jobs that wait meanwhile are its own
        self._tasks.append(asyncio.get_running_loop().create_task(self._serve(w)))

    async def close(self) -> None:
        self._closed = True
        for t in self._tasks:
            t.cancel()
        for job in (*self._moves, *self._hints):
            if not job.future.done():
                job.future.cancel()
        self._moves.clear()
        self._hints.clear()
        await asyncio.gather(*(w.stop() for w in self._workers), return_exceptions=True)

    async def choose(self, level: str, seed: int, options: dict[str, Any], observation: Any) -> int:
        """The computer's action for ``observation``; goes before every hint."""
        return int(await self._submit(Job("choose", level, seed, options, observation), self._moves))

    def rank(self, seed: int, options: dict[str, Any], observation: Any) -> asyncio.Future[Any]:
        """A future of the ``hard`` search's ranking of every legal action, as (action, value), best first.

        Raises :class:`PoolBusy` at once when ``hints_pending`` hints are waiting or running already."""
        if len(self._hints) + self._hints_running >= self.hints_pending:
            raise PoolBusy(f"{self.hints_pending} hints are being worked out already")
        return self._submit(Job("rank", "hard", seed, options, observation), self._hints)

    async def read_record(self, data: bytes) -> str:
        """An uploaded record checked and replayed: the JSON text of ``{"record", "frames"}``.

        Raises :class:`JobError` with the reader's message when the record is not valid."""
        return str(await self._submit(Job("record", "", 0, {}, data), self._moves))

    async def game_record(self, record: Any) -> tuple[str, str]:
        """A finished game's :class:`~koikoi.records.GameRecord` written out: (its JSON text, the JSON text
        of its replay, ``{"record", "frames"}``). A hundred hands take a fifth of a second: not on the loop."""
        record_text, replay_text = await self._submit(Job("game", "", 0, {}, record), self._moves)
        return str(record_text), str(replay_text)

    def review(self, step: tuple[Any, ...]) -> asyncio.Future[Any]:
        """One step of a game review, in the lane of the hints (after every computer move and record):
        ``("decisions", record JSON, seat)`` lists the seat's decisions, ``("decision", decision, seed,
        playouts)`` judges one (:mod:`koikoi.review`). For an uploaded record, ``("record", bytes, seat or
        None, most)`` reads it and answers (seat, decisions, seed, record JSON), and ``("assemble", record
        JSON, seat, entries, playouts, seed)`` the finished review. Raises :class:`JobError` on a record
        that does not replay."""
        return self._submit(Job("review", "", 0, {}, step), self._hints)

    def _submit(self, job: Job, queue: deque[Job]) -> asyncio.Future[Any]:
        if self._closed:
            raise RuntimeError("the server is stopping")
        job.future = asyncio.get_running_loop().create_future()
        queue.append(job)
        if len(self._moves) + len(self._hints) > self._free and len(self._workers) < self.processes:
            self._add_worker()  # more jobs wait than workers are free for them
        asyncio.get_running_loop().create_task(self._wake())
        return job.future

    async def _wake(self) -> None:
        async with self._ready:
            self._ready.notify_all()

    def _next_job(self) -> Job | None:
        while self._moves:
            job = self._moves.popleft()
            if not job.future.done():
                return job
        while self._hints and self._hints_running < self.hint_slots:
            job = self._hints.popleft()
            if not job.future.done():
                return job
        return None

    async def _serve(self, worker: _Worker) -> None:
        try:
            await worker.start()
        except OSError as e:  # no process can be started (out of memory, of processes): the jobs are told
            log.error("could not start a worker for the computer's thinking: %s", e)
            self._workers.remove(worker)
            self._free -= 1
            if not self._workers:
                for waiting in (*self._moves, *self._hints):
                    if not waiting.future.done():
                        waiting.future.set_exception(RuntimeError("the computer could not start thinking"))
                self._moves.clear()
                self._hints.clear()
            return
        while not self._closed:
            async with self._ready:
                job = self._next_job()
                while job is None:
                    await self._ready.wait()
                    job = self._next_job()
            hint = job.kind in ("rank", "review")
            if hint:
                self._hints_running += 1
            self._free -= 1
            try:
                result = await worker.call(job)
            except JobError as e:
                if not job.future.done():
                    job.future.set_exception(e)
            except (
                TimeoutError,
                asyncio.IncompleteReadError,
                BrokenPipeError,
                ConnectionResetError,
                RuntimeError,
                pickle.UnpicklingError,
            ) as e:
                log.error("a worker failed on a %s job (%s): starting it again", job.kind, type(e).__name__)
                if not job.future.done():
                    job.future.set_exception(RuntimeError("the computer could not finish thinking"))
                worker.kill()
                if not self._closed:
                    await worker.start()
            else:
                if not job.future.done():
                    job.future.set_result(result)
            finally:
                self._free += 1
                if hint:
                    self._hints_running -= 1
                async with self._ready:
                    self._ready.notify_all()


# -- the worker process ---------------------------------------------------------------------------


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: the kernel kills us when the server dies
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the server died before we asked
        os._exit(0)

    def watch() -> None:  # for systems without PR_SET_PDEATHSIG, and as a second line
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


class _Refused(Exception):
    """An uploaded record that cannot be read: its message goes back to the player."""


def _read_record(data: bytes) -> str:
    import json

    from koikoi.records import GameRecord, RecordError
    from koikoi.web.rulelabels import rules_shown
    from koikoi.web.views import replay_frames

    try:
        rec = GameRecord.from_json(data.decode("utf-8"))
        frames = replay_frames(rec)
    except UnicodeDecodeError:
        raise _Refused("the record is not UTF-8 text") from None
    except RecordError as e:
        raise _Refused(str(e)) from None
    return json.dumps({"record": rec.to_dict(), "frames": frames, "rules_label": rules_shown(rec.rules.to_dict())})


def _game_record(rec: Any) -> tuple[str, str]:
    import json

    from koikoi.web.rulelabels import rules_shown
    from koikoi.web.views import replay_frames

    replay = {"record": rec.to_dict(), "frames": replay_frames(rec), "rules_label": rules_shown(rec.rules.to_dict())}
    return rec.to_json(), json.dumps(replay)


def _review_step(step: tuple[Any, ...]) -> Any:
    from koikoi import review
    from koikoi.records import GameRecord, RecordError

    if step[0] == "decisions":
        _, text, seat = step
        try:
            return review.decisions(GameRecord.from_json(text), seat)
        except RecordError as e:
            raise _Refused(str(e)) from None
    if step[0] == "record":  # an uploaded record: read it, choose the seat, list its decisions
        _, data, seat, most = step
        return _record_decisions(data, seat, most)
    if step[0] == "assemble":  # an uploaded record's review put together from its judged decisions
        _, text, seat, entries, playouts, seed = step
        return review.assemble(GameRecord.from_json(text), seat, entries, playouts, seed)
    _, decision, seed, playouts = step
    return review.review_decision(decision, seed, playouts)


def _record_decisions(data: bytes, seat: int | None, most: int) -> tuple[Any, ...]:
    """An uploaded record read for its review: (the seat reviewed, its decisions, the review's seed, the
    record's JSON text); ("too_long", decisions, name) when it has more decisions than ``most`` (each
    takes the search a second or two). Refused with what is wrong: a record that does not read or
    replay, or a seat that is not 0 or 1."""
    from koikoi import review
    from koikoi.records import GameRecord, RecordError

    try:
        rec = GameRecord.from_json(data.decode("utf-8"))
        chosen = review.choose_player(rec, seat)
        todo = review.decisions(rec, chosen)
    except UnicodeDecodeError:
        raise _Refused("the record is not UTF-8 text") from None
    except (RecordError, ValueError) as e:
        raise _Refused(str(e)) from None
    if len(todo) > most:
        return "too_long", len(todo), str(rec.players[chosen].get("name", f"player {chosen}"))[:40]
    return chosen, todo, review.review_seed(rec), rec.to_json()


def _worker_main() -> None:
    parent = int(os.environ.get("KOIKOI_WORKER_PARENT", os.getppid()))
    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the server's to handle; we stop when it does
    try:
        os.nice(5)  # the server's event loop comes before the computer's thinking
    except OSError:
        pass
    from koikoi.ai import make_agent
    from koikoi.ai.hints import hint_lines

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = stdin.read(_LEN.size)
        if len(head) < _LEN.size:
            return  # the server closed the pipe: stop
        (n,) = _LEN.unpack(head)
        kind, level, seed, options, obs = pickle.loads(stdin.read(n))
        try:
            if kind == "record":
                value: Any = _read_record(obs)
            elif kind == "game":
                value = _game_record(obs)
            elif kind == "review":
                value = _review_step(obs)
            else:
                agent = make_agent(level, seed=seed, **options)
                if kind == "choose":
                    value = agent.choose(obs)
                else:
                    value = [line.to_dict() for line in hint_lines(obs, agent.rank(obs))]
            out = pickle.dumps((True, value))
        except _Refused as e:
            out = pickle.dumps((False, str(e)))
        except Exception as e:  # a bug in the search must not kill the worker: the server is told
            out = pickle.dumps((False, f"{type(e).__name__}: {e}"))
        stdout.write(_LEN.pack(len(out)) + out)
        stdout.flush()


if __name__ == "__main__":
    _worker_main()
