"""Puzzles in Chromium: a guest solves a puzzle on the real table by its moves (a card of the hand, a card
of the table, koi-koi or stop), is refused on a wrong one and shown the solution; the page fits a phone in
every language and passes axe."""

from __future__ import annotations

import json

import pytest
from axe import serious_violations
from conftest import Server
from playwright.sync_api import Page, expect
from test_web_browser import new_page

from koikoi.actions import DRAW_TAKE_BASE, KOIKOI, PLAY_TAKE_BASE, STOP
from koikoi.puzzlegen import shipped_puzzles
from koikoi.puzzles import Puzzle
from koikoi.web.i18n import LANGUAGES
from koikoi.web.puzzlestore import PuzzleStore
from koikoi.web.store import Store

pytestmark = pytest.mark.limits(puzzle_burst=200)


@pytest.fixture
def web(sqlite_server):
    return sqlite_server


def served(page: Page, web: Server, after: str | None = None) -> Puzzle:
    """The puzzle the page shows (read from the server's database, as only the server knows its line), once
    it is another than ``after``."""
    page.wait_for_function(
        "(old) => { const p = document.getElementById('puzzle-panel').dataset.puzzle; return p && p !== old; }",
        arg=after,
    )
    expect(page.locator("#hand .card").first).to_be_visible()
    pid = page.get_attribute("#puzzle-panel", "data-puzzle")
    store = Store(web.database_url)
    try:
        row = PuzzleStore(store).get(pid or "")
        assert row is not None
        return Puzzle.from_dict(json.loads(row.data))
    finally:
        store.close()


def do(page: Page, action: int) -> None:
    """Make a move on the table as a player does: click the card (and the card it takes), or the button."""
    if action in (KOIKOI, STOP):
        page.click("dialog[open] #koikoi-button" if action == KOIKOI else "dialog[open] #stop-button")
    elif action >= DRAW_TAKE_BASE:
        page.click(f"#field .card.pick[data-card='{action - DRAW_TAKE_BASE}']")
    elif action >= PLAY_TAKE_BASE:
        card, which = divmod(action - PLAY_TAKE_BASE, 4)
        page.click(f"#hand .card[data-card='{card}']")
        page.click(f"#field .card.pick[data-card='{(card & ~3) | which}']")
    else:
        page.click(f"#hand .card[data-card='{action}']")


def keep_only(web: Server, ids: set[str]) -> None:
    """Leave the server only these puzzles (the shipped set is imported at its start): a test then knows
    which it is served."""
    from sqlalchemy import delete

    from koikoi.web.schema import puzzles

    store = Store(web.database_url)
    try:
        with store.engine.begin() as conn:
            conn.execute(delete(puzzles).where(puzzles.c.id.not_in(sorted(ids))))
    finally:
        store.close()


def test_a_guest_solves_a_puzzle_on_the_table_and_misses_the_next(browser, web: Server):
    # A puzzle whose line ends the hand with a stop (the table's dialogs stay shut: the panel says the end),
    # and one whose first move is a card.
    shipped = shipped_puzzles()
    stopping = next(p for p in shipped if p.line[-1].action == STOP)
    playing = next(p for p in shipped if p.line[0].action < KOIKOI)
    keep_only(web, {stopping.id, playing.id})
    page = new_page(browser, viewport={"width": 1280, "height": 900})
    page.goto(web.url + "/puzzles?lang=en")
    # Served in either order: the stopping one is solved, the other missed.
    last = None
    for _ in range(2):
        puzzle = served(page, web, after=last)
        expect(page.locator("#puzzle-task")).to_have_text("Your move: find the best one.")
        if puzzle.id == stopping.id:
            for i, move in enumerate(puzzle.line):
                if i:
                    expect(page.locator("#puzzle-task")).to_have_text("Right. Now the next decision.")
                do(page, move.action)
            expect(page.locator("#puzzle-verdict")).to_have_text("Solved: that is the best move.")
            expect(page.locator("dialog[open]")).to_have_count(0)
            expect(page.locator("#puzzle-solution li")).to_have_count(len(puzzle.line))
            expect(page.locator("#puzzle-rating-change")).to_contain_text("Your puzzle rating:")
        else:
            do(page, puzzle.line[0].runner_up)
            expect(page.locator("#puzzle-verdict")).to_have_text("Not the best move: see the solution.")
            expect(page.locator("#puzzle-solution li").first).to_contain_text("points")
        page.click("#puzzle-next")
        last = puzzle.id
    rating = page.evaluate("JSON.parse(localStorage.getItem('koikoi.puzzles')).rating")
    assert rating != 1500  # the guest's rating, kept in the browser
    assert page.errors == []  # type: ignore[attr-defined]


def test_the_puzzle_page_fits_a_phone_in_every_language_and_is_accessible(browser, web: Server):
    page = new_page(browser, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    for lang in LANGUAGES:
        for mode in ("rated", "streak"):
            page.goto(f"{web.url}/puzzles?lang={lang}&mode={mode}")
            puzzle = served(page, web)
            expect(page.locator("#puzzle-task")).not_to_have_text("")
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, f"{lang} {mode}: {width} px wide"
            assert serious_violations(page) == [], (lang, mode)
            if lang == "en" and mode == "streak":
                do(page, puzzle.line[0].runner_up)  # the result and the solution, on a phone too
                expect(page.locator("#puzzle-result")).to_be_visible()
                assert serious_violations(page) == []
                width = page.evaluate("document.documentElement.scrollWidth")
                assert width <= 390, f"{lang} result: {width} px wide"
            text = page.locator("main").inner_text()
            assert "puzzle." not in text and "{" not in text, (lang, mode)
    assert page.errors == []  # type: ignore[attr-defined]
