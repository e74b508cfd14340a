"""A value estimate for cut-off playouts: does a learned value of the rest of the hand beat greedy playouts?

    python3 benchmarks/cutoff.py learn --matches 160 --seed 90000 --jobs 2 \
        --set hard.playouts=11000 --set hard.time_limit=none --write /tmp/cutoff.json
    python3 benchmarks/cutoff.py screen --value /tmp/cutoff.json --turns 4 --playouts 11000 \
        --set hard.playouts=11000 --set hard.time_limit=none --matches 200 --seed 500 --jobs 2

``learn`` plays a level against itself and, at the start of every turn, reads the whole true state of
the hand (both hands, the piles, the table, the stock left: :func:`features`, seat 0's minus seat 1's)
and, when the hand is over, how it ended (seat 0's score change minus seat 1's). It fits a linear value
of the features to the ends by least squares on three quarters of the turns and prints how much of the
ends' spread it explains on the rest, beside the yaku points alone. It writes the weights, fitted on all.

``screen`` plays ``hard``'s batched search whose playouts stop ``--turns`` whole turns after the move
they measure (:meth:`koikoi.batch.BatchHands.play_policy`), where a hand still in play is worth the
learned value of its state instead of the greedy policy's end of it, against the plain search: full
matches as ``strength.py`` plays them. The value is rounded to a whole number at random (up with the
chance of its fraction), so its mean is kept and the search's sums stay over a few whole numbers.
The learned value forecasts the end of the hand as the level plays it, not as the greedy policy does:
what the oracle (docs/ai.md) says the search lacks. A measuring stick, not a player: no level, lobby or
arena can name it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from strength import (  # noqa: E402
    _agent,
    agent_seed,
    checked_options,
    duel,
    duel_arguments,
    duel_options,
    play_all,
    report_duel,
    run_match,
)

from koikoi.ai.batchplay import GreedyPolicy, worlds  # noqa: E402
from koikoi.ai.search import HardAgent  # noqa: E402
from koikoi.cards import (  # noqa: E402
    ANIMALS,
    BLUE_RIBBONS,
    BRIGHTS,
    CHAFF,
    CURTAIN,
    INO_SHIKA_CHO,
    MOON,
    POETRY_RIBBONS,
    RAIN_MAN,
    RIBBONS,
    SAKE_CUP,
)
from koikoi.rules import preset  # noqa: E402

_U = np.uint64
# The kinds of card a yaku counts, each counted in the pile, and in the pile and hand together.
KINDS = (BRIGHTS & ~RAIN_MAN, RAIN_MAN, ANIMALS, RIBBONS, CHAFF, POETRY_RIBBONS, BLUE_RIBBONS, INO_SHIKA_CHO,
         SAKE_CUP, MOON, CURTAIN)  # fmt: skip
_LOW_BITS = _U(0x111111111111)  # the lowest card of each month
FEATURES = 4 + 2 * len(KINDS) + 13


def _months(table: np.ndarray) -> np.ndarray:
    """Every card of each month that has a card in ``table`` (masks)."""
    x = table | (table >> _U(1))
    x = (x | (x >> _U(2))) & _LOW_BITS
    return x * _U(15)


def seat_features(b, seat: int) -> np.ndarray:
    """What one seat has, by row of the batch ``b``: its yaku points and koi-koi calls, the cards of each
    kind in its pile and within its reach, the yaku one card away, its hand, and whether it moves next."""
    pile, hand = b._piles[seat], b._hands[seat]
    reach = pile | hand
    pts = b._pts[seat].astype(float)
    called = (b._calls[seat] > 0).astype(float)
    out = [pts, called, pts * called, (pts > 0).astype(float)]
    count = {}
    for kind in KINDS:
        count[kind] = np.bitwise_count(pile & _U(kind)).astype(int)
        out += [count[kind], np.bitwise_count(reach & _U(kind))]
    brights = count[BRIGHTS & ~RAIN_MAN] + count[RAIN_MAN]
    takes = np.bitwise_count(hand & _months(b.table))
    moves = b.current_player == seat
    out += [
        count[INO_SHIKA_CHO] == 2,
        count[POETRY_RIBBONS] == 2,
        count[BLUE_RIBBONS] == 2,
        brights == 2,
        brights >= 3,
        count[ANIMALS] >= 4,
        count[RIBBONS] >= 4,
        count[CHAFF] >= 8,
        (count[SAKE_CUP] > 0) & (count[MOON] + count[CURTAIN] > 0),
        np.bitwise_count(hand),
        takes,
        moves,
        moves * takes,
    ]
    return np.stack([np.asarray(x, dtype=float) for x in out], 1)


def features(b) -> np.ndarray:
    """Seat 0's features minus seat 1's, ``(rows, FEATURES)``: a value linear in them is seat 0's gain and,
    with the seats swapped, exactly seat 1's."""
    return seat_features(b, 0) - seat_features(b, 1)


class CutPolicy(GreedyPolicy):
    """The greedy playout policy for ``turns`` turns, then ``weights`` (a linear value of :func:`features`)."""

    def __init__(self, noise: np.ndarray, rows: int, turns: int, weights: np.ndarray, gen) -> None:
        super().__init__(noise, rows)
        self.turns = turns
        self.weights = weights
        self.gen = gen

    def value(self, b, rows: np.ndarray) -> np.ndarray:
        v = features(b)[rows] @ self.weights
        return np.floor(v + self.gen.random(len(v))).astype(np.int64)


