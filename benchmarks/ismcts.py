"""Information-set MCTS against ``hard``'s flat search: does planning the later moves beat greedy playouts?

    python3 benchmarks/ismcts.py --iterations 1000 --against hard-v1 --matches 200 --seed 500 --jobs 2 \
        [--c 6] [--set hard-v1.playouts=1000 --set hard-v1.time_limit=none]

Player A is a single-observer information-set MCTS (Cowling, Powley and Whitehouse, 2012) on the
engine's own moves. Each iteration samples a world as ``hard`` does (:class:`koikoi.ai.search.WorldSampler`:
the unseen cards dealt at random, the opponent's discards read), walks one tree of the player's and the
opponent's choices that are legal in that world (UCB1 on each choice's mean for the player who makes it,
counted over the visits where the choice was legal), adds one choice, and plays the rest of the hand out
by the search's greedy playout (:func:`koikoi.ai.fastplay.fast_playout`). Draws from the stock are played
by the engine inside a move, so a node holds every draw that led to it. The hand's score difference,
weighed by the match score as ``hard`` weighs it, is the reward; the move played is the most visited.

Unlike the flat search, the tree plans the player's own next choices (the drawn card's capture, a koi-koi
call after a draw) and the opponent's replies instead of leaving them to the greedy policy. It is a
measuring stick, never a player: no level, lobby or arena can name it. Matches are played as
``strength.py`` plays them: full matches, each deal twice with the seats swapped, a 95% Wilson interval,
CPU time per decision.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from strength import agent_seed, duel, duel_arguments, duel_options, play_all, report_duel  # noqa: E402

from koikoi.ai.base import Agent, Choice, _check_to_move, sort_choices  # noqa: E402
from koikoi.ai.fastplay import NOISE_SPAN, fast_playout, noise_pool, policy_choice  # noqa: E402
from koikoi.ai.search import WorldSampler, match_utility  # noqa: E402
from koikoi.observation import Observation  # noqa: E402


class Edge:
    """One choice of the tree: who makes it, its visits, the sum of its rewards for the root player, how
    many times it was legal when its parent was visited, and the choices after it (keyed by action and
    mover: after a play, the same node may be the player's capture of the drawn card in one world and
    the opponent's play in another)."""

    __slots__ = ("mover", "n", "total", "avail", "children")

    def __init__(self, mover: int) -> None:
        self.mover = mover
        self.n = 0
        self.total = 0.0
        self.avail = 0
        self.children: dict[int, Edge] = {}


class Ismcts(Agent):
    """Single-observer information-set MCTS with greedy playouts; ``iterations`` a decision, ``c`` the
    exploration constant in points (rewards are points of the hand, weighed by the match score)."""

    name = "ismcts"

    def __init__(
        self, seed: int | None = None, iterations: int = 1000, c: float = 6.0, noise: float = 1.5, guided: bool = False
    ) -> None:
        super().__init__(seed)
        self.guided = guided
        if iterations < 1:
            raise ValueError(f"iterations must be at least 1, not {iterations!r}")
        self.iterations = iterations
        self.c = c
        self.noise = noise
        self.nodes = 0  # tree choices made, over all decisions (how deep the trees went)

    def rank(self, obs: Observation) -> list[Choice]:
        _check_to_move(obs)
        legal = list(obs.legal_actions)
        if len(legal) == 1:
            return [Choice(legal[0], 0.0, "the only legal action")]
        rng = self.rng
        me = obs.player
        utility, _ = match_utility(obs, "win")
        sample_world = WorldSampler(obs, rng, 0.05).sample
        noise = noise_pool(rng, self.noise)
        span = len(noise) - NOISE_SPAN
        randbelow = rng.randrange
        c = self.c
        guided = self.guided
        log = math.log
        sqrt = math.sqrt
        root: dict[int, Edge] = {}
        for _ in range(self.iterations):
            h = sample_world()
            children = root
            path: list[Edge] = []
            while h.result is None:
                moves = h.legal_actions()
                if len(moves) == 1:
                    h.apply_action(moves[0])
                    continue
                mover = h.current_player
                new = []
                best = None
                best_action = moves[0]
                best_score = -math.inf
                sign = 1.0 if mover == me else -1.0
                for a in moves:
                    e = children.get(a << 1 | mover)
                    if e is None:
                        new.append(a)
                        continue
                    e.avail += 1
                    score = sign * e.total / e.n + c * sqrt(log(e.avail) / e.n)
                    if score > best_score:
                        best_score, best, best_action = score, e, a
                if new:
                    a = new[randbelow(len(new))]
                    if guided:  # the playout policy's own choice first, if it is still untried
                        greedy, _ = policy_choice(h, moves, noise, randbelow(span))
                        if greedy in new:
                            a = greedy
                    e = Edge(mover)
                    e.avail = 1
                    children[a << 1 | mover] = e
                    h.apply_action(a)
                    path.append(e)
                    self.nodes += 1
                    break
                assert best is not None
                h.apply_action(best_action)
                path.append(best)
                children = best.children
            d = h.result.deltas if h.result is not None else fast_playout(h, noise, randbelow(span), deltas_only=True)
            diff = d[me] - d[1 - me]
            u = utility(diff) if utility else float(diff)
            for e in path:
                e.n += 1
                e.total += u
        out = []
        visits = {}
        for a in obs.legal_actions:
            e = root.get(a << 1 | me)
            if e is not None and e.n:
                out.append(Choice(a, e.total / e.n, f"mean of {e.n} visits"))
                visits[a] = e.n
        # The most visited first (the usual robust choice), then by value.
        order = sorted(set(visits.values()), reverse=True)
        ranked: list[Choice] = []
        for n in order:
            ranked += sort_choices([ch for ch in out if visits[ch.action] == n], rng)
        return ranked


def play_match(task):
    iterations, c, guided, b_name, rules_name, seed, i, options = task
    stick = Ismcts(agent_seed(seed, i, i % 2), iterations, c, guided=guided)
    return duel(stick, b_name, rules_name, seed, i, options)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=1000, help="tree iterations a decision")
    ap.add_argument("--c", type=float, default=6.0, help="the exploration constant, in points")
    ap.add_argument("--guided", action="store_true", help="a node's first choice is the playout policy's")
    duel_arguments(ap, against="hard-v1")
    args = ap.parse_args(argv)
    if args.iterations < 1:
        ap.error("--iterations must be at least 1")
    options = duel_options(ap, args, "ismcts.py")
    tasks = [
        (args.iterations, args.c, args.guided, args.against, args.rules, args.seed, i, options)
        for i in range(args.matches)
    ]
    start = time.perf_counter()
    results = play_all(play_match, tasks, args.jobs)
    elapsed = time.perf_counter() - start
    label = f"ismcts ({args.iterations} iterations, c {args.c:g}{', guided' if args.guided else ''})"
    report_duel(label, "ismcts", args.against, results, args.rules, args.seed, elapsed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
