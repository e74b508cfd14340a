"""Puzzles on a real server (docs/web.md, "Puzzles"): the shipped set imported at the first start, a puzzle
served with its position and nothing of its solution, answers checked on the server, the ratings moved by
Glicko-2 exactly as koikoi.glicko2 moves them, and every wrong request refused with nothing changed: a
replayed answer, an answer to another person's try, malformed answers, too many requests."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from conftest import Server
from test_web_accounts import signup

from koikoi import glicko2
from koikoi.puzzles import Puzzle
from koikoi.web.puzzlestore import PuzzleStore
from koikoi.web.store import Store

pytestmark = pytest.mark.server


def stored(server: Server, puzzle_id: str):
    store = Store(server.database_url)
    try:
        row = PuzzleStore(store).get(puzzle_id)
        assert row is not None
        return row, Puzzle.from_dict(json.loads(row.data))
    finally:
        store.close()


def solve(c: httpx.Client, got: dict, puzzle: Puzzle, wrong_at: int | None = None) -> dict:
    """Answer a served puzzle: its line's moves, or a wrong move at ``wrong_at``."""
    token = got["token"]
    for i, move in enumerate(puzzle.line):
        action = move.runner_up if i == wrong_at else move.action
        r = c.post(f"/api/puzzles/attempts/{token}", json={"move": i, "action": action})
        assert r.status_code == 200, r.text
        out = r.json()
        if out["over"]:
            return out
        assert out["correct"] and out["done"] == i + 1
        assert out["view"]["to_move"] and out["view"]["seat"] == puzzle.player
    raise AssertionError("the line ended without the try being over")


def test_a_puzzle_is_served_without_its_solution_and_rated_when_solved(sqlite_server: Server):
    with sqlite_server.client() as c:
        assert signup(c, "Solver").status_code in (200, 201)
        r = c.post("/api/puzzles/next", json={"mode": "rated"})
        assert r.status_code == 200, r.text
        got = r.json()
        text = r.text
        # What the page is sent: the position as the player to move sees it, and no more.
        for secret in ('"record"', '"deals"', '"line"', '"runner_up"', '"themes"', '"solution"', '"seed"'):
            assert secret not in text, secret
        view = got["view"]
        assert view["to_move"] and got["rated"] and got["puzzle"]["moves"] >= 1
        row, puzzle = stored(sqlite_server, got["puzzle"]["id"])
        assert view["seat"] == puzzle.player == got["puzzle"]["seat"]
        assert sorted(view["hand"]) == sorted(puzzle.observation(0).hand)
        assert view["opponent_hand_count"] == puzzle.observation(0).opponent_hand_count
        out = solve(c, got, puzzle)
        assert out["correct"] and out["over"] and out["themes"] == list(puzzle.themes)
        assert [m["action"] for m in out["solution"]] == [m.action for m in puzzle.line]
        # The ratings: a new solver against the puzzle's rating, by Glicko-2.
        now = time.time()
        me, it = glicko2.rate_game(
            glicko2.new_player(),
            glicko2.Rating(row.rating, row.rd, row.volatility, row.plays),
            1.0,
            glicko2.LICHESS,
            now,
        )
        assert out["rating"] == {"before": 1500, "after": round(me.rating)}
        assert out["puzzle_rating"] == round(it.rating)
        after, _ = stored(sqlite_server, got["puzzle"]["id"])
        assert (after.plays, after.solved) == (1, 1) and round(after.rating) == round(it.rating)
        assert c.get("/api/puzzles/me").json()["solver"]["rating"] == round(me.rating)
        # ... and on the player's page, for anyone.
        assert httpx.get(sqlite_server.url + "/api/players/Solver").json()["puzzles"]["solved"] == 1
        page = httpx.get(sqlite_server.url + "/@/Solver?lang=en").text
        assert f"Puzzle rating {round(me.rating)}? · 1 solved of 1 rated tries" in page
        # Answered once: again, it is refused and changes nothing.
        again = c.post(f"/api/puzzles/attempts/{got['token']}", json={"move": 0, "action": puzzle.line[0].action})
        assert again.status_code == 409 and again.json()["error"] == "attempt_over"
        assert stored(sqlite_server, got["puzzle"]["id"])[0] == after
        # A puzzle tried is not served to the same account again (while others are near).
        seen = {got["puzzle"]["id"]}
        for _ in range(3):
            nxt = c.post("/api/puzzles/next", json={"mode": "rated"}).json()
            assert nxt["puzzle"]["id"] not in seen
            seen.add(nxt["puzzle"]["id"])


def test_a_wrong_move_ends_the_try_and_shows_the_solution(sqlite_server: Server):
    with sqlite_server.client() as c:
        assert signup(c, "Wrong").status_code in (200, 201)
        got = c.post("/api/puzzles/next", json={}).json()
        _, puzzle = stored(sqlite_server, got["puzzle"]["id"])
        out = solve(c, got, puzzle, wrong_at=0)
        assert out["over"] and not out["correct"] and out["done"] == 0
        assert out["solution"][0]["action"] == puzzle.line[0].action
        assert out["rating"]["after"] < out["rating"]["before"] == 1500
        assert out["view"]["status"] == "finished" and out["view"]["legal"] == []


