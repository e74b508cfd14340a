"""Lessons: short exercises on the real table, for someone who has never played Koi-Koi.

Each lesson is a few exercises; each exercise a position set up through the engine (:meth:`Hand.set_up`:
the learner's hand, the table, what both have captured, the next card of the stock) with one goal ("take
the crane") and the moves that reach it. The learner's move is played by the engine; a move that misses
the goal is refused with why (the review's own reasons, :func:`koikoi.review.move_parts`: what it takes
or leaves instead). Where the goal takes two decisions (a yaku made, then koi-koi or stop), ``then`` names
the answers of the next ones.

The lessons go in the order a newcomer needs them: the months, matching a card, the draw, two and three
cards of a month on the table, the four kinds, each family of yaku (brights, animals, ribbons, plain
cards) with a move that completes it, the sake cup, koi-koi or stop with the risk in view, the doubling at
seven points and after the opponent's koi-koi; then (on the web) the rule sets' differences, from
:func:`compare`. Their words (goals, what a right move did) are the web app's
(``learn.<lesson>.<exercise>.*`` in its catalogs); this module holds only positions and moves, checked by
``tests/test_lessons.py``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from .actions import KOIKOI, action_name, is_action, parse_action
from .cards import CARD_NAMES, MONTH_MASKS, card, cards_mask
from .hand import Hand
from .match import Match
from .observation import Observation
from .review import move_parts, move_signature
from .rules import preset
from .yaku import evaluate

__all__ = ["Exercise", "Lesson", "LESSONS", "lesson_named", "Verdict", "LessonError", "RULE_EXAMPLES", "compare"]


class LessonError(ValueError):
    """A lesson, exercise or move that is not there: what is wrong."""


@dataclass(frozen=True)
class Exercise:
    """One position and its goal. ``hand``, ``table``, ``pile`` (the learner's captures) and
    ``their_pile`` are card names; ``draws`` the stock's first cards (by default one that takes nothing);
    ``right`` the first moves that reach the goal, in the records' notation; ``then`` the right answers of
    each decision after it, in turn."""

    name: str
    hand: tuple[str, ...]
    table: tuple[str, ...]
    right: tuple[str, ...]
    pile: tuple[str, ...] = ()
    their_pile: tuple[str, ...] = ()
    draws: tuple[str, ...] = ()
    their_hand: int | None = None  # how many cards the opponent holds (by default as many as the learner)
    calls: tuple[int, int] = (0, 0)  # koi-koi already called, the learner's first
    then: tuple[tuple[str, ...], ...] = ()
    month: int = 1

    @property
    def moves(self) -> int:
        """The learner's decisions the exercise asks for."""
        return 1 + len(self.then)

    def answers(self, done: int) -> tuple[int, ...]:
        return tuple(parse_action(a) for a in (self.right if done == 0 else self.then[done - 1]))


@dataclass(frozen=True)
class Lesson:
    name: str
    exercises: tuple[Exercise, ...]
    rules: str = "nintendo"

    def exercise(self, name: str) -> Exercise:
        for e in self.exercises:
            if e.name == name:
                return e
        raise LessonError(f"lesson {self.name!r} has no exercise {name!r}")

    def position(self, exercise: Exercise) -> Match:
        """The exercise's position: the learner is player 0 and deals."""
        rules = preset(self.rules).replace(hands=1)
        placed = [*exercise.hand, *exercise.table, *exercise.pile, *exercise.their_pile, *exercise.draws]
        ids = [card(c) for c in placed]
        if len(set(ids)) != len(ids):
            raise LessonError(f"{self.name}/{exercise.name}: a card is placed twice")
        rest = [c for c in range(len(CARD_NAMES)) if c not in ids]
        random.Random(f"{self.name}/{exercise.name}").shuffle(rest)
        table_months = cards_mask(exercise.table) | cards_mask(exercise.hand)
        # The draw after the learner's move: a card of a month neither on the table nor in the hand, so that
        # it takes nothing and asks nothing (unless the exercise names the draws).
        if not exercise.draws:
            quiet = next(c for c in rest if not MONTH_MASKS[c >> 2] & table_months)
            rest.remove(quiet)
            draws = [quiet]
        else:
            draws = [card(c) for c in exercise.draws]
        n = len(exercise.hand) if exercise.their_hand is None else exercise.their_hand
        theirs, stock = rest[:n], draws + rest[n:]
        hand = Hand.set_up(
            rules,
            hands=(cards_mask(exercise.hand), cards_mask(theirs)),
            table=cards_mask(exercise.table),
            piles=(cards_mask(exercise.pile), cards_mask(exercise.their_pile)),
            stock=stock,
            player=0,
            month=exercise.month,
            koikoi_calls=exercise.calls,
        )
        return Match.from_hand(hand, seed=0)

    def after(self, exercise: Exercise, done: Sequence[int]) -> Match:
        """The position after the right moves ``done`` (each checked: a lesson replays only right moves)."""
        if len(done) >= exercise.moves:
            raise LessonError(f"the exercise {exercise.name!r} takes {exercise.moves} moves")
        m = self.position(exercise)
        for i, action in enumerate(done):
            if action not in exercise.answers(i):
                raise LessonError(f"move {i + 1} of the exercise was not {' or '.join(exercise.right)}")
            m.apply_action(action)
        return m

    def judge(self, exercise: Exercise, done: Sequence[int], action: int) -> Verdict:
        """The learner's next move after the right ones ``done``."""
        m = self.after(exercise, done)
        obs: Observation = m.observation(0)
        if action not in obs.legal_actions:
            raise LessonError(f"{action_name(action) if is_action(action) else action} is not a legal move here")
        answers = exercise.answers(len(done))
        right = any(move_signature(obs, action) == move_signature(obs, a) for a in answers if a in obs.legal_actions)
        if not right:
            best = next(a for a in answers if a in obs.legal_actions)
            reason = move_parts(obs, action, best) if action < KOIKOI and best < KOIKOI else []
            return Verdict(False, False, tuple(reason), m)
        m.apply_action(action)
        return Verdict(True, len(done) + 1 == exercise.moves, (), m)


@dataclass(frozen=True)
class Verdict:
    """A move judged: ``right``, whether the exercise is ``done``, why a wrong one misses (the review's
    reason parts), and the match after a right one (before, after a wrong one)."""

    right: bool
    done: bool
    reason: tuple[dict[str, object], ...]
    match: Match


def _ex(
    name: str,
    hand: str,
    table: str,
    right: str,
    *,
    pile: str = "",
    their_pile: str = "",
    draws: str = "",
    their_hand: int | None = None,
    calls: tuple[int, int] = (0, 0),
    then: tuple[str, ...] = (),
) -> Exercise:
    """An exercise from space-separated card names (the positions read as a table does); ``right`` and each
    of ``then`` are comma-separated moves."""
    return Exercise(
        name,
        tuple(hand.split()),
        tuple(table.split()),
        tuple(right.split(",")),
        pile=tuple(pile.split()),
        their_pile=tuple(their_pile.split()),
        draws=tuple(draws.split()),
        their_hand=their_hand,
        calls=calls,
        then=tuple(tuple(x.split(",")) for x in then),
    )


LESSONS: tuple[Lesson, ...] = (
    Lesson(
        "months",
        (
            _ex(
                "cherry",
                "cherry-curtain iris-plain-1 maple-plain-1 willow-swallow",
                "cherry-plain-1 pine-plain-1 peony-plain-1 clover-plain-1",
                "play cherry-curtain",
            ),
            _ex(
                "pampas",
                "wisteria-plain-1 pampas-moon plum-plain-2 paulownia-plain-1",
                "pampas-plain-1 chrysanthemum-plain-1 iris-plain-2 maple-plain-2",
                "play pampas-moon",
            ),
            _ex(
                "willow",
                "pine-plain-2 clover-plain-2 willow-rainman chrysanthemum-plain-2",
                "willow-lightning cherry-plain-2 peony-plain-2 plum-plain-1",
                "play willow-rainman",
            ),
        ),
    ),
    Lesson(
        "match",
        (
            _ex(
                "one",
                "maple-deer iris-plain-1 paulownia-plain-2 wisteria-plain-2 clover-plain-1",
                "iris-bridge pine-plain-1 cherry-plain-1 peony-plain-1 pampas-plain-2 plum-plain-1",
                "play iris-plain-1",
            ),
        ),
    ),
    Lesson(
        "draw",
        (
            _ex(
                "turned",
                "iris-plain-1",
                "pine-crane plum-plain-1 maple-plain-1 peony-plain-1",
                "play iris-plain-1",
                draws="pine-plain-1",
                their_hand=1,
            ),
        ),
    ),
    Lesson(
        "choose",
        (
            _ex(
                "crane",
                "pine-plain-2 maple-plain-1 iris-plain-1",
                "pine-crane pine-plain-1 cherry-plain-1 peony-plain-1",
                "play pine-plain-2 take pine-crane",
            ),
            _ex(
                "ribbon",
                "wisteria-plain-2 chrysanthemum-plain-1 clover-plain-1",
                "wisteria-ribbon wisteria-plain-1 pampas-plain-1 paulownia-plain-1",
                "play wisteria-plain-2 take wisteria-ribbon",
            ),
        ),
    ),
    Lesson(
        "three",
        (
            _ex(
                "all",
                "pine-plain-2 maple-plain-1 iris-plain-1",
                "pine-crane pine-poetry pine-plain-1 cherry-plain-1",
                "play pine-plain-2",
            ),
        ),
    ),
    Lesson(
        "kinds",
        (
            _ex(
                "bright",
                "cherry-plain-1 maple-plain-1 iris-plain-1",
                "cherry-curtain maple-blue iris-bridge pine-plain-1",
                "play cherry-plain-1",
            ),
            _ex(
                "animal",
                "cherry-plain-1 maple-plain-1 iris-plain-1",
                "cherry-poetry maple-deer iris-ribbon pine-plain-1",
                "play maple-plain-1",
            ),
            _ex(
                "ribbon",
                "cherry-plain-1 maple-plain-1 iris-plain-1",
                "cherry-plain-2 maple-plain-2 iris-ribbon pine-plain-1",
                "play iris-plain-1",
            ),
        ),
    ),
    Lesson(
        "brights",
        (
            _ex(
                "sanko",
                "pampas-plain-1 iris-plain-1 maple-plain-1",
                "pampas-moon clover-plain-1 peony-plain-1",
                "play pampas-plain-1",
                pile="pine-crane cherry-curtain",
                then=("stop",),
            ),
        ),
    ),
    Lesson(
        "animals",
        (
            _ex(
                "ino-shika-cho",
                "peony-plain-1 iris-plain-1 pine-plain-1",
                "peony-butterflies willow-lightning cherry-plain-1",
                "play peony-plain-1",
                pile="clover-boar maple-deer",
                then=("stop",),
            ),
            _ex(
                "tane",
                "willow-lightning pine-plain-1 cherry-plain-1",
                "willow-swallow peony-plain-1 iris-plain-1",
                "play willow-lightning",
                pile="plum-warbler wisteria-cuckoo iris-bridge pampas-geese",
                then=("stop",),
            ),
        ),
    ),
    Lesson(
        "ribbons",
        (
            _ex(
                "akatan",
                "cherry-plain-1 maple-plain-1 iris-plain-1",
                "cherry-poetry clover-plain-1 willow-lightning",
                "play cherry-plain-1",
                pile="pine-poetry plum-poetry",
                then=("stop",),
            ),
            _ex(
                "aotan",
                "maple-plain-1 pine-plain-1 iris-plain-1",
                "maple-blue clover-plain-1 cherry-plain-1",
                "play maple-plain-1",
                pile="peony-blue chrysanthemum-blue",
                then=("stop",),
            ),
        ),
    ),
    Lesson(
        "plains",
        (
            _ex(
                "kasu",
                "peony-plain-2 pampas-plain-1 maple-plain-1",
                "peony-plain-1 clover-ribbon willow-swallow",
                "play peony-plain-2",
                pile="pine-plain-1 pine-plain-2 plum-plain-1 plum-plain-2 cherry-plain-1 cherry-plain-2 "
                "wisteria-plain-1 wisteria-plain-2 iris-plain-2",
                then=("stop",),
            ),
        ),
    ),
    Lesson(
        "sake",
        (
            _ex(
                "tsukimi",
                "chrysanthemum-plain-1 pine-plain-1 iris-plain-1",
                "chrysanthemum-sake clover-plain-1 cherry-plain-1",
                "play chrysanthemum-plain-1",
                pile="pampas-moon",
                then=("stop",),
            ),
        ),
    ),
    Lesson(
        "koikoi",
        (
            # A yaku made, and the opponent one card short of theirs: stopping keeps the points.
            _ex(
                "risk",
                "pampas-plain-1 iris-plain-1 maple-plain-1",
                "pampas-moon clover-plain-1 peony-plain-1",
                "play pampas-plain-1",
                pile="pine-crane cherry-curtain",
                their_pile="clover-boar maple-deer pine-poetry plum-poetry",
                then=("stop",),
            ),
            # A yaku made on the first turn, eight cards in hand, nothing on the opponent's side: play on.
            _ex(
                "call",
                "pampas-plain-1 iris-plain-1 maple-plain-1 wisteria-plain-1 clover-plain-2 paulownia-plain-1 "
                "chrysanthemum-plain-1 plum-plain-1",
                "pampas-moon peony-plain-1 cherry-plain-1 willow-swallow",
                "play pampas-plain-1",
                pile="pine-crane cherry-curtain",
                then=("koikoi",),
            ),
        ),
    ),
    Lesson(
        "double",
        (
            # Sanko already called on: the fourth bright makes shiko, 8 points, seven or more: doubled.
            _ex(
                "seven",
                "pampas-plain-1 iris-plain-1 maple-plain-1",
                "pampas-moon clover-plain-1 peony-plain-1",
                "play pampas-plain-1",
                pile="pine-crane cherry-curtain paulownia-phoenix",
                calls=(1, 0),
                then=("stop",),
            ),
            # The opponent called koi-koi on their tane: sanko's 5 points, doubled by the call.
            _ex(
                "their-call",
                "pampas-plain-1 iris-plain-1 maple-plain-1",
                "pampas-moon clover-plain-1 peony-plain-1",
                "play pampas-plain-1",
                pile="pine-crane cherry-curtain",
                their_pile="plum-warbler wisteria-cuckoo iris-bridge cherry-poetry clover-boar",
                calls=(0, 1),
                then=("stop",),
            ),
        ),
    ),
)

# The rule sets' differences, shown on piles of captured cards (the web app's "rule sets" lesson): each
# example's yaku and points under every preset come from the engine (:func:`compare`), not from words.
RULE_EXAMPLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("sake", ("pampas-moon", "chrysanthemum-sake")),
    ("rainy", ("pine-crane", "cherry-curtain", "pampas-moon", "willow-rainman")),
    ("boar-deer", ("clover-boar", "maple-deer", "peony-butterflies", "plum-warbler", "iris-bridge")),
    ("poetry", ("pine-poetry", "plum-poetry", "cherry-poetry", "iris-ribbon", "clover-ribbon")),
    ("red-blue", ("pine-poetry", "plum-poetry", "cherry-poetry", "peony-blue", "chrysanthemum-blue", "maple-blue")),
)


def compare(pile: Sequence[str], presets: Sequence[str]) -> dict[str, list[tuple[str, int]]]:
    """What each rule set makes of a pile of captured cards: its yaku and their points, in the engine's
    order (no yaku: an empty list)."""
    mask = cards_mask(pile)
    return {name: [(y.name, y.points) for y in evaluate(mask, preset(name))] for name in presets}


def lesson_named(name: str) -> Lesson:
    for lesson in LESSONS:
        if lesson.name == name:
            return lesson
    raise LessonError(f"no lesson {name!r}; the lessons are {', '.join(x.name for x in LESSONS)}")
