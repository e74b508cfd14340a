"""Words and layout (issue 33, items 5, 6 and 7): every yaku and every computer player named in every
language, messages built around names, and a table, lobby and rules page whose parts do not cover,
squeeze or push each other.

The names are checked in the locale files; the layout in Debian's Chromium driven by Playwright against
the real server (``test_web_browser.py``'s fixtures), by measuring the boxes the browser lays out.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect
from test_web_browser import create_table, new_page
from test_web_table import PHONE, my_turn

from koikoi.ai import AGENT_NAMES
from koikoi.web.i18n import LANGUAGES
from koikoi.yaku import YAKU_NAMES

SRC = Path(__file__).resolve().parents[1] / "src" / "koikoi"
LOCALES = SRC / "web" / "locales"
DESKTOP = {"viewport": {"width": 1280, "height": 900}}
# A name's explanation in brackets at its end, which the chips leave out (common.js, yakuShort).
BRACKETED = re.compile(r"\s*[(（].*[)）]\s*$")


def catalog(lang: str) -> dict[str, str]:
    return json.loads((LOCALES / f"{lang}.json").read_text(encoding="utf-8"))


def engine_yaku() -> set[str]:
    """Every yaku name the engine can score: the pile's yaku and those the hand and the match make
    (a dealt hand's teshi, the dealer's oya-ken), read from the rules core so that a new one is caught."""
    found = set(YAKU_NAMES)
    for path in SRC.glob("*.py"):
        found |= set(re.findall(r'\bYaku\(\s*"([a-z-]+)"', path.read_text(encoding="utf-8")))
    return found | {"brights"}  # the progress chip of the bright yaku taken together (render.yaku_progress)


def short(text: str) -> str:
    return BRACKETED.sub("", text)


def test_the_engine_yaku_are_found():
    # The scan above finds the hand's own yaku: were it to find nothing, the next test would check less.
    assert {"teshi", "kuttsuki", "double-teshi", "oya-ken"} <= engine_yaku()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_yaku_has_a_name_and_a_description(lang):
    tr = catalog(lang)
    missing = [y for y in sorted(engine_yaku()) if not tr.get(f"yaku.{y}") or not tr.get(f"yakudoc.{y}")]
    assert missing == [], f"{lang}: no name for {missing}"


@pytest.mark.parametrize("lang", ["ru", "uk", "vi"])
def test_yaku_chips_are_translated_not_romaji(lang):
    """The chip shows a yaku's name without its bracketed part: in Russian, Ukrainian and Vietnamese it
    is a translation ("Красные ленты"), not the romaji of the English name ("Akatan")."""
    en, tr = catalog("en"), catalog(lang)
    for y in sorted(engine_yaku()):
        chip, english = short(tr[f"yaku.{y}"]), short(en[f"yaku.{y}"])
        assert chip.casefold() != english.casefold(), (lang, y, chip)
        romaji = {w for w in re.findall(r"[a-zō-]{3,}", english.casefold()) if w not in {"brights", "double"}}
        assert not any(w in chip.casefold() for w in romaji), (lang, y, chip)
        if lang in ("ru", "uk"):
            assert re.search(r"[а-яіїєґ]", chip, re.I), (lang, y, chip)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_computer_level_has_a_name_and_a_level_word(lang):
    tr = catalog(lang)
    names = [tr[f"computer.name.{a}"] for a in AGENT_NAMES]
    assert len(set(names)) == len(names), (lang, names)
    for a in AGENT_NAMES:
        level = tr[f"computer.level.{a}"]
        assert level and "(" not in level and level != tr[f"computer.name.{a}"], (lang, a)
    assert set(re.findall(r"\{(\w+)\}", tr["computer.named"])) == {"name", "level"}
    assert set(re.findall(r"\{(\w+)\}", tr["computer.option"])) == {"name", "level"}
    # The same names everywhere, written in the language's own letters.
    script = {"ru": r"^[А-ЯЁ][а-яё]+$", "uk": r"^[А-ЯІЇЄҐ][а-яіїєґ']+$", "ja": r"^[ァ-ヶー]+$"}
    if lang in script:
        assert all(re.match(script[lang], n) for n in names), (lang, names)
    else:
        assert names == [catalog("en")[f"computer.name.{a}"] for a in AGENT_NAMES], lang


# -- the words at the table ---------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["vi", "ru"])
def test_the_table_names_the_computer_and_translates_the_chips(browser, web, lang):  # noqa: F811
    page = new_page(browser, **DESKTOP)
    create_table(page, web, "easy", preset="nintendo")
    page.goto(page.url + "&lang=" + lang)
    my_turn(page)
    tr = catalog(lang)
    name, level = tr["computer.name.easy"], tr["computer.level.easy"]
    expect(page.locator("#side-1 .who b")).to_have_text(name)
    expect(page.locator("#side-1 .who .badge.level")).to_have_text(level)
    # The computer has moved (it is this player's turn again or it dealt first): the log names it.
    sentences = page.evaluate("""() => [describeEvent({kind: 'play', player: 1 - truth.seat, card: 0, captured: []}),
        describeEvent({kind: 'stop', player: 1 - truth.seat})]""")
    for s in sentences:
        assert name in s and tr["level.easy"] not in s.replace(name, ""), s
    assert sentences[0] == tr["event.play"].format(who=name, card=tr["card.0"])
    chips = page.evaluate("""() => { const v = structuredClone(truth);
        v.progress = [['akatan', 'tane', 'kasu', 'tsukimi-zake'].map((y) => ({yaku: y, have: 1, need: 3})), []];
        v.yaku = [[{name: 'ino-shika-cho', points: 5}], []];
        state = v; render();
        return [...document.querySelectorAll('#side-0 .progress .chip:not(.total)')].map((c) => c.textContent); }""")
    assert chips[1:] == [f"{short(tr['yaku.' + y])} 1/3" for y in ("akatan", "tane", "kasu", "tsukimi-zake")], chips
    assert chips[0].startswith(short(tr["yaku.ino-shika-cho"]) + ":"), chips
    for romaji in ("Akatan", "Tane", "Kasu", "Tsukimi"):
        assert not any(romaji in c for c in chips), chips
    assert page.errors == []  # type: ignore[attr-defined]


def test_the_lobby_lists_the_computer_by_name_with_its_level(browser, web):  # noqa: F811
    page = new_page(browser, **DESKTOP)
    create_table(page, web, "random", preset="nintendo")
    page.goto(web.url + "/?lang=ru")
    tr = catalog("ru")
    expect(page.locator("#unfinished li[data-game] .vs")).to_contain_text(
        tr["computer.named"].format(name=tr["computer.name.random"], level=tr["computer.level.random"])
    )
    option = page.locator("#opponent option[value='expert']")
    expect(option).to_have_text(tr["computer.option"].format(name=tr["computer.name.expert"], level=tr["level.expert"]))


# -- the layout --------------------------------------------------------------------------------------


# The height of one line of an element's text ("normal" line height is about 1.2 times the font size).
LINE_JS = """() => { const LINE = (el) => parseFloat(getComputedStyle(el).lineHeight)
    || 1.2 * parseFloat(getComputedStyle(el).fontSize);"""


def overlap(a: dict, b: dict) -> float:
    """The area two boxes ({x, y, width, height}) share."""
    w = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
    h = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
    return max(w, 0) * max(h, 0)


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_on_a_phone_the_chosen_card_leaves_the_status_in_sight(browser, web, lang):  # noqa: F811
    """The chosen card rises above the hand: it covered the status's second line on a phone."""
    page = new_page(browser, **PHONE)
    create_table(page, web, "easy", preset="nintendo")
    page.goto(page.url + "&lang=" + lang)
    my_turn(page)
    boxes = page.evaluate(
        LINE_JS
        + """ const v = structuredClone(truth);
        state = v; selected = v.hand[0]; render();
        const status = document.getElementById('status');
        const card = document.querySelector('#hand .card.selected');
        return {status: status.getBoundingClientRect().toJSON(), card: card.getBoundingClientRect().toJSON(),
                text: status.textContent,
                lineHeight: LINE(status)}; }"""
    )
    # The longest status there is (a card chosen on a touch screen) takes two lines or more at this width.
    assert boxes["status"]["height"] >= 1.8 * boxes["lineHeight"], boxes
    assert overlap(boxes["status"], boxes["card"]) == 0, boxes


def test_the_hand_stays_put_as_captures_and_chips_appear(browser, web):  # noqa: F811
    page = new_page(browser, **DESKTOP)
    create_table(page, web, "easy", preset="nintendo")
    my_turn(page)
    tops = page.evaluate("""() => { const top = () => document.getElementById('hand').getBoundingClientRect().top;
        const v = structuredClone(truth);
        v.piles = [0, 1].map(() => ({brights: [], animals: [], ribbons: [], chaff: []}));
        v.progress = [[], []]; v.yaku = [[], []];
        state = v; render(); layoutFans(); const before = top();
        const w = structuredClone(v);
        w.piles[0] = {brights: [0], animals: [4, 12], ribbons: [1, 5], chaff: [2, 3, 6]};
        w.piles[1] = {brights: [8], animals: [16], ribbons: [9], chaff: [10, 11]};
        const chips = ['akatan', 'tane', 'kasu', 'tanzaku', 'tsukimi-zake', 'ino-shika-cho'];
        w.progress = [chips.map((y) => ({yaku: y, have: 1, need: 3})), chips.map((y) => ({yaku: y, have: 1, need: 3}))];
        state = w; render(); layoutFans();
        const chipRows = new Set([...document.querySelectorAll('#side-0 .progress .chip')]
            .map((c) => Math.round(c.getBoundingClientRect().top))).size;
        return {before, after: top(), chipRows}; }""")
    assert tops["chipRows"] == 1, tops
    assert abs(tops["after"] - tops["before"]) < 0.5, tops


def test_the_number_keys_leave_the_month_corner_clear(browser, web):  # noqa: F811
    page = new_page(browser, **DESKTOP)
    create_table(page, web, "easy", preset="nintendo")
    my_turn(page)
    found = page.evaluate("""() => [...document.querySelectorAll('#hand .card')].map((c) => ({
        card: c.getBoundingClientRect().toJSON(), key: c.querySelector('.key').getBoundingClientRect().toJSON(),
        controls: document.querySelector('.controls').getBoundingClientRect().toJSON()}))""")
    assert found
    cards = [f["card"] for f in found]
    for f in found:
        assert f["key"]["width"] > 0, f  # the badge is shown on a desktop
        # Clear of every card (the month is in a card's top corner) and of the buttons under the hand.
        assert all(overlap(f["key"], c) == 0 for c in cards), f
        assert overlap(f["key"], f["controls"]) == 0, f
        assert f["key"]["y"] >= f["card"]["y"] + f["card"]["height"], f


# Every word of the rules page's card captions on one line: each word's text range has one line box.
BROKEN_WORDS = """() => { const broken = []; let words = 0;
    for (const f of document.querySelectorAll('.month-cards figcaption, .yaku-table td')) {
      const walker = document.createTreeWalker(f, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const re = /[^\\s\\-–]+[\\-–]?/g; let m;  // a break after a hyphen is where the word allows one
        while ((m = re.exec(node.textContent))) {
          const r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
          words += 1;
          const lines = new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top)));
          if (lines.size > 1) broken.push(m[0]);
        } } }
    return {broken, words, wide: document.documentElement.scrollWidth - window.innerWidth}; }"""


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_rules_page_breaks_no_word(browser, web, size):  # noqa: F811
    page = new_page(browser, **size)
    for lang in ("en", "ru", "uk", "vi"):
        page.goto(f"{web.url}/rules?lang={lang}")
        found = page.evaluate(BROKEN_WORDS)
        assert found["words"] > 200 and found["broken"] == [] and found["wide"] <= 0, (lang, found)


def test_the_lobby_keeps_the_score_on_one_line_and_no_gap_above_start(browser, web):  # noqa: F811
    page = new_page(browser, **PHONE)
    create_table(page, web, "random", preset="nintendo")
    for lang in ("en", "ru", "vi"):
        page.goto(f"{web.url}/?lang={lang}")
        page.wait_for_selector("#unfinished li[data-game] .score")
        score = page.evaluate(
            LINE_JS
            + """ const s = document.querySelector('#unfinished li[data-game] .score');
            return {lines: s.getClientRects().length, height: s.getBoundingClientRect().height, text: s.textContent,
                    line: LINE(s)}; }"""
        )
        # The score as it stands (a dealt hand bonus may already have scored): on one line, whatever it is.
        assert re.fullmatch(r"\d+–\d+", score["text"]), (lang, score)
        assert score["lines"] == 1 and score["height"] < 1.5 * score["line"], (lang, score)
    gap = page.evaluate("""() => document.getElementById('create').getBoundingClientRect().top
        - document.getElementById('private').closest('label').getBoundingClientRect().bottom""")
    assert 0 <= gap <= 16, gap  # was 47 px: an empty error line and its margins


def test_the_lobby_remembers_the_match_length_and_has_one_control_for_it(browser, web):  # noqa: F811
    page = new_page(browser, **DESKTOP)
    page.goto(web.url + "/?lang=en")
    page.select_option("#preset", "nintendo")
    page.dispatch_event("#preset", "change")
    page.click("#options-box summary")
    # One control for the match length: the options no longer repeat it as "Hands in a match".
    assert page.locator("#opt-hands").count() == 0
    labels = page.locator("#new-game label").all_inner_texts()
    assert sum(1 for text in labels if text.startswith(("Match length", "Hands in a match"))) == 1, labels
    expect(page.locator("#length")).to_have_value("12")
    expect(page.locator("#preset-note")).to_contain_text("12 hands")
    page.select_option("#length", "3")
    # The length is no rule changed (nothing among the options would be marked); the preset's note, which
    # says "12 hands", says what this table plays.
    expect(page.locator("#changed-count")).to_have_text("")
    expect(page.locator("#preset-note")).to_contain_text("This table: 3 hands.")
    page.reload()
    expect(page.locator("#preset")).to_have_value("nintendo")
    expect(page.locator("#length")).to_have_value("3")
    expect(page.locator("#changed-count")).to_have_text("")
    expect(page.locator("#preset-note")).to_contain_text("This table: 3 hands.")
    # A table made now has three hands, as the form says.
    page.fill("#name", "Ann")
    page.click("#create")
    page.wait_for_url(re.compile(r"/play/"))
    page.wait_for_selector("#match-info:not(:empty)")
    expect(page.locator("#match-info")).to_contain_text("of 3")
    # Until the target score, where the rule set has one, is a length too; and it is remembered.
    page.goto(web.url + "/?lang=en")
    page.select_option("#preset", "boardgame")
    page.dispatch_event("#preset", "change")
    expect(page.locator("#length")).to_have_value("0")
    expect(page.locator("#length option[value='0']")).to_have_text("until 50 points")
    page.select_option("#length", "6")
    page.reload()
    expect(page.locator("#preset")).to_have_value("boardgame")
    expect(page.locator("#length")).to_have_value("6")
    assert page.errors == []  # type: ignore[attr-defined]
