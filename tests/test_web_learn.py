"""Lessons on a real server (docs/web.md, "Learn"): an exercise's position as the learner sees it, each move
judged by the engine, a page that sends moves the lesson did not make refused, an account's stars kept (never
lowered, never another's), and every bad request refused with nothing changed."""

from __future__ import annotations

import pytest
from conftest import Server
from test_web_accounts import signup

from koikoi.actions import parse_action
from koikoi.cards import card

pytestmark = pytest.mark.server

CRANE = "/api/learn/choose/crane"
RIGHT = parse_action("play pine-plain-2 take pine-crane")
WRONG = parse_action("play pine-plain-2 take pine-plain-1")


def test_a_lesson_shows_its_position_and_judges_each_move(sqlite_server: Server):
    with sqlite_server.client() as c:
        r = c.post(CRANE, json={})
        assert r.status_code == 200, r.text
        view = r.json()["view"]
        assert view["seat"] == 0 and view["to_move"] and view["phase"] == "play"
        assert sorted(view["hand"]) == sorted(card(x) for x in ("pine-plain-2", "maple-plain-1", "iris-plain-1"))
        assert card("pine-crane") in view["table"] and RIGHT in view["legal"] and WRONG in view["legal"]
        # The learner sees what a player sees: the opponent's hand counted, not shown; no stock order.
        assert "hands" not in view and "stock" not in view and "seed" not in r.text
        wrong = c.post(CRANE, json={"done": [], "action": WRONG}).json()
        assert wrong["right"] is False and wrong["done"] is False and wrong["step"] == 0
        assert any(p["kind"] == "took" for p in wrong["reason"])  # what it took instead, in the review's words
        assert wrong["view"]["hand"] == view["hand"] and wrong["view"]["to_move"]  # nothing was played
        right = c.post(CRANE, json={"done": [], "action": RIGHT}).json()
        assert right["right"] is True and right["done"] is True and right["step"] == 1
        assert card("pine-crane") not in right["view"]["table"]  # taken
        assert right["view"]["status"] == "finished" and not right["view"]["legal"]


def test_a_two_step_exercise_goes_on_only_from_its_right_moves(sqlite_server: Server):
    url = "/api/learn/brights/sanko"
    play, stop, koikoi = parse_action("play pampas-plain-1"), parse_action("stop"), parse_action("koikoi")
    with sqlite_server.client() as c:
        first = c.post(url, json={"action": play}).json()
        assert first["right"] and not first["done"] and first["view"]["phase"] == "decision"
        assert c.post(url, json={"done": [play]}).json()["view"]["phase"] == "decision"
        wrong = c.post(url, json={"done": [play], "action": koikoi}).json()
        assert wrong["right"] is False and wrong["view"]["phase"] == "decision"
        end = c.post(url, json={"done": [play], "action": stop}).json()
        assert end["right"] and end["done"] and end["step"] == 2
        # A page that replays a move the lesson did not make, or too many, gets nowhere.
        other = parse_action("play iris-plain-1")
        for body in (
            {"done": [other]},
            {"done": [play, stop]},
            {"done": [play], "action": play},  # not a legal move in the decision
            {"done": "play"},
            {"done": [play], "action": "stop"},
            {"done": [True]},
            {"action": 10**9},
        ):
            r = c.post(url, json=body)
            assert r.status_code == 422 and r.json()["error"] == "bad_lesson_move", (body, r.text)
        for path in ("/api/learn/chess/sanko", "/api/learn/brights/goko", "/api/learn/rulesets/x"):
            r = c.post(path, json={})
            assert r.status_code == 404 and r.json()["error"] == "no_lesson", path
        assert c.post(url, content=b"{", headers={"content-type": "application/json"}).status_code == 400
        assert c.get("/learn/chess").status_code == 404


def test_an_accounts_stars_are_kept_at_their_best_and_only_for_it(server: Server):
    with server.client() as guest:
        assert guest.get("/api/learn/progress").json()["stars"] is None
        r = guest.post("/api/learn/progress", json={"stars": {"months": 3}})
        assert r.status_code == 403 and r.json()["error"] == "sign_in"
    with server.client() as ann, server.client() as bob:
        assert signup(ann, "Ann").status_code in (200, 201)
        assert signup(bob, "Bob").status_code in (200, 201)
        assert ann.get("/api/learn/progress").json()["stars"] == {}
        kept = ann.post("/api/learn/progress", json={"stars": {"months": 2, "rulesets": 3}})
        assert kept.status_code == 200 and kept.json()["stars"] == {"months": 2, "rulesets": 3}
        # Done again with more wrong moves: the best stays. Done better: it rises.
        assert ann.post("/api/learn/progress", json={"stars": {"months": 1}}).json()["stars"]["months"] == 2
        assert ann.post("/api/learn/progress", json={"stars": {"months": 3}}).json()["stars"]["months"] == 3
        for body in (
            {"stars": {"chess": 3}},
            {"stars": {"months": 4}},
            {"stars": {"months": 0}},
            {"stars": {"months": True}},
            {"stars": {"months": 2.5}},
            {"stars": {}},
            {"stars": [3]},
            {"stars": {f"l{i}": 1 for i in range(40)}},
        ):
            r = ann.post("/api/learn/progress", json=body)
            assert r.status_code == 422 and r.json()["error"] == "bad_progress", (body, r.text)
        assert ann.get("/api/learn/progress").json()["stars"] == {"months": 3, "rulesets": 3}
        assert bob.get("/api/learn/progress").json()["stars"] == {}  # nothing of Ann's reaches Bob
        page = ann.get("/learn?lang=en").text
        assert '"stars":{"months":3,"rulesets":3}' in page.replace(" ", "")


@pytest.mark.limits(lesson_moves_per_minute=2, lesson_burst=3)
def test_lesson_moves_are_rate_limited(sqlite_server: Server):
    with sqlite_server.client() as c:
        codes = [c.post(CRANE, json={}).status_code for _ in range(5)]
        assert codes[:3] == [200, 200, 200] and codes[3:] == [429, 429]


def test_every_lesson_page_is_served_in_every_language(sqlite_server: Server):
    from koikoi.web.learnservice import PAGES

    with sqlite_server.client() as c:
        for lang in ("en", "ja", "ru", "uk", "vi"):
            for path in ("/learn", *(f"/learn/{p}" for p in PAGES)):
                r = c.get(f"{path}?lang={lang}")
                assert r.status_code == 200, (path, lang)
                assert "learn." not in r.text.split("</header>", 1)[1], (path, lang)  # no key left untranslated
        page = c.get("/learn/rulesets?lang=en").text
        assert "Akatan + aotan" in page and "no yaku" in page  # the engine's figures: Nintendo's 10 for both
