"""Player data and leaderboards over the API, against a real server (docs/web.md, "Players")."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from conftest import Server
from sqlalchemy import select, update
from test_ratings_store import RULES, finish, play_to_the_last_move, rated_game
from test_web_accounts import PASSWORD, signup
from test_web_browser import new_page

from koikoi.web.accountstore import AccountStore
from koikoi.web.schema import games, ratings, seats
from koikoi.web.store import Store


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
        assert guest.get("/api/leaderboard/short").json() == {"category": "short", "players": [], "bots": []}
        # The page: the rating with its "?", the results, and the chart of its history.
        page = guest.get("/@/ann?lang=en")
        assert page.status_code == 200 and "<h1>Ann</h1>" in page.text
        assert f"Short matches (1–3 hands): {short['rating']}?" in page.text
        body = page.text.split("</header>", 1)[1]  # the header's own pictures (the brand, the menu) aside
        assert body.count("<svg") == 1 and "rating-chart" in body
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


def keys_of(value: Any) -> set[str]:
    """Every key of every object in a JSON value, however deep."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_of(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_of(v)}
    return set()


def seat_tokens(store: Store, game_id: str) -> list[str]:
    with store.engine.connect() as conn:
        rows = conn.execute(select(seats.c.seat, seats.c.token).where(seats.c.game_id == game_id)).all()
    return [token for _seat, token in sorted(rows)]


@pytest.mark.limits(signups_per_hour=50)
def test_a_rated_game_is_listed_on_both_players_pages(server: Server):
    with server.client() as ann, server.client() as bob, server.client() as guest:
        assert signup(ann, "Ann").status_code == 201
        assert signup(bob, "Bob").status_code == 201
        assert ann.get("/api/players/ann").json()["recent"] == []
        assert "No games against other players yet." in guest.get("/@/ann?lang=en").text
        store = Store(server.database_url)
        try:
            accounts = AccountStore(store)
            a, b = (accounts.account_named(k).id for k in ("ann", "bob"))
            game_id, match = rated_game(store, a, b)
            seat, action = play_to_the_last_move(store, game_id, match)
            scores = finish(store, game_id, match, seat, action)
            tokens = seat_tokens(store, game_id)
        finally:
            store.close()
        ann_result = "won" if scores[0] > scores[1] else "lost" if scores[0] < scores[1] else "draw"
        bob_result = {"won": "lost", "lost": "won", "draw": "draw"}[ann_result]

        # The API: public fields only, whoever asks (the player themself included).
        for asker in (guest, ann, bob):
            r = asker.get("/api/players/ann")
            assert r.status_code == 200
            assert "token" not in keys_of(r.json()) and not any(t in r.text for t in tokens)
        [game] = guest.get("/api/players/ann").json()["recent"]
        assert game == {
            "game_id": game_id,
            "updated": game["updated"],
            "status": "finished",
            "opponent": "Bob",
            "opponent_url": "/@/Bob",
            "opponent_bot": False,
            "preset": RULES.name,
            "rules_label": {"preset": "nintendo", "name": RULES.name, "changes": []},
            "hands": 1,
            "target_score": RULES.target_score,
            "result": ann_result,
            "rated": True,
            "category": "short",
        }
        assert datetime.fromisoformat(game["updated"]) > datetime.now(UTC) - timedelta(hours=1)
        [theirs] = guest.get("/api/players/bob").json()["recent"]
        assert theirs["opponent"] == "Ann" and theirs["opponent_url"] == "/@/Ann" and theirs["result"] == bob_result

        # The pages: the opponent's link and the result, on both.
        words = {"won": "Won", "lost": "Lost", "draw": "Draw"}
        page = guest.get("/@/ann?lang=en").text
        assert (
            'against <a href="/@/Bob">Bob</a>' in page and f'<span class="outcome">{words[ann_result]}</span>' in page
        )
        assert "Rated, short" in page and "Nintendo · 1 hand" in page
        bobs = guest.get("/@/bob?lang=en").text
        assert (
            'against <a href="/@/Ann">Ann</a>' in bobs and f'<span class="outcome">{words[bob_result]}</span>' in bobs
        )
        # The results per category are on the page too.
        assert "<dt>Won</dt><dd>" in page and "<dt>Lost</dt><dd>" in page and "<dt>Games</dt><dd>1</dd>" in page

        # Seat tokens: the player's own view links their own seat's replay and record, and nothing else
        # does; nobody else's view (a guest's, the opponent's) holds either token.
        for asker in (guest, bob):
            shown = asker.get("/@/ann?lang=en").text
            assert game_id in shown and not any(t in shown for t in tokens)
            assert "/replay/" not in shown
        own = ann.get("/@/ann?lang=en").text
        assert f'href="/replay/{game_id}?token={tokens[0]}"' in own
        assert f'href="/api/games/{game_id}/record?token={tokens[0]}"' in own
        assert tokens[1] not in own
        bobs_own = bob.get("/@/Bob?lang=en").text
        assert f"/replay/{game_id}?token={tokens[1]}" in bobs_own and tokens[0] not in bobs_own
        # And the link works: it is the replay of that seat's game.
        assert ann.get(f"/api/games/{game_id}/replay?token={tokens[0]}").status_code == 200


