"""Game records: round trips, replays under every preset, unfinished games, and malformed input."""

from __future__ import annotations

import copy
import json
import os
import random

import pytest

from koikoi.actions import action_name, is_action, parse_action
from koikoi.cards import CARD_NAMES
from koikoi.match import Match, ScriptedChance
from koikoi.records import (
    FORMAT,
    VERSION,
    GameRecord,
    RecordError,
    ReplayStep,
    read_record,
    replay,
    replay_steps,
    write_record,
)
from koikoi.rules import PRESET_NAMES, preset

# The module's tests share what its module-scoped fixtures make: one worker runs them all, and makes it once.
pytestmark = pytest.mark.xdist_group("test_records")

BIRTH_MONTHS = (3, 9)


def play(rules, seed: int, choices: int, stop_after: int | None = None) -> Match:
    """A match between two seeded random players (``choices`` seeds their picks)."""
    rng = random.Random(choices)
    m = Match(rules, seed=seed, birth_months=BIRTH_MONTHS)
    steps = 0
    while not m.is_over() and (stop_after is None or steps < stop_after):
        m.apply_action(rng.choice(m.legal_actions()))
        steps += 1
    return m


def shape(m: Match) -> list:
    """Everything a match has done, for comparing two matches."""
    return [
        m.first_dealer,
        m.dealer_draws,
        m.scores,
        m.outcome,
        [(h.number, h.dealer, h.month, h.decks, h.actions, h.result) for h in m.hands],
    ]


def comparable(rec: GameRecord) -> dict:
    d = rec.to_dict()
    d.pop("created")
    return d


@pytest.fixture(scope="module")
def base() -> dict:
    """A finished wikipedia match with koi-koi calls, as decoded JSON."""
    for choices in range(100):
        m = play(preset("wikipedia"), seed=11, choices=choices)
        if any(a == parse_action("koikoi") for a in m.actions) and len(m.hands) > 3:
            return json.loads(GameRecord.from_match(m, ["Aiko", "Ben"]).to_json())
    raise AssertionError("no game with a koi-koi call")


# -- round trips and replays -----------------------------------------------------------------------


def test_write_read_round_trip(tmp_path):
    m = play(preset("bga"), seed=4, choices=4)
    rec = GameRecord.from_match(
        m, [{"name": "Aiko", "kind": "human", "rating": 1500}, "Ben"], metadata={"event": "club night"}
    )
    path = tmp_path / "game.json"
    write_record(rec, path)
    back = read_record(path)
    assert back.to_dict() == rec.to_dict()
    assert back.players[0] == {"name": "Aiko", "kind": "human", "birth_month": 3, "rating": 1500}
    assert back.metadata["event"] == "club night" and back.metadata["engine"].startswith("koikoi ")
    assert back.rules == preset("bga") and back.finished and back.seed == 4
    assert path.read_text(encoding="utf-8") == rec.to_json()
    assert sorted(os.listdir(tmp_path)) == ["game.json"]  # no temporary file left behind
    data = json.loads(path.read_text())
    assert list(data) == [
        "format",
        "version",
        "created",
        "rules",
        "players",
        "seed",
        "first_dealer",
        "dealer_draws",
        "hands",
        "outcome",
        "metadata",
    ]
    assert data["format"] == FORMAT and data["version"] == VERSION
    assert data["hands"][0]["actions"][0] in {action_name(a) for a in range(291) if is_action(a)}


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_random_games_replay_to_the_same_match(name):
    rules = preset(name)
    games = 2 if name == "boardgame" else 4
    for g in range(games):
        m = play(rules, seed=1000 + g, choices=g)
        rec = GameRecord.from_match(m)
        back = GameRecord.from_json(rec.to_json())
        again = replay(back)
        assert shape(again) == shape(m)
        assert comparable(GameRecord.from_match(again)) == comparable(rec)
        # The seed alone reproduces the deals too.
        seed_only = json.loads(rec.to_json())
        for h in seed_only["hands"]:
            h["deals"] = []
        seed_only["dealer_draws"] = []
        assert shape(replay(GameRecord.from_dict(seed_only))) == shape(m)


