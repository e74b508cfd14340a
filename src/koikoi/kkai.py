"""KoiKoi-AI's game records, read and played through the engine into our records (docs/records.md,
"Importing KoiKoi-AI's records").

KoiKoi-AI (S. Guan et al., IEEE Transactions on AI 4(6), 2023; github.com/guansanghai/KoiKoi-AI, MIT)
plays KoiKoi-Japan's rules, which the preset ``koikoi-japan`` plays, and publishes its games as JSON: one
match a file, ``record.roundN`` for each hand with

- ``basic``: ``Dealer`` (1 or 2), ``initHand1``, ``initHand2``, ``initBoard``, ``initPile`` (the stock,
  drawn from its end), ``roundWinner`` and ``player1RoundPts`` / ``player2RoundPts``;
- ``turn1`` ... ``turn16`` (half-turns): ``playerInTurn``, ``discardCard``, ``collectCard`` (the played
  card first, then what it took; empty when it took nothing), ``drawCard``, ``collectCard2`` and
  ``isKoiKoi`` (null: no choice; true: koi-koi; false: stop).

A card is ``[month, index]``, index 1 to 4 from the most to the least valuable: our card
``4 * (month - 1) + index - 1``. Players 1 and 2 are our seats 0 and 1.

Each hand is dealt as recorded (our deal order holds the same hands, table and stock) and every half-turn
is played through the engine: the card played and what it took, the card drawn and what it took, the
koi-koi or stop. Anything the engine does not do as the record says (a card that is not in the hand, a
capture the rules do not make, a draw that is not the stock's next card, a decision where the rules ask
none or none where they ask one, a hand that ends elsewhere, a dealer other than the rules' dealer) is a
:class:`KkaiError` naming the file, hand and half-turn. Each hand's points are compared with the
record's (:class:`HandCheck`): with ``strict`` a difference is an error too. A record saved before its
match ended (``result.isOver`` false) becomes a record of a match in progress, its last hand as far as
it went.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import safejson
from .actions import DRAW_TAKE_BASE, KOIKOI, STOP, play_action
from .cards import CARD_NAMES, NUM_CARDS
from .hand import Hand, Phase
from .match import Match, ScriptedChance
from .records import GameRecord
from .rules import RuleSet, preset

__all__ = ["KkaiError", "HandCheck", "Imported", "convert", "read_kkai", "kkai_files", "MAX_KKAI_BYTES"]

MAX_KKAI_BYTES = 2_000_000  # a record of 8 hands is about 30 KB
MAX_ROUNDS = 100
MAX_TURNS = 16  # half-turns in a hand: 8 cards each


class KkaiError(ValueError):
    """A KoiKoi-AI record that cannot be imported: ``where`` (file, hand, half-turn) and what is wrong."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


@dataclass(frozen=True, slots=True)
class HandCheck:
    """One hand replayed: its half-turns, the points the record gives each player, and ours."""

    number: int
    half_turns: int
    recorded: tuple[int, int]
    ours: tuple[int, int]

    @property
    def agrees(self) -> bool:
        return self.recorded == self.ours


