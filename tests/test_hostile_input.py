"""Malformed input from strangers: every entry point refuses it with a message naming the problem, never a
traceback, and changes nothing. Action numbers, card names, game records, rules files and rule options."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import koikoi.match as match_module
import koikoi.records as records_module
from koikoi.actions import (
    KOIKOI,
    NUM_ACTIONS,
    PLAY_TAKE_BASE,
    ActionParseError,
    action_name,
    check_action,
    is_action,
    parse_action,
    play_action,
)
from koikoi.cards import CARD_NAMES, UnknownCardError, card
from koikoi.cli import main
from koikoi.hand import IllegalActionError
from koikoi.match import Match
from koikoi.records import (
    MAX_RECORD_ACTIONS,
    MAX_RECORD_DEALER_DRAWS,
    MAX_RECORD_DEALS,
    MAX_RECORD_DEPTH,
    MAX_RECORD_HAND_ACTIONS,
    MAX_RECORD_HANDS,
    GameRecord,
    RecordError,
    read_record,
    replay,
    replay_steps,
)
from koikoi.rules import (
    MAX_HANDS,
    MAX_POINTS,
    MAX_SCORE,
    PRESETS,
    YAKU_OPTIONS,
    RuleError,
    RuleSet,
    load_rules,
    option_help,
    preset,
)

BAD_NUMBERS = [-1, -2, -48, -144, -145, -300, NUM_ACTIONS, 300, 10**6, 2**63, -(2**63), 10**5000]
NOT_NUMBERS = [True, False, None, 1.0, 0.5, "0", "play pine-crane", [0], b"\x00"]
# 48 + 4c + (c & 3): the card played would take itself, so no action has these numbers.
SELF_TAKES = [PLAY_TAKE_BASE + 4 * c + (c & 3) for c in range(48)]


def short(value) -> str:
    """A test id that never formats a number of thousands of digits."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**12:
        return f"{'-' if value < 0 else ''}{value.bit_length()}bits"
    return repr(value)[:20]


def play_out(m: Match, rng: random.Random, hands: int | None = None) -> Match:
    while not m.is_over() and (hands is None or len(m.results) < hands):
        legal = m.legal_actions()
        m.apply_action(legal[int(rng.random() * len(legal))])
    return m


def long_record(hands: int, seed: int = 1) -> GameRecord:
    """A valid record of ``hands`` finished hands (and the next deal) under a rule set without a hand limit."""
    rules = preset("traditional").replace(hands=0, target_score=MAX_SCORE, name="custom")
    m = play_out(Match(rules, seed=seed), random.Random(seed), hands)
    return GameRecord.from_match(m, ["A", "B"])


# -- action numbers -----------------------------------------------------------------------------------


@pytest.mark.parametrize("n", BAD_NUMBERS + SELF_TAKES, ids=short)
def test_action_name_refuses_numbers_that_are_no_action(n):
    with pytest.raises(ValueError, match="no action has the number"):
        action_name(n)
    assert not is_action(n)


@pytest.mark.parametrize("n", NOT_NUMBERS, ids=short)
def test_action_name_refuses_what_is_not_a_number(n):
    with pytest.raises(ValueError, match=r"an action is a whole number 0\.\.290"):
        action_name(n)
    assert not is_action(n)


def test_every_other_number_names_an_action_that_reads_back():
    named = [a for a in range(NUM_ACTIONS) if is_action(a)]
    assert len(named) == NUM_ACTIONS - 48
    for a in named:
        assert parse_action(action_name(a)) == a
        assert parse_action(str(a)) == a
    # No name of a card taking itself: "play X take X" is refused in both directions.
    assert not any(name.split()[1] == name.split()[-1] for name in map(action_name, named) if " take " in name)
    with pytest.raises(ActionParseError, match="cannot take itself"):
        parse_action("play chrysanthemum-blue take chrysanthemum-blue")


@pytest.mark.parametrize("text", ["-1", "291", "+300", "181", "9" * 5000, "¹", "٣", "1.0", "0x10", "", " "])
def test_parse_action_refuses_numbers_that_are_no_action(text):
    with pytest.raises(ActionParseError, match="cannot read action") as e:
        parse_action(text)
    assert len(str(e.value)) < 300


