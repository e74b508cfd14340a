"""``hard-v1``: the ``hard`` player as it was before issue 15, frozen, to measure later versions against.

A copy, not an import, of the search (:mod:`koikoi.ai.search`) and its playout policy
(:mod:`koikoi.ai.fastplay`) as they were, with the same defaults (``playouts=5500``,
``time_limit=0.9`` seconds of wall time, ``noise=1.5``, ``match_play="win"``, ``discard_factor=0.05``), so
that changes to ``hard`` cannot change it. ``tests/test_search.py`` checks that it still makes the
choices the old ``hard`` made (``tests/golden/hard-v1.json``). Do not edit it to improve it: improve
``hard`` and measure it against this one.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable

from ..actions import DECLARE, DRAW_TAKE_BASE, KOIKOI, PLAY_TAKE_BASE, STOP
from ..cards import MONTH_MASKS, NUM_CARDS, card_list
from ..hand import Hand, hand_bonus_of
from ..observation import Observation
from ..players import card_value
from ..yaku import GATE_BIAS, GATE_TABLES, GATE_TOPS
from .base import Agent, Choice, check_to_move, sort_choices

__all__ = ["HardV1Agent"]

_VAL = tuple(card_value(c) for c in range(NUM_CARDS))
_MONTH_OF = tuple(MONTH_MASKS[c >> 2] for c in range(NUM_CARDS))
# The worth of every set of cards within one month (a capture), keyed by its mask.
_SET_VAL: dict[int, float] = {}
for _m in range(12):
    for _sub in range(16):
        _mask = _sub << (4 * _m)
        _SET_VAL[_mask] = sum(_VAL[c] for c in card_list(_mask))
_DISCARD = tuple(-0.5 * v - 1.0 for v in _VAL)
_PLAY_TAKE_VAL = tuple(
    _VAL[(a - PLAY_TAKE_BASE) >> 2] + _VAL[(((a - PLAY_TAKE_BASE) >> 2) & ~3) | (a & 3)]
    for a in range(PLAY_TAKE_BASE, DRAW_TAKE_BASE)
)

# What playing card c is worth by the cards of its month on the table (their 4-bit nibble): a capture
# counts both cards' values, a discard costs. The same sums as in playout(), looked up by index.
_PLAY_VAL = tuple(
    tuple(_VAL[c] + _SET_VAL[nib << (c & ~3)] if nib else _DISCARD[c] for nib in range(16)) for c in range(NUM_CARDS)
)

# The most noise values one playout can read: at most 16 actions a turn (8 cards, each with two
# captures to choose from) over at most 16 turns.
NOISE_SPAN = 256


def noise_pool(rng: random.Random, scale: float, size: int = 4096) -> list[float]:
    """``size + NOISE_SPAN`` noise values in ``[0, scale)``: a playout starting at any offset below
    ``size`` stays inside it."""
    r = rng.random
    return [scale * r() for _ in range(size + NOISE_SPAN)]


MATCH_STYLES = ("win", "blend")
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


class HardV1Agent(Agent):
    """``hard`` as it was before issue 15 (frozen): sampled worlds, greedy playouts, common random
    numbers, successive halving.

    ``playouts`` is the budget of playouts per decision (spread over the choices), ``time_limit`` a cap
    in seconds per decision (None: none; then the choices depend only on the seed and the observation).
    ``noise`` is the randomness of the playout policy, ``match_play`` how points are valued in a match
    (see :func:`match_utility`), and ``discard_factor`` how much the opponent's discards say about their
    hand (1: nothing; see :class:`WorldSampler`).
    """

    name = "hard-v1"

    def __init__(
        self,
        seed: int | None = None,
        playouts: int = 5500,
        time_limit: float | None = 0.9,
        noise: float = 1.5,
        match_play: str = "win",
        discard_factor: float = 0.05,
    ) -> None:
        super().__init__(seed)
        if playouts < 1:
            raise ValueError(f"playouts must be at least 1, not {playouts!r}")
        self.playouts = playouts
        self.time_limit = time_limit
        self.noise = noise
        if match_play not in MATCH_STYLES:
            raise ValueError(f"unknown match_play {match_play!r}; choose from {', '.join(MATCH_STYLES)}")
        self.match_play = match_play
        if not 0.0 < discard_factor <= 1.0:
            raise ValueError(f"discard_factor must be in (0, 1], not {discard_factor!r}")
        self.discard_factor = discard_factor

    def rank(self, obs: Observation) -> list[Choice]:
        check_to_move(obs)
        legal = list(obs.legal_actions)
        if len(legal) == 1:
            return [Choice(legal[0], 0.0, "the only legal action")]
        deadline = None if self.time_limit is None else time.perf_counter() + self.time_limit
        rng = self.rng
        me = obs.player
        utility, _ = match_utility(obs, self.match_play)
        chance = match_win_chance(obs)
        transfer = obs.rule_set.transfer
        sample_world = WorldSampler(obs, rng, self.discard_factor).sample
        noise = noise_pool(rng, self.noise)
        span = len(noise) - NOISE_SPAN
        totals = {a: 0.0 for a in legal}
        points = {a: 0.0 for a in legal}  # the plain points of the hand, as the table shows them
        wins = {a: 0.0 for a in legal}
        counts = {a: 0 for a in legal}
        sure: dict[int, float] = {}
        if STOP in legal:  # stopping settles the hand at once: its value needs no sampling
            legal.remove(STOP)
        alive = legal[:]
        budget = self.playouts
        randbelow = rng.randrange
        # Successive halving: each round shares its worlds among the choices still alive, then keeps
        # the better half (always at least two, so the best has a rival to be measured against).
        while alive and budget > 0:
            if len(alive) > 2:
                share = max(1, budget // (2 * len(alive)))
            else:
                share = max(1, budget // len(alive))
            done = False
            for _ in range(share):
                world = sample_world()
                k = randbelow(span)
                for a in alive:
                    h = world.clone()
                    h.apply_action(a)
                    d = fast_playout(h, noise, k)
                    diff = d[me] - d[1 - me]
                    totals[a] += utility(diff) if utility else diff
                    points[a] += d[me] if transfer else diff
                    if chance is not None:
                        wins[a] += chance(diff)
                    counts[a] += 1
                budget -= len(alive)
                if deadline is not None and time.perf_counter() > deadline:
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
            d = _stop_deltas(obs)
            diff = d[me] - d[1 - me]
            sure[STOP] = utility(diff) if utility else float(diff)
            stop_points = float(d[me])
            stop_win = None if chance is None else chance(diff)
        out = []
        for a in obs.legal_actions:
            if a in sure:
                out.append(Choice(a, sure[a], "stop: the points now", stop_points, stop_win))
            elif counts[a]:
                n = counts[a]
                win = None if chance is None else wins[a] / n
                out.append(Choice(a, totals[a] / n, f"mean of {n} playouts", points[a] / n, win))
        # Choices cut early rank below the ones measured to the end; a stop is exact, so it is a finalist.
        depth = {a: counts[a] for a in counts if a not in sure}
        top = max(depth.values(), default=0)
        for a in sure:
            depth[a] = top
        return _rank_by_depth(out, depth, rng)


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


def fast_playout(h: Hand, noise: list[float], k: int = 0) -> tuple[int, int]:
    """Play ``h`` to its end by the greedy policy on plain integers; the score changes (frozen copy of
    :func:`koikoi.ai.fastplay.fast_playout` as it was before issue 15)."""
    play_val, month_of, pt_val_of, val = _PLAY_VAL, _MONTH_OF, _PLAY_TAKE_VAL, _VAL
    # A hand that does not start with a card to play (a capture choice, a koi-koi decision) takes its
    # first steps through the engine, exactly as playout() does.
    while h.phase_code != 0:
        if h.result is not None:
            return _deltas(h)
        legal = h.legal_actions()
        a0 = legal[0]
        if a0 >= KOIKOI or len(legal) == 1:
            h.apply_action(STOP if a0 >= KOIKOI else a0)
        else:
            a1 = legal[1]
            h.apply_action(a0 if val[a0 - DRAW_TAKE_BASE] >= val[a1 - DRAW_TAKE_BASE] else a1)
    if h.result is not None:
        return _deltas(h)
    hands, cards, table, two, piles, pos, p = h.export_state()
    stock = h.stock
    raised = h.raiser
    declarable = h.declarable
    month = h.month
    g0, g1, g2, g3 = GATE_TABLES
    bias, tops = GATE_BIAS, GATE_TOPS
    tsuki = h.tsukifuda_mask
    while True:
        hand = hands[p]
        if declarable[p] and hand.bit_count() == 8:
            h.restore_state(hands, table, piles, pos, p, cards)
            h.apply_action(DECLARE)
            return _deltas(h)
        # The choice of the card to play, in the order of the engine's legal actions: the plain plays
        # by card id, then the cards whose month lies twice on the table, two captures each.
        choice = hand & two
        take = -1
        if not choice:
            mine = cards[p]
            if len(mine) == 1:
                c = mine[0]  # one card left: nothing to choose
            else:
                best_v = -1e9
                for a in mine:
                    v = play_val[a][table >> (a & 60) & 15] + noise[k]
                    k += 1
                    if v > best_v:
                        c, best_v = a, v
        else:
            best_v = -1e9
            c = -1
            for a in cards[p]:
                if not choice >> a & 1:
                    v = play_val[a][table >> (a & 60) & 15] + noise[k]
                    k += 1
                    if v > best_v:
                        c, best_v = a, v
            rest = choice
            while rest:
                low = rest & -rest
                rest ^= low
                a = low.bit_length() - 1
                m = table & month_of[a]
                first = m & -m
                base = 4 * a
                for t in (first.bit_length() - 1, (m ^ first).bit_length() - 1):
                    v = pt_val_of[base + (t & 3)] + noise[k]
                    k += 1
                    if v > best_v:
                        c, take, best_v = a, t, v
        cbit = 1 << c
        hands[p] = hand ^ cbit
        cards[p].remove(c)
        pile = before = piles[p]
        captured = False
        if take >= 0:
            table ^= 1 << take
            pile |= cbit | (1 << take)
            captured = True
        else:
            m = table & month_of[c]
            if m:
                table ^= m
                pile |= m | cbit
                captured = True
            else:
                table |= cbit
        # The draw step.
        d = stock[pos]
        pos += 1
        dbit = 1 << d
        m = table & month_of[d]
        if m:
            first = m & -m
            second = m ^ first
            if second and not second & (second - 1):  # two table cards: take the better
                t0, t1 = first.bit_length() - 1, second.bit_length() - 1
                m = first if val[t0] >= val[t1] else second
            table ^= m
            pile |= m | dbit
            captured = True
        else:
            table |= dbit
        two &= ~(month_of[c] | month_of[d])
        piles[p] = pile
        # A pile that the score gate (koikoi.yaku.may_score) passes over scores nothing, so it raises nothing.
        if (
            captured
            and (
                (g0[pile & 4095] + g1[pile >> 12 & 4095] + g2[pile >> 24 & 4095] + g3[pile >> 36] + bias) & tops
                or (tsuki and pile & tsuki == tsuki)
            )
            and raised(before, pile, month)
        ):
            h.restore_state(hands, table, piles, pos, p)
            return h.settle_stop(p, "stop").deltas
        if not (hands[0] or hands[1]):
            h.restore_state(hands, table, piles, pos, p)
            return h.settle_exhausted().deltas
        p = 1 - p


def _deltas(h: Hand) -> tuple[int, int]:
    """The score changes of a hand the engine has settled."""
    result = h.result
    assert result is not None
    return result.deltas