def test_record_without_seed_replays_from_its_deals():
    original = play(preset("traditional"), seed=21, choices=2)
    decks = [d for h in original.hands for d in h.decks]
    m = Match(preset("traditional"), chance=ScriptedChance(decks, original.dealer_draws))
    for a in original.actions:
        m.apply_action(a)
    rec = GameRecord.from_json(GameRecord.from_match(m).to_json())
    assert rec.seed is None
    assert shape(replay(rec)) == shape(original)


@pytest.mark.parametrize("name", ["wikipedia", "bga", "boardgame", "traditional"])
def test_unfinished_record_resumes_the_game(name, tmp_path):
    full = play(preset(name), seed=77, choices=5)
    actions = full.actions
    rng = random.Random(name)
    for cut in sorted(rng.sample(range(1, len(actions)), 4)) + [0]:
        m = Match(preset(name), seed=77, birth_months=BIRTH_MONTHS)
        for a in actions[:cut]:
            m.apply_action(a)
        path = tmp_path / f"cut{cut}.json"
        write_record(GameRecord.from_match(m), path)
        rec = read_record(path)
        assert not rec.finished and rec.hands[-1].result is None
        resumed = replay(rec)
        assert shape(resumed) == shape(m) and resumed.seed == 77
        assert resumed.current_player == m.current_player and resumed.legal_actions() == m.legal_actions()
        # A clone (as a search AI makes) must not disturb the resumed match's chance.
        probe = resumed.clone()
        while not probe.is_over():
            probe.apply_action(probe.legal_actions()[-1])
        for a in actions[cut:]:
            resumed.apply_action(a)
        assert shape(resumed) == shape(full)  # the same later deals as the original game


def test_unfinished_record_without_seed_can_continue():
    original = play(preset("wikipedia"), seed=8, choices=1, stop_after=30)
    decks = [d for h in original.hands for d in h.decks]
    m = Match(preset("wikipedia"), chance=ScriptedChance(decks, original.dealer_draws))
    for a in original.actions:
        m.apply_action(a)
    resumed = replay(GameRecord.from_json(GameRecord.from_match(m).to_json()))
    assert shape(resumed) == shape(m)
    rng = random.Random(0)
    while not resumed.is_over():  # later hands are dealt from fresh randomness
        resumed.apply_action(rng.choice(resumed.legal_actions()))
    assert len(resumed.hands) == 12


def test_record_saved_between_hands_deals_the_next_from_the_seed(base):
    full = replay(GameRecord.from_dict(base))
    data = copy.deepcopy(base)
    data["hands"] = data["hands"][:2]
    data["outcome"] = None
    m = replay(GameRecord.from_dict(data))
    assert m.hand_number == 3 and m.hands[2].decks == full.hands[2].decks


# -- replay_steps ------------------------------------------------------------------------------------


def test_replay_steps_show_each_action_with_the_table_before_and_after(base):
    rec = GameRecord.from_dict(base)
    steps = list(replay_steps(rec))
    assert len(steps) == sum(len(h.actions) for h in rec.hands)
    finished = 0
    for k, step in enumerate(steps):
        assert isinstance(step, ReplayStep) and step.index == k
        before, action, text = step
        assert action in before.legal_actions() and before.current_player == step.player
        assert step.notation == rec.hands[step.hand_number - 1].actions[step.action_index]
        assert text.startswith(f"player {step.player} ")
        if k + 1 < len(steps):
            assert steps[k + 1].before.hand.table == step.after.hand.table
        if step.results:
            finished += len(step.results)
            assert step.hand_after.is_over() and "over:" in text
        elif action == parse_action("koikoi"):
            assert text == f"player {step.player} called koi-koi"
    assert finished == len(rec.hands)
    assert steps[-1].after.is_over() and "Match over" in steps[-1].description
    # Snapshots are independent: playing on one leaves the others alone.
    snap = steps[0].before
    snap.apply_action(snap.legal_actions()[0])
    assert steps[1].before.hand.stock_count == steps[0].after.hand.stock_count


def test_replay_steps_check_first_or_stop_at_the_bad_action(base):
    data = copy.deepcopy(base)
    data["hands"][1]["actions"][3] = "koikoi"
    rec = GameRecord.from_dict(data)
    with pytest.raises(RecordError, match=r"hands\[1\]\.actions\[3\]"):
        next(replay_steps(rec))
    seen = []
    with pytest.raises(RecordError, match=r"hands\[1\]\.actions\[3\]: illegal action 'koikoi'"):
        for step in replay_steps(rec, check=False):
            seen.append(step)
    assert len(seen) == len(data["hands"][0]["actions"]) + 3


