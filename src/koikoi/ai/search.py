"""The ``hard`` agent: determinization search (Perfect-Information Monte Carlo).

It cannot see the opponent's hand or the stock, so it samples them: the unseen cards of its
observation are shuffled into an opponent hand and a stock order, :meth:`Hand.from_observation`
builds that world, and every legal choice is played out to the end of the hand in it by a fast
greedy policy with some noise. By default the worlds of a round are played all at once on NumPy
arrays (:mod:`koikoi.ai.batchplay`), about seven times as many playouts a second as one world at a
time in plain Python (:mod:`koikoi.ai.fastplay`). All choices
share the same worlds and the same playout noise (common random numbers), and successive halving
spends the later samples on the choices still close to the best.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Self

from ..actions import STOP
from ..cards import NUM_CARDS, card_list
from ..hand import Hand, hand_bonus_of
from ..observation import Observation
from .base import Agent, Choice, check_to_move, sort_choices
from .fastplay import NOISE_SPAN, fast_playout, noise_pool

# The most playouts one batched call plays (rows of koikoi.batch.BatchHands): large enough that the array
# operations' fixed cost is spread thin, small enough to keep the arrays in the processor's caches.
_ROWS = 4096

__all__ = [
    "HardAgent",
    "ExpertAgent",
    "SearchSettings",
    "HARD_SETTINGS",
    "EXPERT_SETTINGS",
    "match_utility",
    "match_win_chance",
    "WorldSampler",
    "discard_evidence",
    "standard_error",
]

MATCH_STYLES = ("win", "blend")
# The time cap's clock: this process's CPU time (tests replace it with a fake machine's clock).
cpu_clock = time.process_time
# The spread of one hand's point difference between fair players (nintendo rules: about 9).
HAND_SPREAD = 9.0


def match_utility(obs: Observation, style: str = "win") -> tuple[Callable[[int], float] | None, float]:
    """How the agent values a hand's score change ``diff`` (its points minus the opponent's).

    ``style="win"``: in a match of a fixed number of hands, by the chance that the final score wins,
    with the hands still to come as normal noise of :data:`HAND_SPREAD` points each; scaled so that a
    point is worth one point in an even match, a point matters less when the match is far from even,
    and a little of the plain points is kept so that a decided match still plays for points.
    ``style="blend"``: plain points, blended in the last three hands with the match result.
    Returns ``(utility, weight)``; ``utility`` is None when plain points are the aim.
    """
    rules = obs.rule_set
    me = obs.player
    lead = obs.scores[me] - obs.scores[1 - me]
    if not rules.hands or rules.target_score or rules.transfer:
        return None, 0.0
    left = rules.hands - obs.hand_number  # hands after this one
    if style == "blend":
        weight = {0: 0.8, 1: 0.4, 2: 0.15}.get(left, 0.0)
        if not weight:
            return None, 0.0

        def blended(diff: int) -> float:
            final = lead + diff
            won = 10.0 if final > 0 else (-10.0 if final < 0 else 0.0)
            return (1.0 - weight) * diff + weight * won

        return blended, weight
    if style != "win":
        raise ValueError(f"unknown match style {style!r}; choose win or blend")
    spread = max(HAND_SPREAD * math.sqrt(left), 2.0)
    scale = spread * math.sqrt(2.0 * math.pi) * 0.5  # makes d(utility)/d(diff) = 1 at an even score
    plain = 0.1
    cache: dict[int, float] = {}
    width = spread * math.sqrt(2.0)
    now = scale * math.erf(lead / width)

    def win_chance(diff: int) -> float:
        got = cache.get(diff)
        if got is None:
            got = cache[diff] = (1.0 - plain) * (scale * math.erf((lead + diff) / width) - now) + plain * diff
        return got

    return win_chance, 1.0


def match_win_chance(obs: Observation) -> Callable[[int], float] | None:
    """The chance of winning the match as a function of this hand's ``diff`` (the player's points
    minus the opponent's), under the same model as :func:`match_utility` "win": the hands still to
    come add normal noise of :data:`HAND_SPREAD` points each; a tie counts as half. None where the
    match is not a fixed number of hands (a target score or transfers: the model does not apply).
    """
    rules = obs.rule_set
    if not rules.hands or rules.target_score or rules.transfer:
        return None
    me = obs.player
    lead = obs.scores[me] - obs.scores[1 - me]
    left = rules.hands - obs.hand_number
    cache: dict[int, float] = {}
    width = HAND_SPREAD * math.sqrt(2.0 * left)

    def chance(diff: int) -> float:
        got = cache.get(diff)
        if got is None:
            final = lead + diff
            if left <= 0:  # the last hand: the final score is known
                got = 1.0 if final > 0 else (0.0 if final < 0 else 0.5)
            else:
                got = 0.5 * (1.0 + math.erf(final / width))
            cache[diff] = got
        return got

    return chance


# The default budgets: hard's costs about hard-v1's CPU time a decision; expert's is five times it.
HARD_PLAYOUTS = 60000
EXPERT_PLAYOUTS = 5 * HARD_PLAYOUTS


@dataclass(frozen=True, slots=True)
class SearchSettings:
    """How the ``hard`` search plays: the settings of :class:`HardAgent` (and ``expert``), checked once.

    ``playouts`` is the budget of playouts per decision (spread over the choices): it alone decides, so
    the same seed and observation give the same choice on any machine. ``time_limit`` is a safety net,
    in seconds of this process's CPU time per decision (None: none): about ten times what a decision
    takes on average at the defaults on the reference machine (and still above the longest of 40 on a
    machine three times slower), it stops a search that runs far longer than it should (a much slower
    machine, a huge budget) and then the choice depends on the speed. CPU time, not wall time, so that
    a busy machine does not make it fire. ``noise`` is the randomness of the playout policy,
    ``match_play`` how points are valued in a match (see :func:`match_utility`), and ``discard_factor``
    how much the opponent's discards say about their hand (1: nothing; see :class:`WorldSampler`).
    ``batched`` (the default) plays each round's worlds together (:mod:`koikoi.ai.batchplay`); False
    plays them one at a time (:mod:`koikoi.ai.fastplay`), as ``hard-v1`` does and ``medium``'s koi-koi
    search does.

    >>> SearchSettings(playouts=0)
    Traceback (most recent call last):
    ...
    ValueError: playouts must be at least 1, not 0
    """

    playouts: int = HARD_PLAYOUTS
    time_limit: float | None = 3.0
    noise: float = 1.5
    match_play: str = "win"
    discard_factor: float = 0.05
    batched: bool = True

    def __post_init__(self) -> None:
        if self.playouts < 1:
            raise ValueError(f"playouts must be at least 1, not {self.playouts!r}")
        if self.match_play not in MATCH_STYLES:
            raise ValueError(f"unknown match_play {self.match_play!r}; choose from {', '.join(MATCH_STYLES)}")
        if not 0.0 < self.discard_factor <= 1.0:
            raise ValueError(f"discard_factor must be in (0, 1], not {self.discard_factor!r}")


HARD_SETTINGS = SearchSettings()
EXPERT_SETTINGS = SearchSettings(playouts=EXPERT_PLAYOUTS, time_limit=6.0)


class HardAgent(Agent):
    """Determinization search: sampled worlds, greedy playouts, common random numbers, successive halving.

    It plays by its :attr:`settings` (:class:`SearchSettings`): the class's defaults
    (:data:`HARD_SETTINGS`) with the keyword options changed (``playouts``, ``time_limit``, ``noise``,
    ``match_play``, ``discard_factor``, ``batched``: the fields of the same names; ``batched=None`` is
    the default, True), or whole settings by :meth:`from_settings`. :attr:`capped` counts the decisions
    the time cap cut short. The default budget, 60,000 playouts
    (about eleven times hard-v1's 5,500), costs about as much CPU time batched as hard-v1's does one at
    a time.
    """

    name = "hard"
    defaults: ClassVar[SearchSettings] = HARD_SETTINGS

    def __init__(
        self,
        seed: int | None = None,
        playouts: int = HARD_SETTINGS.playouts,
        time_limit: float | None = HARD_SETTINGS.time_limit,
        noise: float = HARD_SETTINGS.noise,
        match_play: str = HARD_SETTINGS.match_play,
        discard_factor: float = HARD_SETTINGS.discard_factor,
        batched: bool | None = None,
    ) -> None:
        changed = _changed(
            type(self).defaults,
            playouts=playouts,
            time_limit=time_limit,
            noise=noise,
            match_play=match_play,
            discard_factor=discard_factor,
            batched=True if batched is None else batched,
        )
        self._start(seed, replace(type(self).defaults, **changed) if changed else type(self).defaults)

    @classmethod
    def from_settings(cls, settings: SearchSettings, seed: int | None = None) -> Self:
        """The agent playing by ``settings``.

        >>> HardAgent.from_settings(SearchSettings(playouts=500, time_limit=None), seed=1).playouts
        500
        """
        agent = cls.__new__(cls)
        agent._start(seed, settings)
        return agent

    def _start(self, seed: int | None, settings: SearchSettings) -> None:
        Agent.__init__(self, seed)
        self.settings = settings
        self.decisions = 0  # decisions searched (more than one legal action)
        self.capped = 0  # of which the time cap cut short
        self.played = 0  # playouts run, over all decisions

    # The settings, read as the agent's own attributes (as the review and the arena read them).
    @property
    def playouts(self) -> int:
        return self.settings.playouts

    @property
    def time_limit(self) -> float | None:
        return self.settings.time_limit

    @property
    def noise(self) -> float:
        return self.settings.noise

    @property
    def match_play(self) -> str:
        return self.settings.match_play

    @property
    def discard_factor(self) -> float:
        return self.settings.discard_factor

    @property
    def batched(self) -> bool:
        return self.settings.batched

    def rank(self, obs: Observation) -> list[Choice]:
        check_to_move(obs)
        legal = list(obs.legal_actions)
        if len(legal) == 1:
            return [Choice(legal[0], 0.0, "the only legal action")]
        self.decisions += 1
        clock = cpu_clock
        settings = self.settings
        deadline = None if settings.time_limit is None else clock() + settings.time_limit
        rng = self.rng
        me = obs.player
        utility, _ = match_utility(obs, settings.match_play)
        chance = match_win_chance(obs)
        transfer = obs.rule_set.transfer
        sample_world = WorldSampler(obs, rng, settings.discard_factor).sample
        noise = noise_pool(rng, settings.noise)
        span = len(noise) - NOISE_SPAN
        totals = {a: 0.0 for a in legal}
        points = {a: 0.0 for a in legal}  # the plain points of the hand, as the table shows them
        squares = {a: 0.0 for a in legal}  # and their squares, for the standard error of the mean
        wins = {a: 0.0 for a in legal}
        counts = {a: 0 for a in legal}
        sure: dict[int, float] = {}
        if STOP in legal:  # stopping settles the hand at once: its value needs no sampling
            legal.remove(STOP)
        alive = legal[:]
        budget = settings.playouts
        randbelow = rng.randrange
        batched = settings.batched
        if batched:
            # NumPy only where a batched search runs: a program playing other levels does not load it.
            import numpy as _np

            from .batchplay import play_worlds, sample_hidden

            ws = WorldSampler(obs, rng, settings.discard_factor)
            gen = _np.random.default_rng(rng.getrandbits(64))
            exponents = ws.exponents if ws.weighted else None
        # Successive halving: each round shares its worlds among the choices still alive, then keeps
        # the better half (always at least two, so the best has a rival to be measured against).
        while alive and budget > 0:
            if len(alive) > 2:
                share = max(1, budget // (2 * len(alive)))
            else:
                share = max(1, budget // len(alive))
            done = False
            if batched:
                # Whole rounds of worlds at once, in slices of at most _ROWS rows (playouts).
                left = share
                while left > 0:
                    w = max(1, min(left, _ROWS // len(alive)))
                    left -= w
                    held, stocks = sample_hidden(gen, ws.unseen, ws.n_opp, exponents, w)
                    noise_w = gen.random((w, NUM_CARDS)) * settings.noise
                    d = play_worlds(ws.template, ws.other, held, stocks, alive, noise_w)
                    mine = d[:, :, me]
                    diffs = mine - d[:, :, 1 - me]
                    # Each choice's sums over the few distinct score differences, in plain Python in a
                    # fixed order: the same floats, so the same ranking, on any machine.
                    values, where = _np.unique(diffs, return_inverse=True)
                    where = where.reshape(diffs.shape)
                    diff_list = [int(v) for v in values]
                    util = [utility(v) for v in diff_list] if utility else diff_list
                    win = [chance(v) for v in diff_list] if chance is not None else None
                    pts = mine.sum(axis=1).tolist() if transfer else None
                    sqs = (mine.astype(_np.float64) ** 2).sum(axis=1).tolist() if transfer else None
                    for i, a in enumerate(alive):
                        seen = _np.bincount(where[i], minlength=len(diff_list)).tolist()
                        totals[a] += sum(c * u for c, u in zip(seen, util))
                        points[a] += pts[i] if pts is not None else sum(c * v for c, v in zip(seen, diff_list))
                        squares[a] += sqs[i] if sqs is not None else sum(c * v * v for c, v in zip(seen, diff_list))
                        if win is not None:
                            wins[a] += sum(c * u for c, u in zip(seen, win))
                        counts[a] += w
                    budget -= w * len(alive)
                    self.played += w * len(alive)
                    if deadline is not None and clock() > deadline:
                        self.capped += 1
                        done = True
                        break
                share = 0
            for _ in range(share):
                world = sample_world()
                k = randbelow(span)
                for a in alive:
                    h = world.clone()
                    h.apply_action(a)
                    dh = fast_playout(h, noise, k, deltas_only=True)
                    diff = dh[me] - dh[1 - me]
                    totals[a] += utility(diff) if utility else diff
                    got = dh[me] if transfer else diff
                    points[a] += got
                    squares[a] += got * got
                    if chance is not None:
                        wins[a] += chance(diff)
                    counts[a] += 1
                budget -= len(alive)
                self.played += len(alive)
                if deadline is not None and clock() > deadline:
                    self.capped += 1
                    done = True
                    break
            if done or len(alive) <= 2 and budget <= 0:
                break
            if len(alive) > 2:
                alive.sort(key=lambda a: -totals[a] / counts[a])
                alive = alive[: max(2, len(alive) // 2)]
        stop_points = 0.0
        stop_win = None
        if STOP in obs.legal_actions:
            ds = _stop_deltas(obs)
            diff = ds[me] - ds[1 - me]
            sure[STOP] = utility(diff) if utility else float(diff)
            stop_points = float(ds[me])
            stop_win = None if chance is None else chance(diff)
        out = []
        for a in obs.legal_actions:
            if a in sure:
                out.append(Choice(a, sure[a], "stop: the points now", stop_points, stop_win, 0.0))
            elif counts[a]:
                n = counts[a]
                win_rate = None if chance is None else wins[a] / n
                out.append(
                    Choice(
                        a,
                        totals[a] / n,
                        f"mean of {n} playouts",
                        points[a] / n,
                        win_rate,
                        standard_error(points[a], squares[a], n),
                    )
                )
        # Choices cut early rank below the ones measured to the end; a stop is exact, so it is a finalist.
        depth = {a: counts[a] for a in counts if a not in sure}
        top = max(depth.values(), default=0)
        for a in sure:
            depth[a] = top
        return _rank_by_depth(out, depth, rng)


class ExpertAgent(HardAgent):
    """``expert``: the hard search with five times its budget (300,000 playouts), for players who want
    the strongest opponent and for analysis (the game review ranks every move with it). Its 6 s cap is
    a safety net like hard's (docs/ai.md gives its times), so expert's moves repeat like hard's."""

    name = "expert"
    defaults: ClassVar[SearchSettings] = EXPERT_SETTINGS

    def __init__(
        self,
        seed: int | None = None,
        playouts: int = EXPERT_SETTINGS.playouts,
        time_limit: float | None = EXPERT_SETTINGS.time_limit,
        noise: float = EXPERT_SETTINGS.noise,
        match_play: str = EXPERT_SETTINGS.match_play,
        discard_factor: float = EXPERT_SETTINGS.discard_factor,
    ) -> None:
        super().__init__(seed, playouts, time_limit, noise, match_play, discard_factor)


def _changed(defaults: SearchSettings, **options: Any) -> dict[str, Any]:
    """The ``options`` whose values differ from the ``defaults``: the settings an agent changes (so that
    an agent at its defaults shares the one checked :class:`SearchSettings` of its class)."""
    return {k: v for k, v in options.items() if v != getattr(defaults, k)}


def standard_error(total: float, squares: float, n: int) -> float | None:
    """The standard error of the mean of ``n`` samples from their sum and the sum of their squares: the
    samples' standard deviation (with Bessel's correction) over the square root of ``n``; None for fewer
    than two samples, whose spread is unknown.

    >>> standard_error(1.0 + 3.0, 1.0 + 9.0, 2)  # samples 1 and 3: deviation 1.414, over sqrt(2)
    1.0
    """
    if n < 2:
        return None
    var = max(0.0, (squares - total * total / n) / (n - 1))
    return math.sqrt(var / n)


def _stop_deltas(obs: Observation) -> tuple[int, int]:
    """The score changes if the player to move stops now (no hidden card matters once the hand ends)."""
    me = obs.player
    points = obs.yaku_scores[me] * obs.multipliers[me]
    d = [0, 0]
    d[me] = points
    if obs.rule_set.transfer:
        d[1 - me] = -points
    return d[0], d[1]


def _rank_by_depth(out: list[Choice], depth: dict[int, int], rng: random.Random) -> list[Choice]:
    # The finalists (most samples) first, by value; then the choices dropped in earlier rounds.
    order = sorted(set(depth.values()), reverse=True)
    ranked: list[Choice] = []
    for n in order:
        ranked += sort_choices([c for c in out if depth[c.action] == n], rng)
    return ranked


def discard_evidence(obs: Observation) -> dict[int, int]:
    """For each month, how many times this hand the opponent discarded (played a card that took
    nothing) while a card of that month lay on the table: a player rarely passes up a capture, so
    the opponent probably holds no card of such a month. Only public events are read.

    The table before each event is found by undoing the events from the table now, newest first.
    """
    opponent = 1 - obs.player
    table = obs.table_mask
    seen: dict[int, int] = {}
    for p, kind, card, captured in reversed(obs.events):
        if kind not in ("play", "draw"):
            continue
        if captured:
            table |= captured & ~(1 << card)
        else:
            table &= ~(1 << card)
        if p == opponent and kind == "play" and not captured:
            for m in range(12):
                if table >> (4 * m) & 15:
                    seen[m] = seen.get(m, 0) + 1
    return seen


class WorldSampler:
    """Builds the worlds a player cannot tell apart from the real one: :meth:`Hand.from_observation`
    done once, then only the hidden part replaced for each world.

    :meth:`sample` deals the unseen cards at random into the opponent's hand and the stock. With
    ``discard_factor`` below 1, a card's weight for the opponent's hand is multiplied by it for each
    time they discarded while its month lay on the table (:func:`discard_evidence`); the stock order
    is uniform either way.
    """

    def __init__(self, obs: Observation, rng: random.Random, discard_factor: float = 1.0) -> None:
        self.unseen = card_list(obs.unseen_mask)
        self.n_opp = n = obs.opponent_hand_count
        self.template = Hand.from_observation(obs, sum(1 << c for c in self.unseen[:n]), self.unseen[n:])
        self.other = 1 - obs.player
        self.rules = self.template.rules
        self.rng = rng
        evidence = discard_evidence(obs) if discard_factor < 1.0 else {}
        # Weighted sampling without replacement (Efraimidis and Spirakis): the n largest keys
        # random() ** (1 / weight) pick the hand.
        self.exponents = [1.0 / discard_factor ** evidence.get(c >> 2, 0) for c in self.unseen]
        self.weighted = any(e != 1.0 for e in self.exponents)

    def sample(self) -> Hand:
        rng = self.rng
        order = self.unseen
        n = self.n_opp
        if self.weighted and 0 < n < len(order):
            r = rng.random
            keyed = sorted(zip([r() ** e for e in self.exponents], order), reverse=True)
            held = [c for _, c in keyed[:n]]
            stock = [c for _, c in keyed[n:]]
            rng.shuffle(stock)
            return self.build(held + stock)
        rng.shuffle(order)
        return self.build(order)

    def build(self, order: list[int]) -> Hand:
        """The world where the first cards of ``order`` (a reordering of the unseen cards) are the
        opponent's hand and the rest the stock, top first."""
        h = self.template.clone()
        n = self.n_opp
        held = order[:n]
        held.sort()
        mask = 0
        for c in held:
            mask |= 1 << c
        other = self.other
        h.set_hand(other, mask, held)
        h.stock = tuple(order[n:])
        if self.rules.hand_bonus_declared:
            h.declarable[other] = hand_bonus_of(mask, self.rules) is not None
        return h
