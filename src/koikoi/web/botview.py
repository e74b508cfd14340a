"""What a bot's own seat is sent besides the table: the bot protocol's observation of that seat.

``koikoi bot connect`` links a program written for the arena (docs/bot-protocol.md) to the server, and
the program must read exactly what the arena would send it. So a bot's seat view carries, under
``protocol``, the seat's :meth:`~koikoi.observation.Observation.to_dict` (the version-1 observation) and its
:func:`~koikoi.observation.positions` (what version 2 adds): both of that seat alone, holding nothing
the table does not show that player (their own hand, the public table and piles; never the opponent's
hand, the stock or the seed). Only a bot's seat gets it: a browser has no use for it.
"""

from __future__ import annotations

import logging
from typing import Any

from ..match import Match
from ..observation import positions

__all__ = ["protocol_view"]

log = logging.getLogger("koikoi.web")


def protocol_view(match: Match, seat: int) -> dict[str, Any]:
    """``{"observation": <version 1>, "positions": <version 2's addition, or None>}`` for ``seat``."""
    obs = match.observation(seat)
    try:
        where = positions(match, seat).to_dict()
    except ValueError as e:  # a hand with no recorded deal: version 2 cannot be spoken, version 1 can
        log.warning("no card positions for a bot's seat: %s", e)
        where = None
    return {"observation": obs.to_dict(), "positions": where}
