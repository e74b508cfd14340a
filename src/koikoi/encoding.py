"""The observation encoding ``koikoi_v0``: one player's observation as a vector of numbers, and its legal
actions as a mask, for learning agents and the trained policies they make (``docs/env.md`` has the table,
as has :mod:`koikoi.env`). It needs NumPy (the ``koikoi[rl]`` extra).

>>> from koikoi.match import Match
>>> from koikoi.rules import preset
>>> obs = Match(preset("cardavia"), seed=1).observation(0)
>>> encode(obs).shape == (OBSERVATION_SIZE,), int(action_mask(obs).sum()) == len(obs.legal_actions)
(True, True)
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

from .actions import NUM_ACTIONS
from .cards import NUM_CARDS
from .observation import Observation

__all__ = [
    "ENCODING",
    "PHASES",
    "LAYOUT",
    "SLICES",
    "OBSERVATION_SIZE",
    "LOW",
    "HIGH",
    "encode",
    "vector",
    "action_mask",
    "legal_mask",
]

ENCODING = "koikoi_v0"
PHASES = ("play", "draw_choice", "decision", "over")

# The encoding koikoi_v0, in order: (name, length, low, high). Changing it means a new ENCODING name.
LAYOUT: tuple[tuple[str, int, float, float], ...] = (
    ("hand", NUM_CARDS, 0, 1),
    ("table", NUM_CARDS, 0, 1),
    ("own_captures", NUM_CARDS, 0, 1),
    ("opponent_captures", NUM_CARDS, 0, 1),
    ("drawn_card", NUM_CARDS, 0, 1),
    ("unseen", NUM_CARDS, 0, 1),
    ("phase", len(PHASES), 0, 1),
    ("month", 12, 0, 1),
    ("dealer", 1, 0, 1),
    ("stock_count", 1, 0, 1),
    ("opponent_hand_count", 1, 0, 1),
    ("koikoi_calls", 2, 0, 1),
    ("yaku_points", 2, 0, 10),
    ("scores", 2, -100, 100),
    ("progress", 1, 0, 1),
)


def _slices() -> dict[str, slice]:
    out, offset = {}, 0
    for name, length, _, _ in LAYOUT:
        out[name] = slice(offset, offset + length)
        offset += length
    return out


SLICES: dict[str, slice] = _slices()
OBSERVATION_SIZE = SLICES["progress"].stop
LOW = np.concatenate([np.full(n, lo, np.float32) for _, n, lo, _ in LAYOUT])
HIGH = np.concatenate([np.full(n, hi, np.float32) for _, n, _, hi in LAYOUT])

# encode() writes the vector as bytes and lets NumPy read them once: per-call work on small arrays
# (one NumPy call per slice, np.clip on two numbers) cost more than the whole observation.
# The six card slices come first and lie back to back, so one 288-bit int holds them, read a byte at
# a time: each byte value has its eight float32 entries ready as bytes.
_F32 = np.dtype(np.float32)
_CARD_SLICES = ("hand", "table", "own_captures", "opponent_captures", "drawn_card", "unseen")
assert [SLICES[n] for n in _CARD_SLICES] == [slice(NUM_CARDS * k, NUM_CARDS * (k + 1)) for k in range(6)]
_CARDS_BYTES = NUM_CARDS * 6 // 8
_BYTE_F32 = tuple(np.array([(b >> i) & 1 for i in range(8)], np.float32).tobytes() for b in range(256))
_PHASE_F32 = tuple(np.eye(len(PHASES), dtype=np.float32)[k].tobytes() for k in range(len(PHASES)))  # by Phase value
_MONTH_F32 = (b"", *(np.eye(12, dtype=np.float32)[m].tobytes() for m in range(12)))  # by month 1..12
assert SLICES["phase"].start == NUM_CARDS * 6 and SLICES["month"].start == SLICES["phase"].stop
assert SLICES["dealer"].start == SLICES["month"].stop and SLICES["progress"].stop == SLICES["dealer"].start + 10
# The ten entries after the month, dealer .. progress, in the layout's order.
_TAIL = struct.Struct(f"={SLICES['progress'].stop - SLICES['dealer'].start}f")


def encode(obs: Observation) -> np.ndarray:
    """The ``koikoi_v0`` vector of one player's observation (the table in :mod:`koikoi.env`'s docstring)."""
    me, opp = obs.player, 1 - obs.player
    piles = obs.pile_masks
    calls = obs.koikoi_calls
    yaku = obs.yaku_scores
    scores = obs.scores
    return vector(
        obs.hand_mask,
        obs.table_mask,
        piles[me],
        piles[opp],
        obs.drawn_card,
        obs.unseen_mask,
        PHASES.index(obs.phase),
        obs.month,
        obs.dealer == me,
        obs.stock_count,
        obs.opponent_hand_count,
        calls[me],
        calls[opp],
        yaku[me],
        yaku[opp],
        scores[me],
        scores[opp],
        len(obs.results),
        obs.rule_set.hands,
    )


def vector(
    hand: int,
    table: int,
    own_pile: int,
    other_pile: int,
    drawn: int | None,
    unseen: int,
    phase: int,
    month: int,
    dealer: bool,
    stock_count: int,
    opponent_hand_count: int,
    own_calls: int,
    other_calls: int,
    own_yaku: int,
    other_yaku: int,
    own_score: int,
    other_score: int,
    results: int,
    hands: int,
) -> np.ndarray:
    """The ``koikoi_v0`` vector from its values one by one: the one definition of the encoding, for
    :func:`encode` and for an environment that reads them from the match without an observation."""
    cards = (
        hand
        | table << 48
        | own_pile << 96
        | other_pile << 144
        | (0 if drawn is None else 1 << (192 + drawn))
        | unseen << 240
    )
    # Each value is computed as a Python float and rounded to float32 when packed, as NumPy rounds it.
    tail = _TAIL.pack(
        float(dealer),
        stock_count / 24,
        opponent_hand_count / 8,
        min(own_calls, 3) / 3,
        min(other_calls, 3) / 3,
        min(max(own_yaku / 10, 0.0), 10.0),
        min(max(other_yaku / 10, 0.0), 10.0),
        min(max(own_score / 50, -100.0), 100.0),
        min(max(other_score / 50, -100.0), 100.0),
        min(results / hands, 1.0) if hands else 0.0,
    )
    data = bytearray(b"".join(map(_BYTE_F32.__getitem__, cards.to_bytes(_CARDS_BYTES, "little"))))
    data += _PHASE_F32[phase]
    data += _MONTH_F32[month]
    data += tail
    return np.frombuffer(data, _F32)


def action_mask(obs: Observation) -> np.ndarray:
    """int8[291]: 1 for each legal action of ``obs`` (all zeros when it is not this player's turn)."""
    return legal_mask(obs.legal_actions)


def legal_mask(legal: Sequence[int]) -> np.ndarray:
    """int8[291]: 1 for each action in ``legal``."""
    mask = bytearray(NUM_ACTIONS)
    for a in legal:
        mask[a] = 1
    return np.frombuffer(mask, np.int8)
