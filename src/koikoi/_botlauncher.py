"""The bot launcher: runs one bot program and, whatever happens, leaves none of its processes behind.

Linux only; :class:`koikoi.botproto.BotProcess` runs it as a script (``python -I -S _botlauncher.py
ARENA_PID STATUS_FD -- PROGRAM ARGS...``), in a session of its own, with the bot's stdin, stdout and
stderr. It imports only the standard library and nothing of ``koikoi``, so it starts in milliseconds.

1. It asks the kernel for ``SIGTERM`` when the arena (its parent) dies (``PR_SET_PDEATHSIG``) and
   exits at once if the arena is already gone.
2. It becomes a *child subreaper* (``PR_SET_CHILD_SUBREAPER``): every process the bot starts, even
   one that called ``setsid`` or double-forked to escape, is re-parented to the launcher, not to init,
   when its parent dies. The launcher's descendants are therefore exactly the bot's processes.
3. It starts the bot (``posix_spawnp``: the bot inherits stdin, stdout and stderr, the protocol pipes)
   and reports on ``STATUS_FD`` whether the program could be started, then closes its own copies of
   stdin and stdout, so that the arena sees the end of the bot's output when the bot is gone.
4. It waits for the bot. When the bot exits, or the launcher receives ``SIGTERM`` (the arena closing
   the bot, or the arena's death), ``SIGHUP`` or ``SIGINT``, it kills every descendant with ``SIGKILL``
   and reaps it, looking them up again and again (``/proc/PID/task/TID/children``, or the parent
   pids of ``/proc/*/stat`` where the kernel lacks that file) until it has no child left. Then it
   exits with the bot's exit status (or the signal that killed the bot).
"""

import os
import signal
import sys
import time
from types import FrameType

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
CLEANUP_SECONDS = 2.0  # a process that will not die (another user's, after a set-uid exec) is left after this
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


class _Stop(Exception):
    pass


_stopping = False


def _stop(signum: int, frame: FrameType | None) -> None:
    global _stopping
    if not _stopping:  # once: a second signal (SIGTERM from the arena, then its death) changes nothing
        _stopping = True
        raise _Stop(signum)


def _prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        result: int = libc.prctl(option, ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))
        return result == 0
    except Exception:  # noqa: BLE001 - no prctl: the process group is still killed by the arena
        return False


def _children_by_task(pid: int) -> list[int] | None:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out: list[int] = []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                out += [int(c) for c in f.read().split()]
        except FileNotFoundError:
            if tid == str(pid) and os.path.isdir(f"/proc/{pid}/task/{tid}"):
                return None  # the kernel has no children files (CONFIG_PROC_CHILDREN)
        except (OSError, ValueError):
            pass
    return out


_HAVE_CHILDREN_FILES = [True]


def _parent_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    return children


def descendants(root: int) -> list[int]:
    """Every live process below ``root``, parents before their children."""
    if _HAVE_CHILDREN_FILES[0]:
        out: list[int] = []
        todo = [root]
        while todo:
            kids = _children_by_task(todo.pop())
            if kids is None:
                _HAVE_CHILDREN_FILES[0] = False
                break
            out += kids
            todo += kids
        else:
            return out
    children = _parent_map()
    out = []
    todo = [root]
    while todo:
        kids = children.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def kill_all(me: int, statuses: dict[int, int]) -> None:
    """SIGKILL and reap every descendant of ``me`` (re-parented orphans included) until none is left."""
    deadline = time.monotonic() + CLEANUP_SECONDS
    while True:
        for pid in descendants(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return  # no child left: as a subreaper, no descendant either
            if pid == 0:
                break
            statuses[pid] = status
        if time.monotonic() > deadline:
            return
        time.sleep(0.002)


def _exit_like(status: int | None) -> None:
    if status is None:
        os._exit(128 + signal.SIGTERM)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            signal.signal(sig, signal.SIG_DFL)
        except (ValueError, OSError, ImportError):
            pass
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def main(argv: list[str]) -> None:
    global _stopping
    for s in _STOP_SIGNALS:
        signal.signal(s, _stop)
    if len(argv) < 5 or argv[3] != "--":
        os.write(2, b"usage: _botlauncher.py ARENA_PID STATUS_FD -- PROGRAM [ARGS...]\n")
        os._exit(2)
    arena, status_fd, command = int(argv[1]), int(argv[2]), argv[4:]
    me = os.getpid()
    statuses: dict[int, int] = {}
    bot = None
    status = None
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != arena:
            os._exit(128 + signal.SIGTERM)  # the arena died before the signal was asked for
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        os.set_inheritable(status_fd, False)
        try:
            # Python ignores SIGPIPE and SIGXFSZ; the bot starts with the default handling of both.
            bot = os.posix_spawnp(
                command[0], command, os.environ, setsigdef=(signal.SIGPIPE, signal.SIGXFSZ, *_STOP_SIGNALS)
            )
        except OSError as e:
            os.write(status_fd, (e.strerror or str(e)).encode("utf-8", "replace"))
            os._exit(127)
        os.close(status_fd)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)  # stdin and stdout are the bot's alone: the arena sees when they close
        os.dup2(null, 1)
        os.close(null)
        while True:
            pid, st = os.waitpid(-1, 0)
            if pid == bot:
                status = st
                break
        _stopping = True  # from here on, a stop signal is ignored: the cleanup below runs anyway
    except _Stop:
        pass
    signal.pthread_sigmask(signal.SIG_BLOCK, set(_STOP_SIGNALS))
    kill_all(me, statuses)
    if status is None and bot is not None and bot in statuses:
        status = statuses[bot]
    _exit_like(status)


if __name__ == "__main__":
    main(sys.argv)
