"""Bot protocol version 2 next to version 1: the same hello for both, version-1 messages exactly as
``Observation.to_dict()`` writes them, version 2's ``rules`` (the whole rule set) and ``positions``,
the negotiation and its errors, and no hidden card in what a version-2 bot is sent."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from koikoi import botproto
from koikoi.arena import run_arena
from koikoi.botproto import BotError, choose_message, observation_message, read_hello, read_hello_version
from koikoi.cards import CARD_NAMES, NUM_CARDS, iter_cards
from koikoi.match import Match
from koikoi.observation import positions
from koikoi.records import read_record, replay_steps
from koikoi.rules import preset

# Writes every line it is sent, as received, to DIR/game-N.log; answers hello with the version given
# ("none": no version key) and every choose with the first legal action.
SPY = """\
import json, sys
out_dir, version = sys.argv[1], sys.argv[2]
log = None
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        log = open(f"{out_dir}/game-{msg['game']}.log", "w")
    log.write(line)
    log.flush()
    if msg["type"] == "hello":
        reply = {"name": "spy"}
        if version != "none":
            reply["version"] = json.loads(version)
        print(json.dumps(reply), flush=True)
    elif msg["type"] == "choose":
        print(json.dumps({"action": msg["observation"]["legal_actions"][0]["id"]}), flush=True)
