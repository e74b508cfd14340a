"""benchmarks/fair_play.py against a real server: two accounts trading rated wins move a rating only as
far as the rules allow (a game both played, at most RATED_GAMES_A_PAIR a day between them), and one who
aborts three in a row waits."""

import sys
from pathlib import Path

import pytest

from koikoi.web.store import RATED_GAMES_A_PAIR

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import fair_play  # noqa: E402


@pytest.mark.server
def test_a_farm_of_resignations_moves_no_rating_and_played_games_count_a_few_times(capsys):
    assert fair_play.main(["--games", "4", "--way", "resign-at-once", "--every", "3"]) == 0
    out = capsys.readouterr().out
    assert "after    3 games" in out and "Ann no rated game counted" in out and "endings: abort 3" in out
    assert "game 4: accept refused (429 abort_wait" in out  # Bob aborted 3 in a row: he waits
    games = RATED_GAMES_A_PAIR + 1
    assert fair_play.main(["--games", str(games), "--way", "one-move-each", "--every", str(games)]) == 0
    out = capsys.readouterr().out
    assert f"{RATED_GAMES_A_PAIR} rated games counted" in out and f"endings: resign {games}" in out
