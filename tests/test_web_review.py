"""The game review in the web app: its API against a real server and database, and the Review button in Chromium."""

from __future__ import annotations

import json
import time

import pytest
from axe import serious_violations
from test_web_api import choose, create, play_to_the_end
from test_web_browser import new_page, wait_js

from koikoi.records import GameRecord
from koikoi.review import review_record
from koikoi.web.store import Store

PLAYOUTS = 30  # per decision: small, for a 2-core machine; the server takes it as its review_playouts limit
# The API test's budget: a review of a short hand then takes about half a second, long enough for the
# 50 ms poll to see progress mid-way (at 2,000 it took ~150 ms and CI once saw only 0 of 5, then done).
API_PLAYOUTS = 20000


def finished_game(server, client) -> tuple[str, str]:
    """A one-hand game against the random player, played to its end over the socket: (game id, token).

    A game where the player made four moves at least: a hand the computer ends on its first turns leaves
    one decision or none to review, too few to see a review's progress or its first move judged."""
    for _ in range(10):
        game = create(client, "random", "cardavia", hand_bonus=0)  # no hand won at the deal
        if play_to_the_end(server, game["token"]) >= 4:
            return game["game_id"], game["token"]
    pytest.fail("ten hands in a row ended before the player's fourth move")


def wait_done(client, url: str, token: str) -> tuple[dict, list[tuple[int, int]]]:
    """Poll the review until it is done: (its last answer, the progress seen on the way)."""
    seen = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        r = client.get(url, params={"token": token})
        assert r.status_code == 200, r.text
        st = r.json()
        assert st["status"] in ("running", "done"), st
        if st["status"] == "done":
            return st, seen
        if st["total"] is not None:
            seen.append((st["done"], st["total"]))
        time.sleep(0.05)
    raise AssertionError("the review did not finish in two minutes")


@pytest.mark.limits(review_playouts=API_PLAYOUTS)
def test_review_api(server):
    with server.client() as c:
        game = create(c, "random", "cardavia", hand_bonus=0)
        url = f"/api/games/{game['game_id']}/review"
        for method in (c.get, c.post):
            r = method(url, params={"token": game["token"]})
            assert r.status_code == 409 and r.json() == {
                "error": "not_finished",
                "message": "a game can be reviewed once it is over",
            }
        gid, token = finished_game(server, c)
        url = f"/api/games/{gid}/review"
        # Only the game's players: no seat at all is 404, a seat of another game 403.
        for method in (c.get, c.post):
            r = method(url, params={"token": "A" * 24})
            assert r.status_code == 404 and r.json()["error"] == "bad_token"
            r = method(url, params={"token": game["token"]})
            assert r.status_code == 403 and r.json()["error"] == "bad_token"
            assert method(url).status_code == 404
        assert c.get(url, params={"token": token}).json() == {"status": "none", "seat": 0}
        r = c.post(url, params={"token": token})
        assert r.status_code == 202 and r.json()["status"] == "running", r.text
        st, seen = wait_done(c, url, token)
        review = st["review"]
        total = review["summary"]["decisions"]
        assert total > 0
        assert all(t == total and 0 <= d <= total for d, t in seen)
        assert any(0 < d < total for d, _ in seen), f"no progress seen mid-way: {seen}"
        assert [d for d, _ in seen] == sorted(d for d, _ in seen), "progress never goes back"
        for e in review["decisions"]:  # each value with its standard error, and a verdict
            assert e["played"]["stderr"] is not None and e["verdict"] in ("best", "equal", "worse", "mistake")
            assert (e["best"]["action"] != e["played"]["action"]) == (e["loss"] > 0)
        # The server's review is the library's, for the record the players can download.
        record = GameRecord.from_json(c.get(f"/api/games/{gid}/record", params={"token": token}).text)
        assert review == review_record(record, 0, playouts=API_PLAYOUTS)
        # Computed once and stored: asking again answers the stored review at once, and nothing runs.
        r = c.post(url, params={"token": token})
        assert r.status_code == 200 and r.json() == st
        store = Store(server.database_url)
        row = store.review(gid, 0)
        assert row is not None and row.status == "done" and row.done == row.total == total and row.owner is None
        assert json.loads(row.body) == review
        store.close()
    server.restart()
    with server.client() as c:
        assert c.get(url, params={"token": token}).json() == st  # kept in the database


@pytest.mark.limits(review_playouts=200_000, reviews_running=1)
def test_reviews_at_once_are_bounded(sqlite_server):
    server = sqlite_server
    with server.client() as c:
        a = finished_game(server, c)
        b = finished_game(server, c)
        r = c.post(f"/api/games/{a[0]}/review", params={"token": a[1]})
        assert r.status_code == 202
        r = c.post(f"/api/games/{b[0]}/review", params={"token": b[1]})
        assert r.status_code == 429 and r.json() == {
            "error": "busy",
            "message": "1 game reviews are being worked out already: ask again in a minute",
        }
        # Asking for the running one again joins it: no second review of the same game starts.
        r = c.post(f"/api/games/{a[0]}/review", params={"token": a[1]})
        assert r.status_code == 202 and r.json()["status"] == "running"
        # The server goes on playing meanwhile: the review is not on its event loop.
        assert c.get("/api/health").json()["ok"] is True


