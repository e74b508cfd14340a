"""The yaku table of docs/rules.md section 3, cell by cell, and the rule-set options around it.

Every expected value below is written out by hand from the source texts each preset follows (docs/rules.md
section 8 names them; docs/rules-notes.md gives the readings), not read off the engine: docs/rules.md is
generated from the code, so this table is the independent check that the generated one says what the
sources say.
"""

from __future__ import annotations

import pytest

from koikoi.cards import CARD_NAMES, cards_mask
from koikoi.hand import hand_bonus_of
from koikoi.rules import PRESET_NAMES, PRESETS, RuleError, RuleSet, load_rules, preset
from koikoi.yaku import Yaku, evaluate, score

PRESET_ORDER = ("traditional", "bga", "boardgame", "cardavia", "wikipedia", "nintendo")


def pile(*names: str) -> int:
    return cards_mask(names)


def yaku_dict(p: int, rules: RuleSet, month: int | None = None) -> dict[str, int]:
    found = evaluate(p, rules, month)
    names = [y.name for y in found]
    assert len(names) == len(set(names)), f"a yaku reported twice: {found}"
    assert score(p, rules, month) == sum(y.points for y in found)
    return {y.name: y.points for y in found}


# -- canonical piles, each making exactly one yaku and nothing else -------------------------------------

GOKO = ("pine-crane", "cherry-curtain", "pampas-moon", "willow-rainman", "paulownia-phoenix")
SHIKO = ("pine-crane", "cherry-curtain", "pampas-moon", "paulownia-phoenix")
AME_SHIKO = ("pine-crane", "cherry-curtain", "pampas-moon", "willow-rainman")
SANKO = ("pine-crane", "cherry-curtain", "paulownia-phoenix")
INO_SHIKA_CHO = ("clover-boar", "maple-deer", "peony-butterflies")
AKATAN = ("pine-poetry", "plum-poetry", "cherry-poetry")
AOTAN = ("peony-blue", "chrysanthemum-blue", "maple-blue")
TANE = ("plum-warbler", "wisteria-cuckoo", "iris-bridge", "pampas-geese", "willow-swallow")
TANZAKU = ("wisteria-ribbon", "iris-ribbon", "clover-ribbon", "willow-ribbon", "pine-poetry")
KASU = (
    "pine-plain-1",
    "pine-plain-2",
    "plum-plain-1",
    "plum-plain-2",
    "cherry-plain-1",
    "cherry-plain-2",
    "wisteria-plain-1",
    "wisteria-plain-2",
    "iris-plain-1",
    "iris-plain-2",
)
TSUKIMI = ("pampas-moon", "chrysanthemum-sake")
HANAMI = ("cherry-curtain", "chrysanthemum-sake")
MORE_ANIMALS = ("clover-boar", "maple-deer")  # not a full ino-shika-cho
MORE_RIBBONS = ("peony-blue", "maple-blue")  # not a full aotan
MORE_CHAFF = ("peony-plain-1", "peony-plain-2", "clover-plain-1")

# yaku name, its cards, points per preset in PRESET_ORDER (None: the yaku is off there)
TABLE = [
    ("goko", GOKO, (10, 10, 10, 15, 10, 10)),
    ("shiko", SHIKO, (8, 8, 8, 10, 8, 8)),
    ("ame-shiko", AME_SHIKO, (7, 7, 6, 8, 7, 7)),
    ("sanko", SANKO, (5, 5, 5, 6, 5, 5)),
    ("ino-shika-cho", INO_SHIKA_CHO, (5, 5, 5, 5, 5, 5)),
    ("akatan", AKATAN, (5, 5, 5, 6, 5, 5)),
    ("aotan", AOTAN, (5, 5, 5, 6, 5, 5)),
    ("tane", TANE, (1, 1, 1, 1, 1, 1)),
    ("tanzaku", TANZAKU, (1, 1, 1, 1, 1, 1)),
    ("kasu", KASU, (1, 1, 1, 1, 1, 1)),
    # alone: boardgame scores sake yaku only beside another yaku (tested below), cardavia never
    ("tsukimi-zake", TSUKIMI, (5, 5, None, None, 5, 5)),
    ("hanami-zake", HANAMI, (5, 5, None, None, 5, 5)),
]


