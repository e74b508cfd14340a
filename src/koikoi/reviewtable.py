"""A game review (:func:`koikoi.review.review_record`) as the table ``koikoi review`` prints, laid out for a
width: each column as wide as its content when that fits; else the moves and the reason wrap, at spaces
only, never narrower than their longest word, so that a card name is never split across lines; and
where even that is too wide (80 columns), the marks and the reason leave the table for a line of their
own under their decision's row, as wide as the screen.

>>> from koikoi.render import to_text
>>> doc = {"decisions": [{"hand": 1, "move": 6,
...     "played": {"action": 1, "name": "play pine-plain-1", "points": -9.29, "stderr": 0.31},
...     "best": {"action": 0, "name": "play pine-crane", "points": -0.79, "stderr": 0.2}, "loss": 8.49,
...     "loss_stderr": 0.37, "marks": ["mistake"], "reason": "left the crane for the opponent's sanko"}]}
>>> for line in to_text(review_table(doc, 60), width=60).splitlines():
...     print(line.rstrip())
hand  move  played        value  best           value   loss
   1     6  play          -9.29  play           -0.79   8.49
            pine-plain-1  ±0.31  pine-crane     ±0.20  ±0.37
            mistake: left the crane for the opponent's sanko
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

__all__ = ["review_table"]

GAP = 2  # cells between two columns
# (header, justify, figures): figures keep their width; the other columns may wrap between words.
COLUMNS = (
    ("hand", "right", True),
    ("move", "right", True),
    ("played", "left", False),
    ("value", "right", True),
    ("best", "left", False),
    ("value", "right", True),
    ("loss", "right", True),
    ("mark", "left", False),
    ("reason", "left", False),
)
PLAYED, BEST, MARK, REASON = 2, 4, 7, 8
READABLE_REASON = 40  # a reason column narrower than this reads badly: the reason goes under its row


def _value(x: float, stderr: float | None, sep: str, *, signed: bool = True) -> str:
    # A value with its standard error: "+1.97 ±0.29" (an exact one, a stop, has none; a review of
    # version 1 has no errors: "±?"). ``sep`` "\n" puts the error under the value, on a narrow screen.
    text = f"{x:+.2f}" if signed else f"{x:.2f}"
    if stderr is None:
        return f"{text}{sep}±?"
    return text if stderr == 0 else f"{text}{sep}±{stderr:.2f}"


def _cells(e: dict[str, Any], sep: str = " ") -> list[str]:
    same = e["best"]["action"] == e["played"]["action"]
    marks = ", ".join(e["marks"]) or ("within noise" if e.get("verdict") == "equal" else "")
    return [
        str(e["hand"]),
        str(e["move"]),
        e["played"]["name"],
        _value(e["played"]["points"], e["played"].get("stderr"), sep),
        "=" if same else e["best"]["name"],
        "" if same else _value(e["best"]["points"], e["best"].get("stderr"), sep),
        "" if same else _value(e["loss"], e.get("loss_stderr"), sep, signed=False),
        marks,
        e["reason"],
    ]


def _style(e: dict[str, Any]) -> str | None:
    return "bold red" if e["marks"] else ("yellow" if e.get("verdict") == "worse" else None)


def _cell_width(text: str) -> int:
    return max((cell_len(line) for line in text.split("\n")), default=0)


def _longest_word(text: str) -> int:
    return max((cell_len(w) for w in text.split()), default=0)


def _natural_width(rows: Sequence[list[str]], columns: Sequence[int]) -> int:
    """The width of ``columns`` with every cell on one line."""
    cells = sum(max([cell_len(COLUMNS[c][0])] + [_cell_width(r[c]) for r in rows]) for c in columns)
    return cells + GAP * (len(columns) - 1)


def _widths(rows: Sequence[list[str]], columns: Sequence[int], width: int, *, force: bool = False) -> list[int] | None:
    """Widths for ``columns`` (indices into :data:`COLUMNS`) within ``width``: each as wide as its content
    if all fit, else the wrapping columns shrunk toward their longest word: the reason first (down to
    :data:`READABLE_REASON`), then the marks, then the moves, but only where there is no reason (the
    reason goes under its row rather than the moves being wrapped); None when even that is too wide
    (``force``: those least widths all the same)."""
    natural = {c: max([cell_len(COLUMNS[c][0])] + [_cell_width(r[c]) for r in rows]) for c in columns}
    least = {
        c: natural[c] if COLUMNS[c][2] else max([cell_len(COLUMNS[c][0])] + [_longest_word(r[c]) for r in rows])
        for c in columns
    }
    if REASON in columns:
        least[REASON] = max(least[REASON], min(natural[REASON], READABLE_REASON))
    room = width - GAP * (len(columns) - 1)
    widths = dict(natural)
    for group in ((REASON,), (MARK,)) if REASON in columns else ((PLAYED, BEST),):
        excess = sum(widths.values()) - room
        shrinking = [c for c in group if c in columns]
        while excess > 0 and shrinking:
            # One cell at a time from the widest of the group that can still give one.
            c = max((c for c in shrinking if widths[c] > least[c]), key=lambda c: widths[c], default=None)
            if c is None:
                break
            widths[c] -= 1
            excess -= 1
    if sum(widths.values()) > room:
        if not force:
            return None
        # Narrower than the longest names: the figures keep their width, the rest is shared by the others
        # after their longest words, so that the names fold rather than the figures.
        words = [c for c in columns if not COLUMNS[c][2]]
        share = max(len(words), room - sum(widths[c] for c in columns if COLUMNS[c][2]))
        total = sum(least[c] for c in words) or 1
        for c in words:
            widths[c] = max(1, share * least[c] // total)
    return [widths[c] for c in columns]


def _table(columns: Sequence[int], widths: Sequence[int], *, header: bool) -> Table:
    table = Table(box=None, padding=(0, 1), pad_edge=False, show_header=header, header_style="bold")
    for c, w in zip(columns, widths):
        name, justify, _figures = COLUMNS[c]
        table.add_column(name, justify=justify, width=w, overflow="fold")  # type: ignore[arg-type]
    return table


def review_table(doc: dict[str, Any], width: int) -> RenderableType:
    """The review's decisions as a table of at most ``width`` columns (see the module's description)."""
    entries = doc["decisions"]
    rows = [_cells(e) for e in entries]
    # A column no decision fills (no mistake, so no mark) is left out.
    everything = [c for c in range(len(COLUMNS)) if c not in (MARK, REASON) or any(r[c] for r in rows)]
    widths = _widths(rows, everything, width)
    if widths is not None:
        table = _table(everything, widths, header=True)
        for e, r in zip(entries, rows):
            table.add_row(*(r[c] for c in everything), style=_style(e))
        return table
    # Too narrow for the reason beside the moves: it goes under its row, after the marks.
    columns = [c for c in everything if c not in (MARK, REASON)]
    if _natural_width(rows, columns) > width:  # the standard errors go under their values, before a move wraps
        rows = [_cells(e, "\n") for e in entries]
    widths = _widths(rows, columns, width)
    if widths is None:  # narrower than the longest card names: Rich narrows the columns, as nothing else fits
        widths = _widths(rows, columns, width, force=True)
        assert widths is not None
    indent = sum(widths[: columns.index(PLAYED)]) + GAP * columns.index(PLAYED)
    parts: list[RenderableType] = [_table(columns, widths, header=True)]
    for e, r in zip(entries, rows):
        row = _table(columns, widths, header=False)
        row.add_row(*(r[c] for c in columns), style=_style(e))
        parts.append(row)
        why = ": ".join(x for x in (r[MARK], r[REASON]) if x)
        if why:
            parts.append(Padding(Text(why, style=_style(e) or ""), (0, 0, 0, indent)))
    return Group(*parts)
