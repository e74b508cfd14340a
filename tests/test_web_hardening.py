"""The second attack run's findings, against a real ``koikoi serve`` on a real socket: refused sockets are
not held, wrong types anywhere get a 422 naming the field and never a 500, every response carries the
security headers (a 500 and the connection guard's answers too), replays and records are rate-limited
and written out off the event loop, HTTP actions are rate-limited, browser ids are the server's own, and
a client cannot flood the log.

All traffic goes to 127.0.0.x and every loop is bounded.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import socket
import time

import httpx
import pytest
from conftest import Server, limit_args
from test_web_accounts import PASSWORD
from test_web_security import check_security_headers, choose, create, error_of, wait_turn
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

# -- helpers ---------------------------------------------------------------------------------------------


def new_server(tmp_path, *extra: str, **limits: object) -> Server:
    s = Server(str(tmp_path / "games.db"), tmp_path, *limit_args(**limits), *extra)
    s.start()
    return s


@pytest.fixture
def served(request, tmp_path):
    """A function-scoped SQLite server with the test's ``limits`` marker; its log must hold no traceback."""
    marker = request.node.get_closest_marker("limits")
    s = new_server(tmp_path, **(marker.kwargs if marker else {}))
    yield s
    s.stop(hard=False)
    log = s.log.read_text(errors="replace")
    assert "Traceback" not in log, log[-4000:]


