"""Two browsers on two server processes that share one PostgreSQL database (docs/web.md, "Scaling out").

The host sets up a friend game in the lobby of process A; the friend opens the invitation on process B
and joins; they play by clicking, and each page shows the other's moves as they are made, without a
reload: each process hears of the other's moves only through the database. Needs Chromium (as
test_web_browser.py) and the PostgreSQL named by ``KOIKOI_TEST_POSTGRES_URL``; skipped without it.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from conftest import POSTGRES_URL, Server, make_database
from playwright.sync_api import Page, expect
from test_web_browser import create_table, new_page, seq, take_turn, wait_js

pytestmark = [
    pytest.mark.server,
    pytest.mark.skipif(not POSTGRES_URL, reason="needs PostgreSQL: set KOIKOI_TEST_POSTGRES_URL"),
]

# What a page shows of the table that both players see alike: its move number, the cards on the table,
# the stock's count and each side's captures (side-0 is the page's own player, side-1 the opponent).
TABLE = """() => {
  const cards = (sel) => [...document.querySelectorAll(sel)].map((e) => Number(e.dataset.card)).sort((a, b) => a - b);
  return {
    seq: Number(document.body.dataset.seq),
    field: cards("#field .card[data-card]"),
    stock: document.getElementById("stock-count").textContent,
    own: cards("#side-0 .captures .card[data-card]"),
    opponent: cards("#side-1 .captures .card[data-card]"),
    reloaded: window.koikoiTestMark !== "set before the first move",
  };
}"""


@pytest.fixture
def two(tmp_path):
    pg = make_database("postgresql", tmp_path)
    a, b = Server(pg, tmp_path), Server(pg, tmp_path)
    a.start()
    try:
        b.start()
        yield a, b
    finally:
        a.stop(hard=False)
        b.stop(hard=False)


def table(page: Page) -> dict:
    return page.evaluate(TABLE)


def assert_same_table(host: Page, guest: Page) -> None:
    """Both pages at the same move show the same table, each from its own seat."""
    h, g = table(host), table(guest)
    assert h["seq"] == g["seq"], (h, g)
    assert h["field"] == g["field"] and h["stock"] == g["stock"], (h, g)
    assert h["own"] == g["opponent"] and h["opponent"] == g["own"], (h, g)
    assert not h["reloaded"] and not g["reloaded"], "a page was reloaded"


def test_two_browsers_on_two_processes_see_each_others_moves(browser, two):  # noqa: F811
    a, b = two
    host = new_page(browser)  # a browser context each: two browsers, with cookies of their own
    guest = new_page(browser)
    try:
        create_table(host, a, "friend", preset="nintendo", hand_bonus=0)  # twelve hands, none won at the deal
        assert host.url.startswith(a.url + "/play/")
        link = host.input_value("#invite-link")
        assert link.startswith(a.url + "/invite/")
        # The friend gets the link and opens it on the other process, as a load balancer may send them.
        guest.goto(b.url + urlsplit(link).path + "?lang=en")
        guest.fill("#name", "Bo")
        guest.click("#join-button")
        guest.wait_for_url(re.compile(r"/play/"))
        guest.goto(guest.url + "?speed=0")
        guest.wait_for_selector("#hand .card")
        assert guest.url.startswith(b.url + "/play/")
        # Process A hears of the join made through B: the host's invitation goes, the friend's name comes.
        expect(host.locator("#invite-box")).to_be_hidden(timeout=30000)
        expect(host.locator("#side-1 .who")).to_contain_text("Bo", timeout=30000)
        expect(guest.locator("#side-1 .who")).to_contain_text("Ann", timeout=30000)
        for page in (host, guest):
            page.evaluate("() => { window.koikoiTestMark = 'set before the first move'; }")
        wait_js(host, f"Number(document.body.dataset.seq) === {seq(guest)}")
        assert_same_table(host, guest)

        plays = {"host": 0, "guest": 0}
        moves = 0
        for _ in range(600):
            if min(plays.values()) >= 4:
                break
            acted = False
            for name, me, other in (("host", host, guest), ("guest", guest, host)):
                before, seen = seq(me), table(other)
                what = take_turn(me, use_keys=False)
                if what not in ("play", "pick", "stop"):
                    continue
                acted = True
                moves += 1
                plays[name] += what == "play"
                # The server took the move ...
                wait_js(me, f"Number(document.body.dataset.seq) > {before}")
                now = seq(me)
                # ... and the other page, on the other process, shows it without being reloaded.
                wait_js(other, f"Number(document.body.dataset.seq) >= {now}")
                assert_same_table(host, guest)
                if what != "stop":  # a card played or taken moves between the hand, the table and a pile
                    after = table(other)
                    assert (after["field"], after["opponent"]) != (seen["field"], seen["opponent"]), (seen, after)
            if not acted:
                host.wait_for_timeout(80)
        else:
            pytest.fail(f"the players did not get four plays each: {plays}")
        assert moves >= 8
        assert host.errors == [] and guest.errors == []  # type: ignore[attr-defined]
    finally:
        host.context.close()
        guest.context.close()