def test_replay_steps_without_check_show_what_the_engine_makes_of_the_record(base):
    data = copy.deepcopy(base)
    data["hands"][0]["result"]["points"] += 1  # as if an older engine had scored it differently
    data["outcome"]["scores"][0] += 1
    rec = GameRecord.from_dict(data)
    with pytest.raises(RecordError, match=r"hands\[0\]\.result\.points"):
        next(replay_steps(rec))
    steps = list(replay_steps(rec, check=False))
    assert len(steps) == sum(len(h["actions"]) for h in data["hands"])
    assert steps[-1].after.outcome.scores[0] == base["outcome"]["scores"][0]


# -- malformed records -------------------------------------------------------------------------------


def _set(path):
    def change(d, value):
        *head, last = path
        for k in head:
            d = d[k]
        d[last] = value

    return change


def _drop_card(d):
    d["hands"][0]["deals"][0].pop()


def _duplicate_card(d):
    deal = d["hands"][0]["deals"][0]
    deal[5] = deal[4]


def _tamper_points(d):
    d["hands"][0]["result"]["points"] += 1


def _illegal(d):
    hand = d["hands"][1]
    hand["actions"][0] = "stop"


def _extra_action(d):
    d["hands"][0]["actions"].append(d["hands"][0]["actions"][0])


def _drop_last_action(d):
    d["hands"][0]["actions"].pop()


def _swap_deal(d):
    deal = d["hands"][0]["deals"][0]
    deal[0], deal[47] = deal[47], deal[0]


def _seed_mismatch(d):
    d["seed"] += 1


def _middle_unfinished(d):
    d["hands"][1]["result"] = None


def _outcome_scores(d):
    d["outcome"]["scores"][0] += 5


def _outcome_missing(d):
    d["outcome"] = None


def _no_seed_no_deals(d):
    d["seed"] = None
    for h in d["hands"]:
        h["deals"] = []


def _one_hand_without_deals(d):
    d["hands"][2]["deals"] = []


def _three_players(d):
    d["players"].append({"name": "Chie"})


def _first_dealer(d):
    d["first_dealer"] = 1 - d["first_dealer"]


def _yaku_name_type(d):
    d["hands"][0]["result"]["yaku"] = [{"name": 5, "points": 1}]


