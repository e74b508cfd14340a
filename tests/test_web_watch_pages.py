"""Spectators and chat in Chromium, against a real server (docs/web.md, "Spectators", "Chat"): a spectator
follows a whole hand and every frame its page is sent holds nothing hidden; a clock ticking down and
running out, and a resignation in five languages on a phone, as a spectator sees them; two players chat,
a hostile message shows as text and a 10 KB one is refused; mute and report; a private game refused to a
spectator; a spectator on a second PostgreSQL process; the spectator's page and the chat on a phone in
five languages."""

from __future__ import annotations

import json
import re

import httpx
import pytest
from conftest import POSTGRES_URL, Server
from playwright.sync_api import Page, expect
from test_web_browser import new_page, wait_js
from test_web_watch import (
    ONE_HAND,
    QUICK,
    SLOW,
    admin,
    audited,
    both_move,
    cards_in,
    friend_game,
    hidden_of,
    move,
    seated,
    true_match,
    until,
)

from koikoi.web.i18n import LANGUAGES, Translator
from koikoi.web.store import Store

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


@pytest.fixture
def web(sqlite_server):
    return sqlite_server


@pytest.fixture
def clocked(tmp_path):
    """A server that offers a test-only quick clock besides the standard ones (koikoi serve --time-control)."""
    s = Server(str(tmp_path / "games.db"), tmp_path, "--time-control", QUICK)
    s.start()
    yield s
    s.stop(hard=False)


def frames_of(page: Page) -> list[str]:
    """Every text frame the page's sockets receive from now on (register before the page loads)."""
    got: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: got.append(str(payload))))
    return got


def check_frames(server: Server, gid: str, frames: list[str]) -> int:
    """Every state a spectator was sent names no card of either hand or of the stock, and no seed; returns
    how many were checked against the game as it was then."""
    seed = str(Store(server.database_url).game(gid).seed)
    checked = 0
    for raw in frames:
        assert seed not in raw and "seed" not in raw and "invite_token" not in raw
        msg = json.loads(raw)
        if msg.get("type") != "state":
            assert msg["type"] in ("chat", "watchers", "pong"), msg
            continue
        st = msg["state"]
        assert st["hand"] == [] and st["legal"] == [] and st["stakes"] is None and st["spectator"] is True
        truth = true_match(server, gid, st["seq"])
        if not truth.is_over():
            assert not cards_in(st) & hidden_of(truth), f"a hidden card was sent at move {st['seq']}"
            checked += 1
    return checked


def play_following(server: Server, tokens: list[str], spectator: Page) -> None:
    """Both players move over HTTP, each move once the spectator's page has shown the last one."""
    with httpx.Client(base_url=server.url, timeout=30) as c:
        for _ in range(300):
            views = [move(c, t) for t in tokens]
            if any(v["match_over"] for v in views):
                return
            seq = max(v["seq"] for v in views)
            wait_js(spectator, f"Number(document.body.dataset.seq) >= {seq}")
    pytest.fail("the match did not end")


def test_a_spectator_follows_a_whole_hand_and_is_sent_nothing_hidden(browser, web):  # noqa: F811
    with web.client() as ann, web.client() as bob:
        game = friend_game(web, ann, bob)
    gid, tokens = game["game_id"], game["tokens"]
    page = new_page(browser)
    frames = frames_of(page)
    page.goto(f"{web.url}/watch/{gid}?lang=en&speed=0.3")  # the cards move, quickly
    expect(page.locator("#status")).to_contain_text("to move")
    # Nothing to act on, and no hand: both hands are counts.
    expect(page.locator("#hand")).to_be_hidden()
    assert page.locator("#table-wrap button.card").count() == 0
    expect(page.locator("#hint-button")).to_be_hidden()
    expect(page.locator("#declare-button")).to_be_hidden()
    expect(page.locator("#resume-box")).to_be_hidden()
    expect(page.locator("#side-0 .hand-count")).to_contain_text("8 cards in hand")
    expect(page.locator("#side-1 .hand-count")).to_contain_text("8 cards in hand")
    expect(page.locator("#side-0 .who")).to_contain_text("Ann")
    expect(page.locator("#side-1 .who")).to_contain_text("Bob")
    expect(page.locator("#watchers")).to_have_text("1 watching")
    play_following(web, tokens, page)
    # The end: who won, and the replay, public now, with both hands open.
    page.wait_for_selector("dialog[open]")
    for _ in range(5):  # the last hand's summary, then the match's
        if page.locator("dialog[open] #replay-link").count():
            break
        page.click("dialog[open] #next-hand")
    expect(page.locator("dialog[open] #replay-link")).to_have_attribute("href", f"/replay/{gid}")
    expect(page.locator("dialog[open] h2")).to_contain_text(re.compile("Ann|Bob|drawn"))
    assert check_frames(web, gid, frames) >= 3
    assert any(json.loads(f)["type"] == "state" and json.loads(f)["state"]["match_over"] for f in frames)
    page.click("dialog[open] #replay-link")
    page.wait_for_selector("#replay-board .card")
    page.keyboard.press("End")
    expect(page.locator("#replay-text")).to_contain_text(re.compile(r"wins \+\d+|No one scores"))
    expect(page.locator("#review")).to_be_hidden()  # the review is a player's own
    assert page.errors == []  # type: ignore[attr-defined]


