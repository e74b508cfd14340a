"""Game records: a whole match (or a match in progress) as versioned JSON, and its replay.

A record keeps the rule set, the players, the chance outcomes (the dealer draw and every deal, redeals
first, plus the seed when there is one) and every action in its notation, with each hand's result and
the match's outcome. :func:`replay` rebuilds the match and checks every recorded result against the
engine; a record saved mid-game replays to a match ready to continue. The format is specified in
``docs/records.md``.

>>> from koikoi.match import Match
>>> from koikoi.rules import preset
>>> m = Match(preset("cardavia"), seed=7)
>>> while not m.is_over():
...     m.apply_action(m.legal_actions()[0])
>>> rec = GameRecord.from_match(m, players=["Aiko", "Ben"])
>>> again = GameRecord.from_json(rec.to_json())
>>> again.hands[0].actions[:2]
['play cherry-plain-1', 'play pine-crane']
>>> replay(again).outcome == m.outcome
True
"""

from __future__ import annotations

import copy
import difflib
import json
import math
import os
import random
import secrets
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, overload

from . import safejson
from .actions import ActionParseError, action_name, parse_action
from .cards import CARD_NAMES, NUM_CARDS, UnknownCardError, card
from .hand import Hand, HandResult, Phase
from .match import HandRecord, Match, SeededChance
from .observation import Positions, hand_positions
from .rules import RULES_VERSION as _RULES_VERSION
from .rules import RULES_VERSIONS, RuleError, RuleSet
from .safejson import NestingError

__all__ = [
    "FORMAT",
    "VERSION",
    "RULES_VERSION",
    "RecordError",
    "GameRecord",
    "RecordedHand",
    "ReplayStep",
    "write_record",
    "read_record",
    "replay",
    "replay_steps",
    "MAX_RECORD_HANDS",
    "MAX_RECORD_HAND_ACTIONS",
    "MAX_RECORD_ACTIONS",
    "MAX_RECORD_DEALS",
    "MAX_RECORD_DEALER_DRAWS",
    "MAX_RECORD_CHARS",
    "MAX_RECORD_DEPTH",
]

FORMAT = "koikoi-record"
VERSION = 1
# The version of the engine's rules a record was played under, written as metadata["rules_version"]
# (docs/records.md, "Rules versions"); absent means 1, the version before it was written. A record
# replays under the version it names, so an older record replays as it was played.
RULES_VERSION = _RULES_VERSION

# What a reader accepts, sized for any real match under any rule set (docs/records.md, "Limits"):
# a match plays at most MAX_HANDS (100) hands, or runs to a target score; a hand holds at most 50
# actions (16 plays, 16 choices of a drawn card's capture, 16 decisions, 2 declarations).
MAX_RECORD_HANDS = 1000
MAX_RECORD_HAND_ACTIONS = 64  # actions in one hand
MAX_RECORD_ACTIONS = 50_000  # actions in the whole record (1,000 hands of 50)
MAX_RECORD_DEALS = 100  # deals of one hand: a redeal is rare, a hundred in a row never happens
MAX_RECORD_DEALER_DRAWS = 100  # cards drawn to choose the first dealer
MAX_RECORD_CHARS = 8 * 1024 * 1024  # the JSON text (a 1,000-hand record is about 1.7 MB)
MAX_RECORD_DEPTH = 16  # JSON nesting (the record itself nests 5 deep; metadata may add a little)

_TOP_KEYS = (
    "format",
    "version",
    "created",
    "rules",
    "players",
    "seed",
    "first_dealer",
    "dealer_draws",
    "hands",
    "outcome",
    "metadata",
)
_REQUIRED_TOP = ("format", "version", "rules", "players", "first_dealer", "dealer_draws", "hands")
_HAND_KEYS = ("number", "dealer", "month", "deals", "actions", "result")
_RESULT_KEYS = ("reason", "winner", "points", "deltas", "yaku", "base", "multiplier")
_OUTCOME_KEYS = ("winner", "scores", "reason")
_PLAYER_KEYS = ("name", "kind", "birth_month")


