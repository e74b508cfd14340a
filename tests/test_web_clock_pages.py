"""Clocks, leaving and rematches in Chromium (docs/web.md, "Time controls" and "Leaving a game"): a friend
game made from the home page with a test-only quick clock runs out on the page; resign with its
confirmation, then a rematch offered and accepted in two browsers; abort, with no result; the clocks,
resign and rematch on a 390x844 phone in every language; a claim after the other's tab closed, told to
the server by the browser's own close code."""

from __future__ import annotations

import json
import re

import pytest
from axe import serious_violations
from conftest import Server, limit_args
from playwright.sync_api import Page, expect
from test_web_accounts import signup
from test_web_browser import new_page, take_turn
from test_web_endings import rated_game
from test_web_watch import both_move
from websockets.sync.client import connect

pytestmark = pytest.mark.server  # every test here starts server processes of its own

QUICK = "2+1"


@pytest.fixture
def web(tmp_path):
    s = Server(
        str(tmp_path / "games.db"),
        tmp_path,
        "--time-control",
        QUICK,
        *limit_args(claim_seconds=3, claim_closed_seconds=1),
    )
    s.start()
    yield s
    s.stop(hard=False)


def friend_game(host: Page, guest: Page, web: Server, clock: str) -> None:
    """The host makes a friend game with ``clock`` from the home page; the guest joins by the link."""
    host.goto(web.url + "/?lang=en")
    host.select_option("#opponent", "friend")
    expect(host.locator("#clock-box")).to_be_visible()
    host.select_option("#clock", clock)
    host.click("#create")
    host.wait_for_url(re.compile(r"/play/"))
    link = host.locator("#invite-link")
    expect(link).to_have_value(re.compile(r"/invite/"))
    guest.goto(link.input_value() + "?lang=en")
    guest.click("#join-button")
    guest.wait_for_url(re.compile(r"/play/"))
    expect(host.locator("#invite-box")).to_be_hidden()
    for page in (host, guest):  # the same tables with the cards' flights off: moves are made faster
        page.goto(page.url.split("?")[0] + "?speed=0")
        page.wait_for_selector("#hand .card")


def test_a_player_who_never_moves_has_the_game_aborted_on_the_page(browser, web):  # noqa: F811
    host, guest = new_page(browser), new_page(browser)
    friend_game(host, guest, web, QUICK)
    for page in (host, guest):
        expect(page.locator("#side-0 .clock")).to_be_visible()
        expect(page.locator(".bar .clock.running")).to_have_count(1)
    mover = host.evaluate("state.current_player")
    absent = host if mover == host.evaluate("state.seat") else guest
    # Nobody moves: the first move's time runs out, and the game is aborted (no result, not a loss for
    # the player who did not come); each page says who it was.
    expect(absent.locator("#ending")).to_have_text(
        "You did not make a first move in time: the game was aborted, no result.", timeout=20000
    )
    other = guest if absent is host else host
    expect(other.locator("#ending")).to_contain_text("did not make a first move in time", timeout=20000)
    for page in (host, guest):
        expect(page.locator("#dialog h2")).to_have_text("No result")
        expect(page.locator("#offer-rematch")).to_have_count(0)  # nothing to play again
        assert page.errors == []  # type: ignore[attr-defined]
    # The absent player's clock says they have no time left (their own side on their page, the other's on
    # the other page).
    expect(absent.locator("#side-0 .clock")).to_have_text("0:00")
    expect(other.locator("#side-1 .clock")).to_have_text("0:00")