def open_table(page: Page, web: Server, token: str, lang: str = "en") -> None:
    page.goto(f"{web.url}/play/{token}?speed=0&lang={lang}")
    page.wait_for_selector("#hand .card")
    wait_js(page, "document.getElementById('chat-toggle') && !document.getElementById('chat-toggle').hidden")
    if page.locator("#chat").is_hidden():
        page.click("#chat-toggle")


def chat_lines(page: Page) -> list[str]:
    return page.locator("#chat-log li .chat-text").all_inner_texts()


def test_two_players_chat_hostile_text_shows_as_text_and_mute_and_report(browser, web):  # noqa: F811
    with web.client() as a, web.client() as b:
        game = friend_game(web, a, b)
    ann, bob = new_page(browser), new_page(browser)
    open_table(ann, web, game["tokens"][0])
    open_table(bob, web, game["tokens"][1], lang="ja")  # no shared language: the phrases help
    hostile = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script><b>bold</b> & é'
    ann.fill("#chat-input", hostile)
    ann.click("#chat-send")
    expect(bob.locator("#chat-log li")).to_have_count(1)
    # Shown as the text it is: no element made of it, no script run.
    assert chat_lines(bob) == [hostile] and chat_lines(ann) == [hostile]
    for page in (ann, bob):
        assert page.locator("#chat-log img, #chat-log script, #chat-log b").count() == 0
        assert page.evaluate("window.pwned") is None
    expect(bob.locator("#chat-log li .chat-name")).to_have_text("Ann")
    # A phrase, clicked in Japanese, reads in English on the other side.
    bob.click('#phrases [data-phrase="yoroshiku"]')
    expect(ann.locator("#chat-log li")).to_have_count(2)
    assert chat_lines(ann)[-1] == "Nice to play with you" and chat_lines(bob)[-1] == "よろしくお願いします"
    # 10 KB: refused with a clear error, sent to nobody; by the page, and by the server if sent anyway.
    ann.evaluate("() => { document.getElementById('chat-input').value = 'x'.repeat(10240); }")
    ann.click("#chat-send")
    expect(ann.locator("#chat-note")).to_have_text("A message has at most 200 characters.")
    ann.evaluate("() => send({type: 'chat', text: 'y'.repeat(10240)})")
    expect(ann.locator("#toast")).to_contain_text("The server did not understand that request.")
    ann.evaluate("() => send({type: 'chat', text: 'z'.repeat(201)})")
    expect(ann.locator("#chat-note")).to_have_text("A message has at most 200 characters.")
    ann.fill("#chat-input", "ok")
    ann.click("#chat-send")
    expect(bob.locator("#chat-log li")).to_have_count(3)
    assert chat_lines(bob)[-1] == "ok"
    # Bob mutes Ann: her words no longer reach him, now or after a reload.
    bob.check("#chat-mute")
    expect(bob.locator("#chat-note")).to_contain_text("非表示")
    ann.fill("#chat-input", "can you hear me?")
    ann.click("#chat-send")
    expect(ann.locator("#chat-log li")).to_have_count(4)
    bob.fill("#chat-input", "…")
    bob.click("#chat-send")  # Bob's own message comes back after Ann's would have
    expect(bob.locator("#chat-log li")).to_have_count(4)
    assert "can you hear me?" not in chat_lines(bob)
    bob.reload()
    open_table(bob, web, game["tokens"][1], lang="ja")
    expect(bob.locator("#chat-mute")).to_be_checked()
    expect(bob.locator("#chat-log li")).to_have_count(2)  # his own two; Ann's are hidden from him
    assert bob.locator("#chat-log li.mine").count() == 2
    # Ann reports Bob's message: kept for the moderators, once.
    ann.locator("#chat-log li.chat-line:not(.mine) .chat-report").last.click()
    expect(ann.locator("#chat-note")).to_have_text("Reported to the moderators. Thank you.")
    assert ann.locator("#chat-log li.mine .chat-report").count() == 0  # not one's own
    out = admin(web, "reports")
    assert "reported by Ann (guest)" in out.stdout and "…" in out.stdout, out.stdout
    assert ann.errors == [] and bob.errors == []  # type: ignore[attr-defined]


