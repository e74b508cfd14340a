"""Train a policy with PPO and action masking against the built-in ``easy`` player, in NumPy alone.

The policy and the value function are two small multi-layer perceptrons over the ``koikoi_v0``
observation vector (``docs/env.md``), written out here with their gradients and Adam, so nothing but
NumPy is needed. The policy's softmax covers the legal actions only (the action mask): an illegal
action has probability 0 and gets no gradient. PPO (clipped surrogate, generalised advantage
estimation, entropy bonus, advantages normalised per minibatch, gradients clipped by norm) learns from
fixed-length rollouts of several tables stepped side by side, each one learner against ``easy``.

By default every episode is one one-hand match of the ``cardavia`` rule set (a single hand; about one
in twenty ends with no yaku made, a drawn match) and the reward is +1 for a won match, -1 for a lost
one, 0 for a draw: the figures the arena reports. The environment is
``koikoi.vector.KoiKoiVectorEnv`` (all tables on NumPy arrays, ``easy`` computed in batch) when the
opponent is ``easy`` or ``random``, else ``--envs`` ``koikoi.env.SingleAgentEnv`` tables stepped in a
loop (``--env`` chooses).

Optionally (``--imitate N``) the policy first imitates a teacher (``--teacher easy``) for N decisions,
a warm start from which PPO goes on; by default PPO starts from a random policy.

At the start, after the warm start and every ``--eval-every`` iterations the greedy policy (the most
probable legal action) plays a fixed set of matches against ``easy``, each deal from both seats; the
curve goes to ``curve.csv`` and ``curve.png`` (matplotlib) or, without matplotlib, ``curve.svg``. The
policy goes to ``policy.npz`` (``koikoi.policy``), which the arena plays as ``policy:FILE``. At the
end ``--final-matches`` matches against ``easy`` go through ``koikoi.arena`` (the real engine, seats
alternating) and their wins, draws and losses are printed with a 95% Wilson interval.

    pip install 'koikoi[rl]'
    OMP_NUM_THREADS=1 nice -n 10 python3 examples/train_ppo.py --minutes 30 --out runs/ppo
    koikoi arena --rules cardavia --games 1000 --seed 1 --players policy:runs/ppo/policy.npz,easy --jobs 1
"""

from __future__ import annotations

import os

# One thread: the linear algebra here is small, and the machine may be shared. Set before NumPy loads.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402 - after the thread settings above
import csv  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from koikoi.actions import NUM_ACTIONS  # noqa: E402
from koikoi.env import OBSERVATION_SIZE, SingleAgentEnv  # noqa: E402
from koikoi.policy import Policy, save_policy  # noqa: E402
from koikoi.rules import RuleSet, preset  # noqa: E402

# -- networks --------------------------------------------------------------------------------------


class MLP:
    """A ReLU perceptron with its backward pass; parameters in one list for the optimiser."""

    def __init__(self, sizes: list[int], rng: np.random.Generator, last_scale: float) -> None:
        self.params: list[np.ndarray] = []
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            last = i == len(sizes) - 2
            # He initialisation for ReLU layers; a small last layer so the first policy is near uniform.
            scale = last_scale / math.sqrt(n_in) if last else math.sqrt(2.0 / n_in)
            self.params += [rng.normal(0.0, scale, (n_in, n_out)), np.zeros(n_out)]

    @property
    def layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        return [(self.params[i], self.params[i + 1]) for i in range(0, len(self.params), 2)]

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """The output and what the backward pass needs (each layer's input)."""
        inputs, h = [], x
        n = len(self.params) // 2
        for i in range(n):
            inputs.append(h)
            h = h @ self.params[2 * i] + self.params[2 * i + 1]
            if i < n - 1:
                h = np.maximum(h, 0.0)
        return h, inputs

    def backward(self, inputs: list[np.ndarray], d_out: np.ndarray) -> list[np.ndarray]:
        grads: list[np.ndarray] = [np.empty(0)] * len(self.params)
        d = d_out
        for i in reversed(range(len(inputs))):
            W = self.params[2 * i]
            grads[2 * i] = inputs[i].T @ d
            grads[2 * i + 1] = d.sum(axis=0)
            if i > 0:
                d = (d @ W.T) * (inputs[i] > 0)  # the ReLU after layer i-1 let through exactly these
        return grads


