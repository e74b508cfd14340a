"""The bot protocol, arena side: an external program plays through JSON lines on stdin/stdout.

The protocol is specified in ``docs/bot-protocol.md``; ``examples/random_bot.py`` is a complete bot.
In short: the arena starts the program, sends one JSON object per line (``hello``, ``choose``,
``hand_end``, ``match_end``, ``quit``) and reads one JSON object per line back (the answer to
``hello`` and to each ``choose``). The bot's stderr goes to a log file, never into the protocol.

Two versions are spoken. ``hello`` is the same for both; a bot that answers it with ``"version": 2``
gets version-2 messages from then on (the observation's ``rules`` is the whole rule set, and
``positions`` tells where the cards lie), any other bot the version-1 messages, unchanged.

Anything that goes wrong on the bot's side raises :class:`BotError`, whose ``kind`` says what
(``crash``, ``timeout``, ``malformed``, ``illegal``, ``protocol``) and whose message says how; the
arena makes the bot lose the match for it. What a bot sends is bounded before it is parsed: a line
holds at most :data:`MAX_LINE_BYTES`, JSON nests at most :data:`MAX_JSON_DEPTH` deep, and an action
number must be an ``int`` in ``range(NUM_ACTIONS)``. Its stderr is read all the time and only the
last :data:`STDERR_KEEP_BYTES` are kept.

:meth:`BotProcess.close` always leaves no process behind. On Linux the bot runs under a small
launcher (``koikoi/_botlauncher.py``), a child subreaper that dies with the arena and kills every
process the bot started (even one that left the bot's session) when the bot exits or is closed;
elsewhere the bot's process group is killed.

>>> read_action('{"action": "play pine-crane"}', [0, 1, 2])
0
>>> read_action('{"action": 7}', [0, 1, 2])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
koikoi.botproto.BotError: illegal action 7 ('play plum-plain-2'); legal: 0 (play pine-crane), ...
>>> read_action('{"action": -300}', [0, 1, 2])
Traceback (most recent call last):
...
koikoi.botproto.BotError: answer to choose: there is no action -300: action numbers are 0 to 290
"""

from __future__ import annotations

import json
import os
import select
import selectors
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

from . import safejson
from .actions import NUM_ACTIONS, ActionParseError, action_name, is_action, parse_action
from .hand import HandResult
from .match import Match
from .observation import Observation, positions
from .rules import RuleSet

__all__ = [
    "PROTOCOL",
    "VERSION",
    "VERSIONS",
    "BotError",
    "BotProcess",
    "hello_message",
    "choose_message",
    "observation_message",
    "versioned_observation",
    "hand_end_message",
    "match_end_message",
    "read_action",
    "read_hello",
    "read_hello_version",
    "split_command",
    "launcher_available",
    "MAX_LINE_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_NAME_CHARS",
    "STDERR_KEEP_BYTES",
]

PROTOCOL = "koikoi-bot"
# The version ``hello`` is written in, and the one a bot speaks unless its answer to hello names
# another of VERSIONS. Hello stays in version 1, so a version-1 bot gets exactly what it always got.
VERSION = 1
VERSIONS = (1, 2)
# The reply to hello may take this long at least: starting an interpreter and loading a model is slow.
STARTUP_SECONDS = 10.0
# A bot that was sent quit and closed stdin gets this long to exit before it is killed.
QUIT_GRACE_SECONDS = 1.0
# The launcher, the bot and its children get this long to be killed and reaped when the bot is closed.
KILL_GRACE_SECONDS = 3.0
# A line from a bot (without its newline); an answer is a few dozen bytes.
MAX_LINE_BYTES = 64 << 10
# How deeply an answer's JSON may nest (an answer needs 1; a bot may add keys of its own).
MAX_JSON_DEPTH = safejson.MAX_DEPTH
# The name and author a bot gives in its answer to hello.
MAX_NAME_CHARS = 200
# Of a bot's stderr only this much is kept, the end: in memory and in its log file.
STDERR_KEEP_BYTES = 64 << 10
# The end of a bot's stderr shown with a forfeit.
STDERR_TAIL_BYTES = 1500
_LAUNCHER = Path(__file__).with_name("_botlauncher.py")