def _cells():
    for name, cards, points in TABLE:
        for preset_name, pts in zip(PRESET_ORDER, points):
            yield pytest.param(name, cards, preset_name, pts, id=f"{name}-{preset_name}")


@pytest.mark.parametrize("name, cards, preset_name, points", list(_cells()))
def test_table_cell(name, cards, preset_name, points):
    got = yaku_dict(pile(*cards), preset(preset_name))
    assert got == ({} if points is None else {name: points})


def test_presets_are_the_six_columns_plus_all_doubles_and_koikoi_japan():
    assert PRESET_NAMES == PRESET_ORDER + ("traditional-all-doubles", "koikoi-japan")
    # docs/rules.md section 8: seed 000's "all doublings" is traditional with both koi-koi doubles on.
    all_doubles = preset("traditional-all-doubles")
    assert all_doubles.koikoi_multiplier == "own_and_opponent_double"
    assert all_doubles.replace(name="traditional", koikoi_multiplier="none") == preset("traditional")
    for name in PRESET_NAMES:
        assert preset(name).name == name
        assert preset(name.upper()) is PRESETS[name]


# The sake yaku beside a "normal" yaku (akatan): boardgame now scores them, cardavia still does not.
@pytest.mark.parametrize("name, cards", [("tsukimi-zake", TSUKIMI), ("hanami-zake", HANAMI)])
@pytest.mark.parametrize(
    "preset_name, akatan, sake",
    [
        ("traditional", 5, 5),
        ("bga", 5, 5),
        ("boardgame", 5, 5),
        ("cardavia", 6, None),
        ("wikipedia", 5, 5),
        ("nintendo", 5, 5),
    ],
)
def test_sake_yaku_beside_another_yaku(name, cards, preset_name, akatan, sake):
    expected = {"akatan": akatan}
    if sake is not None:
        expected[name] = sake
    assert yaku_dict(pile(*cards, *AKATAN), preset(preset_name)) == expected


# -- tsukifuda: the four cards of the hand's month (boardgame only) -------------------------------------

TSUKIFUDA_CASES = [
    (4, ("wisteria-cuckoo", "wisteria-ribbon", "wisteria-plain-1", "wisteria-plain-2")),
    (8, ("pampas-moon", "pampas-geese", "pampas-plain-1", "pampas-plain-2")),
    (11, ("willow-rainman", "willow-swallow", "willow-ribbon", "willow-lightning")),
    (12, ("paulownia-phoenix", "paulownia-plain-1", "paulownia-plain-2", "paulownia-plain-3")),
]


@pytest.mark.parametrize("month, cards", TSUKIFUDA_CASES, ids=lambda v: str(v) if isinstance(v, int) else None)
@pytest.mark.parametrize(
    "preset_name, points",
    [
        ("traditional", None),
        ("bga", None),
        ("boardgame", 5),
        ("cardavia", None),
        ("wikipedia", None),
        ("nintendo", None),
    ],
)
def test_tsukifuda(month, cards, preset_name, points):
    rules = preset(preset_name)
    assert yaku_dict(pile(*cards), rules, month) == ({} if points is None else {"tsukifuda": points})
    # another month's hand, or no month given: no tsukifuda
    assert yaku_dict(pile(*cards), rules, month % 12 + 1) == {}
    assert yaku_dict(pile(*cards), rules) == {}


def test_tsukifuda_needs_all_four_cards():
    assert yaku_dict(pile("wisteria-cuckoo", "wisteria-ribbon", "wisteria-plain-1"), preset("boardgame"), 4) == {}


def test_tsukifuda_can_be_turned_on_elsewhere():
    rules = preset("traditional").replace(tsukifuda=3)
    assert yaku_dict(pile(*TSUKIFUDA_CASES[0][1]), rules, 4) == {"tsukifuda": 3}


# -- "+1": one more point per card beyond the minimum ----------------------------------------------------


