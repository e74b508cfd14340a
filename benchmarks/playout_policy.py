"""The hard search's playout policy played as a player, against a level: a quick loop for improving it.

The search's playouts (:mod:`koikoi.ai.fastplay`) play the rest of a hand by a greedy policy. A better
playout policy is a likely way to a stronger ``hard`` (docs/ai.md), and the policy alone costs
microseconds a move, so its strength as a player is measured in seconds where a search screen takes
an hour. The player makes exactly the playout's choice (:func:`koikoi.ai.fastplay.policy_choice`) in a
world sampled from its observation; the policy reads nothing hidden, so the sample changes nothing.

    python3 benchmarks/playout_policy.py --against easy --matches 400 --seed 7000 --jobs 2
    python3 benchmarks/playout_policy.py --against easy --yaku-weight 4 --matches 400 --seed 7000

Matches are played in duplicate pairs as in ``strength.py`` (matches 2j and 2j+1 on the deal of seed
S+j, seats swapped). Prints the policy's wins, draws and losses, its win rate with a 95% Wilson interval
and its mean point difference per hand.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
from pathlib import Path

from koikoi.ai import make_agent
from koikoi.ai.base import Agent, Choice, _check_to_move
from koikoi.ai.fastplay import NOISE_SPAN, policy_choice, policy_tables
from koikoi.ai.search import WorldSampler
from koikoi.match import Match
from koikoi.observation import Observation
from koikoi.rules import preset

sys.path.insert(0, str(Path(__file__).resolve().parent))
from strength import wilson  # noqa: E402  (the same interval as the strength table)


class PlayoutPolicyAgent(Agent):
    """The playout policy as a player: ``noise`` as in the search (0: the plain greedy choice), and the
    yaku-aware card values of ``yaku_weight`` and ``deny`` (:func:`koikoi.ai.fastplay.policy_tables`)."""

    name = "playout-policy"

    def __init__(self, seed: int | None = None, noise: float = 0.0, yaku_weight: float = 0.0, deny: float = 0.8):
        super().__init__(seed)
        self.noise, self.yaku_weight, self.deny = noise, yaku_weight, deny

    def rank(self, obs: Observation) -> list[Choice]:
        _check_to_move(obs)
        world = WorldSampler(obs, self.rng).sample()
        legal = world.legal_actions()
        assert legal == list(obs.legal_actions), "a sampled world offers the player's own legal actions"
        tables = policy_tables(obs.pile_masks, obs.rule_set, self.yaku_weight, self.deny) if self.yaku_weight else None
        r = self.rng.random
        noise = [self.noise * r() for _ in range(NOISE_SPAN)]
        best, _ = policy_choice(world, legal, noise, 0, tables)
        rest = [Choice(a, 0.0, "not the policy's choice") for a in legal if a != best]
        return [Choice(best, 1.0, "the playout policy's choice"), *rest]


def play_match(task: tuple[str, dict, int, int]) -> tuple[float, float]:
    """One match of the policy against ``against``: (1, 0.5 or 0 for a win, draw or loss; points per hand)."""
    against, options, seed, i = task
    seat = i % 2
    agents: list[Agent] = [make_agent(against, seed=seed * 7919 + i * 31 + p) for p in (0, 1)]
    agents[seat] = PlayoutPolicyAgent(seed * 7919 + i * 31 + seat, **options)
    m = Match(preset("nintendo"), seed=seed + i // 2)
    while not m.is_over():
        m.apply_action(agents[m.current_player].choose(m.observation(m.current_player)))
    s = m.outcome.scores
    diff = s[seat] - s[1 - seat]
    return (1.0 if diff > 0 else 0.5 if diff == 0 else 0.0), diff / len(m.results)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", default="easy", help="the level to play (default easy)")
    ap.add_argument("--matches", type=int, default=400)
    ap.add_argument("--seed", type=int, default=7000)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--noise", type=float, default=0.0)
    ap.add_argument("--yaku-weight", type=float, default=0.0)
    ap.add_argument("--deny", type=float, default=0.8)
    args = ap.parse_args(argv)
    if args.matches < 2 or args.matches % 2:
        ap.error("--matches must be even and at least 2: each deal is played twice, with the seats swapped")
    try:
        make_agent(args.against)
    except ValueError as e:
        ap.error(str(e))
    options = {"noise": args.noise, "yaku_weight": args.yaku_weight, "deny": args.deny}
    tasks = [(args.against, options, args.seed, i) for i in range(args.matches)]
    if args.jobs > 1:
        with multiprocessing.Pool(args.jobs) as pool:
            results = pool.map(play_match, tasks, chunksize=8)
    else:
        results = [play_match(t) for t in tasks]
    n = len(results)
    score = sum(r[0] for r in results)
    wins = sum(r[0] == 1.0 for r in results)
    draws = sum(r[0] == 0.5 for r in results)
    lo, hi = wilson(score, n)
    print(
        f"playout policy (noise {args.noise:g}, yaku_weight {args.yaku_weight:g}, deny {args.deny:g}) vs "
        f"{args.against}: {wins}W {draws}D {n - wins - draws}L of {n}; win rate {100 * score / n:.1f}% "
        f"(95% CI {100 * lo:.1f}%-{100 * hi:.1f}%, draws as half); "
        f"{sum(r[1] for r in results) / n:+.2f} points/hand (seed {args.seed})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