class RecordError(ValueError):
    """A record that is malformed or does not replay. ``where`` is the JSON path of the problem
    (``hands[2].actions[5]``), or the file; the message says what was found and what was expected."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}" if where else problem)
        self.where = where
        self.problem = problem


@dataclass(slots=True)
class RecordedHand:
    """One hand as recorded: cards by their canonical names, actions in their notation.

    ``deals`` are the deck orders dealt for this hand, redeals first (each the 48 card names, top card
    first); ``result`` is :meth:`HandResult.to_dict` of how it ended, or None while it is in progress.
    """

    number: int
    dealer: int
    month: int
    deals: list[list[str]] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    result: dict[str, Any] | None = None


@dataclass(slots=True)
class GameRecord:
    """A match as recorded; see ``docs/records.md`` for every field.

    ``outcome`` is ``{"winner": 0 | 1 | None, "scores": [s0, s1], "reason": ...}`` once the match is over,
    None while it goes on. ``players`` are two dicts with at least ``name``.
    """

    rules: RuleSet
    players: list[dict[str, Any]]
    first_dealer: int
    dealer_draws: list[str]
    hands: list[RecordedHand]
    seed: int | None = None
    outcome: dict[str, Any] | None = None
    created: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    format: str = FORMAT
    version: int = VERSION

    @property
    def finished(self) -> bool:
        """Whether the match had ended when it was recorded."""
        return self.outcome is not None

    @property
    def birth_months(self) -> tuple[int, int] | None:
        a, b = (p.get("birth_month") for p in self.players)
        return (a, b) if isinstance(a, int) and isinstance(b, int) else None

    @property
    def rules_version(self) -> int:
        """The engine's rules version the match was played under (``metadata.rules_version``; 1 when absent)."""
        v = self.metadata.get("rules_version", 1)
        return v if _is_int(v) and v in RULES_VERSIONS else _RULES_VERSION

    # -- from a match ---------------------------------------------------------------------------------

    @classmethod
    def from_match(
        cls,
        match: Match,
        players: Sequence[Mapping[str, Any] | str] | None = None,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> GameRecord:
        """The record of ``match`` as it stands (finished or not).

        ``players`` gives each seat a name (a string) or a dict with ``name`` and optionally ``kind``,
        ``birth_month`` and further keys; by default they are ``player 0`` and ``player 1``.
        """
        if players is None:
            players = ["player 0", "player 1"]
        if len(players) != 2:
            raise RecordError("players", f"a match has 2 players, got {len(players)}")
        seats: list[dict[str, Any]] = []
        for i, p in enumerate(players):
            seat: dict[str, Any] = {"name": p} if isinstance(p, str) else dict(p)
            if match.birth_months is not None:
                known = seat.setdefault("birth_month", match.birth_months[i])
                if known != match.birth_months[i]:
                    raise RecordError(
                        f"players[{i}].birth_month",
                        f"{known!r} differs from the match's birth month {match.birth_months[i]}",
                    )
            seats.append(seat)
        hands = [
            RecordedHand(
                number=h.number,
                dealer=h.dealer,
                month=h.month,
                deals=[[CARD_NAMES[c] for c in deck] for deck in h.decks],
                actions=[action_name(a) for a in h.actions],
                result=None if h.result is None else h.result.to_dict(),
            )
            for h in match.hands
        ]
        o = match.outcome
        outcome = None if o is None else {"winner": o.winner, "scores": list(o.scores), "reason": o.reason}
        from ._version import __version__

        meta: dict[str, Any] = {"engine": f"koikoi {__version__}"}
        meta.update(metadata or {})
        meta["rules_version"] = match.version  # what the match was played under, whatever was passed
        rec = cls(
            rules=match.rules,
            players=seats,
            first_dealer=match.first_dealer,
            dealer_draws=[CARD_NAMES[c] for c in match.dealer_draws],
            hands=hands,
            seed=match.seed,
            outcome=outcome,
            created=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            metadata=meta,
        )
        return rec

    # -- JSON -----------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form, keys in the documented order."""
        players = []
        for p in self.players:
            d = {k: p[k] for k in _PLAYER_KEYS if k in p}
            d.update({k: p[k] for k in sorted(p) if k not in _PLAYER_KEYS})
            players.append(d)
        return {
            "format": self.format,
            "version": self.version,
            "created": self.created,
            "rules": self.rules.to_dict(),
            "players": players,
            "seed": self.seed,
            "first_dealer": self.first_dealer,
            "dealer_draws": list(self.dealer_draws),
            "hands": [
                {
                    "number": h.number,
                    "dealer": h.dealer,
                    "month": h.month,
                    "deals": [list(d) for d in h.deals],
                    "actions": list(h.actions),
                    "result": None if h.result is None else {k: h.result[k] for k in _RESULT_KEYS},
                }
                for h in self.hands
            ],
            "outcome": None if self.outcome is None else {k: self.outcome[k] for k in _OUTCOME_KEYS},
            "metadata": self.metadata,
        }

    def to_json(self) -> str:
        """Pretty JSON with a stable key order: one line per action and per deal, so records diff well."""
        try:
            return _dump(self.to_dict(), 0, ()) + "\n"
        except (TypeError, ValueError) as e:
            raise RecordError("", f"the record cannot be written as JSON: {e}") from None

    @classmethod
    def from_json(cls, text: str) -> GameRecord:
        """Read and check a record: its form, version, rules, card names, deals and action notation.

        Whether the actions are legal and the results right is :func:`replay`'s to check.
        """
        if isinstance(text, (bytes, bytearray)):
            try:
                text = bytes(text).decode("utf-8")
            except UnicodeDecodeError as e:
                raise RecordError("", f"not UTF-8 text (byte {e.start})") from None
        if not isinstance(text, str):
            raise RecordError("", f"a record is JSON text, not {type(text).__name__}")
        if len(text) > MAX_RECORD_CHARS:
            raise RecordError(
                "",
                f"too large: {len(text):,} characters, at most {MAX_RECORD_CHARS:,} are read "
                f"(a record of {MAX_RECORD_HANDS} hands takes about 2 MB)",
            )
        try:
            data = safejson.loads(text, MAX_RECORD_DEPTH)
        except NestingError as e:
            raise RecordError("", f"not a game record: its JSON is {e}") from None
        except json.JSONDecodeError as e:
            raise RecordError(f"line {e.lineno}, column {e.colno}", f"not valid JSON: {e.msg}") from None
        except ValueError as e:  # int() refuses a number of thousands of digits
            problem = "a number of too many digits" if "digits" in str(e) else str(e)
            raise RecordError("", f"not a game record: {problem}") from None
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: Any) -> GameRecord:
        """A record from its decoded JSON; raises :class:`RecordError` at the first problem."""
        return _Reader().record(data)


# -- writing ------------------------------------------------------------------------------------------