@pytest.mark.parametrize("preset_name", PRESET_ORDER)
@pytest.mark.parametrize(
    "cards, expected",
    [
        (TANE + MORE_ANIMALS[:1], {"tane": 2}),
        (TANE + MORE_ANIMALS, {"tane": 3}),
        (TANZAKU + ("plum-poetry",), {"tanzaku": 2}),
        (TANZAKU + ("plum-poetry", "peony-blue"), {"tanzaku": 3}),
        (KASU + MORE_CHAFF[:1], {"kasu": 2}),
        (KASU + MORE_CHAFF, {"kasu": 4}),
    ],
    ids=["tane+1", "tane+2", "tanzaku+1", "tanzaku+2", "kasu+1", "kasu+3"],
)
def test_growth_plus_one(preset_name, cards, expected):
    assert yaku_dict(pile(*cards), preset(preset_name)) == expected


@pytest.mark.parametrize(
    "cards, expected",
    [
        (TANE[:4], {}),
        (TANZAKU[:4], {}),
        (KASU[:9], {}),
    ],
    ids=["4-animals", "4-ribbons", "9-chaff"],
)
def test_one_short_is_nothing(cards, expected):
    for name in PRESET_ORDER:
        assert yaku_dict(pile(*cards), preset(name)) == expected


@pytest.mark.parametrize(
    "cards, traditional, nintendo",
    [
        # ino-shika-cho: nintendo +1 per further animal; tane joins at 5 animals
        (INO_SHIKA_CHO + ("plum-warbler",), {"ino-shika-cho": 5}, {"ino-shika-cho": 6}),
        (
            INO_SHIKA_CHO + ("plum-warbler", "iris-bridge"),
            {"ino-shika-cho": 5, "tane": 1},
            {"ino-shika-cho": 7, "tane": 1},
        ),
        # akatan / aotan: +1 per further ribbon; tanzaku joins at 5 ribbons
        (AKATAN + ("wisteria-ribbon",), {"akatan": 5}, {"akatan": 6}),
        (AKATAN + ("wisteria-ribbon", "iris-ribbon"), {"akatan": 5, "tanzaku": 1}, {"akatan": 7, "tanzaku": 1}),
        (AOTAN + ("willow-ribbon",), {"aotan": 5}, {"aotan": 6}),
        (AOTAN + ("pine-poetry", "plum-poetry"), {"aotan": 5, "tanzaku": 1}, {"aotan": 7, "tanzaku": 1}),
        # akatan and aotan together: nintendo makes them one 10-point yaku, +1 per further ribbon
        (AKATAN + AOTAN, {"akatan": 5, "aotan": 5, "tanzaku": 2}, {"akatan-aotan": 10, "tanzaku": 2}),
        (
            AKATAN + AOTAN + ("clover-ribbon",),
            {"akatan": 5, "aotan": 5, "tanzaku": 3},
            {"akatan-aotan": 11, "tanzaku": 3},
        ),
        (
            AKATAN + AOTAN + ("clover-ribbon", "willow-ribbon"),
            {"akatan": 5, "aotan": 5, "tanzaku": 4},
            {"akatan-aotan": 12, "tanzaku": 4},
        ),
    ],
    ids=[
        "isc+1",
        "isc+2",
        "akatan+1",
        "akatan+2",
        "aotan+1",
        "aotan+2",
        "akatan-aotan",
        "akatan-aotan+1",
        "akatan-aotan+2",
    ],
)
def test_nintendo_plus_one(cards, traditional, nintendo):
    assert yaku_dict(pile(*cards), preset("traditional")) == traditional
    assert yaku_dict(pile(*cards), preset("nintendo")) == nintendo


def test_cardavia_akatan_and_aotan_score_apart():
    assert yaku_dict(pile(*AKATAN, *AOTAN), preset("cardavia")) == {"akatan": 6, "aotan": 6, "tanzaku": 2}


def test_sake_cup_is_an_animal_for_ino_shika_cho_plus():
    # nintendo: the sake cup is an animal, so it is a "further animal" too
    assert yaku_dict(pile(*INO_SHIKA_CHO, "chrysanthemum-sake"), preset("nintendo")) == {"ino-shika-cho": 6}