@pytest.mark.limits(signups_per_hour=50)
def test_only_games_against_people_are_listed_and_damage_shows_as_a_question_mark(sqlite_server: Server):
    with sqlite_server.client() as ann, sqlite_server.client() as guest:
        assert signup(ann, "Ann").status_code == 201
        store = Store(sqlite_server.database_url)
        try:
            a = AccountStore(store).account_named("ann").id
            rules = RULES.to_dict()
            common: dict[str, Any] = {"seed": 7, "ai_seed": 0}
            computer, _, _ = store.create_game(
                rules=rules,
                opponent="novice",
                status="playing",
                seat_specs=[(0, "human", "Ann", f"a:{a}"), (1, "ai", "Novice", None)],
                **common,
            )
            # Two guests' game: nobody's page lists it, and guests have no page.
            store.create_game(
                rules=rules,
                opponent="friend",
                status="playing",
                seat_specs=[(0, "human", "Kenji", "b" * 32), (1, "human", "Yuki", "c" * 32)],
                **common,
            )
            # Ann against a guest with a hostile name: listed, the name escaped and linked nowhere.
            with_guest, guest_tokens, _ = store.create_game(
                rules=rules,
                opponent="friend",
                status="playing",
                seat_specs=[(0, "human", "<b>Guest</b>", "d" * 32), (1, "human", "Ann", f"a:{a}")],
                **common,
            )
            # Ann's invitation nobody has accepted yet.
            waiting, _, _ = store.create_game(
                rules=rules,
                opponent="friend",
                status="waiting",
                seat_specs=[(0, "human", "Ann", f"a:{a}"), (1, "human", "Friend", None)],
                invite_seat=1,
                **common,
            )
            # A game whose stored rules and scores are damaged.
            damaged, _, _ = store.create_game(
                rules=rules,
                opponent="friend",
                status="finished",
                seat_specs=[(0, "human", "Ann", f"a:{a}"), (1, "human", "Mika", "e" * 32)],
                **common,
            )
            now = datetime.now(UTC)
            with store.engine.begin() as conn:
                conn.execute(update(games).where(games.c.id == damaged).values(rules="{not json", scores="x"))
                for age, game_id in enumerate([damaged, waiting, with_guest]):  # newest first
                    conn.execute(update(games).where(games.c.id == game_id).values(updated=now - timedelta(hours=age)))
        finally:
            store.close()

        recent = guest.get("/api/players/ann").json()["recent"]
        assert [g["game_id"] for g in recent] == [damaged, waiting, with_guest]
        assert computer not in {g["game_id"] for g in recent}
        broken, invitation, versus_guest = recent
        assert broken["preset"] is None and broken["hands"] is None and broken["result"] is None
        assert broken["status"] == "finished" and broken["opponent"] == "Mika" and broken["opponent_url"] is None
        assert invitation["status"] == "waiting" and invitation["opponent"] is None
        assert versus_guest["opponent"] == "<b>Guest</b>" and versus_guest["opponent_url"] is None
        assert versus_guest["rated"] is False and versus_guest["category"] is None and versus_guest["result"] is None

        page = guest.get("/@/ann?lang=en")
        assert page.status_code == 200
        assert "? · ?" in page.text and "Waiting for an opponent" in page.text and "In progress" in page.text
        assert "against &lt;b&gt;Guest&lt;/b&gt;" in page.text and "<b>Guest</b>" not in page.text
        assert "Unrated" in page.text and not any(t in page.text for t in guest_tokens)
        assert guest.get("/@/Kenji").status_code == 404
        # Ann's own view: the games still being played link to their table, the damaged one to nothing
        # that would need its rules (its replay: the replay page itself says what it can).
        own = ann.get("/@/ann?lang=en").text
        assert f'href="/play/{guest_tokens[1]}"' in own and guest_tokens[0] not in own
        for lang in ("ja", "ru", "uk", "vi"):
            shown = guest.get(f"/@/ann?lang={lang}").text
            listed = shown[shown.index('class="game-list recent-games"') :].split("</ul>")[0]
            assert listed.count("<li") == 3 and "player." not in listed and "lobby." not in listed


