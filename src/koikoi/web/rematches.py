"""Rematches: offered after a match, accepted by the other player (a new game, the seats swapped) or
declined.
"""

from __future__ import annotations

import logging
import random
import time
from typing import Any

from ..match import Match
from ..rules import RuleSet
from .errors import GameError
from .livegame import LiveGame
from .store import NO_RESULT, StoreError
from .tableowner import TableOwner

__all__ = ["Rematches", "playable_seed"]

log = logging.getLogger("koikoi.web")


def playable_seed(rules: RuleSet, birth_months: tuple[int, int] | None) -> tuple[int, int]:
    """A fresh secret seed whose deal does not end the match before anyone plays, and the seat that
    plays first. Only rules whose target is the starting score allow such a deal (a hand won at the deal
    then decides it); it is dealt again, as a game that is over when it is made would be stored as playing."""
    for _ in range(100):
        seed = random.SystemRandom().getrandbits(62)
        match = Match(rules, seed=seed, birth_months=birth_months)
        if not match.is_over():
            return seed, match.current_player
    raise GameError("bad_rules", "with these rules every deal ends the match before anyone plays", 422)


class Rematches:
    """The rematches of the games of one :class:`~koikoi.web.games.GameService`."""

    def __init__(self, service: TableOwner) -> None:
        self.service = service

    async def offer(self, token: Any) -> dict[str, Any]:
        """After the match: offer a rematch, or accept the other's offer (the seats swap)."""
        seat, game = await self.service.seat_game(token)
        if game.status != "finished" or game.ending in NO_RESULT:
            raise GameError("no_rematch", "a rematch is offered once a match is over", 409)
        async with game.lock:
            game.extras_stale = True
            await self.service.sync(game)
            if game.rematch is not None:
                return {"type": "rematch", "token": await self._seat_in(game, seat.seat)}
            if game.rematch_offer is None:
                if not await self.service.db(self.service.table.offer_rematch, game.stored.id, seat.seat):
                    raise GameError("stale", "the other player answered first: here is the current table", 409)
                game.rematch_offer = seat.seat
            elif game.rematch_offer == seat.seat:
                return {"type": "rematch", "token": None}
            else:
                rules = RuleSet.from_dict(game.stored.rules)
                new_seed, first = playable_seed(rules, game.stored.birth_months)
                try:
                    new_id = await self.service.db(
                        self.service.table.accept_rematch,
                        game.stored.id,
                        seat.seat,
                        rules=rules.to_dict(),
                        seed=new_seed,
                        ai_seed=random.SystemRandom().getrandbits(62),
                        first=first,
                        now=time.time(),
                    )
                except StoreError as e:
                    raise GameError("stale", str(e), 409) from None
                game.rematch = new_id
        await self.service.broadcast(game)
        if game.rematch is not None:
            return {"type": "rematch", "token": await self._seat_in(game, seat.seat)}
        return {"type": "rematch", "token": None}

    async def decline(self, token: Any) -> dict[str, Any]:
        _seat, game = await self.service.seat_game(token)
        async with game.lock:
            await self.service.db(self.service.table.decline_rematch, game.stored.id)
            game.rematch_offer = None
        await self.service.broadcast(game)
        return {"type": "rematch", "token": None}

    async def _seat_in(self, game: LiveGame, seat: int) -> str | None:
        """The token of this seat's player in the rematch, where the seats are swapped."""
        if game.rematch is None:
            return None
        return await self.service.db(self.service.table.seat_in, game.rematch, 1 - seat)
