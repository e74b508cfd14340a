"""Golden games: replay the frozen records and compare every step with the frozen transcript.

A failure means the engine now behaves differently. If the change is intended, regenerate with
``python3 tests/golden/make_golden.py`` and review the diff of ``tests/golden/`` before committing.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from koikoi.records import read_record, replay

GOLDEN = Path(__file__).resolve().parent / "golden"
_spec = importlib.util.spec_from_file_location("make_golden", GOLDEN / "make_golden.py")
make_golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_golden)

REGENERATE = "if the change is intended, run python3 tests/golden/make_golden.py and review the diff"


def first_difference(expected: list[dict], actual: list[dict]) -> str | None:
    """A readable account of the first step where two transcripts differ, or None."""
    for k, (want, got) in enumerate(zip(expected, actual)):
        if want != got:
            lines = [f"step {k} (hand {want.get('hand')}, player {want.get('player')}) differs:"]
            for key in dict.fromkeys([*want, *got]):
                if want.get(key) != got.get(key):
                    lines.append(f"  {key}:")
                    lines.append(f"    - expected: {json.dumps(want.get(key, '<missing>'), ensure_ascii=False)}")
                    lines.append(f"    + actual:   {json.dumps(got.get(key, '<missing>'), ensure_ascii=False)}")
            lines.append(f"  same: {', '.join(k for k in want if want.get(k) == got.get(k))}")
            return "\n".join(lines)
    if len(expected) != len(actual):
        k = min(len(expected), len(actual))
        extra = expected[k] if len(expected) > k else actual[k]
        which = "expected" if len(expected) > k else "actual"
        return (
            f"the transcripts agree for {k} steps, then the {which} one goes on "
            f"({len(expected)} expected steps, {len(actual)} actual); next {which} step: "
            f"{json.dumps(extra, ensure_ascii=False)}"
        )
    return None


@pytest.mark.parametrize("name", list(make_golden.GAMES))
def test_golden_transcript(name):
    record = read_record(GOLDEN / f"{name}.record.json")
    path = GOLDEN / f"{name}.transcript.jsonl"
    expected = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    actual = make_golden.transcript(record)
    problem = first_difference(expected, actual)
    assert problem is None, f"{path.name}: {problem}\n({REGENERATE})"
    replay(record)  # every hand's result and the outcome as recorded


@pytest.mark.parametrize("name", list(make_golden.GAMES))
def test_golden_game_plays_the_same_today(name):
    """Playing the golden game afresh (same seeds, same random players) gives the frozen record."""
    stored = read_record(GOLDEN / f"{name}.record.json").to_dict()
    fresh = make_golden.play(name).to_dict()
    assert fresh["metadata"] == stored["metadata"]  # fixed by the script, so files don't churn
    for key in stored:
        assert fresh[key] == stored[key], f"{name}: {key} differs from the golden record ({REGENERATE})"


def test_goldens_cover_the_rules_they_are_meant_to():
    """The frozen games keep exercising what they were chosen for."""
    games = {name: read_record(GOLDEN / f"{name}.record.json") for name in make_golden.GAMES}
    actions = {name: [a for h in g.hands for a in h.actions] for name, g in games.items()}
    reasons = {name: {h.result["reason"] for h in g.hands} for name, g in games.items()}
    assert "declare" in actions["traditional"] and "exhausted" in reasons["traditional"]
    assert any(len(h.deals) > 1 for h in games["bga"].hands)
    assert any(h.result["multiplier"] > 1 for h in games["bga"].hands)
    assert games["boardgame"].outcome["reason"] == "target"
    assert any(y["name"] == "tsukifuda" for h in games["boardgame"].hands for y in h.result["yaku"])
    assert actions["cardavia"].count("koikoi") == 3
    kkj = games["koikoi-japan"]
    assert any(len(h.deals) > 1 for h in kkj.hands) and "exhausted" in reasons["koikoi-japan"]
    stopped = [y for h in kkj.hands for y in h.result["yaku"]]
    assert any(y["name"] == "koikoi" for y in stopped)
    assert any(y["name"].endswith("-zake") and y["points"] == 3 for y in stopped)
    assert all(any(a.startswith("take ") for a in acts) for acts in actions.values())


def test_first_difference_points_at_the_step_and_field():
    a = [
        {"step": 0, "hand": 1, "player": 0, "action": "play pine-crane"},
        {"step": 1, "hand": 1, "player": 1, "action": "stop"},
    ]
    b = [a[0], {**a[1], "action": "koikoi"}]
    message = first_difference(a, b)
    assert message.startswith("step 1 (hand 1, player 1) differs:")
    assert '- expected: "stop"' in message and '+ actual:   "koikoi"' in message
    assert "same: step, hand, player" in message
    assert "then the expected one goes on" in first_difference(a, a[:1])
    assert first_difference(a, list(a)) is None
