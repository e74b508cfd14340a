"""The public lobby in Chromium, as strangers meet there: two people sign up in two browsers, one posts a
rated seek on a clock, the other sees the clock in the list and accepts the seek, both are taken to the
table, where the clock runs, and play a one-hand match,
and both player pages show the new ratings and the game; two guests paired by quick pairing; a lone
player offered the computer after 15 s; the lobby in five languages on a phone."""

from __future__ import annotations

import re
import time

import httpx
import pytest
from axe import serious_violations
from conftest import Server
from playwright.sync_api import Page, expect
from test_web_account_pages import sign_up
from test_web_browser import new_page, take_turn

from koikoi.web.i18n import LANGUAGES

pytestmark = pytest.mark.limits(signups_per_hour=50, logins_per_minute=100)


@pytest.fixture
def web(sqlite_server):
    return sqlite_server


def token_of(page: Page) -> str:
    return page.url.rsplit("/play/", 1)[1].split("?")[0]


def play_to_the_end(web: Server, pages: list[Page]) -> None:
    """Both players click through the match until the server says it is over."""
    tokens = [token_of(p) for p in pages]
    with httpx.Client(base_url=web.url, timeout=30) as c:
        for _ in range(600):
            if c.get(f"/api/seat/{tokens[0]}").json()["match_over"]:
                return
            if not any(take_turn(p, use_keys=False) for p in pages):
                pages[0].wait_for_timeout(100)
    pytest.fail("the match did not end")


def test_two_strangers_play_a_rated_match_from_the_lobby(browser, web):  # noqa: F811
    ann, bob = new_page(browser), new_page(browser)
    sign_up(ann, web, "Akane")
    sign_up(bob, web, "Botan")
    ann.goto(web.url + "/lobby?lang=en")
    ann.click("#new-seek-box summary")
    ann.select_option("#seek-preset", "cardavia")
    ann.select_option("#seek-hands", "1")
    # Signed in, a seek is rated unless changed, with a clock chosen from the start (a real-time one); "no
    # clock" is for casual seeks only.
    expect(ann.locator("#seek-rated")).to_be_checked()
    expect(ann.locator("#seek-clock")).to_have_value("10+60")
    expect(ann.locator('#seek-clock option[value="none"]')).to_be_disabled()
    ann.uncheck("#seek-rated")
    expect(ann.locator('#seek-clock option[value="none"]')).to_be_enabled()
    ann.select_option("#seek-clock", "none")
    ann.check("#seek-rated")
    expect(ann.locator("#seek-clock")).to_have_value("10+60")
    expect(ann.locator('#seek-clock option[value="none"]')).to_be_disabled()
    ann.select_option("#seek-clock", "20+120")
    ann.click("#seek-create")
    expect(ann.locator("#seek-list li.seek.mine")).to_have_count(1)
    expect(ann.locator("#seek-list li.seek.mine button")).to_have_text("Cancel")
    # Bob's lobby shows the seek live, with Ann's name (a link to her page) and rating, and he accepts it.
    bob.goto(web.url + "/lobby?lang=en")
    seek = bob.locator("#seek-list li.seek")
    expect(seek).to_have_count(1)
    expect(seek.locator(".who a")).to_have_text("Akane")
    expect(seek.locator(".who a")).to_have_attribute("href", "/@/Akane")
    expect(seek.locator(".what")).to_have_text("Cardavia · 1 hand · rated")
    expect(seek.locator(".clock-name")).to_have_text("20 s a move + 2:00 in the bank")
    seek.locator("button").click()
    bob.wait_for_url(re.compile(r"/play/"))
    # Ann's lobby takes her to her own seat of the same game.
    ann.wait_for_url(re.compile(r"/play/"), timeout=30000)
    assert token_of(ann) != token_of(bob)
    assert ann.evaluate("window.KOIKOI.game_id") == bob.evaluate("window.KOIKOI.game_id")
    expect(ann.locator("#side-1 .who")).to_contain_text("Botan")
    # The seek's clock came with the game, and runs: one player's clock counts down, on both tables.
    for page in (ann, bob):
        expect(page.locator("#side-0 .clock")).to_be_visible()
        expect(page.locator(".bar .clock.running")).to_have_count(1)
    seat = httpx.get(f"{web.url}/api/seat/{token_of(bob)}").json()
    assert seat["clock"]["control"] == "20+120" and seat["clock"]["on_time"] == "lose"
    for page in (ann, bob):  # the same tables with the cards' flights off: the match is played faster
        page.goto(page.url.split("?")[0] + "?speed=0")
        page.wait_for_selector("#hand .card")
    play_to_the_end(web, [ann, bob])
    for page in (ann, bob):
        for name in ("Akane", "Botan"):
            page.goto(f"{web.url}/@/{name}?lang=en")
            expect(page.locator(".rating-chart")).to_have_count(1)
            expect(page.locator("body")).to_contain_text("Short matches")
            # The match is among the player's recent games, against the other.
            other = "Botan" if name == "Akane" else "Akane"
            expect(page.locator(".recent-games li").first).to_contain_text(other)
    with httpx.Client(base_url=web.url) as c:
        ratings = [c.get(f"/api/players/{n}").json()["ratings"]["short"] for n in ("Akane", "Botan")]
    assert [r["games"] for r in ratings] == [1, 1] and all(r["rd"] < 500 for r in ratings)
    assert ann.errors == [] and bob.errors == []  # type: ignore[attr-defined]


