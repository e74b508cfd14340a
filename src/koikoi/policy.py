"""Trained policies: load a policy file and let it play, in the arena or anywhere an agent plays.

An optional part of the package, like :mod:`koikoi.env` (it needs the ``koikoi[rl]`` extra for NumPy
and the ``koikoi_v0`` encoding). ``examples/train_ppo.py`` writes these files; ``koikoi arena
--players policy:FILE,easy`` plays one (``docs/env.md``, "Training an agent (PPO)").

A policy file is a NumPy ``.npz`` archive (read without pickle, so a file cannot run code):

- ``meta``: a JSON string, ``{"format": "koikoi-policy-mlp-v1", "encoding": "koikoi_v0",
  "activation": "relu" or "tanh", ...}``; any other keys (the rule set trained on, the training
  figures) are kept as :attr:`Policy.meta` and not read;
- ``W0, b0, W1, b1, ..., Wk, bk``: a multi-layer perceptron from the ``koikoi_v0`` vector
  (``OBSERVATION_SIZE`` inputs) to one logit per action (291 outputs); ``W{i}`` has shape
  ``(inputs, outputs)``, the activation follows every layer but the last;
- anything else (a value network saved for further training, say) is ignored.

The probabilities are the softmax of the logits over the legal actions only (the action mask). A
:class:`PolicyAgent` plays the most probable legal action (the lowest action id on a tie), or samples
from the probabilities with ``sample=True`` and its seed.

>>> import numpy as np, tempfile, os
>>> from koikoi.match import Match
>>> from koikoi.rules import preset
>>> rng = np.random.default_rng(0)
>>> layers = [(rng.normal(0, 0.1, (OBSERVATION_SIZE, 8)), np.zeros(8)), (rng.normal(0, 0.1, (8, 291)), np.zeros(291))]
>>> path = os.path.join(tempfile.mkdtemp(), "p.npz")
>>> save_policy(path, layers, meta={"rules": "cardavia"})
>>> agent = PolicyAgent(load_policy(path))
>>> m = Match(preset("cardavia"), seed=3)
>>> obs = m.observation(m.current_player)
>>> agent.choose(obs) in obs.legal_actions
True
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Sequence
from typing import Any

try:
    import numpy as np
except ImportError as e:  # the optional extra is not installed: say how to get it
    raise ImportError("koikoi.policy needs numpy: pip install 'koikoi[rl]'") from e

from .actions import NUM_ACTIONS
from .encoding import ENCODING, OBSERVATION_SIZE, action_mask, encode
from .observation import Observation

__all__ = ["FORMAT", "ACTIVATIONS", "PolicyError", "Policy", "PolicyAgent", "load_policy", "save_policy"]

FORMAT = "koikoi-policy-mlp-v1"
ACTIVATIONS = ("relu", "tanh")
_MAX_LAYERS = 16  # a sanity bound: a file claiming more is not one this module wrote


class PolicyError(ValueError):
    """A policy file that cannot be used: missing, not an archive, the wrong format, encoding or shapes."""


def _activate(name: str, x: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.maximum(x, 0.0) if name == "relu" else np.tanh(x)
    return out


class Policy:
    """A multi-layer perceptron from ``koikoi_v0`` vectors to action logits (see the module docstring)."""

    def __init__(
        self,
        layers: Sequence[tuple[np.ndarray, np.ndarray]],
        activation: str = "relu",
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.layers = [(np.asarray(W, np.float64), np.asarray(b, np.float64)) for W, b in layers]
        self.activation = activation
        self.meta = dict(meta or {})

    def logits(self, x: np.ndarray) -> np.ndarray:
        """Logits for a batch ``(n, OBSERVATION_SIZE)`` of observations, or one observation vector."""
        h = np.asarray(x, np.float64)
        for i, (W, b) in enumerate(self.layers):
            h = h @ W + b
            if i < len(self.layers) - 1:
                h = _activate(self.activation, h)
        return h

    def probabilities(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The softmax of the logits over the legal actions (``mask`` nonzero); 0 for the others."""
        legal = np.asarray(mask) != 0
        if not legal.any(axis=-1).all():
            raise ValueError("an observation has no legal action: the policy has nothing to choose")
        z = np.where(legal, self.logits(x), -np.inf)
        z = z - z.max(axis=-1, keepdims=True)
        p = np.exp(z)
        out: np.ndarray = p / p.sum(axis=-1, keepdims=True)
        return out


class PolicyAgent:
    """A :class:`Policy` as a computer player: ``choose(obs)`` returns one of ``obs.legal_actions``."""

    def __init__(self, policy: Policy, seed: int | None = None, *, sample: bool = False, name: str = "policy") -> None:
        self.policy = policy
        self.sample = sample
        self.rng = np.random.default_rng(seed)
        self.name = name

    def choose(self, obs: Observation) -> int:
        if not obs.legal_actions:
            raise ValueError(f"player {obs.player} has no legal action now")
        p = self.policy.probabilities(encode(obs), action_mask(obs))
        if self.sample:
            return int(self.rng.choice(NUM_ACTIONS, p=p))
        return int(np.argmax(p))  # the first maximum: the lowest action id on a tie


