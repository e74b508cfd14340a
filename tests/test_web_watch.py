"""Spectators and chat against a real server on a real database (docs/web.md, "Spectators", "Chat",
"Moderation"): a spectator following a whole match and sent nothing hidden, a clocked game's clocks,
presence and ending as a spectator is told them, private games, the players' own game, the bounds; the
players' chat and the spectators' chat, hostile text, mute, report, ``koikoi admin reports`` and
``disable``; and, on PostgreSQL, a spectator on a second process."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from conftest import POSTGRES_URL, Server
from test_web_accounts import signup
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from koikoi.cards import FULL_DECK
from koikoi.match import Match
from koikoi.rules import RuleSet
from koikoi.web.chatstore import ChatStore
from koikoi.web.store import Store
from koikoi.web.views import SPECTATOR_KEYS

pytestmark = pytest.mark.limits(signups_per_hour=100)

ONE_HAND = {"preset": "cardavia", "options": {"hand_bonus": 0}}  # one hand, never won at the deal


def cookies(c: httpx.Client) -> str:
    c.get("/api/lobby")  # a first visit sets the browser's cookie
    return "; ".join(f"{k}={v}" for k, v in c.cookies.items())


def friend_game(server: Server, host: httpx.Client, guest: httpx.Client, **extra) -> dict:
    """A game between two people: created by ``host``, joined by ``guest``; both seats' tokens."""
    made = host.post("/api/games", json={"name": "Ann", "opponent": "friend", "rules": ONE_HAND, **extra})
    assert made.status_code == 201, made.text
    game = made.json()
    joined = guest.post(f"/api/invite/{game['invite_token']}/join", json={"name": "Bob"})
    assert joined.status_code == 200, joined.text
    return {"game_id": game["game_id"], "tokens": [game["token"], joined.json()["token"]]}


@contextmanager
def watching(server: Server, game_id: str, client: httpx.Client | None = None) -> Iterator[ClientConnection]:
    headers = {"Cookie": cookies(client)} if client is not None else {}
    with connect(f"{server.ws_url}/ws/watch/{game_id}", additional_headers=headers, open_timeout=30) as ws:
        yield ws


@contextmanager
def seated(server: Server, token: str) -> Iterator[ClientConnection]:
    with connect(f"{server.ws_url}/ws/{token}?chat=1", open_timeout=30) as ws:
        yield ws


def read(ws: ClientConnection, timeout: float = 30) -> dict:
    return json.loads(ws.recv(timeout=timeout))


def until(ws: ClientConnection, check, timeout: float = 30) -> tuple[dict, list[dict]]:
    """Messages until one for which ``check`` holds: (that one, all read before it)."""
    seen: list[dict] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = read(ws, max(0.1, deadline - time.monotonic()))
        if check(msg):
            return msg, seen
        seen.append(msg)
    raise AssertionError(f"never came; read {seen[-5:]}")


def fence(ws: ClientConnection) -> list[dict]:
    """Everything the socket is sent before the answer to a ping sent now."""
    ws.send(json.dumps({"type": "ping"}))
    return until(ws, lambda m: m["type"] == "pong")[1]


def refusal(ws: ClientConnection) -> tuple[dict, int | None]:
    """The error a refused socket is told, and its close code."""
    msg = read(ws)
    with pytest.raises(ConnectionClosed):
        ws.recv(timeout=10)
    return msg, ws.close_code


def true_match(server: Server, game_id: str, moves: int | None = None) -> Match:
    store = Store(server.database_url)
    try:
        g = store.game(game_id)
        assert g is not None
        m = Match(RuleSet.from_dict(g.rules), seed=g.seed)
        for _seat, a in store.actions_of(game_id)[:moves]:
            m.apply_action(a)
        return m
    finally:
        store.close()


def cards_in(view: dict) -> int:
    ids = list(view["hand"]) + list(view["table"])
    for pile in view["piles"]:
        for cards in pile.values():
            ids += cards
    if view["drawn_card"] is not None:
        ids.append(view["drawn_card"])
    for e in view["events"]:
        ids += e["captured"] + ([e["card"]] if e["card"] is not None else [])
    mask = 0
    for c in ids:
        mask |= 1 << c
    return mask


def hidden_of(m: Match) -> int:
    h = m.hand
    seen = h.table | h.piles[0] | h.piles[1] | (1 << h.pending if h.pending >= 0 else 0)
    return FULL_DECK & ~seen  # both hands and the stock


def move(c: httpx.Client, token: str) -> dict:
    """The seat's move if it is its turn (stop at once, else the first legal action); its view."""
    v = c.get(f"/api/seat/{token}").json()
    if v["to_move"]:
        action = 289 if 289 in v["legal"] else v["legal"][0]
        r = c.post(f"/api/seat/{token}/action", json={"action": action, "seq": v["seq"]})
        assert r.status_code == 200, r.text
    return v


