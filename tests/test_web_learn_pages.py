"""Learn in Chromium: every lesson solved on the real table by its own moves, a wrong move refused with why,
stars earned and kept (in the browser, and on the account of a learner who signs in), the keyboard, a
phone, axe, the rule sets' page and the first game it ends with."""

from __future__ import annotations

import json

import pytest
from axe import serious_violations
from conftest import Server
from playwright.sync_api import Page, expect
from test_web_account_pages import sign_up
from test_web_browser import new_page
from test_web_puzzle_pages import do

from koikoi.actions import KOIKOI, STOP
from koikoi.lessons import LESSONS, Exercise, Lesson
from koikoi.review import move_signature
from koikoi.web.i18n import LANGUAGES

pytestmark = pytest.mark.limits(lesson_burst=500)

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


@pytest.fixture
def web(sqlite_server):
    return sqlite_server


def a_wrong_move(lesson: Lesson, exercise: Exercise) -> int | None:
    """A legal first move that misses the exercise's goal (None: every move reaches it, as in the lesson on
    the draw, whose one card is there to show what the stock does)."""
    obs = lesson.position(exercise).observation(0)
    right = {move_signature(obs, a) for a in exercise.answers(0)}
    return next((a for a in obs.legal_actions if move_signature(obs, a) not in right), None)


def solve(page: Page, lesson: Lesson, *, wrong_first: bool) -> int:
    """Every exercise of the lesson by its right moves (after one wrong move, when asked and there is one);
    returns the wrong moves made."""
    wrong = 0
    for i, exercise in enumerate(lesson.exercises):
        expect(page.locator("#learn-step")).to_contain_text(f"{i + 1} of {len(lesson.exercises)}")
        expect(page.locator("#hand .card").first).to_be_visible()
        miss = a_wrong_move(lesson, exercise) if wrong_first and i == 0 else None
        if miss is not None:
            wrong += 1
            do(page, miss)
            expect(page.locator("#learn-feedback.wrong")).to_contain_text("Not that move")
            expect(page.locator("#hand .card")).to_have_count(len(exercise.hand))  # nothing was played
        for step in range(exercise.moves):
            action = exercise.answers(step)[0]
            if action in (KOIKOI, STOP):
                expect(page.locator("dialog[open]")).to_be_visible()
            do(page, action)
            expect(page.locator("#learn-feedback.right")).to_be_visible()
        expect(page.locator("#learn-feedback")).to_contain_text("Right!")
        if i + 1 < len(lesson.exercises):
            page.click("#learn-next")
    return wrong


def stars_here(page: Page) -> dict[str, int]:
    return json.loads(page.evaluate("localStorage.getItem('koikoi.learn') || '{}'"))


def test_each_lesson_is_solved_on_the_table_by_its_moves(browser, web: Server):
    # One page and server for every lesson, in a row (a page and a server each cost 0.8 s of CPU more).
    page = new_page(browser)
    for lesson in LESSONS:
        page.goto(f"{web.url}/learn/{lesson.name}?lang=en&speed=0")
        expect(page.locator("#learn-title")).to_be_visible()
        wrong = solve(page, lesson, wrong_first=True)
        # One wrong move in the lesson: two stars (none: three), kept in this browser.
        stars = 3 - wrong
        expect(page.locator("#learn-result")).to_be_visible()
        expect(page.locator("#learn-stars")).to_have_attribute("aria-label", f"{stars} of 3 stars")
        assert stars_here(page)[lesson.name] == stars, lesson.name
    assert sorted(stars_here(page)) == sorted(x.name for x in LESSONS)
    assert page.errors == []  # type: ignore[attr-defined]
    page.context.close()


def test_a_lesson_without_a_wrong_move_earns_three_stars_and_the_list_shows_them(browser, web: Server):
    page = new_page(browser)
    lesson = next(x for x in LESSONS if x.name == "kinds")
    page.goto(f"{web.url}/learn/kinds?lang=en&speed=0")
    solve(page, lesson, wrong_first=False)
    expect(page.locator("#learn-stars")).to_have_attribute("aria-label", "3 of 3 stars")
    # Done again with a wrong move: the best stays.
    page.click("#learn-again")
    solve(page, lesson, wrong_first=True)
    expect(page.locator("#learn-stars")).to_have_attribute("aria-label", "2 of 3 stars")
    assert stars_here(page)["kinds"] == 3
    page.click("#learn-next-lesson")
    page.wait_for_url("**/learn/brights")
    page.goto(f"{web.url}/learn?lang=en")
    expect(page.locator(".lesson-stars[data-lesson='kinds']")).to_have_attribute("aria-label", "3 of 3 stars")
    expect(page.locator(".lesson-stars[data-lesson='months']")).to_have_text("not started")
    page.context.close()