def save_policy(
    path: str | os.PathLike[str],
    layers: Sequence[tuple[np.ndarray, np.ndarray]],
    *,
    activation: str = "relu",
    meta: dict[str, Any] | None = None,
    extra: dict[str, np.ndarray] | None = None,
) -> None:
    """Write a policy file; ``extra`` arrays (a value network, say) are stored and ignored by the loader.

    The layers are checked as :func:`load_policy` checks them, so a file this writes always loads.
    """
    if activation not in ACTIVATIONS:
        raise PolicyError(f"activation must be one of {', '.join(ACTIVATIONS)}, not {activation!r}")
    full = {**(meta or {}), "format": FORMAT, "encoding": ENCODING, "activation": activation}
    arrays: dict[str, np.ndarray] = {}
    for i, (W, b) in enumerate(layers):
        # Kept in the trainer's precision, so the loaded policy gives exactly the trainer's probabilities.
        arrays[f"W{i}"] = np.asarray(W, np.float64)
        arrays[f"b{i}"] = np.asarray(b, np.float64)
    _check_layers(str(path), [(arrays[f"W{i}"], arrays[f"b{i}"]) for i in range(len(layers))])
    for key in extra or {}:
        if key == "meta" or (key[:1] in "Wb" and key[1:].isdigit()):
            raise PolicyError(f"extra array name {key!r} is taken by the policy itself")
    with open(path, "wb") as f:  # a file object: np.savez would add .npz to a path without it
        # The stubs read the named arrays as savez_compressed's own keyword arguments (allow_pickle).
        np.savez_compressed(f, meta=np.array(json.dumps(full)), **arrays, **(extra or {}))  # type: ignore[arg-type]


def load_policy(path: str | os.PathLike[str]) -> Policy:
    """Read a policy file; :class:`PolicyError` says what is wrong with a file that cannot be used."""
    where = f"policy file {str(path)!r}"
    if not os.path.exists(path):
        raise PolicyError(f"{where} does not exist")
    if os.path.isdir(path):
        raise PolicyError(f"{where} is a directory, not a file")
    if not zipfile.is_zipfile(path):
        raise PolicyError(f"{where} is not a NumPy .npz archive (examples/train_ppo.py writes them)")
    try:
        with np.load(path, allow_pickle=False) as archive:
            contents = {k: archive[k] for k in archive.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise PolicyError(f"{where} cannot be read: {e}") from None
    if "meta" not in contents:
        raise PolicyError(f"{where} has no 'meta' entry: it is not a koikoi policy file")
    try:
        meta = json.loads(str(contents["meta"]))
    except json.JSONDecodeError as e:
        raise PolicyError(f"{where}: its 'meta' entry is not JSON ({e})") from None
    if not isinstance(meta, dict):
        raise PolicyError(f"{where}: its 'meta' entry is not a JSON object")
    if meta.get("format") != FORMAT:
        raise PolicyError(f"{where} has format {meta.get('format')!r}; this koikoi reads {FORMAT!r}")
    if meta.get("encoding") != ENCODING:
        raise PolicyError(
            f"{where} reads observations encoded as {meta.get('encoding')!r}; this koikoi encodes {ENCODING!r}"
        )
    activation = meta.get("activation")
    if activation not in ACTIVATIONS:
        raise PolicyError(f"{where} has the activation {activation!r}; known: {', '.join(ACTIVATIONS)}")
    layers = []
    for i in range(_MAX_LAYERS + 1):
        if f"W{i}" not in contents and f"b{i}" not in contents:
            break
        if f"W{i}" not in contents or f"b{i}" not in contents:
            raise PolicyError(f"{where} has only one of W{i} and b{i}")
        layers.append((contents[f"W{i}"], contents[f"b{i}"]))
    _check_layers(str(path), layers)
    return Policy(layers, activation, meta)


def _check_layers(path: str, layers: Sequence[tuple[np.ndarray, np.ndarray]]) -> None:
    where = f"policy file {path!r}"
    if not layers:
        raise PolicyError(f"{where} has no layers (W0, b0, ...)")
    if len(layers) > _MAX_LAYERS:
        raise PolicyError(f"{where} has more than {_MAX_LAYERS} layers")
    inputs = OBSERVATION_SIZE
    for i, (W, b) in enumerate(layers):
        if W.dtype.kind != "f" or b.dtype.kind != "f":
            raise PolicyError(f"{where}: layer {i} is not floating point (W{i} {W.dtype}, b{i} {b.dtype})")
        if W.ndim != 2 or W.shape[0] != inputs:
            raise PolicyError(f"{where}: W{i} has shape {W.shape}, expected ({inputs}, n)")
        if b.shape != (W.shape[1],):
            raise PolicyError(f"{where}: b{i} has shape {b.shape}, expected ({W.shape[1]},)")
        if not (np.isfinite(W).all() and np.isfinite(b).all()):
            raise PolicyError(f"{where}: layer {i} holds NaN or infinite weights")
        inputs = W.shape[1]
    if inputs != NUM_ACTIONS:
        raise PolicyError(f"{where}: the last layer has {inputs} outputs, expected one per action ({NUM_ACTIONS})")
