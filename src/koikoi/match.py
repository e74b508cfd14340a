"""A match: hands in a row under one rule set, with scores, dealer rotation and the end (docs/rules.md section 5).

Chance (the shuffles and the first dealer's draw) comes from a :class:`Chance` object: a seeded
generator for new games, or the recorded outcomes when a record is replayed. So a seed (or the
recorded deals) plus the actions reproduce a match exactly.

>>> from koikoi.rules import preset
>>> m = Match(preset("cardavia"), seed=7)
>>> while not m.is_over():
...     m.apply_action(m.legal_actions()[0])
>>> len(m.results), m.is_over()
(1, True)
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .actions import NUM_ACTIONS
from .cards import NUM_CARDS
from .hand import Hand, HandResult, IllegalActionError, Phase, dealt_hand
from .rules import RULES_VERSION, RULES_VERSIONS, RuleSet

__all__ = ["Match", "Chance", "SeededChance", "ScriptedChance", "MatchOutcome", "HandRecord"]

# Set by koikoi.observation when it is imported (set_observer): observe(match, player) -> Observation.
_observer: Callable[[Match, int], Any] | None = None


def set_observer(observe: Callable[[Match, int], Any]) -> None:
    """Register how :meth:`Match.observation` builds a player's view. The observation layer sits above
    this module and calls this when it is imported, so nothing here imports upwards."""
    global _observer
    _observer = observe


# n.bit_length() for every number of legal actions (fewer than NUM_ACTIONS are ever legal at once).
_BIT_LENGTH = tuple(n.bit_length() for n in range(NUM_ACTIONS + 1))


class Chance:
    """Where a match's randomness comes from."""

    def deck(self) -> list[int]:
        """A shuffled deck: 48 card ids, the top card first."""
        raise NotImplementedError

    def draw_card(self) -> int:
        """One card drawn from a freshly shuffled deck (for choosing the first dealer)."""
        raise NotImplementedError

    def clone(self) -> Chance:
        """An independent copy that will give the same outcomes from here on."""
        return copy.deepcopy(self)


class SeededChance(Chance):
    """Outcomes from ``random.Random(seed)``: the same seed gives the same outcomes."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def deck(self) -> list[int]:
        rng = self.rng
        if _FAST_SHUFFLE and type(rng) is random.Random:
            return _shuffled_deck(rng.getrandbits)
        d = list(range(NUM_CARDS))
        rng.shuffle(d)
        return d

    def draw_card(self) -> int:
        return self.rng.randrange(NUM_CARDS)

    def clone(self) -> SeededChance:
        twin = SeededChance.__new__(SeededChance)
        twin.rng = random.Random()
        twin.rng.setstate(self.rng.getstate())
        return twin


# Records replay a seed's deals, so SeededChance.deck() must give exactly what
# ``random.Random.shuffle`` gives, and leave the generator exactly where it leaves it. That shuffle
# swaps ``x[i]`` with ``x[j]`` for i = 47 down to 1, drawing j with ``_randbelow(i + 1)``: ``getrandbits(k)``,
# k the bit length of i + 1, again until it is at most i. The same draws made here directly, without
# the two Python-level calls per card, give the same deck in half the time.
_SHUFFLE_STEPS = tuple((i, (i + 1).bit_length()) for i in range(NUM_CARDS - 1, 0, -1))


def _written_out_shuffle() -> Callable[[Callable[[int], int]], list[int]]:
    """The shuffle's 47 steps written out one after another, each with its own i and k as constants, and
    compiled once (as dataclasses compiles the methods it writes): a loop over ``_SHUFFLE_STEPS`` would
    unpack and store the pair at every step, a sixth of a deck's time, and every match hand deals one."""
    lines = ["def _shuffled_deck(getrandbits):", f"    d = list(range({NUM_CARDS}))"]
    for i, k in _SHUFFLE_STEPS:
        lines += [
            f"    j = getrandbits({k})",
            f"    while j > {i}:",
            f"        j = getrandbits({k})",
            f"    d[{i}], d[j] = d[j], d[{i}]",
        ]
    lines.append("    return d")
    scope: dict[str, Any] = {}
    exec(compile("\n".join(lines), "<koikoi.match: the shuffle written out>", "exec"), scope)
    fn: Callable[[Callable[[int], int]], list[int]] = scope["_shuffled_deck"]
    fn.__doc__ = "``list(range(48))`` shuffled as ``random.Random.shuffle`` shuffles it, from ``getrandbits``."
    return fn


_shuffled_deck = _written_out_shuffle()