def test_a_lesson_by_keyboard(browser, web: Server):
    """The table's keys play a lesson: the number of a card in the hand plays it."""
    page = new_page(browser)
    page.goto(f"{web.url}/learn/months?lang=en&speed=0")
    expect(page.locator("#hand .card").first).to_be_visible()
    cards = page.locator("#hand .card")
    position = [cards.nth(i).get_attribute("data-card") for i in range(cards.count())].index(str(8))  # the curtain
    page.keyboard.press(str(position + 1))
    expect(page.locator("#learn-feedback.right")).to_be_visible()
    expect(page.locator("#learn-next")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#learn-step")).to_contain_text("2 of 3")
    page.context.close()


def test_a_guests_stars_go_to_the_account_they_sign_up_for(browser, web: Server):
    page = new_page(browser)
    page.goto(f"{web.url}/learn?lang=en")
    page.evaluate("localStorage.setItem('koikoi.learn', JSON.stringify({months: 3, match: 2, chess: 3}))")
    sign_up(page, web, "Learner")
    page.goto(f"{web.url}/learn?lang=en")
    expect(page.locator(".lesson-stars[data-lesson='match']")).to_have_attribute("aria-label", "2 of 3 stars")
    page.wait_for_function("async () => (await (await fetch('/api/learn/progress')).json()).stars.months === 3")
    got = page.evaluate("async () => (await (await fetch('/api/learn/progress')).json()).stars")
    assert got == {"months": 3, "match": 2}  # a lesson that is not one stays behind
    page.context.close()


def test_the_rule_sets_page_and_the_first_game(browser, web: Server):
    page = new_page(browser)
    page.goto(f"{web.url}/learn/rulesets?lang=en")
    expect(page.locator("table.rulesets")).to_contain_text("Akatan + aotan")
    assert stars_here(page)["rulesets"] == 3
    assert not serious_violations(page), serious_violations(page)
    page.click("#learn-next-lesson")
    page.wait_for_url(f"{web.url}/learn/firstgame")
    page.click("#learn-first-game")
    page.wait_for_url(f"{web.url}/play/**")
    expect(page.locator("#hand .card")).to_have_count(8)
    expect(page.locator("#side-1 .who")).to_contain_text("Momo")  # the beginner level: the gentlest
    assert stars_here(page)["firstgame"] == 3
    assert page.errors == []  # type: ignore[attr-defined]
    page.context.close()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_lesson_fits_a_phone_and_passes_axe(browser, web: Server, lang: str):
    page = new_page(browser, **PHONE)
    page.goto(f"{web.url}/learn?lang={lang}")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert not serious_violations(page), serious_violations(page)
    page.goto(f"{web.url}/learn/ribbons?lang={lang}&speed=0")
    expect(page.locator("#hand .card").first).to_be_visible()
    fit = page.evaluate("""() => ({wide: document.documentElement.scrollWidth,
        goal: document.getElementById('learn-goal').getBoundingClientRect().bottom,
        hand: document.getElementById('hand').getBoundingClientRect().bottom})""")
    assert fit["wide"] <= 390 and fit["goal"] <= 844 and fit["hand"] <= 844, fit
    assert not serious_violations(page), serious_violations(page)
    lesson = next(x for x in LESSONS if x.name == "ribbons")
    miss = a_wrong_move(lesson, lesson.exercises[0])
    assert miss is not None
    do(page, miss)
    expect(page.locator("#learn-feedback.wrong")).not_to_be_empty()
    page.goto(f"{web.url}/learn/rulesets?lang={lang}")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # the wide table scrolls in its box
    assert page.errors == []  # type: ignore[attr-defined]
    page.context.close()
