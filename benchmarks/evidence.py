"""How much the search's readings of the opponent's play say about the opponent's hand, against a level.

    python3 benchmarks/evidence.py --opponent hard-v1 --matches 10 --seed 0

``easy`` plays seat 0 and watches; the opponent (any level, LEVEL/NAME or LEVEL[...]) plays seat 1. At
each of seat 0's decisions with a choice, every card seat 0 cannot see is counted: how often the
opponent really holds it, over all such cards (the base rate) and over those that each reading flags:
:func:`koikoi.ai.search.discard_evidence` (the opponent played a card that took nothing while the card's
month lay on the table) and :func:`koikoi.ai.search.passed_evidence` (they captured cards worth less
than half of one of that month lying on the table). A reading that says nothing holds the base rate;
``held / base`` is the factor by which it should lower a card's odds of being held (``discard_factor``
and ``passed_factor`` of ``hard``, 0.05 and off by default). Only this script looks at the real hand,
to score the readings; the readings themselves read only public events.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from strength import _agent, _options, run_match  # noqa: E402

from koikoi.ai.search import discard_evidence, passed_evidence  # noqa: E402
from koikoi.arena import ArenaError  # noqa: E402
from koikoi.cards import card_list  # noqa: E402
from koikoi.match import Match  # noqa: E402
from koikoi.playerspec import SpecError  # noqa: E402
from koikoi.rules import preset  # noqa: E402

READINGS = ("all unseen cards", "discarded beside the month", "passed over the month")


def tally(opponent: str, matches: int, seed: int, options: dict, rules_name: str = "nintendo") -> list[list[int]]:
    """For each of :data:`READINGS`, [cards flagged not held, cards flagged held] over ``matches``."""
    rules = preset(rules_name)
    counts = [[0, 0] for _ in READINGS]

    def look(m: Match, obs) -> None:
        if obs.player != 0 or len(obs.legal_actions) < 2:
            return
        held = m.hand._hands[1]
        discarded, passed = discard_evidence(obs), passed_evidence(obs)
        for c in card_list(obs.unseen_mask):
            h = held >> c & 1
            counts[0][h] += 1
            if discarded.get(c >> 2):
                counts[1][h] += 1
            if passed.get(c >> 2):
                counts[2][h] += 1

    for i in range(matches):
        agents = [
            _agent("easy", seed * 7919 + i * 31, options, rules),
            _agent(opponent, seed * 7919 + i * 31 + 1, options, rules),
        ]
        run_match(rules, seed + i, agents, look)
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--opponent", default="hard-v1")
    ap.add_argument("--matches", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rules", default="nintendo")
    ap.add_argument("--set", action="append", default=[], metavar="LEVEL.OPTION=VALUE")
    args = ap.parse_args(argv)
    if args.matches < 1:
        ap.error("--matches must be at least 1")
    options = _options(args.set, [args.opponent, "easy"])
    try:
        _agent(args.opponent, 0, options, preset(args.rules))
    except (ArenaError, SpecError) as e:
        raise SystemExit(f"evidence.py: {e}") from None
    counts = tally(args.opponent, args.matches, args.seed, options, args.rules)
    base = counts[0][1] / sum(counts[0])
    print(f"the opponent {args.opponent}, {args.matches} matches, seed {args.seed} ({args.rules}):")
    for name, (no, yes) in zip(READINGS, counts):
        n = no + yes
        share = yes / n if n else 0.0
        print(f"    {name}: {n:,} cards, {share:.1%} held" + (f" ({share / base:.2f} of the base rate)" if n else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