def _same_as_shuffle() -> bool:
    # The equivalence above rests on how this Python implements shuffle; should another one do it
    # differently, SeededChance keeps calling shuffle itself.
    for seed in (0, 1, 2, 3, 12345, 2**63 - 1):
        a, b = random.Random(seed), random.Random(seed)
        d = list(range(NUM_CARDS))
        a.shuffle(d)
        if _shuffled_deck(b.getrandbits) != d or b.getstate() != a.getstate():
            return False
    return True


_FAST_SHUFFLE = _same_as_shuffle()


class ScriptedChance(Chance):
    """Outcomes read back from a record, in order."""

    def __init__(self, decks: Sequence[Sequence[int]], draws: Sequence[int] = ()) -> None:
        self._decks = [list(d) for d in decks]
        self._draws = list(draws)

    def deck(self) -> list[int]:
        if not self._decks:
            raise ValueError("the record holds no further deal")
        return self._decks.pop(0)

    def draw_card(self) -> int:
        if not self._draws:
            raise ValueError("the record holds no further dealer draw")
        return self._draws.pop(0)

    def clone(self) -> ScriptedChance:
        return ScriptedChance(self._decks, self._draws)


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """The end of a match: ``winner`` None for a drawn match."""

    winner: int | None
    scores: tuple[int, int]
    reason: str  # hands, target, bankrupt


@dataclass(slots=True)
class HandRecord:
    """What a record keeps of one hand: its deals (redeals first), dealer, month, actions, result."""

    number: int
    dealer: int
    month: int
    decks: list[list[int]] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    result: HandResult | None = None


