"""Game review: where a player lost points in a finished (or unfinished) game, by the strongest search.

For every decision of one player in a game record, the search values the move played and the best
move, in points of the hand (the units the table shows: a stop is exactly what it scores; without
transfers the opponent's points count against), and marks the costly mistakes: more than
:data:`MISTAKE_POINTS` lost, or a koi-koi called when stopping was worth more and the hand then went
worse than the stop would have. Where the position says why, a one-line reason comes with it ("took a
plain pine card instead of the crane", "left the boar for the opponent's ino-shika-cho", "stopping was
worth 6, koi-koi was expected to lose 2.1").

The review is a pure function of the record, the player and the budget: each decision's search is
seeded from the record's deals and actions and the decision's place in it, so the same record always
gives the same review, on any machine, whether the decisions are worked out in order or apart (the web
server sends them to its worker processes one at a time, to show progress).

>>> from koikoi.match import Match
>>> from koikoi.records import GameRecord
>>> from koikoi.rules import preset
>>> m = Match(preset("cardavia"), seed=5)
>>> while not m.is_over():
...     m.apply_action(m.legal_actions()[0])
>>> doc = review_record(GameRecord.from_match(m), 0, playouts=8)
>>> doc["format"], doc["summary"]["decisions"] == len(doc["decisions"])
('koikoi-review', True)
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from .actions import DECLARE, DRAW_TAKE_BASE, KOIKOI, PLAY_TAKE_BASE, STOP, action_name
from .ai import Agent, make_agent
from .ai.base import Choice
from .cards import (
    ANIMALS,
    BLUE_RIBBONS,
    BRIGHTS,
    CARD_NAMES,
    CURTAIN,
    INO_SHIKA_CHO,
    MONTH_MASKS,
    MOON,
    POETRY_RIBBONS,
    RAIN_MAN,
    RIBBONS,
    SAKE_CUP,
    Kind,
    iter_cards,
    kind_of,
)
from .observation import Observation
from .records import GameRecord, replay, replay_steps
from .yaku import evaluate

__all__ = [
    "REVIEW_FORMAT",
    "REVIEW_VERSION",
    "MISTAKE_POINTS",
    "NOISE_FACTOR",
    "loss_noise",
    "verdict_of",
    "merge_twins",
    "move_signature",
    "DEFAULT_PLAYOUTS",
    "SEARCH",
    "Decision",
    "review_agent",
    "review_seed",
    "decisions",
    "review_decision",
    "judge",
    "assess",
    "assemble",
    "review_record",
    "choose_player",
    "card_phrase",
    "reason_text",
    "move_effect",
    "moved_card",
    "move_parts",
    "yaku_gain",
    "points_of",
]

REVIEW_FORMAT = "koikoi-review"
REVIEW_VERSION = 2  # 2: values with their standard errors, verdicts within the noise, twin moves merged
MISTAKE_POINTS = 1.0  # a move that loses more than this many points of the hand is a mistake
# ... and only when the loss is more than this many of its standard errors: a loss within the noise of the
# playouts is one a stronger analysis (more playouts) could well turn around.
NOISE_FACTOR = 2.0
SEARCH = "expert"  # the level that judges the moves: the hard search with five times its budget
# Its budget per decision, playouts, by default.
DEFAULT_PLAYOUTS: int = make_agent(SEARCH).playouts  # type: ignore[attr-defined]

Progress = Callable[[int, int], None]


def review_agent(seed: int, playouts: int | None = None) -> Agent:
    """The search that judges the moves: seeded, with a fixed budget and no time cap, so its values
    depend only on the seed and the position."""
    return make_agent(SEARCH, seed=seed, playouts=playouts or DEFAULT_PLAYOUTS, time_limit=None)


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision of the reviewed player: what they saw, what they did, and how the hand ended.

    ``step`` is the action's place in the whole record (1-based: the replay's step after it), ``hand``
    the hand's number and ``move`` the action's place in its hand (1-based). ``hand_result`` is the
    hand's outcome for the player in the units of the review (None: the record stops before it ended).
    """

    obs: Observation
    action: int
    step: int
    hand: int
    move: int
    hand_result: int | None


