"""Bots online over the API and real sockets, against a real server on SQLite and PostgreSQL (docs/web.md,
"Bots online"): bot accounts and their tokens (made by their owner, shown once, kept as a hash, revoked;
a token never taken where a cookie is, nor a cookie where a token is); challenges accepted, declined,
cancelled and left to expire; a bot playing its game over the seat socket and sent its own seat alone;
a rated game between a person and a bot counting for both; bots refused from quick pairing; a bot's seek
in the lobby; ``koikoi admin make-bot``, ``bot-token`` and ``revoke-bot-tokens``."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from conftest import NO_TLS, POSTGRES_URL, Server, limit_args, make_database, ws_json
from sqlalchemy import select, update
from test_web_accounts import login, signup
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from koikoi.cards import CARD_NAMES, iter_cards
from koikoi.match import Match
from koikoi.rules import RuleSet
from koikoi.web.schema import bot_tokens, challenges, rated_games
from koikoi.web.store import Store

pytestmark = pytest.mark.limits(signups_per_hour=100, logins_per_minute=100)

CHALLENGE = {"rules": {"preset": "nintendo"}, "hands": 1, "rated": False}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def make_bot(owner: httpx.Client, name: str) -> str:
    """``owner`` (signed in) makes a bot named ``name`` and a token for it, which is returned."""
    r = owner.post("/api/account/bots", json={"name": name})
    assert r.status_code == 201, r.text
    r = owner.post(f"/api/account/bots/{name}/tokens")
    assert r.status_code == 201, r.text
    return r.json()["token"]


def stream(server: Server, token: str):
    return connect(f"{server.ws_url}/api/bot/stream", additional_headers=bearer(token), open_timeout=30)


def next_event(ws, kind: str, timeout: float = 30) -> dict:
    """The next event of ``kind`` on a bot's stream (others may come before it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
        if msg["type"] == kind:
            return msg
    raise AssertionError(f"no {kind} event")