def test_a_private_game_made_in_the_lobby_is_refused_to_a_spectator(browser, web):  # noqa: F811
    host = new_page(browser)
    host.goto(f"{web.url}/?lang=en")
    host.select_option("#opponent", "friend")
    host.check("#private")
    host.click("#create")
    host.wait_for_url(re.compile(r"/play/"))
    gid = host.evaluate("window.KOIKOI.game_id")
    spectator = new_page(browser)
    response = spectator.goto(f"{web.url}/watch/{gid}?lang=en")
    assert response is not None and response.status == 403
    expect(spectator.locator("main")).to_contain_text("This game is private")
    # The host's table offers no spectators' link; a public game's does.
    if host.locator("#chat").is_hidden():
        host.click("#chat-toggle")
    expect(host.locator("#chat-watch-link")).to_be_hidden()
    with web.client() as a, web.client() as b:
        public = friend_game(web, a, b)
    player = new_page(browser)
    open_table(player, web, public["tokens"][0])
    expect(player.locator("#watch-link")).to_have_attribute("href", f"/watch/{public['game_id']}")
    # The online lobby lists the public lobby game with a Watch link, never a private one.
    with web.client() as a, web.client() as b:
        seek = {"rules": {"preset": "nintendo"}, "hands": 1, "name": "Sato"}
        private = a.post("/api/lobby/seeks", json={**seek, "private": True}).json()
        opened = a.post("/api/lobby/seeks", json=seek).json()
        hidden_game = b.post(f"/api/lobby/seeks/{private['seek_id']}/accept", json={"name": "Kato"}).json()
        listed_game = b.post(f"/api/lobby/seeks/{opened['seek_id']}/accept", json={"name": "Kato"}).json()
    lobby = new_page(browser)
    lobby.goto(f"{web.url}/lobby?lang=en")
    link = lobby.locator(f'#playing-list li[data-game="{listed_game["game_id"]}"] a.watch-link')
    expect(link).to_have_text("Watch")
    assert lobby.locator(f'#playing-list li[data-game="{hidden_game["game_id"]}"]').count() == 0
    link.click()
    lobby.wait_for_url(re.compile(r"/watch/"))
    expect(lobby.locator("#status")).to_contain_text("to move")
    for page in (host, spectator, player, lobby):
        assert page.errors == []  # type: ignore[attr-defined]


def test_the_spectators_page_and_the_chat_fit_a_phone_in_every_language(browser, web):  # noqa: F811
    with web.client() as a, web.client() as b:
        game = friend_game(web, a, b)
    page = new_page(browser, **PHONE)
    for lang in LANGUAGES:
        page.goto(f"{web.url}/watch/{game['game_id']}?lang={lang}&speed=0")
        page.wait_for_selector("#field .card")
        wait_js(page, "!document.getElementById('watchers').hidden")
        expect(page.locator("#chat")).to_be_hidden()  # behind its button on a phone
        page.click("#chat-toggle")
        expect(page.locator("#chat")).to_be_visible()
        fit = page.evaluate("""() => { const r = document.getElementById('chat').getBoundingClientRect();
            return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: window.innerHeight,
                    wide: document.documentElement.scrollWidth - window.innerWidth}; }""")
        assert fit["top"] >= 0 and fit["bottom"] <= fit["height"], (lang, fit)
        assert fit["left"] >= 0 and fit["right"] <= 390 and fit["wide"] <= 0, (lang, fit)
        expect(page.locator("#chat-sign-in")).to_be_visible()  # a guest reads; signed in, they write
        page.click("#chat-close")
        expect(page.locator("#chat")).to_be_hidden()
    # A player's phone: the chat opens over the table, inside the screen, its field and buttons usable.
    player = new_page(browser, **PHONE)
    player.goto(f"{web.url}/play/{game['tokens'][0]}?speed=0&lang=ru")
    player.wait_for_selector("#hand .card")
    wait_js(player, "!document.getElementById('chat-toggle').hidden")
    wait_js(player, "!document.getElementById('chat-write').hidden")  # the room's hello has come: one writes
    player.click("#chat-toggle")
    for sel in ("#chat-input", "#chat-send", "#chat-mute", '#phrases [data-phrase="good_game"]'):
        box = player.locator(sel).bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= 844 and box["x"] + box["width"] <= 390, sel
    player.fill("#chat-input", "привет")
    player.click("#chat-send")
    expect(player.locator("#chat-log li")).to_have_count(1)
    assert player.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.errors == [] and player.errors == []  # type: ignore[attr-defined]


