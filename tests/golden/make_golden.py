"""Regenerate the golden games: ``python3 tests/golden/make_golden.py`` (deliberately, never from a test).

Each game is played by two seeded random players, saved as a record (``NAME.record.json``) and as a
transcript (``NAME.transcript.jsonl``): one JSON line per action with what the acting player sees
before it (hand, table, piles, drawn card, legal actions) and what the action did. ``tests/test_golden.py``
replays the records and compares the transcripts line by line, so any change in the engine's behaviour
shows up as a failing test. Regenerate only when a behaviour change is intended, and read the diff.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from koikoi.actions import action_name
from koikoi.cards import CARD_NAMES
from koikoi.match import Match
from koikoi.records import GameRecord, RecordError, replay_steps, write_record
from koikoi.rules import preset

HERE = Path(__file__).resolve().parent

# name: (preset, seed for the shuffles and the players' picks, birth months). The seeds were chosen so
# that the games show koi-koi calls, capture choices, redeals, exhausted hands and hand bonuses.
GAMES: dict[str, tuple[str, int, tuple[int, int]]] = {
    "traditional": ("traditional", 208, (4, 10)),  # a declared teshi/kuttsuki, an exhausted hand
    "bga": ("bga", 4, (4, 10)),  # a redeal, points transfer, additive koi-koi, bright multiplier
    "boardgame": ("boardgame", 20, (4, 10)),  # birth-month dealer, 2-2 deal, wild sake cup, first to 50
    "cardavia": ("cardavia", 89, (4, 10)),  # a single hand with three koi-koi calls
    # A dealt hand of four of a month thrown in, the koi-koi bonus points, a sake yaku raised to 3, an
    # exhausted hand paying the dealer.
    "koikoi-japan": ("koikoi-japan", 74, (4, 10)),
}
CREATED = "2000-01-01T00:00:00Z"  # fixed, so regenerating an unchanged game changes no byte


def play(name: str) -> GameRecord:
    """The golden game ``name``, played afresh by two seeded random players."""
    rules_name, seed, birth_months = GAMES[name]
    rng = random.Random(seed)
    m = Match(preset(rules_name), seed=seed, birth_months=birth_months)
    while not m.is_over():
        m.apply_action(rng.choice(m.legal_actions()))
    players = [{"name": f"random {i}", "kind": "random", "birth_month": birth_months[i]} for i in (0, 1)]
    rec = GameRecord.from_match(m, players, metadata={"golden": name})
    rec.created = CREATED
    rec.metadata = {"golden": name}
    return rec


def _names(cards) -> list[str]:
    return [CARD_NAMES[c] for c in cards]


def transcript(record: GameRecord) -> list[dict[str, Any]]:
    """One entry per action: the acting player's view before it, the action, and what it did.

    Nothing is checked on the way (the golden test compares the steps, then replays with checks), so a
    change in the engine shows as the first step that differs; an action the engine no longer accepts
    ends the transcript with an ``error`` entry.
    """
    lines: list[dict[str, Any]] = []
    steps = replay_steps(record, check=False)
    while True:
        try:
            step = next(steps)
        except StopIteration:
            return lines
        except RecordError as e:
            lines.append({"step": len(lines), "error": str(e)})
            return lines
        before = step.before
        obs = before.observation(step.player)
        lines.append(
            {
                "step": step.index,
                "hand": step.hand_number,
                "player": step.player,
                "phase": obs.phase,
                "scores": list(obs.scores),
                "stock": obs.stock_count,
                "hand_cards": _names(obs.hand),
                "table": _names(obs.table),
                "piles": [_names(p) for p in obs.piles],
                "drawn": None if obs.drawn_card is None else CARD_NAMES[obs.drawn_card],
                "yaku": [[f"{n} {p}" for n, p in ys] for ys in obs.yaku],
                "koikoi_calls": list(obs.koikoi_calls),
                "legal": [action_name(a) for a in obs.legal_actions],
                "action": step.notation,
                "then": step.description,
            }
        )


def transcript_text(record: GameRecord) -> str:
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in transcript(record))


def main(argv: list[str]) -> int:
    names = argv or list(GAMES)
    for name in names:
        rec = play(name)
        write_record(rec, HERE / f"{name}.record.json")
        text = transcript_text(rec)
        (HERE / f"{name}.transcript.jsonl").write_text(text, encoding="utf-8")
        print(f"{name}: {len(rec.hands)} hands, {text.count(chr(10))} steps, outcome {rec.outcome}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