class BotError(Exception):
    """A bot broke the protocol or the rules: ``kind`` is crash, timeout, malformed, illegal or protocol."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def split_command(command: str) -> list[str]:
    """The program and arguments of a bot command line, split as a POSIX shell would (no shell runs).

    >>> split_command("python3 'my bot.py' --level 3")
    ['python3', 'my bot.py', '--level', '3']
    """
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise ValueError(f"cannot read bot command {command!r}: {e}") from None
    if not argv:
        raise ValueError("the bot command is empty; write cmd:PROGRAM [ARGUMENTS]")
    return argv


# -- messages --------------------------------------------------------------------------------------


def hello_message(seat: int, rules: RuleSet, time_limit: float, *, game: int, bot_seed: int) -> dict[str, Any]:
    return {
        "type": "hello",
        "protocol": PROTOCOL,
        "version": VERSION,
        "seat": seat,
        "game": game,
        "rules": rules.to_dict(),
        "time_limit": time_limit,
        "bot_seed": bot_seed,
    }


def choose_message(
    obs: Observation, decision: int, time_limit: float, *, version: int = VERSION, match: Match | None = None
) -> dict[str, Any]:
    """The ``choose`` message of protocol ``version`` for ``obs``; version 2 needs the ``match`` the
    observation was taken of, for the positions of the cards (computed only then)."""
    return {
        "type": "choose",
        "decision": decision,
        "time_limit": time_limit,
        "observation": observation_message(obs, version=version, match=match),
    }


def observation_message(obs: Observation, *, version: int = VERSION, match: Match | None = None) -> dict[str, Any]:
    """The observation as protocol ``version`` writes it.

    Version 1 is ``obs.to_dict()``, where ``rules`` is the preset's name and ``rule_set`` the whole
    rule set. Version 2 names the whole rule set ``rules``, as hello does (the preset's name is its
    ``name``), has no ``rule_set``, and adds ``positions`` (:class:`koikoi.observation.Positions`).
    """
    if version == 2 and match is None:
        raise ValueError("a version-2 observation needs the match, for the positions of the cards")
    where = positions(match, obs.player).to_dict() if version == 2 and match is not None else None
    return versioned_observation(obs.to_dict(), where, version=version)


def versioned_observation(
    data: dict[str, Any], where: dict[str, Any] | None, *, version: int = VERSION
) -> dict[str, Any]:
    """The observation as protocol ``version`` writes it, from its version-1 form ``data``
    (``Observation.to_dict()``) and, for version 2, the positions ``where`` (``Positions.to_dict()``).
    ``data`` is changed and returned. A client of a server (``koikoi bot connect``) is sent these two
    and makes the very message the arena would."""
    if version == 1:
        return data
    if version != 2:
        raise ValueError(f"no protocol version {version!r}; versions are {', '.join(map(str, VERSIONS))}")
    if where is None:
        raise ValueError("a version-2 observation needs the positions of the cards")
    data["rules"] = data.pop("rule_set")  # the key keeps its place, next to player
    data["positions"] = where
    return data


def hand_end_message(hand_number: int, result: HandResult | dict[str, Any], scores: Sequence[int]) -> dict[str, Any]:
    """``hand_end`` for a hand's ``result`` (a :class:`HandResult`, or its ``to_dict()`` as received)."""
    shown = result.to_dict() if isinstance(result, HandResult) else dict(result)
    return {"type": "hand_end", "hand_number": hand_number, "result": shown, "scores": list(scores)}


def match_end_message(
    winner: int | None, scores: Sequence[int], reason: str, forfeit: dict[str, Any] | None = None
) -> dict[str, Any]:
    msg: dict[str, Any] = {"type": "match_end", "winner": winner, "scores": list(scores), "reason": reason}
    if forfeit is not None:
        msg["forfeit"] = forfeit
    return msg


def _shown(line: str, limit: int = 120) -> str:
    return repr(line if len(line) <= limit else line[:limit] + "...")


def _object(line: str, what: str) -> dict[str, Any]:
    if len(line) > MAX_LINE_BYTES:
        raise BotError("malformed", f"{what}: a line of {len(line)} characters; at most {MAX_LINE_BYTES} are allowed")
    try:
        data = safejson.loads(line, MAX_JSON_DEPTH)
    except safejson.NestingError as e:
        raise BotError("malformed", f"{what}: JSON {e}: {_shown(line)}") from None
    except json.JSONDecodeError as e:
        raise BotError("malformed", f"{what}: not JSON ({e.msg}): {_shown(line)}") from None
    except (ValueError, RecursionError) as e:  # a number of more than 4300 digits, say
        raise BotError("malformed", f"{what}: unreadable JSON ({e}): {_shown(line)}") from None
    if not isinstance(data, dict):
        raise BotError("malformed", f"{what}: expected a JSON object, got {_shown(line)}")
    return data


