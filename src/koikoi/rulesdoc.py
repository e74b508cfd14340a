"""The project's rules reference, docs/rules.md, written from the code.

The tables (the deck, the yaku per preset, the options and their values per preset) are read off
:mod:`koikoi.cards` and :mod:`koikoi.rules`; the prose between them is the template below. The
document is regenerated with ``koikoi rules --markdown > docs/rules.md`` (or
``python3 scripts/rules_doc.py``), and tests/test_rules_doc.py fails when the file is out of date.

>>> text = rules_markdown()
>>> text.startswith("# Koi-Koi rules") and "| goko |" in text
True
"""

from __future__ import annotations

import dataclasses

from .cards import CARD_TABLE, MONTH_NAMES, Kind
from .rules import PRESET_DESCRIPTIONS, PRESET_NAMES, PRESETS, YAKU_OPTIONS, RuleSet, option_help

__all__ = ["rules_markdown", "REGENERATE", "PRESET_SOURCES"]

REGENERATE = "koikoi rules --markdown > docs/rules.md"

# Where each preset comes from. The seeds are the source texts the project started from (a Russian,
# two Ukrainian and a Vietnamese page); their values are summarised here in the project's own words.
PRESET_SOURCES = {
    "traditional": "Seed 000, a Russian-language rules page for the classic game (3, 6 or 12 hands). "
    "Its default scoring is the one kept here: only a base of 7 or more doubles. A dealt "
    "teshi or kuttsuki must be declared on the first turn; two complete months score 14. "
    "The page also lists house rules, available as options: 3-point sake yaku, sake yaku "
    "voided by the rain man (`rainman_ruins`) or not combined with bright yaku "
    "(`not_with_brights`: the better of the two counts), +1 per further card on ino-shika-cho, "
    "akatan and aotan (with both, a ribbon outside both sets counts once, for akatan), and "
    '"all doublings" (the preset `traditional-all-doubles`).',
    "bga": "Seed 001, Board Game Arena's game help for Koi-Koi (a Ukrainian translation). Its simple koi-koi "
    "(each call adds 1 to the multiplier), the brights-on-the-table multiplier, 50 points each that "
    "the loser pays, and 6 hands are from the seed. The seed points to the in-game list for the yaku, "
    "so the yaku values are the common ones (BGA adapts them from the Sloperama and Hanafubuki "
    "rules); only the 6-point hand bonus is from the text.",
    "boardgame": "Seed 002, the rules of a boxed board-game edition (Ukrainian). From it: ame-shiko 6, a "
    "sake cup that counts as animal or chaff, whichever scores more, sake yaku only beside "
    "a normal yaku (tsukifuda, a special yaku, does not count), tsukifuda, oya-ken (1 point to "
    "the dealer when neither player made a yaku) or the last koi-koi caller's "
    "yaku when the stock runs out, dealing in twos, and play to 50 points with the first "
    "dealer chosen by birth month.",
    "cardavia": "Seed 003, the Koi-Koi page of the Cardavia card-game site (Ukrainian). A single hand, "
    "higher values for the bright yaku and the ribbon trios, no sake yaku and no multipliers; "
    "both players holding a hand bonus means a redeal.",
    "wikipedia": "Seed 004, the Vietnamese-language Wikipedia article on Koi-Koi. From it: the 7+ double, "
    "the double for winning after the opponent's koi-koi, the 6-point hand bonus, the sake "
    "cup as animal and chaff at once, and 1 point to the dealer (oya-ken; the dealer "
    "keeps the deal) when the stock runs out. The article's yaku table is missing from the "
    "text, so the yaku values are the common ones.",
    "nintendo": "Not one of the seeds: Nintendo's Japanese rule sheet, which most Koi-Koi software follows "
    "(the points were found through Fuda Wiki). Ino-shika-cho, akatan and aotan score 1 more per "
    "further animal or ribbon; akatan and aotan together are one 10-point yaku; a base of 7 or "
    "more doubles, and winning after the opponent's koi-koi doubles. Its exhausted hand is a "
    "draw, as the sheet gives no other rule.",
    "traditional-all-doubles": 'Seed 000 again, with its "all doublings" variant: a base of 7 or more, '
    "one's own koi-koi and the opponent's koi-koi each double the hand.",
    "koikoi-japan": "Not one of the seeds: the rules of the Steam game KoiKoi-Japan as KoiKoi-AI plays them "
    '(S. Guan et al., "Learning to Play Koi-Koi Hanafuda Card Games with Transformers", IEEE Transactions '
    "on Artificial Intelligence 4(6), 2023; github.com/guansanghai/KoiKoi-AI, MIT: its engine "
    "`koikoigame.py`, its yaku table `markdown/koikoi_yaku.png` and its 201 game records). From them: "
    "8 hands from 30 points each, the loser paying the winner and the match over once a score is 0 or "
    "less; the first dealer at random, the hand's winner dealing next and the dealer keeping the deal "
    "after an exhausted hand, which pays the dealer 1 and costs the other 1 whatever yaku are held; no "
    "7-point double and no double for the opponent's koi-koi, but 1 point more for each of one's own "
    "koi-koi calls up to three and, from the fourth, the points times the calls less 2; the sake yaku "
    "worth 1, or 3 once their holder has called koi-koi; akatan and aotan together 10 more on top of "
    "5 and 5; the sake cup as animal and chaff; no koi-koi on a player's last (eighth) turn; a redeal "
    "when either dealt hand or the table holds four cards of one month, with no hand bonus.",
}

