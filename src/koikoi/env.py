"""Koi-Koi as a standard multi-agent environment (PettingZoo AEC) and a single-agent one (Gymnasium).

An optional part of the package (the ``koikoi[rl]`` extra: numpy, gymnasium, pettingzoo). The rest of
``koikoi`` never imports this module. ``docs/env.md`` has the same tables and more examples.

>>> from koikoi import env as kenv
>>> e = kenv.env(rules="cardavia")
>>> e.reset(seed=1)
>>> obs, reward, terminated, truncated, info = e.last()
>>> obs["observation"].shape == (kenv.OBSERVATION_SIZE,), int(obs["action_mask"].sum()) > 0
(True, True)

``env(rules="nintendo", reward="hand", render_mode=None, birth_months=None)`` is the AEC environment
(agents ``player_0``, ``player_1``; one episode is one whole match, over as many hands as the rule set
plays) wrapped as PettingZoo's classic games are; ``raw_env`` is the class itself. ``SingleAgentEnv``
plays one seat against a built-in computer player or a bot program (``gymnasium.make("koikoi/KoiKoi-v0")``
once this module is imported, or ``gymnasium.make("koikoi.env:koikoi/KoiKoi-v0")``).

Observation encoding ``koikoi_v0``
----------------------------------

``{"observation": float32[OBSERVATION_SIZE], "action_mask": int8[291]}``, built by :func:`encode`
from the acting player's :class:`~koikoi.observation.Observation` alone, so it never holds the
opponent's hand, the stock order or the seed (the environments read the same values from the
match directly, without building the observation first). Card slices have one entry per card id ``c`` (0..47,
``koikoi.CARD_NAMES[c]``; month ``c // 4 + 1``): 1 where the card is in that set, else 0.

====== ====== ==============================================================================
offset length meaning
====== ====== ==============================================================================
0      48     own hand
48     48     table
96     48     own captures
144    48     opponent's captures
192    48     the card drawn from the stock waiting for a capture choice (one-hot; zeros if none)
240    48     cards still unseen: the opponent's hand and the stock together (never told apart)
288    4      phase one-hot: play, draw_choice, decision, over
292    12     month of the hand one-hot (January .. December)
304    1      1 if this player is the dealer of the hand
305    1      cards left in the stock / 24
306    1      cards in the opponent's hand / 8
307    2      koi-koi calls this hand, own then opponent's: min(n, 3) / 3
309    2      yaku points now (before multipliers), own then opponent's: / 10, at most 10
311    2      match scores, own then opponent's: / 50, clipped to [-100, 100]
313    1      hands finished / hands in the match (0 when the match has no hand limit)
====== ====== ==============================================================================

``OBSERVATION_SIZE`` is 314. ``action_mask[a]`` is 1 exactly for the legal actions of the player to
move; it is all zeros for the player waiting and once the match is over.

Actions (the engine's action ids, ``Discrete(291)``)
----------------------------------------------------

========== ======================================================================================
id         action
========== ======================================================================================
0..47      play card ``id`` from the hand (it captures what it must, or stays on the table)
48..239    ``48 + 4*card + r``: play ``card`` and capture the table card ``4*(card//4) + r`` of its
           month (only when two table cards of that month give a choice)
240..287   ``240 + card``: the card drawn from the stock captures table card ``card`` (with a choice)
288        koi-koi (go on after a turn that raised the yaku score)
289        stop (end the hand and score)
290        declare a dealt hand bonus (teshi/kuttsuki) when the rule set wants it declared
========== ======================================================================================

Rewards
-------

``reward="hand"``: when a hand ends, each player is rewarded its score change from that hand, exactly
the engine's ``HandResult.deltas`` (zero-sum when the rule set transfers points, else the winner gets
its points and the loser 0). The rewards of one match add up to each player's final score minus the
starting score. ``reward="match"``: the same points all at once, when the match ends: each player's
final score minus the starting score; nothing before. ``reward="win"``: when the match ends, +1 for
the winner, -1 for the loser, 0 each for a draw; nothing before.

A hand can end at the very deal (a hand bonus awarded at once). If that happens to the first hand of
the match, its reward comes with the first step's rewards. A match that is over before anyone could
move (a one-hand rule set) is skipped: ``reset`` deals the next one.

Illegal actions: ``raw_env.step`` raises ``ValueError`` (naming the action and the legal ones) and
changes nothing; ``env()``'s ``TerminateIllegalWrapper`` instead ends the episode with -1 for the
offender, as in PettingZoo's classic games. ``SingleAgentEnv.step`` raises ``ValueError`` unless
``illegal_action="remap"``.

Seeding
-------

``reset(seed=s)`` plays ``koikoi.Match(rules, seed=s)``: the same seed gives the same deals. A later
``reset()`` without a seed draws the next match's seed from a generator seeded with ``s`` (so a
sequence of episodes repeats too); before any seed it is random. (A skipped match, above, is replaced
by the next seed from that generator.)
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

try:
    import gymnasium
    import numpy as np
    from gymnasium import spaces
    from pettingzoo import AECEnv  # type: ignore[import-untyped]  # PettingZoo ships no type information
    from pettingzoo.utils import wrappers  # type: ignore[import-untyped]  # (no py.typed marker, no stubs)
except ImportError as e:  # the optional extra is not installed: say how to get it
    raise ImportError(f"koikoi.env needs {e.name}: pip install 'koikoi[rl]'") from e

from .actions import NUM_ACTIONS, action_name
from .botproto import BotError, BotProcess, hand_end_message, match_end_message
from .cards import CARD_NAMES, FULL_DECK
from .encoding import ENCODING, LAYOUT, OBSERVATION_SIZE, PHASES, SLICES, action_mask, encode
from .encoding import HIGH as _HIGH
from .encoding import LOW as _LOW
from .encoding import legal_mask as _mask
from .encoding import vector as _vector
from .lineup import DEFAULT_TIME_LIMIT, check_player, make_builtin
from .match import Match
from .observation import Observation, yaku_scores
from .rules import RuleSet, preset

__all__ = [
    "ENCODING",
    "OBSERVATION_SIZE",
    "LAYOUT",
    "SLICES",
    "PHASES",
    "REWARD_MODES",
    "AGENTS",
    "encode",
    "action_mask",
    "observation_space",
    "describe",
    "env",
    "raw_env",
    "SingleAgentEnv",
    "OpponentError",
]

REWARD_MODES = ("hand", "match", "win")
AGENTS = ("player_0", "player_1")


def _observe_match(match: Match, seat: int) -> dict[str, np.ndarray]:
    """``{"observation": encode(obs), "action_mask": action_mask(obs)}`` for ``obs = match.observation(seat)``,
    read from the match without building the observation (a learning loop asks for one at every step).
    It reads what the observation reads: the seat's own hand, and of the rest only what is public."""
    h = match.hand
    hands = h.hand_masks
    hand = hands[seat]
    table = h.table
    own_pile, other_pile = h.piles[seat], h.piles[1 - seat]
    pending = h.pending
    drawn = pending if pending >= 0 else None
    own_yaku, other_yaku = yaku_scores(h, seat)
    calls = h.koikoi_calls
    scores = match.scores
    over = match.outcome is not None
    vector = _vector(
        hand,
        table,
        own_pile,
        other_pile,
        drawn,
        FULL_DECK & ~(hand | table | own_pile | other_pile | (0 if drawn is None else 1 << pending)),
        h.phase_code,
        h.month,
        h.dealer == seat,
        len(h.stock) - h.stock_pos,
        hands[1 - seat].bit_count(),
        calls[seat],
        calls[1 - seat],
        own_yaku,
        other_yaku,
        scores[seat],
        scores[1 - seat],
        len(match.finished_results),
        match.rules.hands,
    )
    legal = h.legal_actions() if h.current_player == seat and not over else ()
    return {"observation": vector, "action_mask": _mask(legal)}