def read_hello(line: str) -> dict[str, str]:
    """The bot's answer to hello: ``name`` and ``author`` (both optional strings).

    >>> read_hello('{"name": "Tanuki", "author": "Aiko"}')
    {'name': 'Tanuki', 'author': 'Aiko'}
    """
    return read_hello_version(line)[0]


def read_hello_version(line: str) -> tuple[dict[str, str], int]:
    """The bot's answer to hello: ``name`` and ``author``, and the protocol version it asks for.

    >>> read_hello_version('{"name": "Tanuki", "version": 2}')
    ({'name': 'Tanuki'}, 2)
    >>> read_hello_version('{"name": "Tanuki"}')
    ({'name': 'Tanuki'}, 1)
    """
    data = _object(line, "answer to hello")
    asked = data.get("version", VERSION)
    # Version 1 is taken as it always was (any JSON value equal to 1); a newer one must be an integer.
    if asked == 1:
        version = 1
    elif type(asked) is int and asked in VERSIONS:
        version = asked
    else:
        raise BotError(
            "protocol",
            f"the bot speaks protocol version {_shown(json.dumps(asked))}; "
            f"this arena speaks {' and '.join(map(str, VERSIONS))}",
        )
    out = {}
    for key in ("name", "author"):
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise BotError("malformed", f"answer to hello: {key!r} must be a string, not {_shown(json.dumps(value))}")
        if value is not None and len(value) > MAX_NAME_CHARS:
            raise BotError(
                "malformed",
                f"answer to hello: {key!r} is {len(value)} characters long; at most {MAX_NAME_CHARS} are allowed",
            )
        if value:
            out[key] = value
    return out, version


def _number(value: int) -> str:
    text = str(value)
    return text if len(text) <= 40 else f"{text[:20]}...{text[-10:]} ({len(text)} digits)"


def read_action(line: str, legal: Sequence[int]) -> int:
    """The action of a ``choose`` answer: ``{"action": ID}`` or ``{"action": "NOTATION"}``; it must be legal.

    An action number is checked to be an ``int`` (not ``true``) in ``range(NUM_ACTIONS)`` before
    anything else looks at it.
    """
    data = _object(line, "answer to choose")
    if "action" not in data:
        raise BotError("malformed", f"answer to choose: no 'action' key in {_shown(line)}")
    value = data["action"]
    if isinstance(value, bool) or not isinstance(value, int | str):
        shown = json.dumps(value)
        shown = shown if len(shown) <= 120 else shown[:120] + "..."
        raise BotError(
            "malformed",
            f"answer to choose: 'action' must be an action number (0 to "
            f"{NUM_ACTIONS - 1}) or its notation, not {shown}",
        )
    if isinstance(value, str):
        try:
            action = parse_action(value)
        except ActionParseError as e:
            raise BotError("illegal", str(e)) from None
        except Exception as e:  # noqa: BLE001 - whatever the parser makes of it, the bot answered badly
            raise BotError("illegal", f"answer to choose: cannot read the action {_shown(value)}: {e}") from None
        if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < NUM_ACTIONS:
            raise BotError("illegal", f"answer to choose: {_shown(value)} is not an action")
    else:
        action = value
        if not 0 <= action < NUM_ACTIONS:
            raise BotError(
                "illegal",
                f"answer to choose: there is no action {_number(action)}: action numbers are 0 to {NUM_ACTIONS - 1}",
            )
    if action not in legal:
        # 48 numbers in range name no action at all (a card taking itself): those get no name.
        name = f" ({action_name(action)!r})" if isinstance(value, int) and is_action(action) else ""
        shown = ", ".join(f"{a} ({action_name(a)})" for a in legal)
        raise BotError(
            "illegal", f"illegal action {value if isinstance(value, int) else _shown(value)}{name}; legal: {shown}"
        )
    return action


# -- the process -----------------------------------------------------------------------------------


def _read_status(fd: int, deadline: float) -> str:
    """What the launcher wrote on its status pipe before closing it: nothing when the bot started."""
    out = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return "the launcher did not start the program in time"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                return out.decode("utf-8", "replace")
            out += chunk