@pytest.mark.limits(review_playouts=200_000)
def test_one_review_per_game_at_a_time(sqlite_server):
    """A game between two friends: while one player's review runs, the other's waits its turn."""
    server = sqlite_server
    with server.client() as host, server.client() as guest:
        game = create(host, "friend", "cardavia", hand_bonus=0)
        tokens = [
            game["token"],
            guest.post(f"/api/invite/{game['invite_token']}/join", json={"name": "Bo"}).json()["token"],
        ]
        for _ in range(100):
            st = host.get(f"/api/seat/{tokens[0]}").json()
            if st["match_over"]:
                break
            mover = st["current_player"]
            st = host.get(f"/api/seat/{tokens[mover]}").json()
            r = host.post(f"/api/seat/{tokens[mover]}/action", json={"action": choose(st), "seq": st["seq"]})
            assert r.status_code == 200, r.text
        else:
            pytest.fail("the match did not end")
        url = f"/api/games/{game['game_id']}/review"
        assert host.post(url, params={"token": tokens[0]}).status_code == 202
        r = guest.post(url, params={"token": tokens[1]})
        assert r.status_code == 429 and r.json() == {
            "error": "busy",
            "message": "the other player's review of this game is being worked out: ask again when it is done",
        }
        assert guest.get(url, params={"token": tokens[1]}).json() == {"status": "none", "seat": 1}
        assert host.get(url, params={"token": tokens[0]}).json()["status"] == "running"


@pytest.mark.limits(review_playouts=PLAYOUTS)
def test_review_button_on_the_replay_page(browser, sqlite_server):  # noqa: F811 - browser: the fixture
    server = sqlite_server
    with server.client() as c:
        gid, token = finished_game(server, c)
    page = new_page(browser)
    page.goto(f"{server.url}/replay/{gid}?token={token}&lang=en")
    page.wait_for_selector("#replay-board .card")
    button = page.locator("#review-button")
    button.wait_for()
    assert button.inner_text() == "Review my game"
    button.click()
    page.wait_for_selector("#review-table tbody tr", timeout=120_000)
    with server.client() as c:
        review = c.get(f"/api/games/{gid}/review", params={"token": token}).json()["review"]
    rows = page.locator("#review-table tbody tr")
    assert rows.count() == review["summary"]["decisions"]
    headers = page.locator("#review-table thead th").all_inner_texts()
    assert headers == ["Hand", "Move", "Your move", "Value", "Best move", "Value", "Lost", "Why"]
    marked = [e for e in review["decisions"] if e["marks"]]
    assert page.locator("#review-table tr.mistake").count() == len(marked)
    assert page.locator("#review-summary").inner_text() == (
        f"Ann: {review['summary']['points_lost']:.2f} points lost over {review['summary']['decisions']} "
        f"decisions; mistakes: {review['summary']['mistakes']}."
    )

    # Every value with the playouts' standard error (±); a loss wherever another move is named; a loss
    # within the noise marked about equal, never a mistake.
    def shown(x: float, err: float | None, signed: bool = True) -> str:
        text = (("+" if x > 0 and signed else "") + f"{x:.2f}").replace("-0.00", "0.00")
        return text if err == 0 else f"{text} ± {'?' if err is None else f'{err:.2f}'}"

    for i, e in enumerate(review["decisions"]):
        cells = rows.nth(i).locator("td")
        assert cells.nth(3).inner_text() == shown(e["played"]["points"], e["played"]["stderr"])
        named = e["best"]["action"] != e["played"]["action"]
        assert named == (e["loss"] > 0)
        if named:
            assert cells.nth(5).inner_text() == shown(e["best"]["points"], e["best"]["stderr"])
            assert cells.nth(6).inner_text() == shown(e["loss"], e["loss_stderr"], signed=False)
        else:
            assert cells.nth(4).inner_text() == "the same" and cells.nth(6).inner_text() == ""
        assert ("About equal" in cells.nth(7).inner_text()) == (e["verdict"] == "equal")
    # Some value is shown with its spread (a decision whose playouts all end alike, as the first one can,
    # has none: checked against the API above).
    assert any(" ± " in rows.nth(i).locator("td").nth(3).inner_text() for i in range(rows.count()))
    # A move's number shows the table at that step of the replay.
    last = review["decisions"][-1]
    rows.nth(rows.count() - 1).locator("button.step").click()
    wait_js(page, f"document.getElementById('step-label').textContent.startsWith('Step {last['step']} of')")
    assert "current" in (rows.nth(rows.count() - 1).get_attribute("class") or "")
    assert serious_violations(page) == []
    # A record opened from a file is nobody's game on this server: no review is offered.
    page.goto(f"{server.url}/replay?lang=en")
    page.wait_for_load_state("networkidle")
    assert page.locator("#review").is_hidden()
    assert not page.errors  # type: ignore[attr-defined]