class Adam:
    def __init__(self, params: list[np.ndarray], lr: float, max_norm: float) -> None:
        self.params, self.lr, self.max_norm = params, lr, max_norm
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, grads: list[np.ndarray]) -> None:
        norm = math.sqrt(sum(float((g * g).sum()) for g in grads))
        if norm > self.max_norm:  # clipping by global norm keeps one odd minibatch from wrecking the policy
            grads = [g * (self.max_norm / norm) for g in grads]
        self.t += 1
        c1, c2 = 1 - 0.9**self.t, 1 - 0.999**self.t
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            p -= self.lr * (m / c1) / (np.sqrt(v / c2) + 1e-8)


def masked_log_softmax(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """log p over the legal actions; a very negative number (not -inf, which would make NaNs) elsewhere."""
    z = np.where(mask, logits, -1e9)
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


# -- environments ----------------------------------------------------------------------------------


class LoopEnvs:
    """``n`` :class:`koikoi.env.SingleAgentEnv` tables stepped one after the other, reset when done."""

    def __init__(self, n: int, rules: RuleSet, opponent: str, reward: str, seed: int) -> None:
        self.envs = [SingleAgentEnv(opponent=opponent, rules=rules, seat="random", reward=reward) for _ in range(n)]
        self.n = n
        self.obs = np.zeros((n, OBSERVATION_SIZE))
        self.mask = np.zeros((n, NUM_ACTIONS), bool)
        for i, env in enumerate(self.envs):
            self._set(i, env.reset(seed=seed * 1_000_003 + i)[0])  # later resets continue each env's sequence

    def _set(self, i: int, o: dict[str, np.ndarray]) -> None:
        self.obs[i] = o["observation"]
        self.mask[i] = o["action_mask"] != 0

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str | None]]:
        """Rewards, done flags and, for finished episodes, the winner ('learner', 'opponent' or None)."""
        rewards, dones, winners = np.zeros(self.n), np.zeros(self.n, bool), [None] * self.n
        for i, env in enumerate(self.envs):
            o, r, terminated, truncated, info = env.step(int(actions[i]))
            rewards[i] = r
            if terminated or truncated:
                dones[i] = True
                winners[i] = info["winner"] or "draw"
                o, _ = env.reset()
            self._set(i, o)
        return rewards, dones, winners


def make_envs(kind: str, n: int, rules: RuleSet, opponent: str, reward: str, seed: int):
    if kind in ("auto", "vector"):
        try:
            return VectorEnvs(n, rules, opponent, reward, seed)
        except Exception as e:  # noqa: BLE001 - 'auto' falls back to the engine-backed tables
            if kind == "vector":
                raise SystemExit(f"train_ppo.py: koikoi.vector cannot be used: {type(e).__name__}: {e}") from None
            print(f"(koikoi.vector not used: {type(e).__name__}: {e}; SingleAgentEnv tables instead)", flush=True)
    return LoopEnvs(n, rules, opponent, reward, seed)


class VectorEnvs:
    """``koikoi.vector.KoiKoiVectorEnv``: ``n`` tables on NumPy arrays, a new match started where one ends."""

    def __init__(self, n: int, rules: RuleSet, opponent: str, reward: str, seed: int) -> None:
        from koikoi.vector import KoiKoiVectorEnv  # the batched opponent: random or easy only

        self.env = KoiKoiVectorEnv(n, rules=rules, reward=reward, opponent=opponent, seat="random")
        self.n = n
        o, info = self.env.reset(seed=seed)
        self._set(o, info)

    def _set(self, o: dict[str, np.ndarray], info: dict) -> None:
        self.obs = np.asarray(o["observation"], np.float64)
        self.mask = np.asarray(o["action_mask"]) != 0
        self.seat = info["seat"]

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str | None]]:
        seat = self.seat  # the learner's seat in the matches being played (a new match may draw another)
        o, r, terminated, truncated, info = self.env.step(actions)
        dones = np.asarray(terminated) | np.asarray(truncated)
        winners: list[str | None] = [None] * self.n
        for i in np.flatnonzero(dones):
            mine, theirs = info["final_scores"][i, seat[i]], info["final_scores"][i, 1 - seat[i]]
            winners[i] = "learner" if mine > theirs else "opponent" if mine < theirs else "draw"
        self._set(o, info)
        return np.asarray(r, np.float64), dones, winners