def both_move(c: httpx.Client, tokens: list[str]) -> None:
    """Each player makes a move in turn until both have moved (before then a resignation is an abort, and a
    first move's time that runs out aborts the game); koi-koi at a decision, as a stop can end the match."""
    moved: set[int] = set()
    for _ in range(20):
        for seat, token in enumerate(tokens):
            v = c.get(f"/api/seat/{token}").json()
            if v["to_move"]:
                action = 288 if 288 in v["legal"] else v["legal"][0]
                r = c.post(f"/api/seat/{token}/action", json={"action": action, "seq": v["seq"]})
                assert r.status_code == 200, r.text
                moved.add(seat)
        if len(moved) == 2:
            return
    raise AssertionError("the two players never both moved")


# -- spectators ---------------------------------------------------------------------------------------------


def test_a_spectator_follows_a_whole_match_and_is_sent_nothing_hidden(server: Server):
    with server.client() as ann, server.client() as bob, server.client() as carl:
        game = friend_game(server, ann, bob)
        gid, tokens = game["game_id"], game["tokens"]
        seed = Store(server.database_url).game(gid).seed
        # The replay (which holds both hands) is not public before the end.
        assert carl.get(f"/api/games/{gid}/replay").json()["error"] == "not_finished"
        with seated(server, tokens[0]) as p0:
            until(p0, lambda m: m["type"] == "watchers" and m["n"] == 0)
            with watching(server, gid, carl) as ws:
                # The player is told that one watches.
                until(p0, lambda m: m["type"] == "watchers" and m["n"] == 1)
                frames: list[tuple[str, dict]] = []
                while True:
                    raw = ws.recv(timeout=30)
                    msg = json.loads(raw)
                    frames.append((raw, msg))
                    if msg["type"] == "state" and msg["state"]["match_over"]:
                        break
                    if msg["type"] == "state":
                        for token in tokens:
                            move(httpx.Client(base_url=server.url, timeout=30), token)
        states = [(raw, m["state"]) for raw, m in frames if m["type"] == "state"]
        kinds = {m["type"] for _, m in frames}
        assert kinds <= {"state", "chat", "watchers"}, kinds
        final = true_match(server, gid)
        assert len(states) >= 3 and states[-1][1]["seq"] == len(final.actions)
        checked = 0
        for raw, st in states:
            truth = true_match(server, gid, st["seq"])
            assert str(seed) not in raw and "seed" not in raw and "deck" not in raw
            assert st["spectator"] is True and st["hand"] == [] and st["legal"] == [] and st["stakes"] is None
            assert not st["to_move"] and not st["can_declare"] and not st["hints"] and "invite_token" not in st
            assert set(st) <= SPECTATORS_FIELDS, sorted(set(st) - SPECTATORS_FIELDS)
            if not truth.is_over():
                assert not cards_in(st) & hidden_of(truth), f"a hidden card was sent at move {st['seq']}"
                assert st["hand_counts"] == [truth.hand.hands[0].bit_count(), truth.hand.hands[1].bit_count()]
                checked += 1
        assert checked >= 2
        assert states[-1][1]["outcome"]["scores"] == list(final.scores)
        # Once it is over, anyone may see what the players' replay shows, its record too.
        replay = carl.get(f"/api/games/{gid}/replay")
        assert replay.status_code == 200, replay.text
        assert carl.get(f"/api/games/{gid}/record").json()["players"][0]["name"] == "Ann"
        assert carl.get(f"/replay/{gid}").status_code == 200
        # The page and the JSON view for spectators.
        page = carl.get(f"/watch/{gid}?lang=en")
        assert page.status_code == 200 and '"watch": true' in page.text
        public = carl.get(f"/api/watch/{gid}").json()
        assert public["state"]["hand"] == [] and public["private"] is False


QUICK, SLOW = "2+1", "20+120"  # a test-only control (koikoi serve --time-control), and a standard one
# Every field a spectator's table may have: the public part of a seat's view, the game's own name and kind,
# and the public extras (both clocks, the ending, who is away). Never a seat's claim, abort, resign or rematch.
SPECTATORS_FIELDS = {
    *SPECTATOR_KEYS,
    *("spectator", "seat", "hand", "hand_counts", "opponent_hand_count", "to_move", "legal", "can_declare"),
    *("hints", "stakes", "game_id", "opponent", "clock", "ending", "away", "rated", "rating"),
}


