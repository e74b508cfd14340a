"""The fast scorer (used after every turn) must agree with the full yaku evaluation everywhere."""

import random

import pytest

from koikoi.cards import SAKE_CUP
from koikoi.rules import PRESETS, preset
from koikoi.yaku import evaluate, scorer

VARIANTS = [
    *PRESETS.values(),
    preset("boardgame").replace(ino_shika_cho_plus=True),
    preset("nintendo").replace(sake_cup="either"),
    preset("traditional").replace(sake_cup="either", sake_yaku="rain_ruins"),
    preset("traditional").replace(sake_cup="animal_only", sake_yaku="not_with_brights", tsukifuda=4),
]


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: f"{r.name}-{r.sake_cup}-{r.sake_yaku}")
def test_fast_scorer_agrees_with_evaluate(rules):
    rng = random.Random(repr(rules))  # a str seed is stable across runs, unlike hash()
    total = scorer(rules)
    for _ in range(3000):
        pile = sum(1 << c for c in rng.sample(range(48), rng.randint(0, 30)))
        if rng.random() < 0.5:
            pile |= SAKE_CUP  # the sake cup is where the rule sets differ most
        month = rng.randint(1, 12)
        assert total(pile, month) == sum(y.points for y in evaluate(pile, rules, month)), (pile, month)