@pytest.mark.parametrize(
    "option, cards, name, points",
    [
        ("ino_shika_cho_plus", INO_SHIKA_CHO + ("plum-warbler",), "ino-shika-cho", 6),
        ("akatan_plus", AKATAN + ("wisteria-ribbon",), "akatan", 6),
        ("aotan_plus", AOTAN + ("wisteria-ribbon",), "aotan", 6),
    ],
)
def test_plus_options_by_agreement(option, cards, name, points):
    # seed 000: "+1 per further card, by agreement": off in the traditional preset, an option
    base = preset("traditional")
    assert getattr(base, option) is False
    assert yaku_dict(pile(*cards), base) == {name: 5}
    assert yaku_dict(pile(*cards), base.with_settings([f"{option}=on"])) == {name: points}


# -- bright yaku are exclusive (ruling 5) -----------------------------------------------------------------


@pytest.mark.parametrize("preset_name", PRESET_ORDER)
@pytest.mark.parametrize(
    "cards, expected_name",
    [
        (("willow-rainman", "pine-crane", "cherry-curtain"), None),
        (("willow-rainman", "pampas-moon", "paulownia-phoenix"), None),
        (("willow-rainman", "pine-crane"), None),
        (("willow-rainman", "pine-crane", "cherry-curtain", "paulownia-phoenix"), "ame-shiko"),
        (("pine-crane", "cherry-curtain", "pampas-moon"), "sanko"),
        (SHIKO, "shiko"),
        (GOKO, "goko"),
    ],
    ids=["rain+2-A", "rain+2-B", "rain+1", "rain+3", "three", "four", "five"],
)
def test_brights_do_not_stack(preset_name, cards, expected_name):
    rules = preset(preset_name)
    got = yaku_dict(pile(*cards), rules)
    # no sake cup here, so brights are the only yaku possible
    if expected_name is None:
        assert got == {}
    else:
        assert got == {expected_name: getattr(rules, expected_name.replace("-", "_"))}


# -- sake_cup ------------------------------------------------------------------------------------------------

SAKE = "chrysanthemum-sake"
FOUR_ANIMALS = TANE[:4]
NINE_CHAFF = KASU[:9]


@pytest.mark.parametrize(
    "sake_cup, cards, expected",
    [
        ("both", (SAKE, *FOUR_ANIMALS), {"tane": 1}),
        ("both", (SAKE, *NINE_CHAFF), {"kasu": 1}),
        ("both", (SAKE, *FOUR_ANIMALS, *NINE_CHAFF), {"tane": 1, "kasu": 1}),
        ("animal_only", (SAKE, *FOUR_ANIMALS), {"tane": 1}),
        ("animal_only", (SAKE, *NINE_CHAFF), {}),
        ("animal_only", (SAKE, *FOUR_ANIMALS, *NINE_CHAFF), {"tane": 1}),
        ("either", (SAKE, *FOUR_ANIMALS), {"tane": 1}),
        ("either", (SAKE, *NINE_CHAFF), {"kasu": 1}),
        ("either", (SAKE, *NINE_CHAFF, "plum-warbler"), {"kasu": 1}),
        ("either", (SAKE, *FOUR_ANIMALS, *KASU[:5]), {"tane": 1}),
    ],
    ids=lambda v: None if not isinstance(v, str) else v,
)
def test_sake_cup(sake_cup, cards, expected):
    rules = preset("traditional").replace(sake_cup=sake_cup)
    assert yaku_dict(pile(*cards), rules) == expected


def test_sake_cup_either_never_counts_twice():
    # 4 animals + sake + 9 chaff: tane 1 or kasu 1, never both
    rules = preset("traditional").replace(sake_cup="either")
    got = yaku_dict(pile(SAKE, *FOUR_ANIMALS, *NINE_CHAFF), rules)
    assert got in ({"tane": 1}, {"kasu": 1})
    # 4 animals + sake + 10 chaff: tane 1 + kasu 1 (as animal) or kasu 2 (as chaff): 2 either way, not 3
    assert score(pile(SAKE, *FOUR_ANIMALS, *KASU), rules) == 2
    assert score(pile(SAKE, *FOUR_ANIMALS, *KASU), rules.replace(sake_cup="both")) == 3