def audited(server: Server, gid: str, frames: list[str]) -> list[dict]:
    """The tables among a spectator's ``frames``, each checked: no field but the public ones, no seed, and
    no card of either hand or of the stock while the match was still being played."""
    seed = str(Store(server.database_url).game(gid).seed)
    states = []
    for raw in frames:
        msg = json.loads(raw)
        if msg["type"] != "state":
            continue
        st = msg["state"]
        assert seed not in raw and "seed" not in raw and "deck" not in raw
        assert set(st) <= SPECTATORS_FIELDS, f"a spectator was sent {sorted(set(st) - SPECTATORS_FIELDS)}"
        assert st["hand"] == [] and st["legal"] == [] and st["stakes"] is None and not st["to_move"]
        truth = true_match(server, gid, st["seq"])
        if not truth.is_over():  # a match ended early (time, resign) keeps its hands hidden
            assert not cards_in(st) & hidden_of(truth), f"a hidden card was sent at move {st['seq']}"
        states.append(st)
    return states


def table_where(ws: ClientConnection, frames: list[str], check) -> dict:
    """The first table the spectator is sent for which ``check`` holds; every frame read is kept."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        raw = ws.recv(timeout=max(0.1, deadline - time.monotonic()))
        frames.append(str(raw))
        msg = json.loads(raw)
        if msg["type"] == "state" and check(msg["state"]):
            return msg["state"]
    raise AssertionError("no such table came")


@pytest.mark.server
def test_a_spectator_sees_both_clocks_who_is_away_and_why_the_match_ended(database_url, tmp_path):
    s = Server(database_url, tmp_path, "--time-control", QUICK)
    s.start()
    try:
        with s.client() as ann, s.client() as bob, s.client() as carl:
            game = friend_game(s, ann, bob, clock=SLOW)
            gid, tokens = game["game_id"], game["tokens"]
            frames: list[str] = []
            with watching(s, gid, carl) as ws:
                st = table_where(ws, frames, lambda st: True)
                clock = st["clock"]
                assert clock["control"] == SLOW and clock["per_move"] == 20 and clock["banks"] == [120.0, 120.0]
                assert clock["to_move"] == st["current_player"] and 0 < clock["left"] <= 20 + 20 + 120
                assert st["ending"] is None and not st["match_over"]
                # Both players move (a first turn may be two moves: a drawn card that matches two on the
                # table asks the same player to choose); the spectator's clock follows whose turn it is.
                moved: set[int] = set()
                while len(moved) < 2:
                    seq = st["seq"]
                    for seat, token in enumerate(tokens):
                        v = carl.get(f"/api/seat/{token}").json()
                        if v["to_move"]:  # koi-koi at a decision: a stop could end the one-hand match
                            action = 288 if 288 in v["legal"] else v["legal"][0]
                            r = carl.post(f"/api/seat/{token}/action", json={"action": action, "seq": v["seq"]})
                            assert r.status_code == 200, r.text
                            moved.add(seat)
                    st = table_where(ws, frames, lambda x, seq=seq: x["seq"] > seq)
                    assert st["clock"]["to_move"] == st["current_player"] and st["clock"]["left"] > 0
                # Bob is at the table, then his connection drops: the spectator sees him away, and no claim.
                with seated(s, tokens[1]):
                    table_where(ws, frames, lambda x: x["away"] == [False, False])
                table_where(ws, frames, lambda x: x["away"] == [False, True])
                with seated(s, tokens[1]) as p1:
                    p1.send(json.dumps({"type": "resign"}))
                    until(p1, lambda m: m["type"] == "ended")
                st = table_where(ws, frames, lambda x: x["status"] == "finished")
                assert st["ending"] == {"reason": "resign", "winner": 0}
                assert st["match_over"] and st["match_winner"] == 0 and st["clock"]["to_move"] is None
                assert st["away"] is None  # presence is a game in play's
            public = carl.get(f"/api/watch/{gid}").json()["state"]
            assert public["ending"] == {"reason": "resign", "winner": 0} and public["clock"]["control"] == SLOW
            assert set(public) <= SPECTATORS_FIELDS
            assert len(audited(s, gid, frames)) >= 5
            # A quick clock nobody moves on: the spectator sees the first move's time run out, and who did
            # not come (an abort: no result).
            game = friend_game(s, ann, bob, clock=QUICK)
            frames = []
            with watching(s, game["game_id"], carl) as ws:
                first = table_where(ws, frames, lambda st: True)
                assert first["clock"]["control"] == QUICK and first["clock"]["to_move"] == first["current_player"]
                st = table_where(ws, frames, lambda x: x["status"] == "finished")
            loser = first["current_player"]
            assert st["ending"] == {"reason": "abort", "winner": None, "no_show": loser} and st["match_winner"] is None
            assert st["clock"]["flagged"] and st["clock"]["to_move"] is None
            audited(s, game["game_id"], frames)
    finally:
        s.stop(hard=False)


def test_a_hostile_name_is_text_on_the_spectators_page(server: Server):
    with server.client() as ann, server.client() as bob, server.client() as carl:
        made = ann.post("/api/games", json={"name": "<script>x()</script>", "opponent": "friend", "rules": ONE_HAND})
        game = made.json()
        bob.post(f"/api/invite/{game['invite_token']}/join", json={"name": '"><img src=x onerror=y()>'})
        page = carl.get(f"/watch/{game['game_id']}?lang=en").text
        assert "<script>x()</script>" not in page and "&lt;script&gt;x()&lt;/script&gt;" in page
        assert "<img src=x" not in page


def test_a_private_game_is_refused_to_spectators(server: Server):
    with server.client() as ann, server.client() as bob, server.client() as carl:
        game = friend_game(server, ann, bob, private=True)
        gid = game["game_id"]
        with watching(server, gid, carl) as ws:
            error, code = refusal(ws)
        assert (error["code"], code) == ("private_game", 4403), error
        assert "private" in error["message"]
        page = carl.get(f"/watch/{gid}?lang=en")
        assert page.status_code == 403 and "private" in page.text
        assert carl.get(f"/api/watch/{gid}").json()["error"] == "private_game"
        assert carl.get(f"/api/games/{gid}/replay").json()["error"] == "private_game"
        # Its players are told so (their page then offers no link for spectators).
        with seated(server, game["tokens"][0]) as p0:
            watchers, _ = until(p0, lambda m: m["type"] == "watchers")
        assert watchers["private"] is True and watchers["n"] == 0
        # A bad value says what it takes; a game against the computer may be private too.
        bad = ann.post("/api/games", json={"name": "Ann", "opponent": "friend", "rules": ONE_HAND, "private": "yes"})
        assert bad.status_code == 422 and bad.json()["error"] == "bad_private"
        easy = ann.post("/api/games", json={"opponent": "easy", "rules": ONE_HAND, "private": True}).json()
        assert carl.get(f"/api/watch/{easy['game_id']}").json()["error"] == "private_game"
        # A game against the computer that is not private may be watched.
        open_easy = ann.post("/api/games", json={"opponent": "easy", "rules": ONE_HAND}).json()
        seen = carl.get(f"/api/watch/{open_easy['game_id']}").json()["state"]
        # The computer may already have played its first card when it deals.
        assert seen["hand"] == [] and seen["hand_counts"][0] == 8 and seen["hand_counts"][1] in (7, 8)
        # Unknown and malformed addresses.
        for gid_ in ("nosuchgame1", "../../etc", "x" * 70):
            assert carl.get(f"/api/watch/{gid_}").status_code == 404


def test_private_seeks_and_the_lobbys_list_of_games(server: Server):
    with server.client() as ann, server.client() as bob:
        assert signup(ann, "SeekerAnn").status_code == 201
        seek = {"rules": {"preset": "nintendo"}, "hands": 1, "name": "Ann"}
        rated_private = ann.post("/api/lobby/seeks", json={**seek, "rated": True, "private": True})
        assert rated_private.status_code == 422 and "always public" in rated_private.json()["message"]
        assert ann.post("/api/lobby/seeks", json={**seek, "private": "no"}).status_code == 422
        private = ann.post("/api/lobby/seeks", json={**seek, "private": True}).json()
        assert private["seek"]["private"] is True
        public = ann.post("/api/lobby/seeks", json=seek).json()
        assert public["seek"]["private"] is False
        one = bob.post(f"/api/lobby/seeks/{private['seek_id']}/accept", json={"name": "Bob"}).json()
        two = bob.post(f"/api/lobby/seeks/{public['seek_id']}/accept", json={"name": "Bob"}).json()
        listed = [g["game_id"] for g in bob.get("/api/lobby").json()["games"]]
        assert two["game_id"] in listed and one["game_id"] not in listed
        assert bob.get(f"/api/watch/{one['game_id']}").json()["error"] == "private_game"
        assert bob.get(f"/api/watch/{two['game_id']}").status_code == 200


def test_a_player_watches_their_own_game_only_once_it_is_over(server: Server):
    with server.client() as ann, server.client() as bob:
        game = friend_game(server, ann, bob)
        gid = game["game_id"]
        with watching(server, gid, ann) as ws:
            error, code = refusal(ws)
        assert (error["code"], code) == ("playing_here", 4409), error
        assert ann.get(f"/watch/{gid}?lang=en").status_code == 409
        with httpx.Client(base_url=server.url, timeout=30) as c:
            for _ in range(200):
                views = [move(c, t) for t in game["tokens"]]
                if any(v["match_over"] for v in views):
                    break
        with watching(server, gid, ann) as ws:
            assert read(ws)["state"]["match_over"] is True


@pytest.mark.limits(spectators_per_game=2, watch_sockets_per_address=3)
def test_spectators_are_bounded_per_game_and_per_address(server: Server):
    with server.client() as ann, server.client() as bob:
        games = [friend_game(server, ann, bob)["game_id"] for _ in range(2)]
        with watching(server, games[0]) as a, watching(server, games[0]) as b:
            for ws in (a, b):
                assert read(ws)["type"] == "state"
            with watching(server, games[0]) as c:
                error, code = refusal(c)
            assert (error["code"], code) == ("too_many_spectators", 4429), error
            with watching(server, games[1]) as d:
                assert read(d)["type"] == "state"
                with watching(server, games[1]) as e:
                    error, code = refusal(e)
                assert (error["code"], code) == ("too_many_sockets", 4429), error
        # Gone, they make room again (once the server has seen them go).
        for _ in range(100):
            with watching(server, games[0]) as a:
                if read(a)["type"] == "state":
                    break
            time.sleep(0.1)
        else:
            raise AssertionError("the spectators who left still count")


def test_the_spectators_socket_refuses_other_sites_and_bad_messages(server: Server):
    with server.client() as ann, server.client() as bob:
        gid = friend_game(server, ann, bob)["game_id"]
        with connect(
            f"{server.ws_url}/ws/watch/{gid}", additional_headers={"Origin": "https://evil.example"}, open_timeout=30
        ) as ws:
            error, code = refusal(ws)
        assert (error["code"], code) == ("bad_origin", 4403)
        with watching(server, gid) as ws:
            until(ws, lambda m: m["type"] == "watchers")
            for bad in ("not json", "[1]", json.dumps({"type": "action", "action": 0, "seq": 0}), "x" * 5000):
                ws.send(bad)
                reply = until(ws, lambda m: m["type"] == "error")[0]
                assert reply["code"] == "bad_message", (bad[:20], reply)
            ws.send(b"\x00binary")
            assert until(ws, lambda m: m["type"] == "error")[0]["code"] == "bad_message"
            ws.send(json.dumps({"type": "state"}))
            assert until(ws, lambda m: m["type"] == "state")[0]["state"]["hand"] == []
            # The page's "bye" as it closes is no fault: no answer (the ping's is the next).
            ws.send(json.dumps({"type": "bye"}))
            ws.send(json.dumps({"type": "ping"}))
            assert until(ws, lambda m: m["type"] in ("pong", "error"))[0]["type"] == "pong"
            # A guest spectator reads the spectators' chat but does not write in it.
            ws.send(json.dumps({"type": "chat", "text": "hi"}))
            reply = until(ws, lambda m: m["type"] == "error")[0]
            assert reply["code"] == "chat_sign_in" and reply["about"] == "chat"


# -- chat -----------------------------------------------------------------------------------------------------


def chat_of(ws: ClientConnection) -> list[dict]:
    """The chat messages a socket is sent before the answer to a ping sent now."""
    return [m for msg in fence(ws) if msg["type"] == "chat" for m in msg["messages"]]


def heard(ws: ClientConnection) -> list[dict]:
    """The next chat messages delivered to a socket (not a history)."""
    return until(ws, lambda m: m["type"] == "chat" and not m.get("history"))[0]["messages"]


def say(ws: ClientConnection, **what) -> None:
    ws.send(json.dumps({"type": "chat", **what}))


def said(ws: ClientConnection, **what) -> dict:
    """Say it, and wait for the author's own copy: it has then been delivered to every socket here."""
    say(ws, **what)
    return heard(ws)[0]