MALFORMED = [
    # (id, change, words the message must contain)
    ("wrong format", _set(["format"]), ["format", "koikoi-record"]),
    ("newer version", _set(["version"]), ["version", "version 2 is not supported", "newer"]),
    ("version not a number", lambda d: d.update(version="1"), ["version", "whole number"]),
    ("unknown top field", lambda d: d.update(handz=[]), ["handz", "did you mean 'hands'"]),
    ("missing field", lambda d: d.pop("first_dealer"), ["first_dealer", "missing"]),
    (
        "unknown rule option",
        lambda d: d["rules"].update(koi_koi_limit=1),
        ["rules.koi_koi_limit", "unknown rule option", "koikoi_limit"],
    ),
    ("bad rule value", lambda d: d["rules"].update(sake_cup="maybe"), ["rules.sake_cup", "'maybe'", "animal_only"]),
    ("rules not an object", lambda d: d.update(rules="wikipedia"), ["rules", "expected an object"]),
    (
        "unknown card in a deal",
        lambda d: d["hands"][0]["deals"][0].__setitem__(3, "pine-cran"),
        ["hands[0].deals[0][3]", "unknown card 'pine-cran'", "pine-crane"],
    ),
    (
        "card given as a number",
        lambda d: d["hands"][0]["deals"][0].__setitem__(3, 7),
        ["hands[0].deals[0][3]", "expected a card name", "whole number"],
    ),
    ("deal missing a card", _drop_card, ["hands[0].deals[0]", "48 cards once", "got 47 cards", "missing"]),
    ("deal with a card twice", _duplicate_card, ["hands[0].deals[0][5]", "appears twice"]),
    ("unknown dealer draw", lambda d: d["dealer_draws"].__setitem__(0, "joker"), ["dealer_draws[0]", "'joker'"]),
    (
        "unreadable action",
        lambda d: d["hands"][0]["actions"].__setitem__(1, "play pine-crane please"),
        ["hands[0].actions[1]", "cannot read action", "expected 'play CARD'"],
    ),
    ("action as a number", lambda d: d["hands"][0]["actions"].__setitem__(1, 12), ["hands[0].actions[1]", "notation"]),
    ("illegal action", _illegal, ["hands[1].actions[0]", "illegal action 'stop'", "legal: play"]),
    ("tampered result", _tamper_points, ["hands[0].result.points", "recorded", "replay gives"]),
    ("extra action", _extra_action, ["hands[0].actions[", "the hand ended after"]),
    ("missing action", _drop_last_action, ["hands[0].actions", "not over after its", "goes on to hand 2"]),
    ("deal that is not the seed's", _swap_deal, ["hands[0].deals[0]", "not the deal seed 11 gives"]),
    ("wrong seed", _seed_mismatch, ["seed"]),
    ("unfinished hand in the middle", _middle_unfinished, ["hands[1].result", "only the last hand"]),
    ("tampered outcome", _outcome_scores, ["outcome.scores", "recorded", "replay gives"]),
    ("outcome left out", _outcome_missing, ["outcome", "the match ended"]),
    ("no seed and no deals", _no_seed_no_deals, ["deals", "no seed"]),
    ("deals of only some hands", _one_hand_without_deals, ["hands[2].deals", "every hand or of none"]),
    ("three players", _three_players, ["players", "expected 2 players, got 3"]),
    ("wrong first dealer", _first_dealer, ["first_dealer", "dealer draw"]),
    (
        "wrong dealer of a hand",
        lambda d: d["hands"][1].update(dealer=1 - d["hands"][1]["dealer"]),
        ["hands[1].dealer", "recorded"],
    ),
    ("wrong month", lambda d: d["hands"][0].update(month=5), ["hands[0].month", "recorded 5"]),
    ("hands out of order", lambda d: d["hands"][1].update(number=7), ["hands[1].number", "expected 2"]),
    ("seed not a number", lambda d: d.update(seed="11"), ["seed", "whole number or null", "a string"]),
    ("yaku name not a string", _yaku_name_type, ["hands[0].result.yaku[0].name", "expected a string"]),
    ("bad result reason", lambda d: d["hands"][0]["result"].update(reason="won"), ["hands[0].result.reason", '"won"']),
    ("player without a name", lambda d: d["players"][0].pop("name"), ["players[0].name", "missing"]),
]


