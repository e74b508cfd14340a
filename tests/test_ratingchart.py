"""The rating chart of a player's page (koikoi.web.ratingchart): a valid SVG, escaped, bounded."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from koikoi.web.ratingchart import MAX_POINTS, Point, rating_chart

SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def test_a_history_is_a_line_inside_its_band():
    points = [Point(1_700_000_000 + 86400 * i, 1500 + 20 * i, 300 - 25 * i) for i in range(10)]
    root = parse(rating_chart(points, "Ann: short"))
    line = root.find(f"{SVG}polyline")
    band = root.find(f"{SVG}polygon")
    assert line is not None and band is not None
    ys = [float(p.split(",")[1]) for p in line.get("points", "").split()]
    assert len(ys) == 10 and ys == sorted(ys, reverse=True)  # rising rating: the line goes up the page
    assert len(band.get("points", "").split()) == 20
    labels = [t.text for t in root.iter(f"{SVG}text")]
    assert "2023-11-14" in labels and root.find(f"{SVG}title").text == "Ann: short"


def test_one_point_and_none():
    one = parse(rating_chart([Point(0, 1500, 500)], "x"))
    assert one.find(f"{SVG}circle") is not None and one.find(f"{SVG}polyline") is None
    empty = parse(rating_chart([], "no rated games yet"))
    assert empty.find(f"{SVG}circle") is None


def test_the_title_is_escaped_and_the_points_bounded():
    svg = rating_chart([Point(i, 1500, 100) for i in range(MAX_POINTS * 3)], '<script>alert("x")</script>')
    root = parse(svg)
    assert "<script>" not in svg and root.find(f"{SVG}script") is None
    assert len(root.find(f"{SVG}polyline").get("points", "").split()) == MAX_POINTS
