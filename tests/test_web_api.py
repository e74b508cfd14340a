"""The web app's HTTP API and WebSocket, against a running server on a real database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Server, ws_json
from websockets.sync.client import connect

from koikoi.actions import KOIKOI, STOP, parse_action
from koikoi.cards import FULL_DECK, iter_cards
from koikoi.match import Match
from koikoi.records import GameRecord, replay
from koikoi.rules import RuleSet
from koikoi.web.store import Store


def create(client, opponent="random", preset="nintendo", **options) -> dict:
    r = client.post(
        "/api/games", json={"name": "Ann", "opponent": opponent, "rules": {"preset": preset, "options": options}}
    )
    assert r.status_code == 201, r.text
    return r.json()


def wait_turn(ws) -> dict:
    """Read messages until it is this seat's turn or the match is over; returns that state."""
    while True:
        msg = ws_json(ws)
        assert msg["type"] in ("state", "ack"), msg
        if msg["type"] == "state":
            st = msg["state"]
            if st["to_move"] or st["match_over"]:
                return st


def choose(st: dict) -> int:
    """A simple policy for tests: stop at once, else the first legal action."""
    legal = st["legal"]
    return STOP if STOP in legal else legal[0]


def true_match(server: Server, game_id: str) -> Match:
    """The real game, rebuilt from the database: what the server must never show in full."""
    store = Store(server.database_url)
    g = store.game(game_id)
    m = Match(RuleSet.from_dict(g.rules), seed=g.seed)
    for _seat, a in store.actions_of(game_id):
        m.apply_action(a)
    store.close()
    return m


def test_health_and_pages(server):
    with server.client() as c:
        health = c.get("/api/health").json()
        assert health["ok"] is True and health["worker"] == 0 and health["workers"] == 1
        assert health["database"]["reachable"] is True and "all" not in health
        everyone = c.get("/api/health?all=1").json()["all"]
        assert len(everyone) == 1 and everyone[0]["pid"] == health["pid"] and "all" not in everyone[0]
        assert c.get("/api/ready").json()["ready"] is True
        for path in ("/", "/rules", "/rules?preset=bga", "/replay"):
            r = c.get(path)
            assert r.status_code == 200, path
            assert "<html" in r.text


def test_a_whole_match_against_the_computer_hides_what_must_stay_hidden(server):
    with server.client() as c:
        game = create(c, "random", "cardavia", hand_bonus=0)  # one hand, never won at the deal
        seed = Store(server.database_url).game(game["game_id"]).seed
        with connect(f"{server.ws_url}/ws/{game['token']}") as ws:
            st = None
            seen_states = checked = 0
            while True:
                msg = ws_json(ws)
                if msg["type"] == "ack":
                    continue
                assert msg["type"] == "state"
                raw = json.dumps(msg)
                st = msg["state"]
                seen_states += 1
                # What seat 0 is sent never names a card of the opponent's hand or of the stock, nor the seed.
                truth = true_match(server, game["game_id"])
                if st["seq"] == len(truth.actions):
                    hidden = truth.hand.hands[1] | _stock_mask(truth)
                    shown = _cards_in(st)
                    assert not shown & hidden, "a hidden card was sent"
                    assert set(st["hand"]) == set(iter_cards(truth.hand.hands[0]))
                    assert st["opponent_hand_count"] == truth.hand.hands[1].bit_count()
                    checked += 1
                assert str(seed) not in raw
                assert "seed" not in st and "deck" not in raw and 'stock"' not in raw
                if st["match_over"]:
                    break
                if st["to_move"]:
                    ws.send(json.dumps({"type": "action", "action": choose(st), "seq": st["seq"]}))
        assert seen_states > 3 and checked > 2  # a short hand (a yaku stopped on early) sends few states
        assert st["outcome"]["scores"] == truth.scores
        listed = c.get("/api/games").json()["games"]
        assert [g["status"] for g in listed if g["game_id"] == game["game_id"]] == ["finished"]


def _stock_mask(m: Match) -> int:
    h = m.hand
    seen = h.hands[0] | h.hands[1] | h.table | h.piles[0] | h.piles[1] | (1 << h.pending if h.pending >= 0 else 0)
    return FULL_DECK & ~seen


