"""End-to-end: real Chromium (Debian's package, driven by Playwright) against a running server.

Every game here is played by clicking and pressing keys, as a person would. Chromium is found at
``KOIKOI_CHROMIUM`` or on the PATH (``apt install chromium-headless-shell``, or ``chromium``); without it
these tests are skipped with one line that says so, or fail where ``KOIKOI_REQUIRE_BROWSER=1`` (as in CI:
``.ci/run``).
"""

from __future__ import annotations

import re
import time

import pytest
from conftest import Server
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout


def new_page(browser, **kw) -> Page:
    ctx = browser.new_context(**kw)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    # The pages run under a Content-Security-Policy without inline script: anything it blocks is a bug.
    page.on("console", lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None)
    page.errors = errors  # type: ignore[attr-defined]
    return page


def wait_js(page: Page, expression: str, timeout: float = 30000) -> None:
    """Wait until ``expression`` is true in the page. (Playwright's ``wait_for_function`` evaluates its
    predicate with ``eval``, which the pages' CSP forbids; ``evaluate`` is not subject to it.)"""
    deadline = time.monotonic() + timeout / 1000
    while True:
        try:
            if page.evaluate(f"() => Boolean({expression})"):
                return
        except PlaywrightError as e:  # the page navigated while being asked: ask the new one
            if "context was destroyed" not in str(e) and "navigat" not in str(e):
                raise
        if time.monotonic() > deadline:
            raise PlaywrightTimeout(f"waited {timeout:.0f} ms for {expression}")
        page.wait_for_timeout(50)


def create_table(
    page: Page, web: Server, opponent: str, preset: str = "cardavia", name: str = "Ann", **options: int
) -> None:
    """Set up a table in the lobby as a player would, changing the given table options in its editor."""
    page.goto(web.url + "/?lang=en")
    page.fill("#name", name)
    page.select_option("#opponent", opponent)
    page.select_option("#preset", preset)
    if options:
        page.click("#options-box summary")
        for option, value in options.items():
            page.fill(f"#opt-{option}", str(value))
            page.dispatch_event(f"#opt-{option}", "change")
        expect(page.locator("#changed-count")).to_contain_text(str(len(options)))
    page.click("#create")
    page.wait_for_url(re.compile(r"/play/"))
    page.wait_for_selector("#hand .card")
    # Animations off for the test: the same page at speed 0.
    page.goto(page.url + "?speed=0")
    page.wait_for_selector("#hand .card")


def seq(page: Page) -> int:
    return int(page.evaluate("document.body.dataset.seq || -1"))


def take_turn(page: Page, use_keys: bool) -> str | None:
    """Do whatever this page's player can do now; returns what was done, or None if nothing."""
    try:
        return _take_turn(page, use_keys)
    except PlaywrightTimeout:  # the table changed under the click (the other player moved): look again
        return None


def _take_turn(page: Page, use_keys: bool) -> str | None:
    if page.locator("dialog[open] #stop-button").count():
        if use_keys:
            page.keyboard.press("s")
        else:
            page.click("dialog[open] #stop-button", timeout=3000)
        return "stop"
    if page.locator("dialog[open] #next-hand").count():
        page.click("dialog[open] #next-hand", timeout=3000)
        return "next"
    picks = page.locator("#field .card.pick")
    if picks.count():
        if use_keys:
            page.keyboard.press("1")
        else:
            picks.first.click(timeout=3000)
        return "pick"
    playable = page.locator("#hand button.card.playable")
    if playable.count():
        if use_keys:
            key = page.evaluate("""() => {
                const cards = [...document.querySelectorAll('#hand .card')];
                return String(cards.findIndex((c) => c.classList.contains('playable')) + 1);
            }""")
            page.keyboard.press(key)
        else:
            playable.first.click(timeout=3000)
        # A card whose month lies twice on the table waits for the choice of the card to take.
        return "select" if page.locator("#field .card.pick").count() else "play"
    return None