def review_seed(record: GameRecord) -> int:
    """The review's seed: a digest of what decides the game (rules, chance and actions), not of names,
    dates or metadata, so the same game gives the same review however its record was written."""
    d = record.to_dict()
    key = {k: d[k] for k in ("rules", "seed", "first_dealer", "dealer_draws", "hands")}
    text = json.dumps(key, sort_keys=True, separators=(",", ":"))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def choose_player(record: GameRecord, player: str | int | None) -> int:
    """The seat to review: 0 or 1, a player's name, or (None) the record's one human player, else 0."""
    names = [str(p.get("name", "")) for p in record.players]
    if player is None:
        humans = [i for i, p in enumerate(record.players) if p.get("kind") == "human"]
        return humans[0] if len(humans) == 1 else 0
    if isinstance(player, int) or str(player).strip() in ("0", "1"):
        return int(player) if int(player) in (0, 1) else _bad_player(player, names)
    wanted = str(player).strip().casefold()
    found = [i for i, n in enumerate(names) if n.casefold() == wanted]
    if len(found) == 1:
        return found[0]
    return _bad_player(player, names)


def _bad_player(player: object, names: list[str]) -> int:
    if len(set(names)) < 2 and str(player).casefold() in {n.casefold() for n in names}:
        raise ValueError(f"both players are called {names[0]!r}: choose the seat with 0 or 1")
    raise ValueError(f"no player {player!r} in this record; choose 0, 1, {names[0]!r} or {names[1]!r}")


def decisions(record: GameRecord, player: int) -> list[Decision]:
    """Every decision of ``player`` in ``record`` that had a choice (a single legal action is skipped).

    Raises :class:`~koikoi.records.RecordError` when the record does not replay."""
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, not {player!r}")
    match = replay(record)  # checks the whole record first, and gives every hand's result
    transfer = record.rules.transfer
    results: list[int | None] = []
    for h in match.hands:
        r = h.result
        if r is None:
            results.append(None)
        else:
            results.append(r.deltas[player] if transfer else r.deltas[player] - r.deltas[1 - player])
    out = []
    for step in replay_steps(record, check=False):
        if step.player != player:
            continue
        obs = step.before.observation(player)
        if len(obs.legal_actions) < 2:
            continue
        out.append(
            Decision(
                obs=obs,
                action=step.action,
                step=step.index + 1,
                hand=step.hand_number,
                move=step.action_index + 1,
                hand_result=results[step.hand_number - 1] if step.hand_number <= len(results) else None,
            )
        )
    return out


def review_decision(pos: Decision, seed: int, playouts: int | None = None) -> dict[str, Any]:
    """One decision judged: the search's value of the move played and of the best, each with its
    standard error, the loss, the verdict, the marks and the reason. ``seed`` is the review's seed
    (:func:`review_seed`); the decision's own comes from it."""
    return assess(pos, _decision_seed(seed, pos.step), playouts)[0]


def assess(pos: Decision, seed: int, playouts: int | None = None) -> tuple[dict[str, Any], list[Choice]]:
    """The decision judged with its own ``seed``: (its entry, the search's first ranking).

    A mistake is confirmed before it is called: the best move is the highest of several noisy values,
    so its estimate is lucky on average (the more choices, the luckier), and a loss measured beside it
    looks larger than it is. So the move played and the best are measured again, on fresh worlds with
    the same budget, the two alone, and the entry is judged from that second measure (``remeasured``):
    a mistake that does not hold there is not called one."""
    ranked = review_agent(seed, playouts).rank(pos.obs)
    entry = judge(pos, ranked)
    if entry["verdict"] == "mistake" and pos.action not in (KOIKOI, STOP):
        pair = (entry["played"]["action"], entry["best"]["action"])
        again = review_agent(_confirm_seed(seed), playouts).rank(replace(pos.obs, legal_actions=pair))
        entry = judge(pos, again)
        entry["remeasured"] = True
    else:
        entry["remeasured"] = False
    return entry, ranked


