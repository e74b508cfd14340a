"""The pages around the table, as a new player meets them: the lobby's words, the invitation, the rules'
cards, the replay's headings, the error page for a wrong address, the brand mark and plural forms."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect
from test_web_browser import new_page

from koikoi.web.i18n import LANGUAGES, Translator

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def web(sqlite_server):
    return sqlite_server


def friend_game(web, preset: str, **options: object) -> dict:
    with web.client() as c:
        response = c.post(
            "/api/games",
            json={
                "name": "Ann",
                "opponent": "friend",
                "rules": {"preset": preset, "options": options},
                "birth_months": [3, 9],
            },
        )
        assert response.status_code == 201, response.text
        return response.json()


# -- HTTP ------------------------------------------------------------------------------------------------


def test_an_unknown_address_is_a_page_and_the_api_keeps_json(web):
    with web.client() as c:
        for path, lang, words in [("/no-such-page", "en", "There is no page"), ("/a/b?lang=ja", "ja", "ページ")]:
            r = c.get(path)
            assert r.status_code == 404 and r.headers["content-type"].startswith("text/html"), path
            assert f'<html lang="{lang}">' in r.text and words in r.text and '"detail"' not in r.text
            assert "script-src 'self'" in r.headers["content-security-policy"]
        r = c.get("/api/no-such-thing")
        assert r.status_code == 404 and r.headers["content-type"] == "application/json"
        assert r.json() == {"detail": "Not Found"}
        assert c.get("/cards/99.svg").json()["error"] == "no_card"


@pytest.mark.parametrize(
    ("preset", "options", "lang", "rules", "length"),
    [
        ("nintendo", {}, "en", "Rule set: Nintendo", "Match length: 12 hands"),
        ("cardavia", {}, "en", "Rule set: Cardavia", "Match length: 1 hand"),
        ("traditional-all-doubles", {}, "en", "Rule set: Traditional, all doubles", "12 hands"),
        # The match length is no rule change: the preset's name alone (issue 33).
        ("nintendo", {"hands": 3}, "en", "Rule set: Nintendo</p>", "Match length: 3 hands"),
        ("nintendo", {"hands": 3, "sake_yaku": "off"}, "en", "Rule set: Nintendo · Sake yaku: off</p>", "3 hands"),
        ("boardgame", {}, "en", "Rule set: Board game (printed rules)", "Match length: until 50 points"),
        ("bga", {}, "ru", "Правила: Board Game Arena", "Длина партии: 6 раздач"),
        ("nintendo", {"hands": 3, "sake_yaku": "off"}, "uk", "Правила: Nintendo · Яку із саке: вимк.", "3 роздачі"),
    ],
)
def test_the_invitation_names_the_rule_set_and_the_match_length(web, preset, options, lang, rules, length):
    game = friend_game(web, preset, **options)
    with web.client() as c:  # a fresh browser: not the host's own invitation
        html = c.get(game["invite_url"], params={"lang": lang}).text
    shown = " ".join(re.findall(r'<p id="invite-(?:rules|length)">(.*?</p>)', html))
    assert rules in shown and length in shown, shown
    assert preset not in shown  # the preset's id is not a name for people


# -- in the browser ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ja", "ru"])
def test_replay_headings_read_cleanly(browser, web, lang):  # noqa: F811
    """ "Hand 1 (Pine (January))" had brackets inside brackets; the stock count takes its plural form."""
    page = new_page(browser)
    page.goto(f"{web.url}/replay?lang={lang}")
    page.set_input_files("#record-file", str(GOLDEN / "cardavia.record.json"))
    page.wait_for_selector("#replay-board .card")
    tr = Translator(lang)
    for _ in range(3):
        text = page.inner_text("#replay-text")
        header = text.split(" — ")[0]
        month = page.evaluate("() => frames[at].view.month")
        assert tr(f"month.{month}") in header, header
        depth = 0
        for ch in text:  # brackets never nest: (( )) or （（ ））
            depth += ch in "(（"
            depth -= ch in ")）"
            assert depth <= 1, text
        stock = page.evaluate("() => frames[at].view.stock_count")
        assert tr.plural("replay.stock", stock, n=stock) in page.inner_text("#replay-board")
        page.click("#next")
    assert page.errors == []  # type: ignore[attr-defined]
    page.context.close()


@pytest.mark.parametrize(("width", "lang"), [(1280, "en"), (390, "en"), (1280, "ru"), (390, "vi")])
def test_rules_cards_are_one_size_and_captions_keep_apart(browser, web, width, lang):  # noqa: F811
    """The sake cup was drawn smaller than the other chrysanthemum cards, and long captions ran together."""
    page = new_page(browser, viewport={"width": width, "height": 900})
    page.goto(f"{web.url}/rules?lang={lang}")
    page.wait_for_load_state("networkidle")
    boxes = page.evaluate(
        """() => [...document.querySelectorAll('.month-cards figure')].map((f) => {
            const img = f.querySelector('img').getBoundingClientRect();
            const cap = f.querySelector('figcaption');
            const c = cap.getBoundingClientRect();
            return {img: [img.left, img.width, img.height], cap: [c.left, c.right, c.top, c.bottom],
                    overflow: cap.scrollWidth - cap.clientWidth};
        })"""
    )
    assert len(boxes) == 48
    widths = [b["img"][1] for b in boxes]
    heights = [b["img"][2] for b in boxes]
    assert max(widths) - min(widths) < 0.5 and max(heights) - min(heights) < 0.5, (widths, heights)
    assert min(widths) > 30
    for month in range(12):
        row = boxes[4 * month : 4 * month + 4]
        for a, b in zip(row, row[1:]):
            assert a["cap"][1] <= b["cap"][0] + 0.5, (month + 1, a, b)  # each caption ends before the next starts
        assert all(b["overflow"] <= 0 for b in row), (month + 1, row)
    page.context.close()


def test_brand_mark_is_our_svg_and_needs_no_font_or_stylesheet(browser, web):  # noqa: F811
    page = new_page(browser)
    page.goto(f"{web.url}/?lang=ja")
    brand = page.locator("header .brand")
    assert "花" not in brand.inner_text()
    assert brand.evaluate("(a) => a.querySelector('.brand-mark').tagName") == "svg"
    box = page.locator(".brand-mark").bounding_box()
    assert box and 10 <= box["width"] <= 32 and 10 <= box["height"] <= 40, box
    # Without the stylesheet the mark keeps a small size of its own (not the SVG default of 300×150).
    page.route("**/static/style.css*", lambda route: route.abort())
    page.reload()
    box = page.locator(".brand-mark").bounding_box()
    assert box and box["width"] <= 32 and box["height"] <= 40, box
    # The mark adds nothing to the link's name.
    assert page.get_by_role("link", name=Translator("ja")("app.title"), exact=True).count() == 1
    page.context.close()


def test_pages_choose_plural_forms_as_the_server_does(browser, web):  # noqa: F811
    """Intl.PluralRules in the page and Babel on the server pick the same text for every count."""
    page = new_page(browser)
    for lang in LANGUAGES:
        page.goto(f"{web.url}/rules?lang={lang}")
        tr = Translator(lang)
        counts = [*range(0, 32), 100, 101, 102, 105, 111, 1000]
        page_texts = page.evaluate("(ns) => ns.map((n) => tn('lobby.hands', n, {n}))", counts)
        assert page_texts == [tr.plural("lobby.hands", n, n=n) for n in counts], lang
    page.goto(f"{web.url}/?lang=en")
    page.wait_for_selector("#length option", state="attached")
    assert page.locator("#length option").all_inner_texts()[:4] == ["1 hand", "3 hands", "6 hands", "12 hands"]
    page.goto(f"{web.url}/?lang=ru")
    page.wait_for_selector("#length option", state="attached")
    assert page.locator("#length option").all_inner_texts()[:4] == ["1 раздача", "3 раздачи", "6 раздач", "12 раздач"]
    page.context.close()


@pytest.mark.parametrize(("width", "lang"), [(1280, lang) for lang in LANGUAGES] + [(390, "ru"), (390, "en")])
def test_lobby_options_show_whole_choices_and_explain_the_chosen_one(browser, web, width, lang):  # noqa: F811
    """Choices were cut off ("double after the opponent's") and explained with internal names."""
    page = new_page(browser, viewport={"width": width, "height": 900})
    page.goto(f"{web.url}/?lang={lang}")
    page.click("#options-box summary")
    page.wait_for_selector("#options select")
    # The widest choice's text, in the select's own font, fits inside it (less its arrow and padding).
    cut = page.evaluate(
        """() => {
            const ctx = document.createElement('canvas').getContext('2d');
            const cut = [];
            for (const sel of document.querySelectorAll('#options select')) {
                const style = getComputedStyle(sel);
                ctx.font = style.font;
                const room = sel.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
                for (const o of sel.options) {
                    if (ctx.measureText(o.text).width > room) cut.push(sel.id + ': ' + o.text);
                }
            }
            return cut;
        }"""
    )
    assert cut == [], cut
    tr = Translator(lang)
    for option in ("koikoi_multiplier", "sake_yaku", "exhausted", "dealer_selection"):
        for value in page.locator(f"#opt-{option} option").evaluate_all("(os) => os.map((o) => o.value)"):
            page.select_option(f"#opt-{option}", value)
            assert page.inner_text(f"#choice-doc-{option}") == tr(f"choicedoc.{option}.{value}")
        described = page.get_attribute(f"#opt-{option}", "aria-describedby")
        assert described == f"doc-{option} choice-doc-{option}"
    text = page.inner_text("#options")
    assert not re.search(r"[a-z]+_[a-z_]+|\((?:nintendo|bga|cardavia|wikipedia)\b", text), text
    assert page.errors == []  # type: ignore[attr-defined]
    page.context.close()


def test_a_game_under_koikoi_japan_from_the_lobby(browser, web):  # noqa: F811
    """The preset and its new options in the new game's form, and a game played under them."""
    page = new_page(browser, viewport={"width": 1280, "height": 900})
    page.goto(f"{web.url}/?lang=en")
    page.select_option("#preset", "koikoi-japan")
    page.click("#options-box summary")
    expect(page.locator("#opt-koikoi_multiplier")).to_have_value("own_points_then_multiply")
    expect(page.locator("#opt-sake_after_koikoi")).to_have_value("3")
    expect(page.locator("#opt-redeal_on_hand_four")).to_be_checked()
    expect(page.locator("#opt-akatan_aotan_adds")).to_be_checked()
    expect(page.locator("#choice-doc-koikoi_multiplier")).to_contain_text("from the fourth call")
    page.select_option("#opponent", "easy")
    page.click("#create")
    page.wait_for_url(re.compile(r"/play/"))
    expect(page.locator("#rules-name")).to_contain_text("KoiKoi-Japan")
    expect(page.locator("#hand .card")).to_have_count(8)
    assert page.errors == []  # type: ignore[attr-defined]
    page.context.close()


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_every_page_fits_a_phone_and_has_a_main_heading(browser, web, lang):  # noqa: F811
    """The replay page's file field ran 1 px past a 390 px screen, and the table had no level-one heading
    (axe-core: page-has-heading-one) for screen readers to jump to."""
    with web.client() as c:
        game = c.post(
            "/api/games", json={"name": "Ann", "opponent": "easy", "rules": {"preset": "nintendo", "options": {}}}
        ).json()
    page = new_page(browser, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    for path in ("/", "/rules", "/replay", game["url"], game["invite_url"] if "invite_url" in game else "/"):
        page.goto(f"{web.url}{path}?lang={lang}")
        page.wait_for_load_state("networkidle")
        wide = page.evaluate("document.documentElement.scrollWidth") - 390  # (innerWidth grows with the page)
        assert wide <= 0, f"{path} is {wide} px wider than the phone's screen"
        shown = page.evaluate("[...document.querySelectorAll('h1')].filter((h) => !h.closest('[hidden]')).length")
        assert shown == 1, path
    assert page.errors == []  # type: ignore[attr-defined]
    page.context.close()
