"""Rule-set labels and the Replays page (issue 33, items 2 and 4), against a real server and database.

A game's rules are named by their preset in the player's language, with what really differs from it
(the match length is no rule change) wherever they are shown; the Replays page lists the asker's own
finished games and nobody else's, and a record uploaded there can be reviewed.
"""

from __future__ import annotations

import html
import json
import re
import time

import pytest
from test_web_api import create, wait_turn
from test_web_hardening import finished_game as one_finished_game
from test_web_review import PLAYOUTS, finished_game
from websockets.sync.client import connect

from koikoi.records import GameRecord
from koikoi.review import review_record


def page_text(client, url: str) -> str:
    r = client.get(url)
    assert r.status_code == 200, r.text
    return html.unescape(r.text)


def by_id(text: str, element_id: str) -> str:
    """The text inside the element of ``element_id`` (tags removed)."""
    m = re.search(rf'id="{element_id}"[^>]*>(.*?)</(?:p|span|ul|h1|h2)>', text, re.S)
    assert m, f"no #{element_id}"
    return re.sub(r"<[^>]+>", "", m.group(1)).strip()


def test_rules_labels_in_the_apis_and_pages(server):
    with server.client() as ann:
        # Only the match length changed: the preset's name, in the page's language, and no "(custom)".
        short = create(ann, "friend", "nintendo", hands=3)
        # Real options changed: each named briefly after the preset.
        changed = create(ann, "friend", "nintendo", hands=3, koikoi_multiplier="additive", sake_yaku="off")
        for game, en, ja in (
            (short, "Nintendo", "任天堂"),
            (
                changed,
                "Nintendo · Sake yaku: off, Koi-koi bonus: +1 per own koi-koi",
                "任天堂・酒の役：なし、こいこいの倍付け：自分のこいこいごとに+1",
            ),
        ):
            invite = f"/invite/{game['invite_token']}"
            with server.client() as bob:
                assert by_id(page_text(bob, invite + "?lang=en"), "invite-rules") == f"Rule set: {en}"
                assert by_id(page_text(bob, invite + "?lang=en"), "invite-length") == "Match length: 3 hands"
                assert by_id(page_text(bob, invite + "?lang=ja"), "invite-rules").endswith(ja)
            assert by_id(page_text(ann, f"/play/{game['token']}?lang=en"), "rules-name") == en
            assert by_id(page_text(ann, f"/play/{game['token']}?lang=ja"), "rules-name") == ja
        # A spectator's table names them too.
        watched = create(ann, "random", "nintendo", hands=2, sake_yaku="off")
        with server.client() as cat:
            text = page_text(cat, f"/watch/{watched['game_id']}?lang=ru")
            assert by_id(text, "rules-name") == "Nintendo · Яку с сакэ: выкл."
        # The lobby's list of this browser's games carries the same for its script to word.
        listed = {g["game_id"]: g for g in ann.get("/api/games").json()["games"]}
        # (Its stored name says "(custom)", for the rematch: the label says what changed, which is nothing.)
        assert listed[short["game_id"]]["rules_label"] == {
            "preset": "nintendo",
            "name": "nintendo (custom)",
            "changes": [],
        }
        assert listed[short["game_id"]]["hands"] == 3
        assert listed[changed["game_id"]]["rules_label"] == {
            "preset": "nintendo",
            "name": "nintendo (custom)",
            "changes": [
                {"option": "sake_yaku", "value": "off"},
                {"option": "koikoi_multiplier", "value": "additive"},
            ],
        }
        # An open seek of three hands under the preset is the preset; one with an option names it.
        r = ann.post("/api/lobby/seeks", json={"rules": {"preset": "bga"}, "hands": 3, "rated": False})
        assert r.status_code == 201, r.text
        r = ann.post(
            "/api/lobby/seeks",
            json={"rules": {"preset": "bga", "options": {"transfer": False}}, "hands": 2, "rated": False},
        )
        assert r.status_code == 201, r.text
        shown = sorted((s["hands"], s["rules_label"]["changes"]) for s in ann.get("/api/lobby").json()["seeks"])
        assert shown == [(2, [{"option": "transfer", "value": False}]), (3, [])]


