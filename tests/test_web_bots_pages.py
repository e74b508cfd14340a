"""Bots online in Chromium (docs/web.md, "Bots online"): a person makes a bot and its token on their account
page, ``koikoi bot connect`` links an example bot of the arena's with that token, and another person
challenges the bot from its player page and plays it in the browser to the end of a one-hand match; the
bot's page and the account's bots fit a phone in five languages and pass axe."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import httpx
import pytest
from axe import serious_violations
from conftest import Server
from playwright.sync_api import Page, expect
from test_bot_connect import EXAMPLES, Connected
from test_web_account_pages import sign_up
from test_web_bots import until_online
from test_web_browser import new_page, take_turn

from koikoi.web.i18n import LANGUAGES

pytestmark = pytest.mark.limits(signups_per_hour=50, logins_per_minute=100)


@pytest.fixture
def web(sqlite_server):
    return sqlite_server


def make_bot_on_the_account_page(page: Page, web: Server, name: str) -> str:
    """The signed-in player makes a bot and a token on /account; the token, as the page shows it once."""
    page.goto(web.url + "/account?lang=en")
    expect(page.locator("#bot-list")).to_contain_text("You run no bots yet.")
    page.fill("#bot-name", name)
    page.click("#bot-create")
    entry = page.locator(f'#bot-list li[data-bot="{name}"]')
    expect(entry).to_contain_text("BOT")
    expect(entry).to_contain_text("No tokens yet.")
    entry.locator("button.new-token").click()
    expect(page.locator("#token-box")).to_be_visible()
    token = page.locator("#token-text").inner_text().strip()
    assert re.fullmatch(r"kkb_[A-Za-z0-9_-]{43}", token), token
    expect(entry.locator(".token-list li")).to_have_count(1)
    expect(entry.locator(".token-list li code")).to_have_text(token[:8] + "…")
    return token


def test_a_person_plays_a_bot_linked_by_koikoi_bot_connect_in_the_browser(browser, web, tmp_path):  # noqa: F811
    owner, guest = new_page(browser), new_page(browser)
    sign_up(owner, web, "Akane")
    token = make_bot_on_the_account_page(owner, web, "Tanuki")
    token_file = tmp_path / "tanuki.token"
    token_file.write_text(token)
    client = Connected(tmp_path, web.url, token_file, [sys.executable, str(EXAMPLES / "random_bot.py")])
    try:
        client.wait_for("the stream is open")
        until_online(web, "Tanuki")
        guest.goto(web.url + "/@/Tanuki?lang=en")
        expect(guest.locator("#bot-badge")).to_have_text("BOT")
        expect(guest.locator("#bot-owner")).to_have_text("Run by Akane")
        expect(guest.locator("#bot-owner a")).to_have_attribute("href", "/@/Akane")
        expect(guest.locator("#bot-status")).to_have_text("Connected now")
        expect(guest.locator("#challenge-rated")).to_be_disabled()  # a guest plays casual games
        guest.fill("#challenge-name", "Hanae")
        guest.select_option("#challenge-preset", "cardavia")
        guest.select_option("#challenge-hands", "1")
        expect(guest.locator("#challenge-clock")).to_have_value("10+60")  # a real-time clock unless changed
        guest.select_option("#challenge-clock", "20+120")
        guest.click("#challenge-send")
        guest.wait_for_url(re.compile(r"/play/"), timeout=30000)
        seat = guest.url.rsplit("/play/", 1)[1]
        # The challenge's clock came with the game: the bot's clock runs as the person's.
        assert httpx.get(f"{web.url}/api/seat/{seat}").json()["clock"]["control"] == "20+120"
        guest.goto(guest.url + "?speed=0")
        guest.wait_for_selector("#hand .card")
        expect(guest.locator("#side-1 .who")).to_contain_text("Tanuki")
        expect(guest.locator("#side-1 .who .badge.bot")).to_have_text("BOT")
        with httpx.Client(base_url=web.url, timeout=30) as c:
            deadline = time.monotonic() + 240
            while not c.get(f"/api/seat/{seat}").json()["match_over"]:
                assert time.monotonic() < deadline, "the match did not end"
                # The one hand's summary is the match's end, which the server may say a moment after the
                # page shows it: wait for that rather than click the summary away (checked below).
                if guest.locator("dialog[open] #next-hand").count() or not take_turn(guest, use_keys=False):
                    guest.wait_for_timeout(100)
            view = c.get(f"/api/seat/{seat}").json()
        assert view["outcome"]["reason"] == "hands" and view["rules"]["name"] == "cardavia"
        # The last hand's summary, then the match's end, as after any match. (A page that lost its socket
        # under load and came back after the end shows the match's end at once, as table.js means to.)
        expect(guest.locator("dialog[open] #next-hand, dialog[open] #replay-link")).to_be_visible(timeout=30000)
        if guest.locator("dialog[open] #next-hand").count():
            guest.locator("dialog[open] #next-hand").click(timeout=30000)
        expect(guest.locator("dialog[open] #replay-link")).to_be_visible(timeout=30000)
        client.wait_for(f"game {view['game_id']}: over (hands)")
        assert "failed" not in client.said()
        # The bot's page lists the game, against Hanae; its owner's account page says the token was used.
        guest.goto(web.url + "/@/Tanuki?lang=en")
        expect(guest.locator(".recent-games li").first).to_contain_text("Hanae")
        owner.goto(web.url + "/account?lang=en")
        expect(owner.locator('#bot-list li[data-bot="Tanuki"] .token-list li')).to_contain_text("last used")
        expect(owner.locator('#bot-list li[data-bot="Tanuki"] .bot-online')).to_have_text("Connected now")
    finally:
        assert client.stop() == 0
    assert owner.errors == [] and guest.errors == []  # type: ignore[attr-defined]


def test_a_bot_is_declined_offline_and_its_pages_fit_a_phone_in_every_language(browser, web, tmp_path):  # noqa: F811
    owner = new_page(browser, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    sign_up(owner, web, "Akane")
    make_bot_on_the_account_page(owner, web, "Tanuki")
    guest = new_page(browser, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    for lang in LANGUAGES:
        for page, path in ((guest, "/@/Tanuki"), (owner, "/account"), (owner, "/@/Tanuki")):
            page.goto(f"{web.url}{path}?lang={lang}")
            if path == "/account":
                expect(page.locator('#bot-list li[data-bot="Tanuki"] .token-list li')).to_have_count(1)
            elif page is owner:
                # Its owner plays it casually only: the page says so.
                expect(page.locator("#challenge-rated")).to_be_disabled()
                expect(page.locator("#own-bot-note")).to_be_visible()
            else:
                expect(page.locator("#own-bot-note")).to_have_count(0)
                # Not connected: said, and the challenge waits for it.
                expect(page.locator("#bot-status")).to_have_attribute("data-online", "no")
                expect(page.locator("#challenge-send")).to_be_disabled()
                expect(page.locator("#challenge-offline")).to_be_visible()
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, f"{lang} {path}: {width} px wide"
            assert serious_violations(page) == [], (lang, path)
    # Connected, the page says so by itself (it asks every 10 s) and the challenge can be sent.
    token = owner.evaluate("""async () => (await (await fetch("/api/account/bots/Tanuki/tokens",
        {method: "POST", headers: {"Content-Type": "application/json"}})).json()).token""")
    token_file = Path(tmp_path) / "t.token"
    token_file.write_text(token)
    client = Connected(tmp_path, web.url, token_file, [sys.executable, str(EXAMPLES / "random_bot.py")], "--hands", "6")
    try:
        guest.clock.install()
        guest.goto(f"{web.url}/@/Tanuki?lang=en")
        until_online(web, "Tanuki")
        guest.clock.run_for(11000)
        expect(guest.locator("#bot-status")).to_have_text("Connected now")
        expect(guest.locator("#challenge-send")).to_be_enabled()
        guest.select_option("#challenge-hands", "1")
        guest.click("#challenge-send")
        expect(guest.locator("#challenge-waiting")).to_be_visible()
        for _ in range(30):  # the page asks after its challenge every second
            guest.clock.run_for(1000)
            if guest.locator("#challenge-error").inner_text():
                break
        expect(guest.locator("#challenge-error")).to_have_text(
            "Tanuki declined: it does not play matches of this length."
        )
        expect(guest.locator("#challenge-waiting")).to_be_hidden()
    finally:
        assert client.stop() == 0
    assert owner.errors == [] and guest.errors == []  # type: ignore[attr-defined]