def launcher_available() -> bool:
    """Whether bots run under the launcher (Linux, with ``/proc`` and a Python to run it)."""
    return (
        sys.platform.startswith("linux")
        and bool(sys.executable)
        and os.path.isdir("/proc/self")
        and _LAUNCHER.is_file()
    )


class _StderrSink:
    """Reads a bot's stderr until its end, in a thread of its own, so the bot never blocks on a full pipe.

    Only the last ``keep`` bytes are kept in memory; the log file (when there is one) receives the first
    ``keep`` bytes as they come and, at :meth:`finish`, only the last ``keep`` when there were more.
    """

    def __init__(self, fd: int, path: Path | None, keep: int = STDERR_KEEP_BYTES) -> None:
        self.fd = fd
        self.path = path
        self.keep = keep
        self.total = 0
        self._tail = bytearray()
        self._file: BinaryIO | None = None
        self._written = 0
        self._lock = threading.Lock()
        self._finished = False
        self._thread = threading.Thread(target=self._run, name="koikoi-bot-stderr", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while True:
                try:
                    chunk = os.read(self.fd, 65536)
                except InterruptedError:
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                with self._lock:
                    self.total += len(chunk)
                    self._tail += chunk
                    if len(self._tail) > self.keep:
                        del self._tail[: len(self._tail) - self.keep]
                    if self.path is not None and not self._finished and self._written < self.keep:
                        try:
                            if self._file is None:
                                self._file = open(self.path, "wb")  # noqa: SIM115 - closed in finish()
                            part = chunk[: self.keep - self._written]
                            self._file.write(part)
                            self._file.flush()
                            self._written += len(part)
                        except OSError:
                            self.path = None
        finally:
            os.close(self.fd)

    def sync(self, ended: bool) -> None:
        """Catch up with what the bot wrote: all of it when it has ``ended``, else what is in the pipe."""
        if ended:
            self._thread.join(1.0)
            return
        deadline = time.monotonic() + 0.2
        while self._thread.is_alive() and time.monotonic() < deadline:
            try:
                ready, _, _ = select.select([self.fd], [], [], 0)
            except (OSError, ValueError):
                return
            if not ready:
                time.sleep(0.002)  # the reader may hold a chunk it has not added yet
                return
            time.sleep(0.002)

    def tail(self, limit: int) -> tuple[bytes, int]:
        with self._lock:
            return bytes(self._tail[-limit:]), self.total

    def finish(self) -> None:
        """Wait a moment for the end of the stderr, then leave the log file with at most ``keep`` bytes."""
        self._thread.join(1.0)
        with self._lock:
            self._finished = True
            f, self._file = self._file, None
            dropped = self.total - len(self._tail)
            try:
                if f is not None and self.total > self._written:
                    f.seek(0)
                    f.truncate()
                    if dropped:
                        f.write(
                            f"[koikoi: the bot wrote {self.total} bytes to stderr; only the last "
                            f"{len(self._tail)} are kept]\n".encode()
                        )
                    f.write(self._tail)
            except OSError:
                pass
            finally:
                if f is not None:
                    f.close()


class BotProcess:
    """One running bot: start it, talk to it with deadlines, and always clean it up.

    ``stderr_path`` receives the bot's stderr (at most :data:`STDERR_KEEP_BYTES`, the end; no file when
    the bot writes nothing; None: no file, only the end is kept in memory). On Linux the program runs
    under the launcher (``koikoi/_botlauncher.py``), in a session of its own: :meth:`close`, the end of
    the bot, or the death of this process (or of the thread that called :meth:`start`: keep it alive
    while the bot plays) kills every process the bot started. Elsewhere the bot's own session is
    killed as a process group.
    """

    def __init__(self, command: str, *, stderr_path: str | os.PathLike[str] | None = None) -> None:
        self.command = command
        self.argv = split_command(command)
        self.stderr_path = Path(stderr_path) if stderr_path is not None else None
        self.proc: subprocess.Popen[bytes] | None = None
        self._buffer = bytearray()
        self._selector: selectors.BaseSelector | None = None
        self._stderr: _StderrSink | None = None
        self._launcher = False
        self.version = VERSION  # the protocol version the bot asked for in its answer to hello

    # -- life --------------------------------------------------------------------------------------

    def start(self) -> None:
        if self.stderr_path is not None:
            self.stderr_path.parent.mkdir(parents=True, exist_ok=True)
            self.stderr_path.unlink(missing_ok=True)  # a log of an earlier run would pass for this one's
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self._launcher = launcher_available()
        status_r = status_w = -1
        if self._launcher:
            status_r, status_w = os.pipe()
            argv = [sys.executable, "-I", "-S", str(_LAUNCHER), str(os.getpid()), str(status_w), "--", *self.argv]
        else:
            argv = self.argv
        try:
            try:
                self.proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    bufsize=0,
                    env=env,
                    start_new_session=True,
                    pass_fds=(status_w,) if self._launcher else (),
                )
            except OSError as e:
                raise BotError("crash", f"could not start {self.command!r}: {e.strerror or e}") from None
            finally:
                if status_w >= 0:
                    os.close(status_w)
            assert self.proc.stdin is not None and self.proc.stdout is not None and self.proc.stderr is not None
            self._stderr = _StderrSink(os.dup(self.proc.stderr.fileno()), self.stderr_path)
            self.proc.stderr.close()
            os.set_blocking(self.proc.stdin.fileno(), False)
            os.set_blocking(self.proc.stdout.fileno(), False)
            self._selector = selectors.DefaultSelector()
            self._selector.register(self.proc.stdout, selectors.EVENT_READ)
            if self._launcher:
                problem = _read_status(status_r, time.monotonic() + STARTUP_SECONDS)
                if problem:
                    self.close(polite=False)
                    raise BotError("crash", f"could not start {self.command!r}: {problem}")
        finally:
            if status_r >= 0:
                os.close(status_r)

    def _exit_code(self, timeout: float = 0.0) -> int | None:
        """The exit status (negative: the signal) once the process has ended, waiting up to ``timeout``.

        The process is not reaped, so its process group id cannot be taken by another process meanwhile.
        """
        proc = self.proc
        assert proc is not None
        if proc.returncode is not None:
            return proc.returncode
        deadline = time.monotonic() + timeout
        pause = 0.001
        while True:
            try:
                info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG)
            except ChildProcessError:
                return proc.poll()
            except AttributeError:  # no waitid here
                info = None
                if proc.poll() is not None:
                    return proc.returncode
            if info is not None:
                return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.02)

    def close(self, *, polite: bool = True) -> None:
        """Say quit (when ``polite``), give the bot a moment to exit, then kill what is left and reap it."""
        proc = self.proc
        if proc is None:
            return
        try:
            if polite and self._exit_code() is None:
                try:
                    self.send({"type": "quit"}, time.monotonic() + QUIT_GRACE_SECONDS)
                except BotError:
                    pass
                try:
                    proc.stdin.close()  # type: ignore[union-attr]
                except OSError:
                    pass
                self._exit_code(QUIT_GRACE_SECONDS)
        finally:
            try:
                self._kill()
            finally:
                for f in (proc.stdin, proc.stdout):
                    try:
                        if f is not None:
                            f.close()
                    except OSError:
                        pass
                if self._selector is not None:
                    self._selector.close()
                    self._selector = None
                if self._stderr is not None:
                    self._stderr.finish()
                self.proc = None

    def _kill(self) -> None:
        """Kill the bot and every process it started, and reap the one this process started."""
        proc = self.proc
        assert proc is not None
        if self._launcher and self._exit_code() is None:
            try:
                os.kill(proc.pid, signal.SIGTERM)  # the launcher kills the bot and all its descendants
            except OSError:
                pass
            self._exit_code(KILL_GRACE_SECONDS)
        if proc.returncode is None:
            # Not reaped yet, so the group id is still this one's: kill whatever is left in the group.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                try:
                    os.kill(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
        proc.wait()

    # -- talking -----------------------------------------------------------------------------------

    def send(self, message: dict[str, Any], deadline: float) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        fd = self.proc.stdin.fileno()
        view = memoryview(data)
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_WRITE)
            while view:
                try:
                    n = os.write(fd, view)
                except BlockingIOError:
                    n = 0
                except (BrokenPipeError, ConnectionResetError):
                    raise self._ended("while reading its input") from None
                view = view[n:]
                if view:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise BotError(
                            "timeout", f"did not read its input within the time limit (sending {message['type']})"
                        )
                    sel.select(left)

    def check_quiet(self) -> None:
        """Raise if the bot wrote something nobody asked for (the protocol forbids it)."""
        self._fill(0.0)
        rest = self._buffer.strip()
        if rest:
            line = rest.split(b"\n", 1)[0].decode("utf-8", "replace")
            raise BotError("malformed", f"wrote {_shown(line)} without being asked")

    def read_line(self, deadline: float, what: str) -> str:
        """The next non-empty line the bot writes before ``deadline`` (a ``time.monotonic()`` value)."""
        # The buffer is searched for a newline only where it is new: a bot writing a long line a byte at a
        # time would otherwise have the whole line searched again after every byte, the square of its length.
        searched = 0
        while True:
            while (end := self._buffer.find(b"\n", searched)) >= 0:
                searched = 0
                raw = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                if len(raw) > MAX_LINE_BYTES:
                    raise BotError(
                        "malformed", f"{what}: a line of {len(raw)} bytes; at most {MAX_LINE_BYTES} are allowed"
                    )
                if raw.strip():
                    try:
                        return raw.decode("utf-8")
                    except UnicodeDecodeError:
                        raise BotError("malformed", f"{what}: not UTF-8: {raw[:80]!r}") from None
            if len(self._buffer) > MAX_LINE_BYTES:
                raise BotError(
                    "malformed",
                    f"{what}: a line longer than {MAX_LINE_BYTES} bytes; at most {MAX_LINE_BYTES} are allowed",
                )
            left = deadline - time.monotonic()
            if left <= 0:
                raise BotError("timeout", f"no {what} within the time limit")
            searched = len(self._buffer)  # holds no newline: only what _fill appends needs searching
            if not self._fill(left):
                raise self._ended(f"before its {what}")

    def _fill(self, timeout: float) -> bool:
        """Read what the bot has written (waiting up to ``timeout``); False at the end of its output."""
        assert self.proc is not None and self.proc.stdout is not None and self._selector is not None
        if not self._selector.select(timeout):
            return True
        try:
            chunk = os.read(self.proc.stdout.fileno(), 65536)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        self._buffer += chunk
        return True

    def _ended(self, when: str) -> BotError:
        assert self.proc is not None
        code = self._exit_code(QUIT_GRACE_SECONDS)
        if code is None:
            return BotError("crash", f"closed its output {when} (still running)")
        if code < 0:
            try:
                how = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
        else:
            how = f"exited with status {code}"
        return BotError("crash", f"{how} {when}")

    def stderr_tail(self, limit: int = STDERR_TAIL_BYTES) -> str:
        """The end of what the bot wrote to stderr so far (after :meth:`close` too)."""
        sink = self._stderr
        if sink is None:
            return ""
        sink.sync(ended=self.proc is None or self._exit_code() is not None)
        data, total = sink.tail(limit)
        return ("..." if total > limit else "") + data.decode("utf-8", "replace").strip()

    # -- the conversation ----------------------------------------------------------------------------

    def hello(self, seat: int, rules: RuleSet, time_limit: float, *, game: int, bot_seed: int) -> dict[str, str]:
        """Send hello and read the answer: the bot's name and author; :attr:`version` is then the
        protocol version the bot asked for."""
        deadline = time.monotonic() + max(time_limit, STARTUP_SECONDS)
        self.send(hello_message(seat, rules, time_limit, game=game, bot_seed=bot_seed), deadline)
        info, self.version = read_hello_version(self.read_line(deadline, "answer to hello"))
        return info

    def choose(self, obs: Observation, decision: int, time_limit: float, *, match: Match | None = None) -> int:
        """Ask the bot for an action. A version-2 bot needs ``match`` (the match ``obs`` was taken of)."""
        message = choose_message(obs, decision, time_limit, version=self.version, match=match)
        return self.ask(message, obs.legal_actions, decision, time_limit)

    def ask(self, message: dict[str, Any], legal: Sequence[int], decision: int, time_limit: float) -> int:
        """Send a ``choose`` ``message`` made already (in the bot's :attr:`version`) and read the action,
        which must be among ``legal``."""
        self.check_quiet()
        deadline = time.monotonic() + time_limit
        self.send(message, deadline)
        try:
            line = self.read_line(deadline, "answer to choose")
        except BotError as e:
            if e.kind == "timeout":
                raise BotError(
                    "timeout", f"no answer within the time limit of {time_limit:g} s (decision {decision})"
                ) from None
            raise
        return read_action(line, legal)

    def notify(self, message: dict[str, Any], time_limit: float) -> None:
        self.send(message, time.monotonic() + time_limit)
