"""A player's rating over time, drawn as an inline SVG for their page (no chart library, no script).

The line is the rating after each rated match; the band around it is the rating's deviation (RD), so a
new player's wide, uncertain start narrows as they play. Text in the SVG is escaped here: a chart's
title carries a player's name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape

__all__ = ["Point", "rating_chart"]

WIDTH, HEIGHT = 600, 200
_LEFT, _RIGHT, _TOP, _BOTTOM = 44, 8, 10, 22  # room for the rating labels on the left, dates below
MAX_POINTS = 500  # the most recent; a page draws no more than this many


@dataclass(frozen=True)
class Point:
    at: float  # seconds since the epoch
    rating: float
    rd: float


def rating_chart(points: Sequence[Point], title: str) -> str:
    """The SVG (a string to put in the page as is) of ``points``, oldest first; a chart with one
    point is a dot, and with none, an empty frame that says so through its title."""
    points = list(points)[-MAX_POINTS:]
    head = (
        f'<svg class="rating-chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
        f'<rect x="{_LEFT}" y="{_TOP}" width="{WIDTH - _LEFT - _RIGHT}" height="{HEIGHT - _TOP - _BOTTOM}" '
        'class="frame"/>'
    )
    if not points:
        return head + "</svg>"
    lo = min(p.rating - p.rd for p in points)
    hi = max(p.rating + p.rd for p in points)
    lo, hi = _round_down(lo), _round_up(hi)
    if hi - lo < 100:
        hi = lo + 100
    t0, t1 = points[0].at, points[-1].at
    inner_w, inner_h = WIDTH - _LEFT - _RIGHT, HEIGHT - _TOP - _BOTTOM

    def x(i: int) -> float:
        # Evenly spaced by match, not by date: a month away from the game is not a gap in the line.
        return _LEFT + (inner_w * i / (len(points) - 1) if len(points) > 1 else inner_w / 2)

    def y(r: float) -> float:
        return _TOP + inner_h * (hi - r) / (hi - lo)

    upper = [f"{x(i):.1f},{y(p.rating + p.rd):.1f}" for i, p in enumerate(points)]
    lower = [f"{x(i):.1f},{y(p.rating - p.rd):.1f}" for i, p in reversed(list(enumerate(points)))]
    line = [f"{x(i):.1f},{y(p.rating):.1f}" for i, p in enumerate(points)]
    parts = [head]
    for r in (lo, (lo + hi) / 2, hi):
        parts.append(
            f'<text x="{_LEFT - 4}" y="{y(r) + 4:.1f}" class="axis" text-anchor="end">{round(r)}</text>'
            f'<line x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{y(r):.1f}" y2="{y(r):.1f}" class="grid"/>'
        )
    parts.append(f'<text x="{_LEFT}" y="{HEIGHT - 6}" class="axis">{_date(t0)}</text>')
    if len(points) > 1:
        parts.append(f'<text x="{WIDTH - _RIGHT}" y="{HEIGHT - 6}" class="axis" text-anchor="end">{_date(t1)}</text>')
        parts.append(f'<polygon points="{" ".join(upper + lower)}" class="band"/>')
        parts.append(f'<polyline points="{" ".join(line)}" class="line" fill="none"/>')
    last = points[-1]
    parts.append(f'<circle cx="{x(len(points) - 1):.1f}" cy="{y(last.rating):.1f}" r="3" class="dot"/>')
    parts.append("</svg>")
    return "".join(parts)


def _round_down(r: float) -> float:
    return float(int(r // 50) * 50)


def _round_up(r: float) -> float:
    return float(-int(-r // 50) * 50)


def _date(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d")
