"""The play page in a real browser (issue 12): your own move shows at once, cards move, sound, captures
you can read, a phone screen that fits, words that agree with the numbers, and accessibility.

Debian's Chromium driven by Playwright against the real server, as in ``test_web_browser.py``; its
fixtures and helpers are used here. ``?speed=0`` turns the card movements off where a test does not
look at them.
"""

from __future__ import annotations

import re
import time

import pytest
from axe import serious_violations
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from test_web_browser import READY, act_once, create_table, new_page, seq, wait_js

from koikoi.cards import card
from koikoi.match import Match
from koikoi.rules import preset
from koikoi.web.views import multiplier_reasons, seat_view, yaku_cards

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
LIVE = "document.body.dataset.live === '1'"


def watch_toasts(page: Page) -> None:
    """Keep every text the toast shows in ``window.toasts`` (a toast is gone after a few seconds)."""
    page.evaluate("""() => { window.toasts = [];
        new MutationObserver(() => window.toasts.push(document.getElementById('toast').textContent))
            .observe(document.getElementById('toast'), {childList: true, characterData: true, subtree: true}); }""")


def count_actions_sent(page: Page) -> list[str]:
    """The action messages the page sends on its sockets from now on (register before the page loads)."""
    sent: list[str] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda f: sent.append(f) if '"action"' in str(f) else None))
    return sent


def my_turn(page: Page) -> None:
    """Wait until it is this player's turn to play a card from the hand (answering any dialog)."""
    for _ in range(200):
        page.wait_for_selector(READY)
        if page.locator("#hand button.card.playable").count():
            return
        act_once(page)
    pytest.fail("never this player's turn to play a card")


# -- 1. your own move takes effect at once ---------------------------------------------------------

# This player's plays in hand h (the hand may have ended since: then they are the previous hand's events).
MY_PLAYS = """(h) => (truth.hand_number === h ? truth.events : truth.previous_hand_events)
    .filter((e) => e.player === truth.seat && e.kind === 'play').length"""


@pytest.mark.parametrize("speed", ["0", "1"])
def test_a_quick_second_click_sends_nothing_and_is_never_stale(browser, web, speed):  # noqa: F811
    page = new_page(browser)
    sent = count_actions_sent(page)
    create_table(page, web, "easy", preset="nintendo")
    if speed != "0":
        page.goto(page.url.split("?")[0])
    my_turn(page)
    watch_toasts(page)
    hand = page.evaluate("truth.hand_number")
    before, n_sent, plays_before = seq(page), len(sent), page.evaluate(MY_PLAYS, hand)
    # Two cards that each play at once (a card with two matches on the table would wait for a choice),
    # clicked in the same moment: the second click lands on the table the first one left behind.
    after = page.evaluate("""() => {
        const single = (el) => playOptions(Number(el.dataset.card)).length === 1;
        const cards = [...document.querySelectorAll('#hand button.card.playable')].filter(single);
        if (cards.length < 2) return null;
        const played = cards[0].dataset.card;
        cards[0].click();
        cards[1].click();
        return {played, inHand: [...document.querySelectorAll('#hand .card')].map((c) => c.dataset.card),
                playable: document.querySelectorAll('#hand .card.playable').length,
                waiting: document.body.classList.contains('waiting-server'),
                status: document.getElementById('status').textContent};
    }""")
    if after is None:
        pytest.skip("fewer than two cards that play at once in this deal")
    # At once, before the server answers: the card has left the hand, nothing else is playable.
    assert after["played"] not in after["inHand"] and len(after["inHand"]) == 7, after
    assert after["playable"] == 0 and after["waiting"], after
    assert after["status"] == "Your move is on its way…"
    wait_js(page, f"Number(document.body.dataset.seq) > {before}")
    page.wait_for_selector(READY)
    assert len(sent) - n_sent == 1, sent[n_sent:]
    assert page.evaluate(MY_PLAYS, hand) == plays_before + 1
    assert not any("moved on" in t for t in page.evaluate("window.toasts")), page.evaluate("window.toasts")
    assert page.errors == []  # type: ignore[attr-defined]


# -- 2. cards move --------------------------------------------------------------------------------