def test_a_whole_game_against_the_computer_by_clicking_and_keys(browser, web):
    page = new_page(browser)
    # A deal can end in two turns (the moon and the sake cup taken at once make a yaku): such a short
    # match does not show clicks and keys both playing cards, so the test deals again, a few times at most.
    for _deal in range(5):
        create_table(page, web, "random", hand_bonus=0)  # a one-hand match, not won at the deal
        done = []
        for i in range(400):
            if page.locator("#replay-link").count():
                break
            what = take_turn(page, use_keys=i % 2 == 1)
            if what:
                done.append(what)
            page.wait_for_timeout(60)
        else:
            pytest.fail(f"the game did not end; did {done}")
        assert "next" in done, done  # played to the end of the hand, and its summary
        if done.count("play") + done.count("select") >= 3:
            break
    else:
        pytest.fail(f"five deals in a row ended within two turns; the last did {done}")
    expect(page.locator("dialog[open] h2")).to_contain_text(re.compile("win|drawn"))
    first_table = page.url
    # The finished game replays step by step in the browser.
    page.click("#replay-link")
    page.wait_for_selector("#replay-board .card")
    label = page.locator("#step-label")
    expect(label).to_contain_text("Step 0 of")
    page.click("#next")
    expect(label).to_contain_text("Step 1 of")
    page.keyboard.press("End")
    expect(page.locator("#replay-text")).to_contain_text(re.compile(r"wins \+\d+|No one scores"))
    # "Play again" starts another match against the same player under the same (changed) rules.
    page.goto(first_table)
    page.wait_for_selector("dialog[open] #rematch")
    page.click("#rematch")
    wait_js(page, f"window.location.href !== {first_table!r}")
    page.wait_for_selector("#hand .card")
    rules = page.evaluate("fetch('/api/seat/' + window.KOIKOI.token).then((r) => r.json()).then((s) => s.rules)")
    assert rules["hand_bonus"] == 0 and rules["hands"] == 1 and rules["name"] == "cardavia (custom)"
    assert page.errors == []  # type: ignore[attr-defined]


def test_two_browsers_play_a_hand_over_an_invitation(browser, web):
    host = new_page(browser)
    create_table(host, web, "friend", preset="nintendo", hand_bonus=0)  # not won at the deal
    expect(host.locator("#invite-box")).to_be_visible()
    link = host.input_value("#invite-link")
    assert "/invite/" in link
    guest = new_page(browser)
    guest.goto(link + "?lang=en")
    guest.fill("#name", "Bo")
    guest.click("#join-button")
    guest.wait_for_url(re.compile(r"/play/"))
    guest_token = guest.url.rsplit("/play/", 1)[1].split("?")[0]
    assert guest_token not in link  # the friend's seat has a token of its own, not the invitation
    guest.goto(guest.url + "?speed=0")
    expect(host.locator("#invite-box")).to_be_hidden()
    # The guest's resume link is its own address; the host's page never holds the guest's token.
    assert guest.input_value("#resume-link").endswith(f"/play/{guest_token}")
    assert guest_token not in host.content()
    assert guest_token not in host.evaluate("() => JSON.stringify(window.KOIKOI)")
    # The spent invitation, opened again by someone else, takes no seat.
    third = new_page(browser)
    third.goto(link + "?lang=en")
    assert "/play/" not in third.url and "used" in third.content()
    expect(host.locator("#side-1 .who")).to_contain_text("Bo")
    expect(guest.locator("#side-1 .who")).to_contain_text("Ann")
    moves = 0
    for _ in range(300):
        if host.locator("dialog[open] #next-hand").count() and guest.locator("dialog[open] #next-hand").count():
            break
        acted = False
        for page in (host, guest):
            if take_turn(page, use_keys=moves % 3 == 0) in ("play", "pick", "stop"):
                moves += 1
                acted = True
        if not acted:
            host.wait_for_timeout(80)
    else:
        pytest.fail("the hand did not end")
    assert moves >= 2  # both played: a hand can end early, when a player stops on a yaku
    assert host.locator("dialog[open] h2").inner_text() != ""
    assert seq(host) == seq(guest)
    assert host.errors == [] and guest.errors == []  # type: ignore[attr-defined]


READY = "#hand button.card.playable, #field .card.pick, dialog[open] #stop-button, dialog[open] #next-hand"