class Match:
    """A whole game of Koi-Koi between players 0 and 1."""

    def __init__(
        self,
        rules: RuleSet,
        seed: int | None = None,
        *,
        chance: Chance | None = None,
        birth_months: tuple[int, int] | None = None,
        version: int = RULES_VERSION,
    ) -> None:
        """``version``: the engine's rules version (:data:`koikoi.rules.RULES_VERSIONS`); a match plays
        the current one, and an older one only replays a record played under it."""
        if version not in RULES_VERSIONS:
            raise ValueError(f"rules version must be one of {', '.join(map(str, RULES_VERSIONS))}, not {version!r}")
        self.version = version
        if chance is None:
            if seed is None:
                seed = random.SystemRandom().getrandbits(63)
            chance = SeededChance(seed)
        self.rules = rules
        self.seed = seed
        self.chance = chance
        if birth_months is not None:
            if len(birth_months) != 2 or not all(isinstance(b, int) and 1 <= b <= 12 for b in birth_months):
                raise ValueError(f"birth_months must be two months 1..12, not {birth_months!r}")
        self.birth_months = birth_months
        self.scores = [rules.starting_score, rules.starting_score]
        self.dealer_draws: list[int] = []
        self.first_dealer = self._choose_first_dealer()
        self.hands: list[HandRecord] = []
        # The results of the hands so far, replaced (never changed in place: records' replay snapshots
        # share it through copy.copy) as each hand ends, so that observations need not collect them.
        self._results: tuple[HandResult, ...] = ()
        self.outcome: MatchOutcome | None = None
        self.hand: Hand
        self.previous_hand: Hand | None = None  # the hand just finished, for showing how it ended
        self._start_hand(self.first_dealer)

    # -- set-up -----------------------------------------------------------------------------------

    @classmethod
    def from_hand(cls, hand: Hand, *, scores: tuple[int, int] | None = None, seed: int | None = None) -> Match:
        """A match whose hand in play is ``hand``, set up (:meth:`Hand.set_up`) rather than dealt: a lesson's
        position. It plays on as any match does under ``hand.rules`` (as hand 1, at ``scores``, the next
        hands dealt from ``seed``); it keeps no deal of its first hand, so it cannot be written as a record."""
        m = cls.__new__(cls)
        m.version = hand.version
        m.rules = hand.rules
        m.seed = seed
        m.chance = SeededChance(random.SystemRandom().getrandbits(63) if seed is None else seed)
        m.birth_months = None
        m.scores = list(scores) if scores is not None else [hand.rules.starting_score] * 2
        m.dealer_draws = []
        m.first_dealer = hand.dealer
        m.hands = [HandRecord(1, hand.dealer, hand.month, [], [])]
        m._results = ()
        m.outcome = None
        m.hand = hand
        m.previous_hand = None
        m.bind_hand_record()
        return m

    def _choose_first_dealer(self) -> int:
        mode = self.rules.dealer_selection
        if mode == "birth_month" and self.birth_months is None:
            raise ValueError("dealer_selection=birth_month needs both players' birth months (birth_months=(m0, m1))")
        if mode == "birth_month" and self.birth_months[0] == self.birth_months[1]:  # type: ignore[index]
            # Equal months tie on every card, so the birth months cannot decide: the players draw
            # for the deal as in dealer_selection=draw (docs/rules-notes.md).
            mode = "draw"
        for _ in range(1000):
            if mode == "random":
                c = self.chance.draw_card()
                self.dealer_draws.append(c)
                return c & 1
            if mode == "draw":
                # Each player draws a card; the earlier month deals; the same month draws again.
                a, b = self.chance.draw_card(), self.chance.draw_card()
                self.dealer_draws += [a, b]
                if a >> 2 != b >> 2:
                    return 0 if a >> 2 < b >> 2 else 1
            else:  # birth_month: the player whose birth month is nearer the drawn card's month deals
                c = self.chance.draw_card()
                self.dealer_draws.append(c)
                m = (c >> 2) + 1
                dist = [min(abs(m - b), 12 - abs(m - b)) for b in self.birth_months]  # type: ignore[union-attr]
                if dist[0] != dist[1]:
                    return 0 if dist[0] < dist[1] else 1
        raise ValueError("the dealer draw never settled")

    def _start_hand(self, dealer: int) -> None:
        hands = self.hands
        number = len(hands) + 1
        month = (number - 1) % 12 + 1
        rec = HandRecord(number, dealer, month, [], [])
        hands.append(rec)
        decks = rec.decks
        rules, version = self.rules, self.version
        chance = self.chance
        # The engine's own shuffle (SeededChance.deck's) gives 48 different card ids: such a deck is dealt
        # without the checks a deck from outside needs (``dealt_hand``).
        getrandbits = None
        if type(chance) is SeededChance and type(chance.rng) is random.Random:
            getrandbits = chance.rng.getrandbits if _FAST_SHUFFLE else None
        for _ in range(10_000):
            if getrandbits is not None:
                d = _shuffled_deck(getrandbits)
                decks.append(d)
                hand = dealt_hand(rules, d, dealer, month, version)
            else:
                d = chance.deck()
                decks.append(d)
                hand = Hand(rules, d, dealer, month, version)
            result = hand.result
            if result is None:  # nearly every deal: nothing settled at the deal
                self.hand = hand
                self.bind_hand_record()
                return
            if result.reason != "redeal":
                break
        else:  # pragma: no cover - a redeal ten thousand times in a row does not happen
            raise RuntimeError("no playable deal")
        self.hand = hand
        self.bind_hand_record()
        self._finish_hand()  # a hand bonus awarded at the deal

    def bind_hand_record(self) -> None:
        """Keep the hand record's ``append`` at hand for :meth:`apply_action` (three lookups fewer per
        action); called whenever the record list changes hands (a new hand, :meth:`clone`, a replay
        snapshot)."""
        self._log = self.hands[-1].actions.append

    # -- play -------------------------------------------------------------------------------------

    @property
    def current_player(self) -> int:
        return self.hand.current_player

    @property
    def phase(self) -> Phase:
        return self.hand.phase

    @property
    def dealer(self) -> int:
        return self.hand.dealer

    @property
    def hand_number(self) -> int:
        return len(self.hands)

    @property
    def results(self) -> list[HandResult]:
        return list(self._results)

    @property
    def finished_results(self) -> tuple[HandResult, ...]:
        """The results of the hands finished so far, as the match keeps them: the same as :attr:`results`
        without the copy (a tuple, replaced and never changed), for views built at every step."""
        return self._results

    @property
    def actions(self) -> list[int]:
        return [a for h in self.hands for a in h.actions]

    def is_over(self) -> bool:
        return self.outcome is not None

    def legal_actions(self) -> list[int]:
        """Every legal action of the player to move, sorted; empty once the match is over."""
        # Once the match is over its last hand is over too, and a hand over has no legal action.
        return self.hand.legal_actions()

    def apply_action(self, action: int) -> None:
        """Play ``action``; at the end of a hand the next one is dealt. Illegal actions change nothing."""
        hand = self.hand
        try:
            hand.apply_action(action)
        except IllegalActionError:
            # The last hand of a finished match refuses every action; say why in the match's terms.
            if self.outcome is not None:
                raise IllegalActionError(f"the match is over ({self.outcome.reason}); no action is legal") from None
            raise
        self._log(action)
        if hand.result is not None:
            self._finish_hand()

    def play_random(self, getrandbits: Callable[[int], int]) -> None:
        """Play on to the end of the match, each action drawn uniformly from the legal ones.

        ``getrandbits`` is a ``random.Random``'s method; each action is drawn as ``rng.choice`` draws it
        (``getrandbits`` of the number of legal actions' bit length, again until below it), so this plays
        the same game as ``apply_action(rng.choice(legal_actions()))`` until the match is over, but
        without the match's call per action and its per-action checks: ``koikoi simulate`` and playouts."""
        bit_length = _BIT_LENGTH
        while self.outcome is None:
            # _start_hand leaves the match over or its hand in play: a hand settled at the deal is finished.
            hand = self.hand
            legal, apply, log = hand.legal_actions, hand.apply_action, self.hands[-1].actions.append
            while hand.result is None:
                acts = legal()
                n = len(acts)
                k = bit_length[n]
                r = getrandbits(k)
                while r >= n:
                    r = getrandbits(k)
                action = acts[r]
                apply(action)
                log(action)
            self._finish_hand()

    def _finish_hand(self) -> None:
        r = self.rules
        hand = self.hand
        result = hand.result
        assert result is not None
        hands = self.hands
        hands[-1].result = result
        self._results += (result,)
        scores = self.scores
        d0, d1 = result.deltas
        s0 = scores[0] = scores[0] + d0
        s1 = scores[1] = scores[1] + d1
        reason = None
        if r.transfer and (s0 <= 0 or s1 <= 0):
            reason = "bankrupt"
        elif r.target_score and (s0 >= r.target_score or s1 >= r.target_score):
            reason = "target"
        elif r.hands and len(hands) >= r.hands:
            reason = "hands"
        if reason:
            winner = None if s0 == s1 else (0 if s0 > s1 else 1)
            self.outcome = MatchOutcome(winner, (s0, s1), reason)
            return
        self.previous_hand = hand
        # The next hand's dealer (first_player): by turns, else the winner or the loser; one that keeps the
        # dealer leaves the deal where it is, and so does a hand nobody won unless exhausted_dealer passes it.
        dealer = hand.dealer
        mode = r.first_player
        if mode == "alternate":
            dealer = 1 - dealer
        elif result.winner is not None:
            if not result.keep_dealer:
                dealer = result.winner if mode == "winner" else 1 - result.winner
        elif r.exhausted_dealer == "pass":  # only a hand nobody won reads it: no cost on the others
            dealer = 1 - dealer
        self._start_hand(dealer)

    def winner(self) -> int | None:
        return self.outcome.winner if self.outcome else None

    def clone(self) -> Match:
        """An independent copy of the match. Its chance source is shared only when it is scripted."""
        m = Match.__new__(Match)
        m.rules = self.rules
        m.version = self.version
        m.seed = self.seed
        m.chance = self.chance.clone()
        m.birth_months = self.birth_months
        m.scores = self.scores[:]
        m.dealer_draws = self.dealer_draws[:]
        m.first_dealer = self.first_dealer
        m.hands = [
            HandRecord(h.number, h.dealer, h.month, [d[:] for d in h.decks], h.actions[:], h.result) for h in self.hands
        ]
        m._results = self._results
        m.outcome = self.outcome
        m.hand = self.hand.clone()
        m.previous_hand = self.previous_hand
        m.bind_hand_record()
        return m

    def after(self, action: int) -> Match:
        """The match as it would be after ``action``, this one left as it is: for reading (who moves
        next, the scores, whether it is over), not for playing on. While the action leaves the hand
        unfinished, only the hand is copied: no deal comes, so the chance source is not (a generator's
        state is 625 numbers, and a server previews every move before it stores it). Raises as
        :meth:`apply_action` does for an illegal action.

        >>> from koikoi.rules import preset
        >>> m = Match(preset("nintendo"), seed=7)
        >>> a = m.legal_actions()[0]
        >>> played = m.clone()
        >>> played.apply_action(a)
        >>> m.after(a).current_player == played.current_player != m.current_player
        True
        """
        hand = self.hand.clone()
        hand.apply_action(action)
        if hand.result is not None:  # the hand ends: scores, the next deal or the match's end
            whole = self.clone()
            whole.apply_action(action)
            return whole
        m = Match.__new__(Match)
        m.__dict__.update(self.__dict__)  # shared, and read only: the hand records, scores, chance
        m.hand = hand
        return m

    def observation(self, player: int) -> Any:
        """What ``player`` may see now: a :class:`koikoi.observation.Observation`.

        The observation layer sits above this module; it registers how a view is built when it is
        imported (importing :mod:`koikoi` imports it), so nothing here imports upwards."""
        if _observer is None:  # only when koikoi.match was loaded without the package (never via import)
            raise RuntimeError("import koikoi.observation to build observations")
        return _observer(self, player)

    def __repr__(self) -> str:
        return f"<Match rules={self.rules.name} hand={self.hand_number} scores={self.scores} over={self.is_over()}>"
