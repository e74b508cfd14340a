"""benchmarks/web_load.py still runs: a tiny load run on SQLite (and, when ``KOIKOI_TEST_POSTGRES_URL`` is
set, one through ``koikoi serve --workers 2`` on a database of its own) finishes, acknowledges actions,
loses none and has no handshake time out; a tiny ``--clocks`` run ends every game on time. Figures are
not checked: the machine is shared. The ``--stall-db`` run is not made here: it stops the whole
PostgreSQL server, which other tests use."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import POSTGRES_URL, make_database

pytestmark = pytest.mark.server  # every test here starts server processes of its own

ROOT = Path(__file__).resolve().parent.parent
TINY = ["--games", "6", "--seconds", "3", "--warmup", "1", "--think-min", "0.05", "--think-max", "0.1"]


def bench(*args: str) -> str:
    # The servers it starts import this checkout's koikoi, whatever is installed.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, str(ROOT / "benchmarks" / "web_load.py"), *TINY, *args]
    with subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        try:
            out, err = p.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            p.terminate()  # SIGTERM: the benchmark stops the servers it started
            out, err = p.communicate(timeout=40)
            pytest.fail(f"the benchmark took over 90 s:\n{out}{err}")
    assert p.returncode == 0, out + err
    return out


def check(out: str) -> None:
    actions = re.search(r"^actions: (\d+) in ", out, re.M)
    assert actions and int(actions.group(1)) > 0, out
    assert re.search(r"^acknowledged actions missing from the database: 0 \(seats checked: [1-9]", out, re.M), out
    burst = re.search(r"^connection burst: 12 seats, (\d+) sockets opened, (\d+) handshake timeouts", out, re.M)
    assert burst and burst.group(1) == "12" and burst.group(2) == "0", out
    assert re.search(r"^unavailable \(the database did not answer\): \d+", out, re.M), out


def test_a_tiny_load_run_on_sqlite() -> None:
    out = bench()
    check(out)
    assert re.search(r"^process on port \d+: \d+ actions", out, re.M), out


@pytest.mark.skipif(not POSTGRES_URL, reason="needs PostgreSQL: set KOIKOI_TEST_POSTGRES_URL")
def test_a_tiny_load_run_through_two_serve_workers(tmp_path: Path) -> None:
    out = bench("--serve-workers", "2", "--database-url", make_database("postgresql", tmp_path))
    check(out)
    assert "koikoi serve --workers 2" in out, out
    workers = re.findall(r"^  worker \d* ?\(pid \d+\)", out, re.M)
    assert len(workers) >= 2, out


def check_lobby(out: str, players: int) -> None:
    assert re.search(rf"^paired: {players} of {players} in the database, {players // 2} games; ", out, re.M), out
    assert "exactly once: yes" in out, out
    assert re.search(rf"^time to be paired: {players} players, p50 \d+ ms", out, re.M), out
    assert re.search(r"^lobby push .* missed 0$", out, re.M), out


# The lobby and clock modes are run once: through two workers on PostgreSQL where there is one (the
# harder path, and the same code of the benchmark), else on SQLite. (Both cost 9 s of CPU a run more.)
ON_SQLITE_WITHOUT_POSTGRES = pytest.mark.skipif(
    bool(POSTGRES_URL), reason="run through two serve workers on PostgreSQL instead"
)


@ON_SQLITE_WITHOUT_POSTGRES
def test_a_tiny_lobby_run_on_sqlite() -> None:
    check_lobby(bench("--lobby", "--players", "20", "--seeks", "2"), 20)


@pytest.mark.skipif(not POSTGRES_URL, reason="needs PostgreSQL: set KOIKOI_TEST_POSTGRES_URL")
def test_a_tiny_lobby_run_through_two_serve_workers(tmp_path: Path) -> None:
    url = make_database("postgresql", tmp_path)
    check_lobby(bench("--lobby", "--players", "20", "--seeks", "2", "--serve-workers", "2", "--database-url", url), 20)


def check_clocks(out: str, games: int) -> None:
    assert re.search(rf"^endings in the database: time {games}$", out, re.M), out
    assert re.search(rf"^flag lateness \(games.updated - clocks.flagged, from the database\): {games}, p50 ", out, re.M)
    assert "seats that never saw their game end: 0;" in out, out
    assert re.search(r"^machine load average \(1 min\) during the run: min [0-9.]+", out, re.M), out
    assert "deadlines moved on for an outage (server log): 0 time(s)" in out, out


CLOCKS = ["--clocks", "2+1", "--play-min", "0.5", "--play-max", "2"]


@ON_SQLITE_WITHOUT_POSTGRES
def test_a_tiny_clocks_run_on_sqlite() -> None:
    check_clocks(bench(*CLOCKS), 6)


@pytest.mark.skipif(not POSTGRES_URL, reason="needs PostgreSQL: set KOIKOI_TEST_POSTGRES_URL")
def test_a_tiny_clocks_run_through_two_serve_workers(tmp_path: Path) -> None:
    out = bench(*CLOCKS, "--serve-workers", "2", "--database-url", make_database("postgresql", tmp_path))
    check_clocks(out, 6)
    assert "koikoi serve --workers 2" in out and re.search(r"^worker 1 \(pid \d+\): flags \d+", out, re.M), out


def test_a_tiny_ramp_on_sqlite() -> None:
    """--ramp adds games a step at a time and says how many it held (figures not checked: at three games
    of two players any machine holds them all, and then the line says the most asked for was reached)."""
    out = bench("--ramp", "3", "--ramp-seconds", "2", "--ramp-settle", "1", "--ramp-p99", "60000")
    steps = re.findall(r"^ramp: (\d+) games: [\d.]+ actions/s, round trip p50 [\d.]+ ms, p99 [\d.]+ ms", out, re.M)
    assert steps == ["3", "6"], out
    assert re.search(r"^ramp result: held 6 games \(steps of 3\)", out, re.M), out
    assert re.search(r"^acknowledged actions missing from the database: 0 \(seats checked: [1-9]", out, re.M), out