class CutSearch(HardAgent):
    """``hard``'s batched search on playouts cut after ``turns`` turns and valued by ``weights``."""

    name = "cutoff"

    def __init__(self, seed: int, playouts: int, turns: int, weights) -> None:
        super().__init__(seed, playouts=playouts, time_limit=None, batched=True)
        w = np.array(weights, dtype=float)
        gen = np.random.default_rng(seed)
        self.policy = lambda noise, rows: CutPolicy(noise, rows, turns, w, gen)


def record_match(task):
    """One self-play match of ``level``: each turn's start (the true state's features) and its hand's end."""
    level, rules_name, seed, i, options = task
    rules = preset(rules_name)
    players = [_agent(level, agent_seed(seed, i, p), options, rules) for p in (0, 1)]
    turns: list[tuple[int, list[float]]] = []
    seen: set[tuple[int, int, int]] = set()

    def read(m, obs) -> None:
        h = m.hand
        key = (len(m.results), h.stock_pos, obs.player)
        if obs.phase != "play" or key in seen:
            return
        seen.add(key)
        p = obs.player
        b = worlds(h, 1 - p, np.array([h._hands[1 - p]], dtype=_U), np.array([list(h.stock[h.stock_pos :])]), 1)
        turns.append((len(m.results), features(b)[0].tolist()))

    m, _ = run_match(rules, seed + i, players, read)
    ends = [r.deltas[0] - r.deltas[1] for r in m.results]
    return [(f, ends[k]) for k, f in turns if k < len(ends)]


def fit(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.linalg.lstsq(x, y, rcond=None)[0]


def explained(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """The share of the ends' mean square that the value explains (no constant: the value is antisymmetric)."""
    return float(1 - ((x @ w - y) ** 2).mean() / (y**2).mean())


def learn(args, options) -> None:
    tasks = [(args.level, args.rules, args.seed, i, options) for i in range(args.matches)]
    start = time.perf_counter()
    rows = [r for match in play_all(record_match, tasks, args.jobs) for r in match]
    if len(rows) < 4 * FEATURES:
        raise SystemExit(f"cutoff.py: {len(rows)} turns are too few to fit {FEATURES} weights: play more matches")
    x = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows], dtype=float)
    order = np.random.default_rng(0).permutation(len(y))
    test, train = order[: len(y) // 4], order[len(y) // 4 :]
    w = fit(x[train], y[train])
    points = fit(x[train, :1], y[train])
    print(
        f"{args.level}: {len(y)} turns of {args.matches} matches, {FEATURES} features; share of the hands' ends "
        f"explained on the {len(test)} held out: {explained(x[test], y[test], w):.3f} "
        f"(the yaku points alone: {explained(x[test, :1], y[test], points):.3f})"
    )
    if args.write:
        Path(args.write).write_text(json.dumps({"level": args.level, "weights": fit(x, y).tolist()}))
    print(
        f"({args.rules}, {args.matches} matches, seed {args.seed}, {time.perf_counter() - start:.0f} s)",
        file=sys.stderr,
    )


def read_weights(path: str) -> list[float]:
    try:
        weights = json.loads(Path(path).read_text())["weights"]
        if len(weights) != FEATURES or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in weights
        ):
            raise ValueError(f"weights must be {FEATURES} finite numbers")
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"cutoff.py: {path} holds no value to use ({e}): write it with cutoff.py learn") from None
    return weights


def screen_match(task):
    weights, turns, playouts, b_name, rules_name, seed, i, options = task
    stick = CutSearch(agent_seed(seed, i, i % 2), playouts, turns, weights)
    return duel(stick, b_name, rules_name, seed, i, options)


def screen(args, options) -> None:
    weights = read_weights(args.value)
    tasks = [
        (weights, args.turns, args.playouts, args.against, args.rules, args.seed, i, options)
        for i in range(args.matches)
    ]
    start = time.perf_counter()
    results = play_all(screen_match, tasks, args.jobs)
    label = f"cutoff ({args.turns} turns, {args.playouts} playouts)"
    report_duel(label, "cutoff", args.against, results, args.rules, args.seed, time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    lp = sub.add_parser("learn", help="the true state at each turn of a level's self-play, and a value fitted to it")
    lp.add_argument("--level", default="hard", help="a level, LEVEL/NAME or LEVEL[...]")
    lp.add_argument("--matches", type=int, default=20)
    lp.add_argument("--rules", default="nintendo")
    lp.add_argument("--seed", type=int, default=1)
    lp.add_argument("--jobs", type=int, default=1)
    lp.add_argument("--set", action="append", default=[], metavar="LEVEL.OPTION=VALUE")
    lp.add_argument("--write", help="a JSON file for the weights")
    sp = sub.add_parser("screen", help="the search on cut-off playouts against the plain search")
    sp.add_argument("--value", required=True, help="the JSON file cutoff.py learn wrote")
    sp.add_argument("--turns", type=int, default=4, help="whole turns played after the move, before the value")
    sp.add_argument("--playouts", type=int, default=60000, help="the cut search's playouts a decision")
    duel_arguments(sp, against="hard")
    args = ap.parse_args(argv)
    if args.command == "learn":
        if args.matches < 1:
            ap.error("--matches must be at least 1")
        learn(args, checked_options(args.set, args.level, args.rules, "cutoff.py"))
        return 0
    if args.turns < 0 or args.playouts < 1:
        ap.error("--turns must be at least 0 and --playouts at least 1")
    screen(args, duel_options(ap, args, "cutoff.py"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
