"""Issue 16, item 7: rule options other Koi-Koi programs use, each played on and off.

- ``koikoi_limit_scope = hand``: ``koikoi_limit`` counts both players' calls together ("once per hand"
  programs let nobody call back);
- ``exhausted_dealer = pass``: the deal passes to the other player after an exhausted hand nobody won;
- ``redeal_on_table_three``: a table holding exactly three cards of a month after the deal is redealt.

None is in a preset, and each defaults to the game as it was. Whole hands are played through
:class:`koikoi.match.Match` from scripted deals (:class:`koikoi.match.ScriptedChance`), built as
tests/test_rulings.py builds them; the batched and vectorised engines are checked against the engine.
"""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest
from playwright.sync_api import expect
from test_rulings import (
    BOTH_CALL,
    HAND_A,
    HAND_B,
    NO_YAKU,
    OTHER_CALLS,
    S_DEALER,
    S_OTHER,
    S_STOCK,
    S_TABLE,
    TABLE_C,
    TABLE_FOUR,
    TABLE_PAIRS,
    TABLE_THREE_PAIRS,
    TRAD,
    deck_for,
)
from test_web_browser import new_page

from koikoi.actions import KOIKOI, STOP, parse_action
from koikoi.cards import card
from koikoi.hand import Hand, IllegalActionError, Phase
from koikoi.match import Match, ScriptedChance
from koikoi.records import GameRecord, replay
from koikoi.rules import PRESETS, RuleError, RuleSet, load_rules, option_help, preset

NEW_OPTIONS = {
    "koikoi_limit_scope": ("player", "hand"),
    "exhausted_dealer": ("keep", "pass"),
    "redeal_on_table_three": (False, True),
}

S_DECK = deck_for(S_DEALER, S_OTHER, S_TABLE, S_STOCK)  # a deal nothing settles at once (no redeal, no bonus)


def scripted_match(rules: RuleSet, decks: list[list[int]], first_dealer: int, hands: int = 2) -> Match:
    """A match of ``hands`` hands dealt from ``decks`` in order; player ``first_dealer`` deals the first
    (dealer_selection = random reads one drawn card: its id's parity is the dealer)."""
    rules = rules.replace(dealer_selection="random", hands=hands, target_score=0)
    return Match(rules, chance=ScriptedChance(decks, [first_dealer]))


def play(m: Match, moves: list[str]) -> None:
    for text in moves:
        m.apply_action(parse_action(text))


def play_policy(m: Match) -> list[tuple[int, int]]:
    """Finish the current hand as test_rulings.policy does: the lowest card action, koi-koi whenever it is
    offered, else stop. Returns the decisions taken as (player, action)."""
    taken = []
    number = m.hand_number
    while not m.is_over() and m.hand_number == number:
        legal = m.legal_actions()
        if m.phase == Phase.DECISION:
            a = KOIKOI if KOIKOI in legal else STOP
            taken.append((m.current_player, a))
        else:
            a = min(legal)
        m.apply_action(a)
    return taken


# -- the options themselves ------------------------------------------------------------------------------------


def test_the_options_default_to_the_game_as_it_was_and_no_preset_changes_them():
    default = RuleSet()
    for name, values in NEW_OPTIONS.items():
        assert getattr(default, name) == values[0]
        for rs in PRESETS.values():
            assert getattr(rs, name) == values[0], (rs.name, name)


@pytest.mark.parametrize(
    "setting, option, value",
    [
        ("koikoi_limit_scope=hand", "koikoi_limit_scope", "hand"),
        ("koikoi-limit-scope=player", "koikoi_limit_scope", "player"),
        ("exhausted_dealer=pass", "exhausted_dealer", "pass"),
        ("redeal_on_table_three=true", "redeal_on_table_three", True),
        ("redeal_on_table_three=on", "redeal_on_table_three", True),
        ("redeal_on_table_three=off", "redeal_on_table_three", False),
    ],
)
def test_set_on_the_command_line(setting, option, value):
    rs = preset("nintendo").with_settings([setting])
    assert getattr(rs, option) == value
    assert RuleSet.from_dict(rs.to_dict()) == rs