def _cards_in(st: dict) -> int:
    ids = list(st["hand"]) + list(st["table"])
    for pile in st["piles"]:
        for cards in pile.values():
            ids += cards
    if st["drawn_card"] is not None:
        ids.append(st["drawn_card"])
    for e in st["events"]:
        ids += e["captured"] + ([e["card"]] if e["card"] is not None else [])
    mask = 0
    for c in ids:
        mask |= 1 << c
    return mask


def test_stale_illegal_and_malformed_messages_get_errors_and_change_nothing(server):
    with server.client() as c:
        game = create(c, "easy")
        with connect(f"{server.ws_url}/ws/{game['token']}") as ws:
            st = wait_turn(ws)
            seq = st["seq"]
            bad = [
                ("not json", "bad_message"),
                ("[1, 2]", "bad_message"),
                (json.dumps({"type": "dance"}), "bad_message"),
                (json.dumps({"type": "action", "action": "play pine-crane", "seq": seq}), "bad_message"),
                (json.dumps({"type": "action", "action": st["legal"][0]}), "bad_message"),
                (json.dumps({"type": "action", "action": True, "seq": seq}), "bad_message"),
                (json.dumps({"type": "action", "action": 10**30, "seq": seq}), "bad_message"),
                (json.dumps({"type": "action", "action": -300, "seq": seq}), "bad_message"),
                (json.dumps({"type": "action", "action": KOIKOI, "seq": seq}), "illegal"),
                (json.dumps({"type": "action", "action": st["legal"][0], "seq": seq - 1}), "stale"),
                (json.dumps({"type": "action", "action": st["legal"][0], "seq": seq + 5}), "stale"),
                ("x" * 10_000, "bad_message"),
            ]
            for text, code in bad:
                ws.send(text)
                msg = ws_json(ws)
                assert msg["type"] == "error" and msg["code"] == code, (text[:60], msg)
                assert msg["message"]
                if code == "stale":
                    assert msg["state"]["seq"] == seq
            ws.send(json.dumps({"type": "ping"}))
            assert ws_json(ws) == {"type": "pong"}
            assert len(true_match(server, game["game_id"]).actions) == seq
            # The connection still works: a legal action goes through.
            ws.send(json.dumps({"type": "action", "action": st["legal"][0], "seq": seq}))
            msg = ws_json(ws)
            assert msg["type"] == "state" and msg["state"]["seq"] == seq + 1
        # The same through HTTP.
        r = c.post(f"/api/seat/{game['token']}/action", content=b"{nope", headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and r.json()["error"] == "bad_message"
        r = c.post(
            f"/api/seat/{game['token']}/action",
            content=b'{"action": 0, "seq": 0}',
            headers={"Content-Type": "text/plain"},
        )
        assert r.status_code == 415 and r.json()["error"] == "bad_message"
        r = c.post(f"/api/seat/{game['token']}/action", json={"action": 0, "seq": 0})
        assert r.status_code in (400, 409) and r.json()["error"] in ("stale", "illegal", "not_your_turn")


def test_unknown_links_are_refused(server):
    with server.client() as c:
        for path in ("/api/seat/AAAAAAAAAAAAAAAAAAAAAAAA", "/api/seat/x"):
            r = c.get(path)
            assert r.status_code == 404, path
            assert r.json()["error"] == "bad_token"
        for path in ("/play/AAAAAAAAAAAAAAAAAAAAAAAA", "/invite/AAAAAAAAAAAAAAAAAAAAAAAA"):
            r = c.get(path, params={"lang": "en"})
            assert r.status_code == 404 and "No game has this link." in r.text, path
        assert c.get("/cards/48.svg").status_code == 404
        assert c.get("/cards/..%2Fapp.py.svg").status_code == 404
    with connect(f"{server.ws_url}/ws/AAAAAAAAAAAAAAAAAAAAAAAA") as ws:
        assert ws_json(ws)["code"] == "bad_token"


def test_table_options_are_checked(server):
    with server.client() as c:
        game = create(c, "easy", "traditional", hands=3, goko=12, sake_yaku="off")
        st = c.get(f"/api/seat/{game['token']}").json()
        assert st["rules"]["hands"] == 3 and st["rules"]["goko"] == 12 and st["rules"]["sake_yaku"] == "off"
        assert st["rules"]["name"] == "traditional (custom)"
        for options, word in [
            ({"goko": -1}, "goko"),
            ({"hands": "many"}, "hands"),
            ({"nonsense": 1}, "nonsense"),
            ({"sake_yaku": "sometimes"}, "sake_yaku"),
            ({"transfer": 1}, "transfer"),
            ({"goko": True}, "goko"),
        ]:
            r = c.post("/api/games", json={"opponent": "easy", "rules": {"preset": "nintendo", "options": options}})
            assert r.status_code == 422, options
            assert r.json()["error"] == "bad_rules" and word in r.json()["message"], r.json()
        r = c.post("/api/games", json={"opponent": "grandmaster"})
        assert r.status_code == 422 and r.json()["error"] == "bad_opponent"
        r = c.post("/api/games", json={"opponent": "easy", "rules": {"preset": "boardgame"}})
        assert r.status_code == 422 and r.json()["error"] == "bad_birth_months"
        r = c.post("/api/games", json={"opponent": "easy", "rules": {"preset": "boardgame"}, "birth_months": [3, 9]})
        assert r.status_code == 201
        r = c.post("/api/games", json={"opponent": "easy", "name": "x" * 41})
        assert r.status_code == 422 and r.json()["error"] == "bad_name"
        assert len(c.get("/api/games").json()["games"]) == 2


def test_friend_game_over_an_invitation(server):
    with server.client() as host, server.client() as guest:
        game = create(host, "friend")
        assert game["status"] == "waiting"
        token, invite = game["token"], game["invite_token"]
        st = host.get(f"/api/seat/{token}").json()
        assert st["status"] == "waiting" and st["invite_token"] == invite and st["legal"] == []
        # The host cannot take the other seat; a guest can, once.
        r = host.post(f"/api/invite/{invite}/join", json={"name": "Me again"})
        assert r.status_code == 409 and r.json()["error"] == "own_game"
        r = guest.post(f"/api/invite/{invite}/join", json={"name": "Bo"})
        assert r.status_code == 200
        guest_token = r.json()["token"]
        # The invitation is spent, and it never was a seat: the guest's seat has a token of its own.
        assert guest_token not in (invite, token) and r.json()["url"] == f"/play/{guest_token}"
        assert host.get(f"/api/seat/{invite}").status_code == 404
        assert guest.post(f"/api/invite/{invite}/join", json={"name": "Bo"}).json()["token"] == guest_token
        with server.client() as third:
            r = third.post(f"/api/invite/{invite}/join", json={"name": "Cy"})
            assert r.status_code == 410 and r.json()["error"] == "invite_used"
        assert guest_token not in json.dumps(host.get(f"/api/seat/{token}").json())
        tokens = {0: token, 1: guest_token}
        with connect(f"{server.ws_url}/ws/{token}") as ws0, connect(f"{server.ws_url}/ws/{guest_token}") as ws1:
            socks = {0: ws0, 1: ws1}
            states = {p: ws_json(socks[p])["state"] for p in (0, 1)}
            assert states[0]["players"][1]["name"] == "Bo" and states[1]["players"][0]["name"] == "Ann"
            hand_number = states[0]["hand_number"]
            for _ in range(60):
                mover = states[0]["current_player"]
                st = states[mover]
                assert st["to_move"] and not states[1 - mover]["to_move"]
                socks[mover].send(json.dumps({"type": "action", "action": choose(st), "seq": st["seq"]}))
                for p in (0, 1):
                    msg = ws_json(socks[p])
                    assert msg["type"] == "state", msg
                    states[p] = msg["state"]
                assert ws_json(socks[mover]) == {"type": "ack", "seq": states[0]["seq"]}
                if states[0]["hand_number"] != hand_number:
                    break
            else:
                pytest.fail("the hand did not end")
            # One hand, or two when the next was won at the deal.
            assert states[0]["results"] == states[1]["results"] and len(states[0]["results"]) >= 1
        assert {g["game_id"] for g in guest.get("/api/games").json()["games"]} == {game["game_id"]}
        assert tokens[1] == guest_token


def test_a_restart_mid_game_continues_exactly(server):
    with server.client() as c:
        game = create(c, "easy")
        with connect(f"{server.ws_url}/ws/{game['token']}") as ws:
            for _ in range(3):
                st = wait_turn(ws)
                ws.send(json.dumps({"type": "action", "action": choose(st), "seq": st["seq"]}))
            before = wait_turn(ws)
        server.restart()
        after = c.get(f"/api/seat/{game['token']}").json()
        assert after == before
        with connect(f"{server.ws_url}/ws/{game['token']}") as ws:
            st = ws_json(ws)["state"]
            assert st["seq"] == before["seq"]
            ws.send(json.dumps({"type": "action", "action": choose(st), "seq": st["seq"]}))
            assert ws_json(ws)["state"]["seq"] == st["seq"] + 1


def test_the_computer_moves_after_a_restart(server):
    """A game left with the computer to move (e.g. the server died while it thought) goes on at start."""
    with server.client() as c:
        game = create(c, "easy")
        store = Store(server.database_url)
        server.stop()
        g = store.game(game["game_id"])
        m = Match(RuleSet.from_dict(g.rules), seed=g.seed)
        # Play for the human until the computer is to move, writing straight to the database.
        seq = 0
        while m.current_player != 1:
            a = m.legal_actions()[0]
            m.apply_action(a)
            # The scores the moves make: a hand can end on these moves (won at the deal, say), and the
            # server checks a stored game's scores against its moves when it loads it.
            store.add_action(game["game_id"], seq, 0, a, status="playing", scores=(m.scores[0], m.scores[1]))
            seq += 1
        store.close()
        server.start()
        with connect(f"{server.ws_url}/ws/{game['token']}") as ws:
            st = wait_turn(ws)
            assert st["seq"] > seq and st["current_player"] == 0


def play_to_the_end(server, token: str) -> int:
    """Play the seat's game to its end over the socket, a legal move at each turn: how many moves it made."""
    moves = 0
    with connect(f"{server.ws_url}/ws/{token}") as ws:
        while True:
            st = wait_turn(ws)
            if st["match_over"]:
                return moves
            ws.send(json.dumps({"type": "action", "action": choose(st), "seq": st["seq"]}))
            moves += 1


def test_record_download_and_replay(server):
    with server.client() as c:
        game = create(c, "random", "cardavia", hand_bonus=0)  # no hand won at the deal
        gid, token = game["game_id"], game["token"]
        r = c.get(f"/api/games/{gid}/record", params={"token": token})
        assert r.status_code == 403 and r.json()["error"] == "not_finished"
        play_to_the_end(server, token)
        r = c.get(f"/api/games/{gid}/record", params={"token": "A" * 24})
        assert r.status_code == 404
        r = c.get(f"/api/games/{gid}/record", params={"token": token})
        assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
        rec = GameRecord.from_json(r.text)
        m = replay(rec)
        assert m.is_over() and m.scores == true_match(server, gid).scores
        data = c.post("/api/replay", content=r.content).json()
        assert len(data["frames"]) == len(m.actions) + 1
        assert data["frames"][-1]["results"], "the last step ends the hand"
        assert c.get(f"/api/games/{gid}/replay", params={"token": token}).json()["frames"] == data["frames"]
        r = c.post("/api/replay", content=b'{"format": "nonsense"}')
        assert r.status_code == 400 and r.json()["error"] == "bad_record"
        assert c.get(f"/replay/{gid}", params={"token": token}).status_code == 200


def test_hints_in_games_against_the_computer_only(server):
    with server.client() as c:
        game = create(c, "easy")
        with connect(f"{server.ws_url}/ws/{game['token']}") as ws:
            st = wait_turn(ws)
            ws.send(json.dumps({"type": "hint", "seq": st["seq"]}))
            msg = ws_json(ws)
            assert msg["type"] == "hint" and msg["seq"] == st["seq"]
            assert sorted(ch["action"] for ch in msg["choices"]) == sorted(st["legal"])
            # Every choice in the table's units: points to expect from the hand and, in a 12-hand
            # match, the chance of winning it; best first by that chance; each play with what it takes.
            assert all(isinstance(ch["points"], (int, float)) and abs(ch["points"]) < 200 for ch in msg["choices"])
            wins = [ch["win"] for ch in msg["choices"]]
            assert all(0 <= w <= 1 for w in wins) and wins == sorted(wins, reverse=True)
            table = set(st["table"])
            for ch in msg["choices"]:
                assert set(ch["captures"]) <= table
                if ch["action"] < 48:
                    assert {c // 4 for c in ch["captures"]} <= {ch["action"] // 4}
            # Asking again, twice at once, is answered from the same search.
            for _ in range(2):
                ws.send(json.dumps({"type": "hint", "seq": st["seq"]}))
            assert ws_json(ws) == msg and ws_json(ws) == msg
        friend = create(c, "friend")
        r = c.get(f"/api/seat/{friend['token']}/hint", params={"seq": 0})
        assert r.status_code == 400 and r.json()["error"] == "no_hints"


@pytest.mark.parametrize(
    "lang,word",
    [("en", "New table"), ("ja", 'lang="ja"'), ("ru", 'lang="ru"'), ("uk", 'lang="uk"'), ("vi", 'lang="vi"')],
)
def test_pages_in_every_language(sqlite_server, lang, word):
    with sqlite_server.client() as c:
        r = c.get("/", params={"lang": lang})
        assert word in r.text
        assert c.cookies.get("koikoi_lang") == lang
        assert f'lang="{lang}"' in c.get("/rules").text  # the choice is remembered
    with sqlite_server.client() as c:
        r = c.get("/", headers={"Accept-Language": f"{lang};q=0.9, xx;q=1.0"})
        assert f'lang="{lang}"' in r.text


def test_a_game_stored_by_an_older_engine_goes_on_under_its_rules_version(server):
    """A game started before rules version 2 (its stored rules carry no "rules_version") is rebuilt and
    finished under version 1: its stored moves include a turn that version 2 would have made a decision."""
    import sqlalchemy as sa

    from koikoi.web.schema import games as t_games

    data = json.loads((Path(__file__).parent / "golden" / "rules-v1" / "rain-ruins-no-stop.json").read_text())
    rec = GameRecord.from_dict(data)
    m = Match(rec.rules, seed=rec.seed, version=1)
    moves = []
    for name in data["hands"][0]["actions"]:
        moves.append((m.current_player, parse_action(name)))
        m.apply_action(moves[-1][1])
    store = Store(server.database_url)
    try:
        gid, tokens, _ = store.create_game(
            rules=rec.rules.to_dict(),
            seed=rec.seed,
            opponent="friend",
            ai_seed=0,
            status="playing",
            seat_specs=[(0, "human", "Ann", None), (1, "human", "Bob", None)],
        )
        with store.engine.begin() as conn:  # the row as the older engine wrote it
            conn.execute(sa.update(t_games).where(t_games.c.id == gid).values(rules=json.dumps(rec.rules.to_dict())))
        assert store.game(gid).rules_version == 1
        for seq, (seat, action) in enumerate(moves[:-1]):
            store.add_action(gid, seq, seat, action, status="playing", scores=(0, 0))
    finally:
        store.close()
    seat, last = moves[-1]
    with server.client() as c, connect(f"{server.ws_url}/ws/{tokens[seat]}") as ws:
        st = ws_json(ws)["state"]
        assert st["seq"] == len(moves) - 1 and st["legal"] and last in st["legal"]
        ws.send(json.dumps({"type": "action", "action": last, "seq": st["seq"]}))
        st = wait_turn(ws)
        assert st["match_over"]
        r = c.get(f"/api/games/{gid}/record", params={"token": tokens[seat]})
        assert r.status_code == 200, r.text
        got = GameRecord.from_json(r.text)
    assert got.metadata["rules_version"] == 1
    assert got.hands[0].result == data["hands"][0]["result"]
    replay(got)