RECORD_FLIGHTS = """() => { const again = Array.isArray(window.flights); window.flights = [];
    if (again) return;
    const animate = Element.prototype.animate;
    Element.prototype.animate = function (frames, opts) {
        const a = animate.call(this, frames, opts);
        if (this.dataset && this.dataset.card !== undefined) {
            const rec = {card: Number(this.dataset.card), frames: JSON.stringify(frames), at: window.flights.length};
            window.flights.push(rec);
            a.finished.then(() => { const g = this.closest('[data-kind], #field, #reveal, #hand');
                rec.landed = g ? (g.dataset.kind ? g.closest('.side').id + ':' + g.dataset.kind : g.id) : null; });
        }
        return a;
    }; }"""

AGREES_WITH_STATE = """() => {
    const ids = (sel) => [...document.querySelectorAll(sel)].map((c) => Number(c.dataset.card)).sort((a, b) => a - b);
    const sorted = (xs) => [...xs].sort((a, b) => a - b);
    const s = truth, me = s.seat;
    const pileOk = [[me, 'side-0'], [1 - me, 'side-1']].every(([p, side]) => KIND_KEYS.every((k) =>
        JSON.stringify(ids(`#${side} .group.${k} .card[data-card]`)) === JSON.stringify(sorted(s.piles[p][k]))));
    const log = [...document.querySelectorAll('#log li')].map((li) => li.textContent);
    return {table: JSON.stringify(ids('#field .card')) === JSON.stringify(sorted(s.table)),
            hand: JSON.stringify(ids('#hand .card')) === JSON.stringify(sorted(s.hand)),
            piles: pileOk,
            log: JSON.stringify(log) === JSON.stringify(s.events.slice(-5).map(describeEvent))};
}"""


def play_with_motion(page: Page) -> list[dict]:
    """Play one card at normal speed and wait until the whole turn (and the computer's) has been shown."""
    my_turn(page)
    page.evaluate(RECORD_FLIGHTS)
    before = seq(page)
    act_once(page)
    wait_js(page, f"Number(document.body.dataset.seq) > {before} + 1 || truth.to_move || truth.match_over")
    page.wait_for_selector(READY)
    wait_js(page, LIVE + " || document.querySelector('dialog[open] #next-hand')")
    wait_js(page, "window.flights.every((f) => f.landed !== undefined)")
    return page.evaluate("window.flights")


def settles_on_the_state(page: Page) -> None:
    """The page's table, hand, piles and log end up the server's. Where the hand ended, its table stays until
    the summary is closed; then the page catches up with the newest state (on a loaded machine the computer
    may have moved again meanwhile: polled, not read once)."""
    deadline = time.monotonic() + 20
    while True:
        if page.locator("dialog[open] #next-hand").count():
            try:
                page.click("dialog[open] #next-hand", timeout=3000)
            except PlaywrightTimeout:  # it closed in between: look again
                pass
        agree = page.evaluate(f"({LIVE}) ? ({AGREES_WITH_STATE})() : null")
        if agree is not None and all(agree.values()):
            return
        assert time.monotonic() < deadline, agree
        page.wait_for_timeout(100)


def test_cards_travel_one_step_at_a_time_and_end_where_the_state_says(browser, web):  # noqa: F811
    page = new_page(browser)
    create_table(page, web, "easy", preset="nintendo", hand_bonus=0)
    page.goto(page.url.split("?")[0])  # normal speed
    flights = []
    for _ in range(3):
        my_turn(page)
        hand_before, events_before = page.evaluate("[truth.hand_number, truth.events.length]")
        step = play_with_motion(page)
        flights += step
        # One step at a time, in the order of play: the cards played and drawn in this turn and the
        # computer's next fly in that order.
        if page.evaluate("truth.hand_number") == hand_before:
            order = page.evaluate(
                f"truth.events.slice({events_before}).filter((e) => e.card !== null).map((e) => e.card)"
            )
            first = {}
            for f in step:
                first.setdefault(f["card"], f["at"])
            seen = [first[c] for c in order if c in first]
            # (A turn can stop after its play: a drawn card matching two table cards waits for our choice.)
            assert len(seen) >= min(2, len(order)) and seen == sorted(seen), (order, step)
        settles_on_the_state(page)
    moved = [f for f in flights if "translate" in f["frames"]]
    assert moved, flights
    # A drawn card turns over as it comes from the stock; captured cards land in their kind's group.
    assert any("rotateY" in f["frames"] for f in flights)
    groups = page.evaluate("K.kinds.map((k) => PILE_GROUP[k])")
    captures = [f for f in flights if f.get("landed") and ":" in f["landed"]]
    assert captures, flights
    for f in captures:
        assert f["landed"].endswith(":" + groups[f["card"]]), f
    assert page.errors == []  # type: ignore[attr-defined]