# -- PPO -------------------------------------------------------------------------------------------


def sample_actions(logp: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    cdf = np.cumsum(np.exp(logp), axis=1)
    u = rng.random((len(logp), 1)) * cdf[:, -1:]
    return np.minimum((cdf < u).sum(axis=1), NUM_ACTIONS - 1)


def collect(envs, pi: MLP, vf: MLP, steps: int, gamma: float, lam: float, rng: np.random.Generator):
    """One rollout of ``steps`` decisions per table, with advantages (GAE) and returns."""
    n = envs.n
    obs = np.zeros((steps, n, OBSERVATION_SIZE))
    masks = np.zeros((steps, n, NUM_ACTIONS), bool)
    actions = np.zeros((steps, n), np.int64)
    logps = np.zeros((steps, n))
    values = np.zeros((steps, n))
    rewards = np.zeros((steps, n))
    dones = np.zeros((steps, n), bool)
    outcomes = {"learner": 0, "opponent": 0, "draw": 0}
    for t in range(steps):
        obs[t], masks[t] = envs.obs, envs.mask
        logits, _ = pi.forward(envs.obs)
        logp = masked_log_softmax(logits, envs.mask)
        a = sample_actions(logp, rng)
        actions[t] = a
        logps[t] = logp[np.arange(n), a]
        values[t] = vf.forward(envs.obs)[0][:, 0]
        rewards[t], dones[t], winners = envs.step(a)
        for w in winners:
            if w is not None:
                outcomes[w] += 1
    last_value = vf.forward(envs.obs)[0][:, 0]  # bootstraps the episodes the rollout cut short
    adv = np.zeros((steps, n))
    gae = np.zeros(n)
    for t in reversed(range(steps)):
        nxt = last_value if t == steps - 1 else values[t + 1]
        live = ~dones[t]
        delta = rewards[t] + gamma * nxt * live - values[t]
        gae = delta + gamma * lam * live * gae
        adv[t] = gae
    flat = lambda x: x.reshape(steps * n, *x.shape[2:])  # noqa: E731
    batch = {
        "obs": flat(obs),
        "mask": flat(masks),
        "action": flat(actions),
        "logp": flat(logps),
        "adv": flat(adv),
        "ret": flat(adv + values),
    }
    return batch, outcomes


def policy_loss(pi: MLP, x, mask, a, old_logp, adv, clip: float, ent_coef: float):
    """PPO's clipped surrogate minus the entropy bonus, its gradients, and figures to watch."""
    m = len(a)
    rows = np.arange(m)
    logits, cache = pi.forward(x)
    logp = masked_log_softmax(logits, mask)
    p = np.exp(logp) * mask
    logp_a = logp[rows, a]
    log_ratio = logp_a - old_logp
    ratio = np.exp(log_ratio)
    low, high = 1 - clip, 1 + clip
    surrogate = np.minimum(ratio * adv, np.clip(ratio, low, high) * adv)
    plogp = np.where(mask, p * logp, 0.0)
    entropy = -plogp.sum(axis=1)
    loss = -surrogate.mean() - ent_coef * entropy.mean()
    # The clipped surrogate's gradient flows where the unclipped term is the minimum.
    active = (ratio * adv <= np.clip(ratio, low, high) * adv) | ((ratio > low) & (ratio < high))
    d_logp_a = -(adv * ratio * active) / m  # d loss / d log pi(a); d log pi(a) / d logit_j = [j = a] - p_j
    d_logits = -p * d_logp_a[:, None]
    d_logits[rows, a] += d_logp_a
    # d entropy / d logit_j = -p_j (log p_j + entropy), and the loss has -ent_coef * mean(entropy)
    d_logits += ent_coef * (plogp + p * entropy[:, None]) / m
    stats = {
        "kl": float(((ratio - 1) - log_ratio).mean()),
        "entropy": float(entropy.mean()),
        "clipped": float((np.abs(ratio - 1) > clip).mean()),
    }
    return float(loss), pi.backward(cache, d_logits), stats


def value_loss(vf: MLP, x, ret):
    v, cache = vf.forward(x)
    err = v[:, 0] - ret
    return float(0.5 * (err * err).mean()), vf.backward(cache, (err / len(ret))[:, None])


def ppo_update(batch, pi: MLP, vf: MLP, pi_opt: Adam, vf_opt: Adam, args, rng: np.random.Generator) -> dict:
    size = len(batch["action"])
    stats: dict[str, list[float]] = {"kl": [], "entropy": [], "clipped": [], "value_loss": []}
    for _ in range(args.epochs):
        order = rng.permutation(size)
        for start in range(0, size, args.minibatch):
            idx = order[start : start + args.minibatch]
            adv = batch["adv"][idx]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            _, grads, figures = policy_loss(
                pi, batch["obs"][idx], batch["mask"][idx], batch["action"][idx], batch["logp"][idx], adv,
                args.clip, args.ent_coef,
            )  # fmt: skip
            pi_opt.step(grads)
            vloss, vgrads = value_loss(vf, batch["obs"][idx], batch["ret"][idx])
            vf_opt.step(vgrads)
            for k, v in figures.items():
                stats[k].append(v)
            stats["value_loss"].append(vloss)
    return {k: float(np.mean(v)) for k, v in stats.items()}


# -- imitation (optional warm start) -----------------------------------------------------------------


def imitation_data(rules: RuleSet, teacher: str, opponent: str, decisions: int, seed: int):
    """Observations, masks and the teacher's actions where the teacher plays the learner's seat
    against ``opponent``, with each decision's outcome (+1/-1/0 for the match) for the value function."""
    from koikoi.arena import make_builtin

    env = SingleAgentEnv(opponent=opponent, rules=rules, seat="random", reward="win")
    agent = make_builtin(teacher, seed, rules)
    xs, masks, actions, outcomes = [], [], [], []
    o, _ = env.reset(seed=seed)
    episode_start = 0
    while len(actions) < decisions:
        assert env.match is not None
        # The teacher reads the learner's own observation, the one the policy is given as a vector.
        a = int(agent.choose(env.match.observation(env.seat)))
        xs.append(o["observation"])
        masks.append(o["action_mask"] != 0)
        actions.append(a)
        o, r, done, _, _ = env.step(a)
        if done:
            outcomes += [r] * (len(actions) - episode_start)
            episode_start = len(actions)
            o, _ = env.reset()
    n = episode_start  # whole matches only
    return np.array(xs[:n], np.float64), np.array(masks[:n]), np.array(actions[:n]), np.array(outcomes[:n])


def imitate(pi: MLP, vf: MLP, data, epochs: int, minibatch: int, lr: float, rng: np.random.Generator) -> float:
    """Fit the policy to the teacher's actions (cross-entropy over the legal actions), the value function
    to the outcomes; returns the share of the teacher's actions the policy now ranks first."""
    x, mask, a, ret = data
    pi_opt, vf_opt = Adam(pi.params, lr, 1.0), Adam(vf.params, lr, 1.0)
    for _ in range(epochs):
        order = rng.permutation(len(a))
        for start in range(0, len(a), minibatch):
            idx = order[start : start + minibatch]
            m = len(idx)
            logits, cache = pi.forward(x[idx])
            p = np.exp(masked_log_softmax(logits, mask[idx])) * mask[idx]
            p[np.arange(m), a[idx]] -= 1.0  # d cross-entropy / d logits = p - onehot(teacher's action)
            pi_opt.step(pi.backward(cache, p / m))
            vf_opt.step(value_loss(vf, x[idx], ret[idx])[1])
    logits = np.concatenate([pi.forward(x[i : i + 4096])[0] for i in range(0, len(a), 4096)])
    return float((np.argmax(np.where(mask, logits, -np.inf), axis=1) == a).mean())


# -- evaluation, curve, plot -----------------------------------------------------------------------


def evaluate(policy: Policy, rules: RuleSet, opponent: str, matches: int, seed: int) -> float:
    """The greedy policy's share of won matches (a draw counts half) on a fixed set of deals, seats alternating."""
    envs = [SingleAgentEnv(opponent=opponent, rules=rules, seat=s, reward="win") for s in (0, 1)]
    score = 0.0
    for k in range(matches):
        env = envs[k % 2]
        o, _ = env.reset(seed=seed + k // 2)  # each deal played from both seats
        done = False
        while not done:
            probs = policy.probabilities(o["observation"], o["action_mask"])
            o, r, done, _, info = env.step(int(np.argmax(probs)))
        score += 1.0 if info["winner"] == "learner" else 0.5 if info["winner"] is None else 0.0
    return score / matches


X_LABEL = "training minutes (imitation first, if any, then PPO)"
SERIES = (
    ("eval_win_rate", "greedy policy, fixed evaluation deals", "#d62728"),
    ("train_win_rate", "sampling policy, its PPO training matches", "#3182bd"),
)


def write_svg(path: Path, rows: list[dict], title: str) -> None:
    """The learning curve as a small SVG, for machines without matplotlib."""
    w, h, left, right, top, bottom = 720, 400, 60, 20, 40, 50
    xmax = max(max(r["minutes"] for r in rows), 1e-9)

    def px(x: float, y: float) -> tuple[float, float]:
        return left + (w - left - right) * x / xmax, h - bottom - (h - top - bottom) * y

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
        f'<rect width="{w}" height="{h}" fill="white"/>',
        f'<text x="{w / 2}" y="22" text-anchor="middle" font-size="14">{title}</text>',
        f'<text x="{w / 2}" y="{h - 12}" text-anchor="middle">{X_LABEL}</text>',
    ]
    for y in (0.0, 0.25, 0.5, 0.75, 1.0):
        (x0, yy), (x1, _) = px(0, y), px(xmax, y)
        dash = ' stroke-dasharray="4"' if y == 0.5 else ""
        parts.append(f'<line x1="{x0}" y1="{yy}" x2="{x1}" y2="{yy}" stroke="#bbb"{dash}/>')
        parts.append(f'<text x="{x0 - 6}" y="{yy + 4}" text-anchor="end">{y:.0%}</text>')
    for k, (key, label, colour) in enumerate(SERIES):
        pts = [px(r["minutes"], r[key]) for r in rows if r[key] != ""]
        if pts:
            d = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
            parts.append(f'<polyline points="{d}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts.append(f'<text x="{left + 10}" y="{top + 15 + 17 * k}" fill="{colour}">{label}</text>')
    parts.append("</svg>")
    path.write_text("\n".join(parts) + "\n")


def plot(out: Path, rows: list[dict], title: str) -> Path:
    """curve.png with matplotlib when it is installed, else curve.svg written by hand."""
    try:
        import matplotlib
    except ImportError:
        svg = out / "curve.svg"
        write_svg(svg, rows, title)
        return svg
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for key, label, colour in SERIES:
        pts = [r for r in rows if r[key] != ""]
        marker = "o" if key == "eval_win_rate" else None
        ax.plot([r["minutes"] for r in pts], [100 * r[key] for r in pts], color=colour, marker=marker, label=label)
    ax.axhline(50, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel(X_LABEL)
    ax.set_ylabel("matches won against the opponent (%, draw = half)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    png = out / "curve.png"
    fig.savefig(png, dpi=120)
    return png


# -- main ------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=30.0, help="training time, wall clock (default 30)")
    ap.add_argument("--iterations", type=int, default=0, help="stop after this many PPO iterations (0: no limit)")
    ap.add_argument("--out", default="runs/ppo", help="folder for policy.npz, curve.csv and the plot")
    ap.add_argument("--rules", default="cardavia", help="a preset name, or NAME:hands=1,... (default cardavia)")
    ap.add_argument("--opponent", default="easy", help="the built-in player to train against (default easy)")
    ap.add_argument("--reward", choices=("win", "match"), default="win", help="+1/-1 per match, or its points")
    ap.add_argument("--env", choices=("auto", "vector", "single"), default="auto", help="environment (default auto)")
    ap.add_argument("--envs", type=int, default=256, help="tables stepped side by side (default 256)")
    ap.add_argument("--steps", type=int, default=32, help="decisions per table per iteration (default 32)")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--minibatch", type=int, default=1024)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--clip", type=float, default=0.2)
    ap.add_argument("--ent-coef", type=float, default=0.01)
    ap.add_argument("--gamma", type=float, default=1.0)
    ap.add_argument("--lam", type=float, default=0.95)
    ap.add_argument("--hidden", default="128,128", help="hidden layer sizes (default 128,128)")
    ap.add_argument("--eval-every", type=int, default=20, help="iterations between evaluations (default 20)")
    ap.add_argument("--eval-matches", type=int, default=1000, help="matches per evaluation (default 1000)")
    ap.add_argument("--final-matches", type=int, default=1000, help="arena matches at the end (0: none)")
    ap.add_argument(
        "--imitate",
        type=int,
        default=0,
        metavar="N",
        help="warm start: fit the policy to N decisions of --teacher in the learner's seat first "
        "(default 0: PPO from a random policy)",
    )
    ap.add_argument("--teacher", default="easy", help="the built-in player imitated by --imitate (default easy)")
    ap.add_argument("--imitate-epochs", type=int, default=4)
    ap.add_argument(
        "--yardstick",
        metavar="DIR",
        help="a folder holding yardstick.py: its pure-Python hands per second, measured before and after "
        "training in this run, puts the training speed in proportion (this machine may be shared)",
    )
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.minutes <= 0 and args.iterations <= 0:
        ap.error("give --minutes or --iterations a positive value")
    for name in ("envs", "steps", "epochs", "minibatch", "eval_every"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def rule_set(text: str) -> RuleSet:
    name, _, settings = text.partition(":")
    rules = preset(name)
    return rules.with_settings(settings.split(",")) if settings else rules


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rules = rule_set(args.rules)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    hidden = [int(x) for x in args.hidden.split(",") if x.strip()]
    pi = MLP([OBSERVATION_SIZE, *hidden, NUM_ACTIONS], rng, last_scale=0.01)
    vf = MLP([OBSERVATION_SIZE, *hidden, 1], rng, last_scale=1.0)
    pi_opt, vf_opt = Adam(pi.params, args.lr, 0.5), Adam(vf.params, args.lr, 0.5)
    envs = make_envs(args.env, args.envs, rules, args.opponent, args.reward, args.seed)
    print(
        f"PPO against {args.opponent}, {rules.name} rules, {type(envs).__name__} x {args.envs}, "
        f"{args.envs * args.steps} decisions per iteration",
        flush=True,
    )

    def snapshot() -> Policy:
        return Policy([(W.copy(), b.copy()) for W, b in pi.layers], "relu")

    eval_seed = 10**9 + args.seed  # the same deals at every evaluation
    rows: list[dict] = []
    hands = 0
    start = time.monotonic()
    cpu0 = time.process_time()

    def report(phase: str, iteration: int, stats: dict, train_win_rate: float, evaluate_now: bool) -> dict:
        elapsed = time.monotonic() - start
        row = {
            "phase": phase,
            "iteration": iteration,
            "matches": hands,  # PPO training matches so far
            "minutes": round(elapsed / 60, 3),
            "cpu_minutes": round((time.process_time() - cpu0) / 60, 3),
            "train_win_rate": round(train_win_rate, 5) if phase == "ppo" else "",
            "eval_win_rate": "",
            **{k: round(stats[k], 5) if k in stats else "" for k in ("kl", "entropy", "clipped", "value_loss")},
        }
        if evaluate_now:
            row["eval_win_rate"] = evaluate(snapshot(), rules, args.opponent, args.eval_matches, eval_seed)
        rows.append(row)
        parts = [f"{phase:9s} {iteration:4d}", f"{row['minutes']:6.2f} min", f"matches {hands:7d}"]
        if phase == "ppo":
            parts.append(f"training wins {train_win_rate:.1%}")
        if row["eval_win_rate"] != "":
            parts.append(f"greedy eval {row['eval_win_rate']:.1%}")
        if "kl" in stats:
            parts.append(f"entropy {stats['entropy']:.2f}  kl {stats['kl']:.4f}")
        print("  ".join(parts), flush=True)
        return row

    yardstick = []
    if args.yardstick:
        sys.path.insert(0, str(Path(args.yardstick).resolve()))
        import yardstick as ys  # measuring only: its code is not part of this project

        yardstick.append(ys.python_hands_per_second(3.0))
    report("start", 0, {}, 0.0, True)  # the untrained policy, for the curve's first point
    start, cpu0 = time.monotonic(), time.process_time()  # training time: the evaluation above is not part of it
    if args.imitate > 0:
        data = imitation_data(rules, args.teacher, args.opponent, args.imitate, args.seed + 7)
        agree = imitate(pi, vf, data, args.imitate_epochs, args.minibatch, 1e-3, rng)
        print(
            f"imitation: {len(data[2])} decisions of {args.teacher} in {(time.monotonic() - start) / 60:.2f} min; "
            f"the policy's first choice is the teacher's in {agree:.1%} of them",
            flush=True,
        )
        report("imitation", 0, {}, 0.0, True)
    iteration = 0
    ppo_cpu = 0.0  # CPU seconds of the PPO iterations (rollouts and updates, not the evaluations)
    while True:
        iteration += 1
        cpu = time.process_time()
        batch, outcomes = collect(envs, pi, vf, args.steps, args.gamma, args.lam, rng)
        stats = ppo_update(batch, pi, vf, pi_opt, vf_opt, args, rng)
        ppo_cpu += time.process_time() - cpu
        finished = sum(outcomes.values())
        hands += finished
        elapsed = time.monotonic() - start
        last = (args.iterations and iteration >= args.iterations) or (args.minutes and elapsed >= 60 * args.minutes)
        won = (outcomes["learner"] + outcomes["draw"] / 2) / finished if finished else 0.0
        report("ppo", iteration, stats, won, iteration % args.eval_every == 0 or bool(last))
        if last:
            break

    speed = {"ppo_matches": hands, "ppo_cpu_seconds": round(ppo_cpu, 1)}
    if yardstick:
        yardstick.append(ys.python_hands_per_second(3.0))
        best = max(yardstick)  # the better of the two rounds: the one least slowed by other work
        speed.update(yardstick_hands_per_second=[round(y) for y in yardstick])
        speed["ratio"] = round(hands / max(ppo_cpu, 1e-9) / best, 4)
        print(
            f"speed: {hands / max(ppo_cpu, 1e-9):,.0f} PPO matches per CPU second (rollouts and updates) = "
            f"{speed['ratio']:.3f} x the yardstick's {best:,.0f} pure-Python random hands per second, same run",
            flush=True,
        )
    (out / "speed.json").write_text(json.dumps(speed, indent=1) + "\n")

    policy_path = out / "policy.npz"
    meta = {
        "rules": rules.name,
        "rule_set": rules.to_dict(),
        "opponent": args.opponent,
        "trained_matches": hands,
        "iterations": iteration,
        "minutes": rows[-1]["minutes"],
        "trainer": "examples/train_ppo.py",
        "settings": {k: v for k, v in vars(args).items() if k not in ("out",)},
    }
    extra = {f"value_{k}{i // 2}": p for i, p in enumerate(vf.params) for k in ("Wb"[i % 2],)}
    save_policy(policy_path, pi.layers, activation="relu", meta=meta, extra=extra)
    with open(out / "curve.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    title = f"PPO against {args.opponent} ({rules.name}, one match per episode)"
    picture = plot(out, rows, title)
    print(f"saved {policy_path}, {out / 'curve.csv'} and {picture}", flush=True)

    if args.final_matches > 0:
        from koikoi.arena import run_arena, wilson_interval

        report = run_arena(rules, args.final_matches, args.seed + 1, [f"policy:{policy_path}", args.opponent], jobs=1)
        a = report.players[0]
        lo, hi = wilson_interval(a.wins, a.games)
        summary = {
            "games": a.games,
            "wins": a.wins,
            "draws": a.draws,
            "losses": a.losses,
            "win_share": a.wins / a.games,
            "win_share_ci95": [lo, hi],
            "win_rate_draw_half": a.win_rate,
        }
        (out / "final.json").write_text(json.dumps(summary, indent=1) + "\n")
        print(
            f"arena, {a.games} {rules.name} matches against {args.opponent}, seats alternating: "
            f"{a.wins} wins / {a.draws} draws / {a.losses} losses = {a.wins / a.games:.1%} wins "
            f"(95% interval {lo:.1%} - {hi:.1%})",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
