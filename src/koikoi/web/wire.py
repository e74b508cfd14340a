"""What the server sends over its sockets, as text: JSON encoded by orjson, several times faster than the
standard library's encoder on a table's view (about 40 µs down to 4 µs for a 4 KB table), and the same
compact text Starlette's ``send_json`` writes (no spaces, UTF-8 as is). A broadcast encodes each
message once, for every socket it goes to."""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["text"]


def text(msg: Any) -> str:
    """``msg`` (JSON-ready data: dicts with string keys, lists, tuples, numbers, strings, None) as JSON."""
    return orjson.dumps(msg).decode()