@pytest.mark.parametrize("value", [None, 5, True, b"stop", ["stop"]])
def test_parse_action_refuses_what_is_not_text(value):
    with pytest.raises(ActionParseError, match="an action is read from text"):
        parse_action(value)


@pytest.mark.parametrize("args", [(-1,), (48,), (True,), (0, -1), (0, 0), (0, 4), (0, True), ("0",)])
def test_play_action_refuses_bad_cards(args):
    with pytest.raises(ValueError):
        play_action(*args)


def _engine_state(m: Match):
    h = m.hand
    return (m.actions, list(m.scores), h.hands, h.table, h.piles, h.stock_count, h.phase, h.current_player)


@pytest.mark.parametrize("bad", BAD_NUMBERS + NOT_NUMBERS + SELF_TAKES[:5], ids=short)
def test_engine_refuses_bad_action_numbers_and_changes_nothing(bad):
    m = Match(preset("traditional"), seed=5)
    play_out(m, random.Random(5), hands=1)
    # One position in each phase the match reaches; each refuses the bad number.
    rng = random.Random(1)
    phases = set()
    for _ in range(200):
        if m.is_over():
            break
        phases.add(m.phase)
        before = _engine_state(m)
        assert not m.hand.is_legal(bad)
        for apply in (m.apply_action, m.hand.apply_action):
            with pytest.raises(IllegalActionError) as e:
                apply(bad)
            message = str(e.value)
            assert "legal: " in message and len(message) < 2000
            if isinstance(bad, int) and not isinstance(bad, bool):
                assert "no action has the number" in message
                assert "0..290" in message or "taking itself" in message
            else:
                assert "an action is a whole number 0..290" in message
            assert _engine_state(m) == before
        legal = m.legal_actions()
        m.apply_action(legal[int(rng.random() * len(legal))])
    assert len(phases) >= 2


@given(st.one_of(st.integers(), st.booleans(), st.floats(), st.text(max_size=8), st.none()))
@settings(max_examples=300, deadline=None)
def test_any_value_is_an_action_or_refused_with_a_value_error(value):
    m = Match(preset("cardavia"), seed=2)
    before = _engine_state(m)
    if is_action(value):
        assert check_action(value) == value and action_name(value)
        if value in m.legal_actions():
            return
    else:
        with pytest.raises(ValueError):
            check_action(value)
        with pytest.raises(ValueError):
            action_name(value)
    assert m.hand.is_legal(value) is False
    with pytest.raises(IllegalActionError):
        m.apply_action(value)
    assert _engine_state(m) == before


def test_a_finished_match_refuses_bad_numbers_too():
    m = play_out(Match(preset("cardavia"), seed=3), random.Random(3))
    for bad in (-1, 10**100, True):
        with pytest.raises(IllegalActionError, match="the match is over"):
            m.apply_action(bad)


# -- card names -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["¹", "٣", "４", "48", "-1", "+1", "1e1", "0x1", "05", " ", "", "pine\x00crane", "x" * 100_000, "pine-crane" * 10],
    ids=short,
)
def test_card_refuses_anything_but_exact_names_and_ascii_ids(text):
    with pytest.raises(UnknownCardError) as e:
        card(text)
    assert len(str(e.value)) < 200


@pytest.mark.parametrize("value", [None, True, False, -1, 48, 10**100, 1.0, b"pine-crane", ["pine-crane"]], ids=short)
def test_card_refuses_other_values_clearly(value):
    with pytest.raises(UnknownCardError, match=r"card|0\.\.47"):
        card(value)


def test_card_reads_names_aliases_and_ascii_ids():
    for i, name in enumerate(CARD_NAMES):
        assert card(name) == card(name.upper()) == card(str(i)) == card(i) == i
    assert card(" Rain Man ") == card("rain_man") == card("willow-rainman")