def error_of(ws: ClientConnection) -> dict:
    return until(ws, lambda m: m["type"] == "error")[0]


@pytest.mark.limits(chat_per_minute=0.1, chat_burst=12)
def test_the_players_chat_between_two_guests(server: Server, tmp_path):
    with server.client() as ann, server.client() as bob:
        tokens = friend_game(server, ann, bob)["tokens"]
        plain = connect(f"{server.ws_url}/ws/{tokens[1]}", open_timeout=30)  # a program's socket: no chat
        with plain, seated(server, tokens[0]) as p0, seated(server, tokens[1]) as p1:
            hello, _ = until(p0, lambda m: m["type"] == "chat")
            assert hello == {
                "type": "chat",
                "room": "players",
                "history": True,
                "messages": [],
                "can_chat": True,
                "muted": False,
            }
            until(p1, lambda m: m["type"] == "chat")
            # Markup and script are kept and sent as the text they are (the page shows them as text).
            hostile = '<script>alert("x")</script><b onclick="evil()">bold</b> &amp; 🎴'
            assert said(p0, text=f"  {hostile}  ")["text"] == hostile  # the author sees their own, trimmed
            got = heard(p1)
            assert [(m["text"], m["name"], m["seat"], m["room"]) for m in got] == [(hostile, "Ann", 0, "players")]
            assert "author" not in got[0] and "owner" not in json.dumps(got)
            assert [m["type"] for m in [read(plain), *fence(plain)]] == ["state"]  # what it knows, only
            # A phrase goes as its id, for each reader's language.
            said(p1, phrase="yoroshiku")
            assert [(m["phrase"], m["text"]) for m in heard(p0)] == [("yoroshiku", None)]
            # Refused, each with what is wrong, and nothing kept.
            for what, code, words in [
                ({"text": "x" * 201}, "chat_too_long", "at most 200 characters, not 201"),
                ({"text": "   "}, "bad_chat", "cannot be empty"),
                ({"text": "ring\x07bell"}, "bad_chat", "U+0007"),
                ({"text": "two\nlines"}, "bad_chat", "U+000A"),
                ({"text": "\u202eevil"}, "bad_chat", "U+202E"),
                ({"text": "\u3164"}, "bad_chat", "blank-looking character U+3164"),  # an empty-looking message
                ({"text": "Z" + "\u0351" * 8 + "algo"}, "bad_chat", "8 marks stacked"),
                ({"text": 42}, "bad_chat", "must be text"),
                ({"phrase": "insult"}, "bad_chat", "no phrase 'insult'"),
                ({"text": "a", "phrase": "hello"}, "bad_chat", "either"),
                ({}, "bad_chat", "either"),
            ]:
                say(p0, **what)
                error = error_of(p0)
                assert (error["code"], error["about"]) == (code, "chat"), (what, error)
                assert words in error["message"], (what, error)
            # 10 KB is refused before it is read, naming the limit.
            p0.send(json.dumps({"type": "chat", "text": "x" * 10240}))
            error = error_of(p0)
            assert error["code"] == "bad_message" and "at most 4096 characters" in error["message"]
            said(p0, text="y" * 200)  # exactly 200: kept
            assert len(heard(p1)[0]["text"]) == 200
            assert all(m["type"] != "chat" for m in fence(p1))  # nothing else reached the other player
        # Kept with the game: a reload gets the history, oldest first.
        with seated(server, tokens[1]) as p1:
            history, _ = until(p1, lambda m: m["type"] == "chat")
            assert [m["text"] or m["phrase"] for m in history["messages"]] == [hostile, "yoroshiku", "y" * 200]
        # Rate-limited per person (chat_burst 12, then 0.1 a minute): the 9 sent and the refused above
        # count, so a few more are taken and then one is refused.
        with seated(server, tokens[0]) as p0:
            until(p0, lambda m: m["type"] == "chat")
            codes = []
            for i in range(12):
                say(p0, text=f"m{i}")
                codes.append(next((m.get("code") for m in fence(p0) if m["type"] == "error"), None))
            assert "rate_limited" in codes and codes.index("rate_limited") > 0, codes