def test_two_guests_are_paired_by_quick_pairing(browser, web):  # noqa: F811
    ann, bob = new_page(browser), new_page(browser)
    for page, name in ((ann, "Ann"), (bob, "Bob")):
        page.goto(web.url + "/lobby?lang=en")
        page.fill("#guest-name", name)
    # A guest's seek is casual: the box is not ticked, and cannot be.
    expect(ann.locator("#seek-rated")).not_to_be_checked()
    expect(ann.locator("#seek-rated")).to_be_disabled()
    # Each pool says its clock.
    expect(ann.locator("#pool-nintendo-3 .pool-clock")).to_have_text("10 s a move + 1:00 in the bank")
    expect(ann.locator("#pool-bga-6 .pool-clock")).to_have_text("20 s a move + 2:00 in the bank")
    ann.click("#pool-nintendo-3")
    expect(ann.locator("#waiting")).to_be_visible()
    expect(ann.locator("#waiting-text")).to_contain_text(
        "Looking for an opponent: Nintendo · 3 hands · 10 s a move + 1:00 in the bank"
    )
    expect(bob.locator('[data-waiting="nintendo-3"]')).to_have_text("1 waiting")  # pushed to Bob's lobby
    bob.click("#pool-nintendo-3")
    ann.wait_for_url(re.compile(r"/play/"), timeout=30000)
    bob.wait_for_url(re.compile(r"/play/"), timeout=30000)
    assert ann.evaluate("window.KOIKOI.game_id") == bob.evaluate("window.KOIKOI.game_id")
    expect(ann.locator("#side-1 .who")).to_contain_text("Bob")
    expect(bob.locator("#side-1 .who")).to_contain_text("Ann")
    # Paired on the pool's clock, the first mover's running.
    expect(ann.locator(".bar .clock.running")).to_have_count(1)
    assert httpx.get(f"{web.url}/api/seat/{token_of(ann)}").json()["clock"]["control"] == "10+60"


def test_a_lone_player_is_offered_the_computer_after_15_seconds(browser, web):  # noqa: F811
    page = new_page(browser)
    page.clock.install()
    page.goto(web.url + "/lobby?lang=en")
    page.click("#pool-bga-6")
    expect(page.locator("#waiting")).to_be_visible()
    page.clock.run_for(14000)
    expect(page.locator("#offer")).to_be_hidden()  # not before 15 s
    page.clock.run_for(2000)
    expect(page.locator("#offer")).to_be_visible()
    expect(page.locator("#offer-text")).to_contain_text(re.compile(r"plays at about \d{3,4}"))
    page.click("#offer-accept")
    page.wait_for_url(re.compile(r"/play/"))
    state = httpx.get(f"{web.url}/api/seat/{token_of(page)}").json()
    assert state["opponent"] in ("easy", "medium", "hard", "expert") and state["rules"]["hands"] == 6
    # Taking the offer left the pool: nobody waits there now.
    assert httpx.get(f"{web.url}/api/lobby").json()["pools"]["bga-6"]["waiting"] == 0


def test_the_lobby_fits_a_phone_in_every_language_and_is_accessible(browser, web):  # noqa: F811
    page = new_page(browser, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    with httpx.Client(base_url=web.url) as c:
        seek = {"rules": {"preset": "bga"}, "hands": 6, "name": "Hanako", "clock": "20+120"}
        assert c.post("/api/lobby/seeks", json=seek).status_code == 201
        for lang in LANGUAGES:
            page.goto(f"{web.url}/lobby?lang={lang}")
            expect(page.locator("#seek-list li.seek")).to_have_count(1)
            # The seek's clock and the pools' in the page's language, as the server words them too.
            clock = page.locator("#seek-list li.seek .clock-name")
            expect(clock).to_have_text(page.locator("#pool-bga-6 .pool-clock").inner_text())
            assert clock.inner_text() != "20+120" and "{" not in clock.inner_text(), lang
            c.get("/api/lobby")  # keeps the seek (its owner asked after the lobby)
            page.click("#new-seek-box summary")
            page.click(".levels summary")
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, f"{lang}: the lobby is {width} px wide"
            assert serious_violations(page) == [], lang
            time.sleep(0.1)