@pytest.mark.parametrize("change, words", [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_record_raises_a_helpful_error_and_changes_nothing(base, tmp_path, change, words):
    data = copy.deepcopy(base)
    if change.__name__ == "change" and words[0] == "format":
        change(data, "pgn")
    elif change.__name__ == "change":
        change(data, VERSION + 1)
    else:
        change(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(RecordError) as err:
        replay(read_record(path))
    message = str(err.value)
    for w in words:
        assert w in message, f"{w!r} not in {message!r}"
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["bad.json"]


def test_wrong_seed_is_reported_at_the_first_outcome_it_contradicts(base):
    data = copy.deepcopy(base)
    data["seed"] += 1
    with pytest.raises(RecordError, match=r"^(dealer_draws\[0\]|hands\[0\]\.deals\[0\]): .* seed 12"):
        replay(GameRecord.from_dict(data))


def test_bad_json_names_line_and_column(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{\n  "format": "koikoi-record",\n  "version": 1,,\n}\n', encoding="utf-8")
    with pytest.raises(RecordError) as err:
        read_record(path)
    assert str(err.value).startswith(f"{path}: line 3, column 16: not valid JSON")
    with pytest.raises(RecordError, match="line 1, column 1: not valid JSON"):
        GameRecord.from_json("")
    with pytest.raises(RecordError, match="record: expected a JSON object, got an array"):
        GameRecord.from_json("[]")


def test_missing_file(tmp_path):
    with pytest.raises(RecordError, match="no such record file"):
        read_record(tmp_path / "nowhere.json")


def test_birth_months_required_by_the_rules(base):
    m = play(preset("boardgame"), seed=3, choices=3, stop_after=10)
    data = json.loads(GameRecord.from_match(m).to_json())
    assert data["players"][1]["birth_month"] == 9
    del data["players"][1]["birth_month"]
    with pytest.raises(
        RecordError,
        match=r"players\[1\]\.birth_month: missing: required by the rule "
        r"dealer_selection=birth_month",
    ):
        GameRecord.from_dict(data)


def test_partial_rules_start_from_the_named_preset(base):
    data = copy.deepcopy(base)
    data["rules"] = {"preset": "wikipedia"}
    assert GameRecord.from_dict(data).rules == preset("wikipedia")
    data["rules"] = {"preset": "wikipedia", "goko": 12}
    assert GameRecord.from_dict(data).rules == preset("wikipedia").replace(goko=12)


def test_aliases_are_read_and_canonical_names_written(base):
    data = copy.deepcopy(base)
    deal = data["hands"][0]["deals"][0]
    k = deal.index("willow-rainman")
    deal[k] = "Rain-Man"
    rec = GameRecord.from_dict(data)
    assert rec.hands[0].deals[0][k] == "willow-rainman"
    assert rec.to_dict() == GameRecord.from_dict(base).to_dict()


# -- atomic writes -----------------------------------------------------------------------------------


def test_failed_write_keeps_the_old_file(base, tmp_path, monkeypatch):
    path = tmp_path / "game.json"
    rec = GameRecord.from_dict(base)
    write_record(rec, path)
    old = path.read_bytes()

    bad = GameRecord.from_dict(base)
    bad.metadata = {"when": {1, 2}}  # not JSON
    with pytest.raises(RecordError, match="cannot be written as JSON"):
        write_record(bad, path)
    assert path.read_bytes() == old

    def crash(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    changed = GameRecord.from_dict(base)
    changed.players[0]["name"] = "Someone else"
    with pytest.raises(RecordError, match="cannot write the record: No space left on device"):
        write_record(changed, path)
    assert path.read_bytes() == old and os.listdir(tmp_path) == ["game.json"]


def test_invalid_record_object_is_not_written(base, tmp_path):
    rec = GameRecord.from_dict(base)
    rec.hands[0].deals[0][0] = "nonsense"
    path = tmp_path / "game.json"
    with pytest.raises(RecordError, match=r"hands\[0\]\.deals\[0\]\[0\]"):
        write_record(rec, path)
    assert not path.exists() and os.listdir(tmp_path) == []


def test_from_match_checks_players():
    m = Match(preset("cardavia"), seed=1, birth_months=(2, 5))
    with pytest.raises(RecordError, match="a match has 2 players, got 1"):
        GameRecord.from_match(m, ["solo"])
    with pytest.raises(RecordError, match=r"players\[0\]\.birth_month: 4 differs"):
        GameRecord.from_match(m, [{"name": "A", "birth_month": 4}, "B"])
    rec = GameRecord.from_match(m, [{"name": "A", "kind": "greedy"}, "B"])
    assert rec.players == [{"name": "A", "kind": "greedy", "birth_month": 2}, {"name": "B", "birth_month": 5}]
    assert rec.birth_months == (2, 5) and rec.dealer_draws == [CARD_NAMES[c] for c in m.dealer_draws]


def test_written_records_get_ordinary_permissions(base, tmp_path):
    rec = GameRecord.from_dict(base)
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    path = tmp_path / "game.json"
    write_record(rec, path)
    assert path.stat().st_mode == plain.stat().st_mode  # as open() makes them, not a private temp file
    path.chmod(0o640)
    write_record(rec, path)
    assert path.stat().st_mode & 0o777 == 0o640  # rewriting keeps the file's mode


def test_the_specification_example_is_a_valid_record():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    doc = (root / "docs" / "records.md").read_text(encoding="utf-8")
    example = doc.split("```json\n", 1)[1].split("```", 1)[0]
    rec = GameRecord.from_json(example)
    assert rec.to_json() == example  # written exactly as the writer writes it
    match = replay(rec)
    assert match.outcome.scores == (5, 0) and rec.hands[0].actions.count("koikoi") == 3


def test_records_changed_in_memory_are_checked_on_replay(base):
    rec = GameRecord.from_dict(base)
    rec.hands[0].actions[0] = "play pine-crane please"
    with pytest.raises(RecordError, match=r"hands\[0\]\.actions\[0\]: cannot read action"):
        replay(rec)
    rec = GameRecord.from_dict(base)
    rec.players = ["Aiko", "Ben"]
    with pytest.raises(RecordError, match=r"not a well-formed GameRecord"):
        replay(rec)
