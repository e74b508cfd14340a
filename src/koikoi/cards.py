"""The 48 hanafuda cards as small ints, and sets of cards as 48-bit int masks.

A card is ``(month - 1) * 4 + index``; within a month the cards run bright, animal,
ribbon, chaff, as in the table of docs/rules.md section 1.

>>> card("pine-crane"), card_name(47)
(0, 'paulownia-plain-3')
>>> month_of(card("Willow-Rainman"))
11
>>> mask_to_names(cards_mask(["maple-deer", "clover-boar"]))
['clover-boar', 'maple-deer']
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from enum import IntEnum

__all__ = [
    "Kind",
    "CARD_NAMES",
    "NUM_CARDS",
    "FULL_DECK",
    "MONTH_MASKS",
    "MONTH_NAMES",
    "BRIGHTS",
    "ANIMALS",
    "RIBBONS",
    "CHAFF",
    "POETRY_RIBBONS",
    "BLUE_RIBBONS",
    "RED_RIBBONS",
    "INO_SHIKA_CHO",
    "RAIN_MAN",
    "SAKE_CUP",
    "MOON",
    "CURTAIN",
    "WILLOW",
    "UnknownCardError",
    "card",
    "card_name",
    "cards_mask",
    "iter_cards",
    "card_list",
    "BYTE_CARDS",
    "mask_to_names",
    "month_of",
    "kind_of",
    "bit",
]

NUM_CARDS = 48
FULL_DECK = (1 << NUM_CARDS) - 1


class Kind(IntEnum):
    BRIGHT = 0
    ANIMAL = 1
    RIBBON = 2
    CHAFF = 3


MONTH_NAMES = (
    "pine",
    "plum",
    "cherry",
    "wisteria",
    "iris",
    "peony",
    "clover",
    "pampas",
    "chrysanthemum",
    "maple",
    "willow",
    "paulownia",
)

# (canonical name, kind, Japanese/romaji aliases) per card, in id order.
_B, _A, _R, _C = Kind.BRIGHT, Kind.ANIMAL, Kind.RIBBON, Kind.CHAFF
CARD_TABLE: tuple[tuple[str, Kind, tuple[str, ...]], ...] = (
    ("pine-crane", _B, ("matsu-ni-tsuru", "crane")),
    ("pine-poetry", _R, ("matsu-no-tan", "matsu-akatan")),
    ("pine-plain-1", _C, ("matsu-kasu-1",)),
    ("pine-plain-2", _C, ("matsu-kasu-2",)),
    ("plum-warbler", _A, ("ume-ni-uguisu", "warbler", "bush-warbler")),
    ("plum-poetry", _R, ("ume-no-tan", "ume-akatan")),
    ("plum-plain-1", _C, ("ume-kasu-1",)),
    ("plum-plain-2", _C, ("ume-kasu-2",)),
    ("cherry-curtain", _B, ("sakura-ni-maku", "curtain", "maku")),
    ("cherry-poetry", _R, ("sakura-no-tan", "sakura-akatan")),
    ("cherry-plain-1", _C, ("sakura-kasu-1",)),
    ("cherry-plain-2", _C, ("sakura-kasu-2",)),
    ("wisteria-cuckoo", _A, ("fuji-ni-hototogisu", "cuckoo", "hototogisu")),
    ("wisteria-ribbon", _R, ("fuji-no-tan",)),
    ("wisteria-plain-1", _C, ("fuji-kasu-1",)),
    ("wisteria-plain-2", _C, ("fuji-kasu-2",)),
    ("iris-bridge", _A, ("ayame-ni-yatsuhashi", "bridge", "yatsuhashi")),
    ("iris-ribbon", _R, ("ayame-no-tan",)),
    ("iris-plain-1", _C, ("ayame-kasu-1",)),
    ("iris-plain-2", _C, ("ayame-kasu-2",)),
    ("peony-butterflies", _A, ("botan-ni-cho", "butterflies", "butterfly", "cho")),
    ("peony-blue", _R, ("botan-no-aotan", "botan-no-tan")),
    ("peony-plain-1", _C, ("botan-kasu-1",)),
    ("peony-plain-2", _C, ("botan-kasu-2",)),
    ("clover-boar", _A, ("hagi-ni-inoshishi", "boar", "inoshishi")),
    ("clover-ribbon", _R, ("hagi-no-tan",)),
    ("clover-plain-1", _C, ("hagi-kasu-1",)),
    ("clover-plain-2", _C, ("hagi-kasu-2",)),
    ("pampas-moon", _B, ("susuki-ni-tsuki", "moon", "tsuki")),
    ("pampas-geese", _A, ("susuki-ni-kari", "geese", "kari")),
    ("pampas-plain-1", _C, ("susuki-kasu-1",)),
    ("pampas-plain-2", _C, ("susuki-kasu-2",)),
    ("chrysanthemum-sake", _A, ("kiku-ni-sakazuki", "sake-cup", "sake", "sakazuki")),
    ("chrysanthemum-blue", _R, ("kiku-no-aotan", "kiku-no-tan")),
    ("chrysanthemum-plain-1", _C, ("kiku-kasu-1",)),
    ("chrysanthemum-plain-2", _C, ("kiku-kasu-2",)),
    ("maple-deer", _A, ("momiji-ni-shika", "deer", "shika")),
    ("maple-blue", _R, ("momiji-no-aotan", "momiji-no-tan")),
    ("maple-plain-1", _C, ("momiji-kasu-1",)),
    ("maple-plain-2", _C, ("momiji-kasu-2",)),
    ("willow-rainman", _B, ("yanagi-ni-ono-no-michikaze", "rain-man", "rainman", "ono-no-michikaze")),
    ("willow-swallow", _A, ("yanagi-ni-tsubame", "swallow", "tsubame")),
    ("willow-ribbon", _R, ("yanagi-no-tan",)),
    ("willow-lightning", _C, ("yanagi-kasu", "lightning", "willow-plain-1")),
    ("paulownia-phoenix", _B, ("kiri-ni-ho-o", "phoenix", "ho-o", "hoo")),
    ("paulownia-plain-1", _C, ("kiri-kasu-1",)),
    ("paulownia-plain-2", _C, ("kiri-kasu-2",)),
    ("paulownia-plain-3", _C, ("kiri-kasu-3",)),
)

CARD_NAMES: tuple[str, ...] = tuple(name for name, _, _ in CARD_TABLE)
_KINDS: tuple[Kind, ...] = tuple(kind for _, kind, _ in CARD_TABLE)


def bit(card_id: int) -> int:
    """The one-card mask of ``card_id``."""
    return 1 << card_id


def _mask(names: Iterable[str]) -> int:
    m = 0
    for n in names:
        m |= 1 << CARD_NAMES.index(n)
    return m


MONTH_MASKS: tuple[int, ...] = tuple(0b1111 << (4 * m) for m in range(12))
BRIGHTS = sum(1 << i for i, k in enumerate(_KINDS) if k is Kind.BRIGHT)
ANIMALS = sum(1 << i for i, k in enumerate(_KINDS) if k is Kind.ANIMAL)
RIBBONS = sum(1 << i for i, k in enumerate(_KINDS) if k is Kind.RIBBON)
CHAFF = sum(1 << i for i, k in enumerate(_KINDS) if k is Kind.CHAFF)
POETRY_RIBBONS = _mask(["pine-poetry", "plum-poetry", "cherry-poetry"])
BLUE_RIBBONS = _mask(["peony-blue", "chrysanthemum-blue", "maple-blue"])
RED_RIBBONS = RIBBONS & ~BLUE_RIBBONS
INO_SHIKA_CHO = _mask(["clover-boar", "maple-deer", "peony-butterflies"])
RAIN_MAN = _mask(["willow-rainman"])
SAKE_CUP = _mask(["chrysanthemum-sake"])
MOON = _mask(["pampas-moon"])
CURTAIN = _mask(["cherry-curtain"])
WILLOW = MONTH_MASKS[10]


class UnknownCardError(ValueError):
    """A card name that is not one of the 48, with the closest names as suggestions."""

    def __init__(self, name: str | int, problem: str | None = None) -> None:
        shown = _shown(name)
        if problem is None:
            close = _close_names(_normal(name)) if isinstance(name, str) and len(name) <= _LONGEST else []
            suggestions = list(dict.fromkeys(CARD_NAMES[_LOOKUP[c]] for c in close))
            hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
            problem = f"unknown card {shown}{hint}"
        else:
            suggestions = []
        super().__init__(problem)
        self.name = name
        self.suggestions = suggestions


def _close_names(name: str) -> list[str]:
    """The names a mistyped ``name`` may have meant: a month's cards for the month alone ("maple"), else
    the nearest names. A short word is near only a very like one: three letters share two with many short
    names ("foo" is not "hoo" nor "moon")."""
    if not name:
        return []
    month = [n for n in _LOOKUP if n.startswith(name + "-")]
    if month:
        return month[:4]
    return difflib.get_close_matches(name, list(_LOOKUP), n=3, cutoff=0.75 if len(name) <= 4 else 0.5)


def _shown(name: object) -> str:
    if isinstance(name, int) and not isinstance(name, bool) and not -(10**12) < name < 10**12:
        return f"<{name.bit_length()}-bit number>"
    text = repr(name)
    return text if len(text) <= 40 else text[:37] + "..."


def _normal(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(" ", "-")


_LOOKUP: dict[str, int] = {}
for _i, (_name, _, _aliases) in enumerate(CARD_TABLE):
    for _alias in (_name, *_aliases):
        _LOOKUP[_normal(_alias)] = _i
_LONGEST = max(map(len, _LOOKUP)) + 8  # longer text is no card name: no suggestions are looked for
_ID = re.compile(r"0|[1-9][0-9]?")  # an id as text: ASCII digits only (int() would take '٣' or '¹' too)


def card(name: str | int) -> int:
    """The id of a card given by name (case-insensitive; romaji aliases accepted) or id (an int, or
    ASCII digits, 0..47); anything else raises :class:`UnknownCardError`.

    >>> card("Pampas Moon"), card(47), card("8")
    (28, 47, 8)
    >>> card("\u00b9")
    Traceback (most recent call last):
    ...
    koikoi.cards.UnknownCardError: unknown card '¹'
    """
    if isinstance(name, str):
        if len(name) <= _LONGEST:
            key = _normal(name)
            if key in _LOOKUP:
                return _LOOKUP[key]
            if _ID.fullmatch(key) and int(key) < NUM_CARDS:
                return int(key)
            if key.isascii() and key.isdigit():
                raise UnknownCardError(name, f"no card has the id {_shown(name)}: card ids are 0..{NUM_CARDS - 1}")
        raise UnknownCardError(name)
    if isinstance(name, int) and not isinstance(name, bool):
        if 0 <= name < NUM_CARDS:
            return name
        raise UnknownCardError(name, f"no card has the id {_shown(name)}: card ids are 0..{NUM_CARDS - 1}")
    raise UnknownCardError(
        name, f"a card is a name or an id 0..{NUM_CARDS - 1}, not {_shown(name)} ({type(name).__name__})"
    )


def card_name(card_id: int) -> str:
    return CARD_NAMES[card_id]


def month_of(card_id: int) -> int:
    """The month 1..12 of a card."""
    return (card_id >> 2) + 1


def kind_of(card_id: int) -> Kind:
    return _KINDS[card_id]


def cards_mask(cards: Iterable[str | int]) -> int:
    """The mask of the given cards (names or ids)."""
    m = 0
    for c in cards:
        m |= 1 << card(c)
    return m


def iter_cards(mask: int) -> Iterator[int]:
    """The card ids in ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


# The card ids of each byte of a mask, per byte position: six lookups list a mask's cards
# faster than a loop over its bits.
BYTE_CARDS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(8 * k + i for i in range(8) if b >> i & 1) for b in range(256)) for k in range(6)
)
_B0, _B1, _B2, _B3, _B4, _B5 = BYTE_CARDS


def card_list(mask: int) -> list[int]:
    """The card ids in ``mask`` as a list, lowest first.

    >>> card_list(0b1011 << 40)
    [40, 41, 43]
    """
    return [
        *_B0[mask & 255],
        *_B1[mask >> 8 & 255],
        *_B2[mask >> 16 & 255],
        *_B3[mask >> 24 & 255],
        *_B4[mask >> 32 & 255],
        *_B5[mask >> 40 & 255],
    ]


def mask_to_names(mask: int) -> list[str]:
    return [CARD_NAMES[c] for c in iter_cards(mask)]
