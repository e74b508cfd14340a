"""The bot protocol, arena side: an external program plays through JSON lines on stdin/stdout.

The protocol is specified in ``docs/bot-protocol.md``; ``examples/random_bot.py`` is a complete bot.
In short: the arena starts the program, sends one JSON object per line (``hello``, ``choose``,
``hand_end``, ``match_end``, ``quit``) and reads one JSON object per line back (the answer to
``hello`` and to each ``choose``). The bot's stderr goes to a log file, never into the protocol.

Anything that goes wrong on the bot's side raises :class:`BotError`, whose ``kind`` says what
(``crash``, ``timeout``, ``malformed``, ``illegal``, ``protocol``) and whose message says how; the
arena makes the bot lose the match for it. :meth:`BotProcess.close` always leaves no process behind.

>>> read_action('{"action": "play pine-crane"}', [0, 1, 2])
0
>>> read_action('{"action": 7}', [0, 1, 2])
Traceback (most recent call last):
...
koikoi.botproto.BotError: illegal action 7 ('play plum-plain-2'); legal: 0 (play pine-crane), 1 (play pine-poetry), 2 (play pine-plain-1)
"""

from __future__ import annotations

import json
import os
import selectors
import shlex
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from .actions import ActionParseError, action_name, parse_action
from .hand import HandResult
from .observation import Observation
from .rules import RuleSet

__all__ = [
    "PROTOCOL", "VERSION", "BotError", "BotProcess", "hello_message", "choose_message", "hand_end_message",
    "match_end_message", "read_action", "read_hello", "split_command",
]

PROTOCOL = "koikoi-bot"
VERSION = 1
# The reply to hello may take this long at least: starting an interpreter and loading a model is slow.
STARTUP_SECONDS = 10.0
# A bot that was sent quit and closed stdin gets this long to exit before it is killed.
QUIT_GRACE_SECONDS = 1.0
MAX_LINE_BYTES = 4 << 20
STDERR_TAIL_BYTES = 1500


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
    return {"type": "hello", "protocol": PROTOCOL, "version": VERSION, "seat": seat, "game": game,
            "rules": rules.to_dict(), "time_limit": time_limit, "bot_seed": bot_seed}


def choose_message(obs: Observation, decision: int, time_limit: float) -> dict[str, Any]:
    return {"type": "choose", "decision": decision, "time_limit": time_limit, "observation": obs.to_dict()}


def hand_end_message(hand_number: int, result: HandResult, scores: Sequence[int]) -> dict[str, Any]:
    return {"type": "hand_end", "hand_number": hand_number, "result": result.to_dict(), "scores": list(scores)}


def match_end_message(winner: int | None, scores: Sequence[int], reason: str,
                      forfeit: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"type": "match_end", "winner": winner, "scores": list(scores), "reason": reason}
    if forfeit is not None:
        msg["forfeit"] = forfeit
    return msg


def _shown(line: str, limit: int = 120) -> str:
    return repr(line if len(line) <= limit else line[:limit] + "...")


def _object(line: str, what: str) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as e:
        raise BotError("malformed", f"{what}: not JSON ({e.msg}): {_shown(line)}") from None
    if not isinstance(data, dict):
        raise BotError("malformed", f"{what}: expected a JSON object, got {_shown(line)}")
    return data


def read_hello(line: str) -> dict[str, str]:
    """The bot's answer to hello: ``name`` and ``author`` (both optional strings).

    >>> read_hello('{"name": "Tanuki", "author": "Aiko"}')
    {'name': 'Tanuki', 'author': 'Aiko'}
    """
    data = _object(line, "answer to hello")
    version = data.get("version", VERSION)
    if version != VERSION:
        raise BotError("protocol", f"the bot speaks protocol version {version!r}; this arena speaks {VERSION}")
    out = {}
    for key in ("name", "author"):
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise BotError("malformed", f"answer to hello: {key!r} must be a string, not {value!r}")
        if value:
            out[key] = value
    return out


def read_action(line: str, legal: Sequence[int]) -> int:
    """The action of a ``choose`` answer: ``{"action": ID}`` or ``{"action": "NOTATION"}``; it must be legal."""
    data = _object(line, "answer to choose")
    if "action" not in data:
        raise BotError("malformed", f"answer to choose: no 'action' key in {_shown(line)}")
    value = data["action"]
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise BotError("malformed", f"answer to choose: 'action' must be an action id or its notation, "
                                    f"not {value!r}")
    if isinstance(value, str):
        try:
            action = parse_action(value)
        except ActionParseError as e:
            raise BotError("illegal", str(e)) from None
    else:
        action = value
    if action not in legal:
        try:
            name = f" ({action_name(action)!r})"
        except ValueError:
            name = " (no such action)"
        shown = ", ".join(f"{a} ({action_name(a)})" for a in legal)
        raise BotError("illegal", f"illegal action {value!r}{name if isinstance(value, int) else ''}; "
                                  f"legal: {shown}")
    return action