@given(st.text(max_size=30))
@settings(max_examples=300, deadline=None)
def test_any_text_is_a_card_or_an_unknown_card_error(text):
    try:
        c = card(text)
    except UnknownCardError:
        return
    assert 0 <= c < 48


def test_unicode_digits_in_an_action_or_record_are_refused():
    with pytest.raises(ActionParseError, match="unknown card"):
        parse_action("play ¹")
    rec = json.loads(GameRecord.from_match(Match(preset("cardavia"), seed=1)).to_json())
    rec["dealer_draws"][0] = "³"
    with pytest.raises(RecordError, match=r"dealer_draws\[0\]: unknown card"):
        GameRecord.from_dict(rec)


# -- records --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["[" * 30000, '{"a": ' * 30000, "[" * (MAX_RECORD_DEPTH + 1) + "]" * (MAX_RECORD_DEPTH + 1)]
)
def test_deeply_nested_record_is_refused_before_parsing(text):
    with pytest.raises(RecordError, match=r"not a game record: its JSON is nested \d+ levels deep; at most 16"):
        GameRecord.from_json(text)


@pytest.mark.parametrize("text", ['{"format": ' + "9" * 5000 + "}", "\ud800", "", "null", "[]", "{}", '"x"'])
def test_other_malformed_records_are_refused(text):
    with pytest.raises(RecordError):
        GameRecord.from_json(text)


def test_replay_cli_refuses_a_deeply_nested_record(tmp_path, capsys):
    f = tmp_path / "deep.json"
    f.write_text("[" * 30000)
    assert main(["replay", "--all", str(f)]) == 2
    err = capsys.readouterr().err
    assert "deep.json" in err and "nested 30000 levels deep" in err and "Traceback" not in err