@pytest.mark.parametrize(
    "setting, words",
    [
        ("koikoi_limit_scope=match", ["koikoi_limit_scope", "player, hand"]),
        ("exhausted_dealer=winner", ["exhausted_dealer", "keep, pass"]),
        ("redeal_on_table_three=3", ["redeal_on_table_three", "true or false"]),
        ("redeal_on_table_tree=true", ["redeal_on_table_three"]),  # the closest option is named
    ],
)
def test_bad_values_are_refused_with_the_option_named(setting, words):
    with pytest.raises(RuleError) as e:
        preset("nintendo").with_settings([setting])
    for word in words:
        assert word in str(e.value)


def test_a_rules_file_sets_them(tmp_path):
    path = tmp_path / "other-program.toml"
    path.write_text(
        'preset = "nintendo"\n[rules]\nkoikoi_limit = 1\nkoikoi_limit_scope = "hand"\n'
        'exhausted_dealer = "pass"\nredeal_on_table_three = true\n'
    )
    rs = load_rules(path)
    assert (rs.name, rs.koikoi_limit, rs.koikoi_limit_scope, rs.exhausted_dealer, rs.redeal_on_table_three) == (
        "nintendo",
        1,
        "hand",
        "pass",
        True,
    )
    path.write_text('preset = "nintendo"\nexhausted_dealer = "sometimes"\n')
    with pytest.raises(RuleError, match=r"other-program\.toml: option exhausted_dealer cannot be 'sometimes'"):
        load_rules(path)


def test_koikoi_rules_lists_them(capsys):
    from koikoi.cli import main

    assert main(["rules", "nintendo", "--set", "koikoi_limit_scope=hand", "--set", "exhausted_dealer=pass"]) == 0
    out = capsys.readouterr().out
    for name in NEW_OPTIONS:
        assert name in out
    assert "changed: exhausted_dealer, koikoi_limit_scope" in out
    helps = {name: (allowed, meaning) for name, allowed, meaning in option_help()}
    assert helps["koikoi_limit_scope"][0] == "one of player, hand"
    assert helps["exhausted_dealer"][0] == "one of keep, pass"
    assert helps["redeal_on_table_three"][0] == "true or false"


def test_the_rules_reference_gives_their_wording():
    from koikoi.rulesdoc import rules_markdown

    text = rules_markdown()
    assert "with `koikoi_limit_scope = hand` (in no preset), both players' calls" in text
    assert "with `exhausted_dealer = pass` (in no preset), the other player deals" in text
    assert "a\ntable holding exactly three cards of a month (`redeal_on_table_three`, in no preset)" in text
    for name in NEW_OPTIONS:
        assert f"| `{name}` |" in text


# -- a. the koi-koi limit per hand -------------------------------------------------------------------------------

# The S deal of test_rulings: the dealer D makes hanami-zake with their first card and may make tsukimi-zake
# with their second; the other player O makes ino-shika-cho with peony-plain-1 on their second turn.
D_CALLS = ["play cherry-plain-1", "koikoi", "play clover-plain-1"]
S_PATHS = {
    # D calls once, plays a card that raises nothing, and O makes a yaku.
    "D calls, O makes a yaku": (D_CALLS + ["play plum-plain-1", "play peony-plain-1"], "other"),
    # D calls once and makes a second yaku.
    "D calls, D makes another": (D_CALLS + ["play pampas-plain-1"], "dealer"),
    # D calls twice, then O makes a yaku.
    "D calls twice, O makes a yaku": (D_CALLS + ["play pampas-plain-1", "koikoi", "play peony-plain-1"], "other"),
}
BOTH, ONLY_STOP = [KOIKOI, STOP], [STOP]