def judge(pos: Decision, searched: list[Choice]) -> dict[str, Any]:
    """The decision's entry of the review from the search's ranking of its position (see
    :func:`review_decision`)."""
    ranked = merge_twins(pos.obs, searched, keep=pos.action)
    by_action = {c.action: c for c in ranked}
    played = by_action[pos.action]
    best = _best(ranked)
    played_points = points_of(played)
    best_points = points_of(best)
    loss = round(best_points - played_points, 2)
    if loss <= 0:  # the move played is the best (or measured as good): no other move is named
        best, best_points, loss = played, played_points, 0.0
    noise = loss_noise(played, best)
    verdict = verdict_of(loss, noise)
    marks = ["mistake"] if verdict == "mistake" else []
    parts: list[dict[str, Any]] = []
    obs = pos.obs
    if verdict in ("mistake", "worse") and loss >= MISTAKE_POINTS / 2:  # a reason for what matters
        if pos.action in (KOIKOI, STOP):
            parts = _decision_parts(pos, by_action)
        elif pos.action != DECLARE and best.action != DECLARE:
            parts = move_parts(obs, pos.action, best.action)
    if pos.action == KOIKOI and STOP in by_action:
        stop = points_of(by_action[STOP])
        beyond = stop - played_points > NOISE_FACTOR * (played.stderr if played.stderr is not None else float("inf"))
        if beyond and stop > played_points and pos.hand_result is not None and pos.hand_result < stop:
            # The koi-koi was the wrong call, clearly so, and it did cost: the hand ended worse than the stop.
            marks.append("koikoi")
            parts.append({"kind": "koikoi_cost", "stop": stop, "result": pos.hand_result})
    return {
        "step": pos.step,
        "hand": pos.hand,
        "move": pos.move,
        "phase": obs.phase,
        "choices": len(obs.legal_actions),
        "played": _choice_dict(played),
        "best": _choice_dict(best),
        "loss": loss,
        "loss_stderr": None if noise is None else round(noise, 2),
        "verdict": verdict,
        "marks": marks,
        "reason": reason_text(parts),
        "reason_parts": parts,
    }


def loss_noise(played: Choice, best: Choice) -> float | None:
    """The standard error of the loss ``best - played``: the two values' errors combined as if they
    were independent. The search measures every move on the same worlds, which makes the two errors
    move together and the true error of the difference smaller, so this errs on the side of calling
    fewer mistakes. 0 when both values are exact (two stops, or the same move); None when either is
    unknown (a move measured on a single playout)."""
    if played.action == best.action:
        return 0.0
    if played.stderr is None or best.stderr is None:
        return None
    return math.hypot(played.stderr, best.stderr)


def verdict_of(loss: float, noise: float | None) -> str:
    """The verdict on a move that lost ``loss`` points with standard error ``noise``:

    - ``"best"``: nothing lost;
    - ``"equal"``: about equal to the best, the loss within :data:`NOISE_FACTOR` standard errors (or
      of unknown error): a stronger analysis could well rank them the other way;
    - ``"mistake"``: more than :data:`MISTAKE_POINTS` lost, and beyond the noise;
    - ``"worse"``: beyond the noise but no more than :data:`MISTAKE_POINTS`.

    >>> verdict_of(1.5, 0.2), verdict_of(1.5, 0.9), verdict_of(0.6, 0.1), verdict_of(0.0, 0.0)
    ('mistake', 'equal', 'worse', 'best')
    """
    if loss <= 0:
        return "best"
    if noise is None or loss <= NOISE_FACTOR * noise:
        return "equal"
    return "mistake" if loss > MISTAKE_POINTS else "worse"


def assemble(
    record: GameRecord, player: int, entries: list[dict[str, Any]], playouts: int | None, seed: int
) -> dict[str, Any]:
    """The review document from its decisions: plain JSON, versioned (``format``, ``version``)."""
    lost = round(sum(e["loss"] for e in entries), 2)
    mistakes = [e for e in entries if e["marks"]]
    name = str(record.players[player].get("name", f"player {player}"))
    return {
        "format": REVIEW_FORMAT,
        "version": REVIEW_VERSION,
        "player": player,
        "name": name,
        "players": [str(p.get("name", f"player {i}")) for i, p in enumerate(record.players)],
        "rules": record.rules.name,
        "finished": record.finished,
        "engine": {"search": SEARCH, "playouts": playouts or DEFAULT_PLAYOUTS, "seed": seed},
        "threshold": MISTAKE_POINTS,
        "noise_factor": NOISE_FACTOR,
        "decisions": entries,
        "summary": {
            "decisions": len(entries),
            "points_lost": lost,
            "mistakes": len(mistakes),
            "koikoi_mistakes": sum(1 for e in entries if "koikoi" in e["marks"]),
            "worst": max(entries, key=lambda e: e["loss"])["step"] if mistakes else None,
        },
    }


