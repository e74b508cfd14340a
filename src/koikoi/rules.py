"""Rule sets: every option of docs/rules.md (its section 6 lists them) in one immutable value, and the presets.

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
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .safejson import NestingError, check_toml_depth, without_toml_strings

__all__ = [
    "RuleSet",
    "RuleError",
    "PRESETS",
    "PRESET_NAMES",
    "PRESET_DESCRIPTIONS",
    "preset",
    "load_rules",
    "rules_from_toml",
    "option_help",
    "YAKU_OPTIONS",
    "RULES_VERSION",
    "RULES_VERSIONS",
]


# The version of the engine's rulings: how it reads the rules where the sources leave room, apart from
# the options. 1: before the rulings of issue 11 ("rules to the letter"); 2: with them (docs/rules.md,
# "Rulings"). The engine plays the current version; an older one is kept so that a record played under
# it still replays (records write it as metadata["rules_version"]).
RULES_VERSION = 2
RULES_VERSIONS = {
    1: "before the rulings of version 2",
    2: "bonus-only sake yaku beside a normal yaku (not tsukifuda); a new or larger yaku always offers the "
    "stop; not_with_brights scores the better of the two; akatan_plus with aotan_plus counts each extra "
    "ribbon once; the dealer_bonus oya-ken only when neither player made a yaku",
}


class RuleError(ValueError):
    """A rule set option or value that does not exist, or a malformed rules file."""


def _opt(
    default: Any,
    doc: str,
    choices: tuple[str, ...] | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
) -> Any:
    return field(default=default, metadata={"doc": doc, "choices": choices, "minimum": minimum, "maximum": maximum})


# Every whole-number option is bounded, so every score a match can reach stays small: a hand scores
# at most about 1,500 base points (14 yaku of MAX_POINTS plus the extra cards) times 90 (the 7+ double,
# nine koi-koi calls under "additive", five brights on the table), 135,000; with at most MAX_HANDS
# hands, or a target of at most MAX_SCORE, and a starting score of at most MAX_SCORE, a score stays
# under 10**8 either way (docs/rules-notes.md, "Bounds").
MAX_POINTS = 100  # any one yaku (0 turns it off), the hand bonus, exhausted_points
MAX_HANDS = 100  # hands in a match (the presets play 1 to 12)
MAX_SCORE = 1_000_000  # starting_score and target_score
MAX_KOIKOI_CALLS = 8  # a player has eight turns in a hand, so eight calls at most


def _points(default: int, doc: str) -> Any:
    return _opt(default, doc, minimum=0, maximum=MAX_POINTS)


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Every option of a Koi-Koi rule set. Immutable; ``replace`` makes a changed copy."""

    name: str = _opt("custom", "name of the rule set (the preset it started from, or custom)")
    # -- yaku points (docs/rules.md section 3); 0 turns a yaku off
    goko: int = _points(10, "all 5 brights")
    shiko: int = _points(8, "4 brights without the rain man")
    ame_shiko: int = _points(7, "4 brights with the rain man")
    sanko: int = _points(5, "3 brights without the rain man")
    ino_shika_cho: int = _points(5, "boar, deer, butterflies")
    akatan: int = _points(5, "3 poetry ribbons")
    aotan: int = _points(5, "3 blue ribbons")
    akatan_aotan: int = _points(
        0, "akatan and aotan together as one yaku of these points (nintendo: 10); 0 scores them apart"
    )
    akatan_aotan_adds: bool = _opt(
        False, "akatan_aotan's points come on top of akatan's and aotan's instead of replacing them (10 + 5 + 5)"
    )
    tane: int = _points(1, "5 animals, +1 per further animal")
    tanzaku: int = _points(1, "5 ribbons, +1 per further ribbon")
    kasu: int = _points(1, "10 chaff, +1 per further chaff")
    tsukimi_zake: int = _points(5, "moon + sake cup")
    hanami_zake: int = _points(5, "curtain + sake cup")
    tsukifuda: int = _points(0, "the 4 cards of the hand's month (hand n = month n)")
    ino_shika_cho_plus: bool = _opt(False, "ino-shika-cho scores +1 per further animal")
    akatan_plus: bool = _opt(False, "akatan scores +1 per further ribbon")
    aotan_plus: bool = _opt(False, "aotan scores +1 per further ribbon")
    sake_cup: str = _opt(
        "both",
        "how the sake cup counts: animal and chaff at once, animal only, or either (whichever scores more)",
        ("both", "animal_only", "either"),
    )
    sake_yaku: str = _opt(
        "on",
        "tsukimi-zake and hanami-zake: on, off, voided by any willow card captured (rain_ruins), "
        "voided by the rain man (rainman_ruins), only beside a normal yaku, not tsukifuda (bonus_only), "
        "or not together with a bright yaku: the better of the two counts, a tie the bright yaku (not_with_brights)",
        ("on", "off", "rain_ruins", "rainman_ruins", "bonus_only", "not_with_brights"),
    )
    sake_after_koikoi: int = _points(
        0,
        "tsukimi-zake and hanami-zake are worth this many points each once their holder has called koi-koi "
        "in the hand (with sake_yaku = on; other sake_yaku settings keep their points); 0 = no change",
    )
    # -- settling a hand (section 4)
    seven_point_double: bool = _opt(True, "a base score of 7 or more doubles")
    koikoi_multiplier: str = _opt(
        "none",
        "koi-koi bonus: none; additive (each own call adds 1 to the multiplier); "
        "opponent_double (winning after the opponent's koi-koi doubles); own_double (winning after "
        "one's own koi-koi doubles); own_and_opponent_double (both); own_points_then_multiply (each "
        "own call adds 1 point for one to three calls; from the fourth call the points are multiplied "
        "by the calls less 2)",
        ("none", "additive", "opponent_double", "own_double", "own_and_opponent_double", "own_points_then_multiply"),
    )
    bright_table_multiplier: bool = _opt(
        False, "the number of brights on the table after the deal (at least 1) multiplies the hand"
    )
    exhausted: str = _opt(
        "draw",
        "both hands empty and nobody stopped: draw (no points); dealer_bonus (if neither player made a "
        "yaku, the dealer scores exhausted_points and keeps the deal); first_player / second_player "
        "(read by seat, as seed 001 words it: the first player is the one who leads the hand, the dealer, "
        "the second the other; that seat gains "
        "exhausted_points, the other loses them); last_koikoi (the last koi-koi caller scores their "
        "yaku; if nobody called, the dealer scores exhausted_points, oya-ken)",
        ("draw", "dealer_bonus", "first_player", "second_player", "last_koikoi"),
    )
    exhausted_points: int = _points(0, "points used by the exhausted rule")
    # -- before play (section 2)
    hand_bonus: int = _points(6, "teshi (4 of a month) or kuttsuki (4 pairs) in a dealt hand; 0 = off")
    hand_bonus_two_months: int = _points(0, "points for a dealt hand of two complete months; 0 = same as hand_bonus")
    hand_bonus_declared: bool = _opt(
        False, "the hand bonus must be declared on the holder's first turn instead of being awarded at once"
    )
    redeal_on_table_four: bool = _opt(True, "redeal when the table shows four cards of one month")
    redeal_on_table_three: bool = _opt(
        False,
        "redeal when the table shows three cards of one month (exactly three: four are redeal_on_table_four)",
    )
    redeal_on_table_pairs: bool = _opt(False, "redeal when the table shows four pairs")
    redeal_on_both_hand_bonus: bool = _opt(True, "redeal when both players hold a hand bonus")
    redeal_on_hand_four: bool = _opt(
        False, "redeal when either player's dealt hand holds four cards of one month (no hand bonus is paid)"
    )
    redeal_on_hand_pairs: bool = _opt(
        False, "redeal when either player's dealt hand holds four pairs (no hand bonus is paid)"
    )
    deal_pattern: str = _opt(
        "4-4",
        "dealing order: 4 to the non-dealer, 4 to the dealer, 4 to the table, twice (4-4), or the same in twos (2-2)",
        ("4-4", "2-2"),
    )
    # -- the match (section 5)
    hands: int = _opt(12, "hands in a match; 0 = play until target_score", minimum=0, maximum=MAX_HANDS)
    target_score: int = _opt(
        0, "the match ends when someone reaches this score; 0 = no target", minimum=0, maximum=MAX_SCORE
    )
    starting_score: int = _opt(0, "each player's score before the first hand", minimum=0, maximum=MAX_SCORE)
    transfer: bool = _opt(False, "the loser of a hand pays what the winner scores; at 0 a player loses at once")
    first_player: str = _opt(
        "winner",
        "who deals and leads the next hand: the hand's winner, its loser, "
        "or alternate; after a hand nobody won, exhausted_dealer says",
        ("winner", "loser", "alternate"),
    )
    exhausted_dealer: str = _opt(
        "keep",
        "who deals after an exhausted hand that nobody won: the dealer again (keep) or the other player "
        "(pass); an exhausted hand that pays the dealer (oya-ken) or the last koi-koi caller has a winner "
        "and follows first_player, and under first_player = alternate the deal passes anyway",
        ("keep", "pass"),
    )
    dealer_selection: str = _opt(
        "draw",
        "the first dealer: draw (each draws a card, the earlier month deals), random, or birth_month "
        "(the player whose birth month is nearer a drawn card's month)",
        ("draw", "random", "birth_month"),
    )
    koikoi_limit: int = _opt(
        0,
        "koi-koi calls allowed per hand, counted as koikoi_limit_scope says; 0 = unlimited",
        minimum=0,
        maximum=MAX_KOIKOI_CALLS,
    )
    koikoi_limit_scope: str = _opt(
        "player",
        "what koikoi_limit counts: each player's own calls (player), or both players' calls together "
        "(hand: with koikoi_limit = 1 the hand's first koi-koi is its only one, and a player who makes a "
        "yaku after it must stop); no effect while koikoi_limit is 0",
        ("player", "hand"),
    )

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
            if f.name == "name":
                # The name says which preset the rules started from; a setting cannot rename them.
                raise RuleError(
                    f"--set {_shown(item)}: the rule set's name is not an option; options are {', '.join(_OPTIONS)}"
                )
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
# The options a player sets: every field but ``name``, which only says where the rules came from.
_OPTIONS = [name for name in _FIELDS if name != "name"]
YAKU_OPTIONS = (
    "goko",
    "shiko",
    "ame_shiko",
    "sanko",
    "ino_shika_cho",
    "akatan",
    "aotan",
    "akatan_aotan",
    "tane",
    "tanzaku",
    "kasu",
    "tsukimi_zake",
    "hanami_zake",
    "tsukifuda",
)