def handshake(port: int, path: str, source: str = "127.0.0.1") -> socket.socket:
    """A raw WebSocket opening handshake on ``path``, sent and not read."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    return sock


def text_frame(payload: bytes) -> bytes:
    """A masked text frame (client to server) carrying ``payload`` as it is, valid UTF-8 or not."""
    mask = os.urandom(4)
    assert len(payload) < 126
    return bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def read_until_closed(sock: socket.socket, deadline: float) -> bytes | None:
    """What the server sent until it closed the connection; None if it was still open at ``deadline``."""
    out = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            return out
        except TimeoutError:
            return None
        if not chunk:
            return out
        out += chunk


def finished_game(server: Server, client: httpx.Client) -> tuple[str, str]:
    """A one-hand game against the random player, played to its end over the socket: (game id, token)."""
    game = create(client, "random", "cardavia", hand_bonus=0, hands=1)
    with connect(f"{server.ws_url}/ws/{game['token']}") as ws:
        for _ in range(100):
            st = wait_turn(ws)
            if st["match_over"]:
                return game["game_id"], game["token"]
            ws.send(json.dumps({"type": "action", "action": choose(st), "seq": st["seq"]}))
    pytest.fail("the match did not end")


# -- refused sockets ---------------------------------------------------------------------------------------


@pytest.mark.limits(sockets_per_address=8, connections_per_address=8, max_connections=40)
def test_refused_sockets_are_closed_at_once_and_deny_no_one_else(served):
    """200 sockets with unknown tokens from one address, never read and never closed by the client: each is
    told why (4404, or 4429 over the address's count) and closed by the server without waiting for the
    client's closing handshake, they count against their address meanwhile, and another address's
    requests all go through (the server allows only 40 connections in all: held for uvicorn's 10 s each,
    the flood would have filled them)."""
    s = served
    flood = []
    others: list[int] = []
    for i in range(200):
        try:
            flood.append(handshake(s.port, f"/ws/{'A' * 20}{i:04d}"))
        except OSError:
            pass  # refused at once: fine too
        if i % 20 == 0:
            with httpx.Client(base_url=s.url, transport=httpx.HTTPTransport(local_address="127.0.0.2")) as c:
                others.append(c.get("/api/health").status_code)
    assert others == [200] * 10, others
    deadline = time.monotonic() + 5  # uvicorn alone would hold each for 10 s, waiting for the client
    answers = [read_until_closed(k, deadline) for k in flood]
    for k in flood:
        k.close()
    assert all(a is not None for a in answers), f"{sum(a is None for a in answers)} refused sockets still open"
    told = [a for a in answers if a and b"101 Switching Protocols" in a]
    # The error, then a close frame: the token is unknown, or the address is over its count while the
    # lookups of its other sockets are still on their way to the database.
    assert told and all((b"bad_token" in a or b"too_many_sockets" in a) and b"\x88" in a for a in told)
    assert any(b"bad_token" in a for a in told)
    # The address's count came back: a real socket from it is taken.
    with httpx.Client(base_url=s.url) as c:
        game = create(c, "friend")
    with connect(f"{s.ws_url}/ws/{game['token']}") as ws:
        assert json.loads(ws.recv(timeout=10))["type"] == "state"


@pytest.mark.limits(sockets_per_address=3)
def test_sockets_over_the_address_limit_are_refused_with_the_limit(served):
    s = served
    with httpx.Client(base_url=s.url) as c:
        game = create(c, "friend")
    with contextlib.ExitStack() as stack:
        held = [stack.enter_context(connect(f"{s.ws_url}/ws/{game['token']}")) for _ in range(3)]
        for ws in held:
            assert json.loads(ws.recv(timeout=10))["type"] == "state"
        # A fourth, and a refused one with an unknown token: both refused for the address's limit.
        for path in (f"/ws/{game['token']}", "/ws/AAAAAAAAAAAAAAAAAAAAAAAA"):
            k = handshake(s.port, path)
            got = read_until_closed(k, time.monotonic() + 5)
            k.close()
            assert got is not None and b"too_many_sockets" in got and b"at most 3 connections" in got, got


# -- wrong types, 500s and headers ---------------------------------------------------------------------------

BAD_VALUES = [None, True, False, 0, -1, 1.5, 10**30, -(10**30), "", "x", "\u0000", [], [1], {}, {"a": 1}]


def _field_cases(token: str) -> list[tuple[str, str, object]]:
    """(path, the field's name as a message names it, body with a placeholder) for every field of every body;
    ``{invite}`` in a path stands for a friend's invitation not yet taken."""
    v = "VALUE"
    return [
        ("/api/rules/check", "rules", {"rules": v}),
        ("/api/rules/check", "preset", {"rules": {"preset": v}}),
        ("/api/rules/check", "options", {"rules": {"options": v}}),
        ("/api/rules/check", "hands", {"rules": {"options": {"hands": v}}}),
        ("/api/rules/check", "koikoi", {"rules": {"options": {"koikoi": v}}}),
        ("/api/rules/check", "dealer_selection", {"rules": {"options": {"dealer_selection": v}}}),
        ("/api/games", "opponent", {"opponent": v}),
        ("/api/games", "name", {"opponent": "friend", "name": v}),
        ("/api/games", "preset", {"opponent": "friend", "rules": {"preset": v}}),
        ("/api/games", "hands", {"opponent": "friend", "rules": {"options": {"hands": v}}}),
        (
            "/api/games",
            "birth month",
            {"opponent": "friend", "rules": {"options": {"dealer_selection": "birth_month"}}, "birth_months": v},
        ),
        ("/api/invite/{invite}/join", "name", {"name": v}),
        (f"/api/seat/{token}/action", "action", {"action": v, "seq": 0}),
        (f"/api/seat/{token}/action", "seq", {"action": 0, "seq": v}),
    ]


def _fill(body: object, value: object) -> object:
    if body == "VALUE":
        return value
    if isinstance(body, dict):
        return {k: _fill(x, value) for k, x in body.items()}
    return body


@pytest.mark.limits(games_per_minute=10_000, open_games_per_browser=10_000, http_action_burst=10_000)
def test_wrong_types_anywhere_are_422_naming_the_field_never_500(served):
    s = served
    with httpx.Client(base_url=s.url) as c, httpx.Client(base_url=s.url) as guest:
        friend = create(c, "friend")
        game = create(c, "random")
        seen: dict[int, int] = {}
        for template, field, body in _field_cases(game["token"]):
            for value in BAD_VALUES:
                sent = _fill(body, value)
                path = template.replace("{invite}", friend["invite_token"])
                who = guest if "/invite/" in path else c
                r = who.post(path, json=sent)
                seen[r.status_code] = seen.get(r.status_code, 0) + 1
                assert r.status_code < 500, (path, sent, r.text[:300])
                check_security_headers(r)
                if r.status_code >= 400:
                    answer = r.json()
                    assert answer["error"] and answer["message"], (path, sent, answer)
                if r.status_code == 422:
                    assert field in r.json()["message"], (path, sent, r.json())
                if r.status_code == 200 and "/join" in path:  # a name that was fine took the seat: a new one
                    friend = create(c, "friend")
        # The same for query values.
        for value in ("x", "1.5", "", "[]", "9" * 40):
            for r in (
                c.get(f"/api/seat/{game['token']}/hint", params={"seq": value}),
                c.get("/api/games", params={"before": value}),
                c.get(f"/api/games/{game['game_id']}/replay", params={"token": value}),
            ):
                assert r.status_code < 500, (r.request.url, r.text[:300])
                check_security_headers(r)
        assert seen.get(422, 0) > 50, seen
        r = c.get(f"/api/seat/{game['token']}/hint", params={"seq": "x"})
        assert error_of(r, 422, "bad_message").startswith("seq")


def test_a_500_is_json_with_the_security_headers_and_closes_the_connection(tmp_path):
    """No input gets a 500 (the test above); should a bug of ours raise, the answer is still ours: JSON,
    the security headers, ``Connection: close``, and the traceback only in the server's log."""
    from fastapi.testclient import TestClient

    from koikoi.web.app import create_app

    app = create_app(str(tmp_path / "games.db"))

    def broken(*_a: object, **_k: object) -> None:
        raise RuntimeError("a bug of ours, with a secret: 1234")

    app.state.service.games_of = broken
    with TestClient(app, raise_server_exceptions=False) as c:
        r = c.get("/api/games")
    assert r.status_code == 500
    assert r.json() == {"error": "server", "message": "the server could not handle that request"}
    assert r.headers["connection"] == "close"
    check_security_headers(r)


@pytest.mark.server
def test_the_connection_guard_answers_with_the_security_headers(tmp_path):
    s = new_server(tmp_path, header_timeout=1, header_bytes=2048, connections_per_address=2)
    try:
        answers = []
        k = socket.create_connection(("127.0.0.1", s.port), timeout=10)  # 408: sends nothing
        answers.append(read_until_closed(k, time.monotonic() + 8))
        k.close()
        k = socket.create_connection(("127.0.0.1", s.port), timeout=10)  # 431: headers too large
        k.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 4000 + b"\r\n\r\n")
        answers.append(read_until_closed(k, time.monotonic() + 8))
        k.close()
        held = [socket.create_connection(("127.0.0.1", s.port), timeout=10) for _ in range(2)]
        k = socket.create_connection(("127.0.0.1", s.port), timeout=10)  # 429: a third connection
        answers.append(read_until_closed(k, time.monotonic() + 8))
        for h in (*held, k):
            h.close()
        statuses = []
        for a in answers:
            assert a is not None
            head = a.split(b"\r\n\r\n", 1)[0].decode().lower()
            statuses.append(int(head.split()[1]))
            assert "connection: close" in head
            assert "content-security-policy: default-src 'self'" in head and "frame-ancestors 'none'" in head
            assert "x-frame-options: deny" in head and "referrer-policy: no-referrer" in head
        assert statuses == [408, 431, 429]
    finally:
        s.stop(hard=False)


@pytest.mark.server
def test_no_trailing_slash_redirect_built_from_the_host_header(tmp_path):
    s = new_server(tmp_path)
    try:
        r = httpx.get(s.url + "/api/games/", headers={"Host": "evil.example"})
        assert r.status_code == 404 and "location" not in r.headers
        check_security_headers(r)
    finally:
        s.stop(hard=False)


# -- replays, records and HTTP actions ----------------------------------------------------------------------


@pytest.mark.limits(replays_per_minute=4)
def test_replays_and_records_are_written_out_once_and_rate_limited(served):
    s = served
    with httpx.Client(base_url=s.url) as c:
        gid, token = finished_game(s, c)
        r = c.get(f"/api/games/{gid}/replay", params={"token": token})
        assert r.status_code == 200, r.text
        replay = r.json()
        check_security_headers(r)
        rec = c.get(f"/api/games/{gid}/record", params={"token": token})
        assert rec.status_code == 200
        assert replay["record"] == rec.json()
        actions = sum(len(h["actions"]) for h in replay["record"]["hands"])
        assert len(replay["frames"]) == actions + 1 and replay["frames"][0]["action"] is None
        # The same again: the kept copy, the same bytes.
        again = c.get(f"/api/games/{gid}/replay", params={"token": token})
        assert again.content == r.content
        assert c.get(f"/api/games/{gid}/record", params={"token": token}).status_code == 200  # the fourth
        # The fifth within the minute, whichever of the three it is, is refused and says so.
        for ask in (
            lambda: c.get(f"/api/games/{gid}/replay", params={"token": token}),
            lambda: c.get(f"/api/games/{gid}/record", params={"token": token}),
            lambda: c.post("/api/replay", content=rec.content),
        ):
            message = error_of(ask(), 429, "rate_limited")
            assert "at most 4 replays and records a minute" in message
    # Another address is not held up by this one's limit.
    other = httpx.Client(base_url=s.url, transport=httpx.HTTPTransport(local_address="127.0.0.2"))
    with other:
        assert other.get(f"/api/games/{gid}/replay", params={"token": token}).status_code == 200


@pytest.mark.limits(http_action_burst=3, http_actions_per_second=0.1)
def test_http_actions_are_rate_limited_per_address(served):
    s = served
    with httpx.Client(base_url=s.url) as c:
        game = create(c, "random")
        for _ in range(3):  # the burst: answered (here with the game's own refusal)
            r = c.post(f"/api/seat/{game['token']}/action", json={"action": 0, "seq": 12345})
            assert r.status_code in (400, 409), r.text
        message = error_of(
            c.post(f"/api/seat/{game['token']}/action", json={"action": 0, "seq": 0}), 429, "rate_limited"
        )
        assert "at most 0.1 actions a second over HTTP" in message
        # Over the socket, the socket's own rate applies: the player is not locked out.
        with connect(f"{s.ws_url}/ws/{game['token']}") as ws:
            assert json.loads(ws.recv(timeout=10))["type"] == "state"
            ws.send(json.dumps({"type": "ping"}))
            # The computer may move meanwhile: its table comes first, then the answer to the ping.
            reply = json.loads(ws.recv(timeout=10))
            while reply["type"] == "state":
                reply = json.loads(ws.recv(timeout=10))
            assert reply == {"type": "pong"}


# -- browser ids -------------------------------------------------------------------------------------------


def _issued(r: httpx.Response) -> str | None:
    m = re.search(r"koikoi_id=([^;]+)", r.headers.get("set-cookie", ""))
    return m.group(1) if m else None


@pytest.mark.server
def test_a_browser_id_the_server_did_not_sign_is_replaced_never_adopted(tmp_path):
    s = new_server(tmp_path)
    try:
        planted = "chosenbyattacker123"
        with httpx.Client(base_url=s.url, headers={"Cookie": f"koikoi_id={planted}"}) as victim:
            r = victim.post("/api/games", json={"opponent": "friend", "name": "Victim"})
            assert r.status_code == 201
            issued = _issued(r)
            assert issued and issued != planted and not issued.startswith(planted)
        with httpx.Client(base_url=s.url, headers={"Cookie": f"koikoi_id={planted}"}) as planter:
            assert planter.get("/api/games").json()["games"] == []
        # Signed ids work; a signature of another id, or a changed one, does not.
        with httpx.Client(base_url=s.url, headers={"Cookie": f"koikoi_id={issued}"}) as owner:
            r = owner.get("/api/games")
            assert [g["opponent_name"] for g in r.json()["games"]] == ["Friend"] and _issued(r) is None
        browser, signature = issued.split(".")
        for forged in (f"{planted}.{signature}", f"{browser}.{signature[::-1]}", f"{browser}.", browser + "x"):
            with httpx.Client(base_url=s.url, headers={"Cookie": f"koikoi_id={forged}"}) as c:
                r = c.get("/api/games")
                assert r.json()["games"] == [] and _issued(r) not in (None, forged), forged
    finally:
        s.stop(hard=False)


@pytest.mark.server
def test_a_bare_id_from_before_signing_is_adopted_once(tmp_path):
    """A browser that held games before ids were signed keeps its lobby: its bare id is adopted (and
    signed) the first time it is shown; shown again later, by anyone, it is replaced."""
    import sqlalchemy as sa

    s = new_server(tmp_path)
    try:
        with s.client() as c:
            create(c, "friend")
            issued = next(v for k, v in c.cookies.items() if k == "koikoi_id")
        bare = "legacybrowser1234"
        engine = sa.create_engine(f"sqlite:///{tmp_path / 'games.db'}")
        with engine.begin() as conn:  # the game as an older server stored it: owned by a bare id
            conn.execute(
                sa.text("UPDATE seats SET owner = :bare WHERE owner = :id"), {"bare": bare, "id": issued.split(".")[0]}
            )
        engine.dispose()
        with httpx.Client(base_url=s.url, headers={"Cookie": f"koikoi_id={bare}"}) as first:
            r = first.get("/api/games")
            assert len(r.json()["games"]) == 1
            assert _issued(r).startswith(bare + ".")
        with httpx.Client(base_url=s.url, headers={"Cookie": f"koikoi_id={bare}"}) as second:
            r = second.get("/api/games")
            assert r.json()["games"] == [] and not _issued(r).startswith(bare)
        # A bare id that holds no seat is never adopted.
        with httpx.Client(base_url=s.url, headers={"Cookie": "koikoi_id=nobodyhasthis123"}) as c:
            assert not _issued(c.get("/api/games")).startswith("nobodyhasthis123")
    finally:
        s.stop(hard=False)


def _set(r: httpx.Response) -> dict[str, str]:
    """The cookies a response sets: name -> the whole Set-Cookie line."""
    return {line.split("=", 1)[0]: line for line in r.headers.get_list("set-cookie")}


@pytest.mark.server
def test_over_https_the_credentials_are_host_cookies(tmp_path):
    s = new_server(tmp_path, "--forwarded-allow-ips", "127.0.0.1", signups_per_hour=100)
    https = {"X-Forwarded-Proto": "https"}  # as a TLS-terminating proxy forwards the request
    try:
        plain = httpx.get(s.url + "/api/health", params={"lang": "ja"})
        assert set(_set(plain)) == {"koikoi_id", "koikoi_lang"}
        assert all("secure" not in c.lower() for c in _set(plain).values())
        # Over HTTPS the browser id and the session are __Host- cookies: Secure, Path=/, no Domain, so that
        # neither a sibling subdomain nor a page over plain HTTP can set one for this site.
        proxied = httpx.get(s.url + "/api/health", params={"lang": "ja"}, headers=https)
        cookies = _set(proxied)
        assert set(cookies) == {"__Host-koikoi_id", "koikoi_lang"}, cookies
        assert all("; secure" in c.lower() and "path=/" in c.lower() for c in cookies.values()), cookies
        assert all("domain" not in c.lower() for c in cookies.values()), cookies
        browser = cookies["__Host-koikoi_id"].split(";")[0].split("=", 1)[1]
        jar = {**https, "Cookie": f"__Host-koikoi_id={browser}"}
        r = httpx.post(s.url + "/api/account/signup", json={"name": "Ann", "password": PASSWORD}, headers=jar)
        assert r.status_code == 201, r.text
        line = _set(r)["__Host-koikoi_session"]
        assert "httponly" in line.lower() and "; secure" in line.lower() and "domain" not in line.lower(), line
        session = line.split(";")[0].split("=", 1)[1]
        signed_in = {**https, "Cookie": f"__Host-koikoi_id={browser}; __Host-koikoi_session={session}"}
        assert httpx.get(s.url + "/api/account", headers=signed_in).json()["name"] == "Ann"
        # The plain name is not read over HTTPS (anyone on the network could have set it), and the
        # response lets it go.
        planted = {**https, "Cookie": f"koikoi_session={session}"}
        r = httpx.get(s.url + "/api/account", headers=planted)
        assert r.status_code == 401 and 'koikoi_session=""' in _set(r).get("koikoi_session", ""), r.headers
        # Sign-out ends the __Host- cookie.
        r = httpx.post(s.url + "/api/account/logout", headers=signed_in)
        assert r.status_code == 200 and "__Host-koikoi_session" in _set(r)
        assert httpx.get(s.url + "/api/account", headers=signed_in).status_code == 401
    finally:
        s.stop(hard=False)


@pytest.mark.server
def test_two_cookies_of_one_name_are_refused_and_origins_must_match_the_scheme(tmp_path):
    s = new_server(tmp_path, "--forwarded-allow-ips", "127.0.0.1")
    try:
        with httpx.Client(base_url=s.url) as c:
            create(c, "friend")
            mine = c.cookies["koikoi_id"]
        other = httpx.get(s.url + "/api/health").cookies["koikoi_id"]
        # Which of two cookies of one name a server reads would be up to the order a browser sends them
        # in, and one of them planted (by a sibling subdomain, with its own Domain): refused, never read.
        for cookie in (f"koikoi_id={mine}; koikoi_id={other}", f"koikoi_id={other}; lang=x; koikoi_id={mine}"):
            r = httpx.get(s.url + "/api/games", headers={"Cookie": cookie})
            assert r.status_code == 400 and r.json()["error"] == "two_cookies", r.text
            assert "two cookies named 'koikoi_id'" in r.json()["message"]
            assert "set-cookie" not in r.headers  # nothing was issued, nothing changed
        page = httpx.get(s.url + "/?lang=en", headers={"Cookie": "koikoi_session=a; koikoi_session=b"})
        assert page.status_code == 400 and "cookie twice" in page.text and "<html" in page.text.lower()
        r = httpx.get(
            s.url + "/api/games", headers={"Cookie": f"__Host-koikoi_id={mine}", "X-Forwarded-Proto": "https"}
        )
        assert r.status_code == 200
        two = {"Cookie": f"__Host-koikoi_id={mine}; __Host-koikoi_id={other}", "X-Forwarded-Proto": "https"}
        assert httpx.get(s.url + "/api/games", headers=two).json()["error"] == "two_cookies"
        # Other sites' cookies on the same host may share a name among themselves: not ours to judge.
        r = httpx.get(s.url + "/api/games", headers={"Cookie": f"theirs=1; theirs=2; koikoi_id={mine}"})
        assert r.status_code == 200 and len(r.json()["games"]) == 1
        # A socket's opening is read the same way.
        with connect(
            f"{s.ws_url}/ws/lobby", additional_headers={"Cookie": f"koikoi_id={mine}; koikoi_id={mine}"}
        ) as ws:
            msg = json.loads(ws.recv(timeout=10))
            assert msg["code"] == "two_cookies", msg
            with pytest.raises(ConnectionClosed):
                ws.recv(timeout=10)
        # The Origin check compares the scheme too: a page of this very host over plain HTTP (which anyone
        # on the network can write) does not act for a player of the HTTPS site.
        host = s.url.split("://", 1)[1]
        for origin, status in ((f"http://{host}", 403), (f"https://{host}", 201)):
            r = httpx.post(
                s.url + "/api/games",
                json={"opponent": "friend", "name": "Ann"},
                headers={"Origin": origin, "X-Forwarded-Proto": "https", "Cookie": f"__Host-koikoi_id={mine}"},
            )
            assert r.status_code == status, (origin, r.text)
        r = httpx.post(s.url + "/api/games", json={"opponent": "friend"}, headers={"Origin": f"https://{host}"})
        assert r.status_code == 403 and r.json()["error"] == "bad_origin"  # the other way round, over HTTP
    finally:
        s.stop(hard=False)


@pytest.mark.server
def test_a_browser_id_moves_to_its_host_cookie_once(tmp_path):
    """A server that went from plain HTTP (or an older version) to __Host- names over HTTPS: a browser whose
    plain-named id holds a seat keeps its games, once; the same plain id shown again is replaced."""
    s = new_server(tmp_path, "--forwarded-allow-ips", "127.0.0.1")
    https = {"X-Forwarded-Proto": "https"}
    try:
        with httpx.Client(base_url=s.url) as c:
            create(c, "friend")
            plain_id = c.cookies["koikoi_id"]
        r = httpx.get(s.url + "/api/games", headers={**https, "Cookie": f"koikoi_id={plain_id}"})
        assert len(r.json()["games"]) == 1
        cookies = _set(r)
        assert cookies["__Host-koikoi_id"].startswith(f"__Host-koikoi_id={plain_id};"), cookies
        assert 'koikoi_id=""' in cookies["koikoi_id"]  # the plain one is let go
        r = httpx.get(s.url + "/api/games", headers={**https, "Cookie": f"koikoi_id={plain_id}"})
        assert r.json()["games"] == [] and not _set(r)["__Host-koikoi_id"].startswith(f"__Host-koikoi_id={plain_id}")
    finally:
        s.stop(hard=False)


# -- the log ----------------------------------------------------------------------------------------------


@pytest.mark.server
def test_a_client_cannot_flood_the_log(tmp_path):
    s = new_server(tmp_path, messages_per_second=1000, message_burst=1000)
    try:
        with httpx.Client(base_url=s.url) as c:
            game = create(c, "friend")
        start = s.log.stat().st_size
        # Bad messages on one socket: one line when it closes, with the address and the counts.
        with connect(f"{s.ws_url}/ws/{game['token']}") as ws:
            ws.recv(timeout=10)
            for _ in range(25):
                ws.send("not json")
                assert json.loads(ws.recv(timeout=10))["code"] == "bad_message"
        deadline = time.monotonic() + 10
        while "25 malformed" not in s.log.read_text(errors="replace") and time.monotonic() < deadline:
            time.sleep(0.05)
        log = s.log.read_bytes()[start:].decode(errors="replace")
        lines = [x for x in log.splitlines() if "malformed" in x]
        assert len(lines) == 1 and "client 127.0.0.1: 25 malformed messages" in lines[0], log
        # Text frames that are not UTF-8, on 200 connections: no traceback, one line at most per connection,
        # and no more lines than the log's own rate lets through.
        start = s.log.stat().st_size
        t0 = time.monotonic()
        for _ in range(200):
            k = handshake(s.port, f"/ws/{game['token']}")
            opened = b""
            while b'"state"' not in opened:  # uvicorn drops frames sent before the app accepts the socket
                chunk = k.recv(65536)
                assert chunk, opened
                opened += chunk
            k.sendall(text_frame(b'{"type": "ping", "x": "\xff\xfe"}'))
            assert read_until_closed(k, time.monotonic() + 10) is not None
            k.close()
        took = time.monotonic() - t0
        time.sleep(0.5)
        log = s.log.read_bytes()[start:].decode(errors="replace")
        assert "Traceback" not in log, log[-3000:]
        lines = [x for x in log.splitlines() if x.strip()]
        utf8 = [x for x in lines if "UTF-8" in x]
        assert utf8 and all("client 127.0.0.1:" in x for x in utf8), lines[:5]
        assert len(lines) <= 20 + 5 * (took + 1) + 2, (len(lines), took)
        assert len(log) < 20_000
    finally:
        s.stop(hard=False)
