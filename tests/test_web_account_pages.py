"""The account pages in Chromium, as a player meets them: a guest signs up on /account and keeps their
game, another browser signs in to the same account and finds it, a wrong password is said in the page's
language, signing out turns the header back to "Sign in", and the page speaks Japanese and fits a phone."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from conftest import Server
from playwright.sync_api import Page, expect
from sqlalchemy import update
from test_web_accounts import login, signup
from test_web_browser import create_table, new_page

from koikoi.web.i18n import Translator
from koikoi.web.schema import accounts
from koikoi.web.store import Store

PASSWORD = "plum-blossom-rain"
pytestmark = pytest.mark.limits(signups_per_hour=50, logins_per_minute=100)


@pytest.fixture
def web(sqlite_server):
    return sqlite_server


def sign_up(page: Page, web: Server, name: str, password: str = PASSWORD) -> None:
    page.goto(web.url + "/account?lang=en")
    page.get_by_label("Name", exact=True).nth(1).fill(name)
    page.get_by_label("Password", exact=True).nth(1).fill(password)
    page.click("#sign-up")
    page.wait_for_url(web.url + "/")


def sign_in(page: Page, web: Server, name: str, password: str = PASSWORD) -> None:
    page.goto(web.url + "/account?lang=en")
    page.fill("#sign-in-name", name)
    page.fill("#sign-in-password", password)
    page.click("#sign-in")


def listed_games(page: Page, n: int) -> set[str]:
    """The games the lobby lists as unfinished, once it lists ``n`` of them."""
    items = page.locator("#unfinished li[data-game]")
    expect(items).to_have_count(n)
    return set(items.evaluate_all("(items) => items.map((li) => li.dataset.game)"))


def test_a_guest_signs_up_keeps_their_game_and_another_browser_signs_in_to_it(browser, web):  # noqa: F811
    guest = new_page(browser)
    create_table(guest, web, "easy", preset="nintendo", name="Guest")
    game_id = guest.evaluate("window.KOIKOI.game_id")
    guest.goto(web.url + "/?lang=en")
    expect(guest.locator("#account-link")).to_have_text("Sign in")
    guest.click("#account-link")
    guest.wait_for_url(re.compile(r"/account$"))
    sign_up(guest, web, "Hanako")
    # Back in the lobby: the header names the player, the table's name is theirs, the game is still listed.
    expect(guest.locator("#account-link")).to_have_text("Hanako")
    expect(guest.locator("#name")).to_have_value("Hanako")
    assert listed_games(guest, 1) == {game_id}
    # The account page shows who is signed in.
    guest.click("#account-link")
    expect(guest.locator("h1")).to_have_text("Hanako")
    expect(guest.locator("#member-since")).to_contain_text("Member since")

    # Another browser (another device) signs in to the same account and finds the same game.
    other = new_page(browser)
    other.goto(web.url + "/?lang=en")
    expect(other.locator("#unfinished li[data-game]")).to_have_count(0)
    sign_in(other, web, "hanako")  # names are the same ignoring case
    other.wait_for_url(web.url + "/")
    expect(other.locator("#account-link")).to_have_text("Hanako")
    assert listed_games(other, 1) == {game_id}
    for page in (guest, other):
        assert page.errors == []  # type: ignore[attr-defined]
        page.context.close()


def test_a_wrong_password_is_said_in_words_and_stays_on_the_page(browser, web):  # noqa: F811
    with web.client() as c:
        assert c.post("/api/account/signup", json={"name": "Taro", "password": PASSWORD}).status_code == 201
    page = new_page(browser)
    sign_in(page, web, "Taro", "not-the-password")
    alert = page.locator("#sign-in-error")
    expect(alert).to_have_text(page.evaluate("window.I18N['error.bad_login']"))
    expect(alert).to_have_attribute("role", "alert")
    assert page.url.endswith("/account?lang=en")
    expect(page.locator("#account-link")).to_have_text("Sign in")
    expect(page.locator("#sign-in")).to_be_enabled()  # to try again
    # A name that breaks the rules is answered with the rules, in words, before any account is made.
    page.fill("#sign-up-name", "a b")
    page.fill("#sign-up-password", PASSWORD)
    page.click("#sign-up")
    expect(page.locator("#sign-up-error")).to_have_text(page.evaluate("window.I18N['error.bad_account_name']"))
    page.fill("#sign-up-name", "taro")
    page.click("#sign-up")
    expect(page.locator("#sign-up-error")).to_have_text("That name is taken: choose another.")
    assert page.errors == []  # type: ignore[attr-defined]
    page.context.close()


def test_signing_out_turns_the_header_back_to_sign_in(browser, web):  # noqa: F811
    page = new_page(browser)
    sign_up(page, web, "Kenji")
    expect(page.locator("#account-link")).to_have_text("Kenji")
    page.click("#account-link")
    page.click("#sign-out")
    page.wait_for_url(web.url + "/")
    expect(page.locator("#account-link")).to_have_text("Sign in")
    # Signed in again, then out everywhere: this browser too is a guest again.
    sign_in(page, web, "Kenji")
    page.wait_for_url(web.url + "/")
    page.goto(web.url + "/account")
    page.click("#sign-out-everywhere")
    page.wait_for_url(web.url + "/")
    expect(page.locator("#account-link")).to_have_text("Sign in")
    assert page.errors == []  # type: ignore[attr-defined]
    page.context.close()


def test_changing_the_password(browser, web):  # noqa: F811
    page = new_page(browser)
    sign_up(page, web, "Yuki")
    page.goto(web.url + "/account?lang=en")
    page.fill("#old-password", "wrong-password-1")
    page.fill("#new-password", "winter-moon-2024")
    page.click("#change-password")
    expect(page.locator("#password-error")).to_have_text("Wrong name or password.")
    page.fill("#old-password", PASSWORD)
    page.click("#change-password")
    expect(page.locator("#password-done")).to_contain_text("Password changed")
    expect(page.locator("#old-password")).to_have_value("")
    expect(page.locator("#password-error")).to_have_text("")
    other = new_page(browser)
    sign_in(other, web, "Yuki", "winter-moon-2024")
    other.wait_for_url(web.url + "/")
    expect(other.locator("#account-link")).to_have_text("Yuki")
    for p in (page, other):
        assert p.errors == []  # type: ignore[attr-defined]
        p.context.close()


def test_the_account_page_in_japanese(browser, web):  # noqa: F811
    page = new_page(browser)
    page.goto(web.url + "/account?lang=ja")
    assert page.get_attribute("html", "lang") == "ja"
    expect(page.locator("#sign-in-title")).to_have_text("ログイン")
    expect(page.locator("#sign-up-title")).to_have_text("アカウント作成")
    expect(page.get_by_label("パスワード", exact=True)).to_have_count(2)
    expect(page.locator("#account-link")).to_have_text("ログイン")
    page.fill("#sign-in-name", "nobody")
    page.fill("#sign-in-password", "whatever-it-is")
    page.click("#sign-in")
    expect(page.locator("#sign-in-error")).to_have_text("名前かパスワードが違います。")
    assert page.errors == []  # type: ignore[attr-defined]
    page.context.close()


def test_on_a_phone_the_pages_links_fold_behind_the_menu(browser, web):  # noqa: F811
    """Seven pages' links took five rows of a phone's header (and pushed the hand off a table): on a phone
    they wait behind the menu button, the header keeps to one row; on a desktop they are always there."""
    page = new_page(browser, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page.goto(f"{web.url}/?lang=ru")
    header, menu, nav = page.locator("header.top"), page.locator("#menu-button"), page.locator("#site-nav")
    box = header.bounding_box()
    assert box and box["height"] < 60, box
    expect(nav).to_be_hidden()
    expect(menu).to_have_attribute("aria-expanded", "false")
    menu.tap()
    expect(menu).to_have_attribute("aria-expanded", "true")
    for link in nav.locator("a").all():
        expect(link).to_be_visible()
        edge = link.bounding_box()
        assert edge and edge["x"] + edge["width"] <= 390, edge
    page.keyboard.press("Escape")
    expect(nav).to_be_hidden()
    expect(menu).to_be_focused()
    menu.tap()
    page.locator("main").tap(position={"x": 20, "y": 300})  # a tap elsewhere closes it
    expect(nav).to_be_hidden()
    menu.tap()
    nav.get_by_role("link", name="Задачи").tap()
    page.wait_for_url(re.compile(r"/puzzles"))
    expect(page.locator("#site-nav")).to_be_hidden()
    assert page.errors == []  # type: ignore[attr-defined]
    page.context.close()
    page = new_page(browser, viewport={"width": 1280, "height": 800})
    page.goto(f"{web.url}/?lang=ru")
    expect(page.locator("#menu-button")).to_be_hidden()
    expect(page.locator("#site-nav a")).to_have_count(8)
    for link in page.locator("#site-nav a").all():
        expect(link).to_be_visible()
    page.context.close()


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_the_account_page_fits_a_phone(browser, web, lang):  # noqa: F811
    page = new_page(browser, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)

    def fits(what: str) -> None:
        wide = page.evaluate("document.documentElement.scrollWidth") - 390
        assert wide <= 0, f"{what} is {wide} px wider than the phone's screen"

    page.goto(f"{web.url}/account?lang={lang}")
    fits("the guest's account page")
    # The two forms are stacked: one above the other, each as wide as the screen allows.
    a, b = page.locator("#sign-in-form").bounding_box(), page.locator("#sign-up-form").bounding_box()
    assert a and b and b["y"] >= a["y"] + a["height"]
    page.fill("#sign-up-name", "Long_Player-Name_20x")  # the longest name there is
    page.fill("#sign-up-password", PASSWORD)
    page.click("#sign-up")
    page.wait_for_url(re.compile(r"/$"))
    fits("the lobby of a signed-in player")
    header = page.locator("header.top").bounding_box()
    assert header and header["height"] < 60, header  # one row: brand, menu, name, language
    page.goto(f"{web.url}/account?lang={lang}")
    fits("the signed-in player's account page")
    assert page.errors == []  # type: ignore[attr-defined]
    page.context.close()


def test_a_signed_in_friend_accepts_an_invitation_under_their_account_name(browser, web):  # noqa: F811
    with web.client() as c:
        game = c.post(
            "/api/games", json={"name": "Host", "opponent": "friend", "rules": {"preset": "nintendo", "options": {}}}
        ).json()
    page = new_page(browser)
    sign_up(page, web, "Sakura")
    page.goto(web.url + game["invite_url"] + "?lang=en")
    expect(page.locator("#name")).to_have_value("Sakura")
    page.click("#join-button")
    page.wait_for_url(re.compile(r"/play/"))
    page.wait_for_selector("#hand .card")
    assert page.errors == []  # type: ignore[attr-defined]
    page.context.close()


def test_an_account_that_waits_is_said_so_in_the_players_language(browser, web):  # noqa: F811
    """Issue 43, item 13: after wrong passwords from browsers the account does not know, the sign-in form
    of such a browser says the account waits, and how long, in the page's language (not "too many
    messages"), for the right password too."""
    with web.client() as c:
        assert signup(c, "Hiro", PASSWORD).status_code == 201
    with web.client() as guesser:
        codes = [login(guesser, "Hiro", "guessing, guessing").status_code for _ in range(6)]
        assert codes == [401] * 5 + [429], codes  # after five, such browsers wait (15 s, then longer)
    # As if more had come meanwhile (each doubles the wait): a wait a slow page load cannot outlast.
    store = Store(web.database_url)
    with store.engine.begin() as conn:
        later = datetime.now(UTC) + timedelta(seconds=110)
        conn.execute(update(accounts).where(accounts.c.name == "Hiro").values(failed_until=later))
    store.close()
    page = new_page(browser)
    sign_in(page, web, "Hiro")
    expect(page.locator("#sign-in-error")).to_have_text(
        re.compile(r"^Too many wrong passwords for this account: try again in [12] min\.$")
    )
    page.goto(web.url + "/account?lang=ru")
    page.fill("#sign-in-name", "Hiro")
    page.fill("#sign-in-password", PASSWORD)
    page.click("#sign-in")
    expect(page.locator("#sign-in-error")).to_have_text(
        re.compile(r"^Слишком много неверных паролей для этой учётной записи: попробуйте снова через [12] мин\.$")
    )
    assert page.errors == []  # type: ignore[attr-defined]


