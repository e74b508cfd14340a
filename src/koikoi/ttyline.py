"""A line read from the terminal while the prompt before it changes: the terminal game's clock.

``input()`` cannot redraw anything while it waits, so a clocked ``koikoi play`` reads keys itself: the
terminal goes into cbreak mode (keys arrive one by one, unechoed; Ctrl-C still interrupts) for the time
of one line, :func:`select.select` wakes it a few times a second, and each time the shown line has
changed (the clock ticked, a key was typed) the prompt line alone is drawn again: a carriage return,
the status, the prompt, what was typed so far, erase to the end of the line. The line never wraps (the
prompt is shortened, and only the end of a long input is shown), so the carriage return always finds
its start. Enter, Backspace, Ctrl-U (erase the line), Ctrl-W (erase a word) and Ctrl-D (on an empty
line: end of input) work as in a shell's line; other control keys and escape sequences (the arrows)
are ignored. POSIX terminals only: :data:`AVAILABLE` says whether this one has them.
"""

from __future__ import annotations

import codecs
import os
import select
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.text import Text

if TYPE_CHECKING:  # for the annotation only: the console is the caller's
    from rich.console import Console

try:
    import termios
    import tty
except ImportError:  # pragma: no cover - Windows has no termios
    termios = None  # type: ignore[assignment]
    tty = None  # type: ignore[assignment]

__all__ = ["AVAILABLE", "TimeUp", "LineReader"]

AVAILABLE = termios is not None
TICK = 0.2  # seconds between looks at the clock: a one-second display is never more than this late
MAX_LINE = 256  # characters kept of one line: every answer the game takes is far shorter
MIN_INPUT = 12  # columns kept for the typed text when the prompt is too wide for the terminal


class TimeUp(Exception):
    """The deadline passed before the line was finished."""


class LineReader:
    """Reads lines from the terminal ``fd`` (standard input) and draws on ``console`` (standard output)."""

    def __init__(self, console: Console, fd: int | None = None, *, now: Callable[[], float] = time.monotonic) -> None:
        self.console = console
        self.fd = sys.stdin.fileno() if fd is None else fd
        self.now = now

    def read(self, prompt: str, *, deadline: float | None = None, status: Callable[[float], Text] | None = None) -> str:
        """The line typed after ``prompt`` (Rich markup), without its newline; ``status(now)`` is drawn
        before the prompt and drawn again whenever it changes. Raises :class:`TimeUp` at ``deadline``
        (a :func:`time.monotonic` time) and EOFError at the end of input."""
        assert termios is not None and tty is not None
        head = Text.from_markup(prompt)
        typed: list[str] = []
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        escape = ""  # an escape sequence being skipped, so far
        shown = None
        old = termios.tcgetattr(self.fd)
        tty.setcbreak(self.fd, termios.TCSANOW)
        try:
            while True:
                now = self.now()
                line = self.render(head, status(now) if status is not None else None, "".join(typed))
                if line != shown:
                    self.write("\r" + line + "\x1b[K")
                    shown = line
                if deadline is not None and now >= deadline:
                    self.write("\n")
                    raise TimeUp()
                wait: float | None = TICK if deadline is None else max(0.0, min(TICK, deadline - now))
                if status is None and deadline is None:
                    wait = None  # nothing changes by itself: sleep until a key comes
                ready, _, _ = select.select([self.fd], [], [], wait)
                if not ready:
                    continue
                data = os.read(self.fd, 1024)
                if not data:
                    self.write("\n")
                    raise EOFError
                for ch in decoder.decode(data):
                    if escape:
                        escape = _skip_escape(escape + ch)
                        continue
                    if ch in ("\r", "\n"):
                        self.write("\n")
                        return "".join(typed)
                    if ch == "\x1b":
                        escape = ch
                    elif ch in ("\x7f", "\x08"):
                        if typed:
                            typed.pop()
                    elif ch == "\x15":  # Ctrl-U
                        typed.clear()
                    elif ch == "\x17":  # Ctrl-W
                        while typed and typed[-1] == " ":
                            typed.pop()
                        while typed and typed[-1] != " ":
                            typed.pop()
                    elif ch == "\x04":  # Ctrl-D
                        if not typed:
                            self.write("\n")
                            raise EOFError
                    elif ch.isprintable() and len(typed) < MAX_LINE:
                        typed.append(ch)
        finally:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, old)

    def render(self, prompt: Text, status: Text | None, typed: str) -> str:
        """The prompt line as the terminal gets it: one line narrower than the terminal, the end of the
        typed text in view."""
        width = max(MIN_INPUT + 2, self.console.size.width - 1)  # the last column would wrap the line
        head = Text.assemble(status, prompt) if status is not None else prompt.copy()
        if head.cell_len > width - MIN_INPUT:
            head.truncate(width - MIN_INPUT, overflow="ellipsis")
        room = width - head.cell_len - 1  # a column for the cursor
        tail: list[str] = []
        used = 0
        for ch in reversed(typed):
            used += cell_len(ch)
            if used > room:
                break
            tail.append(ch)
        with self.console.capture() as capture:
            self.console.print(head, end="", soft_wrap=True, highlight=False)
        return capture.get() + "".join(reversed(tail))

    def write(self, text: str) -> None:
        self.console.file.write(text)
        self.console.file.flush()


def _skip_escape(seq: str) -> str:
    """What is left to skip of the escape sequence begun as ``seq``: "" once it is complete (ESC and one
    key; ESC [ ... and a final byte, as the arrow and function keys send; ESC O and one key)."""
    if len(seq) == 2:
        return seq if seq[1] in "[O" else ""
    if seq[1] == "O":
        return ""
    final = "@" <= seq[-1] <= "~"
    return "" if final or len(seq) > 32 else seq