def test_sake_cup_either_picks_the_better_count_with_bonus_only_sake_yaku():
    # boardgame (either + bonus_only): moon + sake + 9 chaff is best read as kasu 1, which lets
    # tsukimi-zake count beside it: 6; read as an animal there is no yaku at all
    assert yaku_dict(pile("pampas-moon", SAKE, *NINE_CHAFF), preset("boardgame")) == {"kasu": 1, "tsukimi-zake": 5}


def test_ruling_4_sake_cup_counts_everywhere_at_once():
    # with both: tane, kasu, hanami-zake and tsukimi-zake from one sake cup
    cards = (SAKE, *FOUR_ANIMALS, *NINE_CHAFF, "pampas-moon", "cherry-curtain")
    got = yaku_dict(pile(*cards), preset("traditional"))
    assert got == {"tane": 1, "kasu": 1, "tsukimi-zake": 5, "hanami-zake": 5}


@pytest.mark.parametrize(
    "preset_name, sake_cup",
    [
        ("traditional", "both"),
        ("bga", "both"),
        ("boardgame", "either"),
        ("cardavia", "both"),
        ("wikipedia", "both"),
    ],
)
def test_sake_cup_presets(preset_name, sake_cup):
    assert preset(preset_name).sake_cup == sake_cup


# -- sake_yaku -----------------------------------------------------------------------------------------------

MOON_SAKE = ("pampas-moon", SAKE)
BOTH_SAKE = ("pampas-moon", "cherry-curtain", SAKE)