def _field(key: str) -> dataclasses.Field[Any]:
    if not isinstance(key, str):
        raise RuleError(f"rule options are named by strings, not {_shown(key)}")
    name = key.replace("-", "_").lower()
    if name in _FIELDS:
        return _FIELDS[name]
    close = difflib.get_close_matches(name, _OPTIONS, n=3, cutoff=0.6) if len(name) <= 64 else []
    hint = f"; did you mean {', '.join(close)}?" if close else f"; options are {', '.join(_OPTIONS)}"
    raise RuleError(f"unknown rule option {_shown(key)}{hint}")


def _bounds(f: dataclasses.Field[Any]) -> tuple[int, int | None]:
    lo = f.metadata.get("minimum")
    return (0 if lo is None else lo), f.metadata.get("maximum")


def _describe(f: dataclasses.Field[Any]) -> str:
    if f.metadata.get("choices"):
        return "one of " + ", ".join(f.metadata["choices"])
    if f.type in ("bool", bool):
        return "true or false"
    if f.type in ("int", int):
        lo, hi = _bounds(f)
        return f"a whole number {lo}..{hi}" if hi is not None else f"a whole number >= {lo}"
    return "a string"


def _shown(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and not -(10**12) < value < 10**12:
        return f"<{value.bit_length()}-bit number>"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_MAX_NAME = 64  # the rule set's name: a preset name, or something as short


def _check_value(f: dataclasses.Field[Any], value: Any) -> None:
    kind = f.type if isinstance(f.type, str) else f.type.__name__
    ok: bool
    if kind == "bool":
        ok = isinstance(value, bool)
    elif kind == "int":
        lo, hi = _bounds(f)
        ok = isinstance(value, int) and not isinstance(value, bool) and lo <= value and (hi is None or value <= hi)
    else:
        choices = f.metadata.get("choices")
        ok = isinstance(value, str) and (choices is None or value in choices)
        if ok and f.name == "name" and len(value) > _MAX_NAME:
            raise RuleError(
                f"option name cannot be {_shown(value)}: it takes a string of at most {_MAX_NAME} characters"
            )
    if not ok:
        raise RuleError(f"option {f.name} cannot be {_shown(value)}: it takes {_describe(f)}")


_WHOLE = re.compile(r"[+-]?[0-9]{1,15}")  # ASCII digits only: int() would also read '٣'


def _parse_value(f: dataclasses.Field[Any], raw: str) -> Any:
    kind = f.type if isinstance(f.type, str) else f.type.__name__
    if kind == "bool":
        low = raw.lower()
        if low in ("true", "on", "yes", "1"):
            return True
        if low in ("false", "off", "no", "0"):
            return False
        raise RuleError(f"option {f.name} cannot be {_shown(raw)}: it takes {_describe(f)}")
    if kind == "int":
        if raw.lower() == "off":
            return 0
        if not _WHOLE.fullmatch(raw):
            raise RuleError(f"option {f.name} cannot be {_shown(raw)}: it takes {_describe(f)}")
        return int(raw)
    return raw


def option_help() -> list[tuple[str, str, str]]:
    """(option, allowed values, meaning) for every option."""
    return [(f.name, _describe(f), f.metadata["doc"]) for f in dataclasses.fields(RuleSet) if f.name != "name"]


_TRADITIONAL = RuleSet(
    name="traditional",
    hand_bonus_two_months=14,
    hand_bonus_declared=True,
)
PRESETS: dict[str, RuleSet] = {
    # Seed 000: only the 7+ double by default; draw on exhaustion; 3/6/12 hands.
    "traditional": _TRADITIONAL,
    # Seed 001 (Board Game Arena): simple koi-koi (+1 per call), bright multiplier, 50 points each,
    # points transfer, 6 hands.
    "bga": RuleSet(
        name="bga",
        seven_point_double=False,
        koikoi_multiplier="additive",
        bright_table_multiplier=True,
        redeal_on_table_pairs=True,
        hands=6,
        starting_score=50,
        transfer=True,
        dealer_selection="random",
    ),
    # Seed 002 (boxed board game): ame-shiko 6, wild sake cup, bonus-only sake yaku, tsukifuda,
    # oya-ken, deal in twos, first to 50.
    "boardgame": RuleSet(
        name="boardgame",
        ame_shiko=6,
        tsukifuda=5,
        sake_cup="either",
        sake_yaku="bonus_only",
        seven_point_double=False,
        exhausted="last_koikoi",
        exhausted_points=1,
        hand_bonus=0,
        deal_pattern="2-2",
        hands=0,
        target_score=50,
        dealer_selection="birth_month",
    ),
    # Seed 003 (Cardavia): a single hand, higher bright values, no sake yaku, no multipliers.
    "cardavia": RuleSet(
        name="cardavia",
        goko=15,
        shiko=10,
        ame_shiko=8,
        sanko=6,
        akatan=6,
        aotan=6,
        tsukimi_zake=0,
        hanami_zake=0,
        sake_yaku="off",
        seven_point_double=False,
        redeal_on_table_pairs=True,
        hands=1,
        dealer_selection="random",
    ),
    # Seed 004 (Wikipedia): 7+ double, opponent's koi-koi doubles, oya-ken 1 on exhaustion.
    "wikipedia": RuleSet(
        name="wikipedia",
        koikoi_multiplier="opponent_double",
        exhausted="dealer_bonus",
        exhausted_points=1,
        redeal_on_table_pairs=True,
    ),
    # Nintendo's rule sheet: +1 on ino-shika-cho/akatan/aotan, akatan+aotan one 10-point yaku.
    "nintendo": RuleSet(
        name="nintendo",
        akatan_aotan=10,
        ino_shika_cho_plus=True,
        akatan_plus=True,
        aotan_plus=True,
        koikoi_multiplier="opponent_double",
    ),
}
# Seed 000 "with all doublings": 7+, one's own koi-koi and the opponent's koi-koi each double.
PRESETS["traditional-all-doubles"] = _TRADITIONAL.replace(
    name="traditional-all-doubles", koikoi_multiplier="own_and_opponent_double"
)
# KoiKoi-Japan (Steam), as KoiKoi-AI's engine and records play it (Guan et al., IEEE TAI 4(6), 2023):
# 8 hands from 30 points each that the loser pays; +1 point per own koi-koi up to three, then
# x(calls - 2); sake yaku 1, 3 after one's own koi-koi; akatan + aotan 10 on top of 5 + 5; no 7+
# double; an exhausted hand pays the dealer 1; four of a month in a dealt hand or on the table redeals.
PRESETS["koikoi-japan"] = RuleSet(
    name="koikoi-japan",
    akatan_aotan=10,
    akatan_aotan_adds=True,
    tsukimi_zake=1,
    hanami_zake=1,
    sake_after_koikoi=3,
    seven_point_double=False,
    koikoi_multiplier="own_points_then_multiply",
    exhausted="first_player",
    exhausted_points=1,
    hand_bonus=0,
    redeal_on_hand_four=True,
    hands=8,
    starting_score=30,
    transfer=True,
    dealer_selection="random",
)
PRESET_NAMES = tuple(PRESETS)

# Each preset in one line: which source it follows and what sets it apart (koikoi rules --list, docs/rules.md).
PRESET_DESCRIPTIONS: dict[str, str] = {
    "traditional": "the classic rules (seed 000): a base of 7+ doubles, no koi-koi bonus, a draw when "
    "the stock runs out, 12 hands",
    "bga": "Board Game Arena (seed 001): +1 multiplier per koi-koi, brights on the table multiply, "
    "50 points each that the loser pays, 6 hands",
    "boardgame": "the boxed board game (seed 002): wild sake cup, sake yaku only as a bonus, tsukifuda, "
    "first to 50 (needs birth months)",
    "cardavia": "Cardavia (seed 003): a single hand, higher bright values, no sake yaku, no multipliers",
    "wikipedia": "Wikipedia (seed 004): 7+ doubles, winning after the opponent's koi-koi doubles, "
    "1 point to the dealer when the stock runs out",
    "nintendo": "Nintendo's rule sheet: +1 per extra card on ino-shika-cho/akatan/aotan, akatan+aotan "
    "10, 7+ and the opponent's koi-koi double",
    "traditional-all-doubles": "seed 000 with all doublings: 7+, one's own koi-koi and the opponent's "
    "koi-koi each double (x2 x2 = x4)",
    "koikoi-japan": "KoiKoi-Japan as KoiKoi-AI plays it: 8 hands from 30 points each, +1 point per own "
    "koi-koi (x2 from the fourth), sake yaku 1 (3 after one's koi-koi), akatan+aotan 10 more, redeal on "
    "four of a month in a hand",
}

_ALIASES = {
    "trad": "traditional",
    "boardgamearena": "bga",
    "board-game-arena": "bga",
    "board": "boardgame",
    "wiki": "wikipedia",
    "nintendo-hanafuda": "nintendo",
    "all-doubles": "traditional-all-doubles",
    "kkj": "koikoi-japan",
    "kkai": "koikoi-japan",
}


def preset(name: str) -> RuleSet:
    """The named preset (case-insensitive)."""
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key in PRESETS:
        return PRESETS[key]
    close = difflib.get_close_matches(key, PRESET_NAMES, n=2, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise RuleError(f"unknown preset {name!r}{hint} (presets: {', '.join(PRESET_NAMES)})")


MAX_RULES_FILE_BYTES = 64 * 1024  # a rules file with every option and a comment on each is under 8 KB
_MAX_RULES_DEPTH = 4  # [rules] and inline tables: a rules file nests no deeper than 2
_MAX_KEY_DOTS = 8  # tomllib's work grows with the square of a dotted key's parts; rules.goko has one dot


def load_rules(path: str | Path) -> RuleSet:
    """A rule set from a TOML file: ``preset = "bga"`` then options to override.

    Options may sit at the top level or in a ``[rules]`` table. A file over
    :data:`MAX_RULES_FILE_BYTES`, nested deeper than a rules file needs, or with a key of many dotted
    parts is refused before the TOML parser sees it (with :class:`RuleError`, as every other problem).
    """
    p = Path(path)
    try:
        with open(p, "rb") as f:
            raw = f.read(MAX_RULES_FILE_BYTES + 1)
    except OSError as e:
        raise RuleError(f"cannot read rules file {p}: {e.strerror or e}") from None
    if len(raw) > MAX_RULES_FILE_BYTES:
        raise RuleError(
            f"rules file {p} is too large: over {MAX_RULES_FILE_BYTES // 1024} KB "
            f"(a rules file holds a few dozen options)"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RuleError(f"rules file {p} is not UTF-8 text (byte {e.start})") from None
    return rules_from_toml(text, str(p))


def rules_from_toml(text: str, source: str = "<text>") -> RuleSet:
    """A rule set from the text of a rules file (see :func:`load_rules`); ``source`` names it in errors.

    Its work grows with the length of the text, never with its square, whatever the text holds.

    >>> rules_from_toml('preset = "bga"\\n[rules]\\nhands = 3').hands
    3
    """
    p = source
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_RULES_FILE_BYTES:
        raise RuleError(
            f"rules file {p} is too large: over {MAX_RULES_FILE_BYTES // 1024} KB "
            f"(a rules file holds a few dozen options)"
        )
    try:
        check_toml_depth(text, _MAX_RULES_DEPTH)
    except NestingError as e:
        raise RuleError(f"rules file {p} is not a rules file: its arrays and tables are {e}") from None
    dots = max((line.count(".") for line in without_toml_strings(text).splitlines()), default=0)
    if dots > _MAX_KEY_DOTS:
        raise RuleError(
            f"rules file {p} is not a rules file: a line holds a key or value of {dots + 1} "
            f"dotted parts (at most {_MAX_KEY_DOTS + 1})"
        )
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise RuleError(f"rules file {p} is not valid TOML: {e}") from None
    except ValueError as e:  # int() refuses a whole number of more than 4300 digits, not as TOML
        problem = "a whole number of too many digits" if "digits" in str(e) else str(e)
        raise RuleError(f"rules file {p} is not a rules file: {problem}") from None
    if "rules" in data and isinstance(data["rules"], dict):
        rest = {k: v for k, v in data.items() if k != "rules"}
        data = {**rest, **data["rules"]}
    try:
        return RuleSet.from_dict(data)
    except RuleError as e:
        raise RuleError(f"rules file {p}: {e}") from None