@pytest.mark.parametrize("content", [b"\xff\xfe[", b"{" * 40000, b"9" * 6000])
def test_replay_cli_refuses_other_garbage(tmp_path, capsys, content):
    f = tmp_path / "bad.json"
    f.write_bytes(content)
    assert main(["replay", "--all", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("koikoi: error:") and "bad.json" in err and "Traceback" not in err


def test_record_caps_name_the_path():
    rec = json.loads(GameRecord.from_match(play_out(Match(preset("cardavia"), seed=4), random.Random(4))).to_json())

    def refused(data, where):
        with pytest.raises(RecordError) as e:
            GameRecord.from_dict(data)
        assert e.value.where == where and "at most" in e.value.problem
        return e.value

    many = json.loads(json.dumps(rec))
    many["hands"] = many["hands"] * (MAX_RECORD_HANDS + 1)
    assert "1,001 hands" in str(refused(many, "hands"))
    long_hand = json.loads(json.dumps(rec))
    long_hand["hands"][0]["actions"] = ["stop"] * (MAX_RECORD_HAND_ACTIONS + 1)
    refused(long_hand, "hands[0].actions")
    deals = json.loads(json.dumps(rec))
    deals["hands"][0]["deals"] = deals["hands"][0]["deals"] * (MAX_RECORD_DEALS + 1)
    refused(deals, "hands[0].deals")
    draws = json.loads(json.dumps(rec))
    draws["dealer_draws"] = ["pine-crane"] * (MAX_RECORD_DEALER_DRAWS + 1)
    refused(draws, "dealer_draws")
    # The total: hands of the most actions one may hold, until the whole record holds too many.
    total = json.loads(json.dumps(rec))
    hand = total["hands"][0]
    per = MAX_RECORD_HAND_ACTIONS
    count = MAX_RECORD_ACTIONS // per + 1
    total["hands"] = [dict(hand, number=k + 1, actions=["stop"] * per) for k in range(count)]
    refused(total, f"hands[{count - 1}].actions")


def test_record_rules_out_of_bounds_are_refused():
    rec = json.loads(GameRecord.from_match(Match(preset("cardavia"), seed=1)).to_json())
    rec["rules"]["goko"] = 10**18
    with pytest.raises(RecordError, match=r"rules\.goko: option goko cannot be .*0\.\.100"):
        GameRecord.from_dict(rec)


def test_a_long_valid_record_reads_and_replays():
    rec = long_record(40, seed=2)
    again = GameRecord.from_json(rec.to_json())
    m = replay(again)
    assert len(m.results) == 40 and m.hand_number == 41


# -- replay is linear in the record's length -------------------------------------------------------------


class _Counting:
    """Counts hand records made (copies of a hand's record are where a replay's work used to grow)."""

    def __init__(self, monkeypatch):
        self.made = 0
        counter = self
        base = match_module.HandRecord

        class Counted(base):  # type: ignore[misc, valid-type]
            __slots__ = ()

            def __init__(self, *args, **kwargs):
                counter.made += 1
                super().__init__(*args, **kwargs)

        monkeypatch.setattr(match_module, "HandRecord", Counted)
        monkeypatch.setattr(records_module, "HandRecord", Counted)


def _work(record: GameRecord, monkeypatch, run) -> tuple[int, int]:
    counter = _Counting(monkeypatch)
    clones = [0]
    real_clone = Match.clone

    def clone(self):
        clones[0] += 1
        return real_clone(self)

    monkeypatch.setattr(Match, "clone", clone)
    steps = run(record)
    return counter.made + 10 * clones[0], steps


def test_replay_steps_work_per_step_does_not_grow_with_the_record(monkeypatch):
    short, long = long_record(8, seed=3), long_record(32, seed=3)
    per_step = []
    for rec in (short, long):
        work, steps = _work(rec, monkeypatch, lambda r: sum(1 for _ in replay_steps(r)))
        per_step.append(work / steps)
    # One copy of the hand in progress per snapshot (plus one per hand dealt); before, every snapshot
    # copied every hand so far, four times as many in the longer record.
    assert per_step[1] <= per_step[0] * 1.2 + 0.1
    assert per_step[1] < 3


def test_replay_frames_work_is_linear(monkeypatch):
    views = pytest.importorskip("koikoi.web.views")
    short, long = long_record(8, seed=4), long_record(32, seed=4)
    per_step = []
    for rec in (short, long):
        work, steps = _work(rec, monkeypatch, lambda r: len(views.replay_frames(r)) - 1)
        per_step.append(work / steps)
    assert per_step[1] <= per_step[0] * 1.2 + 0.1


def test_snapshots_share_finished_hands_and_stay_independent():
    rec = long_record(6, seed=5)
    steps = list(replay_steps(rec))
    last = steps[-1].after
    first_of_hand_4 = next(s for s in steps if s.hand_number == 4)
    # A finished hand's record is shared by every later snapshot, not copied into each.
    assert first_of_hand_4.before.hands[0] is last.hands[0]
    assert first_of_hand_4.before.hands[-1] is not last.hands[3]
    assert len(first_of_hand_4.before.hands) == 4 and len(last.hands) == 7
    assert [h.number for h in last.hands] == list(range(1, 8))
    assert last.hands[-3:] == [last.hands[4], last.hands[5], last.hands[6]]
    # Playing on a snapshot changes neither the others nor the shared records.
    snap = first_of_hand_4.before
    seen = [len(h.actions) for h in last.hands]
    play_out(snap, random.Random(1), hands=snap.hand_number + 1)
    assert [len(h.actions) for h in last.hands] == seen
    assert len(snap.hands) == 6 and snap.hands[-1].number == 6
    record = GameRecord.from_match(snap)  # a snapshot is a whole match: it records and replays
    assert replay(GameRecord.from_json(record.to_json())).scores == snap.scores


# -- rules files ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, problem",
    [
        ("x = " + "[" * 30000, "nested 30000 levels deep"),
        ("x = " + "{a = " * 3000, "nested 3000 levels deep"),
        ("a" + ".a" * 30000 + " = 1", "30001 dotted parts"),
        ("# " + "x" * (70 * 1024), "too large"),
        ("goko = 1000", "option goko cannot be 1000: it takes a whole number 0..100"),
        ("hands = 101", "option hands cannot be 101: it takes a whole number 0..100"),
        ("goko = 99999999999999999999999", "option goko cannot be"),
        ("goko = ٣", "not valid TOML"),
        ('"' + "a" * 70 + '" = 1', "unknown rule option"),
    ],
)
def test_bad_rules_files_are_refused_naming_file_and_problem(tmp_path, capsys, text, problem):
    f = tmp_path / "bad.toml"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(RuleError) as e:
        load_rules(f)
    assert str(f) in str(e.value) and problem in str(e.value) and len(str(e.value)) < 1200
    assert main(["rules", "--rules-file", str(f)]) == 2
    err = capsys.readouterr().err
    assert problem in err and "Traceback" not in err


def test_a_rules_file_may_hold_strings_with_brackets_and_dots(tmp_path):
    f = tmp_path / "ok.toml"
    f.write_text(
        '# a comment [[[[[[ with ... many .......... dots\npreset = "bga"\n'
        '[rules]\nname = "a.b.c.d.e.f.g.h.i.j [[[["\nhands = 3\n',
        encoding="utf-8",
    )
    rs = load_rules(f)
    assert rs.hands == 3 and rs.name.startswith("a.b")


# -- rule option bounds -----------------------------------------------------------------------------------

INT_OPTIONS = [f for f in dataclasses.fields(RuleSet) if f.type in ("int", int)]


def test_every_whole_number_option_has_a_minimum_and_a_maximum():
    assert INT_OPTIONS
    for f in INT_OPTIONS:
        lo, hi = f.metadata["minimum"], f.metadata["maximum"]
        assert isinstance(lo, int) and isinstance(hi, int) and lo <= f.default <= hi, f.name
    assert all(
        allowed.startswith("a whole number 0..")
        for name, allowed, _ in option_help()
        if name in {f.name for f in INT_OPTIONS}
    )


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_is_within_the_bounds(name):
    rs = PRESETS[name]
    assert RuleSet.from_dict(rs.to_dict()) == rs


@pytest.mark.parametrize("f", INT_OPTIONS, ids=lambda f: f.name)
def test_out_of_range_values_are_refused_naming_option_and_range(f):
    lo, hi = f.metadata["minimum"], f.metadata["maximum"]
    base = preset("boardgame") if f.name == "hands" else preset("traditional")
    assert getattr(base.replace(**{f.name: hi}), f.name) == hi
    for bad in (lo - 1, hi + 1, 10**30, True):
        with pytest.raises(RuleError, match=rf"option {f.name} cannot be .*: it takes a whole number {lo}\.\.{hi}"):
            base.replace(**{f.name: bad})
        with pytest.raises(RuleError, match=rf"option {f.name} cannot be"):
            base.with_settings([f"{f.name}={bad}"])
    with pytest.raises(RuleError, match=rf"option {f.name} cannot be '٣'"):
        base.with_settings([f"{f.name}=٣"])


def test_rule_set_names_are_short():
    with pytest.raises(RuleError, match="at most 64 characters"):
        preset("bga").replace(name="x" * 65)


def test_the_highest_scores_fit_the_web_score_column():
    """The bounds keep any score far below 10**15: a match at every maximum that scores the most it can."""
    points = {name: MAX_POINTS for name in YAKU_OPTIONS + ("hand_bonus", "hand_bonus_two_months", "exhausted_points")}
    rules = preset("traditional").replace(
        **points,
        hands=MAX_HANDS,
        starting_score=MAX_SCORE,
        koikoi_multiplier="additive",
        bright_table_multiplier=True,
        transfer=False,
        koikoi_limit=0,
    )
    rng = random.Random(7)
    m = Match(rules, seed=7)
    while not m.is_over():
        legal = m.legal_actions()
        m.apply_action(KOIKOI if KOIKOI in legal else legal[int(rng.random() * len(legal))])
    assert max(abs(s) for s in m.scores) < 10**8
    assert len(f"{m.scores[0]},{m.scores[1]}") < 64


# -- read_record ---------------------------------------------------------------------------------------


def test_read_record_of_a_directory_or_missing_file(tmp_path):
    with pytest.raises(RecordError, match="cannot read the record"):
        read_record(tmp_path)
    with pytest.raises(RecordError, match="no such record file"):
        read_record(tmp_path / "missing.json")
