"""``koikoi review`` at the width of the terminal (issue 33, item 8): at 80 columns the table split card
names ('paulownia-pla' / 'in-2') while empty columns took the space. Now a column is as wide as its
content, a column no decision fills is left out, the moves wrap between words only, and where the
reason does not fit beside the moves it goes under its row.

A card name split across lines leaves a piece with a hyphen that is no name ('paulownia-pla',
'-crane'): every word with a hyphen on the screen must be a whole card name, a yaku or a figure."""

from __future__ import annotations

import os
import re
import shutil

import pytest
from test_review import BUDGET, bright_blunder, koikoi_blunder

from koikoi.cards import CARD_NAMES
from koikoi.records import write_record
from koikoi.render import to_text
from koikoi.review import review_record
from koikoi.reviewtable import review_table
from koikoi.yaku import YAKU_NAMES

# The module's tests share what its module-scoped fixtures make: one worker runs them all, and makes it once.
pytestmark = pytest.mark.xdist_group("test_review_layout")

KOIKOI = shutil.which("koikoi")
FIGURE = re.compile(r"[+-]?\d+(?:\.\d+)?")
WHOLE = {*CARD_NAMES, *YAKU_NAMES, "koi-koi", "akatan-aotan"}


def split_words(lines: list[str]) -> list[str]:
    """The words with a hyphen that are neither a card's nor a yaku's name nor a figure (nor the record's
    path): pieces of a name broken across lines."""
    words = [w.strip(",.:;()") for line in lines for w in line.split()]
    return [w for w in words if "-" in w and "/" not in w and w not in WHOLE and not FIGURE.fullmatch(w)]


def names_in(doc: dict) -> set[str]:
    """The card names the review's moves and reasons mention."""
    text = " ".join(f"{e['played']['name']} {e['best']['name']} {e['reason']}" for e in doc["decisions"])
    return {w.strip(",.:;()") for w in text.split()} & set(CARD_NAMES)


@pytest.fixture(scope="module")
def reviewed() -> list[tuple[object, dict]]:
    out = []
    for make in (bright_blunder, koikoi_blunder):
        record = make()[0]
        out.append((record, review_record(record, 0, playouts=BUDGET)))
    return out


@pytest.mark.parametrize("width", [60, 72, 80, 100, 120, 160, 220])
def test_the_table_fits_the_width_and_never_splits_a_card_name(reviewed, width):
    for _record, doc in reviewed:
        lines = to_text(review_table(doc, width), width=width).splitlines()
        assert all(len(line.rstrip()) <= width for line in lines)
        if width >= 80:  # from the width of the longest names side by side (76 here) nothing is folded
            assert split_words(lines) == [], "\n".join(lines)
            for name in names_in(doc):
                assert any(name in line for line in lines), name
        # Every decision has its row, with its figures.
        for e in doc["decisions"]:
            assert any(
                f"{e['played']['points']:+.2f}" in line and line.split()[:2] == [str(e["hand"]), str(e["move"])]
                for line in lines
            ), (e, "\n".join(lines))
        header = lines[0].split()
        assert header[:7] == ["hand", "move", "played", "value", "best", "value", "loss"]
        # The reason beside the moves where it has the room, else on a line under its row.
        marked = [e for e in doc["decisions"] if e["marks"]]
        assert header[7:] == (["mark", "reason"] if width >= 220 else []) or 80 < width < 220, header
        if header[7:] != ["mark", "reason"]:
            assert header[7:] == []
            for e in marked:
                start = ", ".join(e["marks"]) + ": " + e["reason"].split()[0]
                assert any(line.strip().startswith(start) for line in lines), (start, "\n".join(lines))


def test_a_column_no_decision_fills_is_left_out(reviewed):
    doc = dict(reviewed[0][1])
    # No mistake and nothing within noise: the mark column has nothing to say.
    doc["decisions"] = [dict(e, marks=[], verdict="worse") for e in doc["decisions"]]
    assert to_text(review_table(doc, 300), width=300).splitlines()[0].split() == [
        "hand",
        "move",
        "played",
        "value",
        "best",
        "value",
        "loss",
        "reason",
    ]
    doc["decisions"] = [dict(e, reason="") for e in doc["decisions"]]
    assert to_text(review_table(doc, 300), width=300).splitlines()[0].split()[-1] == "loss"


@pytest.mark.skipif(KOIKOI is None, reason="the koikoi console script is not installed")
def test_koikoi_review_at_80_columns(reviewed, tmp_path):
    """The command in an 80-column pseudo-terminal (the screen read back with pyte): lines wrapped between
    words, no card name split."""
    pexpect = pytest.importorskip("pexpect")
    pyte = pytest.importorskip("pyte")
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["TERM"] = "xterm-256color"
    for i, (record, doc) in enumerate(reviewed):
        path = tmp_path / f"g{i}.json"
        write_record(record, path)
        screen = pyte.Screen(80, 100)
        child = pexpect.spawn(KOIKOI, ["review", str(path), "--budget", str(BUDGET)], dimensions=(100, 80), env=env)
        try:
            child.expect(pexpect.EOF, timeout=120)
            pyte.ByteStream(screen).feed(child.before)
        finally:
            child.close(force=True)
        lines = [line.rstrip() for line in screen.display if line.strip()]
        assert lines[0].startswith("Review of Aiko (player 0) in") and "playouts" in " ".join(lines[:3])
        assert all(len(line) <= 80 for line in lines), "\n".join(lines)
        assert split_words(lines) == [], "\n".join(lines)
        for name in names_in(doc):
            assert any(name in line for line in lines), (name, "\n".join(lines))
        # The summary, wrapped between words.
        start = next(i for i, line in enumerate(lines) if line.startswith(f"{doc['summary']['decisions']} decisions "))
        summary = " ".join(lines[start:])
        assert summary.startswith(f"{doc['summary']['decisions']} decisions with a choice; ")
        assert "1 point lost" in summary
