"""Tournaments made on a schedule (koikoi.web.schedule; docs/web.md, "Scheduled tournaments"): the file read
and every mistake in it named, and the occurrences of each recurring tournament."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from koikoi.web.schedule import ScheduleError, occurrences, read_schedule

HOURLY = """
[[tournament]]
name = "Hourly 3-hand arena"
kind = "arena"
every = "1h"
at = "05"
preset = "nintendo"
hands = 3
clock = "10+60"
minutes = 50
rated = true

[[tournament]]
name = "Daily Swiss"
kind = "swiss"
every = "1d"
at = "20:30"
hands = 6
clock = "20+120"
rounds = 7
"""


def test_a_schedule_is_read_and_its_occurrences_come_in_order(tmp_path):
    p = tmp_path / "t.toml"
    p.write_text(HOURLY)
    hourly, daily = read_schedule(p)
    assert hourly.name == "Hourly 3-hand arena" and hourly.every == timedelta(hours=1)
    assert hourly.offset == timedelta(minutes=5) and hourly.settings["minutes"] == 50
    assert daily.offset == timedelta(hours=20, minutes=30) and daily.settings["rounds"] == 7
    now = datetime(2026, 12, 7, 10, 7, tzinfo=UTC)
    assert occurrences(hourly, now) == [
        datetime(2026, 12, 7, 11, 5, tzinfo=UTC),
        datetime(2026, 12, 7, 12, 5, tzinfo=UTC),
    ]
    assert occurrences(daily, now) == []
    assert occurrences(daily, datetime(2026, 12, 7, 19, 0, tzinfo=UTC)) == [datetime(2026, 12, 7, 20, 30, tzinfo=UTC)]
    # An occurrence that starts exactly now is past: the next one is made.
    assert occurrences(hourly, datetime(2026, 12, 7, 11, 5, tzinfo=UTC))[0] == datetime(2026, 12, 7, 12, 5, tzinfo=UTC)


A = "[[tournament]]\nname = 'A arena'\nkind = 'arena'\n"


@pytest.mark.parametrize(
    "text, said",
    [
        (A + "every = '90m'\nclock = '10+60'\nhands = 3", '"every"'),
        (
            A + "every = '1h'\nat = '75'\nclock = '10+60'\nhands = 3",
            '"at"',
        ),
        (A + "every = '1h'\nclock = '3d'\nhands = 3", "real-time"),
        (A + "every = '1h'\nclock = '10+60'\nhands = 30", "hands"),
        (
            A + "every = '1h'\nclock = '10+60'\nhands = 3\nprize = 1",
            "prize",
        ),
        ("[tournament]\nname = 'A'", "[[tournament]]"),
        ("[[tournamnet]]\nname = 'A'", "tournamnet"),
        ("name = ", "not TOML"),
        (
            "[[tournament]]\nname = 'Same'\nkind = 'arena'\nevery = '1h'\nclock = '10+60'\nhands = 3\n" * 2,
            "two tournaments",
        ),
    ],
)
def test_every_mistake_in_a_schedule_is_named(tmp_path, text, said):
    p = tmp_path / "t.toml"
    p.write_text(text)
    with pytest.raises(ScheduleError, match=".") as e:
        read_schedule(p)
    assert said in str(e.value)


def test_a_schedule_file_that_is_missing_or_huge_is_refused(tmp_path):
    with pytest.raises(ScheduleError, match="cannot read"):
        read_schedule(tmp_path / "none.toml")
    p = tmp_path / "big.toml"
    p.write_text("# " + "x" * 70000)
    with pytest.raises(ScheduleError, match="KB"):
        read_schedule(p)