def test_across_hands_the_moving_table_keeps_in_step_with_the_state(browser, web):  # noqa: F811
    """Whole hands with the movement on (faster than a person would want it): whenever the page takes
    input again, its table, hand, piles and log are the server's; the end of a hand shows its summary."""
    page = new_page(browser)
    create_table(page, web, "easy", preset="nintendo", hand_bonus=0)
    page.goto(page.url.split("?")[0] + "?speed=0.2")
    page.wait_for_selector("#hand .card")
    hands, summaries = set(), 0
    for _ in range(80):
        page.wait_for_selector(READY)
        if page.locator("dialog[open] #next-hand").count():
            summaries += 1
            page.click("dialog[open] #next-hand")
            continue
        wait_js(page, LIVE)
        agree = page.evaluate(AGREES_WITH_STATE)
        assert all(agree.values()), agree
        hands.add(page.evaluate("truth.hand_number"))
        if len(hands) >= 2:
            break
        act_once(page)
    assert len(hands) >= 2 and summaries >= 1, (hands, summaries)
    assert page.errors == []  # type: ignore[attr-defined]


def test_reduced_motion_fades_instead_of_flying(browser, web):  # noqa: F811
    page = new_page(browser, reduced_motion="reduce")
    create_table(page, web, "easy", preset="nintendo", hand_bonus=0)
    page.goto(page.url.split("?")[0])
    flights = play_with_motion(page)
    assert flights and all("opacity" in f["frames"] and "translate" not in f["frames"] for f in flights), flights
    settles_on_the_state(page)  # the turn can end the hand (a viewing yaku): its summary is closed first


# -- 3. sound ---------------------------------------------------------------------------------------


def test_sound_is_off_at_first_and_the_choice_is_remembered(browser, web):  # noqa: F811
    page = new_page(browser)
    create_table(page, web, "easy", preset="nintendo", hand_bonus=0)
    button = page.locator("#sound-button")
    expect(button).to_have_attribute("aria-pressed", "false")
    act_once(page)
    assert page.evaluate("window.KOIKOI_SOUNDS") == []  # off: nothing played
    # The button sits under the table: wait until no dialog (a koi-koi decision, a hand's end) covers it.
    for _ in range(20):
        my_turn(page)
        if not page.locator("dialog[open]").count():
            break
        act_once(page)
    button.click()
    expect(button).to_have_attribute("aria-pressed", "true")
    expect(button).to_have_text("Sound: on")
    assert page.evaluate("audio && audio.state") in ("running", "suspended")
    my_turn(page)
    act_once(page)
    wait_js(page, "window.KOIKOI_SOUNDS.includes('place')")
    # Every kind of sound can be made (synthesised here, no file to fetch).
    page.evaluate("() => { for (const k of ['place', 'capture', 'yaku', 'koikoi', 'end']) sound(k); }")
    assert {"place", "capture", "yaku", "koikoi", "end"} <= set(page.evaluate("window.KOIKOI_SOUNDS"))
    # The same browser remembers the choice; another browser starts silent.
    page.reload()
    expect(page.locator("#sound-button")).to_have_attribute("aria-pressed", "true")
    # The first click of the visit lets the sound start again (anywhere: an open dialog may cover the table).
    page.mouse.click(2, 2)
    assert page.evaluate("audio !== null && audio.state") == "running"
    other = new_page(browser)
    other.goto(page.url)
    expect(other.locator("#sound-button")).to_have_attribute("aria-pressed", "false")
    assert page.errors == [] and other.errors == []  # type: ignore[attr-defined]


# -- 4. captures you can read -----------------------------------------------------------------------

SHOW_PILE = """(chaff) => {
    const v = structuredClone(truth);
    v.piles[v.seat] = {brights: [0, 8], animals: [4, 12, 16, 32], ribbons: [1, 5], chaff};
    state = v; render();
}"""