def test_resign_then_a_rematch_with_the_seats_swapped(browser, web):  # noqa: F811
    host, guest = new_page(browser), new_page(browser)
    friend_game(host, guest, web, "20+120")
    # Each player's table names the time control and says the game is not rated.
    for page in (host, guest):
        expect(page.locator("#match-info")).to_contain_text("20 s a move + 2:00 in the bank · Unrated")
    # Before anyone has moved, the game can be aborted; the player to move moves, then the other does.
    expect(host.locator("#abort-button")).to_be_visible()
    for _ in range(200):  # each plays their turn until both have moved: then abort gives way to resign
        if host.locator("#resign-button").is_visible():
            break
        if not any(take_turn(p, use_keys=False) for p in (host, guest)):
            host.wait_for_timeout(100)
    page = host
    expect(page.locator("#resign-button")).to_be_visible(timeout=20000)
    page.click("#resign-button")
    expect(page.locator("#dialog")).to_contain_text("Resign the match?")
    page.click("#resign-confirm")
    expect(host.locator("#ending")).to_contain_text("You resigned")
    expect(guest.locator("#ending")).to_contain_text("resigned")
    expect(guest.locator("#dialog h2")).to_have_text("You win the match!")
    old = host.evaluate("window.KOIKOI.game_id")
    host.click("#offer-rematch")
    expect(host.locator("#rematch-area")).to_contain_text("Rematch offered")
    expect(guest.locator("#rematch-area")).to_contain_text("offers a rematch")
    urls = [host.url, guest.url]
    guest.click("#accept-rematch")
    for p, was in zip((host, guest), urls):  # both are taken to their seats of the rematch
        p.wait_for_url(lambda url, was=was: url != was and "/play/" in url, timeout=20000)
    new = host.evaluate("window.KOIKOI.game_id")
    assert new == guest.evaluate("window.KOIKOI.game_id") != old
    expect(host.locator("#side-1 .who")).to_contain_text("Friend")
    assert host.evaluate("window.KOIKOI.token") != guest.evaluate("window.KOIKOI.token")