"""


def spy(tmp_path: Path, version: str) -> tuple[str, Path]:
    script = tmp_path / "spy.py"
    script.write_text(SPY)
    out = tmp_path / f"seen-{version}"
    out.mkdir()
    return "cmd:" + shlex.join([sys.executable, str(script), str(out), version]), out


def transcripts(tmp_path: Path, version: str, rules: str = "cardavia", games: int = 2, seed: int = 5):
    spec, out = spy(tmp_path, version)
    records = tmp_path / f"records-{version}"
    report = run_arena(preset(rules), games, seed, [spec, "easy"], jobs=1, records_dir=records)
    assert report.forfeits == [] and report.players[0].name == "spy"
    return report, {g.index: (out / f"game-{g.index + 1}.log").read_text().splitlines() for g in report.results}


def timeless(lines: list[str]) -> list[dict]:
    """The messages without their ``time_limit``, which may differ from one run to the next."""
    return [{k: v for k, v in json.loads(line).items() if k != "time_limit"} for line in lines]


def test_version_1_bots_get_exactly_the_version_1_messages(tmp_path):
    report, seen = transcripts(tmp_path, "none")
    _, explicit = transcripts(tmp_path, "1")
    # Answering "version": 1 or nothing is the same.
    assert {k: timeless(v) for k, v in explicit.items()} == {k: timeless(v) for k, v in seen.items()}
    checked = 0
    for g in report.results:
        seat = g.seats.index(0)
        lines = seen[g.index]
        hello = json.loads(lines[0])
        assert hello["version"] == 1 and "rule_set" not in hello and hello["rules"] == preset("cardavia").to_dict()
        chooses = iter(line for line in lines if json.loads(line)["type"] == "choose")
        for step in replay_steps(read_record(g.record), check=False):
            if step.player != seat:
                continue
            line = next(chooses)
            msg = json.loads(line)
            obs = step.before.observation(seat)
            # Byte for byte what version 1 always sent: the observation is Observation.to_dict().
            want = {
                "type": "choose",
                "decision": msg["decision"],
                "time_limit": msg["time_limit"],
                "observation": obs.to_dict(),
            }
            assert line == json.dumps(want, separators=(",", ":"))
            assert line == json.dumps(choose_message(obs, msg["decision"], msg["time_limit"]), separators=(",", ":"))
            assert msg["observation"]["rules"] == "cardavia" and "positions" not in msg["observation"]
            checked += 1
        assert next(chooses, None) is None
    assert checked > 10


def test_version_2_renames_rules_and_adds_positions(tmp_path):
    report1, seen1 = transcripts(tmp_path, "none")
    report2, seen2 = transcripts(tmp_path, "2")
    # The spy plays the same way under both versions, so the games are the same.
    assert [g.figures() | {"record": None} for g in report1.results] == [
        g.figures() | {"record": None} for g in report2.results
    ]
    rules = preset("cardavia").to_dict()
    checked = 0
    for g in report2.results:
        seat = g.seats.index(0)
        v1, v2 = seen1[g.index], seen2[g.index]
        assert len(v1) == len(v2)
        # hello is the same: it is sent before the bot says which version it speaks
        assert timeless(v1[:1]) == timeless(v2[:1])
        steps = iter(s for s in replay_steps(read_record(g.record), check=False) if s.player == seat)
        for a, b in zip(v1, v2):
            ma, mb = json.loads(a), json.loads(b)
            if ma["type"] != "choose":
                assert a == b  # hand_end, match_end and quit do not change
                continue
            oa, ob = ma.pop("observation"), mb.pop("observation")
            assert timeless([json.dumps(ma)]) == timeless([json.dumps(mb)])
            assert oa["rules"] == "cardavia" and oa["rule_set"] == rules
            assert ob["rules"] == rules and ob["rules"]["name"] == "cardavia" and "rule_set" not in ob
            step = next(steps)
            assert ob["positions"] == positions(step.before, seat).to_dict()
            assert sorted(ob["positions"]["hand"]) == sorted(ob["hand"])
            assert sorted(c for c in ob["positions"]["table"] if c) == sorted(ob["table"])
            # Everything else is version 1's, key for key and in the same order.
            rest_a = {k: v for k, v in oa.items() if k not in ("rules", "rule_set")}
            rest_b = {k: v for k, v in ob.items() if k not in ("rules", "positions")}
            assert list(rest_a.items()) == list(rest_b.items())
            assert list(ob)[:2] == ["player", "rules"] and list(ob)[-1] == "positions"
            checked += 1
        assert next(steps, None) is None
    assert checked > 10


def strings_in(value) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(strings_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(strings_in(v) for v in value)) if value else set()
    return set()


def test_a_version_2_bot_never_sees_a_hidden_card(tmp_path):
    report, seen = transcripts(tmp_path, "2", rules="nintendo", games=2, seed=9)
    checked = 0
    for g in report.results:
        seat = g.seats.index(0)
        chooses = iter(json.loads(line) for line in seen[g.index] if json.loads(line)["type"] == "choose")
        for step in replay_steps(read_record(g.record), check=False):
            if step.player != seat:
                continue
            obs = next(chooses)["observation"]
            h = step.before.hand
            seen_mask = h.hands[seat] | h.table | h.piles[0] | h.piles[1]
            if h.drawn_card >= 0:
                seen_mask |= 1 << h.drawn_card
            hidden = {CARD_NAMES[c] for c in iter_cards(((1 << NUM_CARDS) - 1) & ~seen_mask)}
            assert not strings_in(obs["positions"]) & hidden
            assert not strings_in({k: v for k, v in obs.items() if k != "previous_hand_events"}) & hidden
            # Only the bot's own hand order: the opponent's cards appear nowhere in the positions' hand.
            assert set(obs["positions"]["hand"]) == {CARD_NAMES[c] for c in iter_cards(h.hands[seat])}
            checked += 1
        for line in seen[g.index]:
            assert str(g.seed) not in line
    assert checked > 50


@pytest.mark.parametrize(
    ("answer", "version"),
    [
        ("{}", 1),
        ('{"version": 1}', 1),
        ('{"version": 2}', 2),
        ('{"version": true}', 1),  # taken as 1, as version 1 always took it
        ('{"version": 1.0}', 1),
    ],
)
def test_hello_answers(answer, version):
    assert read_hello_version(answer) == ({}, version)
    assert read_hello(answer) == {}


@pytest.mark.parametrize("value", ["3", "0", '"2"', "2.0", "null", "[2]"])
def test_other_versions_are_refused(value):
    with pytest.raises(BotError, match=r"the bot speaks protocol version .*; this arena speaks 1 and 2") as e:
        read_hello_version('{"version": ' + value + "}")
    assert e.value.kind == "protocol"


def test_a_bot_asking_for_version_3_loses_with_protocol(tmp_path):
    spec, _ = spy(tmp_path, "3")
    report = run_arena(preset("cardavia"), 1, 1, [spec, "easy"], jobs=1)
    (forfeit,) = report.forfeits
    assert forfeit["kind"] == "protocol" and "this arena speaks 1 and 2" in forfeit["reason"]


def test_observation_message_needs_a_known_version_and_the_match():
    m = Match(preset("cardavia"), seed=3)
    obs = m.observation(m.current_player)
    assert observation_message(obs) == obs.to_dict()
    with pytest.raises(ValueError, match="no protocol version 3; versions are 1, 2"):
        observation_message(obs, version=3, match=m)
    with pytest.raises(ValueError, match="version-2 observation needs the match"):
        observation_message(obs, version=2)
    v2 = observation_message(obs, version=2, match=m)
    assert v2["positions"] == positions(m, obs.player).to_dict()
    assert botproto.VERSION == 1 and botproto.VERSIONS == (1, 2)


def test_a_version_2_bot_as_the_opponent_of_the_gymnasium_env(tmp_path):
    pytest.importorskip("gymnasium")
    from koikoi.env import SingleAgentEnv

    spec, out = spy(tmp_path, "2")
    env = SingleAgentEnv(opponent=spec, rules="cardavia")
    try:
        env.reset(seed=4)
        done = False
        while not done:
            legal = env.match.legal_actions()
            _, _, done, _, _ = env.step(legal[0])
    finally:
        env.close()
    lines = [json.loads(line) for line in (out / "game-1.log").read_text().splitlines()]
    chooses = [m for m in lines if m["type"] == "choose"]
    assert chooses and all("positions" in m["observation"] and "rule_set" not in m["observation"] for m in chooses)
