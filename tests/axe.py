"""axe-core accessibility checks for the browser tests: ``serious_violations(page)`` lists what is wrong.

axe-core is the npm package, installed before the tests run (nothing downloads while they run):
``.ci/run`` does ``npm install --prefix tests/.node axe-core@4.11.0`` into the git-ignored folder
``tests/.node``. ``KOIKOI_AXE`` may name another ``axe.min.js``. Without the file the checks skip with
one line saying how to install it, unless ``KOIKOI_REQUIRE_BROWSER=1`` (CI), where they fail.

The script goes in with ``page.evaluate`` rather than a ``<script>`` element: the pages forbid inline
script (Content-Security-Policy) and DevTools evaluation is not subject to it, so the page is checked
under its real policy, with no ``bypass_csp`` context.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest

AXE_VERSION = "4.11.0"  # the same pin as in .ci/run
AXE_PATH = Path(
    os.environ.get("KOIKOI_AXE") or Path(__file__).parent / ".node" / "node_modules" / "axe-core" / "axe.min.js"
)
SERIOUS = ("serious", "critical")


@cache
def axe_source() -> str:
    """The text of ``axe.min.js``; skips (or fails under ``KOIKOI_REQUIRE_BROWSER=1``) when it is missing."""
    if not AXE_PATH.is_file():
        message = (
            f"axe-core is needed for the accessibility tests and {AXE_PATH} is missing: "
            f"npm install --prefix tests/.node axe-core@{AXE_VERSION} (or set KOIKOI_AXE)"
        )
        if os.environ.get("KOIKOI_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return AXE_PATH.read_text(encoding="utf-8")


def inject(page) -> None:
    """Put axe-core into the page (once per document)."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe_source())


def violations(page, *, impacts: tuple[str, ...] = SERIOUS, selector: str | None = None) -> list[str]:
    """axe-core's findings on the page as it is now (or on ``selector`` only) whose impact is one of
    ``impacts``: one line each, ``rule (impact): help [target, ...]``, with at most five targets."""
    inject(page)
    found = page.evaluate(
        """async (selector) => {
            const result = await window.axe.run(selector ? document.querySelector(selector) : document,
                                                {resultTypes: ['violations']});
            return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                                targets: v.nodes.map(n => n.target.join(' '))}));
        }""",
        selector,
    )
    lines = []
    for v in found:
        if v["impact"] in impacts:
            more = f" and {len(v['targets']) - 5} more" if len(v["targets"]) > 5 else ""
            lines.append(f"{v['id']} ({v['impact']}): {v['help']} {v['targets'][:5]}{more}")
    return lines


def serious_violations(page, selector: str | None = None) -> list[str]:
    """axe-core's serious and critical findings on the page (or on ``selector`` only); empty when clean.

    >>> assert not serious_violations(page), serious_violations(page)  # doctest: +SKIP
    """
    return violations(page, selector=selector)
