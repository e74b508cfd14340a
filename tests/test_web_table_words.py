"""The table's words at every passing moment, on both seats (issue 33): the status line, the "to move" badge,
the score bar, the yaku chips and the log say what is happening now, whoever's turn it is and whatever
they are doing; under a hand's result the table is already settled; offline, the hand rests and says why.

Debian's Chromium driven by Playwright against the real server (``test_web_browser.py``'s fixtures), a
friend game in two browsers (one a desktop at 1280x900, the other a phone at 390x844) and games against
the computer. Screenshots of a decision and of a hand's result go to ``KOIKOI_SHOTS`` when it names a folder.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from conftest import Server
from playwright.sync_api import Page, expect
from test_web_browser import READY, create_table, new_page, take_turn, wait_js
from test_web_table import watch_toasts

DESKTOP = {"viewport": {"width": 1280, "height": 900}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
SHOTS = os.environ.get("KOIKOI_SHOTS")

# The page has shown the newest state it knows and is waiting for nobody but a player: either it shows
# the server's table with nothing on its way, or a hand's result stands open over its settled table.
QUIET = """(backlog === 0 && !pending && truth !== null && state === truth && !offline())
    || (state !== null && Boolean(state.settled) && document.querySelector('dialog[open] #next-hand') !== null)"""

# What the page shows now, read off the screen (and the state it is showing).
SCREEN = """() => {
    const text = (sel) => [...document.querySelectorAll(sel)].map((e) => e.textContent);
    return {
        status: document.getElementById('status').textContent,
        seq: truth.seq, seat: truth.seat, to_move: truth.to_move, phase: truth.phase, scores: truth.scores,
        names: truth.players.map((p) => p.name),
        turn_badge: [document.querySelectorAll('#side-0 .badge.turn').length,
                     document.querySelectorAll('#side-1 .badge.turn').length],
        score_bar: [text('#side-0 .score')[0], text('#side-1 .score')[0]],
        calls: [text('#side-0 .calls')[0], text('#side-1 .calls')[0]],
        totals: document.querySelectorAll('.progress .chip.total').length,
        won: [text('#side-0 .progress .chip.won'), text('#side-1 .progress .chip.won')],
        made: [text('#side-0 .progress .chip.made'), text('#side-1 .progress .chip.made')],
        log: text('#log li'),
        dialog: document.querySelector('dialog[open] h2')?.textContent ?? null,
        selected: selected,
    };
}"""


def screen(page: Page) -> dict:
    return page.evaluate(SCREEN)


def shoot(page: Page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"table-words-{name}.png"))


def both_quiet(a: Page, b: Page) -> None:
    """Wait until both pages are quiet at the same state."""
    for _ in range(3):
        wait_js(a, QUIET)
        wait_js(b, QUIET)
        at = a.evaluate("truth.seq")
        wait_js(b, f"truth.seq >= {at}")
        wait_js(b, QUIET)
        if b.evaluate("truth.seq") == a.evaluate("truth.seq"):
            return
    raise AssertionError("the two pages never showed the same state")


def join_as(guest: Page, link: str, name: str) -> None:
    guest.goto(link + "?lang=en")
    guest.fill("#name", name)
    guest.click("#join-button")
    guest.wait_for_url(re.compile(r"/play/"))
    guest.goto(guest.url + "?speed=0")
    guest.wait_for_selector("#hand .card")


def friend_table(browser) -> tuple[Page, Page]:  # noqa: F811
    host = new_page(browser, **DESKTOP)
    return host, new_page(browser, **PHONE)


def check_turn(mover: Page, other: Page) -> dict:
    """Both seats say whose turn it is and what they are doing; the badges and scores agree."""
    m, o = screen(mover), screen(other)
    assert m["seq"] == o["seq"] and m["to_move"] and not o["to_move"], (m, o)
    assert m["phase"] == o["phase"], (m, o)  # the phase is public
    name = m["names"][m["seat"]]
    phase = m["phase"]
    if phase == "decision":
        assert m["status"] == "You made a yaku: stop, or call koi-koi?", m
        assert o["status"] == f"{name} is deciding: koi-koi or stop", o
    elif phase == "draw_choice":
        assert re.fullmatch(r"You drew .+: it matches two table cards — pick the one to take\.", m["status"]), m
        assert o["status"] == f"{name} is choosing which card to take…", o
    else:
        assert m["status"] == "Your turn: play a card from your hand.", m
        assert o["status"] == f"{name} is playing…", o
    # The mover's badge on both screens: at the bottom (you) on theirs, at the top on the other's.
    assert m["turn_badge"] == [1, 0] and o["turn_badge"] == [0, 1], (m, o)
    for s in (m, o):
        me = s["seat"]
        assert s["score_bar"] == [f"Score {s['scores'][me]}", f"Score {s['scores'][1 - me]}"], s
    return m


def check_hand_end(pages: list[Page]) -> list[dict]:
    """Under the hand's result, on each seat: the table already settled."""
    shown = []
    for page in pages:
        s = screen(page)
        r = page.evaluate("truth.results[truth.results.length - 1]")
        last_events = page.evaluate(
            "(truth.match_over ? truth.events : truth.previous_hand_events).slice(-5).map(describeEvent)"
        )
        me = s["seat"]
        assert s["dialog"] and s["status"] == s["dialog"], s  # the result, not "… is playing" or "on its way"
        # The page has taken the new state, though it shows the ended hand's table for the result.
        assert page.evaluate("Number(document.body.dataset.seq)") == s["seq"], s
        assert s["turn_badge"] == [0, 0], s
        # The scores after the hand, on the bar as in the dialog.
        assert s["score_bar"] == [f"Score {s['scores'][me]}", f"Score {s['scores'][1 - me]}"], s
        assert f"you {s['scores'][me]}, opponent {s['scores'][1 - me]}" in page.inner_text("dialog[open] .scores")
        # No koi-koi stands any more; only the winner shows yaku, with what the hand brought them.
        assert s["calls"] == ["", ""] and s["totals"] == 0, s
        for side, p in ((0, me), (1, 1 - me)):
            if r["winner"] == p:
                assert s["won"][side] == [f"+{r['points']} this hand"], s
                assert len(s["made"][side]) == len(r["yaku"]), (s, r)
            else:
                assert s["won"][side] == [] and s["made"][side] == [], s
        # The log already holds the hand's last events, its end included.
        assert s["log"] == last_events and s["log"], s
        shown.append(s | {"result": r})
    return shown