@pytest.mark.limits(puzzle_burst=100)
def test_nobody_answers_for_another_and_bad_answers_change_nothing(sqlite_server: Server):
    with sqlite_server.client() as ann, sqlite_server.client() as bob:
        assert signup(ann, "Ann").status_code in (200, 201)
        assert signup(bob, "Bob").status_code in (200, 201)
        got = ann.post("/api/puzzles/next", json={}).json()
        token = got["token"]
        row, puzzle = stored(sqlite_server, got["puzzle"]["id"])
        right = puzzle.line[0].action
        # Bob, and a guest, answering Ann's try: there is no such try for them.
        r = bob.post(f"/api/puzzles/attempts/{token}", json={"move": 0, "action": right})
        assert r.status_code == 404 and r.json()["error"] == "no_attempt"
        with sqlite_server.client() as guest:
            assert guest.post(f"/api/puzzles/attempts/{token}", json={"move": 0, "action": right}).status_code == 404
        for body, problem in (
            ({"move": 0}, "'action'"),
            ({"move": 0, "action": 9999}, "'action'"),
            ({"move": "0", "action": right}, "'move'"),
            ({"move": 0, "action": True}, "'action'"),
            ({"move": 5, "action": right}, "at move 0"),
        ):
            r = ann.post(f"/api/puzzles/attempts/{token}", json=body)
            assert r.status_code in (409, 422) and problem in r.json()["message"], (body, r.text)
        assert ann.post("/api/puzzles/attempts/x", json={"move": 0, "action": right}).status_code == 404
        assert ann.post("/api/puzzles/next", json={"mode": "blitz"}).status_code == 422
        assert ann.post("/api/puzzles/next", json={"avoid": "x" * 40}).status_code == 422
        assert ann.post(
            "/api/puzzles/next", content=b"[1,", headers={"Content-Type": "application/json"}
        ).status_code in (400, 422)
        # None of it touched the try: Ann's right answer still counts.
        assert stored(sqlite_server, got["puzzle"]["id"])[0] == row
        out = solve(ann, got, puzzle)
        assert out["correct"]


def test_a_guest_keeps_their_rating_in_the_browser_and_moves_no_puzzle(sqlite_server: Server):
    with sqlite_server.client() as g:
        got = g.post("/api/puzzles/next", json={"rating": 1700, "rd": 200}).json()
        row, puzzle = stored(sqlite_server, got["puzzle"]["id"])
        token = got["token"]
        out = None
        for i, move in enumerate(puzzle.line):
            out = g.post(
                f"/api/puzzles/attempts/{token}", json={"move": i, "action": move.action, "rating": 1700, "rd": 200}
            ).json()
        assert out is not None and out["correct"]
        me, _ = glicko2.rate_game(
            glicko2.Rating(1700, 200, 0.09),
            glicko2.Rating(row.rating, row.rd, row.volatility, row.plays),
            1.0,
            glicko2.LICHESS,
            time.time(),
        )
        assert out["guest_rating"]["rating"] == pytest.approx(me.rating, abs=0.1)
        assert out["guest_rating"]["rd"] == pytest.approx(me.rd, abs=0.1)
        assert stored(sqlite_server, got["puzzle"]["id"])[0] == row  # a guest moves no puzzle's rating
        bad = g.post("/api/puzzles/next", json={"rating": 99999, "rd": 200})
        assert bad.status_code == 422 and "'rating'" in bad.json()["message"]


def test_a_streak_goes_on_while_solved_and_the_daily_puzzle_is_everyones(sqlite_server: Server):
    with sqlite_server.client() as c, sqlite_server.client() as other:
        assert signup(c, "Streaker").status_code in (200, 201)
        first = c.post("/api/puzzles/next", json={"mode": "streak"}).json()
        assert first["streak"] == 0 and not first["rated"]
        out = solve(c, first, stored(sqlite_server, first["puzzle"]["id"])[1])
        assert out["streak"] == 1 and out["rating"] is None
        second = c.post("/api/puzzles/next", json={"mode": "streak"}).json()
        assert second["streak"] == 1
        out = solve(c, second, stored(sqlite_server, second["puzzle"]["id"])[1], wrong_at=0)
        assert out["streak"] == 1
        assert c.post("/api/puzzles/next", json={"mode": "streak"}).json()["streak"] == 0
        assert c.get("/api/puzzles/me").json()["solver"]["best_streak"] == 1
        daily = c.post("/api/puzzles/next", json={"mode": "daily"}).json()
        assert other.post("/api/puzzles/next", json={"mode": "daily"}).json()["puzzle"]["id"] == daily["puzzle"]["id"]


@pytest.mark.limits(puzzles_per_minute=2, puzzle_burst=3)
def test_puzzle_requests_are_rate_limited(sqlite_server: Server):
    with sqlite_server.client() as c:
        codes = [c.post("/api/puzzles/next", json={}).status_code for _ in range(5)]
        assert codes[:3] == [200, 200, 200] and codes[3:] == [429, 429]