def test_captured_cards_are_large_and_fan_out_when_the_row_is_full(browser, web):  # noqa: F811
    page = new_page(browser, viewport={"width": 1280, "height": 900})
    create_table(page, web, "easy", preset="nintendo", hand_bonus=0)
    # On our turn, so that no move of the computer's arrives and draws the real piles over the shown ones.
    my_turn(page)
    chaff = [c for c in range(48) if c % 4 in (2, 3) and c not in (42, 43)][:16]
    page.evaluate(SHOW_PILE, chaff)
    boxes = page.evaluate("""() => [...document.querySelectorAll('#side-0 .group.chaff .card[data-card]')]
        .map((c) => c.getBoundingClientRect().toJSON())""")
    assert len(boxes) == 16
    assert all(b["width"] >= 40 for b in boxes), boxes  # was 28 px: plain cards look alike at that size
    # Overlapping where short of room, each card keeps at least its left part in view.
    rows: dict[float, list[dict]] = {}
    for b in boxes:
        rows.setdefault(round(b["top"]), []).append(b)
    for row in rows.values():
        for a, b in zip(row, row[1:]):
            assert b["left"] - a["left"] >= 0.45 * a["width"] - 1, (a, b)
    group = page.locator("#side-0 .group.chaff").bounding_box()
    assert group and all(b["left"] + b["width"] <= group["x"] + group["width"] + 1 for b in boxes)


def test_the_hand_result_shows_the_cards_of_each_yaku(browser, web):  # noqa: F811
    page = new_page(browser)
    create_table(page, web, "easy", preset="nintendo", hand_bonus=0)
    for _ in range(400):
        page.wait_for_selector(READY)
        if page.locator("dialog[open] .yaku-list li").count():
            break
        if page.locator("dialog[open] #next-hand").count():
            page.click("dialog[open] #next-hand")
            continue
        act_once(page)
    else:
        pytest.fail("no hand ended with a yaku")
    kinds = page.evaluate("K.kinds")
    need = {"sanko": 3, "shiko": 4, "ame-shiko": 4, "goko": 5, "ino-shika-cho": 3, "akatan": 3, "aotan": 3}
    need |= {"akatan-aotan": 6, "tane": 5, "tanzaku": 5, "kasu": 10, "tsukimi-zake": 2, "hanami-zake": 2}
    kind_of = {"tane": "animal", "tanzaku": "ribbon", "sanko": "bright", "shiko": "bright", "goko": "bright"}
    items = page.locator("dialog[open] .yaku-list li")
    for i in range(items.count()):
        li = items.nth(i)
        name = li.get_attribute("data-yaku")
        cards = [int(c) for c in li.locator(".card").evaluate_all("(cs) => cs.map((c) => c.dataset.card)")]
        assert len(cards) >= need.get(name, 1), (name, cards)
        if name == "kasu":
            assert all(kinds[c] == "chaff" or c == 32 for c in cards), cards
        elif name in kind_of:
            assert all(kinds[c] == kind_of[name] for c in cards), (name, cards)
        # Name and points are two things, not "Sanko (three brights)5".
        assert re.fullmatch(r".+\S \d+ points?", li.locator(".yaku-line").text_content()), li.text_content()


def test_yaku_cards_on_the_server():
    rules = preset("nintendo")
    pile = sum(1 << card(n) for n in ["pampas-moon", "chrysanthemum-sake", "pine-crane", "cherry-curtain"])
    assert yaku_cards("sanko", 5, pile, rules, 1) == (card("pine-crane"), card("cherry-curtain"), card("pampas-moon"))
    assert yaku_cards("hanami-zake", 5, pile, rules, 1) == (card("cherry-curtain"), card("chrysanthemum-sake"))
    chaff = [c for c in range(48) if c % 4 == 3][:9]
    pile = sum(1 << c for c in chaff) | 1 << card("chrysanthemum-sake")
    both = preset("nintendo").with_settings(["sake_cup=both"])
    assert card("chrysanthemum-sake") in yaku_cards("kasu", 1, pile, both, 1)
    animal = preset("nintendo").with_settings(["sake_cup=animal_only"])
    assert card("chrysanthemum-sake") not in yaku_cards("kasu", 1, pile, animal, 1)


# -- 7. words ----------------------------------------------------------------------------------------