@pytest.mark.parametrize(
    "sake_yaku, cards, expected",
    [
        ("on", MOON_SAKE, {"tsukimi-zake": 5}),
        ("on", BOTH_SAKE, {"tsukimi-zake": 5, "hanami-zake": 5}),
        ("on", (*MOON_SAKE, "willow-rainman"), {"tsukimi-zake": 5}),
        ("off", MOON_SAKE, {}),
        ("off", BOTH_SAKE, {}),
        ("off", (*BOTH_SAKE, *AKATAN), {"akatan": 5}),
        # any willow card captured voids them
        ("rain_ruins", MOON_SAKE, {"tsukimi-zake": 5}),
        ("rain_ruins", (*MOON_SAKE, "willow-lightning"), {}),
        ("rain_ruins", (*MOON_SAKE, "willow-swallow"), {}),
        ("rain_ruins", (*HANAMI, "willow-ribbon", *AKATAN), {"akatan": 5}),
        ("rain_ruins", (*MOON_SAKE, "willow-rainman"), {}),
        # only the rain man voids them
        ("rainman_ruins", MOON_SAKE, {"tsukimi-zake": 5}),
        ("rainman_ruins", (*MOON_SAKE, "willow-lightning", "willow-swallow", "willow-ribbon"), {"tsukimi-zake": 5}),
        ("rainman_ruins", (*MOON_SAKE, "willow-rainman"), {}),
        ("rainman_ruins", (*BOTH_SAKE, "willow-rainman", "pine-crane"), {"ame-shiko": 7}),
        # only beside another ("normal") yaku; the two sake yaku do not carry each other
        ("bonus_only", MOON_SAKE, {}),
        ("bonus_only", BOTH_SAKE, {}),
        ("bonus_only", (*MOON_SAKE, *AKATAN), {"akatan": 5, "tsukimi-zake": 5}),
        ("bonus_only", (*BOTH_SAKE, "pine-crane"), {"sanko": 5, "tsukimi-zake": 5, "hanami-zake": 5}),
        ("bonus_only", (*HANAMI, *FOUR_ANIMALS), {"tane": 1, "hanami-zake": 5}),
        # seed 000 house rule: not together with a bright yaku; the better of the two counts, a tie the brights
        ("not_with_brights", MOON_SAKE, {"tsukimi-zake": 5}),
        ("not_with_brights", (*BOTH_SAKE, "pine-crane"), {"tsukimi-zake": 5, "hanami-zake": 5}),
        ("not_with_brights", (*MOON_SAKE, "pine-crane", "cherry-curtain"), {"tsukimi-zake": 5, "hanami-zake": 5}),
        ("not_with_brights", (*MOON_SAKE, "pine-crane", "paulownia-phoenix"), {"sanko": 5}),
        ("not_with_brights", (*BOTH_SAKE, "pine-crane", "paulownia-phoenix", "willow-rainman"), {"goko": 10}),
        # three brights with the rain man are no bright yaku, so the sake yaku stay
        ("not_with_brights", (*BOTH_SAKE, "willow-rainman"), {"tsukimi-zake": 5, "hanami-zake": 5}),
        ("not_with_brights", (*MOON_SAKE, *AKATAN), {"akatan": 5, "tsukimi-zake": 5}),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_sake_yaku(sake_yaku, cards, expected):
    rules = preset("traditional").replace(sake_yaku=sake_yaku)
    assert yaku_dict(pile(*cards), rules) == expected


def test_sake_yaku_three_points_house_rule():
    # seed 000: "3 points instead of 5", as point options
    rules = preset("traditional").with_settings(["tsukimi_zake=3", "hanami_zake=3"])
    assert yaku_dict(pile(*BOTH_SAKE), rules) == {"tsukimi-zake": 3, "hanami-zake": 3}


@pytest.mark.parametrize(
    "preset_name, sake_yaku",
    [
        ("traditional", "on"),
        ("bga", "on"),
        ("boardgame", "bonus_only"),
        ("cardavia", "off"),
        ("wikipedia", "on"),
        ("nintendo", "on"),
    ],
)
def test_sake_yaku_presets(preset_name, sake_yaku):
    assert preset(preset_name).sake_yaku == sake_yaku


# -- several yaku add up -------------------------------------------------------------------------------------


def test_non_bright_yaku_add_up():
    cards = (*SANKO, *INO_SHIKA_CHO, *AKATAN, *AOTAN)
    # traditional: sanko 5 + ino-shika-cho 5 + akatan 5 + aotan 5 + tanzaku (6 ribbons) 2
    assert yaku_dict(pile(*cards), preset("traditional")) == {
        "sanko": 5,
        "ino-shika-cho": 5,
        "akatan": 5,
        "aotan": 5,
        "tanzaku": 2,
    }
    assert score(pile(*cards), preset("traditional")) == 22
    # cardavia: 6 + 5 + 6 + 6 + 2
    assert score(pile(*cards), preset("cardavia")) == 25


# -- the hand bonus (teshi / kuttsuki) ----------------------------------------------------------------------

TESHI = (
    "pine-crane",
    "pine-poetry",
    "pine-plain-1",
    "pine-plain-2",
    "plum-warbler",
    "cherry-poetry",
    "iris-bridge",
    "maple-deer",
)
KUTTSUKI = (
    "pine-crane",
    "pine-poetry",
    "plum-warbler",
    "plum-plain-1",
    "iris-bridge",
    "iris-ribbon",
    "maple-deer",
    "maple-blue",
)
DOUBLE_TESHI = (
    "pine-crane",
    "pine-poetry",
    "pine-plain-1",
    "pine-plain-2",
    "maple-deer",
    "maple-blue",
    "maple-plain-1",
    "maple-plain-2",
)
TESHI_AND_PAIRS = (
    "pine-crane",
    "pine-poetry",
    "pine-plain-1",
    "pine-plain-2",
    "plum-warbler",
    "plum-plain-1",
    "iris-bridge",
    "iris-ribbon",
)
THREE_PAIRS = (
    "pine-crane",
    "pine-poetry",
    "plum-warbler",
    "plum-plain-1",
    "iris-bridge",
    "iris-ribbon",
    "maple-deer",
    "clover-boar",
)
THREE_OF_A_MONTH = (
    "pine-crane",
    "pine-poetry",
    "pine-plain-1",
    "plum-plain-1",
    "iris-bridge",
    "iris-ribbon",
    "maple-deer",
    "maple-blue",
)


@pytest.mark.parametrize(
    "cards, kind",
    [
        (TESHI, "teshi"),
        (KUTTSUKI, "kuttsuki"),
        (DOUBLE_TESHI, "double"),
        (TESHI_AND_PAIRS, "teshi"),
        (THREE_PAIRS, None),
        (THREE_OF_A_MONTH, None),
    ],
    ids=["teshi", "kuttsuki", "double-teshi", "teshi+pairs", "three-pairs", "three-of-a-month"],
)
@pytest.mark.parametrize(
    "preset_name, points, double_points",
    [
        ("traditional", 6, 14),
        ("bga", 6, None),
        ("boardgame", None, None),
        ("cardavia", 6, None),
        ("wikipedia", 6, None),
        ("nintendo", 6, None),
    ],
)
def test_hand_bonus(cards, kind, preset_name, points, double_points):
    assert len(cards) == 8
    got = hand_bonus_of(pile(*cards), preset(preset_name))
    if kind is None or points is None:
        assert got is None
    elif kind == "double" and double_points is not None:
        assert got == Yaku("double-teshi", double_points)
    else:
        assert got == Yaku("kuttsuki" if kind == "kuttsuki" else "teshi", points)


# -- the rule set: TOML, --set strings, errors -------------------------------------------------------------


def test_load_rules_preset_and_overrides(tmp_path):
    f = tmp_path / "house.toml"
    f.write_text('preset = "bga"\nhands = 3\nsake_yaku = "rain_ruins"\nseven_point_double = true\n')
    rs = load_rules(f)
    assert rs.hands == 3 and rs.sake_yaku == "rain_ruins" and rs.seven_point_double is True
    # everything else is bga's
    assert rs.starting_score == 50 and rs.transfer and rs.koikoi_multiplier == "additive"
    assert rs.bright_table_multiplier


def test_load_rules_rules_table(tmp_path):
    f = tmp_path / "house.toml"
    f.write_text('preset = "cardavia"\n[rules]\ngoko = 12\nkoikoi_limit = 1\n')
    rs = load_rules(f)
    assert (rs.goko, rs.koikoi_limit, rs.shiko) == (12, 1, 10)


def test_load_rules_preset_only(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text('preset = "nintendo"\n')
    assert load_rules(f) == preset("nintendo")


def test_load_rules_round_trip(tmp_path):
    rs = preset("boardgame").replace(hands=6, kasu=2)

    def toml(v):
        return str(v).lower() if isinstance(v, bool) else repr(v) if isinstance(v, int) else chr(34) + v + chr(34)

    lines = [f"{k} = {toml(v)}" for k, v in rs.to_dict().items()]
    f = tmp_path / "all.toml"
    f.write_text("\n".join(lines) + "\n")
    assert load_rules(f) == rs


@pytest.mark.parametrize(
    "text, must_name",
    [
        ('preset = "bga"\nkoikoi_multipler = "none"\n', ["koikoi_multipler", "koikoi_multiplier"]),
        ('preset = "bga"\nsake_cup = "sometimes"\n', ["sake_cup", "sometimes", "both", "animal_only", "either"]),
        ('preset = "bga"\nhands = "six"\n', ["hands", "six", "whole number"]),
        ('preset = "bga"\nhands = -1\n', ["hands", "whole number"]),
        ('preset = "bga"\ntransfer = 1\n', ["transfer", "true or false"]),
        ('preset = "nintendoo"\n', ["nintendoo", "nintendo"]),
        ('preset = "bga\n', ["TOML"]),
    ],
)
def test_load_rules_errors(tmp_path, text, must_name):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(RuleError) as e:
        load_rules(f)
    for word in must_name + [str(f)]:
        assert word in str(e.value)


def test_load_rules_missing_file(tmp_path):
    with pytest.raises(RuleError, match="cannot read"):
        load_rules(tmp_path / "nope.toml")


@pytest.mark.parametrize(
    "setting, option, value",
    [
        ("sake_cup=either", "sake_cup", "either"),
        ("sake-cup = animal_only", "sake_cup", "animal_only"),
        ("exhausted=last_koikoi", "exhausted", "last_koikoi"),
        ("hands=3", "hands", 3),
        ("goko=off", "goko", 0),
        ("transfer=on", "transfer", True),
        ("seven_point_double=false", "seven_point_double", False),
        ("bright_table_multiplier=yes", "bright_table_multiplier", True),
        ("koikoi_multiplier=own_double", "koikoi_multiplier", "own_double"),
    ],
)
def test_with_settings(setting, option, value):
    rs = preset("traditional").with_settings([setting])
    assert getattr(rs, option) == value
    # nothing else changed
    base = preset("traditional").to_dict()
    changed = {k for k, v in rs.to_dict().items() if base[k] != v}
    assert changed <= {option}


@pytest.mark.parametrize(
    "setting, must_name",
    [
        ("sake_cup=sometimes", ["sake_cup", "sometimes", "both", "animal_only", "either"]),
        (
            "sake_yaku=rain",
            ["sake_yaku", "rain", "on", "off", "rain_ruins", "rainman_ruins", "bonus_only", "not_with_brights"],
        ),
        ("exhausted=nobody", ["exhausted", "draw", "dealer_bonus", "first_player", "second_player", "last_koikoi"]),
        ("koikoi_multiplier=triple", ["koikoi_multiplier", "none", "additive", "opponent_double", "own_double"]),
        ("first_player=random", ["first_player", "winner", "loser", "alternate"]),
        ("dealer_selection=coin", ["dealer_selection", "draw", "random", "birth_month"]),
        ("deal_pattern=3-3", ["deal_pattern", "4-4", "2-2"]),
        ("hands=many", ["hands", "many", "whole number"]),
        ("transfer=maybe", ["transfer", "maybe", "true or false"]),
        ("sake_cupp=both", ["sake_cupp", "sake_cup"]),
        ("koikoi_multipler=none", ["koikoi_multipler", "koikoi_multiplier"]),
        ("hands", ["option=value", "hands"]),
    ],
)
def test_with_settings_errors(setting, must_name):
    with pytest.raises(RuleError) as e:
        preset("traditional").with_settings([setting])
    for word in must_name:
        assert word in str(e.value)


def test_replace_unknown_option():
    with pytest.raises(RuleError, match="tanzakuu.*tanzaku"):
        preset("bga").replace(tanzakuu=2)


def test_unknown_option_without_close_name_lists_the_options():
    with pytest.raises(RuleError) as e:
        preset("bga").with_settings(["zzz=1"])
    assert "zzz" in str(e.value) and "goko" in str(e.value) and "sake_cup" in str(e.value)


@pytest.mark.parametrize("name, close", [("nintendoo", "nintendo"), ("cardvia", "cardavia"), ("wikipeda", "wikipedia")])
def test_unknown_preset(name, close):
    with pytest.raises(RuleError) as e:
        preset(name)
    msg = str(e.value)
    assert name in msg and f"did you mean {close}" in msg
    for p in PRESET_ORDER:
        assert p in msg


def test_hands_zero_needs_a_target():
    with pytest.raises(RuleError, match="target_score"):
        preset("traditional").replace(hands=0)
    assert preset("traditional").replace(hands=0, target_score=30).hands == 0


def test_rule_sets_are_immutable():
    rs = preset("traditional")
    with pytest.raises(AttributeError):
        rs.goko = 3  # type: ignore[misc]
    assert rs.replace(goko=3).goko == 3 and rs.goko == 10


def test_every_card_name_is_canonical():
    # the piles above use docs/rules.md section 1 names; every one of them is a canonical name
    used = set(
        GOKO
        + SHIKO
        + INO_SHIKA_CHO
        + AKATAN
        + AOTAN
        + TANE
        + TANZAKU
        + KASU
        + TSUKIMI
        + HANAMI
        + MORE_ANIMALS
        + MORE_RIBBONS
        + MORE_CHAFF
        + DOUBLE_TESHI
        + KUTTSUKI
    )
    assert used <= set(CARD_NAMES)
