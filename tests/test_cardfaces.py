"""The SVG card faces: well-formed, labelled, distinct, small, and recognisable by month."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from koikoi.cards import CARD_NAMES, MONTH_NAMES, NUM_CARDS, Kind, kind_of, month_of
from koikoi.web.cardfaces import PLANT_COLOURS, all_card_svgs, card_back_svg, card_svg

SVG = "{http://www.w3.org/2000/svg}"
MAX_BYTES = 6000
ALL = [card_svg(i) for i in range(NUM_CARDS)]


def colours(svg: str) -> set[str]:
    return set(re.findall(r"#[0-9a-f]{6}\b", svg.lower()))


def is_plain(card_id: int) -> bool:
    return "-plain-" in CARD_NAMES[card_id]


@pytest.mark.parametrize("card_id", range(NUM_CARDS))
def test_face_is_a_labelled_svg_document(card_id):
    root = ET.fromstring(ALL[card_id])
    assert root.tag == SVG + "svg"
    assert root.get("viewBox") == "0 0 100 160"
    assert root[0].tag == SVG + "title"  # first child, for screen readers
    assert root[0].text == CARD_NAMES[card_id]
    assert root.get("role") == "img"


def test_back_is_a_labelled_svg_document():
    root = ET.fromstring(card_back_svg())
    assert root.tag == SVG + "svg" and root.get("viewBox") == "0 0 100 160"
    assert root.find(SVG + "title").text == "card back"
    assert card_back_svg() not in ALL


def test_standalone_and_self_contained():
    for svg in [*ALL, card_back_svg()]:
        assert "href" not in svg and "url(" not in svg and "<image" not in svg and "data:" not in svg
        assert ' id="' not in svg  # no ids: faces can be inlined many times in one page
        for family in re.findall(r'font-family="([^"]*)"', svg):
            assert family in {"serif", "sans-serif"}


def test_faces_are_pairwise_distinct():
    assert len(set(ALL)) == NUM_CARDS


def test_sizes_are_small():
    sizes = [len(svg.encode()) for svg in [*ALL, card_back_svg()]]
    assert max(sizes) < MAX_BYTES, max(sizes)


def test_all_card_svgs_and_cache():
    faces = all_card_svgs()
    assert list(faces) == list(range(NUM_CARDS))
    assert [faces[i] for i in range(NUM_CARDS)] == ALL
    faces[0] = "mutated"
    assert all_card_svgs()[0] == ALL[0]
    assert card_svg(5) is card_svg(5)


@pytest.mark.parametrize("bad", [-1, 48, 100, "x", "0", 1.0, None, True, False])
def test_rejects_non_card_ids(bad):
    with pytest.raises(ValueError, match="card id"):
        card_svg(bad)


def test_every_month_has_its_own_plant_colour():
    assert sorted(PLANT_COLOURS) == list(range(1, 13))
    assert len(set(PLANT_COLOURS.values())) == 12
    for card_id, svg in enumerate(ALL):
        month = month_of(card_id)
        found = {m for m, c in PLANT_COLOURS.items() if c in colours(svg)}
        assert found == {month}, (CARD_NAMES[card_id], MONTH_NAMES[month - 1], found)


def test_special_cards_differ_from_the_plain_ones():
    for card_id, svg in enumerate(ALL):
        if is_plain(card_id):
            continue
        plain = (
            next(i for i in range(NUM_CARDS) if month_of(i) == month_of(card_id) and is_plain(i))
            if month_of(card_id) != 11
            else None
        )
        if plain is not None:
            assert colours(svg) - colours(ALL[plain]), CARD_NAMES[card_id]
    willow = [colours(ALL[i]) for i in range(40, 44)]
    assert all(willow[a] != willow[b] for a in range(4) for b in range(a + 1, 4))


def test_plain_cards_of_a_month_look_alike():
    """Plain cards share their month's colours exactly (only the drawing may be mirrored or banded)."""
    for month in range(1, 13):
        plain = [colours(ALL[i]) for i in range(NUM_CARDS) if month_of(i) == month and is_plain(i)]
        if month == 11:  # willow's only chaff is the lightning
            assert not plain
            continue
        base = plain[0]
        for other in plain[1:]:
            assert len(other ^ base) <= 1, (month, other ^ base)


def test_kind_badges_and_ribbon_colours():
    for card_id, svg in enumerate(ALL):
        kind = kind_of(card_id)
        name = CARD_NAMES[card_id]
        if kind is Kind.BRIGHT:
            assert 'r="3.8" fill="#d9a521"' in svg, name
        if kind is Kind.RIBBON:
            blue = name.endswith("-blue")
            assert ("#2f3f94" in svg) == blue, name
            assert ("#c8252c" in svg) == (not blue), name
            writing = name.endswith("-poetry")
            assert ('stroke="#1d1a17"' in svg) == writing, name