@pytest.mark.limits(signups_per_hour=50)
def test_the_recent_games_list_keeps_to_twenty(sqlite_server: Server):
    with sqlite_server.client() as c:
        assert signup(c, "Ann").status_code == 201
    store = Store(sqlite_server.database_url)
    try:
        a = AccountStore(store).account_named("ann").id
        made = [
            store.create_game(
                rules=RULES.to_dict(),
                seed=7,
                ai_seed=0,
                opponent="friend",
                status="playing",
                seat_specs=[(0, "human", "Ann", f"a:{a}"), (1, "human", f"P{i}", f"{i:032d}")],
            )[0]
            for i in range(23)
        ]
        start = datetime.now(UTC) - timedelta(days=1)
        with store.engine.begin() as conn:
            for i, game_id in enumerate(made):
                conn.execute(update(games).where(games.c.id == game_id).values(updated=start + timedelta(minutes=i)))
        listed = AccountStore(store).recent_games(a)
    finally:
        store.close()
    assert [g["game_id"] for g in listed] == made[::-1][:20]
    assert json.dumps([g["opponent"] for g in listed[:2]]) == '["P22", "P21"]'


@pytest.mark.limits(signups_per_hour=50)
def test_the_player_page_fits_a_phone(browser, sqlite_server):  # noqa: F811
    with sqlite_server.client() as ann, sqlite_server.client() as bob:
        assert signup(ann, "Long_Player-Name_20x").status_code == 201
        assert signup(bob, "Another_Long-Name_20").status_code == 201
    store = Store(sqlite_server.database_url)
    try:
        accounts = AccountStore(store)
        a, b = (accounts.account_named(k).id for k in ("long_player-name_20x", "another_long-name_20"))
        game_id, match = rated_game(store, a, b)
        seat, action = play_to_the_last_move(store, game_id, match)
        finish(store, game_id, match, seat, action)
        store.create_game(
            rules=RULES.to_dict(),
            seed=7,
            ai_seed=0,
            opponent="friend",
            status="playing",
            seat_specs=[(0, "human", "Long_Player-Name_20x", f"a:{a}"), (1, "human", "W" * 64, "f" * 32)],
        )
    finally:
        store.close()
    for lang in ("en", "ru"):
        page = new_page(browser, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
        page.goto(f"{sqlite_server.url}/@/Long_Player-Name_20x?lang={lang}")
        assert page.locator(".recent-games li[data-game]").count() == 2
        wide = page.evaluate("document.documentElement.scrollWidth") - 390
        assert wide <= 0, f"the player page ({lang}) is {wide} px wider than the phone's screen"
        assert page.errors == []  # type: ignore[attr-defined]
        page.context.close()


def test_the_leaderboard_and_ones_own_page_are_linked_from_the_header_lobby_and_account(server: Server):
    """Issue 43, item 16: /leaderboard leads to the short matches' board, and the header, the lobby and
    the account page link to it; the lobby and the account page link a signed-in player's own page."""
    with server.client() as c:
        r = c.get("/leaderboard?lang=ja", follow_redirects=False)
        assert r.status_code == 307 and r.headers["location"] == "/leaderboard/short?lang=ja"
        assert c.get("/leaderboard", follow_redirects=True).status_code == 200
        home = c.get("/?lang=en").text
        assert '<a href="/leaderboard/short" id="nav-leaderboard">Leaderboard</a>' in home
        assert '<a href="/leaderboard/short">Leaderboard</a>' in c.get("/lobby?lang=en").text
        assert signup(c, "Gil", PASSWORD).status_code == 201
        for page in ("/lobby?lang=en", "/account?lang=en"):
            text = c.get(page).text
            assert '<a href="/@/Gil" id="player-page-link">Your player page</a>' in text, page
            assert '<a href="/leaderboard/short">Leaderboard</a>' in text, page
