"""Player data and leaderboards over the API, against a real server (docs/web.md, "Players")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from conftest import Server
from test_ratings_store import finish, play_to_the_last_move, rated_game
from test_web_accounts import PASSWORD, signup

from koikoi.web.accountstore import AccountStore
from koikoi.web.store import Store, ratings


@pytest.mark.limits(signups_per_hour=50)
def test_a_players_ratings_after_a_rated_game(server: Server):
    with server.client() as ann, server.client() as bob:
        assert signup(ann, "Ann").status_code == 201
        assert signup(bob, "Bob").status_code == 201
        r = ann.get("/api/players/ann")
        assert r.status_code == 200 and r.json()["name"] == "Ann" and r.json()["ratings"] == {}
    store = Store(server.database_url)
    try:
        accounts = AccountStore(store)
        a, b = (accounts.account_named(k).id for k in ("ann", "bob"))
        game_id, match = rated_game(store, a, b)
        seat, action = play_to_the_last_move(store, game_id, match)
        scores = finish(store, game_id, match, seat, action)
    finally:
        store.close()
    with server.client() as guest:
        shown = guest.get("/api/players/Ann").json()
        short = shown["ratings"]["short"]
        assert set(short) == {"rating", "rd", "volatility", "provisional", "games", "wins", "draws", "losses"}
        assert short["games"] == 1 and short["provisional"] is True and short["rd"] > 110
        won = scores[0] > scores[1]
        assert (short["rating"] > 1500) == won or scores[0] == scores[1]
        assert "password" not in str(shown) and "argon2" not in str(shown)
        # Provisional players are not on the leaderboard.
        assert guest.get("/api/leaderboard/short").json() == {"category": "short", "players": []}
        # The page: the rating with its "?", the results, and the chart of its history.
        page = guest.get("/@/ann?lang=en")
        assert page.status_code == 200 and "<h1>Ann</h1>" in page.text
        assert f"Short matches (1–3 hands): {short['rating']}?" in page.text
        assert page.text.count("<svg") == 1 + page.text.count('class="brand-mark"') and "rating-chart" in page.text
        assert "Nobody yet." in guest.get("/leaderboard/short?lang=en").text
        missing = guest.get("/@/nobody")
        assert missing.status_code == 404 and "text/html" in missing.headers["content-type"]


@pytest.mark.limits(signups_per_hour=50)
def test_the_leaderboard_lists_sure_active_ratings_best_first(server: Server):
    with server.client() as c:
        for name in ("Cat", "Dan", "Eve", "Fin"):
            assert signup(c, name, PASSWORD).status_code == 201
    store = Store(server.database_url)
    now = datetime.now(UTC)
    try:
        accounts = AccountStore(store)
        rows = {  # name: (rating, rd, last rated game)
            "cat": (1700.0, 60.0, now),
            "dan": (1800.0, 70.0, now - timedelta(days=2)),
            "eve": (1900.0, 120.0, now),  # provisional
            "fin": (2000.0, 50.0, now - timedelta(days=40)),  # away too long
        }
        with store.engine.begin() as conn:
            for key, (rating, rd, at) in rows.items():
                conn.execute(
                    ratings.insert().values(
                        account_id=accounts.account_named(key).id,
                        category="long",
                        rating=rating,
                        rd=rd,
                        volatility=0.06,
                        games=30,
                        wins=15,
                        draws=0,
                        losses=15,
                        updated=at,
                    )
                )
    finally:
        store.close()
    with server.client() as c:
        r = c.get("/api/leaderboard/long")
        assert r.status_code == 200, r.text
        board = r.json()["players"]
        assert [p["name"] for p in board] == ["Dan", "Cat"]
        page = c.get("/leaderboard/long?lang=ja").text
        assert "ランキング" in page and page.index('href="/@/Dan"') < page.index('href="/@/Cat"')
        assert "/@/Eve" not in page and "/@/Fin" not in page
        assert board[0]["url"] == "/@/Dan" and board[0]["provisional"] is False
        assert c.get("/api/leaderboard/short").json()["players"] == []


@pytest.mark.parametrize("name", ["nobody", "x", "a" * 300, "Ann%00", "..%2F..%2Fetc", "Ann<script>"])
def test_unknown_and_hostile_names_are_not_found(sqlite_server: Server, name):
    with sqlite_server.client() as c:
        r = c.get(f"/api/players/{name}")
        assert r.status_code == 404  # no such route for a name with a slash; the others say not_found
        assert "/" in name.replace("%2F", "/") or r.json()["error"] == "not_found"
    with sqlite_server.client() as c:
        r = c.get("/api/leaderboard/blitz")
        assert r.status_code == 404 and "short, long" in r.json()["message"]