def test_a_finished_games_replay_and_record_carry_the_label(server):
    with server.client() as ann:
        gid, token = finished_game(server, ann)  # cardavia, hand_bonus 0: one option changed
        data = ann.get(f"/api/games/{gid}/replay", params={"token": token}).json()
        assert data["rules_label"] == {
            "preset": "cardavia",
            "name": "cardavia (custom)",
            "changes": [{"option": "hand_bonus", "value": 0}],
        }
        record = ann.get(f"/api/games/{gid}/record", params={"token": token}).content
        uploaded = ann.post("/api/replay", content=record).json()
        assert uploaded["rules_label"] == data["rules_label"]


def replays_listed(text: str) -> list[tuple[str, list[str]]]:
    """The Replays page's games: (game id, its links)."""
    items = re.findall(r'<li data-game="([^"]+)"[^>]*>(.*?)</li>', text, re.S)
    return [(gid, re.findall(r'href="([^"]+)"', body)) for gid, body in items]


def game_in_play(server, client) -> tuple[dict, list[str]]:
    """A one-hand game against the computer that waits for the player's move, and the games made before it
    that were over by then (the computer's first turn scoring and stopping ends the hand): finished games
    of the player's too."""
    over: list[str] = []
    for _ in range(10):
        game = create(client, "random", "nintendo", hands=1)
        with connect(f"{server.ws_url}/ws/{game['token']}") as ws:
            if not wait_turn(ws)["match_over"]:
                return game, over
        over.append(game["game_id"])
    pytest.fail("ten new games in a row were over before the player's first move")


def test_the_replays_page_lists_only_the_players_own_finished_games(server):
    with server.client() as ann, server.client() as bob, server.client() as cat:
        # One game each, played to its end (not test_web_review's, which may leave short games behind).
        gid, token = one_finished_game(server, ann)
        unfinished, also_over = game_in_play(server, ann)
        bob_gid, bob_token = one_finished_game(server, bob)
        text = page_text(ann, "/replay?lang=en")
        listed = dict(replays_listed(text))
        assert listed[gid] == [f"/replay/{gid}?token={token}", f"/replay/{gid}?token={token}#review"]
        assert set(listed) == {gid, *also_over}
        assert bob_gid not in text and bob_token not in text and unfinished["game_id"] not in text
        item = re.search(rf'<li data-game="{gid}" data-result="(\w+)">(.*?)</li>', text, re.S)
        words = " ".join(re.sub(r"<[^>]+>", " ", item.group(2)).split())
        rules = "Cardavia · Dealt-hand bonus (teshi, kuttsuki): off · 1 hand"
        assert words.startswith(f"against Momo (random) {rules} · ")
        result = {"won": "Won", "lost": "Lost", "draw": "Draw"}[item.group(1)]
        assert f" · {result} " in words and "Replay Review" in words
        assert by_id(text, "upload-title") == "Open a record file"
        # In Japanese, the same game in Japanese words.
        ja = page_text(ann, "/replay?lang=ja")
        assert "モモ（ランダム）と対戦 Cardavia・手役（手四・くっつき）：なし · 1局" in " ".join(
            re.sub(r"<[^>]+>", " ", ja).split()
        )
        assert by_id(ja, "replays-title") == "リプレイ"
        # Bob sees his game only; a browser that finished none is told so.
        assert [g for g, _ in replays_listed(page_text(bob, "/replay?lang=en"))] == [bob_gid]
        empty = page_text(cat, "/replay?lang=en")
        assert replays_listed(empty) == [] and by_id(empty, "replays-empty").startswith("No finished games yet.")
        assert by_id(page_text(cat, "/replay?lang=ru"), "replays-empty").startswith("Законченных партий пока нет.")
        # A cursor that is no page's is refused with a clear error, not a 500.
        r = cat.get("/replay", params={"before": "nonsense"})
        assert r.status_code == 400


def read_stream(response) -> list[dict]:
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.text.splitlines() if line]