@pytest.mark.limits(chat_burst=50)
def test_mute_survives_a_reload_and_reports_reach_the_moderators(server: Server):
    with server.client() as ann, server.client() as bob:
        game = friend_game(server, ann, bob)
        gid, tokens = game["game_id"], game["tokens"]
        with seated(server, tokens[0]) as p0, seated(server, tokens[1]) as p1:
            for ws in (p0, p1):
                until(ws, lambda m: m["type"] == "watchers")
            said(p0, text="you will lose, idiot")
            rude = heard(p1)[0]
            p1.send(json.dumps({"type": "mute", "muted": True}))
            assert until(p1, lambda m: m["type"] == "muted")[0]["muted"] is True
            assert said(p0, text="can you hear me?")["text"] == "can you hear me?"  # the author sees their own
            assert chat_of(p1) == []  # the muted player's words are not delivered
            said(p1, text="bye")
            assert [m["text"] for m in heard(p0)] == ["bye"]  # muting is one way
            # Reports: once per message per person; not one's own; only this game's players' room.
            p1.send(json.dumps({"type": "report", "id": rude["id"]}))
            assert until(p1, lambda m: m["type"] in ("reported", "error"))[0] == {"type": "reported", "id": rude["id"]}
            for what, code in [
                (rude["id"], "already_reported"),
                (rude["id"] + 1000, "no_message"),
                ("1", "bad_chat"),
            ]:
                p1.send(json.dumps({"type": "report", "id": what}))
                assert error_of(p1)["code"] == code, what
            p0.send(json.dumps({"type": "report", "id": rude["id"]}))
            assert error_of(p0)["code"] == "own_message"
            p1.send(json.dumps({"type": "mute", "muted": "yes"}))
            assert error_of(p1)["code"] == "bad_chat"
        # After a reload: still muted, and the muted player's messages are not in the history either.
        with seated(server, tokens[1]) as p1:
            history, _ = until(p1, lambda m: m["type"] == "chat")
            assert history["muted"] is True and [m["text"] for m in history["messages"]] == ["bye"]
            p1.send(json.dumps({"type": "mute", "muted": False}))
            until(p1, lambda m: m["type"] == "muted")
            with seated(server, tokens[0]) as p0:
                until(p0, lambda m: m["type"] == "watchers")
                said(p0, text="sorry")
                assert [m["text"] for m in heard(p1)] == ["sorry"]
    out = admin(server, "reports")
    assert out.returncode == 0, out.stderr
    line = next(line for line in out.stdout.splitlines() if "you will lose, idiot" in line)
    assert gid in line and "Ann (guest)" in line and "by Bob" in line and "players" in line, line
    assert "1 report" in out.stdout


