"""What the computer players count as worth chasing: the yaku of a rule set as card sets to collect.

Shared by the heuristic players (:mod:`koikoi.ai.heuristic`) and the search's playout policies
(:mod:`koikoi.ai.fastplay`); it imports no other player module, so neither imports the other for it.
"""

from __future__ import annotations

from ..cards import (
    ANIMALS,
    BLUE_RIBBONS,
    BRIGHTS,
    CHAFF,
    CURTAIN,
    INO_SHIKA_CHO,
    MOON,
    POETRY_RIBBONS,
    RAIN_MAN,
    RIBBONS,
    SAKE_CUP,
)
from ..rules import RuleSet

__all__ = ["YakuTarget", "yaku_targets"]

# (mask of cards, how many of them a yaku needs, its points)
YakuTarget = tuple[int, int, float]

_NON_RAIN_BRIGHTS = BRIGHTS & ~RAIN_MAN


def _yaku_targets(rules: RuleSet) -> list[YakuTarget]:
    out: list[YakuTarget] = []
    if rules.sanko:
        out.append((_NON_RAIN_BRIGHTS, 3, rules.sanko))
    if rules.ino_shika_cho:
        out.append((INO_SHIKA_CHO, 3, rules.ino_shika_cho))
    if rules.akatan:
        out.append((POETRY_RIBBONS, 3, rules.akatan))
    if rules.aotan:
        out.append((BLUE_RIBBONS, 3, rules.aotan))
    if rules.tane:
        out.append((ANIMALS, 5, rules.tane))
    if rules.tanzaku:
        out.append((RIBBONS, 5, rules.tanzaku))
    if rules.kasu:
        out.append((CHAFF | (SAKE_CUP if rules.sake_cup != "animal_only" else 0), 10, rules.kasu))
    if rules.sake_yaku != "off":
        if rules.tsukimi_zake:
            out.append((MOON | SAKE_CUP, 2, rules.tsukimi_zake))
        if rules.hanami_zake:
            out.append((CURTAIN | SAKE_CUP, 2, rules.hanami_zake))
    return out


_TARGETS: dict[int, tuple[RuleSet, list[YakuTarget]]] = {}


def yaku_targets(rules: RuleSet) -> list[YakuTarget]:
    """(mask of cards, how many are needed, points) for each yaku worth chasing under ``rules``, made
    once per rule set (the list is shared: do not change it).

    >>> from koikoi.rules import preset
    >>> from koikoi.cards import INO_SHIKA_CHO
    >>> (INO_SHIKA_CHO, 3, 5) in yaku_targets(preset("nintendo"))
    True
    """
    got = _TARGETS.get(id(rules))
    if got is None or got[0] is not rules:
        got = (rules, _yaku_targets(rules))
        _TARGETS[id(rules)] = got
    return got[1]