@pytest.mark.limits(review_playouts=PLAYOUTS)
def test_an_uploaded_record_is_reviewed(server):
    with server.client() as ann, server.client() as stranger:
        gid, token = finished_game(server, ann)
        record_text = ann.get(f"/api/games/{gid}/record", params={"token": token}).content
        # Anyone may review a record file: it is a file, not a game of this server's.
        r = stranger.post("/api/replay/review", content=record_text, timeout=120)
        assert r.status_code == 200, r.text
        steps = read_stream(r)
        last = steps[-1]
        assert last["status"] == "done" and last["seat"] == 0  # the record's one human player
        total = last["review"]["summary"]["decisions"]
        assert [(s["done"], s["total"]) for s in steps[:-1]] == [(i, total) for i in range(total + 1)]
        # The same analysis as a finished game's review.
        assert last["review"] == review_record(GameRecord.from_json(record_text.decode()), 0, playouts=PLAYOUTS)
        # The other seat, asked for by number.
        r = stranger.post("/api/replay/review", params={"seat": "1"}, content=record_text, timeout=120)
        assert read_stream(r)[-1]["review"]["player"] == 1
        # Bad records and bad seats are refused with what is wrong, before anything is worked out.
        r = stranger.post("/api/replay/review", content=b"{not json")
        assert r.status_code == 400 and r.json()["error"] == "bad_record", r.text
        assert "JSON" in r.json()["message"]
        broken = json.loads(record_text)
        broken["hands"][0]["actions"] = ["nonsense"]
        r = stranger.post("/api/replay/review", content=json.dumps(broken).encode())
        assert r.status_code == 400 and r.json()["error"] == "bad_record", r.text
        r = stranger.post("/api/replay/review", params={"seat": "2"}, content=record_text)
        assert r.status_code == 422 and r.json() == {
            "error": "bad_seat",
            "message": "'seat' is the player to review: 0 or 1 (or left out)",
        }
        r = stranger.post("/api/replay/review", content=b"x" * (2 * 1024 * 1024 + 1))
        assert r.status_code == 413 and r.json()["error"] == "too_large"


@pytest.mark.limits(review_playouts=PLAYOUTS, review_record_decisions=1)
def test_too_long_a_record_is_not_reviewed(sqlite_server):
    with sqlite_server.client() as ann:
        gid, token = finished_game(sqlite_server, ann)
        record_text = ann.get(f"/api/games/{gid}/record", params={"token": token}).content
        decisions = json.loads(ann.post("/api/replay/review", params={"seat": "0"}, content=record_text).text or "null")
        assert decisions["error"] == "record_too_long", decisions
        assert re.fullmatch(r"Ann made \d+ decisions in this record; a review judges at most 1", decisions["message"])


@pytest.mark.limits(review_playouts=200_000, reviews_running=1)
def test_a_records_review_counts_among_the_reviews_running(sqlite_server):
    with sqlite_server.client() as ann, sqlite_server.client() as bob:
        gid, token = finished_game(sqlite_server, ann)
        record_text = ann.get(f"/api/games/{gid}/record", params={"token": token}).content
        with ann.stream("POST", "/api/replay/review", content=record_text) as running:
            lines = running.iter_lines()  # kept: dropping it would close the response, and end the review
            first = json.loads(next(lines))
            assert first == {"status": "running", "seat": 0, "done": 0, "total": first["total"]}
            # While it is worked out, no other review starts: neither a record's nor a game's.
            r = bob.post("/api/replay/review", content=record_text)
            assert r.status_code == 429 and r.json() == {
                "error": "busy",
                "message": "1 game reviews are being worked out already: ask again in a minute",
            }
            r = ann.post(f"/api/games/{gid}/review", params={"token": token})
            assert r.status_code == 429 and r.json()["error"] == "busy"
            # The server goes on answering meanwhile: the review is not on its event loop.
            assert bob.get("/replay").status_code == 200
        # The asker left: the review stops and gives its place back, and the next one may start.
        deadline = time.monotonic() + 60
        while True:
            with bob.stream("POST", "/api/replay/review", content=record_text) as r:
                if r.status_code == 200:
                    assert json.loads(next(r.iter_lines()))["status"] == "running"
                    break
                assert r.status_code == 429, r.read()
            assert time.monotonic() < deadline, "the review of a record whose asker left kept its place"
            time.sleep(0.1)
