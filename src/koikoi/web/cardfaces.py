"""Our own hanafuda card faces, drawn as small standalone SVG documents by code.

Every face is a cream card with a thin dark edge (the colour of the back, as if the
back paper were folded over the front, as on real cards), the month's plant drawn
in flat traditional colours, the special picture of brights, animals and ribbons,
a tiny kind badge in the top right corner (gold disc: bright, brown diamond:
animal, slip: ribbon, ring: plain) and the month number in the top left corner.
No images, fonts beyond the generic families, ids or external references are used,
so a face can be served as a file, used in an ``<img>`` or inlined in a page.

>>> svg = card_svg(0)
>>> svg.startswith("<svg") and "<title>pine-crane</title>" in svg
True
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from xml.sax.saxutils import escape

from koikoi.cards import CARD_NAMES, NUM_CARDS, Kind, kind_of, month_of

__all__ = ["card_svg", "card_back_svg", "all_card_svgs", "PLANT_COLOURS"]

CREAM = "#f6efdc"
EDGE = "#5c1d18"
INK = "#1d1a17"
RED = "#c8252c"
GOLD = "#d9a521"
WHITE = "#fffdf6"
BLUE_RIBBON = "#2f3f94"

# The main colour of each month's plant: it appears on all four cards of the month and
# on no card of another month (tests rely on it).
PLANT_COLOURS: dict[int, str] = {
    1: "#2e6a36",  # pine needles
    2: "#d3344b",  # plum blossoms
    3: "#f3a5bb",  # cherry blossoms
    4: "#6c4a9d",  # wisteria clusters
    5: "#4a3a99",  # iris flowers
    6: "#d7214b",  # peony
    7: "#b5356d",  # bush clover flowers
    8: "#2b2620",  # pampas hill
    9: "#f2b705",  # chrysanthemum petals
    10: "#cf2b1f",  # maple leaves
    11: "#6f9a3a",  # willow leaves
    12: "#8a5cb8",  # paulownia flowers
}
MIRROR = 'transform="matrix(-1 0 0 1 100 0)"'


def _n(v: float) -> str:
    """A coordinate with at most one decimal."""
    s = f"{v:.1f}"
    return s[:-2] if s.endswith(".0") else s


def _g(body: str, attrs: str = "") -> str:
    return f"<g {attrs}>{body}</g>" if attrs else body


def _path(d: str, fill: str = "none", extra: str = "") -> str:
    return f'<path d="{d}" fill="{fill}"{" " + extra if extra else ""}/>'


def _stroke(d: str, colour: str, width: float, extra: str = "") -> str:
    return _path(
        d,
        "none",
        f'stroke="{colour}" stroke-width="{_n(width)}" stroke-linecap="round"' + (" " + extra if extra else ""),
    )


def _circle(x: float, y: float, r: float, fill: str, extra: str = "") -> str:
    return f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(r)}" fill="{fill}"{" " + extra if extra else ""}/>'


def _ellipse(x: float, y: float, rx: float, ry: float, fill: str, angle: float = 0, extra: str = "") -> str:
    rot = f' transform="rotate({_n(angle)} {_n(x)} {_n(y)})"' if angle else ""
    return (
        f'<ellipse cx="{_n(x)}" cy="{_n(y)}" rx="{_n(rx)}" ry="{_n(ry)}" fill="{fill}"{rot}'
        f"{' ' + extra if extra else ''}/>"
    )


def _ring_dots(x: float, y: float, r: float, n: int, width: float, colour: str, fill: str | None = None) -> str:
    """``n`` round dots of diameter ``width`` on a circle of radius ``r``: petals, drums, bristles."""
    gap = 2 * math.pi * r / n
    return _circle(
        x,
        y,
        r,
        fill or "none",
        f'stroke="{colour}" stroke-width="{_n(width)}" stroke-dasharray="0 {gap:.2f}" stroke-linecap="round"',
    )


def _blossom(x: float, y: float, r: float, petal: str, centre: str) -> str:
    """A five-petalled blossom (plum, cherry)."""
    return _ring_dots(x, y, r, 5, r * 1.5, petal, petal) + _circle(x, y, r * 0.4, centre)


def _star(x: float, y: float, r_out: float, r_in: float, points: int, angle: float = -90) -> str:
    """The ``d`` of a star polygon (maple leaves, the lightning drum ring)."""
    pts = []
    for i in range(points * 2):
        r = r_out if i % 2 == 0 else r_in
        a = math.radians(angle + 180 * i / points)
        pts.append(f"{_n(x + r * math.cos(a))} {_n(y + r * math.sin(a))}")
    return "M" + "L".join(pts) + "Z"


def _leaf(x: float, y: float, length: float, width: float, angle: float, fill: str) -> str:
    """A pointed leaf from (x, y) pointing at ``angle`` degrees."""
    a = math.radians(angle)
    ex, ey = x + length * math.cos(a), y + length * math.sin(a)
    mx, my = (x + ex) / 2, (y + ey) / 2
    nx, ny = -math.sin(a) * width, math.cos(a) * width
    return _path(
        f"M{_n(x)} {_n(y)}Q{_n(mx + nx)} {_n(my + ny)} {_n(ex)} {_n(ey)}Q{_n(mx - nx)} {_n(my - ny)} {_n(x)} {_n(y)}Z",
        fill,
    )


def _glyphs(strokes: list[str], x: float, y: float, size: float, colour: str, width: float = 1.2) -> str:
    """Brush-drawn characters: ``strokes`` are path data in a 10 x 10 box, stacked downwards."""
    out = []
    for i, d in enumerate(strokes):
        out.append(f'<path transform="translate({_n(x)} {_n(y + i * size * 1.1)}) scale({size / 10:.2f})" d="{d}"/>')
    return _g(
        "".join(out),
        f'fill="none" stroke="{colour}" stroke-width="{_n(width * 10 / size)}" '
        'stroke-linecap="round" stroke-linejoin="round"',
    )


# Our own simplified brush strokes for the few characters the cards carry.
_KANA = {
    "a": "M2 3H8M4.5 1Q4 6 6 9.5M6.8 4.5Q5 8.8 2.6 8.2Q1 7.3 3.8 5.6Q7.5 4.4 8.6 6.8Q9 9 6 9.6",
    "ka": "M1 4H7Q8.2 4 7.6 7.2Q7.2 9.6 5.6 8.6M4.5 1.5Q4 6 1.5 9.5M8.6 2.8L9.6 5.4",
    "yo": "M5 1V8.4M5 4.2H8.2M5 8Q2 6.4 2.4 8.4Q3.4 10.2 8.4 8.6",
    "ro": "M2.6 2H7L3 6.2Q6 4.6 8 6.6Q8.6 9.2 4 9.6",
    "shi": "M4 1V7Q4 9.6 6.6 9Q8 8.6 8.6 7",
    "mi": "M2 2H5.6Q3 6 2 8Q1.6 9.6 3.6 8.6Q6 7 8.6 6M7 3.6Q7 7 6.4 9.6",
    "no": "M5.6 3Q4 8 2.6 8.6Q1 8.6 1.6 6Q2.6 2.6 6 2.6Q9 3 8.6 6.6Q8 8.6 6 9.6",
    "kotobuki": "M2 2.4H8M2.6 3.9H7.4M1 5.4H9M5 1V5.4Q4 8.2 1 9.6M3.6 7.1H9.6M8 5.8V9.4Q8 10 6.9 9.5M5 8L6 9",
}


# ----------------------------------------------------------------------------- plants


def _pine_pad(x: float, y: float, r: float) -> str:
    """A fan of pine needles."""
    d = f"M{_n(x - r)} {_n(y)}A{_n(r)} {_n(r)} 0 0 1 {_n(x + r)} {_n(y)}Z"
    h = r / 2
    needles = f"M{_n(x - h)} {_n(y)}A{_n(h)} {_n(h)} 0 0 1 {_n(x + h)} {_n(y)}"
    return _path(d, PLANT_COLOURS[1]) + _path(
        needles, "none", f'stroke="#17401f" stroke-width="{_n(r - 1)}" stroke-dasharray=".7 1.3"'
    )


def _pine(special: bool = False) -> str:
    trunk = _path("M20 156Q38 116 30 84Q24 60 48 38L53 42Q34 62 39 86Q46 120 33 156Z", "#3b271b")
    branches = (
        _stroke("M36 92Q52 84 70 66", "#3b271b", 3)
        + _stroke("M33 116Q48 112 62 104", "#3b271b", 2.5)
        + _stroke("M31 70Q22 66 16 70", "#3b271b", 2.5)
    )
    pads = [(50, 38, 20), (72, 64, 15), (18, 70, 11), (62, 104, 12)]
    if special:
        pads = pads[:3]
    return trunk + branches + "".join(_pine_pad(*p) for p in pads)


def _plum(special: bool = False) -> str:
    branch = (
        _stroke("M14 156Q26 120 22 94Q20 70 46 50Q60 40 62 22", "#2b1d16", 4.5)
        + _stroke("M24 96Q44 92 60 104Q72 112 84 108", "#2b1d16", 3)
        + _stroke("M46 50Q64 54 80 44", "#2b1d16", 2.5)
    )
    spots = [
        (62, 22, 6),
        (80, 44, 6),
        (50, 48, 5),
        (30, 74, 6),
        (84, 108, 6),
        (60, 104, 5),
        (22, 120, 5),
        (70, 34, 4),
        (40, 92, 4),
    ]
    if special:
        spots = [s for s in spots if s[1] < 80 or s[0] < 30]
    buds = "".join(_circle(x, y, 1.8, PLANT_COLOURS[2]) for x, y in [(36, 58), (74, 52), (14, 104), (90, 100)])
    return branch + buds + "".join(_blossom(x, y, r, PLANT_COLOURS[2], "#fbe3a0") for x, y, r in spots)


def _cherry(special: bool = False) -> str:
    branch = _stroke("M86 156Q70 120 72 90Q72 66 50 50", "#3a2a22", 4.5) + _stroke("M72 88Q48 86 30 70", "#3a2a22", 3)
    spots = [
        (18, 26, 7),
        (34, 18, 7),
        (52, 24, 8),
        (70, 16, 7),
        (84, 30, 7),
        (26, 42, 7),
        (44, 40, 7),
        (62, 40, 8),
        (80, 50, 6),
        (16, 60, 6),
        (34, 62, 7),
        (54, 58, 6),
    ]
    if not special:
        spots += [(30, 88, 6), (50, 80, 6), (84, 86, 6), (62, 120, 5)]
    clouds = _path("M6 70Q20 62 40 72Q60 80 94 66V90Q64 96 40 88Q20 82 6 90Z", "#f7d3dc")
    return (
        clouds
        + branch
        + "".join(
            _blossom(x, y, r, PLANT_COLOURS[3], "#d8456a" if i % 3 else "#b0213c") for i, (x, y, r) in enumerate(spots)
        )
    )


def _wisteria_cluster(x: float, y: float, length: float) -> str:
    w = length / 5
    body = _path(
        f"M{_n(x - w)} {_n(y)}Q{_n(x - w)} {_n(y + length * 0.7)} {_n(x)} {_n(y + length)}"
        f"Q{_n(x + w)} {_n(y + length * 0.7)} {_n(x + w)} {_n(y)}Z",
        PLANT_COLOURS[4],
    )
    dots = _stroke(f"M{_n(x)} {_n(y + 3)}V{_n(y + length - 3)}", "#b99ae0", w * 0.8, 'stroke-dasharray="0 4"')
    return body + dots


def _wisteria(special: bool = False) -> str:
    vine = _stroke("M4 12Q30 22 50 12Q70 4 96 16", "#2c2a20", 3)
    leaves = "".join(
        _leaf(x, y, 16, 3.5, a, "#2d4a22")
        for x, y, a in [(20, 16, 150), (36, 17, 70), (58, 10, 110), (76, 10, 40), (88, 14, 120)]
    )
    clusters = [(22, 18, 56), (46, 15, 76), (70, 12, 50), (86, 16, 34)]
    if special:
        clusters = [(22, 18, 40), (46, 15, 50), (86, 16, 30)]
    return vine + "".join(_wisteria_cluster(*c) for c in clusters) + leaves


def _iris_flower(x: float, y: float, s: float) -> str:
    c = PLANT_COLOURS[5]
    return (
        _ellipse(x, y - 5 * s, 3 * s, 6 * s, c)
        + _ellipse(x - 5 * s, y + 2 * s, 2.6 * s, 6 * s, c, 50)
        + _ellipse(x + 5 * s, y + 2 * s, 2.6 * s, 6 * s, c, -50)
        + _ellipse(x, y + 1 * s, 2 * s, 3 * s, "#e6c33a")
    )


def _iris(special: bool = False) -> str:
    leaves = "".join(
        _path(
            f"M{x} 156Q{x + bend / 2} {top + 40} {x + bend} {top}Q{x + bend / 2 + 4} {top + 40} {x + 6} 156Z", "#3f7a3a"
        )
        for x, top, bend in [(18, 60, 8), (30, 40, -6), (44, 70, 10), (58, 48, -4), (70, 66, 14), (80, 56, -8)]
    )
    flowers = [(28, 34, 1.4), (56, 40, 1.5), (74, 56, 1.2)]
    if not special:
        flowers.append((40, 64, 1.1))
    stems = "".join(_stroke(f"M{x} 156Q{x - 2} 110 {x} {y}", "#3f7a3a", 1.5) for x, y, _ in flowers)
    return leaves + stems + "".join(_iris_flower(*f) for f in flowers)


def _peony(special: bool = False) -> str:
    y = 84 if special else 70
    c = PLANT_COLOURS[6]
    leaves = "".join(
        _leaf(50, y + 8, ln, 7, a, "#22402a")
        for a, ln in [(120, 40), (150, 36), (70, 42), (30, 36), (95, 52), (200, 30), (-20, 28)]
    )
    flower = (
        _ring_dots(50, y, 17, 12, 10, c, c)
        + _ring_dots(50, y - 2, 10, 9, 7, "#ee6f8e", "#ee6f8e")
        + _circle(50, y - 3, 4, "#f7c948")
    )
    bud = "" if special else _circle(78, 110, 7, c) + _leaf(78, 116, 12, 4, 110, "#22402a")
    return leaves + bud + flower


def _clover(special: bool = False) -> str:
    arcs = ["M12 156Q10 64 56 38Q78 28 88 50", "M30 156Q34 94 74 78Q90 72 92 92", "M8 124Q18 76 42 66"]
    if special:
        arcs = ["M8 150Q8 56 52 32Q76 24 86 44", "M20 120Q30 66 68 60Q86 58 90 74"]
    out = "".join(_stroke(d, "#5a2a2a", 1.4) for d in arcs)
    out += "".join(_stroke(d, "#34432c", 6.5, 'stroke-dasharray="1 10" stroke-dashoffset="3"') for d in arcs)
    out += "".join(_stroke(d, PLANT_COLOURS[7], 4.4, 'stroke-dasharray="0 5.5"') for d in arcs)
    return out


def _pampas(sky: str | None = None, special: bool = False) -> str:
    out = _path("M4 50H96V4H4Z", sky) if sky else ""
    hill = "M4 156V104Q30 84 56 92Q80 100 96 86V156Z" if not special else "M4 156V122Q36 102 96 118V156Z"
    out += _path(hill, PLANT_COLOURS[8])
    blades = [
        "M14 150Q18 110 10 86",
        "M26 150Q30 100 44 74",
        "M40 152Q44 116 34 96",
        "M56 152Q58 110 72 80",
        "M70 152Q72 120 62 104",
        "M84 150Q84 110 92 92",
        "M48 150Q50 124 56 108",
    ]
    if special:
        blades = blades[::2]
    return out + "".join(_stroke(d, "#efe5c8", 1.2) for d in blades)


def _chrysanthemum_flower(x: float, y: float, r: float) -> str:
    return (
        _ring_dots(x, y, r, int(r * 3), r * 0.7, "#e07b1a", "#e07b1a")
        + _ring_dots(x, y, r * 0.62, int(r * 2.4), r * 0.6, PLANT_COLOURS[9], PLANT_COLOURS[9])
        + _circle(x, y, r * 0.25, "#b24a16")
    )


def _chrysanthemum(special: bool = False) -> str:
    flowers = [(30, 46, 13), (68, 36, 11), (58, 78, 12), (24, 98, 8)]
    if special:
        flowers = [(26, 30, 12), (68, 26, 10), (80, 64, 8)]
    stems = "".join(_stroke(f"M{x + 6} 156Q{x} {y + 40} {x} {y}", "#4d7a32", 1.6) for x, y, _ in flowers)
    leaves = "".join(_leaf(x, y + r + 4, 14, 6, a, "#4d7a32") for (x, y, r), a in zip(flowers, [140, 40, 150, 30]))
    return stems + leaves + "".join(_chrysanthemum_flower(*f) for f in flowers)


def _maple_leaf(x: float, y: float, r: float, colour: str, angle: float = -90) -> str:
    return _path(_star(x, y, r, r * 0.45, 5, angle), colour) + _stroke(
        f"M{_n(x)} {_n(y)}l{_n(-r * 0.3 * math.cos(math.radians(angle)))} {_n(r * 0.9)}", colour, 1
    )


def _maple(special: bool = False) -> str:
    c, o = PLANT_COLOURS[10], "#e8842a"
    branch = _stroke("M96 20Q60 26 44 52Q34 70 10 76", "#3b271b", 3.5) + _stroke("M60 32Q70 52 88 60", "#3b271b", 2)
    leaves = [
        (84, 14, 9, c),
        (66, 30, 10, o),
        (46, 44, 10, c),
        (30, 64, 9, c),
        (14, 72, 8, o),
        (88, 60, 8, c),
        (74, 48, 7, c),
        (52, 20, 7, c),
    ]
    if not special:
        leaves += [(30, 110, 9, c), (60, 100, 8, o), (76, 128, 9, c)]
        branch += _stroke("M40 56Q44 90 30 110M44 80Q56 90 60 100M60 100Q70 116 76 128", "#3b271b", 1.5)
    return branch + "".join(_maple_leaf(x, y, r, col, -90 + (i * 23) % 40) for i, (x, y, r, col) in enumerate(leaves))


def _willow(strands: list[tuple[float, float]] | None = None) -> str:
    strands = strands if strands is not None else [(20, 130), (34, 150), (50, 120), (64, 146), (80, 126), (90, 100)]
    out = _stroke("M4 8Q50 20 96 6", "#2f2a1e", 3)
    for x, bottom in strands:
        d = f"M{x} 12Q{x - 8} {_n((12 + bottom) / 2)} {x - 2} {bottom}"
        out += _stroke(d, "#3d5a22", 0.8) + _stroke(d, PLANT_COLOURS[11], 2.6, 'stroke-dasharray="3 2.5"')
    return out


def _paulownia_spike(x: float, y: float, n: int) -> str:
    return _stroke(f"M{x} {y + 6 * n}V{y}", "#5a4a2a", 1) + "".join(
        _circle(x + (3 if i % 2 else -3), y + i * 6, 3.6, PLANT_COLOURS[12]) for i in range(n)
    )


def _paulownia_leaves(ly: float, scale: float = 1) -> str:
    out = ""
    for x, w, a in [(50 - 20 * scale, 26 * scale, -12), (50 + 20 * scale, 26 * scale, 12), (50, 30 * scale, 0)]:
        out += _path(
            f"M{_n(x)} {_n(ly + w)}Q{_n(x - w)} {_n(ly + w * 0.4)} {_n(x - w * 0.7)} {_n(ly - w * 0.4)}"
            f"Q{_n(x)} {_n(ly - w * 0.9)} {_n(x + w * 0.7)} {_n(ly - w * 0.4)}Q{_n(x + w)} {_n(ly + w * 0.4)}"
            f" {_n(x)} {_n(ly + w)}Z",
            "#2d3f28",
            f'transform="rotate({a} {_n(x)} {ly})" stroke="#141c12" stroke-width=".8"',
        )
        out += _stroke(
            f"M{_n(x)} {_n(ly + w)}V{_n(ly - w * 0.6)}", "#6f8a55", 0.8, f'transform="rotate({a} {_n(x)} {ly})"'
        )
    return out


def _paulownia(yellow: bool = False) -> str:
    out = _path("M4 112H96V156H4Z", "#e9c23a") if yellow else ""
    out += _paulownia_spike(30, 36, 3) + _paulownia_spike(50, 26, 5) + _paulownia_spike(70, 36, 3)
    return out + _paulownia_leaves(96)


# ----------------------------------------------------------------------------- specials


def _crane() -> str:
    sun = _circle(68, 38, 22, RED)
    body = (
        _stroke("M52 124L48 150M58 124L62 150", INK, 1.2)
        + _path("M66 112Q84 120 92 132Q78 128 64 126Z", INK)
        + _ellipse(56, 114, 20, 12, WHITE, -12, 'stroke="#555" stroke-width=".6"')
        + _path("M40 108Q58 92 82 110Q64 108 52 118Z", WHITE, 'stroke="#555" stroke-width=".6"')
        + _stroke("M42 110Q30 96 40 82", INK, 3.4)
        + _circle(40, 80, 3.6, WHITE, 'stroke="#555" stroke-width=".5"')
        + _circle(40.5, 77.5, 2, RED)
        + _stroke("M37 81L27 86", "#7a7a66", 1.4)
    )
    return sun + _pine(True) + body


def _warbler() -> str:
    c = "#7f9a2c"
    return (
        _plum(True)
        + _path("M72 98L92 112L86 102Z", "#5d7220")
        + _ellipse(64, 96, 14, 9, c, 20)
        + _path("M58 92Q66 86 76 96Q66 96 60 102Z", "#5d7220")
        + _circle(50, 88, 7, c)
        + _circle(48, 87, 1.6, WHITE)
        + _circle(48, 87, 0.8, INK)
        + _path("M43 88L37 90L43 91Z", "#4a3a1a")
        + _stroke("M60 104L58 110M66 104L66 110", "#4a3a1a", 1)
    )


def _curtain() -> str:
    top = 84
    out = _stroke(f"M6 {top}H94", "#6b4a2a", 2.5)
    stripes = "".join(
        _path(f"M{x} {top}H{x + 17}V150H{x}Z", RED if i % 2 == 0 else WHITE) for i, x in enumerate(range(7, 92, 17))
    )
    out += stripes + _path(f"M7 {top}H92V{top + 8}H7Z", "#4b2b6a")
    out += "".join(_circle(x, top + 4, 2, GOLD) for x in range(14, 92, 17))
    out += _circle(50, 118, 13, WHITE, f'stroke="{RED}" stroke-width="2.5"')
    out += _blossom(50, 118, 6, PLANT_COLOURS[3], RED)
    out += _path("M7 150Q18 146 24 150Q36 146 41 150Q52 146 58 150Q70 146 75 150Q86 146 92 150V154H7Z", "#4b2b6a")
    return _cherry(True) + out


def _cuckoo() -> str:
    c = "#2f2f3e"
    return (
        _path("M70 40A14 14 0 1 0 86 58A11 11 0 1 1 70 40Z", "#e8c34a")
        + _wisteria(True)
        + _path("M30 104Q44 88 58 100L54 106Q42 100 30 104Z", c)
        + _path("M48 100Q50 76 70 68Q62 86 58 102Z", c)
        + _path("M56 102Q66 94 80 98L74 104Q64 100 58 106Z", "#4a4a5e")
        + _path("M70 100L92 92L82 104Z", c)
        + _path("M48 98Q56 110 64 104Q60 98 48 98Z", "#d9d2c0")
        + _circle(32, 104, 4, c)
        + _circle(31, 103, 1.2, "#f0c020")
        + _path("M28 104L21 106L28 107Z", "#d0a020")
    )


def _bridge() -> str:
    wood, dark = "#9a6a3a", "#5c3a1c"
    water = "".join(_stroke(f"M{x} {y}q4 -3 8 0t8 0", "#5b8fc0", 1.2) for x, y in [(10, 140), (50, 146), (70, 132)])
    planks = (
        _path("M4 116L60 96L64 106L4 130Z", wood, f'stroke="{dark}" stroke-width="1"')
        + _path("M40 100L96 122V136L36 110Z", wood, f'stroke="{dark}" stroke-width="1"')
        + _stroke("M20 112L22 150M54 102L56 140M70 116L70 152M90 124V154", dark, 2.5)
    )
    return _iris(True) + water + planks


def _butterfly(x: float, y: float, angle: float) -> str:
    wing, spot = "#3a6fc4", "#f2c23a"
    return _g(
        _ellipse(-7, -4, 8, 6, wing, -30)
        + _ellipse(7, -4, 8, 6, wing, 30)
        + _ellipse(-5, 5, 5, 4, "#6a4fb0", 30)
        + _ellipse(5, 5, 5, 4, "#6a4fb0", -30)
        + _circle(-8, -5, 2, spot)
        + _circle(8, -5, 2, spot)
        + _stroke("M0 -6V8M0 -6L-4 -13M0 -6L4 -13", INK, 1.4),
        f'transform="translate({x} {y}) rotate({angle}) scale(1.5)"',
    )


def _boar() -> str:
    c = "#4a3020"
    return (
        _clover(True)
        + _stroke("M34 132L32 150M44 134L44 152M66 132L68 150M74 130L78 148", c, 4)
        + _ellipse(54, 120, 28, 15, c)
        + _stroke("M30 108Q54 98 76 108", "#2a1a10", 3, 'stroke-dasharray="1 2"')
        + _path("M74 108Q90 110 94 124L88 130Q78 130 72 126Z", c)
        + _ellipse(92, 126, 3, 4, "#2a1a10")
        + _path("M84 126Q88 122 86 118", "none", f'stroke="{WHITE}" stroke-width="1.6"')
        + _path("M74 108L78 100L82 110Z", "#2a1a10")
        + _circle(82, 114, 1.3, WHITE)
        + _path("M27 116L20 124", "none", f'stroke="{c}" stroke-width="2"')
    )


def _moon() -> str:
    return _path("M4 4H96V124H4Z", RED) + _circle(50, 62, 30, "#fbf3d8") + _pampas(special=True)


def _goose(x: float, y: float, s: float) -> str:
    c = "#262220"
    return _g(
        _path("M-12 -8Q-4 -2 0 2Q4 -2 12 -10Q6 0 2 6L-2 6Q-6 0 -12 -8Z", c)
        + _ellipse(0, 5, 3, 5, c)
        + _stroke("M0 9L1 14", c, 1.6),
        f'transform="translate({x} {y}) scale({s})"',
    )


def _geese() -> str:
    return _path("M4 4H96V60H4Z", "#e7b35c") + _goose(30, 30, 1.2) + _goose(56, 22, 1) + _goose(76, 42, 0.9) + _pampas()


def _sake() -> str:
    cup = (
        _path("M24 92Q50 150 76 92Z", RED)
        + _path("M40 122H60L64 134H36Z", RED)
        + _ellipse(50, 92, 26, 7, "#a81b22", 0, f'stroke="{GOLD}" stroke-width="2"')
        + _glyphs([_KANA["kotobuki"]], 41, 96, 18, GOLD, 1.6)
    )
    return _chrysanthemum(True) + cup


def _deer() -> str:
    c = "#a2602c"
    spots = "".join(_circle(x, y, 1.6, "#f4e3c0") for x, y in [(40, 112), (48, 108), (56, 114), (44, 120), (62, 108)])
    return (
        _maple(True)
        + _stroke("M34 124L30 150M42 126L44 152M62 124L60 150M70 122L74 148", c, 3)
        + _ellipse(52, 114, 22, 12, c)
        + spots
        + _path("M66 108Q72 92 80 88L86 94Q80 102 72 116Z", c)
        + _ellipse(86, 92, 7, 4, c, 30)
        + _circle(85, 90, 1.2, INK)
        + _stroke("M80 86Q76 76 70 74M76 80L72 76M82 86Q84 74 80 66M83 78L88 72", "#4a2c14", 1.4)
        + _stroke("M30 108L26 104", c, 3)
    )


def _rainman() -> str:
    rain = _stroke("M10 20L4 40M30 10L22 34M54 30L46 54M84 14L76 38M92 60L86 78", "#8a9aa8", 0.8)
    stream = _path("M4 142Q30 134 50 142T96 140V156H4Z", "#3d6fa8")
    umbrella = _path("M22 66Q44 36 74 56Z", "#d9a53a", f'stroke="{INK}" stroke-width="1"') + _stroke(
        "M48 48L48 112M48 48L34 60M48 48L60 54", "#6a4a1a", 1
    )
    man = (
        _path("M38 74Q26 110 32 138H66Q70 108 58 74Z", INK)
        + _path("M44 82Q40 110 44 136H50Q52 108 48 82Z", RED)
        + _circle(50, 70, 6, "#f2d4b0")
        + _path("M44 66Q50 58 56 66Z", INK)
    )
    frog = (
        _ellipse(16, 132, 7, 4.5, "#4f9a3a", -20)
        + _stroke("M12 134L6 140M20 135L25 140", "#4f9a3a", 1.6)
        + _circle(13, 128, 1.4, INK)
    )
    return _willow([(62, 64), (76, 90), (88, 110)]) + rain + stream + umbrella + man + frog


def _swallow() -> str:
    c = "#1f2a4d"
    return (
        _willow([(14, 70), (26, 96), (84, 110), (92, 90)])
        + _path("M40 104L14 132L34 110L20 142L46 110Z", c)
        + _path("M36 102Q54 82 74 74Q64 92 48 110Z", c)
        + _path("M40 100Q56 104 70 94L60 106Q50 112 42 108Z", "#f2ead8")
        + _path("M42 104Q20 90 8 60Q34 74 52 94Z", c)
        + _circle(72, 74, 5, c)
        + _path("M70 78Q74 82 78 77Z", RED)
        + _path("M76 72L82 70L77 75Z", INK)
    )


def _lightning() -> str:
    out = _path("M4 4H96V156H4Z", "#24201c")
    out += _willow([(12, 60), (24, 80), (86, 70)])
    out += _ring_dots(62, 52, 22, 8, 8, RED) + _circle(62, 52, 22, "none", f'stroke="{RED}" stroke-width="2"')
    out += _path("M54 40L70 40L60 66L74 66L44 116L54 76L42 76Z", GOLD)
    out += _path("M4 120H96V156H4Z", "#4a1a16") + _path(
        "M20 120V156M80 120V156", "none", f'stroke="{RED}" stroke-width="6"'
    )
    return out + _path("M10 120H90V114H10Z", RED)


def _phoenix() -> str:
    sky = _path("M4 4H96V84H4Z", "#f2bd4e") + _circle(50, 84, 34, "#f6d27a")
    spikes = _paulownia_spike(14, 100, 3) + _paulownia_spike(86, 100, 3)
    tail = "".join(
        _path(d, col) + _circle(x, y, 3.2, GOLD, f'stroke="{INK}" stroke-width=".8"')
        for d, col, x, y in [
            ("M56 70Q70 110 94 118Q78 120 60 84Z", "#2f8a5a", 90, 117),
            ("M52 74Q62 120 80 146Q64 138 50 84Z", RED, 78, 142),
            ("M48 76Q44 120 52 150Q38 132 42 80Z", "#7b3fa0", 50, 146),
        ]
    )
    wings = (
        _path("M46 56Q20 54 10 22Q26 32 36 28Q32 40 50 48Z", "#2a7ab0")
        + _path("M46 54Q28 48 24 34Q34 40 44 40Z", RED)
        + _path("M58 54Q82 44 90 14Q76 28 66 26Q70 40 54 48Z", "#2f8a5a")
        + _path("M58 52Q74 46 78 32Q70 38 60 40Z", GOLD)
    )
    body = (
        _ellipse(52, 62, 9, 15, "#e05a20", 15)
        + _stroke("M49 50Q44 40 46 32", "#e05a20", 6)
        + _circle(46, 30, 5.5, RED)
        + _path("M44 25Q40 12 48 6Q46 16 50 24Z", GOLD)
        + _path("M41 30L33 33L41 34Z", GOLD)
        + _circle(45, 29, 1.3, INK)
    )
    return sky + spikes + _paulownia_leaves(126, 0.8) + tail + wings + body


# ----------------------------------------------------------------------------- ribbons


def _ribbon(colour: str, text: list[str] | None = None) -> str:
    out = _path("M43 42H57V120L50 113L43 120Z", colour, 'stroke="#00000033" stroke-width=".6"')
    out += _path("M43 42H57V48H43Z", "#00000026")
    if text:
        out += _glyphs([_KANA[k] for k in text], 45, 52, 10, INK, 1.3)
    return _g(out, 'transform="rotate(-18 50 80)"')


_RIBBONS: dict[str, tuple[str, list[str] | None]] = {
    "pine-poetry": (RED, ["a", "ka", "yo", "ro", "shi"]),
    "plum-poetry": (RED, ["a", "ka", "yo", "ro", "shi"]),
    "cherry-poetry": (RED, ["mi", "yo", "shi", "no"]),
    "peony-blue": (BLUE_RIBBON, None),
    "chrysanthemum-blue": (BLUE_RIBBON, None),
    "maple-blue": (BLUE_RIBBON, None),
}

_PLANTS: dict[int, Callable[[], str]] = {
    1: _pine,
    2: _plum,
    3: _cherry,
    4: _wisteria,
    5: _iris,
    6: _peony,
    7: _clover,
    8: _pampas,
    9: _chrysanthemum,
    10: _maple,
    11: _willow,
    12: _paulownia,
}

_SPECIALS: dict[str, Callable[[], str]] = {
    "pine-crane": _crane,
    "plum-warbler": _warbler,
    "cherry-curtain": _curtain,
    "wisteria-cuckoo": _cuckoo,
    "iris-bridge": _bridge,
    "peony-butterflies": lambda: _peony(True) + _butterfly(28, 34, -20) + _butterfly(74, 40, 24),
    "clover-boar": _boar,
    "pampas-moon": _moon,
    "pampas-geese": _geese,
    "chrysanthemum-sake": _sake,
    "maple-deer": _deer,
    "willow-rainman": _rainman,
    "willow-swallow": _swallow,
    "willow-lightning": _lightning,
    "paulownia-phoenix": _phoenix,
}


def _art(card_id: int) -> str:
    name = CARD_NAMES[card_id]
    month = month_of(card_id)
    if name in _SPECIALS:
        return _SPECIALS[name]()
    if kind_of(card_id) is Kind.RIBBON:
        colour, text = _RIBBONS.get(name, (RED, None))
        return _PLANTS[month]() + _ribbon(colour, text)
    if name == "paulownia-plain-3":
        return _paulownia(yellow=True)
    plant = _PLANTS[month]()
    return _g(plant, MIRROR) if name.endswith("-2") else plant


def _badge(card_id: int) -> str:
    kind = kind_of(card_id)
    out = _circle(89, 11, 5.5, CREAM, 'fill-opacity=".85"')
    if kind is Kind.BRIGHT:
        out += _circle(89, 11, 3.8, GOLD, 'stroke="#8a5a00" stroke-width=".8"')
    elif kind is Kind.ANIMAL:
        out += _path("M89 7L93 11L89 15L85 11Z", "#8b3a1a")
    elif kind is Kind.RIBBON:
        colour = _RIBBONS.get(CARD_NAMES[card_id], (RED, None))[0]
        out += _path("M87.5 6.5H90.5V15.5L89 14L87.5 15.5Z", colour)
    else:
        out += _circle(89, 11, 2.6, "none", 'stroke="#8a7a60" stroke-width="1"')
    month = month_of(card_id)
    out += _circle(11, 11, 5.5, CREAM, 'fill-opacity=".85"')
    out += (
        f'<text x="11" y="13.8" font-family="sans-serif" font-size="{8 if month < 10 else 7}" '
        f'font-weight="bold" text-anchor="middle" fill="#5a4a38">{month}</text>'
    )
    return out


_FRAME = (
    "M7 0.5H93A6.5 6.5 0 0 1 99.5 7V153A6.5 6.5 0 0 1 93 159.5H7A6.5 6.5 0 0 1 0.5 153V7A6.5 6.5 0 0 1 7 0.5Z"
    "M8 4A4 4 0 0 0 4 8V152A4 4 0 0 0 8 156H92A4 4 0 0 0 96 152V8A4 4 0 0 0 92 4Z"
)


def _document(title: str, body: str) -> str:
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 160" width="100" height="160" role="img">'
        f"<title>{escape(title)}</title>{body}</svg>"
    )


def _check(card_id: object) -> int:
    if isinstance(card_id, bool) or not isinstance(card_id, int):
        raise ValueError(f"card id must be an int 0..{NUM_CARDS - 1}, not {card_id!r}")
    if not 0 <= card_id < NUM_CARDS:
        raise ValueError(f"card id {card_id} is out of range 0..{NUM_CARDS - 1}")
    return card_id


@functools.cache
def _face(card_id: int) -> str:
    body = _path("M4 4H96V156H4Z", CREAM) + _art(card_id) + _badge(card_id) + _path(_FRAME, EDGE, 'fill-rule="evenodd"')
    return _document(CARD_NAMES[card_id], body)


def card_svg(card_id: int) -> str:
    """The face of card ``card_id`` (0..47) as a standalone SVG document; ``ValueError`` otherwise.

    ``bool`` is refused although it is an ``int``: ``card_svg(True)`` is surely a mistake.
    """
    return _face(_check(card_id))


@functools.cache
def card_back_svg() -> str:
    """The back of a card: plain dark red-brown with a fine border and a small woven pattern."""
    body = (
        _path(_FRAME.split("Z")[0] + "Z", EDGE)
        + _path("M8 8H92V152H8Z", "none", 'stroke="#7a2a22" stroke-width="1"')
        + _path("M12 12H88V148H12Z", "none", 'stroke="#3e120e" stroke-width="2" stroke-dasharray="2 2"')
        + _circle(50, 80, 17, "none", 'stroke="#7a2a22" stroke-width="1.5"')
        + _path(_star(50, 80, 14, 6, 4, -90), "#7a2a22")
        + _circle(50, 80, 4, "#3e120e")
    )
    return _document("card back", body)


def all_card_svgs() -> dict[int, str]:
    """Every face by card id, in id order (a fresh dict; the faces themselves are cached)."""
    return {i: card_svg(i) for i in range(NUM_CARDS)}
