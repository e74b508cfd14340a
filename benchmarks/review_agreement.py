"""How often the review's verdict on a move is what ten times the analysis says.

    python3 benchmarks/review_agreement.py --positions 50 --seed 1 --jobs 2

Plays seeded matches (``medium`` against ``easy``, nintendo rules), lists every decision with a choice
of either seat (:func:`koikoi.review.decisions`), and draws ``--positions`` of them at random (seeded).
Each is judged twice, independently: at the review's budget (``--budget``, default the ``expert``
level's) and at ``--factor`` times it, with another seed, by the review's rule
(:func:`koikoi.review.assess`: values with their standard errors, no verdict within the noise, identical
moves merged, a mistake confirmed by a second measure of the two moves) and, on the same first
rankings, by the rule before it (the loss of the move played against the finalist of most points,
every legal action apart; a mistake past 1 point, whatever the noise).

It prints, for each rule, how often the two budgets agree on the verdict: the mistake flag (a mistake
or not), and the three-way call (fine: the best or within the noise; worse; mistake), and of the
mistakes called at the review's budget, how many the larger budget confirms. ``--show`` lists each
position's loss (± its standard error) and verdict at both budgets.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from koikoi.ai import make_agent  # noqa: E402
from koikoi.ai.base import Choice  # noqa: E402
from koikoi.match import Match  # noqa: E402
from koikoi.records import GameRecord  # noqa: E402
from koikoi.review import (  # noqa: E402
    DEFAULT_PLAYOUTS,
    MISTAKE_POINTS,
    Decision,
    assess,
    decisions,
)
from koikoi.rules import preset  # noqa: E402


def positions(count: int, seed: int) -> list[Decision]:
    """``count`` decisions with a choice, drawn at random from seeded matches of medium against easy."""
    pool: list[Decision] = []
    game = 0
    while len(pool) < 4 * count:
        m = Match(preset("nintendo"), seed=seed * 1000 + game)
        players = [make_agent("medium", seed=seed + 2 * game), make_agent("easy", seed=seed + 2 * game + 1)]
        while not m.is_over():
            p = m.current_player
            m.apply_action(players[p].choose(m.observation(p)))
        record = GameRecord.from_match(m)
        pool += decisions(record, 0) + decisions(record, 1)
        game += 1
    return random.Random(seed).sample(pool, count)


def old_verdict(pos: Decision, ranked: list[Choice]) -> str:
    """The rule before values had errors: the finalist of most points against the move played, each
    legal action apart (a twin of the card played could be "best"), a mistake past 1 point."""

    def depth(c: Choice) -> int:
        words = c.explain.split()
        return int(words[2]) if len(words) > 2 and words[:2] == ["mean", "of"] else 1 << 30

    def pts(c: Choice) -> float:
        return c.points if c.points is not None else c.value

    top = max(depth(c) for c in ranked)
    best = max((c for c in ranked if depth(c) == top), key=pts)
    played = next(c for c in ranked if c.action == pos.action)
    loss = round(pts(best) - pts(played), 2)
    return "mistake" if loss > MISTAKE_POINTS else ("worse" if loss > 0 else "fine")


def verdict_note(e: dict) -> tuple[str, str]:
    """(the verdict as the three-way call, the review's loss with its error and verdict, as a note)"""
    v = e["verdict"]
    err = e["loss_stderr"] if e["loss_stderr"] is not None else "?"
    note = f"{e['loss']:.2f}±{err} {v}{' (remeasured)' if e['remeasured'] else ''}"
    return ("fine" if v in ("best", "equal") else v), note


def analyse(job: tuple[int, Decision, int, int]) -> tuple[str, str, str, str, float, str]:
    i, pos, budget, factor = job
    start = time.process_time()
    small, first_small = assess(pos, 1_000_003 * i + 1, budget)
    large, first_large = assess(pos, 1_000_003 * i + 2, budget * factor)
    (a, note_a), (b, note_b) = verdict_note(small), verdict_note(large)
    old_a, old_b = old_verdict(pos, first_small), old_verdict(pos, first_large)
    return (a, b, old_a, old_b, time.process_time() - start, f"{note_a} | {note_b}")


def report(name: str, pairs: list[tuple[str, str]]) -> None:
    n = len(pairs)
    flag = sum((a == "mistake") == (b == "mistake") for a, b in pairs)
    three = sum(a == b for a, b in pairs)
    called = [b for a, b in pairs if a == "mistake"]
    confirmed = sum(b == "mistake" for b in called)
    print(
        f"{name}: mistake flag agrees {flag}/{n} ({100 * flag / n:.0f}%), three-way verdict agrees {three}/{n} "
        f"({100 * three / n:.0f}%); mistakes called {len(called)}, confirmed {confirmed}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--positions", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget", type=int, default=DEFAULT_PLAYOUTS, help="the review's playouts a decision")
    ap.add_argument("--factor", type=int, default=10, help="the larger analysis's budget, in reviews")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--show", action="store_true", help="print each position's loss and verdict at both budgets")
    args = ap.parse_args(argv)
    if args.positions < 1 or args.budget < 1 or args.factor < 2 or args.jobs < 1:
        ap.error("--positions, --budget and --jobs must be at least 1, --factor at least 2")
    start = time.perf_counter()
    todo = [(i, pos, args.budget, args.factor) for i, pos in enumerate(positions(args.positions, args.seed))]
    if args.jobs == 1:
        results = [analyse(j) for j in todo]
    else:
        with ProcessPoolExecutor(args.jobs) as ex:
            results = list(ex.map(analyse, todo))
    print(
        f"{args.positions} positions (seed {args.seed}), review budget {args.budget:,} playouts against "
        f"{args.factor}x ({args.budget * args.factor:,}); {sum(r[4] for r in results):.0f} s of CPU, "
        f"{time.perf_counter() - start:.0f} s of wall time"
    )
    if args.show:
        for i, r in enumerate(results):
            print(f"  {i:2d}  {r[5]}  (old rule: {r[2]} | {r[3]})")
    report("new rule (noise margin, twins merged)", [(r[0], r[1]) for r in results])
    report("old rule (loss > 1 point)          ", [(r[2], r[3]) for r in results])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