def admin(server: Server, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "import sys; from koikoi.cli import main; sys.exit(main())", "admin", *args]
        + ["--database-url", server.database_url],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.limits(chat_burst=50)
def test_the_spectators_chat_needs_an_account_and_never_reaches_the_players(server: Server):
    with server.client() as ann, server.client() as bob, server.client() as kibitz, server.client() as lurker:
        game = friend_game(server, ann, bob)
        gid, tokens = game["game_id"], game["tokens"]
        assert signup(kibitz, "Kibitzer").status_code == 201
        with seated(server, tokens[0]) as p0, seated(server, tokens[1]) as p1:
            with watching(server, gid, kibitz) as k, watching(server, gid, lurker) as g:
                hello, _ = until(k, lambda m: m["type"] == "chat")
                assert hello["room"] == "spectators" and hello["can_chat"] is True
                assert until(g, lambda m: m["type"] == "chat")[0]["can_chat"] is False
                said(k, text="Ann should keep the crane")  # advice the players must not be sent
                got = heard(g)
                assert [(m["text"], m["name"], m["room"]) for m in got] == [
                    ("Ann should keep the crane", "Kibitzer", "spectators")
                ]
                # The players' own room is not the spectators': neither is sent the other's.
                players_message = said(p0, text="good luck")
                heard(p1)
                assert chat_of(k) == [] and chat_of(g) == []
                for p in (p0, p1):
                    sent = fence(p)
                    assert not any(m.get("room") == "spectators" for m in sent), sent
                    assert "Ann should keep the crane" not in json.dumps(sent)
                # Reports from a spectator: the spectators' room only.
                k.send(json.dumps({"type": "report", "id": got[0]["id"]}))
                assert error_of(k)["code"] == "own_message"
                k.send(json.dumps({"type": "report", "id": players_message["id"]}))
                assert error_of(k)["code"] == "no_message"
            # The spectators' chat is kept with the game; a player's table never asks for it.
            with seated(server, tokens[0]) as again:
                history, _ = until(again, lambda m: m["type"] == "chat")
                assert [m["text"] for m in history["messages"]] == ["good luck"]
        # A moderator disables the account: its messages are refused, even on a socket open before, and
        # the ones it wrote are no longer shown.
        with watching(server, gid, kibitz) as k:
            until(k, lambda m: m["type"] == "chat")
            assert admin(server, "disable", "Kibitzer").returncode == 0
            say(k, text="still here")
            error = error_of(k)
            assert error["code"] == "account_disabled", error
        with watching(server, gid, lurker) as g:
            history, _ = until(g, lambda m: m["type"] == "chat")
            assert history["messages"] == []