def review_record(
    record: GameRecord,
    player: int,
    *,
    playouts: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Review every decision of ``player`` in ``record`` (see the module's text); ``progress(done,
    total)`` is called before the first decision and after each."""
    seed = review_seed(record)
    todo = decisions(record, player)
    if progress is not None:
        progress(0, len(todo))
    entries = []
    for i, pos in enumerate(todo):
        entries.append(review_decision(pos, seed, playouts))
        if progress is not None:
            progress(i + 1, len(todo))
    return assemble(record, player, entries, playouts, seed)


# -- values -----------------------------------------------------------------------------------------


def _card_sign(c: int) -> int | tuple[str, int]:
    # A plain card is known by its month alone: two plain cards of a month score alike in every yaku
    # (kasu counts them, no yaku names one). Every other card is one of a kind in its month.
    return ("chaff", c >> 2) if kind_of(c) is Kind.CHAFF else c


def move_signature(obs: Observation, action: int) -> tuple[object, ...]:
    """What a move does, up to identical cards: the card it moves and the cards it takes, each plain
    card known only by its month. Two moves with the same signature (playing one or the other of two
    plain pampas cards, or a drawn card taking one or the other of two plain cards) are one move."""
    if action >= KOIKOI:
        return ("decision", action)
    moved = moved_card(obs, action)
    got, _ = move_effect(obs, action)
    taken = sorted(map(str, (_card_sign(c) for c in iter_cards(got & ~(1 << moved)))))
    return ("draw" if action >= DRAW_TAKE_BASE else "play", str(_card_sign(moved)), tuple(taken))


def merge_twins(obs: Observation, ranked: list[Choice], keep: int | None = None) -> list[Choice]:
    """The search's choices with identical moves (:func:`move_signature`) merged into one, in the order
    of the first of each: the playouts' mean over all of them (the search measured each apart, on the
    same worlds), its standard error the mean of theirs (the twins' errors move together, so it is not
    made smaller by their number), and the action of ``keep`` where it is one of them, else the first's.
    So the best move is never the twin of the move played, and never wins by the luckier of two twins."""
    groups: dict[tuple[object, ...], list[Choice]] = {}
    for c in ranked:
        groups.setdefault(move_signature(obs, c.action), []).append(c)
    out = []
    for members in groups.values():
        if len(members) == 1:
            out.append(members[0])
            continue
        action = keep if keep is not None and any(c.action == keep for c in members) else members[0].action
        counts = [_count(c) for c in members]
        depth = max(counts)

        out.append(
            Choice(
                action,
                _mean([c.value for c in members], counts) or 0.0,
                f"mean of {depth} playouts, {len(members)} identical moves",
                _mean([points_of(c) for c in members], counts),
                _mean([c.win for c in members], counts),
                _mean([c.stderr for c in members], counts),
            )
        )
    return out


def _mean(values: list[float | None], counts: list[int]) -> float | None:
    # The mean weighted by the playouts behind each value; unknown if any is.
    known = [v for v in values if v is not None]
    if len(known) < len(values):
        return None
    return sum(n * v for n, v in zip(counts, known)) / sum(counts)


def _count(c: Choice) -> int:
    d = _depth(c)
    return 1 if d >= 1 << 30 else max(1, d)


def _confirm_seed(seed: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:confirm".encode()).digest()[:8], "big")


def _decision_seed(seed: int, step: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{step}".encode()).digest()[:8], "big")


def points_of(c: Choice) -> float:
    """A choice's worth in points of the hand (the search's ``points``; its ``value`` where it has none)."""
    return c.points if c.points is not None else c.value


def _best(ranked: list[Choice]) -> Choice:
    # The search ranks by its match-weighted value; the review speaks in points of the hand, so the best
    # move is the one with the most points among those the search measured to the end (the finalists,
    # listed first with the most playouts; a stop is exact). A choice dropped early was measured on few
    # worlds and is not trusted to be the best on a lucky estimate.
    sampled = [_depth(c) for c in ranked if c.action != STOP]
    top = max(sampled, default=0)
    finalists = [c for c in ranked if c.action == STOP or _depth(c) == top]
    return max(finalists, key=points_of)


def _depth(c: Choice) -> int:
    if c.action == STOP:
        return 1 << 30
    words = c.explain.split()
    return int(words[2]) if len(words) > 2 and words[:2] == ["mean", "of"] and words[2].isdigit() else 1 << 30


def _choice_dict(c: Choice) -> dict[str, Any]:
    return {
        "action": c.action,
        "name": action_name(c.action),
        "points": round(points_of(c), 2),
        "stderr": None if c.stderr is None else round(c.stderr, 2),
        "win": None if c.win is None else round(c.win, 3),
    }


# -- reasons ----------------------------------------------------------------------------------------


def _decision_parts(pos: Decision, by_action: dict[int, Choice]) -> list[dict[str, Any]]:
    if STOP not in by_action or KOIKOI not in by_action:
        return []
    stop = round(points_of(by_action[STOP]), 2)
    koikoi = round(points_of(by_action[KOIKOI]), 2)
    if pos.action == KOIKOI:
        return [{"kind": "stop_was_worth", "stop": stop, "koikoi": koikoi}]
    return [{"kind": "koikoi_was_worth", "stop": stop, "koikoi": koikoi}]


def move_effect(obs: Observation, action: int) -> tuple[int, int]:
    """(the cards the action captures, the card played or drawn among them, as a mask; the table after it),
    before the turn's draw, which is unknown."""
    table = obs.table_mask
    if action >= DRAW_TAKE_BASE:
        taken = 1 << (action - DRAW_TAKE_BASE)
        return taken | 1 << (obs.drawn_card if obs.drawn_card is not None else 0), table & ~taken
    if action >= PLAY_TAKE_BASE:
        c, r = divmod(action - PLAY_TAKE_BASE, 4)
        taken = 1 << ((c & ~3) | r)
        return taken | 1 << c, table & ~taken
    taken = table & MONTH_MASKS[action >> 2]
    if taken:
        return taken | 1 << action, table & ~taken
    return 0, table | 1 << action