def test_every_passing_moment_in_a_friend_game_on_both_seats(browser, web):  # noqa: F811
    host, guest = friend_table(browser)
    create_table(host, web, "friend", preset="nintendo", name="Alice", hand_bonus=0)
    expect(host.locator("#status")).to_have_text("Waiting for your friend to join.")
    join_as(guest, host.input_value("#invite-link"), "Bob")
    pages = [host, guest]
    seen: set[str] = set()
    koikoi_by: Page | None = None  # who called koi-koi in this hand
    stops: list[str] = []
    for _ in range(900):
        both_quiet(host, guest)
        if any(p.locator("dialog[open] #next-hand").count() for p in pages):
            for p in pages:
                expect(p.locator("dialog[open] #next-hand")).to_be_visible()
            ended = check_hand_end(pages)
            if "hand_end" not in seen:
                shoot(host, "hand-end-1280x900")
                shoot(guest, "hand-end-390x844")
            seen.add("hand_end")
            last = host.evaluate("truth.previous_hand_events.at(-1)")
            if last["kind"] == "stop":
                # "Alice stopped" on Bob's screen and "You stopped" on Alice's, before the dialog closes.
                name = ended[0]["names"][last["player"]]
                for s in ended:
                    assert s["log"][-1] == ("You stopped" if s["seat"] == last["player"] else f"{name} stopped"), s
                stops.append(name)
                if koikoi_by is not None:
                    seen.add("koikoi_hand_end")
            koikoi_by = None
            if {"play", "draw_choice", "decision", "koikoi_hand_end"} <= seen:
                break
            for p in pages:
                p.click("dialog[open] #next-hand")
            continue
        mover = next((p for p in pages if p.evaluate("truth.to_move")), None)
        assert mover is not None, [screen(p) for p in pages]
        other = guest if mover is host else host
        m = check_turn(mover, other)
        seen.add(m["phase"])
        if m["phase"] == "decision":
            if "decision_shot" not in seen:
                seen.add("decision_shot")
                shoot(mover, "decision-" + ("1280x900" if mover is host else "390x844"))
                shoot(other, "decision-" + ("1280x900" if other is host else "390x844"))
            can_koikoi = mover.locator("dialog[open] #koikoi-button").count() > 0
            if can_koikoi and koikoi_by is None and "koikoi_hand_end" not in seen:
                mover.click("dialog[open] #koikoi-button")
                koikoi_by = mover
                both_quiet(host, guest)
                # The call shows on both screens while the hand goes on.
                assert screen(mover)["calls"][0] == "Koi-koi ×1" and screen(other)["calls"][1] == "Koi-koi ×1"
            else:
                mover.click("dialog[open] #stop-button")
            continue
        before = m["seq"]
        what = take_turn(mover, use_keys=False)
        if what == "select" and mover.evaluate("selected !== null"):  # (not a draw that matched two)
            # A card whose month lies twice on the table: the choice is this page's own, the other seat
            # still sees a turn being played.
            seen.add("select")
            s = screen(mover)
            assert re.fullmatch(r".+ matches two table cards — (pick|tap) the one to take.*", s["status"]), s
            assert screen(other)["status"] == f"{m['names'][m['seat']]} is playing…"
            take_turn(mover, use_keys=False)
        if what is not None:
            wait_js(mover, f"truth.seq > {before}")
    else:
        pytest.fail(f"not every moment came in time: {seen}")
    assert stops, seen
    assert host.errors == [] and guest.errors == []  # type: ignore[attr-defined]


