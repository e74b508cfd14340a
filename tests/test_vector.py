"""koikoi.vector gives exactly what koikoi.env gives for the same deals and actions, on every preset.

Each table of the vector env is shadowed by a koikoi.env environment (``raw_env`` for self-play,
``SingleAgentEnv`` against an opponent) whose match is dealt from that table's own record (its decks
and dealer draws, read as the engine asks for them) and whose opponent replays the table's opponent
moves; every observation, mask, reward and termination is compared, step by step.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest

import koikoi.env as kenv
from koikoi.ai.heuristic import EasyAgent
from koikoi.match import Chance, Match
from koikoi.rules import PRESETS, preset
from koikoi.vector import KoiKoiVectorEnv

BIRTH_MONTHS = (3, 8)


def months_for(rules) -> tuple[int, int] | None:
    return BIRTH_MONTHS if rules.dealer_selection == "birth_month" else None


class TableChance(Chance):
    """One table's chance outcomes for one match, read from the vector env's record of that match on
    demand (the next hand's deck is dealt in the same step as the engine asks for it)."""

    def __init__(self, log: dict) -> None:
        self.log = log
        self.decks = self.draws = 0

    def deck(self) -> list[int]:
        self.decks += 1
        return self.log["decks"][self.decks - 1]

    def draw_card(self) -> int:
        self.draws += 1
        return self.log["draws"][self.draws - 1]


def table_match(venv: KoiKoiVectorEnv, row: int):
    log = venv.match_log(row)

    def make(rules, seed=None, birth_months=None):
        return Match(rules, chance=TableChance(log), birth_months=birth_months)

    return make


def assert_same_obs(got_obs: np.ndarray, got_mask: np.ndarray, expected: dict, where: str) -> None:
    exp_obs, exp_mask = expected["observation"], expected["action_mask"]
    if not np.array_equal(got_obs, exp_obs):
        diff = np.flatnonzero(got_obs != exp_obs)
        raise AssertionError(f"{where}: observation differs at {diff.tolist()}: {got_obs[diff]} != {exp_obs[diff]}")
    assert np.array_equal(got_mask, exp_mask), f"{where}: mask {np.flatnonzero(got_mask)} != {np.flatnonzero(exp_mask)}"


# -- self-play against raw_env ------------------------------------------------------------------------


def selfplay_reference(venv: KoiKoiVectorEnv, row: int) -> kenv.raw_env:
    e = kenv.raw_env(venv.rules, venv.reward_mode, birth_months=venv.birth_months)
    with mock.patch.object(kenv, "Match", table_match(venv, row)):
        e.reset(seed=0)
    return e


def run_selfplay(rules, reward: str, n: int, steps: int, seed: int) -> int:
    venv = KoiKoiVectorEnv(n, rules=rules, reward=reward, birth_months=months_for(rules), record=True)
    obs, info = venv.reset(seed=seed)
    refs = [selfplay_reference(venv, i) for i in range(n)]
    rng = np.random.default_rng(seed)
    ends = 0
    for t in range(steps):
        for i, e in enumerate(refs):
            assert info["current_player"][i] == kenv.AGENTS.index(e.agent_selection)
            assert_same_obs(obs["observation"][i], obs["action_mask"][i], e.observe(e.agent_selection), f"{t}/{i}")
        actions = venv.sample_actions(rng)
        obs, rewards, terminated, truncated, info = venv.step(actions)
        assert not truncated.any()
        for i, e in enumerate(refs):
            e.step(int(actions[i]))
            assert rewards[i].tolist() == [e.rewards[a] for a in kenv.AGENTS], (t, i)
            assert bool(terminated[i]) == all(e.terminations.values()), (t, i)
            if terminated[i]:
                ends += 1
                final = {k: v[i] for k, v in info["final_obs"].items()}
                assert_same_obs(final["observation"], final["action_mask"], e.observe(e.agent_selection), "final")
                assert info["final_scores"][i].tolist() == e.match.scores
                refs[i] = selfplay_reference(venv, i)
    return ends


# Short matches where a preset's are long, so that match ends (scores carried over, the match's end,
# the reward modes "match" and "win", autoreset) show up within the steps.
@pytest.mark.parametrize("name", list(PRESETS))
@pytest.mark.parametrize("reward", ["hand", "match", "win"])
def test_selfplay_equals_raw_env(name, reward):
    rules = PRESETS[name]
    if reward != "hand" and rules.hands > 2:
        rules = rules.replace(hands=2)
    if reward != "hand" and rules.target_score:
        rules = rules.replace(target_score=8)
    steps = 300 if reward == "hand" else 90
    ends = run_selfplay(rules, reward, 6, steps, seed=len(name) * 7 + len(reward))
    if reward != "hand" or rules.hands == 1:
        assert ends > 0


# -- one learner against an opponent: SingleAgentEnv ---------------------------------------------------


class ReplayOpponent:
    """Plays the table's own opponent moves (from its record), checking easy's against EasyAgent."""

    def __init__(self, venv: KoiKoiVectorEnv, row: int, holder: dict) -> None:
        self.venv, self.holder = venv, holder
        self.log = venv.match_log(row)
        self.easy = EasyAgent(0)

    def choose(self, obs) -> int:
        match = self.holder["env"].match
        a = self.log["actions"][len(match.actions)]
        if self.venv.opponent == "easy":
            ranked = self.easy.rank(obs)
            best = ranked[0].value
            values = {c.action: c.value for c in ranked}
            assert a in values and values[a] == best, (a, ranked)
        return a


def opponent_reference(venv: KoiKoiVectorEnv, row: int, seat: int) -> kenv.SingleAgentEnv:
    holder: dict = {}
    e = kenv.SingleAgentEnv("random", venv.rules, seat, venv.reward_mode, birth_months=venv.birth_months)
    holder["env"] = e
    with (
        mock.patch.object(kenv, "Match", table_match(venv, row)),
        mock.patch.object(kenv, "make_builtin", lambda spec, seed, rules: ReplayOpponent(venv, row, holder)),
    ):
        obs, _ = e.reset(seed=0)
    e.first_obs = obs  # type: ignore[attr-defined]
    return e


def run_opponent(rules, reward: str, opponent: str, n: int, steps: int, seed: int) -> int:
    venv = KoiKoiVectorEnv(
        n, rules=rules, reward=reward, opponent=opponent, seat="random", birth_months=months_for(rules), record=True
    )
    obs, info = venv.reset(seed=seed)
    refs = [opponent_reference(venv, i, int(info["seat"][i])) for i in range(n)]
    expected = [e.first_obs for e in refs]  # type: ignore[attr-defined]
    rng = np.random.default_rng(seed)
    ends = 0
    for t in range(steps):
        for i in range(n):
            assert_same_obs(obs["observation"][i], obs["action_mask"][i], expected[i], f"{t}/{i}")
            assert len(refs[i].match.actions) == len(venv.match_log(i)["actions"])
        actions = venv.sample_actions(rng)
        obs, rewards, terminated, truncated, info = venv.step(actions)
        for i, e in enumerate(refs):
            expected[i], reward_i, term, _, _ = e.step(int(actions[i]))
            assert rewards[i] == reward_i, (t, i)
            assert bool(terminated[i]) == term, (t, i)
            if term:
                ends += 1
                final = {k: v[i] for k, v in info["final_obs"].items()}
                assert_same_obs(final["observation"], final["action_mask"], expected[i], "final")
                refs[i] = opponent_reference(venv, i, int(info["seat"][i]))
                expected[i] = refs[i].first_obs  # type: ignore[attr-defined]
    return ends


@pytest.mark.parametrize("name", list(PRESETS))
@pytest.mark.parametrize("opponent", ["random", "easy"])
def test_against_an_opponent_equals_single_agent_env(name, opponent):
    rules = PRESETS[name]
    reward = ("hand", "match", "win")[len(name) % 3]
    if rules.hands > 3:
        rules = rules.replace(hands=3)
    if rules.target_score:
        rules = rules.replace(target_score=10)
    assert run_opponent(rules, reward, opponent, 6, 80, seed=len(name) + len(opponent)) > 0


def test_mixed_options_against_easy():
    # Options that give the batched easy player its rarer choices: declared hand bonuses, captures
    # with a choice, the sake cup read both ways.
    rules = preset("traditional").replace(hands=2, sake_cup="either", koikoi_limit=1, exhausted="dealer_bonus")
    assert run_opponent(rules, "hand", "easy", 8, 120, seed=5) > 0


# -- the API ------------------------------------------------------------------------------------------


def test_spaces_seeding_and_errors():
    venv = KoiKoiVectorEnv(5, rules="bga", opponent="easy", seat=1)
    obs, info = venv.reset(seed=3)
    assert venv.observation_space.contains(obs)
    assert (info["seat"] == 1).all()
    rng = np.random.default_rng(1)
    run1 = [venv.step(venv.sample_actions(rng))[1].tolist() for _ in range(40)]
    venv.reset(seed=3)
    rng = np.random.default_rng(1)
    assert [venv.step(venv.sample_actions(rng))[1].tolist() for _ in range(40)] == run1
    obs = venv.step(venv.sample_actions(rng))[0]
    before = obs["observation"].copy()
    actions = venv.sample_actions(rng)
    actions[2] = 288 if obs["action_mask"][2, 288] == 0 else 289 if obs["action_mask"][2, 289] == 0 else 0
    bad = actions[2]
    assert obs["action_mask"][2, bad] == 0
    with pytest.raises(ValueError, match=f"table 2: illegal action {bad} "):
        venv.step(actions)
    with pytest.raises(ValueError, match="one whole action id per table"):
        venv.step([0, 1])
    assert np.array_equal(venv._encode(None, venv._viewer()), before)  # nothing changed
    with pytest.raises(ValueError, match="opponent must be None"):
        KoiKoiVectorEnv(2, opponent="hard")
    with pytest.raises(ValueError, match="birth_months"):
        KoiKoiVectorEnv(2, rules="boardgame")
    with pytest.raises(ValueError, match="num_envs"):
        KoiKoiVectorEnv(0)
    with pytest.raises(RuntimeError, match="record=True"):
        venv.match_log(0)


def test_many_tables_against_random():
    # Enough tables that the opponent's last moves of a step involve under an eighth of them (moved
    # apart in koikoi.batch), with whole 12-hand matches.
    assert run_opponent(PRESETS["nintendo"], "match", "random", 24, 150, seed=8) > 0
