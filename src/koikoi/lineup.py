"""A player spec made into a player, for the arena and the learning environments.

A spec (:mod:`koikoi.playerspec`) is a built-in computer player by name with its options
(``hard[playouts=800;time_limit=none]``), ``policy:FILE``, a trained policy (:mod:`koikoi.policy`; it
needs the ``rl`` extra, imported only for such a player), or ``cmd:COMMAND``, an external program that
speaks the bot protocol (``docs/bot-protocol.md``), which is only checked here: running one is the
arena's job (:mod:`koikoi.arena`) or the environment's (:mod:`koikoi.env`). Options are checked against
the player's constructor before any game: an unknown player, an option it does not take or a value it
refuses is an :class:`ArenaError` that says which.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .ai.registry import arena_names, find
from .botproto import split_command
from .playerspec import PlayerSpec, SpecError, format_value, parse_spec
from .rules import RuleSet

if TYPE_CHECKING:
    from .policy import PolicyAgent

__all__ = [
    "ArenaError",
    "DEFAULT_TIME_LIMIT",
    "POLICY_PREFIX",
    "builtin_names",
    "canonical_spec",
    "check_player",
    "load_policy_agent",
    "make_builtin",
    "spec_options",
]

DEFAULT_TIME_LIMIT = 5.0


class ArenaError(ValueError):
    """A bad arena setting: an unknown player, a bot command that cannot run, a bad number."""


def builtin_names() -> list[str]:
    """The names of the built-in computer players the arena takes (:mod:`koikoi.ai.registry`), aliases last."""
    return arena_names()


POLICY_PREFIX = "policy:"

_policies: dict[tuple[str, int, int], Any] = {}  # (path, mtime, size) -> loaded koikoi.policy.Policy


def load_policy_agent(path: str, seed: int | None = None) -> PolicyAgent:
    """A trained policy file (``policy:FILE``) as a player. NumPy is imported only here, so the arena
    works without it; each file is read once per process (a worker plays many games with it)."""
    try:
        from . import policy
    except ImportError as e:
        raise ArenaError(f"policy:{path} cannot be played here: {e}") from None  # says which package is missing
    try:
        st = os.stat(path)
        key = (os.path.abspath(path), st.st_mtime_ns, st.st_size)
    except OSError:
        key = None  # load_policy names the problem
    try:
        loaded = _policies.get(key) if key else None
        if loaded is None:
            loaded = policy.load_policy(path)
            if key:
                _policies[key] = loaded
    except policy.PolicyError as e:
        raise ArenaError(str(e)) from None
    return policy.PolicyAgent(loaded, seed, name=POLICY_PREFIX + path)


def make_builtin(name: str, seed: int | None, rules: RuleSet) -> Any:
    """A built-in computer player by spec: a name with its options, ``hard[playouts=800;time_limit=none]``
    (``koikoi.playerspec``), as the arena names it in :mod:`koikoi.ai.registry` (aliases included);
    ``policy:FILE`` is a trained policy (``koikoi.policy``). An unknown player, an option the player
    does not take or a value it refuses raises :class:`ArenaError` saying which."""
    if name.startswith(POLICY_PREFIX):
        return load_policy_agent(name[len(POLICY_PREFIX) :], seed)
    try:
        spec = parse_spec(name)
    except SpecError as e:
        raise ArenaError(str(e)) from None
    if spec.is_bot:
        raise ArenaError(f"{name!r} is a bot, not a built-in player")
    factory, params = _builtin_factory(spec.name, rules)
    options = {key: _option_value(spec.name, key, value, params) for key, value in spec.options.items()}
    try:
        return factory(seed, **options)
    except (ValueError, TypeError) as e:  # the player's own check of a value: playouts must be at least 1
        raise ArenaError(f"player {str(spec)!r}: {e}") from None


_factories: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {}


def _builtin_factory(name: str, rules: RuleSet) -> tuple[Callable[..., Any], dict[str, Any]]:
    """How to make the built-in player ``name`` (``factory(seed, **options)``) and the options it takes
    (name -> the type its constructor declares), read from its constructor once per process."""
    import inspect
    import typing

    known = _factories.get(name)  # those that need no rule set only: the others are made for theirs
    if known is not None:
        return known
    player = find(name, "arena")
    if player is None:
        raise ArenaError(
            f"unknown player {name!r}: give a built-in player ({', '.join(builtin_names())}), "
            "cmd:COMMAND for a bot program or policy:FILE for a trained policy"
        )
    if player.takes_rules:

        def made_for_rules(seed: int | None, **options: Any) -> Any:
            return player.make(seed, rules)

        return made_for_rules, {}  # a player made for the rule set takes no options
    factory: Callable[..., Any] = player.make
    init = player.cls.__init__
    try:
        hints = typing.get_type_hints(init)
    except Exception:  # noqa: BLE001 - an annotation this Python cannot read: take any value
        hints = {}
    params = {
        p.name: hints.get(p.name, Any)
        for p in inspect.signature(init).parameters.values()
        if p.name not in ("self", "seed") and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    _factories[name] = (factory, params)
    return factory, params


def _option_value(player: str, key: str, value: Any, params: dict[str, Any]) -> Any:
    """``value`` as the type the option ``key`` of ``player`` declares, or an ArenaError saying why not."""
    import types
    import typing

    if key not in params:
        takes = f"its options are {', '.join(params)}" if params else "it takes no options"
        raise ArenaError(f"{player} has no option {key!r}: {takes}")
    hint = params[key]
    if hint is Any:
        return value
    union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    allowed = set(typing.get_args(hint)) if union else {hint}
    shown = format_value(value)
    if value is None:
        if type(None) in allowed:
            return None
        raise ArenaError(f"{player}.{key} cannot be none")
    if isinstance(value, bool):
        if bool in allowed:
            return value
    elif isinstance(value, int):
        if int in allowed:
            return value
        if float in allowed:
            return float(value)
    elif isinstance(value, float):
        if float in allowed:
            return value
        if int in allowed:
            raise ArenaError(f"{player}.{key} is a whole number, not {shown}")
    elif str in allowed:
        return value
    wants = " or ".join(
        {bool: "true or false", int: "a whole number", float: "a number", str: "a word", type(None): "none"}.get(
            t, getattr(t, "__name__", str(t))
        )
        for t in sorted(allowed, key=lambda t: (t is type(None), str(t)))
    )
    raise ArenaError(f"{player}.{key} is {wants}, not {shown}")


def check_player(spec: str, rules: RuleSet) -> None:
    """Raise :class:`ArenaError` unless ``spec`` names a player that can play."""
    if spec.startswith("cmd:"):
        try:
            argv = split_command(spec[4:])
        except ValueError as e:
            raise ArenaError(str(e)) from None
        program = argv[0]
        if os.sep in program:
            if not os.access(program, os.X_OK) or os.path.isdir(program):
                raise ArenaError(f"bot program {program!r} is not an executable file")
        elif shutil.which(program) is None:
            raise ArenaError(f"bot program {program!r} is not on the PATH")
        return
    make_builtin(spec, 0, rules)


def spec_options(spec: str) -> dict[str, Any]:
    """The options written in a player spec (none for a bot or a policy)."""
    return {} if spec.startswith(("cmd:", POLICY_PREFIX)) else dict(parse_spec(spec).options)


def canonical_spec(spec: str, rules: RuleSet) -> str:
    """A player spec as the arena writes it, each option as the type the player takes
    (``hard[ noise = 1 ]`` -> ``hard[noise=1.0]``); ArenaError for an unknown player or option."""
    if spec.startswith(("cmd:", POLICY_PREFIX)):
        return spec
    try:
        parsed = parse_spec(spec)
    except SpecError as e:
        raise ArenaError(str(e)) from None
    if not parsed.options:
        return str(parsed)
    _, params = _builtin_factory(parsed.name, rules)
    options = {key: _option_value(parsed.name, key, value, params) for key, value in parsed.options.items()}
    return str(PlayerSpec(parsed.name, options))
