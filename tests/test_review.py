"""Game review (koikoi.review, ``koikoi review``) on records with blunders whose position is known.

The matches are played with their chance fixed by a seed and the players' moves scripted here, so each
test knows the position of the blunder it plants: it checks the position first (the stop's worth, the
cards left in the player's hand, the bright on the table and who can take it), then what the review
says about it.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from koikoi.actions import DRAW_TAKE_BASE, KOIKOI, PLAY_TAKE_BASE, STOP, action_name
from koikoi.cards import BRIGHTS, CARD_NAMES, MONTH_MASKS, RAIN_MAN
from koikoi.match import Match
from koikoi.records import GameRecord, replay, replay_steps, write_record
from koikoi.review import (
    REVIEW_FORMAT,
    REVIEW_VERSION,
    card_phrase,
    choose_player,
    decisions,
    reason_text,
    review_decision,
    review_record,
    review_seed,
)
from koikoi.rules import RuleSet

BUDGET = 300  # playouts per decision: small, for a 2-core machine; the blunders below cost far more than the noise
CARDAVIA = RuleSet.from_dict({"preset": "cardavia"})  # one hand; an exhausted hand is a draw; no koi-koi bonus
# A sanko worth 20 makes a bright left for an opponent holding two brights a blunder no noise can hide.
SANKO_20 = RuleSet.from_dict({"preset": "cardavia", "sanko": 20})
PLAYERS = [{"name": "Aiko", "kind": "human"}, {"name": "Bot", "kind": "easy"}]


def plain(m: Match) -> None:
    """A scripted move: stop when offered, else the first legal action."""
    legal = m.legal_actions()
    m.apply_action(STOP if STOP in legal else legal[0])


def koikoi_blunder() -> tuple[GameRecord, int, int]:
    """A match where player 0 calls koi-koi with one card left and a stop worth 3 or more, and the hand
    then ends worse for them than the stop: (record, the decision's step, the stop's points).

    With one card left the caller has one turn to raise the score, and under cardavia an exhausted
    hand scores nothing even for the caller: koi-koi there all but throws the points away."""
    for seed in range(2000):
        m = Match(CARDAVIA, seed=seed)
        step = worth = None
        while not m.is_over():
            obs = m.observation(m.current_player)
            if step is None and obs.player == 0 and obs.phase == "decision":
                if len(obs.hand) != 1 or KOIKOI not in obs.legal_actions or obs.yaku_scores[0] < 3:
                    break  # not the position wanted: the next seed
                step, worth = len(m.actions) + 1, obs.yaku_scores[0] * obs.multipliers[0]
                m.apply_action(KOIKOI)
                continue
            plain(m)
        if step is not None and m.is_over() and m.hands[0].result.deltas[0] < worth:
            return GameRecord.from_match(m, PLAYERS), step, worth
    raise AssertionError("no seed gives the koi-koi blunder")


def bright_blunder() -> tuple[GameRecord, int, int]:
    """A match where player 0 plays a card of a month with two cards on the table, a bright and another,
    and takes the other, leaving the bright; the opponent holds two brights and the month's last card:
    (record, the blunder's step, the bright). Under :data:`SANKO_20`."""
    non_rain = BRIGHTS & ~RAIN_MAN
    for seed in range(10_000):
        m = Match(SANKO_20, seed=seed)
        step = bright = None
        while not m.is_over():
            obs = m.observation(m.current_player)
            if step is None and obs.player == 0 and obs.phase == "play":
                if (obs.pile_masks[1] & non_rain).bit_count() == 2:
                    for a in obs.legal_actions:
                        if not PLAY_TAKE_BASE <= a < DRAW_TAKE_BASE:
                            continue
                        card, r = divmod(a - PLAY_TAKE_BASE, 4)
                        month = MONTH_MASKS[card >> 2]
                        taken = 1 << ((card & ~3) | r)
                        left = obs.table_mask & month & ~taken
                        if left & non_rain and not taken & BRIGHTS and m.hand.hands[1] & month:
                            step, bright = len(m.actions) + 1, left.bit_length() - 1
                            m.apply_action(a)
                            break
                    if step is not None:
                        continue
            plain(m)
        if step is not None:
            return GameRecord.from_match(m, PLAYERS), step, bright
    raise AssertionError("no seed gives the bright blunder")


def entry_at(doc: dict, step: int) -> dict:
    return next(e for e in doc["decisions"] if e["step"] == step)


def test_a_koikoi_that_throws_the_stop_away_is_marked_with_its_reason():
    record, step, worth = koikoi_blunder()
    doc = review_record(record, 0, playouts=BUDGET)
    e = entry_at(doc, step)
    assert e["phase"] == "decision" and e["played"]["name"] == "koikoi"
    assert e["best"]["name"] == "stop" and e["best"]["points"] == worth  # a stop's value is exact
    assert e["played"]["points"] < worth - 1
    assert e["loss"] == round(e["best"]["points"] - e["played"]["points"], 2) > 1
    assert e["marks"] == ["mistake", "koikoi"]
    assert e["reason"].startswith(f"stopping was worth {worth}, koi-koi was expected to ")
    result = record.hands[0].result["deltas"][0] - record.hands[0].result["deltas"][1]
    assert f"the hand then ended {result:+d} for you instead of {worth}" in e["reason"]
    assert {"kind": "koikoi_cost", "stop": worth, "result": result} in e["reason_parts"]
    s = doc["summary"]
    assert s["koikoi_mistakes"] == 1 and s["mistakes"] >= 1 and s["points_lost"] >= e["loss"]
    assert s["mistakes"] == sum(1 for d in doc["decisions"] if d["marks"])


def test_a_bright_left_for_the_opponents_sanko_is_marked_with_its_reason():
    record, step, bright = bright_blunder()
    doc = review_record(record, 0, playouts=BUDGET)
    e = entry_at(doc, step)
    assert e["phase"] == "play" and e["played"]["name"].startswith("play ")
    month = CARD_NAMES[bright].split("-")[0]
    assert e["best"]["name"].startswith(f"play {month}-"), "the best move takes the bright"
    assert "mistake" in e["marks"] and e["loss"] > 1
    assert (
        e["reason"].startswith("took a plain ") and f" card instead of {card_phrase(bright)} and left " in e["reason"]
    )
    assert f"left {card_phrase(bright)} for the opponent's sanko" in e["reason"]
    assert {"kind": "left_for", "card": bright, "yaku": "sanko"} in e["reason_parts"]


def test_every_decision_with_a_choice_is_reviewed_and_no_other():
    record, _, _ = koikoi_blunder()
    seen = []
    doc = review_record(record, 0, playouts=20, progress=lambda done, total: seen.append((done, total)))
    expected = [
        s.index + 1 for s in replay_steps(record) if s.player == 0 and len(s.before.observation(0).legal_actions) > 1
    ]
    assert [e["step"] for e in doc["decisions"]] == expected and expected
    assert seen == [(i, len(expected)) for i in range(len(expected) + 1)]
    for e in doc["decisions"]:
        assert e["choices"] > 1 and e["loss"] >= 0
        assert e["best"]["points"] >= e["played"]["points"]
        assert action_name(e["played"]["action"]) == e["played"]["name"]
    assert doc["format"] == REVIEW_FORMAT and doc["version"] == REVIEW_VERSION
    assert json.loads(json.dumps(doc)) == doc
    assert doc["summary"]["decisions"] == len(expected)
    assert doc["summary"]["points_lost"] == round(sum(e["loss"] for e in doc["decisions"]), 2)


def test_the_same_game_gives_the_same_review():
    record, _, _ = bright_blunder()
    first = review_record(record, 0, playouts=40)
    again = review_record(GameRecord.from_json(record.to_json()), 0, playouts=40)
    assert again == first
    # Names, dates and metadata do not change the game, nor its review's figures.
    renamed = GameRecord.from_match(
        replay(record),
        [{"name": "X", "kind": "human"}, {"name": "Y"}],
        metadata={"note": "another copy"},
    )
    assert review_seed(renamed) == review_seed(record)
    assert review_record(renamed, 0, playouts=40)["decisions"] == first["decisions"]
    # A decision worked out alone (as the web server's workers do) gives the same entry.
    pos = decisions(record, 0)[2]
    assert review_decision(pos, review_seed(record), 40) == first["decisions"][2]
    # Another budget is another search.
    assert review_record(record, 0, playouts=41)["engine"]["playouts"] == 41


def test_choose_player():
    record, _, _ = koikoi_blunder()
    assert choose_player(record, None) == 0  # the one human
    assert choose_player(record, "1") == 1 and choose_player(record, 0) == 0
    assert choose_player(record, "bot") == 1 and choose_player(record, " Aiko ") == 0
    with pytest.raises(ValueError, match="no player 'Carol' in this record; choose 0, 1, 'Aiko' or 'Bot'"):
        choose_player(record, "Carol")
    with pytest.raises(ValueError, match="player must be 0 or 1"):
        decisions(record, 2)


KOIKOI_CMD = shutil.which("koikoi")


@pytest.mark.skipif(KOIKOI_CMD is None, reason="the koikoi console script is not installed")
def test_the_command(tmp_path):
    record, step, worth = koikoi_blunder()
    path = tmp_path / "game.json"
    write_record(record, path)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([KOIKOI_CMD, "review", *args], capture_output=True, text=True, timeout=120)

    got = run(str(path), "--budget", str(BUDGET), "--json")
    assert got.returncode == 0, got.stderr
    doc = json.loads(got.stdout)
    assert doc == review_record(record, 0, playouts=BUDGET), "the command gives the library's review"
    text = run(str(path), "--budget", str(BUDGET), "--player", "Aiko")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith(f"Review of Aiko (player 0) in {path} · cardavia rules · {BUDGET} playouts")
    assert lines[1].split() == ["hand", "move", "played", "value", "best", "value", "loss", "mark", "reason"]
    row = next(line for line in lines if " koikoi " in line)
    assert "stop" in row and "mistake, koikoi" in row and f"stopping was worth {worth}" in row
    e = entry_at(doc, step)
    # Each value with the playouts' standard error; the stop's value is exact and has none.
    assert f"{e['played']['points']:+.2f} ±{e['played']['stderr']:.2f}" in row
    assert f"{e['loss']:.2f} ±{e['loss_stderr']:.2f}" in row and f"{e['best']['points']:+.2f} " in row
    assert e["verdict"] == "mistake"
    # A loss within the noise is no mistake: the row says so instead.
    equal = [d for d in doc["decisions"] if d["verdict"] == "equal"]
    assert sum("within noise" in line for line in lines) == len(equal)
    for d in doc["decisions"]:
        if d["best"]["action"] != d["played"]["action"]:
            assert any(f"{d['loss']:.2f} ±" in line and d["best"]["name"] in line for line in lines), d
    assert lines[-1].startswith(f"{doc['summary']['decisions']} decisions with a choice; ")
    assert f"{doc['summary']['mistakes']} mistakes" in lines[-1]
    other = run(str(path), "--budget", "20", "--player", "1", "--json")
    assert json.loads(other.stdout)["name"] == "Bot"
    bad = run(str(path), "--player", "Carol")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip() == "koikoi: error: no player 'Carol' in this record; choose 0, 1, 'Aiko' or 'Bot'"
    missing = run(str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and missing.stderr.strip().endswith("nope.json: no such record file")
    broken = tmp_path / "broken.json"
    broken.write_text(path.read_text().replace('"koikoi"', '"stop"', 1))
    refused = run(str(broken))
    assert refused.returncode == 2 and refused.stderr.startswith("koikoi: error: hands[0].")
    assert run(str(path), "--budget", "0").returncode == 2


def test_reason_lines():
    crane, boar, deer, plain = 0, 24, 36, 2  # pine-crane, clover-boar, maple-deer, pine-plain-1
    assert [card_phrase(c) for c in (crane, boar, 1, 40, 32, plain)] == [
        "the crane",
        "the boar",
        "the pine poetry ribbon",
        "the rain man",
        "the sake cup",
        "a plain pine card",
    ]
    took = {"kind": "took", "took": [plain], "discarded": None, "instead": [crane], "instead_discarded": None}
    left = {"kind": "left_for", "card": boar, "yaku": "ino-shika-cho"}
    assert (
        reason_text([took, left])
        == "took a plain pine card instead of the crane and left the boar for the opponent's ino-shika-cho"
    )
    assert reason_text([{**took, "took": [], "discarded": deer}]) == "discarded the deer instead of taking the crane"
    assert (
        reason_text([{**took, "instead": [], "instead_discarded": deer}])
        == "took a plain pine card instead of discarding the deer"
    )
    assert reason_text([{**took, "took": [], "discarded": plain, "instead": [], "instead_discarded": deer}]) == (
        "discarded a plain pine card instead of the deer"
    )
    assert reason_text([{"kind": "played", "card": plain, "instead": 1}]) == (
        "played a plain pine card instead of the pine poetry ribbon"
    )
    assert reason_text([{"kind": "stop_was_worth", "stop": 6, "koikoi": -2.1}]) == (
        "stopping was worth 6, koi-koi was expected to lose 2.1"
    )
    assert reason_text([{"kind": "stop_was_worth", "stop": 6, "koikoi": 2.5}]) == (
        "stopping was worth 6, koi-koi was expected to bring 2.5"
    )
    parts = [
        {"kind": "koikoi_was_worth", "stop": 2, "koikoi": 4.31},
        {"kind": "left", "card": crane},
        {"kind": "missed", "yaku": "tane"},
    ]
    assert reason_text(parts) == (
        "koi-koi was expected to bring 4.3, stopping only 2, "
        "left the crane on the table for the opponent and missed your tane"
    )
    blue, sake = 33, 32  # chrysanthemum-blue, chrysanthemum-sake
    setup = {"kind": "setup", "card": blue, "partner": sake, "yaku": "aotan"}
    discard = {**took, "took": [], "discarded": plain, "instead": [], "instead_discarded": blue}
    assert reason_text([discard, setup]) == (
        "discarded a plain pine card instead of the chrysanthemum blue ribbon, "
        "to take it back with the sake cup for your aotan"
    )
    assert reason_text([{**took, "instead_discarded": 1}, setup]) == (
        "took a plain pine card instead of discarding the pine poetry ribbon and discarding the chrysanthemum "
        "blue ribbon would let you take it back with the sake cup for your aotan"
    )
    assert reason_text([]) == ""


def test_an_unfinished_record_is_reviewed_up_to_where_it_stops():
    m = Match(CARDAVIA, seed=3)
    while len(m.actions) < 9:
        plain(m)
    assert not m.is_over()
    record = GameRecord.from_match(m, PLAYERS)
    doc = review_record(record, 1, playouts=20)
    assert doc["finished"] is False and doc["name"] == "Bot"
    steps = [s.index + 1 for s in replay_steps(record) if s.player == 1 and len(s.before.legal_actions()) > 1]
    assert [e["step"] for e in doc["decisions"]] == steps and steps
    assert all("koikoi" not in e["marks"] for e in doc["decisions"])  # no hand result to judge a call by