_KIND_NAMES = {Kind.BRIGHT: "bright", Kind.ANIMAL: "animal", Kind.RIBBON: "ribbon", Kind.CHAFF: "chaff"}

# Notes on the cards that take part in special yaku (the table's last column).
_CARD_NOTES = {
    "pine-poetry": "red poetry ribbon (akatan)",
    "plum-poetry": "red poetry ribbon (akatan)",
    "cherry-poetry": "red poetry ribbon (akatan)",
    "cherry-curtain": "hanami-zake with the sake cup",
    "wisteria-ribbon": "plain red ribbon",
    "iris-ribbon": "plain red ribbon",
    "clover-ribbon": "plain red ribbon",
    "willow-ribbon": "plain red ribbon",
    "peony-blue": "blue ribbon (aotan)",
    "chrysanthemum-blue": "blue ribbon (aotan)",
    "maple-blue": "blue ribbon (aotan)",
    "peony-butterflies": "ino-shika-cho",
    "clover-boar": "ino-shika-cho",
    "maple-deer": "ino-shika-cho",
    "pampas-moon": "tsukimi-zake with the sake cup",
    "chrysanthemum-sake": "the sake cup: an animal, and chaff too under some rules (`sake_cup`)",
    "willow-rainman": "the rain man: spoils sanko, makes ame-shiko",
    "willow-lightning": "the willow's only chaff",
}

# The cards column of the yaku table, where the option's own help says something else.
_YAKU_CARDS = {
    "akatan": "the 3 poetry ribbons: pine, plum, cherry",
    "aotan": "the 3 blue ribbons: peony, chrysanthemum, maple",
    "akatan_aotan": "akatan and aotan held together, scored as one yaku instead of the two",
    "tsukimi_zake": "the moon (pampas) and the sake cup",
    "hanami_zake": "the curtain (cherry) and the sake cup",
    "tsukifuda": "the 4 cards of the hand's month",
}

