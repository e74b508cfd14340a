"""The Replays page in Chromium: a player's finished game listed, its replay opened, and a record file
opened there and reviewed. With KOIKOI_SHOTS set to a folder, the page's screenshots are written there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from axe import serious_violations
from test_web_browser import new_page, wait_js
from test_web_review import PLAYOUTS, finished_game

from koikoi.records import GameRecord
from koikoi.review import review_record
from koikoi.web.context import BROWSER_COOKIE

SHOTS = os.environ.get("KOIKOI_SHOTS")


def shot(page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"labels-replays-{name}.png"), full_page=True)


def as_browser(browser, server, client, **kw):  # noqa: F811 - browser: the fixture
    """A page whose browser is ``client``'s (its cookie): the same player's games."""
    page = new_page(browser, **kw)
    page.context.add_cookies([{"name": BROWSER_COOKIE, "value": client.cookies[BROWSER_COOKIE], "url": server.url}])
    return page


@pytest.mark.limits(review_playouts=PLAYOUTS)
def test_replays_lists_the_game_opens_it_and_reviews_a_record(browser, sqlite_server, tmp_path):  # noqa: F811
    server = sqlite_server
    with server.client() as c:
        gid, token = finished_game(server, c)
        record = c.get(f"/api/games/{gid}/record", params={"token": token}).content
        page = as_browser(browser, server, c, viewport={"width": 1280, "height": 900})
        phone = as_browser(browser, server, c, viewport={"width": 390, "height": 844})
    for p, name in ((phone, "390x844"), (page, "1280x900")):
        p.goto(f"{server.url}/replay?lang=en")
        item = p.locator(f'#replays li[data-game="{gid}"]')
        item.wait_for()
        assert "Cardavia · Dealt-hand bonus (teshi, kuttsuki): off · 1 hand" in item.inner_text()
        assert serious_violations(p) == []
        shot(p, name)
    # Its replay, with its rules named.
    page.locator(f'#replays li[data-game="{gid}"] a.replay-link').click()
    page.wait_for_selector("#replay-board .card")
    assert page.locator("#replay-rules").inner_text() == "Cardavia · Dealt-hand bonus (teshi, kuttsuki): off · 1 hand"
    assert page.locator("#review-button").inner_text() == "Review my game"
    # A file that is no record: the page says what is wrong with it.
    page.goto(f"{server.url}/replay?lang=en")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "nonsense"}')
    page.set_input_files("#record-file", str(bad))
    wait_js(page, "document.getElementById('form-error').textContent.length > 0")
    assert page.locator("#form-error").inner_text().startswith("This file is not a valid game record. — ")
    # A record file: replayed, and reviewed for the player chosen (its one human player at first).
    good = tmp_path / f"koikoi-{gid}.json"
    good.write_bytes(record)
    page.set_input_files("#record-file", str(good))
    page.wait_for_selector("#replay-board .card")
    assert page.locator("#replay-list").is_hidden()
    assert page.locator("#review-seat").input_value() == "0"
    button = page.locator("#review-button")
    assert button.inner_text() == "Review this record"
    button.click()
    page.wait_for_selector("#review-table tbody tr", timeout=120_000)
    review = review_record(GameRecord.from_json(record.decode()), 0, playouts=PLAYOUTS)
    assert page.locator("#review-table tbody tr").count() == review["summary"]["decisions"]
    assert page.locator("#review-summary").inner_text() == (
        f"Ann: {review['summary']['points_lost']:.2f} points lost over {review['summary']['decisions']} "
        f"decisions; mistakes: {review['summary']['mistakes']}."
    )
    assert serious_violations(page) == []
    shot(page, "record-review-1280x900")
    assert not page.errors  # type: ignore[attr-defined]
    assert not phone.errors  # type: ignore[attr-defined]


def test_the_replays_page_of_a_new_browser_says_it_has_none(browser, sqlite_server):  # noqa: F811
    page = new_page(browser, viewport={"width": 390, "height": 844})
    page.goto(f"{sqlite_server.url}/replay?lang=ru")
    assert page.locator("#replays-empty").inner_text().startswith("Законченных партий пока нет.")
    assert page.locator("#record-file").is_visible()
    assert serious_violations(page) == []
    shot(page, "empty-390x844")
    assert not page.errors  # type: ignore[attr-defined]
