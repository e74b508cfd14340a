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

__all__ = [
    "NestingError",
    "MAX_DEPTH",
    "json_depth",
    "toml_depth",
    "without_toml_strings",
    "loads",
    "check_json_depth",
    "check_toml_depth",
]

MAX_DEPTH = 32  # no document this project reads nests deeper than about 6

# Strings (and TOML's comments) are cut out before the brackets are counted, by patterns that cannot
# fail once they have started: an unterminated string runs to the end of its line (one-line TOML
# strings) or of the text, where the parser refuses it anyway. A pattern that could fail, as the
# former ``"(?:[^"\\]|\\.)*"``, makes ``re.sub`` retry from the next quote and rescan to the end: on
# ``"`` + ``\"`` x 32,767 (64 KB) that took 13 s, the square of the length. Each pattern is an
# "unrolled loop" (a run of ordinary characters, then one escape or lone quote and another run): every
# character is matched one way only, so nothing backtracks and one pass over the text does. The text
# the parser accepts is cut the same way; in text it refuses, the parser stops at the first fault, so
# it never nests deeper than the brackets counted before that fault.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.S)
# TOML, in the order the alternatives are tried: a multi-line basic string ("""; it may hold one or two
# quotes in a row, and may end in up to five, the last three closing it), a multi-line literal string
# (''', alike but without escapes), a basic string, a literal string, a comment. The closing run of up to
# five quotes matters: read as three, '"""a""""' would leave a stray quote that opens a one-line string
# hiding the rest of the line (a whole nest of brackets) from the count while tomllib parses it.
_TOML_STRINGS = re.compile(
    r'"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*(?:"{3,5})?'
    r"|'''[^']*(?:'(?!'')[^']*)*(?:'{3,5})?"
    r'|"[^"\\\n]*(?:\\[^\n][^"\\\n]*)*"?'
    r"|'[^'\n]*'?"
    r"|#[^\n]*",
    re.S,
)
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


def without_toml_strings(text: str) -> str:
    r"""``text`` without its TOML strings and comments, in time linear in its length: what is left are
    keys, dots, brackets, numbers and the like. An unterminated one-line string ends with its line, a
    multi-line one with the text.

    >>> without_toml_strings("a.'b.c' = ['[', '''x\ny'''] # ]]")
    'a. = [, ] '
    >>> without_toml_strings('a = "[[[\nb = 1.5')
    'a = \nb = 1.5'
    """
    return _TOML_STRINGS.sub("", text)


def toml_depth(text: str) -> int:
    """How deeply ``text``'s arrays and inline tables nest (strings and comments do not count)."""
    return _depth(without_toml_strings(text))


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