_INTRO = """\
# Koi-Koi rules

This is the rules reference of the project: the deck, the play of a hand, every yaku with its points
under every preset, every rule option with its allowed values and the value each preset gives it, and
the source each preset follows. How the engine settles the points the sources leave open is in
[rules-notes.md](rules-notes.md).

The tables are written from the code (`koikoi.cards`, `koikoi.rules`), so they always say what the
engine does. Do not edit this file by hand: change the code, or the text in `src/koikoi/rulesdoc.py`,
and regenerate it with

    {regenerate}

(or `python3 scripts/rules_doc.py`); `tests/test_rules_doc.py` fails while the file is out of date.
`koikoi rules PRESET` shows one rule set in the terminal.
"""

_DECK_INTRO = """\
## 1. The deck

Hanafuda has 48 cards: 12 months of 4 cards, each month a plant. Every card is one of four kinds:
bright, animal, ribbon or chaff (plain). The command line, game records, bot messages and the Python
API name cards by the canonical names below; the romaji names and the other aliases are accepted too,
in any case, with spaces or underscores for the hyphens, as are the ids 0..47. A card's id is
(month - 1) x 4 + its place in the month, the cards of a month running bright, animal, ribbon, chaff.
"""

_HAND = """\
## 2. A hand

A match is a series of hands (also called months or rounds) between two players. One of them is the
dealer (oya), who leads the hand.

**The deal.** The deck is shuffled; each player gets 8 cards, 8 go face up on the table, and the
remaining 24 stay face down as the stock. The order in which cards are dealt (`deal_pattern`) only
matters for replaying a game from its seed.

**Before the first turn.** Some deals are thrown in and dealt again: a table holding all four cards of
a month (`redeal_on_table_four`), under some rules a table of four pairs (`redeal_on_table_pairs`) or a
table holding exactly three cards of a month (`redeal_on_table_three`, in no preset), and deals in which
both players hold a hand bonus (`redeal_on_both_hand_bonus`); under some rules, too, a dealt hand of
either player holding all four cards of a month (`redeal_on_hand_four`, KoiKoi-Japan) or four pairs
(`redeal_on_hand_pairs`, OHA, the computer of Battle Hanafuda), with no hand bonus paid. A player dealt all four
cards of a month (teshi) or four pairs (kuttsuki) wins the hand with the hand bonus (`hand_bonus`;
`hand_bonus_two_months` for two complete months). Where `hand_bonus_declared` is on, the holder must
declare it on their first turn, before playing a card, or it is lost.

**Turns.** The dealer plays first and the players then alternate; a player cannot pass. A turn has two
steps, and both capture the same way:

- *From the hand*: the player lays any card of their hand; it need not match anything. If the table
  holds one card of the same month, the player takes both. If it holds two, the player picks which one
  to take with their card. If it holds three, the player takes all four. If it holds none, the card
  stays on the table.
- *From the stock*: the top card of the stock is turned over and captured in the same way (with two
  table cards of its month the player picks again); a card that matches nothing stays on the table.

A card that can capture always does, and every capture is public: it goes into the player's capture
pile, face up. Each player sees their own hand, the table and both capture piles; the opponent's hand
and the order of the stock stay hidden (only their sizes are known).

**Koi-koi or stop.** Only when both steps are over are the player's yaku (section 3) counted from their
capture pile. If the turn made a yaku the player did not have, or raised the points of one they had
(one more chaff past ten counts), the player chooses:

- *stop* (agari): the hand ends and the player scores it (section 4);
- *koi-koi*: play goes on, hoping for more. The player may stop later only on a turn that again makes a
  new yaku or raises one.

Either player may call koi-koi, as often as they like unless `koikoi_limit` sets a limit. The limit
counts each player's own calls, or, with `koikoi_limit_scope = hand` (in no preset), both players' calls
together: with `koikoi_limit = 1` the hand's first koi-koi is then its only one, and a player who makes a
yaku after it, either player, must stop. A player whom the limit leaves no call is offered only the stop.
A yaku made on a player's very last turn can still be stopped on; koi-koi is not offered then, since no
turn is left.

**The end of a hand.** A hand ends when a player stops, or when both hands are empty without a stop
(the hand is exhausted: see `exhausted` in section 4).
"""

