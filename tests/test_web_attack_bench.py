"""benchmarks/web_attack.py: every scenario is reachable by name through --only, the attack bodies are
what they claim, the hand-made WebSocket frames read back, and the summary judges by the target.
No server is started here: the scenarios themselves are measured by running the benchmark."""

import asyncio
import inspect
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import web_attack  # noqa: E402


def test_every_scenario_has_a_function_and_only_accepts_the_names():
    assert len(set(web_attack.SCENARIOS)) == len(web_attack.SCENARIOS) == 17
    for name in web_attack.SCENARIOS:
        assert inspect.iscoroutinefunction(web_attack.scenario(name))
    assert web_attack.parse_only("planted-cookie, replay,,quadratic-http") == [
        "planted-cookie",
        "replay",
        "quadratic-http",
    ]
    with pytest.raises(ValueError, match="no scenario 'quadratic'"):
        web_attack.parse_only("quadratic")


def test_the_quadratic_body_is_an_unended_string_of_the_size_asked():
    for size in (4096, 16 * 1024, 64 * 1024, 2 * 1024 * 1024):
        body = web_attack.quadratic(size)
        assert size - 2 <= len(body) < size
        assert body.startswith(b'"\\"\\"') and body.count(b'"') == 1 + (len(body) - 1) // 2
        with pytest.raises(ValueError):
            json.loads(body)


def test_wrong_bodies_and_records_are_json_where_they_should_be():
    bodies = web_attack.wrong_bodies()
    assert b'{"rules": {"preset": []}}' in bodies and b'{"action": "1", "seq": null}' in bodies
    games = web_attack.with_opponent(bodies)
    assert len(games) == len(bodies)
    assert b'{"opponent": "friend", "rules": {"preset": []}}' in games and b'{"opponent": 5}' in games
    records = web_attack.record_bodies()
    assert all(isinstance(json.loads(r), dict) for r in records)
    assert len(records) > 100


def test_a_hand_made_frame_reads_back():
    for payload in (b"", b"\xff\xfe", bytes(200), bytes(70000)):
        frame = web_attack.ws_frame(0x1, payload, mask=b"\x01\x02\x03\x04")
        assert frame[0] == 0x81 and frame[1] & 0x80  # final text frame, masked

        async def read(data: bytes = frame) -> tuple[int, bytes]:
            reader = asyncio.StreamReader()
            reader.feed_data(data)
            reader.feed_eof()
            return await web_attack.ws_read(reader)

        assert asyncio.run(read()) == (0x1, payload)


def test_the_summary_holds_each_scenario_to_the_target():
    fast, slow = [0.005] * 100, [0.005] * 98 + [0.5] * 2
    r = web_attack.Result
    results = [
        r("ok", before=fast, during=fast, outcome={"400": 3}),
        r("slow", before=fast, during=slow),
        r("errors", before=fast, during=fast, server_errors=2),
        r("finding", findings=["the planter sees the victim's game"]),
        r("nothing during", before=fast, during=[]),
        r("no honest game"),
    ]
    assert [x.met() for x in results] == [True, False, False, False, False, True]
    table = web_attack.summary(results).splitlines()
    assert table[0].split(" | ")[0].strip() == "scenario" and len(table) == len(results) + 3
    assert "NO (p99)" in table[3] and "NO (5xx)" in table[4] and table[2].rstrip().endswith("yes")
    assert "honest game before p50 5.0 ms" in results[0].line() and "400: 3" in results[0].line()
