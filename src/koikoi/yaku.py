"""Yaku: the scoring combinations of a capture pile under a rule set (docs/rules.md section 3).

>>> from koikoi.cards import cards_mask
>>> from koikoi.rules import preset
>>> pile = cards_mask(["pine-crane", "cherry-curtain", "pampas-moon", "chrysanthemum-sake"])
>>> [(y.name, y.points) for y in evaluate(pile, preset("traditional"))]
[('sanko', 5), ('tsukimi-zake', 5), ('hanami-zake', 5)]
>>> score(pile, preset("traditional"))
15
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, Protocol

from .cards import (
    ANIMALS,
    BLUE_RIBBONS,
    BRIGHTS,
    CHAFF,
    CURTAIN,
    INO_SHIKA_CHO,
    MONTH_MASKS,
    MOON,
    POETRY_RIBBONS,
    RAIN_MAN,
    RIBBONS,
    SAKE_CUP,
    WILLOW,
)
from .rules import RULES_VERSION, RuleSet

__all__ = [
    "Yaku",
    "YAKU_NAMES",
    "evaluate",
    "evaluator",
    "score",
    "scorer",
    "raiser",
    "total_tells",
    "may_score",
    "GATE_TABLES",
    "GATE_BIAS",
    "GATE_TOPS",
    "yaku_progress",
]

YAKU_NAMES = (
    "goko",
    "shiko",
    "ame-shiko",
    "sanko",
    "ino-shika-cho",
    "akatan-aotan",
    "akatan",
    "aotan",
    "tane",
    "tanzaku",
    "kasu",
    "tsukimi-zake",
    "hanami-zake",
    "tsukifuda",
)


class Yaku(NamedTuple):
    name: str
    points: int


_ANIMALS_NO_SAKE = ANIMALS & ~SAKE_CUP
_CHAFF_WITH_SAKE = CHAFF | SAKE_CUP
_SAKE_PARTNERS = MOON | CURTAIN

# The score gate. Most piles in play score nothing: exactly those with fewer than three brights, five
# animals, five ribbons and ten chaff-or-sake, no trio complete (ino-shika-cho, the poetry ribbons, the
# blue ribbons), no sake cup beside the moon or the curtain and, where tsukifuda counts, not all four
# cards of the hand's month. All but the last are read at once: each pile's counts are packed into one
# int, a field per count, and a field's top bit is set by adding ``GATE_BIAS`` exactly when the count
# reaches its threshold (the sake field counts the cup twice and the moon and the curtain once, so that
# it reaches 3 exactly with a pair). The packed counts of a pile are the sum of those of its four
# 12-card chunks, looked up in ``GATE_TABLES``: the engine tests ``may_score`` inline after every
# capture, where a call would cost as much as the test.
_GATE_FIELDS = (  # (mask, field width in bits, threshold)
    (BRIGHTS, 4, 3),
    (ANIMALS, 4, 5),
    (RIBBONS, 4, 5),
    (_CHAFF_WITH_SAKE, 5, 10),
    (INO_SHIKA_CHO, 3, 3),
    (POETRY_RIBBONS, 3, 3),
    (BLUE_RIBBONS, 3, 3),
)
_SAKE_FIELD = sum(width for _, width, _ in _GATE_FIELDS)  # then 3 bits: 2 * cup + moon + curtain, threshold 3


def _gate_counts(pile: int) -> int:
    packed, shift = 0, 0
    for mask, width, _ in _GATE_FIELDS:
        packed += (pile & mask).bit_count() << shift
        shift += width
    sake = 2 * (pile & SAKE_CUP).bit_count() + (pile & _SAKE_PARTNERS).bit_count()
    return packed + (sake << _SAKE_FIELD)


GATE_BIAS = sum(((1 << (w - 1)) - t) << sum(x[1] for x in _GATE_FIELDS[:k]) for k, (_, w, t) in enumerate(_GATE_FIELDS))
GATE_BIAS += (4 - 3) << _SAKE_FIELD
GATE_TOPS = sum(1 << (sum(x[1] for x in _GATE_FIELDS[:k]) + w - 1) for k, (_, w, _) in enumerate(_GATE_FIELDS))
GATE_TOPS |= 4 << _SAKE_FIELD
_shared: dict[int, int] = {}  # one int object per distinct value: the tables stay small
GATE_TABLES: tuple[tuple[int, ...], ...] = tuple(
    tuple(_shared.setdefault(v, v) for v in map(_gate_counts, (x << (12 * k) for x in range(4096)))) for k in range(4)
)
del _shared
_G0, _G1, _G2, _G3 = GATE_TABLES


def may_score(pile: int, tsukifuda_month: int = 1 << 48) -> bool:
    """False when ``pile`` scores nothing under any rule set: no count at its threshold, no trio, no
    sake pair, and not all of ``tsukifuda_month`` (a month's mask where tsukifuda counts; by default a
    mask no pile holds). True means the pile may score: the scorer then reads it."""
    return (
        bool(
            (_G0[pile & 4095] + _G1[pile >> 12 & 4095] + _G2[pile >> 24 & 4095] + _G3[pile >> 36] + GATE_BIAS)
            & GATE_TOPS
        )
        or pile & tsukifuda_month == tsukifuda_month
    )


def _collect(
    pile: int, r: RuleSet, month: int | None, sake_animal: bool, sake_chaff: bool, out: list[Yaku], old: bool = False
) -> int:
    """Append the yaku of ``pile`` to ``out`` and return their total, with the sake cup counted as told.

    ``old``: score as rules version 1 did (before the rulings of issue 11, for older records): the
    bonus-only sake yaku beside any yaku, tsukifuda too; not_with_brights voids the sake yaku beside a
    bright yaku; akatan_plus with aotan_plus counts the other set's ribbons as extras too.
    """
    total = 0
    start = len(out)  # ``out`` may already hold another reading's yaku (the fast scorer's sink)
    brights = (pile & BRIGHTS).bit_count()
    if brights >= 3:
        rain = pile & RAIN_MAN
        name = None
        if brights == 5:
            name, pts = "goko", r.goko
        elif brights == 4:
            name, pts = ("ame-shiko", r.ame_shiko) if rain else ("shiko", r.shiko)
        elif not rain:
            name, pts = "sanko", r.sanko
        if name is not None and pts:
            out.append(Yaku(name, pts))
            total += pts
    bright_pts = total
    animals = (pile & (ANIMALS if sake_animal else _ANIMALS_NO_SAKE)).bit_count()
    ribbons = (pile & RIBBONS).bit_count()
    if r.ino_shika_cho and pile & INO_SHIKA_CHO == INO_SHIKA_CHO:
        pts = r.ino_shika_cho + (animals - 3 if r.ino_shika_cho_plus else 0)
        out.append(Yaku("ino-shika-cho", pts))
        total += pts
    aka = pile & POETRY_RIBBONS == POETRY_RIBBONS
    ao = pile & BLUE_RIBBONS == BLUE_RIBBONS
    both = aka and ao and r.akatan_aotan
    if both:
        pts = r.akatan_aotan + (ribbons - 6 if r.akatan_plus or r.aotan_plus else 0)
        out.append(Yaku("akatan-aotan", pts))
        total += pts
    if not both or r.akatan_aotan_adds:  # akatan_aotan_adds: the pair's points come on top of each set's
        # With both +1 options and both sets held, each extra ribbon counts once: only the ribbons
        # outside both sets are extras, and they go to akatan alone (docs/rules-notes.md).
        shared = aka and ao and r.akatan_plus and r.aotan_plus and not old
        if aka and r.akatan:
            pts = r.akatan + ((ribbons - 6 if shared else ribbons - 3) if r.akatan_plus else 0)
            out.append(Yaku("akatan", pts))
            total += pts
        if ao and r.aotan:
            pts = r.aotan + (ribbons - 3 if r.aotan_plus and not shared else 0)
            out.append(Yaku("aotan", pts))
            total += pts
    if animals >= 5 and r.tane:
        pts = r.tane + animals - 5
        out.append(Yaku("tane", pts))
        total += pts
    if ribbons >= 5 and r.tanzaku:
        pts = r.tanzaku + ribbons - 5
        out.append(Yaku("tanzaku", pts))
        total += pts
    chaff = (pile & (_CHAFF_WITH_SAKE if sake_chaff else CHAFF)).bit_count()
    if chaff >= 10 and r.kasu:
        pts = r.kasu + chaff - 10
        out.append(Yaku("kasu", pts))
        total += pts
    normal = total  # the normal yaku; tsukifuda is a special yaku (seed 002), as the sake yaku are
    if month is not None and r.tsukifuda:
        m = MONTH_MASKS[month - 1]
        if pile & m == m:
            out.append(Yaku("tsukifuda", r.tsukifuda))
            total += r.tsukifuda
    if pile & SAKE_CUP and pile & (MOON | CURTAIN):
        sake = r.sake_yaku
        if old:
            allowed = (
                sake == "on"
                or (sake == "rain_ruins" and not pile & WILLOW)
                or (sake == "rainman_ruins" and not pile & RAIN_MAN)
                or (sake == "bonus_only" and total > 0)
                or (sake == "not_with_brights" and not bright_pts)
            )
            sake = "on"  # no better-of reading below
        else:
            allowed = (
                sake in ("on", "not_with_brights")
                or (sake == "rain_ruins" and not pile & WILLOW)
                or (sake == "rainman_ruins" and not pile & RAIN_MAN)
                or (sake == "bonus_only" and normal > 0)
            )
        if allowed:
            pts = (r.tsukimi_zake if pile & MOON else 0) + (r.hanami_zake if pile & CURTAIN else 0)
            if sake == "not_with_brights" and bright_pts:
                # The better of the bright yaku and the sake yaku counts; a tie keeps the bright yaku.
                if pts > bright_pts:
                    del out[start]  # the bright yaku is always the first one appended
                    total -= bright_pts
                else:
                    pts = 0
            if pts:
                if pile & MOON and r.tsukimi_zake:
                    out.append(Yaku("tsukimi-zake", r.tsukimi_zake))
                if pile & CURTAIN and r.hanami_zake:
                    out.append(Yaku("hanami-zake", r.hanami_zake))
                total += pts
    return total


def evaluate(pile: int, rules: RuleSet, month: int | None = None, version: int = RULES_VERSION) -> list[Yaku]:
    """Every yaku the capture pile ``pile`` scores; ``month`` (1..12) is the hand's month, for tsukifuda.

    ``version`` is the engine's rules version (:data:`koikoi.rules.RULES_VERSIONS`); only records of
    an older one ask for it.
    """
    old = version < 2
    if rules.sake_cup == "both" or not pile & SAKE_CUP:  # without the sake cup every mode counts alike
        out: list[Yaku] = []
        _collect(pile, rules, month, True, True, out, old)
        return out
    as_animal: list[Yaku] = []
    total_animal = _collect(pile, rules, month, True, False, as_animal, old)
    if rules.sake_cup == "animal_only":
        return as_animal
    as_chaff: list[Yaku] = []
    total_chaff = _collect(pile, rules, month, False, True, as_chaff, old)
    return as_chaff if total_chaff > total_animal else as_animal


_EVALUATORS: dict[int, tuple[RuleSet, int, Callable[[int, int | None], tuple[Yaku, ...]]]] = {}


# What a pile scores depends only on its counts (brights, animals, ribbons, chaff-or-sake), which trios
# it completes, which of the rain man, moon, curtain, sake cup and willow cards it holds, and whether it
# holds all of the hand's month (where tsukifuda counts): no rule looks at any other card by itself. So
# the scorer and the yaku lists are memoised by that signature, which far fewer piles share than cards.
_SIGNATURE_CARDS = RAIN_MAN | MOON | CURTAIN | SAKE_CUP | WILLOW


def _signature(pile: int, month: int | None, tsukifuda: int) -> int:
    """The memo key of ``pile``: the score gate's packed counts, the cards above, tsukifuda's month."""
    full = False
    if tsukifuda and month:
        m = MONTH_MASKS[month - 1]
        full = pile & m == m
    g = _G0[pile & 4095] + _G1[pile >> 12 & 4095] + _G2[pile >> 24 & 4095] + _G3[pile >> 36]
    return g | (pile & _SIGNATURE_CARDS) << 29 | full << 80


def evaluator(rules: RuleSet, version: int = RULES_VERSION) -> Callable[[int, int | None], tuple[Yaku, ...]]:
    """A memoised :func:`evaluate` for one rule set: ``(pile, month) -> the yaku``, as a tuple. Every
    hand that ends by a stop lists its yaku, and so does every observation."""
    entry = _EVALUATORS.get(id(rules))
    if entry is not None and entry[0] is rules and entry[1] == version:
        return entry[2]
    memo: dict[int, tuple[Yaku, ...]] = {}
    tsukifuda = rules.tsukifuda

    def listed(pile: int, month: int | None = None) -> tuple[Yaku, ...]:
        key = _signature(pile, month, tsukifuda)
        got = memo.get(key)
        if got is None:
            if len(memo) >= _SPEED_CACHE_LIMIT:
                memo.clear()
            got = memo[key] = tuple(evaluate(pile, rules, month, version))
        return got

    if len(_EVALUATORS) > 256:
        _EVALUATORS.clear()
    _EVALUATORS[id(rules)] = (rules, version, listed)
    return listed


def score(pile: int, rules: RuleSet, month: int | None = None, version: int = RULES_VERSION) -> int:
    """The total points of the yaku in ``pile``, before multipliers."""
    return scorer(rules, version)(pile, month)


# Self-play evaluates the same piles again and again (every turn, in every simulation); a bounded
# memo per rule set keeps that cheap without growing without end.
_SPEED_CACHE_LIMIT = 1 << 16
_SCORERS: dict[int, tuple[RuleSet, Callable[[int, int | None], int]]] = {}


def scorer(rules: RuleSet, version: int = RULES_VERSION) -> Callable[[int, int | None], int]:
    """A fast ``(pile, month) -> total`` function for one rule set, memoised per pile."""
    if version != RULES_VERSION:  # an older record's replay: rare, so not memoised across hands
        return _make_scorer(rules, version < 2)
    # Keyed by identity: hashing a rule set walks all its options, which costs more than scoring.
    entry = _SCORERS.get(id(rules))
    if entry is not None and entry[0] is rules:
        return entry[1]
    fn = _make_scorer(rules, False)
    if len(_SCORERS) > 256:
        _SCORERS.clear()
    _SCORERS[id(rules)] = (rules, fn)
    return fn


def _make_scorer(rules: RuleSet, old: bool) -> Callable[[int, int | None], int]:
    cache: dict[int, int] = {}
    sink: list[Yaku] = []
    mode = rules.sake_cup
    tsukifuda = rules.tsukifuda
    g0, g1, g2, g3, bias, tops = _G0, _G1, _G2, _G3, GATE_BIAS, GATE_TOPS

    def total(pile: int, month: int | None = None) -> int:
        g = g0[pile & 4095] + g1[pile >> 12 & 4095] + g2[pile >> 24 & 4095] + g3[pile >> 36]
        full = False
        if tsukifuda and month:
            m = MONTH_MASKS[month - 1]
            full = pile & m == m
        # The score gate (may_score, inlined): most piles in play score nothing.
        if not full and not (g + bias) & tops:
            return 0
        key = g | (pile & _SIGNATURE_CARDS) << 29 | full << 80  # _signature, inlined
        got = cache.get(key)
        if got is not None:
            return got
        if mode == "both" or not pile & SAKE_CUP:  # without the sake cup every mode counts alike
            value = _collect(pile, rules, month, True, True, sink, old)
        elif mode == "animal_only":
            value = _collect(pile, rules, month, True, False, sink, old)
        else:  # either: the sake cup's kind only matters where it tips a count over its threshold
            as_animal = (pile & ANIMALS).bit_count() >= 5 or (
                rules.ino_shika_cho_plus and pile & INO_SHIKA_CHO == INO_SHIKA_CHO
            )
            as_chaff = (pile & _CHAFF_WITH_SAKE).bit_count() >= 10
            value = 0
            if as_animal or not as_chaff:
                value = _collect(pile, rules, month, True, False, sink, old)
            if as_chaff:
                value = max(value, _collect(pile, rules, month, False, True, sink, old))
        sink.clear()
        if len(cache) >= _SPEED_CACHE_LIMIT:
            cache.clear()
        cache[key] = value
        return value

    return total


_RAISERS: dict[int, tuple[RuleSet, Raiser]] = {}


def total_tells(r: RuleSet) -> bool:
    """Whether, under ``r``, a turn makes a new or larger yaku exactly when the pile's total grows.

    Then :func:`raiser` (and the batch) need not compare the yaku by name. It holds when no yaku can lose points
    as cards are added (no sake yaku voided by willow or the rain man or by brights, no sake cup read
    whichever way scores more, no ribbon extras moved between akatan and aotan) and every yaku that
    takes another's place scores strictly more than it (sanko, shiko / ame-shiko, goko; akatan or aotan,
    then both at once). Whatever else the rules are, the exact check runs.
    """
    if r.sake_yaku not in ("on", "off", "bonus_only") or r.sake_cup == "either":
        return False
    if r.akatan_plus and r.aotan_plus and not r.akatan_aotan:
        return False  # the extras move from akatan and aotan to akatan alone when both are held

    def rises(old: int, new: int) -> bool:  # a replacement that can keep or lower the total
        return not (old > 0 and new > 0) or new > old

    brights = [(r.sanko, r.shiko), (r.sanko, r.ame_shiko), (r.shiko, r.goko), (r.ame_shiko, r.goko)]
    if not all(rises(a, b) for a, b in brights):
        return False
    if r.akatan_aotan and not r.akatan_aotan_adds:  # (on top of each set's points, the total only grows)
        # Completing the second set: akatan (or aotan) with its extras (all ribbons but 3) becomes the
        # combined yaku with its extras (all but 6), so the combined yaku must beat it by more than 2.
        margin = 2 if r.akatan_plus or r.aotan_plus else 0
        if any(single and r.akatan_aotan - margin <= single for single in (r.akatan, r.aotan)):
            return False
    return True


class Raiser(Protocol):
    def __call__(self, before: int, after: int, month: int | None = None, after_score: int | None = None) -> bool: ...


def raiser(rules: RuleSet) -> Raiser:
    """A ``(before, after, month) -> bool`` function: does the pile ``after`` hold a yaku that ``before``
    did not, or one with more points? (``after_score``, where the caller has it, is the total of ``after``:
    then it is not looked up again.) That is when a turn offers the stop/koi-koi decision (docs/rules.md, "Rulings";
    seed 002: "wins another Yaku OR increases their previous Yaku"), whatever the total does: under
    options that can lower a score (sake_yaku rain_ruins, rainman_ruins, not_with_brights) a new yaku
    may come with a lower total.
    """
    entry = _RAISERS.get(id(rules))
    if entry is not None and entry[0] is rules:
        return entry[1]
    total = scorer(rules)
    if total_tells(rules):

        def grows(before: int, after: int, month: int | None = None, after_score: int | None = None) -> bool:
            return (total(after, month) if after_score is None else after_score) > total(before, month)

        if len(_RAISERS) > 256:
            _RAISERS.clear()
        _RAISERS[id(rules)] = (rules, grows)
        return grows
    memo: dict[int, dict[str, int]] = {}

    def yaku_map(pile: int, month: int | None) -> dict[str, int]:
        key = pile | ((month or 0) << 48)
        got = memo.get(key)
        if got is None:
            if len(memo) >= _SPEED_CACHE_LIMIT:
                memo.clear()
            got = memo[key] = {y.name: y.points for y in evaluate(pile, rules, month)}
        return got

    def raised(before: int, after: int, month: int | None = None, after_score: int | None = None) -> bool:
        s = total(after, month) if after_score is None else after_score
        if not s:
            return False  # no yaku at all
        if s > total(before, month):
            return True  # a larger sum has at least one yaku larger than before
        held = yaku_map(before, month)
        return any(pts > held.get(name, 0) for name, pts in yaku_map(after, month).items())

    if len(_RAISERS) > 256:
        _RAISERS.clear()
    _RAISERS[id(rules)] = (rules, raised)
    return raised


# -- progress towards the yaku ----------------------------------------------------------------


def yaku_progress(pile: int, rules: RuleSet, month: int | None = None) -> list[tuple[str, int, int]]:
    """(yaku, cards held, cards needed) for every yaku the rule set scores that the pile has started.

    >>> from koikoi.cards import cards_mask
    >>> from koikoi.rules import preset
    >>> yaku_progress(cards_mask(["clover-boar", "maple-deer", "pine-poetry"]), preset("traditional"))
    [('ino-shika-cho', 2, 3), ('akatan', 1, 3), ('tane', 2, 5), ('tanzaku', 1, 5)]
    """
    out: list[tuple[str, int, int]] = []
    sake_chaff = rules.sake_cup in ("both", "either")
    brights = (pile & BRIGHTS).bit_count()
    if brights and (rules.sanko or rules.shiko or rules.ame_shiko or rules.goko):
        if brights < 3:
            out.append(("brights", brights, 3))
        elif brights < 5 and rules.goko:
            out.append(("brights", brights, 5))
    if rules.ino_shika_cho and pile & INO_SHIKA_CHO:
        out.append(("ino-shika-cho", (pile & INO_SHIKA_CHO).bit_count(), 3))
    if (rules.akatan or rules.akatan_aotan) and pile & POETRY_RIBBONS:
        out.append(("akatan", (pile & POETRY_RIBBONS).bit_count(), 3))
    if (rules.aotan or rules.akatan_aotan) and pile & BLUE_RIBBONS:
        out.append(("aotan", (pile & BLUE_RIBBONS).bit_count(), 3))
    animals = (pile & ANIMALS).bit_count()  # the sake cup is an animal under every rule set
    if rules.tane and animals:
        out.append(("tane", animals, max(5, animals + 1)))
    ribbons = (pile & RIBBONS).bit_count()
    if rules.tanzaku and ribbons:
        out.append(("tanzaku", ribbons, max(5, ribbons + 1)))
    chaff = (pile & (CHAFF | SAKE_CUP if sake_chaff else CHAFF)).bit_count()
    if rules.kasu and chaff:
        out.append(("kasu", chaff, max(10, chaff + 1)))
    if rules.sake_yaku != "off" and pile & (SAKE_CUP | MOON | CURTAIN):
        if rules.tsukimi_zake and pile & (SAKE_CUP | MOON):
            out.append(("tsukimi-zake", (pile & (SAKE_CUP | MOON)).bit_count(), 2))
        if rules.hanami_zake and pile & (SAKE_CUP | CURTAIN):
            out.append(("hanami-zake", (pile & (SAKE_CUP | CURTAIN)).bit_count(), 2))
    if month is not None and rules.tsukifuda and pile & MONTH_MASKS[month - 1]:
        out.append(("tsukifuda", (pile & MONTH_MASKS[month - 1]).bit_count(), 4))
    # Only what is still to be made: a complete yaku shows among the yaku, with its points.
    return [(n, have, need) for n, have, need in out if have < need]