_INLINE_KEYS = ("deals", "dealer_draws", "scores", "deltas")


def _dump(value: Any, indent: int, path: tuple[str, ...]) -> str:
    """JSON with two-space indents; arrays of scalars and small objects in arrays on one line, except the
    actions (one per line)."""
    pad = "  " * (indent + 1)
    end = "  " * indent
    if isinstance(value, dict):
        if not value:
            return "{}"
        if path[-1:] == ("[]",) and all(not isinstance(v, dict | list | tuple) for v in value.values()):
            line = "{" + ", ".join(f"{json.dumps(str(k))}: {_scalar(v)}" for k, v in value.items()) + "}"
            if len(line) <= 80:  # a yaku or a player on one line
                return line
        items = [f"{pad}{json.dumps(str(k))}: {_dump(v, indent + 1, path + (str(k),))}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + end + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        scalars = all(not isinstance(v, dict | list | tuple) for v in value)
        if scalars and path[-1:] != ("actions",):
            return "[" + ", ".join(_scalar(v) for v in value) + "]"
        if path[-1:] == ("deals",):
            return "[\n" + ",\n".join(pad + _dump(v, indent + 1, path) for v in value) + "\n" + end + "]"
        return "[\n" + ",\n".join(pad + _dump(v, indent + 1, path + ("[]",)) for v in value) + "\n" + end + "]"
    return _scalar(value)


def _scalar(v: Any) -> str:
    if isinstance(v, float) and not math.isfinite(v):
        raise ValueError(f"{v!r} is not a JSON number")
    return json.dumps(v, ensure_ascii=False, allow_nan=False)


def write_record(record: GameRecord, path: str | os.PathLike[str]) -> None:
    """Write ``record`` to ``path`` atomically: a crash leaves the old file or the new one, never half.

    The text is checked by reading it back first, so an unreadable record is never written.
    """
    text = record.to_json()
    GameRecord.from_json(text)
    p = Path(path)
    directory = p.parent
    # The temporary file sits beside the target (os.replace is atomic only within one file system) and
    # is created with open(), so it gets the usual permissions; an existing record keeps its mode.
    tmp = directory / f".{p.name}.{secrets.token_hex(4)}.tmp"
    try:
        with open(tmp, "x", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if p.exists():
            os.chmod(tmp, stat.S_IMODE(os.stat(p).st_mode))
        os.replace(tmp, p)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise RecordError(str(p), f"cannot write the record: {e.strerror or e}") from None
        raise
    try:  # make the rename itself durable where the platform allows it
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def read_record(path: str | os.PathLike[str]) -> GameRecord:
    """Read a record file; problems raise :class:`RecordError` naming the file and the place in it."""
    p = Path(path)
    try:
        with open(p, "rb") as f:
            raw = f.read(MAX_RECORD_CHARS * 4 + 1)  # UTF-8 takes at most 4 bytes a character
        if len(raw) > MAX_RECORD_CHARS * 4:
            raise RecordError(
                str(p),
                f"too large: over {MAX_RECORD_CHARS * 4:,} bytes, and a record is at most "
                f"{MAX_RECORD_CHARS:,} characters",
            )
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise RecordError(str(p), "no such record file") from None
    except UnicodeDecodeError as e:
        raise RecordError(str(p), f"not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise RecordError(str(p), f"cannot read the record: {e.strerror or e}") from None
    try:
        return GameRecord.from_json(text)
    except RecordError as e:
        raise RecordError(f"{p}: {e.where}" if e.where else str(p), e.problem) from None


# -- reading --------------------------------------------------------------------------------------------


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "a whole number"
    if isinstance(value, float):
        return "a fractional number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class _Reader:
    """Checks decoded JSON field by field; the first problem raises with its path."""

    def fail(self, where: str, problem: str) -> RecordError:
        return RecordError(where, problem)

    def obj(self, value: Any, where: str, allowed: Sequence[str], required: Sequence[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where or "record", f"expected an object, got {_kind(value)} {_shown(value)}")
        for key in value:
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
                hint = f"; did you mean {close[0]!r}?" if close else f" (fields: {', '.join(allowed)})"
                raise self.fail(_join(where, key), f"unknown field{hint}")
        for key in required:
            if key not in value:
                raise self.fail(_join(where, key), "missing (required)")
        return value

    def integer(self, value: Any, where: str, lo: int | None = None, hi: int | None = None) -> int:
        if not _is_int(value):
            raise self.fail(where, f"expected a whole number, got {_kind(value)} {_shown(value)}")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            span = f"{lo}..{hi}" if hi is not None else f">= {lo}"
            raise self.fail(where, f"expected a number {span}, got {value}")
        return int(value)

    def player(self, value: Any, where: str) -> int:
        """A player, 0 or 1 (never null)."""
        p = self.player_index(value, where)
        assert p is not None
        return p

    def player_index(self, value: Any, where: str, allow_none: bool = False) -> int | None:
        if value is None and allow_none:
            return None
        if value not in (0, 1) or isinstance(value, bool) or not _is_int(value):
            expected = "0, 1 or null" if allow_none else "0 or 1"
            raise self.fail(where, f"expected a player, {expected}; got {_shown(value)}")
        return int(value)

    def array(self, value: Any, where: str, limit: int | None = None, what: str = "") -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(where, f"expected an array, got {_kind(value)} {_shown(value)}")
        if limit is not None and len(value) > limit:
            raise self.fail(
                where, f'{len(value):,} {what}; a record holds at most {limit:,} (docs/records.md, "Limits")'
            )
        return value

    def card_name(self, value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"expected a card name, got {_kind(value)} {_shown(value)}")
        try:
            return CARD_NAMES[card(value)]
        except UnknownCardError as e:
            raise self.fail(where, str(e)) from None

    def record(self, data: Any) -> GameRecord:
        if not isinstance(data, dict):
            raise self.fail("record", f"expected a JSON object, got {_kind(data)}")
        if data.get("format") != FORMAT:
            if "format" not in data:
                raise self.fail("format", f'missing: this is not a game record (expected "format": "{FORMAT}")')
            raise self.fail("format", f"expected {FORMAT!r}, got {_shown(data['format'])}")
        version: Any = data.get("version")
        if not _is_int(version):
            raise self.fail("version", f"expected a whole number, got {_shown(version)}")
        if version != VERSION:
            newer = " (written by a newer koikoi: upgrade to read it)" if version > VERSION else ""
            raise self.fail(
                "version", f"version {version} is not supported; this reader reads version {VERSION}{newer}"
            )
        self.obj(data, "", _TOP_KEYS, _REQUIRED_TOP)
        created = data.get("created")
        if created is not None and not isinstance(created, str):
            raise self.fail("created", f"expected a timestamp string or null, got {_kind(created)}")
        rules = self.rules(data["rules"])
        players = self.players(data["players"], rules)
        seed = data.get("seed")
        if seed is not None and not _is_int(seed):
            raise self.fail("seed", f"expected a whole number or null, got {_kind(seed)} {_shown(seed)}")
        first_dealer = self.player(data["first_dealer"], "first_dealer")
        draws = [
            self.card_name(c, f"dealer_draws[{i}]")
            for i, c in enumerate(
                self.array(
                    data["dealer_draws"], "dealer_draws", MAX_RECORD_DEALER_DRAWS, "cards drawn for the first dealer"
                )
            )
        ]
        if not draws and seed is None:
            raise self.fail("dealer_draws", "empty, and the record has no seed to draw the first dealer from")
        hands = self.hands(data["hands"], seed)
        outcome = self.outcome(data.get("outcome"))
        metadata = data.get("metadata", {})
        if metadata is None:
            metadata = {}
        if not isinstance(metadata, dict):
            raise self.fail("metadata", f"expected an object, got {_kind(metadata)}")
        version = metadata.get("rules_version", 1)
        if not _is_int(version) or version not in RULES_VERSIONS:
            known = ", ".join(map(str, RULES_VERSIONS))
            newer = " (written by a newer engine?)" if _is_int(version) and version > RULES_VERSION else ""
            raise self.fail(
                "metadata.rules_version", f"{_shown(version)} is not a rules version this engine plays ({known}){newer}"
            )
        return GameRecord(
            rules=rules,
            players=players,
            first_dealer=first_dealer,
            dealer_draws=draws,
            hands=hands,
            seed=seed,
            outcome=outcome,
            created=created,
            metadata=metadata,
        )

    def rules(self, value: Any) -> RuleSet:
        if not isinstance(value, dict):
            raise self.fail("rules", f"expected an object of rule options, got {_kind(value)}")
        for key, v in value.items():
            if key in ("name", "preset") and not isinstance(v, str):
                raise self.fail(f"rules.{key}", f"expected a string, got {_kind(v)} {_shown(v)}")
        try:
            return RuleSet.from_dict(value)
        except RuleError as e:
            message = str(e)
            where = "rules"
            for key in value:
                if f"{key!r}" in message or message.startswith(f"option {key} "):
                    where = f"rules.{key}"
                    break
            raise self.fail(where, message) from None
        except (TypeError, ValueError) as e:
            raise self.fail("rules", str(e)) from None

    def players(self, value: Any, rules: RuleSet) -> list[dict[str, Any]]:
        items = self.array(value, "players")
        if len(items) != 2:
            raise self.fail("players", f"expected 2 players, got {len(items)}")
        out = []
        for i, p in enumerate(items):
            where = f"players[{i}]"
            if not isinstance(p, dict):
                raise self.fail(where, f"expected an object with a name, got {_kind(p)} {_shown(p)}")
            if "name" not in p:
                raise self.fail(f"{where}.name", "missing (required)")
            if not isinstance(p["name"], str):
                raise self.fail(f"{where}.name", f"expected a string, got {_kind(p['name'])}")
            kind = p.get("kind")
            if kind is not None and not isinstance(kind, str):
                raise self.fail(f"{where}.kind", f"expected a string or null, got {_kind(kind)}")
            if p.get("birth_month") is not None:
                self.integer(p["birth_month"], f"{where}.birth_month", 1, 12)
            elif rules.dealer_selection == "birth_month":
                raise self.fail(f"{where}.birth_month", "missing: required by the rule dealer_selection=birth_month")
            out.append({k: v for k, v in p.items() if not (k in ("kind", "birth_month") and v is None)})
        return out

    def hands(self, value: Any, seed: int | None) -> list[RecordedHand]:
        items = self.array(value, "hands", MAX_RECORD_HANDS, "hands")
        if not items:
            raise self.fail("hands", "empty: a match always has its first hand")
        out = []
        total = 0
        for i, h in enumerate(items):
            where = f"hands[{i}]"
            self.obj(h, where, _HAND_KEYS, ("number", "dealer", "month", "actions", "result"))
            number = self.integer(h["number"], f"{where}.number", 1)
            if number != i + 1:
                raise self.fail(f"{where}.number", f"expected {i + 1} (hands are numbered in order), got {number}")
            dealer = self.player(h["dealer"], f"{where}.dealer")
            month = self.integer(h["month"], f"{where}.month", 1, 12)
            deals = [
                self.deal(d, f"{where}.deals[{j}]")
                for j, d in enumerate(
                    self.array(h.get("deals", []), f"{where}.deals", MAX_RECORD_DEALS, "deals in one hand")
                )
            ]
            recorded = self.array(h["actions"], f"{where}.actions", MAX_RECORD_HAND_ACTIONS, "actions in one hand")
            total += len(recorded)
            if total > MAX_RECORD_ACTIONS:
                raise self.fail(
                    f"{where}.actions",
                    f"{total:,} actions up to this hand; a record holds at most "
                    f'{MAX_RECORD_ACTIONS:,} (docs/records.md, "Limits")',
                )
            actions = []
            for j, a in enumerate(recorded):
                aw = f"{where}.actions[{j}]"
                if not isinstance(a, str):
                    raise self.fail(
                        aw, f"expected an action in notation (e.g. 'play pine-crane'), got {_kind(a)} {_shown(a)}"
                    )
                try:
                    actions.append(action_name(parse_action(a)))
                except ActionParseError as e:
                    raise self.fail(aw, str(e)) from None
            result = None if h["result"] is None else self.result(h["result"], f"{where}.result")
            if result is None and i != len(items) - 1:
                raise self.fail(f"{where}.result", "null, but only the last hand may be in progress")
            out.append(RecordedHand(number, dealer, month, deals, actions, result))
        with_deals = [bool(h.deals) for h in out]
        if not all(with_deals):
            if any(with_deals):
                i = with_deals.index(False)
                raise self.fail(
                    f"hands[{i}].deals",
                    "empty, but other hands record their deals: record the deals of every hand or of none",
                )
            if seed is None:
                raise self.fail("hands[0].deals", "empty, and the record has no seed to deal from")
        return out

    def deal(self, value: Any, where: str) -> list[str]:
        items = self.array(value, where)
        names = [self.card_name(c, f"{where}[{k}]") for k, c in enumerate(items)]
        if len(names) != NUM_CARDS or len(set(names)) != NUM_CARDS:
            seen: set[str] = set()
            for k, n in enumerate(names):
                if n in seen:
                    raise self.fail(f"{where}[{k}]", f"{n} appears twice: a deal holds each of the 48 cards once")
                seen.add(n)
            missing = [n for n in CARD_NAMES if n not in seen]
            raise self.fail(
                where, f"a deal holds each of the 48 cards once; got {len(names)} cards, missing {', '.join(missing)}"
            )
        return names

    def result(self, value: Any, where: str) -> dict[str, Any]:
        self.obj(value, where, _RESULT_KEYS, _RESULT_KEYS)
        reason = value["reason"]
        if reason not in ("stop", "exhausted", "hand_bonus"):
            raise self.fail(f"{where}.reason", f"expected 'stop', 'exhausted' or 'hand_bonus', got {_shown(reason)}")
        self.player_index(value["winner"], f"{where}.winner", allow_none=True)
        self.integer(value["points"], f"{where}.points", 0)
        deltas = self.array(value["deltas"], f"{where}.deltas")
        if len(deltas) != 2:
            raise self.fail(f"{where}.deltas", f"expected 2 numbers, got {len(deltas)}")
        for k, d in enumerate(deltas):
            self.integer(d, f"{where}.deltas[{k}]")
        for k, y in enumerate(self.array(value["yaku"], f"{where}.yaku", 32, "yaku")):
            yw = f"{where}.yaku[{k}]"
            self.obj(y, yw, ("name", "points"), ("name", "points"))
            if not isinstance(y["name"], str):
                raise self.fail(f"{yw}.name", f"expected a string, got {_kind(y['name'])}")
            self.integer(y["points"], f"{yw}.points", 0)
        self.integer(value["base"], f"{where}.base", 0)
        self.integer(value["multiplier"], f"{where}.multiplier", 1)
        return {k: value[k] for k in _RESULT_KEYS}

    def outcome(self, value: Any) -> dict[str, Any] | None:
        if value is None:
            return None
        self.obj(value, "outcome", _OUTCOME_KEYS, _OUTCOME_KEYS)
        self.player_index(value["winner"], "outcome.winner", allow_none=True)
        scores = self.array(value["scores"], "outcome.scores")
        if len(scores) != 2:
            raise self.fail("outcome.scores", f"expected 2 numbers, got {len(scores)}")
        for k, s in enumerate(scores):
            self.integer(s, f"outcome.scores[{k}]")
        if value["reason"] not in ("hands", "target", "bankrupt"):
            raise self.fail(
                "outcome.reason", f"expected 'hands', 'target' or 'bankrupt', got {_shown(value['reason'])}"
            )
        return {k: value[k] for k in _OUTCOME_KEYS}


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


# -- replay -------------------------------------------------------------------------------------------


class _RecordChance(SeededChance):
    """The recorded outcomes first, then the seed's.

    The seeded generator runs alongside the recorded outcomes, so a record with a seed is checked
    against it and a resumed match goes on dealing exactly what the original would have. Subclassing
    :class:`SeededChance` makes ``Match.clone`` give clones an independent generator.
    """

    def __init__(self, decks: list[list[int]], draws: list[int], seed: int | None) -> None:
        super().__init__(seed if seed is not None else random.SystemRandom().getrandbits(63))
        self.checked = seed is not None
        self.decks = decks
        self.draws = draws
        self.used_decks = 0
        self.used_draws = 0
        self.deck_mismatch: int | None = None  # index of the first recorded deal the seed contradicts
        self.draw_mismatch: int | None = None

    def deck(self) -> list[int]:
        fresh = super().deck()
        i = self.used_decks
        self.used_decks += 1
        if i < len(self.decks):
            if self.checked and fresh != self.decks[i] and self.deck_mismatch is None:
                self.deck_mismatch = i
            return list(self.decks[i])
        return fresh

    def draw_card(self) -> int:
        fresh = super().draw_card()
        i = self.used_draws
        self.used_draws += 1
        if i < len(self.draws):
            if self.checked and fresh != self.draws[i] and self.draw_mismatch is None:
                self.draw_mismatch = i
            return self.draws[i]
        return fresh


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """One recorded action in a replay, with the table before and after it.

    Unpacks as ``(before, action, description)``. ``before`` is a snapshot of the match before the
    action (``before.observation(player)``, ``before.legal_actions()``); ``after`` the match after it,
    which already shows the next deal when the action ended a hand; ``hand_after`` is the hand the action
    was played in, after it (the final table and piles when it ended the hand); ``results`` the hands that
    this action finished (the hand itself, then any hand settled at its deal).

    The snapshots are independent matches (playing on one leaves the others alone), but they share the
    records of the hands already finished instead of copying them, so a step costs the same late in a
    long record as early.
    """

    before: Match
    action: int
    description: str
    after: Match
    hand_after: Hand
    index: int
    hand_number: int
    action_index: int
    player: int
    results: tuple[HandResult, ...] = ()

    @property
    def notation(self) -> str:
        return action_name(self.action)

    def positions(self, player: int) -> Positions:
        """Where the cards lie for ``player`` in the hand this action was played in, after it (the final
        table and piles when it ended the hand): a record keeps no positions, they follow from its deal
        and actions (docs/records.md, "Positions"). Before the action: ``positions(step.before, player)``
        (:func:`koikoi.observation.positions`)."""
        return hand_positions(self.hand_after, self.after.hands[self.hand_number - 1].decks[-1], player)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.before, self.action, self.description))


class _Replayer:
    """Rebuilds a match from a record step by step, checking everything the record claims."""

    def __init__(self, record: GameRecord, check: bool = True) -> None:
        # A record built or changed in memory gets the same checks as one read from a file.
        try:
            record = _Reader().record(record.to_dict())
        except (AttributeError, TypeError, KeyError) as e:
            raise RecordError("record", f"not a well-formed GameRecord: {e}") from None
        self.record = record
        self.check = check
        decks = [[card(n) for n in deal] for h in record.hands for deal in h.deals]
        draws = [card(n) for n in record.dealer_draws]
        self.chance = _RecordChance(decks, draws, record.seed)
        self.actions = [[parse_action(a) for a in h.actions] for h in record.hands]
        try:
            self.match = Match(
                record.rules,
                record.seed,
                chance=self.chance,
                birth_months=record.birth_months,
                version=record.rules_version,
            )
        except ValueError as e:
            raise RecordError("dealer_draws", f"cannot choose the first dealer: {e}") from None
        self.checked_hands = 0
        if not check:
            return
        self.check_draws()
        if self.match.first_dealer != record.first_dealer:
            raise RecordError(
                "first_dealer",
                f"recorded {record.first_dealer}, but the dealer draw "
                f"{_names(self.match.dealer_draws)} makes player "
                f"{self.match.first_dealer} the dealer",
            )
        self.check_chance()
        self.check_hands()

    # -- checks -------------------------------------------------------------------------------------

    def check_draws(self) -> None:
        c, rec = self.chance, self.record
        if c.draw_mismatch is not None:
            raise RecordError(
                f"dealer_draws[{c.draw_mismatch}]",
                f"{rec.dealer_draws[c.draw_mismatch]} is not what seed {rec.seed} draws: "
                f"the draws and the seed disagree",
            )
        if rec.dealer_draws and len(self.match.dealer_draws) != len(rec.dealer_draws):
            raise RecordError(
                "dealer_draws",
                f"the record has {len(rec.dealer_draws)} draws, but choosing the "
                f"dealer took {len(self.match.dealer_draws)}",
            )

    def check_chance(self) -> None:
        c = self.chance
        if c.deck_mismatch is not None:
            i = c.deck_mismatch
            for h, hand in enumerate(self.record.hands):
                if i < len(hand.deals):
                    raise RecordError(
                        f"hands[{h}].deals[{i}]",
                        f"not the deal seed {self.record.seed} gives: the deals and the seed disagree",
                    )
                i -= len(hand.deals)

    def check_hands(self) -> None:
        """Check each hand the match has dealt or finished since the last call against the record."""
        rec = self.record
        m = self.match
        while self.checked_hands < len(m.hands):
            i = self.checked_hands
            got = m.hands[i]
            where = f"hands[{i}]"
            if i >= len(rec.hands):
                if rec.outcome is not None or any(h.result is None for h in rec.hands):
                    raise RecordError(
                        "hands", f"the record has {len(rec.hands)} hands, but the match goes on to hand {i + 1}"
                    )
                return  # a record saved between hands: the next one was dealt from the seed
            want = rec.hands[i]
            if want.deals and len(got.decks) != len(want.deals):
                raise RecordError(
                    f"{where}.deals",
                    f"the record has {len(want.deals)} deals, but the rules "
                    f"{'redeal' if len(got.decks) > len(want.deals) else 'play'} "
                    f"after deal {min(len(got.decks), len(want.deals))}",
                )
            if got.dealer != want.dealer:
                raise RecordError(
                    f"{where}.dealer",
                    f"recorded {want.dealer}, but player {got.dealer} deals hand {i + 1} under the rules",
                )
            if got.month != want.month:
                raise RecordError(f"{where}.month", f"recorded {want.month}, but hand {i + 1} is month {got.month}")
            if got.result is None:
                return
            if len(got.actions) != len(want.actions):
                raise RecordError(
                    f"{where}.actions[{len(got.actions)}]",
                    f"the hand ended after {len(got.actions)} actions "
                    f"({_describe_result(got.result)}), but the record has {len(want.actions)}",
                )
            actual = got.result.to_dict()
            if want.result is None:
                raise RecordError(
                    f"{where}.result",
                    f"null, but the hand ended after its recorded actions: {_describe_result(got.result)}",
                )
            if actual != want.result:
                key = next(k for k in _RESULT_KEYS if actual[k] != want.result[k])
                raise RecordError(
                    f"{where}.result.{key}",
                    f"recorded {_shown(want.result[key])}, but the replay "
                    f"gives {_shown(actual[key])} "
                    f"({_describe_result(got.result)})",
                )
            self.checked_hands += 1

    # -- stepping -----------------------------------------------------------------------------------

    def steps(self) -> Iterator[tuple[int, int, int]]:
        """(hand index, action index, action) in order; stops before each is applied."""
        for i, actions in enumerate(self.actions):
            for j, a in enumerate(actions):
                yield i, j, a

    def apply(self, i: int, j: int, action: int) -> None:
        m = self.match
        where = f"hands[{i}].actions[{j}]"
        notation = self.record.hands[i].actions[j]
        if m.outcome is not None:
            raise RecordError(where, f"{notation!r} comes after the end of the match ({m.outcome.reason})")
        hand = m.hand
        if m.hand_number != i + 1:  # the hand ending early raised already in check_hands
            k = m.hand_number - 1
            raise RecordError(
                f"hands[{k}].actions",
                f"the hand is not over after its "
                f"{len(self.actions[k])} recorded actions (player "
                f"{hand.current_player} to move), but the record goes on "
                f"to hand {i + 1}",
            )
        if not hand.is_legal(action):
            legal = ", ".join(action_name(a) for a in hand.legal_actions()) or "none"
            raise RecordError(
                where,
                f"illegal action {notation!r} for player {hand.current_player} in phase "
                f"{hand.phase.name.lower()}; legal: {legal}",
            )
        m.apply_action(action)
        if self.check:
            self.check_chance()
            self.check_hands()

    def finish(self) -> Match:
        m = self.match
        if self.check:
            self.check_end()
        # Hand the match a plain seeded generator in the same state, so it deals on as the original would.
        plain = SeededChance(0)
        plain.rng.setstate(self.chance.rng.getstate())
        m.chance = plain
        return m

    def check_end(self) -> None:
        rec, m = self.record, self.match
        if len(m.hands) < len(rec.hands):
            i = len(m.hands) - 1
            raise RecordError(
                f"hands[{i}].actions",
                f"the hand is not over after its {len(self.actions[i])} "
                f"recorded actions (player {m.current_player} to move), but "
                f"the record goes on to hand {i + 2}",
            )
        last = rec.hands[-1]
        if last.result is not None and m.hands[len(rec.hands) - 1].result is None:
            raise RecordError(
                f"hands[{len(rec.hands) - 1}].actions",
                f"the hand is not over after its {len(last.actions)} recorded actions, but the record gives a result",
            )
        if rec.outcome is None:
            if m.outcome is not None:
                o = m.outcome
                raise RecordError(
                    "outcome", f"null, but the match ended ({o.reason}; scores {o.scores[0]}-{o.scores[1]})"
                )
        else:
            if m.outcome is None:
                raise RecordError("outcome", "recorded, but the match is not over after the recorded hands")
            actual = {"winner": m.outcome.winner, "scores": list(m.outcome.scores), "reason": m.outcome.reason}
            if actual != rec.outcome:
                key = next(k for k in _OUTCOME_KEYS if actual[k] != rec.outcome[k])
                raise RecordError(
                    f"outcome.{key}", f"recorded {_shown(rec.outcome[key])}, but the replay gives {_shown(actual[key])}"
                )


def _names(cards: Sequence[int]) -> str:
    return ", ".join(CARD_NAMES[c] for c in cards) or "(none)"


def _describe_result(r: HandResult) -> str:
    yaku = ", ".join(f"{y.name} {y.points}" for y in r.yaku)
    if r.reason == "stop":
        text = f"player {r.winner} stopped with {yaku or 'no yaku'}"
    elif r.reason == "hand_bonus":
        text = f"player {r.winner} won the hand bonus {yaku}"
    elif r.winner is not None:
        text = f"exhausted, player {r.winner} scores {yaku}"
    else:
        text = "exhausted, no winner"
    if r.multiplier != 1:
        text += f" x{r.multiplier}"
    return f"{text}: {r.points} points, scores change by {r.deltas[0]:+d}/{r.deltas[1]:+d}"


def replay(record: GameRecord) -> Match:
    """Rebuild the recorded match and check it; returns the match, ready to continue if unfinished.

    Deals come from the record (checked against the seed when there is one), or from the seed when
    the record has none. Each action must be legal, each hand's result and the outcome must be what
    the engine gives; the first difference raises :class:`RecordError` naming the hand and action.
    """
    r = _Replayer(record)
    for i, j, action in r.steps():
        r.apply(i, j, action)
    return r.finish()


def replay_steps(record: GameRecord, *, check: bool = True) -> Iterator[ReplayStep]:
    """Replay ``record`` one action at a time, for viewers; each :class:`ReplayStep` carries snapshots.

    With ``check`` (the default) the whole record is checked as :func:`replay` does before the first
    step is yielded. Without it nothing is compared (results, outcome, seed): the steps show what this
    engine makes of the recorded deals and actions, e.g. for a record from an older version; an action
    that cannot be played still raises :class:`RecordError` when the replay reaches it.

    >>> from koikoi.rules import preset
    >>> m = Match(preset("cardavia"), seed=3)
    >>> m.apply_action(m.legal_actions()[0])
    >>> for before, action, text in replay_steps(GameRecord.from_match(m)):
    ...     print(before.hand.stock_count, action_name(action), "/", text)
    24 play pine-poetry / player 1 played pine-poetry, took pine-plain-1; drew pampas-moon, took pampas-plain-2
    """
    if check:
        replay(record)
    r = _Replayer(record, check=False)
    m = r.match
    before = _snapshot(m)
    for index, (i, j, action) in enumerate(r.steps()):
        player = m.current_player
        hand = m.hand
        seen_events = len(hand.events)
        seen_hands = len(m.hands)
        r.apply(i, j, action)
        after = _snapshot(m)
        # The hands this action finished: its own, then any settled at the deal that followed.
        results = tuple(h.result for h in m.hands[seen_hands - 1 :] if h.result is not None)
        text = _describe_step(player, hand, hand.events[seen_events:], results, m, i + 1)
        yield ReplayStep(
            before=before,
            action=action,
            description=text,
            after=after,
            hand_after=hand.clone(),
            index=index,
            hand_number=i + 1,
            action_index=j,
            player=player,
            results=results,
        )
        before = after
    r.finish()


class _SharedHands(Sequence[HandRecord]):
    """A snapshot's hand records, made without copying the past: the finished hands are shared with the
    live match (nothing changes a finished hand's record), the hand in progress is copied, and hands a
    snapshot deals when it is played on are its own. So a snapshot costs the same in hand 1 as in hand
    1,000, and a replay's work grows with the record's length, not with its square."""

    __slots__ = ("_base", "_own", "_shared")

    _base: Sequence[HandRecord]
    _shared: int
    _own: list[HandRecord]

    def __init__(self, live: Sequence[HandRecord]) -> None:
        if isinstance(live, _SharedHands):  # a snapshot of a snapshot shares the same finished hands
            base, shared, last = live._base, live._shared, live[-1]
            self._own = [live[k] for k in range(shared, len(live) - 1)]
        else:
            base, shared, last = live, len(live) - 1, live[-1]
            self._own = []
        self._base = base
        self._shared = shared
        self._own.append(
            HandRecord(last.number, last.dealer, last.month, [d[:] for d in last.decks], last.actions[:], last.result)
        )

    def __len__(self) -> int:
        return self._shared + len(self._own)

    @overload
    def __getitem__(self, index: int) -> HandRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[HandRecord]: ...

    def __getitem__(self, index: int | slice) -> HandRecord | list[HandRecord]:
        if isinstance(index, slice):
            return [self[k] for k in range(*index.indices(len(self)))]
        n = len(self)
        k = index + n if index < 0 else index
        if not 0 <= k < n:
            raise IndexError(f"hand index {index} out of range ({n} hands)")
        return self._base[k] if k < self._shared else self._own[k - self._shared]

    def __iter__(self) -> Iterator[HandRecord]:
        base = self._base
        for k in range(self._shared):
            yield base[k]
        yield from self._own

    def append(self, record: HandRecord) -> None:
        self._own.append(record)


def _snapshot(match: Match) -> Match:
    """An independent copy of ``match`` for a replay step, like ``match.clone()`` but sharing the
    finished hands' records instead of copying them (see :class:`_SharedHands`)."""
    s = copy.copy(match)
    s.chance = match.chance.clone()
    s.scores = match.scores[:]
    s.dealer_draws = match.dealer_draws[:]
    s.hands = _SharedHands(match.hands)  # type: ignore[assignment]
    s.hand = match.hand.clone()
    s.bind_hand_record()
    return s


def _describe_step(
    player: int, hand: Hand, events: Sequence[Any], results: Sequence[HandResult], match: Match, number: int
) -> str:
    parts = [e.describe() for e in events]
    if hand.phase == Phase.DRAW_CHOICE:
        parts.append(f"drew {CARD_NAMES[hand.drawn_card]}, which matches two table cards: choose one")
    elif hand.phase == Phase.DECISION:
        parts.append(f"yaku score {hand.score_of(player)}: koi-koi or stop")
    text = f"player {player} " + "; ".join(parts)
    for k, res in enumerate(results):
        text += f". Hand {number + k} over: {_describe_result(res)}"
    if results:
        text += f". Scores {match.scores[0]}-{match.scores[1]}"
        if match.outcome is not None:
            o = match.outcome
            text += f". Match over ({o.reason}): " + ("a draw" if o.winner is None else f"player {o.winner} wins")
    return text