@pytest.mark.skipif(not POSTGRES_URL, reason="several processes need PostgreSQL (KOIKOI_TEST_POSTGRES_URL)")
def test_a_spectator_on_a_second_process_follows_moves_stored_by_the_first(browser, tmp_path):  # noqa: F811
    from conftest import make_database

    url = make_database("postgresql", tmp_path)
    first, second = Server(url, tmp_path), Server(url, tmp_path)
    first.start()
    second.start()
    try:
        with first.client() as a, first.client() as b:
            game = friend_game(first, a, b)
        page = new_page(browser)
        frames = frames_of(page)
        page.goto(f"{second.url}/watch/{game['game_id']}?lang=en&speed=0")
        expect(page.locator("#status")).to_contain_text("to move")
        play_following(first, game["tokens"], page)  # every move stored through the first process
        wait_js(page, "document.querySelector('dialog[open]') !== null")
        assert check_frames(first, game["game_id"], frames) >= 3
        final = len(true_match(first, game["game_id"]).actions)
        assert page.evaluate("Number(document.body.dataset.seq)") == final
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        first.stop(hard=False)
        second.stop(hard=False)


def test_a_game_against_the_computer_is_watched_without_a_players_chat(browser, web):  # noqa: F811
    with web.client() as c:
        game = c.post("/api/games", json={"opponent": "random", "rules": ONE_HAND}).json()
    player = new_page(browser)
    player.goto(f"{web.url}/play/{game['token']}?speed=0&lang=en")
    player.wait_for_selector("#hand .card")
    wait_js(player, "window.KOIKOI && document.getElementById('chat-toggle').hidden")
    spectator = new_page(browser)
    spectator.goto(f"{web.url}/watch/{game['game_id']}?speed=0&lang=en")
    # The computer by its name, its level beside it (issue 33).
    expect(spectator.locator("#side-1 .who")).to_contain_text("Momo random")
    expect(spectator.locator("h1")).to_contain_text("Momo")
    expect(player.locator("#watchers")).to_have_text("1 watching")
    assert player.errors == [] and spectator.errors == []  # type: ignore[attr-defined]


def test_a_spectator_sees_the_clock_tick_and_run_out(browser, clocked):  # noqa: F811
    with clocked.client() as ann, clocked.client() as bob:
        made = ann.post("/api/games", json={"name": "Ann", "opponent": "friend", "rules": ONE_HAND, "clock": QUICK})
        gid, invite = made.json()["game_id"], made.json()["invite_token"]
        page = new_page(browser)
        frames = frames_of(page)
        page.goto(f"{clocked.url}/watch/{gid}?lang=en&speed=0")
        expect(page.locator("#status")).to_contain_text("Waiting for the second player")
        # Bob joins while the spectator watches: the clock starts on the spectator's page.
        joined = bob.post(f"/api/invite/{invite}/join", json={"name": "Bob"})
        assert joined.status_code == 200
    tokens = [made.json()["token"], joined.json()["token"]]
    running = page.locator(".bar .clock.running")
    expect(running).to_have_count(1)
    expect(page.locator("#side-0 .clock")).to_be_visible()
    expect(page.locator("#side-1 .clock")).to_be_visible()
    mover = page.evaluate("state.current_player")
    name, other = ("Ann", "Bob") if mover == 0 else ("Bob", "Ann")
    expect(page.locator(f"#side-{mover} .clock")).to_have_class(re.compile(r"\brunning\b"))
    expect(running).to_have_attribute("aria-label", re.compile(f"^{name}: .* left$"))
    expect(page.locator("#match-info")).to_contain_text("2 s a move + 0:01 in the bank")
    shown = running.inner_text()
    expect(running).not_to_have_text(shown)  # it counts down on the page between the server's messages
    # Each player makes a first move (one who never did would have the game aborted), then nobody moves:
    # the server ends the match on time, and the spectator is told who ran out.
    with clocked.client() as c:
        both_move(c, tokens)
        mover = c.get(f"/api/seat/{tokens[0]}").json()["current_player"]
    name, other = ("Ann", "Bob") if mover == 0 else ("Bob", "Ann")
    expect(page.locator("dialog[open] #ending")).to_have_text(f"{name} ran out of time.", timeout=20000)
    expect(page.locator("dialog[open] h2")).to_have_text(f"{other} wins the match")
    expect(page.locator(".bar .clock.running")).to_have_count(0)
    # The one who ran out has no time left, whatever their bank held when their last decision began.
    expect(page.locator(f"#side-{mover} .clock")).to_have_text("0:00")
    expect(page.locator(f"#side-{1 - mover} .clock")).not_to_have_text("0:00")
    expect(page.locator("#status")).to_have_text("The match is over.")
    states = audited(clocked, gid, frames)  # (every frame up to the end)
    assert states[-1]["ending"] == {"reason": "time", "winner": 1 - mover}
    # Over, even early, it has nothing left to hide: its replay is public, and says how it ended.
    expect(page.locator("dialog[open] a[href='/lobby']")).to_be_visible()
    expect(page.locator("dialog[open] #replay-link")).to_have_attribute("href", f"/replay/{gid}")
    page.click("dialog[open] #replay-link")
    page.wait_for_url(re.compile(f"/replay/{gid}"))
    expect(page.locator("#replay-ending")).to_have_text(f"{name} ran out of time.")
    assert page.errors == []  # type: ignore[attr-defined]


