"""The suite's own arrangement holds: ``--dist loadgroup`` keeps an ``xdist_group`` on one worker (the
modules that share a server or a database rely on it), which a pytest or pytest-xdist upgrade has broken
silently before (pytest-dev/pytest-xdist#1386)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

GROUPED = """
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.xdist_group("together")


@pytest.mark.parametrize("i", range(8))
def test_one(i):
    Path(os.environ["WHERE"], f"{i}").write_text(os.environ.get("PYTEST_XDIST_WORKER", "none"))
"""


@pytest.mark.timeout(120)
def test_an_xdist_group_runs_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_grouped.py").write_text(GROUPED)
    where = tmp_path / "where"
    where.mkdir()
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup", "-p", "no:randomly"]
        + ["-p", "no:cacheprovider", "suite"],
        cwd=tmp_path,
        env={**os.environ, "WHERE": str(where)},
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    workers = {p.read_text() for p in where.iterdir()}
    assert len(list(where.iterdir())) == 8
    assert len(workers) == 1 and workers != {"none"}, f"one group ran on {sorted(workers)}"
