"""Without Chromium the browser tests are skipped with one line (the README's test command passes on a
fresh machine); with ``KOIKOI_REQUIRE_BROWSER=1`` (``.ci/run`` sets it) they fail instead."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_browser_test(**env: str) -> subprocess.CompletedProcess:
    """One browser test in a pytest of its own, with Chromium named where it is not."""
    environ = {k: v for k, v in os.environ.items() if k != "KOIKOI_REQUIRE_BROWSER"}
    environ.update(KOIKOI_CHROMIUM=str(ROOT / "no-such-chromium"), **env)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",
            "tests/test_web_browser.py::test_external_card_art",
        ],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_no_chromium_skips_with_one_line():
    r = run_browser_test()
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [line for line in r.stdout.splitlines() if "no Chromium" in line]
    assert len(lines) == 1, r.stdout
    assert "apt install chromium" in lines[0] and "(1 test)" in lines[0]
    assert "1 skipped" in r.stdout and "error" not in r.stdout.lower()


def test_no_chromium_fails_where_the_browser_is_required():
    r = run_browser_test(KOIKOI_REQUIRE_BROWSER="1")
    assert r.returncode != 0
    assert "1 error" in r.stdout and "KOIKOI_REQUIRE_BROWSER=1" in r.stdout


def test_ci_requires_the_browser():
    assert "export KOIKOI_REQUIRE_BROWSER=1" in (ROOT / ".ci" / "run").read_text()