def test_a_spectator_on_a_phone_sees_who_is_away_and_a_resignation_in_every_language(browser, clocked):  # noqa: F811
    with clocked.client() as ann, clocked.client() as bob:
        game = friend_game(clocked, ann, bob, clock=SLOW)
        both_move(ann, game["tokens"])  # (a resignation before both have moved is an abort)
    gid, tokens = game["game_id"], game["tokens"]
    page = new_page(browser, **PHONE)
    frames = frames_of(page)
    page.goto(f"{clocked.url}/watch/{gid}?lang=en&speed=0")
    page.wait_for_selector("#field .card")
    for side in ("#side-0", "#side-1"):
        box = page.locator(f"{side} .clock").bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390 and 0 <= box["y"] <= 844 - box["height"], side
    expect(page.locator("#match-info")).to_contain_text("20 s a move + 2:00 in the bank")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # Bob comes to the table and his connection drops: the spectator sees him away, then back.
    with seated(clocked, tokens[1]):
        expect(page.locator("#side-1 .badge.away")).to_have_count(0)
    expect(page.locator("#side-1 .badge.away")).to_have_text("away")
    expect(page.locator("#side-0 .badge.away")).to_have_count(0)
    badge = page.locator("#side-1 .badge.away").bounding_box()
    assert badge and badge["x"] + badge["width"] <= 390
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    with seated(clocked, tokens[1]) as bob_socket:
        expect(page.locator("#side-1 .badge.away")).to_have_count(0)
        bob_socket.send(json.dumps({"type": "resign"}))
        until(bob_socket, lambda m: m["type"] == "ended")
    expect(page.locator("dialog[open] #ending")).to_have_text("Bob resigned.")
    expect(page.locator("dialog[open] h2")).to_have_text("Ann wins the match")
    assert page.locator("#claim-box").is_hidden() and page.locator("#resign-button").is_hidden()
    assert page.locator("dialog[open] #offer-rematch").count() == 0
    audited(clocked, gid, frames)
    # Whoever watches later, in any language, is told why it ended, and the dialog fits the phone.
    for lang in LANGUAGES:
        page.goto(f"{clocked.url}/watch/{gid}?lang={lang}&speed=0")
        t = Translator(lang)
        expect(page.locator("dialog[open] #ending")).to_have_text(t("ending.resign", name="Bob"))
        expect(page.locator("dialog[open] h2")).to_have_text(t("match.they_won", name="Ann"))
        fit = page.evaluate("""() => { const r = document.querySelector('dialog[open]').getBoundingClientRect();
            return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,
                    wide: document.documentElement.scrollWidth - window.innerWidth}; }""")
        assert fit["top"] >= 0 and fit["bottom"] <= 844 and fit["left"] >= 0 and fit["right"] <= 390, (lang, fit)
        assert fit["wide"] <= 0, (lang, fit)
    assert page.errors == []  # type: ignore[attr-defined]
