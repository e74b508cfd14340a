"""The table's hint in the units on the screen (issue 12, item 5): every legal choice, best first, with
what each play takes, the points to expect from the hand and, in a match of several hands, the chance
to win it. In Chromium, against the real server."""

from __future__ import annotations

import re

from test_web_browser import create_table, new_page, wait_js


def test_the_hint_lists_every_legal_choice_with_what_it_takes_and_the_match_chance(browser, web):  # noqa: F811
    page = new_page(browser)
    create_table(page, web, "easy", preset="nintendo")
    page.wait_for_selector("#hand button.card.playable")
    st = page.evaluate("fetch('/api/seat/' + window.KOIKOI.token).then((r) => r.json())")
    page.click("#hint-button")
    wait_js(page, "document.querySelectorAll('#hint-box li').length > 0", timeout=60000)
    box = page.locator("#hint-box")
    assert "chance to win the match" in box.locator(".hint-title").inner_text()
    items = box.locator("li")
    assert items.count() == len(st["legal"])
    actions = [int(items.nth(i).get_attribute("data-action")) for i in range(items.count())]
    assert sorted(actions) == sorted(st["legal"])
    shown = []
    for i in range(items.count()):
        text = items.nth(i).inner_text()
        points = re.search(r"(?<![\d.])([+-]\d+\.\d)(?!%)", text)  # the points to expect
        assert points, text
        m = re.search(r"(\d+\.\d)% to win the match", text)
        assert m, text
        shown.append((float(m.group(1)), float(points.group(1))))
        if actions[i] < 48:
            assert "takes " in text, text
    # best first, sorted by what is shown: the chance to win, then the points
    assert shown == sorted(shown, reverse=True), shown
    assert "best" in items.nth(0).get_attribute("class")
    assert not page.errors


def test_the_decisions_hint_says_why_in_the_units_it_is_sorted_by(browser, web):  # noqa: F811
    """At a koi-koi decision the hint's sentence quotes what the list is sorted by: the chance to win the
    match where the search gives it (the points could say the opposite), else the points. The hint
    message is handed to the page as the server sends it, at a decision (reaching a real one takes a
    hand of luck), into the box its dialog holds."""
    page = new_page(browser)
    create_table(page, web, "easy", preset="nintendo")
    page.wait_for_selector("#hand button.card.playable")
    said = page.evaluate(
        """(choices) => {
            state.phase = "decision";  // and the box of the decision's dialog, where the hint goes
            document.body.append(Object.assign(document.createElement("div"), { id: "decision-hint" }));
            showHint({ seq: state.seq, choices });
            return document.getElementById("decision-hint").textContent;
        }""",
        [
            {"action": 288, "points": 2.5, "win": 0.573, "captures": []},  # koi-koi: fewer points, more wins
            {"action": 289, "points": 4.0, "win": 0.521, "captures": []},
        ],
    )
    assert "Koi-koi looks better: 57.3% chance to win the match, against 52.1% for stopping." in said, said
    # Without the chance to win (a one-hand game), the points.
    said = page.evaluate(
        """(choices) => {
            showHint({ seq: state.seq, choices });
            return document.getElementById("decision-hint").textContent;
        }""",
        [
            {"action": 289, "points": 4.0, "win": None, "captures": []},
            {"action": 288, "points": 2.5, "win": None, "captures": []},
        ],
    )
    assert "Stopping looks better: +4.0 against +2.5 for koi-koi." in said, said
    assert not page.errors
