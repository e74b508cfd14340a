"""KoiKoi-AI's records imported (koikoi.kkai, ``koikoi import kkai``): records written here in that format
(from matches our engine plays under koikoi-japan: none of KoiKoi-AI's dataset is in the project) come
back as the same matches; every inconsistency is refused with its file, hand and half-turn named, and
nothing is half-written."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from koikoi.actions import KOIKOI, STOP
from koikoi.cli import main
from koikoi.env import action_mask, encode
from koikoi.kkai import MAX_KKAI_BYTES, KkaiError, convert, read_kkai
from koikoi.match import Match
from koikoi.observation import observe
from koikoi.records import read_record, replay, replay_steps
from koikoi.rules import preset

KKJ = preset("koikoi-japan")


def kk_card(c: int) -> list[int]:
    return [c // 4 + 1, c % 4 + 1]


def kk_cards(mask_or_ids: Any) -> list[list[int]]:
    ids = [c for c in range(48) if mask_or_ids >> c & 1] if isinstance(mask_or_ids, int) else list(mask_or_ids)
    return [kk_card(c) for c in ids]


def kkai_match(seed: int, koikoi: float = 0.5, stop_after: int | None = None) -> tuple[dict[str, Any], Match]:
    """A match our engine plays (random cards, koi-koi with chance ``koikoi``), written as KoiKoi-AI
    writes its records (``stop_after``: saved unfinished after that many half-turns of its last hand)."""
    rng = random.Random(seed)
    m = Match(KKJ, seed=seed)
    rounds: dict[str, Any] = {}
    number = 0
    while not m.is_over():
        h = m.hand
        number += 1
        basic: dict[str, Any] = {
            "Dealer": h.dealer + 1,
            "initHand1": kk_cards(h.hands[0]),
            "initHand2": kk_cards(h.hands[1]),
            "initBoard": kk_cards(h.table),
            "initPile": kk_cards(reversed(h.stock)),  # drawn from its end
        }
        half_turns = 0
        while not h.is_over() and (stop_after is None or half_turns < stop_after):
            legal = m.legal_actions()
            if KOIKOI in legal:
                action = KOIKOI if rng.random() < koikoi else STOP
            else:
                action = rng.choice(legal)
            m.apply_action(action)
            if h.phase.name == "PLAY" or h.is_over():
                half_turns = sum(1 for e in h.public_events() if e[1] == "play")
        turns: dict[str, Any] = {}
        events = list(h.public_events())
        t = 0
        for i, (p, kind, c, captured) in enumerate(events):
            if kind == "play":
                t += 1
                draw = events[i + 1]
                after = events[i + 2][1] if i + 2 < len(events) else None
                turns[f"turn{t}"] = {
                    "playerInTurn": p + 1,
                    "discardCard": kk_card(c),
                    "collectCard": kk_cards([c] + [x for x in range(48) if captured >> x & 1 and x != c])
                    if captured
                    else [],
                    "drawCard": kk_card(draw[2]),
                    "collectCard2": kk_cards([draw[2]] + [x for x in range(48) if draw[3] >> x & 1 and x != draw[2]])
                    if draw[3]
                    else [],
                    "isKoiKoi": {"koikoi": True, "stop": False}.get(after or ""),
                }
        r = h.result
        if r is not None:
            basic["roundWinner"] = (r.winner + 1) if r.winner is not None else h.dealer + 1
            basic["player1RoundPts"], basic["player2RoundPts"] = r.deltas
        rounds[f"round{number}"] = {"basic": basic, **turns}
        if stop_after is not None:
            break
    over = m.is_over()
    data = {
        "info": {
            "player1Name": "Aoi",
            "player2Name": "Botan",
            "player1InitPts": 30,
            "player2InitPts": 30,
            "numRound": 8,
        },
        "result": {
            "isOver": over,
            "gameWinner": None,
            "player1EndPts": m.scores[0] if over else None,
            "player2EndPts": m.scores[1] if over else None,
        },
        "save": {},
        "record": rounds,
    }
    return data, m


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_record_in_koikoi_ais_format_comes_back_as_the_same_match(seed):
    data, m = kkai_match(seed)
    imported = convert(data, f"{seed}.json")
    assert [h.agrees for h in imported.hands] == [True] * len(m.results) and imported.final_agrees
    half_turns = sum(1 for rnd in data["record"].values() for k in rnd if k.startswith("turn"))
    assert imported.moves == half_turns and len(imported.hands) == len(m.results)
    rec = imported.record
    assert rec.players[0]["name"] == "Aoi" and rec.metadata["imported_from"] == "KoiKoi-AI"
    again = replay(rec)
    assert again.outcome == m.outcome and again.scores == m.scores
    assert [r.deltas for r in again.results] == [r.deltas for r in m.results]
    # Every position feeds the RL environment's encoding, the move taken among the legal ones.
    for step in list(replay_steps(rec))[:40]:
        obs = observe(step.before, step.player)
        assert encode(obs).shape[0] > 0 and action_mask(obs)[step.action] == 1


def test_a_match_saved_before_its_end_becomes_a_match_in_progress():
    data, _ = kkai_match(5, stop_after=3)
    imported = convert(data, "unfinished.json")
    assert imported.record.outcome is None and imported.final_agrees is None
    assert len(imported.record.hands) == 1 and len(imported.record.hands[0].actions) >= 3


def broken(data: dict[str, Any], change) -> dict[str, Any]:
    bad = copy.deepcopy(data)
    change(bad)
    return bad


def first_turn_with(data: dict[str, Any], key: str, test) -> str:
    rnd = data["record"]["round1"]
    return next(k for k in rnd if k.startswith("turn") and test(rnd[k][key]))


def test_what_the_engine_does_not_play_as_written_is_refused_with_where():
    data, _ = kkai_match(7)
    r1, r2 = data["record"]["round1"], data["record"]["round2"]
    took = first_turn_with(data, "collectCard", lambda v: len(v) == 2)
    quiet = first_turn_with(data, "isKoiKoi", lambda v: v is None)
    other_hand = r1["basic"]["initHand2"] if r1["turn1"]["playerInTurn"] == 1 else r1["basic"]["initHand1"]

    def turn(key: str, field: str, value: Any):
        return lambda d: d["record"]["round1"][key].__setitem__(field, value)

    mover = r1["turn1"]["playerInTurn"]
    cases = [
        (turn("turn1", "discardCard", other_hand[0]), "round1.turn1.discardCard"),
        (turn("turn1", "drawCard", [13, 1]), "round1.turn1.drawCard"),
        (turn("turn1", "playerInTurn", 3 - mover), "round1.turn1.playerInTurn"),
        (lambda d: d["record"]["round1"][took]["collectCard"].pop(), f"round1.{took}.collectCard"),
        (turn(quiet, "isKoiKoi", True), f"round1.{quiet}.isKoiKoi"),
        (lambda d: d["record"]["round2"]["basic"].__setitem__("Dealer", 3 - r2["basic"]["Dealer"]), "round2.basic"),
        (lambda d: d["record"]["round1"]["basic"]["initPile"].pop(), "round1.basic"),
        (lambda d: d["record"]["round1"]["basic"].__setitem__("player1RoundPts", 99), "round1.basic"),
        (lambda d: d["record"].pop("round2"), "record"),
        (lambda d: d["info"].__setitem__("player1InitPts", 50), "info.player1InitPts"),
        (lambda d: d["result"].__setitem__("player1EndPts", -5), "result"),
    ]
    last = [k for k in r1 if k.startswith("turn")][-1]
    cases.append((lambda d: d["record"]["round1"].pop(last), "round1"))
    for change, where in cases:
        with pytest.raises(KkaiError) as e:
            convert(broken(data, change), "7.json")
        assert e.value.where.startswith(f"7.json: record.{where}") or e.value.where.startswith(f"7.json: {where}"), (
            where,
            str(e.value),
        )
    # Not strict: a hand whose points differ is counted, not refused.
    lenient = convert(broken(data, cases[7][0]), "7.json", strict=False)
    assert not lenient.hands[0].agrees and all(h.agrees for h in lenient.hands[1:])


def test_files_too_large_or_not_json_are_refused(tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (MAX_KKAI_BYTES + 1))
    with pytest.raises(KkaiError, match="at most"):
        read_kkai(big)
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(KkaiError, match="not JSON"):
        read_kkai(bad)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 50 + "]" * 50)
    with pytest.raises(KkaiError, match="not JSON"):
        read_kkai(deep)
    for data in ([], {"record": []}, {"record": {"round1": {"basic": {"Dealer": 1}}}}):
        with pytest.raises(KkaiError):
            convert(data, "x.json")


def test_the_command_writes_one_record_a_match_or_nothing(tmp_path, capsys):
    src = tmp_path / "kkai"
    src.mkdir()
    for seed in (1, 2):
        (src / f"{seed}.json").write_text(json.dumps(kkai_match(seed)[0]))
    out = tmp_path / "records"
    assert main(["import", "kkai", str(src), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "2 of 2 records" in said and "final scores of 2 of 2 finished matches" in said
    written = sorted(p.name for p in out.iterdir())
    assert written == ["1.record.json", "2.record.json"]
    assert replay(read_record(out / "1.record.json")).outcome == kkai_match(1)[1].outcome
    # One bad file among good ones: refused by name, nothing written.
    data, _ = kkai_match(3)
    data["record"]["round1"]["turn1"]["drawCard"] = [13, 1]
    (src / "3.json").write_text(json.dumps(data))
    fresh = tmp_path / "fresh"
    assert main(["import", "kkai", str(src), "--out", str(fresh)]) != 0
    both = capsys.readouterr()
    assert "3.json: record.round1.turn1.drawCard" in both.out + both.err
    assert not fresh.exists() or not any(fresh.iterdir())
    # --report plays them all and counts.
    assert main(["import", "kkai", str(src), "--report"]) == 1
    assert "2 of 3 records" in capsys.readouterr().out
    assert main(["import", "kkai", str(tmp_path / "nowhere")]) != 0
    capsys.readouterr()


def test_the_written_records_are_what_the_importer_made(tmp_path):
    data, m = kkai_match(4, koikoi=0.9)
    path = tmp_path / "4.json"
    path.write_text(json.dumps(data))
    imported = convert(read_kkai(path), str(path))
    assert Path(imported.source).name == "4.json"
    assert imported.record.to_dict()["outcome"]["scores"] == list(m.scores)