# -- the process -----------------------------------------------------------------------------------

class BotProcess:
    """One running bot: start it, talk to it with deadlines, and always clean it up.

    ``stderr_path`` receives the bot's stderr (None: an unnamed temporary file). The program runs in a
    session of its own, so :meth:`close` can kill it together with any children it started.
    """

    def __init__(self, command: str, *, stderr_path: str | os.PathLike[str] | None = None) -> None:
        self.command = command
        self.argv = split_command(command)
        self.stderr_path = Path(stderr_path) if stderr_path is not None else None
        self._stderr: IO[bytes] | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self._selector: selectors.BaseSelector | None = None

    # -- life --------------------------------------------------------------------------------------

    def start(self) -> None:
        if self.stderr_path is not None:
            self.stderr_path.parent.mkdir(parents=True, exist_ok=True)
            self._stderr = open(self.stderr_path, "w+b")  # noqa: SIM115 - open until close()
        else:
            import tempfile
            self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - open until close()
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self._stderr, bufsize=0, env=env, start_new_session=True)
        except OSError as e:
            raise BotError("crash", f"could not start {self.command!r}: {e.strerror or e}") from None
        assert self.proc.stdin is not None and self.proc.stdout is not None
        os.set_blocking(self.proc.stdin.fileno(), False)
        os.set_blocking(self.proc.stdout.fileno(), False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)

    def close(self, *, polite: bool = True) -> None:
        """Say quit (when ``polite``), give the bot a moment to exit, then kill what is left and reap it."""
        proc = self.proc
        if proc is None:
            return
        try:
            if polite and proc.poll() is None:
                try:
                    self.send({"type": "quit"}, time.monotonic() + QUIT_GRACE_SECONDS)
                except BotError:
                    pass
                try:
                    proc.stdin.close()  # type: ignore[union-attr]
                except OSError:
                    pass
                try:
                    proc.wait(QUIT_GRACE_SECONDS)
                except subprocess.TimeoutExpired:
                    pass
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    proc.kill()
                proc.wait()
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
                self._stderr.close()
                self._stderr = None
                if self.stderr_path is not None and self.stderr_path.exists() and \
                        self.stderr_path.stat().st_size == 0:
                    self.stderr_path.unlink()  # nothing was logged
            self.proc = None

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
                        raise BotError("timeout", f"did not read its input within the time limit "
                                                  f"(sending {message['type']})")
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
        while True:
            while b"\n" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\n", 1)
                if raw.strip():
                    try:
                        return raw.decode("utf-8")
                    except UnicodeDecodeError:
                        raise BotError("malformed", f"{what}: not UTF-8: {raw[:80]!r}") from None
            if len(self._buffer) > MAX_LINE_BYTES:
                raise BotError("malformed", f"{what}: a line longer than {MAX_LINE_BYTES} bytes")
            left = deadline - time.monotonic()
            if left <= 0:
                raise BotError("timeout", f"no {what} within the time limit")
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
        try:
            code = self.proc.wait(QUIT_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
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
        """The end of what the bot wrote to stderr so far."""
        f = self._stderr
        if f is None:
            return ""
        try:
            f.flush()
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - limit))
            text = f.read().decode("utf-8", "replace")
            f.seek(0, os.SEEK_END)
        except (OSError, ValueError):
            return ""
        return ("..." if size > limit else "") + text.strip()

    # -- the conversation ----------------------------------------------------------------------------

    def hello(self, seat: int, rules: RuleSet, time_limit: float, *, game: int, bot_seed: int) -> dict[str, str]:
        deadline = time.monotonic() + max(time_limit, STARTUP_SECONDS)
        self.send(hello_message(seat, rules, time_limit, game=game, bot_seed=bot_seed), deadline)
        return read_hello(self.read_line(deadline, "answer to hello"))

    def choose(self, obs: Observation, decision: int, time_limit: float) -> int:
        self.check_quiet()
        deadline = time.monotonic() + time_limit
        self.send(choose_message(obs, decision, time_limit), deadline)
        try:
            line = self.read_line(deadline, "answer to choose")
        except BotError as e:
            if e.kind == "timeout":
                raise BotError("timeout", f"no answer within the time limit of {time_limit:g} s "
                                          f"(decision {decision})") from None
            raise
        return read_action(line, obs.legal_actions)

    def notify(self, message: dict[str, Any], time_limit: float) -> None:
        self.send(message, time.monotonic() + time_limit)