_YAKU_INTRO = """\
## 3. Yaku

A yaku is a scoring combination of the cards in a capture pile. The points of each yaku under each
preset are below; "off" means the preset does not score it. The bright yaku (goko, shiko, ame-shiko,
sanko) exclude each other: only the best one counts, and three brights that include the rain man make no
yaku at all. Every other yaku adds to them (akatan and tanzaku, for example, both count). Tane, tanzaku
and kasu score 1 more for each card past their minimum; "+1" beside ino-shika-cho, akatan or aotan
means the same for each further animal or ribbon. When akatan and aotan are both held and the rule set
scores them as one yaku (`akatan_aotan`), that yaku replaces both, or, with `akatan_aotan_adds`, comes on
top of both (koikoi-japan: 10 + 5 + 5). The sake cup's part in tane and kasu
is set by `sake_cup`, and the two sake yaku can be restricted by `sake_yaku` (section 6). Tsukifuda needs
the four cards of the hand's month: hand 1 is January (pine), hand 2 February, and so on, round the year.
"""

_SETTLE = """\
## 4. Settling a hand

**A stop.** The player who stops scores the sum of their yaku points (the base) times every multiplier
the rule set has that applies; each applies once, and they multiply together:

- `seven_point_double`: a base of 7 or more doubles. The test is on the base, before any other
  multiplier.
- `koikoi_multiplier`: `additive` adds 1 to the stopping player's multiplier for each koi-koi they called
  (x2, x3, ...); `opponent_double` doubles when the opponent had called koi-koi; `own_double` doubles when
  the stopping player had called koi-koi; `own_and_opponent_double` applies both doubles; `none` gives no
  bonus; `own_points_then_multiply` adds 1 point to the base for each koi-koi the stopping player called,
  for one to three calls (a 5-point sanko after two calls scores 7), and from the fourth call multiplies
  the base by the calls less 2 instead (after four calls x2, after five x3: sanko then scores 10, 15).
- `sake_after_koikoi`: once the stopping player has called koi-koi in the hand, each of their sake yaku
  (tsukimi-zake, hanami-zake) is worth this many points instead of its own (koikoi-japan: 1 becomes 3).
  Only under `sake_yaku = on`: the other sake settings keep their own points.
- `bright_table_multiplier`: the number of brights on the table after the deal (at least 1) multiplies
  the hand.

The hand bonus of a dealt teshi or kuttsuki is never multiplied. Under `transfer` the loser of a hand
pays the winner's points out of their own score.

**An exhausted hand** (both hands empty, nobody stopped) is settled by `exhausted`: `draw` (nobody
scores, whatever yaku are held); `dealer_bonus` (oya-ken: if neither player made a yaku, the dealer
scores `exhausted_points` and keeps the deal; otherwise a draw); `first_player` or `second_player`
(read by seat: the first player is the dealer, who leads the hand, the second the other; that seat
gains `exhausted_points` and the other loses them); `last_koikoi` (the last player
to call koi-koi scores their yaku as if they had stopped; if nobody called, the dealer scores
`exhausted_points`).

## 5. A match

A match is `hands` hands long, or, with `hands = 0`, lasts until a player's score reaches
`target_score` (a target can also end a fixed-length match early). Each player starts with
`starting_score`; under `transfer` a player whose score falls to 0 or below loses at once. The first
dealer is chosen by `dealer_selection`: `draw` (each player draws a card and the earlier month deals),
`random`, or `birth_month` (the player born nearer the month of a drawn card deals). Afterwards
`first_player` says who deals the next hand: the winner of the last one, its loser, or the players in
turn (`alternate`). After an exhausted hand that nobody won (a draw, or `first_player` /
`second_player` under `exhausted`, or `dealer_bonus` when a yaku was made) the dealer deals again, or,
with `exhausted_dealer = pass` (in no preset), the other player deals; under `alternate` the deal passes
anyway. An exhausted hand that pays the dealer (oya-ken) keeps the deal with the dealer, and one that
pays the last koi-koi caller follows `first_player` like a stop. The player with more points at the end
wins the match; equal scores are a drawn match.

The tables below list every option of a rule set: what it takes (whole numbers are bounded, see
[rules-notes.md](rules-notes.md#bounds)), what it means, and the value each preset gives it (a value
other than the default is in bold). Any option can be changed on top of a preset: `--set option=value`
on the command line, a TOML rules file (`preset = "bga"` then `option = value` lines), or
`RuleSet.replace(option=value)` in Python.
"""