def test_multiplied_points_say_why():
    """Every multiplied result the server sends names its reasons, and their factors make the multiplier."""
    rules = preset("traditional-all-doubles")
    seen = 0
    for seed in range(60):
        m = Match(rules, seed=seed)
        while not m.is_over():
            obs = m.observation(m.current_player)
            m.apply_action(obs.legal_actions[seed % len(obs.legal_actions)])
            last = m.hand if m.is_over() else m.previous_hand
            if last is not None and last.result is not None and last.result.multiplier > 1:
                r = last.result
                reasons = multiplier_reasons(last, r.winner, r.base, r.multiplier)
                product = 1
                for x in reasons:
                    product *= x["factor"]
                assert reasons and product == r.multiplier, (seed, r, reasons)
                view = seat_view(m, 0, seq=0, players=[{}, {}], status="playing", hints=False)
                assert view["results"][-1]["reasons"] == reasons
                seen += 1
                break
        if seen >= 3:
            break
    assert seen >= 3


def test_table_words_agree_with_the_numbers(browser, web):  # noqa: F811
    page = new_page(browser)
    create_table(page, web, "easy", preset="nintendo")
    # Three moves or more, until the hand's log holds two lines (a hand can end, and the next one start
    # with an empty log, within three moves).
    for n in range(10):
        act_once(page)
        page.wait_for_selector(READY)
        if n >= 2 and page.evaluate("document.querySelectorAll('#log li').length") >= 2:
            break
    # The log reads in play order, the newest last: the events of the table on the screen (under a hand's
    # result that is the hand that ended, while the server's latest state is already the next deal).
    log, shown = page.evaluate("""() => [[...document.querySelectorAll('#log li')].map((li) => li.textContent),
        state.events.slice(-5).map(describeEvent)]""")
    assert log == shown and len(log) >= 2
    assert page.locator("#log li").last.get_attribute("class") == "newest"
    # Counts in words, by the language's plural rules.
    page.evaluate(
        "() => { const v = structuredClone(truth); v.stock_count = 1; v.opponent_hand_count = 1; state = v; render(); }"
    )
    assert page.get_attribute("#stock", "aria-label") == "1 card in the stock"
    assert "1 card in hand" in page.inner_text("#side-1 .hand-count")
    # Multiplied points say why.
    text = page.evaluate("stakesText(7, 2, 14, [{why: 'seven_or_more', factor: 2}])")
    assert text == "7 × 2 = 14 points (7 points or more: ×2)"
    text = page.evaluate("stakesText(3, 2, 6, [{why: 'opponent_koikoi', factor: 2}])")
    assert text == "3 × 2 = 6 points (after the other player's koi-koi: ×2)"
    # A yaku made is shown with its points, not as progress that keeps counting ("Kasu 10/11"); with
    # the sake cup counted as chaff too, the chaff count says so and agrees with the kasu count.
    page.evaluate("""() => { const v = structuredClone(truth); const me = v.seat;
        v.rules = Object.assign({}, v.rules, {sake_cup: 'both'});
        v.piles[me] = {brights: [], animals: [32], ribbons: [], chaff: [2, 3, 6, 7, 10, 11, 14, 15, 18]};
        v.yaku[me] = [{name: 'kasu', points: 1}];
        v.progress[me] = [{yaku: 'kasu', have: 10, need: 11}, {yaku: 'tane', have: 1, need: 5}];
        state = v; render(); }""")
    chips = page.locator("#side-0 .progress .chip").all_inner_texts()
    assert not any("10/11" in c for c in chips), chips
    assert "Kasu: 1 point" in chips and any("1/5" in c for c in chips), chips
    assert page.inner_text("#side-0 .group.chaff .count") == "10"
    assert page.locator("#side-0 .group.chaff .card.ghost").count() == 1


def test_plural_words_in_russian(browser, web):  # noqa: F811
    page = new_page(browser)
    create_table(page, web, "easy", preset="nintendo")
    page.goto(page.url + "&lang=ru")
    page.wait_for_selector("#hand .card")
    words = page.evaluate("[1, 3, 5, 21].map((n) => tn('count.stock', n, {n}))")
    assert words == ["1 карта в колоде", "3 карты в колоде", "5 карт в колоде", "21 карта в колоде"]


# -- 6. a phone screen that fits ---------------------------------------------------------------------