@dataclass(frozen=True, slots=True)
class Imported:
    """A record converted: ours, and the comparison of every hand."""

    source: str
    record: GameRecord
    hands: tuple[HandCheck, ...]
    final_agrees: bool | None = None  # the match's final scores, where the record gives them

    @property
    def moves(self) -> int:
        return sum(h.half_turns for h in self.hands)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class _Reader:
    """Checks the form of one record, naming where anything is wrong."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, message: str) -> KkaiError:
        return KkaiError(f"{self.source}: {where}" if where else self.source, message)

    def obj(self, value: Any, where: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(where, f"is {_shown(value)}, not an object")
        return value

    def card(self, value: Any, where: str) -> int:
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(type(x) is int for x in value)
            or not 1 <= value[0] <= 12
            or not 1 <= value[1] <= 4
        ):
            raise self.fail(where, f"{_shown(value)} is not a card [month 1-12, index 1-4]")
        month, index = int(value[0]), int(value[1])
        return 4 * (month - 1) + index - 1

    def cards(self, value: Any, where: str, most: int) -> list[int]:
        if not isinstance(value, list) or len(value) > most:
            raise self.fail(where, f"is not a list of at most {most} cards")
        out = [self.card(c, f"{where}[{i}]") for i, c in enumerate(value)]
        if len(set(out)) != len(out):
            raise self.fail(where, "holds a card twice")
        return out

    def player(self, value: Any, where: str) -> int:
        if value not in (1, 2) or type(value) is not int:
            raise self.fail(where, f"is {_shown(value)}, not player 1 or 2")
        return int(value) - 1


def read_kkai(path: str | os.PathLike[str]) -> Any:
    """A record file's JSON (bounded in size and depth)."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_KKAI_BYTES:
            raise KkaiError(str(p), f"{size} bytes: a KoiKoi-AI record is at most {MAX_KKAI_BYTES}")
        return safejson.loads(p.read_bytes(), max_depth=8)
    except OSError as e:
        raise KkaiError(str(p), f"cannot be read: {e.strerror or e}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise KkaiError(str(p), f"is not JSON: {e}") from None


def kkai_files(paths: Sequence[str | os.PathLike[str]]) -> Iterator[Path]:
    """The ``*.json`` files named, or in the folders named (sorted by name, numbers in order)."""
    for path in paths:
        p = Path(path)
        if p.is_dir():
            found = [f for f in p.iterdir() if f.suffix == ".json" and f.is_file()]
            yield from sorted(found, key=lambda f: (len(f.stem), f.stem))
        elif p.is_file():
            yield p
        else:
            raise KkaiError(str(p), "no such file or folder")


def _deck(dealer: int, hands: Sequence[list[int]], table: list[int], pile: list[int]) -> list[int]:
    """Our deck order (deal pattern 4-4: four to the non-dealer, four to the dealer, four to the table,
    twice; then the stock, top first) that deals exactly these hands, table and stock (drawn from the
    end of ``pile``)."""
    other, own = hands[1 - dealer], hands[dealer]
    deck = other[:4] + own[:4] + table[:4] + other[4:] + own[4:] + table[4:] + pile[::-1]
    return deck


def convert(data: Any, source: str, rules: RuleSet | None = None, *, strict: bool = True) -> Imported:
    """One KoiKoi-AI record (its parsed JSON) as our record, every half-turn played through the engine
    under ``rules`` (by default ``koikoi-japan``). ``strict``: a hand whose points differ from the
    record's is an error; else it is only counted (:class:`HandCheck`)."""
    rules = rules or preset("koikoi-japan")
    r = _Reader(source)
    top = r.obj(data, "")
    info = r.obj(top.get("info", {}), "info")
    record = r.obj(top.get("record"), "record")
    result_part = r.obj(top.get("result", {}), "result")
    unfinished = result_part.get("isOver") is False  # saved mid-match: its last hand may be in play
    names = [str(info.get(f"player{i}Name", f"player {i}"))[:40] for i in (1, 2)]
    for i in (1, 2):
        start = info.get(f"player{i}InitPts", rules.starting_score)
        if start != rules.starting_score:
            raise r.fail(f"info.player{i}InitPts", f"{_shown(start)}: the rules start at {rules.starting_score}")
    rounds: list[tuple[str, Mapping[str, Any]]] = []
    for n in range(1, MAX_ROUNDS + 1):
        key = f"round{n}"
        if key not in record:
            break
        rounds.append((key, r.obj(record[key], f"record.{key}")))
    if not rounds or len(rounds) != len(record):
        raise r.fail("record", "holds no hands round1, round2, ... in order, or something else besides")
    decks: list[list[int]] = []
    parsed = []
    for key, rnd in rounds:
        basic = r.obj(rnd.get("basic"), f"record.{key}.basic")
        dealer = r.player(basic.get("Dealer"), f"record.{key}.basic.Dealer")
        hand1 = r.cards(basic.get("initHand1"), f"record.{key}.basic.initHand1", 8)
        hand2 = r.cards(basic.get("initHand2"), f"record.{key}.basic.initHand2", 8)
        board = r.cards(basic.get("initBoard"), f"record.{key}.basic.initBoard", 8)
        pile = r.cards(basic.get("initPile"), f"record.{key}.basic.initPile", 24)
        deck = hand1 + hand2 + board + pile
        if len(hand1) != 8 or len(hand2) != 8 or len(board) != 8 or len(set(deck)) != NUM_CARDS:
            raise r.fail(f"record.{key}.basic", "the hands, table and stock are not the 48 cards dealt 8, 8, 8, 24")
        decks.append(_deck(dealer, [hand1, hand2], board, pile))
        parsed.append((key, rnd, basic, dealer))
    # The first dealer: dealer_selection = random takes a card's parity (0: player 1 deals).
    first = parsed[0][3]
    m = Match(rules, chance=ScriptedChance(decks, [first] if rules.dealer_selection == "random" else []))
    if m.first_dealer != first:
        raise r.fail("record.round1.basic.Dealer", f"player {first + 1}, where the rules' dealer draw gave another")
    checks = []
    for number, (key, rnd, basic, dealer) in enumerate(parsed, 1):
        if m.is_over():
            raise r.fail(f"record.{key}", "a hand after the match is over under the rules")
        h = m.hand
        if h.dealer != dealer:
            raise r.fail(
                f"record.{key}.basic.Dealer", f"player {dealer + 1}, but under the rules player {h.dealer + 1} deals"
            )
        if h.is_over():  # a redeal the record did not make (it records only the deal played)
            raise r.fail(f"record.{key}.basic", "this deal is thrown in under the rules")
        turns = 0
        for t in range(1, MAX_TURNS + 1):
            turn = rnd.get(f"turn{t}")
            if turn is None:
                break
            _half_turn(m, r, r.obj(turn, f"record.{key}.turn{t}"), f"record.{key}.turn{t}")
            turns = t
            if m.hand is not h or h.is_over():
                break
        extra = [k for k in rnd if k not in ("basic",) and k not in {f"turn{t}" for t in range(1, turns + 1)}]
        if extra:
            raise r.fail(f"record.{key}.{extra[0]}", "after the hand's end under the rules, or not a half-turn")
        if not h.is_over():
            if unfinished and number == len(parsed):
                break  # the hand in play when the record was saved
            raise r.fail(f"record.{key}", f"ends after {turns} half-turns, where the hand goes on under the rules")
        result = h.result
        assert result is not None
        pts = []
        for i in (1, 2):
            v = basic.get(f"player{i}RoundPts")
            if type(v) is not int:
                raise r.fail(f"record.{key}.basic.player{i}RoundPts", f"is {_shown(v)}, not a number of points")
            pts.append(v)
        check = HandCheck(number, turns, (pts[0], pts[1]), (result.deltas[0], result.deltas[1]))
        if strict and not check.agrees:
            raise r.fail(
                f"record.{key}.basic",
                f"the record scores {check.recorded[0]:+d} / {check.recorded[1]:+d}, "
                f"the rules {check.ours[0]:+d} / {check.ours[1]:+d}",
            )
        checks.append(check)
    if not m.is_over() and not unfinished:
        raise r.fail("record", f"ends after {len(parsed)} hands, where the match goes on under the rules")
    if m.is_over() and unfinished:
        raise r.fail("result.isOver", "is false, but the match is over under the rules")
    final = None
    if not unfinished:
        end = [result_part.get(f"player{i}EndPts") for i in (1, 2)]
        if all(type(v) is int for v in end):
            final = (end[0], end[1]) == (m.scores[0], m.scores[1])
            if strict and not final:
                raise r.fail("result", f"the record ends {end[0]} / {end[1]}, the rules {m.scores[0]} / {m.scores[1]}")
    ours = GameRecord.from_match(m, names, metadata={"imported_from": "KoiKoi-AI", "source": Path(source).name})
    return Imported(source, ours, tuple(checks), final)


def _phase(h: Hand) -> Phase:
    # Read afresh after each move (a check of h.phase before a move would otherwise stand for after it).
    return h.phase


def _half_turn(m: Match, r: _Reader, turn: Mapping[str, Any], where: str) -> None:
    h: Hand = m.hand
    p = r.player(turn.get("playerInTurn"), f"{where}.playerInTurn")
    if h.phase != Phase.PLAY or h.current_player != p:
        raise r.fail(f"{where}.playerInTurn", f"player {p + 1}, but it is player {h.current_player + 1}'s turn")
    played = r.card(turn.get("discardCard"), f"{where}.discardCard")
    took = r.cards(turn.get("collectCard"), f"{where}.collectCard", 4)
    drawn = r.card(turn.get("drawCard"), f"{where}.drawCard")
    took2 = r.cards(turn.get("collectCard2"), f"{where}.collectCard2", 4)
    decision = turn.get("isKoiKoi")
    if decision not in (None, True, False):
        raise r.fail(f"{where}.isKoiKoi", f"is {_shown(decision)}, not null, true or false")
    if not h.hands[p] >> played & 1:
        raise r.fail(f"{where}.discardCard", f"{CARD_NAMES[played]} is not in player {p + 1}'s hand")
    if took and took[0] != played:
        raise r.fail(f"{where}.collectCard", "does not begin with the card played")
    if took2 and took2[0] != drawn:
        raise r.fail(f"{where}.collectCard2", "does not begin with the card drawn")
    if h.stock_pos >= len(h.stock) or h.stock[h.stock_pos] != drawn:
        raise r.fail(f"{where}.drawCard", f"{CARD_NAMES[drawn]} is not the stock's next card")
    pile = h.piles[p]
    legal = h.legal_actions()
    choice = play_action(played, took[1]) if len(took) == 2 else None
    action = choice if choice is not None and choice in legal else play_action(played)
    if action not in legal:
        if any(
            a in legal for a in (play_action(played, t) for t in range(played & ~3, (played & ~3) + 4) if t != played)
        ):
            raise r.fail(
                f"{where}.collectCard", f"{CARD_NAMES[played]} matches two table cards: the record takes neither"
            )
        raise r.fail(f"{where}.discardCard", f"playing {CARD_NAMES[played]} is not a legal move here")
    m.apply_action(action)
    if _phase(h) == Phase.DRAW_CHOICE:
        if len(took2) != 2 or DRAW_TAKE_BASE + took2[1] not in h.legal_actions():
            raise r.fail(f"{where}.collectCard2", "the drawn card matches two table cards: the record takes neither")
        m.apply_action(DRAW_TAKE_BASE + took2[1])
    gained = h.piles[p] & ~pile
    want = sum(1 << c for c in took + took2)
    if gained != want:
        names = ", ".join(CARD_NAMES[c] for c in range(NUM_CARDS) if gained >> c & 1) or "nothing"
        raise r.fail(f"{where}.collectCard", f"the rules capture {names} this turn, not what the record says")
    if _phase(h) == Phase.DECISION:
        if decision is None:
            raise r.fail(f"{where}.isKoiKoi", "is null, but the rules ask for koi-koi or stop here")
        m.apply_action(KOIKOI if decision else STOP)
    elif decision is not None:
        raise r.fail(f"{where}.isKoiKoi", f"is {str(decision).lower()}, but the rules ask no koi-koi here")
