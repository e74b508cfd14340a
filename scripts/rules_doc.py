"""Write docs/rules.md, the project's rules reference, from the code (koikoi.rulesdoc).

Usage: PYTHONPATH=src python3 scripts/rules_doc.py [OUT]   (OUT defaults to docs/rules.md)

The same text is printed by ``koikoi rules --markdown``; tests/test_rules_doc.py checks that the
file is up to date.
"""

from __future__ import annotations

import sys
from pathlib import Path

from koikoi.rulesdoc import rules_markdown

DEFAULT = Path(__file__).resolve().parent.parent / "docs" / "rules.md"


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else DEFAULT
    out.write_text(rules_markdown(), encoding="utf-8", newline="\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