@pytest.mark.parametrize(
    "path, limit, scope, offered",
    [
        # no limit: the scope changes nothing
        ("D calls, O makes a yaku", 0, "player", BOTH),
        ("D calls, O makes a yaku", 0, "hand", BOTH),
        ("D calls twice, O makes a yaku", 0, "hand", BOTH),
        # one call: per player O may still call back; per hand nobody may
        ("D calls, O makes a yaku", 1, "player", BOTH),
        ("D calls, O makes a yaku", 1, "hand", ONLY_STOP),
        ("D calls, D makes another", 1, "player", ONLY_STOP),
        ("D calls, D makes another", 1, "hand", ONLY_STOP),
        # two calls
        ("D calls, D makes another", 2, "player", BOTH),
        ("D calls, D makes another", 2, "hand", BOTH),
        ("D calls twice, O makes a yaku", 2, "player", BOTH),
        ("D calls twice, O makes a yaku", 2, "hand", ONLY_STOP),
        ("D calls twice, O makes a yaku", 3, "hand", BOTH),
        ("D calls twice, O makes a yaku", 8, "hand", BOTH),
    ],
)
@pytest.mark.parametrize("first_dealer", [0, 1])
def test_koikoi_limit_scope(path, limit, scope, offered, first_dealer):
    moves, decider = S_PATHS[path]
    m = scripted_match(TRAD.replace(koikoi_limit=limit, koikoi_limit_scope=scope), [S_DECK, S_DECK], first_dealer)
    play(m, moves)
    who = first_dealer if decider == "dealer" else 1 - first_dealer
    assert m.phase == Phase.DECISION and m.current_player == who
    assert m.legal_actions() == offered
    assert m.hand.is_legal(KOIKOI) is (KOIKOI in offered)
    if offered == ONLY_STOP:
        calls, actions = m.hand.koikoi_calls[:], m.actions[:]
        with pytest.raises(IllegalActionError, match="illegal action koikoi .*legal: stop"):
            m.apply_action(KOIKOI)
        assert (m.hand.koikoi_calls, m.actions, m.legal_actions()) == (calls, actions, ONLY_STOP)
    m.apply_action(STOP)
    result = m.results[0]
    assert (result.reason, result.winner) == ("stop", who)


def test_a_hand_limit_of_one_lets_the_first_caller_call_and_nobody_after():
    """A whole hand: under 'once per hand' the decisions after the first call are stops only, and the
    record of the match replays."""
    rules = TRAD.replace(koikoi_limit=1, koikoi_limit_scope="hand")
    m = scripted_match(rules, [S_DECK, S_DECK], 0)
    play(m, D_CALLS + ["play plum-plain-1", "play peony-plain-1"])
    assert m.legal_actions() == [STOP]
    m.apply_action(STOP)
    assert m.results[0].winner == 1 and m.hand_number == 2
    record = GameRecord.from_match(m)
    assert record.rules.koikoi_limit_scope == "hand"
    again = replay(GameRecord.from_json(record.to_json()))
    assert again.actions == m.actions and again.results == m.results


# -- b. the deal after an exhausted hand -------------------------------------------------------------------------

# test_rulings' found deals under its policy (lowest card, koi-koi whenever offered), from the dealer's side:
# NO_YAKU: nobody makes a yaku; BOTH_CALL: both call koi-koi, the other player last; OTHER_CALLS: only the
# other player calls.
DEALS = {"no yaku": NO_YAKU, "both call": BOTH_CALL, "other calls": OTHER_CALLS}


@pytest.mark.parametrize(
    "deal, exhausted, points, first_player, exhausted_dealer, winner, next_dealer",
    [
        # nobody won: the dealer deals again, or the other player under pass
        ("no yaku", "draw", 0, "winner", "keep", None, "dealer"),
        ("no yaku", "draw", 0, "winner", "pass", None, "other"),
        ("no yaku", "draw", 0, "loser", "keep", None, "dealer"),
        ("no yaku", "draw", 0, "loser", "pass", None, "other"),
        ("both call", "draw", 0, "winner", "pass", None, "other"),
        ("no yaku", "first_player", 2, "winner", "keep", None, "dealer"),
        ("no yaku", "first_player", 2, "winner", "pass", None, "other"),
        ("no yaku", "second_player", 2, "loser", "pass", None, "other"),
        # alternate passes the deal every hand anyway
        ("no yaku", "draw", 0, "alternate", "keep", None, "other"),
        ("no yaku", "draw", 0, "alternate", "pass", None, "other"),
        # oya-ken: the dealer won the exhausted hand and keeps the deal, pass or not
        ("no yaku", "dealer_bonus", 1, "winner", "pass", "dealer", "dealer"),
        ("no yaku", "dealer_bonus", 1, "loser", "pass", "dealer", "dealer"),
        ("no yaku", "last_koikoi", 1, "winner", "pass", "dealer", "dealer"),
        # dealer_bonus after a yaku was made: nobody won
        ("both call", "dealer_bonus", 1, "winner", "keep", None, "dealer"),
        ("both call", "dealer_bonus", 1, "winner", "pass", None, "other"),
        # last_koikoi: the last caller won the hand, and first_player decides as after a stop
        ("other calls", "last_koikoi", 1, "winner", "keep", "other", "other"),
        ("other calls", "last_koikoi", 1, "winner", "pass", "other", "other"),
        ("other calls", "last_koikoi", 1, "loser", "pass", "other", "dealer"),
        ("both call", "last_koikoi", 1, "loser", "pass", "other", "dealer"),
    ],
)
@pytest.mark.parametrize("first_dealer", [0, 1])
def test_exhausted_dealer(deal, exhausted, points, first_player, exhausted_dealer, winner, next_dealer, first_dealer):
    rules = TRAD.replace(
        exhausted=exhausted, exhausted_points=points, first_player=first_player, exhausted_dealer=exhausted_dealer
    )
    m = scripted_match(rules, [DEALS[deal], S_DECK], first_dealer)
    play_policy(m)
    result = m.results[0]
    seat = {"dealer": first_dealer, "other": 1 - first_dealer, None: None}
    assert (result.reason, result.winner) == ("exhausted", seat[winner])
    assert m.hand_number == 2 and m.hands[1].dealer == m.dealer == seat[next_dealer]
    assert m.current_player == seat[next_dealer]  # the dealer leads the hand


