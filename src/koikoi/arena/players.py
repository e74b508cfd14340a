"""The arena's players: a built-in one in the arena's process, a bot program in its own, both behind one
interface whose every failure is the player's forfeit, never the arena's; and the ``--players`` and
``--player-set`` spellings that name them."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..botproto import BotError, BotProcess, read_action
from ..lineup import POLICY_PREFIX, ArenaError, make_builtin
from ..match import Match
from ..observation import Observation
from ..playerspec import SpecError, parse_assignment, parse_spec, with_options
from ..rules import RuleSet


def split_players(text: str) -> tuple[str, str]:
    """Read ``--players A,B``. A ``cmd:`` command may hold commas as long as the split is unambiguous.

    >>> split_players("greedy,random")
    ('greedy', 'random')
    >>> split_players("cmd:python3 bot.py --tags a,b,hard")
    ('cmd:python3 bot.py --tags a,b', 'hard')
    >>> split_players("policy:runs/ppo.npz,easy")
    ('policy:runs/ppo.npz', 'easy')
    >>> split_players("hard[time_limit=none;playouts=11000],cmd:./bot --opt=a,b")
    ('hard[time_limit=none;playouts=11000]', 'cmd:./bot --opt=a,b')
    """

    def plausible(spec: str) -> bool:
        for prefix in ("cmd:", POLICY_PREFIX):
            if spec.startswith(prefix):
                return len(spec) > len(prefix)
        return named(spec)

    def named(spec: str) -> bool:  # a built-in name, with its options or not
        try:
            return not parse_spec(spec).is_bot
        except SpecError:
            return False

    cuts = [
        i for i, ch in enumerate(text) if ch == "," and plausible(text[:i].strip()) and plausible(text[i + 1 :].strip())
    ]
    if not cuts:
        raise ArenaError(
            f"--players expects two players as A,B (built-in names, NAME[OPTION=VALUE;...], cmd:COMMAND "
            f"or policy:FILE), not {text!r}"
        )
    if len(cuts) > 1:
        # A plain name on the right is the likelier reading than a command split inside its arguments.
        by_name = [i for i in cuts if named(text[i + 1 :].strip())]
        cmd = [i for i in cuts if text[i + 1 :].strip().startswith("cmd:")]
        pick = cmd if len(cmd) == 1 else by_name if len(by_name) == 1 else []
        if len(pick) != 1:
            raise ArenaError(
                f"--players {text!r} can be split at more than one comma; avoid commas in bot "
                "commands (wrap the bot in a script)"
            )
        cuts = pick
    i = cuts[0]
    return text[:i].strip(), text[i + 1 :].strip()


def apply_player_settings(players: Sequence[str], settings: Sequence[str]) -> list[str]:
    """``players`` (A, B) with ``--player-set`` settings (``A.time_limit=none``) written into their specs.

    >>> apply_player_settings(["hard", "easy"], ["A.time_limit=none", "A.playouts=11000"])
    ['hard[time_limit=none;playouts=11000]', 'easy']
    """
    out = list(players)
    by_label: dict[str, dict[str, Any]] = {}
    try:
        for text in settings:
            label, option, value = parse_assignment(text, "AB")
            by_label.setdefault(label, {})[option] = value
        for label, options in by_label.items():
            i = "AB".index(label)
            out[i] = str(with_options(out[i], options))
    except SpecError as e:
        raise ArenaError(f"--player-set {e}") from None
    return out


class Forfeit(Exception):
    def __init__(self, kind: str, reason: str, stderr: str = "") -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.stderr = stderr


ON_TIMEOUT = ("forfeit", "first")


def late_answer_seconds(time_limit: float) -> float:
    """How long a bot over the time limit is waited for under ``on_timeout="first"`` before it counts
    as hung and forfeits: ten times the limit, and at least ten seconds more than the limit.

    >>> late_answer_seconds(5), late_answer_seconds(0.5)
    (50, 10.5)
    """
    return max(10 * time_limit, time_limit + 10)


class BuiltinSeat:
    """A built-in player behind the arena's agent interface: its errors and illegal actions forfeit.

    It runs in the arena's process and cannot be stopped mid-thought, so its time is measured: an
    answer that took longer than the time limit forfeits, or is replaced by the first legal action
    (``on_timeout``), as a bot's would be."""

    def __init__(self, spec: str, seed: int, rules: RuleSet, on_timeout: str = "forfeit") -> None:
        self.spec = spec
        self.agent = make_builtin(spec, seed, rules)
        self.name = spec
        self.on_timeout = on_timeout

    def start(self, seat: int, rules: RuleSet, time_limit: float, game: int, bot_seed: int) -> None:
        pass

    def choose(self, obs: Observation, decision: int, time_limit: float) -> tuple[int, bool]:
        """The action and whether the player overran the time limit (then the first legal action)."""
        start = time.perf_counter()
        try:
            action = self.agent.choose(obs)
        except Exception as e:  # noqa: BLE001 - any failure of a player costs it the match, not the arena
            raise Forfeit("error", f"raised {type(e).__name__}: {e}") from None
        spent = time.perf_counter() - start
        try:
            action = int(action)
        except (TypeError, ValueError):
            raise Forfeit("illegal", f"returned {action!r}, not an action") from None
        if action not in obs.legal_actions:
            raise Forfeit("illegal", f"returned the illegal action {action!r}")
        if spent > time_limit:
            if self.on_timeout == "first":
                return obs.legal_actions[0], True
            raise Forfeit(
                "timeout", f"took {spent:.3f} s, over the time limit of {time_limit:g} s (decision {decision})"
            )
        return action, False

    def notify(self, message: dict[str, Any], time_limit: float) -> None:
        pass

    def close(self, polite: bool = True) -> None:
        pass


class BotSeat:
    """An external program speaking the bot protocol. Whatever it sends, the arena does not fail: a
    protocol error, or any error the arena meets handling the bot's answer, is the bot's forfeit.

    With ``on_timeout="first"`` a bot that does not answer in time has the first legal action played
    for it, as a built-in player that overran would (neither can be stopped mid-thought): the arena
    waits for its late answer (up to :func:`late_answer_seconds`), checks it and throws it away, so the
    bot and the arena stay in step. A bot still silent then is hung, and forfeits."""

    def __init__(self, spec: str, stderr_path: Path | None, on_timeout: str = "forfeit") -> None:
        self.spec = spec
        self.process = BotProcess(spec[4:], stderr_path=stderr_path)
        self.name = spec
        self.on_timeout = on_timeout
        # The match played (set by play_game): a version-2 bot is sent the positions of the cards, which
        # are taken from the match's deal (koikoi.observation.positions).
        self.match: Match | None = None

    def _forfeit(self, e: BotError) -> Forfeit:
        return Forfeit(e.kind, str(e), self.process.stderr_tail())

    def _failed(self, e: Exception) -> Forfeit:
        return Forfeit(
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

    def choose(self, obs: Observation, decision: int, time_limit: float) -> tuple[int, bool]:
        """The action and whether the bot overran the time limit (then the first legal action)."""
        start = time.monotonic()
        try:
            try:
                return self.process.choose(obs, decision, time_limit, match=self.match), False
            except BotError as e:
                if e.kind != "timeout" or self.on_timeout != "first":
                    raise
                deadline = start + late_answer_seconds(time_limit)
                late = self.process.read_line(deadline, f"answer to choose (decision {decision}, over the time limit)")
                read_action(late, obs.legal_actions)  # a late answer must still be an answer
                return obs.legal_actions[0], True
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
