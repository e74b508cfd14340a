"""What the search's playouts assume against what a level really plays, and playouts learned from its play.

    python3 benchmarks/imitation.py learn --level hard --matches 120 --seed 90000 --jobs 2 \
        --set hard.playouts=11000 --set hard.time_limit=none --write /tmp/hard-play.json
    python3 benchmarks/imitation.py screen --tables /tmp/hard-play.json --use cards \
        --playouts 11000 --matches 200 --seed 500 --jobs 2

``learn`` plays the level against itself and records its choices. For the card played from the hand it
fits tables of the greedy playout policy's form (:class:`koikoi.ai.batchplay.PlayValues`: a value for the
card played when it captures, for each table card taken, for a card that takes nothing) by a conditional
logit on the level's choices, on three quarters of them, and prints how often the greedy policy's own
card and the fitted tables' pick the level's card on the other quarter. For koi-koi it counts how often
the level calls, by its yaku points and the cards left in its hand, where the playouts always stop. It
writes both to ``--write`` (the koi-koi shares smoothed toward each points row).

``screen`` plays ``hard``'s batched search with playouts that use the learned tables (``--use cards``),
the learned koi-koi shares (``--use koikoi``: at each decision a playout's player calls koi-koi with the
level's share for its points and cards left) or both, against the plain search at the same playouts:
full matches as ``strength.py`` plays them. A measuring stick, not a player: no level, lobby or arena can
name it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from strength import _agent, _options, agent_seed, duel, play_all, report_duel, run_match  # noqa: E402

from koikoi.actions import DRAW_TAKE_BASE, KOIKOI, PLAY_TAKE_BASE  # noqa: E402
from koikoi.ai.batchplay import _VAL, GreedyPolicy, PlayValues  # noqa: E402
from koikoi.ai.search import HardAgent  # noqa: E402
from koikoi.arena import ArenaError  # noqa: E402
from koikoi.playerspec import SpecError  # noqa: E402
from koikoi.rules import preset  # noqa: E402

USES = ("cards", "koikoi", "both")
POINTS = 8  # koi-koi shares by yaku points 0..7 (7: seven or more)
LEFT = 9  # and by cards left in the hand, 0..8
_NIB_COUNT = np.array([bin(i).count("1") for i in range(16)])


class Recorder:
    """Passes ``agent``'s choices through and keeps those the playouts model: each card played from the hand
    (the hand, each card's month on the table, the card chosen) and each koi-koi decision."""

    def __init__(self, agent) -> None:
        self.agent = agent
        self.cards: list[tuple[list[int], list[int], int]] = []
        self.calls: list[tuple[int, int, bool]] = []

    def choose(self, obs):
        action = self.agent.choose(obs)
        legal = obs.legal_actions
        if KOIKOI in legal:
            self.calls.append((obs.yaku_scores[obs.player], len(obs.hand), action == KOIKOI))
        elif len(obs.hand) > 1 and all(a < DRAW_TAKE_BASE for a in legal):
            hand = sorted(obs.hand)
            card = action if action < PLAY_TAKE_BASE else (action - PLAY_TAKE_BASE) >> 2
            nibs = [obs.table_mask >> (c & ~3) & 15 for c in hand]
            self.cards.append((hand, nibs, hand.index(card)))
        return action


def record_match(task):
    level, rules_name, seed, i, options = task
    rules = preset(rules_name)
    players = [Recorder(_agent(level, agent_seed(seed, i, p), options, rules)) for p in (0, 1)]
    run_match(rules, seed + i, players)
    return [r for p in players for r in p.cards], [r for p in players for r in p.calls]


def card_arrays(rows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The card choices as arrays: hands ``(n, 8)`` (64 after the last card), their months' table nibbles,
    the index of the card chosen."""
    n = len(rows)
    hands = np.full((n, 8), 64, dtype=np.int64)
    nibs = np.zeros((n, 8), dtype=np.int64)
    chosen = np.zeros(n, dtype=np.int64)
    for k, (hand, nib, c) in enumerate(rows):
        hands[k, : len(hand)] = hand
        nibs[k, : len(nib)] = nib
        chosen[k] = c
    return hands, nibs, chosen


def _scores(params: np.ndarray, hands: np.ndarray, nibs: np.ndarray):
    """Each hand card's score by ``params`` (played, taken, shed: 48 each), as PlayValues values it."""
    played, taken, shed = params[:48], params[48:96], params[96:]
    c = np.minimum(hands, 47)
    base = c & ~3
    tv = np.stack([np.where(nibs >> j & 1 == 1, taken[base + j], -np.inf) for j in range(4)], -1)
    n = _NIB_COUNT[nibs]
    best = tv.argmax(-1)
    t_sum = np.where(np.isinf(tv), 0.0, tv).sum(-1)
    take = np.where(n == 2, tv.max(-1), t_sum)
    s = np.where(n > 0, played[c] + take, shed[c])
    return np.where(hands < 64, s, -np.inf), n, best


def agreement(params: np.ndarray, hands, nibs, chosen) -> float:
    """How often the card of highest score by ``params`` is the one chosen (ties: the lowest card, as the
    greedy policy without noise breaks them)."""
    s, _, _ = _scores(params, hands, nibs)
    return float((s.argmax(1) == chosen).mean())


def greedy_params() -> np.ndarray:
    """The greedy policy's own card values in ``_scores``' form."""
    v = np.array(_VAL)
    return np.concatenate([v, v, -0.5 * v - 1.0])


def fit(hands, nibs, chosen, steps: int = 1500, l2: float = 1e-3) -> np.ndarray:
    """Tables that make the choices most likely under a conditional logit (Adam on the mean log-likelihood,
    with an ``l2`` penalty), from the greedy values scaled to a logit's size."""
    params = greedy_params() / 4
    m = np.zeros_like(params)
    v = np.zeros_like(params)
    rows = np.arange(len(chosen))
    c = np.minimum(hands, 47)
    base = c & ~3
    for t in range(1, steps + 1):
        s, n, best = _scores(params, hands, nibs)
        p = np.exp(s - s.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        r = -p
        r[rows, chosen] += 1.0  # d log-likelihood / d score
        r = np.where(hands < 64, r, 0.0)
        g = np.zeros_like(params)
        cap = n > 0
        np.add.at(g, c[cap], r[cap])
        np.add.at(g, 96 + c[~cap], r[~cap])
        for j in range(4):
            took = (nibs >> j & 1 == 1) & cap & ((n != 2) | (best == j))
            np.add.at(g, 48 + base[took] + j, r[took])
        g = g / len(chosen) - l2 * params
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        params = params + 0.05 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return params


def koikoi_shares(calls) -> tuple[np.ndarray, np.ndarray]:
    """The share of koi-koi calls by yaku points and cards left (``[points, left]``), each cell smoothed
    toward its points row by four calls' weight (and each row toward all the calls by two), with the
    number of decisions behind each cell."""
    count = np.zeros((POINTS, LEFT, 2))
    for points, left, called in calls:
        count[min(points, POINTS - 1), min(left, LEFT - 1), int(called)] += 1
    total = count.sum(2)
    overall = count[:, :, 1].sum() / max(total.sum(), 1.0)
    shares = np.zeros((POINTS, LEFT))
    for a in range(POINTS):
        row = (count[a, :, 1].sum() + 2 * overall) / (total[a].sum() + 2)
        shares[a] = (count[a, :, 1] + 4 * row) / (total[a] + 4)
    shares[:, 0] = 0.0  # no card left: no koi-koi
    return shares, total


class LearnedCalls(GreedyPolicy):
    """The greedy playout policy (on learned tables, where given) whose players call koi-koi with the
    learned shares: a world's player draws one number per cards-left count, the same for every choice
    (common random numbers)."""

    def __init__(self, noise, rows, values: PlayValues | None, shares: np.ndarray, gen) -> None:
        super().__init__(noise, rows, values)
        self.shares = shares
        self.worlds = len(noise)
        self.draws = gen.random((self.worlds, LEFT))

    def koikoi(self, rows, points, left, calls):
        left = np.minimum(left, LEFT - 1)
        return self.draws[rows % self.worlds, left] < self.shares[np.minimum(points, POINTS - 1), left]


class Imitator(HardAgent):
    """``hard``'s batched search whose playouts use the learned tables and/or koi-koi shares of ``learned``."""

    name = "imitator"

    def __init__(self, learned: dict, use: str, seed: int, playouts: int) -> None:
        super().__init__(seed, playouts=playouts, time_limit=None, batched=True)
        if use not in USES:
            raise ValueError(f"unknown --use {use!r}; choose from {', '.join(USES)}")
        scale = float(learned["scale"])
        values = None
        if use in ("cards", "both"):
            values = PlayValues(*([scale * x for x in learned[k]] for k in ("played", "taken", "shed")))
        shares = np.array(learned["koikoi"]) if use in ("koikoi", "both") else None
        gen = np.random.default_rng(seed)
        if shares is None:
            self.policy = lambda noise, rows: GreedyPolicy(noise, rows, values)
        else:
            self.policy = lambda noise, rows: LearnedCalls(noise, rows, values, shares, gen)


def screen_match(task):
    learned, use, playouts, b_name, rules_name, seed, i, options = task
    stick = Imitator(learned, use, agent_seed(seed, i, i % 2), playouts)
    return duel(stick, b_name, rules_name, seed, i, options)


def learn(args, options) -> None:
    tasks = [(args.level, args.rules, args.seed, i, options) for i in range(args.matches)]
    start = time.perf_counter()
    results = play_all(record_match, tasks, args.jobs)
    cards = [r for rows, _ in results for r in rows]
    calls = [r for _, rows in results for r in rows]
    hands, nibs, chosen = card_arrays(cards)
    order = np.random.default_rng(0).permutation(len(chosen))
    test, train = order[: len(order) // 4], order[len(order) // 4 :]
    params = fit(hands[train], nibs[train], chosen[train], args.steps)
    greedy = greedy_params()
    print(f"{args.level}: {len(chosen)} cards played from a hand of two or more, {len(calls)} koi-koi decisions")
    print(
        f"  the card {args.level} played, on the {len(test)} held out: greedy policy "
        f"{agreement(greedy, hands[test], nibs[test], chosen[test]):.1%}, fitted tables "
        f"{agreement(params, hands[test], nibs[test], chosen[test]):.1%} "
        f"(on the {len(train)} fitted: {agreement(params, hands[train], nibs[train], chosen[train]):.1%})"
    )
    shares, total = koikoi_shares(calls)
    called = sum(1 for c in calls if c[2])
    print(
        f"  koi-koi called at {called} of {len(calls)} decisions ({called / max(len(calls), 1):.1%});"
        " the playouts: never"
    )
    for a in range(1, POINTS):
        if total[a].sum():
            cells = [
                f"{left}: {shares[a, left]:.2f} ({int(total[a, left])})" for left in range(1, LEFT) if total[a, left]
            ]
            print(f"    {a}{'+' if a == POINTS - 1 else ''} points, by cards left: " + ", ".join(cells))
    if args.write:
        out = {
            "level": args.level,
            "matches": args.matches,
            "scale": args.scale,
            "played": params[:48].tolist(),
            "taken": params[48:96].tolist(),
            "shed": params[96:].tolist(),
            "koikoi": shares.tolist(),
        }
        Path(args.write).write_text(json.dumps(out))
    print(
        f"({args.rules}, {args.matches} matches, seed {args.seed}, {time.perf_counter() - start:.0f} s)",
        file=sys.stderr,
    )


def screen(args, options) -> None:
    learned = json.loads(Path(args.tables).read_text())
    for key in ("played", "taken", "shed", "koikoi", "scale"):
        if key not in learned:
            raise SystemExit(f"imitation.py: {args.tables} has no {key!r}: write it with imitation.py learn")
    tasks = [
        (learned, args.use, args.playouts, args.against, args.rules, args.seed, i, options) for i in range(args.matches)
    ]
    start = time.perf_counter()
    results = play_all(screen_match, tasks, args.jobs)
    label = f"imitator ({args.use} learned from {learned.get('level', '?')}, {args.playouts} playouts)"
    report_duel(label, "imitator", args.against, results, args.rules, args.seed, time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    lp = sub.add_parser("learn", help="record a level's choices in self-play and fit the playout tables")
    lp.add_argument("--level", default="hard", help="a level, LEVEL/NAME or LEVEL[...]")
    lp.add_argument("--steps", type=int, default=1500, help="steps of the fit")
    lp.add_argument("--scale", type=float, default=4.0, help="the fitted values' scale in the playouts")
    lp.add_argument("--write", help="a JSON file for the tables and the koi-koi shares")
    sp = sub.add_parser("screen", help="the search on learned playouts against the plain search")
    sp.add_argument("--tables", required=True, help="the JSON file imitation.py learn wrote")
    sp.add_argument("--use", choices=USES, default="cards")
    sp.add_argument("--against", default="hard", help="a level, LEVEL/NAME or LEVEL[...]")
    sp.add_argument("--playouts", type=int, default=60000, help="the learned search's playouts a decision")
    for p in (lp, sp):
        p.add_argument("--matches", type=int, default=20)
        p.add_argument("--rules", default="nintendo")
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--jobs", type=int, default=1)
        p.add_argument("--set", action="append", default=[], metavar="LEVEL.OPTION=VALUE")
    args = ap.parse_args(argv)
    if args.matches < 1 or (args.command == "screen" and args.matches % 2):
        ap.error("--matches must be at least 1 (and even for screen: each deal is played from both seats)")
    other = args.level if args.command == "learn" else args.against
    options = _options(args.set, [other])
    try:
        _agent(other, 0, options, preset(args.rules))
    except (ArenaError, SpecError) as e:
        raise SystemExit(f"imitation.py: {e}") from None
    if args.command == "learn":
        learn(args, options)
    else:
        if args.playouts < 1:
            ap.error("--playouts must be at least 1")
        screen(args, options)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