def yaku_gain(pile: int, add: int, obs: Observation) -> list[str]:
    """The yaku ``pile`` makes or raises when ``add`` joins it."""
    rules = obs.rule_set
    before = {y.name: y.points for y in evaluate(pile, rules, obs.month)}
    after = evaluate(pile | add, rules, obs.month)
    return [y.name for y in after if y.points > before.get(y.name, 0)]


def _targets(obs: Observation) -> list[tuple[str, int, int]]:
    """(name, cards, how many it needs) of each yaku a pile can be on its way to under the rules."""
    r = obs.rule_set
    out = []
    for name, on, cards, need in (
        ("sanko", r.sanko, BRIGHTS & ~RAIN_MAN, 3),
        ("ino-shika-cho", r.ino_shika_cho, INO_SHIKA_CHO, 3),
        ("akatan", r.akatan, POETRY_RIBBONS, 3),
        ("aotan", r.aotan, BLUE_RIBBONS, 3),
        ("tane", r.tane, ANIMALS, 5),
        ("tanzaku", r.tanzaku, RIBBONS, 5),
        ("tsukimi-zake", r.sake_yaku != "off" and r.tsukimi_zake, MOON | SAKE_CUP, 2),
        ("hanami-zake", r.sake_yaku != "off" and r.hanami_zake, CURTAIN | SAKE_CUP, 2),
    ):
        if on:
            out.append((name, cards, need))
    return out


def _yaku_toward(pile: int, card: int, obs: Observation) -> list[str]:
    """The yaku ``card`` brings ``pile`` closer to, where the pile already holds part of it and at most
    two cards are then missing (the sake cup beside the moon, a second poetry ribbon, a fourth animal)."""
    out = []
    for name, cards, need in _targets(obs):
        have = (pile & cards).bit_count()
        if cards >> card & 1 and not pile >> card & 1 and have >= 1 and need - have - 1 <= 2:
            out.append(name)
    return out


