"""Rule sets: every option of RULES.md sections 3-5 in one immutable value, and the presets.

>>> rs = preset("cardavia")
>>> rs.goko, rs.sake_yaku, rs.hands
(15, 'off', 1)
>>> rs.replace(goko=12).goko
12
>>> preset("bga").with_settings(["koikoi_multiplier=none", "hands=3"]).hands
3
"""

from __future__ import annotations

import dataclasses
import difflib
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "RuleSet", "RuleError", "PRESETS", "PRESET_NAMES", "preset", "load_rules", "option_help",
    "YAKU_OPTIONS",
]


class RuleError(ValueError):
    """A rule set option or value that does not exist, or a malformed rules file."""


def _opt(default: Any, doc: str, choices: tuple[str, ...] | None = None, minimum: int | None = None):
    return field(default=default, metadata={"doc": doc, "choices": choices, "min": minimum})


_POINTS = 0  # yaku points options take whole numbers >= 0; 0 means the yaku is off


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Every option of a Koi-Koi rule set. Immutable; ``replace`` makes a changed copy."""

    name: str = _opt("custom", "name of the rule set (the preset it started from, or custom)")
    # -- yaku points (RULES.md section 3); 0 turns a yaku off
    goko: int = _opt(10, "all 5 brights", minimum=_POINTS)
    shiko: int = _opt(8, "4 brights without the rain man", minimum=_POINTS)
    ame_shiko: int = _opt(7, "4 brights with the rain man", minimum=_POINTS)
    sanko: int = _opt(5, "3 brights without the rain man", minimum=_POINTS)
    ino_shika_cho: int = _opt(5, "boar, deer, butterflies", minimum=_POINTS)
    akatan: int = _opt(5, "3 poetry ribbons", minimum=_POINTS)
    aotan: int = _opt(5, "3 blue ribbons", minimum=_POINTS)
    akatan_aotan: int = _opt(
        0, "akatan and aotan together as one yaku of these points (nintendo: 10); 0 scores them apart",
        minimum=_POINTS)
    tane: int = _opt(1, "5 animals, +1 per further animal", minimum=_POINTS)
    tanzaku: int = _opt(1, "5 ribbons, +1 per further ribbon", minimum=_POINTS)
    kasu: int = _opt(1, "10 chaff, +1 per further chaff", minimum=_POINTS)
    tsukimi_zake: int = _opt(5, "moon + sake cup", minimum=_POINTS)
    hanami_zake: int = _opt(5, "curtain + sake cup", minimum=_POINTS)
    tsukifuda: int = _opt(0, "the 4 cards of the hand's month (hand n = month n)", minimum=_POINTS)
    ino_shika_cho_plus: bool = _opt(False, "ino-shika-cho scores +1 per further animal")
    akatan_plus: bool = _opt(False, "akatan scores +1 per further ribbon")
    aotan_plus: bool = _opt(False, "aotan scores +1 per further ribbon")
    sake_cup: str = _opt(
        "both", "how the sake cup counts: animal and chaff at once, animal only, or either (whichever scores more)",
        ("both", "animal_only", "either"))
    sake_yaku: str = _opt(
        "on", "tsukimi-zake and hanami-zake: on, off, voided by any willow card captured (rain_ruins), "
        "voided by the rain man (rainman_ruins), only beside another yaku (bonus_only), "
        "or not together with a bright yaku (not_with_brights)",
        ("on", "off", "rain_ruins", "rainman_ruins", "bonus_only", "not_with_brights"))
    # -- settling a hand (section 4)
    seven_point_double: bool = _opt(True, "a base score of 7 or more doubles")
    koikoi_multiplier: str = _opt(
        "none", "koi-koi bonus: none; additive (each own call adds 1 to the multiplier); "
        "opponent_double (winning after the opponent's koi-koi doubles); own_double (winning after "
        "one's own koi-koi doubles); own_and_opponent_double (both)",
        ("none", "additive", "opponent_double", "own_double", "own_and_opponent_double"))
    bright_table_multiplier: bool = _opt(
        False, "the number of brights on the table after the deal (at least 1) multiplies the hand")
    exhausted: str = _opt(
        "draw", "both hands empty and nobody stopped: draw (no points); dealer_bonus (the dealer scores "
        "exhausted_points and keeps the deal); first_player / second_player (that player gains "
        "exhausted_points, the other loses them); last_koikoi (the last koi-koi caller scores their "
        "yaku; if nobody called, the dealer scores exhausted_points, oya-ken)",
        ("draw", "dealer_bonus", "first_player", "second_player", "last_koikoi"))
    exhausted_points: int = _opt(0, "points used by the exhausted rule", minimum=0)
    # -- before play (section 2)
    hand_bonus: int = _opt(6, "teshi (4 of a month) or kuttsuki (4 pairs) in a dealt hand; 0 = off", minimum=0)
    hand_bonus_two_months: int = _opt(
        0, "points for a dealt hand of two complete months; 0 = same as hand_bonus", minimum=0)
    hand_bonus_declared: bool = _opt(
        False, "the hand bonus must be declared on the holder's first turn instead of being awarded at once")
    redeal_on_table_four: bool = _opt(True, "redeal when the table shows four cards of one month")
    redeal_on_table_pairs: bool = _opt(False, "redeal when the table shows four pairs")
    redeal_on_both_hand_bonus: bool = _opt(True, "redeal when both players hold a hand bonus")
    deal_pattern: str = _opt("4-4", "dealing order: 4 to the non-dealer, 4 to the dealer, 4 to the table, "
                             "twice (4-4), or the same in twos (2-2)", ("4-4", "2-2"))
    # -- the match (section 5)
    hands: int = _opt(12, "hands in a match; 0 = play until target_score", minimum=0)
    target_score: int = _opt(0, "the match ends when someone reaches this score; 0 = no target", minimum=0)
    starting_score: int = _opt(0, "each player's score before the first hand", minimum=0)
    transfer: bool = _opt(False, "the loser of a hand pays what the winner scores; at 0 a player loses at once")
    first_player: str = _opt("winner", "who deals and leads the next hand: the hand's winner, its loser, "
                             "or alternate; after a draw the dealer keeps the deal",
                             ("winner", "loser", "alternate"))
    dealer_selection: str = _opt(
        "draw", "the first dealer: draw (each draws a card, the earlier month deals), random, or birth_month "
        "(the player whose birth month is nearer a drawn card's month)", ("draw", "random", "birth_month"))
    koikoi_limit: int = _opt(0, "koi-koi calls allowed per player per hand; 0 = unlimited", minimum=0)

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            _check_value(f, getattr(self, f.name))
        if self.hands == 0 and self.target_score == 0:
            raise RuleError("hands=0 plays until target_score, so target_score must be set (> 0)")

    def replace(self, **changes: Any) -> RuleSet:
        """A copy with some options changed; unknown options raise :class:`RuleError`."""
        for key in changes:
            _field(key)
        return dataclasses.replace(self, **changes)

    def with_settings(self, settings: Iterable[str]) -> RuleSet:
        """Apply ``option=value`` strings, as given to the CLI's ``--set``."""
        changes: dict[str, Any] = {}
        for item in settings:
            key, sep, raw = item.partition("=")
            if not sep:
                raise RuleError(f"--set takes option=value, got {item!r}")
            f = _field(key.strip())
            changes[f.name] = _parse_value(f, raw.strip())
        return self.replace(**changes)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RuleSet:
        """A rule set from a mapping: ``preset`` names the starting point (by default the preset named
        by ``name``, else traditional) and every other key overrides one option."""
        if not isinstance(data, Mapping):
            raise RuleError(f"rules must be a table of option = value, not {type(data).__name__}")
        data = dict(data)
        base_name = data.pop("preset", None)
        if base_name is not None and not isinstance(base_name, str):
            raise RuleError(f"preset must be a preset name ({', '.join(PRESET_NAMES)}), not {base_name!r}")
        name = data.get("name")
        if name is not None and not isinstance(name, str):
            raise RuleError(f"option name cannot be {name!r}: it takes a string")
        given_preset = base_name is not None
        if base_name is None:
            base_name = name if name in PRESETS else "traditional"
        base = preset(base_name)
        for key in data:
            _field(key)
        if not data:
            return base
        changes = {_field(k).name: v for k, v in data.items()}
        changes.setdefault("name", base.name if given_preset or name in PRESETS else "custom")
        return base.replace(**changes)