@pytest.mark.parametrize("first_player, next_dealer", [("winner", "dealer"), ("loser", "other")])
@pytest.mark.parametrize("exhausted_dealer", ["keep", "pass"])
def test_exhausted_dealer_leaves_a_won_hand_alone(first_player, next_dealer, exhausted_dealer):
    """A hand won by a stop follows first_player whatever exhausted_dealer says."""
    rules = TRAD.replace(first_player=first_player, exhausted_dealer=exhausted_dealer)
    m = scripted_match(rules, [S_DECK, S_DECK], 1)
    play(m, ["play cherry-plain-1", "stop"])
    assert m.results[0].winner == 1
    assert m.hands[1].dealer == {"dealer": 1, "other": 0}[next_dealer]


def test_a_passed_deal_replays_from_its_record():
    rules = TRAD.replace(exhausted_dealer="pass")
    m = scripted_match(rules, [NO_YAKU, NO_YAKU, S_DECK], 0, hands=3)
    play_policy(m)
    play_policy(m)
    assert [h.dealer for h in m.hands] == [0, 1, 0]
    again = replay(GameRecord.from_json(GameRecord.from_match(m).to_json()))
    assert [h.dealer for h in again.hands] == [0, 1, 0]
    # the same deals under keep: the dealer deals all three
    m = scripted_match(TRAD, [NO_YAKU, NO_YAKU, S_DECK], 0, hands=3)
    play_policy(m)
    play_policy(m)
    assert [h.dealer for h in m.hands] == [0, 0, 0]


# -- c. a redeal on three of a month on the table ----------------------------------------------------------------

# Tables for test_rulings' HAND_A and HAND_B (no hand bonus in either).
TABLE_THREE_SIX_MONTHS = (  # three maples and five other months: over five months, as no other redeal needs
    "maple-deer",
    "maple-blue",
    "maple-plain-1",
    "pine-plain-1",
    "plum-plain-1",
    "cherry-plain-1",
    "willow-lightning",
    "paulownia-plain-1",
)
TABLE_TWO_THREES = (
    "maple-deer",
    "maple-blue",
    "maple-plain-1",
    "willow-swallow",
    "willow-ribbon",
    "willow-lightning",
    "pine-plain-1",
    "plum-plain-1",
)
TABLE_THREE_AND_PAIRS = (
    "paulownia-phoenix",
    "paulownia-plain-1",
    "paulownia-plain-2",
    "pine-plain-1",
    "pine-plain-2",
    "plum-plain-1",
    "plum-plain-2",
    "cherry-plain-1",
)
TABLES = {
    "three in six months": TABLE_THREE_SIX_MONTHS,
    "two threes": TABLE_TWO_THREES,
    "three and pairs": TABLE_THREE_AND_PAIRS,
    "four": TABLE_FOUR,
    "four pairs": TABLE_PAIRS,
    "three pairs": TABLE_THREE_PAIRS,
    "all months differ": TABLE_C,
}


