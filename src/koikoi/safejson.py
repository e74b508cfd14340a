"""Parsing text from strangers without deep recursion: JSON and TOML with a bounded nesting depth.

Python's ``json`` and ``tomllib`` parse nested arrays and objects by recursion, so ``'[' * 30000``
(30 KB, under any size limit) ends in a ``RecursionError`` deep inside the parser. Every place that
reads text from outside (game records, bot lines, rules files, the web API) measures the nesting
first, in linear time and without recursion, and refuses text nested deeper than it needs.

This module sits below everything else in the package and imports only the standard library.

>>> loads('{"a": [1, [2]]}', max_depth=3)
{'a': [1, [2]]}
>>> loads('[[[[1]]]]', max_depth=3)
Traceback (most recent call last):
...
koikoi.safejson.NestingError: nested 4 levels deep; at most 3 are allowed
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

__all__ = ["NestingError", "MAX_DEPTH", "json_depth", "toml_depth", "loads", "check_json_depth", "check_toml_depth"]

MAX_DEPTH = 32  # no document this project reads nests deeper than about 6

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
# TOML: multi-line strings first (they may hold quotes), then one-line strings, then comments.
_TOML_STRINGS = re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class NestingError(ValueError):
    """Text nested deeper than the reader allows."""

    def __init__(self, depth: int, limit: int) -> None:
        super().__init__(f"nested {depth} levels deep; at most {limit} are allowed")
        self.depth = depth
        self.limit = limit


def _depth(stripped: str) -> int:
    brackets = _NOT_BRACKET.sub("", stripped)
    if not brackets:
        return 0
    return max(0, max(accumulate(map(_STEP.__getitem__, brackets))))


def json_depth(text: str) -> int:
    """How deeply ``text``'s arrays and objects nest (brackets inside strings do not count)."""
    return _depth(_JSON_STRING.sub("", text))


def toml_depth(text: str) -> int:
    """How deeply ``text``'s arrays and inline tables nest (strings and comments do not count)."""
    return _depth(_TOML_STRINGS.sub("", text))


def check_json_depth(text: str, max_depth: int = MAX_DEPTH) -> None:
    """Raise :class:`NestingError` if ``text`` nests deeper than ``max_depth``."""
    d = json_depth(text)
    if d > max_depth:
        raise NestingError(d, max_depth)


def check_toml_depth(text: str, max_depth: int = MAX_DEPTH) -> None:
    """Raise :class:`NestingError` if ``text`` nests deeper than ``max_depth``."""
    d = toml_depth(text)
    if d > max_depth:
        raise NestingError(d, max_depth)


def loads(text: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` for untrusted text: :class:`NestingError` (a ``ValueError``) when nested too deeply.

    Bytes must be UTF-8 (``UnicodeDecodeError`` otherwise). Other malformed JSON raises
    ``json.JSONDecodeError`` as usual; both are ``ValueError``.
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")
    check_json_depth(text, max_depth)
    return json.loads(text)
