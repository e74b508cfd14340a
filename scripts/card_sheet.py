"""Write an HTML contact sheet of the 48 card faces and the back, to look at them all at once.

Usage: python3 scripts/card_sheet.py OUT.html [--scale 1.3]

Then open OUT.html in a browser, or take a picture of it headless, for example:
chromium --headless --no-sandbox --disable-gpu --screenshot=sheet.png --window-size=1400,1200 file:///abs/OUT.html
"""

from __future__ import annotations

import argparse
import html
from pathlib import Path

from koikoi.cards import CARD_NAMES
from koikoi.web.cardfaces import all_card_svgs, card_back_svg


def sheet(scale: float = 1.3) -> str:
    """The contact sheet: two months a row, then the back."""
    w, h = round(100 * scale), round(160 * scale)
    cells = []
    for card_id, svg in all_card_svgs().items():
        sized = svg.replace('width="100" height="160"', f'width="{w}" height="{h}"', 1)
        cells.append(f"<figure>{sized}<figcaption>{card_id} {html.escape(CARD_NAMES[card_id])}</figcaption></figure>")
    back = card_back_svg().replace('width="100" height="160"', f'width="{w}" height="{h}"', 1)
    cells.append(f"<figure>{back}<figcaption>back</figcaption></figure>")
    style = (
        "body{background:#2e4a36;margin:8px;font:11px sans-serif;color:#eee}"
        "main{display:grid;grid-template-columns:repeat(8,auto);justify-content:start}"
        "figure{margin:3px;text-align:center}"
    )
    return (
        f"<!doctype html><meta charset=utf-8><title>Koi-Koi cards</title><style>{style}</style>"
        f"<main>{''.join(cells)}</main>"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the HTML file to write")
    parser.add_argument("--scale", type=float, default=1.3, help="card size relative to 100 x 160 px")
    args = parser.parse_args()
    args.out.write_text(sheet(args.scale), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
