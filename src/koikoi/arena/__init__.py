"""The arena: many matches between two players, seats alternating, with statistics.

Player A sits at seat 0 in even-numbered games (counting from 0) and B in odd ones. Every match and
every computer player gets its own seed, drawn in order from the arena seed, so the results of a seed
are the same whether the games run in one process or in many. A player is a built-in computer
player by name (``koikoi.ai.registry``'s arena players), ``cmd:COMMAND``, an external program
that speaks the bot protocol (``docs/bot-protocol.md``), or ``policy:FILE``, a trained policy
(``koikoi.policy``; it needs the ``rl`` extra, imported only for such a player). Each player sees only
observations of its own seat. A built-in player takes options in its spec,
``hard[playouts=800;time_limit=none]`` (``koikoi.playerspec``), checked before any game. A player that
crashes, answers garbage or plays an illegal action loses that match (a forfeit, with its reason), and
so does one over the time limit, which holds for every player, built-in ones too (or the first legal
action is played for it: ``on_timeout="first"``); the arena goes on: nothing a bot sends stops the
arena. With ``jsonl=FILE`` each finished match is written to FILE as it ends, and ``resume=True`` goes
on from such a file. A bot and every process it started are killed at the end of its match, however the
match ends, and when the arena itself dies.

>>> from koikoi.rules import preset
>>> report = run_arena(preset("cardavia"), games=4, seed=1, players=["random", "random"], jobs=1)
>>> a, b = report.players
>>> a.wins + a.draws + a.losses, a.wins == b.losses, a.draws == b.draws
(4, True, True)
"""

from __future__ import annotations

from ..lineup import DEFAULT_TIME_LIMIT, ArenaError, canonical_spec
from ..lineup import POLICY_PREFIX as POLICY_PREFIX
from ..lineup import builtin_names as builtin_names
from ..lineup import check_player as check_player
from ..lineup import load_policy_agent as load_policy_agent
from ..lineup import make_builtin as make_builtin
from ..lineup import spec_options as spec_options
from .game import GameJob as GameJob
from .game import GameResult, play_game
from .players import ON_TIMEOUT, apply_player_settings, late_answer_seconds, split_players
from .run import JSONL_FORMAT as JSONL_FORMAT
from .run import JSONL_VERSION as JSONL_VERSION
from .run import RunFile as RunFile
from .run import game_jobs as game_jobs
from .run import read_run_file, run_arena, summarize_files
from .stats import ArenaReport, Difference, PlayerStats, points_difference, wilson_interval
from .stats import summarize as summarize

__all__ = [
    "ArenaError",
    "GameResult",
    "PlayerStats",
    "ArenaReport",
    "run_arena",
    "play_game",
    "split_players",
    "wilson_interval",
    "builtin_names",
    "DEFAULT_TIME_LIMIT",
    "ON_TIMEOUT",
    "Difference",
    "points_difference",
    "apply_player_settings",
    "canonical_spec",
    "late_answer_seconds",
    "read_run_file",
    "summarize_files",
]