def inside_phone(page: Page, selector: str) -> None:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390 and box["y"] >= 0 and box["y"] + box["height"] <= 844, (
        selector,
        box,
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, selector


def test_clocks_resign_and_rematch_fit_a_phone_in_every_language(browser, web):  # noqa: F811
    from koikoi.web.i18n import LANGUAGES

    phone = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
    for lang in LANGUAGES:
        with web.client() as a, web.client() as b:
            made = a.post("/api/games", json={"opponent": "friend", "name": "Ана", "clock": "20+120"}).json()
            guest = b.post(f"/api/invite/{made['invite_token']}/join", json={"name": "Nguyễn"}).json()["token"]
            tokens = [made["token"], guest]
            moved: set[int] = set()
            while len(moved) < 2:  # each makes a first move over the API: then resign is offered
                for seat, t in enumerate(tokens):
                    v = a.get(f"/api/seat/{t}").json()
                    if v["to_move"]:
                        r = a.post(f"/api/seat/{t}/action", json={"action": v["legal"][0], "seq": v["seq"]})
                        assert r.status_code == 200, r.text
                        moved.add(seat)
        pages = [new_page(browser, **phone) for _ in tokens]
        for page, t in zip(pages, tokens):
            page.goto(f"{web.url}/play/{t}?lang={lang}&speed=0")
            page.wait_for_selector("#hand .card")
            expect(page.locator(".bar .clock")).to_have_count(2)
            expect(page.locator(".bar .clock.running")).to_have_count(1)
            for i in (0, 1):
                inside_phone(page, f"#side-{i} .clock")
            inside_phone(page, "#resign-button")
        host = pages[0]
        host.click("#resign-button")
        inside_phone(host, "#resign-confirm")
        host.click("#resign-confirm")
        for page in pages:
            expect(page.locator("#ending")).to_be_visible()
            inside_phone(page, "#ending")
            inside_phone(page, "#offer-rematch")
        pages[1].click("#offer-rematch")
        expect(host.locator("#accept-rematch")).to_be_visible()
        inside_phone(host, "#accept-rematch")
        inside_phone(host, "#decline-rematch")
        for page in pages:
            assert page.errors == [], (lang, page.errors)  # type: ignore[attr-defined]
            page.context.close()


def test_abort_before_both_have_moved_ends_with_no_result(browser, web):  # noqa: F811
    host, guest = new_page(browser), new_page(browser)
    friend_game(host, guest, web, "20+120")
    expect(guest.locator("#abort-button")).to_be_visible()
    guest.click("#abort-button")
    for page in (host, guest):
        expect(page.locator("#ending")).to_contain_text("aborted: no result")
        expect(page.locator("#dialog h2")).to_have_text("No result")  # not a drawn match: nothing was played
        expect(page.locator("#dialog .hands-table")).to_have_count(0)
        expect(page.locator("#offer-rematch")).to_have_count(0)  # nothing to play again
        expect(page.locator("#abort-button")).to_be_hidden()
        assert page.errors == []  # type: ignore[attr-defined]


@pytest.fixture
def claims(tmp_path):
    """A server whose claims come sooner than the defaults (40 s, 10 s after a closed tab), never as soon
    after a dropped connection as after a closed tab: the page shows which one the server saw."""
    s = Server(str(tmp_path / "games.db"), tmp_path, *limit_args(claim_seconds=60, claim_closed_seconds=4))
    s.start()
    yield s
    s.stop(hard=False)


def test_a_claim_after_the_opponents_tab_is_closed_on_their_turn(browser, claims):  # noqa: F811
    host, guest = new_page(browser), new_page(browser)
    friend_game(host, guest, claims, "20+120")
    seat = host.evaluate("state.seat")
    # Both play until each has moved and it is the guest's turn.
    for _ in range(300):
        moved, mover = host.evaluate("[!state.can_abort, state.current_player]")
        if moved and mover != seat and host.locator("#resign-button").is_visible():
            # The guest's last click may have sent a move that has not landed yet: wait until the guest's
            # page itself says it is to move, with nothing on its way, at the table the host sees.
            guest.wait_for_timeout(300)
            if guest.evaluate(
                "state.to_move && !document.body.classList.contains('waiting-server')"
                f" && state.seq === {host.evaluate('state.seq')}"
            ):
                break
        if not any(take_turn(p, use_keys=False) for p in (host, guest)):
            host.wait_for_timeout(100)
    else:
        pytest.fail("the guest's turn after both had moved never came")
    expect(host.locator("#claim-box")).to_be_hidden()  # the guest is at the table
    guest_url, guest_context = guest.url, guest.context
    # The guest's tab closes. Its last word ("bye", sent as the page hides) is kept back, so that only the
    # browser's own close code (1001, "going away") tells the server that the tab was closed.
    guest.evaluate("() => { ws.send = () => {}; }")
    guest.close()
    text = host.locator("#claim-text")
    expect(text).to_contain_text(re.compile(r"Friend closed the page\. You can claim victory in \d s\."), timeout=20000)
    expect(host.locator("#claim-button")).to_be_disabled()
    expect(text).to_have_text("Friend has not come back. You can claim victory now.", timeout=20000)
    # Read as the rest of the page is: dark text on the light panel (it was light on light, 1.1:1).
    contrast = serious_violations(host, "#claim-box")
    assert contrast == [], contrast
    host.click("#claim-button")
    expect(host.locator("dialog[open] #ending")).to_have_text("Friend left the table; victory was claimed.")
    expect(host.locator("dialog[open] h2")).to_have_text("You win the match!")
    expect(host.locator("#claim-box")).to_be_hidden()
    # The guest opens the table again: the match is lost, by the claim.
    back = guest_context.new_page()
    back.goto(guest_url)
    expect(back.locator("dialog[open] #ending")).to_have_text("You left the table; victory was claimed.")
    expect(back.locator("dialog[open] h2")).not_to_have_text("You win the match!")
    expect(back.locator("#status")).to_have_text("The match is over.")
    with claims.client() as c:
        st = c.get(f"/api/seat/{back.evaluate('window.KOIKOI.token')}").json()
    assert st["status"] == "finished" and st["ending"] == {"reason": "claim", "winner": seat}
    assert host.errors == []  # type: ignore[attr-defined]


def test_a_rated_games_table_says_it_is_rated_and_names_its_clock(browser, web):  # noqa: F811
    """The players' own table (not only a spectator's) says the game is rated, in which category, and
    names its time control."""

    with web.client() as ann, web.client() as bob:
        assert signup(ann, "AnnT").status_code == 201 and signup(bob, "BobT").status_code == 201
        tokens = rated_game(web, ann, bob)
    page = new_page(browser)
    page.goto(f"{web.url}/play/{tokens['bob']}?lang=en&speed=0")
    expect(page.locator("#match-info")).to_contain_text("20 s a move + 2:00 in the bank · Rated, short")
    # Both move, and Bob resigns: his result says what the game did to both ratings.
    with web.client() as c:
        both_move(c, [tokens["ann"], tokens["bob"]])
    with connect(f"{web.ws_url}/ws/{tokens['bob']}") as ws:
        ws.send(json.dumps({"type": "resign"}))
        while json.loads(ws.recv(timeout=30))["type"] != "ended":
            pass
    expect(page.locator("dialog[open] #rating-change")).to_have_text(
        re.compile(r"^You: 1\d{3} \(−\d+\)\s*AnnT: 1\d{3} \(\+\d+\)$")
    )
    assert page.errors == []  # type: ignore[attr-defined]
