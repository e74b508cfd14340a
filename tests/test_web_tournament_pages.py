"""Tournaments in Chromium: a player makes an arena on the list page, two players join it on its page,
the countdown runs, each page opens its player's match when the director pairs them, and after the match
the standings show the result; the pages fit a phone in every language and pass axe."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from axe import serious_violations
from conftest import Server
from playwright.sync_api import expect
from test_web_account_pages import sign_up
from test_web_browser import new_page
from test_web_lobby import play_out

from koikoi.web.i18n import LANGUAGES

pytestmark = pytest.mark.limits(signups_per_hour=50, logins_per_minute=100)


@pytest.fixture
def web(sqlite_server):
    return sqlite_server


def test_an_arena_is_made_joined_and_played_in_the_browser(browser, web: Server):
    wide = {"width": 1280, "height": 900}
    ann, bob = new_page(browser, viewport=wide), new_page(browser, viewport=wide)
    sign_up(ann, web, "Akane")
    sign_up(bob, web, "Botan")
    ann.goto(web.url + "/tournaments?lang=en")
    ann.fill("input[name=name]", "Friday arena")
    ann.fill("input[name=hands]", "1")
    ann.fill("input[name=starts_in]", "1")
    ann.fill("input[name=minutes]", "20")
    # The table options: a rated tournament plays its preset as it is; a casual one may change any option.
    ann.click("#options-box summary")
    expect(ann.locator("#options-rated")).to_be_visible()
    expect(ann.locator("#opt-redeal_on_table_three")).to_be_disabled()
    ann.uncheck("input[name=rated]")
    expect(ann.locator("#options-rated")).to_be_hidden()
    ann.check("#opt-redeal_on_table_three")
    expect(ann.locator("#changed-count")).to_contain_text("1")
    ann.click("#new-tournament button[type=submit]")
    ann.wait_for_url(re.compile(r".*/tournament/[A-Za-z0-9_-]+$"))
    expect(ann.locator("#t-name")).to_have_text("Friday arena")
    made = httpx.get(web.url + "/api/tournaments/" + ann.url.rsplit("/", 1)[1]).json()["tournament"]
    assert made["rated"] is False and made["rules"]["preset"] == "nintendo"
    assert made["rules"]["changes"] == [{"option": "redeal_on_table_three", "value": True}]
    expect(ann.locator("#t-countdown")).to_contain_text("Starts in")
    ann.click("#t-join")
    expect(ann.locator("#t-rows tr")).to_have_count(1)
    expect(ann.locator("#t-pause")).to_be_visible()
    # Bob finds it in the list and joins on its page.
    bob.goto(web.url + "/tournaments?lang=en")
    bob.click("#list-upcoming a:has-text('Friday arena')")
    bob.click("#t-join")
    expect(bob.locator("#t-rows tr")).to_have_count(2)
    # The tournament's chat, beside the standings on a wide screen: Akane writes, Botan reads it.
    expect(ann.locator("#chat-input")).to_be_visible()
    ann.fill("#chat-input", "Good luck, everyone")
    ann.click("#chat-send")
    expect(bob.locator("#chat-log li .chat-text")).to_have_text(["Good luck, everyone"])
    # Sooner than the minute it was made for: the start moved up in the database (no player waits a minute).
    tid = bob.url.rsplit("/", 1)[1]
    from sqlalchemy import create_engine, update

    from koikoi.web.schema import tournaments
    from koikoi.web.store import normalise_url

    engine = create_engine(normalise_url(web.database_url))
    with engine.begin() as conn:
        conn.execute(
            update(tournaments).where(tournaments.c.id == tid).values(starts=datetime.now(UTC) + timedelta(seconds=1))
        )
    engine.dispose()
    # Each page opens its player's match as soon as it is made.
    ann.wait_for_url(re.compile(r".*/play/.*"), timeout=30000)
    bob.wait_for_url(re.compile(r".*/play/.*"), timeout=30000)
    expect(ann.locator("#tournament-link")).to_be_visible()
    expect(ann.locator("#tournament-link")).to_have_text("Back to Friday arena")
    expect(ann.locator("#berserk-button")).to_be_visible()
    # The match is played over the seats' API (the table's own clicks are tested elsewhere): each page,
    # told the match is over, goes back to the tournament.
    play_out(web, {0: ann.url.rsplit("/", 1)[1], 1: bob.url.rsplit("/", 1)[1]})
    # Back on the tournament's page after the match (an arena goes on): the result is in the standings.
    ann.wait_for_url(re.compile(r".*/tournament/.*"), timeout=30000)
    rows = ann.locator("#t-rows tr")
    expect(rows).to_have_count(2)
    expect(ann.locator("#t-rows tr:first-child td:nth-child(4)")).to_have_text("1")  # one match played
    assert ann.errors == [] and bob.errors == []  # type: ignore[attr-defined]


def test_the_tournament_pages_fit_a_phone_in_every_language_and_are_accessible(browser, web: Server):
    page = new_page(browser, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    sign_up(page, web, "Chiyo")
    made = page.request.post(
        web.url + "/api/tournaments",
        data={
            "kind": "swiss",
            "name": "Sunday Swiss",
            "rules": {"preset": "nintendo"},
            "hands": 3,
            "clock": "10+60",
            "starts_in": 30,
            "rounds": 5,
        },
        headers={"Content-Type": "application/json", "Origin": web.url},
    )
    assert made.status == 201, made.text()
    url = made.json()["url"]
    assert (
        page.request.post(
            web.url + url.replace("/tournament/", "/api/tournaments/") + "/join",
            data={},
            headers={"Content-Type": "application/json", "Origin": web.url},
        ).status
        == 200
    )
    for lang in LANGUAGES:
        for path in ("/tournaments", url):
            page.goto(f"{web.url}{path}?lang={lang}")
            if path == url:
                expect(page.locator("#t-rows tr")).to_have_count(1)
                expect(page.locator("#t-head th")).to_have_count(6)
            else:
                expect(page.locator("#list-upcoming li a")).to_have_count(1)
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, f"{lang} {path}: {width} px wide"
            assert serious_violations(page) == [], (lang, path)
            text = page.locator("main").inner_text()
            assert "tournament." not in text and "{" not in text, (lang, path)
    assert page.errors == []  # type: ignore[attr-defined]
    with httpx.Client(base_url=web.url) as c:
        assert c.get(url).status_code == 200
