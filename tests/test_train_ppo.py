"""The PPO example trains, saves a policy the loader reads back exactly, and the arena plays it as
``policy:FILE``; its gradients are the true ones; a bad policy file is refused with its problem named."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from koikoi import Match, preset
from koikoi.arena import ArenaError, check_player, run_arena, split_players
from koikoi.env import OBSERVATION_SIZE, action_mask, encode
from koikoi.policy import PolicyAgent, PolicyError, load_policy, save_policy

# The module's tests share what its module-scoped fixtures make: one worker runs them all, and makes it once.
pytestmark = pytest.mark.xdist_group("test_train_ppo")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "train_ppo.py"
KOIKOI = shutil.which("koikoi")
CLI = [KOIKOI] if KOIKOI else [sys.executable, "-c", "import sys; from koikoi.cli import main; sys.exit(main())"]


def load_example():
    spec = importlib.util.spec_from_file_location("train_ppo", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny real training run of the example, as a user runs it (a few iterations, seconds)."""
    out = tmp_path_factory.mktemp("ppo")
    argv = [
        sys.executable,
        str(EXAMPLE),
        "--iterations",
        "3",
        "--envs",
        "4",
        "--steps",
        "16",
        "--minibatch",
        "32",
        "--hidden",
        "32",
        "--imitate",
        "300",
        "--eval-every",
        "2",
        "--eval-matches",
        "6",
        "--final-matches",
        "4",
        "--env",
        "single",
        "--out",
        str(out),
    ]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    return out, r.stdout


def test_training_saves_a_policy_a_curve_and_a_plot(trained):
    out, stdout = trained
    assert "imitation: " in stdout and "ppo          3" in stdout
    assert "arena, 4 cardavia matches against easy" in stdout
    with open(out / "curve.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["phase"], int(r["iteration"])) for r in rows] == [
        ("start", 0),
        ("imitation", 0),
        ("ppo", 1),
        ("ppo", 2),
        ("ppo", 3),
    ]
    # Evaluated at the start, after imitation, every 2nd iteration and at the last one.
    assert [r["eval_win_rate"] != "" for r in rows] == [True, True, False, True, True]
    assert all(0 <= float(r["eval_win_rate"]) <= 1 for r in rows if r["eval_win_rate"])
    assert all(0 <= float(r["train_win_rate"]) <= 1 for r in rows[2:])
    assert int(rows[-1]["matches"]) > int(rows[2]["matches"]) > 0
    assert [float(r["minutes"]) for r in rows] == sorted(float(r["minutes"]) for r in rows)
    plots = [p for p in (out / "curve.png", out / "curve.svg") if p.exists()]
    assert len(plots) == 1 and plots[0].stat().st_size > 1000
    speed = json.loads((out / "speed.json").read_text())
    assert speed["ppo_matches"] == int(rows[-1]["matches"]) and speed["ppo_cpu_seconds"] >= 0
    final = json.loads((out / "final.json").read_text())
    assert final["games"] == 4 and final["wins"] + final["draws"] + final["losses"] == 4
    policy = load_policy(out / "policy.npz")
    assert policy.meta["rules"] == "cardavia" and policy.meta["iterations"] == 3
    assert [W.shape for W, _ in policy.layers] == [(OBSERVATION_SIZE, 32), (32, 291)]


def test_the_loaded_policy_gives_the_trainers_probabilities(tmp_path):
    ppo = load_example()
    rng = np.random.default_rng(5)
    pi = ppo.MLP([OBSERVATION_SIZE, 24, 291], rng, last_scale=1.0)  # a large last layer: far from uniform
    vf = ppo.MLP([OBSERVATION_SIZE, 24, 1], rng, last_scale=1.0)
    envs = ppo.LoopEnvs(3, preset("cardavia"), "easy", "win", seed=2)
    batch, _ = ppo.collect(envs, pi, vf, 8, 1.0, 0.95, rng)  # real observations and masks
    path = tmp_path / "p.npz"
    save_policy(path, pi.layers, meta={"note": "test"})
    policy = load_policy(path)
    trainer = np.exp(ppo.masked_log_softmax(pi.forward(batch["obs"])[0], batch["mask"])) * batch["mask"]
    loaded = policy.probabilities(batch["obs"], batch["mask"])
    assert np.allclose(loaded, trainer, rtol=1e-12, atol=1e-15)
    assert (loaded[~batch["mask"]] == 0).all() and np.allclose(loaded.sum(axis=1), 1)
    assert policy.meta["note"] == "test"
    # The agent plays the most probable legal action of the engine's own observation.
    m = Match(preset("cardavia"), seed=9)
    obs = m.observation(m.current_player)
    p = policy.probabilities(encode(obs), action_mask(obs))
    assert PolicyAgent(policy).choose(obs) == int(np.argmax(p)) and p[int(np.argmax(p))] == p.max()