def observation_space() -> spaces.Dict:
    """The space of ``{"observation": ..., "action_mask": ...}`` for one player."""
    return spaces.Dict(
        {
            "observation": spaces.Box(_LOW, _HIGH, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
        }
    )


def describe(obs: Observation, names: Sequence[str] = AGENTS) -> str:
    """A short text view of one player's observation (nothing hidden: it reads the observation only).

    ``names`` are the players' names by seat.
    """
    me, opp = obs.player, 1 - obs.player

    def cards(cs: Iterable[int]) -> str:
        return " ".join(CARD_NAMES[c] for c in cs) or "-"

    hands = f"/{obs.rule_set.hands}" if obs.rule_set.hands else ""
    if obs.match_over:
        state = "match over: " + ("a draw" if obs.match_winner is None else f"{names[obs.match_winner]} wins")
    else:
        state = f"{names[obs.current_player]} to move ({obs.phase})"
    lines = [
        f"{obs.rules} · hand {obs.hand_number}{hands} (month {obs.month}) · dealer {names[obs.dealer]} · "
        f"scores {names[me]} {obs.scores[me]}, {names[opp]} {obs.scores[opp]} · {state}",
        f"table: {cards(obs.table)}",
    ]
    if obs.drawn_card is not None:
        lines.append(f"drawn: {CARD_NAMES[obs.drawn_card]}")
    lines.append(f"{names[me]} hand: {cards(obs.hand)}")
    for p in (me, opp):
        lines.append(
            f"{names[p]} captures ({obs.yaku_scores[p]} yaku points, {obs.koikoi_calls[p]} koi-koi): "
            f"{cards(obs.piles[p])}"
        )
    lines.append(f"{names[opp]} holds {obs.opponent_hand_count} cards · stock {obs.stock_count}")
    if obs.legal_actions:
        lines.append("legal: " + ", ".join(f"{a} {action_name(a)}" for a in obs.legal_actions))
    return "\n".join(lines)


# -- checking the arguments --------------------------------------------------------------------------


def rule_set_of(rules: str | RuleSet) -> RuleSet:
    if isinstance(rules, RuleSet):
        return rules
    if isinstance(rules, str):
        return preset(rules)  # RuleError (a ValueError) names the presets
    raise TypeError(f"rules must be a preset name or a koikoi.rules.RuleSet, not {type(rules).__name__}")


def check_reward_mode(reward: str) -> str:
    if reward not in REWARD_MODES:
        raise ValueError(
            f"unknown reward mode {reward!r}; choose 'hand' (each hand's score change), "
            "'match' (the match's score change, at its end) or 'win' (+1/-1/0 for the match)"
        )
    return reward


def birth_months_of(rules: RuleSet, birth_months: Sequence[int] | None) -> tuple[int, int] | None:
    if birth_months is None:
        if rules.dealer_selection == "birth_month":
            raise ValueError(
                f"rule set {rules.name!r} chooses the first dealer by birth month "
                "(dealer_selection=birth_month): pass birth_months=(m0, m1), months 1..12"
            )
        return None
    months = tuple(birth_months)
    if len(months) != 2 or not all(isinstance(m, int) and 1 <= m <= 12 for m in months):
        raise ValueError(f"birth_months must be two months 1..12, not {birth_months!r}")
    return months


def _render_mode(mode: str | None) -> str | None:
    if mode not in (None, "human", "ansi"):
        raise ValueError(f"unknown render_mode {mode!r}; choose 'human', 'ansi' or None")
    return mode


def _illegal(action: Any, legal: Sequence[int], who: str) -> ValueError:
    try:
        shown = f"{int(action)} ({action_name(int(action))})"
    except (TypeError, ValueError):
        shown = repr(action)
    options = ", ".join(f"{a} ({action_name(a)})" for a in legal)
    return ValueError(f"illegal action {shown} for {who}; legal: {options}")


def _as_action(action: Any, legal: Sequence[int], who: str) -> int:
    """``action`` as an int if it is legal now, else a ValueError that names it and the legal ones."""
    if isinstance(action, (bool, np.bool_)) or action is None:
        raise _illegal(action, legal, who)
    try:
        a = int(action)
    except (TypeError, ValueError):
        raise _illegal(action, legal, who) from None
    if a != action or a not in legal:
        raise _illegal(action, legal, who)
    return a


# -- PettingZoo -----------------------------------------------------------------------------------------


def env(
    rules: str | RuleSet = "nintendo",
    reward: str = "hand",
    render_mode: str | None = None,
    birth_months: Sequence[int] | None = None,
) -> AECEnv:
    """The AEC environment wrapped as PettingZoo's classic games are: an illegal action ends the episode
    with -1 for the player who chose it; actions out of range and calls out of order raise."""
    e: AECEnv = raw_env(rules, reward, render_mode, birth_months)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


class raw_env(AECEnv):  # type: ignore[misc]  # noqa: N801 - PettingZoo's name; its AECEnv is untyped (Any)
    """Koi-Koi for two agents, ``player_0`` (seat 0) and ``player_1``; an episode is one match.

    ``match`` is the engine's true state, hidden cards included: for analysis and tests, never for a policy.
    """

    metadata = {"name": "koikoi_v0", "render_modes": ["human", "ansi"], "is_parallelizable": False}

    def __init__(
        self,
        rules: str | RuleSet = "nintendo",
        reward: str = "hand",
        render_mode: str | None = None,
        birth_months: Sequence[int] | None = None,
    ) -> None:
        super().__init__()
        self.rules = rule_set_of(rules)
        self.reward_mode = check_reward_mode(reward)
        self.birth_months = birth_months_of(self.rules, birth_months)
        self.render_mode = _render_mode(render_mode)
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self.observation_spaces = {a: observation_space() for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in AGENTS}
        self.match: Match | None = None
        self._seeds = random.Random()  # the next match's seed when reset() is given none
        self._paid = 0  # hand results already handed out as rewards

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def _match(self) -> Match:
        if self.match is None:
            raise RuntimeError("call reset() before using the environment")
        return self.match

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return _observe_match(self._match(), AGENTS.index(agent))

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._seeds = random.Random(seed)
            match_seed = seed
        else:
            match_seed = self._seeds.getrandbits(63)
        self.match = Match(self.rules, seed=match_seed, birth_months=self.birth_months)
        # A match over at the deal (a hand bonus ending a one-hand match) has no step to take, and an
        # episode must not start terminated: the next match is dealt instead.
        for _ in range(1000):
            if not self.match.is_over():
                break
            self.match = Match(self.rules, seed=self._seeds.getrandbits(63), birth_months=self.birth_months)
        else:  # pragma: no cover - would need a rule set where nearly every match ends at the deal
            raise RuntimeError("every match dealt was over before its first move")
        self.agents = list(AGENTS)
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = {a: 0.0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in AGENTS}
        # A hand that ended at the deal is paid with the first step: PettingZoo wants rewards to
        # start at 0.
        self._paid = 0
        self.agent_selection = AGENTS[self.match.current_player]

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        match = self._match()
        if type(action) is int and match.outcome is None and match.hand.is_legal(action):
            a = action  # the common case, without listing the legal actions
        else:
            a = _as_action(action, match.legal_actions(), agent)
        self._cumulative_rewards[agent] = 0.0  # the agent has seen its rewards in last()
        match.apply_action(a)
        self._settle()
        self.agent_selection = AGENTS[match.current_player]
        if self.render_mode == "human":
            self.render()

    def _settle(self) -> None:
        """This step's rewards (hands that ended, the match's end) and, at the end, the terminations."""
        match = self._match()
        self._clear_rewards()
        results = match.finished_results
        if self.reward_mode == "hand":
            for r in results[self._paid :]:
                for seat, agent in enumerate(AGENTS):
                    self.rewards[agent] += float(r.deltas[seat])
        self._paid = len(results)
        if match.is_over():
            winner = match.winner()
            if self.reward_mode == "match":
                for seat, agent in enumerate(AGENTS):
                    self.rewards[agent] += float(match.scores[seat] - match.rules.starting_score)
            if self.reward_mode == "win" and winner is not None:
                self.rewards[AGENTS[winner]] += 1.0
                self.rewards[AGENTS[1 - winner]] -= 1.0
            self.terminations = {a: True for a in self.agents}
        self._accumulate_rewards()

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() needs a render_mode: env(render_mode='ansi') or 'human'")
            return None
        match = self._match()
        seat = AGENTS.index(self.agent_selection)
        text = describe(match.observation(seat))
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def close(self) -> None:
        pass


# -- Gymnasium ----------------------------------------------------------------------------------------


class OpponentError(RuntimeError):
    """The opponent of a :class:`SingleAgentEnv` failed: a bot crashed, timed out or chose an illegal action."""


class _BuiltinOpponent:
    def __init__(self, spec: str, seed: int, rules: RuleSet) -> None:
        self.spec = spec
        self.agent = make_builtin(spec, seed, rules)

    def choose(self, obs: Observation) -> int:
        action = self.agent.choose(obs)
        if action not in obs.legal_actions:
            raise OpponentError(f"opponent {self.spec!r} chose the illegal action {action!r}")
        return int(action)

    def notify(self, message: dict[str, Any]) -> None:
        pass

    def close(self) -> None:
        pass


class _BotOpponent:
    """A bot program speaking the bot protocol (docs/bot-protocol.md): one process per match, as in the arena."""

    def __init__(self, spec: str, seed: int, rules: RuleSet, seat: int, time_limit: float, game: int) -> None:
        self.spec = spec
        self.time_limit = time_limit
        self.decision = 0
        self.match: Match | None = None  # the match played: a version-2 bot is sent positions taken from it
        self.process = BotProcess(spec[4:])
        try:
            self.process.start()
            self.process.hello(seat, rules, time_limit, game=game, bot_seed=seed)
        except BotError as e:
            raise self._error(e) from None

    def _error(self, e: BotError) -> OpponentError:
        tail = self.process.stderr_tail()
        self.process.close(polite=False)
        return OpponentError(f"bot {self.spec!r} failed ({e.kind}): {e}" + (f"\nits stderr:\n{tail}" if tail else ""))

    def choose(self, obs: Observation) -> int:
        self.decision += 1
        try:
            return self.process.choose(obs, self.decision, self.time_limit, match=self.match)
        except BotError as e:
            raise self._error(e) from None

    def notify(self, message: dict[str, Any]) -> None:
        if self.process.proc is None:
            return
        try:
            self.process.notify(message, self.time_limit)
        except BotError as e:
            raise self._error(e) from None

    def close(self) -> None:
        self.process.close()


class SingleAgentEnv(gymnasium.Env):
    """One seat of a match against a fixed opponent; an episode is one match.

    ``opponent``: a built-in player (``random``, ``easy``, ``medium``, ``hard`` or an alias such as
    ``greedy``), with its options if wanted in the arena's spelling (``"hard[playouts=800;time_limit=none]"``,
    :mod:`koikoi.playerspec`; an unknown option or a bad value raises here), or ``"cmd:COMMAND"``, a bot
    program speaking the bot protocol (started for each episode).
    ``seat``: 0, 1 or ``"random"`` (drawn for each episode from the episode's generator).
    ``reward``: ``"hand"`` (the learner's score change of each hand that ended since its last action,
    the opponent's moves included), ``"match"`` (the learner's score change over the match, at its end)
    or ``"win"`` (+1/-1/0 at the end).
    ``opponent_seed``: the opponent's seed in every episode; None draws one per episode from the episode's
    generator, so ``reset(seed=s)`` repeats the opponent's choices too.
    ``illegal_action``: ``"raise"`` (a ValueError naming the action and the legal ones; nothing changes)
    or ``"remap"`` (action ``a`` becomes ``legal[a % len(legal)]``, for algorithms without action masks).
    """

    metadata = {"render_modes": ["human", "ansi"], "render_fps": 4}  # render_fps: gymnasium's checker asks

    def __init__(
        self,
        opponent: str = "easy",
        rules: str | RuleSet = "nintendo",
        seat: int | str = 0,
        reward: str = "hand",
        opponent_seed: int | None = None,
        *,
        birth_months: Sequence[int] | None = None,
        illegal_action: str = "raise",
        opponent_time_limit: float = DEFAULT_TIME_LIMIT,
        render_mode: str | None = None,
    ) -> None:
        self.rules = rule_set_of(rules)
        self.reward_mode = check_reward_mode(reward)
        self.birth_months = birth_months_of(self.rules, birth_months)
        self.render_mode = _render_mode(render_mode)
        if seat not in (0, 1, "random") or isinstance(seat, bool):
            raise ValueError(f"seat must be 0, 1 or 'random', not {seat!r}")
        if illegal_action not in ("raise", "remap"):
            raise ValueError(f"illegal_action must be 'raise' or 'remap', not {illegal_action!r}")
        check_player(opponent, self.rules)  # an unknown name or a missing program fails here, not at reset
        self.opponent = opponent
        self.seat_choice = seat
        self.opponent_seed = opponent_seed
        self.illegal_action = illegal_action
        self.opponent_time_limit = opponent_time_limit
        self.observation_space = observation_space()
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.match: Match | None = None  # the true state, for analysis only
        self.seat = 0
        self._opponent: _BuiltinOpponent | _BotOpponent | None = None
        self._paid = 0  # hand results already in a reward
        self._notified = 0  # hand results already told to a bot opponent
        self._episodes = 0

    # -- episodes -------------------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        match_seed = seed if seed is not None else self._draw()
        # A match can end before the learner first moves (a hand bonus at the deal, or the opponent
        # stopping, in a one-hand rule set): there is nothing to learn from it, so the next is dealt.
        for _ in range(1000):
            choice = self.seat_choice  # 0, 1 or "random", checked in __init__
            self.seat = int(self.np_random.integers(2)) if isinstance(choice, str) else choice
            opponent_seed = self.opponent_seed if self.opponent_seed is not None else self._draw()
            self._start(match_seed, opponent_seed)
            if not self._match().is_over():
                break
            match_seed = self._draw()
        else:  # pragma: no cover - would need a rule set where nearly every match ends at the deal
            raise RuntimeError("no match lasted until the learner's first move")
        return self._observe(), self._info()

    def _draw(self) -> int:
        return int(self.np_random.integers(2**63 - 1))

    def _start(self, match_seed: int, opponent_seed: int) -> None:
        self._close_opponent()
        self._episodes += 1
        self.match = Match(self.rules, seed=match_seed, birth_months=self.birth_months)
        self._paid = 0
        self._notified = 0
        other = 1 - self.seat
        if self.opponent.startswith("cmd:"):
            self._opponent = _BotOpponent(
                self.opponent, opponent_seed, self.rules, other, self.opponent_time_limit, self._episodes
            )
        else:
            self._opponent = _BuiltinOpponent(self.opponent, opponent_seed, self.rules)
        if isinstance(self._opponent, _BotOpponent):
            self._opponent.match = self.match
        self._play_opponent()

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        match = self._match()
        if match.is_over():
            raise RuntimeError("the match is over: call reset() to start the next episode")
        legal = match.legal_actions()
        integer = isinstance(action, (int, np.integer)) and not isinstance(action, bool)
        if self.illegal_action == "remap" and integer and int(action) not in legal:
            a = legal[int(action) % len(legal)]
        else:
            a = _as_action(action, legal, f"the learner (seat {self.seat})")
        match.apply_action(a)
        self._play_opponent()
        reward = self._collect()
        terminated = match.is_over()
        if self.render_mode == "human":
            self.render()
        return self._observe(), reward, terminated, False, self._info()

    def _play_opponent(self) -> None:
        """The opponent's moves until it is the learner's turn or the match is over; bots hear every hand's end."""
        match, opponent = self._match(), self._opponent
        assert opponent is not None
        other = 1 - self.seat
        while True:
            while self._notified < len(match.results):
                self._notified += 1
                result = match.results[self._notified - 1]
                opponent.notify(hand_end_message(self._notified, result, match.scores))
            if match.is_over() or match.current_player == self.seat:
                break
            match.apply_action(opponent.choose(match.observation(other)))
        if match.is_over():
            o = match.outcome
            assert o is not None
            opponent.notify(match_end_message(o.winner, o.scores, o.reason))
            self._close_opponent()

    def _collect(self) -> float:
        """The learner's reward for what happened since its last action."""
        match = self._match()
        reward = 0.0
        if self.reward_mode == "hand":
            reward = float(sum(r.deltas[self.seat] for r in match.results[self._paid :]))
        self._paid = len(match.results)
        if self.reward_mode == "match" and match.is_over():
            reward = float(match.scores[self.seat] - match.rules.starting_score)
        if self.reward_mode == "win" and match.is_over() and match.winner() is not None:
            reward = 1.0 if match.winner() == self.seat else -1.0
        return reward

    def _match(self) -> Match:
        if self.match is None:
            raise RuntimeError("call reset() before step()")
        return self.match

    def _observe(self) -> dict[str, np.ndarray]:
        obs = self._match().observation(self.seat)
        return {"observation": encode(obs), "action_mask": action_mask(obs)}

    def _info(self) -> dict[str, Any]:
        match = self._match()
        info: dict[str, Any] = {"seat": self.seat}
        if match.is_over():
            info["scores"] = (match.scores[self.seat], match.scores[1 - self.seat])
            info["winner"] = (
                None if match.winner() is None else ("learner" if match.winner() == self.seat else "opponent")
            )
        return info

    def action_masks(self) -> np.ndarray:
        """The legal actions now as booleans (the method sb3-contrib's MaskablePPO looks for)."""
        return action_mask(self._match().observation(self.seat)).astype(bool)

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() needs a render_mode: SingleAgentEnv(render_mode='ansi') or 'human'")
            return None
        names = ("learner", "opponent") if self.seat == 0 else ("opponent", "learner")
        text = describe(self._match().observation(self.seat), names)
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def _close_opponent(self) -> None:
        if self._opponent is not None:
            self._opponent.close()
            self._opponent = None

    def close(self) -> None:
        self._close_opponent()
        super().close()


def _register() -> None:
    # Registering twice (a module reloaded) would only warn, but there is no need to.
    if "koikoi/KoiKoi-v0" not in gymnasium.registry:
        gymnasium.register(id="koikoi/KoiKoi-v0", entry_point="koikoi.env:SingleAgentEnv")


_register()