@pytest.mark.parametrize(
    "table, three, four, redeal",
    [
        ("three in six months", False, True, False),
        ("three in six months", True, True, True),
        ("two threes", False, True, False),
        ("two threes", True, False, True),
        ("three and pairs", False, True, False),
        ("three and pairs", True, True, True),
        # exactly three: four of a month are redeal_on_table_four's alone
        ("four", True, False, False),
        ("four", False, True, True),
        ("four", True, True, True),
        ("four pairs", True, True, False),
        ("three pairs", True, True, False),
        ("all months differ", True, True, False),
    ],
)
@pytest.mark.parametrize("pattern", ["4-4", "2-2"])
@pytest.mark.parametrize("first_dealer", [0, 1])
def test_redeal_on_table_three(table, three, four, redeal, pattern, first_dealer):
    rules = TRAD.replace(redeal_on_table_three=three, redeal_on_table_four=four, deal_pattern=pattern)
    deck = deck_for(HAND_A, HAND_B, TABLES[table], pattern=pattern)
    on_table = Counter(card(n) >> 2 for n in TABLES[table])
    assert (3 in on_table.values()) == table.startswith(("three in", "two threes", "three and"))
    m = scripted_match(rules, [deck, S_DECK], first_dealer)
    first = m.hands[0]
    if redeal:
        # thrown in: the hand is played from the next deal, which the record keeps after the redealt one
        assert first.decks == [deck, S_DECK] and m.hand.table == Hand(rules, S_DECK, first_dealer).table
    else:
        assert first.decks == [deck] and m.hand.table == Hand(rules, deck, first_dealer).table
    assert m.phase == Phase.PLAY and m.dealer == first_dealer and m.results == []
    h = Hand(rules, deck, first_dealer)
    assert h.needs_redeal is redeal and (h.phase == Phase.OVER) is redeal


@pytest.mark.parametrize("three", [False, True])
@pytest.mark.parametrize("four", [False, True])
def test_the_redeals_follow_the_table_on_random_deals(three, four):
    """On shuffled decks the engine redeals exactly when the table, counted card by card, asks for it."""
    rules = TRAD.replace(
        redeal_on_table_three=three,
        redeal_on_table_four=four,
        redeal_on_table_pairs=False,
        redeal_on_both_hand_bonus=False,
        hand_bonus=0,
    )
    rng = random.Random(16)
    seen = Counter()
    for _ in range(3000):
        deck = rng.sample(range(48), 48)
        h = Hand(rules, deck, rng.randrange(2))
        counts = Counter(c >> 2 for c in range(48) if h.table >> c & 1).values()
        expected = (three and 3 in counts) or (four and 4 in counts)
        assert h.needs_redeal is expected, sorted(counts)
        seen[3 in counts, 4 in counts] += 1
    assert seen[True, False] > 100 and seen[False, True] > 0  # both kinds of table came up


# -- the lobby -----------------------------------------------------------------------------------------------------


def test_the_lobby_offers_them_in_every_language():
    import json
    from pathlib import Path

    from koikoi.web import context
    from koikoi.web.games import rules_from_request

    specs = {s["name"]: s for s in context.option_specs()}
    assert specs["koikoi_limit_scope"]["choices"] == ["player", "hand"]
    assert specs["exhausted_dealer"]["choices"] == ["keep", "pass"]
    assert specs["redeal_on_table_three"]["type"] == "bool"
    rules = rules_from_request(
        {
            "preset": "nintendo",
            "options": {
                "koikoi_limit": 1,
                "koikoi_limit_scope": "hand",
                "exhausted_dealer": "pass",
                "redeal_on_table_three": True,
            },
        }
    )
    assert (rules.name, rules.koikoi_limit_scope, rules.exhausted_dealer, rules.redeal_on_table_three) == (
        "nintendo (custom)",
        "hand",
        "pass",
        True,
    )
    locales = Path(context.__file__).parent / "locales"
    for path in sorted(locales.glob("*.json")):
        texts = json.loads(path.read_text(encoding="utf-8"))
        for name, values in NEW_OPTIONS.items():
            assert texts.get(f"opt.{name}") and texts.get(f"optdoc.{name}"), (path.name, name)
            if isinstance(values[0], str):
                for v in values:
                    assert texts.get(f"choice.{name}.{v}") and texts.get(f"choicedoc.{name}.{v}"), (path.name, v)