@pytest.mark.limits(chat_burst=50, chat_messages_per_game=3, spectator_chat_per_game=3, chat_messages_per_spectator=2)
def test_spectators_cannot_fill_the_players_chat_nor_their_own_alone(server: Server):
    with server.client() as ann, server.client() as bob, server.client() as kibitz, server.client() as other:
        gid, tokens = (lambda g: (g["game_id"], g["tokens"]))(friend_game(server, ann, bob))
        assert signup(kibitz, "Heckler").status_code == 201 and signup(other, "Critic").status_code == 201
        with seated(server, tokens[0]) as p0, seated(server, tokens[1]) as p1:
            with watching(server, gid, kibitz) as k, watching(server, gid, other) as o:
                for ws in (k, o):
                    until(ws, lambda m: m["type"] == "chat")
                # One spectator writes their share and no more: the room is not theirs alone.
                said(k, text="one")
                said(k, text="two")
                say(k, text="three")
                refused = error_of(k)
                assert refused["code"] == "chat_share_used" and "2 messages" in refused["message"], refused
                said(o, text="mine")
                say(o, text="more")  # the spectators' room now holds its 3
                refused = error_of(o)
                assert refused["code"] == "chat_full" and "spectators' chat holds 3" in refused["message"], refused
                # The players' room has a budget of its own: three spectators' messages silenced nobody.
                until(p0, lambda m: m["type"] == "chat")
                for text in ("hello", "good luck", "thanks"):
                    assert said(p0, text=text)["text"] == text
                say(p1, text="one too many")
                refused = error_of(p1)
                assert refused["code"] == "chat_full" and "players' chat holds 3" in refused["message"], refused
        store = Store(server.database_url)
        try:
            chat = ChatStore(store)
            kept = [(m.room, m.text) for m in chat.recent(gid, "players") + chat.recent(gid, "spectators")]
        finally:
            store.close()
        assert kept == [
            ("players", "hello"),
            ("players", "good luck"),
            ("players", "thanks"),
            ("spectators", "one"),
            ("spectators", "two"),
            ("spectators", "mine"),
        ]