_WORTH = {Kind.BRIGHT: 3, Kind.ANIMAL: 2, Kind.RIBBON: 1, Kind.CHAFF: 0}


def move_parts(obs: Observation, played: int, best: int) -> list[dict[str, Any]]:
    """Why ``best`` beats ``played`` in this position, as the reason's parts (:func:`reason_text`): what
    each takes, leaves for the opponent, sets up or completes."""
    me, opp = obs.player, 1 - obs.player
    got_p, left_p = move_effect(obs, played)
    got_b, left_b = move_effect(obs, best)
    parts: list[dict[str, Any]] = []
    mine = obs.pile_masks[me]
    theirs = obs.pile_masks[opp]
    moved_p, moved_b = moved_card(obs, played), moved_card(obs, best)
    took_p = got_p & ~(1 << moved_p)  # the table cards each move takes (nothing for a discard)
    took_b = got_b & ~(1 << moved_b)
    if got_p and got_b and took_p == took_b:
        # The same capture made with another card of the month: the difference is the card played.
        if moved_p != moved_b and _telling(1 << moved_p | 1 << moved_b):
            parts.append({"kind": "played", "card": moved_p, "instead": moved_b})
    elif _telling((took_p if got_p else 1 << moved_p) | (took_b if got_b else 1 << moved_b)):
        parts.append(
            {
                "kind": "took",
                "took": list(iter_cards(took_p)),
                "discarded": None if got_p else moved_p,
                "instead": list(iter_cards(took_b)),
                "instead_discarded": None if got_b else moved_b,
            }
        )
    # A discard that sets up a capture: the best move leaves a card its partner in hand takes back next
    # turn, making a yaku (a blue ribbon laid down to be taken with the sake cup for aotan).
    if not got_b and played != best:
        for partner in iter_cards(obs.hand_mask & MONTH_MASKS[moved_b >> 2] & ~(1 << moved_b)):
            gain = yaku_gain(mine, 1 << moved_b | 1 << partner, obs)
            if gain:
                parts.append({"kind": "setup", "card": moved_b, "partner": partner, "yaku": gain[0]})
                break
    # A card this move leaves on the table that the best move would not: what it gives the opponent
    # (a yaku it completes or raises, else one the opponent's pile is on its way to), or any bright.
    exposed = sorted(iter_cards(left_p & ~left_b), key=lambda c: -_WORTH[kind_of(c)])
    for c in exposed:
        gain = yaku_gain(theirs, 1 << c, obs) or _yaku_toward(theirs, c, obs)
        if gain:
            parts.append({"kind": "left_for", "card": c, "yaku": gain[0]})
            break
        if kind_of(c) is Kind.BRIGHT:
            parts.append({"kind": "left", "card": c})
            break
    # A yaku of the player's own that the best move makes at once and this one does not.
    missed = [y for y in yaku_gain(mine, got_b, obs) if y not in yaku_gain(mine, got_p, obs)]
    if missed:
        parts.append({"kind": "missed", "yaku": missed[0]})
    else:
        # A card the best move takes and this one does not, for a yaku the player is on the way to (with
        # the cards of their pile and hand): the best move keeps it for them.
        # A card is named once: as left for a yaku of the opponent's, else as kept for one of the player's
        # (which says more than that a bright was left on the table).
        denied = {p["card"] for p in parts if p["kind"] == "left_for"}
        kept = sorted(iter_cards(got_b & ~got_p & ~obs.hand_mask), key=lambda c: -_WORTH[kind_of(c)])
        for c in kept:
            toward = _yaku_toward(mine | obs.hand_mask & ~(1 << moved_b), c, obs)
            if toward and c not in denied:
                parts = [p for p in parts if not (p["kind"] == "left" and p["card"] == c)]
                parts.append({"kind": "kept", "card": c, "yaku": toward[0]})
                break
    if not parts:
        # Nothing telling between them (plain cards only): still name the difference, so that the row
        # says which move the review means and a player can look at both.
        if moved_p != moved_b:
            parts.append({"kind": "played", "card": moved_p, "instead": moved_b})
        else:
            parts.append(
                {
                    "kind": "took",
                    "took": list(iter_cards(took_p)),
                    "discarded": None,
                    "instead": list(iter_cards(took_b)),
                    "instead_discarded": None,
                }
            )
    return parts[:3]