def test_the_lobby_refuses_bad_values():
    from koikoi.web.games import GameError, rules_from_request

    for options, word in [
        ({"koikoi_limit_scope": "table"}, "koikoi_limit_scope"),
        ({"exhausted_dealer": True}, "exhausted_dealer"),
        ({"redeal_on_table_three": 1}, "redeal_on_table_three"),
    ]:
        with pytest.raises(GameError) as e:
            rules_from_request({"preset": "nintendo", "options": options})
        assert e.value.code == "bad_rules" and word in str(e.value), options


# -- the batched and vectorised engines ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes",
    [
        {"koikoi_limit": 1, "koikoi_limit_scope": "hand"},
        {"koikoi_limit": 2, "koikoi_limit_scope": "hand"},
        {"koikoi_limit": 1, "koikoi_limit_scope": "player"},
        {"redeal_on_table_three": True},
        {"redeal_on_table_three": True, "redeal_on_table_four": False, "hand_bonus": 0},
    ],
)
def test_batched_hands_play_them_as_the_engine(changes):
    pytest.importorskip("numpy")
    from test_batch import play_both

    got, expected = play_both(preset("nintendo").replace(**changes), 300, 16)
    assert got == expected
    reasons = Counter(o[0] for o in got)
    if "redeal_on_table_three" in changes:
        assert reasons["redeal"] > 30  # a three on the table is common: a redeal in a good share of deals
    if changes.get("koikoi_limit_scope") == "hand":
        # decisions after the hand's last allowed call: stops only
        assert reasons["stop"] > 100


@pytest.mark.parametrize("first_player", ["winner", "loser"])
def test_the_vector_env_passes_the_deal_as_the_engine(first_player):
    pytest.importorskip("gymnasium")
    from test_vector import run_selfplay

    rules = preset("traditional").replace(
        hands=3, exhausted_dealer="pass", first_player=first_player, koikoi_limit=1, koikoi_limit_scope="hand"
    )
    assert run_selfplay(rules, "match", 6, 150, seed=16) > 0


def test_the_lobby_sets_them_in_the_browser(browser, web):  # noqa: F811
    """A player sets the three options (and a limit of one) in the lobby's editor, reads what each chosen
    value means, and the table is made under them."""
    from koikoi.web.i18n import Translator

    tr = Translator("en")
    page = new_page(browser, viewport={"width": 1280, "height": 900})
    page.goto(web.url + "/?lang=en")
    page.select_option("#opponent", "easy")
    page.select_option("#preset", "nintendo")
    page.click("#options-box summary")
    page.wait_for_selector("#opt-koikoi_limit_scope")
    for option, value in (("koikoi_limit_scope", "hand"), ("exhausted_dealer", "pass")):
        assert page.input_value(f"#opt-{option}") == NEW_OPTIONS[option][0]
        assert page.inner_text(f"#choice-doc-{option}") == tr(f"choicedoc.{option}.{NEW_OPTIONS[option][0]}")
        page.select_option(f"#opt-{option}", value)
        assert page.inner_text(f"#choice-doc-{option}") == tr(f"choicedoc.{option}.{value}")
        assert page.inner_text(f"label[for=opt-{option}]") == tr(f"opt.{option}")
    assert not page.is_checked("#opt-redeal_on_table_three")
    page.check("#opt-redeal_on_table_three")
    page.fill("#opt-koikoi_limit", "1")
    page.dispatch_event("#opt-koikoi_limit", "change")
    expect(page.locator("#changed-count")).to_contain_text("4")
    page.click("#create")
    page.wait_for_url(re.compile(r"/play/"))
    token = page.url.split("/play/", 1)[1].split("?", 1)[0]
    rules = page.request.get(f"{web.url}/api/seat/{token}").json()["rules"]
    assert (rules["koikoi_limit"], rules["koikoi_limit_scope"], rules["exhausted_dealer"]) == (1, "hand", "pass")
    assert rules["redeal_on_table_three"] is True and rules["name"] == "nintendo (custom)"
    assert page.errors == []  # type: ignore[attr-defined]
    page.context.close()
