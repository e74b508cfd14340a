"""Regenerate the levels' golden choices: ``python3 tests/golden/make_level_choices.py`` (deliberately,
never from a test).

Each case plays seeded matches between two agents of one level (small search budgets, no time cap, so
the choices depend on the seeds alone) and keeps, for each of its first plies, the acting agent's
choice and the ranking a twin of the same seed gives the same observation: every legal action with its
value and, where the agent gives them, its points, match chance and standard error.
``tests/test_level_choices.py`` plays the cases again and compares, so a change in any level's
choices, or in the figures its hints show, fails a test. Regenerate only when a change
of play is intended, and read the diff of ``level-choices.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from koikoi.ai import make_agent
from koikoi.match import Match
from koikoi.rules import preset

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "level-choices.json"

# (level, options, rules preset, match seed, plies). The budgets are small: the choices, not the strength.
CASES: list[tuple[str, dict[str, Any], str, int, int]] = [
    ("random", {}, "nintendo", 1, 40),
    ("easy", {}, "nintendo", 2, 40),
    ("easy", {}, "bga", 3, 40),
    ("medium", {}, "nintendo", 4, 60),
    ("medium", {}, "cardavia", 5, 40),
    ("medium", {"koikoi_playouts": 0}, "nintendo", 4, 60),
    ("hard", {"playouts": 300, "time_limit": None}, "nintendo", 6, 60),
    ("hard", {"playouts": 300, "time_limit": None}, "bga", 7, 40),
    ("hard", {"playouts": 300, "time_limit": None}, "wikipedia", 8, 40),
    ("hard", {"playouts": 300, "time_limit": None, "batched": False}, "nintendo", 9, 40),
    ("hard", {"playouts": 300, "time_limit": None, "match_play": "blend", "discard_factor": 1.0}, "nintendo", 10, 40),
    ("hard", {"playouts": 300, "time_limit": None, "noise": 3.0}, "traditional", 11, 40),
    ("expert", {"playouts": 600, "time_limit": None}, "nintendo", 12, 40),
    ("hard-v1", {"playouts": 300, "time_limit": None}, "nintendo", 13, 40),
]


def _num(x: float | None) -> float | None:
    return None if x is None else round(x, 9)


def play(level: str, options: dict[str, Any], rules: str, seed: int, plies: int) -> list[list[Any]]:
    """The choices and rankings of the first ``plies`` plies of seeded matches between two agents of ``level``
    (a new match, the next seed, when one ends first)."""
    # The players choose (``choose``); twins of the same seeds rank the same observations (``rank``).
    agents = [make_agent(level, seed=seed * 10 + i, **options) for i in (0, 1)]
    twins = [make_agent(level, seed=seed * 10 + i, **options) for i in (0, 1)]
    out: list[list[Any]] = []
    m = Match(preset(rules), seed=seed)
    while len(out) < plies:
        if m.is_over():
            m = Match(preset(rules), seed=seed + 1000 + len(out))
        p = m.current_player
        obs = m.observation(p)
        chosen = agents[p].choose(obs)
        ranked = twins[p].rank(obs)
        out.append([chosen, [[c.action, _num(c.value), _num(c.points), _num(c.win), _num(c.stderr)] for c in ranked]])
        m.apply_action(chosen)
    return out


def cases() -> list[dict[str, Any]]:
    return [
        {"level": lv, "options": opts, "rules": r, "seed": s, "rankings": play(lv, opts, r, s, n)}
        for lv, opts, r, s, n in CASES
    ]


def main(argv: list[str]) -> int:
    GOLDEN.write_text(json.dumps(cases(), separators=(",", ":")) + "\n")
    print(f"wrote {GOLDEN}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