def act_once(page: Page, timeout: float = 60.0) -> None:
    """Wait for this player's turn, make one move and wait until the server has taken it (failing, with
    what was tried and what the page showed, if no move is taken within ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    tried: list[str | None] = []
    while time.monotonic() < deadline:
        page.wait_for_selector(READY)
        before = seq(page)
        what = take_turn(page, use_keys=False)
        if what in ("play", "pick", "stop"):
            wait_js(page, f"Number(document.body.dataset.seq) > {before}")
            return
        tried.append(what)
    shown = page.evaluate(
        """(ready) => ({seq: document.body.dataset.seq, classes: document.body.className,
        dialog: document.querySelector('dialog[open]')?.innerText ?? null,
        ready: [...document.querySelectorAll(ready)].map((e) => e.outerHTML.slice(0, 160))})""",
        READY,
    )
    pytest.fail(f"no move taken in {timeout:.0f} s; tried {tried[-8:]} ({len(tried)} tries); the page: {shown}")


def test_the_server_restarts_mid_game_and_the_table_continues(browser, web):
    page = new_page(browser)
    create_table(page, web, "easy", preset="nintendo")
    for _ in range(3):
        act_once(page)
    page.wait_for_selector(READY)
    at = seq(page)
    web.restart()
    # The page reconnects by itself and offers the same table.
    wait_js(page, "!document.body.classList.contains('offline')", timeout=20000)
    page.wait_for_selector(READY)
    assert seq(page) == at
    act_once(page)
    # A reload shows the same game, too.
    page.reload()
    page.wait_for_selector("#hand .card")
    assert seq(page) > at


def test_phone_sized_screen(browser, web):
    page = new_page(browser, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    create_table(page, web, "easy", preset="nintendo")  # twelve hands: the match cannot end in three moves
    for _ in range(3):
        act_once(page)
    # This player's turn again: the computer's reply, shown, no longer redraws the hand under the measure.
    page.wait_for_selector(READY)
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the table is {overflow}px wider than a phone screen"
    box = page.locator("#hand .card").first.bounding_box()
    assert box and box["width"] >= 36  # big enough to tap


def test_languages_switch_and_translate_the_table(browser, web):
    page = new_page(browser)
    page.goto(web.url + "/?lang=en")
    page.select_option("#lang-select", "ru")
    page.wait_for_url(re.compile("lang=ru"))
    assert page.get_attribute("html", "lang") == "ru"
    assert page.inner_text("#create") != "Start the game"
    page.click("#create")
    page.wait_for_url(re.compile(r"/play/"))
    page.wait_for_selector("#hand .card")
    assert page.get_attribute("html", "lang") == "ru"
    english = page.evaluate("() => window.I18N['kind.brights']")
    assert page.inner_text("#side-0 .group.brights .group-label").lower().startswith(english.lower())
    assert english != "Brights"


def test_lobby_lists_and_resumes_games(browser, web):
    page = new_page(browser)
    create_table(page, web, "easy", preset="nintendo")
    act_once(page)
    page.goto(web.url + "/")
    item = page.locator("#unfinished li[data-game]")
    expect(item).to_have_count(1)
    item.locator("a").click()
    page.wait_for_url(re.compile(r"/play/"))
    page.wait_for_selector("#hand .card")


def test_external_card_art(tmp_path, browser):
    # A tiny deck of its own (the test reads nothing outside the checkout): one image per card, named as
    # an art folder names them.
    art = tmp_path / "art"
    art.mkdir()
    for m in range(1, 13):
        for i in range(4):
            (art / f"m{m}-{i}.svg").write_text(
                f'<svg xmlns="http://www.w3.org/2000/svg" width="60" height="96"><text y="20">{m}-{i}</text></svg>'
            )
    s = Server(str(tmp_path / "games.db"), tmp_path, "--card-art", str(art))
    s.start()
    try:
        with s.client() as c:
            for card, name in [(0, "m1-0.svg"), (47, "m12-3.svg"), (43, "m11-3.svg")]:
                r = c.get(f"/cards/{card}.svg")
                assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
                assert r.text == (art / name).read_text()
        page = new_page(browser, viewport={"width": 1400, "height": 6000})
        page.goto(s.url + "/rules")
        # Every face on the reference page is drawn from the folder's file.
        wait_js(
            page, "[...document.querySelectorAll('.month-cards img')].every((i) => i.complete && i.naturalWidth > 0)"
        )
        assert page.locator(".month-cards img").count() == 48
    finally:
        s.stop(hard=False)


def test_the_drawn_card_is_shown_before_it_resolves(browser, web):
    page = new_page(browser)
    create_table(page, web, "easy", preset="nintendo")
    page.goto(page.url.split("?")[0])  # normal speed: events are shown one by one
    page.wait_for_selector(READY)
    before = seq(page)
    # Watch the reveal slot from inside the page, so that no brief showing is missed.
    page.evaluate("""() => { window.revealed = [];
        new MutationObserver(() => document.querySelectorAll('#reveal.on .card').forEach(
            (c) => window.revealed.push(c.className))).observe(document.getElementById('reveal'),
            {attributes: true, childList: true, subtree: true}); }""")
    act_once(page)
    wait_js(page, f"Number(document.body.dataset.seq) > {before}")
    wait_js(page, "window.revealed.some((c) => c.includes('draw'))", timeout=10000)


def test_every_page_works_under_its_content_security_policy(browser, web):
    """No inline script, no eval: the CSP header is on every page and nothing of ours breaks it."""
    with web.client() as c:
        game = c.post(
            "/api/games", json={"name": "Ann", "opponent": "friend", "rules": {"preset": "nintendo", "options": {}}}
        ).json()
    page = new_page(browser)
    for path in ("/", "/rules", "/rules?preset=bga", "/replay", "/puzzles", game["url"], game["invite_url"]):
        response = page.goto(web.url + path)
        assert response is not None and "script-src 'self'" in response.headers["content-security-policy"]
        assert response.headers["referrer-policy"] == "no-referrer"
        page.wait_for_load_state("networkidle")
        # The page's settings arrived through the JSON data block (the language menu is filled from it).
        assert page.evaluate("() => typeof K === 'object' && typeof K.page === 'string'"), path
    page.goto(web.url + "/rules")
    with page.expect_navigation():
        page.select_option("select[name=preset]", "bga")  # submits without an inline handler
    assert "preset=bga" in page.url
    assert page.errors == []  # type: ignore[attr-defined]
