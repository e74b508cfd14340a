"""Train a small policy against the ``easy`` computer player, on the CPU, in a few minutes.

The policy is linear: a logit per action, ``W[a] · x + b[a]`` over the ``koikoi_v0`` observation
vector ``x``, softmax over the legal actions only (the action mask). It learns by REINFORCE with a
running baseline from the points of each hand, through the Gymnasium environment
``koikoi.env.SingleAgentEnv`` (one seat against ``easy``, one hand per episode). Every ``--every``
hands it plays a fixed set of evaluation deals greedily and records how often it wins the hand; at the
end the curve is saved as a PNG.

    pip install 'koikoi[rl]'
    python3 examples/train_vs_easy.py --minutes 3 --plot training.png
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from koikoi.env import OBSERVATION_SIZE, SingleAgentEnv
from koikoi.rules import preset

NUM_ACTIONS = 291


class LinearPolicy:
    def __init__(self, rng: np.random.Generator) -> None:
        self.W = np.zeros((NUM_ACTIONS, OBSERVATION_SIZE))
        self.b = np.zeros(NUM_ACTIONS)
        self.rng = rng
        # Adam state
        self.m = [np.zeros_like(self.W), np.zeros_like(self.b)]
        self.v = [np.zeros_like(self.W), np.zeros_like(self.b)]
        self.t = 0

    def probs(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        logits = self.W @ x + self.b
        logits = np.where(mask > 0, logits, -np.inf)
        logits -= logits.max()
        p = np.exp(logits)
        return p / p.sum()

    def act(self, x: np.ndarray, mask: np.ndarray, greedy: bool = False) -> tuple[int, np.ndarray]:
        p = self.probs(x, mask)
        a = int(np.argmax(p)) if greedy else int(self.rng.choice(NUM_ACTIONS, p=p))
        return a, p

    def update(self, steps: list[tuple[np.ndarray, np.ndarray, int]], advantage: float, lr: float) -> None:
        gW, gb = np.zeros_like(self.W), np.zeros_like(self.b)
        for x, p, a in steps:
            # d log pi(a|x) / d logits = onehot(a) - p (zero outside the legal actions, where p = 0)
            g = -p
            g[a] += 1.0
            gW += np.outer(g, x)
            gb += g
        self.t += 1
        for i, (param, grad) in enumerate(((self.W, gW), (self.b, gb))):
            grad = grad * advantage  # ascent on advantage * log-probability
            self.m[i] = 0.9 * self.m[i] + 0.1 * grad
            self.v[i] = 0.999 * self.v[i] + 0.001 * grad * grad
            mhat = self.m[i] / (1 - 0.9**self.t)
            vhat = self.v[i] / (1 - 0.999**self.t)
            param += lr * mhat / (np.sqrt(vhat) + 1e-8)


def play_hand(env: SingleAgentEnv, policy: LinearPolicy, seed: int, greedy: bool) -> tuple[float, list]:
    obs, _info = env.reset(seed=seed)
    steps, total, done = [], 0.0, False
    while not done:
        x, mask = obs["observation"], obs["action_mask"]
        a, p = policy.act(x, mask, greedy)
        steps.append((x, p, a))
        obs, reward, terminated, truncated, _info = env.step(a)
        total += float(reward)
        done = terminated or truncated
    return total, steps


def evaluate(env: SingleAgentEnv, policy: LinearPolicy, seeds: range) -> float:
    """The share of evaluation hands the policy wins outright (more points than the opponent)."""
    wins = 0
    for s in seeds:
        total, _ = play_hand(env, policy, s, greedy=True)
        wins += total > 0
    return wins / len(seeds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=3.0, help="training time (default 3)")
    ap.add_argument("--every", type=int, default=500, help="hands between evaluations (default 500)")
    ap.add_argument("--eval-hands", type=int, default=300, help="hands per evaluation (default 300)")
    ap.add_argument("--lr", type=float, default=0.005)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", default="training.png", help="where to save the learning curve (PNG)")
    args = ap.parse_args()

    # One hand per episode, so every episode ends with a clear result; the nintendo rules otherwise.
    rules = preset("nintendo").replace(hands=1, name="nintendo, one hand")
    env = SingleAgentEnv(opponent="easy", rules=rules, seat="random", reward="hand")
    eval_env = SingleAgentEnv(opponent="easy", rules=rules, seat="random", reward="hand")
    policy = LinearPolicy(np.random.default_rng(args.seed))
    eval_seeds = range(10**6, 10**6 + args.eval_hands)  # the same deals at every evaluation
    curve = [(0, evaluate(eval_env, policy, eval_seeds))]
    print(f"hands {0:6d}: wins {curve[-1][1]:.1%} of {args.eval_hands} evaluation hands", flush=True)
    baseline, hands = 0.0, 0
    deadline = time.monotonic() + args.minutes * 60
    while time.monotonic() < deadline:
        total, steps = play_hand(env, policy, args.seed * 10**7 + hands, greedy=False)
        policy.update(steps, total - baseline, args.lr)
        baseline = 0.99 * baseline + 0.01 * total
        hands += 1
        if hands % args.every == 0:
            curve.append((hands, evaluate(eval_env, policy, eval_seeds)))
            print(f"hands {hands:6d}: wins {curve[-1][1]:.1%} of {args.eval_hands} evaluation hands", flush=True)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs, ys = zip(*curve)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(xs, [100 * y for y in ys], marker="o")
    ax.set_xlabel("training hands against easy")
    ax.set_ylabel("evaluation hands won (%)")
    ax.set_title("A linear policy learning Koi-Koi (REINFORCE, koikoi_v0 observations)")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.plot, dpi=120)
    print(f"saved the learning curve to {args.plot}: {ys[0]:.1%} -> {ys[-1]:.1%} after {hands} hands")


if __name__ == "__main__":
    main()
