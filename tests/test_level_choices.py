"""Every level plays as it did: the same seeds give the same choices and the same ranked values.

The cases and their frozen results are in ``tests/golden/make_level_choices.py`` and
``tests/golden/level-choices.json`` (each level, hard's documented options, several rule presets). A
failure means a level now plays differently. If that is intended, regenerate with
``python3 tests/golden/make_level_choices.py`` and review the diff before committing.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"
_spec = importlib.util.spec_from_file_location("make_level_choices", GOLDEN / "make_level_choices.py")
make_level_choices = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_level_choices)

FROZEN = json.loads(make_level_choices.GOLDEN.read_text())


def test_the_golden_file_holds_every_case():
    assert [(c["level"], c["options"], c["rules"], c["seed"]) for c in FROZEN] == [
        (lv, opts, r, s) for lv, opts, r, s, _ in make_level_choices.CASES
    ]


@pytest.mark.parametrize("case", FROZEN, ids=lambda c: f"{c['level']}-{c['rules']}-{c['seed']}")
def test_a_level_chooses_as_it_did(case):
    got = make_level_choices.play(case["level"], case["options"], case["rules"], case["seed"], len(case["rankings"]))
    got = json.loads(json.dumps(got))  # the frozen file's types: lists, not tuples
    for ply, (want, now) in enumerate(zip(case["rankings"], got)):
        assert now == want, f"ply {ply}: {case['level']} {case['options']} now chooses/ranks {now}, was {want}"