_FIELDS = {f.name: f for f in dataclasses.fields(RuleSet)}
YAKU_OPTIONS = ("goko", "shiko", "ame_shiko", "sanko", "ino_shika_cho", "akatan", "aotan", "akatan_aotan",
                "tane", "tanzaku", "kasu", "tsukimi_zake", "hanami_zake", "tsukifuda")


def _field(key: str) -> dataclasses.Field:
    name = key.replace("-", "_").lower()
    if name in _FIELDS:
        return _FIELDS[name]
    close = difflib.get_close_matches(name, list(_FIELDS), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else f"; options are {', '.join(_FIELDS)}"
    raise RuleError(f"unknown rule option {key!r}{hint}")


def _describe(f: dataclasses.Field) -> str:
    if f.metadata.get("choices"):
        return "one of " + ", ".join(f.metadata["choices"])
    if f.type in ("bool", bool):
        return "true or false"
    if f.type in ("int", int):
        return f"a whole number >= {f.metadata.get('min') or 0}"
    return "a string"


def _check_value(f: dataclasses.Field, value: Any) -> None:
    kind = f.type if isinstance(f.type, str) else f.type.__name__
    ok: bool
    if kind == "bool":
        ok = isinstance(value, bool)
    elif kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= (f.metadata.get("min") or 0)
    else:
        choices = f.metadata.get("choices")
        ok = isinstance(value, str) and (choices is None or value in choices)
    if not ok:
        raise RuleError(f"option {f.name} cannot be {value!r}: it takes {_describe(f)}")


def _parse_value(f: dataclasses.Field, raw: str) -> Any:
    kind = f.type if isinstance(f.type, str) else f.type.__name__
    if kind == "bool":
        low = raw.lower()
        if low in ("true", "on", "yes", "1"):
            return True
        if low in ("false", "off", "no", "0"):
            return False
        raise RuleError(f"option {f.name} cannot be {raw!r}: it takes {_describe(f)}")
    if kind == "int":
        if raw.lower() == "off":
            return 0
        try:
            return int(raw)
        except ValueError:
            raise RuleError(f"option {f.name} cannot be {raw!r}: it takes {_describe(f)}") from None
    return raw


def option_help() -> list[tuple[str, str, str]]:
    """(option, allowed values, meaning) for every option."""
    return [(f.name, _describe(f), f.metadata["doc"]) for f in dataclasses.fields(RuleSet) if f.name != "name"]


_TRADITIONAL = RuleSet(
    name="traditional", hand_bonus_two_months=14, hand_bonus_declared=True,
)
PRESETS: dict[str, RuleSet] = {
    # Seed 000: only the 7+ double by default; draw on exhaustion; 3/6/12 hands.
    "traditional": _TRADITIONAL,
    # Seed 001 (Board Game Arena): simple koi-koi (+1 per call), bright multiplier, 50 points each,
    # points transfer, 6 hands.
    "bga": RuleSet(
        name="bga", seven_point_double=False, koikoi_multiplier="additive", bright_table_multiplier=True,
        redeal_on_table_pairs=True, hands=6, starting_score=50, transfer=True, dealer_selection="random",
    ),
    # Seed 002 (boxed board game): ame-shiko 6, wild sake cup, bonus-only sake yaku, tsukifuda,
    # oya-ken, deal in twos, first to 50.
    "boardgame": RuleSet(
        name="boardgame", ame_shiko=6, tsukifuda=5, sake_cup="either", sake_yaku="bonus_only",
        seven_point_double=False, exhausted="last_koikoi", exhausted_points=1, hand_bonus=0,
        deal_pattern="2-2", hands=0, target_score=50, dealer_selection="birth_month",
    ),
    # Seed 003 (Cardavia): a single hand, higher bright values, no sake yaku, no multipliers.
    "cardavia": RuleSet(
        name="cardavia", goko=15, shiko=10, ame_shiko=8, sanko=6, akatan=6, aotan=6,
        tsukimi_zake=0, hanami_zake=0, sake_yaku="off", seven_point_double=False,
        redeal_on_table_pairs=True, hands=1, dealer_selection="random",
    ),
    # Seed 004 (Wikipedia): 7+ double, opponent's koi-koi doubles, oya-ken 1 on exhaustion.
    "wikipedia": RuleSet(
        name="wikipedia", koikoi_multiplier="opponent_double", exhausted="dealer_bonus", exhausted_points=1,
        redeal_on_table_pairs=True,
    ),
    # Nintendo's rule sheet: +1 on ino-shika-cho/akatan/aotan, akatan+aotan one 10-point yaku.
    "nintendo": RuleSet(
        name="nintendo", akatan_aotan=10, ino_shika_cho_plus=True, akatan_plus=True, aotan_plus=True,
        koikoi_multiplier="opponent_double",
    ),
}
# Seed 000 "with all doublings": 7+, one's own koi-koi and the opponent's koi-koi each double.
PRESETS["traditional-all-doubles"] = _TRADITIONAL.replace(
    name="traditional-all-doubles", koikoi_multiplier="own_and_opponent_double")
PRESET_NAMES = tuple(PRESETS)
_ALIASES = {"trad": "traditional", "boardgamearena": "bga", "board-game-arena": "bga", "board": "boardgame",
            "wiki": "wikipedia", "nintendo-hanafuda": "nintendo",
            "all-doubles": "traditional-all-doubles"}


def preset(name: str) -> RuleSet:
    """The named preset (case-insensitive)."""
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key in PRESETS:
        return PRESETS[key]
    close = difflib.get_close_matches(key, PRESET_NAMES, n=2, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise RuleError(f"unknown preset {name!r}{hint} (presets: {', '.join(PRESET_NAMES)})")


def load_rules(path: str | Path) -> RuleSet:
    """A rule set from a TOML file: ``preset = "bga"`` then options to override.

    Options may sit at the top level or in a ``[rules]`` table.
    """
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise RuleError(f"cannot read rules file {p}: {e.strerror or e}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise RuleError(f"rules file {p} is not valid TOML: {e}") from None
    if "rules" in data and isinstance(data["rules"], dict):
        rest = {k: v for k, v in data.items() if k != "rules"}
        data = {**rest, **data["rules"]}
    try:
        return RuleSet.from_dict(data)
    except RuleError as e:
        raise RuleError(f"rules file {p}: {e}") from None
