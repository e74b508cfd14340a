"""Many Koi-Koi tables stepped together on NumPy arrays: a Gymnasium ``VectorEnv`` (``koikoi[rl]``).

:class:`KoiKoiVectorEnv` plays ``num_envs`` whole matches side by side on :class:`koikoi.batch.BatchHands`
(one row per table), under any rule set, and gives exactly the observations, action masks, rewards and
terminations of :mod:`koikoi.env` for the same deals and actions (``tests/test_vector.py`` steps both
side by side on every preset). Each step is a handful of array operations over all tables at once; the
rare bookkeeping between hands (scores, the next dealer, the match's end, redeals) is done for the
tables that need it, also on arrays.

>>> import numpy as np
>>> from koikoi.vector import KoiKoiVectorEnv
>>> env = KoiKoiVectorEnv(8, rules="nintendo", opponent="easy")
>>> obs, info = env.reset(seed=1)
>>> obs["observation"].shape, obs["action_mask"].shape
((8, 314), (8, 291))
>>> rng = np.random.default_rng(0)
>>> actions = env.sample_actions(rng)                  # a uniformly random legal action per table
>>> obs, reward, terminated, truncated, info = env.step(actions)
>>> reward.shape, terminated.dtype.name
((8,), 'bool')

The API
-------

``KoiKoiVectorEnv(num_envs, rules="nintendo", reward="hand", opponent=None, seat=0, *,
birth_months=None, record=False)``

- ``rules``: a preset name or a :class:`~koikoi.rules.RuleSet`; ``reward``: ``"hand"``, ``"match"`` or
  ``"win"``, as :mod:`koikoi.env`; ``birth_months``: as :mod:`koikoi.env` (needed where the rule set
  chooses the first dealer by birth month).
- ``opponent=None``: **self-play**. The caller chooses the actions of both seats: each step takes one
  action per table for the player to move there, ``infos["current_player"]`` (int64, ``(num_envs,)``)
  says whose turn it is now, and the observation is that player's. Rewards are per seat, float32
  ``(num_envs, 2)`` (seat 0, seat 1): exactly ``raw_env.rewards`` of :mod:`koikoi.env` for that step.
- ``opponent="random"`` or ``"easy"``: **one learner against a built-in opponent** computed in batch
  (``random``: a uniformly random legal action; ``easy``: the greedy player of
  :class:`koikoi.ai.heuristic.EasyAgent`, the same values, ties broken at random). ``seat``: the
  learner's seat, 0, 1 or ``"random"`` (drawn for each match); ``infos["seat"]`` holds it. Each step
  plays the learner's action, then the opponent's moves until the learner is to move again or the
  match is over, as :class:`koikoi.env.SingleAgentEnv`. Rewards are the learner's, float32
  ``(num_envs,)``.
- Spaces: ``single_observation_space`` is :func:`koikoi.env.observation_space` (``Dict(observation=
  Box(314,), action_mask=Box(int8, 291))``, the ``koikoi_v0`` encoding), ``single_action_space``
  ``Discrete(291)``; ``observation_space`` / ``action_space`` are their batched forms
  (``MultiDiscrete`` for the actions).
- ``reset(seed=None, options=None) -> (obs, infos)``; ``step(actions) -> (obs, rewards, terminated,
  truncated, infos)`` with ``obs = {"observation": float32 (num_envs, 314), "action_mask": int8
  (num_envs, 291)}``, ``terminated`` / ``truncated`` bool ``(num_envs,)`` (never truncated). One
  episode is one match. ``action_masks()`` returns the last mask as booleans.
- Autoreset: ``metadata["autoreset_mode"]`` is ``AutoresetMode.SAME_STEP``. A table whose match ended
  in a step starts its next match in the same step: the observation returned is the new match's first;
  the last one of the ended match is in ``infos["final_obs"]`` (a dict like ``obs``, rows valid where
  ``infos["_final_obs"]``), with ``infos["final_scores"]`` (int64 ``(num_envs, 2)``, by seat).
- As in :mod:`koikoi.env`, a match over before anyone could move (self-play) or before the learner's
  first move (opponent) is skipped, and a hand that ends at the deal pays its reward with the next step.
- Illegal actions raise ``ValueError`` naming the table, the action and the legal ones; nothing changes.
- ``sample_actions(rng)`` gives a uniformly random legal action per table (for baselines and tests).
- ``record=True`` keeps, for each table, the chance outcomes and actions of its current match
  (:meth:`KoiKoiVectorEnv.match_log`): enough to replay it in the engine (``koikoi.match.Match`` with a
  ``ScriptedChance`` of its decks and draws, then its actions). It costs time per step; leave it off
  for training.

Seeding: ``reset(seed=s)`` seeds the generator behind every deal, dealer draw, seat and opponent choice,
so the same seed and actions give the same run. The deals are NumPy's, not ``Match(seed=s)``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

try:
    import numpy as np
    from gymnasium import spaces
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space
except ImportError as e:  # the optional extra is not installed: say how to get it
    raise ImportError(f"koikoi.vector needs {e.name}: pip install 'koikoi[rl]'") from e

from .actions import DECLARE, DRAW_TAKE_BASE, NUM_ACTIONS, PLAY_TAKE_BASE, STOP, action_name
from .batch import BatchHands, random_decks
from .cardbits import BIT, FULL, MONTH_OF, ONE, bits_of, low_index, popcount, two_card_months, u64
from .cards import NUM_CARDS
from .env import OBSERVATION_SIZE, SLICES, birth_months_of, check_reward_mode, observation_space, rule_set_of
from .players import DENIAL_WEIGHT, YAKU_WEIGHT, card_value

__all__ = ["KoiKoiVectorEnv", "OPPONENTS"]

OPPONENTS = (None, "random", "easy")

_PLAY, _DRAW_CHOICE, _DECISION, _OVER = range(4)
_REDEAL = 4  # koikoi.batch.REASONS.index("redeal")
_CARD_VALUE = np.array([card_value(c) for c in range(NUM_CARDS)])
# The card value of any set of cards of one month: [16 * month + the month's 4 bits].
_MONTH_VALUE = np.array(
    [sum(_CARD_VALUE[4 * m + j] for j in range(4) if nib >> j & 1) for m in range(12) for nib in range(16)]
)


class KoiKoiVectorEnv(VectorEnv):
    """``num_envs`` Koi-Koi matches stepped together (see the module's docstring for the API)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        rules: Any = "nintendo",
        reward: str = "hand",
        opponent: str | None = None,
        seat: int | str = 0,
        *,
        birth_months: Sequence[int] | None = None,
        record: bool = False,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a whole number of tables, 1 or more, not {num_envs!r}")
        if opponent not in OPPONENTS:
            raise ValueError(f"opponent must be None (self-play), 'random' or 'easy', not {opponent!r}")
        if seat not in (0, 1, "random") or isinstance(seat, bool):
            raise ValueError(f"seat must be 0, 1 or 'random', not {seat!r}")
        self.rules = rule_set_of(rules)
        self.reward_mode = check_reward_mode(reward)
        self.birth_months = birth_months_of(self.rules, birth_months)
        self.opponent = opponent
        self.seat_choice = seat
        self.record = record
        self.num_envs = int(num_envs)
        self.single_observation_space = observation_space()
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        n = self.num_envs
        self._ar = np.arange(n)
        self._b: BatchHands | None = None
        self._scores = np.zeros((n, 2), dtype=np.int64)
        self._hands_done = np.zeros(n, dtype=np.int64)  # hands finished in the match (its results)
        self._match_over = np.zeros(n, dtype=bool)
        self._seat = np.zeros(n, dtype=np.int64)
        self._unpaid = np.zeros((n, 2), dtype=np.float64)  # hands ended at a deal, paid with the next step
        self._legal = np.zeros((n, NUM_ACTIONS), dtype=bool)
        self._logs: list[dict[str, list[Any]]] = [{"decks": [], "draws": [], "actions": []} for _ in range(n)]

    # -- episodes -------------------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        self._rng = self.np_random
        self._b = None
        self._match_over[:] = False
        self._start_matches(self._ar)
        return self._observe(), self._infos()

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self._b is None:
            raise RuntimeError("call reset() before step()")
        n = self.num_envs
        a = np.asarray(actions)
        if a.shape != (n,) or not (np.issubdtype(a.dtype, np.integer) or (a == np.round(a)).all()):
            raise ValueError(f"step takes one whole action id per table: shape ({n},), not {a.shape} of {a.dtype}")
        a = a.astype(np.int64)
        inside = (a >= 0) & (a < NUM_ACTIONS)
        ok = inside & self._legal[self._ar, np.where(inside, a, 0)]
        if not ok.all():
            i = int(np.argmin(ok))
            legal = ", ".join(f"{x} ({action_name(int(x))})" for x in np.flatnonzero(self._legal[i]))
            shown = f"{int(a[i])} ({action_name(int(a[i]))})" if inside[i] else str(int(a[i]))
            raise ValueError(f"table {i}: illegal action {shown}; legal: {legal}; nothing was changed")
        if self.record:
            for i in range(n):
                self._logs[i]["actions"].append(int(a[i]))
        gain = self._unpaid
        self._unpaid = np.zeros((n, 2), dtype=np.float64)
        self._b.apply(a, np.ones(n, dtype=bool))
        ended = self._finish_hands(gain)
        if self.opponent is not None:
            ended |= self._play_opponent(gain)
        rewards = self._rewards(gain, ended)
        infos = {}
        if ended.any():
            idx = np.flatnonzero(ended)
            final = {
                "observation": np.zeros((n, OBSERVATION_SIZE), dtype=np.float32),
                "action_mask": np.zeros((n, NUM_ACTIONS), dtype=np.int8),
            }
            final["observation"][idx] = self._encode(idx, self._viewer(idx))
            final_scores = np.zeros((n, 2), dtype=np.int64)
            final_scores[idx] = self._scores[idx]
            self._start_matches(idx)
            infos = {"final_obs": final, "_final_obs": ended, "final_scores": final_scores}
        infos.update(self._infos())
        return self._observe(), rewards, ended, np.zeros(n, dtype=bool), infos

    def _rewards(self, gain: np.ndarray, ended: np.ndarray) -> np.ndarray:
        mode = self.reward_mode
        if mode == "hand":
            r = gain
        else:
            r = np.zeros((self.num_envs, 2))
            if ended.any():
                s = self._scores[ended]
                if mode == "match":
                    r[ended] = s - self.rules.starting_score
                else:
                    r[ended] = np.sign(s - s[:, ::-1])  # +1 the winner, -1 the loser, 0 a draw
        if self.opponent is None:
            return r.astype(np.float32)
        return r[self._ar, self._seat].astype(np.float32)

    def _infos(self) -> dict[str, Any]:
        assert self._b is not None
        info: dict[str, Any] = {"current_player": self._b.current_player.copy()}
        if self.opponent is not None:
            info["seat"] = self._seat.copy()
        return info

    def _viewer(self, idx: np.ndarray | None = None) -> np.ndarray:
        """Whose observation each table shows: the player to move (self-play) or the learner."""
        assert self._b is not None
        if self.opponent is None:
            return self._b.current_player if idx is None else self._b.current_player[idx]
        return self._seat if idx is None else self._seat[idx]

    # -- matches --------------------------------------------------------------------------------------

    def _start_matches(self, rows: np.ndarray) -> None:
        """New matches in ``rows``, played up to the first move for the caller; a match over before that
        is replaced by another."""
        r = self.rules
        while len(rows):
            k = len(rows)
            self._scores[rows] = r.starting_score
            self._hands_done[rows] = 0
            self._match_over[rows] = False
            self._unpaid[rows] = 0
            if self.record:
                for i in rows:
                    self._logs[i] = {"decks": [], "draws": [], "actions": []}
            if self.opponent is not None:
                self._seat[rows] = self._rng.integers(0, 2, k) if self.seat_choice == "random" else self.seat_choice
            self._deal(rows, self._first_dealers(rows), np.ones(k, dtype=np.int64))
            ended = self._finish_hands(self._unpaid)
            if self.opponent is not None:
                ended |= self._play_opponent(self._unpaid)
            rows = np.flatnonzero(ended)

    def _first_dealers(self, rows: np.ndarray) -> np.ndarray:
        """The first dealer of each new match, drawn as ``koikoi.match.Match`` draws it."""
        mode = self.rules.dealer_selection
        k = len(rows)
        if mode == "birth_month" and self.birth_months is not None and self.birth_months[0] == self.birth_months[1]:
            mode = "draw"  # equal months tie on every card (koikoi.match)
        dealer = np.zeros(k, dtype=np.int64)
        todo = np.arange(k)
        for _ in range(1000):
            if not len(todo):
                return dealer
            if mode == "random":
                c = self._rng.integers(0, NUM_CARDS, len(todo))
                self._log_draws(rows[todo], c[:, None])
                dealer[todo] = c & 1
                return dealer
            if mode == "draw":
                c = self._rng.integers(0, NUM_CARDS, (len(todo), 2))
                self._log_draws(rows[todo], c)
                a, b = c[:, 0] >> 2, c[:, 1] >> 2
                settled = a != b
                dealer[todo[settled]] = (a > b)[settled]
            else:
                c = self._rng.integers(0, NUM_CARDS, len(todo))
                self._log_draws(rows[todo], c[:, None])
                m = (c >> 2) + 1
                assert self.birth_months is not None
                d0, d1 = (np.minimum(abs(m - b), 12 - abs(m - b)) for b in self.birth_months)
                settled = d0 != d1
                dealer[todo[settled]] = (d0 > d1)[settled]
            todo = todo[~settled]
        raise RuntimeError("the dealer draw never settled")  # pragma: no cover

    def _log_draws(self, rows: np.ndarray, cards: np.ndarray) -> None:
        if self.record:
            for i, cs in zip(rows, cards):
                self._logs[i]["draws"].extend(int(c) for c in cs)

    def _deal(self, rows: np.ndarray, dealers: np.ndarray, months: np.ndarray) -> None:
        decks = random_decks(self._rng, len(rows))
        if self.record:
            for i, d in zip(rows, decks):
                self._logs[i]["decks"].append([int(c) for c in d])
        if self._b is None:  # the first deal of reset(): every row
            self._b = BatchHands(self.rules, decks, dealers, months)
        else:  # decks of our own making hold every card once: no check (deal() checks a caller's)
            self._b.deal_unchecked(rows, decks, dealers, months)

    def _finish_hands(self, gain: np.ndarray) -> np.ndarray:
        """Every hand that is over: a redeal is dealt again; a finished hand adds its deltas to the
        scores and to ``gain``, then ends the match or deals the next hand (as ``koikoi.match.Match``).
        Returns the tables whose match ended."""
        b, r = self._b, self.rules
        assert b is not None
        ended = np.zeros(self.num_envs, dtype=bool)
        while True:
            over = (b.phase == _OVER) & ~self._match_over
            if not over.any():
                return ended
            idx = np.flatnonzero(over)
            redeal = b.reason[idx] == _REDEAL
            if redeal.any():
                again = idx[redeal]
                self._deal(again, b.dealer[again], b.month[again])
            f = idx[~redeal]
            if not len(f):
                continue
            deltas = b.seat_deltas[:, f].T
            self._scores[f] += deltas
            gain[f] += deltas
            self._hands_done[f] += 1
            s = self._scores[f]
            end = np.zeros(len(f), dtype=bool)
            if r.transfer:
                end |= s.min(axis=1) <= 0
            if r.target_score:
                end |= s.max(axis=1) >= r.target_score
            if r.hands:
                end |= self._hands_done[f] >= r.hands
            self._match_over[f[end]] = True
            ended[f[end]] = True
            go = f[~end]
            if not len(go):
                continue
            dealer, winner = b.dealer[go], b.winner[go]
            if r.first_player == "alternate":
                nxt = 1 - dealer
            else:
                to = winner if r.first_player == "winner" else 1 - winner
                # A hand nobody won keeps the dealer, or passes the deal under exhausted_dealer = pass.
                nobody = dealer if r.exhausted_dealer == "keep" else 1 - dealer
                nxt = np.where(winner < 0, nobody, np.where(b.keep_dealer[go], dealer, to))
            self._deal(go, nxt, self._hands_done[go] % 12 + 1)

    def _play_opponent(self, gain: np.ndarray) -> np.ndarray:
        """The opponent's moves at every table until the learner is to move or the match is over."""
        b = self._b
        assert b is not None
        ended = np.zeros(self.num_envs, dtype=bool)
        while True:
            rows = ~self._match_over & (b.current_player != self._seat)
            if not rows.any():
                return ended
            if self.opponent == "easy":
                a = self._easy_actions(rows)
            else:
                a = b.random_actions(self._rng.random(self.num_envs))
            if self.record:
                for i in np.flatnonzero(rows):
                    self._logs[i]["actions"].append(int(a[i]))
            b.apply(a, rows)
            if self.opponent == "easy":
                # The easy player always stops at a decision: it stops right after the play that offered
                # it, in the same pass, rather than in one more pass (of a dozen array operations and a
                # deal) over the opponent's tables.
                dec = np.flatnonzero(rows & (b.phase == _DECISION))
                if len(dec):
                    if self.record:
                        for i in dec:
                            self._logs[i]["actions"].append(STOP)
                    b.decisions[dec] += 1
                    b.decide(dec, np.full(len(dec), STOP))
            ended |= self._finish_hands(gain)

    # -- the easy opponent ------------------------------------------------------------------------------

    def _easy_actions(self, rows: np.ndarray) -> np.ndarray:
        """:class:`koikoi.ai.heuristic.EasyAgent`'s choice at every table where ``rows`` holds: the greatest
        greedy value (``koikoi.players.GreedyPlayer.value`` / 25; a dealt hand bonus is worth its points;
        at a decision it always stops), ties broken at random."""
        b = self._b
        assert b is not None
        idx = np.flatnonzero(rows)
        out = np.full(self.num_envs, -1, dtype=np.int64)
        phase = b.phase[idx]
        deciding = phase == _DECISION
        out[idx[deciding]] = STOP  # the easy player never risks a koi-koi
        if deciding.all():
            return out
        idx, phase = idx[~deciding], phase[~deciding]
        k = len(idx)
        p1 = b.current_player[idx] == 1
        hands, piles, pts = b.seat_hands[:, idx], b.seat_piles[:, idx], b.seat_points[:, idx]
        hand = np.where(p1, hands[1], hands[0])
        own, opp = np.where(p1, piles[1], piles[0]), np.where(p1, piles[0], piles[1])
        now, opp_now = np.where(p1, pts[1], pts[0]), np.where(p1, pts[0], pts[1])
        table, month = b.table[idx], b.month[idx]
        zero = u64(0)
        play, dc = phase == _PLAY, phase == _DRAW_CHOICE
        # The candidates as flat lists (table, card, cards taken, action): every card of the hand with
        # its first (or only) capture, then the second capture of the cards whose month lies twice on
        # the table, then a draw choice's two captures. A hand holds 4.5 cards on average, so these are
        # about a third of the (tables, 16) slots that a dense layout computes.
        two = two_card_months(table)
        r, col = np.nonzero(bits_of(np.where(play, hand, zero)[:, None])[:, 0])
        matches = table[r] & MONTH_OF[col]
        first = matches & (~matches + ONE)
        choice = (BIT[col] & two[r]) != zero
        s = np.flatnonzero(choice)
        second = matches[s] ^ first[s]
        rows_, cards, took = [r, r[s]], [col, col[s]], [np.where(choice, first, matches), second]
        actions = [
            np.where(choice, PLAY_TAKE_BASE + 4 * col + (low_index(first) & 3), col),
            PLAY_TAKE_BASE + 4 * col[s] + (low_index(second) & 3),
        ]
        di = np.flatnonzero(dc)
        if len(di):
            d = b.pending[idx[di]]
            matches = table[di] & MONTH_OF[d]
            first = matches & (~matches + ONE)
            for t in (first, matches ^ first):
                rows_.append(di)
                cards.append(d)
                took.append(t)
                actions.append(DRAW_TAKE_BASE + low_index(t))
        r, c, tk, act = (np.concatenate(x) for x in (rows_, cards, took, actions))
        # The greedy values, all candidates at once.
        cbit = BIT[c]
        gained = tk | cbit
        m = c >> 2
        value = _MONTH_VALUE[16 * m + ((gained >> (4 * m).astype(np.uint64)) & u64(15)).astype(np.int64)]
        ci = np.flatnonzero(tk)
        if len(ci):
            ri, g = r[ci], gained[ci]
            score = b.scorer
            mine = score(own[ri] | g, month[ri]) - now[ri]
            theirs = score(opp[ri] | g, month[ri]) - opp_now[ri]
            value[ci] = value[ci] + YAKU_WEIGHT * mine + DENIAL_WEIGHT * theirs
        # Left on the table (nothing to take): its worth to whoever takes it next is lost.
        unseen = FULL & ~(hand | table | own | opp)
        mm = MONTH_OF[c]
        n_unseen = popcount(unseen[r] & mm)
        n_mine = popcount(hand[r] & mm & ~cbit)
        cv = _CARD_VALUE[c]
        cost = np.where((n_unseen == 0) & (n_mine == 0), cv * 0.1, np.where(n_mine > 0, cv * 0.5, cv))
        value = np.where(tk == zero, -cost, value) / YAKU_WEIGHT
        if self.rules.hand_bonus_declared:
            # DECLARE is worth the hand bonus's points (EasyAgent's value), where it is legal.
            dr = np.flatnonzero(b.legal_mask()[idx, DECLARE])
            r = np.concatenate([r, dr])
            act = np.concatenate([act, np.full(len(dr), DECLARE)])
            value = np.concatenate([value, np.full(len(dr), float(self.rules.hand_bonus))])
        # The best of each table's candidates, ties broken by a random key: the greatest key among the
        # best (every table has a candidate: a card to play or a capture to choose).
        best = np.full(k, -np.inf)
        np.maximum.at(best, r, value)
        key = np.where(value == best[r], self._rng.random(len(r)), -1.0)
        top = np.full(k, -2.0)
        np.maximum.at(top, r, key)
        pick = np.flatnonzero(key == top[r])
        out[idx[r[pick]]] = act[pick]
        return out

    # -- observations ---------------------------------------------------------------------------------

    def _observe(self) -> dict[str, np.ndarray]:
        b = self._b
        assert b is not None
        self._legal = b.legal_mask()
        return {"observation": self._encode(None, self._viewer()), "action_mask": self._legal.view(np.int8)}

    def action_masks(self) -> np.ndarray:
        """The legal actions of the last observation, as booleans ``(num_envs, 291)``."""
        return self._legal.copy()

    def _encode(self, rows: np.ndarray | None, v: np.ndarray) -> np.ndarray:
        """``koikoi.env.encode`` of player ``v``'s observation at each table of ``rows`` (None: all)."""
        b = self._b
        assert b is not None
        s = SLICES

        def take(a: np.ndarray) -> np.ndarray:
            return a if rows is None else a[..., rows]

        hands, piles, pts, calls = take(b.seat_hands), take(b.seat_piles), take(b.seat_points), take(b.seat_calls)
        v1 = v == 1
        hand, opp_hand = np.where(v1, hands[1], hands[0]), np.where(v1, hands[0], hands[1])
        own, opp = np.where(v1, piles[1], piles[0]), np.where(v1, piles[0], piles[1])
        table, pending = take(b.table), take(b.pending)
        drawn = np.where(pending >= 0, BIT[np.maximum(pending, 0)], u64(0))
        unseen = FULL & ~(hand | table | own | opp | drawn)
        k = len(hand)
        out = np.zeros((k, OBSERVATION_SIZE), dtype=np.float32)
        cards = bits_of(np.stack([hand, table, own, opp, drawn, unseen], axis=1))
        out[:, : 6 * NUM_CARDS] = cards.reshape(k, 6 * NUM_CARDS)
        ar = np.arange(k)
        out[ar, s["phase"].start + take(b.phase)] = 1
        out[ar, s["month"].start + take(b.month) - 1] = 1
        out[:, s["dealer"].start] = take(b.dealer) == v
        out[:, s["stock_count"].start] = (24 - take(b.stock_pos)) / 24
        out[:, s["opponent_hand_count"].start] = popcount(opp_hand) / 8
        c = np.minimum(np.stack([np.where(v1, calls[1], calls[0]), np.where(v1, calls[0], calls[1])], axis=1), 3)
        out[:, s["koikoi_calls"]] = c / 3
        y = np.stack([np.where(v1, pts[1], pts[0]), np.where(v1, pts[0], pts[1])], axis=1)
        out[:, s["yaku_points"]] = np.clip(y / 10, 0, 10)
        sc = take(self._scores.T)
        sc = np.stack([np.where(v1, sc[1], sc[0]), np.where(v1, sc[0], sc[1])], axis=1)
        out[:, s["scores"]] = np.clip(sc / 50, -100, 100)
        if self.rules.hands:
            out[:, s["progress"].start] = np.minimum(take(self._hands_done) / self.rules.hands, 1.0)
        return out

    # -- helpers --------------------------------------------------------------------------------------

    def sample_actions(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action for the player to move at each table (in the engine's
        ``legal_actions()`` order, ``legal[int(u * len(legal))]``)."""
        if self._b is None:
            raise RuntimeError("call reset() before sample_actions()")
        return self._b.random_actions(rng.random(self.num_envs))

    def match_log(self, row: int) -> dict[str, list[Any]]:
        """The record of the current match at table ``row`` (needs ``record=True``): ``decks`` (every
        deck dealt, redeals included, in order), ``draws`` (the dealer draws) and ``actions`` (both
        players'). Its lists grow while that match goes on; the next match gets a record of its own,
        so a record taken at a match's start stays that match's whole record."""
        if not self.record:
            raise RuntimeError("match_log needs KoiKoiVectorEnv(..., record=True)")
        return self._logs[row]

    def close_extras(self, **kwargs: Any) -> None:
        self._b = None