def test_the_computers_stop_is_in_the_log_under_the_result(browser, web):  # noqa: F811
    """Against the computer, with the cards moving: when the computer stops, "Hana stopped" is in the log
    under the hand's result, with the new scores, before the dialog is closed; at the end, the match."""
    page = new_page(browser, **DESKTOP)
    create_table(page, web, "easy", preset="nintendo", hand_bonus=0)
    page.goto(page.url.split("?")[0] + "?speed=0.1")  # moving, quickly: the hands to its stop can be many
    page.wait_for_selector("#hand .card")
    computer_stopped = False
    for _ in range(1200):
        wait_js(page, QUIET, timeout=60000)
        if page.locator("dialog[open] #next-hand").count():
            (s,) = check_hand_end([page])
            last = page.evaluate("(truth.match_over ? truth.events : truth.previous_hand_events).at(-1)")
            if last["kind"] == "stop" and last["player"] != s["seat"]:
                assert s["log"][-1] == "Hana stopped", s
                computer_stopped = True
                break
            page.click("dialog[open] #next-hand")
            continue
        if page.locator("dialog[open] #koikoi-button").count():
            page.click("dialog[open] #koikoi-button")  # the computer's stop, not ours, ends the hand
            continue
        if not page.evaluate("truth.to_move"):
            page.wait_for_timeout(50)
            continue
        if take_turn(page, use_keys=False) is None:
            page.wait_for_timeout(50)
    assert computer_stopped, "the computer never stopped a hand"
    page.click("dialog[open] #next-hand")
    # The computer's moments, as the page words them (with no delay, the computer moves too fast to be
    # caught at them): thinking, choosing a capture, deciding.
    words = page.evaluate("""() => ['play', 'draw_choice', 'decision'].map((phase) => {
        const v = structuredClone(truth); Object.assign(v, {to_move: false, current_player: 1 - v.seat, phase});
        state = v; const said = statusText(); state = truth; render(); return said; })""")
    assert words == ["Hana is thinking…", "Hana is choosing which card to take…", "Hana is deciding: koi-koi or stop"]
    # The end of the match: nobody to move, and the status says it is over.
    wait_js(page, QUIET)
    page.click("#resign-button")
    page.click("#resign-confirm")
    expect(page.locator("dialog[open] h2")).to_have_text("Hana wins the match")
    expect(page.locator("#status")).to_have_text("The match is over.")
    expect(page.locator(".badge.turn")).to_have_count(0)
    assert page.errors == []  # type: ignore[attr-defined]