def test_the_phone_table_fits_without_scrolling_and_shows_no_key_hints(browser, web):  # noqa: F811
    page = new_page(browser, **PHONE)
    create_table(page, web, "easy", preset="nintendo")
    for _ in range(2):
        act_once(page)
    my_turn(page)
    fit = page.evaluate("""() => ({
        hand: document.getElementById('hand').getBoundingClientRect().bottom,
        hint: document.getElementById('hint-button').getBoundingClientRect().bottom,
        top: document.getElementById('side-1').getBoundingClientRect().top,
        scrollY: window.scrollY, height: window.innerHeight,
        wide: document.documentElement.scrollWidth - window.innerWidth})""")
    assert fit["scrollY"] == 0 and fit["top"] >= 0 and fit["wide"] <= 0, fit
    assert fit["hand"] <= fit["height"] and fit["hint"] <= fit["height"], fit
    expect(page.locator("#hint-button")).to_be_visible()
    # The whole hand in one row, each card large enough to tap.
    boxes = page.locator("#hand .card").evaluate_all("(cs) => cs.map((c) => c.getBoundingClientRect().toJSON())")
    tops = [b["top"] for b in boxes]
    assert max(tops) - min(tops) < boxes[0]["height"] / 2 and min(b["width"] for b in boxes) >= 36, boxes
    # No keyboard hints on a touch screen.
    assert page.locator("#hand .card .key").first.is_hidden()
    assert page.locator("#hint-button .key-hint").is_hidden()
    # The outline of a card that matches hugs the card.
    marked = page.locator("#hand .card.has-match")
    if marked.count():
        card_box = marked.first.bounding_box()
        img_box = marked.first.locator("img").bounding_box()
        assert card_box and img_box
        assert abs(card_box["height"] - img_box["height"]) <= 1 and abs(card_box["width"] - img_box["width"]) <= 1
    # Captured groups fold to counts; a tap opens one.
    page.evaluate(SHOW_PILE, [2, 3, 6, 7, 10])
    label = page.locator("#side-0 .group.chaff button.group-label")
    expect(label).to_have_attribute("aria-expanded", "false")
    assert page.locator("#side-0 .group.chaff .card[data-card]").first.is_hidden()
    label.tap()
    expect(page.locator("#side-0 .group.chaff button.group-label")).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#side-0 .group.chaff .card[data-card]").first).to_be_visible()


def test_a_crowded_phone_table_in_russian_still_fits(browser, web):  # noqa: F811
    """Fourteen cards on the table, progress chips on both sides, a card chosen (the longest status), in
    a language with longer words: the hand and the hint button are still on the screen."""
    page = new_page(browser, **PHONE)
    create_table(page, web, "easy", preset="nintendo")
    page.goto(page.url + "&lang=ru")
    my_turn(page)
    fit = page.evaluate("""() => { const v = structuredClone(truth);
        // Always fourteen cards, none of them in the hand: the deal is random, the crowd is not.
        v.table = [...Array(48).keys()].filter((c) => !v.hand.includes(c)).slice(0, 14);
        const chips = ['tane', 'kasu', 'tanzaku', 'akatan', 'aotan'].map((y) => ({yaku: y, have: 1, need: 5}));
        v.progress = [chips, chips];
        v.koikoi_calls = [1, 1];
        state = v; selected = v.hand[0]; render();
        return {hint: document.getElementById('hint-button').getBoundingClientRect().bottom,
                hand: document.getElementById('hand').getBoundingClientRect().bottom,
                height: window.innerHeight, wide: document.documentElement.scrollWidth - window.innerWidth,
                table: v.table.length}; }""")
    assert fit["wide"] <= 0 and fit["height"] == 844 and fit["table"] == 14, fit
    assert fit["hand"] <= fit["height"] and fit["hint"] <= fit["height"], fit


# A drawn card that matches two table cards, with the two anywhere among eight table cards: (table, drawn).
DRAW_CHOICES = """(at) => { const month = [...Array(12).keys()].find((m) =>
        ![0, 1, 2, 3].some((k) => truth.hand.includes(4 * m + k)));
    const others = [...Array(48).keys()].filter((c) => c >> 2 !== month && !truth.hand.includes(c));
    const table = others.slice(0, 6);
    table.splice(at, 0, 4 * month, 4 * month + 1);
    return [table, 4 * month + 3]; }"""