def test_policy_gradient_matches_finite_differences():
    ppo = load_example()
    rng = np.random.default_rng(1)
    pi = ppo.MLP([6, 5, 4], rng, last_scale=1.0)
    x = rng.normal(size=(7, 6))
    mask = rng.random((7, 4)) < 0.7
    mask[:, 0] = True
    a = np.array([np.flatnonzero(row)[i % row.sum()] for i, row in enumerate(mask)])
    logp = ppo.masked_log_softmax(pi.forward(x)[0], mask)
    old = logp[np.arange(7), a] + rng.normal(0, 0.3, 7)  # some ratios inside the clip range, some out
    adv = rng.normal(size=7)
    _, grads, _ = ppo.policy_loss(pi, x, mask, a, old, adv, 0.2, 0.05)
    for p, g in zip(pi.params, grads):
        for idx in [tuple(rng.integers(0, s) for s in p.shape) for _ in range(6)]:
            keep = p[idx]
            p[idx] = keep + 1e-6
            up = ppo.policy_loss(pi, x, mask, a, old, adv, 0.2, 0.05)[0]
            p[idx] = keep - 1e-6
            down = ppo.policy_loss(pi, x, mask, a, old, adv, 0.2, 0.05)[0]
            p[idx] = keep
            assert g[idx] == pytest.approx((up - down) / 2e-6, rel=1e-4, abs=1e-8)
    vf = ppo.MLP([6, 5, 1], rng, last_scale=1.0)
    ret = rng.normal(size=7)
    _, vgrads = ppo.value_loss(vf, x, ret)
    W = vf.params[0]
    keep = W[2, 3]
    W[2, 3] = keep + 1e-6
    up = ppo.value_loss(vf, x, ret)[0]
    W[2, 3] = keep - 1e-6
    down = ppo.value_loss(vf, x, ret)[0]
    W[2, 3] = keep
    assert vgrads[0][2, 3] == pytest.approx((up - down) / 2e-6, rel=1e-4, abs=1e-8)


def test_a_few_updates_make_a_rewarded_action_likelier():
    """The update moves probability towards actions with a positive advantage, away from the others."""
    ppo = load_example()
    rng = np.random.default_rng(3)
    pi = ppo.MLP([6, 16, 4], rng, last_scale=0.01)
    vf = ppo.MLP([6, 16, 1], rng, last_scale=1.0)
    x = np.tile(rng.normal(size=(1, 6)), (64, 1))
    mask = np.ones((64, 4), bool)
    a = np.arange(64) % 4
    logp = ppo.masked_log_softmax(pi.forward(x)[0], mask)
    batch = {
        "obs": x,
        "mask": mask,
        "action": a,
        "logp": logp[np.arange(64), a],
        "adv": np.where(a == 2, 1.0, -1 / 3),
        "ret": np.zeros(64),
    }
    args = ppo.parse_args(["--iterations", "1", "--epochs", "3", "--minibatch", "64"])
    before = np.exp(logp[0, 2])
    ppo.ppo_update(batch, pi, vf, ppo.Adam(pi.params, 1e-2, 0.5), ppo.Adam(vf.params, 1e-2, 0.5), args, rng)
    after = np.exp(ppo.masked_log_softmax(pi.forward(x[:1])[0], mask[:1])[0, 2])
    assert before == pytest.approx(0.25, abs=0.02) and after > 0.3


