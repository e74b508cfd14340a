"""Accessibility: axe-core (tests/axe.py) finds nothing serious or critical on the lobby, rules, replay,
account, invitation, error and spectator's pages (with the chat open), in Chromium. (The table has its own
check beside its other browser tests.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from axe import serious_violations
from test_web_browser import new_page

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def web(sqlite_server):
    return sqlite_server


def test_axe_reports_a_known_fault(browser):  # noqa: F811
    """The check itself can fail: an image without a text alternative and an unlabelled field are found."""
    page = new_page(browser)
    page.set_content('<!doctype html><html lang="en"><title>t</title><main><img src="x.png"><input></main></html>')
    found = serious_violations(page)
    assert any(line.startswith("image-alt (critical)") for line in found), found
    assert any(line.startswith("label (critical)") for line in found), found
    page.context.close()


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_pages_have_no_serious_accessibility_findings(browser, web, lang):  # noqa: F811
    with web.client() as c:
        game = c.post(
            "/api/games", json={"name": "Ann", "opponent": "friend", "rules": {"preset": "nintendo", "options": {}}}
        ).json()
    page = new_page(browser)
    findings: dict[str, list[str]] = {}

    def check(name: str) -> None:
        findings[name] = serious_violations(page)

    page.goto(f"{web.url}/?lang={lang}")
    page.wait_for_selector("#options .option", state="attached")
    check("lobby")
    page.click("#options-box summary")  # every option's editor, open
    page.select_option("#opt-dealer_selection", "birth_month")  # and the birth-month fields it shows
    check("lobby, options open")
    for path in ("/rules", "/rules?preset=boardgame", "/replay", "/account", game["invite_url"], "/no-such-page"):
        page.goto(f"{web.url}{path}{'&' if '?' in path else '?'}lang={lang}")
        page.wait_for_load_state("networkidle")
        check(path)
    page.goto(f"{web.url}/replay?lang={lang}")
    page.set_input_files("#record-file", str(GOLDEN / "cardavia.record.json"))
    page.wait_for_selector("#replay-board .card")
    page.click("#next")
    check("replay of a record")
    page.click("#last")
    check("replay, last step")
    # Signed in: the account page's own parts (sign out, change password) and the header's name.
    page.goto(f"{web.url}/account?lang={lang}")
    page.fill("#sign-up-name", "Hanako")
    page.fill("#sign-up-password", "plum-blossom-rain")
    page.click("#sign-up")
    page.wait_for_url(f"{web.url}/")
    page.goto(f"{web.url}/account?lang={lang}")
    page.wait_for_selector("#password-form")
    check("account, signed in")
    page.goto(f"{web.url}/@/Hanako?lang={lang}")
    check("player page")
    page.goto(f"{web.url}/leaderboard/long?lang={lang}")
    check("leaderboard")
    # A spectator's table of a clocked game (signed in: the chat to write in), the chat open, and a message in it.
    with web.client() as host, web.client() as friend:
        watched = host.post(
            "/api/games",
            json={"name": "Ann", "opponent": "friend", "rules": {"preset": "nintendo"}, "clock": "20+120"},
        ).json()
        friend.post(f"/api/invite/{watched['invite_token']}/join", json={"name": "Bob"})
    page.goto(f"{web.url}/watch/{watched['game_id']}?lang={lang}&speed=0")
    page.wait_for_selector("#field .card")
    page.wait_for_selector(".bar .clock.running")
    page.wait_for_selector("#chat-write:not([hidden])", state="attached")
    if page.locator("#chat").is_hidden():
        page.click("#chat-toggle")
    page.fill("#chat-input", "<b>hello</b>")
    page.click("#chat-send")
    page.wait_for_selector("#chat-log li")
    check("spectator's table, chat open")
    page.set_viewport_size({"width": 390, "height": 844})
    check("spectator's table on a phone")
    assert {name: found for name, found in findings.items() if found} == {}
    assert page.errors == []  # type: ignore[attr-defined]
    page.context.close()