def test_offline_the_hand_rests_and_a_click_says_why(browser, web):  # noqa: F811
    page = new_page(browser, **DESKTOP)
    create_table(page, web, "easy", preset="nintendo")
    for _ in range(50):
        page.wait_for_selector(READY)
        if page.locator("#hand button.card.playable").count() and not page.locator("dialog[open]").count():
            break
        take_turn(page, use_keys=False)
    card = page.locator("#hand button.card.playable").first
    card.hover()
    lifted = card.evaluate("(el) => getComputedStyle(el).transform")
    assert lifted not in ("none", ""), lifted  # online, a playable card lifts under the pointer
    at = page.evaluate("truth.seq")
    web.stop()  # the socket is cut
    wait_js(page, "document.body.classList.contains('offline')", timeout=15000)
    expect(page.locator("#status")).to_have_text("Connection lost — reconnecting…")
    expect(page.locator("#hand button.card.playable")).to_have_count(0)
    first = page.locator("#hand button.card").first
    page.mouse.move(0, 0)
    first.hover()
    assert first.evaluate("(el) => getComputedStyle(el).transform") == "none"
    watch_toasts(page)
    first.click(force=True)  # a person can click it: Playwright waits for aria-disabled elements otherwise
    wait_js(page, "window.toasts.length > 0")
    said = page.evaluate("window.toasts.at(-1)")
    assert said == "You are offline: nothing can be played until the connection is back."
    assert page.evaluate("truth.seq") == at and not page.evaluate("pending")
    expect(page.locator("#status")).to_have_text("Connection lost — reconnecting…")
    # The server comes back on the same port: the page reconnects and the hand is playable again.
    web.start()
    wait_js(page, "!document.body.classList.contains('offline')", timeout=30000)
    expect(page.locator("#hand button.card.playable").first).to_be_visible(timeout=20000)
    expect(page.locator("#status")).to_have_text("Your turn: play a card from your hand.")
    assert page.errors == []  # type: ignore[attr-defined]


@pytest.fixture
def clocked(tmp_path):
    s = Server(str(tmp_path / "games.db"), tmp_path)
    s.start()
    yield s
    s.stop(hard=False)


def test_the_other_player_away_on_their_turn_is_said(browser, clocked):  # noqa: F811
    """A real-time game tells who is at the table: the other player gone on their turn is said so."""
    with clocked.client() as a, clocked.client() as b:
        made = a.post("/api/games", json={"opponent": "friend", "name": "Alice", "clock": "20+120"}).json()
        joined = b.post(f"/api/invite/{made['invite_token']}/join", json={"name": "Bob"}).json()
    host, guest = new_page(browser, **DESKTOP), new_page(browser, **PHONE)
    for page, token in ((host, made["token"]), (guest, joined["token"])):
        page.goto(f"{clocked.url}/play/{token}?lang=en&speed=0")
        page.wait_for_selector("#hand .card")
    # Alice plays until it is Bob's turn to play a card.
    for _ in range(50):
        both_quiet(host, guest)
        if guest.evaluate("truth.to_move && truth.phase === 'play'"):
            break
        mover = host if host.evaluate("truth.to_move") else guest
        take_turn(mover, use_keys=False)
    expect(host.locator("#status")).to_have_text("Bob is playing…")
    guest.close()
    away = "Bob has left the table — waiting for them to come back."
    expect(host.locator("#status")).to_have_text(away, timeout=20000)
    expect(host.locator("#side-1 .badge.turn")).to_have_count(1)
    assert host.errors == []  # type: ignore[attr-defined]