def test_dates_are_written_one_way_on_every_page(browser, web):  # noqa: F811
    """Issue 43, item 21: a day is CLDR's medium date and a moment the medium date and short time, in the
    page's language, whether the server wrote it (Babel) or the page did (Intl): the account page, the
    player page and the lobby's list of games agree (a reader in UTC, where both write the same)."""
    page = new_page(browser, timezone_id="UTC")
    sign_up(page, web, "Iris")
    create_table(page, web, "easy")
    with web.client() as c:
        created = datetime.fromisoformat(c.get("/api/players/Iris").json()["created"])
    for lang in ("en", "ja", "ru", "vi"):
        tr = Translator(lang)
        page.goto(f"{web.url}/account?lang={lang}")
        expect(page.locator("#member-since")).to_have_text(tr("account.member_since", date=tr.date(created)))
        page.goto(f"{web.url}/@/Iris?lang={lang}")
        expect(page.locator("main")).to_contain_text(tr("player.member_since", date=tr.date(created)))
        page.goto(f"{web.url}/?lang={lang}")
        when = page.locator("#unfinished li[data-game] .when")
        expect(when).to_have_count(1)
        updated = datetime.fromisoformat(
            page.evaluate("fetch('/api/games').then((r) => r.json())")["games"][0]["updated"]
        )
        # (The same words; a browser's ICU may space "7:56 PM" with a narrow no-break space.)
        assert when.inner_text().replace("\u202f", " ") == tr.when(updated), lang
    assert page.errors == []  # type: ignore[attr-defined]