def test_on_a_phone_the_drawn_card_hides_no_card_to_pick(browser, web):  # noqa: F811
    """On a phone the drawn card shows over the board. When it matches two table cards and the player
    must pick one, every card to pick stays in sight and takes the tap: the drawn card once lay over the
    middle of the table, a tap on the card under it went to it instead, and the table could not be played."""
    page = new_page(browser, **PHONE)
    create_table(page, web, "easy", preset="nintendo")
    my_turn(page)
    for at in range(7):
        table, drawn = page.evaluate(DRAW_CHOICES, at)
        page.evaluate(
            """([table, drawn]) => { const v = structuredClone(truth);
            v.table = table; v.drawn_card = drawn; v.phase = 'draw_choice'; v.to_move = true;
            v.legal = table.filter((c) => c >> 2 === drawn >> 2).map((c) => DRAW_TAKE_BASE + c);
            truth = v; state = v; selected = null; render(); }""",
            [table, drawn],
        )
        expect(page.locator(f"#reveal.on .card[data-card='{drawn}']")).to_be_visible()
        picks = page.locator("#field .card.pick")
        assert picks.count() == 2
        for i in range(2):
            pick = picks.nth(i)
            # Playwright's checks of a real tap (the card under the finger among them), without the tap.
            pick.tap(trial=True, timeout=2000)
            hit = pick.evaluate("""(el) => { const r = el.getBoundingClientRect();
                const under = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
                return {mine: el.contains(under), bottom: r.bottom, height: window.innerHeight}; }""")
            assert hit["mine"] and hit["bottom"] <= hit["height"], (at, i, hit)


def test_key_hints_stay_on_a_desktop(browser, web):  # noqa: F811
    page = new_page(browser, viewport={"width": 1280, "height": 900})
    create_table(page, web, "easy", preset="nintendo")
    my_turn(page)
    expect(page.locator("#hand .card .key").first).to_be_visible()
    expect(page.locator("#hint-button .key-hint")).to_be_visible()


# -- 9. accessibility ---------------------------------------------------------------------------------


def test_table_cards_have_names_focus_shows_and_dialogs_keep_focus(browser, web):  # noqa: F811
    page = new_page(browser)
    create_table(page, web, "easy", preset="nintendo")
    my_turn(page)
    nameless = page.evaluate("""() => [...document.querySelectorAll('#table-wrap .card')].filter((c) => {
        const name = c.getAttribute('aria-label') || (c.querySelector('img') || {}).alt || '';
        return !name.trim(); }).length""")
    assert nameless == 0
    # A match is told by a mark and in words too, not by colour alone.
    for el in page.locator("#hand .card.has-match").all():
        assert el.locator(".match-mark").count() == 1
        assert "matches a card on the table" in (el.get_attribute("aria-label") or "")
    # Keyboard focus on a card is visible.
    page.focus("#hand button.card.playable")
    page.keyboard.press("Tab")
    page.keyboard.press("Shift+Tab")
    style = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert page.evaluate("document.activeElement.classList.contains('card')") and style != "none"
    # Tab goes round a dialog's own buttons and never reaches the table behind it.
    page.evaluate("""() => openDialog('summary', h('h2', {}, 'Hand'), h('div', {class: 'buttons'},
        h('button', {class: 'primary', id: 'a'}, 'A'), h('button', {id: 'b'}, 'B'),
        h('a', {href: '/', id: 'c'}, 'C')))""")
    for _ in range(7):
        page.keyboard.press("Tab")
        assert page.evaluate("document.getElementById('dialog').contains(document.activeElement)")
    for _ in range(4):
        page.keyboard.press("Shift+Tab")
        assert page.evaluate("document.getElementById('dialog').contains(document.activeElement)")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_table_has_no_serious_accessibility_findings(browser, web, lang):  # noqa: F811
    page = new_page(browser)
    create_table(page, web, "easy", preset="nintendo")
    page.goto(page.url + f"&lang={lang}")
    my_turn(page)
    assert serious_violations(page) == []
    # With a card chosen whose month lies twice on the table, and with a dialog open.
    page.evaluate("() => { selected = truth.hand[0]; render(); }")
    assert serious_violations(page) == []
    for _ in range(400):
        page.wait_for_selector(READY)
        if page.locator("dialog[open]").count():
            break
        act_once(page)
    assert serious_violations(page) == []
