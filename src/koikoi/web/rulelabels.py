"""A game's rules in the player's words: the preset's name, and what differs from it.

A game stores its whole rule set, named after the preset it started from; the web marks one whose
options were changed ``"nintendo (custom)"``. That name is for the rematch, not for people: a list
shows "Nintendo" and, when real options differ from the preset, each of them briefly ("Nintendo ·
Koi-koi bonus: ×2 after any koi-koi, Sake yaku: off"). The match length (``hands``, ``target_score``) is
no rule change: pages show it on its own (:func:`match_length`).

Every page and API that shows a game's rules goes through here. The server's pages call
:func:`rules_label`; the JSON that the pages' scripts render (the lobby's lists, which one push serves
to every language) carries :func:`rules_shown` and common.js ``rulesLabel`` words it with the same
texts (``rulelabel.*``, ``opt.*``, ``choice.*``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from ..rules import PRESETS, YAKU_OPTIONS
from .i18n import Translator

__all__ = [
    "CUSTOM_SUFFIX",
    "LENGTH_OPTIONS",
    "LIST_CHANGES",
    "base_preset",
    "change_text",
    "match_length",
    "rule_changes",
    "rules_label",
    "rules_shown",
    "shown_label",
]

CUSTOM_SUFFIX = " (custom)"  # what koikoi.web.games adds to the name of a preset whose options changed
# The match length: shown apart from the rules, never as a change of them.
LENGTH_OPTIONS = frozenset({"hands", "target_score"})
# Not options: the rule set's name, and the engine's rulings version kept beside a stored game's rules.
_NOT_OPTIONS = frozenset({"name", "rules_version"})
# Points options where 0 turns the thing off: "off" reads better than "0".
_OFF_AT_ZERO = frozenset(YAKU_OPTIONS) | {"hand_bonus"}
_SHOWN_CHARS = 40  # a name or value from a record file, cut to this many characters
LIST_CHANGES = 3  # changes a list names before "+N more"


def base_preset(rules: Mapping[str, Any]) -> str | None:
    """The preset a rule set started from (its name without the web's " (custom)"), or None when its
    name is no preset's (a record from elsewhere, "custom", damage)."""
    name = rules.get("name")
    if not isinstance(name, str):
        return None
    base = name.removesuffix(CUSTOM_SUFFIX)
    return base if base in PRESETS else None


def rule_changes(rules: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(option, value) for each option of ``rules`` that differs from its preset, in the order of the
    options; the match length is left out. Empty when the rules follow no preset."""
    base = base_preset(rules)
    if base is None:
        return []
    preset = _preset_options(base)
    return [
        (option, rules[option])
        for option, value in preset.items()
        if option not in _NOT_OPTIONS
        and option not in LENGTH_OPTIONS
        and option in rules
        and (rules[option] != value or type(rules[option]) is not type(value))
    ]


@cache
def _preset_options(base: str) -> Mapping[str, Any]:
    # A preset's options, worked out once: every listed game compares its rules with them.
    return PRESETS[base].to_dict()


def rules_shown(rules: Mapping[str, Any]) -> dict[str, Any]:
    """A rule set as a page's script words it: ``{"preset": base or None, "name": the stored name (cut),
    "changes": [{"option", "value"}]}`` (common.js ``rulesLabel``)."""
    name = rules.get("name")
    return {
        "preset": base_preset(rules),
        "name": name[:_SHOWN_CHARS] if isinstance(name, str) else None,
        "changes": [{"option": o, "value": _plain(v)} for o, v in rule_changes(rules)],
    }


def _plain(value: Any) -> Any:
    """A value as JSON may carry it to a script: a bool, a number or a short text."""
    if isinstance(value, (bool, int)):
        return value
    return str(value)[:_SHOWN_CHARS]


def change_text(tr: Translator, option: str, value: Any) -> str:
    """One changed option in words: "Koi-koi bonus: ×2 after any koi-koi", "Sake yaku: off"."""
    if isinstance(value, bool):
        shown = tr("rules.yes" if value else "rules.no")
    elif isinstance(value, int):
        shown = tr("rules.off") if value == 0 and option in _OFF_AT_ZERO else str(value)
    else:
        text = str(value)[:_SHOWN_CHARS]
        key = f"choice.{option}.{text}"
        shown = tr(key) if key in tr.catalog else text
    return tr("rulelabel.change", option=tr(f"opt.{option}"), value=shown)


def rules_label(tr: Translator, rules: Mapping[str, Any], limit: int | None = None) -> str:
    """The rule set in words: "Nintendo", or "Nintendo · Koi-koi bonus: ×2 after any koi-koi"; with
    ``limit``, at most that many changes and then "+N more". A name that is no preset's is shown as it
    is ("custom": "Custom rules"); "?" for none."""
    return shown_label(tr, rules_shown(rules), limit)


def shown_label(tr: Translator, shown: Mapping[str, Any] | None, limit: int | None = None) -> str:
    """:func:`rules_label` of what :func:`rules_shown` gave (as common.js ``rulesLabel`` words it)."""
    if shown is None:
        return "?"
    base = shown["preset"]
    if base is None:
        name = shown["name"]
        return tr("rulelabel.custom") if name == "custom" else name or "?"
    changes = shown["changes"]
    if not changes:
        return tr(f"preset.{base}")
    named = changes if limit is None else changes[:limit]
    texts = [change_text(tr, c["option"], c["value"]) for c in named]
    if len(named) < len(changes):
        more = len(changes) - len(named)
        texts.append(tr.plural("rulelabel.more", more, n=more))
    return tr("rulelabel.with", preset=tr(f"preset.{base}"), changes=tr("rulelabel.separator").join(texts))


def match_length(tr: Translator, rules: Mapping[str, Any]) -> str:
    """How long a match under ``rules`` runs, in words: "12 hands", or "until 50 points"; "?" when its
    stored length cannot be read."""
    hands, target = rules.get("hands"), rules.get("target_score")
    if type(hands) is int and hands > 0:
        return tr.plural("lobby.hands", hands, n=hands)
    if hands == 0 and type(target) is int and target > 0:
        return tr.plural("lobby.until_target", target, target=target)
    return "?"