_RULINGS = """\
## 7. Rulings

Points that are easy to get wrong, as the engine plays them:

1. The koi-koi-or-stop choice comes after a turn that makes a new yaku or raises a held one, never
   between the two steps of a turn. Where an option can lower a pile's score (`rain_ruins`,
   `rainman_ruins`, `not_with_brights`), a newly made yaku still offers the choice even if the total is
   not above the total at the last koi-koi.
2. The 7-point double looks at the base score, before the koi-koi multipliers; doubles multiply (x2 and
   x2 make x4).
3. On a player's last turn, yaku are counted and the stop is offered before the hand is declared
   exhausted; koi-koi is not offered when no turn remains.
4. With `sake_cup = both` the sake cup counts at once as an animal (tane), as chaff (kasu), and in both
   sake yaku.
5. The bright yaku exclude each other: the rain man with two other brights is no yaku, and the rain man
   with three others is ame-shiko, not sanko.
6. A card that meets three cards of its month on the table takes all four, from the hand or from the
   stock alike.
7. Koi-koi can be called any number of times unless `koikoi_limit` limits it, and the player who has not
   called it may call it too when they make a yaku, unless `koikoi_limit_scope = hand` counts the calls of
   both players against the one limit.
8. Hwatu (Go-Stop) rules are not part of Koi-Koi here: no doubled chaff, no bombs, no stealing.

Where the sources disagree: one source calls the wild card an iris, the others the chrysanthemum sake
cup, which is followed here; the brights-on-the-table multiplier belongs to Board Game Arena and is on
only in `bga`; Cardavia has no sake yaku and no multipliers, so its preset has both off; the classic text
has the hand bonus declared on the first turn while the others award it at once, hence
`hand_bonus_declared`, on only in `traditional`.

Three options are in no preset and come from other Koi-Koi programs, so that a match can be played
under their rules: a koi-koi limit for the whole hand (`koikoi_limit_scope = hand`, with `koikoi_limit`;
"once per hand" programs let nobody call back), the deal passing after an exhausted hand nobody won
(`exhausted_dealer = pass`), and a redeal when three cards of one month lie on the table after the deal
(`redeal_on_table_three`). Off, each leaves the game as it is without them.

The engine's rulings on the points the sources leave open (koi-koi with an empty hand, the hand bonus
and the multipliers, exhausted hands under each rule, birth-month distances, the tsukifuda month, ...)
and the bounds of every option are in [rules-notes.md](rules-notes.md).
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _deck() -> str:
    rows = []
    for card_id, (name, kind, aliases) in enumerate(CARD_TABLE):
        month = card_id // 4 + 1
        rows.append(
            [
                str(card_id),
                f"{month} {MONTH_NAMES[month - 1]}",
                _KIND_NAMES[kind],
                f"`{name}`",
                f"`{aliases[0]}`",
                ", ".join(f"`{a}`" for a in aliases[1:]),
                _CARD_NOTES.get(name, ""),
            ]
        )
    counts = {k: sum(1 for _, kind, _ in CARD_TABLE if kind is k) for k in Kind}
    summary = (
        f"{counts[Kind.BRIGHT]} brights, {counts[Kind.ANIMAL]} animals, {counts[Kind.RIBBON]} ribbons "
        f"and {counts[Kind.CHAFF]} chaff, {len(CARD_TABLE)} cards.\n"
    )
    return (
        _DECK_INTRO
        + "\n"
        + _table(["id", "month", "kind", "canonical name", "romaji", "other aliases", "note"], rows)
        + "\n"
        + summary
    )


def _yaku_cell(option: str, rs: RuleSet) -> str:
    pts = getattr(rs, option)
    if not pts:
        return "off"
    text = str(pts)
    plus = {
        "ino_shika_cho": rs.ino_shika_cho_plus,
        "akatan": rs.akatan_plus,
        "aotan": rs.aotan_plus,
        "akatan_aotan": rs.akatan_plus or rs.aotan_plus,
    }
    if plus.get(option):
        text += " +1"
    if option in ("tsukimi_zake", "hanami_zake"):
        if rs.sake_yaku == "off":
            return "off"
        if rs.sake_yaku != "on":
            text += f" ({rs.sake_yaku})"
    return text


def _hand_bonus_cell(rs: RuleSet) -> str:
    if not rs.hand_bonus:
        return "off"
    text = str(rs.hand_bonus)
    extra = []
    if rs.hand_bonus_two_months:
        extra.append(f"{rs.hand_bonus_two_months} for two full months")
    if rs.hand_bonus_declared:
        extra.append("declared")
    return text + (f" ({', '.join(extra)})" if extra else "")


def _yaku() -> str:
    docs = {name: meaning for name, _, meaning in option_help()}
    presets = [PRESETS[n] for n in PRESET_NAMES]
    rows = [
        [option.replace("_", "-"), _YAKU_CARDS.get(option, docs[option]), *(_yaku_cell(option, rs) for rs in presets)]
        for option in YAKU_OPTIONS
    ]
    rows.append(
        [
            "teshi / kuttsuki",
            "a dealt hand of 4 cards of a month, or 4 pairs (`hand_bonus`)",
            *(_hand_bonus_cell(rs) for rs in presets),
        ]
    )
    return _YAKU_INTRO + "\n" + _table(["yaku", "cards", *PRESET_NAMES], rows)


def _value(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _options() -> str:
    default = RuleSet()
    rows = [[f"`{name}`", allowed, meaning, _value(getattr(default, name))] for name, allowed, meaning in option_help()]
    presets = [PRESETS[n] for n in PRESET_NAMES]
    values = []
    for f in dataclasses.fields(RuleSet):
        if f.name == "name":
            continue
        cells = []
        for rs in presets:
            v = getattr(rs, f.name)
            cells.append(f"**{_value(v)}**" if v != getattr(default, f.name) else _value(v))
        values.append([f"`{f.name}`", *cells])
    return (
        "## 6. Options\n\n"
        + _table(["option", "allowed values", "meaning", "default"], rows)
        + "\n### Values per preset\n\n"
        + _table(["option", *PRESET_NAMES], values)
    )


def _presets() -> str:
    parts = [
        "## 8. The presets and their sources\n",
        'Each preset is the rule set of one source. The source texts ("seeds") are kept outside the '
        "project; what each preset takes from its source is summarised here.\n",
    ]
    for name in PRESET_NAMES:
        parts.append(
            f"### `{name}`\n\nIn short: {PRESET_DESCRIPTIONS.get(name, '')}.\n\n"
            f"Source: {PRESET_SOURCES.get(name, 'not recorded')}\n"
        )
    return "\n".join(parts)


def rules_markdown() -> str:
    """The text of docs/rules.md."""
    sections = [
        _INTRO.format(regenerate=REGENERATE),
        _deck(),
        _HAND,
        _yaku(),
        _SETTLE,
        _options(),
        _RULINGS,
        _presets(),
    ]
    return "\n".join(s.rstrip("\n") + "\n" for s in sections)
