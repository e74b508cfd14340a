"""benchmarks/evidence.py: the readings of the opponent's play scored against their real hand. Against
easy, which never passes up a capture, a discard beside a month is never wrong."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import evidence  # noqa: E402


def test_a_discard_beside_a_month_says_easy_holds_none_of_it():
    counts = evidence.tally("easy", 12, 3, {})
    base, discarded, passed = counts
    assert sum(base) > 1000 and 0.1 < base[1] / sum(base) < 0.4  # the opponent holds some unseen cards
    assert discarded[0] > 50 and discarded[1] == 0  # flagged often, never held
    assert sum(passed) > 50 and passed[1] / sum(passed) < base[1] / sum(base)


def test_it_reports_and_refuses_an_unknown_opponent(capsys):
    assert evidence.main(["--opponent", "random", "--matches", "2"]) == 0
    out = capsys.readouterr().out
    assert "the opponent random, 2 matches" in out and "all unseen cards:" in out and "held" in out
    with pytest.raises(SystemExit):
        evidence.main(["--opponent", "nobody"])