def _telling(cards: int) -> bool:
    # A difference between plain cards only says nothing worth reading.
    return any(kind_of(c) is not Kind.CHAFF for c in iter_cards(cards))


def moved_card(obs: Observation, action: int) -> int:
    """The card a move plays (or, for a choice after the draw, the card drawn)."""
    if action >= DRAW_TAKE_BASE:
        return obs.drawn_card if obs.drawn_card is not None else 0
    if action >= PLAY_TAKE_BASE:
        return (action - PLAY_TAKE_BASE) // 4
    return action


def card_phrase(c: int) -> str:
    """A card in a sentence: "the boar", "the pine poetry ribbon", "a plain pine card"."""
    name = CARD_NAMES[c]
    month = name.split("-")[0]
    kind = kind_of(c)
    if kind is Kind.CHAFF and "plain" in name:
        return f"a plain {month} card"
    if kind is Kind.RIBBON:
        what = name.split("-", 1)[1]
        return f"the {month} {'ribbon' if what == 'ribbon' else what + ' ribbon'}"
    thing = name.split("-", 1)[1]
    return "the " + {"rainman": "rain man", "sake": "sake cup"}.get(thing, thing)


def _cards_phrase(cards: list[int]) -> str:
    words = [card_phrase(c) for c in cards]
    if not words:
        return "nothing"
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _signed(x: float) -> str:
    return f"{x:g}" if float(x).is_integer() else f"{x:.1f}"


def reason_text(parts: list[dict[str, Any]]) -> str:
    """The reason as one English line (the web page builds the same line in the reader's language)."""
    out = []
    for p in parts:
        kind = p["kind"]
        if kind == "stop_was_worth":
            k = p["koikoi"]
            expect = f"lose {_signed(-k)}" if k < 0 else f"bring {_signed(k)}"
            out.append(f"stopping was worth {_signed(p['stop'])}, koi-koi was expected to {expect}")
        elif kind == "koikoi_was_worth":
            out.append(f"koi-koi was expected to bring {_signed(p['koikoi'])}, stopping only {_signed(p['stop'])}")
        elif kind == "koikoi_cost":
            out.append(f"the hand then ended {p['result']:+d} for you instead of {_signed(p['stop'])}")
        elif kind == "took":
            if p["discarded"] is not None:
                did = f"discarded {card_phrase(p['discarded'])}"
            else:
                did = f"took {_cards_phrase(p['took'])}"
            if p["instead_discarded"] is not None:
                did += f" instead of {'' if p['discarded'] is not None else 'discarding '}"
                did += card_phrase(p["instead_discarded"])
            elif p["instead"]:
                did += f" instead of {'taking ' if p['discarded'] is not None else ''}{_cards_phrase(p['instead'])}"
            out.append(did)
        elif kind == "played":
            out.append(f"played {card_phrase(p['card'])} instead of {card_phrase(p['instead'])}")
        elif kind == "setup":
            back = f"take it back with {card_phrase(p['partner'])} for your {p['yaku']}"
            if out and any(q["kind"] == "took" and q["instead_discarded"] == p["card"] for q in parts):
                out[-1] += f", to {back}"  # "...instead of discarding the blue ribbon, to take it back..."
            else:
                out.append(f"discarding {card_phrase(p['card'])} would let you {back}")
        elif kind == "left_for":
            out.append(f"left {card_phrase(p['card'])} for the opponent's {p['yaku']}")
        elif kind == "left":
            out.append(f"left {card_phrase(p['card'])} on the table for the opponent")
        elif kind == "missed":
            out.append(f"missed your {p['yaku']}")
        elif kind == "kept":
            out.append(f"the best move keeps {card_phrase(p['card'])} for your {p['yaku']}")
    if not out:
        return ""
    return out[0] if len(out) == 1 else ", ".join(out[:-1]) + " and " + out[-1]
