"""Lessons (koikoi.lessons): every exercise's position is set up by the engine, its right moves reach its
goal and every other move is refused with the review's reason; a lesson replays only right moves."""

from __future__ import annotations

import pytest

from koikoi.actions import KOIKOI, STOP, parse_action
from koikoi.hand import Phase
from koikoi.lessons import LESSONS, RULE_EXAMPLES, LessonError, compare, lesson_named
from koikoi.review import move_signature
from koikoi.rules import PRESETS

EXERCISES = [(lesson, e) for lesson in LESSONS for e in lesson.exercises]
YAKU = {
    "sanko": "sanko",
    "ino-shika-cho": "ino-shika-cho",
    "tane": "tane",
    "akatan": "akatan",
    "aotan": "aotan",
    "kasu": "kasu",
    "seven": "shiko",
    "their-call": "sanko",
}


@pytest.mark.parametrize(("lesson", "exercise"), EXERCISES, ids=[f"{x.name}/{e.name}" for x, e in EXERCISES])
def test_the_right_moves_reach_the_goal_and_the_others_are_refused(lesson, exercise):
    m = lesson.position(exercise)
    obs = m.observation(0)
    assert obs.current_player == 0 and obs.phase == "play"
    done: list[int] = []
    for step in range(exercise.moves):
        obs = lesson.after(exercise, done).observation(0)
        answers = exercise.answers(step)
        assert all(a in obs.legal_actions for a in answers), (exercise.name, answers, obs.legal_actions)
        wanted = {move_signature(obs, a) for a in answers}
        for other in obs.legal_actions:
            verdict = lesson.judge(exercise, done, other)
            assert verdict.right is (move_signature(obs, other) in wanted), (exercise.name, other)
            if not verdict.right and other < KOIKOI:
                assert verdict.reason, (exercise.name, other)  # why it misses, in the review's words
        verdict = lesson.judge(exercise, done, answers[0])
        assert verdict.right and verdict.done is (step == exercise.moves - 1)
        done.append(answers[0])
    end = lesson.after(exercise, done[:-1])
    end.apply_action(done[-1])
    if exercise.name in YAKU:  # a yaku made, then a stop: the hand ends scoring it
        assert done[-1] == STOP and end.is_over()
        assert YAKU[exercise.name] in [y.name for y in end.results[0].yaku]
    else:  # the move took what the goal names: the learner's pile grew
        assert end.hand.phase in (Phase.PLAY, Phase.DRAW_CHOICE, Phase.DECISION, Phase.OVER)
        assert end.hand.piles[0] != 0


def test_a_lesson_replays_only_right_moves_and_refuses_illegal_ones():
    lesson = lesson_named("choose")
    crane = lesson.exercise("crane")
    wrong = parse_action("play pine-plain-2 take pine-plain-1")
    sanko = lesson_named("brights").exercise("sanko")
    with pytest.raises(LessonError, match="was not"):
        lesson_named("brights").after(sanko, [parse_action("play iris-plain-1")])
    with pytest.raises(LessonError, match="takes 1 moves"):
        lesson.after(crane, [wrong])
    with pytest.raises(LessonError, match="not a legal move"):
        lesson.judge(crane, [], parse_action("play paulownia-phoenix"))
    with pytest.raises(LessonError, match="no lesson 'chess'"):
        lesson_named("chess")
    with pytest.raises(LessonError, match="no exercise"):
        lesson.exercise("eagle")
    verdict = lesson.judge(crane, [], wrong)
    assert not verdict.right and any(p["kind"] == "took" for p in verdict.reason)


@pytest.mark.parametrize(("exercise", "base", "points"), [("seven", 8, 16), ("their-call", 5, 10)])
def test_the_doubles_lesson_scores_what_its_words_say(exercise, base, points):
    """The lesson's words say "16" and "10": the engine, playing the lesson's rules, agrees."""
    lesson = lesson_named("double")
    e = lesson.exercise(exercise)
    m = lesson.after(e, [e.answers(0)[0]])
    m.apply_action(e.answers(1)[0])
    result = m.results[0]
    assert (result.winner, result.base, result.points, m.scores[0]) == (0, base, points, points)


def test_the_rule_sets_lesson_shows_what_each_preset_makes_of_a_pile():
    presets = ["nintendo", "cardavia", "boardgame"]
    shown = {name: compare(pile, presets) for name, pile in RULE_EXAMPLES}
    assert shown["sake"] == {"nintendo": [("tsukimi-zake", 5)], "cardavia": [], "boardgame": []}
    assert shown["red-blue"]["nintendo"] == [("akatan-aotan", 10), ("tanzaku", 2)]
    assert shown["red-blue"]["cardavia"] == [("akatan", 6), ("aotan", 6), ("tanzaku", 2)]
    # Every example differs between some two rule sets: a page of differences, not of sameness.
    for name, pile in RULE_EXAMPLES:
        assert len({str(v) for v in compare(pile, list(PRESETS)).values()}) > 1, name
