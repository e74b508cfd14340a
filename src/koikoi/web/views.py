"""What the browser is sent: one seat's view of a game, and the frames of a finished game's replay.

A seat's view is built from :func:`koikoi.observation.observe` and nothing else that is hidden, so it
holds exactly what that player may see: their own hand, the public table and piles, counts of the
opponent's hand and of the stock. A spectator's view holds only what is public: both hands as counts.
Cards go out as ids 0..47 (the page knows their names and faces).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..actions import STOP
from ..cards import (
    ANIMALS,
    BLUE_RIBBONS,
    BRIGHTS,
    CHAFF,
    CURTAIN,
    INO_SHIKA_CHO,
    MONTH_MASKS,
    MOON,
    POETRY_RIBBONS,
    RIBBONS,
    SAKE_CUP,
    iter_cards,
)
from ..hand import Hand, HandResult, Phase
from ..match import Match
from ..observation import observe
from ..rules import RuleSet
from ..yaku import yaku_progress

__all__ = [
    "seat_view",
    "spectator_view",
    "SPECTATOR_KEYS",
    "progress",
    "result_dict",
    "replay_frames",
    "full_view",
    "yaku_cards",
    "multiplier_reasons",
]


@lru_cache(maxsize=1 << 16)
def _ids(mask: int) -> tuple[int, ...]:
    # The same piles and tables come up in every message of a game: remember their card lists.
    return tuple(iter_cards(mask))


@lru_cache(maxsize=256)
def _rules(rules: RuleSet) -> dict[str, Any]:
    # A game's rules go out with every table, and a rule set never changes (nobody changes this dict):
    # made once per rule set, not once per message.
    return rules.to_dict()


def _events(events: Any) -> list[dict[str, Any]]:
    return [{"player": p, "kind": k, "card": None if c < 0 else c, "captured": _ids(m)} for p, k, c, m in events]


def result_dict(r: HandResult) -> dict[str, Any]:
    return {
        "reason": r.reason,
        "winner": r.winner,
        "points": r.points,
        "deltas": list(r.deltas),
        "yaku": [{"name": y.name, "points": y.points} for y in r.yaku],
        "base": r.base,
        "multiplier": r.multiplier,
    }


def yaku_cards(name: str, points: int, pile: int, rules: RuleSet, month: int) -> tuple[int, ...]:
    """The cards of ``pile`` that make the yaku ``name`` worth ``points`` (extras that add points included).

    >>> from koikoi.cards import cards_mask
    >>> from koikoi.rules import preset
    >>> pile = cards_mask(["pampas-moon", "chrysanthemum-sake", "pine-crane", "pine-poetry"])
    >>> yaku_cards("tsukimi-zake", 5, pile, preset("traditional"), 1)
    (28, 32)
    """
    # The sake cup under "either" counts where it gave the points the engine scored.
    with_sake, without = (ANIMALS, ANIMALS & ~SAKE_CUP), (CHAFF | SAKE_CUP, CHAFF)
    if name in ("goko", "shiko", "ame-shiko", "sanko"):
        mask = BRIGHTS
    elif name == "ino-shika-cho":
        mask = INO_SHIKA_CHO | (ANIMALS if rules.ino_shika_cho_plus else 0)
    elif name == "akatan-aotan":
        mask = POETRY_RIBBONS | BLUE_RIBBONS | (RIBBONS if rules.akatan_plus or rules.aotan_plus else 0)
    elif name == "akatan":
        mask = POETRY_RIBBONS | (RIBBONS if rules.akatan_plus else 0)
    elif name == "aotan":
        mask = BLUE_RIBBONS | (RIBBONS if rules.aotan_plus else 0)
    elif name == "tanzaku":
        mask = RIBBONS
    elif name in ("tane", "kasu"):
        full, bare = with_sake if name == "tane" else without
        need = 5 if name == "tane" else 10
        base = rules.tane if name == "tane" else rules.kasu
        counts_sake = {"both": True, "animal_only": name == "tane"}.get(
            rules.sake_cup, base + (pile & full).bit_count() - need == points
        )
        mask = full if counts_sake else bare
    elif name == "tsukimi-zake":
        mask = SAKE_CUP | MOON
    elif name == "hanami-zake":
        mask = SAKE_CUP | CURTAIN
    elif name == "tsukifuda":
        mask = MONTH_MASKS[month - 1]
    else:  # a dealt hand (teshi, kuttsuki) or oya-ken: no capture makes it
        mask = 0
    return _ids(pile & mask)


def multiplier_reasons(hand: Hand, player: int, base: int, multiplier: int) -> list[dict[str, Any]]:
    """Why ``player``'s ``base`` points are multiplied: each rule that applies with its factor (the
    engine's :meth:`koikoi.hand.Hand.multiplier_for`, read out). Empty when they do not account for
    ``multiplier`` exactly, so that the page never gives a wrong reason."""
    r = hand.rules
    out: list[dict[str, Any]] = []
    if r.seven_point_double and base >= 7:
        out.append({"why": "seven_or_more", "factor": 2})
    km, calls = r.koikoi_multiplier, hand.koikoi_calls
    if km == "additive":
        if calls[player]:
            out.append({"why": "own_koikoi_calls", "factor": 1 + calls[player], "n": calls[player]})
    elif km == "own_points_then_multiply":
        if calls[player] >= 4:  # (one to three calls add points: the "koikoi" yaku of the stop)
            out.append({"why": "own_koikoi_calls", "factor": calls[player] - 2, "n": calls[player]})
    else:
        if km in ("opponent_double", "own_and_opponent_double") and calls[1 - player]:
            out.append({"why": "opponent_koikoi", "factor": 2})
        if km in ("own_double", "own_and_opponent_double") and calls[player]:
            out.append({"why": "own_koikoi", "factor": 2})
    if r.bright_table_multiplier and hand.table_brights > 1:
        out.append({"why": "table_brights", "factor": hand.table_brights, "n": hand.table_brights})
    product = 1
    for x in out:
        product *= x["factor"]
    return out if product == multiplier else []


def progress(pile: int, rules: RuleSet, month: int) -> list[dict[str, Any]]:
    """How far a capture pile is towards each yaku it has started: ``have`` of ``need`` cards
    (:func:`koikoi.yaku.yaku_progress`, as the terminal view shows it)."""
    return [{"yaku": y, "have": have, "need": need} for y, have, need in yaku_progress(pile, rules, month)]


def _last_piles(match: Match) -> list[dict[str, tuple[int, ...]]] | None:
    """The piles as the last hand ended (the match's last hand once it is over), by kind; None while
    the first hand is played."""
    last = match.hand if match.is_over() else match.previous_hand
    return None if last is None else [_kinds(m) for m in last.piles]


def _kinds(pile: int) -> dict[str, tuple[int, ...]]:
    return {
        "brights": _ids(pile & BRIGHTS),
        "animals": _ids(pile & ANIMALS),
        "ribbons": _ids(pile & RIBBONS),
        "chaff": _ids(pile & CHAFF),
    }


def seat_view(
    match: Match, seat: int, *, seq: int, players: list[dict[str, Any]], status: str, hints: bool
) -> dict[str, Any]:
    """Everything the player in ``seat`` may see, as JSON-ready data."""
    obs = observe(match, seat)
    h = match.hand
    view: dict[str, Any] = {
        "seq": seq,
        "seat": seat,
        "status": status,
        "players": players,
        "hints": hints,
        "rules": _rules(obs.rule_set),
        "hand_number": obs.hand_number,
        "month": obs.month,
        "dealer": obs.dealer,
        "current_player": obs.current_player,
        "phase": obs.phase,
        "to_move": obs.to_move and status == "playing",
        "hand": obs.hand,
        "table": obs.table,
        "piles": [_kinds(m) for m in obs.pile_masks],
        "progress": [progress(m, match.rules, obs.month) for m in obs.pile_masks],
        "opponent_hand_count": obs.opponent_hand_count,
        "stock_count": obs.stock_count,
        "drawn_card": obs.drawn_card,
        "scores": list(obs.scores),
        "yaku": [[{"name": n, "points": p} for n, p in ys] for ys in obs.yaku],
        "yaku_scores": list(obs.yaku_scores),
        "koikoi_calls": list(obs.koikoi_calls),
        "multipliers": list(obs.multipliers),
        "can_declare": obs.can_declare,
        "legal": list(obs.legal_actions) if status == "playing" else [],
        "events": _events(obs.events),
        "previous_hand_events": _events(obs.previous_hand_events),
        "results": [result_dict(r) for r in obs.results],
        "match_over": obs.match_over,
        "match_winner": obs.match_winner,
        "hands_in_match": match.rules.hands,
        "target_score": match.rules.target_score,
        "stakes": None,
        # The piles as the last hand ended (public), for its summary.
        "previous_piles": _last_piles(match),
    }
    if obs.to_move and h.phase == Phase.DECISION:
        # What stopping now would score: the engine settles a copy (piles, calls and multipliers are
        # all public, so this tells the player nothing hidden).
        trial = h.clone()
        trial.apply_action(STOP)
        r = trial.result
        assert r is not None
        pile = trial.piles[seat]
        view["stakes"] = {
            "yaku": [
                {"name": y.name, "points": y.points, "cards": yaku_cards(y.name, y.points, pile, h.rules, h.month)}
                for y in r.yaku
            ],
            "base": r.base,
            "multiplier": r.multiplier,
            "reasons": multiplier_reasons(trial, seat, r.base, r.multiplier),
            "points": r.points,
            "koikoi_allowed": len(obs.legal_actions) > 1,
        }
    last = match.hand if match.is_over() else match.previous_hand
    if view["results"] and last is not None and last.result is not None:
        # The hand just ended: the cards that formed each yaku, and why its points were multiplied.
        r = last.result
        shown = view["results"][-1]
        if r.winner is not None and shown["points"] == r.points and shown["reason"] == r.reason:
            pile = last.piles[r.winner]
            for y in shown["yaku"]:
                y["cards"] = yaku_cards(y["name"], y["points"], pile, last.rules, last.month)
            shown["reasons"] = multiplier_reasons(last, r.winner, r.base, r.multiplier)
    if match.outcome is not None:
        o = match.outcome
        view["outcome"] = {"winner": o.winner, "scores": list(o.scores), "reason": o.reason}
    return view


# What a spectator is sent of a seat's view: the public part, named one by one, so that a field added to
# seat_view later reaches no spectator until it is added here on purpose. Not in it: the seat's own hand,
# its legal actions, whether it may declare, the stakes of its decision, whether it may ask for hints.
SPECTATOR_KEYS = (
    "seq",
    "status",
    "players",
    "rules",
    "hand_number",
    "month",
    "dealer",
    "current_player",
    "phase",
    "table",
    "piles",
    "progress",
    "stock_count",
    "drawn_card",
    "scores",
    "yaku",
    "yaku_scores",
    "koikoi_calls",
    "multipliers",
    "events",
    "previous_hand_events",
    "results",
    "match_over",
    "match_winner",
    "hands_in_match",
    "target_score",
    "previous_piles",
    "outcome",
)


def spectator_view(match: Match, *, seq: int, players: list[dict[str, Any]], status: str) -> dict[str, Any]:
    """What anyone watching the game may see, as JSON-ready data: the table, both piles, the public
    events and results, and both hands as counts only (``hand_counts``). Shaped like a seat's view from
    seat 0's side (so the table's page shows it), with an empty hand and nothing to act on."""
    seen = seat_view(match, 0, seq=seq, players=players, status=status, hints=False)
    view = {k: seen[k] for k in SPECTATOR_KEYS if k in seen}
    counts = [len(seen["hand"]), seen["opponent_hand_count"]]
    view.update(
        spectator=True,
        seat=0,
        hand=[],
        hand_counts=counts,
        opponent_hand_count=counts[1],
        to_move=False,
        legal=[],
        can_declare=False,
        hints=False,
        stakes=None,
    )
    return view


def full_view(h: Hand, scores: list[int], hand_number: int) -> dict[str, Any]:
    """Both hands and the table, for a replay of a finished game (nothing is hidden any more)."""
    return {
        "hand_number": hand_number,
        "month": h.month,
        "dealer": h.dealer,
        "current_player": h.current_player,
        "phase": h.phase.name.lower(),
        "hands": [_ids(h.hands[0]), _ids(h.hands[1])],
        "table": _ids(h.table),
        "piles": [_kinds(h.piles[0]), _kinds(h.piles[1])],
        "stock_count": h.stock_count,
        "drawn_card": h.pending if h.pending >= 0 else None,
        "scores": list(scores),
        "yaku": [[{"name": y.name, "points": y.points} for y in h.yaku_of(p)] for p in (0, 1)],
        "koikoi_calls": list(h.koikoi_calls),
    }


def replay_frames(record: Any) -> list[dict[str, Any]]:
    """The steps of a recorded game: the table before the first action, then after each action."""
    from ..records import replay_steps

    frames: list[dict[str, Any]] = []
    for step in replay_steps(record):
        if not frames:
            b = step.before
            frames.append(
                {
                    "view": full_view(b.hand, b.scores, b.hand_number),
                    "action": None,
                    "player": None,
                    "events": [],
                    "results": [],
                }
            )
        hand = step.hand_after
        n_before = len(step.before.hand.events) if step.before.hand_number == step.hand_number else 0
        events = [(e.player, e.kind, e.card, e.captured) for e in hand.events[n_before:]]
        a = step.after
        if step.results:
            # Show the table as the hand ended, not the next deal, so the last capture can be seen.
            view = full_view(hand, a.scores, step.hand_number)
        else:
            view = full_view(a.hand, a.scores, a.hand_number)
        frames.append(
            {
                "view": view,
                "action": step.action,
                "player": step.player,
                "events": _events(events),
                "results": [result_dict(r) for r in step.results],
            }
        )
    return frames
