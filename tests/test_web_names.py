"""Names that would pass for someone else (issue 43, item 9), against a real server: nobody signs up as a
computer player; a guest neither seeks nor sits at a table under a registered player's name or a
computer player's; names with blank-looking characters or letters under stacks of marks are refused;
and a password of one repeated character, or of spaces only, is too weak."""

from __future__ import annotations

import httpx
import pytest
from conftest import Server
from test_web_accounts import signup

SEEK = {"rules": {"preset": "nintendo"}, "hands": 3, "rated": False}


@pytest.mark.limits(signups_per_hour=50)
def test_nobody_signs_up_as_a_computer_player_nor_with_a_password_of_one_character(server: Server):
    with server.client() as c:
        for name in ("Momo", "hana", "KAEDE", "Ren", "kiku", "Ryu", "ryuu"):
            r = signup(c, name)
            assert r.status_code == 422 and r.json()["error"] == "bad_account_name", r.text
            assert "kept for the server" in r.json()["message"]
        for password, why in (("a" * 12, "one character repeated"), (" " * 12, "only spaces")):
            r = c.post("/api/account/signup", json={"name": "Ivy", "password": password})
            assert r.status_code == 422 and r.json()["error"] == "weak_password" and why in r.json()["message"], r.text


def guest_tries(c: httpx.Client, name: str, invite: str, seek: str) -> list[httpx.Response]:
    """Every way a guest gives a name: a game against the computer, a friend's game and joining one
    (``invite``), a seek, accepting one (``seek``), a pool, a challenge to a bot."""
    return [
        c.post("/api/games", json={"opponent": "easy", "name": name}),
        c.post("/api/games", json={"opponent": "friend", "name": name}),
        c.post(f"/api/invite/{invite}/join", json={"name": name}),
        c.post("/api/lobby/seeks", json={**SEEK, "name": name}),
        c.post(f"/api/lobby/seeks/{seek}/accept", json={"name": name}),
        c.post("/api/lobby/quick", json={"pool": "nintendo-3", "name": name}),
        c.post("/api/challenges", json={"bot": "Nobot", "rules": {"preset": "nintendo"}, "hands": 1, "name": name}),
    ]


@pytest.mark.limits(signups_per_hour=50, seeks_per_minute=100, games_per_minute=100)
def test_a_guest_cannot_pass_for_a_registered_player_or_the_computer(server: Server):
    with server.client() as daichi, server.client() as guest, server.client() as other:
        assert signup(daichi, "Daichi").status_code == 201
        invite = other.post("/api/games", json={"opponent": "friend", "name": "Host"}).json()["invite_token"]
        seek = other.post("/api/lobby/seeks", json=SEEK).json()["seek_id"]
        for name in ("daichi", " DAICHI ", "Ｄａｉｃｈｉ", "Momo", "モモ", "Ryū"):
            for r in guest_tries(guest, name, invite, seek):
                assert r.status_code == 409 and r.json()["error"] == "name_taken", (name, r.request.url, r.text)
        assert guest.get("/api/games").json()["games"] == []  # nothing was made
        # A name no account could have, or nobody's: the guest plays under it.
        for name in ("Daichi Sato", "Dai"):
            r = guest.post("/api/games", json={"opponent": "easy", "name": name})
            assert r.status_code == 201, r.text
        # Daichi, signed in, is Daichi whatever he types.
        r = daichi.post("/api/games", json={"opponent": "easy", "name": "Momo"})
        assert r.status_code == 201
        v = daichi.get(f"/api/seat/{r.json()['token']}").json()
        assert v["players"][v["seat"]]["name"] == "Daichi"


ODD_NAMES = [
    ("\u3164", "blank-looking character U+3164"),  # a name that looks empty
    ("Ann\u3164", "blank-looking character U+3164"),  # and one that looks like Ann's
    ("\u2800\u2800", "blank-looking character U+2800"),
    ("Z" + "\u0336\u0351\u0352\u0353" + "algo", "4 marks stacked"),
]


@pytest.mark.limits(games_per_minute=100)
def test_names_with_blank_looking_characters_or_stacked_marks_are_refused(server: Server):
    with server.client() as c:
        for name, words in ODD_NAMES:
            for r in (
                c.post("/api/games", json={"opponent": "easy", "name": name}),
                c.post("/api/lobby/seeks", json={**SEEK, "name": name}),
            ):
                assert r.status_code == 422 and r.json()["error"] == "bad_name", (name, r.text)
                assert words in r.json()["message"], (name, r.text)
        assert c.post("/api/games", json={"opponent": "easy", "name": "Tiếng Việt"}).status_code == 201