def until_online(server: Server, name: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if httpx.get(f"{server.url}/api/players/{name}", verify=NO_TLS).json()["bot"]["online"]:
            return
        time.sleep(0.1)
    raise AssertionError(f"{name} never came online")


def answer_of(c: httpx.Client, challenge_id: str, timeout: float = 30) -> dict:
    """The challenge once it is no longer open (asking after it, as the challenger's page does)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = c.get(f"/api/challenges/{challenge_id}").json()
        if now["status"] != "open":
            return now
        time.sleep(0.2)
    raise AssertionError("the challenge stayed open")


def test_a_person_makes_a_bot_whose_tokens_open_the_bot_api_alone(server: Server):
    with server.client() as ann, server.client() as bob, server.client() as guest:
        assert signup(ann, "Ann").status_code == 201 and signup(bob, "Bob").status_code == 201
        assert guest.post("/api/account/bots", json={"name": "Robo"}).json()["error"] == "not_signed_in"
        token = make_bot(ann, "Robo")
        assert ann.post("/api/account/bots", json={"name": "robo"}).json()["error"] == "name_taken"
        assert ann.post("/api/account/bots", json={"name": "no good"}).json()["error"] == "bad_account_name"
        assert bob.post("/api/account/bots/Robo/tokens").json()["error"] == "no_bot"  # not Bob's bot
        assert token.startswith("kkb_") and len(token) == 47
        # The database keeps the token's SHA-256 only: the token itself is nowhere in it.
        store = Store(server.database_url)
        with store.engine.connect() as conn:
            rows = [r._asdict() for r in conn.execute(select(bot_tokens))]
        assert [r["key"] for r in rows] == [hashlib.sha256(token.encode()).hexdigest()]
        assert token not in json.dumps(rows, default=str) and rows[0]["hint"] == token[:8]
        listed = ann.get("/api/account/bots").json()["bots"]
        assert [b["name"] for b in listed] == ["Robo"] and token not in json.dumps(listed)
        assert [t["hint"] for t in listed[0]["tokens"]] == [token[:8]]
        assert bob.get("/api/account/bots").json()["bots"] == []
        # The token opens the bot API...
        me = httpx.get(f"{server.url}/api/bot/account", headers=bearer(token)).json()
        assert me["name"] == "Robo" and me["owner"] == "Ann" and me["url"] == "/@/Robo"
        # ... and nothing else: a cookie's place refuses it, in the header or as the session cookie.
        r = httpx.get(f"{server.url}/api/account", headers=bearer(token))
        assert r.status_code == 401 and r.json()["error"] == "token_here"
        r = httpx.post(f"{server.url}/api/lobby/seeks", json={**CHALLENGE, "name": "x"}, headers=bearer(token))
        assert r.status_code == 401 and r.json()["error"] == "token_here"
        r = httpx.get(f"{server.url}/api/account", cookies={"koikoi_session": token})
        assert r.status_code == 401 and r.json()["error"] == "not_signed_in"
        # A session is never taken by the bot API, as its cookie or as a bearer token.
        r = ann.get("/api/bot/account")
        assert r.status_code == 401 and r.json()["error"] == "bot_token"
        session = ann.cookies["koikoi_session"]
        r = httpx.get(f"{server.url}/api/bot/account", headers=bearer(session))
        assert r.status_code == 401 and "not a bot's token" in r.json()["message"]
        for header in ({}, {"Authorization": "Basic eA=="}, bearer("kkb_" + "A" * 43), bearer("kkb_x")):
            r = httpx.get(f"{server.url}/api/bot/account", headers=header)
            assert r.status_code == 401 and r.json()["error"] == "bot_token", (header, r.text)
        # A bot never signs in: it has no password.
        with server.client() as robo:
            assert login(robo, "Robo", "whatever-it-is").status_code == 401
        # Revoked, the token opens nothing, its open stream ends, and a new one works.
        second = ann.post("/api/account/bots/Robo/tokens").json()["token"]
        with stream(server, second) as ws:
            assert ws_json(ws)["type"] == "hello"
            r = ann.delete(f"/api/account/bots/Robo/tokens/{second[:8]}")
            assert r.status_code == 200 and r.json()["revoked"] == 1
            assert next_event(ws, "error")["code"] == "bot_token"
            with pytest.raises(ConnectionClosed):
                ws.recv(timeout=10)
        r = httpx.get(f"{server.url}/api/bot/account", headers=bearer(second))
        assert r.status_code == 401 and "revoked" in r.json()["message"]
        with stream(server, second) as ws:
            assert ws_json(ws)["code"] == "bot_token"
        assert ann.delete(f"/api/account/bots/Robo/tokens/{second[:8]}").json()["error"] == "no_token"
        assert httpx.get(f"{server.url}/api/bot/account", headers=bearer(token)).status_code == 200
        tokens = ann.get("/api/account/bots").json()["bots"][0]["tokens"]
        assert {t["hint"]: t["revoked"] is not None for t in tokens} == {token[:8]: False, second[:8]: True}
        store.close()


def test_a_challenge_accepted_a_rated_game_played_the_bot_sent_its_own_seat_alone(server: Server):
    with server.client() as ann, server.client() as cat:
        signup(ann, "Ann")
        signup(cat, "Cat")
        token = make_bot(ann, "Robo")
        r = cat.post("/api/challenges", json={**CHALLENGE, "bot": "Robo", "rated": True, "clock": "20+120"})
        assert r.status_code == 409 and r.json()["error"] == "bot_offline"  # no stream open: not connected
        with stream(server, token) as ws:
            assert ws_json(ws) == {"type": "hello", "bot": {"name": "Robo", "url": "/@/Robo", "owner": "Ann"}}
            until_online(server, "Robo")
            body = {**CHALLENGE, "bot": "robo", "rated": True, "clock": "20+120", "name": "Mallory"}
            r = cat.post("/api/challenges", json=body)
            assert r.status_code == 201, r.text
            sent = r.json()
            assert sent["status"] == "open" and sent["bot"] == "Robo" and sent["rated"] is True
            assert sent["clock"] == "20+120"
            told = next_event(ws, "challenge")["challenge"]
            assert told["id"] == sent["id"] and told["challenger"]["name"] == "Cat"  # the account's name
            assert told["challenger"]["account"] is True and told["challenger"]["rating"] == 1500
            assert (told["preset"], told["hands"], told["rated"], told["custom"]) == ("nintendo", 1, True, False)
            assert told["clock"] == "20+120"  # the bot is told the time control it would play under
            assert cat.cookies["koikoi_id"] not in json.dumps(told) and "owner" not in json.dumps(told)
            # Nobody but the challenger hears of it.
            assert ann.get(f"/api/challenges/{sent['id']}").json()["error"] == "no_challenge"
            accepted = httpx.post(f"{server.url}/api/bot/challenges/{sent['id']}/accept", headers=bearer(token))
            assert accepted.status_code == 201, accepted.text
            seat = accepted.json()
            again = httpx.post(f"{server.url}/api/bot/challenges/{sent['id']}/accept", headers=bearer(token))
            assert again.status_code == 410 and again.json()["error"] == "challenge_over"
            start = next_event(ws, "gameStart")["game"]
            assert (start["id"], start["token"], start["seat"]) == (seat["game_id"], seat["token"], seat["seat"])
            assert start["opponent"] == {"name": "Cat", "account": True, "bot": False} and start["rated"] is True
            assert start["clock"] == "20+120"
            mine = answer_of(cat, sent["id"])
            assert mine["status"] == "accepted" and mine["game_id"] == seat["game_id"]
            assert mine["token"] != seat["token"] and mine["url"] == f"/play/{mine['token']}"
            # A bot does not read the chat: the person's table offers none, and a message is refused.
            with connect(f"{server.ws_url}/ws/{mine['token']}?chat=1") as person:
                while (msg := ws_json(person))["type"] != "chat":
                    pass
                assert msg["can_chat"] is False
                person.send(json.dumps({"type": "chat", "text": "hello, bot"}))
                while (msg := ws_json(person))["type"] != "error":
                    pass
                assert msg["code"] == "no_chat" and "bot" in msg["message"]
            play_bot_against_person(server, seat["game_id"], seat["token"], seat["seat"], mine["token"])
            assert next_event(ws, "gameFinish")["game"]["id"] == seat["game_id"]
        # Rated: it counted for both, once, as any rated game between two accounts.
        for name in ("Cat", "Robo"):
            shown = cat.get(f"/api/players/{name}").json()
            assert shown["ratings"]["short"]["games"] == 1, name
            assert shown["recent"][0]["game_id"] == seat["game_id"]
        (listed,) = [g for g in cat.get("/api/games").json()["games"] if g["game_id"] == seat["game_id"]]
        assert (listed["opponent_name"], listed["opponent_bot"]) == ("Robo", True)  # her games list marks it
        robo = cat.get("/api/players/Robo").json()
        assert robo["bot"]["owner"] == "Ann" and cat.get("/api/players/Cat").json()["bot"] is None
        assert robo["recent"][0]["opponent"] == "Cat"
        assert cat.get("/api/players/Cat").json()["recent"][0]["opponent_bot"] is True
        store = Store(server.database_url)
        with store.engine.connect() as conn:
            (rated,) = conn.execute(select(rated_games)).all()
        assert rated.rated is not None
        # Bots are rated as anyone, and listed apart from people.
        since = datetime.now(UTC) - timedelta(days=1)
        people = store.leaderboard("short", active_since=since, max_rd=500, limit=50)
        bots = store.leaderboard("short", active_since=since, max_rd=500, limit=50, bots=True)
        assert [p["name"] for p in people] == ["Cat"] and [b["name"] for b in bots] == ["Robo"]
        store.close()


def play_bot_against_person(server: Server, game_id: str, bot_token: str, bot_seat: int, person_token: str) -> None:
    """The bot plays over its seat socket (the first legal action), the person over HTTP; every table the
    bot is sent is checked against the real match: its own seat's view, with the bot protocol's
    observation of its own seat, and nothing of the other's hand or the stock."""
    store = Store(server.database_url)
    stored = store.game(game_id)
    assert stored is not None
    with connect(f"{server.ws_url}/ws/{bot_token}?game={game_id}") as ws, httpx.Client(base_url=server.url) as c:
        for _ in range(500):
            msg = ws_json(ws)
            if msg["type"] != "state":
                continue
            view = msg["state"]
            actions = [a for _, a in store.actions_of(game_id, until=view["seq"])]
            real = Match(RuleSet.from_dict(stored.rules), seed=stored.seed, version=stored.rules_version)
            for a in actions:
                real.apply_action(a)
            assert view["seat"] == bot_seat and view["players"][bot_seat]["bot"] is True
            assert view["players"][1 - bot_seat]["bot"] is False
            assert view["protocol"]["observation"] == real.observation(bot_seat).to_dict()
            hidden = real.hand.hands[1 - bot_seat] if not real.is_over() else 0
            sent = json.dumps(view)
            for card in iter_cards(hidden):
                assert f'"{CARD_NAMES[card]}"' not in sent, CARD_NAMES[card]
            assert str(stored.seed) not in sent
            if view["match_over"]:
                break
            if view["to_move"]:
                ws.send(json.dumps({"type": "action", "action": view["legal"][0], "seq": view["seq"]}))
                continue
            person = c.get(f"/api/seat/{person_token}").json()
            assert "protocol" not in person  # a person's seat is sent the table alone
            if person["to_move"]:
                c.post(f"/api/seat/{person_token}/action", json={"action": person["legal"][0], "seq": person["seq"]})
        else:
            raise AssertionError("the match did not end")
    assert store.game(game_id).status == "finished"
    store.close()


def test_challenges_declined_cancelled_refused_and_left_to_expire(server: Server):
    with server.client() as ann, server.client() as cat, server.client() as dan:
        signup(ann, "Ann")
        token = make_bot(ann, "Robo")
        with stream(server, token) as ws:
            until_online(server, "Robo")
            # What cannot be challenged, or how, is said.
            for body, code, status in (
                ({**CHALLENGE, "bot": "Nobody"}, "not_a_bot", 404),
                ({**CHALLENGE, "bot": "Ann"}, "not_a_bot", 404),  # a person: challenge people in the lobby
                ({**CHALLENGE, "bot": ["Robo"]}, "not_a_bot", 404),
                ({**CHALLENGE, "bot": "Robo", "rated": True}, "sign_in", 403),  # a guest
                ({**CHALLENGE, "bot": "Robo", "hands": 13}, "bad_seek", 422),
                ({**CHALLENGE, "bot": "Robo", "rules": {"preset": "boardgame"}}, "bad_rules", 422),
            ):
                r = cat.post("/api/challenges", json=body)
                assert (r.status_code, r.json()["error"]) == (status, code), (body, r.text)
            # Declined, with a reason the challenger is told.
            first = cat.post("/api/challenges", json={**CHALLENGE, "bot": "Robo", "name": "Cat"}).json()
            assert next_event(ws, "challenge")["challenge"]["challenger"] == {
                "name": "Cat",
                "account": False,
                "rating": 1500,
                "provisional": True,
            }
            url = f"{server.url}/api/bot/challenges/{first['id']}"
            r = httpx.post(f"{url}/decline", json={"reason": "because"}, headers=bearer(token))
            assert r.status_code == 422 and r.json()["error"] == "bad_reason"
            r = httpx.post(f"{url}/decline", json={"reason": "rules"}, headers=bearer(token))
            assert r.status_code == 200 and r.json() == {"id": first["id"], "status": "declined", "reason": "rules"}
            assert next_event(ws, "challengeGone")["challenge"]["id"] == first["id"]
            assert answer_of(cat, first["id"])["status"] == "declined"
            assert cat.get(f"/api/challenges/{first['id']}").json()["reason"] == "rules"
            assert httpx.post(f"{url}/accept", headers=bearer(token)).json()["error"] == "challenge_over"
            assert httpx.post(f"{url}/decline", headers=bearer(token)).json()["error"] == "challenge_over"
            # Cancelled by the challenger: the bot is told, and can no longer accept it.
            second = cat.post("/api/challenges", json={**CHALLENGE, "bot": "Robo"}).json()
            assert next_event(ws, "challenge")["challenge"]["id"] == second["id"]
            assert dan.delete(f"/api/challenges/{second['id']}").json()["error"] == "no_challenge"
            assert cat.delete(f"/api/challenges/{second['id']}").json()["status"] == "cancelled"
            assert next_event(ws, "challengeGone")["challenge"]["id"] == second["id"]
            r = httpx.post(f"{server.url}/api/bot/challenges/{second['id']}/accept", headers=bearer(token))
            assert r.status_code == 410
            # One challenge of a challenger waits for a bot at a time (test_a_bots_queue_is_shared_fairly).
            waiting = [cat.post("/api/challenges", json={**CHALLENGE, "bot": "Robo"}) for _ in range(2)]
            assert [r.status_code for r in waiting] == [201, 409]
            assert waiting[1].json()["error"] == "challenge_waiting"
            # A challenger who stops asking after their challenge leaves it to expire.
            store = Store(server.database_url)
            with store.engine.begin() as conn:
                conn.execute(update(challenges).values(seen=datetime.now(UTC) - timedelta(minutes=1)))
            assert next_event(ws, "challengeGone", 60)["challenge"]["id"] == waiting[0].json()["id"]
            assert cat.get(f"/api/challenges/{waiting[0].json()['id']}").json()["status"] == "expired"
            store.close()
            # Answers for challenges that are not the bot's, or not there at all.
            for cid in ("nope", "x" * 40, "a%00b", first["id"] + "x"):
                r = httpx.post(f"{server.url}/api/bot/challenges/{cid}/accept", headers=bearer(token))
                assert r.status_code in (404, 410), (cid, r.text)
                assert r.json()["error"] in ("no_challenge", "challenge_over")


def test_a_bots_queue_is_shared_fairly(server: Server):
    names = ("Robo", "Robi", "Roba", "Robu")
    with server.client() as ann, ExitStack() as stack:
        signup(ann, "Ann")
        for name in names:
            stack.enter_context(stream(server, make_bot(ann, name)))
            until_online(server, name)
        # Seven browsers each send three challenges to one bot: one of each waits, the rest are refused,
        # so the bot's queue (CHALLENGES_PER_BOT) is not full and an honest challenger gets in.
        crowd = [stack.enter_context(server.client()) for _ in range(7)]
        sent = [[c.post("/api/challenges", json={**CHALLENGE, "bot": "Robo"}) for _ in range(3)] for c in crowd]
        assert [[r.status_code for r in three] for three in sent] == [[201, 409, 409]] * 7
        assert {r.json()["error"] for three in sent for r in three[1:]} == {"challenge_waiting"}
        assert "one at a time to each bot" in sent[0][1].json()["message"]
        honest = stack.enter_context(server.client())
        assert honest.post("/api/challenges", json={**CHALLENGE, "bot": "Robo"}).status_code == 201
        # A challenger still has at most seeks_per_player (3) challenges waiting, to all bots together.
        more = [honest.post("/api/challenges", json={**CHALLENGE, "bot": name}) for name in names[1:]]
        assert [r.status_code for r in more] == [201, 201, 429]
        assert more[2].json()["error"] == "too_many_challenges"


def test_bots_stay_out_of_quick_pairing_and_seek_in_the_lobby(server: Server):
    with server.client() as ann, server.client() as bob:
        signup(ann, "Ann")
        signup(bob, "Bob")
        token = make_bot(ann, "Robo")
        r = httpx.post(f"{server.url}/api/bot/quick", json={"pool": "nintendo-3"}, headers=bearer(token))
        assert r.status_code == 403 and r.json()["error"] == "bot_quick"
        assert "seek" in r.json()["message"]
        r = httpx.post(f"{server.url}/api/lobby/quick", json={"pool": "nintendo-3"}, headers=bearer(token))
        assert r.status_code == 401 and r.json()["error"] == "token_here"
        assert bob.get("/api/lobby").json()["pools"]["nintendo-3"]["waiting"] == 0
        with stream(server, token) as ws:
            ws_json(ws)
            seek = {"rules": {"preset": "nintendo"}, "hands": 1, "rated": True, "name": "ignored"}
            r = httpx.post(f"{server.url}/api/bot/seeks", json=seek, headers=bearer(token))
            assert r.status_code == 422 and r.json()["error"] == "clock_needed"  # a rated seek has a clock
            seek["clock"] = "10+60"
            r = httpx.post(f"{server.url}/api/bot/seeks", json=seek, headers=bearer(token))
            assert r.status_code == 201, r.text
            assert r.json()["seek"]["clock"] == "10+60"
            seek_id = r.json()["seek_id"]
            (shown,) = bob.get("/api/lobby").json()["seeks"]
            assert (shown["id"], shown["name"], shown["account"], shown["bot"]) == (seek_id, "Robo", True, True)
            mine = httpx.get(f"{server.url}/api/bot/seeks", headers=bearer(token)).json()["seeks"]
            assert [s["id"] for s in mine] == [seek_id]
            # Bob accepts it as any seek; the bot hears of its game on its stream.
            taken = bob.post(f"/api/lobby/seeks/{seek_id}/accept", json={})
            assert taken.status_code == 201, taken.text
            start = next_event(ws, "gameStart")["game"]
            assert start["id"] == taken.json()["game_id"] and start["rated"] is True and start["clock"] == "10+60"
            assert start["opponent"] == {"name": "Bob", "account": True, "bot": False}
            table = bob.get(f"/api/seat/{taken.json()['token']}").json()
            assert [p["bot"] for p in table["players"]] == [True, False] and "protocol" not in table
            assert httpx.get(f"{server.url}/api/bot/seeks", headers=bearer(token)).json()["seeks"] == []
            (game,) = bob.get("/api/lobby").json()["games"]
            assert [(p["name"], p["bot"]) for p in game["players"]] == [("Robo", True), ("Bob", False)]
            # Its seeks are its own to cancel.
            other = httpx.post(f"{server.url}/api/bot/seeks", json=seek, headers=bearer(token)).json()["seek_id"]
            assert bob.delete(f"/api/lobby/seeks/{other}").status_code == 404
            r = httpx.delete(f"{server.url}/api/bot/seeks/{other}", headers=bearer(token))
            assert r.json() == {"seek_id": other, "cancelled": True}


@pytest.mark.limits(signups_per_hour=100, logins_per_minute=100, sockets_per_seat=2)
def test_the_stream_only_listens_and_is_bounded(server: Server):
    with server.client() as ann:
        signup(ann, "Ann")
        token = make_bot(ann, "Robo")
        with stream(server, token) as one, stream(server, token) as two:
            assert ws_json(one)["type"] == ws_json(two)["type"] == "hello"
            with stream(server, token) as three:  # two streams of one bot at most (sockets_per_seat)
                assert ws_json(three)["code"] == "too_many_sockets"
            one.send(json.dumps({"type": "ping"}))
            assert next_event(one, "pong")["type"] == "pong"
            for bad in ("x" * 5000, '{"type": "accept", "id": "x"}', "[]"):
                one.send(bad)
                assert next_event(one, "error")["code"] == "bad_message"
            one.send(b"\x00")
            assert next_event(one, "error")["code"] == "bad_message"
        with connect(f"{server.ws_url}/api/bot/stream") as ws:  # no token
            assert ws_json(ws)["code"] == "bot_token"
        with connect(f"{server.ws_url}/api/bot/stream", additional_headers={"Cookie": ann_cookie(ann)}) as ws:
            assert ws_json(ws)["code"] == "bot_token"  # a session is no bot's token


def ann_cookie(c: httpx.Client) -> str:
    return "; ".join(f"{k}={v}" for k, v in c.cookies.items())


def run_cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    code = "import sys; from koikoi.cli import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, input=stdin, timeout=60)


@pytest.mark.server
def test_the_operator_makes_bots_and_their_tokens_with_koikoi_admin(database_url):
    url = ["--database-url", database_url]
    assert run_cli("db", "upgrade", *url).returncode == 0
    r = run_cli("admin", "make-bot", "Tanuki", "--owner", "Nobody", *url)
    assert r.returncode == 2 and "no person's account named 'Nobody'" in r.stderr
    r = run_cli("admin", "make-bot", "Tanuki", *url)
    assert r.returncode == 0 and "Tanuki: a bot account" in r.stdout, r.stderr
    r = run_cli("admin", "make-bot", "tanuki", *url)
    assert r.returncode == 2 and "taken" in r.stderr
    assert run_cli("admin", "bot-token", "Nobody", *url).returncode == 2
    r = run_cli("admin", "bot-token", "TANUKI", *url)
    token = r.stdout.strip()
    assert r.returncode == 0 and token.startswith("kkb_") and "shown above this once" in r.stderr
    store = Store(database_url)
    with store.engine.connect() as conn:
        assert conn.execute(select(bot_tokens.c.key)).scalar_one() == hashlib.sha256(token.encode()).hexdigest()
    listed = run_cli("admin", "list", *url).stdout
    assert "Tanuki" in listed and "bot" in listed
    r = run_cli("admin", "revoke-bot-tokens", "Tanuki", *url)
    assert r.returncode == 0 and "1 token(s) revoked" in r.stdout
    with store.engine.connect() as conn:
        assert conn.execute(select(bot_tokens.c.revoked)).scalar_one() is not None
    store.close()


@pytest.mark.server
@pytest.mark.skipif(not POSTGRES_URL, reason="needs PostgreSQL: set KOIKOI_TEST_POSTGRES_URL")
def test_a_challenge_on_one_process_reaches_the_bots_stream_on_another(tmp_path):
    """Two server processes on one PostgreSQL database: the bot's stream is on one, the challenger and the
    bot's answer on the other; the stream hears both (announced on koikoi_bots)."""
    url = make_database("postgresql", tmp_path)
    a = Server(url, tmp_path, *limit_args(signups_per_hour=100))
    b = Server(url, tmp_path, *limit_args(signups_per_hour=100))
    a.start()
    b.start()
    try:
        with a.client() as ann, b.client() as cat:
            signup(ann, "Ann")
            token = make_bot(ann, "Robo")
            with stream(a, token) as ws:
                ws_json(ws)
                until_online(b, "Robo")
                sent = cat.post("/api/challenges", json={**CHALLENGE, "bot": "Robo"}).json()
                assert next_event(ws, "challenge")["challenge"]["id"] == sent["id"]
                r = httpx.post(f"{b.url}/api/bot/challenges/{sent['id']}/accept", headers=bearer(token))
                assert r.status_code == 201, r.text
                assert next_event(ws, "gameStart")["game"]["id"] == r.json()["game_id"]
                assert answer_of(cat, sent["id"])["game_id"] == r.json()["game_id"]
    finally:
        a.stop(hard=False)
        b.stop(hard=False)