def test_a_game_against_the_computer_has_no_players_chat(server: Server):
    with server.client() as ann:
        game = ann.post("/api/games", json={"opponent": "random", "rules": ONE_HAND}).json()
        with seated(server, game["token"]) as p0:
            hello, _ = until(p0, lambda m: m["type"] == "chat")
            assert hello["can_chat"] is False
            say(p0, text="hello computer")
            assert error_of(p0)["code"] == "no_chat"


# -- several processes --------------------------------------------------------------------------------------


@pytest.mark.server
@pytest.mark.skipif(not POSTGRES_URL, reason="several processes need PostgreSQL (KOIKOI_TEST_POSTGRES_URL)")
def test_a_spectator_on_another_process_follows_the_game_and_its_chat(tmp_path):
    from conftest import make_database

    url = make_database("postgresql", tmp_path)
    a = Server(url, tmp_path, "--limit", "signups_per_hour=50")
    b = Server(url, tmp_path, "--limit", "signups_per_hour=50")
    a.start()
    b.start()
    try:
        with a.client() as ann, a.client() as bob, b.client() as kibitz, a.client() as other:
            game = friend_game(a, ann, bob)
            gid, tokens = game["game_id"], game["tokens"]
            assert signup(kibitz, "Kibitz2").status_code == 201
            assert signup(other, "Other2").status_code == 201
            with seated(a, tokens[0]) as p0:
                until(p0, lambda m: m["type"] == "watchers" and m["n"] == 0)
                with watching(b, gid, kibitz) as k, watching(a, gid, other) as o:
                    # The player on process A is told of the spectator on process B.
                    until(p0, lambda m: m["type"] == "watchers" and m["n"] == 2)
                    first, _ = until(k, lambda m: m["type"] == "state")
                    assert first["state"]["seq"] == 0
                    # Moves stored through process A reach the spectator on B, each one.
                    with httpx.Client(base_url=a.url, timeout=30) as c:
                        for _ in range(6):
                            for t in tokens:
                                move(c, t)
                            now = c.get(f"/api/seat/{tokens[0]}").json()["seq"]
                            st, _ = until(k, lambda m, n_=now: m["type"] == "state" and m["state"]["seq"] >= n_)
                            truth = true_match(a, gid, st["state"]["seq"])
                            if not truth.is_over():
                                assert not cards_in(st["state"]) & hidden_of(truth)
                            if st["state"]["match_over"]:
                                break
                    # The spectators' chat crosses processes too; the player on A is not sent it.
                    said(k, text="from process B")
                    assert [m["text"] for m in heard(o)] == ["from process B"]
                    assert "from process B" not in json.dumps(fence(p0))
                # Both gone: the player is told nobody watches.
                until(p0, lambda m: m["type"] == "watchers" and m["n"] == 0)
    finally:
        a.stop(hard=False)
        b.stop(hard=False)


@pytest.mark.server
@pytest.mark.skipif(not POSTGRES_URL, reason="several processes need PostgreSQL (KOIKOI_TEST_POSTGRES_URL)")
def test_a_spectator_on_another_process_sees_who_is_away_and_the_resignation(tmp_path):
    from conftest import make_database

    url = make_database("postgresql", tmp_path)
    a, b = Server(url, tmp_path), Server(url, tmp_path)
    a.start()
    b.start()
    try:
        with a.client() as ann, a.client() as bob, b.client() as carl:
            game = friend_game(a, ann, bob, clock=SLOW)
            gid, tokens = game["game_id"], game["tokens"]
            frames: list[str] = []
            both_move(ann, tokens)  # (a resignation before both have moved is an abort)
            with watching(b, gid, carl) as ws:
                assert table_where(ws, frames, lambda st: True)["clock"]["control"] == SLOW
                # Bob comes and goes on process A: the spectator on B is told through the database.
                with seated(a, tokens[1]):
                    table_where(ws, frames, lambda x: x["away"] == [False, False])
                table_where(ws, frames, lambda x: x["away"] == [False, True])
                with seated(a, tokens[1]) as p1:
                    p1.send(json.dumps({"type": "resign"}))
                    until(p1, lambda m: m["type"] == "ended")
                st = table_where(ws, frames, lambda x: x["status"] == "finished")
            assert st["ending"] == {"reason": "resign", "winner": 0} and st["match_over"]
            audited(a, gid, frames)
    finally:
        a.stop(hard=False)
        b.stop(hard=False)
