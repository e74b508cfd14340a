"""Koi-Koi: the hanafuda card game, as an exact, fast rules engine.

>>> import koikoi
>>> m = koikoi.Match(koikoi.preset("wikipedia"), seed=42)
>>> m.current_player in (0, 1) and bool(m.legal_actions())
True
"""

from ._version import __version__
from .actions import (
    DECLARE,
    KOIKOI,
    NUM_ACTIONS,
    STOP,
    ActionParseError,
    action_name,
    draw_take_action,
    parse_action,
    play_action,
)
from .cards import CARD_NAMES, Kind, UnknownCardError, card, card_name, cards_mask, mask_to_names, month_of
from .hand import Hand, HandResult, IllegalActionError, Phase
from .match import Match, MatchOutcome, ScriptedChance, SeededChance
from .observation import Observation, Positions, positions
from .rules import PRESET_NAMES, PRESETS, RuleError, RuleSet, load_rules, preset
from .yaku import Yaku, evaluate, score

__all__ = [
    "DECLARE",
    "KOIKOI",
    "NUM_ACTIONS",
    "STOP",
    "ActionParseError",
    "action_name",
    "draw_take_action",
    "parse_action",
    "play_action",
    "CARD_NAMES",
    "Kind",
    "UnknownCardError",
    "card",
    "card_name",
    "cards_mask",
    "mask_to_names",
    "month_of",
    "Hand",
    "HandResult",
    "IllegalActionError",
    "Phase",
    "Match",
    "MatchOutcome",
    "ScriptedChance",
    "SeededChance",
    "Observation",
    "Positions",
    "positions",
    "PRESET_NAMES",
    "PRESETS",
    "RuleError",
    "RuleSet",
    "load_rules",
    "preset",
    "Yaku",
    "evaluate",
    "score",
    "__version__",
]