def test_the_arena_plays_a_policy_file_from_the_command_line(trained):
    out, _ = trained
    spec = f"policy:{out / 'policy.npz'}"
    argv = [*CLI, "arena", "--rules", "cardavia", "--games", "6", "--seed", "3", "--jobs", "2"]
    r = subprocess.run([*argv, "--players", f"{spec},easy", "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    a, b = report["players"]
    assert a["spec"] == spec and b["spec"] == "easy"
    assert a["games"] == 6 and a["forfeits"] == 0 and b["forfeits"] == 0 and not report["forfeits"]
    assert a["wins"] == b["losses"] and a["decisions"] > 0
    # The greedy policy is deterministic: the same seed gives the same matches, in one process or two.
    again = run_arena(preset("cardavia"), 6, 3, [spec, "easy"], jobs=1)
    assert [m["scores"] for m in report["matches"]] == [g.scores for g in again.results]


def test_split_players_reads_policy_specs():
    assert split_players("policy:runs/a.npz,easy") == ("policy:runs/a.npz", "easy")
    assert split_players("hard,policy:b.npz") == ("hard", "policy:b.npz")
    with pytest.raises(ArenaError, match="policy:FILE"):
        split_players("policy:")


def bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    rng = np.random.default_rng(0)
    good = [(rng.normal(size=(OBSERVATION_SIZE, 8)), np.zeros(8)), (rng.normal(size=(8, 291)), np.zeros(291))]
    files = {}
    text = tmp_path / "text.npz"
    text.write_text("not a policy\n")
    files["text"] = (text, "is not a NumPy .npz archive")
    files["missing"] = (tmp_path / "nowhere.npz", "does not exist")
    no_meta = tmp_path / "no_meta.npz"
    with open(no_meta, "wb") as f:
        np.savez(f, W0=good[0][0], b0=good[0][1])
    files["no_meta"] = (no_meta, "has no 'meta' entry")
    shapes = tmp_path / "shapes.npz"
    save_policy(shapes, good)
    with np.load(shapes) as z:
        arrays = dict(z)
    arrays["W1"] = arrays["W1"][:, :200]
    arrays["b1"] = arrays["b1"][:200]
    with open(shapes, "wb") as f:
        np.savez(f, **arrays)
    files["shapes"] = (shapes, "the last layer has 200 outputs, expected one per action (291)")
    encoding = tmp_path / "encoding.npz"
    save_policy(encoding, good)
    with np.load(encoding) as z:
        arrays = dict(z)
    meta = json.loads(str(arrays["meta"]))
    meta["encoding"] = "koikoi_v9"
    arrays["meta"] = np.array(json.dumps(meta))
    with open(encoding, "wb") as f:
        np.savez(f, **arrays)
    files["encoding"] = (encoding, "encoded as 'koikoi_v9'; this koikoi encodes 'koikoi_v0'")
    pickled = tmp_path / "pickled.npz"
    with open(pickled, "wb") as f:
        np.savez(f, meta=np.array([{"format": "x"}], dtype=object))
    files["pickled"] = (pickled, "cannot be read")
    return files


@pytest.mark.parametrize("kind", ["text", "missing", "no_meta", "shapes", "encoding", "pickled"])
def test_a_bad_policy_file_is_refused_naming_the_problem(tmp_path, kind):
    path, message = bad_files(tmp_path)[kind]
    with pytest.raises(PolicyError) as e:
        load_policy(path)
    assert message in str(e.value) and str(path) in str(e.value)
    with pytest.raises(ArenaError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_player(f"policy:{path}", preset("cardavia"))


def test_nan_weights_are_refused_when_saving_and_loading(tmp_path):
    layers = [(np.full((OBSERVATION_SIZE, 291), np.nan), np.zeros(291))]
    with pytest.raises(PolicyError, match="layer 0 holds NaN or infinite weights"):
        save_policy(tmp_path / "nan.npz", layers)
    assert not (tmp_path / "nan.npz").exists()
    save_policy(tmp_path / "ok.npz", [(np.zeros((OBSERVATION_SIZE, 291)), np.zeros(291))])
    with np.load(tmp_path / "ok.npz") as z:
        arrays = dict(z)
    arrays["W0"][0, 0] = np.inf
    with open(tmp_path / "inf.npz", "wb") as f:
        np.savez(f, **arrays)
    with pytest.raises(PolicyError, match="layer 0 holds NaN or infinite weights"):
        load_policy(tmp_path / "inf.npz")


def test_the_command_line_refuses_a_bad_policy_file_before_playing(tmp_path):
    path, message = bad_files(tmp_path)["text"]
    argv = [*CLI, "arena", "--rules", "cardavia", "--games", "2", "--seed", "1", "--jobs", "1"]
    r = subprocess.run([*argv, "--players", f"policy:{path},easy"], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and message in r.stderr and str(path) in r.stderr
    assert "Traceback" not in r.stderr


def test_the_arena_does_not_import_numpy_for_other_players():
    code = (
        "import sys; from koikoi.arena import run_arena; from koikoi.rules import preset; "
        "run_arena(preset('cardavia'), 2, 1, ['easy', 'random'], jobs=1); "
        "print('numpy' in sys.modules)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_a_policy_file_is_an_opponent_for_the_gymnasium_environment(trained):
    from koikoi.env import SingleAgentEnv

    out, _ = trained
    policy = load_policy(out / "policy.npz")
    env = SingleAgentEnv(opponent=f"policy:{out / 'policy.npz'}", rules="cardavia", seat=0, reward="win")
    o, _ = env.reset(seed=4)
    done = False
    while not done:
        o, _, done, _, info = env.step(int(np.flatnonzero(o["action_mask"])[0]))
    # The opponent's moves are the policy's greedy choices from its own observations.
    replay = Match(preset("cardavia"), seed=env.match.seed)
    agent = PolicyAgent(policy)
    opponent_moves = 0
    for action in env.match.actions:
        if replay.current_player == 1:
            assert action == agent.choose(replay.observation(1))
            opponent_moves += 1
        replay.apply_action(action)
    assert opponent_moves > 0 and replay.scores == env.match.scores
    assert info["winner"] in ("learner", "opponent", None)
